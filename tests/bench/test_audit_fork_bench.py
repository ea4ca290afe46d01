"""Reading a big folder of Codex rollouts where an archived fork sorts before its source
(pytest-benchmark; run with `python -m pytest tests/bench/test_audit_fork_bench.py --bench`).

A Codex 0.35-0.125 fork holds an unmarked copy of its source's rollout; the audit reads the
source first (:func:`prefixbench.workloads.audit.reading.answers_first`), so a fork kept in
``archived_sessions/`` (which sorts before ``sessions/``) makes ``load_trace`` read in a second
order. The folder (generated, deterministic): PREFIXBENCH_FORK_BENCH_FILES rollouts (default
200) of PREFIXBENCH_FORK_BENCH_CALLS calls each (default 40, about 130 KB a rollout), one of
them the source of an archived fork. Measured: ``load_trace`` of the folder, and of the same
files with the fork given after its source (one order: the floor). Nothing here asserts a time:
the numbers go into ``benchmark.extra_info`` and are printed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.logs.sources import find_log_files

pytestmark = pytest.mark.bench

FILES = int(os.environ.get("PREFIXBENCH_FORK_BENCH_FILES", "200"))
CALLS = int(os.environ.get("PREFIXBENCH_FORK_BENCH_CALLS", "40"))
FILLER = ("the quick brown fox jumps over the lazy dog " * 40)[:1500]


def _stamp(seconds: float) -> str:
    """A time on 2025-11-17 from a number of seconds after 10:00 (milliseconds kept)."""
    whole, millis = divmod(round(seconds * 1000), 1000)
    minutes, second = divmod(whole, 60)
    hour, minute = divmod(minutes, 60)
    return f"2025-11-17T{10 + hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"


def _rollout(thread: str, start: float, calls: int) -> list[dict]:
    """A Codex 0.58 thread: a session_meta, then per call a user turn, a tool output and a token count."""
    records = [{"timestamp": _stamp(start), "type": "session_meta",
                "payload": {"id": thread, "cli_version": "0.58.0", "originator": "codex_cli_rs", "model_provider": "openai"}},
               {"timestamp": _stamp(start + 0.5), "type": "turn_context", "payload": {"model": "gpt-5.1-codex", "effort": "high"}}]
    total_in = total_cached = total_out = 0
    prompt = 8000
    for n in range(calls):
        at = start + 1 + 20 * n
        cached, prompt = (prompt - 200 if n else 0), prompt + 700
        total_in, total_cached, total_out = total_in + prompt, total_cached + cached, total_out + 120
        records += [
            {"timestamp": _stamp(at), "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"step {n}: {FILLER}"}]}},
            {"timestamp": _stamp(at + 2), "type": "response_item",
             "payload": {"type": "function_call_output", "call_id": f"c{n}", "output": FILLER}},
            {"timestamp": _stamp(at + 9), "type": "event_msg", "payload": {"type": "token_count", "info": {
                "total_token_usage": {"input_tokens": total_in, "cached_input_tokens": total_cached, "output_tokens": total_out},
                "last_token_usage": {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": 120}}}},
        ]
    return records


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")


def write_fork_folder(root: Path, files: int = FILES, calls: int = CALLS) -> tuple[Path, Path]:
    """``files`` rollouts under ``root/sessions/``, the first the source of a fork archived under
    ``root/archived_sessions/`` (a copy of the source written 1 ms a record, then a call of its
    own). Returns (source, fork)."""
    source = None
    for n in range(files):
        thread = f"019a9400-0000-7000-8000-{n:012d}"
        path = root / "sessions" / "2025" / "11" / "17" / f"rollout-2025-11-17T10-{n // 60:02d}-{n % 60:02d}-{thread}.jsonl"
        records = _rollout(thread, 60.0 * n, calls)
        _write(path, records)
        source = source or (path, records)
    assert source is not None
    thread = "019a9500-0000-7000-8000-00000000f0f0"
    fork_start = 60.0 * files + 3600
    copied = [{**record, "timestamp": _stamp(fork_start + 0.012 + n / 1000)} for n, record in enumerate(source[1])]
    own = _rollout(thread, fork_start + 30, 2)[2:]  # its own two calls, 30 s after the copy
    fork = root / "archived_sessions" / f"rollout-2025-11-17T12-00-00-{thread}.jsonl"
    _write(fork, [{"timestamp": _stamp(fork_start), "type": "session_meta",
                   "payload": {"id": thread, "cli_version": "0.58.0", "originator": "codex_cli_rs", "model_provider": "openai"}},
                  *copied, *own])
    return source[0], fork


@pytest.fixture(scope="module")
def fork_folder(tmp_path_factory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("codex-forks")
    source, fork = write_fork_folder(root)
    return root, source, fork


def _report(benchmark, name: str, root: Path, requests: int) -> None:
    size = sum(path.stat().st_size for path, _ in find_log_files([root]))
    seconds = benchmark.stats.stats.mean
    benchmark.extra_info.update({"files": FILES + 1, "mb": round(size / 1e6, 1), "requests": requests,
                                 "seconds": round(seconds, 3), "load": round(os.getloadavg()[0], 2)})
    print(f"\n{name}: {FILES + 1} rollouts, {size / 1e6:.1f} MB, {requests:,} requests: {seconds:.2f} s "
          f"(min {benchmark.stats.stats.min:.2f} s; load average {os.getloadavg()[0]:.2f})")


def test_fork_sorting_before_its_source(benchmark, fork_folder) -> None:
    """The folder as walked: the archived fork first, the source after it (two orders)."""
    root, _, _ = fork_folder
    requests, _ = benchmark.pedantic(lambda: load_trace([root]), rounds=3, iterations=1)
    _report(benchmark, "fork before its source", root, len(requests))


def test_fork_after_its_source(benchmark, fork_folder) -> None:
    """The same files, the fork given last (after its source): one order, the floor."""
    root, _, fork = fork_folder
    rest = [path for path, skip in find_log_files([root]) if skip is None and path != fork]
    requests, _ = benchmark.pedantic(lambda: load_trace([*rest, fork]), rounds=3, iterations=1)
    _report(benchmark, "fork after its source", root, len(requests))
