"""The user-tail engine: PI-Desktop budgets, Codex-shaped checkpoints, DeepSeek reasoning (seed 003)."""

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.api import StepContext
from prefixbench.kernel.engines.user_tail import (
    FALLBACK_MARKER,
    TRUNCATION_MARKER,
    UserTailConfig,
    UserTailEngine,
    fallback_summary,
    plan_budget,
    select_user_tail,
    serialize_conversation,
    truncate_message,
)
from prefixbench.kernel.meter import price_message
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.kernel.presets import get_preset
from prefixbench.kernel.reasoning import PLACEHOLDER
from prefixbench.kernel.records import RetainedTurn
from prefixbench.kernel.session import Header, Session, tool_result_message
from prefixbench.simulator.wire import Envelope, Message, Reasoning, Request, Text, ToolCall, ToolSchema, user_text

ENVELOPE = Envelope("deepseek", "flash", "high")
TOOLS = (ToolSchema.make("read_file", "Read a file.", {"type": "object"}),)
#: window 8,000, output cap 1,000: headroom 4,000, hardLimit 4,000, user budget 2,000.
INFO = ModelInfo("deepseek", "flash", 8_000, 1_000, "high")
PATCHED = get_preset("patched")
LEGACY = get_preset("legacy")


def make_step(session: Session, n: int, *, thinking: str | None = None, field: str = "reasoning_content") -> None:
    """One tool step: an assistant turn (reasoning, note, call) and its 800-char result."""
    reasoning = f"thinking {n} " * 30 if thinking is None else thinking
    call = ToolCall(f"call-{n}", "read_file", f'{{"i":{n}}}')
    session.append("assistant/message", Message("assistant", (Reasoning(reasoning, field), Text(f"note {n}"), call)))
    session.append("tool/result", tool_result_message(call.call_id, f"body {n} " * 100))


def make_session(num_steps: int, *, prompt: str = "fix the parser", **step_options) -> Session:
    """A header, one user prompt and ``num_steps`` tool steps (the last one without thinking)."""
    session = Session("t")
    session.log_header(Header(ENVELOPE, "sys", TOOLS))
    session.append("user/message", user_text(prompt))
    for n in range(num_steps):
        make_step(session, n, **({"thinking": ""} if n == num_steps - 1 else {}), **step_options)
    return session


class Summarizer:
    """A model client that records requests and answers with a short numbered summary."""

    def __init__(self, *, error: str | None = None) -> None:
        self.requests: list[Request] = []
        self.error = error

    def __call__(self, request: Request) -> Reply:
        self.requests.append(request)
        if self.error is not None:
            return Reply(error=self.error)
        return Reply((Text(f"summary {len(self.requests)}"),))


def step_context(session: Session, client: Summarizer, info: ModelInfo = INFO) -> StepContext:
    return StepContext(session, lambda provider, model: info, client)


def make_engine(preset=PATCHED, **config) -> UserTailEngine:
    return UserTailEngine(UserTailConfig(**{"binding": "deepseek-official", **config}), preset)


def compact(session: Session, engine: UserTailEngine, client: Summarizer | None = None) -> Summarizer:
    client = client or Summarizer()
    engine.before_step(step_context(session, client))
    return client


def shape(messages) -> list[str]:
    """Compact picture of a view: S summary, U user, A assistant (r = with tool call), T tool."""
    out = []
    for m in messages:
        if m.role == "user":
            out.append("S" if m.text().startswith("Earlier turns") else "U")
        elif m.role == "assistant":
            out.append("Ac" if m.tool_calls else "A")
        else:
            out.append("T")
    return out


# --- budgets (engines.md 3.1) ---------------------------------------------------------------


def test_budget_matches_the_200k_example():
    budget = plan_budget(ModelInfo("p", "m", 200_000, 32_000), UserTailConfig())
    assert (budget.headroom, budget.hard_limit, budget.user_budget) == (32_000, 168_000, 20_000)
    assert budget.summary_max_tokens == 25_600  # min(0.8 * headroom, max tokens)


