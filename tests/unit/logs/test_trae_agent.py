"""Trae Agent trajectories (workloads/logs/formats/trae_agent.py): fixtures built here from the
shape bytedance/trae-agent's ``TrajectoryRecorder`` writes (``trae_agent/utils/trajectory_recorder.py``)
and the usage each of its LLM clients fills (``trae_agent/utils/llm_clients/``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.logs.formats import FORMATS, detect_format, resolve
from tests.unit.audit.fixtures import cli_in_process as _cli

SONNET = "claude-sonnet-4-20250514"


def _usage(i: int, o: int, w: int = 0, r: int = 0) -> dict:
    return {"input_tokens": i, "output_tokens": o, "cache_creation_input_tokens": w, "cache_read_input_tokens": r, "reasoning_tokens": 0}


def _call(at: str, client: str, model: str, messages: list[dict], usage: dict | None, tools: list[dict] | None = None) -> dict:
    return {"timestamp": at, "provider": client, "model": model, "input_messages": messages,
            "response": {"content": "ok", "model": model, "finish_reason": "stop", "usage": usage, "tool_calls": tools},
            "tools_available": ["bash", "str_replace_based_edit_tool", "task_done"]}


def _result(call_id: str, text: str) -> dict:
    return {"role": "user", "content": None, "tool_result": {"call_id": call_id, "success": True, "result": text, "error": None, "id": None}}


def _trajectory(path: Path, calls: list[dict]) -> Path:
    doc = {"task": "fix it", "start_time": "2025-07-10T14:00:00.000000", "end_time": "2025-07-10T14:05:00.000000",
           "provider": "anthropic", "model": SONNET, "max_steps": 20, "llm_interactions": calls, "agent_steps": [],
           "success": True, "final_result": "done", "execution_time": 300.0}
    path.write_text(json.dumps(doc, indent=2))
    return path


def test_each_interaction_is_a_call_read_as_its_client_fills_usage_field_by_field(tmp_path: Path) -> None:
    view = [{"call_id": "c1", "name": "str_replace_based_edit_tool", "arguments": {"command": "view"}, "id": None}]
    calls = [
        _call("2025-07-10T14:00:05.000000", "anthropic", SONNET,
              [{"role": "system", "content": "You are an expert."}, {"role": "user", "content": "fix it"}], _usage(12, 90, 4000, 0), view),
        _call("2025-07-10T14:00:09.250000", "anthropic", SONNET, [_result("c1", "def f(): pass")], _usage(30, 40, 200, 4000)),
        # The nudge after a task_done that did not finish: a user message again.
        _call("2025-07-10T14:00:20.000000", "openai", "gpt-4.1", [{"role": "user", "content": "The task is incomplete."}], _usage(6000, 20, 0, 4096)),
        _call("2025-07-10T14:00:30.000000", "openrouter", "qwen/qwen3-coder", [_result("c2", "ok")], _usage(6100, 9)),
        _call("2025-07-10T14:00:40.000000", "ollama", "qwen3", [_result("c3", "ok")], None),  # Trae's Ollama client keeps no usage
    ]
    path = _trajectory(tmp_path / "trajectory_20250710_140000.json", calls)
    assert detect_format(path) is FORMATS["trae-agent"] and resolve("trae") is FORMATS["trae-agent"]
    requests, summaries = load_trace([path])
    assert [r.path for r in requests] == ["llm_interactions[0]", "llm_interactions[1]", "llm_interactions[2]", "llm_interactions[3]"]
    assert [r.usage for r in requests] == [
        Usage(cache_write_5m=4000, uncached=12, output=90),            # anthropic: additive
        Usage(cache_read=4000, cache_write_5m=200, uncached=30, output=40),
        Usage(cache_read=4096, uncached=6000 - 4096, output=20),        # openai: cached inside input_tokens
        Usage(uncached=6100, output=9, cache_reported=False),           # openrouter: no cache count
    ]
    assert sum(r.usage.prompt for r in requests) == 4012 + 4230 + 6000 + 6100
    assert [r.provider for r in requests][:3] == ["anthropic", "anthropic", "openai"]
    assert [r.done_ms for r in requests] == [1752156005000, 1752156009250, 1752156020000, 1752156030000]
    assert [r.sent_ms for r in requests] == [r.done_ms for r in requests]
    # One chain: the system prompt and task, then the reply before and each call's new messages.
    assert [r.prefix.new_blocks for r in requests] == [2, 2, 2, 2]
    assert [r.prefix.parent for r in requests][1:] == [r.prefix.node for r in requests][:-1]
    assert [r.events for r in requests] == [
        (("user_turn", ""),), (), (("user_turn", ""), ("model_change", f"{SONNET} -> gpt-4.1")), (("model_change", "gpt-4.1 -> qwen/qwen3-coder"),),
    ]
    assert "file-read" in requests[1].messages[1].marks  # the result of the view the reply asked for
    summary = summaries[0]
    assert [why for _, why in summary.skipped] == ["llm_interactions[4]: call with no tokens (no usage)"]
    notes = " | ".join(summary.notes)
    assert "2 call(s) read as additive" in notes and "1 call(s) read as subset" in notes and "1 call(s) with no cache count" in notes


@pytest.mark.parametrize(
    ("calls", "says"),
    [
        ([_call("2025-07-10T14:00:05", "anthropic", SONNET, [], _usage(-1, 2))], "llm_interactions[0].response: usage.input_tokens is not a non-negative integer"),
        ([_call("2025-07-10T14:00:05", "openai", "gpt-4.1", [], _usage(10, 2, 20, 5))], "cached (5) and written (20) tokens exceed input_tokens (10)"),
        ([_call("yesterday", "anthropic", SONNET, [], _usage(1, 2))], "llm_interactions[0]: timestamp 'yesterday' is not ISO 8601"),
        (["x"], "llm_interactions[0] is not an object"),
        ([{"timestamp": "2025-07-10T14:00:05", "response": "x"}], "llm_interactions[0].response is not an object"),
        ([_call("2025-07-10T14:00:05", "anthropic", SONNET, "x", _usage(1, 2))], "llm_interactions[0].input_messages is not a list"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, calls: list, says: str) -> None:
    path = _trajectory(tmp_path / "t.json", calls)
    status, out, err = _cli("audit", str(path))
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and says in err and "Traceback" not in err


def test_the_openai_clients_next_call_reads_the_previous_prompt_and_its_whole_output(tmp_path: Path) -> None:
    """Trae's openai client sends each response's output back (reasoning included, by item id on the
    Responses API): the next call reads past the previous prompt, into its output, as gpt-5 did in
    ISO-Bench's trajectories (prompt 8,105 + output 831, 768 of it reasoning; read 8,960 of 9,047)."""
    from prefixbench.workloads.audit.core import run_audit

    first = _usage(8105, 831, 0, 6400) | {"reasoning_tokens": 768}
    calls = [
        _call("2025-11-14T15:35:52.000000", "openai", "gpt-5-2025-08-07",
              [{"role": "system", "content": "You are an expert."}, {"role": "user", "content": "fix it"}], first),
        _call("2025-11-14T15:35:58.000000", "openai", "gpt-5-2025-08-07", [_result("c1", "def f(): pass")], _usage(9047, 40, 0, 8960)),
    ]
    path = _trajectory(tmp_path / "trajectory.json", calls)
    requests, _ = load_trace([path])
    assert [r.prefix.replays_output for r in requests] == [True, True]
    row = run_audit([path]).rows[1]
    assert row.reported_cache_read == 8960 and row.read_within, row.predicted_cache_read


