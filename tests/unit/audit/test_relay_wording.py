"""A Codex session whose ``model_provider`` names a relay of the user's own configuration, not
OpenAI: its calls keep OpenAI's rules and list price (the numbers do not move), but the audit
names the relay in the headline, the models table and the notes, and puts a miss with nothing
changed down to the relay's cache, not OpenAI's best effort."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

from prefixbench.reports.audit import audit_html, audit_json, audit_table
from prefixbench.simulator.pricing import format_usd
from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.fixtures import write_jsonl


def _rollout(path: Path, provider: str) -> Path:
    """Six calls a few seconds apart on a growing prompt, each after the first reading only 3,072
    tokens: misses with nothing changed in the log."""
    start = datetime(2026, 1, 15, 10, tzinfo=timezone.utc)

    def at(second: int) -> str:
        return (start + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    lines = [
        {"timestamp": at(0), "type": "session_meta", "payload": {"id": "s", "cli_version": "0.63.0", "model_provider": provider}},
        {"timestamp": at(0), "type": "turn_context", "payload": {"model": "gpt-5.1-codex-max", "effort": "high"}},
    ]
    for n in range(6):
        lines += [
            {"timestamp": at(10 * n + 1), "type": "response_item",
             "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"turn {n}"}]}},
            {"timestamp": at(10 * n + 3), "type": "response_item",
             "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
        ]
        usage = {"input_tokens": 20_000 + 1_000 * n, "cached_input_tokens": 3_072 if n else 0, "output_tokens": 50}
        lines.append({"timestamp": at(10 * n + 4), "type": "event_msg",
                      "payload": {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}})
    return write_jsonl(path, lines)


def _audit(tmp_path: Path, provider: str):
    return run_audit([_rollout(tmp_path / provider / "rollout.jsonl", provider)])


def test_a_relay_named_by_model_provider_is_said_and_its_misses_are_its_own(tmp_path: Path) -> None:
    direct, relayed = _audit(tmp_path, "openai"), _audit(tmp_path, "myrelay")
    # The same rules and prices: every number as on OpenAI's own API.
    assert relayed.totals == direct.totals
    assert [(c.cause, c.requests, c.lost_usd) for c in relayed.causes] == [(c.cause, c.requests, c.lost_usd) for c in direct.causes]
    assert any(c.cause == "provider-best-effort" and c.requests >= 4 for c in relayed.causes)
    assert relayed.relays == (("openai", "gpt-5.1-codex-max", "myrelay", 6),) and direct.relays == ()

    missed = [r for r in relayed.rows if r.cause == "provider-best-effort"]
    assert missed and all(r.detail.startswith("through the relay 'myrelay': ") for r in missed)
    assert all("the relay, not OpenAI" in r.detail and "OpenAI routes by a prefix hash" not in r.detail for r in missed)
    assert all("OpenAI routes by a prefix hash" in r.detail and "relay" not in r.detail
               for r in direct.rows if r.cause == "provider-best-effort")

    table = audit_table(relayed)
    headline = next(line for line in table.splitlines() if line.startswith("6 requests:"))
    assert "(at the maker's list price, not the relay's bill: 6 request(s) through the relay 'myrelay')" in headline
    assert any(line.startswith("openai via relay 'myrelay'  gpt-5.1-codex-max") for line in table.splitlines())
    assert "the relay 'myrelay' is the relay's cache's, not the model maker's" in table
    notes = json.loads(audit_json(relayed))["notes"]
    assert any(n.startswith("6 request(s) of gpt-5.1-codex-max went through 'myrelay', an endpoint of your configuration "
                            "(a relay or gateway, not OpenAI's own API)") and "not the relay's bill" in n for n in notes)
    assert "relay" not in audit_table(direct)
    # The page's subtitle says it as the terminal's headline does.
    assert (f"paid {format_usd(relayed.totals.cost_usd)} (at the maker&#x27;s list price, not the relay&#x27;s bill: 6 request(s) through the relay "
            "&#x27;myrelay&#x27;)") in audit_html(relayed)


def test_only_an_unknown_model_provider_is_a_relay(tmp_path: Path) -> None:
    from prefixbench.simulator.providers.hosts import agent_relay
    from prefixbench.workloads.audit.core import load_trace

    assert agent_relay("codex", "openai") == "codex" and agent_relay(" my-relay ", "openai") == "my-relay"
    # OpenAI's own, a provider the audit knows, a self-hosted engine, Codex's --oss host and a
    # host of open models are not.
    for named in ("openai", "OpenAI", "deepseek", "ollama", "oss", "lmstudio", "fireworks", ""):
        assert agent_relay(named, "openai") == "", named
    # Codex's OpenTelemetry export names the provider as its rollouts do.
    export = Path(__file__).parents[1] / "logs" / "fixtures" / "otel_codex.json"
    relayed = tmp_path / "otel_codex.json"
    relayed.write_text(export.read_text().replace('"stringValue": "OpenAI"', '"stringValue": "codex"'))
    assert {r.relay for r in load_trace([export])[0]} == {""}
    # (its second conversation names no provider: read by its model's name, no relay)
    assert Counter((r.provider, r.relay) for r in load_trace([relayed])[0]) == {("openai", "codex"): 4, ("openai", ""): 2}


def test_azure_openai_is_openai_not_a_relay(tmp_path: Path) -> None:
    """A rollout with ``model_provider = "azure"`` said "openai via relay 'azure'": Azure OpenAI is
    Microsoft's first-party service of OpenAI's models, with OpenAI's caching rules. Now its
    calls are OpenAI's, with no relay; so are ``openai-chat-completions`` (the Codex docs' name
    for OpenAI's own API) and ``azure-openai``."""
    direct = _audit(tmp_path, "openai")
    for named in ("azure", "azure-openai", "openai-chat-completions"):
        result = _audit(tmp_path, named)
        assert result.relays == () and result.totals == direct.totals, named
        assert {r.provider for r in result.rows} == {"openai"} and "relay" not in audit_table(result), named


def test_a_self_hosted_engine_named_by_model_provider_is_no_relay(tmp_path: Path) -> None:
    """``model_provider = "vllm"`` (or ``llama.cpp``, ``localhost``) was a relay, its headline "at
    the maker's list price, not the relay's bill", though a self-hosted engine sends no bill. Now
    it is the engine its name says: provider unknown, unpriced, said as a self-hosted engine."""
    for named in ("vllm", "llama.cpp", "localhost", "sglang"):
        result = _audit(tmp_path, named)
        table = audit_table(result)
        assert result.relays == () and "relay" not in table, named
        assert {r.provider for r in result.rows} == {"unknown"}, named
        assert f"served by a self-hosted engine: {named})" in table, named


def test_a_custom_name_is_an_endpoint_of_the_users_configuration(tmp_path: Path) -> None:
    from prefixbench.simulator.providers.hosts import agent_relay

    result = _audit(tmp_path, "custom")
    assert result.relays == (("openai", "gpt-5.1-codex-max", "custom", 6),)
    notes = json.loads(audit_json(result))["notes"]
    assert any("went through 'custom', an endpoint of your configuration (a relay or gateway" in n for n in notes)
    assert not any("reseller" in n for n in notes)
    assert agent_relay("litellm", "openai") == "litellm" and agent_relay("Azure", "openai") == ""
