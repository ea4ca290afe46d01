"""Gemini CLI sessions, and those of its fork Qwen Code.

Gemini CLI records a session under ``~/.gemini/tmp/<project-hash>/chats/`` (its
``packages/core/src/services/chatRecordingService.ts``), in two shapes:

* up to April 2026, ``session-<time>-<id>.json``: one pretty-printed object ``{sessionId,
  projectHash, startTime, lastUpdated, messages}`` rewritten whole on every change;
* since then, ``session-<time>-<id>.jsonl``: a metadata line ``{sessionId, projectHash, ...}``,
  then one line per write of a message ``{id, timestamp, type, content, ...}`` (a message written
  again, when its tool calls or tokens land, repeats its ``id``: the last write wins), ``{"$set":
  {...}}`` updates (``$set.messages`` replaces the history: the chat compression, tool-output
  masking or the rollback of an aborted turn) and ``{"$rewindTo": id}`` (``/rewind``). A
  subagent's session is a file of its own (``kind: "subagent"``) under ``chats/<parent id>/``.
  Resuming a ``.json`` session writes its metadata and messages again into a ``.jsonl`` of the
  same name (the ``.json`` stays): a call seen in another file of the same session is counted once.

A model message (``type: "gemini"``) carries ``model`` and ``tokens {input, output, cached,
thoughts, tool, total}``: the usage of the one call that produced it (``promptTokenCount``,
``candidatesTokenCount``, ``cachedContentTokenCount``, ``thoughtsTokenCount``,
``toolUsePromptTokenCount``, ``totalTokenCount``). ``input`` INCLUDES ``cached`` (the subset
convention); ``tool`` is prompt counted apart (read here as uncached input) and ``thoughts`` is
billed as output, so ``total = input + tool + output + thoughts`` is what is counted. A model
message without tokens, or with all of them zero (the call's usage was not recorded), is
skipped and listed.

Qwen Code (``~/.qwen/projects/<project>/chats/<session>.jsonl``) writes a tree of records
``{uuid, parentUuid, sessionId, type, message: {role, parts}, usageMetadata, model, ...}``: an
``assistant`` record's ``usageMetadata`` is the call's Gemini-shaped usage (its converters fill
``promptTokenCount`` with the whole prompt, cached part included: OpenAI's ``prompt_tokens``, or
Anthropic's ``input_tokens`` plus the read, the cache writes left out (later releases'
``anthropicContentGenerator/usage.ts`` adds them too: read as uncached, no write count); from an OpenAI-compatible
reply ``candidatesTokenCount`` is the completion's count, reasoning inside, ``thoughtsTokenCount``
the reasoning again, and ``totalTokenCount`` prompt plus candidates: where the total says so the
thoughts are not added to the output a second time); ``system`` records with
``subtype: "chat_compression"`` are compactions; a subagent's records carry ``agentId``;
``/branch`` copies records verbatim into a new session, each with ``forkedFrom {sessionId,
messageUuid}`` (a call is counted once, wherever it is seen first). ``system`` records with
``subtype: "ui_telemetry"`` (seen from Qwen Code 0.4) copy the CLI's telemetry events (``systemPayload.uiEvent``): a
``qwen-code.api_response`` for every call the CLI made, with ``input_token_count`` (the whole
prompt), ``cached_content_token_count``, ``output_token_count``, ``thoughts_token_count``,
``tool_token_count`` and ``duration_ms``, and a ``qwen-code.api_error`` for a call that failed.
Most of them are the calls of the ``assistant`` records, but not all: a call whose reply the CLI
retried (the same prompt sent again) or a side call on a short prompt of its own (Qwen Code 0.5,
after ``write_file`` and ``edit`` calls) has its event and no record. Each event is paired with a
counted record of the same prompt, read and output counts. An unpaired event before a record's
event with the record's prompt count is a retry: counted in the record's lane, just before it
(the record's call extends it). Qwen Code 0.14 (0.14.0 to 0.14.2 seen) writes no record for a
subagent's calls, only their events, whose ``prompt_id`` (``<session>#<agent>#<turn>``; the main conversation's
has no agent) names the subagent: such an event is a call of the lane ``agent:<agent>``, each
extending the subagent's previous call; an agent ``<type>-<suffix>`` starts from its type's head
(its system prompt and tools), shared by that type's lanes alone. Any other event left unpaired is a side call, counted
in the lane ``side:telemetry`` (each a chain of its own: its prompt is not in the file). A failed call
is listed as skipped. Qwen Code 0.24 also writes a subagent's transcript
(``subagents/<session>/agent-<id>.jsonl``: the parent session's id, ``agentId``, ``isSidechain``,
each round's ``usageMetadata``, no model: the sidecar ``agent-<id>.meta.json`` beside it may name
one, :data:`META_SUFFIX`) while the session keeps its events: a subagent call
another file of the session counted is skipped and listed (:data:`SEEN_AGENT`). A fork subagent's transcript
opens with an ``agent_bootstrap`` record (``kind: "fork"``): its first call, whichever file counts it,
extends the parent's call whose reply spawned the fork (:data:`FORK_TYPE`). Where no event pairs with any record (telemetry counted another way), the
events are not counted and the notes say so.  Its managed engine writes
``managed_session_{header,event,commit}_v1`` system records instead, whose messages and usage
are resources outside the file: its calls are listed as skipped, not counted. Later Qwen Code
(checked against QwenLM/qwen-code's ``chatRecordingService.ts`` at commit 015346f1, late 2026) also
writes a realtime (voice) conversation's text as ``user`` and ``assistant`` records of subtype
``realtime_message``, the assistant's naming its model and no usage: listed as such
(:data:`REALTIME_REPLY`), no call; its other new records (``session_model``, ``turn_result``,
``agent_retry``, ``goal_state``, ``branch_checkpoint``...) hold no usage either.

Qwen Code's headless output (``qwen -p --output-format stream-json``, or ``json``: the same
messages as one array; QwenLM/qwen-code ``packages/cli/src/nonInteractive/io/``) copies Claude
Code's SDK messages (``system`` init naming ``qwen_code_version``, ``assistant``, ``user``,
``result``) but fills an assistant message's ``usage`` from Gemini's usage: ``input_tokens`` is
the whole prompt, ``cache_read_input_tokens`` the part of it read (the subset convention, where
Claude Code's is additive). A response is split into one message per block type, its usage on
the last (the others carry zeros, skipped); ``message.id`` is the message's own ``uuid`` (Claude
Code's is the API's ``msg_...``), which tells the two apart line by line. No timestamps.

Saved chats (``/chat save``: ``checkpoint-<tag>.json``) and ``/chat share`` JSON exports hold the
conversation contents only, no usage: they are recognised and read as no calls, saying so.

Caches are per model (Gemini's implicit caching keys on the model): every request names its
model, the chain cache keys its entries by it, and a switch (``/model``, the router, a quota
fallback) is a model change in the one lane of the session. The system prompt depends on the approval mode: a logged
exit from Plan Mode (an approved plan, the user's manual exit) or entry (``enter_plan_mode``) is a
``system_change`` event, and the next call starts a new chain after the head. Who served a call is asked of
:func:`prefixbench.simulator.providers.provider_of_model` with the model's name; for a model it
names no provider (Qwen Code's ``coder-model``), the login a Qwen Code telemetry event names
(``auth_type``) decides where a provider's rules hold it as an agent handler
``qwen-code/<auth_type>`` (:func:`prefixbench.simulator.providers.agent_handler`), and a note says so.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import UNKNOWN, agent_handler, counted_provider
from prefixbench.simulator.providers.base import count
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import Lane, as_dict, objects, parse_time_ms
from prefixbench.workloads.logs.reading import loads
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LaneKind, Prefix, TraceRequest, call_parent

NAME = "gemini-cli"
#: The suffix Qwen Code puts after a subagent's name in its id (``<name>-<suffix>``, the
#: ``prompt_id``'s middle part): six base-36 characters, ``Math.random().toString(36).slice(2, 8)``
#: (packages/core/src/subagents/subagent.ts of QwenLM/qwen-code), and in 0.24 eight hex digits (a
#: random UUID's first 8, dashes dropped). Only a suffix of those shapes is cut: a name is the type
#: whole where it has none (``code-reviewer``).
QWEN_AGENT_SUFFIX = re.compile(r"-(?:[0-9a-z]{6}|[0-9a-f]{8})\Z")
#: The ``type`` of a model message in a Gemini CLI session (a message role of the format, not a
#: provider's name: who served the call is read from ``model``).
MODEL_TURN = "gemini"
#: The ``type`` of a model message in Qwen Code's sessions of the same shape (``QwenMessage``,
#: ``type: 'user' | 'qwen'``, ``~/.qwen/tmp/<project hash>/chats/session-*.json``, before its
#: ``projects/*/chats/*.jsonl`` tree): the same ``tokens``.
QWEN_TURN = "qwen"
#: The models of Qwen Code's own login (``QWEN_OAUTH_MODELS``, packages/core/src/models/constants.ts
#: of QwenLM/qwen-code): names no provider serves, so a ``.json`` session naming one (no telemetry
#: in it names the login) is the ``qwen-oauth`` login's.
_QWEN_OAUTH_MODELS = ("coder-model", "vision-model")
#: Other message types of a Gemini CLI session (``info``, ``error`` and ``warning`` are what the
#: CLI showed, recorded since late 2025).
_OTHER_TURNS = ("user", "info", "error", "warning")
#: The info lines Gemini CLI shows (and records) when the user picks the model: ``/model set``,
#: and choosing to keep a fallback model on a quota error (packages/cli/src/ui/commands/
#: modelCommand.ts, hooks/useQuotaAndFallback.ts). A model picked in the ``/model`` dialog, the
#: auto router's pick and a one-turn fallback record nothing.
MODEL_CHOSEN = re.compile(r"(?:Model set to|Switched to fallback model) (\S+)")
#: Record types of Qwen Code's session tree.
_QWEN_TYPES = ("user", "assistant", "tool_result", "system")
#: The subtypes of Qwen Code's managed-engine records (``managed_session_header_v1``, ``_event_v1``,
#: ``_commit_v1``): a journal of events whose contents and usage are resources kept elsewhere.
_MANAGED_PREFIX = "managed_session_"
#: The subtype of the records Qwen Code writes of a realtime (voice) conversation
#: (``recordRealtimeConversation`` in packages/core/src/services/chatRecordingService.ts of
#: QwenLM/qwen-code, late 2026): each side's text as a ``user`` or ``assistant`` record, the
#: assistant's with ``model`` and no ``usageMetadata``: the realtime session's usage is not kept.
REALTIME_SUBTYPE = "realtime_message"
REALTIME_REPLY = ("realtime conversation reply (subtype realtime_message): the transcript of a realtime (voice) "
                  "session, whose usage Qwen Code does not record: not a counted call")
#: Why a call already counted from another file of its session is skipped: a .jsonl a resumed
#: .json was rewritten into, or a .json that Gemini CLI's move to project-named folders copied.
SEEN_JSONL = "call already counted from another file of this session (a .json session migrated to .jsonl on resume)"
SEEN_COPY = ("call already counted from another file of this session (a copy Gemini CLI made moving "
             "~/.gemini/tmp/<hash>/ to ~/.gemini/tmp/<project>/)")
#: Why a Qwen Code subagent's call is skipped where another file counted it: its transcript
#: (``subagents/<session>/agent-<id>.jsonl``, Qwen Code 0.24) and its session's telemetry events
#: log the same calls.
SEEN_AGENT = ("subagent call already counted from another file of this session (Qwen Code logs it in the session's "
              "telemetry and in the subagent's transcript, subagents/<session>/agent-<id>.jsonl)")
#: The ``subagent_type`` of Qwen Code's fork subagent (packages/core/src/tools/agent/fork-subagent.ts
#: of QwenLM/qwen-code): it inherits the parent's conversation, system instruction and tool
#: declarations (AgentTool's ``createForkSubagent``), so its first call extends the parent's call
#: whose reply spawned it. Its transcript (``subagents/<session>/agent-<id>.jsonl``) opens with an
#: ``agent_bootstrap`` record, ``systemPayload {kind: "fork", history}``: the history the fork
#: was seeded with: the parent's conversation, then its reply that spawned the fork (the function
#: calls with their ids), a user turn of placeholder results and the directive, and a model
#: acknowledgement. A fork of the last N turns (``fork_turns``) is seeded with the startup context
#: and those turns alone: it shares the head, not the spawning call's prompt.
FORK_TYPE = "fork"
#: The sidecar Qwen Code writes beside a subagent's transcript (``agent-<id>.meta.json``,
#: packages/core/src/agents/agent-transcript.ts ``getAgentMetaPath``/``writeAgentMeta``): JSON
#: ``{agentId, agentType, description, parentSessionId, toolUseId, parentAgentId, createdAt,
#: status, ...}`` and, in later releases, ``model`` (the model id the agent runs with) and
#: ``persistedCliFlags {model, authType, ...}`` (its launch flags; ``model`` named the parent
#: session's model until QwenLM/qwen-code#7104, July 2026, the agent's own since: read for a fork
#: alone, which runs on its parent's model either way, where ``model`` is absent). The
#: transcript's records name no model: where the sidecar does, the transcript's calls counted
#: from it take that model (the session's telemetry, where its file is read, counts them with
#: the model its events name). A folder walk skips the sidecar as metadata beside the logs.
META_SUFFIX = ".meta.json"
FORK_BOOTSTRAP = "agent_bootstrap"
#: How a fork names the parent's call that spawned it: the session and a function call's id.
_FORK_NAME = "qwen-fork:{session}#{call}"
#: Why a Qwen Code headless assistant message with zero usage is skipped.
_QWEN_SPLIT = "assistant message with zero usage: Qwen Code splits a response by block type, its usage is on the last part"
#: The roles of a Gemini API ``Content`` (a saved chat or a shared export holds a list of them).
_CONTENT_ROLES = ("user", "model")


#: Where a logs.json's note points, and a saved chat's (``formats.SIBLING_POINTERS``: the session
#: files under the chats/ folder beside it).
CHATS_BESIDE = " (audit the session files under chats/ beside it)"
CHATS = " (audit the session files under chats/)"
#: Where a Qwen Code runtime file's note points (``formats.SIBLING_POINTERS``: ``<id>.jsonl`` for
#: ``<id>.runtime.json``).
RUNTIME_BESIDE = " (audit the session's .jsonl of the same name beside it)"
#: The suffix of that file's name.
RUNTIME_SUFFIX = ".runtime.json"
#: The end of that file's note where the audit reads nothing of it (:data:`RUNTIME_BESIDE` after it).
_RUNTIME_NONE = "no calls to audit here"


def runtimes_with_sessions(summaries: list[FileSummary]) -> list[FileSummary]:
    """``summaries``, a Qwen Code runtime file's (``<id>.runtime.json``) said as its session's
    where this audit read that session (``<id>.jsonl`` beside it) too: its note no longer sends
    the user to a file already audited, and says whose runtime file it is."""
    import os

    read = {os.path.abspath(s.file) for s in summaries if s.format == NAME and not s.file.endswith(RUNTIME_SUFFIX)}
    if not read:
        return summaries
    out = []
    for summary in summaries:
        pointing = _RUNTIME_NONE + RUNTIME_BESIDE
        if summary.format == NAME and summary.file.endswith(RUNTIME_SUFFIX) and any(n.endswith(pointing) for n in summary.notes):
            session = os.path.abspath(summary.file.removesuffix(RUNTIME_SUFFIX) + ".jsonl")
            if session in read:
                whose = f"the runtime file of {Path(session).name}, the session read in this audit (counted there)"
                summary = msgspec.structs.replace(summary, notes=tuple(
                    n.removesuffix(pointing) + whose if n.endswith(pointing) else n for n in summary.notes))
        out.append(summary)
    return out


def detect(value: dict) -> Evidence | None:
    """A Gemini CLI session (object or metadata line), one of its JSONL lines, a Qwen Code record,
    or a saved chat."""
    if isinstance(value.get("sessionId"), str) and "projectHash" in value:
        return Evidence.WRAPPER  # the whole session (.json) or the first line of a .jsonl
    if _is_qwen_stream(value):
        return Evidence.WRAPPER  # Qwen Code's headless output, where Claude Code's shapes would match too
    if "uuid" in value and "sessionId" in value and value.get("type") in _QWEN_TYPES:
        message = value.get("message")
        managed = isinstance(value.get("subtype"), str) and value["subtype"].startswith(_MANAGED_PREFIX)
        if managed or "usageMetadata" in value or "systemPayload" in value or (isinstance(message, dict) and "parts" in message):
            return Evidence.WRAPPER  # Qwen Code: a Gemini Content where Claude Code has {role, content}
        return None
    if "$rewindTo" in value or isinstance(value.get("$set"), dict):
        return Evidence.ENTRY
    kind = value.get("type")
    if isinstance(value.get("id"), str) and "timestamp" in value and "content" in value and "uuid" not in value:
        if kind in (MODEL_TURN, QWEN_TURN) or kind in _OTHER_TURNS:
            return Evidence.ENTRY
    if isinstance(value.get("history"), list) and _is_content_list(value["history"]):
        return Evidence.SHAPE  # a saved chat {history, authType}
    if _is_prompt_log(value):
        return Evidence.SHAPE  # an entry of logs.json beside chats/: a prompt the user typed
    if _is_qwen_runtime(value):
        return Evidence.SHAPE  # Qwen Code's chats/<id>.runtime.json: the process, beside the session
    if value.get("role") in _CONTENT_ROLES and isinstance(value.get("parts"), list) and len(value) <= 3:
        return Evidence.SHAPE  # an element of an older saved chat or a shared export (a list of Content)
    return None


#: The keys of an entry of Gemini CLI's ``logs.json`` (``LogEntry`` in its core's ``logger.ts``),
#: kept in ``~/.gemini/tmp/<project hash>/`` beside ``chats/``: each prompt the user typed.
_PROMPT_LOG_KEYS = frozenset({"sessionId", "messageId", "timestamp", "type", "message"})


def _is_qwen_stream(value: dict) -> bool:
    """A line of ``qwen -p --output-format stream-json`` (or an element of ``json``'s array) that
    tells it from Claude Code's: the run's ``init`` naming ``qwen_code_version``, or an assistant
    message whose ``message.id`` is its own ``uuid`` (Claude Code's is the API's ``msg_...``)."""
    if "session_id" not in value or "sessionId" in value:
        return False
    kind = value.get("type")
    if kind == "system":
        return value.get("subtype") == "init" and isinstance(value.get("qwen_code_version"), str)
    message = value.get("message")
    return kind == "assistant" and isinstance(message, dict) and isinstance(value.get("uuid"), str) and message.get("id") == value["uuid"]


def _is_prompt_log(value: dict) -> bool:
    """An entry of ``logs.json``: ``{sessionId, messageId, timestamp, type: "user", message}``."""
    return (
        value.keys() <= _PROMPT_LOG_KEYS
        and isinstance(value.get("sessionId"), str)
        and isinstance(value.get("messageId"), int)
        and isinstance(value.get("message"), str)
        and value.get("type") == "user"
    )


def _is_qwen_runtime(value: dict) -> bool:
    """Qwen Code's ``chats/<session id>.runtime.json`` (0.18 on): ``{schema_version, pid, session_id,
    work_dir, hostname, started_at, qwen_version}``, the process that ran the session; no message."""
    return (isinstance(value.get("qwen_version"), str) and isinstance(value.get("session_id"), str)
            and isinstance(value.get("pid"), int) and "type" not in value and "message" not in value)


def _is_content_list(items: list) -> bool:
    return bool(items) and all(isinstance(c, dict) and c.get("role") in _CONTENT_ROLES for c in items[:3])


#: What Gemini CLI records when the approval mode leaves or enters Plan Mode: the user's manual
#: exit (a user message), an approved plan (``exit_plan_mode``'s result; a rejected plan stays in
#: Plan Mode) and ``enter_plan_mode``'s result (``getPlanModeExitMessage`` and the two tools).
_MODE_SWITCHES = ("User has manually exited Plan Mode.", "Plan approved.", "Switching to Plan mode")


def _mode_change(value: dict) -> str | None:
    """The Plan Mode exit or entry a message records (see :data:`_MODE_SWITCHES`), None if none.

    Gemini CLI builds its system prompt for the approval mode (``getCoreSystemPrompt`` in its
    ``promptProvider.ts``: Plan Mode's instructions and tool list), so the next call's prompt
    departs from the previous call's inside the head.
    """
    texts: list[object] = []
    content = value.get("content")
    if value.get("type") == "user":
        texts = [content] if isinstance(content, str) else [p.get("text") for p in content if isinstance(p, dict)] if isinstance(content, list) else []
    calls = value.get("toolCalls")
    for call in calls if isinstance(calls, list) else ():
        if isinstance(call, dict) and call.get("name") in ("exit_plan_mode", "enter_plan_mode") and isinstance(call.get("result"), list):
            for part in call["result"]:
                response = as_dict(as_dict(as_dict(part).get("functionResponse")).get("response"))
                texts.append(response.get("output"))
    for text in texts:
        if isinstance(text, str) and text.startswith(_MODE_SWITCHES):
            return text.split("\n", 1)[0][:120]
    return None


#: The Gemini CLI ``tokens`` keys and the ``usageMetadata`` keys they copy.
_KEYS = (
    ("input", "promptTokenCount"),
    ("cached", "cachedContentTokenCount"),
    ("output", "candidatesTokenCount"),
    ("thoughts", "thoughtsTokenCount"),
    ("tool", "toolUsePromptTokenCount"),
)


#: The ``usageMetadata`` keys and the fields of a Qwen Code ``qwen-code.api_response`` telemetry
#: event that copy them.
_TELEMETRY_KEYS = (
    ("promptTokenCount", "input_token_count"),
    ("cachedContentTokenCount", "cached_content_token_count"),
    ("candidatesTokenCount", "output_token_count"),
    ("thoughtsTokenCount", "thoughts_token_count"),
    ("toolUsePromptTokenCount", "tool_token_count"),
    ("totalTokenCount", "total_token_count"),
)


def _usage(tokens: dict, where: str, raw: bool) -> Usage:
    """One call's usage: ``tokens`` (Gemini CLI) or ``usageMetadata`` (Qwen Code, ``raw``).

    The prompt count includes the cached part; tool-use prompt tokens are input counted apart,
    thoughts are billed as output.
    """
    what = "usageMetadata" if raw else "tokens"
    got = {short: count(tokens.get(long if raw else short), where, f"{what}.{long if raw else short}") for short, long in _KEYS}
    if got["cached"] > got["input"]:
        raise UserError(f"{where}: {what}: cached tokens ({got['cached']}) exceed the prompt ({got['input']})")
    total = tokens.get("totalTokenCount" if raw else "total")
    # Gemini's output count leaves the thoughts out (the total adds them); Qwen Code's from an
    # OpenAI-compatible reply is the completion's, reasoning inside, where the total adds none.
    inside = got["thoughts"] and total == got["input"] + got["tool"] + got["output"]
    return Usage(
        cache_read=got["cached"],
        uncached=got["input"] - got["cached"] + got["tool"],
        output=got["output"] if inside else got["output"] + got["thoughts"],
    )


#: A Qwen Code api_response telemetry event: its line, when its call was sent, its model, its
#: usage, and the subagent its ``prompt_id`` names ("" for the main conversation's).
_Event = tuple[int, int | None, str, Usage, str]


class _Unpaired:
    """The api_response events no record's call has paired with yet, in the order read (their
    lines rising), each usage's kept apart: a record finds its event without a scan of them all,
    so pairing stays linear however many stay unpaired."""

    __slots__ = ("_events", "_lines", "_at", "_left")

    def __init__(self) -> None:
        self._events: list[_Event | None] = []  # None: paired since (positions stay)
        self._lines: list[int] = []
        self._at: dict[Usage, list[int]] = {}  # each usage's positions, latest last (some paired since)
        self._left = 0

    def __bool__(self) -> bool:
        return self._left > 0

    def __iter__(self) -> Iterator[_Event]:
        return (event for event in self._events if event is not None)

    def append(self, event: _Event) -> None:
        self._at.setdefault(event[3], []).append(len(self._events))
        self._events.append(event)
        self._lines.append(event[0])
        self._left += 1

    def pair(self, usage: Usage, since: int) -> tuple[_Event, list[_Event]] | None:
        """The latest event of ``usage`` (a retry of the very same counts is the earlier one),
        taken, with the main conversation's events of the same prompt between it and line
        ``since`` (retried replies), taken too, in order; None where no event has ``usage``."""
        positions = self._at.get(usage)
        while positions and self._events[positions[-1]] is None:
            positions.pop()
        if not positions:
            return None
        at = positions.pop()
        event = self._take(at)
        retries = []
        n = at - 1
        while n >= 0 and self._lines[n] > since:  # only the events since the last pairing
            other = self._events[n]
            if other is not None and other[3].prompt == usage.prompt and not other[4]:
                retries.append(self._take(n))
            n -= 1
        return event, retries[::-1]

    def _take(self, n: int) -> _Event:
        event = self._events[n]
        assert event is not None
        self._events[n] = None
        self._left -= 1
        return event


class _Lane(Lane):
    """The chain of one lane while its session is read."""

    def __init__(self, name: str, kind: LaneKind) -> None:
        super().__init__(name, kind)
        self.blocks = 0
        self.input_ms: int | None = None
        #: A Plan Mode entry or exit logged since the lane's previous call (see :func:`_mode_change`).
        self.mode_change: str | None = None


class _Session:
    """The requests of one session file, message by message."""

    def __init__(self, path: Path, seen: dict[tuple[str, str], str] | None = None) -> None:
        self.name = str(path)
        self.path = path
        #: The workspace the session ran in: its ``projectHash`` where the file names one, else the
        #: folder its ``chats/`` is in (the file's own folder where there is none). See :meth:`_head`.
        self.project = _project_folder(path)
        #: Calls counted from another file of the same session (a legacy ``.json`` migrated on
        #: resume): ``(session id, message id)`` to the chain node they were counted as.
        self.seen: dict[tuple[str, str], str] = {} if seen is None else seen
        self.session_id: str | None = None
        self.out: list[TraceRequest] = []
        self.skipped: list[tuple[int, str]] = []
        self.notes: list[str] = []
        self.kind: LaneKind = "main"
        self.agent = "gemini-cli"
        self.lanes: dict[str, _Lane] = {}
        # Gemini CLI JSONL: messages by id (the last write wins), in the order first written;
        # what each position of the history is, and the chain node after it.
        self.latest: dict[str, tuple[int, dict]] = {}
        #: Where a message is in its line's record, where one record holds them all (``messages[7]``).
        self.paths: dict[str, str] = {}
        self.order: list[tuple[str, object]] = []
        self.history: list[str] = []
        self.node_after: dict[str, str | None] = {}
        self.node_before: dict[str, str | None] = {}
        #: Messages placed in the walk's order, and those walked (a message may come first in a
        #: ``$set.messages`` batch and again as a line of its own: it is one message).
        self.queued: set[str] = set()
        self.walked: set[str] = set()
        # Qwen Code: the chain node after each record of its tree.
        self.qwen_node: dict[str, str | None] = {}
        self.saved_chat = False
        #: The Qwen Code version a runtime file names (None: not such a file).
        self.runtime_version: str | None = None
        self.prompt_log = False
        #: Qwen Code managed-engine records (``managed_session_*_v1``) seen.
        self.managed = 0
        self.version: str | None = None
        self.tokens_total = 0
        self.tokens_seen = False
        #: Qwen Code headless output: the run's own totals (its ``result`` messages' usage), prompt and read.
        self.run_totals: tuple[int, int] | None = None
        #: Qwen Code headless output: each run's (``session_id``'s) main lane, the first run's
        #: ``main``, another's ``session-2``... (runs' output appended to one file, or interleaved).
        self.qwen_runs: dict[object, str] = {}
        #: The uuids of the Qwen Code headless assistant and result messages counted.
        self.qwen_counted: set[str] = set()
        #: Qwen Code ``ui_telemetry`` api_response events: (line, time sent, model, usage, the
        #: subagent its ``prompt_id`` names or ""), all of them, and those not yet paired with a
        #: record's call.
        self.qwen_events: list[_Event] = []
        self.qwen_pending = _Unpaired()
        #: The usage of the calls counted from Qwen Code assistant records before their events
        #: came, and how many of each.
        self.qwen_records: dict[Usage, int] = {}
        self.qwen_paired = 0
        #: The line of the event paired last: a retry is an event after it.
        self.qwen_last = 0
        #: The request ids of the calls counted from telemetry events alone.
        self.qwen_unrecorded: set[str] = set()
        #: Per model of no provider, who served it as the telemetry's login names it
        #: (``auth_type``, an agent handler ``qwen-code/<auth_type>`` of a provider's rules).
        self.qwen_served: dict[str, str] = {}
        #: Of those, the models a ``.json`` session's ``qwen`` messages name, decided by the name.
        self.qwen_named: set[str] = set()
        #: When each event's call ended (its ``event.timestamp``), by the event's line.
        self.qwen_ended: dict[int, int] = {}
        #: The session id of the Qwen Code records read (a subagent transcript's is its parent
        #: session's), and how many calls of each subagent and usage were seen (see :meth:`_agent_call`).
        self.qwen_session: str | None = None
        self.qwen_agent_calls: dict[tuple[str, Usage], int] = {}
        #: Qwen Code fork subagents (``subagent_type: "fork"``): the calls of this file that spawned
        #: one, by the name a fork's transcript knows them by (:func:`_fork_name`), to their request
        #: id ("" where the fork inherits the last turns alone); those spawned so, counted for the
        #: notes; per fork lane of this transcript whose first call is yet to come, the name of the
        #: call it extends; the names its first calls extend, and the first calls another file
        #: counted (by node) with the name each extends.
        self.fork_spawns: dict[str, str] = {}
        self.fork_bounded = 0
        self.fork_pending: dict[str, str] = {}
        self.fork_linked: set[str] = set()
        self.fork_starts: list[tuple[str, str]] = []
        self.fork_unnamed = 0
        #: Qwen Code subagent transcripts: the agents whose ``agent-<id>.meta.json`` beside the
        #: file was looked for, the models taken from one (file name, model) and the notes on
        #: those not read (see :meth:`_agent_meta`).
        self.meta_tried: set[str] = set()
        self.meta_models: list[tuple[str, str]] = []
        self.meta_notes: list[str] = []

    def lane(self, name: str = "main", kind: LaneKind | None = None) -> _Lane:
        found = self.lanes.get(name)
        if found is None:
            found = self.lanes[name] = _Lane(name, kind or self.kind)
        return found

    # --- Gemini CLI -------------------------------------------------------------------------

    def metadata(self, value: dict) -> None:
        if self.session_id is None and isinstance(value.get("sessionId"), str):
            self.session_id = value["sessionId"]
        if isinstance(value.get("projectHash"), str) and value["projectHash"]:
            self.project = value["projectHash"]
        if value.get("kind") == "subagent":
            self.kind = "subagent"

    def message(self, record: Record, value: dict, path: str = "") -> None:
        mid = value["id"]
        if path:  # a message of a one-object session (.json): every one of them is on line 1
            self.paths[mid] = path
        if mid not in self.queued:
            self.queued.add(mid)
            self.order.append(("message", mid))
        previous = self.latest.get(mid)
        # The line kept is the first write that carried the call's tokens.
        if previous is not None and isinstance(previous[1].get("tokens"), dict) and previous[1]["tokens"]:
            line = previous[0]
        else:
            line = record.line
        self.latest[mid] = (line, value)

    def set_history(self, record: Record, update: dict) -> None:
        messages = update.get("messages")
        if isinstance(messages, list):
            for item in messages:
                if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"] not in self.latest:
                    self.latest[item["id"]] = (record.line, item)
            self.order.append(("history", messages))
        if update.get("kind") == "subagent":
            self.kind = "subagent"

    def replay(self) -> None:
        """Walk the messages in the order they were first written, with rewinds and history
        replacements where the file has them."""
        for kind, item in self.order:
            if kind == "message":
                self._walk_message(str(item))
            elif kind == "rewind":
                self._rewind(str(item))
            elif kind == "history":
                self._history(item)  # type: ignore[arg-type]

    def _walk_message(self, mid: str) -> None:
        if mid in self.walked:
            return
        self.walked.add(mid)
        line, value = self.latest[mid]
        lane = self.lane()
        self.node_before[mid] = lane.parent
        self.history.append(mid)
        when = parse_time_ms(value.get("timestamp"), f"{self.name}:{line}") if "timestamp" in value else None
        kind = value.get("type")
        if kind == "user":
            lane.events.append(("user_turn", ""))
            lane.blocks += 1
            lane.input_ms = when
            lane.mode_change = _mode_change(value) or lane.mode_change
        elif kind == "error":
            self.skipped.append((line, "error shown by the CLI (a failed call or a CLI error): not a counted call"))
        elif kind == "info" and isinstance(value.get("content"), str) and (chosen := MODEL_CHOSEN.match(value["content"])):
            lane.events.append(("model_chosen", chosen.group(1)))
        elif kind in (MODEL_TURN, QWEN_TURN):
            if kind == QWEN_TURN:
                self.agent = "qwen-code"
                model = value.get("model")
                handler = agent_handler("qwen-code/qwen-oauth")
                if model in _QWEN_OAUTH_MODELS and handler is not None and model not in self.qwen_served:
                    self.qwen_served[model] = handler[0].name
                    self.qwen_named.add(model)
            self._model_message(line, value, when, lane, mid)
            calls = value.get("toolCalls")
            if isinstance(calls, list):
                lane.mode_change = _mode_change(value) or lane.mode_change
                lane.blocks += len(calls)
                times = [parse_time_ms(c.get("timestamp"), f"{self.name}:{line}") for c in calls if isinstance(c, dict) and "timestamp" in c]
                lane.input_ms = max((t for t in times if t is not None), default=when)
            else:
                lane.input_ms = when
        elif kind not in _OTHER_TURNS and isinstance(value.get("tokens"), dict) and value["tokens"]:
            # (Qwen Code's ``qwen`` messages went unread, and unlisted, this way.)
            self.skipped.append((line, f"message of a type the audit does not read ({str(kind)[:40]!r}) with tokens: not counted"))
        self.node_after[mid] = lane.parent

    def _model_message(self, line: int, value: dict, when: int | None, lane: _Lane, mid: str) -> None:
        lane.blocks += 1
        tokens = value.get("tokens")
        model = value.get("model") if isinstance(value.get("model"), str) and value.get("model") else lane.model
        if not isinstance(tokens, dict) or not tokens:
            self.skipped.append((line, "model message without tokens (its call's usage was not recorded)"))
            return
        if all(type(v) is int and v == 0 for v in tokens.values()):
            # Gemini CLI writes zeros where the response carried no usageMetadata: the call was
            # made (no call has an empty prompt) but its usage was not recorded.
            self.skipped.append((line, "model message whose tokens are all zero (its call's usage was not recorded)"))
            return
        where = f"{self.name}:{line}"
        usage = _usage(tokens, where, raw=False)
        key = (self.session_id, mid) if self.session_id is not None else None
        if key is not None and key in self.seen and not self.seen[key].startswith(f"{self.agent}:{self.name}#"):
            # Gemini CLI 0.39 on: resuming a .json session rewrites its messages into a .jsonl.
            # Gemini CLI 0.29 on: moving to project-named folders copies ~/.gemini/tmp/<hash>/
            # into ~/.gemini/tmp/<project>/ and leaves the old one, so a .json is there twice
            # (its bytes differ once either copy is written again).
            self.skipped.append((line, SEEN_JSONL if self.name.endswith(".jsonl") else SEEN_COPY))
            lane.parent = self.seen[key]
            lane.events = []
            lane.blocks = 0
            lane.model = str(model or lane.model or NO_MODEL)
            return
        total = tokens.get("total")
        if isinstance(total, int) and not isinstance(total, bool):
            self.tokens_total += total
            self.tokens_seen = True
        self._add(line, lane, str(model or NO_MODEL), usage, lane.input_ms if lane.input_ms is not None else when, mid)

    def _rewind(self, mid: str) -> None:
        lane = self.lane()
        if mid in self.history:
            self.history = self.history[: self.history.index(mid)]
            lane.parent = self.node_before.get(mid)
        else:
            self.history = []
            lane.parent = None
        lane.events.append(("rewind", f"/rewind to before message {mid}"))

    def _history(self, messages: list) -> None:
        ids = [m["id"] for m in messages if isinstance(m, dict) and isinstance(m.get("id"), str)]
        lane = self.lane()
        old = self.history
        if ids[: len(old)] == old:
            # Additions only: a bootstrapped history, synthetic turns, or messages a batch holds
            # before (or instead of) their own lines; each is walked once, in the batch's order.
            for mid in ids[len(old):]:
                if mid not in self.walked:
                    self._walk_message(mid)
                elif mid not in self.history:
                    self.history.append(mid)
            return
        if old[: len(ids)] == ids:  # the rollback of an aborted turn: the prompt is an earlier one
            lane.parent = self.node_after.get(ids[-1]) if ids else None
            self.history = ids
            return
        lane.events.append(("compaction", f"history rewritten, {len(old)} -> {len(ids)} messages (chat compression or tool-output masking)"))
        lane.parent = None
        self.history = []
        for mid in ids:
            _, value = self.latest[mid]
            if mid not in self.walked and isinstance(value.get("tokens"), dict) and value["tokens"]:
                self._walk_message(mid)  # a call the batch alone records
            else:
                self.walked.add(mid)
                self.history.append(mid)
                self.node_before.setdefault(mid, None)
                self.node_after.setdefault(mid, None)

    # --- Qwen Code --------------------------------------------------------------------------

    def qwen(self, record: Record, value: dict) -> None:
        self.agent = "qwen-code"
        if isinstance(value.get("version"), str):
            self.version = value["version"]
        if self.qwen_session is None and isinstance(value.get("sessionId"), str):
            self.qwen_session = value["sessionId"]
        where = f"{self.name}:{record.line}"
        agent = value.get("agentId")
        lane = self.lane(f"agent:{agent}", "subagent") if isinstance(agent, str) and agent else self.lane()
        if value.get("isSidechain") is True and isinstance(agent, str) and agent and agent not in self.meta_tried:
            self.meta_tried.add(agent)
            self._agent_meta(lane, agent)
        uuid, parent_uuid = value.get("uuid"), value.get("parentUuid")
        if isinstance(parent_uuid, str) and parent_uuid in self.qwen_node:
            lane.parent = self.qwen_node[parent_uuid]
        when = parse_time_ms(value.get("timestamp"), where) if "timestamp" in value else None
        kind, subtype = value.get("type"), value.get("subtype")
        if isinstance(subtype, str) and subtype.startswith(_MANAGED_PREFIX):
            # Qwen Code's managed engine: events whose payloads point at resources kept outside
            # the file; a model call's usage is one of them (model.attempt usageRef).
            self.managed += 1
            event = as_dict(value.get("managedSession"))
            payload = as_dict(event.get("payload"))
            if event.get("kind") == "model.attempt" and payload.get("state") == "output_committed":
                self.skipped.append((record.line, "managed-engine model call: its usage is a resource outside the file (usageRef), not read"))
        elif kind == "system":
            if subtype == "chat_compression":
                lane.events.append(("compaction", "chat compression"))
                lane.parent = None
            elif subtype == "rewind":
                lane.events.append(("rewind", "/rewind"))
            elif subtype == "ui_telemetry":
                self._qwen_telemetry(record.line, as_dict(as_dict(value.get("systemPayload")).get("uiEvent")), where)
            elif subtype == FORK_BOOTSTRAP and isinstance(agent, str) and agent:
                self._fork_bootstrap(lane, value)
        elif kind in ("user", "tool_result"):
            lane.blocks += 1
            lane.input_ms = when
            if kind == "user" and subtype is None:
                lane.events.append(("user_turn", ""))
        elif kind == "assistant":
            lane.blocks += 1
            usage = value.get("usageMetadata")
            model = value.get("model") if isinstance(value.get("model"), str) and value.get("model") else lane.model
            origin = self._qwen_origin(value)
            if not isinstance(usage, dict) and subtype == REALTIME_SUBTYPE:
                self.skipped.append((record.line, REALTIME_REPLY))
            elif not isinstance(usage, dict):
                self.skipped.append((record.line, "assistant record without usageMetadata"))
            elif origin in self.seen and not self.seen[origin].startswith(f"{self.agent}:{self.name}#"):
                # /branch copies a session's records verbatim (same uuid, forkedFrom) into a new one.
                self.skipped.append((record.line, "call already counted from the session it was branched from (/branch copy)"))
                lane.parent = self.seen[origin]
                lane.events = []
                lane.blocks = 0
                lane.model = str(model or lane.model or NO_MODEL)
            elif value.get("isSidechain") is True and isinstance(agent, str) and agent and not self._agent_call(
                    record.line, lane, agent, _usage(usage, where, raw=True)):
                pass  # (a subagent transcript's call the session's telemetry counted: skipped, listed)
            else:
                sent = lane.input_ms if lane.input_ms is not None else when
                reported = _usage(usage, where, raw=True)
                paired = self._pair_record(lane, reported)
                done = None if paired is None else self.qwen_ended.get(paired)
                self._add(record.line, lane, str(model or NO_MODEL), reported, sent, str(uuid), done)
                self._fork_spawn(value, str(uuid))
                if origin is not None and lane.parent is not None:
                    self.seen.setdefault(origin, lane.parent)
                if value.get("isSidechain") is True and isinstance(agent, str) and agent and lane.parent is not None:
                    self.seen.setdefault(self._agent_key(agent, reported), lane.parent)
                total = usage.get("totalTokenCount")
                if isinstance(total, int) and not isinstance(total, bool):
                    self.tokens_total += total
                    self.tokens_seen = True
            lane.input_ms = when
        if isinstance(uuid, str):
            self.qwen_node[uuid] = lane.parent

    def qwen_stream(self, record: Record, value: dict) -> None:
        """A message of Qwen Code's headless output (see the module doc)."""
        self.agent = "qwen-code"
        kind, subtype = value.get("type"), value.get("subtype")
        if kind == "system" and subtype == "init" and isinstance(value.get("qwen_code_version"), str):
            self.version = value["qwen_code_version"]
        if (kind == "result" and isinstance(value.get("usage"), dict) and "input_tokens" in value["usage"]
                and not isinstance(value.get("parent_tool_use_id"), str)):  # (totals with no prompt count are none to check)
            where, usage = f"{self.name}:{record.line}", value["usage"]
            prompt = count(usage.get("input_tokens"), where, "usage.input_tokens")
            read = count(usage.get("cache_read_input_tokens"), where, "usage.cache_read_input_tokens")
            uuid = value.get("uuid")
            if not (isinstance(uuid, str) and uuid in self.qwen_counted):  # (a result seen again is one run's)
                before = self.run_totals or (0, 0)
                self.run_totals = (before[0] + prompt, before[1] + read)
            if isinstance(uuid, str):
                self.qwen_counted.add(uuid)
        if kind not in ("user", "assistant"):
            return  # init, result (the run's totals), stream_event (partial messages)
        parent = value.get("parent_tool_use_id")
        run = value.get("session_id")
        run = run if isinstance(run, str) else None
        main = self.qwen_runs.setdefault(run, f"session-{len(self.qwen_runs) + 1}" if self.qwen_runs else "main")
        lane = self.lane(f"agent:{parent}", "subagent") if isinstance(parent, str) and parent else self.lane(main, "main")
        lane.blocks += 1
        message = as_dict(value.get("message"))
        if kind == "user":
            content = message.get("content")
            if not (isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)):
                lane.events.append(("user_turn", ""))
            return
        where = f"{self.name}:{record.line}"
        usage = message.get("usage")
        if not isinstance(usage, dict):
            self.skipped.append((record.line, "assistant message without usage"))
            return
        # Gemini's usage under Claude's names: input_tokens is the whole prompt, the read inside it
        # (checked here, so an error names the fields the file has, not Gemini's).
        prompt, read, output = (count(usage.get(key), where, f"message.usage.{key}")
                                for key in ("input_tokens", "cache_read_input_tokens", "output_tokens"))
        if read > prompt:
            raise UserError(f"{where}: message.usage: cache_read_input_tokens ({read}) exceed input_tokens ({prompt}), "
                            "which Qwen Code reports as the whole prompt")
        raw = {"promptTokenCount": prompt, "cachedContentTokenCount": read, "candidatesTokenCount": output}
        reported = _usage(raw, where, raw=True)
        if reported.is_empty:
            self.skipped.append((record.line, _QWEN_SPLIT))
            return
        uuid = value.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.qwen_counted:  # (the same run's output twice in the file: counted once)
                self.skipped.append((record.line, f"assistant message {uuid[:40]} again: counted once"))
                return
            self.qwen_counted.add(uuid)
        model = message.get("model")
        self._add(record.line, lane, str(model) if isinstance(model, str) and model else lane.model or NO_MODEL, reported, None,
                  str(uuid))

    @staticmethod
    def _qwen_origin(value: dict) -> tuple[str, str] | None:
        """Where a Qwen Code record was first written: ``forkedFrom {sessionId, messageUuid}`` on a
        /branch copy, else its own session and uuid (None: neither is a string)."""
        forked = value.get("forkedFrom")
        if isinstance(forked, dict) and isinstance(forked.get("sessionId"), str) and isinstance(forked.get("messageUuid"), str):
            return ("qwen:" + forked["sessionId"], forked["messageUuid"])
        sid, uuid = value.get("sessionId"), value.get("uuid")
        return ("qwen:" + sid, uuid) if isinstance(sid, str) and isinstance(uuid, str) else None

    def _qwen_telemetry(self, line: int, event: dict, where: str) -> None:
        """A Qwen Code ``ui_telemetry`` record's event: a call's usage kept for the pairing, or a
        failed call listed (see the module doc)."""
        name = event.get("event.name")
        if name == "qwen-code.api_error":
            self.skipped.append((line, "failed call (qwen-code.api_error telemetry): no usage"))
            return
        if name != "qwen-code.api_response":
            return  # tool calls, and any event of no model call
        # Checked under the event's own names (an error names the fields the file has).
        got = {key: count(event.get(field), where, f"systemPayload.uiEvent.{field}") for key, field in _TELEMETRY_KEYS}
        if got["cachedContentTokenCount"] > got["promptTokenCount"]:
            raise UserError(f"{where}: systemPayload.uiEvent: cached_content_token_count ({got['cachedContentTokenCount']}) "
                            f"exceeds input_token_count ({got['promptTokenCount']}), which Qwen Code reports as the whole prompt")
        usage = _usage(got, where, raw=True)
        ended = parse_time_ms(event.get("event.timestamp"), where) if "event.timestamp" in event else None
        took = event.get("duration_ms")
        sent = ended - took if ended is not None and type(took) is int and 0 <= took <= ended else ended
        model = event.get("model")
        prompt_id = event.get("prompt_id")
        parts = prompt_id.split("#") if isinstance(prompt_id, str) else []
        # The whole id: two subagents may share a long head (a cut merged their lanes into one).
        agent = parts[1] if len(parts) == 3 and parts[1] else ""
        if ended is not None:
            self.qwen_ended[line] = ended
        found = (line, sent, model if isinstance(model, str) and model else NO_MODEL, usage, agent)
        auth = event.get("auth_type")
        handler = agent_handler(f"qwen-code/{auth}") if isinstance(auth, str) else None
        if handler is not None and handler[0].reports_usage:
            self.qwen_served.setdefault(found[2], handler[0].name)
        self.qwen_events.append(found)
        if self.qwen_records.get(usage):  # the call of a record read before its event
            self.qwen_records[usage] -= 1
            self.qwen_paired += 1
            self.qwen_last = line
        else:
            self.qwen_pending.append(found)

    def _pair_record(self, lane: _Lane, usage: Usage) -> int | None:
        """Pair the call of a Qwen Code assistant record with its api_response event; an earlier
        unpaired event of the same prompt was the same request sent before (a retried reply),
        counted now in the record's lane, before it. The line of the event paired, None where
        none came before the record."""
        found = self.qwen_pending.pair(usage, self.qwen_last)
        if found is None:
            self.qwen_records[usage] = self.qwen_records.get(usage, 0) + 1
            return None
        self.qwen_paired += 1
        event, retries = found
        self.qwen_last = event[0]
        for retry in retries:
            self._add_unrecorded(lane, retry)
        return event[0]

    def _add_unrecorded(self, lane: _Lane, event: _Event) -> None:
        line, sent, model, usage, _ = event
        key = f"telemetry@{line}"
        self.qwen_unrecorded.add(key)
        self._add(line, lane, model, usage, sent, key, self.qwen_ended.get(line))

    def pair_telemetry(self) -> None:
        """Count the api_response events no record's call paired with as calls of their own: a
        subagent's in its lane, each extending its previous call; any other in ``side:telemetry``
        (see the module doc)."""
        if not self.qwen_pending or (not self.qwen_paired and any(self.qwen_records.values())):
            return  # none, or no event is any record's call: the telemetry counts another way, not read
        for event in self.qwen_pending:
            if event[4]:
                lane = self.lane(f"agent:{event[4]}", "subagent")
            else:
                lane = self.lane("side:telemetry", "side")
                lane.parent = None  # its prompt is not in the file: a chain of its own
            lane.blocks = 1
            if event[4] and not self._agent_call(event[0], lane, event[4], event[3]):
                continue
            self._add_unrecorded(lane, event)
            if event[4] and lane.parent is not None:
                self.seen.setdefault(self._agent_key(event[4], event[3]), lane.parent)

    def _agent_key(self, agent: str, usage: Usage) -> tuple[str, str]:
        """The key of a subagent's call in :attr:`seen`: its session, subagent, counts, and how
        many calls of the same counts the subagent made before it (as :meth:`_agent_call` counted)."""
        n = self.qwen_agent_calls.get((agent, usage), 1) - 1
        return (f"qwen-agent:{self.qwen_session}#{agent}",
                f"{usage.uncached}/{usage.cache_read}/{usage.output}#{n}")

    def _agent_call(self, line: int, lane: _Lane, agent: str, usage: Usage) -> bool:
        """Whether a Qwen Code subagent's call (a transcript record's or a telemetry event's) is
        to be counted here: False, listed as skipped, where another file of the session counted
        it (Qwen Code 0.24 logs a subagent's calls in both); the lane then extends that call."""
        self.qwen_agent_calls[(agent, usage)] = self.qwen_agent_calls.get((agent, usage), 0) + 1
        node = self.seen.get(self._agent_key(agent, usage))
        if node is None or node.startswith(f"{self.agent}:{self.name}#"):
            return True
        self.skipped.append((line, SEEN_AGENT))
        if (name := self.fork_pending.pop(lane.name, None)) is not None:
            # The fork's first call, counted from the session's telemetry: it extends the call
            # that spawned the fork, which the audit links once every file is read.
            self.fork_starts.append((node, name))
        lane.parent = node
        lane.events = []
        lane.blocks = 0
        return False

    def _agent_meta(self, lane: _Lane, agent: str) -> None:
        """The model of a Qwen Code subagent transcript's lane, from the sidecar beside it
        (``agent-<id>.meta.json``, see :data:`META_SUFFIX`) where the sidecar names one: its
        records name none, and its calls counted from the session's telemetry take the model the
        events name instead (this lane's calls are then skipped as counted). A sidecar not JSON,
        not of this agent, or whose ``model`` is not a name is left with a note; one without
        ``model`` (older releases) says nothing."""
        name = self.path.name
        if not (name.startswith("agent-") and name.endswith(".jsonl")):
            return
        meta = self.path.with_name(name.removesuffix(".jsonl") + META_SUFFIX)
        try:
            # A pipe, or a link to a device (/dev/zero), would never end: only a regular file is read.
            if not stat.S_ISREG(meta.stat().st_mode):
                self.meta_notes.append(f"{meta}: not a regular file (a pipe or a device may never end): the subagent's model is not taken from it")
                return
            text = meta.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError) as error:
            self.meta_notes.append(f"{meta}: not read ({type(error).__name__}): the subagent's model is not taken from it")
            return
        try:
            value = loads(text, str(meta), whole_file=True)  # (the project's reader: depth, finite numbers, valid Unicode)
        except UserError as error:
            self.meta_notes.append(f"{error}: the subagent's model is not taken from it")
            return
        if not isinstance(value, dict):
            self.meta_notes.append(f"{meta}: not a JSON object: the subagent's model is not taken from it")
            return
        owner = value.get("agentId")
        if isinstance(owner, str) and owner != agent:
            self.meta_notes.append(f"{meta}: names agent {owner!r}, not {agent!r}: the subagent's model is not taken from it")
            return
        flags = value.get("persistedCliFlags")
        if "model" in value:
            model = value["model"]
        elif value.get("agentType") == FORK_TYPE and isinstance(flags, dict) and "model" in flags:
            model = flags["model"]  # (a fork runs on its parent's model: what the launch flags name)
        else:
            return
        if not isinstance(model, str) or not model.strip():
            self.meta_notes.append(f"{meta}: its model is not a name ({type(model).__name__}): not taken")
            return
        if lane.model is None:
            lane.model = model
            self.meta_models.append((meta.name, model))

    def _fork_bootstrap(self, lane: _Lane, value: dict) -> None:
        """A Qwen Code subagent transcript's ``agent_bootstrap`` record: for a fork (``kind:
        "fork"``), its lane's first call extends the parent's call that spawned it, which the
        bootstrap history names by its function calls' ids (see :data:`FORK_TYPE`)."""
        payload = as_dict(value.get("systemPayload"))
        if payload.get("kind") != "fork":
            return
        name = _fork_name(value.get("sessionId"), payload.get("history"))
        if name is None:
            self.fork_unnamed += 1
            return
        lane.parent = call_parent(name)
        lane.events = []
        self.fork_pending[lane.name] = name

    def _fork_spawn(self, value: dict, key: str) -> None:
        """Note a counted Qwen Code call whose reply spawns a fork subagent (a function call with
        ``subagent_type: "fork"``): the fork's transcript names it by its function calls' ids."""
        parts = as_dict(value.get("message")).get("parts")
        if not isinstance(parts, list):
            return
        calls = [as_dict(as_dict(part).get("functionCall")) for part in parts]
        forks = [as_dict(call.get("args")) for call in calls if as_dict(call.get("args")).get("subagent_type") == FORK_TYPE]
        if not forks:
            return
        # A fork of the last N turns (fork_turns) sends those turns after the startup context
        # alone: not this call's prompt.
        whole = all(fork.get("fork_turns") in (None, "all") for fork in forks)
        self.fork_bounded += not whole
        session = value.get("sessionId")
        for call in calls:
            ident = call.get("id")
            if isinstance(ident, str) and ident and isinstance(session, str):
                self.fork_spawns[_FORK_NAME.format(session=session, call=ident)] = key if whole else ""

    # --- both -------------------------------------------------------------------------------

    def _head(self, lane: _Lane) -> str:
        """The key of the unlogged head a lane's prompts start with: one per lane kind, and per
        subagent type in Qwen Code (a subagent ``<type>-<random suffix>``: each type has its own
        system prompt and tools); within that, one per workspace and model. Gemini CLI builds the
        system prompt from the workspace's GEMINI.md memory and a variant of the model (``getCoreSystemPrompt``,
        packages/core/src/core/prompts.ts of google-gemini/gemini-cli: ``isGemini3`` picks the
        snippets) and sends the workspace's tools (its MCP servers): one workspace's head is not
        another's, nor one model's another's."""
        kind = lane.kind
        if self.agent == "qwen-code" and lane.kind == "subagent":
            kind = f"subagent:{QWEN_AGENT_SUFFIX.sub('', lane.name.removeprefix('agent:'))}"
        return f"{self.agent}:{kind}:{self.project}:{lane.model or NO_MODEL}"

    def _add(self, line: int, lane: _Lane, model: str, usage: Usage, sent: int | None, key: str, done: int | None = None) -> None:
        lane.send_to(model)
        if lane.mode_change is not None:
            # Gemini CLI builds its system prompt for the approval mode: the prompt sent now
            # shares only the start of the head with the calls before it.
            lane.events.append(("system_change", f"approval mode changed ({lane.mode_change}): Gemini CLI's system prompt depends on it"))
            lane.parent = None
            lane.mode_change = None
        node = f"{self.agent}:{self.name}#{key}"
        if (name := self.fork_pending.pop(lane.name, None)) is not None and lane.parent == call_parent(name):
            self.fork_linked.add(name)
        self.out.append(
            TraceRequest(
                file=self.name,
                line=line,
                lane=lane.name,
                lane_kind=lane.kind,
                seq=len(self.out),
                sent_ms=sent,
                ready_ms=None,
                provider=counted_provider(model),
                model=model,
                usage=usage,
                prefix=Prefix(self._head(lane), node, lane.parent, max(1, lane.blocks)),
                events=tuple(lane.events),
                request_id=key,
                agent_version=self.version,
                source_format=NAME,
                path=self.paths.get(key, ""),
                done_ms=done,
            )
        )
        if self.session_id is not None and self.agent == "gemini-cli":
            self.seen.setdefault((self.session_id, key), node)
        lane.parent = node
        lane.events = []
        lane.blocks = 0


