"""Fuzz GitHub Copilot CLI session stores (workloads/logs/formats/copilot_cli.py): a
``session-store.db`` whose ``assistant_usage_events`` rows hold any values (SQLite keeps a column's
values of any type), or of an earlier schema without that table, audits to exit 0 or one clean
line with exit 2; never a traceback or a hang."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings
from tests.fuzz.test_fuzz_audit import SEEDS
from tests.unit.logs.test_copilot_cli import COPILOT_JSON_OUTPUT, LEGACY, SCHEMA

#: The usage table's columns (the store's own, as tests/unit/logs/test_copilot_cli.py makes it).
COLUMNS = ("id", "session_id", "turn_index", "model", "input_tokens", "output_tokens", "cache_read_tokens",
           "cache_write_tokens", "duration_ms", "agent_id", "parent_tool_call_id", "finish_reason", "created_at")


def _cell(value: object) -> object:
    """A value SQLite can hold: a JSON object or array as its text, an out-of-range integer as text,
    text that is no Unicode as bytes."""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return str(value)
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: kept as the bytes a store could hold (a BLOB)
            return value.encode("utf-8", "surrogatepass")
    return value


def test_generated_session_stores_end_cleanly(importer_examples):
    tally = Tally("audit", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-copilot-store-"))

    @fuzz_settings(importer_examples)
    @given(rows=st.lists(edited(st.sampled_from(SEEDS["copilot-cli"]), max_edits=3), max_size=5),
           usage_table=st.booleans(), explicit=st.booleans())
    def case(rows: list[object], usage_table: bool, explicit: bool) -> None:
        path = folder / "session-store.db"
        path.unlink(missing_ok=True)
        db = sqlite3.connect(path)
        for statement in SCHEMA if usage_table else SCHEMA[:3]:
            db.execute(statement.replace(" NOT NULL", ""))  # any value, NULL too
        db.execute("INSERT INTO schema_version VALUES (8)")
        for number, row in enumerate(rows, 1):
            if not usage_table or not isinstance(row, dict):
                continue
            cells = [_cell(row.get(c)) for c in COLUMNS]
            cells[0] = number  # the autoincrement id stays one
            db.execute(f"INSERT INTO assistant_usage_events ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})", cells)
        db.commit()
        db.close()
        argv = ["audit", str(path), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", "copilot-cli"]
        tally.check(argv)

    case()
    tally.report()


def test_generated_copilot_json_outputs_and_legacy_sessions_end_cleanly(importer_examples):
    """``copilot -p --output-format json`` output and legacy ``history-session-state/<id>.json``
    sessions (tests/unit/logs/test_copilot_cli.py's), edited anywhere: exit 0 or one clean line."""
    tally = Tally("audit", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-copilot-json-"))

    @fuzz_settings(importer_examples)
    @given(events=st.lists(edited(st.sampled_from(COPILOT_JSON_OUTPUT), max_edits=3), max_size=8),
           legacy=edited(st.just(LEGACY), max_edits=3), which=st.booleans())
    def case(events: list[object], legacy: object, which: bool) -> None:
        path = folder / ("run.jsonl" if which else "hhh.json")
        path.write_text("".join(json.dumps(e) + "\n" for e in events) if which else json.dumps(legacy, indent=2))
        tally.check(["audit", str(path), "--quiet", "--format", "json"])

    case()
    tally.report()
