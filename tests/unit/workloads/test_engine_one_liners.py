"""What a user's engine got wrong, said in the one line that names it: a factory that returned
the class, a name that is not a string, a Message with a bad role (not "expected a sequence of
Message": it is one). Exit 2, no traceback."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineBase, EngineOptions, Message, Text
from prefixbench.reports.entry import main


class Plain(EngineBase):
    name = "plain"


class NamedByNumber(EngineBase):
    name = 42  # type: ignore[assignment]


class BadRole(EngineBase):
    name = "bad-role"

    def view(self, session):
        return (Message("robot", (Text("hi"),)),)  # type: ignore[arg-type]


def returns_class(window: int, options: EngineOptions) -> type:
    return Plain


def named_42(window: int, options: EngineOptions) -> NamedByNumber:
    return NamedByNumber()


def bad_role(window: int, options: EngineOptions) -> BadRole:
    return BadRole()


CASES = {
    "returns_class": "the factory returned a class (Plain), not an instance (call it?)",
    "named_42": "its name is 42 (int), not a string",
    "bad_role": "view() returned a tuple holding a Message with role 'robot'",
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_line_says_what_is_wrong(case, capfd):
    assert main(["check", "--windows", "32k", "--engine", f"{__name__}:{case}"]) == 2
    out, err = capfd.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("prefixbench: error: engine "), err
    assert CASES[case] in lines[0], lines[0]
    assert "Traceback" not in out + err
    assert "expected a sequence of Message" not in lines[0]
    assert "not an engine (no name)" not in lines[0]
