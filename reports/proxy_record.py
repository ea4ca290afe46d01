"""What ``prefixbench proxy`` forwards and what it writes: header rules, redaction, capture lines.

No network code here (and no aiohttp): the rules are plain functions so they can be tested and
fuzzed on their own (tests/unit/proxy/test_proxy_record.py).

Forwarded unchanged: the method, the path and query as received (appended to the upstream's
base URL), every request and response header except the hop-by-hop ones below, and every byte
of both bodies (the response's still compressed when the provider compressed it). Not
forwarded (RFC 9110 section 7.6.1, they describe one connection, not the message): ``Connection``
and the headers it names, ``Keep-Alive``, ``Proxy-Connection``, ``Proxy-Authenticate``,
``Proxy-Authorization``, ``TE``, ``Trailer``, ``Transfer-Encoding``, ``Upgrade``. ``Host`` is
the upstream's and ``Content-Length`` is set for the bytes sent, which are the bytes received;
``Expect: 100-continue`` is answered by the proxy itself (it reads the whole body first).

Written (one JSON line per call, the ``http-capture`` format ``audit`` reads): the request's
time, method, URL, headers and body (parsed JSON), the response's time, status, headers and
body (parsed JSON, or for an event stream its text as ``body_raw``; for AWS's binary event
stream, its bytes in base64 with ``body_encoding: "base64"``), with every credential
replaced by ``[redacted]``: the headers in :data:`SECRET_HEADERS` and the query parameters in
:data:`SECRET_QUERY`.
"""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterable
from datetime import UTC, datetime

import msgspec

#: Headers of one connection, never forwarded (besides those ``Connection`` names).
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
#: Set by the proxy's HTTP stack for the hop it sends: the upstream's host, the body's length;
#: and ``Expect: 100-continue``, which the proxy has already answered (it holds the whole body).
REWRITTEN = frozenset({"host", "content-length", "expect"})
#: Headers whose values are credentials: recorded as ``[redacted]``.
SECRET_HEADERS = frozenset(
    {
        "x-api-key",
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
    }
)
#: Query parameters whose values are credentials (Gemini's ``?key=``): recorded as ``[redacted]``.
SECRET_QUERY = frozenset({"key", "api_key", "api-key", "apikey", "access_token", "token"})
REDACTED = "[redacted]"


