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


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 - 1 and b.x0 < a.x1 - 1 and a.y0 < b.y1 - 1 and b.y0 < a.y1 - 1


def assert_laid_out(fig) -> None:
    """The fixed margins hold: every panel (with its title, ticks and labels), the legend and the
    title lie inside the figure, and none overlaps another (nothing cut off, nothing hidden)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(f"panel {i}", ax.get_tightbbox(renderer)) for i, ax in enumerate(fig.axes)]
    boxes += [(f"legend {i}", legend.get_window_extent(renderer)) for i, legend in enumerate(fig.legends)]
    if fig._suptitle is not None:
        boxes.append(("title", fig._suptitle.get_window_extent(renderer)))
    page = fig.bbox
    for name, box in boxes:
        assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1 and page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1, (name, box, page)
    for i, (name, box) in enumerate(boxes):
        for other, obox in boxes[i + 1 :]:
            assert not _overlap(box, obox), (name, other)


@pytest.mark.parametrize("panels", [1, 2, 4, 8])
def test_timeline_margins_fit_every_label(panels):
    presets = ["legacy", "envelope-fix", "prune-fix", "patched"]
    rows = []
    for i in range(panels):
        engine = ["checkpoint", "ranges"][i // 4]
        # Large windows give the widest token ticks ("187.5k", "1.25M").
        for row in observations(engine, presets[i % 4], 190, rejected={5} if i == 0 else set(), summaries={60}):
            row["prompt_tokens"] *= 900
            row["cached_tokens"] *= 900
            row["uncached_tokens"] *= 900
            rows.append(row)
    fig = timeline_figure(pd.DataFrame(rows), 32_000)
    assert len(fig.axes) == panels
    assert_laid_out(fig)
    plt.close(fig)


@pytest.mark.parametrize("engines", [1, 2, 5])
def test_hit_rate_margins_fit_every_label(engines):
    rows = [
        (window, f"engine-{e}", preset, [0.5, 0.999] if preset != "legacy" else [])
        for e in range(engines) for window in (32_000, 512_000, 10_000_000) for preset in ("legacy", "patched")
    ]
    fig = hit_rate_figure(runs(rows))
    assert_laid_out(fig)
    plt.close(fig)


def test_runs_that_differ_only_in_cache_model_get_their_own_series():
    # Two cache models, one engine and preset: two panels and two hatched series, never one
    # panel with both runs' requests drawn over each other.
    rows = []
    for cache, offset in (("byte-exact", 0), ("deepseek", 7)):
        for row in observations("checkpoint", "legacy", 30 + offset):
            rows.append({**row, "cache": cache, "workload": "seed-coding", "profile": "lenient"})
    fig = timeline_figure(pd.DataFrame(rows), 32_000)
    titles = sorted(ax.get_title(loc="left") for ax in fig.axes)
    assert titles == ["byte-exact/legacy (30 requests)", "deepseek/legacy (37 requests)"]
    plt.close(fig)
    frame = pd.DataFrame(
        [(32_000, "checkpoint", "legacy", [0.5], "byte-exact"), (32_000, "checkpoint", "legacy", [0.9], "deepseek")],
        columns=["window", "engine", "preset", "summary_hit_ratio", "cache"],
    )
    fig = hit_rate_figure(frame)
    legend = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert {"byte-exact", "deepseek", "legacy"} <= set(legend)
    heights = sorted(round(p.get_height()) for p in fig.axes[0].patches if p.get_height() > 0)
    assert heights == [50, 90]
    plt.close(fig)


@pytest.mark.parametrize("window, text", [(32_000, "32k"), (10_000_000, "10m"), (1_500_000, "1500k"), (12_345, "12345")])
def test_window_labels_are_spelt_as_the_windows_option_takes_them(window, text):
    from prefixbench.simulator.windows import format_window
    from prefixbench.reports.options import parse_window

    assert format_window(window) == text
    assert parse_window(text) == window


def assert_tick_labels_apart(fig) -> None:
    """No two tick labels of a panel overlap (long engine names side by side)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels() if t.get_text()]
        for i, box in enumerate(boxes):
            for other in boxes[i + 1 :]:
                assert not _overlap(box, other), [t.get_text() for t in ax.get_xticklabels()]


#: Names user engines take: an installed name, the names their factories give, an import path.
USER_ENGINE_NAMES = [
    "declared-truncating", "tests.user_engines:configurable", "observation-mask", "cache-aware",
    "my_company.agent.compaction.engines:summarizing_factory",
]


@pytest.mark.parametrize("engines", [1, 2, 5])
@pytest.mark.parametrize("presets", [("patched",), ("legacy", "envelope-fix", "prune-fix", "patched")])
def test_hit_rate_margins_fit_user_engine_names(engines, presets):
    rows = [
        (window, name, preset, [0.5, 0.999] if e % 2 else [])
        for e, name in enumerate(USER_ENGINE_NAMES[:engines]) for window in (32_000, 128_000) for preset in presets
    ]
    fig = hit_rate_figure(runs(rows))
    assert_laid_out(fig)
    assert_tick_labels_apart(fig)
    plt.close(fig)


def engine_frames(names: list[str], windows=(32_000, 128_000)) -> tuple[pd.DataFrame, pd.DataFrame]:
    runs_rows, obs = [], []
    for e, name in enumerate(names):
        for window in windows:
            runs_rows.append({"window": window, "engine": name, "preset": "patched"})
            for i in range(12):
                obs.append({
                    "window": window, "engine": name, "preset": "patched", "status": 200, "index": i,
                    "purpose": "compaction" if i == 6 and e % 2 else "conversation",
                    "rewrites": "checkpoint" if i == 7 and e % 2 else "",
                    "extends_previous": not (i == 7 and e % 3 == 0),
                    "uncached_tokens": 1_000 * (i + 1) * (e + 1) * window // 32_000,
                })
    return pd.DataFrame(runs_rows), pd.DataFrame(obs)


