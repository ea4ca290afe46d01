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

from tests.fuzz.harness import Tally, array_or_lines, check_audit, fuzz_settings, seed_or_edited

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
            return array_or_lines(docs, shape)

        check_audit(tally, path, data.draw(seed_or_edited(seed, rows, written)), "helicone", explicit)

    case()
    tally.report()
