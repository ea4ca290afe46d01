"""A saving that rests on a change inferred from the reads (static-system on a log without
bodies: whatif.INFERRED in its detail) reads "may save" wherever it is shown. report.html's
table, share line and waterfall tooltip said so, but the waterfall bar's label ("saves
$17.1855") and the fix's per-lane table ("saves $11.6312") did not, nor the pattern's "so it
saves $0.3728 more than its misses lost"; the recommendation JSON had no field for it."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

from prefixbench.reports.audit import _recommendation_record
from prefixbench.reports.html_pages import _audit_waterfall, _what_if_section
from prefixbench.workloads.audit.advice import Resimulated, rank
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import INFERRED, UNCHARGED, WhatIf
from tests.unit.audit.test_advice import _paused

DETAIL = f"36 request(s) in 2 lane(s) read less than the unlogged system prompt (no bodies: {INFERRED})"
TOTALS = {"cost_usd": 72.9261, "lost_usd": 21.18, "requests": 100, "unseen_requests": 0}
CAUSES = [{"cause": "system-changed", "lost_usd": 16.8127, "requests": 36, "lost_tokens": 1_000_000}]


def _fix(detail: str, saved: float = 17.1855) -> dict:
    lanes = [{"file": "a.jsonl", "lane": "main", "requests_changed": 20, "tokens_to_read": 1_000, "saved_usd": 11.6312,
              "note": ""},
             {"file": "b.jsonl", "lane": "main", "requests_changed": 17, "tokens_to_read": 900, "saved_usd": 5.5543,
              "note": ""}]
    return {"fix": "static-system", "applies": True, "requests_changed": 37, "tokens_to_read": 1_900,
            "saved_usd": saved, "unpriced_requests": 0, "assumption": "assumed", "detail": detail, "lanes": lanes}


def _bar_labels(svg: str) -> list[str]:
    return re.findall(r'<text [^>]*text-anchor="middle">([^<]*)</text>', svg)


def test_report_html_says_may_save_on_the_bar_and_the_lane_rows() -> None:
    svg = _audit_waterfall(TOTALS, CAUSES, [_fix(DETAIL)])
    assert any(label.startswith("may save $17.1") for label in _bar_labels(svg)), _bar_labels(svg)
    assert not any(label.startswith("saves $") for label in _bar_labels(svg)), _bar_labels(svg)
    section = _what_if_section([_fix(DETAIL)], {})
    (lanes,) = re.findall(r"<h3>static-system per lane</h3>(.*)", section, re.S)
    assert "saves $" not in lanes and lanes.count("may save $") == 2, lanes
    # A detail with no hedge keeps "saves" (bar and lanes).
    plain = _fix("logged bodies: 37 request(s)")
    assert any(label.startswith("saves $17.1") for label in _bar_labels(_audit_waterfall(TOTALS, CAUSES, [plain])))
    (lanes,) = re.findall(r"<h3>static-system per lane</h3>(.*)", _what_if_section([plain], {}), re.S)
    assert "may save" not in lanes and lanes.count("saves $") == 2
    # The fix's whole saving leaves uncharged keep-alives out: its bar is an upper bound; a lane's
    # need not hold any of them, so its row keeps "saves".
    uncharged = _fix(f"keep-alives: {UNCHARGED}")
    assert any(label.startswith("saves up to $17.1") for label in _bar_labels(_audit_waterfall(TOTALS, CAUSES, [uncharged])))
    (lanes,) = re.findall(r"<h3>static-system per lane</h3>(.*)", _what_if_section([uncharged], {}), re.S)
    assert "up to" not in lanes and lanes.count("saves $") == 2


def _ran(detail: str, changes: tuple) -> WhatIf:
    return WhatIf(fix="keep-alive", applies=True, requests_changed=len(changes), tokens_to_read=0,
                  saved_usd=usd_sum_of(changes), assumption="assumed", detail=detail, changes=changes)


def usd_sum_of(changes: tuple) -> Decimal:
    return sum((c.saved_usd for c in changes), Decimal(0))


def test_the_pattern_and_the_json_say_the_saving_is_inferred(tmp_path: Path) -> None:
    path = _paused(tmp_path)
    result = run_audit([path], trace=load_trace([path]))
    (miss,) = [row for row in result.rows if row.cause == "ttl-expired"]
    other = next(row for row in result.rows if (row.file, row.lane) == (miss.file, miss.lane) and row.index != miss.index)
    # It recovers the miss and also saves on a request that did not miss, more than the miss lost.
    changes = (SimpleNamespace(file=miss.file, lane=miss.lane, index=miss.index, saved_usd=miss.lost_usd, priced=True,
                               reported_read=0, counterfactual_read=miss.lost_tokens),
               SimpleNamespace(file=other.file, lane=other.lane, index=other.index, saved_usd=Decimal("0.5"), priced=True,
                               reported_read=0, counterfactual_read=0))
    for detail, saves, inferred in ((DETAIL, "may save", True), ("logged bodies", "saves", False)):
        (rec,) = [rec for rec in rank(result, Resimulated({"keep-alive": _ran(detail, changes)}, {}))
                  if rec.fix == "keep-alive"]
        assert f"so it {saves} $0.5000 more than its misses lost" in rec.pattern, rec.pattern
        assert rec.inferred is inferred
        assert f"it {'saves' if inferred else 'may save'} $" not in rec.pattern
        record = _recommendation_record(rec)
        assert record["inferred"] is inferred and list(record)[-1] == "inferred"
