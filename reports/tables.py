"""The sweep table, as aligned text for the terminal and as Markdown for report.md."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence

import pandas as pd

from prefixbench.kernel.presets import PRESET_ORDER
from prefixbench.reports.frames import with_change_vs_legacy
from prefixbench.reports.textable import Table, columns_named
from prefixbench.simulator.windows import format_window


def fmt_int(value: float) -> str:
    """``191,515``."""
    return f"{int(value):,}"


def fmt_pct(ratio: float) -> str:
    """``97.9%``."""
    return f"{ratio * 100:.1f}%"


def fmt_change(ratio: float) -> str:
    """``-34.5%`` (a real minus sign is avoided so the text stays ASCII)."""
    if ratio is None or (isinstance(ratio, float) and math.isnan(ratio)):
        return "-"
    text = f"{ratio * 100:+.1f}%"
    return "+0.0%" if text == "-0.0%" else text  # rounded to nothing: one way of writing it, as the +0.0% of no change


#: The columns aligned right (the rest are names and lists).
NUMERIC = ("folds", "400s", "session uncached", "vs legacy")

#: Beyond this many summary calls a row shows the first and last few and the count.
MAX_LISTED_CALLS = 8


def fmt_calls(values: Sequence[int], refused: int = 0) -> str:
    """Uncached tokens of each summary call the provider accepted: ``22,268 / 21,112 / 21,020``;
    beyond :data:`MAX_LISTED_CALLS` the first 4 and last 2 with the range and count between them:
    ``470 / 470 / 470 / 470 / ... / 470 / 470 (40 calls, 470-22,268)``. Refused summary calls
    are not uncached ones: they are counted after the list, ``470 / 470 (+3 refused)``, or
    ``- (44 refused)`` when none was accepted."""
    return _calls_text(values) + (f" ({'+' if len(values) else ''}{refused:,} refused)" if refused else "")


def _calls_text(values: Sequence[int]) -> str:
    if not len(values):
        return "-"
    if len(values) <= MAX_LISTED_CALLS:
        return " / ".join(fmt_int(v) for v in values)
    shown = [fmt_int(v) for v in (*values[:4], *values[-2:])]
    return " / ".join([*shown[:4], "...", *shown[4:]]) + f" ({len(values):,} calls, {fmt_int(min(values))}-{fmt_int(max(values))})"


def fmt_hits(values: Sequence[float]) -> str:
    """Hit-rate range of the summary calls: ``0.0-0.9%`` or ``97.9%``."""
    if not len(values):
        return "-"
    lo, hi = min(values), max(values)
    if fmt_pct(lo) == fmt_pct(hi):
        return fmt_pct(lo)
    return f"{lo * 100:.1f}-{fmt_pct(hi)}"


def summaries_refused(record: object) -> int:
    """The refused summary calls of a run record (0 for a record written before they were
    counted apart)."""
    value = record.get("num_summaries_rejected", 0)  # type: ignore[attr-defined]
    return 0 if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)


#: The ``vs legacy`` cell of a run identical to its legacy run (a user's engine that does not
#: read ``options.preset``): not a change of +0.0%, the same run again.
SAME_RUN = "same run"


def shows_engine(engines: Iterable[object]) -> bool:
    """Whether a sweep's tables name the engine: when several ran, or one that is a user's
    (a table of ``sweep --engine my_pkg:factory`` alone would otherwise never say whose runs
    they are, which report.md does)."""
    from prefixbench.workloads.scripted.registry import is_builtin_engine

    names = {str(e) for e in engines}
    return len(names) > 1 or any(not is_builtin_engine(name) for name in names)


def table_rows(runs: pd.DataFrame, same: Collection[int] = ()) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the sweep table, in window, engine, preset order. ``same``: the rows
    (of ``runs``) of runs identical to their legacy run, whose ``vs legacy`` reads ``same run``."""
    df = with_change_vs_legacy(runs)
    show_engine = shows_engine(df["engine"])
    show_profile = df["profile"].nunique() > 1
    show_rejected = bool((df["num_rejected"] > 0).any() or (df["profile"] != "lenient").any())
    header = ["window"]
    if show_engine:
        header.append("engine")
    if show_profile:
        header.append("profile")
    header += ["preset", "folds"]
    if show_rejected:
        header.append("400s")
    header += ["summary calls, uncached tokens", "summary hit", "session uncached", "vs legacy"]
    rank = {p: i for i, p in enumerate(PRESET_ORDER)}
    df = df.assign(_rank=df["preset"].map(lambda p: rank.get(p, len(rank))))
    df = df.sort_values(["window", "engine", "profile", "_rank", "preset"], kind="stable")
    rows = []
    for index, r in df.iterrows():
        row = [format_window(int(r["window"]))]
        if show_engine:
            row.append(str(r["engine"]))
        if show_profile:
            row.append(str(r["profile"]))
        row += [str(r["preset"]), str(r["num_folds"])]
        if show_rejected:
            row.append(str(r["num_rejected"]))
        row += [
            fmt_calls(r["summary_uncached_tokens"], summaries_refused(r)),
            fmt_hits(r["summary_hit_ratio"]),
            fmt_int(r["session_uncached_tokens"]),
            "-" if r["preset"] == "legacy" else SAME_RUN if index in same else fmt_change(r["uncached_change_vs_legacy"]) + ("*" if r["legacy_rejected"] else ""),
        ]
        rows.append(row)
    return header, rows


def text_table(runs: pd.DataFrame, same: Collection[int] = ()) -> str:
    """The sweep table as aligned plain text."""
    header, rows = table_rows(runs, same)
    return Table(header, rows, columns_named(header, NUMERIC)).text()


def markdown_table(runs: pd.DataFrame, same: Collection[int] = ()) -> str:
    """The sweep table as a Markdown table."""
    header, rows = table_rows(runs, same)
    return Table(header, rows, columns_named(header, NUMERIC)).markdown()
