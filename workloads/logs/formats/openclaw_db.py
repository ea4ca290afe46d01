"""OpenClaw's per-agent SQLite database (``~/.openclaw/agents/<agentId>/agent/openclaw-agent.sqlite``),
where later OpenClaw keeps its session transcripts instead of ``sessions/<id>.jsonl`` files.

Its ``transcript_events(session_id, seq, event_json, created_at)`` table holds each session's
transcript, one entry a row in ``seq`` order: ``event_json`` is the line the session's JSONL file
held (pi's session header, then its ``message``, ``model_change``, ``compaction``, ``custom``...
entries), read as a pi session is (:mod:`.pi`), a lane per session. The database holds much else
(the session store, auth profiles, a memory index): only that table is read.

The file is opened read-only (``mode=ro``, which reads a pending write-ahead log; ``immutable``
where that open cannot be had and no log is pending): nothing is ever written. A locked or
damaged database, or a row whose ``event_json`` is not a JSON object, is one line.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from prefixbench.simulator.errors import UserError

#: The first 16 bytes of every SQLite 3 database file.
HEADER = b"SQLite format 3\x00"
#: The table (and its columns read) that makes a database OpenClaw's transcript store.
TABLE = "transcript_events"
COLUMNS = ("session_id", "seq", "event_json")
#: The file OpenClaw writes (one a locked or damaged copy of is said to be so), and what a folder
#: walk offers to the detector.
FILE_NAME = "openclaw-agent.sqlite"
SUFFIXES = (".sqlite",)


def _connect(path: Path) -> sqlite3.Connection:
    """A read-only connection (``mode=ro``, else ``immutable`` when no write-ahead log is pending)."""
    pending = os.path.exists(f"{path}-wal") and os.path.getsize(f"{path}-wal") > 0
    error: sqlite3.Error | None = None
    for immutable in (False,) if pending else (False, True):
        uri = f"file:{quote(os.path.abspath(path))}?mode=ro" + ("&immutable=1" if immutable else "")
        db = None
        try:
            db = sqlite3.connect(uri, uri=True, timeout=1.0, check_same_thread=False)
            db.execute("PRAGMA query_only = ON")
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.Error as exc:
            if db is not None:
                db.close()
            error = exc
            if "locked" in str(exc) or "busy" in str(exc) or "not a database" in str(exc):
                break
    raise _failure(path, error)


def _failure(path: Path, exc: sqlite3.Error | None) -> UserError:
    text = str(exc) or type(exc).__name__
    if "locked" in text or "busy" in text:
        return UserError(f"{path}: the OpenClaw database is locked ({text}); audit it when OpenClaw is not writing, or a copy of it")
    return UserError(f"{path}: cannot read this SQLite database ({text}; a corrupt or truncated file?)")


def _has_table(db: sqlite3.Connection) -> bool:
    return set(COLUMNS) <= {str(row[1]) for row in db.execute(f"PRAGMA table_info({TABLE})")}


def is_openclaw_db(path: Path) -> bool:
    """Whether ``path`` is an OpenClaw agent database holding transcripts (its header and table).

    Raises:
        UserError: an ``openclaw-agent.sqlite`` that cannot be read (locked, corrupt).
    """
    try:
        if not path.is_file():
            return False
        with path.open("rb") as handle:
            if handle.read(len(HEADER)) != HEADER:
                return False
    except OSError:
        return False
    try:
        db = _connect(path)
    except UserError:
        if path.name == FILE_NAME:
            raise
        return False  # (another tool's database, locked or damaged: its own detector, if any, says so)
    try:
        return _has_table(db)
    except sqlite3.Error as exc:
        raise _failure(path, exc) from None
    finally:
        db.close()


def sessions(path: Path) -> Iterator[tuple[str, list[tuple[int, dict]]]]:
    """Each session's id and its entries as ``(seq, entry)``, in ``seq`` order; the sessions in
    the order their first entry was written (then by id).

    Raises:
        UserError: the database cannot be read, or a row's ``event_json`` is not a JSON object.
    """
    db = _connect(path)
    try:
        if not _has_table(db):
            raise UserError(f"{path}: a SQLite database without OpenClaw's {TABLE} table")
        order = db.execute(
            f"SELECT session_id FROM {TABLE} GROUP BY session_id ORDER BY min(created_at), session_id").fetchall()
        for (session_id,) in order:
            rows = db.execute(f"SELECT seq, event_json FROM {TABLE} WHERE session_id = ? ORDER BY seq", (session_id,))
            yield str(session_id), [(seq, _event(path, session_id, seq, raw)) for seq, raw in rows]
    except sqlite3.Error as exc:
        raise _failure(path, exc) from None
    finally:
        db.close()


def _event(path: Path, session_id: object, seq: object, raw: object) -> dict:
    """One row's ``event_json``: a JSON object, else one line naming the row."""
    where = f"{path}: {TABLE} session {str(session_id)[:80]!r} seq {seq}"
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{where}: event_json is not UTF-8 text") from None
    if not isinstance(seq, int):
        raise UserError(f"{where}: seq is not an integer")
    if not isinstance(raw, str):
        raise UserError(f"{where}: event_json is not JSON text")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise UserError(f"{where}: event_json is not valid JSON") from None
    if not isinstance(value, dict):
        raise UserError(f"{where}: event_json is not a JSON object")
    return value
