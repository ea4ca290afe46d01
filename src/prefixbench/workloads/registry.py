"""Workloads by name, and the one call that turns (workload, preset, engine) into a run."""

from __future__ import annotations

from collections.abc import Callable

from prefixbench.errors import UserError
from prefixbench.kernel.presets import get_preset
from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.provider import SimulatedProvider, Validator
from prefixbench.simulator.validate import PROFILES, make_validator
from prefixbench.workloads.base import Run, Workload
from prefixbench.workloads.loop import run_workload
from prefixbench.workloads.seed_coding import SeedCodingWorkload
from prefixbench.workloads.thinking_tools import ThinkingToolsWorkload, binding_for_profile

WorkloadFactory = Callable[..., Workload]

WORKLOADS: dict[str, WorkloadFactory] = {
    "seed-coding": SeedCodingWorkload,
    "thinking-tools": ThinkingToolsWorkload,
}

DEFAULT_ENGINE: dict[str, str] = {
    "seed-coding": "checkpoint",
    "thinking-tools": "user-tail",
}

#: Engines each workload can mount (the first is its default).
WORKLOAD_ENGINES: dict[str, tuple[str, ...]] = {
    "seed-coding": ("checkpoint",),
    "thinking-tools": ("user-tail", "checkpoint", "ranges"),
}


def make_workload(name: str, window: int, **options: object) -> Workload:
    """Instantiate a workload by name for a window."""
    try:
        factory = WORKLOADS[name]
    except KeyError:
        raise UserError(f"unknown workload {name!r} (known: {', '.join(WORKLOADS)})") from None
    return factory(window=window, **options)


def profile_options(workload_name: str, profile: str) -> dict[str, object]:
    """Workload options that bind the workload's client to a provider profile.

    ``thinking-tools`` under ``deepseek-relay`` sends the relay placeholder where the official
    endpoint gets ``""``; other workloads take no such option. Pass the result to
    :func:`make_workload` next to the other options.
    """
    if profile not in PROFILES:
        raise UserError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    if workload_name == "thinking-tools":
        return {"binding": binding_for_profile(profile)}
    return {}


def validator_for(workload: Workload, profile: str) -> Validator | None:
    """A fresh validator for ``profile`` reading the workload's reasoning field (None for lenient)."""
    if profile == "lenient":
        return None  # never rejects; no validator keeps the first slice's runs as fast as before
    field = getattr(workload, "reasoning_field", None) if profile == "deepseek-relay" else None
    return make_validator(profile, field)


def execute(
    workload: Workload,
    preset_name: str,
    *,
    engine: str | None = None,
    cache: CacheModel | None = None,
    validator: Validator | None = None,
    profile: str = "lenient",
) -> Run:
    """Run ``workload`` once under a preset and engine against a fresh simulated provider.

    Without an explicit ``validator`` the provider applies ``profile`` (:func:`validator_for`).
    """
    preset = get_preset(preset_name)
    if validator is None:
        validator = validator_for(workload, profile)
    engine_name = engine or DEFAULT_ENGINE.get(workload.name, "checkpoint")
    provider = SimulatedProvider(cache=cache, validator=validator)
    return run_workload(
        workload, workload.engine(engine_name, preset), provider, preset=preset.name, profile=profile
    )
