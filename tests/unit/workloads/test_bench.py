"""The benchmark's plan and figures: the break-even of a rewrite, the discounted read price,
the rewrites of a run, context kept, and a leaderboard that never names an invalid run cheapest."""

from __future__ import annotations

from decimal import Decimal

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import get_price
from prefixbench.workloads.runs import bench
from prefixbench.workloads.runs.bench import (
    BenchSpec, PriceVariant, Rewrite, discounted, label_of, leaderboard, plan_bench, read_scaled, rewrites_of,
    strategies_of,
)
from prefixbench.workloads.scripted.registry import execute, make_workload


def test_a_rewrite_pays_back_past_the_published_break_even():
    # R > (I/H)(P_miss - P_read)/P_read. Sonnet 4.6: write 3.75, read 0.30 -> (10,000/5,000) x 11.5 = 23.
    price = get_price("claude-sonnet-4-6")
    miss, read = price.rates.cache_write, price.rates.cache_read
    assert not Rewrite(0, 10_000, 5_000, 23).pays_back(miss, read)
    assert Rewrite(0, 10_000, 5_000, 24).pays_back(miss, read)
    # Half the discount: read 1.65 -> 2 x 2.10 / 1.65 = 2.55: three reads pay back, two do not.
    half = discounted(price, Decimal("0.5")).rates
    assert half.cache_read == Decimal("1.65")
    assert not Rewrite(0, 10_000, 5_000, 2).pays_back(miss, half.cache_read)
    assert Rewrite(0, 10_000, 5_000, 3).pays_back(miss, half.cache_read)
    # A rewrite that shed nothing never pays back.
    assert not Rewrite(0, 10_000, 0, 1_000).pays_back(miss, read)


def test_the_read_discount_knob():
    price = get_price("gpt-5.1")
    assert discounted(price, Decimal(1)) is price
    assert discounted(price, Decimal(0)).rates.cache_read == price.rates.input
    long = get_price("gpt-5.4")
    assert discounted(long, Decimal("0.5")).long_tier.rates.cache_read == Decimal("2.75")
    # The other reading of "halving the discount": the read price itself halved.
    assert read_scaled(price, Decimal("0.5")).rates.cache_read == Decimal("0.0625")
    assert read_scaled(long, Decimal("0.5")).long_tier.rates.cache_read == Decimal("0.25")
    assert [v.label for v in BenchSpec().pricing] == ["listed", "50% of read discount", "read price x0.5"]
    assert PriceVariant("read", Decimal("0.5")).apply(price).rates.cache_read == Decimal("0.0625")


def _row(index, prompt, uncached, extends, purpose="conversation", status=200):
    return {"index": index, "purpose": purpose, "prompt_tokens": prompt, "uncached_tokens": uncached,
            "extends_previous": extends, "status": status}


def test_rewrites_are_the_requests_that_do_not_extend_the_previous():
    rows = [
        _row(0, 1_000, 1_000, False), _row(1, 2_000, 1_000, True), _row(2, 3_000, 1_000, True),
        _row(3, 3_500, 3_500, False, "compaction"),  # a summary call is not a conversation rewrite
        _row(4, 1_200, 1_200, False),  # shed 1,800; read by requests 5 and 6
        _row(5, 1_500, 300, True), _row(6, 1_800, 300, True),
        _row(7, 9_000, 0, True, status=400),  # rejected: left out
        _row(8, 900, 900, False),  # the last rewrite: nothing reads it
    ]
    assert rewrites_of(rows) == [Rewrite(4, 1_200, 1_800, 2), Rewrite(8, 900, 900, 0)]


def _entry(strategy, cost, *, rejected=0, over=0, seed=0):
    return {
        "workload": "w", "window": 32_000, "cache": "openai", "pricing": "listed", "strategy": strategy,
        "seed": seed, "cost_usd": Decimal(cost), "rejected": rejected, "over_window": over, "hit_ratio": 0.5,
        "uncached_tokens": 10, "summary_hit": None, "rewrites": 1, "rewrite_factor": 1.0, "paid_back": 1,
        "context_kept": 1.0,
    }


def test_a_strategy_over_the_window_or_rejected_is_never_named_cheapest():
    # The case: a never-compacting engine sends 83,602-token prompts to a 32k window,
    # every one accepted, and is the cheapest by dollars. It ranks last, marked.
    rows = [_entry("keep-all", "0.10", over=61), _entry("summary", "0.30"), _entry("mask", "0.20"),
            _entry("strict-fail", "0.05", rejected=3)]
    board = leaderboard(rows)
    assert [(e["rank"], e["strategy"], e["status"]) for e in board] == [
        (1, "mask", "ok"), (2, "summary", "ok"), (None, "strict-fail", "rejected"), (None, "keep-all", "over window"),
    ]  # listed after the valid ones and unranked: a refused request cost nothing, so its total ran no agent
    assert board[1]["vs_cheapest"] == pytest.approx(0.5)


