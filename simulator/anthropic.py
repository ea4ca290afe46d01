"""The ``anthropic`` cache model: ``cache_control`` breakpoints over tools -> system -> messages.

Rules (Anthropic's prompt-caching guide,
https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching, refined on the
claude-trace-lemmy capture; the numbers live in :mod:`prefixbench.simulator.providers.anthropic`):

* **Entries live at breakpoints.** A request caches the prefix up to the end of each block that
  carries a breakpoint (at most 4 explicit ones, or the automatic one: a top-level
  ``cache_control`` closes the last cacheable block, which skips thinking and empty text; a
  request with no marker at all is treated the same way unless ``auto_when_unmarked=None``).
  An entry is keyed on the request family (:class:`~prefixbench.simulator.wire.Envelope`)
  and the exact rendered bytes of its prefix (sha256). Nothing is stored at other block
  boundaries: in claude-trace-lemmy the first request after /compact shares tools, system and
  its first message block with an earlier request, yet reads only up to the system breakpoint.
* **Lookback.** Each breakpoint looks for a usable entry at its own block boundary and the
  boundaries before it, ``lookback_blocks`` (20) boundaries in all, and takes the longest hit;
  an entry further back is found only through another breakpoint. Boundaries are the ends of
  each tool, each system block and each message content block (Claude Code's layout)::

      tools              system     messages
      [t0][t1]..[t16]    [s0][s1]   [m0b0]..[m0b3][m1b0][m1b1][m2b0]
                           bp  bp                       bp    bp
                                    |<-- window of the last bp (up to 20) -->|

* **Minimum length.** A breakpoint whose prefix is shorter than the model's minimum
  (:func:`min_cacheable_tokens`; the ``rules`` option takes another provider's table, as
  Bedrock's bodies do) neither writes nor reads: the whole prompt is uncached. A provider that
  caps the tokens one request may have cached (Bedrock's Nova: 20K) caches no breakpoint past it.
* **Timing.** An entry becomes usable when the response of the request that wrote it begins
  (``ready_tick``): parallel requests sent before then all miss and all write. It lives for its
  TTL (5 min or 1 h) counted from the writing request's start (``ttl_from='start'``: a long
  response uses up part of the TTL, as reported [S]; ``ttl_from='response'`` counts from
  ``ready_tick``); every read, and every later request that has a breakpoint on it, pushes its
  expiry to ``tick + TTL``. A read also refreshes every live entry inside the
  prefix it read (the same cached content was used). ``tick < expiry_tick`` means alive. A breakpoint at
  or before the hit holds an entry afterwards too, at no write cost (its tokens were read).
* **Billing.** A = tokens at the longest hit (cache read), B = the last 1 h breakpoint,
  C = the last cacheable breakpoint: ``C - A`` is written, ``B - A`` of it with the 1 h TTL
  (longer-TTL breakpoints come first), and the tokens after C are uncached input.

Tokens: no public Claude tokenizer exists, so a position counts
``ceil(chars / chars_per_token)`` over the rendered prompt's code points up to that position,
the same rule for every boundary so read + write + uncached always sum to the prompt. The
default ratio is calibrated once on claude-trace-lemmy (see ``DEFAULT_CHARS_PER_TOKEN``).
"""

from __future__ import annotations

import hashlib
import math
from functools import lru_cache

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.cache import CacheVerdict
from prefixbench.simulator.providers.anthropic import DEFAULT_MIN_TOKENS, LOOKBACK_BLOCKS, MAX_BREAKPOINTS, RULES
from prefixbench.simulator.providers.base import TTL_FROM
from prefixbench.simulator.render import RenderedBreakpoint, RenderedRequest, RenderedUnit, last_cacheable_block
from prefixbench.simulator.wire import CacheTtl, Envelope

#: Rendered code points per token. Calibrated once on ../shared/realdata/claude-trace-lemmy
#: (Claude Code 1.0.6, 64 calls) by ``reports.capture.calibrate_chars_per_token``: over the 17
#: calls of at least 1024 reported tokens, each call's ratio of rendered code points to its
#: reported ``input + cache_read + cache_creation`` runs from 3.76 (code-heavy, after the
#: compaction) to 3.94 (prose and tool schemas); the ratio that minimizes the worst relative
#: error of the predicted totals is their midpoint, 3.85 to two decimals (error within +-2.4%).
#: A least-squares fit gives 3.88 instead; no single ratio does better than +-2.3% here.
DEFAULT_CHARS_PER_TOKEN = 3.85
#: Entry lifetimes in logical ms (the provider rules' TTLs).
TTL_MS: dict[CacheTtl, int] = dict(RULES.ttls_ms)  # type: ignore[arg-type]

