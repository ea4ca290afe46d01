"""The openai cache model: pre-5.6 1024 + 128-step hits, 5.6 breakpoints, idle retention."""

from __future__ import annotations

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.cache import CacheVerdict
from prefixbench.simulator.openai import OpenAICache, rounded_hit
from prefixbench.simulator.render import RenderedRequest, RenderedUnit
from prefixbench.simulator.tokens import token_view
from tests.unit.simulator.unit_builders import ENV, OTHER_ENV, make_rendered, make_unit

A = make_unit("A", 2000)
B = make_unit("B", 1000)
C = make_unit("C", 1000)
D = make_unit("D", 500)
SHORT = make_unit("S", 1000)
#: The first 1500 tokens of A, then D: leaves A in the middle of its unit.
A_HEAD_D = RenderedUnit("message", A.data[:6000] + D.data)


def verdict(prompt: int, cached: int, written: int) -> CacheVerdict:
    return CacheVerdict(prompt, cached, written)


def test_rounded_hit_is_1024_then_128_steps():
    assert [rounded_hit(n) for n in (0, 1023, 1024, 1151, 1152, 2000, 3000)] == [0, 0, 1024, 1024, 1152, 1920, 2944]


def test_pre_56_reads_the_shared_prefix_in_128_token_steps():
    cache = OpenAICache()
    # A first request stores its cacheable part: 1024 + 7 * 128 of its 2000 tokens.
    assert cache.observe(make_rendered(A), ENV, 0) == verdict(2000, 0, 1920)
    # An extension shares all 2000 tokens of A: read 1920, write up to its own 2944 boundary.
    assert cache.observe(make_rendered(A, B), ENV, 1000) == verdict(3000, 1920, 1024)
    assert cache.observe(make_rendered(A, B), ENV, 2000) == verdict(3000, 2944, 0)
    # Leaving A part-way still reads the shared 1500 tokens, rounded down: no breakpoints here.
    assert cache.observe(make_rendered(A_HEAD_D), ENV, 3000) == verdict(2000, 1408, 512)
    # Another family shares nothing.
    assert cache.observe(make_rendered(A, B), OTHER_ENV, 4000) == verdict(3000, 0, 2944)


def test_pre_56_neither_reads_nor_stores_a_prompt_under_1024_tokens():
    cache = OpenAICache()
    assert cache.observe(make_rendered(SHORT), ENV, 0) == verdict(1000, 0, 0)
    # SHORT was not stored, so its extension starts cold.
    assert cache.observe(make_rendered(SHORT, B), ENV, 1) == verdict(2000, 0, 1920)


def test_in_memory_entries_expire_after_ten_idle_minutes_and_reads_refresh_them():
    cache = OpenAICache()
    assert cache.ttl_ms == 600_000
    cache.observe(make_rendered(A), ENV, 0)
    assert cache.observe(make_rendered(A, B), ENV, 599_999).cached_tokens == 1920
    # Idle time counts from the last use, not from the first write.
    assert cache.observe(make_rendered(A, B, C), ENV, 1_199_998).cached_tokens == 2944
    # Idle for exactly the TTL: gone, the request starts cold.
    assert cache.observe(make_rendered(A, B, C), ENV, 1_799_998).cached_tokens == 0


def test_24h_retention_and_ttl_override():
    extended = OpenAICache(retention="24h")
    extended.observe(make_rendered(A), ENV, 0)
    assert extended.observe(make_rendered(A, B), ENV, 3_600_000).cached_tokens == 1920
    short = OpenAICache(ttl_ms=1000)
    short.observe(make_rendered(A), ENV, 0)
    assert short.observe(make_rendered(A, B), ENV, 1000).cached_tokens == 0


def test_56_reads_exactly_up_to_a_stored_breakpoint_and_bills_the_write():
    cache = OpenAICache(mode="5.6")
    assert cache.ttl_ms == 30 * 60_000
    assert cache.observe(make_rendered(A), ENV, 0) == verdict(2000, 0, 2000)
    # The implicit breakpoint sat at the end of A: no 128 rounding.
    assert cache.observe(make_rendered(A, B), ENV, 1) == verdict(3000, 2000, 1000)
    # A branch after A (a summary call) still reads A's breakpoint.
    assert cache.observe(make_rendered(A, C), ENV, 2) == verdict(3000, 2000, 1000)
    # Leaving A part-way: no breakpoint inside the shared 1500 tokens, no fallback: a miss.
    assert cache.observe(make_rendered(A_HEAD_D), ENV, 3) == verdict(2000, 0, 2000)


