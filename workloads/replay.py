"""Replay a request log through the simulated provider: one observation per request."""

from __future__ import annotations

from collections.abc import Iterable

from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.wire import Request
from prefixbench.workloads.audit.causes import body_diff


def replay(requests: Iterable[Request], cache: CacheModel | None = None) -> list[Observation]:
    """Send each request, in order, to a fresh simulated provider (one tick apart)."""
    provider = SimulatedProvider(cache=cache)
    for tick, request in enumerate(requests):
        provider.send(request, tick)
    return provider.observations


def divergence_labels(requests: Iterable[Request], observations: list[Observation]) -> list[tuple[str, str] | None]:
    """The audit's cause label for each request that diverged, against the request before it.

    ``(cause, detail)``, e.g. ``("effort-changed", "new request family: reasoning_effort high -> max")``
    where the byte-exact divergence alone says ``system @ byte 0``; None for a request that did
    not diverge, or whose divergence is only new content after everything the previous request sent.
    """
    labels: list[tuple[str, str] | None] = []
    previous: Request | None = None
    for request, observation in zip(requests, observations):
        label = None
        if previous is not None and observation.divergence is not None:
            diff = body_diff(previous, request)
            label = None if diff is None else (diff.cause, diff.detail)
        labels.append(label)
        previous = request
    return labels
