"""The provider rules (simulator/providers/): each wire usage reads into the one Usage, the lookups
decide a provider as the log formats do, and the facts the models read are the documented ones."""

from __future__ import annotations

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import (
    ANTHROPIC,
    DEEPSEEK,
    OPENAI,
    PROVIDERS,
    UNKNOWN,
    chain_rules,
    provider_named_in,
    provider_of_model,
    provider_of_request,
    read_usage,
    rules_for,
)
from prefixbench.simulator.usage import Usage
from prefixbench.simulator.providers.gemini import NoPromptCount, NoTokenCount
from prefixbench.workloads.logs.formats import gateway_usage


def test_anthropic_usage_is_additive_and_splits_the_write_by_ttl():
    wire = {
        "input_tokens": 10,
        "cache_read_input_tokens": 3000,
        "cache_creation_input_tokens": 500,
        "cache_creation": {"ephemeral_1h_input_tokens": 200},
        "output_tokens": 7,
    }
    usage = read_usage("anthropic", wire, "here")
    assert usage == Usage(cache_read=3000, cache_write_5m=300, cache_write_1h=200, uncached=10, output=7)
    assert usage.prompt == 3510 and ANTHROPIC.cacheable(usage) == 3500


def test_openai_usage_is_a_subset_in_both_apis():
    chat = {"prompt_tokens": 5000, "prompt_tokens_details": {"cached_tokens": 4096}, "completion_tokens": 9}
    responses = {"input_tokens": 5000, "input_tokens_details": {"cached_tokens": 4096}, "output_tokens": 9}
    for wire in (chat, responses):
        usage = OPENAI.read_usage(wire, "here")
        assert (usage.cache_read, usage.uncached, usage.output, usage.prompt) == (4096, 904, 9, 5000)
        assert OPENAI.cacheable(usage) == 5000
    # Cached above the count: a gateway's count without them (tests/unit/logs/test_prompt_counts.py).
    assert OPENAI.read_usage({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 11}}, "here").prompt == 21
    with pytest.raises(UserError, match="exceed input tokens"):
        OPENAI.read_usage({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 8, "cache_write_tokens": 3}}, "here")


def test_a_gemini_content_openrouter_made_for_the_call_is_one_explicit_read_not_a_write_too():
    # OpenRouter's usage for a Gemini call whose cache_control it turned into a cached content:
    # the same tokens as written and as read, both inside prompt_tokens (pydantic-ai's recording,
    # 2026-06: its cost bills them as a read plus storage). Refused before: "cached (3000) and
    # written (3000) tokens exceed input tokens (3010)".
    gemini = rules_for("gemini")
    made = {"prompt_tokens": 3010, "completion_tokens": 4,
            "prompt_tokens_details": {"cached_tokens": 3000, "cache_write_tokens": 3000}}
    assert gemini.read_usage(made, "here") == Usage(cache_read=3000, cache_read_explicit=3000, uncached=10, output=4)
    # Within the count, or a write larger than the read: OpenAI's reading, as before.
    within = {"prompt_tokens": 3010, "prompt_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 3000}}
    assert gemini.read_usage(within, "here") == OPENAI.read_usage(within, "here")
    with pytest.raises(UserError, match="exceed input tokens"):
        gemini.read_usage({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 3, "cache_write_tokens": 8}}, "here")
    # The two together exactly the prompt: no token counted twice, OpenAI's reading (a write of 40).
    exact = {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 40}}
    assert gemini.read_usage(exact, "here") == OPENAI.read_usage(exact, "here")
    assert gemini.read_usage(exact, "here").cache_read_explicit == 0
    # A read above the prompt is no content made for the call: OpenAI's reading (a prompt count
    # that leaves the cached part out), not an explicit read of 20 tokens less than nothing.
    above = {"prompt_tokens": 100, "prompt_tokens_details": {"cached_tokens": 120, "cache_write_tokens": 50}}
    assert gemini.read_usage(above, "here") == OPENAI.read_usage(above, "here")
    assert gemini.read_usage(above, "here").cache_read_explicit == 0


