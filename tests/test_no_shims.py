"""The project imports every name from the module that defines it, never through a module that
only re-exports it (a shim).

The public engine API re-exports on purpose: ``prefixbench.kernel.api`` gathers the wire and
session types an engine needs, and ``prefixbench.kernel`` offers all of it to third-party
engines (README, "The engine API"); tests that play a user's engine import it from there. The checker is also run on a small planted tree to show
it can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_imports import LAYERS, ROOT, module_name

#: Modules whose re-exports are a documented public surface.
PUBLIC_FACADES = frozenset({"prefixbench.kernel", "prefixbench.kernel.api"})


def defined_and_imported(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names a module defines at top level, and the names it only imports there."""
    defined: set[str] = set()
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            imported.update(alias.asname or alias.name for alias in node.names)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
    return defined, imported - defined


def through_shims(trees: dict[str, ast.Module]) -> list[str]:
    """Every ``from M import N`` (in any module of ``trees``) where M only re-exports N."""
    names = {module: defined_and_imported(tree) for module, tree in trees.items()}
    found = []
    for module, tree in sorted(trees.items()):
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.module in names) or node.module in PUBLIC_FACADES:
                continue
            _, reexported = names[node.module]
            for alias in node.names:
                if alias.name in reexported and f"{node.module}.{alias.name}" not in trees:
                    found.append(f"{module}:{node.lineno}: {alias.name} from {node.module}")
    return found


def project_trees(root: Path) -> dict[str, ast.Module]:
    paths = [p for top in (*LAYERS, "tests") for p in (root / top).rglob("*.py")]
    return {module_name(p, root): ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in paths}


def test_the_project_imports_each_name_from_where_it_is_defined():
    assert through_shims(project_trees(ROOT)) == []


def test_the_shim_checker_catches_a_planted_shim():
    trees = {
        "prefixbench.kernel.api": ast.parse("class Engine: ...\n"),
        "prefixbench.kernel.engines.base": ast.parse("from prefixbench.kernel.api import Engine\n"),
        "prefixbench.workloads.scripted.a": ast.parse("def f():\n    from prefixbench.kernel.engines.base import Engine\n"),
        "prefixbench.workloads.scripted.b": ast.parse("from prefixbench.kernel.api import Engine\n"),
        "prefixbench.kernel": ast.parse("from prefixbench.kernel.api import Engine\n"),
        "tests.user_engine": ast.parse("from prefixbench.kernel import Engine\n"),
    }
    assert through_shims(trees) == ["prefixbench.workloads.scripted.a:2: Engine from prefixbench.kernel.engines.base"]
