"""pi sessions (workloads/logs/formats/pi.py)."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.audit.locate import logged
from prefixbench.workloads.runs.execute import map_runs
from tests.unit.audit.fixtures import write_jsonl


def _pi(path: Path, entries: list[dict]) -> Path:
    header = {"type": "session", "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x", "provider": "anthropic", "modelId": "claude-opus-4-5", "thinkingLevel": "off"}
    return write_jsonl(path, [header, *entries])


def _pi_msg(role: str, ts_ms: int, usage: dict | None = None) -> dict:
    message = {"role": role, "content": [], "timestamp": ts_ms}
    if usage is not None:
        message.update({"provider": "anthropic", "model": "claude-opus-4-5", "api": "anthropic-messages", "usage": usage, "stopReason": "stop"})
    return {"type": "message", "timestamp": "2025-12-08T22:41:09.389Z", "message": message}


def _u(i: int, r: int, w: int, o: int = 10) -> dict:
    return {"input": i, "output": o, "cacheRead": r, "cacheWrite": w, "cost": {}}


def _tool_loop(t0: int) -> list[dict]:
    """A user turn, a call that writes 40,000 tokens, a tool result, a call that reads them."""
    return [
        _pi_msg("user", t0),
        _pi_msg("assistant", t0 + 10, _u(10, 0, 40000)),
        _pi_msg("toolResult", t0 + 5000),
        _pi_msg("assistant", t0 + 5010, _u(1, 40000, 500)),
    ]


def _tool_loop_then_docs(tmp_path: Path, t0: int, between: list[dict]) -> tuple[list, Path]:
    """A tool loop, the entries ``between``, then a user turn asking for the docs (a call reading
    40,501) and one more turn (a call reading 41,500): the requests read and the file."""
    entries = [*_tool_loop(t0), *between,
               {**_pi_msg("user", t0 + 20000), "message": {"role": "user", "content": "And now the docs, " * 200, "timestamp": t0 + 20000}},
               _pi_msg("assistant", t0 + 20010, _u(10, 40501, 3100)),
               _pi_msg("user", t0 + 40000), _pi_msg("assistant", t0 + 40010, _u(3000, 41500, 0))]
    path = _pi(tmp_path / "pi.jsonl", entries)
    requests, _ = load_trace([path])
    return requests, path


def test_pi_thinking_change_and_a_user_turn_miss_located_in_the_head(tmp_path: Path) -> None:
    t0 = 1765233665294
    entries = [
        *_tool_loop(t0),
        _pi_msg("assistant", t0 + 6000, _u(0, 0, 0, 0)),  # aborted before any usage
        {"type": "thinking_level_change", "timestamp": "x", "thinkingLevel": "high"},
        _pi_msg("user", t0 + 20000),
        _pi_msg("assistant", t0 + 20010, _u(10, 0, 41000)),
        _pi_msg("user", t0 + 60000),
        _pi_msg("assistant", t0 + 60010, _u(10, 0, 41500)),
    ]
    path = _pi(tmp_path / "pi.jsonl", entries)
    result = run_audit([path])
    causes = [(row.cause, row.evidence) for row in result.rows]
    # The last miss read 0 inside the TTL with nothing logged: the cached prefix ended in the
    # unlogged head, where pi writes the date and time (located, not unexplained).
    assert causes == [("cold-start", "log"), (None, None), ("effort-changed", "log"), ("system-changed", "position")]
    assert "thinking off -> on" in result.rows[2].detail
    assert "inside the unlogged head" in result.rows[3].detail and "date and time" in result.rows[3].detail
    assert result.files[0].skipped == 1


def test_pi_compaction_starts_a_new_chain(tmp_path: Path) -> None:
    t0 = 1765233665294
    entries = [
        _pi_msg("user", t0),
        _pi_msg("assistant", t0 + 10, _u(10, 0, 40000)),
        {"type": "compaction", "timestamp": "x", "summary": "s", "firstKeptEntryIndex": 1, "tokensBefore": 40000},
        _pi_msg("user", t0 + 20000),
        _pi_msg("assistant", t0 + 20010, _u(10, 0, 5000)),
    ]
    result = run_audit([_pi(tmp_path / "pi.jsonl", entries)])
    assert result.rows[1].cause == "compaction"


def test_a_compaction_after_the_last_call_on_its_line_is_counted_in_a_note(tmp_path: Path) -> None:
    # The shape of pi-mono's committed compact.jsonl (format 1): an automatic compaction with a
    # call after it, then a last reply and a compaction (a hook's, keeping nothing:
    # firstKeptEntryIndex past every entry) run together on the last line, a newline lost. Both
    # records of that line are read; the second compaction has no call after it and logs no
    # summary call, so the compaction table has nothing of it to judge: a note counts it.
    t0 = 1765233665294
    entries = [
        _pi_msg("user", t0),
        _pi_msg("assistant", t0 + 10, _u(10, 0, 40000)),
        {"type": "compaction", "timestamp": "x", "summary": "s", "firstKeptEntryIndex": 1, "tokensBefore": 40010},
        _pi_msg("user", t0 + 20000),
        _pi_msg("assistant", t0 + 20010, _u(10, 0, 5000)),
        _pi_msg("assistant", t0 + 30010, _u(10, 5010, 20)),
        {"type": "compaction", "timestamp": "2025-12-08T22:42:00.000Z", "summary": "all", "firstKeptEntryIndex": 7, "tokensBefore": 5040},
    ]
    path = _pi(tmp_path / "pi.jsonl", entries)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:6], lines[6] + lines[7]]) + "\n")
    result = run_audit([path])
    assert [(c.line, c.kind) for c in result.compactions] == [(6, "after")]
    notes = [n for n in result.files[0].notes if "compaction" in n]
    assert notes == ["1 compaction(s) logged after their session's last call, with no summary call logged "
                     "(line 7, 5,040 tokens before): not in the compaction table, no request of theirs to judge"]
    # A call after it, or its summary call logged, and there is no such note.
    summary = {**entries[-1], "usage": _u(5040, 0, 0, 300), "provider": "anthropic", "model": "claude-opus-4-5"}
    for tail in ([entries[-1], _pi_msg("user", t0 + 40000), _pi_msg("assistant", t0 + 40010, _u(10, 0, 900))], [summary]):
        other = run_audit([_pi(tmp_path / "other.jsonl", [*entries[:-1], *tail])])
        assert not [n for n in other.files[0].notes if "compaction" in n]
        assert len(other.compactions) == 2


def test_pi_tree_sessions_follow_parent_ids(tmp_path: Path) -> None:
    t0 = 1765233665294
    header = {"type": "session", "version": 3, "id": "p", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"}

    def entry(entry_id: str, parent: str | None, role: str, ts: int, usage: dict | None = None) -> dict:
        return {**_pi_msg(role, ts, usage), "id": entry_id, "parentId": parent}

    entries = [
        header,
        entry("e1", None, "user", t0),
        entry("e2", "e1", "assistant", t0 + 10, _u(10, 0, 40000)),
        entry("e3", "e2", "toolResult", t0 + 2000),
        entry("e4", "e3", "assistant", t0 + 2010, _u(1, 40000, 300)),
        # A branch back to the first user message: the same prompt e2 sent, read from the cache.
        entry("e5", "e1", "assistant", t0 + 60000, _u(10, 40000, 0)),
    ]
    path = write_jsonl(tmp_path / "tree.jsonl", entries)
    requests, _ = load_trace([path])
    assert [r.prefix.parent for r in requests] == [None, requests[0].prefix.node, requests[0].prefix.node]
    result = run_audit([path])
    assert [row.predicted_cache_read for row in result.rows] == [0, 40000, 40000]


def test_a_fork_counts_its_sources_copied_calls_once(tmp_path: Path) -> None:
    """pi's /fork (``createBranchedSession``) and ``--fork`` (``SessionManager.forkFrom``) write a
    new session file whose header names the source (``parentSession``) and copy the source's
    entries into it as they are, each assistant message with its usage. Main counted the copy
    again: 5 calls where the two files hold 3 (prompts 121,611 counted as 201,922)."""
    t0 = 1773500000000
    header = {"type": "session", "version": 3, "id": "src", "timestamp": "2026-03-14T10:00:00.000Z", "cwd": "/x"}

    def entry(entry_id: str, parent: str | None, role: str, ts: int, usage: dict | None = None) -> dict:
        return {**_pi_msg(role, ts, usage), "id": entry_id, "parentId": parent}

    source = [
        entry("e1", None, "user", t0),
        entry("e2", "e1", "assistant", t0 + 10, _u(10, 0, 40000)),
        entry("e3", "e2", "toolResult", t0 + 2000),
        entry("e4", "e3", "assistant", t0 + 2010, _u(1, 40000, 300)),
    ]
    src = write_jsonl(tmp_path / "2026-03-14T10-00-00-000Z_src.jsonl", [header, *source])
    fork_header = {**header, "id": "fork", "timestamp": "2026-03-14T11:00:00.000Z", "parentSession": str(src)}
    fork = write_jsonl(tmp_path / "2026-03-14T11-00-00-000Z_fork.jsonl", [
        fork_header, *source,
        entry("f1", "e4", "user", t0 + 3_600_000),
        entry("f2", "f1", "assistant", t0 + 3_600_010, _u(1000, 40300, 0)),
    ])
    requests, summaries = load_trace([tmp_path])
    assert [(Path(r.file).name[:20], r.usage.prompt) for r in requests] == [
        ("2026-03-14T10-00-00-", 40010), ("2026-03-14T10-00-00-", 40301), ("2026-03-14T11-00-00-", 41300)]
    # The fork's own call extends the source's last (its copy names it): predicted to read it.
    assert requests[2].prefix.parent == requests[1].prefix.node
    assert ("fork", "session branched from another session file") in requests[2].events
    by_file = {Path(s.file).name: s for s in summaries}
    assert [why for _, why in by_file[fork.name].skipped] == ["call copied from the session this one was forked from: counted in that session's file"] * 2
    assert any("2 call(s) copied from the session this one was forked from" in note for note in by_file[fork.name].notes)
    # Read alone, the fork counts what it holds (its source not in the audit).
    alone, _ = load_trace([fork])
    assert len(alone) == 3


def test_a_forks_copy_of_a_compaction_whose_summary_call_is_counted_in_its_source_is_no_unjudged_one(tmp_path: Path) -> None:
    """A fork made right after a compaction copies the compaction entry, its summary call's usage
    with it. That call is the source's (skipped as a copy), so the fork holds no call after the
    compaction: the base noted it as one "with no summary call logged" (it has one) and counted
    the source's compaction a second time."""
    t0 = 1773500000000
    header = {"type": "session", "version": 3, "id": "src", "timestamp": "2026-03-14T10:00:00.000Z", "cwd": "/x"}

    def entry(entry_id: str, parent: str | None, role: str, ts: int, usage: dict | None = None) -> dict:
        return {**_pi_msg(role, ts, usage), "id": entry_id, "parentId": parent}

    compaction = {"type": "compaction", "id": "c1", "parentId": "e2", "timestamp": "2026-03-14T10:05:00.000Z",
                  "summary": "s", "firstKeptEntryIndex": 3, "tokensBefore": 40010,
                  "usage": _u(40010, 0, 0, 300), "provider": "anthropic", "model": "claude-opus-4-5"}
    source = [entry("e1", None, "user", t0), entry("e2", "e1", "assistant", t0 + 10, _u(10, 0, 40000)), compaction]
    src = write_jsonl(tmp_path / "2026-03-14T10-00-00-000Z_src.jsonl", [
        header, *source, entry("e3", "c1", "user", t0 + 600_000), entry("e4", "e3", "assistant", t0 + 600_010, _u(900, 0, 400))])
    fork = write_jsonl(tmp_path / "2026-03-14T11-00-00-000Z_fork.jsonl", [
        {**header, "id": "fork", "timestamp": "2026-03-14T11:00:00.000Z", "parentSession": str(src)}, *source])
    result = run_audit([tmp_path])
    # The source's compaction, listed once, from the source: its summary call and the call after it.
    assert [(Path(c.file).name, c.kind) for c in result.compactions] == [(src.name, "call"), (src.name, "after")]
    by_file = {Path(s.file).name: s for s in result.files}
    assert not [n for n in by_file[fork.name].notes if "no summary call logged" in n], by_file[fork.name].notes
    _, summaries = load_trace([tmp_path])
    skipped = [why for s in summaries if Path(s.file).name == fork.name for _, why in s.skipped]
    assert skipped == ["call copied from the session this one was forked from: counted in that session's file"] * 2