def test_a_partly_overlapping_gemini_write_and_read_through_openrouter_is_explicit_for_the_written_part():
    # Written 30, read 80, prompt 100: at least 10 tokens named twice, so the content made for the
    # call was read; only those 30 are known to be that content, the other 50 are taken as implicit.
    partial = {"prompt_tokens": 100, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 80, "cache_write_tokens": 30}}
    assert rules_for("gemini").read_usage(partial, "here") == Usage(cache_read=80, cache_read_explicit=30, uncached=20, output=2)


def test_a_gemini_usage_with_no_token_count_is_no_call_and_a_partial_one_keeps_what_it_names():
    gemini = rules_for("gemini")
    # Vertex AI's answer to a blocked prompt: before, a call of 0 tokens.
    with pytest.raises(NoTokenCount, match=r"^here: usageMetadata with no token count \(blocked prompt\?\): no model call$"):
        gemini.read_usage({"trafficType": "ON_DEMAND"}, "here")
    with pytest.raises(NoTokenCount):
        gemini.read_usage({"traffic_type": "ON_DEMAND"}, "here")
    # An OpenAI-shaped usage naming no count is named as that shape, not as a usageMetadata.
    with pytest.raises(NoTokenCount, match=r"^here: usage with no token count \(no prompt_tokens, completion_tokens or total_tokens\): no model call$"):
        gemini.read_usage({"prompt_tokens_details": {"cached_tokens": 0}}, "here")
    # Cached tokens with no prompt count: a call skipped alike (NoTokenCount's subclass), not a
    # plain UserError refusing the file ("exceeds promptTokenCount (0)" before).
    with pytest.raises(NoPromptCount, match=r"^here: usageMetadata names cached tokens but no prompt token count"):
        gemini.read_usage({"cachedContentTokenCount": 4096, "candidatesTokenCount": 3}, "here")
    with pytest.raises(NoPromptCount):
        gemini.read_usage({"cached_content_token_count": 4096}, "here")
    # Output alone, no prompt count: before, read as an OpenAI usage and the 3 dropped.
    assert gemini.read_usage({"candidatesTokenCount": 3}, "here") == Usage(output=3)
    assert gemini.read_usage({"candidates_token_count": 3, "thoughts_token_count": 2}, "here") == Usage(output=5)


@pytest.mark.parametrize("model", ["openrouter/google/gemini-2.5-flash", "google/gemini-3-flash-preview"])
def test_gateway_readers_read_openrouters_gemini_content_as_http_capture_does(model):
    # LiteLLM, OpenHands, SWE-agent and LangSmith read usage through gateway_usage: a Gemini
    # model's usage naming OpenRouter's content made for the call was refused there before.
    made = {"prompt_tokens": 3010, "completion_tokens": 4, "prompt_tokens_details": {"cached_tokens": 3000, "cache_write_tokens": 3000}}
    assert gateway_usage.read_usage(made, "here", model=model) == rules_for("gemini").read_usage(made, "here")
    with pytest.raises(UserError, match="exceed input tokens"):
        gateway_usage.read_usage(made, "here", model="openai/gpt-4o")


def test_deepseek_usage_from_chat_and_from_the_anthropic_endpoint():
    chat = {"prompt_tokens": 1000, "prompt_cache_hit_tokens": 896, "prompt_cache_miss_tokens": 104, "completion_tokens": 3}
    assert DEEPSEEK.read_usage(chat, "here") == Usage(cache_read=896, uncached=104, output=3)
    # Its Anthropic-compatible endpoint: input_tokens excludes the read; no write fee, so a
    # "creation" is uncached input.
    anthropic_like = {"input_tokens": 4, "cache_read_input_tokens": 896, "cache_creation_input_tokens": 100, "output_tokens": 3}
    assert DEEPSEEK.read_usage(anthropic_like, "here") == Usage(cache_read=896, uncached=104, output=3)


def test_a_bad_count_names_the_field():
    with pytest.raises(UserError, match="here: usage.input_tokens is not a non-negative integer"):
        ANTHROPIC.read_usage({"input_tokens": -1}, "here")


def test_usage_carries_the_names_cost_of_reads():
    usage = Usage(cache_read=5, cache_write_5m=2, cache_write_1h=1, uncached=3, output=4)
    assert (usage.prompt_tokens, usage.cached_tokens, usage.written_tokens, usage.written_long_tokens, usage.output_tokens) == (
        11, 5, 3, 1, 4,
    )


