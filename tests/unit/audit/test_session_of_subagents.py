"""A Claude Code session is the agent's session, not a file: its main transcript and its
subagents' and compaction agents' transcripts, tied by the ``sessionId`` their records name, in
whichever layout the agent's version writes them (beside the session's transcript, in
``<session>/``, in ``<session>/subagents/`` or in a workflow run's folder below it). The roll-up per session and the sessions of a fix
count one for all of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import run_audit

from .fixtures import Transcript, cc_usage, write_jsonl

SESSION = "f7e52e16-3b1c-4d2a-9e0f-7a6b5c4d3e2f"
OTHER = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

#: Where each layout puts a subagent's transcript, below the project's folder.
LAYOUTS = {
    "2.x": f"{SESSION}/subagents/agent-aa64fe4.jsonl",
    "session folder": f"{SESSION}/agent-aa64fe4.jsonl",
    "older": "agent-aa64fe4.jsonl",
    # A workflow run's agents (docs/formats.md): four folders below the project's.
    "workflow": f"{SESSION}/subagents/workflows/wf_4af3c93a-ada/agent-a0b8e04.jsonl",
    # A copy of a home that swaps the two, its main transcripts in sessions/ (austinweitao/claude-backup
    # at 9fbf6756).
    "workflow, swapped": f"subagents/{SESSION}/workflows/wf_4af3c93a-ada/agent-a0b8e04.jsonl",
}
#: Where a layout's session's main transcript is, where not ``<project>/<session>.jsonl``.
MAINS = {"workflow, swapped": f"sessions/{SESSION}.jsonl"}


def _idle_lane(session: str, tag: str, *, sidechain: bool) -> list[dict]:
    """A lane whose entry expires in a 20-minute idle: one ttl-expired miss."""
    t = Transcript(session, version="2.1.90", sidechain=sidechain)
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant(f"{tag}1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    t.user("result", "2025-09-03T00:00:03.000Z", tool=True)
    t.assistant(f"{tag}2", "2025-09-03T00:00:05.000Z", [cc_usage(3, 200, 15000, 9)])
    t.user("next", "2025-09-03T00:20:00.000Z")
    t.assistant(f"{tag}3", "2025-09-03T00:20:03.000Z", [cc_usage(3, 15300, 0, 9)])
    for line in t.lines:  # (the uuids of a file of its own)
        line["uuid"] = f"{tag}-{line['uuid']}"
        if line["parentUuid"] is not None:
            line["parentUuid"] = f"{tag}-{line['parentUuid']}"
    return t.lines


def _project(root: Path, layout: str) -> Path:
    """One session (its main transcript and one subagent's, in ``layout``) and another session."""
    project = root / "-home-u-w"
    main_transcript = project / MAINS.get(layout, f"{SESSION}.jsonl")
    main_transcript.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(main_transcript, _idle_lane(SESSION, "m", sidechain=False))
    sub = project / LAYOUTS[layout]
    sub.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(sub, _idle_lane(SESSION, "a", sidechain=True))
    write_jsonl(project / f"{OTHER}.jsonl", _idle_lane(OTHER, "o", sidechain=False))
    return root


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_sessions_subagents_roll_up_into_its_session(tmp_path, layout):
    root = _project(tmp_path / "projects", layout)
    result = run_audit([root])
    assert len(result.lanes) == 3, result.lanes
    by_key = {Path(s.key).name: s for s in result.sessions}
    assert sorted(by_key) == sorted([f"{SESSION}.jsonl", f"{OTHER}.jsonl"]), list(by_key)
    mine = by_key[f"{SESSION}.jsonl"]
    other = by_key[f"{OTHER}.jsonl"]
    assert (mine.requests, mine.lanes, mine.misses) == (6, 2, 2 * other.misses)
    assert mine.lost_usd == 2 * other.lost_usd > 0
    assert mine.key == str(root / "-home-u-w" / MAINS.get(layout, f"{SESSION}.jsonl"))
    assert sum(s.requests for s in result.sessions) == result.totals.requests == 9


def test_a_fix_counts_a_sessions_subagents_as_its_session(tmp_path, capsys):
    root = _project(tmp_path / "projects", "2.x")
    assert main(["audit", str(root), "--format", "json", "--quiet"]) == 0
    record = json.loads(capsys.readouterr().out)
    recs = [rec for rec in record["recommendations"] if rec["lanes"] == 3]
    assert recs, record["recommendations"]
    assert all(rec["sessions"] == 2 for rec in recs), recs
    assert [Path(s["key"]).name for s in record["sessions"]].count(f"{SESSION}.jsonl") == 1


def test_a_session_whose_main_transcript_is_not_in_the_log_says_so(tmp_path, capsys):
    # Only <session>/subagents/agent-*.jsonl kept (396 such files in the mirrors, e.g.
    # 4thehalibit/omarchy-backup): before, its row read as a one-file session, named by a file
    # the log does not hold, in every view.
    root = _project(tmp_path / "projects", "2.x")
    (root / "-home-u-w" / f"{SESSION}.jsonl").unlink()
    result = run_audit([root])
    flags = {Path(s.key).name: getattr(s, "main_absent", False) for s in result.sessions}
    assert flags == {f"{SESSION}.jsonl": True, f"{OTHER}.jsonl": False}, flags
    out = tmp_path / "out"
    assert main(["audit", str(root), "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    mark = "(main transcript not in the log)"
    (row,) = [line for line in text.splitlines() if mark in line]
    assert row.lstrip().startswith(f"{SESSION}.jsonl {mark}"), row
    assert (out / "audit.md").read_text(encoding="utf-8").count(mark) == 1
    assert (out / "report.html").read_text(encoding="utf-8").count(mark) == 1
    assert main(["audit", str(root), "--format", "json", "--quiet"]) == 0
    sessions = json.loads(capsys.readouterr().out)["sessions"]
    marked = {Path(s["key"]).name: s.get("main_transcript_absent") for s in sessions}
    assert marked == {f"{SESSION}.jsonl": True, f"{OTHER}.jsonl": None}, sessions
