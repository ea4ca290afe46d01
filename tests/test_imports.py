"""Imports point one way, simulator <- kernel <- workloads <- reports, with no cycles.

Inside workloads/ the sub-packages point one way too: ``logs`` (reading real and recorded
logs) is the base, ``scripted`` and ``audit`` read it, ``specs`` judges scripted runs and
recorded traces, and ``runs`` (plan, execution, store, compare) may use all of them.

Every import is read from the source (module-level and function-local alike, since a local
import only hides a cycle until the function runs). The checker is also run on a small tree
this test writes, with an upward import and a cycle planted, to show it can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("simulator", "kernel", "workloads", "reports")


def module_name(path: Path, root: Path) -> str:
    """``kernel/engines/checkpoint.py`` -> ``prefixbench.kernel.engines.checkpoint``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[:2] == ["reports", "_root"]:
        parts = parts[2:]  # mapped to the prefixbench namespace itself (python -m prefixbench)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["prefixbench", *parts])


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """The prefixbench modules ``path`` imports anywhere in its body."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            # `from pkg import mod` imports the submodule when there is one.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t.startswith("prefixbench."))
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the prefixbench modules it imports, for every module under the four layers."""
    paths = {module_name(p, root): p for top in LAYERS if (root / top).is_dir() for p in (root / top).rglob("*.py")}
    known = set(paths)
    return {name: {t for t in imports_of(path, name, known) if t != name} for name, path in paths.items()}


def layer_of(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else len(LAYERS) - 1


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a lower layer into a higher one, as ``a -> b``."""
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets if layer_of(b) > layer_of(a))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


#: What each workloads sub-package may import from its siblings (itself always).
WORKLOADS_DEPENDS: dict[str, frozenset[str]] = {
    "logs": frozenset(),
    "scripted": frozenset({"logs"}),
    "audit": frozenset({"logs"}),
    "specs": frozenset({"logs", "scripted"}),
    "runs": frozenset({"logs", "scripted", "specs", "audit"}),
}


def workloads_part(module: str) -> str | None:
    """``prefixbench.workloads.logs.replay`` -> ``logs``; None outside a workloads sub-package."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and parts[1] == "workloads" else None


def sideways_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports between workloads sub-packages that :data:`WORKLOADS_DEPENDS` does not allow."""
    bad = []
    for a, targets in graph.items():
        pa = workloads_part(a)
        for b in targets:
            pb = workloads_part(b)
            if pa is not None and pb is not None and pb != pa and pb not in WORKLOADS_DEPENDS.get(pa, frozenset()):
                bad.append(f"{a} -> {b}")
    return sorted(bad)


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for child in graph.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def test_every_layer_imports_only_downward() -> None:
    graph = import_graph(ROOT)
    assert len(graph) > 50  # the walk found the packages
    assert upward_imports(graph) == []


def test_no_import_cycles() -> None:
    assert cycles(import_graph(ROOT)) == []


def test_workloads_sub_packages_import_one_way() -> None:
    graph = import_graph(ROOT)
    parts = {workloads_part(m) for m in graph} - {None}
    assert parts == set(WORKLOADS_DEPENDS), parts  # a new sub-package states what it may import
    assert sideways_imports(graph) == []


def test_replay_does_not_import_the_audit() -> None:
    graph = import_graph(ROOT)
    for start in ("prefixbench.workloads.logs.replay", "prefixbench.reports.replay"):
        audit = sorted(m for m in reachable(graph, start) | {start} if workloads_part(m) == "audit")
        assert audit == [], f"{start} reaches {audit}"


def test_the_checker_catches_an_upward_import_and_a_cycle(tmp_path: Path) -> None:
    files = {
        "simulator/__init__.py": "",
        "simulator/wire.py": "from prefixbench.kernel.session import Session\n",  # upward
        "kernel/__init__.py": "",
        "kernel/session.py": "def f():\n    from prefixbench.kernel import meter\n",  # local import
        "kernel/meter.py": "from prefixbench.kernel.session import f\n",  # closes a cycle
        "reports/__init__.py": "",
        "reports/cli.py": "from prefixbench.simulator import wire\n",  # downward: fine
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path)
    assert upward_imports(graph) == ["prefixbench.simulator.wire -> prefixbench.kernel.session"]
    assert cycles(graph) == [["prefixbench.kernel.meter", "prefixbench.kernel.session"]]


def test_the_checker_catches_a_sideways_import_and_replay_reaching_the_audit(tmp_path: Path) -> None:
    files = {
        "workloads/__init__.py": "",
        "workloads/logs/__init__.py": "",
        "workloads/logs/replay.py": "from prefixbench.workloads.logs.bodydiff import body_diff\n",
        "workloads/logs/bodydiff.py": "from prefixbench.workloads.audit.causes import CAUSES\n",  # logs -> audit
        "workloads/audit/__init__.py": "",
        "workloads/audit/causes.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path)
    assert sideways_imports(graph) == ["prefixbench.workloads.logs.bodydiff -> prefixbench.workloads.audit.causes"]
    assert "prefixbench.workloads.audit.causes" in reachable(graph, "prefixbench.workloads.logs.replay")
