"""Kimi CLI (Kimi Code CLI) sessions: their ``wire.jsonl``.

Kimi CLI (MoonshotAI/kimi-cli) keeps a session under ``~/.kimi/sessions/<md5 of the work
dir>/<session id>/``: ``context.jsonl`` (the messages, with ``_checkpoint`` and ``_usage``
markers) and, since November 2025, ``wire.jsonl``, every message of its wire protocol one a
line: ``{timestamp: <epoch seconds>, message: {type, payload}}`` (``kimi_cli/wire/file.py``).
Since January 2026 (wire protocol 1.1) the file opens with ``{type: "metadata",
protocol_version}``. Read up to protocol 1.10 (MoonshotAI/kimi-cli 3749c831, May 2026; unchanged
at 4a550eff, 1.49.0, 2026-07-16).

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

Kimi Code (MoonshotAI/kimi-code, the TypeScript successor, from May 2026) keeps
``~/.kimi-code/sessions/<work dir key>/<session>/agents/<main | agent-N>/wire.jsonl``: a metadata
line ``{type: "metadata", protocol_version, created_at}``, then one durable record a line, ``{type,
...payload, time: <epoch ms>}`` (wire protocol 1.0 to 1.5). Before each model call it records
``llm.request {agentId, kind: loop | compaction, provider (the wire protocol), model, modelAlias,
thinkingEffort, systemPromptHash, toolsHash, messageCount}``, after it ``usage.record {agentId,
model, usage {inputOther, output, inputCacheRead, inputCacheCreation}, usageScope}``, additive for
every protocol (its Gemini reader takes the reads out too). One request per ``usage.record``
(all-zero usage, recorded where the provider reported none, is skipped): sent at its
``llm.request`` (before protocol 1.5 there may be none: at the step's ``step.begin`` loop event),
its response begun at the step's first ``content.part``, ended at the record. The head is keyed by the system prompt and tools hashes,
so sessions sharing them share it, and a tools hash that changes is a logged tool change;
``turn.prompt`` / ``turn.steer`` are user turns, a ``compaction`` call is flagged as one and
``context.apply_compaction`` / ``context.clear`` / ``context.undo`` start a new chain.

A forked Kimi Code session (agent-core-v2, July 2026 on: ``/fork``, a fork at a turn) opens with a
copy of the source session's records for that agent, its ``usage.record`` lines included, ended by
a ``forked`` record; the session's own records follow. The calls above the last ``forked`` record
are the source's, counted in the source's own file, never here; the fork's first call extends the
source's last (a Kimi Code call's node is its agent, time and usage, the same in the copy and the
source, so the audit links them when the source's file is read too).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import UNKNOWN, provider_of_model
from prefixbench.simulator.providers.base import count
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import Lane, as_dict, objects, parse_time_ms
from prefixbench.workloads.logs.history import make_message
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LaneKind, LoggedMessage, Prefix, TraceRequest

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
_ID_PREFIXES = (("msg_", "anthropic", NO_MODEL), ("resp_", "openai", NO_MODEL))


#: Kimi Code's durable record types (``packages/agent-core*/``: the wire manifest).
_CODE_TYPES = frozenset({
    "config.update", "context.append_loop_event", "context.append_message", "context.apply_compaction",
    "context.clear", "context.undo", "context.update_token_count", "cron.add", "cron.cursor", "cron.delete",
    "forked", "full_compaction.begin", "full_compaction.cancel", "full_compaction.complete",
    "micro_compaction.apply", "goal.clear", "goal.create", "goal.update", "interaction.request",
    "interaction.resolved", "interruptionReminder.recorded", "llm.request", "llm.tools_snapshot",
    "mcp.tools_discovered", "permission.record_approval_result", "permission.set_mode", "plan_mode.cancel",
    "plan_mode.enter", "plan_mode.exit", "plan.revision", "plugin.session_start", "profile.bind",
    "prompt.accepted", "runtime.set_binding", "staleGuard.cleared", "staleGuard.recorded", "swarm_mode.enter",
    "swarm_mode.exit", "task.started", "task.terminated", "task.waitDelivered", "token_counting.measured",
    "token_counting.rebased", "token_counting.truncated", "token_counting.turn_recorded",
    "tools.register_user_tool", "tools.reset_active_tools", "tools.set_active_tools",
    "tools.unregister_user_tool", "tools.update_store", "tower_mode.enter", "tower_mode.exit", "turn.cancel",
    "turn.ended", "turn.prompt", "turn.steer", "usage.record",
    # Kimi Code 2.1.0's (September 2026): file-history checkpoints, a prompt's end or abort, a
    # steer queued before its turn.steer, a step retried or interrupted (no call's usage).
    "file_history.checkpoint", "file_history.tracked", "prompt.aborted", "prompt.completed", "prompt.steered",
    "turn.step.interrupted", "turn.step.retrying",
    # The first releases' (agent-core, May to June 2026), since dropped: a background task
    # stopped, a prompt a hook blocked, a goal's token and turn accounting (no call's usage).
    "background.stop", "context.mark_last_user_prompt_blocked", "goal.account_usage", "goal.continuation",
})
#: Kimi Code's wire protocols (``llm.request.provider``) to the provider their usage is read as,
#: when the model's name does not say.
_CODE_PROTOCOLS = {"kimi": "moonshot", "anthropic": "anthropic", "openai": "openai", "openai_responses": "openai", "google-genai": "gemini"}


#: Where a context.jsonl's note points (``formats.SIBLING_POINTERS``: the session's wire.jsonl).
WIRE_BESIDE = " (audit the wire.jsonl beside it)"


def detect(value: dict) -> Evidence | None:
    """A wire record ``{timestamp, message: {type, payload}}``, a Kimi Code record ``{type, ...,
    time}``, the metadata line, or a ``context.jsonl`` marker."""
    code = value.get("type")
    if isinstance(code, str) and code in _CODE_TYPES and ("time" in value or "agentId" in value):
        return Evidence.ENTRY
    message = value.get("message")
    kind = message.get("type") if isinstance(message, dict) else None
    if isinstance(kind, str) and kind in _TYPES and "timestamp" in value and isinstance(message.get("payload"), dict):
        return Evidence.ENTRY
    if code == "metadata" and isinstance(value.get("protocol_version"), str) and len(value) <= 3:
        return Evidence.ENTRY
    if value.get("role") in _CONTEXT_ROLES and ("id" in value or "token_count" in value or "content" in value) and len(value) <= 3:
        return Evidence.SHAPE
    return None


def _code_shaped(value: dict) -> bool:
    """A Kimi Code durable record ``{type: "<domain>.<event>", ...payload, time: <epoch ms>}``."""
    kind, time = value.get("type"), value.get("time")
    return (isinstance(kind, str) and "." in kind and "message" not in value
            and isinstance(time, int | float) and not isinstance(time, bool))


def _served_by(message_id: object) -> tuple[str, str]:
    if isinstance(message_id, str):
        for prefix, provider, model in _ID_PREFIXES:
            if message_id.startswith(prefix):
                return provider, model
    return "moonshot", DEFAULT_MODEL


class _Lane(Lane):
    def __init__(self, name: str, kind: LaneKind, head: str) -> None:
        super().__init__(name, kind)
        self.head = head
        self.blocks = 0
        self.step_ms: int | None = None
        self.ready_ms: int | None = None
        self.pending: list[LoggedMessage] = []
        # Kimi Code: the llm.request the next usage.record answers, and the settings last seen.
        self.request: dict | None = None
        self.tools: str | None = None
        self.effort: str | None = None


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
        # A subagent's own wire.jsonl (subagents/<agent id>/wire.jsonl) is that subagent's lane;
        # Kimi Code's agents/<agent-N>/wire.jsonl too (agents/main/ is the main lane).
        self.own_lane = f"agent:{path.parent.name}" if path.parent.parent.name == "subagents" else "main"
        self.code_agent = f"agent:{path.parent.name}" if path.parent.parent.name == "agents" and path.parent.name != "main" else ""
        self.code = False
        #: Kimi Code: the calls of the source session copied above a ``forked`` record.
        self.copied_calls = 0
        #: Kimi CLI's /btw side questions (calls whose usage is not on the wire).
        self.side_questions = 0
        #: Kimi Code records of kinds not in :data:`_CODE_TYPES`, by kind (read as no call).
        self.unknown_kinds: dict[str, int] = {}

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
                if "created_at" in value:
                    self.code = True
            return
        if value.get("role") in _CONTEXT_ROLES or ("role" in value and "message" not in value):
            self.context_file = True
            return
        if isinstance(value.get("type"), str) and value["type"] in _CODE_TYPES:
            self.code_record(record, value)
            return
        if self.code and _code_shaped(value):
            # A durable record of a kind this reader does not know (Kimi Code adds and drops them
            # release by release): no call's usage, which only usage.record carries.
            kind = str(value["type"])[:60]
            self.unknown_kinds[kind] = self.unknown_kinds.get(kind, 0) + 1
            return
        message = value.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise UserError(f"{self.name}:{record.line}: not a Kimi CLI wire record (no message {{type, payload}})")
        when = parse_time_ms(value.get("timestamp"), f"{self.name}:{record.line}")
        self.event(record, self.lane(self.own_lane), message, when, depth=0)

    # --- Kimi Code -------------------------------------------------------------------------

    def code_lane(self, value: dict) -> _Lane:
        agent = value.get("agentId")
        if isinstance(agent, str) and agent and agent != "main":
            return self.lane(f"agent:{agent}")  # the whole id: two agents may share a long head
        return self.lane(self.code_agent or "main")

    def code_record(self, record: Record, value: dict) -> None:
        self.code = True
        where = f"{self.name}:{record.line}"
        when = parse_time_ms(value.get("time"), where) if value.get("time") is not None else None
        lane = self.code_lane(value)
        kind = value["type"]
        if kind == "llm.request":
            lane.request = value
            lane.step_ms = when
        elif kind in ("turn.prompt", "turn.steer"):
            lane.events.append(("user_turn", ""))
            lane.blocks += 1
            lane.pending.append(make_message("user", value.get("input")))
        elif kind == "context.append_loop_event":
            event = as_dict(value.get("event")).get("type")
            if event == "step.begin":
                lane.step_ms = lane.step_ms if lane.request is not None and lane.step_ms is not None else when
                lane.ready_ms = None
            elif event in ("content.part", "tool.call") and lane.ready_ms is None:
                lane.ready_ms = when
        elif kind == "context.append_message":
            message = as_dict(value.get("message"))
            if message.get("role") == "tool":
                lane.blocks += 1
        elif kind in ("context.apply_compaction", "context.clear", "context.undo"):
            what = {"context.apply_compaction": "compaction", "context.clear": "compaction", "context.undo": "rewind"}[kind]
            detail = {"context.apply_compaction": "context compacted", "context.clear": "context cleared",
                      "context.undo": "turns undone"}[kind]
            self.compactions += kind == "context.apply_compaction"
            lane.events.append((what, detail))
            lane.parent = None
            lane.pending = []
        elif kind == "usage.record":
            usage = value.get("usage")
            if not isinstance(usage, dict):
                raise UserError(f"{where}: usage.record usage is not an object")
            self.code_call(record, lane, value, usage, when)
        elif kind == "forked":
            self.code_forked(record)

    def code_forked(self, record: Record) -> None:
        """A ``forked`` record: every call above it is the source session's, copied in when this
        session was forked from it (counted in the source's own file). Each lane goes on from its
        last copied call, which names the source's call (same agent, time and usage)."""
        for request in self.out:
            self.skipped.append((request.line, "usage.record of the source session, copied above the forked record: counted in that session's own wire.jsonl"))
        self.copied_calls += len(self.out)
        self.out = []
        for lane in self.lanes.values():
            lane.events = [("fork", f"a forked session (forked record at line {record.line}): the records above it are the source's")]
            lane.blocks, lane.pending = 0, []
            lane.request, lane.step_ms, lane.ready_ms = None, None, None

    def code_call(self, record: Record, lane: _Lane, value: dict, usage: dict, when: int | None) -> None:
        where = f"{self.name}:{record.line}"
        reported = Usage(
            cache_read=count(usage.get("inputCacheRead"), where, "usage.inputCacheRead"),
            cache_write_5m=count(usage.get("inputCacheCreation"), where, "usage.inputCacheCreation"),
            uncached=count(usage.get("inputOther"), where, "usage.inputOther"),
            output=count(usage.get("output"), where, "usage.output"),
        )
        request = lane.request or {}
        lane.request = None
        if reported.prompt + reported.output == 0:
            self.skipped.append((record.line, "usage.record all zero (the provider reported no usage)"))
            return
        model = request.get("model") if isinstance(request.get("model"), str) and request.get("model") else value.get("model")
        model = str(model)[:120] if isinstance(model, str) and model else NO_MODEL
        rules = provider_of_model(model)
        provider = rules.name if rules is not None and rules.reports_usage else _CODE_PROTOCOLS.get(str(request.get("provider")), UNKNOWN.name)
        head_key = ":".join(str(request.get(k))[:80] for k in ("systemPromptHash", "toolsHash")) if request else ""
        tools = str(request.get("toolsHash"))[:80] if request.get("toolsHash") is not None else None
        if lane.model is not None and model != lane.model:
            lane.events.append(("model_change", f"{lane.model} -> {model}"))
        if tools is not None and lane.tools is not None and tools != lane.tools:
            lane.events.append(("tools_change", f"toolsHash {lane.tools} -> {tools}"))
        effort = request.get("thinkingEffort")
        if isinstance(effort, str) and lane.effort is not None and effort != lane.effort:
            lane.events.append(("thinking_change", f"{lane.effort} -> {effort}"))
        lane.model = model
        lane.tools = tools if tools is not None else lane.tools
        lane.effort = effort if isinstance(effort, str) else lane.effort
        compaction = request.get("kind") == "compaction"
        # The call's agent, time and usage: the same in a forked session's copy of it (see the module doc).
        node = (f"kimi-code:{lane.name}@{value['time']}:{reported.uncached}/{reported.cache_read}/{reported.cache_write_5m}/{reported.output}"
                if isinstance(value.get("time"), int) and not isinstance(value.get("time"), bool) else f"kimi-cli:{self.name}#{record.line}")
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
                envelope=(("thinking", lane.effort),) if lane.effort is not None else (),
                usage=reported,
                prefix=Prefix(f"kimi-code:{head_key}" if head_key else lane.head, node, lane.parent, max(1, lane.blocks + 1)),
                events=tuple(lane.events),
                agent_version=self.version,
                source_format=NAME,
                done_ms=when,
                messages=tuple(lane.pending),
                compaction_call=compaction,
            )
        )
        lane.parent = node
        lane.events, lane.blocks, lane.pending = [], 0, []
        lane.step_ms = lane.ready_ms = None

    # --- Kimi CLI ----------------------------------------------------------------------------

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
                    self.event(record, self.lane(f"agent:{agent}"), inner, when, depth + 1)  # the whole id (see code_lane)
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
            case "BtwBegin":
                # A /btw side question (April 2026 on): one model call on the conversation so far,
                # whose usage Kimi CLI does not write (BtwEnd holds only its answer).
                self.skipped.append((record.line, "/btw side question: its call's usage is not on the wire"))
                self.side_questions += 1
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
        lane.send_to(model)
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
    if session.code:
        notes = [
            "Kimi Code's system prompt and tools are not in wire.jsonl, their hashes are: the head is keyed by them, shared by the sessions that share them",
        ]
    else:
        notes = [
            "Kimi CLI's system prompt and tools are not in wire.jsonl: the head is an opaque prefix per session",
            "the wire names no model: calls are put down to the provider their message_id shows (Moonshot's kimi-for-coding otherwise)",
        ]
    if session.context_file:
        notes.append(f"a context.jsonl holds the messages, not per-call usage: no calls to audit here{WIRE_BESIDE}")
    elif not session.out and session.status_without_usage:
        notes.append("StatusUpdate without token_usage only (Kimi CLI before December 2025): no per-call usage to audit")
    elif not session.out and session.code:
        notes.append("no usage.record in this wire.jsonl (Kimi Code writes one per call): no call to audit here")
    if session.side_questions:
        notes.append(
            f"{session.side_questions} /btw side question(s): each is a model call on the conversation so far whose usage "
            "Kimi CLI does not write (BtwBegin / BtwEnd carry the question and answer only): not counted"
        )
    if session.copied_calls:
        notes.append(
            f"a forked Kimi Code session: the {session.copied_calls} usage.record(s) above its forked record are the source "
            "session's, copied in at the fork (counted in that session's own wire.jsonl, not here); its first call extends the "
            "source's last, when the source's file is in the audit"
        )
    if session.unknown_kinds:
        kinds = ", ".join(f"{kind} x{n}" for kind, n in sorted(session.unknown_kinds.items()))
        notes.append(f"Kimi Code records of kinds this reader does not know ({kinds}): read as no call (only usage.record carries one)")
    if session.compactions:
        notes.append(
            f"{session.compactions} compaction(s)"
            + ("" if session.code else ": the compaction calls' own usage is not on the wire and is not counted")
        )
    return session.out, FileSummary(session.name, NAME, len(session.out), tuple(session.skipped), tuple(notes))


