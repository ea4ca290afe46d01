"""Third review of third-party hosts' own prices: a call a host served is priced at that host's
row or left unpriced with a note naming the host, never at the model maker's list price, whoever
the log names as the provider (a custom provider of OpenCode or pi, LiteLLM's ``openai/`` route
to a host's endpoint, Hugging Face's router's ``:<host>`` suffix); a Fireworks deployment is not
priced at the serverless row; a free variant is $0 whoever served it; the model summary, the
headline and the notes say what priced each call."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from prefixbench.reports.audit import audit_json, audit_table
from prefixbench.simulator.price_lookup import Prices
from prefixbench.simulator.providers import hosts
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import gateway_usage
from tests.unit.audit.fixtures import pi_session


def result_requests(path: Path):
    return load_trace([path])[0]

SENT = 1_785_312_000_000  # 2026-07-29


def _opencode(path: Path, provider: str, model: str) -> Path:
    """An OpenCode export of one assistant message of two steps (the review's oc/ fixtures)."""
    sid = "ses_1"
    finish = [{"input": 12_000, "output": 300, "reasoning": 100, "cache": {"read": 0, "write": 0}},
              {"input": 198, "output": 50, "reasoning": 0, "cache": {"read": 12_352, "write": 0}}]
    parts: list[dict] = []
    for k, tokens in enumerate(finish):
        parts += [{"type": "step-start", "id": f"prt_{k}a"},
                  {"type": "step-finish", "reason": "tool-calls" if k == 0 else "stop", "cost": 0, "tokens": tokens, "id": f"prt_{k}b"}]
    for part in parts:
        part.update({"sessionID": sid, "messageID": "msg_2"})
    export = {"info": {"id": sid, "projectID": "p", "directory": "/w", "title": "t", "version": "1.14.0",
                       "time": {"created": SENT, "updated": SENT + 10_000}},
              "messages": [{"info": {"id": "msg_1", "sessionID": sid, "role": "user", "time": {"created": SENT}},
                            "parts": [{"type": "text", "text": "go", "id": "prt_u", "sessionID": sid, "messageID": "msg_1"}]},
                           {"info": {"id": "msg_2", "sessionID": sid, "role": "assistant", "time": {"created": SENT + 100, "completed": SENT + 9000},
                                     "parentID": "msg_1", "modelID": model, "providerID": provider, "mode": "build", "agent": "build", "cost": 0,
                                     "tokens": {"input": 12198, "output": 350, "reasoning": 100, "cache": {"read": 12352, "write": 0}}},
                            "parts": parts}]}
    path.write_text(json.dumps(export))
    return path


def _spend(path: Path, rows: list[tuple[str, str, str | None]]) -> Path:
    """LiteLLM spend-log rows ``(custom_llm_provider, model, api_base)``, each its own session."""
    usage = {"prompt_tokens": 3000, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 2048}}
    out = []
    for n, (provider, model, base) in enumerate(rows):
        row = {"request_id": f"r{n}", "call_type": "acompletion", "startTime": f"2026-08-01T10:{n:02d}:00Z",
               "endTime": f"2026-08-01T10:{n:02d}:00Z", "model": model, "custom_llm_provider": provider, "cache_hit": "False",
               "status": "success", "prompt_tokens": 3000, "completion_tokens": 5, "metadata": {"usage_object": usage}, "session_id": f"s{n}"}
        if base:
            row["api_base"] = base
        out.append(row)
    path.write_text("".join(json.dumps(r) + "\n" for r in out))
    return path


# 1. Fireworks' own namespace names Fireworks, whoever the provider entry is.

def test_an_opencode_custom_provider_of_a_fireworks_id_is_priced_at_fireworks_row(tmp_path: Path) -> None:
    # The review's oc/s7.json: provider "my-fw" was priced at DeepSeek's list price ($0.005568)
    # with a note of "a gateway that names no upstream".
    result = run_audit([_opencode(tmp_path / "s7.json", "my-fw", "accounts/fireworks/models/deepseek-v4-pro")])
    fireworks = run_audit([_opencode(tmp_path / "s0.json", "fireworks-ai", "accounts/fireworks/models/deepseek-v4-pro")])
    maker = run_audit([_opencode(tmp_path / "ds.json", "deepseek", "deepseek-v4-pro")])
    assert result.totals.cost_usd == fireworks.totals.cost_usd is not None and result.totals.unpriced_requests == 0
    assert result.totals.cost_usd != maker.totals.cost_usd
    assert any("served by fireworks (the log names it) priced at Fireworks' own price for deepseek-v4-pro" in n for n in result.notes), result.notes
    assert not any("names no upstream" in n for n in result.notes), result.notes


