"""The OpenHands condensers (kernel/strategies/openhands.py): when each acts and what it leaves."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, user_text
from prefixbench.kernel.strategies.foldview import tool_text
from prefixbench.kernel.strategies.openhands import (
    MASKED,
    AmortizedForgetting,
    LLMSummarizing,
    ObservationMasking,
    RecentEvents,
    amortized_forgetting,
    llm_summarizing,
    observation_masking,
    recent_events,
)
from tests.unit.kernel.agent_sessions import Recorder, context, grow, rewrites, session_with

BIG = 10_000_000


def test_masking_hides_tool_results_outside_the_attention_window_and_declares_each_move():
    session = session_with([("fix", 4)])  # 9 events
    engine = ObservationMasking(attention_window=10)
    engine.before_step(context(session, BIG))
    assert engine.view(session) == session.derive_messages() and rewrites(session) == []
    grow(session, 6)  # 21 events: tool results at index < 11 are masked
    engine.before_step(context(session, BIG))
    view = engine.view(session)
    masked = [i for i, m in enumerate(view) if m.role == "tool" and tool_text(m) == MASKED]
    assert masked == [2, 4, 6, 8, 10]
    assert [m.role for m in view] == [m.role for m in session.derive_messages()]  # pairs stay whole
    grow(session, 1)
    engine.before_step(context(session, BIG))
    assert rewrites(session) == ["mask", "mask"]
    assert observation_masking(BIG, EngineOptions()).window_events == 100


def test_recent_events_keeps_the_task_and_the_newest_events_without_orphans():
    session = session_with([("fix", 4)])
    engine = RecentEvents(keep_first=1, max_events=10)
    engine.before_step(context(session, BIG))
    assert rewrites(session) == []  # 9 events: all sent
    grow(session, 16)  # 41 events
    engine.before_step(context(session, BIG))
    view = engine.view(session)
    messages = session.derive_messages()
    assert view[0] == user_text("fix") and view[1:] == messages[33:]  # index 32 is a result whose call is gone
    assert rewrites(session) == ["truncate"]
    grow(session, 1)
    engine.before_step(context(session, BIG))
    assert rewrites(session) == ["truncate", "truncate"]  # the window slides every step
    assert (recent_events(BIG, EngineOptions()).keep_first, recent_events(BIG, EngineOptions()).max_events) == (1, 100)


def test_recent_events_under_max_events_is_the_whole_session():
    session = session_with([("fix", 3)])
    engine = RecentEvents(keep_first=1, max_events=10)
    engine.before_step(context(session, BIG))
    assert engine.view(session) == session.derive_messages() and rewrites(session) == []


def test_amortized_forgetting_cuts_to_half_past_max_size_then_grows_again():
    session = session_with([("fix", 4)])  # 9 events
    engine = AmortizedForgetting(BIG, max_size=10, keep_first=1)
    engine.before_step(context(session, BIG))
    assert rewrites(session) == []
    grow(session, 1)  # 11 events > 10
    engine.before_step(context(session, BIG))
    view = engine.view(session)
    assert view[0] == user_text("fix") and len(view) <= 5 and view[1].role == "assistant"
    assert view[1:] == session.derive_messages()[-len(view) + 1 :]
    assert rewrites(session) == ["truncate"]
    grow(session, 2)
    engine.before_step(context(session, BIG))
    assert rewrites(session) == ["truncate"]  # only appended since: no rewrite


def test_the_rolling_condensers_also_condense_when_the_next_request_would_not_fit():
    session = session_with([("fix", 30)])  # 61 events, about 16,000 tokens
    engine = AmortizedForgetting(10_000)
    ctx = context(session, 10_000)
    engine.before_step(ctx)
    assert ctx.measure(engine.view(session)).total_tokens <= 10_000
    assert rewrites(session)[0] == "truncate" and len(engine.view(session)) < 61


@pytest.mark.parametrize("make", [lambda w, t: ObservationMasking(100, w, t), lambda w, t: RecentEvents(1, 100, w, t)],
                         ids=["observation-masking", "recent-events"])
def test_the_controller_cuts_the_history_in_half_when_a_masker_outgrows_the_window(make):
    # OpenHands' controller (enable_history_truncation): keep the task, the newest half, pairs whole.
    session = session_with([("fix", 30)])  # 61 events, about 16,000 tokens: no masker shrinks it
    engine = make(10_000, True)
    ctx = context(session, 10_000)
    engine.before_step(ctx)
    view = engine.view(session)
    assert ctx.measure(view).total_tokens <= 0.9 * 10_000
    assert view[0] == user_text("fix") and view[1].role == "assistant"  # no result without its call
    assert rewrites(session)[-1] == "truncate" and 1 + 15 <= len(view) < 61
    # The cut stays: the next step extends what was sent, nothing more is declared.
    declared = len(rewrites(session))
    grow(session, 1)
    engine.before_step(ctx)
    assert len(rewrites(session)) == declared and engine.view(session)[: len(view)] == view
    # history_truncation = false: the strategy alone, over the window.
    alone = make(10_000, False)
    alone.before_step(context(session, 10_000))
    assert len(alone.view(session)) == len(session.derive_messages())


def test_llm_summarizing_sends_the_forgotten_events_cold_and_keeps_a_summary_after_the_task():
    session = session_with([("fix", 5)])  # 11 events
    client = Recorder()
    engine = LLMSummarizing(BIG, max_size=10, keep_first=1)
    engine.before_step(context(session, BIG, client))
    (request,) = client.sent
    (message,) = request.messages
    assert (request.system, request.tools) == ("", ())
    assert "<PREVIOUS SUMMARY>\n\n</PREVIOUS SUMMARY>" in message.text() and "<EVENT id=1>" in message.text()
    view = engine.view(session)
    assert view[0] == user_text("fix") and view[1] == user_text("SUMMARY OF THE WORK") and len(view) <= 5
    assert rewrites(session) == ["checkpoint"]
    grow(session, 4)
    engine.before_step(context(session, BIG, client))
    assert "<PREVIOUS SUMMARY>\nSUMMARY OF THE WORK\n" in client.sent[1].messages[0].text()


def test_factories_read_the_config_defaults_of_openhands():
    engine = llm_summarizing(BIG, EngineOptions())
    assert (engine.max_size, engine.keep_first, engine.max_event_length) == (100, 1, 10_000)
    assert (amortized_forgetting(BIG, EngineOptions()).max_size, amortized_forgetting(BIG, EngineOptions()).keep_first) == (100, 1)
    with pytest.raises(ValueError, match="keep_first"):
        amortized_forgetting(BIG, EngineOptions(config={"max_size": 10, "keep_first": 5}))
    with pytest.raises(ValueError, match="openhands-recent-events: unknown setting"):
        recent_events(BIG, EngineOptions(config={"max_size": 10}))
