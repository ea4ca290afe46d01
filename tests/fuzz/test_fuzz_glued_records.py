"""A JSON-lines log where some records run together on one line (``{...}{...}``, a newline lost
between them) reads as the same records, each on the line it is on; a line holding anything
else after a whole record stays an error naming that line."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.records import iter_records
from tests.fuzz.harness import RECORD



def _read(body: str) -> list[tuple[int, object]]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        path.write_bytes(body.encode("utf-8"))
        return [(r.line, r.value) for r in iter_records(path)]


@settings(max_examples=300, deadline=None)
@given(st.lists(RECORD, min_size=2, max_size=6), st.data(), st.booleans(), st.sampled_from(["", " ", "\t"]))
def test_records_run_together_read_as_the_same_records(records, data, ascii_only, gap) -> None:
    # joined[k]: record k+1 follows record k on the same line.
    joined = data.draw(st.lists(st.booleans(), min_size=len(records) - 1, max_size=len(records) - 1), label="joined")
    body, line, expected = "", 1, []
    for k, record in enumerate(records):
        expected.append((line, record))
        body += json.dumps(record, ensure_ascii=ascii_only)
        if k < len(joined) and joined[k]:
            body += gap
        else:
            body += "\n"
            line += 1
    assert _read(body) == expected


@settings(max_examples=200, deadline=None)
@given(RECORD, st.sampled_from([" x", "[1]", "1", '"s"', ", {}", '{"cut": ', "{"]))
def test_other_text_after_a_whole_record_stays_an_error(record, tail) -> None:
    body = json.dumps({"first": 1}) + "\n" + json.dumps(record) + tail + "\n"
    with pytest.raises(UserError, match=r"log\.jsonl:2: "):
        _read(body)
