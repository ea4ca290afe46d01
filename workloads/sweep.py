"""A sweep: every (window, engine, preset) run of one workload, planned, then landed.

``plan_sweep(spec)`` is pure: it validates every option and lists the runs before anything
executes, so a bad option never throws away finished work. ``land_sweep(plan, sink)`` executes
the runs in order and hands each finished run to the sink (the CSV writer, a progress bar) as
it lands; if a run fails, the runs before it are already with the sink.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from prefixbench.kernel.presets import PRESET_ORDER, get_preset
from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.models import make_cache, parse_cache_spec
from prefixbench.simulator.pricing import PriceRow
from prefixbench.workloads.base import Run, Workload
from prefixbench.kernel.loading import load_engine
from prefixbench.workloads.registry import (
    execute,
    get_workload,
    is_user_engine,
    make_engine,
    make_workload,
    profile_options,
)

DEFAULT_WINDOWS = (32_000, 128_000, 512_000)

#: Called with (number, total, run) as each run lands.
RunSink = Callable[[int, int, Run], None]


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
    #: ``--engine-config`` tables of user engines, by the name or import path given.
    engine_configs: dict[str, dict[str, object]] = field(default_factory=dict)

    def engine_names(self) -> tuple[str, ...]:
        """Engines to run (the workload's default when none were named)."""
        return self.engines or (get_workload(self.workload).default_engine,)


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """One run of a sweep, validated but not yet executed."""

    workload: Workload
    engine: str
    preset: str


@dataclass(frozen=True, slots=True)
class SweepPlan:
    """A validated sweep: the spec and its runs in execution order."""

    spec: SweepSpec
    runs: tuple[PlannedRun, ...]


def plan_sweep(spec: SweepSpec) -> SweepPlan:
    """Validate every option and list the runs, before anything executes.

    Raises:
        UserError: for an unknown preset, engine, cache model or an invalid workload option.
    """
    if not spec.windows:
        raise UserError("--windows: give at least one window")
    for preset in spec.presets:
        get_preset(preset)
    make_cache_model(spec.cache, spec.tokenizer)
    binding = profile_options(spec.workload, spec.profile)
    supported = get_workload(spec.workload).engines
    for engine in spec.engine_names():
        if engine not in supported and not is_user_engine(engine):
            raise UserError(
                f"--engines: workload {spec.workload!r} has no engine {engine!r} (known: {', '.join(supported)})"
            )
        if is_user_engine(engine):
            load_engine(engine)  # a user's engine: fail on loading before anything runs
    planned = []
    for window in spec.windows:
        workload = make_workload(spec.workload, window, **binding, **spec.options)
        for engine in spec.engine_names():
            # Building the engine validates its configuration for this window.
            make_engine(workload, engine, get_preset(spec.presets[0]), spec.engine_configs.get(engine))
            for preset in spec.presets:
                planned.append(PlannedRun(workload, engine, preset))
    return SweepPlan(spec, tuple(planned))


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
        engine_config=spec.engine_configs.get(item.engine),
    )


def land_sweep(plan: SweepPlan, *sinks: RunSink) -> list[Run]:
    """Execute the plan in order; each finished run goes to every sink as it lands."""
    runs = []
    total = len(plan.runs)
    for number, item in enumerate(plan.runs, 1):
        run = execute_planned(item, plan.spec)
        runs.append(run)
        for sink in sinks:
            sink(number, total, run)
    return runs