def test_a_source_read_after_its_fork_is_not_said_to_be_the_fork(tmp_path: Path) -> None:
    """A fork whose file sorts before its source's: the fork is read first and counts the calls
    they share; the source lists its own as the same calls as the fork's. int38b's note said the
    source's calls were copied from the session it was forked from (the wrong way round). Counts
    as before: 3 calls, each once; --jobs 2 reads the same."""
    t0 = 1773500000000
    header = {"type": "session", "version": 3, "id": "src", "timestamp": "2026-03-14T10:00:00.000Z", "cwd": "/x"}

    def entry(entry_id: str, parent: str | None, role: str, ts: int, usage: dict | None = None) -> dict:
        return {**_pi_msg(role, ts, usage), "id": entry_id, "parentId": parent}

    source = [entry("e1", None, "user", t0), entry("e2", "e1", "assistant", t0 + 10, _u(10, 0, 40000)),
              entry("e3", "e2", "toolResult", t0 + 2000), entry("e4", "e3", "assistant", t0 + 2010, _u(1, 40000, 300))]
    src = write_jsonl(tmp_path / "b" / "2026-03-14T10-00-00-000Z_src.jsonl", [header, *source])
    fork = write_jsonl(tmp_path / "a" / "2026-03-14T11-00-00-000Z_fork.jsonl", [
        {**header, "id": "fork", "timestamp": "2026-03-14T11:00:00.000Z", "parentSession": str(src)}, *source,
        entry("f1", "e4", "user", t0 + 3_600_000), entry("f2", "f1", "assistant", t0 + 3_600_010, _u(1000, 40300, 0))])
    requests, summaries = load_trace([tmp_path])
    assert [(Path(r.file).name, r.usage.prompt) for r in requests] == [(fork.name, 40010), (fork.name, 40301), (fork.name, 41300)]
    by_file = {Path(s.file).name: s for s in summaries}
    assert [why for _, why in by_file[src.name].skipped] == [f"the same call as {fork}'s: counted in that file"] * 2
    assert not any("this one was forked from" in note for note in by_file[src.name].notes)
    assert any(note.startswith(f"2 call(s) the same as {fork}'s") for note in by_file[src.name].notes)
    assert load_trace([tmp_path], map_files=functools.partial(map_runs, jobs=2)) == (requests, summaries)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(calls=st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 90000), st.integers(0, 5000)), min_size=1, max_size=6),
       at=st.integers(0, 6), own=st.integers(0, 3), linear=st.booleans())
def test_property_a_fork_and_its_source_count_each_call_once(tmp_path_factory, calls, at, own, linear) -> None:
    """A source of any calls, a fork copying its entries up to any point and going on with calls of
    its own (tree or linear entries): each call counted once, by its own file, however the audit
    holds the two; the fork alone counts all it holds."""
    folder = tmp_path_factory.mktemp("fork")
    t0 = 1773500000000

    def session(sid: str, extra: dict) -> dict:
        return {"type": "session", "id": sid, "timestamp": "2026-03-14T10:00:00.000Z", "cwd": "/x", **({} if linear else {"version": 3}), **extra}

    def entry(n: int, role: str, usage: dict | None = None) -> dict:
        made = _pi_msg(role, t0 + 10 * n, usage)
        return made if linear else {**made, "id": f"e{n}", "parentId": f"e{n - 1}" if n else None}

    source = [e for n, (i, r, w) in enumerate(calls) for e in (entry(2 * n, "user"), entry(2 * n + 1, "assistant", _u(i, r, w)))]
    kept = source[:2 * min(at, len(calls))]
    mine = [entry(1000 + n, "assistant", _u(7, 0, 100 + n)) for n in range(own)]
    write_jsonl(folder / "2026-03-14T10-00-00-000Z_src.jsonl", [session("src", {}), *source])
    fork = write_jsonl(folder / "2026-03-14T11-00-00-000Z_fork.jsonl", [session("fork", {"parentSession": "src"}), *kept, *mine])
    requests, _ = load_trace([folder])
    copied = len(kept) // 2
    assert len(requests) == len(calls) + own
    assert sum(Path(r.file) == fork for r in requests) == own
    alone, _ = load_trace([fork])
    assert len(alone) == copied + own


def test_other_format_under_explicit_input(tmp_path: Path) -> None:
    path = _pi(tmp_path / "pi.jsonl", [_pi_msg("user", 1)])
    with pytest.raises(UserError, match=r"pi.jsonl:1: a pi record in a file read as claude-code"):
        load_trace([path], "claude-code")


def test_pi_gemini_apis_count_the_reads_inside_input(tmp_path: Path) -> None:
    """pi's google-generative-ai and google-vertex APIs write Gemini's promptTokenCount whole into
    ``input`` with ``cacheRead`` inside it; its google-gemini-cli API and the others subtract the
    reads. Main read every input as excluding the reads, counting cached tokens twice."""
    t0 = 1765233665294

    def gem(api: str, ts: int, i: int, r: int, o: int, total: int) -> dict:
        entry = _pi_msg("assistant", ts, {"input": i, "output": o, "cacheRead": r, "cacheWrite": 0, "totalTokens": total, "cost": {}})
        entry["message"].update({"provider": "google", "model": "gemini-3.1-pro", "api": api})
        return entry

    entries = [
        _pi_msg("user", t0),
        gem("google-generative-ai", t0 + 10, 9000, 0, 50, 9050),
        _pi_msg("toolResult", t0 + 5000),
        gem("google-generative-ai", t0 + 5010, 9500, 8000, 40, 9540),  # input includes the reads
        _pi_msg("toolResult", t0 + 6000),
        gem("google-vertex", t0 + 6010, 9900, 9000, 30, 9930),
        _pi_msg("toolResult", t0 + 7000),
        gem("google-gemini-cli", t0 + 7010, 1000, 9000, 30, 10030),  # this API subtracts them
        _pi_msg("toolResult", t0 + 8000),
        gem("google-generative-ai", t0 + 8010, 1200, 9000, 30, 10230),  # a total counting the reads apart
    ]
    requests, _ = load_trace([_pi(tmp_path / "pi.jsonl", entries)])
    assert [(r.usage.uncached, r.usage.cache_read) for r in requests if r.usage] == [
        (9000, 0), (1500, 8000), (900, 9000), (1000, 9000), (1200, 9000)]


@pytest.mark.parametrize(("model", "predicted"), [("gemini-2.0-flash", [0, 0, 0]), ("gemini-1.5-pro", [0, 0, 0]),
                                                ("gemini-2.5-flash", [0, 0, 9000])])
def test_gemini_before_2_5_reads_nothing_implicitly(tmp_path: Path, model: str, predicted: list[int]) -> None:
    """Implicit caching is on from Gemini 2.5: a growing prompt to gemini-2.0-flash reads nothing
    (a public OpenClaw home's 49 such calls read none). Main predicted reads of every one. The
    second call reads 9,000: on 2.5 the call after it is predicted to read its prompt less 2.5
    Flash's 500-token lag (a 2.5 lane that has read nothing yet is predicted to read nothing, so
    the second call's prediction is 0)."""
    t0 = 1769900000000
    entries = [_pi_msg("user", t0)]
    for n, (prompt, read) in enumerate(((9000, 0), (9500, 9000), (9900, 0))):
        entry = _pi_msg("assistant", t0 + 1000 * n + 10, {"input": prompt, "output": 30, "cacheRead": read, "cacheWrite": 0, "cost": {}})
        entry["message"].update({"provider": "google", "model": model, "api": "google-generative-ai"})
        entries += [entry, _pi_msg("toolResult", t0 + 1000 * n + 500)]
    result = run_audit([_pi(tmp_path / "pi.jsonl", entries)])
    assert [row.predicted_cache_read for row in result.rows] == predicted


@pytest.mark.parametrize(("api", "predicted"), [("openai-responses", 5376), ("openai-codex-responses", 5376), ("openai-completions", 4992)])
def test_pi_on_openai_responses_reads_into_the_previous_response(tmp_path: Path, api: str, predicted: int) -> None:
    """pi sends a Responses call's output back whole (its reasoning items as thinkingSignature),
    so OpenAI's cache serves the next call past the previous prompt: 5,000 + 500 out, floored
    to 128: 5,376. Over chat completions the reasoning is not sent back: 5,000 floored, 4,992."""
    t0 = 1765233665294

    def gpt(ts: int, i: int, r: int, o: int) -> dict:
        entry = _pi_msg("assistant", ts, {"input": i, "output": o, "cacheRead": r, "cacheWrite": 0, "cost": {}})
        entry["message"].update({"provider": "openai", "model": "gpt-5.1-codex", "api": api})
        return entry

    entries = [_pi_msg("user", t0), gpt(t0 + 10, 5000, 0, 500), _pi_msg("toolResult", t0 + 5000), gpt(t0 + 5010, 224, 5376, 40)]
    result = run_audit([_pi(tmp_path / "pi.jsonl", entries)])
    assert [row.predicted_cache_read for row in result.rows] == [0, predicted]


def test_calls_run_together_on_one_line_are_told_apart_by_their_path(tmp_path: Path) -> None:
    # A writer that loses a newline puts two records on one line (a committed pi session has
    # one); both calls are read, each names its place on the line, and the second extends the
    # first (its own node), reading the first's whole prompt.
    t0 = 1765233665294
    entries = [*_tool_loop(t0), _pi_msg("toolResult", t0 + 6000), _pi_msg("assistant", t0 + 6010, _u(1, 40500, 500))]
    path = _pi(tmp_path / "pi.jsonl", entries)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:4], "".join(lines[4:])]) + "\n")
    result = run_audit([path])
    assert [(row.line, row.path) for row in result.rows] == [(3, ""), (5, "record[0]"), (5, "record[2]")]
    assert [row.cause for row in result.rows] == ["cold-start", None, None]
    assert len({r.prefix.node for r in load_trace([path])[0]}) == 3


def _later_pi_session(path: Path, calls: list[dict]) -> Path:
    """A session as later pi (earendil-works/pi, late 2026) writes it: a version 3 header, a name,
    the model and thinking level as entries, then messages whose Anthropic usage puts the 1 h
    writes apart (``cacheWrite1h``, inside ``cacheWrite``) and the reasoning (``reasoning``,
    inside ``output``) after the ``cost`` object."""
    entries: list[dict] = [
        {"type": "session", "version": 3, "id": "01a2b3c4-0000-7000-8000-00000000abcd", "timestamp": "2026-11-20T09:00:00.000Z", "cwd": "/w"},
        {"type": "session_info", "id": "s0", "parentId": None, "timestamp": "2026-11-20T09:00:00.001Z", "name": "tidy"},
        {"type": "model_change", "id": "s1", "parentId": "s0", "timestamp": "2026-11-20T09:00:00.200Z", "provider": "anthropic", "modelId": "claude-opus-5"},
        {"type": "thinking_level_change", "id": "s2", "parentId": "s1", "timestamp": "2026-11-20T09:00:00.200Z", "thinkingLevel": "medium"},
    ]
    parent, t0 = "s2", 1795000000000
    for n, usage in enumerate(calls):
        role, entry_id = ("user", f"u{n}") if n == 0 else ("toolResult", f"t{n}")
        entries.append({"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-11-20T09:00:01.000Z",
                        "message": {"role": role, "content": [{"type": "text", "text": "go on"}], "timestamp": t0 + 9000 * n}})
        entries.append({"type": "message", "id": f"a{n}", "parentId": entry_id, "timestamp": "2026-11-20T09:00:05.000Z",
                        "message": {"role": "assistant", "content": [{"type": "text", "text": "done"}], "api": "anthropic-messages",
                                    "provider": "anthropic", "model": "claude-opus-5", "usage": usage, "stopReason": "toolUse",
                                    "timestamp": t0 + 9000 * n + 10, "responseId": f"msg_{n}", "rawStopReason": "tool_use"}})
        parent = f"a{n}"
    return write_jsonl(path, entries)


def _later_usage(i: int, o: int, r: int, w: int, w1h: int, reasoning: int) -> dict:
    return {"input": i, "output": o, "cacheRead": r, "cacheWrite": w, "totalTokens": i + o + r + w,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}, "cacheWrite1h": w1h, "reasoning": reasoning}


