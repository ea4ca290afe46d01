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
from prefixbench.reports.tables import markdown_table
from prefixbench.simulator.pricing import PriceRow, usd_sum
from prefixbench.workloads.base import Run
from prefixbench.workloads.sweep import SweepSpec


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


def report_markdown(spec: SweepSpec, runs: pd.DataFrame) -> str:
    """report.md: what ran, the sweep table and how to read it."""
    windows = ", ".join(format_window(w) for w in spec.windows)
    params = runs["params"].iloc[0] if len(runs) else ""
    lines = [
        "# prefixbench sweep",
        "",
        f"- workload: `{spec.workload}` ({params.replace(';', ', ')})",
        f"- windows: {windows} (k = 1,000 tokens)",
        f"- engines: {', '.join(spec.engine_names())}; presets: {', '.join(spec.presets)}",
        f"- cache model: `{spec.cache}` (tokens: {spec.tokenizer}); provider profile: `{spec.profile}`",
        "",
        "## Summary calls and session totals",
        "",
        markdown_table(runs),
        "",
        "How to read it: *summary calls, uncached tokens* lists the prompt tokens of each summary",
        "(compaction) call that the cache did not serve; *summary hit* is the range of their hit",
        "rates; *session uncached* adds up the uncached prompt tokens of every request of the run;",
        "*vs legacy* compares that total with the `legacy` run of the same window and engine.",
        "A warm summary call pays only its instruction; a cold one pays the whole region again.",
        "*400s* counts requests the provider profile rejected; they never reach the cache and are",
        "left out of the token totals, so a comparison with a legacy run that had rejections is",
        "marked `*`: that legacy total is not what a working agent would have paid.",
        "",
    ]
    return "\n".join(lines)
