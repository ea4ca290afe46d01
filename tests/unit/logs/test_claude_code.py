"""Claude Code transcripts (workloads/logs/formats/claude_code.py) on small synthetic logs of each version."""

from __future__ import annotations

import functools
import json
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import pytest
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.locate import logged
from prefixbench.workloads.logs.formats import detect_format
from prefixbench.workloads.runs.execute import map_runs
from tests.unit.audit.fixtures import Transcript, cc_usage, resumed_session, write_jsonl


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


def test_claude_code_counts_two_responses_logged_under_one_request_id(tmp_path: Path) -> None:
    # Seen in public 2.1.78-2.1.96 transcripts: a response cut off after its first block, then a
    # response of another message id under the same requestId that read what the first wrote.
    t = Transcript(version="2.1.87")
    t.user("hello", "2026-03-30T02:23:20.000Z", root=True)
    t.assistant("req_1", "2026-03-30T02:23:23.000Z", [cc_usage(3, 6000, 11000, 1, write_1h=6000)])
    t.assistant("req_1", "2026-03-30T02:24:09.000Z", [cc_usage(3, 0, 17000, 400)])
    t.lines[-1]["message"]["id"] = "msg_retried"
    t.lines[-1]["message"]["stop_reason"] = "tool_use"
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    requests, _ = load_trace([path])
    assert [(r.usage.cache_write_1h, r.usage.cache_read, r.usage.output) for r in requests] == [(6000, 11000, 1), (0, 17000, 400)]
    totals = run_audit([path]).totals
    assert (totals.requests, totals.cache_write, totals.cache_read) == (2, 6000, 28000)


def test_claude_code_a_model_no_modelled_provider_names_is_not_anthropic_s(tmp_path: Path) -> None:
    # A public 2.1.88 home pointed Claude Code at an Anthropic-compatible endpoint serving
    # longcat-flash-thinking-2601-platform: no Claude model, so no Anthropic call.
    t = Transcript(version="2.1.88")
    t.user("hello", "2026-03-30T02:23:20.000Z", root=True)
    t.assistant("req_1", "2026-03-30T02:23:23.000Z", [cc_usage(3000, 0, 0, 9)], model="longcat-flash-thinking-2601-platform")
    t.user("again", "2026-03-30T02:24:20.000Z", tool=True)
    t.assistant("req_2", "2026-03-30T02:24:23.000Z", [cc_usage(3, 100, 3000, 9)])
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    rows = run_audit([path]).rows
    assert [(r.provider, r.model) for r in rows] == [
        ("unknown", "longcat-flash-thinking-2601-platform"), ("anthropic", "claude-sonnet-4-20250514")]


def test_claude_code_calls_whose_writes_are_split_as_zero_are_a_relays_not_anthropics(tmp_path: Path) -> None:
    # A public home of Claude Code 2.1.167 pointed at a reseller's relay: its claude-opus-4-8
    # responses reported writes with a cache_creation split of 0 + 0, which Anthropic's API never
    # sends; every call of that model in the file is the relay's, one reporting no write too.
    def relayed(uncached: int, write: int, read: int) -> dict:
        usage = cc_usage(uncached, write, read, 50)
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
        return usage

    t = Transcript(version="2.1.167")
    t.user("hello", "2026-07-10T02:00:00.000Z", root=True)
    t.assistant("req_1", "2026-07-10T02:00:03.000Z", [relayed(31000, 190, 1500)], model="claude-opus-4-8")
    t.user("result", "2026-07-10T02:00:10.000Z", tool=True)
    t.assistant("req_2", "2026-07-10T02:00:13.000Z", [cc_usage(31010, 0, 1700, 40)], model="claude-opus-4-8")
    t.user("result", "2026-07-10T02:00:20.000Z", tool=True)
    t.assistant("req_3", "2026-07-10T02:00:23.000Z", [cc_usage(20, 300, 32000, 40)], model="claude-sonnet-4-6")
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    result = run_audit([path])
    assert [(r.provider, r.model) for r in result.rows] == [
        ("unknown", "claude-opus-4-8"), ("unknown", "claude-opus-4-8"), ("anthropic", "claude-sonnet-4-6")]
    # The totals stay the log's; the evidence is said.
    assert (result.totals.requests, result.totals.cache_write, result.totals.cache_read) == (3, 490, 35200)
    notes = [n for f in result.files for n in f.notes if "claude-opus-4-8 read as an unknown provider's" in n]
    assert len(notes) == 1 and "all 1 of its call(s) here that reported cache writes (190 tokens)" in notes[0]
    # The relay is a conclusion from that evidence, said as one: the transcript keeps no endpoint.
    assert ("uncached: on that evidence, most likely a relay Claude Code was pointed at (ANTHROPIC_BASE_URL; "
            "the transcript keeps no endpoint)") in notes[0]


def test_claude_code_writes_split_by_ttl_stay_anthropic_s(tmp_path: Path) -> None:
    # The split Anthropic sends (5-minute and 1-hour writes adding up), and a usage with no split
    # at all (older versions, a partial line), keep the call Anthropic's.
    t = Transcript(version="2.1.167")
    t.user("hello", "2026-07-10T02:00:00.000Z", root=True)
    t.assistant("req_1", "2026-07-10T02:00:03.000Z", [cc_usage(3, 190, 1500, 50, write_1h=190)])
    t.user("result", "2026-07-10T02:00:10.000Z", tool=True)
    t.assistant("req_2", "2026-07-10T02:00:13.000Z", [cc_usage(3, 200, 1690, 50, write_1h=None)])
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    result = run_audit([path])
    assert {r.provider for r in result.rows} == {"anthropic"}
    assert not [n for f in result.files for n in f.notes if "unknown provider's" in n]


def _unsplit(uncached: int, write: int, read: int) -> dict:
    """A usage whose writes Claude Code logged with a TTL split of 0 + 0: what it writes where the
    response carried no ``cache_creation`` (its own keys' order, 1-hour first)."""
    usage = cc_usage(uncached, write, read, 40, write_1h=None)
    usage["cache_creation"] = {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 0}
    return usage


@pytest.mark.parametrize(
    ("route", "model", "request_ids"),
    [
        # Vertex AI: message ids msg_vrtx_..., the model as Claude Code asked for it.
        ("vertex", "claude-sonnet-4-5@20250929", ("vrtx_01A", "vrtx_01B")),
        # Amazon Bedrock through Claude Code logs the plain model name; its ids are msg_bdrk_...
        ("bedrock", "claude-opus-4-6", ("bdrk_01A", "bdrk_01B")),
        # OpenRouter's Anthropic-compatible endpoint: its message_start usage carries no split.
        ("gateway", "anthropic/claude-sonnet-4.5", ("gen-1765000001", "gen-1765000002")),
    ],
)
def test_claude_code_unsplit_writes_whose_reads_cover_the_prompt_stay_anthropic_s(
    tmp_path: Path, route: str, model: str, request_ids: tuple[str, str]
) -> None:
    # A cloud or gateway in front of Anthropic's cache may drop the TTL split (Claude Code then
    # logs 0 + 0), but the cache behaves as Anthropic's: each call leaves a few tokens uncached.
    # Before, the unsplit writes alone made every call of the model an unknown provider's.
    t = Transcript(version="2.1.177")
    t.user("hello", "2026-09-10T02:00:00.000Z", root=True)
    t.assistant(request_ids[0], "2026-09-10T02:00:03.000Z", [_unsplit(3, 21_000, 0)], model=model)
    t.user("result", "2026-09-10T02:00:10.000Z", tool=True)
    t.assistant(request_ids[1], "2026-09-10T02:00:13.000Z", [_unsplit(5, 900, 21_000)], model=model)
    path = write_jsonl(tmp_path / f"{route}.jsonl", t.lines)
    result = run_audit([path])
    assert [(r.provider, r.model) for r in result.rows] == [("anthropic", model)] * 2
    assert (result.totals.requests, result.totals.cache_write, result.totals.cache_read) == (2, 21_900, 21_000)
    notes = [n for f in result.files for n in f.notes if n.startswith(f"{model} read as Anthropic's")]
    assert len(notes) == 1 and "2 of its call(s) here reported 21,900 tokens of cache writes" in notes[0]
    assert not [n for f in result.files for n in f.notes if "unknown provider's" in n]


def test_claude_code_a_relay_is_told_by_its_reads_not_by_the_unsplit_writes_alone(tmp_path: Path) -> None:
    # In one file: the relay's model (unsplit writes, 31k of a 33k prompt uncached) is an unknown
    # provider's; a model whose unsplit writes came with the prompt cached stays Anthropic's.
    t = Transcript(version="2.1.167")
    t.user("hello", "2026-07-10T02:00:00.000Z", root=True)
    t.assistant("req_1", "2026-07-10T02:00:03.000Z", [_unsplit(31_000, 190, 1_500)], model="claude-opus-4-8")
    t.user("result", "2026-07-10T02:00:10.000Z", tool=True)
    t.assistant("req_2", "2026-07-10T02:00:13.000Z", [_unsplit(4, 300, 32_000)], model="claude-sonnet-4-6")
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    result = run_audit([path])
    assert [(r.provider, r.model) for r in result.rows] == [("unknown", "claude-opus-4-8"), ("anthropic", "claude-sonnet-4-6")]
    notes = [n for f in result.files for n in f.notes]
    assert sum("claude-opus-4-8 read as an unknown provider's" in n for n in notes) == 1
    assert sum(n.startswith("claude-sonnet-4-6 read as Anthropic's") for n in notes) == 1


def test_claude_code_one_unsplit_call_among_split_ones_keeps_the_model_anthropic_s(tmp_path: Path) -> None:
    # Six calls split their writes as Anthropic's API does, one logs 0 + 0 and left most of its
    # prompt uncached: mixed evidence. Before, that one call made all seven an unknown provider's.
    model = "claude-sonnet-4-6"
    t = Transcript(version="2.1.120")
    t.user("hello", "2026-07-10T02:00:00.000Z", root=True)
    usages = [cc_usage(3, 5000, 0, 10), cc_usage(3, 200, 5000, 50), cc_usage(3, 200, 5200, 50),
              _unsplit(9000, 200, 5400), cc_usage(3, 200, 5600, 50), cc_usage(3, 200, 5800, 50), cc_usage(3, 200, 6000, 50)]
    for n, usage in enumerate(usages):
        t.assistant(f"req_{n}", f"2026-07-10T02:0{n}:03.000Z", [usage], model=model)
        t.user("result", f"2026-07-10T02:0{n}:10.000Z", tool=True)
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    result = run_audit([path])
    assert [(r.provider, r.model) for r in result.rows] == [("anthropic", model)] * 7
    notes = [n for f in result.files for n in f.notes if n.startswith(f"{model} read as Anthropic's")]
    assert len(notes) == 1
    assert "1 of its call(s) here reported 200 tokens of cache writes" in notes[0] and "but 6 other(s) split theirs" in notes[0]
    assert not [n for f in result.files for n in f.notes if "unknown provider's" in n]


def _relay_file(tmp_path: Path) -> Path:
    """A relay's claude-opus-4-8 (unsplit writes, most of the prompt uncached) beside glm-4.7,
    whose provider only its name tells."""
    t = Transcript(version="2.1.167")
    t.user("hello", "2026-07-10T02:00:00.000Z", root=True)
    t.assistant("req_1", "2026-07-10T02:00:03.000Z", [_unsplit(31_000, 190, 1_500)], model="claude-opus-4-8")
    t.user("result", "2026-07-10T02:00:10.000Z", tool=True)
    t.assistant("req_2", "2026-07-10T02:00:13.000Z", [cc_usage(31_010, 0, 1_700, 40)], model="claude-opus-4-8")
    t.user("result", "2026-07-10T02:00:20.000Z", tool=True)
    t.assistant("req_3", "2026-07-10T02:00:23.000Z", [cc_usage(20, 300, 3_000, 40)], model="glm-4.7")
    return write_jsonl(tmp_path / "s1.jsonl", t.lines)


def test_the_notes_on_a_relay_name_its_evidence_and_what_the_option_does(tmp_path: Path) -> None:
    from prefixbench.workloads.audit.assume_provider import assume_providers, parse_assumed_providers

    requests, summaries = load_trace([_relay_file(tmp_path)])
    assert [(r.provider, r.provider_by_model) for r in requests] == [("unknown", True), ("unknown", True), ("zai", True)]
    # The file's note holds whether or not --assume-provider then set another provider, and warns
    # that the format-wide option reaches the other calls guessed from their names.
    relay = [n for s in summaries for n in s.notes if n.startswith("claude-opus-4-8 read as an unknown provider's")]
    assert len(relay) == 1 and "unless --assume-provider set another" in relay[0]
    assert "--assume-provider claude-code:claude-opus-4-8=anthropic reads them as Anthropic's" in relay[0]
    assert "and with them every other claude-code call whose provider was taken from its model's name" in relay[0]
    # The assumed: note tells the relay's calls from those whose name decided; before, it said all
    # three took their provider from the model's name (unknown: 2).
    _, notes = assume_providers(requests, {})
    assert len(notes) == 1
    assert "1 claude-code call(s) name no endpoint that tells who served them: their provider was taken from the " \
           "model's name (zai: 1; models glm-4.7)" in notes[0]
    assert "2 claude-code call(s) of Claude models (claude-opus-4-8: 2) taken as an unknown provider's (a relay's) " \
           "from their cache writes" in notes[0] and "unknown: 2" not in notes[0]
    out, notes = assume_providers(requests, {"claude-code": "anthropic"})
    assert [r.provider for r in out] == ["anthropic"] * 3
    assert notes[0].endswith("then set to anthropic by --assume-provider")
    # The per-model form leaves glm-4.7 as its name gave it, and the note says which calls it set.
    out, notes = assume_providers(requests, parse_assumed_providers("claude-code:claude-opus-4-8=anthropic"))
    assert [r.provider for r in out] == ["anthropic", "anthropic", "zai"]
    assert "; claude-opus-4-8's 2 call(s) set to anthropic by --assume-provider claude-code:claude-opus-4-8=anthropic" \
           in notes[0] and len(notes) == 1
    _, notes = assume_providers(requests, parse_assumed_providers("claude-code:claude-sonnet-4-6=anthropic"))
    assert notes[1] == ("--assume-provider claude-code:claude-sonnet-4-6=anthropic: no call of model claude-sonnet-4-6 "
                        "in the claude-code logs (their models: claude-opus-4-8, glm-4.7), nothing changed")


def test_a_relayed_model_s_advisor_calls_are_the_relay_s_too(tmp_path: Path) -> None:
    # The relay's claude-opus-4-8 also advised the executor: its advisor call is the relay's, as
    # its own calls are. Before, the advisor call stayed Anthropic's.
    t = Transcript(version="2.1.167")
    t.user("hello", "2026-07-10T02:00:00.000Z", root=True)
    t.assistant("req_1", "2026-07-10T02:00:03.000Z", [_unsplit(31_000, 190, 1_500)], model="claude-opus-4-8")
    t.user("result", "2026-07-10T02:00:10.000Z", tool=True)
    first = [cc_usage(3, 2000, 0, 80, write_1h=None), cc_usage(2, 150, 2000, 300, write_1h=None)]
    advice = {"model": "claude-opus-4-8", **cc_usage(6000, 0, 0, 900, write_1h=None)}
    t.assistant("req_2", "2026-07-10T02:00:30.000Z", [_with_advisor(first, advice)], model="claude-sonnet-4-6")
    requests, _ = load_trace([write_jsonl(tmp_path / "s1.jsonl", t.lines)])
    assert [(r.lane, r.model, r.provider, r.provider_by_model) for r in requests] == [
        ("main", "claude-opus-4-8", "unknown", True), ("main", "claude-sonnet-4-6", "anthropic", False),
        ("advisor", "claude-opus-4-8", "unknown", True)]


@pytest.mark.parametrize(("model", "provider"), [("gpt-5", "openai"), ("gemini-2.5-pro", "gemini")])
def test_a_known_model_of_a_provider_not_speaking_messages_is_its_provider_s_by_name(
    tmp_path: Path, model: str, provider: str
) -> None:
    # Claude Code through a translating router (claude-code-router, LiteLLM) logs gpt-5 or
    # gemini-2.5-pro. Before, such a call was labelled Anthropic's and not marked as guessed, so
    # --assume-provider claude-code=... said nothing changed.
    from prefixbench.workloads.audit.assume_provider import assume_providers

    t = Transcript(version="2.1.120")
    t.user("hello", "2026-07-10T02:00:00.000Z", root=True)
    t.assistant("req_1", "2026-07-10T02:00:03.000Z", [cc_usage(9000, 0, 0, 10, write_1h=None)], model=model)
    t.user("result", "2026-07-10T02:00:10.000Z", tool=True)
    t.assistant("req_2", "2026-07-10T02:00:13.000Z", [cc_usage(200, 0, 8960, 10, write_1h=None)], model=model)
    requests, _ = load_trace([write_jsonl(tmp_path / "s1.jsonl", t.lines)])
    assert [(r.provider, r.provider_by_model) for r in requests] == [(provider, True)] * 2
    assert [r.usage.cache_read for r in requests] == [0, 8960]
    out, notes = assume_providers(requests, {"claude-code": "unknown"})
    assert [r.provider for r in out] == ["unknown"] * 2
    assert f"({provider}: 2; models {model})" in notes[0] and notes[0].endswith("then set to unknown by --assume-provider")


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


def _project_of_one_2_1_72_call(tmp_path: Path) -> Path:
    """A project folder holding a Claude Code 2.1.72 session ``sess`` of one call (m1), its
    subagents' folder to be filled."""
    main = Transcript("sess", version="2.1.72")
    main.user("go", "2026-03-17T07:10:00.000Z", root=True)
    main.assistant("m1", "2026-03-17T07:10:02.000Z", [cc_usage(3, 9000, 0, 9)])
    project = tmp_path / "project"
    write_jsonl(project / "sess.jsonl", main.lines)
    return project


