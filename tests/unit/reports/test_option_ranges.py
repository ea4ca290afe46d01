"""Each integer workload option states its accepted range in one set of words: its ``--help``,
the line that refuses a value outside it and docs/robustness.md. Before, ``--turns`` said "at most
10,000" in its help and "must be a positive integer" for 0; ``--steps`` "1 to 10,000" and "a whole
number from 1 to 10,000"; ``--subagents`` no range in its help and "at most 64 subagents";
``--retain-tokens`` no range in its help and "must be >= 0"."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from prefixbench.reports.cli import build_parser
from prefixbench.reports.entry import main

ROOT = Path(__file__).resolve().parents[3]

#: (workload, flag, the range in words, values outside it).
COUNTS = [
    ("seed-coding", "--steps", "1 to 10,000", ("0", "10001")),
    ("thinking-tools", "--turns", "1 to 10,000", ("0", "10001")),
    ("idle-gaps", "--turns", "1 to 10,000", ("0", "10001")),
    ("thinking-tools", "--steps-per-turn", "1 to 10,000", ("0", "10001")),
    ("idle-gaps", "--steps-per-turn", "1 to 10,000", ("0", "10001")),
    ("subagents", "--subagents", "1 to 64", ("0", "65")),
    ("subagents", "--subagent-steps", "1 to 10,000", ("0", "10001")),
    ("subagents", "--main-steps", "1 to 10,000", ("0", "10001")),
]


def _help(flag: str) -> str:
    """The sweep option's help, as --help prints it (whitespace made single)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["sweep"]
    (action,) = [a for a in sub._actions if flag in a.option_strings]
    return " ".join(action.help.split())


def _refusal(capsys, tmp_path: Path, *argv: str) -> str:
    status = main(["sweep", "--windows", "32k", "--presets", "patched", "--quiet", *argv, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert status == 2 and "\n" not in err and "Traceback" not in err, err
    assert not (tmp_path / "o").exists()
    return err


@pytest.mark.parametrize(("workload", "flag", "words", "values"), COUNTS, ids=[f"{w}{f}" for w, f, _, _ in COUNTS])
def test_a_count_out_of_range_is_refused_in_its_help_s_words(tmp_path, capsys, workload, flag, words, values) -> None:
    assert f"{workload}: " in _help(flag) and f", {words} (default: " in _help(flag)
    for value in values:
        err = _refusal(capsys, tmp_path, "--workload", workload, flag, value)
        assert err == f"prefixbench: error: {workload}: {flag} must be {words}, got {value}", err


def test_retain_tokens_is_refused_in_its_help_s_words(tmp_path, capsys) -> None:
    words = _help("--retain-tokens")
    assert "verbatim tail budget in tokens, 0 or more, below the threshold (--threshold-ratio x the window)" in words
    assert _refusal(capsys, tmp_path, "--retain-tokens", "-5") == "prefixbench: error: --retain-tokens must be 0 or more, got -5"
    assert _refusal(capsys, tmp_path, "--retain-tokens", "30000") == (
        "prefixbench: error: --retain-tokens 30000 must be below the threshold (25600 tokens = 0.8 x 32000 window)")


def test_the_options_page_gives_the_same_ranges() -> None:
    page = " ".join((ROOT / "docs" / "robustness.md").read_text(encoding="utf-8").split())
    for fact in ("`--steps`, `--turns`, `--steps-per-turn`, `--subagent-steps` and `--main-steps` take 1 to 10,000",
                 "`--subagents` 1 to 64", "`--retain-tokens` 0 or more, below the threshold",
                 "`seed-coding: --steps must be 1 to 10,000, got 0`"):
        assert fact in page, fact
