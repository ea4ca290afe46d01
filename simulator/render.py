"""Canonical serialization of a request into bytes, the unit of the byte-exact cache.

A request renders as a sequence of *units*, each one self-delimiting JSON object encoded as
UTF-8, in this order::

    {"tools":[{"name":..,"description":..,"parameters":{..}}, ...]}     (omitted when no tools)
    {"system":"..."}                                                    (omitted when empty)
    {"system":[{"type":"text","text":..},...]}                          (system_blocks instead)
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

Cache breakpoints (Anthropic ``cache_control``) are not bytes: a rendered request carries them
beside its units, each naming the unit and block it closes, and every unit records where each
of its blocks (tool, system block, message block) ends, the boundaries a breakpoint cache keys
on.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Literal, assert_never

import msgspec
from prefixbench.simulator.wire import (
    Block,
    CacheTtl,
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


class RenderedUnit(msgspec.Struct, frozen=True):
    """One self-delimiting unit of a rendered request."""

    kind: UnitKind
    data: bytes
    #: Byte offset of each block inside ``data`` (messages only; empty otherwise).
    block_starts: tuple[int, ...] = ()
    #: Byte offset just past each block inside ``data``: each tool, the system string or each
    #: system block, each message block. A breakpoint cache keys on the prefix up to these.
    block_ends: tuple[int, ...] = ()


class RenderedBreakpoint(msgspec.Struct, frozen=True):
    """A cache breakpoint located in the rendering: the unit and block whose end it marks."""

    unit_idx: int
    block_idx: int
    ttl: CacheTtl


class RenderedRequest(msgspec.Struct, frozen=True):
    """A request as bytes: its units in wire order."""

    units: tuple[RenderedUnit, ...]
    #: Index in ``units`` of the first message unit.
    first_message_unit: int
    #: Cache breakpoints in prompt order (explicit ones, then the automatic one if any, deduplicated).
    breakpoints: tuple[RenderedBreakpoint, ...] = ()
    #: The request's :attr:`~prefixbench.simulator.wire.Request.retention` (not prompt bytes).
    retention: str | None = None

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
    ends: list[int] = []
    offset = len(head)
    for idx, block in enumerate(message.blocks):
        if idx:
            offset += 1  # the comma
        starts.append(offset)
        encoded = _block_json(block).encode()
        parts.append(encoded)
        offset += len(encoded)
        ends.append(offset)
    data = head + b",".join(parts) + b"]}"
    return RenderedUnit("message", data, tuple(starts), tuple(ends))


def _join_items(head: str, items: list[str], tail: str) -> tuple[bytes, tuple[int, ...]]:
    """``head + items joined by commas + tail`` as UTF-8, and the byte end of each item."""
    offset = len(head.encode())
    ends: list[int] = []
    for idx, item in enumerate(items):
        offset += len(item.encode()) + (1 if idx else 0)
        ends.append(offset)
    return (head + ",".join(items) + tail).encode(), tuple(ends)


@lru_cache(maxsize=256)
def render_tools(tools: tuple[ToolSchema, ...]) -> RenderedUnit:
    """Render the tools unit."""
    items = [
        '{"name":' + _dumps(t.name) + ',"description":' + _dumps(t.description) + ',"parameters":' + t.parameters + "}"
        for t in tools
    ]
    data, ends = _join_items('{"tools":[', items, "]}")
    return RenderedUnit("tools", data, block_ends=ends)


@lru_cache(maxsize=256)
def render_system(system: str) -> RenderedUnit:
    """Render the system unit."""
    data = ('{"system":' + _dumps(system) + "}").encode()
    return RenderedUnit("system", data, block_ends=(len(data) - 1,))


@lru_cache(maxsize=256)
def render_system_blocks(blocks: tuple[str, ...]) -> RenderedUnit:
    """Render the system unit of a system prompt given as several text blocks."""
    items = [_dumps({"type": "text", "text": text}) for text in blocks]
    data, ends = _join_items('{"system":[', items, "]}")
    return RenderedUnit("system", data, block_ends=ends)


def render_request(request: Request) -> RenderedRequest:
    """Render a request into its wire units (tools, system, messages) and locate its breakpoints."""
    head: list[RenderedUnit] = []
    if request.tools:
        head.append(render_tools(request.tools))
    if request.system_blocks:
        head.append(render_system_blocks(request.system_blocks))
    elif request.system:
        head.append(render_system(request.system))
    units = (*head, *(render_message(message) for message in request.messages))
    breakpoints: tuple[RenderedBreakpoint, ...] = ()
    if request.cache_breakpoints or request.auto_cache is not None:
        breakpoints = _locate_breakpoints(request, units, len(head))
    return RenderedRequest(units, len(head), breakpoints, request.retention)


def _locate_breakpoints(
    request: Request, units: tuple[RenderedUnit, ...], first_message_unit: int
) -> tuple[RenderedBreakpoint, ...]:
    """Map a request's breakpoints onto (unit, block); the automatic one closes the last cacheable block."""
    kinds = [unit.kind for unit in units[:first_message_unit]]
    found: dict[tuple[int, int], CacheTtl] = {}

    def add(unit_idx: int, block_idx: int, ttl: CacheTtl) -> None:
        if not 0 <= block_idx < len(units[unit_idx].block_ends):
            raise ValueError(f"cache breakpoint on block {block_idx} of a unit with {len(units[unit_idx].block_ends)}")
        if found.get((unit_idx, block_idx)) != "1h":  # the same block marked twice keeps the longer TTL
            found[(unit_idx, block_idx)] = ttl

    for mark in request.cache_breakpoints:
        match mark.section:
            case "tools" | "system":
                if mark.section not in kinds:
                    raise ValueError(f"cache breakpoint in {mark.section}, which the request does not have")
                add(kinds.index(mark.section), mark.block_idx, mark.ttl)
            case "messages":
                if mark.message_idx is None or not 0 <= mark.message_idx < len(request.messages):
                    raise ValueError(f"cache breakpoint on message {mark.message_idx} of {len(request.messages)}")
                add(first_message_unit + mark.message_idx, mark.block_idx, mark.ttl)
            case _:
                assert_never(mark.section)
    if request.auto_cache is not None:
        last = last_cacheable_block(units)
        if last is not None:
            add(*last, request.auto_cache)
    return tuple(RenderedBreakpoint(unit_idx, block_idx, ttl) for (unit_idx, block_idx), ttl in sorted(found.items()))


#: Message blocks a breakpoint cannot close (Anthropic): reasoning (thinking) and empty text.
_UNCACHEABLE_PREFIX = _block_json(Reasoning("", "")).split('"field"')[0].encode()
_EMPTY_TEXT = _block_json(Text("")).encode()


def last_cacheable_block(units: tuple[RenderedUnit, ...]) -> tuple[int, int] | None:
    """(unit, block) of the last block a breakpoint may close, where automatic caching puts it.

    Reasoning blocks and empty text blocks are skipped; tools and system blocks always qualify.
    """
    for unit_idx in range(len(units) - 1, -1, -1):
        unit = units[unit_idx]
        for block_idx in range(len(unit.block_ends) - 1, -1, -1):
            if unit.kind == "message":
                block = unit.data[unit.block_starts[block_idx] : unit.block_ends[block_idx]]
                if block.startswith(_UNCACHEABLE_PREFIX) or block == _EMPTY_TEXT:
                    continue
            return unit_idx, block_idx
    return None
