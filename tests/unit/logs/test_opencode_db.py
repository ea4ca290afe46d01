"""OpenCode's SQLite database (workloads/logs/formats/opencode_db.py): built here from exports
written by hand, read as those exports are read, opened read-only, and refused in one line when
it is locked, corrupt or not OpenCode's."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.formats.opencode_db import is_opencode_db
from prefixbench.workloads.logs.sources import find_log_files
from tests.fuzz.harness import NASTY_TOKENS, Tally, edited, fuzz_settings, json_values, mutated, to_json_line

FIXTURES = Path(__file__).parent / "fixtures"
EXPORT = FIXTURES / "opencode.json"
CHILD = FIXTURES / "opencode" / "child-session.json"
FORMAT = FORMATS["opencode"]

#: The tables as OpenCode's drizzle schema declares them (session.sql.ts), the columns read and a
#: few beside them.
SCHEMA = """
CREATE TABLE project (id text PRIMARY KEY, worktree text NOT NULL);
CREATE TABLE session (
    id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text, slug text NOT NULL,
    directory text NOT NULL, title text NOT NULL, version text NOT NULL, share_url text,
    time_created integer NOT NULL, time_updated integer NOT NULL, time_compacting integer, time_archived integer);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL,
    time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
    time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE todo (session_id text NOT NULL, content text NOT NULL, status text NOT NULL, priority text NOT NULL,
    position integer NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
"""


def write_db(path: Path, exports: list[dict]) -> Path:
    """An OpenCode database holding ``exports``: what OpenCode 1.3 stores for them (each
    message's and part's JSON less its ids, in ``data``)."""
    db = sqlite3.connect(path)
    try:
        fill(db, exports)
    finally:
        db.close()
    return path


def fill(db: sqlite3.Connection, exports: list[dict]) -> None:
    """Create OpenCode's tables in ``db`` and store ``exports`` in them (committed)."""
    db.executescript(SCHEMA)
    for export in exports:
        info = export["info"]
        created, updated = info["time"]["created"], info["time"]["updated"]
        db.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (info["id"], info["projectID"], info.get("parentID"), "quiet-otter", info["directory"], info["title"],
             info["version"], created, updated),
        )
        # Stored newest first, so the reader's order is its own.
        for message in reversed(export["messages"]):
            minfo = dict(message["info"])
            mid, sid = minfo.pop("id"), minfo.pop("sessionID")
            when = minfo["time"]["created"]
            db.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, when, when, json.dumps(minfo)))
            for part in reversed(message["parts"]):
                data = {k: v for k, v in part.items() if k not in ("id", "sessionID", "messageID")}
                db.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)", (part["id"], mid, sid, when, when, json.dumps(data)))
    db.commit()


def _exports() -> list[dict]:
    return [json.loads(EXPORT.read_text()), json.loads(CHILD.read_text())]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return write_db(tmp_path / "opencode.db", _exports())


def _read(path: Path):
    return import_file(path, FORMAT, ImportContext())


def test_database_detected_from_its_content_under_any_name(db: Path, tmp_path: Path) -> None:
    assert is_opencode_db(db)
    assert detect_format(db) is FORMAT
    renamed = tmp_path / "backup.sqlite"
    renamed.write_bytes(db.read_bytes())
    assert detect_format(renamed) is FORMAT
    assert not is_opencode_db(EXPORT)  # text: not a database


def test_database_totals_field_by_field(db: Path) -> None:
    requests, summary = _read(db)
    usages = [r.usage for r in requests]
    # By hand: the export's four steps (input 5 + 7 + 9500 + 3000; output + reasoning
    # 150 + 200 + 800 + 40; read 9000; write 9000 + 400 + 2500) and the child's two
    # (input 20 + 10; output 100 + 42; read 0 + 4520; write 4500 + 130).
    assert len(requests) == 6 == summary.requests
    assert sum(u.uncached for u in usages) == 12512 + 30
    assert sum(u.output for u in usages) == 1190 + 142
    assert sum(u.cache_read for u in usages) == 9000 + 4520
    assert sum(u.cache_write_5m for u in usages) == 11900 + 4630
    assert sum(u.cache_write_1h for u in usages) == 0
    assert summary.skipped == ((1, "failed call (APIError: Overloaded)"),)
    assert summary.format == "opencode"
    # The child session (parent_id) is a subagent lane; its steps are the last two requests.
    assert [r.lane_kind for r in requests] == ["main", "main", "compaction", "main", "subagent", "subagent"]
    assert [r.model for r in requests[4:]] == ["claude-haiku-4-5"] * 2
    assert [r.agent_version for r in requests[4:]] == ["1.3.2"] * 2
    notes = " ".join(summary.notes)
    assert "2 session(s) read" in notes
    assert "input 30, output + reasoning 142, cache read 4,520, cache write 4,630 (the same" in notes


