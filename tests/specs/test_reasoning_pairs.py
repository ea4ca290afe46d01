"""Seed 000's thirteen cases: range compression never splits reasoning from its reply.

Each case runs on ``patched`` (``Preset.reasoning_pairs`` on), where it must pass, and on
``legacy`` (acp-kernel before the fix: tool-pair widening only, no orphaned-reasoning strip),
where it must fail. Three cases are structural guards meant to pass on both, and say so.

Conversations are written compactly: each word is one message, each letter one part:
``u`` user text, ``R`` reasoning, ``T`` assistant text, ``C`` tool call, ``t`` tool result::

    "u RT u RT"   user, assistant(reasoning, text), user, assistant(reasoning, text)
    parts          m1  m2 m3                      m4  m5 m6
"""

from collections.abc import Callable

import pytest

from msgspec.structs import replace

from prefixbench.kernel.engines.ranges import process_turn
from prefixbench.kernel.engines.ranges_compress import RangeRequest, apply_compression
from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.ranges_state import CompressionBlock, CompressionState, assign_refs, initial_state
from prefixbench.kernel.pairs import widen_range
from prefixbench.kernel.presets import get_preset
from prefixbench.simulator.wire import Message, Reasoning, Text, ToolCall, ToolResult

PRESETS = ("patched", "legacy")
#: No recent zone and no size gate, so three-message conversations are compressible.
CONFIG = RangesConfig(preserve_recent_messages=0, preserve_recent_tokens=0, min_compress_range=0)
SUMMARY = "The user asked for a fix; the assistant read the code and proposed a patch."


def conversation(spec: str) -> tuple[Message, ...]:
    """Messages from the compact spec; each tool result answers the oldest open call."""
    messages = []
    open_ids: list[str] = []
    num_parts = 0
    for word in spec.split():
        blocks = []
        for letter in word:
            num_parts += 1
            match letter:
                case "u" | "T":
                    blocks.append(Text(f"{'user' if letter == 'u' else 'reply'} m{num_parts:05d}"))
                case "R":
                    blocks.append(Reasoning(f"thinking m{num_parts:05d}"))
                case "C":
                    open_ids.append(f"call-{num_parts}")
                    blocks.append(ToolCall(open_ids[-1], "read_file", "{}"))
                case "t":
                    blocks.append(ToolResult(open_ids.pop(0), (Text(f"file m{num_parts:05d}"),)))
        role = "user" if word == "u" else "tool" if word == "t" else "assistant"
        messages.append(Message(role, tuple(blocks)))
    return tuple(messages)


def parts_of(spec: str):
    """The parts of a compact conversation."""
    return assign_refs(conversation(spec), initial_state())[0]


def compress(spec: str, start_ref: str, end_ref: str, pairs: bool) -> tuple[CompressionBlock, tuple[Message, ...]]:
    """Compress one range of a conversation; returns the block and the view rendered after."""
    history = conversation(spec)
    _, state, _ = process_turn(history, initial_state(), CONFIG, 0, reasoning_pairs=pairs)
    state, result = apply_compression(
        [RangeRequest(start_ref, end_ref, SUMMARY)], history, state, CONFIG, reasoning_pairs=pairs
    )
    assert result.errors == ()
    (block,) = result.blocks
    view, _, _ = process_turn(history, state, CONFIG, 0, reasoning_pairs=pairs)
    return block, view


def shape(view: tuple[Message, ...]) -> str:
    """A view in the compact spec, with ``S`` for a summary message."""
    words = []
    for message in view:
        if message.role == "system":
            words.append("S")
            continue
        letters = ""
        for block in message.blocks:
            match block:
                case Reasoning():
                    letters += "R"
                case Text():
                    letters += "u" if message.role == "user" else "T"
                case ToolCall():
                    letters += "C"
                case ToolResult():
                    letters += "t"
        words.append(letters)
    return " ".join(words)


