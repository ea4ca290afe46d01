"""openclaw-compaction (kernel/strategies/openclaw.py): pi's compaction at OpenClaw's reserve
floor, the memory-flush turn before it, and the opt-in cache-ttl pruning of old tool results."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, Message, ModelInfo, Reasoning, StepContext, Text, user_text
from prefixbench.kernel.strategies.openclaw import (
    CLEARED,
    FLUSH_PROMPT,
    FLUSH_SYSTEM,
    DEFAULTS,
    OpenClawCompaction,
    factory,
    message_chars,
    prune_context,
)
from prefixbench.kernel.strategies.pi import TURN_PREFIX_PROMPT
from tests.unit.kernel.agent_sessions import ROUTED, Recorder, context, grow, rewrites, session_with

WINDOW = 60_000  # flush at 60,000 - 20,000 - 4,000 = 36,000; compaction over 40,000


def engine(**config: object) -> OpenClawCompaction:
    return factory(WINDOW, EngineOptions(config=config))


def test_the_factory_pins_openclaw_defaults_over_pi():
    default = factory(32_000, EngineOptions())
    # pi's reserve_tokens (16,384) raised to OpenClaw's floor; pi's keep_recent_tokens kept.
    assert (default.reserve, default.keep_recent, default.flush_threshold()) == (20_000, 20_000, 8_000)
    assert default.settings["memory_flush"] is True and default.settings["context_pruning"] == "off"
    assert (default.settings["ttl_s"], default.settings["keep_last_assistants"]) == (300, 3)
    assert factory(32_000, EngineOptions(config={"reserve_tokens_floor": 10_000})).reserve == 16_384
    with pytest.raises(ValueError, match="openclaw-compaction: unknown setting 'mode'"):
        factory(WINDOW, EngineOptions(config={"mode": "safeguard"}))
    with pytest.raises(ValueError, match="openclaw-compaction: context_pruning must be"):
        factory(WINDOW, EngineOptions(config={"context_pruning": "always"}))
    with pytest.raises(ValueError, match="openclaw-compaction: memory_flush must be true or false"):
        factory(WINDOW, EngineOptions(config={"memory_flush": "yes"}))


def test_past_the_soft_threshold_one_silent_flush_turn_goes_out_before_compaction():
    session = session_with([("fix the bug", 70)])
    client = Recorder("NO_REPLY")
    ctx = context(session, WINDOW, client)
    assert 36_000 <= ctx.usage_tokens(session.derive_messages()) <= 40_000
    oc = engine()
    oc.before_step(ctx)
    (flush,) = client.sent
    # The conversation as sent, then the flush prompt; the flush note appended to the system prompt.
    assert flush.messages == (*session.derive_messages(), user_text(FLUSH_PROMPT))
    assert flush.system == f"{ROUTED.system}\n\n{FLUSH_SYSTEM}"
    # Under the compaction threshold: nothing else, nothing rewritten, the flush turn not kept.
    assert rewrites(session) == [] and oc.view(session) == session.derive_messages()
    oc.before_step(context(session, WINDOW, client))
    assert len(client.sent) == 1  # once per compaction cycle


def test_without_the_flush_nothing_is_sent_below_the_compaction_threshold():
    session = session_with([("fix the bug", 70)])
    client = Recorder()
    engine(memory_flush=False).before_step(context(session, WINDOW, client))
    assert client.sent == []


def test_compaction_is_pi_s_and_rearms_the_flush():
    session = session_with([("fix the bug", 70)])
    client = Recorder()
    oc = engine()
    oc.before_step(context(session, WINDOW, client))
    grow(session, 10)  # over 40,000
    oc.before_step(context(session, WINDOW, client))
    assert rewrites(session) == ["checkpoint"]
    # One task, one long turn: pi summarizes the start of the split turn (no earlier history).
    assert client.sent[1].messages[-1] == user_text(TURN_PREFIX_PROMPT)
    assert oc.view(session)[0].text().startswith("Earlier messages of this session were compacted")
    assert oc.flushed is False


def test_cache_ttl_pruning_clears_old_results_for_one_request_after_a_gap():
    window = 100_000  # 400,000 characters; 60 results of 4,000 characters are 60% of it
    session = session_with([("fix the bug", 60)], chars=4_000)
    info = ModelInfo("p", "m", window, 2_000, "high")
    now = [0]
    oc = factory(window, EngineOptions(config={"context_pruning": "cache-ttl", "memory_flush": False}))

    def ctx() -> StepContext:
        return StepContext(session, lambda p, m: info, Recorder(), window, ROUTED, clock=lambda: now[0])

    oc.before_step(ctx())
    assert oc.view(session) == session.derive_messages()  # no gap yet
    now[0] = 301_000
    oc.before_step(ctx())
    texts = [m.tool_results[0].content[0].text for m in oc.view(session) if m.role == "tool"]
    cleared = texts.count(CLEARED)
    assert texts[:cleared] == [CLEARED] * cleared and 5 < cleared < 57  # oldest first, until under 50%
    original = [m.tool_results[0].content[0].text for m in session.derive_messages() if m.role == "tool"]
    assert texts[cleared:] == original[cleared:]
    assert rewrites(session) == ["prune"]
    now[0] = 302_000  # the next request, within the TTL, goes back to the whole history
    oc.before_step(ctx())
    assert oc.view(session) == session.derive_messages() and rewrites(session) == ["prune", "prune"]


def test_soft_trim_keeps_head_and_tail_of_old_oversized_results():
    messages = session_with([("t", 30)], chars=6_000).derive_messages()  # 45% of a 100k window
    pruned = prune_context(messages, 100_000, 3, 0.3, 0.5, 50_000)
    texts = [m.tool_results[0].content[0].text for m in pruned if m.role == "tool"]
    assert all("[Tool result trimmed" in t and len(t) < 3_200 for t in texts[:-3])
    assert [len(t) for t in texts[-3:]] == [6_000] * 3  # after the third newest assistant message


def test_pruning_skips_a_context_under_the_soft_trim_ratio():
    messages = session_with([("t", 4)]).derive_messages()
    assert prune_context(messages, WINDOW, 3, 0.3, 0.5, 50_000) == messages
    assert DEFAULTS["min_prunable_tool_chars"] == 50_000


def test_results_over_4000_characters_are_trimmed_from_30_percent_of_the_window():
    # 30 results of 4,500 characters: 34% of a 100k window at four characters a token.
    messages = session_with([("t", 30)], chars=4_500).derive_messages()
    keep, soft, hard, floor = (DEFAULTS[k] for k in ("keep_last_assistants", "soft_trim_ratio", "hard_clear_ratio", "min_prunable_tool_chars"))
    pruned = prune_context(messages, 100_000, keep, soft, hard, floor)  # type: ignore[arg-type]
    texts = [m.tool_results[0].content[0].text for m in pruned if m.role == "tool"]
    assert all("[Tool result trimmed" in t for t in texts[:-3]) and [len(t) for t in texts[-3:]] == [4_500] * 3
    # 25 of them are 28% of the window (four characters a token): under the ratio, nothing changes.
    fewer = session_with([("t", 25)], chars=4_500).derive_messages()
    assert prune_context(fewer, 100_000, keep, soft, hard, floor) == fewer  # type: ignore[arg-type]


def test_keeping_no_assistant_message_prunes_every_result():
    messages = session_with([("t", 30)], chars=6_000).derive_messages()
    pruned = prune_context(messages, 100_000, 0, 0.3, 0.5, 50_000)
    texts = [m.tool_results[0].content[0].text for m in pruned if m.role == "tool"]
    assert all("[Tool result trimmed" in t for t in texts)


def test_the_context_size_counts_thinking():
    message = Message("assistant", (Reasoning("r" * 100, "reasoning_content"), Text("hi")))
    assert message_chars(message) == 102


def test_the_factory_refuses_settings_that_leave_no_room():
    with pytest.raises(ValueError, match="reserve_tokens_floor 28000 and soft_threshold_tokens 4000 leave no room"):
        factory(32_000, EngineOptions(config={"reserve_tokens_floor": 28_000}))
    with pytest.raises(ValueError, match="keep_recent_tokens must be positive"):
        factory(WINDOW, EngineOptions(config={"keep_recent_tokens": 0}))
    for ratio in (0, 1.5):
        with pytest.raises(ValueError, match="soft_trim_ratio must be in"):
            factory(WINDOW, EngineOptions(config={"soft_trim_ratio": ratio, "hard_clear_ratio": 2.0}))
    with pytest.raises(ValueError, match="hard_clear_ratio 0.2 must not be under soft_trim_ratio 0.3"):
        factory(WINDOW, EngineOptions(config={"hard_clear_ratio": 0.2}))
    assert factory(32_000, EngineOptions(config={"reserve_tokens_floor": 27_999})).reserve == 27_999
