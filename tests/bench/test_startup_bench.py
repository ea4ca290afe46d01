"""Start-up and the default sweep, whole process (issue 13; run with --bench).

``prefixbench --version`` must finish in under 0.2 s: asserted on its CPU time (best of 5),
which machine load does not inflate; the wall time is recorded beside that of a bare
``python -c pass`` (on the 2 shared cores here the interpreter alone can take 0.15 s wall). The default sweep is timed
whole (every round recomputes its runs: ``--fresh``; the default ``--jobs``) and split into
imports (the CLI, pandas, matplotlib), simulation (computing the 12 runs with their stored
records and frames) and charts and files (CSV files, PNGs, report.md, report.html), measured
inside one fresh process per round with ``--jobs 1``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from tests.bench.peers import load_peers_script

pytestmark = pytest.mark.bench

SPLIT = """
import json, sys, time
start, start_cpu = time.perf_counter(), time.process_time()
import matplotlib.pyplot, pandas
import prefixbench.reports.cli as cli, prefixbench.reports.output as output
imported, imported_cpu = time.perf_counter(), time.process_time()
landing = output.compute_runs
spent = [0.0, 0.0]
def timed(*args, **kwargs):
    began, began_cpu = time.perf_counter(), time.process_time()
    try:
        return landing(*args, **kwargs)
    finally:
        spent[0] += time.perf_counter() - began
        spent[1] += time.process_time() - began_cpu
output.compute_runs = timed
status = cli.main(["sweep", "--quiet", "--jobs", "1", "--fresh", "--out", sys.argv[1]])
done, done_cpu = time.perf_counter(), time.process_time()
print("SPLIT " + json.dumps({"imports": imported - start, "simulation": spent[0], "charts_and_files": done - imported - spent[0],
                             "imports_cpu": imported_cpu - start_cpu, "simulation_cpu": spent[1],
                             "charts_and_files_cpu": done_cpu - imported_cpu - spent[1]}))
"""


def test_version_starts_fast(tmp_path, benchmark):
    peers = load_peers_script()
    tool = peers.Tool("start-up", "prefixbench --version", [sys.executable, "-m", "prefixbench", "--version"])
    benchmark.pedantic(lambda: peers.run_once(tool, tmp_path / "stdout"), rounds=5, iterations=1)
    assert tool.error is None, tool.error
    bare = peers.Tool("start-up", "python -c pass", [sys.executable, "-c", "pass"])
    for _ in range(5):
        peers.run_once(bare, tmp_path / "stdout")
    benchmark.extra_info.update({"best_wall_s": min(tool.walls), "best_cpu_s": min(tool.cpus), "peak_rss_mb": tool.peak_kb / 1024,
                                 "bare_python_wall_s": min(bare.walls), "bare_python_cpu_s": min(bare.cpus)})
    print(f"\n--version: wall {min(tool.walls):.3f} s, cpu {min(tool.cpus):.3f} s; bare python: wall {min(bare.walls):.3f} s")
    assert min(tool.cpus) < 0.2, tool.cpus


def test_default_sweep_time_split(tmp_path, benchmark):
    peers = load_peers_script()
    whole = peers.Tool("sweep", "prefixbench sweep", [sys.executable, "-m", "prefixbench", "sweep", "--quiet", "--fresh", "--out", str(tmp_path / "whole")])
    splits = []

    def run():
        peers.run_once(whole, tmp_path / "stdout")
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", SPLIT, str(tmp_path / "split")], capture_output=True, text=True, check=True)
        line = next(l for l in done.stdout.splitlines() if l.startswith("SPLIT "))
        splits.append({**json.loads(line[len("SPLIT "):]), "process": time.perf_counter() - began})

    benchmark.pedantic(run, rounds=3, iterations=1)
    assert whole.error is None, whole.error
    best = min(splits, key=lambda s: s["process"])
    benchmark.extra_info.update({"whole_wall_s": min(whole.walls), "whole_cpu_s": min(whole.cpus),
                                 "peak_rss_mb": whole.peak_kb / 1024, **{k: round(v, 3) for k, v in best.items()}})
    print(f"\ndefault sweep: wall {min(whole.walls):.2f} s (cpu {min(whole.cpus):.2f} s, peak {whole.peak_kb / 1024:.0f} MB); "
          f"split (wall / cpu): imports {best['imports']:.2f} / {best['imports_cpu']:.2f} s, simulation {best['simulation']:.2f} / "
          f"{best['simulation_cpu']:.2f} s, charts and files {best['charts_and_files']:.2f} / {best['charts_and_files_cpu']:.2f} s")
