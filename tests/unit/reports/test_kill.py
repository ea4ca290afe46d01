"""``kill -9`` mid-sweep: the folder stays consistent, and a re-run completes it byte for byte.

The default suite kills twice (issue 11's acceptance); the 20-kill version is a benchmark
(tests/bench/test_scale_bench.py, run with --bench).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from prefixbench.workloads.runs.schema import RUN_KEYS
from prefixbench.workloads.runs.manifest import UNFINISHED

#: 16 runs with two worker processes: long enough to be killed in the middle.
ARGV = ["sweep", "--windows", "32k,64k", "--presets", "legacy,patched", "--seeds", "0-3", "--steps", "40", "--jobs", "2"]


def sweep(out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "prefixbench", *ARGV, *extra, "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def check_consistent(out: Path) -> None:
    """runs.csv and observations.csv hold the same runs; report.md is absent or matches them."""
    runs_path, obs_path, report = out / "runs.csv", out / "observations.csv", out / "report.md"
    if runs_path.exists() or obs_path.exists():
        assert runs_path.exists() and obs_path.exists(), sorted(p.name for p in out.iterdir())
        runs = pd.read_csv(runs_path, keep_default_na=False, dtype=str)
        obs = pd.read_csv(obs_path, keep_default_na=False, dtype=str)
        assert set(map(tuple, runs[list(RUN_KEYS)].values)) == set(map(tuple, obs[list(RUN_KEYS)].values))
        assert int(pd.to_numeric(runs["num_requests"]).sum()) == len(obs)
    if report.exists():
        assert runs_path.exists()
        runs = pd.read_csv(runs_path)
        text = report.read_text()
        # The across-seeds table: each configuration's min and max session totals.
        for _, group in runs.groupby(["window", "preset"]):
            totals = group["session_uncached_tokens"]
            assert f"{int(totals.min()):,}" in text and f"{int(totals.max()):,}" in text
        assert f"seeds: 0-3 ({runs['seed'].nunique()};" in text


def kill_at_random(out: Path, rng: random.Random, latest: float) -> None:
    proc = sweep(out)
    time.sleep(rng.uniform(0.3, latest))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    check_consistent(out)


def kill_and_resume(tmp_path: Path, kills: int, seed: int) -> tuple[str, dict[str, bytes], dict[str, bytes]]:
    """An uninterrupted sweep, then ``kills`` killed sweeps into another folder and a re-run."""
    reference = tmp_path / "reference"
    start = time.monotonic()
    proc = sweep(reference)
    proc.communicate()
    assert proc.returncode == 0
    duration = time.monotonic() - start
    out = tmp_path / "killed"
    rng = random.Random(seed)
    for _ in range(kills):
        kill_at_random(out, rng, duration)
    final = sweep(out)
    _, err = final.communicate()
    assert final.returncode == 0, err
    check_consistent(out)
    assert not (out / UNFINISHED).exists()
    return err, tree(reference), tree(out)


def test_kill_9_twice_then_a_rerun_gives_the_uninterrupted_bytes(tmp_path):
    err, reference, resumed = kill_and_resume(tmp_path, kills=2, seed=11)
    assert resumed == reference
    # The re-run says what it skipped (and may have skipped nothing if both kills came early).
    assert "runs already in" in err or "store/ (16 runs)" in err
