"""AWS Bedrock calls in HTTP captures (workloads/logs/formats/http_capture.py and
workloads/logs/bedrock_wire.py): ConverseStream, InvokeModel and InvokeModelWithResponseStream,
with their event-stream answers in the forms captures hold them, and Amazon Nova's prices.

These go through the audit only (no import of the new module), so on the code before them
they fail on their assertions: those calls were skipped as "not a model call"."""

from __future__ import annotations

import base64
import contextlib
import io
import json
from decimal import Decimal
from pathlib import Path

import pytest

from prefixbench.reports.cli import run
from prefixbench.workloads.audit.core import load_trace, run_audit
from tests.unit.audit.fixtures import anthropic_body, write_jsonl
from tests.unit.logs.bedrock_stream import as_base64, as_text, chunk, frame

HOST = "https://bedrock-runtime.us-east-1.amazonaws.com"
SONNET = "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0"
NOVA_PRO = "us.amazon.nova-pro-v1%3A0"
#: 2026-01-15 10:00 UTC.
T0 = 1768471200.0


def claude_body(**kwargs) -> dict:
    """Claude Code's InvokeModel body on Bedrock: Anthropic's Messages body, the model in the URL."""
    body = anthropic_body(**kwargs)
    del body["model"]
    return {"anthropic_version": "bedrock-2023-05-31", **body}


def converse_body(question: str = "hello") -> dict:
    return {"system": [{"text": "You are terse. " * 300}, {"cachePoint": {"type": "default"}}],
            "messages": [{"role": "user", "content": [{"text": question}]}], "inferenceConfig": {"maxTokens": 100}}


def line(model: str, operation: str, body: dict, response: dict, sent: float, status: int = 200) -> dict:
    return {"request": {"timestamp": sent, "method": "POST", "url": f"{HOST}/model/{model}/{operation}", "headers": {}, "body": body},
            "response": {"timestamp": sent + 2, "status_code": status,
                         "headers": {"content-type": "application/vnd.amazon.eventstream"}, **response}}


