"""``seed-coding``: the scripted coding session of seed 001, scaled to a context window.

One user turn ("Refactor the workspace."), then ``steps`` tool steps: the model writes some
prose and calls ``read_file`` with the step number; the tool answers with prose. About 24 steps
fill a window (each step's prose is 45% of ``window / 24`` tokens, and so is a normal result).
Every third result (step % 3 == 1) is larger. With ``pruner="rewrite-only"`` the pruner's
budgets are derived from the step size so that exactly those larger results overflow it by a
few hundred characters: the pass rewrites them but never clears pressure on its own, which
isolates the effect of the rewrite on the summary call.

The conversation runs at effort ``max`` by default against an adapter default of ``high``.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, ClassVar, Literal

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.windows import format_window
from prefixbench.kernel.api import Engine
from prefixbench.kernel.engines.checkpoint import CheckpointConfig, CheckpointEngine
from prefixbench.kernel.meter import CHARS_PER_TOKEN
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.kernel.presets import Preset
from prefixbench.kernel.prune import PrunerConfig
from prefixbench.kernel.session import Header, tool_result_message
from prefixbench.simulator.wire import Envelope, Message, Request, Text, ToolCall, ToolSchema, user_text
from prefixbench.workloads.scripted.base import unwrapped_client
from prefixbench.workloads.scripted.loop import MAX_TOOL_STEPS, check_count, run_single_agent
from prefixbench.workloads.scripted.prose import prose

PrunerMode = Literal["rewrite-only", "none", "default"]
EFFORTS = ("low", "high", "max")

SYSTEM_PROMPT = (
    "You are a coding agent working in a local repository. Read files with the read_file tool "
    "before changing them, keep edits small, and report what you changed when you are done."
)
READ_FILE = ToolSchema.make(
    "read_file",
    "Read one file of the workspace.",
    {"type": "object", "properties": {"i": {"type": "number"}}, "required": ["i"]},
)


class SeedCodingWorkload(msgspec.Struct, frozen=True):
    """Seed 001's ``runWorkload``: window-scaled tool steps against the checkpoint engine."""

    window: int
    steps: int = 60
    effort: str | None = "max"
    pruner: PrunerMode | PrunerConfig = "rewrite-only"
    prompt: str = "Refactor the workspace."
    #: Checkpoint policy overrides (seed 001: 0.8 / 0.16, retain_tokens unset).
    threshold_ratio: float = 0.8
    retain_ratio: float | None = None
    retain_tokens: int | None = None
    #: Checkpoint-engine keys applied over the seed's settings (``--engine-config``).
    checkpoint: Mapping[str, Any] | None = None
    #: Shape variation (0 = seed 001's exact sizes; see :meth:`step_shape`).
    seed: int = 0
    #: The workload's name: a class constant, not a field (not an argument, not in the run spec).
    name: ClassVar[str] = "seed-coding"

    def __post_init__(self) -> None:
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window <= 0:
            raise UserError(f"window must be a positive integer, got {self.window!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UserError(f"seed must be an integer >= 0, got {self.seed!r}")
        check_count("seed-coding", "steps", self.steps, MAX_TOOL_STEPS)
        if self.effort is not None and self.effort not in EFFORTS:
            raise UserError(f"unknown effort {self.effort!r} (known: {', '.join(EFFORTS)}, or default for the adapter's own)")
        if self.pruner == "rewrite-only" and self.rewrite_threshold - 1000 < 0:
            minimum = next(w for w in range(1000, 100_000, 1000) if SeedCodingWorkload._threshold_for(w) >= 1000)
            raise UserError(
                f"window {format_window(self.window)} is too small for seed-coding's rewrite-only pruner: "
                f"it runs at {format_window(minimum)} ({minimum:,} tokens) or more"
            )
        # Fail before anything runs when the budgets cannot work for this window.
        self.compaction_config().budgets(self.window)

    # --- sizes ---------------------------------------------------------------------------

    @property
    def step_chars(self) -> int:
        """Characters of the model's prose per step, and of a normal tool result."""
        return int((self.window // 24) * CHARS_PER_TOKEN * 0.45)

    @staticmethod
    def _threshold_for(window: int) -> int:
        return math.ceil(int((window // 24) * CHARS_PER_TOKEN * 0.45) * 1.5)

    @property
    def rewrite_threshold(self) -> int:
        """The rewrite-only pruner's threshold: 1.5 normal results."""
        return self._threshold_for(self.window)

    @property
    def big_result_chars(self) -> int:
        """Size of every third result."""
        if self.pruner == "rewrite-only":
            return self.rewrite_threshold + 300
        return self.step_chars * 2

    def step_shape(self, step: int) -> tuple[int, int]:
        """``(prose, result)`` characters of one tool step.

        Seed 0 is seed 001's script: every step's prose and normal result are
        :attr:`step_chars`, every third result (step % 3 == 1) is :attr:`big_result_chars`.
        Another seed draws, from its own ``random.Random(seed)``, each step's prose and normal
        result between 0.75 and 1.25 of that size, which results are large (one in three on
        average) and by how much a large result overflows the rewrite-only pruner (100 to 600
        characters, so the pass still rewrites it and still never clears pressure alone).
        """
        if self.seed == 0:
            return self.step_chars, self.big_result_chars if step % 3 == 1 else self.step_chars
        table = _seeded_shape(self.seed, self.steps, self.step_chars, self.pruner == "rewrite-only", self.rewrite_threshold)
        return table[step] if step < len(table) else (self.step_chars, self.step_chars)

    def pruner_config(self) -> PrunerConfig | None:
        """The pruner budgets this workload mounts, if any."""
        match self.pruner:
            case "rewrite-only":
                t = self.rewrite_threshold
                return PrunerConfig(threshold_chars=t, head_chars=t - 1000, tail_chars=900)
            case "none":
                return None
            case "default":
                return PrunerConfig()
            case PrunerConfig():
                return self.pruner
        raise UserError(f"unknown pruner mode {self.pruner!r} (known: rewrite-only, none, default)")

    # --- Workload protocol ----------------------------------------------------------------

    def model_info(self) -> ModelInfo:
        """A mock route declaring this window, an output cap of window/16 and default effort high."""
        return ModelInfo("mock", "mock", self.window, self.window // 16, "high")

    def header(self) -> Header:
        """Routed at ``effort`` with the read_file tool."""
        return Header(Envelope("mock", "mock", self.effort), SYSTEM_PROMPT, (READ_FILE,))

    def compaction_config(self) -> CheckpointConfig:
        """Seed 001's engine settings: summary cap sized to the window/16 headroom, one retry."""
        config = CheckpointConfig(
            threshold_ratio=self.threshold_ratio,
            retain_ratio=self.retain_ratio,
            retain_tokens=self.retain_tokens,
            max_tokens=max(1, self.window // 16),
            compaction_retries=1,
            pruner=self.pruner_config(),
        )
        if self.checkpoint:
            config = CheckpointConfig.from_mapping(self.checkpoint, base=config)
        return config

    def engine(self, engine_name: str, preset: Preset) -> Engine:
        """The checkpoint engine with seed 001's settings."""
        if engine_name != "checkpoint":
            raise UserError(f"workload seed-coding supports engine 'checkpoint' only, got {engine_name!r}")
        return CheckpointEngine(self.compaction_config(), preset)

    def script(self) -> SeedCodingScript:
        """A fresh script."""
        return SeedCodingScript(self)

    #: It sends no reasoning (a relay's reasoning field does not apply).
    reasoning_field: ClassVar[None] = None

    def expected_requests(self) -> int:
        """One request per tool step (the summary calls come on top)."""
        return self.steps

    def params(self) -> dict[str, object]:
        """Report parameters."""
        pruner = self.pruner if isinstance(self.pruner, str) else "custom"
        return {"steps": self.steps, "effort": self.effort or "default", "pruner": pruner}

    #: No client behaviour of its own; one agent, driven by the loop with one engine.
    wrap_client = unwrapped_client
    run = run_single_agent


@lru_cache(maxsize=256)
def _seeded_shape(seed: int, steps: int, step_chars: int, rewrite_only: bool, threshold: int) -> tuple[tuple[int, int], ...]:
    """Per-step ``(prose, result)`` sizes of a seeded seed-coding run (never the global RNG)."""
    rng = random.Random(seed)
    shape = []
    for _ in range(steps):
        prose_chars = int(step_chars * rng.uniform(0.75, 1.25))
        if rng.random() < 1 / 3:
            result = threshold + rng.randint(100, 600) if rewrite_only else int(step_chars * rng.uniform(1.75, 2.25))
        else:
            result = int(step_chars * rng.uniform(0.75, 1.25))
        shape.append((prose_chars, result))
    return tuple(shape)


class SeedCodingScript:
    """The scripted user, model and tool of one seed-coding run."""

    def __init__(self, workload: SeedCodingWorkload) -> None:
        self.workload = workload
        self.num_conversation_calls = 0
        self.num_summary_calls = 0

    def user_turns(self) -> Iterator[Message]:
        """A single turn."""
        yield user_text(self.workload.prompt)

    def idle_ms(self, turn: int) -> int:
        """The user never steps away."""
        return 0

    def reply(self, request: Request) -> Reply:
        """Tool steps, then ``done``; a deterministic summary for compaction calls."""
        if request.purpose == "compaction":
            n = self.num_summary_calls
            self.num_summary_calls += 1
            text = f"## Goal\n- checkpoint {n}\n## In Progress\n- {prose(f'summary-{n}', 400)}"
            return Reply((Text(text),))
        n = self.num_conversation_calls
        self.num_conversation_calls += 1
        if n < self.workload.steps:
            return Reply(
                (
                    Text(prose(f"reasoning-{n}", self.workload.step_shape(n)[0])),
                    ToolCall(f"call-{n}", "read_file", json.dumps({"i": n})),
                )
            )
        return Reply((Text("done"),))

    def run_tool(self, call: ToolCall) -> Message:
        """read_file: prose sized by step (every third one large)."""
        index = int(json.loads(call.arguments).get("i", 0))
        size = self.workload.step_shape(index)[1]
        return tool_result_message(call.call_id, prose(f"file-{index}", size))
