"""Compaction judged: every compaction the log shows is found, judged warm or cold and priced;
Claude Code 2.x's compaction lane reads the main lane's prefix; a cold compaction call is a miss
of its own (``compaction-miss``), never a cold start."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from prefixbench.reports.audit import audit_figure, audit_json, audit_table
from prefixbench.reports.cli import main
from prefixbench.workloads.audit.causes import CAUSES
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import audit_requests, load_trace, owners_first, run_audit
from prefixbench.workloads.audit.whatif import what_if
from .fixtures import anthropic_body, capture_line, write_jsonl

#: A Claude Code 2.1 project folder written for these tests: a main transcript of five calls
#: growing to 167,093 tokens, an agent-acompact lane whose one call read 164,830 of them
#: from the main lane's prefix, then the compact boundary and one call on the new context.
CC21 = Path(__file__).parent / "data" / "claude-code-2.1"
SESSION = "7c1e2f40-9a1d-4b53-8e0f-2d6a51c0b9e3"
ACOMPACT = f"{SESSION}/subagents/agent-acompact-5e21a9.jsonl"
_TRACE = load_trace([CC21])


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(CC21, folder)
    return folder


def _set_compaction_usage(folder: Path, read: int, write: int, *, sent: str | None = None) -> None:
    """Rewrite the compaction call's reported usage (and when its instruction was sent)."""
    path = folder / ACOMPACT
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for entry in lines:
        if entry["type"] == "assistant":
            usage = entry["message"]["usage"]
            usage.update(cache_read_input_tokens=read, cache_creation_input_tokens=write)
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0}
        elif sent is not None:
            entry["timestamp"] = sent
    write_jsonl(path, lines)


def _compaction_row(result):
    (row,) = [row for row in result.rows if row.lane_kind == "compaction"]
    return row


def test_the_fixture_is_a_claude_code_2x_session_with_a_compaction_lane() -> None:
    requests, _ = load_trace([CC21])
    calls = [r for r in requests if r.compaction_call]
    assert [(Path(r.file).name, r.lane_kind, r.agent_version) for r in calls] == [("agent-acompact-5e21a9.jsonl", "compaction", "2.1.3")]
    (call,) = calls
    assert (call.usage.cache_read, call.usage.prompt) == (164_830, 167_093)
    after = [r for r in requests if ("compaction", "") in r.events]
    assert len(after) == 1 and after[0].lane == "main"


def test_claude_code_21_compaction_lane_is_predicted_reading_the_main_prefix() -> None:
    result = run_audit([CC21])
    row = _compaction_row(result)
    assert row.reported_cache_read == 164_830
    # Predicted from the main lane's cached prefix, not from the head (15,400 tokens).
    assert abs(row.predicted_cache_read - 164_830) <= 0.03 * 164_830
    assert row.read_within and row.cause is None
    (lane,) = [lane for lane in result.lanes if lane.kind == "compaction"]
    assert lane.read_within == 1


def test_a_compaction_lane_holding_the_main_conversation_again_leaves_its_calls_to_the_main_file(tmp_path: Path) -> None:
    """Claude Code 2.1.81-2.1.88: the agent-acompact file holds the main conversation again (the same
    entries, request ids and all, marked as the agent's) before its instruction. The folder walk
    lists ``<session>/subagents/`` before ``<session>.jsonl``; the copies are still the main file's
    calls, and the compaction lane's one call reads the main lane's prefix (IDAHO-VAULT: 478 calls
    of four such files were counted as the compaction lane's, each predicted from the head)."""
    folder = _copy(tmp_path)
    main = [json.loads(line) for line in (folder / f"{SESSION}.jsonl").read_text().splitlines()]
    copies = [{**entry, "isSidechain": True, "agentId": "acompact-5e21a9"} for entry in main
              if entry.get("timestamp", "9") < "2026-11-20T09:04" and entry["type"] in ("user", "assistant")]
    compaction = [json.loads(line) for line in (folder / ACOMPACT).read_text().splitlines()]
    compaction[0]["parentUuid"] = copies[-1]["uuid"]
    write_jsonl(folder / ACOMPACT, [*copies, *compaction])
    requests, _ = load_trace([folder])
    assert [r.lane for r in requests].count("main") == 6
    assert [r.request_id for r in requests if r.compaction_call] == ["req_011CVa1c0001"]
    row = _compaction_row(run_audit([folder]))
    assert row.read_within and row.cause is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["s", "s.jsonl", "subagents", "a.jsonl", "t.jsonl"]), min_size=1, max_size=4),
                max_size=8, unique_by=tuple))
