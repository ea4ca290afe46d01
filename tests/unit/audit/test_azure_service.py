"""Calls to Azure OpenAI are read under OpenAI's rules and priced at its list price, but no output
said "Azure": the models table, headline and notes said plain ``openai``, as for OpenAI's own API.
Now the service is named (``openai (Azure OpenAI deployment 'gpt-4o-mini')``), with what its
price rests on, and no figure moves."""

from __future__ import annotations

import json
from pathlib import Path

from msgspec.structs import replace

from prefixbench.reports.audit import audit_html, audit_json, audit_table
from prefixbench.workloads.audit.assume_provider import assume_providers
from prefixbench.workloads.audit.core import load_trace, run_audit
from tests.unit.audit.fixtures import capture_line, chat_usage, write_jsonl
from tests.unit.audit.test_relay_wording import _audit

NOTE = ("6 request(s) of gpt-5.1-codex-max went to Azure OpenAI, not OpenAI's own API: read under OpenAI's caching rules, "
        "which the service follows; paid and lost are OpenAI's list price, not the service's bill")
PAID = "(at the maker's list price, not the service's bill: 6 request(s) to Azure OpenAI)"


def test_a_codex_session_on_azure_names_the_service_and_moves_no_figure(tmp_path: Path) -> None:
    direct, azure = _audit(tmp_path, "openai"), _audit(tmp_path, "azure")
    assert azure.totals == direct.totals and tuple(replace(m, service=None) for m in azure.models) == direct.models
    assert [m.service for m in azure.models] == ["Azure OpenAI"]
    assert [(r.cause, r.lost_tokens, r.lost_usd, r.detail) for r in azure.rows] == [
        (r.cause, r.lost_tokens, r.lost_usd, r.detail) for r in direct.rows]
    assert azure.services == (("openai", "gpt-5.1-codex-max", "Azure OpenAI", 6),) and direct.services == ()
    table = audit_table(azure)
    assert any(line.startswith("openai (Azure OpenAI)  gpt-5.1-codex-max") for line in table.splitlines())
    assert PAID in table and "relay" not in table
    assert any(n.startswith(NOTE) for n in json.loads(audit_json(azure))["notes"])
    assert PAID.replace("'", "&#x27;") in audit_html(azure)
    assert "Azure" not in audit_table(direct) and "Azure" not in audit_html(direct)


def test_a_captured_call_to_an_azure_deployment_names_it(tmp_path: Path) -> None:
    def capture(url: str, **model: str) -> Path:  # (a deployment's call names its model in the path only)
        line = capture_line({**model, "messages": [{"role": "user", "content": "hi"}]},
                            {"body": {"model": "gpt-4o-mini-2024-07-18", "usage": chat_usage(1300, 1024)}}, url=url)
        return write_jsonl(tmp_path / f"{len(list(tmp_path.iterdir()))}.jsonl", [line])

    deployment = capture("https://res.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-12-01-preview")
    v1 = capture("https://res.openai.azure.com/openai/v1/chat/completions", model="gpt-4o-mini")
    own = capture("https://api.openai.com/v1/chat/completions", model="gpt-4o-mini")
    assert [r.service for r in load_trace([deployment, v1, own])[0]] == ["Azure OpenAI deployment 'gpt-4o-mini'", "Azure OpenAI", ""]
    table = audit_table(run_audit([deployment]))
    assert any(line.startswith("openai (Azure OpenAI deployment 'gpt-4o-mini')  gpt-4o-mini") for line in table.splitlines()), table
    assert "1 request(s) to Azure OpenAI)" in table


def _pi_session(path: Path, provider: str, model: str) -> Path:
    answer = {"role": "assistant", "content": [{"type": "text", "text": "hello"}], "provider": provider, "model": model,
              "stopReason": "stop", "timestamp": 1761987602000,
              "usage": {"input": 1200, "output": 30, "cacheRead": 1024, "cacheWrite": 0, "cost": {"total": 0.012}}}
    return write_jsonl(path, [
        {"type": "session", "id": "s", "timestamp": "2025-11-01T09:00:00.000Z", "cwd": "/work", "thinkingLevel": "off"},
        {"type": "message", "timestamp": "2025-11-01T09:00:01.000Z", "message": {"role": "user", "content": "hi", "timestamp": 1761987601000}},
        {"type": "message", "timestamp": "2025-11-01T09:00:03.000Z", "message": answer}])


