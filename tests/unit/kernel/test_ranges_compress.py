"""``apply_compression``: resolving, gating, widening, protecting, tiers and validation."""

import pytest

from prefixbench.kernel.engines.ranges_compress import (
    CompressArgumentsError,
    RangeRequest,
    apply_compression,
    parse_compress_arguments,
)
from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.ranges_state import NudgeState, assign_refs, initial_state
from prefixbench.kernel.engines.ranges_view import render_messages
from prefixbench.kernel.session import tool_result_message
from prefixbench.simulator.wire import Message, Reasoning, Text, ToolCall, user_text

SUMMARY = "The assistant read four files and found the failing assertion in test_io."
OPEN = RangesConfig(preserve_recent_messages=0, preserve_recent_tokens=0, min_compress_range=0)


def step(n: int, tool: str = "read_file", chars: int = 100) -> tuple[Message, Message]:
    assistant = Message(
        "assistant", (Reasoning(f"think {n}"), Text(f"{n}".ljust(chars, ".")), ToolCall(f"c{n}", tool, "{}"))
    )
    return assistant, tool_result_message(f"c{n}", f"{n}".ljust(chars, "-"))


def history(num_steps: int, **kw) -> tuple[Message, ...]:
    return (user_text("start"), *(m for n in range(num_steps) for m in step(n, **kw)))


# Refs: m00001 user; step n is m(4n+2) reasoning, m(4n+3) text, m(4n+4) call, m(4n+5) result.
H = history(6)


def ask(start: str, end: str, summary: str = SUMMARY, **kw) -> RangeRequest:
    return RangeRequest(start, end, summary, **kw)


def compress(ranges, messages=H, state=None, config=OPEN, pairs=True):
    return apply_compression(ranges, messages, state or initial_state(), config, reasoning_pairs=pairs)


def test_a_range_becomes_a_tier1_block_with_exact_accounting():
    state, result = compress([ask("m00003", "m00009", topic="reads", compress_call_id="k1")])
    (block,) = result.blocks
    # Widened back to step 0's reasoning and forward to step 1's result.
    assert block.effective_refs == tuple(f"m{n:05d}" for n in range(2, 10))
    assert (block.block_id, block.run_id, block.tier, block.topic) == ("b1", "r1", 1, "reads")
    assert (block.start_ref, block.end_ref, block.compress_call_id) == ("m00003", "m00009", "k1")
    # 2 x (think: 2 + text: 25 + call: 3 + result: 25) tokens.
    assert block.compressed_tokens == 110
    assert (state.tokens_compressed, state.num_compressions, state.num_runs) == (110, 1, 1)
    assert result.text() == "compressed m00002..m00009 into b1 (tier 1, 8 parts, ~110 tokens)"


def test_unknown_and_backward_refs_are_errors_and_change_nothing():
    state, result = compress([ask("m00099", "m00100"), ask("m00009", "m00003"), ask("b7", "b8")])
    assert result.errors == (
        "unknown start ref 'm00099'",
        "range m00009..m00003 ends before it starts",
        "start ref b7 is not an active block",
    )
    assert state.blocks == () and not result.is_ok


def test_the_size_gate_rejects_the_whole_batch():
    config = RangesConfig(preserve_recent_messages=0, preserve_recent_tokens=0, min_compress_range=1_000)
    # m00002..m00009 holds 2 x (7 + 100 + 11 + 100) = 436 characters.
    state, result = compress([ask("m00002", "m00009")], config=config)
    assert result.errors == (
        "ranges hold 436 characters of uncompressed history, below the 1,000 minimum; choose a larger range",
    )
    assert state.blocks == ()


def test_overlapping_ranges_in_one_call_keep_the_earliest():
    state, result = compress([ask("m00002", "m00005"), ask("m00004", "m00009"), ask("m00010", "m00013")])
    assert [b.block_id for b in result.blocks] == ["b1", "b2"]
    assert result.warnings == ("range m00004..m00009 overlaps an earlier range; skipped",)
    assert state.blocks[1].effective_refs[0] == "m00010"


def test_summary_length_is_validated():
    _, result = compress([ask("m00002", "m00005", summary="  too short  ")])
    assert result.errors == ("m00002..m00005: summary has 9 characters, minimum 50",)
    _, result = compress([ask("m00002", "m00005", summary_max_chars=60)])
    assert result.errors == (f"m00002..m00005: summary has {len(SUMMARY)} characters, maximum 60",)


def test_protected_tools_stay_visible_with_their_reasoning():
    messages = (user_text("start"), *step(0), *step(1, tool="todo"), *step(2))
    config = RangesConfig(
        preserve_recent_messages=0, preserve_recent_tokens=0, min_compress_range=0, protected_tools=("todo",)
    )
    state, result = compress([ask("m00002", "m00013")], messages, config=config)
    (block,) = result.blocks
    assert block.direct_refs == ("m00002", "m00003", "m00004", "m00005", "m00010", "m00011", "m00012", "m00013")
    assert result.warnings == ("m00002..m00013: 4 protected tool part(s) stay visible",)
    parts, state = assign_refs(messages, state)
    view = render_messages(parts, state, config, reasoning_pairs=True)
    # The protected step replays whole, reasoning included, after the summary.
    assert view[2:] == messages[3:5]


