"""Coding agents' own OpenTelemetry events read as calls (workloads/logs/formats/otel_agents.py,
through otel.py): Claude Code's ``claude_code.api_request``, Codex's ``codex.sse_event``
(``response.completed``), Gemini CLI's ``gemini_cli.api_response`` and Qwen Code's
``qwen-code.api_response``. The fixtures are written from each agent's documented fields (its
telemetry source and docs), in the shapes teams collect them: the collector's file exporter lines,
one OTLP JSON export, the JavaScript SDK's serialized records. Before these were read, every
fixture here was refused ("no span or log record with gen_ai.usage token counts")."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import format_usd
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "otel_claude_code.jsonl"
CODEX = FIXTURES / "otel_codex.json"
GEMINI = FIXTURES / "otel_gemini_cli.jsonl"
QWEN = FIXTURES / "otel_qwen_code.jsonl"
T = 1780000000


def read(path: Path):
    return import_file(path, detect_format(path), ImportContext())


def otlp_records(path: Path) -> list[dict]:
    """Every log record of an OTLP export file, its attributes as a plain dict."""
    text = path.read_text()
    docs = [json.loads(text)] if path.suffix == ".json" else [json.loads(line) for line in text.splitlines()]
    out = []
    for doc in docs:
        for resource in doc["resourceLogs"]:
            for scope in resource["scopeLogs"]:
                for log in scope["logRecords"]:
                    out.append({a["key"]: next(iter(a["value"].values())) for a in log["attributes"]})
    return out


def n(value: object) -> int:
    return int(value)  # an OTLP intValue comes as a string; Codex writes its counts as text


@pytest.mark.parametrize("path", [CLAUDE, CODEX, GEMINI, QWEN])
def test_each_agents_export_is_detected_as_otel(path: Path) -> None:
    assert detect_format(path) is FORMATS["otel"]


def test_claude_code_api_requests_are_anthropic_usage_as_it_is() -> None:
    """input_tokens excludes reads and writes (Anthropic's usage): each field is summed as given."""
    calls = [a for a in otlp_records(CLAUDE) if a["event.name"] == "api_request"]
    totals = run_audit([CLAUDE]).totals
    assert totals.requests == len(calls) == 6
    assert totals.input == sum(n(c["input_tokens"]) for c in calls) == 12 + 230 + 7 + 3 + 5 + 9
    assert totals.output == sum(n(c["output_tokens"]) for c in calls) == 410 + 38 + 260 + 520 + 130 + 300
    assert totals.cache_read == sum(n(c["cache_read_tokens"]) for c in calls) == 18230 + 24012
    assert totals.cache_write == sum(n(c["cache_creation_tokens"]) for c in calls) == 18230 + 1544 + 24012 + 880 + 15000


def test_claude_code_lanes_are_sessions_and_models_sent_at_the_record_time_less_its_duration() -> None:
    requests, summary = read(CLAUDE)
    by_lane = {}
    for r in requests:
        by_lane.setdefault(r.lane, []).append(r)
    s1 = "5b1c0e2a-0001-4d6e-9f00-aa0000000001"
    assert [len(by_lane[lane]) for lane in (f"{s1}/claude-sonnet-4-20250514", f"{s1}/claude-3-5-haiku-20241022")] == [2, 1]
    first, second = by_lane[f"{s1}/claude-sonnet-4-20250514"]
    assert second.prefix.parent == first.prefix.node
    assert (first.sent_ms, first.done_ms) == ((T + 10) * 1000 - 5210, (T + 10) * 1000)
    assert {r.provider for r in requests} == {"anthropic", "bedrock"}  # Bedrock: the model is its own id
    assert [r.request_id for r in requests if r.request_id] == ["req_011CX1", "req_011CX2"]
    assert any("input_tokens excludes cache reads and writes" in note for note in summary.notes)
    assert any("1 Claude Code failed call(s)" in note for note in summary.notes)


def test_codex_completed_responses_include_their_cached_and_written_parts() -> None:
    """Only ``response.completed`` sse events are calls; input_token_count includes the cached part
    and (later releases' cache_write_token_count) the written one, as the Responses API's usage:
    uncached = input - cached - written. Newer releases write the counts as text."""
    calls = [a for a in otlp_records(CODEX) if a.get("event.kind") == "response.completed"]
    totals = run_audit([CODEX]).totals
    assert totals.requests == len(calls) == 6
    assert totals.cache_read == sum(n(c["cached_token_count"]) for c in calls) == 3072 + 11264 + 0 + 8064 + 0 + 19456
    assert totals.cache_write == sum(n(c.get("cache_write_token_count", 0)) for c in calls) == 19456 + 768
    assert totals.input == sum(n(c["input_token_count"]) - n(c["cached_token_count"]) - n(c.get("cache_write_token_count", 0)) for c in calls) == (
        11290 - 3072 + 11950 - 11264 + 8200 + 8650 - 8064 + 20000 - 19456 + 20400 - 19456 - 768)
    assert totals.output == sum(n(c["output_token_count"]) for c in calls) == 402 + 91 + 120 + 77 + 300 + 120  # reasoning inside


def test_codex_lanes_are_conversations_and_the_provider_the_conversations_own() -> None:
    requests, summary = read(CODEX)
    assert [r.lane.split("/")[1] for r in requests] == ["gpt-5.5-codex", "gpt-5.5-codex", "gpt-5-codex", "gpt-5-codex", "gpt-5.6", "gpt-5.6"]
    assert {r.provider for r in requests} == {"openai"}
    assert any("input_token_count includes cached_token_count and cache_write_token_count" in note for note in summary.notes)


def test_a_codex_conversation_on_a_provider_audit_does_not_model_is_unknown(tmp_path: Path) -> None:
    """``codex.conversation_starts`` names the conversation's provider (``provider_name``): a local
    one (Ollama) is no provider whose cache the audit models, though its model's name is gpt-oss."""
    doc = json.loads(CODEX.read_text())
    text = json.dumps(doc).replace('"OpenAI"', '"Ollama"', 1).replace("gpt-5.5-codex", "gpt-oss:20b")
    path = tmp_path / "codex-ollama.json"
    path.write_text(text)
    requests, _ = read(path)
    assert [r.provider for r in requests] == ["unknown", "unknown", "openai", "openai", "openai", "openai"]
    # Its host is those calls' upstream: no vendor bills them (unpriced, whatever the model's name).
    assert [r.upstream for r in requests] == ["Ollama", "Ollama", "", "", "", ""]


def test_gemini_cli_prompt_includes_its_cached_part_thoughts_and_tool_prompt_counted_apart() -> None:
    """input_token_count (promptTokenCount) includes cached_content_token_count; thoughts are
    billed as output and the tool-use prompt as uncached input (as the gemini-cli format reads them)."""
    calls = [json.loads(line)["attributes"] for line in GEMINI.read_text().splitlines()]
    calls = [a for a in calls if a["event.name"] == "gemini_cli.api_response"]
    totals = run_audit([GEMINI]).totals
    assert totals.requests == len(calls) == 3
    assert totals.cache_read == sum(c["cached_content_token_count"] for c in calls) == 8191
    assert totals.input == sum(c["input_token_count"] - c["cached_content_token_count"] + c["tool_token_count"] for c in calls) == (
        9120 + 9870 - 8191 + 40 + 1400)
    assert totals.output == sum(c["output_token_count"] + c["thoughts_token_count"] for c in calls) == 220 + 480 + 150 + 300 + 30
    requests, summary = read(GEMINI)
    assert {r.provider for r in requests} == {"gemini"}
    assert any("1 Gemini CLI failed call(s)" in note for note in summary.notes)


def test_qwen_code_api_responses() -> None:
    calls = [a for a in otlp_records(QWEN)]
    totals = run_audit([QWEN]).totals
    assert totals.requests == len(calls) == 2
    assert totals.cache_read == 13952
    assert totals.input == 14100 + 14700 - 13952
    assert totals.output == 300 + 90
    assert {r.provider for r in read(QWEN)[0]} == {"qwen"}


@pytest.mark.parametrize("name", [{"stringValue": {"a": 1}}, {"stringValue": ["qwen-code.api_response"]}])
def test_an_event_name_that_is_no_string_names_no_event(tmp_path: Path, name: dict) -> None:
    # Found by fuzzing: an event.name whose stringValue was an object or a list went into a set
    # of names: TypeError (unhashable type), a traceback. It names no event: the record is no call.
    export = json.loads(QWEN.read_text())
    records = export["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    odd = json.loads(json.dumps(records[0]))
    for attribute in odd["attributes"]:
        if attribute["key"] == "event.name":
            attribute["value"] = name
    records.append(odd)
    path = tmp_path / "qwen.jsonl"
    path.write_text(json.dumps(export) + "\n")
    assert [r.usage for r in read(path)[0]] == [r.usage for r in read(QWEN)[0]]


GEMINI_0_12 = FIXTURES / "otel_gemini_cli_0_12.jsonl"


def test_a_call_gemini_cli_also_writes_as_the_conventions_record_is_counted_once_from_its_own_event() -> None:
    """Gemini CLI from 0.12 (google-gemini/gemini-cli#11975, loggers.ts ``logApiResponse``) writes
    each call twice: its own ``gemini_cli.api_response`` and the GenAI conventions' inference record
    (``toSemanticLogRecord``), which carries only ``gen_ai.usage.input_tokens`` (promptTokenCount,
    cached part inside) and ``output_tokens`` (candidatesTokenCount, no thoughts). Its own event is
    counted: the conventions' record alone lost every cached and thinking token (before: uncached
    21,520, read 0, cache not reported, output 530)."""
    requests, summary = read(GEMINI_0_12)
    # call 1: 9,120 in, 0 cached, 220 + 480 thoughts out; call 2: 12,400 in, 8,000 cached,
    # 40 tool tokens, 310 + 150 thoughts out.
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.output) for r in requests] == [(9120, 0, 700), (12400 - 8000 + 40, 8000, 460)]
    assert sum(r.usage.uncached for r in requests) == 13560 and sum(r.usage.cache_read for r in requests) == 8000
    assert sum(r.usage.output for r in requests) == 1160 and all(r.usage.cache_reported for r in requests)
    assert [r.model for r in requests] == ["gemini-2.5-pro"] * 2 and summary.agent == "gemini-cli"
    assert [line for line, _ in summary.skipped] == [2, 4]
    assert all(why.startswith("gen_ai.client.inference.operation.details record: the same call") for _, why in summary.skipped)


