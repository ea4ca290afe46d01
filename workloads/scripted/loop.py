"""The agent loop: kernel -> simulated provider -> scripted model -> tools, step by step.

Per turn: the user message lands, then each step runs

    engine.before_step        may prune, call the model for a summary, land a checkpoint
    step/start, header        the routed header is logged when it changes
    request = engine.view     the conversation request
    provider.send(request)    validate, then price against the cache
    script.reply(request)     the scripted model answers
    tool results              one tool message per call

until the model answers without a tool call. What crosses the engine API is checked here, on
every engine (types only, cheap): a view that is not a sequence of messages, and a request an
engine sends through ``ctx.client`` that is not a well-formed :class:`Request`. A user's engine
is guarded where it is built (:mod:`prefixbench.kernel.guard`); the loop adds to any
:class:`~prefixbench.kernel.api.EngineError` the step, the workload and the window it happened
at. Time is a logical clock in milliseconds: each
model call advances it by a fixed latency plus a per-output-token cost, each tool call by the
workload's tool latency, and the idle gap a script puts before a turn by its length, so
TTL-based cache models are reproducible.

An engine may ask to be woken inside the next idle gap (``ctx.wake_at(ms)``): when the gap
starts at or before ``ms`` and ends after it, the clock is set to ``ms`` and ``engine.on_wake(ctx)``
runs, its calls priced then; the user's message comes at the gap's scripted end, or when the
wake's work is done if that is later (:meth:`_Driver.idle`). An engine that never asks sees the
clock advance by the gap, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from prefixbench.kernel.api import Engine, EngineError, StepContext, messages_expected, messages_problem, type_name
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.kernel.session import Session
from prefixbench.simulator.cache import tokens_of
from prefixbench.simulator.checks import is_int, range_text, spelled
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.render import render_message
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Message, Request
from prefixbench.workloads.scripted.base import Agent, Run, finished

if TYPE_CHECKING:
    from prefixbench.kernel.presets import Preset

#: Model latency: a fixed time to first token plus a per-output-token time (logical ms).
FIRST_TOKEN_MS = 600
PER_OUTPUT_TOKEN_MS = 12
TOOL_MS = 250
#: The most tool steps a workload option may ask of one turn (``--steps``, ``--steps-per-turn``,
#: ``--subagent-steps``, ``--main-steps``), and the most user turns (``--turns``): more is refused
#: before any run, as a number no run could finish.
MAX_TOOL_STEPS = 10_000
MAX_TURNS = 10_000
#: A turn that has not ended after this many steps (its tool steps and its answer) is a broken script.
MAX_STEPS_PER_TURN = MAX_TOOL_STEPS + 1


def check_counts(workload: str, **counts: object) -> None:
    """Refuse a turn count (``turns``) outside 1 to :data:`MAX_TURNS` or a tool-step count (any
    other key) outside 1 to :data:`MAX_TOOL_STEPS`, naming the workload and the key.

    Raises:
        UserError: the first count out of its range (:func:`check_count`).
    """
    for key, value in counts.items():
        check_count(workload, key, value, MAX_TURNS if key == "turns" else MAX_TOOL_STEPS)


def check_count(workload: str, key: str, value: object, high: int, low: int = 1) -> None:
    """Refuse ``value`` unless it is a whole number from ``low`` to ``high``, in the words the
    option's ``--help`` gives its range (:func:`~prefixbench.simulator.checks.range_text`); the
    command line names the flag for the key (``seed-coding: --steps must be 1 to 10,000, got 0``).

    Raises:
        UserError: naming the workload, the key, the range and the value.
    """
    if not is_int(value):
        raise UserError(f"{workload}: {key} must be a whole number, {range_text(low, high)}, got {spelled(value)}")
    if not low <= value <= high:  # type: ignore[operator]
        raise UserError(f"{workload}: {key} must be {range_text(low, high)}, got {spelled(value)}")


class Clock(msgspec.Struct):
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


def run_single_agent(
    workload: Agent, new_engine: Callable[[], Engine], engine_name: str, preset: Preset, provider: SimulatedProvider,
    profile: str,
) -> Run:
    """``run`` of a one-agent workload: the loop drives it with one engine (a workload class
    says ``run = run_single_agent``)."""
    return run_workload(workload, new_engine(), provider, preset=preset.name, profile=profile)


def run_workload(
    workload: Agent,
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
    driver = _Driver(workload, engine, provider, f"{workload.name}-{workload.window}-{preset}", report_usage)
    for turn_idx, user_message in enumerate(driver.script.user_turns()):
        # A script may pause the user before a turn (idle-gaps): logical time passes; nothing is
        # sent unless the engine asked to be woken inside the gap.
        driver.idle(turn_idx, driver.script.idle_ms(turn_idx))
        driver.run_turn(turn_idx, user_message)
    return finished(Run(
        workload=workload.name,
        window=workload.window,
        preset=preset,
        engine=engine.name,
        profile=profile,
        cache=provider.cache.name,
        observations=tuple(provider.observations),
        session=driver.session,
        params=workload.params(),
        seed=workload.seed,
        tool_result_chars=driver.tool_result_chars,
        tool_result_chars_kept=tool_result_chars(driver.last_messages),
        longest_idle_ms=driver.longest_idle_ms,
    ))


def tool_result_chars(messages: tuple[Message, ...]) -> int:
    """Characters of tool-result text in ``messages``."""
    return sum(result.text_chars() for message in messages for result in message.tool_results)


class _Driver:
    """One run's moving parts: the session, the script, the logical clock and the provider."""

    def __init__(
        self, workload: Agent, engine: Engine, provider: SimulatedProvider, session_id: str, report_usage: bool
    ) -> None:
        self.workload = workload
        self.engine = engine
        self.provider = provider
        self.report_usage = report_usage
        self.session = Session(session_id)
        self.script = workload.script()
        self.info = workload.model_info()
        self.clock = Clock()
        self.header = workload.header()
        self.wire_envelope = self.info.wire_envelope(self.header.envelope)
        #: The last conversation request's messages and reply, and its prompt + output tokens.
        self.last_reported: tuple[tuple[Message, ...], int] | None = None
        #: The logical time the engine asked to be woken at (``ctx.wake_at``), None without an ask.
        self.wake: int | None = None
        self.ctx = StepContext(
            self.session, self.catalog, self.client, self.info.context_window, self.header, self.now_ms,
            self.reported, self.ask_wake,
        )
        #: Events already reported to the provider as rewrites.
        self.num_flushed = 0
        #: Tool-result characters the tools returned, and the messages of the last conversation request.
        self.tool_result_chars = 0
        self.last_messages: tuple[Message, ...] = ()
        #: The longest idle gap the script paused the user for (:meth:`idle`), logical ms.
        self.longest_idle_ms = 0

    def now_ms(self) -> int:
        """The logical clock an engine reads (``ctx.now_ms()``)."""
        return self.clock.now_ms

    def ask_wake(self, ms: int) -> None:
        """The engine's ask to be woken at ``ms`` (``ctx.wake_at``): replaces an earlier one."""
        self.wake = ms

    def idle(self, turn_idx: int, gap_ms: int) -> None:
        """The user is away ``gap_ms`` before turn ``turn_idx``: the clock moves to the gap's end.

        An ask at a time ``ms`` with start <= ms < end (start: the clock now) wakes the engine:
        the clock is set to ``ms`` and ``engine.on_wake(ctx)`` runs; an ask it makes then for a
        later time in the gap is woken too. Any ask left is dropped with the gap. The clock ends
        at the gap's end, or later if the wakes' calls ran past it (the user's message waits).
        """
        clock = self.clock
        end = clock.now_ms + gap_ms
        self.longest_idle_ms = max(self.longest_idle_ms, gap_ms)
        while self.wake is not None:
            wake, self.wake = self.wake, None
            if not clock.now_ms <= wake < end:
                break
            clock.now_ms = wake
            self.on_wake(turn_idx)
            if self.wake is not None and self.wake <= wake:
                self.wake = None  # a time not after this one: already passed
        self.wake = None
        clock.now_ms = max(clock.now_ms, end)

    def on_wake(self, turn_idx: int) -> None:
        """Call the engine's ``on_wake`` (an error names the gap it happened in)."""
        try:
            wake = getattr(self.engine, "on_wake", None)
            if wake is None:
                raise EngineError(self.engine.name, "ctx.wake_at()", "asked to be woken",
                                  "the engine has no on_wake(ctx) method for the loop to call")
            wake(self.ctx)
        except EngineError as exc:
            where = f"the idle gap before turn {turn_idx}"
            raise exc.locate(step=where, workload=self.workload.name, window=self.workload.window) from exc.__cause__

    def reported(self) -> tuple[tuple[Message, ...], int] | None:
        """What ``ctx.usage_tokens()`` anchors on: the last conversation request and its reply,
        with the provider's prompt + output tokens (a refusal's count too: the 400 states it)."""
        return self.last_reported

    def catalog(self, provider_name: str, model: str) -> ModelInfo:
        """Adapter facts of a model the engine names (the routed one, or a same-sized other)."""
        info = self.info
        if (provider_name, model) == (info.provider, info.model):
            return info
        return ModelInfo(provider_name, model, info.context_window, info.default_max_tokens, info.default_effort)

    def send(self, request: Request) -> tuple[Observation, Reply]:
        """Send one request (noting the rewrites landed since the last), get the scripted reply."""
        for event in self.session.since(self.num_flushed):
            kind = event.rewrite_kind
            if kind is not None:
                self.provider.note_rewrite(kind)
        self.num_flushed = len(self.session.events)
        clock = self.clock
        observation = self.provider.send(request, clock.now_ms, ready_tick=clock.now_ms + FIRST_TOKEN_MS)
        reply = self.script.reply(request)
        out = output_tokens(reply.blocks)
        observation = self.provider.record_output(observation, request, reply.blocks, out)
        clock.advance(FIRST_TOKEN_MS + PER_OUTPUT_TOKEN_MS * out)
        return observation, reply

    def client(self, request: Request) -> Reply:
        """The model client engines send summary calls through (a rejection is an error reply).

        Raises:
            TypeError: ``request`` is not a :class:`Request` carrying a sequence of messages.
        """
        if not isinstance(request, Request):
            raise TypeError(f"ctx.client() takes a Request (ctx.summary_request builds one), got {type_name(request)}")
        problem = messages_problem(request.messages)
        if problem is not None:
            expected = messages_expected(problem)
            raise TypeError(f"ctx.client(): the request's messages: {problem.removeprefix('returned ')}{'; ' + expected if expected else ''}")
        observation, reply = self.send(request)
        if observation.is_rejected:
            return Reply(error=f"HTTP {observation.status}: {observation.error}")
        return reply

    def run_turn(self, turn_idx: int, user_message: Message) -> None:
        """One user turn: steps until the model answers without tool calls."""
        session = self.session
        session.append("turn/start", turn=turn_idx)
        session.append("user/message", user_message)
        for step_idx in range(MAX_STEPS_PER_TURN):
            if not self.run_step(turn_idx, step_idx):
                break
        else:
            raise RuntimeError(f"{self.workload.name}: turn {turn_idx} did not end within {MAX_STEPS_PER_TURN} steps")
        session.append("turn/end", turn=turn_idx)

    def run_step(self, turn_idx: int, step_idx: int) -> bool:
        """One step (see :meth:`_step`); an engine's error is told where it happened."""
        try:
            return self._step(turn_idx, step_idx)
        except EngineError as exc:
            step = f"step {step_idx}" if turn_idx == 0 else f"turn {turn_idx} step {step_idx}"
            raise exc.locate(step=step, workload=self.workload.name, window=self.workload.window) from exc.__cause__

    def view(self) -> tuple[Message, ...]:
        """The engine's view, checked to be a sequence of messages (any engine, built-in too)."""
        messages = self.engine.view(self.session)
        if type(messages) is tuple and all(type(m) is Message for m in messages):
            return messages  # the common case, checked in one pass (the guard checked the blocks)
        problem = messages_problem(messages)
        if problem is not None:
            raise EngineError(self.engine.name, "view()", problem, messages_expected(problem))
        return tuple(messages)

    def _step(self, turn_idx: int, step_idx: int) -> bool:
        """One step: maybe compact, send, record the reply, run its tools; False when it called none."""
        session, engine, header = self.session, self.engine, self.header
        self.wake = None  # an ask holds until the next step starts (or the next idle gap ends)
        engine.before_step(self.ctx)
        step_surface = session.surface
        session.append("step/start", turn=turn_idx, step=step_idx)
        session.log_header(header)
        request = Request(self.wire_envelope, self.view(), header.system, header.tools, self.info.default_max_tokens)
        self.last_messages = request.messages
        # A rejected conversation request is counted; the scripted model still answers
        # (as after a successful retry) so the script advances.
        observation, reply = self.send(request)
        usage: dict[str, object] = {}
        if self.report_usage:
            usage = {
                "usage_tokens": observation.prompt_tokens + output_tokens(reply.blocks),
                "step_surface": step_surface,
            }
        answer = Message("assistant", reply.blocks)
        self.last_reported = ((*request.messages, answer), observation.prompt_tokens + output_tokens(reply.blocks))
        session.append("assistant/message", answer, turn=turn_idx, step=step_idx, header=header, **usage)
        for call in reply.tool_calls:
            result = engine.run_tool(session, call)
            if result is None:
                result = self.script.run_tool(call)
            session.append("tool/result", result, turn=turn_idx, step=step_idx)
            self.tool_result_chars += tool_result_chars((result,))
            self.clock.advance(TOOL_MS)
        session.append("step/end", turn=turn_idx, step=step_idx)
        return bool(reply.tool_calls)