@pytest.mark.parametrize("engines", [2, 3, 5])
@pytest.mark.parametrize("windows", [(32_000,), (32_000, 128_000, 512_000)])
def test_engines_chart_fits_user_engine_names(engines, windows):
    from prefixbench.reports.engines import engines_figure

    runs_frame, observations_frame = engine_frames(["checkpoint", *USER_ENGINE_NAMES][:engines], windows)
    fig = engines_figure(runs_frame, observations_frame)
    assert_laid_out(fig)
    assert_tick_labels_apart(fig)
    legend = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert "silent rewrite" in legend
    plt.close(fig)


def test_a_silent_rewrite_is_named_as_one():
    from prefixbench.reports.engines import engine_costs, why_sentence

    _, observations_frame = engine_frames(["checkpoint", "declared", "silent-one", "silent-two"], (32_000,))
    costs = {c.engine: c for c in engine_costs(observations_frame, 32_000, "patched")}
    assert costs["checkpoint"].num_silent == 1 and costs["checkpoint"].silent == 8_000
    assert costs["declared"].num_silent == 0 and costs["declared"].num_refills == 1
    sentence = why_sentence(32_000, list(costs.values()))
    assert "rewrote cached history with no rewrite declared once" in sentence


def test_a_change_rounded_to_nothing_is_written_one_way() -> None:
    from prefixbench.reports.tables import fmt_change

    assert [fmt_change(x) for x in (-0.0004, 0.0, 0.0004, -0.345, None)] == ["+0.0%", "+0.0%", "+0.0%", "-34.5%", "-"]


def test_a_window_some_series_did_not_run_at_keeps_no_empty_slots_for_them():
    # Before: every window kept a slot for every series (a grid of seed-coding at 32k-512k beside
    # thinking-tools at 32k only): the 128k bars sat off their tick, beside empty room for the
    # series that never ran there, and the chart was as wide as if every window held them all.
    rows = [(32_000, engine, preset, [0.9]) for engine in ("a", "b", "c") for preset in ("legacy", "patched")]
    rows += [(128_000, "a", preset, [0.5]) for preset in ("legacy", "patched")]
    fig = hit_rate_figure(runs(rows))
    ax = fig.axes[0]
    bars = [p for p in ax.patches if p.get_height() > 0]
    centres = sorted(p.get_x() + p.get_width() / 2 for p in bars)
    ticks = ax.get_xticks()
    at_128k = [c for c in centres if c > ticks[0] + 0.5]
    assert len(at_128k) == 2 and abs(sum(at_128k) / 2 - ticks[1]) < 1e-9  # centred on its tick
    width = bars[0].get_width()
    assert abs((at_128k[1] - at_128k[0]) - width) < 1e-9  # side by side, no empty slot between
    lo, hi = ax.get_xlim()
    assert hi - ticks[1] < 2 * width  # no room kept for the four series that did not run at 128k
    assert fig.get_size_inches()[0] < 1.6 * 2 * 6 / 2  # narrower than six slots at each window
    plt.close(fig)


def _strokes_of(hatch: str | None) -> frozenset[str]:
    # What a hatch draws: "xx" is "//" and "\\" over each other, "++" is "||" and "--".
    drawn = {"x": "/\\", "+": "|-"}
    return frozenset("".join(drawn.get(c, c) for c in hatch or ""))


def test_every_variant_of_a_grid_keeps_its_own_hatch_in_the_bars_and_the_legend():
    # Before: the hatches cycled after six variants; the grid example's two sweeps (seed-coding
    # beside thinking-tools x 3 engines x 2 caches: 7 variants) drew seed-coding/checkpoint and
    # thinking-tools/user-tail/deepseek with the same (empty) hatch, on the bars and in the legend.
    engines = [f"engine-{e}" for e in range(9)]
    frame = pd.DataFrame(
        [(32_000, engine, preset, [0.5 + 0.05 * e]) for e, engine in enumerate(engines) for preset in ("legacy", "patched")],
        columns=["window", "engine", "preset", "summary_hit_ratio"],
    )
    fig = hit_rate_figure(frame)
    handles = [h for legend in fig.legends for h in legend.legend_handles]
    labels = [h.get_label() for h in handles]
    assert len(labels) == len(set(labels)) == 2 + len(engines)  # no entry twice
    looks = [(tuple(np.round(h.get_facecolor(), 3)), _strokes_of(h.get_hatch())) for h in handles]
    assert len(set(looks)) == len(looks)  # no two entries drawn alike
    hatch_of = {h.get_label(): _strokes_of(h.get_hatch()) for h in handles}
    bars = [p for p in fig.axes[0].patches if p.get_height() > 0]
    assert len(bars) == 2 * len(engines)
    # Each bar: its preset's colour and its engine's legend hatch; no two bars drawn alike.
    bar_looks = [(tuple(np.round(p.get_facecolor(), 3)), _strokes_of(p.get_hatch())) for p in bars]
    assert len(set(bar_looks)) == len(bars)
    assert {look[1] for look in bar_looks} == {hatch_of[e] for e in engines}
    plt.close(fig)


def test_variant_hatches_never_repeat_a_pattern():
    from prefixbench.reports.charts import ENGINE_HATCHES, variant_hatches

    hatches = variant_hatches(300)
    assert hatches[: len(ENGINE_HATCHES)] == list(ENGINE_HATCHES)  # the first six as they were
    assert len({(_strokes_of(h), len(h) // max(1, len(_strokes_of(h)))) for h in hatches}) == 300
