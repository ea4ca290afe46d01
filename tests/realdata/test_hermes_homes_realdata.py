"""A Hermes Agent home committed to a public repository (github.com/Satyabrat99/hermesstore,
``.hermes/state.db`` with its write-ahead log, 2026; mimo-v2.5-pro through Xiaomi), read where it
lives (a local git copy; never copied into this project, the test skips without it). Its
``sessions`` rows sum each session's calls' tokens; no call's usage is kept: the audit refuses it
in one line naming what it keeps.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at

REPO = Path(os.environ.get("PREFIXBENCH_HERMESSTORE_REPO", "/work/.mirror/Satyabrat99+hermesstore/repo"))
COMMIT = "630efe3aa19c986649dd3667d5e96eb15c30286d"


def test_a_committed_hermes_state_db_is_refused_naming_what_it_keeps(tmp_path: Path) -> None:
    url, env = "github.com/Satyabrat99/hermesstore", "PREFIXBENCH_HERMESSTORE_REPO"
    home = tmp_path / ".hermes"
    home.mkdir()
    for name in ("state.db", "state.db-wal", "state.db-shm"):
        (home / name).write_bytes(file_at(REPO, COMMIT, f".hermes/{name}", url, env))
    copy = tmp_path / "copy.db"  # (a copy, its log folded in: opening the original read-write would checkpoint it)
    copy.write_bytes((home / "state.db").read_bytes())
    (tmp_path / "copy.db-wal").write_bytes((home / "state.db-wal").read_bytes())
    db = sqlite3.connect(copy)
    calls, sessions, several = db.execute(
        "select sum(api_call_count), count(*), sum(api_call_count > 1) from sessions").fetchone()
    db.close()
    # Sessions of several calls keep only their sums: the audit cannot tell one call from the next.
    assert calls > sessions > 0 and several > 0
    for path in (home / "state.db", home):
        with pytest.raises(UserError, match=r"Hermes Agent's state\.db: it keeps each session's summed input, output and "
                                            r"cache read and write tokens, not each call's usage"):
            run_audit([path])
