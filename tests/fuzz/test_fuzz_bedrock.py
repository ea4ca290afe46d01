"""Fuzz the Bedrock wire reader (workloads/logs/bedrock_wire.py) and the Bedrock calls of
``audit --input http-capture``: any bytes, mutated event streams in every form a capture keeps
them in, and edited captured calls end in a result, or a clean UserError / exit 2 with one line,
never a traceback."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import BEDROCK
from prefixbench.workloads.logs.bedrock_wire import FrameError, answer_usage, decode_frames, text_events
from tests.fuzz.harness import Tally, edited, fuzz_settings, json_values, mutated, to_json_line, weighted, write
from tests.unit.logs.bedrock_stream import as_base64, as_text, chunk, frame

CONVERSE = (frame("messageStart", {"role": "assistant", "p": "ab"})
            + frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "ok ✓"}, "p": "abcd"})
            + frame("metadata", {"usage": {"inputTokens": 7, "outputTokens": 9, "cacheReadInputTokens": 3000,
                                           "cacheWriteInputTokens": 200, "cacheDetails": [{"ttl": "1h", "inputTokens": 200}]},
                                 "metrics": {"latencyMs": 5}, "p": "a"}))
INVOKE = (chunk({"type": "message_start", "message": {"usage": {"input_tokens": 3, "cache_creation_input_tokens": 2000,
                                                                "cache_read_input_tokens": 0, "output_tokens": 1}}})
          + chunk({"type": "message_delta", "usage": {"output_tokens": 70}})
          + chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": {
              "inputTokenCount": 3, "outputTokenCount": 70, "cacheReadInputTokenCount": 0, "cacheWriteInputTokenCount": 2000}})
          + frame(None, {"message": "x"}, message_type="exception", exception="throttlingException"))
STREAMS = (CONVERSE, INVOKE)

streams = st.one_of(st.sampled_from(STREAMS), st.sampled_from(STREAMS).flatmap(mutated), st.binary(max_size=300))


@st.composite
def stream_response(draw) -> dict:
    """A response holding a (maybe damaged) stream in one of the capture forms."""
    data = draw(streams)
    form = draw(st.sampled_from(("text", "base64", "flagged", "body_base64", "events", "latin1", "headers")))
    match form:
        case "headers":
            return {"headers": draw(st.dictionaries(st.sampled_from((
                "x-amzn-bedrock-input-token-count", "X-Amzn-Bedrock-Output-Token-Count", "x-amzn-bedrock-cache-read-input-token-count")),
                st.one_of(st.text(max_size=6), st.integers(-5, 10**13), st.sampled_from(("²", "12", "007"))), max_size=3))}
        case "text":
            return {"body_raw": as_text(data)}
        case "base64":
            return {"body_raw": as_base64(data)}
        case "flagged":
            return {"body_raw": draw(st.one_of(st.just(as_base64(data)), st.text(max_size=30))), "body_encoding": "base64"}
        case "body_base64":
            return {"body_base64": as_base64(data)}
        case "latin1":
            return {"body_raw": data.decode("latin-1")}
        case _:
            return {"events": draw(st.lists(st.one_of(json_values, st.fixed_dictionaries(
                {draw(st.sampled_from(("metadata", "chunk", "throttlingException"))): st.dictionaries(
                    st.sampled_from(("usage", "bytes", "message", "metrics")), json_values, max_size=3)})), max_size=4))}


def test_the_decoder_raises_only_frame_errors(importer_examples):
    @fuzz_settings(importer_examples)
    @given(data=streams)
    def case(data: bytes) -> None:
        try:
            frames = decode_frames(data)
        except FrameError as exc:
            assert str(exc).startswith("frame ") and "\n" not in str(exc)
        else:
            assert sum(16 + len(f.payload) for f in frames) <= len(data)
        text_events(as_text(data))
        text_events(data.decode("latin-1"))

    case()


def test_answers_read_to_a_usage_or_one_clear_error(importer_examples):
    @fuzz_settings(importer_examples)
    @given(response=edited(stream_response(), max_edits=1))
    def case(response: object) -> None:
        if not isinstance(response, dict):
            return
        try:
            answer_usage(response, BEDROCK.read_usage, "f:1")
        except UserError as exc:
            assert str(exc).startswith("f:1: ") and "\n" not in str(exc)

    case()


MODELS = ("us.anthropic.claude-sonnet-4-5-20250929-v1%3A0", "us.amazon.nova-pro-v1%3A0", "amazon.nova-micro-v1:0", "meta.llama3", "")
OPERATIONS = ("converse", "converse-stream", "invoke", "invoke-with-response-stream")
CLAUDE_BODY = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 10,
               "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
               "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]}
NOVA_BODY = {"system": [{"text": "s"}, {"cachePoint": {"type": "default"}}], "messages": [{"role": "user", "content": [{"text": "hi"}]}]}


@st.composite
def captured_call(draw) -> dict:
    url = f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{draw(st.sampled_from(MODELS))}/{draw(st.sampled_from(OPERATIONS))}"
    response = {"timestamp": 1768471201.0, "status_code": draw(st.sampled_from((200, 200, 200, 429))), **draw(stream_response())}
    if draw(st.booleans()):
        response["headers"] = {"x-amzn-bedrock-input-token-count": draw(st.one_of(st.sampled_from(("5", "-1", "x", "9" * 20, "²")), st.text(max_size=4))),
                               "X-Amzn-Bedrock-Cache-Read-Input-Token-Count": "100"}
    if draw(st.booleans()):
        response["body"] = draw(st.one_of(json_values, st.just({"usage": {"inputTokens": 1, "cacheReadInputTokenCount": 4}})))
    body = draw(st.sampled_from((CLAUDE_BODY, NOVA_BODY)))
    return {"request": {"timestamp": 1768471200.0, "method": "POST", "url": url, "body": body}, "response": response}


SEED = b"\n".join(
    to_json_line({"request": {"timestamp": 1768471200.0 + i, "url": f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{m}/{op}", "body": b},
                  "response": {"timestamp": 1768471201.0 + i, "status_code": 200, "body_raw": as_text(s)}})
    for i, (m, op, b, s) in enumerate((
        (MODELS[1], "converse-stream", NOVA_BODY, CONVERSE),
        (MODELS[0], "invoke-with-response-stream", CLAUDE_BODY, INVOKE),
    ))
) + b"\n"


def test_captures_of_bedrock_calls_end_cleanly(importer_examples):
    tally = Tally("bedrock-capture", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-bedrock-"))
    path = folder / "capture.jsonl"

    @fuzz_settings(importer_examples)
    @given(data=weighted(
        (st.lists(edited(captured_call()).map(to_json_line), min_size=1, max_size=3).map(b"\n".join), 3),
        (mutated(SEED), 1),
    ))
    def case(data: bytes) -> None:
        tally.check(["audit", str(write(path, data)), "--input", "http-capture", "--quiet", "--format", "json"])

    case()
    tally.report()