def test_later_pi_writes_for_an_hour_apart_field_by_field(tmp_path: Path) -> None:
    """Later pi writes ``cacheWrite1h``, the part of ``cacheWrite`` written with a 1 h lifetime.
    Main read all of ``cacheWrite`` as 5 min writes (cache_write_1h 0, 5 min writes 22,050)."""
    path = _later_pi_session(tmp_path / "later.jsonl", [
        _later_usage(3, 80, 0, 21000, 20000, 30),  # system and tools written for an hour
        _later_usage(2, 60, 21000, 700, 0, 0),
        _later_usage(1, 40, 21700, 350, 0, 12),
    ])
    requests, summaries = load_trace([path])
    usages = [r.usage for r in requests if r.usage]
    assert [(u.uncached, u.cache_read, u.cache_write_5m, u.cache_write_1h, u.output) for u in usages] == [
        (3, 0, 1000, 20000, 80), (2, 21000, 700, 0, 60), (1, 21700, 350, 0, 40)]
    # The session's own sums, by hand: input 6, cacheRead 42,700, cacheWrite 22,050 of which
    # cacheWrite1h 20,000, output 180; each call's totalTokens is its prompt plus output.
    assert sum(u.uncached for u in usages) == 6
    assert sum(u.cache_read for u in usages) == 42700
    assert sum(u.cache_write_5m + u.cache_write_1h for u in usages) == 22050
    assert sum(u.cache_write_1h for u in usages) == 20000
    assert sum(u.output for u in usages) == 180
    assert [u.prompt + u.output for u in usages] == [21083, 21762, 22091]
    assert summaries[0].format == "pi" and summaries[0].requests == 3
    result = run_audit([path])
    assert [row.reported_cache_read for row in result.rows] == [0, 21000, 21700]


def test_later_pi_hour_writes_beyond_the_writes_are_refused(tmp_path: Path) -> None:
    path = _later_pi_session(tmp_path / "bad.jsonl", [_later_usage(3, 80, 0, 1000, 1500, 0)])
    with pytest.raises(UserError, match=r"bad.jsonl:6: usage.cacheWrite1h \(1500\) exceeds usage.cacheWrite \(1000\)"):
        load_trace([path])


@pytest.mark.parametrize(("pi_provider", "model", "served_by"), [
    ("openai-codex", "gpt-5.1-codex", "openai"),  # pi's ids for a vendor's own endpoints
    ("google", "gemini-3.1-pro", "gemini"),
    ("amazon-bedrock", "global.anthropic.claude-opus-4-6-v1", "bedrock"),
    ("kimi-coding", "kimi-for-coding", "moonshot"),
    # A custom provider entry (models.json) sending the model only Kimi Code's endpoint serves
    # (main: unknown); one sending a model many hosts serve stays unknown.
    ("kimi-coder", "kimi-for-coding", "moonshot"),
    ("my-proxy", "kimi-k2.5", "unknown"),
    ("ollama", "kimi-for-coding", "unknown"),
    ("fireworks", "kimi-for-coding", "unknown"),  # a host serving open models itself: its own, whatever the model
    ("kimi-coder", "Kimi-For-Coding", "moonshot"),  # the model id whatever its case
    ("minimax-portal", "MiniMax-M2.5", "minimax"),  # OpenClaw's MiniMax OAuth (main: unknown)
    ("opencode", "deepseek-v4-flash-free", "deepseek"),  # gateways: the model's vendor
    ("openrouter", "x-ai/grok-4-fast", "xai"),
    # Later pi's provider ids (earendil-works/pi's KnownProvider). Main: unknown, each.
    ("moonshotai", "kimi-k2.5", "moonshot"),
    ("moonshotai-cn", "kimi-k2.5", "moonshot"),
    ("zai-coding-cn", "glm-5", "zai"),
    ("qwen-token-plan", "qwen3.6-plus", "qwen"),
    ("qwen-token-plan-individual", "qwen3.6-plus", "qwen"),
    ("cloudflare-ai-gateway", "anthropic/claude-sonnet-4-5", "anthropic"),
    ("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.5", "unknown"),  # a host serving it itself
    # Workers AI through the gateway (later pi's default model there): Cloudflare runs it. Main: moonshot, zai.
    ("cloudflare-ai-gateway", "workers-ai/@cf/moonshotai/kimi-k2.6", "unknown"),
    ("cloudflare-ai-gateway", "workers-ai/@cf/zai-org/glm-4.7-flash", "unknown"),
    ("fireworks", "accounts/fireworks/models/minimax-m3", "unknown"),  # a host serving it itself
    ("groq", "openai/gpt-oss-120b", "unknown"),
])
def test_pi_provider_ids_name_who_served_the_call(tmp_path: Path, pi_provider: str, model: str, served_by: str) -> None:
    t0 = 1765233665294
    entry = _pi_msg("assistant", t0 + 10, _u(5000, 0, 0))
    entry["message"].update({"provider": pi_provider, "model": model, "api": "openai-completions"})
    requests, _ = load_trace([_pi(tmp_path / "pi.jsonl", [_pi_msg("user", t0), entry])])
    assert [r.provider for r in requests] == [served_by]
    # Workers AI, Fireworks and Groq bill their own prices, not the maker's list: their calls'
    # upstream, priced at the host's own row or unpriced (main: "" for Fireworks and Groq, priced
    # at the maker's list price).
    host = "workers-ai" if "@cf/" in model else pi_provider if pi_provider in ("fireworks", "groq", "ollama") else ""
    assert [r.upstream for r in requests] == [host]


def _zen_session(t0: int, gap: int, model: str, calls: list[tuple[int, int]], provider: str = "opencode") -> list[dict]:
    """A pi session on openai-completions (no write count; through OpenCode Zen unless told): a user
    message, then per (uncached, read) an assistant call ``gap`` ms after the one before and its
    tool result."""
    entries = [_pi_msg("user", t0)]
    for n, (uncached, read) in enumerate(calls):
        entry = _pi_msg("assistant", t0 + 10 + n * gap, _u(uncached, read, 0))
        entry["message"].update({"provider": provider, "model": model, "api": "openai-completions"})
        entries += [entry, _pi_msg("toolResult", t0 + 1000 + n * gap)]
    return entries


def test_pi_session_through_opencode_zen_reads_by_deepseek_rules(tmp_path: Path) -> None:
    # A public pi session on deepseek-v4-flash-free through OpenCode Zen (lamurian/paradocs, 26
    # calls): every read was the previous prompt in 128-token units, after 23 min idle too,
    # DeepSeek's cache. Read as a server no rule names, 11 of 26 were within 3%; as DeepSeek's, 26.
    entries = _zen_session(1784000000000, 1_400_000, "deepseek-v4-flash-free", [(9781, 0), (26755, 9856), (3001, 36864)])
    result = run_audit([_pi(tmp_path / "pi.jsonl", entries)])
    assert [row.predicted_cache_read for row in result.rows] == [0, 9728, 36608]


def test_a_zen_free_model_through_pi_is_priced_at_zero_as_opencode_names_it(tmp_path: Path) -> None:
    # pi's provider `opencode` is OpenCode Zen: its free models were priced $0 in OpenCode's logs
    # but left unpriced in pi's (the model named bare). Now both name it opencode/<id>, priced by
    # the $0 row and predicted as before; the same id through another provider stays unpriced.
    calls = [(9781, 0), (26755, 9856), (3001, 36864)]
    zen = run_audit([_pi(tmp_path / "zen.jsonl", _zen_session(1784000000000, 60_000, "deepseek-v4-flash-free", calls))])
    assert {r.model for r in zen.rows} == {"opencode/deepseek-v4-flash-free"}
    assert [r.cost_usd for r in zen.rows] == [0, 0, 0] and zen.totals.unpriced_requests == 0
    assert [row.predicted_cache_read for row in zen.rows] == [0, 9728, 36608]
    other = run_audit([_pi(tmp_path / "other.jsonl", _zen_session(1784000000000, 60_000, "deepseek-v4-flash-free", calls,
                                                               provider="openrouter"))])
    assert {r.model for r in other.rows} == {"deepseek-v4-flash-free"} and other.totals.unpriced_requests == 3
    # Later pi names the upstream's model that answered (responseModel): Zen still prices the call
    # by its own name of the model asked for.
    answered = _zen_session(1784000000000, 60_000, "deepseek-v4-flash-free", calls)
    for entry in answered[1::2]:
        entry["message"]["responseModel"] = "deepseek-v4-flash"
    zen = run_audit([_pi(tmp_path / "answered.jsonl", answered)])
    assert {r.model for r in zen.rows} == {"opencode/deepseek-v4-flash-free"} and [r.cost_usd for r in zen.rows] == [0, 0, 0]


def test_a_call_on_an_api_without_a_write_count_is_read_as_writes_unknown(tmp_path: Path) -> None:
    # pi's OpenAI-shaped APIs (openai-completions, the Responses ones) and Google's have no write
    # count on the wire: pi writes ``cacheWrite: 0`` whatever was written (pi-mono's
    # packages/ai/src/providers/openai-completions.ts, parseChunkUsage). On a server no rule names
    # (mimo-v2.5-free through OpenCode Zen, public Entire checkpoints of 2026-07: each read the
    # previous prompt whole, in 64-token units), main took the 0 as "nothing written" and predicted
    # each call to read what the one before it read (0 of 6 within 3% on one session).
    t0 = 1784046729000
    calls = [(5000, 0), (900, 4992), (700, 5888), (500, 6528)]
    entries = _zen_session(t0, 6000, "mimo-v2.5-free", calls)
    result = run_audit([_pi(tmp_path / "pi.jsonl", entries)])
    assert [row.provider for row in result.rows] == ["unknown"] * 4
    # (The previous prompt whole: a server no rule names keeps no read grid here.)
    assert [row.predicted_cache_read for row in result.rows] == [0, 5000, 5892, 6588]
    assert result.files[0].read_within == 4
    t = result.totals
    # No call reports a write count, so the totals' writes are unknown (None), not 0.
    assert (t.input, t.cache_read, t.cache_write) == (7100, 17408, None)
    # A server that never read showed no cache at all (a company gateway's kimi-k2.5, castai/kimchi-dev:
    # 56 calls, every read 0): its zeros stand, and 0 is predicted.
    never = _zen_session(t0, 6000, "kimi-k2.5", [(uncached + (5000 if n else 0), 0) for n, (uncached, _) in enumerate(calls)],
                         provider="kimchi-dev")
    assert [row.predicted_cache_read for row in run_audit([_pi(tmp_path / "never.jsonl", never)]).rows] == [0, 0, 0, 0]
    # On Anthropic's own API the write count is on the wire: a 0 there is nothing written.
    entries = [_pi_msg("user", t0), _pi_msg("assistant", t0 + 10, _u(5000, 0, 0)), _pi_msg("toolResult", t0 + 1000),
               _pi_msg("assistant", t0 + 6010, _u(900, 0, 0))]
    assert [row.predicted_cache_read for row in run_audit([_pi(tmp_path / "anthropic.jsonl", entries)]).rows] == [0, 0]


def test_an_api_that_is_no_string_is_no_responses_api(tmp_path: Path) -> None:
    # A message whose "api" is a list stopped the audit with a TypeError (a list is no member of
    # a set); it is no API that sends the response back, and the call is counted.
    entry = _pi_msg("assistant", 1765233665304, _u(10, 0, 40000))
    entry["message"]["api"] = ["openai-responses"]
    t = run_audit([_pi(tmp_path / "pi.jsonl", [_pi_msg("user", 1765233665294), entry])]).totals
    assert (t.requests, t.input, t.cache_write) == (1, 10, 40000)


def test_a_read_the_model_let_expire_says_the_entry_outlived_its_ttl(tmp_path: Path) -> None:
    # A pi session on claude-opus-4-8 (5 min writes) read its whole previous prompt 8m08s after
    # the previous request: the model, past the 5 min TTL, predicted nothing, and main's row said
    # nothing of why the read was higher than predicted (no cause: nothing was lost).
    t0 = 1765233665294
    entries = [*_tool_loop(t0), _pi_msg("user", t0 + 5010 + 488_000), _pi_msg("assistant", t0 + 5010 + 488_529, _u(2, 40500, 300))]
    row = run_audit([_pi(tmp_path / "pi.jsonl", entries)]).rows[2]
    assert (row.reported_cache_read, row.predicted_cache_read, row.cause) == (40_500, 0, None)
    assert row.gap_ms == 488_529
    assert row.detail == ("read more than the model predicts past the 5m00s TTL since the previous request: "
                          "the provider kept its entry longer (a TTL is a minimum)")


