"""AWS event-stream frames for the Bedrock tests: an encoder written from the encoding's
description (https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html), and the forms
a capture holds a stream in."""

from __future__ import annotations

import base64
import json
import struct
import zlib


def frame(event_type: str | None, payload: object, *, message_type: str = "event", exception: str | None = None) -> bytes:
    """One frame: string headers (as Bedrock sends them), a JSON payload, both CRCs."""
    headers = []
    if event_type is not None:
        headers.append((":event-type", event_type))
    if exception is not None:
        headers.append((":exception-type", exception))
    headers += [(":content-type", "application/json"), (":message-type", message_type)]
    head = b"".join(
        bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(value.encode())) + value.encode()
        for name, value in headers
    )
    body = payload if isinstance(payload, bytes) else json.dumps(payload, separators=(",", ":")).encode()
    total = 12 + len(head) + len(body) + 4
    prelude = struct.pack(">II", total, len(head))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + head + body
    return message + struct.pack(">I", zlib.crc32(message))


def chunk(event: dict, pad: str = "abcdefghij") -> bytes:
    """An InvokeModelWithResponseStream chunk: the model's own event, base64, padded as Bedrock pads."""
    data = base64.b64encode(json.dumps(event, separators=(",", ":")).encode()).decode()
    return frame("chunk", {"bytes": data, "p": pad})


def as_text(data: bytes) -> str:
    """The stream as claude-trace and prefixbench's proxy keep it: its bytes read as UTF-8, each
    byte that is not UTF-8 replaced by U+FFFD."""
    return data.decode("utf-8", errors="replace")


def as_base64(data: bytes) -> str:
    return base64.b64encode(data).decode()
