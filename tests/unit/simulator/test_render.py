"""Canonical rendering: unit order, self-delimiting units, block offsets, memoization."""

import json

from prefixbench.simulator.render import render_message, render_request
from prefixbench.simulator.wire import Message, Reasoning, Request, Text, ToolCall, ToolResult
from tests.builders import ENVELOPE, TOOLS, make_request


def test_units_come_tools_then_system_then_messages():
    rendered = render_request(make_request("hi", "there"))
    assert [u.kind for u in rendered.units] == ["tools", "system", "message", "message"]
    assert rendered.first_message_unit == 2
    assert json.loads(rendered.units[1].data) == {"system": "sys"}


def test_empty_system_and_tools_are_omitted():
    rendered = render_request(Request(ENVELOPE, (Message("user", (Text("x"),)),)))
    assert [u.kind for u in rendered.units] == ["message"]
    assert rendered.first_message_unit == 0


def test_every_unit_is_one_json_object_and_blocks_start_where_recorded():
    message = Message(
        "assistant",
        (Reasoning("why", "reasoning_content"), Text("é text"), ToolCall("c", "read_file", '{"i":1}')),
    )
    unit = render_message(message)
    decoded = json.loads(unit.data)
    assert decoded["role"] == "assistant"
    assert [b["type"] for b in decoded["content"]] == ["reasoning", "text", "tool_call"]
    assert decoded["content"][0]["field"] == "reasoning_content"
    for start in unit.block_starts:
        assert unit.data[start : start + 8] == b'{"type":'
    assert "é".encode() in unit.data  # UTF-8, not \\u escapes


def test_tool_result_renders_nested_content():
    unit = render_message(Message("tool", (ToolResult("c1", (Text("a"), Text("b")), True),)))
    assert json.loads(unit.data)["content"][0] == {
        "type": "tool_result",
        "tool_call_id": "c1",
        "is_error": True,
        "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
    }


def test_no_unit_is_a_prefix_of_another_so_prefixes_align_on_units():
    a = render_message(Message("user", (Text("abc"),))).data
    b = render_message(Message("user", (Text("abc"), Text("d")))).data
    assert not b.startswith(a)


def test_rendering_is_memoized_per_message():
    message = Message("user", (Text("same"),))
    assert render_message(message) is render_message(Message("user", (Text("same"),)))
    assert render_request(Request(ENVELOPE, (message,), tools=TOOLS)).units[0] is render_request(
        Request(ENVELOPE, (message,), tools=TOOLS)
    ).units[0]
