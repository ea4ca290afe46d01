"""aider-chat-summary (kernel/strategies/aider.py): its budget, its split, the summary that
replaces the done messages, and its settings."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, Message, Text, count_tokens, user_text
from prefixbench.kernel.strategies.aider import (
    ACK,
    SUMMARIZE_PROMPT,
    SUMMARY_PREFIX,
    AiderChatSummary,
    factory,
    history_budget,
    split_index,
)
from tests.unit.kernel.agent_sessions import Recorder, context, grow, rewrites, session_with

WINDOW = 32_000  # budget min(max(32,000 / 16, 1,024), 8,192) = 2,000 tokens


def test_the_budget_is_a_sixteenth_of_the_input_limit_between_1024_and_8192():
    assert [history_budget(w) for w in (8_000, 32_000, 128_000, 512_000)] == [1_024, 2_000, 8_000, 8_192]
    assert AiderChatSummary(WINDOW).budget == 2_000


def test_nothing_is_summarized_while_the_done_messages_fit_the_budget():
    session = session_with([("fix the bug", 2)], chars=400)
    client = Recorder()
    engine = AiderChatSummary(WINDOW)
    engine.before_step(context(session, WINDOW, client))
    assert client.sent == [] and rewrites(session) == []
    assert engine.view(session) == session.derive_messages()


def test_done_messages_over_the_budget_go_to_one_cold_call_and_the_newest_step_stays_whole():
    session = session_with([("fix the bug", 5)])
    messages = session.derive_messages()
    assert count_tokens(messages[:-2]) > 2_000
    client = Recorder()
    engine = AiderChatSummary(WINDOW)
    engine.before_step(context(session, WINDOW, client))
    (request,) = client.sent
    assert (request.system, request.tools, request.purpose) == (SUMMARIZE_PROMPT, (), "compaction")
    (message,) = request.messages
    # The user and assistant text, as aider writes it; tool results are not user or assistant text.
    assert message.text().startswith("# USER\nfix the bug\n# ASSISTANT\nstep 0\n")
    assert "line 0.0" not in message.text()
    view = engine.view(session)
    # No assistant message is followed by anything but its results: no split, everything summarized,
    # then aider's "Ok.", then the newest call with its result (the current exchange).
    assert view[0] == user_text(SUMMARY_PREFIX + "SUMMARY OF THE WORK")
    assert view[1] == Message("assistant", (Text(ACK),))
    assert view[2:] == messages[-2:]
    assert rewrites(session) == ["checkpoint"]
    # The next step's done list is the summary, the ack and the step before: under the budget.
    grow(session, 1)
    engine.before_step(context(session, WINDOW, client))
    assert len(client.sent) == 1


def test_the_split_keeps_a_tail_under_half_the_budget_that_opens_after_an_assistant_message():
    texts = [("user", 400), ("assistant", 400), ("user", 400), ("assistant", 400), ("user", 400),
             ("assistant", 400), ("user", 300), ("assistant", 300)]
    messages = [Message(role, (Text("w" * chars),)) for role, chars in texts]
    sizes = [count_tokens([m]) for m in messages]
    split = split_index(messages, sizes, 400)
    assert split == 4 and messages[split - 1].role == "assistant" and sum(sizes[split:]) < 400
    # Under 500 the tail would open after a user message: it moves back to the assistant's.
    assert split_index(messages, sizes, 500) == 2
    # A tail that would open on a tool result moves back past the call.
    session = session_with([("task", 3)], chars=200)
    live = list(session.derive_messages())
    split = split_index(live, [count_tokens([m]) for m in live], 10**6)
    assert split == 1 or live[split].role != "tool"


def test_a_summary_still_over_the_budget_is_summarized_again_one_level_deeper():
    messages = []
    for index in range(6):
        messages += [user_text(f"question {index} " + "q" * 1_200), Message("assistant", (Text("answer " + "a" * 1_200),))]
    engine = AiderChatSummary(WINDOW)
    client = Recorder("S" * 8_000)  # a summary of ~2,000 tokens: summary + tail is over the budget
    ctx = context(session_with([("x", 0)]), WINDOW, client)
    result = engine.summarize(ctx, messages)
    assert len(client.sent) >= 2
    assert client.sent[1].messages[0].text().startswith("# USER\n" + SUMMARY_PREFIX)
    short = Recorder("short")
    result = engine.summarize(context(session_with([("x", 0)]), WINDOW, short), messages)
    assert len(short.sent) == 1 and result[0].text() == SUMMARY_PREFIX + "short"
    assert result[1:] == messages[-len(result) + 1 :] and result[1].role == "user"


def test_by_turn_the_current_turn_is_never_summarized_and_earlier_turns_are():
    session = session_with([("first task", 5)])
    client = Recorder()
    engine = AiderChatSummary(WINDOW, move_back="turn")
    engine.before_step(context(session, WINDOW, client))
    assert client.sent == []  # one turn: nothing has moved back
    session.append("user/message", user_text("second task"))
    engine.before_step(context(session, WINDOW, client))
    assert len(client.sent) == 1
    view = engine.view(session)
    assert [m.role for m in view] == ["user", "assistant", "user"] and view[-1] == user_text("second task")


def test_the_factory_reads_its_settings_and_refuses_unknown_ones():
    engine = factory(WINDOW, EngineOptions(config={"max_chat_history_tokens": 500, "move_back": "turn", "weak_model": "w"}))
    assert (engine.budget, engine.move_back, engine.weak_model) == (500, "turn", "w")
    assert (factory(WINDOW, EngineOptions()).budget, factory(WINDOW, EngineOptions()).move_back) == (2_000, "step")
    with pytest.raises(ValueError, match="aider-chat-summary: unknown setting"):
        factory(WINDOW, EngineOptions(config={"budget": 1}))
    with pytest.raises(ValueError, match="move_back must be one of step, turn"):
        factory(WINDOW, EngineOptions(config={"move_back": "reply"}))


def test_a_weak_model_gets_the_summary_call():
    session = session_with([("fix the bug", 5)])
    client = Recorder()
    AiderChatSummary(WINDOW, weak_model="small").before_step(context(session, WINDOW, client))
    assert client.sent[0].envelope.model == "small"
