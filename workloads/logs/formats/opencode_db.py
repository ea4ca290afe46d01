"""OpenCode's SQLite database (``~/.local/share/opencode/opencode.db``, OpenCode 1.3 and later),
read as the ``opencode export`` of each of its sessions.

The schema is OpenCode's drizzle one (``packages/opencode/src/session/session.sql.ts``; later
``packages/core/src/session/sql.ts``): ``session(id, project_id, parent_id, slug, directory,
title, version, ..., time_created, time_updated, time_compacting, ...)``, ``message(id,
session_id, time_created, time_updated, data)`` and ``part(id, message_id, session_id,
time_created, time_updated, data)``. ``message.data`` is a message's ``info`` without ``id``
and ``sessionID``; ``part.data`` a part without ``id``, ``sessionID`` and ``messageID``: put
back, each session is the ``{info, messages: [{info, parts}]}`` an export prints, and the
export's reader reads it (:mod:`.opencode`).

The file is opened read-only (a ``mode=ro`` URI: it reads the write-ahead log OpenCode keeps
beside the database while it runs), ``immutable`` where that open cannot be had and no
write-ahead log is pending: nothing is ever written. A locked, corrupt or foreign database is
one line.
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
#: The tables (and their columns read) a database must have to be OpenCode's.
TABLES = {
    "session": ("id", "parent_id", "title", "version", "directory", "project_id", "time_created", "time_updated"),
    "message": ("id", "session_id", "time_created", "data"),
    "part": ("id", "message_id", "session_id", "data"),
}
#: The database file name OpenCode writes, and the suffix a folder walk offers to the detector.
FILE_NAME = "opencode.db"
SUFFIXES = (".db",)
#: Most sessions, messages and parts read from one database.
MAX_ROWS = 10_000_000


def has_header(path: Path) -> bool:
    """Whether ``path`` starts as a SQLite 3 database does (False for anything unreadable)."""
    try:
        with path.open("rb") as handle:
            return handle.read(len(HEADER)) == HEADER
    except OSError:
        return False


def _uri(path: Path, immutable: bool) -> str:
    where = quote(os.path.abspath(path))
    return f"file:{where}?mode=ro" + ("&immutable=1" if immutable else "")


def _pending_wal(path: Path) -> bool:
    """Whether a write-ahead log beside the database holds pages (OpenCode running, or killed)."""
    try:
        return os.path.getsize(f"{path}-wal") > 0
    except OSError:
        return False


def _failure(path: Path, exc: sqlite3.Error) -> UserError:
    text = str(exc) or type(exc).__name__
    if _locked(exc):
        return UserError(f"{path}: the OpenCode database is locked ({text}); audit it when OpenCode is not writing, or a copy of it")
    return UserError(f"{path}: cannot read this SQLite database ({text}; a corrupt or truncated file?)")


def _locked(exc: sqlite3.Error) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def connect(path: Path) -> sqlite3.Connection:
    """A read-only connection to the database at ``path``: ``mode=ro`` (it takes the readers'
    lock and reads a pending write-ahead log), else ``immutable`` when that open fails for
    another reason than a lock and no write-ahead log is pending (a WAL database in a
    read-only folder, whose ``-shm`` cannot be made).

    Raises:
        UserError: the file cannot be opened as a database (locked, corrupt, not one).
    """
    attempts = (False,) if _pending_wal(path) else (False, True)
    for immutable in attempts:
        db = None
        try:
            db = sqlite3.connect(_uri(path, immutable), uri=True, timeout=1.0, check_same_thread=False)
            db.execute("PRAGMA query_only = ON")
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.Error as exc:
            if db is not None:
                db.close()
            if immutable or _locked(exc) or "not a database" in str(exc) or "malformed" in str(exc):
                raise _failure(path, exc) from None
            error = exc
    raise _failure(path, error)


def columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in db.execute(f"PRAGMA table_info({table})")}


def is_opencode_db(path: Path) -> bool:
    """Whether ``path`` is an OpenCode database: the SQLite header and the three tables.

    Raises:
        UserError: a SQLite file that cannot be read (locked, corrupt).
    """
    if not path.is_file() or not has_header(path):
        return False
    db = connect(path)
    try:
        return all(set(cols) <= columns(db, table) for table, cols in TABLES.items())
    except sqlite3.Error as exc:
        raise _failure(path, exc) from None
    finally:
        db.close()


def _data(path: Path, table: str, row_id: object, raw: object) -> dict:
    """A ``data`` column: a JSON object, else one line naming the row."""
    where = f"{path}: {table} {str(row_id)[:80]!r}"
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{where}: data is not UTF-8 text") from None
    if not isinstance(raw, str):
        raise UserError(f"{where}: data is not JSON text")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise UserError(f"{where}: data is not valid JSON") from None
    if not isinstance(value, dict):
        raise UserError(f"{where}: data is not a JSON object")
    return value


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _ms(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def exports(path: Path) -> Iterator[dict]:
    """Each session of the database as an ``opencode export`` would print it (oldest first).

    Raises:
        UserError: the database cannot be read, or a ``data`` column is not a JSON object.
    """
    db = connect(path)
    try:
        if not all(set(cols) <= columns(db, table) for table, cols in TABLES.items()):
            raise UserError(f"{path}: a SQLite database without OpenCode's session, message and part tables")
        sessions = db.execute(
            "SELECT id, project_id, parent_id, directory, title, version, time_created, time_updated "
            "FROM session ORDER BY time_created, id LIMIT ?",
            (MAX_ROWS,),
        ).fetchall()
        for sid, project, parent, directory, title, version, created, updated in sessions:
            info: dict = {
                "id": str(sid),
                "projectID": _text(project),
                "directory": _text(directory),
                "title": _text(title) or "",
                "version": _text(version),
                "time": {"created": _ms(created), "updated": _ms(updated)},
            }
            if parent:
                info["parentID"] = str(parent)
            yield {"info": info, "messages": list(_messages(db, path, sid))}
    except sqlite3.Error as exc:
        raise _failure(path, exc) from None
    finally:
        db.close()


def _messages(db: sqlite3.Connection, path: Path, sid: object) -> Iterator[dict]:
    """A session's messages, oldest first, each with its parts in id order (ids ascend with time)."""
    parts: dict[str, list[dict]] = {}
    for pid, mid, raw in db.execute(
        "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id LIMIT ?", (sid, MAX_ROWS)
    ):
        part = _data(path, "part", pid, raw)
        part.update(id=str(pid), messageID=str(mid), sessionID=str(sid))
        parts.setdefault(str(mid), []).append(part)
    for mid, raw in db.execute(
        "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id LIMIT ?", (sid, MAX_ROWS)
    ):
        info = _data(path, "message", mid, raw)
        info.update(id=str(mid), sessionID=str(sid))
        yield {"info": info, "parts": parts.pop(str(mid), [])}
