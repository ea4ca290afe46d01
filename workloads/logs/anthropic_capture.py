"""Importer for captured Anthropic traffic: claude-trace JSONL, one request/response pair a line.

Each line is an object ``{"request": {"timestamp", "body"}, "response": {"timestamp",
"status_code", "body" | "body_raw"}}``. The request body becomes a prefixbench
:class:`~prefixbench.simulator.wire.Request` (envelope ``anthropic``/model, its
``cache_control`` breakpoints); the response gives the provider-reported usage, from the JSON
body or, for a streamed answer, from the SSE ``message_start`` event (input and cache counts)
and the last ``message_delta`` (output tokens).

Block mapping (rendering stays the project's; only cache identity and length matter):
text -> Text, tool_use / server_tool_use -> ToolCall (input JSON in the client's key order, as
sent), tool_result -> ToolResult, thinking / redacted_thinking -> Reasoning (field ``thinking``
/ ``redacted_thinking``; the signature is not prompt text), image / document -> a Text stub
naming the media type and a sha256 of the source (an image's real token cost is not modelled),
anything else -> Text of its canonical JSON.

Times become logical ms from the first request: ``tick`` = request timestamp, ``ready_tick`` =
response timestamp (claude-trace logs the response when it is complete, later than "the first
response has begun": a conservative stand-in). Lines whose HTTP status is not 2xx were not
served, so they neither read nor write the cache: they are listed in ``Capture.skipped``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal, TypeAlias

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.checks import is_int, is_number
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import ANTHROPIC
from prefixbench.simulator.providers.anthropic import read_usage as read_anthropic_usage
from prefixbench.simulator.render import render_request
from prefixbench.simulator.usage import Usage
from prefixbench.simulator.wire import (
    Block,
    CacheBreakpoint,
    CacheTtl,
    Envelope,
    Message,
    Reasoning,
    Request,
    Text,
    ToolCall,
    ToolResult,
    ToolSchema,
    canonical_json,
)
from prefixbench.workloads.logs.jsonlines import iter_lines, may_nest_too_deep, read_json, is_skip, tail_reason
from prefixbench.workloads.logs.reading import as_finite

CallKind: TypeAlias = Literal["main", "side", "compaction"]

#: A summarization instruction in the last user text: how Claude Code's /compact asks
#: ("Your task is to create a detailed summary of the conversation so far ...").
_SUMMARY_INSTRUCTION = re.compile(r"\bsummar(?:y|ize|ise)\b[^\n.]{0,80}\bconversation\b", re.IGNORECASE)
_MAX_BREAKPOINTS = ANTHROPIC.max_breakpoints or 0
#: Largest usage count accepted: far above any context window, small enough for float maths.
MAX_USAGE_TOKENS = 10**12
#: Latest accepted timestamp (seconds): far beyond any capture, far below float overflow in ms.
_MAX_TIMESTAMP = 1e11


class CapturedCall(msgspec.Struct, frozen=True):
    """One served request of a capture, with what the provider reported for it."""

    #: Position among the served calls, in file order.
    index: int
    #: 1-based line in the capture file.
    line: int
    request: Request
    usage: Usage
    kind: CallKind
    tick: int
    ready_tick: int


class Capture(msgspec.Struct, frozen=True):
    """A parsed capture file."""

    path: str
    calls: tuple[CapturedCall, ...]
    #: ``(line, reason)`` of lines the provider did not serve (non-2xx status).
    skipped: tuple[tuple[int, str], ...] = ()


def read_capture(path: str | Path, torn: list[int] | None = None, progress: Callable[[int], None] | None = None) -> Capture:
    """Parse a claude-trace JSONL file (``torn``: as :func:`~.jsonlines.iter_lines`'s, a torn
    last line also listed in ``skipped``; ``progress``: told the bytes read so far, as there).

    Raises:
        UserError: ``FILE:LINE: what`` for a malformed line, a line without request body,
            timestamp or usage, or an unreadable file.
    """
    name = str(path)
    parsed: list[_Line] = []
    skipped: list[tuple[int, str]] = []
    cut: list[int] | None = None if torn is None else []
    for line_no, raw in iter_lines(Path(path), torn=cut, progress=progress):  # streamed as bytes, blank lines skipped
        line = _parse_line(read_json(raw, Path(path), line_no), line_no, f"{name}:{line_no}")
        if isinstance(line, str):
            skipped.append((line_no, line))
        else:
            parsed.append(line)
    if cut:
        torn.extend(cut)  # type: ignore[union-attr]
        if is_skip(cut[0]):  # (a whole last record that zeros follow was read: no skip)
            skipped.append((int(cut[0]), tail_reason(cut[0])))
    if not parsed:
        raise UserError(f"{name}: no served request/response pairs in the capture")
    origin = min(line.sent for line in parsed)
    calls = []
    for index, line in enumerate(parsed):
        tick = _ms(line.sent - origin)
        ready = max(tick, _ms(line.answered - origin)) if line.answered is not None else tick
        calls.append(CapturedCall(index, line.number, line.request, line.usage, classify_call(line.request), tick, ready))
    return Capture(name, tuple(calls), tuple(skipped))


class _Line(msgspec.Struct, frozen=True):
    """One served line of a capture, before times are made relative."""

    number: int
    request: Request
    usage: Usage
    sent: float
    answered: float | None


def _parse_line(record: object, line_no: int, where: str) -> _Line | str:
    """One capture line (parsed: msgspec, see jsonlines.py): the served call, or why it was skipped (``HTTP 500``)."""
    if not isinstance(record, dict):
        raise UserError(f"{where}: expected a JSON object with request and response")
    request_part = record.get("request")
    body = request_part.get("body") if isinstance(request_part, dict) else None
    if not isinstance(body, dict):
        raise UserError(f"{where}: no request body")
    sent = _timestamp(request_part.get("timestamp"), f"{where}: request timestamp")  # type: ignore[union-attr]
    if sent is None:
        raise UserError(f"{where}: request has no numeric timestamp")
    response = record.get("response")
    if not isinstance(response, dict):
        raise UserError(f"{where}: no response, so no usage")
    status = response.get("status_code")
    if status is not None and not is_int(status):
        raise UserError(f"{where}: response status_code must be an integer, got {status!r:.40}")
    if status is not None and not 200 <= status < 300:
        return f"HTTP {status}"
    usage = read_usage(response, where)
    answered = _timestamp(response.get("timestamp"), f"{where}: response timestamp")
    return _Line(line_no, parse_request_body(body, where), usage, sent, answered)


def _timestamp(value: object, where: str) -> float | None:
    """A Unix time in seconds, or None when absent or not a number."""
    if not is_number(value):
        return None
    if not 0 <= value <= _MAX_TIMESTAMP:  # type: ignore[operator]
        raise UserError(f"{where} {value!r} is not a Unix time in seconds")
    return float(value)  # type: ignore[arg-type]


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


def classify_call(request: Request) -> CallKind:
    """``compaction`` if the last user text asks for a summary of the conversation, else
    ``main`` when the request carries tools (the agent loop), else ``side`` (title, quota...).
    Inline system messages after the last user message (the API takes one last) are passed over:
    the instruction is the user message's still."""
    turns = [message for message in request.messages if message.role != "system"]
    if turns and turns[-1].role == "user":
        texts = [block.text for block in turns[-1].blocks if isinstance(block, Text)]
        if texts and _SUMMARY_INSTRUCTION.search(texts[-1]):
            return "compaction"
    return "main" if request.tools else "side"