def test_budget_at_small_and_large_windows():
    small = plan_budget(INFO, UserTailConfig())
    assert (small.headroom, small.hard_limit, small.user_budget, small.summary_guard) == (4_000, 4_000, 2_000, 4_952)
    large = plan_budget(ModelInfo("p", "m", 512_000, 8_192), UserTailConfig())
    assert (large.headroom, large.hard_limit) == (25_600, 486_400)  # 5% of the window wins
    assert large.fallback_summary_chars == 12_000


# --- trigger and active-turn checkpoint -----------------------------------------------------


def test_nothing_happens_below_hard_limit():
    session = make_session(3)
    client = compact(session, make_engine())
    assert client.requests == [] and session.surface == tuple(e.seq for e in session.events if e.message)


def test_active_turn_keeps_summary_retained_thinking_and_the_latest_user_message():
    session = make_session(16)
    engine = make_engine()
    client = compact(session, engine)
    view = engine.view(session)
    assert shape(view) == ["S", "A", "A", "A", "U"]
    assert view[-1] == user_text("fix the parser")
    # Steps 12..14 are the newest with thinking (step 15 had none); replayed text-only, stamped reasoning_content.
    assert [m.text() for m in view[1:4]] == ["note 12", "note 13", "note 14"]
    assert all(m.reasoning[0].field == "reasoning_content" and not m.tool_calls for m in view[1:4])
    (checkpoint,) = [e for e in session.events if e.rewrite_kind == "checkpoint"]
    assert checkpoint.record.tail_mode == "active_turn" and checkpoint.info["mode"] == "summary"
    assert checkpoint.record.summary == "summary 1" and len(client.requests) == 1


def test_the_summary_call_serializes_the_conversation_without_tools():
    # pi's compact(): one user message of text, no tools, so no cached prefix is reused.
    session = make_session(16)
    client = compact(session, make_engine())
    (request,) = client.requests
    assert request.purpose == "compaction" and request.tools == () and len(request.messages) == 1
    assert request.envelope == INFO.wire_envelope(ENVELOPE) and request.max_tokens == 1_000
    text = request.messages[0].text()
    assert text.startswith("<conversation>\n[user]: fix the parser\n\n[assistant thinking]: thinking 0")
    assert "[assistant tool call]: read_file({\"i\":0})" in text and "[tool result call-0]: body 0" in text
    assert "<previous-summary>\n" not in text


def test_a_second_checkpoint_folds_the_previous_summary_in():
    session = make_session(16)
    engine = make_engine()
    compact(session, engine)
    for n in range(16, 30):
        make_step(session, n)
    client = compact(session, engine)
    text = client.requests[0].messages[0].text()
    assert "<previous-summary>\nsummary 1\n</previous-summary>" in text
    # The retained rows of the first checkpoint are history of the second one.
    assert text.startswith("<conversation>\n[assistant thinking]: thinking 12")
    assert shape(engine.view(session)) == ["S", "A", "A", "A", "U"]
    assert engine.view(session)[-1] == user_text("fix the parser")


def test_checkpoint_is_one_logged_surface_replace():
    session = make_session(16)
    engine = make_engine()
    compact(session, engine)
    kinds = [e.kind for e in session.events[-4:]]
    assert kinds == ["compaction/start", "compaction/summary", "user/message", "compaction/end"]
    checkpoint = session.events[-2]
    assert checkpoint.rewrite_kind == "checkpoint" and checkpoint.record.engine == "user-tail"
    assert session.surface == (checkpoint.seq,)


# --- completed turn and tail rules (ADR 0136, ADR 0064) -------------------------------------


def test_completed_turn_keeps_no_tail_and_the_new_prompt_follows():
    session = make_session(15)
    session.append("assistant/message", Message("assistant", (Reasoning("wrap up"), Text("done"))))
    session.append("user/message", user_text("now the lexer"))
    engine = make_engine()
    compact(session, engine)
    view = engine.view(session)
    assert shape(view) == ["S", "A", "A", "A", "U"]
    assert view[-1] == user_text("now the lexer")
    (checkpoint,) = [e for e in session.events if e.rewrite_kind == "checkpoint"]
    assert checkpoint.record.tail_mode == "completed_turn" and checkpoint.record.retained_users == ()
    assert view[3].text() == "done"  # the wrap-up turn is the newest retained thinking turn


