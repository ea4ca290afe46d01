"""Zed's agent threads (workloads/logs/formats/zed.py): its threads database built here from SQL
(threads written by hand in each serialized version, zstd-compressed as Zed saves them), read
call by call where a thread keeps each call's usage, and refused in one line where it keeps only
each turn's last call."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.formats.zed import is_zed_db
from tests.unit.logs.test_opencode_db import audit_locked

FIXTURES = Path(__file__).parent / "fixtures"
#: A 0.2.0 thread written by hand (four calls through Anthropic, one copied entry).
THREAD = FIXTURES / "zed.json"
FORMAT = FORMATS["zed"]

#: The table as Zed's db.rs creates it, with the columns it added later.
SCHEMA = """
CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL,
    data_type TEXT NOT NULL, data BLOB NOT NULL, parent_id TEXT, folder_paths TEXT,
    folder_paths_order TEXT, created_at TEXT);
"""


def usage(inp: int, out: int, write: int = 0, read: int = 0) -> dict:
    return {"input_tokens": inp, "output_tokens": out, "cache_creation_input_tokens": write, "cache_read_input_tokens": read}


def message(mid: int, role: str, text: str, tool_uses: list | None = None, tool_results: list | None = None) -> dict:
    return {"id": mid, "role": role, "segments": [{"type": "text", "text": text}], "tool_uses": tool_uses or [],
            "tool_results": tool_results or [], "context": "", "creases": [], "is_hidden": False}


#: A 0.1.0 thread through Google: the tool result is a user message of its own; input_tokens is
#: Gemini's promptTokenCount, the cached part inside (subset).
V010_GOOGLE = {
    "version": "0.1.0", "summary": "Explain the build", "updated_at": "2025-05-02T10:00:00Z",
    "messages": [
        message(0, "user", "Why does the build fail?"),
        message(1, "assistant", "Reading Cargo.toml", [{"id": "c1", "name": "read_file", "input": {"path": "Cargo.toml"}}]),
        message(2, "user", "", tool_results=[{"tool_use_id": "c1", "is_error": False, "content": {"Text": "[package]"}, "output": None}]),
        message(3, "assistant", "A feature is missing."),
    ],
    "cumulative_token_usage": usage(9100, 160, 0, 4096),
    "request_token_usage": [usage(0, 0), usage(4000, 100), usage(4000, 100), usage(5100, 60, 0, 4096)],
    "model": {"provider": "google", "model": "gemini-2.5-pro"},
}
#: A 0.2.0 thread through OpenAI: Zed's OpenAI mapper wrote no cache count (zeros).
V020_OPENAI = {
    "version": "0.2.0", "summary": "Rename a function", "updated_at": "2025-06-10T08:00:00Z",
    "messages": [message(0, "user", "Rename foo to bar"), message(1, "assistant", "Done.")],
    "cumulative_token_usage": usage(3000, 40),
    "request_token_usage": [usage(0, 0), usage(3000, 40)],
    "model": {"provider": "openai", "model": "gpt-4.1"},
}
#: Zed's current agent: one usage per user message id (the turn's last call).
V030 = {
    "version": "0.3.0", "title": "Current agent thread", "updated_at": "2025-10-01T12:00:00Z",
    "messages": [{"User": {"id": "u-1", "content": [{"Text": "hi"}]}}, {"Agent": {"content": [{"Text": "hello"}], "tool_results": {}}}],
    "cumulative_token_usage": usage(10, 5, 900, 0),
    "request_token_usage": {"u-1": usage(10, 5, 900, 0)},
    "model": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
}
#: A thread from before Zed kept token usage.
UNVERSIONED = {"summary": "Old", "updated_at": "2025-03-01T00:00:00Z",
               "messages": [{"id": 0, "role": "user", "text": "hi", "tool_uses": [], "tool_results": []}]}


def write_db(path: Path, threads: list[tuple[str, dict, str]]) -> Path:
    """A threads database holding ``threads`` (id, thread, data_type), as Zed's db.rs saves them."""
    db = sqlite3.connect(path)
    try:
        db.executescript(SCHEMA)
        for tid, thread, data_type in threads:
            raw = json.dumps(thread).encode()
            data = zstandard.ZstdCompressor(level=3).compress(raw) if data_type == "zstd" else raw
            db.execute("INSERT INTO threads (id, summary, updated_at, data_type, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                       (tid, str(thread.get("summary") or thread.get("title")), thread["updated_at"], data_type, data, thread["updated_at"]))
        db.commit()
    finally:
        db.close()
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return write_db(tmp_path / "threads.db", [
        ("t-legacy-json", V010_GOOGLE, "json"),
        ("t-fixture", json.loads(THREAD.read_text()), "zstd"),
        ("t-openai", V020_OPENAI, "zstd"),
        ("t-current", V030, "zstd"),
        ("t-old", UNVERSIONED, "json"),
    ])


def _read(path: Path):
    return import_file(path, FORMAT, ImportContext())


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "prefixbench", *args], capture_output=True, text=True, timeout=120)


