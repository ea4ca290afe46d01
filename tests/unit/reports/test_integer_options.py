"""Every integer option given a value that is not a whole number fails in one line that names
the option and the value, as ``--read-step`` and ``--codex-warm-head`` already did (``--read-step
gemini=x: gemini's step 'x' is not a whole number ...``). Before, the options argparse reads
(``--jobs``, ``--steps``, ``--retain-tokens``, ``--turns``...) said it in argparse's words:
``argument --jobs: invalid int value: 'x'``."""

from __future__ import annotations

import argparse

import pytest

from prefixbench.reports.cli import build_parser
from prefixbench.reports.entry import main


def _integer_options(command: str) -> list[str]:
    """The options of ``command`` that argparse reads as integers (taken from the parser, so an
    option added later is checked too)."""
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [action.option_strings[-1] for action in subparsers.choices[command]._actions
            if action.type is int and action.option_strings]


def test_the_commands_have_integer_options() -> None:
    assert _integer_options("audit") == ["--jobs"]
    assert {"--jobs", "--steps", "--retain-tokens", "--turns", "--steps-per-turn", "--subagents", "--subagent-steps",
            "--main-steps"} <= set(_integer_options("sweep"))


@pytest.mark.parametrize("command", ["audit", "sweep", "bench", "record"])
@pytest.mark.parametrize("value", ["x", "1.5", "4k", "-1e3"])
def test_a_value_that_is_no_whole_number_is_one_line_naming_the_option_and_value(
        tmp_path, capsys, command: str, value: str) -> None:
    for option in _integer_options(command):
        where = [str(tmp_path / "log.jsonl")] if command in ("audit", "record") else []
        status = main([command, *where, f"{option}={value}"])
        err = capsys.readouterr().err.strip()
        assert status == 2 and "\n" not in err and "Traceback" not in err, (option, err)
        assert err == f"prefixbench: error: {option}: '{value}' is not a whole number (see 'prefixbench {command} --help')", err


def test_a_value_that_is_no_number_is_said_so_for_a_decimal_option(capsys) -> None:
    status = main(["sweep", "--threshold-ratio", "half"])
    assert status == 2
    assert capsys.readouterr().err.strip() == "prefixbench: error: --threshold-ratio: 'half' is not a number (see 'prefixbench sweep --help')"


@pytest.mark.parametrize("command", ["audit", "sweep"])
def test_jobs_below_one_says_the_value_in_the_same_words(tmp_path, capsys, command: str) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text("")
    status = main([command, *([str(log)] if command == "audit" else []), "--jobs", "0", "--out", str(tmp_path / "o")])
    assert status == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: --jobs: '0' must be 1 or more (see 'prefixbench {command} --help')"


@pytest.mark.parametrize("command", ["audit", "sweep"])
def test_a_negative_jobs_is_a_whole_number_below_one(tmp_path, capsys, command: str) -> None:
    """``-3`` is a whole number: what is wrong is its size, said as for 0 (before: "not a whole number")."""
    log = tmp_path / "log.jsonl"
    log.write_text("")
    status = main([command, *([str(log)] if command == "audit" else []), "--jobs=-3", "--out", str(tmp_path / "o")])
    assert status == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: --jobs: '-3' must be 1 or more (see 'prefixbench {command} --help')"
