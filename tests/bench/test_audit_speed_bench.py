"""``prefixbench audit`` on a big folder of Claude Code transcripts: speed against a bare
``json.loads`` of every line, ``--jobs 2`` against ``--jobs 1``, peak memory, and the fastest
usage reporter there is beside it (pytest-benchmark; run with
`python -m pytest tests/bench/test_audit_speed_bench.py --bench`).

The folder is generated (tests/bench/test_audit_bench.py's :func:`write_big_transcripts`: many
sessions of about 1.7 MB each, short lines): PREFIXBENCH_AUDIT_SPEED_MB megabytes (default 150).
PREFIXBENCH_AUDIT_CORPUS=real makes it of copies of ../shared/realdata's Claude Code transcripts
instead (:func:`write_real_shaped_transcripts`: real lines, tool results and file reads), those of
its ``claude-code-viewer`` folder (PREFIXBENCH_REALDATA names ../shared/realdata elsewhere). Peak memory is
also measured on 600 MB when PREFIXBENCH_AUDIT_600=1 (a few minutes). An audit runs with ``--jobs 1``
where no ``--jobs`` is named (the default would start workers on a big folder). Every figure is a whole
process (``ru_maxrss``, wall and CPU seconds); the machine's load average is recorded beside it,
since ``--jobs`` can only go as fast as the free cores let it. Nothing here asserts a time: the
numbers go into ``benchmark.extra_info`` and are printed.

Against the bare pass, PREFIXBENCH_AUDIT_SPEED_ROUNDS rounds (default 1) alternate the bare
pass, ``audit --format json``, ``audit`` (the table) and the reading of the files alone
(``load_trace``, ``read``), and the ratios are of the median CPU seconds (on a shared machine
the wall clock says little). PREFIXBENCH_AUDIT_BEFORE names the Python of another install (the
main a change started from): its two audits and its reading join each round, so before and after
come from the same run on the same machine. Every install runs from compiled bytecode (written
once, to a folder of the bench's own, before anything is measured), so an editable install and a
``pip install``ed one are measured alike.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bench.peers import load_peers_script
from tests.bench.test_audit_bench import write_big_transcripts, write_real_shaped_transcripts

pytestmark = pytest.mark.bench

MEGABYTES = int(os.environ.get("PREFIXBENCH_AUDIT_SPEED_MB", "150"))
BIG = os.environ.get("PREFIXBENCH_AUDIT_600") == "1"
#: ``generated`` (default: short synthetic lines, the worst case for per-line work) or ``real``:
#: copies of ../shared/realdata's Claude Code transcripts (their real shape; skipped without them).
CORPUS = os.environ.get("PREFIXBENCH_AUDIT_CORPUS", "generated")
#: Rounds of the bare pass and the audits against it (see the module doc).
ROUNDS = int(os.environ.get("PREFIXBENCH_AUDIT_SPEED_ROUNDS", "1"))
#: The Python of another install of prefixbench, measured beside this one (see the module doc).
BEFORE = os.environ.get("PREFIXBENCH_AUDIT_BEFORE")
#: Where ../shared/realdata is (as tests/conftest.py finds it).
REALDATA = Path(os.environ.get("PREFIXBENCH_REALDATA") or Path(__file__).resolve().parents[3] / "shared" / "realdata")

#: One audit in a fresh process: its stdout thrown away, then (on stderr) its wall seconds, its
#: own and its workers' CPU seconds, and its own and its largest worker's peak RSS in KB.
AUDIT = (
    "import resource, sys, time\n"
    "from prefixbench.reports.cli import main\n"
    "start = time.perf_counter()\n"
    "args = sys.argv[1:]\n"
    "table = '--table' in args\n"
    "args = [a for a in args if a != '--table']\n"
    "code = main(['audit', *args, *([] if table else ['--format', 'json']), *([] if '--jobs' in args else ['--jobs', '1']), '--quiet'])\n"
    "wall = time.perf_counter() - start\n"
    "me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(wall, me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, me.ru_maxrss, kids.ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)
#: Reading the files only (``load_trace``, the part ``--jobs`` spreads over workers), same figures.
LOAD = (
    "import functools, resource, sys, time\n"
    "from pathlib import Path\n"
    "from prefixbench.workloads.audit.core import load_trace\n"
    "from prefixbench.workloads.runs.execute import map_runs\n"
    "jobs = int(sys.argv[2])\n"
    "start = time.perf_counter()\n"
    "load_trace([Path(sys.argv[1])], map_files=functools.partial(map_runs, jobs=jobs) if jobs > 1 else None)\n"
    "wall = time.perf_counter() - start\n"
    "me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(wall, me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, me.ru_maxrss, kids.ru_maxrss, file=sys.stderr)\n"
)
#: The same process doing nothing but ``json.loads`` of every line of every file.
BARE = (
    "import json, resource, sys, time\n"
    "from pathlib import Path\n"
    "start = time.perf_counter()\n"
    "for path in sorted(Path(sys.argv[1]).glob('*.jsonl')):\n"
    "    with path.open('rb') as handle:\n"
    "        for line in handle:\n"
    "            json.loads(line)\n"
    "me = resource.getrusage(resource.RUSAGE_SELF)\n"
    "print(time.perf_counter() - start, me.ru_utime + me.ru_stime, 0, me.ru_maxrss, 0, file=sys.stderr)\n"
)


#: The environment of every measured process: bytecode is written to and read from a folder of the
#: bench's own (:func:`compiled`), whatever PYTHONDONTWRITEBYTECODE says (with it set, an editable
#: install compiled its modules in every process, 0.3-0.4 s of CPU an audit, where a ``pip
#: install``ed one read the bytecode pip wrote).
_ENV: dict[str, str] = dict(os.environ)


@pytest.fixture(scope="module", autouse=True)
def compiled(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every install measured runs from compiled bytecode: one small audit each writes it first."""
    global _ENV
    _ENV = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path_factory.mktemp("pycache"))}
    _ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    small = Path(__file__).resolve().parents[1] / "unit" / "logs" / "fixtures" / "claude-code.jsonl"
    for python in {sys.executable, *([BEFORE] if BEFORE else [])}:
        _run(AUDIT, str(small), python=python)
        _run(LOAD, str(small), "1", python=python)


