"""continue-cli-compact (kernel/strategies/continue_cli.py): cn's threshold, its warm compaction
turn, the pruning of that turn from its end, and the summary that replaces the whole history."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, Message, Session, Text, ToolCall, ToolResult, user_text
from prefixbench.kernel.strategies.continue_cli import (
    COMPACTION_PROMPT,
    ContinueCliCompact,
    compaction_threshold,
    factory,
    output_reserve,
    prune_last,
)
from tests.unit.kernel.agent_sessions import ROUTED, Recorder, context, grow, left_alone, rewrites, session_with

WINDOW = 40_000  # output reserve 14,000; buffer min(max(14,000, 5,200), 15,000): compact at 12,000


def test_the_threshold_reserves_the_output_and_a_capped_buffer():
    assert [output_reserve(w, None) for w in (32_000, 128_000, 512_000)] == [11_200, 44_800, 64_000]
    assert [compaction_threshold(w, None) for w in (32_000, 40_000, 128_000, 512_000)] == [9_600, 12_000, 68_200, 433_000]
    # A configured output cap replaces the 35% reserve; the ratio buffer wins when it is larger.
    assert compaction_threshold(128_000, 8_000) == 128_000 - 8_000 - 15_000
    assert compaction_threshold(40_000, 2_000) == 40_000 - 2_000 - 7_600


def test_under_the_threshold_nothing_happens():
    session = session_with([("fix the bug", 10)])
    ctx = context(session, WINDOW)
    assert ctx.measure(session.derive_messages()).total_tokens < 12_000
    assert left_alone(ContinueCliCompact(WINDOW), session, WINDOW)


def test_at_the_threshold_a_warm_turn_summarizes_and_only_the_summary_is_left():
    session = session_with([("fix the bug", 25)])
    messages = session.derive_messages()
    client = Recorder()
    engine = ContinueCliCompact(WINDOW)
    ctx = context(session, WINDOW, client)
    assert ctx.measure(messages).total_tokens >= 12_000
    engine.before_step(ctx)
    (request,) = client.sent
    # The history as sent, then the ask, under the routed system prompt and tools: warm.
    assert request.messages == (*messages, user_text(COMPACTION_PROMPT))
    assert (request.system, request.tools, request.purpose) == (ROUTED.system, ROUTED.tools, "compaction")
    view = engine.view(session)
    assert view == (Message("assistant", view[0].blocks),) and view[0].text() == "SUMMARY OF THE WORK"
    assert rewrites(session) == ["checkpoint"]
    grow(session, 1)
    assert engine.view(session)[1:] == session.derive_messages()[len(messages) :]


def test_the_task_and_the_pending_results_go_too():
    session = session_with([("fix the bug", 25)])
    engine = ContinueCliCompact(WINDOW)
    engine.before_step(context(session, WINDOW, Recorder()))
    assert all(m.text() != "fix the bug" and not m.tool_results for m in engine.view(session))


def test_a_compaction_turn_that_would_not_fit_is_pruned_from_its_end_pairs_whole():
    session = session_with([("fix the bug", 50)])
    messages = session.derive_messages()
    client = Recorder()
    ContinueCliCompact(WINDOW).before_step(context(session, WINDOW, client))
    (request,) = client.sent
    sent = request.messages[:-1]
    assert len(sent) < len(messages) and sent == messages[: len(sent)]
    assert sent[-1].role == "tool"  # a call never loses its result
    assert context(session, WINDOW).measure(request.messages).total_tokens <= WINDOW - 14_000 - 150


def test_prune_last_drops_a_call_with_its_result():
    messages = session_with([("t", 2)]).derive_messages()  # user, assistant, tool, assistant, tool
    assert prune_last(messages) == messages[:3]
    assert prune_last(messages[:2]) == ()  # the one before is the user message: both go
    assert prune_last((user_text("a"),)) == ()
    reply = Message("assistant", user_text("done").blocks)
    assert prune_last((*messages[:3], reply)) == messages[:3]


def test_prune_last_drops_a_parallel_batch_whole():
    task = user_text("task")
    calls = Message("assistant", (Text("go"), ToolCall("a", "read", "{}"), ToolCall("b", "read", "{}")))
    results = [Message("tool", (ToolResult(cid, (Text("out"),)),)) for cid in "ab"]
    assert prune_last((task, calls, *results)) == (task,)
    assert prune_last((task, calls, results[0])) == (task,)


def test_a_pruned_compaction_turn_leaves_no_call_unanswered():
    session = Session("s")
    session.log_header(ROUTED)
    session.append("user/message", user_text("task"))
    session.append("assistant/message", Message("assistant", (Text("go"), ToolCall("a", "read", "{}"), ToolCall("b", "read", "{}"))))
    for cid in "ab":
        session.append("tool/result", Message("tool", (ToolResult(cid, (Text("word " * 12_000),)),)))
    client = Recorder()
    ContinueCliCompact(32_000).before_step(context(session, 32_000, client))
    (request,) = client.sent
    called = {c.call_id for m in request.messages for c in m.tool_calls}
    answered = {r.call_id for m in request.messages for r in m.tool_results}
    assert called == answered


def test_the_factory_reads_max_tokens():
    assert factory(WINDOW, EngineOptions(config={"max_tokens": 2_000})).threshold == 30_400
    assert factory(WINDOW, EngineOptions()).threshold == 12_000
    with pytest.raises(ValueError, match="continue-cli-compact: unknown setting"):
        factory(WINDOW, EngineOptions(config={"threshold": 0.8}))
    with pytest.raises(ValueError, match="continue-cli-compact: max_tokens must be an integer"):
        factory(WINDOW, EngineOptions(config={"max_tokens": "big"}))
    with pytest.raises(ValueError, match="leaves no room"):
        factory(WINDOW, EngineOptions(config={"max_tokens": 40_000}))


def test_at_exactly_the_threshold_it_compacts():
    session = session_with([("fix the bug", 25)])
    used = context(session, WINDOW).measure(session.derive_messages()).total_tokens
    # A window whose threshold (with a 2,000-token output cap) is exactly what the history uses.
    window = next(w for w in range(used, 2 * used + 20_000) if compaction_threshold(w, 2_000) == used)
    client = Recorder()
    ContinueCliCompact(window, 2_000).before_step(context(session, window, client))
    assert len(client.sent) == 1
    one_under = Recorder()
    ContinueCliCompact(window + 1, 2_000).before_step(context(session, window + 1, one_under))
    assert compaction_threshold(window + 1, 2_000) > used and one_under.sent == []


def test_the_compaction_turn_keeps_150_tokens_for_the_prompt():
    session = session_with([("fix the bug", 25)])
    messages = session.derive_messages()
    asked = context(session, WINDOW).measure((*messages, user_text(COMPACTION_PROMPT))).total_tokens
    # The whole turn fits window - max_tokens, but not window - max_tokens - 150: it is pruned.
    window = asked + 2_000 + 100
    client = Recorder()
    ContinueCliCompact(window, 2_000).before_step(context(session, window, client))
    (request,) = client.sent
    assert len(request.messages) < len(messages) + 1
    roomy = Recorder()
    ContinueCliCompact(window + 50, 2_000).before_step(context(session, window + 50, roomy))
    assert roomy.sent[0].messages == (*messages, user_text(COMPACTION_PROMPT))
