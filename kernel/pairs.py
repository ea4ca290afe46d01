"""Tool-call / tool-result and reasoning / reply pairing.

A *cut* at position ``i`` splits a sequence into ``[0, i)`` and ``[i, n)``. It is balanced when
every tool call before it has its result before it too: walk the messages keeping a counter
of open calls (an assistant message adds its tool-call blocks, a tool message subtracts its
results); the cut is balanced iff the counter is zero after ``[0, i)``. Cutting anywhere else
would strand a call or a result on one side, which every strict provider rejects.

The second half works on *parts* (one content block each) for the range engine: boundary
widening for tool pairs and reasoning pairs, and the orphan strips.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, assert_never

import msgspec

from prefixbench.simulator.wire import Block, Message, Reasoning, Role, Text, ToolCall, ToolResult


class UnbalancedError(ValueError):
    """More tool results than calls before some point (a corrupt sequence)."""


def open_calls(messages: Sequence[Message | None]) -> list[int]:
    """Open-call counter after each prefix: ``result[i]`` is the count after ``messages[:i]``.

    ``None`` entries (nodes that derive no message) count zero. The list has ``len + 1`` items.
    """
    counts = [0]
    current = 0
    for idx, message in enumerate(messages):
        if message is not None:
            current += len(message.tool_calls) - len(message.tool_results)
            if current < 0:
                raise UnbalancedError(f"tool result without a call at position {idx}")
        counts.append(current)
    return counts


def balanced_cuts(messages: Sequence[Message | None]) -> list[bool]:
    """``result[i]`` is True when the cut before position ``i`` is balanced (``len + 1`` items)."""
    return [count == 0 for count in open_calls(messages)]


# --- part-level pairing (range compression) ----------------------------------------------
#
# The range engine tracks one *part* per content block, as acp-kernel tracks one message per
# content part. Within one assistant message a reasoning run comes first and its *reply* (the
# text and tool-call parts) follows it::
#
#     parts   u  R  R  T  C  t  R  T  u            u user, R reasoning, T text, C tool call,
#     group   0  1  1  1  1  2  3  3  4            t tool result; group = source message
#                └─ reasoning pair ─┘   └─ pair ─┘
#
# Two invariants must survive every compression, or a strict provider rejects the request:
# a tool call and its result are both visible or both gone (tool pairs), and a reasoning run
# and its reply are both visible or both gone (reasoning pairs, seed 000). Widening a range
# keeps them at compression time; the orphan strips repair whatever still slips through.


PartKind = Literal["text", "reasoning", "tool-call", "tool-result"]


class Part(msgspec.Struct, frozen=True):
    """One content block of a message, with a stable ref and the message it came from."""

    ref: str
    role: Role
    block: Block
    #: Parts sharing a group came from, and rebuild into, one message.
    group: int

    @property
    def kind(self) -> PartKind:
        """``text``, ``reasoning``, ``tool-call`` or ``tool-result``."""
        match self.block:
            case Text():
                return "text"
            case Reasoning():
                return "reasoning"
            case ToolCall():
                return "tool-call"
            case ToolResult():
                return "tool-result"
            case _:
                assert_never(self.block)

    # The three properties below run for every part of every request: plain type checks,
    # no pattern matching, keep them cheap.

    @property
    def call_id(self) -> str | None:
        """The tool-call id of a tool-call or tool-result part, else None."""
        block = self.block
        return block.call_id if type(block) is ToolCall or type(block) is ToolResult else None

    @property
    def is_reasoning(self) -> bool:
        """An assistant reasoning part."""
        return type(self.block) is Reasoning and self.role == "assistant"

    @property
    def is_reply(self) -> bool:
        """An assistant text or tool-call part: what a reasoning run is paired with."""
        return (type(self.block) is Text or type(self.block) is ToolCall) and self.role == "assistant"


#: How far past a range's edge tool-pair widening looks for a partner (acp-kernel's maxScan).
TOOL_PAIR_MAX_SCAN = 20


def reasoning_unit(idx: int, parts: Sequence[Part]) -> tuple[int, int] | None:
    """Span ``(first, last)`` of the reasoning pair that part ``idx`` belongs to, or None.

    A pair is a reasoning run followed by at least one reply part of the same message. A
    reasoning run with no reply after it, or a reply with no reasoning before it, is no pair.
    """
    part = parts[idx]
    if not (part.is_reasoning or part.is_reply):
        return None
    group = part.group
    lo = idx
    # Walk back over replies, then over the reasoning run before them.
    if part.is_reply:
        while lo > 0 and parts[lo - 1].group == group and parts[lo - 1].is_reply:
            lo -= 1
        first_reply = lo
        while lo > 0 and parts[lo - 1].group == group and parts[lo - 1].is_reasoning:
            lo -= 1
        if lo == first_reply:
            return None
    else:
        while lo > 0 and parts[lo - 1].group == group and parts[lo - 1].is_reasoning:
            lo -= 1
    hi = lo
    while hi + 1 < len(parts) and parts[hi + 1].group == group and parts[hi + 1].is_reasoning:
        hi += 1
    last_reasoning = hi
    while hi + 1 < len(parts) and parts[hi + 1].group == group and parts[hi + 1].is_reply:
        hi += 1
    if hi == last_reasoning:
        return None
    return lo, hi


def widen_reasoning_pairs(start: int, end: int, parts: Sequence[Part]) -> tuple[int, int]:
    """Widen ``[start, end]`` so no reasoning run is split from its reply (seed 000's fix).

    A reasoning part in range pulls its reply in (the end moves forward); a reply part in
    range pulls the reasoning run before it in (the start moves back). Multi-part reasoning
    runs move as one. A no-op when ``start > end``.
    """
    if start > end:
        return start, end
    new_start, new_end = start, end
    idx = start
    while idx <= end:
        unit = reasoning_unit(idx, parts)
        if unit is None:
            idx += 1
            continue
        new_start, new_end = min(new_start, unit[0]), max(new_end, unit[1])
        idx = unit[1] + 1
    return new_start, new_end


def tool_names(parts: Iterable[Part]) -> dict[str, str]:
    """Tool name of every call id that has a tool-call part."""
    return {p.block.call_id: p.block.name for p in parts if isinstance(p.block, ToolCall)}


def widen_tool_pairs(
    start: int,
    end: int,
    parts: Sequence[Part],
    *,
    max_scan: int = TOOL_PAIR_MAX_SCAN,
    ignore_tools: frozenset[str] = frozenset(),
) -> tuple[int, int]:
    """Widen ``[start, end]`` to the tool calls and results paired with the ones inside it.

    Looks up to ``max_scan`` parts past each edge; the edge moves to every part sharing a call
    id with the range and the scan stops at the first non-matching part after a match. Calls
    of ``ignore_tools`` (the compress tool) are not followed. One pass: the ids are collected
    once, so a part pulled in may carry an id of its own; :func:`widen_range` iterates.
    """
    if start > end:
        return start, end
    names = tool_names(parts)
    ids = {
        call_id
        for p in parts[start : end + 1]
        if (call_id := p.call_id) is not None and names.get(call_id) not in ignore_tools
    }
    if not ids:
        return start, end
    new_end = end
    matched = False
    for idx in range(end + 1, min(len(parts), end + 1 + max_scan)):
        if parts[idx].call_id in ids:
            new_end, matched = idx, True
        elif matched:
            break
    new_start = start
    matched = False
    for idx in range(start - 1, max(-1, start - 1 - max_scan), -1):
        if parts[idx].call_id in ids:
            new_start, matched = idx, True
        elif matched:
            break
    return new_start, new_end


def widen_range(
    start: int,
    end: int,
    parts: Sequence[Part],
    *,
    reasoning_pairs: bool,
    max_scan: int = TOOL_PAIR_MAX_SCAN,
    ignore_tools: frozenset[str] = frozenset(),
) -> tuple[int, int]:
    """Widen a compression range to whole pairs.

    With ``reasoning_pairs`` (the fix) reasoning-pair and tool-pair widening alternate until
    neither moves an edge: reasoning may pull in a tool call whose result tool pairs then
    pull in, and a result may pull in a call whose reasoning must follow. Both only widen, so
    this ends, in practice after two passes. Without it (acp-kernel before the fix) one
    tool-pair pass is all there is, and a range may split reasoning from its reply.
    """
    if not reasoning_pairs:
        return widen_tool_pairs(start, end, parts, max_scan=max_scan, ignore_tools=ignore_tools)
    while True:
        widened = widen_reasoning_pairs(start, end, parts)
        widened = widen_tool_pairs(*widened, parts, max_scan=max_scan, ignore_tools=ignore_tools)
        if widened == (start, end):
            return start, end
        start, end = widened


def pair_closure(indices: Iterable[int], parts: Sequence[Part], *, reasoning_pairs: bool) -> frozenset[int]:
    """``indices`` plus every part paired with one of them, transitively.

    Tool pairs always (any distance); reasoning pairs only when ``reasoning_pairs`` is on.
    Used to keep a protected set from splitting a pair at its edge.
    """
    by_call: dict[str, list[int]] = {}
    for idx, part in enumerate(parts):
        if part.call_id is not None:
            by_call.setdefault(part.call_id, []).append(idx)
    closed: set[int] = set()
    todo = list(indices)
    while todo:
        idx = todo.pop()
        if idx in closed:
            continue
        closed.add(idx)
        call_id = parts[idx].call_id
        if call_id is not None:
            todo.extend(by_call[call_id])
        if reasoning_pairs:
            unit = reasoning_unit(idx, parts)
            if unit is not None:
                todo.extend(range(unit[0], unit[1] + 1))
    return frozenset(closed)


def strip_orphaned_tool_calls(
    parts: Sequence[Part], keep: Callable[[Part], bool] = lambda _: False
) -> tuple[Part, ...]:
    """Drop tool-call parts with no result among ``parts`` (unless ``keep`` says otherwise)."""
    answered = {p.call_id for p in parts if isinstance(p.block, ToolResult)}
    return tuple(
        p for p in parts if not isinstance(p.block, ToolCall) or p.call_id in answered or keep(p)
    )


def strip_orphaned_tool_results(parts: Sequence[Part]) -> tuple[Part, ...]:
    """Drop tool-result parts whose call is not among ``parts``."""
    called = {p.call_id for p in parts if isinstance(p.block, ToolCall)}
    return tuple(p for p in parts if not isinstance(p.block, ToolResult) or p.call_id in called)


def strip_orphaned_reasoning(parts: Sequence[Part]) -> tuple[Part, ...]:
    """Drop every reasoning run not immediately followed by a reply of the same message.

    A rebuilt assistant turn must carry exactly the reasoning the model produced with that
    reply; reasoning whose reply is gone would be replayed alone or glued to another turn.
    """
    out: list[Part] = []
    idx = 0
    while idx < len(parts):
        part = parts[idx]
        if not part.is_reasoning:
            out.append(part)
            idx += 1
            continue
        run_end = idx
        while run_end + 1 < len(parts) and parts[run_end + 1].group == part.group and parts[run_end + 1].is_reasoning:
            run_end += 1
        after = run_end + 1
        if after < len(parts) and parts[after].group == part.group and parts[after].is_reply:
            out.extend(parts[idx:after])
        idx = after
    return tuple(out)
