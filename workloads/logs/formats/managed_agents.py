"""Claude Managed Agents session event streams (Anthropic's hosted agent sessions).

A session is driven by events (``GET /v1/sessions/{id}/events``, or its SSE stream): each is
``{type, id, processed_at, ...}``, ``type`` one of ``user.*``, ``agent.*``, ``session.*``,
``span.*`` or ``system.message`` (the ``managed-agents-2026-04-01`` beta's catalogue). A file
holds them one a line, as a JSON array, as list pages (``{data: [...], next_page}``), or each
wrapped by the tool that saved it (``{role, kind, time, raw: <event>}``).

* One call per ``span.model_request_end``: its ``model_usage`` is one model request's usage,
  Anthropic's additive counts (``input_tokens`` excludes ``cache_read_input_tokens`` and
  ``cache_creation_input_tokens``), read by Anthropic's usage reader
  (:func:`prefixbench.simulator.providers.anthropic.read_usage`; the spans seen do not split
  writes by lifetime: 5 m, the default, unless a span's ``cache_creation`` splits them). It is sent at its ``span.model_request_start`` (``model_request_start_id``) and
  done at its own ``processed_at``. A span with ``is_error`` and no tokens is skipped; a start
  with no end (an interrupted request) is counted as such.
* ``agent.thread_context_compacted`` (the history summarized) starts a new chain;
  ``user.message`` and ``user.define_outcome`` are user turns.
* ``span.outcome_evaluation_end.usage`` is the outcome grader's usage summed over its own
  calls, and ``session.usage`` the session's running total: neither is a call. Both are stated
  in the notes beside the spans' sums, with the session's own ``list_cost``.
* No event names the model except ``session.updated`` (an update of the session's ``agent``,
  applied from the next turn); the agent's configuration is not in the stream. Without one the
  model is ``unknown``: its calls are not priced unless ``audit --assume-model`` names it.
  Managed Agents runs on Anthropic only (the format's ``provider``).
* The events of one stream are one thread's (a subagent's thread has its own stream; the API
  documents cross-posting to the primary stream for permission requests only, which carry the
  thread's ``session_thread_id``): a file is one lane. A span naming a thread (none seen so far)
  goes to that thread's lane, a subagent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path


from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import ANTHROPIC
from prefixbench.simulator.providers.anthropic import read_usage as read_anthropic_usage
from prefixbench.simulator.providers.base import count
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, objects, parse_time_ms
from prefixbench.workloads.logs.formats.headless import is_copilot_json_record
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Prefix, TraceRequest

NAME = "managed-agents"

#: Every event type of the Managed Agents API (the SDK's ``BetaManagedAgentsSessionEvent``
#: union and the stream-only deltas).
EVENT_TYPES = frozenset({
    "user.message", "user.interrupt", "user.custom_tool_result", "user.tool_confirmation", "user.define_outcome",
    "user.tool_result",
    "agent.message", "agent.thinking", "agent.tool_use", "agent.tool_result", "agent.mcp_tool_use",
    "agent.mcp_tool_result", "agent.custom_tool_use", "agent.thread_context_compacted",
    "agent.thread_message_received", "agent.thread_message_sent",
    "session.status_running", "session.status_idle", "session.status_rescheduled", "session.status_terminated",
    "session.deleted", "session.updated", "session.error", "session.usage", "session.thread_created",
    "session.thread_status_running", "session.thread_status_idle", "session.thread_status_rescheduled",
    "session.thread_status_terminated",
    "span.model_request_start", "span.model_request_end", "span.outcome_evaluation_start",
    "span.outcome_evaluation_ongoing", "span.outcome_evaluation_end",
    "system.message", "event_start", "event_delta",
})
#: Events that open a turn: a model change an update asked for applies from here.
_TURN_STARTS = ("session.status_running", "user.message", "user.define_outcome")


def _is_event(value: object) -> bool:
    if not isinstance(value, dict) or is_copilot_cli_event(value) or is_copilot_json_record(value):
        return False  # (Copilot CLI's events share some of its types: their payload is under ``data``)
    kind = value.get("type")
    return isinstance(kind, str) and kind in EVENT_TYPES and isinstance(value.get("id"), str)


def is_copilot_cli_event(value: dict) -> bool:
    """An event of GitHub Copilot CLI's ``events.jsonl`` (``{type, data, id, timestamp,
    parentId}``, its payload under ``data``): some of its types (``user.message``,
    ``session.error``, ``system.message``) are Managed Agents' too, whose payload sits beside
    ``type`` and which has no ``parentId``."""
    return "parentId" in value and isinstance(value.get("data"), dict) and isinstance(value.get("type"), str)


def _unwrapped(value: dict) -> dict | None:
    """The event a record holds: itself, or the ``raw`` event of a saved-transcript wrapper."""
    if _is_event(value):
        return value
    raw = value.get("raw")
    if _is_event(raw) and ("kind" in value or "role" in value):
        return raw  # type: ignore[return-value]
    return None


def _page(value: dict) -> list | None:
    """The events of a list page (``{data: [...], next_page}``), None when it is not one."""
    data = value.get("data")
    if isinstance(data, list) and data and _is_event(data[0]) and set(value) <= {"data", "next_page", "prev_page", "first_id", "last_id", "has_more"}:
        return data
    return None


def detect(value: dict) -> Evidence | None:
    """A Managed Agents event (a ``type`` of its catalogue and an ``id``), wrapped or not, or a
    list page of them."""
    if "id" not in value and "raw" not in value and "data" not in value:
        return None  # (an event has an id, a wrapper its raw event, a page its data)
    if _unwrapped(value) is not None or _page(value) is not None:
        return Evidence.ENTRY
    return None


def _events(path: Path, records: Iterable[Record]) -> Iterator[tuple[int, dict]]:
    """Each event with its line; a record that is neither an event nor a page is refused, an event
    type of a later API version passed on (and ignored)."""
    for record in objects(path, records, " (a Managed Agents event)"):
        value: dict = record.value  # type: ignore[assignment]
        page = _page(value)
        if page is not None:
            for item in page:
                if isinstance(item, dict):
                    yield record.line, item
            continue
        event = _unwrapped(value)
        if event is None:
            raw = value.get("raw")
            event = raw if isinstance(raw, dict) and isinstance(raw.get("type"), str) else value
            if not isinstance(event.get("type"), str):
                raise UserError(f"{path}:{record.line}: not a Managed Agents event (no type)")
        yield record.line, event


def _usage(raw: object, where: str, key: str) -> Usage:
    """A span's ``model_usage`` (or the grader's ``usage``), read by Anthropic's usage reader
    (fast mode included); errors name ``key``."""
    if not isinstance(raw, dict):
        raise UserError(f"{where}: {key} is not an object")
    return read_anthropic_usage(raw, where, key)


def _time(event: dict, where: str) -> int | None:
    try:
        return parse_time_ms(event.get("processed_at"), where)
    except UserError:
        return None  # a queued event (processed_at null) or a time no clock wrote: untimed


def _model(agent: object) -> str | None:
    """The model an ``agent`` definition names: ``model.id``, or ``model`` as a plain id."""
    model = as_dict(agent).get("model")
    if isinstance(model, dict):
        model = model.get("id")
    return model if isinstance(model, str) and model else None


def _prompt(u: Usage) -> int:
    return u.cache_read + u.cache_write + u.uncached


def _plus(a: Usage, b: Usage) -> Usage:
    return Usage(a.cache_read + b.cache_read, a.cache_write_5m + b.cache_write_5m, a.cache_write_1h + b.cache_write_1h,
                 a.uncached + b.uncached, a.output + b.output)


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The model requests of a Managed Agents event stream; see the module doc."""
    name = str(path)
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    starts: dict[str, tuple[int, int | None]] = {}  # start id -> (line, time)
    ended: set[str] = set()
    #: Per lane (``main``, or a thread a span names): what happened since its last call, and that call's node.
    events: dict[str, list[tuple[str, str]]] = {}
    parent: dict[str, str] = {}
    model, pending_model = NO_MODEL, None
    graded = Usage()
    snapshot: tuple[int, dict] | None = None
    threads: dict[str, str] = {}
    fast = 0
    seen_any = False
    for line, event in _events(path, records):
        seen_any = True
        where = f"{name}:{line}"
        kind = event.get("type")
        thread = event.get("session_thread_id")
        lane = f"thread:{thread}" if isinstance(thread, str) and thread else "main"
        if kind in _TURN_STARTS and pending_model is not None:
            if pending_model != model:
                events.setdefault("main", []).append(("model_change", f"{model} -> {pending_model}"))
            model, pending_model = pending_model, None
        match kind:
            case "span.model_request_start":
                starts[str(event.get("id"))] = (line, _time(event, where))
            case "span.model_request_end":
                start_id = str(event.get("model_request_start_id") or "")
                ended.add(start_id)
                usage = _usage(event.get("model_usage"), where, "model_usage")
                if usage.is_empty:
                    reason = "failed model request (is_error)" if event.get("is_error") else "model request"
                    skipped.append((line, f"{reason} with no tokens"))
                    continue
                fast += usage.speed == "fast"  # billed at the fast row, cached apart
                node = f"managed-agents:{name}#{line}"
                happened = events.pop(lane, [])
                compacted = any(k == "compaction" for k, _ in happened)
                out.append(TraceRequest(
                    file=name, line=line, lane=lane, lane_kind="main" if lane == "main" else "subagent", seq=len(out),
                    sent_ms=starts.get(start_id, (0, None))[1], ready_ms=None, provider=ANTHROPIC.name, model=model, usage=usage,
                    prefix=Prefix(f"managed-agents:{name}:{lane}:{model}", node, None if compacted else parent.get(lane)),
                    events=tuple(happened), request_id=str(event.get("id")), source_format=NAME,
                    done_ms=_time(event, where),
                ))
                parent[lane] = node
            case "agent.thread_context_compacted":
                events.setdefault(lane, []).append(("compaction", "agent.thread_context_compacted"))
            case "user.message" | "user.define_outcome":
                events.setdefault(lane, []).append(("user_turn", ""))
            case "session.updated":
                pending_model = _model(event.get("agent")) or pending_model
            case "span.outcome_evaluation_end" if isinstance(event.get("usage"), dict):
                graded = _plus(graded, _usage(event["usage"], where, "usage"))
            case "session.usage" if isinstance(event.get("usage"), dict):
                snapshot = (line, event["usage"])
            case "session.thread_status_running" | "session.thread_created":
                if isinstance(thread, str):
                    threads.setdefault(thread, str(event.get("agent_name") or "?"))
    if not seen_any:
        raise UserError(f"{name}:1: empty file, no Managed Agents events")
    for start_id, (line, _) in starts.items():
        if start_id not in ended:
            skipped.append((line, "model request started with no span.model_request_end (no usage: interrupted)"))
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(_notes(out, graded, snapshot, threads, fast, model)))


