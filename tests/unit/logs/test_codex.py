"""Codex CLI rollouts (workloads/logs/formats/codex.py)."""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.logs.formats import detect_format
from tests.unit.audit.fixtures import write_jsonl


def _codex(path: Path, lines: list[tuple[str, dict]], session: str = "sess-1") -> Path:
    records = [{"timestamp": "2025-11-17T21:30:28.664Z", "type": "session_meta", "payload": {"id": session, "cli_version": "0.58.0", "model_provider": "openai"}}]
    records.append({"timestamp": "2025-11-17T21:30:29.000Z", "type": "turn_context", "payload": {"model": "gpt-5.1-codex", "effort": "high"}})
    for ts, payload in lines:
        records.append({"timestamp": ts, "type": "event_msg" if payload.get("type") == "token_count" else "response_item", "payload": payload})
    return write_jsonl(path, records)


def _tc(total_in: int, cached: int, out: int, last_in: int, last_cached: int, last_out: int) -> dict:
    return {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": total_in, "cached_input_tokens": cached, "output_tokens": out},
        "last_token_usage": {"input_tokens": last_in, "cached_input_tokens": last_cached, "output_tokens": last_out}}}


def test_codex_repeated_and_forked_token_counts_count_once(tmp_path: Path) -> None:
    lines = [
        ("2025-11-17T21:32:46.000Z", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        ("2025-11-17T21:32:50.000Z", _tc(10000, 0, 30, 10000, 0, 30)),
        ("2025-11-17T21:32:51.000Z", _tc(10000, 0, 30, 10000, 0, 30)),  # repeated
        ("2025-11-17T21:32:52.000Z", {"type": "function_call_output", "call_id": "c", "output": "ok"}),
        ("2025-11-17T21:32:55.000Z", _tc(20500, 9984, 60, 10500, 9984, 30)),
    ]
    original = _codex(tmp_path / "a" / "rollout-1.jsonl", lines)
    # A fork replays the parent's history (same lines) and goes on.
    fork = _codex(tmp_path / "b" / "rollout-2.jsonl", lines + [("2025-11-17T21:40:00.000Z", _tc(31000, 20352, 90, 10500, 10368, 30))], session="sess-2")
    requests, summaries = load_trace([original, fork])
    assert len(requests) == 3
    assert sum(r.usage.output for r in requests) == 90
    assert any("replayed" in reason for _, reason in summaries[1].skipped)
    assert requests[1].usage.uncached == 10500 - 9984


def test_older_codex_rollouts_without_usage_are_recognised(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rollout-old.jsonl", [
        {"id": "x", "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ])
    assert detect_format(path).name == "codex"
    requests, summaries = load_trace([path])
    assert requests == [] and "no token_count events" in summaries[0].notes[-1]


def test_codex_cache_writes_inside_input_are_read_as_writes(tmp_path: Path, capsys) -> None:
    """Later Codex versions add ``cache_write_input_tokens`` to the token usage (the Responses
    API's ``cache_write_tokens``, GPT-5.6 on), part of ``input_tokens`` as the cached part is.
    Main ignored it and counted the writes as uncached input."""
    from prefixbench.reports.cli import main

    def tc(last_in: int, cached: int, written: int, out: int) -> dict:
        last = {"input_tokens": last_in, "cached_input_tokens": cached, "cache_write_input_tokens": written, "output_tokens": out}
        return {"type": "token_count", "info": {"total_token_usage": dict(last), "last_token_usage": last}}

    lines = [
        ("2026-11-17T21:32:46.000Z", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        ("2026-11-17T21:32:50.000Z", tc(12000, 0, 11904, 40)),
    ]
    requests, _ = load_trace([_codex(tmp_path / "rollout-w.jsonl", lines)])
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m) for r in requests if r.usage] == [(96, 0, 11904)]
    bad = _codex(tmp_path / "bad" / "rollout-b.jsonl", [("2026-11-17T21:32:50.000Z", tc(100, 60, 50, 1))])
    assert main(["audit", str(bad), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "cached_input_tokens (60) and cache_write_input_tokens (50) exceed input_tokens (100)" in err


def test_codex_reads_into_the_previous_response_on_openai(tmp_path: Path) -> None:
    """Codex sends each response back whole (reasoning as encrypted_content), and OpenAI's cache
    keeps a response's tokens after its prompt: the second call's read is predicted up to the
    first prompt + output (10,000 + 400 = 10,400, floored to 128: 10,368), not the first prompt
    alone (9,984), matching what such a rollout reports."""
    from prefixbench.workloads.audit.core import run_audit

    lines = [
        ("2025-11-17T21:32:46.000Z", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        ("2025-11-17T21:32:50.000Z", _tc(10000, 0, 400, 10000, 0, 400)),
        ("2025-11-17T21:32:52.000Z", {"type": "function_call_output", "call_id": "c", "output": "ok"}),
        ("2025-11-17T21:32:55.000Z", _tc(20500, 10368, 430, 10500, 10368, 30)),
    ]
    result = run_audit([_codex(tmp_path / "rollout-1.jsonl", lines)])
    second = result.rows[1]
    assert (second.reported_cache_read, second.predicted_cache_read, second.cause) == (10368, 10368, None)
    # The audit says what it assumed, and what it does not call a miss.
    assert any(note.startswith("2 call(s) send their response back whole to a cache that keeps output") for note in result.notes)