def test_events_of_other_kinds_and_unprefixed_names_of_other_services_are_not_calls(tmp_path: Path) -> None:
    """``api_request`` unprefixed is Claude Code's only where its service is claude-code."""
    record = {"timeUnixNano": str(T * 10**9), "attributes": [{"key": "event.name", "value": {"stringValue": "api_request"}},
                                                           {"key": "input_tokens", "value": {"intValue": "5"}}]}
    def export(service: str) -> dict:
        return {"resourceLogs": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
                                  "scopeLogs": [{"logRecords": [record]}]}]}
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps(export("some-app")) + "\n")
    with pytest.raises(UserError, match="no span or log record with gen_ai.usage"):
        read(path)
    path.write_text(json.dumps(export("claude-code")) + "\n")
    assert [r.usage.uncached for r in read(path)[0]] == [5]


@pytest.mark.parametrize("attributes, message", [
    ({"event.name": "codex.sse_event", "event.kind": "response.completed", "input_token_count": "10", "cached_token_count": 20,
      "cache_write_token_count": 20}, "exceed input_token_count"),
    ({"event.name": "gemini_cli.api_response", "input_token_count": "ten"}, "input_token_count"),
    ({"event.name": "gemini_cli.api_response", "input_token_count": 1, "event.timestamp": "yesterday"}, "yesterday"),
])
def test_bad_agent_events_are_one_line_errors(tmp_path: Path, attributes: dict, message: str) -> None:
    record = {"hrTime": [0, 0], "attributes": attributes, "instrumentationScope": {"name": "gemini-cli"}, "resource": {}}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(UserError, match=message) as error:
        read(path)
    assert "\n" not in str(error.value) and str(error.value).startswith(str(path))


