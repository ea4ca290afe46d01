"""What to change ranks only the fixes that save: a fix that saves nothing on the log ($0, or
less: it recovers none of its misses, or does not pay for what it recovers) is listed apart,
after the ranked ones, once, with its re-simulation's reason, the same in the table, the JSON
(``rank`` null) and report.html; and no ranked fix names it as an alternative. Before, such a fix
took the next rank (``5  ttl-auto  pi  does not pay`` on ../shared/realdata) and keep-alive's
detail called it "an alternative to ttl-auto (#5)"."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest
from msgspec.structs import replace

from prefixbench.reports.advice import advice_html, advice_lines
from prefixbench.reports.audit import audit_record
from prefixbench.workloads.audit.advice import RECOVERS_NONE, Resimulated, rank
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import WhatIf
from tests.unit.audit.test_advice import _paused

#: (reports.advice's NOT_RANKED and NOTHING_SAVES, written out: the words a user reads)
NOT_RANKED = "not ranked, as re-simulated they save nothing on this log (why, for each)"
NOTHING_SAVES = "no fix re-simulated saves anything on this log (listed below, not ranked)"


def _what_if(fix: str, saved: str, changes: tuple = ()) -> WhatIf:
    return WhatIf(fix=fix, applies=True, requests_changed=len(changes), tokens_to_read=0, saved_usd=Decimal(saved),
                  assumption="assumed", detail=f"{fix}'s own words", changes=changes)


def _advised(tmp_path: Path, *what_ifs: WhatIf):
    """The paused session's audit with ``what_ifs`` as its fixes' re-simulations."""
    path = _paused(tmp_path)
    result = run_audit([path], trace=load_trace([path]))
    return replace(result, recommendations=rank(result, Resimulated({w.fix: w for w in what_ifs}, {})))


def _recovering(result, saved: str) -> tuple:
    """A change that reads back the whole of the session's expired miss, saving ``saved``."""
    (miss,) = [row for row in result.rows if row.cause == "ttl-expired"]
    read = miss.reported_cache_read or 0
    return (SimpleNamespace(file=miss.file, lane=miss.lane, index=miss.index, saved_usd=Decimal(saved), priced=True,
                            reported_read=read, counterfactual_read=read + miss.lost_tokens),)


def _nothing_saving(tmp_path: Path, how: str) -> WhatIf:
    """ttl-auto saving nothing: keeping every lane's TTL (a verdict on the prices), or recovering
    its miss at a cost above what it saves (does not pay)."""
    if how == "unchanged":
        return _what_if("ttl-auto", "0")
    path = _paused(tmp_path / "probe")
    return _what_if("ttl-auto", "-0.002", _recovering(run_audit([path], trace=load_trace([path])), "-0.002"))


@pytest.mark.parametrize("how", ["unchanged", "costs"])
def test_a_fix_that_saves_nothing_is_listed_apart_in_every_view(tmp_path: Path, how: str) -> None:
    (tmp_path / "probe").mkdir()
    base = _advised(tmp_path)
    result = _advised(tmp_path, _what_if("keep-alive", "0.0123", _recovering(base, "0.0123")), _nothing_saving(tmp_path, how))
    saving, apart = result.recommendations
    assert (saving.fix, saving.rank, apart.fix, apart.rank) == ("keep-alive", 1, "ttl-auto", None)
    assert apart.detail.startswith("does not pay: re-simulated, it "), apart.detail
    assert "alternative to" not in saving.detail and "alternative to" not in apart.detail  # (nothing to add up)

    lines = advice_lines(result)
    text = "\n".join(lines)
    table = lines[1:lines.index(next(line for line in lines if line.startswith("  the top fix")))]
    assert any(line.startswith("1  keep-alive") for line in table) and not any("ttl-auto" in line for line in table), table
    assert "\n2. " not in text and "ttl-auto:" not in text  # (no rank, no numbered entry)
    assert text.count("ttl-auto") == 1 + apart.detail.count("ttl-auto"), text  # (once)
    assert f"  {NOT_RANKED}:\n  - ttl-auto ({apart.agent}): {apart.detail}" in text

    record = audit_record(result)
    assert [(rec["fix"], rec["rank"]) for rec in record["recommendations"]] == [("keep-alive", 1), ("ttl-auto", None)]
    html = advice_html(record)
    assert 'data-recommendation="keep-alive"' in html and 'data-recommendation="ttl-auto"' not in html
    assert html.count('data-not-ranked="ttl-auto"') == 1 and 'data-not-ranked="keep-alive"' not in html


