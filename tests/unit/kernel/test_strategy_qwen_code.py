"""qwen-code-compress (kernel/strategies/qwen_code.py): its auto tier, the whole-history summary
call, the rebuilt history, its failure breaker, its settings."""

from __future__ import annotations

import pytest

from prefixbench.kernel import EngineOptions, Message, Reply, Request, Text, ToolResult, user_text
from prefixbench.kernel.strategies.qwen_code import (
    ACKNOWLEDGEMENT,
    COMPRESSION_SYSTEM,
    KICKOFF,
    QwenCodeCompress,
    auto_threshold,
    factory,
    strip_analysis,
)
from tests.unit.kernel.agent_sessions import Recorder, context, left_alone, rewrites, session_with


def test_the_auto_tier_is_a_share_of_the_window_capped_by_the_reserve_and_buffer():
    assert auto_threshold(32_000, 0.85) == 27_200  # 32,000 - 33,000 < 0: the share alone
    assert auto_threshold(128_000, 0.85) == 95_000  # 128,000 - 20,000 - 13,000
    assert auto_threshold(1_000_000, 0.85) == 850_000  # the share is below the ceiling
    assert auto_threshold(128_000, 0.5) == 64_000


def test_nothing_happens_below_the_auto_tier():
    session = session_with([("task", 12)])  # 6,367 tokens
    assert left_alone(QwenCodeCompress(7_500), session, 7_500)  # auto tier 6,375
    client = Recorder()
    QwenCodeCompress(7_490).before_step(context(session, 7_490, client))  # auto tier 6,366.5
    assert len(client.sent) == 1 and rewrites(session) == ["checkpoint"]


def test_mid_loop_the_whole_history_and_the_pending_results_are_summarized():
    session = session_with([("first task", 5), ("second task", 10)])
    messages = session.derive_messages()
    client = Recorder("<analysis>thinking</analysis><state_snapshot>S</state_snapshot>")
    engine = QwenCodeCompress(9_000)  # auto tier 7,650; the session counts 7,967
    engine.before_step(context(session, 9_000, client))
    (request,) = client.sent
    assert request.messages == (*messages, user_text(KICKOFF))  # every call with its result
    assert (request.system, request.tools, request.max_tokens) == (COMPRESSION_SYSTEM, (), 20_000)
    assert request.envelope.model == "m"
    view = engine.view(session)
    ack = view[1]
    assert view[0] == user_text("<state_snapshot>S</state_snapshot>")  # the analysis dropped
    assert ack.role == "assistant" and ack.text() == ACKNOWLEDGEMENT
    assert ack.tool_calls == messages[-2].tool_calls  # the pending result keeps its call
    assert view[2:] == (messages[-1],) and isinstance(messages[-1].blocks[0], ToolResult)
    assert rewrites(session) == ["checkpoint"]


def test_at_a_turn_boundary_the_new_user_message_is_not_summarized():
    session = session_with([("first task", 12)])
    session.append("assistant/message", Message("assistant", (Text("done"),)))
    session.append("user/message", user_text("next task"))
    client = Recorder()
    engine = QwenCodeCompress(7_000)  # auto tier 5,950
    engine.before_step(context(session, 7_000, client))
    assert client.sent[0].messages[-2] == Message("assistant", (Text("done"),))
    view = engine.view(session)
    assert view[1] == Message("assistant", (Text(ACKNOWLEDGEMENT),)) and view[2:] == (user_text("next task"),)


def test_a_summary_model_sends_the_call_elsewhere():
    session = session_with([("task", 12)])
    client = Recorder()
    QwenCodeCompress(7_000, summary_model="fast").before_step(context(session, 7_000, client))
    assert client.sent[0].envelope.model == "fast"


class Failing(Recorder):
    def __call__(self, request: Request) -> Reply:
        self.sent.append(request)
        return Reply(())


def test_three_failures_in_a_row_stop_automatic_compression():
    session = session_with([("task", 12)])
    client = Failing()
    engine = QwenCodeCompress(7_000)
    for _ in range(5):
        engine.before_step(context(session, 7_000, client))
    assert len(client.sent) == 3 and rewrites(session) == []


def test_a_summary_that_does_not_shrink_the_history_is_a_failure():
    session = session_with([("task", 12)], chars=200)
    client = Recorder("x" * 20_000)
    engine = QwenCodeCompress(1_000)  # auto tier 850; the session counts 967
    engine.before_step(context(session, 1_000, client))
    assert rewrites(session) == [] and engine.failures == 1


def test_strip_analysis():
    assert strip_analysis("<analysis>a</analysis>\nkept") == "\nkept"
    assert strip_analysis("no block") == "no block"


def test_the_factory_reads_its_settings():
    engine = factory(128_000, EngineOptions())
    assert (engine.auto, engine.summary_model, engine.max_failures) == (95_000, "", 3)
    # The default share (0.85) decides where the ceiling is higher: 32k and 512k.
    assert (factory(32_000, EngineOptions()).auto, factory(512_000, EngineOptions()).auto) == (27_200, 435_200)
    engine = factory(128_000, EngineOptions(config={"auto_compact_pct": 0.5, "summary_model": "fast", "max_failures": 1}))
    assert (engine.auto, engine.summary_model, engine.max_failures) == (64_000, "fast", 1)
    with pytest.raises(ValueError, match="qwen-code-compress: unknown setting"):
        factory(128_000, EngineOptions(config={"pct": 0.5}))
    with pytest.raises(ValueError, match="auto_compact_pct must be in"):
        factory(128_000, EngineOptions(config={"auto_compact_pct": 0}))
    # A breaker of 0 would stop compression before the first try: refused, not silently off.
    with pytest.raises(ValueError, match="qwen-code-compress: max_failures must be at least 1, got 0"):
        factory(128_000, EngineOptions(config={"max_failures": 0}))


def test_qwen_code_imports_no_other_engine():
    """Shared helpers live in kernel/strategies/history.py, not in another engine's module."""
    import ast
    from pathlib import Path

    import prefixbench.kernel.strategies.qwen_code as module

    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    engines = {m for m in imported if m.startswith("prefixbench.kernel.strategies.")}
    assert engines <= {f"prefixbench.kernel.strategies.{m}" for m in ("history", "foldview", "settings")}, engines
