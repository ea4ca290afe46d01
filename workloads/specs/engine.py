"""Integrity specs for a user's engine: every observed spec on every (window, workload, profile).

A user's engine (an installed name or ``package.module:factory``) is driven through each
workload at each window under the provider profile, once per case; every applicable spec of
:mod:`prefixbench.workloads.specs.observed` judges that run. Each workload's first case is
run a second time and the ``deterministic`` spec compares the requests of the two runs byte
for byte (:func:`judge_determinism`). ``check --engine`` and the pytest plugin both run these.
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
from prefixbench.simulator.wire import Request
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.scripted.registry import WORKLOADS, execute, make_engine, make_workload, profile_options, validator_for
from prefixbench.workloads.specs.base import SpecResult, Verdict
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
    (memoized: a deterministic engine's runs of one case are alike, which the
    ``deterministic`` spec checks on each workload's first case)."""
    return _run_case(engine, case, preset, _config_json(config))[0]


def _config_json(config: Mapping[str, Any] | None) -> str:
    return json.dumps(dict(config or {}), sort_keys=True)


@lru_cache(maxsize=64)
def _run_case(engine: str, case: EngineCase, preset: str, config_json: str) -> tuple[Run, tuple[Request, ...]]:
    return _fresh_run(engine, case, preset, config_json)


def _fresh_run(engine: str, case: EngineCase, preset: str, config_json: str) -> tuple[Run, tuple[Request, ...]]:
    """One run of the case, never memoized, with every request the provider received, in order."""
    from prefixbench.workloads.scripted.record import RequestLog

    workload = make_workload(case.workload, case.window, **profile_options(case.workload, case.profile))
    log = RequestLog(validator_for(workload, case.profile))
    run = execute(workload, preset, engine=engine, validator=log, profile=case.profile, engine_config=json.loads(config_json))
    return run, tuple(log.requests)


class EngineSpec(msgspec.Struct, frozen=True):
    """A spec on the engine itself rather than on one run's observations: its name and what it asserts."""

    name: str
    description: str


#: Same inputs, byte-identical outputs: a case run twice must send the same requests.
DETERMINISTIC = EngineSpec("deterministic", "the same case run twice sends byte-identical requests")


def determinism_cases(cases: Sequence[EngineCase]) -> tuple[EngineCase, ...]:
    """The cases run a second time for the ``deterministic`` spec: each workload's first (its
    smallest window, where an engine compacts most often), so the check costs one run a workload."""
    first: dict[str, EngineCase] = {}
    for case in cases:
        first.setdefault(case.workload, case)
    return tuple(first.values())


def judge_determinism(engine: str, case: EngineCase, preset: str = "patched", config: Mapping[str, Any] | None = None) -> SpecResult:
    """Run the case again and compare every request the provider received with the first run's,
    byte for byte; the figure names the first request that differs, and where."""
    config_json = _config_json(config)
    run, first = _run_case(engine, case, preset, config_json)
    _, second = _fresh_run(engine, case, preset, config_json)
    figure = _first_difference(first, second, run)
    verdict = Verdict.PASS if figure is None else Verdict.VIOLATED
    if figure is None:
        figure = f"2 runs of the case sent the same {len(first):,} requests, byte for byte"
    return SpecResult(DETERMINISTIC.name, verdict, figure, preset, case.window, run.engine, case.workload, case.profile)


def _first_difference(first: Sequence[Request], second: Sequence[Request], run: Run) -> str | None:
    """Where the second run's requests part from the first's (None: byte-identical)."""
    for idx, (a, b) in enumerate(zip(first, second)):
        if a == b:
            continue
        observation = run.observations[idx]
        return (f"a second run of the same case sent a different request #{observation.index} ({observation.purpose}): "
                f"{_where_requests_differ(a, b)}; the same inputs must give byte-identical requests")
    if len(first) != len(second):
        return (f"a second run of the same case sent {_requests(len(second))}, the first {len(first):,} (the first "
                f"{min(len(first), len(second)):,} alike); the same inputs must give byte-identical requests")
    return None


def _requests(n: int) -> str:
    return f"{n:,} request" if n == 1 else f"{n:,} requests"


def _where_requests_differ(a: Request, b: Request) -> str:
    """The first byte of the prompt where two requests differ, or the field beside it that does."""
    from prefixbench.simulator.render import render_request

    units_a, units_b = render_request(a).units, render_request(b).units
    offset = 0
    for idx, (ua, ub) in enumerate(zip(units_a, units_b)):
        if ua.data != ub.data:
            common = next((i for i, (x, y) in enumerate(zip(ua.data, ub.data)) if x != y), min(len(ua.data), len(ub.data)))
            head = len(units_a) - len(a.messages)
            what = ua.kind if idx < head else f"message {idx - head}"
            return f"its prompt differs from byte {offset + common:,} ({what})"
        offset += len(ua.data)
    if len(units_a) != len(units_b):
        return f"its prompt has {len(b.messages):,} messages, the first run's {len(a.messages):,}"
    fields = [name for name in a.__struct_fields__ if getattr(a, name) != getattr(b, name)]
    return f"its {', '.join(fields)} differ{'s' if len(fields) == 1 else ''}, beside the prompt"


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
    ``label`` naming the engine and the case (``my-engine 32k-seed-coding-lenient``): progress.
    Each workload's first case runs twice: its ``deterministic`` result follows its other specs."""
    cases = engine_cases(windows, profiles)
    get_preset(preset, "--preset")
    for case in cases:
        validate_engine(engine, case, preset, config)
    again = determinism_cases(cases)
    for case in cases:
        label = f"{engine} {case.id}"
        if on_case is not None:
            on_case(label, False)
        run = run_case(engine, case, preset, config)
        same = judge_determinism(engine, case, preset, config) if case in again else None
        if on_case is not None:
            on_case(label, True)
        for spec in applicable(case):
            yield judge_case(spec, run, case, preset)
        if same is not None:
            yield same
