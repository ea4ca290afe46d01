"""The wheel holds every package and data file that is on disk.

The four packages sit at the repository root and are mapped into ``prefixbench.*`` by
``[tool.setuptools]`` in pyproject.toml. A package forgotten in that mapping still imports
under an editable install and silently vanishes from the wheel; these tests catch it. CI also
installs the built wheel in a fresh venv and runs a sweep from it (.ci/run).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = ("simulator", "kernel", "workloads", "reports")


def expected_files() -> set[str]:
    """Every file the wheel must carry, as ``prefixbench/...`` archive names."""
    names = {"prefixbench/__main__.py"}
    for top in PACKAGE_DIRS:
        for path in (ROOT / top).rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            rel = path.relative_to(ROOT)
            if rel.parts[:2] == ("reports", "_root"):
                continue  # mapped to prefixbench/ itself (python -m prefixbench)
            names.add("prefixbench/" + rel.as_posix())
    return names


def test_every_package_on_disk_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed = set(config["packages"])
    on_disk = {"prefixbench"}
    for top in PACKAGE_DIRS:
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT)
            on_disk.add("prefixbench." + ".".join(rel.parts))
    # Folders of package data (no modules) are listed too, so setuptools installs them as such.
    data = {"prefixbench.simulator.data"}
    assert all((ROOT / name.split(".", 1)[1].replace(".", "/")).is_dir() for name in data)
    assert listed == on_disk | data
    assert config["package-dir"] == {"prefixbench": "reports/_root", **{f"prefixbench.{p}": p for p in PACKAGE_DIRS}}


def test_no_top_level_prefixbench_folder_shadows_the_installed_package() -> None:
    assert not (ROOT / "prefixbench").exists()
    assert not (ROOT / "src").exists()


def _wheel(tmp_path: Path) -> Path:
    given = os.environ.get("PREFIXBENCH_WHEEL")
    if given:
        return Path(given)
    setuptools = pytest.importorskip("setuptools", reason="building the wheel needs setuptools in this environment")
    major = int(setuptools.__version__.split(".", 1)[0])
    if major < 77:  # the build-system's floor (an SPDX license string): the test extra installs it
        pytest.skip(f"setuptools {setuptools.__version__} here; building the wheel needs setuptools>=77 (pip install -e '.[test]')")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    # With the build-system's setuptools here, a failed build is the project's fault, not the place's.
    assert done.returncode == 0, f"the wheel did not build: {done.stderr.strip().splitlines()[-5:]}"
    (wheel,) = tmp_path.glob("prefixbench-*.whl")
    return wheel


def test_wheel_holds_every_module_and_data_file(tmp_path: Path) -> None:
    with zipfile.ZipFile(_wheel(tmp_path)) as archive:
        names = {n for n in archive.namelist() if n.startswith("prefixbench/")}
    missing = expected_files() - names
    assert not missing, f"missing from the wheel: {sorted(missing)}"
    assert "prefixbench/simulator/data/prices.csv" in names
    # prefixbench stays a namespace package: an __init__.py would make it a regular one.
    assert "prefixbench/__init__.py" not in names
