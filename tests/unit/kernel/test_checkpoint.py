"""Checkpoint engine: range selection and tool-pair balance, prune order, envelope, transaction."""

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.api import StepContext
from prefixbench.kernel.engines.checkpoint import (
    INSTRUCTION_MESSAGE,
    CheckpointConfig,
    CheckpointEngine,
    decide_prune,
    select_compactable_range,
    summary_envelope,
)
from prefixbench.kernel.meter import measure
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.kernel.pairs import UnbalancedError, balanced_cuts, open_calls
from prefixbench.kernel.presets import get_preset
from prefixbench.kernel.prune import PrunerConfig, plan_prune
from prefixbench.kernel.session import Header, Session, tool_result_message
from prefixbench.simulator.wire import Envelope, Message, Text, ToolCall, user_text
from tests.builders import ENVELOPE, TOOLS, make_session, make_tool_step


def test_cut_balance_follows_open_tool_calls():
    a0, r0 = make_tool_step(0)
    two_calls = Message("assistant", (ToolCall("x", "f", "{}"), ToolCall("y", "f", "{}")))
    messages = [user_text("u"), a0, r0, two_calls, tool_result_message("x", "1"), tool_result_message("y", "2")]
    assert open_calls(messages) == [0, 0, 1, 0, 2, 1, 0]
    assert balanced_cuts(messages) == [True, True, False, True, False, False, True]
    with pytest.raises(UnbalancedError):
        open_calls([tool_result_message("z", "orphan")])


def test_range_keeps_the_smallest_tail_reaching_the_budget_then_widens_to_a_balanced_cut():
    session = make_session(4)  # surface: u, a0 r0, a1 r1, a2 r2, a3 r3
    m = measure(session)
    tokens = [n.tokens for n in m.nodes]
    # Budget reached inside the last result alone: the cut must still keep a3 with r3.
    region = select_compactable_range(session, m, retain_tokens=tokens[-1])
    assert region is not None and region.count == len(tokens) - 2
    assert (region.start, region.end) == (session.surface[0], session.surface[-3])
    # A budget covering r3 + a3 + r2 lands between a2 and r2: widened back before a2.
    region = select_compactable_range(session, m, retain_tokens=sum(tokens[-3:]))
    assert region is not None and region.count == len(tokens) - 4


def test_no_range_when_the_tail_would_swallow_everything():
    session = make_session(2)
    m = measure(session)
    assert select_compactable_range(session, m, retain_tokens=10**9) is None


def test_open_call_at_the_end_pushes_the_cut_before_it():
    session = make_session(1)
    session.append("assistant/message", Message("assistant", (Text("calling"), ToolCall("open", "f", "{}"))))
    m = measure(session)
    region = select_compactable_range(session, m, retain_tokens=0)
    assert region is not None and region.count == len(session.surface) - 1


def test_summary_envelope_inherits_only_on_an_exact_route_match():
    header = Header(Envelope("acme", "m1", "max", 0.3, ("STOP",)))
    assert summary_envelope(header, ("acme", "m1"), inherit=True) == Envelope("acme", "m1", "max", 0.3, ("STOP",))
    assert summary_envelope(header, ("acme", "m1"), inherit=False) == Envelope("acme", "m1")
    assert summary_envelope(header, ("acme", "other"), inherit=True) == Envelope("acme", "other")


def test_adapter_default_effort_fills_an_unset_effort_on_the_wire():
    info = ModelInfo("acme", "m1", 1000, 100, "high")
    assert info.wire_envelope(Envelope("acme", "m1")).reasoning_effort == "high"
    assert info.wire_envelope(Envelope("acme", "m1", "max")).reasoning_effort == "max"


PRUNE = PrunerConfig(threshold_chars=100, head_chars=30, tail_chars=20)


def test_prune_decision_is_none_prune_only_or_tail_only():
    session = make_session(6, result_chars=150)
    m = measure(session)
    assert decide_prune(session, m, (), 10, 10).kind == "none"
    plan = plan_prune(session, PRUNE)
    assert decide_prune(session, m, plan, m.total_tokens, 10).kind == "prune-only"
    decision = decide_prune(session, m, plan, threshold_tokens=1, retain_tokens=60)
    assert decision.kind == "tail-only"
    assert decision.tail and decision.tail < set(session.surface)
    assert session.surface[-1] in decision.tail and session.surface[0] not in decision.tail