def test_database_audit_equals_the_export_audit_field_by_field(tmp_path: Path) -> None:
    """The same session read from the database and from its export: the same requests, the
    same audit, but for the file they name."""
    db = write_db(tmp_path / "opencode.db", [json.loads(EXPORT.read_text())])
    from_db, db_summary = _read(db)
    from_export, export_summary = _read(EXPORT)
    sid = json.loads(EXPORT.read_text())["info"]["id"]

    def same(r):  # a database's lanes are named by their session (it holds many)
        lane = "main" if r.lane == sid else r.lane.removeprefix(f"{sid}/")
        return replace(r, file="", line=0, lane=lane)

    assert {r.lane for r in from_db} == {sid, f"{sid}/compaction"}
    assert [same(r) for r in from_db] == [replace(r, file="", line=0) for r in from_export]
    assert db_summary.skipped == export_summary.skipped
    db_audit, export_audit = run_audit([db]), run_audit([EXPORT])
    assert len(db_audit.rows) == len(export_audit.rows) == 4
    for ours, theirs in zip(db_audit.rows, export_audit.rows):
        assert same(ours) == replace(theirs, file="", line=0)
    assert db_audit.totals == export_audit.totals


def test_the_database_is_never_written(db: Path) -> None:
    before = (db.read_bytes(), db.stat().st_mtime_ns)
    _read(db)
    run_audit([db])
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["opencode.db"]  # no -wal, -shm or journal made


def test_a_pending_write_ahead_log_is_read(tmp_path: Path) -> None:
    """OpenCode running (or killed) leaves rows in ``opencode.db-wal``: they are read too."""
    path = tmp_path / "opencode.db"
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    try:
        fill(writer, _exports())
        assert os.path.getsize(f"{path}-wal") > 0
        requests, _ = _read(path)
        assert len(requests) == 6
    finally:
        writer.close()


def test_folder_walk_reads_the_database_not_its_wal_and_shm(tmp_path: Path) -> None:
    folder = tmp_path / "opencode"
    folder.mkdir()
    write_db(folder / "opencode.db", _exports())
    (folder / "opencode.db-wal").write_bytes(b"\x37\x7f\x06\x82" + b"\x00" * 28)
    (folder / "opencode.db-shm").write_bytes(b"\x00" * 64)
    other = sqlite3.connect(folder / "other.db")
    other.execute("CREATE TABLE kv (k text, v text)")
    other.commit()
    other.close()
    (folder / "notes.db").write_text("not a database")
    found = find_log_files([folder])
    assert found == [(folder / "opencode.db", None)]
    requests, summaries = load_trace([folder])
    assert len(requests) == 6 and [s.format for s in summaries] == ["opencode"]


def test_a_folder_with_only_a_foreign_database_has_no_logs(tmp_path: Path) -> None:
    other = sqlite3.connect(tmp_path / "app.db")
    other.execute("CREATE TABLE session (id text)")
    other.commit()
    other.close()
    with pytest.raises(UserError, match="no log files"):
        find_log_files([tmp_path])


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "prefixbench", *args], capture_output=True, text=True, timeout=120)


def audit_locked(db: Path) -> str:
    """``prefixbench audit db`` while another connection holds the database's exclusive lock:
    checked to end in one line and exit 2, no traceback; that line."""
    holder = sqlite3.connect(db)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        done = _cli("audit", str(db))
    finally:
        holder.rollback()
        holder.close()
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    return done.stderr


def test_locked_database_is_one_line_exit_2(db: Path) -> None:
    holder = sqlite3.connect(db)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        done = _cli("audit", str(db))
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        assert "the OpenCode database is locked" in done.stderr
        # In this process last: closing any handle on the file drops this process's POSIX locks.
        with pytest.raises(UserError) as caught:
            _read(db)
        assert "locked" in str(caught.value) and "\n" not in str(caught.value)
    finally:
        holder.rollback()
        holder.close()


@pytest.mark.parametrize("damage", ["truncate", "scribble"])
def test_corrupt_database_is_one_line_exit_2(db: Path, damage: str) -> None:
    data = db.read_bytes()
    if damage == "truncate":
        db.write_bytes(data[:100])
    else:
        db.write_bytes(data[:100] + b"\xff" * (len(data) - 100))
    done = _cli("audit", str(db))
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert str(db) in done.stderr


def test_garbage_in_a_data_column_names_the_row(db: Path) -> None:
    con = sqlite3.connect(db)
    con.execute("UPDATE part SET data = '{not json' WHERE id = 'prt_c2_2'")
    con.commit()
    con.close()
    with pytest.raises(UserError, match=r"opencode\.db: part 'prt_c2_2': data is not valid JSON$"):
        _read(db)


