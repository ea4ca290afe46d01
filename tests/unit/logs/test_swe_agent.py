"""SWE-agent and mini-swe-agent trajectories (workloads/logs/formats/swe_agent.py), one version at a
time, and LiteLLM's usage as they keep it (workloads/logs/formats/gateway_usage.py).

Each fixture is written here from the agents' own source (mini-swe-agent's ``DefaultAgent.serialize``
and ``LitellmModel.query``, 1.x and 2.x; SWE-agent's ``get_trajectory_data``) and LiteLLM's
Anthropic transformation, pretty-printed as the agents write them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.simulator.wire import CacheBreakpoint
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.formats.gateway_usage import provider_of, read_usage, writes_in_prompt
from prefixbench.workloads.logs.sources import find_log_files

SYSTEM = {"role": "system", "content": "You are a helpful assistant that can interact with a computer."}
TASK = {"role": "user", "content": "Please solve this issue: calc.divide(1, 0) returns None."}


def write(path: Path, value: object) -> Path:
    path.write_text(json.dumps(value, indent=2))
    return path


def read(path: Path):
    fmt = detect_format(path)
    assert fmt is FORMATS["swe-agent"]
    return import_file(path, fmt, ImportContext())


def response(rid: str, model: str, usage: dict, created: int = 1761994800) -> dict:
    return {"id": rid, "created": created, "model": model, "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "x"}}], "usage": usage}


def openai_usage(prompt: int, cached: int, out: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0}, "completion_tokens_details": {"reasoning_tokens": 0}}


def mini_v1(messages: list[dict], version: str = "1.14.4", model: str = "gpt-4o") -> dict:
    return {"info": {"exit_status": "Submitted", "submission": "", "model_stats": {"instance_cost": 0.01, "api_calls": 2}, "mini_version": version,
                     "config": {"model": {"model_name": model, "model_kwargs": {"temperature": 0.0}}, "model_type": "minisweagent.models.litellm_model.LitellmModel"}},
            "messages": messages, "trajectory_format": "mini-swe-agent-1"}


def test_mini_1_0_to_1_11_has_bodies_but_no_usage(tmp_path: Path) -> None:
    # Before 1.11.1 an assistant message was {role, content} only: two calls, predictions only.
    messages = [SYSTEM, TASK, {"role": "assistant", "content": "ls\n```bash\nls\n```"}, {"role": "user", "content": "Observation: a.py"},
                {"role": "assistant", "content": "done\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"}]
    requests, summary = read(write(tmp_path / "old.traj.json", mini_v1(messages, "1.9.0")))
    assert [(r.usage, r.provider, r.model, len(r.body.messages)) for r in requests] == [(None, "openai", "gpt-4o", 1), (None, "openai", "gpt-4o", 3)]
    assert requests[1].body.system == SYSTEM["content"]


def test_a_mini_run_on_an_engine_the_user_runs_keeps_it_as_the_upstream(tmp_path: Path) -> None:
    """mini-swe-agent's model is litellm's: ``hosted_vllm/...`` runs on the user's vLLM, so the
    calls are no vendor's (provider unknown, the engine their upstream: unpriced). Main: OpenAI's."""
    messages = [SYSTEM, TASK,
                {"role": "assistant", "content": "a", "extra": {"response": response("c1", "gpt-4o", openai_usage(1500, 0, 20))}}]
    requests, _ = read(write(tmp_path / "v.traj.json", mini_v1(messages, model="hosted_vllm/gpt-4o")))
    assert [(r.provider, r.upstream) for r in requests] == [("unknown", "hosted_vllm")]


def test_mini_1_14_openai_usage_is_a_subset_and_created_is_the_send_time(tmp_path: Path) -> None:
    messages = [SYSTEM, TASK,
                {"role": "assistant", "content": "a", "extra": {"response": response("c1", "gpt-4o-2024-08-06", openai_usage(1500, 0, 20), 1761994800)}},
                {"role": "user", "content": "Observation: a.py"},
                {"role": "assistant", "content": "b", "extra": {"response": response("c2", "gpt-4o-2024-08-06", openai_usage(1600, 1408, 30), 1761994805)}}]
    requests, summary = read(write(tmp_path / "t.traj.json", mini_v1(messages)))
    # prompt_tokens includes cached_tokens: uncached = 1600 - 1408.
    assert [r.usage for r in requests] == [Usage(uncached=1500, output=20), Usage(cache_read=1408, uncached=192, output=30)]
    assert [(r.sent_ms, r.ready_ms, r.request_id, r.provider) for r in requests] == [
        (1761994800000, None, "c1", "openai"), (1761994805000, None, "c2", "openai")]
    assert any("prompt_tokens includes prompt_tokens_details.cached_tokens" in n for n in summary.notes)


def test_mini_1_17_deepseek_with_timestamps(tmp_path: Path) -> None:
    # 1.17 adds a timestamp to every message; DeepSeek through LiteLLM names its hits twice.
    usage = openai_usage(3000, 2816, 50) | {"prompt_cache_hit_tokens": 2816, "prompt_cache_miss_tokens": 184}
    messages = [SYSTEM | {"timestamp": 1761994790.0}, TASK | {"timestamp": 1761994790.1},
                {"role": "assistant", "content": "a", "timestamp": 1761994799.25, "extra": {"response": response("d1", "deepseek-chat", usage)}}]
    requests, _ = read(write(tmp_path / "t.traj.json", mini_v1(messages, "1.17.2", "deepseek/deepseek-chat")))
    assert [(r.provider, r.model, r.usage, r.sent_ms, r.ready_ms) for r in requests] == [
        ("deepseek", "deepseek-chat", Usage(cache_read=2816, uncached=184, output=50), 1761994790100, 1761994799250)]


def anthropic_old(prompt_in: int, read_: int, write_: int, out: int) -> dict:
    """Older LiteLLM: prompt_tokens = input + cache reads (writes left out)."""
    return {"prompt_tokens": prompt_in + read_, "completion_tokens": out, "total_tokens": prompt_in + read_ + out,
            "prompt_tokens_details": {"cached_tokens": read_}, "cache_creation_input_tokens": write_, "cache_read_input_tokens": read_}


def mini_v2(messages: list[dict], model: str = "anthropic/claude-sonnet-4-5-20250929", cache: str | None = "default_end") -> dict:
    return {"info": {"model_stats": {"instance_cost": 0.02, "api_calls": 3}, "mini_version": "2.1.0", "exit_status": "Submitted", "submission": "",
                     "config": {"model": {"model_name": model, "model_kwargs": {}, "set_cache_control": cache}}},
            "messages": messages, "trajectory_format": "mini-swe-agent-1.1"}


def call(idx: int) -> list[dict]:
    return [{"id": f"toolu_{idx}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": "ls"})}}]


def test_mini_2_older_litellm_anthropic_usage_leaves_writes_out_of_prompt_tokens(tmp_path: Path) -> None:
    # Anthropic said input 4, read 0, write 5000, then input 3, read 5000, write 120: older
    # LiteLLM wrote prompt_tokens 4 and 5003; a file where prompt < read + write is read that way.
    claude = "claude-sonnet-4-5-20250929"
    messages = [SYSTEM, TASK,
                {"role": "assistant", "content": None, "tool_calls": call(1), "extra": {"response": response("m1", claude, anthropic_old(4, 0, 5000, 30)), "timestamp": 1761994801.0}},
                {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py", "extra": {"timestamp": 1761994802.0}},
                # A reply without a tool call: 2.x puts its response on the format-error message.
                {"role": "user", "content": "No tool calls found.", "extra": {"interrupt_type": "FormatError", "cost": 0.001,
                                                                              "response": response("m2", claude, anthropic_old(3, 5000, 120, 9))}},
                {"role": "assistant", "content": None, "tool_calls": call(3), "extra": {"response": response("m3", claude, anthropic_old(2, 5120, 40, 7)), "timestamp": 1761994809.0}},
                {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}}]
    requests, summary = read(write(tmp_path / "t.traj.json", mini_v2(messages)))
    assert [r.usage for r in requests] == [
        Usage(cache_write_5m=5000, uncached=4, output=30),
        Usage(cache_read=5000, cache_write_5m=120, uncached=3, output=9),
        Usage(cache_read=5120, cache_write_5m=40, uncached=2, output=7),
    ]
    assert any("not writes (older LiteLLM)" in n for n in summary.notes)
    # The bodies carry what was sent (the format-error message included, the exit message not)
    # and the end marker set_cache_control default_end put on the last message.
    bodies = [r.body for r in requests]
    assert [len(b.messages) for b in bodies] == [1, 3, 4]
    assert bodies[2].cache_breakpoints == (CacheBreakpoint("messages", 0, 3),)


def test_litellm_reading_is_decided_per_file() -> None:
    newer = {"prompt_tokens": 5004, "completion_tokens": 1, "cache_creation_input_tokens": 5000, "cache_read_input_tokens": 0,
             "prompt_tokens_details": {"cached_tokens": 0, "cache_creation_tokens": 5000, "text_tokens": 4}}
    older = anthropic_old(4, 0, 5000, 1)
    assert writes_in_prompt([(newer, "x")]) is True
    assert writes_in_prompt([(older, "x")]) is False
    assert read_usage(newer, "x") == Usage(cache_write_5m=5000, uncached=4, output=1)
    assert read_usage(older, "x", writes_included=False) == Usage(cache_write_5m=5000, uncached=4, output=1)
    with pytest.raises(UserError, match="exceed prompt_tokens"):
        read_usage(older, "f:1", writes_included=True)
    # 1 h writes: LiteLLM keeps Anthropic's split under prompt_tokens_details.
    split = newer | {"prompt_tokens_details": newer["prompt_tokens_details"] | {"cache_creation_token_details": {"ephemeral_1h_input_tokens": 3000}}}
    assert read_usage(split, "x") == Usage(cache_write_5m=2000, cache_write_1h=3000, uncached=4, output=1)


@pytest.mark.parametrize(("model", "anthropic_shaped", "provider"), [
    ("anthropic/claude-sonnet-4-5-20250929", False, "anthropic"),
    ("bedrock/us.anthropic.claude-3-7-sonnet-20250219-v1:0", False, "bedrock"),
    ("openrouter/deepseek/deepseek-chat", False, "deepseek"),
    ("gpt-5", False, "openai"),
    ("openai/my-finetune", False, "openai"),
    ("gemini/gemini-2.5-pro", False, "gemini"),
    ("vertex_ai/some-partner-model", True, "anthropic"),
    # A route to an engine the user runs: its cache, whatever the model. Main: deepseek, openai.
    ("hosted_vllm/deepseek-chat", False, "unknown"),
    ("ollama_chat/gpt-4o", False, "unknown"),
    ("xinference/deepseek-chat", True, "unknown"),
])
def test_provider_of_a_litellm_model_name(model: str, anthropic_shaped: bool, provider: str) -> None:
    assert provider_of(model, anthropic_shaped) == provider


def test_mini_2_responses_model_reads_as_a_chain(tmp_path: Path) -> None:
    # The Responses-API model keeps the response object itself as the message.
    out = {"id": "resp_1", "object": "response", "created_at": 1761994800, "model": "gpt-5-2025-08-07",
           "output": [{"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"}],
           "usage": {"input_tokens": 2100, "input_tokens_details": {"cached_tokens": 1920}, "output_tokens": 40}, "extra": {"timestamp": 1761994802.0}}
    messages = [SYSTEM, TASK, out, {"type": "function_call_output", "call_id": "c1", "output": "a.py", "extra": {"timestamp": 1761994803.0}},
                out | {"id": "resp_2", "usage": {"input_tokens": 2300, "input_tokens_details": {"cached_tokens": 2048}, "output_tokens": 10}}]
    requests, summary = read(write(tmp_path / "t.traj.json", mini_v2(messages, "openai/gpt-5", None)))
    assert [(r.usage, r.body, r.request_id) for r in requests] == [
        (Usage(cache_read=1920, uncached=180, output=40), None, "resp_1"), (Usage(cache_read=2048, uncached=252, output=10), None, "resp_2")]
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert any("not chat completions" in n for n in summary.notes)


def swe_traj(steps: list[dict], history: list[dict], replay: dict | None, version: str | None = "1.1.0") -> dict:
    info = {"model_stats": {"instance_cost": 0.42, "tokens_sent": 52861, "tokens_received": 326, "api_calls": len(steps)}, "exit_status": "submitted"}
    if version:
        info["swe_agent_version"] = version
    out = {"trajectory": steps, "history": history, "info": info, "environment": "docker"}
    if replay is not None:
        out["replay_config"] = json.dumps(replay)
    return out


def test_swe_agent_1_queries_are_the_bodies_with_their_cache_control(tmp_path: Path) -> None:
    marked = {"role": "user", "content": [{"type": "text", "text": "Observation: ok", "cache_control": {"type": "ephemeral"}}], "agent": "main", "message_type": "observation"}
    assistant = {"role": "assistant", "content": "look", "agent": "main", "message_type": "action", "tool_calls": call(1)}
    tool = {"role": "tool", "content": [{"type": "text", "text": "a.py", "cache_control": {"type": "ephemeral"}}], "tool_call_ids": ["toolu_1"], "agent": "main", "message_type": "observation"}
    steps = [
        {"action": "ls", "observation": "a.py", "response": "look", "thought": "look", "execution_time": 0.1, "state": {}, "extra_info": {}, "query": [SYSTEM, marked]},
        {"action": "submit", "observation": "", "response": "done", "thought": "done", "execution_time": 0.1, "state": {}, "extra_info": {},
         "query": [SYSTEM, {"role": "user", "content": "Observation: ok"}, assistant, tool]},
    ]
    replay = {"agent": {"model": {"name": "claude-sonnet-4-20250514", "per_instance_cost_limit": 3.0}}}
    requests, summary = read(write(tmp_path / "x.traj", swe_traj(steps, [SYSTEM], replay)))
    assert [(r.provider, r.model, r.usage) for r in requests] == [("anthropic", "claude-sonnet-4-20250514", None)] * 2
    assert requests[0].body.cache_breakpoints == (CacheBreakpoint("messages", 0, 0),)
    assert requests[1].body.cache_breakpoints == (CacheBreakpoint("messages", 0, 2),)
    assert requests[1].body.messages[2].tool_results[0].call_id == "toolu_1"
    assert [r.path for r in requests] == ["trajectory[0]", "trajectory[1]"]  # one object: each call names its step
    assert any("52861 tokens sent" in n and "predictions only" in n for n in summary.notes)


def _attempt(n_steps: int, model: str = "claude-sonnet-4-20250514") -> dict:
    """One SWE-agent 1.x attempt (``DefaultAgent.get_trajectory_data``): steps whose queries grow."""
    steps = [{"action": "ls", "observation": "a.py", "response": "look", "thought": "look", "execution_time": 0.1, "state": {}, "extra_info": {},
              "query": [SYSTEM, TASK, *([{"role": "assistant", "content": "look"}, {"role": "user", "content": "a.py"}] * i)]}
             for i in range(n_steps)]
    return swe_traj(steps, [SYSTEM], {"agent": {"model": {"name": model}}})


def retry_traj(attempts: list[dict], best: int | None) -> dict:
    """A RetryAgent's trajectory (``RetryAgent.get_trajectory_data``): its attempts, and once one
    is chosen (``choose=True``, the last save) a copy of the best merged in at the top."""
    out: dict = {"attempts": attempts}
    if best is not None:
        out |= json.loads(json.dumps(attempts[best]))
        out["info"] |= {"best_attempt_idx": best, "rloop_model_stats": {"instance_cost": 0.01, "api_calls": 1},
                        "model_stats": {"instance_cost": 0.9, "api_calls": 6}}
    return out


def test_swe_agent_retry_agent_attempts_are_lanes_read_once(tmp_path: Path) -> None:
    """SWE-agent's RetryAgent (1.0 on, ``agents.py``) keeps every attempt in ``attempts`` and, once
    it chose, a copy of the best at the top; each attempt also has its own ``attempt_<n>/<id>.traj``.
    main read only the top-level copy (2 of the 5 calls) and, walking the folder, that attempt twice."""
    out = tmp_path / "django__django-1"
    attempts = [_attempt(3), _attempt(2)]
    out.mkdir()
    parent = write(out / "django__django-1.traj", retry_traj(attempts, 1))
    for n, attempt in enumerate(attempts):
        (out / f"attempt_{n}").mkdir()
        write(out / f"attempt_{n}" / "django__django-1.traj", attempt)
    requests, summary = read(parent)
    assert [(r.lane, r.path) for r in requests] == [
        ("attempt-0", "attempts[0].trajectory[0]"), ("attempt-0", "attempts[0].trajectory[1]"), ("attempt-0", "attempts[0].trajectory[2]"),
        ("attempt-1", "attempts[1].trajectory[0]"), ("attempt-1", "attempts[1].trajectory[1]")]
    assert any("RetryAgent trajectory: 2 attempt(s)" in n and "copy of attempt 1" in n and "1 call(s) are not in the file" in n
               for n in summary.notes)
    alone, note = read(out / "attempt_0" / "django__django-1.traj")
    assert alone == [] and f"read with {parent}" in note.notes[0]
    assert run_audit([out]).totals.requests == 5


def test_swe_agent_retry_agent_saved_mid_run_reads_the_attempt_not_yet_listed(tmp_path: Path) -> None:
    # During an attempt the RetryAgent saves choose=False: only the attempts it finished, none yet
    # in the first; the running attempt is in its own file only.
    out = tmp_path / "x"
    (out / "attempt_0").mkdir(parents=True)
    (out / "attempt_1").mkdir()
    write(out / "i.traj", retry_traj([_attempt(2)], None))
    write(out / "attempt_0" / "i.traj", _attempt(2))
    write(out / "attempt_1" / "i.traj", _attempt(1))
    assert [r.lane for r in read(out / "i.traj")[0]] == ["attempt-0", "attempt-0"]
    assert [r.lane for r in read(out / "attempt_1" / "i.traj")[0]] == ["main"]
    assert run_audit([out]).totals.requests == 3
    write(out / "i.traj", {"attempts": []})
    requests, summary = read(out / "i.traj")
    assert requests == [] and "0 attempt(s)" in summary.notes[0] and "no attempt chosen yet" in summary.notes[0]
    assert [r.lane for r in read(out / "attempt_0" / "i.traj")[0]] == ["main", "main"]


def test_swe_agent_0_rebuilds_requests_from_the_history(tmp_path: Path) -> None:
    history = [SYSTEM | {"agent": "primary"}, {"role": "user", "content": "demo", "agent": "primary", "is_demo": True},
               TASK | {"agent": "primary"}, {"role": "assistant", "content": "ls", "agent": "primary"},
               {"role": "user", "content": "a.py", "agent": "primary"}, {"role": "assistant", "content": "submit", "agent": "primary"}]
    steps = [{"action": "ls", "observation": "a.py", "response": "ls", "state": "{}", "thought": ""}] * 2
    requests, summary = read(write(tmp_path / "x.traj", swe_traj(steps, history, None, None)))
    assert [(r.model, r.provider, len(r.body.messages)) for r in requests] == [("unknown", "unknown", 2), ("unknown", "unknown", 4)]
    assert [r.path for r in requests] == ["history[3]", "history[5]"]  # the assistant message each call answered with
    assert any("Last5Observations" in n for n in summary.notes)


def test_a_folder_of_one_pretty_printed_trajectory_is_audited(tmp_path: Path) -> None:
    # Walked: a one-object .json file a format detects is a log, not a sidecar; .traj is walked.
    fixture = Path(__file__).parent / "fixtures" / "swe-agent.json"
    (tmp_path / "run.traj.json").write_text(fixture.read_text())
    (tmp_path / "astropy__astropy-12907.traj").write_text(fixture.read_text() + "\n")  # not the same bytes: not a copy
    assert [(p.name, why) for p, why in find_log_files([tmp_path])] == [("astropy__astropy-12907.traj", None), ("run.traj.json", None)]
    result = run_audit([tmp_path / "run.traj.json"])
    assert [(row.reported_cache_read, row.cause) for row in result.rows] == [(0, "cold-start"), (3000, None)]


def test_audit_totals_equal_the_trajectorys_own_sums() -> None:
    fixture = Path(__file__).parent / "fixtures" / "swe-agent.json"
    value = json.loads(fixture.read_text())
    usages = [m["extra"]["response"]["usage"] for m in value["messages"] if "response" in m.get("extra", {})]
    requests, _ = read(fixture)
    assert sum(r.usage.prompt for r in requests) == sum(u["prompt_tokens"] for u in usages) == 3012 + 3110
    assert sum(r.usage.cache_read for r in requests) == sum(u["cache_read_input_tokens"] for u in usages) == 3000
    assert sum(r.usage.cache_write for r in requests) == sum(u["cache_creation_input_tokens"] for u in usages) == 3105
    assert sum(r.usage.output for r in requests) == sum(u["completion_tokens"] for u in usages) == 65
    assert len(requests) == value["info"]["model_stats"]["api_calls"]


@pytest.mark.parametrize("value", [
    {"messages": [], "trajectory_format": "mini-swe-agent-1.1"},
    {"trajectory": [], "history": [], "info": {}},
    {"messages": [SYSTEM, {"role": "assistant", "content": "a", "extra": {"response": {"usage": {"prompt_tokens": -1}}}}], "info": {"mini_version": "1.14.0"}},
    {"messages": [SYSTEM, {"role": "assistant", "content": "a", "extra": {"response": {"usage": anthropic_old(0, 10, 0, 1) | {"prompt_tokens": 3}}}}], "info": {"mini_version": "2.0.0"}},
    {"trajectory": [{"query": [SYSTEM]}], "history": [], "replay_config": "{not json"},
])
def test_bad_trajectories_are_one_line_errors(tmp_path: Path, value: dict) -> None:
    with pytest.raises(UserError) as caught:
        read(write(tmp_path / "bad.json", value))
    assert "\n" not in str(caught.value) and str(tmp_path / "bad.json") in str(caught.value)


def test_a_response_without_usage_is_skipped_and_listed(tmp_path: Path) -> None:
    messages = [SYSTEM, TASK, {"role": "assistant", "content": "a", "extra": {"response": {"id": "x", "model": "gpt-4o"}}},
                {"role": "user", "content": "o"}, {"role": "assistant", "content": "b", "extra": {"response": response("y", "gpt-4o", openai_usage(2000, 1024, 3))}}]
    requests, summary = read(write(tmp_path / "t.json", mini_v1(messages)))
    assert [r.request_id for r in requests] == ["y"] and summary.skipped == ((1, "call 1: response without usage"),)


def test_swe_agent_a_final_step_missing_from_the_history_sent_all_of_it(tmp_path: Path) -> None:
    # 1.0 previews: the submit step's reply never reached the history; the run counted it.
    history = [SYSTEM | {"agent": "main"}, TASK | {"agent": "main"}, {"role": "assistant", "content": "ls", "agent": "main", "tool_calls": call(1)},
               {"role": "tool", "content": "a.py", "agent": "main", "tool_call_ids": ["toolu_1"]}]
    steps = [{"action": "ls", "observation": "a.py", "response": "", "thought": "", "execution_time": 0.1, "state": {}}] * 2
    replay = {"agent": {"model": {"name": "gpt-4o"}}}
    requests, _ = read(write(tmp_path / "x.traj", swe_traj(steps, history, replay)))
    assert [(r.model, len(r.body.messages)) for r in requests] == [("gpt-4o", 1), ("gpt-4o", 3)]
    assert [r.path for r in requests] == ["history[2]", "trajectory[1]"]  # the last: the step the history lacks


def test_writes_without_a_configured_marker_assume_the_end_marker(tmp_path: Path) -> None:
    claude = "claude-sonnet-4-5-20250929"
    messages = [SYSTEM, TASK, {"role": "assistant", "content": "a", "extra": {"response": response("m1", claude, anthropic_old(4, 0, 5000, 30))}}]
    requests, summary = read(write(tmp_path / "t.traj.json", mini_v2(messages, cache=None)))
    assert requests[0].body.cache_breakpoints == (CacheBreakpoint("messages", 0, 0),)
    assert any("is assumed" in n for n in summary.notes)


def test_a_run_that_ended_before_its_first_call_is_listed_not_refused(tmp_path: Path) -> None:
    # A batch of runs keeps one file a run: the one whose only call timed out (mini-swe-agent 2.x
    # writes the exit message, no assistant message) stays a valid file of the folder.
    timed_out = mini_v2([SYSTEM, TASK, {"role": "exit", "content": "litellm.Timeout: Connection timed out after 600.0 seconds.",
                                        "extra": {"exit_status": "Timeout", "submission": ""}}], model="deepseek/deepseek-chat")
    timed_out["info"]["exit_status"] = "Timeout"
    (tmp_path / "runs" / "a").mkdir(parents=True)
    requests, summary = read(write(tmp_path / "runs" / "a" / "a.traj.json", timed_out))
    assert requests == [] and summary.skipped == ((1, "the run ended (Timeout) before any model call"),)
    usage = openai_usage(3000, 2816, 50) | {"prompt_cache_hit_tokens": 2816, "prompt_cache_miss_tokens": 184}
    answered = mini_v2([SYSTEM, TASK, {"role": "assistant", "content": "a", "extra": {"response": response("d1", "deepseek-chat", usage)}}],
                       model="deepseek/deepseek-chat")
    (tmp_path / "runs" / "b").mkdir()
    write(tmp_path / "runs" / "b" / "b.traj.json", answered)
    result = run_audit([tmp_path / "runs"])
    assert [(Path(f.file).name, f.requests, f.skip_reasons) for f in result.files] == [
        ("a.traj.json", 0, (("the run ended (Timeout) before any model call", 1),)), ("b.traj.json", 1, ())]
    assert (result.totals.requests, result.totals.cache_read) == (1, 2816)
    # With no exit status either, an empty run is still not a trajectory to audit.
    del timed_out["info"]["exit_status"]
    timed_out["messages"] = timed_out["messages"][:2]
    with pytest.raises(UserError, match="no model calls"):
        read(write(tmp_path / "c.traj.json", timed_out))


def deepseek_run(reasoning: str | None = None) -> dict:
    """Three deepseek-chat calls through LiteLLM, each next prompt sending the answer back: 3,000
    tokens then 350 more a call (answer 220, tool output 130); each read reaches past the
    previous prompt into its answer, to the 64-token unit (3,200 of 3,220; 3,520 of 3,570)."""
    text = "I will look at the repository layout first, then read the module named in the issue. " * 12
    messages = [SYSTEM, TASK]
    for k, (prompt, hit) in enumerate([(3000, 0), (3350, 3200), (3700, 3520)], 1):
        answer = {"role": "assistant", "content": text, "tool_calls": call(k)} | ({"reasoning_content": reasoning} if reasoning else {})
        reply = response(f"d{k}", "deepseek-chat", openai_usage(prompt, hit, 220) | {"prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": prompt - hit})
        reply["choices"][0] |= {"finish_reason": "tool_calls", "message": answer}
        messages += [answer | {"extra": {"response": reply, "timestamp": 1776000000.0 + 10 * k}},
                     {"role": "tool", "tool_call_id": f"toolu_{k}", "content": "a.py\nb.py\n" * 40, "extra": {"timestamp": 1776000001.0 + 10 * k}}]
    return mini_v2(messages, model="deepseek/deepseek-chat", cache=None)


def test_a_deepseek_run_reads_into_the_answer_it_sent_back(tmp_path: Path) -> None:
    # DeepSeek's cache keeps each answer after its prompt: the trajectory keeps the answer
    # (extra.response), which is what the next call sends back, so the replay reads into it.
    result = run_audit([write(tmp_path / "t.traj.json", deepseek_run())])
    assert [(r.reported_cache_read, r.predicted_cache_read) for r in result.rows] == [(0, 0), (3200, 3200), (3520, 3520)]
    requests, _ = read(tmp_path / "t.traj.json")
    assert [len(r.reply) for r in requests] == [1, 1, 1] and requests[0].reply[0].role == "assistant"
    # A reasoned answer is not kept as a reply (measured: the next read mostly stops at the prompt's end).
    requests, _ = read(write(tmp_path / "r.traj.json", deepseek_run(reasoning="Let me think about the layout.")))
    assert [r.reply for r in requests] == [(), (), ()]


def test_mini_2_a_format_error_response_kept_only_as_its_repr_is_a_listed_call(tmp_path: Path) -> None:
    # mini-swe-agent 2.x from 3df30a4b (#821, June 2026): when a reply that failed to parse cannot
    # be dumped, the format-error message keeps repr(response), a string. The call happened (it is
    # in model_stats.api_calls and its cost counted) but its usage is gone; main dropped it without
    # a word.
    gpt = "gpt-4o-2024-08-06"
    messages = [SYSTEM, TASK,
                {"role": "assistant", "content": None, "tool_calls": call(1), "extra": {"response": response("r1", gpt, openai_usage(2000, 0, 30)), "timestamp": 1761994801.0}},
                {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py", "extra": {"timestamp": 1761994802.0}},
                {"role": "user", "content": "No tool calls found.", "extra": {"interrupt_type": "FormatError", "cost": 0.001,
                                                                              "response": "ModelResponse(id='r2', choices=[...])"}},
                {"role": "assistant", "content": None, "tool_calls": call(3), "extra": {"response": response("r3", gpt, openai_usage(2200, 1920, 7)), "timestamp": 1761994809.0}}]
    requests, summary = read(write(tmp_path / "t.traj.json", mini_v2(messages, model=gpt)))
    assert [r.request_id for r in requests] == ["r1", "r3"]
    assert summary.skipped == ((1, "call 2: its response is kept only as text (a format error whose response could not be dumped): no usage"),)


def test_mini_2_4_a_format_error_keeping_its_response_is_a_call_and_no_call_is_said_lost(tmp_path: Path) -> None:
    # mini-swe-agent 2.3.1 on (3df30a4b, #821) keeps the response that failed to parse on the
    # FormatError message, and 2.4.6 (40fa3652, #915) its cost beside it: the call is read (its
    # request every message before the error) and the notes do not say it was dropped (main said
    # "1 call(s) answered by a FormatError message ... not counted" of a call it had counted).
    gpt = "gpt-4o-2024-08-06"
    messages = [SYSTEM, TASK,
                {"role": "assistant", "content": None, "tool_calls": call(1),
                 "extra": {"response": response("r1", gpt, openai_usage(2000, 0, 30)), "cost": 0.01, "timestamp": 1761994801.0}},
                {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py", "extra": {"timestamp": 1761994802.0}},
                {"role": "user", "content": "No tool calls found.",
                 "extra": {"interrupt_type": "FormatError", "cost": 0.002, "response": response("r2", gpt, openai_usage(2100, 1920, 9))}},
                {"role": "assistant", "content": None, "tool_calls": call(3),
                 "extra": {"response": response("r3", gpt, openai_usage(2200, 1920, 7)), "cost": 0.01, "timestamp": 1761994809.0}}]
    value = mini_v2(messages, model=gpt)
    value["info"]["mini_version"] = "2.4.6"
    requests, summary = read(write(tmp_path / "t.traj.json", value))
    assert [r.request_id for r in requests] == ["r1", "r2", "r3"]
    assert [len(r.body.messages) for r in requests] == [1, 3, 4]  # the system prompt apart; r2 sent all before its error
    assert requests[1].usage == Usage(cache_read=1920, uncached=180, output=9)
    assert not any("FormatError" in n for n in summary.notes)
    assert any("cost fields sum to $0.0220" in n for n in summary.notes)


def test_swe_agent_1_1_sends_the_thinking_blocks_it_kept(tmp_path: Path) -> None:
    # SWE-agent 1.1 (d2cf5529, August 2025) keeps Claude's thinking_blocks on an assistant history
    # item with tool calls, and its model sends them back (LiteLLM turns them into thinking blocks
    # ahead of the text): they are part of the prefix the next call sends. main dropped them, so
    # the body (and the tokens predicted for it) left the thinking out.
    thinking = [{"type": "thinking", "thinking": "The file list first. " * 30, "signature": "c2lnbmF0dXJl"}]
    assistant = {"role": "assistant", "content": "look", "agent": "main", "message_type": "action", "tool_calls": call(1),
                 "thinking_blocks": thinking}
    plain = {"role": "assistant", "content": "again", "agent": "main", "message_type": "action", "tool_calls": call(2)}
    tool = {"role": "tool", "content": "a.py", "tool_call_ids": ["toolu_1"], "agent": "main", "message_type": "observation"}
    tool2 = {"role": "tool", "content": "b.py", "tool_call_ids": ["toolu_2"], "agent": "main", "message_type": "observation"}
    steps = [{"action": "ls", "observation": "a.py", "response": "look", "thought": "look", "execution_time": 0.1, "state": {}, "extra_info": {},
              "query": [SYSTEM, TASK, assistant, tool, plain, tool2]}]
    replay = {"agent": {"model": {"name": "claude-sonnet-4-5-20250929"}}}
    requests, _ = read(write(tmp_path / "x.traj", swe_traj(steps, [SYSTEM], replay)))
    sent = requests[0].body.messages
    assert [b.text for b in sent[1].reasoning] == ["The file list first. " * 30]
    assert sent[3].reasoning == ()


def test_mini_2_2_format_errors_dropped_their_calls_and_the_notes_say_so(tmp_path: Path) -> None:
    """mini-swe-agent 2.2 keeps no response without an action: only the user message answering it
    (``extra.interrupt_type: FormatError``), so ``model_stats.api_calls`` counts calls the
    trajectory does not hold (a public run: 1,954 API calls, 897 responses, 1,057 FormatErrors)."""
    error = {"role": "user", "content": "No tool calls found in the response. Every response MUST include at least one tool call.",
             "extra": {"interrupt_type": "FormatError"}}
    messages = [SYSTEM, TASK,
                {"role": "assistant", "content": None, "extra": {"response": response("c1", "gpt-5-mini-2025-08-07", openai_usage(2180, 0, 25), 1773065152)}},
                {"role": "tool", "content": "a.py", "extra": {"returncode": 0}},
                error, error,
                {"role": "assistant", "content": None, "extra": {"response": response("c2", "gpt-5-mini-2025-08-07", openai_usage(2400, 2176, 30), 1773065160)}}]
    value = mini_v1(messages, "2.2.4", "openai/gpt-5-mini") | {"trajectory_format": "mini-swe-agent-1.1"}
    value["info"]["model_stats"]["api_calls"] = 4
    requests, summary = read(write(tmp_path / "t.traj.json", value))
    assert [r.request_id for r in requests] == ["c1", "c2"]
    assert any(n.startswith("2 call(s) answered by a FormatError message") for n in summary.notes)


def test_mini_each_upstream_openrouter_names_is_a_cache_of_its_own(tmp_path: Path) -> None:
    """LiteLLM keeps OpenRouter's response ``provider`` (the upstream that served the call) in
    the response mini-swe-agent logs: a call Amazon Bedrock served after one Anthropic served
    reads nothing Anthropic cached (before: predicted to read the first call's prompt)."""
    claude = "anthropic/claude-sonnet-4.5"
    served = [response("o1", claude, anthropic_old(4, 0, 5000, 30)) | {"provider": "Anthropic"},
              response("o2", claude, anthropic_old(3, 0, 5120, 9)) | {"provider": "Amazon Bedrock"}]
    messages = [{"role": "system", "content": "You are a helpful assistant that can interact with a computer. " * 300}, TASK,
                {"role": "assistant", "content": None, "tool_calls": call(1), "extra": {"response": served[0], "timestamp": 1761994801.0}},
                {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py", "extra": {"timestamp": 1761994802.0}},
                {"role": "assistant", "content": None, "tool_calls": call(2), "extra": {"response": served[1], "timestamp": 1761994809.0}}]
    path = write(tmp_path / "t.traj.json", mini_v2(messages, model="openrouter/anthropic/claude-sonnet-4.5"))
    requests, _ = read(path)
    assert [r.upstream for r in requests] == ["Anthropic", "Amazon Bedrock"]
    row = run_audit([path]).rows[1]
    assert (row.predicted_cache_read, row.reported_cache_read, row.cause) == (0, 0, "provider-best-effort")


def test_mini_2_a_clock_stepped_back_does_not_send_a_call_before_the_answer_it_carries(tmp_path: Path) -> None:
    # mini-swe-agent stamps a message when it stores it (time.time() once the call returned, or
    # once the tool ran). astropy__astropy-14365 on DeepSeek: the answer at 1775803220.33, the
    # tool result it asked for at 1775803219.64; the next call carries that result, so it was sent
    # after the answer. Read at the tool result's time it was "concurrent-write".
    value = deepseek_run()
    messages = value["messages"]
    answer, result = messages[4], messages[5]  # the second call's answer and its tool result
    assert answer["role"] == "assistant" and result["role"] == "tool"
    answer["extra"]["timestamp"] = 1776000020.33
    result["extra"]["timestamp"] = 1776000019.64
    messages[6]["extra"]["response"]["usage"] |= {"prompt_tokens_details": {"cached_tokens": 0}, "prompt_cache_hit_tokens": 0,
                                                 "prompt_cache_miss_tokens": 3700}
    path = write(tmp_path / "t.traj.json", value)
    requests, summary = read(path)
    assert requests[2].sent_ms == 1776000020330 >= requests[1].ready_ms  # not the tool result's 1776000019640
    assert any("1 message(s) stamped earlier than a message before them" in n for n in summary.notes)
    row = run_audit([path]).rows[2]
    assert row.lost_tokens and row.cause != "concurrent-write"
