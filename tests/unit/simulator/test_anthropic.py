"""The anthropic cache model: breakpoints, lookback, minimum length, TTL, in-flight misses, write split.

Every test counts one token per rendered character (``chars_per_token=1``) and builds its
prompt from messages that render to exactly 1,000 characters each, one text block apiece, so
the boundary of message ``k`` sits at token ``1000 * k + 998`` (the block ends 2 characters
before the message's closing ``]}``) and the prompt of ``n`` messages is ``1000 * n`` tokens.
"""

from __future__ import annotations

import json
import math

import pytest

from prefixbench.simulator.anthropic import (
    DEFAULT_CHARS_PER_TOKEN,
    AnthropicCache,
    min_cacheable_tokens,
    prompt_chars,
)
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.render import render_request
from prefixbench.simulator.wire import (
    CacheBreakpoint,
    CacheTtl,
    Envelope,
    Message,
    Reasoning,
    Request,
    Text,
    ToolSchema,
)

ENVELOPE = Envelope("anthropic", "claude-test")
#: 26 message head + 23 block head + 947 text + 2 block tail + 2 message tail = 1,000 characters.
TEXT_CHARS = 947


def make_messages(num: int, salt: str = "") -> tuple[Message, ...]:
    """``num`` one-block messages of exactly 1,000 rendered characters, all different."""
    messages = []
    for idx in range(num):
        label = f"{salt}m{idx:03d} "
        # One role throughout keeps every message the same size; the cache does not check turns.
        messages.append(Message("user", (Text(label + "x" * (TEXT_CHARS - len(label))),)))
    return tuple(messages)


def make_request(
    num: int, *marks: tuple[int, CacheTtl] | int, envelope: Envelope = ENVELOPE, auto: CacheTtl | None = None
) -> Request:
    """A request of ``num`` messages with a breakpoint on each message index in ``marks``."""
    pairs = [(mark, "5m") if isinstance(mark, int) else mark for mark in marks]
    breakpoints = tuple(CacheBreakpoint("messages", 0, message_idx, ttl) for message_idx, ttl in pairs)
    return Request(envelope, make_messages(num), cache_breakpoints=breakpoints, auto_cache=auto)


def boundary(message_idx: int) -> int:
    """Token position of the end of message ``message_idx``'s block."""
    return 1000 * message_idx + 998


def send(
    cache: AnthropicCache, request: Request, tick: int = 0, ready_tick: int | None = None
) -> tuple[int, int, int, int]:
    """(read, written, written_1h, uncached) of one request."""
    verdict = cache.observe(render_request(request), request.envelope, tick, ready_tick=ready_tick)
    assert verdict.cached_tokens + verdict.written_tokens <= verdict.prompt_tokens
    uncached = verdict.prompt_tokens - verdict.cached_tokens - verdict.written_tokens
    return verdict.cached_tokens, verdict.written_tokens, verdict.written_long_tokens, uncached


def make_cache(min_tokens: int = 500, **options: int | str | None) -> AnthropicCache:
    return AnthropicCache(chars_per_token=1.0, min_tokens=min_tokens, **options)


def test_layout_of_the_test_messages():
    rendered = render_request(make_request(3, 2))
    assert [len(unit.data) for unit in rendered.units] == [1000, 1000, 1000]
    assert rendered.units[2].block_ends == (998,)


def test_first_request_writes_up_to_its_last_breakpoint_and_the_tail_is_uncached():
    cache = make_cache()
    assert send(cache, make_request(3, 2)) == (0, boundary(2), 0, 2)


def test_next_turn_reads_the_previous_breakpoint_through_the_lookback():
    # Claude Code's rolling layout: the breakpoint moves to the newest message each turn; the
    # earlier entry sits two blocks back and is found by the lookback, not by a breakpoint.
    cache = make_cache()
    send(cache, make_request(3, 2), tick=0)
    assert send(cache, make_request(5, 4), tick=1) == (boundary(2), boundary(4) - boundary(2), 0, 2)


def test_request_without_breakpoints_is_all_uncached_when_taken_literally():
    cache = make_cache(auto_when_unmarked=None)
    assert send(cache, make_request(3)) == (0, 0, 0, 3000)
    assert send(cache, make_request(3, 2), tick=1) == (0, boundary(2), 0, 2)


def test_request_without_breakpoints_is_automatic_by_default():
    # Kernel-built requests mark nothing; by default they are priced as automatic caching.
    cache = make_cache()
    assert send(cache, make_request(3), tick=0) == (0, boundary(2), 0, 2)
    assert send(cache, make_request(5), tick=1) == (boundary(2), boundary(4) - boundary(2), 0, 2)


