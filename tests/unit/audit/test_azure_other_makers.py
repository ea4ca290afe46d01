"""Only a call read under OpenAI's rules is "Azure OpenAI". A model of another maker sent to an
Azure endpoint (grok-3, DeepSeek-V3-0324 on an Azure resource's ``/openai/v1``) was printed
``xai (Azure OpenAI)``: the service was set from the URL or provider name alone in the capture,
LiteLLM, Codex and OpenTelemetry readers. Now each checks the call was read as OpenAI's, as pi
and OpenCode do; and Codex's app-server and exec outputs name Azure OpenAI as its rollouts do."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.workloads.audit.core import load_trace
from tests.unit.audit.fixtures import capture_line, chat_usage, write_jsonl
from tests.unit.audit.test_relay_wording import _rollout
from tests.unit.logs.test_codex import EXEC_INFO
from tests.unit.logs.test_codex_app_server import _session

LOGS = Path(__file__).resolve().parents[1] / "logs" / "fixtures"
AZURE_V1 = "https://res.openai.azure.com/openai/v1/chat/completions"


def _read(*paths: Path) -> list[tuple[str, str]]:
    return [(r.provider, r.service) for r in load_trace(list(paths))[0]]


def test_a_captured_call_of_another_maker_on_azure_is_not_azure_openai(tmp_path: Path) -> None:
    def capture(name: str, model: str) -> Path:
        line = capture_line({"model": model, "messages": [{"role": "user", "content": "hi"}]},
                            {"body": {"model": model, "usage": chat_usage(1300, 1024)}}, url=AZURE_V1)
        return write_jsonl(tmp_path / name, [line])

    assert _read(capture("grok.jsonl", "grok-3")) == [("xai", "")]
    assert _read(capture("ds.jsonl", "DeepSeek-V3-0324")) == [("deepseek", "")]
    assert _read(capture("gpt.jsonl", "gpt-4o-mini")) == [("openai", "Azure OpenAI")]


def test_a_litellm_row_of_another_maker_on_azure_is_not_azure_openai(tmp_path: Path) -> None:
    row = json.loads((LOGS / "litellm.jsonl").read_text().splitlines()[-1])  # (a gpt-4o row)

    def log(name: str, **changed: str) -> Path:
        return write_jsonl(tmp_path / name, [{**row, "request_id": name, **changed}])

    by_base = log("base.jsonl", model="grok-3", custom_llm_provider="azure_ai", api_base="https://res.openai.azure.com/openai/v1")
    by_name = log("name.jsonl", model="grok-3", custom_llm_provider="azure", api_base="https://gateway.internal/v1")
    assert _read(by_base, by_name) == [("xai", ""), ("xai", "")]


def test_an_opencode_session_of_another_maker_on_azure_is_not_azure_openai(tmp_path: Path) -> None:
    fixture = json.loads((LOGS / "opencode.json").read_text())

    def on(value: object) -> object:
        if isinstance(value, dict):
            return {k: "azure" if k == "providerID" else "DeepSeek-V3-0324" if k == "modelID" else on(v) for k, v in value.items()}
        return [on(v) for v in value] if isinstance(value, list) else value

    session = tmp_path / "opencode" / "ses.json"
    session.parent.mkdir()
    session.write_text(json.dumps(on(fixture)))
    assert {service for _, service in _read(session)} == {""}


def test_codex_on_azure_deepseek_is_not_azure_openai(tmp_path: Path) -> None:
    """``model_provider = "azure-deepseek"`` serves DeepSeek's models: not Azure OpenAI, in a
    rollout and in Codex's OpenTelemetry export; ``azure`` still is, in both."""
    for named, service in (("azure-deepseek", ""), ("azure", "Azure OpenAI")):
        rollout = _rollout(tmp_path / named / "rollout.jsonl", named)
        assert {s for _, s in _read(rollout)} == {service}, named
        export = tmp_path / named / "otel_codex.json"
        export.write_text((LOGS / "otel_codex.json").read_text().replace('"stringValue": "OpenAI"', f'"stringValue": "{named}"'))
        # (its second conversation names no provider: read by its model's name, no service)
        assert {s for _, s in _read(export)} == {service, ""}, named


