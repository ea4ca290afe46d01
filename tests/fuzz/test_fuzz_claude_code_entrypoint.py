"""Fuzz the client a Claude Code line names (``entrypoint``, workloads/logs/formats/claude_code.py):
any JSON value there, or none, reads; a non-empty string keys the main thread's head by it
(one head per client), anything else leaves the head as without it; never an exception."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.workloads.audit.core import load_trace
from tests.fuzz.harness import fuzz_settings
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

ENTRYPOINTS = st.one_of(st.just("absent"), st.none(), st.text(max_size=12), st.integers(), st.booleans(),
                        st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def test_any_entrypoint_reads_and_only_a_string_keys_the_head(importer_examples):
    @fuzz_settings(importer_examples)
    @given(entrypoints=st.lists(ENTRYPOINTS, min_size=4, max_size=4))
    def case(entrypoints) -> None:
        t = Transcript("sess", version="2.1.87")
        t.user("go", "2026-03-29T04:39:18.000Z", root=True)
        t.assistant("req_1", "2026-03-29T04:39:22.000Z", [cc_usage(3, 2_000, 11_245, 90)], model="claude-sonnet-4-6")
        t.user("result", "2026-03-29T04:39:23.000Z", tool=True)
        t.assistant("req_2", "2026-03-29T04:39:27.000Z", [cc_usage(3, 300, 13_338, 90)], model="claude-sonnet-4-6")
        for line, entry in zip(t.lines, entrypoints, strict=True):
            if entry != "absent":
                line["entrypoint"] = entry
        with tempfile.TemporaryDirectory() as tmp:
            requests, _ = load_trace([write_jsonl(Path(tmp) / "sess.jsonl", t.lines)])
        assert [r.request_id for r in requests] == ["req_1", "req_2"]
        for request, entry in zip(requests, entrypoints[1::2], strict=True):
            suffix = f":{entry}" if isinstance(entry, str) and entry and entry != "absent" else ""
            assert request.prefix is not None and request.prefix.head == f"claude-code:main:claude-sonnet-4-6:2.1.87{suffix}"

    case()
