"""GitHub Copilot CLI's session store, ``~/.copilot/session-store.db``: whether a SQLite file is one,
with or without its per-call usage table, and that table's rows (opened read-only through
:mod:`.opencode_db`'s connection). Read as the ``copilot-cli`` format by :mod:`.copilot_cli`; kept
apart so that the safe reading (``workloads/logs/records.py``) can name a store without the table
without importing a format module."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats import opencode_db

TABLE = "assistant_usage_events"
#: The columns a usage row must have (the keys of an exported one).
COLUMNS = ("session_id", "model", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
#: The columns read where the table has them.
OPTIONAL = ("id", "turn_index", "created_at", "duration_ms", "agent_id", "parent_tool_call_id", "finish_reason",
            "copilot_usage_model", "token_details_json")
#: The tables of every Copilot CLI session store, with or without usage.
STORE_TABLES = {"sessions": ("id", "cwd", "created_at"), "turns": ("session_id", "turn_index"), "schema_version": ("version",)}
SUFFIXES = (".db",)
#: Whose store it is, in the line a locked one gives.
AGENT = "GitHub Copilot CLI"
#: Most rows read from one store.
MAX_ROWS = 10_000_000
#: Where Copilot CLI writes each call's usage in a form audit reads, for a file that has none.
OTEL_HINT = ("audit its OpenTelemetry file export instead (run copilot with COPILOT_OTEL_FILE_EXPORTER_PATH=FILE, "
             "then audit FILE: format otel)")


#: Why a legacy Copilot CLI session file is no log (said after ``file:line: ``, and by a folder walk).
LEGACY_SESSION = (
    "a legacy GitHub Copilot CLI session (~/.copilot/history-session-state/<id>.json, before session-state/): "
    "it keeps the chat messages and a timeline of tool calls, no token count at all: no request to audit; "
    f"{OTEL_HINT} (later Copilot CLI keeps each call's usage in ~/.copilot/session-store.db)"
)


def is_legacy_session(value: dict) -> bool:
    """Whether a record is a legacy Copilot CLI session file's one object: a ``sessionId``, its
    ``chatMessages`` (the messages as sent, a list) and a ``startTime`` or ``timeline``."""
    return (isinstance(value.get("sessionId"), str) and isinstance(value.get("chatMessages"), list)
            and (isinstance(value.get("startTime"), str) or isinstance(value.get("timeline"), list)))


def is_store(path: Path) -> bool:
    """Whether ``path`` is a Copilot CLI session store with its usage table.

    Raises:
        UserError: a SQLite file that cannot be read (locked, corrupt).
    """
    if not path.is_file() or not opencode_db.has_header(path):
        return False
    db = opencode_db.connect(path)
    try:
        return opencode_db.has_tables(db, {TABLE: COLUMNS})
    except sqlite3.Error as exc:
        raise opencode_db.failure(path, exc) from None
    finally:
        db.close()


def earlier_schema(path: Path) -> str | None:
    """What schema ``path`` is of when it is a Copilot CLI session store without the usage table
    (``schema 2``, or ``an earlier schema`` where it keeps no number); None for anything else, or
    anything that cannot be read as such."""
    try:
        db = opencode_db.connect(path)
    except UserError:
        return None
    try:
        if not opencode_db.has_tables(db, STORE_TABLES) or opencode_db.has_tables(db, {TABLE: COLUMNS}):
            return None
        row = db.execute("SELECT version FROM schema_version LIMIT 1").fetchone()
    except sqlite3.Error:
        return None
    finally:
        db.close()
    return f"schema {row[0]}" if row is not None and isinstance(row[0], int) else "an earlier schema"


def store_without_usage(path: Path) -> str | None:
    """Why ``path`` is no log when it is a Copilot CLI session store without the usage table (an
    earlier schema); None for anything else, or anything that cannot be read as such."""
    schema = earlier_schema(path)
    if schema is None:
        return None
    version = f" of {schema}" if schema.startswith("schema ") else ""
    return (f"a GitHub Copilot CLI session store{version} without {TABLE} (its per-call usage table, from Copilot CLI "
            f"1.0.73): no request to audit; {OTEL_HINT}")


def home_store(events: Path) -> Path | None:
    """The session store of the Copilot CLI home a session file is in: ``<home>/session-store.db``
    beside ``<home>/session-state/``, which holds ``<id>/events.jsonl`` (or, late 2025,
    ``<id>.jsonl``); None where the file lies elsewhere or the home has no store."""
    for state in events.parents[:2]:
        if state.name == "session-state":
            store = state.parent / "session-store.db"
            return store if store.is_file() else None
    return None


def neither_holds_usage(schema: str, store: str) -> str:
    """Why a Copilot CLI session (events.jsonl) is no log when the session store beside it, ``store``
    (as it is to be named), is of ``schema``, without the usage table: both said, and only what
    records each call's usage (the OpenTelemetry export, or the store a later Copilot CLI writes)."""
    return ("a GitHub Copilot CLI session (events.jsonl): it logs no call's prompt or cache counts (at most each call's "
            "output tokens, and the session's totals in session.shutdown), and the Copilot CLI session store "
            f"({store}) is of {schema}, without {TABLE} (the per-call usage table Copilot CLI "
            "keeps from 1.0.73): neither holds a request to audit; to record each call's usage, run copilot with "
            "COPILOT_OTEL_FILE_EXPORTER_PATH=FILE (Copilot CLI 1.0.4 on) and audit FILE (format otel), or update Copilot "
            "CLI to 1.0.73 or later, whose session store keeps it")


def rows(path: Path) -> Iterator[tuple[int, dict]]:
    """The store's usage rows in ``id`` order, each as an exported row (its ``id`` as its line)."""
    db = opencode_db.connect(path, AGENT)
    try:
        have = opencode_db.columns(db, TABLE)
        if not set(COLUMNS) <= have:
            raise UserError(f"{path}: a SQLite database without Copilot CLI's {TABLE} table ({', '.join(COLUMNS)})")
        names = [c for c in (*COLUMNS, *OPTIONAL) if c in have]
        order = "id" if "id" in have else "rowid"
        cursor = db.execute(f"SELECT {', '.join(names)} FROM {TABLE} ORDER BY {order} LIMIT ?", (MAX_ROWS,))
        for number, values in enumerate(cursor, 1):
            row = dict(zip(names, values))
            yield (row["id"] if isinstance(row.get("id"), int) and not isinstance(row.get("id"), bool) else number), row
    except sqlite3.Error as exc:
        raise opencode_db.failure(path, exc, AGENT) from None
    finally:
        db.close()
