"""tool-pairs-intact: every request's tool calls and results pair up, under every profile.

Every provider refuses a request that cuts a tool call from its result (Anthropic, chat
completions; simulator/validate.py quotes their 400s), so the simulated provider refuses it
under ``lenient`` too, and the spec names the first such request. No preset or shipped strategy
breaks a pair (tests/specs/test_strategy_verdicts.py and the agents' table pin that it passes
on each), so the house rule's must-fail run is a test engine: ``tests.user_engines:split_pair``
cuts between a call and its result; ``tests.user_engines:declared`` is the same engine fixed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from prefixbench.simulator.validate import MISSING_RESULT, ORPHAN_RESULT, make_validator
from prefixbench.simulator.wire import Envelope, Message, Request, Text, ToolCall, ToolResult
from prefixbench.workloads.scripted.record import record_run, write_recorded
from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.engine import EngineCase, run_case, run_engine_specs
from prefixbench.workloads.specs.trace import run_trace_specs

SPLIT = "tests.user_engines:split_pair"
FIXED = "tests.user_engines:declared"
SPEC = "tool-pairs-intact"


def _request(*messages: Message) -> Request:
    return Request(Envelope("mock", "mock"), (Message("user", (Text("fix the bug"),)), *messages), "sys", ())


CALL = Message("assistant", (ToolCall("c1", "read_file", "{}"),))
RESULT = Message("tool", (ToolResult("c1", (Text("body"),)),))


def test_the_lenient_profile_refuses_a_broken_pair_and_accepts_any_reasoning():
    # Fails on the base: lenient never refused anything.
    from prefixbench.simulator.validate import is_pairing_refusal

    lenient = make_validator("lenient")
    assert lenient.check(_request(CALL, RESULT)) is None
    orphan = lenient.check(_request(RESULT))
    assert orphan == f"{ORPHAN_RESULT} (message 1: tool result 'c1' answers no tool call of the row before it)"
    missing = lenient.check(_request(CALL, Message("user", (Text("go on"),))))
    assert missing == f"{MISSING_RESULT} (message 1: tool call 'c1' has no result before message 2)"
    assert is_pairing_refusal(orphan) and is_pairing_refusal(missing) and not is_pairing_refusal("prompt is too long")


def test_check_engine_fails_an_engine_that_splits_a_pair_under_the_default_profile(capsys):
    # Fails on the base: only window-respected (or nothing) failed; the pair was never judged.
    assert main(["check", "--engine", SPLIT, "--windows", "32k"]) == 1
    out = capsys.readouterr().out
    assert (
        "FAIL  tool-pairs-intact @32k [split-pair/seed-coding/lenient]: 42 of 61 requests break the pairing of tool calls "
        "and results (refused, as Anthropic and chat-completions endpoints refuse them); first request #19 (conversation): "
        f"HTTP 400 {ORPHAN_RESULT} (message 0: tool result 'call-7' answers no tool call of the row before it)"
    ) in out
    assert out.splitlines()[-1].endswith("failed: tool-pairs-intact")


def test_a_refused_pair_is_counted_as_refused_never_as_uncached():
    run = run_case(SPLIT, EngineCase(32_000, "seed-coding", "lenient"))
    refused = [o for o in run.observations if o.is_rejected]
    assert len(refused) == 42 and all(o.status == 400 and o.cached_tokens == 0 and o.written_tokens == 0 for o in refused)
    results = {r.spec: r for r in run_engine_specs(SPLIT, [32_000]) if r.workload == "seed-coding"}
    assert "judged on the 19 of 61 requests the provider accepted (42 refused, never cached)" in results["no-silent-rewrite"].figure


@pytest.mark.parametrize("profile", ["lenient", "deepseek-official", "deepseek-relay"])
def test_the_spec_fails_the_split_engine_and_passes_it_fixed_under_every_profile(profile):
    def verdicts(engine: str) -> set[Verdict]:
        return {r.verdict for r in run_engine_specs(engine, [32_000], [profile]) if r.spec == SPEC}

    assert verdicts(SPLIT) == {Verdict.VIOLATED}
    assert verdicts(FIXED) == {Verdict.PASS}


@pytest.mark.parametrize("engine, verdict", [(SPLIT, Verdict.VIOLATED), (FIXED, Verdict.PASS)])
def test_check_trace_gives_the_verdict_check_engine_gives(tmp_path: Path, engine: str, verdict: Verdict):
    run, requests = record_run("seed-coding", 32_000, "patched", engine)
    log = tmp_path / "run.jsonl"
    write_recorded(log, run, requests)
    (traced,) = [r for r in run_trace_specs(log, windows=(32_000,)) if r.spec == SPEC]
    assert traced.verdict is verdict, traced.figure
    if verdict is Verdict.VIOLATED:
        assert "first request #19 (conversation): HTTP 400 " + ORPHAN_RESULT in traced.figure