def test_cache_warm_usage_entries_are_calls_that_keep_the_latest_prompt_cached(tmp_path: Path) -> None:
    # earendil-works/pi's cache warmer re-sends the latest request with a one-token cap before its
    # 5 min entry expires and logs it as a usage entry: two warms keep the 40,500-token prompt
    # cached across a 13 min idle, and the next turn reads it all. Then a compaction whose usage
    # is the summary's own call. Before: the warms and the summary were not counted, and the read
    # after the idle was called ttl-expired (predicted 0).
    t0 = 1765233665294
    warm = {"input": 0, "output": 1, "cacheRead": 40500, "cacheWrite": 0, "cost": {"total": 0.02}}
    entries = [
        *_tool_loop(t0),
        {"type": "usage", "id": "w1", "timestamp": t0 + 275_000, "kind": "cache_warm", "provider": "anthropic",
         "model": "claude-opus-4-5", "usage": warm},
        {"type": "usage", "id": "w2", "timestamp": t0 + 545_000, "kind": "cache_warm", "provider": "anthropic",
         "model": "claude-opus-4-5", "usage": warm},
        _pi_msg("user", t0 + 780_000),
        _pi_msg("assistant", t0 + 780_010, _u(10, 40500, 300)),
        {"type": "compaction", "timestamp": "2025-12-08T23:00:00.000Z", "summary": "so far", "tokensBefore": 40810,
         "usage": {"input": 41000, "output": 900, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.3}}},
    ]
    path = _pi(tmp_path / "pi.jsonl", entries)
    requests, _ = load_trace([path])
    assert [(r.lane, r.is_compaction_call) for r in requests] == [("main", False)] * 5 + [("summary", True)]
    result = run_audit([path])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read) == (6, 41_021, 932, 161_500)
    rows = result.rows
    assert [r.predicted_cache_read for r in rows[2:5]] == [40_500, 40_500, 40_500]
    assert rows[4].cause is None and all(r.read_within for r in rows)


def test_a_usage_entry_of_another_kind_is_a_side_call_of_its_own_chain(tmp_path: Path) -> None:
    t0 = 1765233665294
    entries = [*_tool_loop(t0), {"type": "usage", "timestamp": t0 + 9000, "kind": "title", "provider": "anthropic",
                                 "model": "claude-haiku-4-5", "usage": _u(300, 0, 0, 12)}]
    requests, _ = load_trace([_pi(tmp_path / "pi.jsonl", entries)])
    side = requests[-1]
    assert (len(requests), side.lane, side.lane_kind, side.model, side.prefix.parent) == (3, "title", "side", "claude-haiku-4-5", None)
    assert not side.is_compaction_call


def _event(kind: str, message: dict) -> dict:
    return {"type": kind, "message": message}


def _json_mode_run() -> list[dict]:
    """`pi --mode json` output of one run: its session header, then its events."""
    t0 = 1765233665294
    user = {"role": "user", "content": "list the files", "timestamp": t0}
    first = {"role": "assistant", "content": [], "provider": "anthropic", "model": "claude-opus-4-5", "api": "anthropic-messages",
             "usage": _u(10, 0, 40000), "stopReason": "toolUse", "timestamp": t0 + 10}
    tool = {"role": "toolResult", "toolName": "bash", "content": [], "timestamp": t0 + 5000}
    second = {"role": "assistant", "content": [], "provider": "anthropic", "model": "claude-opus-4-5", "api": "anthropic-messages",
              "usage": _u(1, 40000, 500, 7), "stopReason": "stop", "timestamp": t0 + 5010}
    partial = {**second, "usage": _u(0, 0, 0, 0)}
    events = [
        {"type": "agent_start"}, {"type": "turn_start"},
        _event("message_start", user), _event("message_end", user),
        _event("message_start", {**first, "usage": _u(0, 0, 0, 0)}),
        {"type": "message_update", "message": first, "assistantMessageEvent": {"type": "text_delta", "delta": "x"}},
        _event("message_end", first),
        {"type": "tool_execution_start", "toolCallId": "t1", "toolName": "bash", "args": {}},
        {"type": "tool_execution_end", "toolCallId": "t1", "toolName": "bash", "result": {}, "isError": False},
        _event("message_start", tool), _event("message_end", tool),
        {"type": "turn_end", "message": first, "toolResults": [tool]},
        {"type": "turn_start"},
        _event("message_start", partial),
        {"type": "message_update", "message": partial, "assistantMessageEvent": {"type": "text_delta", "delta": "y"}},
        _event("message_end", second),
        {"type": "turn_end", "message": second, "toolResults": []},
        {"type": "agent_end", "messages": [user, first, tool, second]},
    ]
    header = {"type": "session", "version": 3, "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"}
    return [header, *events]


def test_pi_json_mode_output_reads_each_message_end_once(tmp_path: Path) -> None:
    # `pi --mode json` (and --mode rpc) prints the session header, then AgentSessionEvents: each
    # message comes as message_start, message_update (partial), message_end (final), and again in
    # turn_end and agent_end. main read such a file as a pi session with no call at all.
    requests, summaries = load_trace([write_jsonl(tmp_path / "run.jsonl", _json_mode_run())])
    # Two calls: by hand, reads 0 + 40000 = 40000, writes 40000 + 500 = 40500, uncached 10 + 1 = 11, output 10 + 7 = 17.
    assert [r.line for r in requests] == [8, 17]
    assert sum(r.usage.cache_read for r in requests) == 40000
    assert sum(r.usage.cache_write_5m for r in requests) == 40500
    assert sum(r.usage.uncached for r in requests) == 11
    assert sum(r.usage.output for r in requests) == 17
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert summaries[0].format == "pi"


def test_pi_rpc_mode_output_without_a_header_is_read_too(tmp_path: Path) -> None:
    # `pi --mode rpc` prints no session header: its command responses, then the same events.
    t0 = 1765233665294
    reply = {"role": "assistant", "content": [], "provider": "anthropic", "model": "claude-opus-4-5", "api": "anthropic-messages",
             "usage": _u(4, 3000, 20, 6), "stopReason": "stop", "timestamp": t0 + 10}
    lines = [
        {"id": "req-1", "type": "response", "command": "prompt", "success": True},
        {"type": "agent_start"},
        _event("message_end", {"role": "user", "content": "hi", "timestamp": t0}),
        _event("message_start", {**reply, "usage": _u(0, 0, 0, 0)}),
        _event("message_end", reply),
        {"type": "agent_end", "messages": [reply]},
    ]
    requests, summaries = load_trace([write_jsonl(tmp_path / "rpc.jsonl", lines)])
    assert summaries[0].format == "pi"
    assert [(r.line, r.usage.cache_read, r.usage.uncached, r.usage.output) for r in requests] == [(5, 3000, 4, 6)]



def _failed_reply(error: str) -> dict:
    return {"role": "assistant", "content": [], "provider": "anthropic", "model": "claude-opus-4-5", "api": "anthropic-messages",
            "usage": _u(0, 0, 0, 0), "stopReason": "error", "errorMessage": error, "timestamp": 1765233665304}


@pytest.mark.parametrize(("lines", "said"), [
    # A prompt refused before any call (no API key): pi --mode rpc prints only its failed response.
    ([{"type": "response", "command": "prompt", "success": False, "error": "No API key found for anthropic."}],
     "x.jsonl:1: pi --mode rpc output holding no model call (its error: No API key found for anthropic.): nothing to audit"),
    # Every retry overloaded: the retries' finalError.
    ([{"id": "req-1", "type": "response", "command": "prompt", "success": True}, {"type": "agent_start"},
      _event("message_end", {"role": "user", "content": "hi", "timestamp": 1765233665294}),
      {"type": "auto_retry_end", "success": False, "attempt": 3, "finalError": "529 overloaded_error:\n Overloaded"},
      {"type": "agent_end", "messages": []}],
     "x.jsonl:4: pi --mode rpc output holding no model call (its error: 529 overloaded_error: Overloaded): nothing to audit"),
    # pi --mode json: the header, the user's message, a failed reply whose usage is all zero.
    ([{"type": "session", "version": 3, "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"}, {"type": "agent_start"},
      _event("message_end", {"role": "user", "content": "hi", "timestamp": 1765233665294}),
      _event("message_end", _failed_reply("401 authentication_error: invalid x-api-key")), {"type": "agent_end", "messages": []}],
     "x.jsonl:4: pi --mode json output holding no model call (its error: 401 authentication_error: invalid x-api-key): nothing to audit"),
    ([{"type": "session", "version": 3, "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"}, {"type": "agent_start"},
      {"type": "agent_end", "messages": []}],
     "x.jsonl:1: pi --mode json output holding no model call: nothing to audit"),
])
def test_pi_output_holding_no_call_is_refused_in_one_line_with_its_error(tmp_path: Path, lines: list[dict], said: str) -> None:
    # main said "unknown log format" of the failed response alone, and of the others "nothing to
    # audit" with a note on pi's system prompt: not that the run failed, nor why.
    path = write_jsonl(tmp_path / "x.jsonl", lines)
    with pytest.raises(UserError) as raised:
        load_trace([path])
    assert str(raised.value).replace(str(tmp_path) + "/", "").startswith(said)
    assert "\n" not in str(raised.value)


def test_pi_session_file_without_calls_is_not_refused_as_output(tmp_path: Path) -> None:
    path = _pi(tmp_path / "s.jsonl", [_pi_msg("user", 1765233665294)])
    requests, summaries = load_trace([path])  # (a session file with no call yet: read, not refused)
    assert requests == [] and summaries[0].format == "pi"


def test_pi_json_mode_runs_appended_to_one_file_are_chains_of_their_own(tmp_path: Path) -> None:
    # `pi --mode json` runs appended to one file, each with its session header: the second run's
    # first call extended the first run's last (predicted to read its 40,010 tokens: a false
    # messages-changed). A header of another session starts a new chain; the same session's
    # (a run that continued it) does not.
    header, *events = _json_mode_run()
    for other, starts in (("p2", True), (header["id"], False)):
        path = write_jsonl(tmp_path / "runs.jsonl", [header, *events, {**header, "id": other}, *events])
        requests, _ = load_trace([path])
        assert len(requests) == 4
        assert (requests[2].prefix.parent is None) is starts
        assert requests[3].prefix.parent == requests[2].prefix.node


@pytest.mark.parametrize("end", ["auto_compaction_end", "compaction_end"])
def test_a_compaction_in_pi_json_mode_output_starts_a_new_chain(tmp_path: Path, end: str) -> None:
    # pi --mode json prints a compaction as events only: auto_compaction_start/_end until 0.6x,
    # compaction_start/_end from then (0.73.1, a manual /compact too), the result holding what a
    # session file's compaction entry holds. main passed both over: the call after it extended
    # the one before, predicted to read 30,000 of it, and its miss was put down to a changed
    # system prompt (system-changed, located in the unlogged head).
    t0 = 1765233665294

    def reply(ts: int, uncached: int, write: int) -> dict:
        return {"role": "assistant", "content": [], "provider": "anthropic", "model": "claude-opus-4-5", "api": "anthropic-messages",
                "usage": _u(uncached, 0, write, 5), "stopReason": "stop", "timestamp": ts}

    start = end.replace("_end", "_start")
    lines = [
        {"type": "session", "version": 3, "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"},
        {"type": "agent_start"}, _event("message_end", {"role": "user", "content": "go", "timestamp": t0}),
        _event("message_end", reply(t0 + 10, 10, 30000)), {"type": "agent_end", "messages": []},
        {"type": start, "reason": "threshold"},
        {"type": end, "reason": "threshold", "result": {"summary": "Listed the files.", "firstKeptEntryId": "0a1b2c3d", "tokensBefore": 30015},
         "aborted": False, "willRetry": False},
        {"type": "agent_start"}, _event("message_end", {"role": "user", "content": "more", "timestamp": t0 + 60000}),
        _event("message_end", reply(t0 + 60010, 5, 30000)), {"type": "agent_end", "messages": []},
        # A compaction that failed (no result) changes nothing: the next call extends the one before.
        {"type": start, "reason": "threshold"},
        {"type": end, "reason": "threshold", "aborted": False, "willRetry": False, "errorMessage": "Compaction failed: 529"},
        _event("message_end", reply(t0 + 90010, 7, 100)),
    ]
    path = write_jsonl(tmp_path / "run.jsonl", lines)
    requests, _ = load_trace([path])
    # Three calls, by hand: uncached 10 + 5 + 7 = 22, writes 30,000 + 30,000 + 100 = 60,100.
    assert [r.line for r in requests] == [4, 10, 14]
    assert (sum(r.usage.uncached for r in requests), sum(r.usage.cache_write_5m for r in requests)) == (22, 60_100)
    assert requests[1].prefix.parent is None
    assert requests[2].prefix.parent == requests[1].prefix.node
    result = run_audit([path])
    assert [(row.cause, row.evidence) for row in result.rows[:2]] == [("cold-start", "log"), ("compaction", "log")]
    assert result.rows[1].detail == "compaction logged for this request (30015 tokens before)"
    assert result.rows[1].predicted_cache_read == 0


