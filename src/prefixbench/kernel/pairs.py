"""Tool-call / tool-result pairing over a message sequence.

A *cut* at position ``i`` splits a sequence into ``[0, i)`` and ``[i, n)``. It is balanced when
every tool call before it has its result before it too: walk the messages keeping a counter
of open calls (an assistant message adds its tool-call blocks, a tool message subtracts its
results); the cut is balanced iff the counter is zero after ``[0, i)``. Cutting anywhere else
would strand a call or a result on one side, which every strict provider rejects.
"""

from __future__ import annotations

from collections.abc import Sequence

from prefixbench.simulator.wire import Message


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