def dropped_headers(headers: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The lower-cased names not forwarded: the hop-by-hop ones, those ``Connection`` lists, and
    the two the proxy sets for its own hop."""
    named = {
        token.strip().lower()
        for name, value in headers
        if name.lower() == "connection"
        for token in value.split(",")
        if token.strip()
    }
    return HOP_BY_HOP | REWRITTEN | named


def forwarded(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers to send on, in their order, repeated ones kept (see the module doc)."""
    pairs = list(headers)
    drop = dropped_headers(pairs)
    return [(name, value) for name, value in pairs if name.lower() not in drop]


def redact_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers as recorded: credentials replaced, repeated names joined with ``, ``."""
    out: dict[str, str] = {}
    for name, value in headers:
        shown = REDACTED if name.lower() in SECRET_HEADERS else value
        out[name] = f"{out[name]}, {shown}" if name in out else shown
    return out


def redact_url(url: str) -> str:
    """``url`` with the value of every credential query parameter replaced (the rest unchanged)."""
    base, sep, rest = url.partition("?")
    if not sep:
        return url
    query, hash_sep, fragment = rest.partition("#")
    parts = []
    for part in query.split("&"):
        name, eq, _ = part.partition("=")
        parts.append(f"{name}={REDACTED}" if _unquote_lower(name) in SECRET_QUERY else part)
    return f"{base}?{'&'.join(parts)}{hash_sep}{fragment}"


def scrub(text: str, url: str, headers: Iterable[tuple[str, str]]) -> str:
    """``text`` (an error message) with every credential of the call replaced: the secret
    headers' values (and their tokens, such as a bearer token) and the secret query values."""
    secrets = set()
    for name, value in headers:
        if name.lower() in SECRET_HEADERS:
            secrets.add(value)
            secrets.update(part for part in value.split() if len(part) >= 8)
    query = url.partition("?")[2].partition("#")[0]
    for part in query.split("&"):
        name, eq, value = part.partition("=")
        if eq and _unquote_lower(name) in SECRET_QUERY and value:
            secrets.add(value)
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text.replace(url, redact_url(url))


def _unquote_lower(name: str) -> str:
    from urllib.parse import unquote_plus

    return unquote_plus(name).lower()


def decoded(data: bytes, encoding: str) -> bytes | None:
    """A body as the application wrote it: ``Content-Encoding`` undone (identity, gzip, deflate;
    br with the brotli package installed); None when it cannot be undone."""
    codings = [c.strip().lower() for c in encoding.split(",") if c.strip() and c.strip().lower() != "identity"]
    try:
        for coding in reversed(codings):
            match coding:
                case "gzip" | "x-gzip":
                    data = zlib.decompress(data, 16 + zlib.MAX_WBITS)
                case "deflate":
                    try:
                        data = zlib.decompress(data)
                    except zlib.error:  # raw deflate, as some servers send it
                        data = zlib.decompress(data, -zlib.MAX_WBITS)
                case "br":
                    try:
                        import brotli  # type: ignore[import-not-found]
                    except ImportError:
                        return None
                    data = brotli.decompress(data)
                case _:
                    return None
    except Exception:  # a truncated or corrupt body (a disconnect mid-stream): nothing readable
        return None
    return data


_DECODE = msgspec.json.Decoder().decode


def parsed_body(data: bytes) -> object:
    """A JSON body as a value, else None."""
    if not data:
        return None
    try:
        return _DECODE(data)
    except (msgspec.DecodeError, UnicodeDecodeError, ValueError):
        return None


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def capture_record(
    *,
    method: str,
    url: str,
    request_headers: Iterable[tuple[str, str]],
    request_body: bytes,
    sent: float,
    status: int | None,
    response_headers: Iterable[tuple[str, str]],
    response_body: bytes,
    answered: float,
    note: dict[str, object] | None = None,
) -> dict[str, object]:
    """One capture line (a dict), credentials redacted; ``status`` None: no response at all."""
    request: dict[str, object] = {
        "timestamp": sent,
        "method": method,
        "url": redact_url(url),
        "headers": redact_headers(request_headers),
    }
    value = parsed_body(request_body)
    if value is not None:
        request["body"] = value
    elif request_body:
        request["body"] = request_body.decode("utf-8", errors="replace")
    record: dict[str, object] = {"request": request}
    if status is not None:
        headers = list(response_headers)
        response: dict[str, object] = {"timestamp": answered, "status_code": status, "headers": redact_headers(headers)}
        content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
        encoding = ", ".join(v for k, v in headers if k.lower() == "content-encoding")
        plain = decoded(response_body, encoding)
        if plain is None:
            response["body_raw"] = None
            response["body_note"] = f"{len(response_body)} bytes in a content encoding the proxy cannot read ({encoding})"
        elif "text/event-stream" in content_type.lower():
            response["body_raw"] = plain.decode("utf-8", errors="replace")
        elif "application/vnd.amazon.eventstream" in content_type.lower():
            # Binary frames (Bedrock's streams): kept byte for byte, so every frame's CRCs are
            # checked when it is read (as UTF-8 text the framing bytes would be lost).
            response["body_raw"] = base64.b64encode(plain).decode("ascii")
            response["body_encoding"] = "base64"
        else:
            body = parsed_body(plain)
            if body is not None:
                response["body"] = body
            else:
                response["body_raw"] = plain.decode("utf-8", errors="replace")
        record["response"] = response
    record["logged_at"] = iso(answered)
    if note:
        record["prefixbench_proxy"] = note
    return record


_ENCODE = msgspec.json.Encoder().encode


def capture_line(record: dict[str, object]) -> bytes:
    """The record as one JSONL line (no raw newline can appear inside JSON text)."""
    return _ENCODE(record) + b"\n"


#: Longest miss detail on a live line (cut at a word boundary, marked with an ellipsis).
DETAIL_CHARS = 140


def live_line(number: int, row: object, status: int | None) -> str | None:
    """The live line of one call: ``#n lane  read R / prompt P  hit H%`` and, for a miss, its
    cause, evidence, detail and dollars lost; for a call the audit skips, why (None for a call
    that is not a model call at all, such as a model listing)."""
    if isinstance(row, str):
        if row.startswith("not a model call"):
            return None
        shown = f"HTTP {status} passed through" if status is not None and not 200 <= status < 300 else "not audited"
        return f"#{number} {shown}: {row}"
    read = row.reported_cache_read or 0  # type: ignore[attr-defined]
    prompt = read + (row.reported_cache_write or 0) + (row.reported_uncached or 0)  # type: ignore[attr-defined]
    hit = f"{100 * read / prompt:.1f}%" if prompt else "-"
    text = f"#{number} {row.lane}  read {read:,} / prompt {prompt:,}  hit {hit}"  # type: ignore[attr-defined]
    if row.cause is None:  # type: ignore[attr-defined]
        return text
    detail = _cut(row.detail, DETAIL_CHARS)  # type: ignore[attr-defined]
    said = f"{row.cause} ({row.evidence}){': ' + detail if detail else ''}"  # type: ignore[attr-defined]
    if not row.lost_tokens:  # type: ignore[attr-defined]
        return f"{text}  {said}"  # a first write: nothing was there to read, nothing lost
    lost_usd = row.lost_usd  # type: ignore[attr-defined]
    lost = f"lost ${lost_usd:.4f}" if lost_usd is not None else f"lost {row.lost_tokens:,} tokens (model not priced)"  # type: ignore[attr-defined]
    return f"{text}  MISS {said}  {lost}"


def _cut(text: str, limit: int) -> str:
    """``text`` at most ``limit`` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head) + "…"
