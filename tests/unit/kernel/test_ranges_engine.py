"""RangesEngine on a session: the compress tool, durable events, the transient nudge, the valve.

The last tests drive the real loop with a small thinking-mode workload against the strict
DeepSeek profile: with reasoning pairs every compression keeps turns whole (no 400), without
them (legacy) a compression splits a turn and the provider rejects the replay.
"""

from collections.abc import Iterator
from typing import ClassVar

import msgspec

from prefixbench.kernel.api import StepContext
from prefixbench.kernel.engines.ranges import RangesEngine
from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.ranges_nudge import NUDGE_MARKER
from prefixbench.kernel.engines.ranges_view import SUMMARY_MARKER
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.kernel.presets import Preset, get_preset
from prefixbench.kernel.session import Header, Session, tool_result_message
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.validate import make_validator
from prefixbench.simulator.wire import (
    Envelope,
    Message,
    Reasoning,
    Request,
    Text,
    ToolCall,
    ToolSchema,
    canonical_json,
    user_text,
)
from prefixbench.workloads.specs.base import first_silent_rewrite
from prefixbench.workloads.scripted.loop import run_workload
from prefixbench.workloads.scripted.prose import prose
from prefixbench.workloads.scripted.ranges_responder import COMPRESS_TOOL, compress_reply

ENVELOPE = Envelope("deepseek", "deepseek-reasoner", "high")
READ_FILE = ToolSchema.make("read_file", "Read a file.", {"type": "object"})
HEADER = Header(ENVELOPE, "sys", (READ_FILE, COMPRESS_TOOL))
SUMMARY = "Steps 0 to 3 read the parser and found the bad offset in the tokenizer loop."


def make_session(num_steps: int, *, result_chars: int = 100) -> Session:
    session = Session("ranges")
    session.log_header(HEADER)
    session.append("user/message", user_text("start"))
    for n in range(num_steps):
        call = ToolCall(f"c{n}", "read_file", "{}")
        session.append("assistant/message", Message("assistant", (Reasoning(f"think {n}"), Text(f"step {n}"), call)))
        session.append("tool/result", tool_result_message(f"c{n}", prose(f"file {n}", result_chars)))
    return session


def make_ctx(session: Session, window: int = 1_000_000) -> StepContext:
    def catalog(provider: str, model: str) -> ModelInfo:
        return ModelInfo(provider, model, window, 4_000, "high")

    def client(request: Request) -> Reply:
        raise AssertionError("the ranges engine never calls a model")

    return StepContext(session, catalog, client)


def compress_call(start: str, end: str, call_id: str = "k1", summary: str = SUMMARY) -> ToolCall:
    return ToolCall(
        call_id, "compress", canonical_json({"ranges": [{"startRef": start, "endRef": end, "summary": summary}]})
    )


OPEN = RangesConfig(preserve_recent_messages=0, preserve_recent_tokens=0, min_compress_range=0)
PATCHED = get_preset("patched")


def test_other_tools_are_not_the_engines():
    assert RangesEngine(OPEN, PATCHED).run_tool(make_session(1), ToolCall("c9", "read_file", "{}")) is None


def test_compress_logs_a_durable_rewrite_and_renders_the_summary():
    session = make_session(6)
    engine = RangesEngine(OPEN, PATCHED)
    engine.before_step(make_ctx(session))
    call = compress_call("m00003", "m00017")
    session.append("assistant/message", Message("assistant", (Reasoning("compress now"), call)))
    result = engine.run_tool(session, call)
    assert result == tool_result_message(
        "k1", "compressed m00002..m00017 into b1 (tier 1, 16 parts, ~128 tokens)"
    )  # 4 x (2 + 2 + 3 + 25)
    (event,) = [e for e in session.events if e.kind == "compaction/compress"]
    assert event.rewrite_kind == "compress"
    assert (event.info["block_id"], event.info["tier"], event.info["compress_call_id"]) == ("b1", 1, "k1")
    assert event.info["covered_refs"] == tuple(f"m{n:05d}" for n in range(2, 18))
    session.append("tool/result", result)
    view = engine.view(session)
    assert view[0] == user_text("start")
    assert view[1] == Message("system", (Text(f"{SUMMARY_MARKER}\n{SUMMARY}"),))
    assert view[2] == session.message_at(session.surface[9])  # step 4, untouched
    assert view[-1] == result
    assert len(view) == 1 + 1 + 2 * 2 + 2