def test_a_database_read_under_another_input_names_the_one_that_reads_it(db: Path) -> None:
    with pytest.raises(UserError, match=r"read as codex \(--input opencode reads it\)$"):
        import_file(db, FORMATS["codex"], ImportContext())


def _rows(db: Path) -> list[tuple[str, str, str]]:
    con = sqlite3.connect(db)
    try:
        return [("message", i, d) for i, d in con.execute("SELECT id, data FROM message ORDER BY id")] + [
            ("part", i, d) for i, d in con.execute("SELECT id, data FROM part ORDER BY id")
        ]
    finally:
        con.close()


def test_garbage_in_data_columns_ends_cleanly(tmp_path: Path) -> None:
    """A database whose ``data`` columns hold edited, foreign or broken JSON (or bytes): one line
    and exit 2, or a reading; never a traceback."""
    pristine = write_db(tmp_path / "pristine.db", _exports())
    rows = _rows(pristine)
    tally = Tally("opencode.db data", bound_s=20)
    garbage = st.one_of(
        st.sampled_from(rows).flatmap(lambda row: edited(st.just(json.loads(row[2])), max_edits=3).map(to_json_line)),
        json_values.map(to_json_line),
        st.sampled_from(NASTY_TOKENS),
        st.sampled_from(rows).flatmap(lambda row: mutated(row[2].encode())),
    )

    @fuzz_settings(25)
    @given(edits=st.lists(st.tuples(st.sampled_from(rows), garbage, st.booleans()), min_size=1, max_size=3), explicit=st.booleans())
    def case(edits: list, explicit: bool) -> None:
        path = tmp_path / "opencode.db"
        path.write_bytes(pristine.read_bytes())
        con = sqlite3.connect(path)
        for (table, row_id, _), raw, as_blob in edits:
            if as_blob:
                value: object = raw
            else:
                try:
                    value = raw.decode("utf-8")
                except UnicodeDecodeError:
                    value = raw
            con.execute(f"UPDATE {table} SET data = ? WHERE id = ?", (value, row_id))
        con.commit()
        con.close()
        tally.check(["audit", str(path), "--quiet", *(["--input", "opencode"] if explicit else [])])

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0


def test_damaged_database_files_end_cleanly(tmp_path: Path) -> None:
    """The database's bytes edited (pages cut, flipped, spliced): one line and exit 2, or a reading."""
    seed = write_db(tmp_path / "seed.db", _exports()).read_bytes()
    tally = Tally("opencode.db bytes", bound_s=20)

    @fuzz_settings(25)
    @given(raw=mutated(seed), in_folder=st.booleans())
    def case(raw: bytes, in_folder: bool) -> None:
        folder = tmp_path / "walk"
        folder.mkdir(exist_ok=True)
        path = folder / "opencode.db"
        path.write_bytes(raw)
        tally.check(["audit", str(folder if in_folder else path), "--quiet"])

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0


#: A real OpenCode database (never copied into the project): its audit's totals equal the sums
#: of its own step-finish parts, read with SQL here.
REAL_DB = os.environ.get("PREFIXBENCH_OPENCODE_DB")


@pytest.mark.skipif(not REAL_DB, reason="set PREFIXBENCH_OPENCODE_DB to a real opencode.db")
def test_a_real_database_totals_equal_its_own_sums() -> None:
    path = Path(REAL_DB or "")
    requests, _ = _read(path)
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT json_extract(data, '$.tokens.input'), json_extract(data, '$.tokens.output') + "
            "json_extract(data, '$.tokens.reasoning'), json_extract(data, '$.tokens.cache.read'), "
            "json_extract(data, '$.tokens.cache.write') FROM part WHERE json_extract(data, '$.type') = 'step-finish'"
        ).fetchall()
    finally:
        con.close()
    kept = [r for r in rows if any(r)]
    assert len(requests) == len(kept)
    assert sum(r.usage.output for r in requests) == sum(r[1] or 0 for r in kept)
    assert sum(r.usage.cache_read for r in requests) == sum(r[2] or 0 for r in kept)
    assert sum(r.usage.cache_write for r in requests) == sum(r[3] or 0 for r in kept)


def test_kilo_code_database_is_read_as_opencode_in_a_walk(tmp_path: Path) -> None:
    # Kilo Code 7.2.21 on (April 2026; Kilo CLI too) is an OpenCode fork: its sessions are in
    # ~/.local/share/kilo/kilo.db, OpenCode's tables, its user messages carrying a model object and
    # the editor's context beside OpenCode's fields.
    exports = _exports()
    for export in exports:
        for message in export["messages"]:
            if message["info"]["role"] == "user":
                message["info"] |= {"agent": "code", "model": {"providerID": "kilo", "modelID": "anthropic/claude-sonnet-4.5"},
                                    "editorContext": {"visibleFiles": ["src/app.ts"]}}
    folder = tmp_path / "share" / "kilo"
    folder.mkdir(parents=True)
    write_db(folder / "kilo.db", exports)
    t = run_audit([tmp_path / "share"]).totals
    # The same hand sums as test_database_totals_field_by_field.
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == (6, 12512 + 30, 1190 + 142, 9000 + 4520, 11900 + 4630)


