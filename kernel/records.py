"""Typed records of what a compaction landed: the contract between the kernel and the specs.

An engine that lands a summary call or a checkpoint attaches one of these to the event it
appends (``Event.record``); specs and reports read the fields, never ``Event.info`` keys, so
renaming a field is a type error and a test failure rather than a spec that silently reads
``None``.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from prefixbench.simulator.wire import Message

#: Codex-style tails: an active turn keeps its latest user message, a completed turn none.
TailMode = Literal["active_turn", "completed_turn"]


class RetainedTurn(msgspec.Struct, frozen=True):
    """One thinking turn a checkpoint keeps: its thinking and its text, no tool calls."""

    thinking: str
    text: str = ""


class SummaryCallRecord(msgspec.Struct, frozen=True):
    """A ``compaction/summary`` event: the summary call as the engine sent it."""

    compaction_id: str
    provider: str
    model: str
    #: The effort the engine named on the call, after the adapter's defaults (None: none sent).
    reasoning_effort: str | None
    max_tokens: int | None
    #: Surface seqs the checkpoint replaces, and what they cost by the meter.
    shadowed_seqs: tuple[int, ...]
    shadowed_token_count: int


class CheckpointRecord(msgspec.Struct, frozen=True):
    """The checkpoint message that replaced a summarized region."""

    compaction_id: str
    #: The engine that landed it (``checkpoint``, ``user-tail``).
    engine: str
    #: The summary text (None when the engine keeps it only inside the message).
    summary: str | None = None
    #: user-tail: the user messages and thinking turns replayed after the summary.
    retained_users: tuple[Message, ...] = ()
    retained_reasoning: tuple[RetainedTurn, ...] = ()
    tail_mode: TailMode | None = None


#: What an event's ``record`` may hold.
CompactionRecord = SummaryCallRecord | CheckpointRecord
