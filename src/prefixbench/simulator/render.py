"""Canonical serialization of a request into bytes, the unit of the byte-exact cache.

A request renders as a sequence of *units*, each one self-delimiting JSON object encoded as
UTF-8, in this order::

    {"tools":[{"name":..,"description":..,"parameters":{..}}, ...]}     (omitted when no tools)
    {"system":"..."}                                                    (omitted when empty)
    {"role":"user","content":[<block>,<block>,...]}                     one per message
    ...

Blocks render as::

    {"type":"text","text":..}
    {"type":"reasoning","field":"reasoning_content","text":..}
    {"type":"tool_call","id":..,"name":..,"arguments":..}
    {"type":"tool_result","tool_call_id":..,"is_error":false,"content":[<text block>,...]}

Keys come in the fixed order shown, separators carry no spaces and non-ASCII text is kept as
UTF-8. Because every unit is a complete JSON object, no unit is a proper byte prefix of
another, so the longest common byte prefix of two requests is "all shared leading units, then
a common prefix inside the first unit that differs". The cache relies on that.

Tools come first, then system, then messages: the order Anthropic documents for its prefix
and the one every chat template in practice renders.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, assert_never

from prefixbench.simulator.wire import (
    Block,
    Message,
    Reasoning,
    Request,
    Text,
    ToolCall,
    ToolResult,
    ToolSchema,
)

UnitKind = Literal["tools", "system", "message"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


@dataclass(frozen=True, slots=True)
class RenderedUnit:
    """One self-delimiting unit of a rendered request."""

    kind: UnitKind
    data: bytes
    #: Byte offset of each block inside ``data`` (messages only; empty otherwise).
    block_starts: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class RenderedRequest:
    """A request as bytes: its units in wire order."""

    units: tuple[RenderedUnit, ...]
    #: Index in ``units`` of the first message unit.
    first_message_unit: int

    @property
    def num_bytes(self) -> int:
        """Total prompt bytes."""
        return sum(len(unit.data) for unit in self.units)


def _block_json(block: Block) -> str:
    match block:
        case Text(text=text):
            return _dumps({"type": "text", "text": text})
        case Reasoning(text=text, field=field):
            return _dumps({"type": "reasoning", "field": field, "text": text})
        case ToolCall(call_id=call_id, name=name, arguments=arguments):
            return _dumps({"type": "tool_call", "id": call_id, "name": name, "arguments": arguments})
        case ToolResult(call_id=call_id, content=content, is_error=is_error):
            inner = ",".join(_block_json(item) for item in content)
            head = _dumps({"type": "tool_result", "tool_call_id": call_id, "is_error": is_error})
            return head[:-1] + ',"content":[' + inner + "]}"
        case _:
            assert_never(block)


@lru_cache(maxsize=16384)
def render_message(message: Message) -> RenderedUnit:
    """Render one message unit (memoized: messages are immutable and re-sent every step)."""
    head = ('{"role":' + _dumps(message.role) + ',"content":[').encode()
    parts: list[bytes] = []
    starts: list[int] = []
    offset = len(head)
    for idx, block in enumerate(message.blocks):
        if idx:
            offset += 1  # the comma
        starts.append(offset)
        encoded = _block_json(block).encode()
        parts.append(encoded)
        offset += len(encoded)
    data = head + b",".join(parts) + b"]}"
    return RenderedUnit("message", data, tuple(starts))


@lru_cache(maxsize=256)
def render_tools(tools: tuple[ToolSchema, ...]) -> RenderedUnit:
    """Render the tools unit."""
    items = [
        '{"name":' + _dumps(t.name) + ',"description":' + _dumps(t.description) + ',"parameters":' + t.parameters + "}"
        for t in tools
    ]
    return RenderedUnit("tools", ('{"tools":[' + ",".join(items) + "]}").encode())


@lru_cache(maxsize=256)
def render_system(system: str) -> RenderedUnit:
    """Render the system unit."""
    return RenderedUnit("system", ('{"system":' + _dumps(system) + "}").encode())


def render_request(request: Request) -> RenderedRequest:
    """Render a request into its wire units (tools, system, messages)."""
    head: list[RenderedUnit] = []
    if request.tools:
        head.append(render_tools(request.tools))
    if request.system:
        head.append(render_system(request.system))
    units = (*head, *(render_message(message) for message in request.messages))
    return RenderedRequest(units, len(head))
