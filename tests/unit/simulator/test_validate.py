"""Strictness profiles: which requests a DeepSeek thinking endpoint answers with HTTP 400.

Also pins reasoning on the wire: a reasoning block and its field are part of the rendered byte
prefix, so the cache sees a rewritten or moved reasoning as a divergence.
"""

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.render import render_message, render_request
from prefixbench.simulator.validate import (
    PROFILES,
    LenientValidator,
    ReasoningReplayValidator,
    is_thinking,
    make_validator,
    turn_key,
)
from prefixbench.simulator.wire import (
    Envelope,
    Message,
    Reasoning,
    Request,
    Text,
    ToolCall,
    ToolResult,
    ToolSchema,
    user_text,
)

THINKING = Envelope("deepseek", "deepseek-v4-flash", "high")
TOOLS = (ToolSchema.make("read_file", "Read a file.", {"type": "object"}),)
OFFICIAL_400 = "The reasoning_content in the thinking mode must be passed back to the API."


def make_turn(n: int, reasoning: str | None, field: str = "reasoning_content") -> Message:
    """An assistant turn calling read_file, with reasoning first when given."""
    blocks = (Text(f"note {n}"), ToolCall(f"call-{n}", "read_file", f'{{"i":{n}}}'))
    if reasoning is not None:
        blocks = (Reasoning(reasoning, field), *blocks)
    return Message("assistant", blocks)


def make_history(*turns: Message, envelope: Envelope = THINKING, tools=TOOLS) -> Request:
    """A request: one user message, then each turn followed by its tool result."""
    messages: list[Message] = [user_text("fix the bug")]
    for turn in turns:
        messages.append(turn)
        messages.extend(Message("tool", (ToolResult(c.call_id, (Text("body"),)),)) for c in turn.tool_calls)
    return Request(envelope, tuple(messages), "sys", tools)


def emit(validator, *turns: Message) -> None:
    """Tell the validator the model produced these turns."""
    for turn in turns:
        validator.accepted(make_history(), turn.blocks)


# --- reasoning on the wire ---------------------------------------------------------------


def test_reasoning_renders_its_field_and_text_into_the_message_unit():
    unit = render_message(make_turn(1, "step by step", "reasoning_text"))
    assert unit.data.startswith(
        b'{"role":"assistant","content":[{"type":"reasoning","field":"reasoning_text","text":"step by step"},'
    )
    assert unit.block_starts[0] == len(b'{"role":"assistant","content":[')


def test_a_rewritten_reasoning_diverges_the_cache_at_that_block():
    # Same turn, reasoning rewritten to the placeholder: the prefix breaks inside the reasoning.
    provider = SimulatedProvider()
    provider.send(make_history(make_turn(1, "real thought")))
    observation = provider.send(make_history(make_turn(1, "[reasoning not retained for this turn]")))
    assert observation.divergence is not None
    assert (observation.divergence.message_idx, observation.divergence.block_idx) == (1, 0)
    assert observation.cached_tokens < observation.prompt_tokens


def test_moving_reasoning_to_another_field_changes_the_bytes():
    a = render_request(make_history(make_turn(1, "x", "reasoning_content")))
    b = render_request(make_history(make_turn(1, "x", "reasoning_text")))
    assert a.units[:-2] == b.units[:-2] and a.units[-2] != b.units[-2]


# --- when the rules apply ----------------------------------------------------------------


@pytest.mark.parametrize(("effort", "thinking"), [("high", True), ("low", True), ("max", True), ("none", False), (None, False)])
def test_thinking_mode_is_any_effort_but_none(effort, thinking):
    assert is_thinking(Envelope("deepseek", "m", effort)) is thinking


def test_requests_without_tools_or_without_thinking_are_never_checked_for_reasoning():
    validator = make_validator("deepseek-relay")
    bare = make_turn(1, None)
    assert validator.check(make_history(bare, tools=())) is None
    assert validator.check(make_history(bare, envelope=Envelope("deepseek", "m", "none"))) is None
    assert validator.check(make_history(bare)) is not None


# --- deepseek-official -------------------------------------------------------------------