def test_the_calls_of_a_compaction_lane_extend_each_other(tmp_path: Path) -> None:
    # A public home's Claude Code 2.1.72 agent-acompact-* files hold many calls each, every one
    # reading what the one before it wrote: a compaction lane's call is no response paused after
    # a server-side compaction (which would start the next call's chain again).
    project = _project_of_one_2_1_72_call(tmp_path)
    compact = Transcript("acompact", version="2.1.72", sidechain=True)
    compact.user("carry on with the plan", "2026-03-17T07:14:33.000Z", root=True)
    compact.assistant("c1", "2026-03-17T07:14:46.000Z", [cc_usage(3, 9600, 8800, 390)])
    compact.user("done", "2026-03-17T07:18:16.000Z", tool=True)
    compact.assistant("c2", "2026-03-17T07:18:21.000Z", [cc_usage(1, 3700, 18400, 180)])
    compact.user("done", "2026-03-17T07:18:26.000Z", tool=True)
    compact.assistant("c3", "2026-03-17T07:18:30.000Z", [cc_usage(1, 300, 22100, 25)])
    write_jsonl(project / "sess" / "subagents" / "agent-acompact-1.jsonl", compact.lines)
    requests, _ = load_trace([project])
    lane = [r for r in requests if r.lane_kind == "compaction"]
    assert [r.request_id for r in lane] == ["c1", "c2", "c3"]
    assert [r.prefix.parent for r in lane[1:]] == [lane[0].prefix.node, lane[1].prefix.node]
    assert not any(kind == "compaction" for r in lane for kind, _ in r.events)
    rows = [row for row in run_audit([project]).rows if row.lane_kind == "compaction"]
    assert [row.predicted_cache_read for row in rows[1:]] == [18400, 22100]


def test_a_compaction_lane_holding_the_conversation_before_its_instruction(tmp_path: Path) -> None:
    """Claude Code 2.1.71-2.1.72 (pshung/personal_git) wrote whole conversations into
    ``agent-acompact-*`` files, user turns and all ("Implement the following plan:", "continue"),
    before the instruction to summarize: only the call answering that instruction is a compaction
    call; those before it are main-thread calls. Before: every one was a compaction call, and a
    read that fell short after a user turn was a ``compaction-miss``."""
    compact = Transcript("acompact", version="2.1.72", sidechain=True)
    compact.user("Implement the following plan: # Plan", "2026-03-17T07:14:33.000Z", root=True)
    compact.assistant("c1", "2026-03-17T07:14:46.000Z", [cc_usage(3, 9600, 8800, 390)])
    compact.user("done", "2026-03-17T07:18:16.000Z", tool=True)
    compact.assistant("c2", "2026-03-17T07:18:21.000Z", [cc_usage(1, 3700, 18400, 180)])
    compact.user("continue", "2026-03-17T07:40:00.000Z")
    compact.assistant("c3", "2026-03-17T07:40:05.000Z", [cc_usage(3, 20000, 8800, 25)])
    compact.user("Your task is to create a detailed summary of the conversation so far", "2026-03-17T07:41:00.000Z")
    compact.assistant("c4", "2026-03-17T07:41:30.000Z", [cc_usage(3, 400, 28800, 900)])
    project = tmp_path / "project"
    write_jsonl(project / "sess" / "subagents" / "agent-acompact-1.jsonl", compact.lines)
    requests, _ = load_trace([project])
    assert [(r.request_id, r.lane_kind, r.is_compaction_call) for r in requests] == [
        ("c1", "main", False), ("c2", "main", False), ("c3", "main", False), ("c4", "compaction", True)]
    assert [r.prefix.parent for r in requests[1:]] == [r.prefix.node for r in requests[:-1]]
    rows = run_audit([project]).rows
    assert "compaction-miss" not in [row.cause for row in rows]
    assert rows[2].cause != "compaction-miss" and rows[2].lost_tokens