def test_codex_app_server_and_exec_outputs_on_azure_name_it(tmp_path: Path) -> None:
    server = [json.loads(json.dumps(line).replace('"modelProvider": "openai"', '"modelProvider": "azure"')) for line in _session()]
    assert {s for _, s in _read(write_jsonl(tmp_path / "server.jsonl", server))} == {"Azure OpenAI"}
    exec_out = [{**EXEC_INFO[0], "provider": "azure"}, *EXEC_INFO[1:]]
    assert {s for _, s in _read(write_jsonl(tmp_path / "exec.jsonl", exec_out))} == {"Azure OpenAI"}
    deepseek = [{**EXEC_INFO[0], "provider": "azure-deepseek"}, *EXEC_INFO[1:]]
    assert {s for _, s in _read(write_jsonl(tmp_path / "ds.jsonl", deepseek))} == {""}


def test_an_azure_host_with_an_explicit_port_is_azure_and_a_longer_host_is_not(tmp_path: Path) -> None:
    """``https://res.openai.azure.com:443/...`` is the same resource (its port was taken for
    part of another host's name); ``res.openai.azure.com.evil.example`` is another host."""
    from prefixbench.simulator.providers.hosts import azure_service

    assert azure_service("res.openai.azure.com:443/openai/deployments/prod-4o/chat/completions") == "Azure OpenAI deployment 'prod-4o'"
    assert azure_service("res.cognitiveservices.azure.com:443/openai/v1/chat/completions") == "Azure OpenAI"
    for other in ("res.openai.azure.com.evil.example/openai/v1/chat/completions", "res.openai.azure.com.evil.example",
                  "res.openai.azure.com:evil/openai/v1", "res.cognitiveservices.azure.com.evil.example/openai/v1"):
        assert azure_service(other) == "", other
    line = capture_line({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]},
                        {"body": {"model": "gpt-4o-mini", "usage": chat_usage(1300, 1024)}},
                        url="https://res.openai.azure.com:443/openai/v1/chat/completions")
    assert _read(write_jsonl(tmp_path / "port.jsonl", [line])) == [("openai", "Azure OpenAI")]
    evil = capture_line({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]},
                        {"body": {"model": "gpt-4o-mini", "usage": chat_usage(1300, 1024)}},
                        url="https://res.openai.azure.com.evil.example/openai/v1/chat/completions")
    assert _read(write_jsonl(tmp_path / "evil.jsonl", [evil])) == [("openai", "")]


def test_a_codex_relay_whose_name_holds_azure_is_a_relay_not_azure_openai(tmp_path: Path) -> None:
    """Codex's Azure OpenAI is its provider id ``azure``; ``azure`` inside another id (a relay
    ``azureproxy-litellm`` of the user's) made it Azure OpenAI and lost the relay's wording."""
    from prefixbench.simulator.providers.hosts import agent_relay, codex_azure

    assert agent_relay("azureproxy-litellm", "openai") == "azureproxy-litellm" and agent_relay("Azure", "openai") == ""
    assert [codex_azure(n) for n in ("azure", " Azure ", "azure-openai", "Azure_OpenAI", "azureproxy-litellm", "azure-deepseek", "my-azure")] == [
        True, True, True, True, False, False, False]
    rollout = _rollout(tmp_path / "relay" / "rollout.jsonl", "azureproxy-litellm")
    assert {(r.provider, r.service, r.relay) for r in load_trace([rollout])[0]} == {("openai", "", "azureproxy-litellm")}
    export = tmp_path / "otel_codex.json"
    export.write_text((LOGS / "otel_codex.json").read_text().replace('"stringValue": "OpenAI"', '"stringValue": "azureproxy-litellm"'))
    assert {(r.service, r.relay) for r in load_trace([export])[0]} == {("", "azureproxy-litellm"), ("", "")}
    server = [json.loads(json.dumps(line).replace('"modelProvider": "openai"', '"modelProvider": "azureproxy-litellm"')) for line in _session()]
    assert {(r.service, r.relay) for r in load_trace([write_jsonl(tmp_path / "server.jsonl", server)])[0]} == {("", "azureproxy-litellm")}
