"""subagents (concurrent subagents sharing a fresh head) and idle-gaps (pauses around the TTL)."""

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.scripted.idle_gaps import IdleGapsWorkload
from prefixbench.workloads.scripted.registry import execute
from prefixbench.workloads.scripted.subagents import SubagentsWorkload
from prefixbench.workloads.runs.sweep import make_cache_model


def test_subagents_send_their_first_steps_at_the_same_moment():
    w = SubagentsWorkload(32_000, subagents=3, subagent_steps=2, main_steps=1)
    run = execute(w, "patched")
    # main: 1 read step + the fan-out step + the answer; each subagent: 2 steps + its report.
    assert len(run.observations) == 3 + 3 * 3
    first_round = run.observations[2:5]
    assert len({o.tick for o in first_round}) == 1
    # The byte-exact reference serves at once: the 2nd and 3rd subagent read the head the 1st wrote.
    assert first_round[0].cached_tokens < first_round[1].cached_tokens == first_round[2].cached_tokens


def test_the_write_race_costs_under_a_cache_that_serves_only_after_the_response_begins():
    w = SubagentsWorkload(32_000, subagents=4)
    exact = execute(w, "patched")
    anthropic = execute(w, "patched", cache=make_cache_model("anthropic"))
    race = lambda run: sum(o.written_tokens for o in run.observations[w.main_steps + 1 : w.main_steps + 1 + w.subagents])
    # Every concurrent first request writes the whole plan again under anthropic.
    assert race(anthropic) > 3 * race(exact) > 0


@pytest.mark.parametrize(("gap_s", "warm"), [(100.0, True), (600.0, False)])
def test_idle_gaps_past_the_ttl_turn_the_next_request_cold(gap_s, warm):
    w = IdleGapsWorkload(32_000, turns=2, steps_per_turn=3, gap_s=gap_s)
    run = execute(w, "patched", cache=make_cache_model("anthropic"))
    # The first request of turn 2 follows the idle gap.
    first_after_gap = run.conversations[w.steps_per_turn + 1]
    assert first_after_gap.tick - run.conversations[w.steps_per_turn].tick >= w.gap_ms(1) == gap_s * 800
    assert (first_after_gap.hit_ratio > 0.5) is warm


def test_idle_gaps_seed_0_cycles_around_the_ttl():
    w = IdleGapsWorkload(32_000, turns=5)
    assert [w.gap_ms(t) for t in range(5)] == [0, 240_000, 291_000, 309_000, 360_000]


@pytest.mark.parametrize(
    ("factory", "kwargs", "message"),
    [
        (SubagentsWorkload, {"subagents": 0}, "subagents: subagents must be 1 to 64, got 0"),
        (SubagentsWorkload, {"subagents": 65}, "subagents: subagents must be 1 to 64, got 65"),
        (IdleGapsWorkload, {"gap_s": -1.0}, "gap_s must be between"),
        (IdleGapsWorkload, {"turns": 0}, "idle-gaps: turns must be 1 to 10,000, got 0"),
    ],
)
def test_bad_options_are_one_clear_error(factory, kwargs, message):
    with pytest.raises(UserError, match=message):
        factory(32_000, **kwargs)
