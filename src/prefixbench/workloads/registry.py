"""Workloads by name, and the one call that turns (workload, preset, engine) into a run."""

from __future__ import annotations

from collections.abc import Callable

from prefixbench.errors import UserError
from prefixbench.kernel.presets import get_preset
from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.provider import SimulatedProvider, Validator
from prefixbench.workloads.base import Run, Workload
from prefixbench.workloads.loop import run_workload
from prefixbench.workloads.seed_coding import SeedCodingWorkload

WorkloadFactory = Callable[..., Workload]

WORKLOADS: dict[str, WorkloadFactory] = {
    "seed-coding": SeedCodingWorkload,
}

DEFAULT_ENGINE: dict[str, str] = {
    "seed-coding": "checkpoint",
}


def make_workload(name: str, window: int, **options: object) -> Workload:
    """Instantiate a workload by name for a window."""
    try:
        factory = WORKLOADS[name]
    except KeyError:
        raise UserError(f"unknown workload {name!r} (known: {', '.join(WORKLOADS)})") from None
    return factory(window=window, **options)


def execute(
    workload: Workload,
    preset_name: str,
    *,
    engine: str | None = None,
    cache: CacheModel | None = None,
    validator: Validator | None = None,
    profile: str = "lenient",
) -> Run:
    """Run ``workload`` once under a preset and engine against a fresh simulated provider."""
    preset = get_preset(preset_name)
    engine_name = engine or DEFAULT_ENGINE.get(workload.name, "checkpoint")
    provider = SimulatedProvider(cache=cache, validator=validator)
    return run_workload(
        workload, workload.engine(engine_name, preset), provider, preset=preset.name, profile=profile
    )