def test_minimums_ttls_and_steps():
    assert ANTHROPIC.min_cacheable("claude-opus-4-5-20251101") == 4096
    assert ANTHROPIC.min_cacheable("claude-opus-5") == 512
    assert ANTHROPIC.min_cacheable("unknown") == 1024
    assert (ANTHROPIC.ttl_ms("1h"), ANTHROPIC.ttl_ms("5m"), ANTHROPIC.default_ttl_ms) == (3_600_000, 300_000, 300_000)
    # OpenAI's in-memory retention: 10 min idle (the upper end of the guide's 5-10 min), in every model.
    assert OPENAI.default_ttl_ms == 600_000 and OPENAI.ttl_ms("1h") == 600_000
    assert DEEPSEEK.default_ttl_ms is None
    assert [OPENAI.round_read(n) for n in (1000, 1024, 1300)] == [0, 1024, 1280]
    assert [DEEPSEEK.round_read(n) for n in (100, 300)] == [0, 256]
    assert ANTHROPIC.round_read(1000) == 1000  # Anthropic's minimum bounds the prompt, not the read
    assert (ANTHROPIC.max_breakpoints, ANTHROPIC.lookback_blocks) == (4, 20)


def test_gemini_minimums_follow_the_caching_page_of_the_day():
    """https://ai.google.dev/gemini-api/docs/caching: to its version of 2026-05-28, 1,024 for
    2.5 / 3 Flash and 4,096 for 2.5 / 3 Pro; from its version of 2026-07-07, 2,048 for 2.5 Flash
    and Pro, 4,096 for 3.5+ Flash, 3.1 Pro and Gemini 4 (the 3.0 previews keep their values)."""
    gemini = PROVIDERS["gemini"]
    before, since = 1_783_382_399_999, 1_783_382_400_000  # the last ms before 2026-07-07, its first
    assert [gemini.min_cacheable("gemini-2.5-flash", t) for t in (before, since, None)] == [1024, 2048, 2048]
    assert [gemini.min_cacheable("gemini-2.5-pro", t) for t in (before, since, None)] == [4096, 2048, 2048]
    assert [gemini.min_cacheable("gemini-3.5-flash", t) for t in (before, since)] == [1024, 4096]
    assert [gemini.min_cacheable("gemini-3-flash-preview", t) for t in (before, since)] == [1024, 1024]
    assert [gemini.min_cacheable("gemini-3.1-pro-preview", t) for t in (before, since)] == [4096, 4096]
    # Providers whose minimums never changed take no date.
    assert ANTHROPIC.min_cacheable("claude-opus-4-5", since) == ANTHROPIC.min_cacheable("claude-opus-4-5") == 4096


def test_anthropic_minimums_are_anthropics_latest_table_and_the_ttl_counts_from_the_start():
    """Anthropic's claude-api skill (anthropics/skills, the version naming Fable 5.1): 512 for
    Opus 5, Fable 5 / 5.1, Mythos 5 / 5.1; 1,024 for Opus 4.8, Sonnet 5, Sonnet 4.6 / 4.5; 2,048
    for Opus 4.7, Mythos Preview, Haiku 3.5; 4,096 for Opus 4.6 / 4.5, Haiku 4.5; and an entry's
    lifetime "measured from the start of the request" (official now, no longer secondary)."""
    table = {
        512: ("claude-opus-5", "claude-fable-5", "claude-fable-5-1", "claude-mythos-5-1"),
        1024: ("claude-opus-4-8", "claude-sonnet-5", "claude-sonnet-4-6", "claude-sonnet-4-5"),
        2048: ("claude-opus-4-7", "claude-mythos-preview", "claude-3-5-haiku-20241022"),
        4096: ("claude-opus-4-6", "claude-opus-4-5", "claude-haiku-4-5"),
    }
    assert {n: [ANTHROPIC.min_cacheable(m) for m in models] for n, models in table.items()} == {n: [n] * len(m) for n, m in table.items()}
    ttl_from = next(o for o in ANTHROPIC.cache_options if o.key == "ttl_from")
    assert (ttl_from.default, ttl_from.source) == ("start", "O")


