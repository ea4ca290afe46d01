"""codex-compact (kernel/strategies/codex.py): its trigger, its warm compaction turn, the history it leaves."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, Message, Text, user_text
from prefixbench.kernel.strategies.codex import COMPACT_PROMPT, SUMMARY_PREFIX, CodexCompact, factory, select_user_messages
from tests.unit.kernel.agent_sessions import Recorder, context, grow, left_alone, rewrites, session_with


def test_nothing_happens_below_ninety_percent_of_the_window():
    session = session_with([("fix the bug", 16)])
    engine = CodexCompact(10_000)
    ctx = context(session, 10_000)
    assert ctx.measure(engine.view(session)).total_tokens < 9_000
    assert left_alone(engine, session, 10_000)
    assert engine.view(session) == session.derive_messages()


def test_at_ninety_percent_the_whole_view_is_replayed_then_users_and_the_summary_remain():
    session = session_with([("fix the bug", 18)])
    client = Recorder()
    engine = CodexCompact(10_000)
    ctx = context(session, 10_000, client)
    before = engine.view(session)
    assert ctx.measure(before).total_tokens >= 9_000
    engine.before_step(ctx)
    (request,) = client.sent
    # A normal turn in the routed family: the view as sent, then the prompt (a warm prefix).
    assert request.purpose == "compaction" and request.messages == (*before, user_text(COMPACT_PROMPT))
    assert (request.envelope.reasoning_effort, request.system) == ("max", "You are a coding agent.")
    summary = user_text(f"{SUMMARY_PREFIX}\nSUMMARY OF THE WORK")
    assert engine.view(session) == (user_text("fix the bug"), summary)
    assert rewrites(session) == ["checkpoint"]
    # What comes next is appended after the summary.
    grow(session, 2)
    assert engine.view(session)[:2] == (user_text("fix the bug"), summary) and len(engine.view(session)) == 6


def test_a_second_compaction_keeps_every_user_message_but_not_the_old_summary():
    session = session_with([("fix the bug", 18)])
    engine = CodexCompact(10_000)
    client = Recorder()
    engine.before_step(context(session, 10_000, client))
    session.append("user/message", user_text("now add a test"))
    grow(session, 18)
    engine.before_step(context(session, 10_000, client))
    assert len(client.sent) == 2
    view = engine.view(session)
    assert [m.text() for m in view[:2]] == ["fix the bug", "now add a test"]
    assert len(view) == 3 and view[2].text().startswith(SUMMARY_PREFIX + "\n")
    assert rewrites(session) == ["checkpoint", "checkpoint"]


def test_user_messages_newest_first_within_the_budget_the_crossing_one_shortened():
    users = [user_text("a" * 4_000), user_text("b" * 400), user_text("c" * 400)]
    kept = select_user_messages(users, 400)
    assert [m.text()[0] for m in kept] == ["a", "b", "c"]
    assert kept[1:] == tuple(users[1:]) and "tokens cut" in kept[0].text() and len(kept[0].text()) < 4_000
    assert select_user_messages(users, 0) == ()


def test_a_compaction_turn_that_would_not_fit_drops_the_oldest_items_first():
    session = session_with([("fix the bug", 30)])
    client = Recorder()
    engine = CodexCompact(10_000)
    ctx = context(session, 10_000, client)
    engine.before_step(ctx)
    (request,) = client.sent
    assert ctx.measure(request.messages).total_tokens <= 10_000
    assert request.messages[0].role == "assistant" and request.messages[-1] == user_text(COMPACT_PROMPT)
    assert request.messages[-2] == session.derive_messages()[-1]


def test_nothing_to_compact_is_a_warning_not_a_loop():
    session = session_with([("x" * 40_000, 0)])
    client = Recorder()
    engine = CodexCompact(10_000)
    engine.before_step(context(session, 10_000, client))
    assert client.sent == [] and any(e.kind == "compaction/warning" for e in session.events)


def test_the_factory_reads_its_config_and_caps_the_limit_at_ninety_percent():
    assert factory(100_000, EngineOptions()).limit == 90_000
    assert factory(100_000, EngineOptions(config={"limit": 50_000})).limit == 50_000
    assert factory(100_000, EngineOptions(config={"limit": 500_000})).limit == 90_000
    with pytest.raises(ValueError, match="codex-compact: unknown setting 'keep'"):
        factory(100_000, EngineOptions(config={"keep": 1}))
    with pytest.raises(ValueError, match="user_budget must be an integer"):
        factory(100_000, EngineOptions(config={"user_budget": "many"}))


def test_a_summary_message_is_recognised_by_its_prefix_only():
    from prefixbench.kernel.strategies.codex import is_summary

    assert is_summary(user_text(f"{SUMMARY_PREFIX}\nanything"))
    assert not is_summary(Message("user", (Text("Another model said"),)))


def test_the_local_prompt_and_summary_prefix_follow_the_templates_at_928a707():
    # Since that commit the compact prompt asks for the one task still under way in a fixed outline
    # and the summary prefix tells the next model to go on from the next steps (paraphrased here,
    # at about the templates' lengths: 692 and 419 characters).
    assert "Next steps" in COMPACT_PROMPT and "Task under way" in COMPACT_PROMPT
    assert 550 <= len(COMPACT_PROMPT) <= 800 and 350 <= len(SUMMARY_PREFIX) <= 480
    assert "next steps" in SUMMARY_PREFIX and "do not reopen finished tasks" in SUMMARY_PREFIX