@pytest.mark.parametrize("model", ["accounts/fireworks/models/kimi-k2p6", "ACCOUNTS/FIREWORKS/MODELS/KIMI-K2P6"])
def test_a_fireworks_id_names_fireworks_for_every_reader(model: str) -> None:
    assert hosts.named_host(model) == "fireworks"
    assert hosts.agent_host("my-fw", model) == "fireworks"
    assert gateway_usage.served_by(f"openai/{model}", "") == "fireworks"
    # With no upstream given at all, the price lookup reads the same id the same way.
    row = Prices(None).row(model, SENT)
    assert row is not None and row.provider == "fireworks" and row.model == "kimi-k2p6"


# 2. LiteLLM's openai/ route to a host's endpoint.

def test_a_litellm_openai_route_to_a_hosts_api_base_is_that_hosts_call(tmp_path: Path) -> None:
    # The review's ll/spend.jsonl lines 6-9: billed at the makers' prices, or "no price" for gpt-oss-120b.
    path = _spend(tmp_path / "spend.jsonl", [("openai", "deepseek-v4-pro", "https://api.fireworks.ai/inference/v1"),
                                             ("openai", "moonshotai/kimi-k2.6", "https://api.together.xyz/v1"),
                                             ("openai", "openai/gpt-oss-120b", "https://api.groq.com/openai/v1"),
                                             ("openai", "gpt-4.1", "http://localhost:4000/v1")])
    result = run_audit([path])
    notes = "\n".join(result.notes)
    assert "of deepseek-v4-pro served by fireworks (the log names it) priced at Fireworks' own price" in notes
    assert "of kimi-k2.6 served by together (the log names it) priced at Together AI's own price" in notes
    assert "of gpt-oss-120b served by groq (the log names it) priced at Groq's own price" in notes
    assert "--model-alias" not in notes
    # (a local proxy names no host: OpenAI's list price)
    assert result.rows[3].cost_usd is not None and result.totals.unpriced_requests == 0
    # Fireworks: 952 uncached at 1.74, 2,048 cached at 0.145, 5 out at 3.48.
    assert result.rows[0].cost_usd == Decimal("0.00165648") + Decimal("0.00029696") + Decimal("0.0000174")


# 3. Hugging Face's router: ``model:<host>``.

@pytest.mark.parametrize(("model", "base", "host"), [
    ("moonshotai/Kimi-K2.6:fireworks-ai", "moonshotai/Kimi-K2.6", "fireworks-ai"),
    ("moonshotai/Kimi-K2.6:groq", "moonshotai/Kimi-K2.6", "groq"),
    ("deepseek-ai/DeepSeek-V4-Pro:together", "deepseek-ai/DeepSeek-V4-Pro", "together"),
    ("openai/gpt-oss-120b:free", "openai/gpt-oss-120b:free", ""),
    ("moonshotai/kimi-k2.6:nitro", "moonshotai/kimi-k2.6:nitro", ""),
    ("moonshotai/kimi-k2.6:floor", "moonshotai/kimi-k2.6:floor", ""),
    ("deepseek/deepseek-r1:thinking", "deepseek/deepseek-r1:thinking", ""),
    ("qwen3:8b", "qwen3:8b", ""),
    ("anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic.claude-3-5-sonnet-20240620-v1:0", ""),
])
def test_a_trailing_host_suffix_is_the_upstream_and_openrouters_variants_are_not(model: str, base: str, host: str) -> None:
    assert hosts.host_suffix(model) == (base, host)
    assert hosts.named_host(model) == host


def test_a_router_suffix_call_is_priced_at_the_hosts_row_or_unpriced_naming_it(tmp_path: Path) -> None:
    # pi through Hugging Face's router: main put both among "no price for their model" and
    # offered --model-alias, which would price them at Moonshot's list price.
    fw = run_audit([pi_session(tmp_path / "fw.jsonl", "huggingface", "moonshotai/Kimi-K2.6:fireworks-ai")])
    own = run_audit([pi_session(tmp_path / "own.jsonl", "fireworks", "accounts/fireworks/models/kimi-k2p6")])
    assert fw.totals.cost_usd == own.totals.cost_usd is not None and fw.totals.unpriced_requests == 0
    groq = run_audit([pi_session(tmp_path / "groq.jsonl", "huggingface", "moonshotai/Kimi-K2.6:groq")])
    assert groq.totals.unpriced_requests == 2
    assert any("served by groq (the log names it): Groq sets its own" in n and "host-groq.csv has no row for it" in n
               for n in groq.notes), groq.notes
    assert not any("--model-alias" in n for n in fw.notes + groq.notes)


