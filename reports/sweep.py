"""The sweep's files: rows appended as each run lands, the JSON output and report.md.

Output folder::

    runs.csv              one row a run (appended as each run finishes)
    observations.csv      one row a request (appended as each run finishes)
    report.md             the sweep table and notes
    hit-rate.png          summary-call hit rate by window and preset
    timeline-<w>.png      cached vs uncached tokens per request at window w, folds marked

Planning and execution live in :mod:`prefixbench.workloads.sweep`.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pandas as pd

from prefixbench.reports.cost import COST_COLUMNS, cost_table
from prefixbench.reports.frames import (
    OBSERVATION_COLUMNS,
    RUN_COLUMNS,
    RUN_KEYS,
    format_window,
    observation_records,
    run_record,
    with_change_vs_legacy,
)
from prefixbench.reports.seeds import sweep_markdown_table
from prefixbench.simulator.pricing import PriceRow, usd_sum
from prefixbench.workloads.base import Run
from prefixbench.workloads.sweep import SweepPlan, SweepSpec


class SweepWriter:
    """A sweep sink: appends each finished run to runs.csv and observations.csv.

    When priced, each run's observations are priced once here and kept
    (:attr:`priced_observations`) for the cost report, which never prices them again.
    """

    def __init__(self, out_dir: Path, price: PriceRow | None = None) -> None:
        self.out_dir = out_dir
        self.price = price
        out_dir.mkdir(parents=True, exist_ok=True)
        self.runs_path = out_dir / "runs.csv"
        self.observations_path = out_dir / "observations.csv"
        extra = list(COST_COLUMNS) if price is not None else []
        self.run_columns = [*RUN_COLUMNS, *extra]
        self.observation_columns = [*OBSERVATION_COLUMNS, *extra]
        for path, columns in ((self.runs_path, self.run_columns), (self.observations_path, self.observation_columns)):
            pd.DataFrame(columns=columns).to_csv(path, index=False, lineterminator="\n")
        self.priced_observations: list[pd.DataFrame] = []

    def __call__(self, number: int, total: int, run: Run) -> None:
        """Append one run's rows (the :data:`~prefixbench.workloads.sweep.RunSink` signature)."""
        record = {k: json.dumps(v) if isinstance(v, list) else v for k, v in run_record(run).items()}
        observations = pd.DataFrame(observation_records(run), columns=list(OBSERVATION_COLUMNS))
        if self.price is not None:
            observations = cost_table(observations, self.price)
            self.priced_observations.append(observations)
            for column in COST_COLUMNS:
                record[column] = usd_sum(observations[column])
        pd.DataFrame([record], columns=self.run_columns).to_csv(
            self.runs_path, mode="a", header=False, index=False, lineterminator="\n"
        )
        observations.to_csv(self.observations_path, mode="a", header=False, index=False, lineterminator="\n")


def runs_json(runs: pd.DataFrame, costs: pd.DataFrame | None = None) -> str:
    """The ``--format json`` output: one object per run (with dollars when ``costs`` is given)."""
    df = with_change_vs_legacy(runs)
    if costs is not None:
        keep = [*RUN_KEYS, *COST_COLUMNS, "compaction_usd", "saving_vs_legacy_usd", "saving_vs_legacy_pct"]
        df = df.merge(costs[[c for c in keep if c in costs.columns]], on=list(RUN_KEYS), how="left")
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


def report_markdown(plan: SweepPlan | SweepSpec, runs: pd.DataFrame) -> str:
    """report.md: what ran, the sweep table (medians and ranges when several seeds ran) and how to read it."""
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
    lines += [
        "",
        "## Summary calls and session totals",
        "",
        sweep_markdown_table(runs),
        "",
        "How to read it: *summary calls, uncached tokens* lists the prompt tokens of each summary",
        "(compaction) call that the cache did not serve; *summary hit* is the range of their hit",
        "rates; *session uncached* adds up the uncached prompt tokens of every request of the run;",
        "*vs legacy* compares that total with the `legacy` run of the same window and engine.",
        "A warm summary call pays only its instruction; a cold one pays the whole region again.",
        "*400s* counts requests the provider profile rejected; they never reach the cache and are",
        "left out of the token totals, so a comparison with a legacy run that had rejections is",
        "marked `*`: that legacy total is not what a working agent would have paid.",
    ]
    if seeds != [0]:
        lines += [
            "With several seeds each row is one configuration over all its seeds: the median, and the",
            "min-max range in brackets. *vs legacy* is compared seed by seed (each seed's run against",
            "the legacy run of the same seed), then summarized. hit-rate.png pools the summary calls",
            f"of every seed; the timeline charts draw the runs of seed {seeds[0]}.",
        ]
    lines.append("")
    return "\n".join(lines)


def _seed_span(seeds: list[int]) -> str:
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)