def test_conventions_and_best_effort():
    assert [PROVIDERS[n].usage_convention for n in ("anthropic", "openai", "deepseek")] == ["additive", "subset", "subset"]
    assert ANTHROPIC.best_effort_note is None and OPENAI.best_effort_note and DEEPSEEK.best_effort_note


def test_lookups_by_name_and_model():
    assert rules_for("openai") is OPENAI and rules_for("engine") is UNKNOWN
    assert chain_rules("engine") is ANTHROPIC and chain_rules("deepseek") is DEEPSEEK
    assert provider_of_model("claude-sonnet-4-5") is ANTHROPIC
    assert provider_of_model("DeepSeek-V4-Flash") is DEEPSEEK
    assert provider_of_model("gpt-5") is OPENAI
    assert provider_of_model("llama-3") is None


@pytest.mark.parametrize(
    ("url", "model", "name"),
    [
        ("https://api.deepseek.com/anthropic/v1/messages", "x", "deepseek"),
        ("https://proxy.example/v1/chat/completions", "deepseek-v4-flash", "deepseek"),
        ("https://api.anthropic.com/v1/messages", "x", "anthropic"),
        ("https://proxy.example/v1/messages", "x", "anthropic"),
        ("https://proxy.example/v1/chat/completions", "claude-sonnet-4-5", "anthropic"),
        ("https://api.openai.com/v1/responses", "gpt-5", "openai"),
        ("https://proxy.example/v1/chat/completions", "llama", "openai"),
    ],
)
def test_provider_of_a_request_decides_as_the_http_capture_format(url, model, name):
    from prefixbench.workloads.logs.formats import http_capture

    assert provider_of_request(url, model).name == name
    assert http_capture._provider(url, {"model": model})[0] == name


def test_a_captured_call_reads_in_the_messages_shape_only_from_a_provider_that_speaks_it():
    from prefixbench.workloads.logs.formats import http_capture

    body = {"model": "x", "messages": []}
    assert http_capture._provider("https://api.anthropic.com/v1/messages", body) == ("anthropic", "messages")
    assert http_capture._provider("https://api.deepseek.com/anthropic/v1/messages", body) == ("deepseek", "messages")
    assert http_capture._provider("https://api.deepseek.com/chat/completions", body) == ("deepseek", "openai")
    assert http_capture._provider("https://api.openai.com/v1/responses", body) == ("openai", "openai")


def test_provider_named_in_a_codex_model_provider():
    assert provider_named_in("DeepSeek") is DEEPSEEK and provider_named_in("openai") is OPENAI and provider_named_in("") is OPENAI


def test_the_anthropic_reader_is_additive_and_caps_the_1h_part_at_the_write():
    wire = {"input_tokens": 1, "cache_read_input_tokens": 2, "cache_creation_input_tokens": 30, "output_tokens": 4,
            "cache_creation": {"ephemeral_1h_input_tokens": 50}}
    # 30 written, all of it at 1 h (the reported 50 is capped at the write); 1 uncached.
    assert ANTHROPIC.read_usage(wire, "w") == Usage(2, 0, 30, 1, 4)


def test_the_diagnostic_is_found_in_every_field_the_rules_name():
    from prefixbench.simulator.providers.anthropic import read_diagnostic

    for field in ANTHROPIC.diagnostics_fields:
        assert read_diagnostic({"usage": {field: "tools_changed"}}) == "tools_changed"
        assert read_diagnostic({field: {"type": "system_changed"}}) == "system_changed"
    assert read_diagnostic({"usage": {"other": "tools_changed"}}) is None
    assert OPENAI.diagnostics_fields == ("prompt_cache_diagnostics",)  # GPT-5.6+ Responses API


