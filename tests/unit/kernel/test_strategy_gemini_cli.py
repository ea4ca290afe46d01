"""gemini-cli-compress (kernel/strategies/gemini_cli.py): its trigger, its split point, the two
summary calls, the rebuilt history, the truncation and masking of tool outputs, its settings."""

from __future__ import annotations

import itertools

import pytest

from prefixbench.kernel import EngineOptions, Message, Session, Text, ToolResult, count_tokens, user_text
from prefixbench.kernel.strategies.gemini_cli import (
    ACKNOWLEDGEMENT,
    COMPRESSION_SYSTEM,
    MASK_TAG,
    MERGE_SNAPSHOT,
    NEW_SNAPSHOT,
    VERIFY_PROMPT,
    GeminiCliCompress,
    factory,
    find_split_point,
    mask_tool_outputs,
    masked_output,
    truncate_to_budget,
)
from prefixbench.kernel.strategies.history import pending_count
from tests.unit.kernel.agent_sessions import ROUTED, Recorder, context, grow, left_alone, rewrites, session_with

TURNS = [("first task", 12), ("second task", 12), ("third task", 4)]


def last_prompt(messages: tuple[Message, ...]) -> int:
    """What the engine reads as the last prompt when no usage was reported: the meter on the
    history (the routed header included), less the model's last reply."""
    from prefixbench.kernel import Envelope, Header

    history = messages[: len(messages) - pending_count(messages)]
    header = Header(Envelope("p", "m", "max"), "You are a coding agent.", ())
    return count_tokens(history, header) - count_tokens(history[-1:])


def test_the_trigger_is_the_last_prompt_reaching_the_threshold_of_the_window():
    session = session_with(TURNS)
    tokens = last_prompt(session.derive_messages())
    below, at = tokens * 2 + 2, tokens * 2  # 0.5 * window just above the prompt, then equal to it
    assert left_alone(GeminiCliCompress(below), session, below)
    client = Recorder()
    GeminiCliCompress(at).before_step(context(session, at, client))
    assert len(client.sent) == 2 and rewrites(session) == ["checkpoint"]
    # A configured threshold moves it.
    client = Recorder()
    GeminiCliCompress(at, compression_threshold=0.6).before_step(context(session_with(TURNS), at, client))
    assert client.sent == []


def test_the_pending_tool_results_are_not_counted_nor_compressed():
    messages = session_with(TURNS).derive_messages()
    assert messages[-1].role == "tool" and pending_count(messages) == 1
    assert pending_count(messages[:-1]) == 0
    assert pending_count((*messages[:-1], user_text("next"))) == 1


def test_the_split_lands_on_a_user_message_so_no_call_is_parted_from_its_result():
    messages = session_with(TURNS).derive_messages()
    history = messages[: len(messages) - pending_count(messages)]
    seen = set()
    for fraction in (0.05, 0.2, 0.4, 0.5, 0.7, 0.9, 0.99):
        split = find_split_point(history, fraction)
        seen.add(split)
        assert 0 < split < len(history) and history[split].role == "user"
        calls = {c.call_id for m in history[:split] for c in m.tool_calls}
        results = {b.call_id for m in history[split:] for b in m.blocks if isinstance(b, ToolResult)}
        assert not calls & results
    assert seen == {25, 50}  # the two later user messages: 25 messages per 12-step turn
    # 70% of the characters lie past the second task: the split falls on the third.
    assert find_split_point(history, 0.7) == 50


def test_one_long_turn_has_no_point_to_split_at_unless_it_ended():
    messages = session_with([("only task", 30)]).derive_messages()
    history = messages[:-1]  # ends on a model tool call
    assert all(find_split_point(history, f) == 0 for f in (0.1, 0.7, 0.99))
    ended = (*history[:-1], Message("assistant", (Text("done"),)))
    assert find_split_point(ended, 0.7) == len(ended)  # everything may go
    with pytest.raises(ValueError, match="between 0 and 1"):
        find_split_point(history, 1.0)


def test_a_single_turn_session_never_compresses():
    session = session_with([("only task", 30)])
    assert left_alone(GeminiCliCompress(10_000), session, 10_000)


def test_the_rebuilt_history_is_the_snapshot_an_acknowledgement_then_the_kept_part():
    session = session_with(TURNS)
    window = last_prompt(session.derive_messages()) * 2
    client = Recorder("<state_snapshot>S1</state_snapshot>")
    engine = GeminiCliCompress(window)
    engine.before_step(context(session, window, client))
    messages = session.derive_messages()
    history = messages[:-1]
    split = find_split_point(history, 0.7)
    first, second = client.sent
    # The snapshot call: the history before the split, natively, then the ask; own system, no tools.
    assert first.messages[:-1] == history[:split]
    assert first.messages[-1].text().startswith(NEW_SNAPSHOT)
    assert (first.system, first.tools, first.purpose) == (COMPRESSION_SYSTEM, (), "compaction")
    # The verification call extends it: the snapshot as the model's, then the check.
    assert second.messages == (*history[:split], Message("assistant", (Text("<state_snapshot>S1</state_snapshot>"),)), user_text(VERIFY_PROMPT))
    assert second.system == COMPRESSION_SYSTEM
    view = engine.view(session)
    assert view == (
        user_text("<state_snapshot>S1</state_snapshot>"),
        Message("assistant", (Text(ACKNOWLEDGEMENT),)),
        *history[split:],
        messages[-1],
    )
    # The next compression merges into the snapshot it finds in the history.
    grow(session, 24)
    engine.before_step(context(session, window, client))
    assert client.sent[2].messages[0] == user_text("<state_snapshot>S1</state_snapshot>")
    assert client.sent[2].messages[-1].text().startswith(MERGE_SNAPSHOT)


