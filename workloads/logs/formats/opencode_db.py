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

OpenCode 2.x (mainline from 2.0.3, September 2026) writes sessions to ``session_v2`` and
messages to ``session_message(id, session_id, type, seq, time_created, data)`` instead, and
leaves the 1.x tables frozen (or, in later 2.x databases, absent). ``type`` is the message's kind
(``user``, ``assistant``, ``compaction``, ``synthetic``, ``system``, ``shell``, ``agent-switched``,
``model-switched``, ...) and ``data`` the rest of it: an assistant message is ``{agent, model {id,
providerID, variant}, content [text | reasoning | tool], finish, cost, tokens {input, output,
reasoning, cache {read, write}}, error, time {created, completed}}``, one model call (a 1.x
message the upgrade copied in keeps its summed tokens: one call here). The upgrade copies the
1.x messages into ``session_message`` (ids kept), so a database is read from one generation
only: the 2.x tables once ``session_message`` holds a row, else the 1.x ones. (Late 1.x versions
already write ``session_message`` beside their own tables, without ``session_v2`` and without the
compaction summary calls: such a database is read from its 1.x tables, but for a session with no
1.x message and rows in ``session_message``, which are read as a 2.x session's. Checked against
OpenCode 1.18.33 (npm, 2026-09-28: migrations to ``20260622202450_simplify_session_input``,
``step-finish`` parts still written, ``session_message.seq`` added after the table's first
version) and the Kilo CLI 7.7.9 (``kilo.db``, ``session_message.seq`` nullable), and the
mainline's ``packages/core/src/session/sql.ts`` (02ce4a33: ``session`` with ``fork_session_id``
beside ``session_message``) and ``message.ts`` (08e3e1f9).) A 2.x message is
put into the 1.x export's shape (its tokens a ``step-finish`` part, a ``compaction`` message a
user message with a ``compaction`` part and, where it carries its request's ``tokens``, the
summary call) and read as one; so is a 2.x export, whose messages have the same shape.

The file is opened read-only (a ``mode=ro`` URI: it reads the write-ahead log OpenCode keeps
beside the database while it runs), ``immutable`` where that open cannot be had and no
write-ahead log is pending: nothing is ever written. A locked, corrupt or foreign database is
one line.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from urllib.parse import quote

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.reading import starts_with

#: The first 16 bytes of every SQLite 3 database file.
HEADER = b"SQLite format 3\x00"
#: The tables (and their columns read) a database must have to be OpenCode's.
TABLES = {
    "session": ("id", "parent_id", "title", "version", "directory", "project_id", "time_created", "time_updated"),
    "message": ("id", "session_id", "time_created", "data"),
    "part": ("id", "message_id", "session_id", "data"),
}
#: The 2.x tables (and their columns read); ``session_message`` rows win over the 1.x tables.
TABLES_V2 = {
    "session_v2": ("id", "parent_id", "title", "version", "directory", "project_id", "time_created", "time_updated"),
    "session_message": ("id", "session_id", "type", "seq", "data"),
}
#: The key under which a session's ``fork_session_id`` is put into its export's ``info`` (no key of
#: OpenCode's own export: :mod:`.opencode` reads it as the mark of a fork, whatever its title).
FORKED_FROM = "forkedFromSessionID"
#: The database file name OpenCode writes, and the suffix a folder walk offers to the detector.
FILE_NAME = "opencode.db"
SUFFIXES = (".db",)
#: Most sessions, messages and parts read from one database.
MAX_ROWS = 10_000_000


def has_header(path: Path) -> bool:
    """Whether ``path`` starts as a SQLite 3 database does (False for anything unreadable)."""
    return starts_with(path, HEADER)


def _uri(path: Path, immutable: bool) -> str:
    where = quote(os.path.abspath(path))
    return f"file:{where}?mode=ro" + ("&immutable=1" if immutable else "")


def _pending_wal(path: Path) -> bool:
    """Whether a write-ahead log beside the database holds pages (OpenCode running, or killed)."""
    try:
        return os.path.getsize(f"{path}-wal") > 0
    except OSError:
        return False


