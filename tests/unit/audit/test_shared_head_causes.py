"""A TTL expiry judged across the lanes of one head (issue 19).

A lane idle past the TTL whose head another lane sent under within the TTL found that head warm
(the provider's cache is one per family, and a read refreshes the TTL of the prefix it read):
only the lane's own part past the head could expire."""

from __future__ import annotations

import pytest
from msgspec.structs import replace
from prefixbench.simulator.price_lookup import Prices
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit import core
from prefixbench.workloads.audit.core import audit_requests
from prefixbench.workloads.audit.precedence import Evidence, Prediction, Previous, find_cause
from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest

HEAD = "claude-code:main:claude-sonnet-4-5:2.1.0"
MIN = 60_000
T0 = 1_780_000_000_000


def _call(file: str, seq: int, sent: int, read: int, write: int, parent: str | None,
          events: tuple[tuple[str, str], ...] = (), head: str = HEAD) -> TraceRequest:
    return TraceRequest(
        file=file, line=seq + 1, lane="main", lane_kind="main", seq=seq, sent_ms=T0 + sent, ready_ms=T0 + sent + 2_000,
        provider="anthropic", model="claude-sonnet-4-5", usage=Usage(cache_read=read, cache_write_5m=write, uncached=3),
        prefix=Prefix(head, f"{file}#{seq}", parent), events=events,
    )


def _log(last: TraceRequest, other_at: int = 30 * MIN) -> tuple[list[TraceRequest], list[FileSummary]]:
    """Under one head of 10,000 tokens (b's start wrote 12,000, a's start read 10,000): a's lane
    left 16,000 cached at 2 min, then idled past the 5 min TTL; c's start sent under the head at
    ``other_at`` (reading nothing: the head had expired by then, and it wrote it again), then a's
    ``last`` call; d under another head (so the pass falls into parts)."""
    requests = [
        _call("b.jsonl", 0, 0, 0, 12_000, None),
        _call("a.jsonl", 0, MIN, 10_000, 5_000, None),
        _call("a.jsonl", 1, 2 * MIN, 15_000, 1_000, "a.jsonl#0"),
        _call("d.jsonl", 0, 3 * MIN, 0, 9_000, None, head="claude-code:main:claude-sonnet-4-5:2.2.0"),
        _call("c.jsonl", 0, other_at, 0, 12_000, None),
        last,
    ]
    return requests, [FileSummary(f, "claude-code", 2) for f in ("a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl")]


