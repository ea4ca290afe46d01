"""A Hermes Agent home committed to a public repository (github.com/Satyabrat99/hermesstore,
``.hermes/state.db`` with its write-ahead log, 2026; mimo-v2.5-pro through Xiaomi), read where it
lives (a local git copy; never copied into this project, the test skips without it). Its
``sessions`` rows sum each session's calls' tokens; no call's usage is kept: the audit refuses it
in one line naming what it keeps.

Out of sample (oos62b, 2026-12-07): github.com/juliuss1907/knowledge-base (commit ``392d8ba6``,
2026-04-20 to 05-12), a ``.hermes/sessions/`` of 13 session logs (``session_<time>_<id>.json``: the
session's model, endpoint, system prompt, tools and 2 to 82 messages, glm-5 through OpenCode Zen
Go and deepseek-v4-pro through Ollama's cloud) and four ``<id>.jsonl`` transcripts, no call's
usage anywhere. Before, each session log was read as one chat-completions request body: 13
"requests", none with usage, $0.36 and a hit ratio estimated from nothing, exit 0.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from prefixbench.reports.cli import main
from tests.realdata.mirrors import file_at, files_at

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


@pytest.mark.parametrize("extra", [[], ["--format", "json"], ["--what-if", "all"]])
def test_committed_hermes_session_logs_are_refused_not_read_as_request_bodies(tmp_path: Path, capsys, extra: list[str]) -> None:
    url, env = "github.com/juliuss1907/knowledge-base", "PREFIXBENCH_JULIUSS_KNOWLEDGE_BASE_REPO"
    repo = Path(os.environ.get(env, "/work/.mirror/juliuss1907+knowledge-base/repo"))
    commit = "392d8ba62ae25390e0775b75d47def373a20ec4e"
    names = [n for n in files_at(repo, commit, url, env) if n.startswith(".hermes/sessions/")]
    for name in names:  # (the sessions folder only: the home's credentials are never read)
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(file_at(repo, commit, name, url, env))
    logs = sorted(tmp_path.glob(".hermes/sessions/session_*.json"))
    assert len(names) == 17 and len(logs) == 13
    sessions = [json.loads(p.read_text()) for p in logs]
    assert all(not any("usage" in m for m in s["messages"]) for s in sessions)
    assert sorted(len(s["messages"]) for s in sessions)[::12] == [2, 82]
    assert main(["audit", str(tmp_path / ".hermes"), "--quiet", *extra]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert re.search(r"\.hermes: no log to audit: of the 17 .*a Hermes Agent session log", err), err
    with pytest.raises(UserError, match=r"session_20260424_182100_85ae43c6\.json:1: a Hermes Agent session log"):
        run_audit([tmp_path / ".hermes/sessions/session_20260424_182100_85ae43c6.json"])
