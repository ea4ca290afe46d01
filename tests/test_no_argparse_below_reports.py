"""argparse stops at reports/: no module under simulator/, kernel/ or workloads/ imports argparse
or names ``Namespace`` (an argument namespace); they take the typed options of
workloads/runs/options.py, which reports/options.py fills from the flags.

The scan reads every module's source. It is also run on planted sources, to show it fails on
each way the namespace could come back (an import, a ``from`` import, an annotation).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BELOW_REPORTS = ("simulator", "kernel", "workloads")


def argparse_uses(source: str) -> list[str]:
    """``line: what`` for every argparse import and every ``Namespace`` named in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        match node:
            case ast.Import(names=names) if any(a.name.split(".")[0] == "argparse" for a in names):
                found.append(f"{node.lineno}: import argparse")
            case ast.ImportFrom(module=module) if (module or "").split(".")[0] == "argparse":
                found.append(f"{node.lineno}: from argparse import ...")
            case ast.Name(id="Namespace") | ast.Attribute(attr="Namespace"):
                found.append(f"{node.lineno}: Namespace")
    # Annotations under ``from __future__ import annotations`` are still parsed as expressions;
    # a string annotation is not, so look into those too.
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "Namespace" in node.value:
            if any(part == "Namespace" or part.endswith(".Namespace") for part in node.value.replace("|", " ").split()):
                found.append(f"{node.lineno}: 'Namespace' in a string annotation")
    return found


def test_no_module_below_reports_reads_an_argument_namespace():
    problems = []
    for top in BELOW_REPORTS:
        for path in sorted((ROOT / top).rglob("*.py")):
            problems += [f"{path.relative_to(ROOT)}:{use}" for use in argparse_uses(path.read_text(encoding="utf-8"))]
    assert problems == []


@pytest.mark.parametrize(
    "planted",
    [
        "import argparse\n",
        "from argparse import Namespace\n",
        "def run(args: argparse.Namespace) -> int:\n    return args.jobs\n",
        "def run(args: 'Namespace') -> int:\n    return args.jobs\n",
    ],
)
def test_the_scan_finds_a_planted_namespace(planted):
    assert argparse_uses(planted)


def test_the_scan_passes_other_namespaces():
    assert argparse_uses("from types import SimpleNamespace\nx = SimpleNamespace(a=1)\n") == []