def test_gemini_cli_telemetry_outfile_pretty_printed_with_its_spans_and_metrics(tmp_path: Path) -> None:
    """``gemini --telemetry-outfile`` writes every record pretty-printed (two-space indent), its
    spans and metrics beside its log records: the spans and metrics are no call (counted in the
    notes); main refused the file at its first span."""
    records = [json.loads(line) for line in GEMINI.read_text().splitlines()]
    span = {"resource": records[0]["resource"], "instrumentationScope": {"name": "gemini-cli"}, "_spanContext": {"traceId": "ab", "spanId": "cd", "traceFlags": 1},
            "kind": 0, "name": "llm_call", "attributes": {"model": "gemini-2.5-pro"}, "links": [], "events": [], "startTime": [T + 490, 0],
            "endTime": [T + 500, 0], "status": {"code": 0}, "_ended": True}
    metrics = {"resource": records[0]["resource"], "scopeMetrics": [{"scope": {"name": "gemini-cli"}, "metrics": []}]}
    path = tmp_path / "telemetry.log"
    path.write_text("".join(json.dumps(r, indent=2) + "\n" for r in [span, records[0], metrics, *records[1:]]))
    requests, summary = read(path)
    assert [(r.usage.uncached, r.usage.output) for r in requests] == [(9120, 700), (1719, 450), (1400, 30)]
    assert any("1 span(s) as the JavaScript SDK holds them" in note for note in summary.notes)
    assert any("1 record(s) hold no call" in note for note in summary.notes)


def test_a_claude_code_event_sent_twice_is_one_call(tmp_path: Path) -> None:
    """A collector that retries an export repeats its records: Claude Code's request_id says so."""
    lines = CLAUDE.read_text().splitlines()
    path = tmp_path / "twice.jsonl"
    path.write_text("\n".join([*lines, lines[1]]) + "\n")
    requests, summary = read(path)
    assert len(requests) == 6
    assert [why for _, why in summary.skipped] == ["Claude Code event: repeats request req_011CX1's (an export sent twice)",
                                                   "Claude Code event: repeats request req_011CX2's (an export sent twice)"]


