"""Workloads by name, and the one call that turns (workload, preset, engine) into a run."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.engines.checkpoint import CheckpointConfig
from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.user_tail import UserTailConfig
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


def workload_options(name: str) -> tuple[str, ...]:
    """The options a workload takes besides its window."""
    factory = WORKLOADS[name]
    return tuple(f.name for f in fields(factory) if f.init and f.name != "window")  # type: ignore[arg-type]


def make_workload(name: str, window: int, **options: object) -> Workload:
    """Instantiate a workload by name for a window (UserError on an option it does not take)."""
    if name not in WORKLOADS:
        raise UserError(f"unknown workload {name!r} (known: {', '.join(WORKLOADS)})")
    accepted = workload_options(name)
    for key in options:
        if key not in accepted:
            flag = "--" + key.replace("_", "-")
            raise UserError(f"{flag} does not apply to workload {name!r} (its options: {', '.join(accepted)})")
    return WORKLOADS[name](window=window, **options)


def read_engine_config(path: Path) -> dict[str, Mapping[str, Any]]:
    """Per-engine config sections from a TOML (``.toml``) or JSON file: ``{engine: {key: value}}``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not valid {'TOML' if path.suffix == '.toml' else 'JSON'} ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a table of engines, e.g. {{\"ranges\": {{...}}}}")
    known = tuple(dict.fromkeys(e for engines in WORKLOAD_ENGINES.values() for e in engines))
    for engine, section in data.items():
        if engine not in known:
            raise UserError(f"{path}: unknown engine {engine!r} (known: {', '.join(known)})")
        if not isinstance(section, dict):
            raise UserError(f"{path}: [{engine}] must be a table of settings")
    return data


def engine_config_options(workload_name: str, sections: Mapping[str, Mapping[str, Any]], where: str) -> dict[str, object]:
    """Workload options carrying per-engine configs (UserError, prefixed with ``where``, if invalid)."""
    supported = WORKLOAD_ENGINES.get(workload_name, ())
    options: dict[str, object] = {}
    try:
        for engine, section in sections.items():
            if engine not in supported:
                raise UserError(f"workload {workload_name!r} has no engine {engine!r} (known: {', '.join(supported)})")
            if workload_name == "seed-coding":
                CheckpointConfig.from_mapping(section)  # validate the keys now
                options["checkpoint"] = dict(section)
            elif engine == "checkpoint":
                options["checkpoint"] = CheckpointConfig.from_mapping(section)
            elif engine == "user-tail":
                options["user_tail"] = UserTailConfig.from_mapping(section)
            elif engine == "ranges":
                options["ranges"] = RangesConfig.from_mapping(section)
    except UserError as exc:
        raise UserError(f"{where}: {exc}") from None
    except TypeError as exc:
        raise UserError(f"{where}: {exc}") from None
    return options


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