def test_pi_and_opencode_sessions_on_azure_name_it(tmp_path: Path) -> None:
    """pi's ``azure-openai-responses`` provider and OpenCode's ``azure``: OpenAI's models on Azure
    OpenAI. A model of another maker is not Azure OpenAI's, whatever its provider's name."""
    azure = _pi_session(tmp_path / "azure.jsonl", "azure-openai-responses", "gpt-5.1")
    own = _pi_session(tmp_path / "own.jsonl", "openai", "gpt-5.1")
    assert [(r.provider, r.service) for r in load_trace([azure, own])[0]] == [("openai", "Azure OpenAI"), ("openai", "")]
    assert run_audit([azure]).totals.cost_usd == run_audit([own]).totals.cost_usd
    assert any(line.startswith("openai (Azure OpenAI)  gpt-5.1") for line in audit_table(run_audit([azure])).splitlines())
    claude = _pi_session(tmp_path / "claude.jsonl", "azure-foundry", "claude-sonnet-4-5")
    assert [r.service for r in load_trace([claude])[0]] == [""]

    fixture = json.loads((Path(__file__).resolve().parents[1] / "logs" / "fixtures" / "opencode.json").read_text())

    def on(provider: str, model: str, value: object) -> object:
        if isinstance(value, dict):
            return {k: provider if k == "providerID" else model if k == "modelID" else on(provider, model, v) for k, v in value.items()}
        return [on(provider, model, v) for v in value] if isinstance(value, list) else value

    session = tmp_path / "opencode" / "ses.json"
    session.parent.mkdir()
    session.write_text(json.dumps(on("azure", "gpt-5.1", fixture)))
    assert {(r.provider, r.service) for r in load_trace([session])[0]} == {("openai", "Azure OpenAI")}


def test_a_litellm_row_of_an_azure_deployment_names_it(tmp_path: Path) -> None:
    """LiteLLM's spend log keeps ``custom_llm_provider`` (``azure``) and the ``api_base`` the call
    went to: either names Azure OpenAI; OpenAI's own base names none."""
    fixture = Path(__file__).resolve().parents[1] / "logs" / "fixtures" / "litellm.jsonl"
    row = json.loads(fixture.read_text().splitlines()[-1])  # (a gpt-4o row)

    def log(name: str, **changed: str) -> Path:
        return write_jsonl(tmp_path / name, [{**row, "request_id": name, **changed}])  # (one id a file: not a row counted twice)

    by_base = log("base.jsonl", custom_llm_provider="azure", api_base="https://res.openai.azure.com/openai/deployments/prod-4o/chat/completions")
    by_name = log("name.jsonl", custom_llm_provider="azure", api_base="https://gateway.internal/v1")
    own = log("own.jsonl", custom_llm_provider="openai", api_base="https://api.openai.com/v1")
    assert [(r.provider, r.service) for r in load_trace([by_base, by_name, own])[0]] == [
        ("openai", "Azure OpenAI deployment 'prod-4o'"), ("openai", "Azure OpenAI"), ("openai", "")]


def test_an_inspect_log_of_openai_azure_names_it(tmp_path: Path) -> None:
    """Inspect AI's ``openai/azure/<model>`` (its OpenAI adapter on Azure OpenAI): the model is the
    name past ``azure/``, the service named, the figures OpenAI's own API's."""
    fixture = json.loads((Path(__file__).resolve().parents[1] / "logs" / "fixtures" / "inspect-ai.json").read_text())
    fixture["eval"]["packages"]["inspect_ai"] = "0.3.190"  # (OpenAI's input_tokens without the cached part, as the fixture's)

    def on(model: str) -> Path:
        def swap(value: object) -> object:
            if isinstance(value, dict):
                return {k: model if k == "model" and isinstance(v, str) else swap(v) for k, v in value.items()}
            return [swap(v) for v in value] if isinstance(value, list) else value

        path = tmp_path / f"{model.replace('/', '_')}.json"
        path.write_text(json.dumps(swap(fixture)))
        return path

    azure, own = on("openai/azure/gpt-4o"), on("openai/gpt-4o")
    assert {(r.provider, r.model, r.service) for r in load_trace([azure])[0]} == {("openai", "gpt-4o", "Azure OpenAI")}
    assert {(r.provider, r.model, r.service) for r in load_trace([own])[0]} == {("openai", "gpt-4o", "")}
    assert run_audit([azure]).totals == run_audit([own]).totals
    assert any(line.startswith("openai (Azure OpenAI)  gpt-4o") for line in audit_table(run_audit([azure])).splitlines())


