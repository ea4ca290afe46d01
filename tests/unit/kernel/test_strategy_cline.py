"""cline-truncate and cline-condense (kernel/strategies/cline.py): the trigger, Cline's truncation
range (half, quarter, the first pair kept, pairs whole), the duplicate-read rewrite, the condense."""

from __future__ import annotations

import json

import pytest

from prefixbench.kernel import EngineOptions, Message, Session, Text, ToolCall, ToolResult, user_text
from prefixbench.kernel.strategies.cline import (
    CONTINUE_NOTE,
    DUPLICATE_READ_NOTICE,
    RESULT_MISSING,
    SUMMARIZE_PROMPT,
    TRUNCATION_NOTICE,
    ClineCondense,
    ClineTruncate,
    condense,
    max_allowed_size,
    next_truncation_range,
    truncate,
    units,
)
from tests.unit.kernel.agent_sessions import ROUTED, Recorder, context, rewrites, session_with

WINDOW = 40_000  # maxAllowedSize: max(40,000 - 40,000, 32,000) = 32,000


def paired(view) -> bool:
    """Every tool result's call is in the view and every call has its result."""
    calls = [c.call_id for m in view for c in m.tool_calls]
    results = [r.call_id for m in view for r in m.tool_results]
    return sorted(calls) == sorted(results)


def test_max_allowed_size_follows_clines_margins_by_window():
    assert max_allowed_size(64_000) == 37_000
    assert max_allowed_size(128_000) == 98_000
    assert max_allowed_size(200_000) == 160_000
    assert max_allowed_size(32_000) == 25_600  # 80% where the 40,000 margin would leave less
    assert max_allowed_size(512_000) == 472_000


def test_the_truncation_range_keeps_the_first_pair_and_removes_half_or_three_quarters_in_pairs():
    roles = ["user", "assistant"] * 10  # 20 alternating messages
    assert next_truncation_range(20, None, "half", roles) == (2, 9)  # 18 after the pair: 8 go
    assert next_truncation_range(20, None, "quarter", roles) == (2, 13)  # 12 go
    assert next_truncation_range(20, 9, "half", roles) == (2, 13)  # half of the 10 left after the range
    # "none" (the condense) deletes all after the pair, ending on the last assistant message.
    assert next_truncation_range(21, None, "none", [*roles, "user"]) == (2, 19)
    # The range always ends on an assistant message: one user message earlier when it would not.
    odd = ["user", "assistant", "user", "user", "assistant", "user", "assistant", "user"]
    assert next_truncation_range(8, None, "half", odd) == (2, 2)  # 6 after the pair: 2 go, end 3 is a user
    assert next_truncation_range(8, None, "half", odd)[1] != 3


def test_units_follow_the_alternating_history():
    session = session_with([("task", 2)])
    session.append("user/message", user_text("more"))
    messages = session.derive_messages()
    # user, assistant, tool, assistant, tool + user: the tool result and the next user message are one.
    assert units(messages) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 6)]


def test_below_max_allowed_nothing_happens():
    session = session_with([("fix the bug", 40)])
    engine = ClineTruncate(WINDOW)
    ctx = context(session, WINDOW)
    assert engine.previous_total(ctx) < 32_000
    engine.before_step(ctx)
    assert rewrites(session) == [] and engine.view(session) == session.derive_messages()


def test_at_max_allowed_half_goes_the_first_pair_stays_with_the_notice_and_pairs_stay_whole():
    session = session_with([("fix the bug", 70)])
    engine = ClineTruncate(WINDOW)
    ctx = context(session, WINDOW)
    total = engine.previous_total(ctx)
    assert 32_000 <= total <= 64_000  # "half"
    messages = session.derive_messages()
    engine.before_step(ctx)
    assert rewrites(session) == ["truncate"]
    count = len(units(messages))  # 141
    assert engine.deleted_end == 2 + (count - 2) // 4 * 2 - 1  # 71: an assistant message
    view = engine.view(session)
    assert view[0] == messages[0]  # the task
    assert view[1].blocks[0] == Text(TRUNCATION_NOTICE) and view[1].tool_calls == messages[1].tool_calls
    assert view[2].role == "tool" and view[2].tool_results == (ToolResult("c0", (Text(RESULT_MISSING),)),)
    assert view[3:] == messages[engine.deleted_end + 1 :][1:]  # the orphaned results of the first kept unit dropped
    assert view[3].role == "assistant" and paired(view)


