"""Fuzz the Zed threads reader (workloads/logs/formats/zed.py): a thread's JSON mutated or edited,
read alone or as a row of a threads database (zstd-compressed or plain, with a data_type of any
kind), ends in exit 0 or one clean line with exit 2, never a traceback or a hang, read as
detected or under an explicit ``--input``."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import zstandard
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, write


def _usage(inp: int, out: int, write: int = 0, read: int = 0) -> dict:
    return {"input_tokens": inp, "output_tokens": out, "cache_creation_input_tokens": write, "cache_read_input_tokens": read}


def _message(mid: int, role: str, text: str, **more: object) -> dict:
    return {"id": mid, "role": role, "segments": [{"type": "text", "text": text}], "tool_uses": [], "tool_results": [], **more}


#: One thread of each version Zed wrote, small.
SEEDS: list[dict] = [
    {"version": "0.2.0", "summary": "s", "updated_at": "2025-07-01T00:00:00Z",
     "messages": [_message(0, "user", "go"),
                  _message(1, "assistant", "", tool_uses=[{"id": "t1", "name": "read_file", "input": {"path": "a"}}],
                           tool_results=[{"tool_use_id": "t1", "is_error": False, "content": {"Text": "x"}, "output": None}]),
                  _message(2, "assistant", "done")],
     "cumulative_token_usage": _usage(8, 30, 4000, 4000),
     "request_token_usage": [_usage(0, 0), _usage(3, 20, 4000), _usage(5, 10, 0, 4000)],
     "model": {"provider": "zed.dev", "model": "claude-sonnet-4"}},
    {"version": "0.1.0", "summary": "s", "updated_at": "2025-05-01T00:00:00Z",
     "messages": [_message(0, "user", "go"), _message(1, "assistant", "a"),
                  _message(2, "user", "", tool_results=[{"tool_use_id": "t", "is_error": False, "content": {"Text": ""}, "output": None}]),
                  _message(3, "assistant", "b")],
     "request_token_usage": [_usage(0, 0), _usage(4000, 9), _usage(4000, 9), _usage(4100, 9, 0, 4096)],
     "model": {"provider": "google", "model": "gemini-2.5-flash"}},
    {"version": "0.3.0", "title": "t", "updated_at": "2025-10-01T00:00:00Z",
     "messages": [{"User": {"id": "u", "content": [{"Text": "hi"}]}}],
     "cumulative_token_usage": _usage(1, 1), "request_token_usage": {"u": _usage(1, 1)}, "model": {"provider": "openai", "model": "gpt-5"}},
]


def _db(path: Path, rows: list[tuple[str, object, object]]) -> Path:
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    try:
        db.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL,"
                   " data_type TEXT NOT NULL, data BLOB NOT NULL)")
        for n, (tid, data_type, data) in enumerate(rows):
            db.execute("INSERT INTO threads VALUES (?, 's', ?, ?, ?)", (tid, f"2025-0{1 + n % 9}-01", data_type, data))
        db.commit()
    finally:
        db.close()
    return path


def test_mutated_zed_threads_and_databases_end_cleanly(importer_examples):
    tally = Tally("audit", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-zed-"))
    docs = st.one_of(
        st.sampled_from(SEEDS).flatmap(lambda doc: mutated(json.dumps(doc).encode())),
        edited(st.sampled_from(SEEDS), max_edits=3).map(lambda doc: json.dumps(doc).encode()),
    )

    @fuzz_settings(importer_examples)
    @given(data=st.data(), in_db=st.booleans(), explicit=st.booleans())
    def case(data: st.DataObject, in_db: bool, explicit: bool) -> None:
        if in_db:
            rows = []
            for n in range(data.draw(st.integers(1, 3))):
                raw = data.draw(docs)
                data_type = data.draw(st.sampled_from(("zstd", "zstd", "zstd", "json", "json", "lz4")))
                blob = zstandard.ZstdCompressor(level=3).compress(raw) if data_type == "zstd" else raw
                if data.draw(st.booleans()) and data_type == "zstd":
                    blob = data.draw(mutated(blob))  # damaged compressed bytes
                rows.append((f"t{n}", data_type, blob))
            path = _db(folder / "threads.db", rows)
        else:
            path = write(folder / "thread.json", data.draw(docs))
        argv = ["audit", str(path), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", "zed"]
        tally.check(argv)

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0
