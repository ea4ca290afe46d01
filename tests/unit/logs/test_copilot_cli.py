"""GitHub Copilot CLI's session store (workloads/logs/formats/copilot_cli.py): one call per
``assistant_usage_events`` row, read from the store itself or from its rows exported as JSON; totals
checked against sums worked out by hand.

On main a store was "a SQLite database without OpenCode's session, message and part tables: not a
log the audit reads", and its exported rows an unknown log format."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from prefixbench.reports.cli import run
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format
from tests.unit.logs.test_opencode_db import audit_locked

FIXTURE = Path(__file__).parent / "fixtures" / "copilot-cli.json"
#: The store's tables as Copilot CLI's have them (schemas 6 to 8; the usage table's columns read, and some not read).
SCHEMA = (
    "CREATE TABLE schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, cwd TEXT, repository TEXT, host_type TEXT, branch TEXT, summary TEXT, "
    "created_at TEXT, updated_at TEXT)",
    "CREATE TABLE turns (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, turn_index INTEGER, user_message TEXT, "
    "assistant_response TEXT, timestamp TEXT)",
    "CREATE TABLE assistant_usage_events (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, turn_index INTEGER, "
    "model TEXT, reasoning_effort TEXT, input_tokens INTEGER, output_tokens INTEGER, cache_read_tokens INTEGER, "
    "cache_write_tokens INTEGER, reasoning_tokens INTEGER, total_nano_aiu INTEGER, duration_ms REAL, "
    "time_to_first_token_ms REAL, finish_reason TEXT, agent_id TEXT, parent_tool_call_id TEXT, initiator TEXT, created_at TEXT)",
)


def store(path: Path, rows: list[dict], version: int = 8, usage_table: bool = True, columns: tuple[str, ...] = (),
          session: bool = True) -> Path:
    """A session store holding ``rows`` (in their ``id`` order), its usage table given the text
    ``columns`` more; with ``session``, one session and its first turn."""
    db = sqlite3.connect(path)
    for statement in SCHEMA if usage_table else SCHEMA[:3]:
        db.execute(statement)
    for column in columns:
        db.execute(f"ALTER TABLE assistant_usage_events ADD COLUMN {column} TEXT")
    db.execute("INSERT INTO schema_version VALUES (?)", (version,))
    if session:
        db.execute("INSERT INTO sessions (id, cwd, created_at) VALUES ('a1', '/w', '2026-10-04T20:15:18.634Z')")
        db.execute("INSERT INTO turns (session_id, turn_index, user_message) VALUES ('a1', 0, 'fix it')")
    for row in rows:
        db.execute(f"INSERT INTO assistant_usage_events ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", tuple(row.values()))
    db.commit()
    db.close()
    return path


def totals(requests) -> tuple[int, int, int, int, int]:
    return (len(requests), sum(r.usage.uncached for r in requests), sum(r.usage.cache_read for r in requests),
            sum(r.usage.cache_write for r in requests), sum(r.usage.output for r in requests))


def test_the_store_reads_as_its_exported_rows(tmp_path: Path) -> None:
    rows = json.loads(FIXTURE.read_text())
    db = store(tmp_path / "session-store.db", rows)
    assert detect_format(db) is FORMATS["copilot-cli"]
    from_store, summaries = load_trace([db])
    from_json, _ = load_trace([FIXTURE])
    # By hand: 5 calls (the row of no tokens skipped); uncached 500 + 600 + 200 + 2856 + 3000,
    # read 11500 + 6144, written 11500 + 700 + 4800, output 300 + 120 + 80 + 50 + 20.
    assert totals(from_store) == totals(from_json) == (5, 7156, 17644, 17000, 570)
    assert [(r.lane, r.lane_kind, r.provider) for r in from_store] == [
        ("a1", "main", "anthropic"), ("a1", "main", "anthropic"), ("a1/explore-1", "subagent", "anthropic"),
        ("a1", "main", "openai"), ("b2", "main", "gemini")]
    assert [r.request_id for r in from_store] == ["a1#1", "a1#2", "a1#3", "a1#4", "b2#6"]
    assert [r.line for r in from_store] == [1, 2, 3, 4, 6]  # a store row's id stands for its line
    summary = summaries[0]
    assert summary.skipped == ((5, "assistant_usage_events row 5: no tokens (a call that failed or was aborted)"),)
    assert "a GitHub Copilot CLI session store (opened read-only)" in summary.notes
    assert summary.notes[0].startswith("5 call(s) of 2 session(s): input_tokens includes cache reads and writes")


def test_a_store_audits_from_the_command_line_and_in_a_home_walk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / ".copilot"
    session = home / "session-state" / "a1"
    session.mkdir(parents=True)
    store(home / "session-store.db", json.loads(FIXTURE.read_text()))
    # The session folder's own files: its events (no per-call prompt counts: skipped with the
    # refusal as a note) and its todo database (no log at all).
    (session / "events.jsonl").write_text(json.dumps(
        {"type": "session.start", "data": {"sessionId": "a1", "copilotVersion": "1.0.91"}, "id": "e1",
         "timestamp": "2026-10-04T20:15:18.634Z", "parentId": None}) + "\n")
    todo = sqlite3.connect(session / "session.db")
    todo.execute("CREATE TABLE todos (id TEXT, title TEXT, status TEXT)")
    todo.commit()
    todo.close()
    assert run(["audit", str(home / "session-store.db"), "--quiet", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["files"][0]["format"] == "copilot-cli" and report["files"][0]["requests"] == 5
    requests, summaries = load_trace([home])
    assert totals(requests) == (5, 7156, 17644, 17000, 570)
    skipped = {Path(s.file).name: s.notes for s in summaries if s.format == "headless"}
    assert skipped["events.jsonl"][0].startswith("skipped: a GitHub Copilot CLI session (events.jsonl)")


def test_rows_whose_input_cannot_hold_their_cache_counts_read_additive(tmp_path: Path) -> None:
    rows = [
        {"id": 1, "session_id": "s", "turn_index": 0, "model": "claude-sonnet-4.6", "input_tokens": 40, "output_tokens": 9,
         "cache_read_tokens": 0, "cache_write_tokens": 9000, "created_at": "2026-10-04T20:00:00Z"},
        {"id": 2, "session_id": "s", "turn_index": 0, "model": "claude-sonnet-4.6", "input_tokens": 9500, "output_tokens": 9,
         "cache_read_tokens": 9000, "cache_write_tokens": 400, "created_at": "2026-10-04T20:00:05Z"},
    ]
    requests, summaries = load_trace([store(tmp_path / "s.db", rows)])
    # 40 < 0 + 9000: input_tokens is the uncached part alone, for every row of the file.
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write) for r in requests] == [(40, 0, 9000), (9500, 9000, 400)]
    assert "read as additive (uncached = input)" in summaries[0].notes[0]


def test_a_null_write_count_of_a_provider_that_bills_writes_apart_is_unknown(tmp_path: Path) -> None:
    rows = [{"session_id": "s", "model": "claude-opus-4.6", "input_tokens": 5000, "output_tokens": 3,
             "cache_read_tokens": 4000, "cache_write_tokens": None},
            {"session_id": "s", "model": "gpt-5.4", "input_tokens": 5000, "output_tokens": 3,
             "cache_read_tokens": 4096, "cache_write_tokens": None}]
    log = tmp_path / "rows.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    requests, summaries = load_trace([log])
    assert [(r.usage.writes_reported, r.usage.uncached) for r in requests] == [(False, 1000), (True, 904)]
    assert any(n.startswith("1 call(s) of a provider that bills writes apart with a NULL write count") for n in summaries[0].notes)


def test_a_store_of_an_earlier_schema_is_one_line_pointing_to_the_otel_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Copilot CLI 1.0.14-1.0.60 stores (schema 2, 4): sessions and turns, no usage table.
    old = store(tmp_path / "session-store.db", [], version=4, usage_table=False)
    assert run(["audit", str(old), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {old}:1: a GitHub Copilot CLI session store of schema 4 without assistant_usage_events "
        "(its per-call usage table, from Copilot CLI 1.0.73): no request to audit; audit its OpenTelemetry file export "
        "instead (run copilot with COPILOT_OTEL_FILE_EXPORTER_PATH=FILE, then audit FILE: format otel)")


def test_a_folder_of_an_earlier_schemas_store_alone_says_what_the_store_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A committed ~/.copilot of such a store alone (its -shm and an empty -wal beside it) was "no log
    # files (*.jsonl, ..., *.db, ...) in this folder", with a *.db right there.
    home = tmp_path / ".copilot"
    home.mkdir()
    store(home / "session-store.db", [], version=2, usage_table=False)
    (home / "session-store.db-wal").write_bytes(b"")
    assert run(["audit", str(home), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"prefixbench: error: {home}: no log to audit: ") and err.endswith(
        "none is a log (session-store.db: a GitHub Copilot CLI session store of schema 2 without assistant_usage_events "
        "(its per-call usage table, from Copilot CLI 1.0.73): no request to audit; audit its OpenTelemetry file export "
        "instead (run copilot with COPILOT_OTEL_FILE_EXPORTER_PATH=FILE, then audit FILE: format otel))")


#: What a Copilot CLI session of an events.jsonl beside a store without a usage table is said to be
#: (after the store's path): neither file holds a call's usage, and only what would record it is named.
NEITHER = (") is of schema 2, without assistant_usage_events (the per-call usage table Copilot CLI keeps from "
           "1.0.73): neither holds a request to audit; to record each call's usage, run copilot with "
           "COPILOT_OTEL_FILE_EXPORTER_PATH=FILE (Copilot CLI 1.0.4 on) and audit FILE (format otel), or update "
           "Copilot CLI to 1.0.73 or later, whose session store keeps it")
EVENTS = ("a GitHub Copilot CLI session (events.jsonl): it logs no call's prompt or cache counts (at most each call's "
          "output tokens, and the session's totals in session.shutdown), and the Copilot CLI session store (")


def _events(path: Path) -> Path:
    """A Copilot CLI 1.0.14 session's events: its start and its totals, no call's prompt counts."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in (
        {"type": "session.start", "data": {"sessionId": "a1", "copilotVersion": "1.0.14"}, "id": "e1",
         "timestamp": "2026-03-31T10:00:00.000Z", "parentId": None},
        {"type": "session.shutdown", "data": {"modelMetrics": {"claude-sonnet-4.6": {"usage": {
            "inputTokens": 9000, "outputTokens": 40, "cacheReadTokens": 8000, "cacheWriteTokens": 900}}}},
         "id": "e2", "timestamp": "2026-03-31T10:05:00.000Z", "parentId": "e1"})))
    return path


