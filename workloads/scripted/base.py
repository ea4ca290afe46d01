"""Workload and run types shared by the loop, the specs and the reports."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Protocol

import msgspec

from prefixbench.kernel.api import Engine
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.kernel.presets import Preset
from prefixbench.kernel.session import Header, Session
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.wire import Message, Request, ToolCall

if TYPE_CHECKING:  # annotations only: the provider is built by the registry, never here
    from prefixbench.simulator.provider import SimulatedProvider


#: Declared rewrite kinds that count as a fold (a summary or a compression of history; a
#: ``compaction`` puts a server-made compaction item in place of the history).
FOLD_REWRITES = frozenset({"checkpoint", "compress", "compaction"})


class Script(Protocol):
    """One run's scripted side: the user, the model and the tools. Fresh per run."""

    def user_turns(self) -> Iterator[Message]:
        """The user messages that open each turn, in order."""
        ...

    def reply(self, request: Request) -> Reply:
        """The scripted model's deterministic answer to a request."""
        ...

    def run_tool(self, call: ToolCall) -> Message:
        """Execute one tool call; returns the tool message with its result."""
        ...

    def idle_ms(self, turn: int) -> int:
        """Logical ms the user is away before turn ``turn`` (0: no pause; idle-gaps pauses)."""
        ...


class Agent(Protocol):
    """What the loop drives: one agent's route, head and script (a workload, or one of its agents)."""

    @property
    def name(self) -> str:
        """The workload's name (reports, session ids)."""
        ...

    @property
    def window(self) -> int:
        """The context window it is scaled to, in tokens."""
        ...

    @property
    def seed(self) -> int:
        """The shape seed (0 = the default shape)."""
        ...

    def model_info(self) -> ModelInfo:
        """Adapter facts of the routed model."""
        ...

    def header(self) -> Header:
        """The routed request header (envelope, system prompt, tools)."""
        ...

    def script(self) -> Script:
        """A fresh script for one run."""
        ...

    def params(self) -> dict[str, object]:
        """Parameters that identify this workload in reports."""
        ...


class Workload(Agent, Protocol):
    """A scripted agent scaled to a context window: everything a sweep plans, estimates and runs
    with, declared (the registry refuses a factory that lacks a member: :func:`missing_members`)."""

    @property
    def reasoning_field(self) -> str | None:
        """The field a DeepSeek relay reads reasoning from (None: the workload sends no reasoning)."""
        ...

    def expected_requests(self) -> int:
        """About how many model requests one run sends (a sweep sends long runs first)."""
        ...

    def engine(self, engine_name: str, preset: Preset) -> Engine:
        """The compaction engine configured for this workload."""
        ...

    def wrap_client(self, engine: Engine) -> Engine:
        """The workload's client behaviour around any engine, a user's too (identity when none)."""
        ...

    def run(
        self, new_engine: Callable[[], Engine], engine_name: str, preset: Preset, provider: SimulatedProvider, profile: str
    ) -> Run:
        """Drive one run against ``provider``; ``new_engine()`` makes an engine per agent."""
        ...


def unwrapped_client(workload: object, engine: Engine) -> Engine:
    """``wrap_client`` of a workload with no client behaviour of its own: any engine runs as built
    (a workload class says ``wrap_client = unwrapped_client``)."""
    return engine


#: The members every workload declares (the :class:`Workload` protocol, checked at registration).
WORKLOAD_MEMBERS = (
    "name", "window", "seed", "reasoning_field", "model_info", "header", "script", "params",
    "expected_requests", "engine", "wrap_client", "run",
)


def missing_members(factory: type) -> tuple[str, ...]:
    """The :class:`Workload` members a workload class does not declare (fields count)."""
    declared = set(dir(factory))
    return tuple(name for name in WORKLOAD_MEMBERS if name not in declared)


class Run(msgspec.Struct, frozen=True):
    """One finished run: every observation, the session log and what produced them."""

    workload: str
    window: int
    preset: str
    engine: str
    profile: str
    cache: str
    observations: tuple[Observation, ...]
    #: Not compared (see ``__eq__``), nor is ``params``.
    session: Session
    params: dict[str, object] = msgspec.field(default_factory=dict)
    #: The workload's shape seed (0 = its default shape).
    seed: int = 0
    #: Characters of tool-result text the tools returned over the run, and how many of them
    #: the last conversation request still carried (what the engine kept visible at the end).
    #: 0 and 0 where a workload does not count them (several agents).
    tool_result_chars: int = 0
    tool_result_chars_kept: int = 0
    #: The longest time (logical ms) the user was away between two turns, as the workload scripts
    #: it (``idle-gaps``): the longest idle gap an engine could act in; 0 where the user never
    #: steps away.
    longest_idle_ms: int = 0

    def _compared(self) -> tuple[object, ...]:
        return (self.workload, self.window, self.preset, self.engine, self.profile, self.cache, self.observations, self.seed)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Run:
            return NotImplemented
        return self._compared() == other._compared()

    def __hash__(self) -> int:
        return hash(self._compared())

    @property
    def summaries(self) -> tuple[Observation, ...]:
        """Compaction requests (summary calls), in order."""
        return tuple(o for o in self.observations if o.purpose == "compaction")

    @property
    def conversations(self) -> tuple[Observation, ...]:
        """Conversation requests, in order."""
        return tuple(o for o in self.observations if o.purpose == "conversation")

    @property
    def num_folds(self) -> int:
        """Durable context reductions that summarized or compressed history (for a user's engine:
        the ``checkpoint``, ``compress`` and ``compaction`` rewrites it declared)."""
        return sum(
            1 for e in self.session.events
            if e.kind in ("compaction/summary", "compaction/compress")
            or (e.kind == "compaction/rewrite" and e.rewrite_kind in FOLD_REWRITES)
        )

    @property
    def rewrites(self) -> tuple[tuple[int, str], ...]:
        """Durable rewrites the engine declared, as ``(index of the request they preceded, kind)``."""
        return tuple((o.index, kind) for o in self.observations for kind in o.rewrites_since_previous)

    @property
    def num_rejected(self) -> int:
        """Requests the provider answered with an error status."""
        return sum(1 for o in self.observations if o.is_rejected)


#: The runs :func:`collecting_runs` gathers (None outside it).
_COLLECTED: ContextVar[list[Run] | None] = ContextVar("prefixbench_collected_runs", default=None)


@contextmanager
def collecting_runs() -> Iterator[list[Run]]:
    """Gather every run that finishes inside the block, in the order they finish (``check``
    reads the engine warnings of the runs its specs made this way)."""
    runs: list[Run] = []
    token = _COLLECTED.set(runs)
    try:
        yield runs
    finally:
        _COLLECTED.reset(token)


def finished(run: Run) -> Run:
    """``run``, after handing it to the innermost :func:`collecting_runs` block, if any."""
    collected = _COLLECTED.get()
    if collected is not None:
        collected.append(run)
    return run
