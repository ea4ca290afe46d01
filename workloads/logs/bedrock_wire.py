"""AWS Bedrock runtime calls in an HTTP capture: which call a URL is, and the usage its answer holds.

The four calls (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_Operations_Amazon_Bedrock_Runtime.html),
each with the model id in its path (its ``:`` often sent as ``%3A``):

- ``/model/<id>/converse``: usage in the JSON body;
- ``/model/<id>/converse-stream``: usage in the stream's last ``metadata`` event
  (``{usage, metrics}``);
- ``/model/<id>/invoke``: the model's own body (Anthropic's Messages body on Claude); usage in
  the JSON body (Anthropic's, or Nova's), else in the ``X-Amzn-Bedrock-*-Token-Count`` headers;
- ``/model/<id>/invoke-with-response-stream``: each ``chunk`` event carries base64 ``bytes`` of
  one of the model's own stream events (Anthropic's ``message_start`` / ``message_delta``...);
  the last one adds ``amazon-bedrock-invocationMetrics``.

A stream is AWS event-stream (``application/vnd.amazon.eventstream``,
https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html): binary frames of a prelude
(total length, headers length, a CRC32 of the two), headers (``:event-type``,
``:message-type``...), a JSON payload and a CRC32 of the whole frame. A capture holds it in one
of these forms, all read:

- ``body_raw`` as text: the bytes read as UTF-8 (claude-trace's ``response.text()``, prefixbench's
  own proxy), so the framing bytes that are not UTF-8 became U+FFFD. When the text still encodes
  to the very bytes of the frames (no byte was replaced), they are checked as frames; otherwise
  the frames' headers and JSON payloads are found in the text (no CRC can be checked then);
- ``body_raw`` as base64 of the bytes (also flagged ``body_encoding: "base64"``, or as
  ``body_base64``): checked as frames;
- ``events``: the decoded events, as an SDK yields them (``{"metadata": {...}}``,
  ``{"chunk": {"bytes": ...}}``), or bare payloads; and JSON text, one payload a line.

Frames that do not check (a CRC that differs, a length past the end: a stream cut short, a
corrupt file) are one clear error naming the frame and its byte offset.

Usage comes from the richest record (:func:`answer_usage`): the final ``metadata`` usage or
``amazon-bedrock-invocationMetrics`` over Anthropic's own ``message_start`` + ``message_delta``
counts, and those over the headers, unless the richer record lacks the cache fields another one
has; a 1 h write split that only Anthropic's usage states is kept.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
import zlib
from collections.abc import Iterator, Mapping
from typing import Literal
from urllib.parse import unquote, urlsplit

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers.base import UsageReader
from prefixbench.simulator.providers.bedrock import COUNT_HEADERS, MESSAGES_BODY_KEY
from prefixbench.simulator.providers.bedrock import RULES as BEDROCK_RULES
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.jsonlines import BadJson, decode, too_deep

Operation = Literal["converse", "converse-stream", "invoke", "invoke-with-response-stream"]
_PATH = re.compile(r"/model/([^/]+)/(converse|converse-stream|invoke|invoke-with-response-stream)\Z")

#: A frame's fixed bytes: the prelude (two lengths and their CRC) and the message CRC.
_OVERHEAD = 16
#: Largest frame accepted (AWS caps an event-stream message at 16 MiB).
MAX_FRAME = 16 * 1024 * 1024
#: Header value types (the event-stream encoding): the fixed size of each, or -1 for a
#: 2-byte length then that many bytes (7 string, 6 bytes).
_VALUE_SIZE = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 6: -1, 7: -1, 8: 8, 9: 16}
#: A run of headers in text (a lossy reading of the bytes): a name of 1-127 ASCII characters
#: after its length, a string value type, and a value length whose bytes survived as characters.
_HEADER_START = re.compile(r"[\x01-\x7f]:[a-z-]+\x07")
#: Base64 text, wrapped in lines or not.
_BASE64 = re.compile(r"[A-Za-z0-9+/\r\n]+={0,2}\s*\Z")
#: Where a JSON object's brackets are counted: a bracket, a string's start, a control character.
_JSON_STOP = re.compile(r'[{}\[\]"\x00-\x08\x0b\x0c\x0e-\x1f]')
_JSON_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"')
#: A header's count: ASCII digits (``str.isdigit`` also takes ``²``, which ``int`` refuses).
_COUNT = re.compile(r"[0-9]{1,15}")


class BedrockCall(msgspec.Struct, frozen=True):
    """A Bedrock runtime call named by its URL."""

    model: str
    operation: Operation

    @property
    def provider(self) -> str:
        """Who serves it: Bedrock, whatever the model (``us.deepseek.r1-v1:0`` names DeepSeek, but
        its usage is Converse's and its cache Bedrock's)."""
        return BEDROCK_RULES.name

    @property
    def streamed(self) -> bool:
        return self.operation in ("converse-stream", "invoke-with-response-stream")

    @property
    def invoke(self) -> bool:
        """InvokeModel (the model's own body), not Converse."""
        return self.operation.startswith("invoke")


def bedrock_call(url: str) -> BedrockCall | None:
    """The call a URL names (its model id percent-decoded), else None."""
    try:
        path = urlsplit(url).path
    except ValueError:  # a malformed URL (an unclosed IPv6 bracket) names no call
        return None
    match = _PATH.search(path)
    if match is None or not match.group(1):
        return None
    return BedrockCall(unquote(match.group(1)), match.group(2))  # type: ignore[arg-type]


def messages_body(body: Mapping[str, object]) -> bool:
    """Whether an InvokeModel body is Anthropic's Messages shape (replayed and diffed)."""
    return MESSAGES_BODY_KEY in body and isinstance(body.get("messages"), list)


class Frame(msgspec.Struct, frozen=True):
    """One event-stream frame: its headers and its payload."""

    headers: dict[str, object]
    payload: bytes


class FrameError(ValueError):
    """A frame that does not check (the message says which and why)."""


def decode_frames(data: bytes) -> list[Frame]:
    """Every frame of an event stream, each checked (lengths, both CRCs, headers).

    Raises:
        FrameError: the first frame that does not check, named by its number and byte offset.
    """
    frames: list[Frame] = []
    offset = 0
    while offset < len(data):
        at = f"frame {len(frames) + 1} (byte {offset:,})"
        left = len(data) - offset
        if left < 12:
            raise FrameError(f"{at}: {left} bytes left, a frame's prelude takes 12 (a stream cut short?)")
        total, header_length, prelude_crc = struct.unpack_from(">III", data, offset)
        if zlib.crc32(data[offset : offset + 8]) != prelude_crc:
            raise FrameError(f"{at}: prelude CRC does not match (not an event stream, or corrupt)")
        if not _OVERHEAD <= total <= MAX_FRAME or header_length > total - _OVERHEAD:
            raise FrameError(f"{at}: length {total:,} with {header_length:,} header bytes is not a frame's")
        if total > left:
            raise FrameError(f"{at}: frame of {total:,} bytes but {left:,} left (a stream cut short?)")
        end = offset + total
        (message_crc,) = struct.unpack_from(">I", data, end - 4)
        if zlib.crc32(data[offset : end - 4]) != message_crc:
            raise FrameError(f"{at}: message CRC does not match (corrupt)")
        headers = _headers(data[offset + 12 : offset + 12 + header_length], at)
        frames.append(Frame(headers, data[offset + 12 + header_length : end - 4]))
        offset = end
    return frames


def _headers(data: bytes, at: str) -> dict[str, object]:
    headers: dict[str, object] = {}
    i = 0
    while i < len(data):
        size = data[i]
        name_bytes = data[i + 1 : i + 1 + size]
        i += 1 + size
        if size == 0 or len(name_bytes) < size or i >= len(data):
            raise FrameError(f"{at}: a header runs past the headers")
        kind = data[i]
        i += 1
        width = _VALUE_SIZE.get(kind)
        if width is None:
            raise FrameError(f"{at}: header value type {kind} is not one of the encoding's")
        if width < 0:
            if i + 2 > len(data):
                raise FrameError(f"{at}: a header runs past the headers")
            (width,) = struct.unpack_from(">H", data, i)
            i += 2
        raw = data[i : i + width]
        if len(raw) < width:
            raise FrameError(f"{at}: a header runs past the headers")
        i += width
        value: object = raw
        if kind == 7:
            value = raw.decode("utf-8", "replace")
        elif kind in (0, 1):
            value = kind == 0  # 0: true, 1: false
        headers[name_bytes.decode("utf-8", "replace")] = value
    return headers


class Event(msgspec.Struct, frozen=True):
    """One event of a stream: its type (``metadata``, ``chunk``...; None when unknown), whether
    the stream said it is an exception (and which), and its payload."""

    kind: str | None
    payload: object
    exception: str | None = None


def frame_event(frame: Frame) -> Event:
    """A checked frame as an event (a payload that is not JSON is kept as None)."""
    kind = frame.headers.get(":event-type")
    message_type = frame.headers.get(":message-type")
    exception = None
    if message_type in ("exception", "error"):
        exception = str(frame.headers.get(":exception-type") or frame.headers.get(":error-code") or message_type)
    return Event(kind if isinstance(kind, str) else None, _json(frame.payload), exception)


def text_events(text: str) -> list[Event]:
    """The events of a stream read as text whose framing bytes were partly lost: each run of
    headers with the JSON object right after it (JSON text cannot hold the control bytes a
    header run starts with, so no payload is mistaken for one)."""
    events: list[Event] = []
    position = 0
    for match in _HEADER_START.finditer(text):
        if match.start() < position:
            continue
        headers, after = _text_headers(text, match.start())
        if not headers:
            continue
        payload, position = _json_at(text, after)
        message_type = headers.get(":message-type")
        exception = None
        if message_type in ("exception", "error"):
            exception = headers.get(":exception-type") or headers.get(":error-code") or message_type
        events.append(Event(headers.get(":event-type"), payload, exception))
    return events


def _text_headers(text: str, i: int) -> tuple[dict[str, str], int]:
    """The string headers that start at ``i`` (as many as read whole), and where they end."""
    headers: dict[str, str] = {}
    while i < len(text):
        size = ord(text[i])
        name = text[i + 1 : i + 1 + size]
        j = i + 1 + size
        if not 0 < size < 128 or not name.startswith(":") or j + 3 > len(text) or text[j] != "\x07":
            break
        high, low = ord(text[j + 1]), ord(text[j + 2])
        if high > 0x7F or low > 0x7F:  # a length byte that was not UTF-8 by itself: the value is lost
            break
        end = j + 3 + (high << 8 | low)
        if end > len(text):
            break
        headers[name] = text[j + 3 : end]
        i = end
    return headers, i


def _json_at(text: str, i: int) -> tuple[object, int]:
    """The JSON object that starts at ``i``, and where it ends (None and ``i`` when there is none).

    Its end is found by its brackets, strings jumped whole; a control character (which JSON
    text cannot hold raw) ends the search, so a cut payload costs no more than its own length."""
    if not text.startswith("{", i):
        return None, i
    depth, j = 0, i
    while True:
        match = _JSON_STOP.search(text, j)
        if match is None:
            return None, i
        c = match.group()
        if c == '"':
            string = _JSON_STRING.match(text, match.start())
            if string is None:
                return None, i
            j = string.end()
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return _json(text[i : match.end()]), match.end()
        else:  # a control character
            return None, i
        j = match.end()


def _json(data: bytes | str) -> object:
    """A JSON payload as a value; None when it is not JSON or nests too deep to hold."""
    try:
        value = decode(data)
    except (BadJson, UnicodeEncodeError):  # text with a lone surrogate holds no JSON either
        return None
    return None if too_deep(value) else value


def response_events(response: Mapping[str, object], where: str) -> list[Event]:
    """The stream events a captured response holds, in any of the forms the module doc lists.

    Raises:
        UserError: a stream given as bytes whose frames do not check (one line, ``where``).
    """
    events: list[Event] = []
    raw = response.get("body_raw")
    flagged = response.get("body_encoding") == "base64" or response.get("encoding") == "base64"
    encoded = response.get("body_base64")
    if isinstance(encoded, str):
        events += _frames_of(_base64(encoded, where), where)
    if isinstance(raw, str) and raw:
        events += _raw_events(raw, flagged, where)
    listed = response.get("events")
    if isinstance(listed, list):
        events += [e for item in listed if (e := _listed_event(item)) is not None]
    return events


def _raw_events(raw: str, flagged: bool, where: str) -> list[Event]:
    if flagged:
        return _frames_of(_base64(raw, where), where)
    if len(raw) >= _OVERHEAD and _BASE64.match(raw):
        try:
            data = base64.b64decode("".join(raw.split()), validate=True)
        except (binascii.Error, ValueError):
            data = b""
        if _starts_a_frame(data):
            return _frames_of(data, where)
    # No byte was lost (none became U+FFFD): the frames can be checked. (A first frame that
    # survived whole says nothing of the next ones.)
    data = raw.encode("utf-8", "surrogatepass") if "\ufffd" not in raw else b""
    if _starts_a_frame(data):
        return _frames_of(data, where)
    found = text_events(raw)
    if found:
        return found
    # JSON text, one payload a line (a tool that kept the decoded events).
    return [Event(None, value) for line in raw.splitlines() if line.lstrip().startswith("{") and (value := _json(line)) is not None]


def _starts_a_frame(data: bytes) -> bool:
    return len(data) >= _OVERHEAD and zlib.crc32(data[:8]) == struct.unpack_from(">I", data, 8)[0]


def _base64(text: str, where: str) -> bytes:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise UserError(f"{where}: response body: not base64, yet flagged as the base64 bytes of an event stream") from None


def _frames_of(data: bytes, where: str) -> list[Event]:
    try:
        return [frame_event(frame) for frame in decode_frames(data)]
    except FrameError as exc:
        raise UserError(f"{where}: response event stream: {exc}") from None


def _listed_event(item: object) -> Event | None:
    """One event as a capture listed it: an SDK's ``{kind: payload}``, an SSE-like
    ``{event, data}``, a bare payload, or JSON text of one."""
    if isinstance(item, str):
        item = _json(item)
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("data"), (dict, str)) and isinstance(item.get("event"), str):
        data = item["data"]
        return Event(item["event"], _json(data) if isinstance(data, str) else data)
    if len(item) == 1:
        (kind, payload), = item.items()
        if isinstance(payload, dict):
            exception = kind if kind.endswith(("Exception", "Error")) else None
            return Event(kind, payload, exception)
    return Event(None, item)


