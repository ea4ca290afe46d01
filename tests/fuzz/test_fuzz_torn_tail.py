"""A JSON-lines log cut anywhere inside its last record (an agent still writing it) reads as the
records before the cut, the cut line reported; never an error, never a record of it."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.workloads.logs.records import iter_records
from tests.fuzz.harness import RECORD



@settings(max_examples=300, deadline=None)
@given(st.lists(RECORD, min_size=1, max_size=4), RECORD, st.data(), st.booleans())
def test_a_cut_last_record_is_the_torn_tail(records, last, data, ascii_only) -> None:
    import tempfile

    text = json.dumps(last, ensure_ascii=ascii_only)
    cut = data.draw(st.integers(1, len(text) - 1), label="cut")
    body = "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in records) + text[:cut]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "live.jsonl"
        path.write_bytes(body.encode("utf-8"))
        torn: list[int] = []
        got = [r.value for r in iter_records(path, torn=torn)]
    assert got == records and torn == [len(records) + 1]