def test_without_verify_one_call():
    session = session_with(TURNS)
    window = last_prompt(session.derive_messages()) * 2
    client = Recorder()
    GeminiCliCompress(window, verify=False).before_step(context(session, window, client))
    assert len(client.sent) == 1 and rewrites(session) == ["checkpoint"]


def test_a_compression_that_inflates_is_dropped_and_later_ones_only_truncate():
    session = session_with(TURNS, chars=1_000)
    window = last_prompt(session.derive_messages()) * 2
    client = Recorder("x" * 40_000)  # a snapshot larger than what it replaces
    engine = GeminiCliCompress(window, function_response_budget=100, truncate_tool_output_threshold=100)
    engine.before_step(context(session, window, client))
    assert len(client.sent) == 2 and rewrites(session) == [] and engine.failed
    grow(session, 1, chars=1_000)
    engine.before_step(context(session, window, client))
    assert len(client.sent) == 2  # no summary call again
    assert rewrites(session) == ["truncate"]
    view = engine.view(session)
    assert view[0] == user_text("first task")
    cut = [m for m in view if m.role == "tool" and "characters left out" in str(m)]
    assert len(cut) == 28  # each output of the history is over the 100-token budget alone
    assert view[-1] == session.derive_messages()[-1]  # the pending result is not history yet


def test_tool_outputs_past_the_budget_are_cut_newest_kept_whole():
    messages = session_with([("task", 6)], chars=4_000).derive_messages()
    out = truncate_to_budget(messages, 2_500, 1_000)  # 1,000 tokens each: the newest two fit
    tools = [(a, b) for a, b in zip(messages, out, strict=True) if a.role == "tool"]
    assert [a == b for a, b in tools] == [False, False, False, False, True, True]
    cut = tools[0][1].blocks[0]
    assert isinstance(cut, ToolResult) and cut.call_id == tools[0][0].blocks[0].call_id
    text = cut.content[0].text
    assert "first 200 and last 800 characters" in text and len(text) < 1_200
    assert [m for m in out if m.role != "tool"] == [m for m in messages if m.role != "tool"]


def test_masking_fires_past_the_protected_outputs_once_enough_is_prunable():
    messages = session_with([("task", 8)], chars=4_000).derive_messages()[:-1]  # ends on a call
    # 1,000 tokens an output: the newest 3 are protected (the one crossing 3,000 is prunable).
    assert mask_tool_outputs(messages, 3_000, 5_000, True) is None  # 4,000 prunable < 5,000
    masked = mask_tool_outputs(messages, 3_000, 4_000, True)
    assert masked is not None
    tools = [(a, b) for a, b in zip(messages, masked, strict=True) if a.role == "tool"]
    assert [a == b for a, b in tools] == [False, False, False, False, True, True, True]
    block = tools[0][1].blocks[0]
    assert block.call_id == tools[0][0].blocks[0].call_id and f"<{MASK_TAG}>" in block.content[0].text
    assert "output of read" in block.content[0].text
    # Masked outputs are not masked again.
    assert mask_tool_outputs(masked, 3_000, 1, True) is None


def test_the_engine_masks_and_declares_it():
    session = session_with([("task", 8)], chars=4_000)
    engine = GeminiCliCompress(10**6, masking_protection_tokens=3_000, masking_min_prunable_tokens=4_000)
    engine.before_step(context(session, 10**6, Recorder()))
    assert rewrites(session) == ["mask"]
    assert sum(f"<{MASK_TAG}>" in str(m) for m in engine.view(session)) == 4
    assert engine.view(session)[-1] == session.derive_messages()[-1]  # the pending result untouched
    off = GeminiCliCompress(10**6, masking=False, masking_protection_tokens=3_000, masking_min_prunable_tokens=4_000)
    fresh = session_with([("task", 8)], chars=4_000)
    off.before_step(context(fresh, 10**6, Recorder()))
    assert rewrites(fresh) == []


