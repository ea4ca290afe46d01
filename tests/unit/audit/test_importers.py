"""Each importer on small synthetic logs of every version it claims to read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import detect_format

from .fixtures import (
    Transcript,
    anthropic_body,
    capture_line,
    cc_usage,
    sse,
    write_jsonl,
)


def test_claude_code_keeps_last_line_of_each_request(tmp_path: Path) -> None:
    t = Transcript()
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    # Streamed: the first line's output count is partial, the last is final.
    t.assistant("req_1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 2000, 0, 5), cc_usage(3, 2000, 0, 120)])
    t.user("result", "2025-09-03T00:00:03.000Z", tool=True)
    t.assistant("req_2", "2025-09-03T00:00:05.000Z", [cc_usage(4, 100, 2000, 7), cc_usage(4, 100, 2000, 60)])
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    requests, _ = load_trace([path])
    assert [r.usage.output for r in requests] == [120, 60]
    assert [r.usage.cache_read for r in requests] == [0, 2000]
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert requests[0].sent_ms < requests[0].ready_ms


def test_claude_code_skips_synthetic_and_splits_1h_writes(tmp_path: Path) -> None:
    t = Transcript()
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("req_1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 3000, 0, 9, write_1h=1000)])
    t.assistant("req_2", "2025-09-03T00:00:03.000Z", [cc_usage(0, 0, 0, 0)], model="<synthetic>")
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    requests, summaries = load_trace([path])
    assert len(requests) == 1
    assert (requests[0].usage.cache_write_5m, requests[0].usage.cache_write_1h) == (2000, 1000)
    assert summaries[0].skipped[0][1].startswith("synthetic")


def test_claude_code_sidechains_subagent_files_and_compaction(tmp_path: Path) -> None:
    main = Transcript("sess")
    main.user("go", "2025-09-03T00:00:00.000Z", root=True)
    main.assistant("m1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    main.compact_boundary("2025-09-03T00:00:10.000Z")
    main.user("summary of the conversation", "2025-09-03T00:00:10.000Z")
    main.assistant("m2", "2025-09-03T00:00:12.000Z", [cc_usage(3, 500, 14000, 9)])
    side = Transcript("sess", sidechain=True)
    side.user("task", "2025-09-03T00:00:03.000Z", root=True)
    side.assistant("sc1", "2025-09-03T00:00:04.000Z", [cc_usage(3, 12000, 0, 9)])
    project = tmp_path / "project"
    write_jsonl(project / "sess.jsonl", main.lines + side.lines)
    agent = Transcript("agent", version="2.0.1", sidechain=True)
    agent.user("subtask", "2025-09-03T00:00:05.000Z", root=True)
    agent.assistant("a1", "2025-09-03T00:00:06.000Z", [cc_usage(3, 12000, 0, 9)])
    write_jsonl(project / "sess" / "subagents" / "agent-abc.jsonl", agent.lines)
    compact = Transcript("acompact", version="2.0.1", sidechain=True)
    compact.user("summarize", "2025-09-03T00:00:07.000Z", root=True)
    compact.assistant("c1", "2025-09-03T00:00:08.000Z", [cc_usage(3, 100, 0, 9)])
    write_jsonl(project / "sess" / "subagents" / "agent-acompact-1.jsonl", compact.lines)
    requests, _ = load_trace([project])
    lanes = {(Path(r.file).name, r.lane, r.lane_kind) for r in requests}
    assert lanes == {
        ("sess.jsonl", "main", "main"),
        ("sess.jsonl", "sidechain-1", "subagent"),
        ("agent-abc.jsonl", "agent-abc", "subagent"),
        ("agent-acompact-1.jsonl", "agent-acompact-1", "compaction"),
    }
    after = next(r for r in requests if r.request_id == "m2")
    assert after.prefix.parent is None and ("compaction", "") in after.events
    result = run_audit([project])
    row = next(row for row in result.rows if row.line == after.line and row.lane == "main")
    assert row.cause == "compaction"


def test_claude_code_json_array_form(tmp_path: Path) -> None:
    t = Transcript()
    t.user("héllo", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("req_1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 2000, 0, 5), cc_usage(3, 2000, 0, 50)])
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(t.lines, indent=2, ensure_ascii=True), encoding="utf-8")
    assert detect_format(path).name == "claude-code"
    requests, _ = load_trace([path])
    assert [r.usage.output for r in requests] == [50]
    # The line named is where the last element of the request starts in the pretty-printed array.
    assert path.read_text().splitlines()[requests[0].line - 1].strip() == "{"


def test_claude_code_ties_keep_file_order(tmp_path: Path) -> None:
    t = Transcript()
    t.user("a", "2025-09-03T00:00:05.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:05.000Z", [cc_usage(3, 2000, 0, 5)])
    t.user("b", "2025-09-03T00:00:01.000Z", tool=True)  # the clock goes backwards (resumed history)
    t.assistant("r2", "2025-09-03T00:00:01.000Z", [cc_usage(3, 100, 2000, 5)])
    path = write_jsonl(tmp_path / "s.jsonl", t.lines)
    result = run_audit([path])
    assert [row.line for row in result.rows] == [2, 4]
    assert result.rows[1].gap_ms == 0  # never negative
    assert result.rows[1].cause is None


def test_anthropic_capture_streamed_and_json(tmp_path: Path) -> None:
    streamed = capture_line(
        anthropic_body(),
        {"body_raw": sse(
            {"type": "message_start", "message": {"usage": {"input_tokens": 4, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}}},
            {"type": "message_delta", "usage": {"output_tokens": 77}},
        )},
    )
    plain = capture_line(
        anthropic_body(messages=4),
        {"body": {"usage": {"input_tokens": 5, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000, "output_tokens": 9}}},
        sent=1748554710.0,
    )
    refused = capture_line(anthropic_body(), {"body": {"error": "overloaded"}}, status=529, sent=1748554711.0)
    listing = {"request": {"timestamp": 1748554712.0, "method": "GET", "url": "https://api.anthropic.com/v1/models"}, "response": {"status_code": 200, "body": {"data": []}}}
    path = write_jsonl(tmp_path / "cap.jsonl", [streamed, plain, refused, listing])
    requests, summaries = load_trace([path])
    assert [(r.usage.cache_write, r.usage.cache_read, r.usage.output) for r in requests] == [(2000, 0, 77), (100, 2000, 9)]
    assert [reason.split(":")[0] for _, reason in summaries[0].skipped] == ["HTTP 529", "not a model call (no request body with a model)"]
    assert all(r.body is not None for r in requests)


def test_deepseek_anthropic_endpoint_input_excludes_reads(tmp_path: Path) -> None:
    line = capture_line(
        anthropic_body(model="deepseek-v4-flash"),
        {"body_raw": sse(
            {"type": "message_start", "message": {"usage": {"input_tokens": 300, "cache_read_input_tokens": 1280, "output_tokens": 0}}},
            {"type": "message_delta", "usage": {"input_tokens": 300, "cache_read_input_tokens": 1280, "output_tokens": 40}},
        )},
        url="https://api.deepseek.com/anthropic/v1/messages",
    )
    path = write_jsonl(tmp_path / "ds.jsonl", [line])
    (r,), _ = load_trace([path])
    assert (r.provider, r.usage.cache_read, r.usage.uncached, r.usage.output, r.usage.prompt) == ("deepseek", 1280, 300, 40, 1580)


def test_openai_responses_cached_tokens_are_inside_input(tmp_path: Path) -> None:
    completed = {"type": "response.completed", "response": {"usage": {"input_tokens": 5000, "input_tokens_details": {"cached_tokens": 4096}, "output_tokens": 70}}}
    streamed = capture_line({"model": "gpt-5.1", "input": "hi", "reasoning": {"effort": "high"}}, {"body_raw": f"event: response.completed\ndata: {json.dumps(completed)}\n\n"}, url="https://api.openai.com/v1/responses")
    plain = capture_line({"model": "gpt-5.1", "input": "hi"}, {"body": {"usage": {"input_tokens": 6000, "input_tokens_details": {"cached_tokens": 4992}, "output_tokens": 10}}}, url="https://api.openai.com/v1/responses", sent=1748554720.0)
    path = write_jsonl(tmp_path / "oa.jsonl", [streamed, plain])
    requests, _ = load_trace([path])
    assert [(r.usage.cache_read, r.usage.uncached) for r in requests] == [(4096, 904), (4992, 1008)]
    assert requests[0].envelope == (("effort", "high"),)
    result = run_audit([path])
    assert result.totals.input == 904 + 1008  # no double count of cached tokens


def test_provider_diagnostic_is_the_strongest_evidence(tmp_path: Path) -> None:
    first = capture_line(anthropic_body(), {"body": {"usage": {"input_tokens": 4, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}}})
    second = capture_line(
        anthropic_body(messages=4),
        {"body": {"usage": {"input_tokens": 4, "cache_creation_input_tokens": 2100, "cache_read_input_tokens": 0, "output_tokens": 1, "cache_miss_reason": {"type": "tools_changed"}}}},
        sent=1748554710.0,
    )
    path = write_jsonl(tmp_path / "diag.jsonl", [first, second])
    result = run_audit([path])
    row = [row for row in result.rows if row.lane == "main"][1]
    assert (row.cause, row.evidence) == ("tools-changed", "diagnostic")
    # Scored against the audit's own inference: the bodies differ in messages only here.
    assert row.inferred_cause is not None and row.inferred_cause != "tools-changed"
    assert any("diagnostics decided 1 miss(es)" in note and "for 0 (0%)" in note for note in result.notes)


def test_body_diff_names_the_changed_section(tmp_path: Path) -> None:
    usage = {"input_tokens": 4, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}
    first = capture_line(anthropic_body(), {"body": {"usage": usage}})
    changed = anthropic_body(messages=4, system="You are terse. " * 400)
    second = capture_line(changed, {"body": {"usage": {**usage, "cache_creation_input_tokens": 2100}}}, sent=1748554710.0)
    path = write_jsonl(tmp_path / "diff.jsonl", [first, second])
    row = [row for row in run_audit([path]).rows if row.lane == "main"][1]
    assert (row.cause, row.evidence) == ("system-changed", "body-diff")
    assert "'helpful." in row.detail and "'terse." in row.detail


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


def _pi(path: Path, entries: list[dict]) -> Path:
    header = {"type": "session", "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x", "provider": "anthropic", "modelId": "claude-opus-4-5", "thinkingLevel": "off"}
    return write_jsonl(path, [header, *entries])


def _pi_msg(role: str, ts_ms: int, usage: dict | None = None) -> dict:
    message = {"role": role, "content": [], "timestamp": ts_ms}
    if usage is not None:
        message.update({"provider": "anthropic", "model": "claude-opus-4-5", "api": "anthropic-messages", "usage": usage, "stopReason": "stop"})
    return {"type": "message", "timestamp": "2025-12-08T22:41:09.389Z", "message": message}


def _u(i: int, r: int, w: int, o: int = 10) -> dict:
    return {"input": i, "output": o, "cacheRead": r, "cacheWrite": w, "cost": {}}


def test_pi_thinking_change_and_unexplained_user_turn_miss(tmp_path: Path) -> None:
    t0 = 1765233665294
    entries = [
        _pi_msg("user", t0),
        _pi_msg("assistant", t0 + 10, _u(10, 0, 40000)),
        _pi_msg("toolResult", t0 + 5000),
        _pi_msg("assistant", t0 + 5010, _u(1, 40000, 500)),
        _pi_msg("assistant", t0 + 6000, _u(0, 0, 0, 0)),  # aborted before any usage
        {"type": "thinking_level_change", "timestamp": "x", "thinkingLevel": "high"},
        _pi_msg("user", t0 + 20000),
        _pi_msg("assistant", t0 + 20010, _u(10, 0, 41000)),
        _pi_msg("user", t0 + 60000),
        _pi_msg("assistant", t0 + 60010, _u(10, 0, 41500)),
    ]
    path = _pi(tmp_path / "pi.jsonl", entries)
    result = run_audit([path])
    causes = [(row.cause, row.evidence) for row in result.rows]
    assert causes == [("cold-start", "log"), (None, None), ("effort-changed", "log"), ("unexplained", "none")]
    assert "thinking off -> on" in result.rows[2].detail
    assert "cannot tell" in result.rows[3].detail and "restart" in result.rows[3].detail
    assert result.files[0].skipped == 1


def test_pi_compaction_starts_a_new_chain(tmp_path: Path) -> None:
    t0 = 1765233665294
    entries = [
        _pi_msg("user", t0),
        _pi_msg("assistant", t0 + 10, _u(10, 0, 40000)),
        {"type": "compaction", "timestamp": "x", "summary": "s", "firstKeptEntryIndex": 1, "tokensBefore": 40000},
        _pi_msg("user", t0 + 20000),
        _pi_msg("assistant", t0 + 20010, _u(10, 0, 5000)),
    ]
    result = run_audit([_pi(tmp_path / "pi.jsonl", entries)])
    assert result.rows[1].cause == "compaction"


def test_pi_tree_sessions_follow_parent_ids(tmp_path: Path) -> None:
    t0 = 1765233665294
    header = {"type": "session", "version": 3, "id": "p", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"}

    def entry(entry_id: str, parent: str | None, role: str, ts: int, usage: dict | None = None) -> dict:
        return {**_pi_msg(role, ts, usage), "id": entry_id, "parentId": parent}

    entries = [
        header,
        entry("e1", None, "user", t0),
        entry("e2", "e1", "assistant", t0 + 10, _u(10, 0, 40000)),
        entry("e3", "e2", "toolResult", t0 + 2000),
        entry("e4", "e3", "assistant", t0 + 2010, _u(1, 40000, 300)),
        # A branch back to the first user message: the same prompt e2 sent, read from the cache.
        entry("e5", "e1", "assistant", t0 + 60000, _u(10, 40000, 0)),
    ]
    path = write_jsonl(tmp_path / "tree.jsonl", entries)
    requests, _ = load_trace([path])
    assert [r.prefix.parent for r in requests] == [None, requests[0].prefix.node, requests[0].prefix.node]
    result = run_audit([path])
    assert [row.predicted_cache_read for row in result.rows] == [0, 40000, 40000]


def test_mooncake_predicts_shared_blocks(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "trace.jsonl", [
        {"timestamp": 0, "input_length": 1100, "output_length": 10, "hash_ids": [1, 2, 3]},
        {"timestamp": 50, "input_length": 1600, "output_length": 10, "hash_ids": [1, 2, 4, 5]},
    ])
    result = run_audit([path])
    assert [row.predicted_cache_read for row in result.rows] == [0, 1024]
    assert result.rows[1].reported_cache_read is None


def test_kvcache_simulator_traces_string_ids_and_partial_blocks(tmp_path: Path) -> None:
    # kvcache-simulator's trace: Mooncake's fields plus string ids, block_size and the tokens of
    # each block; only the blocks a request shares with what was sent before are read.
    path = write_jsonl(tmp_path / "kv.jsonl", [
        {"block_size": 16, "hash_ids": ["a", "b", "c"], "input_length": 40, "block_tokens": [16, 16, 8]},
        {"block_size": 16, "hash_ids": ["a", "b", "c", "d"], "input_length": 56, "block_tokens": [16, 16, 16, 8]},
        {"block_size": 16, "hash_ids": ["a", "b", "c"], "input_length": 40, "block_tokens": [16, 16, 8]},
        {"block_size": 16, "hash_ids": ["a", "e"], "input_length": 32},
    ])
    assert detect_format(path).name == "mooncake"
    result = run_audit([path])
    # "c" (8 tokens) and "c" (16 tokens) share an id only because the content matched; the
    # trace is trusted: the third request reads 16 + 16 + 8.
    assert [row.predicted_cache_read for row in result.rows] == [0, 48, 40, 16]
    assert [row.predicted_uncached for row in result.rows] == [40, 8, 0, 16]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"hash_ids": [1, True], "input_length": 10}, "hash_ids must be integers or non-empty strings"),
        ({"hash_ids": ["", "x"], "input_length": 10}, "hash_ids must be integers or non-empty strings"),
        ({"hash_ids": [1], "input_length": 10, "block_size": 0}, "block_size is not a block size"),
        ({"hash_ids": [1], "input_length": 10, "block_size": "16"}, "block_size is not a block size"),
        ({"hash_ids": [1, 2], "input_length": 10, "block_tokens": [5]}, "one count per hash id (2)"),
        ({"hash_ids": [1], "input_length": 10, "block_size": 16, "block_tokens": [17]}, "counts from 1 to block_size (16)"),
    ],
)
def test_block_trace_errors_name_the_line(tmp_path: Path, record: dict, message: str) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [{"hash_ids": [9], "input_length": 3}, record])
    with pytest.raises(UserError, match=rf"bad.jsonl:2: .*{message.replace('(', '.').replace(')', '.')}"):
        run_audit([path], fmt="mooncake")


def test_request_body_logs_use_the_existing_parsers(tmp_path: Path) -> None:
    body = {"model": "gpt-5.1", "messages": [{"role": "system", "content": "s" * 6000}, {"role": "user", "content": "hi"}]}
    path = write_jsonl(tmp_path / "bodies.jsonl", [body, {**body, "messages": body["messages"] + [{"role": "assistant", "content": "yo"}, {"role": "user", "content": "again"}]}])
    assert detect_format(path).name == "chat-completions"
    result = run_audit([path])
    assert result.rows[1].predicted_cache_read > 1024


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"hello": 1}\n', "unknown log format"),
        (b"\x00\x01\x02binary", "binary"),
        (b"", "empty file"),
    ],
)
def test_bad_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(UserError, match=message) as info:
        load_trace([path])
    assert f"{path}:1:" in str(info.value)


def test_truncated_line_names_its_line(tmp_path: Path) -> None:
    t = Transcript()
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 2000, 0, 5)])
    path = write_jsonl(tmp_path / "s.jsonl", t.lines)
    path.write_bytes(path.read_bytes() + b'{"parentUuid": "s1-u2", "type": "assis')
    with pytest.raises(UserError, match=rf"{path}:3: truncated"):
        load_trace([path])


def test_other_format_under_explicit_input(tmp_path: Path) -> None:
    path = _pi(tmp_path / "pi.jsonl", [_pi_msg("user", 1)])
    with pytest.raises(UserError, match=r"pi.jsonl:1: a pi record in a file read as claude-code"):
        load_trace([path], "claude-code")


def test_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no log files"):
        load_trace([tmp_path / "empty"])


def test_times_without_offset_are_utc() -> None:
    from prefixbench.workloads.logs.formats.common import parse_time_ms

    assert parse_time_ms("2025-09-03T00:52:31.217", "x") == parse_time_ms("2025-09-03T00:52:31.217Z", "x") == 1756860751217
    assert parse_time_ms(1748554704.293292, "x") == 1748554704293  # epoch seconds (claude-trace)
    assert parse_time_ms(1765233665294, "x") == 1765233665294  # epoch ms (pi)
    with pytest.raises(UserError, match="x: timestamp 'soon' is not ISO 8601"):
        parse_time_ms("soon", "x")


def test_older_codex_rollouts_without_usage_are_recognised(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rollout-old.jsonl", [
        {"id": "x", "timestamp": "2025-05-01T10:00:00Z", "instructions": None},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    ])
    assert detect_format(path).name == "codex"
    requests, summaries = load_trace([path])
    assert requests == [] and "no token_count events" in summaries[0].notes[-1]


def test_claude_code_2x_file_starting_with_snapshots(tmp_path: Path) -> None:
    t = Transcript(version="2.0.14")
    t.user("go", "2025-10-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-10-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    snapshots = [{"type": "file-history-snapshot", "messageId": f"m{n}", "snapshot": {}, "isSnapshotUpdate": False} for n in range(30)]
    path = write_jsonl(tmp_path / "s.jsonl", snapshots + t.lines)
    assert detect_format(path).name == "claude-code"
    requests, _ = load_trace([path])
    assert len(requests) == 1


def test_claude_code_resumed_history_counts_once(tmp_path: Path) -> None:
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    first = list(t.lines)
    t.user("more", "2025-09-03T00:10:00.000Z")
    t.assistant("r2", "2025-09-03T00:10:02.000Z", [cc_usage(3, 15100, 0, 9)])
    write_jsonl(tmp_path / "a.jsonl", first)
    write_jsonl(tmp_path / "b.jsonl", t.lines)  # the resumed session re-logs r1
    requests, summaries = load_trace([tmp_path])
    assert [r.request_id for r in requests] == ["r1", "r2"]
    assert "already counted" in summaries[1].skipped[0][1]


def test_a_new_root_in_a_lane_is_judged_against_the_head_only(tmp_path: Path) -> None:
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 30000, 0, 9)])
    t.user("a fresh conversation", "2025-09-03T00:01:00.000Z", root=True)  # no compaction logged
    t.assistant("r2", "2025-09-03T00:01:02.000Z", [cc_usage(3, 16000, 0, 9)])
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    second = result.rows[1]
    assert second.expected_cache_read == 0 and second.lost_tokens == 0  # the head size is unknown here
    assert second.cause == "cold-start"


def test_openai_56_cache_writes_are_their_own_part(tmp_path: Path) -> None:
    usage = {"input_tokens": 9000, "input_tokens_details": {"cached_tokens": 6000, "cache_write_tokens": 2500}, "output_tokens": 10}
    line = capture_line({"model": "gpt-5.6-sol", "input": "hi"}, {"body": {"usage": usage}}, url="https://api.openai.com/v1/responses")
    result = run_audit([write_jsonl(tmp_path / "oa.jsonl", [line])])
    row = result.rows[0]
    assert (row.reported_cache_read, row.reported_cache_write, row.reported_uncached) == (6000, 2500, 500)
    # 500 x $5 + 6000 x $0.50 + 2500 x $6.25 + 10 x $30 per 1M (gpt-5.6-sol).
    assert float(row.cost_usd) == pytest.approx((500 * 5 + 6000 * 0.5 + 2500 * 6.25 + 10 * 30) / 1e6)


def test_capture_bodies_share_repeated_messages(tmp_path: Path) -> None:
    usage = {"input_tokens": 4, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}
    lines = [capture_line(anthropic_body(messages=n), {"body": {"usage": usage}}, sent=1748554704.0 + n) for n in (2, 4, 6)]
    for line in lines:  # the marker moves to the newest message, as Claude Code sends it
        for message in line["request"]["body"]["messages"][:-1]:
            message["content"][-1].pop("cache_control", None)
    requests, _ = load_trace([write_jsonl(tmp_path / "cap.jsonl", lines)])
    first, second, third = (r.body.messages for r in requests)
    assert second[0] is first[0] and third[2] is second[2]  # held once, not once per call


def test_metadata_sidecars_in_a_walked_folder_are_skipped_and_listed(tmp_path: Path) -> None:
    agent = Transcript("agent", version="2.1.3", sidechain=True)
    agent.user("subtask", "2025-09-03T00:00:05.000Z", root=True)
    agent.assistant("a1", "2025-09-03T00:00:06.000Z", [cc_usage(3, 12000, 0, 9)])
    folder = tmp_path / "sess" / "subagents"
    write_jsonl(folder / "agent-abc.jsonl", agent.lines)
    (folder / "agent-abc.meta.json").write_text(json.dumps({"agentType": "general-purpose", "description": "x"}))
    result = run_audit([tmp_path])
    assert [f.format for f in result.files] == ["claude-code", "not-a-log"]
    assert result.totals.requests == 1
    with pytest.raises(UserError, match="unknown log format"):  # named on the command line: it must be a log
        run_audit([folder / "agent-abc.meta.json"])


def test_missing_cache_control_is_breakpoint_placement(tmp_path: Path) -> None:
    first_body = anthropic_body()
    second_body = anthropic_body(messages=4)
    for message in second_body["messages"]:  # the client forgot its markers on the second call
        for block in message["content"]:
            block.pop("cache_control", None)
    second_body["system"][0].pop("cache_control")
    usage = {"input_tokens": 4, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}
    lines = [
        capture_line(first_body, {"body": {"usage": usage}}),
        capture_line(second_body, {"body": {"usage": {**usage, "input_tokens": 2100, "cache_creation_input_tokens": 0}}}, sent=1748554710.0),
    ]
    row = [row for row in run_audit([write_jsonl(tmp_path / "c.jsonl", lines)]).rows if row.lane == "main"][1]
    assert (row.cause, row.evidence) == ("breakpoint-placement", "body-diff")
    assert "no cache_control" in row.detail


def test_one_hour_entries_outlive_a_20_minute_gap(tmp_path: Path) -> None:
    t = Transcript(version="2.1.47")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9, write_1h=15000)])
    t.user("later", "2025-09-03T00:20:00.000Z")
    t.assistant("r2", "2025-09-03T00:20:02.000Z", [cc_usage(3, 300, 15000, 9, write_1h=300)])
    t.user("much later", "2025-09-03T01:30:00.000Z")
    t.assistant("r3", "2025-09-03T01:30:02.000Z", [cc_usage(3, 15400, 0, 9, write_1h=15400)])
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    assert [row.predicted_cache_read for row in result.rows] == [0, 15000, 0]
    assert [row.cause for row in result.rows] == ["cold-start", None, "ttl-expired"]
    assert "past the 1h00m TTL" in result.rows[2].detail
    # 1 h writes bill at 2x input ($6 per 1M on Sonnet 4), not 1.25x.
    assert result.totals.cache_write_1h == 30700


def test_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    lines = tmp_path / "s.jsonl"
    lines.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\r\n" for r in t.lines).encode())
    array = tmp_path / "chat.json"
    array.write_bytes(b"\xef\xbb\xbf" + json.dumps(t.lines, indent=1).encode())
    for path in (lines, array):
        requests, _ = load_trace([path])
        assert [r.usage.cache_write for r in requests] == [1500]


def test_responses_captures_split_lanes_by_prompt_cache_key(tmp_path: Path) -> None:
    def call(key: str, sent: float, cached: int) -> dict:
        usage = {"input_tokens": 5000, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": 5}
        return capture_line({"model": "gpt-5.1", "input": "hi", "prompt_cache_key": key}, {"body": {"usage": usage}},
                            url="https://api.openai.com/v1/responses", sent=sent)

    lines = [call("a", 1748554704.0, 0), call("b", 1748554705.0, 0), call("a", 1748554706.0, 4992), call("b", 1748554707.0, 4992)]
    result = run_audit([write_jsonl(tmp_path / "oa.jsonl", lines)])
    assert [row.lane for row in result.rows] == ["main:a", "main:b", "main:a", "main:b"]
    assert [row.predicted_cache_read for row in result.rows] == [0, 0, 4992, 4992]


def test_empty_files_in_a_walked_folder_are_skipped_and_listed(tmp_path: Path) -> None:
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    write_jsonl(tmp_path / "a.jsonl", t.lines)
    (tmp_path / "b.jsonl").write_bytes(b"")
    result = run_audit([tmp_path])
    assert [(Path(f.file).name, f.format) for f in result.files] == [("a.jsonl", "claude-code"), ("b.jsonl", "empty")]
    with pytest.raises(UserError, match="b.jsonl:1: empty file"):
        run_audit([tmp_path / "b.jsonl"])
    (tmp_path / "a.jsonl").unlink()
    with pytest.raises(UserError, match="no log files"):
        run_audit([tmp_path])
