"""OpenClaw's agent database (workloads/logs/formats/openclaw_db.py, read by pi's reader)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from tests.fuzz.harness import NASTY_TOKENS, Tally, edited, fuzz_settings, json_values, mutated, to_json_line

T0 = 1772000000000


def _call(ts: int, i: int, r: int, w: int, o: int = 10, **over: object) -> dict:
    return {"type": "message", "timestamp": "2026-02-25T06:13:20.000Z", "message": {
        "role": "assistant", "content": [{"type": "text", "text": f"a{ts}"}], "api": "anthropic-messages", "provider": "anthropic",
        "model": "claude-sonnet-4-6", "usage": {"input": i, "output": o, "cacheRead": r, "cacheWrite": w, "totalTokens": i + o + r + w},
        "stopReason": "stop", "timestamp": ts, **over}}


def _user(ts: int) -> dict:
    return {"type": "message", "timestamp": "2026-02-25T06:13:20.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": f"u{ts}"}], "timestamp": ts}}


def _header(sid: str) -> dict:
    return {"type": "session", "version": 3, "id": sid, "timestamp": "2026-02-25T06:13:19.000Z", "cwd": "/home/u/.openclaw/workspace"}


#: Two sessions: "s-one" a tool loop and a delivery mirror, "s-two" a CLI-backend turn then a call.
SESSIONS = {
    "s-one": [_header("s-one"), _user(T0), _call(T0 + 10, 12, 0, 20000), _user(T0 + 5000), _call(T0 + 5010, 30, 20000, 400),
              _call(T0 + 5020, 0, 0, 0, 0, api="openai-responses", provider="openclaw", model="delivery-mirror")],
    "s-two": [_header("s-two"), _user(T0 + 90000),
              _call(T0 + 90010, 5000, 80000, 0, 700, api="cli", provider="claude-cli", model="claude-opus-4-7"),
              _user(T0 + 95000), _call(T0 + 95010, 8, 0, 15000, 20)],
}


def write_db(path: Path, sessions: dict[str, list[dict]] = SESSIONS) -> Path:
    """A database with OpenClaw's transcript_events table (and a session_windows table beside it),
    its rows inserted out of seq order (a reader orders them)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL,"
        " previous_session_id TEXT, reason TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
        "CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT NOT NULL,"
        " created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq));")
    for n, (sid, entries) in enumerate(sessions.items()):
        db.execute("INSERT INTO session_windows VALUES (?, ?, NULL, 'initial', ?, ?)", (sid, f"agent:main:{sid}", T0 + n, T0 + n))
        for seq in reversed(range(len(entries))):
            db.execute("INSERT INTO transcript_events VALUES (?, ?, ?, ?)", (sid, seq, json.dumps(entries[seq]), T0 + 1000 * n + seq))
    db.commit()
    db.close()
    return path