def test_lookback_reaches_20_boundaries_including_the_breakpoint_own():
    # An entry at message 0; a later breakpoint on message 19 checks boundaries 19..0 (20 of
    # them) and finds it; one on message 20 checks 20..1 and misses.
    near, far = make_cache(), make_cache()
    for cache in (near, far):
        send(cache, make_request(1, 0), tick=0)
    assert send(near, make_request(21, 19), tick=1)[0] == boundary(0)
    assert send(far, make_request(21, 20), tick=1)[0] == 0


def test_content_further_back_needs_its_own_breakpoint():
    cache = make_cache()
    send(cache, make_request(1, 0), tick=0)
    read, written, _, _ = send(cache, make_request(21, 0, 20), tick=1)
    assert (read, written) == (boundary(0), boundary(20) - boundary(0))


def test_lookback_option_narrows_the_window():
    cache = make_cache(lookback_blocks=2)
    send(cache, make_request(1, 0), tick=0)
    assert send(cache, make_request(3, 2), tick=1)[0] == 0  # checks 2 and 1 only


def test_breakpoint_below_the_minimum_neither_writes_nor_reads():
    cache = make_cache(min_tokens=1024)
    # Message 0 ends at 998 tokens < 1024: nothing is cached, twice.
    assert send(cache, make_request(2, 0), tick=0) == (0, 0, 0, 2000)
    assert send(cache, make_request(2, 0), tick=1) == (0, 0, 0, 2000)
    # Message 1 ends at 1,998: cacheable; the short breakpoint beside it is ignored.
    assert send(cache, make_request(2, 0, 1), tick=2) == (0, boundary(1), 0, 2)
    assert send(cache, make_request(2, 0, 1), tick=3) == (boundary(1), 0, 0, 2)


def test_minimum_comes_from_the_model_table():
    assert min_cacheable_tokens("claude-sonnet-4-20250514") == 1024
    assert min_cacheable_tokens("claude-3-5-haiku-20241022") == 2048
    assert min_cacheable_tokens("claude-3-haiku-20240307") == 2048
    assert min_cacheable_tokens("claude-3-7-sonnet-20250219") == 1024
    assert min_cacheable_tokens("claude-opus-4-20250514") == 1024
    assert min_cacheable_tokens("claude-opus-4-1-20250805") == 1024
    assert min_cacheable_tokens("claude-opus-4-5-20251101") == 4096
    assert min_cacheable_tokens("claude-opus-4-6") == 4096
    assert min_cacheable_tokens("claude-opus-4-7") == 2048
    assert min_cacheable_tokens("claude-haiku-4-5-20251001") == 4096
    assert min_cacheable_tokens("claude-sonnet-4-5-20250929") == 1024
    assert min_cacheable_tokens("claude-opus-5") == 512
    assert min_cacheable_tokens("some-unknown-model") == 1024
    # A 1,998-token prefix is cached on Sonnet 4 (1,024) but not on Haiku 3.5 (2,048).
    sonnet = Envelope("anthropic", "claude-sonnet-4-20250514")
    haiku = Envelope("anthropic", "claude-3-5-haiku-20241022")
    cache = AnthropicCache(chars_per_token=1.0)
    assert send(cache, make_request(2, 1, envelope=sonnet))[1] == boundary(1)
    assert send(cache, make_request(2, 1, envelope=haiku))[1] == 0


def test_entry_expires_after_its_ttl_unless_a_hit_refreshes_it():
    cache = make_cache()
    send(cache, make_request(3, 2), tick=0)  # alive until 300,000
    assert send(cache, make_request(3, 2), tick=299_999)[0] == boundary(2)  # refreshed to 599,999
    assert send(cache, make_request(3, 2), tick=599_998)[0] == boundary(2)  # refreshed to 899,998
    assert send(cache, make_request(3, 2), tick=899_998) == (0, boundary(2), 0, 2)  # expired: written again


def test_entry_without_a_hit_expires_after_five_minutes():
    cache = make_cache()
    send(cache, make_request(3, 2), tick=0)
    assert send(cache, make_request(5, 4), tick=300_000)[0] == 0


def test_one_hour_entry_outlives_five_minutes():
    cache = make_cache()
    send(cache, make_request(3, (2, "1h")), tick=0)
    assert send(cache, make_request(5, 4), tick=3_599_999)[0] == boundary(2)
    late = make_cache()
    send(late, make_request(3, (2, "1h")), tick=0)
    assert send(late, make_request(5, 4), tick=3_600_000)[0] == 0


