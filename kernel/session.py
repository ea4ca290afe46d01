"""Session event log, the surface (what the model sees) and the request header.

The log is append-only: events are never removed or edited, so a run replays deterministically.
The *surface* is the ordered list of model-visible event seqs. An event appends to it, or
replaces an inclusive positional span of it with itself::

    surface  [ 0  2  3  5  6  8 ]        replace(start=2, end=5) by event 9
    becomes  [ 0  9  6  8 ]              events 2, 3, 5 stay in the log, shadowed

Positions, not seq order, define spans: after a replace a high seq sits at an early position.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from prefixbench.kernel.records import CompactionRecord
from prefixbench.simulator.wire import Envelope, Message, Text, ToolResult, ToolSchema

EventKind = Literal[
    "turn/start",
    "turn/end",
    "step/start",
    "step/end",
    "user/message",
    "assistant/message",
    "tool/result",
    "request/header",
    "compaction/start",
    "compaction/summary",
    "compaction/end",
    "compaction/prune",
    "compaction/warning",
    "compaction/compress",
    "compaction/nudge",
    "compaction/rewrite",
]

#: Event kinds that may carry a message onto the surface.
SURFACE_KINDS: frozenset[str] = frozenset({"user/message", "assistant/message", "tool/result"})


class Replace(msgspec.Struct, frozen=True):
    """Surface op: splice out positions ``pos(start)..pos(end)`` and put this event there."""

    start: int
    end: int


class Event(msgspec.Struct, frozen=True, eq=False):
    """One log entry. ``info`` holds kind-specific data (read-only by convention); a
    compaction's contract with the specs is the typed ``record`` (:mod:`prefixbench.kernel.records`)."""

    seq: int
    kind: EventKind
    message: Message | None = None
    surface_op: Literal["append"] | Replace | None = None
    source_seqs: tuple[int, ...] = ()
    info: dict[str, Any] = msgspec.field(default_factory=dict)
    record: CompactionRecord | None = None

    @property
    def rewrite_kind(self) -> str | None:
        """``checkpoint``/``prune``/... when this event durably rewrites what the model sees.

        A surface replacement always is one. An event off the surface is one when it declares
        ``info["rewrite"]``: engines that render a view from an append-only log (``ranges``)
        rewrite the request without replacing surface nodes.
        """
        if not isinstance(self.surface_op, Replace):
            rewrite = self.info.get("rewrite")
            return None if rewrite is None else str(rewrite)
        return str(self.info.get("rewrite", "replace"))


class Header(msgspec.Struct, frozen=True):
    """The durable request header: routed envelope (before adapter defaults), system, tools."""

    envelope: Envelope
    system: str = ""
    tools: tuple[ToolSchema, ...] = ()


class SessionError(RuntimeError):
    """A surface operation that would corrupt the session (a kernel bug, not user input)."""


class Session:
    """An agent session: the event log plus its current surface."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.events: list[Event] = []
        self._surface: list[int] = []
        self._header_seq: int | None = None

    # --- reading -----------------------------------------------------------------------

    @property
    def surface(self) -> tuple[int, ...]:
        """Model-visible event seqs, in order."""
        return tuple(self._surface)

    def event(self, seq: int) -> Event:
        """The event with this seq."""
        return self.events[seq]

    def position(self, seq: int) -> int:
        """Current surface position of ``seq`` (raises SessionError when shadowed)."""
        try:
            return self._surface.index(seq)
        except ValueError:
            raise SessionError(f"seq {seq} is not on the surface") from None

    def message_at(self, seq: int) -> Message | None:
        """The message a surface event derives (None for an empty assistant message)."""
        message = self.events[seq].message
        if message is None or not message.blocks:
            return None
        return message

    def derive_messages(self) -> tuple[Message, ...]:
        """What the model sees: each surface node's message, empty ones skipped."""
        out = []
        for seq in self._surface:
            message = self.message_at(seq)
            if message is not None:
                out.append(message)
        return tuple(out)

    def request_header(self) -> Header | None:
        """The latest logged request header."""
        if self._header_seq is None:
            return None
        return self.events[self._header_seq].info["header"]

    def since(self, seq: int) -> list[Event]:
        """Events with seq >= ``seq``."""
        return self.events[seq:]

    # --- writing -----------------------------------------------------------------------

    def append(
        self,
        kind: EventKind,
        message: Message | None = None,
        *,
        on_surface: bool | None = None,
        record: CompactionRecord | None = None,
        **info: Any,
    ) -> Event:
        """Append an event; surface kinds go onto the surface unless ``on_surface=False``."""
        if on_surface is None:
            on_surface = kind in SURFACE_KINDS
        if on_surface and kind not in SURFACE_KINDS:
            raise SessionError(f"{kind} cannot be on the surface")
        event = Event(len(self.events), kind, message, "append" if on_surface else None, (), info, record)
        self.events.append(event)
        if on_surface:
            self._surface.append(event.seq)
        if kind == "request/header":
            self._header_seq = event.seq
        return event

    def replace(
        self,
        start: int,
        end: int,
        kind: EventKind,
        message: Message,
        *,
        source_seqs: tuple[int, ...] = (),
        record: CompactionRecord | None = None,
        **info: Any,
    ) -> Event:
        """Append an event that replaces the surface span ``pos(start)..pos(end)``."""
        if kind not in SURFACE_KINDS:
            raise SessionError(f"{kind} cannot replace surface nodes")
        lo, hi = self.position(start), self.position(end)
        if lo > hi:
            raise SessionError(f"replace span starts after it ends ({start} at {lo} > {end} at {hi})")
        shadowed = tuple(self._surface[lo : hi + 1])
        if kind == "tool/result":
            _check_tool_result_replacement(self, shadowed, message)
        missing = set(shadowed) - set(source_seqs)
        if source_seqs and missing:
            raise SessionError(f"replacement does not cite shadowed seqs {sorted(missing)}")
        event = Event(
            len(self.events), kind, message, Replace(start, end), source_seqs or shadowed, info, record
        )
        self.events.append(event)
        self._surface[lo : hi + 1] = [event.seq]
        return event

    def log_header(self, header: Header) -> Event | None:
        """Append a ``request/header`` when it differs from the latest one; returns it if logged."""
        current = self.request_header()
        if current == header:
            return None
        reason = "initial" if current is None else "change"
        return self.append("request/header", header=header, reason=reason)



def _check_tool_result_replacement(session: Session, shadowed: tuple[int, ...], message: Message) -> None:
    if len(shadowed) != 1 or session.events[shadowed[0]].kind != "tool/result":
        raise SessionError("a tool/result replacement must replace exactly one tool/result node")
    original = session.events[shadowed[0]].message
    assert original is not None
    old, new = original.tool_results, message.tool_results
    if len(old) != 1 or len(new) != 1 or original.role != message.role:
        raise SessionError("a tool/result replacement must keep one tool-result block")
    if (old[0].call_id, old[0].is_error) != (new[0].call_id, new[0].is_error):
        raise SessionError("a tool/result replacement may change only the result content")


def tool_result_message(call_id: str, text: str, *, is_error: bool = False) -> Message:
    """A tool message carrying one text result for ``call_id``."""
    return Message("tool", (ToolResult(call_id, (Text(text),), is_error),))
