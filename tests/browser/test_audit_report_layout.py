"""report.html of an audit in headless Chromium at 1400 px: the worst requests and the roll-ups
come before the detail, the colours of the page are the PNG's (one palette), and no text
overflows its box."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from prefixbench.reports.palette import CACHED, UNCACHED, WRITTEN, cause_colour
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

#: The widest a report is read at; the page must fit it.
WIDTH = 1400


def _logs(folder: Path) -> Path:
    """Two sessions on two days: a TTL expiry (a 20-minute pause), and a session crossing midnight."""
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 40)])
    t.user("result", "2025-09-03T00:00:03.000Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:05.000Z", [cc_usage(3, 200, 15000, 40)])
    t.user("after lunch", "2025-09-03T00:20:00.000Z")
    t.assistant("r3", "2025-09-03T00:20:03.000Z", [cc_usage(3, 15300, 0, 40)])
    write_jsonl(folder / "a-session-whose-name-is-long-enough-to-need-cutting-0123456789abcdef.jsonl", t.lines)
    u = Transcript("s2")
    u.user("go", "2025-09-03T23:59:00.000Z", root=True)
    u.assistant("q1", "2025-09-03T23:59:02.000Z", [cc_usage(3, 12000, 0, 40)])
    u.user("result", "2025-09-04T00:00:03.000Z", tool=True)
    u.assistant("q2", "2025-09-04T00:00:05.000Z", [cc_usage(3, 100, 12000, 40)])
    u.user("much later", "2025-09-04T02:00:03.000Z")
    u.assistant("q3", "2025-09-04T02:00:05.000Z", [cc_usage(3, 12500, 0, 40)])
    write_jsonl(folder / "s2.jsonl", u.lines)
    return folder


def _audit(logs: Path, out: Path) -> dict:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["audit", str(logs), "--format", "json", "--out", str(out), "--quiet"]) == 0
    return json.loads(buf.getvalue())


@pytest.fixture
def page_at(browser):
    contexts = []

    def _open(path: Path):
        context = browser.new_context(offline=True, viewport={"width": WIDTH, "height": 1000})
        contexts.append(context)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.resolve().as_uri())
        page.wait_for_load_state("load")
        assert errors == []
        return page

    yield _open
    for context in contexts:
        context.close()


def _png_colours(path: Path) -> set[str]:
    from matplotlib.image import imread

    pixels = (imread(path)[:, :, :3] * 255).round().astype(int).reshape(-1, 3)
    return {f"#{r:02x}{g:02x}{b:02x}" for r, g, b in {tuple(p) for p in pixels.tolist()}}


def _assert_no_overflow(page) -> None:
    """The page fits the window, and no table cell's text runs past its cell."""
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    spilled = page.evaluate(
        """Array.from(document.querySelectorAll('td, th, h2, p, li')).filter(el => el.getClientRects().length)
           .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.tagName + ': ' + el.textContent.slice(0, 80))"""
    )
    assert spilled == []
    main_right = page.evaluate("document.querySelector('main').getBoundingClientRect().right")
    widest = page.evaluate("Math.max(...Array.from(document.querySelectorAll('table, .chart')).map(e => e.getBoundingClientRect().right))")
    assert widest <= main_right + 1


def _check(page, record: dict, png: Path) -> None:
    order = page.evaluate("Array.from(document.querySelectorAll('main > section')).map(s => s.id)")
    assert order.index("worst") < order.index("causes") < order.index("requests")
    assert order.index("sessions") < order.index("lanes") and order.index("days") < order.index("lanes")
    # the roll-ups: one row a session and a day, numbers equal to the JSON's
    for what, section in (("session", "sessions"), ("day", "days")):
        rows = page.evaluate(
            f"Array.from(document.querySelectorAll('tr[data-{what}]')).map(tr => [tr.dataset.{what}, "
            "Object.fromEntries(Array.from(tr.querySelectorAll('td[data-field]')).map(td => [td.dataset.field, td.dataset.value]))])"
        )
        assert [key for key, _ in rows] == [r["key"] for r in record[section]]
        for (_, fields), r in zip(rows, record[section]):
            assert {f: float(v) for f, v in fields.items()} == {f: pytest.approx(float(r[f])) for f in fields}
    # the worst requests: costliest first, as the JSON says
    worst = page.evaluate("Array.from(document.querySelectorAll('tr[data-worst]')).map(tr => +tr.dataset.worst)")
    lost = [record["requests"][i]["lost_usd"] for i in worst]
    assert worst and lost == sorted(lost, reverse=True)
    # one palette: the page's token and cause colours are the PNG's
    fills = page.evaluate(
        "Object.fromEntries(['read', 'write5m', 'uncached'].map(k => [k, (document.querySelector('.lane-chart rect.seg-' + k) || {getAttribute: () => null}).getAttribute('fill')]))"
    )
    assert fills == {"read": CACHED, "write5m": WRITTEN, "uncached": UNCACHED}
    markers = page.evaluate(
        "Array.from(document.querySelectorAll('.lane-chart path.marker')).map(p => [p.dataset.marker, p.getAttribute('fill')])"
    )
    assert markers and all(fill == cause_colour(cause) for cause, fill in markers)
    in_png = _png_colours(png)
    page_colours = set(fills.values()) | {fill for _, fill in markers}
    assert page_colours <= in_png, page_colours - in_png
    _assert_no_overflow(page)


def test_the_audit_page_at_1400_px(page_at, tmp_path):
    out = tmp_path / "out"
    record = _audit(_logs(tmp_path / "logs"), out)
    assert {r["cause"] for r in record["requests"]} >= {"cold-start", "ttl-expired"}
    _check(page_at(out / "report.html"), record, out / "audit.png")


def test_the_audit_page_of_the_shared_pi_sessions_at_1400_px(page_at, realdata, tmp_path):
    folder = realdata / "pi-sessions"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    record = _audit(folder, tmp_path)
    page = page_at(tmp_path / "report.html")
    _check(page, record, tmp_path / "audit.png")
    # a long detail is cut at a word boundary in its cell, and whole one hover away
    cut = page.evaluate(
        "Array.from(document.querySelectorAll('tr[data-worst] td.detail')).map(td => [td.querySelector('summary') ? "
        "td.querySelector('summary').textContent : td.textContent, td.dataset.tip || null])"
    )
    assert any(tip for _, tip in cut)
    for shown, whole in cut:
        if whole:
            assert shown.endswith("…") and whole.startswith(shown[:-1]) and whole[len(shown) - 1] in " /.,;:=_-)]}"
