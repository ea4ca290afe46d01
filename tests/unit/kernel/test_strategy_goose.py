"""goose-auto-compact (kernel/strategies/goose.py): the once-a-turn threshold, the recovery before
a request over the window, the cold summary call and what replaces the history."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, Message, Reply, Request, Text, user_text
from prefixbench.kernel.strategies.goose import (
    CONTINUE_TOOLS,
    CONTINUE_TURN,
    SUMMARY_ASK,
    GooseAutoCompact,
    drop_tool_results,
    factory,
    goose_line,
)
from tests.unit.kernel.agent_sessions import Recorder, context, grow, left_alone, rewrites, session_with

WINDOW = 40_000  # threshold 0.8: compact at a new user message once the last request used 32,000


def test_mid_turn_over_the_threshold_nothing_happens():
    """Goose checks the threshold only when a user message starts a turn."""
    session = session_with([("fix the bug", 65)])
    ctx = context(session, WINDOW)
    assert 0.8 * WINDOW < ctx.usage_tokens(session.derive_messages()) <= WINDOW
    assert left_alone(GooseAutoCompact(WINDOW), session, WINDOW)


def test_a_new_user_message_under_the_threshold_changes_nothing():
    session = session_with([("fix the bug", 20)])
    session.append("user/message", user_text("now the tests"))
    assert left_alone(GooseAutoCompact(WINDOW), session, WINDOW)


def test_at_a_new_user_message_over_the_threshold_a_cold_summary_replaces_everything():
    session = session_with([("fix the bug", 65)])
    session.append("user/message", user_text("now the tests"))
    messages = session.derive_messages()
    client = Recorder()
    engine = GooseAutoCompact(WINDOW)
    engine.before_step(context(session, WINDOW, client))
    (request,) = client.sent
    # The transcript goes inside the system prompt; one user message asks; no tools: cold.
    assert request.messages == (user_text(SUMMARY_ASK),)
    assert (request.tools, request.purpose) == ((), "compaction")
    assert "[user]: fix the bug\n[assistant]: step 0\ntool_request(read): {\"n\":0}\n[user]: tool_response: line 0.0" in request.system
    assert request.system.count("[user]: now the tests") == 1
    # Nothing is kept: the summary, the note to go on, and a fresh copy of the new message.
    view = engine.view(session)
    assert [m.role for m in view] == ["user", "assistant", "user"]
    assert view[0] == user_text("SUMMARY OF THE WORK") and view[1].text() == CONTINUE_TURN
    assert view[2] == user_text("now the tests")
    assert rewrites(session) == ["checkpoint"]
    grow(session, 1)
    assert engine.view(session)[3:] == session.derive_messages()[len(messages) :]


def test_a_request_over_the_window_mid_turn_compacts_with_the_tool_loop_note():
    session = session_with([("fix the bug", 80)])
    ctx = context(session, WINDOW, Recorder())
    assert ctx.usage_tokens(session.derive_messages()) > WINDOW
    engine = GooseAutoCompact(WINDOW)
    engine.before_step(ctx)
    view = engine.view(session)
    assert [m.text() for m in view] == ["SUMMARY OF THE WORK", CONTINUE_TOOLS, "fix the bug"]
    assert rewrites(session) == ["checkpoint"]


def test_without_recovery_a_request_over_the_window_goes_out_as_it_is():
    session = session_with([("fix the bug", 80)])
    client = Recorder()
    engine = GooseAutoCompact(WINDOW, max_recovery=0)
    engine.before_step(context(session, WINDOW, client))
    assert client.sent == [] and engine.view(session) == session.derive_messages()


def test_a_summary_call_refused_for_length_is_sent_again_without_tool_results_from_the_middle():
    class RefuseTwice(Recorder):
        def __call__(self, request: Request) -> Reply:
            self.sent.append(request)
            if len(self.sent) <= 2:
                return Reply(error="prompt is too long: 50000 tokens > 40000 maximum")
            return Reply((Text(self.text),))

    session = session_with([("fix the bug", 80)])
    client = RefuseTwice()
    GooseAutoCompact(WINDOW).before_step(context(session, WINDOW, client))
    counts = [r.system.count("tool_response:") for r in client.sent]
    assert counts == [80, 72, 64]  # 0%, then 10% and 20% of the 80 results dropped
    assert rewrites(session) == ["checkpoint"]


def test_another_refusal_is_not_retried_and_nothing_is_rewritten():
    class Refuse(Recorder):
        def __call__(self, request: Request) -> Reply:
            self.sent.append(request)
            return Reply(error="overloaded")

    session = session_with([("fix the bug", 80)])
    client = Refuse()
    engine = GooseAutoCompact(WINDOW)
    engine.before_step(context(session, WINDOW, client))
    assert len(client.sent) == 1 and rewrites(session) == []
    assert engine.view(session) == session.derive_messages()


def test_results_are_dropped_alternately_left_and_right_of_the_middle():
    plain = tuple(user_text(str(i)) for i in range(4))
    assert drop_tool_results(plain, 50) == plain  # no results: nothing to drop
    live = session_with([("t", 6)]).derive_messages()  # results at 2, 4, 6, 8, 10, 12
    kept = drop_tool_results(live, 50)
    # Three of six: left of the middle (6), right of it (8), then one further left (4).
    assert [i for i, m in enumerate(live) if m.tool_results and m not in kept] == [4, 6, 8]
    assert len(drop_tool_results(live, 10)) == len(live) - 1  # at least one


def test_a_message_is_written_as_goose_writes_it():
    assert goose_line(user_text("hi")) == "[user]: hi"
    assert goose_line(Message("assistant", ())) == "[assistant]: <empty message>"


def test_the_factory_reads_its_settings_and_a_threshold_of_one_turns_it_off():
    assert factory(WINDOW, EngineOptions(config={"threshold": 0.5, "max_recovery": 0})).threshold == 0.5
    default = factory(WINDOW, EngineOptions())
    assert (default.threshold, default.max_recovery) == (0.8, 1)
    with pytest.raises(ValueError, match="goose-auto-compact: unknown setting"):
        factory(WINDOW, EngineOptions(config={"ratio": 0.2}))
    with pytest.raises(ValueError, match="goose-auto-compact: threshold must be a number"):
        factory(WINDOW, EngineOptions(config={"threshold": "high"}))
    session = session_with([("fix the bug", 65)])
    session.append("user/message", user_text("now the tests"))
    client = Recorder()
    GooseAutoCompact(WINDOW, threshold=1.0).before_step(context(session, WINDOW, client))
    assert client.sent == []


def test_the_threshold_must_be_passed_not_reached():
    session = session_with([("fix the bug", 65)])
    session.append("user/message", user_text("now the tests"))
    view = session.derive_messages()
    last_reply = max(i for i, m in enumerate(view) if m.role == "assistant")
    used = context(session, WINDOW).usage_tokens(view[: last_reply + 1])
    at = Recorder()
    GooseAutoCompact(WINDOW, threshold=used / WINDOW).before_step(context(session, WINDOW, at))
    assert at.sent == []  # exactly at the threshold: not over it
    over = Recorder()
    GooseAutoCompact(WINDOW, threshold=(used - 1) / WINDOW).before_step(context(session, WINDOW, over))
    assert len(over.sent) == 1


def test_a_threshold_of_one_or_more_or_zero_or_less_turns_it_off():
    assert [GooseAutoCompact(WINDOW, threshold=t).enabled() for t in (0.0, 0.01, 0.99, 1.0, 1.5)] == [
        False, True, True, False, False
    ]
