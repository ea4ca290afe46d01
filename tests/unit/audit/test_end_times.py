"""A call's end time (``done_ms``) on the audit's clock (workloads/audit/core.py ``end_tick``):
used for idle time and entry lifetimes only where the call's send time is known, as a reader
that logs an end and no send puts its calls on counter ticks an epoch end does not share."""

from __future__ import annotations

from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import audit_requests
from prefixbench.simulator.price_lookup import Prices
from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest


def _end_counted(seq: int, read: int, uncached: int, *, sent: bool) -> TraceRequest:
    """A call as a reader that logs its end (``done_ms``) and, where ``sent``, its send time."""
    done = 1_780_000_000_000 + seq * 60_000
    return TraceRequest(file="x.jsonl", line=seq + 1, lane="main", lane_kind="main", seq=seq,
                        sent_ms=done - 5_000 if sent else None, ready_ms=None, done_ms=done, provider="deepseek",
                        model="deepseek-chat", usage=Usage(cache_read=read, uncached=uncached, output=10),
                        prefix=Prefix("x:main", f"x#{seq}", f"x#{seq - 1}" if seq else None))


def test_an_end_time_without_a_send_time_is_not_measured_against_counter_ticks() -> None:
    # A reader that sets done_ms but not sent_ms: the audit's clock counts its calls 1, 2, ...
    # and 64175d0 measured idle as that tick minus an epoch end (always 0, "0s idle after the
    # previous response ended"; an entry living from its end never expired).
    summaries = [FileSummary("x.jsonl", "x", 2)]
    unsent = audit_requests([_end_counted(0, 0, 20_000, sent=False), _end_counted(1, 0, 21_000, sent=False)], summaries, Prices(None))
    assert unsent.rows[1].cause == "provider-best-effort"
    assert "after the previous response ended" not in unsent.rows[1].detail
    # With its send time known, the end is on the same clock: idle from it.
    sent = audit_requests([_end_counted(0, 0, 20_000, sent=True), _end_counted(1, 0, 21_000, sent=True)], summaries, Prices(None))
    assert "55s idle after the previous response ended" in sent.rows[1].detail