def _fork_name(session: object, history: object) -> str | None:
    """The name of the parent's call a Qwen Code fork's bootstrap ``history`` extends: the first
    function call id of the last model turn holding function calls (the parent's reply that
    spawned the fork, cloned), in ``session``; None where there is none."""
    if not isinstance(session, str) or not isinstance(history, list):
        return None
    for content in reversed(history):
        content = as_dict(content)
        parts = content.get("parts")
        if content.get("role") != "model" or not isinstance(parts, list):
            continue
        ids = [ident for part in parts if isinstance(ident := as_dict(as_dict(part).get("functionCall")).get("id"), str) and ident]
        if ids:
            return _FORK_NAME.format(session=session, call=ids[0])
    return None


def _project_folder(path: Path) -> str:
    """The folder a session file's ``chats/`` is in (``~/.gemini/tmp/<project>/``,
    ``~/.qwen/projects/<project>/``; a subagent's file is one folder deeper), else its own folder."""
    for folder in path.parents:
        if folder.name == "chats":
            return str(folder.parent)
    return str(path.parent)


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A session's requests; see the module doc."""
    session = _Session(path, ctx.gemini_calls)
    seen_any = False
    for record in objects(path, records, " (a Gemini CLI or Qwen Code session record)"):
        seen_any = True
        value: dict = record.value  # type: ignore[assignment]
        if isinstance(value.get("sessionId"), str) and "projectHash" in value:
            session.metadata(value)
            messages = value.get("messages")
            if isinstance(messages, list):  # the whole session (.json): its messages, in order
                for n, item in enumerate(messages):
                    if isinstance(item, dict) and isinstance(item.get("id"), str):
                        session.message(record, item, f"messages[{n}]")
        elif "uuid" in value and "sessionId" in value:
            session.qwen(record, value)
        elif "session_id" in value and isinstance(value.get("type"), str):
            session.qwen_stream(record, value)
        elif isinstance(value.get("$rewindTo"), str):
            session.order.append(("rewind", value["$rewindTo"]))
        elif "$set" in value:
            session.set_history(record, as_dict(value["$set"]))
        elif isinstance(value.get("id"), str) and "type" in value:
            session.message(record, value)
        elif "history" in value or "parts" in value:
            session.saved_chat = True
        elif _is_prompt_log(value):
            session.prompt_log = True
        elif _is_qwen_runtime(value):
            session.runtime_version = value["qwen_version"]
        else:
            raise UserError(f"{session.name}:{record.line}: not a Gemini CLI session record (no id, sessionId, $set or $rewindTo)")
    if not seen_any:
        raise UserError(f"{session.name}:1: empty file, no session records")
    session.replay()
    session.pair_telemetry()
    served = session.qwen_served
    if served:  # (a record may come before its event: decided once the file is read)
        session.out = [msgspec.structs.replace(r, provider=served[r.model]) if r.provider == UNKNOWN.name and r.model in served else r
                       for r in session.out]
    return session.out, FileSummary(session.name, NAME, len(session.out), tuple(session.skipped), _notes(session),
                                    call_parents=tuple(sorted(session.fork_linked)),
                                    call_aliases=tuple(sorted(session.fork_spawns.items())),
                                    start_links=tuple(session.fork_starts))


