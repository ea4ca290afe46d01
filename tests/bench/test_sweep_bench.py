"""Speed and memory of the seed runs (pytest-benchmark; run with `python -m pytest tests/bench --bench`).

Targets (issue 2): the whole default sweep under 20 s wall, the 512k run under 300 MB peak.
Deterministic figures of each run go into ``benchmark.extra_info`` so a regression in the
model shows up beside a regression in speed.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tracemalloc

import pytest

from prefixbench.kernel.meter import price_message
from prefixbench.reports.cli import main
from prefixbench.simulator.render import render_message
from prefixbench.workloads.scripted.prose import prose
from prefixbench.workloads.scripted.registry import execute
from prefixbench.workloads.scripted.seed_coding import SeedCodingWorkload

pytestmark = pytest.mark.bench


def cold_caches() -> None:
    """Forget memoized renderings, prices and filler so every round does the full work."""
    for cached in (prose, render_message, price_message):
        cached.cache_clear()


def test_seed_run_512k(benchmark):
    def run():
        return execute(SeedCodingWorkload(512_000), "patched")

    result = benchmark.pedantic(run, setup=cold_caches, rounds=5, iterations=1)
    benchmark.extra_info["num_requests"] = len(result.observations)
    benchmark.extra_info["session_uncached_tokens"] = sum(o.uncached_tokens for o in result.observations)
    cold_caches()
    tracemalloc.start()
    run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    benchmark.extra_info["python_peak_mb"] = round(peak / 2**20, 1)
    assert peak < 300 * 2**20


def test_seed_run_512k_process_peak_rss(tmp_path, benchmark):
    """Peak resident memory of a whole `prefixbench sweep` at 512k (interpreter and charts included)."""

    def run():
        subprocess.run(
            [sys.executable, "-m", "prefixbench", "sweep", "--windows", "512k", "--presets", "legacy,patched",
             "--quiet", "--out", str(tmp_path)],
            check=True,
            capture_output=True,
        )

    benchmark.pedantic(run, rounds=1, iterations=1)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    benchmark.extra_info["process_peak_rss_mb"] = round(peak_mb, 1)
    assert peak_mb < 300


def test_default_sweep(tmp_path, benchmark, capsys):
    """What `prefixbench sweep` does on the defaults: 12 runs, report.md and 4 charts."""

    def run():
        cold_caches()
        assert main(["sweep", "--quiet", "--out", str(tmp_path)]) == 0

    benchmark.pedantic(run, rounds=3, iterations=1)
    capsys.readouterr()


def test_cross_engine_sweep(tmp_path, benchmark, capsys):
    """Issue 3's sweep: thinking-tools, three engines, three windows, legacy and patched, strict profile."""

    def run():
        cold_caches()
        argv = ["sweep", "--workload", "thinking-tools", "--engines", "checkpoint,ranges,user-tail",
                "--profile", "deepseek-official", "--presets", "legacy,patched", "--quiet", "--out", str(tmp_path)]
        assert main(argv) == 0

    benchmark.pedantic(run, rounds=2, iterations=1)
    capsys.readouterr()
