"""The ``openai`` cache model: automatic exact-prefix caching, before and since GPT-5.6.

Rules (OpenAI's prompt caching guide,
https://developers.openai.com/api/docs/guides/prompt-caching, and its Azure copy,
https://learn.microsoft.com/azure/foundry/openai/how-to/prompt-caching; the numbers live in
:mod:`prefixbench.simulator.providers.openai`):

* **Key.** An exact token prefix, per request family (:class:`~prefixbench.simulator.wire.Envelope`)
  and per machine.
* **Routing** (the guide [O]). A request goes to a machine picked by a hash of its first
  ``ROUTE_TOKENS`` (~256) tokens, combined with its ``prompt_cache_key`` when it sends one; the
  cache lives on that machine. When one (prefix, key) pair sends more than ``overflow_rpm``
  (~15) requests a minute, the rest overflow to other machines, where their prefix is not
  cached. The fleet's size is not published, so ``servers=1`` (the default) models one machine:
  no routing miss, no overflow, the numbers of earlier versions. With ``servers=N``:
  ``routing=key`` (the default: the agent sends a conversation id as ``prompt_cache_key``, as
  Codex does; the conversation is what opens a lane, its family, tools, system and first
  message) or ``routing=prefix`` (no key: every conversation with the same first 256 tokens
  shares one machine, and its overflow budget). An overflowing request goes to the next
  machine in turn after its home one (deterministic), reads what that machine holds and
  writes there.
* **mode='pre-5.6'** (models before GPT-5.6): a request reuses its longest prefix shared with
  any live earlier request, reported as 0 below ``MIN_TOKENS`` (1024) and in ``INCREMENT``
  (128) token steps above it: ``1024 + floor((shared - 1024) / 128) * 128``. Prompts under
  1024 tokens are neither read nor stored. No write fee: ``written_tokens`` is the newly
  stored cacheable part (up to the prompt's own 128-step boundary).
* **mode='5.6'** (GPT-5.6 and later): entries live only at breakpoints. The implicit one sits
  on the latest message, i.e. the end of the prompt (explicit ``prompt_cache_breakpoint``
  markers are not modelled: the wire has none). A request reads the deepest stored
  breakpoint that is a prefix of it, exactly (no 128 rounding), never an unmarked shorter
  prefix; only the latest ``lookback`` (50, the guide; the API reference says 80) breakpoints
  written for the family can be read. A breakpoint needs ``MIN_TOKENS`` before it, so a
  prompt under 1024 tokens neither reads nor writes. Writes are billed (1.25x):
  ``written_tokens`` = prompt - cached when the breakpoint is stored.
* **Retention** on the logical clock, idle time measured from an entry's last use (a read or
  a re-send refreshes it), decided per request
  (:func:`prefixbench.simulator.providers.openai.retention`): the lifetime the body asks for
  (``Request.retention``: ``prompt_cache_retention``, or GPT-5.6's ``prompt_cache_options.ttl``)
  where the model offers it, else the model's documented default (``24h`` on a model offering
  extended retention, unless ``zdr``; ``in_memory`` elsewhere; ``30m`` on GPT-5.6 and later;
  the body of a log replayed by the audit carries the default at its send time, which was
  ``in_memory`` before 2026-06-01). ``in_memory`` keeps an entry ``IN_MEMORY_TTL_MS`` = 10 min
  (the guide: 5 to 10 minutes of inactivity, at most one hour; the upper end, measured in Codex
  rollouts, is what every prefixbench model uses, the chain model and the audit included),
  ``24h`` keeps it 24 h, ``30m`` (a minimum lifetime) 30 min, ``12h`` (GPT-6.2 Sol, where the
  body asks it) 12 h. The ``retention`` option forces
  one policy on every pre-5.6 request; ``ttl_ms`` overrides every lifetime. An entry is judged
  by the lifetime of the request that reads it (one conversation keeps one model and one policy,
  so this is the lifetime it was written with); an entry idle for that long or longer is gone.
* **Output** (``cache_output``, pre-5.6 only; off by default, so sweeps keep their numbers;
  the audit turns it on from ``ProviderRules.caches_output``). The cache also keeps a
  response's tokens after its prompt (``observe_output``), so a next prompt that sends the
  response back reads into it, in the same 128-token steps, as far as it holds the response
  byte for byte. Measured on Codex traffic (the provider rules' module), no OpenAI page says
  so. 5.6 stores entries only at breakpoints, and the end of a response is none it documents.
"""