# --- usage ---------------------------------------------------------------------------------

#: The fields that say a record reports the cache at all, in any of Bedrock's spellings.
_CACHE_FIELDS = frozenset({
    "cacheReadInputTokens", "cacheWriteInputTokens", "cacheReadInputTokenCount", "cacheWriteInputTokenCount",
    "cache_read_input_tokens", "cache_creation_input_tokens",
})
#: The input count of each spelling: a record without one is not a usage record.
_INPUT_FIELDS = ("inputTokens", "inputTokenCount", "input_tokens")

#: How final a record is: the stream's or body's last word, Anthropic's counts merged from
#: ``message_start`` and ``message_delta``, ``message_start`` alone, the headers.
Rank = Literal[3, 2, 1, 0]


class Answer(msgspec.Struct, frozen=True):
    """What a Bedrock answer says: its usage (None: none found) and, for a stream that ended in
    an exception, which one."""

    usage: Usage | None
    exception: str | None = None


def answer_usage(response: Mapping[str, object], read: UsageReader, where: str) -> Answer:
    """The usage of a captured Bedrock answer, from its richest record (see the module doc)."""
    records: list[tuple[Rank, dict]] = []
    body = response.get("body")
    if isinstance(body, str):
        body = _json(body)
    if isinstance(body, dict):
        records += _body_records(body)
    elif isinstance(body, list):
        records += _stream_records([e for item in body if (e := _listed_event(item)) is not None])
    events = response_events(response, where)
    records += _stream_records(events)
    headers = _header_record(response.get("headers"))
    if headers is not None:
        records.append((0, headers))
    exception = next((e.exception for e in reversed(events) if e.exception), None)
    if not records:
        return Answer(None, exception)
    best = max(enumerate(records), key=lambda item: (_reports_cache(item[1][1]), item[1][0], item[0]))[1][1]
    usage = read(best, where)
    if usage.cache_write_1h == 0 and usage.cache_write:
        for _, record in records:
            other = read(record, where)
            if other.cache_write_1h and other.cache_write == usage.cache_write:
                usage = msgspec.structs.replace(usage, cache_write_5m=other.cache_write_5m, cache_write_1h=other.cache_write_1h)
                break
    return Answer(usage, exception)


