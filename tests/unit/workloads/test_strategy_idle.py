"""Claude Code's idle compaction and micro-compaction on the idle-gaps workload, with the 1 h cache.

``idle-gaps`` at ``gap_s = 3600`` pauses 48, 58, 62, 72, 48 minutes before turns 1-5 (seed 0's
factors 0.8, 0.97, 1.03, 1.2 of an hour). The strategies read those gaps from the run's logical
clock (``ctx.now_ms()``).
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from prefixbench.simulator.models import make_cache
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.scripted.registry import execute, make_workload

WINDOW = 128_000


@lru_cache(maxsize=8)
def idle_run(engine: str) -> Run:
    workload = make_workload("idle-gaps", WINDOW, gap_s=3600.0)
    config = {"idle_min_tokens": 16_000} if engine.startswith("claude-code") else {}
    cache = make_cache("anthropic", auto_when_unmarked="1h")  # Claude Code's subscription traffic
    return execute(workload, "patched", engine=engine, cache=cache, engine_config=config)


def uncached(run: Run) -> int:
    return sum(o.prompt_tokens - o.cached_tokens for o in run.observations)


def test_idle_compaction_fires_at_minute_54_of_each_gap_of_55_minutes_or_more():
    run = idle_run("claude-code-idle-compact")
    # Inside the 58, 62 and 72 minute gaps (before turns 2, 3 and 4), not the 48 minute ones.
    assert run.rewrites == ((15, "checkpoint"), (23, "checkpoint"), (31, "checkpoint"))
    summaries = {o.index: o for o in run.summaries}
    assert sorted(summaries) == [14, 22, 30]
    for index, summary in summaries.items():
        # Sent while the user is away: 0.9 of the 1 h cache's life after the turn's last request
        # (the loop wakes the engine there, ctx.wake_at), so it reads the cache warm.
        assert summary.tick == run.observations[index - 1].tick + 3_240_000
        assert summary.hit_ratio > 0.99
    # The user's return sends the compacted context: 13,038 tokens after a 61,092-token request.
    assert run.observations[15].prompt_tokens < run.observations[13].prompt_tokens // 4


def test_the_summary_call_is_warm_after_a_62_minute_gap():
    # Before the loop could wake an engine, the compaction ran at the return (minute 62), after
    # the 1 h cache expired, and its summary call paid all 43,503 tokens.
    summary = {o.index: o for o in idle_run("claude-code-idle-compact").summaries}[22]
    assert (summary.prompt_tokens, summary.prompt_tokens - summary.cached_tokens) == (43_503, 104)


def test_without_idle_compaction_old_results_are_cleared_after_the_cache_expired():
    run = idle_run("claude-code-autocompact")
    # Micro-compaction after the 62 and 72 minute gaps only; auto-compact later at the threshold.
    assert [r for r in run.rewrites if r[1] == "microcompact"] == [(21, "microcompact"), (28, "microcompact")]
    assert run.observations[21].prompt_tokens < idle_run("no-compaction").observations[21].prompt_tokens


@pytest.mark.parametrize(("better", "worse"), [
    ("claude-code-idle-compact", "claude-code-autocompact"),
    ("claude-code-autocompact", "no-compaction"),
])
def test_compacting_around_idle_gaps_pays_fewer_uncached_tokens(better, worse):
    assert uncached(idle_run(better)) < uncached(idle_run(worse))


def test_without_compaction_the_session_outgrows_the_window():
    """docs/strategies.md's figures for no-compaction on this run."""
    run = idle_run("no-compaction")
    over = [o for o in run.observations if o.prompt_tokens > WINDOW]
    assert (len(run.observations), len(over), over[0].index) == (42, 12, 30)
    assert uncached(run) == 2_231_147
    assert sum(o.prompt_tokens - o.cached_tokens for o in run.observations if o.prompt_tokens <= WINDOW) == 341_448
    assert (uncached(idle_run("claude-code-idle-compact")), uncached(idle_run("claude-code-autocompact"))) == (222_347, 335_993)


@lru_cache(maxsize=8)
def expiry_run(ttl: str, **config) -> Run:
    """claude-code-idle-compact at idle_min_tokens 16,000 on the ``ttl`` cache (the engine told the
    same lifetime), with ``config`` on top."""
    workload = make_workload("idle-gaps", WINDOW, gap_s=3600.0)
    cache = make_cache("anthropic", auto_when_unmarked=ttl)
    settings = {"idle_min_tokens": 16_000, "cache_ttl_s": {"1h": 3600, "5m": 300}[ttl], **config}
    return execute(workload, "patched", engine="claude-code-idle-compact", cache=cache, engine_config=settings)


def triggers(run: Run) -> list[str]:
    return [e.info["trigger"] for e in run.session.events if e.info.get("rewrite") == "checkpoint"]


@pytest.mark.parametrize("ttl", ["1h", "5m"])
def test_after_expiry_changes_nothing_here_with_claude_codes_precompute_point(ttl):
    # At 128k Claude Code's precompute arms at 91,800 tokens: no summary is held at a return, so
    # there is nothing to install (and with the 5 min cache neither compaction runs at all).
    before, after = expiry_run(ttl), expiry_run(ttl, after_expiry=True)
    assert uncached(after) == uncached(before) == {"1h": 222_347, "5m": 498_287}[ttl]
    assert triggers(after) == triggers(before) == {"1h": ["idle"] * 3, "5m": ["auto"]}[ttl]


def test_after_expiry_finds_nothing_held_once_the_minute_54_compaction_ran():
    # A what-if: the precompute armed at 37,800 tokens (precompute_buffer 0.65) holds a summary
    # before the 62 and 72 minute gaps. The idle compaction at minute 54 replaces it with a fresh,
    # warm summary, so at the return (cache expired) nothing is left to install. Before the loop
    # could wake an engine the held summaries were installed there: 309,563 -> 237,741.
    before = expiry_run("1h", precompute_buffer=0.65)
    after = expiry_run("1h", precompute_buffer=0.65, after_expiry=True)
    assert triggers(before) == triggers(after) == ["idle", "idle", "idle"]
    assert uncached(before) == uncached(after) == 222_765
    assert len(after.summaries) == len(before.summaries) == 7
