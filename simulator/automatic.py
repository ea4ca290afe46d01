"""Cache models of the providers that cache on their own: Gemini, xAI, Kimi, and the automatic
half of Qwen and MiniMax (their explicit half is :class:`MarkedCache`).

The rules and their defaults live in the provider modules (:mod:`prefixbench.simulator.providers`);
this module is the mechanism they share.

:class:`AutomaticCache` (``gemini``, ``xai``, ``kimi``):

* **Key.** An exact token prefix per request family and per *server*. With one server (every
  provider but xAI) that is the family's own tree.
* **Routing** (xAI). ``sticky``: a conversation (the family, tools, system and first message,
  what opens a lane in :mod:`prefixbench.simulator.provider`) always reaches the same server,
  picked by a hash; ``prefix``: a hash of the first 256 tokens picks it; ``random``: each
  request draws a server from a ``seed``-ed generator, so a request routed elsewhere than the
  one holding its prefix misses.
* **Eviction** (xAI). Before a request, its server loses everything with probability
  ``evict_p`` (the same seeded generator); 0 by default.
* **Hit.** The longest prefix shared with what the server stores, in whole ``block`` steps
  (the model's own where ``block_by_model`` names it: Gemini 3 Flash's checkpoints), 0 below ``min_tokens`` (the model's minimum: per model from a table, or one value). A prompt
  under the minimum is neither read nor stored.
* **Write.** The prompt is stored; ``written_tokens`` = prompt - cached (billed at a write price
  only where the price row has one).
* **Lifetime.** ``ttl_ms`` idle (a read refreshes), or none.
* **Output** (``cache_output``, off by default; Z.AI's ``zai`` turns it on). The model's reply
  is stored after its prompt as it is produced (``observe_output``), so a next prompt that
  sends it back as the model wrote it (its reasoning included) reads into it; a prompt that
  sends it back otherwise reads as far as the two agree.

:class:`MarkedCache` (``qwen``, ``minimax``): a request carrying ``cache_control`` markers is
explicit, one without is implicit, never both (``mode=per-request``); ``mode=explicit`` marks an
unmarked request at its last block (an agent that caches), ``mode=implicit`` ignores markers.

* **Explicit.** Entries end only at markers (at most 4 a request; more are ignored). A marker
  reads the deepest stored entry that ends at one of the ``lookback`` block boundaries up to
  it (its own included) and lies within the shared prefix; a read under ``explicit_min`` is 0.
  Each marker at or above the minimum stores its prefix; ``written_tokens`` = tokens up to the
  last marker - cached; entries live ``explicit_ttl_ms`` idle, reset by a hit.
  Its reads are ``cached_explicit_tokens``: priced at the explicit-read price (Qwen 0.1x,
  against 0.2x for an implicit read) where the price row has one.
* **Implicit.** An :class:`AutomaticCache` of its own, so the two never read each other;
  its writes bill as input (``written_tokens`` 0) unless ``implicit_writes_billed``.

Every read lies within the byte-exact reference's shared prefix: no model here reads more than
the reference would serve (``tests/property/test_cache_models.py``).
"""

from __future__ import annotations

import hashlib
import random
from typing import Literal, get_args

from prefixbench.simulator.cache import CacheVerdict
from prefixbench.simulator.checks import is_positive_int
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.prefix_tree import PrefixTree
from prefixbench.simulator.providers.base import per_model
from prefixbench.simulator.render import RenderedBreakpoint, RenderedRequest, RenderedUnit, last_cacheable_block
from prefixbench.simulator.tokenizer import STREAM_BYTES, Tokenizer, make_tokenizer
from prefixbench.simulator.tokens import TokenView, TokenizedModel, reply_view, token_view
from prefixbench.simulator.wire import Envelope

Routing = Literal["sticky", "prefix", "random"]
MarkMode = Literal["per-request", "explicit", "implicit"]
#: Tokens the ``prefix`` routing hashes (OpenAI's documented ~256; xAI publishes none).
ROUTE_TOKENS = 256
#: Explicit markers a request may carry.
MAX_MARKERS = 4

