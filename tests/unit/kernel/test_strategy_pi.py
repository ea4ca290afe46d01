"""pi-compaction (kernel/strategies/pi.py): its threshold, its cut, its two cold summary calls."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, count_tokens, user_text
from prefixbench.kernel.strategies.pi import (
    SUMMARIZER_SYSTEM,
    TURN_PREFIX_PROMPT,
    PiCompaction,
    factory,
    find_cut,
)
from tests.unit.kernel.agent_sessions import Recorder, context, left_alone, rewrites, session_with

WINDOW = 40_000  # threshold 40,000 - 16,384 = 23,616 tokens


def test_nothing_happens_at_or_below_window_minus_reserve():
    session = session_with([("fix the bug", 40)])
    engine = PiCompaction(WINDOW)
    ctx = context(session, WINDOW)
    assert ctx.measure(engine.view(session)).total_tokens <= WINDOW - 16_384
    assert left_alone(engine, session, WINDOW)


def test_the_cut_keeps_the_newest_keep_recent_tokens_and_never_opens_on_a_tool_result():
    live = session_with([("fix the bug", 60)]).derive_messages()
    cut = find_cut(live, 20_000)
    assert live[cut].role == "assistant"
    assert count_tokens(live[cut:]) >= 20_000 - 600 and count_tokens(live[cut - 2 :]) >= 20_000
    assert find_cut(live, 10**9) == 0  # they never add up: keep from the first message


def test_a_split_turn_sends_the_turn_prefix_natively_and_keeps_the_rest():
    session = session_with([("fix the bug", 50)])
    client = Recorder()
    engine = PiCompaction(WINDOW)
    ctx = context(session, WINDOW, client)
    live = session.derive_messages()
    assert ctx.measure(live).total_tokens > WINDOW - 16_384
    engine.before_step(ctx)
    cut = find_cut(live, 20_000)
    # The cut falls inside the only turn: nothing before the turn, so only the prefix call.
    (request,) = client.sent
    assert request.messages == (*live[:cut], user_text(TURN_PREFIX_PROMPT))
    assert (request.system, request.tools, request.max_tokens) == ("", (), 8_192)
    assert request.envelope.reasoning_effort == "high"  # no effort named: the adapter's default
    view = engine.view(session)
    assert view[1:] == live[cut:] and view[0].role == "user"
    assert "No earlier history." in view[0].text() and "SUMMARY OF THE WORK" in view[0].text()
    assert rewrites(session) == ["checkpoint"]


def test_history_before_the_turn_goes_as_text_with_its_own_system_prompt_at_effort_high():
    session = session_with([("first task", 20), ("second task", 45)])
    client = Recorder()
    engine = PiCompaction(WINDOW)
    engine.before_step(context(session, WINDOW, client))
    history, prefix = client.sent
    (message,) = history.messages
    assert message.text().startswith("<conversation>\n[user]: first task") and "<previous-summary>" not in message.text()
    assert (history.system, history.tools, history.max_tokens) == (SUMMARIZER_SYSTEM, (), 13_107)
    assert history.envelope.reasoning_effort == "high"  # routed "max": another request family
    assert prefix.messages[0] == user_text("second task")
    # The next compaction merges into the previous summary.
    from tests.unit.kernel.agent_sessions import grow

    session.append("user/message", user_text("third task"))
    grow(session, 45)
    engine.before_step(context(session, WINDOW, client))
    assert "<previous-summary>\nSUMMARY OF THE WORK" in client.sent[2].messages[0].text()


def test_the_factory_reads_reserve_and_keep_recent():
    engine = factory(WINDOW, EngineOptions(config={"reserve_tokens": 1_000, "keep_recent_tokens": 5_000}))
    assert (engine.reserve, engine.keep_recent) == (1_000, 5_000)
    with pytest.raises(ValueError, match="pi-compaction: unknown setting"):
        factory(WINDOW, EngineOptions(config={"reserve": 1}))
