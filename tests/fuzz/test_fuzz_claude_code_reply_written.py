"""Fuzz what decides that a Claude Code turn's reply was written by a call the transcript does not
hold (workloads/logs/formats/claude_code.py, ``_reply_written_after``): any JSON value as the
version and the ``stop_reason``, any output count the usage reader takes, reads, never an exception; only a release
2.1.185 or later, a turn that ended and a positive integer output up to 8,000 mark it."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.workloads.audit.core import load_trace
from tests.fuzz.harness import fuzz_settings
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

JSON = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12),
                 st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
VERSIONS = st.one_of(JSON, st.from_regex(r"\A[0-9]{1,3}\.[0-9]{1,4}\.[0-9]{1,4}[a-z.-]{0,4}\Z"),
                     st.sampled_from(["2.1.185", "2.1.184", "2.1.219", "3.0.0", "2.1.1850000", "2.1.١٨٥"]))


def _expected(version: object, stop: object, output: object) -> bool:
    release = re.match(r"([0-9]{1,6})\.([0-9]{1,6})\.([0-9]{1,6})(?![0-9])", version) if isinstance(version, str) else None
    return (release is not None and tuple(map(int, release.groups())) >= (2, 1, 185) and stop == "end_turn"
            and type(output) is int and 0 < output <= 8_000)


def test_any_version_stop_and_output_reads_and_only_a_late_ended_turn_writes_its_reply(importer_examples):
    @fuzz_settings(importer_examples)
    @given(version=VERSIONS, stop=st.one_of(st.just("end_turn"), JSON), output=st.one_of(st.integers(0, 9_000), st.none()))
    def case(version, stop, output) -> None:
        t = Transcript("sess", version="2.1.185")
        t.user("go", "2026-06-01T00:00:00.000Z", root=True)
        t.assistant("req_1", "2026-06-01T00:00:02.000Z", [cc_usage(3, 20_000, 0, 9)], model="claude-sonnet-4-6")
        t.lines[-1]["version"] = version
        t.lines[-1]["message"]["stop_reason"] = stop
        t.lines[-1]["message"]["usage"]["output_tokens"] = output
        with tempfile.TemporaryDirectory() as tmp:
            requests, _ = load_trace([write_jsonl(Path(tmp) / "sess.jsonl", t.lines)])
        assert [r.request_id for r in requests] == ["req_1"]
        assert requests[0].prefix is not None and requests[0].prefix.output_written is _expected(version, stop, output)

    case()