def test_database_detected_from_its_content_under_any_name(db: Path, tmp_path: Path) -> None:
    assert is_zed_db(db)
    assert detect_format(db) is FORMAT
    renamed = tmp_path / "backup.sqlite"
    renamed.write_bytes(db.read_bytes())
    assert detect_format(renamed) is FORMAT
    assert not is_zed_db(THREAD)


def test_database_totals_field_by_field(db: Path) -> None:
    requests, summary = _read(db)
    # By hand, in updated_at order:
    #   Google 0.1.0: two calls (message 2 is a tool result, no call); input includes the read:
    #     uncached 4000 + (5100 - 4096) = 5004, read 4096, output 100 + 60.
    #   the fixture (Anthropic 0.2.0, additive): uncached 3 + 5 + 4 + 6 = 18, read 0 + 9000 + 9400 + 9700
    #     = 28100, write 9000 + 400 + 300 + 250 = 9950, output 120 + 80 + 30 + 50 = 280.
    #   OpenAI 0.2.0: one call, no cache count anywhere: uncached 3000, output 40, cache not reported.
    #   0.3.0 and the unversioned thread: no call.
    assert len(requests) == 2 + 4 + 1 == summary.requests
    assert [r.lane for r in requests] == ["t-legacy-json"] * 2 + ["t-openai"] + ["t-fixture"] * 4
    assert [r.seq for r in requests] == list(range(7))
    assert [r.provider for r in requests] == ["gemini"] * 2 + ["openai"] + ["anthropic"] * 4
    usages = [r.usage for r in requests]
    assert sum(u.uncached for u in usages) == 5004 + 18 + 3000
    assert sum(u.cache_read for u in usages) == 4096 + 28100
    assert sum(u.cache_write_5m for u in usages) == 9950
    assert sum(u.cache_write_1h for u in usages) == 0
    assert sum(u.output for u in usages) == 160 + 280 + 40
    assert [u.cache_reported for u in usages] == [True, True, False, True, True, True, True]
    # The tool result of 0.1.0 is no user turn; each thread's first call starts its chain.
    assert [r.events for r in requests[:2]] == [(("user_turn", ""),), ()]
    assert [r.prefix.parent for r in requests] == [None, "zed:t-legacy-json#1", None, None, "zed:t-fixture#1", "zed:t-fixture#2", "zed:t-fixture#3"]
    # Every thread of the database is on line 1: each call names its thread and message.
    assert [(r.line, r.path) for r in requests][1:3] == [(1, "thread 't-legacy-json' messages[3]"), (1, "thread 't-openai' messages[1]")]
    assert len({(r.line, r.path) for r in requests}) == len(requests)
    reasons = [why for _, why in summary.skipped]
    assert len(reasons) == 3
    assert "thread 't-old': no token usage" in reasons[0]
    assert "thread 't-fixture': messages[5]: usage copied from the previous call" in reasons[1]
    assert "thread 't-current': a thread of Zed's current agent (version 0.3.0): it keeps one usage per user turn" in reasons[2]
    notes = " ".join(summary.notes)
    assert "5 thread(s), 3 read call by call" in notes
    assert "1 call(s) through a provider whose prompt count includes the cache" in notes
    # Zed's own cumulative totals of the three threads read equal the counted entries (no "Zed's N" beside any).
    assert ("counted against Zed's own cumulative_token_usage of the threads read: input_tokens 12,118, output_tokens 480, "
            "cache_creation_input_tokens 9,950, cache_read_input_tokens 32,196") in summary.notes


