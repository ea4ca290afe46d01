"""Replay a request log through the simulated provider: one observation per request."""

from __future__ import annotations

from collections.abc import Iterable

from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.wire import Request
from prefixbench.workloads.logs.bodydiff import body_diff


def replay(requests: Iterable[Request], cache: CacheModel | None = None) -> list[Observation]:
    """Send each request, in order, to a fresh simulated provider (one tick apart)."""
    provider = SimulatedProvider(cache=cache)
    for tick, request in enumerate(requests):
        provider.send(request, tick)
    return provider.observations


def replay_labelled(
    requests: Iterable[Request], cache: CacheModel | None = None
) -> tuple[list[Observation], list[tuple[str, str] | None]]:
    """:func:`replay` and :func:`divergence_labels` in one streamed pass (no request is kept).

    A request is compared with the previous request of its own conversation (lane, see
    :class:`~prefixbench.simulator.provider.SimulatedProvider`), or with the line before it
    when it opens a conversation: in an interleaved log the line before belongs to another
    session, and a change of effort or system prompt opens a new lane.
    """
    provider = SimulatedProvider(cache=cache)
    labels: list[tuple[str, str] | None] = []
    previous: Request | None = None
    for tick, request in enumerate(requests):
        before = provider.previous_in_lane(request) or previous
        observation = provider.send(request, tick)
        label = None
        if before is not None and observation.divergence is not None:
            diff = body_diff(before, request)
            label = None if diff is None else (diff.cause, diff.detail)
        labels.append(label)
        previous = request
    return provider.observations, labels


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
