"""The compressed view: summaries in place, truncations, hidden compress calls, cleanup, tags."""


from msgspec.structs import replace

from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.ranges_state import (
    CompressionBlock,
    CompressionState,
    assign_refs,
    initial_state,
    is_block_ref,
    is_message_ref,
)
from prefixbench.kernel.engines.ranges_view import (
    SUMMARY_MARKER,
    render_messages,
    render_parts,
    tag_parts,
    truncation_marker,
)
from prefixbench.kernel.session import tool_result_message
from prefixbench.simulator.wire import Message, Reasoning, Text, ToolCall, ToolResult, user_text

CONFIG = RangesConfig()
SUMMARY = "Read main.py and found the off-by-one in the loop bound."


def step(n: int, *, reasoning: bool = True, tool: str = "read_file", result: str | None = None) -> tuple[Message, ...]:
    """One assistant tool step (reasoning, text, call) and its result."""
    blocks = (Reasoning(f"think {n}"),) if reasoning else ()
    call = ToolCall(f"c{n}", tool, "{}")
    out = (Message("assistant", (*blocks, Text(f"step {n}"), call)),)
    return out if result is None and tool == "compress" else (*out, tool_result_message(f"c{n}", result or f"out {n}"))


HISTORY = (user_text("go"), *step(1), *step(2), user_text("more"), *step(3))
#  refs:   m1            m2 m3 m4 m5  m6 m7 m8 m9  m10            m11 m12 m13 m14


def state_with(*blocks: CompressionBlock, history=HISTORY, **changes) -> CompressionState:
    _, state = assign_refs(history, initial_state())
    return replace(state, blocks=blocks, **changes)


def block(number: int, refs: tuple[str, ...], **changes) -> CompressionBlock:
    return replace(CompressionBlock(f"b{number}", "r1", 1, SUMMARY, None, refs, refs, (), 30, 0), **changes)


def refs(first: int, last: int) -> tuple[str, ...]:
    return tuple(f"m{n:05d}" for n in range(first, last + 1))


def view_of(state: CompressionState, history=HISTORY, config=CONFIG, pairs=True) -> tuple[Message, ...]:
    parts, state = assign_refs(history, state)
    return render_messages(parts, state, config, reasoning_pairs=pairs)


def test_without_blocks_the_view_is_the_history():
    assert view_of(initial_state()) == HISTORY


def test_a_block_renders_its_summary_where_its_first_part_was():
    view = view_of(state_with(block(1, refs(6, 9))))
    assert view[:2] == HISTORY[:2]
    assert view[3] == Message("system", (Text(f"{SUMMARY_MARKER}\n{SUMMARY}"),))
    assert view[4:] == HISTORY[5:]
    assert len(view) == len(HISTORY) - 1  # step 2's two messages became one summary


def test_the_first_user_message_stays_and_the_summary_follows_it():
    view = view_of(state_with(block(1, refs(1, 9), topic="setup")), config=RangesConfig(summary_role="user"))
    assert view[0] == HISTORY[0]
    assert view[1] == Message("user", (Text(f"{SUMMARY_MARKER} — setup\n{SUMMARY}"),))
    assert view[2:] == HISTORY[5:]


def test_inactive_blocks_do_not_render():
    assert view_of(state_with(block(1, refs(2, 5), is_active=False))) == HISTORY


def test_truncated_tool_outputs_keep_their_head_and_tail():
    big = "a" * 2500 + "b" * 1000 + "c" * 2500
    history = (user_text("go"), *step(1, result=big), *step(2, result="x" * 4000))
    state = state_with(history=history, truncated=("m00005", "m00009"))
    view = view_of(state, history)
    (result,) = view[2].tool_results
    marker = truncation_marker(1500)  # the original's tokens: 6,000 chars / 4
    assert result.content == (Text("a" * 2000 + marker + "c" * 2000),)
    assert result.call_id == "c1"
    assert view[4] == history[4]  # 4,000 chars or less is never cut