def test_a_compaction_lane_response_compacted_but_not_paused_pauses_nothing(tmp_path: Path) -> None:
    """A compaction lane's response that compacted server-side and went on to sample its message
    (``iterations`` [compaction, message], non-zero top-level counts) did not pause: the next call
    of the lane extends it. Before: taken for a pause (its message is a compaction call too, being
    in a compaction lane), the next call's parent cut, an event "after a response paused at a
    server-side compaction" that did not happen."""
    project = _project_of_one_2_1_72_call(tmp_path)
    compact = Transcript("acompact", version="2.1.72", sidechain=True)
    compact.user("carry on", "2026-03-17T07:14:33.000Z", root=True)
    usage = cc_usage(3, 600, 0, 390)
    usage["iterations"] = [
        {"type": "compaction", "input_tokens": 40000, "output_tokens": 900, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
        {"type": "message", "input_tokens": 3, "output_tokens": 390, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 600},
    ]
    compact.assistant("c1", "2026-03-17T07:14:46.000Z", [usage])
    compact.user("done", "2026-03-17T07:18:16.000Z", tool=True)
    compact.assistant("c2", "2026-03-17T07:18:21.000Z", [cc_usage(1, 300, 600, 180)])
    write_jsonl(project / "sess" / "subagents" / "agent-acompact-1.jsonl", compact.lines)
    requests, _ = load_trace([project])
    c1 = next(r for r in requests if r.request_id == "c1" and not r.prefix.node.endswith("#server-compaction0"))
    c2 = next(r for r in requests if r.request_id == "c2")
    assert c2.prefix.parent == c1.prefix.node
    assert not any("paused" in why for _, why in c2.events)


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
    first, resumed = resumed_session()
    write_jsonl(tmp_path / "a.jsonl", first)
    write_jsonl(tmp_path / "b.jsonl", resumed)  # the resumed session re-logs r1
    requests, summaries = load_trace([tmp_path])
    assert [r.request_id for r in requests] == ["r1", "r2"]
    assert "already counted" in summaries[1].skipped[0][1]


def test_a_resumed_sessions_first_call_extends_the_start_it_resumes(tmp_path: Path) -> None:
    # The first file names its lane start's node by content (two sessions sending the same first
    # prompt name one node); the resumed file holds that start again, uncounted, and its first new
    # call must extend that node. On the base it extended ``cc:<uuid>``, a node no request had: the
    # resumed session was not linked to the one it resumes.
    first, again = resumed_session()
    for order, (a, b) in enumerate([("a", "b"), ("b", "a")]):  # the resumed file read last, then first
        folder = tmp_path / str(order) / "projects" / "p"
        write_jsonl(folder / f"{a}.jsonl", first)
        write_jsonl(folder / f"{b}.jsonl", again)
        requests, _ = load_trace([folder])
        start, resumed = sorted(requests, key=lambda r: r.request_id)
        assert [start.request_id, resumed.request_id] == ["r1", "r2"]
        assert start.prefix.node.startswith("by-content:cc-start:")
        assert resumed.prefix.parent == start.prefix.node


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


def test_claude_code_pointed_at_another_providers_anthropic_endpoint_is_that_providers(tmp_path: Path) -> None:
    """ANTHROPIC_BASE_URL at GLM's, DeepSeek's or Kimi's Anthropic-compatible endpoint: the
    response names the model that served, so its provider's rules and prices apply (GLM 4.6: $0.60
    per 1M input, $0.11 per 1M read, $2.20 per 1M output, no write fee)."""
    t = Transcript()
    t.user("hello", "2025-10-03T00:00:00.000Z", root=True)
    t.assistant("req_1", "2025-10-03T00:00:02.000Z", [cc_usage(10_000, 0, 0, 100)], model="glm-4.6")
    t.user("more", "2025-10-03T00:00:10.000Z")
    t.assistant("req_2", "2025-10-03T00:00:12.000Z", [cc_usage(500, 0, 9_984, 100)], model="glm-4.6")
    t.user("and", "2025-10-03T00:00:20.000Z")
    t.assistant("req_3", "2025-10-03T00:00:22.000Z", [cc_usage(640, 0, 10_432, 50)], model="deepseek-chat")
    t.user("then", "2025-10-03T00:00:30.000Z")
    t.assistant("req_4", "2025-10-03T00:00:32.000Z", [cc_usage(3, 1_000, 0, 9)], model="claude-sonnet-4-5-20250929")
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    requests, _ = load_trace([path])
    assert [r.provider for r in requests] == ["zai", "zai", "deepseek", "anthropic"]
    result = run_audit([path])
    glm = result.rows[1]
    assert (glm.reported_cache_read, glm.reported_uncached) == (9_984, 500)
    # 500 x 0.60 + 9,984 x 0.11 + 100 x 2.20, per 1M tokens
    assert glm.cost_usd == (500 * Decimal("0.60") + 9_984 * Decimal("0.11") + 100 * Decimal("2.20")) / 1_000_000


def test_claude_code_on_another_vendors_model_through_a_gateway_is_no_anthropic_call(tmp_path: Path) -> None:
    """Claude Code pointed at OpenRouter's Anthropic-compatible endpoint with a model of a vendor
    the audit does not model (a public session logged nvidia/nemotron-3-super-120b-a12b-20230311:free):
    the usage reads as the Messages API writes it, but the provider is unknown, not Anthropic (main
    read it with Anthropic's cache rules). A vendor part naming Anthropic stays Anthropic's."""
    t = Transcript()
    t.user("hello", "2025-10-03T00:00:00.000Z", root=True)
    t.assistant("req_1", "2025-10-03T00:00:02.000Z", [cc_usage(25_430, 0, 0, 59)], model="nvidia/nemotron-3-super-120b-a12b:free")
    t.user("more", "2025-10-03T00:00:10.000Z")
    t.assistant("req_2", "2025-10-03T00:00:12.000Z", [cc_usage(3, 1_000, 0, 9)], model="anthropic/claude-sonnet-4.5")
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    requests, _ = load_trace([path])
    assert [r.provider for r in requests] == ["unknown", "anthropic"]
    assert (requests[0].usage.uncached, requests[0].usage.output) == (25_430, 59)


def test_claude_code_on_deepseek_reads_into_the_reply_it_sends_back(tmp_path: Path) -> None:
    """Claude Code sends a response back whole, thinking included, and DeepSeek's cache keeps each
    reply (a 128-token unit at its end): a tool loop's next call reads the previous prompt and
    reply to their last whole unit, as the OpenCode, Cline and pi readers have it for DeepSeek."""
    t = Transcript(version="2.1.133")
    t.user("go", "2026-05-10T00:00:00.000Z", root=True)
    t.assistant("req_1", "2026-05-10T00:00:02.000Z", [cc_usage(8_886, 0, 0, 200, write_1h=None)],
                model="deepseek-v4-flash")
    t.user("tool output", "2026-05-10T00:00:05.000Z", tool=True)
    # prompt 9,398 = 8,886 + 200 + 312 new; reads (8,886 + 200) // 128 units
    t.assistant("req_2", "2026-05-10T00:00:07.000Z", [cc_usage(438, 0, 8_960, 181, write_1h=None)],
                model="deepseek-v4-flash")
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    assert [r.provider for r in result.rows] == ["deepseek", "deepseek"]
    # 8,832 (the previous prompt's last unit) while the reply was taken as not sent back.
    assert result.rows[1].predicted_cache_read == 8_960


def test_claude_code_on_glm_reads_into_the_reply_it_sends_back(tmp_path: Path) -> None:
    """Z.AI keeps each reply after its prompt (``caches_output``) and Claude Code sends the reply
    back whole: the next call of a tool loop on glm-4.7 is predicted to read the previous prompt
    and its reply, not the prompt alone."""
    t = Transcript(version="2.1.1")
    t.user("go", "2026-01-02T00:00:00.000Z", root=True)
    t.assistant("req_1", "2026-01-02T00:00:02.000Z", [cc_usage(1_500, 0, 30_000, 700, write_1h=None)],
                model="glm-4.7")
    t.user("tool output", "2026-01-02T00:00:05.000Z", tool=True)
    # prompt 32,400 = 31,500 + 700 + 200 new; reads 31,500 + 700 (glm-4.x reads to the token)
    t.assistant("req_2", "2026-01-02T00:00:07.000Z", [cc_usage(328, 0, 32_072, 90, write_1h=None)],
                model="glm-4.7")
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    assert [r.provider for r in result.rows] == ["zai", "zai"]
    # 31,500 (the previous prompt alone) while the reply was taken as not sent back.
    assert result.rows[1].predicted_cache_read == 32_200


@pytest.mark.parametrize("model", ["glm-5", "glm-5.1"])
def test_claude_code_on_glm_5_reads_to_the_previous_prompt_not_into_the_reply(tmp_path: Path, model: str) -> None:
    """The reply is taken as read back on glm-4.x only: Z.AI's glm-5 follow-ups measured
    (OpenCode, GJC) stopped at the previous prompt. Before, every Z.AI model read into the reply:
    32,192 (31,500 + 700 in 64-token steps)."""
    t = Transcript(version="2.1.90")
    t.user("go", "2026-05-02T00:00:00.000Z", root=True)
    t.assistant("req_1", "2026-05-02T00:00:02.000Z", [cc_usage(1_500, 0, 30_000, 700, write_1h=None)], model=model)
    t.user("tool output", "2026-05-02T00:00:05.000Z", tool=True)
    t.assistant("req_2", "2026-05-02T00:00:07.000Z", [cc_usage(928, 0, 31_472, 90, write_1h=None)], model=model)
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    assert [r.provider for r in result.rows] == ["zai", "zai"]
    assert result.rows[1].predicted_cache_read == 31_488


def _with_iterations(top: dict, *compactions: dict) -> dict:
    """A response's usage under Anthropic's server-side compaction: ``iterations`` lists the
    compaction samplings and the message's own, the top level is the message's alone."""
    message = {key: top[key] for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")}
    return {**top, "iterations": [*({"type": "compaction", **c} for c in compactions), {"type": "message", **message}]}


def test_server_side_compaction_iterations_are_calls_of_their_own_field_by_field(tmp_path: Path) -> None:
    """A response whose usage.iterations holds a compaction sampling (Anthropic's compaction beta):
    its top-level counts are the message's alone. Main counted only the top level: 3 calls, input
    tokens 160,000 short of the log's own sum over iterations."""
    t = Transcript(version="2.3.0")
    t.user("go", "2026-11-20T09:00:00.000Z", root=True)
    t.assistant("req_1", "2026-11-20T09:00:02.000Z", [cc_usage(3, 150000, 0, 40)])
    t.user("result", "2026-11-20T09:00:03.000Z", tool=True)
    compaction = {"input_tokens": 2000, "cache_read_input_tokens": 150000, "cache_creation_input_tokens": 0, "output_tokens": 3500}
    t.assistant("req_2", "2026-11-20T09:00:40.000Z", [_with_iterations(cc_usage(5, 9000, 0, 60), compaction)])
    t.user("result", "2026-11-20T09:00:41.000Z", tool=True)
    t.assistant("req_3", "2026-11-20T09:00:43.000Z", [cc_usage(4, 300, 9005, 30)])
    path = write_jsonl(tmp_path / "s.jsonl", t.lines)
    requests, _ = load_trace([path])
    rows = [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write, r.usage.output, r.compaction_call) for r in requests]
    assert rows == [(3, 0, 150000, 40, False), (2000, 150000, 0, 3500, True), (5, 0, 9000, 60, False), (4, 9005, 300, 30, False)]
    # The log's own sums over every sampling, by hand: input 3 + 2000 + 5 + 4, read 150,000 + 9,005,
    # written 150,000 + 9,000 + 300, output 40 + 3,500 + 60 + 30.
    usages = [r.usage for r in requests]
    assert (sum(u.uncached for u in usages), sum(u.cache_read for u in usages)) == (2012, 159005)
    assert (sum(u.cache_write for u in usages), sum(u.output for u in usages)) == (159300, 3630)
    # The compaction sends the conversation so far (it extends the first call); the message after
    # it starts a new chain from the compacted context, the next call extends that.
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert requests[2].prefix.parent is None and requests[2].events[0][0] == "compaction"
    assert requests[3].prefix.parent == requests[2].prefix.node
    result = run_audit([path])
    assert [row.reported_cache_read for row in result.rows] == [0, 150000, 0, 9005]
    assert result.rows[1].predicted_cache_read == 150000  # the compaction read the first call's prompt


def test_response_paused_after_a_server_side_compaction_is_the_compaction_alone(tmp_path: Path) -> None:
    t = Transcript(version="2.3.0")
    t.user("go", "2026-11-20T09:00:00.000Z", root=True)
    compaction = {"input_tokens": 40000, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 900}
    paused = {"input_tokens": 0, "output_tokens": 0, "iterations": [{"type": "compaction", **compaction}]}
    t.assistant("req_1", "2026-11-20T09:00:20.000Z", [paused])
    t.user("go on from the summary", "2026-11-20T09:00:21.000Z")
    t.assistant("req_2", "2026-11-20T09:00:24.000Z", [cc_usage(6, 1500, 0, 70)])
    path = write_jsonl(tmp_path / "s.jsonl", t.lines)
    requests, summaries = load_trace([path])
    assert [(r.usage.uncached, r.usage.cache_write, r.usage.output, r.compaction_call) for r in requests] == [
        (40000, 0, 900, True), (6, 1500, 70, False)]
    assert any("paused after a server-side compaction" in why for _, why in summaries[0].skipped)
    # The request after the pause sends the summary in place of the conversation: a new chain.
    assert requests[1].prefix.parent is None and requests[1].events[0][0] == "compaction"


def test_a_compaction_iteration_with_no_counts_is_listed_not_a_zero_token_call(tmp_path: Path) -> None:
    # A compaction entry of usage.iterations with no counts: 64175d0 made it a 0-token compaction
    # call, where an empty advisor_message is skipped and listed. Now both are listed.
    t = Transcript(version="2.3.0")
    t.user("go", "2026-11-20T09:00:00.000Z", root=True)
    t.assistant("req_1", "2026-11-20T09:00:02.000Z", [cc_usage(3, 150000, 0, 40)])
    t.user("result", "2026-11-20T09:00:03.000Z", tool=True)
    top = cc_usage(5, 9000, 0, 60)
    t.assistant("req_2", "2026-11-20T09:00:40.000Z", [{**top, "iterations": [{"type": "compaction"}, {"type": "message", **top}]}])
    path = write_jsonl(tmp_path / "s.jsonl", t.lines)
    requests, summaries = load_trace([path])
    assert [(r.usage.cache_write, r.compaction_call) for r in requests] == [(150000, False), (9000, False)]
    assert [r.seq for r in requests] == [0, 1]
    assert requests[1].prefix.parent is None and requests[1].events[0][0] == "compaction"
    assert [why for _, why in summaries[0].skipped] == ["compaction iteration 0 with no token counts: no call to count"]


def test_the_compaction_event_counts_the_iterations_counted_not_the_empty_ones(tmp_path: Path) -> None:
    # One empty compaction entry (listed, skipped) and one with counts: one compaction call, and
    # the message's event says one (it said two: the skipped entry was counted).
    t = Transcript(version="2.3.0")
    t.user("go", "2026-11-20T09:00:00.000Z", root=True)
    top = cc_usage(5, 9000, 0, 60)
    step = {"type": "compaction", **cc_usage(40000, 0, 0, 900)}
    t.assistant("req_1", "2026-11-20T09:00:40.000Z", [{**top, "iterations": [{"type": "compaction"}, step, {"type": "message", **top}]}])
    requests, _ = load_trace([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    assert [r.compaction_call for r in requests] == [True, False]
    assert requests[1].events[0] == ("compaction", "server-side compaction: 1 compaction iteration(s) in usage.iterations")


def test_a_paused_response_whose_compaction_iteration_has_no_counts_is_no_call(tmp_path: Path) -> None:
    t = Transcript(version="2.3.0")
    t.user("go", "2026-11-20T09:00:00.000Z", root=True)
    t.assistant("req_1", "2026-11-20T09:00:20.000Z", [{"input_tokens": 0, "output_tokens": 0, "iterations": [{"type": "compaction"}]}])
    t.user("go on from the summary", "2026-11-20T09:00:21.000Z")
    t.assistant("req_2", "2026-11-20T09:00:24.000Z", [cc_usage(6, 1500, 0, 70)])
    path = write_jsonl(tmp_path / "s.jsonl", t.lines)
    requests, summaries = load_trace([path])
    assert [(r.usage.cache_write, r.compaction_call) for r in requests] == [(1500, False)]
    assert requests[0].prefix.parent is None and requests[0].events[0][0] == "compaction"
    assert [why for _, why in summaries[0].skipped] == [
        "compaction iteration 0 with no token counts: no call to count",
        "response paused after a server-side compaction: no message sampled"]


def _with_advisor(executor: list[dict], *advisors: dict) -> dict:
    """A response's usage under Anthropic's advisor tool (Claude Code's /advisor, 2.1.98 on):
    ``iterations`` interleaves the executor's samplings (``message``) with each advisor call
    (``advisor_message``, naming its model); the top level sums the executor's alone."""
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    top = {key: sum(step[key] for step in executor) for key in keys}
    steps: list[dict] = [{"type": "message", **executor[0]}]
    for advisor, message in zip(advisors, executor[1:], strict=True):
        steps += [{"type": "advisor_message", **advisor}, {"type": "message", **message}]
    return {**top, "iterations": steps}


def test_advisor_iterations_are_calls_of_the_advisor_model_in_a_lane_of_their_own(tmp_path: Path) -> None:
    """A response that consulted the advisor (usage.iterations advisor_message entries): each
    advisor call is the advisor model's, its counts outside the top level. Main counted the
    executor's top level only: 2 calls where the log has 4, 153,000 input and 2,100 output
    tokens of the advisor's lost."""
    t = Transcript(version="2.1.120")
    t.user("refactor this", "2026-06-01T10:00:00.000Z", root=True)
    first = [cc_usage(3, 20000, 0, 80, write_1h=None), cc_usage(2, 150, 20000, 300, write_1h=None)]
    advice = {"model": "claude-opus-4-8", **cc_usage(60000, 0, 0, 900, write_1h=None)}
    t.assistant("req_1", "2026-06-01T10:00:30.000Z", [_with_advisor(first, advice)])
    t.user("result", "2026-06-01T10:00:31.000Z", tool=True)
    second = [cc_usage(4, 400, 20150, 50, write_1h=None), cc_usage(2, 90, 20550, 200, write_1h=None)]
    again = {"model": "claude-opus-4-8", **cc_usage(2000, 1000, 90000, 1200, write_1h=None)}
    t.assistant("req_2", "2026-06-01T10:01:10.000Z", [_with_advisor(second, again)])
    path = write_jsonl(tmp_path / "s.jsonl", t.lines)
    requests, _ = load_trace([path])
    rows = [(r.lane, r.lane_kind, r.model, r.usage.uncached, r.usage.cache_read, r.usage.cache_write, r.usage.output) for r in requests]
    assert rows == [
        ("main", "main", "claude-sonnet-4-20250514", 5, 20000, 20150, 380),
        ("advisor", "side", "claude-opus-4-8", 60000, 0, 0, 900),
        ("main", "main", "claude-sonnet-4-20250514", 6, 40700, 490, 250),
        ("advisor", "side", "claude-opus-4-8", 2000, 90000, 1000, 1200),
    ]
    # The log's own sums over every sampling, by hand: input 3+2+60,000+4+2+2,000, output
    # 80+300+900+50+200+1,200.
    assert sum(r.usage.prompt for r in requests) == 5 + 40150 + 60000 + 6 + 41190 + 93000
    assert sum(r.usage.output for r in requests) == 2730
    # The advisor's prompt is its own: a chain of advisor calls, apart from the executor's.
    assert requests[1].prefix.parent is None and requests[1].prefix.head.startswith("claude-code:advisor:claude-opus-4-8")
    assert requests[3].prefix.parent == requests[1].prefix.node
    assert requests[2].prefix.parent == requests[0].prefix.node
    assert [r.seq for r in requests] == [0, 1, 2, 3]
    result = run_audit([path])
    assert [row.reported_cache_read for row in result.rows] == [20000, 0, 40700, 90000]


def test_an_entry_written_before_its_parent_stays_in_its_chain(tmp_path: Path) -> None:
    # Claude Code 2.1.121 wrote a tool_result a line before the assistant line holding its
    # tool_use (both stamped the same millisecond): the entry names a parent the file gives two
    # lines later. The call after it extends the conversation; it is no resumed session.
    t = Transcript(version="2.1.121")
    t.user("go", "2026-05-04T13:00:00.000Z", root=True)
    t.assistant("r1", "2026-05-04T13:00:02.000Z", [cc_usage(3, 30000, 0, 9)])
    t.user("ok", "2026-05-04T13:00:03.000Z", tool=True)
    t.assistant("r2", "2026-05-04T13:00:05.000Z", [cc_usage(3, 300, 30000, 9), cc_usage(3, 300, 30000, 40)])
    t.user("edited", "2026-05-04T13:00:05.000Z", tool=True)
    t.assistant("r3", "2026-05-04T13:00:08.000Z", [cc_usage(3, 200, 30300, 9)])
    lines = list(t.lines)
    result_line = lines.pop(5)  # r2's tool_result, written before r2's two lines
    lines.insert(3, result_line)
    path = write_jsonl(tmp_path / "s.jsonl", lines)
    requests, _ = load_trace([path])
    assert [r.request_id for r in requests] == ["r1", "r2", "r3"]
    third = requests[2]
    assert third.prefix.parent == requests[1].prefix.node
    assert ("resume", "") not in third.events
    row = run_audit([path]).rows[2]
    assert row.predicted_cache_read == 30300 and row.cause is None


def test_a_response_line_placed_late_leaves_the_later_lines_counts(tmp_path: Path) -> None:
    # A public 2.1.92 subagent transcript holds its entries twice over, the first copy's first
    # response line naming a parent the file never gives: that line waits to the end of the file
    # and was placed last, its mid-stream output count (1) taken for the response's final one.
    t = Transcript(version="2.1.92", sidechain=True)
    t.user("look into it", "2026-04-05T06:25:42.000Z", root=True)
    t.assistant("r1", "2026-04-05T06:25:45.000Z", [cc_usage(3, 11000, 0, 1), cc_usage(3, 11000, 0, 144)])
    t.lines[-1]["message"]["stop_reason"] = "tool_use"
    t.lines[-2]["message"]["stop_reason"] = None
    t.user("found", "2026-04-05T06:25:46.000Z", tool=True)
    t.assistant("r2", "2026-04-05T06:25:48.000Z", [cc_usage(1, 300, 11000, 206)])
    t.lines[-1]["message"]["stop_reason"] = "end_turn"
    first = [dict(line) for line in t.lines]
    first[1]["parentUuid"] = "never-in-the-file"
    path = write_jsonl(tmp_path / "agent-a1.jsonl", first + t.lines)
    requests, _ = load_trace([path])
    assert [(r.request_id, r.usage.output) for r in requests] == [("r1", 144), ("r2", 206)]
    assert run_audit([path]).totals.output == 350


def _placed_late(version: str, output: int = 1_500) -> Transcript:
    """A main thread's turn whose response has a mid-stream line (``stop_reason`` null, output 1)
    and its end (``end_turn``), then the next turn; written twice over, the first copy's
    mid-stream line naming a parent the file never gives (it is placed last)."""
    t = Transcript("sess", version=version)
    t.user("go", "2026-06-01T00:00:00.000Z", root=True)
    t.assistant("r1", "2026-06-01T00:00:02.000Z", [cc_usage(3, 20_000, 0, 1), cc_usage(3, 20_000, 0, output)],
                model="claude-sonnet-4-6")
    t.lines[-2]["message"]["stop_reason"] = None
    t.lines[-1]["message"]["stop_reason"] = "end_turn"
    t.user("next", "2026-06-01T00:03:00.000Z")
    t.assistant("r2", "2026-06-01T00:03:02.000Z", [cc_usage(3, 500, 20_000 + output, 9)], model="claude-sonnet-4-6")
    first = [dict(line) for line in t.lines]
    first[1]["parentUuid"] = "never-in-the-file"
    t.lines = first + t.lines
    return t


def test_a_line_placed_late_leaves_the_turns_end_and_its_mid_stream_mark(tmp_path: Path) -> None:
    """A main-thread 2.1.185 response whose mid-stream line (``stop_reason`` null) is placed after
    its end: the turn still ended (the next turn is predicted to read the reply, 21,500), and the
    response is not marked as last written mid-stream (a later file's copy with more output is no
    final usage of it: the copy is skipped as counted)."""
    t = _placed_late("2.1.185")
    project = tmp_path / "project"
    write_jsonl(project / "sess.jsonl", t.lines)
    assert run_audit([project / "sess.jsonl"]).rows[1].predicted_cache_read == 21_500
    copy = Transcript("acompact", version="2.1.185", sidechain=True)
    copy.lines = [dict(line, isSidechain=True, message=dict(line["message"])) if "message" in line else dict(line)
                  for line in t.lines[len(t.lines) // 2:]]
    copy.lines[2]["message"]["usage"] = cc_usage(3, 20_000, 0, 1_600)
    write_jsonl(project / "sess" / "subagents" / "agent-acompact-1.jsonl", copy.lines)
    requests, summaries = load_trace([project])
    assert [(Path(r.file).name, r.request_id, r.usage.output) for r in requests] == [("sess.jsonl", "r1", 1_500), ("sess.jsonl", "r2", 9)]
    copied = next(s for s in summaries if Path(s.file).name == "agent-acompact-1.jsonl")
    assert [why for _, why in copied.skipped] == ["request already counted in another file (resumed or forked session)"] * 2


def test_records_run_together_on_a_line_are_placed_in_their_order_on_it(tmp_path: Path) -> None:
    """A response's mid-stream line and its end run together on one line (``{...}{...}``), the
    first naming a parent the file never gives (placed last): the end, later on the line, keeps
    its counts. Before: only a smaller line number was earlier, so the mid-stream output (1) was taken."""
    t = Transcript("sess", version="2.1.92")
    t.user("go", "2026-04-05T06:25:42.000Z", root=True)
    t.assistant("r1", "2026-04-05T06:25:45.000Z", [cc_usage(3, 11000, 0, 1), cc_usage(3, 11000, 0, 144)])
    t.lines[-2]["message"]["stop_reason"] = None
    t.lines[-1]["message"]["stop_reason"] = "end_turn"
    t.lines[-2]["parentUuid"] = "never-in-the-file"
    t.lines[-1]["parentUuid"] = t.lines[0]["uuid"]
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(t.lines[0]) + "\n" + json.dumps(t.lines[1]) + json.dumps(t.lines[2]) + "\n", encoding="utf-8")
    requests, _ = load_trace([path])
    assert [(r.request_id, r.usage.output) for r in requests] == [("r1", 144)]


def test_a_tool_result_under_an_entry_never_written_stays_under_the_call_it_answers(tmp_path: Path) -> None:
    # Claude Code 2.0.76 subagents (a public home): of two parallel tool results, the second names
    # as parent an entry the file never gives. It answers a call the file holds (tool_use_id),
    # and the next call sends it with the whole conversation: no new root.
    t = Transcript("agent", version="2.0.76", sidechain=True)
    t.user("look", "2025-12-18T18:23:30.000Z", root=True)
    t.assistant("r1", "2025-12-18T18:23:40.000Z", [cc_usage(3, 9000, 30000, 5), cc_usage(3, 9000, 30000, 60)])
    for n, line in enumerate(t.lines[-2:]):
        line["message"]["content"] = [{"type": "tool_use", "id": f"toolu_{n}", "name": "Read", "input": {}}]
    t.user("first", "2025-12-18T18:23:46.000Z", tool=True)
    t.lines[-1]["message"]["content"][0]["tool_use_id"] = "toolu_0"
    t.user("second", "2025-12-18T18:23:50.000Z", tool=True)
    t.lines[-1]["message"]["content"][0]["tool_use_id"] = "toolu_1"
    t.lines[-1]["parentUuid"] = "never-written"
    t.assistant("r2", "2025-12-18T18:23:52.000Z", [cc_usage(3, 4100, 39000, 40)])
    path = write_jsonl(tmp_path / "agent-a1.jsonl", t.lines)
    requests, _ = load_trace([path])
    assert [r.request_id for r in requests] == ["r1", "r2"]
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert ("resume", "") not in requests[1].events
    # Placed under the first result, not the calling line: the next call's path holds both
    # results (before: the second alone, the first off its path).
    assert requests[1].prefix.new_blocks == 4  # two reply lines, two results (before: 3)
    row = run_audit([path]).rows[1]
    assert row.predicted_cache_read == 39000 and row.read_within


def test_an_entry_whose_parent_never_comes_is_a_resumed_root(tmp_path: Path) -> None:
    t = Transcript(version="2.1.121")
    t.user("go", "2026-05-04T13:00:00.000Z", root=True)
    t.assistant("r1", "2026-05-04T13:00:02.000Z", [cc_usage(3, 30000, 0, 9)])
    t.lines[0]["parentUuid"] = "in-another-file"
    t.user("ok", "2026-05-04T13:00:03.000Z", tool=True)
    t.assistant("r2", "2026-05-04T13:00:05.000Z", [cc_usage(3, 300, 30000, 9)])
    requests, _ = load_trace([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    assert [r.request_id for r in requests] == ["r1", "r2"]
    assert ("resume", "") in requests[0].events
    assert requests[1].prefix.parent == requests[0].prefix.node


def _ten_tool_rounds(version: str, day: str, head: tuple[str, str, str], rounds_from: str) -> Transcript:
    """A Claude Code ``version`` session on ``day`` (``YYYY-MM-DDT``): the user's "go", a call and
    its tools' result at the ``head`` times, then ten calls each followed by its tool's result, one
    a second from ``rounds_from`` (``HH:MM:SS``): 20 new blocks."""
    t = Transcript(version=version)
    t.user("go", f"{day}{head[0]}Z", root=True)
    t.assistant("r1", f"{day}{head[1]}Z", [cc_usage(3, 3000, 52000, 9)])
    t.user("tools loaded", f"{day}{head[2]}Z", tool=True)
    hh_mm, second = rounds_from.rsplit(":", 1)
    for n in range(10):
        t.assistant("r2", f"{day}{hh_mm}:{int(second) + n:02d}.000Z", [cc_usage(3, 2000, 55000, 9)])
        t.user("done", f"{day}{hh_mm}:{int(second) + n:02d}.500Z", tool=True)
    return t


def test_twenty_new_blocks_are_within_the_lookback_and_twenty_one_are_not(tmp_path: Path) -> None:
    # Claude Code 2.1.112 ran each of a response's tool calls as it streamed: the response's ten
    # blocks, each followed by its result, are 20 new blocks in the next call's prompt. That call
    # read the whole previous prompt (a public session, 59,307 of 59,307 tokens): 20 blocks are
    # within Anthropic's lookback. The response's own line is no block of the prompt.
    def session(more: bool) -> Path:
        t = _ten_tool_rounds("2.1.112", "2026-04-26T", ("22:14:05.000", "22:14:18.000", "22:14:18.500"), "22:14:20")
        if more:
            t.user("and one more block", "2026-04-26T22:14:40.000Z")
        t.assistant("r3", "2026-04-26T22:14:45.000Z", [cc_usage(1, 400, 57000, 9)])
        return write_jsonl(tmp_path / f"s{int(more)}.jsonl", t.lines)

    requests, _ = load_trace([session(False)])
    assert requests[2].prefix.new_blocks == 20
    row = run_audit([session(False)]).rows[2]
    assert row.predicted_cache_read == 57000 and row.cause is None
    requests, _ = load_trace([session(True)])
    assert requests[2].prefix.new_blocks == 21
    row = run_audit([session(True)]).rows[2]
    assert row.predicted_cache_read < 57000, row


def test_a_prompt_snapshot_is_no_block_of_the_next_prompt(tmp_path: Path) -> None:
    # Claude Code 2.1.263 writes the system prompt and the tool list a call is sent with as an
    # entry of the chain, an ``attachment`` of type ``prompt_snapshot`` between a tool's result and
    # the next call (a public session of 2026-09-09, claude-haiku-4-5, in VS Code). It goes out as
    # the request's ``system`` and ``tools``, no block of its messages, and it has no ``rendered``
    # text as the attachments sent as reminders do. Main counted it as one: the call below, 20
    # blocks after the previous one, came out at 21, past Anthropic's 20-block lookback.
    t = _ten_tool_rounds("2.1.263", "2026-09-09T", ("07:53:56.000", "07:53:59.000", "07:54:00.000"), "07:54:10")
    snapshot = {"type": "prompt_snapshot", "systemPrompt": ["You are an interactive agent.", "# Environment"],
                "tools": [{"name": "Bash", "description": "Run a command."}]}
    t.lines.append({"parentUuid": t.last, "isSidechain": False, "attachment": snapshot, "type": "attachment", "uuid": "snap",
                    "timestamp": "2026-09-09T07:54:30.000Z", "sessionId": "s1", "version": "2.1.263"})
    t.last = "snap"
    t.assistant("r3", "2026-09-09T07:54:35.000Z", [cc_usage(1, 400, 57000, 9)])
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    requests, _ = load_trace([path])
    assert requests[2].prefix.new_blocks == 20
    row = run_audit([path]).rows[2]
    assert (row.predicted_cache_read, row.cause) == (57000, None)


def test_an_attachment_whose_type_is_a_list_is_a_block_not_a_crash(tmp_path: Path) -> None:
    # Found by fuzzing: an attachment's type was looked up in a frozenset; a list there raised
    # TypeError (unhashable type), a traceback. It names no unsent kind: one block, as any other.
    t = _ten_tool_rounds("2.1.263", "2026-09-09T", ("07:53:56.000", "07:53:59.000", "07:54:00.000"), "07:54:10")
    t.lines.append({"parentUuid": t.last, "isSidechain": False, "attachment": {"type": ["prompt_snapshot"]}, "type": "attachment",
                    "uuid": "odd", "timestamp": "2026-09-09T07:54:30.000Z", "sessionId": "s1", "version": "2.1.263"})
    t.last = "odd"
    t.assistant("r3", "2026-09-09T07:54:35.000Z", [cc_usage(1, 400, 57000, 9)])
    requests, _ = load_trace([write_jsonl(tmp_path / "s1.jsonl", t.lines)])
    assert requests[2].prefix.new_blocks == 21


def test_progress_entries_in_the_chain_are_no_blocks_of_the_next_prompt(tmp_path: Path) -> None:
    # Claude Code 2.1.22 writes each hook's progress (hook_progress, bash_progress) as an entry of
    # the chain, parented like a message but never sent. A public session (claude-opus-4-5, 1 h
    # writes) read the whole previous prompt after a user turn that 74, 31, 57 progress entries
    # preceded: main counted them as new blocks, predicted only the head ("beyond the 20-block
    # lookback") and called breakpoint-placement reads that hit.
    t = Transcript(version="2.1.22")
    t.user("go", "2026-01-28T20:00:00.000Z", root=True)
    t.assistant("r1", "2026-01-28T20:00:05.000Z", [cc_usage(3, 40_000, 16_000, 9, write_1h=40_000)])
    for n in range(30):
        uuid = f"p{n}"
        t.lines.append({"parentUuid": t.last, "isSidechain": False, "sessionId": "s1", "version": "2.1.22", "type": "progress",
                        "data": {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Write", "command": "callback"},
                        "toolUseID": "toolu_1", "parentToolUseID": "toolu_1", "uuid": uuid, "timestamp": f"2026-01-28T20:00:{10 + n:02d}.000Z"})
        t.last = uuid
    t.user("now the evening route", "2026-01-28T20:01:00.000Z")
    t.assistant("r2", "2026-01-28T20:01:05.000Z", [cc_usage(3, 500, 56_000, 9, write_1h=500)])
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    requests, _ = load_trace([path])
    assert requests[1].prefix.new_blocks == 2  # the previous response's block and the user's text
    row = run_audit([path]).rows[1]
    assert (row.predicted_cache_read, row.cause) == (56_000, None)


def test_a_turn_under_progress_hung_off_an_older_entry_extends_the_last_message(tmp_path: Path) -> None:
    # Claude Code 2.1.81 chains a turn's hook progress from an early entry of the session and hangs
    # the next user turn off the last of it: the previous turn's messages were off its logged path,
    # and main predicted a read of the first call's prompt where it read the previous call's whole
    # (IDAHO-VAULT's 66d7e9b5: 33,328 read, 19,479 predicted).
    t = Transcript(version="2.1.81")
    first = t.user("go", "2026-03-24T01:20:00.000Z", root=True)
    t.assistant("r1", "2026-03-24T01:20:05.000Z", [cc_usage(3, 20_000, 0, 9, write_1h=20_000)])
    t.user("tool output", "2026-03-24T01:20:06.000Z", tool=True)
    t.assistant("r2", "2026-03-24T01:20:09.000Z", [cc_usage(1, 13_000, 20_000, 400, write_1h=13_000)])
    parent = first
    for n in range(4):
        uuid = f"p{n}"
        t.lines.append({"parentUuid": parent, "isSidechain": False, "sessionId": "s1", "version": "2.1.81", "type": "progress",
                        "data": {"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse:Write", "command": "callback"},
                        "toolUseID": "toolu_1", "parentToolUseID": "toolu_1", "uuid": uuid, "timestamp": f"2026-03-24T01:20:0{6 + n}.500Z"})
        parent = uuid
    t.last = parent
    t.user("and on other devices?", "2026-03-24T01:21:00.000Z")
    t.assistant("r3", "2026-03-24T01:21:05.000Z", [cc_usage(3, 600, 33_000, 9, write_1h=600)])
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    row = run_audit([path]).rows[2]
    assert (row.predicted_cache_read, row.cause) == (33_000, None)


def test_retry_notices_and_the_api_error_reply_are_no_blocks_of_the_next_prompt(tmp_path: Path) -> None:
    # Claude Code 2.1.146 writes each failed attempt of a call as a ``system`` entry of the chain
    # (subtype api_error, ten retries), then a <synthetic> reply saying the API failed
    # (isApiErrorMessage) and the turn's ``turn_duration``: none is sent. A public session
    # (claude-opus-4-7, 1 h writes) read more than the whole previous prompt 7 min after such a run:
    # main counted them as new blocks, past the 20-block lookback, and predicted only the head.
    t = Transcript(version="2.1.146")
    t.user("deploy it", "2026-05-21T14:00:00.000Z", root=True)
    for n in range(4):  # four tool calls run as the response streamed, each followed by its result
        t.assistant("r1", f"2026-05-21T14:00:0{5 + n}.000Z", [cc_usage(2, 30_000, 4_000, 9, write_1h=30_000)], model="claude-opus-4-7")
        t.user("ok", f"2026-05-21T14:00:0{5 + n}.500Z", tool=True)
    for n in range(10):
        uuid = f"e{n}"
        t.lines.append({"parentUuid": t.last, "isSidechain": False, "sessionId": "s1", "version": "2.1.146", "type": "system",
                        "subtype": "api_error", "level": "error", "retryAttempt": n + 1, "maxRetries": 10,
                        "uuid": uuid, "timestamp": f"2026-05-21T14:01:{10 + n:02d}.000Z"})
        t.last = uuid
    t.lines.append({"parentUuid": t.last, "isSidechain": False, "sessionId": "s1", "version": "2.1.146", "type": "assistant",
                    "isApiErrorMessage": True, "error": "unknown", "uuid": "err", "timestamp": "2026-05-21T14:02:00.000Z",
                    "message": {"id": "m-err", "role": "assistant", "model": "<synthetic>", "content": [{"type": "text", "text": "API Error"}],
                                "usage": cc_usage(0, 0, 0, 0)}})
    t.lines.append({"parentUuid": "err", "isSidechain": False, "sessionId": "s1", "version": "2.1.146", "type": "system",
                    "subtype": "turn_duration", "durationMs": 120_000, "uuid": "dur", "timestamp": "2026-05-21T14:02:00.100Z"})
    t.last = "dur"
    t.user("try again", "2026-05-21T14:07:00.000Z")
    t.assistant("r2", "2026-05-21T14:07:05.000Z", [cc_usage(2, 600, 34_000, 9, write_1h=600)], model="claude-opus-4-7")
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    requests, _ = load_trace([path])
    assert requests[1].prefix.new_blocks == 9  # the response's 4 blocks, their 4 results, the user's text (21 with the 12 unsent)
    row = run_audit([path]).rows[1]
    assert (row.predicted_cache_read, row.cause) == (34_000, None)
    t.lines[-3]["subtype"] = ["turn_duration"]  # (a subtype of no hashable kind is a sent entry, no TypeError)
    requests, _ = load_trace([write_jsonl(tmp_path / "s2.jsonl", t.lines)])
    assert requests[1].prefix.new_blocks == 10


def test_an_entry_whose_uuid_is_no_string_is_read_as_before_the_parent_wait(tmp_path: Path) -> None:
    # The fuzzer's case (CI, after entries began to wait for their parent): a user line whose
    # uuid is a list stopped the audit with a TypeError (a list is no set member). It is passed
    # over as before; the assistant line after it is the one call.
    user = {"parentUuid": None, "isSidechain": False, "sessionId": "s", "version": "1.0.98", "type": "user", "uuid": [],
            "timestamp": "2025-09-03T00:00:00.000Z", "message": {"role": "user", "content": "hi"}}
    reply = {"parentUuid": "u1", "isSidechain": False, "sessionId": "s", "version": "1.0.98", "type": "assistant", "uuid": "u2",
             "requestId": "r1", "timestamp": "2025-09-03T00:00:01.000Z",
             "message": {"model": "claude-sonnet-4-20250514", "role": "assistant", "content": [],
                         "usage": {"input_tokens": 3, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 100, "output_tokens": 9}}}
    t = run_audit([write_jsonl(tmp_path / "s.jsonl", [user, reply])], fmt="claude-code").totals
    assert (t.requests, t.input, t.cache_write, t.cache_read, t.output) == (1, 3, 2000, 100, 9)


def test_a_call_an_endpoint_answered_with_zero_usage_is_not_called_a_compaction_copy(tmp_path: Path) -> None:
    # Claude Code 2.1.17 on glm-4.7 through an Anthropic-compatible endpoint that wrote every
    # response's usage as {input_tokens: 0, output_tokens: 0}; no compaction anywhere. Main said
    # of each such line (and in the "nothing to audit" refusal) that it was "a response copied
    # across a compaction", which the log does not show.
    t = Transcript(version="2.1.17")
    t.user("scan the repo", "2026-05-08T14:51:20.000Z", root=True)
    t.assistant("req_1", "2026-05-08T14:51:28.000Z", [{"input_tokens": 0, "output_tokens": 0}] * 2, model="glm-4.7")
    t.user("ok", "2026-05-08T14:51:30.000Z", tool=True)
    t.assistant("req_2", "2026-05-08T14:52:52.000Z", [{"input_tokens": 0, "output_tokens": 0}], model="glm-4.7")
    t.user("and now?", "2026-05-08T14:53:00.000Z")
    t.assistant("req_3", "2026-05-08T14:53:05.000Z", [cc_usage(5, 0, 12_000, 40)], model="glm-4.7")
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    result = run_audit([path])
    assert result.totals.requests == 1 and result.files[0].skipped == 3
    reasons = [reason for _, reason in load_trace([path])[1][0].skipped]
    assert reasons == ["usage all zero: the endpoint reported no token counts for this call (nothing to audit in it)"] * 3
    assert not any("compaction" in reason for reason in reasons)


def test_a_reply_copied_across_a_compaction_with_zeroed_usage_is_no_call(tmp_path: Path) -> None:
    # Claude Code 2.1.185 writes the reply a precomputed compaction preserved again after the
    # boundary, its counts zeroed (usage.iterations keeps what the call read). Main counted it as
    # the compacted chain's first call, of a 0-token prompt: the head fit in no 0 tokens, so its
    # size was unknown and the next call, which read the head, was predicted to read nothing.
    t = Transcript(version="2.1.185")
    t.user("check the endpoints", "2026-06-21T10:00:00.000Z", root=True)
    t.assistant("req_1", "2026-06-21T10:00:02.000Z", [cc_usage(2, 2_000, 10_000, 50, write_1h=2_000)])
    t.user("ok", "2026-06-21T10:00:03.000Z", tool=True)
    t.assistant("req_2", "2026-06-21T10:00:05.000Z", [cc_usage(2, 1_000, 12_000, 50, write_1h=1_000)])
    t.compact_boundary("2026-06-21T10:01:00.000Z")
    t.user("This session is being continued from a previous conversation.", "2026-06-21T10:01:00.000Z")
    copied = {**cc_usage(0, 0, 0, 0, write_1h=0), "iterations": [{"type": "message", **cc_usage(2, 800, 13_000, 70)}]}
    copied["cache_creation"]["ephemeral_1h_input_tokens"] = 800  # as written: the split kept, the counts zeroed
    t.assistant("req_3", "2026-06-21T10:00:20.000Z", [copied, copied])
    t.user("done", "2026-06-21T10:01:02.000Z", tool=True)
    t.assistant("req_4", "2026-06-21T10:01:05.000Z", [cc_usage(2, 3_000, 10_000, 50, write_1h=3_000)])
    t.user("next", "2026-06-21T10:01:06.000Z", tool=True)
    t.assistant("req_5", "2026-06-21T10:01:08.000Z", [cc_usage(2, 500, 13_000, 50, write_1h=500)])
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    result = run_audit([path])
    assert result.totals.requests == 4
    assert result.files[0].skipped == 2
    assert [reason for _, reason in load_trace([path])[1][0].skipped] == [
        "usage all zero: a response copied across a compaction, not a call of its own"] * 2
    after = result.rows[2]
    assert (after.reported_cache_read, after.predicted_cache_read) == (10_000, 10_000)
    # The head is the account's (the lane start and the compaction's fall read exactly it): all 4.
    assert sum(r.read_within for r in result.rows) == 4


def _streamed(kind: str, uuid: str, content: object, *, usage: dict | None = None, message_id: str = "", task: str | None = None) -> dict:
    """One line of ``claude -p --output-format stream-json``: no parentUuid, no timestamp."""
    message: dict = {"role": kind, "content": content}
    if usage is not None:
        message.update(id=message_id, model="claude-sonnet-4-5-20250929", usage=usage)
    return {"type": kind, "message": message, "parent_tool_use_id": task, "session_id": "run-1", "uuid": uuid}


def _stream_run() -> list[dict]:
    """A headless run's stream: a main thread of three calls, a Task subagent's two between."""
    def result(n: int) -> list[dict]:
        return [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "output " * 40}]

    return [
        {"type": "system", "subtype": "init", "session_id": "run-1", "uuid": "init", "model": "claude-sonnet-4-5-20250929",
         "claude_code_version": "2.0.37", "tools": ["Bash"]},
        _streamed("assistant", "a1", [{"type": "text", "text": "x"}], usage=cc_usage(3, 20_000, 0, 50), message_id="msg_1"),
        _streamed("assistant", "a1b", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}], usage=cc_usage(3, 20_000, 0, 90), message_id="msg_1"),
        _streamed("user", "u1", result(1)),
        _streamed("assistant", "a2", [{"type": "tool_use", "id": "t2", "name": "Task", "input": {}}], usage=cc_usage(3, 600, 20_000, 70), message_id="msg_2"),
        _streamed("assistant", "s1", [{"type": "text", "text": "y"}], usage=cc_usage(3, 9_000, 0, 40), message_id="msg_s1", task="t2"),
        _streamed("user", "su1", result(3), task="t2"),
        _streamed("assistant", "s2", [{"type": "text", "text": "z"}], usage=cc_usage(3, 300, 9_000, 40), message_id="msg_s2", task="t2"),
        _streamed("user", "u2", result(2)),
        _streamed("assistant", "a3", [{"type": "text", "text": "done"}], usage=cc_usage(3, 700, 20_600, 30), message_id="msg_3"),
        {"type": "result", "subtype": "success", "session_id": "run-1", "uuid": "end", "num_turns": 3, "total_cost_usd": 0.1,
         "usage": cc_usage(15, 30_600, 49_600, 270)},
    ]


def test_a_stream_json_run_is_one_chain_in_the_order_it_prints_its_messages(tmp_path: Path) -> None:
    # A headless run's stream names no parent: each message extends the one its thread printed
    # before. The Task call's subagent (parent_tool_use_id) is a thread and a lane of its own.
    # Before: every call was a root, predicted to read the head alone (3 of 5 reads within 3%).
    path = write_jsonl(tmp_path / "cc_raw_output.jsonl", _stream_run())
    requests, _ = load_trace([path])
    assert [(r.request_id, r.lane, r.lane_kind) for r in requests] == [
        ("msg_1", "main", "main"), ("msg_2", "main", "main"), ("msg_s1", "sidechain-1", "subagent"),
        ("msg_s2", "sidechain-1", "subagent"), ("msg_3", "main", "main")]
    by_id = {r.request_id: r for r in requests}
    assert by_id["msg_1"].usage.output == 90  # the message's last line
    assert by_id["msg_2"].prefix.parent == by_id["msg_1"].prefix.node
    assert by_id["msg_3"].prefix.parent == by_id["msg_2"].prefix.node
    assert by_id["msg_s1"].prefix.parent is None and by_id["msg_s2"].prefix.parent == by_id["msg_s1"].prefix.node
    assert {r.agent_version for r in requests} == {"2.0.37"}  # the init line's
    rows = run_audit([path]).rows
    assert sum(r.read_within for r in rows) == 5
    assert [r.predicted_cache_read for r in rows] == [0, 20_000, 0, 9_000, 20_600]


def test_a_stream_json_run_without_uuids_is_read_by_its_lines(tmp_path: Path) -> None:
    # Claude Code 1.0.x printed no uuid: the line stands for it. A reply naming its model tells
    # the stream is Claude Code's (before: an unknown log format).
    lines = [{k: v for k, v in line.items() if k not in ("uuid", "claude_code_version")} for line in _stream_run()]
    path = write_jsonl(tmp_path / "out.jsonl", lines)
    assert detect_format(path).name == "claude-code"
    requests, _ = load_trace([path])
    by_id = {r.request_id: r for r in requests}
    assert by_id["msg_3"].prefix.parent == by_id["msg_2"].prefix.node and by_id["msg_s2"].lane == "sidechain-1"
    assert sum(r.read_within for r in run_audit([path]).rows) == 5


def test_a_stream_json_line_whose_ids_are_no_strings_is_read_as_the_main_thread(tmp_path: Path) -> None:
    # (found by the fuzz run: a list where the session id was raised a TypeError)
    lines = _stream_run()
    lines[1]["session_id"] = ["run-1"]
    lines[5]["parent_tool_use_id"] = {"id": "t2"}
    requests, _ = load_trace([write_jsonl(tmp_path / "out.jsonl", lines)])
    assert len(requests) == 5


def test_a_stream_json_run_kept_as_one_json_array_reads_the_same(tmp_path: Path) -> None:
    # (the messages of a run collected into one JSON array, as the chat.json form)
    lines = _stream_run()
    as_lines = load_trace([write_jsonl(tmp_path / "run.jsonl", lines)])[0]
    array = tmp_path / "run.json"
    array.write_text(json.dumps(lines), encoding="utf-8")
    as_array = load_trace([array])[0]
    assert [(r.request_id, r.prefix.parent is None, r.lane) for r in as_array] == [(r.request_id, r.prefix.parent is None, r.lane) for r in as_lines]


def _second_run() -> list[dict]:
    """:func:`_stream_run` again as another run: its own session id, uuids and message ids."""
    lines = json.loads(json.dumps(_stream_run()).replace('"run-1"', '"run-2"').replace('"msg_', '"msg_b').replace('"uuid": "', '"uuid": "b'))
    return lines


def test_two_stream_json_runs_in_one_file_are_lanes_of_their_own(tmp_path: Path) -> None:
    # Two headless runs' output in one file (interleaved: two runs writing one file at once; or
    # one after the other): the second run's main thread was the first's lane, so each of its
    # calls was measured against the other run's previous call (the expected read its size: 600
    # "lost" to system-changed and messages-changed on calls that read all they were predicted to).
    first, second = _stream_run(), _second_run()
    for name, lines in (("interleaved.jsonl", [x for pair in zip(first, second) for x in pair]), ("after.jsonl", first + second)):
        path = write_jsonl(tmp_path / name, lines)
        requests, _ = load_trace([path])
        lanes = {r.request_id: r.lane for r in requests}
        assert (lanes["msg_1"], lanes["msg_3"], lanes["msg_b1"], lanes["msg_b3"]) == ("main", "main", "session-2", "session-2")
        rows = run_audit([path]).rows
        assert sum(r.lost_tokens for r in rows) == 0 and sum(r.read_within for r in rows) == 10


def test_a_stream_json_compaction_starts_the_threads_chain_again(tmp_path: Path) -> None:
    # The SDK's compact_boundary line (type system) was passed over: the call after it extended
    # the thread's previous messages, so its fall to the summary's size was called a compaction
    # "the log does not mark".
    lines = _stream_run()
    lines.insert(9, {"type": "system", "subtype": "compact_boundary", "session_id": "run-1", "uuid": "cb",
                     "compact_metadata": {"trigger": "auto", "pre_tokens": 21_000}})
    lines.insert(10, _streamed("user", "sum", "This session is being continued from a previous conversation. Summary: ..."))
    lines[11]["message"]["usage"] = cc_usage(3, 2_000, 0, 30)
    path = write_jsonl(tmp_path / "run.jsonl", lines)
    after = {r.request_id: r for r in load_trace([path])[0]}["msg_3"]
    assert (after.prefix.parent, after.lane, after.events) == (None, "main", (("compaction", ""),))
    row = run_audit([path]).rows[-1]
    assert (row.cause, row.detail) == ("compaction", "compaction logged for this request (new context)")


def test_a_stream_json_run_without_uuids_kept_as_one_json_array_reads_as_its_lines(tmp_path: Path) -> None:
    # 1.0.x printed no uuid, and its line stood for it: the elements of a one-line JSON array all
    # start on line 1, so they were one entry (the last call placed in the subagent's lane, under
    # an entry of its own).
    lines = [{k: v for k, v in line.items() if k != "uuid"} for line in _stream_run()]
    as_lines = load_trace([write_jsonl(tmp_path / "run.jsonl", lines)])[0]
    array = tmp_path / "run.json"
    array.write_text(json.dumps(lines), encoding="utf-8")
    as_array = load_trace([array])[0]
    assert [(r.request_id, r.lane, r.prefix.parent is None) for r in as_array] == [
        (r.request_id, r.lane, r.prefix.parent is None) for r in as_lines]
    assert [r.lane for r in as_array] == ["main", "main", "sidechain-1", "sidechain-1", "main"]


def test_a_stream_json_compaction_in_a_subagents_thread_restarts_that_lane_alone(tmp_path: Path) -> None:
    # A Task subagent's compact_boundary (its parent_tool_use_id names the Task call): the call
    # after it was put in a lane of its own (sidechain-2, a second subagent) with no compaction
    # event, and its fall to the summary's size read as a new lane's cold start.
    lines = _stream_run()
    lines.insert(7, {"type": "system", "subtype": "compact_boundary", "session_id": "run-1", "uuid": "scb",
                     "parent_tool_use_id": "t2", "compact_metadata": {"trigger": "auto", "pre_tokens": 9_500}})
    lines.insert(8, _streamed("user", "ssum", "This session is being continued from a previous conversation. Summary: ...", task="t2"))
    lines[9]["message"]["usage"] = cc_usage(3, 1_500, 0, 40)
    path = write_jsonl(tmp_path / "run.jsonl", lines)
    by_id = {r.request_id: r for r in load_trace([path])[0]}
    after = by_id["msg_s2"]
    assert (after.prefix.parent, after.lane, after.events) == (None, "sidechain-1", (("compaction", ""),))
    # The main thread's chain goes on: its next call extends its previous one.
    assert (by_id["msg_3"].prefix.parent, by_id["msg_3"].lane) == (by_id["msg_2"].prefix.node, "main")
    assert by_id["msg_3"].events == ()
    rows = {r.line: r for r in run_audit([path]).rows}
    assert (rows[after.line].cause, rows[after.line].detail) == ("compaction", "compaction logged for this request (new context)")
    assert rows[by_id["msg_3"].line].predicted_cache_read == 20_600


def test_a_compatible_endpoint_that_reports_no_cache_field_is_no_miss(tmp_path: Path) -> None:
    # Claude Code pointed at Kimi's Anthropic-compatible endpoint through a server that answers
    # input and output tokens only: each call after the first was a "system-changed" miss with
    # dollars lost, from cache figures the log does not have.
    t = Transcript()
    t.user("hi", "2025-09-03T00:00:00.000Z", root=True)
    for i in range(4):
        t.assistant(f"r{i}", f"2025-09-03T00:0{i}:10.000Z", [{"input_tokens": 20_000 + 3_000 * i, "output_tokens": 50}], model="kimi-k2")
        t.user("out " * 50, f"2025-09-03T00:0{i}:15.000Z", tool=True)
    result = run_audit([write_jsonl(tmp_path / "s.jsonl", t.lines)])
    assert [(r.reported_cache_read, r.cause, r.lost_tokens) for r in result.rows] == [(None, None, None)] * 4  # unknown, not 0
    assert result.totals.lost_usd == 0


def _compacted_subagent(project: Path, session: str, name: str, start: str, first: int, head: int) -> None:
    """A Haiku subagent of ``session`` whose first prompt (``first`` tokens, written) is compacted
    at once; the call after the compaction reads the head (``head`` tokens) again."""
    agent = Transcript(session, version="2.1.87", sidechain=True)
    agent.user("explore the vault", f"{start}:00.000Z", root=True)
    agent.assistant(f"{name}-1", f"{start}:04.000Z", [cc_usage(3, first, 0, 90)], model="claude-haiku-4-5-20251001")
    agent.compact_boundary(f"{start}:30.000Z")
    agent.user("summary of the exploration", f"{start}:30.000Z")
    agent.assistant(f"{name}-2", f"{start}:34.000Z", [cc_usage(3, 4_000, head, 90)], model="claude-haiku-4-5-20251001")
    write_jsonl(project / session / "subagents" / f"agent-{name}.jsonl", agent.lines)


def test_a_subagents_head_is_its_sessions_own(tmp_path: Path) -> None:
    # IDAHO-VAULT's Haiku subagents: the head each session's agents read again after a compaction
    # was that session's (173,105 tokens in one, 9,773 in another: the MCP tools it was sent);
    # one head for every session of a model and version capped it at the smallest prompt of any.
    project = tmp_path / "project"
    _compacted_subagent(project, "sess-a", "a1", "2026-04-05T16:20", 50_700, 50_000)
    _compacted_subagent(project, "sess-b", "b1", "2026-04-05T18:20", 9_800, 9_300)
    result = run_audit([project])
    after = {row.lane: row.predicted_cache_read for row in result.rows if row.index == 1}
    assert after == {"agent-a1": 50_000, "agent-b1": 9_300}
    assert all(row.read_within for row in result.rows)


def test_claude_code_call_counted_mid_stream_takes_a_later_copys_final_usage(tmp_path: Path) -> None:
    # Claude Code 2.1 writes a line per content block as the block ends (stop_reason null, the
    # output so far); a session's file may hold a reply's one block so written, while the
    # compaction agent's file copying the conversation holds the same reply complete.
    main = Transcript("sess", version="2.1.86")
    main.user("go", "2026-03-29T04:39:18.000Z", root=True)
    main.assistant("req_1", "2026-03-29T04:39:22.000Z", [cc_usage(1, 197, 74939, 72)])
    main.user("result", "2026-03-29T04:39:22.500Z", tool=True)
    main.assistant("req_2", "2026-03-29T04:39:25.000Z", [cc_usage(1, 150, 75136, 197)])
    copy = Transcript("sess", version="2.1.86", sidechain=True)
    copy.lines = [dict(line, isSidechain=True, message=dict(line["message"])) if "message" in line else dict(line) for line in main.lines]
    for lines, stops in ((main.lines, [None, "tool_use"]), (copy.lines, ["tool_use", "tool_use"])):
        for line, stop in zip([x for x in lines if x["type"] == "assistant"], stops):
            line["message"]["stop_reason"] = stop
    copy.lines[1]["message"]["usage"] = cc_usage(1, 197, 74939, 200)  # the reply's end: its final output
    copy.lines[3]["message"]["usage"] = cc_usage(1, 150, 75136, 150)  # (no mid-stream line: not taken)
    project = tmp_path / "project"
    write_jsonl(project / "sess.jsonl", main.lines)
    write_jsonl(project / "sess" / "subagents" / "agent-acompact-1.jsonl", copy.lines)
    requests, summaries = load_trace([project])
    assert [(Path(r.file).name, r.request_id, r.usage.output) for r in requests] == [("sess.jsonl", "req_1", 200), ("sess.jsonl", "req_2", 197)]
    copied = next(s for s in summaries if Path(s.file).name == "agent-acompact-1.jsonl")
    assert [why for _, why in copied.skipped] == [
        "request already counted in another file from a line written mid-stream: this copy's final usage is taken where it is "
        "the same prompt with more output",
        "request already counted in another file (resumed or forked session)",
    ]
    assert run_audit([project]).totals.output == 397
    # Read in workers (audit --jobs), the same.
    assert load_trace([project], map_files=functools.partial(map_runs, jobs=2)) == (requests, summaries)


def test_claude_code_call_counted_mid_stream_takes_a_later_mid_stream_copys_larger_output(tmp_path: Path) -> None:
    # Claude Code 2.1.49-2.1.55 write stop_reason null on almost every line: a session's file ends
    # a reply at its first block (output 4) when an auto-compaction starts, and the compaction
    # agent's file opens with the same reply as it ended (output 2,838), its stop_reason null too.
    # Before, that copy was skipped as counted: the reply's output was 4.
    main = Transcript("sess", version="2.1.49")
    main.user("go", "2026-02-25T03:15:00.000Z", root=True)
    main.assistant("req_1", "2026-02-25T03:15:07.000Z", [cc_usage(1, 300, 165_000, 4)])
    copy = Transcript("sess", version="2.1.49", sidechain=True)
    copy.lines = [dict(line, isSidechain=True, message=dict(line["message"])) for line in main.lines]
    copy.lines[1]["message"]["usage"] = cc_usage(1, 300, 165_000, 2_838)
    copy.lines[1]["timestamp"] = "2026-02-25T03:15:21.000Z"
    for lines in (main.lines, copy.lines):
        lines[1]["message"]["stop_reason"] = None
    project = tmp_path / "project"
    write_jsonl(project / "sess.jsonl", main.lines)
    write_jsonl(project / "sess" / "subagents" / "agent-acompact-1.jsonl", copy.lines)
    requests, summaries = load_trace([project])
    assert [(Path(r.file).name, r.request_id, r.usage.output) for r in requests] == [("sess.jsonl", "req_1", 2_838)]
    copied = next(s for s in summaries if Path(s.file).name == "agent-acompact-1.jsonl")
    assert [why for _, why in copied.skipped] == [
        "request already counted in another file from a line written mid-stream: this copy, written mid-stream too, gives "
        "its usage where it is the same prompt with more output"]
    assert run_audit([project]).totals.output == 2_838


def test_a_final_usage_is_taken_by_its_own_formats_call_only() -> None:
    # A request id is the log's: another format's call may carry the same one (a LiteLLM proxy
    # logging Claude Code's traffic under the response's msg_ id). Only the Claude Code call the
    # id names takes a later Claude Code copy's final usage; main gave it to both.
    from prefixbench.simulator.usage import Usage
    from prefixbench.workloads.logs.trace import FileSummary, TraceRequest, take_final_usage

    partial, final = Usage(74939, 197, 0, 1, 72), Usage(74939, 197, 0, 1, 200)
    calls = [TraceRequest(name, 2, "main", "main", 0, None, None, "anthropic", "claude-sonnet-4-5", usage=partial,
                          request_id="msg_1", source_format=fmt)
             for name, fmt in (("sess.jsonl", "claude-code"), ("proxy.jsonl", "litellm"))]
    copy = FileSummary("agent-acompact-1.jsonl", "claude-code", 0, final_usage=(("msg_1", final),))
    taken = take_final_usage(list(calls), [FileSummary("sess.jsonl", "claude-code", 1), FileSummary("proxy.jsonl", "litellm", 1), copy])
    assert [r.usage.output for r in taken] == [200, 72]


def _session_from(project: Path, session: str, entrypoint: str, start: str, head: int) -> None:
    """A main-thread session of Sonnet 4.6 on Claude Code 2.1.87 run from ``entrypoint``: its
    first call reads ``head`` tokens another session kept warm, its second the whole first prompt."""
    t = Transcript(session, version="2.1.87")
    t.user("look at the vault", f"{start}:00.000Z", root=True)
    t.assistant(f"{session}-1", f"{start}:04.000Z", [cc_usage(3, 2_000, head, 90)], model="claude-sonnet-4-6")
    t.user("result", f"{start}:05.000Z", tool=True)
    t.assistant(f"{session}-2", f"{start}:09.000Z", [cc_usage(3, 300, head + 2_003 + 90, 90)], model="claude-sonnet-4-6")
    write_jsonl(project / f"{session}.jsonl", [{**line, "entrypoint": entrypoint} for line in t.lines])


def test_the_main_threads_head_is_one_per_client(tmp_path: Path) -> None:
    # IDAHO-VAULT's Sonnet 4.6 sessions of 2.1.87: the desktop app's read 7,255 tokens at their
    # lane starts, the terminal's 11,245 (the system prompt differs per client, and its first
    # block names it); one head for all predicted the smallest, 7,255, at every lane start.
    project = tmp_path / "project"
    _session_from(project, "desk-a", "claude-desktop", "2026-04-03T04:30", 7_255)
    _session_from(project, "desk-b", "claude-desktop", "2026-04-04T02:10", 7_255)
    _session_from(project, "cli-a", "cli", "2026-03-29T16:00", 11_245)
    _session_from(project, "cli-b", "cli", "2026-03-31T01:00", 11_245)
    result = run_audit([project])
    starts = {Path(row.file).stem: row.predicted_cache_read for row in result.rows if row.index == 0}
    assert starts == {"desk-a": 7_255, "desk-b": 7_255, "cli-a": 11_245, "cli-b": 11_245}
    assert all(row.read_within for row in result.rows)
    assert any("unlogged head claude-code:main:claude-sonnet-4-6:2.1.87:cli: 11,245 tokens" in n for n in result.notes)


def _session_on(project: Path, session: str, day: str, start_read: int, idle_read: int | None = None) -> None:
    """A main-thread session of Opus 4.6 on Claude Code 2.1.39 started on ``day``: its first call
    reads ``start_read`` tokens and writes 8,000, its second extends it a minute later; with
    ``idle_read``, a third call after 20 idle minutes reads that."""
    t = Transcript(session, version="2.1.39")
    t.user("fix the parser", f"{day}T10:00:00.000Z", root=True)
    t.assistant(f"{session}-1", f"{day}T10:00:04.000Z", [cc_usage(3, 8_000, start_read, 90)], model="claude-opus-4-6")
    t.user("result", f"{day}T10:00:05.000Z", tool=True)
    prompt = start_read + 8_003 + 90
    t.assistant(f"{session}-2", f"{day}T10:01:00.000Z", [cc_usage(3, 300, prompt, 90)], model="claude-opus-4-6")
    if idle_read is not None:
        t.user("and the tests", f"{day}T10:21:00.000Z")
        t.assistant(f"{session}-3", f"{day}T10:21:04.000Z", [cc_usage(3, prompt + 400 - idle_read, idle_read, 90)], model="claude-opus-4-6")
    write_jsonl(project / f"{session}.jsonl", t.lines)


def test_session_starts_read_the_level_most_of_them_read_though_an_expiry_read_nothing(tmp_path: Path) -> None:
    # github.com/marot/spotter (Claude Code 2.1.39): four of five sessions over three days read
    # 17,842 tokens at their first call, one 11,442, and one read 0 after 19 min idle, so no warm
    # head (a cold point read nothing): the starts were predicted 0 (the head expired) or at the
    # largest start read capped by the smallest prompt.
    project = tmp_path / "project"
    _session_on(project, "a", "2026-02-10", 17_842)
    _session_on(project, "b", "2026-02-11", 11_442, idle_read=0)
    _session_on(project, "c", "2026-02-11", 17_842)  # (b's head expired 4 h before)
    _session_on(project, "d", "2026-02-12", 17_842)
    result = run_audit([project])
    first = {Path(row.file).stem: row.predicted_cache_read for row in result.rows if row.index == 0}
    assert first == {"a": 17_842, "b": 17_842, "c": 17_842, "d": 17_842}
    idle = next(row for row in result.rows if row.index == 2)
    assert idle.predicted_cache_read == 0 and idle.read_within  # not read after an expiry
    assert sum(row.read_within for row in result.rows) == len(result.rows) - 1  # b's start only
    assert any("17,842 tokens kept warm by the account for sessions' first calls: 3 lane starts" in n for n in result.notes)


def _two_turns(version: str, output: int, stop: object = "end_turn", read_next: int | None = None) -> list[dict]:
    """A main thread's turn (20,000 tokens written, ``output`` out, ending with ``stop``) and the
    next user turn 3 min later, reading ``read_next`` (the prompt and the reply by default)."""
    t = Transcript(version=version)
    t.user("go", "2026-06-01T00:00:00.000Z", root=True)
    t.assistant("r1", "2026-06-01T00:00:02.000Z", [cc_usage(3, 20_000, 0, output)], model="claude-sonnet-4-6")
    t.lines[-1]["message"]["stop_reason"] = stop
    t.user("next", "2026-06-01T00:03:00.000Z")
    read = 20_000 + output if read_next is None else read_next
    t.assistant("r2", "2026-06-01T00:03:02.000Z", [cc_usage(3, 500, read, 9)], model="claude-sonnet-4-6")
    return t.lines


def test_from_2_1_185_a_turns_reply_is_read_by_the_next_turn(tmp_path: Path) -> None:
    """Claude Code 2.1.185 on sends a call of its own after a main-thread turn ends (no line of
    the transcript), writing the turn's prompt and reply: the next turn reads the reply too (two
    public sessions, 36 of 38 times, to 3 tokens). Failed before: 20,000 predicted (the prompt)."""
    def predicted(lines: list[dict]) -> int:
        result = run_audit([write_jsonl(tmp_path / "s.jsonl", lines)])
        return result.rows[1].predicted_cache_read

    assert predicted(_two_turns("2.1.185", 1_500)) == 21_500
    # The assumption is said (the predictions rest on a call the transcript does not hold); not where it is not made.
    said = ("1 main-thread turn(s) that ended on Claude Code 2.1.185 or later: the next call is predicted to read the turn's "
            "reply too, which a call of Claude Code's own, not in the transcript, wrote after the turn")
    assert any(n.startswith(said) for n in run_audit([write_jsonl(tmp_path / "s.jsonl", _two_turns("2.1.185", 1_500))]).files[0].notes)
    assert not any("2.1.185" in n for n in run_audit([write_jsonl(tmp_path / "s.jsonl", _two_turns("2.1.177", 1_500))]).files[0].notes)
    assert predicted(_two_turns("2.1.219", 6_042)) == 26_042
    # Not before 2.1.185, not after a tool call, not past the largest reply seen written.
    assert predicted(_two_turns("2.1.177", 1_500, read_next=20_000)) == 20_000
    assert predicted(_two_turns("2.1.185", 1_500, stop="tool_use", read_next=20_000)) == 20_000
    assert predicted(_two_turns("2.1.185", 9_962, read_next=20_000)) == 20_000
    # A next turn that does not send the reply back whole reads the prompt alone.
    lines = _two_turns("2.1.185", 1_500, read_next=20_000)
    lines[-1]["message"]["usage"] = cc_usage(3, 400, 20_000, 9)  # its prompt: 20,403 < 21,500
    assert predicted(lines) == 20_000


def test_prompt_snapshots_are_compared_with_the_lanes_previous_one(tmp_path: Path) -> None:
    # 2.1.263's first snapshot of a session lists no tools, the next (seconds later) does: no
    # change is read from the tools the first one lacks. A tool is compared by the definition sent
    # (``schema``), and a snapshot equal to the one before in both parts is logged as the same.
    def snap(uuid: str, system: list[str], tools: list[dict] | None) -> dict:
        snapshot: dict = {"type": "prompt_snapshot", "systemPrompt": system}
        if tools is not None:
            snapshot["tools"] = tools
        return {"parentUuid": t.last, "isSidechain": False, "attachment": snapshot, "type": "attachment", "uuid": uuid,
                "timestamp": "2026-09-09T07:53:56.500Z", "sessionId": "s1", "version": "2.1.263"}

    def tool(name: str, about: str) -> dict:
        return {"name": name, "description": about, "schema": {"name": name, "description": about, "input_schema": {}}}

    t = Transcript(version="2.1.263")
    for uuid, system, tools in (("s1", ["A", "B"], None), ("s2", ["A", "B"], [tool("Bash", "run")])):
        t.lines.append(snap(uuid, system, tools))
        t.last = uuid
    t.user("go", "2026-09-09T07:53:57.000Z")
    t.assistant("r1", "2026-09-09T07:53:59.000Z", [cc_usage(3, 3000, 0, 9)])
    t.user("done", "2026-09-09T07:54:00.000Z", tool=True)
    t.lines.append(snap("s3", ["A", "B"], [tool("Bash", "run")]))
    t.last = "s3"
    t.assistant("r2", "2026-09-09T07:54:02.000Z", [cc_usage(3, 100, 3000, 9)])
    t.user("done", "2026-09-09T07:54:03.000Z", tool=True)
    t.lines.append(snap("s4", ["A", "C"], [tool("Bash", "run a command"), tool("Read", "read")]))
    t.last = "s4"
    t.assistant("r3", "2026-09-09T07:54:05.000Z", [cc_usage(3, 100, 3100, 9)])
    requests, summaries = load_trace([write_jsonl(tmp_path / "s1.jsonl", t.lines)])
    # The file's note said "system prompt and tools are not in a transcript" of a file whose four
    # rows hold them: it says what the rows are used for.
    assert summaries[0].notes[0] == (
        "system prompt and tools are not in a transcript's messages: each lane's head is an opaque prefix sized from "
        "reported reads; its 4 prompt_snapshot row(s), which hold them, are compared row to row to tell a change of "
        "the head, not to size it")
    snapshots = [[e for e in r.events if e[0].startswith("snapshot_")] for r in requests]
    assert snapshots == [
        [],
        [("snapshot_same", "")],
        [("snapshot_system_change", "1 of 2 blocks differ, ~0 -> ~0 tokens"), ("snapshot_tools_change", "+Read ~Bash")],
    ]


def test_a_snapshot_whose_system_prompt_lost_blocks_counts_them_of_the_longer_prompt() -> None:
    """Blocks dropped are blocks that differ, counted of the longer of the two prompts: a system
    prompt of three blocks cut to its first said '2 of 1 blocks differ' (of the new one's count)."""
    from prefixbench.workloads.logs.formats.claude_code import snapshot_diff

    shrunk = snapshot_diff(("A" * 40, "B" * 40, "C" * 40), None, ("A" * 40,), None)
    grown = snapshot_diff(("A" * 40,), None, ("A" * 40, "B" * 40, "C" * 40), None)
    assert shrunk == [("snapshot_system_change", "2 of 3 blocks differ, ~30 -> ~10 tokens")]
    assert grown == [("snapshot_system_change", "2 of 3 blocks differ, ~10 -> ~30 tokens")]


def test_a_snapshot_holding_a_lone_surrogate_is_compared_not_a_traceback(tmp_path: Path) -> None:
    """A transcript line may hold an escaped lone surrogate (valid JSON, read by ``json.loads``);
    a snapshot's tool definitions and non-text system blocks were made JSON text by msgspec, whose
    UnicodeEncodeError was a traceback. They compare as any other: the same definitions are the
    same, a changed one is named."""
    from prefixbench.workloads.logs.formats.claude_code import _snapshot_parts

    def tool(about: str) -> dict:
        return {"name": "Bash", "description": about, "schema": {"name": "Bash", "description": about, "input_schema": {}}}

    block = {"type": "text", "text": "B \ud800"}
    first = _snapshot_parts({"systemPrompt": ["A", block], "tools": [tool("run \ud800")]})
    again = _snapshot_parts({"systemPrompt": ["A", dict(block)], "tools": [tool("run \ud800")]})
    other = _snapshot_parts({"systemPrompt": ["A", block], "tools": [tool("run \udc80")]})
    assert first == again and first[1] != other[1]
    t = Transcript(version="2.1.263")
    for uuid, about in (("s1", "run \ud800"), ("s2", "run \udc80")):
        t.lines.append({"parentUuid": t.last, "isSidechain": False, "type": "attachment", "uuid": uuid,
                        "attachment": {"type": "prompt_snapshot", "systemPrompt": ["A", block], "tools": [tool(about)]},
                        "timestamp": "2026-09-09T07:53:56.500Z", "sessionId": "s1", "version": "2.1.263"})
        t.last = uuid
    t.user("go", "2026-09-09T07:53:57.000Z")
    t.assistant("r1", "2026-09-09T07:53:59.000Z", [cc_usage(3, 3000, 0, 9)])
    log = tmp_path / "s1.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in t.lines))
    (request,) = load_trace([log])[0]
    assert ("snapshot_tools_change", "~Bash") in request.events


def _event(event: dict) -> dict:
    """A stream event ``--include-partial-messages`` prints: the API's own, wrapped."""
    return {"type": "stream_event", "event": event, "session_id": "run-1", "parent_tool_use_id": None, "uuid": f"ev-{id(event)}"}


def _partial_run(start: dict, block_usage: dict, delta: dict) -> list[dict]:
    """One call of a run with partial messages: message_start, two content blocks printed as
    assistant lines (with message_start's usage), then message_delta and message_stop."""
    return [
        {"type": "system", "subtype": "init", "session_id": "run-1", "uuid": "init", "model": "claude-sonnet-4-5-20250929",
         "claude_code_version": "2.1.190", "tools": ["Bash"]},
        _event({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [],
                                                      "model": "claude-sonnet-4-5-20250929", "usage": start}}),
        _event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        _streamed("assistant", "a1", [{"type": "text", "text": "Looking."}], usage=block_usage, message_id="msg_1"),
        _event({"type": "content_block_stop", "index": 0}),
        _streamed("assistant", "a1b", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}], usage=block_usage, message_id="msg_1"),
        _event({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": delta}),
        _event({"type": "message_stop"}),
    ]


def test_a_partial_messages_run_through_a_gateway_counts_the_message_deltas_usage(tmp_path: Path) -> None:
    # A gateway that counts at the end (OpenRouter's Anthropic endpoint) gives message_start all
    # zeros; the assistant lines carry them; the message_delta holds the call's counts. Before:
    # "usage all zero", nothing to audit.
    zeros = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": None, "cache_read_input_tokens": None}
    delta = {"input_tokens": 19_660, "output_tokens": 33, "cache_creation_input_tokens": None, "cache_read_input_tokens": 0}
    path = write_jsonl(tmp_path / "run.jsonl", _partial_run(zeros, zeros, delta))
    requests, (summary,) = load_trace([path])
    (call,) = requests
    assert (call.request_id, call.line) == ("msg_1", 6)
    assert (call.usage.uncached, call.usage.cache_read, call.usage.cache_write_5m, call.usage.output) == (19_660, 0, 0, 33)
    assert summary.skipped == ()


def test_a_partial_messages_run_takes_the_final_output_count_from_the_delta(tmp_path: Path) -> None:
    # Anthropic's message_start counts the prompt and the first output token; the content
    # blocks are printed with that usage; message_delta has the final output count. Before:
    # the call's output was 1.
    start = cc_usage(4, 1_200, 18_000, 1)
    delta = {"output_tokens": 412}
    path = write_jsonl(tmp_path / "run.jsonl", _partial_run(start, start, delta))
    (call,), _ = load_trace([path])
    assert (call.usage.uncached, call.usage.cache_read, call.usage.cache_write_5m, call.usage.output) == (4, 18_000, 1_200, 412)


def test_a_delta_of_another_thread_or_without_counts_changes_nothing(tmp_path: Path) -> None:
    start = cc_usage(4, 1_200, 18_000, 1)
    lines = _partial_run(start, start, {"output_tokens": None})
    lines.append(dict(_event({"type": "message_delta", "delta": {}, "usage": {"output_tokens": 999}}), session_id="other-run"))
    path = write_jsonl(tmp_path / "run.jsonl", lines)
    (call,), _ = load_trace([path])
    assert call.usage.output == 1


def test_a_bad_count_in_a_message_delta_names_the_deltas_line(tmp_path: Path) -> None:
    # The count is the message_delta's (line 7): the error named the assistant line before it
    # (line 6), whose counts are fine, both where the call was counted and where it was held
    # for its zero usage.
    import pytest

    from prefixbench.simulator.errors import UserError

    zeros = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": None, "cache_read_input_tokens": None}
    for start in (cc_usage(4, 1_200, 18_000, 1), zeros):
        path = write_jsonl(tmp_path / "run.jsonl", _partial_run(start, start, {"input_tokens": 9, "output_tokens": "412"}))
        with pytest.raises(UserError, match=r"run\.jsonl:7: usage\.output_tokens is not a non-negative integer \('412'\)"):
            load_trace([path])


def _forked_project(root: Path, *, parent: bool = True, chained: bool = False) -> Path:
    """A Claude Code 2.1.237 session that spawns a fork subagent (2.1.232 on, the default): the
    main thread's second call answers with an ``Agent`` call; the fork's transcript
    (``<session>/subagents/agent-<id>.jsonl``) opens with a ``fork-context-ref`` entry, then the
    parent's message restated (same request id and usage, a new uuid), then a user message of the
    placeholder result and the directive, then the fork's own two calls. Its first call reads the
    parent's call's prompt (20,000 read + 1,500 written); ``parent``: the main file too;
    ``chained``: the restated message hangs off the parent's entry ``parentLastUuid`` names (a
    uuid of another file) rather than starting the file's chain."""
    main = Transcript("s1", version="2.1.237")
    main.user("go", "2026-08-20T10:00:00.000Z", root=True)
    main.assistant("r1", "2026-08-20T10:00:05.000Z", [cc_usage(3, 20000, 0, 300)])
    main.user("out", "2026-08-20T10:00:06.000Z", tool=True)
    spawned_from = main.last
    main.assistant("r2", "2026-08-20T10:00:09.000Z", [cc_usage(3, 1500, 20000, 200)])
    dispatch = main.lines[-1]
    dispatch["message"]["content"] = [{"type": "tool_use", "id": "toolu_F", "name": "Agent",
                                       "input": {"description": "d", "prompt": "look", "subagent_type": "fork"}}]
    main.user("Async agent launched", "2026-08-20T10:00:10.000Z", tool=True)
    main.assistant("r3", "2026-08-20T10:00:14.000Z", [cc_usage(3, 400, 21500, 100)])
    if parent:
        write_jsonl(root / "s1.jsonl", main.lines)
    fork = Transcript("s1", version="2.1.237", sidechain=True)
    fork.lines.append({**dispatch, "uuid": "fork-restated", "parentUuid": spawned_from if chained else None, "isSidechain": True})
    fork.last, fork.n = "fork-restated", 10
    fork.user("directive", "2026-08-20T10:00:10.000Z")
    fork.lines[-1]["message"]["content"] = [
        {"type": "tool_result", "tool_use_id": "toolu_F", "content": [{"type": "text", "text": "Fork started \u2014 processing in background"}]},
        {"type": "text", "text": "<fork-boilerplate>\nYou are a worker fork.\n</fork-boilerplate>\n\nYour directive: look"}]
    fork.assistant("f1", "2026-08-20T10:00:13.000Z", [cc_usage(3, 700, 21500, 50)])
    fork.user("ok", "2026-08-20T10:00:14.000Z", tool=True)
    fork.assistant("f2", "2026-08-20T10:00:17.000Z", [cc_usage(3, 300, 22200, 60)])
    ref = {"type": "fork-context-ref", "agentId": "afork1", "parentSessionId": "s1", "parentLastUuid": spawned_from, "contextLength": 4}
    write_jsonl(root / "s1" / "subagents" / "agent-afork1.jsonl", [ref, *({**line, "agentId": "afork1"} for line in fork.lines)])
    (root / "s1" / "subagents" / "agent-afork1.meta.json").write_text(json.dumps(
        {"agentType": "fork", "isFork": True, "description": "d", "toolUseId": "toolu_F", "spawnDepth": 1, "model": "inherit"}))
    return root


@pytest.mark.parametrize("chained", [False, True])
def test_claude_code_fork_subagent_extends_the_call_that_spawned_it(tmp_path: Path, chained: bool) -> None:
    # Claude Code 2.1.232: forks inherit the conversation and its prompt cache. Before, the fork's
    # first call was a lane start expected to read nothing ("21,500 tokens more than the model
    # predicts"), its parent said to be in no log of the audit.
    project = _forked_project(tmp_path, chained=chained)
    result = run_audit([project])
    rows = {(Path(r.file).name, r.index): r for r in result.rows}
    first = rows[("agent-afork1.jsonl", 0)]
    assert (first.expected_cache_read, first.reported_cache_read) == (21_500, 21_500)
    assert rows[("agent-afork1.jsonl", 1)].expected_cache_read == 22_200
    assert not any("not in this audit" in note for note in result.notes)
    # By hand: r1-r3 of the main thread and f1, f2 of the fork (the restated r2 once).
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (5, 15, 85_200, 22_900, 710)
    # Read in workers (audit --jobs), the same.
    assert load_trace([project], map_files=functools.partial(map_runs, jobs=2)) == load_trace([project])


def test_claude_code_fork_transcript_alone_counts_no_call_of_the_parent(tmp_path: Path) -> None:
    # The restated message is the parent's call: read without the parent's transcript it is not
    # counted as the fork's (before: a call of 20,000 read and 1,500 written in the fork's lane),
    # and the audit says the fork's first call extends a call whose log it does not have.
    project = _forked_project(tmp_path, parent=False)
    requests, summaries = load_trace([project])
    assert [r.request_id for r in requests] == ["f1", "f2"]
    fork = next(s for s in summaries if s.format == "claude-code")
    assert [why for _, why in fork.skipped] == [
        "the parent's call a fork subagent's transcript restates (fork-context-ref): counted in the parent's transcript"]
    assert fork.call_parents == ("r2",)
    result = run_audit([project])
    assert any("1 lane start(s) extend a call of another thread whose log is not in this audit" in note for note in result.notes)


def _forked_session(root: Path, how: str, *, parent: bool = True, fork_name: str = "b7f0-fork") -> Path:
    """A Claude Code 2.1.219 session ``a1c9-source`` (two calls, the second reading the first's
    20,000 and writing 1,500) and a session forked from it in the same project folder, whose first
    own call, 40 s later, reads all 21,500 of them. ``how`` is how the fork's file was written
    (qlan-ro/mainframe docs/research/2026-07-25-todo-246-claude-fork.md, read from the 2.1.219
    bundle and run against it):

    * ``branch``: ``/branch`` copies every entry, its ``uuid`` and ``requestId`` kept, ``sessionId``
      the fork's, ``parentUuid`` rebuilt as a chain, and ``forkedFrom {sessionId, messageUuid}``;
    * ``sdk``: the Agent SDK's ``forkSession()`` does the same with new uuids (``parentUuid``
      mapped to them, ``forkedFrom.messageUuid`` the original's) and a ``custom-title`` entry;
    * ``resume``: ``claude --resume <id> --fork-session`` writes the entries again, uuids kept,
      ``sessionId`` the fork's, no ``forkedFrom``, after a ``mode`` entry of the fork's own.
    * ``requested``: the same as Claude Code 2.1.329 writes it (read from the npm package's
      binary): each copied assistant entry also names the session whose request it was
      (``requestSessionId``), and the fork's file holds the bookkeeping entries that release
      writes (``session-owner``, ``derived-from``, ``tools-used``, the request-replay rows
      ``api-request-shape``, ``api-request-blob``, ``api-request``): none a call.

    ``parent``: the source's file is written too."""
    source = Transcript("a1c9-source", version="2.1.219")
    source.user("go", "2026-08-20T10:00:00.000Z", root=True)
    source.assistant("req_s1", "2026-08-20T10:00:05.000Z", [cc_usage(3, 20000, 0, 300)])
    source.user("out", "2026-08-20T10:00:06.000Z", tool=True)
    source.assistant("req_s2", "2026-08-20T10:00:09.000Z", [cc_usage(3, 1500, 20000, 200)])
    if parent:
        write_jsonl(root / "a1c9-source.jsonl", source.lines)
    copied: list[dict] = [{"type": "mode", "mode": "normal", "sessionId": fork_name}] if how in ("resume", "requested") else []
    if how == "requested":
        copied += _bookkeeping_2_1_329(fork_name, source="a1c9-source")
    renamed = {line["uuid"]: (f"9e{n:02d}-{line['uuid']}" if how == "sdk" else line["uuid"]) for n, line in enumerate(source.lines)}
    previous = None
    for line in source.lines:
        copy = dict(line, sessionId=fork_name, uuid=renamed[line["uuid"]], parentUuid=previous)
        if how in ("branch", "sdk"):
            copy["forkedFrom"] = {"sessionId": "a1c9-source", "messageUuid": line["uuid"]}
        if how == "requested" and line["type"] == "assistant":
            copy["requestSessionId"] = "a1c9-source"
        copied.append(copy)
        previous = copy["uuid"]
    if how == "sdk":
        copied.append({"type": "custom-title", "customTitle": "go (fork)", "sessionId": fork_name})
    fork = Transcript(fork_name, version="2.1.219")
    fork.last, fork.n = previous, 20
    fork.user("try another way", "2026-08-20T10:00:50.000Z")
    if how == "requested":
        fork.lines += _request_replay_2_1_329(fork_name, "2026-08-20T10:00:50.500Z")
    fork.assistant("req_f1", "2026-08-20T10:00:54.000Z", [cc_usage(3, 600, 21500, 150)])
    fork.user("out", "2026-08-20T10:00:55.000Z", tool=True)
    fork.assistant("req_f2", "2026-08-20T10:00:58.000Z", [cc_usage(3, 400, 22100, 90)])
    write_jsonl(root / f"{fork_name}.jsonl", copied + fork.lines)
    return root


def _bookkeeping_2_1_329(session: str, source: str | None = None) -> list[dict]:
    """Entries Claude Code 2.1.3xx writes beside the messages that are no message (their shapes
    read from the 2.1.332 binary's writers; the values made up)."""
    rows: list[dict] = [
        {"type": "session-owner", "accountUuid": "acc-1", "organizationUuid": "org-1", "sessionId": session},
        {"type": "tools-used", "tools": ["Read", "Bash"], "sessionId": session},
        {"type": "data-flow-records", "v": 1, "sessionId": session, "records": []},
        {"type": "resume-head-vouch", "sessionId": session, "sum": "9f2c"},
    ]
    if source is not None:
        rows.append({"type": "derived-from", "v": 1, "sessionId": session,
                     "sessions": [{"type": "claude_code_session", "id": source, "via": "resume"}]})
    return rows


def _request_replay_2_1_329(session: str, when: str) -> list[dict]:
    """The request-replay rows 2.1.3xx writes as a request is sent: the system prompt and tools
    once per shape, each new message once (a blob: the message as sent, role and content, no
    usage), and the request naming its shape, the request it extends and the messages kept."""
    return [
        {"type": "api-request-shape", "sessionId": session, "shapeHash": "s1", "timestamp": when, "version": "2.1.329",
         "shape": {"system": [{"type": "text", "text": "You are Claude Code."}], "tools": []}},
        {"type": "api-request-blob", "sessionId": session, "hash": "m9",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "earlier reply"}]}},
        {"type": "api-request", "sessionId": session, "id": "q1", "timestamp": when, "version": "2.1.329",
         "querySource": "repl_main_thread", "shapeHash": "s1", "params": {"model": "claude-sonnet-4-5-20250929", "max_tokens": 32000},
         "base": "q0", "keep": 4, "tail": ["m9"], "cacheControl": [], "requestDigest": "d1"},
    ]


