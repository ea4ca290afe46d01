"""What the strategies read in a conversation: tool pairs, turns, and where a cut may fall.

Pure functions of a message list, on the public wire types only.
"""

from __future__ import annotations

from collections.abc import Sequence

from prefixbench.kernel import Message, Reasoning, Reply, Request, StepContext, Text, ToolCall, ToolResult, warn


def tool_names(messages: Sequence[Message]) -> dict[str, str]:
    """The tool name of every call id the assistant messages carry."""
    return {call.call_id: call.name for message in messages for call in message.tool_calls}


def tool_uses(messages: Sequence[Message]) -> list[str]:
    """Call ids of the tool uses that have a result, oldest first."""
    answered = {result.call_id for message in messages for result in message.tool_results}
    return [call.call_id for message in messages for call in message.tool_calls if call.call_id in answered]


def pair_safe_start(messages: Sequence[Message], index: int) -> int:
    """The first index >= ``index`` that does not open on a tool result (whose call would be
    cut off); never past the last message."""
    last = max(0, len(messages) - 1)
    while index < last and messages[index].role == "tool":
        index += 1
    return min(index, last)


def pending_count(view: Sequence[Message]) -> int:
    """How many messages at the end of ``view`` came after the last model reply: what the next
    request adds (tool results, or the user's new message), which Gemini CLI's and Qwen Code's
    histories do not hold yet when they compress."""
    for index in range(len(view) - 1, -1, -1):
        if view[index].role == "assistant":
            return len(view) - 1 - index
    return len(view)


def user_turn_starts(messages: Sequence[Message]) -> list[int]:
    """Indexes of the user messages: each opens a turn (the assistant's steps and tool results follow)."""
    return [index for index, message in enumerate(messages) if message.role == "user"]


def clear_result(message: Message, call_ids: frozenset[str], placeholder: str) -> Message:
    """``message`` with the content of its results for ``call_ids`` replaced by ``placeholder``."""
    if not any(isinstance(b, ToolResult) and b.call_id in call_ids for b in message.blocks):
        return message
    blocks = tuple(
        ToolResult(b.call_id, (Text(placeholder),), b.is_error) if isinstance(b, ToolResult) and b.call_id in call_ids else b
        for b in message.blocks
    )
    return Message(message.role, blocks)


def clear_inputs(message: Message, call_ids: frozenset[str]) -> Message:
    """``message`` with the arguments of its calls for ``call_ids`` emptied (``{}``)."""
    if not any(isinstance(b, ToolCall) and b.call_id in call_ids for b in message.blocks):
        return message
    blocks = tuple(
        ToolCall(b.call_id, b.name, "{}") if isinstance(b, ToolCall) and b.call_id in call_ids else b
        for b in message.blocks
    )
    return Message(message.role, blocks)


def reasoning_stand_in(messages: Sequence[Message]) -> tuple[Reasoning, ...]:
    """An empty reasoning block for a message an engine writes in the assistant's name, in the field
    the conversation's last reasoning used (a DeepSeek thinking endpoint refuses an assistant row
    without one); empty when no assistant row carries reasoning."""
    fields = [b.field for m in messages if m.role == "assistant" for b in m.blocks if isinstance(b, Reasoning)]
    return (Reasoning("", fields[-1]),) if fields else ()


def cold_request(ctx: StepContext, messages: tuple[Message, ...], system: str) -> Request | None:
    """A ``compaction`` request to the routed model with the engine's own system prompt, no tools and
    the model's default output cap; None before the routed header is known."""
    header = ctx.routed or ctx.header()
    if header is None:
        return None
    info = ctx.catalog(header.envelope.provider, header.envelope.model)
    envelope = info.wire_envelope(header.envelope)
    return Request(envelope, messages, system, (), info.default_max_tokens, "compaction")


def assistant_note(messages: Sequence[Message], text: str) -> Message:
    """``text`` as an assistant message an engine writes (a summary, an acknowledgement), with the
    empty reasoning stand-in where the conversation's assistant rows carry reasoning."""
    return Message("assistant", (*reasoning_stand_in(messages), Text(text)))


def summary_reply(ctx: StepContext, request: Request | None, failure: str) -> Reply | None:
    """Send a summary request: the reply when it carries text; else None, after the warning
    ``failure: <error or 'no text'>``. None without a call or a warning when there is no request
    (no routed header yet)."""
    if request is None:
        return None
    reply = ctx.client(request)
    if reply.error is not None or not reply.text().strip():
        warn(ctx.session, f"{failure}: {reply.error or 'no text'}")
        return None
    return reply
