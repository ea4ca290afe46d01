"""The scripted model's answer to a ``ranges`` nudge: compress the oldest recommended range.

A workload that mounts the ``ranges`` engine lists :data:`COMPRESS_TOOL` in its tools and
asks :func:`compress_reply` first in its ``reply``; when the last message is a nudge it gets
one compress call back, else None and answers as usual::

    def reply(self, request):
        return compress_reply(request) or self._next_step(request)

The summary is filler from :func:`prose`, 300 to 600 characters, keyed by the range, so the
same run always writes the same bytes.
"""

from __future__ import annotations

import zlib

from prefixbench.kernel.engines.ranges_nudge import NUDGE_MARKER
from prefixbench.kernel.engines.ranges_view import COMPRESS_TOOL_NAME
from prefixbench.kernel.model import Reply
from prefixbench.simulator.wire import Block, Message, Reasoning, Request, ToolCall, ToolSchema, canonical_json
from prefixbench.workloads.scripted.prose import prose

COMPRESS_TOOL = ToolSchema.make(
    COMPRESS_TOOL_NAME,
    "Replace ranges of older conversation with your own summary. Cite ranges by the refs a "
    "context nudge lists (mNNNNN for messages, bN for earlier summaries).",
    {
        "type": "object",
        "properties": {
            "ranges": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "startRef": {"type": "string"},
                        "endRef": {"type": "string"},
                        "summary": {"type": "string"},
                        "topic": {"type": "string"},
                    },
                    "required": ["startRef", "endRef", "summary"],
                },
            }
        },
        "required": ["ranges"],
    },
)

MIN_SUMMARY_CHARS = 300
MAX_SUMMARY_CHARS = 600


def nudge_ranges(message: Message) -> tuple[tuple[str, str], ...]:
    """The ``range <startRef> <endRef>`` lines of a nudge message, in order (empty if none)."""
    text = message.text()
    if message.role != "user" or not text.startswith(NUDGE_MARKER):
        return ()
    out = []
    for line in text.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "range":
            out.append((words[1], words[2]))
    return tuple(out)


def compress_summary(start_ref: str, end_ref: str) -> str:
    """The deterministic summary of a range: 300-600 characters of filler."""
    label = f"summary of {start_ref}..{end_ref}"
    span = MAX_SUMMARY_CHARS - MIN_SUMMARY_CHARS + 1
    return prose(label, MIN_SUMMARY_CHARS + zlib.crc32(label.encode()) % span)


def compress_reply(request: Request, *, reasoning: bool | None = None) -> Reply | None:
    """One ``compress`` call on the oldest recommended range when the last message is a nudge.

    Args:
        reasoning: emit a reasoning block before the call, as a thinking model does. None
            (the default) follows the conversation: reasoning iff any assistant message of the
            request carries some, in the field of the newest one.
    """
    if not request.messages:
        return None
    ranges = nudge_ranges(request.messages[-1])
    if not ranges:
        return None
    start_ref, end_ref = ranges[0]
    arguments = canonical_json(
        {"ranges": [{"startRef": start_ref, "endRef": end_ref, "summary": compress_summary(start_ref, end_ref)}]}
    )
    # The request length tells calls apart when the same range is asked for twice.
    call = ToolCall(f"compress-{len(request.messages)}-{start_ref}-{end_ref}", COMPRESS_TOOL_NAME, arguments)
    blocks: tuple[Block, ...] = (call,)
    field = _reasoning_field(request)
    if reasoning is None:
        reasoning = field is not None
    if reasoning:
        thought = Reasoning(prose(f"compress thinking {start_ref}..{end_ref}", 160), field or "reasoning_content")
        blocks = (thought, call)
    return Reply(blocks)


def _reasoning_field(request: Request) -> str | None:
    """Field of the newest reasoning block in the request, or None when there is none."""
    for message in reversed(request.messages):
        if message.role == "assistant" and message.reasoning:
            return message.reasoning[-1].field
    return None
