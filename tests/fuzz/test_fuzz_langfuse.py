"""Fuzz Langfuse observation exports (workloads/logs/formats/langfuse.py): each fixture shape
mutated byte-wise (an API page, JSON lines, a trace export, a bare array, the blob export), and
edited observations written as a page, a bare array or JSON lines, end in exit 0 or one clean line
with exit 2, never a traceback or a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.workloads.logs.formats.langfuse import read_details

from tests.fuzz.harness import Tally, array_or_lines, check_audit, edited, fuzz_settings, mutated
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
            return array_or_lines(docs, shape)

        raw = data.draw(
            st.one_of(
                st.sampled_from(SHAPES).flatmap(lambda name: mutated(seeds[name])),
                st.lists(edited(st.sampled_from(observations)), min_size=1, max_size=4).map(written),
                edited(st.sampled_from(SEEDS["langfuse"])).map(lambda doc: json.dumps(doc, indent=2).encode()),
            )
        )
        check_audit(tally, path, raw, "langfuse", explicit)

    case()
    tally.report()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**7), st.integers(0, 10**6), st.integers(0, 10**7), st.integers(0, 10**7))
def test_a_total_above_the_buckets_is_only_said(input_n: int, output_n: int, read_n: int, extra: int) -> None:
    """A sender's total above the buckets' sum never changes the usage read; what it counts beyond
    them (past Langfuse's 1% tolerance) is the reading's ``unnamed``."""
    details = {"input": input_n, "output": output_n, "input_cached_tokens": read_n}
    buckets = input_n + output_n + read_n
    total = buckets + extra
    reading = read_details(details | {"total": total}, "x")
    assert reading.usage == read_details(details, "x").usage
    assert reading.unnamed == (extra if extra > max(1, total * 0.01) else 0)