def _reports_cache(record: Mapping[str, object]) -> bool:
    return not _CACHE_FIELDS.isdisjoint(record)


def _usage_record(value: object) -> dict | None:
    return value if isinstance(value, dict) and any(key in value for key in _INPUT_FIELDS) else None


def _body_records(body: Mapping[str, object]) -> list[tuple[Rank, dict]]:
    """A whole answer's usage: Converse's or Nova's ``usage`` (final), or an Anthropic
    message's (the counts Anthropic itself reports, which Bedrock's own may repeat)."""
    usage = _usage_record(body.get("usage"))
    if usage is None:
        return []
    return [(3 if "inputTokens" in usage else 2, usage)]


def _stream_records(events: list[Event]) -> list[tuple[Rank, dict]]:
    """The usage records of a stream's events: final ones (Converse's ``metadata``, the
    invocation metrics, Nova's ``metadata``), and Anthropic's ``message_start`` usage updated by
    each ``message_delta``."""
    records: list[tuple[Rank, dict]] = []
    anthropic: dict | None = None
    merged = False
    for event in events:
        for payload in _payloads(event):
            kind = payload.get("type")
            if kind == "message_start":
                anthropic = _usage_record(_mapping(payload.get("message")).get("usage"))
                anthropic = dict(anthropic) if anthropic is not None else None
            elif kind == "message_delta":
                if anthropic is not None:
                    anthropic.update({k: v for k, v in _mapping(payload.get("usage")).items() if v is not None})
                    merged = True
            else:
                records += _body_records(payload)
            metrics = _usage_record(payload.get("amazon-bedrock-invocationMetrics"))
            if metrics is not None:
                records.append((3, metrics))
            records += _body_records(_mapping(payload.get("metadata")))
    if anthropic is not None:
        records.append((2 if merged else 1, anthropic))
    return records


