"""OpenAI Responses bodies in the chat-completions shape (workloads/logs/responses_body.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.simulator.wire import Reasoning, Text, ToolCall, ToolResult
from prefixbench.workloads.logs.chat_completions import LineError, parse_request
from prefixbench.workloads.logs.responses_body import chat_shape

TOOL = {"type": "function", "name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}}


def test_a_tool_loop_maps_item_by_item():
    body = {
        "model": "gpt-5.1", "instructions": "You are a coding agent.", "tools": [TOOL, {"type": "web_search"}],
        "reasoning": {"effort": "high"}, "max_output_tokens": 4096,
        "input": [
            {"role": "developer", "content": "Be brief."},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix "}, {"type": "input_text", "text": "it."}]},
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "look first"}]},
            {"type": "function_call", "call_id": "c1", "name": "read_file", "arguments": '{"path": "a.py"}'},
            {"type": "function_call", "call_id": "c2", "name": "read_file", "arguments": '{"path": "b.py"}'},
            {"type": "function_call_output", "call_id": "c1", "output": "A"},
            {"type": "function_call_output", "call_id": "c2", "output": [{"type": "input_text", "text": "B"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
        ],
    }
    request = parse_request(chat_shape(body))
    assert request.system == "You are a coding agent.\n\nBe brief."  # leading developer text joins the system prompt
    assert request.envelope.reasoning_effort == "high" and request.max_tokens == 4096
    assert [t.name for t in request.tools] == ["read_file", "web_search"]
    roles = [m.role for m in request.messages]
    assert roles == ["user", "assistant", "tool", "tool", "assistant"]
    assert request.messages[0].blocks == (Text("Fix it."),)
    turn = request.messages[1].blocks
    assert isinstance(turn[0], Reasoning) and turn[0].text == "look first"
    assert [b.call_id for b in turn if isinstance(b, ToolCall)] == ["c1", "c2"]
    assert isinstance(request.messages[3].blocks[0], ToolResult) and request.messages[4].blocks == (Text("Done."),)


def test_a_string_input_is_one_user_message():
    request = parse_request(chat_shape({"model": "gpt-5.1", "input": "hi"}))
    assert (request.system, [m.role for m in request.messages]) == ("", ["user"])


def test_bodies_that_do_not_carry_the_whole_prompt_are_not_rebuilt():
    assert chat_shape({"model": "m", "input": "go on", "previous_response_id": "resp_1"}) is None
    assert chat_shape({"model": "m", "input": "go on", "conversation": "conv_1"}) is None
    image = {"role": "user", "content": [{"type": "input_image", "image_url": "https://x/y.png"}]}
    assert chat_shape({"model": "m", "input": [image]}) is None
    assert chat_shape({"model": "m", "input": [{"type": "item_reference", "id": "msg_1"}]}) is None
    assert chat_shape({"model": "m", "input": [{"type": "compaction", "encrypted_content": "x"}]}) is None
    assert chat_shape({"model": "m", "input": []}) is None
    # Found by the fuzzer, and by reading the code after it: values of the wrong type crashed it.
    assert chat_shape({"type": None, "role": None, "input": "", "tools": True}) is None
    assert chat_shape({"model": "m", "input": [{"role": [1]}]}) is None
    assert chat_shape({"model": "m", "input": [{"role": "user", "content": [{"type": [1]}]}]}) is None
    assert chat_shape({"model": "m", "input": [{"type": {"a": 1}}]}) is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.sampled_from(
        ["type", "role", "content", "text", "call_id", "name", "arguments", "output", "summary", "encrypted_content", "input",
         "instructions", "tools", "model", "reasoning", "effort", "parameters", "description", "temperature", "stop",
         "max_output_tokens", "previous_response_id", "conversation"]
    ), children, max_size=5),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(JSON)
def test_any_body_is_a_shape_or_none_and_the_parser_says_what_is_wrong(body):
    shaped = chat_shape(body) if isinstance(body, dict) else None
    if shaped is None:
        return
    try:
        parse_request(shaped)
    except LineError:
        pass  # one line naming the field: the capture keeps the call without a body


KEYS = st.sampled_from(["type", "role", "content", "text", "call_id", "name", "arguments", "output", "summary", "encrypted_content"])
ITEM_VALUES = st.one_of(
    st.sampled_from(["message", "user", "assistant", "developer", "function_call", "function_call_output", "reasoning",
                     "input_text", "output_text", "c1"]),
    JSON,
)
PARTS = st.lists(st.dictionaries(st.sampled_from(["type", "text"]), ITEM_VALUES, max_size=2), max_size=3)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.dictionaries(KEYS, st.one_of(ITEM_VALUES, PARTS), max_size=5), max_size=5), st.one_of(st.none(), JSON))
def test_any_input_items_are_a_shape_or_none(items, tools):
    body = {"model": "m", "input": items, **({} if tools is None else {"tools": tools})}
    shaped = chat_shape(body)
    if shaped is not None:
        try:
            parse_request(shaped)
        except LineError:
            pass
