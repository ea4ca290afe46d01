"""Dollars the audit cannot know are null in ``--format json``, decided where the text and the
page decide them: a fix's savings, a loss class's dollars, and what a version 1 file meant."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from prefixbench.reports.audit import audit_json
from prefixbench.reports.cli import main
from prefixbench.simulator.pricing import format_usd
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.audit.losses import LossSplit, split_sums
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

UNPRICED = "claude-nobody-knows-9"


def _paused(folder: Path, name: str, model: str | None, gap: str) -> None:
    """A session whose second call, ``gap`` (``HH:MM``) after the first, writes again what the first wrote."""
    extra = {} if model is None else {"model": model}
    t = Transcript(name)
    t.n = 100 * int(name[1:])
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant(f"{name}r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)], **extra)
    t.user("next", f"2025-09-03T{gap}:00.000Z")
    t.assistant(f"{name}r2", f"2025-09-03T{gap}:03.000Z", [cc_usage(3, 15300, 0, 9)], **extra)
    write_jsonl(folder / f"{name}.jsonl", t.lines)


def test_a_fix_whose_misses_are_all_unpriced_has_null_saved_usd(tmp_path: Path, capsys) -> None:
    # A TTL expiry on a model with no price: the fix's *dollars* read "unknown (unpriced)" and its
    # lost_usd was null, but its saved_usd stayed 0.0, which reads as "does not pay".
    _paused(tmp_path, "s1", UNPRICED, "00:20")
    assert main(["audit", str(tmp_path), "--quiet"]) == 0
    assert "unknown (unpriced)" in capsys.readouterr().out
    assert main(["audit", str(tmp_path), "--quiet", "--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)["recommendations"]
    assert recs and all(rec["unpriced_requests"] for rec in recs)
    assert [(rec["saved_usd"], rec["lost_usd"]) for rec in recs] == [(None, None)] * len(recs)
    # A priced session beside it: the fixes' dollars are known again.
    _paused(tmp_path, "s2", None, "00:20")
    assert main(["audit", str(tmp_path), "--quiet", "--format", "json"]) == 0
    recs = json.loads(capsys.readouterr().out)["recommendations"]
    assert all(rec["saved_usd"] is not None and rec["lost_usd"] > 0 for rec in recs)


def test_a_loss_class_with_no_priced_loss_is_null_though_it_holds_a_cold_start(tmp_path: Path) -> None:
    # The unavoidable class holds two cold starts (nothing lost, one of them priced) and an
    # unpriced session's 2 h pause (past any TTL: unavoidable) that lost 15,000 tokens: 3
    # requests against 1 unpriced read as "some priced", and the class said $0.00.
    _paused(tmp_path, "s1", UNPRICED, "02:00")
    _paused(tmp_path, "s2", None, "00:20")
    result = run_audit([tmp_path])
    split = result.loss_split
    assert (split.unavoidable_requests, split.unavoidable_unpriced) == (3, 1)
    record = json.loads(audit_json(result))["loss_split"]
    assert record["unavoidable_usd"] is None
    assert record["recoverable_usd"] > 0 and record["lost_usd"] == record["recoverable_usd"]
    # One predicate decides it for every view (the text's line and the page read it too).
    assert split.usd_unknown("unavoidable") and not split.usd_unknown("recoverable")
    assert not split.usd_unknown("unknown")  # no request of it: $0.00
    # The text's split line says so too (it said "unavoidable $0.00 (3 req, 1 unpriced)").
    from prefixbench.reports.audit import audit_table

    line = next(line for line in audit_table(result).splitlines() if line.startswith("lost $"))
    assert "unavoidable (3 req, 1 unpriced: no dollar figure)" in line and "unknown $0 (0 req)" in line


def test_usd_unknown_is_decided_by_priced_losses_not_request_counts() -> None:
    cent = Decimal("0.004")  # a priced loss under half a cent: known, though it rounds to $0.00
    split = split_sums({"recoverable": (3, Decimal(0), 1, 0), "unavoidable": (2, Decimal(0), 0, 0), "unknown": (2, cent, 1, 0)})
    assert split.usd_unknown("recoverable")  # its priced requests lost nothing
    assert not split.usd_unknown("unavoidable")  # nothing lost at all: $0.00 is known
    assert not split.usd_unknown("unknown")
    # A split made without the priced classes (as before) says unknown only where some are unpriced.
    bare = LossSplit(Decimal(0), Decimal(0), Decimal(0), Decimal(0), 1, 1, 0, 1, 0, 0)
    assert bare.usd_unknown("recoverable") and not bare.usd_unknown("unavoidable")


def test_schema_2_and_a_saved_schema_1_audit_compare(tmp_path: Path, capsys) -> None:
    # Schema 1 wrote 0.0 where a unit's dollars are unknown, schema 2 writes null: the version
    # says the type changed, and compare reads a baseline saved as 1 beside a new 2, the 0.0 of
    # a unit none of whose requests is priced read as unknown (not comparable, never gated).
    _paused(tmp_path / "logs", "s1", UNPRICED, "00:20")
    assert main(["audit", str(tmp_path / "logs"), "--quiet", "--format", "json"]) == 0
    new = json.loads(capsys.readouterr().out)
    assert new["schema"] >= 2 and new["totals"]["cost_usd"] is None
    old = json.loads(json.dumps(new))
    old["schema"] = 1
    for unit in (*old["lanes"], old["totals"]):
        unit.update(cost_usd=0.0, lost_usd=0.0)
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json"), "--max-regression", "usd=0%"]) == 0
    out = capsys.readouterr().out
    assert "(from 0)" not in out and "every shared figure is identical" in out, out
    old["schema"] = 7
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 2
    assert "audit schema 7 is not supported (this prefixbench reads 1, 2, 3, 4, 5, 6)" in capsys.readouterr().err
    # In JSON's spelling, not Python's ("True"); and 6.0 is no schema, though Python finds it equal to 6.
    for schema, said in ((True, "true"), (6.0, "6.0"), (None, "null")):
        old["schema"] = schema
        (tmp_path / "old.json").write_text(json.dumps(old))
        assert main(["compare", str(tmp_path / "old.json"), str(tmp_path / "new.json")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"key 'schema': audit schema {said} is not supported" in err, err


def test_explicit_cache_dollars_beside_unpriced_requests_and_unknown_storage(tmp_path: Path) -> None:
    # The total paid holds the requests' dollars: where none of them is priced (a model with no
    # price reads a cache made on a priced one) it is unknown, though creating and keeping the
    # explicit cache is priced; those known parts stay in their own fields and in the headline.
    from prefixbench.reports.audit import audit_table
    from tests.unit.logs.test_gemini_wire import API, T0, answer, cache_created, call, gen_body, usage
    from tests.unit.audit.fixtures import write_jsonl as write

    body = gen_body("q1", cached="cachedContents/abc123")
    lines = [cache_created("cachedContents/abc123", 100_000, T0),
             call(f"{API}/models/gemini-nobody-9:generateContent", body, {"body": answer("a", usage(100_010, 100_000, 50))}, T0 + 600)]
    result = run_audit([write(tmp_path / "a" / "explicit.jsonl", lines)])
    totals = json.loads(audit_json(result))["totals"]
    assert totals["cost_usd"] is None and totals["unpriced_requests"] == totals["requests"] == 1
    assert (totals["cache_create_usd"], totals["storage_usd"]) == (0.03, 0.2)
    assert "explicit caches (not requests): $0.0300 to create, $0.2000 storage" in audit_table(result)
    # A cache whose keeping the log does not show: its storage is unknown, not $0 (it said
    # "$0.0003 to create, $0 storage" and storage_usd 0.0).
    lines = [cache_created("cachedContents/a", 1000, T0), call(f"{API}/cachedContents/a", {"ttl": "60s"}, {"body": {}}, T0 + 10, method="PATCH"),
             call(f"{API}/models/gemini-2.5-flash:generateContent", gen_body("q", cached="cachedContents/a"), {"body": answer("a", usage(1010, 1000, 5))}, T0 + 20)]
    del lines[1]["request"]["timestamp"]
    result = run_audit([write(tmp_path / "b" / "unknown.jsonl", lines)])
    totals = json.loads(audit_json(result))["totals"]
    assert (totals["cache_create_usd"], totals["storage_usd"]) == (0.0003, None)
    table = audit_table(result)
    create = format_usd(Decimal("0.0003"))
    assert f"{create} to create, unknown storage" in table and "$0 storage" not in table
    assert any(f"{create} to create (input price) and unknown storage" in n for n in result.notes)
    from prefixbench.reports.audit import audit_html

    assert "keeping them unknown of storage" in audit_html(result)


def test_with_nothing_priced_a_class_with_no_requests_lost_a_known_zero(tmp_path: Path) -> None:
    # Only an unpriced session: every class was "no dollar figure" (JSON null), the empty ones too.
    _paused(tmp_path, "s1", UNPRICED, "02:00")
    result = run_audit([tmp_path])
    split = result.loss_split
    assert split.unavoidable_requests and not split.recoverable_requests and not split.unknown_requests
    record = json.loads(audit_json(result))["loss_split"]
    assert record["lost_usd"] is None and record["unavoidable_usd"] is None
    assert record["recoverable_usd"] == 0 and record["unknown_usd"] == 0
    from prefixbench.reports.audit import audit_table

    line = next(line for line in audit_table(result).splitlines() if line.startswith("lost unknown"))
    assert "recoverable $0 (0 req)" in line and "unknown $0 (0 req)" in line
    assert "unavoidable (" in line and "no dollar figure" in line
    assert split.usd_unknown("unavoidable") and not split.usd_unknown("recoverable")


def test_with_nothing_priced_a_class_of_cold_starts_is_a_known_zero(tmp_path: Path) -> None:
    # An OpenHands run on llama-4-maverick (no price): "unavoidable (3 req: no dollar figure)" and
    # unavoidable_usd null, while the causes table read "cold-start 3 0 $0". A cold start loses
    # nothing, priced or not; only a class that lost unpriced tokens has no dollar figure.
    _paused(tmp_path, "s1", UNPRICED, "00:20")  # a cold start, then 20 min idle: an unpriced expiry
    result = run_audit([tmp_path])
    split = result.loss_split
    assert (split.unavoidable_requests, split.unavoidable_unpriced) == (1, 0)
    assert (split.recoverable_requests, split.recoverable_unpriced) == (1, 1)
    record = json.loads(audit_json(result))
    assert [(c["cause"], c["lost_usd"]) for c in record["causes"] if c["cause"] == "cold-start"] == [("cold-start", 0.0)]
    lost = record["loss_split"]
    assert lost["unavoidable_usd"] == 0 and lost["recoverable_usd"] is None and lost["unknown_usd"] == 0
    assert lost["lost_usd"] is None  # the expiry's dollars are not known
    assert not split.usd_unknown("unavoidable") and split.usd_unknown("recoverable")
    from prefixbench.reports.audit import audit_html, audit_table

    line = next(line for line in audit_table(result).splitlines() if line.startswith("lost unknown"))
    assert "unavoidable $0 (1 req)" in line and "recoverable (1 req, 1 unpriced: no dollar figure)" in line
    page = audit_html(result)
    assert 'data-loss-class="unavoidable"' in page
    row = page.split('data-loss-class="unavoidable"', 1)[1].split("</tr>", 1)[0]
    assert "$0" in row and "unknown" not in row
