"""Fuzz OpenRouter generation exports (workloads/logs/formats/openrouter.py): the fixture mutated
byte-wise, and its generations edited (a value swapped for any JSON value or a nasty scalar, a key
deleted) and written as answers one a line, a bare array, a list under ``data`` or JSON lines,
end in exit 0 or one clean line with exit 2, never a traceback or a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, array_or_lines, check_audit, fuzz_settings, seed_or_edited, to_json_line

FIXTURE = Path(__file__).parents[1] / "unit" / "logs" / "fixtures" / "openrouter.jsonl"


def test_mutated_openrouter_exports_end_cleanly(importer_examples):
    tally = Tally("audit openrouter", bound_s=20)
    path = Path(tempfile.mkdtemp(prefix="fuzz-openrouter-")) / "generations.json"
    seed = FIXTURE.read_bytes()
    runs = [line.get("data", line) for line in map(json.loads, seed.splitlines())]

    @fuzz_settings(importer_examples)
    @given(data=st.data(), explicit=st.booleans(), shape=st.sampled_from(("page", "array", "lines", "answers")))
    def case(data: st.DataObject, explicit: bool, shape: str) -> None:
        def written(docs: list) -> bytes:
            if shape == "page":
                return json.dumps({"data": docs}, indent=2).encode()
            if shape == "answers":
                return b"\n".join(to_json_line({"data": doc}) for doc in docs)
            return array_or_lines(docs, shape)

        check_audit(tally, path, data.draw(seed_or_edited(seed, runs, written)), "openrouter", explicit)

    case()
    tally.report()
