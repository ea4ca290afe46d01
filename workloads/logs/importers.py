"""One importer per log format: a file's records in, :class:`TraceRequest` values out.

Every importer reads its file as a stream of records (:func:`~.sources.iter_records`) and keeps
only small per-request facts (never the file, never message text; HTTP captures keep the parsed
request body because the audit replays it). What each format needs, and where it is handled:

* **Claude Code transcripts** (1.0.x and 2.x, JSONL or the ``chat.json`` array form): one API
  response is one ``assistant`` line per content block, all with the same ``requestId``; usage
  repeats on each and ``output_tokens`` is final only on the LAST line, so a request keeps its
  last line's usage. ``<synthetic>`` lines are not API calls. Lanes: the main thread; each
  inline ``isSidechain`` chain (1.0.x Task subagents) from its root; a ``subagents/agent-*.jsonl``
  file (2.x) is one lane, ``agent-acompact-*`` a compaction lane. A ``compact_boundary`` starts a
  new chain in its lane. Order is file order (timestamps tie or go backwards in resumed
  histories); the clock is the timestamps, never allowed to run backwards. A request id already
  counted in an earlier file (history a resumed or forked session copies) is counted once.
  A request is sent at the timestamp of the message it answers; its response began no later than
  its first line's timestamp (written when the first content block was complete), which is used
  as the time its cache entries became readable: a conservative bound for concurrent starts.
* **HTTP captures** (claude-trace ``{request, response}`` lines): Anthropic Messages (JSON body or
  SSE ``message_start`` / ``message_delta``, via :mod:`prefixbench.workloads.logs.anthropic_capture`),
  DeepSeek's Anthropic-compatible endpoint (``input_tokens`` excludes reads), OpenAI Responses
  (``input_tokens`` INCLUDES ``input_tokens_details.cached_tokens``) and chat completions.
* **Codex CLI rollouts**: ``event_msg``/``token_count`` ``last_token_usage`` per request; a
  token count whose running total was already seen (a repeat, or history replayed by a fork or
  resume, in this file or another) is not counted again.
* **pi sessions**: assistant ``message`` usage ``{input, output, cacheRead, cacheWrite}``;
  ``model_change``, ``thinking_level_change``, ``compaction`` become events; an aborted call with
  no usage is skipped.
* **Request-body logs** (chat completions, Anthropic Messages bodies): the existing parsers; no
  reported usage, so the audit predicts only.
* **Mooncake traces**: ``hash_ids`` (512-token blocks), no reported usage. The block-hash traces
  of kvcache-simulator read too: string ids, a ``block_size`` and per-block ``block_tokens``
  (a last partial block counts its own tokens).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import msgspec
from msgspec.structs import replace
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Request
from prefixbench.workloads.logs.anthropic_capture import (
    classify_call,
    parse_request_body,
    parse_usage,
)
from prefixbench.workloads.logs.sources import (
    ProgressFn,
    Record,
    classify_record,
    iter_records,
)
from prefixbench.workloads.logs.trace import FileSummary, Prefix, TraceRequest, Usage
from prefixbench.workloads.logs.chat_completions import LineError, parse_request

#: A token count (or length) no real call reaches.
MAX_COUNT = 10**12
#: Epoch milliseconds beyond any real log (year 5138).
MAX_EPOCH_MS = 10**14
#: Lines of a file checked for records of another format.
CHECK_LINES = 200
#: Mooncake block size (tokens per hash id).
MOONCAKE_BLOCK_TOKENS = 512
#: The largest block a trace may declare (tokens per hash id).
MAX_BLOCK_TOKENS = 1 << 20


class ImportContext(msgspec.Struct):
    """State shared by the importers of one audit (dedup across files)."""

    #: Codex running totals already counted: ``(session, total usage)``.
    codex_totals: set[str] = msgspec.field(default_factory=set)
    #: Claude Code request ids already counted (a resumed or forked session copies earlier lines).
    claude_requests: set[str] = msgspec.field(default_factory=set)
    progress: ProgressFn | None = None


def parse_time_ms(value: object, where: str) -> int | None:
    """An ISO-8601 string, epoch seconds (float) or epoch ms (int > 1e11) as epoch ms."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise UserError(f"{where}: timestamp {value!r} is not a time")
    if isinstance(value, (int, float)):
        if not (isinstance(value, int) or math.isfinite(value)) or not 0 <= value < MAX_EPOCH_MS:
            raise UserError(f"{where}: timestamp {value!r:.40} is not a plausible time")
        return int(value) if value > 1e11 else round(value * 1000)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)  # a time without offset is read as UTC, never local
            return round(moment.timestamp() * 1000)
        except (ValueError, OverflowError):
            raise UserError(f"{where}: timestamp {value!r} is not ISO 8601") from None
    raise UserError(f"{where}: timestamp {value!r} is not a time")


