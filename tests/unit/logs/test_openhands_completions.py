"""OpenHands completion logs (workloads/logs/formats/openhands_completions.py): one call per file,
a folder of them one lane in time order, totals checked field by field against sums worked out
by hand.

On main a folder of these is "no model call with usage" (each file detected as nothing audit
reads); every test here fails there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.reports.cli import run
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format
from prefixbench.workloads.logs.sources import find_log_files

SYSTEM = {"role": "system", "content": [{"type": "text", "text": "You are a careful agent. " * 40, "cache_control": {"type": "ephemeral"}}]}
TOOLS = [{"type": "function", "function": {"name": "terminal", "description": "Run it.", "parameters": {"type": "object", "properties": {}}}}]
MODEL = "litellm_proxy/claude-sonnet-4-5-20250929"


def _usage(prompt: int, read: int, written: int, out: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": out, "prompt_tokens_details": {"cached_tokens": read, "cache_creation_tokens": written},
            "cache_read_input_tokens": read, "cache_creation_input_tokens": written}


def _sdk(messages: list[dict], usage: dict, t: float, rid: str, model: str = MODEL) -> dict:
    """A software-agent-sdk 1.x completion log."""
    return {"context_window": 200000, "messages": messages, "tools": TOOLS, "kwargs": {"temperature": 0.0},
            "response": {"id": rid, "model": model, "object": "chat.completion", "usage": usage,
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]},
            "cost": 0.01, "timestamp": t, "latency_sec": 1.5}


def _turns(n: int) -> list[dict]:
    """The system message, the task, then ``n`` assistant/tool exchanges."""
    out = [SYSTEM, {"role": "user", "content": "fix the bug"}]
    for k in range(n):
        out.append({"role": "assistant", "content": f"step {k}", "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]})
        out.append({"role": "tool", "tool_call_id": f"c{k}", "content": f"output {k}"})
    return out


def _write(folder: Path, name: str, value: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(value))
    return path


def _folder(tmp_path: Path) -> Path:
    """Three calls of one conversation, their names' times out of the order the walk lists them,
    one failed call, and a call of a second model (the condenser's)."""
    logs = tmp_path / "completions"
    prefix = "litellm_proxy__claude-sonnet-4-5-20250929"
    _write(logs, f"{prefix}-1788000010.000-a1b2.json", _sdk(_turns(1), _usage(3000, 2600, 380, 40), 1788000010.0, "r2"))
    _write(logs, f"{prefix}-1788000002.500-0f0f.json", _sdk(_turns(0), _usage(2620, 0, 2600, 30), 1788000002.5, "r1"))
    _write(logs, f"{prefix}-1788000020.250-ffff.json", _sdk(_turns(2), _usage(3100, 2980, 100, 25), 1788000020.25, "r3"))
    _write(logs, f"{prefix}-1788000015.000-abcd-error.json",
           {"context_window": 200000, "messages": _turns(1), "tools": TOOLS, "kwargs": {}, "cost": 0.0, "timestamp": 1788000015.0,
            "latency_sec": 0.5, "error": {"type": "RateLimitError", "message": "slow down"}})
    _write(logs, "litellm_proxy__gpt-5-mini-1788000030.000-1234.json",
           _sdk([{"role": "user", "content": "summarize"}], {"prompt_tokens": 900, "completion_tokens": 60,
                                                            "prompt_tokens_details": {"cached_tokens": 512}}, 1788000030.0, "r4",
                model="litellm_proxy/gpt-5-mini"))
    return logs


def test_a_folder_is_one_conversation_read_in_time_order(tmp_path: Path) -> None:
    logs = _folder(tmp_path)
    walked = find_log_files([logs])
    lead = logs / "litellm_proxy__claude-sonnet-4-5-20250929-1788000002.500-0f0f.json"
    assert [p for p, reason in walked if reason is None] == [lead]  # every other file is read with it
    result = run_audit([logs])
    t = result.totals
    # By hand: Claude (additive once read from LiteLLM's prompt_tokens, which holds reads and
    # writes): uncached 2620-0-2600 + 3000-2600-380 + 3100-2980-100 = 20+20+20; GPT-5 mini
    # (subset): uncached 900-512 = 388.
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (4, 448, 2600 + 2980 + 512, 2600 + 380 + 100, 40 + 30 + 25 + 60)
    requests, summaries = load_trace([logs])
    assert [r.request_id for r in requests] == ["r1", "r2", "r3", "r4"]
    assert [(r.lane, r.lane_kind) for r in requests] == [("main", "main")] * 3 + [("litellm_proxy/gpt-5-mini", "side")]
    assert [r.provider for r in requests] == ["anthropic"] * 3 + ["openai"]
    first = requests[0]
    assert (first.sent_ms, first.done_ms) == (1788000001000, 1788000002500)  # timestamp - latency_sec
    assert all(r.body is not None for r in requests) and requests[0].body.tools[0].name == "terminal"
    assert [r.path for r in requests] == ["", "litellm_proxy__claude-sonnet-4-5-20250929-1788000010.000-a1b2.json",
                                          "litellm_proxy__claude-sonnet-4-5-20250929-1788000020.250-ffff.json",
                                          "litellm_proxy__gpt-5-mini-1788000030.000-1234.json"]
    (summary,) = [s for s in summaries if s.requests]
    assert [reason for _, reason in summary.skipped] == [
        "litellm_proxy__claude-sonnet-4-5-20250929-1788000015.000-abcd-error.json: failed call (RateLimitError), no response"]
    assert "$0.0400" in " ".join(summary.notes)  # four cost fields of 0.01, the failed call's 0


def test_a_first_named_file_that_holds_no_call_does_not_take_the_folder_with_it(tmp_path: Path) -> None:
    logs = _folder(tmp_path)
    (logs / "litellm_proxy__claude-sonnet-4-5-20250929-1788000001.000-0000.json").write_text("{}")
    walked = dict(find_log_files([logs]))
    assert walked[logs / "litellm_proxy__claude-sonnet-4-5-20250929-1788000001.000-0000.json"] == "not-a-log"
    assert walked[logs / "litellm_proxy__claude-sonnet-4-5-20250929-1788000002.500-0f0f.json"] is None  # reads the folder
    requests, summaries = load_trace([logs])
    assert len(requests) == 4
    assert "litellm_proxy__claude-sonnet-4-5-20250929-1788000001.000-0000.json: named as a completion log, holds none" in [
        reason for s in summaries for _, reason in s.skipped]


def test_another_file_of_the_folder_named_alone_is_read_with_the_first(tmp_path: Path) -> None:
    logs = _folder(tmp_path)
    other = logs / "litellm_proxy__claude-sonnet-4-5-20250929-1788000010.000-a1b2.json"
    requests, summaries = load_trace([other])
    assert requests == [] and "read with" in summaries[0].notes[0] and "1788000002.500-0f0f.json" in summaries[0].notes[0]
    # Named with the first file, the folder is counted once.
    requests, _ = load_trace([logs / "litellm_proxy__claude-sonnet-4-5-20250929-1788000002.500-0f0f.json", other])
    assert len(requests) == 4


def test_openhands_0x_logs_and_mocked_function_calling(tmp_path: Path) -> None:
    """0.x: messages, response, args, kwargs (the tools in them), timestamp, cost, no latency;
    a mocked call keeps fncall_messages beside what it sent, and sends no tools."""
    logs = tmp_path / "v0"
    native = {"messages": _turns(0), "response": {"id": "a", "model": "deepseek/deepseek-chat", "usage":
              {"prompt_tokens": 4000, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 3840}}},
              "args": [], "kwargs": {"tools": TOOLS}, "timestamp": 1750000000.25, "cost": 0.001}
    mocked = {**native, "response": {**native["response"], "id": "b", "usage":
              {"prompt_tokens": 4200, "completion_tokens": 12, "prompt_tokens_details": {"cached_tokens": 3968}}},
              "fncall_messages": _turns(0), "timestamp": 1750000009.0}
    _write(logs, "deepseek__deepseek-chat-1750000000.25.json", native)
    _write(logs, "deepseek__deepseek-chat-1750000009.0.json", mocked)
    assert detect_format(logs / "deepseek__deepseek-chat-1750000000.25.json") is FORMATS["openhands-completions"]
    requests, _ = load_trace([logs])
    assert [(r.usage.cache_read, r.usage.uncached, r.usage.output) for r in requests] == [(3840, 160, 10), (3968, 232, 12)]
    assert [r.provider for r in requests] == ["deepseek", "deepseek"]
    assert [r.sent_ms for r in requests] == [None, None] and requests[1].done_ms == 1750000009000
    assert len(requests[0].body.tools) == 1 and requests[1].body.tools == ()