def read_usage(response: Mapping[str, object], where: str) -> Usage:
    """Reported usage of a response: its JSON body's ``usage`` or the SSE stream's events, checked
    (:func:`usage_record`) and read by Anthropic's usage reader.

    Raises:
        UserError: when the response carries no usage, or a count that is not one.
    """
    return read_anthropic_usage(usage_record(response, where), where)


def usage_record(response: Mapping[str, object], where: str) -> dict[str, object]:
    """The usage of a response as Anthropic's reader takes it: the four counts (a cache count the
    response omits is 0: models or API versions without caching omit them; ``input_tokens`` it
    must have), the 1 h part of the writes where there is one, ``speed`` where it is fast, and
    ``iterations`` as the response has it.

    Raises:
        UserError: when the response carries no usage, a count that is not a non-negative
            integer or is beyond any real count, or a 1 h part outside 0 to the writes.
    """
    body = response.get("body")
    raw = response.get("body_raw")
    usage: dict[str, object] | None = None
    if isinstance(body, str):
        body = _loads_or_none(body)
    if isinstance(body, dict) and isinstance(body.get("usage"), dict):
        usage = dict(body["usage"])
    elif isinstance(raw, str):
        usage = _sse_usage(raw, where) if "data:" in raw else _json_usage(raw)
    if usage is None:
        raise UserError(f"{where}: response has no usage")
    counts: dict[str, object] = {}
    for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"):
        value = usage.get(key)
        if value is None and key != "input_tokens":
            value = 0  # models or API versions without caching omit the cache fields
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise UserError(f"{where}: usage.{key} is not a non-negative integer ({value!r:.40})")
        if value > MAX_USAGE_TOKENS:
            digits = len(str(value))
            raise UserError(f"{where}: usage.{key} ({digits:,} digits) is beyond any real count (at most {MAX_USAGE_TOKENS:,})")
        counts[key] = value
    split = usage.get("cache_creation")
    long_part = split.get("ephemeral_1h_input_tokens") if isinstance(split, dict) else None
    if long_part is not None and (not is_int(long_part) or not 0 <= long_part <= counts["cache_creation_input_tokens"]):  # type: ignore[operator]
        raise UserError(
            f"{where}: usage.cache_creation.ephemeral_1h_input_tokens must be an integer from 0 to the cache write "
            f"({counts['cache_creation_input_tokens']}), got {long_part!r:.40}"
        )
    if long_part:
        counts["cache_creation"] = {"ephemeral_1h_input_tokens": long_part}
    # The response's own word on the speed that served it (fast mode): the body's ``speed`` asks
    # for it, the usage says what ran and was billed.
    if usage.get("speed") == "fast":
        counts["speed"] = "fast"
    # The samplings of the response (server-side compaction, the advisor tool, server-side
    # fallback): the capture reader counts those that are calls of their own.
    if "iterations" in usage:
        counts["iterations"] = usage["iterations"]
    return counts