def _deployment_call(tmp_path: Path, deployment: str, answered_as: str | None, name: str = "") -> Path:
    """A captured call to an Azure OpenAI deployment (its model named in the path only), the
    answer naming ``answered_as`` (no model where None)."""
    answer = {"usage": chat_usage(1300, 1024), **({"model": answered_as} if answered_as else {})}
    line = capture_line({"messages": [{"role": "user", "content": "hi"}]}, {"body": answer},
                        url=f"https://res.openai.azure.com/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21")
    return write_jsonl(tmp_path / (name or f"{deployment}.jsonl"), [line])


def test_the_model_is_the_one_the_answer_names_not_the_deployment_s_label(tmp_path: Path) -> None:
    """A deployment's name is the user's label (``prod-chat``): the answer names the model that
    served the call, which is priced; the label stays the service's. Before, ``prod-chat`` was
    the model, unpriced, and the note asked for --model-alias."""
    capture = _deployment_call(tmp_path, "prod-chat", "gpt-4o-2024-11-20")
    assert [(r.provider, r.model, r.service) for r in load_trace([capture])[0]] == [
        ("openai", "gpt-4o-2024-11-20", "Azure OpenAI deployment 'prod-chat'")]
    result = run_audit([capture])
    assert result.totals.cost_usd and not any("--model-alias" in n or "prod-chat" in n and "price" in n and "no " in n
                                              for n in result.notes)
    table = audit_table(result)
    assert "(at the maker's list price, not the service's bill: 1 request(s) to Azure OpenAI)" in table
    assert any(line.startswith("openai (Azure OpenAI deployment 'prod-chat')  gpt-4o-2024-11-20") for line in table.splitlines())
    # (no model in the answer: the deployment's name is all there is)
    bare = _deployment_call(tmp_path, "gpt-4o-mini", None)
    assert [r.model for r in load_trace([bare])[0]] == ["gpt-4o-mini"]


def test_unpriced_calls_to_a_service_are_not_said_to_be_at_the_list_price(tmp_path: Path) -> None:
    """A deployment's call whose model has no price is in no dollar figure: the headline and the
    note say so, not "at the maker's list price"; priced calls beside it keep those words."""
    unpriced = _deployment_call(tmp_path, "prod-chat", None)
    table = audit_table(run_audit([unpriced]))
    headline = next(line for line in table.splitlines() if "paid" in line)
    assert "list price" not in headline, headline
    assert "(unpriced, their model having no price: 1 request(s) to Azure OpenAI)" in headline
    notes = [n for n in run_audit([unpriced]).notes if "went to Azure OpenAI" in n]
    assert len(notes) == 1 and "list price" not in notes[0] and "unpriced: the price table has no row of prod-chat" in notes[0], notes
    both = run_audit([unpriced, _deployment_call(tmp_path, "mini", "gpt-4o-mini-2024-07-18")])
    assert ("(at the maker's list price, not the service's bill: 1 request(s) to Azure OpenAI; "
            "unpriced, their model having no price: 1 request(s) to Azure OpenAI)") in audit_table(both)
    assert ("(at the maker's list price, not the service's bill: 1 request(s) to Azure OpenAI; "
            "unpriced, their model having no price: 1 request(s) to Azure OpenAI)").replace("'", "&#x27;") in audit_html(both)


