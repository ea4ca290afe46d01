"""HTTP captures (workloads/logs/formats/http_capture.py): Anthropic, DeepSeek and OpenAI calls."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from prefixbench.workloads.audit.core import load_trace, run_audit
from tests.unit.audit.fixtures import OPENROUTER_URL, anthropic_body, capture_line, chat_usage, openrouter_turns, sse, write_jsonl


def test_anthropic_capture_streamed_and_json(tmp_path: Path) -> None:
    streamed = capture_line(
        anthropic_body(),
        {"body_raw": sse(
            {"type": "message_start", "message": {"usage": {"input_tokens": 4, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}}},
            {"type": "message_delta", "usage": {"output_tokens": 77}},
        )},
    )
    plain = capture_line(
        anthropic_body(messages=4),
        {"body": {"usage": {"input_tokens": 5, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 2000, "output_tokens": 9}}},
        sent=1748554710.0,
    )
    refused = capture_line(anthropic_body(), {"body": {"error": "overloaded"}}, status=529, sent=1748554711.0)
    listing = {"request": {"timestamp": 1748554712.0, "method": "GET", "url": "https://api.anthropic.com/v1/models"}, "response": {"status_code": 200, "body": {"data": []}}}
    path = write_jsonl(tmp_path / "cap.jsonl", [streamed, plain, refused, listing])
    requests, summaries = load_trace([path])
    assert [(r.usage.cache_write, r.usage.cache_read, r.usage.output) for r in requests] == [(2000, 0, 77), (100, 2000, 9)]
    assert [reason.split(":")[0] for _, reason in summaries[0].skipped] == ["HTTP 529", "not a model call (no request body with a model)"]
    assert all(r.body is not None for r in requests)


def test_deepseek_anthropic_endpoint_input_excludes_reads(tmp_path: Path) -> None:
    line = capture_line(
        anthropic_body(model="deepseek-v4-flash"),
        {"body_raw": sse(
            {"type": "message_start", "message": {"usage": {"input_tokens": 300, "cache_read_input_tokens": 1280, "output_tokens": 0}}},
            {"type": "message_delta", "usage": {"input_tokens": 300, "cache_read_input_tokens": 1280, "output_tokens": 40}},
        )},
        url="https://api.deepseek.com/anthropic/v1/messages",
    )
    path = write_jsonl(tmp_path / "ds.jsonl", [line])
    (r,), _ = load_trace([path])
    assert (r.provider, r.usage.cache_read, r.usage.uncached, r.usage.output, r.usage.prompt) == ("deepseek", 1280, 300, 40, 1580)


def test_openai_responses_cached_tokens_are_inside_input(tmp_path: Path) -> None:
    completed = {"type": "response.completed", "response": {"usage": {"input_tokens": 5000, "input_tokens_details": {"cached_tokens": 4096}, "output_tokens": 70}}}
    streamed = capture_line({"model": "gpt-5.1", "input": "hi", "reasoning": {"effort": "high"}}, {"body_raw": f"event: response.completed\ndata: {json.dumps(completed)}\n\n"}, url="https://api.openai.com/v1/responses")
    plain = capture_line({"model": "gpt-5.1", "input": "hi"}, {"body": {"usage": {"input_tokens": 6000, "input_tokens_details": {"cached_tokens": 4992}, "output_tokens": 10}}}, url="https://api.openai.com/v1/responses", sent=1748554720.0)
    path = write_jsonl(tmp_path / "oa.jsonl", [streamed, plain])
    requests, _ = load_trace([path])
    assert [(r.usage.cache_read, r.usage.uncached) for r in requests] == [(4096, 904), (4992, 1008)]
    assert requests[0].envelope == (("effort", "high"),)
    result = run_audit([path])
    assert result.totals.input == 904 + 1008  # no double count of cached tokens


def test_usage_comes_from_the_richest_record_not_a_proxys_summary(tmp_path: Path) -> None:
    # A proxy saved a summarized usage without the cache details beside the raw stream whose
    # response.completed event carries them: the stream's record is the provider's own.
    completed = {"type": "response.completed", "response": {"usage": {"input_tokens": 10000, "input_tokens_details": {"cached_tokens": 9856}, "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 10040}}}
    response = {"body": {"usage": {"input_tokens": 10000, "output_tokens": 40}}, "body_raw": f"event: response.completed\ndata: {json.dumps(completed)}\n\n"}
    line = capture_line({"model": "deepseek-v4-flash", "input": "hi"}, response, url="https://relay.example.net/v1/responses")
    # ...and the reverse: a summary richer than a stream whose last usage event was cut short.
    cut = {"type": "response.in_progress", "response": {"usage": {"input_tokens": 7000}}}
    richer = capture_line(
        {"model": "gpt-5.1", "input": "hi"},
        {"body": {"usage": {"input_tokens": 7000, "input_tokens_details": {"cached_tokens": 6912}, "output_tokens": 5}}, "body_raw": f"data: {json.dumps(cut)}\n\n"},
        url="https://api.openai.com/v1/responses", sent=1748554720.0,
    )
    path = write_jsonl(tmp_path / "relay.jsonl", [line, richer])
    requests, _ = load_trace([path])
    assert [(r.usage.cache_read, r.usage.uncached, r.usage.output) for r in requests] == [(9856, 144, 40), (6912, 88, 5)]


def test_provider_diagnostic_is_the_strongest_evidence(tmp_path: Path) -> None:
    first = capture_line(anthropic_body(), {"body": {"usage": {"input_tokens": 4, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}}})
    second = capture_line(
        anthropic_body(messages=4),
        {"body": {"usage": {"input_tokens": 4, "cache_creation_input_tokens": 2100, "cache_read_input_tokens": 0, "output_tokens": 1, "cache_miss_reason": {"type": "tools_changed"}}}},
        sent=1748554710.0,
    )
    path = write_jsonl(tmp_path / "diag.jsonl", [first, second])
    result = run_audit([path])
    row = [row for row in result.rows if row.lane == "main"][1]
    assert (row.cause, row.evidence) == ("tools-changed", "diagnostic")
    # Scored against the audit's own inference: the bodies differ in messages only here.
    assert row.inferred_cause is not None and row.inferred_cause != "tools-changed"
    assert any("diagnostics decided 1 miss(es)" in note and "for 0 (0%)" in note for note in result.notes)


def test_body_diff_names_the_changed_section(tmp_path: Path) -> None:
    usage = {"input_tokens": 4, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}
    first = capture_line(anthropic_body(), {"body": {"usage": usage}})
    changed = anthropic_body(messages=4, system="You are terse. " * 400)
    second = capture_line(changed, {"body": {"usage": {**usage, "cache_creation_input_tokens": 2100}}}, sent=1748554710.0)
    path = write_jsonl(tmp_path / "diff.jsonl", [first, second])
    row = [row for row in run_audit([path]).rows if row.lane == "main"][1]
    assert (row.cause, row.evidence) == ("system-changed", "body-diff")
    assert "'helpful." in row.detail and "'terse." in row.detail


def test_openai_56_cache_writes_are_their_own_part(tmp_path: Path) -> None:
    usage = {"input_tokens": 9000, "input_tokens_details": {"cached_tokens": 6000, "cache_write_tokens": 2500}, "output_tokens": 10}
    line = capture_line({"model": "gpt-5.6-sol", "input": "hi"}, {"body": {"usage": usage}}, url="https://api.openai.com/v1/responses")
    result = run_audit([write_jsonl(tmp_path / "oa.jsonl", [line])])
    row = result.rows[0]
    assert (row.reported_cache_read, row.reported_cache_write, row.reported_uncached) == (6000, 2500, 500)
    # 500 x $5 + 6000 x $0.50 + 2500 x $6.25 + 10 x $30 per 1M (gpt-5.6-sol).
    assert float(row.cost_usd) == pytest.approx((500 * 5 + 6000 * 0.5 + 2500 * 6.25 + 10 * 30) / 1e6)


def test_capture_bodies_share_repeated_messages(tmp_path: Path) -> None:
    usage = {"input_tokens": 4, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}
    lines = [capture_line(anthropic_body(messages=n), {"body": {"usage": usage}}, sent=1748554704.0 + n) for n in (2, 4, 6)]
    for line in lines:  # the marker moves to the newest message, as Claude Code sends it
        for message in line["request"]["body"]["messages"][:-1]:
            message["content"][-1].pop("cache_control", None)
    requests, _ = load_trace([write_jsonl(tmp_path / "cap.jsonl", lines)])
    first, second, third = (r.body.messages for r in requests)
    assert second[0] is first[0] and third[2] is second[2]  # held once, not once per call


def test_missing_cache_control_is_breakpoint_placement(tmp_path: Path) -> None:
    first_body = anthropic_body()
    second_body = anthropic_body(messages=4)
    for message in second_body["messages"]:  # the client forgot its markers on the second call
        for block in message["content"]:
            block.pop("cache_control", None)
    second_body["system"][0].pop("cache_control")
    usage = {"input_tokens": 4, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 0, "output_tokens": 1}
    lines = [
        capture_line(first_body, {"body": {"usage": usage}}),
        capture_line(second_body, {"body": {"usage": {**usage, "input_tokens": 2100, "cache_creation_input_tokens": 0}}}, sent=1748554710.0),
    ]
    row = [row for row in run_audit([write_jsonl(tmp_path / "c.jsonl", lines)]).rows if row.lane == "main"][1]
    assert (row.cause, row.evidence) == ("breakpoint-placement", "body-diff")
    assert "no cache_control" in row.detail


def test_responses_captures_split_lanes_by_prompt_cache_key(tmp_path: Path) -> None:
    def call(key: str, sent: float, cached: int) -> dict:
        usage = {"input_tokens": 5000, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": 5}
        body = {"model": "gpt-5.1", "instructions": f"Agent {key}. " + "Rules. " * 2500, "input": "hi", "prompt_cache_key": key}
        return capture_line(body, {"body": {"usage": usage}}, url="https://api.openai.com/v1/responses", sent=sent)

    lines = [call("a", 1748554704.0, 0), call("b", 1748554705.0, 0), call("a", 1748554706.0, 4992), call("b", 1748554707.0, 4992)]
    result = run_audit([write_jsonl(tmp_path / "oa.jsonl", lines)])
    assert [row.lane for row in result.rows] == ["main:a", "main:b", "main:a", "main:b"]
    # The bodies are replayed: each key's second call re-sends its first prompt whole.
    reads = [row.predicted_cache_read for row in result.rows]
    assert reads[:2] == [0, 0] and reads[2] == reads[3] > 4_000


def test_responses_bodies_are_replayed_and_diffed(tmp_path: Path) -> None:
    """A Responses capture: instructions, a function call and its output, then the instructions
    rewritten: the miss is told by body diff, as for chat completions and Messages."""
    tools = [{"type": "function", "name": "read_file", "description": "Read a file.", "parameters": {"type": "object"}}]
    base = {"model": "gpt-5.1", "tools": tools, "reasoning": {"effort": "high"}}
    turn = [
        {"role": "user", "content": [{"type": "input_text", "text": "Fix the bug. " * 300}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA-opaque"},
        {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": '{"path": "a.py"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "print('hi')\n" * 200},
    ]
    def call(instructions: str, sent: float, cached: int) -> dict:
        usage = {"input_tokens": 2100, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": 5}
        return capture_line({**base, "instructions": instructions, "input": turn}, {"body": {"usage": usage}},
                            url="https://api.openai.com/v1/responses", sent=sent)

    lines = [call("You are helpful. " * 100, 1748554704.0, 0), call("You are helpful. " * 100, 1748554764.0, 2048),
             call("You are terse. " * 100, 1748554824.0, 0)]
    rows = run_audit([write_jsonl(tmp_path / "rb.jsonl", lines)]).rows
    assert rows[1].cause is None and rows[1].predicted_cache_read == 2048
    assert (rows[2].cause, rows[2].evidence) == ("system-changed", "body-diff")
    assert "terse" in rows[2].detail
    # A body that leans on the server's state (previous_response_id) is not replayed: no body diff.
    stateful = capture_line({**base, "input": "go on", "previous_response_id": "resp_1"},
                            {"body": {"usage": {"input_tokens": 6000, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5}}},
                            url="https://api.openai.com/v1/responses", sent=1748554707.0)
    requests, _ = load_trace([write_jsonl(tmp_path / "st.jsonl", [stateful])])
    assert requests[0].body is None


def test_a_provider_that_reports_no_cache_fields_is_not_a_zero_hit(tmp_path: Path) -> None:
    # Five chat-completions calls whose provider's usage has no cache field at all, and one
    # that reports its cached tokens: the five count in the tokens, not in the hit ratio or loss.
    url = "https://llm.example.org/v1/chat/completions"
    lines = []
    for n in range(5):
        body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello " * (200 + n)}]}
        usage = {"prompt_tokens": 2000 + 100 * n, "completion_tokens": 10, "total_tokens": 2010 + 100 * n}
        lines.append(capture_line(body, {"body": {"usage": usage}}, url=url, sent=1748554704.0 + n))
    reported = {"prompt_tokens": 3000, "prompt_tokens_details": {"cached_tokens": 2048}, "completion_tokens": 20}
    lines.append(capture_line({"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}]}, {"body": {"usage": reported}}, url=url, sent=1748554710.0))
    path = write_jsonl(tmp_path / "plain.jsonl", lines)
    requests, _ = load_trace([path])
    assert [r.usage.cache_reported for r in requests] == [False] * 5 + [True]
    result = run_audit([path])
    totals = result.totals
    assert totals.input == sum(2000 + 100 * n for n in range(5)) + (3000 - 2048)  # every billed token counted
    assert (totals.cache_read, totals.hit_ratio) == (2048, 2048 / 3000)  # the ratio over the one that reported
    unreported = [row for row in result.rows if row.reported_cache_read is None]
    assert len(unreported) == 5 and all(row.lost_tokens is None and row.cause is None for row in unreported)
    assert all(row.detail.startswith("cache not reported") for row in unreported)
    assert any("5 request(s) whose provider reported no cache fields" in note for note in result.notes)
    # Priced as uncached is at most what they cost (a read the log does not show costs less): the
    # note said "as billed", which the log does not say (aider's streamed calls carry no usage).
    assert any("priced as uncached (at most what they cost" in note and "as billed" not in note for note in result.notes)


def test_server_reasons_are_the_top_evidence_and_scored_against_the_audits_own(tmp_path: Path) -> None:
    # An OpenAI Responses capture whose requests asked for prompt_cache_diagnostics
    # (prompt_cache_options.comparison_response_id): a streamed cache_miss with input_changed, a
    # JSON tools_changed, and an "unavailable" where the audit's own evidence names the cause.
    url = "https://api.openai.com/v1/responses"

    def call(n: int, usage: dict, diagnostics: dict | None, *, stream: bool, effort: str = "medium") -> dict:
        body = {"model": "gpt-5.6-sol", "input": f"turn {n}", "reasoning": {"effort": effort},
                "prompt_cache_options": {"comparison_response_id": f"resp_{n - 1}"}}
        response = {"id": f"resp_{n}", "usage": usage, **({"prompt_cache_diagnostics": diagnostics} if diagnostics else {})}
        if stream:
            event = {"type": "response.completed", "response": response}
            return capture_line(body, {"body_raw": f"event: response.completed\ndata: {json.dumps(event)}\n\n"}, url=url, sent=1748554700.0 + 10 * n)
        return capture_line(body, {"body": response}, url=url, sent=1748554700.0 + 10 * n)

    def usage(total: int, cached: int) -> dict:
        return {"input_tokens": total, "input_tokens_details": {"cached_tokens": cached}, "output_tokens": 10}

    lines = [
        call(0, usage(4000, 0), None, stream=True),
        call(1, usage(5000, 3968), {"type": "cache_hit"}, stream=True),
        call(2, usage(6000, 0), {"type": "cache_miss", "reason": "input_changed", "cache_missed_tokens": 6000, "comparison_reusable_tokens": 5000}, stream=True),
        call(3, usage(7000, 0), {"type": "cache_miss", "reason": "tools_changed", "cache_missed_tokens": 7000}, stream=False),
        call(4, usage(8000, 0), {"type": "unavailable"}, stream=False, effort="high"),
    ]
    path = write_jsonl(tmp_path / "diag.jsonl", lines)
    requests, _ = load_trace([path])
    assert [r.diagnostic for r in requests] == [None, None, "input_changed", "tools_changed", "unavailable"]
    result = run_audit([path])
    by_line = {row.line: row for row in result.rows}
    assert (by_line[3].cause, by_line[3].evidence) == ("messages-changed", "diagnostic")
    assert (by_line[4].cause, by_line[4].evidence) == ("tools-changed", "diagnostic")
    # "unavailable": the server names no cause; the audit's own evidence does (the effort changed).
    assert (by_line[5].cause, by_line[5].server_reason, by_line[5].inferred_cause) == ("effort-changed", "unavailable", "effort-changed")
    table = {(a.server_reason, a.audit_cause): (a.agree, a.verdict) for a in result.agreement}
    assert table[("unavailable", "effort-changed")] == (True, "names-more")
    assert set(table) >= {("unavailable", "effort-changed")} and len(result.agreement) == 3
    from prefixbench.reports.audit import audit_json, audit_table

    text = audit_table(result)
    assert "server's reasons vs the audit's own causes" in text and "audit names more" in text
    assert json.loads(audit_json(result))["agreement"][0]["server_reason"]


def _converse_line(model_in_url: str, sent: float, usage: dict) -> dict:
    body = {"system": [{"text": "You are terse."}, {"cachePoint": {"type": "default"}}],
            "messages": [{"role": "user", "content": [{"text": "hello"}]}], "inferenceConfig": {"maxTokens": 100}}
    return {"request": {"timestamp": sent, "method": "POST", "headers": {}, "body": body,
                        "url": f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{model_in_url}/converse"},
            "response": {"timestamp": sent + 1, "status_code": 200, "headers": {},
                         "body": {"output": {"message": {"role": "assistant", "content": [{"text": "hi"}]}},
                                  "stopReason": "end_turn", "usage": usage}}}


def test_bedrock_converse_reads_its_additive_usage_and_prices_at_the_dated_bedrock_row(tmp_path: Path) -> None:
    usage = {"inputTokens": 1000, "cacheReadInputTokens": 6000, "cacheWriteInputTokens": 2000, "outputTokens": 200,
             "totalTokens": 9200}
    # The model id in the path, its ':' percent-encoded as the AWS SDKs send it, behind the us.
    # inference profile; 2026-01-15 10:00 UTC.
    lines = [_converse_line("us.anthropic.claude-sonnet-4-5-20250929-v1%3A0", 1768471200.0, usage)]
    result = run_audit([write_jsonl(tmp_path / "bedrock.jsonl", lines)])
    row = result.rows[0]
    assert (row.provider, row.model) == ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    # Additive: inputTokens excludes the read and the write.
    assert (row.reported_cache_read, row.reported_cache_write, row.reported_uncached) == (6000, 2000, 1000)
    # The bedrock row effective 2025-09-29: 1,000 x $3 + 6,000 x $0.30 + 2,000 x $3.75 + 200 x $15 per 1M
    # = 0.003 + 0.0018 + 0.0075 + 0.003 = $0.0153.
    assert row.cost_usd == Decimal("0.0153")
    # Before the model's first row the audit prices at its earliest row rather than none.
    early = run_audit([write_jsonl(tmp_path / "early.jsonl", [_converse_line("anthropic.claude-sonnet-4-5-20250929-v1:0", 1735689600.0, usage)])])
    assert early.rows[0].cost_usd == Decimal("0.0153")


def _proxied(body: dict, response: dict | None, *, at: str, duration_ms: int = 2_000, error: str | None = None) -> dict:
    """A record as a local proxy of the llm-path kind writes it: the body as ``request``, the
    answer (or ``{stream, sse_lines}``) as ``response``, no URL, method or status."""
    return {"request": body, "response": response, "error": error, "duration_ms": duration_ms, "id": "r", "timestamp": at}


def test_a_proxy_record_whose_request_is_the_body_is_read_by_the_answers_model(tmp_path: Path) -> None:
    # Claude Code pointed at an Anthropic-compatible endpoint through a local proxy that logs the
    # body as "request" and every SSE line: main skipped every such call as "not a model call
    # (no request body with a model)" and had nothing to audit.
    body = anthropic_body("claude-haiku-4-5-20251001")
    start = {"type": "message_start", "message": {"id": "m1", "model": "doubao-seed-code", "usage": {
        "input_tokens": 2_400, "output_tokens": 1, "cache_read_input_tokens": 8_448}}}
    delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 150}}
    streamed = {"stream": True, "sse_lines": [line for line in sse(start, delta).splitlines() if line.strip()]}
    chat = {"model": "ark-code-latest", "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]}
    answered = {"id": "c1", "object": "chat.completion", "model": "kimi-k2.5", "choices": [],
                "usage": {"prompt_tokens": 3_000, "completion_tokens": 40, "total_tokens": 3_040,
                          "prompt_tokens_details": {"cached_tokens": 2_560}}}
    gemini = {"contents": [{"role": "user", "parts": [{"text": "plan it"}]}]}
    gemini_answer = {"candidates": [], "modelVersion": "gemini-3-pro-preview",
                     "usageMetadata": {"promptTokenCount": 5_000, "cachedContentTokenCount": 4_000, "candidatesTokenCount": 60}}
    path = write_jsonl(tmp_path / "trace.jsonl", [
        _proxied(body, streamed, at="2026-02-21T08:13:54.000000+00:00", duration_ms=3_500),
        _proxied({"model": "ark-code-latest", "messages": [{"role": "user", "content": "x"}]}, {"input_tokens": 7_420},
                 at="2026-02-21T08:13:56+00:00"),  # a token count: no usage
        _proxied(body, None, at="2026-02-21T08:13:57+00:00", error="ReadTimeout"),
        _proxied(chat, answered, at="2026-02-21T08:14:00+00:00"),
        _proxied(gemini, gemini_answer, at="2026-02-21T08:14:05+00:00"),
    ])
    requests, summaries = load_trace([path])
    assert [s.format for s in summaries] == ["http-capture"]
    assert [reason for _, reason in summaries[0].skipped] == ["no usage in the response", "the proxy recorded no answer (ReadTimeout)"]
    first, second, third = requests
    # The answer names the model served: the provider is the one it names, else unknown, and a
    # Messages answer of an unknown server reads as the Messages API writes usage (additive).
    assert (first.provider, first.model) == ("unknown", "doubao-seed-code")
    assert (first.usage.uncached, first.usage.cache_read, first.usage.output) == (2_400, 8_448, 150)
    assert first.ready_ms - first.sent_ms == 3_500
    assert (second.provider, second.model) == ("moonshot", "kimi-k2.5")
    assert (second.usage.uncached, second.usage.cache_read, second.usage.output) == (440, 2_560, 40)
    assert (third.provider, third.model) == ("gemini", "gemini-3-pro-preview")
    assert (third.usage.uncached, third.usage.cache_read, third.usage.output) == (1_000, 4_000, 60)
    t = run_audit([path]).totals
    assert (t.requests, t.input, t.cache_read, t.output) == (3, 3_840, 15_008, 250)


def _step(kind: str, read: int, written: int, uncached: int, output: int, model: str | None = None) -> dict:
    step = {"type": kind, "input_tokens": uncached, "cache_read_input_tokens": read, "cache_creation_input_tokens": written, "output_tokens": output}
    return step if model is None else {**step, "model": model}


def test_advisor_iterations_of_a_streamed_capture_are_calls_of_the_advisor_lane(tmp_path: Path) -> None:
    # Claude Code's /advisor (the advisor tool): the final message_delta's usage.iterations lists
    # the executor's samplings (message, their sum the top level) and the advisor's sub-inference
    # (advisor_message, outside the top level, at the advisor model's rates). The capture counts
    # the advisor call in an advisor lane, as the transcript reader does; main counted it nowhere.
    iterations = [_step("message", 9000, 200, 3, 20), _step("advisor_message", 0, 9500, 5, 600, "claude-opus-4-8"), _step("message", 9200, 0, 4, 20)]
    lines = [
        capture_line(anthropic_body(), {"body_raw": sse(
            {"type": "message_start", "message": {"usage": {"input_tokens": 3, "cache_read_input_tokens": 9000, "cache_creation_input_tokens": 200, "output_tokens": 1}}},
            {"type": "message_delta", "usage": {"input_tokens": 7, "cache_read_input_tokens": 18200, "cache_creation_input_tokens": 200, "output_tokens": 40,
                                                "iterations": iterations}},
        )}),
        capture_line(anthropic_body(messages=4), {"body": {"usage": {**_step("message", 18400, 300, 2, 30),
                                                                      "iterations": [_step("advisor_message", 9500, 400, 2, 500, "claude-opus-4-8")]}}}, sent=1748554720.0),
    ]
    path = write_jsonl(tmp_path / "advisor.jsonl", lines)
    requests, _ = load_trace([path])
    assert [(r.lane, r.model, r.usage.cache_read, r.usage.cache_write, r.usage.output) for r in requests] == [
        ("main", "claude-sonnet-4-20250514", 18200, 200, 40),
        ("advisor", "claude-opus-4-8", 0, 9500, 600),
        ("main", "claude-sonnet-4-20250514", 18400, 300, 30),
        ("advisor", "claude-opus-4-8", 9500, 400, 500),
    ]
    assert [r.seq for r in requests] == [0, 1, 2, 3]
    first, second = requests[1], requests[3]
    assert (first.lane_kind, first.body, first.prefix.parent) == ("side", None, None)
    assert second.prefix.parent == first.prefix.node  # each advisor call extends the one before
    assert requests[0].body is not None and requests[2].body is not None


def test_server_compaction_iterations_of_a_capture_are_compaction_calls(tmp_path: Path) -> None:
    # Server-side compaction: usage.iterations lists the compaction sampling before the message's;
    # the top level is the message's alone, its prompt the compacted context (a new chain, not
    # the body sent). A response paused after its compaction (top level zero) samples no message.
    compacted = {**_step("message", 0, 3000, 5, 80), "iterations": [_step("compaction", 150000, 0, 2000, 3000), _step("message", 0, 3000, 5, 80)]}
    paused = {**_step("message", 0, 0, 0, 0), "iterations": [_step("compaction", 160000, 0, 10, 2900)]}
    lines = [
        capture_line(anthropic_body(), {"body": {"usage": compacted}}),
        capture_line(anthropic_body(messages=4), {"body": {"usage": paused}}, sent=1748554720.0),
    ]
    path = write_jsonl(tmp_path / "compaction.jsonl", lines)
    requests, summaries = load_trace([path])
    assert [(r.compaction_call, r.usage.cache_read, r.usage.uncached, r.usage.output) for r in requests] == [
        (True, 150000, 2000, 3000), (False, 0, 5, 80), (True, 160000, 10, 2900)]
    assert requests[0].body is None and requests[1].body is None and requests[1].prefix.parent is None
    assert requests[2].prefix.parent == requests[1].prefix.node
    assert [reason for _, reason in summaries[0].skipped] == ["response paused after a server-side compaction: no message sampled"]


def test_a_compaction_iteration_of_a_capture_with_no_counts_is_listed_not_a_zero_token_call(tmp_path: Path) -> None:
    # As an empty advisor_message: 64175d0 made an empty compaction entry a 0-token compaction call.
    compacted = {**_step("message", 0, 3000, 5, 80), "iterations": [{"type": "compaction"}, _step("message", 0, 3000, 5, 80)]}
    path = write_jsonl(tmp_path / "compaction.jsonl", [capture_line(anthropic_body(), {"body": {"usage": compacted}})])
    requests, summaries = load_trace([path])
    assert [(r.compaction_call, r.usage.cache_write, r.seq) for r in requests] == [(False, 3000, 0)]
    assert [reason for _, reason in summaries[0].skipped] == ["compaction iteration 0 with no token counts: no call to count"]


def test_the_compaction_event_of_a_capture_counts_the_iterations_counted_not_the_empty_ones(tmp_path: Path) -> None:
    # One empty compaction entry (listed, skipped) and one with counts: one compaction call, and
    # the message's event says one (it said two: the skipped entry was counted).
    compacted = {**_step("message", 0, 3000, 5, 80),
                 "iterations": [{"type": "compaction"}, _step("compaction", 150000, 0, 2000, 3000), _step("message", 0, 3000, 5, 80)]}
    path = write_jsonl(tmp_path / "compaction.jsonl", [capture_line(anthropic_body(), {"body": {"usage": compacted}})])
    requests, _ = load_trace([path])
    assert [r.compaction_call for r in requests] == [True, False]
    assert requests[1].events[0] == ("compaction", "server-side compaction: 1 compaction iteration(s) in usage.iterations")


def test_a_paused_response_whose_compaction_entry_has_no_counts_is_listed_not_a_traceback(tmp_path: Path) -> None:
    # Paused after a compaction whose entry has no counts, as a capture's first call: nothing is
    # counted, and the advisor calls (none, or some) are the response's own, not the call before
    # it (main took self.out[-1]: an IndexError on the first call, another call's lane on a later one).
    paused = {**_step("message", 0, 0, 0, 0), "iterations": [{"type": "compaction"}]}
    path = write_jsonl(tmp_path / "paused.jsonl", [capture_line(anthropic_body(), {"body": {"usage": paused}})])
    requests, summaries = load_trace([path])
    assert requests == []
    assert [reason for _, reason in summaries[0].skipped] == [
        "compaction iteration 0 with no token counts: no call to count", "response paused after a server-side compaction: no message sampled"]
    advised = {**paused, "iterations": [{"type": "compaction"}, _step("advisor_message", 0, 9500, 5, 600, "claude-opus-4-8")]}
    lines = [capture_line(anthropic_body(), {"body": {"usage": _step("message", 0, 3000, 5, 80)}}),
             capture_line(anthropic_body(messages=4), {"body": {"usage": advised}}, sent=1748554720.0)]
    requests, _ = load_trace([write_jsonl(tmp_path / "advised.jsonl", lines)])
    assert [(r.lane, r.line, r.model, r.usage.cache_write) for r in requests] == [
        ("main", 1, "claude-sonnet-4-20250514", 3000), ("advisor", 2, "claude-opus-4-8", 9500)]


def test_a_fallback_message_iteration_is_the_top_level_served_by_its_model(tmp_path: Path) -> None:
    # Server-side fallback: the attempt that served the response is listed as fallback_message in
    # place of its message entry (Anthropic's usage schema), so its counts are the top level's; its
    # model served the call (and its cache was read), not the one the body asked for: main kept
    # the model asked for.
    usage = {**_step("message", 4000, 0, 6, 90), "iterations": [_step("fallback_message", 4000, 0, 6, 90, "claude-opus-4-8")]}
    path = write_jsonl(tmp_path / "fallback.jsonl", [capture_line(anthropic_body(model="claude-fable-5"), {"body": {"usage": usage}})])
    (r,), _ = load_trace([path])
    assert (r.usage.cache_read, r.usage.output, r.lane) == (4000, 90, "main")
    assert (r.model, r.body.envelope.model) == ("claude-opus-4-8", "claude-opus-4-8")


def test_each_upstream_openrouter_names_is_a_cache_of_its_own(tmp_path: Path) -> None:
    """OpenRouter's chat-completions response names the upstream that served it (its top-level
    ``provider``, in the JSON body or in every streamed chunk): a call DeepInfra served after one
    DeepSeek served reads nothing of DeepSeek's cache (before: predicted to read the first call's
    prompt, one cache for every upstream)."""
    url, usage = OPENROUTER_URL, chat_usage
    first, second = openrouter_turns()
    chunks = [{"id": "gen-2", "provider": "DeepInfra", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "ok"}}]},
              {"id": "gen-2", "provider": "DeepInfra", "object": "chat.completion.chunk", "choices": [], "usage": usage(3230, 0)}]
    lines = [capture_line({"model": "deepseek/deepseek-chat-v3.1", "messages": first},
                          {"body": {"id": "gen-1", "provider": "DeepSeek", "usage": usage(3210, 0)}}, url=url),
             capture_line({"model": "deepseek/deepseek-chat-v3.1", "messages": second, "stream": True},
                          {"body_raw": "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"}, url=url, sent=1748554764.0)]
    path = write_jsonl(tmp_path / "or.jsonl", lines)
    requests, _ = load_trace([path])
    assert [r.upstream for r in requests] == ["DeepSeek", "DeepInfra"]
    row = run_audit([path]).rows[1]
    assert (row.predicted_cache_read, row.reported_cache_read, row.cause) == (0, 0, "provider-best-effort")


def test_a_proxy_capture_opening_with_an_unanswered_call_is_read_and_lists_it(tmp_path: Path) -> None:
    # prefixbench proxy writes a call the upstream never answered with no response, its error in
    # prefixbench_proxy.upstream_error: a capture opening with one was an unknown log format.
    unanswered = {
        "request": {"timestamp": 1748554700.0, "method": "POST", "url": "https://api.anthropic.com/v1/messages", "headers": {},
                    "body": anthropic_body()},
        "logged_at": "2025-05-29T21:38:20.000Z",
        "prefixbench_proxy": {"upstream_error": "upstream unreachable: ClientConnectorDNSError: no such host", "upstream": "https://api.anthropic.com"},
    }
    answered = capture_line(anthropic_body(), {"body": {"usage": {"input_tokens": 4, "cache_creation_input_tokens": 2000,
                                                                    "cache_read_input_tokens": 0, "output_tokens": 9}}})
    requests, summaries = load_trace([write_jsonl(tmp_path / "cap.jsonl", [unanswered, answered])])
    assert [r.usage.cache_write for r in requests] == [2000]
    assert summaries[0].format == "http-capture"
    assert summaries[0].skipped == ((1, "not answered: upstream unreachable: ClientConnectorDNSError: no such host"),)
    assert summaries[0].notes == ()  # one call was answered: no "no call in it was answered"


def test_a_groq_stream_whose_usage_is_only_in_x_groq_is_a_call(tmp_path: Path) -> None:
    """Groq's chat-completions stream of 2025 put the usage in its last chunk's ``x_groq`` alone
    (no top-level ``usage``; pydantic-ai's recordings of 2025-09 keep three such calls). Before,
    the call was skipped as having no usage."""
    chunks = [{"id": "c1", "object": "chat.completion.chunk", "model": "llama-3.3-70b-versatile",
               "choices": [{"index": 0, "delta": {"content": "hi"}}], "x_groq": {"id": "req_1"}},
              {"id": "c1", "object": "chat.completion.chunk", "model": "llama-3.3-70b-versatile",
               "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
               "x_groq": {"id": "req_1", "usage": {"queue_time": 0.05, "prompt_tokens": 573, "completion_tokens": 88,
                                                    "total_tokens": 661, "total_time": 0.4}}}]
    body = {"model": "llama-3.3-70b-versatile", "messages": [{"role": "user", "content": "hello"}], "stream": True}
    raw = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    path = write_jsonl(tmp_path / "groq.jsonl", [capture_line(body, {"body_raw": raw}, url="https://api.groq.com/openai/v1/chat/completions")])
    requests, _ = load_trace([path])
    assert [(r.usage.uncached, r.usage.output, r.usage.cache_reported) for r in requests] == [(573, 88, False)]


def test_cohere_v2_chat_usage_is_read_from_its_processed_tokens(tmp_path: Path) -> None:
    """Cohere's v2 chat answers hold ``usage: {billed_units, tokens, cached_tokens?}``: before,
    each was skipped ("usage in a shape not read"). Now ``tokens`` (all Cohere processed, the
    template it adds included: what its cache sees) is the call's prompt and output, and a
    top-level ``cached_tokens`` its read; without one the cache is not reported. A usage with
    none of the counts either wire names is still skipped, not read as 0 tokens."""
    body = {"model": "command-a-03-2025", "messages": [{"role": "user", "content": "name three rivers"}]}
    url = "https://api.cohere.com/v2/chat"
    warm = capture_line(body, {"body": {"id": "a1", "usage": {"billed_units": {"input_tokens": 11, "output_tokens": 40},
                                                               "tokens": {"input_tokens": 530, "output_tokens": 44}}}}, url=url)
    cached = capture_line(body, {"body": {"id": "a2", "usage": {"billed_units": {"input_tokens": 11, "output_tokens": 37},
                                                                 "tokens": {"input_tokens": 530, "output_tokens": 41},
                                                                 "cached_tokens": 512.0}}}, url=url, sent=1748554706.0)
    end = {"type": "message-end", "id": "a3", "delta": {"finish_reason": "COMPLETE", "usage": {
        "billed_units": {"input_tokens": 11, "output_tokens": 9}, "tokens": {"input_tokens": 530, "output_tokens": 12}, "cached_tokens": 256}}}
    streamed = capture_line({**body, "stream": True}, {"body_raw": f"event: message-end\ndata: {json.dumps(end)}\n\n"}, url=url, sent=1748554708.0)
    odd = capture_line(body, {"body": {"id": "a4", "usage": {"billed_units": {"input_tokens": 11}}}}, url=url, sent=1748554710.0)
    path = write_jsonl(tmp_path / "cohere.jsonl", [warm, cached, streamed, odd])
    requests, summaries = load_trace([path])
    assert [(r.provider, r.provider_by_model, r.usage.cache_read, r.usage.uncached, r.usage.output, r.usage.cache_reported) for r in requests] == [
        ("unknown", False, 0, 530, 44, False), ("unknown", False, 512, 18, 41, True), ("unknown", False, 256, 274, 12, True)]
    assert [reason for _, reason in summaries[0].skipped] == ["usage in a shape not read (fields billed_units; no prompt or output count)"]
    result = run_audit([path])
    assert result.totals.requests == 3
    assert [r.detail.startswith("cache not reported") for r in result.rows] == [True, False, False]


def test_a_top_level_cached_tokens_of_a_chat_usage_is_its_read(tmp_path: Path) -> None:
    """Hugging Face's router answers DeepSeek-R1 with ``cached_tokens`` beside ``prompt_tokens``,
    not inside ``prompt_tokens_details``: before, read as "cache not reported"; now as the read
    (a 0 a reported miss). ``prompt_tokens_details.cached_tokens`` wins where both are given."""
    url = "https://router.huggingface.co/v1/chat/completions"
    body = {"model": "deepseek-ai/DeepSeek-R1", "messages": [{"role": "user", "content": "what is 7 * 6"}]}
    zero = capture_line(body, {"body": {"usage": {"prompt_tokens": 14, "completion_tokens": 300, "total_tokens": 314, "cached_tokens": 0}}}, url=url)
    some = capture_line(body, {"body": {"usage": {"prompt_tokens": 900, "completion_tokens": 20, "cached_tokens": 640}}}, url=url, sent=1748554706.0)
    both = capture_line(body, {"body": {"usage": {"prompt_tokens": 900, "completion_tokens": 20, "cached_tokens": 1,
                                                  "prompt_tokens_details": {"cached_tokens": 768}}}}, url=url, sent=1748554708.0)
    requests, _ = load_trace([write_jsonl(tmp_path / "hf.jsonl", [zero, some, both])])
    assert [(r.usage.cache_read, r.usage.uncached, r.usage.cache_reported) for r in requests] == [(0, 14, True), (640, 260, True), (768, 132, True)]


def _ndjson(*lines: dict) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_ollama_native_api_calls_are_a_self_hosted_hosts_with_no_cache_count(tmp_path: Path) -> None:
    """Ollama's own ``/api/chat`` and ``/api/generate`` answer with ``prompt_eval_count`` and
    ``eval_count`` (a stream's in its last, ``done: true`` NDJSON line): before, none was read
    (no usage found). Now each is a call of the unknown provider with Ollama as its upstream
    (unpriced), its cache not reported; a final line without ``prompt_eval_count`` (older
    Ollama, the whole prompt cached) or a stream cut before its last line is skipped and listed."""
    chat = {"model": "qwen3:8b", "messages": [{"role": "user", "content": "say hello in French"}], "stream": False}
    one = capture_line(chat, {"body": {"model": "qwen3:8b", "created_at": "2026-03-02T10:00:01Z", "done": True, "done_reason": "stop",
                                       "message": {"role": "assistant", "content": "Bonjour"}, "prompt_eval_count": 15, "eval_count": 4}},
                       url="http://localhost:11434/api/chat")
    stream = _ndjson({"model": "gemma3", "created_at": "2026-03-02T10:00:02Z", "response": "Le", "done": False},
                     {"model": "gemma3", "created_at": "2026-03-02T10:00:03Z", "response": "", "done": True,
                      "prompt_eval_count": 27, "eval_count": 61, "total_duration": 123})
    generated = capture_line({"model": "gemma3", "prompt": "write a haiku"}, {"body_raw": stream},
                             url="http://127.0.0.1:11434/api/generate", sent=1748554706.0)
    quirk = capture_line(chat, {"body": {"model": "qwen3:8b", "done": True, "eval_count": 4}}, url="http://localhost:11434/api/chat", sent=1748554708.0)
    cut = capture_line({"model": "gemma3", "prompt": "again"}, {"body_raw": _ndjson({"model": "gemma3", "response": "Le", "done": False})},
                       url="http://127.0.0.1:11434/api/generate", sent=1748554710.0)
    path = write_jsonl(tmp_path / "ollama.jsonl", [one, generated, quirk, cut])
    requests, summaries = load_trace([path])
    assert [(r.provider, r.upstream, r.model, r.usage.uncached, r.usage.output, r.usage.cache_reported) for r in requests] == [
        ("unknown", "ollama", "qwen3:8b", 15, 4, False), ("unknown", "ollama", "gemma3", 27, 61, False)]
    assert requests[0].body is not None and requests[1].body is None
    assert [reason.split(" (")[0] for _, reason in summaries[0].skipped] == [
        "Ollama left out prompt_eval_count", "Ollama's answer has no final"]
    result = run_audit([path])
    assert result.totals.requests == 2
    assert all(r.lost_tokens is None and r.detail.startswith("cache not reported") for r in result.rows)


def test_a_call_to_ollama_com_is_ollamas_cloud_not_a_self_hosted_engine(tmp_path: Path) -> None:
    """``https://ollama.com/api/chat`` with ``gpt-oss:120b`` (no cloud tag: the cloud API takes the
    bare name) was read as the user's own engine (upstream ``ollama``), and the audit said "served
    by a self-hosted engine: ollama ... no vendor bills". It is Ollama's cloud, billed through
    its plans: upstream ``ollama.com``, its note says so."""
    from prefixbench.reports.audit import audit_table

    chat = {"model": "gpt-oss:120b", "messages": [{"role": "user", "content": "say hello in French"}], "stream": False}
    answer = {"body": {"model": "gpt-oss:120b", "done": True, "message": {"role": "assistant", "content": "Bonjour"},
                       "prompt_eval_count": 15, "eval_count": 4}}
    path = write_jsonl(tmp_path / "cloud.jsonl", [capture_line(chat, answer, url="https://ollama.com/api/chat")])
    requests, _ = load_trace([path])
    assert [(r.provider, r.upstream) for r in requests] == [("unknown", "ollama.com")]
    table = audit_table(run_audit([path]))
    assert "self-hosted engine" not in table and "no vendor bills" not in table
    assert "a cloud model of Ollama's (called at ollama.com) runs in Ollama's cloud" in table
    local = write_jsonl(tmp_path / "local.jsonl", [capture_line(chat, answer, url="http://localhost:11434/api/chat")])
    assert [r.upstream for r in load_trace([local])[0]] == ["ollama"]


def test_an_azure_call_whose_body_names_no_model_is_read_by_its_deployment(tmp_path: Path) -> None:
    """Azure OpenAI's chat completions name the deployment in the URL and no model in the body
    (31 of crewAI's recorded calls): before, each was skipped as not a model call. Its model is
    the one the answer names (the deployment's name where the answer names none)."""
    url = "https://res.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-12-01-preview"
    path = write_jsonl(tmp_path / "azure.jsonl", [capture_line({"messages": [{"role": "user", "content": "hi"}]},
                                                               {"body": {"model": "gpt-4o-mini-2024-07-18", "usage": chat_usage(1300, 1024)}}, url=url)])
    requests, _ = load_trace([path])
    assert [(r.model, r.usage.cache_read, r.usage.uncached) for r in requests] == [("gpt-4o-mini-2024-07-18", 1024, 276)]


#: Three turns of one Ollama chat, each request's messages extending the one before.
_OLLAMA_TURNS = (
    [{"role": "user", "content": "say hello in French"}],
    [{"role": "user", "content": "say hello in French"}, {"role": "assistant", "content": "Bonjour"},
     {"role": "user", "content": "and in German"}],
    [{"role": "user", "content": "say hello in French"}, {"role": "assistant", "content": "Bonjour"},
     {"role": "user", "content": "and in German"}, {"role": "assistant", "content": "Hallo"},
     {"role": "user", "content": "and in Dutch"}],
)


def _ollama_call(messages: list, prompt: int, sent: float) -> dict:
    """A captured ``/api/chat`` call to a local Ollama of ``messages``, answered with a
    ``prompt_eval_count`` of ``prompt``."""
    answer = {"body": {"model": "qwen3:8b", "done": True, "message": {"role": "assistant", "content": "ok"},
                       "prompt_eval_count": prompt, "eval_count": 4}}
    return capture_line({"model": "qwen3:8b", "messages": messages, "stream": False}, answer,
                        url="http://localhost:11434/api/chat", sent=sent)


def test_an_ollama_count_below_the_previous_calls_is_a_part_of_the_prompt_not_read_as_it(tmp_path: Path) -> None:
    """Ollama 0.30.0 (llama-server's ``prompt_n``) reported only the prompt tokens it evaluated,
    the cached prefix left out (ollama/ollama#16414; 0.30.1 adds ``cache_n`` back, #16428). The
    second call below extends the first's messages but reports 9 prompt tokens against the
    first's 15: read as the prompt, it said the call sent 9 tokens. Its prompt is unknown: it is
    skipped and listed, as a call that leaves the count out is; a call that reports more (a
    whole count, as before 0.30 and from 0.30.1 on) and a new conversation are read."""
    first, second, third = _OLLAMA_TURNS

    partial = write_jsonl(tmp_path / "partial.jsonl", [_ollama_call(first, 15, 1748554700.0), _ollama_call(second, 9, 1748554702.0)])
    requests, summaries = load_trace([partial])
    assert [r.usage.uncached for r in requests] == [15]
    assert [reason.split(":")[0] for _, reason in summaries[0].skipped] == ["Ollama's prompt_eval_count (9) is below the previous call's (15), whose messages this call's extend"]
    assert "prompt unknown" in summaries[0].skipped[0][1]
    # A third partial count (13) is judged against the 15 the prompt is known to hold, not the
    # skipped call's 9: it is a part of the prompt too, and skipped.
    again = write_jsonl(tmp_path / "again.jsonl", [_ollama_call(first, 15, 1748554700.0), _ollama_call(second, 9, 1748554702.0),
                                                   _ollama_call(third, 13, 1748554704.0)])
    requests, summaries = load_trace([again])
    assert [r.usage.uncached for r in requests] == [15]
    assert [reason.split(" is below")[0] for _, reason in summaries[0].skipped] == [
        "Ollama's prompt_eval_count (9)", "Ollama's prompt_eval_count (13)"]
    assert "the previous call's (15)" in summaries[0].skipped[1][1]
    whole = write_jsonl(tmp_path / "whole.jsonl", [_ollama_call(first, 15, 1748554700.0), _ollama_call(second, 27, 1748554702.0),
                                                   _ollama_call(third, 40, 1748554704.0), _ollama_call(first, 15, 1748554706.0)])
    requests, summaries = load_trace([whole])
    assert [r.usage.uncached for r in requests] == [15, 27, 40, 15] and not summaries[0].skipped


def test_an_ollama_re_send_of_the_same_messages_with_a_smaller_count_is_a_part_too(tmp_path: Path) -> None:
    """A retry or regenerate sends the previous call's messages unchanged: under Ollama 0.30.0
    its count was about 1 (all of the prompt cached), and it was read as the whole prompt, since
    only a call with strictly more messages was judged. The same messages hold the whole previous
    prompt: a smaller count is a part of it, skipped. An extension reporting the same count, and
    a trimmed history reporting less, are read."""
    first, second, _ = _OLLAMA_TURNS

    again = write_jsonl(tmp_path / "again.jsonl", [_ollama_call(second, 27, 1748554700.0), _ollama_call(second, 1, 1748554702.0)])
    requests, summaries = load_trace([again])
    assert [r.usage.uncached for r in requests] == [27]
    assert [reason.split(":")[0] for _, reason in summaries[0].skipped] == [
        "Ollama's prompt_eval_count (1) is below the previous call's (27), whose messages this call's repeat"]
    equal = write_jsonl(tmp_path / "equal.jsonl", [_ollama_call(first, 15, 1748554700.0), _ollama_call(second, 15, 1748554702.0)])
    requests, summaries = load_trace([equal])
    assert [r.usage.uncached for r in requests] == [15, 15] and not summaries[0].skipped
    trimmed = write_jsonl(tmp_path / "trimmed.jsonl", [_ollama_call(second, 27, 1748554700.0), _ollama_call(first, 15, 1748554702.0)])
    requests, summaries = load_trace([trimmed])
    assert [r.usage.uncached for r in requests] == [27, 15] and not summaries[0].skipped