def test_a_refused_compress_is_an_error_result_and_a_warning():
    session = make_session(3)
    engine = RangesEngine(OPEN, PATCHED)
    result = engine.run_tool(session, compress_call("m00003", "m00005", summary="too short"))
    assert result.tool_results[0].is_error
    assert result.text() == "" and "minimum 50" in result.tool_results[0].content[0].text
    assert [e.kind for e in session.events][-1] == "compaction/warning"
    assert not any(e.kind == "compaction/compress" for e in session.events)
    bad = engine.run_tool(session, ToolCall("k2", "compress", "not json"))
    assert bad.tool_results[0].content[0].text.startswith("error: arguments are not JSON")


def test_a_nudge_is_transient_and_noted_when_it_leaves_the_view():
    # Twelve steps plus the header are 1,074 tokens: 83% of a 1,300-token limit (pressure).
    config = RangesConfig(
        context_limit=1_300, preserve_recent_messages=4, preserve_recent_tokens=0, min_compress_range=500
    )
    session = make_session(12, result_chars=160)
    engine = RangesEngine(config, PATCHED)
    engine.before_step(make_ctx(session))
    view = engine.view(session)
    nudge = view[-1]
    assert nudge.role == "user" and nudge.text().startswith(NUDGE_MARKER)
    assert nudge.text().splitlines()[1] == "range m00002 m00045"
    assert view[:-1] == session.derive_messages()  # nothing compressed yet, nothing persisted
    # The model ignores it: next step, the nudge is logged as a rewrite of the last request.
    session.append("assistant/message", Message("assistant", (Reasoning("no"), Text("carry on"))))
    engine.before_step(make_ctx(session))
    (event,) = [e for e in session.events if e.kind == "compaction/nudge"]
    assert event.rewrite_kind == "nudge"
    assert (event.info["tier"], event.info["reason"], event.info["is_followed"]) == (1, "pressure", False)


def test_a_followed_nudge_is_logged_without_a_second_rewrite():
    config = RangesConfig(
        context_limit=1_300, preserve_recent_messages=4, preserve_recent_tokens=0, min_compress_range=500
    )
    session = make_session(12, result_chars=160)
    engine = RangesEngine(config, PATCHED)
    engine.before_step(make_ctx(session))
    request = Request(ENVELOPE, engine.view(session), "sys", HEADER.tools)
    reply = compress_reply(request)
    session.append("assistant/message", Message("assistant", reply.blocks))
    session.append("tool/result", engine.run_tool(session, reply.tool_calls[0]))
    engine.before_step(make_ctx(session))
    (event,) = [e for e in session.events if e.kind == "compaction/nudge"]
    assert event.rewrite_kind is None and event.info["is_followed"] is True
    assert [e.rewrite_kind for e in session.events if e.rewrite_kind] == ["compress"]


