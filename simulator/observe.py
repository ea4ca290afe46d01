"""Observation: what one request cost, and where it first diverged from the cache."""

from __future__ import annotations

from typing import Literal

import msgspec
from prefixbench.simulator.wire import Envelope, Purpose

Section = Literal["tools", "system", "messages"]


class Divergence(msgspec.Struct, frozen=True):
    """The first byte of a request that no earlier request of its family shares.

    ``message_idx``/``block_idx`` locate it in the request's structure (``None`` when it sits in
    tools or system, or in a message's framing before its first block); ``byte_offset`` counts
    from the start of the rendered prompt and ``unit_offset`` from the start of that unit.
    """

    section: Section
    message_idx: int | None
    block_idx: int | None
    byte_offset: int
    unit_offset: int

    def describe(self) -> str:
        """E.g. ``message 12 block 1 @ byte 48213``."""
        match self.section:
            case "messages":
                where = f"message {self.message_idx}"
                if self.block_idx is not None:
                    where += f" block {self.block_idx}"
            case _:
                where = self.section
        return f"{where} @ byte {self.byte_offset}"


class Observation(msgspec.Struct, frozen=True):
    """One request as the simulated provider saw it.

    Token fields: ``cached_tokens`` is part of ``prompt_tokens``;
    ``uncached_tokens = prompt_tokens - cached_tokens``; ``written_tokens`` is the part of the
    uncached tokens the cache model newly stored (billed as a cache write by providers that bill
    writes, at the input price by the others).
    A rejected request (``status == 400``) has zero cached and written tokens and never
    enters the cache.
    """

    index: int
    purpose: Purpose
    envelope: Envelope
    max_tokens: int | None
    prompt_tokens: int
    cached_tokens: int
    written_tokens: int
    divergence: Divergence | None
    #: Same family as the previous conversation request and a strict byte extension of it.
    extends_previous_conversation: bool
    #: Durable rewrites (``checkpoint``, ``prune``, ...) the agent landed since the previous request.
    rewrites_since_previous: tuple[str, ...]
    tick: int = 0
    #: The part of ``written_tokens`` stored with a long (1 h) TTL.
    written_long_tokens: int = 0
    status: int = 200
    error: str | None = None
    output_tokens: int = 0
    #: The part of ``cached_tokens`` read from an explicit cache.
    cached_explicit_tokens: int = 0
    #: Explicit-cache storage paid by this request: tokens x ms (priced per token-hour).
    stored_token_ms: int = 0
    #: Tokens of an explicit cache created beside this request (outside the prompt; billed as input).
    created_tokens: int = 0

    @property
    def uncached_tokens(self) -> int:
        """Prompt tokens billed at the full input price."""
        return self.prompt_tokens - self.cached_tokens

    @property
    def hit_ratio(self) -> float:
        """Fraction of the prompt served from the cache (1.0 for an empty prompt)."""
        return 1.0 if self.prompt_tokens == 0 else self.cached_tokens / self.prompt_tokens

    @property
    def is_rejected(self) -> bool:
        """Whether the provider refused the request."""
        return rejected_status(self.status)


def rejected_status(status: int) -> bool:
    """Whether a request answered with HTTP ``status`` was refused by the provider: the one
    definition, for an :class:`Observation` (:attr:`Observation.is_rejected`) and for a stored
    observation's ``status`` column alike."""
    return status != 200