def _run(script: str, *args: str, python: str = sys.executable) -> dict[str, float]:
    done = subprocess.run([python, "-c", script, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=True, env=_ENV)
    wall, cpu, workers_cpu, rss, workers_rss = map(float, done.stderr.strip().splitlines()[-1].split())
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "workers_cpu_s": round(workers_cpu, 2),
            "peak_mb": round(rss / 1024), "workers_peak_mb": round(workers_rss / 1024)}


def _load() -> float:
    return round(os.getloadavg()[0], 2)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    path = tmp_path_factory.mktemp("audit-speed") / "projects"
    if CORPUS == "real":
        source = REALDATA / "claude-code-viewer"
        if not source.is_dir():
            pytest.skip(f"PREFIXBENCH_AUDIT_CORPUS=real: real transcripts not found at {source} (they live beside the project)")
        size, requests = write_real_shaped_transcripts(path, source, MEGABYTES)
    else:
        size, requests = write_big_transcripts(path, MEGABYTES)
    return path, size, requests


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def test_audit_against_a_bare_json_loads_pass(benchmark, folder: tuple[Path, int, int]) -> None:
    path, size, requests = folder
    runs: dict[str, list[dict[str, float]]] = {}
    loads: list[float] = []
    pythons = {"": sys.executable, **({"before_": BEFORE} if BEFORE else {})}

    def run() -> None:
        for n in range(ROUNDS):
            loads.append(_load())
            jobs = [("json_loads", BARE, sys.executable, ())]
            # (before and after alternate which goes first, round by round)
            for prefix, python in (pythons.items() if n % 2 == 0 else reversed(pythons.items())):
                jobs += [(f"{prefix}audit", AUDIT, python, ()), (f"{prefix}audit_table", AUDIT, python, ("--table",)),
                         (f"{prefix}read", LOAD, python, ("1",))]
            for name, script, python, extra in jobs:
                runs.setdefault(name, []).append(_run(script, str(path), *extra, python=python))
        loads.append(_load())

    benchmark.pedantic(run, rounds=1, iterations=1)
    mb = size / 1e6
    median = {name: {key: round(_median([r[key] for r in found]), 2) for key in ("wall_s", "cpu_s", "peak_mb")}
              for name, found in runs.items()}
    bare, audit = median["json_loads"], median["audit"]
    info = {
        "mb": round(mb, 1), "requests": requests, "files": len(list(path.iterdir())), "rounds": ROUNDS,
        "json_loads_mb_per_s": round(mb / bare["wall_s"], 1), "audit_mb_per_s": round(mb / audit["wall_s"], 1),
        "audit_over_json_loads_wall": round(audit["wall_s"] / bare["wall_s"], 2),
        **{f"{name}_over_json_loads_cpu": round(median[name]["cpu_s"] / bare["cpu_s"], 2) for name in median if name != "json_loads"},
        "medians": median, "runs": runs, "load_avg": (min(loads), max(loads)),
    }
    benchmark.extra_info.update(info)
    ratios = ", ".join(f"{name} {info[f'{name}_over_json_loads_cpu']}x" for name in median if name != "json_loads")
    print(f"\n{mb:.0f} MB, {requests:,} requests in {info['files']} files, {ROUNDS} round(s), medians: bare json.loads "
          f"cpu {bare['cpu_s']} s, audit --format json cpu {audit['cpu_s']} s (wall {audit['wall_s']} s, "
          f"{info['audit_mb_per_s']} MB/s), table cpu {median['audit_table']['cpu_s']} s; audit cpu / bare cpu: {ratios}; "
          f"peak {audit['peak_mb']} MB; load average {info['load_avg']}")


