"""Every spec the ``check`` command runs, and the runner."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.presets import get_preset
from prefixbench.workloads.specs import cache_integrity, reasoning
from prefixbench.workloads.specs.base import Spec, SpecResult


def all_specs() -> tuple[Spec, ...]:
    """All registered specs, in report order."""
    return (*cache_integrity.SPECS, *reasoning.SPECS)


def known_engines() -> tuple[str, ...]:
    """Engines some spec covers, in first-seen order."""
    return tuple(dict.fromkeys(e for s in all_specs() for e in s.engines))


def run_specs(preset: str, windows: Sequence[int], engines: Sequence[str] | None = None) -> list[SpecResult]:
    """Run every spec on ``preset`` for each of its engines (of ``engines``, when given);
    windowed specs once per window."""
    get_preset(preset)
    if engines is not None:
        unknown = [e for e in engines if e not in known_engines()]
        if unknown:
            raise UserError(f"--engines: no specs for {', '.join(unknown)} (known: {', '.join(known_engines())})")
    results = []
    for spec in all_specs():
        takes_engine = "engine" in inspect.signature(spec.check).parameters
        for engine in spec.engines:
            if engines is not None and engine not in engines:
                continue
            kwargs = {"engine": engine} if takes_engine else {}
            if spec.windowed:
                results.extend(spec.check(preset, window, **kwargs) for window in windows)
            else:
                results.append(spec.check(preset, **kwargs))
    return results
