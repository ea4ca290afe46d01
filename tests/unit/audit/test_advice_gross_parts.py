"""A part of a fix's saving is never shown larger than the saving under the same word: on a Roo
task folder ``saves $0.2590`` stood beside ``$0.3069 of its saving is on 2 miss(es)``, the part
what the fix saved on those requests (gross), the saving net of what its other changes cost.
Where the parts come to more than the saving they are called gross, with the net beside them."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

from msgspec.structs import replace

from prefixbench.reports.advice import advice_html, advice_lines
from prefixbench.reports.audit import audit_record
from prefixbench.workloads.audit.advice import Resimulated, rank
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.whatif import WhatIf
from tests.unit.audit.test_advice_setting_lines import _long_gap


def _gross_case(tmp_path: Path, on_miss: str, elsewhere: str):
    """A miss the split counts unknown (resume) that keep-alive reads back, saving ``on_miss``
    there, and keep-alive requests costing ``elsewhere`` (a change of no request, index -1)."""
    path = _long_gap(tmp_path)
    result = run_audit([path], trace=load_trace([path]))
    rows = tuple(replace(row, cause="resume", loss_class="unknown") if row.lost_tokens else row for row in result.rows)
    result = replace(result, rows=rows)
    (miss,) = [row for row in rows if row.lost_tokens]
    read = SimpleNamespace(file=miss.file, lane=miss.lane, index=miss.index, saved_usd=Decimal(on_miss), priced=True,
                           reported_read=0, counterfactual_read=miss.predicted_cache_read + miss.lost_tokens)
    pings = SimpleNamespace(file=miss.file, lane=miss.lane, index=-1, saved_usd=-Decimal(elsewhere), priced=True,
                            reported_read=0, counterfactual_read=0)
    saved = Decimal(on_miss) - Decimal(elsewhere)
    w = WhatIf(fix="keep-alive", applies=True, requests_changed=1, tokens_to_read=0, saved_usd=saved,
               assumption="assumed", detail="1 keep-alive request(s) bridge 1 idle gap(s) past the TTL",
               changes=(read, pings))
    return replace(result, recommendations=rank(result, Resimulated({"keep-alive": w}, {})))


def _parts(text: str) -> list[tuple[Decimal, bool]]:
    return [(Decimal(usd), bool(gross)) for usd, gross in re.findall(r"\$([0-9.]+) of its (gross )?saving is on", text)]


def test_a_part_larger_than_the_saving_is_called_gross_with_the_net_beside_it(tmp_path: Path) -> None:
    """Roo: ``saves $0.2590`` beside ``$0.3069 of its saving is on 2 miss(es)``: the part was what
    the fix saved on those requests, the saving net of what its other changes cost."""
    result = _gross_case(tmp_path, "0.30", "0.05")
    (rec,) = result.recommendations
    assert rec.saved_usd == Decimal("0.25")
    assert _parts(rec.detail) == [(Decimal("0.3000"), True)], rec.detail
    assert ("gross: $0.3000, more than the $0.2500 it saves net, as the keep-alive requests it sends and its "
            "other changes cost $0.0500") in rec.detail
    # Never a part above the saving under the bare word, in any view.
    record = audit_record(result)
    for text in ("\n".join(advice_lines(result)), advice_html(record), record["recommendations"][0]["detail"]):
        assert all(gross or usd <= rec.saved_usd for usd, gross in _parts(text)), text
        assert "of its gross saving is on" in text


def test_a_part_within_the_saving_keeps_its_plain_words(tmp_path: Path) -> None:
    result = _gross_case(tmp_path, "0.30", "0.00")
    (rec,) = result.recommendations
    assert _parts(rec.detail) == [(Decimal("0.3000"), False)] and "gross" not in rec.detail
