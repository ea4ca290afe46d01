"""The self-hosted engines: vllm (hashed 16-token blocks, LRU free queue) and radix (SGLang)."""

from __future__ import annotations

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.blocks import RadixCache, VllmCache, family_salt
from prefixbench.simulator.cache import CacheVerdict
from tests.unit.simulator.unit_builders import ENV, OTHER_ENV, make_rendered, make_unit

A = make_unit("A", 100)
A96 = make_unit("A", 96)  # the first 96 tokens of A
B = make_unit("B", 50)
REPLY = make_unit("R", 60, assistant=True)
TOOL = make_unit("T", 20)

# --- vllm --------------------------------------------------------------------------------


def test_vllm_caches_full_blocks_only_and_recomputes_the_last_token():
    cache = VllmCache()
    # 100 tokens: 6 full blocks cached, the 4-token tail is not.
    assert cache.observe(make_rendered(A), ENV, 0) == CacheVerdict(100, 0, 96)
    assert cache.observe(make_rendered(A), ENV, 1) == CacheVerdict(100, 96, 0)
    # Exactly 6 blocks: the last one is recomputed, floor((96 - 1) / 16) * 16 = 80.
    assert cache.observe(make_rendered(A96), ENV, 2) == CacheVerdict(96, 80, 0)
    # An extension reads A's 6 blocks and caches the 3 new full ones.
    assert cache.observe(make_rendered(A, B), ENV, 3) == CacheVerdict(150, 96, 48)
    assert cache.observe(make_rendered(A), OTHER_ENV, 4) == CacheVerdict(100, 0, 96)
    assert family_salt(ENV) != family_salt(OTHER_ENV)


def test_vllm_evicts_the_least_recently_freed_blocks_last_block_first():
    x, y, z = make_unit("X", 64), make_unit("Y", 64), make_unit("Z", 32)
    cache = VllmCache(capacity_blocks=8)
    cache.observe(make_rendered(x), ENV, 0)  # blocks 0-3
    cache.observe(make_rendered(y), ENV, 1)  # blocks 4-7; x freed as 3, 2, 1, 0
    # Free queue after y finishes: [3, 2, 1, 0, 7, 6, 5, 4]: z's 2 blocks evict x's LAST two.
    cache.observe(make_rendered(z), ENV, 2)
    assert cache.observe(make_rendered(x), ENV, 3).cached_tokens == 32
    # x re-computed its blocks 2-3 from the queue's head: y's last two blocks.
    assert cache.observe(make_rendered(y), ENV, 4).cached_tokens == 32
    # Every block of the pool is in use: x (4) and y's first two after the re-computes.
    assert cache.num_cached_blocks == 8


def test_vllm_caches_the_reply_decode_blocks():
    cache = VllmCache()
    cache.observe(make_rendered(A), ENV, 0)
    cache.observe_output(make_rendered(A), ENV, REPLY, 0)
    # A + reply = 160 tokens = 10 full blocks, all reusable by the next prompt.
    assert cache.observe(make_rendered(A, REPLY, TOOL), ENV, 1) == CacheVerdict(180, 160, 16)
    plain = VllmCache(cache_output=False)
    plain.observe(make_rendered(A), ENV, 0)
    plain.observe_output(make_rendered(A), ENV, REPLY, 0)
    assert plain.observe(make_rendered(A, REPLY, TOOL), ENV, 1).cached_tokens == 96


def test_vllm_block_size_is_configurable():
    cache = VllmCache(block_size=32)
    cache.observe(make_rendered(A), ENV, 0)
    assert cache.observe(make_rendered(A), ENV, 1).cached_tokens == 96  # 3 blocks of 32


def test_vllm_a_prompt_larger_than_the_pool_keeps_what_fits():
    cache = VllmCache(capacity_blocks=4)
    assert cache.observe(make_rendered(A), ENV, 0) == CacheVerdict(100, 0, 64)
    assert cache.observe(make_rendered(A), ENV, 1).cached_tokens == 64


# --- radix -------------------------------------------------------------------------------


def test_radix_reads_the_longest_stored_prefix_but_the_last_token():
    cache = RadixCache()
    assert cache.observe(make_rendered(A), ENV, 0) == CacheVerdict(100, 0, 100)
    assert cache.observe(make_rendered(A), ENV, 1) == CacheVerdict(100, 99, 0)
    assert cache.observe(make_rendered(A, B), ENV, 2) == CacheVerdict(150, 100, 50)
    assert cache.observe(make_rendered(A96), ENV, 3) == CacheVerdict(96, 95, 0)
    assert cache.observe(make_rendered(A), OTHER_ENV, 4) == CacheVerdict(100, 0, 100)
    assert cache.num_tokens == 250


def test_radix_evicts_the_least_recently_used_leaf_under_its_capacity():
    x, y, z = make_unit("X", 100), make_unit("Y", 100), make_unit("Z", 100)
    cache = RadixCache(capacity_tokens=250)
    for tick, unit in enumerate((x, y, z)):
        cache.observe(make_rendered(unit), ENV, tick)
    assert cache.num_tokens == 200  # z needed 100, 50 were free: x (oldest) went
    assert cache.observe(make_rendered(z), ENV, 3).cached_tokens == 99
    assert cache.observe(make_rendered(y), ENV, 4).cached_tokens == 99
    assert cache.observe(make_rendered(x), ENV, 5).cached_tokens == 0


def test_radix_never_evicts_the_prefix_it_extends_and_stores_what_fits():
    x, tail = make_unit("X", 100), make_unit("B", 100)
    cache = RadixCache(capacity_tokens=150)
    cache.observe(make_rendered(x), ENV, 0)
    assert cache.observe(make_rendered(x, tail), ENV, 1) == CacheVerdict(200, 100, 50)
    assert cache.num_tokens == 150
    assert cache.observe(make_rendered(x, tail), ENV, 2).cached_tokens == 150


def test_radix_inserts_the_finished_request_with_its_reply():
    cache = RadixCache()
    cache.observe(make_rendered(A), ENV, 0)
    cache.observe_output(make_rendered(A), ENV, REPLY, 0)
    assert cache.observe(make_rendered(A, REPLY, TOOL), ENV, 1) == CacheVerdict(180, 160, 20)


@pytest.mark.parametrize(
    ("factory", "options", "message"),
    [
        (VllmCache, {"block_size": 0}, "vllm: block_size must be a positive integer, got 0"),
        (VllmCache, {"capacity_blocks": "many"}, "vllm: capacity_blocks must be a positive integer, got 'many'"),
        (RadixCache, {"capacity_tokens": -1}, "radix: capacity_tokens must be a positive integer, got -1"),
        (RadixCache, {"cache_output": 1}, "radix: cache_output must be true or false, got 1"),
    ],
)
def test_bad_options_name_the_option(factory, options, message):
    with pytest.raises(UserError) as error:
        factory(**options)
    assert str(error.value) == message
