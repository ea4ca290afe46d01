"""keep-alive's judged gaps (whatif._judged_gaps) on a relay that counts writes on some responses
only (the ``unknown`` provider's rules: writes bound reads): what a call left cached is bounded
by what it read and wrote once its lane has reported a write (``lane_wrote``), as the audit's
expected read is. A call that wrote 0 after its lane wrote left its read cached, so a next call
that reads all of it after a long gap read in full; one that read and wrote 0 left nothing, so
its gap says nothing of an entry's life."""

from __future__ import annotations

from prefixbench.simulator.providers import rules_for
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.whatif import _judged_gaps
from prefixbench.workloads.logs.trace import TraceRequest

T0 = 1_756_860_000_000
TTL = 5 * 60_000


def _call(seq: int, sent: int, usage: Usage) -> TraceRequest:
    return TraceRequest(file="relay.jsonl", line=seq + 1, lane="main", lane_kind="main", seq=seq, sent_ms=sent,
                        ready_ms=sent + 1_000, provider="unknown", model="some-model", usage=usage)


def _judge(calls: list[TraceRequest]):
    judged = _judged_gaps(calls, [r.sent_ms for r in calls], [r.ready_ms for r in calls], range(len(calls)),
                          lambda r: TTL)
    return [(g.r.seq, g.read) for gaps in judged.values() for g in gaps]


def test_the_relay_rules_bound_what_a_call_left_by_what_it_read_and_wrote() -> None:
    rules = rules_for("unknown")
    assert rules.writes_bound_reads and not rules.is_additive


def test_a_call_that_wrote_0_after_its_lane_wrote_left_its_read_a_full_read_after_a_gap_is_judged_so() -> None:
    calls = [
        _call(0, T0, Usage(cache_write_5m=10_000, uncached=2_000)),  # the lane writes once
        _call(1, T0 + 60_000, Usage(cache_read=10_000, uncached=2_000)),  # then writes 0: stored its 10,000 read
        _call(2, T0 + 60_000 + 20 * 60_000, Usage(cache_read=10_000, uncached=4_000)),  # 20 min idle, all of it read
    ]
    # Without the lane's write, the 0 write would say nothing and the whole 12,000-token prompt
    # would count as left: 10,000 read of it would be a short read.
    assert _judge(calls) == [(2, True)]


def test_a_call_that_read_and_wrote_0_after_its_lane_wrote_left_nothing_its_gap_is_not_judged() -> None:
    calls = [
        _call(0, T0, Usage(cache_write_5m=10_000, uncached=2_000)),
        _call(1, T0 + 60_000, Usage(cache_read=0, uncached=12_000)),  # read 0, wrote 0: nothing stored
        _call(2, T0 + 60_000 + 20 * 60_000, Usage(cache_read=0, uncached=14_000)),
    ]
    assert _judge(calls) == []
