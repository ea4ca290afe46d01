"""Kimi CLI (Kimi Code CLI) sessions: their ``wire.jsonl``.

Kimi CLI (MoonshotAI/kimi-cli) keeps a session under ``~/.kimi/sessions/<md5 of the work
dir>/<session id>/``: ``context.jsonl`` (the messages, with ``_checkpoint`` and ``_usage``
markers) and, since November 2025, ``wire.jsonl``, every message of its wire protocol one a
line: ``{timestamp: <epoch seconds>, message: {type, payload}}`` (``kimi_cli/wire/file.py``).
Since January 2026 (wire protocol 1.1) the file opens with ``{type: "metadata",
protocol_version}``.

After each model call (a *step*) the agent sends ``StatusUpdate {token_usage, message_id,
context_usage, ...}``; ``token_usage`` is kosong's ``TokenUsage {input_other, output,
input_cache_read, input_cache_creation}`` (since December 2025; earlier ``StatusUpdate``
carried ``context_usage`` only, and such a file has no calls to count). kosong normalizes each
provider's usage so that ``input_other`` excludes the reads and writes (additive): Kimi's
``cached_tokens`` and OpenAI's ``cached_tokens`` are taken out of the prompt count, Anthropic's
``input_tokens`` already excludes them. Only ``input_cache_creation`` of Anthropic is ever set.
(Its Gemini provider, ``google_genai``, writes the whole ``prompt_token_count`` into
``input_other``: a Gemini-served session over-counts its uncached input by its reads; the wire
does not say which provider served it.)

One request per ``StatusUpdate`` with ``token_usage``, in file order. The step began at the
lane's last ``StepBegin`` (``sent_ms``), its response at the first content part after it
(``ready_ms``), and it ended at the ``StatusUpdate`` (``done_ms``). ``TurnBegin`` and
``SteerInput`` are user turns; ``CompactionBegin``/``CompactionEnd`` a compaction (the
compaction call's own usage is not on the wire: not counted); ``StepRetry`` and
``StepInterrupted`` attempts without usage are listed as skipped.

A subagent's events come wrapped in ``SubagentEvent {parent_tool_call_id (earlier
task_tool_call_id), agent_id, subagent_type, event}``: a lane of their own. Newer versions also
write the subagent's own ``subagents/<agent id>/wire.jsonl``: a call seen in both files (same
``message_id``) is counted once.

The wire names no model. Who served a call is read from its ``message_id``: ``msg_...`` is
Anthropic's, ``resp_...`` OpenAI's Responses; anything else is Moonshot (Kimi), Kimi CLI's
default provider, with the model ``kimi-for-coding`` (what Kimi CLI's own login configures).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers.base import count
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, objects, parse_time_ms
from prefixbench.workloads.logs.history import make_message
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import FileSummary, LaneKind, LoggedMessage, Prefix, TraceRequest

NAME = "kimi-cli"
#: The model a call is put down to when the wire says nothing else (Kimi CLI's default).
DEFAULT_MODEL = "kimi-for-coding"
#: The wire's event types (the ones read, and the others it is known to carry).
_TYPES = frozenset({
    "TurnBegin", "TurnEnd", "SteerInput", "StepBegin", "StepInterrupted", "StepRetry", "CompactionBegin",
    "CompactionEnd", "StatusUpdate", "ContentPart", "ToolCall", "ToolCallPart", "ToolResult", "SubagentEvent",
    "ApprovalRequest", "ApprovalResponse", "ApprovalRequestResolved", "ToolCallRequest", "QuestionRequest",
    "QuestionResponse", "HookTriggered", "HookResolved", "HookRequest", "HookResponse", "MCPLoadingBegin",
    "MCPLoadingEnd", "Notification", "PlanDisplay", "BtwBegin", "BtwEnd",
})
#: ``context.jsonl``'s marker roles (the messages file beside ``wire.jsonl``).
_CONTEXT_ROLES = ("_checkpoint", "_usage", "_system_prompt")
#: The ids of a provider's responses, to the provider and the model put down for it.
_ID_PREFIXES = (("msg_", "anthropic", "unknown"), ("resp_", "openai", "unknown"))


def detect(value: dict) -> Evidence | None:
    """A wire record ``{timestamp, message: {type, payload}}``, the metadata line, or a
    ``context.jsonl`` marker."""
    message = value.get("message")
    kind = message.get("type") if isinstance(message, dict) else None
    if isinstance(kind, str) and kind in _TYPES and "timestamp" in value and isinstance(message.get("payload"), dict):
        return Evidence.ENTRY
    if value.get("type") == "metadata" and isinstance(value.get("protocol_version"), str) and len(value) <= 3:
        return Evidence.ENTRY
    if value.get("role") in _CONTEXT_ROLES and ("id" in value or "token_count" in value or "content" in value) and len(value) <= 3:
        return Evidence.SHAPE
    return None


def _served_by(message_id: object) -> tuple[str, str]:
    if isinstance(message_id, str):
        for prefix, provider, model in _ID_PREFIXES:
            if message_id.startswith(prefix):
                return provider, model
    return "moonshot", DEFAULT_MODEL


class _Lane:
    def __init__(self, name: str, kind: LaneKind, head: str) -> None:
        self.name = name
        self.kind = kind
        self.head = head
        self.parent: str | None = None
        self.events: list[tuple[str, str]] = []
        self.blocks = 0
        self.step_ms: int | None = None
        self.ready_ms: int | None = None
        self.pending: list[LoggedMessage] = []
        self.model: str | None = None


class _Session:
    def __init__(self, path: Path, seen: dict[str, str]) -> None:
        self.path = path
        self.name = str(path)
        self.seen = seen
        self.out: list[TraceRequest] = []
        self.skipped: list[tuple[int, str]] = []
        self.lanes: dict[str, _Lane] = {}
        self.version: str | None = None
        self.status_without_usage = 0
        self.context_file = False
        self.compactions = 0
        # A subagent's own wire.jsonl (subagents/<agent id>/wire.jsonl) is that subagent's lane.
        self.own_lane = f"agent:{path.parent.name}" if path.parent.parent.name == "subagents" else "main"

    def lane(self, name: str) -> _Lane:
        found = self.lanes.get(name)
        if found is None:
            kind: LaneKind = "main" if name == "main" else "subagent"
            found = self.lanes[name] = _Lane(name, kind, f"kimi-cli:{self.path.parent}:{kind}")
        return found

    def record(self, record: Record) -> None:
        value: dict = record.value  # type: ignore[assignment]
        if value.get("type") == "metadata" and "message" not in value:
            if isinstance(value.get("protocol_version"), str):
                self.version = f"wire {value['protocol_version'][:20]}"
            return
        if value.get("role") in _CONTEXT_ROLES or ("role" in value and "message" not in value):
            self.context_file = True
            return
        message = value.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise UserError(f"{self.name}:{record.line}: not a Kimi CLI wire record (no message {{type, payload}})")
        when = parse_time_ms(value.get("timestamp"), f"{self.name}:{record.line}")
        self.event(record, self.lane(self.own_lane), message, when, depth=0)

    def event(self, record: Record, lane: _Lane, message: dict, when: int | None, depth: int) -> None:
        kind = message.get("type")
        payload = message.get("payload")
        if not isinstance(payload, dict):
            raise UserError(f"{self.name}:{record.line}: wire message {str(kind)[:40]} has no payload object")
        match kind:
            case "SubagentEvent":
                inner = payload.get("event")
                agent = payload.get("agent_id") or payload.get("parent_tool_call_id") or payload.get("task_tool_call_id") or "subagent"
                if not isinstance(inner, dict):
                    raise UserError(f"{self.name}:{record.line}: SubagentEvent without an event object")
                if depth < 2:
                    self.event(record, self.lane(f"agent:{str(agent)[:80]}"), inner, when, depth + 1)
            case "TurnBegin" | "SteerInput":
                lane.events.append(("user_turn", ""))
                lane.blocks += 1
                lane.pending.append(make_message("user", payload.get("user_input")))
            case "StepBegin":
                lane.step_ms = when
                lane.ready_ms = None
            case "ContentPart" | "ToolCall" | "ToolCallPart":
                if lane.ready_ms is None:
                    lane.ready_ms = when
            case "ToolResult":
                lane.blocks += 1
                lane.pending.append(make_message("tool", as_dict(payload.get("return_value")).get("output")))
            case "StepRetry":
                self.skipped.append((record.line, f"failed attempt of step {str(payload.get('n'))[:12]} ({str(payload.get('error_type'))[:60]}), retried: no usage on the wire"))
                lane.ready_ms = None
            case "StepInterrupted":
                self.skipped.append((record.line, "step interrupted before its usage was recorded"))
            case "CompactionBegin":
                self.compactions += 1
                lane.events.append(("compaction", "context compacted (the compaction call's usage is not on the wire)"))
            case "CompactionEnd":
                lane.parent = None
                lane.pending = []
            case "StatusUpdate":
                usage = payload.get("token_usage")
                if usage is None:
                    self.status_without_usage += 1
                    return
                if not isinstance(usage, dict):
                    raise UserError(f"{self.name}:{record.line}: StatusUpdate token_usage is not an object")
                self.call(record, lane, usage, payload.get("message_id"), when)

    def call(self, record: Record, lane: _Lane, usage: dict, message_id: object, when: int | None) -> None:
        where = f"{self.name}:{record.line}"
        if "input_other" not in usage and "output" not in usage:
            self.skipped.append((record.line, "token_usage without input_other/output (no split): not counted"))
            return
        reported = Usage(
            cache_read=count(usage.get("input_cache_read"), where, "token_usage.input_cache_read"),
            cache_write_5m=count(usage.get("input_cache_creation"), where, "token_usage.input_cache_creation"),
            uncached=count(usage.get("input_other"), where, "token_usage.input_other"),
            output=count(usage.get("output"), where, "token_usage.output"),
        )
        if reported.prompt + reported.output == 0:
            self.skipped.append((record.line, "StatusUpdate whose token_usage is all zero"))
            return
        key = message_id if isinstance(message_id, str) and message_id else None
        if key is not None and key in self.seen and not self.seen[key].startswith(f"kimi-cli:{self.name}#"):
            self.skipped.append((record.line, "call already counted from another wire.jsonl of this session (a subagent's own file)"))
            lane.parent = self.seen[key]
            lane.events, lane.blocks, lane.pending = [], 0, []
            return
        provider, model = _served_by(message_id)
        if lane.model is not None and model != lane.model:
            lane.events.append(("model_change", f"{lane.model} -> {model}"))
        lane.model = model
        node = f"kimi-cli:{self.name}#{record.line}"
        self.out.append(
            TraceRequest(
                file=self.name,
                line=record.line,
                lane=lane.name,
                lane_kind=lane.kind,
                seq=len(self.out),
                sent_ms=lane.step_ms if lane.step_ms is not None else when,
                ready_ms=lane.ready_ms,
                provider=provider,
                model=model,
                usage=reported,
                prefix=Prefix(lane.head, node, lane.parent, max(1, lane.blocks + 1)),
                events=tuple(lane.events),
                request_id=key,
                agent_version=self.version,
                source_format=NAME,
                done_ms=when,
                messages=tuple(lane.pending),
            )
        )
        if key is not None:
            self.seen.setdefault(key, node)
        lane.parent = node
        lane.events, lane.blocks, lane.pending = [], 0, []
        lane.step_ms = lane.ready_ms = None


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A wire file's requests; see the module doc."""
    session = _Session(path, ctx.kimi_calls)
    seen_any = False
    for record in objects(path, records, " (a Kimi CLI wire record)"):
        seen_any = True
        session.record(record)
    if not seen_any:
        raise UserError(f"{path}:1: empty file, no wire records")
    notes = [
        "Kimi CLI's system prompt and tools are not in wire.jsonl: the head is an opaque prefix per session",
        "the wire names no model: calls are put down to the provider their message_id shows (Moonshot's kimi-for-coding otherwise)",
    ]
    if session.context_file:
        notes.append("a context.jsonl holds the messages, not per-call usage: no calls to audit here (audit the wire.jsonl beside it)")
    elif not session.out and session.status_without_usage:
        notes.append("StatusUpdate without token_usage only (Kimi CLI before December 2025): no per-call usage to audit")
    if session.compactions:
        notes.append(f"{session.compactions} compaction(s): the compaction calls' own usage is not on the wire and is not counted")
    return session.out, FileSummary(session.name, NAME, len(session.out), tuple(session.skipped), tuple(notes))


FORMAT = LogFormat(
    name=NAME,
    noun="Kimi CLI wire log",
    nouns="Kimi CLI wire logs",
    description="Kimi CLI / Kimi Code CLI sessions (~/.kimi/sessions/<hash>/<id>/wire.jsonl: StatusUpdate token_usage per step)",
    detect=detect,
    read=read,
    usage="additive",
    versions=(
        "wire.jsonl from November 2025: {timestamp, message {type, payload}}; StatusUpdate carries context_usage only (no calls)",
        "from December 2025: StatusUpdate token_usage {input_other, output, input_cache_read, input_cache_creation} and message_id",
        "wire protocol 1.1 to 1.10 (January 2026 on): a metadata line {type: metadata, protocol_version} first; later StatusUpdates add context_tokens, plan_mode, mcp_status",
        "subagents: SubagentEvent {task_tool_call_id | parent_tool_call_id, agent_id, subagent_type, event} lanes; newer versions also write subagents/<id>/wire.jsonl (counted once)",
        "context.jsonl beside it: messages only, recognised and read as no calls",
    ),
    aliases=("kimi", "kimi-code"),
    # context.jsonl's messages ({role, content}) look like a Cline conversation history.
    admits=("cline",),
)