# An owner itself in the folder of another (s.jsonl owns s/s.jsonl, which owns s/s/s): the outer
# first (CI found s/s.jsonl read before s.jsonl).
@example(names=[["s", "s.jsonl"], ["s", "s", "s"], ["s.jsonl"]])
def test_owners_first_reads_a_file_before_the_folder_named_after_it(names: list[list[str]]) -> None:
    files = sorted((Path("/p", *parts), None) for parts in names)
    order = owners_first(files, range(len(files)))
    assert sorted(order) == list(range(len(files)))
    at = {files[index][0]: n for n, index in enumerate(order)}
    for path, n in at.items():
        for folder in [f for f in list(path.parents)[:3] if f.name]:
            owner = folder.with_suffix(".jsonl")
            if owner in at and owner != path:
                assert at[owner] < n
    # The files that own no folder and lie in none keep the file order.
    free = [i for i in order if not any(p.with_suffix("") in files[i][0].parents for p, _ in files)
            and not any(files[i][0].with_suffix("") in p.parents for p, _ in files)]
    assert free == sorted(free)


def test_compactions_are_judged_warm_with_their_dollars() -> None:
    result = run_audit([CC21])
    call, after = result.compactions
    assert (call.kind, call.verdict, call.cache_read, call.expected_cache_read, call.prompt) == ("call", "warm", 164_830, 164_830, 167_093)
    assert call.cost_usd == _compaction_row(result).cost_usd and call.warm_cost_usd == call.cost_usd
    assert (after.kind, after.verdict, after.lane) == ("after", "warm", "main")
    text = audit_table(result)
    assert "compactions (2: 2 warm, 0 cold)" in text


