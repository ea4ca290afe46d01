"""hermes-compress (kernel/strategies/hermes.py): the trigger, the head and token-budget tail, the
pruned results, the cold summary call, where the summary lands, and the tool-pair sanitizer."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, Message, Text, ToolCall, ToolResult, user_text
from prefixbench.kernel.strategies.hermes import (
    CALL_REMOVED,
    END_MARKER,
    MERGED_HEADER,
    SUMMARY_PREFIX,
    HermesCompress,
    estimate,
    factory,
    cut_middle,
    prune,
    prune_boundary,
    sanitize,
    tail_cut,
    threshold_tokens,
)
from tests.unit.kernel.agent_sessions import Recorder, compact_twice, context, grow, left_alone, rewrites, session_with

WINDOW = 40_000  # under 512k: 75% floors at 64,000, which is over the window, so 85%: 34,000


def test_the_trigger_is_hermes_threshold_with_its_floors():
    assert threshold_tokens(WINDOW, 0.5) == 34_000
    assert threshold_tokens(32_000, 0.5) == 27_200
    assert threshold_tokens(128_000, 0.5) == 96_000  # raised to 75% under 512k
    assert threshold_tokens(512_000, 0.5) == 256_000  # 50% from 512k on
    assert threshold_tokens(200_000, 0.9) == 180_000  # a higher setting wins
    assert threshold_tokens(300_000, 0.5) == 225_000  # 75% up to 512k
    assert threshold_tokens(511_999, 0.5) == 383_999
    assert threshold_tokens(80_000, 0.5) == 64_000  # 75% is 60,000: floored at 64,000
    assert threshold_tokens(64_000, 0.5) == 54_400  # the floor reaches the window: 85%


def test_under_the_threshold_nothing_happens():
    session = session_with([("fix the bug", 40)])
    ctx = context(session, WINDOW)
    assert ctx.usage_tokens(session.derive_messages()) < 34_000
    assert left_alone(HermesCompress(WINDOW), session, WINDOW)


def test_over_the_threshold_the_middle_is_summarized_cold_between_head_and_tail():
    session = session_with([("fix the bug", 70)])
    messages = session.derive_messages()
    client = Recorder()
    ctx = context(session, WINDOW, client)
    assert ctx.usage_tokens(messages) >= 34_000
    engine = HermesCompress(WINDOW)
    engine.before_step(ctx)
    (request,) = client.sent
    # One user message with the turns as text; no system prompt, no tools: it shares no prefix.
    assert (request.system, request.tools, request.purpose) == ("", (), "compaction")
    (prompt,) = request.messages
    assert "TURNS TO SUMMARIZE:" in prompt.text() and "[ASSISTANT]: step 1\n[Tool calls:\n  read({\"n\":1})\n]" in prompt.text()
    # Results outside the protected tail were pruned first: the summarizer reads the one-line note.
    assert "[TOOL RESULT c1]: [read] n=1 (2,000 chars result)" in prompt.text()
    assert request.max_tokens is None  # Hermes sends the summary call without an output cap
    view = engine.view(session)
    # Head: protect_first_n = 3 messages after the system prompt: the task and the first call with
    # its result; that result is old, so it was pruned too.
    assert view[:2] == messages[:2]
    assert view[2].tool_results[0].content[0].text == "[read] n=0 (2,000 chars result)"
    assert view[3] == user_text(f"{SUMMARY_PREFIX}\nSUMMARY OF THE WORK\n\n{END_MARKER}")
    # Tail: the newest messages, as sent, opening on an assistant message (no split pair).
    tail = view[4:]
    assert tail == messages[len(messages) - len(tail) :] and tail[0].role == "assistant"
    # Once the old results are pruned, all that is left fits 1.5 x the tail budget; Hermes then
    # walks again with the budget itself (6,800 tokens): the tail is what it covers, plus the
    # message it stopped at, pulled back to that result's call.
    pruned, _ = prune(messages, prune_boundary(messages, 20, engine.tail_budget))
    kept = pruned[len(pruned) - len(tail) :]
    assert len(tail) == 28 and sum(map(estimate, kept[2:])) <= engine.tail_budget < sum(map(estimate, kept[1:]))
    assert rewrites(session) == ["checkpoint"]
    grow(session, 1)
    assert engine.view(session)[4:] == session.derive_messages()[len(messages) - len(tail) :]


def test_the_newest_user_message_stays_in_the_tail_behind_the_call_before_it():
    session = session_with([("fix the bug", 40), ("now the tests", 30)])
    messages = session.derive_messages()
    engine = HermesCompress(WINDOW)
    engine.before_step(context(session, WINDOW, Recorder()))
    view = engine.view(session)
    # The cut would open the tail on the user message, where a merged summary would land: Hermes
    # keeps the call and result before it as a bridge.
    assert view[4] == messages[79] and view[5].tool_results[0].call_id == "c39"
    assert view[6] == user_text("now the tests")


def test_a_summary_that_would_break_alternation_is_merged_after_the_first_tail_message():
    session = session_with([("fix the bug", 70)])
    engine = HermesCompress(WINDOW, protect_first_n=1)  # head: the task alone (a user message)
    engine.before_step(context(session, WINDOW, Recorder()))
    view = engine.view(session)
    # After a user head an assistant summary, but the tail opens on an assistant message too: the
    # summary goes into that message, after its own text, which is marked as earlier context.
    assert view[0] == user_text("fix the bug") and view[1].role == "assistant" and view[1].tool_calls
    assert view[1].blocks[0] == Text(MERGED_HEADER) and view[1].blocks[1] == Text("step 56")
    assert view[1].blocks[-1].text.endswith(f"SUMMARY OF THE WORK\n\n{END_MARKER}")
    assert view[2].role == "tool" and view[2].tool_results[0].call_id == view[1].tool_calls[0].call_id


def test_the_head_decays_and_the_tail_keeps_the_last_assistant_reply():
    session = session_with([("fix the bug", 70)])
    client = Recorder()
    engine = HermesCompress(WINDOW)
    engine.before_step(context(session, WINDOW, client))
    assert engine.head_size() == 0  # after the first compression the summary holds the head's turns
    grow(session, 70)
    engine.before_step(context(session, WINDOW, client))
    view = engine.view(session)
    # No head: the summary leads, as a user message; the task went into the summary.
    assert view[0].role == "user" and view[0].text().startswith(SUMMARY_PREFIX)
    assert all(m.text() != "fix the bug" for m in view)


def test_the_tail_floor_is_protect_last_n_capped_at_8():
    messages = session_with([("fix the bug", 30)], chars=40_000).derive_messages()
    # Each result is over the whole budget: only the floor is kept, then pulled back to the call
    # whose results end right before it (Hermes' backward alignment does that at a whole pair too).
    assert len(messages) - tail_cut(messages, 3, 100, protect_last_n=20) == 10
    assert len(messages) - tail_cut(messages, 3, 100, protect_last_n=8) == 10
    assert len(messages) - tail_cut(messages, 3, 100, protect_last_n=7) == 8
    assert len(messages) - tail_cut(messages, 3, 100, protect_last_n=5) == 6
    assert len(messages) - tail_cut(messages, 3, 100, protect_last_n=1) == 4


def test_a_second_compression_updates_the_previous_summary():
    session, client = compact_twice(HermesCompress(WINDOW), 70, WINDOW)
    assert len(client.sent) == 2
    assert "PREVIOUS SUMMARY:\nSUMMARY OF THE WORK" in client.sent[1].messages[0].text()
    assert rewrites(session) == ["checkpoint", "checkpoint"]


def test_the_second_compression_sends_the_previous_summary_once():
    session, client = compact_twice(HermesCompress(WINDOW), 70, WINDOW)
    prompt = client.sent[1].messages[0].text()
    # As PREVIOUS SUMMARY only: the summary message in the middle is not serialized again.
    assert prompt.count("SUMMARY OF THE WORK") == 1 and SUMMARY_PREFIX not in prompt


def test_the_pruning_protects_the_larger_of_the_budget_walk_and_the_floor():
    messages = session_with([("fix the bug", 70)], chars=200).derive_messages()
    n = len(messages)
    # A small budget: the floor, protect_last_n capped at 8, decides.
    assert prune_boundary(messages, 20, 100) == n - 8
    assert prune_boundary(messages, 3, 100) == n - 3
    # A larger budget protects every message it covers and the one it stopped at, beyond the floor.
    budget = sum(estimate(m) for m in messages[-30:])
    assert prune_boundary(messages, 20, budget) == n - 31
    assert prune_boundary(messages, 20, 10**9) == 0


def test_the_sanitizer_drops_orphan_results_and_strips_unanswered_calls():
    call = Message("assistant", (Text("x"), ToolCall("a", "read", "{}"), ToolCall("b", "read", "{}")))
    answered = Message("tool", (ToolResult("b", (Text("out"),)),))
    orphan = Message("tool", (ToolResult("gone", (Text("old"),)),))
    bare = Message("assistant", (ToolCall("c", "read", "{}"),))
    out = sanitize([user_text("t"), call, answered, orphan, bare, user_text("next")])
    assert [m.role for m in out] == ["user", "assistant", "tool", "assistant", "user"]
    # No stub result: the call without a result goes, the answered one stays.
    assert [c.call_id for c in out[1].tool_calls] == ["b"] and out[2] is answered
    assert out[3] == Message("assistant", (Text(CALL_REMOVED),))


def test_the_summary_goes_to_the_auxiliary_model_when_one_is_set():
    session = session_with([("fix the bug", 70)])
    client = Recorder()
    HermesCompress(WINDOW, summary_model="cheap").before_step(context(session, WINDOW, client))
    assert client.sent[0].envelope.model == "cheap"


def test_the_factory_pins_hermes_defaults_and_refuses_bad_settings():
    engine = factory(32_000, EngineOptions())
    assert (engine.threshold, engine.tail_budget, engine.head_n, engine.protect_last_n) == (27_200, 5_440, 3, 20)
    assert engine.summary_model == ""
    assert factory(128_000, EngineOptions()).tail_budget == 19_200
    assert factory(512_000, EngineOptions(config={"threshold_percent": 0.6})).threshold == 307_200
    with pytest.raises(ValueError, match="hermes-compress: unknown setting 'ratio'"):
        factory(WINDOW, EngineOptions(config={"ratio": 0.2}))
    with pytest.raises(ValueError, match="hermes-compress: protect_last_n must be an integer"):
        factory(WINDOW, EngineOptions(config={"protect_last_n": "many"}))
    with pytest.raises(ValueError, match="hermes-compress: threshold_percent must be in"):
        factory(WINDOW, EngineOptions(config={"threshold_percent": 0}))


def test_only_results_over_200_characters_are_pruned():
    messages = session_with([("t", 3)]).derive_messages()
    sized = [m if m.role != "tool" else Message("tool", (ToolResult(m.tool_results[0].call_id, (Text("y" * n),)),))
             for m, n in zip(messages, (0, 0, 150, 0, 200, 0, 201))]
    out, count = prune(tuple(sized), len(sized))
    assert count == 1 and [len(m.tool_results[0].content[0].text) for m in out if m.role == "tool"][:2] == [150, 200]
    assert out[6].tool_results[0].content[0].text == "[read] n=2 (201 chars result)"


def test_the_summarizer_reads_messages_over_6000_characters_cut():
    assert cut_middle("x" * 6_000) == "x" * 6_000
    cut = cut_middle("a" * 4_000 + "b" * 1_000 + "c" * 1_500)
    assert cut == "a" * 4_000 + "\n...[truncated]...\n" + "c" * 1_500


def test_the_tail_keeps_at_least_3_and_at_most_8_messages_when_the_budget_is_spent():
    messages = (user_text("t"), *(Message("assistant", (Text(f"{i} " + "z" * 4_000),)) for i in range(20)))
    n = len(messages)
    assert [n - tail_cut(messages, 3, 10, protect_last_n=k) for k in (1, 3, 5, 8, 20)] == [3, 3, 5, 8, 8]


def test_the_tail_keeps_the_newest_assistant_reply_before_a_run_of_bare_calls():
    def bare_call(cid: str) -> tuple[Message, Message]:
        return Message("assistant", (ToolCall(cid, "read", "{}"),)), Message("tool", (ToolResult(cid, (Text("w" * 8_000),)),))

    reply = Message("assistant", (Text("done with the first part"),))
    messages = (user_text("t"), reply, user_text("next"), *bare_call("a"), *bare_call("b"))
    # The budget keeps the last call; the newest user message pulls the cut back to it, and the
    # newest assistant reply with text (the calls after it have none) pulls it back once more.
    assert tail_cut(messages, 0, 10, protect_last_n=1) == 1
