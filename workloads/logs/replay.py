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
    conversation: Request | None = None  # the latest request that is not a compaction call
    for tick, request in enumerate(requests):
        in_lane = provider.previous_in_lane(request)
        before = in_lane or previous
        observation = provider.send(request, tick)
        label = None
        if before is not None and observation.divergence is not None:
            if in_lane is None and previous is not None and previous.purpose == "compaction" and request.purpose != "compaction":
                label = _after_checkpoint(tick, conversation, request)
            else:
                diff = body_diff(before, request)
                label = None if diff is None else (diff.cause, diff.detail)
        labels.append(label)
        previous = request
        if request.purpose != "compaction":
            conversation = request
    return provider.observations, labels


def _after_checkpoint(index: int, conversation: Request | None, request: Request) -> tuple[str, str]:
    """The label of the first request after a compaction call: it opens the compacted context.

    It is compared with the conversation before the call, not with the call itself (whose own
    family, e.g. a summary effort, is not what changed for this request).
    """
    said = f"first request after the compaction call #{index - 1}: the history restarts from its summary"
    diff = None if conversation is None else body_diff(conversation, request)
    return "compaction", said if diff is None else f"{said} ({diff.cause}: {diff.detail})"


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