from __future__ import annotations

import hashlib
from collections import deque
from typing import Literal, assert_never, get_args

from prefixbench.simulator.checks import is_positive_int
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.cache import CacheVerdict
from prefixbench.simulator.prefix_tree import PrefixTree, TreeMatch
from prefixbench.simulator.providers.openai import (
    BREAKPOINT_TTL_MS,
    EXTENDED_TTL_MS,
    IN_MEMORY_TTL_MS,
    INCREMENT,
    LOOKBACK,
    MIN_TOKENS,
    TWELVE_HOUR_TTL_MS,
    retention as model_retention,
)
from prefixbench.simulator.render import RenderedRequest, RenderedUnit
from prefixbench.simulator.tokenizer import STREAM_BYTES, Tokenizer, make_tokenizer
from prefixbench.simulator.tokens import TokenView, TokenizedModel, reply_view, token_view
from prefixbench.simulator.wire import Envelope

OpenAIMode = Literal["pre-5.6", "5.6"]
Retention = Literal["in_memory", "24h"]
KeyRouting = Literal["key", "prefix"]
#: Tokens the routing hash reads (the guide: "typically the first 256 tokens").
ROUTE_TOKENS = 256
#: Requests a minute one (prefix, key) pair may send before some overflow (the guide: ~15).
OVERFLOW_RPM = 15
_MINUTE_MS = 60_000

__all__ = ["BREAKPOINT_TTL_MS", "EXTENDED_TTL_MS", "IN_MEMORY_TTL_MS", "INCREMENT", "LOOKBACK", "MIN_TOKENS", "OpenAICache"]



