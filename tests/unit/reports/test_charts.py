"""Charts tell the truth: inspected as matplotlib Figure objects, not pixels."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from prefixbench.reports.charts import fmt_tokens, hit_rate_figure, plt, timeline_figure
from prefixbench.reports.cost import usd_column
from prefixbench.reports.tables import fmt_calls


def observations(engine: str, preset: str, n: int, rejected: set[int] = frozenset(), summaries: set[int] = frozenset()) -> list[dict]:
    rows = []
    for i in range(n):
        prompt = 1000 + 100 * i
        bad = i in rejected
        rows.append(
            {
                "window": 32_000, "engine": engine, "preset": preset, "index": i, "prompt_tokens": prompt,
                # A rejected request carries its prompt as uncached in the frame: it must not be drawn so.
                "cached_tokens": 0 if bad else prompt - 50, "uncached_tokens": prompt if bad else 50,
                "status": 400 if bad else 200, "purpose": "compaction" if i in summaries else "conversation",
            }
        )
    return rows


@pytest.fixture
def timeline():
    rows = observations("ranges", "legacy", 191, rejected={40, 41, 42}, summaries={60}) + observations("checkpoint", "legacy", 167)
    fig = timeline_figure(pd.DataFrame(rows), 32_000)
    yield fig
    plt.close(fig)


def bar_xs(ax, label: str) -> set[float]:
    found = [c for c in ax.collections if c.get_label() == label]
    if not found:
        return set()
    return {round(float(np.mean(path.vertices[:4, 0]))) for path in found[0].get_paths()}


def test_rejected_requests_are_not_in_the_uncached_stack(timeline):
    ranges = next(ax for ax in timeline.axes if ax.get_title(loc="left").startswith("ranges"))
    assert {40, 41, 42} <= bar_xs(ranges, "rejected")
    assert not {40, 41, 42} & bar_xs(ranges, "uncached")
    assert not {40, 41, 42} & bar_xs(ranges, "cached")
    assert bar_xs(ranges, "uncached") == set(range(191)) - {40, 41, 42}
    legend = [t.get_text() for legend in timeline.legends for t in legend.get_texts()]
    assert any(text.startswith("rejected (400)") for text in legend)


def test_every_panel_x_range_covers_its_requests(timeline):
    spans = {}
    for ax in timeline.axes:
        label = ax.get_title(loc="left").split(" ")[0]
        xs = bar_xs(ax, "cached") | bar_xs(ax, "rejected")
        lo, hi = ax.get_xlim()
        assert lo <= min(xs) - 0.4 and hi >= max(xs) + 0.4, (label, (lo, hi), max(xs))
        spans[label] = hi
    # Panels do not share one axis: the shorter run is not stretched to the longer one's.
    assert spans["ranges/legacy"] > spans["checkpoint/legacy"]


def runs(rows):
    return pd.DataFrame(rows, columns=["window", "engine", "preset", "summary_hit_ratio"])


def test_hit_rate_labels_values_explains_whiskers_and_empty_runs():
    fig = hit_rate_figure(
        runs(
            [
                (32_000, "checkpoint", "legacy", [0.0, 0.0]),
                (32_000, "checkpoint", "patched", [0.97, 0.99]),
                (128_000, "checkpoint", "patched", [0.999, 0.999]),
                (32_000, "ranges", "legacy", []),
                (32_000, "ranges", "patched", []),
            ]
        )
    )
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "0.0%" in texts and "98.0%" in texts  # a 0% bar is labelled, not invisible
    assert "99.9%" in texts and "100.0%" not in texts  # a near-full bar never reads as full
    assert texts.count("no summary calls") == 2  # not drawn as 0%
    assert "min-max" in ax.get_title()
    bars = [p for p in ax.patches if p.get_height() > 0]
    # One colour per preset whatever the engine: the legacy colour is the legacy handle's.
    handles = {t.get_text(): h for legend in fig.legends for t, h in zip(legend.get_texts(), legend.legend_handles)}
    assert handles["legacy"].get_facecolor() != handles["patched"].get_facecolor()
    assert any(np.allclose(b.get_facecolor(), handles["patched"].get_facecolor()) for b in bars)
    plt.close(fig)


def test_presets_keep_their_colour_across_engines():
    fig = hit_rate_figure(runs([(32_000, "a", "legacy", [0.5]), (32_000, "b", "legacy", [0.6]), (32_000, "b", "patched", [0.9])]))
    heights = {round(p.get_height()): p.get_facecolor() for p in fig.axes[0].patches if p.get_height() > 0}
    assert np.allclose(heights[50], heights[60]) and not np.allclose(heights[60], heights[90])
    plt.close(fig)


@pytest.mark.parametrize("value, text", [(0, "0"), (500, "500"), (20_000, "20k"), (1_500, "1.5k"), (80_000_000, "80M"), (1_500_000, "1.5M")])
def test_token_ticks(value, text):
    assert fmt_tokens(value) == text


def test_summary_calls_column_is_abbreviated():
    assert fmt_calls([470, 470, 22_268]) == "470 / 470 / 22,268"
    long = fmt_calls([22_268] + [470] * 5_999)
    assert long == "22,268 / 470 / 470 / 470 / ... / 470 / 470 (6,000 calls, 470-22,268)"


def test_one_precision_per_cost_column():
    column = usd_column([Decimal("0.0274"), Decimal("0.002268"), Decimal(0), None])
    assert column == ["$0.027400", "$0.002268", "$0", "-"]
    assert usd_column([Decimal("0.2193"), Decimal("12.34")]) == ["$0.2193", "$12.3400"]