def test_agent_handlers_name_their_provider_and_how_their_usage_fields_read():
    from prefixbench.simulator.providers import ANTHROPIC, DEEPSEEK, OPENAI, agent_handler

    assert agent_handler("anthropic") == (ANTHROPIC, "additive")
    assert agent_handler("claude-code") == (ANTHROPIC, "additive")
    # Cline's DeepSeek handler writes the MISS count into cacheWrites.
    assert agent_handler("deepseek") == (DEEPSEEK, "miss-as-write")
    assert agent_handler("openai-native") == (OPENAI, "additive")
    assert agent_handler("openai") == (OPENAI, "subset")  # the OpenAI-compatible handler
    assert agent_handler("openrouter") is None and agent_handler("") is None
    # A handler id belongs to one provider only.
    ids = [name for rules in PROVIDERS.values() for name, _ in rules.agent_handlers]
    assert len(ids) == len(set(ids))


# --- the providers of issue 21 -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("gemini-2.5-pro", "gemini"), ("gemini-3-flash-preview", "gemini"), ("google/gemini-2.5-flash", "gemini"),
        ("grok-code-fast-1", "xai"), ("x-ai/grok-4", "xai"),
        ("kimi-k2-0905-preview", "moonshot"), ("moonshot-v1-8k", "moonshot"),
        ("qwen3-coder-plus", "qwen"), ("MiniMax-M2", "minimax"), ("glm-4.6", "zai"), ("z-ai/glm-4.5", "zai"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock"), ("claude-sonnet-4-5", "anthropic"),
    ],
)
def test_provider_of_model_knows_every_family_also_behind_a_gateway(model, name):
    found = provider_of_model(model)
    assert found is not None and found.name == name


@pytest.mark.parametrize(
    ("url", "model", "name"),
    [
        ("https://api.x.ai/v1/chat/completions", "x", "xai"),
        ("https://generativelanguage.googleapis.com/v1beta/openai/chat/completions", "x", "gemini"),
        ("https://api.moonshot.ai/anthropic/v1/messages", "x", "moonshot"),
        # Kimi's coding endpoint (Claude Code pointed at it keeps sending Claude model names).
        ("https://api.kimi.com/coding/v1/messages", "claude-sonnet-4-5-20250929", "moonshot"),
        ("https://api.minimax.io/anthropic/v1/messages", "claude-sonnet-4-5", "minimax"),
        ("https://open.bigmodel.cn/api/anthropic/v1/messages", "claude-sonnet-4-5", "zai"),
        ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1/chat/completions", "x", "qwen"),
        ("https://api.z.ai/api/paas/v4/chat/completions", "x", "zai"),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/x/converse", "x", "bedrock"),
        ("https://openrouter.ai/api/v1/chat/completions", "x-ai/grok-code-fast-1", "xai"),
    ],
)
def test_the_new_providers_are_found_from_a_captured_call(url, model, name):
    assert provider_of_request(url, model).name == name


def test_gemini_reads_its_native_usage_and_its_openai_compatible_usage():
    gemini = PROVIDERS["gemini"]
    native = {"promptTokenCount": 12_000, "cachedContentTokenCount": 9_417, "candidatesTokenCount": 40, "thoughtsTokenCount": 60}
    assert gemini.read_usage(native, "w") == Usage(cache_read=9_417, uncached=2_583, output=100)
    snake = {"prompt_token_count": 100, "cached_content_token_count": 0, "candidates_token_count": 1}
    assert gemini.read_usage(snake, "w") == Usage(uncached=100, output=1)
    compatible = {"prompt_tokens": 5_000, "prompt_tokens_details": {"cached_tokens": 4_000}, "completion_tokens": 7}
    assert gemini.read_usage(compatible, "w") == Usage(cache_read=4_000, uncached=1_000, output=7)
    with pytest.raises(UserError, match="w: cachedContentTokenCount"):
        gemini.read_usage({"promptTokenCount": 1, "cachedContentTokenCount": 2}, "w")



def test_gemini_tool_use_prompt_tokens_are_input_beside_the_prompt():
    # A built-in tool's run (search, code execution) adds its own prompt: counted apart from
    # promptTokenCount (totalTokenCount is the sum of all four), billed as input.
    gemini = PROVIDERS["gemini"]
    native = {"promptTokenCount": 1_000, "cachedContentTokenCount": 600, "candidatesTokenCount": 10,
              "toolUsePromptTokenCount": 250, "totalTokenCount": 1_260}
    assert gemini.read_usage(native, "w") == Usage(cache_read=600, uncached=650, output=10)
    snake = {"prompt_token_count": 100, "tool_use_prompt_token_count": 5}
    assert gemini.read_usage(snake, "w") == Usage(uncached=105)


