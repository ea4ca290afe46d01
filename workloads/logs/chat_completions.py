"""Import a request log in the OpenAI chat-completions shape: one request body per line.

Each non-empty line is a JSON object with ``model`` and ``messages`` (required) and optionally
``tools``, ``reasoning_effort``, ``temperature``, ``stop``, ``max_tokens`` (or
``max_completion_tokens``), ``provider`` (default ``openai``) and ``purpose``
(``conversation`` or ``compaction``, a prefixbench extension; default ``conversation``).

Messages map onto the wire model as follows: leading ``system``/``developer`` messages become
the request's system prompt (joined by a blank line); later ones stay messages with role
``system``. Content may be a string or a list of ``{"type": "text", "text": ...}`` parts.
Assistant ``tool_calls`` become tool-call blocks and ``reasoning_content`` / ``reasoning_text``
/ ``reasoning`` a reasoning block (placed first, carrying its field name); ``tool`` messages
become one tool result each, keyed by ``tool_call_id``.

Speed: lines are streamed as bytes and parsed with msgspec, each message left as raw JSON
until it is needed; a message whose exact bytes were already seen (every earlier message of a
conversation is resent on each request) maps to the same :class:`Message` object without being
parsed again, so its rendering and cache lookups are shared too. Whatever that fast path
cannot vouch for (a line msgspec refuses, a new value too deeply nested or holding a lone
surrogate) is read again the plain way (:mod:`prefixbench.workloads.logs.reading`), which says
exactly what is wrong, in the same words for every importer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
from prefixbench.simulator.checks import is_int, is_number
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import (
    REASONING_FIELDS,
    Block,
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
from prefixbench.workloads.logs.jsonlines import BadJson, decode, iter_lines, too_deep
from prefixbench.workloads.logs.reading import as_finite, decode_line, loads

#: Values of ``reasoning_effort`` the chat-completions providers document.
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
#: The largest output cap accepted (far above any model's).
MAX_OUTPUT_TOKENS = 10**9
#: The highest temperature the chat-completions providers accept.
MAX_TEMPERATURE = 2


class LineError(ValueError):
    """A problem with one line; the reader adds file:line."""


def read_chat_completions(
    path: Path, torn: list[int] | None = None, progress: Callable[[int], None] | None = None
) -> Iterator[Request]:
    """Yield one Request per non-empty line, streamed (UserError with file:line on the first bad line);
    ``progress``: as :func:`read_recorded`'s."""
    for request, _ in read_recorded(path, torn, progress):
        yield request


def read_recorded(
    path: Path, torn: list[int] | None = None, progress: Callable[[int], None] | None = None, *, pairs_checked: bool = True
) -> Iterator[tuple[Request, tuple[str, ...]]]:
    """Yield each line's Request and the durable rewrites it declares (``rewrites``, a
    prefixbench extension: what the agent rewrote since the previous request; default none).

    ``torn``: when given, a torn last line (a log still being written) ends the requests and its
    number is appended here, as audit reads it (:func:`~.jsonlines.iter_lines`); ``progress``
    is told the bytes read so far, as there. ``pairs_checked=False`` reads a tool result that
    answers no earlier call as it stands, for the provider to refuse (``check --trace``'s
    ``tool-pairs-intact`` names it); else the line is bad input."""
    memo = MessageMemo()
    count = 0
    for number, line in iter_lines(path, torn=torn, progress=progress):
        where = f"{path}:{number}"
        if count == 0 and b'"message_count"' in line:
            _refuse_session_log(line, where)
        elif count == 0 and line.strip() == b"{":
            _refuse_pretty_session_log(path, where)  # (one object laid over many lines)
        try:
            try:
                recorded = parse_line(line, memo, pairs_checked=pairs_checked)
            except BadJson:  # read it the plain way: it says exactly what is wrong
                body = loads(decode_line(line, path, number), where)
                recorded = parse_request(body, pairs_checked=pairs_checked), parse_rewrites(body)
        except LineError as exc:
            raise UserError(f"{where}: {exc}") from None
        yield recorded
        count += 1
    if count == 0:
        raise UserError(f"{path}: no requests (the file is empty)")