#: The agents' home folders (``~/.qwen``, ``~/.gemini``): names of folders, not of providers.
_QWEN_HOME, _GEMINI_HOME = ".qwen", ".gemini"


def _notes(session: _Session) -> tuple[str, ...]:
    # Qwen Code, a fork of Gemini CLI, writes the same logs.json (and legacy chats) under ~/.qwen/tmp/:
    # where no record names the agent, the home folder the file lives in does.
    qwen_home = session.agent != "qwen-code" and _QWEN_HOME in session.path.parts and _GEMINI_HOME not in session.path.parts
    who = "Qwen Code" if session.agent == "qwen-code" or qwen_home else "Gemini CLI"
    # (a runtime file alone holds no session: nothing of a head to say)
    runtime_only = session.runtime_version is not None and not session.out and not session.skipped and session.session_id is None
    notes = [] if runtime_only else [f"{who}'s system prompt and tool declarations are not in a session file: the head is an opaque prefix"]
    if session.managed:
        notes.insert(0, f"{session.managed:,} Qwen Code managed-engine record(s) (managed_session_*): that engine keeps each "
                     "call's messages and usage as resources outside the transcript (usageRef), so its calls are listed "
                     "as skipped, not counted; only the ordinary records before them are read")
    if (not session.out and not session.skipped and session.agent == "gemini-cli" and session.session_id is not None
            and not session.prompt_log and not session.saved_chat):
        kinds = [value.get("type") for _, value in session.latest.values()]
        if not kinds:  # (Cloud Shell's a2a-server sessions: a header, or the context written, never sent)
            notes.insert(0, f"no model call in this {who} session: it holds its header only, no message")
        elif MODEL_TURN not in kinds:
            users = kinds.count("user")
            notes.insert(0, f"no model call in this {who} session: its {len(kinds):,} message(s) are {users:,} user "
                            f"message(s){'' if users == len(kinds) else ' and notices'} and no model reply")
    if session.prompt_log and not session.out:
        notes.append(f"a {who} logs.json: the prompts the user typed (sessionId, messageId, message), no model call or usage: "
                     f"no calls to audit here{CHATS_BESIDE}")
    if session.runtime_version is not None and not session.out:
        notes.append(f"a Qwen Code runtime file (Qwen Code {session.runtime_version}): the process that ran the session "
                     f"(pid, host, folder, start), no model call or usage: {_RUNTIME_NONE}{RUNTIME_BESIDE}")
    if session.saved_chat and not session.out:
        notes.append(f"a saved chat or shared export holds the conversation, not its usage: no calls to audit here{CHATS}")
    if session.run_totals is not None:
        prompt, read = session.run_totals
        counted = (sum(r.usage.prompt for r in session.out if r.usage), sum(r.usage.cache_read for r in session.out if r.usage))
        verdict = "the same" if counted == (prompt, read) else f"counted here {counted[0]:,} and {counted[1]:,}"
        notes.append(f"Qwen Code's own run totals (result usage): prompt {prompt:,}, read {read:,} ({verdict})")
    if session.qwen_events:
        events = len(session.qwen_events)
        if not session.qwen_paired and any(session.qwen_records.values()):
            notes.append(f"Qwen Code's telemetry logs {events:,} call(s) (qwen-code.api_response), none with the counts of any "
                         "record's call: not counted")
        else:
            usages = [e[3] for e in session.qwen_events]
            prompt, read = sum(u.prompt for u in usages), sum(u.cache_read for u in usages)
            out = [r.usage for r in session.out if r.usage]
            counted = (len(out), sum(u.prompt for u in out), sum(u.cache_read for u in out))
            verdict = "the same" if counted == (events, prompt, read) else f"counted here {counted[0]:,} calls, {counted[1]:,} and {counted[2]:,}"
            alone = len(session.qwen_unrecorded)
            extra = f"; {alone:,} with no record of the tree, counted from their events" if alone else ""
            notes.append(f"Qwen Code's telemetry logs {events:,} call(s) (qwen-code.api_response): prompt {prompt:,}, read {read:,} "
                         f"({verdict}){extra}")
    for model, provider in sorted(session.qwen_served.items()):
        if model in session.qwen_named and any(r.model == model and r.provider == provider for r in session.out):
            notes.append(f"{model}: a name of no provider, read with {provider}'s rules: a model of Qwen Code's own login "
                         "(QWEN_OAUTH_MODELS, the agent handler qwen-code/qwen-oauth), which a .json session names no login for")
        elif any(r.model == model and r.provider == provider for r in session.out):
            notes.append(f"{model}: a name of no provider, read with {provider}'s rules: Qwen Code's telemetry names the login "
                         f"that served it (auth_type, the agent handler qwen-code/... of {provider}'s rules)")
    forks = len(session.fork_linked) + len(session.fork_starts)
    if forks:
        notes.append(f"{forks:,} Qwen Code fork subagent(s) (agent_bootstrap, kind fork): the first call extends the parent's "
                     "call that spawned it (named by its function call's id), measured against what that call left cached "
                     "where its log is in the audit (else the head's)")
    counted_models = {r.model for r in session.out}
    for meta, model in session.meta_models:
        if model in counted_models:
            notes.append(f"the subagent's records name no model: {model} taken from {meta} beside it (its model field)")
    notes.extend(session.meta_notes)
    if session.fork_unnamed:
        notes.append(f"{session.fork_unnamed:,} Qwen Code fork subagent(s) whose bootstrap history names no function call of "
                     "the parent's: not linked, measured from the head")
    if session.fork_bounded:
        notes.append(f"{session.fork_bounded:,} call(s) spawning a Qwen Code fork of the last turns alone (fork_turns): the fork "
                     "sends the startup context and those turns, not this call's prompt: measured from its head")
    if session.tokens_seen:
        counted = sum(r.usage.prompt + r.usage.output for r in session.out if r.usage and r.request_id not in session.qwen_unrecorded)
        # (what it is compared with named either way: the calls' prompt + output counted here)
        verdict = ("the same as the calls' prompt + output counted here" if counted == session.tokens_total
                   else f"the calls' prompt + output counted here {counted:,}")
        notes.append(f"{who}'s own token totals sum to {session.tokens_total:,} (input + tool + output + thoughts; {verdict})")
    return tuple(notes)


