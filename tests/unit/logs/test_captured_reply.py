"""Output caching on captured bodies (workloads/logs/captured_reply.py, the body replay of
workloads/audit/core.py): a provider whose cache keeps output (OpenAI, DeepSeek) holds each
captured call's prompt + response, so the next body that sends the response back byte for byte
reads into it; one that does not (the reasoning dropped) reads the previous prompt only.

Token counts are the heuristic's (4 bytes of the rendering a token), worked out below from the
rendered sizes so each number can be checked by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.simulator.render import render_message, render_request
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.captured_reply import reply_messages
from prefixbench.workloads.logs.chat_completions import parse_request
from prefixbench.workloads.logs.responses_body import chat_shape
from tests.unit.audit.fixtures import capture_line, write_jsonl

RESPONSES = "https://api.openai.com/v1/responses"
CHAT = "https://api.deepseek.com/chat/completions"
SHELL = {"type": "function", "name": "shell", "description": "Run a command.", "parameters": {"type": "object"}}
BASE = {"model": "gpt-5.1", "instructions": "You are a coding agent. " * 200, "tools": [SHELL],
        "reasoning": {"effort": "high"}, "include": ["reasoning.encrypted_content"]}
ASK = {"role": "user", "content": [{"type": "input_text", "text": "Fix the failing test."}]}
THINK_1 = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB" + "q" * 1994}
CALL_1 = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "shell", "arguments": '{"cmd": "pytest -x"}', "status": "completed"}
RESULT_1 = {"type": "function_call_output", "call_id": "call_1", "output": "E   assert 1 == 2\n" * 20}
THINK_2 = {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAAB" + "z" * 994}
ANSWER_2 = {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Fixed: the test expected 2.", "annotations": []}]}


def size(request_or_message: object) -> int:
    """Bytes of a rendered body or message (4 a token)."""
    if hasattr(request_or_message, "envelope"):
        return render_request(request_or_message).num_bytes  # type: ignore[arg-type]
    return len(render_message(request_or_message).data)  # type: ignore[arg-type]


def responses_call(n: int, items: list[dict], output: list[dict], total: int, cached: int, *, stream: bool = False) -> dict:
    response = {"id": f"resp_{n}", "output": output,
                "usage": {"input_tokens": total, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": 400}}
    if stream:  # the stream's final event holds the whole response
        event = {"type": "response.completed", "response": response}
        answer = {"body_raw": f"event: response.completed\ndata: {json.dumps(event)}\n\n"}
    else:
        answer = {"body": response}
    return capture_line({**BASE, "input": items}, answer, url=RESPONSES, sent=1748554704.0 + 30 * n)


def test_a_responses_call_reads_the_previous_prompt_and_response_it_sent_back(tmp_path: Path) -> None:
    # Codex-style: every output item (reasoning with its encrypted content, the function call,
    # the message) is sent back in the next call's input, after the previous prompt.
    lines = [
        responses_call(0, [ASK], [THINK_1, CALL_1], 1245, 0, stream=True),
        responses_call(1, [ASK, THINK_1, CALL_1, RESULT_1], [THINK_2, ANSWER_2], 1917, 1664),
        responses_call(2, [ASK, THINK_1, CALL_1, RESULT_1, THINK_2, ANSWER_2, {"role": "user", "content": "Thanks."}], [], 2218, 2176),
    ]
    path = write_jsonl(tmp_path / "codex.jsonl", lines)
    requests, _ = load_trace([path])
    # Prompt 1 renders to 4,977 bytes (1,245 tokens) and its response (one assistant message:
    # the reasoning, then the call) to 2,180; prompt 2 is those 7,157 + the tool output, 7,666
    # bytes (1,917 tokens), and its response 1,144 more; prompt 3 is 8,870 bytes (2,218 tokens).
    assert [size(r.body) for r in requests] == [4977, 7666, 8870]
    assert [[size(m) for m in r.reply] for r in requests] == [[2180], [1144], []]
    result = run_audit([path])
    rows = result.rows
    # Call 2 reads into the kept 7,157 bytes, 1,789 whole tokens: 1024 + 5 * 128 = 1,664 (prompt
    # 1 alone: 1,152); call 3 into 7,666 + 1,144 = 8,810 bytes, 2,202 tokens: 2,176 (prompt 2
    # alone: 1,792).
    assert [row.predicted_cache_read for row in rows] == [0, 1664, 2176]
    # What a miss is measured against stays the previous prompt: floor128(1,245), floor128(1,917).
    assert [row.expected_cache_read for row in rows] == [0, 1152, 1792]
    assert [row.lost_tokens for row in rows] == [0, 0, 0]
    assert all(row.read_within for row in rows[1:])
    assert any(note.startswith("2 captured call(s) answered by a cache that keeps output") and "for 2 of them" in note
               for note in result.notes)


def test_a_next_body_that_drops_the_reasoning_reads_only_the_previous_prompt(tmp_path: Path) -> None:
    # The same first call, but the agent sends back the function call without its reasoning
    # item: the kept response is not what the next body holds past prompt 1 (the renderings part
    # a few bytes into the assistant message), so only floor128(1,244 + those few) = 1,152 is read.
    lines = [
        responses_call(0, [ASK], [THINK_1, CALL_1], 1245, 0),
        responses_call(1, [ASK, CALL_1, RESULT_1], [], 1402, 1152),
    ]
    result = run_audit([write_jsonl(tmp_path / "dropped.jsonl", lines)])
    rows = result.rows
    assert [row.predicted_cache_read for row in rows] == [0, 1152]
    assert rows[1].lost_tokens == 0 and rows[1].read_within
    assert any(note.startswith("1 captured call(s)") and "for 0 of them" in note for note in result.notes)


# DeepSeek's chat completions, thinking mode with a tool call: the answer streams its
# reasoning_content, then the call in pieces; the agent replays the reasoning in the tool loop.
SYSTEM = {"role": "system", "content": "You are a coding agent. " * 200}
TOOLS = [{"type": "function", "function": {"name": "shell", "description": "Run a command.", "parameters": {"type": "object"}}}]
USER = {"role": "user", "content": "Fix the failing test."}
REASONING = "The test " + "fails; run it. " * 100
SENT_BACK = {"role": "assistant", "content": None, "reasoning_content": REASONING,
             "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": '{"cmd": "pytest -x"}'}}]}
TOOL_RESULT = {"role": "tool", "tool_call_id": "call_1", "content": "E   assert 1 == 2\n" * 20}


def deepseek_usage(hit: int, miss: int) -> dict:
    return {"prompt_tokens": hit + miss, "prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": miss, "completion_tokens": 300}


def streamed(*deltas: dict, usage: dict) -> dict:
    chunks = [{"choices": [{"index": 0, "delta": delta}]} for delta in deltas] + [{"choices": [], "usage": usage}]
    return {"body_raw": "".join(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks) + "data: [DONE]\n\n"}


def deepseek_capture(tmp_path: Path, sent_back: dict, hit: int) -> Path:
    first = streamed(
        {"role": "assistant", "reasoning_content": "The test "}, {"reasoning_content": "fails; run it. " * 100},
        {"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "shell", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '{"cmd": '}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": '"pytest -x"}'}}]},
        usage=deepseek_usage(0, 1245),
    )
    second = {"body": {"choices": [{"message": {"role": "assistant", "content": "Done."}}], "usage": deepseek_usage(hit, 1794 - hit)}}
    body = {"model": "deepseek-v4-flash", "tools": TOOLS}
    return write_jsonl(tmp_path / "deepseek.jsonl", [
        capture_line({**body, "messages": [SYSTEM, USER], "stream": True}, first, url=CHAT),
        capture_line({**body, "messages": [SYSTEM, USER, sent_back, TOOL_RESULT]}, second, url=CHAT, sent=1748554764.0),
    ])


def test_deepseek_reads_to_the_unit_at_the_end_of_the_replayed_output(tmp_path: Path) -> None:
    path = deepseek_capture(tmp_path, SENT_BACK, 1536)
    requests, _ = load_trace([path])
    # The stream's deltas join into the message the agent sends back: reasoning first, then the call.
    assert requests[0].reply == parse_request({"model": "m", "messages": [USER, SENT_BACK]}).messages[1:]
    # Prompt 1 is 4,977 bytes (1,245 tokens), the reply 1,689 more: the unit at the end of the
    # output ends at byte 6,666, 1,666 whole tokens, read in whole units of the step of a read
    # of 2025-05 (64, before V4): 26 x 64 = 1,664 (every read DeepSeek reports is whole units).
    assert [size(r.body) for r in requests] == [4977, 7175]
    assert size(requests[0].reply[0]) == 1689
    rows = run_audit([path]).rows
    assert [row.predicted_cache_read for row in rows] == [0, 1664]
    # The previous prompt, in the rules' steps: 64 tokens for a read of 2025-05, before V4.
    assert rows[1].expected_cache_read == 1216


def test_deepseek_without_the_replayed_reasoning_reads_the_previous_prompt(tmp_path: Path) -> None:
    dropped = {key: value for key, value in SENT_BACK.items() if key != "reasoning_content"}
    rows = run_audit([deepseek_capture(tmp_path, dropped, 1152)]).rows
    # Prompt 1's unit, 1,244 tokens, in whole 64-token units: 19 x 64 = 1,216.
    assert [row.predicted_cache_read for row in rows] == [0, 1216]


def test_the_reply_comes_from_the_stream_items_and_only_when_it_can_be_rebuilt() -> None:
    body = {**BASE, "input": [ASK]}
    shaped = chat_shape(body)
    # No final event: the output_item.done events, in output_index order.
    events = [{"type": "response.output_item.done", "output_index": 1, "item": CALL_1},
              {"type": "response.output_item.done", "output_index": 0, "item": THINK_1}]
    from_items = reply_messages(body, shaped, {}, [json.dumps(e) for e in events])
    from_body = reply_messages(body, shaped, {"body": {"output": [THINK_1, CALL_1]}}, [])
    assert from_items == from_body and len(from_body) == 1
    # A built-in tool call is not what the body reader rebuilds; no response, no reply.
    assert reply_messages(body, shaped, {"body": {"output": [{"type": "web_search_call", "id": "ws_1"}]}}, []) == ()
    assert reply_messages(body, shaped, {"body": {"error": "x"}}, ["[DONE]", "{"]) == ()
    # A prompt that ends inside the model's turn (its own function call last) could have its
    # response merged into that turn: not read.
    inside = {**BASE, "input": [ASK, CALL_1]}
    assert reply_messages(inside, chat_shape(inside), {"body": {"output": [ANSWER_2]}}, []) == ()


def test_a_provider_whose_cache_keeps_no_output_gets_no_reply(tmp_path: Path) -> None:
    # Grok (xAI) through the same endpoint shape: its replayed bodies keep no output (measured
    # through OpenRouter; the chain model reads a reply an agent sends back), so nothing is read.
    line = capture_line({**BASE, "model": "grok-4", "input": [ASK]}, {"body": {"output": [THINK_1, CALL_1], "usage": {
        "input_tokens": 1245, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 9}}}, url="https://api.x.ai/v1/responses")
    (request,), _ = load_trace([write_jsonl(tmp_path / "x.jsonl", [line])])
    assert request.provider == "xai" and request.body is not None and request.reply == ()


def test_deepseek_anthropic_endpoint_reads_into_the_streamed_response_sent_back(tmp_path: Path) -> None:
    # DeepSeek's Anthropic-compatible endpoint: the stream builds a thinking block (with its
    # signature), then a tool_use whose input arrives as JSON pieces; the next body sends the
    # assistant turn back as those blocks, then the tool result.
    url = "https://api.deepseek.com/anthropic/v1/messages"
    events = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 1245, "cache_read_input_tokens": 0, "output_tokens": 0}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": REASONING}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"cmd": '}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '"pytest -x"}'}},
        {"type": "message_delta", "usage": {"output_tokens": 300}},
    ]
    stream = {"body_raw": "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)}
    turn = {"role": "assistant", "content": [{"type": "thinking", "thinking": REASONING, "signature": "sig"},
                                             {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"cmd": "pytest -x"}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "E   assert 1 == 2\n" * 20}]}
    tools = [{"name": "shell", "description": "Run a command.", "input_schema": {"type": "object"}}]
    body = {"model": "deepseek-v4-flash", "max_tokens": 4096, "system": "You are a coding agent. " * 200, "tools": tools}
    answered = {"body": {"content": [{"type": "text", "text": "Done."}],
                         "usage": {"input_tokens": 100, "cache_read_input_tokens": 1600, "output_tokens": 5}}}
    path = write_jsonl(tmp_path / "ds-anthropic.jsonl", [
        capture_line({**body, "messages": [{"role": "user", "content": "Fix the failing test."}]}, stream, url=url),
        capture_line({**body, "messages": [{"role": "user", "content": "Fix the failing test."}, turn, result]}, answered, url=url, sent=1748554764.0),
    ])
    requests, _ = load_trace([path])
    first, second = (size(r.body) for r in requests)
    reply = size(requests[0].reply[0])
    # The next body starts with prompt 1 + the reply exactly; the read is the unit at its end.
    assert [size(m) for m in requests[1].body.messages[:2]] == [size(m) for m in (*requests[0].body.messages, requests[0].reply[0])]
    # Prompt 1 is 4,977 bytes, the reply 1,680: the unit at the end of the output ends at byte
    # 6,657, 1,664 whole model tokens (prompt 1 alone: 1,244).
    assert (first, reply, second) == (4977, 1680, 7167)
    rows = run_audit([path]).rows
    # Counted as the provider counted the two prompts (1,245 and 1,700 reported for 1,244 and
    # 1,791 model tokens): 1,245 + (1,664 - 1,244) x 455 / 547 = 1,594, in whole 64-token units
    # (a read of 2025-05, before V4): 1,536.
    assert [row.predicted_cache_read for row in rows] == [0, 1536]


def test_an_event_whose_type_is_no_string_is_passed_over() -> None:
    # The fuzzer's case: a stream event whose "type" is a list stopped the audit with a TypeError
    # (a list is no set member). It is no final event; the output items come from the others.
    body = {**BASE, "input": [ASK]}
    events = [{"type": [], "response": {"output": [ANSWER_2]}},
              {"type": "response.output_item.done", "output_index": 0, "item": THINK_1},
              {"type": "response.output_item.done", "output_index": 1, "item": CALL_1}]
    from_events = reply_messages(body, chat_shape(body), {}, [json.dumps(e) for e in events])
    assert from_events == reply_messages(body, chat_shape(body), {"body": {"output": [THINK_1, CALL_1]}}, [])


def test_a_reply_holding_a_lone_surrogate_is_not_kept(tmp_path: Path) -> None:
    # Found by the fuzzer: a captured answer whose text is "\ud800" (valid JSON, not Unicode) was
    # kept as the reply and failed with a UnicodeEncodeError when the cache rendered it. A text
    # that cannot be encoded was never sent back: the reply is not kept, the call is audited.
    line = ('{"request": {"timestamp": 1748554704.0, "method": "POST", "url": "https://api.deepseek.com/chat/completions", '
            '"body": {"model": "deepseek-chat", "messages": [{"role": "user", "content": "hi"}]}}, '
            '"response": {"timestamp": 1748554705.0, "status_code": 200, "body": {"choices": [{"message": '
            '{"content": "\\ud800", "role": "assistant"}}], "usage": {"prompt_tokens": 10, "prompt_cache_hit_tokens": 0, '
            '"prompt_cache_miss_tokens": 10, "completion_tokens": 1}}}}\n')
    path = tmp_path / "capture.jsonl"
    path.write_text(line, encoding="utf-8")
    (request,) = load_trace([path])[0]
    assert request.reply == ()
    assert [row.reported_uncached for row in run_audit([path]).rows] == [10]
    new = [{"role": "assistant", "content": "\ud800"}]
    assert reply_messages({"messages": []}, {"model": "m"}, {"body": {"choices": [{"message": new[0]}]}}, []) == ()
