"""kimi-cli-compact (kernel/strategies/kimi.py): its two-condition trigger, the preserved
messages, and the compaction output that replaces the rest."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions
from prefixbench.kernel.strategies.kimi import (
    COMPACT_PROMPT,
    OUTPUT_PREFIX,
    SYSTEM_PROMPT,
    KimiCliCompact,
    factory,
    preserve_start,
    should_compact,
)
from tests.unit.kernel.agent_sessions import Recorder, context, grow, left_alone, rewrites, session_with

WINDOW = 128_000  # reserved 50,000 fires first: at 78,000 tokens (0.85 x 128,000 = 108,800)


def test_the_trigger_is_the_ratio_or_the_reserve_whichever_comes_first():
    assert not should_compact(77_999, WINDOW, 0.85, 50_000) and should_compact(78_000, WINDOW, 0.85, 50_000)
    assert not should_compact(435_199, 512_000, 0.85, 50_000) and should_compact(435_200, 512_000, 0.85, 50_000)
    assert should_compact(0, 32_000, 0.85, 50_000)  # a window under the reserve: always


def test_the_newest_two_user_or_assistant_messages_are_preserved_with_what_follows():
    live = session_with([("task", 3)]).derive_messages()
    start = preserve_start(live, 2)
    assert live[start].role == "assistant" and [m.role for m in live[start:]] == ["assistant", "tool"] * 2
    assert preserve_start(live[:2], 2) == 0 and preserve_start(live[:1], 2) is None


def test_nothing_happens_below_the_trigger():
    session = session_with([("fix the bug", 20)])
    assert left_alone(KimiCliCompact(WINDOW), session, WINDOW)


def test_over_the_trigger_the_rest_goes_as_one_text_message_to_a_cold_call():
    session = session_with([("fix the bug", 150)])
    messages = session.derive_messages()
    client = Recorder()
    engine = KimiCliCompact(WINDOW)
    ctx = context(session, WINDOW, client)
    assert ctx.usage_tokens(messages) >= 78_000
    engine.before_step(ctx)
    (request,) = client.sent
    assert (request.system, request.tools, request.purpose) == (SYSTEM_PROMPT, (), "compaction")
    (message,) = request.messages
    text = message.text()
    assert text.startswith("## Message 1\nRole: user\nContent:\nfix the bug## Message 2\nRole: assistant\nContent:\nstep 0")
    assert "Role: tool\nContent:\nline 0.0" in text  # tool results are text; calls are not
    assert text.endswith("\n" + COMPACT_PROMPT)
    view = engine.view(session)
    assert view[0].role == "user" and view[0].text() == OUTPUT_PREFIX + "SUMMARY OF THE WORK"
    assert view[1:] == messages[-4:]
    assert rewrites(session) == ["checkpoint"]


def test_every_step_under_the_reserve_folds_the_previous_output_and_keeps_pairs_whole():
    session = session_with([("fix the bug", 150)])
    client = Recorder()
    engine = KimiCliCompact(32_000)  # a window under the reserve: the trigger always holds
    engine.before_step(context(session, 32_000, client))
    grow(session, 1)
    # The output now sits before the newest two assistant messages: it is compacted again.
    engine.before_step(context(session, 32_000, client))
    assert len(client.sent) == 2
    assert client.sent[1].messages[0].text().startswith(f"## Message 1\nRole: user\nContent:\n{OUTPUT_PREFIX}SUMMARY")
    view = engine.view(session)
    assert [m.role for m in view] == ["user", "assistant", "tool", "assistant", "tool"]
    assert view[1:] == session.derive_messages()[-4:]
    # With only the output and one step there is nothing before the newest two: no call.
    fresh = KimiCliCompact(32_000)
    short = session_with([("fix the bug", 1)])
    fresh.before_step(context(short, 32_000, client))
    assert len(client.sent) == 2


def test_the_factory_reads_its_settings():
    engine = factory(WINDOW, EngineOptions(config={"compaction_trigger_ratio": 0.5, "reserved_context_size": 1_000,
                                                   "max_preserved_messages": 4}))
    assert (engine.ratio, engine.reserved, engine.keep) == (0.5, 1_000, 4)
    with pytest.raises(ValueError, match="kimi-cli-compact: unknown setting"):
        factory(WINDOW, EngineOptions(config={"ratio": 0.5}))
    # Kimi CLI's config accepts a ratio of 0.5-0.99 and a reserve of 1,000 or more; so does the engine.
    for bad in (0.49, 1.0, 1.5):
        with pytest.raises(ValueError, match="compaction_trigger_ratio must be between 0.5 and 0.99"):
            factory(WINDOW, EngineOptions(config={"compaction_trigger_ratio": bad}))
    with pytest.raises(ValueError, match="reserved_context_size must be at least 1000, got 999"):
        factory(WINDOW, EngineOptions(config={"reserved_context_size": 999}))
    assert factory(WINDOW, EngineOptions(config={"compaction_trigger_ratio": 0.99})).ratio == 0.99


def test_the_factory_defaults_are_kimi_clis():
    """No settings: ratio 0.85, reserve 50,000, the newest two messages kept, seen in what it does."""
    engine = factory(512_000, EngineOptions())
    session = session_with([("fix the bug", 4)])
    client = Recorder()
    engine.before_step(context(session, 512_000, client))
    assert client.sent == []  # far below both conditions
    # At 512k the ratio fires first (435,200 tokens); the reserve alone would wait for 462,000.
    assert engine.ratio * 512_000 == 435_200 and 512_000 - engine.reserved == 462_000
    big = session_with([("fix the bug", 560)], chars=3_000)
    ctx = context(big, 512_000, client)
    tokens = ctx.usage_tokens(big.derive_messages())
    assert 435_200 <= tokens < 462_000
    engine.before_step(ctx)
    assert len(client.sent) == 1
    assert engine.view(big)[1:] == big.derive_messages()[-4:]  # two assistant messages and their results
    # At 128k the reserve fires first: 78,000 tokens, under 0.85 x 128,000.
    engine = factory(WINDOW, EngineOptions())
    mid = session_with([("fix the bug", 150)])
    ctx = context(mid, WINDOW, client)
    assert 78_000 <= ctx.usage_tokens(mid.derive_messages()) < 108_800
    engine.before_step(ctx)
    assert len(client.sent) == 2
