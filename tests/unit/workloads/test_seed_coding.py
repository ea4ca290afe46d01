"""The seed-coding workload, the filler text and the agent loop."""

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.scripted.prose import prose
from prefixbench.workloads.scripted.registry import execute, make_workload
from prefixbench.workloads.scripted.seed_coding import SeedCodingWorkload


def test_prose_is_deterministic_sized_and_labelled():
    text = prose("file-3", 500)
    assert text == prose("file-3", 500) and len(text) == 500 and text.startswith("file-3: ")
    assert prose("file-4", 500)[:20] != text[:20]
    assert prose("x", 3) == "x: "[:3]


def test_prose_has_no_long_repeated_runs():
    words = prose("long", 200_000).split()
    runs = {tuple(words[i : i + 6]) for i in range(len(words) - 6)}
    assert len(runs) == len(words) - 6  # no 6-word sequence occurs twice


def test_sizes_scale_with_the_window_like_seed_001():
    w = SeedCodingWorkload(32_000)
    assert (w.step_chars, w.rewrite_threshold, w.big_result_chars) == (2399, 3599, 3899)
    config = w.pruner_config()
    assert (config.threshold_chars, config.head_chars, config.tail_chars) == (3599, 2599, 900)
    assert SeedCodingWorkload(128_000).step_chars == 9599
    assert w.model_info().default_effort == "high" and w.header().envelope.reasoning_effort == "max"


def test_run_has_one_request_per_step_plus_summaries():
    run = execute(SeedCodingWorkload(32_000, steps=10, pruner="none"), "patched")
    assert len(run.conversations) == 11 and run.summaries == ()
    assert run.observations[0].cached_tokens == 0
    assert all(o.extends_previous_conversation for o in run.conversations[1:])
    ticks = [o.tick for o in run.observations]
    assert ticks == sorted(ticks) and ticks[0] == 0 and ticks[-1] > 0


def test_runs_are_deterministic():
    a = execute(SeedCodingWorkload(64_000, steps=30), "legacy")
    b = execute(SeedCodingWorkload(64_000, steps=30), "legacy")
    assert a.observations == b.observations


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"window": 0}, "window must be a positive integer"),
        ({"window": 4000}, "too small for seed-coding"),
        # Said "window 8500 ... (minimum 9000)": raw numbers, beside a --windows minimum of 8k.
        ({"window": 8500}, r"window 8500 is too small for seed-coding.s rewrite-only pruner: it runs at 9k \(9,000 tokens\) or more"),
        ({"window": 32_000, "effort": "ultra"}, "unknown effort"),
        ({"window": 32_000, "retain_tokens": 26_000}, "must be below the threshold"),
    ],
)
def test_bad_workload_options_are_user_errors(kwargs, message):
    with pytest.raises(UserError, match=message):
        SeedCodingWorkload(**kwargs)


def test_unknown_workload_and_engine_are_user_errors():
    with pytest.raises(UserError, match="unknown workload"):
        make_workload("nope", 32_000)
    with pytest.raises(UserError, match="supports engine 'checkpoint' only"):
        SeedCodingWorkload(32_000).engine("ranges", None)