def test_the_factory_reads_every_setting_with_the_sources_defaults():
    engine = factory(32_000, EngineOptions())
    assert (engine.threshold, engine.preserve, engine.budget, engine.truncate_chars) == (0.5, 0.3, 50_000, 40_000)
    assert (engine.verify, engine.masking, engine.protection, engine.min_prunable, engine.protect_latest) == (
        True, True, 50_000, 30_000, True,
    )
    settings = {
        "compression_threshold": 0.7, "preserve_fraction": 0.4, "function_response_budget": 10,
        "truncate_tool_output_threshold": 20, "verify": False, "masking": False,
        "masking_protection_tokens": 30, "masking_min_prunable_tokens": 40, "masking_protect_latest_turn": False,
    }
    engine = factory(32_000, EngineOptions(config=settings))
    got = (engine.threshold, engine.preserve, engine.budget, engine.truncate_chars, engine.verify, engine.masking,
           engine.protection, engine.min_prunable, engine.protect_latest)
    assert got == tuple(settings.values())
    with pytest.raises(ValueError, match="gemini-cli-compress: unknown setting 'threshold'"):
        factory(32_000, EngineOptions(config={"threshold": 0.5}))
    with pytest.raises(ValueError, match="preserve_fraction must be between 0 and 1"):
        factory(32_000, EngineOptions(config={"preserve_fraction": 1}))
    with pytest.raises(ValueError, match="verify must be true or false"):
        factory(32_000, EngineOptions(config={"verify": 1}))


@pytest.mark.parametrize(("turns", "steps"), list(itertools.product([1, 2, 3], [3, 9])))
def test_every_view_pairs_each_result_with_a_call_before_it(turns, steps):
    session = session_with([(f"task {t}", steps) for t in range(turns)], chars=3_000)
    engine = GeminiCliCompress(8_000, masking_protection_tokens=1_000, masking_min_prunable_tokens=500)
    for _ in range(4):
        engine.before_step(context(session, 8_000, Recorder()))
        view = engine.view(session)
        called: set[str] = set()
        for message in view:
            called |= {c.call_id for c in message.tool_calls}
            for block in message.blocks:
                if isinstance(block, ToolResult):
                    assert block.call_id in called
        grow(session, 2, chars=3_000)


def test_the_threshold_must_be_a_share_of_the_window():
    # Gemini CLI treats 0 as unset (its default then applies); here 0 or above 1 is refused.
    for bad in (0, 1.5):
        with pytest.raises(ValueError, match=r"compression_threshold must be in \(0, 1\]"):
            factory(32_000, EngineOptions(config={"compression_threshold": bad}))
    assert factory(32_000, EngineOptions(config={"compression_threshold": 1})).threshold == 1


def test_a_snapshot_in_any_message_makes_the_ask_a_merge():
    """Gemini CLI looks for ``<state_snapshot>`` in every content's text, the model's too."""
    session = Session("s")
    session.log_header(ROUTED)
    session.append("user/message", user_text("first task"))
    session.append("assistant/message", Message("assistant", (Text("I keep a <state_snapshot> of my own"),)))
    grow(session, 10)
    session.append("user/message", user_text("second task"))
    grow(session, 10)
    session.append("user/message", user_text("third task"))
    grow(session, 3)
    window = last_prompt(session.derive_messages()) * 2
    client = Recorder()
    GeminiCliCompress(window).before_step(context(session, window, client))
    assert client.sent and client.sent[0].messages[-1].text().startswith(MERGE_SNAPSHOT)


def test_a_user_message_exactly_at_the_share_is_the_split():
    a, b = user_text("x" * 100), Message("assistant", (Text("y" * 100),))
    # The first half ends exactly at the second user message: it is the split (at or past the share).
    assert find_split_point((a, b, a, b), 0.5) == 2


def test_the_snapshot_call_replays_the_untruncated_history_when_it_fits_the_window():
    session = session_with(TURNS, chars=1_000)
    window = last_prompt(session.derive_messages()) * 2
    client = Recorder()
    engine = GeminiCliCompress(window, function_response_budget=100, truncate_tool_output_threshold=100)
    engine.before_step(context(session, window, client))
    history = session.derive_messages()[:-1]
    split = find_split_point(truncate_to_budget(history, 100, 100), 0.7)
    assert client.sent[0].messages[:-1] == history[:split]  # as it was, not the cut outputs
    assert not any("characters left out" in str(m) for m in client.sent[0].messages)
    # The view after it carries the cut outputs.
    assert any("characters left out" in str(m) for m in engine.view(session))


def test_a_masked_preview_keeps_250_characters_at_each_end():
    body = "".join(chr(65 + i % 26) for i in range(2_000))
    text = masked_output("read", body, 500)
    assert f"{body[:250]}\n... [cut] ...\n{body[-250:]}" in text
    assert body[:251] not in text and body[-251:] not in text
    assert body[:500] in masked_output("read", body[:500], 125)  # 500 characters: whole


def test_masking_leaves_the_latest_message_out_of_the_count():
    messages = session_with([("task", 8)], chars=4_000).derive_messages()  # ends on a tool result
    assert messages[-1].role == "tool"
    masked = mask_tool_outputs(messages, 3_000, 4_000, True)
    assert masked is not None
    tools = [a == b for a, b in zip(messages, masked, strict=True) if a.role.startswith("tool")]
    # The latest result is left out; the three before it are protected; the older four are masked.
    assert tools == [False, False, False, False, True, True, True, True]
    unprotected = mask_tool_outputs(messages, 3_000, 4_000, False)
    assert [a == b for a, b in zip(messages, unprotected, strict=True) if a.role == "tool"] == [False] * 5 + [True] * 3
