"""Refs, the message <-> part conversion and block bookkeeping of the ranges engine."""


import pytest

from msgspec.structs import replace

from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.ranges_state import (
    CompressionBlock,
    assign_refs,
    count_tokens,
    initial_state,
    make_ref,
    rebuild_messages,
    sync_blocks,
)
from prefixbench.kernel.session import tool_result_message
from prefixbench.simulator.wire import Message, Reasoning, Text, ToolCall, ToolResult, user_text

HISTORY = (
    user_text("fix the bug"),
    Message("assistant", (Reasoning("look at main"), Text("reading"), ToolCall("c1", "read_file", "{}"))),
    tool_result_message("c1", "def main(): ..."),
    Message("assistant", (Reasoning("found it", "reasoning_text"), Text("done"))),
)


def test_refs_are_five_digit_in_order_of_first_sight():
    parts, state = assign_refs(HISTORY, initial_state())
    assert [p.ref for p in parts] == ["m00001", "m00002", "m00003", "m00004", "m00005", "m00006", "m00007"]
    assert [p.group for p in parts] == [0, 1, 1, 1, 2, 3, 3]
    # Per message: its identity (position by default), first ref number and number of parts.
    assert (state.message_ids, state.message_refs, state.message_sizes) == (
        ("0", "1", "2", "3"),
        (1, 2, 5, 6),
        (1, 3, 1, 2),
    )
    assert state.num_refs == 7
    assert state.message_of("m00004") == "1" and state.message_of("m00007") == "3"
    assert make_ref(123456) == "m123456"


def test_refs_are_stable_as_history_grows():
    _, state = assign_refs(HISTORY[:2], initial_state())
    parts, state = assign_refs(HISTORY, state)
    assert [p.ref for p in parts] == ["m00001", "m00002", "m00003", "m00004", "m00005", "m00006", "m00007"]
    assert state.num_refs == 7


def test_refs_are_never_reused():
    # The engine names messages by event seq: a message seen under a new identity (say a
    # replaced event) gets fresh refs; the old ones stay retired.
    _, state = assign_refs(HISTORY[:1], initial_state(), raw_ids=["s0"])
    parts, state = assign_refs(HISTORY[:2], state, raw_ids=["s9", "s1"])
    assert [p.ref for p in parts] == ["m00002", "m00003", "m00004", "m00005"]
    assert state.message_ids == ("s0", "s9", "s1")


def test_raw_ids_must_match_the_messages():
    with pytest.raises(ValueError, match="1 raw ids for 4 messages"):
        assign_refs(HISTORY, initial_state(), raw_ids=["x"])


def test_an_identity_reused_for_another_message_is_refused():
    # Refs of later messages would shift under it; refuse rather than mislabel.
    _, state = assign_refs(HISTORY[:2], initial_state())
    with pytest.raises(ValueError, match="message '1' had 3 parts and now has 1"):
        assign_refs((HISTORY[0], HISTORY[2]), state)


def test_rebuild_round_trips_a_well_formed_history():
    parts, _ = assign_refs(HISTORY, initial_state())
    assert rebuild_messages(parts) == HISTORY
    # Given the sources, unchanged messages come back as the very same objects.
    rebuilt = rebuild_messages(parts, HISTORY)
    assert all(new is old for new, old in zip(rebuilt, HISTORY, strict=True))


def test_rebuild_puts_reasoning_first_and_splits_tool_results():
    odd = (
        Message("assistant", (Text("t"), Reasoning("r"))),
        Message("tool", (ToolResult("a", (Text("A"),)), ToolResult("b", (Text("B"),)))),
    )
    parts, _ = assign_refs(odd, initial_state())
    assert rebuild_messages(parts) == (
        Message("assistant", (Reasoning("r"), Text("t"))),
        Message("tool", (ToolResult("a", (Text("A"),)),)),
        Message("tool", (ToolResult("b", (Text("B"),)),)),
    )


def test_rebuild_keeps_parts_of_different_messages_apart():
    # Two consecutive assistant messages stay two messages: groups, not roles, decide.
    history = (Message("assistant", (Text("one"),)), Message("assistant", (Text("two"),)))
    parts, _ = assign_refs(history, initial_state())
    assert rebuild_messages(parts) == history


def _block(refs: tuple[str, ...], **changes) -> CompressionBlock:
    return replace(CompressionBlock("b1", "r1", 1, "s" * 60, None, refs, refs, (), 10, 0), **changes)


def test_sync_ages_active_blocks_and_promotes_them_at_the_threshold():
    parts, state = assign_refs(HISTORY, initial_state())
    state = replace(state, blocks=(_block(("m00002",), survived_count=3), _block(("m00003",), is_active=False)))
    config = RangesConfig(promotion_threshold=5)
    state = sync_blocks(parts, state, config)
    assert [(b.survived_count, b.generation, b.is_active) for b in state.blocks] == [
        (4, "young", True),
        (0, "young", False),
    ]
    state = sync_blocks(parts, state, config)
    assert [(b.survived_count, b.generation) for b in state.blocks] == [(5, "old"), (0, "young")]
    assert state.num_turns == 2


def test_sync_retires_a_block_none_of_whose_parts_exist():
    parts, state = assign_refs(HISTORY, initial_state())
    state = replace(state, blocks=(_block(("m00099",)),))
    state = sync_blocks(parts, state, RangesConfig())
    assert state.blocks[0].is_active is False
    assert state.blocks[0].survived_count == 0


def test_count_tokens_counts_cjk_one_each_and_the_rest_by_four():
    assert count_tokens("") == 0
    assert count_tokens("abcde") == 2
    assert count_tokens("修复错误abc") == 4 + 1
    assert count_tokens("テスト한국") == 5
