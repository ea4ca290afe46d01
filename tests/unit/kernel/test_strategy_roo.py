"""roo-condense (kernel/strategies/roo.py): the trigger, the cold fresh-start condense, the
sliding-window fallback (the first message kept, half hidden in pairs, markers), its settings."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, user_text
from prefixbench.kernel.strategies.roo import (
    CONDENSE_PROMPT,
    SUMMARY_HEADING,
    SUMMARY_SYSTEM,
    RooCondense,
    factory,
)
from tests.unit.kernel.agent_sessions import ROUTED, Recorder, context, grow, left_alone, rewrites, session_with

WINDOW = 40_000  # output cap 2,000 (under 20% of the window): allowed = 36,000 - 2,000 = 34,000


def paired(view) -> bool:
    calls = [c.call_id for m in view for c in m.tool_calls]
    results = [r.call_id for m in view for r in m.tool_results]
    return sorted(calls) == sorted(results)


def test_allowed_is_ninety_percent_of_the_window_less_the_clamped_output_cap():
    session = session_with([("fix", 1)])
    assert RooCondense(WINDOW).allowed(context(session, WINDOW)) == 34_000
    # A cap over 20% of the window is clamped to it: 40,000 * 0.9 - 8,000.
    assert RooCondense(WINDOW).allowed(context(session, WINDOW, max_tokens=30_000)) == 28_000
    assert RooCondense(WINDOW, max_tokens=500).allowed(context(session, WINDOW)) == 35_500


def test_below_allowed_nothing_happens():
    session = session_with([("fix the bug", 60)])
    engine = RooCondense(WINDOW)
    ctx = context(session, WINDOW)
    assert ctx.usage_tokens(engine.view(session)) <= 34_000
    assert left_alone(engine, session, WINDOW)


def test_past_allowed_a_cold_summary_replaces_everything_with_one_user_message():
    session = session_with([("fix the bug", 70)])
    client = Recorder()
    engine = RooCondense(WINDOW)
    ctx = context(session, WINDOW, client)
    messages = session.derive_messages()
    assert ctx.usage_tokens(messages) > 34_000
    engine.before_step(ctx)
    (request,) = client.sent
    # Its own system prompt, the routed tools, the history as text, the instruction last.
    assert (request.system, request.tools, request.purpose) == (SUMMARY_SYSTEM, ROUTED.tools, "compaction")
    assert request.system != ROUTED.system
    assert request.messages[0] == messages[0] and request.messages[-1] == user_text(CONDENSE_PROMPT)
    assert len(request.messages) == len(messages) + 1
    assert not any(m.tool_calls or m.tool_results for m in request.messages)
    assert request.messages[1].text().endswith("[Tool Use: read]\nn: 0")
    assert request.messages[2].role == "user" and request.messages[2].text().startswith("[Tool Result]\nline 0.0")
    # Fresh start: only the summary, the task gone.
    assert engine.view(session) == (user_text(SUMMARY_HEADING + "SUMMARY OF THE WORK"),)
    assert rewrites(session) == ["checkpoint"]
    # Later messages follow the summary; the next condense summarizes from the summary on.
    grow(session, 70)
    engine.before_step(context(session, WINDOW, client))
    assert client.sent[1].messages[0] == user_text(SUMMARY_HEADING + "SUMMARY OF THE WORK")
    assert client.sent[1].messages[1].role == "assistant"


def test_condense_percent_condenses_earlier():
    session = session_with([("fix the bug", 40)])
    client = Recorder()
    ctx = context(session, WINDOW, client)
    assert 0.5 * WINDOW <= ctx.usage_tokens(session.derive_messages()) <= 34_000
    RooCondense(WINDOW, condense_percent=50).before_step(ctx)
    assert len(client.sent) == 1
    with pytest.raises(ValueError, match="an integer from 5 to 100"):
        RooCondense(WINDOW, condense_percent=4)


def test_without_condensing_half_is_hidden_in_pairs_behind_a_marker():
    session = session_with([("fix the bug", 70)])
    engine = RooCondense(WINDOW, auto_condense=False)
    engine.before_step(context(session, WINDOW))
    messages = session.derive_messages()
    count = len(messages)  # 141 alternating units
    hidden = (count - 1) // 2 // 2 * 2  # 70: an even number
    view = engine.view(session)
    assert engine.hidden == hidden and rewrites(session) == ["truncate"]
    assert view[0] == messages[0]
    assert view[1] == user_text(f"[Sliding window truncation: {hidden} messages hidden to reduce context]")
    assert view[2:] == messages[1 + hidden :] and view[2].role == "assistant" and paired(view)
    # A second truncation stacks its marker after the first; both stay.
    grow(session, 40)
    engine.before_step(context(session, WINDOW))
    view = engine.view(session)
    assert [m.text() for m in view[1:3]] == [
        f"[Sliding window truncation: {hidden} messages hidden to reduce context]",
        f"[Sliding window truncation: {engine.hidden - hidden} messages hidden to reduce context]",
    ]
    assert view[3].role == "assistant" and paired(view)


def test_a_failed_summary_falls_back_to_the_sliding_window():
    session = session_with([("fix the bug", 70)])
    client = Recorder(text="")
    engine = RooCondense(WINDOW)
    engine.before_step(context(session, WINDOW, client))
    assert len(client.sent) == 1 and engine.summary is None
    assert rewrites(session) == ["truncate"] and engine.hidden > 0
    # The next condense reads the stored history (hidden messages and the marker too) and starts
    # afresh: no marker, nothing hidden.
    grow(session, 40)
    client.text = "SUMMARY OF THE WORK"
    engine.before_step(context(session, WINDOW, client))
    request = client.sent[-1]
    assert len(request.messages) == len(session.derive_messages()) + 2  # the marker, the instruction
    assert request.messages[1].role == "assistant" and request.messages[1].text().startswith("step 0")
    assert engine.view(session) == (user_text(SUMMARY_HEADING + "SUMMARY OF THE WORK"),)


def test_the_factory_reads_its_settings():
    engine = factory(WINDOW, EngineOptions(config={"auto_condense": False, "condense_percent": 75, "max_tokens": 4_096}))
    assert (engine.auto_condense, engine.condense_percent, engine.max_tokens) == (False, 75, 4_096)
    with pytest.raises(ValueError, match="roo-condense: unknown setting"):
        factory(WINDOW, EngineOptions(config={"percent": 75}))


def test_max_tokens_zero_means_unset():
    # Roo reads the reserve as ``maxTokens || ANTHROPIC_DEFAULT_MAX_TOKENS``: 0 is no setting.
    session = session_with([("fix", 1)])
    engine = factory(WINDOW, EngineOptions(config={"max_tokens": 0}))
    assert engine.allowed(context(session, WINDOW)) == 34_000  # the model's cap (2,000), not 0


def test_condense_percent_names_its_range_5_to_100():
    message = "roo-condense: condense_percent must be an integer from 5 to 100, got "
    for value in (75.5, 4, 101, True):
        with pytest.raises(ValueError, match=message.replace("(", "\\(") + repr(value).replace(".", "\\.")):
            factory(WINDOW, EngineOptions(config={"condense_percent": value}))
    assert factory(WINDOW, EngineOptions(config={"condense_percent": 5})).condense_percent == 5


def test_a_model_without_an_output_cap_reserves_8192_unclamped():
    # Roo: ``maxTokens || ANTHROPIC_DEFAULT_MAX_TOKENS``; the 20% clamp is for a cap the model has.
    session = session_with([("fix", 1)])
    assert RooCondense(WINDOW).allowed(context(session, WINDOW, max_tokens=0)) == 36_000 - 8_192


# --- release 3.28 (Roo Code 3.28.x, September 2025: the release the public task folders were written by)


def test_release_3_28_keeps_the_first_message_the_summary_and_the_last_3_messages():
    from prefixbench.kernel.strategies.roo import CLOSING_328, SUMMARY_SYSTEM_328, as_text

    session = session_with([("fix the bug", 70)])
    client = Recorder()
    engine = RooCondense(WINDOW, release="3.28")
    messages = session.derive_messages()
    engine.before_step(context(session, WINDOW, client))
    (request,) = client.sent
    # Cold: a summarizer system prompt of its own, no tools; everything but the last 3 messages,
    # calls and results as text, then the closing request.
    assert (request.system, request.tools, request.purpose) == (SUMMARY_SYSTEM_328, (), "compaction")
    assert request.messages == (*(as_text(m) for m in messages[:-3]), user_text(CLOSING_328))
    view = engine.view(session)
    assert view[0] == messages[0]
    assert view[1].role == "assistant" and view[1].text() == "SUMMARY OF THE WORK"
    # The last 3 kept as they were, but the first one's result (its call is in the summary) as text.
    assert view[2:] == (as_text(messages[-3]), *messages[-2:])
    assert view[2].role == "user" and not view[2].tool_results and paired(view)
    assert rewrites(session) == ["checkpoint"]
    # The next condense summarizes from the summary on, with the first message in front of it.
    grow(session, 70)
    engine.before_step(context(session, WINDOW, client))
    second = client.sent[1].messages
    assert second[0] == messages[0] and second[1] == view[1] and second[2] == view[2]
    assert engine.view(session)[1].text() == "SUMMARY OF THE WORK" and len(engine.view(session)) == 5


def test_release_3_28_truncates_without_a_marker_and_the_summary_can_go():
    session = session_with([("fix the bug", 70)])
    messages = session.derive_messages()
    engine = RooCondense(WINDOW, auto_condense=False, release="3.28")
    engine.before_step(context(session, WINDOW))
    hidden = (len(messages) - 1) // 2 // 2 * 2
    assert engine.view(session) == (messages[0], *messages[1 + hidden :]) and rewrites(session) == ["truncate"]
    assert not any("Sliding window" in m.text() for m in engine.view(session) if m.role == "user")
    # After a condense, a truncation keeps the first message and drops the summary with the others.
    session = session_with([("fix the bug", 70)])
    engine = RooCondense(WINDOW, release="3.28")
    engine.before_step(context(session, WINDOW, Recorder()))
    grow(session, 70)
    engine.before_step(context(session, WINDOW, Recorder(text="")))  # the summary call fails
    view = engine.view(session)
    assert rewrites(session) == ["checkpoint", "truncate"] and engine.summary_at is None
    assert view[0] == session.derive_messages()[0] and view[1].role == "assistant" and view[1].text().startswith("step ")


def test_release_3_28_keeps_the_context_when_a_condense_would_not_shrink_it():
    session = session_with([("fix the bug", 70)])
    client = Recorder()
    engine = RooCondense(WINDOW, release="3.28")
    assert engine.condense(context(session, WINDOW, client))
    # Right after, the first message and the summary are summarized again: the call is made (and
    # paid), but the new context is no smaller (Roo's condense_context_grew), so nothing changes.
    before = engine.view(session)
    assert not engine.condense(context(session, WINDOW, client))
    assert client.sent[1].messages[:2] == before[:2] and len(client.sent[1].messages) == 3
    assert engine.view(session) == before and rewrites(session) == ["checkpoint"]
    assert "roo-condense: the condensed context would not be smaller" in [
        e.info.get("text") for e in session.events if e.kind == "compaction/warning"]


def test_the_release_setting_names_its_choices():
    assert factory(WINDOW, EngineOptions(config={"release": "3.28"})).release == "3.28"
    assert factory(WINDOW, EngineOptions(config={})).release == "3.52"
    with pytest.raises(ValueError, match="roo-condense: release must be one of '3.52', '3.28', got '3.29'"):
        factory(WINDOW, EngineOptions(config={"release": "3.29"}))
