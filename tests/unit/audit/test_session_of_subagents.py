"""A Claude Code session is the agent's session, not a file: its main transcript and its
subagents' and compaction agents' transcripts, tied by the ``sessionId`` their records name, in
whichever layout the agent's version writes them (beside the session's transcript, in
``<session>/``, in ``<session>/subagents/`` or in a workflow run's folder below it). The roll-up per session and the sessions of a fix
count one for all of them."""

from __future__ import annotations

import json
from pathlib import Path, PurePath

import pytest
from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import load_trace, run_audit

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


def _uncached_lane(session: str, tag: str) -> list[dict]:
    """A subagent's lane on Haiku that reads and writes nothing in the cache (two calls)."""
    t = Transcript(session, version="2.1.90", sidechain=True)
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant(f"{tag}1", "2025-09-03T00:00:02.000Z", [cc_usage(20_000, 0, 0, 40)], model="claude-haiku-4-5-20251001")
    t.user("result", "2025-09-03T00:00:03.000Z", tool=True)
    t.assistant(f"{tag}2", "2025-09-03T00:00:05.000Z", [cc_usage(20_300, 0, 0, 40)], model="claude-haiku-4-5-20251001")
    for line in t.lines:
        line["uuid"] = f"{tag}-{line['uuid']}"
        if line["parentUuid"] is not None:
            line["parentUuid"] = f"{tag}-{line['parentUuid']}"
    return t.lines


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_sessions_that_never_read_count_a_sessions_subagents_as_its_session(tmp_path, capsys, layout):
    # Two subagents of one session on Haiku read and wrote nothing, the rest of the log read.
    # Base: "2 sessions", one line a subagent's file (the count was of files).
    root = _project(tmp_path / "projects", layout)
    project = root / "-home-u-w"
    for tag, name in (("b", "agent-abb0001"), ("c", "agent-acc0002")):
        write_jsonl(project / PurePath(LAYOUTS[layout]).with_name(f"{name}.jsonl"), _uncached_lane(SESSION, tag))
    assert main(["audit", str(root), "--quiet", "--out", str(tmp_path / "out")]) == 0
    head = capsys.readouterr().out.split("\nlost $")[0]
    lines = head.splitlines()
    opening = next(line for line in lines if "to a provider that caches read and wrote nothing" in line)
    assert opening.startswith("  1 session to a provider that caches read and wrote nothing in the cache (4 requests, $"), opening
    named = lines[lines.index(opening) + 1]
    assert named.startswith(f"    {SESSION}.jsonl: anthropic claude-haiku-4-5-20251001, 4 requests in 2 files, 80,600 input tokens, $"), named
    assert lines[lines.index(opening) + 2:] in ([], [""]), lines  # the session's line alone, no subagent's file
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    # report.html reads the JSON object, whose file records name the session a file is part of
    # (base: told from the folders, "2 sessions" for an older version's subagent and the swapped copy)
    assert "1 session to a provider that caches read and wrote nothing in the cache (4 requests, $" in html
    assert f"{SESSION}.jsonl: anthropic claude-haiku-4-5-20251001, 4 requests in 2 files" in html