def _row(result: core.AuditResult, file: str = "a.jsonl", line: int = 3) -> core.AuditRow:
    return next(row for row in result.rows if row.file == file and row.line == line)


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts made for any log, however small (as tests/unit/audit/test_audit_parts.py makes them)."""
    monkeypatch.setattr(core, "PARALLEL_PASS_AT_LEAST", 0)
    monkeypatch.setattr(core, "LARGEST_PART", 1.0)


def test_a_lane_past_its_ttl_that_read_a_head_another_lane_kept_warm_lost_only_its_own_part() -> None:
    # a idled 28m30s; c sent under the head 30s before a's call and rewrote it: a read the head
    # (10,000) and lost its own 6,000 past it. Base: ttl-expired from a's own gap, nothing said of
    # the head c kept warm.
    requests, summaries = _log(_call("a.jsonl", 2, 30 * MIN + 30_000, 10_000, 7_000, "a.jsonl#1"))
    row = _row(audit_requests(requests, summaries, Prices(None)))
    assert (row.expected_cache_read, row.lost_tokens) == (16_000, 6_000)
    assert row.cause == "ttl-expired", row.detail
    assert "another lane's call under the same head, in the same folder, was sent 30s before, within the TTL" in row.detail
    assert "the head (10,000 tokens) was warm and read, so what expired is this lane's own part past it" in row.detail


def test_a_read_short_of_a_head_another_lane_kept_warm_is_not_the_expiry() -> None:
    # a read 4,000 of the head c had just sent under: the expiry of a's own entry does not explain
    # a read short of a warm head. Base: ttl-expired (the whole 12,000).
    requests, summaries = _log(_call("a.jsonl", 2, 30 * MIN + 30_000, 4_000, 13_000, "a.jsonl#1"))
    row = _row(audit_requests(requests, summaries, Prices(None)))
    assert row.lost_tokens == 12_000
    assert row.cause != "ttl-expired", row.detail
    assert row.cause == "unexplained" and row.evidence == "none"
    assert "the head (10,000 tokens) was warm (another lane's call under the same head, in the same folder, was sent 30s before" in row.detail
    assert "read short by 6,000 tokens, which the expiry does not explain" in row.detail
    assert "the lane's own part past the head had expired too (idle 28m30s" in row.detail
    assert "inside the TTL" not in row.detail


def test_a_read_of_nothing_after_another_lanes_call_is_the_expiry_not_a_head_change() -> None:
    # a read 0 after c sent under the same head key 30s before: the key's sameness is inferred
    # (hannibal8856/claude_backup: other project folders, other system prompts, the server said
    # previous_message_not_found), and nothing was read, so no head change is called on the
    # warm premise. Base: system-changed / unexplained ("read short by 10,000").
    requests, summaries = _log(_call("a.jsonl", 2, 30 * MIN + 30_000, 0, 17_000, "a.jsonl#1"))
    row = _row(audit_requests(requests, summaries, Prices(None)))
    assert row.lost_tokens == 16_000
    assert row.cause == "ttl-expired", row.detail
    assert "yet this call read 0 tokens, nothing: that call's head was not this lane's" in row.detail
    assert "read short" not in row.detail


def test_another_lane_past_the_ttl_keeps_nothing_warm() -> None:
    # c's call 10 min before a's: past the 5 min TTL too, so the head was not warm: the expiry as before.
    requests, summaries = _log(_call("a.jsonl", 2, 30 * MIN + 30_000, 4_000, 13_000, "a.jsonl#1"), other_at=20 * MIN)
    row = _row(audit_requests(requests, summaries, Prices(None)))
    assert row.cause == "ttl-expired" and "another lane" not in row.detail


def test_a_call_of_another_request_family_keeps_nothing_warm() -> None:
    # c's call 30s before, under the same head but at another effort: the provider caches a
    # family apart, so that call kept nothing warm for a's family: the expiry as before.
    requests, summaries = _log(_call("a.jsonl", 2, 30 * MIN + 30_000, 4_000, 13_000, "a.jsonl#1"))
    requests[4] = replace(requests[4], envelope=(("effort", "high"),))
    row = _row(audit_requests(requests, summaries, Prices(None)))
    assert row.cause == "ttl-expired" and "another lane" not in row.detail


def test_a_warm_head_of_unknown_size_says_the_parts_are_not_told() -> None:
    prev = _call("a.jsonl", 1, 0, 15_000, 1_000, "a.jsonl#0")
    r = _call("a.jsonl", 2, 30 * MIN, 4_000, 13_000, "a.jsonl#1")
    ev = Evidence(r, Previous(prev, 0, 2_000), Prediction(0, 0, 0, "chain"), 30 * MIN, None, 12_000, 16_000, {},
                  head_since=40_000)
    finding = find_cause(ev)
    assert finding.cause == "ttl-expired"
    assert "sent 40s before, within the TTL, so the shared head was warm" in finding.detail
    assert "the head's size is not known" in finding.detail
    assert find_cause(replace(ev, head_since=None)).detail == "idle 30m00s since the previous request, past the 5m00s TTL"


@pytest.mark.parametrize("read", [10_000, 4_000])
def test_the_audit_in_parts_says_what_one_pass_says(split_small, read: int) -> None:
    requests, summaries = _log(_call("a.jsonl", 2, 30 * MIN + 30_000, read, 16_000 - read + 1_000, "a.jsonl#1"))
    one = audit_requests(requests, summaries, Prices(None))
    two = audit_requests(requests, summaries, Prices(None), jobs=2)
    assert "30s before" in _row(one).detail
    assert one == two


def test_a_call_of_another_folder_under_the_same_head_key_keeps_nothing_warm() -> None:
    # c's call is of another folder (another project: Claude Code's system prompt differs by
    # project, so the key's sameness is an inference). Base: counted as keeping the head warm, a's
    # read of 4,000 called a shortfall inside a warm head (unexplained).
    requests, summaries = _log(_call("a.jsonl", 2, 30 * MIN + 30_000, 4_000, 13_000, "a.jsonl#1"))
    requests = [replace(r, file="other/c.jsonl") if r.file == "c.jsonl" else r for r in requests]
    summaries = [replace(s, file="other/c.jsonl") if s.file == "c.jsonl" else s for s in summaries]
    row = _row(audit_requests(requests, summaries, Prices(None)))
    assert row.cause == "ttl-expired", row.detail
    assert "another lane" not in row.detail


def test_a_compaction_call_under_a_warm_head_of_unknown_size_says_the_parts_are_not_told() -> None:
    # The compaction-call rule's own branch for a head of unknown size: the call came 30 min after
    # the main request it summarizes (past its TTL), another lane's call 40s before kept the head
    # warm, and the read (4,000) is no cold read: only the main conversation's part past the head
    # expired, how much of the loss is past it not told.
    main = _call("a.jsonl", 1, 0, 15_000, 1_000, "a.jsonl#0")
    r = replace(_call("a.jsonl", 2, 30 * MIN, 4_000, 13_000, "a.jsonl#1"), lane_kind="compaction")
    ev = Evidence(r, Previous(main, 0, 2_000), Prediction(0, 0, 0, "chain"), 30 * MIN, None, 12_000, 16_000, {},
                  source=Previous(main, 0, 2_000), head_since=40_000)
    finding = find_cause(ev)
    assert finding.cause == "ttl-expired"
    assert finding.detail.startswith("the compaction call came 30m00s after the main request at line 2")
    assert finding.detail.endswith("so the shared head was warm and only the main conversation's own part past it had expired "
                                   "(the head's size is not known: how much of the loss is past it is not told)")


SESSION = "1e63ef6a-2f6c-45dc-b8e0-3b286d0685e4"


@pytest.mark.parametrize(("c_file", "warm"), [
    (f"proj/{SESSION}/agent-acompact-1.jsonl", True),            # Claude Code's <session>/agent-*.jsonl
    (f"proj/{SESSION}/subagents/agent-acompact-1.jsonl", True),  # 2.x: <session>/subagents/
    ("proj/notes/agent-acompact-1.jsonl", False),                # a folder no session names: its own
])
def test_a_claude_code_agent_transcript_in_its_session_folder_is_of_its_project(c_file: str, warm: bool) -> None:
    # All of project proj: a's lane past its TTL, c's call under the head 30s before it. A
    # compaction agent's transcript Claude Code writes in <session>/ (pshung/personal_git's
    # -local-nick-ai-iree/<session>/agent-*.jsonl) is of the project the session is: its call kept
    # the head warm as one beside a.jsonl does. Base: <session>/ was taken for the project, c's
    # call for another project's, and a's short read for an expiry (ttl-expired).
    requests, summaries = _log(_call("a.jsonl", 2, 30 * MIN + 30_000, 4_000, 13_000, "a.jsonl#1"))

    def moved(file: str | None) -> str | None:
        return None if file is None else c_file if file == "c.jsonl" else f"proj/{file}"

    requests = [replace(r, file=moved(r.file), prefix=replace(
        r.prefix, node=f"{moved(r.file)}#{r.seq}", parent=None if r.prefix.parent is None else f"{moved(r.file)}#{r.seq - 1}"))
        for r in requests]
    requests = [replace(r, lane_kind="compaction") if r.file == c_file else r for r in requests]
    summaries = [replace(s, file=moved(s.file)) for s in summaries]
    row = _row(audit_requests(requests, summaries, Prices(None)), "proj/a.jsonl")
    if warm:
        assert row.cause == "unexplained", row.detail
        assert "another lane's call under the same head, in the same folder, was sent 30s before" in row.detail
    else:
        assert row.cause == "ttl-expired" and "another lane" not in row.detail, row.detail
