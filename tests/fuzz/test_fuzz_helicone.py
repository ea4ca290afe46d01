"""Fuzz Helicone request exports (workloads/logs/formats/helicone.py): the fixture mutated
byte-wise, and its rows edited (a value swapped for any JSON value or a nasty scalar, a key
deleted) and written as an API answer, a bare array or JSON lines,
ends in exit 0 or one clean line with exit 2, never a traceback or a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, to_json_line, write

FIXTURE = Path(__file__).parents[1] / "unit" / "logs" / "fixtures" / "helicone.json"


def test_mutated_helicone_exports_end_cleanly(importer_examples):
    tally = Tally("audit helicone", bound_s=20)
    path = Path(tempfile.mkdtemp(prefix="fuzz-helicone-")) / "requests.json"
    seed = FIXTURE.read_bytes()
    rows = json.loads(seed)["data"]

    @fuzz_settings(importer_examples)
    @given(data=st.data(), explicit=st.booleans(), shape=st.sampled_from(("page", "array", "lines")))
    def case(data: st.DataObject, explicit: bool, shape: str) -> None:
        def written(docs: list) -> bytes:
            if shape == "page":
                return json.dumps({"data": docs, "error": None}, indent=2).encode()
            return json.dumps(docs, indent=2).encode() if shape == "array" else b"\n".join(map(to_json_line, docs))

        raw = data.draw(
            st.one_of(
                mutated(seed),
                st.lists(edited(st.sampled_from(rows)), min_size=1, max_size=4).map(written),
            )
        )
        argv = ["audit", str(write(path, raw)), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", "helicone"]
        tally.check(argv)

    case()
    tally.report()