def test_recent_parts_are_excluded_and_an_all_recent_range_fails():
    config = RangesConfig(preserve_recent_messages=4, preserve_recent_tokens=0, min_compress_range=0)
    _, result = compress([ask("m00018", "m00025")], config=config)
    # Step 5 (m00022..m00025) is the recent zone; step 4 is compressed.
    assert result.blocks[0].direct_refs == ("m00018", "m00019", "m00020", "m00021")
    assert result.warnings == ("m00018..m00025: 4 recent part(s) stay visible",)
    _, result = compress([ask("m00022", "m00025")], config=config)
    assert result.errors == ("m00022..m00025 has nothing left to compress outside the protected parts",)


def test_a_covered_ref_snaps_to_its_block_and_the_block_is_consumed():
    state, _ = compress([ask("m00002", "m00005")])
    state, result = compress([ask("m00003", "m00009")], state=state)
    (block,) = result.blocks
    assert result.warnings == ("m00003 is already compressed; using b1",)
    assert (block.block_id, block.tier, block.direct_block_ids) == ("b2", 1, ("b1",))
    assert block.direct_refs == ("m00006", "m00007", "m00008", "m00009")
    assert block.effective_refs == tuple(f"m{n:05d}" for n in range(2, 10))
    assert [b.is_active for b in state.blocks] == [False, True]


def test_a_fully_covered_message_range_asks_for_block_ids():
    state, _ = compress([ask("m00002", "m00005")])
    state, _ = compress([ask("m00006", "m00009")], state=state)
    state, result = compress([ask("b1", "b2")], state=state)
    (block,) = result.blocks
    assert (block.block_id, block.tier, block.direct_block_ids) == ("b3", 2, ("b1", "b2"))
    assert [b.is_active for b in state.blocks] == [False, False, True]
    # A message range inside the tier-2 block snaps to it, and a tier-1 range cannot consume it.
    _, result = compress([ask("m00003", "m00008")], state=state)
    assert result.warnings == ("m00003 is already compressed; using b3", "m00008 is already compressed; using b3")
    assert result.errors == ("m00003..m00008 is already compressed; use block ids (bN) to merge blocks",)


def test_block_ranges_distill_to_the_next_tier_and_stop_at_three():
    state = initial_state()
    for start in (2, 6, 10, 14):
        state, _ = compress([ask(f"m{start:05d}", f"m{start + 3:05d}")], state=state)
    state, result = compress([ask("b1", "b2")], state=state)
    assert result.blocks[0].tier == 2
    state, result = compress([ask("b3", "b4")], state=state)
    assert result.blocks[0].tier == 2
    state, result = compress([ask("b5", "b6")], state=state)
    assert (result.blocks[0].tier, result.blocks[0].direct_block_ids) == (3, ("b5", "b6"))
    state, _ = compress([ask("m00018", "m00021")], state=state)
    state, result = compress([ask("b7", "b8")], state=state)
    # A tier-3 block and a tier-1 block: the tier-1 one is consumed into tier 2, b7 stays.
    assert (result.blocks[0].tier, result.blocks[0].direct_block_ids) == (2, ("b8",))
    _, result = compress([ask("b7", "b7")], state=state, config=OPEN)
    assert result.blocks[0].tier == 3  # min(3, 3 + 1)


def test_tiers_disabled_keeps_everything_at_tier_one():
    config = RangesConfig(
        preserve_recent_messages=0, preserve_recent_tokens=0, min_compress_range=0, tiers_enabled=False
    )
    state, _ = compress([ask("m00002", "m00005")], config=config)
    state, _ = compress([ask("m00006", "m00009")], state=state, config=config)
    _, result = compress([ask("b1", "b2")], state=state, config=config)
    assert (result.blocks[0].tier, result.blocks[0].direct_block_ids) == (1, ("b1", "b2"))


def test_success_resets_the_nudge_baselines_and_failure_does_not():
    from msgspec.structs import replace

    shown = replace(initial_state(), nudge=NudgeState(10, 20, ((1, 20),)))
    state, _ = compress([ask("m00002", "m00005")], state=shown)
    assert state.nudge == NudgeState()
    state, _ = compress([ask("m00002", "m00005", summary="short")], state=shown)
    assert state.nudge == NudgeState(10, 20, ((1, 20),))


def test_the_compress_tools_own_call_is_not_followed():
    # Step 1 is a compress call whose result arrives later: widening leaves it alone.
    messages = (user_text("start"), *step(0), step(1, tool="compress")[0])
    _, result = compress([ask("m00002", "m00008")], messages)
    assert result.blocks[0].effective_refs[-1] == "m00008"


def test_parse_compress_arguments():
    args = '{"ranges":[{"startRef":"m00002","endRef":"m00009","summary":"s","topic":"t"}]}'
    assert parse_compress_arguments(args, "k1") == (RangeRequest("m00002", "m00009", "s", "t", "k1"),)
    for bad, reason in (
        ("{", "arguments are not JSON"),
        ('{"ranges":[]}', "expected"),
        ('{"ranges":[3]}', r"ranges\[0\] is not an object"),
        ('{"ranges":[{"startRef":"m1","endRef":"m2"}]}', r"ranges\[0\]\.summary must be a string"),
        ('{"ranges":[{"startRef":"m1","endRef":"m2","summary":"s","topic":4}]}', r"ranges\[0\]\.topic"),
    ):
        with pytest.raises(CompressArgumentsError, match=reason):
            parse_compress_arguments(bad)
