"""Fuzz ``prefixbench audit`` on captured OpenAI Responses, chat-completions and (DeepSeek's)
Anthropic Messages calls whose responses the body model keeps (workloads/logs/captured_reply.py),
in claude-trace's envelope or as an llm-path proxy writes them (the body as ``request``):
generated conversations whose later bodies send earlier output items, answered messages or
content blocks back (whole, in part, or not at all), answers as JSON bodies, Responses streams
(final event or output_item.done events), chat-completions chunk streams and Messages event
streams (through OpenRouter, naming the upstream that served them), each edited at random
places, and mutated seed files, end in exit 0 or one clean line
with exit 2 within the bound; never a traceback or a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, optional_keys, texts, to_json_line, weighted, write

RESPONSES = ("https://api.openai.com/v1/responses", "https://api.deepseek.com/v1/responses")
CHAT = ("https://api.deepseek.com/chat/completions", "https://api.openai.com/v1/chat/completions", "https://openrouter.ai/api/v1/chat/completions")
#: The upstream an OpenRouter answer names (its top-level ``provider``), or a field of the wrong type.
served = st.sampled_from((None, None, "DeepSeek", "DeepInfra", " ", "", 7, ["x"], {"a": 1}))
MESSAGES = "https://api.deepseek.com/anthropic/v1/messages"
counts = weighted((st.integers(0, 300_000), 6), (st.sampled_from((-1, 2**63, 1.5, "7", None)), 1))
item = st.one_of(
    optional_keys({"type": st.just("reasoning")}, {"id": texts, "summary": st.lists(st.fixed_dictionaries({"type": st.just("summary_text"), "text": texts}), max_size=2),
                                                   "encrypted_content": st.one_of(texts, st.just(None), st.just(3))}),
    optional_keys({"type": st.just("function_call"), "call_id": st.sampled_from(("c1", "c2", 7))},
                  {"name": st.sampled_from(("shell", None)), "arguments": st.one_of(texts, st.just({"a": 1}))}),
    optional_keys({"type": st.just("message"), "role": st.sampled_from(("assistant", "user", 5))},
                  {"content": st.one_of(texts, st.lists(optional_keys({"type": st.sampled_from(("output_text", "refusal"))}, {"text": texts}), max_size=2))}),
    st.fixed_dictionaries({"type": st.just("function_call_output"), "call_id": st.sampled_from(("c1", "c2")), "output": texts}),
    st.just({"type": "web_search_call", "id": "ws"}),
)
usage = optional_keys({"input_tokens": counts}, {"input_tokens_details": optional_keys({}, {"cached_tokens": counts}), "output_tokens": counts})
chat_usage = optional_keys({"prompt_tokens": counts}, {"prompt_cache_hit_tokens": counts, "prompt_cache_miss_tokens": counts,
                                                       "prompt_tokens_details": optional_keys({}, {"cached_tokens": counts})})
call_delta = optional_keys({}, {"index": st.sampled_from((0, 1, "0", None)), "id": st.sampled_from(("c1", "", 3)),
                                "function": optional_keys({}, {"name": st.sampled_from(("shell", 4)), "arguments": texts})})
delta = optional_keys({}, {"role": st.just("assistant"), "content": st.one_of(texts, st.just(None)), "reasoning_content": texts,
                           "tool_calls": st.one_of(st.lists(call_delta, max_size=2), st.just("x"))})
chat_message = optional_keys({"role": st.just("assistant")}, {"content": st.one_of(texts, st.just(None)), "reasoning_content": st.one_of(texts, st.just(5)),
                                                             "tool_calls": st.one_of(st.just([{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}]), st.just([3]))})


def responses_answer(output: list, use: dict) -> st.SearchStrategy:
    response = {"id": "resp", "output": output, "usage": use}
    return st.sampled_from((
        {"body": response},
        {"body": {"response": response}},
        {"body_raw": "event: response.completed\ndata: " + json.dumps({"type": "response.completed", "response": response}) + "\n\n"},
        {"body_raw": "".join("data: " + json.dumps({"type": "response.output_item.done", "output_index": n, "item": it}) + "\n\n" for n, it in enumerate(output))
         + "data: " + json.dumps({"type": "response.completed", "response": {"usage": use}}) + "\n\n"},
        {"events": [{"type": "response.completed", "response": response}]},
    ))


block = st.one_of(
    optional_keys({"type": st.just("thinking")}, {"thinking": texts, "signature": texts}),
    optional_keys({"type": st.just("text")}, {"text": st.one_of(texts, st.just(3))}),
    optional_keys({"type": st.just("tool_use"), "id": st.just("t1")}, {"name": st.sampled_from(("shell", 2)), "input": st.just({"cmd": "ls"})}),
)
block_delta = st.one_of(
    st.fixed_dictionaries({"type": st.just("text_delta"), "text": texts}),
    st.fixed_dictionaries({"type": st.just("thinking_delta"), "thinking": texts}),
    st.fixed_dictionaries({"type": st.just("signature_delta"), "signature": texts}),
    st.fixed_dictionaries({"type": st.just("input_json_delta"), "partial_json": st.sampled_from(('{"a"', ": 1}", "", "]"))}),
)
messages_usage = optional_keys({"input_tokens": counts}, {"cache_read_input_tokens": counts, "output_tokens": counts})


def messages_answer(content: list, deltas: list, use: dict) -> st.SearchStrategy:
    events = [{"type": "message_start", "message": {"usage": use}}]
    events += [{"type": "content_block_start", "index": n, "content_block": b} for n, b in enumerate(content)]
    events += [{"type": "content_block_delta", "index": n % max(len(content), 1), "delta": d} for n, d in enumerate(deltas)]
    return st.sampled_from((
        {"body": {"content": content, "usage": use}},
        {"body_raw": "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)},
        {"events": events},
    ))


def chat_answer(message: dict, deltas: list, use: dict, upstream: object = None) -> st.SearchStrategy:
    named = {} if upstream is None else {"provider": upstream}
    chunks = [{**named, "choices": [{"index": 0, "delta": d}]} for d in deltas] + [{**named, "choices": [], "usage": use}]
    return st.sampled_from((
        {"body": {**named, "choices": [{"message": message}], "usage": use}},
        {"body_raw": "".join("data: " + json.dumps(c) + "\n\n" for c in chunks) + "data: [DONE]\n\n"},
    ))


def _as_proxy_answer(answer: dict) -> object:
    """An answer as an llm-path proxy keeps it: the JSON body itself, or every SSE line."""
    if "body_raw" in answer:
        return {"stream": True, "sse_lines": [line for line in answer["body_raw"].splitlines() if line.strip()]}
    return answer.get("body", answer)


@st.composite
def conversation(draw: st.DrawFn) -> bytes:
    """Calls of one conversation: each body sends back (some of) the output before it."""
    shape = draw(st.sampled_from(("chat", "responses", "messages")))
    chat = shape == "chat"
    url = draw(st.sampled_from(CHAT if chat else RESPONSES)) if shape != "messages" else MESSAGES
    history: list = [{"role": "user", "content": draw(texts)}]
    # A local proxy of the llm-path kind: the body as "request", the answer or its SSE lines.
    proxied = draw(st.booleans())
    lines = []
    for n in range(draw(st.integers(1, 3))):
        base = {"model": draw(st.sampled_from(("gpt-5.1", "deepseek-v4-flash")))}
        body = {**base, "messages": list(history)} if shape != "responses" else {**base, "instructions": "s", "input": list(history)}
        if shape == "messages":
            content = draw(st.lists(block, max_size=3))
            answer = draw(messages_answer(content, draw(st.lists(block_delta, max_size=3)), draw(messages_usage)))
            sent_back = [{"role": "assistant", "content": content}] if draw(st.booleans()) else []
            after = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": draw(texts)}]}] if draw(st.booleans()) else []
        elif chat:
            message = draw(chat_message)
            answer = draw(chat_answer(message, draw(st.lists(delta, max_size=3)), draw(chat_usage), draw(served)))
            sent_back = [message] if draw(st.booleans()) else []
            after = [{"role": "tool", "tool_call_id": "c1", "content": draw(texts)}] if draw(st.booleans()) else []
        else:
            output = draw(st.lists(item, max_size=3))
            answer = draw(responses_answer(output, draw(usage)))
            sent_back = output[: draw(st.integers(0, len(output)))]
            after = [{"type": "function_call_output", "call_id": "c1", "output": draw(texts)}] if draw(st.booleans()) else []
        if proxied:
            record = {"request": body, "response": _as_proxy_answer(answer), "timestamp": 1748554704.0 + 10 * n,
                      "duration_ms": draw(st.sampled_from((1_500, 0, -5, "7", None))), "error": draw(st.sampled_from((None, None, "ReadTimeout", 3)))}
        else:
            record = {"request": {"timestamp": 1748554704.0 + 10 * n, "method": "POST", "url": url, "body": body},
                      "response": {"timestamp": 1748554705.0 + 10 * n, "status_code": 200, **answer}}
        lines.append(draw(edited(st.just(record))))
        history += [*sent_back, *after]
    return b"\n".join(map(to_json_line, lines))


THINK = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA" + "q" * 64}
CALL = {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "shell", "arguments": "{}"}
SEED = b"\n".join(to_json_line(line) for line in (
    {"request": {"timestamp": 1748554704.0, "url": RESPONSES[0], "body": {"model": "gpt-5.1", "instructions": "s", "input": "hi"}},
     "response": {"status_code": 200, "body": {"output": [THINK, CALL], "usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 0}}}}},
    {"request": {"timestamp": 1748554714.0, "url": RESPONSES[0], "body": {"model": "gpt-5.1", "instructions": "s", "input": [
        {"role": "user", "content": "hi"}, THINK, CALL, {"type": "function_call_output", "call_id": "c1", "output": "ok"}]}},
     "response": {"status_code": 200, "body_raw": "data: " + json.dumps({"type": "response.completed", "response": {
         "output": [], "usage": {"input_tokens": 2100, "input_tokens_details": {"cached_tokens": 2048}}}}) + "\n\n"}},
    {"request": {"timestamp": 1748554724.0, "url": CHAT[0], "body": {"model": "deepseek-v4-flash", "messages": [{"role": "user", "content": "hi"}]}},
     "response": {"status_code": 200, "body_raw": "data: " + json.dumps({"choices": [{"index": 0, "delta": {"reasoning_content": "r", "tool_calls": [
         {"index": 0, "id": "c1", "function": {"name": "shell", "arguments": "{}"}}]}}]}) + "\n\ndata: " + json.dumps(
         {"choices": [], "usage": {"prompt_tokens": 2000, "prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 2000}}) + "\n\ndata: [DONE]\n\n"}},
)) + b"\n"


def test_captured_replies_end_cleanly(importer_examples):
    tally = Tally("captured-reply", bound_s=20)
    path = Path(tempfile.mkdtemp(prefix="fuzz-captured-reply-")) / "capture.jsonl"

    @fuzz_settings(importer_examples)
    @given(data=weighted((conversation(), 3), (mutated(SEED), 1)), output=st.sampled_from(("table", "json")))
    def case(data: bytes, output: str) -> None:
        tally.check(["audit", str(write(path, data)), "--quiet", "--format", output, "--input", "http-capture"])

    case()
    tally.report()