def claude_stream(uncached: int, write: int, read: int, output: int) -> bytes:
    """Claude's answer through InvokeModelWithResponseStream: Anthropic's own events, each in a
    chunk, the last one with Bedrock's invocation metrics."""
    start = {"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": [], "usage": {
        "input_tokens": uncached, "cache_creation_input_tokens": write, "cache_read_input_tokens": read, "output_tokens": 1}}}
    metrics = {"inputTokenCount": uncached, "outputTokenCount": output, "invocationLatency": 2100, "firstByteLatency": 700,
               "cacheReadInputTokenCount": read, "cacheWriteInputTokenCount": write}
    return (chunk(start) + chunk({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done ✓"}})
            + chunk({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": output}})
            + chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": metrics}))


def converse_stream(uncached: int, write: int, read: int, output: int) -> bytes:
    """ConverseStream's answer: its usage only in the last event, ``metadata``."""
    usage = {"inputTokens": uncached, "outputTokens": output, "totalTokens": uncached + write + read + output,
             "cacheReadInputTokens": read, "cacheWriteInputTokens": write}
    return (frame("messageStart", {"role": "assistant", "p": "abcd"})
            + frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Sure."}, "p": "abcdefgh"})
            + frame("contentBlockStop", {"contentBlockIndex": 0, "p": "ab"})
            + frame("messageStop", {"stopReason": "end_turn", "p": "abcdefghijkl"})
            + frame("metadata", {"usage": usage, "metrics": {"latencyMs": 640}, "p": "abc"}))


def test_claude_code_on_bedrock_streams_are_read_priced_and_their_bodies_diffed(tmp_path: Path) -> None:
    """Claude Code on Bedrock, captured by claude-trace: three InvokeModelWithResponseStream
    calls whose event-stream answers were kept as text (``response.text()``: the framing bytes
    that are not UTF-8 became U+FFFD)."""
    first = claude_body()
    second = claude_body(messages=4)
    third = claude_body(messages=4, system="You are terse. " * 400)
    lines = [
        line(SONNET, "invoke-with-response-stream", first, {"body_raw": as_text(claude_stream(4, 2000, 0, 90))}, T0),
        line(SONNET, "invoke-with-response-stream", second, {"body_raw": as_text(claude_stream(6, 150, 2000, 40))}, T0 + 10),
        line(SONNET, "invoke-with-response-stream", third, {"body_raw": as_text(claude_stream(4, 2200, 0, 30))}, T0 + 20),
    ]
    assert "\ufffd" in lines[0]["response"]["body_raw"]  # the text really lost bytes
    result = run_audit([write_jsonl(tmp_path / "claude-trace.jsonl", lines)])
    rows = result.rows
    assert [(r.provider, r.model) for r in rows] == [("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")] * 3
    assert [(r.reported_uncached, r.reported_cache_write, r.reported_cache_read) for r in rows] == [
        (4, 2000, 0), (6, 150, 2000), (4, 2200, 0)]
    # At the Bedrock Sonnet 4.5 row (3 / 0.30 read / 3.75 write / 15 output per 1M):
    # 4x3 + 2,000x3.75 + 90x15 = 8,862; 6x3 + 2,000x0.30 + 150x3.75 + 40x15 = 1,780.5;
    # 4x3 + 2,200x3.75 + 30x15 = 8,712 (millionths of a dollar).
    assert [r.cost_usd for r in rows] == [Decimal("0.008862"), Decimal("0.0017805"), Decimal("0.008712")]
    # The bodies are Anthropic's, replayed: the third call's miss is told by the body diff.
    assert (rows[2].cause, rows[2].evidence) == ("system-changed", "body-diff")
    assert "'helpful." in rows[2].detail and "'terse." in rows[2].detail
    requests, _ = load_trace([tmp_path / "claude-trace.jsonl"])
    assert all(r.body is not None for r in requests)


def test_nova_converse_stream_is_priced_at_the_dated_nova_row(tmp_path: Path) -> None:
    """Nova Pro through ConverseStream, as prefixbench's proxy writes it: a write of 3,000
    tokens, then a read of them. Nova bills no write fee: the write bills as input."""
    lines = [
        line(NOVA_PRO, "converse-stream", converse_body(), {"body_raw": as_text(converse_stream(20, 3000, 0, 100))}, T0),
        line(NOVA_PRO, "converse-stream", converse_body("again"), {"body_raw": as_text(converse_stream(40, 0, 3000, 80))}, T0 + 30),
    ]
    result = run_audit([write_jsonl(tmp_path / "nova.jsonl", lines)])
    rows = result.rows
    assert [(r.provider, r.model) for r in rows] == [("bedrock", "us.amazon.nova-pro-v1:0")] * 2
    assert [(r.reported_uncached, r.reported_cache_write, r.reported_cache_read) for r in rows] == [(20, 3000, 0), (40, 0, 3000)]
    # The Nova Pro row (effective 2024-12-03: 0.80 input, 0.20 read, no write fee, 3.20 output):
    # (20 + 3,000) x 0.80 + 100 x 3.20 = 2,736; 40 x 0.80 + 3,000 x 0.20 + 80 x 3.20 = 888.
    assert [r.cost_usd for r in rows] == [Decimal("0.002736"), Decimal("0.000888")]
    # The Converse body is replayed: the cache point after the system block caches its rendered
    # prefix, '{"system":[{"type":"text","text":"' (34 characters), the 4,500 of the text and
    # '"}', 4,536 characters at 3.85 a token: 1,179 model tokens, read by the second call. The
    # provider counted the first prompt as 3,020 tokens (the model: 1,194); counted as it
    # counts, the read is 1,179 x 3,020 / 1,194 = 2,982 (it reported 3,000).
    assert rows[1].predicted_by == "body"
    assert rows[1].predicted_cache_read == 2982 and rows[1].cause is None


def test_nova_invoke_body_is_read_with_its_own_usage_names(tmp_path: Path) -> None:
    """Nova's InvokeModel answer says ``inputTokens`` beside ``cacheReadInputTokenCount``."""
    body = {"schemaVersion": "messages-v1", "system": [{"text": "Be brief."}],
            "messages": [{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}],
            "inferenceConfig": {"maxTokens": 50}}
    usage = {"inputTokens": 12, "outputTokens": 30, "totalTokens": 2542, "cacheReadInputTokenCount": 2500, "cacheWriteInputTokenCount": 0}
    answer = {"body": {"output": {"message": {"role": "assistant", "content": [{"text": "Hello."}]}}, "stopReason": "end_turn", "usage": usage}}
    lite = "amazon.nova-lite-v1%3A0"
    result = run_audit([write_jsonl(tmp_path / "nova-invoke.jsonl", [line(lite, "invoke", body, answer, T0)])])
    (row,) = result.rows
    assert (row.model, row.reported_uncached, row.reported_cache_read, row.reported_cache_write) == ("amazon.nova-lite-v1:0", 12, 2500, 0)
    # Nova Lite: 12 x 0.06 + 2,500 x 0.015 + 30 x 0.24 = 0.72 + 37.5 + 7.2 = 45.42 millionths.
    assert row.cost_usd == Decimal("0.00004542")
    (request,), _ = load_trace([tmp_path / "nova-invoke.jsonl"])
    assert request.body is None  # Nova's own body shape is not replayed


@pytest.mark.parametrize("form", ["text", "base64", "flagged", "body_base64", "sdk_events", "json_lines"])
def test_every_form_a_capture_keeps_a_stream_in_reads_the_same(tmp_path: Path, form: str) -> None:
    data = converse_stream(7, 1200, 3400, 25)
    payloads = [{"messageStart": {"role": "assistant"}}, {"metadata": {"usage": {
        "inputTokens": 7, "outputTokens": 25, "cacheReadInputTokens": 3400, "cacheWriteInputTokens": 1200}, "metrics": {"latencyMs": 1}}}]
    response = {
        "text": {"body_raw": as_text(data)},
        "base64": {"body_raw": as_base64(data)},
        "flagged": {"body_raw": as_base64(data), "body_encoding": "base64"},
        "body_base64": {"body_base64": as_base64(data)},
        "sdk_events": {"events": payloads},
        "json_lines": {"body_raw": "\n".join(json.dumps(next(iter(p.values()))) for p in payloads)},
    }[form]
    (request,), summaries = load_trace([write_jsonl(tmp_path / "c.jsonl", [line(SONNET, "converse-stream", converse_body(), response, T0)])])
    assert (request.usage.uncached, request.usage.cache_write, request.usage.cache_read, request.usage.output) == (7, 1200, 3400, 25)


def test_claude_invoke_json_body_and_its_headers(tmp_path: Path) -> None:
    """A non-streamed InvokeModel: Anthropic's usage in the JSON body (replayed body); an answer
    without a usage body is read from the X-Amzn-Bedrock-*-Token-Count headers."""
    usage = {"input_tokens": 9, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1800, "output_tokens": 12}
    plain = line(SONNET, "invoke", claude_body(), {"body": {"type": "message", "role": "assistant", "content": [], "usage": usage}}, T0)
    headers = {"X-Amzn-Bedrock-Input-Token-Count": "9", "X-Amzn-Bedrock-Output-Token-Count": "12",
               "X-Amzn-Bedrock-Cache-Read-Input-Token-Count": "1800", "X-Amzn-Bedrock-Cache-Write-Input-Token-Count": "0"}
    bare = line(SONNET, "invoke", claude_body(), {"body": {"content": []}}, T0 + 5)
    bare["response"]["headers"] = headers
    requests, _ = load_trace([write_jsonl(tmp_path / "invoke.jsonl", [plain, bare])])
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.output) for r in requests] == [(9, 1800, 12)] * 2
    assert all(r.body is not None for r in requests)


def test_the_final_record_wins_unless_it_lacks_the_cache_fields(tmp_path: Path) -> None:
    """The invocation metrics are Bedrock's last word; Anthropic's own message_start is partial
    (output 1) until message_delta. A final record without cache fields loses to one with them,
    and a 1 h write split only Anthropic's usage states is kept."""
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 3, "cache_creation_input_tokens": 900,
             "cache_read_input_tokens": 0, "output_tokens": 1, "cache_creation": {"ephemeral_1h_input_tokens": 900}}}}
    full = {"inputTokenCount": 3, "outputTokenCount": 55, "cacheReadInputTokenCount": 0, "cacheWriteInputTokenCount": 900}
    bare = {"inputTokenCount": 903, "outputTokenCount": 55}
    lines = [
        line(SONNET, "invoke-with-response-stream", claude_body(), {"body_raw": as_text(chunk(start) + chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": full}))}, T0),
        line(SONNET, "invoke-with-response-stream", claude_body(), {"body_raw": as_text(chunk(start) + chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": bare}))}, T0 + 5),
    ]
    requests, _ = load_trace([write_jsonl(tmp_path / "rich.jsonl", lines)])
    assert [(r.usage.uncached, r.usage.cache_write_5m, r.usage.cache_write_1h, r.usage.output) for r in requests] == [
        (3, 0, 900, 55), (3, 0, 900, 1)]


def test_converse_cache_details_split_the_write_by_ttl(tmp_path: Path) -> None:
    usage = {"inputTokens": 10, "outputTokens": 5, "cacheReadInputTokens": 0, "cacheWriteInputTokens": 3000,
             "cacheDetails": [{"ttl": "5m", "inputTokens": 1000}, {"ttl": "1h", "inputTokens": 2000}]}
    result = run_audit([write_jsonl(tmp_path / "ttl.jsonl", [line(SONNET, "converse", converse_body(), {"body": {"usage": usage}}, T0)])])
    (row,) = result.rows
    # 10 x 3 + 1,000 x 3.75 + 2,000 x 6 (the 1 h write) + 5 x 15 = 15,855 millionths.
    assert row.cost_usd == Decimal("0.015855")


def test_a_stream_that_ended_in_an_exception_is_skipped_with_its_name(tmp_path: Path) -> None:
    data = frame("messageStart", {"role": "assistant"}) + frame(None, {"message": "Too many tokens"}, message_type="exception", exception="throttlingException")
    ok = line(NOVA_PRO, "converse-stream", converse_body(), {"body_raw": as_text(converse_stream(5, 0, 0, 5))}, T0 + 1)
    _, summaries = load_trace([write_jsonl(tmp_path / "exc.jsonl", [line(NOVA_PRO, "converse-stream", converse_body(), {"body_raw": as_text(data)}, T0), ok])])
    assert summaries[0].skipped == ((1, "the stream ended in throttlingException, no usage"),)


def _cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = run(argv)
    return status, err.getvalue()


@pytest.mark.parametrize("damage", ["flip", "cut"])
def test_a_stream_whose_frames_do_not_check_is_one_clear_line(tmp_path: Path, damage: str) -> None:
    data = bytearray(converse_stream(7, 1200, 3400, 25))
    if damage == "flip":
        data[200] ^= 0x01  # inside a later frame: its message CRC no longer matches
    else:
        data = data[:-10]  # a stream cut short
    path = write_jsonl(tmp_path / "bad.jsonl", [line(SONNET, "converse-stream", converse_body(), {"body_raw": as_base64(bytes(data))}, T0)])
    status, err = _cli(["audit", str(path), "--quiet"])
    assert status == 2 and "Traceback" not in err
    (message,) = err.strip().splitlines()
    assert message.startswith(f"prefixbench: error: {path}:1: response event stream: frame ")
    assert ("message CRC does not match" if damage == "flip" else "a stream cut short") in message


def test_a_model_of_another_vendor_on_bedrock_is_served_by_bedrock(tmp_path: Path) -> None:
    """DeepSeek R1 through Bedrock's Converse: its id names DeepSeek, but Bedrock serves it and
    reports Converse's usage."""
    usage = {"inputTokens": 300, "outputTokens": 20, "totalTokens": 320}
    path = write_jsonl(tmp_path / "r1.jsonl", [line("us.deepseek.r1-v1%3A0", "converse", converse_body(), {"body": {"usage": usage}}, T0)])
    (request,), _ = load_trace([path])
    assert (request.provider, request.model, request.usage.uncached, request.usage.output) == ("bedrock", "us.deepseek.r1-v1:0", 300, 20)


def test_what_prefixbench_proxy_writes_for_a_bedrock_stream_is_read(tmp_path: Path) -> None:
    """The proxy keeps an AWS event-stream answer byte for byte, in base64 (reports/proxy_record.py),
    so its frames are checked (lengths, CRCs) when audit reads the line."""
    from prefixbench.reports.proxy_record import capture_line, capture_record

    record = capture_record(
        method="POST", url=f"{HOST}/model/{NOVA_PRO}/converse-stream", request_headers=[("content-type", "application/json")],
        request_body=json.dumps(converse_body()).encode(), sent=T0, status=200,
        response_headers=[("Content-Type", "application/vnd.amazon.eventstream")],
        response_body=converse_stream(20, 3000, 0, 100), answered=T0 + 2,
    )
    assert record["response"]["body_encoding"] == "base64"  # type: ignore[index]
    assert base64.b64decode(record["response"]["body_raw"]) == converse_stream(20, 3000, 0, 100)  # type: ignore[index]
    path = tmp_path / "proxy.jsonl"
    path.write_bytes(capture_line(record))
    (request,), _ = load_trace([path])
    assert (request.model, request.usage.uncached, request.usage.cache_write, request.usage.output) == ("us.amazon.nova-pro-v1:0", 20, 3000, 100)
