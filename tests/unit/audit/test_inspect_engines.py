"""Inspect AI logs whose model an adapter of the user's own engine served (``ollama/``, ``vllm/``,
``hf/``...: the adapters of Inspect's ``model/_providers/providers.py`` that run the model on the
user's side). The gate said ``no price row: ollama/llama3.1:8b``, the headline ``with no price for
their model``, and a note offered ``--model-alias``, where the calls of the same engines in other
agents' logs read ``self-hosted: no bill``. Now an Inspect log says self-hosted too, in the table,
the JSON's notes and report.html."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.reports.audit import audit_html, audit_json, audit_markdown, audit_table
from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import load_trace, run_audit
from tests.unit.logs.test_inspect_ai import event, log, sample, usage

#: Every adapter of Inspect's that runs the model on an engine of the user's.
ENGINES = ("ollama", "vllm", "vllm-completions", "sglang", "hf", "llama-cpp-python", "transformer_lens", "nnterp")


def _inspect_log(path: Path, model: str) -> Path:
    """An Inspect log (0.3.190: input_tokens without the cached part) of three calls of ``model``:
    a cold start, a read of 3,000, and a miss of the whole prompt (its system message changed)."""
    changed = event(model, usage(3300, 50, read=0), 3)
    changed["input"] = [{"role": "system", "content": "another system"}, *changed["input"][1:]]
    path.write_text(json.dumps(log("0.3.190", [sample(1, [
        event(model, usage(3000, 50, read=0), 1), event(model, usage(200, 50, read=3000), 2), changed])], model=model)))
    return path


@pytest.mark.parametrize("adapter", ENGINES)
def test_an_engine_of_the_users_is_self_hosted_in_every_view(tmp_path: Path, adapter: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    model = f"{adapter}/Qwen/Qwen3-8B"
    path = _inspect_log(tmp_path / "run.json", model)
    assert {(r.provider, r.model, r.upstream) for r in load_trace([path])[0]} == {("unknown", model, adapter)}
    assert main(["audit", str(path), "--quiet", "--max-lost-usd", "0.01"]) == 1
    fail = capsys.readouterr().err.strip()
    assert fail.startswith("FAIL lost unknown in dollars: 1 miss(es) lost 3,200 tokens, none of them in a dollar figure "
                           f"(self-hosted: no bill: {adapter}), to hold to --max-lost-usd $0.01; a self-hosted engine sends "
                           "no bill"), fail
    result = run_audit([path])
    table = audit_table(result)
    assert f"paid unknown (3 request(s) served by a self-hosted engine: {adapter})" in table
    (row,) = [line for line in table.splitlines() if line.startswith(f"unknown   {model}")]
    assert row.split()[-2:] == ["self-hosted", "-"], row
    said = f"no price for 3 request(s) of {model} served by {adapter}, a host running open models itself: no vendor bills its calls"
    assert any(note.startswith(said) for note in json.loads(audit_json(result))["notes"])
    assert "--model-alias" not in table and "with no price for their model" not in table
    assert f"served by a self-hosted engine: {adapter}" in audit_html(result)


def test_a_gateway_or_a_cloud_model_stays_what_it_was(tmp_path: Path) -> None:
    """An adapter of a hosted service (OpenRouter, Hugging Face's inference providers) is no engine
    of the user's: no price row, as before; an Ollama cloud model runs in Ollama's cloud, which
    bills it through its plans."""
    for adapter in ("openrouter", "hf-inference-providers", "sagemaker"):
        path = _inspect_log(tmp_path / f"{adapter}.json", f"{adapter}/qwen/qwen3-8b")
        assert [r.upstream for r in load_trace([path])[0]] == ["", "", ""]
        table = audit_table(run_audit([path]))
        assert "with no price for their model" in table and "self-hosted" not in table, adapter
    cloud = audit_table(run_audit([_inspect_log(tmp_path / "cloud.json", "ollama/gpt-oss:120b-cloud")]))
    assert "served by a host whose price for the model prefixbench lacks: Ollama's cloud" in cloud
    assert "self-hosted" not in cloud


def test_every_table_says_self_hosted_of_the_same_calls(tmp_path: Path) -> None:
    """The models table said ``self-hosted`` and the session, day, lane and file rows ``no price``
    of the same calls (terminal, audit.md, report.html): now every row whose unpriced calls an
    engine of the user's all served says ``self-hosted``, and the JSON counts them."""
    path = _inspect_log(tmp_path / "run.json", "ollama/llama3.1")
    result = run_audit([path])
    table, markdown, page = audit_table(result), audit_markdown(result), audit_html(result)
    for text in (table, markdown):
        rows = [line for line in text.splitlines() if "self-hosted" in line and "note" not in line and "paid unknown" not in line]
        assert len(rows) == 5, rows  # a session, a day, a lane, a model, a file
        assert not [line for line in text.splitlines() if "no price" in line and not line.startswith("note")], text
    assert page.count(">self-hosted<") == 4 and ">no price<" not in page  # (the page has no models table)
    record = json.loads(audit_json(result))
    for section in ("lanes", "models", "files", "sessions", "days"):
        assert [group["self_hosted_requests"] for group in record[section]] == [3], section


def test_a_unit_with_a_model_of_no_price_beside_them_says_no_price(tmp_path: Path) -> None:
    """Where a unit's unpriced calls are some an engine of the user's served and some of a model
    the price table does not price, it is no self-hosted unit: ``no price``, as the day's row says
    here; each file's own rows say what its calls were."""
    own = _inspect_log(tmp_path / "own.json", "ollama/llama3.1")
    other = _inspect_log(tmp_path / "other.json", "acme/no-such-model")
    table = audit_table(run_audit([own, other]))
    sessions = table.split("per session")[1].split("per day")[0]
    said = {line.split()[0]: line for line in sessions.splitlines() if line.startswith(("own.json", "other.json"))}
    assert " self-hosted " in said["own.json"] and " no price " in said["other.json"], sessions
    day = table.split("per day (UTC)")[1].split("\n\n")[0]
    (row,) = [line for line in day.splitlines() if line[:2].isdigit()]
    assert " no price " in row and "self-hosted" not in row, row
