"""What ``prefixbench proxy`` adds to a call (run with --bench; needs the proxy extra).

Three processes, as in use: the stand-in provider (tests/unit/proxy/standin.py, Anthropic
Messages streamed, 1 ms between events), ``prefixbench proxy`` in front of it (recording and
auditing every call) and the agents here. Each round sends C concurrent streamed calls of a
growing conversation (C = 1 and 50) directly and then through the proxy; a call's time is from
sending it to the last byte. Added milliseconds = the proxy's percentile minus the direct one
(p50 and p99 over every call of every round), for the whole call and for the first byte.
Wall times on a loaded machine mostly measure the queue for its cores, so the CPU the proxy
process spends per call (and, apart, its live-audit process) is recorded too: that is what the
proxy costs whatever the load.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench
aiohttp = pytest.importorskip("aiohttp", reason="the proxy extra (aiohttp) is not installed: pip install 'prefixbench[proxy]'")

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 20
SYSTEM = "You are a careful coding agent. " * 400


def _spawn(args: list[str], pattern: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # Only the stream with the port is a pipe (read once); the other output goes to a file, so a
    # full pipe never blocks the process under test.
    log = open(os.devnull, "w")
    pipes = {"stdout": subprocess.PIPE, "stderr": log} if pattern == "stdout" else {"stdout": log, "stderr": subprocess.PIPE}
    process = subprocess.Popen(args, cwd=ROOT, env=env, text=True, **pipes)
    stream = process.stdout if pattern == "stdout" else process.stderr
    assert stream is not None
    line = stream.readline()
    if not line:
        process.kill()
        raise RuntimeError(f"{args} did not start")
    return process, line


def _cpu_ms(pid: int) -> float:
    """User + system CPU of a process and its children so far (Linux /proc), in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


def _children_cpu_ms(pid: int) -> float:
    """CPU of the live children of ``pid`` (the proxy's audit process)."""
    total = 0.0
    for child in Path(f"/proc/{pid}/task").glob("*/children"):
        for kid in child.read_text().split():
            total += _cpu_ms(int(kid))
    return total


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _one(session: aiohttp.ClientSession, base: str, body: bytes) -> tuple[float, float]:
    start = time.perf_counter()
    async with session.post(base + "/v1/messages", data=body, headers={"content-type": "application/json", "x-api-key": "sk-bench"}) as response:
        first = None
        async for _ in response.content.iter_any():
            first = first or time.perf_counter()
    end = time.perf_counter()
    return (end - start) * 1000, ((first or end) - start) * 1000


async def _rounds(base: str, concurrency: int) -> tuple[list[float], list[float]]:
    totals, firsts = [], []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        for n in range(ROUNDS):
            bodies = [json.dumps({"model": "claude-sonnet-4-20250514", "max_tokens": 64, "stream": True,
                                  "system": [{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
                                  "messages": [{"role": "user", "content": f"agent {c} step {k}"} for k in range(n + 1)]}).encode()
                      for c in range(concurrency)]
            for total, first in await asyncio.gather(*(_one(session, base, body) for body in bodies)):
                totals.append(total)
                firsts.append(first)
    return totals, firsts


async def _warm(*bases: str) -> None:
    body = json.dumps({"model": "claude-sonnet-4-20250514", "max_tokens": 8, "stream": True, "messages": [{"role": "user", "content": "hi"}]}).encode()
    async with aiohttp.ClientSession() as session:
        for base in bases:
            await _one(session, base, body)


@pytest.mark.parametrize("concurrency", [1, 50])
def test_proxy_added_latency(tmp_path, benchmark, concurrency):
    upstream, port_line = _spawn([sys.executable, "-m", "tests.unit.proxy.standin", "0.001"], "stdout")
    upstream_url = f"http://127.0.0.1:{port_line.strip()}"
    proxy, banner = _spawn([sys.executable, "-m", "prefixbench", "proxy", "--listen", "127.0.0.1:0", "--upstream", upstream_url,
                            "--out", str(tmp_path / "capture.jsonl")], "stderr")
    via = banner.split()[2]
    try:
        asyncio.run(_warm(upstream_url, via))  # one call each way first (connections, imports)
        direct_total, direct_first = asyncio.run(_rounds(upstream_url, concurrency))
        cpu_before, audit_before = _cpu_ms(proxy.pid), _children_cpu_ms(proxy.pid)
        via_total, via_first = benchmark.pedantic(lambda: asyncio.run(_rounds(via, concurrency)), rounds=1, iterations=1)
        proxy_cpu = (_cpu_ms(proxy.pid) - cpu_before) / len(via_total)
        time.sleep(1.0)  # let the audit process catch up before reading its CPU
        audit_cpu = (_children_cpu_ms(proxy.pid) - audit_before) / len(via_total)
    finally:
        proxy.terminate()
        upstream.terminate()
        proxy.wait(30)
        upstream.wait(30)
    added = {
        f"added_{what}_p{int(q * 100)}_ms": round(_percentile(v, q) - _percentile(d, q), 2)
        for what, v, d in (("total", via_total, direct_total), ("first_byte", via_first, direct_first))
        for q in (0.5, 0.99)
    }
    direct = {f"direct_total_p{int(q * 100)}_ms": round(_percentile(direct_total, q), 2) for q in (0.5, 0.99)}
    cpu = {"proxy_cpu_ms_per_call": round(proxy_cpu, 2), "live_audit_cpu_ms_per_call": round(audit_cpu, 2)}
    benchmark.extra_info.update({"concurrency": concurrency, "calls": len(via_total), **added, **direct, **cpu})
    print(f"\nproxy at {concurrency} concurrent streams ({len(via_total)} calls): {added}; direct {direct}; {cpu}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    lines = (tmp_path / "capture.jsonl").read_text().splitlines()
    assert len(lines) == ROUNDS * concurrency + 1  # every call through the proxy recorded (the warm-up's too)
