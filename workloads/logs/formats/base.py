"""What a log format is: one :class:`LogFormat` per module of this package.

A format module holds everything the audit knows about one kind of log: its names, how a
record of it is recognised, how a file of it reads into :class:`~..trace.TraceRequest` values,
the usage convention its counts follow and the versions it has been read on. The table of
them is :data:`prefixbench.workloads.logs.formats.FORMATS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import IntEnum
from pathlib import Path
from typing import Literal, TypeAlias

import msgspec

from prefixbench.workloads.logs.records import ProgressFn, Record
from prefixbench.workloads.logs.trace import FileSummary, LoggedMessage, TraceRequest


class Evidence(IntEnum):
    """How decisive a record's match is. Detection takes the most decisive match of a record;
    formats matching equally are tried in the table's order."""

    #: The record's outer shape names the format (a request/response pair, block hashes).
    WRAPPER = 0
    #: A typed entry of an agent's own log (Codex, pi and Claude Code use disjoint ``type`` values).
    ENTRY = 1
    #: An untyped record whose keys name the format (an older Codex rollout, an Anthropic body).
    SHAPE = 2
    #: The most generic shape there is (any body with a model and messages).
    GENERIC = 3


#: How a format's token counts relate: ``additive`` (input excludes reads and writes),
#: ``subset`` (the prompt count includes the cached part), ``by-endpoint`` (each call follows
#: its provider's wire shape), ``none`` (no usage reported: the audit predicts only).
UsageConvention: TypeAlias = Literal["additive", "subset", "by-endpoint", "none"]


class ImportContext(msgspec.Struct):
    """State shared by the readers of one audit (dedup across files)."""

    #: Codex running totals already counted: ``(session, total usage)``.
    codex_totals: set[str] = msgspec.field(default_factory=set)
    #: Codex calls counted, by chain node (thread and running total), and the nodes a fork's
    #: reader asked for (whether its unmarked copy's token counts are its source's calls).
    codex_calls: set[str] = msgspec.field(default_factory=set)
    codex_asked: set[str] = msgspec.field(default_factory=set)
    #: Calls already counted, by an id, for the readers whose files can repeat a call: Claude Code
    #: request ids (a resumed or forked session copies earlier lines), and each counted from a line
    #: written mid-stream once more as ``(claude_code._MID_STREAM, id)``; an agent's calls counted
    #: from an OpenTelemetry export, as ``(otel.OTEL_CALL, agent:id)`` (its traces and logs may be
    #: written to two files); LiteLLM spend-log rows counted, as ``(litellm.LITELLM_ROW, id)``
    #: (pages overlap). Only Claude Code's plain ids are strings; each other key is a tuple led by its
    #: reader's mark, so no reader's key equals another's.
    counted_ids: set[str | tuple[str, str]] = msgspec.field(default_factory=set)
    #: Gemini CLI calls already counted, ``(session id, message id)`` to their chain node: resuming
    #: a pre-0.39 ``.json`` session copies its messages into a ``.jsonl`` beside it.
    gemini_calls: dict[tuple[str, str], str] = msgspec.field(default_factory=dict)
    #: Kimi CLI calls already counted, ``message_id`` to their chain node: a subagent's calls are
    #: on the parent's wire (``SubagentEvent``) and in its own ``subagents/<id>/wire.jsonl``.
    kimi_calls: dict[str, str] = msgspec.field(default_factory=dict)
    #: pi calls already counted, by the copied message's own fields, to their chain nodes: a fork
    #: (``/fork``, ``--fork``) copies its source's entries into a new session file.
    pi_calls: dict[str, str] = msgspec.field(default_factory=dict)
    #: Inspect AI samples already counted, by the sample's identity (its uuid, or the run, task,
    #: sample id and epoch), to the file counted from: ``inspect log convert`` leaves a run's
    #: ``.eval`` and ``.json`` logs side by side.
    inspect_samples: dict[str, str] = msgspec.field(default_factory=dict)
    progress: ProgressFn | None = None


