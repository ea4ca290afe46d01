"""Words a user read against what the audit had done (auditor62 on real homes): each said
something the output did not hold."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from prefixbench.reports.audit import audit_table
from prefixbench.reports.html_pages import _audit_roll_ups, _audit_waterfall
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.losses import CLASS_MEANINGS, loss_class
from prefixbench.workloads.audit.whatif import what_if

FIXTURES = Path(__file__).parents[1] / "logs" / "fixtures"
TOTALS = {"cost_usd": 105.2210, "lost_usd": 10.6923, "requests": 2208, "unseen_requests": 0}
CAUSES = [{"cause": "ttl-expired", "lost_usd": 2.2471, "requests": 5, "lost_tokens": 410_081}]
KEEP_ALIVE = {"fix": "keep-alive", "applies": True, "requests_changed": 59, "tokens_to_read": 1_000,
              "saved_usd": 6.571, "unpriced_requests": 0, "assumption": "assumed", "detail": "bridged", "lanes": []}


def _caption(html: str) -> str:
    (text,) = re.findall(r'<p class="note">(.*?)</p>', html, re.S)
    return text


def _title(html: str) -> str:
    (text,) = re.findall(r'aria-label="([^"]*)"', html)
    return text


def test_the_waterfall_names_fix_bars_only_where_it_draws_them() -> None:
    # Without --what-if no fix bar is drawn, yet the title said "then each fix alone" and the
    # caption "A fix bar (green: saves ...)" (Eduardodmb/ClaudeHome: "What to change" showed
    # keep-alive saving $6.57, the waterfall nothing of it).
    plain = _audit_waterfall(TOTALS, CAUSES, None)
    assert "fix" not in _title(plain), _title(plain)
    assert "A fix bar" not in _caption(plain)
    assert "No fix is drawn: the report was made without --what-if" in _caption(plain)
    # With a fix that applies, its bar is drawn and the words say how to read it.
    drawn = _audit_waterfall(TOTALS, CAUSES, [KEEP_ALIVE])
    assert _title(drawn).endswith("; then each fix alone, from what was paid")
    assert "A fix bar (green: saves, amber: costs more) starts at what was paid" in _caption(drawn)
    # --what-if ran, but nothing applies: no bar, and the caption says why.
    none = _audit_waterfall(TOTALS, CAUSES, [{**KEEP_ALIVE, "applies": False, "saved_usd": None}])
    assert "fix" not in _title(none) and "A fix bar" not in _caption(none)
    assert "none of the fixes --what-if asked for applies" in _caption(none)


def test_the_loss_split_legend_does_not_call_a_gap_keep_alive_bridges_unavoidable() -> None:
    # A gap past the longest TTL that keep-alives bridge is recoverable (a 2 h gap on a model whose
    # one lifetime is 30 min), so the legend must not put every gap past the longest TTL under
    # unavoidable ("idle 3h56m ... past the 1h00m TTL" was counted recoverable beneath it).
    row = SimpleNamespace(cause="ttl-expired", provider="openai", model="gpt-5.6-sol", lane_kind="main", gap_ms=7_200_000)
    assert loss_class(row) == "recoverable"
    assert "idle longer than any TTL" not in CLASS_MEANINGS["unavoidable"]
    assert CLASS_MEANINGS["unavoidable"].endswith(
        "or idle past the longest TTL the provider offers where keep-alive requests (at most 10 a gap) would not have bridged it")
    assert "keep-alive bridging an idle gap counts here, even a gap past the longest TTL" in CLASS_MEANINGS["recoverable"]


def test_the_roll_ups_say_what_re_write_divides() -> None:
    # The per-session and per-day tables showed "re-write 4.39x" with no word of what it is.
    from prefixbench.reports.auditwords import REWRITE_LEGEND

    result = run_audit([FIXTURES / "claude-code.jsonl"])
    assert any(r.rewrite_factor is not None for r in result.sessions)
    table = audit_table(result)
    days = table.split("\nper day (UTC)\n", 1)[1]
    assert REWRITE_LEGEND in days.split("\n\n", 1)[0]
    assert REWRITE_LEGEND.startswith("re-write: the prompt tokens paid at the write or the full input price "
                                     "(written + uncached) over the sum of each lane's largest prompt; 1.00x")
    rolls = [{"key": "a.jsonl", "first": None, "last": None, "requests": 3, "lanes": 1, "misses": 0, "hit_ratio": 0.5,
              "cache_read": 10, "rewrite_factor": 1.5, "cost_usd": 0.1, "lost_usd": 0.0, "top_cause": None}]
    assert "Re-write: the prompt tokens paid" in _audit_roll_ups(rolls, "session")
    # No factor in any row (a block-hash trace): nothing to explain.
    assert "Re-write:" not in _audit_roll_ups([{**rolls[0], "rewrite_factor": None}], "session")


def test_how_to_record_bodies_names_claude_trace_only_for_claude_code() -> None:
    # On a Cline / Roo task the advice said "run Claude Code under claude-trace": a tool that
    # wraps Claude Code alone. Elsewhere it names how any agent is recorded.
    for log, claude in ((FIXTURES / "cline", False), (FIXTURES / "claude-code.jsonl", True)):
        requests, summaries = load_trace([log])
        for fix in what_if(list(requests), list(summaries), ["static-system", "breakpoints=auto"]):
            assert not fix.applies, fix
            assert "record the agent through `prefixbench proxy`" in fix.detail
            assert ("run Claude Code under claude-trace" in fix.detail) is claude, (log, fix.detail)
            if not claude:
                assert "or a custom base URL in its provider settings), and audit that capture" in fix.detail
