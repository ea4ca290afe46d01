"""OpenClaw's per-agent SQLite database (``~/.openclaw/agents/<agentId>/agent/openclaw-agent.sqlite``),
where later OpenClaw keeps its session transcripts instead of ``sessions/<id>.jsonl`` files.

Its ``transcript_events(session_id, seq, event_json, created_at)`` table holds each session's
transcript, one entry a row in ``seq`` order: ``event_json`` is the line the session's JSONL file
held (pi's session header, then its ``message``, ``model_change``, ``compaction``, ``custom``...
entries), read as a pi session is (:mod:`.pi`), a lane per session, a tool result's own usage
noted as a session file's is. The database holds much else
(the session store, auth profiles, a memory index): only that table is read.

The file is opened read-only (``mode=ro``, which reads a pending write-ahead log; ``immutable``
where that open cannot be had and no log is pending): nothing is ever written. A locked or
damaged database, or a row whose ``event_json`` is not a JSON object, is one line.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats.opencode_db import columns, connect, failure, is_agent_store, json_object

#: Whose database a locked one is said to be.
AGENT = "OpenClaw"
#: The table (and its columns read) that makes a database OpenClaw's transcript store.
TABLE = "transcript_events"
COLUMNS = ("session_id", "seq", "event_json")
#: The file OpenClaw writes (one a locked or damaged copy of is said to be so), and what a folder
#: walk offers to the detector.
FILE_NAME = "openclaw-agent.sqlite"
SUFFIXES = (".sqlite",)


def _has_table(db: sqlite3.Connection) -> bool:
    return set(COLUMNS) <= columns(db, TABLE)


def is_openclaw_db(path: Path) -> bool:
    """Whether ``path`` is an OpenClaw agent database holding transcripts (its header and table).

    Raises:
        UserError: an ``openclaw-agent.sqlite`` that cannot be read (locked, corrupt).
    """
    return is_agent_store(path, AGENT, FILE_NAME, _has_table)


def sessions(path: Path) -> Iterator[tuple[str, list[tuple[int, dict]]]]:
    """Each session's id and its entries as ``(seq, entry)``, in ``seq`` order; the sessions in
    the order their first entry was written (then by id).

    Raises:
        UserError: the database cannot be read, or a row's ``event_json`` is not a JSON object.
    """
    db = connect(path, AGENT)
    try:
        if not _has_table(db):
            raise UserError(f"{path}: a SQLite database without OpenClaw's {TABLE} table")
        order = db.execute(
            f"SELECT session_id FROM {TABLE} GROUP BY session_id ORDER BY min(created_at), session_id").fetchall()
        for (session_id,) in order:
            rows = db.execute(f"SELECT seq, event_json FROM {TABLE} WHERE session_id = ? ORDER BY seq", (session_id,))
            yield str(session_id), [(seq, _event(path, session_id, seq, raw)) for seq, raw in rows]
    except sqlite3.Error as exc:
        raise failure(path, exc, AGENT) from None
    finally:
        db.close()


def _event(path: Path, session_id: object, seq: object, raw: object) -> dict:
    """One row's ``event_json``: a JSON object, else one line naming the row."""
    where = f"{path}: {TABLE} session {str(session_id)[:80]!r} seq {seq}"
    if not isinstance(seq, int):
        raise UserError(f"{where}: seq is not an integer")
    return json_object(raw, where, "event_json")