def test_jobs_2_against_jobs_1(benchmark, folder: tuple[Path, int, int]) -> None:
    path, size, _ = folder
    figures: dict[str, object] = {}

    def run() -> None:
        figures["load_before"] = _load()
        figures["jobs_1"] = _run(AUDIT, str(path), "--jobs", "1")
        figures["jobs_2"] = _run(AUDIT, str(path), "--jobs", "2")
        figures["read_1"] = _run(LOAD, str(path), "1")
        figures["read_2"] = _run(LOAD, str(path), "2")
        figures["load_after"] = _load()

    benchmark.pedantic(run, rounds=1, iterations=1)
    one, two, read_1, read_2 = (figures[k] for k in ("jobs_1", "jobs_2", "read_1", "read_2"))
    assert isinstance(one, dict) and isinstance(two, dict) and isinstance(read_1, dict) and isinstance(read_2, dict)
    speedup = round(one["wall_s"] / two["wall_s"], 2)
    read_speedup = round(read_1["wall_s"] / read_2["wall_s"], 2)
    benchmark.extra_info.update({"mb": round(size / 1e6, 1), "jobs_1": one, "jobs_2": two, "speedup": speedup,
                                 "read_jobs_1": read_1, "read_jobs_2": read_2, "read_speedup": read_speedup,
                                 "cores": os.cpu_count(), "load_avg": (figures["load_before"], figures["load_after"])})
    print(f"\n{size / 1e6:.0f} MB: --jobs 1 {one['wall_s']} s (cpu {one['cpu_s']} s), --jobs 2 {two['wall_s']} s "
          f"(cpu {two['cpu_s']} s here + {two['workers_cpu_s']} s in workers): {speedup}x on {os.cpu_count()} cores; "
          f"reading the files alone {read_1['wall_s']} s -> {read_2['wall_s']} s ({read_speedup}x; cpu here "
          f"{read_2['cpu_s']} s + workers {read_2['workers_cpu_s']} s); load average {figures['load_before']} -> {figures['load_after']}")


