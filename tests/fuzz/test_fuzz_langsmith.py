"""Fuzz LangSmith run exports (workloads/logs/formats/langsmith.py): the fixture's runs query
answer mutated byte-wise, and its runs edited (a value swapped for any JSON value or a nasty
scalar, a key deleted) and written as a runs query answer, a bare array, JSON lines or one run
holding the others as child runs, end in exit 0 or one clean line with exit 2, never a traceback
or a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, array_or_lines, check_audit, fuzz_settings, mutated, seed_or_edited, to_json_line

FIXTURE = Path(__file__).parents[1] / "unit" / "logs" / "fixtures" / "langsmith.json"


def test_mutated_langsmith_exports_end_cleanly(importer_examples):
    tally = Tally("audit langsmith", bound_s=20)
    path = Path(tempfile.mkdtemp(prefix="fuzz-langsmith-")) / "runs.json"
    seed = FIXTURE.read_bytes()
    runs = json.loads(seed)["runs"]

    @fuzz_settings(importer_examples)
    @given(data=st.data(), explicit=st.booleans(), shape=st.sampled_from(("page", "array", "lines", "children")))
    def case(data: st.DataObject, explicit: bool, shape: str) -> None:
        def written(docs: list) -> bytes:
            if shape == "page":
                return json.dumps({"runs": docs, "cursors": {"next": None}}, indent=2).encode()
            if shape == "children" and isinstance(docs[0], dict):
                return to_json_line({**docs[0], "child_runs": docs[1:]})
            return array_or_lines(docs, shape)

        check_audit(tally, path, data.draw(seed_or_edited(seed, runs, written)), "langsmith", explicit)

    case()
    tally.report()


def _parquet_seed() -> bytes:
    """The fixture's runs as a bulk export's Parquet file (nested fields as JSON text)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    runs = json.loads(FIXTURE.read_bytes())["runs"]
    keys = sorted({k for run in runs for k in run})
    rows = [{k: json.dumps(run[k]) if isinstance(run.get(k), (dict, list)) else run.get(k) for k in keys} for run in runs]
    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), out)
    return out.getvalue()


def test_mutated_langsmith_parquet_files_end_cleanly(importer_examples):
    tally = Tally("audit langsmith parquet", bound_s=20)
    path = Path(tempfile.mkdtemp(prefix="fuzz-langsmith-")) / "part-0.parquet"
    seed = _parquet_seed()

    @fuzz_settings(importer_examples)
    @given(raw=mutated(seed), explicit=st.booleans())
    def case(raw: bytes, explicit: bool) -> None:
        check_audit(tally, path, raw, "langsmith", explicit)

    case()
    tally.report()