FORMAT = LogFormat(
    name=NAME,
    noun="Gemini CLI session",
    nouns="Gemini CLI sessions",
    description="Gemini CLI and Qwen Code session files (chats/session-*.json or .jsonl; Qwen Code chats/*.jsonl) and qwen -p --output-format stream-json output",
    detect=detect,
    read=read,
    usage="subset",
    versions=(
        "Gemini CLI before 0.39 (to April 2026): chats/session-*.json, one pretty-printed object with messages",
        "Gemini CLI 0.39 and later: chats/session-*.jsonl, a metadata line, message writes by id, $set (messages batches) and $rewindTo",
        "Gemini CLI subagent sessions (kind: subagent, chats/<parent id>/<id>.jsonl)",
        "Gemini CLI 0.39 and later resuming a .json session: its messages copied into a .jsonl beside it (counted once)",
        "Qwen Code chats/<session>.jsonl: a uuid/parentUuid tree with usageMetadata, chat_compression records, subagents by agentId",
        "Qwen Code /branch copies (forkedFrom on every copied record): counted once",
        "Qwen Code fork subagents (subagents/<session>/agent-<id>.jsonl opening with agent_bootstrap, kind fork): "
        "the first call extends the parent's call whose reply spawned the fork",
        "Qwen Code 0.4 and later ui_telemetry records (qwen-code.api_response, api_error): the calls no record holds "
        "(a retried reply, 0.14 subagents by prompt_id, side calls) counted from their events, failed calls listed",
        "Qwen Code's managed engine (managed_session_*_v1 records): usage kept outside the file (usageRef), its calls listed as skipped",
        "Qwen Code's realtime conversation records (subtype realtime_message, late 2026): the assistant's without usage, "
        "listed as a realtime reply, no call",
        "saved chats (/chat save checkpoints) and /chat share JSON exports: contents only, no usage",
        "qwen -p --output-format stream-json / json output: Claude Code's SDK message shapes with Gemini's usage "
        "(input_tokens includes cache_read_input_tokens); a response split by block type carries its usage on the last part",
    ),
    aliases=("qwen-code",),
)
