"""Fuzz Claude Code fork subagents' transcripts (2.1.232 on; workloads/logs/formats/claude_code.py):
a ``fork-context-ref`` entry of any fields, anywhere among the lines, before a restated parent
message whose request id is any JSON value (or none), in a session folder with or without the
parent's transcript: ``audit`` ends in exit 0 or one line of exit 2, never an exception; the
restated message is counted once at most, never in the fork's file when the ref opens it. And a
``--fork-session`` copy (2.1.326 on) whose assistant entries carry any ``requestSessionId``: each
call is counted once where its source's file is read, at most once where it is not."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.workloads.audit.core import load_trace
from tests.fuzz.harness import JSON, Tally, fuzz_settings
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

REF_FIELDS = st.dictionaries(st.sampled_from(["agentId", "parentSessionId", "parentLastUuid", "contextLength", "uuid", "type"]),
                             JSON, max_size=5)


def _project(root: Path, ref: dict, ref_at: int, request_id: object, parent: bool) -> None:
    main = Transcript("s1", version="2.1.240")
    main.user("go", "2026-08-20T10:00:00.000Z", root=True)
    main.assistant("r1", "2026-08-20T10:00:05.000Z", [cc_usage(3, 20000, 0, 300)])
    dispatch = dict(main.lines[-1])
    if parent:
        write_jsonl(root / "s1.jsonl", main.lines)
    fork = Transcript("s1", version="2.1.240", sidechain=True)
    restated = {**dispatch, "uuid": "fork-restated", "parentUuid": None, "isSidechain": True}
    if request_id == "absent":
        restated.pop("requestId")
    else:
        restated["requestId"] = request_id
    fork.lines.append(restated)
    fork.last, fork.n = "fork-restated", 10
    fork.user("directive", "2026-08-20T10:00:06.000Z")
    fork.assistant("f1", "2026-08-20T10:00:09.000Z", [cc_usage(3, 700, 20000, 50)])
    lines: list[object] = list(fork.lines)
    lines.insert(min(ref_at, len(lines)), {"type": "fork-context-ref", **ref})
    write_jsonl(root / "s1" / "subagents" / "agent-afork1.jsonl", lines)


def test_any_fork_context_ref_reads_and_the_parent_call_counts_once(importer_examples):
    tally = Tally("claude-code fork", bound_s=20)

    @fuzz_settings(importer_examples)
    @given(ref=REF_FIELDS, ref_at=st.integers(0, 4), request_id=st.one_of(st.just("r1"), st.just("absent"), JSON),
           parent=st.booleans())
    def case(ref, ref_at, request_id, parent) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            _project(root, ref, ref_at, request_id, parent)
            tally.check(["audit", "--quiet", "--format", "json", str(root)])
            if ref.get("type", "fork-context-ref") != "fork-context-ref" or "uuid" in ref:
                return  # (no longer the entry, or an entry of the chain)
            try:
                requests, _ = load_trace([root])
            except Exception as error:  # a refusal (a key of another type): the CLI's one line said it
                assert type(error).__name__ == "UserError", error
                return
        ids = [r.request_id for r in requests]
        assert ids.count("f1") == 1
        if ref_at == 0:
            # Opening the file, the ref makes the restated message the parent's: never the fork's call.
            assert [r.request_id for r in requests if "agent-afork1" in r.file] == ["f1"]
        if parent and request_id in ("r1", "absent"):
            assert ids.count("r1") == 1

    case()
    tally.report()


def _resumed_copy(root: Path, marks: list[object], source: bool, fork_name: str) -> None:
    """A session ``s1`` of two calls and a fork of it (``--fork-session``, 2.1.326 on) whose copies
    of ``s1``'s assistant entries carry ``requestSessionId`` values from ``marks`` (a missing one:
    none written)."""
    main = Transcript("s1", version="2.1.329")
    main.user("go", "2026-11-20T10:00:00.000Z", root=True)
    main.assistant("r1", "2026-11-20T10:00:05.000Z", [cc_usage(3, 20000, 0, 300)])
    main.user("out", "2026-11-20T10:00:06.000Z", tool=True)
    main.assistant("r2", "2026-11-20T10:00:09.000Z", [cc_usage(3, 500, 20000, 60)])
    if source:
        write_jsonl(root / "s1.jsonl", main.lines)
    copies, n = [], 0
    for line in main.lines:
        copy = dict(line, sessionId=fork_name)
        if line["type"] == "assistant" and n < len(marks):
            if marks[n] != "absent":
                copy["requestSessionId"] = marks[n]
            n += 1
        copies.append(copy)
    fork = Transcript(fork_name, version="2.1.329")
    fork.last, fork.n = copies[-1]["uuid"], 20
    fork.user("again", "2026-11-20T10:01:00.000Z")
    fork.assistant("f1", "2026-11-20T10:01:04.000Z", [cc_usage(3, 400, 20500, 40)])
    write_jsonl(root / f"{fork_name}.jsonl", copies + fork.lines)


def test_any_request_session_id_reads_and_each_call_counts_once(importer_examples):
    tally = Tally("claude-code requestSessionId", bound_s=20)
    mark = st.one_of(st.just("s1"), st.just("absent"), st.sampled_from(["f0", "zz-fork", ""]), JSON)

    @fuzz_settings(importer_examples)
    @given(marks=st.lists(mark, max_size=2), source=st.booleans(), fork_name=st.sampled_from(["f0", "zz-fork"]))
    def case(marks, source, fork_name) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            _resumed_copy(root, marks, source, fork_name)
            tally.check(["audit", "--quiet", "--format", "json", str(root)])
            requests, _ = load_trace([root])
        ids = [r.request_id for r in requests]
        assert ids.count("f1") == 1
        for key in ("r1", "r2"):
            # The source's calls: once where its file is read, at most once where it is not.
            assert ids.count(key) == 1 if source else ids.count(key) <= 1

    case()
    tally.report()
