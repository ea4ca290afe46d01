"""OpenCode 2.x's database (workloads/logs/formats/opencode_db.py): sessions in ``session_v2``,
messages in ``session_message`` (a ``type`` column, the rest of the message in ``data``), the
1.x tables left frozen beside them with the messages the upgrade copied over.

Written here from OpenCode's ``SessionMessage`` schema (``packages/core/src/session/message.ts``:
an assistant message's ``model {id, providerID}``, ``content``, ``cost`` and ``tokens {input,
output, reasoning, cache {read, write}}``; times in epoch milliseconds) and the table layout
reported for OpenCode 2.0.x databases.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.formats.opencode_db import is_opencode_db
from tests.fuzz.harness import NASTY_TOKENS, Tally, edited, fuzz_settings, json_values, to_json_line

V1_TABLES = """
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL,
    directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL,
    time_updated integer NOT NULL, data text NOT NULL);
"""
SESSION_V2 = """
CREATE TABLE session_v2 (id text PRIMARY KEY, project_id text NOT NULL, workspace_id text, parent_id text, fork_session_id text,
    slug text NOT NULL, directory text NOT NULL, path text, title text, version text NOT NULL, model text,
    cost real DEFAULT 0 NOT NULL, tokens_input integer DEFAULT 0 NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
"""
SESSION_MESSAGE = """
CREATE TABLE session_message (id text PRIMARY KEY, session_id text NOT NULL, type text NOT NULL, seq integer NOT NULL,
    time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
"""
V2_TABLES = SESSION_V2 + SESSION_MESSAGE
T0 = 1_790_000_000_000
SONNET = {"id": "claude-sonnet-4-5", "providerID": "anthropic"}
HAIKU = {"id": "claude-haiku-4-5", "providerID": "anthropic"}


def tokens(uncached: int, output: int, reasoning: int, read: int, write: int) -> dict:
    return {"input": uncached, "output": output, "reasoning": reasoning, "cache": {"read": read, "write": write}}


def assistant(at: int, model: dict, used: dict | None, **extra: object) -> dict:
    data = {"agent": "build", "model": model, "time": {"created": T0 + at, "completed": T0 + at + 900},
            "content": [{"type": "reasoning", "id": f"r{at}", "text": "think"},
                        {"type": "tool", "id": f"call{at}", "name": "bash", "state": {"status": "completed", "input": {}, "content": [], "structured": {}},
                         "time": {"created": T0 + at, "ran": T0 + at + 100, "completed": T0 + at + 400}},
                        {"type": "text", "id": f"t{at}", "text": "ok"}], **extra}
    if used is not None:
        data |= {"tokens": used, "cost": 0.01, "finish": "tool-calls"}
    return data


#: session id -> (parent, [(message id, type, data)]) in seq order.
V2_ROWS = {
    "ses_0a": (None, [
        ("msg_01", "user", {"text": "add a retry to the fetcher", "files": [], "agents": [], "references": [], "time": {"created": T0 + 1000}}),
        ("msg_02", "assistant", assistant(2000, SONNET, tokens(12, 300, 40, 0, 9000))),
        ("msg_03", "assistant", assistant(6000, SONNET, tokens(20, 150, 0, 9000, 800))),
        # A completed compaction carries its own request's usage (the summary call).
        ("msg_04", "compaction", {"status": "completed", "reason": "auto", "summary": "Added a retry loop.", "recent": "",
                                  "model": SONNET, "tokens": tokens(400, 120, 0, 8000, 0), "cost": 0.01, "time": {"created": T0 + 7000}}),
        ("msg_05", "assistant", assistant(9000, SONNET, tokens(3000, 90, 0, 0, 0))),
        ("msg_06", "assistant", assistant(12000, SONNET, None, error={"type": "api", "message": "overloaded", "isRetryable": True})),
        ("msg_07", "model-switched", {"model": HAIKU, "time": {"created": T0 + 13000}}),
    ]),
    "ses_0b": ("ses_0a", [
        ("msg_11", "user", {"text": "find the fetcher", "files": [], "agents": [], "references": [], "time": {"created": T0 + 3000}}),
        ("msg_12", "assistant", assistant(3500, HAIKU, tokens(5, 60, 0, 4000, 200))),
    ]),
    # A 1.x session the upgrade copied over (ids kept); its 1.x rows stay in the frozen tables.
    "ses_00": (None, [("msg_00", "assistant", assistant(-5000, SONNET, tokens(7, 30, 0, 1000, 0)))]),
}


def write_v2(path: Path, *, with_v1: bool = True) -> Path:
    db = sqlite3.connect(path)
    try:
        db.executescript(V2_TABLES + (V1_TABLES if with_v1 else ""))
        for sid, (parent, rows) in V2_ROWS.items():
            db.execute("INSERT INTO session_v2 (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)"
                       " VALUES (?, 'prj', ?, 'calm-fox', '/w', NULL, '2.0.12', ?, ?)", (sid, parent, T0, T0))
            for seq, (mid, kind, data) in enumerate(rows):
                db.execute("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (mid, sid, kind, seq, data["time"]["created"], data["time"]["created"], json.dumps(data)))
        if with_v1:
            info = {"role": "assistant", "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "time": {"created": T0 - 5000},
                    "tokens": tokens(7, 30, 0, 1000, 0)}
            db.execute("INSERT INTO session VALUES ('ses_00', 'prj', NULL, 'old', '/w', 'old', '1.17.0', ?, ?)", (T0 - 5000, T0))
            db.execute("INSERT INTO message VALUES ('msg_00', 'ses_00', ?, ?, ?)", (T0 - 5000, T0, json.dumps(info)))
            step = {"type": "step-finish", "tokens": tokens(7, 30, 0, 1000, 0), "cost": 0.01}
            db.execute("INSERT INTO part VALUES ('prt_00', 'msg_00', 'ses_00', ?, ?, ?)", (T0 - 5000, T0, json.dumps(step)))
        db.commit()
    finally:
        db.close()
    return path


@pytest.mark.parametrize("with_v1", [True, False])
def test_v2_database_totals_equal_the_hand_sums(tmp_path: Path, with_v1: bool) -> None:
    path = write_v2(tmp_path / "opencode.db", with_v1=with_v1)
    assert is_opencode_db(path)
    t = run_audit([path]).totals
    # ses_0a: three calls (the errored one has no usage) and the compaction's; ses_0b: one; ses_00
    # once, from session_message only.
    assert t.requests == 6
    assert t.cache_read == 0 + 9000 + 8000 + 0 + 4000 + 1000 == 22000
    assert t.cache_write == 9000 + 800 + 0 + 0 + 200 + 0 == 10000
    assert t.input == 12 + 20 + 400 + 3000 + 5 + 7 == 3444
    assert t.output == (300 + 40) + 150 + 120 + 90 + 60 + 30 == 790


def test_v2_messages_read_as_their_1x_shape(tmp_path: Path) -> None:
    path = write_v2(tmp_path / "opencode.db")
    requests, summary = import_file(path, detect_format(path), ImportContext())
    by_lane = [(r.lane, r.lane_kind, r.model, r.sent_ms, r.usage) for r in requests]
    assert by_lane == [
        ("ses_00", "main", "claude-sonnet-4-5", T0 - 5000, Usage(cache_read=1000, uncached=7, output=30)),
        ("ses_0a", "main", "claude-sonnet-4-5", T0 + 2000, Usage(cache_write_5m=9000, uncached=12, output=340)),
        ("ses_0a", "main", "claude-sonnet-4-5", T0 + 6000, Usage(cache_read=9000, cache_write_5m=800, uncached=20, output=150)),
        ("ses_0a/compaction", "compaction", "claude-sonnet-4-5", T0 + 7000, Usage(cache_read=8000, uncached=400, output=120)),
        ("ses_0a", "main", "claude-sonnet-4-5", T0 + 9000, Usage(uncached=3000, output=90)),
        ("ses_0b", "subagent", "claude-haiku-4-5", T0 + 3500, Usage(cache_read=4000, cache_write_5m=200, uncached=5, output=60)),
    ]
    assert requests[3].compaction_call
    after = requests[4]
    assert any(kind == "compaction" for kind, _ in after.events) and after.prefix.parent is None
    assert any("failed call (api: overloaded)" in reason for _, reason in summary.skipped)


def test_a_1x_database_with_empty_2x_tables_is_read_from_the_1x_ones(tmp_path: Path) -> None:
    # The 2.x tables can be migrated in before the app writes to them: empty, they are no history.
    path = tmp_path / "opencode.db"
    db = sqlite3.connect(path)
    db.executescript(V2_TABLES + V1_TABLES)
    db.execute("INSERT INTO session VALUES ('ses_00', 'prj', NULL, 'old', '/w', 'old', '1.17.0', ?, ?)", (T0, T0))
    db.execute("INSERT INTO message VALUES ('msg_00', 'ses_00', ?, ?, ?)",
               (T0, T0, json.dumps({"role": "assistant", "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "time": {"created": T0}})))
    db.execute("INSERT INTO part VALUES ('prt_00', 'msg_00', 'ses_00', ?, ?, ?)",
               (T0, T0, json.dumps({"type": "step-finish", "tokens": tokens(7, 30, 0, 1000, 0)})))
    db.commit()
    db.close()
    requests = import_file(path, FORMATS["opencode"], ImportContext())[0]
    assert [r.usage for r in requests] == [Usage(cache_read=1000, uncached=7, output=30)]


def test_a_bad_v2_row_is_one_line(tmp_path: Path) -> None:
    path = write_v2(tmp_path / "opencode.db", with_v1=False)
    db = sqlite3.connect(path)
    db.execute("UPDATE session_message SET data = '[1]' WHERE id = 'msg_03'")
    db.commit()
    db.close()
    with pytest.raises(UserError, match="session_message 'msg_03': data is not a JSON object"):
        import_file(path, FORMATS["opencode"], ImportContext())


def test_garbage_in_v2_data_ends_cleanly(tmp_path: Path) -> None:
    """``session_message.data`` edited, foreign or broken (and ``type`` changed): one line and exit
    2, or a reading; never a traceback."""
    pristine = write_v2(tmp_path / "pristine.db")
    rows = [(mid, kind, data) for _, (_, items) in V2_ROWS.items() for mid, kind, data in items]
    tally = Tally("opencode 2.x data", bound_s=20)
    garbage = st.one_of(
        st.sampled_from(rows).flatmap(lambda row: edited(st.just(row[2]), max_edits=3).map(to_json_line)),
        json_values.map(to_json_line),
        st.sampled_from(NASTY_TOKENS),
    )
    kinds = st.sampled_from(["user", "assistant", "compaction", "synthetic", "idle", ""])

    @fuzz_settings(25)
    @given(edits=st.lists(st.tuples(st.sampled_from(rows), garbage, kinds), min_size=1, max_size=3))
    def case(edits: list) -> None:
        path = tmp_path / "opencode.db"
        path.write_bytes(pristine.read_bytes())
        con = sqlite3.connect(path)
        for (mid, _, _), raw, kind in edits:
            value = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            con.execute("UPDATE session_message SET data = ?, type = ? WHERE id = ?", (value, kind, mid))
        con.commit()
        con.close()
        tally.check(["audit", str(path), "--quiet"])

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0


def test_a_late_1x_database_dual_writing_session_message_is_read_from_the_1x_tables(tmp_path: Path) -> None:
    # Late 1.x versions write session_message beside message/part (no session_v2, no summary calls).
    path = tmp_path / "opencode.db"
    db = sqlite3.connect(path)
    db.executescript(V1_TABLES + SESSION_MESSAGE)
    db.execute("INSERT INTO session VALUES ('ses_00', 'prj', NULL, 'old', '/w', 'old', '1.17.0', ?, ?)", (T0, T0))
    info = {"role": "assistant", "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "time": {"created": T0}}
    db.execute("INSERT INTO message VALUES ('msg_00', 'ses_00', ?, ?, ?)", (T0, T0, json.dumps(info)))
    for n, used in enumerate([tokens(7, 30, 0, 1000, 0), tokens(9, 20, 0, 1037, 0)]):
        db.execute("INSERT INTO part VALUES (?, 'msg_00', 'ses_00', ?, ?, ?)",
                   (f"prt_0{n}", T0, T0, json.dumps({"type": "step-finish", "tokens": used})))
    db.execute("INSERT INTO session_message VALUES ('evt_1', 'ses_00', 'assistant', 0, ?, ?, ?)",
               (T0, T0, json.dumps(assistant(0, SONNET, tokens(9, 20, 0, 1037, 0)))))
    db.commit()
    db.close()
    assert "session_v2" not in {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master")}
    requests = import_file(path, FORMATS["opencode"], ImportContext())[0]
    assert [r.usage for r in requests] == [Usage(cache_read=1000, uncached=7, output=30), Usage(cache_read=1037, uncached=9, output=20)]


def test_v2_export_reads_as_the_database_does(tmp_path: Path) -> None:
    # OpenCode 2.x's `opencode session export`: {info, messages} with the messages as stored ({id, type, ...}).
    parent, rows = V2_ROWS["ses_0a"]
    info = {"id": "ses_0a", "projectID": "prj", "title": "retry", "cost": 0.05, "location": {"directory": "/w"},
            "tokens": tokens(0, 0, 0, 0, 0), "time": {"created": T0, "updated": T0 + 13000}}
    export = {"info": info, "messages": [{"id": mid, "type": kind, **data} for mid, kind, data in rows]}
    path = tmp_path / "session.json"
    path.write_text(json.dumps(export, indent=2))
    assert detect_format(path) is FORMATS["opencode"]
    t = run_audit([path]).totals
    assert (t.requests, t.cache_read, t.cache_write, t.input, t.output) == (
        4, 0 + 9000 + 8000 + 0, 9000 + 800, 12 + 20 + 400 + 3000, (300 + 40) + 150 + 120 + 90)


def test_v2_export_from_the_http_api_is_read_under_its_data_envelope(tmp_path: Path) -> None:
    # OpenCode 2.x's server answers GET /api/experimental/session/{id}/export with the export under
    # "data" ({"data": {info, messages}}, the body its import endpoint takes back); main refused
    # such a file as an unknown log format.
    info = {"id": "ses_0c", "projectID": "prj", "title": "review", "agent": "build", "outcome": "interrupted",
            "location": {"directory": "/w"}, "tokens": tokens(0, 0, 0, 0, 0), "time": {"created": T0, "updated": T0 + 9000}}
    messages = [
        {"id": "msg_21", "type": "user", "text": "check the layout", "files": [], "agents": [], "time": {"created": T0 + 100}},
        {"id": "msg_22", "type": "assistant", **assistant(200, HAIKU, tokens(2862, 67, 50, 3456, 0), rawFinish="tool_calls")},
        {"id": "msg_23", "type": "synthetic", "text": "a background shell finished", "time": {"created": T0 + 1500}},
        {"id": "msg_24", "type": "assistant", **assistant(2000, HAIKU, tokens(140, 30, 12, 6272, 0))},
        {"id": "msg_25", "type": "idle", "time": {"created": T0 + 4000}},
    ]
    path = tmp_path / "session-export.json"
    path.write_text(json.dumps({"data": {"info": info, "messages": messages}}, indent=1))
    assert detect_format(path) is FORMATS["opencode"]
    result = run_audit([path])
    t = result.totals
    assert (t.requests, t.cache_read, t.cache_write, t.input, t.output) == (2, 3456 + 6272, 0, 2862 + 140, (67 + 50) + (30 + 12))
    assert [r.model for r in result.rows] == ["claude-haiku-4-5"] * 2
    # The bare export of the same session reads the same.
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"info": info, "messages": messages}))
    assert run_audit([bare]).totals == t


def test_a_data_envelope_without_an_export_is_no_opencode_log(tmp_path: Path) -> None:
    path = tmp_path / "page.json"
    path.write_text(json.dumps({"data": {"info": {"id": "x"}, "items": []}}))
    with pytest.raises(UserError, match="unknown log format"):
        detect_format(path)


#: ``session_message`` as OpenCode 1.18 and Kilo 7.7 create it beside the 1.x tables: ``seq`` added
#: later (absent in the table's first version), nullable in Kilo's (its legacy-writer migration).
SIDE_TABLES = {
    "seq": SESSION_MESSAGE,
    "nullable-seq": SESSION_MESSAGE.replace("seq integer NOT NULL", "seq integer"),
    "no-seq": SESSION_MESSAGE.replace(" seq integer NOT NULL,", ""),
}


def write_side_only(path: Path, layout: str) -> Path:
    """A 1.x database (no session_v2) holding one session written the 1.x way (its rows mirrored
    into session_message, as 1.18 does) and one written only to session_message."""
    db = sqlite3.connect(path)
    db.executescript(V1_TABLES + SIDE_TABLES[layout])
    if layout == "nullable-seq":  # Kilo 7.7's own columns and tables beside OpenCode's
        db.executescript("ALTER TABLE session ADD current_state text; ALTER TABLE session ADD recent_progress text;"
                         "CREATE TABLE kilo_board (id text PRIMARY KEY, root_session_id text NOT NULL);")
    version = "7.7.9" if layout == "nullable-seq" else "1.18.33"
    for sid, at in (("ses_00", T0), ("ses_01", T0 + 50_000)):
        db.execute("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)"
                   " VALUES (?, 'prj', NULL, 'calm', '/w', 'a task', ?, ?, ?)", (sid, version, at, at))
    info = {"role": "assistant", "modelID": "claude-sonnet-4-5", "providerID": "anthropic", "time": {"created": T0}}
    db.execute("INSERT INTO message VALUES ('msg_00', 'ses_00', ?, ?, ?)", (T0, T0, json.dumps(info)))
    db.execute("INSERT INTO part VALUES ('prt_00', 'msg_00', 'ses_00', ?, ?, ?)",
               (T0, T0, json.dumps({"type": "step-finish", "tokens": tokens(7, 30, 0, 1000, 0)})))
    rows = [("evt_0", "ses_00", "assistant", assistant(0, SONNET, tokens(7, 30, 0, 1000, 0))),
            ("evt_1", "ses_01", "user", {"text": "go", "files": [], "agents": [], "references": [], "time": {"created": T0 + 60_000}}),
            ("evt_2", "ses_01", "assistant", assistant(61_000, SONNET, tokens(15, 200, 10, 0, 6000))),
            ("evt_3", "ses_01", "assistant", assistant(65_000, SONNET, tokens(4, 80, 0, 6000, 300)))]
    for seq, (mid, sid, kind, data) in enumerate(rows):
        at = data["time"]["created"]
        if layout == "no-seq":
            db.execute("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?)", (mid, sid, kind, at, at, json.dumps(data)))
        else:
            db.execute("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (mid, sid, kind, None if layout == "nullable-seq" else seq, at, at, json.dumps(data)))
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize("layout", sorted(SIDE_TABLES))
def test_a_1x_session_written_only_to_session_message_is_read_from_it(tmp_path: Path, layout: str) -> None:
    # ses_00 is read once, from its 1.x step (its session_message mirror is not counted again);
    # ses_01, with no 1.x message, was no call before (its two calls invisible).
    path = write_side_only(tmp_path / ("kilo.db" if layout == "nullable-seq" else "opencode.db"), layout)
    assert is_opencode_db(path)
    requests = import_file(path, detect_format(path), ImportContext())[0]
    assert [(r.lane, r.sent_ms, r.usage) for r in requests] == [
        ("ses_00", T0, Usage(cache_read=1000, uncached=7, output=30)),
        ("ses_01", T0 + 61_000, Usage(cache_write_5m=6000, uncached=15, output=210)),
        ("ses_01", T0 + 65_000, Usage(cache_read=6000, cache_write_5m=300, uncached=4, output=80)),
    ]
    t = run_audit([path]).totals
    assert (t.requests, t.input, t.cache_read, t.cache_write, t.output) == (
        3, 7 + 15 + 4, 1000 + 0 + 6000, 0 + 6000 + 300, 30 + (200 + 10) + 80)


def test_garbage_in_a_1x_databases_session_message_ends_cleanly(tmp_path: Path) -> None:
    """The rows of a session written only to a 1.x database's ``session_message``, edited or
    broken (and ``type`` changed): one line and exit 2, or a reading; never a traceback."""
    pristine = write_side_only(tmp_path / "pristine.db", "nullable-seq")
    con = sqlite3.connect(pristine)
    rows = [(mid, json.loads(data)) for mid, data in con.execute("SELECT id, data FROM session_message WHERE session_id = 'ses_01'")]
    con.close()
    tally = Tally("opencode 1.x session_message", bound_s=20)
    garbage = st.one_of(
        st.sampled_from(rows).flatmap(lambda row: edited(st.just(row[1]), max_edits=3).map(to_json_line)),
        json_values.map(to_json_line),
        st.sampled_from(NASTY_TOKENS),
    )
    kinds = st.sampled_from(["user", "assistant", "compaction", "shell", ""])

    @fuzz_settings(15)
    @given(edits=st.lists(st.tuples(st.sampled_from(rows), garbage, kinds), min_size=1, max_size=3))
    def case(edits: list) -> None:
        path = tmp_path / "opencode.db"
        path.write_bytes(pristine.read_bytes())
        con = sqlite3.connect(path)
        for (mid, _), raw, kind in edits:
            value = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            con.execute("UPDATE session_message SET data = ?, type = ? WHERE id = ?", (value, kind, mid))
        con.commit()
        con.close()
        tally.check(["audit", str(path), "--quiet"])

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0


@pytest.mark.parametrize("table", ["session_v2", "session"])
def test_a_renamed_fork_is_known_by_its_fork_session_id(tmp_path: Path, table: str) -> None:
    # A fork copies its source's rows under new ids (``<event>_<seq>``: no id of a time) keeping
    # their times; renamed, its title no longer says "(fork #n)": fork_session_id does.
    path = tmp_path / "opencode.db"
    db = sqlite3.connect(path)
    if table == "session_v2":
        db.executescript(V2_TABLES)
    else:  # the mainline's 1.x session table, with fork_session_id, and session_message beside it
        db.executescript(V1_TABLES + SESSION_MESSAGE + "ALTER TABLE session ADD fork_session_id text;")
    source = [("msg_01", "user", {"text": "go", "files": [], "agents": [], "references": [], "time": {"created": T0 + 1000}}),
              ("msg_02", "assistant", assistant(2000, SONNET, tokens(12, 300, 40, 0, 9000)))]
    copies = [(f"evt_f_{seq}", kind, data) for seq, (_, kind, data) in enumerate(source)]
    own = [("evt_g_2", "assistant", assistant(30_000, SONNET, tokens(25, 70, 0, 9000, 500)))]
    for sid, forked, title, created, rows in (("ses_0a", None, "fix it", T0, source),
                                              ("ses_0f", "ses_0a", "renamed", T0 + 20_000, copies + own)):
        db.execute(f"INSERT INTO {table} (id, project_id, parent_id, fork_session_id, slug, directory, title, version,"
                   " time_created, time_updated) VALUES (?, 'prj', NULL, ?, 'calm', '/w', ?, '1.18.33', ?, ?)",
                   (sid, forked, title, created, created))
        for seq, (mid, kind, data) in enumerate(rows):
            at = data["time"]["created"]
            db.execute("INSERT INTO session_message VALUES (?, ?, ?, ?, ?, ?, ?)", (mid, sid, kind, seq, at, at, json.dumps(data)))
    db.commit()
    db.close()
    requests = import_file(path, detect_format(path), ImportContext())[0]
    assert [(r.lane, r.sent_ms, r.usage) for r in requests] == [
        ("ses_0a", T0 + 2000, Usage(cache_write_5m=9000, uncached=12, output=340)),
        ("ses_0f", T0 + 30_000, Usage(cache_read=9000, cache_write_5m=500, uncached=25, output=70)),
    ]
    assert any(kind == "fork" for kind, _ in requests[1].events)
