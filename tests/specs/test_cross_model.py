"""Seed 001's table under each provider cache model, where their rules differ from the reference.

The reference caches every byte prefix of every request. Anthropic keeps entries only at
breakpoints (automatic mode: the last block of each request) for 5 minutes; OpenAI and
DeepSeek round hits to token steps. On the default sweep they agree with the reference on what
matters (legacy summary calls miss, patched ones pay only the instruction) with one exception
that these tests pin because it is a real property of breakpoint caches, not a bug: at 32k the
pruner alone clears pressure one step before the first fold (a "prune-only" landing), so every
entry written since holds pruned history *past* the region end, none ends at it, and the first
summary call misses on Anthropic even with both fixes on.
"""

import pytest

from prefixbench.simulator.models import make_cache
from prefixbench.workloads.specs.cache_integrity import MAX_UNCACHED_SUMMARY_TOKENS, MIN_SUMMARY_HIT
from prefixbench.workloads.scripted.registry import execute
from prefixbench.workloads.scripted.seed_coding import SeedCodingWorkload


def warm(observation) -> bool:
    return observation.hit_ratio >= MIN_SUMMARY_HIT and observation.uncached_tokens <= MAX_UNCACHED_SUMMARY_TOKENS


@pytest.mark.parametrize("window", [128_000, 512_000])
@pytest.mark.parametrize("name", ["anthropic", "openai", "deepseek"])
def test_patched_summary_calls_stay_warm_and_legacy_ones_miss(name, window):
    patched = execute(SeedCodingWorkload(window), "patched", cache=make_cache(name))
    legacy = execute(SeedCodingWorkload(window), "legacy", cache=make_cache(name))
    reference = execute(SeedCodingWorkload(window), "patched")
    assert patched.num_folds == legacy.num_folds == reference.num_folds == 3
    assert all(warm(s) for s in patched.summaries), [s.hit_ratio for s in patched.summaries]
    assert all(s.hit_ratio < 0.01 for s in legacy.summaries)


def test_anthropic_misses_the_first_fold_at_32k_after_a_prune_only_landing():
    run = execute(SeedCodingWorkload(32_000), "patched", cache=make_cache("anthropic"))
    first, *rest = run.summaries
    before = run.observations[first.index - 1]
    assert before.purpose == "conversation" and "prune" in before.rewrites_since_previous
    assert first.hit_ratio == 0.0
    assert all(warm(s) for s in rest)
    # The reference serves the same call from the pruned request just before it.
    reference = execute(SeedCodingWorkload(32_000), "patched")
    assert warm(reference.summaries[0])
