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
from tests.unit.kernel.agent_sessions import Recorder, context, grow, left_alone, rewrites, session_with, tool_step

WINDOW = 32_000  # budget min(max(32,000 / 16, 1,024), 8,192) = 2,000 tokens


def test_the_budget_is_a_sixteenth_of_the_input_limit_between_1024_and_8192():
    assert [history_budget(w) for w in (8_000, 32_000, 128_000, 512_000)] == [1_024, 2_000, 8_000, 8_192]
    assert AiderChatSummary(WINDOW).budget == 2_000


def test_nothing_is_summarized_while_the_done_messages_fit_the_budget():
    session = session_with([("fix the bug", 2)], chars=400)
    engine = AiderChatSummary(WINDOW)
    assert left_alone(engine, session, WINDOW)
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
    # The user and assistant text, as aider writes it; a tool result stands for the lint or test
    # output aider sends back as a user message, so it is a # USER section.
    assert message.text().startswith("# USER\nfix the bug\n# ASSISTANT\nstep 0\n# USER\nline 0.0 ")
    assert message.text().count("# USER\n") == 1 + 4 and message.text().count("# ASSISTANT\n") == 4
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
    # A tail that would open on a tool result moves back past the call, to the first place where
    # the head ends on an assistant message and the tail opens on no tool result.
    call, result = tool_step(0, 200)
    later_call, later_result = tool_step(1, 200)
    live = [user_text("task"), call, result, Message("assistant", (Text("done"),)), user_text("more"),
            later_call, later_result]
    sizes = [count_tokens([m]) for m in live]
    assert split_index(live, sizes, sizes[-1] + 1) == 4  # the tail would open on the last result
    assert split_index(live, sizes, 10**6) == 0  # everything fits: no head


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


def chat(roles: str, tokens: list[int]) -> list[Message]:
    """Text messages: ``roles`` spells them (u/a), each about ``tokens[i]`` tokens, each text unique."""
    return [
        Message("user" if r == "u" else "assistant", (Text(f"m{i} " + "w" * (4 * size - 8)),))
        for i, (r, size) in enumerate(zip(roles, tokens, strict=True))
    ]


def sections(request) -> list[str]:
    """The messages a summary call summarized, by their unique opening word."""
    return [line.split()[0] for line in request.messages[0].text().splitlines() if line.startswith("m")]


def test_the_tail_is_what_stays_under_half_the_budget():
    """Budget 2,000: the tail is the newest messages under 1,000 tokens, moved back to an assistant."""
    messages = chat("uauaaau", [600, 600, 600, 600, 600, 450, 450])
    engine = AiderChatSummary(WINDOW)
    client = Recorder("short")
    result = engine.summarize(context(session_with([("x", 0)]), WINDOW, client), messages)
    # 450 + 450 < 1,000; with the 600 before them it is not: the tail is the last two.
    assert sections(client.sent[0]) == ["m0", "m1", "m2", "m3", "m4"]
    assert result == [user_text(SUMMARY_PREFIX + "short"), *messages[5:]]


def test_a_head_of_at_most_four_messages_is_not_split_off():
    engine = AiderChatSummary(WINDOW)
    # The split lands after five messages: the head is summarized, the tail kept.
    five = chat("uauaaua", [700, 700, 700, 700, 700, 450, 450])
    client = Recorder("short")
    assert engine.summarize(context(session_with([("x", 0)]), WINDOW, client), five)[1:] == five[5:]
    assert sections(client.sent[0]) == ["m0", "m1", "m2", "m3", "m4"]
    # After four: too small a head, everything is summarized in one call.
    four = chat("uauaua", [700, 700, 700, 700, 450, 450])
    client = Recorder("short")
    assert engine.summarize(context(session_with([("x", 0)]), WINDOW, client), four) == [user_text(SUMMARY_PREFIX + "short")]
    assert sections(client.sent[0]) == ["m0", "m1", "m2", "m3", "m4", "m5"]
    # A list of four is never split, even over the budget.
    client = Recorder("short")
    engine.summarize(context(session_with([("x", 0)]), WINDOW, client), chat("uaua", [900] * 4))
    assert len(client.sent) == 1 and len(sections(client.sent[0])) == 4


def test_past_the_third_level_of_recursion_everything_is_summarized():
    engine = AiderChatSummary(WINDOW)
    messages = chat("uauaaua", [700, 700, 700, 700, 700, 450, 450])
    for depth, kept in ((3, messages[5:]), (4, [])):  # aider stops recursing past depth 3
        client = Recorder("short")
        result = engine.summarize(context(session_with([("x", 0)]), WINDOW, client), messages, depth)
        assert result[1:] == kept, depth


def test_the_head_goes_to_the_summary_call_as_far_as_the_window_less_512_tokens():
    messages = chat("uauaaua", [700, 700, 700, 700, 700, 450, 450])
    reach = count_tokens(messages[:3])  # the first three messages, exactly
    for window, first in ((reach + 512, 3), (reach + 511, 2)):
        engine = AiderChatSummary(window, max_chat_history_tokens=2_000)
        client = Recorder("short")
        engine.summarize(context(session_with([("x", 0)]), window, client), messages)
        assert sections(client.sent[0]) == [f"m{i}" for i in range(first)], window
