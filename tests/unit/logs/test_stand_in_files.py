"""Files that stand in for a log without being one, each refused in one line saying what it is.

An SQLite write-ahead log (``opencode.db-wal``, ``session-store.db-wal``) given to audit on its
own: a committed OpenCode home (aallqsss/anotherworldsimulator@2f8444b) holds
``.local/share/opencode/opencode.db-wal`` and ``-shm`` while its ``opencode.db`` (over 4 MiB) is
not in the snapshot. Main said "binary file, not a text log"; the line now says what the file is
and which database to audit, and whether that database is beside it."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from prefixbench.reports.cli import run


def _wal_of(folder: Path, name: str) -> Path:
    """A database ``name`` in WAL mode whose last writes are still in its ``-wal`` file, and that
    file copied out while the connection holds it (a checkpoint on close would empty it)."""
    db = sqlite3.connect(folder / name)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE message (id TEXT PRIMARY KEY, data TEXT)")
    db.execute("INSERT INTO message VALUES ('msg_1', '{}')")
    db.commit()
    wal = folder / f"{name}-wal"
    assert wal.stat().st_size > 0
    copy = folder / "copy"
    copy.mkdir()
    shutil.copy(wal, copy / wal.name)
    db.close()
    return copy / wal.name


@pytest.mark.parametrize("beside", [False, True])
def test_a_write_ahead_log_alone_names_its_database(tmp_path: Path, capsys: pytest.CaptureFixture[str], beside: bool) -> None:
    wal = _wal_of(tmp_path, "opencode.db")
    if beside:
        shutil.copy(tmp_path / "opencode.db", wal.parent / "opencode.db")
    assert run(["audit", str(wal), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "binary file" not in err
    if beside:
        assert err.endswith(f"{wal}:1: an SQLite write-ahead log, not a log: audit its database opencode.db beside it "
                            "(which is read with this file)")
    else:
        assert err.endswith(f"{wal}:1: an SQLite write-ahead log, not a log: its database opencode.db, which the audit reads "
                            "(with this file beside it), is not in this folder")


def test_a_git_lfs_pointer_is_named_not_called_malformed_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A committed home (ilabelagent/valifi@dde800b) keeps one Gemini CLI session under Git LFS:
    # a clone without LFS holds a pointer of three lines in its place. Main said "not a JSON log:
    # its first line is not JSON (Expecting value at column 1)".
    path = tmp_path / "session-2025-11-01T00-57-4c258e23.json"
    path.write_text("version https://git-lfs.github.com/spec/v1\n"
                    "oid sha256:" + "0" * 64 + "\nsize 5242880\n")
    assert run(["audit", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"prefixbench: error: {path}:1: a Git LFS pointer, not the log: its content is in the repository's "
                   "LFS storage; fetch it (git lfs pull) and audit the file then")