__all__ = ["DEFAULT_MIN_TOKENS", "LOOKBACK_BLOCKS", "MAX_BREAKPOINTS", "TTL_MS", "AnthropicCache", "min_cacheable_tokens"]


def min_cacheable_tokens(model: str) -> int:
    """Minimum cacheable prefix (tokens) of a Claude model id; ``DEFAULT_MIN_TOKENS`` if unknown."""
    return RULES.min_cacheable(model)


class _Boundary(msgspec.Struct, frozen=True):
    """The end of one block: its byte and code-point offsets in the whole prompt."""

    byte_end: int
    char_end: int


@lru_cache(maxsize=16384)
def _unit_char_ends(unit: RenderedUnit) -> tuple[int, tuple[int, ...]]:
    """Code points of a unit and at each of its block ends (memoized: units are re-sent)."""
    if unit.data.isascii():
        return len(unit.data), unit.block_ends
    # Block ends sit on JSON punctuation, so each slice ends on a character boundary.
    return len(unit.data.decode()), tuple(len(unit.data[:end].decode()) for end in unit.block_ends)


def prompt_chars(rendered: RenderedRequest) -> int:
    """Code points of the whole rendered prompt."""
    return sum(_unit_char_ends(unit)[0] for unit in rendered.units)


def _boundaries(rendered: RenderedRequest) -> tuple[tuple[_Boundary, ...], dict[tuple[int, int], int]]:
    """Every block boundary in prompt order, and the flat index of each (unit, block)."""
    bounds: list[_Boundary] = []
    index: dict[tuple[int, int], int] = {}
    byte_base = char_base = 0
    for unit_idx, unit in enumerate(rendered.units):
        unit_chars, char_ends = _unit_char_ends(unit)
        for block_idx, (byte_end, char_end) in enumerate(zip(unit.block_ends, char_ends)):
            index[(unit_idx, block_idx)] = len(bounds)
            bounds.append(_Boundary(byte_base + byte_end, char_base + char_end))
        byte_base += len(unit.data)
        char_base += unit_chars
    return tuple(bounds), index


def _prefix_digests(rendered: RenderedRequest, byte_ends: list[int]) -> dict[int, bytes]:
    """sha256 of the prompt's first ``n`` bytes for each ``n`` in ``byte_ends`` (one pass)."""
    digests: dict[int, bytes] = {}
    hasher = hashlib.sha256()
    wanted = sorted(set(byte_ends))
    done = 0  # bytes fed so far
    unit_base = 0
    unit_iter = iter(rendered.units)
    unit = next(unit_iter, None)
    for end in wanted:
        while unit is not None and unit_base + len(unit.data) < end:
            hasher.update(unit.data[done - unit_base :])
            done = unit_base = unit_base + len(unit.data)
            unit = next(unit_iter, None)
        assert unit is not None
        hasher.update(unit.data[done - unit_base : end - unit_base])
        done = end
        digests[end] = hasher.copy().digest()
    return digests


class _Entry(msgspec.Struct, frozen=True):
    """A cached prefix: its TTL, when it becomes readable and when it expires."""

    ttl: CacheTtl
    ready_tick: int
    expiry_tick: int

    def is_usable(self, tick: int) -> bool:
        """Whether a request sent at ``tick`` can read this entry."""
        return self.ready_tick <= tick < self.expiry_tick


