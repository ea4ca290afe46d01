"""What to change, on ../shared/realdata: every folder's loss split adds up to the cent, and every
folder with a recoverable loss gets recommendations with re-simulated dollars (issue 20).

Reads the shared logs in place; skipped when they are absent.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from prefixbench.workloads.audit.advice import advise
from prefixbench.workloads.audit.core import AuditResult, load_trace, run_audit

@pytest.fixture(scope="module")
def advised(realdata_logs: list[Path]) -> dict[str, AuditResult]:
    out = {}
    for folder in realdata_logs:
        trace = load_trace([folder])
        out[folder.name] = advise(run_audit([folder], trace=trace), trace)
    return out


def test_the_split_adds_up_to_the_lost_dollars(advised: dict[str, AuditResult]) -> None:
    for name, result in advised.items():
        split = result.loss_split
        assert split is not None, name
        assert split.lost_usd == result.totals.lost_usd, name  # exact, as the rows' sum
        assert split.recoverable_usd + split.unavoidable_usd + split.unknown_usd == split.lost_usd, name
        assert sum(split.requests(k) for k in ("recoverable", "unavoidable", "unknown")) == sum(
            row.cause is not None for row in result.rows
        ), name


def test_every_folder_with_a_recoverable_loss_gets_re_simulated_recommendations(advised: dict[str, AuditResult]) -> None:
    checked = 0
    for name, result in advised.items():
        assert result.recommendations is not None and result.loss_split is not None
        if result.loss_split.recoverable_usd == 0:
            continue
        checked += 1
        recs = result.recommendations
        assert recs, name
        # Re-simulated, every one the log can re-simulate; the others (a located system-prompt
        # change in a transcript without bodies) say so and how to record bodies.
        assert all(rec.saved_usd is not None or ("cannot re-simulate" in rec.detail and "prefixbench proxy" in rec.detail)
                   for rec in recs), name
        best = recs[0]
        assert best.rank == 1 and best.saved_usd is not None and best.saved_usd > 0, name
        assert best.requests > 0 and best.lanes > 0 and best.sessions > 0 and best.change and best.assumption, name
        # Ranked 1..N; after them, unranked, the fixes that save nothing here (pi-sessions' ttl-auto).
        ranked = [rec for rec in recs if rec.rank is not None]
        assert [rec.rank for rec in ranked] == list(range(1, len(ranked) + 1)) and recs[:len(ranked)] == tuple(ranked), name
        assert all(rec.saved_usd is not None and rec.saved_usd <= 0 for rec in recs[len(ranked):]), name
    assert checked >= 2


def test_the_pi_sessions_idle_gaps_are_worth_a_keep_alive_not_a_longer_ttl(advised: dict[str, AuditResult]) -> None:
    result = advised.get("pi-sessions")
    if result is None:
        pytest.skip("pi-sessions not in this copy of the real traffic")
    recs = {rec.fix: rec for rec in result.recommendations or ()}
    keep, ttl = recs["keep-alive"], recs["ttl-auto"]
    assert keep.rank == 2 and keep.saved_usd is not None and Decimal("1.5") < keep.saved_usd < keep.lost_usd
    assert ttl.saved_usd == 0 and "does not pay" in ttl.detail and ttl.setting == "PI_CACHE_RETENTION=long"
    assert ttl.rank is None and "alternative to" not in keep.detail  # (it saves nothing: not ranked, not an alternative)


def test_the_pi_sessions_system_prompt_dates_are_re_simulated_without_bodies(advised: dict[str, AuditResult]) -> None:
    """pi rebuilds its system prompt with the current time: the 36 misses the audit locates in
    the unlogged head are re-simulated on the chain model, not left without dollars."""
    result = advised.get("pi-sessions")
    if result is None:
        pytest.skip("pi-sessions not in this copy of the real traffic")
    rec = result.recommendations[0]
    assert rec.fix == "static-system" and rec.saved_usd is not None
    assert Decimal("16") < rec.lost_usd < rec.saved_usd < Decimal("18")  # the write premiums avoided come on top
    assert "36 request(s)" in rec.detail and "inferred from the reads" in rec.detail
    # The row says the saving rests on that inference (it read "saves $17.1855").
    from prefixbench.reports.advice import saves_text

    assert saves_text(rec.saved_usd, rec.unpriced_requests, rec.lost_usd, rec.detail).startswith("may save $17.")


def test_the_claude_trace_compaction_is_recommended_its_prefix(advised: dict[str, AuditResult]) -> None:
    result = advised.get("claude-trace-lemmy")
    if result is None:
        pytest.skip("claude-trace-lemmy not in this copy of the real traffic")
    (rec,) = [rec for rec in result.recommendations or () if rec.fix == "keep-prefix-compaction"]
    assert rec.saved_usd is not None and rec.saved_usd > Decimal("0.03") and rec.requests >= 1
    assert rec.agent == "Claude Code"  # the capture's system prompt names it: Claude Code's advice applies
