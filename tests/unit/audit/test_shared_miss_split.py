"""A miss two causes share (issue 19): a compaction after an expired head has two causes, each
enough for its part of the lost tokens. The row keeps the leading cause and names the other with
its part; the totals by cause and by loss class split the row's loss between them, to the exact
dollar."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from prefixbench.reports.audit import audit_json, audit_table
from prefixbench.reports.html_pages import audit_page
from prefixbench.simulator.price_lookup import Prices
from prefixbench.simulator.pricing import usd_sum
from prefixbench.workloads.audit import core
from prefixbench.workloads.audit.core import audit_requests
from prefixbench.workloads.audit.losses import split_losses
from prefixbench.workloads.audit.spill import RowSpill
from prefixbench.workloads.logs.trace import FileSummary

from .test_shared_head_causes import MIN, _call, _row


def _compacted_trace(head_read: int) -> tuple[list, list[FileSummary]]:
    """a's first call on a compacted context 28 min after its previous one, reading nothing: the
    head (10,000 tokens) had expired, and the compaction rewrote what followed it. No other lane
    sent under the head in between. ``head_read``: what a's start read (the head's size). The
    calls and the files' summaries."""
    requests = [
        _call("b.jsonl", 0, 0, 0, 12_000, None),
        _call("a.jsonl", 0, MIN, head_read, 15_000 - head_read, None),
        _call("a.jsonl", 1, 2 * MIN, 15_000, 1_000, "a.jsonl#0"),
        _call("a.jsonl", 2, 30 * MIN, 0, 20_000, None, events=(("compaction", "context condensed"),)),
    ]
    summaries = [FileSummary(f, "claude-code", 2) for f in ("a.jsonl", "b.jsonl")]
    return requests, summaries


def _compacted(head_read: int) -> core.AuditResult:
    """The audit of :func:`_compacted_trace`."""
    return audit_requests(*_compacted_trace(head_read), Prices(None))


def _cause(result: core.AuditResult, name: str) -> core.CauseSummary:
    return next(c for c in result.causes if c.cause == name)


@pytest.mark.parametrize(("head_read", "lead", "second", "second_tokens"),
                         [(10_000, "ttl-expired", "compaction", 6_000), (4_000, "compaction", "ttl-expired", 4_000)])
def test_a_shared_miss_splits_its_loss_between_its_two_causes(head_read: int, lead: str, second: str, second_tokens: int) -> None:
    # Base: the whole 16,000 (and its dollars) went to the leading cause and its class.
    result = _compacted(head_read)
    row = _row(result, line=3)
    assert row.lost_tokens == 16_000 and row.lost_usd is not None and row.lost_usd > 0
    assert (row.cause, row.secondary_cause, row.secondary_lost_tokens) == (lead, second, second_tokens)
    assert row.secondary_lost_usd is not None and 0 < row.secondary_lost_usd < row.lost_usd
    assert row.loss_class != row.secondary_loss_class
    assert {row.loss_class, row.secondary_loss_class} == {"recoverable", "unavoidable"}
    first, other = _cause(result, lead), _cause(result, second)
    assert (first.requests, first.shared_requests, first.lost_tokens) == (1, 0, 16_000 - second_tokens)
    assert (other.requests, other.shared_requests, other.lost_tokens) == (0, 1, second_tokens)
    assert other.lost_usd == row.secondary_lost_usd
    # Exact: the causes' dollars add up to the total loss, and so do the classes'.
    assert usd_sum(c.lost_usd for c in result.causes) == result.totals.lost_usd
    assert sum(c.lost_tokens for c in result.causes) == sum(r.lost_tokens or 0 for r in result.rows)
    split = result.loss_split
    assert split.recoverable_usd + split.unavoidable_usd + split.unknown_usd == split.lost_usd
    assert split_losses(result.rows) == split
    ttl_part = row.secondary_lost_usd if second == "ttl-expired" else row.lost_usd - row.secondary_lost_usd
    assert split.recoverable_usd > 0 and abs(split.recoverable_usd - ttl_part) < Decimal("0.01")
    # The rows' JSON names the second cause and its part; the causes count the shared miss.
    data = json.loads(audit_json(result))
    record = next(r for r in data["requests"] if r["file"] == "a.jsonl" and r["line"] == 3)
    assert (record["secondary_cause"], record["secondary_lost_tokens"]) == (second, second_tokens)
    assert record["secondary_lost_usd"] == float(row.secondary_lost_usd)
    assert next(c for c in data["causes"] if c["cause"] == second)["shared_requests"] == 1
    assert data["schema"] >= 5  # (5 on: a shared miss split)
    text = audit_table(result)
    assert "+1 shared" in text
    assert "+1 shared" in audit_page(data, None)
    # Spilled to disk and read back, the part is the same Decimal.
    with RowSpill(result.rows) as spill:
        assert list(spill.load()) == list(result.rows)