class OpenAICache(TokenizedModel):
    """OpenAI automatic prompt caching (pre-5.6 rounding, or 5.6 breakpoints) with idle retention."""

    name = "openai"

    def __init__(
        self,
        *,
        tokenizer: str | Tokenizer | None = None,
        mode: OpenAIMode = "pre-5.6",
        retention: Retention | None = None,
        ttl_ms: int | None = None,
        lookback: int = LOOKBACK,
        servers: int = 1,
        routing: KeyRouting = "key",
        overflow_rpm: int | None = OVERFLOW_RPM,
        cache_output: bool = False,
        zdr: bool = False,
    ) -> None:
        """Args:
        mode: ``pre-5.6`` (1024 then 128-token steps) or ``5.6`` (implicit breakpoint, billed writes).
        retention: ``in_memory`` or ``24h`` for every request (pre-5.6 only); None (default):
            per request, the body's where the model offers it, else the model's default.
        ttl_ms: idle lifetime of an entry in logical ms, overriding every request's.
        lookback: latest breakpoints a 5.6 read considers.
        servers: machines a request may be routed to (1: routing not modelled).
        routing: ``key`` (a ``prompt_cache_key`` per conversation) or ``prefix`` (none sent).
        overflow_rpm: requests a minute of one (prefix, key) pair before the rest overflow
            to other machines; None: no overflow.
        cache_output: keep each response's tokens after its prompt (``observe_output``; pre-5.6).
        zdr: the organization has Zero Data Retention (a model offering both policies defaults
            to ``in_memory``).

        Raises:
            UserError: a bad option, naming it.
        """
        if mode not in get_args(OpenAIMode):
            raise UserError(f"openai: mode must be one of {', '.join(get_args(OpenAIMode))}, got {mode!r}")
        if retention is not None and retention not in get_args(Retention):
            raise UserError(f"openai: retention must be one of {', '.join(get_args(Retention))}, got {retention!r}")
        if retention is not None and mode == "5.6":
            raise UserError("openai: retention applies to mode pre-5.6 only (5.6 uses ttl_ms, default 30 min)")
        if ttl_ms is not None and not is_positive_int(ttl_ms):
            raise UserError(f"openai: ttl_ms must be a positive integer (ms), got {ttl_ms!r}")
        if not is_positive_int(lookback):
            raise UserError(f"openai: lookback must be a positive integer, got {lookback!r}")
        if not is_positive_int(servers) or servers > 4096:
            raise UserError(f"openai: servers must be an integer from 1 to 4096, got {servers!r}")
        if routing not in get_args(KeyRouting):
            raise UserError(f"openai: routing must be one of {', '.join(get_args(KeyRouting))}, got {routing!r}")
        if overflow_rpm is not None and not is_positive_int(overflow_rpm):
            raise UserError(f"openai: overflow_rpm must be a positive integer (requests a minute) or none, got {overflow_rpm!r}")
        if not isinstance(cache_output, bool):
            raise UserError(f"openai: cache_output must be true or false, got {cache_output!r}")
        if not isinstance(zdr, bool):
            raise UserError(f"openai: zdr must be true or false, got {zdr!r}")
        self.tokenizer = make_tokenizer(tokenizer)
        self.cache_output = cache_output
        self.mode: OpenAIMode = mode
        self.retention: Retention | None = retention if mode == "pre-5.6" else None
        self.zdr = zdr
        #: The lifetime every request gets when one is forced (``ttl_ms``, ``retention``, or
        #: mode 5.6's 30 min); None: each request's own (:meth:`lifetime_ms`).
        self.fixed_ttl_ms = ttl_ms if ttl_ms is not None else (
            None if retention is None and mode == "pre-5.6" else _default_ttl(mode, retention)
        )
        #: The lifetime of a request that asks for nothing, to a model the rules do not know.
        self.ttl_ms = self.fixed_ttl_ms if self.fixed_ttl_ms is not None else IN_MEMORY_TTL_MS
        self.lookback = lookback
        self.servers = servers
        self.routing: KeyRouting = routing
        self.overflow_rpm = overflow_rpm
        self._trees: dict[tuple[Envelope, int], PrefixTree] = {}
        #: Per routing group, the ticks of its requests in the last minute.
        self._recent: dict[bytes, deque[int]] = {}
        #: Per routing group, the machine its latest request went to (where its response is kept).
        self._served: dict[bytes, int] = {}

    def lifetime_ms(self, rendered: RenderedRequest, envelope: Envelope) -> int:
        """The idle lifetime (ms) the request gets: the forced one, else its own (the body's
        retention where the model offers it, else the model's default)."""
        if self.fixed_ttl_ms is not None:
            return self.fixed_ttl_ms
        return _LIFETIMES[model_retention(envelope.model, rendered.retention, None, self.zdr)]

    def server_of(self, rendered: RenderedRequest, envelope: Envelope, view: TokenView, tick: int) -> int:
        """The machine the request is routed to: its home one, or the next in turn when its
        (prefix, key) pair has already sent ``overflow_rpm`` requests in the last minute."""
        if self.servers == 1:
            return 0
        group, home = self._route(rendered, envelope, view)
        server = self._overflow(group, home, tick)
        self._served[group] = server
        return server

    def _route(self, rendered: RenderedRequest, envelope: Envelope, view: TokenView) -> tuple[bytes, int]:
        """The request's routing group and its home machine."""
        parts = [envelope.label().encode(), view.stream[: ROUTE_TOKENS * STREAM_BYTES]]
        if self.routing == "key":
            parts += [unit.data for unit in rendered.units[: rendered.first_message_unit + 1]]
        group = hashlib.sha256(b"\0".join(parts)).digest()
        return group, int.from_bytes(group[:8], "big") % self.servers

    def _overflow(self, group: bytes, home: int, tick: int) -> int:
        if self.overflow_rpm is None:
            return home
        recent = self._recent.setdefault(group, deque())
        while recent and recent[0] <= tick - _MINUTE_MS:
            recent.popleft()
        excess = len(recent) - self.overflow_rpm
        recent.append(tick)
        if excess < 0:
            return home
        return (home + 1 + excess % (self.servers - 1)) % self.servers

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Price a request against the live entries of its family, then store it."""
        del ready_tick  # OpenAI documents no in-flight rule
        view = token_view(rendered, self.tokenizer)
        tree = self._trees.setdefault((envelope, self.server_of(rendered, envelope, view, tick)), PrefixTree())
        stale_tick = tick - self.lifetime_ms(rendered, envelope)
        found = tree.match(view.stream, stale_tick=stale_tick)
        prompt = view.num_tokens
        if prompt < MIN_TOKENS:
            return CacheVerdict(prompt, 0, 0)
        match self.mode:
            case "pre-5.6":
                cached = rounded_hit(view.tokens_at(found.depth))
                tree.insert(view.stream, tick, stale_tick=stale_tick)
                return CacheVerdict(prompt, cached, max(rounded_hit(prompt) - cached, 0))
            case "5.6":
                cached = self._breakpoint_hit(tree, found, view)
                tree.mark(tree.insert(view.stream, tick, stale_tick=stale_tick))
                return CacheVerdict(prompt, cached, prompt - cached)
            case _:
                assert_never(self.mode)

    def observe_output(self, rendered: RenderedRequest, envelope: Envelope, reply: RenderedUnit, tick: int) -> None:
        """Keep the response after its prompt (prompt + reply), on the machine the prompt went to;
        pre-5.6 with ``cache_output`` only (see the module doc)."""
        if not self.cache_output or self.mode != "pre-5.6":
            return
        view = reply_view(token_view(rendered, self.tokenizer), reply, self.tokenizer)
        server = 0
        if self.servers > 1:
            group, home = self._route(rendered, envelope, view)
            server = self._served.get(group, home)
        tree = self._trees.setdefault((envelope, server), PrefixTree())
        tree.insert(view.stream, tick, stale_tick=tick - self.lifetime_ms(rendered, envelope))

    def _breakpoint_hit(self, tree: PrefixTree, found: TreeMatch, view: TokenView) -> int:
        """Tokens up to the deepest readable breakpoint inside the shared prefix (0 if none)."""
        oldest_readable = tree.num_marks - self.lookback
        for node in reversed(found.path):
            if node.mark_seq and node.mark_seq > oldest_readable:
                tokens = view.tokens_at(node.depth)
                if tokens >= MIN_TOKENS:
                    return tokens
        return 0


def rounded_hit(shared_tokens: int) -> int:
    """A pre-5.6 hit: 0 below 1024 shared tokens, then whole 128-token steps above 1024."""
    if shared_tokens < MIN_TOKENS:
        return 0
    return MIN_TOKENS + (shared_tokens - MIN_TOKENS) // INCREMENT * INCREMENT


#: Each retention label's idle lifetime (ms).
_LIFETIMES = {"in_memory": IN_MEMORY_TTL_MS, "24h": EXTENDED_TTL_MS, "30m": BREAKPOINT_TTL_MS, "12h": TWELVE_HOUR_TTL_MS}


def _default_ttl(mode: OpenAIMode, retention: Retention | None) -> int:
    match mode:
        case "5.6":
            return BREAKPOINT_TTL_MS
        case "pre-5.6":
            return EXTENDED_TTL_MS if retention == "24h" else IN_MEMORY_TTL_MS
        case _:
            assert_never(mode)
