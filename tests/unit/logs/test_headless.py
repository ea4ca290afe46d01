"""Agents' headless outputs that report usage only per turn or per run (workloads/logs/formats/headless.py).

main said "unknown log format" of each (checked): the user was not told the file is a run's
totals, nor which of the agent's files logs each call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.logs.formats import detect_format
from tests.unit.audit.fixtures import write_jsonl

#: ``codex exec --json`` (ThreadEvent in openai/codex codex-rs/exec/src/exec_events.rs): one turn
#: of two model calls (a command, then the answer), their usage summed in turn.completed.
CODEX_EXEC = [
    {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
    {"type": "turn.started"},
    # (0.44's first releases named an item's kind item_type.)
    {"type": "item.completed", "item": {"id": "item_0", "item_type": "reasoning", "text": "**Listing files**"}},
    {"type": "item.started", "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc ls", "aggregated_output": "",
                                      "exit_code": None, "status": "in_progress"}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution", "command": "bash -lc ls", "aggregated_output": "a.py\n",
                                        "exit_code": 0, "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": "One file: a.py."}},
    {"type": "turn.completed", "usage": {"input_tokens": 24763, "cached_input_tokens": 24448, "output_tokens": 122}},
]

#: ``gemini -p --output-format json``: one pretty-printed object (JsonOutput in
#: packages/core/src/output/types.ts; stats is the session's SessionMetrics).
GEMINI_JSON = {
    "session_id": "5a4c2f7e-0c1d-4d4e-9a55-3f1f2b7d9c10",
    "response": "One file: a.py.",
    "stats": {
        "models": {"gemini-2.5-pro": {"api": {"totalRequests": 2, "totalErrors": 0, "totalLatencyMs": 5123},
                                      "tokens": {"prompt": 18230, "candidates": 41, "total": 18401, "cached": 9012, "thoughts": 130, "tool": 0}}},
        "tools": {"totalCalls": 1, "totalSuccess": 1, "totalFail": 0, "totalDurationMs": 40, "totalDecisions": {}, "byName": {}},
        "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0},
    },
}

#: ``gemini -p --output-format stream-json`` (JsonStreamEvent in packages/core/src/output/types.ts).
GEMINI_STREAM = [
    {"type": "init", "timestamp": "2026-03-02T10:00:00.000Z", "session_id": "5a4c2f7e", "model": "gemini-2.5-pro"},
    {"type": "message", "timestamp": "2026-03-02T10:00:00.010Z", "role": "user", "content": "list the files"},
    {"type": "tool_use", "timestamp": "2026-03-02T10:00:02.000Z", "tool_name": "list_directory", "tool_id": "t1", "parameters": {"dir_path": "."}},
    {"type": "tool_result", "timestamp": "2026-03-02T10:00:02.050Z", "tool_id": "t1", "status": "success", "output": "a.py"},
    {"type": "message", "timestamp": "2026-03-02T10:00:04.000Z", "role": "assistant", "content": "One file: a.py.", "delta": True},
    {"type": "result", "timestamp": "2026-03-02T10:00:04.100Z", "status": "success",
     "stats": {"total_tokens": 18401, "input_tokens": 18230, "output_tokens": 41, "cached": 9012, "input": 9218, "duration_ms": 4100,
               "tool_calls": 1, "models": {"gemini-2.5-pro": {"total_tokens": 18401, "input_tokens": 18230, "output_tokens": 41,
                                                               "cached": 9012, "input": 9218}}}},
]


def _gemini_json(path: Path) -> Path:
    path.write_text(json.dumps(GEMINI_JSON, indent=2))
    return path


@pytest.mark.parametrize(
    ("make", "line", "what"),
    [
        (lambda d: write_jsonl(d / "exec.jsonl", CODEX_EXEC), 1,
         r"Codex exec --json output: it reports usage per turn only .*; audit the rollout Codex keeps of the run \(~/\.codex/sessions/"),
        (lambda d: _gemini_json(d / "run.json"), 1,
         r"Gemini CLI -p --output-format json output: it reports usage per run only .*chats/session-\*\.json or \.jsonl\) instead$"),
        (lambda d: write_jsonl(d / "run.jsonl", GEMINI_STREAM), 1,
         r"Gemini CLI --output-format stream-json output: it reports usage per run only .*chats/session-\*\.json"),
    ],
    ids=["codex-exec-json", "gemini-json", "gemini-stream-json"],
)
def test_a_headless_output_with_totals_only_is_named_and_refused(tmp_path: Path, make, line: int, what: str) -> None:
    path = make(tmp_path)
    with pytest.raises(UserError, match=rf"^{path}:{line}: {what}"):
        detect_format(path)
    with pytest.raises(UserError, match=what):  # the audit of the file itself says the same (exit 2)
        load_trace([path])


def test_a_folder_walk_skips_a_headless_output_with_a_note(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    write_jsonl(folder / "exec.jsonl", CODEX_EXEC)
    _gemini_json(folder / "gemini.json")
    # Beside them, a Codex rollout with one call, which is audited.
    write_jsonl(folder / "rollout.jsonl", [
        {"timestamp": "2026-03-02T10:00:00.000Z", "type": "session_meta", "payload": {"id": "c", "cli_version": "0.60.0", "model_provider": "openai"}},
        {"timestamp": "2026-03-02T10:00:00.000Z", "type": "turn_context", "payload": {"model": "gpt-5.1", "effort": "medium"}},
        {"timestamp": "2026-03-02T10:00:03.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 3000, "cached_input_tokens": 1024, "output_tokens": 5},
            "last_token_usage": {"input_tokens": 3000, "cached_input_tokens": 1024, "output_tokens": 5}}}},
    ])
    # And a GitHub Copilot CLI session, which docs/formats.md says is refused the same way: the
    # walk skipped it as "metadata or another tool's file beside the logs", not naming it.
    write_jsonl(folder / "events.jsonl", [
        {"type": "session.start", "data": {"sessionId": "s", "copilotVersion": "0.0.400"}, "id": "e1",
         "timestamp": "2026-01-10T09:00:00.000Z", "parentId": None},
        {"type": "assistant.message", "data": {"messageId": "m1", "content": "Done", "outputTokens": 7}, "id": "e2",
         "timestamp": "2026-01-10T09:00:04.000Z", "parentId": "e1"},
    ])
    requests, summaries = load_trace([folder])
    assert [r.file for r in requests] == [str(folder / "rollout.jsonl")]
    skipped = {Path(s.file).name: (s.format, s.notes) for s in summaries if s.format == "headless"}
    assert set(skipped) == {"exec.jsonl", "gemini.json", "events.jsonl"}
    assert skipped["exec.jsonl"][1][0].startswith("skipped: Codex exec --json output: it reports usage per turn only")
    assert skipped["events.jsonl"][1][0].startswith("skipped: a GitHub Copilot CLI session (events.jsonl): it logs no call's prompt or cache counts")
    (folder / "events.jsonl").unlink()
    # A folder of nothing else says what the first file is.
    (folder / "rollout.jsonl").unlink()
    with pytest.raises(UserError, match=r"none is a log \(exec\.jsonl: Codex exec --json output: it reports usage per turn only"):
        load_trace([folder])


def test_a_log_of_a_known_format_is_never_refused_for_a_line_that_looks_headless(tmp_path: Path) -> None:
    # A pi session whose first record is a stray codex-exec-shaped event: pi wins.
    path = write_jsonl(tmp_path / "s.jsonl", [
        CODEX_EXEC[1] | {"type": "turn.completed", "usage": {}},
        {"type": "session", "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"},
    ])
    assert detect_format(path).name == "pi"


#: ``qwen -p --output-format stream-json`` (QwenLM/qwen-code packages/cli/src/nonInteractive/io/
#: BaseJsonOutputAdapter.ts): Claude Code's SDK message shapes, but each assistant message's usage
#: is Gemini's (input_tokens = promptTokenCount, the cached part included; cache_read_input_tokens
#: = cachedContentTokenCount), on the last message of a call split by block type (the earlier
#: parts carry zeros), and message.id is the message's own uuid.
QWEN_STREAM = [
    {"type": "system", "subtype": "init", "uuid": "s1", "session_id": "s1", "cwd": "/x", "tools": ["read_file"],
     "model": "qwen3-coder-plus", "permission_mode": "yolo", "qwen_code_version": "0.14.0"},
    {"type": "assistant", "uuid": "m1", "session_id": "s1", "parent_tool_use_id": None,
     "message": {"id": "m1", "type": "message", "role": "assistant", "model": "qwen3-coder-plus",
                 "content": [{"type": "thinking", "thinking": "plan", "signature": "plan"}], "stop_reason": None,
                 "usage": {"input_tokens": 0, "output_tokens": 0}}},
    {"type": "assistant", "uuid": "m2", "session_id": "s1", "parent_tool_use_id": None,
     "message": {"id": "m2", "type": "message", "role": "assistant", "model": "qwen3-coder-plus",
                 "content": [{"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a.py"}}], "stop_reason": "tool_use",
                 "usage": {"input_tokens": 12000, "output_tokens": 40, "cache_read_input_tokens": 0, "total_tokens": 12040}}},
    {"type": "user", "uuid": "u1", "session_id": "s1", "parent_tool_use_id": None,
     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "print(1)", "is_error": False}]}},
    {"type": "assistant", "uuid": "m3", "session_id": "s1", "parent_tool_use_id": None,
     "message": {"id": "m3", "type": "message", "role": "assistant", "model": "qwen3-coder-plus",
                 "content": [{"type": "text", "text": "It prints 1."}], "stop_reason": None,
                 "usage": {"input_tokens": 12100, "output_tokens": 9, "cache_read_input_tokens": 11900, "total_tokens": 12109}}},
    {"type": "result", "subtype": "success", "uuid": "r1", "session_id": "s1", "is_error": False, "duration_ms": 5000,
     "duration_api_ms": 4000, "num_turns": 2, "result": "It prints 1.",
     "usage": {"input_tokens": 24100, "output_tokens": 49, "cache_read_input_tokens": 11900, "total_tokens": 24149}, "permission_denials": []},
]


@pytest.mark.parametrize("as_array", [False, True], ids=["stream-json", "json"])
def test_qwen_code_headless_output_reads_as_qwen_with_the_cached_part_inside_the_prompt(tmp_path: Path, as_array: bool) -> None:
    # merge37 read it as a Claude Code stream-json run: input_tokens taken as the uncached part,
    # 24,100 uncached + 11,900 read (hit 33%) where Qwen counted a prompt of 24,100, 11,900 of it read.
    path = tmp_path / "run.json"
    if as_array:  # --output-format json: the same messages as one JSON array
        path.write_text(json.dumps(QWEN_STREAM))
    else:
        write_jsonl(path, QWEN_STREAM)
    requests, summaries = load_trace([path])
    assert summaries[0].format == "gemini-cli"
    assert [r.request_id for r in requests] == ["m2", "m3"]
    # By hand: reads 0 + 11,900; uncached (12,000 - 0) + (12,100 - 11,900) = 12,200; output 40 + 9.
    assert sum(r.usage.cache_read for r in requests) == 11900
    assert sum(r.usage.uncached for r in requests) == 12200
    assert sum(r.usage.output for r in requests) == 49
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert {r.agent_version for r in requests} == {"0.14.0"}
    # Its own run totals agree: prompt 12,000 + 12,100 = 24,100, read 11,900.
    assert "Qwen Code's own run totals (result usage): prompt 24,100, read 11,900 (the same)" in summaries[0].notes
    assert summaries[0].skipped == ((1 if as_array else 2, "assistant message with zero usage: Qwen Code splits a response by block type, its usage is on the last part"),)


#: ``gemini -p --output-format json`` of a run that failed (JsonFormatter.formatError in
#: packages/core/src/output/json-formatter.ts, session_id since gemini-cli #14504): no stats.
GEMINI_ERROR = {
    "session_id": "5a4c2f7e-0c1d-4d4e-9a55-3f1f2b7d9c10",
    "error": {"type": "FatalTurnLimitedError",
              "message": "Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json.",
              "code": 53},
}


def test_a_gemini_json_error_output_is_named_with_its_error(tmp_path: Path) -> None:
    # fix37 said "unknown log format" of it (checked).
    path = tmp_path / "run.json"
    path.write_text(json.dumps(GEMINI_ERROR, indent=2))
    what = (r"Gemini CLI -p --output-format json error output \(FatalTurnLimitedError: Reached max session turns for this "
            r"session\. Increase the number of turns by specifying maxSessionTurns in settings\.json\.\): it holds only the error "
            r"the run ended with, no usage, so no call can be audited; audit the session Gemini CLI keeps of the run "
            r"\(~/\.gemini/tmp/<project>/chats/session-\*\.json or \.jsonl\) instead$")
    with pytest.raises(UserError, match=rf"^{path}:1: {what}"):
        detect_format(path)
    with pytest.raises(UserError, match=what):
        load_trace([path])
    # A folder walk skips it with the same note.
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(GEMINI_ERROR | {"error": {"type": "Error", "message": "line one\n" + "x" * 500}}))
    with pytest.raises(UserError, match=r"none is a log \(a\.json: Gemini CLI -p --output-format json error output \(Error: line one x{151}\.\.\.\): "):
        load_trace([folder])


@pytest.mark.parametrize("doc", [
    {"error": {"type": "FatalAuthenticationError", "message": "m", "code": 41}},  # before session_id: any error body
    {"session_id": "s", "error": {"type": "invalid_request_error", "message": "m", "param": None, "code": None}},  # OpenAI's body
    {"session_id": "s", "error": {"type": "t", "message": "m"}, "request_id": "r"},
    {"session_id": "", "error": {"type": "t", "message": "m"}},
    {"session_id": "s", "error": {"message": "m"}},
])
def test_other_error_json_is_not_taken_for_a_gemini_error_output(tmp_path: Path, doc: dict) -> None:
    path = tmp_path / "e.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(UserError, match=r":1: unknown log format"):
        detect_format(path)


def test_a_codex_exec_output_cut_after_its_first_lines_is_still_named(tmp_path: Path) -> None:
    # Output kept from the middle of a run (no thread.started), of 0.44's first releases (item_type).
    path = write_jsonl(tmp_path / "tail.jsonl", CODEX_EXEC[2:3] + CODEX_EXEC[-1:])
    with pytest.raises(UserError, match=rf"^{path}:1: Codex exec --json output: "):
        detect_format(path)


@pytest.mark.parametrize("kind", [["turn.completed"], {"t": 1}])
def test_a_record_whose_type_is_a_list_or_an_object_is_no_headless_output(tmp_path: Path, kind) -> None:
    # Found by the fuzz run at 300 examples: the type went into a set lookup (TypeError: unhashable).
    path = tmp_path / "odd.json"
    path.write_text(json.dumps({"type": kind, "timestamp": "2026-01-01T00:00:00Z", "usage": {}}))
    with pytest.raises(UserError, match=r":1: unknown log format"):
        detect_format(path)


@pytest.mark.parametrize(("usage", "said"), [
    ({"input_tokens": "12", "output_tokens": 5}, "message.usage.input_tokens is not a non-negative integer ('12')"),
    ({"input_tokens": 100, "cache_read_input_tokens": 200}, "message.usage: cache_read_input_tokens (200) exceed input_tokens (100), "
     "which Qwen Code reports as the whole prompt"),
])
def test_a_bad_qwen_headless_usage_is_named_by_the_fields_the_file_has(tmp_path: Path, usage: dict, said: str) -> None:
    # It named Gemini's fields, which the file does not have (usageMetadata.promptTokenCount).
    lines = json.loads(json.dumps(QWEN_STREAM))
    lines[2]["message"]["usage"] = usage
    path = write_jsonl(tmp_path / "run.jsonl", lines)
    with pytest.raises(UserError) as caught:
        load_trace([path])
    assert str(caught.value) == f"{path}:3: {said}"


def test_a_qwen_result_with_no_prompt_count_is_no_run_total(tmp_path: Path) -> None:
    # A result whose usage names no input_tokens: the note said Qwen Code's own totals were
    # "prompt 0, read 0" and that the calls counted disagreed with them.
    lines = json.loads(json.dumps(QWEN_STREAM))
    lines[-1]["usage"] = {"output_tokens": 49}
    _, summaries = load_trace([write_jsonl(tmp_path / "run.jsonl", lines)])
    assert not any("run totals" in note for note in summaries[0].notes)


def test_two_qwen_headless_runs_in_one_file_are_lanes_of_their_own(tmp_path: Path) -> None:
    # Two runs' output appended to one file: the second run's first call extended the first
    # run's last (its prompt predicted to read all of the other run's).
    second = json.loads(json.dumps(QWEN_STREAM).replace('"s1"', '"s2"').replace('"m2"', '"n2"').replace('"m3"', '"n3"'))
    requests, _ = load_trace([write_jsonl(tmp_path / "runs.jsonl", QWEN_STREAM + second)])
    assert [(r.request_id, r.lane) for r in requests] == [("m2", "main"), ("m3", "main"), ("n2", "session-2"), ("n3", "session-2")]
    assert requests[2].prefix.parent is None and requests[3].prefix.parent == requests[2].prefix.node


def test_a_qwen_headless_run_in_a_file_twice_is_counted_once(tmp_path: Path) -> None:
    # The same output twice in one file (written again, or copied onto itself): its calls and
    # its run totals were counted twice, the copy's first call extending the original's last.
    requests, summaries = load_trace([write_jsonl(tmp_path / "run.jsonl", QWEN_STREAM + QWEN_STREAM)])
    assert [r.request_id for r in requests] == ["m2", "m3"]
    assert "Qwen Code's own run totals (result usage): prompt 24,100, read 11,900 (the same)" in summaries[0].notes
    assert summaries[0].skipped[-2:] == ((9, "assistant message m2 again: counted once"), (11, "assistant message m3 again: counted once"))


#: ``gemini -p --output-format stream-json`` error events (ErrorEvent: severity 'warning' | 'error',
#: a message), as nonInteractiveCli.ts prints them: a loop detected, the session's turns spent.
GEMINI_STREAM_ERRORS = [
    {"type": "error", "timestamp": "2026-03-02T10:00:03.000Z", "severity": "warning", "message": "Loop detected, stopping execution"},
    {"type": "error", "timestamp": "2026-03-02T10:00:03.500Z", "severity": "error", "message": "Maximum session turns exceeded"},
]


@pytest.mark.parametrize("event", GEMINI_STREAM_ERRORS, ids=["warning", "error"])
def test_a_gemini_stream_json_output_kept_from_an_error_event_on_is_named(tmp_path: Path, event: dict) -> None:
    # The tail of a run's stream (from its error event on, the result cut off): still named.
    path = write_jsonl(tmp_path / "tail.jsonl", [event])
    said = rf"{event['severity']}: {event['message']}"
    with pytest.raises(UserError, match=rf"^{path}:1: Gemini CLI --output-format stream-json output \({said}\): it reports usage per run only"):
        detect_format(path)
    # In a run's stream, after its init and messages, the refusal is the same.
    path = write_jsonl(tmp_path / "run.jsonl", GEMINI_STREAM[:2] + [event] + GEMINI_STREAM[-1:])
    with pytest.raises(UserError, match=r":1: Gemini CLI --output-format stream-json output: "):
        load_trace([path])


@pytest.mark.parametrize("event", [
    {"type": "error", "timestamp": "2026-03-02T10:00:03.000Z", "severity": "critical", "message": "disk full"},  # not Gemini's severities
    {"type": "error", "timestamp": "2026-03-02T10:00:03.000Z", "severity": "error"},  # no message
    {"type": "error", "timestamp": "2026-03-02T10:00:03.000Z", "severity": "error", "message": {"text": "m"}},
], ids=["other-severity", "no-message", "message-not-text"])
def test_an_error_record_of_another_tool_is_not_taken_for_a_gemini_stream(tmp_path: Path, event: dict) -> None:
    # An application log's error line was named a Gemini CLI stream-json output (any severity,
    # no message needed): the user was sent to look for a Gemini session the file has nothing of.
    path = write_jsonl(tmp_path / "app.jsonl", [event])
    with pytest.raises(UserError, match=r":1: unknown log format"):
        detect_format(path)


@pytest.mark.parametrize(("make", "fmt", "what"), [
    (lambda d: write_jsonl(d / "run.jsonl", GEMINI_STREAM), "gemini-cli", "Gemini CLI --output-format stream-json output: "),
    (lambda d: write_jsonl(d / "run.jsonl", GEMINI_STREAM), "qwen-code", "Gemini CLI --output-format stream-json output: "),
    (lambda d: write_jsonl(d / "exec.jsonl", CODEX_EXEC), "codex", "Codex exec --json output: "),
], ids=["gemini-stream-as-gemini-cli", "gemini-stream-as-qwen-code", "codex-exec-as-codex"])
def test_a_headless_output_read_with_its_agents_input_is_named_the_same(tmp_path: Path, make, fmt: str, what: str) -> None:
    # --input gemini-cli on a stream-json output said "run.jsonl:2: not a Gemini CLI session
    # record (no id, sessionId, $set or $rewindTo)": the user who named the agent was not told
    # the file is its run's totals, nor which of its files to audit.
    path = make(tmp_path)
    with pytest.raises(UserError, match=rf"^{path}:1: {what}.* instead$"):
        load_trace([path], fmt)


def test_a_gemini_stream_json_run_that_failed_at_its_start_is_named_with_its_error(tmp_path: Path) -> None:
    # A run stopped before its first call (handleError in packages/cli/src/utils/errors.ts) prints
    # one result event, status error: the refusal said only that the file reports usage per run,
    # as of a run that worked, leaving out why there was nothing.
    failed = {"type": "result", "timestamp": "2026-03-02T10:00:00.500Z", "status": "error",
              "error": {"type": "FatalAuthenticationError", "message": "Could not load the default credentials.\nSee the docs."},
              "stats": {"total_tokens": 0, "input_tokens": 0, "output_tokens": 0, "cached": 0, "input": 0, "duration_ms": 500,
                        "tool_calls": 0, "models": {}}}
    path = write_jsonl(tmp_path / "run.jsonl", [failed])
    with pytest.raises(UserError, match=rf"^{path}:1: Gemini CLI --output-format stream-json output \(the run failed: "
                                        r"FatalAuthenticationError: Could not load the default credentials\. See the docs\.\): "
                                        r"it reports usage per run only"):
        detect_format(path)
    # Kept from an error event on: its severity and message.
    path = write_jsonl(tmp_path / "tail.jsonl", GEMINI_STREAM_ERRORS[1:])
    with pytest.raises(UserError, match=r":1: Gemini CLI --output-format stream-json output \(error: Maximum session turns exceeded\): "):
        detect_format(path)
    # A run that worked is named as before, nothing in brackets.
    path = write_jsonl(tmp_path / "ok.jsonl", GEMINI_STREAM)
    with pytest.raises(UserError, match=r":1: Gemini CLI --output-format stream-json output: it reports"):
        detect_format(path)


#: ``claude -p --output-format json``: the Agent SDK's result message alone (SDKResultMessage).
CLAUDE_JSON = {
    "type": "result", "subtype": "success", "is_error": False, "duration_ms": 12000, "duration_api_ms": 11000, "num_turns": 4,
    "result": "Done.", "session_id": "0c5b1e7a-1111-2222-3333-444455556666", "total_cost_usd": 0.1234,
    "usage": {"input_tokens": 20, "cache_creation_input_tokens": 5000, "cache_read_input_tokens": 60000, "output_tokens": 700,
              "server_tool_use": {"web_search_requests": 0}, "service_tier": "standard"},
    "modelUsage": {"claude-sonnet-4-5-20250929": {"inputTokens": 20, "outputTokens": 700, "cacheReadInputTokens": 60000,
                                                  "cacheCreationInputTokens": 5000, "webSearchRequests": 0, "costUSD": 0.1234}},
    "permission_denials": [], "uuid": "9d1f0000-0000-0000-0000-000000000000",
}


def test_a_claude_code_json_output_is_named_and_refused(tmp_path: Path) -> None:
    # main said "unknown log format" of it (checked): the user was not told the file is the
    # run's totals, nor that the transcript (or stream-json output) logs each call.
    path = tmp_path / "run.json"
    path.write_text(json.dumps(CLAUDE_JSON, indent=2))
    what = (r"Claude Code -p --output-format json output: it reports usage per run only \(the result's usage and modelUsage sum "
            r"the run's calls\), so no call can be audited; audit the transcript Claude Code keeps of the run "
            r"\(~/\.claude/projects/<project>/<session_id>\.jsonl\), or the run's --output-format stream-json output instead$")
    with pytest.raises(UserError, match=rf"^{path}:1: {what}"):
        detect_format(path)
    # A run that ended in error says how; 1.0.x wrote cost_usd and no modelUsage.
    old = {k: v for k, v in CLAUDE_JSON.items() if k not in ("modelUsage", "total_cost_usd")} | {"cost_usd": 0.12, "subtype": "error_max_turns"}
    path.write_text(json.dumps(old))
    with pytest.raises(UserError, match=r":1: Claude Code -p --output-format json output \(the run ended error_max_turns\): "):
        load_trace([path])
    # Qwen Code's result message alone (no modelUsage, no cost) is not named Claude Code's.
    qwen = QWEN_STREAM[-1]
    path.write_text(json.dumps(qwen))
    with pytest.raises(UserError, match=r":1: unknown log format"):
        detect_format(path)
    # In a stream-json run the result line sits beside the calls, which are read.
    requests, _ = load_trace([write_jsonl(tmp_path / "s.jsonl", _claude_stream())])
    assert len(requests) == 1


def _claude_stream() -> list[dict]:
    """A one-call ``claude -p --output-format stream-json`` run ending in its result line."""
    return [
        {"type": "system", "subtype": "init", "session_id": CLAUDE_JSON["session_id"], "uuid": "i", "model": "claude-sonnet-4-5-20250929",
         "claude_code_version": "2.0.37", "tools": []},
        {"type": "assistant", "session_id": CLAUDE_JSON["session_id"], "uuid": "a", "parent_tool_use_id": None,
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": [{"type": "text", "text": "Done."}],
                     "usage": {"input_tokens": 20, "cache_creation_input_tokens": 5000, "cache_read_input_tokens": 60000, "output_tokens": 700}}},
        CLAUDE_JSON,
    ]


#: Entire's compact transcript (the entire.io CLI's transcript.jsonl in a checkpoint's session
#: folder): a user line, then each reply with its uncached input and output tokens.
ENTIRE_COMPACT = [
    {"v": 1, "agent": "pi", "cli_version": "0.8.42", "type": "user", "ts": "2026-07-14T16:18:50.018Z", "content": [{"text": "add a page"}]},
    {"v": 1, "agent": "pi", "cli_version": "0.8.42", "type": "assistant", "ts": "2026-07-14T16:18:57.633Z", "id": "a1",
     "input_tokens": 2052, "output_tokens": 122, "content": [{"type": "tool_use", "id": "c1", "name": "bash", "input": {"command": "ls"}}]},
    {"v": 1, "agent": "pi", "cli_version": "0.8.42", "type": "assistant", "ts": "2026-07-14T16:19:01.010Z", "id": "a2",
     "input_tokens": 229, "output_tokens": 108, "content": [{"text": "Done."}]},
]


def test_an_entire_compact_transcript_is_named_and_refused_pointing_to_the_session_beside_it(tmp_path: Path) -> None:
    # Public checkpoints keep it beside the agent's own session file (full.jsonl): audited alone
    # it was an unknown log format; a checkpoint's folder audits full.jsonl and says why not this.
    folder = tmp_path / "0"
    folder.mkdir()
    path = write_jsonl(folder / "transcript.jsonl", ENTIRE_COMPACT)
    # The agent is named in the sentence ("of a session of the agent pi"), not in a second
    # parenthesis after the first ("(transcript.jsonl of a checkpoint) (agent pi)").
    what = (r"Entire's compact transcript of a session of the agent pi \(transcript\.jsonl of a checkpoint\): it keeps at most "
            r"each reply's uncached input and output tokens, no cache read or write, so no call can be audited; audit the "
            r"agent's own session file the checkpoint keeps \(full\.jsonl beside it; in Entire's v2 layout raw_transcript, "
            r"same folder, on refs/entire/checkpoints/v2/full/current\) instead")
    with pytest.raises(UserError, match=rf"^{path}:1: {what}$"):
        detect_format(path)
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-07-14T16:11:11.169Z", "cwd": "/w"}
    reply = {"role": "assistant", "content": [], "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
             "usage": {"input": 2052, "output": 122, "cacheRead": 0, "cacheWrite": 0, "cost": {}}, "stopReason": "stop",
             "timestamp": 1784045937633}
    write_jsonl(folder / "full.jsonl", [header, {"type": "message", "id": "m1", "parentId": None, "timestamp": "2026-07-14T16:18:57.633Z",
                                                 "message": reply}])
    requests, summaries = load_trace([folder])
    assert [Path(r.file).name for r in requests] == ["full.jsonl"]
    skipped = {Path(s.file).name: s.notes for s in summaries if s.format == "headless"}
    assert skipped["transcript.jsonl"][0].startswith("skipped: Entire's compact transcript of a session")


#: Entire's compact transcript of an agent whose own log keeps no time and no token count (Kiro
#: CLI's and Cursor's, as Entire's v2 checkpoints keep them): its lines have no ``ts``.
ENTIRE_COMPACT_KIRO = [
    {"v": 1, "agent": "kiro", "cli_version": "unknown", "type": "user", "content": [{"text": "add a readme"}]},
    {"v": 1, "agent": "kiro", "cli_version": "unknown", "type": "assistant",
     "content": [{"type": "tool_use", "name": "Write", "input": {"path": "kiro/README.md"}}]},
    {"v": 1, "agent": "kiro", "cli_version": "unknown", "type": "assistant", "content": [{"type": "text", "text": "Written."}]},
]


def test_an_entire_compact_transcript_without_times_is_named_too(tmp_path: Path) -> None:
    # Its lines carry no ts: it was an unknown log format.
    path = write_jsonl(tmp_path / "transcript.jsonl", ENTIRE_COMPACT_KIRO)
    with pytest.raises(UserError, match=rf"^{path}:1: Entire's compact transcript of a session of the agent kiro "):
        detect_format(path)


def test_a_line_of_those_keys_with_a_time_that_is_no_text_is_not_entires(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [dict(ENTIRE_COMPACT_KIRO[0], ts=5)])
    with pytest.raises(UserError, match="unknown log format"):
        detect_format(path)


#: ``amp --execute --stream-json`` (Amp's CLI: the writer's shapes as its binary's bundle has them):
#: ``init`` names ``agent_mode``, each reply ``{type: "message", role, content, stop_reason, usage}``
#: with no model and no id; ``session_id`` is the thread's id. Two calls, then the result.
AMP_STREAM = [
    {"type": "system", "subtype": "init", "cwd": "/w", "session_id": "T-7c1e2a90-4b4d-4f0e-9d51-2b8f5e1c0a33",
     "tools": ["Bash", "Read", "edit_file"], "mcp_servers": [], "agent_mode": "smart"},
    {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "fix the test"}]},
     "parent_tool_use_id": None, "session_id": "T-7c1e2a90-4b4d-4f0e-9d51-2b8f5e1c0a33"},
    {"type": "assistant", "message": {"type": "message", "role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"cmd": "pytest"}}], "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "cache_creation_input_tokens": 9000, "cache_read_input_tokens": 0, "output_tokens": 60,
                  "service_tier": "standard"}}, "parent_tool_use_id": None, "session_id": "T-7c1e2a90-4b4d-4f0e-9d51-2b8f5e1c0a33"},
    {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "1 failed",
                                                             "is_error": False}]},
     "parent_tool_use_id": None, "session_id": "T-7c1e2a90-4b4d-4f0e-9d51-2b8f5e1c0a33"},
    {"type": "assistant", "message": {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "Fixed."}],
                                      "stop_reason": "end_turn", "usage": {"input_tokens": 3, "cache_creation_input_tokens": 400,
                                                                           "cache_read_input_tokens": 9000, "output_tokens": 20,
                                                                           "service_tier": "standard"}},
     "parent_tool_use_id": None, "session_id": "T-7c1e2a90-4b4d-4f0e-9d51-2b8f5e1c0a33"},
    {"type": "result", "subtype": "success", "duration_ms": 8123, "is_error": False, "num_turns": 1, "result": "Fixed.",
     "session_id": "T-7c1e2a90-4b4d-4f0e-9d51-2b8f5e1c0a33"},
]


@pytest.mark.parametrize("fmt", ["auto", "claude-code"])
@pytest.mark.parametrize("first", [0, 2], ids=["whole", "from-a-reply"])
def test_an_amp_stream_json_output_is_named_as_amps_and_points_to_the_thread(tmp_path: Path, fmt: str, first: int) -> None:
    """Amp's Claude Code-compatible stream JSON names no call's model: main said "unknown log
    format" of it (and, read as claude-code, "message.model is not a string"), never that it is
    Amp's, nor which file logs each call with its model."""
    path = write_jsonl(tmp_path / "run.jsonl", AMP_STREAM[first:])
    what = (rf"^{path}:1: Amp --execute --stream-json output \(Claude Code's stream-json shape, written by Amp\): it names no "
            r"call's model .*; audit the Amp thread of the run \(.*threads/<session_id>\.json, format amp: .*\) instead$")
    with pytest.raises(UserError, match=what):
        load_trace([path], fmt)


def test_a_claude_code_stream_json_run_is_not_taken_for_amps(tmp_path: Path) -> None:
    """Claude Code's own stream-json (its init names its version, its replies their model) still reads as Claude Code."""
    sid = "0d1f5c3e-8a1b-4c44-9e0f-1a2b3c4d5e6f"
    path = write_jsonl(tmp_path / "run.jsonl", [
        {"type": "system", "subtype": "init", "cwd": "/w", "session_id": sid, "tools": ["Bash"], "model": "claude-sonnet-4-6",
         "claude_code_version": "2.1.0"},
        {"type": "assistant", "message": {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                                          "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn",
                                          "usage": {"input_tokens": 5, "cache_creation_input_tokens": 9000, "cache_read_input_tokens": 0,
                                                    "output_tokens": 6}},
         "parent_tool_use_id": None, "session_id": sid, "uuid": "u1"},
    ])
    requests, summaries = load_trace([path])
    assert [s.format for s in summaries] == ["claude-code"] and len(requests) == 1
