"""The Bedrock wire reader (workloads/logs/bedrock_wire.py): URLs, the event-stream decoder, the
forms a capture keeps a stream in, and which usage record wins."""

from __future__ import annotations

import base64
import json
import struct
import zlib

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import BEDROCK
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.bedrock_wire import (
    BedrockCall,
    FrameError,
    answer_usage,
    bedrock_call,
    decode_frames,
    frame_event,
    messages_body,
    response_events,
    text_events,
)
from tests.unit.logs.bedrock_stream import as_base64, as_text, chunk, frame


@pytest.mark.parametrize(
    ("url", "call"),
    [
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-pro-v1%3A0/converse-stream",
         BedrockCall("us.amazon.nova-pro-v1:0", "converse-stream")),
        ("https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-haiku-4-5-20251001-v1:0/invoke",
         BedrockCall("anthropic.claude-haiku-4-5-20251001-v1:0", "invoke")),
        # An inference profile's ARN, its '/' sent as %2F.
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream",
         BedrockCall("arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0", "invoke-with-response-stream")),
        ("http://127.0.0.1:4000/model/x/converse?trace=1", BedrockCall("x", "converse")),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/x/converse/extra", None),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model//invoke", None),
        ("https://api.anthropic.com/v1/messages", None),
        ("http://[::1/model/x/invoke", None),
    ],
)
def test_bedrock_call_names_the_operation_and_model(url: str, call: BedrockCall | None) -> None:
    assert bedrock_call(url) == call


def test_streamed_and_invoke() -> None:
    assert BedrockCall("m", "invoke-with-response-stream").streamed and BedrockCall("m", "converse-stream").streamed
    assert not BedrockCall("m", "converse").streamed and BedrockCall("m", "invoke").invoke
    assert messages_body({"anthropic_version": "bedrock-2023-05-31", "messages": []})
    assert not messages_body({"messages": [{"role": "user", "content": [{"text": "hi"}]}]})  # Nova's


def _raw_frame(headers: bytes, payload: bytes) -> bytes:
    total = 16 + len(headers) + len(payload)
    prelude = struct.pack(">II", total, len(headers))
    body = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def test_decoder_reads_every_header_value_type() -> None:
    headers = (b"\x01a\x00" + b"\x01b\x01" + b"\x01c\x02\x07" + b"\x01d\x03\x00\x08" + b"\x01e\x04\x00\x00\x00\x09"
               + b"\x01f\x05" + bytes(8) + b"\x01g\x06\x00\x02\xff\x00" + b"\x01h\x07\x00\x02ok"
               + b"\x01i\x08" + bytes(8) + b"\x01j\x09" + bytes(16))
    (decoded,) = decode_frames(_raw_frame(headers, b"{}"))
    assert decoded.headers["a"] is True and decoded.headers["b"] is False and decoded.headers["h"] == "ok"
    assert decoded.headers["g"] == b"\xff\x00" and decoded.payload == b"{}" and len(decoded.headers) == 10


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\x00\x00\x10\x00\x00\x00\x00", "frame 1 (byte 0): 8 bytes left, a frame's prelude takes 12"),
        (b"\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "prelude CRC does not match"),
        (_raw_frame(b"", b"{}")[:-1], "frame of 18 bytes but 17 left"),
        (_raw_frame(b"", b"{}")[:-1] + b"\x00", "message CRC does not match"),
        (_raw_frame(b"\x01a\x0b", b""), "header value type 11 is not one of the encoding's"),
        (_raw_frame(b"\x05ab", b""), "a header runs past the headers"),
        (_raw_frame(b"\x01h\x07\x00\x09ok", b""), "a header runs past the headers"),
        (_raw_frame(b"", b"{}") + _raw_frame(b"", b"[]")[:14], "frame 2 (byte 18): frame of 18 bytes but 14 left"),
    ],
)
def test_a_frame_that_does_not_check_says_which_and_why(data: bytes, message: str) -> None:
    with pytest.raises(FrameError, match=message.replace("(", r"\(").replace(")", r"\)")):
        decode_frames(data)


def test_a_frame_longer_than_the_encoding_allows_is_refused() -> None:
    prelude = struct.pack(">II", 17 * 1024 * 1024, 0)
    with pytest.raises(FrameError, match="is not a frame's"):
        decode_frames(prelude + struct.pack(">I", zlib.crc32(prelude)) + b"\x00" * 8)


def _ascii_stream(events: list[tuple[str, dict]]) -> bytes:
    """Frames whose every byte is ASCII (a padding found for each), so that reading them as
    UTF-8 loses nothing: the frames can then be checked from the text."""
    out = b""
    for kind, payload in events:
        for n in range(20_000):
            # A frame of 256 to 383 bytes: its length's bytes are ASCII too.
            data = frame(kind, {**payload, "p": "x" * (180 + n % 60) + str(n)})
            if max(data) < 0x80:
                out += data
                break
        else:  # pragma: no cover
            raise AssertionError("no ASCII padding found")
    return out


def test_text_that_kept_every_byte_is_checked_as_frames() -> None:
    usage = {"inputTokens": 5, "outputTokens": 6, "cacheReadInputTokens": 700, "cacheWriteInputTokens": 0}
    data = _ascii_stream([("messageStart", {"role": "assistant"}), ("metadata", {"usage": usage})])
    text = as_text(data)
    assert "\ufffd" not in text
    assert answer_usage({"body_raw": text}, BEDROCK.read_usage, "f:1").usage == Usage(700, 0, 0, 5, 6)
    damaged = text.replace('"inputTokens":5', '"inputTokens":9')  # same length, CRC now wrong
    with pytest.raises(UserError, match=r"^f:1: response event stream: frame 2 \(byte \d+\): message CRC does not match"):
        answer_usage({"body_raw": damaged}, BEDROCK.read_usage, "f:1")


