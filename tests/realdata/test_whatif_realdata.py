"""audit --what-if on the shared real logs (issue 10's acceptance); skipped when absent."""

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


def test_stagger_saves_exactly_the_two_concurrent_start_misses_of_fe5e1c67(realdata):
    trace = _trace(realdata, "claude-code-viewer")
    audit = run_audit([], trace=trace)
    concurrent = [r for r in audit.rows if r.cause == "concurrent-write"]
    assert len(concurrent) == 2 and all("fe5e1c67" in r.file for r in concurrent)
    (w,) = what_if(*trace, ["stagger-subagents"])
    assert w.requests_changed == 2
    assert {(c.lane, c.line) for c in w.changes} == {(r.lane, r.line) for r in concurrent}
    # 2 x the 11,381-token subagent head read at $0.30 instead of written at $3.75 (Sonnet 4)
    assert w.tokens_to_read == 2 * 11_381
    assert w.saved_usd == sum(r.lost_usd for r in concurrent) == 2 * 11_381 * (Decimal("3.75") - Decimal("0.30")) / 10**6


def test_ttl_1h_on_the_pi_sessions_regains_the_expired_reads_but_costs_more(realdata):
    trace = _trace(realdata, "pi-sessions")
    audit = run_audit([], trace=trace)
    expired = [r for r in audit.rows if r.cause == "ttl-expired"]
    one_h, five_m, auto = what_if(*trace, ["ttl-1h", "ttl-5m", "ttl-auto"])
    # every read lost to an expired 5 m entry comes back...
    assert one_h.tokens_to_read == sum(r.lost_tokens for r in expired) > 0
    assert "5 in 5 m-1 h" in one_h.detail
    # ...but every write costs 6/3.75 as much: the 1 h TTL loses money on these sessions
    assert one_h.saved_usd < 0
    assert five_m.applies and five_m.requests_changed == 0  # the logs already write with 5 m
    assert auto.saved_usd == 0


def test_ttl_on_the_claude_trace_capture(realdata):
    trace = _trace(realdata, "claude-trace-lemmy")
    one_h, auto = what_if(*trace, ["ttl-1h", "ttl-auto"])
    assert one_h.tokens_to_read == 0 and one_h.saved_usd < 0
    assert "0 in 5 m-1 h" in one_h.detail
    assert auto.saved_usd == 0


def test_keep_prefix_compaction_reads_the_warm_main_prefix(realdata):
    trace = _trace(realdata, "claude-trace-lemmy")
    audit = run_audit([], trace=trace)
    (compaction,) = [r for r in audit.rows if r.lane_kind == "compaction"]
    assert compaction.reported_cache_read == 0
    main_before = [r for r in audit.rows if r.lane == "main" and r.line < compaction.line][-1]
    (w,) = what_if(*trace, ["keep-prefix-compaction"])
    (change,) = w.changes
    assert change.line == compaction.line
    # the read it would have had: what the main lane's last request left cached (read + write),
    # as the model counts it, within 3% of the reported figure
    cached = main_before.reported_cache_read + main_before.reported_cache_write
    assert change.counterfactual_read == pytest.approx(cached, rel=0.03)
    assert w.saved_usd > 0


def test_fixes_that_cannot_apply_say_why(realdata):
    trace = _trace(realdata, "codex-rollout")
    results = what_if(*trace, ["stagger-subagents", "static-system", "keep-prefix-compaction", "breakpoints=system+last"])
    assert not any(w.applies for w in results)
    assert all(w.saved_usd is None and w.detail for w in results)
    # gpt-5.1-codex offers both retention policies: ttl-1h re-simulates 24h retention, and with no
    # idle gap past 5 min in the session nothing changes.
    (longer,) = what_if(*trace, ["ttl-1h"])
    assert longer.applies and (longer.requests_changed, longer.saved_usd) == (0, 0)


@pytest.mark.parametrize("name", ["claude-code-viewer", "claude-trace-lemmy", "pi-sessions", "codex-rollout", "mooncake-conversation"])
def test_the_what_if_replay_is_the_audit_prediction(realdata, name):
    """With no fix applied, the what-if replay predicts exactly what the audit predicted (same
    models, same clock): the baseline every fix is measured against is the audit's own."""
    from prefixbench.workloads.audit.core import head_sizes
    from prefixbench.workloads.audit.whatif import simulate

    trace = _trace(realdata, name)
    requests, summaries = trace
    audit = run_audit([], trace=trace)
    predicted = simulate(requests, summaries, head_sizes(requests))
    by_line = {(r.file, r.lane, r.line): (r.file, r.lane, r.seq) for r in requests}
    for row in audit.rows:
        p = predicted[by_line[(row.file, row.lane, row.line)]]
        assert (p.read, p.write, p.uncached) == (row.predicted_cache_read, row.predicted_cache_write, row.predicted_uncached), row


def test_the_fixes_of_the_whole_folder_leave_the_block_hash_traces_alone(realdata, monkeypatch):
    """On all of ../shared/realdata the fixes the audit recommends (the pi sessions', Claude
    Code's) change no block-hash request: the agent and Mooncake traces are predicted once, by
    the baseline, not once per fix (ten times before); a body log a fix does not reach either."""
    from collections import Counter

    import prefixbench.workloads.audit.whatif as whatif
    from prefixbench.workloads.audit.advice import targets
    from prefixbench.workloads.audit.core import Predictor

    trace = load_trace([realdata])
    audit = run_audit([], trace=trace)
    fixes = list(targets(audit))
    assert {"static-system", "ttl-auto", "keep-alive", "stagger-subagents"} <= set(fixes)
    seen: Counter = Counter()

    class Counting(Predictor):
        def predict(self, r, tick, ready, source=None):
            seen[r.hash_ids is not None] += 1
            return super().predict(r, tick, ready, source)

    monkeypatch.setattr(whatif, "Predictor", Counting)
    changed = {(row.file, row.line) for row in audit.rows if row.cause == "system-changed"}
    results = what_if(*trace, fixes, system_changed=changed)
    blocks = sum(r.hash_ids is not None for r in trace[0])
    assert blocks > 10_000 and seen[True] == blocks
    assert seen[False] < 4 * (len(trace[0]) - blocks)
    assert {w.fix: w.saved_usd > 0 for w in results}["static-system"]
