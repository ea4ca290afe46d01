"""The closed set of miss causes, their evidence levels, and the exact body diff.

Every miss or partial hit gets exactly one cause from :data:`CAUSES`, decided by the strongest
evidence the log offers (:data:`EVIDENCE`, strongest first):

1. ``diagnostic``: the provider's own cache diagnostic (Anthropic's labels);
2. ``body-diff``: the request bodies of the call and of the lane's previous call differ at an
   exact place (envelope field, tools, system, message k block b, byte), shown with an excerpt;
3. ``log``: inferred from what the log records (timestamps, events, usage);
4. ``none``: nothing decides it (cause ``unexplained``, with the reason the log cannot tell).

Anthropic's diagnostic labels are used where they apply (``model-changed``,
``system-changed``, ``tools-changed``, ``messages-changed``, ``previous-message-not-found``),
so predicted and server-reported causes can be scored against each other.
"""

from __future__ import annotations

import msgspec
from prefixbench.simulator.cache import common_prefix_len
from prefixbench.simulator.render import RenderedRequest, render_request
from prefixbench.simulator.wire import Envelope, Request

#: Every cause a request can carry, with what it means (README and --help list these).
CAUSES: dict[str, str] = {
    "cold-start": "first use of a prefix nobody had cached yet: unavoidable",
    "concurrent-write": "sent while the entry it needed was still being written (parallel starts)",
    "ttl-expired": "idle longer than the entry's TTL (5 m / 1 h) since it was last used",
    "model-changed": "another model: nothing cached under the old one is readable",
    "effort-changed": "new request family: reasoning effort / thinking setting changed",
    "system-changed": "the system prompt changed",
    "tools-changed": "the tool definitions changed",
    "messages-changed": "an earlier message changed (or the read stopped at the head)",
    "previous-message-not-found": "the provider could not find the previous message (diagnostic)",
    "compaction": "the agent compacted its context: a new conversation after the head",
    "resume": "a resumed or forked session re-sent its history",
    "below-minimum": "prefix shorter than the model's minimum cacheable length",
    "breakpoint-placement": "the cached entry was beyond the breakpoint's 20-block lookback",
    "provider-best-effort": "the provider missed on its own (OpenAI routing, best-effort caches): not the agent's doing",
    "unexplained": "nothing in the log explains it (the detail says why the log cannot tell)",
}
EVIDENCE: tuple[str, ...] = ("diagnostic", "body-diff", "log", "none")
#: Anthropic's diagnostic labels -> our causes.
DIAGNOSTIC_CAUSES: dict[str, str] = {
    "model_changed": "model-changed",
    "system_changed": "system-changed",
    "tools_changed": "tools-changed",
    "messages_changed": "messages-changed",
    "previous_message_not_found": "previous-message-not-found",
}
EXCERPT_CHARS = 40


class BodyDiff(msgspec.Struct, frozen=True):
    """Where two request bodies first differ."""

    cause: str
    detail: str


def envelope_change(before: Envelope, after: Envelope) -> BodyDiff | None:
    """A change of request family, named: ``new request family: reasoning_effort high -> max``."""
    if before.provider != after.provider or before.model != after.model:
        return BodyDiff("model-changed", f"model {before.provider}/{before.model} -> {after.provider}/{after.model}")
    for name in ("reasoning_effort", "temperature", "stop"):
        old, new = getattr(before, name), getattr(after, name)
        if old != new:
            cause = "effort-changed"
            return BodyDiff(cause, f"new request family: {name} {_show(old)} -> {_show(new)}")
    return None


def _show(value: object) -> str:
    return "default" if value is None else str(value)


def body_diff(before: Request, after: Request) -> BodyDiff | None:
    """The first place ``after`` stops extending ``before``: envelope, tools, system or message.

    None when ``after`` sends every byte of ``before`` first (the prompt only grew).
    """
    changed = envelope_change(before.envelope, after.envelope)
    if changed is not None:
        return changed
    return rendered_diff(render_request(before), render_request(after))


def rendered_diff(before: RenderedRequest, after: RenderedRequest) -> BodyDiff | None:
    """The first differing unit of two rendered prompts, with a before/after excerpt."""
    message_idx = 0
    base = 0  # bytes of the prompt before this unit (offsets are from the prompt's start)
    for old, new in zip(before.units, after.units):
        if old.data != new.data:
            offset = _common(old.data, new.data)
            excerpt = f"{_excerpt(old.data, offset)!r} -> {_excerpt(new.data, offset)!r}"
            if old.kind == "message":
                block = sum(1 for end in old.block_ends if end <= offset)
                return BodyDiff("messages-changed", f"message {message_idx} block {block} @ byte {base + offset}: {excerpt}")
            cause = "tools-changed" if old.kind == "tools" else "system-changed"
            return BodyDiff(cause, f"{old.kind} @ byte {base + offset}: {excerpt}")
        if old.kind == "message":
            message_idx += 1
        base += len(old.data)
    if len(after.units) < len(before.units):
        return BodyDiff("messages-changed", f"{len(before.units) - len(after.units)} trailing unit(s) removed")
    return None


def _common(a: bytes, b: bytes) -> int:
    return common_prefix_len(a, b)


def _excerpt(data: bytes, offset: int) -> str:
    return data[offset : offset + EXCERPT_CHARS].decode("utf-8", errors="replace")


def divergence_label(before: Request | None, after: Request) -> str | None:
    """The cause label for ``replay``'s divergence column (None when ``after`` extends ``before``)."""
    if before is None:
        return None
    diff = body_diff(before, after)
    return None if diff is None else f"{diff.cause}: {diff.detail}"
