"""GitHub Copilot CLI sessions committed to public repositories by mistake, read where they live (a
local git copy of each; never copied into this project, each test skips without it):

* github.com/XEFF09/dotfiles (``b942224185c62d466d7936620e583f6eb08c1bb1``, 2026-06): a
  ``.copilot/`` home, four sessions of Copilot CLI 1.0.59 and 1.0.60. From
  ``PREFIXBENCH_XEFF09_DOTFILES_REPO``;
* github.com/shinelu2013/myAssistant (``0f5a82380965eb9e91a7bfbefb2426efaeac0f0e``, 2026-04): one
  session of Copilot CLI 1.0.14, resumed nine times. From ``PREFIXBENCH_MYASSISTANT_REPO``.

What is checked is the evidence for refusing their ``events.jsonl`` (docs/formats.md, managed-agents):
recounted from the raw events, no event but a segment's ``session.shutdown`` names a prompt or cache
count, while the calls' ``assistant.message`` events keep their output tokens; and audit says so in
one line that points to the session store and the OTel export. Both homes also keep a session store
(``session-store.db``) of an earlier schema (4 and 2), without the per-call usage table of schema 8:
each is refused in one line too. No public store of schema 8 was found (docs/formats.md,
copilot-cli), so no prediction is measured here.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from prefixbench.reports.cli import run
from tests.realdata.mirrors import file_at, files_at

XEFF09 = Path(os.environ.get("PREFIXBENCH_XEFF09_DOTFILES_REPO", "/work/.mirror/XEFF09+dotfiles/repo"))
XEFF09_COMMIT = "b942224185c62d466d7936620e583f6eb08c1bb1"
MYASSISTANT = Path(os.environ.get("PREFIXBENCH_MYASSISTANT_REPO", "/work/.mirror/shinelu2013+myAssistant/repo"))
MYASSISTANT_COMMIT = "0f5a82380965eb9e91a7bfbefb2426efaeac0f0e"
#: The usage fields of a call's prompt (Copilot's camelCase, and its compaction record's own).
PROMPT_FIELDS = ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "cachedInput")


def _named(value: object, found: set[str]) -> set[str]:
    """Every key of ``value``, at any depth, that is one of :data:`PROMPT_FIELDS`."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in PROMPT_FIELDS:
                found.add(key)
            _named(item, found)
    elif isinstance(value, list):
        for item in value:
            _named(item, found)
    return found


@pytest.mark.parametrize(("repo", "commit", "url", "env", "versions", "sessions", "shutdowns"), [
    (XEFF09, XEFF09_COMMIT, "https://github.com/XEFF09/dotfiles", "PREFIXBENCH_XEFF09_DOTFILES_REPO",
     {"1.0.59", "1.0.60"}, 4, 4),
    (MYASSISTANT, MYASSISTANT_COMMIT, "https://github.com/shinelu2013/myAssistant", "PREFIXBENCH_MYASSISTANT_REPO",
     {"1.0.14"}, 1, 9),
])
def test_committed_copilot_cli_sessions_hold_no_call_prompt_and_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], repo: Path, commit: str, url: str, env: str,
    versions: set[str], sessions: int, shutdowns: int,
) -> None:
    names = [n for n in files_at(repo, commit, url, env) if n.startswith(".copilot/session-state/") and n.endswith("/events.jsonl")]
    assert len(names) == sessions
    seen_versions: set[str] = set()
    per_type: dict[str, set[str]] = {}
    outputs = shutdown_count = 0
    for number, name in enumerate(names):
        raw = file_at(repo, commit, name, url, env)
        path = tmp_path / f"s{number}" / "events.jsonl"
        path.parent.mkdir()
        path.write_bytes(raw)
        for line in raw.decode().splitlines():
            event = json.loads(line)
            data = event["data"]
            if event["type"] == "session.start":
                seen_versions.add(data["copilotVersion"])
            shutdown_count += event["type"] == "session.shutdown"
            outputs += event["type"] == "assistant.message" and isinstance(data.get("outputTokens"), int)
            fields = _named(data, set())
            if fields:
                per_type.setdefault(event["type"], set()).update(fields)
        assert run(["audit", str(path), "--quiet"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1
        assert f"{path}:1: a GitHub Copilot CLI session (events.jsonl)" in err
        assert err.endswith("audit its session store instead (~/.copilot/session-store.db, Copilot CLI 1.0.73 on), or its "
                            "OpenTelemetry file export (run copilot with COPILOT_OTEL_FILE_EXPORTER_PATH=FILE, then audit FILE: format otel)")
    assert seen_versions == versions
    assert shutdown_count == shutdowns
    assert outputs > 0  # each call's output tokens are there...
    assert set(per_type) == {"session.shutdown"}  # ...and its prompt and cache counts nowhere but the totals
    # The folder of them all is one line too.
    assert run(["audit", str(tmp_path), "--quiet"]) == 2
    assert "COPILOT_OTEL_FILE_EXPORTER_PATH=FILE" in capsys.readouterr().err


@pytest.mark.parametrize(("repo", "commit", "url", "env", "version"), [
    (XEFF09, XEFF09_COMMIT, "https://github.com/XEFF09/dotfiles", "PREFIXBENCH_XEFF09_DOTFILES_REPO", 4),
    (MYASSISTANT, MYASSISTANT_COMMIT, "https://github.com/shinelu2013/myAssistant", "PREFIXBENCH_MYASSISTANT_REPO", 2),
])
def test_committed_session_stores_of_earlier_schemas_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], repo: Path, commit: str, url: str, env: str, version: int,
) -> None:
    names = [n for n in files_at(repo, commit, url, env) if n.startswith(".copilot/session-store.db")]
    for name in names:  # the database, and its write-ahead log where one was committed
        (tmp_path / name.rsplit("/", 1)[-1]).write_bytes(file_at(repo, commit, name, url, env))
    path = tmp_path / "session-store.db"
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(version,)]
    finally:
        db.close()
    assert {"sessions", "turns"} <= tables and "assistant_usage_events" not in tables
    assert run(["audit", str(path), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {path}:1: a GitHub Copilot CLI session store of schema {version} without assistant_usage_events "
        "(its per-call usage table, from Copilot CLI 1.0.73): no request to audit; audit its OpenTelemetry file export "
        "instead (run copilot with COPILOT_OTEL_FILE_EXPORTER_PATH=FILE, then audit FILE: format otel)")