#: A record (a JSON object) to the evidence it is of this format, None when it says nothing.
Detector: TypeAlias = Callable[[dict], Evidence | None]
#: A file's records to its requests and what else was seen in it.
Reader: TypeAlias = Callable[[Path, Iterable[Record], ImportContext], tuple[list[TraceRequest], FileSummary]]
#: A whole file (not text records: a database) to its requests and what else was seen in it.
FileReader: TypeAlias = Callable[[Path, ImportContext], tuple[list[TraceRequest], FileSummary]]


class Replay(msgspec.Struct, frozen=True):
    """How ``prefixbench replay`` reads a format body for body (``--input NAME``)."""

    #: The ``replay --input`` choice.
    name: str
    #: What ``replay --input``'s help says of it, after its name.
    help: str
    #: Which replay runs: request bodies through a cache model, or a capture compared with
    #: the usage its provider reported.
    kind: Literal["bodies", "capture"]
    #: What ``replay`` reads a file as unless ``--input`` says otherwise (listed first).
    default: bool = False


class LogFormat(msgspec.Struct, frozen=True):
    """One log format the audit reads (``audit --input NAME``)."""

    name: str
    #: What one file of it is called, singular and plural ("Claude Code transcript(s)").
    noun: str
    nouns: str
    #: One line for a list of formats.
    description: str
    detect: Detector
    read: Reader
    usage: UsageConvention
    #: The agent or log versions it has been read on, and what differs between them.
    versions: tuple[str, ...]
    #: What the formats table says of its usage where the convention's name alone would not say
    #: it (a reader whose convention depends on the adapter and release that wrote the log);
    #: empty: the convention's own words.
    usage_words: str = ""
    #: Other names ``--input`` accepts for it.
    aliases: tuple[str, ...] = ()
    #: Formats whose records a file of this one may hold (an Anthropic body without
    #: Anthropic-only fields looks like a chat-completions body).
    admits: tuple[str, ...] = ()
    #: Set when ``replay`` reads it body for body.
    replay: Replay | None = None
    #: For a log kept as many one-object files (OpenCode's storage): given a file and its record,
    #: the file whose reader reads it (None: audit it on its own). A folder walk skips such files.
    read_with: Callable[[Path, dict], Path | None] | None = None
    #: For a log kept in a binary file (OpenCode's SQLite database): whether a file is one, from
    #: its bytes (a file that is not raises nothing; one that claims to be and cannot be read is
    #: a UserError), and its reader; such a file is never read as text records.
    detect_file: Callable[[Path], bool] | None = None
    read_file: FileReader | None = None
    #: When ``--input`` names this format: whether a file ``detect_file`` does not tell as one is
    #: still read by ``read_file`` (an aider chat history with text before its first run).
    claims_file: Callable[[Path], bool] | None = None
    #: File names (ends) a folder walk offers to ``detect_file`` besides the text logs.
    file_suffixes: tuple[str, ...] = ()
    #: What the agent is known to change in the head its log does not hold (system prompt,
    #: tools) between requests, named where the audit locates a break inside that head.
    head_changes: str = ""
    #: Whether a read that falls back to just past the estimated end of the head this log does
    #: not hold (:data:`~prefixbench.workloads.audit.locate.AT_HEAD_END`) stopped at the head,
    #: not in message 1: so far measured on Claude Code transcripts only (Anthropic's diagnostic
    #: said ``system_changed`` of such falls in public sessions); elsewhere the read is placed
    #: in message 1 as any other.
    head_end_falls: bool = False
    #: For a reader that keeps a request's messages as where their lines start (``messages`` as
    #: bytes: :class:`~prefixbench.workloads.logs.trace.TraceRequest`): the record of the message a
    #: line read again holds (given the line's JSON value and the file), the one the reader would
    #: have made.
    message_of_line: Callable[[object, str], LoggedMessage] | None = None
    #: The provider that serves every call of this format, where the format itself implies one
    #: (Claude Managed Agents runs on Anthropic only); "" where the log or its model decides it.
    #: ``audit --assume-model`` keeps it and refuses a model of another provider.
    provider: str = ""
