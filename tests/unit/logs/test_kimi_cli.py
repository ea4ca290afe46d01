"""Kimi CLI wire logs (workloads/logs/formats/kimi_cli.py): fixtures built here from the wire
records kimi-cli writes (``{timestamp, message: {type, payload}}``, StatusUpdate token_usage)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format
from tests.unit.audit.fixtures import cli_in_process as _cli

T0 = 1770000000.0


def _rec(t: float, kind: str, payload: dict) -> dict:
    return {"timestamp": T0 + t, "message": {"type": kind, "payload": payload}}


def _usage(other: int, out: int, read: int = 0, write: int | None = 0) -> dict:
    usage = {"input_other": other, "output": out, "input_cache_read": read}
    if write is not None:
        usage["input_cache_creation"] = write
    return usage


def _status(t: float, usage: dict | None, mid: str | None) -> dict:
    return _rec(t, "StatusUpdate", {"context_usage": 0.1, "token_usage": usage, "message_id": mid})


def _sub(t: float, inner: dict, agent: str = "a1", legacy: bool = False) -> dict:
    ids = {"task_tool_call_id": "call_9"} if legacy else {"parent_tool_call_id": "call_9", "agent_id": agent, "subagent_type": "explore"}
    return _rec(t, "SubagentEvent", {**ids, "event": inner["message"]})


def _write(path: Path, records: list[dict], version: str | None = "1.3") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ([{"type": "metadata", "protocol_version": version}] if version else []) + records
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def _session(path: Path) -> Path:
    return _write(path, [
        _rec(0, "TurnBegin", {"user_input": "find the bug"}),
        _rec(0.5, "StepBegin", {"n": 1}),
        _rec(1.0, "ContentPart", {"type": "think", "think": "..."}),
        _rec(2.0, "ToolCall", {"type": "function", "id": "call_1", "function": {"name": "Shell", "arguments": "{}"}}),
        _status(3.0, _usage(6000, 80), "chatcmpl-1"),                       # line 6
        _rec(3.5, "ToolResult", {"tool_call_id": "call_1", "return_value": {"is_error": False, "output": "ok", "message": "", "display": []}}),
        _rec(4.0, "StepBegin", {"n": 2}),
        _rec(4.5, "StepRetry", {"n": 2, "next_attempt": 2, "max_attempts": 3, "wait_s": 1.0, "error_type": "APITimeoutError"}),
        _rec(6.0, "ContentPart", {"type": "text", "text": "x"}),
        _status(7.0, _usage(250, 40, read=6000), "chatcmpl-2"),              # line 11
        _rec(8.0, "StepBegin", {"n": 3}),
        _sub(8.5, _rec(0, "StepBegin", {"n": 1})),
        _sub(9.0, _status(0, _usage(3000, 20), "chatcmpl-s1")),             # line 14
        _sub(9.5, _status(0, _usage(100, 10, read=3000), "chatcmpl-s2")),   # line 15
        _rec(10.0, "StepInterrupted", {}),
        _rec(20.0, "TurnBegin", {"user_input": "go on"}),
        _rec(20.5, "StepBegin", {"n": 1}),
        _rec(21.0, "CompactionBegin", {}),
        _rec(25.0, "CompactionEnd", {}),
        _status(27.0, _usage(1800, 30), "chatcmpl-3"),                      # line 21
        _status(27.5, None, None),                                           # a status-only update
        _rec(28.0, "TurnEnd", {}),
    ])


def test_a_session_one_request_per_status_update_with_totals_field_by_field(tmp_path: Path) -> None:
    path = _session(tmp_path / "sessions" / "h" / "s1" / "wire.jsonl")
    assert detect_format(path) is FORMATS["kimi-cli"]
    requests, summaries = load_trace([path])
    assert [r.line for r in requests] == [6, 11, 14, 15, 21]
    assert [(r.lane, r.lane_kind) for r in requests] == [("main", "main"), ("main", "main"), ("agent:a1", "subagent"), ("agent:a1", "subagent"), ("main", "main")]
    assert {r.provider for r in requests} == {"moonshot"} and {r.model for r in requests} == {"kimi-for-coding"}
    # Hand sums: uncached 6000 + 250 + 3000 + 100 + 1800, read 6000 + 3000, output 80 + 40 + 20 + 10 + 30.
    usages = [r.usage for r in requests]
    assert sum(u.uncached for u in usages) == 11150
    assert sum(u.cache_read for u in usages) == 9000
    assert sum(u.cache_write_5m + u.cache_write_1h for u in usages) == 0
    assert sum(u.output for u in usages) == 180
    # Times: the step's StepBegin, its first content part, the StatusUpdate.
    ms = int(T0 * 1000)
    assert (requests[0].sent_ms, requests[0].ready_ms, requests[0].done_ms) == (ms + 500, ms + 1000, ms + 3000)
    assert (requests[1].sent_ms, requests[1].ready_ms) == (ms + 4000, ms + 6000)
    assert requests[2].sent_ms == ms + 8500
    # The chain: main continues, the subagent is a chain of its own, a compaction starts again.
    main = [r for r in requests if r.lane == "main"]
    assert main[1].prefix.parent == main[0].prefix.node
    assert requests[2].prefix.parent is None and requests[3].prefix.parent == requests[2].prefix.node
    assert main[2].prefix.parent is None
    assert [kind for kind, _ in main[2].events] == ["user_turn", "compaction"]
    assert {r.agent_version for r in requests} == {"wire 1.3"}
    summary = summaries[0]
    assert summary.requests == 5
    assert [why.split(" ")[0] for _, why in summary.skipped] == ["failed", "step"]
    assert any("1 compaction(s)" in n for n in summary.notes)


def test_a_subagents_own_wire_file_and_the_parents_copy_are_counted_once(tmp_path: Path) -> None:
    session = tmp_path / "sessions" / "h" / "s1"
    _session(session / "wire.jsonl")
    _write(session / "subagents" / "a1" / "wire.jsonl", [
        _rec(8.5, "StepBegin", {"n": 1}),
        _status(9.0, _usage(3000, 20), "chatcmpl-s1"),
        _status(9.5, _usage(100, 10, read=3000), "chatcmpl-s2"),
    ])
    (session / "context.jsonl").write_text('{"role": "_system_prompt", "content": "s"}\n{"role": "user", "content": "find the bug"}\n'
                                            '{"role": "_usage", "token_count": 6080}\n{"role": "_checkpoint", "id": 0}\n')
    (session / "state.json").write_text('{"version": 1, "custom_title": null}')
    requests, summaries = load_trace([tmp_path])
    assert len(requests) == 5
    assert sum(r.usage.uncached for r in requests) == 11150 and sum(r.usage.cache_read for r in requests) == 9000
    sub = [r for r in requests if r.lane_kind == "subagent"]
    assert len(sub) == 2 and all(r.file.endswith("subagents/a1/wire.jsonl") for r in sub)
    by_file = {Path(s.file).name + ":" + Path(s.file).parent.name: s for s in summaries}
    assert sum("already counted" in why for _, why in by_file["wire.jsonl:s1"].skipped) == 2
    assert by_file["context.jsonl:s1"].requests == 0
    for jobs in ("1", "2"):
        status, out, err = _cli("audit", str(tmp_path), "--quiet", "--format", "json", "--jobs", jobs)
        assert status == 0, err
        assert json.loads(out)["totals"]["requests"] == 5


def test_versions_older_wire_files_and_other_providers(tmp_path: Path) -> None:
    # November 2025: no metadata line, StatusUpdate with context_usage only; a legacy subagent id.
    old = _write(tmp_path / "old" / "wire.jsonl", [
        _rec(0, "TurnBegin", {"user_input": "hi"}), _rec(1, "StepBegin", {"n": 1}),
        _rec(2, "StatusUpdate", {"context_usage": 0.05}), _sub(3, _rec(0, "StatusUpdate", {"context_usage": 0.01}), legacy=True),
    ], version=None)
    requests, summaries = load_trace([old])
    assert requests == [] and any("before December 2025" in n for n in summaries[0].notes)
    # An Anthropic-served call (message id msg_...) with a cache write; a legacy subagent lane.
    other = _write(tmp_path / "new" / "wire.jsonl", [
        _rec(0, "StepBegin", {"n": 1}), _status(1, _usage(4, 60, read=0, write=9000), "msg_01abc"),
        _sub(2, _status(0, _usage(700, 5, write=None), "chatcmpl-x"), legacy=True),
    ], version="1.10")
    requests, _ = load_trace([other])
    assert [(r.provider, r.usage.cache_write_5m, r.usage.uncached) for r in requests] == [("anthropic", 9000, 4), ("moonshot", 0, 700)]
    assert requests[1].lane == "agent:call_9"


def test_a_session_whose_context_and_wire_hold_no_usage_points_at_neither(tmp_path: Path) -> None:
    # A session of Kimi CLI before December 2025: its context.jsonl (messages) and a wire.jsonl of
    # StatusUpdate without token_usage. The folder's line quoted the context file's note, "audit the
    # wire.jsonl beside it", a file the same audit had read and found none in; and the wire file
    # alone was said to be its first note (the system prompt is not in it), not why it held no call.
    session = tmp_path / "s1"
    wire = _write(session / "wire.jsonl", [
        _rec(0, "TurnBegin", {"user_input": "hi"}), _rec(1, "StepBegin", {"n": 1}), _rec(2, "StatusUpdate", {"context_usage": 0.05}),
    ], version=None)
    (session / "context.jsonl").write_text('{"role": "_system_prompt", "content": "s"}\n{"role": "user", "content": "hi"}\n')
    lacks = "StatusUpdate without token_usage only (Kimi CLI before December 2025): no per-call usage to audit"
    status, _, err = _cli("audit", str(session), "--quiet")
    assert status == 2 and err.strip() == (
        f"prefixbench: error: nothing to audit: no model call with usage in the logs given ({session / 'context.jsonl'}: "
        f"a context.jsonl holds the messages, not per-call usage: no calls to audit here; {wire}: {lacks})")
    status, _, err = _cli("audit", str(wire), "--quiet")
    assert status == 2 and err.strip().endswith(f"({wire}: {lacks})")


@pytest.mark.parametrize(
    ("record", "message"),
    [
        (_status(1, _usage(-1, 2), "c"), "token_usage.input_other is not a non-negative integer"),
        (_status(1, {"input_other": 1, "output": "2"}, "c"), "token_usage.output is not a non-negative integer"),
        ({"timestamp": "noon", "message": {"type": "StepBegin", "payload": {"n": 1}}}, "is not ISO 8601"),
        (_rec(1, "StatusUpdate", {"token_usage": [1, 2]}), "token_usage is not an object"),
        (_rec(1, "SubagentEvent", {"agent_id": "a", "event": 3}), "SubagentEvent without an event object"),
    ],
)
def test_bad_wire_records_are_one_line_naming_the_file_and_line(tmp_path: Path, record: dict, message: str) -> None:
    path = _write(tmp_path / "wire.jsonl", [_rec(0, "TurnBegin", {"user_input": "x"}), record])
    status, _, err = _cli("audit", str(path), "--quiet")
    assert status == 2
    assert err.count("\n") == 1 and f"{path}:3: " in err and message in err, err
    with pytest.raises(UserError):
        load_trace([path])


def test_input_kimi_cli_on_another_format_names_the_format_it_is(tmp_path: Path) -> None:
    thread = tmp_path / "T-x.json"
    thread.write_text(json.dumps({"id": "T-x", "messages": []}))
    status, _, err = _cli("audit", str(thread), "--input", "kimi-cli", "--quiet")
    assert status == 2 and "--input amp reads it" in err


# --- Kimi Code (MoonshotAI/kimi-code): agents/<agent>/wire.jsonl, llm.request + usage.record ---

MS = 1783466600000


def _code(t: int, record_type: str, **payload: object) -> dict:
    return {"type": record_type, **payload, "time": MS + t}


def _llm(t: int, agent: str = "main", kind: str = "loop", tools: str = "t1", effort: str | None = "on", model: str = "kimi-k2.6") -> dict:
    request = {"agentId": agent, "kind": kind, "provider": "kimi", "model": model, "modelAlias": "kimi-for-coding",
               "toolSelect": True, "systemPromptHash": "sp1", "toolsHash": tools, "messageCount": 2}
    if effort is not None:
        request["thinkingEffort"] = effort
    return _code(t, "llm.request", **request)


def _record(t: int, other: int, out: int, read: int = 0, write: int = 0, agent: str = "main") -> dict:
    return _code(t, "usage.record", agentId=agent, model="kimi-for-coding", usageScope="turn",
                 usage={"inputOther": other, "output": out, "inputCacheRead": read, "inputCacheCreation": write})


def _code_file(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {"type": "metadata", "protocol_version": "1.5", "created_at": MS}
    path.write_text("".join(json.dumps(r) + "\n" for r in [head, *records]))
    return path


def test_kimi_code_one_request_per_usage_record_with_totals_field_by_field(tmp_path: Path) -> None:
    session = tmp_path / "sessions" / "wd_w_0123456789ab" / "session_1" / "agents"
    main = _code_file(session / "main" / "wire.jsonl", [
        _code(1000, "turn.prompt", agentId="main", input=[{"type": "text", "text": "fix it"}], origin="user"),
        _llm(1100),
        _record(5000, 9000, 100),                                                     # line 4
        _code(6000, "context.append_message", agentId="main", message={"role": "tool", "content": []}),
        _llm(6100, tools="t2"),
        _record(9000, 300, 50, read=8960),                                            # line 7
        _llm(9500, effort="off"),
        _record(9600, 0, 0),                                                          # no usage reported
        _llm(10000, kind="compaction", effort=None),
        _record(20000, 500, 800, read=9216),                                          # line 11
        _code(20100, "context.apply_compaction", agentId="main"),
        _llm(21000, model="claude-sonnet-4-5-20250929", effort="on"),
        _record(23000, 4, 20, write=1200, read=4096),                                 # line 14
    ])
    _code_file(session / "agent-0" / "wire.jsonl", [_llm(6200, agent="agent-0"), _record(8000, 4000, 10, agent="agent-0")])
    assert detect_format(main) is FORMATS["kimi-cli"]
    requests, summaries = load_trace([tmp_path])
    lanes = [(r.lane, r.lane_kind, r.line) for r in requests]
    assert lanes == [("agent:agent-0", "subagent", 3), ("main", "main", 4), ("main", "main", 7), ("main", "main", 11), ("main", "main", 14)]
    usages = [r.usage for r in requests]
    # Hand sums: uncached 4000 + 9000 + 300 + 500 + 4; read 8960 + 9216 + 4096; write 1200; output 10 + 100 + 50 + 800 + 20.
    assert sum(u.uncached for u in usages) == 13804
    assert sum(u.cache_read for u in usages) == 22272
    assert sum(u.cache_write_5m for u in usages) == 1200
    assert sum(u.output for u in usages) == 980
    main_requests = requests[1:]
    assert [(r.sent_ms, r.done_ms) for r in main_requests][:2] == [(MS + 1100, MS + 5000), (MS + 6100, MS + 9000)]
    assert [r.provider for r in requests] == ["moonshot", "moonshot", "moonshot", "moonshot", "anthropic"]
    assert main_requests[0].prefix.head == requests[0].prefix.head == "kimi-code:sp1:t1"  # same hashes, one head
    assert main_requests[1].prefix.head == "kimi-code:sp1:t2" and ("tools_change", "toolsHash t1 -> t2") in main_requests[1].events
    assert [r.compaction_call for r in main_requests] == [False, False, True, False]
    assert main_requests[2].prefix.parent == main_requests[1].prefix.node and main_requests[3].prefix.parent is None
    assert ("compaction", "context compacted") in main_requests[3].events
    assert ("model_change", "kimi-k2.6 -> claude-sonnet-4-5-20250929") in main_requests[3].events
    assert main_requests[0].envelope == (("thinking", "on"),)
    by_file = {Path(s.file).parent.name: s for s in summaries}
    assert [why for _, why in by_file["main"].skipped] == ["usage.record all zero (the provider reported no usage)"]
    assert {r.agent_version for r in requests} == {"wire 1.5"}


def test_kimi_code_first_releases_records_and_unknown_kinds_are_read(tmp_path: Path) -> None:
    """Kimi Code's first releases (agent-core, May to June 2026) also logged background.stop,
    context.mark_last_user_prompt_blocked, goal.account_usage and goal.continuation records (each
    {type, ...payload, time}, written by agent.records.logRecord), since dropped; later releases add
    kinds of their own. Main refused the whole file at the first of them ("not a Kimi CLI wire
    record"): 0 calls where the file holds 2, uncached 9,300, read 8,960, output 150."""
    path = _code_file(tmp_path / "agents" / "main" / "wire.jsonl", [
        _code(1000, "turn.prompt", agentId="main", input=[{"type": "text", "text": "go"}], origin="user"),
        _code(1050, "context.mark_last_user_prompt_blocked", hookEvent="UserPromptSubmit"),
        _llm(1100),
        _record(5000, 9000, 100),
        _code(5100, "goal.account_usage", goalId="g1", usageKind="token", delta=9100, tokensUsed=9100, wallClockMs=4000),
        _code(5200, "goal.continuation", goalId="g1", turnsUsed=1),
        _code(5300, "background.stop", taskId="b1"),
        _code(5400, "lens.focus", agentId="main", target="src/"),  # a kind no release above wrote
        _code(5500, "lens.focus", agentId="main", target="lib/"),
        _llm(6100),
        _record(9000, 300, 50, read=8960),
    ])
    requests, summaries = load_trace([path])
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.output) for r in requests] == [(9000, 0, 100), (300, 8960, 50)]
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert any("(lens.focus x2): read as no call" in note for note in summaries[0].notes)


