"""Google Gemini's own API in an HTTP capture: model calls and explicit caches.

What the http-capture importer (:mod:`.http_capture`) asks of a call whose URL
:func:`~prefixbench.simulator.providers.gemini.native_route` names:

* **Model calls** (``models/<model>:generateContent`` or ``:streamGenerateContent``, on the
  Gemini API or Vertex AI's ``publishers/google/models/<model>``): the model is the URL's; the
  usage is the response's ``usageMetadata``, read by the provider's rules; a streamed response
  (``?alt=sse`` events in ``body_raw``, or a JSON array of chunks) carries one in many chunks,
  and the richest, else the last, wins. A body naming ``cachedContent`` read that explicit cache:
  its ``cachedContentTokenCount`` is the explicit part of the read. The body is rebuilt in the
  chat-completions shape (:func:`chat_shape`) for the body diff when it holds its whole prompt.
* **Explicit caches** (``POST .../cachedContents``, then ``PATCH`` or ``DELETE``
  ``.../cachedContents/<id>``): :class:`CacheBook` keeps what each one created holds
  (``usageMetadata.totalTokenCount``) and for how long it was kept, for the audit to bill.
  They are not model calls: no request of the trace.

Field names from https://ai.google.dev/api/generate-content and https://ai.google.dev/api/caching.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers.base import ProviderRules, count
from prefixbench.simulator.providers.gemini import EXPLICIT_TTL_MS, NativeRoute, cache_id, has_token_count
from prefixbench.simulator.usage import Usage
from prefixbench.simulator.wire import Request
from prefixbench.workloads.logs.chat_completions import LineError, parse_request
from prefixbench.workloads.logs.formats.common import as_dict, json_text, parse_time_ms
from prefixbench.workloads.logs.trace import NO_MODEL, ExplicitCache

#: A ``google.protobuf.Duration`` in JSON: seconds, up to nine decimals, then ``s``.
_DURATION = re.compile(r"(\d{1,12})(?:\.(\d{1,9}))?s\Z")
#: Where a response object holds its usage (REST's camelCase, the SDKs' snake_case).
_USAGE_KEYS = ("usageMetadata", "usage_metadata")


class GeminiCall(msgspec.Struct, frozen=True):
    """One native model call: its usage, its body when it can be rebuilt, its family settings and
    the explicit cache it named."""

    usage: Usage
    parsed: Request | None
    envelope: tuple[tuple[str, str], ...]
    cache: str | None


def model_call(rules: ProviderRules, route: NativeRoute, body: dict, response: dict, where: str) -> GeminiCall | None:
    """A ``generateContent`` call read, or None when its response carries no usage.

    Raises:
        NoTokenCount: a usage naming no token count (a blocked prompt: no model call).
        UserError: a bad count, cached tokens above the prompt, or a malformed ``cachedContent``.
    """
    raw = response_usage(response)
    if raw is None:
        return None
    usage = rules.read_usage(raw, where)
    named = body.get("cachedContent", body.get("cached_content"))
    cache = cache_id(named) if named is not None else None
    if named is not None and cache is None:
        raise UserError(f"{where}: request.body.cachedContent {str(named)[:60]!r} is not a cachedContents/<id> name")
    if cache is not None:
        # A request that names a content reads it; implicit caching never applies to it (the
        # provider module's doc), so the whole read is explicit.
        usage = msgspec.structs.replace(usage, cache_read_explicit=usage.cache_read)
    config = as_dict(body.get("generationConfig"))
    thinking = as_dict(config.get("thinkingConfig"))
    level = thinking.get("thinkingLevel", thinking.get("thinkingBudget"))
    envelope = (("thinking", str(level)),) if isinstance(level, (str, int)) and not isinstance(level, bool) else ()
    shaped = chat_shape(body, str(route.model), rules.name) if cache is None else None
    parsed = None
    if shaped is not None:
        try:
            parsed = parse_request(shaped)
        except LineError:
            parsed = None
    return GeminiCall(usage, parsed, envelope, cache)


def response_usage(response: dict) -> dict | None:
    """The richest ``usageMetadata`` of a response (the last one on a tie): its JSON body, a
    JSON array of streamed chunks, ``?alt=sse`` events (``body_raw``) or parsed ``events``. One
    without a token count counts only where no other is: Vertex AI answers a prompt its Model
    Armor template blocked (``promptFeedback.blockReason: MODEL_ARMOR``) with
    ``usageMetadata: {trafficType}`` alone, which the provider's reader takes as no model call
    (:class:`~prefixbench.simulator.providers.gemini.NoTokenCount`)."""
    found: list[dict] = []
    countless: list[dict] = []
    for chunk in _chunks(response):
        for key in _USAGE_KEYS:
            if isinstance(chunk.get(key), dict):
                (found if has_token_count(chunk[key]) else countless).append(chunk[key])
                break
    if not found:
        return countless[-1] if countless else None
    return max(reversed(found), key=lambda usage: sum(value is not None for value in usage.values()))


def _chunks(response: dict) -> list[dict]:
    """Every response object a captured response holds, in order."""
    out: list[object] = []
    for key in ("body", "body_raw"):
        value = response.get(key)
        if isinstance(value, str):
            text = value.strip()
            if text.startswith(("{", "[")):
                try:
                    value = json.loads(text)
                except (ValueError, RecursionError):  # not JSON, or nested past the parser
                    value = None
            else:  # SSE: one response object a ``data:`` line
                for line in text.splitlines():
                    if line.startswith("data:"):
                        try:
                            out.append(json.loads(line[5:]))
                        except (ValueError, RecursionError):  # not JSON, or nested past the parser
                            continue
                continue
        out.extend(value if isinstance(value, list) else [value])
    events = response.get("events")
    if isinstance(events, list):
        for event in events:
            data = as_dict(event).get("data", event) if isinstance(event, dict) else event
            if isinstance(data, str):
                try:
                    data = json.loads(data)
                except (ValueError, RecursionError):  # not JSON, or nested past the parser
                    continue
            out.append(data)
    return [chunk for chunk in out if isinstance(chunk, dict)]


class _NotWhole(Exception):
    """The body holds a part the chat shape cannot carry (an image, a file, code execution)."""


def chat_shape(body: dict[str, Any], model: str, provider: str) -> dict[str, Any] | None:
    """A ``generateContent`` body in the chat-completions shape, for
    :func:`~prefixbench.workloads.logs.chat_completions.parse_request`, or None when it cannot
    be rebuilt.

    ``systemInstruction`` is the system message; a ``user`` content's text parts a user message
    and its ``functionResponse`` parts tool messages; a ``model`` content's text an assistant
    message, its ``functionCall`` parts tool calls (the call's ``id``, else its name, answered by
    the response with the same), its ``thought`` texts and ``thoughtSignature`` values the
    reasoning sent back; ``functionDeclarations`` the tools (another tool, as Google Search, keeps
    its whole definition as parameters).
    """
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return None
    try:
        messages = _system(body.get("systemInstruction", body.get("system_instruction")))
        for content in contents:
            messages += _content(content)
        tools = [tool for entry in body.get("tools") or [] for tool in _tools(entry)]
    except (_NotWhole, TypeError):
        return None
    out: dict[str, Any] = {"model": model, "provider": provider, "messages": messages}
    if tools:
        out["tools"] = tools
    config = as_dict(body.get("generationConfig"))
    if "temperature" in config:
        out["temperature"] = config["temperature"]
    if isinstance(config.get("stopSequences"), list):
        out["stop"] = config["stopSequences"]
    if isinstance(config.get("maxOutputTokens"), int) and not isinstance(config["maxOutputTokens"], bool):
        out["max_tokens"] = config["maxOutputTokens"]
    return out


def _parts(content: object) -> list[dict]:
    parts = as_dict(content).get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list) or not all(isinstance(part, dict) for part in parts):
        raise _NotWhole
    return parts


def _system(instruction: object) -> list[dict[str, Any]]:
    if instruction is None:
        return []
    if isinstance(instruction, str):
        return [{"role": "system", "content": instruction}]
    texts = [part.get("text") for part in _parts(instruction)]
    if not all(isinstance(text, str) for text in texts):
        raise _NotWhole
    return [{"role": "system", "content": "".join(texts)}]  # type: ignore[arg-type]


def _content(content: object) -> list[dict[str, Any]]:
    """One content as chat messages (see :func:`chat_shape`)."""
    role = content.get("role", "user") if isinstance(content, dict) else None
    parts = _parts(content)
    if role == "model":
        text, reasoning, calls = "", "", []
        for part in parts:
            signature = part.get("thoughtSignature")
            if isinstance(signature, str):
                reasoning += signature
            if isinstance(part.get("functionCall"), dict):
                call = part["functionCall"]
                name, call_id = call.get("name"), call.get("id", call.get("name"))
                if not isinstance(name, str) or not isinstance(call_id, str):
                    raise _NotWhole
                arguments = json.dumps(call.get("args", {}), ensure_ascii=False, sort_keys=True)
                calls.append({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
            elif isinstance(part.get("text"), str):
                if part.get("thought") is True:
                    reasoning += part["text"]
                else:
                    text += part["text"]
            elif not isinstance(signature, str):
                raise _NotWhole
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if reasoning:
            message["reasoning_content"] = reasoning
        if calls:
            message["tool_calls"] = calls
        return [message]
    if role != "user":
        raise _NotWhole
    out: list[dict[str, Any]] = []
    text = ""
    for part in parts:
        if isinstance(part.get("functionResponse"), dict):
            answer = part["functionResponse"]
            call_id = answer.get("id", answer.get("name"))
            if not isinstance(call_id, str):
                raise _NotWhole
            result = json.dumps(answer.get("response", {}), ensure_ascii=False, sort_keys=True)
            out.append({"role": "tool", "tool_call_id": call_id, "content": result})
        elif isinstance(part.get("text"), str):
            text += part["text"]
        else:
            raise _NotWhole
    if text or not out:
        out.append({"role": "user", "content": text})
    return out


def _tools(entry: object) -> list[dict[str, Any]]:
    if not isinstance(entry, dict):
        raise _NotWhole
    declarations = entry.get("functionDeclarations", entry.get("function_declarations"))
    if declarations is None:
        name = next(iter(entry), "tool")
        return [{"type": "function", "function": {"name": str(name), "description": "", "parameters": entry}}]
    if not isinstance(declarations, list):
        raise _NotWhole
    out = []
    for declaration in declarations:
        if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
            raise _NotWhole
        parameters = declaration.get("parameters", declaration.get("parametersJsonSchema")) or {}
        out.append({"type": "function", "function": {
            "name": declaration["name"], "description": str(declaration.get("description") or ""), "parameters": parameters,
        }})
    return out


def duration_ms(value: object, where: str, what: str) -> int:
    """A JSON ``Duration`` (``"3600s"``, ``"1.5s"``) in ms.

    Raises:
        UserError: not such a duration.
    """
    found = _DURATION.match(value) if isinstance(value, str) else None
    if found is None:
        raise UserError(f"{where}: {what} {str(value)[:40]!r} is not a duration like \"3600s\"")
    return int(found.group(1)) * 1000 + int((found.group(2) or "0").ljust(9, "0")[:3])


class _Kept:
    """A cached content while its file is read: when it started and when it ends."""

    __slots__ = ("cache", "start_ms", "end_ms", "ended_by", "unknown")

    def __init__(self, cache: ExplicitCache, start_ms: int | None, end_ms: int | None) -> None:
        self.cache = cache
        self.start_ms = start_ms
        self.end_ms = end_ms
        self.ended_by = "expiry"
        self.unknown = False


class CacheBook:
    """The explicit caches one capture file creates, updates and deletes (see the module doc)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self._kept: dict[str, _Kept] = {}

    def create(self, line: int, provider: str, request: dict, body: dict, response: dict, where: str) -> str | None:
        """A ``POST .../cachedContents``; a reason when it cannot be billed, else None.

        Raises:
            UserError: a malformed count, time or duration.
        """
        answer = _answer(response)
        name = cache_id(answer.get("name"))
        tokens = as_dict(answer.get("usageMetadata")).get("totalTokenCount")
        if name is None or tokens is None:
            return "cached content created without a name and usageMetadata.totalTokenCount in the response: not billed"
        tokens = count(tokens, where, "response usageMetadata.totalTokenCount")
        named = body.get("model") or answer.get("model")
        model = (named.rpartition("/")[2] if isinstance(named, str) else "") or NO_MODEL
        start = parse_time_ms(answer.get("createTime"), where)
        if start is None:
            start = parse_time_ms(request.get("timestamp"), where)
        end, kept = self._expiry(start, body, answer, where)
        cache = ExplicitCache(self.file, line, name, provider, model, tokens, start, kept)
        self._kept[name] = _Kept(cache, start, end)
        return None

    def update(self, name: str, request: dict, body: dict, response: dict, where: str) -> str | None:
        """A ``PATCH .../cachedContents/<id>`` (a new ``ttl`` or ``expireTime``); a reason when the
        cache is not one this file created, else None."""
        kept = self._kept.get(name)
        if kept is None:
            return f"update of {name}, which this file does not create"
        at = parse_time_ms(request.get("timestamp"), where)
        end, _ = self._expiry(at, body, _answer(response), where)
        if end is None or kept.start_ms is None:
            kept.unknown = True
        else:
            kept.end_ms, kept.ended_by = end, "update"
        return None

    def delete(self, name: str, request: dict, where: str) -> str | None:
        """A ``DELETE .../cachedContents/<id>``; a reason when the cache is not one this file
        created, else None."""
        kept = self._kept.get(name)
        if kept is None:
            return f"deletion of {name}, which this file does not create"
        at = parse_time_ms(request.get("timestamp"), where)
        if at is None or kept.start_ms is None:
            kept.unknown = True
        elif kept.end_ms is None or at < kept.end_ms:
            kept.end_ms, kept.ended_by = at, "delete"
        return None

    def caches(self) -> tuple[ExplicitCache, ...]:
        """Every cache created, with how long it was kept (None: the log cannot tell)."""
        out = []
        for kept in self._kept.values():
            cache = kept.cache
            if kept.unknown:
                cache = msgspec.structs.replace(cache, kept_ms=None, ended_by=kept.ended_by)
            elif kept.start_ms is not None and kept.end_ms is not None:
                cache = msgspec.structs.replace(cache, kept_ms=max(0, kept.end_ms - kept.start_ms), ended_by=kept.ended_by)
            out.append(cache)
        return tuple(out)

    @staticmethod
    def _expiry(start: int | None, body: dict, answer: dict, where: str) -> tuple[int | None, int | None]:
        """When a content expires (epoch ms) and how long from ``start`` (ms), either None when the
        call cannot tell: the response's ``expireTime`` (always sent), else the request's, else its
        ``ttl``, else the documented default of an hour."""
        end = parse_time_ms(answer.get("expireTime"), where)
        if end is None:
            end = parse_time_ms(body.get("expireTime"), where)
        if end is None:
            ttl = duration_ms(body["ttl"], where, "request.body.ttl") if "ttl" in body else EXPLICIT_TTL_MS
            return (None if start is None else start + ttl), ttl
        return end, (None if start is None else max(0, end - start))


def _answer(response: dict) -> dict:
    """A cached-content call's response body (JSON, or JSON text)."""
    body = json_text(response.get("body"))
    if body is None and isinstance(response.get("body_raw"), str):
        body = json_text(response["body_raw"])
    return as_dict(body)
