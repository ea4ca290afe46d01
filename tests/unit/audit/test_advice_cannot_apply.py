"""What to change ranks no fix that cannot apply to the log: a fix with nothing to change in it
(stagger-subagents on a log with no subagent lanes) is listed apart, not ranked, in --what-if's
words ("cannot apply"), in the table, the JSON (``rank`` null) and report.html alike. Only a fix
the log lacks the request bodies to re-simulate ("cannot re-simulate": it may apply, the log
cannot show it) is ranked by what its misses lost. Before, a mini-swe-agent log ranked
``1  stagger-subagents  SWE-agent  cannot re-simulate`` while ``--what-if stagger-subagents``
said "cannot apply: the log has no subagent lanes to stagger"."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from prefixbench.reports.advice import advice_html, advice_lines
from prefixbench.reports.audit import audit_record
from prefixbench.workloads.audit.advice import advise
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import what_if
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

#: (reports.advice's NOT_APPLICABLE and NOTHING_APPLIES, written out: the words a user reads)
NOT_APPLICABLE = "not ranked, as they cannot apply to this log: nothing they change is in it (why, for each)"
NOTHING_APPLIES = "no fix the misses point at can apply to this log (listed below, not ranked)"
NO_LANES = "the log has no subagent lanes to stagger"


def _early(tmp_path: Path) -> Path:
    """One main lane, no subagent: its second request logged as sent (0:01) before the first
    one's response began (0:05), a concurrent-write miss whose fix staggers subagents."""
    t = Transcript("s1")
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:05.000Z", [cc_usage(3, 20_000, 0, 40)])
    t.user("next", "2025-09-03T00:00:01.000Z")
    t.assistant("r2", "2025-09-03T00:00:09.000Z", [cc_usage(3, 20_300, 0, 40)])
    return write_jsonl(tmp_path / "s1.jsonl", t.lines)


def test_a_fix_with_nothing_to_change_in_the_log_is_not_ranked(tmp_path: Path) -> None:
    path = _early(tmp_path)
    trace = load_trace([path])
    result = advise(run_audit([path], trace=trace), trace)
    assert [row.cause for row in result.rows if row.cause == "concurrent-write"] == ["concurrent-write"]
    (rec,) = result.recommendations
    assert (rec.fix, rec.rank, rec.saved_usd) == ("stagger-subagents", None, None), rec
    assert rec.detail == f"cannot apply: {NO_LANES}"
    assert rec.lost_usd > 0  # (what its misses lost is still said, apart)
    # --what-if says the same of it.
    (w,) = what_if(list(trace[0]), list(trace[1]), ["stagger-subagents"])
    assert (w.applies, w.detail, w.needs_bodies) == (False, NO_LANES, False)

    text = "\n".join(advice_lines(result))
    assert "1  stagger-subagents" not in text and "cannot re-simulate" not in text and "1. stagger-subagents" not in text
    assert f"  nothing: {NOTHING_APPLIES}\n  {NOT_APPLICABLE}:\n  - stagger-subagents ({rec.agent}): cannot apply: {NO_LANES}" in text, text

    record = audit_record(result)
    assert [(r["fix"], r["rank"], r["saved_usd"]) for r in record["recommendations"]] == [("stagger-subagents", None, None)]
    html = advice_html(record)
    assert "data-recommendation=" not in html and 'data-not-ranked="stagger-subagents"' in html
    assert NOTHING_APPLIES in html and NOT_APPLICABLE[0].upper() + NOT_APPLICABLE[1:] in html


def test_a_fix_the_log_has_no_bodies_for_stays_ranked(tmp_path: Path) -> None:
    # static-system on a transcript (no request bodies) whose reads locate no break: it may apply
    # to the agent, the log cannot show it; ranked by what its misses lost, "cannot re-simulate".
    from msgspec.structs import replace

    from prefixbench.workloads.audit.advice import Resimulated, rank
    from prefixbench.workloads.audit.whatif import WhatIf

    path = _early(tmp_path)
    result = run_audit([path], trace=load_trace([path]))
    rows = tuple(replace(row, cause="system-changed") if row.cause == "concurrent-write" else row for row in result.rows)
    result = replace(result, rows=rows)
    no_bodies = WhatIf(fix="static-system", applies=False, requests_changed=0, tokens_to_read=0, saved_usd=None,
                       assumption="assumed", detail="the log has no request bodies", needs_bodies=True)
    (rec,) = rank(result, Resimulated({"static-system": no_bodies}, {}))
    assert (rec.rank, rec.saved_usd, rec.detail) == (1, None, "cannot re-simulate: the log has no request bodies")
    assert rec.lost_usd == Decimal(str(next(row.lost_usd for row in rows if row.cause == "system-changed")))
    # The same fix with nothing to change in the log: apart.
    nothing = replace(no_bodies, needs_bodies=False, detail="nothing to change")
    (rec,) = rank(result, Resimulated({"static-system": nothing}, {}))
    assert (rec.rank, rec.detail) == (None, "cannot apply: nothing to change")


def test_the_opening_says_what_is_there_where_saving_nothing_and_cannot_apply_mix(tmp_path: Path) -> None:
    """No fix ranked, one listed apart as saving nothing (re-simulated) and one that cannot apply
    (never re-simulated): the opening said "no fix re-simulated saves anything", wrong of the fix
    never re-simulated. It gives both counts."""
    from msgspec.structs import replace

    from prefixbench.workloads.audit.advice import saves_nothing

    path = _early(tmp_path)
    trace = load_trace([path])
    result = advise(run_audit([path], trace=trace), trace)
    (stagger,) = result.recommendations
    idle = replace(stagger, fix="keep-alive", saved_usd=Decimal(0), unpriced_requests=0,
                   detail="does not pay: re-simulated, it recovers its misses for more than they lost")
    assert saves_nothing(idle) and stagger.rank is None
    result = replace(result, recommendations=(idle, stagger))
    mixed = ("no fix the misses point at saves anything on this log: 1 re-simulated saves nothing, 1 cannot apply to it "
             "(listed below, not ranked)")
    text = "\n".join(advice_lines(result))
    assert f"  nothing: {mixed}\n" in text, text
    assert "no fix re-simulated saves anything" not in text and NOTHING_APPLIES not in text
    assert f"  - keep-alive ({idle.agent}): does not pay" in text and f"  - stagger-subagents ({stagger.agent}): cannot apply" in text
    html = advice_html(audit_record(result))
    assert f"Nothing: {mixed}." in html and "no fix re-simulated saves anything" not in html
