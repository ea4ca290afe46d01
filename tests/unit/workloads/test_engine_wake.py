"""An engine woken inside an idle gap (``ctx.wake_at``, ``on_wake``): at the time it asked, its
calls priced then; never past the gap's end; engines that do not ask see no change.

``idle-gaps`` at ``gap_s = 3600`` pauses 48, 58, 62, 72 and 48 minutes before turns 1-5.
"""

from __future__ import annotations

import pytest

from prefixbench.kernel import Engine, EngineError, EngineOptions, Session, StepContext
from prefixbench.kernel.guard import guard
from prefixbench.simulator.models import make_cache
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.scripted.loop import run_workload
from prefixbench.workloads.scripted.registry import execute, make_workload, validator_for
from tests import waking_engines
from tests.readme import doc_block
from tests.waking_engines import Plain, Waker

WINDOW = 128_000
MINUTE = 60_000
#: The idle gaps before turns 1-5, in ms (idle-gaps at gap_s = 3600, seed 0).
GAPS = (2_880_000, 3_492_000, 3_708_000, 4_320_000, 2_880_000)


def drive(engine: Engine) -> Run:
    """``engine`` (guarded, as a user's) through idle-gaps at 128k on the 1 h Anthropic cache."""
    workload = make_workload("idle-gaps", WINDOW, gap_s=3600.0)
    provider = SimulatedProvider(
        cache=make_cache("anthropic", auto_when_unmarked="1h"), validator=validator_for(workload, "lenient"), window=WINDOW
    )
    return run_workload(workload, guard(engine), provider, preset="patched")


def turn_starts(run: Run) -> list[int]:
    """The tick of each turn's first conversation request (the user's message came then)."""
    starts, steps = [], 0
    for event in run.session.events:
        if event.kind == "step/start":
            if event.info["step"] == 0:
                starts.append(run.conversations[steps].tick)
            steps += 1
    return starts


def test_the_gaps_are_as_the_tests_assume():
    workload = make_workload("idle-gaps", WINDOW, gap_s=3600.0)
    assert tuple(workload.gap_ms(turn) for turn in range(1, 6)) == GAPS


def test_an_engine_is_woken_at_the_time_it_asked_and_its_call_priced_then():
    engine = Waker(after_s=50 * 60)
    run = drive(engine)
    assert engine.takes_asks is True
    # 50 minutes after a turn's last request falls inside the 58, 62 and 72 minute gaps only.
    assert len(engine.woken) == len(run.summaries) == 3
    for woken, summary in zip(engine.woken, run.summaries):
        before = run.observations[summary.index - 1]  # the last request of the turn before the gap
        assert summary.tick == woken == before.tick + 50 * MINUTE
        assert summary.hit_ratio > 0.99  # priced at minute 50: the 1 h cache is warm
    # The user still comes back at the gap's scripted end: the same times as an engine that never asks.
    assert turn_starts(run) == turn_starts(drive(Plain()))


def test_a_call_made_when_woken_after_the_cache_expired_is_cold():
    engine = Waker(after_s=61 * 60)
    run = drive(engine)
    # Inside the 62 and 72 minute gaps; the cache written 61 minutes earlier is gone (1 h TTL).
    assert len(engine.woken) == 2
    assert [s.cached_tokens for s in run.summaries] == [0, 0]


def test_a_time_past_the_gaps_end_is_not_woken():
    engine = Waker(after_s=80 * 60)  # longer than every gap
    run = drive(engine)
    assert engine.woken == [] and run.summaries == ()
    assert run.observations == drive(Plain()).observations


def test_an_engine_woken_may_ask_again_later_in_the_same_gap():
    engine = Waker(after_s=50 * 60, again_s=5 * 60)
    run = drive(engine)
    # 58 minute gap: minutes 50 and 55; 62: 50 and 55; 72: 50 and 55.
    assert [b - a for a, b in zip(engine.woken[::2], engine.woken[1::2])] == [5 * MINUTE] * 3
    assert len(run.summaries) == 6


def test_a_third_party_engine_without_the_hook_runs_as_before():
    engine = Plain()
    assert isinstance(engine, Engine) and not hasattr(engine, "on_wake")
    run = drive(engine)
    assert run.summaries == () and len(run.conversations) == 42
    # The turns start at the scripted times: each gap added to the clock, nothing more.
    starts = turn_starts(run)
    assert all(later - earlier > gap for earlier, later, gap in zip(starts, starts[1:], GAPS))