def test_one_service_is_counted_once_its_deployments_named_in_the_models_table(tmp_path: Path) -> None:
    """The headline stacked one service under each name it had: ``3 request(s) to Azure OpenAI
    deployment 'chat' 2, Azure OpenAI deployment 'mini' 1``, and, beside calls that named no
    deployment, ``Azure OpenAI 1, Azure OpenAI deployment 'x' 1``. It counts the service once;
    each deployment is named once, in its model's row."""
    url = "https://res.openai.azure.com/openai/deployments/chat/chat/completions?api-version=2024-10-21"
    chat = write_jsonl(tmp_path / "chat.jsonl", [
        capture_line({"messages": [{"role": "user", "content": text}]},
                     {"body": {"model": "gpt-4o-mini-2024-07-18", "usage": chat_usage(1300, 1024)}}, url=url, sent=1748554704.0 + i)
        for i, text in enumerate(("hi", "hello"))])
    paths = [chat, _deployment_call(tmp_path, "mini", "gpt-4o-mini-2024-07-18")]
    table = audit_table(run_audit(paths))
    assert "(at the maker's list price, not the service's bill: 3 request(s) to Azure OpenAI)" in table
    assert any(line.startswith("openai (Azure OpenAI deployment 'chat', 2 req) (Azure OpenAI deployment 'mini', 1 req)  "
                               "gpt-4o-mini-2024-07-18") for line in table.splitlines()), table

    deployment = _deployment_call(tmp_path, "x", "gpt-4o-2024-11-20")
    v1 = write_jsonl(tmp_path / "v1.jsonl", [capture_line(
        {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]},
        {"body": {"model": "gpt-4o-mini-2024-07-18", "usage": chat_usage(1300, 1024)}},
        url="https://res.openai.azure.com/openai/v1/chat/completions")])
    result = run_audit([deployment, v1])
    table = audit_table(result)
    headline = next(line for line in table.splitlines() if "paid" in line)
    assert "(at the maker's list price, not the service's bill: 2 request(s) to Azure OpenAI)" in headline, headline
    assert "deployment" not in headline
    rows = [line for line in table.splitlines() if line.startswith("openai (")]
    assert [row.split("  ")[0] for row in rows] == ["openai (Azure OpenAI deployment 'x')", "openai (Azure OpenAI)"], rows
    assert "2 request(s) to Azure OpenAI)" in audit_html(result)


def test_an_azure_endpoint_names_who_served_the_call_no_provider_assumed(tmp_path: Path) -> None:
    """An ``*.openai.azure.com`` endpoint says who served the call: it is not among the calls the
    "assumed" note counts as naming no endpoint that tells (a server of no provider's is)."""
    azure = _deployment_call(tmp_path, "prod-chat", "gpt-4o-2024-11-20")
    assert [r.provider_by_model for r in load_trace([azure])[0]] == [False]
    assert assume_providers(load_trace([azure])[0], {})[1] == ()
    line = capture_line({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
                        {"body": {"model": "gpt-4o", "usage": chat_usage(1300, 1024)}}, url="https://llm.internal/v1/chat/completions")
    elsewhere = write_jsonl(tmp_path / "elsewhere.jsonl", [line])
    (note,) = assume_providers(load_trace([azure, elsewhere])[0], {})[1]
    assert note.startswith("assumed: 1 http-capture call(s) name no endpoint that tells who served them"), note
    # --assume-provider leaves the Azure call's provider as its endpoint gave it
    out, _ = assume_providers(load_trace([azure, elsewhere])[0], {"*": "unknown"})
    assert [r.provider for r in out] == ["openai", "unknown"]


def test_the_json_names_the_service_of_each_request_and_model(tmp_path: Path) -> None:
    """The table named the service (``openai (Azure OpenAI deployment 'x')``), but the JSON's
    requests and models carried no field for it: an Azure OpenAI log read there as OpenAI's own
    API. Each now holds ``service``, null where the log names none."""
    deployment = _deployment_call(tmp_path, "x", "gpt-4o-2024-11-20")
    chat, mini = _deployment_call(tmp_path, "chat", "gpt-4o-mini-2024-07-18"), _deployment_call(tmp_path, "mini", "gpt-4o-mini-2024-07-18")
    own = write_jsonl(tmp_path / "own.jsonl", [capture_line(
        {"model": "gpt-4o-mini-2024-07-18", "messages": [{"role": "user", "content": "hello"}]},
        {"body": {"model": "gpt-4o-mini-2024-07-18", "usage": chat_usage(1300, 1024)}}, url="https://api.openai.com/v1/chat/completions")])
    record = json.loads(audit_json(run_audit([deployment, chat, mini, own])))
    assert sorted((Path(r["file"]).name, r["service"]) for r in record["requests"]) == [
        ("chat.jsonl", "Azure OpenAI deployment 'chat'"), ("mini.jsonl", "Azure OpenAI deployment 'mini'"), ("own.jsonl", None),
        ("x.jsonl", "Azure OpenAI deployment 'x'")]
    assert [(m["model"], m["service"]) for m in record["models"]] == [
        ("gpt-4o-2024-11-20", "Azure OpenAI deployment 'x'"),
        ("gpt-4o-mini-2024-07-18", "Azure OpenAI deployment 'chat', 1 req; Azure OpenAI deployment 'mini', 1 req")]  # (of 3)
    assert record["schema"] == 6  # (the new field did not change it: 6 is the ranks')
    # (a log that names no service: every record's is null)
    plain = json.loads(audit_json(run_audit([own])))
    assert [r["service"] for r in plain["requests"]] == [None] and [m["service"] for m in plain["models"]] == [None]