def test_56_needs_1024_tokens_before_a_breakpoint():
    cache = OpenAICache(mode="5.6")
    assert cache.observe(make_rendered(SHORT), ENV, 0) == verdict(1000, 0, 0)
    assert cache.observe(make_rendered(SHORT, B), ENV, 1) == verdict(2000, 0, 2000)


def test_56_reads_only_the_latest_breakpoints():
    narrow = OpenAICache(mode="5.6", lookback=2)
    wide = OpenAICache(mode="5.6", lookback=3)
    for cache in (narrow, wide):
        for tick, units in enumerate(((A,), (A, B), (A, B, C))):
            cache.observe(make_rendered(*units), ENV, tick)
    # A's breakpoint was the 3rd-latest write: outside a lookback of 2.
    assert narrow.observe(make_rendered(A, D), ENV, 9).cached_tokens == 0
    assert wide.observe(make_rendered(A, D), ENV, 9).cached_tokens == 2000


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "5.5"}, "openai: mode must be one of pre-5.6, 5.6, got '5.5'"),
        ({"retention": "1h"}, "openai: retention must be one of in_memory, 24h, got '1h'"),
        ({"mode": "5.6", "retention": "24h"}, "openai: retention applies to mode pre-5.6 only"),
        ({"ttl_ms": 0}, "openai: ttl_ms must be a positive integer"),
        ({"lookback": -1}, "openai: lookback must be a positive integer"),
    ],
)
def test_bad_options_name_the_option(options, message):
    with pytest.raises(UserError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        OpenAICache(**options)


# Routing (the guide: a hash of the first ~256 tokens, with prompt_cache_key; ~15 requests a
# minute per (prefix, key) before some overflow to other machines).
SYSTEM = make_unit("SYS", 2000)
FIRST_X = make_unit("X", 1000)
FIRST_Y = make_unit("Y", 1000)


def conversation(*units: RenderedUnit) -> RenderedRequest:
    """System, then the messages: the first message (index 1) opens the conversation."""
    return RenderedRequest((SYSTEM, *units), 1)


def test_one_machine_is_the_default_and_conversations_share_the_system_prompt():
    cache = OpenAICache()
    assert (cache.servers, cache.routing, cache.overflow_rpm) == (1, "key", 15)
    cache.observe(conversation(FIRST_X), ENV, 0)
    # Y shares the 2,000-token system prompt with X: 1024 + 7 * 128 = 1,920 read.
    assert cache.observe(conversation(FIRST_Y), ENV, 1000) == verdict(3000, 1920, 1024)


def test_key_routing_sends_two_conversations_to_different_machines_so_the_second_misses():
    cache = OpenAICache(servers=16)
    x, y = conversation(FIRST_X), conversation(FIRST_Y)
    homes = [cache.server_of(r, ENV, token_view(r, cache.tokenizer), 0) for r in (x, y)]
    assert homes[0] != homes[1]  # pinned: these two keys hash to machines 4 and 12 of 16
    cache = OpenAICache(servers=16)
    cache.observe(x, ENV, 0)
    assert cache.observe(y, ENV, 1000) == verdict(3000, 0, 2944)  # its machine holds nothing
    # Without a key, the same first 256 tokens route both to one machine: Y reads the system prompt.
    shared = OpenAICache(servers=16, routing="prefix")
    shared.observe(x, ENV, 0)
    assert shared.observe(y, ENV, 1000) == verdict(3000, 1920, 1024)


def test_a_pair_over_its_rate_overflows_to_another_machine_and_misses():
    cache = OpenAICache(servers=4, overflow_rpm=2)
    first, second = conversation(FIRST_X), conversation(FIRST_X, B)
    assert cache.observe(first, ENV, 0) == verdict(3000, 0, 2944)
    assert cache.observe(second, ENV, 10_000) == verdict(4000, 2944, 1024)  # 1 earlier in the minute: home
    # The third in one minute overflows: the next machine holds nothing.
    assert cache.observe(second, ENV, 20_000) == verdict(4000, 0, 3968)
    # A minute after the first two the rate is back under 2 (only the 20 s one is recent): home again.
    assert cache.observe(second, ENV, 70_001) == verdict(4000, 3968, 0)
    # overflow_rpm=None never overflows.
    steady = OpenAICache(servers=4, overflow_rpm=None)
    for tick in range(0, 60_000, 1_000):
        steady.observe(first, ENV, tick)
    assert steady.observe(first, ENV, 60_000).cached_tokens == 2944


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"servers": 0}, "servers must be an integer from 1 to 4096"),
        ({"routing": "sticky"}, "routing must be one of key, prefix"),
        ({"overflow_rpm": 0}, "overflow_rpm must be a positive integer"),
    ],
)
def test_bad_routing_options_name_themselves(options, message):
    with pytest.raises(UserError, match=message):
        OpenAICache(**options)


