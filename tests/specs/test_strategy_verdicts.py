"""Every strategy engine's verdict on every spec, at 32k, 128k and 512k: what is true today.

Each engine runs through the public runner (``run_engine_specs``: what ``check --engine NAME``
and the pytest plugin run) on every workload and profile the engine gate covers. The table
below is the expected verdict of each (spec, case); docs/strategies.md explains the surprising
ones. A spec added later (another module's) is not judged here until its column is added.
"""

from __future__ import annotations

import pytest

from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.engine import run_engine_specs

PASS, VIOLATED, VACUOUS = Verdict.PASS, Verdict.VIOLATED, Verdict.VACUOUS
WINDOWS = (32_000, 128_000, 512_000)
PROFILES = ("lenient", "deepseek-official", "deepseek-relay")
SPECS = ("no-silent-rewrite", "summary-uncached-bounded", "summary-envelope-routed", "tool-pairs-intact", "strict-profile-accepts")

#: Per engine, each spec's verdict on every case, unless an exception below names the case.
#: The summary specs are vacuous for an engine that sends no summary call.
NO_SUMMARY = {"no-silent-rewrite": PASS, "summary-uncached-bounded": VACUOUS, "summary-envelope-routed": VACUOUS,
              "tool-pairs-intact": PASS, "strict-profile-accepts": PASS}
#: A summary call replaying the whole conversation pays the newest step (the last reply and
#: its tool results, never sent before) at full price: over 5% of the call, or over 2,000 tokens.
WHOLE_REPLAY = {"no-silent-rewrite": PASS, "summary-uncached-bounded": VIOLATED, "summary-envelope-routed": PASS,
                "tool-pairs-intact": PASS, "strict-profile-accepts": PASS}
EXPECTED: dict[str, dict[str, Verdict]] = {
    "no-compaction": NO_SUMMARY,
    "sliding-window": NO_SUMMARY,
    # Claude Code summarizes all but the newest round (kept as it was): every token of its call
    # but the instruction was in the last request, so it reads from cache (99.0%-100%).
    "claude-code-autocompact": {**WHOLE_REPLAY, "summary-uncached-bounded": PASS},
    "claude-code-idle-compact": {**WHOLE_REPLAY, "summary-uncached-bounded": PASS},
    # clear_thinking drops the reasoning of earlier turns, which DeepSeek's strict endpoints refuse.
    "anthropic-context-editing": {**NO_SUMMARY, "strict-profile-accepts": VIOLATED},
    "openai-server-compaction": WHOLE_REPLAY,
}
#: (engine, spec, window, workload) whose verdict differs from the engine's row, on every profile.
EXCEPTIONS: dict[tuple[str, str, int, str], Verdict] = {
    # At 32k on thinking-tools, a step is small enough that the replayed call stays >= 95% warm.
    ("openai-server-compaction", "summary-uncached-bounded", 32_000, "thinking-tools"): PASS,
}


def expected(engine: str, spec: str, window: int, workload: str) -> Verdict:
    """The verdict the table gives a case."""
    return EXCEPTIONS.get((engine, spec, window, workload), EXPECTED[engine][spec])


@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: f"{w // 1000}k")
@pytest.mark.parametrize("engine", list(EXPECTED))
def test_strategy_verdicts(engine: str, window: int) -> None:
    results = [r for r in run_engine_specs(engine, [window], PROFILES) if r.spec in SPECS]
    assert len(results) == 4 + 5 + 5 + 4  # seed-coding (lenient), thinking-tools x 3 profiles
    got = {(r.spec, r.workload, r.profile): r.verdict for r in results}
    want = {(r.spec, r.workload, r.profile): expected(engine, r.spec, window, r.workload) for r in results}
    assert got == want, [r.line() for r in results if r.verdict is not want[(r.spec, r.workload, r.profile)]]