def test_official_rejects_a_turn_without_reasoning_content_and_names_the_message():
    validator = make_validator("deepseek-official")
    reason = validator.check(make_history(make_turn(1, "ok"), make_turn(2, None)))
    # user 0, turn 1, tool 2, turn 3: the second turn is message 3.
    assert reason == f"{OFFICIAL_400} (message 3: assistant row has no reasoning_content)"


def test_official_reads_reasoning_content_only():
    validator = make_validator("deepseek-official")
    reason = validator.check(make_history(make_turn(1, "thought", "reasoning_text")))
    assert reason is not None and "only in reasoning_text, not reasoning_content" in reason


def test_official_accepts_an_empty_string():
    validator = make_validator("deepseek-official")
    emit(validator, make_turn(1, ""))
    assert validator.check(make_history(make_turn(1, ""))) is None


def test_official_wants_the_reasoning_the_model_produced_byte_for_byte():
    validator = make_validator("deepseek-official")
    emit(validator, make_turn(1, "I will read file 1."))
    assert validator.check(make_history(make_turn(1, "I will read file 1."))) is None
    reason = validator.check(make_history(make_turn(1, "I will read file 2.")))
    assert reason is not None
    assert reason.endswith("(message 1: reasoning_content differs from what the model produced for this turn, first at char 17)")


def test_official_rejects_the_placeholder_on_a_turn_it_emitted_without_thinking():
    # The official endpoint gets "" for such turns (ADR 0256): a placeholder is not what it produced.
    validator = make_validator("deepseek-official")
    emit(validator, make_turn(1, ""))
    assert validator.check(make_history(make_turn(1, "[reasoning not retained for this turn]"))) is not None


def test_official_recognizes_a_moved_turn_by_its_text_and_tool_calls():
    # The turn emitted first, replayed after another one: still held to what it emitted.
    validator = make_validator("deepseek-official")
    emit(validator, make_turn(1, "first"), make_turn(2, "second"))
    assert validator.check(make_history(make_turn(2, "second"), make_turn(1, "first"))) is None
    assert validator.check(make_history(make_turn(2, "second"), make_turn(1, "second"))) is not None


def test_official_takes_a_turn_it_never_emitted_on_presence_alone():
    # A text-only replay of a thinking turn (its tool calls dropped) is a turn it never produced.
    validator = make_validator("deepseek-official")
    emit(validator, make_turn(1, "long thought"))
    replay = Message("assistant", (Reasoning("long th…"), Text("note 1")))
    assert validator.check(Request(THINKING, (user_text("go"), replay), "sys", TOOLS)) is None


def test_official_reads_several_blocks_of_one_field_as_one_value():
    validator = make_validator("deepseek-official")
    emit(validator, make_turn(1, "ab"))
    split = Message("assistant", (Reasoning("a"), Reasoning("b"), *make_turn(1, None).blocks))
    assert validator.check(make_history(split)) is None


def test_turn_key_ignores_reasoning_and_needs_content():
    assert turn_key(make_turn(1, "x").blocks) == turn_key(make_turn(1, "y").blocks)
    assert turn_key((Reasoning("only thinking"),)) is None


# --- deepseek-relay ----------------------------------------------------------------------


def test_relay_rejects_an_empty_echo():
    validator = make_validator("deepseek-relay")
    reason = validator.check(make_history(make_turn(1, "")))
    assert reason == f"{OFFICIAL_400} (message 1: reasoning_content is empty)"


def test_relay_reads_one_configurable_field():
    validator = make_validator("deepseek-relay", "reasoning_text")
    assert validator.check(make_history(make_turn(1, "x", "reasoning_text"))) is None
    reason = validator.check(make_history(make_turn(1, "x", "reasoning_content")))
    assert reason is not None and reason.startswith("The reasoning_text in the thinking mode must be passed back")


def test_relay_checks_presence_not_bytes():
    # The documented placeholder is not what the model emitted, and a relay takes it.
    validator = make_validator("deepseek-relay")
    emit(validator, make_turn(1, "real"))
    assert validator.check(make_history(make_turn(1, "[reasoning not retained for this turn]"))) is None


# --- tool calls and results pair up (both DeepSeek profiles) ------------------------------
# Before: only reasoning was checked, so an engine that moved a tool result before its call, or
# dropped the call's row and kept the result, was accepted by the strict profiles.

ORPHAN = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
MISSING = "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'."