def _loads_or_none(text: str) -> object:
    """Parsed JSON, or None for text that is not (a body that is not JSON carries no usage)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # malformed, or a huge integer, or nested too deep
        return None


def _json_usage(raw: str) -> dict[str, object] | None:
    body = _loads_or_none(raw)
    if isinstance(body, dict) and isinstance(body.get("usage"), dict):
        return dict(body["usage"])
    return None


def _sse_usage(raw: str, where: str) -> dict[str, object] | None:
    """Usage of a streamed message: ``message_start``'s, updated by each ``message_delta``."""
    usage: dict[str, object] | None = None
    for line in raw.split("\n"):  # SSE lines end in \n (or \r\n); U+2028 inside JSON is text
        if not line.startswith("data:"):
            continue
        try:
            event = _sse_event(line[len("data:") :])
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: malformed SSE data in the response ({exc.msg})") from None
        except (ValueError, RecursionError):
            raise UserError(f"{where}: SSE data in the response is nested too deep or holds a huge integer") from None
        if not isinstance(event, dict):
            continue
        if event.get("type") == "message_start":
            message = event.get("message")
            if isinstance(message, dict) and isinstance(message.get("usage"), dict):
                usage = dict(message["usage"])
        elif event.get("type") == "message_delta" and usage is not None and isinstance(event.get("usage"), dict):
            # The delta's counts are cumulative (output always; the rest on newer API versions).
            usage.update({key: value for key, value in event["usage"].items() if value is not None})
    return usage


_SSE_DECODE = msgspec.json.Decoder().decode


def _sse_event(payload: str) -> object:
    """One SSE data payload as JSON, the same value ``json.loads`` gives (a stream has thousands).

    msgspec reads it when it can vouch for it: what it accepts ``json.loads`` accepts with an
    equal value, and what it refuses (NaN, lone surrogates, a number beyond a float, malformed
    JSON) goes to ``json.loads``, which accepts it or words the error as before. Payloads that
    could nest near the recursion limit go to ``json.loads`` directly.
    """
    if not may_nest_too_deep(payload):
        try:
            return _SSE_DECODE(payload)
        except ValueError:  # msgspec.DecodeError, and UnicodeEncodeError for a lone surrogate
            pass
    return json.loads(payload)


