"""Request-body logs (workloads/logs/formats/chat_completions.py, anthropic_bodies.py)."""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import detect_format
from tests.unit.audit.fixtures import write_jsonl


def test_request_body_logs_use_the_existing_parsers(tmp_path: Path) -> None:
    body = {"model": "gpt-5.1", "messages": [{"role": "system", "content": "s" * 6000}, {"role": "user", "content": "hi"}]}
    path = write_jsonl(tmp_path / "bodies.jsonl", [body, {**body, "messages": body["messages"] + [{"role": "assistant", "content": "yo"}, {"role": "user", "content": "again"}]}])
    assert detect_format(path).name == "chat-completions"
    result = run_audit([path])
    assert result.rows[1].predicted_cache_read > 1024
