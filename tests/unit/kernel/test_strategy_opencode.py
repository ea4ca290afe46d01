"""opencode-summary (kernel/strategies/opencode.py): overflow, the kept tail, the cold summary, pruning."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, count_tokens, user_text
from prefixbench.kernel.strategies.foldview import tool_text
from prefixbench.kernel.strategies.opencode import ASK, CLEARED, OpenCodeSummary, factory, tail_start
from tests.unit.kernel.agent_sessions import Recorder, context, grow, left_alone, rewrites, session_with

WINDOW = 20_000  # output cap 2,000: usable = 20,000 - 2,000 - 2,000 = 16,000


def test_usable_is_the_window_less_the_output_cap_and_the_reserve():
    session = session_with([("fix", 1)])
    assert OpenCodeSummary(WINDOW).usable(context(session, WINDOW)) == 16_000
    assert OpenCodeSummary(WINDOW, reserved=500).usable(context(session, WINDOW)) == 17_500
    assert OpenCodeSummary(200_000).usable(context(session, 200_000, max_tokens=64_000)) == 200_000 - 32_000 - 20_000


def test_below_usable_nothing_happens():
    session = session_with([("fix the bug", 28)])
    engine = OpenCodeSummary(WINDOW)
    ctx = context(session, WINDOW)
    assert ctx.measure(engine.view(session)).total_tokens < 16_000
    assert left_alone(engine, session, WINDOW)


def test_on_overflow_the_head_is_summarized_as_text_and_a_recent_tail_kept():
    session = session_with([("fix the bug", 24)], chars=3_000)
    client = Recorder()
    engine = OpenCodeSummary(WINDOW)
    ctx = context(session, WINDOW, client)
    live = session.derive_messages()
    assert ctx.measure(live).total_tokens >= 16_000
    engine.before_step(ctx)
    (request,) = client.sent
    (message,) = request.messages
    assert (request.system, request.tools, request.envelope.reasoning_effort) == ("", (), "max")
    assert "[user]: fix the bug" in message.text() and "\n[cut]" in message.text()  # outputs cut to 2,000 chars
    view = engine.view(session)
    assert view[0] == user_text(ASK) and view[1].role == "assistant" and view[1].text() == "SUMMARY OF THE WORK"
    tail = view[2:]
    assert tail == live[len(live) - len(tail) :] and tail[0].role == "assistant"
    assert count_tokens(tail) <= 4_000 < count_tokens(live[len(live) - len(tail) - 2 :])  # min(15k, max(2k, 16k/4))
    assert rewrites(session) == ["checkpoint"]


def test_the_tail_is_whole_turns_then_a_split_one():
    live = session_with([("one", 2), ("two", 2), ("three", 30)]).derive_messages()
    keep = tail_start(live, 3_000)
    assert live[keep].role == "assistant" and count_tokens(live[keep:]) <= 3_000
    assert tail_start(live, 10**9) == 0  # everything fits: no head, no tail


def test_a_new_turn_prunes_outputs_past_the_newest_40k_tokens_when_that_frees_over_20k():
    session = session_with([("a", 130), ("b", 1), ("c", 0)])
    engine = OpenCodeSummary(10_000_000)
    engine.before_step(context(session, 10_000_000))
    view = engine.view(session)
    cleared = [i for i, m in enumerate(view) if m.role == "tool" and tool_text(m) == CLEARED]
    # 130 outputs of 500 tokens: the newest 80 are the protected 40,000 (turn b's is skipped).
    assert len(cleared) == 50 and cleared == [2 * k + 2 for k in range(50)]
    assert rewrites(session) == ["prune"]
    engine.before_step(context(session, 10_000_000))  # same turn: no second pass
    assert rewrites(session) == ["prune"]


def test_no_prune_when_it_would_free_too_little_or_is_turned_off():
    session = session_with([("a", 100), ("b", 1), ("c", 0)])
    engine = OpenCodeSummary(10_000_000)
    engine.before_step(context(session, 10_000_000))
    assert rewrites(session) == []
    session = session_with([("a", 130), ("b", 1), ("c", 0)])
    engine = factory(10_000_000, EngineOptions(config={"prune": False}))
    engine.before_step(context(session, 10_000_000))
    assert rewrites(session) == [] and engine.view(session) == session.derive_messages()


def test_the_factory_refuses_a_bad_value():
    with pytest.raises(ValueError, match="prune must be true or false"):
        factory(WINDOW, EngineOptions(config={"prune": "yes"}))


def test_a_later_compaction_folds_the_previous_summary_in():
    session = session_with([("fix the bug", 24)], chars=3_000)
    client = Recorder()
    engine = OpenCodeSummary(WINDOW)
    engine.before_step(context(session, WINDOW, client))
    grow(session, 24, chars=3_000)
    engine.before_step(context(session, WINDOW, client))
    assert len(client.sent) == 2 and "<previous-summary>\nSUMMARY OF THE WORK" in client.sent[1].messages[0].text()