#: Whose database a file of this name is, for the line a locked one gives before any reader could
#: look inside it (a detector asked first cannot tell).
#: (Kilo Code 7.x and the Kilo CLI, forks of OpenCode, name theirs ``kilo.db``, or
#: ``kilo-<channel>.db`` for a build of another channel: :data:`KILO_CHANNEL_DB`.)
AGENT_BY_FILE_NAME = {FILE_NAME: "OpenCode", "kilo.db": "Kilo Code", "threads.db": "Zed",
                      "session-store.db": "GitHub Copilot CLI"}
KILO_CHANNEL_DB = re.compile(r"kilo-[^/]+\.db\Z")
#: OpenCode's database for a build of another channel than latest, beta or prod (1.18:
#: ``opencode-<channel>.db``); Kilo keeps one such file of an earlier build in its own folder
#: (``~/.local/share/kilo``), where it is Kilo Code's.
OPENCODE_CHANNEL_DB = re.compile(r"opencode-[^/]+\.db\Z")


def agent_of_file(path: Path) -> str | None:
    """Whose database a file of this name is (None: no agent's that the name tells)."""
    if path.name in AGENT_BY_FILE_NAME:
        return AGENT_BY_FILE_NAME[path.name]
    if KILO_CHANNEL_DB.match(path.name):
        return "Kilo Code"
    if OPENCODE_CHANNEL_DB.match(path.name):
        return "Kilo Code" if path.parent.name == "kilo" else "OpenCode"
    return None


def failure(path: Path, exc: sqlite3.Error, agent: str | None = None) -> UserError:
    """One line for a database that cannot be read: locked (``agent`` is writing it; None: the
    agent its file name says, if any), or damaged."""
    text = str(exc) or type(exc).__name__
    if _locked(exc):
        agent = agent or agent_of_file(path)
        if agent is None:
            return UserError(f"{path}: the database is locked ({text}); audit it when the agent writing it is not, or a copy of it")
        return UserError(f"{path}: the {agent} database is locked ({text}); audit it when {agent} is not writing, or a copy of it")
    return UserError(f"{path}: cannot read this SQLite database ({text}; a corrupt or truncated file?)")