def test_kimi_qwen_minimax_glm_read_both_compatible_shapes():
    chat = {"prompt_tokens": 3_000, "prompt_tokens_details": {"cached_tokens": 2_048, "cache_creation_input_tokens": 900},
            "completion_tokens": 5}
    # Qwen bills explicit writes: 900 written, 52 uncached. GLM bills none: the 900 are input.
    assert PROVIDERS["qwen"].read_usage(chat, "w") == Usage(2_048, 900, 0, 52, 5)
    assert PROVIDERS["zai"].read_usage(chat, "w") == Usage(cache_read=2_048, uncached=952, output=5)
    # Kimi's older usage puts cached_tokens at the top level.
    assert PROVIDERS["moonshot"].read_usage({"prompt_tokens": 500, "cached_tokens": 256}, "w") == Usage(256, 0, 0, 244, 0)
    messages = {"input_tokens": 10, "cache_read_input_tokens": 1_000, "cache_creation_input_tokens": 600, "output_tokens": 3}
    assert PROVIDERS["minimax"].read_usage(messages, "w") == Usage(1_000, 600, 0, 10, 3)
    assert PROVIDERS["xai"].read_usage({"prompt_tokens": 700, "prompt_tokens_details": {"cached_tokens": 640}}, "w").cache_read == 640


def test_bedrock_reads_converse_usage_as_additive():
    converse = {"inputTokens": 12, "cacheReadInputTokens": 4_000, "cacheWriteInputTokens": 300, "outputTokens": 8}
    assert PROVIDERS["bedrock"].read_usage(converse, "w") == Usage(4_000, 300, 0, 12, 8)
    assert PROVIDERS["bedrock"].is_additive and PROVIDERS["bedrock"].min_cacheable("anthropic.claude-haiku-4-5") == 4096


def test_every_rule_resting_on_a_secondary_source_or_a_measurement_is_an_option():
    xai = PROVIDERS["xai"]
    assert xai.option_defaults() == {"block": 1, "routing": "sticky", "servers": 8, "evict_p": 0.0, "cache_output": False, "seed": 0, "ttl_ms": None}
    assert {o.key: o.source for o in xai.cache_options}["block"] == "M"
    assert {o.key: o.source for o in PROVIDERS["moonshot"].cache_options}["block"] == "M"
    # GLM's read step, measured, not published: 64 on glm-5.2 (two users' coding-plan sessions),
    # to the token on glm-4.6 (Crush's recorded runs on Z.AI's coding endpoint).
    # And an entry's idle lifetime, measured: 20 min (no follow-up past 30 min idle read its previous prompt).
    assert PROVIDERS["zai"].option_defaults() == {"block": 1, "cache_output": True, "ttl_ms": 1_200_000}
    assert {o.key: o.source for o in PROVIDERS["zai"].cache_options} == {"block": "M", "cache_output": "M", "ttl_ms": "M"}
    assert PROVIDERS["zai"].default_ttl_ms == 1_200_000
    # The answer is kept after its prompt (Crush's glm-4.6 follow-ups read it but 1-2 tokens).
    assert PROVIDERS["zai"].caches_output
    assert [PROVIDERS["zai"].round_read(1_300, m) for m in ("glm-5.2", "GLM-5.1", "glm-4.6", "glm-4.5-air")] == [1_280, 1_280, 1_300, 1_300]
    assert PROVIDERS["gemini"].option_defaults()["minimums"] == "docs"
    # Gemini 3 Flash's checkpoints, measured on one session (May 2026): the last multiple of
    # 3,924 inside the shared prefix; 2.5, 3.1 Pro and Flash-Lite (nothing measured) to the token.
    assert {o.key: o.source for o in PROVIDERS["gemini"].cache_options}["block"] == "M"
    models = ("gemini-3-flash-preview", "gemini-2.5-flash", "gemini-3.1-pro-preview", "gemini-3-flash-lite-preview")
    assert [PROVIDERS["gemini"].round_read(9_000, m) for m in models] == [7_848, 9_000, 9_000, 9_000]
    assert PROVIDERS["qwen"].option_defaults()["implicit_min"] == 1024