def test_a_database_of_current_agent_threads_only_is_refused_in_one_line(tmp_path: Path) -> None:
    path = write_db(tmp_path / "threads.db", [("t-current", V030, "zstd"), ("t-old", UNVERSIONED, "json")])
    with pytest.raises(UserError) as caught:
        run_audit([path])
    text = str(caught.value)
    assert text == (f"{path}: 1 of 2 Zed thread(s) is of its current agent (version 0.3.0), which keeps one usage per user turn "
                    "(the turn's last call), not each call's; no thread here holds each call's usage: no request to audit; "
                    "record Zed's calls with `prefixbench proxy` (Zed's provider settings take its URL as api_url)")
    done = _cli("audit", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and text in done.stderr
    assert "Traceback" not in done.stderr


def test_a_current_agent_thread_json_alone_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "thread.json"
    path.write_text(json.dumps(V030))
    assert detect_format(path) is FORMAT
    with pytest.raises(UserError, match=r"thread\.json: 1 of 1 Zed thread\(s\) is of its current agent \(version 0\.3\.0\)"):
        run_audit([path])


def test_bad_zstd_in_a_data_column_names_the_row(db: Path) -> None:
    con = sqlite3.connect(db)
    con.execute("UPDATE threads SET data = ? WHERE id = 't-openai'", (b"\x28\xb5\x2f\xfd garbage",))
    con.commit()
    con.close()
    with pytest.raises(UserError, match=r"threads\.db: thread 't-openai': data is not valid zstd"):
        _read(db)


def test_a_foreign_data_type_names_the_row(db: Path) -> None:
    con = sqlite3.connect(db)
    con.execute("UPDATE threads SET data_type = 'lz4' WHERE id = 't-openai'")
    con.commit()
    con.close()
    with pytest.raises(UserError, match=r"thread 't-openai': data_type 'lz4' is neither json nor zstd$"):
        _read(db)


def test_the_database_is_never_written(db: Path) -> None:
    before = db.read_bytes()
    _read(db)
    assert db.read_bytes() == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["threads.db"]


def test_a_database_read_under_another_input_names_the_one_that_reads_it(db: Path) -> None:
    with pytest.raises(UserError, match=r"read as codex \(--input zed reads it\)$"):
        import_file(db, FORMATS["codex"], ImportContext())


def test_folder_walk_reads_the_database_not_its_wal_and_shm(db: Path) -> None:
    from prefixbench.workloads.logs.sources import find_log_files

    (db.parent / "threads.db-wal").write_bytes(b"")
    (db.parent / "threads.db-shm").write_bytes(b"\0" * 64)
    assert find_log_files([db.parent]) == [(db, None)]


def test_a_thread_whose_read_exceeds_its_input_is_read_with_the_cache_outside_input(tmp_path: Path) -> None:
    # Later Zed versions take the cached part out of Gemini's prompt count: the second call's read
    # (6791) is above its input_tokens (2234), so the thread's calls are read as additive.
    thread = dict(V010_GOOGLE, request_token_usage=[usage(0, 0), usage(4000, 100), usage(4000, 100), usage(2234, 24, 0, 6791)])
    path = tmp_path / "thread.json"
    path.write_text(json.dumps(thread))
    requests, summary = _read(path)
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.prompt_count) for r in requests] == [
        (4000, 0, "exclusive-by-peers"), (2234, 6791, "exclusive")]
    assert [(r.line, r.path) for r in requests] == [(1, "messages[1]"), (1, "messages[3]")]  # one object: each its message
    assert any(note.startswith("2 call(s) through a provider whose prompt count includes the cache, in threads where") for note in summary.notes)


def test_a_locked_threads_database_names_zed_not_opencode(db: Path) -> None:
    # Found by a user's walk: the OpenCode detector, asked first, said "the OpenCode database is
    # locked; audit it when OpenCode is not writing" of Zed's threads.db.
    line = audit_locked(db)
    assert "the Zed database is locked" in line and "OpenCode" not in line