def parse_request_body(body: Mapping[str, object], where: str) -> Request:
    """Convert an Anthropic Messages API request body into a prefixbench request.

    Raises:
        UserError: for a body the Messages API would not accept (no model, unknown role, a bad
            ``cache_control``, more than 4 breakpoints...).
    """
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise UserError(f"{where}: request body has no model")
    raw_messages = body.get("messages")
    if not isinstance(raw_messages, list):
        raise UserError(f"{where}: request body has no messages list")
    breakpoints: list[CacheBreakpoint] = []
    tools = _parse_tools(body.get("tools", []), where, breakpoints)
    system_text, system_blocks = _parse_system(body.get("system", ""), where, breakpoints)
    messages = _parse_messages(raw_messages, where, breakpoints)
    request = Request(
        envelope=_envelope(body, model, where),
        messages=messages,
        system=system_text,
        tools=tools,
        max_tokens=body.get("max_tokens") if is_int(body.get("max_tokens")) else None,  # type: ignore[arg-type]
        system_blocks=system_blocks,
        cache_breakpoints=tuple(breakpoints),
        auto_cache=_ttl(body, f"{where}: top level"),
    )
    request = _with_purpose(request)
    num_breakpoints = len(render_request(request).breakpoints)
    if num_breakpoints > _MAX_BREAKPOINTS:
        raise UserError(f"{where}: {num_breakpoints} cache_control breakpoints, at most {_MAX_BREAKPOINTS} allowed")
    return request


def _parse_tools(raw: object, where: str, breakpoints: list[CacheBreakpoint]) -> tuple[ToolSchema, ...]:
    """The tool definitions; a ``cache_control`` on one adds a breakpoint after it."""
    tools = []
    for tool_idx, tool in enumerate(require_list(raw, f"{where}: tools")):
        tool_where = f"{where}: tool {tool_idx}"
        tool = require_dict(tool, tool_where)
        ttl = _ttl(tool, tool_where)
        if ttl is not None:
            breakpoints.append(CacheBreakpoint("tools", tool_idx, None, ttl))
        name = tool.get("name")
        if not isinstance(name, str):
            raise UserError(f"{tool_where}: no name")
        schema = tool.get("input_schema")
        rest = {key: value for key, value in tool.items() if key not in ("name", "description", "cache_control")}
        parameters = canonical_json(schema if isinstance(schema, dict) else rest)
        tools.append(ToolSchema(name, str(tool.get("description", "")), parameters))
    return tuple(tools)


def _parse_system(raw: object, where: str, breakpoints: list[CacheBreakpoint]) -> tuple[str, tuple[str, ...]]:
    """The system prompt: a plain string, or text blocks (each may carry a breakpoint)."""
    if isinstance(raw, str):
        return raw, ()
    blocks: list[str] = []
    for block_idx, block in enumerate(require_list(raw, f"{where}: system")):
        block_where = f"{where}: system block {block_idx}"
        block = require_dict(block, block_where)
        if block.get("type") != "text" or not isinstance(block.get("text"), str):
            raise UserError(f"{block_where}: system blocks must be text blocks")
        ttl = _ttl(block, block_where)
        if ttl is not None:
            breakpoints.append(CacheBreakpoint("system", block_idx, None, ttl))
        blocks.append(block["text"])  # type: ignore[arg-type]
    return "", tuple(blocks)


def _parse_messages(raw_messages: list[object], where: str, breakpoints: list[CacheBreakpoint]) -> tuple[Message, ...]:
    """The conversation: user and assistant messages, string or block content, and the inline
    ``system`` messages the Messages API takes between them (a system prompt added mid-conversation,
    at its place in the prefix; recorded from ``claude-opus-4-8``, 2026). Where one stands is not
    checked: Anthropic takes it on Claude Opus 4.8 only, after a user message (or an assistant's
    ending in a server tool use), last or before an assistant message, text blocks only, and
    answers any other body with a 400, and a line whose response is not a 2xx is skipped before
    its body is read; a logged 2xx says the API took the body as it is."""
    messages = []
    for message_idx, message in enumerate(raw_messages):
        message_where = f"{where}: message {message_idx}"
        message = require_dict(message, message_where)
        role = message.get("role")
        if role not in ("user", "assistant", "system"):
            raise UserError(f"{message_where}: role must be user, assistant or system, not {role!r:.40}")
        content = message.get("content")
        blocks: list[Block] = []
        if isinstance(content, str):
            blocks.append(Text(content))
        else:
            for block_idx, block in enumerate(require_list(content, f"{message_where}: content")):
                block_where = f"{message_where} block {block_idx}"
                converted, ttl = _convert_block(require_dict(block, block_where), block_where)
                blocks.append(converted)
                if ttl is not None:
                    breakpoints.append(CacheBreakpoint("messages", block_idx, message_idx, ttl))
        messages.append(Message(role, tuple(blocks)))  # type: ignore[arg-type]
    return tuple(messages)


def _with_purpose(request: Request) -> Request:
    return replace(request, purpose="compaction") if classify_call(request) == "compaction" else request


