"""Tool and reasoning pairing: balanced cuts over messages, widening and orphan strips over parts."""

import pytest

from prefixbench.kernel.pairs import (
    Part,
    UnbalancedError,
    balanced_cuts,
    open_calls,
    pair_closure,
    reasoning_unit,
    strip_orphaned_reasoning,
    strip_orphaned_tool_calls,
    strip_orphaned_tool_results,
    widen_range,
    widen_reasoning_pairs,
    widen_tool_pairs,
)
from prefixbench.kernel.session import tool_result_message
from prefixbench.simulator.wire import Message, Reasoning, Text, ToolCall, ToolResult, user_text


def make_parts(spec: str) -> tuple[Part, ...]:
    """Parts from a compact spec: words are messages, letters are parts.

    ``u`` user text, ``R`` reasoning, ``T`` assistant text, ``C`` tool call, ``t`` tool result.
    Calls are numbered in order (c0, c1...) and each ``t`` answers the oldest unanswered call;
    ``K`` is a call to the compress tool.
    """
    parts: list[Part] = []
    open_ids: list[str] = []
    num_calls = 0
    for group, word in enumerate(spec.split()):
        for letter in word:
            ref = f"m{len(parts) + 1:05d}"
            match letter:
                case "u":
                    parts.append(Part(ref, "user", Text(f"user {ref}"), group))
                case "R":
                    parts.append(Part(ref, "assistant", Reasoning(f"thinking {ref}"), group))
                case "T":
                    parts.append(Part(ref, "assistant", Text(f"text {ref}"), group))
                case "C" | "K":
                    call_id = f"c{num_calls}"
                    num_calls += 1
                    open_ids.append(call_id)
                    name = "compress" if letter == "K" else "read_file"
                    parts.append(Part(ref, "assistant", ToolCall(call_id, name, "{}"), group))
                case "t":
                    call_id = open_ids.pop(0)
                    parts.append(Part(ref, "tool", ToolResult(call_id, (Text(f"result {ref}"),)), group))
                case _:
                    raise ValueError(letter)
    return tuple(parts)


def kinds(parts) -> str:
    """The spec letters of some parts, to compare views compactly."""
    letters = {"reasoning": "R", "tool-result": "t"}
    out = []
    for p in parts:
        if p.kind == "text":
            out.append("u" if p.role == "user" else "T")
        elif p.kind == "tool-call":
            out.append("K" if p.block.name == "compress" else "C")
        else:
            out.append(letters[p.kind])
    return "".join(out)


# --- the message-level API the checkpoint engine uses ---------------------------------------


def test_open_calls_counts_calls_minus_results_after_each_prefix():
    call = Message("assistant", (Text("x"), ToolCall("a", "read_file", "{}"), ToolCall("b", "read_file", "{}")))
    messages = [user_text("go"), call, tool_result_message("a", "A"), None, tool_result_message("b", "B")]
    assert open_calls(messages) == [0, 0, 2, 1, 1, 0]
    assert balanced_cuts(messages) == [True, True, False, False, False, True]


def test_open_calls_rejects_a_result_without_a_call():
    with pytest.raises(UnbalancedError, match="position 1"):
        open_calls([user_text("go"), tool_result_message("a", "A")])


# --- parts ------------------------------------------------------------------------------------


def test_part_kinds_call_ids_and_pair_roles():
    parts = make_parts("u RTC t")
    assert kinds(parts) == "uRTCt"
    assert [p.call_id for p in parts] == [None, None, None, "c0", "c0"]
    assert [p.is_reasoning for p in parts] == [False, True, False, False, False]
    assert [p.is_reply for p in parts] == [False, False, True, True, False]


def test_reasoning_unit_spans_the_run_and_its_reply():
    parts = make_parts("u RRTC t T")
    # Every member of the pair reports the same span; the bare text of message 3 has none.
    assert [reasoning_unit(i, parts) for i in range(len(parts))] == [None, (1, 4), (1, 4), (1, 4), (1, 4), None, None]


