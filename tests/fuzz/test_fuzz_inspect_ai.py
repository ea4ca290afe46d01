"""Fuzz the Inspect AI log reader (workloads/logs/formats/inspect_ai.py): a ``.json`` log mutated
byte by byte or edited value by value, or written as an ``.eval`` zip (deflated or zstd members,
its member or its zip bytes damaged), ends in exit 0 or one clean line with exit 2, never a
traceback or a hang, read as detected or under an explicit ``--input``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, write
from tests.unit.logs.test_inspect_ai import MIXED, eval_zip, event, log, sample, usage

#: Logs of each reading: Anthropic's, an OpenAI release before and after 0.3.184, Google's, a
#: sample without events, the mixed log of the reader tests.
SEEDS: list[dict] = [
    MIXED,
    log("0.3.100", [sample(1, [event("openai/gpt-4o", usage(3000, 9, read=2048), 1)]), sample(2, None, epoch=2)]),
    log("0.3.190", [sample(1, [event("openai/gpt-5", usage(100, 9, read=2048, write=0), 1)])], "openai/gpt-5"),
    log("0.3.208", [sample(7, [event("google/gemini-2.5-pro", usage(10, 1, read=4096), 1)])], "google/gemini-2.5-pro"),
    log(None, [sample(1, [event("anthropic/claude-opus-4-1", usage(3, 9, read=0, write=4000), 1)])], "anthropic/claude-opus-4-1"),
]


def test_mutated_inspect_logs_end_cleanly(importer_examples):
    tally = Tally("audit", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-inspect-"))
    docs = edited(st.sampled_from(SEEDS), max_edits=3)

    @fuzz_settings(importer_examples)
    @given(data=st.data(), as_zip=st.booleans(), zstd=st.booleans(), damage=st.sampled_from(("none", "text", "zip")),
           explicit=st.booleans())
    def case(data: st.DataObject, as_zip: bool, zstd: bool, damage: str, explicit: bool) -> None:
        doc = data.draw(docs)
        samples = doc.get("samples", []) if isinstance(doc, dict) else None
        if as_zip and isinstance(samples, list) and all(isinstance(s, dict) and "id" in s and "epoch" in s for s in samples):
            try:
                path = eval_zip(folder / "run.eval", doc, zstd=zstd)
            except (TypeError, ValueError):  # (a value json.dumps refuses: nothing to write)
                path = write(folder / "run.eval", json.dumps(SEEDS[0]).encode())
            if damage == "zip":
                path.write_bytes(data.draw(mutated(path.read_bytes())))
        else:
            try:
                raw = json.dumps(doc).encode("utf-8", "surrogatepass")
            except (TypeError, ValueError):
                raw = json.dumps(SEEDS[0]).encode()
            if damage != "none":
                raw = data.draw(mutated(raw))
            path = write(folder / "run.json", raw)
        argv = ["audit", str(path), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", "inspect-ai"]
        tally.check(argv)

    case()
    tally.report()
    assert tally.outcomes["crash"] == 0
