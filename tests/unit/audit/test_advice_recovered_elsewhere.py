"""A fix credited with a miss whose cause points at another fix (it recovers it all the same)
says so in its pattern: its *lost to its misses* is what the misses it recovers lost, whatever
their cause (docs/audit.md), so without the words a reader took that figure for a loss of the
fix's own cause. On a Claude Code home (pshung/personal_git's), ttl-auto's ``$0.1244`` was one
compaction call's miss (``compaction-miss x1``) that a 1 h TTL reads back, beside the 35
ttl-expired misses it did not recover."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

from msgspec.structs import replace

from prefixbench.workloads.audit.advice import Resimulated, rank
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import WhatIf
from tests.unit.audit.test_advice import _paused

ELSEWHERE = ("its cause points at keep-prefix-compaction, not at this fix, which recovers it all the same "
             "(it reads back at least half of what each lost)")


def _ranked(tmp_path: Path, cause: str):
    """The paused session's one miss put down to ``cause``, and ttl-auto reading it back whole."""
    path = _paused(tmp_path)
    result = run_audit([path], trace=load_trace([path]))
    (miss,) = [row for row in result.rows if row.cause == "ttl-expired"]
    result = replace(result, rows=tuple(replace(row, cause=cause) if row is miss else row for row in result.rows))
    read = miss.reported_cache_read or 0
    change = SimpleNamespace(file=miss.file, lane=miss.lane, index=miss.index, saved_usd=Decimal("0.0123"), priced=True,
                             reported_read=read, counterfactual_read=read + miss.lost_tokens)
    w = WhatIf(fix="ttl-auto", applies=True, requests_changed=1, tokens_to_read=miss.lost_tokens,
               saved_usd=Decimal("0.0123"), assumption="assumed", detail="", changes=(change,))
    (rec,) = [rec for rec in rank(result, Resimulated({"ttl-auto": w}, {})) if rec.fix == "ttl-auto"]
    return rec, miss


def test_a_recovered_miss_of_another_fixs_cause_is_said_so(tmp_path: Path) -> None:
    rec, miss = _ranked(tmp_path, "compaction-miss")
    assert rec.causes == ("compaction-miss",) and rec.lost_usd == miss.lost_usd
    assert rec.pattern.startswith(f"compaction-miss x1: $"), rec.pattern
    assert f" lost; {ELSEWHERE}" in rec.pattern, rec.pattern


def test_a_recovered_miss_of_its_own_cause_is_not(tmp_path: Path) -> None:
    rec, _ = _ranked(tmp_path, "ttl-expired")
    assert rec.causes == ("ttl-expired",)
    assert "not at this fix" not in rec.pattern, rec.pattern
