"""The agreement table scores the audit's own cause (inferred without the server's reason) against
the server's reason: the same cause, one that says more of the same miss, another cause, or no
miss at all. Before, an entry the server could not find after an idle past its TTL (the audit:
``ttl-expired``) was counted a disagreement, and a labelled call the audit finds no miss in was
left out of the table."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from prefixbench.reports.audit import audit_json, audit_table
from prefixbench.workloads.audit.causes import DIAGNOSTIC_CAUSES, VERDICTS, verdict
from prefixbench.workloads.audit.core import _agreement, run_audit
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl


@pytest.mark.parametrize("server,audit,said", [
    ("tools_changed", "tools-changed", "agrees"),
    ("model_changed", "model-chosen", "agrees"),
    ("previous_message_not_found", "previous-message-not-found", "agrees"),
    ("previous_message_not_found", "ttl-expired", "names-more"),
    ("previous_message_not_found", "concurrent-write", "names-more"),
    ("comparison_response_not_found", "ttl-expired", "names-more"),
    ("messages_changed", "compaction", "names-more"),
    ("unavailable", "effort-changed", "names-more"),
    ("previous_message_not_found", "messages-changed", "disagrees"),
    ("tools_changed", "system-changed", "disagrees"),
    ("system_changed", "ttl-expired", "disagrees"),
    ("context_compacted", "messages-changed", "disagrees"),
    ("unavailable", None, "no-miss"),
    ("previous_message_not_found", None, "no-miss"),
    ("a_label_from_later", "ttl-expired", "unscored"),
    # The audit names no cause of its own (base: disagrees, names-more).
    ("messages_changed", "unexplained", "unscored"),
    ("unavailable", "unexplained", "unscored"),
])
def test_each_pair_gets_one_verdict(server: str, audit: str | None, said: str) -> None:
    assert verdict(server, audit) == said


def test_an_expiry_is_never_a_content_change_nor_the_reverse() -> None:
    """Names-more is only where the audit's cause explains the server's: no content change
    explains an entry not found, and no expiry explains a change the server saw."""
    for server, cause in DIAGNOSTIC_CAUSES.items():
        if cause in ("system-changed", "tools-changed", "model-changed", "effort-changed"):
            assert verdict(server, "ttl-expired") == "disagrees", server
    for audit in ("system-changed", "tools-changed", "messages-changed", "model-changed"):
        assert verdict("previous_message_not_found", audit) == "disagrees", audit


def test_the_table_keeps_agree_for_what_is_consistent() -> None:
    pairs = _agreement(Counter({("previous_message_not_found", "ttl-expired"): 4, ("tools_changed", "system-changed"): 2,
                                ("unavailable", "no miss"): 3, ("messages_changed", "messages-changed"): 1}))
    assert [(p.server_reason, p.audit_cause, p.requests, p.agree, p.verdict) for p in pairs] == [
        ("previous_message_not_found", "ttl-expired", 4, True, "names-more"),
        ("unavailable", "no miss", 3, None, "no-miss"),
        ("tools_changed", "system-changed", 2, False, "disagrees"),
        ("messages_changed", "messages-changed", 1, True, "agrees"),
    ]
    assert {p.verdict for p in pairs} <= set(VERDICTS)


def _session(path: Path) -> Path:
    """A Claude Code 2.1 main lane on Opus, every write 1 h: a cold call, a warm one the server
    labels ``unavailable``, one 2.5 h later that reads nothing (``previous_message_not_found``),
    and one 10 s after that which reads nothing either (``tools_changed``; no tool change logged)."""
    t = Transcript("s1", version="2.1.220")
    t.user("plan it", "2026-08-05T00:00:00.000Z", root=True)
    t.assistant("r1", "2026-08-05T00:00:02.000Z", [cc_usage(3, 20_000, 0, 40, 20_000)], model="claude-opus-4-1-20250805")
    t.user("go on", "2026-08-05T00:00:10.000Z")
    t.assistant("r2", "2026-08-05T00:00:12.000Z", [cc_usage(3, 300, 20_000, 40, 300)], model="claude-opus-4-1-20250805")
    t.user("back again", "2026-08-05T02:30:00.000Z")
    t.assistant("r3", "2026-08-05T02:30:02.000Z", [cc_usage(3, 20_600, 0, 40, 20_600)], model="claude-opus-4-1-20250805")
    t.user("and on", "2026-08-05T02:30:10.000Z")
    t.assistant("r4", "2026-08-05T02:30:12.000Z", [cc_usage(3, 20_900, 0, 40, 20_900)], model="claude-opus-4-1-20250805")
    reasons = {"r2": {"type": "unavailable"}, "r3": {"type": "previous_message_not_found"},
               "r4": {"type": "tools_changed", "cache_missed_input_tokens": 20_900}}
    for line in t.lines:
        if line.get("requestId") in reasons:
            line["message"]["diagnostics"] = {"cache_miss_reason": reasons[line["requestId"]]}
    return write_jsonl(path, t.lines)


def test_a_transcripts_labelled_calls_are_all_scored(tmp_path: Path) -> None:
    result = run_audit([_session(tmp_path / "s1.jsonl")])
    assert [(r.server_reason, r.inferred_cause, r.cause) for r in result.rows if r.server_reason] == [
        ("unavailable", None, None),
        ("previous_message_not_found", "ttl-expired", "previous-message-not-found"),
        ("tools_changed", "system-changed", "tools-changed"),
    ]
    table = {(p.server_reason, p.audit_cause): p.verdict for p in result.agreement}
    assert table == {("unavailable", "no miss"): "no-miss", ("previous_message_not_found", "ttl-expired"): "names-more",
                     ("tools_changed", "system-changed"): "disagrees"}
    text = audit_table(result)
    assert ("consistent on 1 of 2 scored (50%; the same cause 0, the audit names more 1), another cause on 1; "
            "1 labelled call(s) the audit finds no miss in") in text
    assert "audit names more" in text and "no miss: nothing to score" in text
    records = json.loads(audit_json(result))["agreement"]
    assert {(r["server_reason"], r["verdict"], r["agree"]) for r in records} == {
        ("unavailable", "no-miss", None), ("previous_message_not_found", "names-more", True),
        ("tools_changed", "disagrees", False)}
    [note] = [n for n in result.notes if n.startswith("provider cache diagnostics decided")]
    assert "names the same cause for 0 (0%) and one that says more of the same miss for 1 (50%" in note


def test_the_notes_count_of_decided_misses_says_what_the_table_scores_beside_it(tmp_path: Path) -> None:
    # A labelled miss whose cause the log decided (model-chosen refines model_changed) is scored in
    # the table, not in the note on misses the server's label decided. Base: the note said nothing
    # of it (hannibal8856/claude_backup: "107 ... same cause for 6" beside the table's 108 and 7).
    from msgspec.structs import replace

    from prefixbench.workloads.audit.core import _NoteCounts

    result = run_audit([_session(tmp_path / "s1.jsonl")])
    rows = [replace(r, evidence="log") if r.server_reason == "tools_changed" else r for r in result.rows]
    counts = _NoteCounts()
    counts.add(rows)
    assert (counts.diagnosed, counts.own) == (1, 1)
    counts.add([r for r in result.rows if r.server_reason == "unavailable"])  # no miss: not scored
    assert counts.own == 1