@pytest.mark.parametrize("provider", ["moonshot", "zai", "minimax", "qwen"])
def test_a_messages_shaped_usage_with_no_cache_field_is_cache_not_reported(provider):
    # Claude Code on a compatible endpoint whose usage names input and output tokens only: read
    # as a 0 read, its calls were audited as misses ("system-changed", dollars lost) on a log
    # that shows nothing of the cache. As the chat shape with no cached_tokens: not reported.
    usage = read_usage(provider, {"input_tokens": 20_000, "output_tokens": 50}, "here")
    assert (usage.cache_reported, usage.cache_read, usage.prompt) == (False, 0, 20_000)
    # A field present, even 0 (Volcengine Ark's cache_read_input_tokens: 0): reported.
    assert read_usage(provider, {"input_tokens": 20_000, "cache_read_input_tokens": 0, "output_tokens": 50}, "here").cache_reported


def test_an_anthropic_usage_with_neither_cache_field_is_cache_not_reported():
    # A gateway that strips both cache fields from Anthropic's usage: int38b read a 0 read (the
    # audit's misses, dollars lost, on a log that shows nothing of the cache), as the compatible
    # providers' Messages shape was before walk38. The API names both on every response, 0
    # included (Claude Code transcripts and Managed Agents spans copy them): one present is reported.
    usage = read_usage("anthropic", {"input_tokens": 20_000, "output_tokens": 50}, "here")
    assert (usage.cache_reported, usage.cache_read, usage.prompt) == (False, 0, 20_000)
    assert read_usage("anthropic", {"input_tokens": 20_000, "cache_creation_input_tokens": 0, "output_tokens": 50}, "here").cache_reported
    fast = read_usage("anthropic", {"input_tokens": 9, "cache_read_input_tokens": 0, "output_tokens": 1, "speed": "fast"}, "here")
    assert (fast.cache_reported, fast.speed) == (True, "fast")


@pytest.mark.parametrize("provider", ["moonshot", "zai", "minimax", "qwen", "anthropic"])
def test_a_cache_field_given_as_null_is_cache_not_reported(provider):
    # A gateway that sends "cache_read_input_tokens": null: 64175d0 read a key present as reported
    # (a 0 read, the audit's misses on a log that shows nothing of the cache). Null is missing.
    nulls = {"input_tokens": 20_000, "cache_read_input_tokens": None, "cache_creation_input_tokens": None, "output_tokens": 50}
    usage = read_usage(provider, nulls, "here")
    assert (usage.cache_reported, usage.cache_read, usage.prompt) == (False, 0, 20_000)


def test_openai_cached_tokens_given_as_null_is_cache_not_reported():
    # The same for OpenAI's shapes: "cached_tokens": null is not a 0 read.
    responses = read_usage("openai", {"input_tokens": 900, "input_tokens_details": {"cached_tokens": None}, "output_tokens": 5}, "here")
    chat = read_usage("openai", {"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": None}, "completion_tokens": 5}, "here")
    assert (responses.cache_reported, chat.cache_reported) == (False, False)


def test_only_gpt_5_6_keeps_the_previous_turns_reasoning():
    # Measured on gpt-5.6-sol (edgerunner) and gpt-5.6-terra (gildore-arena); later models are
    # unmeasured and keep to the reasoning guide's rule (dropped), as the models before 5.6 do.
    openai = PROVIDERS["openai"]
    for model in ("gpt-5.6", "gpt-5.6-sol", "gpt-5.6-terra", "openai/gpt-5.6-sol"):
        assert not openai.drops_turn_reasoning(model), model
    for model in ("gpt-5.4", "gpt-5.5-pro", "gpt-5.7", "gpt-5.60", "gpt-5.10", "gpt-6", "gpt-6.1", "gpt-9", "openai/gpt-7-mini"):
        assert openai.drops_turn_reasoning(model), model


