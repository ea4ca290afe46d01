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