def test_a_cold_compaction_call_is_a_miss_of_its_own_with_its_dollars(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _set_compaction_usage(folder, read=0, write=167_090)
    result = run_audit([folder])
    row = _compaction_row(result)
    assert row.cause == "compaction-miss" and row.evidence == "log"
    assert row.expected_cache_read == 164_830 and row.lost_tokens == 164_830
    # Paid as 5 m writes what a warm compaction reads: (write - read price) on each token.
    assert row.lost_usd == Decimal(164_830) * (Decimal("6.25") - Decimal("0.50")) / 1_000_000
    assert "main request at line 16" in row.detail
    (cause,) = [c for c in result.causes if c.cause == "compaction-miss"]
    assert cause.lost_usd == row.lost_usd
    assert result.totals.lost_usd >= row.lost_usd
    call = result.compactions[0]
    assert (call.verdict, call.lost_usd) == ("cold", row.lost_usd)
    assert call.warm_cost_usd == call.cost_usd - row.lost_usd
    assert "1 cold; the cold ones paid" in audit_table(result)


def test_a_compaction_call_with_nothing_before_it_is_never_a_cold_start(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / f"{SESSION}.jsonl").unlink()
    _set_compaction_usage(folder, read=0, write=167_090)
    result = run_audit([folder])
    row = _compaction_row(result)
    assert row.cause == "compaction-miss" and "no main-lane request before it" in row.detail
    assert all(row.cause != "cold-start" for row in result.rows if row.lane_kind == "compaction")


def test_a_compaction_call_past_the_ttl_is_an_expiry(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    main_file = folder / f"{SESSION}.jsonl"
    main_file.write_text("".join(main_file.read_text().splitlines(keepends=True)[:17]))  # up to the compaction
    _set_compaction_usage(folder, read=0, write=167_090, sent="2026-11-20T09:30:00.000Z")
    row = _compaction_row(run_audit([folder]))
    assert row.cause == "ttl-expired" and "after the main request at line 16" in row.detail


def test_compaction_cold_is_a_cause_with_its_meaning() -> None:
    assert "compaction-miss" in CAUSES and "replay" in CAUSES["compaction-miss"]


def _capture(tmp_path: Path, compaction_tools: bool) -> Path:
    """A capture: two main calls, then a summary call that drops the tools (or keeps them)."""
    first = anthropic_body(messages=1)
    second = anthropic_body(messages=3)
    summary = anthropic_body(messages=3)
    summary["messages"].append({"role": "user", "content": [{"type": "text", "text": "Write a detailed summary of the conversation so far."}]})
    if not compaction_tools:
        summary["tools"] = [{"name": "Summarize", "description": "other tools", "input_schema": {"type": "object"}}]

    def usage(read: int, write: int) -> dict:
        return {"body": {"usage": {"input_tokens": 5, "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "output_tokens": 50}}}

    return write_jsonl(tmp_path / "capture.jsonl", [
        capture_line(first, usage(0, 1_500), sent=1748554700.0),
        capture_line(second, usage(1_500, 200), sent=1748554710.0),
        capture_line(summary, usage(0, 1_750) if not compaction_tools else usage(1_700, 60), sent=1748554720.0),
    ])


def test_a_captured_compaction_call_with_other_tools_is_cold_by_body_diff(tmp_path: Path) -> None:
    result = run_audit([_capture(tmp_path, compaction_tools=False)])
    (row,) = [row for row in result.rows if row.line == 3]
    assert row.lane_kind == "compaction"
    assert (row.cause, row.evidence) == ("compaction-miss", "body-diff")
    assert "tools-changed" in row.detail and row.lost_usd > 0
    assert [c.verdict for c in result.compactions if c.kind == "call"] == ["cold"]


def test_a_captured_compaction_call_that_replays_the_prefix_is_warm(tmp_path: Path) -> None:
    result = run_audit([_capture(tmp_path, compaction_tools=True)])
    (row,) = [row for row in result.rows if row.line == 3]
    assert row.cause is None
    assert [c.verdict for c in result.compactions if c.kind == "call"] == ["warm"]


def test_the_json_carries_the_compactions_section(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _set_compaction_usage(folder, read=0, write=167_090)
    data = json.loads(audit_json(run_audit([folder])))
    call = data["compactions"][0]
    assert (call["kind"], call["verdict"], call["cause"], call["expected_cache_read"]) == ("call", "cold", "compaction-miss", 164_830)
    assert call["warm_cost_usd"] < call["cost_usd"]


def test_keep_prefix_compaction_applies_to_a_compaction_lane_in_its_own_file(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _set_compaction_usage(folder, read=0, write=167_090)
    requests, summaries = load_trace([folder])
    (w,) = what_if(requests, summaries, ["keep-prefix-compaction"])
    assert w.applies and w.requests_changed == 1, w.detail
    assert "extends the main request at line 16 of" in w.detail
    assert w.saved_usd > 0 and w.tokens_to_read > 100_000


def test_keep_prefix_compaction_leaves_a_warm_compaction_alone() -> None:
    requests, summaries = load_trace([CC21])
    (w,) = what_if(requests, summaries, ["keep-prefix-compaction"])
    assert w.applies and w.requests_changed == 0 and w.saved_usd == 0
    assert "already read what the main request at line 16" in w.detail


def test_request_body_logs_mark_their_compaction_calls(tmp_path: Path) -> None:
    body = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}
    summary = {**body, "purpose": "compaction", "messages": [*body["messages"], {"role": "user", "content": "summarize"}]}
    log = write_jsonl(tmp_path / "bodies.jsonl", [body, summary])
    requests, _ = load_trace([log], "chat-completions")
    assert [r.compaction_call for r in requests] == [False, True]


def test_audit_png_draws_a_one_request_lane_with_its_prediction() -> None:
    pytest.importorskip("matplotlib")
    fig = audit_figure(run_audit([CC21]))
    panel = next(ax for ax in fig.axes if "agent-acompact" in ax.get_title())
    assert "(1 request)" in panel.get_title()
    labels = [artist.get_label() for artist in panel.get_children()]
    assert "predicted read" in labels
    low, high = panel.get_xlim()
    assert high - low >= 3 and list(panel.get_xticks()) == [0]


def test_cli_audit_lists_compactions(tmp_path: Path, capsys) -> None:
    assert main(["audit", str(CC21)]) == 0
    out = capsys.readouterr().out
    assert "compactions (2: 2 warm, 0 cold)" in out


@settings(max_examples=60, deadline=None)
@given(read=st.integers(0, 200_000), write=st.integers(0, 200_000), uncached=st.integers(0, 5_000))
def test_a_compaction_call_is_judged_whatever_it_reports(read: int, write: int, uncached: int) -> None:
    """Any usage on the compaction call: judged once, never a cold start, its dollars adding up."""
    requests, summaries = _TRACE
    changed = [
        replace(r, usage=Usage(cache_read=read, cache_write_5m=write, uncached=uncached, output=10)) if r.compaction_call else r
        for r in requests
    ]
    result = audit_requests(changed, summaries)
    row = _compaction_row(result)
    assert row.cause != "cold-start"
    assert row.lost_tokens == 0 or row.cause in ("compaction-miss", "ttl-expired")
    (call,) = [c for c in result.compactions if c.kind == "call"]
    assert call.verdict == ("warm" if read >= min(164_830, read + write + uncached) * 0.97 else "cold")
    assert call.warm_cost_usd == call.cost_usd - (call.lost_usd or 0)


def test_a_compaction_whose_readable_prefix_is_unknown_shows_no_zero_and_stays_out_of_the_sums() -> None:
    """A compaction after which the log tells no cached prefix (its head unlogged) is no 0 and no
    warm cost equal to its price: the table says it is unknown, and the header's cold sums leave it out."""
    result = run_audit([CC21])
    known = replace(result.compactions[0], verdict="cold", cache_read=0, expected_cache_read=100,
                    cost_usd=Decimal("0.5"), lost_usd=Decimal("0.2"), warm_cost_usd=Decimal("0.3"))
    unknown = replace(result.compactions[0], kind="after", verdict="cold", cache_read=0, expected_cache_read=None,
                      cost_usd=Decimal("0.1717"), lost_usd=None, warm_cost_usd=None,
                      detail="read 0 of its 25,739 tokens; the log does not tell what it could have read")
    table = audit_table(replace(result, compactions=(known, unknown)))
    lines = table.splitlines()
    head = next(line for line in lines if line.startswith("compactions ("))
    assert "the cold ones paid $0.5000, warm they would have cost $0.3000" in head
    assert "1 whose readable prefix the log does not tell" in head
    row = next(line for line in lines if " after " in line and "does not tell" in line)
    assert row.split()[4:8] == ["0", "?", "$0.1717", "?"]  # read, cached before, paid, warm cost


def test_a_compaction_whose_readable_prefix_is_unknown_is_null_in_json() -> None:
    """What it could have read, its warm cost and (after a compaction) its lost dollars are null
    in audit.json where the table shows ``?``: the log does not tell them, and 0 would claim it did."""
    from types import SimpleNamespace

    from prefixbench.workloads.audit.core import _judge_compaction

    usage = Usage(cache_read=0, cache_write_5m=0, cache_write_1h=0, uncached=25_739, output=10)
    request = SimpleNamespace(usage=usage, model="claude-sonnet-4-5", sent_ms=0, speed=None, upstream=None)
    row = SimpleNamespace(file="s.jsonl", lane="main", line=3, expected_cache_read=0, lost_usd=None,
                          cost_usd=Decimal("0.1717"), cause="compaction", detail="")
    prices = SimpleNamespace(row=lambda *args: None)
    judged = _judge_compaction("after", request, row, SimpleNamespace(read=0), prices)
    assert judged.verdict == "cold" and "does not tell" in judged.detail
    assert (judged.expected_cache_read, judged.warm_cost_usd, judged.lost_usd) == (None, None, None)
    record = json.loads(audit_json(replace(run_audit([CC21]), compactions=(judged,))))["compactions"][0]
    assert (record["expected_cache_read"], record["warm_cost_usd"], record["lost_usd"]) == (None, None, None)


def _roo_task(folder: Path, idle_ms: int) -> None:
    """A Roo Code task on Anthropic: two calls, then one ``idle_ms`` later that Roo condensed for
    (the condense entry after its api_req_started) and that read nothing."""
    model = {"providerId": "anthropic", "modelId": "claude-sonnet-4-20250514"}

    def call(ts: int, writes: int, reads: int) -> dict:
        info = {"request": "r", "apiProtocol": "anthropic", "tokensIn": 10, "tokensOut": 50, "cacheWrites": writes,
                "cacheReads": reads, "cost": 0.01}
        return {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(info), "modelInfo": model}

    start = 1_758_000_000_000
    late = start + 20_000 + idle_ms
    entries = [
        {"ts": start, "type": "say", "say": "text", "text": "task"}, call(start + 1_000, 140_000, 0),
        {"ts": start + 2_000, "type": "say", "say": "text", "text": "r"}, call(start + 20_000, 2_000, 140_000),
        {"ts": start + 21_000, "type": "say", "say": "text", "text": "r"}, call(late, 60_000, 0),
        {"ts": late + 5_000, "type": "say", "say": "condense_context",
         "contextCondense": {"summary": "s", "cost": 0.1, "prevContextTokens": 142_000, "newContextTokens": 60_000}},
        {"ts": late + 6_000, "type": "say", "say": "text", "text": "r"},
    ]
    folder.mkdir()
    (folder / "ui_messages.json").write_text("[\n" + ",\n".join(json.dumps(e) for e in entries) + "\n]\n")


@pytest.mark.parametrize("idle_ms", [60_000, 20 * 60_000])
def test_a_compaction_after_an_idle_gap_past_the_ttl_names_both(tmp_path: Path, idle_ms: int) -> None:
    # A condense after 20 idle minutes (past Anthropic's 5-minute TTL): the head had expired too,
    # so the read of 0 is the expiry's (a keep-alive recovers the head), the compaction named
    # beside it; never "the head could still be read". A minute idle: the compaction's alone.
    _roo_task(tmp_path / "t", idle_ms)
    result = run_audit([tmp_path / "t"])
    row = result.rows[-1]
    assert row.reported_cache_read == 0 and "compaction logged for this request (context condensed)" in row.detail
    (compaction,) = result.compactions
    if idle_ms < 5 * 60_000:
        assert row.cause == "compaction" and row.loss_class == "unavoidable"
        return
    # The head's size is not known: the compaction, whose rewrite is the rest, leads; the expired
    # head is named beside it (never "could still be read").
    assert row.cause == "compaction" and row.loss_class == "unavoidable"
    assert "the head had expired too: idle 20m" in row.detail and "past the 5m00s TTL" in row.detail
    assert "could still be read" not in row.detail
    assert compaction.kind == "after" and compaction.cause == "compaction"
    assert "no cached prefix known" not in compaction.detail and "nothing cached was left to read" in compaction.detail
    assert "what it could have read warm the log does not tell: compaction logged" in compaction.detail
    assert compaction.detail.endswith("the head had expired too: idle 20m00s since the previous request, past the 5m00s TTL")


def test_a_compaction_after_a_long_idle_whose_head_a_compaction_call_just_used_is_no_expiry(tmp_path: Path) -> None:
    # Claude Code: 30 idle minutes, then a compaction call (agent-acompact, its own lane) sends
    # under the shared head 25s before the main lane's first request after the compaction. That
    # call already took the expiry; the main lane's read of 0 is the compaction's, not a second
    # expiry of the head (base: ttl-expired, "the head (3,000 tokens) had expired too").
    from .fixtures import Transcript, cc_usage

    t = Transcript(version="2.1.120")
    t.user("hello", "2026-07-10T02:00:00.000Z", root=True)
    t.assistant("req_1", "2026-07-10T02:00:03.000Z", [cc_usage(3, 4000, 4000, 10)], model="claude-sonnet-4-6")
    t.user("r", "2026-07-10T02:00:10.000Z", tool=True)
    t.assistant("req_2", "2026-07-10T02:00:13.000Z", [cc_usage(3, 2000, 8000, 10)], model="claude-sonnet-4-6")
    t.compact_boundary("2026-07-10T02:30:40.000Z")
    t.user("summary", "2026-07-10T02:30:41.000Z")
    t.assistant("req_4", "2026-07-10T02:30:45.000Z", [cc_usage(3, 3000, 0, 10)], model="claude-sonnet-4-6")
    write_jsonl(tmp_path / "s1.jsonl", t.lines)
    c = Transcript(session="s1", version="2.1.120", sidechain=True)
    c.user("summarize", "2026-07-10T02:30:00.000Z", root=True)
    c.assistant("req_c", "2026-07-10T02:30:20.000Z", [cc_usage(3, 10000, 0, 500)], model="claude-sonnet-4-6")
    (tmp_path / "s1" / "subagents").mkdir(parents=True)
    write_jsonl(tmp_path / "s1" / "subagents" / "agent-acompact-abc.jsonl", c.lines)
    rows = {(Path(r.file).name, r.line): r for r in run_audit([tmp_path]).rows}
    assert rows[("agent-acompact-abc.jsonl", 2)].cause == "ttl-expired"
    main_row = rows[("s1.jsonl", 7)]
    assert main_row.cause == "compaction", main_row.detail
    assert "expired" not in main_row.detail


def test_a_compaction_past_the_ttl_whose_head_size_is_unknown_says_so(tmp_path: Path) -> None:
    # No lane start read anything, so the head's size is unknown: the compaction leads (its rewrite
    # is the rest of what was lost) with the expired head named, and its compaction entry, counted
    # among those whose readable prefix the log does not tell (expected None: the header's "?"),
    # says that beside "nothing cached was left to read" (base said only that).
    from .fixtures import compacted_after_idle

    result = run_audit([write_jsonl(tmp_path / "s.jsonl", compacted_after_idle("30"))])
    row = result.rows[-1]
    assert row.cause == "compaction"
    assert "the head had expired too: idle 29m" in row.detail
    (compaction,) = result.compactions
    assert compaction.expected_cache_read is None
    assert "nothing cached was left to read, and what it could have read warm the log does not tell: compaction" in compaction.detail
    assert "the head had expired too: idle 29m" in compaction.detail


def _compaction_after_other_lanes(folder: Path, read: int, *, other_session: bool, start_read: int = 3000) -> dict:
    """Claude Code 2.1: session s1's main lane works at 02:00 (its start reading ``start_read``), its
    subagent lane calls at 02:28 (a subagent's head is its session's own), another session s2 of
    the same folder, model and version calls under the main head at 02:27 (where ``other_session``),
    and s1's compaction call (agent-acompact) is sent at 02:30, 29m50s after the main lane's last
    request (past the 5-minute TTL), reading ``read`` of the 9,000 tokens that request cached."""
    from .fixtures import Transcript, cc_usage

    model = "claude-sonnet-4-6"
    t = Transcript(version="2.1.120")
    t.user("hello", "2026-07-10T02:00:00.000Z", root=True)
    t.assistant("req_1", "2026-07-10T02:00:03.000Z", [cc_usage(3, 7000 - start_read, start_read, 10)], model=model)
    t.user("r", "2026-07-10T02:00:10.000Z", tool=True)
    t.assistant("req_2", "2026-07-10T02:00:13.000Z", [cc_usage(3, 2000, 7000, 10)], model=model)
    write_jsonl(folder / "s1.jsonl", t.lines)
    (folder / "s1" / "subagents").mkdir(parents=True)
    a = Transcript(session="s1", version="2.1.120", sidechain=True)
    a.user("task", "2026-07-10T02:28:00.000Z", root=True)
    a.assistant("req_a", "2026-07-10T02:28:03.000Z", [cc_usage(3, 5000, 0, 10)], model=model)
    write_jsonl(folder / "s1" / "subagents" / "agent-abc.jsonl", a.lines)
    if other_session:
        o = Transcript(session="s2", version="2.1.120")
        o.user("hi", "2026-07-10T02:27:00.000Z", root=True)
        o.assistant("req_o", "2026-07-10T02:27:03.000Z", [cc_usage(3, 1000, 3000, 10)], model=model)
        write_jsonl(folder / "s2.jsonl", o.lines)
    c = Transcript(session="s1", version="2.1.120", sidechain=True)
    c.user("summarize", "2026-07-10T02:30:00.000Z", root=True)
    c.assistant("req_c", "2026-07-10T02:30:20.000Z", [cc_usage(3, 9100 - read, read, 500)], model=model)
    write_jsonl(folder / "s1" / "subagents" / "agent-acompact-abc.jsonl", c.lines)
    return {Path(row.file).name: row for row in run_audit([folder]).rows if row.lane_kind == "compaction"}


def test_a_compaction_call_past_the_ttl_whose_head_another_lane_kept_warm_says_so(tmp_path: Path) -> None:
    # s2's call 3 minutes before kept the head warm: the call read it (3,000), so what expired is
    # the main conversation's own part past it (base: the expiry alone, no word of the other lane).
    row = _compaction_after_other_lanes(tmp_path, 3000, other_session=True)["agent-acompact-abc.jsonl"]
    assert row.cause == "ttl-expired" and row.lost_tokens == 6000
    assert "was sent 3m00s before, within the TTL: the head (3,000 tokens) was warm and read" in row.detail
    assert "the main conversation's own part past it (6,000 tokens lost)" in row.detail


def test_a_compaction_call_reading_short_of_a_head_another_lane_kept_warm_is_a_compaction_miss(tmp_path: Path) -> None:
    # s1 started cold, s2 read the 3,000-token head 3 minutes before the compaction call, which
    # read 2,000 of it: the expiry does not explain where the read stopped, so the call did not
    # replay the prefix (base: ttl-expired).
    row = _compaction_after_other_lanes(tmp_path, 2000, other_session=True, start_read=0)["agent-acompact-abc.jsonl"]
    assert row.cause == "compaction-miss", row.detail
    assert row.detail.startswith("the compaction call read 2,000 of the 9,000 tokens the main request at line 4 left cached")
    assert "the head (3,000 tokens) was warm (another lane's call under the same head, in the same folder, was sent 3m00s" in row.detail
    assert "read short by 1,000 tokens, which the expiry does not explain" in row.detail
    assert row.detail.endswith("had expired too (the compaction call came 29m50s after the main request at line 4, "
                               "past the 5m00s TTL of what that request cached)")


@pytest.mark.parametrize("read", [0, 2980, 3000])
def test_a_compaction_call_past_the_ttl_with_only_a_subagent_lane_after_is_an_expiry(tmp_path: Path, read: int) -> None:
    # The subagent's call 2 minutes before is under its session's own head: no evidence the main
    # head was warm; the compaction call is judged as before.
    row = _compaction_after_other_lanes(tmp_path, read, other_session=False)["agent-acompact-abc.jsonl"]
    assert row.cause == "ttl-expired"
    assert row.detail == "the compaction call came 29m50s after the main request at line 4, past the 5m00s TTL of what that request cached"


def test_a_compaction_call_reading_nothing_after_another_lane_kept_the_head_warm_stays_an_expiry(tmp_path: Path) -> None:
    # A read of 0 shows nothing of the head warm: the other session's head may not be this one's
    # (a head key is inferred), as the TTL rule says of an idle lane.
    row = _compaction_after_other_lanes(tmp_path, 0, other_session=True)["agent-acompact-abc.jsonl"]
    assert row.cause == "ttl-expired" and "that call's head was not this lane's" in row.detail