@pytest.mark.parametrize("how", ["branch", "sdk", "resume", "requested"])
@pytest.mark.parametrize("fork_name", ["0d31-fork", "f4e2-fork"])  # read before the source's file, and after
def test_claude_code_forked_session_extends_the_last_call_it_copied(tmp_path: Path, how: str, fork_name: str) -> None:
    # The fork's first call reads what the source's last call left cached (21,500). Before, a fork
    # whose copies have new uuids (the Agent SDK's forkSession) extended a node no request had:
    # expected 0, and the audit said its source's log was not in it.
    project = _forked_session(tmp_path, how, fork_name=fork_name)
    result = run_audit([project])
    first = next(r for r in result.rows if Path(r.file).name == f"{fork_name}.jsonl" and r.reported_cache_read == 21_500)
    assert abs(first.expected_cache_read - 21_500) <= 0.03 * 21_500
    assert not any("not in this audit" in note for note in result.notes)
    # Each call counted once: the source's two and the fork's two.
    t = result.totals
    assert (t.requests, t.cache_read, t.cache_write) == (4, 63_600, 22_500)


def test_claude_code_forked_session_alone_counts_no_call_of_its_source(tmp_path: Path) -> None:
    # The copies marked forkedFrom are the source session's calls: read without its transcript they
    # are listed, not counted as the fork's (before: counted, 20,000 written by a call of this file),
    # and the audit says the fork's first call extends a call whose log it does not have, its
    # expected read the head's rather than a guess.
    project = _forked_session(tmp_path, "branch", parent=False)
    requests, summaries = load_trace([project])
    assert [r.request_id for r in requests] == ["req_f1", "req_f2"]
    fork = next(s for s in summaries if s.format == "claude-code")
    assert [why for _, why in fork.skipped] == [
        "the source session's call a forked session's transcript copies (forkedFrom): counted in that session's transcript"] * 2
    assert fork.call_parents == ("req_s2",)
    assert any("copying 2 call(s) of session a1c9-source" in note for note in fork.notes)
    # The reader's note does not claim the read was measured against the source's call: the
    # source is not read here (before: "measured against what that call left cached", alone).
    copied = next(note for note in fork.notes if "forkedFrom" in note)
    assert copied.endswith("where its log is in the audit (else the head's)")
    result = run_audit([project])
    assert any("1 lane start(s) extend a call of another thread whose log is not in this audit (b7f0-fork.jsonl:" in note
               for note in result.notes)
    # Read in workers (audit --jobs), the same.
    assert load_trace([project], map_files=functools.partial(map_runs, jobs=2)) == (requests, summaries)


