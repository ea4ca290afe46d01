"""A host named by the model's own id (``accounts/fireworks/...``, a router's ``:groq`` suffix):
the notes said the calls were "served by fireworks (the log names it)" and, two lines on, that
they "name no endpoint that tells who served them". They now say the model id named it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main


def _capture(path: Path, url: str, model: str) -> Path:
    records = []
    for n, read in enumerate((0, 90_000)):
        records.append({
            "request": {"timestamp": 1780000000 + 30 * n, "method": "POST", "url": url, "headers": {},
                        "body": {"model": model, "messages": [{"role": "system", "content": "You are a coding agent."},
                                                              {"role": "user", "content": "go"}]}},
            "response": {"timestamp": 1780000002 + 30 * n, "status_code": 200, "headers": {},
                         "body": {"id": f"c{n}", "object": "chat.completion", "model": model,
                                  "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
                                  "usage": {"prompt_tokens": 100_000, "completion_tokens": 1000,
                                            "prompt_tokens_details": {"cached_tokens": read}}}}})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("url, model, host", [
    ("https://llm.corp.example/v1/chat/completions", "accounts/fireworks/models/kimi-k2p6", "fireworks"),
    ("https://router.huggingface.co/v1/chat/completions", "openai/gpt-oss-120b:groq", "groq"),
])
def test_a_host_the_model_id_names_is_said_so_and_not_denied(tmp_path, capsys, url, model, host) -> None:
    assert main(["audit", str(_capture(tmp_path / "log.jsonl", url, model)), "--format", "json", "--quiet"]) in (0, 1)
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any(f"of {model} served by {host} (its model id names it) priced at" in n for n in notes), notes
    assert not any("(the log names it)" in n for n in notes)
    assert not any("name no endpoint that tells who served them" in n for n in notes)
    assert any(f"call(s) whose model id names the host that served them ({host}: 2)" in n for n in notes), notes