CLAUDE_COST = FIXTURES / "otel_claude_code_cost.jsonl"


def test_claude_codes_cost_usd_is_summed_and_checked_against_the_price_table() -> None:
    """Claude Code prices each call itself (``cost_usd``, its own table): before, the audit read
    none of it; now a note sums it and sets the calls the price table prices beside what they cost
    there. Sonnet 4.5's two calls are its list price to the digit (12 x 3 + 18,000 x 3.75 + 400 x 15
    = $0.073536; 8 x 3 + 18,000 x 0.30 + 900 x 3.75 + 250 x 15 = $0.012549); the Opus 4.6 call logs
    6x its list price (fast mode, which the event does not name): it is named, not hidden; the
    Kimi Code plan's call has no row, its logged dollars are said to be in no figure here. A call
    that does not fit is named by its line and its place in the line's record (an OTLP export
    holds every call in one line: 'line 1' named none of them)."""
    requests, summary = read(CLAUDE_COST)
    assert len(requests) == 4
    listed_opus = (5 * 5 + 20_000 * Decimal("0.50") + 500 * Decimal("6.25") + 300 * 25) / 1_000_000  # $0.02065
    listed = Decimal("0.073536") + Decimal("0.012549") + listed_opus
    assert (f"Claude Code's own cost_usd fields sum to $0.2223 (a check on the dollars here): on the 3 call(s) the price "
            f"table prices, $0.2100 logged against {format_usd(listed)} at the table's rows in force, 2 of them within 1%; "
            f"1 not (line 1 resourceLogs[0].scopeLogs[0].logRecords[2]: $0.1239 logged, {format_usd(listed_opus)} listed): "
            "the agent priced them otherwise (another rate, "
            "fast mode, a gateway's price) or counted them otherwise; 1 call(s) of a model the table does not price, "
            "$0.0123 logged (in no dollar figure here)") in summary.notes
    # The audit's own dollars are the same calls at the same rows.
    assert run_audit([CLAUDE_COST]).totals.cost_usd == listed


def test_a_cost_usd_that_is_no_number_is_not_read(tmp_path: Path) -> None:
    doc = json.loads(CLAUDE_COST.read_text())
    for log in doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]:
        for a in log["attributes"]:
            if a["key"] == "cost_usd":
                a["value"] = {"stringValue": "n/a"}
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    requests, summary = read(path)
    assert len(requests) == 4
    assert not any("cost_usd" in n for n in summary.notes)


def test_a_cost_usd_too_large_for_a_float_is_not_read(tmp_path: Path) -> None:
    """A plain attribute value (not OTLP-typed) is taken as it is: an integer past a double's range
    was handed to ``math.isfinite``, whose OverflowError was a traceback; it is no cost, as a
    log's own cost past ``MAX_LOGGED_COST`` is everywhere (:func:`.common.logged_dollars`)."""
    doc = json.loads(CLAUDE_COST.read_text())
    for log in doc["resourceLogs"][0]["scopeLogs"][0]["logRecords"]:
        for a in log["attributes"]:
            if a["key"] == "cost_usd":
                a["value"] = 10**400
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    requests, summary = read(path)
    assert len(requests) == 4
    assert not any("cost_usd" in n for n in summary.notes)


def test_the_own_cost_check_prices_each_call_at_the_audits_row(tmp_path: Path) -> None:
    """The check of an agent's own costs asks the audit's price path for each call's row
    (:class:`~prefixbench.simulator.price_lookup.Prices`), not a lookup of its own: a call sent
    before its model's first row is priced at that row, as the audit's dollars price it. Before,
    the check looked its rows up itself and called such calls a model the table does not price,
    while the audit counted them in its dollars."""
    path = tmp_path / "early.jsonl"
    path.write_text(CLAUDE_COST.read_text().replace("claude-sonnet-4-5-20250929", "claude-sonnet-5"))  # first row 2026-06-30
    requests, summary = read(path)
    (note,) = [n for n in summary.notes if n.startswith("Claude Code's own cost_usd")]
    assert "on the 3 call(s) the price table prices" in note, note
    result = run_audit([path])
    assert [r.cost_usd is not None for r in result.rows].count(True) == 3


CLAUDE_TRACES = FIXTURES / "otel_claude_code_traces.json"


def _llm_spans(export: dict) -> list[dict]:
    return [span for span in export["resourceSpans"][0]["scopeSpans"][0]["spans"] if span["name"] == "claude_code.llm_request"]


