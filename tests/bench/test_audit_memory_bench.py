"""Peak memory of ``prefixbench audit`` by output: the table, ``--format json`` and ``--out``
(pytest-benchmark; run with `python -m pytest tests/bench/test_audit_memory_bench.py --bench`).

Target: ``--format json`` and ``--out`` within 2x of the table's peak RSS on the same Claude
Code transcripts (the JSON is streamed a request at a time, report.html draws the worst
requests only, audit.png at most a few thousand steps). The folder is generated here from a
small synthetic template (tests/bench/test_audit_bench.py's :func:`write_big_transcripts`):
100 MB unless PREFIXBENCH_AUDIT_MEMORY_MB says otherwise (the issue measured 300 MB). Each
audit runs in its own process; its peak is ``ru_maxrss``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.test_audit_bench import write_big_transcripts

pytestmark = pytest.mark.bench

#: ``--format json`` and ``--out`` may take at most this many times the table's peak.
TARGET_RATIO = 2.0
MEGABYTES = int(os.environ.get("PREFIXBENCH_AUDIT_MEMORY_MB", "100"))

SCRIPT = (
    "import resource, sys\n"
    "from prefixbench.reports.cli import main\n"
    "code = main(['audit', *sys.argv[1:], '--quiet'])\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def _peak_mb(folder: Path, options: list[str]) -> float:
    """Peak RSS in MB of one audit of ``folder`` in a fresh process (its stdout thrown away)."""
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder), *options], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def test_json_and_out_stay_within_twice_the_tables_memory(benchmark, tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    size, requests = write_big_transcripts(folder, MEGABYTES)
    out = tmp_path / "out"
    peaks: dict[str, float] = {}

    def run() -> None:
        peaks["table"] = _peak_mb(folder, [])
        peaks["json"] = _peak_mb(folder, ["--format", "json"])
        peaks["out"] = _peak_mb(folder, ["--out", str(out)])

    benchmark.pedantic(run, rounds=1, iterations=1)
    files = {p.name: round(p.stat().st_size / 1e6, 1) for p in sorted(out.iterdir())}
    ratios = {name: round(peaks[name] / peaks["table"], 2) for name in ("json", "out")}
    benchmark.extra_info.update({
        "mb": round(size / 1e6, 1), "requests": requests, **{f"peak_{k}_mb": round(v) for k, v in peaks.items()},
        **{f"ratio_{k}": v for k, v in ratios.items()}, "out_files_mb": files, "target_ratio": TARGET_RATIO,
    })
    print(f"\n{size / 1e6:.0f} MB of transcripts, {requests:,} requests: peak RSS table {peaks['table']:.0f} MB, "
          f"--format json {peaks['json']:.0f} MB ({ratios['json']}x), --out {peaks['out']:.0f} MB ({ratios['out']}x); "
          f"--out files (MB): {files}")
    assert ratios["json"] <= TARGET_RATIO and ratios["out"] <= TARGET_RATIO, (peaks, ratios)
