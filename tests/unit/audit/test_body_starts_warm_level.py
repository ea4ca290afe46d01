"""A run's first call on DeepSeek reads the head the account kept warm, though the logged bodies
share nothing (the agent's tool, rendered before the messages, is not in the trajectory): where
the first calls of one model agree on a read more often than on any other, 0 included, each is
predicted to read at least it (``deepseek``'s ``body_starts_read_warm_level``, measured on
mini-swe-agent's DeepSeek runs). The test fails on the code before the rule, which predicted 0
at every first call."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit


def _run(task: str, calls: list[tuple[int, int]], model: str, start: float) -> dict:
    """A mini-swe-agent 2.x trajectory: per ``(prompt, read)`` one call through LiteLLM, each next
    prompt sending back the answer and a tool output."""
    messages: list[dict] = [{"role": "system", "content": "You are a helpful assistant."},
                            {"role": "user", "content": f"Solve this issue: {task} " * 40}]
    for k, (prompt, hit) in enumerate(calls, 1):
        usage = {"prompt_tokens": prompt, "completion_tokens": 60, "total_tokens": prompt + 60,
                 "prompt_tokens_details": {"cached_tokens": hit}}
        if model.startswith("deepseek"):
            usage |= {"prompt_cache_hit_tokens": hit, "prompt_cache_miss_tokens": prompt - hit}
        answer = {"role": "assistant", "content": f"step {k} of {task}",
                  "tool_calls": [{"id": f"c{k}", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]}
        reply = {"id": f"r{k}", "created": int(start) + 10 * k, "model": model.split("/")[-1], "object": "chat.completion",
                 "choices": [{"index": 0, "finish_reason": "tool_calls", "message": answer}], "usage": usage}
        messages += [answer | {"extra": {"response": reply, "timestamp": start + 10 * k}},
                     {"role": "tool", "tool_call_id": f"c{k}", "content": f"{task}.py\n" * 30, "extra": {"timestamp": start + 10 * k + 1}}]
    return {"info": {"model_stats": {"instance_cost": 0.01, "api_calls": len(calls)}, "mini_version": "2.2.7", "exit_status": "Submitted",
                     "submission": "", "config": {"model": {"model_name": model, "model_kwargs": {}, "set_cache_control": None}}},
            "messages": messages, "trajectory_format": "mini-swe-agent-1.1"}


def _folder(tmp_path: Path, name: str, first_reads: list[int], model: str = "deepseek/deepseek-chat") -> Path:
    folder = tmp_path / name
    for n, read in enumerate(first_reads):
        task = f"task{n}-" + "abcdefghij"[n] * 3
        path = folder / task / f"{task}.traj.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(_run(task, [(2000 + 50 * n, read)], model, 1_776_000_000.0 + 3_600 * n)))
    return folder


def _first_reads(folder: Path) -> list[tuple[int | None, int]]:
    return sorted((r.reported_cache_read, r.predicted_cache_read) for r in run_audit([folder]).rows if r.index == 0)


def test_first_calls_that_agree_on_a_read_are_predicted_to_read_it(tmp_path: Path) -> None:
    # Four runs' first calls: three read the 320-token head, one read nothing.
    assert _first_reads(_folder(tmp_path, "a", [320, 320, 0, 320])) == [(0, 320), (320, 320), (320, 320), (320, 320)]


def test_no_level_where_as_many_first_calls_read_nothing(tmp_path: Path) -> None:
    # Two read 320, two read 0: no level more read than 0, so every first call is predicted cold.
    assert _first_reads(_folder(tmp_path, "b", [320, 0, 320, 0])) == [(0, 0), (0, 0), (320, 0), (320, 0)]


def test_a_provider_without_the_rule_keeps_its_cold_first_calls(tmp_path: Path) -> None:
    # OpenAI's rules do not say it (unmeasured on body logs): its first calls keep the body replay's 0.
    folder = _folder(tmp_path, "c", [1024, 1024, 1024], model="openai/gpt-4o-2024-08-06")
    assert _first_reads(folder) == [(1024, 0)] * 3
