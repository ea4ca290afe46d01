"""The thinking-tools workload: DeepSeek thinking mode with tools, at any window, deterministic."""

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.engines.checkpoint import CheckpointEngine
from prefixbench.kernel.engines.ranges import RangesEngine
from prefixbench.kernel.engines.user_tail import UserTailConfig, UserTailEngine
from prefixbench.kernel.presets import get_preset
from prefixbench.kernel.reasoning import PLACEHOLDER, ReplayAdapter
from prefixbench.simulator.validate import LenientValidator, ReasoningReplayValidator
from prefixbench.simulator.wire import Envelope, Message, Reasoning, Request, ToolCall, user_text
from prefixbench.workloads.scripted.ranges_responder import COMPRESS_TOOL
from prefixbench.workloads.scripted.registry import execute, make_workload, profile_options, validator_for
from prefixbench.workloads.scripted.thinking_tools import ThinkingToolsWorkload, binding_for_profile

PATCHED = get_preset("patched")
WINDOWS = (32_000, 128_000, 512_000)


def conversation_replies(workload: ThinkingToolsWorkload):
    """Every reply of a script driven turn by turn, as the loop drives it (no engine)."""
    script = workload.script()
    request = Request(Envelope("deepseek", "deepseek-v4-flash", "high"), (user_text("x"),))
    replies = []
    for _ in script.user_turns():
        while True:
            reply = script.reply(request)
            replies.append(reply)
            if not reply.tool_calls:
                break
    return replies


def test_each_turn_is_tool_steps_then_an_answer():
    replies = conversation_replies(ThinkingToolsWorkload(32_000, turns=3, steps_per_turn=5))
    assert len(replies) == 3 * 6
    assert [bool(r.tool_calls) for r in replies[:6]] == [True] * 5 + [False]
    # Every reply thinks in reasoning_content; every fourth step and every third answer think nothing.
    reasoning = [r.blocks[0] for r in replies]
    assert all(isinstance(b, Reasoning) and b.field == "reasoning_content" for b in reasoning)
    assert [b.text == "" for b in reasoning[:6]] == [False, False, False, True, False, False]
    assert reasoning[-1].text == ""  # turn 2's answer


def test_relay_binding_thinks_in_the_relay_field():
    workload = ThinkingToolsWorkload(32_000, turns=1, steps_per_turn=2, binding="deepseek-relay", reasoning_field="reasoning_text")
    assert {r.blocks[0].field for r in conversation_replies(workload)} == {"reasoning_text"}


def test_step_sizes_scale_with_the_window():
    small, large = ThinkingToolsWorkload(32_000), ThinkingToolsWorkload(512_000)
    assert large.step_chars == 16 * small.step_chars
    thinking, text, result = small.step_sizes(0, 0)
    assert (thinking, text, result) == (768, 256, 1536)
    assert small.step_sizes(0, 3)[0] == 0  # no thinking


def test_tool_results_are_sized_by_their_step():
    workload = ThinkingToolsWorkload(32_000)
    result = workload.script().run_tool(ToolCall("call-t1-s2", "grep", "{}"))
    assert result.tool_results[0].text_chars() == workload.step_sizes(1, 2)[2]


def test_header_and_model_are_deepseek_thinking_with_compress_in_the_tools():
    workload = ThinkingToolsWorkload(128_000)
    header, info = workload.header(), workload.model_info()
    assert header.envelope == Envelope("deepseek", "deepseek-v4-flash", "high")
    assert COMPRESS_TOOL in header.tools and [t.name for t in header.tools][:3] == ["read_file", "grep", "run_tests"]
    assert (info.context_window, info.default_max_tokens, info.default_effort) == (128_000, 8_192, "high")


def test_summary_calls_get_a_summary_within_the_cap():
    script = ThinkingToolsWorkload(512_000).script()
    reply = script.reply(Request(Envelope("deepseek", "m", "high"), (user_text("x"),), max_tokens=1_000, purpose="compaction"))
    assert reply.text().startswith("## Goal\n- checkpoint 0") and len(reply.text()) <= 2_000 + 50