def test_a_run_whose_prompts_grow_by_less_than_the_reasoning_sent_it_not_back(tmp_path: Path) -> None:
    """ISO-Bench's gpt-5 run of 2026-01: after a call that reasoned, the next prompt grew by less
    than that call's output on most calls (the reasoning not sent back), and the reads stopped at the
    previous prompt: read as the previous prompt only."""
    from prefixbench.workloads.audit.core import run_audit

    def reasoned(i: int, o: int, r: int) -> dict:
        return _usage(i, o, 0, r) | {"reasoning_tokens": o - 40}

    calls = [
        _call("2026-01-23T21:20:00.000000", "openai", "gpt-5-2025-08-07",
              [{"role": "system", "content": "You are an expert."}, {"role": "user", "content": "fix it"}], reasoned(8000, 900, 6400)),
        _call("2026-01-23T21:20:06.000000", "openai", "gpt-5-2025-08-07", [_result("c1", "a")], reasoned(8300, 700, 7936)),
        _call("2026-01-23T21:20:12.000000", "openai", "gpt-5-2025-08-07", [_result("c2", "b")], reasoned(8600, 700, 8192)),
    ]
    path = _trajectory(tmp_path / "trajectory.json", calls)
    requests, _ = load_trace([path])
    assert [r.prefix.replays_output for r in requests] == [False, False, False]
    rows = run_audit([path]).rows
    assert [row.read_within for row in rows[1:]] == [True, True], [row.predicted_cache_read for row in rows]


