"""Amp threads (workloads/logs/formats/amp.py): fixtures built here from the thread shape Amp
writes (messages with per-call usage since about January 2026, a usageLedger before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.logs.formats import FORMATS, detect_format
from prefixbench.workloads.logs.sources import find_logs
from tests.unit.audit.fixtures import cli_in_process as _cli

TID = "T-0c1d2e3f-1111-4222-8333-444455556666"
SONNET = "claude-sonnet-4-5-20250929"


def _usage(model: str, i: int, o: int, w: int, r: int, at: str, total: int | None = None, credits: float = 1.0) -> dict:
    usage = {"model": model, "inputTokens": i, "outputTokens": o, "cacheCreationInputTokens": w,
             "cacheReadInputTokens": r, "credits": credits, "timestamp": at}
    if total is not None:
        usage["totalInputTokens"] = total
    return usage


def _user(mid: int, text: str | None = "go", tool: bool = False, sent: int | None = None) -> dict:
    block = {"type": "tool_result", "toolUseID": f"t{mid}", "run": {"status": "done", "result": "ok"}} if tool else {"type": "text", "text": text}
    message = {"role": "user", "messageId": mid, "content": [block]}
    if sent is not None:
        message["meta"] = {"sentAt": sent}
    return message


def _assistant(mid: int, usage: dict | None, state: str = "complete") -> dict:
    message = {"role": "assistant", "messageId": mid, "content": [{"type": "text", "text": "ok"}],
               "state": {"type": state, "stopReason": "end_turn"}}
    if usage is not None:
        message["usage"] = usage
    return message


def _thread(path: Path, messages: list[dict], ledger: list[dict] | None = None, indent: int | None = 2) -> Path:
    thread: dict = {"id": TID, "v": 7, "created": 1768822790000, "title": "t", "agentMode": "smart", "messages": messages}
    if ledger is not None:
        thread["usageLedger"] = {"events": ledger}
    path.write_text(json.dumps(thread, indent=indent))
    return path


def test_current_threads_one_request_per_assistant_usage_with_totals_field_by_field(tmp_path: Path) -> None:
    messages = [
        _user(0, "rename the helper"),
        _assistant(1, _usage(SONNET, 8, 120, 9000, 0, "2026-01-19T11:40:00.000Z", total=9008, credits=2.5)),
        _user(2, tool=True),
        _assistant(3, _usage(SONNET, 3, 60, 400, 9000, "2026-01-19T11:40:20.000Z", total=9403, credits=0.5)),
        _user(4, "and the tests", sent=1768822855000),
        # A GPT call whose totalInputTokens is inputTokens: the cached part is inside it.
        _assistant(5, _usage("gpt-5", 12000, 30, 0, 8192, "2026-01-19T11:41:00.000Z", total=12000, credits=1.0)),
        _assistant(6, None, state="cancelled"),  # cancelled before any usage
        _assistant(7, _usage(SONNET, 0, 0, 0, 0, "2026-01-19T11:42:00.000Z")),  # nothing billed
        # No totalInputTokens: read as additive (the Anthropic field names).
        _assistant(8, _usage(SONNET, 5, 10, 0, 9400, "2026-01-19T11:42:30.000Z", credits=0.25)),
    ]
    path = _thread(tmp_path / "any-name.json", messages)
    assert detect_format(path) is FORMATS["amp"]
    requests, summaries = load_trace([path])
    assert [(r.line, r.path) for r in requests] == [(1, "messages[1]"), (1, "messages[3]"), (1, "messages[5]"), (1, "messages[8]")]
    assert [r.request_id for r in requests] == [f"{TID}#1", f"{TID}#3", f"{TID}#5", f"{TID}#8"]
    assert [r.provider for r in requests] == ["anthropic", "anthropic", "openai", "anthropic"]
    # Sent when the user message was (meta.sentAt), else at the latest when the call ended.
    assert [r.sent_ms for r in requests] == [1768822800000, 1768822820000, 1768822855000, 1768822950000]
    assert [r.done_ms for r in requests] == [1768822800000, 1768822820000, 1768822860000, 1768822950000]
    # Hand sums: reads 0 + 9000 + 8192 + 9400; writes 9000 + 400; uncached 8 + 3 + (12000 - 8192) + 5.
    usages = [r.usage for r in requests]
    assert sum(u.cache_read for u in usages) == 26592
    assert sum(u.cache_write_5m for u in usages) == 9400
    assert sum(u.cache_write_1h for u in usages) == 0
    assert sum(u.uncached for u in usages) == 3824
    assert sum(u.output for u in usages) == 220
    assert [r.prefix.parent for r in requests][1:] == [r.prefix.node for r in requests][:-1]
    assert ("model_change", f"{SONNET} -> gpt-5") in requests[2].events
    assert ("model_change", f"gpt-5 -> {SONNET}") in requests[3].events
    assert requests[2].events[0] == ("user_turn", "")
    summary = summaries[0]
    assert summary.requests == 4 and len(summary.skipped) == 2
    assert any("cancelled" in why for _, why in summary.skipped)
    assert any("1 call(s) whose totalInputTokens equals inputTokens read as subset" in n for n in summary.notes)
    assert any("1 call(s) without totalInputTokens read as additive" in n for n in summary.notes)
    assert any("credits fields sum to 5.2500" in n for n in summary.notes)


def test_older_threads_read_the_usage_ledger_with_cache_counts_from_the_message_named(tmp_path: Path) -> None:
    messages = [
        _user(0),
        {"role": "assistant", "messageId": 1, "content": [], "usage": {"model": SONNET, "cacheCreationInputTokens": 6000, "cacheReadInputTokens": 0}},
        _user(2, tool=True),
        {"role": "assistant", "messageId": 3, "content": [], "usage": {"model": SONNET, "cacheCreationInputTokens": 200, "cacheReadInputTokens": 6000}},
    ]
    ledger = [
        {"id": "e1", "timestamp": "2025-11-23T10:00:00.000Z", "model": SONNET, "credits": 1.5, "tokens": {"input": 4, "output": 70},
         "operationType": "inference", "fromMessageId": 0, "toMessageId": 1},
        {"id": "e2", "timestamp": "2025-11-23T10:00:09.000Z", "model": SONNET, "credits": 0.5, "tokens": {"input": 2, "output": 15},
         "operationType": "inference", "fromMessageId": 2, "toMessageId": 3},
        # An operation of another kind names no message: a side lane of its own.
        {"id": "e3", "timestamp": "2025-11-23T10:00:10.000Z", "model": "claude-haiku-4-5-20251001", "credits": 0.1,
         "tokens": {"input": 300, "output": 9}, "operationType": "title"},
    ]
    path = _thread(tmp_path / "T-old.json", messages, ledger)
    requests, summaries = load_trace([path])
    assert [(r.lane, r.lane_kind) for r in requests] == [("main", "main"), ("main", "main"), ("side:title", "side")]
    usages = [r.usage for r in requests]
    assert [(u.uncached, u.cache_write_5m, u.cache_read, u.output) for u in usages] == [(4, 6000, 0, 70), (2, 200, 6000, 15), (300, 0, 0, 9)]
    assert requests[1].prefix.parent == requests[0].prefix.node and requests[2].prefix.parent is None
    assert any("3 call(s) read from usageLedger events" in n for n in summaries[0].notes)
    # A thread is one object: each call names its ledger event (a new user's pass found every call at T-old.json:1).
    assert [r.path for r in requests] == ["usageLedger event e1", "usageLedger event e2", "usageLedger event e3"]
    assert any("credits fields sum to 2.1000" in n for n in summaries[0].notes)


def test_a_thread_with_both_counts_each_call_once(tmp_path: Path) -> None:
    messages = [_user(0), _assistant(1, _usage(SONNET, 4, 70, 6000, 0, "2026-01-10T10:00:00.000Z", total=6004))]
    ledger = [{"id": "e1", "timestamp": "2026-01-10T10:00:00.000Z", "model": SONNET, "credits": 1.0,
               "tokens": {"input": 4, "output": 70}, "operationType": "inference", "toMessageId": 1}]
    requests, _ = load_trace([_thread(tmp_path / "T-both.json", messages, ledger)])
    assert len(requests) == 1 and requests[0].usage.prompt == 6004


def test_a_late_2025_thread_times_each_call_by_the_ledger_event_naming_its_message(tmp_path: Path) -> None:
    # Late 2025: each assistant message carries its call's whole usage but no timestamp; the
    # ledger event naming the message is stamped when the call was billed (its end).
    def usage(i: int, o: int, w: int, r: int) -> dict:
        return {"model": SONNET, "inputTokens": i, "outputTokens": o, "cacheCreationInputTokens": w,
                "cacheReadInputTokens": r, "totalInputTokens": i + w + r, "credits": 1.0}

    messages = [
        _user(0, "fix the build", sent=1761670800000),  # 2025-10-28T17:00:00Z
        _assistant(1, usage(9, 130, 900, 14000)),
        _user(2, tool=True),
        _assistant(3, usage(5, 40, 300, 14900)),
        _user(4, tool=True),
        _assistant(5, usage(2, 20, 15300, 0)),  # after a 20-minute tool run: the entry had expired
    ]
    def event(eid: str, at: str, mid: int, i: int, o: int) -> dict:
        return {"id": eid, "timestamp": at, "model": SONNET, "credits": 1.0, "tokens": {"input": i, "output": o},
                "operationType": "inference", "fromMessageId": mid - 1, "toMessageId": mid}

    ledger = [event("e1", "2025-10-28T17:00:06.000Z", 1, 9, 130), event("e3", "2025-10-28T17:00:15.000Z", 3, 5, 40),
              event("e5", "2025-10-28T17:20:15.000Z", 5, 2, 20)]
    path = _thread(tmp_path / "T-late.json", messages, ledger)
    requests, summaries = load_trace([path])
    assert [r.path for r in requests] == ["messages[1]", "messages[3]", "messages[5]"]
    assert [r.done_ms for r in requests] == [1761670806000, 1761670815000, 1761672015000]
    # The first answers a stamped user message; after a tool result, at the latest when it ended.
    assert [r.sent_ms for r in requests] == [1761670800000, 1761670815000, 1761672015000]
    assert any("3 call(s) timed by the usageLedger event naming their message" in n for n in summaries[0].notes)
    # Each call still counted once, from its message's usage.
    assert sum(r.usage.cache_read for r in requests) == 28900 and sum(r.usage.uncached for r in requests) == 16
    status, out, _ = _cli("audit", str(path), "--quiet", "--format", "json")
    assert status == 0
    rows = json.loads(out)["requests"]
    assert [row["cause"] for row in rows][-1] == "ttl-expired"


def test_a_folder_walk_finds_threads_pretty_printed_or_not(tmp_path: Path) -> None:
    threads = tmp_path / "amp" / "threads"
    threads.mkdir(parents=True)
    one = [_user(0), _assistant(1, _usage(SONNET, 1, 2, 3, 0, "2026-02-01T00:00:00Z", total=4))]
    _thread(threads / "T-a.json", one)
    _thread(threads / "T-b.json", one, indent=None)
    assert find_logs([tmp_path]) == [threads / "T-a.json", threads / "T-b.json"]
    status, out, err = _cli("audit", str(tmp_path), "--quiet", "--format", "json")
    assert status == 0, err
    assert json.loads(out)["totals"]["requests"] == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.update(messages={"a": 1}), "Amp thread messages is not a list"),
        (lambda t: t["messages"][1]["usage"].update(inputTokens=-3), "inputTokens is not a non-negative integer"),
        (lambda t: t["messages"][1]["usage"].update(timestamp="yesterday"), "is not ISO 8601"),
        (lambda t: t.update(usageLedger={"events": [7]}), "a usageLedger event is not an object"),
        (lambda t: t["messages"].__setitem__(1, "x"), "messages[1] is not an object"),
    ],
)
def test_bad_threads_are_one_line_naming_the_file_and_line(tmp_path: Path, change, message: str) -> None:
    thread = {"id": TID, "messages": [_user(0), _assistant(1, _usage(SONNET, 1, 2, 3, 0, "2026-02-01T00:00:00Z"))]}
    change(thread)
    path = tmp_path / "T-bad.json"
    path.write_text(json.dumps(thread, indent=2))
    status, _, err = _cli("audit", str(path), "--quiet")
    assert status == 2
    assert err.count("\n") == 1 and f"{path}:1: " in err and message in err, err
    with pytest.raises(UserError):
        load_trace([path])


def test_input_amp_on_another_format_names_the_format_it_is(tmp_path: Path) -> None:
    wire = tmp_path / "wire.jsonl"
    wire.write_text(json.dumps({"type": "metadata", "protocol_version": "1.3"}) + "\n")
    status, _, err = _cli("audit", str(wire), "--input", "amp", "--quiet")
    assert status == 2 and "--input kimi-cli reads it" in err


def test_threads_share_the_head_of_their_model(tmp_path: Path) -> None:
    """Amp's system prompt and tools are the same in every thread (three real threads' first calls
    each read the same 14,570 tokens): the main lanes of two threads share one head, so the
    audit can learn it from their lane starts (main: a head per thread, each seen once)."""
    one = [_user(0), _assistant(1, _usage(SONNET, 1, 2, 3, 0, "2026-02-01T00:00:00Z", total=4))]
    a = _thread(tmp_path / "T-a.json", one)
    b = tmp_path / "T-b.json"
    b.write_text(a.read_text().replace(TID, "T-9f8e7d6c-1111-4222-8333-444455556666"))
    requests, _ = load_trace([a, b])
    assert {r.prefix.head for r in requests if r.prefix is not None} == {f"amp:main:{SONNET}"}


def test_an_empty_thread_says_so(tmp_path: Path) -> None:
    # Amp writes a thread with no message when one is opened (v 0); the error names that, not a note.
    path = tmp_path / "T-empty.json"
    path.write_text(json.dumps({"v": 0, "id": "T-00000000-0000-4000-8000-000000000000", "created": 1769043600549, "messages": []}, indent=2))
    status, _, err = _cli("audit", str(path))
    assert status == 2
    assert err.strip() == (f"prefixbench: error: nothing to audit: no model call with usage in the logs given ({path}:1: "
                           "an Amp thread with no message yet (Amp writes one when a thread is opened): no call in it)")
