"""Dollar reports: per-request and per-run cost, the saving against ``legacy``, the ``## Cost``
section of report.md and ``cost.png``.

Dollar columns hold exact :class:`~decimal.Decimal` values (object dtype): sums stay exact and
two runs of the same sweep print the same bytes. Print them with
:func:`~prefixbench.simulator.pricing.format_usd`; ``float()`` them only to draw.

    observations --cost_table--> + *_usd per request --run_costs--> one row per run, + saving
                                                                    |-- cost_markdown -> "## Cost"
                                                                    '-- cost_chart ----> cost.png
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from prefixbench.kernel.presets import PRESET_ORDER
from prefixbench.workloads.runs.schema import COST_COLUMNS, RUN_KEYS
from prefixbench.reports.palette import CACHED, FOLD, STORAGE, UNCACHED, WRITTEN
from prefixbench.reports.tables import SAME_RUN
from prefixbench.reports.textable import Table, markdown_lines
from prefixbench.simulator.pricing import (
    DEEPSEEK_PEAK_HOURS,
    CostBreakdown,
    PriceRow,
    Rates,
    cost_of,
    format_rate,
    format_usd,
    usd_sum,
)
from prefixbench.simulator.windows import format_window
from prefixbench.simulator.observe import rejected_status

#: The five parts of a bill, in stacking order (``COST_COLUMNS``, from the run schema, is their
#: ``*_usd`` columns and ``total_usd``).
COST_PARTS = ("uncached_input", "cache_read", "cache_write", "output", "storage")
PART_LABELS = {
    "uncached_input": "uncached input",
    "cache_read": "cache read",
    "cache_write": "cache write",
    "output": "output",
    "storage": "explicit-cache storage",
}
PART_COLOURS = {
    "uncached_input": UNCACHED,
    "cache_read": CACHED,
    "cache_write": WRITTEN,
    "output": FOLD,
    "storage": STORAGE,
}
#: Token columns :func:`cost_table` needs; ``written_long_tokens``, ``cached_explicit_tokens``,
#: ``stored_token_ms``, ``created_tokens`` and ``status`` are optional.
REQUIRED_TOKEN_COLUMNS = ("prompt_tokens", "cached_tokens", "written_tokens", "output_tokens")
#: Columns that identify a run, in the order they are shown (``params``: the workload's options,
#: shown only where they vary, e.g. a grid over ``pruner``).
RUN_ID_COLUMNS = ("run_id", *RUN_KEYS, "params")


def cost_table(observations: pd.DataFrame, price: PriceRow) -> pd.DataFrame:
    """A copy of an observations frame with each request's dollars added.

    Adds ``uncached_input_usd``, ``cache_read_usd``, ``cache_write_usd``, ``output_usd``,
    ``storage_usd`` (explicit-cache storage) and ``total_usd`` (exact Decimals). A request with ``status`` other than 200 costs nothing.

    Raises:
        ValueError: a required token column is missing, or a row's counts are inconsistent.
    """
    missing = [c for c in REQUIRED_TOKEN_COLUMNS if c not in observations.columns]
    if missing:
        raise ValueError(f"observations lack column(s) {', '.join(missing)}")
    n = len(observations)
    long_written = _column(observations, "written_long_tokens", 0)
    explicit = _column(observations, "cached_explicit_tokens", 0)
    stored = _column(observations, "stored_token_ms", 0)
    created = _column(observations, "created_tokens", 0)
    status = _column(observations, "status", 200)
    costs = [
        cost_of(
            SimpleNamespace(
                prompt_tokens=int(prompt),
                cached_tokens=int(cached),
                written_tokens=int(written),
                written_long_tokens=int(long_),
                output_tokens=int(output),
                status=int(code),
                cached_explicit_tokens=int(explicit_),
                stored_token_ms=int(stored_),
                created_tokens=int(created_),
            ),
            price,
        )
        for prompt, cached, written, long_, output, code, explicit_, stored_, created_ in zip(
            observations["prompt_tokens"],
            observations["cached_tokens"],
            observations["written_tokens"],
            long_written,
            observations["output_tokens"],
            status,
            explicit,
            stored,
            created,
        )
    ]
    out = observations.copy()
    for part in COST_PARTS:
        out[f"{part}_usd"] = pd.Series([getattr(c, part) for c in costs], index=observations.index, dtype=object)
    out["total_usd"] = pd.Series([c.total for c in costs], index=observations.index, dtype=object)
    assert len(out) == n
    return out


def run_costs(obs_costs: pd.DataFrame) -> pd.DataFrame:
    """One row per run: its dollars by part, and what each preset saves against ``legacy``.

    Runs are told apart by whichever of ``run_id`` and the sweep keys (workload, window, engine,
    preset, profile, cache) the frame has; the legacy run to compare with is the one that
    matches on every key but the preset. Columns added: ``num_requests``, ``num_rejected`` (the
    requests the provider refused, when ``status`` is known), the ``*_usd`` sums,
    ``compaction_usd`` (summary / compaction calls, when ``purpose`` is known),
    ``saving_vs_legacy_usd`` (legacy total minus this total: positive = cheaper; None without a
    legacy run) and ``saving_vs_legacy_pct`` (float, NaN without a legacy run or at $0).

    Raises:
        ValueError: no run key column or no cost columns (run :func:`cost_table` first).
    """
    keys = [k for k in RUN_ID_COLUMNS if k in obs_costs.columns]
    if not keys:
        raise ValueError(f"observations have none of the run key columns {', '.join(RUN_ID_COLUMNS)}")
    missing = [c for c in COST_COLUMNS if c not in obs_costs.columns]
    if missing:
        raise ValueError(f"observations lack cost column(s) {', '.join(missing)}; run cost_table first")
    records = []
    for key, group in obs_costs.groupby(keys, sort=False, dropna=False):
        values = key if isinstance(key, tuple) else (key,)
        record: dict[str, object] = dict(zip(keys, values))
        record["num_requests"] = len(group)
        if "status" in group.columns:
            record["num_rejected"] = sum(1 for code in group["status"] if rejected_status(int(code)))
        total = sum((_breakdown(row) for row in group[list(COST_COLUMNS[:-1])].itertuples(index=False)), CostBreakdown.zero())
        for part in COST_PARTS:
            record[f"{part}_usd"] = getattr(total, part)
        record["total_usd"] = total.total
        if "purpose" in group.columns:
            record["compaction_usd"] = usd_sum(group.loc[group["purpose"] == "compaction", "total_usd"])
        records.append(record)
    runs = pd.DataFrame.from_records(records)
    for column in (*COST_COLUMNS, "compaction_usd"):
        if column in runs.columns:
            runs[column] = runs[column].astype(object)
    return _with_saving(runs, keys)


def cost_markdown(run_costs: pd.DataFrame, price: PriceRow, same: Collection[SameKey] = ()) -> str:
    """The ``## Cost`` section of report.md: the price used, a table of runs, the saving vs legacy.
    ``same``: the runs identical to their legacy run (:func:`same_key`), whose saving reads
    ``same run`` as in the sweep table."""
    lines = ["## Cost", "", price_markdown(price), ""]
    if run_costs.empty:
        return "\n".join([*lines, "No runs.", ""])
    header, rows, numeric = _table(run_costs, same)
    lines += markdown_lines(header, rows, numeric)
    lines += [
        "",
        "Dollars per run. *saving vs legacy* is the legacy run's total minus this run's (same "
        + _group_words(run_costs)
        + "); positive = cheaper.",
    ]
    if _any_rejected(run_costs):
        lines.append(REJECTED_NOTE)
    if any(v != 0 for v in run_costs.get("storage_usd", [])):
        lines.append(
            "*explicit-cache storage* is what keeping the explicit caches costs (tokens x hours kept at the "
            "storage price); it is billed apart from input."
        )
    if not price.has_write_fee:
        lines.append(
            "This model bills no cache-write fee: tokens written to the cache bill as uncached input, "
            "so *cache write* is $0."
        )
    return "\n".join(lines) + "\n"


def cost_text(run_costs: pd.DataFrame, same: Collection[SameKey] = ()) -> str:
    """The cost table as aligned plain text (for the terminal), with the note on refused
    requests under it when a run has any."""
    text = Table(*_table(run_costs, same)).text()
    return text + ("\n" + REJECTED_NOTE if _any_rejected(run_costs) else "")


#: Under a cost table with a refused request: what its ``! rejected`` mark means.
REJECTED_NOTE = (
    "! rejected: the provider refused some of the run's requests (HTTP 400; 400s counts them). "
    "A refused request costs nothing, so the run's total leaves them out: it is not what the work would cost."
)


def _any_rejected(run_costs: pd.DataFrame) -> bool:
    return "num_rejected" in run_costs.columns and bool((run_costs["num_rejected"].fillna(0) > 0).any())


def price_markdown(price: PriceRow) -> str:
    """The price row a report used, with its date, period, source and evidence, as Markdown."""
    when = f"effective {price.effective}" if price.effective else "since launch (the sources give no date)"
    period = ""
    if price.period is not None:
        windows = " and ".join(f"{a:02d}:00-{b:02d}:00" for a, b in DEEPSEEK_PEAK_HOURS)
        period = f", **{price.period}** prices (peak = {format_rate(price.peak_factor)}x off-peak, Mon-Fri {windows} UTC)"  # type: ignore[arg-type]
    parts = [
        f"Priced as **{price.provider}/{price.model}**, {when}{period}, USD per 1M tokens: {_rates_text(price.rates)}."
    ]
    if price.long_tier is not None:
        tier = price.long_tier
        parts.append(f"Above {tier.threshold:,} prompt tokens a request bills at {_rates_text(tier.rates)}.")
    if price.storage is not None:
        parts.append(f"Explicit-cache storage: {format_rate(price.storage)} per 1M tokens per hour kept.")
    parts.append(f"Source: {price.source} ({price.evidence}).")
    if price.note:
        parts.append(price.note)
    return " ".join(parts)


def cost_chart(run_costs: pd.DataFrame, path: Path, *, title: str | None = None) -> None:
    """``cost.png``: one bar per (window, preset), stacked by the parts of the bill (storage only
    where a run paid any, as in the table), total on top."""
    from prefixbench.reports.charts import plt, save  # charts.py selects the Agg backend, once

    runs = _sorted_runs(run_costs)
    labels = [_bar_label(r, runs) for _, r in runs.iterrows()]
    # One slot of space between windows so their groups read apart.
    x, slot, previous = [], -1, None
    for _, r in runs.iterrows():
        window = int(r["window"]) if "window" in runs.columns else 0
        slot += 2 if previous is not None and window != previous else 1
        previous = window
        x.append(slot)
    positions = np.array(x, dtype=float)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.75 * (slot + 1) + 2.0), 4.5))
    bottom = np.zeros(len(runs))
    for part in _shown_parts(runs):
        values = np.array([float(v) for v in runs[f"{part}_usd"]])
        ax.bar(positions, values, 0.8, bottom=bottom, color=PART_COLOURS[part], label=PART_LABELS[part])
        bottom += values
    for pos, total in zip(positions, runs["total_usd"]):
        ax.text(pos, float(total), format_usd(total), ha="center", va="bottom", fontsize="x-small")
    ax.set_xticks(positions, labels, fontsize="small")
    ax.set_ylabel("USD per run")
    ax.set_ylim(0, max(1e-9, float(bottom.max()) if len(bottom) else 1.0) * 1.12)
    ax.set_title(title or "Cost per run, by part of the bill")
    ax.legend(fontsize="small", ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.2))
    fig.tight_layout()
    save(fig, path)


def _column(frame: pd.DataFrame, name: str, default: int) -> Sequence[object]:
    if name in frame.columns:
        return frame[name].tolist()
    return [default] * len(frame)


def _breakdown(row: tuple) -> CostBreakdown:
    return CostBreakdown(*row)


def _with_saving(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    savings: list[Decimal | None] = []
    pcts: list[float] = []
    if "preset" not in keys:
        savings = [None] * len(runs)
        pcts = [math.nan] * len(runs)
    else:
        group = [k for k in keys if k not in ("preset", "run_id")]
        legacy = {
            tuple(r[k] for k in group): r["total_usd"] for _, r in runs[runs["preset"] == "legacy"].iterrows()
        }
        for _, r in runs.iterrows():
            base = legacy.get(tuple(r[k] for k in group))
            if base is None:
                savings.append(None)
                pcts.append(math.nan)
                continue
            saving = usd_sum((base, -r["total_usd"]))
            savings.append(saving)
            # The percentage is for reading only; the dollars stay exact.
            pcts.append(float(saving / base * 100) if base else math.nan)
    out = runs.copy()
    out["saving_vs_legacy_usd"] = pd.Series(savings, index=runs.index, dtype=object)
    out["saving_vs_legacy_pct"] = pd.Series(pcts, index=runs.index, dtype=float)
    return out


def _rates_text(rates: Rates) -> str:
    parts = [f"input {format_rate(rates.input)}", f"cache read {format_rate(rates.cache_read)}"]
    if rates.explicit_read is not None:
        parts.append(f"explicit cache read {format_rate(rates.explicit_read)}")
    if rates.cache_write is None:
        parts.append("no cache-write fee")
    else:
        parts.append(f"cache write {format_rate(rates.cache_write)}")
        if rates.cache_write_1h is not None:
            parts.append(f"1 h cache write {format_rate(rates.cache_write_1h)}")
    parts.append(f"output {format_rate(rates.output)}")
    return ", ".join(parts)


def _sorted_runs(run_costs: pd.DataFrame) -> pd.DataFrame:
    rank = {p: i for i, p in enumerate(PRESET_ORDER)}
    df = run_costs.copy()
    order: list[str] = []
    if "preset" in df.columns:
        df["_rank"] = df["preset"].map(lambda p: rank.get(p, len(rank)))
    for key in ("workload", "window", "engine", "profile", "cache", "_rank", "preset", "run_id"):
        if key in df.columns:
            order.append(key)
    return df.sort_values(order, kind="stable").drop(columns=[c for c in ("_rank",) if c in df.columns])


def _varying(runs: pd.DataFrame) -> list[str]:
    """Run keys shown as columns: window and preset always, the others when they vary."""
    shown = []
    for key in RUN_ID_COLUMNS:
        if key not in runs.columns:
            continue
        if key in ("window", "preset", "run_id") or runs[key].nunique(dropna=False) > 1:
            shown.append(key)
    return shown


def _bar_label(row: pd.Series, runs: pd.DataFrame) -> str:
    keys = [k for k in _varying(runs) if k != "window"]
    name = "/".join(str(row[k]) for k in keys)
    if "window" in runs.columns:
        return f"{format_window(int(row['window']))}\n{name}"
    return name


def _shown_parts(runs: pd.DataFrame) -> list[str]:
    """The parts of the bill the table and the chart show: storage only where a run paid any
    (an explicit cache); elsewhere it is always $0."""
    return [p for p in COST_PARTS if p != "storage" or any(v != 0 for v in runs.get("storage_usd", []))]


#: A run as :func:`same_key` names it.
SameKey = tuple[tuple[str, str], ...]


def same_key(run: Mapping[str, object], columns: Collection[str]) -> SameKey:
    """A run by its sweep keys and workload options, those of ``columns`` (a cost frame's):
    how a run of the runs frame is found again in the cost table."""
    return tuple((k, str(run[k])) for k in (*RUN_KEYS, "params") if k in columns)


def _table(run_costs: pd.DataFrame, same: Collection[SameKey] = ()) -> tuple[list[str], list[list[str]], set[int]]:
    runs = _sorted_runs(run_costs)
    keys = _varying(runs)
    has_compaction = "compaction_usd" in runs.columns
    parts = _shown_parts(runs)
    rejected = _any_rejected(runs)
    header = [*keys, "requests", *(["400s"] if rejected else []), *(PART_LABELS[p] for p in parts), "total"]
    if has_compaction:
        header.append("summary calls")
    header.append("saving vs legacy")
    if rejected:
        header.append("status")
    numeric = set(range(len(keys), len(header)))
    dollar_columns = [*(f"{p}_usd" for p in parts), "total_usd", *(["compaction_usd"] if has_compaction else [])]
    shown = {column: usd_column(list(runs[column])) for column in dollar_columns}
    savings = usd_column([_saving_or_none(r) for _, r in runs.iterrows()])
    rows = []
    for n, (_, r) in enumerate(runs.iterrows()):
        row = [format_window(int(r[k])) if k == "window" else str(r[k]) for k in keys]
        row.append(f"{int(r['num_requests']):,}")
        refused = int(r["num_rejected"]) if rejected and not pd.isna(r["num_rejected"]) else 0
        if rejected:
            row.append(f"{refused:,}")
        row += [shown[column][n] for column in dollar_columns]
        row.append(SAME_RUN if same and _saving_or_none(r) is not None and same_key(r, runs.columns) in same else _saving_text(r, savings[n]))
        if rejected:
            row.append("! rejected" if refused else "ok")
        rows.append(row)
    if rejected:
        numeric.discard(len(header) - 1)
    return header, rows, numeric


def usd_column(amounts: Sequence[Decimal | None]) -> list[str]:
    """Dollars of one table column, all with the same number of decimals: enough for 4
    significant digits of its smallest non-zero amount, at least 4 (``$0.027400`` beside
    ``$0.002268``, never ``$0.0274`` beside ``$0.002268``). None is ``-``; zero is ``$0``."""
    present = [abs(a) for a in amounts if a is not None and a != 0]
    if not present:
        return ["-" if a is None else "$0" for a in amounts]
    smallest = min(present)
    decimals = min(12, max(4, 3 - smallest.adjusted()))
    quantum = Decimal(1).scaleb(-decimals)
    out = []
    for amount in amounts:
        if amount is None:
            out.append("-")
        elif amount == 0:
            out.append("$0")
        else:
            rounded = abs(amount).quantize(quantum, rounding=ROUND_HALF_UP)
            out.append(f"{'-' if amount < 0 else ''}${rounded:,f}")
    return out


def _saving_or_none(row: pd.Series) -> Decimal | None:
    saving = row.get("saving_vs_legacy_usd")
    return None if saving is None or row.get("preset") == "legacy" else saving


def _saving_text(row: pd.Series, dollars: str) -> str:
    if _saving_or_none(row) is None:
        return "-"
    pct = row["saving_vs_legacy_pct"]
    return dollars if math.isnan(pct) else f"{dollars} ({pct:.1f}%)"


def _group_words(run_costs: pd.DataFrame) -> str:
    group = [k for k in RUN_KEYS if k in run_costs.columns and k != "preset"]
    return ", ".join(group) if group else "run"