__all__ = ["AutomaticCache", "MarkedCache"]


class AutomaticCache(TokenizedModel):
    """Automatic exact-prefix caching: block steps, a minimum, N servers and a routing rule."""

    def __init__(
        self,
        *,
        name: str = "automatic",
        tokenizer: str | Tokenizer | None = None,
        block: int = 1,
        block_by_model: tuple[tuple[str, int], ...] = (),
        min_tokens: int | None = 0,
        min_by_model: tuple[tuple[str, int], ...] = (),
        min_default: int = 0,
        ttl_ms: int | None = None,
        servers: int = 1,
        routing: Routing = "sticky",
        evict_p: float = 0.0,
        seed: int = 0,
        cache_output: bool = False,
    ) -> None:
        """Args:
        name: the ``--cache`` name, for messages and reports.
        block: step a read counts in (tokens).
        block_by_model: ``(regex, tokens)``: the step of the models a row names (first match wins).
        min_tokens: one minimum for every model; None uses ``min_by_model`` (0 where no row matches).
        min_by_model: ``(regex, tokens)`` rows searched in the model name, first match wins.
        min_default: the minimum of a model no row matches.
        ttl_ms: idle lifetime of an entry (None: kept).
        servers: servers a request may be routed to; each has its own cache.
        routing: ``sticky``, ``prefix`` or ``random`` (see the module doc).
        evict_p: chance that a request's server has lost everything before it.
        seed: seed of the ``random`` routing and eviction draws.
        cache_output: store each reply after its prompt (see the module doc).

        Raises:
            UserError: a bad option, naming it.
        """
        self.name = name
        if not is_positive_int(block):
            raise UserError(f"{name}: block must be a positive integer (tokens), got {block!r}")
        if min_tokens is not None and (isinstance(min_tokens, bool) or not isinstance(min_tokens, int) or min_tokens < 0):
            raise UserError(f"{name}: min_tokens must be a non-negative integer, got {min_tokens!r}")
        if ttl_ms is not None and not is_positive_int(ttl_ms):
            raise UserError(f"{name}: ttl_ms must be a positive integer (ms), got {ttl_ms!r}")
        if not is_positive_int(servers) or servers > 4096:
            raise UserError(f"{name}: servers must be an integer from 1 to 4096, got {servers!r}")
        if routing not in get_args(Routing):
            raise UserError(f"{name}: routing must be one of {', '.join(get_args(Routing))}, got {routing!r}")
        if isinstance(evict_p, bool) or not isinstance(evict_p, (int, float)) or not 0 <= evict_p <= 1:
            raise UserError(f"{name}: evict_p must be a probability from 0 to 1, got {evict_p!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise UserError(f"{name}: seed must be an integer, got {seed!r}")
        if not isinstance(cache_output, bool):
            raise UserError(f"{name}: cache_output must be true or false, got {cache_output!r}")
        self.tokenizer = make_tokenizer(tokenizer)
        self.cache_output = cache_output
        self.block = block
        self.block_by_model = block_by_model
        self.min_tokens = min_tokens
        self.min_by_model = min_by_model
        self.min_default = min_default
        self.ttl_ms = ttl_ms
        self.servers = servers
        self.routing: Routing = routing
        self.evict_p = float(evict_p)
        self._random = random.Random(seed)
        self._trees: dict[tuple[Envelope, int], PrefixTree] = {}
        #: The family and server of the request observed last and its token view, where it was
        #: stored (its reply goes after it, on the same server, without tokenizing it again).
        self._pending: tuple[tuple[Envelope, int], TokenView] | None = None

    def minimum(self, model: str) -> int:
        """The shortest prefix ``model`` caches."""
        if self.min_tokens is not None:
            return self.min_tokens
        return per_model(self.min_by_model, self.min_default, model.lower())

    def step(self, model: str) -> int:
        """The step ``model``'s reads count in."""
        return per_model(self.block_by_model, self.block, model.lower())

    def server_of(self, rendered: RenderedRequest, envelope: Envelope, view: TokenView) -> int:
        """The server the request is routed to."""
        if self.servers == 1:
            return 0
        match self.routing:
            case "random":
                return self._random.randrange(self.servers)
            case "prefix":
                key = view.stream[: ROUTE_TOKENS * STREAM_BYTES]
            case "sticky":
                opening = rendered.units[: rendered.first_message_unit + 1]
                key = b"\0".join((envelope.label().encode(), *(unit.data for unit in opening)))
        return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % self.servers

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Read the longest stored prefix on the request's server, then store the prompt there."""
        del ready_tick  # no in-flight rule is documented
        return self.observe_view(rendered, token_view(rendered, self.tokenizer), envelope, tick)

    def observe_view(self, rendered: RenderedRequest, view: TokenView, envelope: Envelope, tick: int) -> CacheVerdict:
        """:meth:`observe` on a token view already made."""
        key = (envelope, self.server_of(rendered, envelope, view))
        self._pending = None
        if self.evict_p and self._random.random() < self.evict_p:
            self._trees.pop(key, None)
        tree = self._trees.setdefault(key, PrefixTree())
        prompt = view.num_tokens
        minimum = self.minimum(envelope.model)
        if prompt < max(minimum, 1):
            return CacheVerdict(prompt, 0, 0)
        stale_tick = None if self.ttl_ms is None else tick - self.ttl_ms
        found = tree.match(view.stream, stale_tick=stale_tick)
        step = self.step(envelope.model) if self.block_by_model else self.block
        cached = view.tokens_at(found.depth) // step * step
        if cached < minimum:
            cached = 0
        tree.insert(view.stream, tick, stale_tick=stale_tick)
        if self.cache_output:
            self._pending = (key, view)
        return CacheVerdict(prompt, cached, prompt - cached)

    def observe_output(self, rendered: RenderedRequest, envelope: Envelope, reply: RenderedUnit, tick: int) -> None:
        """Store the reply after its prompt (prompt + reply) on the server the prompt, observed
        just before, went to; with ``cache_output`` only. A prompt under the minimum stored
        nothing, and neither does its reply."""
        del rendered
        pending, self._pending = self._pending, None
        if pending is None or pending[0][0] != envelope:
            return
        key, prompt = pending
        tree = self._trees.setdefault(key, PrefixTree())
        view = reply_view(prompt, reply, self.tokenizer)
        tree.insert(view.stream, tick, stale_tick=None if self.ttl_ms is None else tick - self.ttl_ms)


class MarkedCache(TokenizedModel):
    """Explicit ``cache_control`` markers or automatic caching, one mode a request."""

    def __init__(
        self,
        *,
        name: str = "marked",
        tokenizer: str | Tokenizer | None = None,
        mode: MarkMode = "per-request",
        explicit_min: int = 1024,
        lookback: int = 20,
        explicit_ttl_ms: int = 5 * 60_000,
        implicit_min: int = 1024,
        implicit_ttl_ms: int | None = None,
        implicit_writes_billed: bool = False,
    ) -> None:
        """Args:
        mode: ``per-request``, ``explicit`` or ``implicit`` (see the module doc).
        explicit_min: shortest explicit entry (tokens).
        lookback: block boundaries a marker checks, its own included.
        explicit_ttl_ms: idle lifetime of an explicit entry, reset by a hit.
        implicit_min, implicit_ttl_ms: the implicit cache's minimum and lifetime.
        implicit_writes_billed: an implicit write is billed as a write (else, as the provider
            documents for implicit caching, as input: ``written_tokens`` is 0).

        Raises:
            UserError: a bad option, naming it.
        """
        self.name = name
        if mode not in get_args(MarkMode):
            raise UserError(f"{name}: mode must be one of {', '.join(get_args(MarkMode))}, got {mode!r}")
        if isinstance(explicit_min, bool) or not isinstance(explicit_min, int) or explicit_min < 0:
            raise UserError(f"{name}: explicit_min must be a non-negative integer, got {explicit_min!r}")
        if not is_positive_int(lookback):
            raise UserError(f"{name}: lookback must be a positive integer, got {lookback!r}")
        if not is_positive_int(explicit_ttl_ms):
            raise UserError(f"{name}: explicit_ttl_ms must be a positive integer (ms), got {explicit_ttl_ms!r}")
        self.tokenizer = make_tokenizer(tokenizer)
        self.mode: MarkMode = mode
        self.explicit_min = explicit_min
        self.lookback = lookback
        self.explicit_ttl_ms = explicit_ttl_ms
        self.implicit_writes_billed = implicit_writes_billed
        self.implicit = AutomaticCache(
            name=name, tokenizer=self.tokenizer, min_tokens=implicit_min, ttl_ms=implicit_ttl_ms
        )
        self._trees: dict[Envelope, PrefixTree] = {}

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Price the request in its one mode, then store it in that mode's cache."""
        del ready_tick
        view = token_view(rendered, self.tokenizer)
        markers = self.markers(rendered)
        if not markers:
            verdict = self.implicit.observe_view(rendered, view, envelope, tick)
            return verdict if self.implicit_writes_billed else CacheVerdict(verdict.prompt_tokens, verdict.cached_tokens, 0)
        return self._explicit(rendered, view, envelope, tick, markers)

    def markers(self, rendered: RenderedRequest) -> tuple[tuple[int, int], ...]:
        """(unit, block) of each marker the request is priced with, in prompt order (empty: implicit)."""
        if self.mode == "implicit":
            return ()
        found = tuple((bp.unit_idx, bp.block_idx) for bp in rendered.breakpoints)[:MAX_MARKERS]
        if not found and self.mode == "explicit":
            last = last_cacheable_block(rendered.units)
            return () if last is None else (last,)
        return found

    def _explicit(
        self, rendered: RenderedRequest, view: TokenView, envelope: Envelope, tick: int, markers: tuple[tuple[int, int], ...]
    ) -> CacheVerdict:
        tree = self._trees.setdefault(envelope, PrefixTree())
        stale_tick = tick - self.explicit_ttl_ms
        found = tree.match(view.stream, stale_tick=stale_tick)
        boundaries = _block_boundaries(rendered, view, self.tokenizer)
        stored = {node.depth for node in found.path if node.mark_seq}
        prompt = view.num_tokens
        cached = 0
        ends = []
        for unit_idx, block_idx in markers:
            end = boundaries[(unit_idx, block_idx)]
            ends.append(end)
            candidates = sorted(depth for depth in boundaries.values() if depth <= end)[-self.lookback :]
            hits = [depth for depth in candidates if depth in stored and depth <= found.depth]
            if hits:
                cached = max(cached, view.tokens_at(max(hits)))
        if cached < self.explicit_min:
            cached = 0
        written_to = 0
        for end in ends:
            if view.tokens_at(end) >= self.explicit_min:
                tree.mark(tree.insert(view.stream[:end], tick, stale_tick=stale_tick))
                written_to = max(written_to, view.tokens_at(end))
        # Every read here is explicit: priced at the row's explicit-read price where it has one (Qwen 0.1x).
        return CacheVerdict(prompt, cached, max(written_to - cached, 0), cached_explicit_tokens=cached)


def _block_boundaries(rendered: RenderedRequest, view: TokenView, tokenizer: Tokenizer) -> dict[tuple[int, int], int]:
    """Stream depth just past each block of each unit, by (unit, block)."""
    found: dict[tuple[int, int], int] = {}
    start = 0
    for unit_idx, (unit, unit_end) in enumerate(zip(rendered.units, view.unit_ends)):
        for block_idx, block_end in enumerate(unit.block_ends):
            if block_end >= len(unit.data):
                depth = unit_end
            elif tokenizer.is_bytewise:
                depth = start + block_end
            else:
                depth = start + tokenizer.tokens_within(unit.data, block_end) * STREAM_BYTES
            found[(unit_idx, block_idx)] = depth
        start = unit_end
    return found
