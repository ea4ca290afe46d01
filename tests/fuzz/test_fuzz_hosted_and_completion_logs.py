"""Fuzz the Managed Agents event-stream and OpenHands completion-log readers
(workloads/logs/formats/managed_agents.py, openhands_completions.py; GitHub Copilot CLI's events,
which share some event types, refused by name): mutated files and edited
records end in exit 0 or one clean line with exit 2, never a traceback or a hang, read as
detected or under an explicit ``--input``."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, to_json_line, weighted, write

_T = "2026-08-03T12:00:0"
MANAGED_SEEDS: list[dict] = [
    {"type": "session.status_running", "id": "sevt_1", "processed_at": f"{_T}0Z"},
    {"type": "user.message", "id": "sevt_2", "processed_at": f"{_T}0.5Z", "content": [{"type": "text", "text": "go"}]},
    {"type": "span.model_request_start", "id": "sevt_3", "processed_at": f"{_T}1Z"},
    {"type": "span.model_request_end", "id": "sevt_4", "processed_at": f"{_T}3Z", "is_error": False, "model_request_start_id": "sevt_3",
     "model_usage": {"input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 4000, "output_tokens": 9, "speed": "fast"}},
    {"type": "agent.thread_context_compacted", "id": "sevt_5", "processed_at": f"{_T}4Z"},
    {"type": "session.updated", "id": "sevt_6", "processed_at": f"{_T}5Z", "agent": {"model": {"id": "claude-opus-4-5"}}},
    {"type": "span.outcome_evaluation_end", "id": "sevt_7", "processed_at": f"{_T}6Z", "result": "satisfied",
     "usage": {"input_tokens": 4, "cache_read_input_tokens": 10, "cache_creation_input_tokens": 20, "output_tokens": 3}},
    {"type": "session.usage", "id": "sevt_8", "processed_at": f"{_T}7Z", "usage": {"input_tokens": 7, "output_tokens": 12,
     "cache_creation": {"ephemeral_5m_input_tokens": 4020}, "cache_read_input_tokens": 10, "list_cost": {"amount": "12", "currency": "USD"}}},
    {"role": "system", "kind": "thread_status_idle", "time": f"{_T}8Z", "raw": {"type": "session.thread_status_idle", "id": "sevt_9",
     "agent_name": "a", "session_thread_id": "sthr_1", "processed_at": f"{_T}8Z"}},
]
MANAGED_BYTES = b"".join(to_json_line(r) + b"\n" for r in MANAGED_SEEDS)
#: GitHub Copilot CLI's events (``{type, data, id, timestamp, parentId}``): some types are Managed
#: Agents' too; the file is refused by name, and mixed with Managed Agents events it is bad input.
COPILOT_SEEDS: list[dict] = [
    {"type": "session.start", "data": {"sessionId": "s", "version": 1, "producer": "copilot-agent", "copilotVersion": "0.0.400"},
     "id": "c1", "timestamp": f"{_T}0Z", "parentId": None},
    {"type": "user.message", "data": {"content": "go"}, "id": "c2", "timestamp": f"{_T}1Z", "parentId": "c1"},
    {"type": "assistant.message", "data": {"messageId": "m", "content": "ok", "outputTokens": 9, "model": "gpt-5-mini"},
     "id": "c3", "timestamp": f"{_T}2Z", "parentId": "c2"},
    {"type": "session.shutdown", "data": {"modelMetrics": {"gpt-5-mini": {"requests": 1}},
     "tokenDetails": {"input": {"tokenCount": 100}, "cache_read": {"tokenCount": 5}}}, "id": "c4", "timestamp": f"{_T}3Z", "parentId": "c3"},
]
COPILOT_BYTES = b"".join(to_json_line(r) + b"\n" for r in COPILOT_SEEDS)

COMPLETION_SEEDS: list[dict] = [
    {"context_window": 1000, "messages": [{"role": "system", "content": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}]},
                                          {"role": "user", "content": "x"}],
     "tools": [{"type": "function", "function": {"name": "t", "parameters": {}}}], "kwargs": {"temperature": 0},
     "response": {"id": "r", "model": "anthropic/claude-sonnet-4-5", "usage": {"prompt_tokens": 120, "completion_tokens": 5,
                  "cache_read_input_tokens": 0, "cache_creation_input_tokens": 100}},
     "cost": 0.01, "timestamp": 1788000000.5, "latency_sec": 1.0},
    {"llm_path": "responses", "instructions": "be brief", "input": [{"role": "user", "content": "hi"}], "tools": [], "kwargs": {},
     "response": {"id": "resp_1", "model": "gpt-5", "usage": {"input_tokens": 50, "output_tokens": 2, "input_tokens_details": {"cached_tokens": 0}}},
     "cost": 0.0, "timestamp": 1788000001.0, "latency_sec": 0.2},
    {"messages": [{"role": "user", "content": "x"}], "kwargs": {}, "cost": 0.0, "timestamp": 1788000002.0, "error": {"type": "APIError"}},
    {"messages": [{"role": "user", "content": "x"}], "response": {"id": "b", "model": "deepseek/deepseek-chat",
     "usage": {"prompt_tokens": 300, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 256}}},
     "args": [], "kwargs": {"tools": []}, "timestamp": 1750000000.0, "cost": 0.0, "fncall_messages": []},
]


def test_mutated_managed_agents_streams_and_openhands_completion_logs_end_cleanly(importer_examples):
    tally = Tally("audit", bound_s=20)
    root = Path(tempfile.mkdtemp(prefix="fuzz-hosted-"))

    @fuzz_settings(importer_examples)
    @given(fmt=st.sampled_from(("managed-agents", "openhands-completions")), data=st.data(), explicit=st.booleans(),
           as_folder=st.booleans())
    def case(fmt: str, data: st.DataObject, explicit: bool, as_folder: bool) -> None:
        folder = root / "case"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        if fmt == "managed-agents":
            raw = data.draw(weighted(
                (mutated(MANAGED_BYTES), 1),
                (st.lists(edited(st.sampled_from(MANAGED_SEEDS), max_edits=2), min_size=1, max_size=8).map(
                    lambda docs: b"\n".join(map(to_json_line, docs))), 3),
                (st.lists(edited(st.sampled_from(MANAGED_SEEDS)), min_size=1, max_size=4).map(
                    lambda docs: json.dumps({"data": docs, "next_page": None}).encode()), 1),
                (mutated(COPILOT_BYTES), 1),
                (st.lists(edited(st.sampled_from(COPILOT_SEEDS + MANAGED_SEEDS), max_edits=2), min_size=1, max_size=6).map(
                    lambda docs: b"\n".join(map(to_json_line, docs))), 1),
            ))
            target = write(folder / "events.jsonl", raw)
        else:
            files = data.draw(st.lists(weighted(
                (st.sampled_from(COMPLETION_SEEDS).flatmap(lambda doc: mutated(json.dumps(doc).encode())), 1),
                (edited(st.sampled_from(COMPLETION_SEEDS), max_edits=2).map(lambda doc: json.dumps(doc).encode()), 3),
            ), min_size=1, max_size=3))
            for k, raw in enumerate(files):
                target = write(folder / f"anthropic__claude-sonnet-4-5-178800000{k}.{k}00-ab1{k}.json", raw)
        argv = ["audit", str(folder if as_folder else target), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", fmt]
        tally.check(argv)

    case()
    tally.report()