FORMAT = LogFormat(
    name=NAME,
    noun="Kimi CLI wire log",
    nouns="Kimi CLI wire logs",
    description="Kimi CLI sessions (~/.kimi/sessions/<hash>/<id>/wire.jsonl: StatusUpdate token_usage per step) and Kimi Code's (agents/<agent>/wire.jsonl: usage.record per call)",
    detect=detect,
    read=read,
    usage="additive",
    versions=(
        "wire.jsonl from November 2025: {timestamp, message {type, payload}}; StatusUpdate carries context_usage only (no calls)",
        "from December 2025: StatusUpdate token_usage {input_other, output, input_cache_read, input_cache_creation} and message_id",
        "wire protocol 1.1 to 1.10 (January 2026 on): a metadata line {type: metadata, protocol_version} first; later StatusUpdates add context_tokens, plan_mode, mcp_status",
        "subagents: SubagentEvent {task_tool_call_id | parent_tool_call_id, agent_id, subagent_type, event} lanes; newer versions also write subagents/<id>/wire.jsonl (counted once)",
        "context.jsonl beside it: messages only, recognised and read as no calls",
        "/btw side questions (BtwBegin / BtwEnd, April 2026 on): calls whose usage is not on the wire, listed and noted",
        "Kimi Code (May 2026 on, wire protocol 1.0 to 1.5): agents/<main | agent-N>/wire.jsonl, llm.request then usage.record {inputOther, output, inputCacheRead, inputCacheCreation} per call",
        "Kimi Code forked sessions (agent-core-v2, July 2026 on, wire protocol 1.5): the source's records copied above a forked record, not counted again",
        "Kimi Code 2.1.0 (npm, 2026-09-23; wire protocol 1.5): the same usage.record (usageScope added), new no-call kinds "
        "(file_history.*, prompt.completed / aborted / steered, turn.step.retrying / interrupted) known",
        "Kimi Code's first releases (May to June 2026): background.stop, context.mark_last_user_prompt_blocked, "
        "goal.account_usage and goal.continuation records, since dropped; a record of a kind not known here is read as no call",
    ),
    aliases=("kimi", "kimi-code"),
    # context.jsonl's messages ({role, content}) look like a Cline conversation history.
    admits=("cline",),
)
