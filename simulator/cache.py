"""Cache models. The byte-exact prefix cache is the reference every other model is checked against.

Reference rule (seed 001): a request is served from cache up to the longest common byte prefix
with ANY earlier request of the same family (:class:`~prefixbench.simulator.wire.Envelope`);
every request, once seen, becomes reusable; tokens are ``ceil(bytes / 4)``.

Implementation: per family, a trie over interned unit ids (see
:mod:`prefixbench.simulator.render`). Walking the trie finds the deepest run of whole shared
units in O(units); only the first unit that differs is compared byte by byte, against each
sibling seen at that depth. Because units are self-delimiting, this equals the longest common
byte prefix over all earlier requests of the family.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Protocol

import msgspec
from prefixbench.simulator.observe import Divergence
from prefixbench.simulator.render import RenderedRequest
from prefixbench.simulator.wire import Envelope

BYTES_PER_TOKEN = 4


def tokens_of(num_bytes: int) -> int:
    """Heuristic token count of a byte length: ``ceil(bytes / 4)``."""
    return -(-num_bytes // BYTES_PER_TOKEN)


def common_prefix_len(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of two byte strings (bisection over C compares)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class CacheVerdict(msgspec.Struct, frozen=True):
    """What a cache model says about one request."""

    prompt_tokens: int
    cached_tokens: int
    #: Newly stored tokens (a subset of the uncached ones); billed as writes where writes are billed.
    written_tokens: int
    divergence: Divergence | None = None
    #: The part of ``written_tokens`` stored with a long (1 h) TTL.
    written_long_tokens: int = 0
    #: The part of ``cached_tokens`` read from an explicit cache (priced at the explicit-read
    #: price where the provider has one: Qwen, Gemini ``CachedContent``).
    cached_explicit_tokens: int = 0
    #: Explicit-cache storage this request paid for: tokens x ms they are kept (Gemini).
    stored_token_ms: int = 0
    #: Tokens of an explicit cache the agent created beside this request (Gemini
    #: ``caches.create``: a call of its own, outside the prompt, billed at the input price).
    created_tokens: int = 0


class CacheModel(Protocol):
    """A provider-side cache: sees every accepted request once, in order.

    ``tick`` is the logical time (ms) the request is sent; ``ready_tick``, when given, is when
    its response begins, the earliest time its entries may serve a later request (Anthropic:
    parallel requests sent before the first response has begun all miss). Models that do not
    care ignore both.

    A model that also caches the model's reply defines :meth:`CachesOutput.observe_output`;
    the provider calls it right after the request, with the reply rendered as a message unit
    (a captured reply of several messages: once a message, each after the ones before it).
    """

    name: str

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Price one request against what is cached, then store it."""
        ...


class _Node(msgspec.Struct):
    children: dict[int, _Node] = msgspec.field(default_factory=dict)


class PrefixMatch(msgspec.Struct, frozen=True):
    """Longest byte prefix a request shares with earlier requests of its family."""

    cached_bytes: int
    total_bytes: int
    divergence: Divergence | None


class ByteExactCache:
    """The reference: longest common byte prefix with any earlier request of the same family."""

    name = "byte-exact"

    def __init__(self) -> None:
        self._roots: dict[Envelope, _Node] = {}
        self._unit_ids: dict[bytes, int] = {}
        self._unit_bytes: list[bytes] = []

    def _intern(self, data: bytes) -> int:
        unit_id = self._unit_ids.get(data)
        if unit_id is None:
            unit_id = len(self._unit_bytes)
            self._unit_ids[data] = unit_id
            self._unit_bytes.append(data)
        return unit_id

    def match(self, rendered: RenderedRequest, envelope: Envelope) -> PrefixMatch:
        """Longest shared byte prefix and the first divergent byte, without storing anything."""
        units = rendered.units
        node = self._roots.get(envelope)
        matched = 0
        depth = 0
        if node is not None:
            for unit in units:
                unit_id = self._unit_ids.get(unit.data)
                child = node.children.get(unit_id) if unit_id is not None else None
                if child is None:
                    break
                matched += len(unit.data)
                node = child
                depth += 1
        total = matched + sum(len(unit.data) for unit in units[depth:])
        if depth == len(units):
            return PrefixMatch(matched, total, None)
        unit = units[depth]
        partial = 0
        if node is not None:
            for sibling_id in node.children:
                partial = max(partial, common_prefix_len(unit.data, self._unit_bytes[sibling_id]))
        divergence = _locate(rendered, depth, partial, matched + partial)
        return PrefixMatch(matched + partial, total, divergence)

    def store(self, rendered: RenderedRequest, envelope: Envelope) -> None:
        """Make every prefix of this request reusable for its family."""
        node = self._roots.setdefault(envelope, _Node())
        for unit in rendered.units:
            unit_id = self._intern(unit.data)
            child = node.children.get(unit_id)
            if child is None:
                child = node.children[unit_id] = _Node()
            node = child

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Price against the longest shared prefix, then store: every new byte is written."""
        del tick, ready_tick  # the reference never expires anything and serves at once
        found = self.match(rendered, envelope)
        self.store(rendered, envelope)
        prompt = tokens_of(found.total_bytes)
        cached = tokens_of(found.cached_bytes)
        return CacheVerdict(prompt, cached, prompt - cached, found.divergence)


def _locate(rendered: RenderedRequest, unit_idx: int, unit_offset: int, byte_offset: int) -> Divergence:
    unit = rendered.units[unit_idx]
    if unit.kind != "message":
        return Divergence(unit.kind, None, None, byte_offset, unit_offset)
    block_idx = bisect_right(unit.block_starts, unit_offset) - 1
    return Divergence(
        "messages",
        unit_idx - rendered.first_message_unit,
        block_idx if block_idx >= 0 else None,
        byte_offset,
        unit_offset,
    )