def test_the_go_era_opencode_database_is_named_not_called_binary(tmp_path: Path) -> None:
    # The Go-era opencode (2025) kept .opencode/opencode.db with sessions, messages and files:
    # per-session totals, no per-call usage (0xdilo/midi-animation commits one). Its one line
    # names it as a SQLite database the audit does not read, not as an unknown binary file.
    path = tmp_path / "opencode.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT, message_count INTEGER,"
        " prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL, updated_at INTEGER, created_at INTEGER);"
        "CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, role TEXT, parts TEXT, model TEXT);"
        "INSERT INTO sessions VALUES ('s1', NULL, 'New Session', 2, 40799, 10984, 1.5, 1750981652, 1750980927);"
    )
    db.commit()
    db.close()
    assert not is_opencode_db(path)
    with pytest.raises(UserError, match=r"opencode\.db:1: a SQLite database with none of the tables the audit reads \(OpenCode's, "):
        run_audit([path])



@pytest.mark.parametrize("suffix", [".gz", ".xz"])
def test_a_compressed_database_is_named_compressed_not_one_without_the_tables(db: Path, suffix: str) -> None:
    # Found by fuzzing the audit of standard input: its decompressed head is SQLite's, but the
    # databases' readers open the file as it lies on disk, so the line said the database had none
    # of the tables the audit reads (it has OpenCode's).
    import gzip
    import lzma

    packed = db.with_name(db.name + suffix)
    packed.write_bytes((gzip.compress if suffix == ".gz" else lzma.compress)(db.read_bytes()))
    with pytest.raises(UserError, match=rf"^{packed}:1: a compressed SQLite database: .*decompress it and give the database file$"):
        run_audit([packed])
    done = subprocess.run([sys.executable, "-m", "prefixbench", "audit", "-"], input=packed.read_bytes(), capture_output=True, timeout=120)
    assert done.returncode == 2 and done.stderr.decode().startswith("prefixbench: error: <stdin>:1: a compressed SQLite database")
    assert len(done.stderr.splitlines()) == 1


def test_a_database_whose_damaged_schema_names_no_utf8_is_one_line(tmp_path: Path) -> None:
    # Found by fuzzing: a flipped byte in an index's name made SQLite's message ("malformed
    # database schema (...)") bytes that are no UTF-8, and Python's decoding of it escaped as a
    # UnicodeDecodeError traceback from every database detector's first query.
    path = tmp_path / "opencode.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE session (id TEXT UNIQUE)")
    db.commit()
    db.close()
    path.write_bytes(path.read_bytes().replace(b"sqlite_autoindex_session_1", b"sqlite_autoindex_s\xc1ssion_1"))
    with pytest.raises(UserError, match=r"opencode\.db: cannot read this SQLite database \(malformed database schema "
                                        r"\(sqlite_autoindex_s\\xc1ssion_1\) - orphan index; a corrupt or truncated file\?\)$"):
        run_audit([path])

def test_a_crush_database_is_named_with_what_it_keeps_and_how_to_record_its_calls(tmp_path: Path) -> None:
    # Crush's .crush/crush.db (many projects commit one) keeps the Go-era opencode's tables plus a
    # messages.provider column: a session's tokens and cost, no call's usage. Main's line said
    # only that it lacks OpenCode's tables. Its prompt and completion tokens are the session's
    # LAST call's (Crush's agent.go sets them from each call's usage, updateSessionTokenCounters),
    # only the cost is summed: the line said "summed prompt and completion tokens" before.
    path = tmp_path / "crush.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT, message_count INTEGER,"
        " prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL, updated_at INTEGER, created_at INTEGER,"
        " summary_message_id TEXT);"
        "CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, role TEXT, parts TEXT, model TEXT,"
        " created_at INTEGER, updated_at INTEGER, finished_at INTEGER, provider TEXT);"
        "INSERT INTO sessions VALUES ('s1', NULL, 'Fix build', 4, 21000, 900, 0.12, 1754130000, 1754129000, NULL);"
    )
    db.commit()
    db.close()
    with pytest.raises(UserError, match=r"crush\.db:1: .*a Crush or Go-era opencode database: it keeps each session's last call's "
                                         r"prompt and completion tokens and its summed cost, not each call's usage; "
                                         r"record such an agent's calls with `prefixbench proxy`"):
        run_audit([path])
