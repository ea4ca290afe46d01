"""A user engine's sources are in its runs' keys: editing the engine recomputes exactly its runs
and says so (issue 23)."""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import EntryPoint

import pytest

from prefixbench.kernel import loading
from prefixbench.reports.entry import main
from prefixbench.workloads.runs import sweep as sweep_module
from prefixbench.workloads.runs.store import decode_run
from prefixbench.workloads.runs.sweep import engine_code_digest

INIT = '''"""An engine package written for one test."""
from {helper}.base import Base
from {package}.core import Keeper


def factory(window, options):
    return Keeper()
'''
CORE = '''from prefixbench.kernel import EngineBase


class Keeper(EngineBase):
    """Sends the surface as it is."""

    name = "keeper"
    LIMIT = {limit}
'''
HELPER = '''class Base:
    """A second top-level package the engine imports (not part of its digest)."""
'''


@pytest.fixture
def engine_package(tmp_path, monkeypatch, request):
    """A package ``<name>`` with ``factory`` in its ``__init__`` and the engine in ``core``,
    importing a helper package of its own; returns ``(name, its folder)``."""
    package = f"pb_edit_{request.node.name.replace('[', '_').replace(']', '').replace('-', '_')}"[:60]
    helper = f"{package}_helper"
    src = tmp_path / "src"
    (src / package).mkdir(parents=True)
    (src / helper).mkdir()
    (src / package / "__init__.py").write_text(INIT.format(package=package, helper=helper))
    (src / package / "core.py").write_text(CORE.format(limit=1))
    (src / helper / "__init__.py").write_text("")
    (src / helper / "base.py").write_text(HELPER)
    monkeypatch.syspath_prepend(str(src))
    yield package, src / package
    forget(package)


def forget(package: str) -> None:
    """Drop the package from this process, as a new ``prefixbench`` process would not have it."""
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".") or n.startswith(package + "_")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def edit(folder, limit: int) -> None:
    (folder / "core.py").write_text(CORE.format(limit=limit))
    forget(folder.name)


def runs_by_engine(out):
    found = {}
    for path in sorted((out / "store").glob("*.parquet")):
        record, _ = decode_run(path)
        found.setdefault(record["engine"], set()).add(path.stem)
    return found


def test_editing_a_user_engine_recomputes_exactly_its_runs(engine_package, tmp_path, capsys):
    package, folder = engine_package
    ref = f"{package}:factory"
    out = tmp_path / "out"
    argv = ["sweep", "--windows", "32k", "--steps", "20", "--presets", "legacy,patched",
            "--engines", f"checkpoint,{ref}", "--jobs", "1", "--out", str(out)]
    assert main(argv) == 0
    before = runs_by_engine(out)
    assert sorted(before) == ["checkpoint", "keeper"] and all(len(keys) == 2 for keys in before.values())
    capsys.readouterr()

    assert main(argv) == 0  # nothing changed: every run is reused
    err = capsys.readouterr().err
    assert "4 of 4 runs already in" in err and "changed" not in err

    edit(folder, 2)
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"prefixbench: engine {ref} changed since the stored runs: recomputing 2 runs" in err.splitlines()
    assert "2 of 4 runs already in" in err
    after = runs_by_engine(out)
    assert after["checkpoint"] == before["checkpoint"]  # the built-in engine's runs: reused
    assert after["keeper"].isdisjoint(before["keeper"])  # the edited engine's: new keys
    assert len(list((out / "store").glob("*.parquet"))) == 4  # the old runs left the store

    # --quiet prints the note no more than the skipped line.
    edit(folder, 3)
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_the_digest_covers_the_package_and_nothing_else(engine_package):
    package, folder = engine_package
    ref = f"{package}:factory"
    first = engine_code_digest(ref)
    assert engine_code_digest(ref) == first  # deterministic
    # Byte code caches and other files are not sources.
    (folder / "__pycache__").mkdir(exist_ok=True)
    (folder / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\0" * 16)
    (folder / "notes.txt").write_text("not code")
    assert engine_code_digest(ref) == first
    # The helper package is another package: the engine's own sources are what is digested.
    (folder.parent / f"{package}_helper" / "base.py").write_text(HELPER + "# edited\n")
    assert engine_code_digest(ref) == first
    # Any module of the package counts, the one naming the factory or not, new ones too.
    edit(folder, 2)
    second = engine_code_digest(ref)
    assert second != first
    (folder / "sub").mkdir()
    (folder / "sub" / "__init__.py").write_text("X = 1\n")
    assert engine_code_digest(ref) not in (first, second)


def test_the_factorys_own_package_counts_when_another_module_names_it(engine_package, tmp_path, monkeypatch):
    package, folder = engine_package
    # A single-module engine that re-exports the package's factory: both sources are digested.
    (tmp_path / "src" / f"{package}_alias.py").write_text(f"from {package} import factory\n")
    ref = f"{package}_alias:factory"
    first = engine_code_digest(ref)
    edit(folder, 5)
    assert engine_code_digest(ref) != first


def test_an_installed_engine_is_digested_like_its_import_path(engine_package, monkeypatch):
    package, _ = engine_package
    point = EntryPoint(name="keeper", value=f"{package}:factory", group=loading.ENTRY_POINT_GROUP)
    monkeypatch.setattr(loading, "installed_engines", lambda: {"keeper": point})
    monkeypatch.setattr(sweep_module, "installed_engines", lambda: {"keeper": point})
    assert engine_code_digest("keeper") == engine_code_digest(f"{package}:factory")


def test_builtin_engines_carry_no_engine_digest():
    from prefixbench.workloads.runs.sweep import SweepSpec, plan_sweep

    plan = plan_sweep(SweepSpec(windows=(32_000,), presets=("legacy",)))
    assert [item.engine_code for item in plan.runs] == [""]


FLAT = '''from prefixbench.kernel import EngineBase
import {tuning}


class Flat(EngineBase):
    name = "flat"


def factory(window, options):
    from {late} import LATE  # imported only when the factory runs
    return Flat()
'''


def test_a_flat_engine_counts_the_modules_it_imports_from_its_own_folder(tmp_path, monkeypatch):
    name = "pb_flat_engine"
    folder = tmp_path / "flat"
    (folder / "sub").mkdir(parents=True)
    (folder / f"{name}.py").write_text(FLAT.format(tuning=f"{name}_tuning", late=f"{name}_late"))
    (folder / f"{name}_tuning.py").write_text(f"import {name}_deeper\nFOLD_AT = 0.5\n")
    (folder / f"{name}_deeper.py").write_text("X = 1\n")
    (folder / f"{name}_late.py").write_text("LATE = 1\n")
    (folder / f"{name}_unused.py").write_text("Y = 1\n")
    monkeypatch.syspath_prepend(str(folder))
    ref = f"{name}:factory"
    try:
        first = engine_code_digest(ref)
        assert engine_code_digest(ref) == first
        # a module of the folder the engine does not import is not its source
        (folder / f"{name}_unused.py").write_text("Y = 2\n")
        assert engine_code_digest(ref) == first
        seen = {first}
        for sibling in ("tuning", "deeper", "late"):  # imported, imported by an import, imported late
            path = folder / f"{name}_{sibling}.py"
            path.write_text(path.read_text() + "# edited\n")
            digest = engine_code_digest(ref)
            assert digest not in seen, sibling
            seen.add(digest)
    finally:
        forget(name)
