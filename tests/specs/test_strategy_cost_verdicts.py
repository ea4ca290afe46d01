"""Every shipped strategy's verdict on the cost specs (window-respected, rewrites-pay-back) at
32k, 128k and 512k, on every workload and profile the engine gate covers: what is true today.

docs/strategies.md and docs/strategies_agents.md say why the failing ones fail. An entry is one
verdict for every case, or one per ``window/workload``, the same on every profile: a request a
strict profile refuses first (clear_thinking's, for the reasoning) still fails window-respected
when its prompt is over the window. (It passed there before, the length being unchecked.)
"""

from __future__ import annotations

import pytest

from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.engine import run_engine_specs

PASS, VIOLATED, VACUOUS = Verdict.PASS, Verdict.VIOLATED, Verdict.VACUOUS
WINDOWS = (32_000, 128_000, 512_000)
PROFILES = ("lenient", "deepseek-official", "deepseek-relay")
SPECS = ("window-respected", "rewrites-pay-back")

EXPECTED: dict[tuple[str, str], object] = {
    ("aider-chat-summary", "rewrites-pay-back"): VIOLATED,
    ("aider-chat-summary", "window-respected"): PASS,
    ("anthropic-context-editing", "rewrites-pay-back"): VIOLATED,
    ("anthropic-context-editing", "window-respected"): {"32k/seed-coding": VIOLATED, "32k/thinking-tools": VIOLATED, "128k/seed-coding": VIOLATED, "128k/thinking-tools": PASS, "512k/seed-coding": VIOLATED, "512k/thinking-tools": PASS},
    # 32k/thinking-tools: the kept round and the re-read files refill the small window within 9
    # requests, before a rewrite pays back (docs/strategies.md).
    ("claude-code-autocompact", "rewrites-pay-back"): {"32k/seed-coding": PASS, "32k/thinking-tools": VIOLATED, "128k/seed-coding": PASS, "128k/thinking-tools": PASS, "512k/seed-coding": PASS, "512k/thinking-tools": PASS},
    ("claude-code-autocompact", "window-respected"): PASS,
    ("claude-code-idle-compact", "rewrites-pay-back"): {"32k/seed-coding": PASS, "32k/thinking-tools": VIOLATED, "128k/seed-coding": PASS, "128k/thinking-tools": PASS, "512k/seed-coding": PASS, "512k/thinking-tools": PASS},
    ("claude-code-idle-compact", "window-respected"): PASS,
    ("cline-condense", "rewrites-pay-back"): PASS,
    ("cline-condense", "window-respected"): PASS,
    ("cline-truncate", "rewrites-pay-back"): {"32k/seed-coding": VIOLATED, "32k/thinking-tools": VIOLATED, "128k/seed-coding": VIOLATED, "128k/thinking-tools": VIOLATED, "512k/seed-coding": PASS, "512k/thinking-tools": VIOLATED},
    ("cline-truncate", "window-respected"): PASS,
    ("codex-compact", "rewrites-pay-back"): PASS,
    ("crush-summarize", "rewrites-pay-back"): {"32k/seed-coding": PASS, "32k/thinking-tools": PASS, "128k/seed-coding": PASS, "128k/thinking-tools": PASS, "512k/seed-coding": VACUOUS, "512k/thinking-tools": PASS},
    ("crush-summarize", "window-respected"): {"32k/seed-coding": PASS, "32k/thinking-tools": PASS, "128k/seed-coding": PASS, "128k/thinking-tools": PASS, "512k/seed-coding": VIOLATED, "512k/thinking-tools": PASS},
    ("kimi-cli-compact", "rewrites-pay-back"): {"32k/seed-coding": VIOLATED, "32k/thinking-tools": VIOLATED, "128k/seed-coding": PASS, "128k/thinking-tools": PASS, "512k/seed-coding": PASS, "512k/thinking-tools": PASS},
    ("kimi-cli-compact", "window-respected"): PASS,
    ("codex-compact", "window-respected"): PASS,
    ("goose-auto-compact", "rewrites-pay-back"): PASS,
    ("goose-auto-compact", "window-respected"): {"32k/seed-coding": PASS, "32k/thinking-tools": PASS, "128k/seed-coding": VIOLATED, "128k/thinking-tools": PASS, "512k/seed-coding": VIOLATED, "512k/thinking-tools": PASS},
    ("continue-cli-compact", "rewrites-pay-back"): PASS,
    ("hermes-compress", "rewrites-pay-back"): VIOLATED,
    ("hermes-compress", "window-respected"): PASS,
    ("openclaw-compaction", "rewrites-pay-back"): {"32k/seed-coding": VIOLATED, "32k/thinking-tools": VIOLATED, "128k/seed-coding": PASS, "128k/thinking-tools": PASS, "512k/seed-coding": PASS, "512k/thinking-tools": PASS},
    ("openclaw-compaction", "window-respected"): PASS,
    ("continue-cli-compact", "window-respected"): PASS,
    ("gemini-cli-compress", "rewrites-pay-back"): {"32k/seed-coding": VACUOUS, "32k/thinking-tools": VIOLATED, "128k/seed-coding": VACUOUS, "128k/thinking-tools": VIOLATED, "512k/seed-coding": VIOLATED, "512k/thinking-tools": VIOLATED},
    ("gemini-cli-compress", "window-respected"): {"32k/seed-coding": VIOLATED, "32k/thinking-tools": PASS, "128k/seed-coding": VIOLATED, "128k/thinking-tools": PASS, "512k/seed-coding": VIOLATED, "512k/thinking-tools": PASS},
    ("no-compaction", "rewrites-pay-back"): VACUOUS,
    ("no-compaction", "window-respected"): VIOLATED,
    ("openai-server-compaction", "rewrites-pay-back"): PASS,
    ("openai-server-compaction", "window-respected"): PASS,
    ("opencode-summary", "rewrites-pay-back"): {"32k/seed-coding": PASS, "32k/thinking-tools": VIOLATED, "128k/seed-coding": PASS, "128k/thinking-tools": PASS, "512k/seed-coding": PASS, "512k/thinking-tools": PASS},
    ("opencode-summary", "window-respected"): PASS,
    ("openhands-amortized-forgetting", "rewrites-pay-back"): {"32k/seed-coding": PASS, "32k/thinking-tools": VIOLATED, "128k/seed-coding": PASS, "128k/thinking-tools": VIOLATED, "512k/seed-coding": PASS, "512k/thinking-tools": VIOLATED},
    ("openhands-amortized-forgetting", "window-respected"): PASS,
    ("openhands-llm-summarizing", "rewrites-pay-back"): {"32k/seed-coding": PASS, "32k/thinking-tools": VIOLATED, "128k/seed-coding": PASS, "128k/thinking-tools": VIOLATED, "512k/seed-coding": PASS, "512k/thinking-tools": VIOLATED},
    ("openhands-llm-summarizing", "window-respected"): PASS,
    ("openhands-observation-masking", "rewrites-pay-back"): {"32k/seed-coding": PASS, "32k/thinking-tools": VIOLATED, "128k/seed-coding": PASS, "128k/thinking-tools": VIOLATED, "512k/seed-coding": PASS, "512k/thinking-tools": VIOLATED},
    ("openhands-observation-masking", "window-respected"): PASS,
    ("openhands-recent-events", "rewrites-pay-back"): {"32k/seed-coding": PASS, "32k/thinking-tools": VIOLATED, "128k/seed-coding": PASS, "128k/thinking-tools": VIOLATED, "512k/seed-coding": PASS, "512k/thinking-tools": VIOLATED},
    ("openhands-recent-events", "window-respected"): PASS,
    ("pi-compaction", "rewrites-pay-back"): {"32k/seed-coding": VIOLATED, "32k/thinking-tools": VIOLATED, "128k/seed-coding": PASS, "128k/thinking-tools": PASS, "512k/seed-coding": PASS, "512k/thinking-tools": PASS},
    ("pi-compaction", "window-respected"): PASS,
    ("qwen-code-compress", "rewrites-pay-back"): PASS,
    ("qwen-code-compress", "window-respected"): PASS,
    ("roo-condense", "rewrites-pay-back"): PASS,
    ("roo-condense", "window-respected"): PASS,
    ("sliding-window", "rewrites-pay-back"): VIOLATED,
    ("sliding-window", "window-respected"): PASS,
    ("swe-agent-last-n-observations", "rewrites-pay-back"): VIOLATED,
    ("swe-agent-last-n-observations", "window-respected"): VIOLATED,
}
ENGINES = sorted({engine for engine, _ in EXPECTED})


