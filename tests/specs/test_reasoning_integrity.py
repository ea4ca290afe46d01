"""Seed 003's decisions and strict-provider acceptance: pass on `patched`, fail on the bug preset.

Every spec in ``prefixbench.workloads.specs.reasoning.SPECS`` runs at 32k, 128k and 512k for each engine
it names: it must pass on ``patched`` and fail on its ``bug_preset``. The three structural
guards (bug_preset None) pass on every preset by design; each is shown to fail on a run or a
request list that breaks what it guards.
"""

import re

import pytest

from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.engines.user_tail import UserTailConfig, UserTailEngine
from prefixbench.kernel.presets import get_preset
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.wire import Message, Reasoning
from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.reasoning import (
    SPECS,
    Recorder,
    check_normalized,
    judge_accepted,
    judge_user_only_tail,
    judge_verbatim_reasoning,
    run_recorded,
)
from prefixbench.workloads.scripted.loop import run_workload
from prefixbench.workloads.scripted.registry import execute, make_workload, profile_options
from prefixbench.workloads.scripted.thinking_tools import ThinkingToolsWorkload

WINDOWS = (32_000, 128_000, 512_000)
CASES = [(spec, window, engine) for spec in SPECS for window in WINDOWS for engine in spec.engines]


def case_id(case) -> str:
    spec, window, engine = case
    return f"{spec.name}-{window // 1000}k-{engine}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_spec_passes_on_patched(case):
    spec, window, engine = case
    result = spec.check("patched", window, engine)
    assert result.passed, result.line()
    assert (result.window, result.engine, result.preset) == (window, engine, "patched")


#: What each spec's figure must show on its bug preset: the request or checkpoint and the
#: number that decided it (a vacuous or unrelated failure does not pass these tests).
BUG_FIGURES = {
    "retained-reasoning-replayed": r"checkpoint c\d+ compacted \d+ thinking turns and kept 0, want 3",
    "reasoning-backfill-per-binding": r"deepseek-relay: request #\d+ message \d+, a turn emitted without thinking",
    "reasoning-field-normalized": r"request #\d+ message \d+: the model's reasoning was replaced by",
    "official-accepts-every-request": r"under deepseek-official: [1-9][\d,]* of [\d,]+ requests rejected, first #\d+",
    "relay-accepts-every-request": r"under deepseek-relay: [1-9][\d,]* of [\d,]+ requests rejected, first #\d+",
}


@pytest.mark.parametrize("case", [c for c in CASES if c[0].bug_preset is not None], ids=case_id)
def test_spec_is_violated_on_its_bug_preset(case):
    spec, window, engine = case
    result = spec.check(spec.bug_preset, window, engine)
    assert result.verdict is Verdict.VIOLATED, result.line()
    assert re.search(BUG_FIGURES[spec.name], result.figure), result.line()


@pytest.mark.parametrize("case", [c for c in CASES if c[0].bug_preset is None], ids=case_id)
def test_structural_guards_pass_on_legacy_too(case):
    spec, window, engine = case
    assert spec.check("legacy", window, engine).passed


def test_failures_name_the_figure_that_decided_them():
    by_name = {spec.name: spec for spec in SPECS}
    retained = by_name["retained-reasoning-replayed"].check("legacy", 32_000, "user-tail")
    assert retained.figure == "checkpoint c0 compacted 19 thinking turns and kept 0, want 3"
    backfill = by_name["reasoning-backfill-per-binding"].check("legacy", 32_000, "user-tail")
    assert "deepseek-relay: request #4 message 7, a turn emitted without thinking, carries ['']" in backfill.figure
    normalized = by_name["reasoning-field-normalized"].check("pre-d677", 32_000, "user-tail")
    assert normalized.figure.endswith("the model's reasoning was replaced by '[reasoning not retained for this turn]'")
    official = by_name["official-accepts-every-request"].check("legacy", 32_000, "ranges")
    assert "(message 2: assistant row has no reasoning_content)" in official.figure


def test_checks_refuse_engines_they_do_not_apply_to():
    with pytest.raises(UserError, match="applies to engine"):
        check_normalized("patched", 32_000, "ranges")