def test_claude_code_copies_marked_with_request_session_id_are_the_sources_calls(tmp_path: Path) -> None:
    # Claude Code 2.1.326 on names the session whose request a copied assistant entry was
    # (requestSessionId): read without the source's transcript, a --fork-session fork's copies are
    # listed, not counted as its own (before: counted, 4 calls with the source's 20,000 written
    # and 20,000 read), and its first call extends the last of them.
    project = _forked_session(tmp_path, "requested", parent=False)
    requests, summaries = load_trace([project])
    assert [r.request_id for r in requests] == ["req_f1", "req_f2"]
    fork = next(s for s in summaries if s.format == "claude-code")
    assert [why for _, why in fork.skipped] == [
        "another session's call this transcript copies (requestSessionId, Claude Code 2.1.326 on): counted in that "
        "session's transcript"] * 2
    assert fork.call_parents == ("req_s2",)
    assert requests[0].prefix.parent is not None and "req_s2" in requests[0].prefix.parent
    assert any(note.startswith("a transcript copying another session's history (requestSessionId: a forked or resumed "
                               "session) copying 2 call(s) of session a1c9-source") for note in fork.notes)
    # Hand sums of the fork's own two calls: input 3 + 3, writes 600 + 400, reads 21,500 + 22,100, output 150 + 90.
    t = run_audit([project]).totals
    assert (t.requests, t.input, t.cache_write, t.cache_read, t.output) == (2, 6, 1_000, 43_600, 240)
    # An entry naming its own session (the source's own calls, as 2.1.329 writes none) is counted.
    own = [dict(line, requestSessionId=line["sessionId"]) if line.get("type") == "assistant" else line
           for line in map(json.loads, (project / "b7f0-fork.jsonl").read_text().splitlines())]
    own = [dict(line, requestSessionId="b7f0-fork") if line.get("requestSessionId") == "a1c9-source" else line for line in own]
    requests, _ = load_trace([write_jsonl(tmp_path / "own" / "b7f0-fork.jsonl", own)])
    assert [r.request_id for r in requests] == ["req_s1", "req_s2", "req_f1", "req_f2"]


