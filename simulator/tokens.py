"""Token view of a rendered request: one byte stream, 4 bytes per token, that cache models compare.

::

    units     [tools][system][msg 0][msg 1] ... [msg k]
    stream    concatenation of each unit's token stream (tokenizer.py)
    token t   stream bytes [4t, 4t + 4); heuristic: a last, partial token (ceil)

Two requests share their first ``t`` tokens exactly when their streams share their first
``4t`` bytes, so a cache model finds shared tokens with byte comparisons (C speed) and turns a
shared byte depth ``d`` into ``tokens_at(d)`` whole tokens. For the heuristic, stream bytes are
rendered bytes and ``tokens_at`` is ``floor(d / 4)``, ``ceil`` once the whole request is in,
so prompt tokens equal the byte-exact reference's ``ceil(bytes / 4)``.
"""

from __future__ import annotations

import msgspec
from prefixbench.simulator.render import RenderedRequest, RenderedUnit
from prefixbench.simulator.tokenizer import STREAM_BYTES, Tokenizer


class TokenView(msgspec.Struct, frozen=True):
    """A request's token stream and where each of its units ends in it."""

    stream: bytes
    #: Stream offset just past each unit, in wire order.
    unit_ends: tuple[int, ...]

    @property
    def num_tokens(self) -> int:
        """Prompt tokens: ``ceil(len(stream) / 4)``."""
        return -(-len(self.stream) // STREAM_BYTES)

    def tokens_at(self, depth: int) -> int:
        """Whole tokens within the first ``depth`` stream bytes (all of them at the stream's end)."""
        if depth >= len(self.stream):
            return self.num_tokens
        return max(depth, 0) // STREAM_BYTES

    def depth_of(self, num_tokens: int) -> int:
        """Stream bytes of the first ``num_tokens`` tokens."""
        return min(max(num_tokens, 0) * STREAM_BYTES, len(self.stream))

    def extend(self, streams: tuple[bytes, ...]) -> TokenView:
        """This view followed by more units' streams (a reply appended to its request)."""
        ends = list(self.unit_ends)
        offset = len(self.stream)
        for stream in streams:
            offset += len(stream)
            ends.append(offset)
        return TokenView(self.stream + b"".join(streams), tuple(ends))


def token_view(rendered: RenderedRequest, tokenizer: Tokenizer) -> TokenView:
    """The token view of a rendered request."""
    streams = tokenizer.streams(tuple(unit.data for unit in rendered.units))
    ends: list[int] = []
    offset = 0
    for stream in streams:
        offset += len(stream)
        ends.append(offset)
    return TokenView(b"".join(streams), tuple(ends))


def reply_view(view: TokenView, reply: RenderedUnit, tokenizer: Tokenizer) -> TokenView:
    """The view of a request followed by the model's reply (the next request's likely prefix)."""
    return view.extend(tokenizer.streams((reply.data,)))


def tokens_within(rendered: RenderedRequest, tokenizer: Tokenizer, num_bytes: int) -> int:
    """Whole tokens of a request that lie within its first ``num_bytes`` rendered bytes.

    Converts a byte position (the reference's cached bytes, a divergence) into tokens at the
    tokenizer's granularity: whole units count all their tokens, the unit the position falls
    in counts the tokens that end before it.
    """
    streams = tokenizer.streams(tuple(unit.data for unit in rendered.units))
    total_bytes = rendered.num_bytes
    if num_bytes >= total_bytes:
        return -(-sum(len(stream) for stream in streams) // STREAM_BYTES)
    depth = 0  # stream bytes of the whole units before the position
    offset = 0  # rendered bytes of the same units
    for unit, stream in zip(rendered.units, streams):
        if offset + len(unit.data) > num_bytes:
            if tokenizer.is_bytewise:
                # The stream is the rendered bytes: the position maps to the same stream depth.
                return (depth + num_bytes - offset) // STREAM_BYTES
            return depth // STREAM_BYTES + tokenizer.tokens_within(unit.data, num_bytes - offset)
        offset += len(unit.data)
        depth += len(stream)
    return depth // STREAM_BYTES


class TokenizedModel:
    """Base of the token-based cache models: prompt tokens counted with the model's tokenizer."""

    tokenizer: Tokenizer

    def prompt_tokens(self, rendered: RenderedRequest) -> int:
        """Prompt tokens of a request under this model's tokenizer."""
        return token_view(rendered, self.tokenizer).num_tokens
