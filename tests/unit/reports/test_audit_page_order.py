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