def test_claude_code_2_1_329_bookkeeping_entries_are_no_calls(tmp_path: Path) -> None:
    """A 2.1.329 session: the new bookkeeping entries (session-owner, tools-used, data-flow-records,
    resume-head-vouch) and the request-replay rows before each call (api-request-shape,
    api-request-blob whose message is an assistant message as sent, api-request) are detected as
    the transcript's, counted as no call and break no chain."""
    t = Transcript("c3d4-new", version="2.1.329")
    t.lines += _bookkeeping_2_1_329("c3d4-new")
    t.user("go", "2026-11-20T10:00:00.000Z", root=True)
    t.lines += _request_replay_2_1_329("c3d4-new", "2026-11-20T10:00:00.100Z")
    t.assistant("req_1", "2026-11-20T10:00:03.000Z", [cc_usage(3, 12_000, 0, 200)])
    t.user("out", "2026-11-20T10:00:04.000Z", tool=True)
    t.lines += _request_replay_2_1_329("c3d4-new", "2026-11-20T10:00:04.100Z")
    t.assistant("req_2", "2026-11-20T10:00:07.000Z", [cc_usage(3, 900, 12_000, 60)])
    path = write_jsonl(tmp_path / "c3d4-new.jsonl", t.lines)
    assert detect_format(path).name == "claude-code"
    requests, summaries = load_trace([path])
    assert [r.request_id for r in requests] == ["req_1", "req_2"]
    assert requests[1].prefix.parent == requests[0].prefix.node  # the second call extends the first
    result = run_audit([path])
    t2 = result.totals
    assert (t2.requests, t2.input, t2.cache_write, t2.cache_read, t2.output) == (2, 6, 12_900, 12_000, 260)
    assert abs(result.rows[1].expected_cache_read - 12_000) <= 0.03 * 12_000


