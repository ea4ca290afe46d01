"""The audit's report.html in headless Chromium: offline, no console error, and every number
in its tables equal to ``audit --format json --what-if ...``."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

FIXES = "ttl-1h,ttl-auto,stagger-subagents,static-system"


def _run(argv):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(argv)
    return status, buf.getvalue()


def _session(path: Path) -> Path:
    """A main lane with a 20-minute pause (its cache expires), priced at Sonnet 4."""
    t = Transcript("s1")
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 20_000, 0, 40)])
    t.user("more", "2025-09-03T00:00:10.000Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:12.000Z", [cc_usage(3, 500, 20_000, 40)])
    t.user("after lunch", "2025-09-03T00:20:12.000Z")
    t.assistant("r3", "2025-09-03T00:20:14.000Z", [cc_usage(3, 20_600, 0, 40)])
    return write_jsonl(path / "s1.jsonl", t.lines)


def _check_page(open_report, out: Path, record: dict) -> None:
    loaded = open_report(out / "report.html")
    assert loaded.console == [], loaded.console
    assert set(loaded.requests) == {(out / "report.html").resolve().as_uri()}
    page = loaded.page
    assert page.evaluate("document.body.dataset.kind") == "audit"
    embedded = page.evaluate("JSON.parse(document.getElementById('prefixbench-data').textContent)")
    assert embedded["totals"] == record["totals"] and embedded["what_if"] == record["what_if"]
    totals = page.evaluate("Array.from(document.querySelectorAll('tr[data-totals] td[data-field]')).map(td => [td.dataset.field, td.dataset.value])")
    assert {f: float(v) for f, v in totals} == {f: pytest.approx(float(record["totals"][f])) for f, _ in totals}
    lanes = page.evaluate(
        "Array.from(document.querySelectorAll('tr[data-lane]')).map(tr => [tr.dataset.lane, "
        "Object.fromEntries(Array.from(tr.querySelectorAll('td[data-field]')).map(td => [td.dataset.field, td.dataset.value]))])"
    )
    by_key = {f"{lane['file']}|{lane['lane']}": lane for lane in record["lanes"]}
    assert len(lanes) == len(record["lanes"])
    for key, fields in lanes:
        for field, value in fields.items():
            assert float(value) == pytest.approx(float(by_key[key][field])), (key, field)
    fixes = page.evaluate(
        "Array.from(document.querySelectorAll('tr[data-fix]')).map(tr => [tr.dataset.fix, "
        "Object.fromEntries(Array.from(tr.querySelectorAll('td[data-field]')).map(td => [td.dataset.field, td.dataset.value]))])"
    )
    assert [f for f, _ in fixes] == [w["fix"] for w in record["what_if"]]
    for (fix, fields), w in zip(fixes, record["what_if"]):
        assert fields["applies"] == str(w["applies"])
        if w["applies"]:
            assert float(fields["saved_usd"]) == pytest.approx(w["saved_usd"])
            assert int(fields["tokens_to_read"]) == w["tokens_to_read"]
        else:
            assert fields["saved_usd"] == ""  # cannot apply: no number at all
    # one bar per request, carrying the reported usage; a marker per miss
    bars = page.evaluate("Array.from(document.querySelectorAll('.lane-chart g.bar')).map(g => [+g.dataset.request, +g.dataset.read, +g.dataset.write, g.dataset.cause])")
    assert len(bars) == len(record["requests"])
    for i, read, write, cause in bars:
        r = record["requests"][i]
        assert (read, write, cause) == ((r["reported_cache_read"] or 0), (r["reported_cache_write"] or 0), r["cause"] or "")
    assert page.locator(".lane-chart path.marker").count() == sum(1 for r in record["requests"] if r["cause"])
    # the waterfall starts at what was paid
    paid = page.evaluate("document.querySelector('rect.wf-total').dataset.value")
    assert float(paid) == pytest.approx(record["totals"]["cost_usd"])


def test_audit_page_of_a_synthetic_session(open_report, tmp_path):
    log = _session(tmp_path)
    out = tmp_path / "out"
    status, text = _run(["audit", str(log), "--format", "json", "--what-if", FIXES, "--out", str(out), "--quiet"])
    assert status == 0
    record = json.loads(text)
    assert json.loads((out / "audit.json").read_text()) == record
    assert any(r["cause"] == "ttl-expired" for r in record["requests"])
    _check_page(open_report, out, record)
    page = open_report(out / "report.html").page
    page.locator(".lane-chart path.marker").last.hover()
    assert "ttl-expired" in page.locator("#tip").text_content()


def test_audit_page_of_the_shared_claude_code_transcripts(open_report, realdata, tmp_path):
    folder = realdata / "claude-code-viewer"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    status, text = _run(["audit", str(folder), "--format", "json", "--what-if", FIXES, "--out", str(tmp_path), "--quiet"])
    assert status == 0
    _check_page(open_report, tmp_path, json.loads(text))
