"""Detectors that turn a record away by its keys before their own tests (a speed-up: each of a
file's first lines is classified by every format's detector, so a Claude Code line went through
all of them) answer as they did: each is written out here as it was, and compared on generated
records and on every record of the formats' fixtures and of ../shared/realdata."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.workloads.logs.formats import (
    classify_record, cline, codex, copilot_cli, langfuse, managed_agents, opencode, openhands, otel, swe_agent,
)
from prefixbench.workloads.logs.formats.base import Evidence
from prefixbench.workloads.logs.formats.copilot_store import COLUMNS
from prefixbench.workloads.logs.records import iter_records


def _cline_as_it_was(value: dict) -> Evidence | None:
    if cline._is_sdk_session(value):
        return Evidence.WRAPPER
    kind = value.get("type")
    if kind in ("say", "ask") and isinstance(value.get("ts"), (int, float)) and isinstance(value.get(kind), str):
        return Evidence.ENTRY
    if (
        value.get("role") in ("user", "assistant")
        and isinstance(value.get("content"), (str, list))
        and value.keys() <= cline._HISTORY_KEYS
    ):
        return Evidence.SHAPE
    if value and value.keys() <= cline._METADATA_KEYS and isinstance(value.get("model_usage", []), list):
        return Evidence.SHAPE
    if cline._is_history_item(value):
        return Evidence.SHAPE
    return None


def _opencode_as_it_was(value: dict) -> Evidence | None:
    if opencode._is_run_event(value):
        return Evidence.WRAPPER
    export = opencode._export(value)
    if export is not None and opencode._is_session_info(export["info"]):
        return Evidence.WRAPPER
    if opencode._is_part(value):
        return Evidence.WRAPPER
    if opencode._is_session_info(value) or opencode._is_message(value):
        return Evidence.ENTRY
    return None


def _openhands_as_it_was(value: dict) -> Evidence | None:
    if value.get("source") in openhands._SOURCES and ("action" in value or "observation" in value) and "id" in value:
        return Evidence.SHAPE
    if openhands._is_state(value) or openhands._is_sdk_event(value):
        return Evidence.SHAPE
    metrics = openhands._metrics(value)
    if isinstance(metrics.get("token_usages"), list) or ("instance_id" in value and "accumulated_token_usage" in metrics):
        return Evidence.SHAPE
    return None


def _codex_as_it_was(value: dict) -> Evidence | None:
    if value.get("type") in codex._LINE_KINDS and "payload" in value:
        return Evidence.ENTRY
    if "record_type" in value or ({"id", "timestamp", "instructions"} <= set(value) and "type" not in value):
        return Evidence.SHAPE
    return None


def _otel_as_it_was(value: dict) -> Evidence | None:
    if isinstance(otel._first(value, otel._RESOURCE_SPANS), list) or otel._resource_spans(value) or otel._resource_logs(value):
        return Evidence.WRAPPER
    context = value.get("context")
    if isinstance(context, dict) and "span_id" in context and "trace_id" in context and isinstance(value.get("attributes"), dict):
        return Evidence.SHAPE
    if otel._sdk_log_record(value):
        return Evidence.SHAPE
    return None


def _langfuse_as_it_was(value: dict) -> Evidence | None:
    if langfuse._is_page(value) or (langfuse._is_trace(value) or langfuse._is_download(value)) and any(
            langfuse._is_observation(o) for o in value["observations"][:5]):
        return Evidence.WRAPPER
    if langfuse._is_keyed(value):
        return Evidence.WRAPPER
    return Evidence.SHAPE if langfuse._is_observation(value) else None


def _managed_agents_as_it_was(value: dict) -> Evidence | None:
    if managed_agents._unwrapped(value) is not None or managed_agents._page(value) is not None:
        return Evidence.ENTRY
    return None


def _copilot_cli_as_it_was(value: dict) -> Evidence | None:
    return Evidence.SHAPE if all(key in value for key in COLUMNS) else None


def _swe_agent_as_it_was(value: dict) -> Evidence | None:
    return Evidence.SHAPE if swe_agent._is_mini(value) or swe_agent._is_swe(value) else None


PAIRS = [
    (cline.detect, _cline_as_it_was),
    (opencode.detect, _opencode_as_it_was),
    (openhands.detect, _openhands_as_it_was),
    (codex.detect, _codex_as_it_was),
    (otel.detect, _otel_as_it_was),
    (langfuse.detect, _langfuse_as_it_was),
    (managed_agents.detect, _managed_agents_as_it_was),
    (copilot_cli.detect, _copilot_cli_as_it_was),
    (swe_agent.detect, _swe_agent_as_it_was),
]

#: The keys these detectors read (and some Claude Code ones), the values they test for.
KEYS = st.sampled_from([
    "ts", "messages", "role", "type", "say", "ask", "content", "id", "model_usage", "files_in_context",
    "environment_history", "number", "task", "tokensIn", "tokensOut", "totalCost", "sessionId", "version", "agent",
    "sessionID", "messageID", "info", "data", "title", "time", "projectID", "directory", "part", "error",
    "source", "action", "observation", "kind", "timestamp", "metrics", "llm_metrics", "token_usages",
    "instance_id", "accumulated_token_usage", "stats", "usage_to_metrics", "service_to_metrics",
    "payload", "record_type", "instructions", "uuid", "parentUuid", "message",
    # otel, langfuse, managed-agents, copilot-cli, swe-agent
    "resourceSpans", "resource_spans", "scopeSpans", "scope_spans", "instrumentationLibrarySpans",
    "instrumentation_library_spans", "resourceLogs", "resource_logs", "scopeLogs", "scope_logs", "resource",
    "context", "span_id", "trace_id", "attributes", "hrTime", "instrumentationScope", "meta", "observations",
    "traceId", "startTime", "trace", "raw", "next_page", "parentId", "session_id", "model", "input_tokens",
    "output_tokens", "cache_read_tokens", "cache_write_tokens", "trajectory", "history", "trajectory_format",
])
WORDS = st.sampled_from([
    "say", "ask", "user", "assistant", "agent", "environment", "text", "error", "step_start", "tool_use",
    "session_meta", "response_item", "cline", "roo", "x", "",
    "GENERATION", "SPAN", "agent.message", "session.usage", "mini-swe-agent-1",
])
SCALARS = st.none() | st.booleans() | st.integers(-2, 2) | st.floats(allow_nan=False, width=32) | WORDS
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=5),
                    max_leaves=12)
#: A record each test of the four detectors accepts (and a Claude Code line), to be mutated.
SEEDS = [
    {"sessionId": "s", "messages": [], "version": 1, "agent": "lead"},
    {"type": "say", "ts": 1, "say": "text"},
    {"role": "user", "content": "hi"},
    {"files_in_context": [], "model_usage": []},
    {"id": "x", "number": 1, "ts": 1, "task": "t", "tokensIn": 1, "tokensOut": 1, "totalCost": 0},
    {"type": "step_start", "sessionID": "s", "part": {"messageID": "m", "type": "step-start"}, "timestamp": 1},
    {"type": "error", "sessionID": "s", "error": {}},
    {"info": {"id": "s", "title": "t", "time": {}, "projectID": "p"}, "messages": []},
    {"data": {"info": {"id": "s", "title": "t", "time": {}, "directory": "/"}, "messages": []}},
    {"messageID": "m", "sessionID": "s", "type": "text"},
    {"id": "s", "title": "t", "time": {}, "directory": "/"},
    {"sessionID": "s", "role": "assistant", "time": {}},
    {"source": "agent", "action": "run", "id": 1},
    {"id": "c", "agent": {}, "stats": {"usage_to_metrics": {"default": {}}}},
    {"kind": "MessageEvent", "source": "user", "id": "e", "timestamp": "t"},
    {"instance_id": "i", "metrics": {"accumulated_token_usage": {}}},
    {"llm_metrics": {"token_usages": []}},
    {"type": "session_meta", "payload": {}},
    {"record_type": "state"},
    {"id": "x", "timestamp": "t", "instructions": "i"},
    {"type": "user", "uuid": "u", "sessionId": "s", "message": {"role": "user", "content": "hi"}},
    {"resourceSpans": []},
    {"scopeSpans": [], "resource": {}},
    {"resource_logs": []},
    {"scopeLogs": [], "resource": {}},
    {"context": {"span_id": "1", "trace_id": "2"}, "attributes": {}},
    {"hrTime": [1, 2], "attributes": {}, "instrumentationScope": {}},
    {"data": [{"type": "GENERATION", "id": "o", "traceId": "t", "startTime": "s"}], "meta": {}},
    {"id": "t", "timestamp": "x", "observations": [{"type": "SPAN", "id": "o", "trace_id": "t", "start_time": "s"}]},
    {"trace": {}, "observations": [{"type": "SPAN", "id": "o", "traceId": "t", "startTime": "s"}]},
    {"o": {"type": "SPAN", "id": "o", "traceId": "t", "startTime": "s"}},
    {"type": "GENERATION", "id": "o", "traceId": "t", "startTime": "s"},
    {"type": "agent.message", "id": "e"},
    {"kind": "x", "raw": {"type": "session.usage", "id": "e"}},
    {"data": [{"type": "agent.message", "id": "e"}], "next_page": None},
    {"type": "session.usage", "id": "e", "parentId": "p", "data": {}},
    {key: "x" for key in COLUMNS},
    {"messages": [], "trajectory_format": "mini-swe-agent-1"},
    {"messages": [], "info": {"mini_version": "1"}},
    {"trajectory": [], "history": []},
]


@st.composite
def _mutated(draw: st.DrawFn) -> dict:
    """A seed with a key or two dropped and up to three others set."""
    value = dict(draw(st.sampled_from(SEEDS)))
    for key in draw(st.lists(st.sampled_from(sorted(value)), max_size=2)):
        value.pop(key, None)
    value.update(draw(st.dictionaries(KEYS, JSON, max_size=3)))
    return value


RECORDS = st.one_of(st.dictionaries(KEYS, JSON, max_size=7), _mutated())


@settings(max_examples=2000, deadline=None)
@given(RECORDS)
def test_the_gated_detectors_answer_as_they_did(value: dict) -> None:
    for detect, as_it_was in PAIRS:
        assert detect(value) == as_it_was(value), detect.__module__


def _records(root: Path) -> list[object]:
    found = []
    for path in sorted(root.rglob("*")):
        if path.suffix in (".json", ".jsonl") and path.is_file():
            try:
                found += [record.value for record in iter_records(path)]
            except Exception:  # (a fixture meant to be refused: nothing to compare)
                continue
    return found


def test_they_answer_as_they_did_on_every_fixture_record() -> None:
    values = [value for value in _records(Path(__file__).parent / "fixtures") if isinstance(value, dict)]
    assert len(values) > 100
    for value in values:
        for detect, as_it_was in PAIRS:
            assert detect(value) == as_it_was(value), (detect.__module__, json.dumps(value)[:200])


def test_they_answer_as_they_did_on_the_shared_real_logs(realdata: Path) -> None:
    values = [value for value in _records(realdata) if isinstance(value, dict)]
    for value in values:
        for detect, as_it_was in PAIRS:
            assert detect(value) == as_it_was(value), (detect.__module__, json.dumps(value)[:200])
    # (and the whole classification of a Claude Code line still names Claude Code)
    claude = [v for v in values if v.get("type") in ("user", "assistant") and "uuid" in v]
    assert claude and all(classify_record(v) == "claude-code" for v in claude)