def test_a_threads_database_of_another_schema_is_not_called_a_missing_opencode_database(tmp_path: Path) -> None:
    # Found by a user's walk: a threads.db whose threads table lacks data_type was "a SQLite
    # database without OpenCode's session, message and part tables", naming no other database read.
    path = tmp_path / "threads.db"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT, updated_at TEXT, data BLOB)")
    other.commit()
    other.close()
    with pytest.raises(UserError) as caught:
        detect_format(path)
    assert "Zed's threads" in str(caught.value) and "\n" not in str(caught.value)


def test_an_empty_threads_database_says_it_holds_no_thread(tmp_path: Path) -> None:
    # Found by a user's walk: the audit's one line quoted the note on times ("Zed's threads keep no
    # time per message ...") for a database with no thread at all.
    path = write_db(tmp_path / "threads.db", [])
    done = _cli("audit", str(path))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "a Zed threads database holding no thread" in done.stderr and "no time per message" not in done.stderr


@pytest.mark.parametrize("key, value, said", [
    ("version", 2, "a Zed thread of version '2', which audit does not know"),
    ("messages", [{"id": 0, "segments": []}, {"id": 1, "segments": []}], "no call read from the thread: no assistant message with its call's usage"),
])
def test_a_damaged_thread_json_says_what_is_wrong_with_it(tmp_path: Path, key: str, value: object, said: str) -> None:
    # Found by a user's walk: a thread whose version was a number read as a request body ("field
    # 'model' must be a str, got dict"); one whose messages had no role quoted the note on times.
    thread = json.loads(THREAD.read_text())
    thread[key] = value
    path = tmp_path / "thread.json"
    path.write_text(json.dumps(thread))
    done = _cli("audit", str(path))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert said in done.stderr, done.stderr


#: Zed's thread version 0.4.0: the 0.3.0 usage map (one usage per user turn), an append-only
#: ``thread_log`` beside the messages (its events also kept in a ``thread_events`` table).
V040 = {
    **V030, "version": "0.4.0", "title": "Event-log thread", "updated_at": "2026-11-20T09:00:00Z",
    "request_token_usage": {"u-1": usage(12, 7, 0, 1500), "u-2": usage(30, 9, 200, 1500)},
    "thread_log": {"events": [
        {"sequence": 0, "parent_sequence": None, "kind": {"MessageAppended": {"message": {"User": {"id": "u-1", "content": [{"Text": "hi"}]}}}}},
        {"sequence": 1, "parent_sequence": 0, "kind": {"PromptCacheLayout": {"layout": {"system_prompt": "You are...", "tool_order": ["terminal"]}}}},
    ], "active_sequence": 1},
    "fork_origin": None, "sandbox_grants": {"write_paths": [], "network_hosts": []},
}


def test_a_version_0_4_0_thread_is_counted_apart_as_per_turn_like_0_3_0(tmp_path: Path) -> None:
    """Zed's 0.4.0 threads keep ``request_token_usage`` as a map of one usage per user turn, as
    0.3.0 does: no thread's calls can be read one by one. Before: skipped as "a Zed thread of
    version '0.4.0', which audit does not know", and a database of such threads refused as
    holding no request, without saying why or what records the calls instead."""
    path = write_db(tmp_path / "threads.db", [("t-log", V040, "zstd"), ("t-current", V030, "zstd")])
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE thread_events (thread_id TEXT NOT NULL, sequence INTEGER NOT NULL, parent_sequence INTEGER, "
               "event_json TEXT NOT NULL, PRIMARY KEY (thread_id, sequence))")
    db.commit()
    db.close()
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert str(caught.value) == (
        f"{path}: 2 of 2 Zed thread(s) are of its current agent (version 0.3.0 and 0.4.0), which keeps one usage per user turn "
        "(the turn's last call), not each call's; no thread here holds each call's usage: no request to audit; "
        "record Zed's calls with `prefixbench proxy` (Zed's provider settings take its URL as api_url)")
    # Beside a thread read call by call, it is listed as skipped with the same reason.
    mixed = write_db(tmp_path / "mixed.db", [("t-log", V040, "zstd"), ("t-openai", V020_OPENAI, "zstd")])
    requests, summary = _read(mixed)
    assert len(requests) == 1
    assert [why for _, why in summary.skipped] == [
        "thread 't-log': a thread of Zed's current agent (version 0.4.0): it keeps one usage per user turn, "
        "the turn's last call, not each call's (2 turn(s)): not read as calls"]
