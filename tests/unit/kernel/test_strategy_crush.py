"""crush-summarize (kernel/strategies/crush.py): its threshold, its cold whole-session summary
call, and the summary that becomes the start of the session."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, user_text
from prefixbench.kernel.strategies.crush import (
    INTERRUPTED,
    SUMMARY_ASK,
    SUMMARY_SYSTEM,
    CrushSummarize,
    factory,
    threshold_for,
)
from tests.unit.kernel.agent_sessions import Recorder, compact_twice, context, grow, left_alone, rewrites, session_with

WINDOW = 40_000  # threshold 20% = 8,000: summarize once 32,000 tokens are used


def test_the_threshold_is_a_fifth_of_the_window_up_to_200k_then_20k():
    assert [threshold_for(w) for w in (32_000, 128_000, 200_000, 200_001, 512_000)] == [6_400, 25_600, 40_000, 20_000, 20_000]


def test_nothing_happens_while_more_than_the_threshold_is_left():
    session = session_with([("fix the bug", 40)])
    engine = CrushSummarize(WINDOW)
    ctx = context(session, WINDOW)
    assert WINDOW - ctx.usage_tokens(session.derive_messages()[:-1]) > 8_000
    assert left_alone(engine, session, WINDOW)


def test_exactly_the_threshold_left_triggers():
    """Crush stops the loop when what is left is at most the threshold (``remaining <= threshold``)."""
    session = session_with([("fix the bug", 40)])
    ctx = context(session, WINDOW, Recorder())
    left = WINDOW - ctx.usage_tokens(session.derive_messages()[:-1])
    CrushSummarize(WINDOW, threshold=left - 1).before_step(ctx)
    assert ctx.client.sent == []
    CrushSummarize(WINDOW, threshold=left).before_step(ctx)
    assert len(ctx.client.sent) == 1 and rewrites(session) == ["checkpoint"]


def test_the_tool_results_after_the_last_reply_are_not_counted():
    session = session_with([("fix the bug", 55)])
    messages = session.derive_messages()
    ctx = context(session, WINDOW, Recorder())
    below = ctx.usage_tokens(messages[:-1])
    engine = CrushSummarize(WINDOW, threshold=WINDOW - below - 1)  # the results would push it over
    assert WINDOW - ctx.usage_tokens(messages) <= engine.threshold
    engine.before_step(ctx)
    assert ctx.client.sent == []


def test_mid_turn_the_whole_session_goes_to_a_cold_call_and_the_turn_is_queued_again():
    session = session_with([("fix the bug", 65)])
    messages = session.derive_messages()
    client = Recorder()
    engine = CrushSummarize(WINDOW)
    engine.before_step(context(session, WINDOW, client))
    (request,) = client.sent
    assert request.messages == (*messages, user_text(SUMMARY_ASK))
    assert (request.system, request.tools, request.purpose) == (SUMMARY_SYSTEM, (), "compaction")
    # Nothing is kept but the summary, as a user message, and the re-queued prompt.
    assert engine.view(session) == (user_text("SUMMARY OF THE WORK"), user_text(INTERRUPTED.format(prompt="fix the bug")))
    assert rewrites(session) == ["checkpoint"]
    grow(session, 1)
    assert engine.view(session)[2:] == session.derive_messages()[len(messages) :]


def test_at_a_new_turn_the_summary_goes_before_the_new_message_and_nothing_is_queued():
    session = session_with([("fix the bug", 65)])
    session.append("user/message", user_text("now the tests"))
    client = Recorder()
    engine = CrushSummarize(WINDOW)
    engine.before_step(context(session, WINDOW, client))
    (request,) = client.sent
    assert request.messages[-2].role == "tool" and request.messages[-1] == user_text(SUMMARY_ASK)
    assert engine.view(session) == (user_text("SUMMARY OF THE WORK"), user_text("now the tests"))


def test_the_next_summary_replays_the_previous_one():
    session, client = compact_twice(CrushSummarize(WINDOW), 65, WINDOW)
    assert len(client.sent) == 2 and client.sent[1].messages[0] == user_text("SUMMARY OF THE WORK")


def test_the_factory_reads_the_threshold():
    assert factory(WINDOW, EngineOptions(config={"threshold": 1_000})).threshold == 1_000
    assert factory(WINDOW, EngineOptions()).threshold == 8_000
    with pytest.raises(ValueError, match="crush-summarize: unknown setting"):
        factory(WINDOW, EngineOptions(config={"ratio": 0.2}))
