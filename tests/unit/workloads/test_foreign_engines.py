"""Engines written from the docs alone by another team (tests/foreign_engines.py), gated as the
docs say: each verdict names what the engine really did, and each failure of the engine itself
is one line and exit 2 that leaves standard output to the command."""

from __future__ import annotations

import pytest

from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.engine import run_engine_specs

ORPHAN = "HTTP 400 Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"


def ref(name: str) -> str:
    return f"tests.foreign_engines:{name}"


def verdicts(engine: str, profile: str = "deepseek-official") -> dict[str, tuple[Verdict, str]]:
    results = run_engine_specs(ref(engine), [32_000], ["lenient", profile])
    return {r.spec: (r.verdict, r.figure) for r in results if r.profile == profile}


@pytest.mark.parametrize("engine", ["swaps_first_pair", "drops_first_call_row"])
@pytest.mark.parametrize("profile", ["deepseek-official", "deepseek-relay"])
def test_a_strict_profile_refuses_a_tool_result_that_answers_no_call_before_it(engine, profile):
    # Fails on main: the strict profiles checked reasoning only, so moving a result before its
    # call, or dropping the call's row, passed strict-profile-accepts.
    verdict, figure = verdicts(engine, profile)["strict-profile-accepts"]
    assert verdict is Verdict.VIOLATED, figure
    assert f"first request #25 (conversation): {ORPHAN} (message 1: tool result " in figure


def test_the_reordering_engine_is_cache_honest_so_only_the_strict_profile_catches_it():
    lenient = {r.spec: r.verdict for r in run_engine_specs(ref("swaps_first_pair"), [32_000]) if r.workload == "thinking-tools"}
    assert lenient["no-silent-rewrite"] is Verdict.PASS


def test_prompts_over_the_window_fail_window_respected_though_refused_first_for_reasoning():
    # Fails on main: every request over the window was refused first for its reasoning, and the
    # spec passed with "largest prompt 98,... tokens" in a 32k window.
    verdict, figure = verdicts("strips_reasoning")["window-respected"]
    assert verdict is Verdict.VIOLATED, figure
    assert figure.startswith("103 of 164 requests over the context window; first request #61 (conversation): 32,400 tokens > 32,000 maximum")
    assert "(refused first with HTTP 400 The reasoning_content in the thinking mode must be passed back" in figure
    # The same requests under the lenient profile: refused for their length, the same count.
    lenient = {r.spec: r for r in run_engine_specs(ref("strips_reasoning"), [32_000]) if r.workload == "thinking-tools"}
    assert lenient["window-respected"].figure.startswith("103 of 164 requests over the context window")
