"""Charts (matplotlib, Agg backend). Figures are written with fixed size, dpi and no software
or date metadata, so the same data gives byte-identical PNG files."""

from __future__ import annotations

from itertools import combinations, count as counting
from pathlib import Path

import matplotlib

# The one place that picks the backend: every chart module imports plt from here.
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from prefixbench.kernel.presets import PRESET_ORDER, PRESETS  # noqa: E402
from prefixbench.reports.frames import ordered  # noqa: E402
from prefixbench.reports.palette import CACHED, FOLD, PRESET_COLOURS, REJECTED, TOTAL, UNCACHED  # noqa: E402
from prefixbench.simulator.windows import format_window  # noqa: E402

PNG_METADATA = {"Software": None}


def save(fig: plt.Figure, path: Path) -> None:
    """Write a figure deterministically and close it."""
    fig.savefig(path, dpi=100, metadata=PNG_METADATA)
    plt.close(fig)


def fixed_margins(fig: plt.Figure, *, left: float, right: float, top: float, bottom: float, gap: float = 0.0) -> None:
    """Place the axes with margins given in inches (``gap``: between stacked panels).

    Used instead of matplotlib's constrained layout where a chart is drawn for every sweep: the
    layout solver measures every text artist and draws the figure twice, more than doubling the
    time to write a PNG. The margins are sized for the labels these charts draw (token ticks of
    at most six characters, one-line panel titles, a legend of one or two rows), and a test
    draws each chart and checks that every text lies inside the figure and clear of the axes.
    """
    width, height = fig.get_size_inches()
    rows = len(fig.axes)
    panel = max(0.1, (height - top - bottom - gap * (rows - 1)) / max(1, rows))
    fig.subplots_adjust(
        left=left / width, right=1 - right / width, top=1 - top / height, bottom=bottom / height, hspace=gap / panel
    )


#: Inches per character of a label at matplotlib's "small" size (about 8.3 pt), a generous average.
CHAR_INCHES = 0.075
#: Inches a legend entry takes besides its text (the patch and the padding).
ENTRY_INCHES = 0.55


