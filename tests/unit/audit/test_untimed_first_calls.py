"""A lane whose first calls give no send time and later ones do: the first calls are counted on
ticks (:func:`prefixbench.workloads.audit.core.clock_by_position`), which used to run from 1, so
the gap to the first known send time looked like ~56 years: the entry the first call wrote
expired (Anthropic's 5 min TTL) and ``gap_ms`` showed ~1.76e12. The gap between a tick and a
send time is unknown: no expiry, no gap shown. The test fails on the code before the fix."""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import run_audit

#: A Claude Code transcript whose first exchange has no timestamp; the next two do, 58 s apart.
LOG = Path(__file__).parent / "data" / "claude-code-untimed" / "5b0d9e7a-untimed.jsonl"


def test_a_call_after_an_untimed_first_exchange_reads_its_entry_and_shows_no_gap() -> None:
    rows = run_audit([LOG]).rows
    assert [r.reported_cache_read for r in rows] == [0, 4_000, 4_030]
    assert [r.predicted_cache_read for r in rows] == [0, 4_000, 4_030]
    assert [r.gap_ms for r in rows] == [None, None, 60_000]
    assert rows[1].cause is None and "TTL" not in rows[1].detail
