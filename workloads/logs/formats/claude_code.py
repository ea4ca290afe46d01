"""Claude Code transcripts (1.0.x and 2.x, JSONL or the ``chat.json`` array form), and the
output of a headless run (``claude -p --output-format stream-json``).

One API response is one ``assistant`` line per content block, all with the same
``requestId``; usage repeats on each and ``output_tokens`` is final only on the LAST line, so a
request keeps its last line's usage. ``<synthetic>`` lines are not API calls. Lanes: the main
thread; each inline ``isSidechain`` chain (1.0.x Task subagents) from its root; a
``subagents/agent-*.jsonl`` file (2.x) is one lane, ``agent-acompact-*`` a compaction lane. A
``compact_boundary`` starts a new chain in its lane. A fork subagent's file (2.1.232 on) opens
with a ``fork-context-ref`` entry and the parent's message that spawned it, restated: no call of
the fork's; its first call extends that parent call (:data:`_RESTATED`). A forked session's file
(``/branch``, the Agent SDK's ``forkSession()``) opens with its source session's history copied, each
entry marked ``forkedFrom``: those calls are the source's, counted in its transcript, never here,
and the fork's first call extends the last of them (:data:`_COPIED`); from 2.1.326 an assistant entry
copied from another session (``--fork-session`` too) names that session in ``requestSessionId``, and
is that session's call the same way (:data:`_REQUESTED_ELSEWHERE`). Checked against the npm
package's binary of 2.1.332 (November 2026): its request-replay rows (``api-request``,
``api-request-shape``, ``api-request-blob``) are no messages, but say what a call sent: an
assistant entry's ``requestRef`` names its ``api-request`` row, which names the one it extends
(``base``), how many of its messages it kept (``keep``) and the hashes of the rest (``tail``); the
call's system prompt and tools are the ``api-request-shape`` row its ``shapeHash`` names. A call
whose row and its base's are both in the file gets what changed since (:meth:`_Walk.request_events`).
Its other new entry types (``api-request-resumed``, ``session-owner``, ``derived-from``,
``tools-used``...) are read past. Order is file order (timestamps tie or go
backwards in resumed histories); the clock is the timestamps, never allowed to run backwards.
A request id already counted in an earlier file (history a resumed or ``--fork-session`` session
copies, unmarked) is counted once; where that file's last line of it was written mid-stream (``stop_reason``
null) and this file's copy holds the response's end, the copy's usage is the call's (the same
prompt, more output). A response whose ``usage.iterations`` holds server-side compaction samplings
(Anthropic's compaction beta; the top-level counts are the message's alone) is that many
compaction calls before its own, which starts a new chain. A response that consulted the
advisor (the advisor tool, Claude Code's ``/advisor`` from 2.1.98) lists each advisor call in
``usage.iterations`` as an ``advisor_message`` naming the advisor model, its counts outside the top
level (the executor's alone): each is a call of that model in an ``advisor`` lane of its own, each
extending the lane's previous advisor call. A stream-json run names no parent and
no time: each message extends the one its thread (session, Task call) printed before. Run with
``--include-partial-messages`` it prints the API's stream events too (``stream_event``): a
response's ``message_delta`` holds its final usage, which the ``assistant`` lines, printed when
each content block completed, do not (their usage is ``message_start``'s: through a gateway that
counts at the end, all zero); a call's usage is then its ``message_start``'s overlaid with its
``message_delta``'s counts. A request is sent at the timestamp of the message it answers; its response
began no later than its first line's timestamp (written when the first content block was
complete), which is used as the time its cache entries became readable: a conservative bound
for concurrent starts. From 2.1.185 a main-thread response that ends its turn (``end_turn``) has
its prompt and reply written by a call of Claude Code's own the transcript does not hold, so the
next turn reads the reply too (an :class:`~prefixbench.workloads.logs.trace.OutputWritten`
prefix; measured, see :func:`_reply_written_after`).
"""

from __future__ import annotations

import hashlib
import heapq
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.chain import BY_CONTENT
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.simulator.providers import ANTHROPIC, BEDROCK, UNKNOWN, provider_of_model
from prefixbench.simulator.providers.base import ProviderRules, count
from prefixbench.simulator.providers.anthropic import ServerCalls, read_diagnostic, server_calls
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.common import as_dict, kept_before_thinking, parse_time_ms
from prefixbench.workloads.logs.claude_layout import project_folder, session_transcript
from prefixbench.workloads.logs.history import CHARS_PER_TOKEN, READ_TOOLS, make_message
from prefixbench.workloads.logs.records import MessagePlaces, Record
from prefixbench.workloads.logs.trace import (
    FileSummary, LoggedMessage, OutputWritten, Prefix, Provider, SENT_UNCOUNTED, TraceRequest, UNNAMED_RELAY, call_parent)

NAME = "claude-code"
_ENTRY_KINDS = ("user", "assistant", "system", "progress")
_BOOKKEEPING_KINDS = ("file-history-snapshot", "queue-operation")
#: Lines an entry naming a parent not yet seen waits for it. Claude Code 2.1 wrote a tool result
#: a line or two before the assistant line holding its tool_use (the same millisecond on both); an
#: entry still waiting this many lines on is a root whose parent lives in another file (a resumed
#: session).
_WAIT_LINES = 64


def detect(value: dict) -> Evidence | None:
    """A transcript entry: a message with a uuid or session id, a summary, or 2.x bookkeeping."""
    kind = value.get("type")
    if _streamed(value):
        # A stream-json line: only those no other agent writes (Qwen Code's headless output
        # copies the SDK message shapes, a user message's included, and its usage's names).
        return Evidence.ENTRY if _claude_stream_line(value) else None
    # A transcript's message is an object; a string one beside a sessionId and no uuid is another
    # agent's (Gemini CLI's logs.json: the prompts typed).
    if kind in _ENTRY_KINDS and ("uuid" in value or ("sessionId" in value and not isinstance(value.get("message"), str))):
        return Evidence.ENTRY
    if kind == "summary" and "leafUuid" in value:
        return Evidence.ENTRY
    if kind in _BOOKKEEPING_KINDS and ("messageId" in value or "sessionId" in value):
        return Evidence.ENTRY
    return None


def _claude_stream_line(value: dict) -> bool:
    """A stream-json line only Claude Code writes, with or without a uuid (1.0.x wrote none): its
    run's ``init`` naming its version, or a reply naming its model. (Amp's ``--stream-json``
    copies the shape with neither.)"""
    message = value.get("message")
    if value.get("type") == "assistant" and isinstance(message, dict):
        return "parent_tool_use_id" in value and isinstance(message.get("model"), str)
    return value.get("type") == "system" and value.get("subtype") == "init" and isinstance(value.get("claude_code_version"), str)


def _provider_usage(model: str, usage: dict, where: str) -> tuple[Provider, Usage]:
    """Who served a transcript's call and how its usage reads: Anthropic, unless the model the
    response named is another provider's that speaks Anthropic's Messages API (Claude Code pointed
    at DeepSeek's, Kimi's, GLM's, MiniMax's or Qwen's Anthropic-compatible endpoint with
    ``ANTHROPIC_BASE_URL``, or at Bedrock): its cache rules, usage reading and prices apply. A
    known model of a provider that does not speak it (gpt-5 through a translating router) is that
    provider's, its usage read as the Messages API writes it. A
    gateway's id of another vendor's model the audit does not model (OpenRouter's
    ``nvidia/nemotron-...``) is no Anthropic call: its provider is unknown, its usage read as the
    Messages API writes it."""
    provider, rules = _transcript_rules(model)
    return provider, rules.read_usage(usage, where)


def _transcript_rules(model: str) -> tuple[Provider, ProviderRules]:
    """Who served a transcript's call of ``model`` and whose rules read its usage
    (:func:`_provider_usage`)."""
    rules = provider_of_model(model)
    if rules is None and (_other_vendor(model) or not ANTHROPIC.names_model(model)):
        # A gateway's id of another vendor's model, or a name no provider the audit models
        # answers to (longcat-flash-thinking-2601-platform through an Anthropic-compatible
        # endpoint): not Anthropic's call.
        return UNKNOWN.name, ANTHROPIC
    if rules is None:
        return ANTHROPIC.name, ANTHROPIC
    if not rules.speaks_messages:
        # Another provider's known model that does not speak the Messages API (gpt-5, gemini-2.5-pro
        # through a translating router such as claude-code-router or LiteLLM): its own provider's,
        # taken from its name (:func:`_served_by_model`), its usage read as the Messages API writes it.
        return rules.name, ANTHROPIC
    return rules.name, rules


@lru_cache(maxsize=256)  # once a model name, not once a request
def _served_by_model(model: str) -> bool:
    """Whether only the model's name tells who served a transcript's call: another provider's
    model (Claude Code pointed at a compatible endpoint with ``ANTHROPIC_BASE_URL``, which the
    transcript does not keep: glm-4.7 may be Z.AI's or Volcengine Ark's), a known model of a
    provider that does not speak the Messages API (gpt-5 through a translating router), or a
    gateway's id of another vendor's. Anthropic's models are the agent's own endpoint's, Bedrock's ids its own."""
    rules = provider_of_model(model)
    if rules is None:
        return _other_vendor(model) or not ANTHROPIC.names_model(model)
    return rules not in (ANTHROPIC, BEDROCK)


def _other_vendor(model: str) -> bool:
    """Whether ``model`` is a gateway's ``vendor/model`` id whose vendor (a plain name, not a
    Bedrock ARN's) is not Anthropic."""
    vendor, slash, _ = model.lower().partition("/")
    plain = bool(slash) and vendor != ANTHROPIC.name and vendor.replace("-", "").replace("_", "").isalnum()
    return plain and not ANTHROPIC.names_model(model)


class _Request(msgspec.Struct):
    """One API call as its lines are read (the last line's usage wins)."""

    key: str
    first_seq: int
    first_line: int
    last_line: int
    lane: str
    lane_kind: str
    model: str
    usage: dict
    ready_ms: int | None
    sent_ms: int | None
    node: str | None
    parent_request: str | None
    new_blocks: int
    version: str | None
    events: list[tuple[str, str]]
    diagnostic: str | None
    #: The session the line names (``sessionId``; None where it names none).
    session: str | None = None
    #: The client the line names (``entrypoint``: ``cli``, ``claude-vscode``, ``claude-desktop``;
    #: None where it names none).
    entrypoint: str | None = None
    #: The messages on the path since the previous request's prompt (for locating breaks).
    messages: tuple[LoggedMessage, ...] | bytes = ()
    #: The last line's place among records run together on it ("" when alone on its line).
    last_path: str = ""
    #: Whether the last line ends the turn (``stop_reason`` ``end_turn``).
    ended_turn: bool = False


class _RequestRow(msgspec.Struct, frozen=True):
    """An ``api-request`` row (Claude Code 2.1.282 on): the row it extends (``base``; None for a
    chain's first), how many of that row's messages it kept, the hashes of its messages after them,
    its system+tools hash, and whether Claude Code cut its messages before recording them (``cut``:
    the messages recorded are not the ones sent)."""

    base: str | None
    keep: int
    tail: tuple[str, ...]
    shape: str
    cut: bool


#: The request-replay rows the reader keeps (:meth:`_Walk.request_row`).
_REQUEST_ROWS = frozenset({"api-request", "api-request-shape", "api-request-blob"})