def _locked(exc: sqlite3.Error) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def connect(path: Path, agent: str | None = None) -> sqlite3.Connection:
    """A read-only connection to the database at ``path``: ``mode=ro`` (it takes the readers'
    lock and reads a pending write-ahead log), else ``immutable`` when that open fails for
    another reason than a lock and no write-ahead log is pending (a WAL database in a
    read-only folder, whose ``-shm`` cannot be made). ``agent`` names whose database it is in
    the line a locked one gives (another agent's database reader uses it too: :mod:`.zed`); None
    where it is not known yet (a detector): the agent the file's name says, if any.

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
                raise failure(path, exc, agent) from None
            error = exc
        except UnicodeDecodeError as exc:
            # SQLite's message quoted a name of a damaged schema whose bytes are no UTF-8 (Python
            # decodes the message to raise it): the file is damaged, said with those bytes escaped.
            if db is not None:
                db.close()
            said = " ".join(bytes(exc.object).decode("utf-8", "backslashreplace").split())
            raise UserError(f"{path}: cannot read this SQLite database ({said}; a corrupt or truncated file?)") from None
    raise failure(path, error, agent)


def columns(db: sqlite3.Connection, table: str) -> set[str]:
    """The column names of ``table`` (none for a table the database does not have)."""
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
        return has_tables(db, TABLES) or has_tables(db, TABLES_V2)
    except sqlite3.Error as exc:
        raise failure(path, exc) from None
    finally:
        db.close()


#: A table Kilo Code 7.7 adds beside OpenCode's (its board of sessions), which no OpenCode release has.
KILO_TABLE = "kilo_board"


def has_kilo_tables(path: Path) -> bool:
    """Whether the OpenCode-shaped database at ``path`` holds Kilo Code 7's own table
    (:data:`KILO_TABLE`): Kilo's database under any file name.

    Raises:
        UserError: the database cannot be read (locked, corrupt).
    """
    db = connect(path, "OpenCode")  # (as :func:`exports` opens it, and says a lock)
    try:
        return bool(columns(db, KILO_TABLE))
    except sqlite3.Error as exc:
        raise failure(path, exc, "OpenCode") from None
    finally:
        db.close()


def is_agent_store(path: Path, agent: str, file_name: str, holds: Callable[[sqlite3.Connection], bool]) -> bool:
    """Whether ``path`` is an agent's SQLite store: the SQLite header, and ``holds`` (its tables)
    true of the open database. Another tool's database that cannot be opened is not one (its own
    detector, if any, says why); a file named ``file_name`` that cannot be opened is an error.

    Raises:
        UserError: a ``file_name`` file, or a database ``holds`` cannot read, that cannot be read
            (locked, corrupt), naming ``agent``.
    """
    if not has_header(path):
        return False
    try:
        db = connect(path, agent)
    except UserError:
        if path.name == file_name:
            raise
        return False
    try:
        return holds(db)
    except sqlite3.Error as exc:
        raise failure(path, exc, agent) from None
    finally:
        db.close()


def has_tables(db: sqlite3.Connection, tables: dict[str, tuple[str, ...]]) -> bool:
    """Whether the database has every table of ``tables`` with at least the columns named."""
    return all(set(cols) <= columns(db, table) for table, cols in tables.items())


def _data(path: Path, table: str, row_id: object, raw: object) -> dict:
    """A ``data`` column: a JSON object, else one line naming the row."""
    return json_object(raw, f"{path}: {table} {str(row_id)[:80]!r}", "data")


def json_object(raw: object, where: str, column: str) -> dict:
    """A database cell holding a JSON object (as text or UTF-8 bytes), else one line naming
    ``where`` and its ``column`` (another agent's database reader uses it too: :mod:`.openclaw_db`)."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{where}: {column} is not UTF-8 text") from None
    if not isinstance(raw, str):
        raise UserError(f"{where}: {column} is not JSON text")
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        raise UserError(f"{where}: {column} is not valid JSON") from None
    if not isinstance(value, dict):
        raise UserError(f"{where}: {column} is not a JSON object")
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
    db = connect(path, "OpenCode")
    try:
        v1 = has_tables(db, TABLES)
        v2 = has_tables(db, TABLES_V2) and (not v1 or db.execute("SELECT 1 FROM session_message LIMIT 1").fetchone() is not None)
        if not v2 and not v1:
            raise UserError(f"{path}: a SQLite database without OpenCode's session, message and part tables "
                            "(1.x) or session_v2 and session_message (2.x)")
        # A 1.x database's ``session_message`` (migrated in from April 2026): a session holding no
        # 1.x message but rows there (written by the event-sourced writer alone) is read from them.
        side = None if v2 else _side_order(db)
        table = "session_v2" if v2 else "session"
        # The session a fork was made from (``fork_session_id``, a column of later schemas).
        fork = "fork_session_id" if "fork_session_id" in columns(db, table) else "NULL"
        sessions = db.execute(
            f"SELECT id, project_id, parent_id, directory, title, version, time_created, time_updated, {fork} "
            f"FROM {table} ORDER BY time_created, id LIMIT ?",
            (MAX_ROWS,),
        ).fetchall()
        for sid, project, parent, directory, title, version, created, updated, forked_from in sessions:
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
            if forked_from:
                info[FORKED_FROM] = str(forked_from)
            messages = list(_messages_v2(db, path, sid) if v2 else _messages(db, path, sid))
            if not messages and side is not None:
                messages = list(_side_messages(db, path, sid, side))
            yield {"info": info, "messages": messages}
    except sqlite3.Error as exc:
        raise failure(path, exc, "OpenCode") from None
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


def _side_order(db: sqlite3.Connection) -> str | None:
    """The order to read a 1.x database's ``session_message`` rows in (``seq``, nullable in Kilo's
    databases and absent in the table's first version, then their time), or None without one."""
    have = columns(db, "session_message")
    if not {"id", "session_id", "type", "data", "time_created"} <= have:
        return None
    return "seq IS NULL, seq, time_created, id" if "seq" in have else "time_created, id"


def _side_messages(db: sqlite3.Connection, path: Path, sid: object, order: str) -> Iterator[dict]:
    """A 1.x database's session that has no 1.x message: its ``session_message`` rows, read as a
    2.x session's (a session written only there; never both, which would count a call twice)."""
    rows = db.execute(f"SELECT id, type, data FROM session_message WHERE session_id = ? ORDER BY {order} LIMIT ?", (sid, MAX_ROWS))
    yield from v2_messages(str(sid), ((str(mid), kind, _data(path, "session_message", mid, raw)) for mid, kind, raw in rows))


def _messages_v2(db: sqlite3.Connection, path: Path, sid: object) -> Iterator[dict]:
    """A 2.x session's messages in ``seq`` order, in the 1.x export's ``{info, parts}`` shape."""
    rows = db.execute(
        "SELECT id, type, data FROM session_message WHERE session_id = ? ORDER BY seq, id LIMIT ?", (sid, MAX_ROWS)
    )
    yield from v2_messages(str(sid), ((str(mid), kind, _data(path, "session_message", mid, raw)) for mid, kind, raw in rows))


def v2_messages(sid: str, rows: Iterable[tuple[str, object, dict]]) -> Iterator[dict]:
    """OpenCode 2.x messages (``(id, type, data)``: a ``session_message`` row, or an item of a 2.x
    export) in the 1.x export's ``{info, parts}`` shape; kinds that are no model call and no user
    turn are left out. A completed or failed compaction carries its own request's usage: it is
    put as the summary call a 1.x compaction made (``summary: true``)."""
    model: dict = {}
    for mid, kind, data in rows:
        info: dict = {"id": mid, "sessionID": sid, "time": data.get("time") if isinstance(data.get("time"), dict) else {}}
        if kind == "user":
            info["role"] = "user"
            text = data.get("text")
            files = data.get("files") if isinstance(data.get("files"), list) else []
            parts = [{"type": "text", "text": text}] if isinstance(text, str) else []
            yield {"info": info, "parts": parts + [{"type": "file"} for _ in files]}
        elif kind == "compaction":
            summary = data.get("summary") if isinstance(data.get("summary"), str) and data.get("status") != "failed" else None
            yield {"info": dict(info, role="user"), "parts": [{"type": "compaction", "reason": data.get("reason"), "summary": summary}]}
            if isinstance(data.get("tokens"), dict):
                used = data["model"] if isinstance(data.get("model"), dict) else model
                call = dict(data, model=used, agent="compaction")
                yield _assistant_v2(dict(info, id=f"{mid}:summary"), call, summary=True)
        elif kind == "assistant":
            if isinstance(data.get("model"), dict):
                model = data["model"]
            yield _assistant_v2(info, data)


def _assistant_v2(info: dict, data: dict, summary: bool = False) -> dict:
    """A 2.x assistant message as a 1.x one: its content as parts, its tokens as one step."""
    model = data.get("model") if isinstance(data.get("model"), dict) else {}
    info.update(role="assistant", modelID=model.get("id"), providerID=model.get("providerID"), agent=data.get("agent"))
    if summary:
        info["summary"] = True
    if isinstance(model.get("variant"), str):
        info["variant"] = model["variant"]
    for key in ("cost", "tokens", "finish"):
        if key in data:
            info[key] = data[key]
    error = data.get("error")
    if isinstance(error, dict):
        info["error"] = {"name": str(error.get("type") or "error"), "data": {"message": error.get("message")}}
    parts: list[dict] = []
    for item in data.get("content") if isinstance(data.get("content"), list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "tool":
            times = item.get("time") if isinstance(item.get("time"), dict) else {}
            parts.append({"type": "tool", "id": item.get("id"), "state": {"time": {"end": times.get("completed"), "compacted": times.get("pruned")}}})
        elif item.get("type") in ("text", "reasoning"):
            parts.append({"type": item["type"], "id": item.get("id")})
    if isinstance(data.get("tokens"), dict):
        parts.append({"type": "step-finish", "id": "step", "tokens": data["tokens"], "cost": data.get("cost")})
    return {"info": info, "parts": parts}
