"""Model-free tool-result pruner: keep the head and tail of an oversized result.

Plan, then land. :func:`plan_prune` computes every replacement a pass would make without
touching the log; :func:`land_prune` appends the chosen ones. Callers that must keep part of
the surface byte-stable (a cache-warm replay of the history prefix) price the plan first and
land only what they choose.

Counting is in Unicode code points of text blocks. A result over ``threshold_chars`` becomes
its first ``head_chars`` + :data:`MARKER` + its last ``tail_chars``; a second pass prunes
nothing (pruned content is never over the threshold).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

from prefixbench.simulator.checks import is_positive_int, spelled
from prefixbench.simulator.errors import UserError
from prefixbench.kernel.meter import price_message
from prefixbench.kernel.session import Event, Session
from prefixbench.simulator.wire import Message, Text, ToolResult

MARKER = "\n\n[... tool result middle pruned ...]\n\n"


class PrunerConfig(msgspec.Struct, frozen=True):
    """Character budgets of the pruner (defaults are the shipped preset's)."""

    threshold_chars: int = 8192
    head_chars: int = 4096
    tail_chars: int = 1024

    def __post_init__(self) -> None:
        if not is_positive_int(self.threshold_chars):
            raise UserError(f"pruner.threshold_chars must be a positive integer, got {self.threshold_chars!r}")
        for key in ("head_chars", "tail_chars"):
            value = getattr(self, key)
            if not is_positive_int(value, minimum=0):
                raise UserError(f"pruner.{key} must be a non-negative integer, got {spelled(value)}")
        if self.head_chars + len(MARKER) + self.tail_chars > self.threshold_chars:
            raise UserError(
                f"pruner: head_chars + marker ({len(MARKER)}) + tail_chars = "
                f"{self.head_chars + len(MARKER) + self.tail_chars} exceeds threshold_chars {self.threshold_chars}"
            )


class PlannedPrune(msgspec.Struct, frozen=True):
    """One replacement a pass would land."""

    seq: int
    original: Message
    replacement: Message


class PruneDecision(msgspec.Struct, frozen=True):
    """How a pressure pass lands the plan.

    ``none``: nothing over budget. ``prune-only``: the pass alone clears pressure, land it all.
    ``tail-only``: a summary runs anyway; land only nodes in ``tail`` (after the region).
    """

    kind: Literal["none", "prune-only", "tail-only"]
    tail: frozenset[int] = msgspec.field(default_factory=frozenset)


def prune_content(content: tuple[Text, ...], config: PrunerConfig) -> tuple[Text, ...] | None:
    """Head + marker + tail of an over-budget result, or None when it fits the threshold."""
    total = sum(len(block.text) for block in content)
    if total <= config.threshold_chars:
        return None
    cut_lo, cut_hi = config.head_chars, total - config.tail_chars
    out: list[Text] = []
    pos = 0
    marked = False
    for block in content:
        text = block.text
        b0, b1 = pos, pos + len(text)
        head_end = min(max(cut_lo - b0, 0), len(text))
        tail_start = min(max(cut_hi - b0, 0), len(text))
        mark = ""
        if b0 < cut_hi and b1 > cut_lo and not marked:
            mark, marked = MARKER, True
        kept = text[:head_end] + mark + text[tail_start:]
        if kept:
            out.append(Text(kept))
        pos = b1
    return tuple(out)


def plan_prune(
    session: Session, config: PrunerConfig, include: Callable[[int], bool] | None = None
) -> tuple[PlannedPrune, ...]:
    """Every over-budget tool result on the surface and its pruned replacement (pure)."""
    planned = []
    for seq in session.surface:
        if include is not None and not include(seq):
            continue
        event = session.event(seq)
        if event.kind != "tool/result" or event.message is None:
            continue
        results = event.message.tool_results
        if len(results) != 1:
            continue
        content = prune_content(results[0].content, config)
        if content is None:
            continue
        result = results[0]
        replacement = Message(event.message.role, (ToolResult(result.call_id, content, result.is_error),))
        planned.append(PlannedPrune(seq, event.message, replacement))
    return tuple(planned)


def savings(plan: tuple[PlannedPrune, ...]) -> dict[int, int]:
    """Heuristic tokens each planned replacement would save, by seq."""
    return {item.seq: max(0, price_message(item.original) - price_message(item.replacement)) for item in plan}


def land_prune(
    session: Session, plan: tuple[PlannedPrune, ...], include: Callable[[int], bool] | None = None
) -> tuple[Event, ...]:
    """Land the planned replacements (those ``include`` accepts); returns the replacing events."""
    landed = []
    for item in plan:
        if include is not None and not include(item.seq):
            continue
        session.append(
            "compaction/prune",
            shadowed_seqs=(item.seq,),
            shadowed_token_count=price_message(item.original),
        )
        landed.append(
            session.replace(item.seq, item.seq, "tool/result", item.replacement, source_seqs=(item.seq,), rewrite="prune")
        )
    return tuple(landed)
