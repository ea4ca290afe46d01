"""report.html of an audit without a browser: the worst requests and the roll-ups before the
detail, lane charts on the clock where requests have timestamps, cause colours from the palette."""

from __future__ import annotations

import re

from prefixbench.reports.audit import audit_html
from prefixbench.reports.html import Bar, stacked_bars
from prefixbench.reports.palette import cause_colour
from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.test_rollups import _two_sessions


def test_sections_in_order_and_lane_charts_on_the_clock(tmp_path):
    html = audit_html(run_audit([_two_sessions(tmp_path / "logs")]))
    ids = re.findall(r'<section id="([^"]+)"', html)
    assert ids[:5] == ["what-to-change", "totals", "worst", "sessions", "days"]
    assert ids.index("days") < ids.index("causes") < ids.index("lanes") < ids.index("requests")
    assert "tick-time" in html and "time (UTC)" in html
    markers = re.findall(r'<path class="marker"[^>]*fill="([^"]+)" data-marker="([^"]+)"', html)
    assert markers and all(fill == cause_colour(cause) for fill, cause in markers)


def test_bars_on_the_clock_stand_at_their_times():
    bars = [Bar((("read", 10.0, "#000000"),), "", {}) for _ in range(3)]
    t0 = 1_756_857_600_000  # 2025-09-03T00:00:00Z
    svg = stacked_bars(bars, title="t", xlabel="time", times=[t0, t0 + 3_000, t0 + 1_200_000])
    xs = [float(x) for x in re.findall(r'<rect class="seg-read" x="([0-9.]+)"', svg)]
    assert xs[1] - xs[0] < (xs[2] - xs[1]) / 100  # 3 s apart, then 20 min
    assert "00:00" in svg and "tick-time" in svg
    plain = stacked_bars(bars, title="t", xlabel="request")
    assert "tick-time" not in plain


def test_bars_sent_at_the_same_moment_stand_side_by_side_with_their_markers():
    """report.html's lane chart on the clock: three requests at one millisecond are three bars
    side by side, each with its own marker (on main: one place, one visible bar and marker)."""
    bars = [Bar((("read", 10.0, "#000000"),), "", {}, marker="miss", marker_colour="#ff0000") for _ in range(4)]
    t0 = 1_756_860_774_163
    svg = stacked_bars(bars, title="t", xlabel="time", times=[t0 - 60_000, t0, t0, t0])
    rects = [(float(x), float(w)) for x, w in re.findall(r'<rect class="seg-read" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"', svg)]
    assert len(rects) == 4
    spans = sorted((x, x + w) for x, w in rects)
    assert all(b[0] >= a[1] - 0.011 for a, b in zip(spans, spans[1:])), spans  # none over another (2 decimals drawn)
    markers = re.findall(r'<path class="marker" d="M([0-9.]+),', svg)
    assert len(set(markers)) == 4
    assert spans[-1][1] <= 1100 - 10 + 0.011  # still inside the plot