def _refuse_session_log(line: bytes, where: str) -> None:
    """Refuse a first line that is a Hermes Agent session log (its ``model`` and ``messages`` are a
    request body's, so it was replayed as one request), in the line audit says of it."""
    from prefixbench.workloads.logs.formats.totals_only import HERMES_SESSION, is_hermes_session

    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return  # (bad JSON: the reading below words it)
    if isinstance(value, dict) and is_hermes_session(value):
        raise UserError(f"{where}: {HERMES_SESSION}")


#: The largest file :func:`_refuse_pretty_session_log` reads whole to see what it is.
_SESSION_LOG_BYTES = 64 << 20


def _refuse_pretty_session_log(path: Path, where: str) -> None:
    """Refuse a file whose first line opens an object laid over many lines that is a Hermes Agent
    session log (hermes-agent writes them indented); anything else is left to the line's own
    error."""
    try:
        if path.stat().st_size > _SESSION_LOG_BYTES:
            return
        value = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return
    if isinstance(value, dict):
        _refuse_session_log(json.dumps(value).encode(), where)


#: A line with every top-level value kept as raw JSON, and a messages array of raw messages.
_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])


class MessageMemo:
    """Messages already parsed, by their exact JSON bytes (bounded: two generations of 128 MB).

    Looked up by length and last 64 bytes, then confirmed by comparing all the bytes: a
    memcmp is several times cheaper than hashing every resent byte, and a look-alike that
    differs elsewhere is simply parsed (and replaces the entry).
    """

    LIMIT_BYTES = 128 * 2**20
    EDGE = 64

    def __init__(self) -> None:
        self._current: dict[tuple[int, bytes], tuple[bytes, _Parsed]] = {}
        self._previous: dict[tuple[int, bytes], tuple[bytes, _Parsed]] = {}
        self._bytes = 0

    def get(self, raw: bytes, idx: int) -> _Parsed:
        """(role, message, system text when the role may open the system prompt) of one raw message."""
        key = (len(raw), raw[-self.EDGE :])
        entry = self._current.get(key)
        if entry is not None and entry[0] == raw:
            return entry[1]
        entry = self._previous.get(key)
        parsed = entry[1] if entry is not None and entry[0] == raw else _parse_message(_checked(raw, 2), idx)
        if self._bytes + len(raw) > self.LIMIT_BYTES:
            self._previous, self._current, self._bytes = self._current, {}, 0
        self._current[key] = (raw, parsed)
        self._bytes += len(raw)
        return parsed


#: (role, message, system text when the role may open the system prompt, whether the message or
#: one of its content parts carries ``cache_control``).
_Parsed = tuple[str, Message, "str | None", bool]


def _checked(raw: bytes | msgspec.Raw, depth: int) -> object:
    """A new value of a line, decoded; BadJson when the plain reading would refuse it (nested
    too deep counting from the line's top, ``depth`` levels above this value)."""
    value = decode(raw)
    if too_deep(value, depth):
        raise BadJson("nested too deep")
    return value


def _parse_message(raw: Any, idx: int) -> _Parsed:
    if not isinstance(raw, dict):
        raise LineError(f"messages[{idx}] must be an object")
    role = raw.get("role")
    system = _text_of(raw.get("content"), idx) if role in ("system", "developer") else None
    return role, _message(raw, idx), system, _has_marker(raw)


def _has_marker(raw: dict[str, Any]) -> bool:
    """Whether a message, or one of its content parts, carries ``cache_control`` (an OpenAI-shaped
    body to a provider that takes Anthropic's markers: DashScope, OpenRouter)."""
    if isinstance(raw.get("cache_control"), dict):
        return True
    content = raw.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and isinstance(p.get("cache_control"), dict) for p in content)