# 4. Groq's dated rows.

@pytest.mark.parametrize(("when", "rates"), [
    (1_760_000_000_000, ("0.15", "0.15", "0.75")),   # 2025-10: launch prices (models.dev e779044)
    (1_770_000_000_000, ("0.15", "0.15", "0.60")),   # 2026-02: models.dev of 2026-01-04
    (SENT, ("0.15", "0.075", "0.60")),               # 2026-07: cache prices of 2026-05-27
])
def test_groqs_gpt_oss_is_priced_at_the_row_in_force(when: int, rates: tuple[str, str, str]) -> None:
    row = Prices(None).row("openai/gpt-oss-120b", when, upstream="groq")
    assert row is not None and (str(row.rates.input), str(row.rates.cache_read), str(row.rates.output)) == rates


def test_the_priced_note_names_the_row_that_priced_the_call(tmp_path: Path) -> None:
    # A 2025 Groq call: the note named the newest row (no date), not the launch row that priced it.
    result = run_audit([pi_session(tmp_path / "old.jsonl", "groq", "openai/gpt-oss-20b", t0=1_760_000_000_000)])
    (note,) = [n for n in result.notes if "served by groq" in n]
    assert "e779044e7ee8767e96010a4731606362d1f3c6c9" in note and "effective 2026-05-27" not in note, note
    new = run_audit([pi_session(tmp_path / "new.jsonl", "groq", "openai/gpt-oss-20b")])
    (note,) = [n for n in new.notes if "served by groq" in n]
    assert "gpt-oss-20b (effective 2026-05-27)" in note, note


# 5. Fireworks deployments; 6. Fast rows.

@pytest.mark.parametrize("model", ["accounts/acme/deployments/kimi-k2p6", "accounts/fireworks/deployedModels/kimi-k2p6",
                                   "accounts/acme/deployedModels/abc#accounts/fireworks/models/kimi-k2p6",
                                   "accounts/acme/models/kimi-k2p6"])
def test_a_fireworks_deployment_is_not_priced_at_the_serverless_row(tmp_path: Path, model: str) -> None:
    assert hosts.host_model(model)[0] == ""
    assert Prices(None).row(model, SENT, upstream="fireworks") is None
    result = run_audit([pi_session(tmp_path / "dep.jsonl", "fireworks", model)])
    assert result.totals.unpriced_requests == 2
    (note,) = [n for n in result.notes if " served by fireworks" in n]
    if "deploy" in model:
        assert "a dedicated deployment, which Fireworks bills by the GPU-hour" in note, note


@pytest.mark.parametrize(("model", "rates"), [
    ("accounts/fireworks/routers/kimi-k2p6-turbo", ("2.00", "0.30", "8.00")),
    ("accounts/fireworks/routers/glm-5p1-fast", ("2.80", "0.52", "8.80")),
])
def test_fireworks_fast_rows(model: str, rates: tuple[str, str, str]) -> None:
    row = Prices(None).row(model, SENT, upstream="fireworks")
    assert row is not None and (str(row.rates.input), str(row.rates.cache_read), str(row.rates.output)) == rates


# 7. models[] says priced only where a call was.

def test_a_model_whose_every_call_a_host_left_unpriced_is_not_priced_in_the_json(tmp_path: Path) -> None:
    result = run_audit([pi_session(tmp_path / "kt.jsonl", "fireworks", "accounts/fireworks/models/kimi-k2-thinking")])
    (model,) = json.loads(audit_json(result))["models"]
    assert (model["priced"], model["cost_usd"], model["unpriced_requests"]) == (False, None, 2), model


# 8. A free variant is $0 whoever served it.