def test_codex_tail_keeps_older_prompts_too():
    session = make_session(15)
    session.append("assistant/message", Message("assistant", (Reasoning("wrap up"), Text("done"))))
    session.append("user/message", user_text("now the lexer"))
    engine = make_engine(tail_rule="codex")
    compact(session, engine)
    assert [m.text() for m in engine.view(session) if m.role == "user"][1:] == ["fix the parser", "now the lexer"]


def test_select_user_tail_goes_newest_first_truncates_the_crossing_one_then_restores_order():
    users = [user_text("a" * 400), user_text("b" * 400), user_text("c" * 40)]
    budget = price_message(users[2]) + price_message(users[1]) + 50
    tail = select_user_tail(users, budget)
    assert [m.text()[0] for m in tail] == ["a", "b", "c"]
    assert tail[0].text().endswith(TRUNCATION_MARKER) and price_message(tail[0]) <= 50
    assert tail[1:] == tuple(users[1:])


def test_truncate_message_caps_a_long_prompt_with_a_marker():
    long = user_text("x" * 10_000)
    cut = truncate_message(long, 100)
    assert cut is not None and price_message(cut) <= 100 and cut.text().endswith(TRUNCATION_MARKER)
    assert truncate_message(long, 5) is None
    assert truncate_message(user_text("short"), 100) == user_text("short")


def test_a_huge_latest_prompt_is_truncated_to_the_user_budget():
    session = make_session(16, prompt="p" * 20_000)
    engine = make_engine()
    compact(session, engine)
    tail = engine.view(session)[-1]
    assert tail.text().endswith(TRUNCATION_MARKER) and price_message(tail) <= 2_000


# --- DeepSeek reasoning: retention, backfill, normalization (ADR 0256, D677) -----------------


def test_relay_binding_fills_the_placeholder_on_rows_without_thinking():
    session = make_session(4)
    view = make_engine(binding="deepseek-relay").view(session)
    assert view[-2].reasoning == (Reasoning(PLACEHOLDER, "reasoning_content"),)


def test_before_adr_0256_relays_get_empty_strings_and_no_retained_turns():
    session = make_session(16)
    engine = make_engine(LEGACY, binding="deepseek-relay")
    assert engine.view(session)[-2].reasoning == (Reasoning("", "reasoning_content"),)
    compact(session, engine)
    assert shape(engine.view(session)) == ["S", "U"]


def test_official_binding_fills_empty_strings():
    session = make_session(4)
    assert make_engine().view(session)[-2].reasoning == (Reasoning("", "reasoning_content"),)


def test_rebuilt_rows_are_normalized_to_the_live_relay_field():
    # Retained rows are stamped reasoning_content; the relay's live rows use reasoning_text.
    session = make_session(16, field="reasoning_text")
    engine = make_engine(binding="deepseek-relay", reasoning_field="reasoning_text")
    compact(session, engine)
    make_step(session, 99, field="reasoning_text")
    view = engine.view(session)
    fields = {b.field for m in view for b in m.blocks if isinstance(b, Reasoning)}
    assert fields == {"reasoning_text"}
    assert view[-2].reasoning == (Reasoning("thinking 99 " * 30, "reasoning_text"),)


def test_before_d677_the_live_rows_reasoning_is_overwritten():
    session = make_session(16, field="reasoning_text")
    engine = make_engine(get_preset("pre-d677"), binding="deepseek-relay", reasoning_field="reasoning_text")
    compact(session, engine)
    make_step(session, 99, field="reasoning_text")
    assert engine.view(session)[-2].reasoning == (Reasoning(PLACEHOLDER, "reasoning_content"),)


