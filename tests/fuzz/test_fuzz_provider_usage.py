"""Fuzz the usage readers of every provider: any JSON object under the keys they read either
reads into a Usage whose parts are non-negative, or is refused with one UserError; never
another exception."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import PROVIDERS
from tests.fuzz.harness import fuzz_settings

KEYS = (
    "prompt_tokens", "completion_tokens", "prompt_tokens_details", "cached_tokens", "cache_creation_input_tokens",
    "cache_write_tokens", "input_tokens", "output_tokens", "input_tokens_details", "cache_read_input_tokens",
    "promptTokenCount", "cachedContentTokenCount", "candidatesTokenCount", "thoughtsTokenCount",
    "prompt_token_count", "cached_content_token_count", "inputTokens", "outputTokens", "cacheReadInputTokens",
    "cacheWriteInputTokens", "cache_creation", "ephemeral_1h_input_tokens", "prompt_cache_hit_tokens",
)
LEAVES = st.one_of(st.integers(-5, 10**13), st.none(), st.booleans(), st.floats(allow_nan=True), st.text(max_size=4))
VALUES = st.recursive(LEAVES, lambda inner: st.dictionaries(st.sampled_from(KEYS), inner, max_size=5), max_leaves=12)
USAGES = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=8)
READERS = sorted(name for name, rules in PROVIDERS.items() if rules.reports_usage)


def test_any_usage_object_reads_or_is_refused_in_one_line(importer_examples):
    @fuzz_settings(importer_examples)
    @given(name=st.sampled_from(READERS), usage=USAGES)
    def case(name, usage) -> None:
        try:
            read = PROVIDERS[name].read_usage(usage, "f.jsonl:1")
        except UserError as error:
            assert str(error).startswith("f.jsonl:1: ") and "\n" not in str(error)
            return
        assert min(read.cache_read, read.cache_write_5m, read.cache_write_1h, read.uncached, read.output) >= 0

    case()


COUNTS = st.integers(0, 10**6)
#: The providers whose chat-completions usage is OpenAI-shaped (prompt_tokens holds the cached part).
OPENAI_SHAPED = sorted(name for name in READERS if PROVIDERS[name].usage_convention == "subset" and name != "gemini")


def test_openai_shaped_counts_read_inclusive_or_exclusive_or_refuse_in_one_line(importer_examples):
    # Cached tokens above prompt_tokens read as a count without them (a gateway's: Charm's
    # Hyper); cached + written above it with the cached part alone below, one line.
    @fuzz_settings(importer_examples)
    @given(name=st.sampled_from(OPENAI_SHAPED), total=COUNTS, cached=COUNTS, written=COUNTS)
    def case(name, total, cached, written) -> None:
        usage = {"prompt_tokens": total, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": cached, "cache_write_tokens": written}}
        try:
            read = PROVIDERS[name].read_usage(usage, "f.jsonl:1")
        except UserError as error:
            assert str(error).startswith("f.jsonl:1: ") and "\n" not in str(error)
            assert cached + written > total and (cached <= total or written > total)
            return
        assert min(read.cache_read, read.cache_write_5m, read.uncached) >= 0 and read.cache_read == cached
        assert read.prompt == (total + cached if cached > total else total)

    case()
