"""``kill -9`` mid-sweep: the folder stays consistent, and a re-run completes it byte for byte.

The default suite stops a sweep at every named point of its landing
(:func:`prefixbench.reports.outdir.landing_point`), as a ``kill -9`` there would; kills at
random moments are a benchmark (tests/bench/test_scale_bench.py, run with --bench).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from prefixbench.reports import outdir, output
from prefixbench.reports.entry import main
from prefixbench.reports.outdir import JOURNAL, LOCK, STOP_AT, complete_landing
from prefixbench.workloads.runs.schema import RUN_KEYS
from prefixbench.workloads.runs.manifest import MANIFEST, UNFINISHED

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
    """runs.csv and observations.csv hold the same runs; report.md is absent or matches them.

    Judged as the folder is on disk, before any command completes a landing the kill cut short.
    """
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
        seeds = sorted(runs["seed"].unique())
        if len(seeds) > 1:
            assert f"seeds: {seeds[0]}" in text and f"({len(seeds)};" in text


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


#: An earlier sweep into the folder, then the one that is stopped: other runs, other files
#: (the earlier 64k timeline and run go when the later sweep lands).
EARLIER = ["sweep", "--windows", "32k,64k", "--presets", "legacy", "--steps", "12", "--quiet", "--jobs", "1"]
LATER = ["sweep", "--windows", "32k", "--presets", "legacy,patched", "--seeds", "0-1", "--steps", "12", "--quiet", "--jobs", "1"]
#: Every point of the later sweep's landing, in order. The earlier files are untouched up to
#: ``journaled``; from there the landing is decided, and the next command completes it.
POINTS = [
    "run-stored", "staged", "journaled", "linked",
    "landed:.tables", f"landed:{MANIFEST}", "removed", "landed",
]


def test_the_points_are_every_point_a_sweep_passes(tmp_path, monkeypatch):
    passed: list[str] = []
    monkeypatch.setattr(outdir, "landing_point", passed.append)
    monkeypatch.setattr(output, "landing_point", passed.append)
    assert main([*EARLIER, "--out", str(tmp_path)]) == 0
    passed.clear()
    assert main([*LATER, "--out", str(tmp_path)]) == 0
    assert list(dict.fromkeys(passed)) == POINTS


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> tuple[Path, dict[str, bytes]]:
    """The earlier sweep's folder, and the tree the later sweep makes of it uninterrupted."""
    root = tmp_path_factory.mktemp("landing")
    earlier, reference = root / "earlier", root / "reference"
    assert main([*EARLIER, "--out", str(earlier)]) == 0
    shutil.copytree(earlier, reference)
    assert main([*LATER, "--out", str(reference)]) == 0
    return earlier, tree(reference)


def stopped_at(point: str, out: Path, *, fork: bool = True) -> None:
    """Run the later sweep into ``out`` until ``point``, where it ends as kill -9 would.

    Forked from this process (its imports are loaded: a few seconds instead of twenty under
    load), or, with ``fork=False``, a fresh ``python -m prefixbench``.
    """
    if not fork:
        proc = subprocess.run(
            [sys.executable, "-m", "prefixbench", *LATER, "--out", str(out)],
            capture_output=True, text=True, timeout=300, env={**os.environ, STOP_AT: point},
        )
        assert proc.returncode == 137, proc.stderr  # it got there, and stopped there
        return
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.environ[STOP_AT] = point
            main([*LATER, "--out", str(out)])
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 137  # it got there, and stopped there


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a sweep to stop it")
@pytest.mark.parametrize("point", POINTS)
def test_a_sweep_stopped_at_each_landing_point_then_rerun_gives_the_uninterrupted_bytes(tmp_path, folders, point, capsys):
    earlier, reference = folders
    out = tmp_path / "out"
    shutil.copytree(earlier, out)
    before = tree(earlier)
    stopped_at(point, out, fork=point != "landed:.tables")
    now = tree(out)
    if POINTS.index(point) < POINTS.index("journaled"):
        # Not decided yet: every earlier file as it was (new runs may be in store/).
        assert {name: now.get(name) for name in before} == before
        assert not (out / JOURNAL).exists()
    elif point != "landed":
        # Decided: the journal names what is left to do, and the staged files are there.
        assert (out / JOURNAL).exists()
    assert (out / LOCK).exists()  # left by the stopped sweep: the next one takes it over
    # The CSV files hold the same runs at every point, as the stop left them.
    check_consistent(out)
    complete_landing(out)
    check_consistent(out)
    if POINTS.index(point) >= POINTS.index("journaled"):
        after = tree(out)
        assert {name: after[name] for name in reference} == reference  # completed without running anything
    capsys.readouterr()
    assert main([*LATER, "--out", str(out)]) == 0
    assert "took over the lock" in capsys.readouterr().err
    assert tree(out) == reference


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks a sweep to stop it")
@pytest.mark.parametrize("point", ["journaled", "linked", "landed:.tables", "landed"])
def test_a_folder_of_plain_files_is_taken_over_without_a_mixed_moment(tmp_path, folders, point, capsys):
    """An earlier prefixbench wrote plain files (so does a copy that follows links): the
    landing first makes them links to a generation holding those same bytes, then swaps."""
    earlier, reference = folders
    out = tmp_path / "out"
    shutil.copytree(earlier, out)  # follows the links: .tables is a plain folder, the outputs plain files
    assert not (out / "runs.csv").is_symlink()
    stopped_at(point, out)
    check_consistent(out)
    capsys.readouterr()
    assert main([*LATER, "--out", str(out)]) == 0
    assert tree(out) == reference
    assert (out / "runs.csv").is_symlink()


def test_without_symbolic_links_the_outputs_are_plain_files_with_the_same_bytes(tmp_path, folders, monkeypatch, capsys):
    earlier, reference = folders

    def refuse(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "symlink", refuse)
    out = tmp_path / "out"
    assert main([*LATER, "--out", str(out)]) == 0
    plain = tree(out)
    assert not any(p.is_symlink() for p in out.iterdir())
    assert {name: data for name, data in reference.items() if not name.startswith(".tables")} == plain
