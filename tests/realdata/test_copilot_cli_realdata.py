"""GitHub Copilot CLI sessions committed to public repositories by mistake, read where they live (a
local git copy of each; never copied into this project, each test skips without it):

* github.com/XEFF09/dotfiles (``b942224185c62d466d7936620e583f6eb08c1bb1``, 2026-06): a
  ``.copilot/`` home, four sessions of Copilot CLI 1.0.59 and 1.0.60. From
  ``PREFIXBENCH_XEFF09_DOTFILES_REPO``;
* github.com/shinelu2013/myAssistant (``0f5a82380965eb9e91a7bfbefb2426efaeac0f0e``, 2026-04): one
  session of Copilot CLI 1.0.14, resumed nine times. From ``PREFIXBENCH_MYASSISTANT_REPO``;
* github.com/jasonyannn/Proxima (``dddf67b64a2e63d6125f4284bf0c14dfe0bdc018``, 2026-08-19): a
  ``.copilot/`` home of Copilot CLI 1.0.77 whose session store (schema 6) was committed as its
  write-ahead log only (``session-store.db-wal``, every page of the database in it; the main file
  was not committed): 109 calls of two sessions in ``assistant_usage_events``, claude-haiku-4.5,
  gpt-5-mini and mai-code-1.1-flash. The test puts the database back from the log's frames (their
  checksums checked) and audits it. From ``PREFIXBENCH_PROXIMA_REPO``.

What is checked is the evidence for refusing their ``events.jsonl`` (docs/formats.md, managed-agents):
recounted from the raw events, no event but a segment's ``session.shutdown`` names a prompt or cache
count, while the calls' ``assistant.message`` events keep their output tokens; and audit says so in
one line that points to the session store and the OTel export. The first two homes also keep a
session store of an earlier schema (4 and 2), without the per-call usage table (schema 6 has it):
each is refused in one line too. Proxima's store is read: its totals equal the rows' own billed
counts (``token_details_json``, an independent field of the same row), and its reads are predicted
within 3% in total.
"""

from __future__ import annotations

import json
import os
import sqlite3
import struct
from pathlib import Path

import pytest
from prefixbench.reports.cli import run
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at, files_at

XEFF09 = Path(os.environ.get("PREFIXBENCH_XEFF09_DOTFILES_REPO", "/work/.mirror/XEFF09+dotfiles/repo"))
XEFF09_COMMIT = "b942224185c62d466d7936620e583f6eb08c1bb1"
MYASSISTANT = Path(os.environ.get("PREFIXBENCH_MYASSISTANT_REPO", "/work/.mirror/shinelu2013+myAssistant/repo"))
MYASSISTANT_COMMIT = "0f5a82380965eb9e91a7bfbefb2426efaeac0f0e"
PROXIMA = Path(os.environ.get("PREFIXBENCH_PROXIMA_REPO", "/work/.mirror/jasonyannn+Proxima/repo"))
PROXIMA_COMMIT = "dddf67b64a2e63d6125f4284bf0c14dfe0bdc018"
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
    (PROXIMA, PROXIMA_COMMIT, "https://github.com/jasonyannn/Proxima", "PREFIXBENCH_PROXIMA_REPO", {"1.0.77"}, 2, 2),
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


def _database_of(wal: bytes) -> bytes:
    """The database a write-ahead log holds whole: each page's last copy in the frames up to the
    last commit, the frames' running checksums checked (SQLite's WAL format: a 32-byte header,
    then frames of a 24-byte header and a page)."""
    magic, _, page_size, _, salt1, salt2, check1, check2 = struct.unpack(">8I", wal[:32])
    order = ">" if magic == 0x377F0683 else "<"

    def checksum(data: bytes, s0: int, s1: int) -> tuple[int, int]:
        for a, b in struct.iter_unpack(f"{order}II", data):
            s0 = (s0 + a + s1) & 0xFFFFFFFF
            s1 = (s1 + b + s0) & 0xFFFFFFFF
        return s0, s1

    sums = checksum(wal[:24], 0, 0)
    assert sums == (check1, check2)
    pages: dict[int, bytes] = {}
    committed: dict[int, bytes] = {}
    size = 0
    at = 32
    while at + 24 + page_size <= len(wal):
        number, commit_size, s1, s2, c1, c2 = struct.unpack(">6I", wal[at:at + 24])
        page = wal[at + 24:at + 24 + page_size]
        sums = checksum(wal[at:at + 8] + page, *sums)
        if (s1, s2) != (salt1, salt2) or sums != (c1, c2):
            break
        pages[number] = page
        if commit_size:
            committed, size = dict(pages), commit_size
        at += 24 + page_size
    return b"".join(committed.get(n, bytes(page_size)) for n in range(1, size + 1))


def test_a_committed_session_store_reads_its_rows_and_predicts_its_reads(tmp_path: Path) -> None:
    url, env = "https://github.com/jasonyannn/Proxima", "PREFIXBENCH_PROXIMA_REPO"
    path = tmp_path / "session-store.db"
    path.write_bytes(_database_of(file_at(PROXIMA, PROXIMA_COMMIT, ".copilot/session-store.db-wal", url, env)))
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(6,)]
        rows = db.execute("SELECT model, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, token_details_json "
                          "FROM assistant_usage_events").fetchall()
    finally:
        db.close()
    # The rows' own billed counts, per token type: the uncached input is input_tokens less the
    # reads and writes on every row (Claude's writes too), so input_tokens holds them.
    billed = [{d["tokenType"]: d["tokenCount"] for d in json.loads(details)} for *_, details in rows]
    assert all(b["input"] == i - r - w and b["cache_read"] == r and b["cache_write"] == w and b["output"] == o
               for b, (_, i, r, w, o, _) in zip(billed, rows))
    result = run_audit([path])
    assert [f.format for f in result.files] == ["copilot-cli"]
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (
        len(rows), sum(b["input"] for b in billed), sum(b["cache_read"] for b in billed),
        sum(b["cache_write"] for b in billed), sum(b["output"] for b in billed)) == (109, 118_588, 5_045_425, 410_820, 35_376)
    assert {(r.provider, r.model) for r in result.rows} == {
        ("anthropic", "claude-haiku-4.5"), ("openai", "gpt-5-mini"), ("unknown", "mai-code-1.1-flash")}
    predicted = sum(lane.predicted_cache_read for lane in result.lanes)
    # -0.1% of the 5,045,425 reported (5,015,851, -0.6%, and 86 within 3% while OpenAI's in-memory
    # entries were kept 5 min: gpt-5-mini's calls after 5 to 10 min idle read them).
    assert predicted == 5_040_427
    assert abs(predicted - t.cache_read) <= 0.03 * t.cache_read
    assert sum(f.read_within for f in result.files) == 87