def test_the_top_cause_of_a_day_counts_each_part_of_a_shared_miss() -> None:
    # The day also holds e's plain expiry of 11,000 tokens (another head, another session). The
    # compaction's 12,000 and the two expiries' 4,000 + 11,000: ttl-expired leads the day. Base gave
    # the compaction all 16,000, so it led.
    requests = [
        _call("b.jsonl", 0, 0, 0, 12_000, None),
        _call("a.jsonl", 0, MIN, 4_000, 11_000, None),
        _call("a.jsonl", 1, 2 * MIN, 15_000, 1_000, "a.jsonl#0"),
        _call("a.jsonl", 2, 30 * MIN, 0, 20_000, None, events=(("compaction", "context condensed"),)),
        _call("e.jsonl", 0, 40 * MIN, 0, 10_000, None, head="other-head"),
        _call("e.jsonl", 1, 41 * MIN, 10_000, 1_000, "e.jsonl#0", head="other-head"),
        _call("e.jsonl", 2, 60 * MIN, 0, 11_000, "e.jsonl#1", head="other-head"),
    ]
    summaries = [FileSummary(f, "claude-code", 2) for f in ("a.jsonl", "b.jsonl", "e.jsonl")]
    result = audit_requests(requests, summaries, Prices(None))
    assert [(r.cause, r.lost_tokens) for r in result.rows if r.file == "e.jsonl" and r.line == 3] == [("ttl-expired", 11_000)]
    (day,) = result.days
    assert day.top_cause == "ttl-expired"
    (session,) = [s for s in result.sessions if s.key == "a.jsonl"]
    assert session.top_cause == "compaction"  # 12,000 of its 16,000 lost tokens


@pytest.mark.parametrize(("head_read", "cause", "tokens", "told"),
                         [(4_000, "compaction", 12_000, ""), (4_000, "ttl-expired", 4_000, "1 of them led by another cause, this one's part"),
                          (10_000, "ttl-expired", 10_000, ""), (10_000, "compaction", 6_000, "1 of them led by another cause, this one's part")])
def test_the_gate_holds_a_shared_miss_by_either_cause_and_counts_that_causes_part(head_read: int, cause: str, tokens: int, told: str) -> None:
    # Base: --fail-on ttl-expired did not hold a miss whose second cause is the expiry, and
    # "FAIL cause compaction" counted all 16,000 where the causes table gives compaction 12,000.
    from prefixbench.workloads.audit.gate import Gate, gated_rows, violations

    result = _compacted(head_read)
    assert [(r.file, r.line) for r in gated_rows(result, cause)] == [("a.jsonl", 3)]
    (line,) = violations(result, Gate((cause,)))
    assert f"1 request(s)" in line and f", {tokens:,} tokens lost" in line, line
    assert _cause(result, cause).lost_tokens == tokens
    assert told in line


def test_a_shared_misses_recoverable_part_has_its_second_causes_fix() -> None:
    # The compaction leads (unavoidable), the expired head's 4,000 is its recoverable part: the
    # loss split counts that part recoverable, so a fix must recover it. Base: fixes_for and the
    # re-simulation targets looked at the leading cause only (no fix).
    from prefixbench.workloads.audit.advice import resimulation_targets, targets
    from prefixbench.workloads.audit.losses import fixes_for

    result = _compacted(4_000)
    row = _row(result, line=3)
    assert (row.loss_class, row.secondary_cause, row.secondary_loss_class) == ("unavoidable", "ttl-expired", "recoverable")
    ttl_only = _row(_compacted(10_000), line=3)
    assert ttl_only.cause == "ttl-expired"
    fixes = fixes_for(row)
    assert fixes and fixes == fixes_for(ttl_only)
    # (ttl-auto brings the one-TTL settings, ttl-5m and ttl-1h, re-simulated beside it)
    assert resimulation_targets([result.rows])[0] == [*fixes, "ttl-5m", "ttl-1h"]
    assert all(row in targets(result)[fix] for fix in fixes)


def _unpriced_compacted(head_read: int) -> core.AuditResult:
    """:func:`_compacted` on a model no price is known for: no dollar figure holds any loss."""
    from msgspec.structs import replace

    requests = [
        _call("b.jsonl", 0, 0, 0, 12_000, None),
        _call("a.jsonl", 0, MIN, head_read, 15_000 - head_read, None),
        _call("a.jsonl", 1, 2 * MIN, 15_000, 1_000, "a.jsonl#0"),
        _call("a.jsonl", 2, 30 * MIN, 0, 20_000, None, events=(("compaction", "context condensed"),)),
    ]
    requests = [replace(r, model="claude-nopriced-9") for r in requests]
    summaries = [FileSummary(f, "claude-code", 2) for f in ("a.jsonl", "b.jsonl")]
    return audit_requests(requests, summaries, Prices(None))