def test_each_session_of_the_database_is_a_lane_read_as_its_file_is(tmp_path: Path) -> None:
    # Later OpenClaw keeps transcripts in agents/<id>/agent/openclaw-agent.sqlite, not in
    # sessions/*.jsonl: main's walk never offered the file, and named on the command line it
    # was "a SQLite database without OpenCode's ... tables".
    path = write_db(tmp_path / "agents" / "main" / "agent" / "openclaw-agent.sqlite")
    requests, (summary,) = load_trace([tmp_path])
    # By hand: s-one's two calls, then s-two's one (its CLI turn and s-one's mirror are no calls).
    assert [(r.lane, r.line, r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests] == [
        ("s-one", 2, 12, 0, 20000, 10), ("s-one", 4, 30, 20000, 400, 10), ("s-two", 4, 8, 0, 15000, 20)]
    assert {r.file for r in requests} == {str(path)}
    assert requests[1].prefix.parent == requests[0].prefix.node and requests[2].prefix.parent is None
    assert summary.format == "pi" and summary.requests == 3
    assert [reason for _, reason in summary.skipped] == [
        "OpenClaw CLI-backend turn (api cli): its usage sums the CLI's own calls, no one call's",
        "OpenClaw transcript-only message (a delivery mirror or a gateway injection): no model call"]
    assert "an OpenClaw agent database: 2 session(s) read from its transcript_events (opened read-only)" in summary.notes
    t = run_audit([path]).totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == (3, 50, 40, 20000, 35400)


def test_the_same_sessions_as_files_beside_it_are_counted_once(tmp_path: Path) -> None:
    # OpenClaw's migration copies the JSONL transcripts into the database: both in one audit count
    # each call once.
    write_db(tmp_path / "agent" / "openclaw-agent.sqlite")
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for sid, entries in SESSIONS.items():
        (sessions / f"{sid}.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    assert run_audit([tmp_path]).totals.requests == 3


@pytest.mark.parametrize(("raw", "why"), [
    ("{not json", "event_json is not valid JSON"),
    ("[1, 2]", "event_json is not a JSON object"),
    (b"\xff\xfe", "event_json is not UTF-8 text"),
    (7, "event_json is not a JSON object"),  # (a TEXT column stores the number as text)
])
def test_a_bad_row_is_one_line_naming_it(tmp_path: Path, raw: object, why: str) -> None:
    path = write_db(tmp_path / "openclaw-agent.sqlite")
    db = sqlite3.connect(path)
    db.execute("UPDATE transcript_events SET event_json = ? WHERE session_id = 's-two' AND seq = 1", (raw,))
    db.commit()
    db.close()
    with pytest.raises(UserError, match=rf"openclaw-agent\.sqlite: transcript_events session 's-two' seq 1: {why}$"):
        run_audit([path])


def test_an_agent_database_without_transcripts_is_no_log(tmp_path: Path) -> None:
    # Earlier OpenClaw's openclaw-agent.sqlite held only its auth profiles: not offered by a walk.
    path = tmp_path / "agent" / "openclaw-agent.sqlite"
    path.parent.mkdir()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE auth_profile_store (store_key TEXT PRIMARY KEY, store_json TEXT NOT NULL)")
    db.commit()
    db.close()
    with pytest.raises(UserError, match=r"no log files"):
        run_audit([tmp_path])


def test_garbage_in_event_rows_ends_cleanly(tmp_path: Path) -> None:
    """Rows whose ``event_json`` holds edited, foreign or broken JSON (or bytes): one line and exit
    2, or a reading; never a traceback."""
    pristine = write_db(tmp_path / "pristine.sqlite")
    rows = [(sid, seq, json.dumps(entry)) for sid, entries in SESSIONS.items() for seq, entry in enumerate(entries)]
    tally = Tally("openclaw-agent.sqlite rows", bound_s=20)
    garbage = st.one_of(
        st.sampled_from(rows).flatmap(lambda row: edited(st.just(json.loads(row[2])), max_edits=3).map(to_json_line)),
        json_values.map(to_json_line),
        st.sampled_from(NASTY_TOKENS),
        st.sampled_from(rows).flatmap(lambda row: mutated(row[2].encode())),
    )

    @fuzz_settings(25)
    @given(edits=st.lists(st.tuples(st.sampled_from(rows), garbage, st.booleans()), min_size=1, max_size=3), explicit=st.booleans())
    def case(edits: list, explicit: bool) -> None:
        path = tmp_path / "openclaw-agent.sqlite"
        path.write_bytes(pristine.read_bytes())
        con = sqlite3.connect(path)
        for (sid, seq, _), raw, as_blob in edits:
            value: object = raw
            if not as_blob:
                try:
                    value = raw.decode("utf-8")
                except UnicodeDecodeError:
                    value = raw
            con.execute("UPDATE transcript_events SET event_json = ? WHERE session_id = ? AND seq = ?", (value, sid, seq))
        con.commit()
        con.close()
        tally.check(["audit", str(path), "--quiet", *(["--input", "pi"] if explicit else [])])

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0


def test_damaged_database_files_end_cleanly(tmp_path: Path) -> None:
    """The database's bytes edited (pages cut, flipped, spliced): one line and exit 2, or a reading."""
    seed = write_db(tmp_path / "seed.sqlite").read_bytes()
    tally = Tally("openclaw-agent.sqlite bytes", bound_s=20)

    @fuzz_settings(25)
    @given(raw=mutated(seed), in_folder=st.booleans())
    def case(raw: bytes, in_folder: bool) -> None:
        folder = tmp_path / "walk"
        folder.mkdir(exist_ok=True)
        path = folder / "openclaw-agent.sqlite"
        path.write_bytes(raw)
        tally.check(["audit", str(folder if in_folder else path), "--quiet"])

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0


def test_the_notes_count_the_skipped_messages_of_every_session(tmp_path: Path) -> None:
    mirror = _call(T0 + 20, 0, 0, 0, 0, api="openai-responses", provider="openclaw", model="delivery-mirror")
    path = write_db(tmp_path / "openclaw-agent.sqlite", {
        sid: [_header(sid), _user(T0), _call(T0 + 10, 12, 0, 20000), mirror] for sid in ("a", "b")})
    (summary,) = load_trace([path])[1]
    assert summary.notes[0] == ("2 OpenClaw transcript-only message(s) not counted: delivery mirrors and gateway "
                                "injections, written into the transcript with no model call")


def _tool_result(ts: int, call_id: str, usage: dict) -> dict:
    """A later pi tool result carrying its tool's own usage (a subagent's), as OpenClaw's rows keep
    the lines its JSONL files held."""
    return {"type": "message", "timestamp": "2026-02-25T06:13:20.000Z", "message": {
        "role": "toolResult", "toolName": "subagent", "toolCallId": call_id, "isError": False,
        "content": [{"type": "text", "text": f"r{ts}"}], "usage": usage, "timestamp": ts}}


def test_a_tool_results_own_usage_in_the_database_is_noted_as_in_a_file(tmp_path: Path) -> None:
    """A row is the line a session file held, a tool result with its tool's own usage among them:
    noted, not counted, summed over the database's sessions (pi's session-file note). Main read the
    results and dropped the note (the database said nothing of 2 results, 5,870 prompt tokens)."""
    usage = {"input": 120, "output": 700, "cacheRead": 4000, "cacheWrite": 1500, "cost": {"total": 0.0215}}
    bad = {"input": "12k", "output": 7, "cacheRead": 0, "cacheWrite": 0}
    sessions = {
        "s-one": [*SESSIONS["s-one"][:3], _tool_result(T0 + 20, "c1", usage), *SESSIONS["s-one"][3:]],
        "s-two": [*SESSIONS["s-two"], _tool_result(T0 + 95020, "c2", {"input": 250, "output": 30, "cacheRead": 0,
                                                                      "cacheWrite": 0, "cost": {"total": 0.001}}),
                  _tool_result(T0 + 95030, "c3", bad)],
    }
    path = write_db(tmp_path / "openclaw-agent.sqlite", sessions)
    requests, (summary,) = load_trace([path])
    assert len(requests) == 3  # the same calls as without the results: none of them counted
    # By hand: prompts 120 + 4,000 + 1,500 = 5,620 and 250, output 700 + 30, $0.0215 + $0.001.
    assert [n for n in summary.notes if "tool result(s)" in n] == [
        "2 tool result(s) carry the usage of model calls their tool made itself (later pi: a subagent or workflow run by "
        "the tool; pi's footer adds it to its totals): 5,870 prompt and 730 output tokens, $0.0225 logged, not counted "
        "here (no call of this session's chain, and each may sum several calls: audit that agent's own session files "
        "for them)",
        "1 tool result(s) whose own usage holds a malformed count: left out of the tool usage noted (it is only noted, "
        "never counted)"]
