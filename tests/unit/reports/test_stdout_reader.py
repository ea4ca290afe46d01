"""Standard output that goes away or fills up: a gate keeps its verdict, --out is still written,
and a full device is one line (exit 2) with Python's default buffering, not only unbuffered."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from prefixbench.reports.cli import main


@pytest.fixture(scope="module")
def legacy_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("log") / "legacy.jsonl"
    assert main(["record", str(path), "--preset", "legacy", "--steps", "30"]) == 0
    return path


def buffered_env() -> dict[str, str]:
    """The environment of a user's shell: Python buffers a piped standard output."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    return env


def run_into_a_closed_pipe(*argv: str) -> subprocess.CompletedProcess[str]:
    """``prefixbench ARGV | true``: the reader is gone before the first byte is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-m", "prefixbench", *argv], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, check=False, env=buffered_env(), timeout=120)
    finally:
        os.close(write_end)


def test_a_failed_check_still_exits_1_when_its_reader_left(legacy_log: Path) -> None:
    # Before: the BrokenPipeError ended the command with exit 0, so `check ... | head` (pipefail)
    # passed a failing gate.
    done = run_into_a_closed_pipe("check", "--trace", str(legacy_log), "--windows", "32k")
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""


def test_an_audit_gate_and_its_out_folder_outlive_the_reader(legacy_log: Path, tmp_path: Path) -> None:
    # Before: exit 0 and no --out folder at all (the table is printed before the files are written).
    out = tmp_path / "audit-out"
    done = run_into_a_closed_pipe("audit", str(legacy_log), "--fail-on", "cold-start", "--out", str(out))
    assert done.returncode == 1, done.stderr
    assert (out / "audit.json").is_file() and (out / "report.html").is_file()
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_full_standard_output_is_one_line_when_python_buffers_it(legacy_log: Path) -> None:
    # Before: Python's flush at exit failed: "Exception ignored in: <_io.TextIOWrapper ...>" and
    # an OSError line, exit 120.
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "prefixbench", "replay", str(legacy_log)], stdout=full,
                              stderr=subprocess.PIPE, text=True, check=False, env=buffered_env(), timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["prefixbench: error: standard output: No space left on device"], done.stderr