def _set(span: dict, key: str, value: dict) -> None:
    span["attributes"] = [a for a in span["attributes"] if a["key"] != key] + [{"key": key, "value": value}]


def test_claude_code_llm_request_spans_are_its_calls_where_it_exports_traces_only() -> None:
    """Claude Code's traces (beta, 2.1.x: ``claude_code.llm_request`` spans under
    ``claude_code.interaction``, documented on code.claude.com monitoring-usage, anthropics/claude-code
    #50776 and #54172) carry the call's counts as flat attributes, ``input_tokens``,
    ``output_tokens``, ``cache_read_tokens``, ``cache_creation_tokens`` (Anthropic's usage, additive),
    no ``gen_ai.usage.*``. A traces-only export used to be refused ("no span or log record with
    gen_ai.usage token counts")."""
    assert detect_format(CLAUDE_TRACES) is FORMATS["otel"]
    requests, summary = read(CLAUDE_TRACES)
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests] == [
        (3, 0, 18650, 410), (5, 18650, 1240, 220)]
    totals = run_audit([CLAUDE_TRACES]).totals
    assert (totals.requests, totals.input, totals.cache_read, totals.cache_write, totals.output) == (2, 3 + 5, 18650, 18650 + 1240, 410 + 220)
    # Sent when the span started; one session's calls of one model, a chain; Anthropic's.
    assert [r.sent_ms for r in requests] == [T_TRACES * 1000, (T_TRACES + 9) * 1000]
    assert [r.done_ms for r in requests] == [T_TRACES * 1000 + 6200, (T_TRACES + 9) * 1000 + 5100]
    assert {r.lane for r in requests} == {"5d0c7e11-cccc-4ddd-8eee-000000000221/claude-sonnet-4-5-20250929"}
    assert requests[1].prefix.parent == requests[0].prefix.node and {r.provider for r in requests} == {"anthropic"}
    assert [r.request_id for r in requests] == ["req_011CTaaaaaaaaaaaaaaaaaa1", "req_011CTaaaaaaaaaaaaaaaaaa2"]
    assert summary.agent == "claude-code" and summary.skipped == ()
    assert any(note.startswith("2 Claude Code call(s) (claude_code.llm_request spans)") for note in summary.notes)
    # Sent at the span's start, and the note says so (before: "the record's time less its duration_ms").
    assert any(note.endswith("read as a chain in send order (a span's start)") for note in summary.notes), summary.notes


T_TRACES = 1790500000


def test_claude_code_spans_beside_its_api_request_events_are_not_counted_again(tmp_path: Path) -> None:
    """Traces and logs exported together: each call is a span and an api_request event (one
    request_id). The events are counted (they carry cost_usd), the spans skipped and listed."""
    export = json.loads(CLAUDE_TRACES.read_text())
    records = []
    for span in _llm_spans(export):
        attributes = [a for a in span["attributes"] if a["key"] not in ("span.type", "llm_request.context", "ttft_ms", "gen_ai.system", "gen_ai.request.model")]
        records.append({"timeUnixNano": span["endTimeUnixNano"], "body": {"stringValue": "claude_code.api_request"},
                        "attributes": attributes + [{"key": "event.name", "value": {"stringValue": "api_request"}}]})
    logs = {"resourceLogs": [{"resource": export["resourceSpans"][0]["resource"], "scopeLogs": [{"logRecords": records}]}]}
    path = tmp_path / "claude-otel.jsonl"
    path.write_text(json.dumps(export) + "\n" + json.dumps(logs) + "\n")
    requests, summary = read(path)
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests] == [
        (3, 0, 18650, 410), (5, 18650, 1240, 220)]
    assert [why for _, why in summary.skipped] == ["Claude Code span claude_code.llm_request: the same call as its service's claude_code.api_request event"] * 2
    assert any(note.startswith("2 Claude Code call(s) (claude_code.api_request events)") for note in summary.notes)


