"""A sweep: every (window, engine, preset) run of one workload, written as it lands.

Output folder::

    runs.csv              one row a run (appended as each run finishes)
    observations.csv      one row a request (appended as each run finishes)
    report.md             the sweep table and notes
    hit-rate.png          summary-call hit rate by window and preset
    timeline-<w>.png      cached vs uncached tokens per request at window w, folds marked

Everything is validated before the first run starts, so a bad option never throws away
finished work; if a run fails, the runs before it are already on disk.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.presets import get_preset
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
from prefixbench.reports.tables import PRESET_ORDER, markdown_table
from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.models import make_cache, parse_cache_spec
from prefixbench.simulator.pricing import PriceRow, usd_sum
from prefixbench.workloads.base import Run, Workload
from prefixbench.workloads.registry import (
    DEFAULT_ENGINE,
    WORKLOAD_ENGINES,
    execute,
    make_workload,
    profile_options,
)

DEFAULT_WINDOWS = (32_000, 128_000, 512_000)


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """What to run. ``options`` go to the workload factory (steps, effort, pruner, ...)."""

    workload: str = "seed-coding"
    windows: tuple[int, ...] = DEFAULT_WINDOWS
    presets: tuple[str, ...] = PRESET_ORDER
    engines: tuple[str, ...] = ()
    profile: str = "lenient"
    cache: str = "byte-exact"
    tokenizer: str = "heuristic"
    options: dict[str, object] = field(default_factory=dict)
    #: Price row for dollar columns, cost.md and cost.png (None = no cost report).
    price: PriceRow | None = None

    def engine_names(self) -> tuple[str, ...]:
        """Engines to run (the workload's default when none were named)."""
        return self.engines or (DEFAULT_ENGINE.get(self.workload, "checkpoint"),)


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """One run of a sweep, validated but not yet executed."""

    workload: Workload
    engine: str
    preset: str


def plan_sweep(spec: SweepSpec) -> list[PlannedRun]:
    """Validate every option and list the runs, before anything executes."""
    if not spec.windows:
        raise UserError("--windows: give at least one window")
    for preset in spec.presets:
        get_preset(preset)
    make_cache_model(spec.cache, spec.tokenizer)
    binding = profile_options(spec.workload, spec.profile)
    supported = WORKLOAD_ENGINES.get(spec.workload, ())
    for engine in spec.engine_names():
        if supported and engine not in supported:
            raise UserError(
                f"--engines: workload {spec.workload!r} has no engine {engine!r} (known: {', '.join(supported)})"
            )
    planned = []
    for window in spec.windows:
        workload = make_workload(spec.workload, window, **binding, **spec.options)
        for engine in spec.engine_names():
            # Building the engine validates its configuration for this window.
            workload.engine(engine, get_preset(spec.presets[0]))
            for preset in spec.presets:
                planned.append(PlannedRun(workload, engine, preset))
    return planned


class SweepWriter:
    """Appends each finished run to runs.csv and observations.csv (with dollars when priced)."""

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

    def add(self, run: Run) -> None:
        """Append one run's rows."""
        record = {k: json.dumps(v) if isinstance(v, list) else v for k, v in run_record(run).items()}
        observations = pd.DataFrame(observation_records(run), columns=list(OBSERVATION_COLUMNS))
        if self.price is not None:
            observations = cost_table(observations, self.price)
            for column in COST_COLUMNS:
                record[column] = usd_sum(observations[column])
        pd.DataFrame([record], columns=self.run_columns).to_csv(
            self.runs_path, mode="a", header=False, index=False, lineterminator="\n"
        )
        observations.to_csv(self.observations_path, mode="a", header=False, index=False, lineterminator="\n")


def make_cache_model(spec: str, tokenizer: str = "heuristic") -> CacheModel | None:
    """A fresh cache model from a ``--cache`` value such as ``openai:mode=5.6``.

    None means the byte-exact reference, which the provider always runs anyway.
    """
    name, options = parse_cache_spec(spec)
    if name == "byte-exact" and not options and tokenizer == "heuristic":
        return None
    return make_cache(name, tokenizer=tokenizer, **options)


def execute_planned(item: PlannedRun, spec: SweepSpec) -> Run:
    """Run one planned item with the sweep's cache model and strictness profile."""
    return execute(
        item.workload,
        item.preset,
        engine=item.engine,
        cache=make_cache_model(spec.cache, spec.tokenizer),
        profile=spec.profile,
    )


def run_sweep(
    spec: SweepSpec, out_dir: Path | None, on_run: Callable[[int, int, Run], None] | None = None
) -> list[Run]:
    """Execute the sweep; writes each run to ``out_dir`` as it lands (when given)."""
    planned = plan_sweep(spec)
    writer = SweepWriter(out_dir, spec.price) if out_dir is not None else None
    runs = []
    for number, item in enumerate(planned, 1):
        run = execute_planned(item, spec)
        runs.append(run)
        if writer is not None:
            writer.add(run)
        if on_run is not None:
            on_run(number, len(planned), run)
    return runs


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