def parse_line(line: bytes, memo: MessageMemo, *, pairs_checked: bool = True) -> tuple[Request, tuple[str, ...]]:
    """One request line and its declared rewrites; messages seen before (same bytes) come from
    ``memo`` unparsed.

    Raises BadJson for anything the plain reading should word (see the module docstring).
    """
    try:
        top = _TOP.decode(line)
        raw_messages = _RAW_LIST.decode(top["messages"]) if "messages" in top else None
    except msgspec.ValidationError:  # not an object, or messages not a list: say what, below
        body = _checked(line, 0)
        return parse_request(body, pairs_checked=pairs_checked), parse_rewrites(body)
    except (msgspec.DecodeError, RecursionError):
        raise BadJson("not JSON msgspec reads") from None
    body = {key: _checked(value, 1) for key, value in top.items() if key != "messages"}
    if raw_messages is not None:
        body["messages"] = [bytes(raw) for raw in raw_messages]
    return parse_request(body, memo, pairs_checked=pairs_checked), parse_rewrites(body)


def _json_kind(value: object) -> str:
    """What a JSON value is, in JSON's words (``null``, ``an array``), not Python's type names."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else str(value).lower()
    if isinstance(value, (int, float)):
        return "a number"
    return "a string" if isinstance(value, str) else "an array" if isinstance(value, list) else type(value).__name__


def parse_request(body: Any, memo: MessageMemo | None = None, *, pairs_checked: bool = True) -> Request:
    """One chat-completions request body as a wire Request (LineError when malformed).

    With ``memo``, ``body["messages"]`` holds each message's raw JSON bytes (see :func:`parse_line`);
    ``pairs_checked``: as :func:`read_recorded`'s.
    """
    if not isinstance(body, dict):
        raise LineError(f"expected a JSON object, got {_json_kind(body)}")
    model = _require(body, "model", str)
    if not model.strip():
        raise LineError("field 'model' is empty")
    raw_messages = _require(body, "messages", list)
    if not raw_messages:
        raise LineError("field 'messages' is empty (a request sends at least one message)")
    tools = tuple(_tool(t, i) for i, t in enumerate(_optional(body, "tools", list) or []))
    system_parts: list[str] = []
    messages: list[Message] = []
    marked = isinstance(body.get("cache_control"), dict)
    for idx, raw in enumerate(raw_messages):
        _role, message, system, has_marker = memo.get(raw, idx) if memo is not None else _parse_message(raw, idx)
        marked = marked or has_marker
        if system is not None and not messages:
            system_parts.append(system)
            continue
        messages.append(message)
    if pairs_checked:
        _check_tool_results(messages, raw_messages)
    return Request(
        _envelope(body), tuple(messages), "\n\n".join(system_parts), tools, _max_tokens(body), _purpose(body),
        retention=_retention(body), cache_marked=marked,
    )


#: The values ``prompt_cache_retention`` takes (``in-memory``: the SDKs' first spelling,
#: November 2025).
_RETENTIONS = {"in_memory": "in_memory", "in-memory": "in_memory", "24h": "24h"}


def _retention(body: dict[str, Any]) -> str | None:
    """The cache lifetime the body asks for: ``prompt_cache_retention`` (``in_memory`` or
    ``24h``), else ``prompt_cache_options.ttl`` as sent (GPT-5.6: ``30m``; Kimi: ``5m`` /
    ``1h``), else None. The provider's rules decide what a value means for the model."""
    asked = body.get("prompt_cache_retention")
    if asked is not None:
        if not isinstance(asked, str) or asked not in _RETENTIONS:
            raise LineError(f"field 'prompt_cache_retention' must be one of in_memory, 24h, got {asked!r:.60}")
        return _RETENTIONS[asked]
    options = body.get("prompt_cache_options")
    if options is None:
        return None
    if not isinstance(options, dict):
        raise LineError(f"field 'prompt_cache_options' must be an object, got {options!r:.60}")
    ttl = options.get("ttl")
    if ttl is not None and not (isinstance(ttl, str) and ttl.strip()):
        raise LineError(f"field 'prompt_cache_options.ttl' must be a non-empty string, got {ttl!r:.60}")
    return ttl


