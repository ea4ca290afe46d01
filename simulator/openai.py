"""The ``openai`` cache model: automatic exact-prefix caching, before and since GPT-5.6.

Rules (OpenAI's prompt caching guide,
https://developers.openai.com/api/docs/guides/prompt-caching, and its Azure copy,
https://learn.microsoft.com/azure/foundry/openai/how-to/prompt-caching; the numbers live in
:mod:`prefixbench.simulator.providers.openai`):

* **Key.** An exact token prefix, per request family (:class:`~prefixbench.simulator.wire.Envelope`).
  Machine routing by the first ~256 tokens and the ~15 requests/min overflow are not modelled
  (a single agent sends far fewer).
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
  a re-send refreshes it): ``in_memory`` keeps an entry ``IN_MEMORY_TTL_MS`` = 5 min (the
  guide: in-memory entries last 5 to 10 minutes of inactivity, at most one hour; the Azure
  copy: the system "typically clears caches within 5 to 10 minutes of inactivity". The lower
  end is what every prefixbench model uses, the chain model and the audit included),
  ``24h`` keeps it 24 h (``retention`` applies to pre-5.6 only; 5.6 rejects it). 5.6's
  ``prompt_cache_options.ttl='30m'`` is a minimum lifetime, modelled as 30 min idle.
  ``ttl_ms`` overrides either. An entry idle for ``ttl_ms`` or longer is gone.
"""

from __future__ import annotations

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
)
from prefixbench.simulator.render import RenderedRequest
from prefixbench.simulator.tokenizer import Tokenizer, make_tokenizer
from prefixbench.simulator.tokens import TokenView, TokenizedModel, token_view
from prefixbench.simulator.wire import Envelope

OpenAIMode = Literal["pre-5.6", "5.6"]
Retention = Literal["in_memory", "24h"]

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
    ) -> None:
        """Args:
        mode: ``pre-5.6`` (1024 then 128-token steps) or ``5.6`` (implicit breakpoint, billed writes).
        retention: ``in_memory`` (default) or ``24h``; pre-5.6 only.
        ttl_ms: idle lifetime of an entry in logical ms, overriding the retention's.
        lookback: latest breakpoints a 5.6 read considers.

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
        self.tokenizer = make_tokenizer(tokenizer)
        self.mode: OpenAIMode = mode
        self.retention: Retention | None = retention if mode == "pre-5.6" else None
        self.ttl_ms = ttl_ms if ttl_ms is not None else _default_ttl(mode, retention)
        self.lookback = lookback
        self._trees: dict[Envelope, PrefixTree] = {}

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Price a request against the live entries of its family, then store it."""
        del ready_tick  # OpenAI documents no in-flight rule
        view = token_view(rendered, self.tokenizer)
        tree = self._trees.setdefault(envelope, PrefixTree())
        stale_tick = tick - self.ttl_ms
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


def _default_ttl(mode: OpenAIMode, retention: Retention | None) -> int:
    match mode:
        case "5.6":
            return BREAKPOINT_TTL_MS
        case "pre-5.6":
            return EXTENDED_TTL_MS if retention == "24h" else IN_MEMORY_TTL_MS
        case _:
            assert_never(mode)
