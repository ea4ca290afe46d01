"""Where two request bodies first differ: the envelope field, tools, system, or message k block
b at a byte, with an excerpt. ``replay`` labels its divergence column with it and the audit
uses it as its ``body-diff`` evidence; the cause names are the audit's (:mod:`prefixbench.workloads.audit.causes`)."""

from __future__ import annotations

import msgspec
from prefixbench.simulator.cache import common_prefix_len
from prefixbench.simulator.render import RenderedRequest, render_request
from prefixbench.simulator.wire import Envelope, Request
from prefixbench.workloads.logs.billing_header import SWITCH, in_cch

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
            excerpt = f"{_quoted(_excerpt(old.data, offset))} -> {_quoted(_excerpt(new.data, offset))}"
            if old.kind == "message":
                block = sum(1 for end in old.block_ends if end <= offset)
                return BodyDiff("messages-changed", f"message {message_idx} block {block} @ byte {base + offset}: {excerpt}")
            cause = "tools-changed" if old.kind == "tools" else "system-changed"
            if old.kind == "system" and in_cch(old.data, offset):
                return BodyDiff(cause, f"system @ byte {base + offset}: Claude Code's billing header cch changed "
                                f"(it changes on every request; {SWITCH} drops it): {excerpt}")
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


def _quoted(text: str) -> str:
    """An excerpt of the rendered prompt in quotes, escaped once: the prompt is JSON text, whose
    strings already show a newline as ``\\n`` (``repr`` would escape its backslash again). A
    backslash the cut left alone at the end (half an escape) is dropped, so the closing quote
    never reads as escaped."""
    trailing = len(text) - len(text.rstrip("\\"))
    if trailing % 2:
        text = text[:-1]
    return f"'{text}'"


def divergence_label(before: Request | None, after: Request) -> str | None:
    """The cause label for ``replay``'s divergence column (None when ``after`` extends ``before``)."""
    if before is None:
        return None
    diff = body_diff(before, after)
    return None if diff is None else f"{diff.cause}: {diff.detail}"
