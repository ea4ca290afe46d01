"""A part of a fix's saving is never shown larger than the saving under the same word: on Roo
Code's controlled-hierarchy tasks (jsboige-mcp-servers@dbe9a89) keep-alive saves $0.1867 net,
$0.4993 of it on 3 misses the loss split counts unknown. Where the parts come to more than the
saving they are called gross, with the net beside them; the gross said is the fix's whole gross
($0.6863, every request it saves on), so gross - net is what its other changes cost ($0.4996)."""

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
from tests.unit.audit.fixtures import cc_usage
from tests.unit.audit.test_advice_setting_lines import _long_gap
from tests.unit.audit.test_advice_settable import _two


def _gross_case(tmp_path: Path, on_miss: str, elsewhere: str, on_recoverable: str | None = None):
    """A miss the split counts unknown (resume) that keep-alive reads back, saving ``on_miss``
    there, and keep-alive requests costing ``elsewhere`` (a change of no request, index -1); with
    ``on_recoverable``, a second session whose miss the split counts recoverable (ttl-expired,
    keep-alive's own), saving that much."""
    paths = [_long_gap(tmp_path)]
    if on_recoverable is not None:
        paths.append(_two(tmp_path, "other", "01:20:00", cc_usage(3, 20_000, 0, 40, write_1h=20_000),
                          cc_usage(3, 20_300, 0, 40, write_1h=20_300)))
    result = run_audit(paths, trace=load_trace(paths))
    rows = tuple(row if not row.lost_tokens else replace(row, cause="resume", loss_class="unknown")
                 if row.file == str(paths[0]) else replace(row, loss_class="recoverable") for row in result.rows)
    result = replace(result, rows=rows)
    miss, *others = [row for row in rows if row.lost_tokens]
    assert miss.loss_class == "unknown" and all(row.loss_class == "recoverable" for row in others), rows
    read = SimpleNamespace(file=miss.file, lane=miss.lane, index=miss.index, saved_usd=Decimal(on_miss), priced=True,
                           reported_read=0, counterfactual_read=miss.predicted_cache_read + miss.lost_tokens)
    pings = SimpleNamespace(file=miss.file, lane=miss.lane, index=-1, saved_usd=-Decimal(elsewhere), priced=True,
                            reported_read=0, counterfactual_read=0)
    changes = [read, pings]
    saved = Decimal(on_miss) - Decimal(elsewhere)
    for row in others:
        changes.append(SimpleNamespace(file=row.file, lane=row.lane, index=row.index, saved_usd=Decimal(on_recoverable),
                                       priced=True, reported_read=0,
                                       counterfactual_read=row.predicted_cache_read + row.lost_tokens))
        saved += Decimal(on_recoverable)
    w = WhatIf(fix="keep-alive", applies=True, requests_changed=len(changes) - 1, tokens_to_read=0, saved_usd=saved,
               assumption="assumed", detail=f"{len(paths)} keep-alive request(s) bridge {len(paths)} idle gap(s) past the TTL",
               changes=tuple(changes))
    return replace(result, recommendations=rank(result, Resimulated({"keep-alive": w}, {})))


def _parts(text: str) -> list[tuple[Decimal, bool]]:
    return [(Decimal(usd), bool(gross)) for usd, gross in re.findall(r"\$([0-9.]+) of its (gross )?saving is on", text)]


def test_a_part_larger_than_the_saving_is_called_gross_with_the_net_beside_it(tmp_path: Path) -> None:
    """Roo (controlled-hierarchy, jsboige-mcp-servers@dbe9a89): keep-alive ``saves $0.1867`` beside
    ``$0.4993 of its ... saving is on 3 miss(es)``: the part is what the fix saved on those
    requests, the saving net of what its other changes cost."""
    result = _gross_case(tmp_path, "0.30", "0.05")
    (rec,) = result.recommendations
    assert rec.saved_usd == Decimal("0.25")
    assert _parts(rec.detail) == [(Decimal("0.3000"), True)], rec.detail
    assert ("gross: $0.3000 on every request it saves on (all of it on the misses above), against the $0.2500 it "
            "saves net, as the keep-alive requests it sends and its other changes cost $0.0500") in rec.detail
    # Never a part above the saving under the bare word, in any view.
    record = audit_record(result)
    for text in ("\n".join(advice_lines(result)), advice_html(record), record["recommendations"][0]["detail"]):
        assert all(gross or usd <= rec.saved_usd for usd, gross in _parts(text)), text
        assert "of its gross saving is on" in text


def test_a_part_within_the_saving_keeps_its_plain_words(tmp_path: Path) -> None:
    result = _gross_case(tmp_path, "0.30", "0.00")
    (rec,) = result.recommendations
    assert _parts(rec.detail) == [(Decimal("0.3000"), False)] and "gross" not in rec.detail


def test_the_gross_beside_the_parts_is_the_whole_gross_recoverable_misses_too(tmp_path: Path) -> None:
    """Roo (jsboige-mcp-servers@dbe9a89, controlled-hierarchy): ``gross: $0.4993, more than the
    $0.1867 it saves net, as the keep-alive requests it sends and its other changes cost $0.3126``,
    where keep-alive saved $0.6863 on reads (its $0.1870 on misses the split counts recoverable
    left out) and its requests cost $0.4996: the gross said was the parts', not the fix's, and
    understated what the fix costs. Gross is every change that saves; gross - net, what it costs."""
    result = _gross_case(tmp_path, "0.30", "0.40", on_recoverable="0.20")
    (rec,) = result.recommendations
    assert rec.saved_usd == Decimal("0.10")
    assert _parts(rec.detail) == [(Decimal("0.3000"), True)], rec.detail
    assert ("gross: $0.5000 on every request it saves on ($0.3000 on the misses above, $0.2000 on others), against "
            "the $0.1000 it saves net, as the keep-alive requests it sends and its other changes cost $0.4000"
            ) in rec.detail, rec.detail