def legend_columns(labels: list[str], width: float, most: int = 6) -> int:
    """Columns of a legend of ``labels`` under a figure ``width`` inches wide: as many as fit
    (a user's engine may be named by a long import path), at least one, at most ``most``."""
    entry = max((len(label) for label in labels), default=0) * CHAR_INCHES + ENTRY_INCHES
    return max(1, min(most, len(labels), int((width - 0.3) // entry)))


def legend_below(fig: plt.Figure, handles: list, ncols: int) -> None:
    """The legend centred under the axes, at the bottom edge of the figure."""
    fig.legend(handles=handles, fontsize="small", ncols=ncols, loc="lower center", bbox_to_anchor=(0.5, 0.0), frameon=True)


def _bars(
    ax: plt.Axes, x: np.ndarray, bottom: np.ndarray, height: np.ndarray, colour: str, label: str, hatch: str | None = None
) -> None:
    """Many bars as one PolyCollection: same look as ``ax.bar``, a fraction of its drawing time."""
    half = 0.425
    left, right, top = x - half, x + half, bottom + height
    verts = np.stack(
        [np.stack([left, bottom], 1), np.stack([left, top], 1), np.stack([right, top], 1), np.stack([right, bottom], 1)],
        axis=1,
    )
    edge = "white" if hatch else "none"
    ax.add_collection(PolyCollection(verts, facecolors=colour, edgecolors=edge, linewidths=0, hatch=hatch, label=label))


def fmt_tokens(value: float, _pos: object = None) -> str:
    """A token-axis tick: ``0``, ``500``, ``20k``, ``1.5M`` (never ``0k`` or ``80000k``)."""
    size = abs(value)
    if size < 1000:
        return f"{value:.0f}"
    if size < 1_000_000:
        return f"{value / 1000:.4g}k"
    return f"{value / 1_000_000:.4g}M"


TOKEN_TICKS = matplotlib.ticker.FuncFormatter(fmt_tokens)


#: Columns besides the preset that tell one run of a chart from another (the window and seed
#: are chosen by the chart itself).
VARIANT_AXES = ("workload", "engine", "cache", "profile")


def variants(frame: pd.DataFrame) -> list[str]:
    """Per row, what sets its run apart from the others with the same preset: every axis of
    :data:`VARIANT_AXES` that varies in ``frame``, joined by ``/`` (empty when none varies).
    Without it two runs that differ only in, say, the cache model would share one series."""
    axes = [a for a in VARIANT_AXES if a in frame.columns and frame[a].nunique() > 1]
    if not axes:
        return [""] * len(frame)
    return ["/".join(str(v) for v in values) for values in zip(*(frame[a] for a in axes))]


def _series_label(variant: str, preset: str) -> str:
    return f"{variant}/{preset}" if variant else preset


def preset_colours(presets: list[str]) -> dict[str, str]:
    """One colour per preset, fixed by its place among the known presets, so a preset has the
    same colour on every engine, in every chart and in every sweep."""
    known = list(PRESETS)
    ordered_presets = ordered(list(presets), known)
    return {
        preset: PRESET_COLOURS[(known.index(preset) if preset in known else len(known) + idx) % len(PRESET_COLOURS)]
        for idx, preset in enumerate(ordered_presets)
    }


#: Hatches tell engines apart on a chart whose colours mean presets: the first ones, in order.
ENGINE_HATCHES = ("", "//", "..", "xx", "\\\\", "++")
#: The strokes a hatch is made of (``x`` draws ``/`` and ``\\``, ``+`` draws ``|`` and ``-``).
_STROKES = ("/", "\\", "|", "-", ".", "o", "*", "O")
_DRAWN_AS = {"x": "/\\", "+": "|-"}


def _strokes(hatch: str) -> frozenset[str]:
    return frozenset("".join(_DRAWN_AS.get(c, c) for c in hatch))


def variant_hatches(count: int) -> list[str]:
    """``count`` hatches that all look different: :data:`ENGINE_HATCHES` first, then every
    other set of strokes, fewest strokes first, then the same sets drawn denser.

    Two hatches are told apart by the strokes they draw, not by their spelling (``xx`` and
    ``//\\\\`` are one pattern), so no set of strokes is given twice: a grid sweep's variants
    (workloads x engines x caches x profiles) may be many more than six."""
    found = list(ENGINE_HATCHES[:count])
    seen = {_strokes(h) for h in found}
    for density in counting(2):
        for size in range(1, len(_STROKES) + 1):
            for strokes in combinations(_STROKES, size):
                if len(found) >= count:
                    return found
                key = frozenset(strokes) if density == 2 else (density, frozenset(strokes))
                if key in seen:
                    continue
                seen.add(key)
                found.append("".join(c * density for c in strokes))
    return found  # (never reached: the densities go on)


def hit_rate_chart(runs: pd.DataFrame, path: Path) -> None:
    """Summary-call hit rate by window and preset (see :func:`hit_rate_figure`)."""
    save(hit_rate_figure(runs), path)


def hit_rate_figure(runs: pd.DataFrame) -> plt.Figure:
    """Bar = mean hit rate of a run's summary calls, labelled with its value to one decimal (so
    99.9% never reads as 100%; ``0.0%`` included);
    whisker = min..max over those calls; a run with no summary call gets no bar, only the words
    "no summary calls". Colour = preset (the same on every engine), hatch = what else sets the
    run apart: the engine, cache model, profile or workload, whichever vary (:func:`variants`)."""
    windows = sorted(runs["window"].unique())
    kinds = variants(runs)
    several = any(kinds)
    names = list(dict.fromkeys(kinds))  # engines (and cache models, profiles...) in run order
    colours = preset_colours(list(runs["preset"]))
    rank = {p: i for i, p in enumerate(colours)}
    # Variant by variant, presets in their order inside each.
    series = sorted(dict.fromkeys(zip(kinds, runs["preset"])), key=lambda s: (names.index(s[0]), rank[s[1]]))
    hatches = variant_hatches(len(names))
    kind_of = pd.Series(kinds, index=runs.index)
    # Each window holds a slot for the series that ran at it only (a grid's workloads may not
    # share windows): its group is as wide as its bars, centred on its tick. When every series
    # ran at every window, the groups are 1 wide at 0, 1, 2...
    ran = {(w, k, p) for w, k, p in zip(runs["window"], kinds, runs["preset"])}
    present = [[s for s in series if (window, *s) in ran] for window in windows]
    most = max(1, max((len(found) for found in present), default=0))
    width = 0.8 / most
    if all(len(found) == most for found in present):
        spans, x = [1.0] * len(windows), np.arange(len(windows))
    else:
        spans = [len(found) * width + 0.2 for found in present]
        x = np.concatenate([[0.0], np.cumsum(spans)[:-1]]) + (np.array(spans) - spans[0]) / 2
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * sum(spans) * most / 2), 4.6))
    for centre, window, found in zip(x, windows, present):
        for idx, (kind, preset) in enumerate(found):
            pos = centre + (idx - (len(found) - 1) / 2) * width
            sel = runs[(runs["window"] == window) & (kind_of == kind) & (runs["preset"] == preset)]
            ratios = [v for lst in sel["summary_hit_ratio"] for v in lst]
            if not ratios:
                ax.text(pos, 1, "no summary calls", rotation=90, ha="center", va="bottom", fontsize="x-small", color=TOTAL)
                continue
            mean, lo, hi = float(np.mean(ratios)) * 100, min(ratios) * 100, max(ratios) * 100
            ax.bar(
                pos, mean, width, yerr=[[mean - lo], [hi - mean]], capsize=3, color=colours[preset],
                hatch=hatches[names.index(kind)] if several else None,
                edgecolor="white" if several else None,
            )
            ax.text(pos, hi + 1.5, f"{mean:.1f}%", ha="center", va="bottom", fontsize="x-small")
    ax.set_xticks(x, [format_window(int(w)) for w in windows])
    # Every series' slot in view, bar or not: an engine with no summary call (a user's engine
    # that never summarizes) draws only its words, which set no limits of their own.
    if windows:
        ax.set_xlim(x[0] - spans[0] / 2, x[-1] + spans[-1] / 2)
    else:
        ax.set_xlim(-0.5, -0.5)
    ax.set_xlabel("context window")
    ax.set_ylabel("summary-call hit rate (%)")
    ax.set_ylim(0, 115)
    ax.set_title("Summary calls served from the prefix cache\nbar: mean over a run's summary calls; whisker: min-max", fontsize="medium")
    handles = [Patch(facecolor=colours[p], label=p) for p in colours]
    if several:
        handles += [
            Patch(facecolor="white", edgecolor=TOTAL, hatch=hatches[i] or None, label=name)
            for i, name in enumerate(names)
        ]
    ncols = legend_columns([h.get_label() for h in handles], fig.get_size_inches()[0])
    legend_below(fig, handles, ncols)
    legend_rows = -(-len(handles) // ncols)
    fixed_margins(fig, left=0.75, right=0.2, top=0.62, bottom=0.6 + 0.27 * legend_rows)
    return fig


def timeline_chart(observations: pd.DataFrame, window: int, path: Path) -> None:
    """Prompt tokens of every request of each run at one window (see :func:`timeline_figure`)."""
    save(timeline_figure(observations, window), path)


def timeline_figure(observations: pd.DataFrame, window: int) -> plt.Figure:
    """One panel per run at ``window``: cached and uncached tokens of each accepted request
    stacked, each rejected request (never cached, not in any token total) a grey hatched bar of
    the prompt it tried to send; summary / compaction calls dashed. Each panel's x axis spans
    exactly its own requests."""
    obs = observations[observations["window"] == window]
    row_labels = [_series_label(v, p) for v, p in zip(variants(obs), obs["preset"])]
    labels = ordered(row_labels, PRESET_ORDER)
    fig, axes = plt.subplots(len(labels), 1, figsize=(10, 1.9 * len(labels) + 1.2), squeeze=False)
    any_rejected = False
    for ax, label in zip(axes[:, 0], labels):
        mask = [row == label for row in row_labels]
        run = obs[mask].sort_values("index")
        ok = run[run["status"] == 200]
        bad = run[run["status"] != 200]
        idx = ok["index"].to_numpy(dtype=float)
        cached = ok["cached_tokens"].to_numpy(dtype=float)
        uncached = ok["uncached_tokens"].to_numpy(dtype=float)
        _bars(ax, idx, np.zeros(len(idx)), cached, CACHED, "cached")
        _bars(ax, idx, cached, uncached, UNCACHED, "uncached")
        if len(bad):
            any_rejected = True
            _bars(ax, bad["index"].to_numpy(dtype=float), np.zeros(len(bad)), bad["prompt_tokens"].to_numpy(dtype=float),
                  REJECTED, "rejected", hatch="////")
        last = float(run["index"].max()) if len(run) else 0.0
        ax.set_xlim(-1, last + 1)
        top = max(float((cached + uncached).max(initial=0)), float(bad["prompt_tokens"].max()) if len(bad) else 0.0)
        ax.set_ylim(0, max(1.0, top * 1.05))
        for i in run.loc[run["purpose"] == "compaction", "index"]:
            ax.axvline(i, color=FOLD, linewidth=0.8, linestyle="--")
        ax.set_ylabel("tokens")
        ax.set_title(f"{label} ({len(run)} requests)", fontsize="small", loc="left")
        ax.yaxis.set_major_formatter(TOKEN_TICKS)
    handles = [Patch(facecolor=CACHED, label="cached"), Patch(facecolor=UNCACHED, label="uncached")]
    if any_rejected:
        handles.append(Patch(facecolor=REJECTED, hatch="////", edgecolor="white", label="rejected (400): never cached, in no total"))
    handles.append(Line2D([], [], color=FOLD, linewidth=0.8, linestyle="--", label="summary / compaction call"))
    legend_below(fig, handles, len(handles))
    axes[-1, 0].set_xlabel("request")
    fig.suptitle(f"Prompt tokens per request at a {format_window(window)} window", fontsize="medium", y=1 - 0.08 / fig.get_size_inches()[1], va="top")
    fixed_margins(fig, left=0.8, right=0.2, top=0.6, bottom=0.9, gap=0.45)
    return fig