def _subagent_start(session: str, tag: str) -> list[dict]:
    """A subagent's lane whose first call sends its first message alone (one call)."""
    t = Transcript(session, version="2.1.90", sidechain=True)
    t.user("look for the config loader", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant(f"{tag}1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 12_000, 0, 9)], model="claude-haiku-4-5-20251001")
    for line in t.lines:
        line["uuid"] = f"{tag}-{line['uuid']}"
        if line["parentUuid"] is not None:
            line["parentUuid"] = f"{tag}-{line['parentUuid']}"
    return t.lines


@pytest.mark.parametrize("layout", ["2.x", "session folder"])
def test_a_subagents_start_is_named_by_its_project_in_either_session_layout(tmp_path, layout):
    # Two sessions' subagents sending the same first message name one node, whose project is the
    # project's folder and whose home the folder above projects/. Base, in <session>/agent-*.jsonl:
    # the session's folder was taken for the project (and projects/ for the home), two nodes.
    project = tmp_path / ".claude" / "projects" / "-home-u-w"
    for session, tag in ((SESSION, "a"), (OTHER, "b")):
        sub = project / LAYOUTS[layout].replace(SESSION, session).replace("agent-aa64fe4", f"agent-a{tag}")
        sub.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(sub, _subagent_start(session, tag))
    requests, _ = load_trace([tmp_path / ".claude" / "projects"])
    assert len(requests) == 2
    nodes = {r.prefix.node for r in requests}
    assert len(nodes) == 1, nodes
    assert nodes.pop().startswith(f"by-content:cc-start:{tmp_path / '.claude'}:2.1.90:subagent:-home-u-w:")


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


def test_the_swapped_copy_puts_a_sessions_transcripts_in_one_project_in_every_view(tmp_path):
    # The copy that swaps a workflow run's folders (austinweitao/claude-backup) keeps the main
    # transcript in <project>/sessions/: the audit's project folder, ttl-auto's setting scope and
    # the start node's project and home are the project's folder's for it and its workflow agent
    # alike. Base: <project>/sessions for the main transcript (its scope the project's folder,
    # its start node's project "sessions"), <project> for the agent.
    from prefixbench.workloads.audit.core import _project_folder
    from prefixbench.workloads.audit.whatif import _setting_scope

    home = tmp_path / ".claude"
    project = home / "projects" / "-home-u-w"
    main_transcript = project / MAINS["workflow, swapped"]
    agent = project / LAYOUTS["workflow, swapped"]
    for path, tag, sidechain in ((main_transcript, "m", False), (agent, "a", True)):
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = _subagent_start(SESSION, tag)
        for line in lines:
            line["isSidechain"] = sidechain
        write_jsonl(path, lines)
    files = [str(main_transcript), str(agent)]
    assert [_project_folder(f) for f in files] == [str(project)] * 2
    assert [_setting_scope(f, "claude-code") for f in files] == [str(home / "projects")] * 2
    requests, _ = load_trace([home / "projects"])
    assert len(requests) == 2
    starts = {r.file: r.prefix.node.split(":") for r in requests}
    assert all(node[1] == "cc-start" for node in starts.values()), starts
    assert {(node[2], node[5]) for node in starts.values()} == {(str(home), "-home-u-w")}, starts


def test_a_sessions_folder_with_no_swapped_session_folders_beside_it_is_a_project_of_its_own(tmp_path):
    # Nothing beside sessions/ says it is the swapped copy's: the folder is the project's, as any is.
    from prefixbench.workloads.audit.core import _project_folder

    folder = tmp_path / "logs" / "sessions"
    folder.mkdir(parents=True)
    (tmp_path / "logs" / "subagents" / "notes").mkdir(parents=True)
    file = folder / f"{SESSION}.jsonl"
    write_jsonl(file, _subagent_start(SESSION, "m"))
    assert _project_folder(str(file)) == str(folder)


@pytest.mark.parametrize("layout", ["workflow", "workflow, swapped"])
def test_a_workflow_runs_journal_is_listed_and_not_warned_of(tmp_path, capsys, layout):
    # Beside a run's agents, journal.jsonl holds its agents' starts and results (records of
    # austinweitao/claude-backup@9fbf6756: {type: started|result, agentId, key[, result]}), no call.
    # Base: "warning: ... none of its first records is of a format audit reads", once a run.
    root = _project(tmp_path / "projects", layout)
    run = root / "-home-u-w" / PurePath(LAYOUTS[layout]).parent
    write_jsonl(run / "journal.jsonl", [{"type": "started", "agentId": "a0b8e04", "key": "explore:0"},
                                        {"type": "result", "agentId": "a0b8e04", "key": "explore:0", "result": "done"},
                                        {"type": "failed", "agentId": "a1c9f15"}])
    assert main(["audit", str(root), "--format", "json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "journal.jsonl" not in err, err
    (listed,) = [f for f in json.loads(out)["files"] if f["file"].endswith("journal.jsonl")]
    assert listed["format"] == "not-a-log" and listed["requests"] == 0
    assert listed["notes"][0].startswith("skipped: a Claude Code workflow run's journal"), listed
    # A journal.jsonl of other records is what it was: a file of no format audit reads, warned of.
    write_jsonl(run / "journal.jsonl", [{"type": "started", "agentId": "a0b8e04", "key": "k", "prompt": "x"}])
    assert main(["audit", str(root), "--format", "json", "--quiet"]) == 0
    assert "journal.jsonl: skipped: found by the folder walk, and none of its first records" in capsys.readouterr().err