def _int(value: object, where: str, key: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UserError(f"{where}: {key} is not a non-negative integer ({value!r:.40})")
    if value > MAX_COUNT:
        raise UserError(f"{where}: {key} is not a plausible count ({str(value)[:20]}... > {MAX_COUNT:,})")
    return value


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def import_file(path: Path, fmt: str, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """Import one file of a known format."""
    records = iter_records(path, ctx.progress)
    match fmt:
        case "claude-code":
            return import_claude_code(path, records, ctx)
        case "http-capture":
            return import_http_capture(path, records)
        case "codex":
            return import_codex(path, records, ctx)
        case "pi":
            return import_pi(path, records)
        case "chat-completions" | "anthropic-bodies":
            return import_bodies(path, records, fmt)
        case "mooncake":
            return import_mooncake(path, records)
    raise UserError(f"unknown --input format {fmt!r}")


def _check_format(path: Path, record: Record, fmt: str) -> None:
    """A record of another known format in a file read as ``fmt`` is bad input.

    Only the first records are looked at (a file is one format; detection reads as many).
    """
    if record.line > CHECK_LINES:
        return
    other = classify_record(record.value)
    if other is not None and other != fmt and not (fmt == "anthropic-bodies" and other == "chat-completions"):
        raise UserError(f"{path}:{record.line}: a {other} record in a file read as {fmt}")


def _objects(path: Path, records: Iterable[Record], fmt: str, what: str) -> Iterator[Record]:
    """Each record of a file read as ``fmt``, checked to be a JSON object (``what`` names what
    it should hold) of that format: anything else is a one-line error naming file:line."""
    for record in records:
        if not isinstance(record.value, dict):
            raise UserError(f"{path}:{record.line}: expected a JSON object{what}")
        _check_format(path, record, fmt)
        yield record


# --- Claude Code -------------------------------------------------------------------------------


class _CCRequest(msgspec.Struct):
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


def import_claude_code(
    path: Path, records: Iterable[Record], ctx: ImportContext | None = None
) -> tuple[list[TraceRequest], FileSummary]:
    """Claude Code transcript (JSONL or JSON array); see the module doc.

    A request whose id an earlier file of the audit already counted (the history a resumed or
    forked session copies) is skipped, so it is counted once.
    """
    seen_requests = ctx.claude_requests if ctx is not None else set()
    name = str(path)
    stem = path.stem
    in_subagents = path.parent.name == "subagents" or stem.startswith("agent-")
    file_lane = stem if in_subagents else "main"
    file_kind = ("compaction" if "acompact" in stem else "subagent") if in_subagents else "main"
    # Per message uuid: lane, depth, timestamp, nearest request above (anchor), whether a real user turn.
    lane_of: dict[str, tuple[str, str]] = {}
    depth: dict[str, int] = {}
    time_of: dict[str, int | None] = {}
    anchor: dict[str, str | None] = {}
    boundary: dict[str, str] = {}  # uuid -> pending event on the path since the last request
    requests: dict[str, _CCRequest] = {}
    skipped: list[tuple[int, str]] = []
    sidechains = 0
    seen_any = False
    for record in _objects(path, records, "claude-code", " (a transcript entry)"):
        value = record.value
        where = f"{name}:{record.line}"
        seen_any = True
        kind = value.get("type")
        uuid = value.get("uuid")
        if not isinstance(uuid, str):
            continue  # summary, file-history-snapshot, queue-operation...: not part of a chain
        parent = value.get("parentUuid")
        if parent is not None and not isinstance(parent, str):
            raise UserError(f"{where}: parentUuid is not a string ({parent!r:.40})")
        when = parse_time_ms(value.get("timestamp"), where)
        subtype = value.get("subtype")
        event: str | None = None
        if parent is None or parent not in lane_of:
            logical = value.get("logicalParentUuid")
            if subtype == "compact_boundary" and isinstance(logical, str) and logical in lane_of:
                lane = lane_of[logical]
                event = "compaction"
            elif value.get("isSidechain") and not in_subagents:
                sidechains += 1
                lane = (f"sidechain-{sidechains}", "subagent")
            else:
                lane = (file_lane, file_kind)
                if subtype == "compact_boundary":
                    event = "compaction"
            lane_of[uuid] = lane
            depth[uuid] = 0
            anchor[uuid] = None
            if parent is not None and parent not in lane_of:
                event = event or "resume"  # the parent lives in another file (a resumed session)
        else:
            lane_of[uuid] = lane_of[parent]
            depth[uuid] = depth[parent] + 1
            anchor[uuid] = anchor[parent]
            if parent in boundary:
                event = boundary[parent]
        time_of[uuid] = when
        message = _dict(value.get("message"))
        if kind == "user" and not value.get("isMeta"):
            content = message.get("content")
            is_tool = isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in content
            )
            if not is_tool and not value.get("isCompactSummary"):
                event = event or "user_turn"
        if event is not None:
            boundary[uuid] = event
        if kind != "assistant":
            continue
        model = message.get("model")
        usage = message.get("usage")
        if model == "<synthetic>" or not isinstance(usage, dict):
            skipped.append((record.line, "synthetic message, not an API call" if model == "<synthetic>" else "no usage"))
            anchor[uuid] = anchor.get(uuid)
            continue
        if not isinstance(model, str):
            raise UserError(f"{where}: message.model is not a string ({model!r:.40})")
        key = next((k for k in (value.get("requestId"), message.get("id")) if isinstance(k, str) and k), uuid)
        known = requests.get(key)
        if known is None:
            pending = boundary.get(parent) if isinstance(parent, str) else None
            events = [(pending, "")] if pending else []
            node = parent if isinstance(parent, str) else None
            sent = time_of.get(parent) if isinstance(parent, str) else None
            prev_req = anchor.get(parent) if isinstance(parent, str) else None
            if pending == "compaction":
                prev_req = None
            new_blocks = depth[uuid] - (depth.get(requests[prev_req].node or "", 0) if prev_req in requests else 0)
            requests[key] = _CCRequest(
                key=key,
                first_seq=len(requests),
                first_line=record.line,
                last_line=record.line,
                lane=lane_of[uuid][0],
                lane_kind=lane_of[uuid][1],
                model=str(model),
                usage=usage,
                ready_ms=when,
                sent_ms=sent if sent is not None else when,
                node=node,
                parent_request=prev_req,
                new_blocks=max(1, new_blocks),
                version=value.get("version") if isinstance(value.get("version"), str) else None,
                events=events,
                diagnostic=_diagnostic(message),
            )
        else:
            known.last_line = record.line
            known.usage = usage  # the LAST line's usage holds the final output count
        anchor[uuid] = key
        boundary.pop(uuid, None)
    if not seen_any:
        raise UserError(f"{name}:1: empty file, no transcript entries")
    out: list[TraceRequest] = []
    fresh = []
    for req in sorted(requests.values(), key=lambda r: r.first_seq):
        if req.key in seen_requests:
            skipped.append((req.last_line, "request already counted in another file (resumed or forked session)"))
        else:
            fresh.append(req)
    seen_requests.update(req.key for req in fresh)
    for seq, req in enumerate(fresh):
        where = f"{name}:{req.last_line}"
        usage = _anthropic_usage(req.usage, where)
        head_kind = "main" if req.lane_kind in ("main", "compaction") else "subagent"
        parent_node = requests[req.parent_request].node if req.parent_request in requests else None
        out.append(
            TraceRequest(
                file=name,
                line=req.last_line,
                lane=req.lane,
                lane_kind=req.lane_kind,  # type: ignore[arg-type]
                seq=seq,
                sent_ms=req.sent_ms,
                ready_ms=req.ready_ms,
                provider="anthropic",
                model=req.model,
                usage=usage,
                prefix=Prefix(
                    head=f"claude-code:{head_kind}:{req.model}:{req.version or '?'}",
                    node=f"cc:{req.node or req.key}",
                    parent=None if parent_node is None else f"cc:{parent_node}",
                    new_blocks=req.new_blocks,
                ),
                events=tuple(req.events),
                diagnostic=req.diagnostic,
                request_id=req.key,
                agent_version=req.version,
                source_format="claude-code",
            )
        )
    notes = (
        "system prompt and tools are not in a transcript: each lane's head is an opaque prefix sized from reported reads",
    )
    return out, FileSummary(name, "claude-code", len(out), tuple(skipped), notes)


_DIAGNOSTIC_LABELS = (
    "model_changed",
    "system_changed",
    "tools_changed",
    "messages_changed",
    "previous_message_not_found",
)


_DIAGNOSTIC_KEYS = frozenset(("cache_miss_reason", "cache_diagnostics", "diagnostics", "cache_diagnosis"))


def _diagnostic(obj: object) -> str | None:
    """Anthropic's cache diagnostic label, wherever a response carries it (usage or top level)."""
    if not isinstance(obj, dict):
        return None
    usage = obj.get("usage")
    message = obj.get("message")
    if not any(
        isinstance(holder, dict) and not _DIAGNOSTIC_KEYS.isdisjoint(holder)
        for holder in (obj, usage, message, message.get("usage") if isinstance(message, dict) else None)
    ):
        return None
    for holder in (obj, _dict(obj.get("usage")), _dict(obj.get("message")), _dict(_dict(obj.get("message")).get("usage"))):
        for key in ("cache_miss_reason", "cache_diagnostics", "diagnostics", "cache_diagnosis"):
            value = holder.get(key)
            label = _label_of(value)
            if label is not None:
                return label
    return None


def _label_of(value: object) -> str | None:
    if isinstance(value, str):
        return value if value in _DIAGNOSTIC_LABELS or value == "unavailable" else None
    if isinstance(value, dict):
        for key in ("type", "reason", "cache_miss_reason", "code"):
            label = _label_of(value.get(key))
            if label is not None:
                return label
    return None


def _anthropic_usage(usage: dict, where: str) -> Usage:
    """Anthropic usage: ``input_tokens`` is uncached; ``cache_creation`` splits 5 m / 1 h writes."""
    uncached = _int(usage.get("input_tokens"), where, "usage.input_tokens")
    read = _int(usage.get("cache_read_input_tokens"), where, "usage.cache_read_input_tokens")
    written = _int(usage.get("cache_creation_input_tokens"), where, "usage.cache_creation_input_tokens")
    output = _int(usage.get("output_tokens"), where, "usage.output_tokens")
    split = _dict(usage.get("cache_creation"))
    long_part = _int(split.get("ephemeral_1h_input_tokens"), where, "cache_creation.ephemeral_1h_input_tokens")
    long_part = min(long_part, written)
    return Usage(read, written - long_part, long_part, uncached, output)


# --- HTTP captures ------------------------------------------------------------------------------


def import_http_capture(path: Path, records: Iterable[Record]) -> tuple[list[TraceRequest], FileSummary]:
    """claude-trace style ``{request, response}`` lines; see the module doc."""
    name = str(path)
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    shared: dict[object, object] = {}
    last_node: dict[str, str] = {}
    seen_any = False
    for record in _objects(path, records, "http-capture", " with request and response"):
        where = f"{name}:{record.line}"
        value = record.value
        seen_any = True
        request = _dict(value.get("request"))
        response = value.get("response")
        url = str(request.get("url") or "")
        body = request.get("body")
        if isinstance(body, str):
            try:
                body = json.loads(body)
            except json.JSONDecodeError:
                body = None
        if not isinstance(response, dict):
            skipped.append((record.line, "no response"))
            continue
        status = response.get("status_code")
        if isinstance(status, int) and not 200 <= status < 300:
            skipped.append((record.line, f"HTTP {status}: not served, neither read nor written"))
            continue
        if not isinstance(body, dict) or "model" not in body:
            skipped.append((record.line, "not a model call (no request body with a model)"))
            continue
        sent = parse_time_ms(request.get("timestamp"), where)
        answered = parse_time_ms(response.get("timestamp"), where)
        provider = _http_provider(url, body)
        try:
            converted = _http_call(provider, url, body, response, where)
        except _NoUsage:
            skipped.append((record.line, "no usage in the response"))
            continue
        usage, parsed, lane_kind, envelope, diagnostic = converted
        if parsed is not None:
            parsed = _intern(parsed, shared)
        # A Responses/chat body may name its conversation: one lane (and chain) per cache key.
        key = body.get("prompt_cache_key")
        lane = f"{lane_kind}:{key}" if isinstance(key, str) and key and parsed is None else lane_kind
        node = f"{name}#{len(out)}"
        parent = last_node.get(lane)
        last_node[lane] = node
        out.append(
            TraceRequest(
                file=name,
                line=record.line,
                lane=lane,
                lane_kind=lane_kind,  # type: ignore[arg-type]
                seq=len(out),
                sent_ms=sent,
                ready_ms=answered,
                provider=provider,  # type: ignore[arg-type]
                model=str(body.get("model")),
                envelope=envelope,
                usage=usage,
                body=parsed,
                prefix=None if parsed is not None else Prefix(f"http:{provider}:{body.get('model')}", node, parent),
                diagnostic=diagnostic,
                source_format="http-capture",
            )
        )
    if not seen_any:
        raise UserError(f"{name}:1: empty file, no captured calls")
    return out, FileSummary(name, "http-capture", len(out), tuple(skipped))


class _NoUsage(Exception):
    pass


def _intern(request: Request, shared: dict[object, object]) -> Request:
    """The same request built from values already held: each call of a capture re-sends the whole
    conversation, so without this the parsed bodies would grow with the square of its length."""
    messages = tuple(shared.setdefault(m, m) for m in request.messages)
    tools = shared.setdefault(request.tools, request.tools)
    system_blocks = shared.setdefault(request.system_blocks, request.system_blocks)
    return replace(request, messages=messages, tools=tools, system_blocks=system_blocks)  # type: ignore[arg-type]


def _http_provider(url: str, body: dict) -> str:
    lowered = url.lower()
    model = str(body.get("model", "")).lower()
    if "deepseek" in lowered or model.startswith("deepseek"):
        return "deepseek"
    if "anthropic" in lowered or "/v1/messages" in lowered or model.startswith("claude"):
        return "anthropic"
    return "openai"


def _http_call(provider: str, url: str, body: dict, response: dict, where: str):
    envelope: tuple[tuple[str, str], ...] = ()
    if provider in ("anthropic", "deepseek") and "messages" in body and "/chat/completions" not in url:
        raw = _anthropic_response_usage(response, where)
        if raw is None:
            raise _NoUsage
        if provider == "deepseek":
            # DeepSeek's Anthropic-compatible input_tokens EXCLUDES reads; no write fee, no split.
            usage = Usage(
                cache_read=_int(raw.get("cache_read_input_tokens"), where, "usage.cache_read_input_tokens"),
                uncached=_int(raw.get("input_tokens"), where, "usage.input_tokens")
                + _int(raw.get("cache_creation_input_tokens"), where, "usage.cache_creation_input_tokens"),
                output=_int(raw.get("output_tokens"), where, "usage.output_tokens"),
            )
        else:
            usage = _anthropic_usage(raw, where)
        parsed = parse_request_body(body, where)
        effort = parsed.envelope.reasoning_effort
        envelope = (("effort", effort),) if effort else ()
        diagnostic = _diagnostic(_dict(response.get("body"))) or _diagnostic_sse(response)
        return usage, parsed, classify_call(parsed), envelope, diagnostic
    raw = _openai_response_usage(response)
    if raw is None:
        raise _NoUsage
    if "input_tokens" in raw:  # Responses API: input includes cached (and, GPT-5.6+, written) tokens
        total = _int(raw.get("input_tokens"), where, "usage.input_tokens")
        details = _dict(raw.get("input_tokens_details"))
        cached = _int(details.get("cached_tokens"), where, "input_tokens_details.cached_tokens")
        written = _int(details.get("cache_write_tokens"), where, "input_tokens_details.cache_write_tokens")
        output = _int(raw.get("output_tokens"), where, "usage.output_tokens")
    else:  # chat completions
        total = _int(raw.get("prompt_tokens"), where, "usage.prompt_tokens")
        details = _dict(raw.get("prompt_tokens_details"))
        cached = raw.get("prompt_cache_hit_tokens")
        if cached is None:
            cached = details.get("cached_tokens")
        cached = _int(cached, where, "cached tokens")
        written = _int(details.get("cache_write_tokens"), where, "prompt_tokens_details.cache_write_tokens")
        output = _int(raw.get("completion_tokens"), where, "usage.completion_tokens")
    if cached + written > total:
        raise UserError(f"{where}: cached ({cached}) and written ({written}) tokens exceed input tokens ({total})")
    effort = _dict(body.get("reasoning")).get("effort") or body.get("reasoning_effort")
    envelope = (("effort", str(effort)),) if effort else ()
    parsed = None
    if isinstance(body.get("messages"), list):
        try:
            parsed = parse_request(body)
        except LineError:
            parsed = None
    usage = Usage(cache_read=cached, cache_write_5m=written, uncached=total - cached - written, output=output)
    return usage, parsed, "main", envelope, None


def _anthropic_response_usage(response: dict, where: str) -> dict | None:
    events = response.get("events")
    if isinstance(events, list) and response.get("body") is None and response.get("body_raw") is None:
        usage: dict | None = None
        for event in events:
            data = _dict(event).get("data", event)
            if isinstance(data, str):
                try:
                    data = json.loads(data)
                except json.JSONDecodeError:
                    continue
            data = _dict(data)
            if data.get("type") == "message_start":
                usage = dict(_dict(_dict(data.get("message")).get("usage")))
            elif data.get("type") == "message_delta" and usage is not None:
                usage.update({k: v for k, v in _dict(data.get("usage")).items() if v is not None})
        return usage
    try:
        reported = parse_usage(response, where)
    except UserError as exc:
        if "has no usage" in str(exc):
            return None
        raise
    usage = {
        "input_tokens": reported.input_tokens,
        "cache_read_input_tokens": reported.cache_read_tokens,
        "cache_creation_input_tokens": reported.cache_write_tokens,
        "output_tokens": reported.output_tokens,
    }
    if reported.cache_write_1h_tokens is not None:
        usage["cache_creation"] = {"ephemeral_1h_input_tokens": reported.cache_write_1h_tokens}
    return usage


def _diagnostic_sse(response: dict) -> str | None:
    raw = response.get("body_raw")
    if not isinstance(raw, str) or "cache_miss_reason" not in raw and "diagnos" not in raw:
        return None
    for line in raw.splitlines():
        if line.startswith("data:"):
            try:
                label = _diagnostic(json.loads(line[5:]))
            except json.JSONDecodeError:
                continue
            if label is not None:
                return label
    return None


def _openai_response_usage(response: dict) -> dict | None:
    body = response.get("body")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except json.JSONDecodeError:
            body = None
    if isinstance(body, dict):
        if isinstance(body.get("usage"), dict):
            return body["usage"]
        if isinstance(_dict(body.get("response")).get("usage"), dict):
            return body["response"]["usage"]
    texts: list[str] = []
    raw = response.get("body_raw")
    if isinstance(raw, str):
        texts = [line[5:] for line in raw.splitlines() if line.startswith("data:")]
    events = response.get("events")
    if isinstance(events, list):
        texts += [e if isinstance(e, str) else json.dumps(_dict(e).get("data", e)) for e in events]
    found = None
    for text in texts:
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            continue
        data = _dict(data)
        if isinstance(_dict(data.get("response")).get("usage"), dict):
            found = data["response"]["usage"]  # response.completed
        elif isinstance(data.get("usage"), dict):
            found = data["usage"]
    return found


# --- Codex CLI ----------------------------------------------------------------------------------


def import_codex(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """Codex CLI rollout; see the module doc."""
    name = str(path)
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    session = name
    version: str | None = None
    provider = "openai"
    model = "unknown"
    effort: str | None = None
    last_input_ms: int | None = None
    first_output_ms: int | None = None
    blocks = 0
    events: list[tuple[str, str]] = []
    sessions_seen = 0
    previous_total: str | None = None
    last_total: dict | None = None
    chain_parent: str | None = None
    seen_any = False
    for record in _objects(path, records, "codex", " (a rollout line)"):
        where = f"{name}:{record.line}"
        value = record.value
        seen_any = True
        kind = value.get("type")
        payload = _dict(value.get("payload"))
        when = parse_time_ms(value.get("timestamp"), where) if "timestamp" in value else None
        ptype = payload.get("type")
        if kind == "session_meta":
            sessions_seen += 1
            session = str(payload.get("id") or session) if sessions_seen == 1 else session
            version = payload.get("cli_version") if isinstance(payload.get("cli_version"), str) else version
            provider = "deepseek" if "deepseek" in str(payload.get("model_provider", "")).lower() else "openai"
            if sessions_seen > 1:
                events.append(("resume", "a second session_meta: resumed or forked session"))
            continue
        if kind == "turn_context":
            if isinstance(payload.get("model"), str):
                model = payload["model"]
            if isinstance(payload.get("effort"), str) or payload.get("effort") is None:
                effort = payload.get("effort")
            continue
        if kind == "compacted" or (kind == "event_msg" and ptype in ("context_compacted", "compacted")):
            events.append(("compaction", ""))
            chain_parent = None
            continue
        if kind == "response_item":
            blocks += 1
            role = payload.get("role")
            if ptype in ("function_call_output", "custom_tool_call_output") or (ptype == "message" and role == "user"):
                last_input_ms = when
                first_output_ms = None
                if ptype == "message" and role == "user":
                    events.append(("user_turn", ""))
            elif first_output_ms is None:
                first_output_ms = when
            continue
        if kind != "event_msg" or ptype != "token_count":
            continue
        info = payload.get("info")
        if not isinstance(info, dict):
            continue
        total = info.get("total_token_usage")
        last = info.get("last_token_usage")
        if not isinstance(last, dict):
            continue
        if isinstance(total, dict):
            last_total = total
        total_key = json.dumps(total, sort_keys=True)
        if total_key == previous_total:
            skipped.append((record.line, "repeated token_count (same running total)"))
            continue
        previous_total = total_key
        dedup = f"{total_key}@{value.get('timestamp')}"
        if dedup in ctx.codex_totals:
            skipped.append((record.line, "token_count replayed from an earlier session (fork/resume)"))
            continue
        ctx.codex_totals.add(dedup)
        total_in = _int(last.get("input_tokens"), where, "last_token_usage.input_tokens")
        cached = _int(last.get("cached_input_tokens"), where, "last_token_usage.cached_input_tokens")
        if cached > total_in:
            raise UserError(f"{where}: cached_input_tokens ({cached}) exceed input_tokens ({total_in})")
        output = _int(last.get("output_tokens"), where, "last_token_usage.output_tokens")
        node = f"codex:{session}#{len(out)}"
        out.append(
            TraceRequest(
                file=name,
                line=record.line,
                lane="main",
                lane_kind="main",
                seq=len(out),
                sent_ms=last_input_ms if last_input_ms is not None else when,
                ready_ms=first_output_ms if first_output_ms is not None else when,
                provider=provider,  # type: ignore[arg-type]
                model=model,
                envelope=(("effort", effort),) if effort else (),
                usage=Usage(cache_read=cached, uncached=total_in - cached, output=output),
                prefix=Prefix(f"codex:{model}:{version or '?'}", node, chain_parent, max(1, blocks)),
                events=tuple(events),
                agent_version=version,
                source_format="codex",
            )
        )
        chain_parent = node
        events = []
        blocks = 0
    if not seen_any:
        raise UserError(f"{name}:1: empty file, no rollout lines")
    notes: tuple[str, ...] = ("Codex base instructions and tool schemas are not in a rollout: the head is an opaque prefix",)
    if not out:
        notes += ("no token_count events: this rollout (an older Codex version, or a session that made no call) carries no usage to audit",)
    elif last_total is not None and sessions_seen <= 1:
        counted = (sum(r.usage.prompt for r in out if r.usage), sum(r.usage.output for r in out if r.usage))
        theirs = (last_total.get("input_tokens"), last_total.get("output_tokens"))
        if all(isinstance(n, int) and not isinstance(n, bool) for n in theirs):
            verdict = "the same" if counted == theirs else f"counted here {counted[0]:,} / {counted[1]:,}"
            notes += (f"Codex's own running total: input {theirs[0]:,} / output {theirs[1]:,} tokens ({verdict})",)
    return out, FileSummary(name, "codex", len(out), tuple(skipped), notes)


# --- pi -----------------------------------------------------------------------------------------


def import_pi(path: Path, records: Iterable[Record]) -> tuple[list[TraceRequest], FileSummary]:
    """pi session; see the module doc."""
    name = str(path)
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    thinking = "off"
    events: list[tuple[str, str]] = []
    blocks = 0
    chain_parent: str | None = None
    node_of_entry: dict[str, str | None] = {}
    pi_cost = 0.0
    #: Entry id -> the node of the first request whose prompt ended at that entry.
    prompt_end: dict[str, str] = {}
    seen_any = False
    for record in _objects(path, records, "pi", " (a session entry)"):
        where = f"{name}:{record.line}"
        value = record.value
        seen_any = True
        kind = value.get("type")
        entry_id = value.get("id") if kind != "session" else None
        parent_id = value.get("parentId")
        if isinstance(parent_id, str) and parent_id in node_of_entry:
            # Tree sessions (newer pi): the prompt extends the request its branch descends from,
            # or equals the prompt an earlier request sent from the same entry (a retry, a branch).
            chain_parent = prompt_end.get(parent_id, node_of_entry[parent_id])
        match kind:
            case "session":
                if isinstance(value.get("thinkingLevel"), str):
                    thinking = value["thinkingLevel"]
                if value.get("branchedFrom") or value.get("parentSession"):
                    events.append(("fork", "session branched from another session file"))
            case "model_change":
                events.append(("model_change", f"{value.get('provider')}/{value.get('modelId')}"))
            case "thinking_level_change":
                level = str(value.get("thinkingLevel"))
                events.append(("thinking_change", f"{thinking} -> {level}"))
                thinking = level
            case "compaction":
                events.append(("compaction", f"{value.get('tokensBefore', '?')} tokens before"))
                chain_parent = None
            case "message":
                message = _dict(value.get("message"))
                role = message.get("role")
                blocks += 1
                if role == "user":
                    events.append(("user_turn", ""))
                if role == "assistant":
                    usage = message.get("usage")
                    if not isinstance(usage, dict):
                        skipped.append((record.line, "assistant message without usage"))
                    else:
                        reported = Usage(
                            cache_read=_int(usage.get("cacheRead"), where, "usage.cacheRead"),
                            cache_write_5m=_int(usage.get("cacheWrite"), where, "usage.cacheWrite"),
                            uncached=_int(usage.get("input"), where, "usage.input"),
                            output=_int(usage.get("output"), where, "usage.output"),
                        )
                        cost = usage.get("cost")
                        if isinstance(cost, dict) and isinstance(cost.get("total"), (int, float)):
                            pi_cost += cost["total"]
                        if reported.is_empty:
                            skipped.append((record.line, f"{message.get('stopReason', 'aborted')} call with no usage"))
                        else:
                            provider = str(message.get("provider") or "unknown")
                            model = str(message.get("model") or "unknown")
                            sent = parse_time_ms(message.get("timestamp"), where)
                            node = f"pi:{name}#{record.line}"
                            out.append(
                                TraceRequest(
                                    file=name,
                                    line=record.line,
                                    lane="main",
                                    lane_kind="main",
                                    seq=len(out),
                                    sent_ms=sent,
                                    ready_ms=None,
                                    provider=provider if provider in ("anthropic", "openai", "deepseek") else "unknown",  # type: ignore[arg-type]
                                    model=model,
                                    # Only turning thinking on or off starts a new family:
                                    # budget changes kept the cache in the shared pi logs.
                                    envelope=(("thinking", "off" if thinking == "off" else "on"),),
                                    usage=reported,
                                    prefix=Prefix(f"pi:{name}:{provider}:{model}", node, chain_parent, max(1, blocks)),
                                    events=tuple(events),
                                    source_format="pi",
                                )
                            )
                            if isinstance(parent_id, str):
                                prompt_end.setdefault(parent_id, node)
                            chain_parent = node
                            events = []
                            blocks = 0
        if isinstance(entry_id, str):
            node_of_entry[entry_id] = chain_parent
    if not seen_any:
        raise UserError(f"{name}:1: empty file, no session entries")
    notes = (
        (
            "pi's system prompt and tools are not in a session file (pi rebuilds them, with the current time, "
            "on every start; restarts are not logged)"
        ),
    )
    if pi_cost:
        notes += (f"pi's own cost fields sum to ${pi_cost:.4f} (a check on the dollars here)",)
    return out, FileSummary(name, "pi", len(out), tuple(skipped), notes)


# --- request-body logs and Mooncake ---------------------------------------------------------------


def import_bodies(path: Path, records: Iterable[Record], fmt: str) -> tuple[list[TraceRequest], FileSummary]:
    """Request-body logs (chat completions or Anthropic Messages): bodies, no reported usage."""
    name = str(path)
    out: list[TraceRequest] = []
    for record in records:
        where = f"{name}:{record.line}"
        _check_format(path, record, fmt)
        if fmt == "anthropic-bodies":
            if not isinstance(record.value, dict):
                raise UserError(f"{where}: expected a JSON object (a request body)")
            parsed = parse_request_body(record.value, where)
        else:
            try:
                parsed = parse_request(record.value)
            except LineError as exc:
                raise UserError(f"{where}: {exc}") from None
        effort = parsed.envelope.reasoning_effort
        out.append(
            TraceRequest(
                file=name,
                line=record.line,
                lane="main",
                lane_kind="main",
                seq=len(out),
                sent_ms=None,
                ready_ms=None,
                provider="anthropic" if fmt == "anthropic-bodies" else "openai",
                model=parsed.envelope.model,
                envelope=(("effort", effort),) if effort else (),
                body=parsed,
                source_format=fmt,
            )
        )
    if not out:
        raise UserError(f"{name}:1: empty file, no request bodies")
    return out, FileSummary(name, fmt, len(out), (), ("request-body log: no reported usage, predictions only",))


def import_mooncake(path: Path, records: Iterable[Record]) -> tuple[list[TraceRequest], FileSummary]:
    """Mooncake block-hash trace: one request a line, no reported usage."""
    name = str(path)
    out: list[TraceRequest] = []
    for record in records:
        where = f"{name}:{record.line}"
        value = record.value
        _check_format(path, record, "mooncake")
        if not isinstance(value, dict) or not isinstance(value.get("hash_ids"), list):
            raise UserError(f"{where}: expected an object with hash_ids")
        hashes = value["hash_ids"]
        kinds = set(map(type, hashes))  # per element in C: a trace holds hundreds of thousands
        if not kinds <= {int, str} or (str in kinds and "" in hashes):
            raise UserError(f"{where}: hash_ids must be integers or non-empty strings")
        length = _int(value.get("input_length"), where, "input_length")
        block_tokens = _block_tokens(value, len(hashes), where)
        out.append(
            TraceRequest(
                file=name,
                line=record.line,
                lane="trace",
                lane_kind="trace",
                seq=len(out),
                sent_ms=_int(value.get("timestamp"), where, "timestamp"),  # ms since the first request
                ready_ms=None,
                provider="engine",
                model="mooncake",
                usage=None,
                hash_ids=tuple(hashes),
                block_tokens=block_tokens,
                envelope=(("input_length", str(length)), ("output_length", str(_int(value.get("output_length"), where, "output_length")))),
                source_format="mooncake",
            )
        )
    if not out:
        raise UserError(f"{name}:1: empty file, no trace lines")
    return out, FileSummary(name, "mooncake", len(out), (), ("block-hash trace: no reported usage, predictions only",))


def _block_tokens(value: dict, blocks: int, where: str) -> tuple[int, ...]:
    """Tokens of each hashed block: ``block_tokens`` when the trace gives them, else
    ``block_size`` (default 512, Mooncake's) for every block."""
    size = value.get("block_size", MOONCAKE_BLOCK_TOKENS)
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= MAX_BLOCK_TOKENS:
        raise UserError(f"{where}: block_size is not a block size in tokens (1..{MAX_BLOCK_TOKENS:,}): {size!r:.40}")
    given = value.get("block_tokens")
    if given is None:
        return (size,) * blocks
    if not isinstance(given, list) or len(given) != blocks:
        raise UserError(f"{where}: block_tokens must be a list with one count per hash id ({blocks})")
    if not all(isinstance(n, int) and not isinstance(n, bool) and 0 < n <= size for n in given):
        raise UserError(f"{where}: block_tokens must be counts from 1 to block_size ({size})")
    return tuple(given)


def iter_trace(paths: list[Path], fmt: str = "auto", ctx: ImportContext | None = None) -> Iterator[tuple[list[TraceRequest], FileSummary]]:
    """Each log file under ``paths`` imported, in path order."""
    from prefixbench.workloads.logs.sources import detect_format, find_logs

    ctx = ctx or ImportContext()
    for path in find_logs(paths):
        file_fmt = detect_format(path) if fmt == "auto" else fmt
        yield import_file(path, file_fmt, ctx)
