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


def test_a_log_holding_script_and_comment_text_leaves_the_page_script_running(open_report, tmp_path):
    """A model name and a body excerpt holding ``<!--<script``, ``</script>``, terminal escapes and
    ``<img onerror>``: the embedded data parses to what the JSON says, no element comes from the
    log, and the page's own script runs (hovering a miss shows its tip)."""
    from tests.unit.audit.fixtures import HOSTILE, hostile_logs

    logs = hostile_logs(tmp_path / "logs")
    out = tmp_path / "out"
    status, text = _run(["audit", str(logs), "--format", "json", "--out", str(out), "--quiet"])
    assert status == 0
    record = json.loads(text)
    loaded = open_report(out / "report.html")
    assert loaded.console == [], loaded.console
    page = loaded.page
    assert page.evaluate("document.scripts.length") == 2 and page.locator("img").count() == 0
    embedded = page.evaluate("JSON.parse(document.getElementById('prefixbench-data').textContent)")
    assert embedded["requests"] == record["requests"] and HOSTILE in {m["model"] for m in embedded["models"]}
    page.locator(".lane-chart path.marker").first.hover()
    tip = page.locator("#tip")
    assert tip.is_visible() and "cold-start" in tip.text_content()
    tips = page.evaluate("Array.from(document.querySelectorAll('.lane-chart path.marker')).map(p => p.getAttribute('data-tip'))")
    assert any(HOSTILE in tip for tip in tips)  # the name kept as text, never parsed


def test_a_big_audit_draws_its_worst_requests_and_links_every_one(open_report, tmp_path, monkeypatch):
    """Past the page's cap (:data:`prefixbench.reports.audit.PAGE_REQUESTS`) the page draws the
    worst requests only, each lane's in file order, says how many of how many, and links the
    files that hold every request; its tables still count them all."""
    import prefixbench.reports.audit as audit

    monkeypatch.setattr(audit, "PAGE_REQUESTS", 4)
    t = Transcript("s1")
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    read = 0
    for n in range(10):  # a pause before every third request: its cache expired
        minute = n * 2 + (20 * (n // 3))
        t.assistant(f"r{n}", f"2025-09-03T{minute // 60:02d}:{minute % 60:02d}:02.000Z",
                    [cc_usage(3, 500 if read and n % 3 else 20_000 + read, read if n % 3 else 0, 40)])
        read = read + 500 if n % 3 else 20_000
        t.user("more", f"2025-09-03T{minute // 60:02d}:{minute % 60:02d}:10.000Z", tool=True)
    log = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    out = tmp_path / "out"
    status, text = _run(["audit", str(log), "--format", "json", "--out", str(out), "--quiet"])
    assert status == 0
    record = json.loads(text)
    misses = [i for i, r in enumerate(record["requests"]) if r["cause"]]
    assert len(record["requests"]) == 10 and len(misses) >= 4
    loaded = open_report(out / "report.html")
    assert loaded.console == [], loaded.console
    page = loaded.page
    embedded = page.evaluate("JSON.parse(document.getElementById('prefixbench-data').textContent)")
    assert embedded["requests_shown"] == {"shown": 4, "total": 10, "every_request_in": ["audit.csv", "audit.json"]}
    worst = sorted(misses, key=lambda i: (-record["requests"][i]["lost_usd"], -record["requests"][i]["lost_tokens"], i))[:4]
    assert embedded["requests"] == [record["requests"][i] for i in sorted(worst)]
    bars = page.evaluate("Array.from(document.querySelectorAll('.lane-chart g.bar')).map(g => +g.dataset.index)")
    assert bars == [record["requests"][i]["index"] for i in sorted(worst)]
    assert page.evaluate("Array.from(document.querySelectorAll('#requests a')).map(a => a.getAttribute('href'))") == ["audit.csv", "audit.json"]
    assert "4 of the 10 requests" in page.locator("#requests").text_content()
    assert float(page.evaluate("document.querySelector('tr[data-totals] td[data-field=requests]').dataset.value")) == 10
    rows = (out / "audit.csv").read_text().splitlines()
    assert len(rows) == 11  # every request beside the page