def test_text_that_lost_bytes_is_read_by_its_headers_and_payloads() -> None:
    tricky = {"contentBlockIndex": 0, "delta": {"text": 'a "quoted" {brace} \\ and ✓ and \u2028'}}
    data = frame("messageStart", {"role": "assistant"}) + frame("contentBlockDelta", tricky) + frame("metadata", {"usage": {"inputTokens": 1}})
    events = text_events(as_text(data))
    assert [e.kind for e in events] == ["messageStart", "contentBlockDelta", "metadata"]
    assert events[1].payload == tricky
    # A payload cut short (the rest of the stream lost) is no event's payload, and no error.
    cut = as_text(data)[: as_text(data).rindex('{"usage"') + 12]
    assert [e.payload is None for e in text_events(cut)] == [False, False, True]


def test_exceptions_are_named_in_every_form() -> None:
    data = frame(None, {"message": "slow down"}, message_type="exception", exception="throttlingException")
    (event,) = decode_frames(data)
    assert frame_event(event).exception == "throttlingException"
    assert text_events(as_text(data))[0].exception == "throttlingException"
    sdk = response_events({"events": [{"modelStreamErrorException": {"message": "x", "originalStatusCode": 500}}]}, "w")
    assert sdk[0].exception == "modelStreamErrorException"
    assert answer_usage({"body_raw": as_text(data)}, BEDROCK.read_usage, "w").exception == "throttlingException"


def test_a_flagged_body_that_is_not_base64_is_one_clear_error() -> None:
    with pytest.raises(UserError, match=r"^w: response body: not base64, yet flagged"):
        response_events({"body_raw": "{not base64}", "body_encoding": "base64"}, "w")


def test_base64_looking_text_that_is_no_stream_is_read_as_text() -> None:
    assert response_events({"body_raw": "Thisisjustwordsnotastream"}, "w") == []


def test_chunk_bytes_kept_decoded_are_read_too() -> None:
    event = {"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 2, "outputTokenCount": 3,
             "cacheReadInputTokenCount": 40, "cacheWriteInputTokenCount": 0}}
    for payload in (json.dumps(event), event, base64.b64encode(json.dumps(event).encode()).decode()):
        answer = answer_usage({"events": [{"chunk": {"bytes": payload}}]}, BEDROCK.read_usage, "w")
        assert answer.usage == Usage(40, 0, 0, 2, 3)


def test_nova_invoke_stream_metadata_inside_its_chunks() -> None:
    meta = {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 4, "cacheReadInputTokenCount": 1200, "cacheWriteInputTokenCount": 0}}}
    data = chunk({"messageStart": {"role": "assistant"}}) + chunk(meta)
    assert answer_usage({"body_raw": as_base64(data)}, BEDROCK.read_usage, "w").usage == Usage(1200, 0, 0, 10, 4)


def test_no_record_means_no_usage() -> None:
    assert answer_usage({"body_raw": as_text(frame("messageStart", {"role": "assistant"}))}, BEDROCK.read_usage, "w").usage is None
    assert answer_usage({"body": {"output": {}}, "headers": {"x-amzn-bedrock-input-token-count": "n/a"}}, BEDROCK.read_usage, "w").usage is None


def test_a_first_frame_that_survived_whole_does_not_make_lost_bytes_an_error() -> None:
    """Text whose first frame kept every byte but a later one did not is read as lossy text."""
    usage = {"inputTokens": 5, "outputTokens": 6, "cacheReadInputTokens": 700, "cacheWriteInputTokens": 0}
    whole = _ascii_stream([("messageStart", {"role": "assistant"})])
    for n in range(500):
        later = frame("metadata", {"usage": usage, "p": str(n)})
        if "\ufffd" in as_text(later):
            break
    text = as_text(whole + later)
    assert answer_usage({"body_raw": text}, BEDROCK.read_usage, "w").usage == Usage(700, 0, 0, 5, 6)


def test_text_with_a_lone_surrogate_is_no_json_and_no_crash() -> None:
    """Found by the fuzzer: a captured body or event that is a lone UTF-16 surrogate (valid JSON
    text for the capture line, not Unicode) made the JSON reader raise."""
    assert answer_usage({"body": "\ud800"}, BEDROCK.read_usage, "w").usage is None
    assert answer_usage({"events": ["\ud800", '{"usage": "\ud800"}']}, BEDROCK.read_usage, "w").usage is None
    assert text_events("\x0b:event-type\x07\x00\x08metadata{\"a\": \"\ud800\"}")[0].payload is None


@pytest.mark.parametrize("value", ["²", "１２", "12a", "", " ", "9" * 16])
def test_a_count_header_that_is_not_ascii_digits_is_no_count(value: str) -> None:
    """``str.isdigit`` takes a superscript two, which ``int`` refuses: such a header is no count."""
    headers = {"x-amzn-bedrock-input-token-count": value, "x-amzn-bedrock-output-token-count": "3"}
    assert answer_usage({"headers": headers}, BEDROCK.read_usage, "w").usage is None