_HEAD_1 = ["You are Claude Code, Anthropic's CLI.", "# Env\nShell: zsh"]
_HEAD_3 = ["You are Claude Code, Anthropic's CLI.", "# Env\nShell: bash"]


def _wire_tool(name: str) -> dict:
    return {"name": name, "description": f"The {name} tool.", "input_schema": {"type": "object", "properties": {}}}


#: The shapes of :func:`_session_2_1_332`: system blocks and tools (S2 adds Read, S3 changes the environment block).
_SHAPES = {"S1": (_HEAD_1, ["Bash"]), "S2": (_HEAD_1, ["Bash", "Read"]), "S3": (_HEAD_3, ["Bash", "Read"])}


def _session_2_1_332() -> Transcript:
    """A 2.1.332-shaped main-thread session with request-replay rows (their layout read from the
    binary's writer: ``api-request`` id/base/keep/tail/shapeHash, ``api-request-shape`` once a hash,
    ``api-request-blob`` once a message; ``requestRef`` on each response naming its row; hashes
    made up). Calls: r1 the chain's first (no base); r2 adds the Read tool; r3 changes a system
    block; r4 the same head, all 5 messages kept; r5 rewrites message 5 (a tool result cleared);
    a compaction, then r6 (keeps nothing: no base); r7 whose messages were cut (``cut``); r8 whose
    base is r5's row, not r7's (the chain's parent)."""
    t = Transcript("e5f6-new", version="2.1.332")
    shapes_written: set[str] = set()

    def rows(ident: str, base: str | None, keep: int, tail: list[str], shape: str, *, cut: bool = False,
             blobs: dict[str, dict] | None = None) -> None:
        if shape not in shapes_written:
            shapes_written.add(shape)
            system, tools = _SHAPES[shape]
            t.lines.append({"type": "api-request-shape", "sessionId": "e5f6-new", "shapeHash": shape,
                            "timestamp": "2026-11-25T09:00:00.000Z", "version": "2.1.332",
                            "shape": {"system": [{"type": "text", "text": text} for text in system],
                                      "tools": [_wire_tool(name) for name in tools]}})
        for digest, message in (blobs or {}).items():
            t.lines.append({"type": "api-request-blob", "sessionId": "e5f6-new", "hash": digest, "message": message})
        row: dict = {"type": "api-request", "sessionId": "e5f6-new", "id": ident, "timestamp": "2026-11-25T09:00:00.000Z",
                     "version": "2.1.332", "querySource": "repl_main_thread", "shapeHash": shape,
                     "params": {"model": "claude-sonnet-4-5-20250929", "max_tokens": 32000}, "echoWireToolInputs": False,
                     "keep": keep, "tail": tail, "cacheControl": []}
        if base is not None:
            row["base"] = base
        row.update({"cut": {"kind": "tool-mark-address", "cuts": 1}, "cutRequestDigest": "cd"} if cut else {"requestDigest": "d"})
        t.lines.append(row)

    def call(key: str, ref: str, when: str, usage: dict) -> None:
        t.assistant(key, when, [usage], model="claude-sonnet-4-5-20250929")
        t.lines[-1]["requestRef"] = ref

    def result(text: str) -> dict:
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": text}]}

    t.user("go", "2026-11-25T09:00:00.000Z", root=True)
    rows("q1", None, 0, ["h1"], "S1")
    call("r1", "q1", "2026-11-25T09:00:03.000Z", cc_usage(3, 10_000, 0, 50))
    t.user("out 2", "2026-11-25T09:00:04.000Z", tool=True)
    rows("q2", "q1", 1, ["a1", "h2"], "S2")
    call("r2", "q2", "2026-11-25T09:00:07.000Z", cc_usage(3, 10_100, 0, 50))
    t.user("out 3", "2026-11-25T09:00:08.000Z", tool=True)
    rows("q3", "q2", 3, ["a2", "h3"], "S3", blobs={"h3": result("out 3")})
    call("r3", "q3", "2026-11-25T09:00:11.000Z", cc_usage(3, 10_200, 0, 50))
    t.user("out 4", "2026-11-25T09:00:12.000Z", tool=True)
    rows("q4", "q3", 5, ["a3", "h4"], "S3")
    call("r4", "q4", "2026-11-25T09:00:15.000Z", cc_usage(3, 100, 10_200, 50))
    t.user("out 5", "2026-11-25T09:00:16.000Z", tool=True)
    rows("q5", "q4", 4, ["h3x", "a3", "h4", "a4", "h5"], "S3", blobs={"h3x": result("[cleared]")})
    call("r5", "q5", "2026-11-25T09:00:19.000Z", cc_usage(3, 300, 10_000, 50))
    t.compact_boundary("2026-11-25T09:01:00.000Z")
    t.user("This session is being continued: a summary.", "2026-11-25T09:01:00.100Z")
    rows("q6", None, 0, ["h6"], "S3")
    call("r6", "q6", "2026-11-25T09:01:03.000Z", cc_usage(3, 2_000, 9_000, 50))
    t.user("out 7", "2026-11-25T09:01:04.000Z", tool=True)
    rows("q7", "q6", 1, ["a6", "h7"], "S3", cut=True)
    call("r7", "q7", "2026-11-25T09:01:07.000Z", cc_usage(3, 100, 11_000, 50))
    t.user("out 8", "2026-11-25T09:01:08.000Z", tool=True)
    rows("q8", "q5", 7, ["a5", "h8"], "S2")
    call("r8", "q8", "2026-11-25T09:01:11.000Z", cc_usage(3, 100, 11_100, 50))
    return t


def test_claude_code_2_1_332_request_rows_say_what_changed_since_the_call_extended(tmp_path: Path) -> None:
    # Before: the rows were read past, and no call's events said what its row shows.
    path = write_jsonl(tmp_path / "e5f6-new.jsonl", _session_2_1_332().lines)
    requests, summaries = load_trace([path])
    assert [r.request_id for r in requests] == [f"r{i}" for i in range(1, 9)]
    rows = [[e for e in r.events if e[0].startswith("request_")] for r in requests]
    # Hand sums: the system blocks are 37 + 16 characters (S1, S2) and 37 + 17 (S3): ~13 tokens both.
    assert rows == [
        [],  # the chain's first row: no base
        [("request_tools_change", "+Read")],
        [("request_system_change", "1 of 2 blocks differ, ~13 -> ~13 tokens")],
        [("request_same", "kept all 5 messages, added 2")],
        # kept 4 of r4's 1 + 2 + 2 + 2 = 7; message 5 is r3's tool result, cleared: its one block differs
        [("request_messages_change", "message 5 of the 7 the previous request sent differs, from its block 1")],
        [],  # after the compaction: kept nothing, so no base
        [],  # messages cut: the head is the same, the messages recorded are not the ones sent
        [],  # its base (q5) is not the row of the call the chain says it extends (r7's q7)
    ]
    assert ("compaction", "") in requests[5].events
    # r2, r3, r4, r5 and r7 had their row compared with their parent's.
    assert any(note.startswith("5 call(s) whose api-request row and the one it extends are both in the file")
               for note in summaries[0].notes)
    # The calls are counted as before: input 8 x 3, writes and reads as given, output 8 x 50.
    t = run_audit([path]).totals
    assert (t.requests, t.input, t.cache_write, t.cache_read, t.output) == (
        8, 24, 10_000 + 10_100 + 10_200 + 100 + 300 + 2_000 + 100 + 100, 10_200 + 10_000 + 9_000 + 11_000 + 11_100, 400)


