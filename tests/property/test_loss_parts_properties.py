"""A shared miss's parts (:func:`prefixbench.workloads.audit.shares.loss_parts`) always add up to
its loss exactly: random token counts, random prices and cache writes, the second cause's part
priced as the audit prices it (the whole less the leading part priced alone), and the totals that
read the parts (the causes rolled up) adding up to the rows' loss too."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from prefixbench.simulator.price_lookup import Prices
from prefixbench.simulator.pricing import PriceRow, Rates, usd_sum
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit import core
from prefixbench.workloads.audit.core import AuditRow
from prefixbench.workloads.audit.shares import loss_parts
from tests.unit.audit.test_shares import shared_row

#: USD per 1M tokens, to a hundredth of a cent (as price files write them).
rate = st.decimals(min_value=0, max_value=100, places=4, allow_nan=False, allow_infinity=False)
CAUSES = ("compaction", "ttl-expired", "system-changed", "unexplained", "cold-start")


@st.composite
def priced_miss(draw: st.DrawFn) -> tuple[int, int, Decimal | None, Decimal | None]:
    """(lost tokens, the second cause's tokens, the loss's dollars, the second part's dollars):
    priced by the audit's own pricing (None, None: a model with no price)."""
    lost = draw(st.integers(2, 2_000_000))
    second = draw(st.integers(1, lost - 1))
    if draw(st.booleans()) and draw(st.booleans()):
        return lost, second, None, None
    hour = draw(st.integers(0, lost))
    five = draw(st.integers(0, lost - hour))
    usage = Usage(cache_write_1h=hour, cache_write_5m=five, uncached=lost - hour - five)
    # Every rate at least the read's (as any price file has them): no part is below $0.
    read = draw(rate)
    write = draw(st.one_of(st.none(), rate.map(read.__add__)))
    write_1h = None if write is None else draw(st.one_of(st.none(), rate.map(read.__add__)))
    rates = Rates(input=read + draw(rate), cache_read=read, cache_write=write, cache_write_1h=write_1h, output=Decimal(15))
    row = _price_row()
    assert row is not None
    priced = replace(row, rates=rates, long_tier=None)
    whole = core._lost_usd(usage, lost, priced)
    # As the row is built: the leading cause's part priced alone, the second cause's the rest.
    return lost, second, whole, usd_sum((whole, -core._lost_usd(usage, lost - second, priced)))


def _price_row() -> PriceRow | None:
    return Prices(None).row("claude-sonnet-4-5", None)


def _row(miss: tuple[int, int, Decimal | None, Decimal | None], lead: str, other: str, line: int = 3) -> AuditRow:
    lost, second, whole, part = miss
    return replace(shared_row(), line=line, cause=lead, secondary_cause=other, lost_tokens=lost, lost_usd=whole,
                   secondary_lost_tokens=second, secondary_lost_usd=part, loss_class=None, secondary_loss_class=None)


@settings(max_examples=300, deadline=None)
@given(priced_miss(), st.sampled_from(CAUSES), st.sampled_from(CAUSES))
def test_the_parts_of_a_shared_miss_add_up_to_its_loss(miss: tuple[int, int, Decimal | None, Decimal | None], lead: str, other: str) -> None:
    lost, second, whole, part = miss
    row = _row(miss, lead, other if other != lead else "resume")
    first, moved = loss_parts(row)
    assert (first.cause, moved.cause) == (row.cause, row.secondary_cause)
    assert first.tokens + moved.tokens == lost and moved.tokens == second and first.tokens > 0
    if whole is None:
        assert first.usd is None and moved.usd is None
        return
    assert first.usd is not None and moved.usd is not None
    assert usd_sum((first.usd, moved.usd)) == whole and moved.usd == part
    assert first.usd >= 0 and moved.usd >= 0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(priced_miss(), st.sampled_from(CAUSES), st.sampled_from(CAUSES)), min_size=1, max_size=6))
def test_the_causes_rolled_up_add_up_to_the_rows_loss(misses: list) -> None:
    rows = [_row(miss, lead, other if other != lead else "resume", line=i + 1) for i, (miss, lead, other) in enumerate(misses)]
    sums = core._sum_file(list(rows), {}, {})
    assert sum(roll.lost_tokens for roll in sums.causes.values()) == sum(row.lost_tokens or 0 for row in rows)
    assert usd_sum(roll.lost for roll in sums.causes.values()) == usd_sum(row.lost_usd or Decimal(0) for row in rows)
    assert usd_sum(roll.lost for roll in sums.classes.values()) == usd_sum(row.lost_usd or Decimal(0) for row in rows)
    (day,) = sums.days.values()
    assert usd_sum(day.lost_by_cause.values()) == usd_sum(row.lost_usd or Decimal(0) for row in rows)
    assert sum(day.tokens_by_cause.values()) == sum(row.lost_tokens or 0 for row in rows)
