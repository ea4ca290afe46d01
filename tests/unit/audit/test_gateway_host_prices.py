"""Open-weight models through a gateway are priced by the host that served them
(:meth:`prefixbench.simulator.price_lookup.Prices.at_list_price`): at the maker's list price where
the gateway names the maker as the upstream (any case or spelling), unpriced where it names
another host (DeepInfra, Groq...: each bills its own price, which the table does not hold), and at
the list price with a note where it names none. Closed models stay at their list price whoever
served them. Before this, every such call was priced at the maker's list price."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from prefixbench.simulator.providers import ANTHROPIC, DEEPSEEK, MINIMAX, MOONSHOT, QWEN, ZAI
from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.fixtures import pi_session

SYSTEM = {"role": "system", "content": "You are a careful agent. " * 200}


def _call(n: int, model: str, upstream: str | None) -> dict:
    """An OpenHands completion log of one call through OpenRouter (LiteLLM keeps the response's
    ``provider``: the upstream that served it)."""
    messages = [SYSTEM, {"role": "user", "content": f"task {n}"}]
    response = {"id": f"r{n}", "model": model, "object": "chat.completion",
                "usage": {"prompt_tokens": 2000, "completion_tokens": 50, "prompt_tokens_details": {"cached_tokens": 0}},
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]}
    if upstream is not None:
        response["provider"] = upstream
    return {"messages": messages, "tools": [], "kwargs": {}, "response": response, "cost": 0.0,
            "timestamp": 1_788_000_000.0 + 10 * n, "latency_sec": 1.0}


def _folder(tmp_path: Path, name: str, model: str, upstreams: list[str | None]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    slug = model.replace("/", "__")
    for n, upstream in enumerate(upstreams):
        (folder / f"{slug}-{1_788_000_000 + 10 * n}.000-{n:04x}.json").write_text(json.dumps(_call(n, model, upstream)))
    return folder


def test_the_maker_named_as_upstream_is_its_list_price_another_host_no_price(tmp_path: Path) -> None:
    logs = _folder(tmp_path, "glm", "openrouter/z-ai/glm-4.6", ["Z.AI", "DeepInfra", "z-ai", None])
    result = run_audit([logs])
    costs = [row.cost_usd for row in result.rows]
    assert costs[0] is not None and costs[2] == costs[0] and costs[3] == costs[0]
    assert costs[1] is None  # DeepInfra's price is DeepInfra's own, not Z.AI's list
    assert result.totals.unpriced_requests == 1
    assert any(note.startswith("no price for 1 request(s) of glm-4.6 served by DeepInfra") for note in result.notes)
    # The call that names no upstream: the list price, and said once.
    assert sum("the gateway may have routed calls to hosts that bill other prices" in note for note in result.notes) == 1


def test_a_closed_model_is_its_list_price_whoever_served_it(tmp_path: Path) -> None:
    logs = _folder(tmp_path, "claude", "openrouter/anthropic/claude-sonnet-4.5", ["Anthropic", "Amazon Bedrock", "Google"])
    result = run_audit([logs])
    costs = [row.cost_usd for row in result.rows]
    assert len(costs) == 3 and None not in costs and result.totals.unpriced_requests == 0
    assert not any("served by" in note or "may have routed" in note for note in result.notes)


def test_the_makers_own_api_by_any_spelling() -> None:
    assert DEEPSEEK.bills_list_price_at("DeepSeek") and DEEPSEEK.bills_list_price_at("deepseek")
    assert MOONSHOT.bills_list_price_at("Moonshot AI") and ZAI.bills_list_price_at("Z.AI")
    assert not DEEPSEEK.bills_list_price_at("Fireworks") and not MOONSHOT.bills_list_price_at("Groq")
    assert not ZAI.bills_list_price_at("Chutes")
    assert ANTHROPIC.bills_list_price_at("Amazon Bedrock")


#: How OpenRouter names each maker's own API as a host (its providers' display names and slugs:
#: openrouter.ai/docs/features/privacy-and-logging, and an endpoint's ``provider_name`` /
#: ``provider_slug``): "Alibaba Cloud Int." (slug ``alibaba``) is Alibaba's international Model
#: Studio endpoint, whose prices the Qwen rows are (simulator/data/prices.csv: International tier).
OPENROUTER_MAKER_HOSTS = [(DEEPSEEK, "DeepSeek"), (DEEPSEEK, "deepseek"), (ZAI, "Z.AI"), (ZAI, "z-ai"),
                          (MOONSHOT, "Moonshot AI"), (MOONSHOT, "moonshotai"), (MINIMAX, "MiniMax"), (MINIMAX, "Minimax"),
                          (MINIMAX, "minimax"), (QWEN, "Alibaba Cloud Int."), (QWEN, "alibaba")]


def test_openrouters_name_for_each_makers_own_api_is_that_maker() -> None:
    # "Alibaba Cloud Int." was taken for another host than Qwen's maker: its calls left unpriced.
    missed = [host for rules, host in OPENROUTER_MAKER_HOSTS if not rules.bills_list_price_at(host)]
    assert missed == []
    assert not QWEN.bills_list_price_at("SiliconFlow") and not QWEN.bills_list_price_at("Nebius AI Studio")


def test_a_qwen_call_alibaba_cloud_int_served_is_at_the_list_price(tmp_path: Path) -> None:
    logs = _folder(tmp_path, "qwen", "openrouter/qwen/qwen3-coder-plus", ["Alibaba Cloud Int.", "SiliconFlow"])
    result = run_audit([logs])
    costs = [row.cost_usd for row in result.rows]
    assert costs[0] is not None and costs[1] is None and result.totals.unpriced_requests == 1
    assert not any("served by Alibaba Cloud Int." in note for note in result.notes)


def test_keep_alive_on_a_host_of_no_price_is_unknown_not_zero(tmp_path: Path, capsys) -> None:
    # The keep-alives' charge asked for a price row without the upstream, so it was 'priced' ($0,
    # no row found when costed by host): the fix's and its lane's saved_usd read 0.0, not null.
    from prefixbench.reports.cli import main

    folder = tmp_path / "glm"
    folder.mkdir()
    messages = [SYSTEM]
    for n in range(3):  # half an hour apart: past any TTL, each gap a keep-alive bridges
        messages = [*messages, {"role": "user", "content": f"task {n} " * 50}]
        call = _call(n, "openrouter/z-ai/glm-4.6", "DeepInfra")
        call["messages"], call["timestamp"] = list(messages), 1_788_000_000.0 + 1800 * n
        (folder / f"glm-{1_788_000_000 + 1800 * n}.000-{n:04x}.json").write_text(json.dumps(call))
        messages = [*messages, {"role": "assistant", "content": "ok"}]
    assert main(["audit", str(folder), "--quiet", "--format", "json", "--what-if", "keep-alive"]) == 0
    (fix,) = json.loads(capsys.readouterr().out)["what_if"]
    assert fix["applies"] and fix["unpriced_requests"] == fix["requests_changed"] > 0, fix
    assert fix["saved_usd"] is None and [lane["saved_usd"] for lane in fix["lanes"]] == [None]


def test_a_host_running_open_models_itself_is_no_vendors_bill_whatever_the_model() -> None:
    """A self-hosted engine (Ollama, LM Studio, Codex's ``oss``) named as the upstream: no row,
    a closed model's name (gpt-4o) or an open one's (deepseek-chat) alike; before, each was priced
    at its maker's list price."""
    from prefixbench.simulator.price_lookup import Prices

    prices = Prices(None)
    for model, upstream in (("deepseek-chat", "ollama"), ("gpt-4o", "ollama_chat"), ("gpt-4o", "lm_studio"),
                            ("gpt-4o", "oss"), ("deepseek-chat", "Ollama-Launch")):
        assert prices.row(model, None, upstream=upstream) is None, (model, upstream)
    assert prices.row("gpt-4o", None) is not None and prices.row("gpt-4o", None, upstream="Azure") is not None


def test_a_third_party_host_of_open_models_is_no_makers_bill_whatever_the_model() -> None:
    """A host serving other makers' open models at its own prices (Fireworks, Groq, Together AI...)
    named as the upstream, in any spelling an agent or gateway gives it: no row, for a model no
    provider claims as for a closed model's name (no such host bills OpenAI's list price for
    openai/gpt-oss-120b); the maker's own API and a cloud passing a closed model on keep the list
    price. Before, a model no provider claims and a closed model's name were priced at the table's row."""
    from prefixbench.simulator.price_lookup import Prices
    from prefixbench.simulator.providers.hosts import billing_host, third_party_host

    prices = Prices(None)
    # (Models the hosts' own tables, simulator/data/host-*.csv, do not list: those they list are
    # priced at the host's row, tests/unit/simulator/test_host_prices.py.)
    for model, upstream in (("deepseek-v4-flash", "fireworks"), ("deepseek-v4-flash", "fireworks_ai"), ("kimi-k2.5", "groq"),
                            ("glm-4.6", "Together"), ("minimax-m2", "fireworks-ai"), ("qwen3-coder-plus", "togetherai"),
                            ("gpt-4o", "groq"), ("gpt-4o", "Cerebras")):
        assert prices.row(model, None, upstream=upstream) is None, (model, upstream)
    assert prices.row("deepseek-v4-pro", None, upstream="DeepSeek") is not None
    assert prices.row("claude-sonnet-4-5", None, upstream="Amazon Bedrock") is not None
    assert [third_party_host(n) for n in ("fireworks_ai", "Nebius AI Studio", "DeepInfra", "openrouter", "vercel-ai-gateway", "")] == [
        "Fireworks", "Nebius", "DeepInfra", None, None, None]
    assert [billing_host(n) for n in ("groq", "ollama", "openrouter", "deepseek")] == ["groq", "ollama", "", ""]


@pytest.mark.parametrize(("provider", "model", "maker", "shown"), [
    # (Models the hosts' own tables do not list: Fireworks' and Together's price deepseek-v4-pro,
    # Fireworks' minimax-m3.)
    ("fireworks", "accounts/fireworks/models/deepseek-v4-flash", "deepseek", "Fireworks"),
    ("fireworks", "accounts/fireworks/models/minimax-m2", "minimax", "Fireworks"),
    ("groq", "moonshotai/kimi-k2.5", "moonshotai", "Groq"),
    ("together", "deepseek-ai/DeepSeek-V4-Flash", "deepseek", "Together AI"),
])
def test_a_pi_call_a_third_party_host_served_is_unpriced_said_so(tmp_path: Path, provider: str, model: str, maker: str,
                                                                 shown: str) -> None:
    # pi names the host it sent the call to as the message's provider. Main priced Fireworks' and
    # Groq's calls at DeepSeek's, MiniMax's and Moonshot's own list prices, which are not what
    # those hosts bill: now unpriced, counted apart, and a note names the host and why.
    hosted = run_audit([pi_session(tmp_path / "hosted.jsonl", provider, model)])
    assert [row.cost_usd for row in hosted.rows] == [None, None] and hosted.totals.unpriced_requests == 2
    (note,) = [note for note in hosted.notes if " served by " in note]
    assert note.startswith(f"no price for 2 request(s) of {model} served by {provider} (the log names it): {shown} sets its own "
                           "per-token prices"), note
    assert f"{'host-fireworks.csv' if provider == 'fireworks' else f'host-{provider}.csv'} has no row for it; counted unpriced" in note
    # No other note offers to price it at the maker's row (--model-alias) or says a gateway routed it.
    assert not any("--model-alias" in n or "may have routed" in n for n in hosted.notes), hosted.notes
    # The same model through the maker's own API keeps the maker's list price (under the maker's
    # name for it: an accounts/fireworks/ id is Fireworks' alone, whichever provider sent it).
    own = run_audit([pi_session(tmp_path / "own.jsonl", maker, model.removeprefix("accounts/fireworks/models/"))])
    assert None not in [row.cost_usd for row in own.rows] and own.totals.unpriced_requests == 0


@pytest.mark.parametrize(("provider", "model", "row"), [
    ("fireworks", "accounts/fireworks/models/minimax-m3", "minimax-m3"),
    ("fireworks", "accounts/fireworks/models/deepseek-v4-pro", "deepseek-v4-pro"),
    ("groq", "openai/gpt-oss-120b", "gpt-oss-120b"),
    ("together", "moonshotai/Kimi-K2.6", "kimi-k2.6"),
])
def test_a_pi_call_a_host_with_its_own_row_served_is_priced_at_that_row(tmp_path: Path, provider: str, model: str,
                                                                       row: str) -> None:
    # A host whose own prices prefixbench holds (simulator/data/host-*.csv): its calls are priced
    # at its row, said so in a note naming the host, the row and its source; none is unpriced.
    from prefixbench.simulator.price_lookup import Prices
    from prefixbench.simulator.pricing import cost_of

    hosted = run_audit([pi_session(tmp_path / "hosted.jsonl", provider, model)])
    assert None not in [r.cost_usd for r in hosted.rows] and hosted.totals.unpriced_requests == 0
    assert hosted.unpriced_hosts == ()
    (note,) = [n for n in hosted.notes if " served by " in n]
    assert note.startswith(f"2 request(s) of {model} served by {provider} (the log names it) priced at "), note
    # (a dated row is named with its date: Groq's gpt-oss rows)
    assert f"own price for {row}" in note and "not its maker's list price" in note and "https://" in note
    found = Prices(None).row(model, None, upstream=provider)
    usage = SimpleNamespace(prompt_tokens=9000, cached_tokens=0, written_tokens=0, written_long_tokens=0, output_tokens=40)
    follow = SimpleNamespace(prompt_tokens=9460, cached_tokens=8960, written_tokens=0, written_long_tokens=0, output_tokens=40)
    assert sum(r.cost_usd for r in hosted.rows) == cost_of(usage, found).total + cost_of(follow, found).total
