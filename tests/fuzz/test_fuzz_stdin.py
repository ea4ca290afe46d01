"""Logs read from standard input (``audit -``, ``replay -``, ``check --trace -``), mutated byte-wise:
each ends cleanly (exit 0, 1 for a check that fails, or 2 with one line), prints the same twice,
and never names the temporary copy standard input is kept in (its folder differs on every run).
fuzz59 found ``check --trace -`` warning of a torn last line at ``/tmp/prefixbench-stdin-.../<stdin>``."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, fuzz_settings, mutated

FIXTURES = Path(__file__).parents[1] / "unit" / "logs" / "fixtures"
SEEDS = tuple((FIXTURES / name).read_bytes() for name in ("chat-completions.jsonl", "claude-code.jsonl", "http-capture.jsonl"))
COMMANDS = (("audit", "-", "--quiet", "--format", "json"), ("replay", "-", "--quiet", "--format", "json"),
            ("check", "--trace", "-", "--quiet"))


def test_a_mutated_log_on_standard_input_ends_cleanly_the_same_twice_naming_stdin(importer_examples, monkeypatch):
    tally = Tally("stdin", bound_s=20)

    @fuzz_settings(importer_examples)
    @given(st.sampled_from(SEEDS).flatmap(mutated), st.sampled_from(COMMANDS))
    def case(data: bytes, command: tuple[str, ...]) -> None:
        seen = []
        for _ in range(2):
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):  # (the tally's own check sees them not)
                status = tally.check(command, gate=command[0] == "check", echo=True)
            seen.append((status, out.getvalue(), err.getvalue()))
        assert seen[0] == seen[1]
        assert "prefixbench-stdin" not in seen[0][1] + seen[0][2], seen[0]

    case()
    tally.report()
