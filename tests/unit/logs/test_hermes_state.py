"""Hermes Agent's ``~/.hermes/state.db``: per-session totals, no per-call usage, refused in one line."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit


def make_hermes_db(path: Path) -> Path:
    """A state.db with the columns hermes_state's schema gives sessions and messages (abridged)."""
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE schema_version (version INTEGER NOT NULL);"
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, parent_session_id TEXT,"
        " started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,"
        " input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,"
        " cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, billing_provider TEXT,"
        " api_call_count INTEGER DEFAULT 0);"
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,"
        " content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL,"
        " token_count INTEGER, finish_reason TEXT);"
        "INSERT INTO schema_version VALUES (6);"
        "INSERT INTO sessions VALUES ('20260301_101500_ab12cd', 'cli', 'anthropic/claude-sonnet-4.6', NULL,"
        " 1772360100.0, 1772360700.0, 'cli_close', 4, 1200, 310, 18000, 2400, 0, 'openrouter', 3);"
        "INSERT INTO messages (session_id, role, content, timestamp, token_count) VALUES"
        " ('20260301_101500_ab12cd', 'user', 'list the files', 1772360101.0, NULL),"
        " ('20260301_101500_ab12cd', 'assistant', 'done', 1772360110.0, 12);"
    )
    db.commit()
    db.close()
    return path


def test_a_hermes_state_db_is_refused_naming_what_it_keeps(tmp_path: Path) -> None:
    # Hermes keeps token counts summed per session (and per model and task in
    # session_model_usage), a message only its own token_count: no call's cache reads to
    # replay. Main said only that the file lacks OpenCode's tables.
    path = make_hermes_db(tmp_path / "state.db")
    with pytest.raises(UserError, match=r"state\.db:1: .*Hermes Agent's state\.db: it keeps each session's summed "
                                        r"input, output and cache read and write tokens, not each call's usage; "
                                        r"record such an agent's calls with `prefixbench proxy`"):
        run_audit([path])


def test_the_command_line_refuses_it_in_one_line_with_status_2(tmp_path: Path) -> None:
    path = make_hermes_db(tmp_path / "state.db")
    done = subprocess.run([sys.executable, "-m", "prefixbench", "audit", str(path)],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Hermes Agent's state.db" in lines[0] and "Traceback" not in done.stderr


def test_a_hermes_home_folder_says_why_it_holds_no_log(tmp_path: Path) -> None:
    # ~/.hermes: its state.db beside session JSON files that hold no usage. Main's walk never
    # offered the database and named the first JSON file: "no record of a format audit reads".
    make_hermes_db(tmp_path / "state.db")
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "session_20260301_101500_ab12cd.json").write_text('{"session_id": "20260301_101500_ab12cd", "messages": []}')
    with pytest.raises(UserError, match=r"no log to audit: .*\(state\.db: Hermes Agent's state\.db: it keeps each session's summed"):
        run_audit([tmp_path])


def test_a_folder_of_only_a_hermes_state_db_counts_it_among_the_files_it_names(tmp_path: Path) -> None:
    # Found by a user's walk: "of the 1 file(s) named *.jsonl, *.json or *.traj here, none is a log
    # (state.db: ...)": the one file was a *.db, which the walk offers too.
    make_hermes_db(tmp_path / "state.db")
    with pytest.raises(UserError, match=r"of the 1 file\(s\) named \*\.jsonl, \*\.json, \*\.traj or \*\.db here, none is a log \(state\.db: "):
        run_audit([tmp_path])


def test_a_hermes_state_db_beside_logs_is_listed_as_skipped_saying_why(tmp_path: Path) -> None:
    make_hermes_db(tmp_path / "state.db")
    header = {"type": "session", "version": 3, "id": "p", "timestamp": "2026-03-01T10:15:00.000Z", "cwd": "/w"}
    call = {"type": "message", "timestamp": "2026-03-01T10:15:01.000Z", "message": {
        "role": "assistant", "content": [], "provider": "anthropic", "model": "claude-sonnet-4-6", "api": "anthropic-messages",
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 4000}, "stopReason": "stop", "timestamp": 1772360101000}}
    (tmp_path / "p.jsonl").write_text("\n".join(map(json.dumps, (header, call))) + "\n")
    result = run_audit([tmp_path])
    assert result.totals.requests == 1
    (skipped,) = [f for f in result.files if f.file.endswith("state.db")]
    assert skipped.notes == ("skipped: Hermes Agent's state.db: it keeps each session's summed input, output and cache read "
                             "and write tokens, not each call's usage; record such an agent's calls with `prefixbench proxy`",)