@pytest.mark.parametrize("summary", [None, 42, ["Listed the files."]])
def test_a_pi_compaction_result_without_a_text_summary_is_no_compaction(tmp_path: Path, summary: object) -> None:
    # A compaction_end whose result has no summary text (pi always writes one: a result without is
    # not a compaction pi did) changes nothing: the next call extends the one before.
    t0 = 1765233665294

    def reply(ts: int) -> dict:
        return {"role": "assistant", "content": [], "provider": "anthropic", "model": "claude-opus-4-5", "api": "anthropic-messages",
                "usage": _u(10, 0, 30000, 5), "stopReason": "stop", "timestamp": ts}

    lines = [
        {"type": "session", "version": 3, "id": "p1", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"},
        _event("message_end", {"role": "user", "content": "go", "timestamp": t0}), _event("message_end", reply(t0 + 10)),
        {"type": "compaction_end", "reason": "threshold", "result": {"summary": summary, "tokensBefore": 30015}},
        _event("message_end", {"role": "user", "content": "more", "timestamp": t0 + 60000}), _event("message_end", reply(t0 + 60010)),
    ]
    requests, _ = load_trace([write_jsonl(tmp_path / "run.jsonl", lines)])
    assert len(requests) == 2 and requests[1].prefix.parent == requests[0].prefix.node
    assert not any(kind == "compaction" for kind, _ in requests[1].events)


def test_pi_sends_a_deepseek_reply_back_whole_so_the_next_call_reads_into_it(tmp_path: Path) -> None:
    # A public pi home (2026-07, deepseek-v4-flash-free through OpenCode Zen, openai-completions,
    # thinking off): each read reached past the previous prompt into its reply (8,192 of 8,234
    # after a prompt of 6,183 that wrote a 2,000-token file), as DeepSeek stores a unit at the end
    # of each output. The call was predicted to read the previous prompt alone: 6,144.
    t0 = 1784000000000

    def zen(ts: int, uncached: int, read: int, output: int) -> dict:
        entry = _pi_msg("assistant", ts, _u(uncached, read, 0, output))
        entry["message"].update({"provider": "opencode", "model": "deepseek-v4-flash-free", "api": "openai-completions"})
        return entry

    entries = [_pi_msg("user", t0), zen(t0 + 10, 6183, 0, 2000), _pi_msg("toolResult", t0 + 9000), zen(t0 + 9010, 42, 8192, 40)]
    result = run_audit([_pi(tmp_path / "pi.jsonl", entries)])
    assert [row.predicted_cache_read for row in result.rows] == [0, 8064]
    assert result.rows[1].read_within
def _openclaw_session(path: Path) -> Path:
    """An OpenClaw transcript: pi's tree session, a model snapshot entry, two embedded-runner calls
    around a CLI backend's turn (api cli: the usage of the claude CLI's own calls, summed), a
    delivery mirror (a reply OpenClaw copied in, zero usage) and a gateway injection (Clawdbot's)."""
    t0 = 1772000000000

    def message(entry_id: str, parent: str | None, body: dict) -> dict:
        return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-02-25T06:13:20.000Z", "message": body}

    def call(ts: int, usage: dict, **over: object) -> dict:
        return {"role": "assistant", "content": [{"type": "text", "text": f"answer {ts}"}], "api": "anthropic-messages",
                "provider": "anthropic", "model": "claude-sonnet-4-6", "usage": usage, "stopReason": "stop", "timestamp": ts,
                **over}

    zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    header = {"type": "session", "version": 3, "id": "oc1", "timestamp": "2026-02-25T06:13:19.000Z", "cwd": "/home/u/.openclaw/workspace"}
    entries = [
        {"type": "custom", "customType": "model-snapshot", "id": "e0", "parentId": None, "timestamp": "2026-02-25T06:13:19.500Z",
         "data": {"timestamp": t0 - 500, "provider": "anthropic", "modelApi": "anthropic-messages", "modelId": "claude-sonnet-4-6"}},
        message("e1", "e0", {"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": t0}),
        message("e2", "e1", call(t0 + 10, _u(12, 0, 20000))),
        message("e3", "e2", {"role": "user", "content": [{"type": "text", "text": "run it in claude"}], "timestamp": t0 + 60000}),
        message("e4", "e3", call(t0 + 60010, {"input": 128000, "output": 3000, "cacheRead": 990000, "cacheWrite": 0,
                                              "totalTokens": 1121000}, api="cli", provider="claude-cli", model="claude-opus-4-7")),
        message("e5", "e4", call(t0 + 60020, zero, api="openai-responses", provider="openclaw", model="delivery-mirror")),
        message("e6", "e5", {"role": "user", "content": [{"type": "text", "text": "thanks"}], "timestamp": t0 + 120000}),
        message("e6b", "e6", call(t0 + 120005, zero, api="openai-responses", provider="clawdbot", model="gateway-injected")),
        message("e7", "e6b", call(t0 + 120010, _u(40, 20000, 300))),
    ]
    return write_jsonl(path, [header, *entries])


def test_openclaw_cli_turns_and_delivery_mirrors_are_no_calls(tmp_path: Path) -> None:
    # OpenClaw's CLI backends write one assistant message a turn whose usage sums the CLI's own
    # calls (990,000 tokens read here); main counted it as one call of 1.1M tokens on an
    # unknown provider. Its delivery mirrors and gateway injections were skipped as "stop call(s)
    # with no usage".
    path = _openclaw_session(tmp_path / "oc1.jsonl")
    requests, summaries = load_trace([path])
    assert [(r.line, r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m) for r in requests] == [
        (4, 12, 0, 20000), (10, 40, 20000, 300)]
    # The call after them extends the first call's prompt: one chain, nothing lost in between.
    assert requests[1].prefix.parent == requests[0].prefix.node
    (summary,) = summaries
    assert summary.skipped == (
        (6, "OpenClaw CLI-backend turn (api cli): its usage sums the CLI's own calls, no one call's"),
        (7, "OpenClaw transcript-only message (a delivery mirror or a gateway injection): no model call"),
        (9, "OpenClaw transcript-only message (a delivery mirror or a gateway injection): no model call"),
    )
    assert "1 OpenClaw CLI-backend turn(s) (api cli) not counted: each one's usage sums the calls the CLI made " \
           "(audit that CLI's own session logs for them)" in summary.notes
    assert "2 OpenClaw transcript-only message(s) not counted: delivery mirrors and gateway injections, written into " \
           "the transcript with no model call" in summary.notes
    # The second call read the whole 20,000 the first one wrote: predicted so.
    (_, second) = run_audit([path]).rows
    assert second.predicted_cache_read == 20000


#: OpenClaw's assistant messages that are no call of the chain, as hypothesis draws them.
_openclaw_only = st.one_of(
    st.builds(lambda i, r: {"provider": "claude-cli", "api": "cli", "model": "claude-opus-4-7", "usage": _u(i, r, 0)},
              st.integers(0, 10**6), st.integers(0, 10**7)),
    st.builds(lambda model, provider: {"provider": provider, "api": "openai-responses", "model": model,
                                       "usage": _u(0, 0, 0, 0)},
              st.sampled_from(("delivery-mirror", "gateway-injected")), st.sampled_from(("openclaw", "clawdbot"))),
    st.builds(lambda key: {"provider": "openclaw", "api": "openai-responses", "model": "m", "usage": _u(0, 0, 0, 0), key: {}},
              st.sampled_from(("openclawDeliveryMirror", "openclawMessageToolMirror"))),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(inserted=st.lists(st.tuples(st.integers(0, 4), _openclaw_only), max_size=5))
def test_property_openclaw_messages_that_are_no_calls_change_no_count(tmp_path_factory, inserted) -> None:
    # However many of OpenClaw's CLI turns, mirrors and injections land wherever in a session, the
    # calls read are the session's own, each listed as skipped and counted in the notes.
    t0 = 1772000000000
    entries = _tool_loop(t0)
    for at, body in sorted(inserted, key=lambda x: -x[0]):
        entries.insert(at, {"type": "message", "timestamp": "2026-02-25T06:13:20.000Z",
                            "message": {"role": "assistant", "content": [], "stopReason": "stop", "timestamp": t0, **body}})
    path = _pi(tmp_path_factory.mktemp("oc") / "s.jsonl", entries)
    requests, (summary,) = load_trace([path])
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m) for r in requests] == [(10, 0, 40000), (1, 40000, 500)]
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert len(summary.skipped) == len(inserted)
    assert sum(int(note.split(" ", 1)[0]) for note in summary.notes if "OpenClaw" in note) == len(inserted)


def _prune_marker(pruned: list[dict] | None) -> dict:
    data = {"provider": "anthropic", "modelId": "claude-opus-4-5"} if pruned is None else {
        "prunedToolResults": pruned, "ambiguousToolResultBaseKeys": [], "frozenToolResults": []}
    return {"type": "custom", "customType": "openclaw.cache-ttl", "timestamp": "2026-02-25T06:13:20.000Z", "data": data}


def test_openclaw_pruned_tool_results_are_a_compaction_before_the_next_call(tmp_path: Path) -> None:
    # OpenClaw's context pruning (mode cache-ttl) trims or clears old tool results in the prompts
    # it sends, and writes a marker listing every one pruned so far. A result not listed before
    # rewrites the prompt in place: the next call starts a new chain. An earlier OpenClaw's marker
    # (provider and model only) and a marker repeating the same list change nothing.
    t0 = 1765233665294
    one = [{"key": "toolu_1", "mode": "soft"}]
    entries = [
        *_tool_loop(t0),
        _prune_marker(None),
        _pi_msg("user", t0 + 20000),
        _pi_msg("assistant", t0 + 20010, _u(10, 40500, 200)),
        _prune_marker(one),
        _pi_msg("user", t0 + 40000),
        _pi_msg("assistant", t0 + 40010, _u(10, 0, 30000)),
        _prune_marker(one),
        _pi_msg("user", t0 + 60000),
        _pi_msg("assistant", t0 + 60010, _u(10, 30000, 100)),
        _prune_marker([*one, {"key": "toolu_1", "mode": "hard", "placeholder": "[cleared]"}]),
        _pi_msg("assistant", t0 + 60100, _u(10, 0, 30200)),
    ]
    requests, _ = load_trace([_pi(tmp_path / "oc.jsonl", entries)])
    starts = [r.prefix.parent is None for r in requests]
    assert starts == [True, False, False, True, False, True]
    assert ("compaction", "OpenClaw pruned 1 tool result(s) in place (context pruning, cache-ttl)") in requests[3].events
    rows = run_audit([tmp_path / "oc.jsonl"]).rows
    assert [row.cause for row in rows][3] == "compaction"