def test_a_bad_count_is_one_line_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "m-1788000000.000.json", _sdk(_turns(0), _usage(-5, 0, 0, 1), 1788000000.0, "x"))
    assert run(["audit", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and "prompt_tokens" in err[0]


def test_a_cache_mark_on_an_empty_system_message_marks_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Found by fuzzing: a system message of empty text with cache_control became a breakpoint on
    # a system prompt the request does not have, and the replay raised ValueError (a traceback).
    empty = {"role": "system", "content": [{"type": "text", "text": "", "cache_control": {"type": "ephemeral"}}]}
    path = _write(tmp_path, "m-1788000000.000.json", _sdk([empty, {"role": "user", "content": "fix the bug"}],
                                                          _usage(2620, 0, 2600, 30), 1788000000.0, "r1"))
    assert run(["audit", str(path), "--quiet", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["requests"] == 1


def test_a_kimi_response_with_cached_tokens_at_the_top_of_its_usage(tmp_path: Path) -> None:
    # Kimi's chat completions put cached_tokens at the top of the usage, and LiteLLM passes it on
    # (the software-agent-sdk's telemetry reads it there: "Kimi-K2-thinking populate
    # usage.cached_tokens field"). main read the call as cache not reported.
    logs = tmp_path / "completions"
    model = "moonshot/kimi-k2-thinking"
    first = {"prompt_tokens": 2200, "completion_tokens": 40, "total_tokens": 2240, "cached_tokens": 0, "prompt_tokens_details": None}
    second = {"prompt_tokens": 2500, "completion_tokens": 25, "total_tokens": 2525, "cached_tokens": 2048}
    _write(logs, "moonshot__kimi-k2-thinking-1788000001.000-aaaa.json", _sdk(_turns(0), first, 1788000001.0, "k1", model=model))
    _write(logs, "moonshot__kimi-k2-thinking-1788000009.000-bbbb.json", _sdk(_turns(1), second, 1788000009.0, "k2", model=model))
    requests, _ = load_trace([logs])
    assert [(r.request_id, r.usage.cache_read, r.usage.uncached, r.usage.cache_reported) for r in requests] == [
        ("k1", 0, 2200, True), ("k2", 2048, 452, True)]


def test_each_upstream_openrouter_names_is_a_cache_of_its_own(tmp_path: Path) -> None:
    """OpenRouter names the upstream that served a call (the response's ``provider``), which
    LiteLLM keeps in the response OpenHands logs: a call Amazon Bedrock served after one Anthropic
    served reads nothing of Anthropic's entries (before: the body cache was the provider's one,
    and the second call was predicted to read the first's system prompt, 5,004 tokens)."""
    logs = tmp_path / "completions"
    model = "openrouter/anthropic/claude-sonnet-4.5"
    system = {"role": "system", "content": [{"type": "text", "text": "You are a careful agent. " * 800, "cache_control": {"type": "ephemeral"}}]}
    messages = [system, *_turns(1)[1:]]
    first = _sdk(messages[:2], _usage(5020, 0, 5000, 30), 1788000002.5, "r1", model=model)
    second = _sdk(messages, _usage(5100, 0, 5080, 40), 1788000010.0, "r2", model=model)
    first["response"]["provider"], second["response"]["provider"] = "Anthropic", " Amazon Bedrock "
    _write(logs, "openrouter__anthropic__claude-sonnet-4.5-1788000002.500-0f0f.json", first)
    _write(logs, "openrouter__anthropic__claude-sonnet-4.5-1788000010.000-a1b2.json", second)
    assert [r.upstream for r in load_trace([logs])[0]] == ["Anthropic", "Amazon Bedrock"]
    row = run_audit([logs]).rows[1]
    assert (row.predicted_cache_read, row.reported_cache_read, row.read_within) == (0, 0, True)
    assert row.cause == "provider-best-effort"
