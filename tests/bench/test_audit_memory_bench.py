"""Peak memory of ``prefixbench audit`` by output: the table, ``--format json`` and ``--out``
(pytest-benchmark; run with `python -m pytest tests/bench/test_audit_memory_bench.py --bench`).

Growth (issue 19): folders of 1, 4 and 16 copies of the same session file (400 requests,
1.7 MB each; with PREFIXBENCH_AUDIT_CORPUS=real, of ../shared/realdata's Claude Code
transcripts, 394 requests and 2.1 MB a copy: tests/bench/test_audit_bench.py's
:func:`write_real_shaped_transcripts`, skipped without them), audited as a table and with
``--format json``: the peak RSS and the traced (tracemalloc) peak of each, and what each
request beyond the first file adds. An audit whose memory were bounded by the largest file
would add nothing; the audit replays every file on one cache, in send order across files, and
keeps every request of the trace for that pass and the re-simulation of what to change (the rows
wait in a temporary file from the pass to the writers, summed a file at a time), so it adds
about what ``GROWTH_BYTES_PER_REQUEST`` allows.

Target: ``--format json`` and ``--out`` within 2x of the table's peak RSS on the same Claude
Code transcripts (the JSON is streamed a request at a time, report.html draws the worst
requests only, audit.png at most a few thousand steps). The folder is generated here from a
small synthetic template (tests/bench/test_audit_bench.py's :func:`write_big_transcripts`):
100 MB unless PREFIXBENCH_AUDIT_MEMORY_MB says otherwise (the issue measured 300 MB). Each
audit runs in its own process; its peak is its ``VmHWM`` (Linux; else ``ru_maxrss``, which on Linux
starts from the parent's peak at the fork: pytest's ~50 MB hid a small audit's own).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.test_audit_bench import write_big_transcripts, write_real_shaped_transcripts

pytestmark = pytest.mark.bench

#: ``--format json`` and ``--out`` may take at most this many times the table's peak.
TARGET_RATIO = 2.0
MEGABYTES = int(os.environ.get("PREFIXBENCH_AUDIT_MEMORY_MB", "100"))
#: ``generated`` (default) or ``real``: what the growth is measured on (see the module doc).
CORPUS = os.environ.get("PREFIXBENCH_AUDIT_CORPUS", "generated")
#: Where ../shared/realdata is (as tests/conftest.py finds it).
REALDATA = Path(os.environ.get("PREFIXBENCH_REALDATA") or Path(__file__).resolve().parents[3] / "shared" / "realdata")

SCRIPT = (
    "import resource, sys\n"
    "from prefixbench.reports.cli import main\n"
    "code = main(['audit', *sys.argv[1:], *([] if '--jobs' in sys.argv else ['--jobs', '1']), '--quiet'])\n"
    "try:\n"
    "    peak = next(int(line.split()[1]) for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
    "except (OSError, StopIteration):\n"
    "    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "print(peak, file=sys.stderr)\n"
    "sys.exit(code)\n"
)

#: The same audit under tracemalloc: its traced peak, in bytes, on stderr's last line.
TRACED_SCRIPT = (
    "import sys, tracemalloc\n"
    "from prefixbench.reports.cli import main\n"
    "tracemalloc.start()\n"
    "code = main(['audit', *sys.argv[1:], *([] if '--jobs' in sys.argv else ['--jobs', '1']), '--quiet'])\n"
    "print(tracemalloc.get_traced_memory()[1], file=sys.stderr)\n"
    "sys.exit(code)\n"
)
#: Copies of one session the growth is measured over.
GROWTH = (1, 4, 16)
#: Peak RSS a request past the first file may add (measured: 1,550-1,603 bytes; 1,868-1,880 before
#: equal message records were one object, the chain model's entries keyed per family, the send
#: order an array and rows shared the reported ints their predictions equal; in a later run
#: 1,758-1,789 on 6a86713 and 1,550-1,620 once the chain model kept expired entries as tombstones
#: and the prediction as logged was machine ints: a few MB of noise at 16 copies is ~500 a request;
#: 1,101-1,170, 1,602-1,684 on the code before, once the rows went to a temporary file as the pass
#: made them and were summed a file at a time; 913-1,039 and 955-1,440, 928-1,081 and 1,041-1,436 on
#: the code before, once the price lookups kept their latest minutes: these copies share their
#: minutes, so nothing changed but the noise).
GROWTH_BYTES_PER_REQUEST = 2_500


def _peak_mb(folder: Path, options: list[str]) -> float:
    """Peak RSS in MB of one audit of ``folder`` in a fresh process (its stdout thrown away)."""
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(folder), *options], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def _traced_mb(folder: Path, options: list[str]) -> float:
    """The traced (tracemalloc) peak in MB of one audit of ``folder`` in a fresh process."""
    done = subprocess.run([sys.executable, "-c", TRACED_SCRIPT, str(folder), *options], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1]) / 1e6


def test_memory_grows_with_the_folder_by_what_a_request_keeps(benchmark, tmp_path: Path) -> None:
    requests: dict[int, int] = {}
    source = REALDATA / "claude-code-viewer"
    if CORPUS == "real" and not source.is_dir():
        pytest.skip(f"PREFIXBENCH_AUDIT_CORPUS=real: real transcripts not found at {source} (they live beside the project)")
    for copies in GROWTH:
        folder = tmp_path / f"x{copies}"
        requests[copies] = (write_real_shaped_transcripts(folder, source, 0, copies=copies) if CORPUS == "real"
                            else write_big_transcripts(folder, sessions=copies))[1]
    peaks: dict[str, dict[int, float]] = {}

    def run() -> None:
        for name, options in (("table", []), ("json", ["--format", "json"])):
            for copies in GROWTH:
                folder = tmp_path / f"x{copies}"
                peaks.setdefault(f"rss_{name}", {})[copies] = _peak_mb(folder, options)
                peaks.setdefault(f"traced_{name}", {})[copies] = _traced_mb(folder, options)

    benchmark.pedantic(run, rounds=1, iterations=1)
    first, last = GROWTH[0], GROWTH[-1]
    added = requests[last] - requests[first]
    per_request = {name: round((p[last] - p[first]) * (1024 * 1024 if name.startswith("rss") else 1e6) / added)
                   for name, p in peaks.items()}
    benchmark.extra_info.update({
        "requests": requests, **{f"{name}_mb": {k: round(v, 1) for k, v in p.items()} for name, p in peaks.items()},
        **{f"{name}_bytes_per_request": v for name, v in per_request.items()},
        "target_bytes_per_request": GROWTH_BYTES_PER_REQUEST,
    })
    for name, p in peaks.items():
        print(f"\n{name} peak (MB) at {', '.join(f'{k}x' for k in GROWTH)}: {', '.join(f'{p[k]:.1f}' for k in GROWTH)}; "
              f"{per_request[name]:,} bytes a request past the first file")
    assert max(per_request["rss_table"], per_request["rss_json"]) <= GROWTH_BYTES_PER_REQUEST, per_request


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
