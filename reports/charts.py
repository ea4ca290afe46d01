"""Charts (matplotlib, Agg backend). Figures are written with fixed size, dpi and no software
or date metadata, so the same data gives byte-identical PNG files."""

from __future__ import annotations

from pathlib import Path

import matplotlib

# The one place that picks the backend: every chart module imports plt from here.
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402

from prefixbench.kernel.presets import PRESET_ORDER  # noqa: E402
from prefixbench.reports.frames import format_window, ordered  # noqa: E402

#: Colours by role, shared by every chart so a preset looks the same everywhere.
CACHED = "#2da44e"
UNCACHED = "#cf222e"
FOLD = "#0969da"
PRESET_COLOURS = ("#cf222e", "#bf8700", "#8250df", "#2da44e", "#0969da", "#57606a")
PNG_METADATA = {"Software": None}


def save(fig: plt.Figure, path: Path) -> None:
    """Write a figure deterministically and close it."""
    fig.savefig(path, dpi=100, metadata=PNG_METADATA)
    plt.close(fig)


def _bars(ax: plt.Axes, x: np.ndarray, bottom: np.ndarray, height: np.ndarray, colour: str, label: str) -> None:
    """Many bars as one PolyCollection: same look as ``ax.bar``, a fraction of its drawing time."""
    half = 0.425
    left, right, top = x - half, x + half, bottom + height
    verts = np.stack(
        [np.stack([left, bottom], 1), np.stack([left, top], 1), np.stack([right, top], 1), np.stack([right, bottom], 1)],
        axis=1,
    )
    ax.add_collection(PolyCollection(verts, facecolors=colour, edgecolors="none", label=label))


def hit_rate_chart(runs: pd.DataFrame, path: Path) -> None:
    """Summary-call hit rate by window and preset: bar = mean, whisker = min..max over the calls."""
    windows = sorted(runs["window"].unique())
    series = ordered(
        [f"{e}/{p}" if runs["engine"].nunique() > 1 else p for e, p in zip(runs["engine"], runs["preset"])],
        PRESET_ORDER,
    )
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(windows) * max(1, len(series)) / 2), 4))
    width = 0.8 / max(1, len(series))
    x = np.arange(len(windows))
    for idx, name in enumerate(series):
        means, lo, hi = [], [], []
        for window in windows:
            sel = runs[(runs["window"] == window)]
            sel = sel[[(f"{e}/{p}" if runs["engine"].nunique() > 1 else p) == name for e, p in zip(sel["engine"], sel["preset"])]]
            ratios = [v for lst in sel["summary_hit_ratio"] for v in lst]
            mean = float(np.mean(ratios)) * 100 if ratios else 0.0
            means.append(mean)
            lo.append(mean - (min(ratios) * 100 if ratios else 0.0))
            hi.append((max(ratios) * 100 if ratios else 0.0) - mean)
        ax.bar(
            x + (idx - (len(series) - 1) / 2) * width,
            means,
            width,
            yerr=[lo, hi],
            capsize=3,
            label=name,
            color=PRESET_COLOURS[idx % len(PRESET_COLOURS)],
        )
    ax.set_xticks(x, [format_window(int(w)) for w in windows])
    ax.set_xlabel("context window")
    ax.set_ylabel("summary-call hit rate (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Summary calls served from the prefix cache")
    ax.legend(fontsize="small", ncols=min(4, len(series)), loc="upper center", bbox_to_anchor=(0.5, -0.15))
    fig.tight_layout()
    save(fig, path)


def timeline_chart(observations: pd.DataFrame, window: int, path: Path) -> None:
    """Cached vs uncached tokens of every request of each run at one window; folds marked."""
    obs = observations[observations["window"] == window]
    several_engines = obs["engine"].nunique() > 1  # once, not once per row
    row_labels = [f"{e}/{p}" if several_engines else p for e, p in zip(obs["engine"], obs["preset"])]
    labels = ordered(row_labels, PRESET_ORDER)
    fig, axes = plt.subplots(len(labels), 1, figsize=(10, 1.9 * len(labels) + 0.8), sharex=True, squeeze=False)
    for ax, label in zip(axes[:, 0], labels):
        mask = [row_label == label for row_label in row_labels]
        run = obs[mask].sort_values("index")
        idx = run["index"].to_numpy()
        cached = run["cached_tokens"].to_numpy()
        uncached = run["uncached_tokens"].to_numpy()
        _bars(ax, idx.astype(float), np.zeros(len(idx)), cached.astype(float), CACHED, "cached")
        _bars(ax, idx.astype(float), cached.astype(float), uncached.astype(float), UNCACHED, "uncached")
        ax.set_xlim(-1, (idx.max() + 1) if len(idx) else 1)
        ax.set_ylim(0, max(1.0, float((cached + uncached).max(initial=0)) * 1.05))
        for i in run.loc[run["purpose"] == "compaction", "index"]:
            ax.axvline(i, color=FOLD, linewidth=0.8, linestyle="--")
        rejected = run.loc[run["status"] != 200, "index"]
        if len(rejected):
            ax.plot(rejected, np.zeros(len(rejected)), "kx", label="400")
        ax.set_ylabel("tokens")
        ax.set_title(label, fontsize="small", loc="left")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v / 1000:.0f}k"))
    axes[0, 0].legend(fontsize="small", loc="upper left", ncols=3)
    axes[-1, 0].set_xlabel("request (dashed line: summary / compaction call)")
    fig.suptitle(f"Prompt tokens per request at a {format_window(window)} window", fontsize="medium")
    fig.tight_layout()
    save(fig, path)
