"""Fuzz Langfuse observation exports (workloads/logs/formats/langfuse.py): each fixture shape
mutated byte-wise (an API page, JSON lines, a trace export, a bare array, the blob export), and
edited observations written as a page, a bare array or JSON lines, end in exit 0 or one clean line
with exit 2, never a traceback or a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, to_json_line, write
from tests.fuzz.test_fuzz_audit import SEEDS

FIXTURES = Path(__file__).parents[1] / "unit" / "logs" / "fixtures"
SHAPES = ("langfuse.json", "langfuse-openai.jsonl", "langfuse-trace.json", "langfuse-legacy.json", "langfuse-blob.jsonl")


def _observations() -> list[dict]:
    """Single observations of the seeds (the page's and the trace's unpacked), to edit one by one."""
    out: list[dict] = []
    for seed in SEEDS["langfuse"]:
        out.extend(seed.get("data") or seed.get("observations") or [seed])
    return out


def test_mutated_langfuse_exports_end_cleanly(importer_examples):
    tally = Tally("audit langfuse", bound_s=20)
    path = Path(tempfile.mkdtemp(prefix="fuzz-langfuse-")) / "observations.json"
    seeds = {name: (FIXTURES / name).read_bytes() for name in SHAPES}
    observations = _observations()

    @fuzz_settings(importer_examples)
    @given(data=st.data(), explicit=st.booleans(), shape=st.sampled_from(("page", "array", "lines")))
    def case(data: st.DataObject, explicit: bool, shape: str) -> None:
        def written(docs: list) -> bytes:
            if shape == "page":
                return json.dumps({"data": docs, "meta": {"page": 1}}, indent=2).encode()
            return json.dumps(docs, indent=2).encode() if shape == "array" else b"\n".join(map(to_json_line, docs))

        raw = data.draw(
            st.one_of(
                st.sampled_from(SHAPES).flatmap(lambda name: mutated(seeds[name])),
                st.lists(edited(st.sampled_from(observations)), min_size=1, max_size=4).map(written),
                edited(st.sampled_from(SEEDS["langfuse"])).map(lambda doc: json.dumps(doc, indent=2).encode()),
            )
        )
        argv = ["audit", str(write(path, raw)), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", "langfuse"]
        tally.check(argv)

    case()
    tally.report()
