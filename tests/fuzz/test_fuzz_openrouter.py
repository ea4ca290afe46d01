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

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, to_json_line, write

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
            return json.dumps(docs, indent=2).encode() if shape == "array" else b"\n".join(map(to_json_line, docs))

        raw = data.draw(
            st.one_of(
                mutated(seed),
                st.lists(edited(st.sampled_from(runs)), min_size=1, max_size=4).map(written),
            )
        )
        argv = ["audit", str(write(path, raw)), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", "openrouter"]
        tally.check(argv)

    case()
    tally.report()