def _payloads(event: Event) -> Iterator[dict]:
    """The JSON objects an event carries: its payload, and for an InvokeModel chunk the model's
    own event inside its base64 ``bytes``."""
    payload = event.payload
    if not isinstance(payload, dict):
        return
    yield payload
    inner = payload.get("bytes")
    if isinstance(inner, str) and inner.lstrip().startswith("{"):  # kept decoded, as text
        inner = _json(inner)
    elif isinstance(inner, str):
        try:
            inner = _json(base64.b64decode(inner, validate=True))
        except (binascii.Error, ValueError):
            return
    if isinstance(inner, dict):  # (a capture may also keep it decoded, as an object)
        yield inner


def _header_record(headers: object) -> dict | None:
    """The counts of a non-streamed InvokeModel answer's ``X-Amzn-Bedrock-*`` headers."""
    if not isinstance(headers, dict):
        return None
    lowered = {str(k).lower(): v for k, v in headers.items()}
    record: dict[str, object] = {}
    for header, field in COUNT_HEADERS:
        value = lowered.get(header)
        if isinstance(value, str) and _COUNT.fullmatch(value.strip()):
            record[field] = int(value.strip())
        elif isinstance(value, int) and not isinstance(value, bool):
            record[field] = value
    return record if "inputTokenCount" in record else None


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, dict) else {}
