"""Fuzz coding agents' own OpenTelemetry events (workloads/logs/formats/otel_agents.py through
otel.py): Claude Code's, Codex's, Gemini CLI's and Qwen Code's per-call records, with any event
name, kind, body, service, session, time, duration and counts (numbers, digit strings, other
text, negatives, floats, none), in OTLP ``resourceLogs`` lines or the JavaScript SDK's records (and its spans, no call),
either read (one call per agent event at most) or refused in one line naming the file; never
another exception."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import fuzz_settings, loaded_or_refused

COUNTS = st.one_of(st.integers(0, 10**7), st.integers(-2, -1), st.none(), st.sampled_from(["12", "x", ""]), st.booleans(), st.floats(0, 5))
NAMES = st.sampled_from(["claude_code.api_request", "api_request", "claude_code.api_error", "codex.sse_event", "codex.conversation_starts",
                         "gemini_cli.api_response", "api_response", "qwen-code.api_response", "gemini_cli.api_error", ""])
KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens", "input_token_count", "output_token_count",
        "cached_token_count", "cache_write_token_count", "cached_content_token_count", "thoughts_token_count", "tool_token_count", "duration_ms",
        "cache_creation_5m_tokens", "cache_creation_1h_tokens")
ATTRIBUTES = st.fixed_dictionaries(
    {"event.name": NAMES},
    optional={**{key: COUNTS for key in KEYS},
              "event.kind": st.sampled_from(["response.completed", "response.created", ""]),
              "event.timestamp": st.one_of(st.sampled_from(["2026-05-28T20:26:40.000Z", "soon", ""]), st.integers(-1, 2 * 10**12)),
              "model": st.one_of(st.sampled_from(["claude-opus-4-6", "gpt-5-codex", "gemini-2.5-pro", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", ""]), st.integers()),
              "session.id": st.one_of(st.sampled_from(["s1", "s2", ""]), st.integers()),
              "conversation.id": st.sampled_from(["c1", "c2"]),
              "provider_name": st.one_of(st.sampled_from(["OpenAI", "Ollama", "gemini", ""]), st.integers()),
              "request_id": st.one_of(st.just("req_1"), st.integers())},
)


def _value(v: object) -> dict:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": v}


OTLP_RECORD = st.fixed_dictionaries(
    {"attributes": ATTRIBUTES.map(lambda a: [{"key": k, "value": _value(v)} for k, v in a.items() if v is not None])},
    optional={"timeUnixNano": st.one_of(st.integers(-1, 2 * 10**18).map(str), st.none()), "body": st.one_of(NAMES.map(_value), st.just({"kvlistValue": {}})),
              "eventName": NAMES},
)
SERVICE = st.sampled_from(["claude-code", "codex_cli_rs", "gemini-cli", "qwen-code", ""]).map(
    lambda n: {"attributes": [{"key": "service.name", "value": {"stringValue": n}}, {"key": "session.id", "value": {"stringValue": "r1"}}]})
SDK_RECORD = st.fixed_dictionaries(
    {"hrTime": st.one_of(st.tuples(st.integers(-1, 2 * 10**9), st.integers(0, 10**9 - 1)).map(list), st.just([0, 0])), "attributes": ATTRIBUTES,
     "instrumentationScope": st.just({"name": "gemini-cli"})},
    optional={"_body": NAMES, "resource": st.just({"_rawAttributes": [["service.name", "gemini-cli"], ["session.id", "r2"]]})},
)
#: A span as the JavaScript SDK holds it (Gemini CLI's outfile writes them beside its records): no call.
JS_SPAN = st.fixed_dictionaries({"_spanContext": st.just({"traceId": "ab"}), "startTime": st.lists(st.integers(-1, 10), max_size=3),
                                 "instrumentationScope": st.just({"name": "gemini-cli"})}, optional={"attributes": ATTRIBUTES})
LINES = st.lists(st.one_of(SDK_RECORD, JS_SPAN, st.tuples(st.lists(OTLP_RECORD, max_size=4), SERVICE).map(
    lambda p: {"resourceLogs": [{"resource": p[1], "scopeLogs": [{"logRecords": p[0]}]}]})), min_size=1, max_size=5)


def test_any_agent_events_read_as_calls_or_are_refused_in_one_line(importer_examples):
    @fuzz_settings(importer_examples)
    @given(lines=LINES)
    def case(lines) -> None:
        requests = loaded_or_refused(lines, "agents-otel.jsonl")
        if requests is None:
            return
        records = sum(1 for line in lines if "hrTime" in line)
        records += sum(len(scope["logRecords"]) for line in lines for block in line.get("resourceLogs", []) for scope in block["scopeLogs"])
        assert 0 < len(requests) <= records
        assert [r.seq for r in requests] == list(range(len(requests)))
        assert all(r.source_format == "otel" and min(r.usage.uncached, r.usage.output, r.usage.cache_read) >= 0 for r in requests)
        assert all(r.sent_ms is None or r.done_ms is None or r.sent_ms <= r.done_ms for r in requests)

    case()
