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
