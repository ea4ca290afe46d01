"""Fuzz a Claude Code reply counted from a line written mid-stream (``stop_reason`` null) with a
later file's copy of it (workloads/logs/formats/claude_code.py, workloads/logs/trace.py
take_final_usage): any stop reasons and output counts either read, each request id counted once with
the session file's prompt and an output no smaller than its own (the copy's where the copy holds the
end of the same prompt), or are refused in one line; never another exception."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace
from tests.fuzz.harness import fuzz_settings
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

STOPS = st.one_of(st.none(), st.sampled_from(["tool_use", "end_turn", ""]), st.integers(), st.just("absent"))
OUTPUTS = st.one_of(st.integers(0, 10**6), st.integers(-3, -1), st.none(), st.text(max_size=2))


def test_any_mid_stream_reply_and_its_copy_read_once_or_are_refused_in_one_line(importer_examples):
    @fuzz_settings(importer_examples)
    @given(stops=st.lists(STOPS, min_size=4, max_size=4), outputs=st.lists(OUTPUTS, min_size=2, max_size=2),
           same_prompt=st.booleans())
    def case(stops, outputs, same_prompt) -> None:
        main = Transcript("sess", version="2.1.86")
        main.user("go", "2026-03-29T04:39:18.000Z", root=True)
        main.assistant("req_1", "2026-03-29T04:39:22.000Z", [cc_usage(1, 197, 74939, 72)])
        copy = Transcript("sess", version="2.1.86", sidechain=True)
        copy.user("go", "2026-03-29T04:39:18.000Z", root=True)
        copy.assistant("req_1", "2026-03-29T04:39:22.000Z", [cc_usage(1, 197 if same_prompt else 5, 74939, 0) for _ in outputs])
        for line, output in zip(copy.lines[1:], outputs, strict=True):
            line["message"]["usage"]["output_tokens"] = output
        for line, stop in zip([main.lines[1], *copy.lines[1:]], stops, strict=False):
            if stop != "absent":
                line["message"]["stop_reason"] = stop
        with tempfile.TemporaryDirectory() as tmp:
            project = Path(tmp) / "project"
            write_jsonl(project / "sess.jsonl", main.lines)
            write_jsonl(project / "sess" / "subagents" / "agent-acompact-1.jsonl", copy.lines)
            try:
                requests, _ = load_trace([project])
            except UserError as error:
                assert "\n" not in str(error)
                return
        assert [r.request_id for r in requests] == ["req_1"]
        usage = requests[0].usage
        assert (usage.uncached, usage.cache_write, usage.cache_read) == (1, 197, 74939) and usage.output >= 72
        assert usage.output == 72 or (same_prompt and main.lines[1]["message"].get("stop_reason", 0) is None)

    case()
