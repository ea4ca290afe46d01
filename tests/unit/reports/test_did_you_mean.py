"""A misspelt strategy, engine or factory name: the error line names the closest one, as an
unknown installed engine's did; a module named without its factory is told the form to give."""

from __future__ import annotations

import sys

import pytest

from prefixbench.reports.cli import main

ENGINE = '''from prefixbench.kernel import EngineBase


class Keep(EngineBase):
    name = "keep"

    def view(self, session):
        return session.derive_messages()


def factory(window, options):
    return Keep()
'''


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["bench", "--strategies", "claude-code-autocompat", "--workloads", "thinking-tools", "--windows", "32k"],
    ["check", "--engines", "claude-code-autocompat"],
    ["sweep", "--engines", "claude-code-autocompat"],
])
def test_a_misspelt_engine_name_gets_the_closest(capsys, argv) -> None:
    assert "did you mean 'claude-code-autocompact'?" in _error(capsys, argv)


def test_an_engine_only_another_workload_mounts_names_that_workload(capsys) -> None:
    err = _error(capsys, ["sweep", "--workload", "seed-coding", "--engines", "user-tails"])
    assert "has no engine 'user-tails': did you mean 'user-tail' (with --workload thinking-tools)? (known: " in err


def test_closest_is_the_nearest_choice_or_none() -> None:
    from prefixbench.simulator.errors import closest, did_you_mean

    assert closest("user-tails", ["checkpoint", "user-tail"]) == "user-tail"
    assert closest("zzz", ["checkpoint"]) is None
    assert did_you_mean("zzz", ["checkpoint"]) == ""


@pytest.fixture
def my_engine(tmp_path, monkeypatch):
    (tmp_path / "my_engine.py").write_text(ENGINE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("my_engine", None)


def test_a_misspelt_factory_gets_the_closest(capsys, my_engine) -> None:
    err = _error(capsys, ["check", "--engine", "my_engine:factry"])
    assert "module 'my_engine' has no attribute 'factry': did you mean 'factory'?" in err


def test_a_module_named_without_its_factory_is_told_what_to_give(capsys, my_engine) -> None:
    err = _error(capsys, ["check", "--engine", "my_engine"])
    assert "my_engine.py is a module in" in err and "give my_engine:factory" in err