def test_other_bindings_get_no_synthetic_reasoning_and_no_backfill():
    session = make_session(16)
    engine = make_engine(binding="other")
    assert engine.view(session)[-2].reasoning == (Reasoning("", "reasoning_content"),)  # as stored
    compact(session, engine)
    assert shape(engine.view(session)) == ["S", "U"]


def test_retained_turns_are_truncated_to_4000_chars():
    session = make_session(16)
    session.append("assistant/message", Message("assistant", (Reasoning("r" * 5_000), Text("t" * 50), ToolCall("c", "grep", "{}"))))
    session.append("tool/result", tool_result_message("c", "ok"))
    engine = make_engine()
    compact(session, engine)
    (checkpoint,) = [e for e in session.events if e.rewrite_kind == "checkpoint"]
    assert checkpoint.record.retained_reasoning[-1] == RetainedTurn("r" * 4_000 + "…", "t" * 50)


# --- fallbacks ------------------------------------------------------------------------------


def test_a_failed_summary_call_lands_a_retained_tail_checkpoint():
    session = make_session(16)
    engine = make_engine()
    compact(session, engine, Summarizer(error="HTTP 400: nope"))
    (checkpoint,) = [e for e in session.events if e.rewrite_kind == "checkpoint"]
    assert checkpoint.info["mode"] == "retained_tail" and checkpoint.record.summary == FALLBACK_MARKER
    warnings = [e.info["text"] for e in session.events if e.kind == "compaction/warning"]
    assert warnings and "summary call failed: HTTP 400: nope" in warnings[0]


def test_the_summary_input_guard_skips_the_call():
    # A tool result so large that the history crosses window - min(0.8 headroom, max tokens) - 2,048.
    session = make_session(2)
    session.append("assistant/message", Message("assistant", (Reasoning("r"), ToolCall("big", "grep", "{}"))))
    session.append("tool/result", tool_result_message("big", "z" * 22_000))
    engine = make_engine()
    client = compact(session, engine)
    assert client.requests == []
    (checkpoint,) = [e for e in session.events if e.rewrite_kind == "checkpoint"]
    assert checkpoint.info["mode"] == "retained_tail"


# --- config ---------------------------------------------------------------------------------


def test_from_mapping_builds_and_rejects_unknown_keys():
    assert UserTailConfig.from_mapping({"binding": "deepseek-relay", "retained_turns": 2}).retained_turns == 2
    with pytest.raises(UserError, match="unknown user-tail config key 'keep'"):
        UserTailConfig.from_mapping({"keep": 3})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"binding": "openai"}, "user-tail.binding must be one of"),
        ({"reasoning_field": "thoughts"}, "user-tail.reasoning_field must be one of"),
        ({"binding": "deepseek-official", "reasoning_field": "reasoning_text"}, "must be reasoning_content for binding"),
        ({"tail_rule": "all"}, "user-tail.tail_rule must be one of"),
        ({"retained_turns": -1}, "user-tail.retained_turns must be an integer >= 0"),
        ({"retained_chars": True}, "user-tail.retained_chars must be an integer >= 1"),
        ({"summary_max_tokens": 0}, "user-tail.summary_max_tokens must be a positive integer"),
    ],
)
def test_bad_config_is_one_clear_user_error(options, message):
    with pytest.raises(UserError, match=message):
        UserTailConfig(**options)


def test_serialize_conversation_skips_placeholders_and_empty_thinking():
    text = serialize_conversation(
        [Message("assistant", (Reasoning(PLACEHOLDER), Text("a"))), Message("assistant", (Reasoning(""), Text("b")))]
    )
    assert text == "[assistant]: a\n\n[assistant]: b"


def test_fallback_summary_caps_and_never_stacks_its_marker():
    assert fallback_summary("", 10_000) == FALLBACK_MARKER
    once = fallback_summary("notes", 10_000)
    assert once == f"{FALLBACK_MARKER}\n\nnotes"
    assert fallback_summary(once, 10_000) == once
    assert fallback_summary("n" * 500, 300) == f"{FALLBACK_MARKER}\n\n{'n' * 500}"[:300]
