"""The chat-completions importer: field mapping and file:line errors."""

import json

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Reasoning, Text, ToolCall, ToolResult
from prefixbench.workloads.logs.chat_completions import read_chat_completions


def write(tmp_path, *lines):
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


BODY = {
    "model": "deepseek-v4-flash",
    "provider": "deepseek",
    "reasoning_effort": "high",
    "temperature": 0,
    "stop": "END",
    "max_tokens": 100,
    "tools": [{"type": "function", "function": {"name": "ls", "description": "list", "parameters": {"type": "object"}}}],
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "think",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a b"},
    ],
}


def test_a_body_maps_onto_the_wire_model(tmp_path):
    (request,) = read_chat_completions(write(tmp_path, BODY))
    assert request.envelope.label() == "deepseek/deepseek-v4-flash effort=high temperature=0 stop=['END']"
    assert request.system == "be brief" and request.max_tokens == 100 and request.tools[0].name == "ls"
    user, assistant, tool = request.messages
    assert user.blocks == (Text("hi"),)
    assert assistant.blocks == (Reasoning("think", "reasoning_content"), ToolCall("c1", "ls", "{}"))
    assert tool.blocks == (ToolResult("c1", (Text("a b"),)),)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "log.jsonl:2: invalid JSON"),
        ({"messages": []}, "log.jsonl:2: missing field 'model'"),
        ({"model": "m"}, "log.jsonl:2: missing field 'messages'"),
        ({"model": "m", "messages": [{"role": "robot", "content": "x"}]}, "unknown role 'robot'"),
        ({"model": "m", "messages": [{"role": "tool", "content": "x"}]}, "needs 'tool_call_id'"),
        ({"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}, "'temperature' must be a number"),
        ("[1, 2]", r"log.jsonl:2: expected a JSON object, got an array$"),
        # Before: Python's type names ("got NoneType", "got list"), not JSON's.
        ("null", r"log.jsonl:2: expected a JSON object, got null$"),
        ('"text"', r"log.jsonl:2: expected a JSON object, got a string$"),
        ("3", r"log.jsonl:2: expected a JSON object, got a number$"),
        ("true", r"log.jsonl:2: expected a JSON object, got true$"),
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, line, message):
    path = write(tmp_path, {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, line)
    with pytest.raises(UserError, match=message):
        list(read_chat_completions(path))


def test_empty_and_missing_files_are_user_errors(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    with pytest.raises(UserError, match="no requests"):
        list(read_chat_completions(empty))
    with pytest.raises(UserError, match="cannot read"):
        list(read_chat_completions(tmp_path / "missing.jsonl"))
