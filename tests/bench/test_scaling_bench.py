"""Replay time and memory grow linearly with new bytes (issue 13), whole process and in-process.

The peer workload at 50, 200 and 800 requests (1, 4 and 16 interleaved sessions of 50 turns:
each size adds whole sessions, so new bytes grow 4x per step while every session stays the
same). 800 requests must take at most 4.4x the time of 200, whole process (wall and CPU).
The in-process replay time is recorded beside it: it grows with the bytes too, a few percent
faster than they do at 800 (every resent message is compared with its first copy, which at
270 MB no longer sits in the CPU caches). The 500 MB log (30 sessions,
written on the fly into a temporary folder and deleted after) is opt-in on top of --bench:
PREFIXBENCH_BIG=1; its peak RSS must stay a small fraction of the file.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from prefixbench.workloads.logs.chat_completions import read_chat_completions
from prefixbench.workloads.scripted.interleaved import InterleavedSpec, write_interleaved
from prefixbench.workloads.logs.replay import replay

from tests.bench.peers import load_peers_script

pytestmark = pytest.mark.bench

SIZES = {50: 1, 200: 4, 800: 16}  # requests -> sessions of 50 turns
ROUNDS = 3


def whole_process(log: Path, out: Path) -> tuple[float, float, float]:
    """Best wall s, best CPU s and peak RSS MB of `prefixbench replay LOG` over ROUNDS runs."""
    peers = load_peers_script()
    tool = peers.Tool("scaling", "prefixbench replay", [sys.executable, "-m", "prefixbench", "replay", str(log)])
    for _ in range(ROUNDS):
        peers.run_once(tool, out)
    assert tool.error is None, tool.error
    return min(tool.walls), min(tool.cpus), tool.peak_kb / 1024


def in_process(log: Path) -> float:
    """Best CPU seconds of reading and replaying the log inside this process."""
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.process_time()
        replay(read_chat_completions(log))
        best = min(best, time.process_time() - start)
    return best


def test_replay_scales_linearly(tmp_path, benchmark):
    figures = {}
    for requests, sessions in SIZES.items():
        log = tmp_path / f"peer-{requests}.jsonl"
        size = write_interleaved(log, InterleavedSpec(sessions=sessions))
        wall, cpu, rss = whole_process(log, tmp_path / "stdout")
        figures[requests] = {"mb": round(size / 1e6, 1), "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": round(rss, 1),
                             "in_process_cpu_s": in_process(log)}
    benchmark.pedantic(lambda: replay(read_chat_completions(tmp_path / "peer-200.jsonl")), rounds=1, iterations=1)
    benchmark.extra_info.update({str(k): v for k, v in figures.items()})
    print()
    for requests, row in figures.items():
        print(f"{requests:4d} requests  {row['mb']:6.1f} MB  wall {row['wall_s']:.3f} s  cpu {row['cpu_s']:.3f} s  "
              f"in-process {row['in_process_cpu_s']:.3f} s  peak RSS {row['peak_rss_mb']:.0f} MB")
    assert figures[800]["cpu_s"] <= 4.4 * figures[200]["cpu_s"], figures
    assert figures[800]["wall_s"] <= 4.4 * figures[200]["wall_s"], figures


@pytest.mark.skipif(os.environ.get("PREFIXBENCH_BIG") != "1", reason="writes a 500 MB log: set PREFIXBENCH_BIG=1")
def test_500mb_log_streams_in_bounded_memory(tmp_path, benchmark):
    log = tmp_path / "peer-500mb.jsonl"
    try:
        size = write_interleaved(log, InterleavedSpec(sessions=30))
        wall, cpu, rss = benchmark.pedantic(lambda: whole_process(log, tmp_path / "stdout"), rounds=1, iterations=1)
        benchmark.extra_info.update({"mb": round(size / 1e6), "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": round(rss)})
        print(f"\n{size / 1e6:.0f} MB log: wall {wall:.2f} s, cpu {cpu:.2f} s, peak RSS {rss:.0f} MB")
        assert size >= 490e6
        # Memory follows the distinct content (30 sessions' own messages), not the resent bytes.
        assert rss * 2**20 < 0.25 * size, rss
    finally:
        log.unlink(missing_ok=True)
