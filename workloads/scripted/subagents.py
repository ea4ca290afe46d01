"""``subagents``: a main agent that fans out N concurrent subagents sharing a head (the write race).

The main agent takes one task, makes ``main_steps`` tool steps, then writes a plan (about 10%
of the window) and hands it to ``subagents`` subagents at once (one ``task`` tool call each).
Every subagent's conversation starts with the same head, ``[tools, system, plan]``, then its own
part; all of them send each step at the same logical moment, before any response has begun,
then run ``subagent_steps`` read steps and report back. The main agent reads the reports and
answers.

The head is new content, so the first subagent request writes it. A cache that serves a prefix
only once the response that wrote it has begun (``--cache anthropic``) lets none of the
concurrent first requests read it: every subagent writes the same head again, the write race.
The byte-exact reference serves at once, so from the second subagent on the head is a hit; the
difference between the two is what the race costs.

Seed 0: ``subagent_steps`` steps each, seed-coding's step size. Another seed draws each
subagent's step count between half and one and a half times ``subagent_steps`` and each step's
size between 0.75 and 1.25 of the default, from its own ``random.Random(seed)``.

Observations are in send order (the subagents' requests of one round interleave); the run's
folds and session are the main agent's.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
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
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.wire import Envelope, Message, Request, Text, ToolCall, ToolSchema, user_text
from prefixbench.simulator.windows import MIN_WINDOW
from prefixbench.workloads.scripted.base import Run, finished, unwrapped_client
from prefixbench.workloads.scripted.loop import _Driver, check_count, check_counts
from prefixbench.workloads.scripted.prose import prose

#: More concurrent subagents than this is not a workload anyone runs.
MAX_SUBAGENTS = 64
SYSTEM_PROMPT = (
    "You are a coding agent. Split large work into parts and hand each part to a subagent with the "
    "task tool; subagents read files with read_file and report what they found."
)
TOOLS = (
    ToolSchema.make(
        "read_file",
        "Read one file of the workspace.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    ToolSchema.make(
        "task",
        "Hand one part of the work to a subagent; returns its report.",
        {"type": "object", "properties": {"part": {"type": "number"}}, "required": ["part"]},
    ),
)


class SubagentsWorkload(msgspec.Struct, frozen=True):
    """A main agent fanning out concurrent subagents that share a freshly written head."""

    window: int
    subagents: int = 4
    subagent_steps: int = 6
    main_steps: int = 4
    seed: int = 0
    #: The workload's name: a class constant, not a field (not an argument, not in the run spec).
    name: ClassVar[str] = "subagents"

    def __post_init__(self) -> None:
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < MIN_WINDOW:
            raise UserError(f"subagents: window must be an integer >= {MIN_WINDOW}, got {self.window!r}")
        check_count("subagents", "subagents", self.subagents, MAX_SUBAGENTS)
        check_counts("subagents", subagent_steps=self.subagent_steps, main_steps=self.main_steps)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise UserError(f"subagents: seed must be an integer >= 0, got {self.seed!r}")

    @property
    def step_chars(self) -> int:
        """Characters of one step's prose and of its result (seed-coding's size)."""
        return int((self.window // 24) * CHARS_PER_TOKEN * 0.45)

    @property
    def plan_chars(self) -> int:
        """Characters of the shared plan: about 10% of the window."""
        return int(self.window * 0.1 * CHARS_PER_TOKEN)

    def steps_of(self, agent: int) -> int:
        """Read steps of subagent ``agent``."""
        if self.seed == 0:
            return self.subagent_steps
        return _seeded(self.seed, self.subagents, self.subagent_steps)[agent][0]

    def step_size(self, agent: int, step: int) -> int:
        """Characters of one subagent step's prose and result."""
        if self.seed == 0:
            return self.step_chars
        return int(self.step_chars * _seeded(self.seed, self.subagents, self.subagent_steps)[agent][1][step])

    def model_info(self) -> ModelInfo:
        """A mock route of this window, output cap window/16, default effort high."""
        return ModelInfo("mock", "mock", self.window, self.window // 16, "high")

    def header(self) -> Header:
        """Routed at effort high with read_file and task."""
        return Header(Envelope("mock", "mock", "high"), SYSTEM_PROMPT, TOOLS)

    def engine(self, engine_name: str, preset: Preset) -> Engine:
        """The checkpoint engine (each agent gets its own), no pruner."""
        if engine_name != "checkpoint":
            raise UserError(f"workload subagents supports engine 'checkpoint' only, got {engine_name!r}")
        config = CheckpointConfig(threshold_ratio=0.8, retain_ratio=0.16, max_tokens=max(1, self.window // 16), pruner=None)
        return CheckpointEngine(config, preset)

    def script(self) -> MainScript:
        """The main agent's script."""
        return MainScript(self)

    #: It sends no reasoning (a relay's reasoning field does not apply).
    reasoning_field: ClassVar[None] = None

    def expected_requests(self) -> int:
        """The main agent's steps and every subagent's read steps."""
        return self.main_steps + self.subagents * self.subagent_steps

    def params(self) -> dict[str, object]:
        """Report parameters."""
        return {"subagents": self.subagents, "subagent_steps": self.subagent_steps, "main_steps": self.main_steps}

    #: No client behaviour of its own: any engine runs as built.
    wrap_client = unwrapped_client

    def run(
        self, new_engine: Callable[[], Engine], engine_name: str, preset: Preset, provider: SimulatedProvider, profile: str
    ) -> Run:
        """Drive the main agent and its subagents against one provider (see the module doc);
        ``new_engine()`` makes each agent its own engine (a built-in or a user's)."""
        main = _Driver(self, new_engine(), provider, f"subagents-{self.window}-{preset.name}", False)
        script: MainScript = main.script  # type: ignore[assignment]

        def fan_out(now_ms: int) -> tuple[list[str], int]:
            drivers = [
                _Driver(_SubagentView(self, i), new_engine(), provider, f"sub-{i}", False)
                for i in range(self.subagents)
            ]
            for driver in drivers:
                driver.clock.now_ms = now_ms
                driver.session.append("turn/start", turn=0)
                driver.session.append("user/message", user_text(script.plan()))
                driver.session.append("user/message", user_text(f"You are subagent {driver.script.agent}: audit part {driver.script.agent}."))
            active = list(drivers)
            step = 0
            while active:
                # One round: every active subagent sends its next step at (about) the same moment.
                active = [d for d in active if d.run_step(0, step)]
                step += 1
            for driver in drivers:
                driver.session.append("turn/end", turn=0)
            return [d.script.report() for d in drivers], max(d.clock.now_ms for d in drivers)

        script.fan_out = fan_out
        script.main_clock = main.clock
        for turn_idx, user_message in enumerate(script.user_turns()):
            main.run_turn(turn_idx, user_message)
        return finished(Run(
            workload=self.name,
            window=self.window,
            preset=preset.name,
            engine=engine_name,
            profile=profile,
            cache=provider.cache.name,
            observations=tuple(provider.observations),
            session=main.session,
            params=self.params(),
            seed=self.seed,
        ))


@lru_cache(maxsize=64)
def _seeded(seed: int, agents: int, steps: int) -> tuple[tuple[int, tuple[float, ...]], ...]:
    rng = random.Random(seed)
    out = []
    for _ in range(agents):
        count = rng.randint(max(1, steps // 2), max(1, steps + steps // 2))
        out.append((count, tuple(rng.uniform(0.75, 1.25) for _ in range(count))))
    return tuple(out)


class MainScript:
    """The main agent: read steps, one fan-out step (a task call per subagent), then the answer."""

    def __init__(self, workload: SubagentsWorkload) -> None:
        self.workload = workload
        self.step = 0
        self.num_summaries = 0
        self.fan_out = None
        self.main_clock = None
        self._reports: dict[str, str] = {}

    def plan(self) -> str:
        """The shared head every subagent starts from."""
        return prose("plan for the subagents", self.workload.plan_chars)

    def user_turns(self) -> Iterator[Message]:
        """One task."""
        yield user_text("Audit the workspace: split it into parts and hand each to a subagent.")

    def idle_ms(self, turn: int) -> int:
        """The user never steps away."""
        return 0

    def reply(self, request: Request) -> Reply:
        """Read steps, then the fan-out, then the answer (a summary for compaction calls)."""
        if request.purpose == "compaction":
            n = self.num_summaries
            self.num_summaries += 1
            return Reply((Text(f"## Goal\n- checkpoint {n}\n## In Progress\n- {prose(f'main summary-{n}', 400)}"),))
        step = self.step
        self.step += 1
        w = self.workload
        if step < w.main_steps:
            path = json.dumps({"path": f"main/s{step}"}, separators=(",", ":"))
            return Reply((Text(prose(f"main reasoning s{step}", w.step_chars)), ToolCall(f"main-{step}", "read_file", path)))
        if step == w.main_steps:
            calls = tuple(ToolCall(f"task-{i}", "task", json.dumps({"part": i})) for i in range(w.subagents))
            return Reply((Text(self.plan()), *calls))
        return Reply((Text(prose("main answer", 600)),))

    def run_tool(self, call: ToolCall) -> Message:
        """read_file answers with prose; the first task call runs every subagent concurrently."""
        if call.name == "task":
            if not self._reports:
                assert self.fan_out is not None and self.main_clock is not None
                reports, end_ms = self.fan_out(self.main_clock.now_ms)
                self._reports = {f"task-{i}": r for i, r in enumerate(reports)}
                self.main_clock.now_ms = max(self.main_clock.now_ms, end_ms)
            return tool_result_message(call.call_id, self._reports[call.call_id])
        step = int(call.call_id.split("-")[1])
        return tool_result_message(call.call_id, prose(f"main file s{step}", self.workload.step_chars))


class _SubagentView(msgspec.Struct, frozen=True):
    """What a subagent's driver sees: the main workload's route and head, its own script."""

    workload: SubagentsWorkload
    agent: int

    @property
    def name(self) -> str:
        return f"{self.workload.name}/{self.agent}"

    @property
    def window(self) -> int:
        return self.workload.window

    @property
    def seed(self) -> int:
        return self.workload.seed

    def model_info(self) -> ModelInfo:
        return self.workload.model_info()

    def header(self) -> Header:
        return self.workload.header()

    def script(self) -> SubagentScript:
        return SubagentScript(self.workload, self.agent)

    def params(self) -> dict[str, object]:
        return self.workload.params()


class SubagentScript:
    """One subagent: read steps over its part, then a short report."""

    def __init__(self, workload: SubagentsWorkload, agent: int) -> None:
        self.workload = workload
        self.agent = agent
        self.step = 0
        self.num_summaries = 0

    def user_turns(self) -> Iterator[Message]:  # the main agent hands the task over directly
        return iter(())

    def idle_ms(self, turn: int) -> int:
        """The user never steps away."""
        return 0

    def report(self) -> str:
        """What the subagent returns to the main agent."""
        return prose(f"report of subagent {self.agent}", 800)

    def reply(self, request: Request) -> Reply:
        """Read steps, then the report."""
        if request.purpose == "compaction":
            n = self.num_summaries
            self.num_summaries += 1
            return Reply((Text(f"## Goal\n- checkpoint {n}\n## In Progress\n- {prose(f'sub {self.agent} summary-{n}', 400)}"),))
        step = self.step
        self.step += 1
        if step < self.workload.steps_of(self.agent):
            size = self.workload.step_size(self.agent, step)
            path = json.dumps({"path": f"part{self.agent}/s{step}"}, separators=(",", ":"))
            return Reply((Text(prose(f"sub {self.agent} reasoning s{step}", size)), ToolCall(f"sub{self.agent}-{step}", "read_file", path)))
        return Reply((Text(self.report()),))

    def run_tool(self, call: ToolCall) -> Message:
        """read_file: prose of the step's size."""
        step = int(call.call_id.split("-")[1])
        return tool_result_message(call.call_id, prose(f"part {self.agent} file s{step}", self.workload.step_size(self.agent, step)))
