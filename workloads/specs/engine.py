"""Integrity specs for a user's engine: every observed spec on every (window, workload, profile).

A user's engine (an installed name or ``package.module:factory``) is driven through each
workload at each window under the provider profile, once per case; every applicable spec of
:mod:`prefixbench.workloads.specs.observed` judges that run. ``check --engine`` and the pytest
plugin both run these.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

import msgspec

from prefixbench.kernel.presets import get_preset
from prefixbench.simulator.validate import PROFILES
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.scripted.registry import WORKLOADS, execute, make_engine, make_workload, profile_options
from prefixbench.workloads.specs.base import SpecResult
from prefixbench.workloads.specs.observed import OBSERVED_SPECS, ObservedSpec

#: The workloads a user's engine is checked on, in registry order: those whose entry says
#: ``engine_gate`` (the seed workloads; subagents and idle-gaps run it too, on sweep).
ENGINE_WORKLOADS: tuple[str, ...] = tuple(name for name, entry in WORKLOADS.items() if entry.engine_gate)


class EngineCase(msgspec.Struct, frozen=True):
    """One run of a user's engine: a window, a workload and a provider profile."""

    window: int
    workload: str
    profile: str

    @property
    def id(self) -> str:
        """``32k-seed-coding-lenient``: the pytest item's parameter id."""
        return f"{_window_label(self.window)}-{self.workload}-{self.profile}"


def _window_label(window: int) -> str:
    if window % 1_000_000 == 0:
        return f"{window // 1_000_000}m"
    if window % 1_000 == 0:
        return f"{window // 1_000}k"
    return str(window)


def engine_cases(
    windows: Sequence[int], profiles: Sequence[str] = ("lenient",), workloads: Sequence[str] = ENGINE_WORKLOADS
) -> tuple[EngineCase, ...]:
    """Every case, windows outermost (UserError on an unknown profile or workload)."""
    for profile in profiles:
        if profile not in PROFILES:
            raise UserError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    for workload in workloads:
        if workload not in WORKLOADS:
            raise UserError(f"unknown workload {workload!r} (known: {', '.join(WORKLOADS)})")
    return tuple(
        EngineCase(w, name, p) for w in windows for name in workloads for p in profiles if speaks(name, p)
    )


def speaks(workload: str, profile: str) -> bool:
    """Whether a run of ``workload`` under ``profile`` means anything: a strict (DeepSeek) profile
    only judges a workload that binds its client to one (``thinking-tools``)."""
    return profile == "lenient" or WORKLOADS[workload].bind_profile is not None


def applicable(case: EngineCase) -> tuple[ObservedSpec, ...]:
    """The specs that judge runs of ``case``."""
    return tuple(spec for spec in OBSERVED_SPECS if spec.applies(case.profile))


def run_case(engine: str, case: EngineCase, preset: str = "patched", config: Mapping[str, Any] | None = None) -> Run:
    """Drive the engine through the case's workload, ``config`` its ``--engine-config`` table
    (memoized: runs are deterministic)."""
    return _run_case(engine, case, preset, json.dumps(dict(config or {}), sort_keys=True))


@lru_cache(maxsize=64)
def _run_case(engine: str, case: EngineCase, preset: str, config_json: str) -> Run:
    workload = make_workload(case.workload, case.window, **profile_options(case.workload, case.profile))
    return execute(workload, preset, engine=engine, profile=case.profile, engine_config=json.loads(config_json))


def judge_case(spec: ObservedSpec, run: Run, case: EngineCase, preset: str = "patched") -> SpecResult:
    """One spec's verdict on one run of the case."""
    verdict, figure = spec.judge(run.observations, case.profile, case.window)
    return SpecResult(spec.name, verdict, figure, preset, case.window, run.engine, case.workload, case.profile)


def validate_engine(engine: str, case: EngineCase, preset: str = "patched", config: Mapping[str, Any] | None = None) -> str:
    """Load and build the engine for a case before anything runs (UserError if it cannot); its name."""
    workload = make_workload(case.workload, case.window, **profile_options(case.workload, case.profile))
    return make_engine(workload, engine, get_preset(preset), config).name


def run_engine_specs(
    engine: str, windows: Sequence[int], profiles: Sequence[str] = ("lenient",), preset: str = "patched",
    config: Mapping[str, Any] | None = None, on_case: Callable[[str, bool], None] | None = None,
) -> Iterator[SpecResult]:
    """Every applicable spec on every case, case by case (the engine is built first, for every case).

    ``on_case(label, done)`` is told when each case starts (``done`` False) and ends (True),
    ``label`` naming the engine and the case (``my-engine 32k-seed-coding-lenient``): progress."""
    cases = engine_cases(windows, profiles)
    get_preset(preset)
    for case in cases:
        validate_engine(engine, case, preset, config)
    for case in cases:
        label = f"{engine} {case.id}"
        if on_case is not None:
            on_case(label, False)
        run = run_case(engine, case, preset, config)
        if on_case is not None:
            on_case(label, True)
        for spec in applicable(case):
            yield judge_case(spec, run, case, preset)