def test_runs_of_another_system_prompt_or_tool_set_in_one_folder_have_heads_of_their_own(tmp_path: Path) -> None:
    """ISO-Bench keeps runs of one agent and model with other prompts and tools side by side: its gpt-5
    runs with 4 tools read 6,400 tokens at their first calls, those with 30 tools 8,448. Audited as one
    folder, each run's first calls are predicted at their own head, not the one most runs read."""
    from prefixbench.workloads.audit.core import run_audit

    browser = ["bash", "str_replace_based_edit_tool", "task_done", *(f"browser_{i}" for i in range(26))]
    paths = []
    for i, (system, tools, read) in enumerate([("You are an expert.", None, 6400)] * 3 + [("You are an expert.", browser, 8448)] * 2
                                              + [("You are a performance expert.", None, 6784)] * 2):
        call = _call(f"2025-11-14T{10 + i:02d}:00:00.000000", "openai", "gpt-5-2025-08-07",
                     [{"role": "system", "content": system}, {"role": "user", "content": f"task {i}"}], _usage(9000, 100, 0, read))
        if tools is not None:
            call["tools_available"] = tools
        paths.append(_trajectory(tmp_path / f"run{i}.json", [call]))
    requests, _ = load_trace(paths)
    heads = [r.prefix.head for r in requests]
    assert len(set(heads)) == 3 and heads[0] == heads[1] == heads[2] != heads[3] == heads[4] != heads[5] == heads[6]
    assert all(head.startswith("trae-agent:main:") and head.endswith(":gpt-5-2025-08-07") for head in heads)
    rows = run_audit(paths).rows
    assert [row.predicted_cache_read for row in rows] == [6400] * 3 + [8448] * 2 + [6784] * 2


def test_a_lone_surrogate_in_the_system_prompt_does_not_stop_the_head_key(tmp_path: Path) -> None:
    """JSON may escape half a surrogate pair (``\\ud800``); the head's digest hashes it as it is."""
    calls = [_call("2025-11-14T15:35:52.000000", "openai", "gpt-5-2025-08-07",
                   [{"role": "system", "content": "You are \ud800 an expert."}, {"role": "user", "content": "fix it"}],
                   _usage(8105, 831, 0, 6400))]
    requests, _ = load_trace([_trajectory(tmp_path / "trajectory.json", calls)])
    assert requests[0].prefix.head.startswith("trae-agent:main:")


def test_a_nudge_after_a_turn_that_reasoned_shares_only_the_turns_first_prompt(tmp_path: Path) -> None:
    """Trae's nudge after a response without tool calls opens a user turn: OpenAI renders none of
    the earlier turn's reasoning, the prompt shrinks by it, and the read stops at the end of the
    turn's first prompt (ISO-Bench's gpt-5: prompt 83,286 + output 1,320, then 72,935 reading 8,704
    of a first prompt of 8,710). Before, the shrink was read as the messages changed: head only."""
    from prefixbench.workloads.audit.core import run_audit

    def reasoned(i: int, o: int, r: int) -> dict:
        return _usage(i, o, 0, r) | {"reasoning_tokens": o - 100}

    gpt5, task = "gpt-5-2025-08-07", "Make the kernel faster. " * 400
    calls = [
        _call("2025-11-14T15:35:52.000000", "openai", gpt5,
              [{"role": "system", "content": "You are an expert."}, {"role": "user", "content": task}], reasoned(8710, 900, 6400)),
        _call("2025-11-14T15:35:58.000000", "openai", gpt5, [_result("c1", "a")], reasoned(9710, 1200, 9600)),
        _call("2025-11-14T15:36:04.000000", "openai", gpt5, [_result("c2", "b")], reasoned(11100, 500, 10880)),
        _call("2025-11-14T15:36:10.000000", "openai", gpt5,
              [{"role": "user", "content": "It seems that you have not completed the task."}], reasoned(9320, 300, 8704)),
    ]
    path = _trajectory(tmp_path / "trajectory.json", calls)
    requests, _ = load_trace([path])
    assert [r.prefix.shared for r in requests] == [None, None, None, 8710]
    rows = run_audit([path]).rows
    assert [row.read_within for row in rows[1:]] == [True, True, True], [row.predicted_cache_read for row in rows]
    assert rows[3].cause == "messages-changed" and "sent without the previous turn's reasoning" in rows[3].detail, rows[3].detail
