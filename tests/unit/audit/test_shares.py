""":func:`loss_parts`, the one place a miss two causes share is split between them, and the
totals that read it: the parts add up to the row's loss exactly, each cause gets its own part,
and a miss with one cause is one part, the whole."""

from __future__ import annotations

from decimal import Decimal
from functools import cache

from msgspec.structs import replace
from prefixbench.simulator.price_lookup import Prices
from prefixbench.simulator.pricing import usd_sum
from prefixbench.workloads.audit import core
from prefixbench.workloads.audit.core import AuditRow, audit_requests
from prefixbench.workloads.audit.gate import cause_part
from prefixbench.workloads.audit.losses import fix_parts, fixes_for, split_losses
from prefixbench.workloads.audit.shares import LossPart, loss_parts
from prefixbench.workloads.logs.trace import FileSummary

from .test_shared_head_causes import MIN, _call, _row


@cache
def shared_row() -> AuditRow:
    """The compaction after an expired head (tests/unit/audit/test_shared_miss_split.py): the
    compaction leads, the expired head's 4,000 tokens are the second cause's part."""
    requests = [
        _call("b.jsonl", 0, 0, 0, 12_000, None),
        _call("a.jsonl", 0, MIN, 4_000, 11_000, None),
        _call("a.jsonl", 1, 2 * MIN, 15_000, 1_000, "a.jsonl#0"),
        _call("a.jsonl", 2, 30 * MIN, 0, 20_000, None, events=(("compaction", "context condensed"),)),
    ]
    summaries = [FileSummary(f, "claude-code", 2) for f in ("a.jsonl", "b.jsonl")]
    return _row(audit_requests(requests, summaries, Prices(None)), line=3)


def test_a_shared_miss_is_two_parts_that_add_up_to_its_loss_exactly() -> None:
    row = shared_row()
    assert (row.cause, row.secondary_cause, row.lost_tokens, row.secondary_lost_tokens) == ("compaction", "ttl-expired", 16_000, 4_000)
    assert row.lost_usd is not None and row.secondary_lost_usd is not None
    lead, second = loss_parts(row)
    assert lead == LossPart("compaction", 12_000, usd_sum((row.lost_usd, -row.secondary_lost_usd)))
    assert second == LossPart("ttl-expired", 4_000, row.secondary_lost_usd)
    assert lead.tokens + second.tokens == row.lost_tokens
    assert lead.usd is not None and second.usd is not None and lead.usd + second.usd == row.lost_usd
    assert 0 < second.usd < lead.usd


def test_each_cause_gets_its_share_set_by_hand() -> None:
    # $0.0600 for 16,000 tokens, the second cause's 4,000 priced at $0.0125: the leading cause
    # keeps $0.0475 and 12,000, to the last digit.
    row = replace(shared_row(), lost_usd=Decimal("0.0600"), secondary_lost_usd=Decimal("0.0125"))
    assert loss_parts(row) == (LossPart("compaction", 12_000, Decimal("0.0475")), LossPart("ttl-expired", 4_000, Decimal("0.0125")))
    # Either cause's part is what the gate counts for it, and what a fix of only that cause recovers.
    assert (cause_part(row, "compaction"), cause_part(row, "ttl-expired")) == (12_000, 4_000)
    ttl_fix = next(fix for fix in fixes_for(row) if fix == "keep-alive")
    assert fix_parts(row, ttl_fix) == (("ttl-expired", Decimal("0.0125")),)


def test_a_miss_with_one_cause_is_one_part_the_whole() -> None:
    row = replace(shared_row(), secondary_cause=None, secondary_lost_tokens=None, secondary_lost_usd=None)
    assert loss_parts(row) == (LossPart("compaction", 16_000, row.lost_usd),)
    assert loss_parts(row)[0].usd is row.lost_usd  # the row's own figure, not a sum
    # No cause at all (a hit): one part under "", its tokens 0 where none were lost.
    hit = replace(row, cause=None, lost_tokens=None, lost_usd=None)
    assert loss_parts(hit) == (LossPart("", 0, None),)


def test_an_unpriced_shared_miss_splits_its_tokens_and_no_dollars() -> None:
    row = replace(shared_row(), lost_usd=None, secondary_lost_usd=None)
    assert loss_parts(row) == (LossPart("compaction", 12_000, None), LossPart("ttl-expired", 4_000, None))


def test_the_totals_split_a_shared_miss_as_its_parts_say() -> None:
    # The roll-up's causes and classes, each roll's top cause and the loss split all read the
    # parts: set by hand, each total holds exactly its cause's (or class's) part.
    row = replace(shared_row(), lost_usd=Decimal("0.0600"), secondary_lost_usd=Decimal("0.0125"), loss_class=None,
                  secondary_loss_class=None)
    lead, second = loss_parts(row)
    sums = core._sum_file([row], {}, {})
    assert (sums.causes["compaction"].lost, sums.causes["compaction"].lost_tokens) == (lead.usd, lead.tokens)
    assert (sums.causes["ttl-expired"].lost, sums.causes["ttl-expired"].lost_tokens) == (second.usd, second.tokens)
    assert sums.classes["unavoidable"].lost == lead.usd and sums.classes["recoverable"].lost == second.usd
    (day,) = sums.days.values()
    assert dict(day.lost_by_cause) == {"compaction": lead.usd, "ttl-expired": second.usd}
    assert dict(day.tokens_by_cause) == {"compaction": lead.tokens, "ttl-expired": second.tokens}
    split = split_losses([core._classed(row)])
    assert (split.unavoidable_usd, split.recoverable_usd) == (lead.usd, second.usd)  # exact: 0.0475 and 0.0125
    assert (split.unavoidable_requests, split.recoverable_requests, split.recoverable_shared) == (1, 0, 1)
