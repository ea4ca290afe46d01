"""Fuzz the records the last stop taught the readers (integ48): Codex's ``session_meta``
``base_instructions`` / ``dynamic_tools`` (the head digest) and the items it writes itself
(``tool_search_output``, ``additional_tools``, ``configuration_update``, a
``delivered_assistant_message``); Cline SDK ``subagent_usage`` rows (their ``text`` a JSON string
of any fields); Trae's and OpenHands 0.x's logged heads (system prompt, ``tools_available`` /
``args.tools``); a session of Continue's 2023 Python server; iFlow's ``slash-command`` output.
Each seed is a small handwritten log; each case edits its records (any JSON value or a nasty
scalar in any place, a key deleted) and runs ``audit``: exit 0 or one line of exit 2, never an
exception, and the same bytes out twice."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixbench.reports.cli import run
from tests.fuzz.harness import Tally, edited, fuzz_settings, to_json_line

_T = "2026-11-20T11:14:{:02d}.000Z"


def _codex_line(second: int, kind: str, payload: dict, **extra: object) -> dict:
    return {"timestamp": _T.format(second), "type": kind, "payload": payload, **extra}


def _codex_tokens(total: int, cached: int) -> dict:
    usage = {"input_tokens": total, "cached_input_tokens": cached, "output_tokens": 30}
    return {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}


CODEX = [
    _codex_line(0, "session_meta", {"id": "s", "cli_version": "0.160.0", "model_provider": "openai",
                                    "base_instructions": {"text": "You are Codex."},
                                    "dynamic_tools": [{"name": "calendar", "input_schema": {"type": "object"}}]}),
    _codex_line(1, "turn_context", {"model": "gpt-5.4"}),
    _codex_line(2, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
    _codex_line(3, "response_item", {"type": "tool_search_call", "call_id": "t", "execution": "client", "arguments": {}}),
    _codex_line(4, "event_msg", _codex_tokens(10000, 0)),
    _codex_line(5, "response_item", {"type": "tool_search_output", "call_id": "t", "execution": "client", "tools": []}),
    _codex_line(6, "response_item", {"type": "additional_tools", "role": "developer", "tools": []}),
    _codex_line(7, "response_item", {"type": "configuration_update", "settings": {}}),
    _codex_line(8, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
                metadata={"delivered_assistant_message": "codex:delivery:v1:complete"}),
    _codex_line(9, "event_msg", _codex_tokens(10500, 9984)),
]

_CLINE_MODEL = {"providerId": "anthropic", "modelId": "claude-sonnet-4-5", "mode": "act"}
CLINE = [[
    {"ts": 1762000000000, "type": "say", "say": "task", "text": "go", "modelInfo": _CLINE_MODEL},
    {"ts": 1762000001000, "type": "say", "say": "api_req_started", "modelInfo": _CLINE_MODEL,
     "text": json.dumps({"request": "r1", "tokensIn": 12, "tokensOut": 64, "cacheWrites": 7000, "cacheReads": 0, "cost": 0.03})},
    {"ts": 1762000004000, "type": "say", "say": "subagent_usage",
     "text": json.dumps({"source": "subagents", "tokensIn": 48210, "tokensOut": 1904, "cacheWrites": 0, "cacheReads": 0, "cost": 0.07})},
    {"ts": 1762000006000, "type": "say", "say": "api_req_started", "modelInfo": _CLINE_MODEL,
     "text": json.dumps({"request": "r2", "tokensIn": 9, "tokensOut": 30, "cacheWrites": 200, "cacheReads": 7000, "cost": 0.003})},
]]

_TRAE_CALL = {"timestamp": "2025-11-14T10:00:00.000000", "provider": "openai", "model": "gpt-5",
              "input_messages": [{"role": "system", "content": "You are an expert."}, {"role": "user", "content": "task"}],
              "response": {"content": "ok", "model": "gpt-5", "finish_reason": "stop", "tool_calls": None,
                           "usage": {"input_tokens": 9000, "output_tokens": 100, "cache_creation_input_tokens": 0,
                                     "cache_read_input_tokens": 6400, "reasoning_tokens": 0}},
              "tools_available": ["bash", "task_done"]}
TRAE = [{"task": "fix it", "start_time": "2025-07-10T14:00:00.000000", "end_time": "2025-07-10T14:05:00.000000",
         "provider": "openai", "model": "gpt-5", "max_steps": 20, "llm_interactions": [_TRAE_CALL, dict(_TRAE_CALL)],
         "agent_steps": [], "success": True, "final_result": "done", "execution_time": 300.0}]

_OH_CALL = {"id": 1, "timestamp": "2026-01-23T10:00:30", "source": "agent", "action": "run", "args": {},
            "tool_call_metadata": {"model_response": {"id": "chatcmpl-0", "model": "gpt-5", "usage": {
                "prompt_tokens": 9000, "completion_tokens": 50, "prompt_tokens_details": {"cached_tokens": 6400}}}}}
OPENHANDS = [{"instance_id": "repo__repo-0", "instruction": "...", "error": None,
              "history": [{"id": 0, "timestamp": "2026-01-23T10:00:00", "source": "agent", "action": "system",
                           "args": {"content": "You are OpenHands.", "tools": [{"type": "function", "function": {"name": "finish"}}]}},
                          _OH_CALL],
              "test_result": {"git_patch": ""}, "metrics": {"accumulated_cost": 0.01, "costs": [], "response_latencies": []},
              "metadata": {"agent_class": "CodeActAgent", "llm_config": {"model": "openai/gpt-5", "base_url": None}}}]

CONTINUE_2023 = [{"history": {"timeline": [{"step": {"name": "UserInputStep", "description": "fix it"}, "depth": 0}],
                              "current_index": 0},
                  "session_info": {"session_id": "3f2a9c1e-5b7d-4e8f-9a01-23456789abcd", "title": "t",
                                   "date_created": "1697641295.7", "workspace_directory": "/w"}, "config": {}}]

_IFLOW = {"sessionId": "session-041101e6-2a7f-4dfd-90b0-57888a353f6a", "isSidechain": False, "userType": "external",
          "version": "1.0.0"}
IFLOW = [
    {**_IFLOW, "uuid": "u1", "parentUuid": None, "timestamp": "2026-01-05T06:28:40.418Z", "type": "user",
     "message": {"role": "user", "content": "/docs"}},
    {**_IFLOW, "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-05T06:28:40.548Z", "type": "assistant",
     "message": {"id": "slash-1", "role": "assistant", "model": "slash-command", "content": [{"type": "text", "text": "docs"}],
                 "usage": {"input_tokens": 0, "output_tokens": 0}}},
    {**_IFLOW, "uuid": "u2", "parentUuid": "a1", "timestamp": "2026-01-05T06:29:00.000Z", "type": "user",
     "message": {"role": "user", "content": "list the files"}},
    {**_IFLOW, "uuid": "a2", "parentUuid": "u2", "timestamp": "2026-01-05T06:29:05.000Z", "type": "assistant",
     "message": {"id": "r1", "role": "assistant", "model": "glm-5", "content": [{"type": "text", "text": "a.py"}],
                 "usage": {"input_tokens": 900, "output_tokens": 20, "cache_read_input_tokens": 0}}},
]

#: (name, file, records, one JSON document rather than JSON lines)
SEEDS = [
    ("codex", "rollout-2026-11-20T11-14-00-s.jsonl", CODEX, False),
    ("cline", "ui_messages.json", CLINE, True),
    ("trae", "trajectory.json", TRAE, True),
    ("openhands", "output.jsonl", OPENHANDS, False),
    ("continue-2023", "3f2a9c1e-5b7d-4e8f-9a01-23456789abcd.json", CONTINUE_2023, True),
    ("iflow", "session-041101e6-2a7f-4dfd-90b0-57888a353f6a.jsonl", IFLOW, False),
]


def _edit_text_json(doc: object, draw) -> object:
    """``doc`` with any string that holds a JSON object (Cline's row ``text``) edited inside too."""
    if isinstance(doc, dict):
        return {k: _edit_text_json(v, draw) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_edit_text_json(v, draw) for v in doc]
    if isinstance(doc, str) and doc.startswith("{"):
        inner = json.loads(doc)
        return json.dumps(draw(edited(st.just(inner), max_edits=2)), allow_nan=True)
    return doc


def _audit(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(argv)
    return status, out.getvalue()


@pytest.mark.parametrize(("name", "file", "records", "document"), SEEDS, ids=[seed[0] for seed in SEEDS])
def test_any_edit_of_the_new_records_reads_or_is_refused_in_one_line(importer_examples, name, file, records, document):
    tally = Tally(f"new records: {name}", bound_s=20)

    @fuzz_settings(importer_examples)
    @given(data=st.data())
    def case(data) -> None:
        docs = [data.draw(edited(st.just(record), max_edits=3 if document else 1)) for record in records]
        docs = [_edit_text_json(doc, data.draw) for doc in docs]
        if document:
            body = to_json_line(docs[0])
        else:
            body = b"".join(to_json_line(doc) + b"\n" for doc in docs)
            if data.draw(st.booleans()):
                body = body[: -data.draw(st.integers(1, 30))]  # the last line cut short
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / file
            path.write_bytes(body)
            argv = ["audit", "--quiet", "--format", "json", str(path)]
            status = tally.check(argv)
            if status == 0:
                assert _audit(argv) == _audit(argv)  # the same bytes out, read again

    case()
    tally.report()
