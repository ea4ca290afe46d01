"""Replay a request log through the simulated provider: one observation per request."""

from __future__ import annotations

from collections.abc import Iterable

from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.wire import Request


def replay(requests: Iterable[Request], cache: CacheModel | None = None) -> list[Observation]:
    """Send each request, in order, to a fresh simulated provider (one tick apart)."""
    provider = SimulatedProvider(cache=cache)
    for tick, request in enumerate(requests):
        provider.send(request, tick)
    return provider.observations
