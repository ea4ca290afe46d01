"""Fuzz every audit importer: any input is either imported or refused with one UserError line.

Records start from a valid template of each format whose fields hypothesis replaces with
arbitrary JSON; raw bytes are fuzzed too. Small example counts in the default run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prefixbench.reports.audit import audit_csv, audit_json, audit_table
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)

USAGE = {"input_tokens": 3, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 100, "output_tokens": 9}
TEMPLATES: dict[str, list[dict]] = {
    "claude-code": [
        {"parentUuid": None, "isSidechain": False, "sessionId": "s", "version": "1.0.98", "type": "user", "uuid": "u1",
         "timestamp": "2025-09-03T00:00:00.000Z", "message": {"role": "user", "content": "hi"}},
        {"parentUuid": "u1", "isSidechain": False, "sessionId": "s", "version": "1.0.98", "type": "assistant", "uuid": "u2",
         "requestId": "r1", "timestamp": "2025-09-03T00:00:01.000Z",
         "message": {"model": "claude-sonnet-4-20250514", "role": "assistant", "content": [], "usage": USAGE}},
    ],
    "http-capture": [
        {"request": {"timestamp": 1748554704.0, "url": "https://api.anthropic.com/v1/messages",
                     "body": {"model": "claude-sonnet-4-20250514", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}},
         "response": {"timestamp": 1748554705.0, "status_code": 200, "body": {"usage": USAGE}}},
    ],
    "openai-capture": [
        {"request": {"timestamp": 1748554704.0, "url": "https://api.openai.com/v1/responses", "body": {"model": "gpt-5.1", "input": "hi"}},
         "response": {"timestamp": 1748554705.0, "status_code": 200, "body_raw": "event: response.completed\ndata: "
                      + json.dumps({"type": "response.completed", "response": {"usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 1024}, "output_tokens": 3}}}) + "\n\n"}},
    ],
    "pi-tree": [
        {"type": "session", "version": 3, "id": "p", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"},
        {"type": "message", "id": "e1", "parentId": None, "timestamp": "2025-12-09T00:53:30.825Z", "message": {"role": "user", "content": "hi", "timestamp": 1765233665000}},
        {"type": "message", "id": "e2", "parentId": "e1", "timestamp": "2025-12-09T00:53:31.825Z", "message": {"role": "assistant", "provider": "anthropic",
         "model": "claude-opus-4-5", "timestamp": 1765233665294, "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 4400}}},
        {"type": "message", "id": "e3", "parentId": "e1", "timestamp": "2025-12-09T00:54:31.825Z", "message": {"role": "assistant", "provider": "anthropic",
         "model": "claude-opus-4-5", "timestamp": 1765233725294, "usage": {"input": 1, "output": 2, "cacheRead": 4400, "cacheWrite": 40}}},
    ],
    "codex": [
        {"timestamp": "2025-11-17T21:30:28.664Z", "type": "turn_context", "payload": {"model": "gpt-5.1-codex", "effort": "high"}},
        {"timestamp": "2025-11-17T21:30:29.664Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 2000, "cached_input_tokens": 1024, "output_tokens": 5},
            "last_token_usage": {"input_tokens": 2000, "cached_input_tokens": 1024, "output_tokens": 5}}}},
    ],
    "codex-app-server": [
        {"id": 2, "result": {"thread": {"id": "t", "cliVersion": "0.150.2"}, "model": "gpt-5.5", "modelProvider": "openai"}},
        {"method": "thread/tokenUsage/updated", "params": {"threadId": "t", "tokenUsage": {
            "total": {"inputTokens": 2000, "cachedInputTokens": 1024, "outputTokens": 5},
            "last": {"inputTokens": 2000, "cachedInputTokens": 1024, "outputTokens": 5}}}},
    ],
    "pi": [
        {"type": "session", "id": "p", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x", "provider": "anthropic", "modelId": "m", "thinkingLevel": "off"},
        {"type": "message", "timestamp": "2025-12-09T00:53:30.825Z", "message": {"role": "assistant", "provider": "anthropic",
         "model": "claude-opus-4-5", "timestamp": 1765233665294, "usage": {"input": 1, "output": 2, "cacheRead": 3000, "cacheWrite": 40}}},
    ],
    "mooncake": [
        {"timestamp": 0, "input_length": 1100, "output_length": 5, "hash_ids": [1, 2, 3]},
        # kvcache-simulator's variant: string ids, a block size, per-block token counts.
        {"block_size": 512, "hash_ids": ["a1", "b2"], "input_length": 751, "block_tokens": [512, 239]},
    ],
    "chat-completions": [{"model": "gpt-5.1", "messages": [{"role": "user", "content": "hi"}]}],
    # claude -p --output-format stream-json --include-partial-messages through a gateway that counts
    # at the end: the assistant line's usage is zero, the message_delta's holds the call's counts.
    "claude-code-stream": [
        {"type": "system", "subtype": "init", "session_id": "r", "uuid": "i", "model": "claude-sonnet-4-5", "claude_code_version": "2.1.190"},
        {"type": "stream_event", "session_id": "r", "parent_tool_use_id": None, "uuid": "e1", "event": {"type": "message_start", "message": {
            "id": "m1", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "usage": {"input_tokens": 0, "output_tokens": 0}}}},
        {"type": "assistant", "session_id": "r", "parent_tool_use_id": None, "uuid": "a1", "message": {
            "id": "m1", "role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "x"}],
            "usage": {"input_tokens": 0, "output_tokens": 0}}},
        {"type": "stream_event", "session_id": "r", "parent_tool_use_id": None, "uuid": "e2", "event": {"type": "message_delta", "delta": {},
            "usage": {"input_tokens": 5, "output_tokens": 3, "cache_read_input_tokens": 4000, "cache_creation_input_tokens": 10}}},
    ],
    # pi --mode rpc output: the command's response, then the AgentSessionEvents.
    "pi-rpc": [
        {"id": "c1", "type": "response", "command": "prompt", "success": True},
        {"type": "agent_start"},
        {"type": "message_end", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1783223391119}},
        {"type": "message_end", "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "api": "anthropic-messages",
         "provider": "anthropic", "model": "claude-opus-4-5", "usage": {"input": 3, "output": 2, "cacheRead": 4000, "cacheWrite": 20},
         "stopReason": "stop", "timestamp": 1783223392119}},
        {"type": "agent_end", "messages": []},
    ],
    # Kiro's files (refused: no token count): a CLI session's lines, a V3 session's, a conversation.
    "kiro": [
        {"version": "v1", "kind": "Prompt", "data": {"message_id": "a1", "content": [{"kind": "text", "data": "go"}]}},
        {"id": "e1", "timestamp": "2026-08-01T10:00:00.000Z", "payload": {"type": "user", "content": "go"}},
        {"conversation_id": "c", "history": [{"user": {"content": None}, "assistant": {"Response": {"content": "ok"}}}]},
    ],
    # An OTLP span export: a call under an invoke_agent span naming the conversation and agent.
    "otel-agent": [
        {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "coder"}}]}, "scopeSpans": [{"spans": [
            {"traceId": "t", "spanId": "a", "name": "invoke_agent", "startTimeUnixNano": "1761994800000000000", "attributes": [
                {"key": "gen_ai.conversation.id", "value": {"stringValue": "c1"}}, {"key": "gen_ai.agent.name", "value": {"stringValue": "x"}}]},
            {"traceId": "t", "spanId": "b", "parentSpanId": "a", "name": "chat", "startTimeUnixNano": "1761994801000000000", "attributes": [
                {"key": "gen_ai.request.model", "value": {"stringValue": "claude-sonnet-4-5"}},
                {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "5010"}},
                {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "40"}}]}]}]}]},
    ],
}


@st.composite
def mutated(draw: st.DrawFn, fmt: str) -> list[object]:
    records: list[object] = []
    for template in TEMPLATES[fmt]:
        record = json.loads(json.dumps(template))
        for key in draw(st.lists(st.sampled_from(sorted(record)), max_size=3, unique=True)):
            record[key] = draw(JSON)
        records.append(record)
    return draw(st.permutations(records)) if draw(st.booleans()) else records


#: Template name -> the --input format it is read as.
FORMAT_OF = {"openai-capture": "http-capture", "pi-tree": "pi", "codex-app-server": "codex", "claude-code-stream": "claude-code",
             "pi-rpc": "pi", "kiro": "auto", "otel-agent": "otel"}


def _audit(fmt: str, data: bytes) -> None:
    fmt = FORMAT_OF.get(fmt, fmt)
    with TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        path.write_bytes(data)
        try:
            result = run_audit([path], fmt=fmt)
        except UserError as exc:
            message = str(exc)
            assert "\n" not in message and str(path) in message, message
            return
        # Whatever was imported, every text writer handles it.
        audit_table(result)
        json.loads(audit_json(result))
        assert audit_csv(result).count("\n") == len(result.rows) + 1


#: PREFIXBENCH_FUZZ_EXAMPLES=2000 for a long run.
FUZZ = settings(max_examples=int(os.environ.get("PREFIXBENCH_FUZZ_EXAMPLES", "30")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.sampled_from(sorted(TEMPLATES)).flatmap(lambda fmt: st.tuples(st.just(fmt), mutated(fmt))), st.booleans())
def test_mutated_records(case: tuple[str, list[object]], auto: bool) -> None:
    fmt, records = case
    _audit("auto" if auto else fmt, "".join(json.dumps(r) + "\n" for r in records).encode())


@FUZZ
@given(st.sampled_from(sorted(TEMPLATES)), st.integers(1, 200))
def test_truncated_files(fmt: str, cut: int) -> None:
    data = "".join(json.dumps(r) + "\n" for r in TEMPLATES[fmt]).encode()
    _audit(fmt, data[: max(0, len(data) - cut)])


@FUZZ
@given(st.binary(max_size=200))
def test_raw_bytes(data: bytes) -> None:
    _audit("auto", data)