def test_a_home_whose_events_and_store_hold_no_usage_says_so_of_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Copilot CLI 1.0.14 home: the refusal of the folder quoted only the events.jsonl, which sent the
    # user to "audit its session store instead": a store of schema 2, refused too.
    home = tmp_path / ".copilot"
    events = _events(home / "session-state" / "a1" / "events.jsonl")
    db = store(home / "session-store.db", [], version=2, usage_table=False)
    assert run(["audit", str(home), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "audit its session store instead" not in err
    assert err == (f"prefixbench: error: {home}: no log to audit: of the 2 file(s) named *.jsonl, *.json, *.traj or *.db "
                   f"here, none is a log (events.jsonl: {EVENTS}{db}{NEITHER})")
    # The events file named alone, or its session folder, says the same of the store of its home.
    assert run(["audit", str(events), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: {events}:1: {EVENTS}{db}{NEITHER}"
    assert run(["audit", str(events.parent), "--quiet"]) == 2
    assert capsys.readouterr().err.strip().endswith(f"(events.jsonl: {EVENTS}{db}{NEITHER})")


def test_an_events_file_beside_a_store_without_usage_in_one_folder_names_both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Both copied into one folder (not a home's layout): the folder's refusal still names the store.
    _events(tmp_path / "events.jsonl")
    db = store(tmp_path / "session-store.db", [], version=4, usage_table=False)
    assert run(["audit", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"(events.jsonl: {EVENTS}{db}{NEITHER.replace('schema 2', 'schema 4')})")


def test_an_events_file_whose_home_store_keeps_usage_still_points_to_it(tmp_path: Path) -> None:
    # The store of a later Copilot CLI is a log: the events are skipped pointing at it, as before.
    home = tmp_path / ".copilot"
    events = _events(home / "session-state" / "a1" / "events.jsonl")
    store(home / "session-store.db", json.loads(FIXTURE.read_text()))
    with pytest.raises(UserError, match=r"audit its session store instead \(~/\.copilot/session-store\.db"):
        detect_format(events)
    _, summaries = load_trace([home])
    skipped = {Path(s.file).name: s.notes for s in summaries if s.format == "headless"}
    assert "audit its session store instead" in skipped["events.jsonl"][0]


@pytest.mark.parametrize(("row", "message"), [
    ({"input_tokens": -1}, r"rows\.jsonl:1: input_tokens is not a non-negative integer"),
    ({"session_id": 7}, r"rows\.jsonl:1: session_id is not a session id"),
    ({"created_at": "yesterday"}, r"rows\.jsonl:1: created_at"),
])
def test_a_bad_row_is_one_line(tmp_path: Path, row: dict, message: str) -> None:
    log = tmp_path / "rows.jsonl"
    base = {"session_id": "s", "model": "gpt-5.4", "input_tokens": 10, "output_tokens": 1, "cache_read_tokens": 0, "cache_write_tokens": 0}
    log.write_text(json.dumps({**base, **row}) + "\n")
    with pytest.raises(UserError, match=message):
        run_audit([log])


def test_records_that_are_no_usage_row_are_counted_not_read(tmp_path: Path) -> None:
    log = tmp_path / "rows.jsonl"
    log.write_text(json.dumps({"session_id": "s", "model": "gpt-5.4", "input_tokens": 10, "output_tokens": 1,
                               "cache_read_tokens": 0, "cache_write_tokens": 0}) + "\n"
                   + json.dumps({"id": 1, "session_id": "s", "turn_index": 0, "user_message": "hi"}) + "\n")
    requests, summaries = load_trace([log])
    assert len(requests) == 1
    assert "1 record(s) that are no assistant_usage_events row: not read" in summaries[0].notes


#: ``copilot -p "list the files" --output-format json``: its events (no parentId), then the
#: ``result``, whose fields sit beside ``type``. The events hold a call's output tokens only; the
#: result's usage premium requests and durations.
COPILOT_JSON_OUTPUT = [
    {"type": "session.auto_mode_resolved", "data": {"chosenModel": "claude-haiku-4.5"}, "id": "e1", "timestamp": "2026-09-06T10:00:00.000Z"},
    {"type": "user.message", "data": {"content": "list the files"}, "id": "e2", "timestamp": "2026-09-06T10:00:00.010Z"},
    {"type": "assistant.turn_start", "data": {"turnId": "0"}, "id": "e3", "timestamp": "2026-09-06T10:00:00.020Z"},
    {"type": "assistant.message", "data": {"messageId": "m1", "content": "One file: a.py.", "toolRequests": [], "outputTokens": 9,
                                          "model": "claude-haiku-4.5"}, "id": "e4", "timestamp": "2026-09-06T10:00:03.000Z"},
    {"type": "assistant.turn_end", "data": {"turnId": "0"}, "id": "e5", "timestamp": "2026-09-06T10:00:03.010Z"},
    {"type": "session.usage_checkpoint", "data": {"totalPremiumRequests": 0.33, "totalNanoAiu": 41000}, "id": "e6",
     "timestamp": "2026-09-06T10:00:03.020Z", "ephemeral": True},
    {"type": "result", "timestamp": "2026-09-06T10:00:03.030Z", "sessionId": "ea7", "exitCode": 0,
     "usage": {"premiumRequests": 0.33, "totalApiDurationMs": 2900, "sessionDurationMs": 3100, "codeChanges": {}}},
]
_JSON_OUTPUT_REFUSAL = (r"GitHub Copilot CLI -p --output-format json output: it reports no call's prompt or cache counts \(each "
                        r"call's assistant\.usage is not printed; .*\), so no call can be audited; audit Copilot CLI's session "
                        r"store \(~/\.copilot/session-store\.db, Copilot CLI 1\.0\.73 on\) or its OpenTelemetry file export .* instead$")


@pytest.mark.parametrize("parent_ids", [False, True])
def test_copilot_cli_json_output_is_named_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], parent_ids: bool) -> None:
    """``copilot -p --output-format json`` prints no call's prompt or cache counts (assistant.usage
    is ephemeral, not printed): named in one line, exit 2. int39 said "unknown log format" of it
    (its events without a parentId), or, its events with one, that it is a session's events.jsonl."""
    events = [{**e, "parentId": None if n == 0 else f"e{n}"} if parent_ids and e["type"] != "result" else e
              for n, e in enumerate(COPILOT_JSON_OUTPUT)]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    line = 7 if parent_ids else 1  # (its events named as events.jsonl's unless the result names the output)
    with pytest.raises(UserError, match=rf"run\.jsonl:{line}: {_JSON_OUTPUT_REFUSAL}"):
        detect_format(path)
    assert run(["audit", str(path), "--quiet"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


#: A legacy session file (``~/.copilot/history-session-state/<id>.json``): one object, the chat
#: messages as sent and a timeline, no token count.
LEGACY = {"sessionId": "hhh", "startTime": "2025-10-08T21:10:16.398Z",
          "chatMessages": [{"role": "user", "content": "please add a test"}, {"role": "assistant", "content": "sure"}],
          "timeline": [{"type": "user", "text": "please add a test", "timestamp": "2025-10-08T21:10:16.398Z"}]}


def test_a_legacy_copilot_cli_session_file_is_named_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Copilot CLI before its session-state/ folders kept a session as one JSON object with no token
    count: named in one line, exit 2 (int39: "unknown log format"); a folder walk skips it with that note."""
    path = tmp_path / "history-session-state" / "hhh.json"
    path.parent.mkdir()
    path.write_text(json.dumps(LEGACY, indent=2))
    with pytest.raises(UserError, match=r"hhh\.json:1: a legacy GitHub Copilot CLI session \(~/\.copilot/history-session-state/"
                       r"<id>\.json, before session-state/\): it keeps the chat messages and a timeline of tool calls, no token "
                       r"count at all: no request to audit; audit its OpenTelemetry file export instead"):
        detect_format(path)
    assert run(["audit", str(path), "--quiet"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    with pytest.raises(UserError, match="none is a log"):
        run_audit([path.parent])


def test_a_locked_store_names_copilot_cli_not_opencode(tmp_path: Path) -> None:
    # Found by a user's walk: a locked store was "the OpenCode database is locked".
    path = store(tmp_path / "session-store.db", json.loads(FIXTURE.read_text()))
    line = audit_locked(path)
    assert "the GitHub Copilot CLI database is locked" in line and "OpenCode" not in line


def test_two_agents_of_one_long_head_are_two_lanes(tmp_path: Path) -> None:
    """Two subagents whose ids share their first 80 characters are two lanes. Main cut the id
    at 80 characters, so both agents' calls were one lane."""
    head = "a-subagent-named-at-length-" * 4  # 108 characters
    base = json.loads(FIXTURE.read_text())[0]
    rows = [dict(base, id=n + 1, agent_id=f"{head}{suffix}", created_at=f"2026-10-04T20:15:2{n}.000Z")
            for n, suffix in enumerate(["one", "two", "one", "two"])]
    requests, _ = load_trace([store(tmp_path / "session-store.db", rows)])
    assert sorted({r.lane for r in requests}) == [f"a1/{head}one", f"a1/{head}two"]


def test_a_store_of_copilot_cli_1_0_102_reads_by_the_same_columns(tmp_path: Path) -> None:
    """Copilot CLI 1.0.102 (its native runtime creates the table) adds ``copilot_usage_model`` (the
    billing model), ``request_multiplier``, ``output_ttft_ms``, ``inter_token_latency_ms``,
    ``api_endpoint``, ``content_filter_triggered`` and a ``forge_trajectory_events`` table beside
    it; the columns read are unchanged, and so is the convention (its own billed-input sum is
    ``input_tokens`` less reads and writes)."""
    path = tmp_path / "session-store.db"
    db = sqlite3.connect(path)
    for statement in SCHEMA[:3]:
        db.execute(statement)
    db.execute(
        "CREATE TABLE assistant_usage_events (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, turn_index INTEGER, "
        "agent_id TEXT, parent_tool_call_id TEXT, model TEXT NOT NULL, copilot_usage_model TEXT, input_tokens INTEGER, "
        "output_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, reasoning_tokens INTEGER, "
        "total_nano_aiu INTEGER, request_multiplier REAL, duration_ms INTEGER, time_to_first_token_ms INTEGER, output_ttft_ms REAL, "
        "inter_token_latency_ms INTEGER, initiator TEXT, api_endpoint TEXT, reasoning_effort TEXT, finish_reason TEXT, "
        "content_filter_triggered INTEGER, token_details_json TEXT, created_at TEXT DEFAULT (datetime('now')))")
    db.execute("CREATE TABLE forge_trajectory_events (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, "
                "tool_call_id TEXT, turn_index INTEGER, event_type TEXT NOT NULL, command TEXT, output TEXT, exit_code INTEGER, "
                "event_key TEXT, event_value TEXT, created_at TEXT)")
    db.execute("INSERT INTO schema_version VALUES (8)")  # its number is not read
    rows = [("a1", 0, "claude-sonnet-4.6", "claude-sonnet-4.6", 12000, 200, 0, 11000, 1.0, "/v1/messages", "2026-11-02T10:00:05.000Z", 4000),
            ("a1", 0, "claude-sonnet-4.6", "claude-sonnet-4.6", 12600, 90, 11000, 400, 1.0, "/v1/messages", "2026-11-02T10:00:12.000Z", 3000)]
    for sid, turn, model, billed, inp, out, read, write, mult, endpoint, created, ms in rows:
        db.execute("INSERT INTO assistant_usage_events (session_id, turn_index, model, copilot_usage_model, input_tokens, "
                   "output_tokens, cache_read_tokens, cache_write_tokens, request_multiplier, api_endpoint, created_at, duration_ms) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", (sid, turn, model, billed, inp, out, read, write, mult, endpoint, created, ms))
    db.commit()
    db.close()
    assert detect_format(path) is FORMATS["copilot-cli"]
    requests, _ = load_trace([path])
    # By hand: uncached 12000 - 11000 = 1000 and 12600 - 11000 - 400 = 1200; read 11000; written 11400; output 290.
    assert totals(requests) == (2, 2200, 11000, 11400, 290)
    assert [(r.sent_ms, r.done_ms) for r in requests] == [(1793613601000, 1793613605000), (1793613609000, 1793613612000)]


def test_copilot_cli_1_0_102_one_hour_writes_and_host_reported_models(tmp_path: Path) -> None:
    """Copilot CLI 1.0.102 bills 1-hour cache writes apart: its row's ``token_details_json`` may hold
    a ``cache_write_1h`` entry beside ``cache_write`` (``cache_write_tokens`` is their sum). Those
    are read as 1 h writes. A call a remote host reported (its ``usageReported`` relay event)
    without a model is written as model ``unknown``; its billing model (``copilot_usage_model``)
    names it. Main read every write as 5 min and kept ``unknown``."""
    def details(inp: int, five: int, hour: int, out: int) -> str:
        kinds = [("input", inp), ("cache_write", five), ("output", out)] + ([("cache_write_1h", hour)] if hour else [])
        return json.dumps([{"batchSize": 1, "costPerBatch": 1, "tokenType": k, "tokenCount": n} for k, n in kinds])
    base = json.loads(FIXTURE.read_text())[0]
    rows = [dict(base, id=1, model="claude-sonnet-4.6", input_tokens=12000, cache_read_tokens=0, cache_write_tokens=11000,
                 output_tokens=200, created_at="2026-11-02T10:00:05.000Z", token_details_json=details(1000, 0, 11000, 200)),
            dict(base, id=2, model="claude-sonnet-4.6", input_tokens=12600, cache_read_tokens=11000, cache_write_tokens=400,
                 output_tokens=90, created_at="2026-11-02T10:00:12.000Z", token_details_json=details(1200, 150, 250, 90)),
            dict(base, id=3, model="unknown", copilot_usage_model="claude-sonnet-4.6", input_tokens=13000, cache_read_tokens=11400,
                 cache_write_tokens=0, output_tokens=50, created_at="2026-11-02T10:00:20.000Z", token_details_json=details(1600, 0, 0, 50))]
    path = _store_1_0_102(tmp_path / "session-store.db", rows)
    for source in (path, tmp_path / "rows.json"):
        if source.suffix == ".json":
            source.write_text(json.dumps(rows))
        requests, summary = load_trace([source])
        # By hand: uncached 12000 - 11000, 12600 - 11000 - 400, 13000 - 11400 = 3800; read 22400;
        # written 11000 + 400 (of it 11000 + 250 for 1 h); output 340.
        assert totals(requests) == (3, 3800, 22400, 11400, 340)
        assert [(r.usage.cache_write_5m, r.usage.cache_write_1h) for r in requests] == [(0, 11000), (150, 250), (0, 0)]
        assert [(r.provider, r.model) for r in requests] == [("anthropic", "claude-sonnet-4.6")] * 3
        notes = " ".join(summary[0].notes)
        assert "2 call(s) whose billed counts (token_details_json) name 1-hour cache writes" in notes
        assert "1 call(s) reported by a host with no model" in notes


def test_billed_writes_above_the_write_column_raise_the_writes_but_not_the_reading(tmp_path: Path) -> None:
    """Copilot CLI 1.0.102's own usage sums (its bundle's function ``ubn``) count a call's writes as
    the larger of ``cache_write_tokens`` and the billed 5 min plus 1 h writes. Row 1's column
    (10,000) is below its billed 1 h writes (11,000), which its input (12,000) holds: 11,000 written,
    1,000 uncached. Row 2 bills 1,500 1 h writes beside a 1,000 column, more than its input holds
    beside its reads (10,000 - 9,000): read as 1,000, so the file stays inclusive (main read it as
    additive from the raised writes: 55,500 prompt tokens in place of 30,000 for the last two rows)."""
    def hour(n: int) -> str:
        return json.dumps([{"tokenType": "input", "tokenCount": 0}, {"tokenType": "cache_write_1h", "tokenCount": n}])
    base = json.loads(FIXTURE.read_text())[0]
    rows = [dict(base, id=1, model="claude-sonnet-4.6", input_tokens=12000, cache_read_tokens=0, cache_write_tokens=10000,
                 output_tokens=10, created_at="2026-11-02T10:00:01.000Z", token_details_json=hour(11000)),
            dict(base, id=2, model="claude-sonnet-4.6", input_tokens=10000, cache_read_tokens=9000, cache_write_tokens=1000,
                 output_tokens=10, created_at="2026-11-02T10:00:05.000Z", token_details_json=hour(1500)),
            dict(base, id=3, model="claude-sonnet-4.6", input_tokens=20000, cache_read_tokens=15000, cache_write_tokens=0,
                 output_tokens=10, created_at="2026-11-02T10:00:15.000Z")]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows))
    requests, summary = load_trace([path])
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.cache_write_1h, r.usage.prompt) for r in requests] == [
        (1000, 0, 0, 11000, 12000), (0, 9000, 0, 1000, 10000), (5000, 15000, 0, 0, 20000)]
    notes = " ".join(summary[0].notes)
    assert "input_tokens includes cache reads and writes" in notes
    assert "(1 of them billed more writes than input_tokens holds beside the reads: read as what it holds)" in notes


def test_one_hour_writes_are_priced_at_the_one_hour_rate(tmp_path: Path) -> None:
    """A call's 10,000 written tokens, 1 h by its billed counts: priced at Anthropic's 1 h write
    rate (2x input), not the 5 min one (1.25x), which the same row without them gets."""
    base = json.loads(FIXTURE.read_text())[0]
    row = dict(base, id=1, model="claude-sonnet-4.6", input_tokens=10000, cache_read_tokens=0, cache_write_tokens=10000,
               output_tokens=0, token_details_json=None)
    hour = json.dumps([{"batchSize": 1, "costPerBatch": 1, "tokenType": "cache_write_1h", "tokenCount": 10000}])
    one_hour = run_audit([_store_1_0_102(tmp_path / "a.db", [dict(row, token_details_json=hour)])]).totals.cost_usd
    five_min = run_audit([_store_1_0_102(tmp_path / "b.db", [row])]).totals.cost_usd
    assert one_hour * 125 == five_min * 200 > 0


def _store_1_0_102(path: Path, rows: list[dict]) -> Path:
    """A store whose usage table has 1.0.102's billing columns (``copilot_usage_model``, ``token_details_json``)."""
    return store(path, rows, columns=("copilot_usage_model", "token_details_json"), session=False)


def test_a_store_copied_over_with_its_times_kept_is_looked_at_again(tmp_path: Path) -> None:
    # The refusal's look at the home's store is kept by the store's path, size and mtime: `cp -p`
    # of a store of another schema (same size, same mtime) was given the first store's words.
    import os
    import shutil
    import time

    from prefixbench.workloads.logs.formats import copilot_cli_refusal

    home = tmp_path / ".copilot"
    events = _events(home / "session-state" / "a1" / "events.jsonl")
    db = store(home / "session-store.db", [], version=2, usage_table=False)
    other = store(tmp_path / "other.db", [], version=4, usage_table=False)
    assert other.stat().st_size == db.stat().st_size
    os.utime(other, ns=(db.stat().st_atime_ns, db.stat().st_mtime_ns))
    assert "is of schema 2" in copilot_cli_refusal(events)
    time.sleep(0.05)  # (a file's change time moves by the kernel's tick)
    shutil.copy2(other, db)  # cp -p: the same file, its bytes and times replaced
    assert db.stat().st_mtime_ns == other.stat().st_mtime_ns
    assert "is of schema 4" in copilot_cli_refusal(events)