# Output (``cache_output``): the cache keeps a response after its prompt, so a next prompt that
# sends the response back reads into it (measured on Codex traffic; the audit turns it on).
REPLY = make_unit("R", 700, assistant=True)
OTHER_REPLY = make_unit("Q", 700, assistant=True)


def test_a_kept_response_is_read_by_the_prompt_that_sends_it_back_in_128_steps():
    cache = OpenAICache(cache_output=True)
    cache.observe(make_rendered(A), ENV, 0)
    cache.observe_output(make_rendered(A), ENV, REPLY, 0)
    # A (2,000) + the reply (700) = 2,700 tokens held: 1024 + 13 * 128 = 2,688 read.
    assert cache.observe(make_rendered(A, REPLY, D), ENV, 1000) == verdict(3200, 2688, 512)
    # A prompt that sends another reply back holds A only: 1,920, as without output.
    assert cache.observe(make_rendered(A, OTHER_REPLY, D), ENV, 2000).cached_tokens == 1920


def test_output_is_not_kept_by_default_nor_in_56_mode():
    for cache in (OpenAICache(), OpenAICache(mode="5.6", cache_output=True)):
        cache.observe(make_rendered(A), ENV, 0)
        cache.observe_output(make_rendered(A), ENV, REPLY, 0)
        assert cache.observe(make_rendered(A, REPLY, D), ENV, 1000).cached_tokens in (1920, 2000)


def test_a_kept_response_lives_on_the_machine_its_prompt_went_to():
    cache = OpenAICache(servers=16, cache_output=True)
    x = conversation(FIRST_X)
    cache.observe(x, ENV, 0)
    cache.observe_output(x, ENV, REPLY, 0)
    # System (2,000) + X (1,000) + the reply (700) = 3,700: 1024 + 20 * 128 = 3,584 read.
    assert cache.observe(conversation(FIRST_X, REPLY, D), ENV, 1000).cached_tokens == 3584


def test_cache_output_must_be_a_bool():
    with pytest.raises(UserError, match="^openai: cache_output must be true or false, got 'yes'"):
        OpenAICache(cache_output="yes")  # type: ignore[arg-type]


def test_each_request_gets_its_own_lifetime_by_model_and_body():
    """A 20-minute gap: gpt-5.5 keeps its prefix (24 h only), gpt-4o does not (in memory only,
    10 min), gpt-5.1 keeps it unless its body asks ``in_memory`` (then 10 min)."""
    from msgspec.structs import replace

    from prefixbench.simulator.wire import Envelope

    twenty_min = 20 * 60_000
    for model, asked, read in (("gpt-5.5", None, 1920), ("gpt-5.5", "in_memory", 1920), ("gpt-4o", "24h", 0),
                               ("gpt-5.1", None, 1920), ("gpt-5.1", "24h", 1920), ("gpt-5.1", "in_memory", 0)):
        cache, env = OpenAICache(), Envelope("openai", model)
        first, second = (replace(make_rendered(*units), retention=asked) for units in ((A,), (A, B)))
        cache.observe(first, env, 0)
        assert cache.observe(second, env, twenty_min).cached_tokens == read, (model, asked)
    # 4 minutes is inside the in-memory lifetime.
    cache, env = OpenAICache(), Envelope("openai", "gpt-4o")
    cache.observe(make_rendered(A), env, 0)
    assert cache.observe(make_rendered(A, B), env, 4 * 60_000).cached_tokens == 1920
    # A ZDR organization's gpt-5.1 defaults to in memory; retention= forces one policy on every request.
    for options, read in (({"zdr": True}, 0), ({"retention": "in_memory"}, 0), ({"retention": "24h"}, 1920)):
        cache, env = OpenAICache(**options), Envelope("openai", "gpt-5.1")
        cache.observe(make_rendered(A), env, 0)
        assert cache.observe(make_rendered(A, B), env, twenty_min).cached_tokens == read, options
