"""The provider models of simulator/automatic.py (``gemini``, ``xai``, ``kimi``, ``qwen``,
``minimax``) and Gemini's explicit ``CachedContent`` (simulator/cached_content.py) told as
stories with numbers worked out by hand.

Under the heuristic a token is 4 bytes (``unit_builders``), so a unit of ``n`` tokens is
``4n`` bytes and every read below can be checked with a pencil.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from prefixbench.simulator.cache import CacheVerdict
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.models import make_cache, option_lines, parse_cache_spec
from prefixbench.simulator.pricing import cost_of, get_price
from prefixbench.simulator.render import RenderedBreakpoint, RenderedRequest, RenderedUnit
from prefixbench.simulator.wire import Envelope

from .unit_builders import make_unit

FLASH = Envelope("gemini", "gemini-2.5-flash")
PRO = Envelope("gemini", "gemini-2.5-pro")
#: Gemini's minimum table up to May 2026 (1,024 on 2.5 Flash), which the explicit-cache stories use.
EARLIER = "docs-2026-05"
GROK = Envelope("xai", "grok-code-fast-1")
QWEN = Envelope("qwen", "qwen3-coder-plus")


def request(*units: RenderedUnit, marks: tuple[int, ...] = ()) -> RenderedRequest:
    """A request of these units, each one block; ``marks``: the units a ``cache_control`` closes."""
    blocky = tuple(RenderedUnit(u.kind, u.data, (0,), (len(u.data),)) for u in units)
    return RenderedRequest(blocky, 0, tuple(RenderedBreakpoint(i, 0, "5m") for i in marks))


A, B, C, D = (make_unit(tag, size) for tag, size in (("a", 1000), ("b", 100), ("c", 3000), ("d", 100)))


# --- Gemini: per-model minimums, the two tables, no write fee --------------------------------


def test_gemini_caches_nothing_below_the_model_minimum_and_everything_above_it():
    cache = make_cache("gemini", minimums=EARLIER)  # the page up to May 2026
    # 1,000 tokens on 2.5 Flash (minimum 1,024): neither read nor stored.
    assert cache.observe(request(A), FLASH, 0) == CacheVerdict(1000, 0, 0)
    # 1,100 tokens: over the minimum, but the 1,000 before were never stored: a miss, all stored.
    assert cache.observe(request(A, B), FLASH, 1) == CacheVerdict(1100, 0, 1100)
    # 1,200 tokens: reads the 1,100 just stored, not rounded to any block (reads are exact).
    assert cache.observe(request(A, B, D), FLASH, 2) == CacheVerdict(1200, 1100, 100)


def test_gemini_caches_per_model_and_2_5_pro_needed_4096_tokens_on_the_earlier_page():
    cache = make_cache("gemini", minimums=EARLIER)
    cache.observe(request(A, B, D), FLASH, 0)
    # Another model is another cache, and 1,200 tokens is under 2.5 Pro's 4,096.
    assert cache.observe(request(A, B, D), PRO, 1) == CacheVerdict(1200, 0, 0)
    cache.observe(request(A, C), PRO, 2)  # 4,000 tokens: still under
    assert cache.observe(request(A, C, B), PRO, 3) == CacheVerdict(4100, 0, 4100)
    assert cache.observe(request(A, C, B, D), PRO, 4).cached_tokens == 4100


def test_gemini_current_page_gives_both_2_5_models_2048_tokens():
    """The caching page from its version of 2026-07-07 on: 2,048 for 2.5 Flash and 2.5 Pro (it
    was 1,024 and 4,096), the default table of a sweep."""
    cache = make_cache("gemini")
    # 2.5 Flash: 1,100 tokens was enough on the earlier page; under 2,048 nothing is stored.
    assert cache.observe(request(A, B), FLASH, 0) == CacheVerdict(1100, 0, 0)
    assert cache.observe(request(A, B, D), FLASH, 1) == CacheVerdict(1200, 0, 0)
    # 2.5 Pro: 4,000 tokens (1,000 + 3,000) is over 2,048 now: stored, then read by the next
    # prompt, 4,000 of its 4,100 tokens (under the earlier 4,096 both calls cached nothing).
    assert cache.observe(request(A, C), PRO, 2) == CacheVerdict(4000, 0, 4000)
    assert cache.observe(request(A, C, B), PRO, 3) == CacheVerdict(4100, 4000, 100)


def test_gemini_minimum_tables_and_the_option_picks_one():
    docs, earlier = make_cache("gemini"), make_cache("gemini", minimums=EARLIER)
    reseller = make_cache("gemini", minimums="reseller")
    assert [t.minimum("gemini-2.5-flash") for t in (docs, earlier, reseller)] == [2048, 1024, 2048]
    assert [t.minimum("gemini-2.5-pro") for t in (docs, earlier, reseller)] == [2048, 4096, 2048]
    # 3.5 Flash and later: 4,096 on the current page, 1,024 on the earlier one (it listed 3.5 Flash
    # at 1,024 in its last version); the 3.0 previews, gone from the current page, keep their values.
    assert [t.minimum("gemini-3.5-flash") for t in (docs, earlier)] == [4096, 1024]
    assert [t.minimum("gemini-3-flash-preview") for t in (docs, earlier, reseller)] == [1024, 1024, 4096]
    assert (docs.minimum("gemini-3-pro-preview"), docs.minimum("gemini-3.1-pro-preview"), docs.minimum("gemini-4-argon")) == (4096,) * 3
    assert make_cache("gemini", min_tokens="3000").minimum("gemini-2.5-flash-lite") == 3000
    # Under the reseller's 2,048 the 1,100 and 1,200-token prompts above cache nothing.
    reseller.observe(request(A, B), FLASH, 0)
    assert reseller.observe(request(A, B, D), FLASH, 1) == CacheVerdict(1200, 0, 0)


# --- xAI: block steps, routing, eviction ------------------------------------------------------


def test_xai_reads_to_the_token_by_default_or_in_128_or_64_token_blocks_when_asked():
    for block, read in ((None, 1100), ("128", 1024), ("64", 1088)):
        cache = make_cache("xai", **({} if block is None else {"block": block}))
        cache.observe(request(A, B), GROK, 0)  # 1,100 tokens stored
        # 1,100 shared: all of it (measured), 8 blocks of 128 = 1,024, or 17 blocks of 64 = 1,088.
        assert cache.observe(request(A, B, D), GROK, 1) == CacheVerdict(1200, read, 1200 - read)


def test_xai_sticky_routing_keeps_a_conversation_on_its_server():
    cache = make_cache("xai", servers=8, block=128)
    other = request(make_unit("z", 500))
    assert cache.server_of(request(A), GROK, None) == cache.server_of(request(A, B, D), GROK, None)
    cache.observe(request(A, B), GROK, 0)
    cache.observe(other, GROK, 1)
    assert cache.observe(request(A, B, D), GROK, 2).cached_tokens == 1024


def test_xai_a_request_routed_to_another_server_misses():
    # routing=random, 2 servers, seed 0: random.Random(0).randrange(2) draws 1, 1, 0.
    cache = make_cache("xai", routing="random", servers=2, seed=0, block=128)
    assert cache.observe(request(A, B), GROK, 0).cached_tokens == 0  # server 1: cold
    assert cache.observe(request(A, B), GROK, 1).cached_tokens == 1024  # server 1 again: 1,100 -> 1,024
    assert cache.observe(request(A, B), GROK, 2) == CacheVerdict(1100, 0, 1100)  # server 0: a miss


def test_xai_eviction_is_a_seeded_draw_and_off_by_default():
    always = make_cache("xai", evict_p=1.0)
    always.observe(request(A, B), GROK, 0)
    assert always.observe(request(A, B), GROK, 1).cached_tokens == 0
    runs = []
    for _ in range(2):
        sometimes = make_cache("xai", evict_p=0.5, seed=3, block=128)
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
    assert cache.observe(request(A, B, D, marks=(2,)), QWEN, 3) == CacheVerdict(1200, 1100, 100, cached_explicit_tokens=1100)


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
    assert cache.observe(request(A, B, D), QWEN, 1) == CacheVerdict(1200, 1100, 100, cached_explicit_tokens=1100)


def test_minimax_caches_automatically_from_512_tokens():
    cache = make_cache("minimax")
    half = make_unit("h", 500)
    cache.observe(request(half), Envelope("minimax", "MiniMax-M2"), 0)
    assert cache.observe(request(half, D), Envelope("minimax", "MiniMax-M2"), 1).cached_tokens == 0
    assert cache.observe(request(half, D, B), Envelope("minimax", "MiniMax-M2"), 2).cached_tokens == 600


def test_minimax_explicit_and_automatic_caches_never_serve_each_other():
    # MiniMax's two caches, as Qwen's: 1,100 tokens, over both minimums (512).
    m2 = Envelope("minimax", "MiniMax-M2")
    cache = make_cache("minimax")
    # 1. Unmarked: automatic, stored (the write bills as input: 0 written).
    assert cache.observe(request(A, B), m2, 0) == CacheVerdict(1100, 0, 0)
    # 2. The same prefix marked on B: explicit, the automatic entry is not read; 1,100 written.
    assert cache.observe(request(A, B, D, marks=(1,)), m2, 1) == CacheVerdict(1200, 0, 1100)
    # 3. Unmarked again: reads request 1's automatic entry (1,100), not the explicit one.
    assert cache.observe(request(A, B, D), m2, 2) == CacheVerdict(1200, 1100, 0)
    # 4. Marked on D: the lookback finds the explicit entry at B (1,100 read) and writes D's 100.
    assert cache.observe(request(A, B, D, marks=(2,)), m2, 3) == CacheVerdict(1200, 1100, 100, cached_explicit_tokens=1100)


# --- options and prices ------------------------------------------------------------------------


# --- Z.AI: the answer kept after its prompt ---------------------------------------------------

GLM = Envelope("zai", "glm-4.6")


def test_zai_keeps_the_answer_after_its_prompt_for_a_prompt_that_sends_it_back_verbatim():
    # A 1,100-token prompt (a + b), then its 300-token answer y, then a prompt that sends y
    # back as the model wrote it and adds a 100-token tool result (1,500 tokens): 1,400 read,
    # prompt and answer (Crush on glm-4.6 read all but 1-2 tokens of each answer). main read
    # 1,100, the prompt only.
    y, y2 = make_unit("y", 300, assistant=True), make_unit("z", 300, assistant=True)
    cache = make_cache("zai")
    cache.observe(request(A, B), GLM, 0)
    cache.observe_output(request(A, B), GLM, y, 0)
    assert cache.observe(request(A, B, y, D), GLM, 1) == CacheVerdict(1500, 1400, 100)
    # An answer sent back otherwise (its reasoning dropped: another 300 tokens) reads the
    # prompt and what the two answers share, their opening (4 tokens here; where Crush dropped
    # the reasoning, in 2025-10, glm-4.6 read 2 tokens past the prompt).
    cache = make_cache("zai")
    cache.observe(request(A, B), GLM, 0)
    cache.observe_output(request(A, B), GLM, y, 0)
    assert cache.observe(request(A, B, y2, D), GLM, 1).cached_tokens == 1104
    # Off (a sweep asking for it): the prompt only.
    cache = make_cache("zai", cache_output="false")
    cache.observe(request(A, B), GLM, 0)
    cache.observe_output(request(A, B), GLM, y, 0)
    assert cache.observe(request(A, B, y, D), GLM, 1).cached_tokens == 1100
    assert option_lines("zai")[1].startswith("cache_output=true [M] (seen glm-4.6: ")



def test_zai_ttl_ms_none_keeps_entries_forever():
    # Its 20-min default is a number, yet `none` (no lifetime) stays a choice: a sweep back to
    # "kept until evicted", as every ttl_ms whose default is none takes.
    assert make_cache("zai").ttl_ms == 20 * 60_000
    for text in ("none", "None", " none "):
        assert make_cache("zai", ttl_ms=text).ttl_ms is None
    assert make_cache("zai", ttl_ms="60000").ttl_ms == 60_000
    # The refusal names `none` too, and what it means.
    with pytest.raises(UserError, match=r"zai: ttl_ms must be a positive integer or none \(no lifetime \(kept until evicted\)\), got 'forever'"):
        make_cache("zai", ttl_ms="forever")
    # A number-only option still refuses it.
    with pytest.raises(UserError, match="zai: block must be a positive integer"):
        make_cache("zai", block="none")
    line = next(line for line in option_lines("zai") if line.startswith("ttl_ms="))
    assert line.endswith("; none: no lifetime (kept until evicted)")

def test_an_automatic_cache_keeps_no_answer_unless_asked():
    # xAI's, Kimi's and Gemini's caches keep the prompt only (nothing measured otherwise).
    y = make_unit("y", 300, assistant=True)
    cache = make_cache("xai")
    cache.observe(request(A, B), GROK, 0)
    cache.observe_output(request(A, B), GROK, y, 0)
    assert cache.observe(request(A, B, y, D), GROK, 1).cached_tokens == 1100
    with pytest.raises(UserError, match="xai: cache_output must be true or false, got 'maybe'"):
        from prefixbench.simulator.automatic import AutomaticCache

        AutomaticCache(name="xai", cache_output="maybe")  # type: ignore[arg-type]


def test_every_option_is_named_with_its_default_source_and_range():
    name, options = parse_cache_spec("xai:block=64,routing=random")
    cache = make_cache(name, **options)
    assert (cache.block, cache.routing, cache.servers, cache.evict_p) == (64, "random", 8, 0.0)
    assert option_lines("xai")[0] == "block=1 [M] (seen 1 (direct, OpenRouter [M]) - 64 (a gateway [M]) - 128 [S]): read step in tokens"
    assert any(line.startswith("minimums=docs [O]") for line in option_lines("gemini"))
    # openai's and anthropic's rules that the guides leave open are options too, each accepted by the model.
    assert [line.split("=")[0] for line in option_lines("openai")] == [
        "servers", "routing", "overflow_rpm", "retention", "zdr", "ttl_ms", "cache_output",
    ]
    assert [line.split("=")[0] for line in option_lines("anthropic")] == ["ttl_from", "chars_per_token"]
    for name in ("openai", "anthropic"):
        make_cache(name, **{line.split("=")[0]: line.split("=")[1].split(" ")[0] for line in option_lines(name)})
    assert option_lines("byte-exact") == ()


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


# --- Qwen: an explicit read costs 0.1x, an implicit one 0.2x -----------------------------------


def test_qwen_explicit_reads_are_priced_at_the_explicit_price_implicit_ones_at_the_read_price():
    row = get_price("qwen3-coder-plus", as_of="2025-10-01")  # input 1.00, read 0.20, explicit read 0.10
    cache = make_cache("qwen")
    cache.observe(request(A, B, marks=(1,)), QWEN, 0)
    explicit = cache.observe(request(A, B, D, marks=(2,)), QWEN, 1)
    assert explicit == CacheVerdict(1200, 1100, 100, cached_explicit_tokens=1100)
    # 1,100 read x 0.10 / 1M = 0.00011 (at the implicit 0.20 it would be 0.00022).
    assert cost_of(_Priced(explicit, 0), row).cache_read == Decimal("0.00011")
    cache.observe(request(A, C), QWEN, 2)
    implicit = cache.observe(request(A, C, D), QWEN, 3)  # unmarked: implicit, reads 4,000
    assert implicit == CacheVerdict(4100, 4000, 0)
    # 4,000 x 0.20 / 1M = 0.0008.
    assert cost_of(_Priced(implicit, 0), row).cache_read == Decimal("0.0008")


# --- Gemini explicit CachedContent: cut, cite, TTL from creation, storage -----------------------


HOUR = 3_600_000
SYSTEM, M1, M2, M3 = make_unit("sys", 3000), make_unit("m1", 2000), make_unit("m2", 100), make_unit("m3", 100)


def test_gemini_explicit_creates_a_content_of_the_older_history_cites_it_and_recreates_it_after_its_ttl():
    cache = make_cache("gemini", minimums=EARLIER, mode="explicit")  # TTL 1 h, cut before the newest message
    # t=0, 5,100 tokens on 2.5 Pro: the agent creates a content of the 5,000 before the newest
    # message (over Pro's 4,096), a call of its own (5,000 created tokens). No content was live
    # before, so the request cites nothing: all 5,100 bill as input; the content's storage for
    # its whole hour is paid now: 5,000 tokens x 3,600,000 ms.
    first = cache.observe(request(SYSTEM, M1, M2), PRO, 0)
    assert first == CacheVerdict(5100, 0, 0, stored_token_ms=5000 * HOUR, created_tokens=5000)
    # t=1 min: the prompt starts with the content: 5,000 explicit reads, 200 uncached; the cut
    # point (5,100) is only 100 past the content, under ``double`` (5,000): no new content.
    second = cache.observe(request(SYSTEM, M1, M2, M3), PRO, 60_000)
    assert second == CacheVerdict(5200, 5000, 0, cached_explicit_tokens=5000)
    # t=59:59.999 it is still live; at t=60:00 it expired (TTL from creation, used or not): a new
    # content of the 5,200 before the newest message.
    assert cache.observe(request(SYSTEM, M1, M2, M3), PRO, HOUR - 1).cached_explicit_tokens == 5000
    third = cache.observe(request(SYSTEM, M1, M2, M3, D), PRO, HOUR)
    assert third == CacheVerdict(5300, 0, 0, stored_token_ms=5200 * HOUR, created_tokens=5200)
    assert cache.created == 2
    # Dollars at 2.5 Pro (input 1.25, read 0.125, storage 4.50 per 1M tokens per hour):
    row = get_price("gemini-2.5-pro")
    one = cost_of(_Priced(first, 0), row)
    # input 5,100 x 1.25 / 1M = 0.006375; creating the content, 5,000 x 1.25 / 1M = 0.00625 (the
    # cache-write part); storage 5,000 x 1 h x 4.50 / 1M = 0.0225, its own line; total 0.035125.
    assert (one.uncached_input, one.cache_read, one.cache_write, one.storage, one.total) == (
        Decimal("0.006375"), 0, Decimal("0.00625"), Decimal("0.0225"), Decimal("0.035125"))
    two = cost_of(_Priced(second, 0), row)
    # read 5,000 x 0.125 / 1M = 0.000625; input 200 x 1.25 / 1M = 0.00025; no storage.
    assert (two.cache_read, two.uncached_input, two.storage) == (Decimal("0.000625"), Decimal("0.00025"), 0)


def test_gemini_explicit_storage_is_tokens_times_hours_at_the_storage_price():
    # A 2 h TTL on 2.5 Flash (storage 1.00 per 1M tokens per hour): a 1,100-token content costs
    # 1,100 x 2 x 1.00 / 1M = 0.0022 in storage, paid by the request that creates it.
    cache = make_cache("gemini", minimums=EARLIER, mode="explicit", explicit_ttl_ms=2 * HOUR)
    created = cache.observe(request(A, B, D), FLASH, 0)
    assert created == CacheVerdict(1200, 0, 0, stored_token_ms=1100 * 2 * HOUR, created_tokens=1100)
    cost = cost_of(_Priced(created, 0), get_price("gemini-2.5-flash"))
    # input 1,200 x 0.30 / 1M = 0.00036; creation 1,100 x 0.30 / 1M = 0.00033.
    assert (cost.storage, cost.uncached_input, cost.cache_write) == (Decimal("0.0022"), Decimal("0.00036"), Decimal("0.00033"))
    # A row without a storage price (Qwen) bills none: storage never hides in input.
    assert cost_of(_Priced(created, 0), get_price("qwen3-max")).storage == 0


def test_gemini_explicit_needs_the_model_minimum_and_implicit_never_serves_a_content_request():
    cache = make_cache("gemini", minimums=EARLIER, mode="explicit")
    # 1,100 tokens on 2.5 Flash: the cut point (1,000, before the newest message) is under the
    # 1,024 minimum: no content; the request goes implicit and is stored there (1,100).
    assert cache.observe(request(A, B), FLASH, 0) == CacheVerdict(1100, 0, 1100)
    # 1,200 tokens: the cut point (1,100) crosses the minimum: the agent creates a content. The
    # implicit cache holds these 1,100 tokens, but a request that creates or cites a content is
    # never served implicitly: 0 read (implicit mode would read 1,100 here).
    assert cache.observe(request(A, B, D), FLASH, 1) == CacheVerdict(1200, 0, 0, stored_token_ms=1100 * HOUR, created_tokens=1100)
    assert make_cache("gemini").observe(request(A, B), FLASH, 0).cached_tokens == 0
    # 1,300 tokens: cites the 1,100-token content, nothing more (the 100 after it are input).
    assert cache.observe(request(A, B, D, M2), FLASH, 2) == CacheVerdict(1300, 1100, 0, cached_explicit_tokens=1100)
    # With min_tokens=5000 no cut point here ever qualifies: the model stays implicit.
    high = make_cache("gemini", minimums=EARLIER, mode="explicit", min_tokens=5000)
    assert high.observe(request(A, B, D), FLASH, 0).stored_token_ms == 0 and high.created == 0


def test_gemini_explicit_refresh_doubles_the_content_or_steps_by_the_given_tokens():
    x, steps = make_unit("x", 1100), [make_unit(f"s{i}", 600) for i in range(4)]
    cache = make_cache("gemini", minimums=EARLIER, mode="explicit")
    assert cache.observe(request(x, steps[0]), FLASH, 0).created_tokens == 1100  # creates 1,100
    # Cut 1,700: 600 past the 1,100 content, under 1,100 (double): cite.
    assert cache.observe(request(x, *steps[:2]), FLASH, 1).cached_explicit_tokens == 1100
    # Cut 2,300: 1,200 past it: a new content of 2,300 (the old one lives on until its TTL); the
    # request itself still cites the 1,100 one.
    assert cache.observe(request(x, *steps[:3]), FLASH, 2) == CacheVerdict(
        2900, 1100, 0, cached_explicit_tokens=1100, stored_token_ms=2300 * HOUR, created_tokens=2300)
    # The longest live content is cited.
    assert cache.observe(request(x, *steps), FLASH, 3).cached_explicit_tokens == 2300
    # explicit_refresh=500: the 600-token step is enough for a new content every time.
    every = make_cache("gemini", minimums=EARLIER, mode="explicit", explicit_refresh="500")
    every.observe(request(x, steps[0]), FLASH, 0)
    assert every.observe(request(x, *steps[:2]), FLASH, 1).created_tokens == 1700


def test_gemini_explicit_head_keeps_tools_and_system_across_a_rewritten_history():
    tools, system = make_unit("tools", 2000), make_unit("system", 2500)
    cache = make_cache("gemini", minimums=EARLIER, mode="explicit", explicit_at="head")

    def with_head(*messages: RenderedUnit) -> RenderedRequest:
        return RenderedRequest(request(tools, system, *messages).units, 2)

    # 2.5 Pro: tools + system = 4,500 tokens (over 4,096): one content of them.
    assert cache.observe(with_head(M1, M2), PRO, 0) == CacheVerdict(6600, 0, 0, stored_token_ms=4500 * HOUR, created_tokens=4500)
    # The history is compacted (another first message): the content still fits, 4,500 read.
    assert cache.observe(with_head(M3, D), PRO, 1) == CacheVerdict(4700, 4500, 0, cached_explicit_tokens=4500)


def test_gemini_explicit_options_are_listed_and_checked():
    assert any(line.startswith("mode=implicit [O]") for line in option_lines("gemini"))
    assert any(line.startswith("explicit_ttl_ms=3600000 [O]") for line in option_lines("gemini"))
    for options, message in (({"mode": "both"}, "mode must be implicit or explicit"),
                             ({"mode": "explicit", "explicit_at": "tail"}, "explicit_at must be one of history, head"),
                             ({"mode": "explicit", "explicit_ttl_ms": "0"}, "explicit_ttl_ms must be a positive integer"),
                             ({"mode": "explicit", "explicit_refresh": "-3"}, "explicit_refresh must be 'double'")):
        with pytest.raises(UserError, match=message):
            make_cache("gemini", **options)


class _Priced:
    def __init__(self, verdict: CacheVerdict, output: int) -> None:
        self.prompt_tokens = verdict.prompt_tokens
        self.cached_tokens = verdict.cached_tokens
        self.written_tokens = verdict.written_tokens
        self.written_long_tokens = 0
        self.output_tokens = output
        self.cached_explicit_tokens = verdict.cached_explicit_tokens
        self.stored_token_ms = verdict.stored_token_ms
        self.created_tokens = verdict.created_tokens