_marks = st.lists(st.tuples(st.sampled_from(("toolu_1", "toolu_2", "toolu_3")), st.sampled_from(("soft", "hard"))),
                  max_size=3, unique=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(snapshots=st.lists(st.one_of(st.none(), _marks), min_size=1, max_size=4))
def test_property_each_newly_pruned_tool_result_breaks_the_chain_once(tmp_path_factory, snapshots) -> None:
    # One call after each marker: it starts a new chain exactly when its marker lists a
    # (key, mode) the latest list before it did not (a marker of no list leaves that list).
    t0 = 1765233665294
    entries = [_pi_msg("user", t0), _pi_msg("assistant", t0 + 10, _u(10, 0, 4000))]
    expected, latest = [True], set()
    for n, marks in enumerate(snapshots, 1):
        entries.append(_prune_marker(None if marks is None else [{"key": k, "mode": m} for k, m in marks]))
        entries.append(_pi_msg("assistant", t0 + 1000 * n, _u(10, 4000, 10)))
        if marks is not None:
            expected.append(bool(set(marks) - latest))
            latest = set(marks)
        else:
            expected.append(False)
    requests, _ = load_trace([_pi(tmp_path_factory.mktemp("prune") / "s.jsonl", entries)])
    assert [r.prefix.parent is None for r in requests] == expected


def test_a_session_started_afresh_under_a_parent_is_no_fork(tmp_path: Path) -> None:
    """OpenClaw writes ``parentSession`` into the header of a session it starts without the
    parent's history (a subagent spawned with ``context: "isolated"``, a thread's clean session, a
    fork of a parent with no entry), as pi's ``newSession({parentSession})`` does: its entries come
    after its header. Only a copy of the parent's entries (their times before the header's) is a
    fork. int39 read any such header as a fork: the subagent's first call was a ``resume``."""
    t0 = 1773500000000  # 2026-03-14T14:53:20Z

    def entry(entry_id: str, parent: str | None, role: str, ts: int, usage: dict | None = None) -> dict:
        made = {**_pi_msg(role, ts, usage), "id": entry_id, "parentId": parent}
        return {**made, "timestamp": "2026-03-14T14:53:20.000Z" if ts >= t0 else "2026-03-14T14:52:20.000Z"}

    header = {"type": "session", "version": 3, "id": "child", "timestamp": "2026-03-14T14:53:19.500Z", "cwd": "/x",
              "parentSession": "/home/u/.openclaw/agents/main/sessions/parent.jsonl"}
    fresh = write_jsonl(tmp_path / "fresh" / "child.jsonl", [
        header, entry("a1", None, "user", t0), entry("a2", "a1", "assistant", t0 + 10, _u(3000, 0, 0))])
    requests, _ = load_trace([fresh])
    assert [name for name, _ in requests[0].events] == ["user_turn"]
    assert [row.cause for row in run_audit([fresh]).rows] == ["cold-start"]
    # The same header over a copy of the parent's entries (written before it) is a fork.
    copied = entry("p1", None, "user", t0 - 60_000)
    fork = write_jsonl(tmp_path / "fork" / "child.jsonl", [header, copied, entry("a1", "p1", "user", t0),
                                                          entry("a2", "a1", "assistant", t0 + 10, _u(3000, 0, 0))])
    requests, _ = load_trace([fork])
    assert ("fork", "session branched from another session file") in requests[0].events
    assert [row.cause for row in run_audit([fork]).rows] == ["resume"]


_times = st.one_of(st.none(), st.integers(-5000, 5000), st.sampled_from(("not a time", True, "2026-13-40T00:00:00Z")))


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(header_at=_times, first_at=_times, key=st.sampled_from(("parentSession", "branchedFrom")))
def test_property_a_header_naming_a_parent_is_a_fork_unless_its_first_entry_comes_after_it(
        tmp_path_factory, header_at, first_at, key) -> None:
    """Header and first-entry times of any kind (none, earlier, later, unreadable): the first call
    carries the fork event unless both read as times and the entry's is not before the header's;
    nothing is refused."""
    base = 1773500000000

    def stamp(offset: object) -> object:
        """An offset in ms from ``base`` as an ISO time; anything else as it is."""
        if isinstance(offset, int) and not isinstance(offset, bool):
            return datetime.fromtimestamp((base + offset) / 1000, UTC).isoformat(timespec="milliseconds")
        return offset

    header = {"type": "session", "id": "child", "cwd": "/x", key: "parent.jsonl",
              **({} if header_at is None else {"timestamp": stamp(header_at)})}
    first = {**_pi_msg("user", base), **({} if first_at is None else {"timestamp": stamp(first_at)})}
    first["message"].pop("timestamp")
    path = write_jsonl(tmp_path_factory.mktemp("fresh") / "s.jsonl",
                       [header, first, _pi_msg("assistant", base + 10, _u(100, 0, 0))])
    requests, _ = load_trace([path])
    readable = {type(header_at), type(first_at)} == {int}
    assert (("fork", "session branched from another session file") in requests[0].events) == (
        not readable or first_at < header_at)


def test_a_custom_message_is_sent_as_a_user_message_where_a_break_is_located(tmp_path: Path) -> None:
    """pi sends an extension's ``custom_message`` entry to the model as a user message of its content
    (``convertToLlm``; ``display`` only hides it in the TUI). int39 left it out of the messages a
    request adds, so a read that stopped inside it was located in the message after it."""
    t0 = 1765233665294
    note = {"type": "custom_message", "customType": "reminder", "display": False, "timestamp": "2025-12-08T22:41:19.389Z",
            "content": [{"type": "text", "text": "Reminder from the plan extension: " + "keep the tests green. " * 400}]}
    requests, path = _tool_loop_then_docs(tmp_path, t0, [note])
    added = [(m.role, m.excerpt[:25]) for m in logged(requests[2])]
    assert added == [("assistant", ""), ("user", "Reminder from the plan ex"), ("user", "And now the docs, And now")]
    assert requests[2].prefix.new_blocks == 3
    # The last call's read stops 999 tokens into the reminder: located there.
    row = run_audit([path]).rows[3]
    assert "Reminder from the plan" in row.detail, row.detail


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(("type", "text", "data")), inner, max_size=3),
                     max_leaves=8)


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(contents=st.lists(_json, min_size=1, max_size=3))
def test_property_custom_messages_of_any_content_are_one_user_message_each(tmp_path_factory, contents) -> None:
    """``custom_message`` entries of any content (text, blocks, anything else) between two calls:
    nothing is refused and the second call adds one user message for each, after the reply."""
    t0 = 1765233665294
    entries = [_pi_msg("user", t0), _pi_msg("assistant", t0 + 10, _u(10, 0, 400)),
               *({"type": "custom_message", "customType": "x", "display": True, "content": c} for c in contents),
               _pi_msg("assistant", t0 + 20, _u(10, 400, 10))]
    requests, _ = load_trace([_pi(tmp_path_factory.mktemp("custom") / "s.jsonl", entries)])
    assert [m.role for m in logged(requests[1])] == ["assistant", *("user" for _ in contents)]


def _delta_marker(set_: list[dict], remove: list[str]) -> dict:
    """Later OpenClaw's compact marker: what changed since the marker before."""
    empty = {"set": [], "remove": []}
    data = {"timestamp": 1, "provider": "anthropic", "modelId": "claude-opus-4-5", "cacheTtlDelta": {
        "prunedToolResults": {"set": set_, "remove": remove}, "ambiguousToolResultBaseKeys": empty, "frozenToolResults": empty}}
    return {"type": "custom", "customType": "openclaw.cache-ttl", "timestamp": "2026-02-25T06:13:20.000Z", "data": data}


def test_openclaw_compact_pruning_markers_are_read_as_changes_to_the_list(tmp_path: Path) -> None:
    """Later OpenClaw writes its pruning list in full only now and then, and between, the changes
    since the marker before (``cacheTtlDelta``). int39 read only the full form: a tool result pruned
    by a delta broke no chain, and the miss after it was laid to the head."""
    t0 = 1765233665294
    entries = [
        *_tool_loop(t0),
        _prune_marker([{"key": "toolu_1", "mode": "soft"}]),
        _pi_msg("assistant", t0 + 20010, _u(10, 0, 30000)),
        _delta_marker([{"key": "toolu_2", "mode": "soft"}], []),  # one more result pruned
        _pi_msg("assistant", t0 + 40010, _u(10, 0, 29000)),
        _delta_marker([], ["toolu_2"]),  # one no longer listed: no break, as the full list dropping it
        _pi_msg("assistant", t0 + 60010, _u(10, 0, 31000)),
        _delta_marker([{"key": "toolu_1", "mode": "hard", "placeholder": "[cleared]"}], []),  # soft -> hard
        _pi_msg("assistant", t0 + 80010, _u(10, 0, 28000)),
        _delta_marker([{"key": "toolu_1", "mode": "hard", "placeholder": "[cleared]"}], []),  # the same again
        _pi_msg("assistant", t0 + 90010, _u(10, 28000, 10)),
    ]
    requests, _ = load_trace([_pi(tmp_path / "oc.jsonl", entries)])
    assert [r.prefix.parent is None for r in requests] == [True, False, True, True, False, True, False]
    assert [row.cause for row in run_audit([tmp_path / "oc.jsonl"]).rows][3] == "compaction"


_lists = st.dictionaries(st.sampled_from(("toolu_1", "toolu_2", "toolu_3")), st.sampled_from(("soft", "hard")), max_size=3)


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(snapshots=st.lists(_lists, min_size=1, max_size=5), every=st.integers(1, 4))
def test_property_compact_pruning_markers_break_the_chains_their_full_lists_do(tmp_path_factory, snapshots, every) -> None:
    """Pruning lists written in full or, between checkpoints every ``every`` markers, as the
    changes since the marker before: the same calls start new chains."""
    t0 = 1765233665294

    def listed(marks: dict) -> list[dict]:
        return [{"key": k, "mode": m, **({"placeholder": "[cleared]"} if m == "hard" else {})} for k, m in marks.items()]

    def session(compact: bool) -> list[bool]:
        entries = [_pi_msg("user", t0), _pi_msg("assistant", t0 + 10, _u(10, 0, 4000))]
        before: dict = {}
        for n, marks in enumerate(snapshots):
            if compact and n % every:
                changed = [item for item in listed(marks) if before.get(item["key"]) != item["mode"]]
                entries.append(_delta_marker(changed, [k for k in before if k not in marks]))
            else:
                entries.append(_prune_marker(listed(marks)))
            before = marks
            entries.append(_pi_msg("assistant", t0 + 1000 * (n + 1), _u(10, 4000, 10)))
        requests, _ = load_trace([_pi(tmp_path_factory.mktemp("delta") / "s.jsonl", entries)])
        return [r.prefix.parent is None for r in requests]

    assert session(compact=True) == session(compact=False)


def _rewritten_session(path: Path, calls: list[tuple[int, int, int]], at: int, after: int) -> Path:
    """A tree session of ``calls`` (a user turn and a call each), rewritten as OpenClaw's
    ``truncateOversizedToolResultsInSession`` does: a branch from call ``at``'s user turn holding
    the entries after it again (new ids, each message as it was), then ``after`` calls of its own."""
    t0 = 1777000000000
    header = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-04-24T00:00:00.000Z", "cwd": "/x"}

    def entry(entry_id: str, parent: str | None, role: str, ts: int, usage: dict | None = None) -> dict:
        return {**_pi_msg(role, ts, usage), "id": entry_id, "parentId": parent}

    entries, parent = [], None
    for n, (i, r, w) in enumerate(calls):
        entries += [entry(f"u{n}", parent, "user", t0 + 1000 * n), entry(f"a{n}", f"u{n}", "assistant", t0 + 1000 * n + 10, _u(i, r, w))]
        parent = f"a{n}"
    copies, parent = [], f"u{at}"
    for old in entries[2 * at + 1:]:
        copies.append({**old, "id": f"c{old['id']}", "parentId": parent})
        parent = f"c{old['id']}"
    for n in range(after):
        copies += [entry(f"v{n}", parent, "user", t0 + 10**6 + 1000 * n), entry(f"b{n}", f"v{n}", "assistant", t0 + 10**6 + 1000 * n + 10, _u(7, 0, 100 + n))]
        parent = f"b{n}"
    return write_jsonl(path, [header, *entries, *copies])


def test_a_branch_openclaw_appended_again_counts_its_calls_once(tmp_path: Path) -> None:
    """OpenClaw truncating an oversized tool result branches from before it and appends the
    entries after it again, each assistant message as it was (time, usage). Main counted the copies
    as calls again: on a public OpenClaw home (sirdeuce/nucbox-backup, a local Ollama) one
    checkpoint file's 1,220 calls were 630, 590 of them twice. Now 4 calls here, not 6."""
    path = _rewritten_session(tmp_path / "s.jsonl", [(10, 0, 40000), (1, 40000, 300), (1, 40300, 200)], 1, 1)
    requests, summaries = load_trace([path])
    assert [r.usage.prompt for r in requests] == [40010, 40301, 40501, 107]
    # The call after the copy extends the last call copied (its first entry).
    assert requests[3].prefix.parent == requests[2].prefix.node
    assert [why for _, why in summaries[0].skipped] == ["call appended again in this file (OpenClaw rewrote its branch): counted at its first entry"] * 2
    assert any(note.startswith("2 call(s) appended again in this file") for note in summaries[0].notes)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(calls=st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 90000), st.integers(0, 5000)), min_size=1, max_size=6),
       at=st.integers(0, 5), after=st.integers(0, 3))
def test_property_a_branch_appended_again_counts_each_call_once(tmp_path_factory, calls, at, after) -> None:
    """Any calls, rewritten from any call on, with calls after: each call counted once."""
    at = min(at, len(calls) - 1)
    path = _rewritten_session(tmp_path_factory.mktemp("rewrite") / "s.jsonl", calls, at, after)
    requests, summaries = load_trace([path])
    assert len(requests) == len(calls) + after
    assert len(summaries[0].skipped) == len(calls) - at


def _bash(t_ms: int, command: str, output: str, **extra: object) -> dict:
    """A ``!cmd`` the user ran (pi's ``recordBashResult``): a ``bashExecution`` message entry."""
    message = {"role": "bashExecution", "command": command, "output": output, "exitCode": 0, "cancelled": False,
               "truncated": False, "timestamp": t_ms, **extra}
    return {"type": "message", "timestamp": "2025-12-08T22:41:19.389Z", "message": message}


