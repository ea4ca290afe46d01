"""iFlow CLI sessions, read by the Claude Code reader (workloads/logs/formats/claude_code.py).

iFlow CLI forks Gemini CLI but writes its sessions as Claude Code's entries:
``~/.iflow/projects/<-encoded-cwd>/session-<uuid>.jsonl``, one ``{uuid, parentUuid, sessionId,
timestamp, type, isSidechain, userType, message, cwd?, gitBranch?, version?, toolUseResult?}`` a
line, the assistant's ``message`` Anthropic-shaped with ``usage {input_tokens, output_tokens}``
and no cache field; a tool result's ``content`` is Gemini CLI's ``{callId, responseParts,
resultDisplay}``. The lines below follow the field lists of a public reader's description
of iFlow's files (drawn from two live sessions, 2026), not a real session.
"""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.logs.formats import FORMATS, detect_format, resolve

SID = "session-041101e6-2a7f-4dfd-90b0-57888a353f6a"


def _user(uuid: str, parent: str | None, at: str, content: object, **extra: object) -> dict:
    return {"uuid": uuid, "parentUuid": parent, "sessionId": SID, "timestamp": at, "type": "user", "isSidechain": False,
            "userType": "external", "message": {"role": "user", "content": content}, "cwd": "/home/u/proj",
            "gitBranch": None, "version": "1.0.0", **extra}


def _assistant(uuid: str, parent: str, at: str, rid: str, model: str, tokens_in: int, tokens_out: int, blocks: list[dict]) -> dict:
    return {"isSidechain": False, "parentUuid": parent, "sessionId": SID, "timestamp": at, "type": "assistant",
            "userType": "external", "uuid": uuid,
            "message": {"id": rid, "type": "message", "role": "assistant", "content": blocks, "model": model,
                        "stop_reason": None, "stop_sequence": None,
                        "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}}


def _session(path: Path) -> Path:
    result = {"callId": "call_1", "responseParts": {"functionResponse": {"id": "call_1", "name": "list_directory",
                                                                         "response": {"output": "a.py\nb.py"}}},
              "resultDisplay": "2 files"}
    lines = [
        _user("u1", None, "2026-02-27T09:11:31.532Z", "list the files"),
        _assistant("a1", "u1", "2026-02-27T09:11:40.657Z", "r1", "glm-5", 16472, 224,
                   [{"type": "text", "text": "Listing."},
                    {"type": "tool_use", "id": "call_1", "name": "list_directory", "input": {"path": "/home/u/proj"}}]),
        _user("u2", "a1", "2026-02-27T09:11:41.000Z", [{"type": "tool_result", "tool_use_id": "call_1", "content": result}],
              toolUseResult={"status": "success", "timestamp": 1772183500685, "toolName": "list_directory"}),
        _assistant("a2", "u2", "2026-02-27T09:11:45.000Z", "r2", "qwen3-coder-plus", 16800, 12, [{"type": "text", "text": "Two files."}]),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_an_iflow_session_reads_as_claude_code_entries_with_no_cache_field(tmp_path: Path) -> None:
    path = _session(tmp_path / f"{SID}.jsonl")
    assert detect_format(path) is FORMATS["claude-code"]
    assert resolve("iflow") is FORMATS["claude-code"] and resolve("iflow-cli") is FORMATS["claude-code"]
    requests, summaries = load_trace([path])
    assert [r.request_id for r in requests] == ["r1", "r2"]
    assert [r.model for r in requests] == ["glm-5", "qwen3-coder-plus"]
    # No cache field: the whole prompt is uncached input as billed, the cache use not reported.
    assert [r.usage for r in requests] == [
        Usage(uncached=16472, output=224, cache_reported=False),
        Usage(uncached=16800, output=12, cache_reported=False),
    ]
    assert sum(r.usage.prompt for r in requests) == 16472 + 16800
    assert [r.sent_ms for r in requests] == [1772183491532, 1772183501000]  # the user line each answers
    assert [r.provider for r in requests] == ["zai", "qwen"]  # from the model's name
    assert summaries[0].format == "claude-code" and summaries[0].requests == 2


def test_a_slash_commands_output_is_no_call_and_is_said_so(tmp_path: Path) -> None:
    # iFlow writes what a slash command printed (/docs) as an assistant message of model
    # "slash-command" with usage zero: skipped as what it is, not as a call whose counts went missing.
    path = tmp_path / f"{SID}.jsonl"
    lines = [
        _user("u1", None, "2026-01-05T06:28:40.418Z", "/docs"),
        _assistant("a1", "u1", "2026-01-05T06:28:40.548Z", "slash-response-1", "slash-command", 0, 0,
                   [{"type": "text", "text": "{\"slashCommandOutput\": {\"type\": \"info\", \"text\": \"Opening documentation\"}}"}]),
        _user("u2", "a1", "2026-01-05T06:29:00.000Z", "list the files"),
        _assistant("a2", "u2", "2026-01-05T06:29:05.000Z", "r1", "glm-5", 16472, 224, [{"type": "text", "text": "a.py"}]),
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    requests, summaries = load_trace([path])
    assert [r.request_id for r in requests] == ["r1"]
    assert summaries[0].skipped == ((2, "iFlow slash command's output (model slash-command), not an API call"),)