def test_the_models_that_drop_earlier_thinking_are_haiku_and_those_before_opus_4_5_and_sonnet_4_6() -> None:
    rules = PROVIDERS["anthropic"]
    dropping = ("claude-haiku-4-5-20251001", "claude-3-5-haiku-20241022", "claude-sonnet-4-5-20250929", "anthropic/claude-sonnet-4.5",
                "claude-sonnet-4-20250514", "anthropic/claude-sonnet-4", "claude-opus-4-1-20250805", "claude-opus-4-20250514",
                "claude-3-7-sonnet-20250219",
                # Anthropic's aliases, Vertex and Bedrock ids, a 1M-context suffix, gateways' reversed names.
                "claude-sonnet-4-0", "claude-opus-4-0", "claude-sonnet-4@20250514", "claude-opus-4-1@20250805",
                "claude-sonnet-4-20250514[1m]", "us.anthropic.claude-sonnet-4-20250514-v1:0",
                "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-4-sonnet", "claude-4-opus", "claude-4.1-opus",
                "claude-4.5-sonnet", "anthropic/claude-opus-4.1")
    keeping = ("claude-opus-4-5-20251101", "claude-opus-4-6", "claude-opus-4-7", "claude-sonnet-4-6", "anthropic/claude-sonnet-4.6",
               "claude-opus-5", "claude-opus-4-5@20251101", "claude-4.5-opus", "claude-4.6-sonnet",
               "us.anthropic.claude-opus-4-6-v1:0", "claude-sonnet-4.6")
    assert [m for m in dropping if not rules.strips_thinking(m)] == []
    assert [m for m in keeping if rules.strips_thinking(m)] == []
    # Bedrock serves the same Claude models under the same rule (one list), and not its own Nova.
    bedrock = PROVIDERS["bedrock"]
    assert bedrock.strips_thinking("us.anthropic.claude-sonnet-4-20250514-v1:0")
    assert not bedrock.strips_thinking("us.anthropic.claude-opus-4-6-v1:0")
    assert not bedrock.strips_thinking("us.amazon.nova-pro-v1:0")
    assert not PROVIDERS["openai"].strips_thinking("gpt-5.4")


def test_a_trusted_write_count_bounds_the_next_read_where_the_rules_say_so():
    # The relay cap is a rule of the provider rules (UNKNOWN's writes_bound_reads), not a test of
    # the provider's name in the audit: a previous call that read 1,000, wrote 200 and sent 28,800
    # uncached left at most 1,200 cached.
    wrote = Usage(cache_read=1_000, cache_write_5m=200, uncached=28_800)
    assert UNKNOWN.cacheable(wrote) == 30_000
    assert UNKNOWN.written_bound(wrote) == 1_200
    assert UNKNOWN.cacheable_given(wrote) == 1_200
    # A 0 write is trusted only once the lane reported a write; no write field is never trusted.
    zero = Usage(cache_read=1_000, uncached=29_000)
    assert UNKNOWN.cacheable_given(zero) == 30_000
    assert UNKNOWN.cacheable_given(zero, lane_wrote=True) == 1_000
    no_field = Usage(cache_read=1_000, uncached=29_000, writes_reported=False)
    assert UNKNOWN.written_bound(no_field, lane_wrote=True) is None
    assert UNKNOWN.cacheable_given(no_field, lane_wrote=True) == 30_000
    # A named provider's own convention decides alone, whatever its usage reports.
    for rules in (OPENAI, DEEPSEEK, ANTHROPIC):
        assert not rules.writes_bound_reads
        assert rules.written_bound(wrote, lane_wrote=True) is None
        assert rules.cacheable_given(wrote, lane_wrote=True) == rules.cacheable(wrote)
    assert [name for name, rules in PROVIDERS.items() if rules.writes_bound_reads] == []


def test_a_whole_float_top_level_cached_tokens_is_a_count() -> None:
    """A chat-completions usage whose top-level ``cached_tokens`` is a double (``40.0``, as
    Cohere documents its count) raised and refused the file; a whole one is now read as the
    count, as the capture reader's Cohere usage is, and a fractional one is still refused."""
    usage = OPENAI.read_usage({"prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 40.0}, "here")
    assert usage.cache_read == 40 and usage.uncached == 60
    with pytest.raises(UserError, match="cached tokens"):
        OPENAI.read_usage({"prompt_tokens": 100, "completion_tokens": 5, "cached_tokens": 40.5}, "here")
