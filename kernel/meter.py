"""Heuristic token meter (chars/4 plus fixed overheads), with the optional usage anchor.

Prices, per block (lengths in UTF-16 code units, as the JavaScript original counts them):

* text or reasoning: ``ceil(len/4) + 4``
* tool call: ``ceil(len(name)/4) + ceil(len(arguments)/4) + 4``
* tool result: price of its nested content ``+ 4``
* message: sum of its blocks ``+ 4``
* header: system ``ceil(len/4) + 4`` (0 when empty), tools ``ceil(len(json)/4) + 4`` (0 when none)

``measure`` folds the surface. When the latest assistant message carries provider usage and
the header is unchanged since, the total is anchored on that usage (never below the
estimate) plus the surface growth since the anchor's step started; otherwise it is the pure
estimate ``price(header) + surface``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import assert_never

import msgspec

from prefixbench.kernel.session import Header, Session
from prefixbench.simulator.render import render_tools
from prefixbench.simulator.wire import Block, Message, Reasoning, Text, ToolCall, ToolResult

CHARS_PER_TOKEN = 4
BLOCK_OVERHEAD = 4
ROLE_OVERHEAD = 4


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units (astral characters count twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _ceil_tokens(text: str) -> int:
    return -(-utf16_len(text) // CHARS_PER_TOKEN)


def price_block(block: Block) -> int:
    """Heuristic tokens of one block."""
    match block:
        case Text(text=text) | Reasoning(text=text):
            return _ceil_tokens(text) + BLOCK_OVERHEAD
        case ToolCall(name=name, arguments=arguments):
            return _ceil_tokens(name) + _ceil_tokens(arguments) + BLOCK_OVERHEAD
        case ToolResult(content=content):
            return sum(price_block(item) for item in content) + BLOCK_OVERHEAD
        case _:
            assert_never(block)


@lru_cache(maxsize=16384)
def price_message(message: Message) -> int:
    """Heuristic tokens of one message (memoized: messages are immutable)."""
    return sum(price_block(block) for block in message.blocks) + ROLE_OVERHEAD


def price_header(header: Header | None) -> int:
    """Heuristic tokens of the request header (system prompt and tool schemas)."""
    if header is None:
        return 0
    total = 0
    if header.system:
        total += _ceil_tokens(header.system) + BLOCK_OVERHEAD
    if header.tools:
        total += -(-len(render_tools(header.tools).data.decode()) // CHARS_PER_TOKEN) + BLOCK_OVERHEAD
    return total


class NodePrice(msgspec.Struct, frozen=True):
    """One surface node and its heuristic price."""

    seq: int
    tokens: int


class Measurement(msgspec.Struct, frozen=True):
    """The meter's reading of a session."""

    nodes: tuple[NodePrice, ...]
    surface_tokens: int
    total_tokens: int

    def project(self, savings: dict[int, int]) -> Measurement:
        """The same measurement with some node prices lowered (never below zero)."""
        saved = 0
        nodes = []
        for node in self.nodes:
            delta = min(node.tokens, max(0, savings.get(node.seq, 0)))
            saved += delta
            nodes.append(NodePrice(node.seq, node.tokens - delta) if delta else node)
        return Measurement(tuple(nodes), self.surface_tokens - saved, max(0, self.total_tokens - saved))


def price_seq(session: Session, seq: int) -> int:
    """Price of the message a surface event derives (0 when it derives none)."""
    message = session.message_at(seq)
    return 0 if message is None else price_message(message)


def measure(session: Session) -> Measurement:
    """Read the session: per-node prices, surface total and the (possibly anchored) total."""
    nodes = tuple(NodePrice(seq, price_seq(session, seq)) for seq in session.surface)
    surface_tokens = sum(node.tokens for node in nodes)
    header = session.request_header()
    estimate = price_header(header) + surface_tokens
    anchored = _anchored_total(session, header, surface_tokens)
    return Measurement(nodes, surface_tokens, estimate if anchored is None else anchored)


def _anchored_total(session: Session, header: Header | None, surface_now: int) -> int | None:
    """Total from the latest provider usage, or None when there is no usable anchor."""
    if header is None:
        return None
    for event in reversed(session.events):
        if event.kind != "assistant/message":
            continue
        usage = event.info.get("usage_tokens")
        if usage is None:
            return None
        if event.info.get("header") != header:
            return None
        start_surface: tuple[int, ...] = event.info.get("step_surface", ())
        assert event.message is not None
        anchor_surface = sum(price_seq(session, seq) for seq in start_surface) + price_message(event.message)
        estimated_anchor = price_header(header) + anchor_surface
        baseline = usage if usage >= estimated_anchor else estimated_anchor
        return baseline + (surface_now - anchor_surface)
    return None
