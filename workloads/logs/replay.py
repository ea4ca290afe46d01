"""Replay a request log through the simulated provider: one observation per request."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.provider import SimulatedProvider, Validator
from prefixbench.simulator.wire import Block, Request
from prefixbench.workloads.logs.bodydiff import body_diff


def replay(requests: Iterable[Request], cache: CacheModel | None = None) -> list[Observation]:
    """Send each request, in order, to a fresh simulated provider (one tick apart)."""
    provider = SimulatedProvider(cache=cache)
    for tick, request in enumerate(requests):
        provider.send(request, tick)
    return provider.observations


def reply_in(sent: Request, later: Request) -> tuple[Block, ...]:
    """The reply to conversation request ``sent`` as ``later`` (the next conversation request)
    sends it back: its first new message, when ``later`` extends ``sent`` and that message is
    the assistant's; else none (a log holds requests, not replies)."""
    messages, before = later.messages, sent.messages
    if len(messages) > len(before) and messages[: len(before)] == before and messages[len(before)].role == "assistant":
        return messages[len(before)].blocks
    return ()


def _replies_learned(requests: Iterable[Request], validator: Validator) -> Iterator[tuple[int, Request]]:
    """``(tick, request)`` in send order, the validator taught the reply to each conversation
    request before any later request is sent (a strict provider holds replayed reasoning to
    what the model emitted). The reply is read from the next conversation request, so the
    requests between the two (compaction calls) wait for it: only they are held, not the log."""
    last: Request | None = None  # the latest conversation request sent, its reply not yet learned
    held: list[tuple[int, Request]] = []
    for tick, request in enumerate(requests):
        if request.purpose != "conversation":
            if last is None:
                yield tick, request
            else:
                held.append((tick, request))
            continue
        if last is not None:
            validator.accepted(last, reply_in(last, request))
            yield from held
            held.clear()
        yield tick, request
        last = request
    yield from held


def replay_labelled(
    requests: Iterable[Request], cache: CacheModel | None = None, validator: Validator | None = None,
    unpaired: list[int] | None = None,
) -> tuple[list[Observation], list[tuple[str, str] | None]]:
    """:func:`replay` and :func:`divergence_labels` in one streamed pass (no request is kept).

    A request is compared with the previous request of its own conversation (lane, see
    :class:`~prefixbench.simulator.provider.SimulatedProvider`), or with the line before it
    when it opens a conversation: in an interleaved log the line before belongs to another
    session, and a change of effort or system prompt opens a new lane.

    ``validator`` (a strict provider profile, :func:`prefixbench.simulator.validate.make_validator`)
    refuses requests as ``check --trace --profile`` does: a refused request's observation has
    status 400 and its reason, never cached tokens. Without one, every request is replayed as
    the endpoint accepted it; ``unpaired``, when given, collects the index of each request whose
    tool calls and results do not pair up, which ``check --trace`` refuses under every profile.
    """
    from prefixbench.simulator.validate import pairing_problem

    provider = SimulatedProvider(cache=cache, validator=validator)
    labels: list[tuple[str, str] | None] = []
    previous: Request | None = None
    conversation: Request | None = None  # the latest request that is not a compaction call
    sending = enumerate(requests) if validator is None else _replies_learned(requests, validator)
    for tick, request in sending:
        in_lane = provider.previous_in_lane(request)
        before = in_lane or previous
        if validator is None and unpaired is not None and pairing_problem(request.messages) is not None:
            unpaired.append(tick)
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