class FakeModel:
    """Records requests; answers with a fixed summary."""

    def __init__(self, summary: str = "short summary") -> None:
        self.requests = []
        self.summary = summary

    def __call__(self, request):
        self.requests.append(request)
        return Reply((Text(self.summary),))


def _ctx(session, model, window=1000):
    info = ModelInfo("acme", "m1", window, 100, "high")
    return StepContext(session, lambda p, m: info, model)


def test_compaction_replays_the_region_as_a_prefix_and_lands_a_smaller_checkpoint():
    session = make_session(8, result_chars=60)
    last_request_messages = session.derive_messages()
    model = FakeModel()
    engine = CheckpointEngine(CheckpointConfig(threshold_ratio=0.5, retain_tokens=60), get_preset("patched"))
    engine.before_step(_ctx(session, model, window=int(measure(session).total_tokens * 1.5)))
    (request,) = model.requests
    replayed = request.messages[:-1]
    assert replayed == last_request_messages[: len(replayed)]
    assert request.messages[-1] is INSTRUCTION_MESSAGE
    assert request.purpose == "compaction" and request.tools == TOOLS and request.system == "sys"
    assert request.envelope == ENVELOPE  # inherited: same family as the conversation
    kinds = [e.kind for e in session.events[-4:]]
    assert kinds == ["compaction/start", "compaction/summary", "user/message", "compaction/end"]
    checkpoint = session.derive_messages()[0]
    assert "short summary" in checkpoint.text() and checkpoint.role == "user"
    assert session.event(session.surface[0]).rewrite_kind == "checkpoint"


def test_legacy_summary_call_is_sent_in_the_adapter_default_family():
    session = Session("s")
    session.log_header(Header(Envelope("acme", "m1", "max"), "sys", TOOLS))
    session.append("user/message", user_text("u" * 400))
    for n in range(6):
        a, r = make_tool_step(n, result="r" * 200)
        session.append("assistant/message", a)
        session.append("tool/result", r)
    model = FakeModel()
    engine = CheckpointEngine(CheckpointConfig(threshold_ratio=0.5, retain_tokens=60), get_preset("legacy"))
    engine.before_step(_ctx(session, model, window=int(measure(session).total_tokens * 1.5)))
    assert model.requests[0].envelope.reasoning_effort == "high"
    summary = next(e for e in session.events if e.kind == "compaction/summary")
    assert summary.record.reasoning_effort is None


def test_a_checkpoint_not_smaller_than_its_region_is_refused_and_logged():
    session = make_session(4, result_chars=8)
    model = FakeModel(summary="x" * 5000)
    engine = CheckpointEngine(CheckpointConfig(threshold_ratio=0.5, retain_tokens=10), get_preset("patched"))
    surface = session.surface
    engine.before_step(_ctx(session, model, window=int(measure(session).total_tokens * 1.2)))
    assert session.surface == surface
    end = next(e for e in session.events if e.kind == "compaction/end")
    assert "not smaller" in end.info["error"]
    assert any(e.kind == "compaction/warning" for e in session.events)


def test_below_the_threshold_nothing_happens():
    session = make_session(2)
    model = FakeModel()
    CheckpointEngine(CheckpointConfig(), get_preset("patched")).before_step(_ctx(session, model, window=10**6))
    assert model.requests == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"threshold_ratio": 0}, "threshold_ratio must be in"),
        ({"threshold_ratio": 1.5}, "threshold_ratio must be in"),
        ({"retain_ratio": 0.8}, "retain_ratio must be >= 0 and below"),
        ({"retain_ratio": 0.1, "retain_tokens": 5}, "not both"),
        ({"compaction_retries": -1}, "compaction_retries"),
        ({"summarization_provider": "x"}, "set together"),
    ],
)
def test_bad_configs_are_user_errors(kwargs, message):
    with pytest.raises(UserError, match=message):
        CheckpointConfig(**kwargs)


def test_retain_tokens_must_be_below_the_threshold_once_the_window_is_known():
    config = CheckpointConfig(retain_tokens=800)
    assert config.budgets(2000) == (1600, 800)
    with pytest.raises(UserError, match="must be below the threshold"):
        config.budgets(1000)