class AnthropicCache:
    """Anthropic prompt caching: breakpoints, 20-block lookback, minimum length, TTL, read/write split."""

    name = "anthropic"

    def __init__(
        self,
        *,
        chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
        min_tokens: int | None = None,
        lookback_blocks: int = LOOKBACK_BLOCKS,
        max_breakpoints: int = MAX_BREAKPOINTS,
        auto_when_unmarked: CacheTtl | None = "5m",
        ttl_from: str = RULES.ttl_from,
        rules: str = RULES.name,
    ) -> None:
        """Args:
        chars_per_token: rendered code points per token (no public Claude tokenizer).
        min_tokens: minimum cacheable prefix for every model; None uses the per-model table.
        lookback_blocks: boundaries each breakpoint checks, its own included.
        max_breakpoints: breakpoints a request may carry; more is a ValueError (an API 400).
        auto_when_unmarked: a request with no ``cache_control`` at all is priced as if it had
            asked for automatic caching with this TTL, because kernel-built requests carry no
            markers yet stand for an agent that caches; None prices it as the API does
            (nothing cached), which is what a capture replay wants.
        ttl_from: ``start`` counts a new entry's lifetime from the request's start (a long
            response uses up part of it; a secondary source's report [S]), ``response`` from
            when its response begins.
        rules: the provider whose per-model minimums and cap on cached tokens apply (``bedrock``
            replays Bedrock's bodies: its own minimums, and Nova's 20K cap).
        """
        if not 0.01 <= chars_per_token <= 1000:  # NaN fails too; outside it token counts overflow
            raise ValueError(f"chars_per_token must be a number from 0.01 to 1000, got {chars_per_token}")
        if lookback_blocks < 1:
            raise ValueError(f"lookback_blocks must be at least 1, got {lookback_blocks}")
        if ttl_from not in TTL_FROM:
            raise ValueError(f"ttl_from must be one of {', '.join(TTL_FROM)}, got {ttl_from!r}")
        from prefixbench.simulator.providers import PROVIDERS  # the registry imports the rule modules

        if rules not in PROVIDERS:
            raise ValueError(f"rules must name a provider ({', '.join(sorted(PROVIDERS))}), got {rules!r}")
        if auto_when_unmarked is not None and auto_when_unmarked not in TTL_MS:
            raise ValueError(f"auto_when_unmarked must be one of {', '.join(TTL_MS)}, none, got {auto_when_unmarked!r}")
        self.ttl_from = ttl_from
        self.rules = PROVIDERS[rules]
        self.chars_per_token = chars_per_token
        self.min_tokens = min_tokens
        self.lookback_blocks = lookback_blocks
        self.max_breakpoints = max_breakpoints
        self.auto_when_unmarked = auto_when_unmarked
        self._entries: dict[tuple[Envelope, bytes], _Entry] = {}
        self._purged_tick = 0

    def tokens_of_chars(self, num_chars: int) -> int:
        """Tokens of a prompt position given in code points."""
        return math.ceil(num_chars / self.chars_per_token)

    def prompt_tokens(self, rendered: RenderedRequest) -> int:
        """Prompt tokens of a request as this model counts them."""
        return self.tokens_of_chars(prompt_chars(rendered))

    def observe(
        self, rendered: RenderedRequest, envelope: Envelope, tick: int, *, ready_tick: int | None = None
    ) -> CacheVerdict:
        """Price one request: read at the longest hit, write up to the last breakpoint, then store."""
        self._purge(tick)
        prompt = self.prompt_tokens(rendered)
        breakpoints = rendered.breakpoints
        if not breakpoints and self.auto_when_unmarked is not None:
            last = last_cacheable_block(rendered.units)
            breakpoints = () if last is None else (RenderedBreakpoint(*last, self.auto_when_unmarked),)
        if len(breakpoints) > self.max_breakpoints:
            raise ValueError(f"{len(breakpoints)} cache breakpoints, at most {self.max_breakpoints} allowed")
        if not breakpoints:
            return CacheVerdict(prompt, 0, 0)
        bounds, index = _boundaries(rendered)
        tokens = [self.tokens_of_chars(bound.char_end) for bound in bounds]
        floor = self.min_tokens if self.min_tokens is not None else self.rules.min_cacheable(envelope.model)
        cap = self.rules.max_cached(envelope.model)
        ceiling = prompt if cap is None else cap  # a prefix past the cap is not cached (Nova: 20K)
        marks = [(index[(bp.unit_idx, bp.block_idx)], bp.ttl) for bp in breakpoints]
        marks = [(flat, ttl) for flat, ttl in marks if floor <= tokens[flat] <= ceiling]
        if not marks:
            return CacheVerdict(prompt, 0, 0)
        windows = {
            flat_idx
            for flat, _ in marks
            for flat_idx in range(max(0, flat - self.lookback_blocks + 1), flat + 1)
            if floor <= tokens[flat_idx] <= ceiling
        }
        # Every cacheable boundary up to the last mark: lookups use the windows, refreshes all.
        cacheable = [flat_idx for flat_idx in range(marks[-1][0] + 1) if floor <= tokens[flat_idx] <= ceiling]
        digests = _prefix_digests(rendered, [bounds[flat_idx].byte_end for flat_idx in cacheable])
        keys = {flat_idx: (envelope, digests[bounds[flat_idx].byte_end]) for flat_idx in cacheable}
        hit_idx = self._longest_hit([flat for flat, _ in marks], {k: keys[k] for k in windows}, tick)
        read = tokens[hit_idx] if hit_idx is not None else 0
        if hit_idx is not None:
            self._refresh([keys[flat_idx] for flat_idx in cacheable if flat_idx <= hit_idx], tick)
        last = marks[-1][0]
        long_marks = [flat for flat, ttl in marks if ttl == "1h"]
        written = max(0, tokens[last] - read)
        written_long = max(0, tokens[long_marks[-1]] - read) if long_marks else 0
        self._store([(keys[flat], ttl) for flat, ttl in marks], tick, ready_tick if ready_tick is not None else tick)
        return CacheVerdict(prompt, read, written, None, min(written_long, written))

    def _longest_hit(self, marks: list[int], keys: dict[int, tuple[Envelope, bytes]], tick: int) -> int | None:
        """The furthest boundary holding a usable entry that some breakpoint's lookback reaches.

        ``keys`` holds exactly the cacheable boundaries inside the lookback windows, so a
        boundary missing from it is either too short or out of reach.
        """
        best: int | None = None
        for flat in marks:
            for flat_idx in range(flat, flat - self.lookback_blocks, -1):
                if flat_idx not in keys:
                    break
                entry = self._entries.get(keys[flat_idx])
                if entry is not None and entry.is_usable(tick):
                    best = flat_idx if best is None else max(best, flat_idx)
                    break
        return best

    def _refresh(self, entry_keys: list[tuple[Envelope, bytes]], tick: int) -> None:
        """A read refreshes the entry it hit and every live entry inside the prefix it read.

        The shorter entries hold the same content as the start of the longer one, and that
        content was just used; a breakpoint written a few turns back therefore stays warm
        while the conversation keeps reading past it (what a later summary call replays).
        """
        for entry_key in entry_keys:
            entry = self._entries.get(entry_key)
            if entry is not None and entry.is_usable(tick):
                self._entries[entry_key] = replace(entry, expiry_tick=max(entry.expiry_tick, tick + TTL_MS[entry.ttl]))

    def _store(self, marks: list[tuple[tuple[Envelope, bytes], CacheTtl]], tick: int, ready: int) -> None:
        """Hold an entry at every cacheable breakpoint: new ones readable from ``ready``, old ones
        refreshed; lifetimes count from ``tick`` (or ``ready``, with ``ttl_from='response'``)."""
        start = self.ttl_from == "start"
        for entry_key, ttl in marks:
            entry = self._entries.get(entry_key)
            if entry is None or entry.expiry_tick <= tick:
                self._entries[entry_key] = _Entry(ttl, ready, (tick if start else ready) + TTL_MS[ttl])
                continue
            # Still in flight: whichever writer's response begins first makes it usable.
            ready_tick = min(entry.ready_tick, ready) if entry.ready_tick > tick else entry.ready_tick
            self._entries[entry_key] = _Entry(
                ttl if TTL_MS[ttl] > TTL_MS[entry.ttl] else entry.ttl,
                ready_tick,
                max(entry.expiry_tick, (tick if start else max(tick, ready_tick)) + TTL_MS[ttl]),
            )

    def _purge(self, tick: int) -> None:
        """Drop expired entries now and then, so memory follows the live cache, not the history."""
        if tick - self._purged_tick < TTL_MS["5m"]:
            return
        self._purged_tick = tick
        for entry_key in [k for k, entry in self._entries.items() if entry.expiry_tick <= tick]:
            del self._entries[entry_key]
