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

    text = json.dumps(last, ensure_ascii=ascii_only).encode("utf-8")
    cut = data.draw(st.integers(1, len(text) - 1), label="cut")  # bytes: also inside a character
    body = "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in records).encode("utf-8") + text[:cut]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "live.jsonl"
        path.write_bytes(body)
        torn: list[int] = []
        got = [r.value for r in iter_records(path, torn=torn)]
    assert got == records and torn == [len(records) + 1]


def _examples(default: int) -> int:
    import os

    return int(os.environ.get("PREFIXBENCH_FUZZ_EXAMPLES") or default)


@settings(max_examples=_examples(300), deadline=None)
@given(st.lists(RECORD, min_size=0, max_size=3), RECORD, st.data(), st.booleans(), st.booleans())
def test_the_line_readers_find_the_same_torn_tail_as_the_record_reader(records, last, data, ascii_only, newline) -> None:
    """replay and check --trace read lines as bytes (:func:`iter_lines`), audit reads records
    (:func:`iter_records`): on any cut of the last record, with or without a newline after it,
    both take the same line as torn, or neither does (and then the line reaches its reader)."""
    import tempfile

    from prefixbench.simulator.errors import UserError
    from prefixbench.workloads.logs.jsonlines import iter_lines

    text = json.dumps(last, ensure_ascii=ascii_only).encode("utf-8")
    cut = data.draw(st.integers(1, len(text)), label="cut")  # bytes: also inside a character
    head = "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in records).encode("utf-8")
    body = head + text[:cut] + (b"\n" if newline else b"")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "live.jsonl"
        path.write_bytes(body)
        by_records: list[int] = []
        try:
            got = [r.value for r in iter_records(path, torn=by_records)]
        except UserError:
            got = None
        by_lines: list[int] = []
        lines = [number for number, _ in iter_lines(path, torn=by_lines)]
    assert by_lines == by_records
    if by_records:
        assert got == records and lines == list(range(1, len(records) + 1))
    else:
        assert lines == list(range(1, len(records) + 2))  # the cut line too, for its reader to refuse