def _claude_logs_of(export: dict) -> dict:
    """The api_request events Claude Code's logs exporter writes for the calls of its traces'
    llm_request spans (one request_id each)."""
    records = []
    for span in _llm_spans(export):
        attributes = [a for a in span["attributes"] if a["key"] not in ("span.type", "llm_request.context", "ttft_ms", "gen_ai.system", "gen_ai.request.model")]
        records.append({"timeUnixNano": span["endTimeUnixNano"], "body": {"stringValue": "claude_code.api_request"},
                        "attributes": attributes + [{"key": "event.name", "value": {"stringValue": "api_request"}}]})
    return {"resourceLogs": [{"resource": export["resourceSpans"][0]["resource"], "scopeLogs": [{"logRecords": records}]}]}


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("names", [("a-logs.jsonl", "b-traces.jsonl"), ("b-logs.jsonl", "a-traces.jsonl")])
def test_claude_code_traces_and_logs_written_apart_count_each_call_once(tmp_path: Path, names: tuple[str, str], jobs: int) -> None:
    """A collector writing each signal to its own file (the traces in one, the logs in another):
    each call is a span of one file and an api_request event of the other, one request_id. Counted
    once, whichever file is read first (before: twice, 4 calls of 2). Read in workers, the same."""
    import functools

    from prefixbench.workloads.audit.core import load_trace
    from prefixbench.workloads.runs.execute import map_runs

    export = json.loads(CLAUDE_TRACES.read_text())
    (tmp_path / names[0]).write_text(json.dumps(_claude_logs_of(export)) + "\n")
    (tmp_path / names[1]).write_text(json.dumps(export) + "\n")
    result = run_audit([tmp_path])
    assert (result.totals.requests, result.totals.cache_read, result.totals.cache_write) == (2, 18650, 19890)
    first = sorted(tmp_path.iterdir())[0]
    requests, summaries = load_trace([tmp_path], map_files=functools.partial(map_runs, jobs=jobs))
    assert [Path(r.file) for r in requests] == [first, first]
    later = next(s for s in summaries if Path(s.file) != first)
    assert later.requests == 0
    assert [why for _, why in later.skipped] == [
        f"Claude Code {'span' if 'traces' in Path(later.file).name else 'event'}: request {rid} already counted from another file "
        "of the export (its traces and logs written apart, or an export sent twice)" for rid in _request_ids(export)]


def _request_ids(export: dict) -> list[str]:
    return [a["value"]["stringValue"] for span in _llm_spans(export) for a in span["attributes"] if a["key"] == "request_id"]


def test_a_claude_code_span_in_fast_mode_is_billed_at_the_fast_price(tmp_path: Path) -> None:
    """The span names the call's ``speed`` (``fast`` or ``normal``), which the api_request event
    does not: a fast call's usage says so (priced at the model's fast row)."""
    export = json.loads(CLAUDE_TRACES.read_text())
    _set(_llm_spans(export)[1], "speed", {"stringValue": "fast"})
    path = tmp_path / "fast.json"
    path.write_text(json.dumps(export))
    assert [r.usage.speed for r in read(path)[0]] == ["", "fast"]


def test_a_claude_code_span_that_also_names_gen_ai_usage_is_one_call(tmp_path: Path) -> None:
    """Should Claude Code add the conventions' names to its spans (as #50776 asks), the span is
    still one call, read Claude Code's way."""
    export = json.loads(CLAUDE_TRACES.read_text())
    for span in _llm_spans(export):
        values = {a["key"]: a["value"] for a in span["attributes"]}
        _set(span, "gen_ai.usage.input_tokens", values["input_tokens"])
        _set(span, "gen_ai.usage.output_tokens", values["output_tokens"])
    path = tmp_path / "both.json"
    path.write_text(json.dumps(export))
    requests, summary = read(path)
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests] == [
        (3, 0, 18650, 410), (5, 18650, 1240, 220)]


def test_codex_spans_with_gen_ai_usage_beside_its_sse_events_are_not_counted_again(tmp_path: Path) -> None:
    """Newer Codex releases also put each response's usage on their ``handle_responses`` trace
    span (``gen_ai.usage.input_tokens``, ``cache_read.input_tokens``, ``cache_write.input_tokens``,
    ``output_tokens``; openai/codex codex-rs/core). Traces and logs collected into one file held
    each call twice (counted twice: 12 calls for 6); the service's own sse events are counted, its
    spans skipped and listed."""
    export = json.loads(CODEX.read_text())
    spans_by_service: dict[str, list] = {}
    for i, resource in enumerate(export["resourceLogs"]):
        for scope in resource["scopeLogs"]:
            for log in scope["logRecords"]:
                a = {x["key"]: next(iter(x["value"].values())) for x in log["attributes"]}
                if a.get("event.kind") != "response.completed":
                    continue
                usage = {"gen_ai.usage.input_tokens": a["input_token_count"], "gen_ai.usage.output_tokens": a["output_token_count"],
                         "gen_ai.usage.cache_read.input_tokens": a["cached_token_count"],
                         "gen_ai.usage.cache_write.input_tokens": a.get("cache_write_token_count", "0"),
                         "codex.usage.reasoning_output_tokens": a["reasoning_token_count"], "codex.usage.total_tokens": a["tool_token_count"]}
                end = int(log["timeUnixNano"])
                spans_by_service.setdefault(str(i), []).append({
                    "traceId": f"{i:032x}", "spanId": f"{len(spans_by_service.get(str(i), [])) + 1:016x}", "name": "handle_responses",
                    "startTimeUnixNano": str(end - 2 * 10**9), "endTimeUnixNano": str(end),
                    "attributes": [{"key": k, "value": {"intValue": str(v)}} for k, v in usage.items()]})
    traces = {"resourceSpans": [{"resource": export["resourceLogs"][int(i)]["resource"], "scopeSpans": [{"scope": {"name": "codex_otel"}, "spans": spans}]}
                                for i, spans in spans_by_service.items()]}
    path = tmp_path / "codex-traces-and-logs.jsonl"
    path.write_text(json.dumps(export) + "\n" + json.dumps(traces) + "\n")
    alone, _ = read(CODEX)
    requests, summary = read(path)
    assert len(requests) == len(alone) == 6
    assert [r.usage for r in requests] == [r.usage for r in alone]
    assert sum(1 for _, why in summary.skipped if "the same call as its service's own event" in why) == 6