def test_reasoning_without_reply_is_no_pair():
    parts = make_parts("u R u")
    assert reasoning_unit(1, parts) is None


# --- tool-pair widening -----------------------------------------------------------------------


def test_tool_pairs_pull_the_result_forward_and_the_call_back():
    parts = make_parts("u TC t TC t")
    assert widen_tool_pairs(1, 2, parts) == (1, 3)  # call c0 pulls its result
    assert widen_tool_pairs(3, 3, parts) == (2, 3)  # result c0 pulls its call


def test_tool_pairs_stop_at_the_first_non_match_after_a_match():
    # C C t t: a range on the first call reaches its result past the unmatched second call;
    # the second result is not pulled in this pass (its id was not in the range).
    parts = make_parts("u TCC t t")
    assert widen_tool_pairs(2, 2, parts) == (2, 4)
    # A second pass (as widen_range does) then picks up c1's result.
    assert widen_tool_pairs(2, 4, parts) == (2, 5)


def test_tool_pairs_look_at_most_max_scan_parts_away():
    parts = make_parts("u TC " + "u " * 5 + "t")
    assert widen_tool_pairs(1, 2, parts, max_scan=5) == (1, 2)
    assert widen_tool_pairs(1, 2, parts, max_scan=6) == (1, 8)


def test_tool_pairs_ignore_the_compress_tool():
    parts = make_parts("u TK t")
    assert widen_tool_pairs(1, 2, parts, ignore_tools=frozenset({"compress"})) == (1, 2)
    assert widen_tool_pairs(1, 2, parts) == (1, 3)


def test_widening_an_empty_range_is_a_no_op():
    parts = make_parts("u RTC t")
    assert widen_tool_pairs(3, 2, parts) == (3, 2)
    assert widen_reasoning_pairs(3, 2, parts) == (3, 2)


def test_widen_range_composes_both_adjusters_to_a_fixpoint():
    # The range covers only the result of c0: tool pairs pull the call back, then reasoning
    # pairs pull the reasoning run before it; with the fix off only the call comes in.
    parts = make_parts("u RTC t u")
    assert widen_range(4, 4, parts, reasoning_pairs=True) == (1, 4)
    assert widen_range(4, 4, parts, reasoning_pairs=False) == (3, 4)


# --- closure and orphan strips ----------------------------------------------------------------


def test_pair_closure_follows_tool_pairs_always_and_reasoning_pairs_with_the_fix():
    parts = make_parts("u RTC t u")
    assert pair_closure([4], parts, reasoning_pairs=False) == frozenset({3, 4})
    assert pair_closure([4], parts, reasoning_pairs=True) == frozenset({1, 2, 3, 4})


def test_orphan_tool_calls_and_results_are_stripped_unless_kept():
    parts = make_parts("u TC t TCK")
    calls_stripped = strip_orphaned_tool_calls(parts)
    assert kinds(calls_stripped) == "uTCtT"
    assert kinds(strip_orphaned_tool_calls(parts, keep=lambda p: p.block.name == "compress")) == "uTCtTK"
    without_call = tuple(p for p in parts if p.kind != "tool-call")
    assert kinds(strip_orphaned_tool_results(without_call)) == "uTT"


def test_orphaned_reasoning_is_stripped_and_paired_reasoning_kept():
    parts = make_parts("u RRT u R u RC t")
    # Message 3 is reasoning alone: stripped. Pairs in messages 1 and 5 stay.
    assert kinds(strip_orphaned_reasoning(parts)) == "uRRTuuRCt"


def test_reasoning_followed_by_another_messages_reply_is_an_orphan():
    # Same positions, different messages: the reasoning of message 1 lost its own reply.
    parts = (
        Part("m00001", "assistant", Reasoning("r"), 1),
        Part("m00002", "assistant", Text("t"), 2),
    )
    assert kinds(strip_orphaned_reasoning(parts)) == "T"
