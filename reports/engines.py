"""Cross-engine comparison: where each engine's uncached tokens come from, and who sends fewest.

Every uncached prompt token of a run falls in one of four parts:

    summary   the summary / compaction calls themselves
    refill    the first conversation request after a durable rewrite (checkpoint, prune,
              compression): everything after the first rewritten byte is sent again
    silent    a conversation request that rewrote what the provider had cached with no
              rewrite declared (a user's engine that drops or edits history silently): it too
              sends everything after the first changed byte again
    growth    every other conversation request: the new turn appended to a warm prefix

The comparison picks, per window, the engine with the fewest uncached tokens and says why in
one sentence, naming for each other engine the part where it pays most over the winner.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np
import pandas as pd

from prefixbench.reports.palette import AXIS, FOLD, SILENT, UNCACHED
from prefixbench.reports.textable import markdown_lines
from prefixbench.simulator.windows import format_window

PARTS = ("summary", "refill", "silent", "growth")
PART_COLOURS = {"summary": FOLD, "refill": UNCACHED, "silent": SILENT, "growth": AXIS}
#: How the legends and tables name each part.
PART_LABELS = {
    "summary": "summary calls", "refill": "refill after a rewrite", "silent": "silent rewrite",
    "growth": "growth (appended turns)",
}


class EngineCost(msgspec.Struct, frozen=True):
    """Uncached tokens of one run, split into summary calls, refills, silent rewrites and growth."""

    engine: str
    summary: int
    refill: int
    growth: int
    num_summaries: int
    num_refills: int
    silent: int = 0
    num_silent: int = 0

    @property
    def total(self) -> int:
        """All uncached prompt tokens of accepted requests."""
        return self.summary + self.refill + self.silent + self.growth


def split_uncached(observations: pd.DataFrame) -> EngineCost:
    """Split one run's accepted requests' uncached tokens into summary, refill and growth."""
    ok = observations[observations["status"] == 200]
    summary = ok[ok["purpose"] == "compaction"]
    conversation = ok[ok["purpose"] != "compaction"]
    # A rewrite noted on a summary call carries over to the next conversation request. A
    # conversation request that does not extend the previous one with none declared is silent.
    refill_mask, silent_mask = [], []
    pending = False
    for _, row in ok.iterrows():
        pending = pending or bool(row["rewrites"])
        if row["purpose"] == "compaction":
            continue
        later = row["index"] > 0
        refill_mask.append(pending and later)
        silent_mask.append(not pending and later and not _extends(row))
        pending = False
    refill = conversation[refill_mask] if len(conversation) else conversation
    silent = conversation[silent_mask] if len(conversation) else conversation
    growth = int(conversation["uncached_tokens"].sum()) - int(refill["uncached_tokens"].sum()) - int(silent["uncached_tokens"].sum())
    return EngineCost(
        engine=str(observations["engine"].iloc[0]),
        summary=int(summary["uncached_tokens"].sum()),
        refill=int(refill["uncached_tokens"].sum()),
        growth=growth,
        num_summaries=len(summary),
        num_refills=len(refill),
        silent=int(silent["uncached_tokens"].sum()),
        num_silent=len(silent),
    )


def _extends(row: pd.Series) -> bool:
    """Whether a conversation request extended the previous one (a missing value: it did)."""
    value = row.get("extends_previous", True)
    return True if value is None or (isinstance(value, float) and np.isnan(value)) else bool(value)


def comparison_preset(runs: pd.DataFrame) -> str:
    """The preset engines are compared on: ``patched`` when it ran, else the last one."""
    presets = list(dict.fromkeys(runs["preset"]))
    return "patched" if "patched" in presets else presets[-1]


def engine_costs(observations: pd.DataFrame, window: int, preset: str) -> list[EngineCost]:
    """Per engine (first seen first), the split of its run at ``window`` under ``preset``."""
    sel = observations[(observations["window"] == window) & (observations["preset"] == preset)]
    return [split_uncached(group) for _, group in sel.groupby("engine", sort=False)]


def _clause(cost: EngineCost, part: str) -> str:
    """``its 4 summary calls cost 1,880 tokens`` and the like, for one part of a run."""
    match part:
        case "summary":
            if not cost.num_summaries:
                return "it makes no summary calls"
            return f"its {cost.num_summaries} summary calls cost {cost.summary:,} tokens"
        case "refill":
            if not cost.num_refills:
                return "it never re-sends history"
            each = cost.refill // cost.num_refills
            return f"it re-sends about {each:,} tokens after each of its {cost.num_refills} rewrites"
        case "silent":
            if not cost.num_silent:
                return "it never rewrites history silently"
            each = cost.silent // cost.num_silent
            times = "once" if cost.num_silent == 1 else f"{cost.num_silent} times"
            return f"it rewrote cached history with no rewrite declared {times}, re-sending about {each:,} tokens each time"
        case _:
            return f"its appended turns cost {cost.growth:,} tokens"


def why_sentence(window: int, costs: list[EngineCost]) -> str:
    """One sentence: the engine with the fewest uncached tokens at ``window``, and why."""
    ranked = sorted(costs, key=lambda c: (c.total, c.engine))
    best = ranked[0]
    head = f"At {format_window(window)}, **{best.engine}** sends the fewest uncached tokens ({best.total:,})"
    if len(ranked) == 1:
        return head + "."
    own = f": {_clause(best, 'summary')} and {_clause(best, 'refill')}"
    if best.num_silent:
        own = f": {_clause(best, 'summary')}, {_clause(best, 'refill')} and {_clause(best, 'silent')}"
    others = []
    for cost in ranked[1:]:
        worst = max(PARTS, key=lambda p: getattr(cost, p) - getattr(best, p))
        pct = (cost.total / best.total - 1) * 100 if best.total else float("inf")
        others.append(f"{cost.engine} sends {cost.total:,} (+{pct:.0f}%), mostly because {_clause(cost, worst)}")
    return head + own + "; " + "; ".join(others) + "."


def comparison_markdown(runs: pd.DataFrame, observations: pd.DataFrame) -> str:
    """The cross-engine section of report.md (empty when only one engine ran)."""
    if runs["engine"].nunique() < 2:
        return ""
    preset = comparison_preset(runs)
    lines = [
        "## Which engine sends the fewest uncached tokens",
        "",
        f"Compared on `{preset}`. Uncached tokens split into summary calls, *refills* (the first",
        "request after a durable rewrite re-sends everything after the first rewritten byte),",
        "*silent rewrites* (a request that changed cached history with no rewrite declared re-sends",
        "everything after the first changed byte) and *growth* (new turns appended to a warm prefix).",
        "",
    ]
    rows, sentences = [], []
    for window in sorted(runs["window"].unique()):
        costs = engine_costs(observations, int(window), preset)
        for c in sorted(costs, key=lambda c: (c.total, c.engine)):
            rows.append([
                format_window(int(window)), c.engine, f"{c.summary:,} ({c.num_summaries})",
                f"{c.refill:,} ({c.num_refills})", f"{c.silent:,} ({c.num_silent})", f"{c.growth:,}", f"{c.total:,}",
            ])
        sentences.append("- " + why_sentence(int(window), costs))
    table = markdown_lines(
        ["window", "engine", "summary calls", "refills", "silent rewrites", "growth", "total"], rows, right={2, 3, 4, 5, 6}
    )
    return "\n".join([*lines, *table, "", *sentences, ""])


def engines_chart(runs: pd.DataFrame, observations: pd.DataFrame, path: Path) -> None:
    """``engines.png``: see :func:`engines_figure`."""
    from prefixbench.reports.charts import save  # charts.py selects the Agg backend, once

    save(engines_figure(runs, observations), path)


def engines_figure(runs: pd.DataFrame, observations: pd.DataFrame):  # type: ignore[no-untyped-def]
    """Uncached tokens per engine at each window, stacked by part; the legend below the panels,
    never over a bar. Fixed margins sized for the engines' names: a user's engine may be named
    by a long import path, so names that do not fit side by side stand upright, and the panels
    widen with the number of engines (nothing overlaps, nothing is cut off)."""
    from matplotlib.patches import Patch

    from prefixbench.reports.charts import CHAR_INCHES, TOKEN_TICKS, fixed_margins, plt

    preset = comparison_preset(runs)
    windows = sorted(int(w) for w in runs["window"].unique())
    engines = list(dict.fromkeys(runs["engine"]))
    longest = max(len(e) for e in engines) * CHAR_INCHES
    panel = max(2.4, 0.45 * len(engines))
    upright = longest + 0.15 > panel / len(engines)
    gap, left, right = 0.8, 0.85, 0.25
    handles = [Patch(facecolor=PART_COLOURS[part], label=PART_LABELS[part]) for part in PARTS]
    legend_width = sum(len(PART_LABELS[p]) for p in PARTS) * CHAR_INCHES + 0.55 * len(PARTS)
    width = max(left + right + panel * len(windows) + gap * (len(windows) - 1), legend_width + 0.3)
    ncols = len(handles) if legend_width <= width - 0.3 else 2
    legend_rows = -(-len(handles) // ncols)
    ticks = (longest if upright else 0.2) + 0.2
    bottom = 0.2 + ticks + 0.3 * legend_rows + 0.1
    fig, axes = plt.subplots(1, len(windows), figsize=(width, 3.2 + bottom), squeeze=False)
    for ax, window in zip(axes[0], windows):
        costs = {c.engine: c for c in engine_costs(observations, window, preset)}
        x = np.arange(len(engines))
        base = np.zeros(len(engines))
        for part in PARTS:
            values = np.array([getattr(costs[e], part) if e in costs else 0 for e in engines], dtype=float)
            ax.bar(x, values, 0.7, bottom=base, color=PART_COLOURS[part], label=PART_LABELS[part])
            base += values
        ax.set_xticks(x, engines, fontsize="small", rotation=90 if upright else 0)
        ax.set_title(format_window(window), fontsize="medium")
        ax.yaxis.set_major_formatter(TOKEN_TICKS)
    axes[0][0].set_ylabel(f"uncached prompt tokens ({preset})")
    fig.legend(handles=handles, fontsize="small", ncols=ncols, loc="lower center", bbox_to_anchor=(0.5, 0.0), frameon=True)
    fig.suptitle("Where each engine's uncached tokens come from", fontsize="medium")
    fixed_margins(fig, left=left, right=right, top=0.55, bottom=bottom)
    fig.subplots_adjust(wspace=gap / panel)
    return fig
