"""What ``prefixbench proxy`` adds to a call (run with --bench; needs the proxy extra).

Three processes, as in use: the stand-in provider (tests/unit/proxy/standin.py, Anthropic
Messages streamed, 1 ms between events), ``prefixbench proxy`` in front of it (recording and
auditing every call) and the agents here. Each round sends C concurrent streamed calls of a
growing conversation (C = 1 and 50) directly and then through the proxy; a call's time is from
sending it to the last byte. Added milliseconds = the proxy's percentile minus the direct one
(p50 and p99 over every call of every round), for the whole call and for the first byte.
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
    process = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stream = process.stdout if pattern == "stdout" else process.stderr
    assert stream is not None
    line = stream.readline()
    if not line:
        process.kill()
        raise RuntimeError(f"{args} did not start: {process.stderr.read() if process.stderr else ''}")
    return process, line


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
        via_total, via_first = benchmark.pedantic(lambda: asyncio.run(_rounds(via, concurrency)), rounds=1, iterations=1)
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
    benchmark.extra_info.update({"concurrency": concurrency, "calls": len(via_total), **added, **direct})
    print(f"\nproxy at {concurrency} concurrent streams ({len(via_total)} calls): {added}; direct {direct}")
    lines = (tmp_path / "capture.jsonl").read_text().splitlines()
    assert len(lines) == ROUNDS * concurrency + 1  # every call through the proxy recorded (the warm-up's too)
