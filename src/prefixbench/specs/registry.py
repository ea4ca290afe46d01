"""Every spec the ``check`` command runs, and the runner."""

from __future__ import annotations

from collections.abc import Sequence

from prefixbench.errors import UserError
from prefixbench.kernel.presets import get_preset
from prefixbench.specs import cache_integrity
from prefixbench.specs.base import Spec, SpecResult


def all_specs() -> tuple[Spec, ...]:
    """All registered specs, in report order."""
    return cache_integrity.SPECS


def run_specs(preset: str, windows: Sequence[int], engines: Sequence[str] | None = None) -> list[SpecResult]:
    """Run every spec (of the given engines) on ``preset``; windowed specs once per window."""
    get_preset(preset)
    specs = all_specs()
    if engines is not None:
        known = {e for s in specs for e in s.engines}
        unknown = [e for e in engines if e not in known]
        if unknown:
            raise UserError(f"--engines: no specs for {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        specs = tuple(s for s in specs if set(s.engines) & set(engines))
    results = []
    for spec in specs:
        if spec.windowed:
            results.extend(spec.check(preset, window) for window in windows)
        else:
            results.append(spec.check(preset))
    return results