def _envelope(body: Mapping[str, object], model: str, where: str) -> Envelope:
    """The request family: model, effort (thinking budget / effort setting), temperature, stop."""
    effort_parts: list[str] = []
    output_config = body.get("output_config")
    if isinstance(output_config, dict) and isinstance(output_config.get("effort"), str):
        effort_parts.append(output_config["effort"])
    thinking = body.get("thinking")
    if isinstance(thinking, dict):
        match thinking.get("type"):
            case "enabled":
                effort_parts.append(f"thinking={thinking.get('budget_tokens')}")
            case "adaptive":
                effort_parts.append("thinking=adaptive")
            case _:
                pass  # disabled or absent: no effort
    raw_temperature = body.get("temperature")
    temperature = as_finite(raw_temperature)
    if raw_temperature is not None and (temperature is None or not 0 <= temperature <= 1):
        raise UserError(f"{where}: temperature must be a number from 0 to 1, got {raw_temperature!r:.40}")
    stop = body.get("stop_sequences")
    if stop is not None and not (isinstance(stop, list) and all(isinstance(item, str) for item in stop)):
        raise UserError(f"{where}: stop_sequences is not a list of strings")
    return Envelope(
        provider="anthropic",
        model=model,
        reasoning_effort=" ".join(effort_parts) or None,
        temperature=temperature,
        stop=tuple(stop) if stop else None,
    )


def _convert_block(block: dict[str, object], where: str) -> tuple[Block, CacheTtl | None]:
    """One message content block and its breakpoint TTL (a nested marker counts for the block)."""
    ttl = _ttl(block, where)
    kind = block.get("type")
    match kind:
        case "text":
            return Text(_str(block, "text", where)), ttl
        case "tool_use" | "server_tool_use":
            arguments = json.dumps(block.get("input", {}), ensure_ascii=False, separators=(",", ":"))
            return ToolCall(_str(block, "id", where), _str(block, "name", where), arguments), ttl
        case "tool_result":
            content = block.get("content", "")
            items: list[Text] = []
            if isinstance(content, str):
                items = [Text(content)] if content else []
            else:
                for item_idx, item in enumerate(require_list(content, f"{where} content")):
                    item = require_dict(item, f"{where} content {item_idx}")
                    ttl = _ttl(item, f"{where} content {item_idx}") or ttl
                    is_text = item.get("type") == "text" and isinstance(item.get("text"), str)
                    items.append(Text(item["text"]) if is_text else _stub(item))
            return ToolResult(_str(block, "tool_use_id", where), tuple(items), block.get("is_error") is True), ttl
        case "thinking":
            return Reasoning(_str(block, "thinking", where), "thinking"), ttl
        case "redacted_thinking":
            return Reasoning(_str(block, "data", where), "redacted_thinking"), ttl
        case _:
            return _stub(block), ttl


def _stub(block: Mapping[str, object]) -> Text:
    """Text standing in for a non-text block: images and documents by media type and digest."""
    payload = {key: value for key, value in block.items() if key != "cache_control"}
    if block.get("type") in ("image", "document") and isinstance(block.get("source"), dict):
        source = block["source"]
        digest = hashlib.sha256(canonical_json(source).encode()).hexdigest()[:16]
        return Text(f"[{block['type']} {source.get('media_type', source.get('type', ''))} sha256:{digest}]")
    return Text(canonical_json(payload))


def _ttl(holder: Mapping[str, object], where: str) -> CacheTtl | None:
    """The TTL of a ``cache_control`` marker on ``holder``, or None when it has none."""
    marker = holder.get("cache_control")
    if marker is None:
        return None
    if not isinstance(marker, dict) or marker.get("type") != "ephemeral":
        raise UserError(f"{where}: cache_control must be {{\"type\": \"ephemeral\"}}, got {marker!r}")
    ttl = marker.get("ttl", "5m")
    if ttl == "5m" or ttl == "1h":
        return ttl
    raise UserError(f"{where}: cache_control ttl must be \"5m\" or \"1h\", got {ttl!r}")


def require_dict(value: object, where: str) -> dict[str, object]:
    """``value`` when it is a JSON object, else a UserError naming ``where``."""
    if not isinstance(value, dict):
        raise UserError(f"{where}: expected an object")
    return value


def require_list(value: object, where: str) -> list[object]:
    """``value`` when it is a JSON list, else a UserError naming ``where``."""
    if not isinstance(value, list):
        raise UserError(f"{where}: expected a list")
    return value


def _str(block: Mapping[str, object], key: str, where: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise UserError(f"{where}: {block.get('type')} block has no string {key}")
    return value