def test_over_twice_the_limit_three_quarters_go():
    session = session_with([("fix the bug", 70)])
    engine = ClineTruncate(WINDOW, max_allowed=15_000)
    ctx = context(session, WINDOW)
    assert engine.previous_total(ctx) / 2 > 15_000
    engine.before_step(ctx)
    count = len(units(session.derive_messages()))
    assert engine.deleted_end == 2 + (count - 2) * 3 // 4 // 2 * 2 - 1
    assert paired(engine.view(session))


def test_a_prompt_over_the_window_gets_the_error_retry_quarter_truncation():
    session = session_with([("fix the bug", 80)])
    engine = ClineTruncate(WINDOW, max_allowed=10**9)  # the trigger never fires
    ctx = context(session, WINDOW)
    assert ctx.usage_tokens(engine.view(session)) > WINDOW
    engine.before_step(ctx)
    assert rewrites(session) == ["truncate"]
    assert ctx.usage_tokens(engine.view(session)) <= WINDOW


def reads(paths: list[str], chars: int) -> Session:
    """A session whose tool steps are read_file calls of ``paths``."""
    session = Session("s")
    session.log_header(ROUTED)
    session.append("user/message", user_text("look at the files"))
    for index, path in enumerate(paths):
        call = ToolCall(f"r{index}", "read_file", json.dumps({"path": path}))
        session.append("assistant/message", Message("assistant", (Text(f"read {path}"), call)))
        body = f"{path} body " + "y" * chars
        session.append("tool/result", Message("tool", (ToolResult(f"r{index}", (Text(body),)),)))
    return session


def test_earlier_reads_of_a_file_read_again_become_a_notice_instead_of_a_truncation():
    session = reads(["a.py", "b.py", "a.py", "a.py", "c.py"] * 3, 10_000)
    engine = ClineTruncate(WINDOW)
    ctx = context(session, WINDOW)
    assert engine.previous_total(ctx) >= 32_000
    engine.before_step(ctx)
    assert rewrites(session) == ["prune"]  # enough was saved: no truncation
    view = engine.view(session)
    texts = {r.call_id: r.content[0].text for m in view for r in m.tool_results}
    last = {"a.py": "r13", "b.py": "r11", "c.py": "r14"}
    for call, text in texts.items():
        latest = call in last.values()
        assert (text == DUPLICATE_READ_NOTICE) is not latest, call
    assert len(view) == len(session.derive_messages())
    # Off: the same session is truncated.
    session2 = reads(["a.py", "b.py", "a.py", "a.py", "c.py"] * 3, 10_000)
    other = ClineTruncate(WINDOW, file_read_dedup=False)
    other.before_step(context(session2, WINDOW))
    assert rewrites(session2) == ["truncate"]


def test_condense_sends_the_summarize_turn_warm_and_keeps_the_first_pair_and_the_summary():
    session = session_with([("fix the bug", 70)])
    client = Recorder()
    engine = ClineCondense(WINDOW)
    ctx = context(session, WINDOW, client)
    before = engine.view(session)
    engine.before_step(ctx)
    (request,) = client.sent
    assert request.messages == (*before, user_text(SUMMARIZE_PROMPT))  # extends what was sent: warm
    assert (request.system, request.tools, request.purpose) == (ROUTED.system, ROUTED.tools, "compaction")
    assert rewrites(session) == ["checkpoint"]
    view = engine.view(session)
    messages = session.derive_messages()
    assert view[0].text() == CONTINUE_NOTE
    assert view[1].blocks[0] == Text(TRUNCATION_NOTICE)
    assert view[2].tool_results == (ToolResult("c0", (Text(RESULT_MISSING),)),)
    assert len(view) == 4 and view[3].role == "user" and "SUMMARY OF THE WORK" in view[3].text()
    assert paired(view)
    # The conversation goes on after the summary; no second condense right away.
    from tests.unit.kernel.agent_sessions import grow

    grow(session, 2)
    engine.before_step(context(session, WINDOW, client))
    assert len(client.sent) == 1
    assert engine.view(session)[4:] == session.derive_messages()[len(messages) :]