def test_an_unpriced_shared_miss_leaves_its_second_causes_dollars_unknown() -> None:
    # The expiry holds only the shared miss's part, on a model with no price: its dollars are not
    # known. Base: JSON lost_usd 0.0 for ttl-expired (the text said "-"), the cause's
    # unpriced_requests 0 from the rolled sums, and the split's recoverable class a known $0.00.
    result = _unpriced_compacted(4_000)
    row = _row(result, line=3)
    assert (row.cause, row.secondary_cause, row.lost_usd) == ("compaction", "ttl-expired", None)
    ttl = _cause(result, "ttl-expired")
    assert (ttl.requests, ttl.shared_requests, ttl.unpriced_requests) == (0, 1, 1)
    data = json.loads(audit_json(result))
    assert next(c for c in data["causes"] if c["cause"] == "ttl-expired")["lost_usd"] is None
    assert data["loss_split"]["recoverable_usd"] is None and data["loss_split"]["recoverable_shared"] == 1
    assert result.loss_split == split_losses(result.rows)
    assert result.loss_split.recoverable_unpriced == 1
    text = audit_table(result)
    ttl_line = next(line for line in text.splitlines() if line.lstrip().startswith("ttl-expired") and "shared" in line)
    assert "0 +1 shared" in ttl_line and "$" not in ttl_line, ttl_line
    assert "recoverable (0 req +1 shared, 1 unpriced: no dollar figure)" in text


def test_the_loss_split_line_counts_a_classes_shared_misses() -> None:
    # Base: "recoverable $0.0x (0 req)": a class holding only a shared miss's part said no request.
    result = _compacted(4_000)
    assert result.loss_split.recoverable_shared == 1 and result.loss_split.recoverable_requests == 0
    text = audit_table(result)
    assert "(0 req +1 shared)" in text
    data = json.loads(audit_json(result))
    assert "0 +1 shared" in audit_page(data, None)


def test_the_pages_causes_table_says_what_plus_n_shared_means() -> None:
    # Base: the page's "+1 shared" cell had no legend (the text's table has one).
    data = json.loads(audit_json(_compacted(4_000)))
    page = audit_page(data, None)
    assert "+N shared: misses another cause leads whose loss this one shares" in page
    data["causes"] = [dict(c, shared_requests=0) for c in data["causes"]]
    assert "misses another cause leads whose loss" not in audit_page(data, None)


def test_junit_names_a_second_cause_the_gate_fails_on() -> None:
    # Base: "compaction at line 3: ..." under --fail-on ttl-expired, the gate's cause unnamed.
    from xml.etree import ElementTree

    from prefixbench.workloads.audit.gate import Gate, junit_xml

    result = _compacted(4_000)  # compaction leads, ttl-expired second
    failure = ElementTree.fromstring(junit_xml(result, Gate(fail_on=("ttl-expired",)))).find(".//failure")
    assert failure is not None
    assert failure.get("message") == "compaction at line 3 (ttl-expired shares its loss)"
    lead = ElementTree.fromstring(junit_xml(result, Gate(fail_on=("compaction",)))).find(".//failure")
    assert lead is not None and lead.get("message") == "compaction at line 3"


@pytest.mark.parametrize(("head_read", "lead"), [(4_000, "compaction"), (10_000, "ttl-expired")])
def test_the_recommendations_count_a_shared_misss_part_under_its_own_cause(head_read: int, lead: str) -> None:
    # The TTL fixes recover the expired head's part of the shared miss only: what they say their
    # misses lost is the ttl-expired part the causes table gives, and its pattern names that
    # cause. Base: the whole row's loss ($0.0552) under "compaction x1" where the compaction led.
    from prefixbench.workloads.audit.advice import recommend
    from prefixbench.workloads.audit.losses import fix_parts, fixes_for

    requests, summaries = _compacted_trace(head_read)
    result = audit_requests(requests, summaries, Prices(None))
    row = _row(result, line=3)
    assert row.cause == lead and row.secondary_lost_usd is not None
    ttl = _cause(result, "ttl-expired").lost_usd
    assert ttl is not None and 0 < ttl < row.lost_usd
    recs = {rec.fix: rec for rec in recommend(requests, summaries, result, prices=Prices(None))}
    assert set(recs) == set(fixes_for(row)) and recs
    for rec in recs.values():
        assert rec.lost_usd == ttl, (rec.fix, rec.lost_usd)
        assert rec.causes == ("ttl-expired",) and rec.pattern.startswith("ttl-expired x1: ")
    # The parts add up exactly to the row's loss, each under its own cause.
    (fix,) = set(recs) & {"keep-alive"}
    (part,) = fix_parts(row, fix)
    rest = usd_sum((row.lost_usd, -part[1]))
    assert part[0] == "ttl-expired" and usd_sum((part[1], rest)) == row.lost_usd
    assert rest == _cause(result, "compaction").lost_usd
