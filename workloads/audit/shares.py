"""How a miss's loss is split between its causes: the one place that says it.

A miss two causes share (schema 5: an idle gap that expired the head and a compaction that
rewrote what followed it) keeps its leading cause in ``cause`` and its whole loss in
``lost_tokens`` and ``lost_usd``; it names the other cause in ``secondary_cause`` with that
cause's part, ``secondary_lost_tokens`` and ``secondary_lost_usd`` (priced when the row was
built: the leading part priced alone, the second the rest). :func:`loss_parts` turns such a row
into its two parts, the leading cause's being the whole less the second's, so the two add up to
the whole exactly (tokens as ints, dollars as exact ``Decimal`` sums). A miss with one cause is
one part, the whole.

Every total that splits a shared miss reads its parts here: the causes and classes the audit rolls
up (``workloads/audit/core.py``: ``_Roll.give``), each roll's top cause (``_Roll.add``), the loss
split (:func:`.losses.split_losses`), the parts a fix recovers (:func:`.losses.fix_parts`) and the
tokens a gate counts for a cause (:func:`.gate.cause_part`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple

from prefixbench.simulator.pricing import usd_sum


class LossPart(NamedTuple):
    """One cause's part of a miss's loss."""

    #: The cause (``""`` for a row with no cause).
    cause: str
    #: Its lost tokens (0 where the row tells none).
    tokens: int
    #: Its lost dollars, exact; None where the row's loss is in no dollar figure.
    usd: Decimal | None


def loss_parts(row: object) -> tuple[LossPart, ...]:
    """``row``'s loss by cause: ``(leading,)`` for a miss with one cause (or none), ``(leading,
    second)`` for a miss two causes share, the second being ``secondary_*``'s and the leading the
    rest, so the parts' tokens add up to ``lost_tokens`` and their dollars to ``lost_usd``
    exactly. The dollars of either part are None where the row's are (no price): the tokens are
    split all the same.

    ``row`` is an :class:`~.core.AuditRow`, or anything with its ``cause``, ``lost_tokens`` and
    ``lost_usd`` (the ``secondary_*`` fields read as None where it has none)."""
    cause: str | None = getattr(row, "cause", None)
    tokens: int = getattr(row, "lost_tokens", None) or 0
    usd: Decimal | None = getattr(row, "lost_usd", None)
    second: str | None = getattr(row, "secondary_cause", None)
    if second is None or cause is None:
        return (LossPart(cause or "", tokens, usd),)
    moved_tokens: int = getattr(row, "secondary_lost_tokens", None) or 0
    moved: Decimal | None = getattr(row, "secondary_lost_usd", None)
    rest = None if usd is None else usd_sum((usd, -(moved or Decimal(0))))
    return (LossPart(cause, tokens - moved_tokens, rest), LossPart(second, moved_tokens, moved))
