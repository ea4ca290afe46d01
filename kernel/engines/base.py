"""What every compaction engine offers the agent loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from prefixbench.kernel.model import ModelCatalog, ModelClient
from prefixbench.kernel.session import Session
from prefixbench.simulator.wire import Message, ToolCall


class CompactionError(RuntimeError):
    """A compaction attempt failed; the turn continues with the surface as it is."""


@dataclass(frozen=True, slots=True)
class StepContext:
    """What an engine may use before a step: the session, model facts and a model client."""

    session: Session
    catalog: ModelCatalog
    client: ModelClient


class Engine(Protocol):
    """A compaction engine."""

    name: str

    def before_step(self, ctx: StepContext) -> None:
        """Compact if needed, before the next conversation request is built."""
        ...

    def view(self, session: Session) -> tuple[Message, ...]:
        """The messages the next conversation request carries."""
        ...

    def run_tool(self, session: Session, call: ToolCall) -> Message | None:
        """Handle a tool the engine owns (``compress``, ``new_context``...); None if not its tool."""
        ...


def warn(session: Session, message: str) -> None:
    """Log a compaction failure as a warning event; pressure failures never abort a turn."""
    session.append("compaction/warning", message=None, on_surface=False, text=message)