def test_lifetime_counts_from_the_request_start_so_a_long_response_uses_part_of_it():
    # Sent at 0, its response streams from 10 s: the 5 min entry is readable from 10,000 and
    # gone at 300,000 (start + 5 min), not at 310,000.
    cache = make_cache()
    send(cache, make_request(3, 2), tick=0, ready_tick=10_000)
    assert send(cache, make_request(3, 2), tick=9_999)[0] == 0  # in flight
    fresh = make_cache()
    send(fresh, make_request(3, 2), tick=0, ready_tick=10_000)
    assert send(fresh, make_request(3, 2), tick=299_999)[0] == boundary(2)
    late = make_cache()
    send(late, make_request(3, 2), tick=0, ready_tick=10_000)
    assert send(late, make_request(3, 2), tick=300_000)[0] == 0


def test_lifetime_from_the_response_is_an_option():
    cache = make_cache(ttl_from="response")
    send(cache, make_request(3, 2), tick=0, ready_tick=10_000)
    assert send(cache, make_request(3, 2), tick=309_999)[0] == boundary(2)
    late = make_cache(ttl_from="response")
    send(late, make_request(3, 2), tick=0, ready_tick=10_000)
    assert send(late, make_request(3, 2), tick=310_000)[0] == 0
    with pytest.raises(ValueError, match="ttl_from must be one of start, response"):
        make_cache(ttl_from="end")


def test_parallel_requests_sent_before_the_first_response_begins_all_miss():
    cache = make_cache()
    assert send(cache, make_request(3, 2), tick=0, ready_tick=5_000)[1] == boundary(2)
    # Sent at 1,000 and 4,999: the entry exists but is not usable yet, so both write it again.
    assert send(cache, make_request(3, 2), tick=1_000, ready_tick=6_000) == (0, boundary(2), 0, 2)
    assert send(cache, make_request(3, 2), tick=4_999, ready_tick=7_000) == (0, boundary(2), 0, 2)
    # From 5,000 the first response has begun.
    assert send(cache, make_request(3, 2), tick=5_000)[0] == boundary(2)


def test_in_flight_rewrite_is_usable_from_the_earliest_response():
    cache = make_cache()
    send(cache, make_request(3, 2), tick=0, ready_tick=9_000)
    send(cache, make_request(3, 2), tick=1_000, ready_tick=2_000)  # answered first
    assert send(cache, make_request(3, 2), tick=2_000)[0] == boundary(2)


def test_one_hour_and_five_minute_writes_split_at_the_last_one_hour_breakpoint():
    # A = 0 (cold), B = the 1 h breakpoint on message 1, C = the 5 m one on message 3.
    cache = make_cache()
    assert send(cache, make_request(4, (1, "1h"), (3, "5m"))) == (0, boundary(3), boundary(1), 2)


def test_write_split_counts_from_the_hit():
    # A = message 0 (hit), B = message 2 (1 h), C = message 4 (5 m): 1 h write B - A, 5 m C - B.
    cache = make_cache()
    send(cache, make_request(1, 0), tick=0)
    read, written, written_1h, _ = send(cache, make_request(5, (2, "1h"), (4, "5m")), tick=1)
    assert (read, written, written_1h) == (boundary(0), boundary(4) - boundary(0), boundary(2) - boundary(0))
    # A hit past the last 1 h breakpoint leaves no 1 h write.
    read, written, written_1h, _ = send(cache, make_request(6, (2, "1h"), (5, "5m")), tick=2)
    assert (read, written, written_1h) == (boundary(4), boundary(5) - boundary(4), 0)


def test_automatic_mode_moves_the_breakpoint_to_the_last_block():
    cache = make_cache()
    assert send(cache, make_request(3, auto="5m"), tick=0) == (0, boundary(2), 0, 2)
    assert send(cache, make_request(5, auto="5m"), tick=1) == (boundary(2), boundary(4) - boundary(2), 0, 2)


def test_automatic_breakpoint_skips_thinking_and_empty_text():
    messages = (
        *make_messages(2),
        Message("assistant", (Text("answer"), Reasoning("why", "thinking"), Text(""))),
    )
    rendered = render_request(Request(ENVELOPE, messages, auto_cache="1h"))
    (mark,) = rendered.breakpoints
    assert (mark.unit_idx, mark.block_idx, mark.ttl) == (2, 0, "1h")


def test_automatic_and_explicit_on_the_same_block_count_once():
    rendered = render_request(make_request(3, 2, auto="5m"))
    assert len(rendered.breakpoints) == 1