def _envelope(body: dict[str, Any]) -> Envelope:
    """The request family: provider, model, effort, temperature, stop (``[]`` = no stop)."""
    provider = _optional(body, "provider", str)
    if provider is None:
        provider = "openai"
    elif not provider.strip():
        raise LineError("field 'provider' is empty (leave it out for openai)")
    effort = _optional(body, "reasoning_effort", str)
    if effort is not None and effort not in REASONING_EFFORTS:
        raise LineError(f"field 'reasoning_effort' must be one of {', '.join(REASONING_EFFORTS)}, got {effort!r}")
    raw_temperature = body.get("temperature")
    temperature = as_finite(raw_temperature)
    if raw_temperature is not None:
        if not is_number(raw_temperature):
            raise LineError(f"field 'temperature' must be a number, got {raw_temperature!r:.60}")
        if temperature is None or not 0 <= temperature <= MAX_TEMPERATURE:
            raise LineError(f"field 'temperature' must be a number from 0 to {MAX_TEMPERATURE}, got {raw_temperature!r:.60}")
    stop = body.get("stop")
    if isinstance(stop, str):
        stop = (stop,)
    elif isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        # Providers treat an empty list as no stop sequence: one request family.
        stop = tuple(stop) or None
    elif stop is not None:
        raise LineError(f"field 'stop' must be a string or a list of strings, got {stop!r:.60}")
    return Envelope(provider, body["model"], effort, temperature, stop)


def _max_tokens(body: dict[str, Any]) -> int | None:
    key = "max_tokens" if "max_tokens" in body else "max_completion_tokens"
    max_tokens = body.get(key)
    if max_tokens is not None and (not is_int(max_tokens) or not 0 < max_tokens <= MAX_OUTPUT_TOKENS):
        raise LineError(f"field {key!r} must be a positive integer up to {MAX_OUTPUT_TOKENS:,}, got {max_tokens!r:.60}")
    return max_tokens


def _purpose(body: dict[str, Any]) -> str:
    purpose = _optional(body, "purpose", str) or "conversation"
    if purpose not in ("conversation", "compaction"):
        raise LineError(f"field 'purpose' must be 'conversation' or 'compaction', got {purpose!r}")
    return purpose


def _check_tool_results(messages: list[Message], raw_messages: list[Any]) -> None:
    """Every tool message answers a call an earlier assistant message made."""
    called: set[str] = set()
    offset = len(raw_messages) - len(messages)
    for idx, message in enumerate(messages, offset):
        for block in message.blocks:
            if isinstance(block, ToolCall):
                called.add(block.call_id)
            elif isinstance(block, ToolResult) and block.call_id not in called:
                raise LineError(
                    f"messages[{idx}]: tool_call_id {block.call_id!r} answers no earlier assistant tool call"
                )


def parse_rewrites(body: dict[str, Any]) -> tuple[str, ...]:
    """The ``rewrites`` extension field: a list of rewrite kinds (LineError when malformed)."""
    rewrites = body.get("rewrites", [])
    if not isinstance(rewrites, list) or not all(isinstance(r, str) and r for r in rewrites):
        raise LineError(f"field 'rewrites' must be a list of rewrite kinds (strings), got {rewrites!r:.60}")
    return tuple(rewrites)


def request_body(request: Request, rewrites: tuple[str, ...] = ()) -> dict[str, Any]:
    """A wire Request as one chat-completions body (the inverse of :func:`parse_request`).

    What the format cannot carry is flattened the same way on every request, so prefixes
    stay prefixes: several text blocks of one message become one string, several tool
    results of one message one tool message each, ``is_error`` is dropped, and several
    reasoning blocks join under the first one's field.
    """
    messages: list[dict[str, Any]] = []
    if request.system or request.system_blocks:
        messages.append({"role": "system", "content": request.system or "\n\n".join(request.system_blocks)})
    for message in request.messages:
        messages.extend(_message_body(message))
    body: dict[str, Any] = {"provider": request.envelope.provider, "model": request.envelope.model}
    if request.envelope.reasoning_effort is not None:
        body["reasoning_effort"] = request.envelope.reasoning_effort
    if request.envelope.temperature is not None:
        body["temperature"] = request.envelope.temperature
    if request.envelope.stop is not None:
        body["stop"] = list(request.envelope.stop)
    if request.max_tokens is not None:
        body["max_tokens"] = request.max_tokens
    if request.purpose != "conversation":
        body["purpose"] = request.purpose
    if request.retention is not None and request.retention not in _RETENTIONS:
        body["prompt_cache_options"] = {"ttl": request.retention}
    elif request.retention is not None:
        body["prompt_cache_retention"] = request.retention
    if rewrites:
        body["rewrites"] = list(rewrites)
    if request.tools:
        body["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": json.loads(t.parameters)}}
            for t in request.tools
        ]
    body["messages"] = messages
    return body


