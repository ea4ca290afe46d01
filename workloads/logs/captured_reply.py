"""A captured call's response, as the next request of its conversation sends it back.

A provider whose cache keeps output (``ProviderRules.caches_output``) serves a next prompt past
this prompt, into this response, when that prompt starts with this prompt and the response. To
replay that on request bodies, the response is put in the shape the next body has, and read by
the same body reader, so a byte comparison of the renderings tells how much of it was sent back:

* **Responses API**: the response's ``output`` items (``message``, ``reasoning`` with its
  ``encrypted_content``, ``function_call``) appended to the body's ``input`` items, the whole
  read by :func:`~prefixbench.workloads.logs.responses_body.chat_shape`. The items come from the
  JSON body's ``output`` (or a wrapper's ``response.output``), else from the stream's final
  event (``response.completed``, ``response.incomplete``), else from its
  ``response.output_item.done`` events in order.
* **chat completions**: ``choices[0].message`` (``content``, ``tool_calls``, the reasoning field
  DeepSeek and others answer with, ``reasoning_content``) appended to ``messages``: from the JSON
  body, else joined from the stream's chunks (the deltas' text, reasoning and tool calls by
  ``index``).
* **Anthropic Messages** (DeepSeek's Anthropic-compatible endpoint): the response's ``content``
  blocks (``thinking`` with its signature, ``text``, ``tool_use``) as an assistant message
  appended to ``messages``, read by
  :func:`~prefixbench.workloads.logs.anthropic_capture.parse_request_body`: from the JSON body,
  else built from the stream's ``content_block_start`` and ``content_block_delta`` events
  (text, thinking, signature, and the tool input's JSON pieces).

The reply is the messages the extended body has beyond the prompt's; only they are read (a
chat message reads the same alone as after the prompt, and so do output items after an input
that ends outside the model's turn). None is returned (an empty tuple) when the capture does
not hold the response, when it holds an item the body reader cannot rebuild (a built-in tool
call, a refusal, a text with a lone surrogate: JSON, not Unicode, never sent back), or when the prompt ends inside an assistant turn the response could continue
(its last input item a function call, a reasoning item or an assistant message).
"""

from __future__ import annotations

import json
from typing import Any

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import REASONING_FIELDS, Message
from prefixbench.workloads.logs.anthropic_capture import parse_request_body
from prefixbench.workloads.logs.chat_completions import LineError, parse_request
from prefixbench.workloads.logs.reading import check_tree
from prefixbench.workloads.logs.responses_body import chat_shape

#: A stream's final event that carries the whole response (its ``output`` items).
_FINAL_EVENTS = frozenset({"response.completed", "response.incomplete"})


def reply_messages(body: dict[str, Any], shaped: dict[str, Any], response: dict[str, Any], texts: list[str]) -> tuple[Message, ...]:
    """The captured response of an OpenAI-shaped call as the next request sends it back.

    Args:
        body: the request body as captured (Responses or chat completions).
        shaped: that body in the chat-completions shape the audit parsed (``body`` itself for
            chat completions).
        response: the capture's response record (``body``, or a stream in ``body_raw`` / ``events``).
        texts: the stream's event data, in order (JSON text each).
    """
    answer = _json_body(response.get("body"))
    if isinstance(body.get("messages"), list):
        message = _chat_message(answer, texts)
        new = [] if message is None else [message]
    else:
        items = _output_items(answer, texts)
        # After a prompt that ends outside the model's turn (a user message, a tool output) the
        # output items start a turn of their own: they read alone as they do after the prompt.
        alone = chat_shape({"model": body.get("model"), "input": items}) if items and _ends_outside_a_turn(body) else None
        new = alone["messages"] if alone is not None else []
    # Each new message reads alone as it does after the prompt (a chat message is read by
    # itself), so only they are parsed, not the whole conversation again.
    try:
        check_tree(new, "reply", max_depth=None)
        read = parse_request({"model": shaped.get("model"), "messages": new}).messages if new else ()
    except (LineError, UserError, RecursionError):
        return ()
    return read if len(read) == len(new) else ()  # a leading system message is not a reply


def messages_reply(body: dict[str, Any], response: dict[str, Any], texts: list[str]) -> tuple[Message, ...]:
    """The captured response of an Anthropic Messages-shaped call as the next request sends it
    back (see :func:`reply_messages`): one assistant message, read alone (none after a prompt
    that ends with an assistant turn, which the response continues)."""
    given = body.get("messages")
    last = given[-1] if isinstance(given, list) and given else None
    content = _content_blocks(_json_body(response.get("body")), texts)
    if not content or not isinstance(last, dict) or last.get("role") == "assistant":
        return ()
    try:
        check_tree(content, "reply", max_depth=None)
        return parse_request_body({"model": body.get("model"), "messages": [{"role": "assistant", "content": content}]}, "reply").messages
    except (UserError, RecursionError):
        return ()


