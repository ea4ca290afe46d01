"""The sweep's JSON output and report.md.

Output folder (written by :mod:`prefixbench.reports.output`, rebuilt from the result store)::

    store/<key>.parquet   one file a run (:mod:`prefixbench.workloads.runs.store`)
    runs.csv              one row a run
    observations.csv      one row a request
    report.md             the sweep table and notes
    hit-rate.png          summary-call hit rate by window and preset
    timeline-<w>.png      cached vs uncached tokens per request at window w, folds marked

Planning lives in :mod:`prefixbench.workloads.runs.sweep`.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from decimal import Decimal

import pandas as pd

from prefixbench.reports.frames import with_change_vs_legacy
from prefixbench.simulator.models import assumptions
from prefixbench.workloads.runs.schema import COST_COLUMNS, RUN_KEYS
from prefixbench.reports.warning_notes import warning_notes
from prefixbench.reports.seeds import needs_aggregate, sweep_markdown_table
from prefixbench.workloads.runs.sweep import SweepPlan, SweepSpec
from prefixbench.simulator.windows import format_window


def runs_json(runs: pd.DataFrame, costs: pd.DataFrame | None = None) -> str:
    """The ``--format json`` output: one object per run (with dollars when ``costs`` is given)."""
    df = with_change_vs_legacy(runs)
    if costs is not None:
        keys = [k for k in (*RUN_KEYS, "params") if k in costs.columns]
        keep = [*keys, *COST_COLUMNS, "compaction_usd", "saving_vs_legacy_usd", "saving_vs_legacy_pct"]
        df = df.merge(costs[[c for c in keep if c in costs.columns]], on=keys, how="left")
    records = []
    for _, row in df.iterrows():
        rec = {}
        for key, value in row.items():
            if key == "params":
                rec.update({k: _scalar(v) for k, v in (p.split("=", 1) for p in str(value).split(";") if p)})
                continue
            rec[key] = _scalar(value)
        records.append(rec)
    return json.dumps(records, indent=2)


def _scalar(value: object) -> object:
    if value is None or (isinstance(value, float) and value != value):  # NaN
        return None
    if isinstance(value, Decimal):
        return float(value)
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


def engine_notes(runs: pd.DataFrame) -> list[str]:
    """What the runs' engine settings rest on (``--engine-config``, as the runs' ``params`` record
    it: :func:`~prefixbench.reports.warning_notes.engine_notes`)."""
    from prefixbench.reports.warning_notes import engine_notes as notes_of
    from prefixbench.workloads.runs.sweep import recorded_engine_config

    if not len(runs):
        return []
    pairs = dict.fromkeys(zip(runs["engine"], runs["params"]))
    return notes_of((engine, recorded_engine_config(params)) for engine, params in pairs)


def report_markdown(plan: SweepPlan | SweepSpec, runs: pd.DataFrame, same: Collection[int] = ()) -> str:
    """report.md: what ran, the sweep table (medians and ranges when several seeds ran) and how to
    read it. ``same``: the rows of runs identical to their legacy run (``same run``)."""
    specs = plan.all_specs() if isinstance(plan, SweepPlan) else (plan,)
    spec = specs[0]

    def values(column: str) -> list[str]:
        return [str(v) for v in dict.fromkeys(runs[column])] if len(runs) else []

    windows = ", ".join(format_window(int(w)) for w in sorted(set(runs["window"]))) if len(runs) else ""
    params = "; ".join(str(p).replace(";", ", ") for p in values("params"))
    seeds = sorted(int(s) for s in set(runs["seed"])) if len(runs) else [0]
    tokenizers = ", ".join(dict.fromkeys(s.tokenizer for s in specs))
    lines = [
        "# prefixbench sweep",
        "",
        f"- workload: {', '.join(f'`{w}`' for w in values('workload'))} ({params})",
        f"- windows: {windows} (k = 1,000 tokens)",
        f"- engines: {', '.join(values('engine'))}; presets: {', '.join(values('preset'))}",
        f"- cache model: {', '.join(f'`{c}`' for c in dict.fromkeys(s.cache for s in specs))} (tokens: {tokenizers}); "
        f"provider profile: {', '.join(f'`{p}`' for p in values('profile'))}",
    ]
    if seeds != [0]:
        lines.append(f"- seeds: {_seed_span(seeds)} ({len(seeds)}; 0 is each workload's default shape)")
    del spec
    assumed = [line for cache in dict.fromkeys(s.cache for s in specs) for line in assumptions(cache)]
    if assumed:
        lines += [
            "",
            "## Assumptions of the cache model",
            "",
            "Rules the provider's docs leave open or that rest on a secondary source (S) or a",
            "measurement (M) rather than the official docs (O); `--cache NAME:KEY=VALUE` varies them.",
            "",
            *(f"- {line}" for line in assumed),
        ]
    table = sweep_markdown_table(runs, same)
    lines += [
        "",
        "## Summary calls and session totals",
        "",
        table,
        "",
        *_how_to_read(needs_aggregate(runs)),
        "A warm summary call pays only its instruction; a cold one pays the whole region again.",
    ]
    lines += [f"Note: {note}." for note in [*engine_notes(runs), *warning_notes(_records(runs))]]
    if "| 400s |" in table.split("\n", 1)[0]:  # (the column is there only under a strict profile or with 400s)
        lines += [
            "*400s* counts requests the provider profile rejected; they never reach the cache and are",
            "left out of the token totals, so a comparison with a legacy run that had rejections is",
            "marked `*`: that legacy total is not what a working agent would have paid.",
        ]
    if seeds != [0]:
        lines += [
            f"hit-rate.png pools the summary calls of every seed; the timeline charts draw the runs of seed {seeds[0]}.",
        ]
    lines.append("")
    return "\n".join(lines)


def _records(runs: pd.DataFrame) -> list[dict[str, object]]:
    """The runs' rows as records (none for a frame without runs)."""
    return runs.to_dict("records") if len(runs) else []  # type: ignore[return-value]


def _how_to_read(aggregated: bool) -> list[str]:
    """The paragraph under the table, for the layout it has (one row a run, or a configuration)."""
    if not aggregated:
        return [
            "How to read it: *summary calls, uncached tokens* lists the prompt tokens of each summary",
            "(compaction) call that the cache did not serve; *summary hit* is the range of their hit",
            "rates; *session uncached* adds up the uncached prompt tokens of every request of the run;",
            "*vs legacy* compares that total with the `legacy` run of the same window and engine.",
        ]
    return [
        "How to read it: each row is one configuration (the columns before *seeds* name it) over",
        "its runs, one a seed; *seeds* counts them. *folds*, *summary uncached, per run* (the",
        "uncached prompt tokens of a run's summary (compaction) calls, added up) and *session",
        "uncached* (the uncached prompt tokens of every request of a run) show the median over the",
        "runs and, in brackets, their min..max; *summary hit* the median and min..max over every",
        "summary call of those runs. *vs legacy* compares each run's session total with the",
        "`legacy` run of the same seed, window and engine, then summarizes the same way.",
    ]


def _seed_span(seeds: list[int]) -> str:
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)