def test_kimi_code_bad_usage_is_one_line(tmp_path: Path) -> None:
    path = _code_file(tmp_path / "agents" / "main" / "wire.jsonl", [_llm(0), _record(1, 5, -2)])
    status, _, err = _cli("audit", str(path), "--quiet")
    assert status == 2 and err.count("\n") == 1 and f"{path}:3: usage.output is not a non-negative integer" in err, err


def test_kimi_code_protocol_1_1_records_without_agent_ids_or_llm_requests(tmp_path: Path) -> None:
    """Early Kimi Code (protocol 1.1): no agentId, no llm.request; the step's loop events time it."""
    path = tmp_path / "agents" / "agent-3" / "wire.jsonl"
    path.parent.mkdir(parents=True)
    records = [
        {"type": "metadata", "protocol_version": "1.1", "created_at": MS},
        _code(10, "turn.prompt", input=[{"type": "text", "text": "hi"}], origin={"kind": "user"}),
        _code(100, "context.append_loop_event", event={"type": "step.begin", "uuid": "s1", "turnId": "t1", "step": 0}),
        _code(200, "context.append_loop_event", event={"type": "content.part", "uuid": "c1", "part": {"type": "text", "text": "hello"}}),
        _code(300, "context.append_loop_event", event={"type": "step.end", "uuid": "s1", "usage": {"inputOther": 10, "output": 5, "inputCacheRead": 0, "inputCacheCreation": 0}}),
        _code(302, "usage.record", model="kimi-k2", usage={"inputOther": 10, "output": 5, "inputCacheRead": 0, "inputCacheCreation": 0}, usageScope="turn"),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (request,), _ = load_trace([path])
    assert (request.lane, request.lane_kind, request.model, request.provider) == ("agent:agent-3", "subagent", "kimi-k2", "moonshot")
    assert (request.sent_ms, request.ready_ms, request.done_ms) == (MS + 100, MS + 200, MS + 302)
    assert (request.usage.uncached, request.usage.output) == (10, 5)  # the step.end copy is not counted again


def test_kimi_code_forked_session_does_not_count_the_sources_copied_calls(tmp_path: Path) -> None:
    """Kimi Code's session fork (agent-core-v2, July 2026 on) writes the new session's
    agents/<agent>/wire.jsonl as the source's records, usage.record lines included, then a
    ``forked`` record; the fork's own records follow. Main counted the copy again: 5 calls for 3,
    and the fork's own file 3 calls for 1."""
    sessions = tmp_path / "sessions" / "wd_w_0123456789ab"
    source_records = [
        _code(1000, "turn.prompt", agentId="main", input=[{"type": "text", "text": "plan it"}], origin="user"),
        _llm(1100),
        _record(5000, 9000, 100),
        _code(6000, "context.append_message", agentId="main", message={"role": "tool", "content": []}),
        _llm(6100),
        _record(9000, 300, 50, read=8960),
    ]
    _code_file(sessions / "session_src" / "agents" / "main" / "wire.jsonl", source_records)
    fork = _code_file(sessions / "session_fork" / "agents" / "main" / "wire.jsonl", [
        *source_records,
        {"type": "forked", "agentId": "main", "time": MS + 60000},                    # line 8
        _code(61000, "turn.prompt", agentId="main", input=[{"type": "text", "text": "another way"}], origin="user"),
        _llm(61100),
        _record(64000, 40, 70, read=9344),                                            # line 11
    ])
    requests, summaries = load_trace([fork])
    # The fork's own file: one call of its own, field by field; the two above line 8 are skipped.
    assert [(r.line, r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests] == [(11, 40, 9344, 0, 70)]
    assert [line for line, why in summaries[0].skipped if "copied above the forked record" in why] == [4, 7]
    assert ("fork", "a forked session (forked record at line 8): the records above it are the source's") in requests[0].events
    assert any("the 2 usage.record(s) above its forked record are the source session's" in note for note in summaries[0].notes)

    both, _ = load_trace([tmp_path])
    # Both sessions: each call once. Hand sums: uncached 9000 + 300 + 40, read 8960 + 9344, output 100 + 50 + 70.
    assert len(both) == 3
    assert (sum(r.usage.uncached for r in both), sum(r.usage.cache_read for r in both), sum(r.usage.output for r in both)) == (9340, 18304, 220)
    source_last = next(r for r in both if "session_src" in r.file and r.line == 7)
    fork_first = next(r for r in both if "session_fork" in r.file)
    assert fork_first.prefix.parent == source_last.prefix.node  # the fork goes on from the source's last call
    result = run_audit([tmp_path])
    fork_row = next(row for row in result.rows if "session_fork" in row.file)
    assert fork_row.predicted_cache_read > 9000  # the source's last prompt, cached, not a cold start


def test_a_btw_side_question_is_named_as_a_call_the_wire_does_not_count(tmp_path: Path) -> None:
    """Kimi CLI's /btw side question (April 2026 on) makes a model call on the conversation so
    far; the wire holds BtwBegin {id, question} and BtwEnd {id, response} and no usage. The two
    StatusUpdate calls are counted as before; the side question is listed and noted, not hidden
    (main said nothing of it)."""
    path = _write(tmp_path / "sessions" / "h" / "s1" / "wire.jsonl", [
        _rec(0, "TurnBegin", {"user_input": "fix it"}),
        _rec(0.5, "StepBegin", {"n": 1}),
        _status(3, _usage(6000, 80), "chatcmpl-1"),
        _rec(4, "BtwBegin", {"id": "btw-1", "question": "what does this flag do?"}),   # line 5
        _rec(6, "BtwEnd", {"id": "btw-1", "response": "It enables caching."}),
        _rec(7, "StepBegin", {"n": 2}),
        _status(9, _usage(250, 40, read=6000), "chatcmpl-2"),
    ], version="1.10")
    requests, summaries = load_trace([path])
    assert [(r.line, r.usage.uncached, r.usage.cache_read, r.usage.output) for r in requests] == [(4, 6000, 0, 80), (8, 250, 6000, 40)]
    assert summaries[0].skipped == ((5, "/btw side question: its call's usage is not on the wire"),)
    assert any(n.startswith("1 /btw side question(s)") for n in summaries[0].notes)


def test_a_kimi_code_wire_file_without_usage_records_says_so(tmp_path: Path) -> None:
    # A session that sent no call (a fixture of context records and a compaction only): audit
    # said "nothing to audit ... (wire.jsonl: Kimi Code's system prompt and tools are not in
    # wire.jsonl, their hashes are: ...)", the file's first note, which does not say why.
    path = _code_file(tmp_path / "agents" / "main" / "wire.jsonl", [
        _code(1000, "config.update", cwd="/w", profileName="agent", systemPrompt="You are Kimi."),
        _code(2000, "context.append_message", message={"role": "user", "content": [{"type": "text", "text": "hi"}], "toolCalls": []}),
    ])
    status, _, err = _cli("audit", str(path), "--quiet")
    assert status == 2
    assert err.strip() == (f"prefixbench: error: nothing to audit: no model call with usage in the logs given ({path}: "
                           "no usage.record in this wire.jsonl (Kimi Code writes one per call): no call to audit here)")


def test_two_subagents_of_one_long_head_are_two_lanes(tmp_path: Path) -> None:
    """Two subagents whose ids share their first 80 characters are two lanes, each extending
    its own calls. Main cut the id at 80 characters, so both were one lane."""
    head = "a-subagent-named-at-length-" * 4  # 108 characters
    path = _write(tmp_path / "sessions" / "h" / "s1" / "wire.jsonl", [
        _rec(0, "TurnBegin", {"user_input": "find the bug"}),
        _rec(0.5, "StepBegin", {"n": 1}),
        _sub(1.0, _status(0, _usage(3000, 20), "s1"), agent=head + "one"),
        _sub(1.5, _status(0, _usage(3000, 20), "s2"), agent=head + "two"),
        _sub(2.0, _status(0, _usage(100, 10, read=3000), "s3"), agent=head + "one"),
        _rec(3.0, "TurnEnd", {}),
    ])
    requests, _ = load_trace([path])
    assert [r.lane for r in requests] == [f"agent:{head}one", f"agent:{head}two", f"agent:{head}one"]
    assert requests[2].prefix is not None and requests[0].prefix is not None and requests[2].prefix.parent == requests[0].prefix.node


def test_kimi_code_2_1_records_are_known_and_carry_no_call(tmp_path: Path) -> None:
    """Kimi Code 2.1.0 (npm, 2026-09-23) writes durable records of kinds earlier releases did not:
    file_history.checkpoint / .tracked, prompt.completed / .aborted / .steered and
    turn.step.retrying / .interrupted; usage.record keeps its usage (and adds usageScope). None
    carries a call's usage. Before: each was counted in a note as a kind this reader does not know."""
    path = _code_file(tmp_path / "agents" / "main" / "wire.jsonl", [
        _code(1000, "turn.prompt", agentId="main", input=[{"type": "text", "text": "go"}], origin="user"),
        _code(1010, "file_history.checkpoint", agentId="main", turnId=1, phase="start", entries={}),
        _llm(1100),
        _code(1500, "turn.step.retrying", agentId="main", step=1, delayMs=500, errorName="APIError", errorMessage="overloaded", statusCode=529),
        _llm(2100),
        _record(5000, 9000, 100),
        _code(5100, "prompt.steered", agentId="main", activePromptId="p1", promptIds=["p2"], content=[], steeredAt="2026-09-30T10:00:05Z"),
        _code(5200, "turn.steer", agentId="main", input=[{"type": "text", "text": "also"}]),
        _llm(6100),
        _record(9000, 300, 50, read=8960),
        _code(9100, "file_history.tracked", agentId="main", path="a.py"),
        _code(9200, "turn.step.interrupted", agentId="main", step=3, reason="aborted"),
        _code(9300, "prompt.aborted", agentId="main", promptId="p2", abortedAt="2026-09-30T10:00:09Z"),
        _code(9400, "prompt.completed", agentId="main", promptId="p1", status="completed"),
    ])
    requests, summaries = load_trace([path])
    # By hand: two calls, uncached 9,000 + 300, read 8,960, output 100 + 50.
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.output) for r in requests] == [(9000, 0, 100), (300, 8960, 50)]
    assert requests[0].sent_ms == MS + 2100  # the retried request's own llm.request
    assert not any("kinds this reader does not know" in note for note in summaries[0].notes)


