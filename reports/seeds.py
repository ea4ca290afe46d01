"""The sweep table across seeds (and grid axes): one row a configuration, median [min-max].

With one seed, one workload, one cache model and one set of workload options, the sweep table
is :func:`prefixbench.reports.tables.text_table`, unchanged. Otherwise each row is one
configuration (workload, window, engine, profile, cache, options, preset) over all its seeds:

    window  preset   seeds  folds  summary uncached, per run  summary hit           session uncached            vs legacy
    32k     legacy         10      3  64,475 [63,632..66,242]  0.5% [0.0%..0.9%]     195,515 [161,892..218,472]  -
    32k     patched        10      3  1,410                    97.9% [97.7%..97.9%]  131,739 [99,342..155,637]   -32.8% [-38.6%..-28.6%]

*summary uncached, per run* adds up the uncached tokens of a run's summary calls; *vs legacy*
is taken seed by seed against the legacy run of the same seed, then summarized.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from prefixbench.kernel.presets import PRESET_ORDER
from prefixbench.reports.frames import with_change_vs_legacy
from prefixbench.reports.tables import SAME_RUN, fmt_change, fmt_int, fmt_pct, markdown_table, shows_engine, table_rows, text_table
from prefixbench.reports.textable import Table, columns_named
from prefixbench.simulator.windows import format_window

#: Columns that may vary across a grid and so may name a row.
AXES = ("workload", "window", "engine", "profile", "cache", "params", "preset")
NUMERIC = ("seeds", "folds", "400s")


def needs_aggregate(runs: pd.DataFrame) -> bool:
    """Whether the plain per-run table would show rows that cannot be told apart."""
    if not len(runs):
        return False
    return any(runs[c].nunique() > 1 for c in ("seed", "workload", "cache", "params"))


def _median(values: Sequence[float]) -> float:
    return float(np.median(np.asarray(values, dtype=float)))


def _spread(values: Sequence[float], fmt) -> str:
    """``median [min-max]``, or the one value when they agree."""
    vals = [v for v in values if v == v]  # drop NaN
    if not vals:
        return "-"
    med, lo, hi = fmt(_median(vals)), fmt(min(vals)), fmt(max(vals))
    if lo == hi:
        return med
    return f"{med} [{lo}..{hi}]"


def _varying_params(runs: pd.DataFrame) -> list[str]:
    """Each run's workload options that differ between runs of the same workload (``pruner=none``)."""
    parsed = [dict(p.split("=", 1) for p in str(text).split(";") if p) for text in runs["params"]]
    varying: set[tuple[str, str]] = set()
    for workload in set(runs["workload"]):
        rows = [d for d, w in zip(parsed, runs["workload"]) if w == workload]
        for key in {k for d in rows for k in d}:
            if len({d.get(key) for d in rows}) > 1:
                varying.add((workload, key))
    return [
        ", ".join(f"{k}={v}" for k, v in sorted(d.items()) if (w, k) in varying)
        for d, w in zip(parsed, runs["workload"])
    ]


def aggregate_rows(runs: pd.DataFrame, same: Collection[int] = ()) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the across-seeds table (``params`` shows only the options that vary).
    A configuration whose every seed's run is in ``same`` (identical to its legacy run) reads
    ``same run`` in ``vs legacy``."""
    df = with_change_vs_legacy(runs)
    df = df.assign(params=_varying_params(df))
    shown = [c for c in AXES if c in ("window", "preset") or df[c].nunique() > 1 or (c == "engine" and shows_engine(df[c]))]
    header_names = {"params": "options"}
    show_rejected = bool((df["num_rejected"] > 0).any() or (df["profile"] != "lenient").any())
    header = [*(header_names.get(c, c) for c in shown), "seeds", "folds"]
    if show_rejected:
        header.append("400s")
    header += ["summary uncached, per run", "summary hit", "session uncached", "vs legacy"]
    rank = {p: i for i, p in enumerate(PRESET_ORDER)}
    df = df.assign(
        _rank=df["preset"].map(lambda p: rank.get(p, len(rank))),
        _summary=[int(sum(v)) for v in df["summary_uncached_tokens"]],
    )
    keys = [c for c in AXES if c != "preset"] + ["_rank", "preset"]
    rows = []
    for _, group in df.groupby(keys, sort=True, dropna=False):
        first = group.iloc[0]
        row = []
        for column in shown:
            value = first[column]
            row.append(format_window(int(value)) if column == "window" else str(value))
        row += [str(group["seed"].nunique()), _spread(list(group["num_folds"]), lambda v: f"{v:g}")]
        if show_rejected:
            row.append(_spread(list(group["num_rejected"]), lambda v: f"{v:g}"))
        hits = [h for lst in group["summary_hit_ratio"] for h in lst]
        row += [
            _spread(list(group["_summary"]), fmt_int) if hits else "-",
            _spread(hits, fmt_pct) if hits else "-",
            _spread(list(group["session_uncached_tokens"]), fmt_int),
            "-" if first["preset"] == "legacy" else SAME_RUN if all(index in same for index in group.index) else _spread(list(group["uncached_change_vs_legacy"]), fmt_change)
            + ("*" if group["legacy_rejected"].any() else ""),
        ]
        rows.append(row)
    return header, rows


#: The footnote of a ``*`` in the *vs legacy* column (every table that marks one prints it).
LEGACY_REJECTED_NOTE = (
    "* the legacy run compared with had requests rejected (400): they never reached the cache and are left out "
    "of its totals, so that total is not what a working agent would have paid"
)


REJECTED_NOTE = (
    "400s: requests the provider refused (HTTP 400). A refused request is not an uncached one: it is left out of "
    "the token totals, so a run with 400s did not do the work its session uncached tokens suggest"
)


def footnotes(rows: list[list[str]], header: list[str] | None = None) -> list[str]:
    """The footnote of every mark a table's cells carry (``*``, see :data:`LEGACY_REJECTED_NOTE`),
    and of a ``400s`` column (given the header) where a run had requests refused."""
    notes = [LEGACY_REJECTED_NOTE] if any(cell.endswith("*") for row in rows for cell in row) else []
    if header is not None and "400s" in header:
        column = header.index("400s")
        if any(row[column] not in ("0", "-") for row in rows):
            notes.append(REJECTED_NOTE)
    return notes


def sweep_text_table(runs: pd.DataFrame, same: Collection[int] = ()) -> str:
    """The sweep table for the terminal: per run, or per configuration across seeds; a footnote
    under it for each mark it uses."""
    if not needs_aggregate(runs):
        header, rows = table_rows(runs, same)
        return "\n".join([text_table(runs, same), *footnotes(rows, header)])
    header, rows = aggregate_rows(runs, same)
    return "\n".join([Table(header, rows, columns_named(header, NUMERIC)).text(), *footnotes(rows, header)])


def sweep_markdown_table(runs: pd.DataFrame, same: Collection[int] = ()) -> str:
    """The same table in Markdown (report.md)."""
    if not needs_aggregate(runs):
        return markdown_table(runs, same)
    header, rows = aggregate_rows(runs, same)
    return Table(header, rows, columns_named(header, NUMERIC)).markdown()