def test_a_nudge_is_answered_with_a_compress_call_that_does_not_advance_the_script():
    script = ThinkingToolsWorkload(32_000).script()
    next(script.user_turns())
    nudge = user_text("[context-nudge] Context is at 80%.\nrange m00002 m00009")
    thought = Message("assistant", (Reasoning("r", "reasoning_content"),))
    reply = script.reply(Request(Envelope("deepseek", "m", "high"), (thought, nudge)))
    assert [c.name for c in reply.tool_calls] == ["compress"] and script.step == 0


def test_engines_per_binding():
    official = ThinkingToolsWorkload(32_000)
    relay = ThinkingToolsWorkload(32_000, binding="deepseek-relay")
    assert isinstance(official.engine("checkpoint", PATCHED), CheckpointEngine)
    assert isinstance(official.engine("ranges", PATCHED), RangesEngine)
    tail = relay.engine("user-tail", PATCHED)
    assert isinstance(tail, UserTailEngine) and tail.config.binding == "deepseek-relay"
    wrapped = relay.engine("checkpoint", PATCHED)
    assert isinstance(wrapped, ReplayAdapter) and wrapped.fill == PLACEHOLDER and wrapped.name == "checkpoint"
    with pytest.raises(UserError, match="no engine 'dsh'.*checkpoint, user-tail, ranges"):
        official.engine("dsh", PATCHED)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"window": 4_000}, "window must be an integer >= 8000"),
        ({"turns": 0}, "thinking-tools: turns must be 1 to 10,000, got 0"),
        ({"binding": "openrouter"}, "binding must be one of"),
        ({"reasoning_field": "thoughts"}, "reasoning_field must be one of"),
        ({"reasoning_field": "reasoning_text"}, "the official endpoint uses reasoning_content"),
        ({"effort": "none"}, "effort must be one of low, high, max"),
    ],
)
def test_bad_options_are_user_errors(options, message):
    with pytest.raises(UserError, match=message):
        ThinkingToolsWorkload(**{"window": 32_000, **options})


def test_registry_binds_the_workload_and_the_validator_to_a_profile():
    assert profile_options("thinking-tools", "deepseek-relay") == {"binding": "deepseek-relay"}
    assert profile_options("thinking-tools", "lenient") == {"binding": "deepseek-official"}
    assert profile_options("seed-coding", "deepseek-relay") == {}
    with pytest.raises(UserError, match="unknown profile 'strict'"):
        profile_options("thinking-tools", "strict")
    with pytest.raises(UserError, match="unknown profile"):
        binding_for_profile("strict")
    relay = make_workload("thinking-tools", 32_000, binding="deepseek-relay", reasoning_field="reasoning_text")
    validator = validator_for(relay, "deepseek-relay")
    assert isinstance(validator, ReasoningReplayValidator) and validator.field == "reasoning_text"
    assert isinstance(validator_for(relay, "lenient"), LenientValidator)  # refuses only broken tool pairs
    assert not isinstance(validator_for(relay, "deepseek-official"), LenientValidator)


def test_runs_are_deterministic():
    workload = make_workload("thinking-tools", 32_000, turns=2, steps_per_turn=12)
    a = execute(workload, "patched", engine="user-tail", profile="deepseek-official")
    b = execute(workload, "patched", engine="user-tail", profile="deepseek-official")
    assert a.observations == b.observations and a.num_folds >= 1


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("engine", ["checkpoint", "user-tail", "ranges"])
def test_every_engine_folds_several_times_at_every_window_without_a_400(window, engine):
    run = execute(make_workload("thinking-tools", window), "patched", engine=engine, profile="deepseek-official")
    assert run.num_folds >= 3, run.num_folds
    assert run.num_rejected == 0
    assert not [e for e in run.session.events if e.kind == "compaction/warning"]


def test_engine_configs_can_be_given_and_user_tail_keeps_the_workloads_binding():
    workload = ThinkingToolsWorkload(
        32_000, binding="deepseek-relay", user_tail=UserTailConfig.from_mapping({"retained_turns": 1})
    )
    engine = workload.engine("user-tail", PATCHED)
    assert (engine.config.retained_turns, engine.config.binding) == (1, "deepseek-relay")
    assert workload.params()["engine_config"] == "custom"