def test_kimi_code_read_past_the_head_after_a_tools_hash_change_is_the_providers(tmp_path: Path) -> None:
    """Kimi CLI on deepseek-chat: ``toolsHash`` went from t1 to t2 (a logged tool change), and the
    next call read 7,000 of the 9,472 tokens the first sent. That is past the model's minimum (the
    head's size is not logged), so the tools were cached as sent: the miss is DeepSeek's, its
    detail naming the change and that the read went past it. Base: ``tools-changed``. A read of
    nothing after the same change is still the tools' doing."""
    for read, cause in ((7000, "provider-best-effort"), (0, "tools-changed")):
        path = _code_file(tmp_path / str(read) / "agents" / "main" / "wire.jsonl", [
            _code(1000, "turn.prompt", agentId="main", input=[{"type": "text", "text": "go"}], origin="user"),
            _llm(1100, model="deepseek-chat"),
            _record(5000, 9472, 100),
            _code(6000, "context.append_message", agentId="main", message={"role": "tool", "content": []}),
            _llm(6100, tools="t2", model="deepseek-chat"),
            _record(9000, 9600 - read, 50, read=read),
        ])
        row = run_audit([path]).rows[1]
        assert (row.reported_cache_read, row.cause) == (read, cause), row.detail
        assert "toolsHash t1 -> t2" in row.detail
        if read:
            assert "past the tool-list change logged since the previous request (toolsHash t1 -> t2)" in row.detail