class _Walk:
    """The chains of one transcript file, entry by entry.

    Per message uuid: its lane, depth (the entries above it that a prompt sends), timestamp, the nearest request above it (its anchor) and
    the event pending on the path since that request (a compaction, a resume, a user turn).
    """

    def __init__(self, path: Path) -> None:
        self.name = str(path)
        stem = path.stem
        self.in_subagents = path.parent.name == "subagents" or stem.startswith("agent-")
        self.file_lane = (stem, ("compaction" if "acompact" in stem else "subagent")) if self.in_subagents else ("main", "main")
        #: The subagent's type, as its ``agent-<id>.meta.json`` beside the file names it (``agentType``);
        #: None for the main thread's file or where no such file names one (:func:`_agent_type`).
        self.agent_type = _agent_type(path) if self.in_subagents else None
        self.lane_of: dict[str, tuple[str, str]] = {}
        self.depth: dict[str, int] = {}
        self.time_of: dict[str, int | None] = {}
        self.anchor: dict[str, str | None] = {}
        self.boundary: dict[str, str] = {}
        self.requests: dict[str, _Request] = {}
        #: Per request key: the ``message.id`` of its lines, where they name one (:meth:`_assistant`).
        self.message_of: dict[str, str] = {}
        self.skipped: list[tuple[int, str]] = []
        self.sidechains = 0
        #: Per entry: its parent; per message entry (user and assistant lines), where its line
        #: starts in the file (:attr:`Record.offset`), its small record made only if the audit
        #: locates a break on it (:func:`_line_record`, from the line read again: see
        #: :class:`~prefixbench.workloads.logs.records.MessagePlaces`).
        self.parent_of: dict[str, str | None] = {}
        self.message_of: dict[str, LoggedMessage | int] = {}
        self.places = MessagePlaces(self.name, _line_record)
        #: Entries that show the tool list changed (an attachment naming tools), with what they say.
        self.tool_changes: dict[str, str] = {}
        #: The requests whose ``message.id`` is of no shape Anthropic's API, Bedrock or Vertex gives
        #: (:data:`_FOREIGN_IDS`), with the shape's words: a relay re-id'd the response
        #: (:func:`_trace_request`).
        self.foreign_ids: dict[str, str] = {}
        #: Per model, the shapes of the foreign ids of its calls read as relayed (the file's note).
        self.foreign_shapes: dict[str, set[str]] = {}
        #: Per lane, the last ``prompt_snapshot`` seen: its system blocks (as texts) and its tools
        #: (name -> the definition sent, as JSON text), the tools None until a snapshot lists them.
        self.snapshot_system: dict[tuple[str, str], tuple[str, ...]] = {}
        self.snapshot_tools: dict[tuple[str, str], dict[str, str]] = {}
        #: How many ``prompt_snapshot`` rows the file holds (the file's note says what they are used for).
        self.snapshot_rows = 0
        #: Snapshot entries compared with their lane's previous one: the event each shows
        #: (``snapshot_system_change``, ``snapshot_tools_change`` or ``snapshot_same``), with what it says.
        self.snapshot_events: dict[str, list[tuple[str, str]]] = {}
        #: The chain node names made so far: a request's parent is the same string as the node of
        #: the request it extends, not a copy (the trace keeps both until the audit ends).
        self.node_names: dict[str, str] = {}
        #: Per root user entry (no parent: a conversation's first message), a digest of its
        #: message's content, for naming a lane start's node by what it sends (:func:`_start_node`).
        self.root_digest: dict[str, str] = {}
        #: Entries written before their parent: parent uuid -> the entries waiting for it, and
        #: the uuids of every waiting entry.
        self.waiting: dict[str, list[Record]] = {}
        self.held: set[str] = set()
        #: Entries written again under a uuid the file gave before (Claude Code 2.1.27 rewrites its
        #: ``saved_hook_context`` record after every entry, the same uuid and first date, each copy
        #: under the entry written just before it): per such uuid, the name of its latest copy (the
        #: uuid, ``#`` and the copy's count), which an entry naming the uuid after it hangs off; and
        #: the copies' names (see :meth:`_rewritten`).
        self.latest_copy: dict[str, str] = {}
        self.copies: set[str] = set()
        #: A stream-json run's entries name no parent: per thread (session, the Task call a
        #: subagent's messages answer), the entry placed last, which the next one extends; and
        #: per entry, the parent so given. The run's version is its ``init`` line's.
        self.stream_last: dict[tuple[str | None, ...], str] = {}
        self.stream_parent: dict[str, str | None] = {}
        self.stream_version: str | None = None
        #: A stream-json ``compact_boundary``'s logical parent: the entry its thread placed last.
        self.stream_logical: dict[str, str] = {}
        #: Progress entries met (never sent), and the last sent message entry met, main thread's and
        #: sidechains' apart: see :meth:`_past_progress`.
        self.progress: set[str] = set()
        #: Per tool call id, the assistant entry that made the call: a tool result naming a
        #: parent the file never gives is placed under it (:meth:`_answered`).
        self.tool_callers: dict[str, str] = {}
        #: The assistant entries that made a tool call (:meth:`_below`).
        self.calling: set[str] = set()
        self.last_said: dict[bool, str] = {}
        #: The stream-json entries placed so far (a 1.0.x line's stand-in uuid counts them).
        self.stream_entries = 0
        #: A stream-json run's main-thread lane per session: the file's for the first session, one
        #: of its own for each other (two runs' output in one file, one after the other or interleaved).
        self.session_lanes: dict[str | None, tuple[str, str]] = {}
        #: Copies of calls an earlier file counted from a line written mid-stream, this file's
        #: holding the response's end (see :func:`_fresh`).
        self.final: list[_Request] = []
        #: Claude models whose calls in this file a relay served, not Anthropic (:func:`_ttl_split`),
        #: with the writes and calls that showed it.
        self.relayed: dict[str, tuple[int, int]] = {}
        #: Claude models with unsplit writes whose calls still left the prompt cached as Anthropic's
        #: do, or whose other calls here split their writes (:func:`_find_relayed`): kept Anthropic's,
        #: said in a note
        #: (the writes, the calls, the model's calls here that split their writes, whether an
        #: unsplit call left much of its prompt uncached).
        self.unsplit_kept: dict[str, tuple[int, int, int, bool]] = {}
        #: Claude models whose calls in this file report a write of 0 every time though their reads
        #: grow (:func:`_find_unwritten`): the writes are not reported, not 0; with the calls that
        #: report their cache use and those whose read outgrew every earlier one.
        self.unwritten: dict[str, tuple[int, int]] = {}
        #: The requests whose last line was written mid-stream (:func:`_mid_stream`).
        self.mid_stream: set[str] = set()
        #: A stream-json run's stream events (``--include-partial-messages``): per thread, the
        #: message the API is streaming (its id and ``message_start``'s usage); per message id,
        #: the last of its ``assistant`` lines whose usage was all zero (kept to be counted when
        #: its ``message_delta`` brings the counts) and the lines skipped as such.
        self.streaming: dict[tuple[str | None, ...], tuple[str, dict]] = {}
        self.zero_held: dict[str, tuple[Record, dict, dict, str, str | None, int | None]] = {}
        self.zero_lines: dict[str, list[int]] = {}
        #: The lane of each line skipped as :data:`_ZERO_UNREPORTED` (kept to the end: the audit
        #: names such a line only for a request of its own lane).
        self.zero_lane: dict[int, str] = {}
        #: ``(request id, line)`` of the calls this file holds that another file counts (copies).
        self.copy_lines: list[tuple[str, int]] = []
        #: A fork subagent's transcript (2.1.232 on: it opens with a ``fork-context-ref`` entry):
        #: until its first user entry, the assistant lines are the parent's message that spawned
        #: the fork, restated (:data:`_RESTATED`); their request ids, never counted here.
        self.restating = False
        self.restated: set[str] = set()
        #: Calls of a forked session's copy of another session's history (``forkedFrom`` on the
        #: copied entries: :data:`_COPIED`), never counted here, and the sessions they name.
        self.copied: set[str] = set()
        self.copied_from: set[str] = set()
        #: Those of them marked by ``requestSessionId`` alone (:data:`_REQUESTED_ELSEWHERE`).
        self.requested_elsewhere: set[str] = set()
        #: The calls of another transcript a request of this one extends, named by their ids
        #: alone (:func:`~prefixbench.workloads.logs.trace.call_parent`): restated or copied ones.
        self.linked: set[str] = set()
        #: The requests whose response holds a thinking block (a set: many calls think none).
        self.thought: set[str] = set()
        #: Request-replay rows (2.1.282 on, :meth:`request_row`): ``api-request`` rows by id, the
        #: system blocks and tools of ``api-request-shape`` rows by hash (as :func:`_snapshot_parts`
        #: gives a snapshot's), the blocks of ``api-request-blob`` messages by hash (as JSON text).
        self.request_rows: dict[str, _RequestRow] = {}
        self.request_shapes: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {}
        self.request_blobs: dict[str, tuple[str, ...]] = {}
        #: Per request, the ``api-request`` row its response names (``requestRef``).
        self.request_refs: dict[str, str] = {}
        #: How many requests had their ``api-request`` row compared with the one it extends.
        self.request_rows_read = 0

    def offer(self, record: Record) -> None:
        """Place ``record`` (see :meth:`entry`), after its parent when the file gives the parent
        later: an entry waits up to :data:`_WAIT_LINES` lines for a parent not yet seen."""
        value = record.value
        if isinstance(value, dict) and _streamed(value):
            self._stream_entry(record)
            return
        uuid = value.get("uuid") if isinstance(value, dict) else None
        parent = value.get("parentUuid") if isinstance(value, dict) else None
        if isinstance(uuid, str) and (uuid in self.lane_of or uuid in self.held
                                      or (isinstance(parent, str) and parent in self.latest_copy)):
            record = self._rewritten(record, uuid, parent)
            value = record.value
            uuid, parent = value["uuid"], value.get("parentUuid")
        if isinstance(uuid, str) and isinstance(parent, str) and parent not in self.lane_of and self._answered(value) is None:
            self.waiting.setdefault(parent, []).append(record)
            self.held.add(uuid)
        elif isinstance(uuid, str) and uuid not in self.waiting:
            # Nothing waits for it (nearly every entry): placed as _enter places one entry that
            # releases none, without its heap.
            self.held.discard(uuid)
            self.entry(record)
        else:
            self._enter([record])
        if self.waiting:
            late = [parent for parent, held in self.waiting.items()
                    if parent not in self.held and record.line - held[0].line > _WAIT_LINES]
            self._enter([held for parent in late for held in self.waiting.pop(parent)])

    def _rewritten(self, record: Record, uuid: str, parent: object) -> Record:
        """``record`` as placed where the file has it, in file order: when its uuid was given before
        (placed, or waiting for its parent), a copy named apart (the uuid, ``#`` and its count:
        ``#2`` the second), which the entries written after it that name the uuid hang off, not
        the first copy; its parent, where that is a uuid written more than once, the copy written
        last before it. Claude Code 2.1.27 writes its ``saved_hook_context`` record (a SessionStart
        hook's context) again after every entry of the session, with the same uuid and date, each
        copy's ``parentUuid`` the entry before it and every assistant entry's the record's uuid: read
        as one entry, every call hung off the first copy (written before the first prompt), sent at
        its date, none extending the one before (xfs96192/claude-config, session 9f82d240: 18 calls
        dated 15:22:38.575, run 15:26-15:49, 0 reads predicted)."""
        value: dict = record.value  # type: ignore[assignment]
        changed = dict(value)
        if uuid in self.lane_of or uuid in self.held or uuid in self.latest_copy:
            count = 2 if uuid not in self.latest_copy else int(self.latest_copy[uuid].rpartition("#")[2]) + 1
            changed["uuid"] = self.latest_copy[uuid] = f"{uuid}#{count}"
            self.copies.add(changed["uuid"])
        if isinstance(parent, str) and parent in self.latest_copy:
            changed["parentUuid"] = self.latest_copy[parent]
        return replace(record, value=changed)

    def _stream_entry(self, record: Record) -> None:
        """Place an entry of a stream-json run (:func:`_streamed`) under the entry its thread
        placed last: the run prints a thread's messages in the order its prompts send them. The
        run's ``init``, hook output and ``result`` lines are no part of a prompt; a
        ``compact_boundary`` starts the thread's chain again."""
        value: dict = record.value  # type: ignore[assignment]
        kind = value.get("type")
        if kind == "system" and value.get("subtype") == "init" and isinstance(value.get("claude_code_version"), str):
            self.stream_version = value["claude_code_version"]
        # A compaction (the SDK's compact_boundary) starts the thread's chain again, as in a transcript.
        boundary = kind == "system" and value.get("subtype") == "compact_boundary"
        if kind == "stream_event":
            self._stream_event(value, record.line)
            return
        if kind != "user" and kind != "assistant" and not boundary:
            return
        self.stream_entries += 1
        uuid = value.get("uuid")
        if not isinstance(uuid, str):  # (1.0.x: none; its place in the file stands for it, not its line
            # alone: the lines of a run collected into one JSON array share theirs)
            uuid = f"line {record.line}{record.path} #{self.stream_entries}"
        thread = tuple(v if isinstance(v, str) else None for v in (value.get("session_id"), value.get("parent_tool_use_id")))
        if boundary and thread in self.stream_last:
            # Its thread's last entry is its logical parent (a transcript's logicalParentUuid): the
            # chain starts again in that thread's lane (a subagent's compaction is no new subagent).
            self.stream_logical[uuid] = self.stream_last[thread]
        self.stream_parent[uuid] = None if boundary else self.stream_last.get(thread)
        self.stream_last[thread] = uuid
        self.entry(record, uuid)

    def _stream_event(self, value: dict, line: int) -> None:
        """A stream-json run's API stream event: ``message_start`` names the message its thread
        streams; ``message_delta`` brings that message's final counts, which become its call's
        usage (over ``message_start``'s, key by key: a count the delta leaves null stays). A
        count of the delta's that is no count is an error naming the delta's ``line`` (not the
        assistant line whose call it counts)."""
        event = value.get("event")
        if not isinstance(event, dict):
            return
        thread = tuple(v if isinstance(v, str) else None for v in (value.get("session_id"), value.get("parent_tool_use_id")))
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message")
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                start = message.get("usage")
                self.streaming[thread] = (message["id"], start if isinstance(start, dict) else {})
            return
        delta = event.get("usage")
        if kind != "message_delta" or not isinstance(delta, dict) or thread not in self.streaming:
            return
        for name in _COUNTED:
            count(delta.get(name), f"{self.name}:{line}", f"usage.{name}")
        key, start = self.streaming[thread]
        known = self.requests.get(key)
        usage = {**(known.usage if known is not None else start), **{k: v for k, v in delta.items() if v is not None}}
        if not any(map(usage.get, _COUNTED)):
            return
        if known is not None:
            known.usage = usage
            return
        held = self.zero_held.pop(key, None)
        if held is None:
            return
        # Its lines were skipped as reporting no counts: the delta reports them.
        lines = set(self.zero_lines.pop(key, ()))
        self.skipped = [skip for skip in self.skipped if not (skip[0] in lines and skip[1] == _ZERO_UNREPORTED)]
        record, line_value, message, uuid, parent, when = held
        self._assistant(record, line_value, {**message, "usage": usage}, uuid, parent, when)

    def flush(self) -> None:
        """Place the entries still waiting at the end of the file: those whose parent never came
        are roots (first in file order), each followed by the entries waiting for it."""
        while self.waiting:
            roots = [parent for parent in self.waiting if parent not in self.held]
            if not roots:  # (entries waiting for each other: the first in the file goes first)
                roots = [min(self.waiting, key=lambda parent: self.waiting[parent][0].line)]
            self._enter([held for parent in roots for held in self.waiting.pop(parent)])

    def placed(self) -> None:
        """Let go of every per-entry map once every entry is placed (:meth:`flush`): the requests
        hold what they need of them. What :func:`read` goes on to read is kept: the requests, the
        chain nodes' names, the lines skipped, the mid-stream requests, :attr:`final` and the
        count of snapshot rows. (Held to the end of the reading, the maps were the command's peak:
        tests/unit/audit/test_audit_memory.py measured 2,404 bytes a request, 1,854 without them.)"""
        for held in (self.lane_of, self.depth, self.time_of, self.anchor, self.boundary, self.parent_of, self.message_of,
                     self.places.same, self.tool_changes, self.snapshot_system, self.snapshot_tools, self.snapshot_events,
                     self.waiting, self.held, self.latest_copy, self.copies, self.stream_last, self.stream_parent,
                     self.stream_logical, self.progress, self.last_said, self.session_lanes, self.streaming, self.zero_held, self.zero_lines,
                     self.request_rows, self.request_shapes, self.request_blobs, self.request_refs, self.tool_callers):
            held.clear()

    def _enter(self, ready: list[Record]) -> None:
        """Place ``ready`` and the entries each releases, the earliest line first."""
        heap = [(record.line, record.part, n, record) for n, record in enumerate(ready)]
        heapq.heapify(heap)
        n = len(heap)
        while heap:
            record = heapq.heappop(heap)[-1]
            value = record.value
            uuid = value.get("uuid") if isinstance(value, dict) else None
            if isinstance(uuid, str):  # (anything else is entry()'s to refuse or pass over)
                self.held.discard(uuid)
            self.entry(record)
            for child in self.waiting.pop(uuid, ()) if isinstance(uuid, str) else ():
                n += 1
                heapq.heappush(heap, (child.line, child.part, n, child))

    def node_name(self, entry: str) -> str:
        """The chain model's node of the entry a prompt ends with (one string a node)."""
        name = self.node_names.get(entry)
        if name is None:
            name = self.node_names[entry] = f"cc:{entry}"
        return name

    def entry(self, record: Record, uuid: object = None) -> None:
        """Place one entry in its chain (its ``uuid`` unless given); an assistant line adds to (or
        starts) its request."""
        value: dict = record.value  # type: ignore[assignment]
        uuid = value.get("uuid") if uuid is None else uuid
        if not isinstance(uuid, str):
            if value.get("type") == "fork-context-ref" and not self.requests:
                self.restating = True  # (the fork's own entries follow the parent's message)
            elif isinstance(kind := value.get("type"), str) and kind in _REQUEST_ROWS:
                self.request_row(value)
            return  # summary, file-history-snapshot, queue-operation...: not part of a chain
        parent = self.stream_parent.pop(uuid) if uuid in self.stream_parent else value.get("parentUuid")
        if parent is not None and not isinstance(parent, str):
            raise UserError(f"{self.name}:{record.line}: parentUuid is not a string ({parent!r:.40})")
        if parent is not None and parent not in self.lane_of and (caller := self._answered(value)) is not None:
            parent = self._below(caller, bool(value.get("isSidechain")))
        if parent is not None and parent in self.progress:
            parent = self._past_progress(parent, bool(value.get("isSidechain")))
        stamp = value.get("timestamp")
        if type(stamp) is str:
            # parse_time_ms's reading of an ISO time, written out (two calls less an entry); what
            # it refuses goes to it, which says why with the entry's file:line. Kept in step with
            # parse_time_ms: tests/unit/logs/test_claude_code.py::
            # test_an_entrys_generated_iso_time_is_read_as_parse_time_ms_reads_it (and the
            # examples of test_an_entrys_iso_time_is_read_as_parse_time_ms_reads_it).
            try:
                moment = datetime.fromisoformat(stamp)
                when = round((moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).timestamp() * 1000)
            except (ValueError, OverflowError):
                when = parse_time_ms(stamp, f"{self.name}:{record.line}")
        else:
            try:
                when = parse_time_ms(stamp, "")
            except UserError:  # said again with its file:line (made only here, not for every entry)
                when = parse_time_ms(stamp, f"{self.name}:{record.line}")
        event = self._place(value, uuid, parent)
        if uuid in self.copies and parent is not None and (after := self.time_of.get(parent)) is not None:
            # A copy keeps its first copy's date: where it was written is after its parent.
            when = after if when is None else max(when, after)
        self.time_of[uuid] = when
        self.parent_of[uuid] = parent
        message = value.get("message")
        if not isinstance(message, dict):
            message = {}
        kind = value.get("type")
        self._remember(record, kind, uuid, message)
        if parent is None and kind == "user" and "content" in message:
            self.root_digest[uuid] = hashlib.blake2b(
                json.dumps(message["content"], sort_keys=True).encode(), digest_size=12).hexdigest()
        if kind == "progress":
            self.progress.add(uuid)
        elif uuid in self.message_of:
            self.last_said[bool(value.get("isSidechain"))] = uuid
        if kind == "user" and not event and _is_user_turn(value, message):
            event = "user_turn"
        if event is not None:
            self.boundary[uuid] = event
        if kind == "assistant":
            content = message.get("content")
            for block in content if isinstance(content, list) else ():
                if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    self.tool_callers[block["id"]] = uuid
                    self.calling.add(uuid)
            self._assistant(record, value, message, uuid, parent, when)
        elif kind == "user":
            self.restating = False

    def _answered(self, value: dict) -> str | None:
        """The entry that made the tool call a user entry answers, when its parent is not in the
        file: Claude Code 2.0.64-2.0.76 (seen) chains one of a response's parallel tool results in
        a subagent's transcript under an entry it never writes (yakschuss/dotfiles: 126 of them,
        46 straight after the calling line, the rest after another result of the same response); the
        result answers a call an entry of the file made (its ``tool_use_id``), and the next call
        sends it with the rest of the conversation (:meth:`_below` places it). None for any other
        entry."""
        if value.get("type") != "user":
            return None
        content = (value.get("message") or {}).get("content") if isinstance(value.get("message"), dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                caller = self.tool_callers.get(block.get("tool_use_id")) if isinstance(block.get("tool_use_id"), str) else None
                if caller is not None and caller in self.lane_of:
                    return caller
        return None

    def _below(self, caller: str, sidechain: bool) -> str:
        """Where a tool result placed by :meth:`_answered` goes: under the latest message placed
        below its calling line (another result of the same response, so the next call's path
        holds both), or the calling line itself when nothing was placed below it since (no other
        response in between: a walk up from the latest message meets no other response's line).
        A result written straight after the calling line, before its siblings, stays under that
        line: the sibling written after it names the calling line itself, and the next call's
        path (from the file's own parents) holds that sibling alone."""
        node = self.last_said.get(sidechain)
        latest, steps = node, 0
        while node is not None and node != caller and steps < 64:
            if node in self.calling and self.anchor.get(node) != self.anchor.get(caller):
                break  # another response's line that called tools: a later call's, not this one's
            node, steps = self.parent_of.get(node), steps + 1
        return latest if node == caller and latest is not None else caller

    def _past_progress(self, parent: str, sidechain: bool) -> str:
        """The parent of an entry logged under a progress entry: that entry, unless the progress
        hangs off an older message than the last one sent before it (then that last message).

        Claude Code 2.1.81 chains a turn's hook progress entries (``hook_progress``) from an early
        entry of the session and hangs the next user turn off the last of them (IDAHO-VAULT's
        66d7e9b5: 20 turns, the previous turn's messages off their path), while the prompt it
        sends extends the previous one (each read all of it)."""
        node: str | None = parent
        seen = 0
        while node is not None and node not in self.message_of and seen < 100_000:
            node, seen = self.parent_of.get(node), seen + 1
        last = self.last_said.get(sidechain)
        return parent if last is None or node == last else last

    def _remember(self, record: Record, kind: object, uuid: str, message: dict) -> None:
        """Keep where a sent message's line starts (its small record where the line cannot be
        read again there: :class:`~prefixbench.workloads.logs.records.MessagePlaces`), and note an
        entry showing a tool list change."""
        value: dict = record.value  # type: ignore[assignment]
        if (kind == "user" or kind == "assistant") and "content" in message:
            content = message["content"]
            places = self.places
            self.message_of[uuid] = (record.offset if places.lazy(record)
                                     else places.made(_message_record(value, kind, message)))
            if kind == "user" and (loaded := _tools_loaded(content)):
                self.tool_changes[uuid] = f"ToolSearch loaded {', '.join(loaded)}"
            elif kind == "user" and isinstance(content, str) and content.lstrip().startswith(MODEL_SET):
                # The user's /model (its output names an alias or a display name, not always the
                # model id): the next request's switch is their choice. Only an entry that is the
                # command's output counts, not a prompt that merely quotes those words.
                self.snapshot_events.setdefault(uuid, []).append(("model_chosen", ""))
            return
        attachment = as_dict(value.get("attachment"))
        what = str(attachment.get("type") or value.get("subtype") or "")
        if what == "prompt_snapshot":
            self._snapshot(uuid, attachment)
        elif "tool" in what.lower():
            self.tool_changes[uuid] = what

    def _snapshot(self, uuid: str, snapshot: dict) -> None:
        """Compare a ``prompt_snapshot`` with its lane's previous one (:func:`snapshot_diff`)."""
        self.snapshot_rows += 1
        lane = self.lane_of.get(uuid)
        if lane is None:
            return
        system, tools = _snapshot_parts(snapshot)
        before_system, before_tools = self.snapshot_system.get(lane), self.snapshot_tools.get(lane)
        events = snapshot_diff(before_system, before_tools, system, tools)
        if events:
            self.snapshot_events[uuid] = events
        if system is not None:
            self.snapshot_system[lane] = system
        if tools is not None:
            self.snapshot_tools[lane] = tools

    def _path_since(
        self, node: str | None, stop: str | None
    ) -> tuple[tuple[LoggedMessage, ...] | bytes, list[str], list[tuple[str, str]]]:
        """The messages from just below ``stop`` (the previous request's last prompt entry) down to
        ``node``, in prompt order, the tool list changes on that path, and what the prompt snapshots
        on it showed (:func:`_snapshot_events`)."""
        found: list[LoggedMessage | int] = []
        tools: list[str] = []
        snapshots: list[tuple[str, str]] = []
        # A node met again is a loop of parentUuids (an entry naming one written after it as its
        # parent): the walk stops there, each entry read once (before, it went round the loop up to
        # the cap, 100,000 entries, and the audit read every copy again: 15 GB on xfs96192's home).
        seen: set[str] = set()
        while node is not None and node != stop and node not in seen and len(seen) < 100_000:
            seen.add(node)
            if node in self.message_of:
                found.append(self.message_of[node])
            if node in self.tool_changes:
                tools.append(self.tool_changes[node])
            if node in self.snapshot_events:
                snapshots[:0] = self.snapshot_events[node]
            node = self.parent_of.get(node)
        found.reverse()
        return self.places.messages(found), tools, _snapshot_events(snapshots)

    def _place(self, value: dict, uuid: str, parent: str | None) -> str | None:
        """Put ``uuid`` in a lane under its parent; the event its placement shows, if any."""
        if parent is not None and parent in self.lane_of:
            self.lane_of[uuid] = self.lane_of[parent]
            # An entry that sits in the chain but is never sent (a hook's or a running tool's
            # progress, a retry notice: :func:`_sent`) is no block of the next prompt.
            # A copy of an entry written before (:meth:`_rewritten`) is no new block either: the
            # prompt holds the entry once, where it was first written.
            self.depth[uuid] = self.depth[parent] + (0 if uuid in self.copies else _sent(value))
            self.anchor[uuid] = self.anchor[parent]
            return self.boundary.get(parent)
        event: str | None = None
        subtype = value.get("subtype")
        logical = self.stream_logical.pop(uuid) if uuid in self.stream_logical else value.get("logicalParentUuid")
        if subtype == "compact_boundary" and isinstance(logical, str) and logical in self.lane_of:
            lane = self.lane_of[logical]
            event = "compaction"
        elif (value.get("isSidechain") or isinstance(value.get("parent_tool_use_id"), str)) and not self.in_subagents:
            self.sidechains += 1
            lane = (f"sidechain-{self.sidechains}", "subagent")
        else:
            lane = self._session_lane(value) if _streamed(value) else self.file_lane
            if subtype == "compact_boundary":
                event = "compaction"
        self.lane_of[uuid] = lane
        self.depth[uuid] = 0
        self.anchor[uuid] = None
        if parent is not None:
            event = event or "resume"  # the parent lives in another file (a resumed session)
        return event

    def _session_lane(self, value: dict) -> tuple[str, str]:
        """The lane of a stream-json run's main thread (see :attr:`session_lanes`): a second run's
        calls are no continuation of the first's, whose lane's previous request they are not."""
        session = value.get("session_id")
        key = session if isinstance(session, str) else None
        if key not in self.session_lanes:
            self.session_lanes[key] = (f"session-{len(self.session_lanes) + 1}", "main") if self.session_lanes else self.file_lane
        return self.session_lanes[key]

    def _assistant(self, record: Record, value: dict, message: dict, uuid: str, parent: str | None, when: int | None) -> None:
        model = message.get("model")
        usage = message.get("usage")
        if model == "<synthetic>" or not isinstance(usage, dict):
            self.skipped.append((record.line, "synthetic message, not an API call" if model == "<synthetic>" else "no usage"))
            return
        if model == _SLASH_COMMAND:
            # iFlow CLI writes what a slash command (/docs, /update, ...) printed as an assistant
            # message of model "slash-command", usage zero: no model answered it.
            self.skipped.append((record.line, _SLASH_OUTPUT))
            return
        if not any(map(usage.get, _COUNTED)) and not _compacted(usage):
            # Nothing sent, nothing written: no call's usage. Claude Code 2.1.185 writes the reply a
            # precomputed compaction preserved (compactMetadata.preservedSegment) again after the
            # boundary with its counts zeroed (usage.iterations keeps what the call read): a
            # compaction is then pending on the path to it. Anywhere else the endpoint answered
            # without counts (a gateway or Anthropic-compatible server that reports zeros).
            self.skipped.append((record.line, _ZERO_COPIED if self.boundary.get(uuid) == "compaction" else _ZERO_UNREPORTED))
            if uuid in self.lane_of:
                self.zero_lane[record.line] = self.lane_of[uuid][0]
            ident = message.get("id")
            if _streamed(value) and isinstance(ident, str) and isinstance(model, str):
                # (a stream_event message_delta may bring its counts: see _stream_event)
                self.zero_held[ident] = (record, value, message, uuid, parent, when)
                self.zero_lines.setdefault(ident, []).append(record.line)
            return
        if not isinstance(model, str):
            raise UserError(f"{self.name}:{record.line}: message.model is not a string ({model!r:.40})")
        key = value.get("requestId")
        if not (isinstance(key, str) and key):
            key = message.get("id")
            if not (isinstance(key, str) and key):
                key = uuid
        ident = message.get("id")
        if isinstance(ident, str) and ident:
            if self.message_of.setdefault(key, ident) != ident:
                # A second response logged under the same requestId (2.1.78-2.1.96 seen: a stream
                # cut off after its first blocks, then a response of another message id that read
                # what the first wrote, seconds or an hour later): two calls, each billed.
                key = f"{key}#{ident}"
            shape = _foreign_shape(ident)
            if shape:
                self.foreign_ids[key] = shape
        known = self.requests.get(key)
        # Placed after a later line of its own file (it waited for a parent the file never gave,
        # as the first copy of a subagent transcript written twice over does): that later line
        # holds the response as it ended, so this one leaves its counts and its end alone. (Where
        # in the file, records run together on one line ordered by their place on it.)
        earlier = known is not None and _position(record.line, record.path) < _position(known.last_line, known.last_path)
        if not earlier:
            # Whether its last line so far was written before the response ended (a set: few are).
            (self.mid_stream.add if _mid_stream(message) else self.mid_stream.discard)(key)
        if known is None:
            known = self.requests[key] = self._new_request(key, record, value, message, uuid, parent, when)
            if self.restating:
                self.restated.add(key)
            elif isinstance(forked := value.get("forkedFrom"), dict) and isinstance(source := forked.get("sessionId"), str):
                self.copied.add(key)
                self.copied_from.add(source)
            elif _requested_elsewhere(value):
                self.copied.add(key)
                self.copied_from.add(value["requestSessionId"])
                self.requested_elsewhere.add(key)
        elif not earlier:
            known.last_line = record.line
            known.last_path = record.path
            known.usage = usage  # the LAST line's usage holds the final output count
        if not earlier:
            known.ended_turn = message.get("stop_reason") == "end_turn"
        content = message.get("content")
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") in _THINKING for b in content):
            self.thought.add(key)
        self.anchor[uuid] = key
        self.boundary.pop(uuid, None)

    def request_row(self, value: dict) -> None:
        """Keep a request-replay row (2.1.282 on; checked against 2.1.332's binary). ``api-request``:
        ``id``, ``base`` (the id of the row it extends, absent on a chain's first), ``keep`` (how
        many of the base's messages come first, unchanged), ``tail`` (the sha256 of each message
        after them), ``shapeHash`` (of its system prompt and tools), ``cut`` when its messages were
        cut before recording. ``api-request-shape``: ``shapeHash`` and ``shape`` (``system``, the
        blocks sent less the billing header, and ``tools``, each without ``cache_control``), once a
        hash per file (again after a compaction). ``api-request-blob``: ``hash`` and ``message`` (a
        message as sent, without ``cache_control``), once a hash the same way. A row not so
        shaped is read past, as before."""
        kind = value["type"]
        if kind == "api-request":
            ident, base, keep, tail, shape = (value.get(k) for k in ("id", "base", "keep", "tail", "shapeHash"))
            if (isinstance(ident, str) and (base is None or isinstance(base, str)) and type(keep) is int and keep >= 0
                    and isinstance(tail, list) and all(isinstance(h, str) for h in tail) and isinstance(shape, str)):
                self.request_rows[ident] = _RequestRow(base, keep, tuple(tail), shape, "cut" in value)
        elif kind == "api-request-shape":
            shape, found = value.get("shapeHash"), value.get("shape")
            if isinstance(shape, str) and isinstance(found, dict):
                blocks = found.get("system")
                system = (blocks,) if isinstance(blocks, str) else tuple(
                    b["text"] if isinstance(b, dict) and isinstance(b.get("text"), str) else _json_text(b)
                    for b in (blocks if isinstance(blocks, list) else ()))
                listed = found.get("tools")
                tools = {str(as_dict(tool).get("name") or f"#{i + 1}"): _json_text(tool)
                         for i, tool in enumerate(listed if isinstance(listed, list) else ())}
                self.request_shapes[shape] = (system, tools)
        else:
            digest, message = value.get("hash"), value.get("message")
            if isinstance(digest, str) and isinstance(message, dict):
                content = message.get("content")
                self.request_blobs[digest] = (
                    (_json_text({"type": "text", "text": content}),) if isinstance(content, str)
                    else tuple(_json_text(b) for b in content) if isinstance(content, list) else (_json_text(content),))

    def _hash_at(self, ident: str, index: int) -> str | None:
        """The hash of message ``index`` (0-based) of the request row ``ident``, following its
        bases; None where a row on the way is not in the file."""
        for _ in range(len(self.request_rows) + 1):
            row = self.request_rows.get(ident)
            if row is None:
                return None
            if index >= row.keep:
                return row.tail[index - row.keep] if index - row.keep < len(row.tail) else None
            if row.base is None:
                return None
            ident = row.base
        return None

    def request_events(self, ref: str, extended: str) -> list[tuple[str, str]]:
        """What the ``api-request`` row ``ref`` (an assistant entry's ``requestRef``) shows against
        the row it extends, both in the file, when that row is ``extended`` (the row of the request
        the chain says this one extends: Claude Code names as ``base`` the last row it wrote for the
        lane, which after a rewind or a resume need not be that one; and no ``base`` at all when it
        kept no message, as after a compaction): ``request_tools_change`` and
        ``request_system_change`` (as :func:`snapshot_diff` says them) when the system+tools hash
        differs and both shape rows are in the file; ``request_shape_change`` when the hash differs
        but they do not show which part (a shape row not in the file, as when written in an earlier
        file of a resumed session, or both compare equal as read); ``request_messages_change`` when it kept fewer
        messages than the base sent (the first changed message and, when both blobs are in the
        file, its first changed block); ``request_same`` when the hash is the base's and every
        message of the base was kept. A row with no base (a process's first call in a chain), a
        base not in the file, or messages cut (``cut``) on either: nothing of what they do not show."""
        row = self.request_rows.get(ref)
        base = self.request_rows.get(extended) if row is not None and row.base == extended else None
        if row is None or base is None:
            return []
        self.request_rows_read += 1
        events: list[tuple[str, str]] = []
        if row.shape != base.shape:
            if base.shape in self.request_shapes and row.shape in self.request_shapes:
                diff = snapshot_diff(*self.request_shapes[base.shape], *self.request_shapes[row.shape])
                events += [("request" + kind[len("snapshot"):], detail) for kind, detail in diff if kind != "snapshot_same"]
                why = "the shape rows compare equal as read"
            else:
                why = "the shape rows are not in this file"
            if not events:  # the hash says the head changed; the shape rows do not show which part
                events.append(("request_shape_change", f"the system prompt or tools changed (their hash did; {why})"))
        if row.cut or base.cut:
            return events
        sent = base.keep + len(base.tail)
        if row.keep < sent:
            detail = f"message {row.keep + 1} of the {sent} the previous request sent differs"
            if not row.tail:
                detail = f"messages {row.keep + 1}-{sent} of the {sent} the previous request sent were dropped"
            else:
                before, now = self.request_blobs.get(self._hash_at(row.base, row.keep) or ""), self.request_blobs.get(row.tail[0])
                if before is not None and now is not None:
                    block = next((i for i, (a, b) in enumerate(zip(before, now)) if a != b), min(len(before), len(now)))
                    detail += f", from its block {block + 1}"
            events.append(("request_messages_change", detail))
        elif row.shape == base.shape:
            events.append(("request_same", f"kept all {sent} messages, added {len(row.tail)}"))
        return events

    def _new_request(
        self, key: str, record: Record, value: dict, message: dict, uuid: str, parent: str | None, when: int | None
    ) -> _Request:
        pending = self.boundary.get(parent) if parent is not None else None
        sent = self.time_of.get(parent) if parent is not None else None
        prev_req = self.anchor.get(parent) if parent is not None else None
        if pending == "compaction":
            prev_req = None
        above = self.depth.get(self.requests[prev_req].node or "", 0) if prev_req in self.requests else 0
        version = value.get("version", self.stream_version)
        stop = self.requests[prev_req].node if prev_req in self.requests else None
        messages, tools, snapshots = self._path_since(parent, stop)
        events = [(pending, "")] if pending else []
        events += [("tools_change", what) for what in tools]
        events += snapshots
        if self.request_rows and isinstance(ref := value.get("requestRef"), str):
            self.request_refs[key] = ref
            if prev_req is not None and (extended := self.request_refs.get(prev_req)) is not None:
                events += self.request_events(ref, extended)
        request = _Request(
            key=key,
            first_seq=len(self.requests),
            first_line=record.line,
            last_line=record.line,
            lane=self.lane_of[uuid][0],
            lane_kind=self.lane_of[uuid][1],
            model=message["model"],
            usage=message["usage"],
            ready_ms=when,
            sent_ms=sent if sent is not None else when,
            node=parent,
            parent_request=prev_req,
            # The prompt's entries since the previous request's (this response's own line is none).
            new_blocks=max(1, self.depth[uuid] - 1 - above),
            version=version if isinstance(version, str) else None,
            events=events,
            diagnostic=read_diagnostic(message),
            # (interned: one object a session, not a string a request kept to the end of the walk)
            session=sys.intern(session) if isinstance(session := value.get("sessionId"), str) and session else None,
            messages=messages,
            last_path=record.path,
        )
        # Set apart, not as a keyword of every request: with the keyword (None on lines naming no
        # client) the reading's traced peak measured ~65 bytes a request more (test_audit_memory).
        if isinstance(entry := value.get("entrypoint"), str) and entry:
            request.entrypoint = sys.intern(entry)
        return request


def _message_record(value: dict, kind: object, message: dict) -> LoggedMessage:
    """The small record of a user or assistant entry's message (``message``, holding ``content``)."""
    # (the two tests of a file read, each made only where its key is there: most lines have neither)
    result = value.get("toolUseResult")
    tool = value.get("toolName")
    marks = (("file-read",) if (isinstance(result, dict) and "file" in result) or (tool and str(tool).lower() in READ_TOOLS)
             else ())
    return make_message(str(message.get("role") or kind), message["content"], marks)


def _line_record(value: object, path: str) -> LoggedMessage:
    """The record of the message a line of the transcript ``path`` read again holds (the format's
    ``message_of_line``: see :attr:`_Walk.message_of`)."""
    message = value.get("message") if isinstance(value, dict) else None
    kind = value.get("type") if isinstance(value, dict) else None
    if not ((kind == "user" or kind == "assistant") and isinstance(message, dict) and "content" in message):
        raise UserError(f"{path}: changed while it was audited (a line that held a message holds none now)")
    return _message_record(value, kind, message)  # type: ignore[arg-type]


def _streamed(value: dict) -> bool:
    """Whether ``value`` is a line of ``claude -p --output-format stream-json`` (the Agent SDK's
    message stream): ``session_id`` where a transcript has ``sessionId``, and no ``parentUuid``
    (a subagent's messages name the Task call they answer in ``parent_tool_use_id``)."""
    return "session_id" in value and "parentUuid" not in value and "sessionId" not in value


#: The counts of a call's usage: a line with none of them is no call.
_COUNTED = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
_ZERO_COPIED = "usage all zero: a response copied across a compaction, not a call of its own"
_ZERO_UNREPORTED = SENT_UNCOUNTED
#: The model iFlow CLI names on a slash command's printed output (an assistant message, no call).
_SLASH_COMMAND = "slash-command"
_SLASH_OUTPUT = "iFlow slash command's output (model slash-command), not an API call"


def _compacted(usage: dict) -> bool:
    """Whether ``usage.iterations`` holds a server-side compaction (the top level is then the
    message's alone, zero where the response paused after the compaction)."""
    steps = usage.get("iterations")
    return isinstance(steps, list) and any(isinstance(step, dict) and step.get("type") == "compaction" for step in steps)


def _tools_loaded(content: object) -> list[str]:
    """The deferred tools a tool result loads: ToolSearch answers with ``tool_reference`` blocks,
    which the API expands into those tools' definitions: the tool list the next request is read
    against changed (Anthropic's diagnostic says ``tools_changed`` of a read that fell after one)."""
    if not isinstance(content, list):
        return []
    names: list[str] = []
    for block in content:
        inner = block.get("content") if isinstance(block, dict) and block.get("type") == "tool_result" else None
        if isinstance(inner, list):
            names += [str(item.get("tool_name") or "?") for item in inner
                      if isinstance(item, dict) and item.get("type") == "tool_reference"]
    return names


#: ``system`` entries Claude Code shows and never sends (2.1: a failed attempt's retry notice, the
#: turn's timing, a Stop hook's summary).
_UNSENT_SYSTEM = frozenset({"api_error", "turn_duration", "stop_hook_summary"})

#: ``attachment`` entries that are no block of the messages a call sends: 2.1.263's
#: ``prompt_snapshot`` keeps the system prompt and tool list the next call goes out with (its
#: ``system`` and ``tools``), where the attachments sent as reminders carry ``rendered`` text.
_UNSENT_ATTACHMENTS = frozenset({"prompt_snapshot"})


def _snapshot_parts(snapshot: dict) -> tuple[tuple[str, ...] | None, dict[str, str] | None]:
    """A ``prompt_snapshot``'s system blocks (``systemPrompt``: a list of texts) and its tools (name
    -> the definition sent, as JSON text), each None when the snapshot does not hold it. 2.1.263
    writes a tool as ``{"name", "description", "schema"}``, where ``schema`` is the definition sent
    (``name``, ``description``, ``input_schema``); a tool without ``schema`` is taken whole."""
    blocks = snapshot.get("systemPrompt")
    system = None
    if isinstance(blocks, list):
        system = tuple(block if isinstance(block, str) else _json_text(block) for block in blocks)
    elif isinstance(blocks, str):
        system = (blocks,)
    listed = snapshot.get("tools")
    tools = None
    if isinstance(listed, list):
        tools = {}
        for i, tool in enumerate(listed):
            tool = as_dict(tool)
            sent = tool.get("schema") if isinstance(tool.get("schema"), dict) else tool
            tools[str(tool.get("name") or f"#{i + 1}")] = _json_text(sent)
    return system, tools


def _json_text(value: object) -> str:
    """``value`` as JSON text, to compare: msgspec's, but ``json.dumps``'s for a value holding a
    lone surrogate (valid JSON a line may hold, read by ``json.loads``; msgspec refuses to encode it)."""
    try:
        return msgspec.json.encode(value).decode()
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def snapshot_tokens(texts: Iterable[str]) -> int:
    """Tokens of a snapshot's texts, estimated as a logged message's are (:data:`CHARS_PER_TOKEN`)."""
    return sum(len(text) for text in texts) // CHARS_PER_TOKEN


def snapshot_diff(
    before_system: tuple[str, ...] | None, before_tools: dict[str, str] | None,
    system: tuple[str, ...] | None, tools: dict[str, str] | None,
) -> list[tuple[str, str]]:
    """What a prompt snapshot shows against its lane's previous one: ``snapshot_system_change``
    and ``snapshot_tools_change`` (with what changed) for the parts that differ, ``snapshot_same``
    when the system prompt and the tools both compare equal; nothing for a part one of the two does
    not hold (a lane's first snapshot; 2.1.263's first row of a session lists no tools)."""
    events: list[tuple[str, str]] = []
    same = 0
    if before_system is not None and system is not None:
        if before_system == system:
            same += 1
        else:
            changed = sum(1 for a, b in zip(before_system, system) if a != b) + abs(len(system) - len(before_system))
            events.append(("snapshot_system_change", (
                f"{changed} of {max(len(system), len(before_system))} blocks differ, ~{snapshot_tokens(before_system):,} -> "
                f"~{snapshot_tokens(system):,} tokens")))
    if before_tools is not None and tools is not None:
        if before_tools == tools:
            same += 1
        else:
            added = sorted(set(tools) - set(before_tools))
            removed = sorted(set(before_tools) - set(tools))
            redefined = sorted(name for name in set(tools) & set(before_tools) if tools[name] != before_tools[name])
            parts = [f"+{name}" for name in added] + [f"-{name}" for name in removed] + [f"~{name}" for name in redefined]
            events.append(("snapshot_tools_change", " ".join(parts)))
    if same == 2:
        events.append(("snapshot_same", ""))
    return events


#: What Claude Code logs (a user entry of the chain) when the user sets the model with /model.
MODEL_SET = "<local-command-stdout>Set model to"


def _snapshot_events(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The snapshot events of one request's path, in order: its changes, each once; or one
    ``snapshot_same`` when every snapshot on it compared equal to the one before. A /model on the
    path (``model_chosen``) is said first, once, and is no snapshot."""
    if not found:  # (nearly every request's path: none)
        return []
    chosen = [("model_chosen", "")] if ("model_chosen", "") in found else []
    if chosen:
        found = [event for event in found if event[0] != "model_chosen"]
    changes = list(dict.fromkeys(event for event in found if event[0] != "snapshot_same"))
    if changes:
        return chosen + changes
    return chosen + ([("snapshot_same", "")] if found else [])


def _sent(value: dict) -> int:
    """1 for an entry of the chain that the next prompt sends as a block, 0 for one that sits in
    the chain unsent: a progress entry, a ``system`` notice of :data:`_UNSENT_SYSTEM`, an
    attachment of :data:`_UNSENT_ATTACHMENTS`, and the ``<synthetic>`` reply saying the API failed
    (``isApiErrorMessage``)."""
    kind = value.get("type")
    if kind == "progress" or value.get("isApiErrorMessage") is True:
        return 0
    # (a message entry, nearly every one, is sent: the attachment and the subtype are read only
    # for the kinds they decide)
    if kind == "attachment":
        attached = as_dict(value.get("attachment")).get("type")
        return 0 if isinstance(attached, str) and attached in _UNSENT_ATTACHMENTS else 1  # a list: no set member
    if kind == "system":
        subtype = value.get("subtype")
        return 0 if isinstance(subtype, str) and subtype in _UNSENT_SYSTEM else 1
    return 1


def _is_user_turn(value: dict, message: dict) -> bool:
    """A message the user typed: not meta, not tool results, not a compaction summary."""
    if value.get("type") != "user" or value.get("isMeta"):
        return False
    content = message.get("content")
    is_tool = isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return not is_tool and not value.get("isCompactSummary")


def _position(line: int, path: str) -> tuple[int, int]:
    """Where a record is in its file, in file order: its line, then its place among the records
    sharing that line (:attr:`Record.path`: ``record[1]``, ``[57]``; ``""`` alone on its line)."""
    inside = path.rpartition("[")[2].rstrip("]")
    return line, int(inside) if inside.isdigit() else -1


def _agent_type(path: Path) -> str | None:
    """The ``agentType`` of the ``<stem>.meta.json`` beside a subagent's transcript (Claude Code
    writes one beside each subagent file, seen from 2.1.78: ``{"agentType": "Explore", ...}``), or
    None where there is no such file, it cannot be read, or it names no type (a string)."""
    try:
        meta = json.loads(path.with_name(f"{path.stem}.meta.json").read_bytes())
    except (OSError, ValueError):
        return None
    kind = meta.get("agentType") if isinstance(meta, dict) else None
    return sys.intern(kind) if isinstance(kind, str) and kind else None


def _mid_stream(message: dict) -> bool:
    """Whether an assistant line was written before its response ended: ``stop_reason`` there
    and null (2.x writes a line per content block as the block ends; the response's end, with
    its final output count, comes with ``stop_reason``, and some versions never write it)."""
    return "stop_reason" in message and message["stop_reason"] is None


#: Beside a request id in :attr:`ImportContext.counted_ids`, as ``(_MID_STREAM, id)``: the file
#: that counted it had its last line written mid-stream (:func:`_mid_stream`), so a later file's
#: complete copy of the same response gives its final usage. A tuple of the id itself, not a string
#: made of the mark and the id (56 bytes against about 110, for almost every request of a Claude
#: Code 2.x transcript, held to the end of the reading; no request id equals it).
_MID_STREAM = "written mid-stream"

#: Why a fork subagent's restatement of its parent's message is no call of its transcript.
#: Claude Code 2.1.232 made forking the default (``subagent_type: "fork"``: the subagent inherits
#: the conversation and its prompt cache); the fork's transcript opens with a ``fork-context-ref``
#: entry (``parentSessionId``, ``parentLastUuid``, no uuid) and the parent's message holding the
#: ``Agent`` call (the same request id and usage, a new uuid), then a user message of a placeholder
#: result per tool call and the fork's directive (``<fork-boilerplate>``), then the fork's own calls.
_RESTATED = "the parent's call a fork subagent's transcript restates (fork-context-ref): counted in the parent's transcript"
#: Why a forked session's copy of its source session's call is no call of its transcript. ``/branch``
#: (``/fork`` before 2.1.77 made it an alias) writes the conversation into a new ``<id>.jsonl`` of
#: the same project folder, every entry with its uuid and request id kept, ``sessionId`` the new
#: session's, ``parentUuid`` rebuilt as a chain, and ``forkedFrom {sessionId, messageUuid}``; the
#: Agent SDK's ``forkSession()`` writes the same with new uuids (``messageUuid`` the original's).
#: ``--resume --fork-session`` (and ``/fork``'s background session from 2.1.212, launched that way)
#: copies the entries with their uuids and no ``forkedFrom``: those are counted once, wherever seen
#: first, their uuids linking the fork's first call.
_COPIED = ("the source session's call a forked session's transcript copies (forkedFrom): counted in that session's "
           "transcript")
#: Why an assistant entry whose ``requestSessionId`` names another session is no call of this
#: transcript. From 2.1.326 (the npm package's linux-x64 binary: 2.1.325 has no such field)
#: Claude Code writes ``requestSessionId`` on an assistant entry it copies from another session's
#: transcript (``--resume --fork-session``, a resumed session's history, ``/branch`` beside
#: ``forkedFrom``): the session whose request it was, kept through copies of copies. The entries
#: of a session's own calls carry none. Such a copy is the source's call, as a ``forkedFrom`` one is.
_REQUESTED_ELSEWHERE = ("another session's call this transcript copies (requestSessionId, Claude Code 2.1.326 on): counted "
                        "in that session's transcript")


def _requested_elsewhere(value: dict) -> bool:
    """Whether an assistant entry names (``requestSessionId``) a session other than its own as
    the one that sent its request: a copy of that session's call (:data:`_REQUESTED_ELSEWHERE`)."""
    source = value.get("requestSessionId")
    return isinstance(source, str) and bool(source) and source != value.get("sessionId")


def _fresh(walk: _Walk, seen_requests: set[str]) -> list[_Request]:
    """The file's requests in first-line order, less those an earlier file counted (skipped).
    A skipped copy of a call counted from a line written mid-stream gives its usage
    (:attr:`_Walk.final`): the response's end, or a later line of it, taken where it has more output."""
    fresh = []
    for req in sorted(walk.requests.values(), key=lambda r: r.first_seq):
        if req.key in walk.restated or req.key in walk.copied or req.key in seen_requests:
            walk.copy_lines.append((req.key, req.last_line))
        if req.key in walk.restated or req.key in walk.copied:
            # Asked of no earlier file, added to none: the parent's transcript counts it, before or after.
            walk.skipped.append((req.last_line, _RESTATED if req.key in walk.restated
                                 else _REQUESTED_ELSEWHERE if req.key in walk.requested_elsewhere else _COPIED))
        elif req.key not in seen_requests:
            fresh.append(req)
        elif (_MID_STREAM, req.key) in seen_requests:
            # This copy's last line may be mid-stream too (2.1.49-2.1.55, seen, write stop_reason null on
            # almost every line): its usage is still taken where it is the same prompt with more output.
            walk.final.append(req)
            walk.skipped.append((req.last_line, "request already counted in another file from a line written mid-stream: "
                                                + ("this copy, written mid-stream too, gives its usage" if req.key in walk.mid_stream
                                                   else "this copy's final usage is taken")
                                                + " where it is the same prompt with more output"))
        else:
            walk.skipped.append((req.last_line, "request already counted in another file (resumed or forked session)"))
    seen_requests.update(req.key for req in fresh)
    seen_requests.update((_MID_STREAM, req.key) for req in fresh if req.key in walk.mid_stream)
    return fresh


def _trace_request(walk: _Walk, seq: int, req: _Request) -> TraceRequest:
    provider, usage = _provider_usage(req.model, req.usage, f"{walk.name}:{req.last_line}")
    relayed = provider == ANTHROPIC.name and req.model in walk.relayed
    if relayed:
        provider = UNKNOWN.name
    # A call still read as Anthropic's whose message id no maker writes went through a relay the
    # transcript does not name: Anthropic's rules and list price, the relay said (TraceRequest.relay).
    relay = UNNAMED_RELAY if provider == ANTHROPIC.name and req.key in walk.foreign_ids else ""
    if relay:
        walk.foreign_shapes.setdefault(req.model, set()).add(walk.foreign_ids[req.key])
    if req.model in walk.unwritten and usage.cache_reported:
        usage = replace(usage, writes_reported=False)
    # The strings every request of a model repeats are one object each (the trace holds every
    # request of every file until the audit ends): interned.
    model, version = sys.intern(req.model), None if req.version is None else sys.intern(req.version)
    head_kind = "main" if req.lane_kind in ("main", "compaction") else "subagent"
    # A subagent's head is its session's: the tools it is sent are the session's (the MCP servers
    # it started with), and they can be most of it (IDAHO-VAULT's Haiku subagents: 72k to 178k
    # tokens from session to session, each session's agents reading the same after a compaction).
    # The main thread's head stays shared across sessions: a session's first call reads the one
    # another session kept warm. It is one per client (``entrypoint``): the system prompt differs
    # from one to the next, and its first block names it (``cc_entrypoint``): IDAHO-VAULT's
    # Sonnet 4.6 sessions of Claude Code 2.1.87 read 7,255 tokens at lane starts from the desktop
    # app, 11,245 from the terminal and 11,189 from the VS Code extension.
    head = f"claude-code:{head_kind}:{model}:{version or '?'}"
    if head_kind == "main" and req.entrypoint is not None:
        head = f"{head}:{req.entrypoint}"
    if head_kind == "subagent" and req.session is not None:
        head = f"{head}:{req.session}"
    # And one per subagent type: its system prompt is its agent definition's, and its tools can be
    # a subset of the session's. Xu-Wentao/dotfile's session e1dfbe01 (2.1.87, Sonnet 4.6): its 8
    # oh-my-claudecode:executor agents read 9,059 tokens at their starts (5 of the 6 that read),
    # its 6 superpowers:code-reviewer agents 6,763 or 7,758, never 9,059.
    if head_kind == "subagent" and walk.agent_type is not None:
        head = f"{head}:{walk.agent_type}"
    # (named as that request names its own node: a response no logged entry prompted, a
    # stream-json run's first, is its own key)
    above = walk.requests.get(req.parent_request) if req.parent_request is not None else None
    if above is None:
        parent = None
        _name_start(walk, req)
    elif above.key in walk.restated or above.key in walk.copied:
        # A fork's first call extends the parent's call that spawned it (a fork subagent's) or the
        # last call of the history it copied (a forked session's), known here by its id alone.
        parent = sys.intern(call_parent(above.key))
        walk.linked.add(above.key)
    else:
        # A lane start this file holds but does not count (a resumed session's copy of the history
        # it resumes, counted in the file that first sent it) is named by content here too: the
        # call extending it names the node the counting file's start has, not a node none has.
        if above.parent_request is None or above.parent_request not in walk.requests:
            _name_start(walk, above)
        parent = walk.node_name(above.node or above.key)
    shared = _kept_before_thinking(walk, req) if parent is not None else None
    request = TraceRequest(
        file=walk.name,
        line=req.last_line,
        path=req.last_path,
        lane=req.lane,
        lane_kind=req.lane_kind,  # type: ignore[arg-type]
        seq=seq,
        sent_ms=req.sent_ms,
        ready_ms=req.ready_ms,
        provider=provider,
        model=model,
        usage=usage,
        prefix=(OutputWritten if _reply_written_after(req) else Prefix)(
            head=sys.intern(head),
            node=walk.node_name(req.node or req.key),
            parent=parent,
            new_blocks=req.new_blocks,
            replays_output=_replays_output(provider, model),
            shared=shared,
        ),
        events=_shared_events(tuple(req.events)),
        diagnostic=req.diagnostic,
        request_id=req.key,
        agent_version=version,
        source_format=NAME,
        compaction_call=req.lane_kind == "compaction",
        messages=req.messages,
    )
    # Set apart, not as a keyword of every request: measured, the keyword alone (even False)
    # made each request's trace 200 bytes larger (tests/unit/audit/test_audit_memory.py).
    if relay:
        request = replace(request, relay=relay)
    return replace(request, provider_by_model=True) if relayed or _served_by_model(model) else request


def _name_start(walk: _Walk, req: _Request) -> None:
    """Name the node of ``req``, a lane's first call, by what it sends (:func:`_start_node`),
    unless its node is named already."""
    if req.node is not None and req.node not in walk.node_names and req.lane_kind in ("main", "subagent"):
        start = _start_node(walk, req)
        if start is not None:
            walk.node_names[req.node] = start


def _start_node(walk: _Walk, req: _Request) -> str | None:
    """The node of a lane's first call whose prompt is its conversation's first message alone,
    named by what it sends, so that two sessions sending the same prompt name one node: the
    agent's version, the lane's kind, the home (the folder above ``projects/``), the project
    folder (a subagent's file in ``<session>/`` or ``<session>/subagents/`` is of its session's
    folder, :func:`~prefixbench.workloads.logs.claude_layout.project_folder`), a digest of the message's content and
    the prompt's size as reported (Claude Code's system prompt and first message carry parts the
    transcript leaves out, the git status and the date among them: the same size is what tells
    those parts unchanged). None where the prompt ends at no first message (an entry before it)."""
    digest = walk.root_digest.get(req.node or "")
    if digest is None:
        return None
    file = Path(walk.name)
    project = project_folder(file)
    # (the home, the folder above ``projects/``: two homes' same-named folders are two machines'
    # or accounts', which share no cache)
    home = project.parent.parent
    return sys.intern(f"{BY_CONTENT}cc-start:{home}:{req.version or '?'}:{req.lane_kind}:{project.name}:{digest}:"
                      f"{_prompt_tokens(req.usage)}")


def relayed_call(r: TraceRequest) -> bool:
    """Whether this reader took ``r``'s provider from its model's cache writes, unsplit by TTL (a
    relay's: :func:`_find_relayed`), not from its name, which is a Claude model's."""
    return r.source_format == NAME and r.provider == UNKNOWN.name and ANTHROPIC.names_model(r.model)


def _ttl_split(usage: dict) -> tuple[int, bool] | None:
    """The writes a response reports (``cache_creation_input_tokens`` above 0) and whether its
    ``cache_creation`` splits them by TTL (5-minute and 1-hour writes summing above 0) or not
    (both 0); None where it reports no writes or no such split. Anthropic's API splits every write
    it reports (all calls of the public Anthropic homes the realdata tests read); a relay that
    copies the usage's keys does not (a reseller's claude-opus-4-8 read 13k of a 43k prompt, its
    uncached part steady at ~30k)."""
    written = usage.get("cache_creation_input_tokens")
    split = usage.get("cache_creation")
    if type(written) is not int or written <= 0 or not isinstance(split, dict):
        return None
    parts = [split.get(key) for key in ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")]
    if not all(type(part) is int for part in parts):
        return None
    return written, sum(parts) > 0  # type: ignore[arg-type]


#: The share of its prompt a call with unsplit writes must leave uncached for those writes to
#: mark a relay (:func:`_find_relayed`). Claude Code puts a cache breakpoint on the last message, so
#: where Anthropic's cache serves a call (its API, Bedrock, Vertex AI, or a gateway in front of them)
#: little of the prompt is left uncached: at most 16%, and under 2% in 99 of 100, over the 8,257
#: logged lines of calls with writes in 27 public repositories' Claude Code logs (Anthropic's,
#: Bedrock's and Vertex AI's message ids among them).
#: The reseller's relay left 40% to 100% in the call of each file that showed it.
_RELAY_UNCACHED = 0.25


#: The ``message.id`` shapes no maker of Claude's API writes, each with the words the file's note
#: gives it. Anthropic's API writes ``msg_`` and 24 base62 characters (``msg_01...``; every Claude
#: Code call of ../shared/realdata and of the public homes the realdata tests read), Bedrock
#: ``msg_bdrk_`` and Vertex ``msg_vrtx_`` and the same.
#:
#: * ``msg_`` and hex digits alone, 16 or more: 22 random base62 characters all hex digits would
#:   come about once in 10**13. Seen: austinweitao/claude-backup's claude-fable-5 and
#:   claude-opus-4.8 (``msg_`` + 16 hex), aistrad/work's claude-opus-4-5 (``msg_`` + 32 hex).
#: * ``msg_`` and a UUID (dashes are no base62 character): aistrad/work's vibelife project.
#: * An OpenAI chat completion's id, ``chatcmpl-...``, alone or after ``msg_``: what a gateway
#:   answering the Messages API from an OpenAI-compatible upstream writes (new-api's and LiteLLM's
#:   converters keep the upstream's id, one-api forks prefix it with ``msg_``). Seen:
#:   xfs96192/claude-config's claude-sonnet-4-5 and -haiku-4-5 (``chatcmpl-`` + 24 hex).
#:
#: A bare UUID is not one of them: K3RN-LABS/k3rn.labs logs UUID ids on calls whose ``requestId``
#: is Anthropic's (``req_011C...``) and whose usage is its API's, one UUID per content block, so
#: something on the user's side wrote them, not a relay; Claude Code's own placeholder messages
#: (model ``<synthetic>``) carry UUIDs too.
_FOREIGN_IDS = (
    (re.compile(r"msg_[0-9a-f]{16,}\Z"), "msg_ and hex digits alone"),
    (re.compile(r"msg_[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z"), "msg_ and a UUID"),
    (re.compile(r"(?:msg_)?chatcmpl-[0-9A-Za-z_-]{8,}\Z"), "an OpenAI chat completion's id (chatcmpl-...)"),
)


def _foreign_shape(ident: str) -> str:
    """The words of :data:`_FOREIGN_IDS` for a message id no maker writes; "" for any other."""
    return next((words for shape, words in _FOREIGN_IDS if shape.match(ident)), "")


def _left_uncached(usage: dict, written: int) -> bool:
    """Whether a call left more than :data:`_RELAY_UNCACHED` of its prompt uncached."""
    uncached, read = usage.get("input_tokens"), usage.get("cache_read_input_tokens")
    uncached = uncached if type(uncached) is int and uncached > 0 else 0
    read = read if type(read) is int and read > 0 else 0
    return uncached > _RELAY_UNCACHED * (uncached + read + written)


def _find_relayed(walk: _Walk) -> None:
    """Mark the Claude models a relay served in this file: those whose every call that reports
    writes in the file leaves them unsplit by TTL (:func:`_ttl_split`), one of them at least
    leaving much of its prompt uncached (:func:`_left_uncached`). Every call of such a model in
    the file is then the relay's, not Anthropic's (a provider unknown), whatever its own usage
    shows. Unsplit writes alone do not tell: a gateway or cloud endpoint in front of Anthropic's
    cache may drop the split (Claude Code then logs 0 + 0), its reads still covering the prompt;
    and a file whose other calls of the model split their writes as Anthropic's API does is mixed
    evidence. Such a model stays Anthropic's, and :attr:`_Walk.unsplit_kept` keeps the evidence
    for a note."""
    unsplit: dict[str, tuple[int, int]] = {}
    uncached: set[str] = set()
    split: Counter[str] = Counter()
    for req in walk.requests.values():
        if _transcript_rules(req.model)[0] != ANTHROPIC.name:
            continue
        writes = _ttl_split(req.usage)
        if writes is None:
            continue
        written, by_ttl = writes
        if by_ttl:
            split[req.model] += 1
            continue
        tokens, calls = unsplit.get(req.model, (0, 0))
        unsplit[req.model] = (tokens + written, calls + 1)
        if _left_uncached(req.usage, written):
            uncached.add(req.model)
    walk.relayed = {model: seen for model, seen in unsplit.items() if model in uncached and not split[model]}
    walk.unsplit_kept = {model: (*seen, split[model], model in uncached)
                         for model, seen in unsplit.items() if model not in walk.relayed}


#: How many of a model's calls in a file must read more than every earlier call of it there read,
#: none reporting a write, for its writes to be taken as not reported (:func:`_find_unwritten`).
_UNWRITTEN_GROWTH = 2


def _find_unwritten(walk: _Walk) -> None:
    """Mark the Claude models whose writes this file's usage does not report: every call of the
    model here that reports its cache use gives ``cache_creation_input_tokens`` 0, yet at least
    :data:`_UNWRITTEN_GROWTH` of them read more than any earlier call of it here read. A cache
    serves only what was written, so those reads grew by writes the usage left out: a proxy in
    front of the cache that zeroes the field. github.com/Damon-Salvetore/claude-code (Claude Code
    2.1.63, ``ANTHROPIC_BASE_URL=http://localhost:4141``, the default port of the copilot-api
    proxies that serve GitHub Copilot's models, named ``claude-opus-4.6-1m``): none of its 772
    calls reports a write, 43.2M tokens read; taken as 0, 450 reads were predicted within 3%, taken
    as not reported (761 calls, in the 28 of its 49 files where reads grew), 638. Such calls' writes
    are unknown, not 0: what the next call may read is the whole prompt
    (:attr:`~prefixbench.simulator.usage.Usage.writes_reported`). A first read (a lane start
    reading a head another file wrote) shows nothing."""
    most: dict[str, int] = {}
    grew: Counter[str] = Counter()
    reporting: Counter[str] = Counter()
    wrote: set[str] = set()
    for req in walk.requests.values():
        usage = req.usage
        if _transcript_rules(req.model)[0] != ANTHROPIC.name or not isinstance(usage, dict):
            continue
        written, read = usage.get("cache_creation_input_tokens"), usage.get("cache_read_input_tokens")
        if type(written) is not int or type(read) is not int:
            continue
        reporting[req.model] += 1
        if written:
            wrote.add(req.model)
        before = most.get(req.model, 0)
        if before and read > before:
            grew[req.model] += 1
        most[req.model] = max(before, read)
    walk.unwritten = {model: (reporting[model], count) for model, count in grew.items()
                      if count >= _UNWRITTEN_GROWTH and model not in wrote}


#: Providers a transcript's calls reach whose cache keeps each reply (``caches_output``) and to
#: which Claude Code sends a response back whole, thinking included, in the next call of its chain:
#: DeepSeek's Anthropic-compatible endpoint, as the OpenCode, Cline and pi readers have it. On a
#: public home (olivia215215/cabinet-governance, 2026-05, Claude Code 2.1.117-2.1.138,
#: deepseek-v4-flash / -pro) a read reached into the previous call's reply (8,960 after a
#: prompt of 8,886 and a reply of 200: the last 128-token unit of both).
_REPLAYS_OUTPUT = frozenset({"deepseek"})
#: Z.AI's models whose reads were seen to reach into the reply Claude Code sends back, as
#: (provider, model pattern). On a public home (aistrad/work, 2025-12/2026-01, Claude Code
#: 2.0.74-2.1.1 through claude-code-router, glm-4.7) 153 of 228 follow-ups read the previous prompt
#: and its reply, 42 the previous prompt alone (a reply too short to move a read reads the same):
#: 217 -> 225 of 292 within 3% (the reads themselves were multiples of 128; the model reads
#: glm-4.x to the token, zai.py). Not glm-5: zai.py's own follow-ups stopped at the previous
#: prompt (OpenCode 39 of 41, GJC 522), and the 10 glm-5 / 5.1 / 5-turbo calls of Claude Code at
#: hand (Xu-Wentao/dotfile, the committed sessions) read the same either way (3 within 3%).
_REPLAYS_OUTPUT_BY_MODEL: tuple[tuple[str, str], ...] = (("zai", r"(?i)\bglm-4"),)


def _replays_output(provider: str, model: str) -> bool:
    """Whether ``provider`` is taken to read into the reply Claude Code sends back on ``model``."""
    return provider in _REPLAYS_OUTPUT or any(
        provider == name and re.search(pattern, model) for name, pattern in _REPLAYS_OUTPUT_BY_MODEL)

#: Content blocks of a response that are its thinking.
_THINKING = ("thinking", "redacted_thinking")


def _prompt_tokens(usage: dict) -> int:
    """A call's whole prompt as its transcript line counts it (uncached, read and written)."""
    return sum(v for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
               if isinstance(v := usage.get(k), int) and not isinstance(v, bool))


#: The first Claude Code release seen keeping earlier turns' thinking at a new user turn on a model
#: whose API drops it there (:func:`_kept_before_thinking`): github.com/Eduardodmb/ClaudeHome
#: (2.1.119-2.1.136, 2026-04/05), claude-sonnet-4-5-20250929 in 12 transcripts: 110 calls that start
#: a user turn after a turn that thought read the previous call's whole prompt (within 8 tokens), none
#: stopped at the first thinking block. 2.1.81-2.1.111 dropped it (LAF-US/IDAHO-VAULT's Haiku 4.5
#: turns); 2.1.112-2.1.118 unmeasured, taken to drop it as before.
_THINKING_KEPT_FROM = (2, 1, 119)


@lru_cache(maxsize=64)  # once a release, not once a request
def _thinking_kept(version: str) -> bool:
    """Whether Claude Code ``version`` keeps earlier turns' thinking (:data:`_THINKING_KEPT_FROM`)."""
    release = _RELEASE.match(version)
    return release is not None and tuple(map(int, release.groups())) >= _THINKING_KEPT_FROM


def _kept_before_thinking(walk: _Walk, req: _Request) -> int | None:
    """Of the previous call's prompt, the tokens a new user turn keeps on a model that drops
    earlier turns' thinking then (:func:`~prefixbench.workloads.logs.formats.common.kept_before_thinking`),
    counted from its transcript line; None where nothing is dropped, as from Claude Code 2.1.119
    on (:data:`_THINKING_KEPT_FROM`: the turns' thinking stays in the prompt, so the cache goes on
    past it; most likely the client asks the API to keep it, which the transcript does not show)."""
    if req.version is not None and _thinking_kept(req.version):
        return None
    new_turn = any(kind == "user_turn" for kind, _ in req.events)
    first = kept_before_thinking(_transcript_rules(req.model)[1], req.model, new_turn, _calls_above(walk, req))
    return None if first is None else _prompt_tokens(first.usage)


def _calls_above(walk: _Walk, req: _Request) -> Iterator[tuple[str, bool, bool, _Request]]:
    """The calls ``req``'s chain extends, newest first, as
    :func:`~prefixbench.workloads.logs.formats.common.kept_before_thinking` reads them."""
    key = req.parent_request
    while key is not None and (above := walk.requests.get(key)) is not None:
        yield above.model, key in walk.thought, any(kind == "user_turn" for kind, _ in above.events), above
        key = above.parent_request


#: The first Claude Code release seen writing a main-thread turn's prompt and final reply in a call
#: of its own after the turn ends (none of the transcript's lines): 2.1.185 and 2.1.219 do, measured
#: (below); 2.1.177 and earlier do not (the public sessions of 2.1.152, 2.1.158 and 2.1.177: the next
#: turn read the previous prompt alone 11 times of 15, and fell below it 4 times); 2.1.178-2.1.184
#: unmeasured.
_REPLY_WRITTEN_FROM = (2, 1, 185)
#: The largest reply such a call was seen to write is 6,042 tokens; replies of 9,962 and 14,835
#: tokens were not (the next turn read the previous prompt alone): past this, none is assumed.
_REPLY_WRITTEN_MAX = 8_000
#: A release as Claude Code names it (``2.1.185``; ASCII digits, a longer number is none).
_RELEASE = re.compile(r"(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?!\d)", re.ASCII)


def _reply_written_after(req: _Request) -> bool:
    """Whether a call the transcript does not hold wrote this main-thread call's prompt and reply
    after the turn it ends, so that the next turn reads the reply too. Measured on two public
    sessions: after a turn that ended (``end_turn``), the next call inside the TTL read the previous
    prompt plus exactly its output (to 3 tokens) 21 times of 26 on 2.1.185
    (akshatairan47-dot/pv-case-review, fitted; two more read the prompt alone after replies of 9,962
    and 14,835 tokens, three fell to the head) and 15 of 15 on 2.1.219
    (shastrysamarth/01-campaign-audit, confirmed)."""
    if not req.ended_turn or req.lane_kind != "main" or req.version is None:
        return False
    release = _RELEASE.match(req.version)
    output = req.usage.get("output_tokens")
    return (release is not None and tuple(map(int, release.groups())) >= _REPLY_WRITTEN_FROM
            and type(output) is int and 0 < output <= _REPLY_WRITTEN_MAX)


def _summarizing_from(walk: _Walk) -> dict[str, int]:
    """For each compaction lane of the file, where its summarization starts: the ``first_seq`` of
    the call answering the lane's last prompt the user side sent (a user turn: Claude Code's
    instruction to summarize). An ``agent-acompact-*`` file of 2.1.71-2.1.72 (seen) holds a whole
    conversation before that instruction (opening with "This session is being continued from a
    previous conversation", "Implement the following plan:" or a prompt typed after ``/clear``, then
    more user turns): the calls before it are that conversation's, not compaction calls."""
    last: dict[str, int] = {}
    for req in walk.requests.values():
        if req.lane_kind == "compaction" and any(kind == "user_turn" for kind, _ in req.events):
            last[req.lane] = max(last.get(req.lane, -1), req.first_seq)
    return last


def _server_calls(walk: _Walk, req: _Request) -> ServerCalls:
    """The calls of their own in a response's ``usage.iterations``: a compaction read as the
    response's model's, an advisor call as its advisor model's (:func:`_provider_usage`)."""
    def read(step: Mapping[str, object], where: str, model: str) -> Usage:
        return _transcript_rules(model or req.model)[1].read_usage(step, where)

    return server_calls(req.usage, f"{walk.name}:{req.last_line}", read)


def _with_server_compactions(walk: _Walk, request: TraceRequest, req: _Request, calls: ServerCalls) -> list[TraceRequest]:
    """A response whose ``usage.iterations`` holds server-side compaction samplings (Anthropic's
    compaction beta): each is a compaction call of its own, before the response's, sending the
    conversation the request extends; the top-level usage is the message's alone, whose prompt
    is the compacted context (a new chain). Without such an iteration, the request as it is."""
    if not calls.compacted:
        return [request]
    walk.skipped.extend((req.last_line, why) for why in calls.compaction_skips)
    out = []
    for step in calls.compactions:
        out.append(msgspec.structs.replace(
            request,
            seq=request.seq + len(out),
            usage=step.usage,
            prefix=msgspec.structs.replace(request.prefix, node=f"{request.prefix.node}#server-compaction{step.index}"),
            compaction_call=True,
        ))
    message = msgspec.structs.replace(
        request,
        seq=request.seq + len(out),
        prefix=msgspec.structs.replace(request.prefix, parent=None),
        events=_shared_events((calls.compaction_event, *request.events)),
        messages=(),
    )
    if request.usage is not None and request.usage.is_empty:  # paused after the compaction: no message sampled
        walk.skipped.append((req.last_line, "response paused after a server-side compaction: no message sampled"))
        return out
    return [*out, message]


def _advisor_calls(
    walk: _Walk, request: TraceRequest, req: _Request, calls: ServerCalls, seq: int, advisors: dict[str, tuple[str | None, int]],
) -> list[TraceRequest]:
    """A response whose ``usage.iterations`` holds advisor samplings (the advisor tool; Claude
    Code's ``/advisor``): each is a call of the advisor model (the iteration's ``model``) over the
    conversation so far, its usage apart from the top level (the executor's alone). They go to an
    ``advisor`` lane of their own (the advisor's prompt is its own rendering of the transcript, under
    its own system prompt), each extending the lane's previous advisor call by the blocks the
    conversation gained since. ``advisors``: each advisor lane's last call and the blocks since."""
    lane = "advisor" if request.lane_kind in ("main", "compaction") else f"{request.lane}/advisor"
    parent, blocks = advisors.get(lane, (None, 0))
    blocks += request.prefix.new_blocks if request.prefix is not None else 1
    if not calls.advisors and not calls.advisor_skips:  # (nearly every response: no advisor consulted)
        advisors[lane] = (parent, blocks)
        return []
    walk.skipped.extend((req.last_line, why) for why in calls.advisor_skips)
    out: list[TraceRequest] = []
    for step in calls.advisors:
        model, usage = sys.intern(step.model), step.usage
        provider = _transcript_rules(model)[0]
        relayed = provider == ANTHROPIC.name and model in walk.relayed
        if relayed:
            provider = UNKNOWN.name
        node = f"{request.prefix.node if request.prefix is not None else req.key}#advisor{step.index}"
        call = TraceRequest(
            file=walk.name,
            line=req.last_line,
            path=req.last_path,
            lane=lane,
            lane_kind="side",
            seq=seq + len(out),
            sent_ms=request.sent_ms,
            ready_ms=request.ready_ms,
            provider=provider,
            model=model,
            usage=usage,
            prefix=Prefix(head=sys.intern(f"claude-code:advisor:{model}:{request.agent_version or '?'}"), node=node,
                          parent=parent, new_blocks=max(1, blocks)),
            request_id=f"{req.key}#advisor{step.index}",
            agent_version=request.agent_version,
            source_format=NAME,
        )
        out.append(replace(call, provider_by_model=True) if relayed or _served_by_model(model) else call)
        parent, blocks = node, 1  # the executor's reply to the advice, before the next advisor call
    advisors[lane] = (parent, blocks)
    return out


#: Every tuple of events met, as one object each (most requests carry one of a few: a user turn).
_EVENT_SETS: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}


def _shared_events(events: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return _EVENT_SETS.setdefault(events, events) if events else ()


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A transcript's requests; see the module doc.

    A request whose id an earlier file of the audit already counted (the history a resumed or
    forked session copies) is skipped, so it is counted once.
    """
    walk = _Walk(path)
    seen_any = False
    offer = walk.offer
    for record in records:  # each checked to be an object, as common.objects does (inlined: a step a line)
        if not isinstance(record.value, dict):
            raise UserError(f"{path}:{record.line}: expected a JSON object (a transcript entry)")
        seen_any = True
        offer(record)
    walk.flush()
    walk.placed()
    if not seen_any:
        raise UserError(f"{walk.name}:1: empty file, no transcript entries")
    _find_relayed(walk)
    _find_unwritten(walk)
    out: list[TraceRequest] = []
    paused: set[str] = set()  # nodes of responses paused after a server-side compaction
    advisors: dict[str, tuple[str | None, int]] = {}  # each advisor lane's last call, blocks since
    summarizing = _summarizing_from(walk)
    for req in _fresh(walk, ctx.counted_ids):
        if req.lane_kind == "compaction" and req.first_seq < summarizing.get(req.lane, -1):
            # The conversation the lane's summarization call summarizes, written into its file
            # too: main-thread calls, no compaction calls.
            req = msgspec.structs.replace(req, lane_kind="main")
        request = _trace_request(walk, len(out), req)
        if request.prefix is not None and request.prefix.parent in paused:
            # The request after a pause sends the compaction's summary in place of what it
            # summarized: a new chain.
            request = msgspec.structs.replace(
                request,
                prefix=msgspec.structs.replace(request.prefix, parent=None),
                events=_shared_events((("compaction", "after a response paused at a server-side compaction"), *request.events)),
            )
        iterations = _server_calls(walk, req)
        calls = _with_server_compactions(walk, request, req, iterations)
        if (iterations.compacted and request.prefix is not None
                and (not calls or calls[-1].prefix is None or calls[-1].prefix.node != request.prefix.node)):
            # The response paused after its server-side compaction: no message of its own was
            # sampled (only the compaction calls are left). Asked of the calls, not of whether the
            # last is a compaction call: a compaction lane's message is one too, and pauses nothing.
            paused.add(request.prefix.node)
        out.extend(calls)
        out.extend(_advisor_calls(walk, request, req, iterations, len(out), advisors))
    notes: tuple[str, ...] = (
        "system prompt and tools are not in a transcript: each lane's head is an opaque prefix sized from reported reads"
        if not walk.snapshot_rows else
        "system prompt and tools are not in a transcript's messages: each lane's head is an opaque prefix sized from "
        f"reported reads; its {walk.snapshot_rows:,} prompt_snapshot row(s), which hold them, are compared row to row "
        "to tell a change of the head, not to size it",
    )
    if walk.request_rows_read:
        notes += (f"{walk.request_rows_read:,} call(s) whose api-request row and the one it extends are both in the file: "
                  "what changed since (system prompt, tools, the first changed message) is read from the rows, not "
                  "inferred; the head is still sized from reported reads",)
    for model, calls in sorted(Counter(r.model for r in out if r.relay == UNNAMED_RELAY).items()):
        # The evidence the relay rests on, said: the transcript keeps no endpoint.
        shapes = " or ".join(sorted(walk.foreign_shapes.get(model, ())))
        notes += (f"{model}: {calls:,} call(s) here read as through a relay the transcript does not name, under "
                  f"Anthropic's rules and list price: their message ids are {shapes}, which neither "
                  "Anthropic's API (msg_ and 24 base62 characters), Bedrock (msg_bdrk_) nor Vertex (msg_vrtx_) writes, "
                  "so something between Claude Code and the model re-id'd the responses (ANTHROPIC_BASE_URL pointed at a "
                  "relay or gateway)",)
    written = sum(r.prefix is not None and r.prefix.output_written for r in out)
    if written:
        # An assumption the predictions rest on: said, as the audit says every one.
        notes += (f"{written:,} main-thread turn(s) that ended on Claude Code 2.1.185 or later: the next call is predicted to "
                  "read the turn's reply too, which a call of Claude Code's own, not in the transcript, wrote after the turn "
                  f"(measured on two public sessions; replies up to {_REPLY_WRITTEN_MAX:,} tokens)",)
    for model, (calls, grew) in sorted(walk.unwritten.items()):
        notes += (f"{model}: its writes read as not reported, not 0: all {calls:,} of its call(s) here that report their "
                  f"cache use give cache_creation_input_tokens 0, yet {grew:,} read more than every earlier one read (a "
                  "cache serves only what was written): most likely a proxy in front of the cache that zeroes the field "
                  "(copilot-api for GitHub Copilot's models, say); each call is taken to leave its whole prompt readable",)
    for model, (tokens, calls) in sorted(walk.relayed.items()):
        # The evidence the provider rests on, said: the transcript keeps no endpoint. The option
        # is applied after the reader: the assumed: note says whether it set another provider.
        notes += (f"{model} read as an unknown provider's, not Anthropic's, unless --assume-provider set another (the "
                  f"assumed: note says): all {calls:,} of its call(s) here that reported cache writes ({tokens:,} tokens) "
                  "split none of them by TTL (cache_creation 0), which Anthropic's API does for every write, and one at "
                  f"least left more than {_RELAY_UNCACHED:.0%} of its prompt uncached: on that evidence, most likely a relay "
                  "Claude Code was pointed at (ANTHROPIC_BASE_URL; the transcript keeps no endpoint); "
                  f"--assume-provider claude-code:{model}=anthropic reads them as Anthropic's "
                  "(claude-code=anthropic would too, and with them every other claude-code call whose provider was "
                  "taken from its model's name)",)
    for model, (tokens, calls, split, uncached) in sorted(walk.unsplit_kept.items()):
        if split:
            notes += (f"{model} read as Anthropic's: {calls:,} of its call(s) here reported {tokens:,} tokens of cache "
                      f"writes without splitting them by TTL (cache_creation 0), but {split:,} other(s) split theirs as "
                      "Anthropic's API does: mixed evidence, not a relay's"
                      + (f" (an unsplit call left more than {_RELAY_UNCACHED:.0%} of its prompt uncached)" if uncached else ""),)
            continue
        notes += (f"{model} read as Anthropic's: {calls:,} of its call(s) here reported {tokens:,} tokens of cache writes "
                  "without splitting them by TTL (cache_creation 0), as a gateway or cloud endpoint in front of Anthropic "
                  f"may, but each left at most {_RELAY_UNCACHED:.0%} of its prompt uncached, as Anthropic's cache does "
                  "for Claude Code (a relay's reads fell short of the prompt)",)
    final = tuple((req.key, _provider_usage(req.model, req.usage, f"{walk.name}:{req.last_line}")[1]) for req in walk.final)
    if walk.restated:
        notes += ("a fork subagent's transcript (fork-context-ref): its first call extends the parent's call that spawned "
                  "it (the restated message's request id), measured against what that call left cached where its log "
                  "is in the audit (else the head's)",)
    if walk.copied:
        if not walk.requested_elsewhere:
            what, first = "a forked session's transcript (forkedFrom: /branch, or the Agent SDK's forkSession)", "the fork's"
        elif walk.copied <= walk.requested_elsewhere:
            what, first = "a transcript copying another session's history (requestSessionId: a forked or resumed session)", "its"
        else:
            what, first = "a forked or resumed session's transcript (forkedFrom, requestSessionId)", "its"
        notes += (f"{what} copying {len(walk.copied):,} call(s) of session {', '.join(sorted(walk.copied_from))}: counted "
                  f"in that session's transcript, not here; {first} first call extends the last call it copied (by its "
                  "request id), measured against what that call left cached where its log is in the audit (else the "
                  "head's)",)
    uncounted = tuple(sorted((line, walk.zero_lane[line]) for line, why in walk.skipped
                             if why == _ZERO_UNREPORTED and line in walk.zero_lane))
    return out, FileSummary(walk.name, NAME, len(out), tuple(walk.skipped), notes, final_usage=final,
                            call_parents=tuple(sorted(walk.linked)), uncounted=uncounted, copies=tuple(walk.copy_lines),
                            session=_session_of(path, walk) if walk.in_subagents else "")


def _session_of(path: Path, walk: _Walk) -> str:
    """The main transcript of the session a subagent's (or compaction agent's) transcript is part
    of: ``<project>/<sessionId>.jsonl``, the ``sessionId`` its records name, the project's folder
    the one Claude Code writes the transcript under, by its version
    (:func:`~prefixbench.workloads.logs.claude_layout.subagent_depth`): beside the session's
    transcript (older), in ``<project>/<sessionId>/`` or in ``<project>/<sessionId>/subagents/``
    (2.x), or four folders down in a workflow run's (``<sessionId>/subagents/workflows/<run>/``):
    :func:`~prefixbench.workloads.logs.claude_layout.session_transcript`. "" where its records
    name no session, or more than one."""
    named = {req.session for req in walk.requests.values() if req.session is not None}
    if len(named) != 1:
        return ""
    (session,) = named
    return str(session_transcript(path, session))


FORMAT = LogFormat(
    name=NAME,
    noun="Claude Code transcript",
    nouns="Claude Code transcripts",
    description="Claude Code session transcripts (~/.claude/projects/<project>/<session>.jsonl, or the chat.json array a Stop hook writes), "
    "claude -p --output-format stream-json output, and iFlow CLI sessions (~/.iflow/projects/<project>/session-<id>.jsonl, the same entries)",
    detect=detect,
    read=read,
    usage="additive",
    head_end_falls=True,
    message_of_line=_line_record,
    versions=(
        "1.0.x: subagent (Task) turns inline as isSidechain chains",
        "about 1.0.8x on: usage.cache_creation splits writes into 5 m and 1 h",
        "2.x: subagents in <session>/subagents/agent-<id>.jsonl, agent-acompact-* holding the compaction call; "
        "files may start with file-history-snapshot / queue-operation entries",
        "2.1.232 on, fork subagents (the default): agent-<id>.jsonl opens with fork-context-ref and the parent's "
        "Agent message restated (not counted); the fork's first call extends that parent call",
        "forked sessions (/branch, the Agent SDK's forkSession()): a new <session>.jsonl opening with the source's "
        "entries marked forkedFrom (not counted); the fork's first call extends the last copied call",
        "2.1.326 on: an assistant entry copied from another session names it in requestSessionId (not counted here, "
        "as a forkedFrom copy); 2.1.3xx bookkeeping entries (api-request*, session-owner, derived-from, tools-used...) "
        "are no calls",
        "the chat.json form: the same entries as one JSON array",
        "claude -p --output-format stream-json: no parentUuid and no timestamps (1.0.x: no uuid either); a thread's "
        "messages in the order they are printed, a subagent's (parent_tool_use_id) a lane of its own",
        "responses under Anthropic's server-side compaction (usage.iterations with compaction entries, the top level "
        "the message's alone): each compaction iteration a compaction call of its own",
        "2.1.98 on, /advisor: usage.iterations advisor_message entries (the advisor model's calls, outside the executor's "
        "top level): each a call of the advisor model in an advisor lane of its own",
        "iFlow CLI sessions (a Gemini CLI fork that writes Claude Code's entries): usage {input_tokens, output_tokens} "
        "only, no cache field (cache use not reported); its own version in version",
    ),
    aliases=("iflow", "iflow-cli"),
)
