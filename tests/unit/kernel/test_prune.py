"""Tool-result pruner: head + marker + tail, plan without touching the log, land with a filter."""

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.prune import MARKER, PrunerConfig, land_prune, plan_prune, prune_content, savings
from prefixbench.simulator.wire import Text
from tests.builders import make_session

SMALL = PrunerConfig(threshold_chars=100, head_chars=30, tail_chars=20)


def test_the_budget_must_hold_head_the_39_character_marker_and_tail():
    PrunerConfig(threshold_chars=30 + 39 + 20, head_chars=30, tail_chars=20)  # fits exactly
    with pytest.raises(UserError, match=r"head_chars \+ marker \(39\) \+ tail_chars = 89 exceeds threshold_chars 88"):
        PrunerConfig(threshold_chars=88, head_chars=30, tail_chars=20)


def test_content_under_the_threshold_is_left_alone():
    assert prune_content((Text("x" * 100),), SMALL) is None


def test_over_budget_content_keeps_head_marker_and_tail():
    text = "".join(chr(ord("a") + i % 26) for i in range(150))
    (out,) = prune_content((Text(text),), SMALL)
    assert out.text == text[:30] + MARKER + text[-20:]
    assert len(out.text) <= SMALL.threshold_chars


def test_marker_lands_once_across_several_blocks_and_emptied_blocks_drop():
    blocks = (Text("A" * 40), Text("B" * 40), Text("C" * 40))
    out = prune_content(blocks, SMALL)
    assert [b.text for b in out] == ["A" * 30 + MARKER, "C" * 20]


def test_plan_touches_nothing_and_land_respects_include():
    session = make_session(3, result_chars=150)
    before = (len(session.events), session.surface)
    plan = plan_prune(session, SMALL)
    assert (len(session.events), session.surface) == before
    assert len(plan) == 3 and all(v > 0 for v in savings(plan).values())
    keep = plan[-1].seq
    landed = land_prune(session, plan, include=lambda seq: seq == keep)
    assert len(landed) == 1 and landed[0].rewrite_kind == "prune"
    assert keep not in session.surface and plan[0].seq in session.surface
    # Each replacement is preceded by the prune record stating what it shadowed.
    record = session.event(landed[0].seq - 1)
    assert record.kind == "compaction/prune" and record.info["shadowed_seqs"] == (keep,)


def test_a_second_pass_prunes_nothing():
    session = make_session(2, result_chars=150)
    land_prune(session, plan_prune(session, SMALL))
    assert plan_prune(session, SMALL) == ()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"threshold_chars": 0}, "threshold_chars must be a positive integer"),
        ({"head_chars": -1}, "head_chars must be a non-negative integer"),
        ({"threshold_chars": 100, "head_chars": 50, "tail_chars": 20}, "exceeds threshold_chars 100"),
    ],
)
def test_bad_budgets_are_user_errors(kwargs, message):
    with pytest.raises(UserError, match=message):
        PrunerConfig(**kwargs)