# --- the acceptance table of issue 3 --------------------------------------------------------


@pytest.mark.parametrize("window", WINDOWS)
def test_legacy_draws_400s_where_the_seeds_say_and_patched_none(window):
    def rejected(preset, engine, profile):
        workload = make_workload("thinking-tools", window, **profile_options("thinking-tools", profile))
        return execute(workload, preset, engine=engine, profile=profile).num_rejected

    assert rejected("legacy", "ranges", "deepseek-official") >= 1
    assert rejected("legacy", "user-tail", "deepseek-relay") >= 1
    for engine in ("checkpoint", "user-tail", "ranges"):
        for profile in ("deepseek-official", "deepseek-relay"):
            assert rejected("patched", engine, profile) == 0, (engine, profile)


def test_a_relay_reading_only_reasoning_text_still_rejects_right_after_a_checkpoint():
    # A finding, pinned: D677 takes the field from the newest row with real reasoning, which
    # right after a checkpoint is a retained row stamped reasoning_content (ADR 0256 d1). A
    # relay that reads only reasoning_text rejects those requests; before D677 it rejects
    # nearly every request once a checkpoint exists.
    workload = ThinkingToolsWorkload(32_000, binding="deepseek-relay", reasoning_field="reasoning_text")
    patched = execute(workload, "patched", engine="user-tail", profile="deepseek-relay")
    before = execute(workload, "pre-d677", engine="user-tail", profile="deepseek-relay")
    assert 1 <= patched.num_rejected <= 2 * patched.num_folds
    assert before.num_rejected > 10 * patched.num_rejected
    first = next(o for o in patched.observations if o.is_rejected)
    assert "reasoning only in reasoning_content, not reasoning_text" in (first.error or "")


# --- the guards can fail ---------------------------------------------------------------------


def test_user_only_tail_fails_with_the_codex_tail():
    # ADR 0064's budgeted tail keeps completed prompts: exactly what ADR 0136 removed.
    workload = ThinkingToolsWorkload(32_000)
    engine = UserTailEngine(UserTailConfig(binding="deepseek-official", tail_rule="codex"), get_preset("patched"))
    recorder = Recorder()
    run = run_workload(workload, engine, SimulatedProvider(validator=recorder), preset="patched")
    result = judge_user_only_tail(run, recorder.requests, "patched")
    assert result.verdict is Verdict.VIOLATED, result.line()
    assert "kept 2 user message(s) that are not its task boundary" in result.figure


def test_strict_guard_fails_when_a_client_replays_empty_echoes_to_a_relay():
    # The official binding's client sends "" for rows without thinking; a relay rejects them.
    workload = ThinkingToolsWorkload(32_000, turns=1, steps_per_turn=8)
    run = execute(workload, "patched", engine="checkpoint", profile="deepseek-relay")
    result = judge_accepted(run, "strict-profiles-accept-guard", "patched")
    assert result.verdict is Verdict.VIOLATED and "reasoning_content is empty" in result.figure


def test_checkpoint_verbatim_guard_fails_on_rewritten_reasoning():
    run, recorder = run_recorded(ThinkingToolsWorkload(32_000), "patched", "checkpoint", "deepseek-official")
    assert judge_verbatim_reasoning(run, recorder.requests, recorder.emitted, "patched").passed
    requests = list(recorder.requests)
    target = requests[20]
    idx = next(i for i, m in enumerate(target.messages) if m.role == "assistant" and m.reasoning and m.reasoning[0].text)
    row = target.messages[idx]
    tampered = Message("assistant", tuple(Reasoning(b.text[:-1], b.field) if isinstance(b, Reasoning) else b for b in row.blocks))
    requests[20] = replace(target, messages=(*target.messages[:idx], tampered, *target.messages[idx + 1 :]))
    result = judge_verbatim_reasoning(run, requests, recorder.emitted, "patched")
    assert result.verdict is Verdict.VIOLATED and result.figure.startswith(f"request #20 message {idx} replays reasoning")