def test_medians_and_ranges_over_seeds():
    rows = [_entry("a", c, seed=s) for s, c in enumerate(("0.3", "0.1", "0.2"))]
    (entry,) = leaderboard(rows)
    assert (entry["cost_usd"], entry["cost_usd_lo"], entry["cost_usd_hi"], entry["seeds"]) == (0.2, 0.1, 0.3, 3)


def test_context_kept_counts_the_tool_results_the_last_request_carries():
    workload = make_workload("seed-coding", 32_000, steps=20)
    kept_all = execute(workload, "patched", engine="tests.bench_engines:keep_all")
    assert kept_all.tool_result_chars > 0 and kept_all.tool_result_chars_kept == kept_all.tool_result_chars
    masked = execute(workload, "patched", engine="tests.bench_engines:mask_declared")
    assert masked.tool_result_chars == kept_all.tool_result_chars
    assert 0 < masked.tool_result_chars_kept < masked.tool_result_chars / 2


def test_installed_engines_join_the_bench_by_themselves(monkeypatch):
    monkeypatch.setattr(bench, "installed_engines", lambda: {"no-compaction": None, "sliding-window": None})
    spec = BenchSpec()
    assert strategies_of(spec, "seed-coding") == ("checkpoint", "no-compaction", "sliding-window")
    assert strategies_of(spec, "thinking-tools") == ("user-tail", "checkpoint", "ranges", "no-compaction", "sliding-window")
    # Named strategies: a seed engine only where the workload mounts it.
    named = BenchSpec(strategies=("ranges", "tests.bench_engines:keep_all"))
    assert strategies_of(named, "seed-coding") == ("tests.bench_engines:keep_all",)


def test_the_plan_is_strategies_x_caches_x_windows_x_seeds():
    spec = BenchSpec(workloads=("seed-coding",), strategies=("checkpoint", "tests.bench_engines:keep_all"),
                     caches=("anthropic-5m", "anthropic-1h", "openai"), windows=(32_000, 64_000), seeds=(0, 1))
    plan = plan_bench(spec)
    assert len(plan.runs) == 2 * 3 * 2 * 2
    assert [label_of(c) for c in dict.fromkeys(r.cache for r in plan.runs)] == ["anthropic-5m", "anthropic-1h", "openai"]
    assert len({r.key for r in plan.runs}) == len(plan.runs)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (BenchSpec(caches=("nope",)), "--caches: unknown cache model 'nope'"),
        (BenchSpec(strategies=("nope",)), "--strategies: unknown strategy 'nope'"),
        (BenchSpec(workloads=("seed-coding",), strategies=("ranges",)), "no workload of this bench mounts 'ranges'"),
        (BenchSpec(pricing=(PriceVariant("discount", Decimal(2)),)), "--read-discount"),
        (BenchSpec(pricing=(PriceVariant("read", Decimal(11)),)), "--read-price"),
    ],
)
def test_bad_bench_specs_are_one_line(spec, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(")):
        plan_bench(spec)


@pytest.mark.parametrize(
    ("strategy", "workload", "window"),
    [
        ("claude-code-autocompact", "seed-coding", 512_000),
        ("codex-compact", "seed-coding", 32_000),
        ("pi-compaction", "thinking-tools", 512_000),
        ("opencode-summary", "thinking-tools", 512_000),
        ("sliding-window", "thinking-tools", 512_000),
    ],
)
def test_strategies_that_fit_keep_the_window_of_a_cache_that_counts_more_than_the_meter(strategy, workload, window):
    """The Anthropic model counts chars/3.85, 4% more than the engines' chars/4 meter: these runs
    had prompts refused over the window before the engines counted from the provider's usage."""
    from prefixbench.workloads.runs.sweep import execute_planned

    plan = plan_bench(BenchSpec(workloads=(workload,), strategies=(strategy,), caches=("anthropic-5m",),
                                windows=(window,), seeds=(0,)))
    (item,) = plan.runs
    run = execute_planned(item)
    assert [o.index for o in run.observations if o.is_rejected] == []
    assert max(o.prompt_tokens for o in run.observations) > 0.8 * window  # it did fill the window


@pytest.mark.parametrize(
    ("workloads", "options", "message"),
    [
        (("seed-coding",), {"turns": 3}, r"--turns applies to no workload of this bench \(seed-coding: --steps, --effort,"),
        (("seed-coding",), {"gap_s": 3.0}, r"--gap-s applies to no workload of this bench"),
    ],
)
def test_a_workload_option_no_bench_workload_takes_is_refused(workloads, options, message):
    # Before: dropped without a word, and the whole default bench ran (sweep and record refuse it).
    with pytest.raises(UserError, match=message):
        plan_bench(BenchSpec(workloads=workloads, caches=("openai",), windows=(32_000,), seeds=(0,), options=options))


def test_a_workload_option_some_bench_workloads_take_is_given_to_those():
    plan = plan_bench(BenchSpec(workloads=("seed-coding", "idle-gaps"), strategies=("checkpoint",), caches=("openai",),
                                windows=(32_000,), seeds=(0,), options={"turns": 2}))
    assert plan.runs
