"""``codex app-server`` output read as Codex calls (workloads/logs/formats/codex.py): the JSON-RPC
messages a client of the app-server protocol reads from its stdout, one a line. Each
``thread/tokenUsage/updated`` notification carries one model response's usage (``last``) and the
thread's running total (``total``), in camelCase."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format
from tests.unit.audit.fixtures import write_jsonl

MAIN = "0199a0b1-0000-7000-8000-00000000aaaa"
HELPER = "0199a0b1-0000-7000-8000-00000000bbbb"


def _counts(inp: int, cached: int, out: int, reasoning: int = 0) -> dict:
    return {"totalTokens": inp + out, "inputTokens": inp, "cachedInputTokens": cached, "outputTokens": out,
            "reasoningOutputTokens": reasoning}


def _usage(thread: str, total: dict, last: dict) -> dict:
    return {"method": "thread/tokenUsage/updated",
            "params": {"threadId": thread, "turnId": "t1", "tokenUsage": {"total": total, "last": last, "modelContextWindow": 272000}}}


def _session() -> list[dict]:
    """Two turns of one thread (three responses, one usage re-sent) and a second thread's call."""
    thread = {"id": MAIN, "sessionId": MAIN, "ephemeral": True, "modelProvider": "openai", "cliVersion": "0.150.2"}
    return [
        {"id": 1, "result": {"userAgent": "harness/0.150.2", "codexHome": "/home/u/.codex", "platformFamily": "unix"}},
        {"method": "remoteControl/status/changed", "params": {"status": "disabled"}},
        {"id": 2, "result": {"thread": thread, "model": "gpt-5.5", "modelProvider": "openai", "reasoningEffort": "medium"}},
        {"method": "thread/started", "params": {"thread": thread}},
        {"method": "turn/started", "params": {"threadId": MAIN, "turn": {"id": "t1", "status": "inProgress"}}},
        {"method": "item/completed", "params": {"threadId": MAIN, "turnId": "t1", "item": {"type": "agentMessage", "text": "ls"}}},
        _usage(MAIN, _counts(12_000, 0, 40, 10), _counts(12_000, 0, 40, 10)),
        {"method": "account/rateLimits/updated", "params": {"rateLimits": {"limitId": "codex"}}},
        _usage(MAIN, _counts(25_100, 11_904, 100, 30), _counts(13_100, 11_904, 60, 20)),
        _usage(MAIN, _counts(25_100, 11_904, 100, 30), _counts(13_100, 11_904, 60, 20)),  # re-sent: the same running total
        {"method": "turn/completed", "params": {"threadId": MAIN, "turn": {"id": "t1", "status": "completed"}}},
        _usage(HELPER, _counts(3_000, 0, 7), _counts(3_000, 0, 7)),
        _usage(MAIN, _counts(39_300, 24_832, 150, 30), _counts(14_200, 12_928, 50, 0)),
    ]


def test_app_server_output_is_detected_as_codex(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "stdout.txt", _session())
    assert detect_format(path) is FORMATS["codex"]


def test_each_token_usage_notification_is_one_call_with_its_last_counts(tmp_path: Path) -> None:
    # It was an unknown log format.
    path = write_jsonl(tmp_path / "stdout.txt", _session())
    requests, (summary,) = load_trace([path])
    assert [(r.line, r.lane, r.lane_kind) for r in requests] == [
        (7, "main", "main"), (9, "main", "main"), (12, f"thread {HELPER}", "subagent"), (13, "main", "main")]
    assert {r.model for r in requests} == {"gpt-5.5"} and {r.provider for r in requests} == {"openai"}
    assert requests[0].envelope == (("effort", "medium"),)
    # input includes cached: uncached = input - cached; output includes reasoning.
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests] == [
        (12_000, 0, 0, 40), (1_196, 11_904, 0, 60), (3_000, 0, 0, 7), (1_272, 12_928, 0, 50)]
    # One chain per thread, in file order.
    main = [r for r in requests if r.lane == "main"]
    assert [r.prefix.parent for r in main[1:]] == [r.prefix.node for r in main[:-1]]
    assert requests[2].prefix.parent is None
    assert summary.skipped == ((10, "repeated thread/tokenUsage/updated (same running total)"),)
    assert any("codex app-server output (Codex 0.150.2)" in n for n in summary.notes)
    assert any(f"thread {MAIN}: input 39,300 / output 150 tokens (the same)" in n for n in summary.notes)


def test_audit_totals_equal_the_running_totals(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "stdout.txt", _session())
    t = run_audit([path]).totals
    # The main thread's 39,300 in (24,832 cached) / 150 out, and the helper's 3,000 / 7.
    # OpenAI reports no write count: the writes are unknown (None), not 0.
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (4, 14_468 + 3_000, 24_832, None, 157)


