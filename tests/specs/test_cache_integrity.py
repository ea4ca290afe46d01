"""Seed 001's six cache-integrity cases: pass on `patched`, and fail on the preset with the bug.

A spec that passes on both presets proves nothing, so each one is also run where its bug is
switched back on and must fail there. The structural guard (no silent rewrite) is meant to pass
on every preset; it is shown to fail on a hand-made run that rewrites history silently.
"""


import pytest

from msgspec.structs import replace

from prefixbench.workloads.specs.base import Verdict, first_silent_rewrite
from prefixbench.workloads.specs.cache_integrity import (
    MAX_UNCACHED_SUMMARY_TOKENS,
    _warm_summaries,
    check_envelope_replay,
    check_no_silent_rewrite,
    check_prune_keeps_region,
    check_window_bound,
    judge_no_silent_rewrite,
)
from prefixbench.workloads.scripted.registry import execute
from prefixbench.workloads.scripted.seed_coding import SeedCodingWorkload

WINDOWS = (32_000, 128_000, 512_000)


def test_summary_replays_the_routed_effort():
    result = check_envelope_replay("patched")
    assert result.passed, result.figure
    assert "max uncached 470 tokens" in result.figure


@pytest.mark.parametrize("preset", ["legacy", "prune-fix"])
def test_summary_effort_spec_fails_while_the_envelope_bug_is_on(preset):
    result = check_envelope_replay(preset)
    assert result.verdict is Verdict.VIOLATED, result.line()
    assert "effort 'high'" in result.figure


def test_prune_pass_keeps_the_replayed_region():
    result = check_prune_keeps_region("patched")
    assert result.passed, result.figure


@pytest.mark.parametrize("preset", ["legacy", "envelope-fix"])
def test_prune_spec_fails_while_the_prune_order_bug_is_on(preset):
    result = check_prune_keeps_region(preset)
    assert result.verdict is Verdict.VIOLATED, result.line()
    assert "hit 12.5%" in result.figure  # the first rewritten result sits at message 4


@pytest.mark.parametrize("preset", ["legacy", "patched"])
def test_no_silent_rewrite_holds_on_every_preset_by_design(preset):
    result = check_no_silent_rewrite(preset)
    assert result.passed, result.figure


def test_no_silent_rewrite_fails_on_a_run_that_rewrites_history_silently():
    run = execute(SeedCodingWorkload(64_000, 12, pruner="none"), "patched")
    # Pretend request 5 did not extend request 4 and no rewrite was landed in between.
    tampered = list(run.observations)
    tampered[5] = replace(tampered[5], extends_previous_conversation=False, rewrites_since_previous=())
    bad = replace(run, observations=tuple(tampered))
    assert first_silent_rewrite(bad) == 5
    verdict = judge_no_silent_rewrite(bad, "patched")
    assert verdict.verdict is Verdict.VIOLATED and "request #5" in verdict.figure


@pytest.mark.parametrize("window", WINDOWS)
def test_uncached_summary_prompt_is_bounded_at_any_window(window):
    result = check_window_bound("patched", window)
    assert result.passed, result.figure


@pytest.mark.parametrize("window", WINDOWS)
def test_window_bound_fails_on_legacy(window):
    result = check_window_bound("legacy", window)
    assert result.verdict is Verdict.VIOLATED, result.line()
    assert "hit 0.0%" in result.figure


def test_seed_table_shape_at_128k():
    # Exact figures of the deterministic model (seed 001 measured 83,945 / 85,282 / 83,998
    # on master and 469-470 patched with its own instruction and framing).
    legacy = execute(SeedCodingWorkload(128_000), "legacy")
    patched = execute(SeedCodingWorkload(128_000), "patched")
    assert [o.uncached_tokens for o in legacy.summaries] == [84_368, 85_664, 84_385]
    assert [o.uncached_tokens for o in patched.summaries] == [470, 470, 470]
    assert all(o.uncached_tokens <= MAX_UNCACHED_SUMMARY_TOKENS for o in patched.summaries)
    total = lambda run: sum(o.uncached_tokens for o in run.observations)  # noqa: E731
    assert (total(legacy), total(patched)) == (619_732, 366_725)


def test_a_run_without_enough_summary_calls_is_vacuous_not_violated():
    # 5 steps never fill a 64k window: no fold, so the summary specs prove nothing either way.
    run = execute(SeedCodingWorkload(64_000, 5, pruner="none"), "legacy")
    verdict, figure = _warm_summaries(run)
    assert verdict is Verdict.VACUOUS and figure.startswith("0 summary call(s), need >= 2")
