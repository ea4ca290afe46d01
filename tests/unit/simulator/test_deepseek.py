"""The deepseek cache model: a hit needs a whole stored unit; units at input and output ends."""

from __future__ import annotations

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.cache import CacheVerdict
from prefixbench.simulator.deepseek import DeepSeekCache
from tests.unit.simulator.unit_builders import ENV, OTHER_ENV, make_rendered, make_unit

A = make_unit("A", 1000)
B = make_unit("B", 500)
C = make_unit("C", 500)
#: The model's reply to A, and the tool result after it.
REPLY = make_unit("Y", 300, assistant=True)
TOOL = make_unit("T", 200)
OTHER_TOOL = make_unit("U", 200)


def test_an_extension_reads_the_previous_prompt_in_whole_units():
    cache = DeepSeekCache()
    assert cache.observe(make_rendered(A), ENV, 0) == CacheVerdict(1000, 0, 1000)
    # A's end of input is a unit, 1000 tokens; every read DeepSeek reports is whole 128-token
    # units, so it reads 7 x 128 = 896. No write fee: all of the uncached part is stored.
    assert cache.observe(make_rendered(A, B), ENV, 1) == CacheVerdict(1500, 896, 604)
    assert cache.observe(make_rendered(A, B), OTHER_ENV, 2) == CacheVerdict(1500, 0, 1500)
    # In the 64-token units of 2025: 15 x 64 = 960.
    old = DeepSeekCache(interval=64)
    old.observe(make_rendered(A), ENV, 0)
    assert old.observe(make_rendered(A, B), ENV, 1).cached_tokens == 960


def test_without_whole_units_a_message_end_is_read_to_its_token():
    # The guide's wording alone: the unit at the end of A's input is read whole, 1000 tokens.
    cache = DeepSeekCache(whole_units=False)
    cache.observe(make_rendered(A), ENV, 0)
    assert cache.observe(make_rendered(A, B), ENV, 1) == CacheVerdict(1500, 1000, 500)


def test_a_resent_prompt_reads_its_last_interval_unit_not_its_own_end():
    # The last token is always computed, so the unit at the very end cannot be read.
    for interval, expected in ((128, 896), (64, 960)):
        cache = DeepSeekCache(interval=interval)
        cache.observe(make_rendered(A), ENV, 0)
        assert cache.observe(make_rendered(A), ENV, 1).cached_tokens == expected


def test_the_documented_example_a_miss_stores_the_common_prefix():
    # kv_cache guide: A+B, then A+C misses and stores A, then A+D hits A. Read to the token, as
    # the guide's wording alone has it; in whole 128-token units, a 100-token A reads nothing.
    a, b, c, d = make_unit("a", 100), make_unit("b", 50), make_unit("c", 50), make_unit("d", 50)
    cache = DeepSeekCache(whole_units=False)
    cache.observe(make_rendered(a, b), ENV, 0)
    assert cache.observe(make_rendered(a, c), ENV, 1).cached_tokens == 0
    assert cache.observe(make_rendered(a, d), ENV, 2).cached_tokens == 100
    whole = DeepSeekCache()
    assert [whole.observe(make_rendered(a, tail), ENV, tick).cached_tokens for tick, tail in enumerate((b, c, d))] == [0, 0, 0]
    without = DeepSeekCache(common_prefix_units=False)
    for tick, tail in enumerate((b, c, d)):
        assert without.observe(make_rendered(a, tail), ENV, tick).cached_tokens == 0


def test_long_shared_prefixes_hit_at_interval_units():
    cache = DeepSeekCache()
    cache.observe(make_rendered(A, B), ENV, 0)
    # Leaving A+B inside B: 1000 + 0 shared tokens; the deepest unit is the interval at 896.
    assert cache.observe(make_rendered(A, C), ENV, 1).cached_tokens == 896


def test_the_reply_is_a_unit_as_soon_as_it_is_produced():
    cache = DeepSeekCache()
    cache.observe(make_rendered(A), ENV, 0)
    cache.observe_output(make_rendered(A), ENV, REPLY, 0)
    # The reply's end, 1300 tokens, read in whole units: 10 x 128 = 1280.
    assert cache.observe(make_rendered(A, REPLY, TOOL), ENV, 1) == CacheVerdict(1500, 1280, 220)


def test_without_cache_output_the_reply_unit_comes_from_the_replayed_assistant_message():
    cache = DeepSeekCache(cache_output=False, whole_units=False)
    cache.observe(make_rendered(A), ENV, 0)
    cache.observe_output(make_rendered(A), ENV, REPLY, 0)
    # Only A's end of input is stored, as the byte-exact reference would see it.
    assert cache.observe(make_rendered(A, REPLY, TOOL), ENV, 1).cached_tokens == 1000
    # That prompt replayed the reply: its end became a unit (the interval below is 1280).
    assert cache.observe(make_rendered(A, REPLY, OTHER_TOOL), ENV, 2).cached_tokens == 1300


def test_no_expiry_by_default_and_an_optional_idle_ttl():
    forever = DeepSeekCache()
    forever.observe(make_rendered(A), ENV, 0)
    assert forever.observe(make_rendered(A, B), ENV, 10**12).cached_tokens == 896
    idle = DeepSeekCache(ttl_ms=1000)
    idle.observe(make_rendered(A), ENV, 0)
    assert idle.observe(make_rendered(A, B), ENV, 999).cached_tokens == 896
    assert idle.observe(make_rendered(A, B, C), ENV, 1999).cached_tokens == 0


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"interval": 100}, "deepseek: interval must be 64 or 128 (tokens), got 100"),
        ({"ttl_ms": -5}, "deepseek: ttl_ms must be a positive integer (ms), got -5"),
        ({"cache_output": "yes"}, "deepseek: cache_output must be true or false, got 'yes'"),
        ({"whole_units": 1}, "deepseek: whole_units must be true or false, got 1"),
    ],
)
def test_bad_options_name_the_option(options, message):
    with pytest.raises(UserError) as error:
        DeepSeekCache(**options)
    assert str(error.value) == message
