"""Calls a third-party host of open models served (its own prices, which the table does not
hold) are found wherever the log names the host: an HTTP capture's URL, a Workers AI model behind
Cloudflare's AI Gateway, Zed's and Trae Agent's provider, a litellm route through Hugging Face's
router; and the headline gives them their own reason, not "no price for their model"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.reports.audit import audit_markdown, audit_table
from prefixbench.simulator.providers.hosts import THIRD_PARTY_HOSTS, host_at, third_party_host
from prefixbench.workloads.audit.assume_provider import assume_providers
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats.gateway_usage import served_by
from tests.unit.audit.fixtures import pi_session as _pi_session


def _capture(path: Path, url: str, model: str, calls: int = 2) -> Path:
    """A claude-trace style capture of ``calls`` chat-completions calls to ``url``."""
    lines = []
    for n in range(calls):
        body = {"model": model, "messages": [{"role": "system", "content": "You are careful. " * 300},
                                             {"role": "user", "content": f"task {n}"}]}
        answer = {"id": f"c{n}", "object": "chat.completion", "model": model,
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                  "usage": {"prompt_tokens": 2000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 0}}}
        lines.append(json.dumps({"request": {"timestamp": 1_788_000_000 + n, "method": "POST", "url": url, "headers": {}, "body": body},
                                 "response": {"timestamp": 1_788_000_001 + n, "status_code": 200, "headers": {}, "body": answer}}))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("url", "model", "host"), [
    ("https://api.together.xyz/v1/chat/completions", "moonshotai/Kimi-K2.5", "together"),
    ("https://api.fireworks.ai/inference/v1/chat/completions", "deepseek-chat", "fireworks"),
    ("https://api.groq.com/openai/v1/chat/completions", "kimi-k2.5", "groq"),
])
def test_a_capture_sent_to_a_third_party_hosts_url_is_that_hosts_call(tmp_path: Path, url: str, model: str, host: str) -> None:
    # Main priced these at the maker's list price (the URL's host was never read) and said the
    # calls "name no endpoint that tells who served them".
    result = run_audit([_capture(tmp_path / "cap.jsonl", url, model)])
    assert [r.cost_usd for r in result.rows] == [None, None] and result.totals.unpriced_requests == 2
    assert any(n.startswith(f"no price for 2 request(s) of {model} served by {host} (the log names it)") for n in result.notes), result.notes
    requests, _ = load_trace([tmp_path / "cap.jsonl"])
    (assumed,) = assume_providers(requests, {})[1]
    assert f"sent to the endpoint of a third-party host of open models ({host}: 2)" in assumed, assumed
    assert "name no endpoint that tells" not in assumed
    assert f"paid unknown (2 request(s) served by a host whose price for the model prefixbench lacks: {third_party_host(host)})" in audit_table(result)


def test_a_capture_to_the_makers_own_api_keeps_its_list_price(tmp_path: Path) -> None:
    result = run_audit([_capture(tmp_path / "ds.jsonl", "https://api.deepseek.com/chat/completions", "deepseek-chat")])
    assert None not in [r.cost_usd for r in result.rows]
    assert not any(" served by " in n for n in result.notes)


def test_a_url_is_read_label_by_label_not_as_one_word() -> None:
    assert [host_at(u) for u in ("https://api.together.xyz/v1", "https://api.fireworks.ai/inference/v1", "http://u:p@api.groq.com:443/x",
                                 "https://inference.baseten.co/v1", "https://api.inference.wandb.ai/v1")] == [
        "together", "fireworks", "groq", "baseten", "wandb"]
    # The whole host name run together would start with "fireworks"; no one label does.
    assert host_at("https://fire.works.example.com/v1") == ""
    assert [host_at(u) for u in ("https://api.anthropic.com/v1/messages", "https://openrouter.ai/api/v1", "http://localhost:4000", "")] == [""] * 4


def test_workers_ai_behind_cloudflares_gateway_is_unpriced_in_opencode(tmp_path: Path) -> None:
    from tests.unit.logs.test_opencode import _deepseek_export

    # Main read the model as Moonshot's and priced it at Moonshot's list price.
    export = _deepseek_export("cloudflare-ai-gateway", "workers-ai/@cf/moonshotai/kimi-k2.5")
    (tmp_path / "cf.json").write_text(json.dumps(export))
    result = run_audit([tmp_path / "cf.json"])
    assert [r.cost_usd for r in result.rows] == [None, None]
    assert {(m.provider, m.model) for m in result.models} == {("unknown", "workers-ai/@cf/moonshotai/kimi-k2.5")}
    # Another model through the same gateway is passed on to its maker: priced.
    export = _deepseek_export("cloudflare-ai-gateway", "deepseek/deepseek-v4-flash")
    (tmp_path / "ds.json").write_text(json.dumps(export))
    assert None not in [r.cost_usd for r in run_audit([tmp_path / "ds.json"]).rows]


@pytest.mark.parametrize(("route", "shown", "upstream"), [
    ("fireworks_ai/accounts/fireworks/models/deepseek-v4-pro", "", "fireworks_ai"),
    ("groq/moonshotai/kimi-k2-instruct", "", "groq"),
    ("hosted_vllm/Qwen/Qwen3-8B", "", "hosted_vllm"),
    ("openrouter/deepseek/deepseek-chat", "DeepInfra", "DeepInfra"),
    ("deepseek/deepseek-chat", "", ""),
    ("deepseek-chat", "", ""),
    ("cloudflare/@cf/moonshotai/kimi-k2.5", "", "workers-ai"),
    ("huggingface/novita/moonshotai/Kimi-K2.5", "", "novita"),
    ("huggingface/together/deepseek-ai/DeepSeek-V3", "", "together"),
    # Hugging Face's router left to pick (no host named), or its own hf-inference: no host's price known.
    ("huggingface/moonshotai/Kimi-K2.5", "", ""),
    ("huggingface/hf-inference/meta-llama/Llama-3.1-8B", "", ""),
    ("featherless_ai/Qwen/Qwen3-32B", "", "featherless_ai"),
    ("nvidia_nim/deepseek-ai/deepseek-r1", "", "nvidia_nim"),
])
def test_a_litellm_route_to_a_third_party_host_is_its_upstream_in_every_litellm_reader(route: str, shown: str,
                                                                                      upstream: str) -> None:
    """LiteLLM spend logs, Langfuse, OpenHands, SWE-agent and aider share ``served_by``: a route
    through a third-party host of open models (``fireworks_ai/``, ``groq/``, Workers AI, a host
    Hugging Face's router names) keeps the host as the call's upstream (its own prices: its row or unpriced),
    an engine the user runs keeps the engine, and what the response names wins over the route's host."""
    assert served_by(route, shown) == upstream


def test_aider_reads_workers_ai_through_served_by(tmp_path: Path) -> None:
    from tests.unit.logs.test_aider import _run, read

    log = tmp_path / "cf.md"
    log.write_text(_run("> Model: cloudflare/@cf/moonshotai/kimi-k2.5 with whole edit format  \n\n#### hi  \n\nHello.\n\n"
                        "> Tokens: 2,000 sent, 9 received.  \n"))
    requests, _ = read(log)
    assert [r.upstream for r in requests] == ["workers-ai"]


@pytest.mark.parametrize("name", ["featherless_ai", "nvidia_nim", "nscale", "lambda_ai", "friendliai", "ovhcloud", "io-net",
                                  "scaleway", "vultr", "wandb", "inference", "venice", "synthetic"])
def test_more_hosts_agents_name(name: str) -> None:
    assert third_party_host(name) is not None


@pytest.mark.parametrize("name", ["openrouter", "opencode", "vercel-ai-gateway", "cloudflare-ai-gateway", "huggingface", "deepseek",
                                  "moonshotai", "anthropic", "openai", "zai", "inference-profile", "lambda", "requesty"])
def test_no_maker_or_pass_through_gateway_is_a_host(name: str) -> None:
    assert third_party_host(name) is None
    assert all(not name.replace("-", "").startswith(key) for key in THIRD_PARTY_HOSTS)


def test_the_headline_says_a_host_left_the_calls_unpriced_not_their_model(tmp_path: Path) -> None:
    # kimi-k2-thinking has a price row (Moonshot's; Fireworks' own table lists no such id): main said
    # "with no price for their model".
    result = run_audit([_pi_session(tmp_path / "fw.jsonl", "fireworks", "kimi-k2-thinking")])
    table = audit_table(result)
    assert "paid unknown (2 request(s) served by a host whose price for the model prefixbench lacks: Fireworks)" in table, table.splitlines()[0]
    assert "no price for their model" not in table
    assert "served by a host whose price for the model prefixbench lacks: Fireworks" in audit_markdown(result)


def test_the_headline_names_a_self_hosted_engine(tmp_path: Path) -> None:
    result = run_audit([_pi_session(tmp_path / "ol.jsonl", "ollama", "deepseek-chat")])
    assert "paid unknown (2 request(s) served by a self-hosted engine: ollama)" in audit_table(result)


@pytest.mark.parametrize(("provider", "model", "unknown"), [("ollama", "deepseek-chat", True), ("Together AI", "deepseek-chat", False)])
def test_zeds_provider_naming_a_host_leaves_its_calls_unpriced(tmp_path: Path, provider: str, model: str, unknown: bool) -> None:
    from tests.unit.logs.test_zed import V020_OPENAI, write_db

    # Main read both as DeepSeek's calls, priced at DeepSeek's list price (Zed's provider unread).
    thread = {**V020_OPENAI, "model": {"provider": provider, "model": model}}
    result = run_audit([write_db(tmp_path / "threads.db", [("t", thread, "zstd")])])
    assert [r.cost_usd for r in result.rows] == [None] and result.totals.unpriced_requests == 1
    assert [m.provider == "unknown" for m in result.models] == [unknown]


def test_trae_agents_ollama_client_is_a_self_hosted_engine(tmp_path: Path) -> None:
    from tests.unit.logs.test_trae_agent import _call, _trajectory, _usage

    calls = [_call("2025-07-10T14:00:05.000000", "ollama", "deepseek-chat",
                   [{"role": "system", "content": "You are an expert."}, {"role": "user", "content": "fix it"}], _usage(3000, 9))]
    result = run_audit([_trajectory(tmp_path / "trajectory_20250710_140000.json", calls)])
    assert [r.cost_usd for r in result.rows] == [None]
    assert [(m.provider, m.model) for m in result.models] == [("unknown", "deepseek-chat")]


def test_a_prefixbench_proxy_record_to_a_hosts_url_is_that_hosts_call(tmp_path: Path) -> None:
    from prefixbench.reports.proxy_record import capture_record

    lines = []
    for n in range(2):
        body = {"model": "kimi-k2.5", "messages": [{"role": "system", "content": "You are careful. " * 300}, {"role": "user", "content": f"t{n}"}]}
        answer = {"id": f"c{n}", "object": "chat.completion", "model": "kimi-k2.5",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                  "usage": {"prompt_tokens": 2000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 0}}}
        lines.append(json.dumps(capture_record(
            method="POST", url="https://api.groq.com/openai/v1/chat/completions", request_headers=[("authorization", "Bearer x")],
            request_body=json.dumps(body).encode(), sent=1_788_000_000.0 + n, status=200,
            response_headers=[("content-type", "application/json")], response_body=json.dumps(answer).encode(),
            answered=1_788_000_001.0 + n)))
    (tmp_path / "proxy.jsonl").write_text("\n".join(lines) + "\n")
    result = run_audit([tmp_path / "proxy.jsonl"])
    assert [r.cost_usd for r in result.rows] == [None, None]
    assert any(" served by groq (the log names it)" in n for n in result.notes), result.notes