def test_a_call_counted_in_the_threads_rollout_is_not_counted_again(tmp_path: Path) -> None:
    rollout = [
        {"timestamp": "2026-09-01T10:00:00.000Z", "type": "session_meta", "payload": {"id": MAIN, "cli_version": "0.150.2", "model_provider": "openai"}},
        {"timestamp": "2026-09-01T10:00:01.000Z", "type": "turn_context", "payload": {"model": "gpt-5.5", "effort": "medium"}},
        {"timestamp": "2026-09-01T10:00:05.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"total_tokens": 12_040, "input_tokens": 12_000, "cached_input_tokens": 0, "output_tokens": 40,
                                  "reasoning_output_tokens": 10},
            "last_token_usage": {"total_tokens": 12_040, "input_tokens": 12_000, "cached_input_tokens": 0, "output_tokens": 40,
                                 "reasoning_output_tokens": 10}}}},
    ]
    write_jsonl(tmp_path / "rollout-2026-09-01T10-00-00-x.jsonl", rollout)
    stdout = write_jsonl(tmp_path / "app-server.jsonl", _session()[:8])
    requests, summaries = load_trace([tmp_path])
    assert len(requests) == 1 and "rollout-" in requests[0].file
    (mine,) = [s for s in summaries if s.file == str(stdout)]
    assert mine.skipped == ((7, "thread/tokenUsage/updated counted in the thread's rollout (same running total)"),)


def test_a_token_usage_notification_without_its_counts_is_one_line(tmp_path: Path) -> None:
    broken = _session()[:6] + [{"method": "thread/tokenUsage/updated", "params": {"threadId": MAIN, "tokenUsage": {"total": {}}}}]
    path = write_jsonl(tmp_path / "stdout.txt", broken)
    with pytest.raises(UserError, match=r"stdout\.txt:7: thread/tokenUsage/updated without a threadId and tokenUsage\.last"):
        run_audit([path])
    bad_count = _session()[:6] + [_usage(MAIN, _counts(10, 0, 1), dict(_counts(10, 0, 1), inputTokens="ten"))]
    path = write_jsonl(tmp_path / "bad.txt", bad_count)
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert "\n" not in str(caught.value) and "bad.txt:7" in str(caught.value)


def test_an_output_with_no_usage_says_so(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "stdout.txt", _session()[:6])
    (summary,) = run_audit([path]).files
    assert summary.requests == 0 and "no thread/tokenUsage/updated notification: no call's usage in it" in summary.notes


def test_a_json_rpc_notification_of_another_server_is_not_codex(tmp_path: Path) -> None:
    path = tmp_path / "mcp.jsonl"
    path.write_text(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1}}) + "\n")
    with pytest.raises(UserError, match="unknown log format"):
        detect_format(path)


def test_a_bad_count_is_named_by_the_app_servers_own_keys(tmp_path: Path) -> None:
    # The error named the rollout's last_token_usage.input_tokens, a key the output does not have.
    bad = _session()[:6] + [_usage(MAIN, _counts(5, 0, 1), {**_counts(5, 0, 1), "inputTokens": "5"})]
    with pytest.raises(UserError, match=r"stdout\.txt:7: tokenUsage\.last\.inputTokens is not a non-negative integer"):
        load_trace([write_jsonl(tmp_path / "stdout.txt", bad)])
    over = _session()[:6] + [_usage(MAIN, _counts(5, 0, 1), {**_counts(5, 0, 1), "cachedInputTokens": -1})]
    with pytest.raises(UserError, match=r"stdout\.txt:7: tokenUsage\.last\.cachedInputTokens is not"):
        load_trace([write_jsonl(tmp_path / "stdout.txt", over)])


def test_a_long_thread_is_read_in_time_linear_in_its_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each call's place in its lane was counted over every call read before it: 20,000 calls
    # took 13 s (200 million lane lookups), where a rollout of as many takes under one.
    from prefixbench.workloads.logs.formats import codex

    lines = [{"id": 2, "result": {"thread": {"id": MAIN}, "model": "gpt-5.5", "modelProvider": "openai"}}]
    for n in range(1, 301):
        lines.append(_usage(MAIN, _counts(1_000 * n, 0, 5 * n), _counts(1_000, 0, 5)))
    looked = []
    real = codex._AppServer._lane
    monkeypatch.setattr(codex._AppServer, "_lane", lambda self, thread: looked.append(thread) or real(self, thread))
    requests, _ = load_trace([write_jsonl(tmp_path / "stdout.txt", lines)])
    assert len(requests) == 300 and [r.prefix.parent for r in requests[1:]] == [r.prefix.node for r in requests[:-1]]
    assert len(looked) <= 10 * 300
