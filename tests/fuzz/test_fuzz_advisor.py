"""Fuzz the advisor iterations of a response (``usage.iterations`` with ``advisor_message``
entries) in a Claude Code transcript (workloads/logs/formats/claude_code.py) and in an HTTP capture
(workloads/logs/formats/http_capture.py): any list of iterations either reads, each advisor entry
with counts a call of the advisor lane and the executor's top level one call, or is refused in one
line; never another exception."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace
from tests.fuzz.harness import fuzz_settings
from tests.unit.audit.fixtures import Transcript, anthropic_body, capture_line, cc_usage, sse, write_jsonl

KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
COUNTS = st.one_of(st.integers(0, 10**7), st.integers(-3, -1), st.none(), st.text(max_size=3), st.booleans())
STEPS = st.fixed_dictionaries(
    {"type": st.sampled_from(["advisor_message", "message", "compaction", "fallback_message", 7])},
    optional={"model": st.one_of(st.sampled_from(["claude-opus-4-8", "", "gpt-5"]), st.none(), st.integers()),
              **{key: COUNTS for key in KEYS}},
)
ITERATIONS = st.one_of(st.lists(STEPS, max_size=5), st.none(), st.text(max_size=3), st.integers())


def test_any_advisor_iterations_read_as_calls_or_are_refused_in_one_line(importer_examples):
    @fuzz_settings(importer_examples)
    @given(iterations=ITERATIONS)
    def case(iterations) -> None:
        t = Transcript(version="2.1.120")
        t.user("go", "2026-06-01T10:00:00.000Z", root=True)
        t.assistant("req_1", "2026-06-01T10:00:30.000Z", [{**cc_usage(3, 200, 9000, 40), "iterations": iterations}])
        with tempfile.TemporaryDirectory() as tmp:
            path = write_jsonl(Path(tmp) / "s.jsonl", t.lines)
            try:
                requests, _ = load_trace([path])
            except UserError as error:
                assert "\n" not in str(error) and str(error).startswith(str(path))
                return
        advisors = [r for r in requests if r.lane == "advisor"]
        assert all(r.lane_kind == "side" and r.usage is not None and not r.usage.is_empty for r in advisors)
        assert [r.seq for r in requests] == list(range(len(requests)))
        expected = [step for step in iterations or [] if isinstance(step, dict) and step.get("type") == "advisor_message"]
        assert len(advisors) <= len(expected)
        executor = [r for r in requests if r.lane == "main" and not r.compaction_call]
        assert executor and (executor[-1].usage.cache_read, executor[-1].usage.output) == (9000, 40)
        # The advisor chain: each call extends the one before it.
        assert all(b.prefix.parent == a.prefix.node for a, b in zip(advisors, advisors[1:], strict=False))

    case()


def test_any_iterations_of_a_captured_response_read_as_calls_or_are_refused_in_one_line(importer_examples):
    # The HTTP-capture reader (workloads/logs/formats/http_capture.py) reads the same iterations
    # from a captured Messages response, JSON or streamed (the final message_delta's usage).
    @fuzz_settings(importer_examples)
    @given(iterations=ITERATIONS, streamed=st.booleans())
    def case(iterations, streamed: bool) -> None:
        usage = {"input_tokens": 3, "cache_read_input_tokens": 9000, "cache_creation_input_tokens": 200, "output_tokens": 40, "iterations": iterations}
        if streamed:
            start = {"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}}
            response = {"body_raw": sse(start, {"type": "message_delta", "usage": usage})}
        else:
            response = {"body": {"usage": usage}}
        with tempfile.TemporaryDirectory() as tmp:
            path = write_jsonl(Path(tmp) / "cap.jsonl", [capture_line(anthropic_body(), response)])
            try:
                requests, _ = load_trace([path])
            except UserError as error:
                assert "\n" not in str(error) and str(error).startswith(str(path))
                return
        steps = [step for step in iterations or [] if isinstance(step, dict)] if isinstance(iterations, list) else []
        advisors = [r for r in requests if r.lane == "advisor"]
        compactions = [r for r in requests if r.compaction_call]
        assert all(r.lane_kind == "side" and r.body is None and not r.usage.is_empty for r in advisors)
        assert len(advisors) <= sum(step.get("type") == "advisor_message" for step in steps)
        # A compaction iteration with counts is a call; one with none is listed, not counted.
        counted = sum(step.get("type") == "compaction" and any(
            type(step.get(key)) is int and step[key] > 0
            for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")) for step in steps)
        assert counted <= len(compactions) <= sum(step.get("type") == "compaction" for step in steps)
        assert [r.seq for r in requests] == list(range(len(requests)))
        executor = [r for r in requests if r.lane == "main" and not r.compaction_call]
        assert len(executor) == 1 and (executor[0].usage.cache_read, executor[0].usage.output) == (9000, 40)
        assert all(b.prefix.parent == a.prefix.node for a, b in zip(advisors, advisors[1:], strict=False))

    case()
