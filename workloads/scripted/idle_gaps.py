"""``idle-gaps``: a user who pauses between turns for about the cache's TTL.

``turns`` user turns of ``steps_per_turn`` tool steps (seed-coding's step sizes: each step's
prose and result are 45% of ``window / 24`` tokens, so about 12 steps fill half a window; the
checkpoint engine folds at 80%). Before every turn after the first the user is away for a gap
of logical time around ``gap_s`` seconds (default 300, the 5-minute TTL of Anthropic's
default cache; OpenAI's in-memory retention is modelled as 10 min, ``gap_s=600``): with seed 0
the gaps cycle through 0.8, 0.97, 1.03 and 1.2 times ``gap_s``, so half of them end just before
the TTL and half just after.
Another seed draws each gap between 0.5 and 1.5 times ``gap_s`` and each step's sizes between
0.75 and 1.25 of the default, from its own ``random.Random(seed)``.

The byte-exact reference never expires anything, so the gaps only show with a cache model
that has a TTL: ``--cache anthropic``, ``--cache openai`` (with a 600 s gap) or
``--cache deepseek:ttl_ms=300000``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from functools import lru_cache
from typing import ClassVar

import msgspec

from prefixbench.kernel.api import Engine
from prefixbench.kernel.engines.checkpoint import CheckpointConfig, CheckpointEngine
from prefixbench.kernel.meter import CHARS_PER_TOKEN
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.kernel.presets import Preset
from prefixbench.kernel.session import Header, tool_result_message
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Envelope, Message, Request, Text, ToolCall, ToolSchema, user_text
from prefixbench.simulator.windows import MIN_WINDOW
from prefixbench.workloads.scripted.base import unwrapped_client
from prefixbench.workloads.scripted.loop import check_counts, run_single_agent
from prefixbench.workloads.scripted.prose import prose

#: Seed 0's gaps, as multiples of ``gap_s``, cycled over the turns.
GAP_FACTORS = (0.8, 0.97, 1.03, 1.2)
SYSTEM_PROMPT = (
    "You are a coding agent working with a user who steps away between tasks. Read files with "
    "read_file before changing them and report what you changed at the end of each task."
)
READ_FILE = ToolSchema.make(
    "read_file",
    "Read one file of the workspace.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


class IdleGapsWorkload(msgspec.Struct, frozen=True):
    """User turns separated by idle gaps around a cache TTL, on the checkpoint engine."""

    window: int
    turns: int = 6
    steps_per_turn: int = 6
    #: The centre of the idle gaps, in seconds.
    gap_s: float = 300.0
    seed: int = 0
    #: The workload's name: a class constant, not a field (not an argument, not in the run spec).
    name: ClassVar[str] = "idle-gaps"

    def __post_init__(self) -> None:
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < MIN_WINDOW:
            raise UserError(f"idle-gaps: window must be an integer >= {MIN_WINDOW}, got {self.window!r}")
        check_counts("idle-gaps", turns=self.turns, steps_per_turn=self.steps_per_turn)
        if isinstance(self.gap_s, bool) or not isinstance(self.gap_s, (int, float)) or not 0 <= self.gap_s <= 86_400:
            raise UserError(f"idle-gaps: gap_s must be between 0 and 86400 seconds, got {self.gap_s!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UserError(f"idle-gaps: seed must be an integer >= 0, got {self.seed!r}")

    @property
    def step_chars(self) -> int:
        """Characters of a step's prose and of its tool result (seed-coding's size)."""
        return int((self.window // 24) * CHARS_PER_TOKEN * 0.45)

    def gap_ms(self, turn: int) -> int:
        """Logical milliseconds the user is away before ``turn`` (0 before the first)."""
        if turn == 0:
            return 0
        if self.seed == 0:
            factor = GAP_FACTORS[(turn - 1) % len(GAP_FACTORS)]
        else:
            factor = _seeded(self.seed, self.turns, self.steps_per_turn)[0][turn]
        return int(round(self.gap_s * factor * 1000))

    def step_size(self, turn: int, step: int) -> int:
        """Characters of one step's prose and result."""
        if self.seed == 0:
            return self.step_chars
        return int(self.step_chars * _seeded(self.seed, self.turns, self.steps_per_turn)[1][turn][step])

    def model_info(self) -> ModelInfo:
        """A mock route of this window, output cap window/16, default effort high."""
        return ModelInfo("mock", "mock", self.window, self.window // 16, "high")

    def header(self) -> Header:
        """Routed at effort high with read_file."""
        return Header(Envelope("mock", "mock", "high"), SYSTEM_PROMPT, (READ_FILE,))

    def engine(self, engine_name: str, preset: Preset) -> Engine:
        """The checkpoint engine, no pruner."""
        if engine_name != "checkpoint":
            raise UserError(f"workload idle-gaps supports engine 'checkpoint' only, got {engine_name!r}")
        config = CheckpointConfig(threshold_ratio=0.8, retain_ratio=0.16, max_tokens=max(1, self.window // 16), pruner=None)
        return CheckpointEngine(config, preset)

    def script(self) -> IdleGapsScript:
        """A fresh script."""
        return IdleGapsScript(self)

    #: It sends no reasoning (a relay's reasoning field does not apply).
    reasoning_field: ClassVar[None] = None

    def expected_requests(self) -> int:
        """One request per tool step of every turn."""
        return self.turns * self.steps_per_turn

    def params(self) -> dict[str, object]:
        """Report parameters."""
        return {"turns": self.turns, "steps_per_turn": self.steps_per_turn, "gap_s": self.gap_s}

    #: No client behaviour of its own; one agent, driven by the loop with one engine.
    wrap_client = unwrapped_client
    run = run_single_agent


@lru_cache(maxsize=64)
def _seeded(seed: int, turns: int, steps: int) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
    rng = random.Random(seed)
    gaps = tuple(rng.uniform(0.5, 1.5) for _ in range(turns))
    sizes = tuple(tuple(rng.uniform(0.75, 1.25) for _ in range(steps)) for _ in range(turns))
    return gaps, sizes


class IdleGapsScript:
    """The scripted user (with pauses), model and tool of one idle-gaps run."""

    def __init__(self, workload: IdleGapsWorkload) -> None:
        self.workload = workload
        self.turn = -1
        self.step = 0
        self.num_summaries = 0

    def user_turns(self) -> Iterator[Message]:
        """One task per turn."""
        for turn in range(self.workload.turns):
            self.turn, self.step = turn, 0
            yield user_text(prose(f"task {turn}", 300))

    def idle_ms(self, turn: int) -> int:
        """How long the user is away before ``turn`` (the loop advances its clock by it)."""
        return self.workload.gap_ms(turn)

    def reply(self, request: Request) -> Reply:
        """A summary for a compaction call; else a tool step, or the turn's answer."""
        if request.purpose == "compaction":
            n = self.num_summaries
            self.num_summaries += 1
            return Reply((Text(f"## Goal\n- checkpoint {n}\n## In Progress\n- {prose(f'summary-{n}', 400)}"),))
        step = self.step
        self.step += 1
        turn = self.turn
        if step < self.workload.steps_per_turn:
            size = self.workload.step_size(turn, step)
            path = json.dumps({"path": f"t{turn}/s{step}"}, separators=(",", ":"))
            return Reply((Text(prose(f"reasoning t{turn} s{step}", size)), ToolCall(f"call-t{turn}-s{step}", "read_file", path)))
        return Reply((Text(prose(f"answer t{turn}", 300)),))

    def run_tool(self, call: ToolCall) -> Message:
        """read_file: prose of the step's size."""
        _, turn_s, step_s = call.call_id.split("-")
        turn, step = int(turn_s[1:]), int(step_s[1:])
        return tool_result_message(call.call_id, prose(f"file t{turn} s{step}", self.workload.step_size(turn, step)))
