"""Reasoning backfill, D677 field normalization, retained thinking turns and the relay client."""

import pytest

from prefixbench.kernel.api import StepContext
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.kernel.reasoning import (
    PLACEHOLDER,
    ReplayAdapter,
    backfill,
    backfill_value,
    fill_empty,
    real_reasoning,
    reasoning_value,
    retain_turns,
    retained_rows,
    strip_placeholder_echo,
    target_field,
    truncate_chars,
    with_reasoning,
)
from prefixbench.kernel.records import RetainedTurn
from prefixbench.kernel.session import Session
from prefixbench.simulator.wire import Envelope, Message, Reasoning, Request, Text, ToolCall, user_text


def make_row(text: str, *reasoning: tuple[str, str]) -> Message:
    """An assistant row: reasoning blocks ``(text, field)`` first, then one text block."""
    return Message("assistant", (*(Reasoning(t, f) for t, f in reasoning), Text(text)))


def reasoning_of(message: Message) -> list[tuple[str, str]]:
    return [(b.text, b.field) for b in message.blocks if isinstance(b, Reasoning)]


# --- reading --------------------------------------------------------------------------------


def test_reasoning_value_reads_one_field_and_joins_a_run():
    row = make_row("t", ("a", "reasoning_text"), ("b", "reasoning_text"), ("c", "reasoning_content"))
    assert reasoning_value(row, "reasoning_text") == "ab"
    assert reasoning_value(row, "reasoning_content") == "c"
    assert reasoning_value(row, "reasoning") is None


def test_a_leading_placeholder_echo_is_not_real_reasoning():
    assert strip_placeholder_echo(f"{PLACEHOLDER} then real") == "then real"
    assert strip_placeholder_echo(f"{PLACEHOLDER}{PLACEHOLDER}") == ""
    assert strip_placeholder_echo(f"real {PLACEHOLDER}") == f"real {PLACEHOLDER}"
    assert real_reasoning(make_row("t", (PLACEHOLDER, "reasoning_content"))) == ""


@pytest.mark.parametrize(
    ("binding", "retained", "want"),
    [
        ("deepseek-official", True, ""),
        ("deepseek-official", False, ""),
        ("deepseek-relay", True, PLACEHOLDER),
        ("deepseek-relay", False, ""),  # before ADR 0256: "" for relays too, which they reject
    ],
)
def test_backfill_value_per_binding(binding, retained, want):
    assert backfill_value(binding, retained) == want


def test_with_reasoning_keeps_an_unchanged_row_itself_and_replaces_in_place():
    row = make_row("t", ("x", "reasoning_content"))
    assert with_reasoning(row, "x", "reasoning_content") is row
    moved = with_reasoning(Message("assistant", (Text("a"), Reasoning("x"), Reasoning("y"))), "xy", "reasoning_text")
    assert moved.blocks == (Text("a"), Reasoning("xy", "reasoning_text"))
    assert with_reasoning(Message("assistant", (Text("a"),)), "", "reasoning").blocks == (Reasoning("", "reasoning"), Text("a"))


# --- normalization (D677) and the pass before it --------------------------------------------

# The D677 case: a rebuilt row stamped reasoning_content, a live relay row in reasoning_text,
# and a live row that produced no thinking.
REBUILT = make_row("rebuilt", ("r1", "reasoning_content"))
LIVE = make_row("live", ("r2", "reasoning_text"))
EMPTY = make_row("no thinking", ("", "reasoning_text"))
HISTORY = (user_text("task"), REBUILT, LIVE, EMPTY)


def test_d677_takes_the_field_of_the_newest_row_with_real_reasoning():
    assert target_field(HISTORY, "reasoning_content", normalize=True) == "reasoning_text"


def test_before_d677_the_field_is_the_first_listed_one_present():
    assert target_field(HISTORY, "reasoning", normalize=False) == "reasoning_content"


def test_target_field_defaults_when_no_row_carries_reasoning():
    rows = (user_text("task"), make_row("a"))
    assert target_field(rows, "reasoning_text", normalize=True) == "reasoning_text"
    assert target_field(rows, "reasoning_text", normalize=False) == "reasoning_text"


def test_d677_moves_real_reasoning_and_fills_only_rows_with_none():
    out = backfill(HISTORY, fill=PLACEHOLDER, default_field="reasoning_content", normalize=True)
    assert out[0] is HISTORY[0]
    assert [reasoning_of(m) for m in out[1:]] == [
        [("r1", "reasoning_text")],
        [("r2", "reasoning_text")],
        [(PLACEHOLDER, "reasoning_text")],
    ]
    assert out[2] is LIVE  # untouched rows keep their identity (and their cached rendering)


