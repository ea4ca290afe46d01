"""A JSON array log (Cline's ``ui_messages.json``, a LiteLLM or Langfuse export) reads as the same
elements whatever its line breaks; an element that shares its starting line with another is told
by its index in the array (``[57]``), one alone on its line by its line only, so that every
element of a one-line array has a place of its own (workloads/logs/records.py)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.workloads.logs.records import iter_records
from tests.fuzz.harness import RECORD


@settings(max_examples=300, deadline=None)
@given(st.lists(RECORD, min_size=1, max_size=6), st.data(), st.booleans())
def test_every_element_has_a_place_of_its_own(records, data, indent) -> None:
    # broken[k]: a newline before element k+1 (after its comma, or before it).
    broken = data.draw(st.lists(st.booleans(), min_size=len(records) - 1, max_size=len(records) - 1), label="broken")
    body = "["
    for k, record in enumerate(records):
        if k:
            body += ",\n" if broken[k - 1] else ", "
        body += json.dumps(record, indent=2 if indent else None)
    body += "]"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ui_messages.json"
        path.write_text(body, encoding="utf-8")
        read = list(iter_records(path))
    assert [r.value for r in read] == records
    lines = [r.line for r in read]
    for k, r in enumerate(read):
        alone = lines.count(r.line) == 1
        assert r.path == ("" if alone else f"[{k}]")
    assert len({(r.line, r.path) for r in read}) == len(read)