def test_gemini_cli_spans_beside_its_api_response_records_are_not_counted_again(tmp_path: Path) -> None:
    """Gemini CLI's generate-content spans carry gen_ai.usage.input_tokens / output_tokens
    (google-gemini/gemini-cli packages/core/src/core/loggingContentGenerator.ts): with its logs in
    one OTLP file they are the same calls, skipped; its api_response records count (with the
    cached and thinking tokens the spans do not name)."""
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "gemini-cli"}}]}
    def attrs(values: dict) -> list:
        return [{"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}} for k, v in values.items()]
    logs = {"resourceLogs": [{"resource": resource, "scopeLogs": [{"logRecords": [
        {"timeUnixNano": str((T + 6) * 10**9), "attributes": attrs({"event.name": "gemini_cli.api_response", "session.id": "g", "model": "gemini-2.5-pro",
                                                                   "duration_ms": 6000, "input_token_count": 12400, "cached_content_token_count": 8000,
                                                                   "output_token_count": 310, "thoughts_token_count": 150, "tool_token_count": 0})}]}]}]}
    spans = {"resourceSpans": [{"resource": resource, "scopeSpans": [{"spans": [
        {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "llm_call", "startTimeUnixNano": str(T * 10**9), "endTimeUnixNano": str((T + 6) * 10**9),
         "attributes": attrs({"gen_ai.request.model": "gemini-2.5-pro", "gen_ai.usage.input_tokens": 12400, "gen_ai.usage.output_tokens": 310})}]}]}]}
    path = tmp_path / "gemini-otlp.jsonl"
    path.write_text(json.dumps(logs) + "\n" + json.dumps(spans) + "\n")
    requests, summary = read(path)
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.output) for r in requests] == [(12400 - 8000, 8000, 310 + 150)]
    assert [why for _, why in summary.skipped] == [f"span {'cd' * 8}: the same call as its service's own event (gemini-cli)"]


def test_a_claude_code_span_of_a_failed_request_is_not_a_call(tmp_path: Path) -> None:
    """An llm_request span names whether the request succeeded (``success``); a failed one
    (its counts whatever the API returned before failing) is listed, not counted."""
    export = json.loads(CLAUDE_TRACES.read_text())
    _set(_llm_spans(export)[0], "success", {"boolValue": False})
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(export))
    requests, summary = read(path)
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.cache_write_5m, r.usage.output) for r in requests] == [(5, 18650, 1240, 220)]
    assert [why for _, why in summary.skipped] == ["Claude Code span claude_code.llm_request: a failed request (success false), not served"]


