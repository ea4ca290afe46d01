"""prefixbench proxy end to end: agent -> proxy -> stand-in provider (tests/unit/proxy/standin.py).

Each conversation is sent twice, directly to one stand-in and through the proxy to a twin:
the agent must get the same bytes either way. The capture is then audited (exact totals, the
body-diff cause of the planted miss) and every output is searched for the planted API key.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

pytest.importorskip("aiohttp", reason="the proxy extra (aiohttp) is not installed: pip install 'prefixbench[proxy]'")

from prefixbench.workloads.audit.core import run_audit  # noqa: E402
from tests.unit.proxy.rig import PLANTED_KEY, call, comparable, rig  # noqa: E402

SYSTEM = "You are a careful coding agent. " * 400  # about 3,200 tokens: above every cache minimum
TOOLS = [{"name": "Read", "description": "read a file", "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]


def anthropic_turns(stream: bool) -> list[dict]:
    """Four calls: a cold start, a call that extends it, one whose system prompt changed (a
    miss the body diff names), and one that extends that."""
    user = {"role": "user", "content": [{"type": "text", "text": "fix the bug in main.py"}]}
    reply = {"role": "assistant", "content": [{"type": "text", "text": "Reading it."}]}
    more = {"role": "user", "content": [{"type": "text", "text": "and add a test"}]}

    def body(system: str, messages: list[dict]) -> dict:
        return {"model": "claude-sonnet-4-20250514", "max_tokens": 1024, "stream": stream,
                "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
                "tools": TOOLS, "messages": messages}

    changed = SYSTEM + " Today is 2026-12-03."
    return [body(SYSTEM, [user]), body(SYSTEM, [user, reply, more]), body(changed, [user, reply, more]),
            body(changed, [user, reply, more, reply, more])]


def openai_turns(path: str, stream: bool) -> list[dict]:
    """Three calls: cold, extended, then the tool list changed (a miss)."""
    tools = [{"type": "function", "name": "read", "description": "read a file " * 300, "parameters": {"type": "object"}}]
    other = [{**tools[0], "description": "read a file, any file " * 300}]
    if path == "/v1/responses":
        def body(tl: list, n: int) -> dict:
            items = [{"role": "user", "content": f"step {i}"} for i in range(n)]
            return {"model": "gpt-5", "stream": stream, "instructions": SYSTEM, "tools": tl, "input": items, "prompt_cache_key": "session-1"}
    else:
        def body(tl: list, n: int) -> dict:
            chat_tools = [{"type": "function", "function": {k: v for k, v in t.items() if k != "type"}} for t in tl]
            messages = [{"role": "system", "content": SYSTEM}] + [{"role": "user", "content": f"step {i}"} for i in range(n)]
            extra = {"stream_options": {"include_usage": True}} if stream else {}
            return {"model": "gpt-5", "stream": stream, **extra, "tools": chat_tools, "messages": messages}
    return [body(tools, 1), body(tools, 2), body(other, 3)]


async def _both(tmp_path: Path, path: str, bodies: list[dict]):
    """Send every body directly and through the proxy; return the replies and the rig."""
    async with rig(tmp_path) as r:
        pairs = []
        for body in bodies:
            raw = json.dumps(body).encode()
            pairs.append((await call(r.direct, path, raw), await call(r.via, path, raw)))
        sent_upstream = [seen["body"] for seen in r.behind.seen]
    return pairs, r, sent_upstream


def _assert_identical(pairs, bodies, sent_upstream) -> None:
    for direct, via in pairs:
        assert via.status == direct.status
        assert via.body == direct.body  # every byte the agent reads
        assert comparable(via.headers) == comparable(direct.headers)
    assert sent_upstream == [json.dumps(body).encode() for body in bodies]  # every byte the provider reads


def _no_key_anywhere(r, tmp_path: Path) -> None:
    assert PLANTED_KEY not in r.stdout.getvalue() and PLANTED_KEY not in r.stderr.getvalue()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert PLANTED_KEY.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "json"])
def test_anthropic_messages_pass_through_and_audit(tmp_path: Path, stream: bool) -> None:
    bodies = anthropic_turns(stream)
    pairs, r, sent = asyncio.run(_both(tmp_path, "/v1/messages", bodies))
    _assert_identical(pairs, bodies, sent)
    if stream:
        assert pairs[0][1].body.startswith(b"event: message_start\n") and b"event: message_stop" in pairs[0][1].body
    result = run_audit([r.out])
    # Exact totals: what the stand-in reported, call by call.
    usages = []
    for _, via in pairs:
        if stream:
            start = next(json.loads(line[5:]) for line in via.body.decode().splitlines() if line.startswith("data:"))
            usages.append(start["message"]["usage"])
        else:
            usages.append(json.loads(via.body)["usage"])
    assert result.totals.requests == 4
    assert result.totals.cache_read == sum(u["cache_read_input_tokens"] for u in usages)
    assert result.totals.cache_write == sum(u["cache_creation_input_tokens"] for u in usages)
    assert result.totals.input == sum(u["input_tokens"] for u in usages)
    assert result.totals.output == 4 * 6
    miss = result.rows[2]
    assert (miss.cause, miss.evidence) == ("system-changed", "body-diff"), miss
    assert miss.lost_tokens == usages[1]["cache_read_input_tokens"] + usages[1]["cache_creation_input_tokens"]
    assert miss.lost_usd is not None and miss.lost_usd > 0
    assert [row.cause for row in result.rows] == ["cold-start", None, "system-changed", None]
    # The live lines say the same, one per call.
    lines = r.stdout.getvalue().splitlines()
    assert len(lines) == 4, lines
    assert "MISS system-changed (body-diff): system @ byte" in lines[2] and f"lost ${miss.lost_usd:.4f}" in lines[2]
    assert lines[1].startswith("#2 main  read ") and "MISS" not in lines[1]
    _no_key_anywhere(r, tmp_path)


@pytest.mark.parametrize("path", ["/v1/responses", "/v1/chat/completions"], ids=["responses", "chat"])
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "json"])
def test_openai_calls_pass_through_and_audit(tmp_path: Path, path: str, stream: bool) -> None:
    bodies = openai_turns(path, stream)
    pairs, r, sent = asyncio.run(_both(tmp_path, path, bodies))
    _assert_identical(pairs, bodies, sent)
    result = run_audit([r.out])
    assert result.totals.requests == 3
    cached = []
    for _, via in pairs:
        texts = [line[5:] for line in via.body.decode().splitlines() if line.startswith("data:")] if stream else [via.body.decode()]
        for text in texts:
            data = json.loads(text) if text.strip() != "[DONE]" else {}
            usage = (data.get("response") or {}).get("usage") or data.get("usage")
            if usage:
                found = usage
        cached.append(found.get("input_tokens_details", found.get("prompt_tokens_details"))["cached_tokens"])
    assert cached[0] == 0 and cached[1] > 0 and cached[2] == 0
    assert result.totals.cache_read == sum(cached)
    assert result.rows[2].lost_tokens == result.rows[2].expected_cache_read > 0
    # Both bodies are parsed (a Responses body in the chat shape): the diff names the change.
    assert (result.rows[2].cause, result.rows[2].evidence) == ("tools-changed", "body-diff")
    lines = r.stdout.getvalue().splitlines()
    assert len(lines) == 3 and "MISS" in lines[2], lines
    _no_key_anywhere(r, tmp_path)


def test_stream_reaches_the_agent_before_the_provider_finishes(tmp_path: Path) -> None:
    """No buffering: the first event is with the agent while the stand-in still holds the rest."""

    async def scenario() -> tuple[bytes, bytes]:
        import aiohttp

        async with rig(tmp_path) as r:
            r.behind.release = asyncio.Event()
            body = json.dumps(anthropic_turns(True)[0]).encode()
            async with aiohttp.ClientSession() as session:
                async with session.post(r.via + "/v1/messages", data=body, headers={"x-standin-hold": "1"}) as response:
                    first = await asyncio.wait_for(response.content.readuntil(b"\n\n"), timeout=10)
                    r.behind.release.set()
                    rest = await response.content.read()
        return first, rest

    first, rest = asyncio.run(scenario())
    assert first.startswith(b"event: message_start\n")
    assert rest.endswith(b'data: {"type":"message_stop"}\n\n')


def test_agent_disconnect_mid_stream(tmp_path: Path) -> None:
    """The agent hangs up after the first event: the proxy hangs up on the provider, records
    what arrived (message_start carries the input usage), and serves the next call."""

    async def scenario():
        import aiohttp

        async with rig(tmp_path) as r:
            r.behind.release = asyncio.Event()
            bodies = anthropic_turns(True)
            session = aiohttp.ClientSession()
            response = await session.post(r.via + "/v1/messages", data=json.dumps(bodies[0]).encode(), headers={"x-standin-hold": "1"})
            await response.content.readuntil(b"\n\n")
            response.close()  # the agent is gone
            await session.close()
            for _ in range(200):  # the proxy notices on its next write
                await asyncio.sleep(0.02)
                if not r.behind.release.is_set():
                    r.behind.release.set()
                if r.proxy.calls:
                    break
            after = await call(r.via, "/v1/messages", json.dumps(bodies[1]).encode())
        return r, after

    r, after = asyncio.run(scenario())
    assert after.status == 200
    records = [json.loads(line) for line in r.out.read_text().splitlines()]
    assert len(records) == 2
    first = records[0]
    assert first["prefixbench_proxy"]["client_disconnected"] is True
    assert first["response"]["body_raw"].startswith("event: message_start")
    assert "the agent disconnected" in r.stderr.getvalue()
    result = run_audit([r.out])
    assert result.totals.requests == 2  # the cut-short call still counts: its input usage arrived
    _no_key_anywhere(r, tmp_path)


def test_upstream_5xx_passes_through(tmp_path: Path) -> None:
    async def scenario():
        async with rig(tmp_path) as r:
            raw = json.dumps(anthropic_turns(False)[0]).encode()
            direct = await call(r.direct, "/v1/messages", raw, {"x-standin-fail": "529"})
            via = await call(r.via, "/v1/messages", raw, {"x-standin-fail": "529"})
        return r, direct, via

    r, direct, via = asyncio.run(scenario())
    assert via.status == direct.status == 529
    assert via.body == direct.body and b"overloaded_error" in via.body
    record = json.loads(r.out.read_text())
    assert record["response"]["status_code"] == 529 and record["response"]["body"]["error"]["type"] == "overloaded_error"
    assert r.stdout.getvalue().startswith("#1 HTTP 529 passed through: HTTP 529: not served")
    _no_key_anywhere(r, tmp_path)


def test_upstream_unreachable_is_a_502_and_a_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"

    async def scenario():
        async with rig(tmp_path, upstream=dead) as r:
            reply = await call(r.via, "/v1/messages", json.dumps(anthropic_turns(False)[0]).encode())
        return r, reply

    r, reply = asyncio.run(scenario())
    assert reply.status == 502 and b"upstream unreachable" in reply.body
    record = json.loads(r.out.read_text())
    assert "response" not in record and "upstream unreachable" in record["prefixbench_proxy"]["upstream_error"]
    assert "upstream unreachable" in r.stderr.getvalue()
    _no_key_anywhere(r, tmp_path)