def assert_turns_intact(view: tuple[Message, ...], history: tuple[Message, ...]) -> None:
    """Every assistant row replays exactly the reasoning the model produced with its reply."""

    def reply(message: Message) -> tuple:
        return tuple(b for b in message.blocks if not isinstance(b, Reasoning))

    produced = {reply(m): m.reasoning for m in history if m.role == "assistant"}
    for message in view:
        if message.role != "assistant":
            continue
        assert reply(message), f"an assistant row replays reasoning with no reply: {message}"
        assert message.reasoning == produced[reply(message)], f"reasoning differs from the turn's: {message}"


def run_case(check: Callable[[bool], None], preset: str, *, structural: bool = False) -> None:
    """Run a case on a preset: it must pass with the fix, and fail without it unless structural."""
    pairs = get_preset(preset).reasoning_pairs
    if pairs or structural:
        check(pairs)
    else:
        with pytest.raises(AssertionError):
            check(pairs)


# --- boundary widening (7) ---------------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS)
def test_widening_a_range_of_whole_pairs_is_a_no_op(preset):
    """Structural: a range that already holds whole pairs does not move, on any preset."""

    def check(pairs: bool) -> None:
        parts = parts_of("u RT u RT")
        assert widen_range(1, 3, parts, reasoning_pairs=pairs) == (1, 3)

    run_case(check, preset, structural=True)


@pytest.mark.parametrize("preset", PRESETS)
def test_reasoning_at_the_end_pulls_its_reply_forward(preset):
    """A range ending on reasoning is extended to the text that answers it."""

    def check(pairs: bool) -> None:
        parts = parts_of("u RT u")
        assert widen_range(0, 1, parts, reasoning_pairs=pairs) == (0, 2)

    run_case(check, preset)


@pytest.mark.parametrize("preset", PRESETS)
def test_reply_at_the_start_pulls_its_reasoning_backward(preset):
    """A range starting on a reply is extended back to the reasoning before it."""

    def check(pairs: bool) -> None:
        parts = parts_of("u RT u")
        assert widen_range(2, 3, parts, reasoning_pairs=pairs) == (1, 3)

    run_case(check, preset)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_range_straddling_two_pairs_widens_both_ways(preset):
    """Starting on the reply of one pair and ending on the reasoning of the next widens both edges."""

    def check(pairs: bool) -> None:
        parts = parts_of("u RT u RT u")
        assert widen_range(2, 4, parts, reasoning_pairs=pairs) == (1, 5)

    run_case(check, preset)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_tool_call_is_a_reasoning_companion(preset):
    """Reasoning answered by a tool call pulls the call in, and tool pairs then its result."""

    def check(pairs: bool) -> None:
        parts = parts_of("u RC t u")
        assert widen_range(0, 1, parts, reasoning_pairs=pairs) == (0, 3)

    run_case(check, preset)


@pytest.mark.parametrize("preset", PRESETS)
def test_reasoning_without_a_companion_does_not_extend(preset):
    """Structural: reasoning followed by a user message has nothing to pull, on any preset."""

    def check(pairs: bool) -> None:
        parts = parts_of("u RR u RT")
        assert widen_range(0, 1, parts, reasoning_pairs=pairs) == (0, 1)

    run_case(check, preset, structural=True)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_multi_part_reasoning_run_moves_as_one(preset):
    """Any member of a reasoning run, or its reply, widens the range to the whole run and reply."""

    def check(pairs: bool) -> None:
        parts = parts_of("u RRRT u")
        assert widen_range(0, 1, parts, reasoning_pairs=pairs) == (0, 4)
        assert widen_range(2, 2, parts, reasoning_pairs=pairs) == (1, 4)
        assert widen_range(4, 5, parts, reasoning_pairs=pairs) == (1, 5)

    run_case(check, preset)


# --- compression integration (4) ---------------------------------------------------------------