def test_emergency_truncation_is_logged_and_rendered():
    # 6 results of 8,000 characters (2,000 tokens): 12,378 tokens in a 10,000-token window.
    # The valve cuts outputs outside the last 5 parts, 984 tokens saved each, until the
    # context is under 0.9 x 9,500 = 8,550: four cuts (12,378 - 3,936 = 8,442).
    config = RangesConfig(context_limit=10_000, tiers_enabled=True)
    session = make_session(6, result_chars=8_000)
    engine = RangesEngine(config, PATCHED)
    engine.before_step(make_ctx(session))
    (event,) = [e for e in session.events if e.kind == "compaction/prune"]
    assert event.rewrite_kind == "truncate"
    assert event.info["truncated_refs"] == ("m00005", "m00009", "m00013", "m00017")
    assert event.info["shadowed_seqs"] == (3, 5, 7, 9)
    view = engine.view(session)
    assert "[truncated for context space]" in view[2].tool_results[0].content[0].text
    assert view[-2] == session.derive_messages()[-1]  # recent output untouched
    assert view[-1].text().startswith(NUDGE_MARKER)  # and the model is asked to compress
    assert "emergency" in view[-1].text().splitlines()[0]
    # Once truncated, it stays truncated and is not logged again.
    engine.before_step(make_ctx(session))
    assert sum(1 for e in session.events if e.kind == "compaction/prune") == 1


# --- the loop, end to end ----------------------------------------------------------------------


class ThinkingScript(msgspec.Struct):
    """Two user turns of thinking tool steps; answers nudges by compressing."""

    steps_per_turn: int
    num_steps: int = 0

    def user_turns(self) -> Iterator[Message]:
        yield user_text("Fix the failing parser tests.")
        yield user_text("Now make the tokenizer faster.")

    def idle_ms(self, turn: int) -> int:
        """The user never steps away."""
        return 0

    def reply(self, request: Request) -> Reply:
        nudged = compress_reply(request)
        if nudged is not None:
            return nudged
        n = self.num_steps
        self.num_steps += 1
        if n % (self.steps_per_turn + 1) == self.steps_per_turn:
            return Reply((Reasoning(prose(f"wrap {n}", 200)), Text(f"Done with part {n}.")))
        return Reply(
            (Reasoning(prose(f"think {n}", 300)), Text(prose(f"plan {n}", 200)), ToolCall(f"c{n}", "read_file", "{}"))
        )

    def run_tool(self, call: ToolCall) -> Message:
        return tool_result_message(call.call_id, prose(f"file {call.call_id}", 1_600))


class ThinkingWorkload(msgspec.Struct):
    window: int = 16_000
    steps_per_turn: int = 30
    seed: int = 0
    name: ClassVar[str] = "tiny-thinking"

    def model_info(self) -> ModelInfo:
        return ModelInfo("deepseek", "deepseek-reasoner", self.window, 2_000, "high")

    def header(self) -> Header:
        return HEADER

    def engine(self, engine_name: str, preset: Preset) -> RangesEngine:
        return RangesEngine(RangesConfig(), preset)

    def script(self) -> ThinkingScript:
        return ThinkingScript(self.steps_per_turn)

    def params(self) -> dict[str, object]:
        return {}


def run(preset_name: str):
    workload = ThinkingWorkload()
    preset = get_preset(preset_name)
    provider = SimulatedProvider(validator=make_validator("deepseek-official"))
    return run_workload(
        workload, workload.engine("ranges", preset), provider, preset=preset_name, profile="deepseek-official"
    )


def test_patched_compresses_without_a_single_400_or_silent_rewrite():
    result = run("patched")
    assert result.num_folds == 5
    assert result.num_rejected == 0
    assert first_silent_rewrite(result) is None
    # Every nudge was answered by a compression, and the conversation never outgrew the window.
    nudges = [e for e in result.session.events if e.kind == "compaction/nudge"]
    assert [e.info["is_followed"] for e in nudges] == [True] * 5
    assert max(o.prompt_tokens for o in result.conversations) < 16_000


def test_legacy_splits_a_turn_and_the_strict_provider_rejects_it():
    result = run("legacy")
    assert result.num_folds == 4
    # From the first compression on, a turn replays its text without its reasoning.
    assert result.num_rejected >= 1
    first = next(o for o in result.observations if o.is_rejected)
    assert "reasoning_content in the thinking mode must be passed back" in first.error
