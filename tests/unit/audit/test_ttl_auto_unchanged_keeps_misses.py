"""ttl-auto that changed no request of the log (every lane kept its TTL: the other lifetime did
not pay) and saved 0 keeps the misses its cause points at, and their lost dollars: a verdict on
the prices, not a fix that recovered none of them (advice.rank's ``any(c.index >= 0 ...)``:
replaced with ``True``, only a realdata test caught it). A change that is a request the fix adds
(index -1) changes no request of the log either."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

from prefixbench.workloads.audit.advice import Resimulated, rank
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import WhatIf
from tests.unit.audit.test_advice import _paused


def _ttl_auto(changes: tuple) -> WhatIf:
    return WhatIf(fix="ttl-auto", applies=True, requests_changed=len(changes), tokens_to_read=0,
                  saved_usd=Decimal(0), assumption="assumed", detail="5m on the 1 main-session lane(s)", changes=changes)


def test_ttl_auto_that_changed_nothing_keeps_its_misses_and_their_lost_dollars(tmp_path: Path) -> None:
    path = _paused(tmp_path)
    result = run_audit([path], trace=load_trace([path]))
    (miss,) = [row for row in result.rows if row.cause == "ttl-expired"]
    assert miss.lost_usd > 0
    added = SimpleNamespace(file=miss.file, lane=miss.lane, index=-1, saved_usd=Decimal(0), priced=True,
                            reported_read=0, counterfactual_read=0)
    for changes in ((), (added,)):
        (rec,) = [rec for rec in rank(result, Resimulated({"ttl-auto": _ttl_auto(changes)}, {})) if rec.fix == "ttl-auto"]
        assert rec.causes == ("ttl-expired",) and rec.lost_usd == miss.lost_usd, rec
        assert rec.pattern.startswith("ttl-expired x1: $") and "recovers none" not in rec.pattern, rec.pattern
        assert rec.change.startswith("not worth it at these prices")
