"""Fuzz the refusal of stores that keep only totals (workloads/logs/formats/totals_only.py): a
Goose session file edited or mutated (and Qoder CLI lines), an Augment session edited, and a Goose sessions.db, a Cursor CLI store.db or a Warp
warp.sqlite whose bytes are damaged, end in exit 0 or one clean line with exit 2, never a traceback or a hang."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, to_json_line, write
from tests.unit.logs.test_totals_only import AUGMENT_FILE, GOOSE_FILE, QODER_FILE, GOOSE_SCHEMA, _cursor_cli_store, _warp_db


def _goose_db(folder: Path) -> bytes:
    path = folder / "seed.db"
    db = sqlite3.connect(path)
    db.executescript(GOOSE_SCHEMA)
    db.commit()
    db.close()
    return path.read_bytes()


def test_mutated_goose_sessions_end_cleanly(importer_examples):
    tally = Tally("audit", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-goose-"))
    seed_db = _goose_db(folder)
    seed_file = b"".join(to_json_line(r) + b"\n" for r in GOOSE_FILE)
    seed_cursor = _cursor_cli_store(folder / "seed" / "store.db").read_bytes()
    seed_warp = _warp_db(folder / "seed" / "warp.sqlite").read_bytes()

    @fuzz_settings(importer_examples)
    @given(data=st.data(), kind=st.sampled_from(("file", "edited", "db", "cursor", "warp", "augment")), explicit=st.booleans())
    def case(data: st.DataObject, kind: str, explicit: bool) -> None:
        if kind == "file":
            path = write(folder / "s.jsonl", data.draw(mutated(seed_file)))
        elif kind == "edited":
            docs = data.draw(st.lists(edited(st.sampled_from(GOOSE_FILE + QODER_FILE), max_edits=3), min_size=1, max_size=3))
            path = write(folder / "s.jsonl", b"".join(to_json_line(d) + b"\n" for d in docs))
        elif kind == "augment":
            path = write(folder / "a.json", json.dumps(data.draw(edited(st.just(AUGMENT_FILE), max_edits=3))).encode())
        elif kind == "warp":
            path = write(folder / "warp.sqlite", data.draw(mutated(seed_warp)))
        elif kind == "cursor":
            path = write(folder / "store.db", data.draw(mutated(seed_cursor)))
        else:
            path = write(folder / "sessions.db", data.draw(mutated(seed_db)))
        argv = ["audit", str(path), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", "zed"]
        tally.check(argv)

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0