@pytest.mark.parametrize("megabytes", [MEGABYTES, 600])
def test_peak_memory(benchmark, folder: tuple[Path, int, int], tmp_path: Path, megabytes: int) -> None:
    if megabytes == 600 and not BIG:
        pytest.skip("600 MB: set PREFIXBENCH_AUDIT_600=1 (a few minutes)")
    path, size, requests = folder
    if megabytes != MEGABYTES:
        path = tmp_path / "projects"
        size, requests = write_big_transcripts(path, megabytes)
    largest = max(p.stat().st_size for p in path.iterdir())
    figures: dict[str, dict[str, float]] = {}

    def run() -> None:
        figures["jobs_1"] = _run(AUDIT, str(path))
        figures["jobs_2"] = _run(AUDIT, str(path), "--jobs", "2")

    benchmark.pedantic(run, rounds=1, iterations=1)
    benchmark.extra_info.update({"mb": round(size / 1e6, 1), "requests": requests, "largest_file_mb": round(largest / 1e6, 1),
                                 **figures, "load_avg": _load()})
    print(f"\n{size / 1e6:.0f} MB ({requests:,} requests, largest file {largest / 1e6:.1f} MB): peak RSS "
          f"--jobs 1 {figures['jobs_1']['peak_mb']} MB, --jobs 2 {figures['jobs_2']['peak_mb']} MB here and "
          f"{figures['jobs_2']['workers_peak_mb']} MB in the largest worker")
    if megabytes != MEGABYTES:
        shutil.rmtree(path)


def test_fastest_usage_reporter_beside_it(benchmark, folder: tuple[Path, int, int], tmp_path: Path) -> None:
    """ccusage (npm), the fastest usage reporter we could install, on the same files; listed as
    missing when it is not installed (PREFIXBENCH_CCUSAGE names its binary, or the peers' folder)."""
    peers = load_peers_script()
    binary = os.environ.get("PREFIXBENCH_CCUSAGE") or shutil.which("ccusage") or peers.peer_bin(peers.DEFAULT_PEERS, "ccusage")
    path, size, _ = folder
    if binary is None:
        benchmark.extra_info["ccusage"] = "missing: npm install --prefix <peers>/node ccusage, or set PREFIXBENCH_CCUSAGE"
        pytest.skip("ccusage missing (not a failure): npm install --prefix <peers>/node ccusage, or set PREFIXBENCH_CCUSAGE")
    home = tmp_path / "claude-home"
    (home / "projects").mkdir(parents=True)
    (home / "projects" / "big").symlink_to(path, target_is_directory=True)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(home)}
    figures: dict[str, object] = {}

    def run() -> None:
        start = time.perf_counter()
        done = subprocess.run([binary, "session", "--json", "--offline"], capture_output=True, text=True, env=env)
        figures["ccusage_s"] = round(time.perf_counter() - start, 2)
        figures["ccusage_ok"] = done.returncode == 0
        if done.returncode == 0:
            report = json.loads(done.stdout)
            # {"sessions": [...]} in most versions, a bare list in others.
            sessions = report if isinstance(report, list) else report.get("sessions", [])
            figures["ccusage_output"] = sum(s.get("outputTokens", 0) for s in sessions)
        figures["audit"] = _run(AUDIT, str(path))
        figures["audit_jobs_2"] = _run(AUDIT, str(path), "--jobs", "2")

    benchmark.pedantic(run, rounds=1, iterations=1)
    audit, two = figures["audit"], figures["audit_jobs_2"]
    assert isinstance(audit, dict) and isinstance(two, dict)
    ratio = round(audit["wall_s"] / figures["ccusage_s"], 2)  # type: ignore[operator]
    benchmark.extra_info.update({"mb": round(size / 1e6, 1), **figures, "audit_over_ccusage": ratio,
                                 "audit_jobs_2_over_ccusage": round(two["wall_s"] / figures["ccusage_s"], 2),  # type: ignore[operator]
                                 "load_avg": _load()})
    print(f"\n{size / 1e6:.0f} MB: ccusage session {figures['ccusage_s']} s (ok: {figures['ccusage_ok']}), prefixbench audit "
          f"{audit['wall_s']} s ({ratio}x), --jobs 2 {two['wall_s']} s")