def expected(engine: str, spec: str, window: int, workload: str, profile: str) -> Verdict:
    entry = EXPECTED[(engine, spec)]
    if isinstance(entry, Verdict):
        return entry
    return entry[f"{window // 1000}k/{workload}"]  # type: ignore[index,no-any-return]


@pytest.mark.parametrize("window", WINDOWS, ids=lambda w: f"{w // 1000}k")
@pytest.mark.parametrize("engine", ENGINES)
def test_strategy_cost_verdicts(engine: str, window: int) -> None:
    results = [r for r in run_engine_specs(engine, [window], PROFILES) if r.spec in SPECS]
    assert len(results) == 2 * 4  # seed-coding (lenient), thinking-tools x 3 profiles
    wrong = [r.line() for r in results if r.verdict is not expected(engine, r.spec, window, r.workload, r.profile)]
    assert wrong == []


def test_window_respected_passes_every_strategy_that_summarizes_or_truncates_to_fit() -> None:
    """The strategies whose agent keeps the window (by summary, cut, or OpenHands' controller
    cutting the history under its maskers) keep it everywhere. Four do not: no-compaction; the
    API's tool-result clearing alone (an API user gets the 400); SWE-agent, which ends the run
    (exit_context) where the workload goes on; Gemini CLI, which finds no point to split a single
    long turn at (it stops the turn before an overflowing request, where the workload goes on).
    Crush keeps it but where its own summary call, the whole session replayed, is over the window
    (512k, seed-coding). Goose's recovery summary, the whole history written into its system
    prompt at the window's edge, is itself over the window and refused before a retry with fewer
    tool results fits (128k and 512k, seed-coding)."""
    fitting = {"claude-code-autocompact", "claude-code-idle-compact", "codex-compact", "openai-server-compaction",
               "opencode-summary", "openhands-amortized-forgetting", "openhands-llm-summarizing", "pi-compaction",
               "sliding-window", "openhands-observation-masking", "openhands-recent-events", "qwen-code-compress",
               "aider-chat-summary", "kimi-cli-compact",
               "cline-truncate", "cline-condense", "roo-condense", "continue-cli-compact", "hermes-compress",
               "openclaw-compaction"}
    assert all(EXPECTED[(engine, "window-respected")] is PASS for engine in fitting)
    not_fitting = {"no-compaction", "anthropic-context-editing", "swe-agent-last-n-observations", "gemini-cli-compress",
                   "crush-summarize", "goose-auto-compact"}
    assert fitting | not_fitting == set(ENGINES)
    assert EXPECTED[("no-compaction", "window-respected")] is VIOLATED