@pytest.mark.parametrize("upstream", ["Chutes", "Groq"])
def test_a_free_variant_a_named_host_served_is_free(tmp_path: Path, upstream: str) -> None:
    row = Prices(None).row("openai/gpt-oss-120b:free", SENT, upstream=upstream)
    assert row is not None and row.rates.input == 0 and row.rates.output == 0
    # A capture of calls to OpenRouter, whose response names the upstream that served each.
    lines = []
    for n in range(2):
        body = {"model": "openai/gpt-oss-120b:free", "messages": [{"role": "system", "content": "You are careful. " * 300},
                                                                  {"role": "user", "content": f"task {n}"}]}
        answer = {"id": f"c{n}", "object": "chat.completion", "model": "openai/gpt-oss-120b:free", "provider": upstream,
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                  "usage": {"prompt_tokens": 2000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 0}}}
        lines.append(json.dumps({"request": {"timestamp": 1_788_000_000 + n, "method": "POST", "url": "https://openrouter.ai/api/v1/chat/completions",
                                             "headers": {}, "body": body},
                                 "response": {"timestamp": 1_788_000_001 + n, "status_code": 200, "headers": {}, "body": answer}}))
    path = tmp_path / "cap.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = run_audit([path])
    assert [r.upstream for r in result_requests(path)] == [upstream, upstream]
    assert result.totals.cost_usd == 0 and result.totals.unpriced_requests == 0
    assert not any(f"served by {upstream}" in n for n in result.notes), result.notes


# 9. The headline: one name a host, and what is missing said so.

def test_the_headline_counts_a_host_once_whatever_its_spelling(tmp_path: Path) -> None:
    paths = [pi_session(tmp_path / "a.jsonl", "together", "moonshotai/Kimi-K2.5"),
             pi_session(tmp_path / "b.jsonl", "togetherai", "deepseek-ai/DeepSeek-V3.1-Terminus"),
             pi_session(tmp_path / "c.jsonl", "fireworks", "accounts/fireworks/models/kimi-k2-thinking")]
    table = audit_table(run_audit(paths))
    (headline,) = [line for line in table.splitlines() if "paid unknown" in line]
    assert "(6 request(s) served by a host whose price for the model prefixbench lacks: Fireworks 2, Together AI 4)" in headline, headline


def test_a_reader_that_names_no_host_is_noted_as_the_price_lookup_priced_it() -> None:
    # A reader that keeps no upstream (an OpenAI-compatible handler pointed at Fireworks): the
    # price lookup reads Fireworks from the id; the notes said the same call was priced at its
    # maker's list price "through a gateway that names no upstream".
    from prefixbench.simulator.usage import Usage
    from prefixbench.workloads.audit.core import host_notes, host_unpriced
    from prefixbench.workloads.logs.trace import TraceRequest

    def call(model: str) -> TraceRequest:
        return TraceRequest(file="f", line=1, lane="main", lane_kind="main", seq=0, sent_ms=SENT, ready_ms=None,
                            provider="deepseek", model=model, usage=Usage(uncached=1000, output=5))

    prices = Prices(None)
    priced, unpriced = call("accounts/fireworks/models/deepseek-v4-pro"), call("accounts/fireworks/models/deepseek-v4-flash")
    assert prices.row(priced.model, SENT) is not None and prices.row(unpriced.model, SENT) is None
    notes = host_notes([priced, unpriced], prices)
    assert any("of accounts/fireworks/models/deepseek-v4-pro served by fireworks (its model id names it) priced at Fireworks'" in n
               for n in notes), notes
    assert not any("names no upstream" in n for n in notes), notes
    assert host_unpriced([priced, unpriced], prices) == (("accounts/fireworks/models/deepseek-v4-flash", "fireworks", 1),)


def test_a_priority_call_to_fireworks_is_said_to_be_priced_at_standard(tmp_path: Path) -> None:
    # Fireworks' Priority tier bills more than the Standard row prefixbench holds: main priced the
    # call at Standard and said nothing.
    lines = []
    for n, tier in enumerate(("priority", None, "priority")):
        body = {"model": "accounts/fireworks/models/kimi-k2p6", "messages": [{"role": "user", "content": f"task {n}"}]}
        if tier:
            body["service_tier"] = tier
        answer = {"id": f"c{n}", "object": "chat.completion", "model": body["model"],
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                  "usage": {"prompt_tokens": 2000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 0}}}
        lines.append(json.dumps({"request": {"timestamp": 1_788_000_000 + n, "method": "POST",
                                             "url": "https://api.fireworks.ai/inference/v1/chat/completions", "headers": {}, "body": body},
                                 "response": {"timestamp": 1_788_000_001 + n, "status_code": 200, "headers": {}, "body": answer}}))
    path = tmp_path / "cap.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = run_audit([path])
    assert result.totals.unpriced_requests == 0
    (capture,) = result.files
    assert any("2 call(s) asked Fireworks for its Priority tier" in n and "undercounted" in n for n in capture.notes), capture.notes
    assert "asked Fireworks for its Priority tier" in audit_table(result)
