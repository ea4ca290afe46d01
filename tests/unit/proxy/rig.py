"""Shared test rig: the stand-in upstream and the proxy in one event loop, and a client."""

from __future__ import annotations

import contextlib
import io
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiohttp
from aiohttp import web

from prefixbench.reports.proxy import Proxy
from tests.unit.proxy.standin import StandIn

#: A key planted in every test call: it must appear in no output of the proxy.
PLANTED_KEY = "sk-ant-api03-PLANTED-deadbeef0123456789-secret"


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


@dataclass
class Rig:
    direct: str  # a twin stand-in, called directly
    via: str  # the proxy, in front of its own stand-in
    twin: StandIn
    behind: StandIn
    proxy: Proxy
    out: Path
    stdout: io.StringIO
    stderr: io.StringIO


@contextlib.asynccontextmanager
async def rig(tmp_path: Path, upstream: str | None = None) -> AsyncIterator[Rig]:
    twin, behind = StandIn(), StandIn()
    runner_a, direct = await serve(twin.app())
    runner_b, base_b = await serve(behind.app())
    out = tmp_path / "capture.jsonl"
    stdout, stderr = io.StringIO(), io.StringIO()
    proxy = Proxy(upstream or base_b, out, "127.0.0.1", 0, stdout=stdout, stderr=stderr)
    port = await proxy.start()
    try:
        yield Rig(direct, f"http://127.0.0.1:{port}", twin, behind, proxy, out, stdout, stderr)
    finally:
        await proxy.stop(finish_audit=True)
        await runner_a.cleanup()
        await runner_b.cleanup()


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    first_chunk_at: int  # how many body bytes had arrived when the first chunk came


async def call(base: str, path: str, body: bytes, headers: dict[str, str] | None = None) -> Reply:
    """POST ``body`` and read the answer as raw bytes (nothing decompressed)."""
    sent = {"content-type": "application/json", "x-api-key": PLANTED_KEY, "authorization": f"Bearer {PLANTED_KEY}", **(headers or {})}
    async with aiohttp.ClientSession(auto_decompress=False) as session:
        async with session.post(base + path, data=body, headers=sent) as response:
            chunks = [chunk async for chunk in response.content.iter_any()]
            return Reply(response.status, [(k, v) for k, v in response.headers.items()], b"".join(chunks), len(chunks[0]) if chunks else 0)


def comparable(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Headers as compared between a direct call and one through the proxy: all but the clock's
    (``Date``), names in any case; the order of different names is not part of HTTP's meaning
    (RFC 9110 5.3), repeated names keep theirs (a stable sort)."""
    return sorted(((k.lower(), v) for k, v in headers if k.lower() != "date"), key=lambda kv: kv[0])
