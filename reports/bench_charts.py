"""The charts of ``prefixbench bench`` (matplotlib, drawn from the leaderboard rows).

``bench-<workload>.png``: per window, the median cost per task and session hit ratio of each
strategy on each cache model (listed prices); a strategy that was rejected or sent a prompt
over the window has no bar, only words at its slot saying so (``rejected (3 of 192 requests
refused)``, written across and wrapped to the slot, the size of the tick labels): its total
leaves the refused requests out, so it is no cost to compare. ``bench-discount.png``: each strategy's cost against the
baseline's, median over workloads, windows and cache models, at each price variant; a strategy
with no comparable cost (every run rejected or over the window) has no bar and a label saying
why on its row, never a 0; the baseline's row, whose bars are 0 high, is labelled ``baseline``.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from prefixbench.reports.charts import CHAR_INCHES, fixed_margins, legend_columns, plt, save
from prefixbench.reports.palette import SERIES, TOTAL
from prefixbench.workloads.runs.bench import LISTED
from prefixbench.simulator.windows import format_window



def _listed(entries: Sequence[dict[str, object]]) -> list[dict[str, object]]:
    """The rows at the listed prices."""
    return [e for e in entries if e["pricing"] == LISTED.label]


def _bottom(labels: Sequence[str]) -> float:
    """Inches under the panels for tick labels rotated by 40 degrees (a strategy's name can be long)."""
    return 0.35 + CHAR_INCHES * 0.7 * max((len(label) for label in labels), default=4)


#: Inches a slot's label keeps clear of the figure's edge.
EDGE_INCHES = 0.05
#: Inches per character of a slot's note at the tick labels' size (x-small), a generous average.
NOTE_CHAR_INCHES = CHAR_INCHES * 0.85
#: The narrowest a strategy's slot is made (inches) where a note stands in one: a wrapped note's
#: lines of eight characters ("requests", "refused)") fit across it.
NOTE_SLOT_INCHES = 0.45


def _wrapped(text: str, inches: float) -> str:
    """``text`` in lines of at most the characters ``inches`` holds at the note size (a word
    longer than that keeps a line of its own)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, max(8, int(inches / NOTE_CHAR_INCHES)), break_long_words=False))


def _fit_left(fig: plt.Figure, *, left: float, right: float, top: float, bottom: float, gap: float = 0.0,
              wspace: float | None = None) -> None:
    """:func:`~prefixbench.reports.charts.fixed_margins`, with the left margin grown until every
    tick label lies inside the figure: a rotated strategy name ends at its tick, so a long first
    name reaches left of a fixed margin (the first label of a bench chart was cut at the edge).
    Measured on the figure as drawn (fonts decide the width, no estimate does)."""
    for _ in range(4):
        fixed_margins(fig, left=left, right=right, top=top, bottom=bottom, gap=gap)
        if wspace is not None:
            fig.subplots_adjust(wspace=wspace)
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        edges = [label.get_window_extent(renderer).x0 for ax in fig.axes for label in ax.get_xticklabels() if label.get_text()]
        short = EDGE_INCHES - min(edges, default=fig.bbox.x0) / fig.dpi
        if short <= 0:
            return
        left += short + EDGE_INCHES


def strategy_chart(entries: Sequence[dict[str, object]], path: Path, *, title: str) -> None:
    """Cost per task and hit ratio by strategy and cache model, one row of panels a window."""
    save(strategy_figure(entries, title=title), path)


def strategy_figure(entries: Sequence[dict[str, object]], *, title: str) -> plt.Figure:
    """The figure of :func:`strategy_chart`."""
    rows = _listed(entries)
    windows = sorted({int(e["window"]) for e in rows}) or [0]  # type: ignore[call-overload]
    strategies = list(dict.fromkeys(str(e["strategy"]) for e in rows))
    caches = list(dict.fromkeys(str(e["cache"]) for e in rows))
    noted = any(e["status"] != "ok" for e in rows)
    # A slot holding a note is made wide enough for it, written across (two panels a row, the
    # gap between them a quarter of a panel).
    slot = NOTE_SLOT_INCHES if noted else 0.4
    width = max(8.0, 1.2 + 0.45 * max(1, len(strategies)) * 2, 1.0 + 2.25 * slot * max(1, len(strategies)))
    bottom = _bottom(strategies)
    height = 0.9 + 2.4 * len(windows) + bottom
    fig, axes = plt.subplots(len(windows), 2, figsize=(width, height), squeeze=False)
    margins = {"left": 0.8, "right": 0.2, "top": 0.9, "bottom": bottom, "gap": 0.5}
    fixed_margins(fig, **margins)
    fig.subplots_adjust(wspace=0.25)
    bar = 0.8 / max(1, len(caches))
    for r, window in enumerate(windows):
        for c, (name, label, scale) in enumerate((("cost_usd", "cost per task (USD)", 1.0), ("hit_ratio", "session hit (%)", 100.0))):
            ax = axes[r][c]
            notes: dict[int, dict[str, str]] = {}  # slot -> cache -> what its run says
            for k, cache in enumerate(caches):
                xs, heights = [], []
                for i, strategy in enumerate(strategies):
                    match = [e for e in rows if int(e["window"]) == window and e["cache"] == cache and e["strategy"] == strategy]  # type: ignore[call-overload]
                    if not match:
                        continue
                    if match[0]["status"] != "ok":
                        # Its total leaves the refused requests out, so it is no cost (nor hit
                        # ratio) to read off a bar: no bar, the words at its slot instead.
                        notes.setdefault(i, {})[cache] = not_comparable(match[0])
                        continue
                    xs.append(i - 0.4 + bar * (k + 0.5))
                    heights.append(float(match[0][name]) * scale)  # type: ignore[arg-type]
                ax.bar(xs, heights, bar, color=SERIES[k % len(SERIES)], label=cache if r == 0 and c == 0 else None)
            across = 0.9 * ax.get_position().width * width / max(1, len(strategies))  # a slot's width, inches (less a tenth: fitting the left margin may narrow it)
            for i, said in notes.items():
                # One note a slot, written across and wrapped to the slot: the words once where
                # every cache model's run says the same, else each after its cache model's name.
                words = set(said.values())
                text = (_wrapped(next(iter(words)), across) if len(words) == 1 else
                        "\n".join(_wrapped(f"{cache}: {what}", across) for cache, what in said.items()))
                ax.text(i, 0.02, text, transform=ax.get_xaxis_transform(), ha="center", va="bottom", fontsize="x-small",
                        color=TOTAL, gid=f"not-comparable:{strategies[i]}:{','.join(said)}")
            ax.set_xlim(-0.5, max(1, len(strategies)) - 0.5)  # a slot without a bar keeps its room
            ax.set_title(f"{format_window(window)}: {label}", fontsize="small")
            ax.set_xticks(range(len(strategies)))
            ax.set_xticklabels(strategies if r == len(windows) - 1 else [""] * len(strategies), rotation=40, ha="right", fontsize="x-small")
            ax.tick_params(axis="y", labelsize="x-small")
    fig.suptitle(f"{title}: median over seeds, listed prices (no bar: rejected or over the window)", fontsize="small", y=1 - 0.12 / height)
    if caches:
        fig.legend(loc="upper center", bbox_to_anchor=(0.5, 1 - 0.3 / height), ncol=legend_columns(caches, width), fontsize="x-small", frameon=False)
    _fit_left(fig, **margins, wspace=0.25)
    return fig


def not_comparable(entry: dict[str, object]) -> str:
    """What a leaderboard row with no comparable cost says on the chart: ``rejected (3 of 192
    requests refused)`` or ``over the window (2 prompts)``."""
    if entry["status"] == "rejected":
        sent = int(entry.get("requests") or 0)  # type: ignore[call-overload]
        of = f" of {sent:,}" if sent else ""
        return f"rejected ({int(entry['rejected']):,}{of} requests refused)"  # type: ignore[call-overload]
    over = int(entry["over_window"])  # type: ignore[call-overload]
    return f"over the window ({over:,} prompt{'' if over == 1 else 's'})"


def discount_chart(board: Sequence[dict[str, object]], path: Path, *, baseline: str) -> None:
    """Cost against ``baseline`` (or against the cheapest valid strategy when the bench did not
    run it), median over every workload, window and cache model, one bar a price variant."""
    save(discount_figure(board, baseline=baseline), path)


def discount_figure(board: Sequence[dict[str, object]], *, baseline: str) -> plt.Figure:
    """The figure of :func:`discount_chart`."""
    discounts = list(dict.fromkeys(str(e["pricing"]) for e in board))
    strategies = list(dict.fromkeys(str(e["strategy"]) for e in board))
    # The baseline only where it ran valid everywhere: a run with refused requests cost less
    # than it would have, so every other strategy would look dear against it.
    has_baseline = baseline in strategies and all(e["status"] == "ok" for e in board if e["strategy"] == baseline)
    ratios: dict[tuple[str, str], list[float]] = {}
    # Why a (strategy, prices) has no comparable cost in a run: its status ("rejected", "over
    # window") or a missing baseline. A strategy with none gets no bar and says why on its row.
    missing: dict[tuple[str, str], list[str]] = {}
    index = {(e["workload"], e["window"], e["cache"], str(e["pricing"]), e["strategy"]): e for e in board}
    for (workload, window, cache, discount, strategy), e in index.items():
        key = (str(strategy), discount)
        if e["status"] != "ok":
            missing.setdefault(key, []).append(str(e["status"]))  # refused requests: no comparable cost
            continue
        if has_baseline:
            base = index.get((workload, window, cache, discount, baseline))
            if base is None or not float(base["cost_exact"]):  # type: ignore[arg-type]
                missing.setdefault(key, []).append(f"no {baseline} run")
                continue
            value = float(e["cost_exact"]) / float(base["cost_exact"]) - 1  # type: ignore[arg-type]
        else:
            if e["vs_cheapest"] is None:
                missing.setdefault(key, []).append("no valid strategy to compare with")
                continue
            value = float(e["vs_cheapest"])  # type: ignore[arg-type]
        ratios.setdefault(key, []).append(value * 100)
    noted = bool(missing) or (has_baseline and bool(strategies))
    slot = max(NOTE_SLOT_INCHES if noted else 0.0, 0.3 * max(1, len(discounts)))
    width = max(7.0, 1.4 + 0.5 * max(1, len(strategies)) * max(1, len(discounts)) * 0.6, 1.0 + slot * max(1, len(strategies)))
    bottom = _bottom(strategies)
    fig, ax = plt.subplots(figsize=(width, 3.0 + bottom))
    fixed_margins(fig, left=0.8, right=0.2, top=0.75, bottom=bottom)
    bar = 0.8 / max(1, len(discounts))
    labels = [f"prices: {d}" for d in discounts]
    for k, discount in enumerate(discounts):
        # A strategy without a comparable cost at these prices gets no bar, never a 0.
        drawn = [(i, statistics.median(ratios[(s, discount)])) for i, s in enumerate(strategies) if (s, discount) in ratios]
        ax.bar([i - 0.4 + bar * (k + 0.5) for i, _ in drawn], [h for _, h in drawn], bar, color=SERIES[k % len(SERIES)],
               label=labels[k])
    across = 0.9 * ax.get_position().width * width / max(1, len(strategies))  # a row's width, inches (less a tenth, as above)
    for i, strategy in enumerate(strategies):
        note = missing_note(strategy, discounts, ratios, missing)
        if has_baseline and strategy == baseline and not note:
            # Its bars are 0 high (its cost against itself): say so, so an empty row is explained.
            note, gid = "baseline (0% by definition)", f"baseline:{strategy}"
        else:
            gid = f"no-cost:{strategy}"
        if note:
            # Written across, wrapped to its row's slot.
            ax.text(i, 0.5, _wrapped(note, across), transform=ax.get_xaxis_transform(), ha="center", va="center",
                    fontsize="x-small", color=TOTAL, gid=gid,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 1.5})
    ax.set_xlim(-0.5, max(1, len(strategies)) - 0.5)  # a row without a bar keeps its room
    ax.axhline(0, color=TOTAL, linewidth=0.8)
    ax.set_xticks(range(len(strategies)))
    ax.set_xticklabels(strategies, rotation=40, ha="right", fontsize="x-small")
    ax.tick_params(axis="y", labelsize="x-small")
    against = baseline if has_baseline else "the cheapest valid strategy"
    ax.set_ylabel("cost change (%)", fontsize="small")
    ax.set_title(f"Cost per task against {against}: median over workloads, windows and caches", fontsize="small", pad=18)
    if labels:
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(labels), fontsize="x-small", frameon=False)
    _fit_left(fig, left=0.8, right=0.2, top=0.75, bottom=bottom)
    return fig


def missing_note(strategy: str, discounts: Sequence[str], ratios: dict[tuple[str, str], list[float]],
                 missing: dict[tuple[str, str], list[str]]) -> str:
    """The label on a strategy's row of bench-discount.png where it has no comparable cost:
    ``rejected: no comparable cost`` (the reasons the runs give) when no price variant has one,
    ``no comparable cost at prices: read price x0.5`` when some lack it, ``2 of 3 runs: the rest
    rejected`` (runs a price variant) when its medians leave runs out; empty when every run counts."""
    reasons = list(dict.fromkeys(r for d in discounts for r in missing.get((strategy, d), [])))
    if not reasons:
        return ""
    why = ", ".join(reasons)
    lacking = [d for d in discounts if (strategy, d) not in ratios]
    if len(lacking) == len(discounts):
        return f"{why}: no comparable cost"
    if lacking:
        return f"no comparable cost at prices: {', '.join(lacking)} ({why})"
    shares = dict.fromkeys(f"{len(ratios[(strategy, d)])} of {len(ratios[(strategy, d)]) + len(missing.get((strategy, d), []))}"
                           for d in discounts)
    return f"{' / '.join(shares)} runs: the rest {why}"
