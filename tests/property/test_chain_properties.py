"""Properties of the chain cache model on random call sequences."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.simulator.chain import ChainCache

CALL = st.tuples(
    st.integers(0, 6),  # parent: an earlier call's index, or none when out of range
    st.integers(0, 60_000),  # cacheable tokens
    st.integers(0, 400_000),  # ms since the previous call
    st.integers(0, 5_000),  # response delay
    st.sampled_from(["5m", "1h"]),
    st.sampled_from(["f1", "f2"]),
    st.integers(0, 20_000),  # output tokens the next call sends back
)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["anthropic", "openai", "deepseek"]), st.lists(CALL, min_size=1, max_size=12), st.none() | st.integers(1, 20_000))
def test_reads_and_writes_stay_inside_the_prompt(provider: str, calls, head: int | None) -> None:
    cache = ChainCache(provider)  # type: ignore[arg-type]
    tick = 0
    for n, (parent, cacheable, gap, delay, ttl, family, output) in enumerate(calls):
        tick += gap
        verdict = cache.observe(
            family=family, head="h", head_tokens=head, node=f"n{n}", parent=f"n{parent}" if parent < n else None,
            new_blocks=1, cacheable=cacheable, model="claude-sonnet-4-20250514", tick=tick, ready=tick + delay, ttl=ttl,
            output=output,
        )
        assert 0 <= verdict.read <= cacheable
        assert 0 <= verdict.write <= cacheable - verdict.read
        if provider != "anthropic":
            assert verdict.write == 0 and verdict.read % 128 == 0
        if verdict.read:
            assert verdict.source in ("node", "head") and not verdict.in_flight
