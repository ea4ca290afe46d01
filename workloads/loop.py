"""The agent loop: kernel -> simulated provider -> scripted model -> tools, step by step.

Per turn: the user message lands, then each step runs

    engine.before_step        may prune, call the model for a summary, land a checkpoint
    step/start, header        the routed header is logged when it changes
    request = engine.view     the conversation request
    provider.send(request)    validate, then price against the cache
    script.reply(request)     the scripted model answers
    tool results              one tool message per call

until the model answers without a tool call. Time is a logical clock in milliseconds: each
model call advances it by a fixed latency plus a per-output-token cost, each tool call by the
workload's tool latency, so TTL-based cache models are reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefixbench.kernel.engines.base import Engine, StepContext
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.kernel.session import Session
from prefixbench.simulator.cache import tokens_of
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.render import render_message
from prefixbench.simulator.wire import Message, Request
from prefixbench.workloads.base import Run, Workload

#: Model latency: a fixed time to first token plus a per-output-token time (logical ms).
FIRST_TOKEN_MS = 600
PER_OUTPUT_TOKEN_MS = 12
TOOL_MS = 250
#: A turn that has not ended after this many steps is a broken script.
MAX_STEPS_PER_TURN = 10_000


@dataclass(slots=True)
class Clock:
    """The logical clock of one run, in milliseconds."""

    now_ms: int = 0

    def advance(self, ms: int) -> None:
        """Move time forward."""
        self.now_ms += ms


def output_tokens(blocks: tuple) -> int:
    """Output tokens of a reply, counted like prompt bytes: ceil(rendered bytes / 4)."""
    if not blocks:
        return 0
    return tokens_of(len(render_message(Message("assistant", blocks)).data))


def run_workload(
    workload: Workload,
    engine: Engine,
    provider: SimulatedProvider,
    *,
    preset: str,
    profile: str = "lenient",
    report_usage: bool = False,
) -> Run:
    """Drive one scripted session through ``engine`` against ``provider``; returns the run.

    Args:
        report_usage: attach the provider's prompt + output tokens to each assistant message,
            so the token meter anchors on them (the seed workload does not).
    """
    session = Session(f"{workload.name}-{workload.window}-{preset}")
    script = workload.script()
    info = workload.model_info()
    clock = Clock()
    flushed = 0

    def catalog(provider_name: str, model: str) -> ModelInfo:
        if (provider_name, model) == (info.provider, info.model):
            return info
        return ModelInfo(provider_name, model, info.context_window, info.default_max_tokens, info.default_effort)

    def send(request: Request) -> tuple[Observation, Reply]:
        nonlocal flushed
        for event in session.since(flushed):
            kind = event.rewrite_kind
            if kind is not None:
                provider.note_rewrite(kind)
        flushed = len(session.events)
        observation = provider.send(request, clock.now_ms, ready_tick=clock.now_ms + FIRST_TOKEN_MS)
        reply = script.reply(request)
        out = output_tokens(reply.blocks)
        observation = provider.record_output(observation, request, reply.blocks, out)
        clock.advance(FIRST_TOKEN_MS + PER_OUTPUT_TOKEN_MS * out)
        return observation, reply

    def client(request: Request) -> Reply:
        observation, reply = send(request)
        if observation.is_rejected:
            return Reply(error=f"HTTP {observation.status}: {observation.error}")
        return reply

    ctx = StepContext(session, catalog, client)
    header = workload.header()
    wire_envelope = info.wire_envelope(header.envelope)
    for turn_idx, user_message in enumerate(script.user_turns()):
        session.append("turn/start", turn=turn_idx)
        session.append("user/message", user_message)
        for step_idx in range(MAX_STEPS_PER_TURN):
            engine.before_step(ctx)
            step_surface = session.surface
            session.append("step/start", turn=turn_idx, step=step_idx)
            session.log_header(header)
            request = Request(
                wire_envelope, engine.view(session), header.system, header.tools, info.default_max_tokens
            )
            # A rejected conversation request is counted; the scripted model still answers
            # (as after a successful retry) so the script advances.
            observation, reply = send(request)
            usage: dict[str, object] = {}
            if report_usage:
                usage = {
                    "usage_tokens": observation.prompt_tokens + output_tokens(reply.blocks),
                    "step_surface": step_surface,
                }
            session.append(
                "assistant/message", Message("assistant", reply.blocks), turn=turn_idx, step=step_idx,
                header=header, **usage,
            )
            for call in reply.tool_calls:
                result = engine.run_tool(session, call)
                if result is None:
                    result = script.run_tool(call)
                session.append("tool/result", result, turn=turn_idx, step=step_idx)
                clock.advance(TOOL_MS)
            session.append("step/end", turn=turn_idx, step=step_idx)
            if not reply.tool_calls:
                break
        else:
            raise RuntimeError(f"{workload.name}: turn {turn_idx} did not end within {MAX_STEPS_PER_TURN} steps")
        session.append("turn/end", turn=turn_idx)
    return Run(
        workload=workload.name,
        window=workload.window,
        preset=preset,
        engine=engine.name,
        profile=profile,
        cache=provider.cache.name,
        observations=tuple(provider.observations),
        session=session,
        params=workload.params(),
    )

