"""What to change, read for what it asks: a fix not to make does not end in an instruction to make
it, fixes that recover the same idle gaps say they are alternatives, and a request that did not
miss is not given the cause "hit"."""

from __future__ import annotations

from pathlib import Path

from msgspec.structs import replace

from prefixbench.workloads.audit.advice import Resimulated, rank
from tests.unit.audit.test_advice_honesty import _audit_and_miss, _change, _ran


def test_a_fix_not_worth_it_names_the_change_as_what_was_re_simulated(tmp_path: Path) -> None:
    # "not worth it at these prices (leave it as it is): ask for long cache retention ..." read as
    # leave it, then do it.
    result, miss = _audit_and_miss(tmp_path)
    (rec,) = rank(result, Resimulated({"keep-alive": _ran("keep-alive", "0", (_change(miss, "0"),))}, {}))
    assert rec.change.startswith("not worth it at these prices, so leave it as it is; the change re-simulated was: ")
    assert "(leave it as it is):" not in rec.change


def test_fixes_for_the_same_idle_gaps_say_they_are_alternatives(tmp_path: Path) -> None:
    result, miss = _audit_and_miss(tmp_path)
    found = Resimulated({"keep-alive": _ran("keep-alive", "0.02", (_change(miss, "0.02"),)),
                         "ttl-auto": _ran("ttl-auto", "0.01", (_change(miss, "0.01"),))}, {})
    recs = {rec.fix: rec for rec in rank(result, found)}
    assert recs["keep-alive"].detail.endswith("an alternative to ttl-auto (#2), not in addition: each was re-simulated "
                                              "alone (they may save on different lanes and requests): their dollars do not add up")
    assert "an alternative to keep-alive (#1), not in addition" in recs["ttl-auto"].detail
    # One of them alone: nothing to say.
    (rec,) = rank(result, Resimulated({"keep-alive": found.done["keep-alive"]}, {}))
    assert "alternative" not in rec.detail


def test_a_request_that_did_not_miss_is_not_given_a_cause(tmp_path: Path) -> None:
    # keep-alive's pattern read "other causes (provider-best-effort x4, hit x1)": hit is no cause.
    result, miss = _audit_and_miss(tmp_path)
    hit = next(row for row in result.rows if row is not miss)
    result = replace(result, rows=tuple(replace(row, cause=None, lost_tokens=0) if row is hit else row for row in result.rows))
    w = _ran("keep-alive", "0.02", (_change(miss, "0.03"), _change(hit, "-0.01")))
    (rec,) = rank(result, Resimulated({"keep-alive": w}, {}))
    assert "hit" not in rec.pattern
    assert "it also changes 1 request that did not miss, costing $0.0100 there" in rec.pattern
