"""The claude-trace importer: request bodies to requests, usage from JSON or SSE, errors by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.reports.capture import capture_json, capture_table
from prefixbench.workloads.logs.capture_replay import capture_summary, replay_capture
from prefixbench.simulator.render import render_request
from prefixbench.simulator.wire import CacheBreakpoint, Reasoning, Request, Text, ToolCall, ToolResult
from prefixbench.workloads.logs.anthropic_capture import classify_call, parse_request_body, read_capture

T0 = 1_748_554_704.0
SYSTEM = [
    {"type": "text", "text": "You are a CLI.", "cache_control": {"type": "ephemeral"}},
    {"type": "text", "text": "Rules. " * 200, "cache_control": {"type": "ephemeral"}},
]
TOOLS = [{"name": "Read", "description": "Read a file.", "input_schema": {"type": "object", "properties": {}}}]


def make_line(body: dict, usage: dict | None, *, sent: float = 0.0, took: float = 2.0, stream: bool = False, status: int = 200) -> str:
    """One claude-trace line: a request body and a JSON or streamed (SSE) response."""
    response: dict = {"timestamp": T0 + sent + took, "status_code": status}
    if usage is None:
        response["body"] = {"type": "message", "content": []}
    elif stream:
        start = {"type": "message_start", "message": {"usage": {**usage, "output_tokens": 1}}}
        delta = {"type": "message_delta", "usage": {"output_tokens": usage["output_tokens"]}}
        response["body_raw"] = (
            f"event: message_start\ndata: {json.dumps(start)}\n\n"
            "event: ping\ndata: {\"type\": \"ping\"}\n\n"
            f"event: message_delta\ndata: {json.dumps(delta)}\n\n"
        )
    else:
        response["body"] = {"type": "message", "usage": usage}
    return json.dumps({"request": {"timestamp": T0 + sent, "body": body}, "response": response})


def usage(read: int = 0, write: int = 0, uncached: int = 5, output: int = 7) -> dict:
    return {
        "input_tokens": uncached,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": output,
    }


def main_body(*messages: dict, **extra: object) -> dict:
    return {"model": "claude-sonnet-4-20250514", "temperature": 1, "max_tokens": 32000, "system": SYSTEM, "tools": TOOLS, "messages": list(messages), **extra}


def side_body(text: str = "quota") -> dict:
    return {"model": "claude-3-5-haiku-20241022", "max_tokens": 1, "messages": [{"role": "user", "content": text}]}


def parse_body(body: dict) -> Request:
    return parse_request_body(body, "t")


def write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "cap.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_main_request_keeps_blocks_breakpoints_and_family(tmp_path: Path):
    messages = (
        {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "do it", "cache_control": {"type": "ephemeral"}}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "plan", "signature": "sig"},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"z": 1, "a": 2}, "cache_control": {"type": "ephemeral", "ttl": "1h"}},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "body"}], "is_error": True}]},
    )
    body = main_body(*messages, stop_sequences=["END"], thinking={"type": "enabled", "budget_tokens": 4000})
    capture = read_capture(write(tmp_path, make_line(body, usage(write=3000), stream=True)))
    (call,) = capture.calls
    request = call.request
    assert request.envelope.provider == "anthropic"
    assert request.envelope.model == "claude-sonnet-4-20250514"
    assert (request.envelope.temperature, request.envelope.stop, request.envelope.reasoning_effort) == (1.0, ("END",), "thinking=4000")
    assert request.system == "" and request.system_blocks == ("You are a CLI.", "Rules. " * 200)
    assert request.max_tokens == 32000
    assert request.messages[1].blocks[0] == Reasoning("plan", "thinking")
    assert request.messages[1].blocks[1] == ToolCall("toolu_1", "Read", '{"z":1,"a":2}')  # the client's key order
    assert request.messages[2].blocks[0] == ToolResult("toolu_1", (Text("body"),), True)
    assert request.cache_breakpoints == (
        CacheBreakpoint("system", 0),
        CacheBreakpoint("system", 1),
        CacheBreakpoint("messages", 1, 0),
        CacheBreakpoint("messages", 1, 1, "1h"),
    )
    assert call.kind == "main" and request.purpose == "conversation"
    assert (call.usage.cache_write, call.usage.uncached, call.usage.output) == (3000, 5, 7)


def test_ticks_are_ms_from_the_first_request_and_ready_is_the_response_time(tmp_path: Path):
    path = write(
        tmp_path,
        make_line(side_body(), usage(uncached=8), sent=1.5, took=0.25),
        make_line(side_body(), usage(uncached=8), sent=0.5, took=1.0),
    )
    calls = read_capture(path).calls
    assert [(c.index, c.line, c.tick, c.ready_tick) for c in calls] == [(0, 1, 1000, 1250), (1, 2, 0, 1000)]


def test_json_and_streamed_usage_agree(tmp_path: Path):
    plain, streamed = read_capture(
        write(tmp_path, make_line(side_body(), usage(uncached=96, output=9)), make_line(side_body(), usage(uncached=96, output=9), stream=True))
    ).calls
    assert plain.usage == streamed.usage
    assert streamed.usage.output == 9  # from the last message_delta, not message_start


def test_one_hour_write_split_is_read_when_reported(tmp_path: Path):
    split = {**usage(write=300), "cache_creation": {"ephemeral_5m_input_tokens": 100, "ephemeral_1h_input_tokens": 200}}
    (call,) = read_capture(write(tmp_path, make_line(side_body(), split))).calls
    assert call.usage.cache_write_1h == 200


def test_calls_are_classified_main_side_and_compaction(tmp_path: Path):
    summary = "Your task is to create a detailed summary of the conversation so far, paying close attention."
    path = write(
        tmp_path,
        make_line(side_body("Please write a 5-10 word title the following conversation:"), usage()),
        make_line(main_body({"role": "user", "content": "fix the bug"}), usage()),
        make_line(main_body({"role": "user", "content": [{"type": "text", "text": summary}]}), usage()),
    )
    kinds = [(call.kind, call.request.purpose) for call in read_capture(path).calls]
    assert kinds == [("side", "conversation"), ("main", "conversation"), ("compaction", "compaction")]


def test_classifier_looks_at_the_last_user_text_only():
    request = parse_body(main_body(
        {"role": "user", "content": [{"type": "text", "text": "The conversation is summarized below: Summary of the conversation"}]},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "delete the folder"},
    ))
    assert classify_call(request) == "main"


def test_top_level_cache_control_turns_on_automatic_mode():
    request = parse_body({**side_body("hello"), "cache_control": {"type": "ephemeral", "ttl": "1h"}})
    assert request.auto_cache == "1h"
    (mark,) = render_request(request).breakpoints
    assert (mark.unit_idx, mark.block_idx) == (0, 0)


def test_tool_cache_control_and_non_text_blocks():
    body = {
        "model": "claude-sonnet-4-20250514",
        "tools": [{**TOOLS[0], "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "r", "cache_control": {"type": "ephemeral"}}]},
        ]}],
    }
    request = parse_body(body)
    assert request.cache_breakpoints == (CacheBreakpoint("tools", 0), CacheBreakpoint("messages", 2, 0))
    image, redacted, _ = request.messages[0].blocks
    assert isinstance(image, Text) and image.text.startswith("[image image/png sha256:")
    assert redacted == Reasoning("opaque", "redacted_thinking")


def test_non_2xx_lines_are_skipped_not_replayed(tmp_path: Path):
    capture = read_capture(write(tmp_path, make_line(side_body(), None, status=529), make_line(side_body(), usage())))
    assert capture.skipped == ((1, "HTTP 529"),)
    assert [call.line for call in capture.calls] == [2]


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ('{"request": {"timestamp": 1, "body": {', "invalid JSON"),
        (json.dumps({"request": {"timestamp": 1}, "response": {}}), "no request body"),
        (make_line(side_body(), None), "response has no usage"),
        (json.dumps({"request": {"timestamp": 1, "body": side_body()}}), "no response, so no usage"),
        (json.dumps({"request": {"body": side_body()}, "response": {}}), "request has no numeric timestamp"),
        (make_line({"messages": []}, usage()), "request body has no model"),
        (make_line({**side_body(), "messages": [{"role": "tool", "content": "x"}]}, usage()), "message 0: role must be"),
        (
            make_line(main_body({"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral", "ttl": "2h"}}]}), usage()),
            'message 0 block 0: cache_control ttl must be "5m" or "1h"',
        ),
        (
            make_line(main_body({"role": "user", "content": [{"type": "text", "text": str(i), "cache_control": {"type": "ephemeral"}} for i in range(3)]}), usage()),
            "5 cache_control breakpoints, at most 4 allowed",
        ),
        (make_line(side_body(), {"input_tokens": -1}), "usage.input_tokens is not a non-negative integer"),
    ],
)
def test_bad_lines_name_file_line_and_what(tmp_path: Path, line: str, what: str):
    # A good first line, then the bad one: the error names line 2 on one line.
    path = write(tmp_path, make_line(side_body(), usage()), line)
    with pytest.raises(UserError) as caught:
        read_capture(path)
    text = str(caught.value)
    assert text.startswith(f"{path}:2: {what}")
    assert "\n" not in text


def test_malformed_sse_and_missing_file(tmp_path: Path):
    line = json.dumps({"request": {"timestamp": 1, "body": side_body()}, "response": {"status_code": 200, "body_raw": "event: message_start\ndata: {oops\n\n"}})
    with pytest.raises(UserError, match=r"cap.jsonl:1: malformed SSE data"):
        read_capture(write(tmp_path, line))
    with pytest.raises(UserError, match="absent.jsonl: cannot read"):
        read_capture(tmp_path / "absent.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(UserError, match="no served request/response pairs"):
        read_capture(empty)


def test_replay_reports_predicted_beside_reported(tmp_path: Path):
    # Two turns of a main conversation: the second reads what the first wrote.
    first = {"role": "user", "content": [{"type": "text", "text": "start " * 300, "cache_control": {"type": "ephemeral"}}]}
    second = (
        {"role": "user", "content": [{"type": "text", "text": "start " * 300}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok", "cache_control": {"type": "ephemeral"}}]},
        {"role": "user", "content": [{"type": "text", "text": "next", "cache_control": {"type": "ephemeral"}}]},
    )
    path = write(
        tmp_path,
        make_line(main_body(first), usage(write=1000), sent=0),
        make_line(side_body(), usage(uncached=8), sent=0.5),
        make_line(main_body(*second), usage(read=1000, write=20), sent=3),
    )
    rows = replay_capture(path, chars_per_token=1.0)
    assert [row.kind for row in rows] == ["main", "side", "main"]
    assert rows[2].predicted_cache_read == rows[0].predicted_cache_write > 0
    assert rows[1].predicted_cache_read == rows[1].predicted_cache_write == 0
    records = json.loads(capture_json(rows))
    assert set(records[0]) >= {
        "index", "model", "predicted_cache_read", "reported_cache_read", "predicted_cache_write",
        "reported_cache_write", "predicted_uncached", "reported_uncached",
    }
    assert records[2]["reported_cache_read"] == 1000
    summary = capture_summary(rows)
    assert (summary.num_main_after_first, summary.num_side, summary.num_side_predicted_uncached) == (1, 1, 1)
    table = capture_table(rows)
    assert "main requests after the first:" in table and "side calls: 1/1 predicted fully uncached" in table


def test_a_capture_of_one_main_request_claims_no_share(tmp_path: Path):
    # No main request after the first: 0/0 is no share to check (before: printed as 100.0%).
    path = write(tmp_path, make_line(main_body({"role": "user", "content": "hi"}), usage(write=0), sent=0))
    table = capture_table(replay_capture(path))
    assert "main requests after the first: 0/0 with cache read within 3% of reported (none to check; target >= 90%)" in table


def test_an_inline_system_message_is_part_of_the_prefix_where_it_stands(tmp_path: Path):
    # The Messages API takes a system message between the turns (recorded from claude-opus-4-8 in
    # pydantic-ai's tests): right after a user message, last or before an assistant message (the
    # docs' placement; after an assistant's text the API answers 400). Its cache_control is a
    # breakpoint like any message block's. Refused before ("message 3: role must be user or assistant").
    inline = {"role": "system", "content": [{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}]}
    body = {**main_body({"role": "user", "content": "start " * 400}, {"role": "assistant", "content": "ok"},
                        {"role": "user", "content": "go on"}, inline), "model": "claude-opus-4-8"}
    request = parse_body(body)
    assert [m.role for m in request.messages] == ["user", "assistant", "user", "system"]
    assert request.messages[3].blocks == (Text("be brief"),)
    assert request.cache_breakpoints[-1] == CacheBreakpoint("messages", 0, 3)
    path = write(tmp_path, make_line(body, usage(write=1_600, uncached=2)), make_line(body, usage(read=1_600, uncached=2), sent=5))
    capture = read_capture(path)
    assert [(c.usage.cache_write_5m, c.usage.cache_read) for c in capture.calls] == [(1_600, 0), (0, 1_600)]


def test_a_system_message_after_the_last_user_message_leaves_its_compaction_instruction_seen():
    # An inline system message may close the messages; the compaction instruction is still the last
    # user message's. Before, only a user message last was looked at: read as a main call.
    summary = "Your task is to create a detailed summary of the conversation so far, paying close attention."
    request = parse_body({**main_body(
        {"role": "user", "content": "fix the bug"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": [{"type": "text", "text": summary}]},
        {"role": "system", "content": [{"type": "text", "text": "answer in English"}]},
    ), "model": "claude-opus-4-8"})
    assert classify_call(request) == "compaction"
    # A user message that is not the last turn (an assistant answered it) is still not looked at.
    answered = parse_body({**main_body(
        {"role": "user", "content": [{"type": "text", "text": summary}]},
        {"role": "system", "content": "answer in English"},
        {"role": "assistant", "content": "Summary:"},
    ), "model": "claude-opus-4-8"})
    assert classify_call(answered) == "main"