def test_hidden_compress_calls_keep_the_newest_two():
    # Three spent compress calls (their blocks were consumed) and one whose block is live.
    history = (
        user_text("go"),
        *step(1),
        *(m for n in (2, 3, 4, 5) for m in step(n, tool="compress", result="compressed")),
    )
    spent = [block(n, (f"m{n:05d}",), is_active=False, compress_call_id=f"c{n}") for n in (2, 3, 4)]
    live = block(5, ("m00099",), compress_call_id="c5")
    view = view_of(state_with(block(1, ()), *spent, live, history=history), history)
    calls = [c.call_id for m in view for c in m.tool_calls]
    assert calls == ["c1", "c3", "c4", "c5"]
    # The hidden call's result went with it; its reasoning and text stay as produced.
    assert [r.call_id for m in view for r in m.tool_results] == ["c1", "c3", "c4", "c5"]
    assert view[3] == Message("assistant", (Reasoning("think 2"), Text("step 2")))


def test_cleanup_strips_orphans_in_order_reasoning_last():
    # A block covers only step 1's result: the call loses its result and is stripped; its
    # message is left with reasoning and text, a whole pair, so it stays. Step 2 loses its
    # text and call to another block: its reasoning is stripped (outermost) with the fix only.
    b1 = block(1, ("m00005",))
    b2 = block(2, ("m00007", "m00008", "m00009"))
    view = view_of(state_with(b1, b2))
    assert view[1] == Message("assistant", (Reasoning("think 1"), Text("step 1")))
    assert [m.role for m in view] == ["user", "assistant", "system", "system", "user", "assistant", "tool"]
    legacy = view_of(state_with(b1, b2), pairs=False)
    assert Message("assistant", (Reasoning("think 2"),)) in legacy


def test_an_in_flight_compress_call_stays_without_its_result():
    history = (user_text("go"), *step(1), *step(2, tool="compress"))
    view = view_of(initial_state(), history)
    assert view == history
    # Once answered, a compress call whose result is compressed away is an orphan too.
    answered = (*history, tool_result_message("c2", "compressed"))
    view = view_of(state_with(block(1, ("m00009",)), history=answered), answered)
    assert [c.call_id for m in view for c in m.tool_calls] == ["c1"]


def test_tags_are_off_by_default_and_never_touch_reasoning():
    parts, state = assign_refs(HISTORY, initial_state())
    view = render_parts(parts, state, CONFIG, reasoning_pairs=True)
    assert tag_parts(view, state, CONFIG) == (view, state)
    tagged, state = tag_parts(view, state, RangesConfig(render_tags="text-only"))
    assert tagged[0].block == Text('go <acp tokens="1" type="text">m00001</acp>')
    assert tagged[1].block == Reasoning("think 1")
    assert tagged[3].block == ToolCall("c1", "read_file", "{}")
    assert state.token_snapshot[:2] == (("m00001", 1), ("m00003", 2))


def test_all_tags_calls_and_results_with_frozen_token_counts():
    parts, state = assign_refs(HISTORY[:3], initial_state())
    state = replace(state, token_snapshot=(("m00005", 999),))
    view = render_parts(parts, state, CONFIG, reasoning_pairs=True)
    tagged, state = tag_parts(view, state, RangesConfig(render_tags="all"))
    # "read_file" + "{}" is 11 characters: 3 tokens.
    assert tagged[3].block == ToolCall("c1", "read_file", '{} <acp tokens="3" type="tool-call">m00004</acp>')
    assert tagged[4].block == ToolResult(
        "c1", (Text("out 1"), Text('<acp tokens="999" type="tool-result">m00005</acp>'))
    )


def test_a_ref_of_non_ascii_digits_is_no_ref():
    # "m²" passed str.isdigit, and ref_number's int() raised ValueError on it.
    assert not is_message_ref("m\u00b2") and not is_block_ref("b\u00b2") and not is_message_ref("m\u0663")
    assert is_message_ref("m00012") and is_block_ref("b3")