def test_a_bash_execution_is_sent_as_a_user_message_unless_excluded(tmp_path: Path) -> None:
    """pi sends a ``!cmd`` run (a ``bashExecution`` message) to the model as a user message,
    "Ran `cmd`" and its output fenced (``bashExecutionToText``, pi-mono's ``convertToLlm``), and
    leaves out one run with ``!!`` (``excludeFromContext``). The reader before this kept it as a
    message of role bashExecution and no text, so a read that stopped inside its output was
    located in the message after it, and an excluded run counted as a block the prompt adds."""
    t0 = 1765233665294
    requests, path = _tool_loop_then_docs(tmp_path, t0, [
        _bash(t0 + 6000, "ls -la", "total 48\n" + "drwxr-xr-x  x\n" * 600, exitCode=2),
        _bash(t0 + 7000, "git status", "nothing to commit", excludeFromContext=True)])
    added = [(m.role, m.excerpt[:25]) for m in logged(requests[2])]
    assert added == [("assistant", ""), ("user", "Ran `ls -la` ``` total 48"), ("user", "And now the docs, And now")]
    assert requests[2].prefix.new_blocks == 3
    assert logged(requests[2])[1].tokens == len(_bash_text("ls -la", "total 48\n" + "drwxr-xr-x  x\n" * 600, 2)) // 4
    # The last call's read stops 999 tokens into the command's output: located there.
    row = run_audit([path]).rows[3]
    assert "Ran `ls -la`" in row.detail, row.detail


def _bash_text(command: str, output: str, code: int) -> str:
    return f"Ran `{command}`\n```\n{output}\n```\n\nCommand exited with code {code}"


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(fields=st.lists(st.dictionaries(st.sampled_from(("command", "output", "exitCode", "cancelled", "truncated",
                                                          "fullOutputPath", "excludeFromContext")), _json, max_size=7),
                       min_size=1, max_size=3))
def test_property_bash_executions_of_any_fields_are_one_user_message_each_or_none(tmp_path_factory, fields) -> None:
    """``bashExecution`` messages of any fields between two calls: nothing is refused, and the
    second call adds one user message for each not excluded from the context."""
    t0 = 1765233665294
    entries = [_pi_msg("user", t0), _pi_msg("assistant", t0 + 10, _u(10, 0, 400)),
               *({"type": "message", "message": {"role": "bashExecution", **f}} for f in fields),
               _pi_msg("assistant", t0 + 20, _u(10, 400, 10))]
    requests, _ = load_trace([_pi(tmp_path_factory.mktemp("bash") / "s.jsonl", entries)])
    sent = [f for f in fields if f.get("excludeFromContext") is not True]
    assert [m.role for m in logged(requests[1])] == ["assistant", *("user" for _ in sent)]


def test_a_branch_summary_is_sent_as_a_user_message_and_a_compaction_summary_wrapped(tmp_path: Path) -> None:
    """pi sends a ``branch_summary`` entry (``/tree`` back from a branch, summarized) as a user
    message, the summary inside its ``<summary>`` wrapper (``buildSessionContext`` and
    ``convertToLlm``), and a compaction's summary inside its own wrapper. The reader before this
    left the branch summary out of the messages a request adds, so a read that stopped inside it
    was located in the message after it, and counted a compaction's summary without its wrapper."""
    t0 = 1765233665294
    header = {"type": "session", "version": 3, "id": "p", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"}

    def entry(entry_id: str, parent: str | None, role: str, ts: int, usage: dict | None = None, text: str = "") -> dict:
        message = {**_pi_msg(role, ts, usage), "id": entry_id, "parentId": parent}
        if text:
            message["message"] = {**message["message"], "content": text}
        return message

    summary = "We tried a parser rewrite on a side branch and dropped it. " * 300
    entries = [
        header,
        entry("e1", None, "user", t0),
        entry("e2", "e1", "assistant", t0 + 10, _u(10, 0, 40000)),
        entry("e3", "e2", "toolResult", t0 + 2000),
        entry("e4", "e3", "assistant", t0 + 2010, _u(1, 40000, 500)),
        {"type": "branch_summary", "id": "b1", "parentId": "e4", "timestamp": "2025-12-08T22:41:19.389Z", "fromId": "e4",
         "summary": summary},
        entry("e5", "b1", "user", t0 + 20000, text="And now the docs, " * 200),
        entry("e6", "e5", "assistant", t0 + 20010, _u(10, 40501, 4800)),
        entry("e7", "e6", "user", t0 + 40000),
        entry("e8", "e7", "assistant", t0 + 40010, _u(3000, 41500, 1000)),
        {"type": "compaction", "id": "c1", "parentId": "e8", "timestamp": "2025-12-08T23:00:00.000Z", "summary": "so far",
         "firstKeptEntryId": "e8", "tokensBefore": 45000},
        entry("e9", "c1", "user", t0 + 60000),
        entry("e10", "e9", "assistant", t0 + 60010, _u(10, 0, 5000)),
    ]
    path = write_jsonl(tmp_path / "pi.jsonl", entries)
    requests, _ = load_trace([path])
    added = [(m.role, m.excerpt[:40]) for m in logged(requests[2])]
    assert added == [("assistant", ""), ("user", "The following is a summary of a branch t"), ("user", "And now the docs, And now the docs, And ")]
    assert requests[2].prefix.new_blocks == 3
    wrapped = "The conversation history before this point was compacted into the following summary:\n\n<summary>\nso far\n</summary>"
    assert (logged(requests[4])[0].excerpt[:25], logged(requests[4])[0].tokens) == ("The conversation history ", len(wrapped) // 4)
    # The fourth call's read stops 999 tokens into the branch summary: located there.
    row = run_audit([path]).rows[3]
    assert "The following is a summary of a branch" in row.detail, row.detail


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(summaries=st.lists(_json, min_size=1, max_size=3))
def test_property_branch_summaries_of_any_value_are_one_user_message_each_when_text(tmp_path_factory, summaries) -> None:
    """``branch_summary`` entries of any ``summary`` between two calls: nothing is refused, and the
    second call adds one user message for each summary that is text (pi sends no other)."""
    t0 = 1765233665294
    entries = [_pi_msg("user", t0), _pi_msg("assistant", t0 + 10, _u(10, 0, 400)),
               *({"type": "branch_summary", "fromId": "x", "summary": s} for s in summaries),
               _pi_msg("assistant", t0 + 20, _u(10, 400, 10))]
    requests, _ = load_trace([_pi(tmp_path_factory.mktemp("branch") / "s.jsonl", entries)])
    sent = [s for s in summaries if isinstance(s, str) and s]
    assert [m.role for m in logged(requests[1])] == ["assistant", *("user" for _ in sent)]


def test_an_assistant_message_without_its_own_time_is_timed_by_its_entry(tmp_path: Path) -> None:
    # pi before v0.6.0 (pi-mono 55dc0b6e, 2025-10-26, added message.timestamp, the send time) wrote
    # assistant messages with no timestamp of their own; each entry still has its ISO timestamp (when
    # pi saved it). The audit read such a file as "no timestamp", and a read lost 29 min after the
    # previous call (past the 5 min TTL) was put down to a changed system prompt.
    t0 = 1765233665294

    def untimed(entry: dict, ms: int) -> dict:
        entry["message"].pop("timestamp")
        entry["timestamp"] = datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        return entry

    gap = 29 * 60_000
    entries = [_pi_msg("user", t0), untimed(_pi_msg("assistant", t0 + 10, _u(10, 0, 40000)), t0 + 900),
               _pi_msg("toolResult", t0 + 5000), untimed(_pi_msg("assistant", t0 + 5010, _u(1, 40000, 500)), t0 + 5900),
               _pi_msg("user", t0 + 5900 + gap), untimed(_pi_msg("assistant", t0 + 5910 + gap, _u(10, 0, 40600)), t0 + 6900 + gap)]
    result = run_audit([_pi(tmp_path / "pi.jsonl", entries)])
    assert [r.sent_ms for r in load_trace([tmp_path / "pi.jsonl"])[0]] == [t0 + 900, t0 + 5900, t0 + 6900 + gap]
    row = result.rows[2]
    assert (row.cause, row.gap_ms) == ("ttl-expired", gap + 1000)
    notes = load_trace([tmp_path / "pi.jsonl"])[1][0].notes
    assert ("3 call(s) with no message.timestamp (pi before 0.6.0): timed by their entry's timestamp, when pi saved "
            "the reply (after the call returned), not when it sent the request") in notes


def test_a_side_call_on_an_api_without_a_write_count_leaves_its_writes_unknown_too(tmp_path: Path) -> None:
    # A compaction's and a branch summary's usage on openai-completions (the session's API: the
    # entry names none) read cacheWrite 0 as "nothing written", where the main calls' same 0 is
    # "writes unknown" (pi writes 0 on every call of such an API).
    t0 = 1784046729000
    entries = _zen_session(t0, 6000, "mimo-v2.5-free", [(5000, 0), (900, 4992)])
    entries += [
        {"type": "branch_summary", "id": "b1", "timestamp": t0 + 20_000, "fromId": "x", "summary": "a branch",
         "usage": _u(300, 5888, 0, 40)},
        {"type": "compaction", "timestamp": "2026-07-14T17:00:00.000Z", "summary": "so far", "tokensBefore": 6000,
         "usage": _u(200, 5888, 0, 90)},
    ]
    requests, summary = load_trace([_pi(tmp_path / "pi.jsonl", entries)])
    sides = [r for r in requests if r.lane == "summary"]
    assert len(sides) == 2 and [r.usage.writes_reported for r in sides] == [False, False]
    assert [r.usage.writes_reported for r in requests if r.lane == "main"] == [False, False]
    assert any(note.startswith("4 call(s) on an API with no write count") for note in summary[0].notes)
    # On Anthropic's API (the write count on the wire) a side call's 0 is nothing written, as before.
    entries = [*_tool_loop(t0), {"type": "compaction", "timestamp": "2026-07-14T17:00:00.000Z", "summary": "so far",
                                 "tokensBefore": 40810, "usage": _u(41000, 0, 0, 900)}]
    requests, _ = load_trace([_pi(tmp_path / "anthropic.jsonl", entries)])
    assert requests[-1].lane == "summary" and requests[-1].usage.writes_reported


def test_an_entry_whose_type_is_a_list_is_no_output_event(tmp_path: Path) -> None:
    # The fuzz found it: `"type": []` reached the test for pi's output events, a set
    # lookup, and raised TypeError (unhashable type: 'list').
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"type": [], "version": 3, "id": "p", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x"},
        {"type": "message", "id": "a", "parentId": "p", "timestamp": "2025-12-09T00:53:30.825Z",
         "message": {"role": "user", "content": "hi"}},
    ])
    try:
        run_audit([path], fmt="pi")
    except UserError as exc:
        assert "\n" not in str(exc)


@pytest.mark.parametrize(("provider", "api", "model", "served", "served_by"), [
    # OpenRouter's router, answered by a vendor's model (pi's openai-completions sets responseModel
    # where the reply's model differs from the one asked for). Main: unknown, model "openrouter/auto".
    ("openrouter", "openai-completions", "openrouter/auto", "anthropic/claude-sonnet-4.5", "anthropic"),
    # A server-side fallback Anthropic answered with another model (anthropic-messages).
    ("anthropic", "anthropic-messages", "claude-opus-5", "claude-sonnet-5", "anthropic"),
])
def test_later_pi_names_the_model_that_answered(tmp_path: Path, provider: str, api: str, model: str, served: str,
                                                 served_by: str) -> None:
    """Later pi (earendil-works/pi) writes ``responseModel`` beside ``model`` when another model
    answered: that model's cache and prices are the call's. A call without it keeps ``model``."""
    t0 = 1795000000000
    first, second = _pi_msg("assistant", t0 + 10, _u(5000, 0, 0)), _pi_msg("assistant", t0 + 20, _u(10, 5000, 0))
    first["message"].update({"provider": provider, "model": model, "api": api, "responseModel": served})
    second["message"].update({"provider": provider, "model": model, "api": api})
    requests, _ = load_trace([_pi(tmp_path / "pi.jsonl", [_pi_msg("user", t0), first, _pi_msg("toolResult", t0 + 15), second])])
    assert [(r.provider, r.model) for r in requests][0] == (served_by, served)
    assert requests[1].model == model
    # Caches are per model: the call the asked-for model answered is no continuation of the other's.
    assert requests[0].prefix.head != requests[1].prefix.head
    assert [u.prompt for u in (r.usage for r in requests)] == [5000, 5010]


def test_a_hosts_own_spelling_of_the_model_asked_for_keeps_its_name(tmp_path: Path) -> None:
    """A ``responseModel`` that only spells the model asked for the host's way (Fireworks' account
    path, Hugging Face's lower-cased id: timerloggedout-spec/termux-monorepo's sessions) is the same
    model: the name asked for stays the call's, so one model is one row and one price. Before, the
    host's spelling split it."""
    t0 = 1795000000000
    calls = []
    for i, served in enumerate(("accounts/fireworks/models/deepseek-v4-pro", "deepseek-ai/deepseek-v4-pro", None)):
        call = _pi_msg("assistant", t0 + 10 * (i + 1), _u(5000 + i, 0, 0))
        call["message"].update({"provider": "huggingface", "model": "deepseek-ai/DeepSeek-V4-Pro",
                                "api": "openai-completions"})
        if served:
            call["message"]["responseModel"] = served
        calls += [call, _pi_msg("toolResult", t0 + 10 * (i + 1) + 5)]
    requests, _ = load_trace([_pi(tmp_path / "pi.jsonl", [_pi_msg("user", t0), *calls])])
    assert [r.model for r in requests] == ["deepseek-ai/DeepSeek-V4-Pro"] * 3


