"""A committed Claude Code home whose Claude models answered through an OpenAI-compatible
gateway: github.com/xfs96192/claude-config at commit ``62b2f7699a582cd5142f59b61be96161d6be0f47``
(2026-02-13), its ``projects/``: Claude Code 2.1.x on macOS, 2026-01.

Three sessions are read (9 transcripts with their subagents'): their claude-sonnet-4-5,
claude-sonnet-4 and claude-haiku-4-5 responses carry message ids ``msg_chatcmpl-`` + 24 hex digits
(one bare ``chatcmpl-...``) and no ``requestId``: a gateway answered the Messages API from an
OpenAI-compatible upstream and kept (or prefixed) the chat completion's id, which neither
Anthropic's API, Bedrock nor Vertex writes. The audit reads those calls as relayed on Anthropic's
rules and list price (relay ``(unnamed)``); before, they were Anthropic's with no relay, and
nothing else moved: lost $0, 9 cold starts, 58 reads of 58 within 3%. (The whole home at that
commit: 83 such calls relayed, lost $28.95 before and after, every cause and count as before.)
Two more sessions (:data:`HOOKED`, Claude Code 2.1.27) rewrite a hook's record under one uuid after
every entry: their calls are timed and chained where the file writes each copy.

From ``PREFIXBENCH_XFS96192_CLAUDE_CONFIG_REPO``, else the look-up tools' mirror; skips without it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.trace import UNNAMED_RELAY
from tests.realdata.mirrors import mirror, read_within, tree_at

URL, ENV, REPO = mirror("xfs96192/claude-config", "PREFIXBENCH_XFS96192_CLAUDE_CONFIG_REPO")
COMMIT = "62b2f7699a582cd5142f59b61be96161d6be0f47"
SESSIONS = (
    "projects/-Users-fanshengxia-Desktop--------------/949eff29-6583-43aa-9e70-116b124884c1",
    "projects/-Users-fanshengxia-Desktop---V2/84bb7ee5-80ec-4c3a-8f7b-aa78cb788db9",
    "projects/-Users-fanshengxia/83f2b02e-810c-482f-ab96-97df3c526cc2",
)


def test_claude_calls_answered_under_chat_completion_ids_are_relayed_and_nothing_else_moves(tmp_path: Path) -> None:
    paths = [p for session in SESSIONS for p in tree_at(REPO, COMMIT, URL, ENV, session, tmp_path, ".jsonl")]
    assert len(paths) == 9
    result = run_audit(paths)
    assert result.totals.requests == 58
    assert result.relays == (
        ("anthropic", "claude-haiku-4-5-20251001", UNNAMED_RELAY, 19),
        ("anthropic", "claude-sonnet-4-20250514", UNNAMED_RELAY, 12),
        ("anthropic", "claude-sonnet-4-5-20250929", UNNAMED_RELAY, 27),
    )
    # As before the ids were read: Anthropic's rules predicted every read.
    assert result.totals.lost_usd == 0
    assert sorted(Counter((r.provider, r.cause) for r in result.rows).items(), key=str) == [
        (("anthropic", "cold-start"), 9), (("anthropic", None), 49)]
    assert read_within(result) == 58
    evidence = [n for f in result.files for n in f.notes if "re-id'd" in n]
    assert len(evidence) == 9 and all("their message ids are an OpenAI chat completion's id (chatcmpl-...)" in n for n in evidence)


#: Two Claude Code 2.1.27 sessions (Claude Opus 4.5) under a SessionStart hook (superpowers): the
#: transcript writes its ``saved_hook_context`` record again after every entry, the same uuid and
#: first date (9f82d240: 8c271ae3..., 15:22:38.575; 8c870161: 17a95485..., 09:22:24.190), each copy
#: under the entry before it, and every assistant entry's parent is that uuid.
HOOKED = (
    "projects/-Users-fanshengxia-Desktop------------------/9f82d240-e686-449b-a8bd-9ef47ab5c28a",
    "projects/-Users-fanshengxia-Desktop-------/8c870161-a8a8-4043-8234-fe9973e65e60",
)


def test_calls_under_a_hook_record_rewritten_under_one_uuid_are_timed_and_chained_where_the_log_writes_them(
        tmp_path: Path) -> None:
    """Each call hangs off the copy of the record written just before it, at that place's time.
    Before, every call hung off the first copy: all 18 of 9f82d240's main-lane calls (run 15:26:03 to
    15:49:59) dated 15:22:38.575, each its own parent, 0 of 744,546 reads predicted; 8c870161's 10 at
    09:22:24.190, its calls at lines 17 and 64 read as concurrent writes ($0.2160), which then fed a
    stagger-subagents item of the whole home. Over the 5 files: 4 of 32 reads within 3% before, 28
    after; lost $0.2160 -> $0.4373 (the causes below). The whole home at the pinned commit: 1,363 ->
    1,387 reads within 3%, concurrent-write 2 -> 0, lost $28.9476 -> $29.1689."""
    paths = [p for session in HOOKED for p in tree_at(REPO, COMMIT, URL, ENV, session, tmp_path, ".jsonl")]
    assert len(paths) == 5
    result = run_audit(paths)
    assert result.totals.requests == 32
    main = {sid: [r for r in result.rows if Path(r.file).name.startswith(sid) and r.lane == "main"]
            for sid in ("9f82d240", "8c870161")}
    first = main["9f82d240"]
    assert len(first) == 18
    # Sent in their own turns: the first at the prompt (15:25:58.809), the last after its tool result.
    assert (first[0].timestamp, first[-1].timestamp) == ("2026-01-31T15:25:58.809Z", "2026-01-31T15:49:54.122Z")
    assert all(a.timestamp <= b.timestamp for a, b in zip(first, first[1:]))
    # Plain prefix caching (29,654 -> 37,564 -> ... -> 48,300), every read predicted.
    assert sum(r.predicted_cache_read for r in first) == sum(r.reported_cache_read for r in first) == 744_546
    assert [(r.line, r.cause) for r in first if r.cause] == [(10, "cold-start")]
    second = main["8c870161"]
    assert (second[0].timestamp, second[-1].timestamp) == ("2026-02-01T09:24:15.658Z", "2026-02-01T09:36:58.138Z")
    # No concurrent write: line 17 follows its tool result (09:24:29) and read 16,455 tokens, inside
    # the head the first call wrote (32,833); its start found the head the other session cached the
    # day before expired (before: a cold start, that session's calls never extending each other).
    assert [(r.line, r.cause) for r in second if r.cause] == [(10, "ttl-expired"), (17, "system-changed")]
    assert sorted(Counter(r.cause for r in result.rows).items(), key=str) == [
        ("cold-start", 1), ("system-changed", 1), ("ttl-expired", 1), (None, 29)]
    assert read_within(result) == 28
    assert str(result.totals.lost_usd) == "0.437304"
