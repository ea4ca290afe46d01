"""Shared pytest setup: benchmarks under tests/bench run only with --bench."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).parent / "bench"
#: Real agent traffic lives beside the project (../shared/realdata), never inside it;
#: PREFIXBENCH_REALDATA names it elsewhere (a worktree whose parent folder does not hold it).
REALDATA = Path(os.environ.get("PREFIXBENCH_REALDATA") or Path(__file__).resolve().parents[2] / "shared" / "realdata")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--bench", action="store_true", help="run the pytest-benchmark suite in tests/bench")
    parser.addoption(
        "--fuzz",
        action="store_true",
        help="long fuzz run in tests/fuzz: 10,000 cases per importer and 2,000 engine configs",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--bench"):
        return
    skip = pytest.mark.skip(reason="benchmark: run with `python -m pytest tests/bench --bench`")
    for item in items:
        if BENCH_DIR in Path(item.fspath).parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def realdata() -> Path:
    """The shared real-traffic folder; skips the test when a fresh clone does not have it."""
    if not REALDATA.is_dir():
        pytest.skip(f"real traffic not found at {REALDATA} (it lives beside the project, not in it; PREFIXBENCH_REALDATA names another place)")
    return REALDATA


#: The realdata folders whose formats ``audit`` reads, and on which the suite's audit figures were
#: measured. A folder of a format still to come joins this list with the importer that reads it.
AUDITED_FOLDERS = (
    "agentx-traces", "claude-code-viewer", "claude-trace-lemmy", "codex-rollout", "mooncake-conversation", "pi-sessions",
)


@pytest.fixture(scope="session")
def realdata_logs(realdata: Path) -> list[Path]:
    """The folders of :data:`AUDITED_FOLDERS` that this copy of the real traffic has."""
    folders = [realdata / name for name in AUDITED_FOLDERS if (realdata / name).is_dir()]
    if not folders:
        pytest.skip(f"none of {', '.join(AUDITED_FOLDERS)} in {realdata}")
    return folders


@pytest.fixture(scope="session", autouse=True)
def _temporary_folders_under_pytests_own(tmp_path_factory: pytest.TempPathFactory):
    """Hypothesis properties make a folder an example with ``tempfile.mkdtemp`` (``tmp_path`` is
    one a test, not one an example), which no test removes: a run of the suite left about a
    thousand in /tmp. They go under pytest's own temporary folder, which pytest removes a few
    runs later."""
    saved = tempfile.tempdir
    tempfile.tempdir = str(tmp_path_factory.mktemp("mkdtemp"))
    yield
    tempfile.tempdir = saved
