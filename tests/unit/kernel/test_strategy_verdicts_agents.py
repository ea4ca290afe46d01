"""The verdicts of every spec on the agent strategies of kernel/strategies/ (codex, pi, opencode,
Gemini CLI, Qwen Code, OpenHands, SWE-agent, aider, Crush, Kimi CLI, Cline, Roo Code, Goose,
Continue's cn, Hermes Agent, OpenClaw), driven by their installed names through the public runner at 32k, 128k and 512k,
on each workload and provider profile. docs/strategies_agents.md explains each failure."""

from __future__ import annotations

import pytest

from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.engine import run_engine_specs

P, V, VAC = Verdict.PASS, Verdict.VIOLATED, Verdict.VACUOUS
WINDOWS = (32_000, 128_000, 512_000)
PROFILES = ("lenient", "deepseek-official", "deepseek-relay")
SUMMARIZING = (
    "codex-compact",
    "pi-compaction",
    "opencode-summary",
    "openhands-llm-summarizing",
    "gemini-cli-compress",
    "qwen-code-compress",
    "aider-chat-summary",
    "crush-summarize",
    "kimi-cli-compact",
    "cline-condense",
    "roo-condense",
    "goose-auto-compact",
    "continue-cli-compact",
    "hermes-compress",
    "openclaw-compaction",
)
NO_SUMMARY = (
    "openhands-observation-masking",
    "openhands-amortized-forgetting",
    "openhands-recent-events",
    "swe-agent-last-n-observations",
    "cline-truncate",
)
#: The specs this table judges (specs added later are judged where they are added).
JUDGED = ("no-silent-rewrite", "summary-uncached-bounded", "summary-envelope-routed", "tool-pairs-intact", "strict-profile-accepts")


def expected(engine: str, spec: str, workload: str, window: int) -> Verdict:
    """What is true of ``engine`` (see docs/strategies_agents.md, "Verdicts")."""
    if spec in ("no-silent-rewrite", "strict-profile-accepts", "tool-pairs-intact"):
        return P  # every rewrite declared; reasoning rows left as written; no tool call cut from its result
    if engine in NO_SUMMARY:
        return VAC
    if engine == "gemini-cli-compress" and workload == "seed-coding":
        return VAC  # one user turn: no point to split at, so no summary call at any window
    if spec == "summary-envelope-routed":
        # pi sends its history summary at effort "high": another family where the route says "max"
        # (OpenClaw's compaction is pi's).
        return V if engine in ("pi-compaction", "openclaw-compaction") and workload == "seed-coding" else P
    # summary-uncached-bounded: the cold summaries (aider's, Crush's, Kimi CLI's and Goose's too)
    # miss from their system prompt on; cn's warm compaction turn carries the step's new tool
    # results (under 95% at 32k, over 2,000 tokens above); Codex's warm turn also
    # carries the step's new tool results, over 2,000 tokens except at 32k.
    if engine == "cline-condense":
        # Cline's warm summarize turn: under 95% on seed-coding's short prefix at 32k, over
        # 2,000 uncached tokens at 128k and 512k.
        return P if window == 32_000 and workload == "thinking-tools" else V
    return P if engine == "codex-compact" and window == 32_000 else V


@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: f"{w // 1000}k")
@pytest.mark.parametrize("engine", SUMMARIZING + NO_SUMMARY)
def test_each_strategy_gets_its_recorded_verdict_on_every_spec(engine, window):
    results = [r for r in run_engine_specs(engine, [window], PROFILES) if r.spec in JUDGED]
    assert {r.engine for r in results} == {engine}
    got = {(r.spec, r.workload, r.profile): r.verdict for r in results}
    want = {key: expected(engine, key[0], key[1], window) for key in got}
    assert got == want
    # Every case was judged: seed-coding (lenient) and thinking-tools under each profile.
    assert {(w, p) for _, w, p in got} == {("seed-coding", "lenient"), *(("thinking-tools", p) for p in PROFILES)}
    assert len(got) == 4 + 3 * 4 + 2


def test_each_strategy_is_an_installed_entry_point_of_prefixbench_itself():
    from prefixbench.kernel.loading import installed_engines

    installed = installed_engines()
    for name in SUMMARIZING + NO_SUMMARY:
        assert installed[name].value.startswith("prefixbench.kernel.strategies."), name
        assert installed[name].dist is not None and installed[name].dist.name == "prefixbench"
