"""``prefixbench proxy``: a local recording reverse proxy between an agent and its provider.

Built on aiohttp (the ``proxy`` extra), imported here only: one library that is both the
server the agent talks to and the client that talks to the provider, streaming both ways
(``iter_any`` hands over each chunk as it arrives, ``StreamResponse.write`` sends it on), with
connection pooling and no automatic decompression when asked, so the bytes pass through as
they came. It is maintained by the aio-libs group, released often, and is the async HTTP
stack of much of the Python ecosystem.

Per call: the request body is read, sent upstream unchanged; the response's status, headers
and body chunks go back to the agent as they arrive; once the call ends (or either side drops
it) a worker thread appends one capture line (:mod:`prefixbench.reports.proxy_record`) with
one write; a separate process (:mod:`prefixbench.reports.proxy_audit`) follows the file, audits
each call and prints its line. The event loop never waits for either.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from prefixbench.reports.proxy_options import parse_listen, refuse_another_log, resolve_upstream
from prefixbench.reports.proxy_record import capture_line, capture_record, forwarded, redact_url, scrub
from prefixbench.simulator.errors import UserError

try:
    import aiohttp
    from aiohttp import web
    from yarl import URL
except ImportError:  # pragma: no cover - the CLI checks first and says which extra to install
    aiohttp = None  # type: ignore[assignment]

#: Headers aiohttp's client would add on its own; left to the agent (it sends what it sends).
_NO_AUTO_HEADERS = ("User-Agent", "Accept", "Accept-Encoding", "Content-Type")
#: Errors of a connection the other side closed.
_GONE = (ConnectionError,)


@dataclass
class _Call:
    """What the proxy saw of one call, handed to the writer thread when the call ends."""

    method: str
    url: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    sent: float
    status: int | None = None
    response_headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)
    answered: float = 0.0
    note: dict[str, object] = field(default_factory=dict)


class Proxy:
    """The server, its upstream session, the capture file and the live audit."""

    def __init__(self, upstream: str, out: Path, host: str = "127.0.0.1", port: int = 8787,
                 stdout: TextIO | None = None, stderr: TextIO | None = None) -> None:
        if aiohttp is None:
            raise UserError("prefixbench proxy needs aiohttp: pip install 'prefixbench[proxy]'")
        self.upstream = upstream.rstrip("/")
        self.out = out
        self.host, self.port = host, port
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.calls = 0
        self.unanswered = 0  # calls the upstream never answered (unreachable): a capture audit cannot read alone
        self.writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="prefixbench-proxy-writer")
        self.auditor: subprocess.Popen | None = None
        self.relay: threading.Thread | None = None
        self.pending: set[asyncio.Future] = set()
        self.fd: int | None = None
        self.session: aiohttp.ClientSession | None = None
        self.runner: web.AppRunner | None = None

    async def start(self) -> int:
        """Open the capture, the upstream session and the listening socket; the port listened on."""
        refuse_another_log(self.out)
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise UserError(f"--out {self.out}: cannot open for appending ({exc.strerror or exc})") from None
        self._start_auditor(os.fstat(self.fd).st_size)
        for name in ("aiohttp.access", "aiohttp.server", "aiohttp.web", "aiohttp.client", "aiohttp.internal"):
            quiet = logging.getLogger(name)
            quiet.addHandler(logging.NullHandler())
            quiet.propagate = False  # the proxy reports its own errors, one line each
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(total=None, connect=30, sock_read=None),
            auto_decompress=False,
            skip_auto_headers=_NO_AUTO_HEADERS,
            trust_env=True,  # HTTPS_PROXY / NO_PROXY for the way out, as the agent itself would
        )
        app = web.Application(client_max_size=1 << 34)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self.runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self.runner.setup()
        site = web.TCPSite(self.runner, self.host, self.port, reuse_address=True)
        try:
            await site.start()
        except OSError as exc:
            await self.stop()
            raise UserError(f"--listen {self.host}:{self.port}: {exc.strerror or exc}") from None
        sockets = site._server.sockets if site._server is not None else ()  # type: ignore[attr-defined]
        if sockets:
            self.port = sockets[0].getsockname()[1]
        return self.port

    async def stop(self, finish_audit: bool = False) -> None:
        """Stop listening, finish the calls in flight and every pending capture line; the live
        lines not yet printed are dropped unless ``finish_audit`` (the capture has those calls)."""
        if self.runner is not None:
            await self.runner.cleanup()
            self.runner = None
        if self.pending:
            await asyncio.gather(*self.pending, return_exceptions=True)
        if self.session is not None:
            await self.session.close()
            self.session = None
        self.writer.shutdown(wait=True)  # every capture line is written
        if self.auditor is not None:
            assert self.auditor.stdin is not None
            if finish_audit:
                self.auditor.stdin.close()  # it audits the rest of the file, then ends
            else:
                self.auditor.terminate()  # the live lines still to come are dropped; the capture has them
            await asyncio.to_thread(self.auditor.wait)
            if self.relay is not None:
                await asyncio.to_thread(self.relay.join)
            self.auditor = None
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        assert self.session is not None
        body = await request.read()
        url = self.upstream + request.raw_path
        headers = forwarded(_pairs(request.raw_headers))
        call = _Call(request.method, url, headers, body, time.time())
        try:
            upstream = await self.session.request(
                request.method, URL(url, encoded=True), headers=headers,
                data=body if body or request.method not in ("GET", "HEAD") else None,
                allow_redirects=False,
            )
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            reason = scrub(f"upstream unreachable: {type(exc).__name__}: {exc}", url, headers)
            call.note["upstream_error"] = reason
            call.answered = time.time()
            self._finish(call)
            # No provider answer exists to pass on: the agent gets a 502 naming the cause.
            return web.Response(status=502, text=f"prefixbench proxy: {reason}\n")
        response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        try:
            return await self._relay(request, upstream, response, call)
        finally:
            upstream.release() if call.note.get("complete") else upstream.close()
            call.answered = time.time()
            self._finish(call)

    async def _relay(self, request: web.Request, upstream: aiohttp.ClientResponse, response: web.StreamResponse, call: _Call) -> web.StreamResponse:
        """Stream the upstream's answer to the agent, chunk by chunk, recording each chunk."""
        call.status = upstream.status
        call.response_headers = _pairs(upstream.raw_headers)
        for name, value in forwarded(call.response_headers):
            response.headers.add(name, value)
        length = upstream.headers.get("Content-Length")
        chunked = "chunked" in upstream.headers.get("Transfer-Encoding", "").lower()
        if length is not None and not chunked and length.isascii() and length.isdigit():
            response.content_length = int(length)
        agent_gone = False
        try:
            await response.prepare(request)
        except _GONE:
            agent_gone = True
        try:
            async for chunk in upstream.content.iter_any():
                call.chunks.append(chunk)
                if agent_gone:
                    break
                try:
                    await response.write(chunk)
                except _GONE:
                    agent_gone = True
                    break  # the agent hung up: hang up on the provider too, as a direct call would
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            call.note["upstream_error"] = scrub(f"upstream dropped the stream: {type(exc).__name__}: {exc}", call.url, call.request_headers)
            if request.transport is not None:
                request.transport.abort()  # the agent sees the stream cut short, as it was
            return response
        if agent_gone:
            call.note["client_disconnected"] = True
            return response
        call.note["complete"] = True
        try:
            await response.write_eof()
        except _GONE:
            call.note["client_disconnected"] = True
        return response

    def _finish(self, call: _Call) -> None:
        """Hand the call to the writer thread (the event loop does not wait for it)."""
        future = asyncio.get_running_loop().run_in_executor(self.writer, self._write, call)
        self.pending.add(future)
        future.add_done_callback(self.pending.discard)

    def _write(self, call: _Call) -> None:
        """Append the call's capture line (the writer thread); the audit process takes it from there."""
        self.calls += 1
        number = self.calls
        note = {key: value for key, value in call.note.items() if key != "complete"}
        note["upstream"] = redact_url(self.upstream)
        record = capture_record(
            method=call.method, url=call.url, request_headers=call.request_headers, request_body=call.request_body,
            sent=call.sent, status=call.status, response_headers=call.response_headers,
            response_body=b"".join(call.chunks), answered=call.answered or time.time(), note=note,
        )
        try:
            assert self.fd is not None
            os.write(self.fd, capture_line(record))  # one append per call: a crash loses no earlier line
        except OSError as exc:
            self._say(self.stderr, f"#{number} capture not written: {exc.strerror or exc}")
        if call.status is None:
            self.unanswered += 1
        if "upstream_error" in note:
            self._say(self.stderr, f"#{number} {call.method} {redact_url(call.url)}: {note['upstream_error']}")
        if note.get("client_disconnected"):
            self._say(self.stderr, f"#{number} the agent disconnected mid-response; recorded what had arrived")

    def _start_auditor(self, offset: int) -> None:
        """The live audit's process (:mod:`prefixbench.reports.proxy_audit`), following the
        capture from ``offset``; a thread copies its lines to :attr:`stdout`."""
        self.auditor = subprocess.Popen(
            [sys.executable, "-m", "prefixbench.reports.proxy_audit", str(self.out), str(offset)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        source = self.auditor.stdout
        assert source is not None

        def copy() -> None:
            for raw in source:
                self._say(self.stdout, raw.decode("utf-8", errors="replace").rstrip("\n"))

        self.relay = threading.Thread(target=copy, name="prefixbench-proxy-live", daemon=True)
        self.relay.start()

    def _say(self, stream: TextIO, line: str) -> None:
        # One line whatever the detail holds: unprintable characters escaped (as cli.one_line).
        shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in line)
        try:
            stream.write(shown + "\n")
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed terminal must not stop the recording


def _pairs(raw: tuple[tuple[bytes, bytes], ...]) -> list[tuple[str, str]]:
    """Raw header pairs as text, in order, names as sent (HTTP header bytes are Latin-1)."""
    return [(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw]


#: What each named ``--upstream`` expects the agent's base URL to be (``{base}`` the proxy's
#: address); docs/proxy.md's table says the same (tests/unit/proxy/test_proxy_cli.py checks).
AGENT_BASE_URLS = {
    "anthropic": "ANTHROPIC_BASE_URL={base}",
    "openai": "OPENAI_BASE_URL={base}/v1",
    "deepseek": "OPENAI_BASE_URL={base}",
    "gemini": "OPENAI_BASE_URL={base}/v1beta/openai",
}

#: Exit status after SIGTERM: a clean stop, 128 + the signal's number, as after Ctrl-C (130).
TERMINATED = 128 + signal.SIGTERM


def agent_hint(upstream: str, base: str) -> str:
    """The start-up line's advice: the base-URL variable that fits ``upstream`` only (an
    ``OPENAI_BASE_URL`` offered in front of api.anthropic.com would send OpenAI calls there)."""
    from prefixbench.simulator.providers import PROVIDERS, speaks_messages_at

    for name, rules in PROVIDERS.items():
        if rules.api_base and rules.api_base.rstrip("/") == upstream.rstrip("/") and name in AGENT_BASE_URLS:
            return f"point the agent at it: {AGENT_BASE_URLS[name].format(base=base)}"
    if speaks_messages_at(upstream):  # an Anthropic-compatible API (DeepSeek's)
        return f"point the agent at it: ANTHROPIC_BASE_URL={base}"
    return (f"point the agent's base URL at {base} (+ the part of the path its SDK leaves out), "
            f"the variable of the API {redact_url(upstream)} speaks")


def stopped_line(calls: int, out: Path, how: str, unanswered: int = 0) -> str:
    """The last line: how the proxy stopped, what it recorded, and the audit to run when there
    is something to audit (an empty capture is not: ``audit`` would exit 2 on it; nor is one of
    calls the upstream never answered, ``unanswered`` of the ``calls``: no response, no usage)."""
    if calls and unanswered >= calls:
        return (f"prefixbench proxy: stopped ({how}) after {calls:,} call{'' if calls == 1 else 's'}, none answered by the "
                f"upstream (the errors above): no usage for audit to read in them")
    if calls:
        return f"prefixbench proxy: stopped ({how}) after {calls:,} call{'' if calls == 1 else 's'}; audit them with: prefixbench audit {out}"
    try:
        earlier = out.stat().st_size > 0
    except OSError:
        earlier = False
    if earlier:
        return f"prefixbench proxy: stopped ({how}); no call was recorded this time (the earlier ones: prefixbench audit {out})"
    return f"prefixbench proxy: stopped ({how}); no call was recorded, {out} is empty"


def run_proxy_command(args: object) -> int:
    """``prefixbench proxy``: serve until Ctrl-C (exit 130, as any command) or SIGTERM (exit
    143); either way calls in flight finish and every recorded call is kept."""
    upstream = resolve_upstream(args.upstream)  # type: ignore[attr-defined]
    host, port = parse_listen(args.listen)  # type: ignore[attr-defined]
    proxy = Proxy(upstream, args.out, host, port)  # type: ignore[attr-defined]
    how = asyncio.run(_serve(proxy))
    if how == "Ctrl-C":
        raise KeyboardInterrupt  # the command line's "interrupted", exit 130, as for any command
    return TERMINATED if how == "SIGTERM" else 0


async def _serve(proxy: Proxy) -> str:
    """Serve until stopped; how it was stopped (``SIGTERM`` or ``Ctrl-C``).

    Both signals only set an event the server waits on, so the stop is the same whenever the
    signal comes (a Ctrl-C that cancelled the task instead could land inside the clean-up and
    skip the last line); a second Ctrl-C while stopping interrupts at once."""
    stopped = asyncio.Event()
    how: list[str] = []
    loop = asyncio.get_running_loop()

    def stop(name: str, sig: int) -> None:
        how.append(name)
        stopped.set()
        if sig == signal.SIGINT:
            loop.remove_signal_handler(signal.SIGINT)  # the next Ctrl-C: Python's own, at once

    try:  # before the start-up line: a signal sent once it is read stops the proxy cleanly
        loop.add_signal_handler(signal.SIGTERM, stop, "SIGTERM", signal.SIGTERM)
        loop.add_signal_handler(signal.SIGINT, stop, "Ctrl-C", signal.SIGINT)
    except (NotImplementedError, RuntimeError):  # pragma: no cover - not on this platform
        pass
    port = await proxy.start()
    shown = f"[{proxy.host}]" if ":" in proxy.host else proxy.host
    base = f"http://{shown}:{port}"
    print(
        f"prefixbench proxy: {base} -> {redact_url(proxy.upstream)}; capture {proxy.out}\n"
        f"  {agent_hint(proxy.upstream, base)}; Ctrl-C stops",
        file=sys.stderr,
        flush=True,
    )
    try:
        await stopped.wait()
    finally:
        await proxy.stop(finish_audit=True)  # the live lines of every recorded call, then the end
        print(stopped_line(proxy.calls, proxy.out, how[0] if how else "Ctrl-C", proxy.unanswered), file=sys.stderr, flush=True)
    return how[0] if how else "Ctrl-C"
