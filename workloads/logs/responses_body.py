"""An OpenAI Responses request body in the chat-completions shape, so a capture's Responses calls
are replayed and body-diffed like its chat-completions calls.

A Responses body (``POST /v1/responses``) carries ``instructions`` (the system prompt), ``input``
(a string, or a list of items), ``tools`` (flat: ``{"type": "function", "name", "description",
"parameters"}``), ``reasoning.effort``, ``temperature`` and ``max_output_tokens``. The items map as
follows:

* a message (``{"role", "content"}``, ``type`` ``message`` or absent): the same role (``developer``
  reads as ``system``), its ``input_text`` / ``output_text`` / ``text`` parts joined;
* ``function_call`` (``call_id``, ``name``, ``arguments``): a tool call on the assistant message
  the model's turn is building (consecutive calls and a preceding assistant text are one turn);
* ``function_call_output`` (``call_id``, ``output``): a tool message;
* ``reasoning`` (``encrypted_content``, else the ``summary`` texts): the reasoning block of the
  next assistant message, as it was sent back.

A body that does not carry its whole prompt cannot be rebuilt, and none is returned: one naming
``previous_response_id`` or ``conversation`` (the server holds the earlier turns), or holding an
item of another type (built-in tool calls, item references, images, a compaction item).
"""

from __future__ import annotations

from typing import Any

#: Content part types whose text is the message's.
_TEXT_PARTS = frozenset({"input_text", "output_text", "text"})
#: Message roles a Responses input may carry.
_ROLES = frozenset({"user", "assistant", "system", "developer"})


class _NotWhole(Exception):
    """The body does not carry its whole prompt."""


def chat_shape(body: dict[str, Any]) -> dict[str, Any] | None:
    """The body as a chat-completions request body, or None when it cannot be rebuilt (see the
    module doc). The result is for :func:`~prefixbench.workloads.logs.chat_completions.parse_request`,
    which checks what it keeps."""
    if body.get("previous_response_id") or body.get("conversation"):
        return None
    raw_tools = body.get("tools")
    if raw_tools is not None and not isinstance(raw_tools, list):
        return None  # not a Responses body the API would take
    try:
        messages = _messages(body)
        tools = [_tool(tool) for tool in raw_tools or []]
    except _NotWhole:
        return None
    if not messages:
        return None
    out: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    if tools:
        out["tools"] = tools
    effort = (body.get("reasoning") or {}).get("effort") if isinstance(body.get("reasoning"), dict) else None
    if effort is not None:
        out["reasoning_effort"] = effort
    for key in ("temperature", "stop", "prompt_cache_retention", "prompt_cache_options"):
        if key in body:
            out[key] = body[key]
    if isinstance(body.get("max_output_tokens"), int):
        out["max_tokens"] = body["max_output_tokens"]
    return out


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    instructions = body.get("instructions")
    if isinstance(instructions, str) and instructions:
        out.append({"role": "system", "content": instructions})
    elif instructions is not None and not isinstance(instructions, str):
        raise _NotWhole
    items = body.get("input")
    if isinstance(items, str):
        return [*out, {"role": "user", "content": items}]
    if not isinstance(items, list):
        raise _NotWhole
    reasoning: str | None = None
    for item in items:
        if not isinstance(item, dict):
            raise _NotWhole
        kind, role = item.get("type", "message"), item.get("role")
        if not isinstance(kind, str) or (role is not None and not isinstance(role, str)):
            raise _NotWhole
        if kind == "message" and role in _ROLES:
            role = "system" if item["role"] == "developer" else item["role"]
            text = _text(item.get("content"))
            if role == "assistant":
                turn = _turn(out, reasoning)
                reasoning = None
                turn["content"] = turn.get("content", "") + text
            else:
                out.append({"role": role, "content": text})
        elif kind == "function_call":
            call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments", "")
            if not isinstance(call_id, str) or not isinstance(name, str):
                raise _NotWhole
            turn = _turn(out, reasoning, calls_only=True)
            reasoning = None
            turn.setdefault("tool_calls", []).append(
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            )
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise _NotWhole
            out.append({"role": "tool", "tool_call_id": call_id, "content": _text(item.get("output"))})
        elif kind == "reasoning":
            reasoning = _reasoning(item)
        else:
            raise _NotWhole
    return out


def _turn(out: list[dict[str, Any]], reasoning: str | None, *, calls_only: bool = False) -> dict[str, Any]:
    """The assistant message the model's turn is building: the last one, if it is the newest
    message and no reasoning item came between, else a new one."""
    last = out[-1] if out else None
    if reasoning is None and last is not None and last.get("role") == "assistant" and (calls_only or "tool_calls" not in last):
        return last
    turn: dict[str, Any] = {"role": "assistant", "content": ""}
    if reasoning is not None:
        turn["reasoning_content"] = reasoning
    out.append(turn)
    return turn


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if not isinstance(kind, str) or kind not in _TEXT_PARTS or not isinstance(part.get("text"), str):
                raise _NotWhole  # an image, a file, audio: not text the audit can diff
            parts.append(part["text"])
        return "".join(parts)
    raise _NotWhole


def _reasoning(item: dict[str, Any]) -> str:
    encrypted = item.get("encrypted_content")
    if isinstance(encrypted, str):
        return encrypted
    summary = item.get("summary") or []
    if not isinstance(summary, list):
        raise _NotWhole
    texts = [part.get("text") for part in summary if isinstance(part, dict)]
    if not all(isinstance(text, str) for text in texts):
        raise _NotWhole
    return "\n".join(texts)  # type: ignore[arg-type]


def _tool(tool: Any) -> dict[str, Any]:
    """A Responses tool as a chat-completions function (a built-in tool keeps its whole
    definition as parameters, so a change to it still changes the prompt)."""
    if not isinstance(tool, dict) or not isinstance(tool.get("type"), str):
        raise _NotWhole
    if tool["type"] == "function":
        if not isinstance(tool.get("name"), str):
            raise _NotWhole
        return {"type": "function", "function": {
            "name": tool["name"], "description": tool.get("description") or "", "parameters": tool.get("parameters") or {},
        }}
    return {"type": "function", "function": {"name": tool["type"], "description": "", "parameters": tool}}
