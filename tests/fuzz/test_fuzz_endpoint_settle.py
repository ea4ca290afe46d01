"""Fuzz the endpoints' settle rule (workloads/logs/endpoints.py) through a capture of one
OpenAI-shaped endpoint: any mix of records whose cached tokens exceed their prompt count (they can
only be read exclusive), records at or below it (they fit either reading), records with no cached
count, and odd counts. ``audit`` ends in exit 0 or one line of exit 2; where it reads the file,
every record above its count is read as prompt + cached, and those that fit either reading are
read exclusive exactly when the others are half or more of the records that report cached tokens
(a minority does not decide)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace
from tests.fuzz.harness import Tally, fuzz_settings
from tests.unit.audit.fixtures import capture_line, write_jsonl

URL = "https://llm.example.net/v1/chat/completions"

#: (prompt_tokens, cached_tokens or None): above, at or below the count, none, or an odd value.
_COUNTED = st.tuples(st.integers(1, 5_000), st.integers(1, 5_000))
RECORD = st.one_of(
    _COUNTED, _COUNTED, _COUNTED, _COUNTED, _COUNTED, _COUNTED,
    st.tuples(st.integers(1, 5_000), st.sampled_from((None, 0))),
    st.tuples(st.sampled_from((0, -1, 2**63, "9", None, 1.5)), st.sampled_from((0, -1, 2**63, "9", None, 1.5, 10))),
)


def _line(turn: int, prompt: object, cached: object) -> dict:
    usage: dict = {"prompt_tokens": prompt, "completion_tokens": 5}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    body = {"model": "glm-5.1", "messages": [{"role": "system", "content": "You are terse."},
                                             *[{"role": "user", "content": f"step {i}"} for i in range(turn + 1)]]}
    return capture_line(body, {"body": {"usage": usage}}, url=URL, sent=1_780_000_000.0 + 10 * turn)


def test_a_minority_above_its_count_does_not_decide_the_endpoint(importer_examples):
    tally = Tally("endpoint settle", bound_s=20)
    checked = {False: 0, True: 0}  # files read and checked, by whether the endpoint was decided exclusive

    @fuzz_settings(importer_examples * 2)
    @given(records=st.lists(RECORD, min_size=1, max_size=8))
    def case(records) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "capture.jsonl"
            write_jsonl(path, [_line(i, prompt, cached) for i, (prompt, cached) in enumerate(records)])
            if tally.check(["audit", "--quiet", "--format", "json", str(path)]) != 0:
                return
            try:
                requests, _ = load_trace([path])
            except UserError:
                return
        if len(requests) != len(records) or not all(isinstance(p, int) and isinstance(c, (int, type(None))) for p, c in records):
            return  # (odd counts: read as each reader reads them, or the file refused; the CLI's check above)
        above = sum(1 for p, c in records if c is not None and c > p)
        fits = sum(1 for p, c in records if c is not None and 0 < c <= p)
        decided = above > 0 and above >= fits
        checked[decided] += 1
        for r, (prompt, cached) in zip(requests, records):
            if cached is not None and cached > prompt:
                assert r.usage.uncached == prompt  # prompt + cached in all: only the exclusive reading fits it
            elif cached is not None and cached > 0:
                assert r.usage.uncached == (prompt if decided else prompt - cached), (records, r.usage)

    case()
    tally.report()
    print(f"    checked: {checked[True]} endpoints decided exclusive, {checked[False]} kept the spec's reading")
