"""codex-compact (kernel/strategies/codex.py): its trigger, its warm compaction turn, the history it leaves."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, Message, Text, user_text
from prefixbench.kernel.strategies.codex import (
    COMPACT_PROMPT,
    SUMMARY_PREFIX,
    TRIGGER,
    CodexCompact,
    factory,
    is_item,
    select_user_messages,
)
from prefixbench.kernel.strategies.foldview import tokens_of
from prefixbench.kernel.strategies.openai_compaction import compaction_item
from tests.unit.kernel.agent_sessions import Recorder, context, grow, left_alone, rewrites, session_with


def test_nothing_happens_below_ninety_percent_of_the_window():
    session = session_with([("fix the bug", 16)])
    engine = CodexCompact(10_000)
    ctx = context(session, 10_000)
    assert ctx.measure(engine.view(session)).total_tokens < 9_000
    assert left_alone(engine, session, 10_000)
    assert engine.view(session) == session.derive_messages()


def test_at_ninety_percent_the_whole_view_is_replayed_then_users_and_the_summary_remain():
    session = session_with([("fix the bug", 18)])
    client = Recorder()
    engine = CodexCompact(10_000)
    ctx = context(session, 10_000, client)
    before = engine.view(session)
    assert ctx.measure(before).total_tokens >= 9_000
    engine.before_step(ctx)
    (request,) = client.sent
    # A normal turn in the routed family: the view as sent, then the prompt (a warm prefix).
    assert request.purpose == "compaction" and request.messages == (*before, user_text(COMPACT_PROMPT))
    assert (request.envelope.reasoning_effort, request.system) == ("max", "You are a coding agent.")
    summary = user_text(f"{SUMMARY_PREFIX}\nSUMMARY OF THE WORK")
    assert engine.view(session) == (user_text("fix the bug"), summary)
    assert rewrites(session) == ["checkpoint"]
    # What comes next is appended after the summary.
    grow(session, 2)
    assert engine.view(session)[:2] == (user_text("fix the bug"), summary) and len(engine.view(session)) == 6


def test_a_second_compaction_keeps_every_user_message_but_not_the_old_summary():
    session = session_with([("fix the bug", 18)])
    engine = CodexCompact(10_000)
    client = Recorder()
    engine.before_step(context(session, 10_000, client))
    session.append("user/message", user_text("now add a test"))
    grow(session, 18)
    engine.before_step(context(session, 10_000, client))
    assert len(client.sent) == 2
    view = engine.view(session)
    assert [m.text() for m in view[:2]] == ["fix the bug", "now add a test"]
    assert len(view) == 3 and view[2].text().startswith(SUMMARY_PREFIX + "\n")
    assert rewrites(session) == ["checkpoint", "checkpoint"]


def test_user_messages_newest_first_within_the_budget_the_crossing_one_shortened():
    users = [user_text("a" * 4_000), user_text("b" * 400), user_text("c" * 400)]
    kept = select_user_messages(users, 400)
    assert [m.text()[0] for m in kept] == ["a", "b", "c"]
    assert kept[1:] == tuple(users[1:]) and "tokens cut" in kept[0].text() and len(kept[0].text()) < 4_000
    assert select_user_messages(users, 0) == ()


def test_a_compaction_turn_that_would_not_fit_drops_the_oldest_items_first():
    session = session_with([("fix the bug", 30)])
    client = Recorder()
    engine = CodexCompact(10_000)
    ctx = context(session, 10_000, client)
    engine.before_step(ctx)
    (request,) = client.sent
    assert ctx.measure(request.messages).total_tokens <= 10_000
    assert request.messages[0].role == "assistant" and request.messages[-1] == user_text(COMPACT_PROMPT)
    assert request.messages[-2] == session.derive_messages()[-1]


def test_nothing_to_compact_is_a_warning_not_a_loop():
    session = session_with([("x" * 40_000, 0)])
    client = Recorder()
    engine = CodexCompact(10_000)
    engine.before_step(context(session, 10_000, client))
    assert client.sent == [] and any(e.kind == "compaction/warning" for e in session.events)


def test_the_factory_reads_its_config_and_caps_the_limit_at_ninety_percent():
    assert factory(100_000, EngineOptions()).limit == 90_000
    assert factory(100_000, EngineOptions(config={"limit": 50_000})).limit == 50_000
    assert factory(100_000, EngineOptions(config={"limit": 500_000})).limit == 90_000
    with pytest.raises(ValueError, match="codex-compact: unknown setting 'keep'"):
        factory(100_000, EngineOptions(config={"keep": 1}))
    with pytest.raises(ValueError, match="user_budget must be an integer"):
        factory(100_000, EngineOptions(config={"user_budget": "many"}))


def test_a_summary_message_is_recognised_by_its_prefix_only():
    from prefixbench.kernel.strategies.codex import is_summary

    assert is_summary(user_text(f"{SUMMARY_PREFIX}\nanything"))
    assert not is_summary(Message("user", (Text("Another model said"),)))


# --- remote mode (compact_remote.rs) -----------------------------------------------------------


def test_remote_mode_sends_the_view_without_tools_and_keeps_users_then_the_item():
    session = session_with([("fix the bug", 18)])
    client = Recorder()
    engine = CodexCompact(10_000, mode="remote")
    ctx = context(session, 10_000, client)
    before = engine.view(session)
    engine.before_step(ctx)
    (request,) = client.sent
    # The history as it stands, no compact prompt of Codex's own, the routed system, no tools.
    assert request.purpose == "compaction" and request.messages == before
    assert request.system == "You are a coding agent." and request.tools == ()
    view = engine.view(session)
    assert view[0] == user_text("fix the bug") and len(view) == 2
    assert view[1] == compaction_item("SUMMARY OF THE WORK") and is_item(view[1])
    assert rewrites(session) == ["compaction"]


def test_remote_mode_keeps_user_messages_within_its_own_budget_not_the_local_one():
    session = session_with([("a" * 240_000, 0), ("b" * 40_000, 18)])
    engine = CodexCompact(200_000, limit=20_000, mode="remote")
    engine.before_step(context(session, 200_000))
    kept = [m for m in engine.view(session) if not is_item(m)]
    # 64,000 tokens by default: all of the newer (about 10,000) and the older (about 60,000) cut to
    # fit; the local mode's 20,000 keeps the newer one and about 10,000 of the older.
    assert [m.text()[0] for m in kept] == ["a", "b"] and kept[1] == user_text("b" * 40_000)
    assert 60_000 < tokens_of(kept) <= 64_000 + 16  # the cut marker is priced about the budget
    other = session_with([("a" * 240_000, 0), ("b" * 40_000, 18)])
    local = CodexCompact(200_000, limit=20_000)
    local.before_step(context(other, 200_000))
    assert tokens_of(local.view(other)[:-1]) <= 20_000 + 16


def test_a_second_remote_compaction_replaces_the_item_and_keeps_the_users():
    session = session_with([("fix the bug", 18)])
    engine = CodexCompact(10_000, mode="remote")
    client = Recorder()
    engine.before_step(context(session, 10_000, client))
    session.append("user/message", user_text("now add a test"))
    grow(session, 18)
    engine.before_step(context(session, 10_000, client))
    # The second request replays the first item: the server reads its own state back.
    assert is_item(client.sent[1].messages[1])
    view = engine.view(session)
    assert [m.text() for m in view[:2]] == ["fix the bug", "now add a test"]
    assert len(view) == 3 and is_item(view[2]) and not any(is_item(m) for m in view[:2])
    assert rewrites(session) == ["compaction", "compaction"]


def test_a_remote_request_that_would_not_fit_empties_only_its_trailing_tool_results():
    # compact_remote.rs trims only the tool outputs Codex added, from the end, and stops at the
    # first call or assistant message; normalisation gives the call an ``aborted`` output.
    session = session_with([("fix the bug", 30)])
    client = Recorder()
    engine = CodexCompact(10_000, mode="remote")
    before = engine.view(session)
    engine.before_step(context(session, 10_000, client))
    (request,) = client.sent
    assert len(request.messages) == len(before) and request.messages[:-1] == before[:-1]
    (result,) = request.messages[-1].blocks
    assert request.messages[-1].role == "tool" and result.content == (Text("aborted"),)
    assert result.call_id == before[-2].tool_calls[0].call_id  # the call stays, answered


def test_a_remote_v2_request_that_would_not_fit_empties_its_trailing_tool_results_then_adds_the_trigger():
    # compact_remote_v2.rs trims the same way before it appends the compaction_trigger item.
    session = session_with([("fix the bug", 30)])
    client = Recorder()
    engine = CodexCompact(10_000, mode="remote_v2")
    before = engine.view(session)
    assert context(session, 10_000).measure(before).total_tokens > 10_000
    engine.before_step(context(session, 10_000, client))
    (request,) = client.sent
    assert request.messages[-1] == TRIGGER and len(request.messages) == len(before) + 1
    assert request.messages[:-2] == before[:-1]
    (result,) = request.messages[-2].blocks
    assert request.messages[-2].role == "tool" and result.content == (Text("aborted"),)
    assert result.call_id == before[-2].tool_calls[0].call_id
    assert rewrites(session) == ["compaction"]


def test_a_remote_request_is_measured_without_the_tools_it_does_not_send():
    import msgspec

    from prefixbench.kernel import StepContext
    from prefixbench.simulator.wire import ToolSchema
    from tests.unit.kernel.agent_sessions import ROUTED

    session = session_with([("fix the bug", 17)])
    heavy = msgspec.structs.replace(ROUTED, tools=(ToolSchema("read", "x" * 40_000),))
    client = Recorder()
    engine = CodexCompact(10_000, limit=8_000, mode="remote")
    ctx = context(session, 10_000, client)
    ctx = StepContext(session, ctx.catalog, client, 10_000, heavy)
    before = engine.view(session)
    assert ctx.measure(before).total_tokens > 10_000  # over the window only with the tools
    engine.before_step(ctx)
    (request,) = client.sent
    assert request.tools == () and request.messages == before
    assert all(not any(t == Text("aborted") for p in m.blocks for t in getattr(p, "content", ())) for m in request.messages)


def test_a_failed_remote_compaction_warns_and_leaves_the_view():
    session = session_with([("fix the bug", 18)])
    engine = CodexCompact(10_000, mode="remote")
    before = engine.view(session)
    engine.before_step(context(session, 10_000, Recorder(text="")))
    assert engine.view(session) == before and rewrites(session) == []
    texts = [e.info["text"] for e in session.events if e.kind == "compaction/warning"]
    assert texts == ["codex-compact: the remote compaction failed: no compaction item"]


def test_the_mode_setting_is_checked():
    assert factory(10_000, EngineOptions(config={"mode": "remote"})).mode == "remote"
    assert factory(10_000, EngineOptions(config={"mode": "remote_v2"})).mode == "remote_v2"
    assert factory(10_000, EngineOptions()).mode == "auto"
    with pytest.raises(ValueError, match="mode must be one of auto, local, remote, remote_v2"):
        factory(10_000, EngineOptions(config={"mode": "v2"}))


def test_a_budget_for_the_other_mode_is_an_error_naming_it():
    with pytest.raises(ValueError, match="retained_budget applies only to mode = 'remote' or 'remote_v2'"):
        factory(10_000, EngineOptions(config={"mode": "local", "retained_budget": 1_000}))
    with pytest.raises(ValueError, match="user_budget applies only to mode = 'local'"):
        factory(10_000, EngineOptions(config={"mode": "remote_v2", "user_budget": 1_000}))
    assert factory(10_000, EngineOptions(config={"mode": "remote_v2", "retained_budget": 1_000})).retained_budget == 1_000
    # auto may take either path, so it takes both budgets.
    both = factory(10_000, EngineOptions(config={"user_budget": 1_000, "retained_budget": 2_000}))
    assert (both.mode, both.user_budget, both.retained_budget) == ("auto", 1_000, 2_000)


def test_the_local_prompt_and_summary_prefix_follow_the_templates_at_928a707():
    # Since that commit the compact prompt asks for the one task still under way in a fixed outline
    # and the summary prefix tells the next model to go on from the next steps (written here in
    # the engine's own words, at about the templates' lengths: 692 and 419 characters).
    assert "Next steps" in COMPACT_PROMPT and "Task under way" in COMPACT_PROMPT
    assert 550 <= len(COMPACT_PROMPT) <= 800 and 350 <= len(SUMMARY_PREFIX) <= 480
    assert "next steps" in SUMMARY_PREFIX and "do not reopen finished tasks" in SUMMARY_PREFIX


def test_on_thinking_tools_at_32k_the_remote_call_is_cold_and_the_request_after_reads_the_old_head():
    from prefixbench.workloads.specs.engine import EngineCase, run_case

    case = EngineCase(32_000, "thinking-tools", "lenient")
    local = run_case("codex-compact", case, "patched", {"mode": "local"}).observations
    remote_run = run_case("codex-compact", case, "patched", {"mode": "remote"})
    remote = remote_run.observations
    assert remote_run.num_folds == 4  # a remote compaction is a fold (the sweep's *folds* column)

    def calls(observations):
        """(hit ratio of each compaction call, cached tokens of the conversation request after it)."""
        found = []
        for i, o in enumerate(observations):
            if o.purpose == "compaction":
                after = next(p for p in observations[i + 1:] if p.purpose == "conversation")
                found.append((o.cached_tokens / o.prompt_tokens, after.cached_tokens))
        return found

    # The local turn replays the cached conversation (warm); the compact request carries no
    # tools, so under the simulator's tools-first rendering it shares no prefix with it (cold,
    # under 4%: later ones read the earlier compact requests' user messages).
    assert len(calls(local)) == len(calls(remote)) == 4
    assert min(hit for hit, _ in calls(local)) > 0.96 and max(hit for hit, _ in calls(remote)) < 0.04
    # Either way the first request after reads the same head: the system, tools and the kept
    # user messages up to where the old history went on differently.
    assert [read for _, read in calls(remote)][:3] == [read for _, read in calls(local)][:3]


# --- remote_v2 mode (compact_remote_v2.rs) and the default ---------------------------------------


def test_remote_v2_sends_the_view_with_its_tools_and_the_trigger_then_keeps_users_and_the_item():
    import msgspec

    from prefixbench.kernel import StepContext
    from prefixbench.simulator.wire import ToolSchema
    from tests.unit.kernel.agent_sessions import ROUTED

    session = session_with([("fix the bug", 18)])
    tooled = msgspec.structs.replace(ROUTED, tools=(ToolSchema("read", "read a file"),))
    client = Recorder()
    engine = CodexCompact(10_000, mode="remote_v2")
    base = context(session, 10_000, client)
    ctx = StepContext(session, base.catalog, client, 10_000, tooled)
    before = engine.view(session)
    engine.before_step(ctx)
    (request,) = client.sent
    # A normal turn of the routed family: the history, then the trigger; the tools stay (remote
    # mode drops them), so the request extends the cached conversation.
    assert request.purpose == "compaction" and request.messages == (*before, TRIGGER)
    assert request.system == "You are a coding agent." and request.tools == tooled.tools
    view = engine.view(session)
    assert view == (user_text("fix the bug"), compaction_item("SUMMARY OF THE WORK"))
    assert rewrites(session) == ["compaction"]


def test_a_second_remote_v2_compaction_replays_the_item_and_never_keeps_the_trigger():
    session = session_with([("fix the bug", 18)])
    engine = CodexCompact(10_000, mode="remote_v2")
    client = Recorder()
    engine.before_step(context(session, 10_000, client))
    session.append("user/message", user_text("now add a test"))
    grow(session, 18)
    engine.before_step(context(session, 10_000, client))
    assert is_item(client.sent[1].messages[1]) and client.sent[1].messages[-1] == TRIGGER
    view = engine.view(session)
    assert [m.text() for m in view[:2]] == ["fix the bug", "now add a test"]
    assert len(view) == 3 and is_item(view[2]) and TRIGGER not in view


def test_auto_takes_remote_v2_on_an_openai_route_and_local_elsewhere():
    # Codex compacts remotely (v2, its remote_compaction_v2 feature on by default at 009bd87)
    # when the provider is OpenAI's, locally for any other.
    import msgspec

    from prefixbench.kernel import Envelope, StepContext
    from tests.unit.kernel.agent_sessions import ROUTED

    for provider, kind in (("openai", "compaction"), ("deepseek", "checkpoint"), ("anthropic", "checkpoint")):
        session = session_with([("fix the bug", 18)])
        routed = msgspec.structs.replace(ROUTED, envelope=Envelope(provider, "m", "max"))
        client = Recorder()
        base = context(session, 10_000, client)
        engine = CodexCompact(10_000)
        engine.before_step(StepContext(session, base.catalog, client, 10_000, routed))
        assert rewrites(session) == [kind], provider
        assert (client.sent[0].messages[-1] == TRIGGER) is (provider == "openai")


@pytest.mark.parametrize(("provider", "path"), [("openai", "remote_v2"), ("deepseek", "local")])
def test_auto_says_once_a_run_which_path_it_took_and_why(provider, path):
    # Base: nothing said, in the run or its record, of the path auto took.
    import msgspec

    from prefixbench.kernel import Envelope, StepContext
    from prefixbench.kernel.strategies.codex import path_note
    from prefixbench.workloads.runs.schema import warning_kind
    from tests.unit.kernel.agent_sessions import ROUTED

    session = session_with([("fix the bug", 18)])
    routed = msgspec.structs.replace(ROUTED, envelope=Envelope(provider, "m", "max"))
    client = Recorder()
    engine = CodexCompact(10_000)
    base = context(session, 10_000, client)
    engine.before_step(StepContext(session, base.catalog, client, 10_000, routed))
    session.append("user/message", user_text("now add a test"))
    grow(session, 18)
    engine.before_step(StepContext(session, base.catalog, client, 10_000, routed))
    assert len(client.sent) == 2
    (text,) = [e.info["text"] for e in session.events if e.kind == "compaction/warning"]
    assert text == (f"codex-compact: mode=auto chose its path [{path}, routed provider {provider}]: Codex compacts "
                    "remotely for OpenAI's provider only")
    assert path_note(warning_kind(text), "1 time") == (
        f"took the {path} path (mode=auto, routed provider {provider})",
        "auto compacts remotely only where the run routes OpenAI's provider, whatever cache model prices it; set mode to choose")
    # A mode set says nothing: the table records it.
    session = session_with([("fix the bug", 18)])
    CodexCompact(10_000, mode="local").before_step(StepContext(session, base.catalog, Recorder(), 10_000, routed))
    assert not [e for e in session.events if e.kind == "compaction/warning"]


def test_the_remote_v2_note_says_what_its_price_rests_on():
    from prefixbench.kernel.strategies.codex import REMOTE_PRICE_NOTE, REMOTE_V2_NOTE, run_notes

    assert run_notes("codex-compact", {"mode": "remote_v2"}) == [REMOTE_V2_NOTE]
    assert run_notes("codex-compact", {"mode": "remote"}) == [REMOTE_PRICE_NOTE]
    # auto's path is the run's route, not its table: the run says it (a warning, its note below).
    assert run_notes("codex-compact", {}) == [] and run_notes("codex-compact", {"mode": "auto"}) == []
    # As a sweep's record holds the table (text).
    from prefixbench.workloads.runs.sweep import recorded_engine_config

    assert run_notes("codex-compact", recorded_engine_config("engine_config=mode=remote_v2;steps=24")) == [REMOTE_V2_NOTE]


def test_on_thinking_tools_at_32k_the_remote_v2_call_is_warm_like_the_local_turn():
    from prefixbench.workloads.specs.engine import EngineCase, run_case

    case = EngineCase(32_000, "thinking-tools", "lenient")
    local = run_case("codex-compact", case, "patched", {"mode": "local"})
    v2 = run_case("codex-compact", case, "patched", {"mode": "remote_v2"})
    remote = run_case("codex-compact", case, "patched", {"mode": "remote"})
    assert v2.num_folds == 4

    def compaction_calls(run):
        return [o for o in run.observations if o.purpose == "compaction"]

    def uncached(run):
        return sum(o.prompt_tokens - o.cached_tokens for o in run.observations)

    # The v2 call extends the cached conversation (tools kept): it reads as the local turn does,
    # where remote mode's tool-less call reads next to nothing in the simulator's rendering.
    assert min(o.cached_tokens / o.prompt_tokens for o in compaction_calls(v2)) > 0.96
    assert uncached(v2) < 0.55 * uncached(remote) and abs(uncached(v2) - uncached(local)) < 0.01 * uncached(local)
    # The thinking-tools route is DeepSeek's: the default (auto) compacts locally there, as Codex does.
    default = run_case("codex-compact", case, "patched", {})
    assert uncached(default) == uncached(local)