@pytest.mark.parametrize("preset", PRESETS)
def test_compression_auto_includes_the_companion_text(preset):
    """Compressing up to a reasoning part takes its text too; the view keeps no half turn."""

    def check(pairs: bool) -> None:
        spec = "u RT u RT u"
        block, view = compress(spec, "m00001", "m00002", pairs)
        assert block.effective_refs == ("m00001", "m00002", "m00003")
        assert shape(view) == "u S u RT u"
        assert_turns_intact(view, conversation(spec))

    run_case(check, preset)


@pytest.mark.parametrize("preset", PRESETS)
def test_compression_auto_includes_the_reasoning_backward(preset):
    """Compressing from a text part takes the reasoning before it; the summary sits where it was."""

    def check(pairs: bool) -> None:
        spec = "u RT u RT u"
        block, view = compress(spec, "m00003", "m00004", pairs)
        assert block.effective_refs == ("m00002", "m00003", "m00004")
        assert shape(view) == "u S RT u"
        assert_turns_intact(view, conversation(spec))

    run_case(check, preset)


@pytest.mark.parametrize("preset", PRESETS)
def test_reasoning_and_tool_call_pull_the_tool_result_through_the_fixpoint(preset):
    """Reasoning pulls its tool call, tool pairs pull the call's result: one block, no orphans."""

    def check(pairs: bool) -> None:
        spec = "u RC t u RT"
        block, view = compress(spec, "m00001", "m00002", pairs)
        assert block.effective_refs == ("m00001", "m00002", "m00003", "m00004")
        assert shape(view) == "u S u RT"
        assert_turns_intact(view, conversation(spec))

    run_case(check, preset)


@pytest.mark.parametrize("preset", PRESETS)
def test_the_pair_after_a_widened_range_survives_uncompressed(preset):
    """Widening stops at the tool result: the next turn's pair right after it stays whole."""

    def check(pairs: bool) -> None:
        spec = "u RC t RT u"
        block, view = compress(spec, "m00001", "m00002", pairs)
        assert block.effective_refs == ("m00001", "m00002", "m00003", "m00004")
        assert shape(view) == "u S RT u"
        history = conversation(spec)
        assert view[2] == history[3]  # byte-identical: reasoning and reply as produced
        assert_turns_intact(view, history)

    run_case(check, preset)


# --- orphaned reasoning strip (2) -------------------------------------------------------------


def _state_with_block(spec: str, refs: tuple[str, ...]) -> CompressionState:
    """A state whose one active block covers ``refs`` (as a legacy compression could leave it)."""
    _, state = assign_refs(conversation(spec), initial_state())
    block = CompressionBlock("b1", "r1", 1, SUMMARY, None, refs, refs, (), 40, 0)
    return replace(state, blocks=(block,))


@pytest.mark.parametrize("preset", PRESETS)
def test_dangling_reasoning_is_stripped_from_the_view(preset):
    """Reasoning whose reply is compressed away is dropped rather than replayed alone."""

    def check(pairs: bool) -> None:
        spec = "u RT u RT"
        state = _state_with_block(spec, ("m00003", "m00004"))
        view, _, _ = process_turn(conversation(spec), state, CONFIG, 0, reasoning_pairs=pairs)
        assert shape(view) == "u S RT"
        assert_turns_intact(view, conversation(spec))

    run_case(check, preset)


@pytest.mark.parametrize("preset", PRESETS)
def test_an_intact_pair_is_kept_by_the_strip(preset):
    """Structural: a pair whose reasoning and reply are both visible is never stripped."""

    def check(pairs: bool) -> None:
        spec = "u RT u RC t"
        state = _state_with_block(spec, ("m00002", "m00003"))
        history = conversation(spec)
        view, _, _ = process_turn(history, state, CONFIG, 0, reasoning_pairs=pairs)
        assert shape(view) == "u S u RC t"
        assert view[3:] == history[3:]

    run_case(check, preset, structural=True)
