"""The example CI workflow runs commands this prefixbench accepts."""

import re
import shlex
from pathlib import Path

import pytest

from prefixbench.reports.cli import build_parser

WORKFLOW = Path(__file__).resolve().parents[3] / "examples" / "ci" / "prefixbench.yml"


def _commands() -> list[str]:
    text = WORKFLOW.read_text().replace("\\\n", " ")
    return [m.group(0) for m in re.finditer(r"prefixbench (?:sweep|check|audit|compare|replay)[^\n|>;]*", text)]


def test_workflow_gates_on_check_audit_and_compare():
    subcommands = {c.split()[1] for c in _commands()}
    assert {"check", "audit", "compare", "sweep"} <= subcommands


@pytest.mark.parametrize("command", _commands())
def test_every_workflow_command_parses(command):
    parser = build_parser()
    sub = command.split()[1]
    if sub not in parser._subparsers._group_actions[0].choices:  # noqa: SLF001
        pytest.skip(f"subcommand {sub!r} is not in this build yet")
    words = [w.replace("${kind}", "sweep").replace("$kind", "sweep").strip('"') for w in shlex.split(command)[1:]]
    parser.parse_args(words)


def test_workflow_gates_the_users_own_engine_three_ways():
    text = WORKFLOW.read_text()
    assert re.search(r"^  ENGINE: \S+:\S+", text, re.M), "the workflow names the engine under test"
    assert 'prefixbench check --engine "$ENGINE"' in text
    assert '--prefixbench-engine "$ENGINE"' in text
    assert 'prefixbench record engine.jsonl --engine "$ENGINE"' in text and "prefixbench check --trace engine.jsonl" in text
    assert 'prefixbench sweep --engine "$ENGINE"' in text


def test_the_workflow_engine_commands_run_on_an_engine(tmp_path, monkeypatch, capsys):
    """The engine steps of the workflow, with ENGINE set to a small engine of the tests: they
    run, and exit as a gate does (the declared truncation passes no-silent-rewrite)."""
    from prefixbench.reports.entry import main

    monkeypatch.chdir(tmp_path)
    engine = "tests.user_engines:declared"
    text = WORKFLOW.read_text().replace("\\\n", " ").replace('"$ENGINE"', engine)
    check = re.search(r"prefixbench check --engine [^\n]*", text).group(0)
    record = re.search(r"prefixbench record [^\n]*", text).group(0)
    trace = re.search(r"prefixbench check --trace [^\n]*", text).group(0)
    check_words = [w.replace("32k,128k", "32k") for w in shlex.split(check)[1:]]
    assert main(check_words) in (0, 1)
    assert "no-silent-rewrite @32k [declared-truncating/seed-coding/lenient]" in capsys.readouterr().out
    assert main(shlex.split(record)[1:]) == 0
    assert main(shlex.split(trace)[1:]) in (0, 1)
    out = capsys.readouterr().out
    assert "PASS  no-silent-rewrite @32k [engine.jsonl/lenient]" in out
    assert "PASS  window-respected @32k [engine.jsonl/lenient]" in out  # judged at the window recorded


def test_the_workflow_installs_prefixbench_judges_the_trace_at_its_window_and_prices_the_sweep():
    text = WORKFLOW.read_text().replace("\\\n", " ")
    # prefixbench itself is installed, not only the user's project
    assert re.search(r"^  PREFIXBENCH: git\+https://\S+@\S+", text, re.M)
    assert 'pip install "$PREFIXBENCH"' in text
    # check --trace is told the window record used, so window-respected judges the recording
    recorded = re.search(r"prefixbench record \S+ .*--window (\S+)", text).group(1)
    assert re.search(rf"prefixbench check --trace \S+ --windows {re.escape(recorded)}(\s|$)", text, re.M)
    # the sweep is priced, so compare's usd=5% limit has a figure to check
    sweep = re.search(r"prefixbench sweep [^\n]*", text).group(0)
    assert "usd=" in text and "--price " in sweep
