"""pi's SQLite session store (``sessions.sqlite``), where later pi (earendil-works/pi, late 2026)
can keep its sessions instead of ``<cwd>/<time>_<id>.jsonl`` files.

The store (earendil-works/pi ``packages/coding-agent/src/core/sqlite-session-repository.ts``, its
backend ``packages/session-backends/sqlite-node``) holds any number of sessions: a ``sessions``
row each (``id``, ``created_at``, and in its first storage format ``cwd`` and
``parent_session_id``), and an ``entries(session_id, seq, id, parent_id, type, timestamp,
payload)`` table whose rows are the entries a session file would hold after its header, in
``seq`` order: ``payload`` is the entry's JSON without the columns beside it (an assistant
``message`` entry's payload is ``{message: {role, usage, ...}}``, a compaction's ``{summary,
tokensBefore, usage, ...}``). Each session is read as its file is (:mod:`.pi`): a header built
from its ``sessions`` row (a fork's naming the session it was forked from), then its entries, a
row's ``seq`` its line. The store's other tables (derived branch caches, per-session totals,
search indexes, writer leases, a later format's usage ledger) are not read: the calls are the
entries'.

The file is opened read-only, as the other agents' databases are (:mod:`.opencode_db`'s
``connect``: ``mode=ro``, which reads a pending write-ahead log; pi writes in WAL mode). A locked
or damaged store, or a row whose ``payload`` is not a JSON object, is one line.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats.opencode_db import columns, connect, failure, is_agent_store, json_object

#: Whose database a locked one is said to be.
AGENT = "pi"
#: The table of entries and the columns read; the ``sessions`` table must have an ``id``.
TABLE = "entries"
COLUMNS = ("session_id", "seq", "id", "parent_id", "type", "timestamp", "payload")
#: The file pi names its store (a locked or damaged one is said to be pi's).
FILE_NAME = "sessions.sqlite"


def _has_tables(db: sqlite3.Connection) -> bool:
    return set(COLUMNS) <= columns(db, TABLE) and "id" in columns(db, "sessions")


def is_pi_db(path: Path) -> bool:
    """Whether ``path`` is a pi session store (the SQLite header, its ``entries`` and ``sessions``
    tables).

    Raises:
        UserError: a ``sessions.sqlite`` that cannot be read (locked, corrupt).
    """
    return is_agent_store(path, AGENT, FILE_NAME, _has_tables)


def sessions(path: Path) -> Iterator[tuple[str, list[tuple[int, dict]]]]:
    """Each session's id and its entries as ``(seq, entry)``: a header first (line 0: the
    session's id, its ``created_at`` as the time, ``cwd`` and the parent it was forked from where
    the row has them), then its rows in ``seq`` order, each ``payload`` with ``type``, ``id``,
    ``parentId`` and ``timestamp`` put back. The sessions in the order they were created (then by
    id); a session with entries and no ``sessions`` row is read too, after them.

    Raises:
        UserError: the store cannot be read, or a row's ``payload`` is not a JSON object.
    """
    db = connect(path, AGENT)
    try:
        if not _has_tables(db):
            raise UserError(f"{path}: a SQLite database without pi's {TABLE} and sessions tables")
        known = columns(db, "sessions")
        wanted = [c for c in ("created_at", "cwd", "parent_session_id") if c in known]
        rows = db.execute(f"SELECT id{''.join(', ' + c for c in wanted)} FROM sessions").fetchall()
        meta = {str(row[0]): dict(zip(wanted, row[1:], strict=True)) for row in rows}
        listed = sorted(meta, key=lambda sid: (_order(meta[sid].get("created_at")), sid))
        orphans = [str(sid) for (sid,) in db.execute(f"SELECT DISTINCT session_id FROM {TABLE} ORDER BY session_id")
                   if str(sid) not in meta]
        for session_id in listed + orphans:
            header = _header(path, session_id, meta.get(session_id, {}))
            entries = db.execute(f"SELECT seq, id, parent_id, type, timestamp, payload FROM {TABLE} "
                                 "WHERE session_id = ? ORDER BY seq", (session_id,))
            yield session_id, [(0, header)] + [_entry(path, session_id, *row) for row in entries]
    except sqlite3.Error as exc:
        raise failure(path, exc, AGENT) from None
    finally:
        db.close()


def _order(created: object) -> tuple[int, str]:
    """A ``created_at`` to sort by: epoch ms (a later format's integer) before text (the first
    format's ISO time), each in its own order; a missing one last."""
    if isinstance(created, (int, float)) and not isinstance(created, bool):
        return (0, f"{float(created):020.3f}")
    return (1, str(created)) if created is not None else (2, "")


def _header(path: Path, session_id: str, row: dict) -> dict:
    """The session header a session file opens with, from the session's ``sessions`` row."""
    header: dict = {"type": "session", "id": session_id}
    created = row.get("created_at")
    if isinstance(created, (str, int, float)) and not isinstance(created, bool):
        header["timestamp"] = created
    if isinstance(row.get("cwd"), str):
        header["cwd"] = row["cwd"]
    parent = row.get("parent_session_id")
    if isinstance(parent, str) and parent:
        header["parentSession"] = f"{path}#{parent}"  # (the name the audit gives that session)
    return header


def _entry(path: Path, session_id: str, seq: object, entry_id: object, parent_id: object, kind: object,
           timestamp: object, raw: object) -> tuple[int, dict]:
    """One row as the entry a session file holds, else one line naming the row."""
    where = f"{path}: {TABLE} session {session_id[:80]!r} seq {seq}"
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise UserError(f"{where}: seq is not an integer")
    entry = json_object(raw, where, "payload")
    entry.update(type=kind, id=entry_id, parentId=parent_id, timestamp=timestamp)
    return seq, entry
