"""``thinking-tools``: a DeepSeek thinking-mode coding session with tools, scaled to a window.

``turns`` user turns; in each the model makes ``steps_per_turn`` tool calls, then answers in
text. Every request carries the tools, so a strict DeepSeek endpoint wants the reasoning of
every earlier assistant row passed back (DeepSeek's thinking-mode guide, api-docs.deepseek.com/guides/thinking_mode). Per tool step (``s`` = 2% of the
window, in tokens, times a per-step factor between 0.75 and 1.25)::

    assistant   reasoning 0.3 s | text 0.1 s | tool call        every 4th step: reasoning ""
    tool        result 0.6 s

So one step grows the context by about 2% of the window at any window, and the default 4
turns of 40 steps (a turn is about 80% of the window) fold several times with every engine at
32k, 128k and 512k. A turn that long is also what makes ``ranges`` compress inside the current
turn, where a range can end between reasoning and its reply (seed 000). Step reasoning is
longer than the 4,000 characters a user-tail checkpoint keeps from 256k windows up. The
turn's final answer is short, with a short thought (none in every third turn). A step without
thinking carries an empty reasoning block, as the endpoint returns one.

The binding (``deepseek-official`` or ``deepseek-relay``) is the endpoint the agent's client
talks to: the relay emits and reads ``reasoning_field``; the official endpoint always uses
``reasoning_content``. On a relay, the checkpoint and ranges engines replay rows through a
client that sends the placeholder for an empty reasoning (:class:`ReplayAdapter`); the
user-tail engine does its own backfill (seed 003's ADR 0256).

All engines see the same tools, ``compress`` included, so their static heads are identical and
their uncached tokens compare fairly; only ``ranges`` ever nudges the model to call it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any, ClassVar

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.kernel.api import Engine
from prefixbench.kernel.engines.checkpoint import CheckpointConfig, CheckpointEngine
from prefixbench.kernel.engines.ranges import RangesEngine
from prefixbench.kernel.engines.ranges_config import RangesConfig
from prefixbench.kernel.engines.user_tail import UserTailConfig, UserTailEngine
from prefixbench.kernel.meter import CHARS_PER_TOKEN
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.kernel.presets import Preset
from prefixbench.kernel.reasoning import PLACEHOLDER, ReplayAdapter
from prefixbench.kernel.session import Header, tool_result_message
from prefixbench.simulator.wire import (
    REASONING_FIELDS,
    Block,
    Envelope,
    Message,
    Reasoning,
    Request,
    Text,
    ToolCall,
    ToolSchema,
    user_text,
)
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.windows import MIN_WINDOW
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.scripted.loop import check_counts, run_workload
from prefixbench.workloads.scripted.prose import prose
from prefixbench.workloads.scripted.ranges_responder import (
    COMPRESS_TOOL,
    MAX_SUMMARY_CHARS,
    MIN_SUMMARY_CHARS,
    compress_reply,
)

BINDINGS: tuple[str, ...] = ("deepseek-official", "deepseek-relay")
ENGINES: tuple[str, ...] = ("checkpoint", "user-tail", "ranges")
#: Efforts that keep DeepSeek thinking on (``none`` would turn it off, and the workload with it).
EFFORTS: tuple[str, ...] = ("low", "high", "max")
#: The binding a provider profile implies (lenient: the official endpoint, unchecked).
PROFILE_BINDING: dict[str, str] = {
    "deepseek-official": "deepseek-official",
    "deepseek-relay": "deepseek-relay",
    "lenient": "deepseek-official",
}
#: One tool step, as a share of the window in tokens.
STEP_SHARE = 0.02
#: Per-step size factors, cycled, so no two neighbouring steps are the same size.
STEP_FACTORS = (1.0, 0.75, 1.25, 1.0, 1.25, 0.75)
#: Every this many steps (the last of each group) the model does not think.
NO_THINKING_EVERY = 4
#: The adapter's output cap (also what the user-tail budget reads as the model's max tokens).
MAX_OUTPUT_TOKENS = 8192
MODEL = "deepseek-v4-flash"

SYSTEM_PROMPT = (
    "You are a coding agent in a local repository. Think before each action, use the tools to "
    "read, search and test, keep changes small, and say what you changed when a task is done."
)
TOOLS: tuple[ToolSchema, ...] = (
    ToolSchema.make(
        "read_file",
        "Read one file of the workspace.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    ToolSchema.make(
        "grep",
        "Search the workspace for a pattern.",
        {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
    ),
    ToolSchema.make(
        "run_tests",
        "Run the test suite, or one target of it.",
        {"type": "object", "properties": {"target": {"type": "string"}}},
    ),
    COMPRESS_TOOL,
)


def binding_for_profile(profile: str) -> str:
    """The client binding a run under ``profile`` uses (UserError for an unknown profile)."""
    try:
        return PROFILE_BINDING[profile]
    except KeyError:
        raise UserError(f"unknown profile {profile!r} (known: {', '.join(PROFILE_BINDING)})") from None


class ThinkingToolsWorkload(msgspec.Struct, frozen=True):
    """DeepSeek thinking mode with tools: several user turns of tool steps whose turns carry reasoning."""

    window: int
    turns: int = 4
    steps_per_turn: int = 40
    binding: str = "deepseek-official"
    #: The field the relay emits and reads (the official endpoint uses reasoning_content).
    reasoning_field: str = "reasoning_content"
    effort: str = "high"
    #: Engine policies; None = this workload's defaults. A user-tail config takes the
    #: workload's binding and reasoning field, which describe the endpoint, not the engine.
    checkpoint: CheckpointConfig | None = None
    user_tail: UserTailConfig | None = None
    ranges: RangesConfig | None = None
    #: Shape variation (0 = the fixed cycle of step sizes; see :meth:`step_sizes`).
    seed: int = 0
    #: The workload's name: a class constant, not a field (not an argument, not in the run spec).
    name: ClassVar[str] = "thinking-tools"

    def __post_init__(self) -> None:
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < MIN_WINDOW:
            raise UserError(f"thinking-tools: window must be an integer >= {MIN_WINDOW}, got {self.window!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UserError(f"thinking-tools: seed must be an integer >= 0, got {self.seed!r}")
        check_counts("thinking-tools", turns=self.turns, steps_per_turn=self.steps_per_turn)
        if self.binding not in BINDINGS:
            raise UserError(f"thinking-tools: binding must be one of {', '.join(BINDINGS)}, got {self.binding!r}")
        if self.reasoning_field not in REASONING_FIELDS:
            raise UserError(
                f"thinking-tools: reasoning_field must be one of {', '.join(REASONING_FIELDS)}, "
                f"got {self.reasoning_field!r}"
            )
        if self.binding == "deepseek-official" and self.reasoning_field != "reasoning_content":
            raise UserError(
                f"thinking-tools: the official endpoint uses reasoning_content, got reasoning_field {self.reasoning_field!r}"
            )
        if self.effort is None:  # the word seed-coding takes for the adapter's effort (--effort default)
            raise UserError(f"thinking-tools: effort must be one of {', '.join(EFFORTS)} (thinking on), got 'default' "
                            "(thinking mode sends an effort; its default is high)")
        if self.effort not in EFFORTS:
            raise UserError(f"thinking-tools: effort must be one of {', '.join(EFFORTS)} (thinking on), got {self.effort!r}")
        if self.ranges is not None:
            _check_summary_bounds(self.ranges)

    # --- sizes ---------------------------------------------------------------------------

    @property
    def step_chars(self) -> int:
        """Characters of one average tool step (reasoning + text + result)."""
        return int(self.window * STEP_SHARE * CHARS_PER_TOKEN)

    def step_sizes(self, turn: int, step: int) -> tuple[int, int, int]:
        """``(reasoning, text, result)`` characters of one tool step (reasoning 0 = no thinking).

        Seed 0 cycles :data:`STEP_FACTORS` and skips thinking on every 4th step. Another seed
        draws each step's factor between 0.75 and 1.25 and skips thinking with probability 1/4,
        from its own ``random.Random(seed)``.
        """
        if self.seed == 0:
            factor = STEP_FACTORS[(turn * 7 + step) % len(STEP_FACTORS)]
            thinks = step % NO_THINKING_EVERY != NO_THINKING_EVERY - 1
        else:
            factor, thinks = _seeded_steps(self.seed, self.turns, self.steps_per_turn)[turn][step]
        base = self.step_chars * factor
        return (int(0.3 * base) if thinks else 0, max(40, int(0.1 * base)), int(0.6 * base))

    # --- Workload protocol ----------------------------------------------------------------

    def model_info(self) -> ModelInfo:
        """DeepSeek V4 Flash at this window, output cap 8,192, adapter default effort high."""
        return ModelInfo("deepseek", MODEL, self.window, MAX_OUTPUT_TOKENS, "high")

    def header(self) -> Header:
        """Thinking at ``effort`` with the workspace tools and ``compress``."""
        return Header(Envelope("deepseek", MODEL, self.effort), SYSTEM_PROMPT, TOOLS)

    def engine(self, engine_name: str, preset: Preset) -> Engine:
        """``checkpoint``, ``user-tail`` or ``ranges``, configured for this window and binding."""
        inner: Engine
        match engine_name:
            case "user-tail":
                tail = replace(self.user_tail or UserTailConfig(), binding=self.binding, reasoning_field=self.reasoning_field)
                return UserTailEngine(tail, preset)
            case "checkpoint":
                config = self.checkpoint or CheckpointConfig(
                    threshold_ratio=0.8, retain_ratio=0.16, max_tokens=MAX_OUTPUT_TOKENS
                )
                inner = CheckpointEngine(config, preset)
            case "ranges":
                inner = RangesEngine(self.ranges or RangesConfig(context_limit=self.window), preset)
            case _:
                raise UserError(f"workload thinking-tools has no engine {engine_name!r} (known: {', '.join(ENGINES)})")
        return self.wrap_client(inner)

    def wrap_client(self, engine: Engine) -> Engine:
        """The client side of this binding around an engine that replays rows as emitted: on a
        relay, an empty reasoning echo goes out as the placeholder (as LiteLLM sends it)."""
        if self.binding == "deepseek-relay":
            return ReplayAdapter(engine, PLACEHOLDER)
        return engine

    def script(self) -> ThinkingToolsScript:
        """A fresh script."""
        return ThinkingToolsScript(self)

    def expected_requests(self) -> int:
        """One request per tool step of every turn."""
        return self.turns * self.steps_per_turn

    def params(self) -> dict[str, object]:
        """Report parameters."""
        return {
            "turns": self.turns,
            "steps_per_turn": self.steps_per_turn,
            "binding": self.binding,
            "reasoning_field": self.reasoning_field,
            "effort": self.effort,
            "engine_config": "custom" if (self.checkpoint or self.user_tail or self.ranges) else "default",
        }

    def run(
        self, new_engine: Callable[[], Engine], engine_name: str, preset: Preset, provider: SimulatedProvider, profile: str
    ) -> Run:
        """One agent: the loop drives it with one engine."""
        return run_workload(self, new_engine(), provider, preset=preset.name, profile=profile)


TOOL_CYCLE = ("read_file", "grep", "read_file", "run_tests")


class ThinkingToolsScript:
    """The scripted user, model and tools of one thinking-tools run.

    The model's answers depend only on how far the script has got, never on what the engine
    sent, so every engine sees the same conversation (except ``compress`` calls, which answer a
    ``ranges`` nudge and do not advance the script).
    """

    def __init__(self, workload: ThinkingToolsWorkload) -> None:
        self.workload = workload
        self.turn = -1
        self.step = 0
        self.num_summaries = 0

    def user_turns(self) -> Iterator[Message]:
        """One task per turn."""
        size = min(2_000, max(200, self.workload.step_chars // 2))
        for turn in range(self.workload.turns):
            self.turn, self.step = turn, 0
            yield user_text(prose(f"task {turn}", size))

    def idle_ms(self, turn: int) -> int:
        """The user never steps away."""
        return 0

    def reply(self, request: Request) -> Reply:
        """A summary for compaction calls, a compress call for a nudge, else the next step."""
        if request.purpose == "compaction":
            return self._summary(request)
        compress = compress_reply(request)
        if compress is not None:
            return compress
        step = self.step
        self.step += 1
        if step < self.workload.steps_per_turn:
            return Reply(self._tool_step(self.turn, step))
        return Reply(self._final(self.turn))

    def _reasoning(self, text: str) -> Reasoning:
        field_name = "reasoning_content" if self.workload.binding == "deepseek-official" else self.workload.reasoning_field
        return Reasoning(text, field_name)

    def _tool_step(self, turn: int, step: int) -> tuple[Block, ...]:
        thinking, text, _ = self.workload.step_sizes(turn, step)
        name = TOOL_CYCLE[step % len(TOOL_CYCLE)]
        key = {"read_file": "path", "grep": "pattern", "run_tests": "target"}[name]
        arguments = json.dumps({key: f"t{turn}/s{step}"}, separators=(",", ":"))
        return (
            self._reasoning(prose(f"thinking t{turn} s{step}", thinking) if thinking else ""),
            Text(prose(f"note t{turn} s{step}", text)),
            ToolCall(f"call-t{turn}-s{step}", name, arguments),
        )

    def _final(self, turn: int) -> tuple[Block, ...]:
        seed = self.workload.seed
        skip = turn % 3 == 2 if seed == 0 else random.Random(f"{seed}/final/{turn}").random() < 1 / 3
        thinking = "" if skip else prose(f"wrap-up thinking t{turn}", 600)
        return (self._reasoning(thinking), Text(prose(f"answer t{turn}", 400)))

    def _summary(self, request: Request) -> Reply:
        n = self.num_summaries
        self.num_summaries += 1
        cap = (request.max_tokens or MAX_OUTPUT_TOKENS) * CHARS_PER_TOKEN // 2
        size = max(400, min(cap, int(self.workload.window * 0.015 * CHARS_PER_TOKEN)))
        return Reply((Text(f"## Goal\n- checkpoint {n}\n## Progress\n- {prose(f'summary {n}', size)}"),))

    def run_tool(self, call: ToolCall) -> Message:
        """Tool output sized by the step that called it."""
        _, turn_s, step_s = call.call_id.split("-")
        turn, step = int(turn_s[1:]), int(step_s[1:])
        _, _, result = self.workload.step_sizes(turn, step)
        return tool_result_message(call.call_id, prose(f"{call.name} output t{turn} s{step}", result))


@lru_cache(maxsize=64)
def _seeded_steps(seed: int, turns: int, steps_per_turn: int) -> tuple[tuple[tuple[float, bool], ...], ...]:
    """Per-turn, per-step ``(size factor, thinks)`` of a seeded run (never the global RNG)."""
    rng = random.Random(seed)
    return tuple(
        tuple((rng.uniform(0.75, 1.25), rng.random() >= 1 / NO_THINKING_EVERY) for _ in range(steps_per_turn))
        for _ in range(turns)
    )


def ranges_config(section: Mapping[str, Any]) -> RangesConfig:
    """A ``[ranges]`` table of ``--engine-config`` as this workload's ranges config."""
    config = RangesConfig.from_mapping(section)
    _check_summary_bounds(config)
    return config


def _check_summary_bounds(config: RangesConfig) -> None:
    """The scripted model writes 300-600-character summaries: a summary-length range that
    refuses all of them would make every nudge's ``compress`` fail and be asked for again at
    every step, for the rest of the run."""
    if config.max_summary_length < MIN_SUMMARY_CHARS:
        raise UserError(
            f"ranges.max_summary_length {config.max_summary_length} is below the {MIN_SUMMARY_CHARS}-"
            f"{MAX_SUMMARY_CHARS} characters the scripted model writes: every compress would be refused "
            f"(use at least {MIN_SUMMARY_CHARS})"
        )
    if config.min_summary_length > MAX_SUMMARY_CHARS:
        raise UserError(
            f"ranges.min_summary_length {config.min_summary_length} is above the {MIN_SUMMARY_CHARS}-"
            f"{MAX_SUMMARY_CHARS} characters the scripted model writes: every compress would be refused "
            f"(use at most {MAX_SUMMARY_CHARS})"
        )
