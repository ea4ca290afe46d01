"""Every spec the ``check`` command runs, and the runner."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Sequence

from prefixbench.simulator.errors import UserError, did_you_mean
from prefixbench.kernel.presets import get_preset
from prefixbench.simulator.windows import format_window
from prefixbench.workloads.specs import cache_integrity, reasoning
from prefixbench.workloads.specs.base import Spec, SpecResult


def all_specs() -> tuple[Spec, ...]:
    """All registered specs, in report order."""
    return (*cache_integrity.SPECS, *reasoning.SPECS)


def unknown_names(unknown: Sequence[str], known: Iterable[str]) -> str:
    """``--engines``' unknown names as its line lists them, each with the closest known name."""
    known = tuple(known)
    return ", ".join(f"{name} ({hint})" if (hint := did_you_mean(name, known)) else name for name in unknown)


def known_engines() -> tuple[str, ...]:
    """Engines some spec covers, in first-seen order."""
    return tuple(dict.fromkeys(e for s in all_specs() for e in s.engines))


def spec_cases(preset: str, windows: Sequence[int], engines: Sequence[str] | None = None) -> list[tuple[str, Callable[[], SpecResult]]]:
    """Each check :func:`run_specs` makes, in order: a label named as its result line names it
    (``spec @32k [engine/preset]``) and the call that runs it."""
    cases: list[tuple[str, Callable[[], SpecResult]]] = []
    for spec in all_specs():
        takes_engine = "engine" in inspect.signature(spec.check).parameters
        for engine in spec.engines:
            if engines is not None and engine not in engines:
                continue
            kwargs = {"engine": engine} if takes_engine else {}
            run = f"[{engine}/{preset}]"
            if spec.windowed:
                cases.extend((f"{spec.name} @{format_window(window)} {run}", functools.partial(spec.check, preset, window, **kwargs))
                             for window in windows)
            else:
                cases.append((f"{spec.name} {run}", functools.partial(spec.check, preset, **kwargs)))
    return cases


def run_specs(
    preset: str, windows: Sequence[int], engines: Sequence[str] | None = None,
    on_case: Callable[[str, bool], None] | None = None,
) -> list[SpecResult]:
    """Run every spec on ``preset`` for each of its engines (of ``engines``, when given);
    windowed specs once per window (the checks of :func:`spec_cases`). ``on_case(label, done)``
    is told when each starts (``done`` False) and ends (True), as
    :func:`~prefixbench.workloads.specs.engine.run_engine_specs` tells."""
    get_preset(preset, "--preset")
    if engines is not None:
        unknown = [e for e in engines if e not in known_engines()]
        if unknown:
            raise UserError(f"--engines: no specs for {unknown_names(unknown, known_engines())} (known: {', '.join(known_engines())})")
    results = []
    for label, check in spec_cases(preset, windows, engines):
        if on_case is not None:
            on_case(label, False)
        results.append(check())
        if on_case is not None:
            on_case(label, True)
    return results
