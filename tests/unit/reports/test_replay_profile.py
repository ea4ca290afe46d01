"""replay --profile: would a strict provider refuse any request of a captured session?

Before, replay had no --profile: a request a DeepSeek endpoint refuses with HTTP 400 was replayed
as accepted and counted cached or uncached. Now it is reported rejected, never as uncached, in
the table and the JSON, and the verdicts are check --trace --profile's, request for request.
"""

from __future__ import annotations

import json

import pytest

from prefixbench.reports.entry import main
from prefixbench.workloads.specs.trace import read_trace, replay_trace

TOOLS = [{"type": "function", "function": {"name": "read", "description": "read a file", "parameters": {"type": "object", "properties": {}}}}]
BASE = {"model": "deepseek-v4-flash", "reasoning_effort": "high", "tools": TOOLS}
USER = {"role": "user", "content": "fix the bug"}


def _turn(reasoning: str, n: int) -> list[dict]:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    return [{"role": "assistant", "content": "", "reasoning_content": reasoning, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{n}", "content": "file text"}]


def _log(tmp_path, *bodies: dict):
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({**BASE, **b}) + "\n" for b in bodies))
    return path


@pytest.fixture
def edited(tmp_path):
    """Request #3 sends turn 2's reasoning edited. The reply to #1 is read from #3, the request
    after the compaction call #2 that holds it edited too: so #2 is judged knowing it."""
    history = [USER, *_turn("I should read it", 1)]
    return _log(
        tmp_path,
        {"messages": [USER]},
        {"messages": history},
        {"messages": [*history, *_turn("now the other, edited", 2), {"role": "user", "content": "summarize"}], "purpose": "compaction"},
        {"messages": [*history, *_turn("now the other", 2)]},
        {"messages": [*history, *_turn("now the other, edited", 2), {"role": "user", "content": "go on"}]},
    )


def _replay_json(capsys, path, *extra: str) -> list[dict]:
    capsys.readouterr()
    assert main(["replay", str(path), "--format", "json", "--quiet", *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("profile, refused", [("lenient", []), ("deepseek-relay", []), ("deepseek-official", [2, 4])])
def test_a_strict_profile_rejects_what_check_trace_rejects(edited, capsys, profile, refused):
    rows = _replay_json(capsys, edited, "--profile", profile)
    assert [r["index"] for r in rows if r["status"] == 400] == refused
    expected = [o.index for o in replay_trace(read_trace(edited), profile) if o.is_rejected]
    assert expected == refused  # the same verdicts as check --trace --profile
    for row in rows:
        if row["status"] == 400:  # never reached the cache: neither cached nor uncached
            assert row["cached_tokens"] is None and row["uncached_tokens"] is None and row["divergence"] is None
            assert row["error"].startswith("The reasoning_content in the thinking mode must be passed back to the API.")
            assert "differs from what the model produced" in row["error"]
        else:
            assert row["error"] is None and row["cached_tokens"] + row["uncached_tokens"] == row["prompt_tokens"]


def test_the_table_reports_rejected_requests_and_leaves_them_out_of_the_totals(edited, capsys):
    capsys.readouterr()
    assert main(["replay", str(edited), "--profile", "deepseek-official", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line for line in lines if line.strip() and line.split()[0].isdigit()}
    for index in ("2", "4"):
        cells = rows[index].split()
        assert cells[3:6] == ["-", "-", "400"] and "rejected (HTTP 400): The reasoning_content" in rows[index]
    accepted = _replay_json(capsys, edited, "--profile", "deepseek-official")
    prompt = sum(r["prompt_tokens"] for r in accepted if r["status"] == 200)
    total = next(line for line in lines if line.startswith("accepted"))
    assert total.split()[1] == f"{prompt:,}"
    assert lines[-1].startswith("deepseek-official rejected 2 of 5 requests (HTTP 400): they never reached the cache and are in no total; the first, #2:")
    capsys.readouterr()
    assert main(["replay", str(edited), "--profile", "deepseek-relay", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "deepseek-relay accepted every request (5)" and lines[-2].startswith("all ")


def test_a_recorded_run_is_refused_as_the_run_was(tmp_path, capsys):
    log = tmp_path / "legacy.jsonl"
    assert main(["record", str(log), "--preset", "legacy", "--window", "32k", "--quiet"]) == 0
    for profile in ("deepseek-official", "deepseek-relay"):
        rows = _replay_json(capsys, log, "--profile", profile)
        assert [r["index"] for r in rows if r["status"] == 400] == [o.index for o in replay_trace(read_trace(log), profile) if o.is_rejected]
        assert sum(r["status"] == 400 for r in rows) == 63


@pytest.mark.parametrize("argv, said", [
    (["--profile", "strict"], "unknown profile 'strict' (known: deepseek-official, deepseek-relay, lenient)"),
    (["--profile", "deepseek-relay", "--input", "anthropic-capture"],
     "--profile deepseek-relay: a DeepSeek chat-completions profile, for chat-completions logs; an anthropic capture holds the "
     "replies the Anthropic API gave, so it does not apply"),
])
def test_a_profile_replay_cannot_apply_is_one_line(edited, capsys, argv, said):
    assert main(["replay", str(edited), *argv]) == 2
    assert capsys.readouterr().err == f"prefixbench: error: {said}\n"


def test_lenient_replay_keeps_an_unpaired_request_but_says_check_trace_refuses_it(tmp_path, capsys):
    # Before, replay showed a request with an unpaired tool call as cached, silently, while
    # check --trace refused it under every profile, lenient included.
    call = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    unpaired = [USER, {"role": "assistant", "content": "", "reasoning_content": "r", "tool_calls": [call]},
                {"role": "user", "content": "go on"}]
    path = _log(tmp_path, {"messages": [USER]}, {"messages": unpaired}, {"messages": [*unpaired, {"role": "user", "content": "more"}]})
    capsys.readouterr()
    assert main(["replay", str(path), "--format", "json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert [r["status"] for r in json.loads(out)] == [200, 200, 200]  # replayed as the endpoint accepted it
    assert [o.index for o in replay_trace(read_trace(path), "lenient") if o.is_rejected] == [1, 2]
    assert err.count("\n") == 1
    assert "request #1: tool calls and results do not pair up (and 1 more request(s))" in err
    assert "check --trace refuses it under every profile" in err