def _codex_trace_export(with_ancestors: bool) -> dict:
    """A traces-only Codex export as its source lays the spans out (openai/codex codex-rs/core:
    ``turn`` (info, ``model``, ``thread.id``) > ``run_sampling_request`` and
    ``try_run_sampling_request`` (trace level, ``model``: the model's slug) > ``receiving_stream``
    > one ``handle_responses`` span a response event, the completed one carrying
    ``gen_ai.usage.*`` and no model; every span exported, trace_export_filter): two turns, each
    its own trace, spans in end order (the collector writes a span when it ends)."""
    def attrs(values: dict) -> list:
        return [{"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}} for k, v in values.items()]
    spans = []
    for turn, (input_, read_, output) in enumerate(((9800, 0, 310), (11200, 9728, 150))):
        trace, start = f"{turn + 1:032x}", (T + 60 * turn) * 10**9
        def span(n: int, name: str, parent: int, values: dict, at: int = 0, end: int = 5) -> dict:
            return {"traceId": trace, "spanId": f"{turn + 1:08x}{n:08x}", "parentSpanId": f"{turn + 1:08x}{parent:08x}" if parent else "",
                    "name": name, "startTimeUnixNano": str(start + at * 10**9), "endTimeUnixNano": str(start + end * 10**9),
                    "attributes": attrs(values)}
        spans += [span(5, "handle_responses", 4, {"otel.name": "created", "from": ""}, 0, 1),
                  span(6, "handle_responses", 4, {"otel.name": "completed", "gen_ai.usage.input_tokens": input_,
                                                   "gen_ai.usage.cache_read.input_tokens": read_, "gen_ai.usage.output_tokens": output,
                                                   "codex.usage.reasoning_output_tokens": 64, "codex.usage.total_tokens": input_ + output}, 1, 4)]
        if with_ancestors:
            spans += [span(4, "receiving_stream", 3, {}), span(3, "try_run_sampling_request", 2, {"turn_id": str(turn), "model": "gpt-5.1-codex"}),
                      span(2, "run_sampling_request", 1, {"turn_id": str(turn), "model": "gpt-5.1-codex", "cwd": "/work"}),
                      span(1, "turn", 0, {"thread.id": "019a0000-0000-7000-8000-000000000001", "turn.id": str(turn), "model": "gpt-5.1-codex"})]
    resource = {"attributes": attrs({"service.name": "codex_cli_rs", "service.version": "0.120.0", "env": "dev"})}
    return {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": {"name": "codex_cli_rs"}, "spans": spans}]}]}


def test_codex_traces_only_calls_take_their_model_from_the_spans_above_them(tmp_path: Path) -> None:
    """A traces-only Codex export: its handle_responses spans carry the usage and no model (the
    spans above them name it, ``model``); the calls came out as model unknown, unpriced, no
    provider's rules. Each call now runs the model the nearest span above it names."""
    path = tmp_path / "codex-traces.json"
    path.write_text(json.dumps(_codex_trace_export(True)))
    requests, summary = read(path)
    assert [(r.model, r.provider, r.usage.uncached, r.usage.cache_read, r.usage.output) for r in requests] == [
        ("gpt-5.1-codex", "openai", 9800, 0, 310), ("gpt-5.1-codex", "openai", 11200 - 9728, 9728, 150)]
    assert any("the model named by a span above them" in n for n in summary.notes), summary.notes
    # Each turn is a trace of its own: its turn span's thread.id makes the thread's calls one lane
    # (they were one lane a trace, the second call's read unexplained by the first).
    assert {r.lane for r in requests} == {"019a0000-0000-7000-8000-000000000001"}
    totals = run_audit([path]).totals
    assert totals.cost_usd is not None and totals.cost_usd > 0


def test_codex_traces_without_the_spans_naming_the_model_say_so(tmp_path: Path) -> None:
    """Where no span of the file names the model (only the handle_responses spans were exported),
    the calls stay model unknown and a note says why."""
    path = tmp_path / "codex-usage-spans.json"
    path.write_text(json.dumps(_codex_trace_export(False)))
    requests, summary = read(path)
    assert [r.model for r in requests] == ["unknown", "unknown"]
    (note,) = [n for n in summary.notes if "name no model" in n]
    assert "handle_responses" in note and "2 call span(s)" in note, note


def _claude_with_write_split(tmp_path: Path, five: int, hour: int) -> Path:
    """The Claude Code export with its first api_request (18,230 written) given the split of its
    writes by lifetime that 2.1.3xx adds to the event (cache_creation_5m_tokens,
    cache_creation_1h_tokens: usage.cache_creation's, read from the npm package's binary)."""
    lines = CLAUDE.read_text().splitlines()
    first = json.loads(lines[0])
    record = first["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    record["attributes"] += [{"key": "cache_creation_5m_tokens", "value": {"intValue": str(five)}},
                             {"key": "cache_creation_1h_tokens", "value": {"intValue": str(hour)}}]
    path = tmp_path / "split.jsonl"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    return path


def test_claude_codes_one_hour_writes_are_priced_as_such(tmp_path: Path) -> None:
    """Before, every write of the event was read as a 5 m write (18,230 of them here): the 1 h
    part (18,000) was priced at the 5 m rate. The other calls, which name no split, keep theirs."""
    requests, _ = read(_claude_with_write_split(tmp_path, 230, 18_000))
    split = sorted((r.usage.cache_write_5m, r.usage.cache_write_1h) for r in requests if r.usage.cache_write)
    assert split == [(230, 18_000), (880, 0), (1_544, 0), (15_000, 0), (24_012, 0)]
    totals = run_audit([tmp_path / "split.jsonl"]).totals
    assert totals.cache_write == 18230 + 1544 + 24012 + 880 + 15000  # the total is unchanged


def test_claude_code_one_hour_writes_over_the_total_are_refused_in_a_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"cache_creation_1h_tokens \(18231\) exceeds cache_creation_tokens \(18230\)"):
        read(_claude_with_write_split(tmp_path, 0, 18_231))