def _message_body(message: Message) -> list[dict[str, Any]]:
    text = "".join(b.text for b in message.blocks if isinstance(b, Text))
    if message.role == "tool":
        return [
            {"role": "tool", "tool_call_id": r.call_id, "content": "".join(t.text for t in r.content)}
            for r in message.tool_results
        ]
    if message.role != "assistant":
        return [{"role": message.role, "content": text}]
    out: dict[str, Any] = {"role": "assistant", "content": text}
    reasoning = message.reasoning
    if reasoning:
        out[reasoning[0].field] = "".join(r.text for r in reasoning)
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    return [out]


def _require(body: dict[str, Any], key: str, kind: type) -> Any:
    if key not in body:
        raise LineError(f"missing field {key!r}")
    value = body[key]
    if not isinstance(value, kind):
        raise LineError(f"field {key!r} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _optional(body: dict[str, Any], key: str, kind: type) -> Any:
    value = body.get(key)
    if value is not None and not isinstance(value, kind):
        raise LineError(f"field {key!r} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _text_of(content: Any, idx: int) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                raise LineError(f"messages[{idx}].content: only text parts are supported, got {part!r:.60}")
        return "".join(parts)
    raise LineError(f"messages[{idx}].content must be a string or a list of parts")


def _message(raw: dict[str, Any], idx: int) -> Message:
    role = raw.get("role")
    match role:
        case "user" | "system" | "developer":
            return Message("system" if role == "developer" else role, (Text(_text_of(raw.get("content"), idx)),))
        case "assistant":
            blocks: list[Block] = []
            for field in REASONING_FIELDS:
                if field in raw and raw[field] is not None:
                    if not isinstance(raw[field], str):
                        raise LineError(f"messages[{idx}].{field} must be a string")
                    blocks.append(Reasoning(raw[field], field))
                    break
            text = _text_of(raw.get("content"), idx)
            if text:
                blocks.append(Text(text))
            calls = raw.get("tool_calls")
            if calls is not None and not isinstance(calls, list):
                raise LineError(f"messages[{idx}].tool_calls must be a list, got {type(calls).__name__}")
            for n, call in enumerate(calls or []):
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not isinstance(call.get("id"), str) or not isinstance(fn.get("name"), str):
                    raise LineError(f"messages[{idx}].tool_calls[{n}] needs id and function.name")
                arguments = fn.get("arguments", "")
                if not isinstance(arguments, str):
                    arguments = canonical_json(arguments)
                blocks.append(ToolCall(call["id"], fn["name"], arguments))
            return Message("assistant", tuple(blocks))
        case "tool":
            call_id = raw.get("tool_call_id")
            if not isinstance(call_id, str):
                raise LineError(f"messages[{idx}]: a tool message needs 'tool_call_id'")
            return Message("tool", (ToolResult(call_id, (Text(_text_of(raw.get("content"), idx)),)),))
        case _:
            raise LineError(f"messages[{idx}]: unknown role {role!r} (known: system, developer, user, assistant, tool)")


def _tool(raw: Any, idx: int) -> ToolSchema:
    fn = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise LineError(f"tools[{idx}] needs function.name")
    parameters = fn.get("parameters")
    if parameters is None:
        parameters = {}
    if not isinstance(parameters, dict):
        raise LineError(f"tools[{idx}].function.parameters must be an object")
    return ToolSchema.make(fn["name"], str(fn.get("description", "")), parameters)