def test_report_html_says_the_hosts_reason_as_the_terminal_does(tmp_path: Path) -> None:
    from prefixbench.reports.audit import audit_html

    result = run_audit([_pi_session(tmp_path / "fw.jsonl", "fireworks", "kimi-k2-thinking")])
    page = audit_html(result)
    assert "served by a host whose price for the model prefixbench lacks: Fireworks" in page
    assert "no price for their model" not in page


def test_host_at_knows_endpoints_no_one_label_names() -> None:
    # Main read each label alone, so these hosts' own endpoints gave "".
    assert [host_at(u) for u in ("https://integrate.api.nvidia.com/v1", "https://api.lambda.ai/v1",
                                 "https://oai.endpoints.kepler.ai.cloud.ovh.net/v1")] == ["nvidianim", "lambdaai", "ovhcloud"]
    assert all(third_party_host(host_at(u)) for u in ("https://integrate.api.nvidia.com/v1", "https://api.lambda.ai/v1"))
    # A suffix matches whole labels only; NVIDIA's and Lambda's other sites are no such endpoint.
    assert [host_at(u) for u in ("https://notapi.lambda.ai/v1", "https://www.nvidia.com", "https://xapi.lambda.ai")] == ["", "", ""]
    # OpenCode's (models.dev's) provider id for NVIDIA's API catalog.
    assert third_party_host("nvidia") == "NVIDIA NIM" and third_party_host("nvidia-foo") is None