def test_a_user_engine_loaded_by_import_path_is_woken_too():
    workload = make_workload("idle-gaps", WINDOW, gap_s=3600.0)
    run = execute(workload, "patched", engine="tests.waking_engines:waker", cache=make_cache("anthropic", auto_when_unmarked="1h"),
                  engine_config={"after_s": 3_000})
    assert len(run.summaries) == 3 and all(s.hit_ratio > 0.99 for s in run.summaries)
    plain = execute(workload, "patched", engine="tests.waking_engines:plain", cache=make_cache("anthropic", auto_when_unmarked="1h"))
    assert plain.summaries == () and [o.tick for o in plain.conversations] == [o.tick for o in run.conversations]


@pytest.mark.parametrize(("factory", "says"), [
    ("no_hook", "engine no-hook (tests.waking_engines:no_hook): ctx.wake_at() asked to be woken at the idle gap "
                "before turn 1 (idle-gaps, 128k): the engine has no on_wake(ctx) method for the loop to call"),
    ("wake_raises", "engine wake-raises (tests.waking_engines:wake_raises): on_wake() raised RuntimeError in "
                    "tests/waking_engines.py:64 at the idle gap before turn 2 (idle-gaps, 128k): the engine's own bug when woken"),
])
def test_a_wake_that_fails_is_one_line_naming_the_gap(factory, says):
    workload = make_workload("idle-gaps", WINDOW, gap_s=3600.0)
    with pytest.raises(EngineError) as caught:
        execute(workload, "patched", engine=f"tests.waking_engines:{factory}", cache=make_cache("anthropic", auto_when_unmarked="1h"))
    assert str(caught.value) == says


def test_wake_at_takes_an_int_and_says_when_nothing_can_wake():
    engine = waking_engines.waker(WINDOW, EngineOptions())
    asked: list[int] = []
    ctx = StepContext(Session("t"), None, None, WINDOW, None, lambda: 5, None, asked.append)  # type: ignore[arg-type]
    assert ctx.wake_at(7) is True and asked == [7]
    with pytest.raises(TypeError, match=r"ctx.wake_at\(\) takes a logical time in milliseconds \(an int\), got float"):
        ctx.wake_at(7.5)  # type: ignore[arg-type]
    bare = StepContext(Session("t"), None, None, WINDOW)  # type: ignore[arg-type]
    assert bare.wake_at(7) is False
    engine.before_step(bare)
    assert engine.takes_asks is False


def test_the_guides_waking_engine_summarizes_warm_inside_the_gaps():
    namespace: dict[str, object] = {}
    exec(compile(doc_block("docs/engine-api.md", "### Acting while the user is away"), "engine-api.md", "exec"), namespace)
    engine = namespace["WarmBeforeExpiry"]()  # type: ignore[operator]
    run = drive(engine)  # type: ignore[arg-type]
    # Minute 54 falls inside the 58, 62 and 72 minute gaps; each summary reads the cache warm and
    # the user's return sends the summary, not the conversation.
    assert len(run.summaries) == 3 and all(s.hit_ratio > 0.99 for s in run.summaries)
    assert [kind for _, kind in run.rewrites] == ["checkpoint"] * 3
    assert all(run.observations[s.index + 1].prompt_tokens < s.prompt_tokens // 4 for s in run.summaries)


class _Gap:
    """Just what ``_Driver.idle`` reads and writes: a clock, the engine's ask, the run's longest
    idle gap so far, and a wake that records the time it ran (asking nothing further)."""

    def __init__(self, now: int, ask: int) -> None:
        from prefixbench.workloads.scripted.loop import Clock

        self.clock = Clock()
        self.clock.now_ms = now
        self.wake: int | None = ask
        self.longest_idle_ms = 0
        self.woken: list[int] = []

    def on_wake(self, turn_idx: int) -> None:
        self.woken.append(self.clock.now_ms)


@pytest.mark.parametrize(("ask", "woken"), [
    (1_000, [1_000]),  # at the gap's start: woken
    (1_999, [1_999]),  # just before its end: woken
    (2_000, []),  # exactly at its end: the user's message comes then, no wake (a `<=` there would wake it)
    (999, []),  # before its start: already passed (without the start's check it would be woken, the clock set back)
])
def test_an_ask_is_woken_from_the_gaps_start_up_to_but_not_at_its_end(ask: int, woken: list[int]) -> None:
    from prefixbench.workloads.scripted.loop import _Driver

    gap = _Gap(1_000, ask)
    _Driver.idle(gap, 1, 1_000)  # type: ignore[arg-type]
    assert gap.woken == woken
    assert gap.clock.now_ms == 2_000 and gap.wake is None
    assert gap.longest_idle_ms == 1_000