def test_more_than_four_breakpoints_is_refused():
    with pytest.raises(ValueError, match="5 cache breakpoints"):
        send(make_cache(), make_request(5, 0, 1, 2, 3, 4))


def test_another_family_does_not_share_entries():
    cache = make_cache()
    send(cache, make_request(3, 2), tick=0)
    other = Envelope("anthropic", "claude-test", temperature=0.0)
    assert send(cache, make_request(3, 2, envelope=other), tick=1)[0] == 0


def test_tools_and_system_blocks_carry_breakpoints_and_survive_a_new_conversation():
    # A cache on the last system block: another conversation with the same tools and system
    # reads exactly that prefix (Claude Code's first request after /compact).
    tools = (ToolSchema.make("read", "r" * 400), ToolSchema.make("write", "w" * 400))
    system = ("You are a CLI.", "s" * 600)
    marks = (CacheBreakpoint("system", 1), CacheBreakpoint("messages", 0, 0))

    def request(salt: str) -> Request:
        return Request(ENVELOPE, make_messages(1, salt), tools=tools, system_blocks=system, cache_breakpoints=marks)

    tools_unit, system_unit, _ = render_request(request("a")).units
    system_end = len(tools_unit.data) + system_unit.block_ends[1]
    message_end = len(tools_unit.data) + len(system_unit.data) + 998
    cache = make_cache()
    assert send(cache, request("a"), tick=0)[:2] == (0, message_end)
    assert send(cache, request("b"), tick=1)[:2] == (system_end, message_end - system_end)


def test_breakpoints_are_not_prompt_bytes():
    plain, marked = render_request(make_request(3)), render_request(make_request(3, 1, auto="1h"))
    assert [unit.data for unit in plain.units] == [unit.data for unit in marked.units]
    assert plain.breakpoints == ()


def test_system_blocks_render_as_an_array_with_block_ends():
    rendered = render_request(Request(ENVELOPE, make_messages(1), system_blocks=("a", "bc")))
    unit = rendered.units[0]
    assert json.loads(unit.data) == {"system": [{"type": "text", "text": "a"}, {"type": "text", "text": "bc"}]}
    assert [unit.data[end - 1 : end] for end in unit.block_ends] == [b"}", b"}"]
    with pytest.raises(ValueError, match="not both"):
        Request(ENVELOPE, (), system="x", system_blocks=("y",))


def test_tokens_count_code_points_at_the_calibrated_ratio():
    request = Request(ENVELOPE, (Message("user", (Text("é" * 1000),)),))
    rendered = render_request(request)
    assert prompt_chars(rendered) == 1000 + 53
    cache = AnthropicCache()
    assert cache.prompt_tokens(rendered) == math.ceil(1053 / DEFAULT_CHARS_PER_TOKEN)


def test_read_write_and_uncached_sum_to_the_prompt_at_any_ratio():
    cache = AnthropicCache(chars_per_token=3.3, min_tokens=100)
    for tick, num in enumerate((3, 5, 8)):
        request = make_request(num, num - 1)
        verdict = cache.observe(render_request(request), ENVELOPE, tick)
        assert verdict.prompt_tokens == math.ceil(1000 * num / 3.3)
        assert verdict.cached_tokens + verdict.written_tokens <= verdict.prompt_tokens


def test_simulated_provider_prices_with_the_anthropic_model():
    provider = SimulatedProvider(cache=make_cache())
    provider.send(make_request(3, 2), 0, ready_tick=100)
    seen = provider.send(make_request(5, 4), 200)
    assert (seen.prompt_tokens, seen.cached_tokens, seen.written_tokens) == (5000, boundary(2), 2000)


def test_a_read_refreshes_the_shorter_entries_inside_the_prefix_it_read():
    # Entries at messages 2 (t=0), 5 (t=4 min) and 8 (t=8 min); request 3 reads through entry 5
    # and, with it, the content of entry 2. At t=12 min entry 2 would have expired (written at
    # t=0, last read at t=4 min) were it not refreshed by that read at t=8 min.
    minute = 60_000
    cache = make_cache()
    send(cache, make_request(3, 2), tick=0)
    assert send(cache, make_request(6, 2, 5), tick=4 * minute)[0] == boundary(2)
    assert send(cache, make_request(9, 5, 8), tick=8 * minute)[0] == boundary(5)
    diverging = Request(ENVELOPE, (*make_messages(3), *make_messages(2, salt="new")), cache_breakpoints=(
        CacheBreakpoint("messages", 0, 4, "5m"),))
    assert send(cache, diverging, tick=12 * minute)[0] == boundary(2)