def _content_blocks(answer: dict[str, Any] | None, texts: list[str]) -> list[dict[str, Any]] | None:
    """A Messages response's content blocks: from its JSON body, else built from its stream."""
    if answer is not None and isinstance(answer.get("content"), list):
        return answer["content"]
    blocks: dict[int, dict[str, Any]] = {}
    pieces: dict[int, list[str]] = {}
    for data in _events(texts):
        index = data.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            continue
        if data.get("type") == "content_block_start" and isinstance(data.get("content_block"), dict):
            blocks[index] = dict(data["content_block"])
            continue
        delta = data.get("delta")
        if data.get("type") != "content_block_delta" or index not in blocks or not isinstance(delta, dict):
            continue
        block = blocks[index]
        for kind, key in _DELTAS:
            if delta.get("type") == kind and isinstance(delta.get(key), str):
                if key == "partial_json":
                    pieces.setdefault(index, []).append(delta[key])
                else:
                    before = block.get(key)
                    block[key] = (before if isinstance(before, str) else "") + delta[key]
    for index, parts in pieces.items():
        joined = "".join(parts)
        try:
            blocks[index]["input"] = json.loads(joined) if joined.strip() else {}
        except (ValueError, RecursionError):  # a stream cut mid-call: not what the agent sends back
            return None
    return [blocks[index] for index in sorted(blocks)] or None


#: A stream's content deltas: (delta type, the field it carries; added to the block's field of
#: that name, the tool input's JSON pieces joined apart).
_DELTAS = (("text_delta", "text"), ("thinking_delta", "thinking"), ("signature_delta", "signature"),
           ("input_json_delta", "partial_json"))


def _json_body(body: object) -> dict[str, Any] | None:
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            return None
    return body if isinstance(body, dict) else None


def _ends_outside_a_turn(body: dict[str, Any]) -> bool:
    """Whether a Responses body's input ends with a user, system or tool-output item (not inside
    an assistant turn its output could continue)."""
    given = body.get("input")
    if isinstance(given, str):
        return True
    last = given[-1] if isinstance(given, list) and given else None
    if not isinstance(last, dict):
        return False
    kind = last.get("type", "message")
    return kind == "function_call_output" or (kind == "message" and last.get("role") in ("user", "system", "developer"))


def _output_items(answer: dict[str, Any] | None, texts: list[str]) -> list[Any] | None:
    """A Responses call's output items: from its JSON body, else from its stream."""
    if answer is not None:
        wrapped = answer.get("response")
        for record in (answer, wrapped if isinstance(wrapped, dict) else {}):
            if isinstance(record.get("output"), list):
                return record["output"]
    final: list[Any] | None = None
    done: list[tuple[int, int, Any]] = []
    for n, data in enumerate(_events(texts)):
        kind = data.get("type")
        inner = data.get("response")
        if isinstance(kind, str) and kind in _FINAL_EVENTS and isinstance(inner, dict) and isinstance(inner.get("output"), list):
            final = inner["output"]
        elif kind == "response.output_item.done" and isinstance(data.get("item"), dict):
            index = data.get("output_index")
            done.append((index if isinstance(index, int) and not isinstance(index, bool) else n, n, data["item"]))
    if final is not None:
        return final
    return [item for _, _, item in sorted(done, key=lambda found: found[:2])] or None


def _chat_message(answer: dict[str, Any] | None, texts: list[str]) -> dict[str, Any] | None:
    """A chat-completions call's answer as an assistant message: from its JSON body, else from its
    stream's chunks."""
    if answer is not None and isinstance(answer.get("choices"), list):
        choice = answer["choices"][0] if answer["choices"] else None
        message = choice.get("message") if isinstance(choice, dict) else None
        return _assistant(message) if isinstance(message, dict) else None
    return _joined_chunks(texts)


def _assistant(message: dict[str, Any]) -> dict[str, Any]:
    """The fields of an answered message a next request sends back (role, content, reasoning, calls)."""
    out: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    for field in REASONING_FIELDS:
        if message.get(field) is not None:
            out[field] = message[field]
            break
    if message.get("tool_calls"):
        out["tool_calls"] = message["tool_calls"]
    return out


def _joined_chunks(texts: list[str]) -> dict[str, Any] | None:
    """The assistant message a chat-completions stream spells out, delta by delta (choice 0)."""
    content: list[str] = []
    reasoning: dict[str, list[str]] = {}
    calls: dict[int, dict[str, Any]] = {}
    seen = False
    for data in _events(texts):
        choices = data.get("choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if not isinstance(delta, dict) or (isinstance(choice.get("index"), int) and choice["index"] != 0):  # type: ignore[union-attr]
            continue
        seen = True
        if isinstance(delta.get("content"), str):
            content.append(delta["content"])
        for field in REASONING_FIELDS:
            if isinstance(delta.get(field), str):
                reasoning.setdefault(field, []).append(delta[field])
        for n, call in enumerate(delta.get("tool_calls") or []):
            if not isinstance(call, dict):
                return None
            index = call.get("index", n)
            if not isinstance(index, int) or isinstance(index, bool):
                return None
            joined = calls.setdefault(index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
            if isinstance(call.get("id"), str) and call["id"]:
                joined["id"] = call["id"]
            fn = call.get("function")
            if isinstance(fn, dict):
                for key in ("name", "arguments"):
                    if isinstance(fn.get(key), str):
                        joined["function"][key] += fn[key]
    if not seen:
        return None
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content)}
    for field in REASONING_FIELDS:
        if field in reasoning:
            message[field] = "".join(reasoning[field])
            break
    if calls:
        message["tool_calls"] = [calls[index] for index in sorted(calls)]
    return message


def _events(texts: list[str]) -> list[dict[str, Any]]:
    """The stream's events that are JSON objects ([DONE] and the rest left out)."""
    out = []
    for text in texts:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            continue
        if isinstance(data, dict):
            out.append(data)
    return out
