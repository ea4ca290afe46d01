"""report.html in a real browser: it loads offline from file:// with no console error and no
request beyond itself, and the numbers in its DOM equal the command's JSON output."""

from __future__ import annotations

import contextlib
import io
import json

import pandas as pd
import pytest

from prefixbench.reports.cli import main


def _run(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        status = main(argv)
    return status, buf.getvalue()


@pytest.fixture(scope="module")
def sweep_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    status, text = _run(["sweep", "--windows", "32k", "--presets", "legacy,patched", "--steps", "40", "--quiet",
                         "--price", "deepseek-v4-flash", "--out", str(out), "--format", "json"])
    assert status == 0
    return out, json.loads(text)


@pytest.fixture(scope="module")
def rejected_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("rejected")
    status, text = _run(["sweep", "--workload", "thinking-tools", "--engines", "checkpoint,user-tail", "--profile", "deepseek-relay",
                         "--windows", "32k", "--presets", "legacy", "--turns", "1", "--steps-per-turn", "30",
                         "--quiet", "--out", str(out), "--format", "json"])
    assert status == 0
    return out, json.loads(text)


def _clean(loaded, path):
    assert loaded.console == [], loaded.console
    assert set(loaded.requests) == {path.resolve().as_uri()}, loaded.requests


def test_sweep_page_loads_offline_and_its_numbers_are_the_json(open_report, sweep_out):
    out, runs = sweep_out
    loaded = open_report(out / "report.html")
    _clean(loaded, out / "report.html")
    page = loaded.page
    assert page.evaluate("document.body.dataset.kind") == "sweep"
    embedded = page.evaluate("JSON.parse(document.getElementById('prefixbench-data').textContent)")
    assert embedded["runs"] == runs
    cells = page.evaluate(
        "Array.from(document.querySelectorAll('tr[data-run] td[data-field]')).map("
        "td => [td.closest('tr').dataset.run, td.dataset.field, td.dataset.value, td.textContent])"
    )
    assert cells
    seen = set()
    for run, field, value, text in cells:
        expected = runs[int(run)][field]
        seen.add(field)
        if isinstance(expected, list):
            assert json.loads(value) == expected, (run, field)
        elif expected is None:
            assert value == "" and text.startswith("-"), (run, field, text)
        else:
            assert float(value) == pytest.approx(expected, rel=1e-12, abs=1e-15), (run, field)
        if field.startswith("session_") and expected is not None:
            assert text == f"{expected:,}"
    assert {"session_uncached_tokens", "session_cached_tokens", "summary_uncached_tokens", "total_usd"} <= seen
    # every request is a bar, and the bars add up to the run totals
    obs = pd.read_csv(out / "observations.csv")
    for i, run in enumerate(runs):
        bars = page.evaluate(
            f"Array.from(document.querySelectorAll('.timeline[data-run=\"{i}\"] g.bar')).map(g => "
            "[+g.dataset.cached, +g.dataset.uncached, +g.dataset.written, g.dataset.purpose])"
        )
        mine = obs[(obs["preset"] == run["preset"]) & (obs["window"] == run["window"])]
        assert len(bars) == len(mine) == run["num_requests"]
        assert sum(b[0] for b in bars) == run["session_cached_tokens"]
        assert sum(b[1] for b in bars) == run["session_uncached_tokens"]
        assert sum(b[2] for b in bars) == run["session_written_tokens"]
        markers = page.evaluate(f"document.querySelectorAll('.timeline[data-run=\"{i}\"] path.marker').length")
        assert markers == sum(1 for b in bars if b[3] == "compaction") == run["num_summaries"]
    # the hit-rate chart: one bar per run with summary calls, at the mean hit
    for run in runs:
        value = page.evaluate(
            f"document.querySelector('rect.gbar[data-series=\"{run['preset']}\"]').dataset.value"
        )
        hits = run["summary_hit_ratio"]
        assert float(value) == pytest.approx(sum(hits) / len(hits) * 100)


def test_hovering_a_bar_shows_its_numbers(open_report, sweep_out):
    out, runs = sweep_out
    page = open_report(out / "report.html").page
    page.hover(".timeline[data-run='1'] g.bar[data-purpose='compaction']")
    tip = page.locator("#tip")
    assert tip.is_visible()
    assert "(compaction)" in tip.text_content() and "prompt tokens" in tip.text_content()


def test_rejected_requests_are_drawn_apart_never_as_uncached(open_report, rejected_out):
    out, runs = rejected_out
    loaded = open_report(out / "report.html")
    _clean(loaded, out / "report.html")
    page = loaded.page
    (run,) = [r for r in runs if r["engine"] == "user-tail"]
    assert run["num_rejected"] > 0
    rejected = page.evaluate(
        "Array.from(document.querySelectorAll('g.bar[data-status=\"400\"]')).map(g => "
        "[+g.dataset.uncached, g.querySelectorAll('rect.seg-uncached').length, g.querySelectorAll('rect.seg-rejected').length])"
    )
    assert len(rejected) == run["num_rejected"]
    assert all(u == 0 and n_unc == 0 and n_rej == 1 for u, n_unc, n_rej in rejected)


def test_check_page(open_report, tmp_path):
    status, _ = _run(["check", "--preset", "legacy", "--windows", "32k", "--engines", "checkpoint", "--out", str(tmp_path)])
    assert status == 1
    loaded = open_report(tmp_path / "report.html")
    _clean(loaded, tmp_path / "report.html")
    page = loaded.page
    data = json.loads((tmp_path / "check.json").read_text())
    rows = page.evaluate(
        "Array.from(document.querySelectorAll('tr[data-result]')).map(tr => "
        "[tr.querySelector('td[data-field=verdict]').dataset.value, tr.querySelector('td[data-field=figure]').textContent])"
    )
    assert rows == [[r["verdict"], r["figure"]] for r in data["results"]]
    summary = page.locator("p[data-field=summary]")
    assert int(summary.get_attribute("data-failed")) == sum(not r["passed"] for r in data["results"]) > 0
    assert page.locator("rect.fail").count() == sum(not r["passed"] for r in data["results"])


def test_engines_are_compared_on_the_sweep_page(open_report, rejected_out):
    out, runs = rejected_out
    page = open_report(out / "report.html").page
    totals = dict(page.evaluate("Array.from(document.querySelectorAll('#engines g.bar')).map(g => [g.dataset.engine, +g.dataset.total])"))
    # legacy is the only preset: each engine's bar is its run's session uncached tokens
    assert totals == {r["engine"]: r["session_uncached_tokens"] for r in runs}


def test_labels_drawn_over_a_shape_do_not_hide_its_tip(open_report, tmp_path):
    status, _ = _run(["check", "--preset", "legacy", "--windows", "32k", "--engines", "checkpoint", "--out", str(tmp_path)])
    page = open_report(tmp_path / "report.html").page
    cell = page.locator("rect.fail").first
    cell.hover(timeout=5000)  # the PASS/FAIL text on top must let the pointer through
    assert page.locator("#tip").text_content() == cell.get_attribute("data-tip")
