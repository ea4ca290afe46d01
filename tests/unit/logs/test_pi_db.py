"""pi's SQLite session store (workloads/logs/formats/pi_db.py, read by pi's reader)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace
from prefixbench.workloads.logs.formats import pi_db

T0 = 1790000000000


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _user(eid: str, parent: str | None, ts: int) -> tuple:
    return (eid, parent, "message", ts, {"message": {"role": "user", "content": [{"type": "text", "text": f"u{ts}"}], "timestamp": ts}})


def _call(eid: str, parent: str | None, ts: int, i: int, r: int, w: int, o: int = 10) -> tuple:
    usage = {"input": i, "output": o, "cacheRead": r, "cacheWrite": w, "totalTokens": i + o + r + w,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    return (eid, parent, "message", ts, {"message": {
        "role": "assistant", "content": [{"type": "text", "text": f"a{ts}"}], "api": "anthropic-messages",
        "provider": "anthropic", "model": "claude-sonnet-4-6", "usage": usage, "stopReason": "stop", "timestamp": ts}})


#: "s-a": two calls of a tool loop; "s-b": a fork of s-a (its entries copied, ids kept) and one call of its own.
SOURCE = [_user("e1", None, T0), _call("e2", "e1", T0 + 10, 12, 0, 20000),
          _user("e3", "e2", T0 + 5000), _call("e4", "e3", T0 + 5010, 30, 20000, 400)]
SESSIONS = {
    "s-a": {"created": T0 - 1000, "parent": None, "entries": SOURCE},
    "s-b": {"created": T0 + 60000, "parent": "s-a",
            "entries": [*SOURCE, _user("e5", "e4", T0 + 90000), _call("e6", "e5", T0 + 90010, 8, 20400, 50, 20)]},
}


def write_db(path: Path, sessions: dict = SESSIONS, *, later: bool = False) -> Path:
    """A store of pi's shape: its first storage format (ISO times, a cwd per session), or
    ``later``: a later one (epoch-ms times, no cwd column, a usage ledger beside the entries).
    Rows are inserted out of seq order (a reader orders them)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    if later:
        db.executescript(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, parent_session_id TEXT,"
            " storage_version INTEGER NOT NULL, metadata TEXT, message_count INTEGER NOT NULL, usage_payload TEXT NOT NULL,"
            " next_seq INTEGER NOT NULL);"
            "CREATE TABLE entries (session_id TEXT NOT NULL, id TEXT NOT NULL, parent_id TEXT, seq INTEGER NOT NULL,"
            " type TEXT NOT NULL, custom_type TEXT, timestamp INTEGER NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (session_id, id));"
            "CREATE TABLE usage_ledger (session_id TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, entry_id TEXT,"
            " adjustment INTEGER NOT NULL, usage TEXT NOT NULL, details TEXT, PRIMARY KEY (session_id, id));")
    else:
        db.executescript(
            "CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, cwd TEXT NOT NULL,"
            " parent_session_id TEXT NULL, metadata TEXT NULL);"
            "CREATE TABLE entries (session_id TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, parent_id TEXT NULL,"
            " type TEXT NOT NULL, timestamp TEXT NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (session_id, id));"
            "CREATE TABLE session_stats (session_id TEXT PRIMARY KEY, message_count INTEGER NOT NULL, total_tokens REAL NOT NULL);")
    for sid, session in reversed(sessions.items()):
        if later:
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, 4, NULL, ?, '{}', ?)",
                       (sid, session["created"], session["parent"], len(session["entries"]), len(session["entries"]) + 1))
        else:
            db.execute("INSERT INTO sessions VALUES (?, ?, '/home/u/proj', ?, NULL)", (sid, _iso(session["created"]), session["parent"]))
        for seq in reversed(range(len(session["entries"]))):
            eid, parent, kind, ts, payload = session["entries"][seq]
            if later:
                db.execute("INSERT INTO entries VALUES (?, ?, ?, ?, ?, NULL, ?, ?)", (sid, eid, parent, seq + 1, kind, ts, json.dumps(payload)))
            else:
                db.execute("INSERT INTO entries VALUES (?, ?, ?, ?, ?, ?, ?)", (sid, seq + 1, eid, parent, kind, _iso(ts), json.dumps(payload)))
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize("later", [False, True])
def test_each_session_of_the_store_is_a_lane_and_a_fork_counts_its_copy_once(tmp_path: Path, later: bool) -> None:
    # Later pi can keep its sessions in ~/.pi/.../sessions.sqlite instead of JSONL files: before,
    # a folder walk skipped it as no log, and named on the command line it was refused.
    path = write_db(tmp_path / "agent" / "sessions.sqlite", later=later)
    requests, (summary,) = load_trace([tmp_path])
    # By hand: s-a's two calls, then s-b's own one (its copy of s-a's two is not counted again).
    assert [(r.lane, r.line, r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests] == [
        ("s-a", 2, 12, 0, 20000, 10), ("s-a", 4, 30, 20000, 400, 10), ("s-b", 6, 8, 20400, 50, 20)]
    assert sum(r.usage.uncached + r.usage.cache_read + r.usage.cache_write_5m for r in requests) == 12 + 20000 + 30 + 20400 + 8 + 20450
    assert {r.file for r in requests} == {str(path)}
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert requests[2].prefix.parent == requests[1].prefix.node  # the fork's first call extends the source's last
    assert summary.format == "pi" and summary.requests == 3
    assert [line for line, _ in summary.skipped] == [2, 4]
    assert "a pi session store: 2 session(s) read from its entries (opened read-only)" in summary.notes


def test_a_session_file_imported_into_the_store_is_counted_once(tmp_path: Path) -> None:
    # pi's import copies a JSONL session's entries into the store as they are: auditing both
    # counts each call once (the store, sorting first here, counts them; the file's are copies).
    write_db(tmp_path / "a" / "sessions.sqlite", {"s-a": SESSIONS["s-a"]})
    lines = [{"type": "session", "version": 3, "id": "s-a", "timestamp": _iso(T0 - 1000), "cwd": "/home/u/proj"}]
    lines += [{"type": kind, "id": eid, "parentId": parent, "timestamp": _iso(ts), **payload} for eid, parent, kind, ts, payload in SOURCE]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "s-a.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    requests, summaries = load_trace([tmp_path])
    assert [(Path(r.file).name, r.usage.cache_write_5m) for r in requests] == [("sessions.sqlite", 20000), ("sessions.sqlite", 400)]
    assert [s.requests for s in summaries] == [2, 0]


def test_a_row_whose_payload_is_not_an_object_is_one_line(tmp_path: Path) -> None:
    path = write_db(tmp_path / "sessions.sqlite")
    db = sqlite3.connect(path)
    db.execute("UPDATE entries SET payload = '[1]' WHERE session_id = 's-b' AND seq = 3")
    db.commit()
    db.close()
    with pytest.raises(UserError, match=r"sessions\.sqlite: entries session 's-b' seq 3: payload is not a JSON object"):
        load_trace([path])


def test_only_a_store_with_both_tables_is_pi_s(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE entries (session_id TEXT, seq INTEGER, id TEXT, parent_id TEXT, type TEXT, timestamp TEXT, payload TEXT)")
    db.commit()
    db.close()
    assert not pi_db.is_pi_db(path)  # (no sessions table: another tool's)
    assert pi_db.is_pi_db(write_db(tmp_path / "sessions.sqlite"))
    assert not pi_db.is_pi_db(tmp_path / "missing.sqlite")