def test_claude_code_request_rows_whose_hash_changed_without_their_shape_rows_say_the_head_changed(tmp_path: Path) -> None:
    # The session with its shape rows left out (written in an earlier file, as when a session is
    # resumed): on the base r2 and r3, whose hash differs from their base's, got no event for it,
    # and r5 (shape S3 as r4) none either; now r2 and r3 say the hash changed, r4 and r5 as before.
    lines = [line for line in _session_2_1_332().lines if line.get("type") != "api-request-shape"]
    requests, _ = load_trace([write_jsonl(tmp_path / "e5f6-new.jsonl", lines)])
    changed = ("request_shape_change", "the system prompt or tools changed (their hash did; the shape rows are not in this file)")
    assert [[e for e in r.events if e[0].startswith("request_")] for r in requests[1:5]] == [
        [changed],
        [changed],
        [("request_same", "kept all 5 messages, added 2")],
        [("request_messages_change", "message 5 of the 7 the previous request sent differs, from its block 1")],
    ]


def test_claude_code_request_rows_without_references_change_nothing(tmp_path: Path) -> None:
    # The same session with no requestRef on the responses (as a row-writing build whose responses
    # name no row would be): its calls carry none of the rows' events, and the audit is the same
    # as with them, but for the rows' events and note.
    lines = [{k: v for k, v in line.items() if k != "requestRef"} for line in _session_2_1_332().lines]
    requests, summaries = load_trace([write_jsonl(tmp_path / "e5f6-new.jsonl", lines)])
    assert not any(e[0].startswith("request_") for r in requests for e in r.events)
    assert not any("api-request row" in note for note in summaries[0].notes)


def _turn_after_thinking(model: str, thought: bool = True, version: str = "2.1.90") -> list[dict]:
    """A turn whose first call thinks before a tool call (20,003 tokens of prompt), whose second
    call ends it (1,000 more), then the next user turn, which read the first call's prompt."""
    t = Transcript(version=version)
    t.user("go", "2026-04-01T00:00:00.000Z", root=True)
    t.assistant("r1", "2026-04-01T00:00:02.000Z", [cc_usage(3, 20_000, 0, 400)], model=model)
    if thought:
        t.lines[-1]["message"]["content"] = [{"type": "thinking", "thinking": "", "signature": "s"}, {"type": "tool_use", "id": "t", "name": "Read", "input": {}}]
    t.user("file", "2026-04-01T00:00:03.000Z", tool=True)
    t.assistant("r2", "2026-04-01T00:00:05.000Z", [cc_usage(3, 1_000, 20_000, 50)], model=model)
    t.lines[-1]["message"]["stop_reason"] = "end_turn"
    t.user("next", "2026-04-01T00:01:00.000Z")
    t.assistant("r3", "2026-04-01T00:01:02.000Z", [cc_usage(3, 1_500, 20_003, 9)], model=model)
    return t.lines


def test_a_new_turn_on_a_model_that_drops_earlier_thinking_reads_up_to_where_it_stood(tmp_path: Path) -> None:
    """Anthropic's Haiku models and those before Opus 4.5 and Sonnet 4.6 drop earlier turns'
    thinking at a user turn that is not only tool results: the cached prefix ends at the first
    thinking block dropped, after the prompt of the previous turn's first call that thought
    (IDAHO-VAULT's claude-haiku-4-5 turns read that). Failed before: 21,000 predicted (what the
    previous call left cached)."""
    def predicted(model: str, thought: bool = True) -> int:
        return run_audit([write_jsonl(tmp_path / "s.jsonl", _turn_after_thinking(model, thought))]).rows[2].predicted_cache_read

    assert predicted("claude-haiku-4-5-20251001") == 20_003
    assert predicted("claude-sonnet-4-5-20250929") == 20_003
    # Models that keep earlier thinking, and a turn that thought none, read the whole previous prompt.
    assert predicted("claude-sonnet-4-6") == 21_000
    assert predicted("claude-opus-4-5-20251101") == 21_000
    assert predicted("claude-haiku-4-5-20251001", thought=False) == 21_000


def test_a_new_turn_from_claude_code_2_1_119_keeps_earlier_thinking_on_every_model(tmp_path: Path) -> None:
    """Eduardodmb/ClaudeHome (Claude Code 2.1.119-2.1.136): 110 claude-sonnet-4-5 calls that start
    a user turn after a turn that thought read the previous call's whole prompt, none stopped at
    the first thinking block. Failed before: 20,003 predicted (the thinking taken as dropped)."""
    def predicted(model: str, version: str) -> int:
        path = write_jsonl(tmp_path / "s.jsonl", _turn_after_thinking(model, version=version))
        return run_audit([path]).rows[2].predicted_cache_read

    assert predicted("claude-sonnet-4-5-20250929", "2.1.126") == 21_000
    assert predicted("claude-haiku-4-5-20251001", "2.1.119") == 21_000
    # Before 2.1.119 (2.1.112-2.1.118 unmeasured), dropped as the API page says.
    assert predicted("claude-sonnet-4-5-20250929", "2.1.118") == 20_003


def _typed_subagent(project: Path, name: str, kind: str | None, start: str, head: int) -> None:
    """A Sonnet 4.6 subagent of session ``sess`` on Claude Code 2.1.87 whose first call reads
    ``head`` tokens, with its ``agent-<name>.meta.json`` naming ``kind`` (none where None)."""
    agent = Transcript("sess", version="2.1.87", sidechain=True)
    agent.user(f"task {name}: review the change", f"{start}:00.000Z", root=True)
    agent.assistant(f"{name}-1", f"{start}:04.000Z", [cc_usage(3, 900, head, 90)], model="claude-sonnet-4-6")
    folder = project / "sess" / "subagents"
    write_jsonl(folder / f"agent-{name}.jsonl", agent.lines)
    if kind is not None:
        (folder / f"agent-{name}.meta.json").write_text(json.dumps({"agentType": kind, "description": "x"}))


def test_a_subagents_head_is_its_types_own(tmp_path: Path) -> None:
    # Xu-Wentao/dotfile's session e1dfbe01 (2.1.87): its executor agents read 9,059 tokens at their
    # starts, its code reviewers 6,763 (each type its own system prompt and tools). One head for
    # the session's agents predicted one level for both (8,503 there): 2 of 14 starts within
    # before, 10 after. A file with no meta.json keeps the session's head.
    project = tmp_path / "project"
    for n, start in enumerate(("2026-03-27T09:30", "2026-03-27T09:32", "2026-03-27T09:34")):
        _typed_subagent(project, f"e{n}", "oh-my-claudecode:executor", start, 9_059)
        _typed_subagent(project, f"r{n}", "superpowers:code-reviewer", start.replace(":3", ":4"), 6_763)
    result = run_audit([project])
    starts = {row.lane: row.predicted_cache_read for row in result.rows}
    assert starts == {**{f"agent-e{n}": 9_059 for n in range(3)}, **{f"agent-r{n}": 6_763 for n in range(3)}}
    assert all(row.read_within for row in result.rows)
    requests, _ = load_trace([project])
    assert {r.prefix.head for r in requests} == {
        "claude-code:subagent:claude-sonnet-4-6:2.1.87:sess:oh-my-claudecode:executor",
        "claude-code:subagent:claude-sonnet-4-6:2.1.87:sess:superpowers:code-reviewer"}
    _typed_subagent(tmp_path / "plain", "p0", None, "2026-03-27T09:30", 9_059)
    (plain,), _ = load_trace([tmp_path / "plain"])
    assert plain.prefix.head == "claude-code:subagent:claude-sonnet-4-6:2.1.87:sess"


def _through_copilot_proxy(project: Path, name: str, reads: list[int], wrote: int = 0) -> None:
    """A session of Claude Code 2.1.63 on claude-opus-4.6-1m whose calls read ``reads`` (each
    sending 2,000 tokens more than it read) and report ``wrote`` as written, as a proxy zeroing
    the field gives."""
    t = Transcript(name, version="2.1.63")
    t.user("go", "2026-03-05T10:00:00.000Z", root=True)
    for n, read in enumerate(reads):
        t.assistant(f"{name}-{n}", f"2026-03-05T10:00:{2 + 4 * n:02d}.000Z", [cc_usage(2_000, wrote, read, 50)], model="claude-opus-4.6-1m")
        t.user("result", f"2026-03-05T10:00:{3 + 4 * n:02d}.000Z", tool=True)
    write_jsonl(project / f"{name}.jsonl", t.lines)


def test_a_claude_models_writes_reported_as_0_while_its_reads_grow_are_not_reported(tmp_path: Path) -> None:
    # Damon-Salvetore/claude-code (2.1.63 through copilot-api on localhost:4141): none of 772 calls
    # reports a write, yet its calls read on past what the previous one read. Taken as 0 writes, each call
    # was predicted to read only what the previous read (450 of 772 within before, 638 after).
    project = tmp_path / "project"
    _through_copilot_proxy(project, "proxy", [11_000, 13_000, 15_000, 17_000])
    result = run_audit([project])
    assert [row.predicted_cache_read for row in result.rows[1:]] == [13_000, 15_000, 17_000]
    assert all(row.read_within for row in result.rows[1:])
    (summary,) = load_trace([project])[1]
    assert any("claude-opus-4.6-1m: its writes read as not reported, not 0: all 4 of its call(s) here" in n for n in summary.notes)
    # A file where the model wrote, or whose reads did not grow twice, keeps its zeros.
    _through_copilot_proxy(tmp_path / "wrote", "w", [11_000, 13_000, 15_000], wrote=5)
    _through_copilot_proxy(tmp_path / "flat", "f", [11_000, 11_000, 13_000])
    for folder in ("wrote", "flat"):
        requests, summaries = load_trace([tmp_path / folder])
        assert all(r.usage.writes_reported for r in requests)
        assert not any("not reported, not 0" in n for s in summaries for n in s.notes)


@pytest.mark.parametrize("stamp", [
    "2025-09-03T00:00:02.000Z", "2025-09-03T00:00:02", "2025-09-03T02:00:02.5+02:00", "2025-09-03T00:00:02.123456Z",
    "2025-09-03 00:00:02", "20250903T000002Z", "2025-09-03T00:00:02.0004999Z",
])
def test_an_entrys_iso_time_is_read_as_parse_time_ms_reads_it(tmp_path: Path, stamp: str) -> None:
    """The walk reads an entry's ISO timestamp in place (docs/performance.md, the thirteenth
    round): the same epoch ms as parse_time_ms, an offset-less time read as UTC."""
    from prefixbench.workloads.logs.formats.common import parse_time_ms

    t = Transcript()
    t.user("hello", stamp, root=True)
    t.assistant("req_1", stamp, [cc_usage(3, 2000, 0, 5)])
    requests, _ = load_trace([write_jsonl(tmp_path / "s1.jsonl", t.lines)])
    assert (requests[0].sent_ms, requests[0].ready_ms) == (parse_time_ms(stamp, ""),) * 2


def _iso_stamps():
    """ISO times as logs write them: with or without an offset (``Z``, ``+00:00``, others, down to
    the second), ``T`` or a space, whole seconds to microseconds (each millisecond's half among
    them), from 1970 (the audit refuses a time before it) to 2200."""
    from datetime import timedelta, timezone

    from hypothesis import strategies as st

    offsets = st.one_of(st.none(), st.just(timezone.utc),
                        st.integers(min_value=-14 * 3600, max_value=14 * 3600).map(lambda s: timezone(timedelta(seconds=s))))
    micros = st.one_of(st.integers(min_value=0, max_value=999_999), st.sampled_from([0, 500, 1500, 999_500, 499, 501]))
    moments = st.builds(lambda moment, micro, zone: moment.replace(microsecond=micro, tzinfo=zone),
                        st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1)), micros, offsets)

    def written(moment, sep: str, spec: str, zulu: bool) -> str:
        text = moment.isoformat(sep=sep, timespec=spec)
        return text[:-6] + "Z" if zulu and text.endswith("+00:00") else text

    return st.builds(written, moments, st.sampled_from(["T", " "]),
                     st.sampled_from(["auto", "seconds", "milliseconds", "microseconds"]), st.booleans())


def test_an_entrys_generated_iso_time_is_read_as_parse_time_ms_reads_it(tmp_path: Path) -> None:
    """The walk's in-place reading of an entry's ISO time (_Walk.entry) is parse_time_ms's,
    written out: on generated times the two give the same epoch ms, so a change to either alone
    fails here (rounding a half millisecond, an offset-less time's zone)."""
    import os

    from hypothesis import HealthCheck, given, settings

    from prefixbench.workloads.logs.formats.common import parse_time_ms

    @settings(max_examples=int(os.environ.get("PREFIXBENCH_FUZZ_EXAMPLES") or 150), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(_iso_stamps())
    def agree(stamp: str) -> None:
        t = Transcript()
        t.user("hello", stamp, root=True)
        t.assistant("req_1", stamp, [cc_usage(3, 2000, 0, 5)])
        requests, _ = load_trace([write_jsonl(tmp_path / "s1.jsonl", t.lines)])
        assert (requests[0].sent_ms, requests[0].ready_ms) == (parse_time_ms(stamp, ""),) * 2

    agree()


@pytest.mark.parametrize("stamp", ["not-a-date", "2025-13-01T00:00:00Z", "", "2025-09-03T25:00:00Z"])
def test_an_entrys_time_that_is_no_time_is_refused_naming_its_line(tmp_path: Path, stamp: str) -> None:
    from prefixbench.simulator.errors import UserError
    from prefixbench.workloads.logs.formats.common import parse_time_ms

    t = Transcript()
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("req_1", stamp, [cc_usage(3, 2000, 0, 5)])
    path = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    with pytest.raises(UserError) as error:
        parse_time_ms(stamp, f"{path}:2")
    with pytest.raises(UserError) as refused:
        load_trace([path])
    assert str(refused.value) == str(error.value)


def _hook_context_rewritten(t: Transcript, hook: str, date: str) -> list[dict]:
    """``t``'s lines as Claude Code 2.1.27 wrote them under a SessionStart hook: its
    ``saved_hook_context`` record (``hook``, dated ``date``) first, then again after every entry, the
    same uuid and date, each copy's parent the entry before it; every assistant line's parent the
    record's uuid (xfs96192/claude-config, sessions 9f82d240 and 8c870161)."""
    def copy(parent: str | None) -> dict:
        return {"type": "saved_hook_context", "uuid": hook, "content": ["You have superpowers."], "hookName": "SessionStart",
                "hookEvent": "SessionStart", "timestamp": date, "parentUuid": parent, "sessionId": t.session,
                "version": t.version, "isSidechain": False}
    lines = [copy(None)]
    for line in t.lines:
        line = dict(line)
        if line["type"] == "assistant" or line["parentUuid"] is None:
            line["parentUuid"] = hook
        lines += [line, copy(line["uuid"])]
    return lines


def test_calls_under_a_hook_record_rewritten_under_one_uuid_are_sent_in_their_own_turn(tmp_path: Path) -> None:
    """Each call hangs off the copy of the rewritten record written just before it, at the time of
    what precedes it (not the record's first date), and extends the call before it. Before: every
    call hung off the first copy, all sent at 15:22:38.575, none extending another (0 reads
    predicted, a tool round's call read as a concurrent write)."""
    t = Transcript("sess", version="2.1.27")
    t.user("go", "2026-01-31T15:25:58.809Z", root=True)
    t.assistant("r1", "2026-01-31T15:26:03.112Z", [cc_usage(3, 29654, 0, 9, 29654), cc_usage(3, 29654, 0, 90, 29654)])
    t.user("read", "2026-01-31T15:26:05.325Z", tool=True)
    t.assistant("r2", "2026-01-31T15:26:09.695Z", [cc_usage(1, 7910, 29654, 9, 7910), cc_usage(1, 7910, 29654, 120, 7910)])
    t.user("edited", "2026-01-31T15:26:13.305Z", tool=True)
    t.assistant("r3", "2026-01-31T15:26:16.985Z", [cc_usage(1, 324, 37564, 40, 324)])
    # The next turn, 23 minutes on (the writes are for an hour).
    t.user("and now?", "2026-01-31T15:49:50.000Z")
    t.assistant("r4", "2026-01-31T15:49:54.122Z", [cc_usage(1, 500, 37888, 40, 500)])
    path = write_jsonl(tmp_path / "sess.jsonl", _hook_context_rewritten(t, "hook-ctx", "2026-01-31T15:22:38.575Z"))
    requests, _ = load_trace([path])
    assert [r.request_id for r in requests] == ["r1", "r2", "r3", "r4"]
    # Each call's prompt ends at its own copy of the record (before: the first copy, for all four).
    assert len({r.prefix.node for r in requests}) == 4
    assert [r.prefix.parent for r in requests[1:]] == [r.prefix.node for r in requests[:-1]]
    result = run_audit([path])
    # Each call's time is its own turn's: the prompt's or tool result's it answers.
    assert [row.timestamp for row in result.rows] == [
        "2026-01-31T15:25:58.809Z", "2026-01-31T15:26:05.325Z", "2026-01-31T15:26:13.305Z", "2026-01-31T15:49:50.000Z"]
    assert [row.cause for row in result.rows] == ["cold-start", None, None, None]
    assert [row.predicted_cache_read for row in result.rows] == [0, 29654, 37564, 37888]
    assert sum(f.read_within for f in result.files) == 4


def test_a_loop_of_parent_uuids_is_walked_once_not_up_to_the_cap(tmp_path: Path) -> None:
    """An entry naming one written after it as its parent (v under w, w under v) makes a loop of
    parentUuids. A call under it is sent each entry of the loop once. Before: the walk back went
    round the loop until its cap, 100,000 entries for the call (each read again by the audit,
    the same few lines over and over; on xfs96192/claude-config's home, whose rewritten hook record
    made such a loop under every call, 15 GB and an OOM kill)."""
    t = Transcript("sess", version="2.1.27")
    t.user("go", "2026-01-31T15:25:58.809Z", root=True)
    t.assistant("r0", "2026-01-31T15:26:00.000Z", [cc_usage(1, 100, 1000, 9, 100)])
    v = t.user("v", "2026-01-31T15:26:01.000Z")
    w = t.user("w", "2026-01-31T15:26:02.000Z")
    t.assistant("r1", "2026-01-31T15:26:03.000Z", [cc_usage(1, 100, 1100, 9, 100)])
    lines = [dict(line) for line in t.lines]
    [at] = [k for k, line in enumerate(lines) if line["uuid"] == v]
    lines[at]["parentUuid"] = w  # v under w (written after it), w under v
    path = write_jsonl(tmp_path / "sess.jsonl", lines)
    requests, _ = load_trace([path])
    assert [r.request_id for r in requests] == ["r0", "r1"]
    assert [len(logged(r)) for r in requests] == [1, 2]  # r1: v and w, each once
    assert len(run_audit([path]).rows) == 2