def test_a_tool_results_own_usage_is_noted_not_counted(tmp_path: Path) -> None:
    """Later pi (earendil-works/pi) writes ``usage`` on a tool result whose tool called a model
    itself (a subagent, a workflow): no call of the session's chain, perhaps several summed, so
    not counted; a note sums it (pi's footer adds it to its totals). Main said nothing of it."""
    t0 = 1795000000000
    first, second = _pi_msg("assistant", t0 + 10, _u(3, 0, 9000)), _pi_msg("assistant", t0 + 90, _u(4, 9000, 200))
    result = _pi_msg("toolResult", t0 + 80)
    result["message"].update({"toolName": "subagent", "toolCallId": "c1", "isError": False,
                              "usage": {"input": 120, "output": 700, "cacheRead": 4000, "cacheWrite": 1500,
                                        "cost": {"total": 0.0215}}})
    empty = _pi_msg("toolResult", t0 + 85)
    empty["message"].update({"toolName": "read", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}})
    path = _pi(tmp_path / "pi.jsonl", [_pi_msg("user", t0), first, result, empty, second])
    requests, summaries = load_trace([path])
    # The session's own two calls, field by field: prompts 9,003 and 9,204, output 10 each.
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.prompt, r.usage.output) for r in requests] == [
        (3, 0, 9003, 10), (4, 9000, 9204, 10)]
    # The subagent's usage, by hand: prompt 120 + 4,000 + 1,500 = 5,620, output 700, $0.0215.
    notes = [n for n in summaries[0].notes if "tool result" in n]
    assert len(notes) == 1 and notes[0].startswith(
        "1 tool result(s) carry the usage of model calls their tool made itself") and "5,620 prompt and 700 output tokens, $0.0215" in notes[0]


def _tool_result(ts: int, usage: dict, **fields: object) -> dict:
    """A later pi tool result carrying its tool's own usage (a subagent's)."""
    entry = _pi_msg("toolResult", ts)
    entry["message"].update({"toolName": "subagent", "toolCallId": "c1", "isError": False, "usage": usage, **fields})
    return entry


def _tool_note(summary) -> str:
    notes = [n for n in summary.notes if "tool result(s) carry" in n]
    assert len(notes) == 1
    return notes[0]


def test_a_tool_results_gemini_usage_is_read_as_a_calls(tmp_path: Path) -> None:
    """A tool result naming a Gemini API: its ``input`` holds its reads, as a call's does there.
    Main read it without the API: 5,000 + 4,000 = 9,000 prompt tokens noted for a 5,000-token prompt."""
    t0 = 1795000000000
    usage = {"input": 5000, "output": 100, "cacheRead": 4000, "cacheWrite": 0, "cost": {"total": 0.01}}
    result = _tool_result(t0 + 80, usage, api="google-generative-ai", provider="google")
    path = _pi(tmp_path / "pi.jsonl", [_pi_msg("user", t0), _pi_msg("assistant", t0 + 10, _u(3, 0, 9000)), result])
    _, summaries = load_trace([path])
    assert "5,000 prompt and 100 output tokens, $0.0100" in _tool_note(summaries[0])


def test_a_tool_results_malformed_usage_is_noted_not_refused(tmp_path: Path) -> None:
    """A malformed count in a tool result's own usage (a figure only noted): the result is left out
    of the note's sums, and a note says so. Main refused the whole session (exit 2)."""
    t0 = 1795000000000
    bad = _tool_result(t0 + 80, {"input": "12k", "output": 7, "cacheRead": 0, "cacheWrite": 0})
    path = _pi(tmp_path / "pi.jsonl", [_pi_msg("user", t0), _pi_msg("assistant", t0 + 10, _u(3, 0, 9000)), bad,
                                       _pi_msg("assistant", t0 + 90, _u(4, 9000, 200))])
    requests, summaries = load_trace([path])
    assert len(requests) == 2
    assert not any("tool result(s) carry" in n for n in summaries[0].notes)
    assert any(n.startswith("1 tool result(s) whose own usage holds a malformed count") for n in summaries[0].notes)
    assert (4, "tool result's own usage malformed: left out of the note's sums") in summaries[0].skipped


def test_a_forks_copy_of_a_tool_results_usage_is_summed_once(tmp_path: Path) -> None:
    """A fork copies its source's entries, a tool result with its own usage among them: the copy
    is not summed again (calls are de-duplicated the same way). Main noted 5,620 prompt tokens in
    each file."""
    t0 = 1773500000000
    header = {"type": "session", "version": 3, "id": "src", "timestamp": "2026-03-14T10:00:00.000Z", "cwd": "/x"}

    def entry(entry_id: str, parent: str | None, value: dict) -> dict:
        return {**value, "id": entry_id, "parentId": parent}

    usage = {"input": 120, "output": 700, "cacheRead": 4000, "cacheWrite": 1500, "cost": {"total": 0.0215}}
    source = [
        entry("e1", None, _pi_msg("user", t0)),
        entry("e2", "e1", _pi_msg("assistant", t0 + 10, _u(10, 0, 40000))),
        entry("e3", "e2", _tool_result(t0 + 2000, usage)),
        entry("e4", "e3", _pi_msg("assistant", t0 + 2010, _u(1, 40000, 300))),
    ]
    src = write_jsonl(tmp_path / "2026-03-14T10-00-00-000Z_src.jsonl", [header, *source])
    fork = write_jsonl(tmp_path / "2026-03-14T11-00-00-000Z_fork.jsonl", [
        {**header, "id": "fork", "timestamp": "2026-03-14T11:00:00.000Z", "parentSession": str(src)}, *source,
        entry("f1", "e4", _pi_msg("user", t0 + 3_600_000)),
        entry("f2", "f1", _pi_msg("assistant", t0 + 3_600_010, _u(1000, 40300, 0))),
    ])
    requests, summaries = load_trace([tmp_path])
    assert load_trace([tmp_path], map_files=functools.partial(map_runs, jobs=2)) == (requests, summaries)
    by_file = {Path(s.file).name: s for s in summaries}
    assert "5,620 prompt and 700 output tokens" in _tool_note(by_file[src.name])
    assert not any("tool result(s) carry" in n for n in by_file[fork.name].notes)
    assert any(n.startswith("1 tool result(s) with usage of their own the same as one summed before")
               for n in by_file[fork.name].notes)
    # Read alone, the fork notes what it holds.
    _, alone = load_trace([fork])
    assert "5,620 prompt and 700 output tokens" in _tool_note(alone[0])


@pytest.mark.parametrize(("pi_provider", "provider", "upstream"), [
    ("ollama", "unknown", "ollama"),
    ("lmstudio", "unknown", "lmstudio"),
    ("lm-studio", "unknown", "lm-studio"),
    # `oss` is Codex's flag's host, not a word pi gives a host running open models: a name of the
    # user's, kept as no upstream.
    ("oss", "unknown", ""),
    ("hosted_vllm", "unknown", ""),  # a litellm route's prefix: no provider id of pi's
])
def test_a_self_hosted_pi_provider_is_the_calls_upstream(tmp_path: Path, pi_provider: str, provider: str, upstream: str) -> None:
    """pi's provider names the host: one running open models itself is kept as the call's
    upstream (vllm.self_hosted_upstream, the rule OpenCode's and Codex's readers share)."""
    t0 = 1765233665294
    entry = _pi_msg("assistant", t0 + 10, _u(5000, 0, 0))
    entry["message"].update({"provider": pi_provider, "model": "qwen3-coder:30b", "api": "openai-completions"})
    requests, _ = load_trace([_pi(tmp_path / "pi.jsonl", [_pi_msg("user", t0), entry])])
    assert [(r.provider, r.upstream) for r in requests] == [(provider, upstream)]


def test_pi_json_mode_thinking_level_changed_is_a_change_of_request_family(tmp_path: Path) -> None:
    """pi 0.73's --mode json / rpc output prints ``thinking_level_changed {level}`` where a session
    file writes ``thinking_level_change {thinkingLevel}`` (AgentSession.setThinkingLevel emits it on
    a change), but never the level a run starts at. main ignored the event: the calls after it kept
    the family of thinking off, and the miss it caused had no cause. Now it is the session file's
    change; the calls before it are noted as of an unknown level, not taken as off silently."""
    header, *events = _json_mode_run()
    cut = next(n for n, e in enumerate(events) if e["type"] == "turn_end")  # after the first call
    lines = [header, *events[:cut + 1], {"type": "thinking_level_changed", "level": "high"}, *events[cut + 1:]]
    requests, summaries = load_trace([write_jsonl(tmp_path / "run.jsonl", lines)])
    assert [dict(r.envelope)["thinking"] for r in requests] == ["off", "on"]
    assert ("thinking_change", "unknown -> high") in requests[1].events
    assert any(n.startswith("1 call(s) before pi --mode json output named a thinking level") for n in summaries[0].notes)


def test_pi_rpc_get_state_names_the_starting_thinking_level(tmp_path: Path) -> None:
    """--mode rpc: a get_state response names the current level; a change after it is from that level."""
    header, *events = _json_mode_run()
    cut = next(n for n, e in enumerate(events) if e["type"] == "turn_end")
    state = {"id": "s1", "type": "response", "command": "get_state", "success": True,
             "data": {"thinkingLevel": "medium", "isStreaming": False}}
    lines = [state, *events[:cut + 1], {"type": "thinking_level_changed", "level": "off"}, *events[cut + 1:]]
    requests, summaries = load_trace([write_jsonl(tmp_path / "rpc.jsonl", lines)])
    assert [dict(r.envelope)["thinking"] for r in requests] == ["on", "off"]
    assert ("thinking_change", "medium -> off") in requests[1].events
    assert not any("named a thinking level" in n for n in summaries[0].notes)


def _kimi_msg(ts_ms: int, usage: dict) -> dict:
    entry = _pi_msg("assistant", ts_ms, usage)
    entry["message"].update({"provider": "kimi-coding", "model": "k2p5"})
    return entry


def test_reads_that_overrun_their_prompt_are_the_whole_prompt_read(tmp_path: Path) -> None:
    """Kimi Code's Anthropic-compatible endpoint counts reads in 64-token blocks: a read can
    exceed the prompt, its input_tokens (prompt less reads) then negative, as pi keeps it (a real
    OpenClaw home: 46 of 2,209 calls, -12 to -499). Main refused the file: usage.input is not a
    non-negative integer (-385)."""
    path = _pi(tmp_path / "kimi.jsonl", [
        _pi_msg("user", 1_000),
        _kimi_msg(1_010, {**_u(21_311, 0, 0, 41), "totalTokens": 21_352}),
        _pi_msg("toolResult", 5_000),
        _kimi_msg(5_010, {**_u(-385, 21_696, 0, 41), "totalTokens": 21_352}),
        _pi_msg("toolResult", 9_000),
        _kimi_msg(9_010, {**_u(700, 21_696, 0, 50), "totalTokens": 22_446}),
    ])
    requests, summaries = load_trace([path])
    usages = [r.usage for r in requests]
    # The prompt is input + cacheRead as the provider counted it (totalTokens less output), all read.
    assert [(u.uncached, u.cache_read, u.output) for u in usages] == [(21_311, 0, 41), (0, 21_311, 41), (700, 21_696, 50)]
    assert [u.prompt + u.output for u in usages] == [21_352, 21_352, 22_446]
    assert any("1 call(s) whose cacheRead exceeds the prompt (usage.input negative, -385 to -385" in n
               for n in summaries[0].notes)


def test_a_negative_input_beyond_the_reads_is_still_refused(tmp_path: Path) -> None:
    path = _pi(tmp_path / "bad.jsonl", [_pi_msg("user", 1_000), _kimi_msg(1_010, _u(-500, 400, 0, 41))])
    with pytest.raises(UserError, match=r"bad.jsonl:3: usage.input is not a non-negative integer \(-500\)"):
        load_trace([path])
    # As large as the reads: a prompt of no token, read as a 0-token cold start before (review62c).
    path = _pi(tmp_path / "none.jsonl", [_pi_msg("user", 1_000), _kimi_msg(1_010, _u(-64, 64, 0, 41))])
    with pytest.raises(UserError, match=r"none.jsonl:3: usage.input is not a non-negative integer \(-64\)"):
        load_trace([path])