def _notes(out: list[TraceRequest], graded: Usage, snapshot: tuple[int, dict] | None, threads: dict[str, str],
           fast: int, model: str) -> list[str]:
    spans = Usage()
    for r in out:
        spans = _plus(spans, r.usage or Usage())
    notes = [
        f"a Managed Agents event stream: one call per span.model_request_end ({len(out)}), Anthropic's additive usage; "
        f"the spans sum to {_prompt(spans):,} prompt tokens ({spans.cache_read:,} read, {spans.cache_write:,} written) "
        f"and {spans.output:,} output",
    ]
    if model == NO_MODEL and all(r.model == NO_MODEL for r in out):
        notes.append("no event names the model (it is in the agent's configuration, not in the stream; a session.updated "
                     "event would name it): model unknown, its calls unpriced unless audit --assume-model names it")
    if not graded.is_empty:
        notes.append(f"the outcome grader's usage (span.outcome_evaluation_end, summed over its own calls, not read as calls): "
                     f"{_prompt(graded):,} prompt tokens ({graded.cache_read:,} read, {graded.cache_write:,} written), "
                     f"{graded.output:,} output")
    if snapshot is not None:
        line, usage = snapshot
        where = f"line {line}"
        try:
            # Not Anthropic's usage reader: the running total splits its writes in
            # cache_creation only, with no cache_creation_input_tokens beside it.
            written = as_dict(usage.get("cache_creation"))
            total = Usage(
                cache_read=count(usage.get("cache_read_input_tokens"), where, "cache_read_input_tokens"),
                cache_write_5m=count(written.get("ephemeral_5m_input_tokens"), where, "ephemeral_5m_input_tokens"),
                cache_write_1h=count(written.get("ephemeral_1h_input_tokens"), where, "ephemeral_1h_input_tokens"),
                uncached=count(usage.get("input_tokens"), where, "input_tokens"),
                output=count(usage.get("output_tokens"), where, "output_tokens"),
            )
        except UserError:
            total = None
        if total is not None:
            cost = as_dict(usage.get("list_cost"))
            amount = cost.get("amount")
            money = (f", list cost {int(amount) / 100:,.2f} {cost.get('currency') or 'USD'}"
                     if isinstance(amount, str) and amount.isascii() and amount.isdigit() and len(amount) < 15 else "")
            notes.append(
                f"the session's last running total (session.usage, {where}): {_prompt(total):,} prompt tokens "
                f"({total.cache_read:,} read, {total.cache_write_5m:,} written for 5 m, {total.cache_write_1h:,} for 1 h), "
                f"{total.output:,} output{money} (compare: the spans, and the grader's usage)"
            )
    if threads:
        named = ", ".join(f"{agent} ({thread})" for thread, agent in threads.items())
        notes.append(f"threads named in this stream: {named}; a span naming none is the stream's own thread (lane main)")
    if fast:
        notes.append(f"{fast} call(s) in fast mode (model_usage.speed): priced at the model's fast price, cached apart from standard calls")
    return notes


FORMAT = LogFormat(
    name=NAME,
    noun="Managed Agents event stream",
    nouns="Managed Agents event streams",
    description="Claude Managed Agents session events (one a line, a JSON array, list pages, or wrapped {role, kind, time, raw}): "
    "span.model_request_end usage per model request",
    detect=detect,
    read=read,
    usage="additive",
    versions=(
        "managed-agents-2026-04-01 beta events: span.model_request_start/end with model_usage "
        "(input, cache read, cache creation, output; speed), outcome evaluations, session.usage running totals",
        "multiagent threads (session.thread_*, agent.thread_message_*): each thread's spans in its own stream",
        "transcripts saved as {role, kind, time, raw: <event>} lines (public reproduction repositories, 2026-08)",
    ),
    aliases=("claude-managed-agents",),
    head_changes="the agent's system prompt and tools are its configuration, not in the stream; a session.updated "
    "event changes them from the next turn",
    provider=ANTHROPIC.name,
)