def test_a_fix_that_recovers_none_of_its_misses_says_so_apart(tmp_path: Path) -> None:
    base = _advised(tmp_path)
    (miss,) = [row for row in base.rows if row.cause == "ttl-expired"]
    other = SimpleNamespace(file=miss.file, lane=miss.lane, index=0, saved_usd=Decimal(0), priced=True,
                            reported_read=0, counterfactual_read=0)
    result = _advised(tmp_path, _what_if("keep-alive", "0", (other,)))
    (rec,) = result.recommendations
    assert rec.rank is None and rec.detail.startswith(RECOVERS_NONE), rec
    text = "\n".join(advice_lines(result))
    assert f"  nothing: {NOTHING_SAVES}\n  {NOT_RANKED}:\n  - keep-alive ({rec.agent}): {RECOVERS_NONE}" in text, text
    assert "1  keep-alive" not in text and "the top fix" not in text
    html = advice_html(audit_record(result))
    assert "data-recommendation=" not in html and 'data-not-ranked="keep-alive"' in html and NOTHING_SAVES in html


def test_a_fix_whose_saving_is_unknown_stays_ranked(tmp_path: Path) -> None:
    # (cannot re-simulate for want of request bodies: saved None; what it saves is unknown, not
    # nothing. A fix with nothing to change in the log is not ranked: test_advice_cannot_apply.py)
    cannot = WhatIf(fix="keep-alive", applies=False, requests_changed=0, tokens_to_read=0, saved_usd=None,
                    assumption="assumed", detail="no timestamps", needs_bodies=True)
    (rec,) = _advised(tmp_path, cannot).recommendations
    assert rec.rank == 1


def _rec(fix: str, saved: str | None, lost: str, unpriced: int = 0, detail: str = "its detail"):
    from prefixbench.workloads.audit.losses import Recommendation

    return Recommendation(rank=0, fix=fix, pattern="p", causes=(), requests=1, lanes=1, sessions=1, agent="pi", change="c",
                          setting=None, source=None, saved_usd=None if saved is None else Decimal(saved),
                          lost_usd=Decimal(lost), assumption="a", detail=detail, unpriced_requests=unpriced)


def test_a_fix_whose_saving_on_some_misses_is_unknown_stays_ranked() -> None:
    """Saved $0 on the priced requests, $0.40 lost, 2 misses in no dollar figure: its detail says
    what it saves on them is unknown, so it is not known to save nothing (it was set apart)."""
    from prefixbench.workloads.audit.advice import _rank_key, saves_nothing

    partly = _rec("ttl-1h", "0", "0.40", unpriced=2,
                  detail="does not pay on the priced requests: ...; what it saves on them is unknown")
    assert not saves_nothing(partly)
    assert _rank_key(partly)[0] == 1  # among the fixes whose saving is unknown
    assert saves_nothing(_rec("ttl-1h", "0", "0.40"))  # all priced: known to save nothing
    assert saves_nothing(_rec("ttl-1h", "-0.01", "0.40"))
    # Recovering none of its misses, it saves nothing on the unpriced ones either.
    assert saves_nothing(_rec("keep-alive", "0", "0.40", unpriced=2, detail=f"{RECOVERS_NONE}: re-simulated, ..."))


def test_a_partly_unknown_fix_takes_a_rank_beside_one_that_saves() -> None:
    from prefixbench.workloads.audit import advice

    saves = _rec("keep-alive", "0.50", "0.60")
    partly = _rec("ttl-1h", "0", "0.40", unpriced=2, detail="unknown saving")
    nothing = _rec("static-system", "0", "0.10")
    ranked = sorted((nothing, partly, saves), key=advice._rank_key)
    assert [r.fix for r in ranked if not advice.saves_nothing(r)] == ["keep-alive", "ttl-1h"]
    assert [r.fix for r in ranked if advice.saves_nothing(r)] == ["static-system"]
