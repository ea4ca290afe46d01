"""Compaction judged on the shared real logs (issue 20's acceptance); skipped when absent."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import what_if


def _trace(realdata: Path, name: str):
    folder = realdata / name
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    return load_trace([folder])


def test_the_claude_trace_compaction_is_a_compaction_miss_with_its_dollars(realdata):
    trace = _trace(realdata, "claude-trace-lemmy")
    audit = run_audit([], trace=trace)
    (row,) = [row for row in audit.rows if row.line == 35]
    assert (row.lane_kind, row.reported_cache_read, row.reported_cache_write) == ("compaction", 0, 12_072)
    # Not a cold start: the main request at line 33 had cached what it could have replayed,
    # and the bodies say why it did not (another tool list).
    assert (row.cause, row.evidence) == ("compaction-miss", "body-diff")
    assert "main request at line 33" in row.detail and "tools-changed" in row.detail
    assert row.lost_tokens == 12_075 and row.lost_usd > Decimal("0.04")
    (cause,) = [c for c in audit.causes if c.cause == "compaction-miss"]
    assert cause.lost_usd == row.lost_usd
    (call,) = [c for c in audit.compactions if c.kind == "call"]
    assert (call.line, call.verdict, call.lost_usd) == (35, "cold", row.lost_usd)
    assert call.warm_cost_usd == call.cost_usd - row.lost_usd
    # The fix that would have replayed the prefix applies to the same request.
    (w,) = what_if(*trace, ["keep-prefix-compaction"])
    assert w.applies and [c.line for c in w.changes] == [35] and w.saved_usd > 0


def test_every_compaction_call_in_the_real_logs_is_judged(realdata_logs):
    audit = run_audit(realdata_logs)
    calls = [row for row in audit.rows if row.lane_kind == "compaction"]
    judged = {(c.file, c.line) for c in audit.compactions if c.kind == "call"}
    assert {(row.file, row.line) for row in calls} <= judged
    assert all(row.cause != "cold-start" for row in calls)