def test_the_factories_read_their_settings():
    engine = truncate(WINDOW, EngineOptions(config={"max_allowed": 1_000, "file_read_dedup": False}))
    assert (engine.max_allowed, engine.file_read_dedup) == (1_000, False)
    assert condense(WINDOW, EngineOptions()).max_allowed == 32_000
    with pytest.raises(ValueError, match="cline-truncate: unknown setting"):
        truncate(WINDOW, EngineOptions(config={"keep": "half"}))
    with pytest.raises(ValueError, match="cline-condense: file_read_dedup must be true or false"):
        condense(WINDOW, EngineOptions(config={"file_read_dedup": 1}))


def test_the_context_window_error_truncation_also_replaces_the_task():
    # Cline's error path (triggerApplyStandardContextTruncationNoticeChange) puts the continue
    # note on the first user message too, so the cache breaks at message 0.
    session = session_with([("fix the bug", 80)])
    engine = ClineTruncate(WINDOW, max_allowed=10**9)
    engine.before_step(context(session, WINDOW))
    view = engine.view(session)
    assert view[0].text() == CONTINUE_NOTE and view[1].blocks[0] == Text(TRUNCATION_NOTICE)
    # The threshold's truncation keeps the task.
    session2 = session_with([("fix the bug", 70)])
    other = ClineTruncate(WINDOW)
    other.before_step(context(session2, WINDOW))
    assert other.view(session2)[0].text() == "fix the bug"


def test_the_duplicate_read_share_counts_the_first_pair_and_earlier_rewrites_at_their_length():
    # Two reads of a.py after a long first pair: the rewrite saves 10,000 of ~20,000 characters
    # after the pair (50%), but under 30% once the pair's ~30,000 count too.
    session = Session("s")
    session.log_header(ROUTED)
    session.append("user/message", user_text("task " + "t" * 30_000))
    for index in range(2):
        call = ToolCall(f"r{index}", "read_file", json.dumps({"path": "a.py"}))
        session.append("assistant/message", Message("assistant", (Text("read"), call)))
        session.append("tool/result", Message("tool", (ToolResult(f"r{index}", (Text("y" * 10_000),)),)))
    engine = ClineTruncate(WINDOW)
    assert engine.dedup_enough(context(session, WINDOW)) is False
    # An earlier rewrite counts at its current (notice) length: r0 already rewritten, r1 now
    # rewritten saves 10,000 of ~10,000 + notice (not of 20,000 + notice).
    session = reads(["a.py", "a.py", "a.py"], 10_000)
    engine = ClineTruncate(WINDOW)
    engine.deduped = {"r0"}
    assert engine.dedup_enough(context(session, WINDOW)) is True


def test_a_kept_unit_of_tool_results_only_leaves_a_user_message_between_two_assistants():
    session = Session("s")
    session.log_header(ROUTED)
    session.append("user/message", user_text("task"))
    session.append("assistant/message", Message("assistant", (Text("let me look"),)))  # no calls
    session.append("user/message", user_text("go on"))
    for index in range(8):
        call = ToolCall(f"c{index}", "read", "{}")
        session.append("assistant/message", Message("assistant", (Text(f"step {index}"), call)))
        session.append("tool/result", Message("tool", (ToolResult(f"c{index}", (Text("x" * 100),)),)))
    engine = ClineTruncate(WINDOW)
    ctx = context(session, WINDOW)
    engine.truncate(ctx, "half")
    view = engine.view(session)
    roles = [m.role for m in view]
    assert all(not (a == b == "assistant") for a, b in zip(roles, roles[1:])), roles
    assert view[2].role == "user" and paired(view)


def test_a_truncation_that_deletes_nothing_still_shows_the_notice_it_declares():
    # Four units: the range would end below 2, yet Cline sets the notice; the view shows it.
    session = session_with([("fix the bug", 1)])
    session.append("user/message", user_text("more"))
    engine = ClineTruncate(WINDOW)
    ctx = context(session, WINDOW)
    engine.truncate(ctx, "half")
    assert engine.deleted_end is None
    assert rewrites(session) == ["truncate"] and engine.view(session)[1].blocks[0] == Text(TRUNCATION_NOTICE)
    engine.truncate(ctx, "half")  # nothing changes: nothing declared
    assert rewrites(session) == ["truncate"]


def test_max_allowed_must_be_inside_the_window():
    for value in (0, WINDOW + 1):
        with pytest.raises(ValueError, match=f"cline-truncate: max_allowed must be from 1 to the window \\({WINDOW:,}\\), got {value}"):
            truncate(WINDOW, EngineOptions(config={"max_allowed": value}))
    assert truncate(WINDOW, EngineOptions(config={"max_allowed": WINDOW})).max_allowed == WINDOW
