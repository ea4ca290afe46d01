"""``audit`` on captured calls to the providers of issue 21: each call is found to be its
provider's (from the URL, or the model behind a gateway), its wire usage is read in that
provider's convention, and it is priced at the row in force when it was sent.

The fixture is an http-capture file written here: two calls each to grok (xAI's endpoint),
Gemini (its OpenAI-compatible endpoint), Kimi (Moonshot's Anthropic-compatible endpoint),
Qwen (DashScope), GLM (Z.AI) and grok again through OpenRouter.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit

from .fixtures import write_jsonl

#: 2025-09-04 00:00 UTC: after every release date in the price rows used here.
T0 = 1_756_944_000.0
SYSTEM = "You are a careful coding agent. " * 150  # about 1,200 heuristic tokens: over Flash's 1,024


def _call(n: int, url: str, model: str, usage: dict, *, messages_api: bool = False) -> dict:
    sent = T0 + 60 * n
    turns = [{"role": "user", "content": "read main.py"}] + [{"role": "user", "content": f"step {i}"} for i in range(n % 2)]
    if messages_api:
        body = {"model": model, "max_tokens": 100, "system": SYSTEM, "messages": turns}
        response = {"id": f"m{n}", "type": "message", "role": "assistant", "model": model,
                    "content": [{"type": "text", "text": "ok"}], "usage": usage}
    else:
        body = {"model": model, "messages": [{"role": "system", "content": SYSTEM}, *turns]}
        response = {"id": f"c{n}", "object": "chat.completion", "model": model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}], "usage": usage}
    return {
        "request": {"timestamp": sent, "method": "POST", "url": url, "headers": {}, "body": body},
        "response": {"timestamp": sent + 2, "status_code": 200, "headers": {}, "body": response},
    }


def _chat(prompt: int, cached: int, output: int, **details: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": output,
            "prompt_tokens_details": {"cached_tokens": cached, **details}}


CALLS = [
    ("https://api.x.ai/v1/chat/completions", "grok-code-fast-1", _chat(1_300, 0, 20), False),
    ("https://api.x.ai/v1/chat/completions", "grok-code-fast-1", _chat(1_310, 1_280, 20), False),
    ("https://generativelanguage.googleapis.com/v1beta/openai/chat/completions", "gemini-2.5-flash", _chat(1_300, 0, 10), False),
    ("https://generativelanguage.googleapis.com/v1beta/openai/chat/completions", "gemini-2.5-flash", _chat(1_310, 1_297, 10), False),
    ("https://api.moonshot.ai/anthropic/v1/messages", "kimi-k2-0905-preview",
     {"input_tokens": 1_300, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5}, True),
    ("https://api.moonshot.ai/anthropic/v1/messages", "kimi-k2-0905-preview",
     {"input_tokens": 10, "cache_read_input_tokens": 1_300, "cache_creation_input_tokens": 0, "output_tokens": 5}, True),
    ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1/chat/completions", "qwen3-coder-plus",
     _chat(1_300, 0, 8, cache_creation_input_tokens=1_200), False),
    ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1/chat/completions", "qwen3-coder-plus", _chat(1_310, 1_200, 8), False),
    ("https://api.z.ai/api/paas/v4/chat/completions", "glm-4.6", _chat(1_300, 0, 4), False),
    ("https://api.z.ai/api/paas/v4/chat/completions", "glm-4.6", _chat(1_310, 1_280, 4), False),
    ("https://openrouter.ai/api/v1/chat/completions", "x-ai/grok-4", _chat(2_000, 0, 30), False),
    ("https://openrouter.ai/api/v1/chat/completions", "x-ai/grok-4", _chat(2_010, 1_920, 30), False),
]


def _audit(tmp_path: Path):
    log = write_jsonl(tmp_path / "captures.jsonl", [_call(n, url, model, usage, messages_api=m) for n, (url, model, usage, m) in enumerate(CALLS)])
    return run_audit([log])


def test_each_call_is_its_provider_s_read_in_its_convention(tmp_path: Path) -> None:
    rows = _audit(tmp_path).rows
    assert [r.provider for r in rows] == ["xai"] * 2 + ["gemini"] * 2 + ["moonshot"] * 2 + ["qwen"] * 2 + ["zai"] * 2 + ["xai"] * 2
    # Subset usage: the read is inside prompt_tokens; the rest is uncached (or, Qwen, written).
    # xAI's usage has no write count: its writes are not reported (None), not 0.
    assert [(r.reported_cache_read, r.reported_cache_write, r.reported_uncached) for r in rows[:2]] == [(0, None, 1_300), (1_280, None, 30)]
    assert (rows[6].reported_cache_write, rows[6].reported_uncached) == (1_200, 100)
    # Kimi's Messages endpoint: input_tokens excludes the read.
    assert (rows[5].reported_cache_read, rows[5].reported_uncached) == (1_300, 10)


def test_each_call_is_priced_at_the_row_in_force_when_it_was_sent(tmp_path: Path) -> None:
    rows = _audit(tmp_path).rows
    # grok-code-fast-1 (row of 2025-08-26): 30 uncached x 0.20 + 1,280 read x 0.02 + 20 out x 1.50, per 1M.
    assert rows[1].cost_usd == Decimal("0.000006") + Decimal("0.0000256") + Decimal("0.00003")
    # Qwen's explicit write at 1.25: 100 x 1.00 + 1,200 x 1.25 + 8 x 5.00.
    assert rows[6].cost_usd == Decimal("0.0001") + Decimal("0.0015") + Decimal("0.00004")
    # grok-4 through OpenRouter, found by its model: 90 x 3 + 1,920 x 0.75 + 30 x 15.
    assert rows[11].cost_usd == Decimal("0.00027") + Decimal("0.00144") + Decimal("0.00045")
    assert all(r.cost_usd is not None for r in rows)


def test_the_provider_models_replay_the_bodies(tmp_path: Path) -> None:
    rows = _audit(tmp_path).rows
    assert {r.predicted_by for r in rows} == {"body"}
    grok, gemini, kimi = rows[1], rows[3], rows[5]
    # grok and Gemini read exactly what they share (grok measured to the token), Kimi's general
    # API too; the same two bodies, so the same read.
    assert grok.predicted_cache_read > 0 and grok.predicted_cache_read % 128 != 0
    assert gemini.predicted_cache_read > 0 and gemini.predicted_cache_read % 128 != 0


def test_what_if_replays_the_new_providers_through_their_models(tmp_path: Path) -> None:
    from prefixbench.workloads.audit.core import load_trace
    from prefixbench.workloads.audit.whatif import what_if

    log = write_jsonl(tmp_path / "captures.jsonl", [_call(n, url, model, usage, messages_api=m) for n, (url, model, usage, m) in enumerate(CALLS)])
    requests, summaries = load_trace([log])
    results = {w.fix: w for w in what_if(requests, summaries, ["static-system", "ttl-1h"])}
    # The system prompt never changes here, so holding it stable changes nothing; none of these
    # providers lets the client pick a TTL per write, so ttl-1h cannot apply.
    assert results["static-system"].applies and results["static-system"].requests_changed == 0
    assert not results["ttl-1h"].applies


def test_kimi_coding_plan_bodies_replay_in_256_token_steps(tmp_path: Path) -> None:
    """Kimi CLI through a capture: its coding-plan model (kimi-for-coding) reads whole 256-token
    blocks of what it shares with the previous call; another Kimi model on the general API, exactly."""
    def audit(url: str, model: str):
        calls = [_call(n, url, model, _chat(1_300 + n, 0, 4)) for n in range(2)]
        return run_audit([write_jsonl(tmp_path / f"{model}.jsonl", calls)]).rows[1].predicted_cache_read

    coding = audit("https://api.kimi.com/coding/v1/chat/completions", "kimi-for-coding")
    other = audit("https://api.moonshot.ai/v1/chat/completions", "kimi-k2-0905-preview")
    assert coding > 0 and coding % 256 == 0 and other % 256 != 0 and coding == other // 256 * 256


def test_claude_code_on_kimis_coding_endpoint_reads_in_its_256_steps(tmp_path: Path) -> None:
    """Claude Code pointed at Kimi's coding endpoint keeps its Claude model names: the endpoint,
    not the name, makes the reads count in 256 (they were predicted to the token)."""
    usage = [{"input_tokens": 1_300, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 5},
             {"input_tokens": 1_310 - 1_280, "cache_read_input_tokens": 1_280, "cache_creation_input_tokens": 0, "output_tokens": 5}]
    def audit(url: str):
        calls = [_call(n, url, "claude-sonnet-4-5", u, messages_api=True) for n, u in enumerate(usage)]
        rows = run_audit([write_jsonl(tmp_path / "claude-on-kimi.jsonl", calls)]).rows
        assert [r.provider for r in rows] == ["moonshot", "moonshot"]
        return rows[1].predicted_cache_read

    coding, general = audit("https://api.kimi.com/coding/v1/messages"), audit("https://api.moonshot.ai/anthropic/v1/messages")
    # What the two bodies share (the system and the first turn), floored to 256 on the coding endpoint only.
    assert general % 256 != 0 and coding == general // 256 * 256 > 0


def test_glm_5_reads_count_in_64_token_steps_on_both_endpoints_and_glm_4_6_to_the_token(tmp_path: Path) -> None:
    """Z.AI's coding plan read every one of 568 glm-5.2 calls in whole 64-token steps (two users'
    real sessions, OpenAI- and Anthropic-compatible endpoints), glm-4.6 to the token (Crush's
    recorded runs): a follow-up that reads the previous prompt floored to 64 on glm-5 is predicted
    exactly, not called the provider's own miss."""
    def second(url: str, model: str, messages_api: bool):
        first = {"input_tokens": 1_300, "output_tokens": 4} if messages_api else _chat(1_300, 0, 4)
        body = [_call(n, url, model, first, messages_api=messages_api) for n in range(2)]
        return run_audit([write_jsonl(tmp_path / f"{model}-{messages_api}.jsonl", body)]).rows[1]

    for url, messages_api in (("https://api.z.ai/api/coding/paas/v4/chat/completions", False),
                              ("https://api.z.ai/api/anthropic/v1/messages", True)):
        glm5, glm46 = second(url, "glm-5.2", messages_api), second(url, "glm-4.6", messages_api)
        assert glm5.provider == glm46.provider == "zai"
        assert glm5.predicted_cache_read > 0 and glm5.predicted_cache_read % 64 == 0
        assert glm46.predicted_cache_read % 64 != 0 and glm5.predicted_cache_read == glm46.predicted_cache_read // 64 * 64
        # The chain's expected read: the previous prompt (1,300), in whole 64-token steps on glm-5.
        assert (glm5.expected_cache_read, glm46.expected_cache_read) == (1_300 // 64 * 64, 1_300)


def test_a_gemini_body_is_replayed_under_the_minimum_of_the_day_it_was_sent(tmp_path: Path) -> None:
    """The caching page's minimum for 2.5 Flash was 1,024 tokens up to its version of 2026-05-28
    and is 2,048 from its version of 2026-07-07: the same two ~1,300-token bodies read their shared
    prefix when sent in September 2025 (above) and nothing when sent in August 2026 (the prompt
    is under 2,048, so the first call stored nothing)."""
    august = 1_785_542_400.0  # 2026-08-01 00:00 UTC
    calls = [_call(n, url, model, usage) for n, (url, model, usage, _) in enumerate(CALLS[2:4])]
    for n, call in enumerate(calls):
        call["request"]["timestamp"], call["response"]["timestamp"] = august + 60 * n, august + 60 * n + 2
    rows = run_audit([write_jsonl(tmp_path / "later.jsonl", calls)]).rows
    assert [r.predicted_by for r in rows] == ["body", "body"]
    assert rows[1].predicted_cache_read == 0
    assert _audit(tmp_path).rows[3].predicted_cache_read > 0


def test_minimax_calls_are_read_on_both_endpoints_and_priced_at_the_m2_row(tmp_path: Path) -> None:
    """MiniMax on its OpenAI-compatible endpoint (subset usage: the read inside prompt_tokens) and
    on its Anthropic-compatible one (additive: input_tokens excludes reads and writes), sent on
    2025-11-01, after minimax-m2's row of 2025-10-27: input 0.30, read 0.03, write 0.375, output
    1.20 per 1M."""
    later = 1_761_955_200.0 - T0  # 2025-11-01 00:00 UTC
    calls = [
        ("https://api.minimax.io/v1/chat/completions", "MiniMax-M2", _chat(1_300, 0, 20), False),
        ("https://api.minimax.io/v1/chat/completions", "MiniMax-M2", _chat(1_310, 1_280, 20), False),
        ("https://api.minimax.io/anthropic/v1/messages", "MiniMax-M2",
         {"input_tokens": 100, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 1_200, "output_tokens": 5}, True),
        ("https://api.minimax.io/anthropic/v1/messages", "MiniMax-M2",
         {"input_tokens": 10, "cache_read_input_tokens": 1_300, "cache_creation_input_tokens": 0, "output_tokens": 5}, True),
    ]
    lines = [_call(n, url, model, usage, messages_api=m) for n, (url, model, usage, m) in enumerate(calls)]
    for line in lines:
        line["request"]["timestamp"] += later
        line["response"]["timestamp"] += later
    rows = run_audit([write_jsonl(tmp_path / "minimax.jsonl", lines)]).rows
    assert [r.provider for r in rows] == ["minimax"] * 4
    # MiniMax is a subset provider: a 0 write is no count (None), a write above 0 is one. The
    # Messages endpoint's 0 reads as None too: the usage keeps no record of the endpoint it came by.
    assert [(r.reported_cache_read, r.reported_cache_write, r.reported_uncached) for r in rows] == [
        (0, None, 1_300), (1_280, None, 30), (0, 1_200, 100), (1_300, None, 10)]
    # 1,300 x 0.30 + 20 x 1.20; 30 x 0.30 + 1,280 x 0.03 + 20 x 1.20; 100 x 0.30 + 1,200 x 0.375
    # + 5 x 1.20; 10 x 0.30 + 1,300 x 0.03 + 5 x 1.20.
    assert [r.cost_usd for r in rows] == [Decimal("0.000414"), Decimal("0.0000714"), Decimal("0.000486"), Decimal("0.000048")]


def test_a_glm_entry_idle_past_20_minutes_is_not_read(tmp_path: Path) -> None:
    """Z.AI keeps an entry about 20 min idle (measured: no GLM follow-up past 30 min idle read its
    previous prompt, 34 of 34 fell to a head or nothing): the same follow-up sent 10 min after the
    first call reads it, sent 25 min after reads nothing and the entry is called expired. main
    kept every entry forever and predicted the previous prompt at 25 min too."""
    def follow_up(idle_min: int):
        url = "https://api.z.ai/api/coding/paas/v4/chat/completions"
        calls = [_call(n, url, "glm-5.2", _chat(1_300 + 10 * n, 0, 4)) for n in range(2)]
        for part in ("request", "response"):
            calls[1][part]["timestamp"] = calls[0][part]["timestamp"] + 60 * idle_min
        return run_audit([write_jsonl(tmp_path / f"idle-{idle_min}.jsonl", calls)]).rows[1]

    warm, cold = follow_up(10), follow_up(25)
    assert warm.predicted_by == cold.predicted_by == "body"
    assert warm.predicted_cache_read > 0 and warm.predicted_cache_read % 64 == 0
    assert cold.predicted_cache_read == 0 and cold.cause == "ttl-expired"
