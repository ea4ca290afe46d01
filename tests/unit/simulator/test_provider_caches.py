"""The provider models of simulator/automatic.py (``gemini``, ``xai``, ``kimi``, ``qwen``,
``minimax``) told as stories with numbers worked out by hand.

Under the heuristic a token is 4 bytes (``unit_builders``), so a unit of ``n`` tokens is
``4n`` bytes and every read below can be checked with a pencil.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from prefixbench.simulator.cache import CacheVerdict
from prefixbench.simulator.models import make_cache, option_lines, parse_cache_spec
from prefixbench.simulator.pricing import cost_of, get_price
from prefixbench.simulator.render import RenderedBreakpoint, RenderedRequest, RenderedUnit
from prefixbench.simulator.wire import Envelope

from .unit_builders import make_unit

FLASH = Envelope("gemini", "gemini-2.5-flash")
PRO = Envelope("gemini", "gemini-2.5-pro")
GROK = Envelope("xai", "grok-code-fast-1")
QWEN = Envelope("qwen", "qwen3-coder-plus")


def request(*units: RenderedUnit, marks: tuple[int, ...] = ()) -> RenderedRequest:
    """A request of these units, each one block; ``marks``: the units a ``cache_control`` closes."""
    blocky = tuple(RenderedUnit(u.kind, u.data, (0,), (len(u.data),)) for u in units)
    return RenderedRequest(blocky, 0, tuple(RenderedBreakpoint(i, 0, "5m") for i in marks))


A, B, C, D = (make_unit(tag, size) for tag, size in (("a", 1000), ("b", 100), ("c", 3000), ("d", 100)))


# --- Gemini: per-model minimums, the two tables, no write fee --------------------------------


def test_gemini_caches_nothing_below_the_model_minimum_and_everything_above_it():
    cache = make_cache("gemini")
    # 1,000 tokens on 2.5 Flash (minimum 1,024): neither read nor stored.
    assert cache.observe(request(A), FLASH, 0) == CacheVerdict(1000, 0, 0)
    # 1,100 tokens: over the minimum, but the 1,000 before were never stored: a miss, all stored.
    assert cache.observe(request(A, B), FLASH, 1) == CacheVerdict(1100, 0, 1100)
    # 1,200 tokens: reads the 1,100 just stored, not rounded to any block (reads are exact).
    assert cache.observe(request(A, B, D), FLASH, 2) == CacheVerdict(1200, 1100, 100)


def test_gemini_caches_per_model_and_2_5_pro_needs_4096_tokens():
    cache = make_cache("gemini")
    cache.observe(request(A, B, D), FLASH, 0)
    # Another model is another cache, and 1,200 tokens is under 2.5 Pro's 4,096.
    assert cache.observe(request(A, B, D), PRO, 1) == CacheVerdict(1200, 0, 0)
    cache.observe(request(A, C), PRO, 2)  # 4,000 tokens: still under
    assert cache.observe(request(A, C, B), PRO, 3) == CacheVerdict(4100, 0, 4100)
    assert cache.observe(request(A, C, B, D), PRO, 4).cached_tokens == 4100


def test_gemini_minimum_tables_disagree_and_the_option_picks_one():
    docs, reseller = make_cache("gemini"), make_cache("gemini", minimums="reseller")
    assert (docs.minimum("gemini-2.5-flash"), reseller.minimum("gemini-2.5-flash")) == (1024, 2048)
    assert (docs.minimum("gemini-3-pro-preview"), reseller.minimum("gemini-3.1-flash")) == (4096, 4096)
    assert make_cache("gemini", min_tokens="3000").minimum("gemini-2.5-flash-lite") == 3000
    # Under the reseller's 2,048 the 1,100 and 1,200-token prompts above cache nothing.
    reseller.observe(request(A, B), FLASH, 0)
    assert reseller.observe(request(A, B, D), FLASH, 1) == CacheVerdict(1200, 0, 0)


# --- xAI: block steps, routing, eviction ------------------------------------------------------


def test_xai_reads_in_128_token_blocks_or_64_when_asked():
    for block, read in ((None, 1024), ("64", 1088)):
        cache = make_cache("xai", **({} if block is None else {"block": block}))
        cache.observe(request(A, B), GROK, 0)  # 1,100 tokens stored
        # 1,100 shared: 8 blocks of 128 = 1,024, or 17 blocks of 64 = 1,088.
        assert cache.observe(request(A, B, D), GROK, 1) == CacheVerdict(1200, read, 1200 - read)


def test_xai_sticky_routing_keeps_a_conversation_on_its_server():
    cache = make_cache("xai", servers=8)
    other = request(make_unit("z", 500))
    assert cache.server_of(request(A), GROK, None) == cache.server_of(request(A, B, D), GROK, None)
    cache.observe(request(A, B), GROK, 0)
    cache.observe(other, GROK, 1)
    assert cache.observe(request(A, B, D), GROK, 2).cached_tokens == 1024


def test_xai_a_request_routed_to_another_server_misses():
    # routing=random, 2 servers, seed 0: random.Random(0).randrange(2) draws 1, 1, 0.
    cache = make_cache("xai", routing="random", servers=2, seed=0)
    assert cache.observe(request(A, B), GROK, 0).cached_tokens == 0  # server 1: cold
    assert cache.observe(request(A, B), GROK, 1).cached_tokens == 1024  # server 1 again: 1,100 -> 1,024
    assert cache.observe(request(A, B), GROK, 2) == CacheVerdict(1100, 0, 1100)  # server 0: a miss


def test_xai_eviction_is_a_seeded_draw_and_off_by_default():
    always = make_cache("xai", evict_p=1.0)
    always.observe(request(A, B), GROK, 0)
    assert always.observe(request(A, B), GROK, 1).cached_tokens == 0
    runs = []
    for _ in range(2):
        sometimes = make_cache("xai", evict_p=0.5, seed=3)
        runs.append([sometimes.observe(request(A, B), GROK, t).cached_tokens for t in range(12)])
    assert runs[0] == runs[1] and 0 in runs[0][1:] and 1024 in runs[0]


# --- Kimi: TTL option, 256-token chunks --------------------------------------------------------


def test_kimi_entries_live_5_minutes_unless_1h_is_asked():
    five, hour = make_cache("kimi"), make_cache("kimi", ttl="1h", block=256)
    for cache in (five, hour):
        cache.observe(request(A, B), Envelope("moonshot", "kimi-k2"), 0)
    six_minutes = 6 * 60_000
    assert five.observe(request(A, B, D), Envelope("moonshot", "kimi-k2"), six_minutes).cached_tokens == 0
    # 1,100 shared, in 256-token chunks: 1,024.
    assert hour.observe(request(A, B, D), Envelope("moonshot", "kimi-k2"), six_minutes).cached_tokens == 1024


# --- Qwen: explicit and implicit, never both ---------------------------------------------------


def test_qwen_explicit_and_implicit_caches_never_serve_each_other():
    cache = make_cache("qwen")
    # 1. Unmarked, 1,100 tokens: implicit; stored implicitly, the write billed as input (0 written).
    assert cache.observe(request(A, B), QWEN, 0) == CacheVerdict(1100, 0, 0)
    # 2. The same prefix with a marker on B: explicit; the implicit entry is not read. The
    #    marker writes 1,100 tokens (1.25x); D, after the marker, is uncached.
    assert cache.observe(request(A, B, D, marks=(1,)), QWEN, 1) == CacheVerdict(1200, 0, 1100)
    # 3. Unmarked again: implicit, reads request 1's 1,100 (not the explicit entry).
    assert cache.observe(request(A, B, D), QWEN, 2) == CacheVerdict(1200, 1100, 0)
    # 4. Marked on D: explicit, its lookback finds the entry at B's end (1,100) and writes 1,200.
    assert cache.observe(request(A, B, D, marks=(2,)), QWEN, 3) == CacheVerdict(1200, 1100, 100)


def test_qwen_explicit_entries_need_1024_tokens_and_expire_5_minutes_after_the_last_hit():
    cache = make_cache("qwen")
    small = make_unit("s", 900)
    assert cache.observe(request(small, marks=(0,)), QWEN, 0) == CacheVerdict(900, 0, 0)  # under 1,024: not stored
    cache.observe(request(A, B, marks=(1,)), QWEN, 0)
    four_minutes = 4 * 60_000
    assert cache.observe(request(A, B, D, marks=(1,)), QWEN, four_minutes).cached_tokens == 1100  # a hit resets
    assert cache.observe(request(A, B, D, marks=(1,)), QWEN, 2 * four_minutes).cached_tokens == 1100
    assert cache.observe(request(A, B, D, marks=(1,)), QWEN, 2 * four_minutes + 5 * 60_000).cached_tokens == 0


def test_qwen_implicit_minimum_is_an_option_between_the_two_documented_values():
    low = make_cache("qwen", implicit_min=256)
    low.observe(request(make_unit("s", 300)), QWEN, 0)
    assert low.observe(request(make_unit("s", 300), D), QWEN, 1).cached_tokens == 300
    default = make_cache("qwen")
    default.observe(request(make_unit("s", 300)), QWEN, 0)
    assert default.observe(request(make_unit("s", 300), D), QWEN, 1).cached_tokens == 0


def test_qwen_explicit_mode_marks_an_unmarked_request_at_its_last_block():
    cache = make_cache("qwen", mode="explicit")
    assert cache.observe(request(A, B), QWEN, 0) == CacheVerdict(1100, 0, 1100)
    assert cache.observe(request(A, B, D), QWEN, 1) == CacheVerdict(1200, 1100, 100)


def test_minimax_caches_automatically_from_512_tokens():
    cache = make_cache("minimax")
    half = make_unit("h", 500)
    cache.observe(request(half), Envelope("minimax", "MiniMax-M2"), 0)
    assert cache.observe(request(half, D), Envelope("minimax", "MiniMax-M2"), 1).cached_tokens == 0
    assert cache.observe(request(half, D, B), Envelope("minimax", "MiniMax-M2"), 2).cached_tokens == 600


# --- options and prices ------------------------------------------------------------------------


def test_every_option_is_named_with_its_default_source_and_range():
    name, options = parse_cache_spec("xai:block=64,routing=random")
    cache = make_cache(name, **options)
    assert (cache.block, cache.routing, cache.servers, cache.evict_p) == (64, "random", 8, 0.0)
    assert option_lines("xai")[0] == "block=128 [S] (seen 64 [M] - 128 [S]): read step in tokens"
    assert any(line.startswith("minimums=docs [O]") for line in option_lines("gemini"))
    assert option_lines("openai") == ()


def test_a_qwen_request_is_priced_at_its_dated_row():
    row = get_price("qwen3-coder-plus", as_of="2025-10-01")
    # 10,000 prompt tokens: 4,000 read (0.20), 5,000 written explicitly (1.25), 1,000 uncached
    # (1.00), 1,000 output (5.00), per 1M: 0.0008 + 0.00625 + 0.001 + 0.005.
    usage = CacheVerdict(10_000, 4_000, 5_000)
    cost = cost_of(_Priced(usage, 1_000), row)
    assert (cost.cache_read, cost.cache_write, cost.uncached_input, cost.output) == (
        Decimal("0.0008"), Decimal("0.00625"), Decimal("0.001"), Decimal("0.005"))
    # Over 32K tokens the whole request bills at the 32K-128K tier (1.80 input).
    assert row.rates_for(40_000).input == Decimal("1.80")


def test_grok_prices_start_at_the_model_s_release():
    assert get_price("grok-code-fast-1", as_of="2025-09-01").rates.cache_read == Decimal("0.02")
    assert get_price("x-ai/grok-4", as_of="2025-09-01").rates.cache_read == Decimal("0.75")
    with pytest.raises(Exception, match="no price for 'grok-code-fast-1' as of 2025-08-01"):
        get_price("grok-code-fast-1", as_of="2025-08-01")
    # A log's spelling resolves to the row.
    assert get_price("MiniMax-M2").model == "minimax-m2"


class _Priced:
    def __init__(self, verdict: CacheVerdict, output: int) -> None:
        self.prompt_tokens = verdict.prompt_tokens
        self.cached_tokens = verdict.cached_tokens
        self.written_tokens = verdict.written_tokens
        self.written_long_tokens = 0
        self.output_tokens = output
