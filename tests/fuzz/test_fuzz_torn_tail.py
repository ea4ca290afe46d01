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
    both take the same line as torn, or neither does (and then the line reaches its reader); a
    cut inside a character that is not torn (the file's only line) is refused by both readers
    as the file ending inside a character, at that line."""
    import tempfile

    from prefixbench.simulator.errors import UserError
    from prefixbench.workloads.logs.jsonlines import iter_lines, read_json

    text = json.dumps(last, ensure_ascii=ascii_only).encode("utf-8")
    cut = data.draw(st.integers(1, len(text)), label="cut")  # bytes: also inside a character
    head = "".join(json.dumps(r, ensure_ascii=ascii_only) + "\n" for r in records).encode("utf-8")
    body = head + text[:cut] + (b"\n" if newline else b"")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "live.jsonl"
        path.write_bytes(body)
        by_records: list[int] = []
        error = ""
        try:
            got = [r.value for r in iter_records(path, torn=by_records)]
        except UserError as exc:
            got, error = None, str(exc)
        by_lines: list[int] = []
        lines = [(number, raw) for number, raw in iter_lines(path, torn=by_lines)]
        if lines and not by_lines:
            try:
                read_json(lines[-1][1], path, lines[-1][0])
            except UserError as exc:
                line_error = str(exc)
            else:
                line_error = ""
    assert by_lines == by_records
    if by_records:
        assert got == records and [n for n, _ in lines] == list(range(1, len(records) + 1))
    else:
        assert [n for n, _ in lines] == list(range(1, len(records) + 2))  # the cut line too, for its reader to refuse
        if not newline and cut < len(text) and text[cut] & 0xC0 == 0x80:  # the file ends inside a character
            ends = f"{path}:{len(records) + 1}: the file ends inside a UTF-8 character"
            assert error == ends and line_error == ends