def _result(call_id: str) -> Message:
    return Message("tool", (ToolResult(call_id, (Text("body"),)),))


def _request(*messages: Message, envelope: Envelope = THINKING, tools=TOOLS) -> Request:
    return Request(envelope, (user_text("fix the bug"), *messages), "sys", tools)


def _parallel(n: int) -> Message:
    return Message("assistant", (Reasoning("r"), ToolCall(f"a-{n}", "read_file", "{}"), ToolCall(f"b-{n}", "read_file", "{}")))


@pytest.mark.parametrize("profile", ["deepseek-official", "deepseek-relay"])
def test_well_paired_calls_and_results_pass(profile):
    validator = make_validator(profile)
    assert validator.check(_request(_parallel(1), _result("a-1"), _result("b-1"), _parallel(2), _result("b-2"), _result("a-2"))) is None
    assert validator.check(make_history(make_turn(1, "x"), make_turn(2, "y"))) is None


@pytest.mark.parametrize("profile", ["deepseek-official", "deepseek-relay"])
def test_a_result_before_its_call_is_refused_naming_the_message(profile):
    turn = make_turn(1, "x")
    reason = make_validator(profile).check(_request(_result("call-1"), turn))
    assert reason == f"{ORPHAN} (message 1: tool result 'call-1' answers no tool call of the row before it)"


def test_a_result_whose_call_row_was_dropped_is_refused_even_without_thinking_or_tools():
    # The pairing is the chat-completions protocol's: it holds in and out of thinking mode.
    for request in (_request(_result("call-1")), _request(_result("call-1"), envelope=Envelope("deepseek", "m", None), tools=())):
        assert make_validator("deepseek-official").check(request).startswith(ORPHAN)


def test_a_result_after_another_row_or_answering_another_call_is_refused():
    turn = make_turn(1, "x")
    validator = make_validator("deepseek-official")
    assert validator.check(_request(turn, _result("call-1"), user_text("more"), _result("call-1"))).startswith(ORPHAN)
    assert validator.check(_request(turn, _result("call-9"))).startswith(f"{ORPHAN} (message 2: tool result 'call-9'")


def test_a_call_left_without_its_result_is_refused():
    validator = make_validator("deepseek-relay")
    reason = validator.check(_request(_parallel(1), _result("a-1"), user_text("next")))
    assert reason.startswith(MISSING) and reason.endswith("(message 1: tool call 'b-1' has no result before message 3)")
    assert validator.check(_request(make_turn(1, "x"))).endswith("(message 1: tool call 'call-1' has no result; the request ends first)")


# --- lenient and the factory ---------------------------------------------------------------


def test_lenient_never_rejects():
    validator = make_validator("lenient")
    assert isinstance(validator, LenientValidator)
    assert validator.check(make_history(make_turn(1, None), make_turn(2, ""))) is None


def test_each_make_validator_call_starts_with_an_empty_memory():
    a, b = make_validator("deepseek-official"), make_validator("deepseek-official")
    emit(a, make_turn(1, "x"))
    assert isinstance(b, ReasoningReplayValidator) and not b.emitted


def test_unknown_profile_is_a_user_error_listing_the_known_ones():
    with pytest.raises(UserError, match="unknown profile 'strict'.*deepseek-official, deepseek-relay, lenient"):
        make_validator("strict")
    assert PROFILES == ("deepseek-official", "deepseek-relay", "lenient")


def test_bad_fields_are_user_errors():
    with pytest.raises(UserError, match="unknown reasoning field 'thoughts'"):
        make_validator("deepseek-relay", "thoughts")
    with pytest.raises(UserError, match="deepseek-official reads reasoning_content only"):
        make_validator("deepseek-official", "reasoning_text")


def test_a_rejection_is_a_400_observation_and_the_run_goes_on():
    provider = SimulatedProvider(validator=make_validator("deepseek-relay"))
    rejected = provider.send(make_history(make_turn(1, "")))
    accepted = provider.send(make_history(make_turn(1, "x")))
    assert (rejected.status, rejected.cached_tokens, rejected.is_rejected) == (400, 0, True)
    assert rejected.error is not None and "reasoning_content is empty" in rejected.error
    assert accepted.status == 200 and accepted.index == 1