def test_before_d677_the_placeholder_overwrites_the_live_rows_real_reasoning():
    out = backfill(HISTORY, fill=PLACEHOLDER, default_field="reasoning_content", normalize=False)
    assert [reasoning_of(m) for m in out[1:]] == [
        [("r1", "reasoning_content")],
        [(PLACEHOLDER, "reasoning_content")],  # r2 is gone: the bug D677 fixed
        [(PLACEHOLDER, "reasoning_content")],
    ]


def test_d677_drops_a_leading_placeholder_echo():
    echo = make_row("echo", (f"{PLACEHOLDER}\nreal thought", "reasoning_content"))
    out = backfill((echo,), fill="", default_field="reasoning_content", normalize=True)
    assert reasoning_of(out[0]) == [("real thought", "reasoning_content")]


def test_official_backfill_fills_empty_strings_into_rows_without_reasoning():
    rows = (make_row("a", ("x", "reasoning_content")), make_row("b"))
    out = backfill(rows, fill="", default_field="reasoning_content", normalize=True)
    assert [reasoning_of(m) for m in out] == [[("x", "reasoning_content")], [("", "reasoning_content")]]


def test_backfill_never_touches_user_or_tool_rows():
    rows = (user_text("u"), Message("tool", ()))
    assert backfill(rows, fill=PLACEHOLDER, default_field="reasoning_content", normalize=True) == rows


# --- the relay client for engines that replay as stored -------------------------------------


def test_fill_empty_maps_an_empty_echo_to_the_fill_but_never_invents_a_field():
    rows = (EMPTY, make_row("no field"), LIVE)
    out = fill_empty(rows, PLACEHOLDER)
    assert reasoning_of(out[0]) == [(PLACEHOLDER, "reasoning_text")]
    assert reasoning_of(out[1]) == []  # a row that lost its reasoning still shows it
    assert out[2] is LIVE
    assert fill_empty(rows, "") == rows


def test_replay_adapter_fills_the_view_and_the_engines_own_model_calls():
    sent: list[Request] = []

    class Inner:
        name = "inner"

        def before_step(self, ctx):
            ctx.client(Request(Envelope("p", "m", "high"), (EMPTY,), purpose="compaction"))

        def view(self, session):
            return (EMPTY,)

        def run_tool(self, session, call):
            return user_text(call.name)

    adapter = ReplayAdapter(Inner(), PLACEHOLDER)
    session = Session("s")
    catalog = lambda provider, model: ModelInfo(provider, model, 1000, 100)  # noqa: E731
    adapter.before_step(StepContext(session, catalog, lambda r: sent.append(r) or Reply()))
    assert adapter.name == "inner"
    assert reasoning_of(sent[0].messages[0]) == [(PLACEHOLDER, "reasoning_text")]
    assert sent[0].purpose == "compaction"
    assert reasoning_of(adapter.view(session)[0]) == [(PLACEHOLDER, "reasoning_text")]
    assert adapter.run_tool(session, ToolCall("c", "compress", "{}")) == user_text("compress")


# --- retained thinking turns (ADR 0256 decision 2) ------------------------------------------


def test_truncate_chars_adds_an_ellipsis_only_when_cutting():
    assert truncate_chars("abc", 3) == "abc"
    assert truncate_chars("abcd", 3) == "abc…"


def test_retain_turns_keeps_the_newest_three_thinking_turns_oldest_first():
    rows = [make_row(f"text {n}", (f"thought {n}" if n != 4 else "", "reasoning_content")) for n in range(6)]
    rows.insert(2, user_text("between"))
    turns = retain_turns(rows)
    # Row 4 has no thinking, so the newest three thinking turns are 2, 3 and 5.
    assert turns == (RetainedTurn("thought 2", "text 2"), RetainedTurn("thought 3", "text 3"), RetainedTurn("thought 5", "text 5"))


def test_retain_turns_truncates_each_field_and_drops_tool_calls():
    long = Message("assistant", (Reasoning("r" * 4_500), Text("t" * 4_001), ToolCall("c", "grep", "{}")))
    (turn,) = retain_turns([long])
    assert turn == RetainedTurn("r" * 4_000 + "…", "t" * 4_000 + "…")
    assert retain_turns([long], limit=0) == ()


def test_retained_rows_are_text_only_assistant_rows_stamped_reasoning_content():
    rows = retained_rows((RetainedTurn("think", "say"), RetainedTurn("only think")))
    assert rows == (
        Message("assistant", (Reasoning("think", "reasoning_content"), Text("say"))),
        Message("assistant", (Reasoning("only think", "reasoning_content"),)),
    )


def test_replay_adapter_reads_other_attributes_through():
    class Inner:
        name = "inner"
        config = "the config"

    assert ReplayAdapter(Inner(), PLACEHOLDER).config == "the config"
