"""OpenTelemetry GenAI spans (workloads/logs/formats/otel.py): OTLP JSON and the Python SDK's span
JSON, the attribute names of each generation, and the per-file reading of ``input_tokens``.

Fixtures are written here from the GenAI semantic conventions registry (open-telemetry/semantic-
conventions, ``docs/registry/attributes/gen-ai.md``), OTLP's JSON encoding and OpenLLMetry's
attribute names.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format, import_file
from prefixbench.workloads.logs.formats.base import ImportContext

T = 1761994800_000_000_000  # epoch ns


def read(path: Path):
    fmt = detect_format(path)
    assert fmt is FORMATS["otel"]
    return import_file(path, fmt, ImportContext())


def otlp(spans: list[dict], scope_key: str = "scopeSpans") -> dict:
    return {"resourceSpans": [{"resource": {"attributes": []}, scope_key: [{"scope": {"name": "x"}, "spans": spans}]}]}


def span(sid: str, attrs: dict, start_s: float, trace: str = "t1", parent: str = "") -> dict:
    def value(v: object) -> dict:
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}

    return {"traceId": trace, "spanId": sid, "parentSpanId": parent, "name": "chat", "startTimeUnixNano": str(T + int(start_s * 1e9)),
            "endTimeUnixNano": str(T + int(start_s * 1e9) + 10**9), "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()]}


def test_anthropic_input_tokens_copied_raw_are_read_additive(tmp_path: Path) -> None:
    # An instrumentation that copies Anthropic's input_tokens (uncached only) under the old names:
    # the second call's input (3) is below its reads plus writes, so the file is additive.
    a = {"gen_ai.system": "anthropic", "gen_ai.request.model": "claude-opus-4-5", "gen_ai.usage.prompt_tokens": 4,
         "gen_ai.usage.completion_tokens": 30, "gen_ai.usage.cache_creation_input_tokens": 5000}
    b = a | {"gen_ai.usage.prompt_tokens": 3, "gen_ai.usage.cache_read_input_tokens": 5000, "gen_ai.usage.cache_creation_input_tokens": 120}
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(otlp([span("s2", b, 5), span("s1", a, 0)])) + "\n")
    requests, summary = read(path)
    # Start order, not file order.
    assert [r.usage for r in requests] == [Usage(cache_write_5m=5000, uncached=4, output=30), Usage(cache_read=5000, cache_write_5m=120, uncached=3, output=30)]
    assert "excludes cache reads and writes" in summary.notes[0]


def test_openai_spans_in_old_otlp_and_snake_case_keys(tmp_path: Path) -> None:
    # instrumentationLibrarySpans (OTLP before 0.15); input includes the cached part.
    attrs = {"gen_ai.system": "openai", "gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.usage.input_tokens": 2000,
             "gen_ai.usage.output_tokens": 7, "gen_ai.usage.cache_read.input_tokens": 1024}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(otlp([span("s1", attrs, 0)], "instrumentationLibrarySpans"), indent=2))
    requests, summary = read(path)
    assert [(r.provider, r.model, r.usage) for r in requests] == [("openai", "gpt-4o-2024-08-06", Usage(cache_read=1024, uncached=976, output=7))]
    snake = {"resource_spans": [{"scope_spans": [{"spans": [{"trace_id": "t", "span_id": "s", "start_time_unix_nano": T,
                                                               "attributes": [{"key": "llm.usage.prompt_tokens", "value": {"int_value": 50}},
                                                                              {"key": "gen_ai.request.model", "value": {"string_value": "deepseek-chat"}}]}]}]}]}
    path.write_text(json.dumps(snake))
    requests, summary = read(path)
    assert [(r.provider, r.usage, r.sent_ms) for r in requests] == [("deepseek", Usage(uncached=50, cache_reported=False), T // 10**6)]
    assert any("not reported, not zero" in n for n in summary.notes)


def test_python_sdk_console_spans_one_after_another(tmp_path: Path) -> None:
    # ConsoleSpanExporter prints each span as a pretty-printed object, one after another.
    def sdk(sid: str, start: str, read_: int) -> dict:
        return {"name": "chat gpt-5", "context": {"trace_id": "0xabc", "span_id": sid, "trace_state": "[]"}, "kind": "SpanKind.CLIENT",
                "parent_id": None, "start_time": start, "end_time": start, "status": {"status_code": "UNSET"},
                "attributes": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-5", "gen_ai.usage.input_tokens": 3000,
                               "gen_ai.usage.output_tokens": 9, "gen_ai.usage.cache_read.input_tokens": read_, "gen_ai.conversation.id": "conv_1"},
                "events": [], "links": [], "resource": {"attributes": {"service.name": "x"}, "schema_url": ""}}
    path = tmp_path / "console.log.json"
    path.write_text(json.dumps(sdk("0x1", "2025-11-01T10:00:00.000000Z", 0), indent=4) + "\n" + json.dumps(sdk("0x2", "2025-11-01T10:00:05.000000Z", 2944), indent=4) + "\n")
    requests, _ = read(path)
    assert [(r.lane, r.usage, r.prefix.parent is None) for r in requests] == [
        ("conv_1", Usage(uncached=3000, output=9), True), ("conv_1", Usage(cache_read=2944, uncached=56, output=9), False)]
    result = run_audit([path])
    assert [row.reported_cache_read for row in result.rows] == [0, 2944]


def test_audit_totals_equal_the_spans_own_sums() -> None:
    fixture = Path(__file__).parent / "fixtures" / "otel.jsonl"
    spans = json.loads(fixture.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    calls = [{a["key"]: int(a["value"].get("intValue", 0)) for a in s["attributes"]} for s in spans if s["name"].startswith("chat")]
    result = run_audit([fixture])
    t = result.totals
    assert t.requests == 2
    assert t.cache_read == sum(c["gen_ai.usage.cache_read.input_tokens"] for c in calls) == 5000
    assert t.cache_write == sum(c["gen_ai.usage.cache_creation.input_tokens"] for c in calls) == 5120
    assert t.input + t.cache_read + t.cache_write == sum(c["gen_ai.usage.input_tokens"] for c in calls) == 10142
    assert t.output == sum(c["gen_ai.usage.output_tokens"] for c in calls) == 65


@pytest.mark.parametrize("doc", [
    otlp([]),
    otlp([span("s", {"gen_ai.usage.input_tokens": "many"}, 0)]),
    {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s", "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"doubleValue": 12.5}}]}]}]}]},
    {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s", "startTimeUnixNano": "99999999999999999999999",
                                                  "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "1"}}]}]}]}]},
    # Found by fuzzing: "²" is a digit to str.isdigit but no int: ValueError (a traceback) in the
    # span time and in an intValue.
    {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s", "startTimeUnixNano": "\u00b2",
                                                  "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "1"}}]}]}]}]},
    {"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s",
                                                  "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "\u00b2"}}]}]}]}]},
])
def test_bad_exports_are_one_line_errors(tmp_path: Path, doc: dict) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    with pytest.raises(UserError) as caught:
        import_file(path, FORMATS["otel"], ImportContext())
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_usage_counts_sent_as_digit_strings_are_the_counts(tmp_path: Path) -> None:
    # Some exporters (OpenClaw's, as a third-party doc shows it) send every attribute as a
    # stringValue, counts included: "1024" is 1024 tokens. fix37 refused it ("is not a
    # non-negative integer"); a string that is not plain digits still is (above).
    attrs = {"gen_ai.system": "openai", "gen_ai.response.model": "gpt-4o", "gen_ai.usage.input_tokens": "2000",
             "gen_ai.usage.output_tokens": "7", "gen_ai.usage.cache_read_tokens": "1024"}
    path = tmp_path / "strings.jsonl"
    path.write_text(json.dumps(otlp([span("s1", attrs, 0)])) + "\n")
    requests, _ = read(path)
    assert [r.usage for r in requests] == [Usage(cache_read=1024, uncached=976, output=7)]


@pytest.mark.parametrize("bad", ["-5", "1e3", "12.0", " 12", "\u0661\u0662"])
def test_usage_strings_that_are_not_plain_digits_are_one_line_errors(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(otlp([span("s", {"gen_ai.usage.input_tokens": bad}, 0)])) + "\n")
    with pytest.raises(UserError, match="gen_ai.usage.input_tokens is not a non-negative integer") as caught:
        import_file(path, FORMATS["otel"], ImportContext())
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_llm_model_attributes_name_the_model_beside_llm_usage(tmp_path: Path) -> None:
    # Tracers older than the GenAI conventions (promptflow's, 2024) name the model as they name the
    # usage: llm.response.model beside llm.usage.*. main read the usage and called the model
    # "unknown" (so no provider, no price, no cache rules).
    def sdk(sid: str, parent: str | None, attributes: dict) -> dict:
        return {"name": "openai_chat", "context": {"trace_id": "0x2003", "span_id": sid, "trace_state": "[]"}, "kind": "SpanKind.INTERNAL",
                "parent_id": parent, "start_time": "2024-04-30T20:40:30.790768Z", "end_time": "2024-04-30T20:40:31.943844Z",
                "status": {"status_code": "OK"}, "attributes": {"framework": "promptflow", **attributes}}
    call = sdk("0x0697", "0x8fc2", {"span_type": "LLM", "llm.response.model": "gpt-4o-mini", "llm.usage.prompt_tokens": 450,
                                     "llm.usage.completion_tokens": 17, "llm.usage.total_tokens": 467})
    # Its parent sums its calls under names of its own: no usage attribute, not counted.
    parent = sdk("0x8fc2", None, {"span_type": "Function", "__computed__.cumulative_token_count.prompt": 450})
    request_only = sdk("0x0700", "0x8fc2", {"llm.request.model": "gpt-4o", "llm.usage.prompt_tokens": 90, "llm.usage.completion_tokens": 3})
    path = tmp_path / "spans.json"
    path.write_text("\n".join(json.dumps(s, indent=4) for s in (parent, call, request_only)) + "\n")
    requests, _ = read(path)
    assert [(r.provider, r.model, r.usage) for r in requests] == [
        ("openai", "gpt-4o-mini", Usage(uncached=450, output=17, cache_reported=False)),
        ("openai", "gpt-4o", Usage(uncached=90, output=3, cache_reported=False))]


@pytest.mark.parametrize(("read_key", "write_key"), [
    # An OpenCode OTel plugin's LLM span (message.tokens.cache.{read,write}, input without them).
    ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_write.input_tokens"),
    # OpenClaw's diagnostics spans.
    ("gen_ai.usage.cache_read_tokens", "gen_ai.usage.cache_write_tokens"),
])
def test_cache_write_spellings_other_instrumentations_use(tmp_path: Path, read_key: str, write_key: str) -> None:
    # Two calls of one conversation: the first writes 6,000, the second reads them and writes 900.
    path = tmp_path / "spans.json"
    path.write_text(json.dumps(otlp([
        span("a", {"gen_ai.response.model": "claude-sonnet-4-5", "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 40,
                   read_key: 0, write_key: 6000}, 0),
        span("b", {"gen_ai.response.model": "claude-sonnet-4-5", "gen_ai.usage.input_tokens": 3, "gen_ai.usage.output_tokens": 25,
                   read_key: 6000, write_key: 900}, 5),
    ])))
    requests, _ = read(path)
    assert [r.usage for r in requests] == [Usage(cache_write_5m=6000, uncached=12, output=40),
                                           Usage(cache_read=6000, cache_write_5m=900, uncached=3, output=25)]
    t = run_audit([path]).totals
    assert (t.input, t.output, t.cache_read, t.cache_write) == (12 + 3, 40 + 25, 6000, 6000 + 900)


def test_openinference_llm_spans(tmp_path: Path) -> None:
    # OpenInference (Arize-ai/openinference, spec/semantic_conventions.md): an LLM span names its
    # usage llm.token_count.prompt / completion, the cache llm.token_count.prompt_details.cache_read
    # / cache_write (from #1393, March 2025), the model llm.model_name and the session session.id;
    # its Anthropic instrumentor's prompt count includes the reads and writes. The AGENT span above
    # the calls sums them. main found no usage attribute at all and refused the file.
    def oi(sid: str, parent: str, start: float, attrs: dict) -> dict:
        return span(sid, {"openinference.span.kind": "LLM", "llm.provider": "anthropic", "llm.system": "anthropic",
                          "llm.model_name": "claude-sonnet-4-5", "session.id": "sess-7", **attrs}, start, parent=parent)
    agent = span("root", {"openinference.span.kind": "AGENT", "llm.token_count.prompt": 9150, "llm.token_count.completion": 55}, 0)
    first = oi("c1", "root", 1, {"llm.token_count.prompt": 4010, "llm.token_count.completion": 30,
                                 "llm.token_count.prompt_details.cache_write": 4000, "llm.token_count.total": 4040})
    second = oi("c2", "root", 6, {"llm.token_count.prompt": 5140, "llm.token_count.completion": 25,
                                  "llm.token_count.prompt_details.cache_read": 4000,
                                  "llm.token_count.prompt_details.cache_write": 1130,
                                  # LiteLLM's instrumentor puts the UNcached text tokens here: not a read.
                                  "llm.token_count.prompt_details.cache_input": 10})
    path = tmp_path / "phoenix.json"
    path.write_text(json.dumps(otlp([agent, first, second])))
    requests, summary = read(path)
    assert [(r.lane, r.provider, r.model, r.usage) for r in requests] == [
        ("sess-7", "anthropic", "claude-sonnet-4-5", Usage(cache_write_5m=4000, uncached=10, output=30)),
        ("sess-7", "anthropic", "claude-sonnet-4-5", Usage(cache_read=4000, cache_write_5m=1130, uncached=10, output=25))]
    assert requests[1].prefix.parent == requests[0].prefix.node
    assert "includes cache reads and writes" in summary.notes[0]
    assert summary.skipped == ((1, "span root: sums the usage of the calls under it"),)


def test_pydantic_ai_usage_details_before_the_conventions_named_the_cache(tmp_path: Path) -> None:
    # pydantic-ai (Logfire) emitted its cache counts only as gen_ai.usage.details.cache_read_tokens /
    # cache_write_tokens until 0c0cb3bd (April 2026) added the conventions' names beside them; an
    # Anthropic call's details also kept Anthropic's own cache_*_input_tokens. Its input_tokens
    # includes both. main read these spans as "cache not reported".
    old = {"gen_ai.system": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.usage.input_tokens": 6020,
           "gen_ai.usage.output_tokens": 12, "gen_ai.usage.details.cache_read_tokens": 5000,
           "gen_ai.usage.details.cache_write_tokens": 1000, "gen_ai.usage.details.cache_read_input_tokens": 5000,
           "gen_ai.usage.details.cache_creation_input_tokens": 1000}
    raw_only = {"gen_ai.system": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.usage.input_tokens": 6100,
                "gen_ai.usage.output_tokens": 3, "gen_ai.usage.details.cache_read_input_tokens": 6000,
                "gen_ai.usage.details.cache_creation_input_tokens": 90}
    path = tmp_path / "logfire.json"
    path.write_text(json.dumps(otlp([span("a", old, 0), span("b", raw_only, 4)])))
    requests, _ = read(path)
    assert [r.usage for r in requests] == [Usage(cache_read=5000, cache_write_5m=1000, uncached=20, output=12),
                                           Usage(cache_read=6000, cache_write_5m=90, uncached=10, output=3)]


def test_vercel_ai_sdk_and_sentry_cache_names(tmp_path: Path) -> None:
    # The AI SDK's doGenerate span: gen_ai.usage.input_tokens beside its own ai.usage.* names, the
    # cache in ai.usage.inputTokenDetails.cacheReadTokens / cacheWriteTokens (v6; cachedInputTokens
    # before). Sentry's conventions named them gen_ai.usage.input_tokens.cached / .cache_write
    # until 2026. The outer ai.generateText span sums its calls under ai.usage.* only: not a call.
    # main read the cache of neither.
    outer = span("g", {"ai.operationId": "ai.generateText", "ai.usage.promptTokens": 9000}, 0)
    v6 = span("d1", {"ai.operationId": "ai.generateText.doGenerate", "gen_ai.system": "anthropic.messages",
                     "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.usage.input_tokens": 4010, "gen_ai.usage.output_tokens": 30,
                     "ai.usage.inputTokenDetails.cacheReadTokens": 0, "ai.usage.inputTokenDetails.cacheWriteTokens": 4000}, 1, parent="g")
    v5 = span("d2", {"ai.operationId": "ai.generateText.doGenerate", "gen_ai.request.model": "claude-sonnet-4-5",
                     "gen_ai.usage.input_tokens": 4500, "gen_ai.usage.output_tokens": 9, "ai.usage.cachedInputTokens": 4000}, 5, parent="g")
    sentry = span("s1", {"gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.usage.input_tokens": 4700, "gen_ai.usage.output_tokens": 4,
                         "gen_ai.usage.input_tokens.cached": 4500, "gen_ai.usage.input_tokens.cache_write": 190}, 9, parent="g")
    path = tmp_path / "vercel.json"
    path.write_text(json.dumps(otlp([outer, v6, v5, sentry])))
    requests, _ = read(path)
    assert [r.usage for r in requests] == [Usage(cache_write_5m=4000, uncached=10, output=30),
                                           Usage(cache_read=4000, uncached=500, output=9),  # (v5: no write field, see below)
                                           Usage(cache_read=4500, cache_write_5m=190, uncached=10, output=4)]
    # v5 names no write attribute: in this file, whose other spans name one, it wrote 0; in a file
    # of its own, what it wrote is unknown.
    path.write_text(json.dumps(otlp([outer, v5])))
    assert [r.usage.writes_reported for r in read(path)[0]] == [False]


def test_bare_resource_spans_pretty_printed_one_after_another(tmp_path: Path) -> None:
    """GitHub Copilot CLI's file exporter writes each ``{resource, scopeSpans}`` on its own (no
    ``resourceSpans`` list around it), pretty-printed one after another; an ``invoke_agent`` span
    sums its chat spans. Main took the file for no known format."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.response.model": "claude-opus-4.6-1m", "gen_ai.usage.input_tokens": 160336,
             "gen_ai.usage.output_tokens": 214, "gen_ai.usage.cache_read.input_tokens": 79929, "gen_ai.conversation.id": "c1"}
    first = {"gen_ai.operation.name": "chat", "gen_ai.response.model": "claude-opus-4.6-1m", "gen_ai.provider.name": "github",
             "gen_ai.usage.input_tokens": 80022, "gen_ai.usage.output_tokens": 166, "gen_ai.conversation.id": "c1"}
    second = dict(first, **{"gen_ai.usage.input_tokens": 80314, "gen_ai.usage.output_tokens": 48, "gen_ai.usage.cache_read.input_tokens": 79929})
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "github-copilot"}}]}
    batches = [[span("c", first, 1, parent="a"), span("d", second, 3, parent="a")], [span("a", agent, 0)]]
    path = tmp_path / "otel-raw.jsonl"
    path.write_text("".join(json.dumps({"resource": resource, "scopeSpans": [{"scope": {"name": "github.copilot"}, "spans": spans}],
                                        "schemaUrl": ""}, indent=2) + "\n" for spans in batches))
    requests, summary = read(path)
    assert [(r.usage.uncached, r.usage.cache_read, r.usage.output) for r in requests] == [(80022, 0, 166), (385, 79929, 48)]
    assert not requests[0].usage.cache_reported and requests[1].prefix.parent == requests[0].prefix.node
    assert [why for _, why in summary.skipped] == ["span a: sums the usage of the calls under it"]
    # GitHub reports reads and no writes (nor, on the first call, any cache field): what a call
    # wrote is unknown, so its whole prompt is what the next call may read (main: its read only,
    # here nothing: the second call predicted to read 0).
    assert [r.usage.writes_reported for r in requests] == [False, False]
    rows = run_audit([path]).rows
    assert [(r.reported_cache_read, r.predicted_cache_read) for r in rows] == [(None, 0), (79_929, 80_022)]
    assert rows[1].read_within


def sdk_log(attributes: dict, at_s: int, *, trace: str | None = None, session: str = "w1") -> dict:
    """A log record as the JavaScript SDK holds it, serialized whole (GitHub Copilot Chat's file exporter)."""
    record = {"hrTime": [at_s, 250_000_000], "hrTimeObserved": [at_s, 250_000_000],
              "resource": {"_rawAttributes": [["service.name", "copilot-chat"], ["session.id", session]], "_asyncAttributesPending": False},
              "instrumentationScope": {"name": "copilot-chat", "version": "0.41"}, "_body": "GenAI inference", "attributes": attributes,
              "totalAttributesCount": len(attributes), "_isReadonly": True}
    return record if trace is None else {**record, "spanContext": {"traceId": trace, "spanId": "s1", "traceFlags": 1}}


def test_log_records_of_inference_events_are_the_calls(tmp_path: Path) -> None:
    """GitHub Copilot Chat writes the GenAI conventions' events as the JavaScript SDK's log records,
    one a line, between its metrics and empty objects: each inference event is a call, an agent
    turn repeating its call's usage is not counted again. Main took the file for no known format."""
    inference = {"event.name": "gen_ai.client.inference.operation.details", "gen_ai.response.model": "claude-opus-4-6",
                 "gen_ai.usage.input_tokens": 129590, "gen_ai.usage.output_tokens": 114}
    turn = {"event.name": "copilot_chat.agent.turn", "turn.index": 0, "gen_ai.usage.input_tokens": 129590, "gen_ai.usage.output_tokens": 114}
    side = {"event.name": "gen_ai.client.inference.operation.details", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 1700,
            "gen_ai.usage.output_tokens": 5}
    metrics = {"resource": {"_rawAttributes": []}, "scopeMetrics": [{"scope": {"name": "copilot-chat"}, "metrics": []}]}
    second = dict(inference, **{"gen_ai.usage.input_tokens": 129999, "gen_ai.usage.output_tokens": 145})
    lines = [sdk_log(side, 1773851536), {}, metrics, sdk_log(inference, 1773851611, trace="t1"), sdk_log(turn, 1773851612, trace="t1"),
             sdk_log(second, 1773851617, trace="t1")]
    path = tmp_path / "otel-traces.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    requests, summary = read(path)
    assert [(r.lane, r.model, r.usage.uncached, r.usage.output, r.done_ms) for r in requests] == [
        ("w1/gpt-4o-mini", "gpt-4o-mini", 1700, 5, 1773851536250),
        ("t1", "claude-opus-4-6", 129590, 114, 1773851611250),
        ("t1", "claude-opus-4-6", 129999, 145, 1773851617250),
    ]
    assert requests[2].prefix.parent == requests[1].prefix.node and not requests[1].usage.cache_reported
    assert [(line, why.split(":")[0]) for line, why in summary.skipped] == [(5, "log record of copilot_chat.agent.turn")]
    assert any("2 record(s) hold no call" in note for note in summary.notes)


def test_otlp_logs_export_reads_its_inference_records(tmp_path: Path) -> None:
    """The same events through a collector's file exporter: ``resourceLogs`` / ``scopeLogs`` /
    ``logRecords``, typed attributes, ``timeUnixNano``, the record's own trace id."""
    def attrs(values: dict) -> list[dict]:
        return [{"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}} for k, v in values.items()]
    call = {"gen_ai.response.model": "gpt-5.1", "gen_ai.usage.input_tokens": 5000, "gen_ai.usage.output_tokens": 70,
            "gen_ai.usage.cache_read.input_tokens": 4096}
    export = {"resourceLogs": [{"resource": {"attributes": attrs({"session.id": "w2"})}, "scopeLogs": [{"scope": {"name": "x"}, "logRecords": [
        {"timeUnixNano": str(T), "traceId": "ab", "eventName": "gen_ai.client.inference.operation.details", "attributes": attrs(call)},
        {"timeUnixNano": str(T + 10**9), "traceId": "ab", "attributes": attrs({"event.name": "gen_ai.client.inference.operation.details", **call})},
        {"timeUnixNano": str(T + 2 * 10**9), "attributes": attrs({"event.name": "app.turn", **call})},
    ]}]}]}
    path = tmp_path / "logs.jsonl"
    path.write_text(json.dumps(export) + "\n")
    requests, summary = read(path)
    assert [(r.lane, r.usage.cache_read, r.usage.uncached, r.done_ms) for r in requests] == [("ab", 4096, 904, T // 10**6), ("ab", 4096, 904, T // 10**6 + 1000)]
    assert [why.split(":")[0] for _, why in summary.skipped] == ["log record of app.turn"]
    # All on line 1: each names its record (a new user's pass found every call at logs.jsonl:1).
    assert [r.path for r in requests] == ["resourceLogs[0].scopeLogs[0].logRecords[0]", "resourceLogs[0].scopeLogs[0].logRecords[1]"]


def test_every_span_of_one_export_names_its_place(tmp_path: Path) -> None:
    """Regression (a new user's pass): an OTLP export, pretty-printed or on one line, is one
    record starting on line 1, so every call read ``file:1``; each span now names its place
    (the old ``instrumentationLibrarySpans`` key as the file spells it)."""
    attrs = {"gen_ai.system": "openai", "gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.usage.input_tokens": 2000,
             "gen_ai.usage.output_tokens": 7}
    export = otlp([span("s1", attrs, 0), span("s2", attrs, 5)], "instrumentationLibrarySpans")
    export["resourceSpans"].append(otlp([span("s3", attrs, 9)])["resourceSpans"][0])
    path = tmp_path / "export.json"
    for text in (json.dumps(export, indent=2), json.dumps(export)):
        path.write_text(text)
        requests, _ = read(path)
        assert [(r.line, r.path) for r in requests] == [
            (1, "resourceSpans[0].instrumentationLibrarySpans[0].spans[0]"), (1, "resourceSpans[0].instrumentationLibrarySpans[0].spans[1]"),
            (1, "resourceSpans[1].scopeSpans[0].spans[0]")]
    path.write_text(json.dumps([otlp([span("s1", attrs, 0)]), otlp([span("s2", attrs, 5)])]))  # a one-line array of exports
    assert [r.path for r in read(path)[0]] == ["[0].resourceSpans[0].scopeSpans[0].spans[0]", "[1].resourceSpans[0].scopeSpans[0].spans[0]"]


def test_a_log_records_time_that_is_not_seconds_and_nanoseconds_is_one_line(tmp_path: Path) -> None:
    record = sdk_log({"event.name": "gen_ai.client.inference.operation.details", "gen_ai.usage.input_tokens": 1}, 1773851536)
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({**record, "hrTime": [1773851536, -4]}) + "\n")
    with pytest.raises(UserError, match=r"bad.jsonl:1: log record hrTime \[1773851536, -4\] is not \[epoch seconds, nanoseconds\]"):
        read(path)


def test_a_missing_write_attribute_is_0_where_the_same_emitter_names_one_elsewhere(tmp_path: Path) -> None:
    # An emitter that leaves the write attribute out when nothing was written: its other spans
    # name one, so a span without it wrote 0 and its read ends the cacheable part. int38b read
    # every span without it as writes unknown (the whole prompt cacheable), over-predicting the
    # next call. A second service in the same file that never names a write stays unknown.
    def call(sid: str, inp: int, read_n: int | None, written: int | None, at: float, trace: str) -> dict:
        attrs = {"gen_ai.system": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.usage.input_tokens": inp,
                 "gen_ai.usage.output_tokens": 5}
        attrs.update({k: v for k, v in (("gen_ai.usage.cache_read.input_tokens", read_n),
                                        ("gen_ai.usage.cache_write.input_tokens", written)) if v is not None})
        return span(sid, attrs, at, trace=trace)

    def resource(service: str, spans: list[dict]) -> dict:
        return {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
                "scopeSpans": [{"scope": {"name": "x"}, "spans": spans}]}

    omits_zero = [call("a", 5010, 0, 5000, 0, "t1"), call("b", 5510, 5000, None, 5, "t1"), call("c", 6000, 5000, 500, 9, "t1")]
    reads_only = [call("d", 5010, 0, None, 0, "t2"), call("e", 5510, 5000, None, 5, "t2")]
    path = tmp_path / "two-services.json"
    path.write_text(json.dumps({"resourceSpans": [resource("omits-zero", omits_zero), resource("reads-only", reads_only)]}))
    requests, summary = read(path)
    assert [(r.lane, r.usage.writes_reported) for r in requests] == [
        ("t1", True), ("t2", False), ("t1", True), ("t2", False), ("t1", True)]
    assert ("service 'omits-zero' names a cache-write attribute on some spans: a span of a provider that bills writes apart "
            "without one wrote 0") in summary.notes
    assert any(n.startswith("service 'reads-only' names no cache-write attribute on any span") for n in summary.notes)
    # b wrote 0: c may read b's read alone (5,000), which it did; read as unknown, c was predicted
    # to read b's whole prompt (5,510).
    c = next(r for r in run_audit([path]).rows if r.reported_cache_read == 5000 and r.reported_cache_write == 500)
    assert c.predicted_cache_read == 5000 and c.read_within


def test_a_call_whose_writes_are_not_reported_is_predicted_as_its_prompt_not_more(tmp_path: Path) -> None:
    """Where the log reports no writes (GitHub Copilot CLI's spans), the whole prompt is what the
    call may write: the predicted read, write and uncached parts add up to the prompt (int38b
    counted the part past the reported read twice, as written and as uncached)."""
    first = {"gen_ai.operation.name": "chat", "gen_ai.response.model": "claude-opus-4.6-1m", "gen_ai.provider.name": "github",
             "gen_ai.usage.input_tokens": 80022, "gen_ai.usage.output_tokens": 166, "gen_ai.conversation.id": "c1"}
    second = dict(first, **{"gen_ai.usage.input_tokens": 80314, "gen_ai.usage.output_tokens": 48, "gen_ai.usage.cache_read.input_tokens": 79929})
    path = tmp_path / "otel-raw.jsonl"
    path.write_text(json.dumps({"resource": {}, "scopeSpans": [{"scope": {"name": "g"}, "spans": [span("c", first, 1), span("d", second, 3)]}]}) + "\n")
    requests, _ = read(path)
    rows = run_audit([path]).rows
    assert [r.usage.writes_reported for r in requests] == [False, False]
    assert [row.predicted_cache_read + row.predicted_cache_write + row.predicted_uncached for row in rows] == [r.usage.prompt for r in requests]


def test_a_log_records_call_is_sent_on_the_logs_clock_at_the_latest_when_it_ended(tmp_path: Path) -> None:
    """A log record holds one time, when its call ended: the call was sent then at the latest, so
    two calls 20 minutes apart are 20 minutes apart on the audit's clock (int38b sent them at no
    time: the miss after 20 minutes idle was "0s after the previous request, inside the TTL")."""
    def attrs(values: dict) -> list[dict]:
        return [{"key": k, "value": {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}} for k, v in values.items()]
    call = {"gen_ai.response.model": "gpt-5.1", "gen_ai.usage.input_tokens": 50000, "gen_ai.usage.output_tokens": 70,
            "gen_ai.usage.cache_read.input_tokens": 0}
    later = dict(call, **{"gen_ai.usage.input_tokens": 51000})
    records = [{"timeUnixNano": str(T + n * 20 * 60 * 10**9), "traceId": "ab", "eventName": "gen_ai.client.inference.operation.details",
                "attributes": attrs(c)} for n, c in enumerate([call, later])]
    path = tmp_path / "logs.jsonl"
    path.write_text(json.dumps({"resourceLogs": [{"resource": {}, "scopeLogs": [{"logRecords": records}]}]}) + "\n")
    requests, _ = read(path)
    assert [(r.sent_ms, r.done_ms) for r in requests] == [(T // 10**6, T // 10**6), (T // 10**6 + 1_200_000, T // 10**6 + 1_200_000)]
    row = run_audit([path]).rows[1]
    assert row.cause == "ttl-expired" and "inside the TTL" not in row.detail


@pytest.mark.parametrize("value", [
    {"resourceSpans": [{"resource": {}, "scopeSpans": 1.5}]},
    {"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": 7}]}]},
    {"resourceLogs": [{"resource": {}, "scopeLogs": 3}]},
    {"resourceLogs": [{"resource": {}, "scopeLogs": [{"logRecords": True}]}]},
    {"hrTime": [1761994800, 0], "attributes": {"gen_ai.usage.input_tokens": 5}, "instrumentationScope": {}, "resource": {"_rawAttributes": 4}},
])
def test_a_wrapper_list_that_is_not_a_list_is_one_line_or_read_not_a_traceback(tmp_path: Path, value: dict) -> None:
    """A ``scopeSpans``, ``spans``, ``scopeLogs``, ``logRecords`` or ``_rawAttributes`` that is not a
    list holds nothing (as an entry that is not an object does): never a TypeError."""
    path = tmp_path / "otel.jsonl"
    path.write_text(json.dumps(value) + "\n")
    try:
        read(path)
    except UserError as error:
        assert "\n" not in str(error) and str(error).startswith(str(path))


def resource_spans(spans: list[dict], **resource: str) -> dict:
    """An export of one resource whose attributes are ``resource`` (``service.name``, ``session.id``)."""
    attributes = [{"key": k.replace("_", "."), "value": {"stringValue": v}} for k, v in resource.items()]
    return {"resourceSpans": [{"resource": {"attributes": attributes}, "scopeSpans": [{"scope": {"name": "x"}, "spans": spans}]}]}


CHAT = {"gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5", "gen_ai.usage.input_tokens": 5010,
        "gen_ai.usage.output_tokens": 40, "gen_ai.usage.cache_creation.input_tokens": 5000}


def test_a_conversation_or_session_id_names_the_lane_else_the_trace(tmp_path: Path) -> None:
    """The conversation id an invoke_agent span above the calls names (two traces of it: one lane),
    else the resource's session.id, else the 32-hex trace id; different ids stay different lanes."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "conv-a"}
    lines = [
        otlp([span("a", agent, 0, trace="t1"), span("a1", CHAT, 0, trace="t1", parent="a")]),
        otlp([span("b", agent, 60, trace="t2"), span("b1", CHAT, 60, trace="t2", parent="b")]),
        otlp([span("c1", CHAT | {"session.id": "conv-c"}, 90, trace="t3")]),
        resource_spans([span("d1", CHAT, 120, trace="t4")], session_id="sess-d"),
        otlp([span("e1", CHAT, 180, trace="5b8efff798038103d269b633813fc60c")]),
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    requests, _ = read(path)
    assert [r.lane for r in requests] == ["conv-a", "conv-a", "conv-c", "sess-d", "5b8efff798038103d269b633813fc60c"]
    assert requests[1].prefix.parent == requests[0].prefix.node  # one conversation: one chain across its traces


@pytest.mark.parametrize(("resource", "attrs", "agent"), [
    ({"service_name": "claude-code"}, {}, "claude-code"),
    ({"service_name": "codex_cli_rs"}, {}, "codex"),  # Codex's originators (otel.py SERVICE_FORMATS)
    ({"service_name": "codex_exec"}, {}, "codex"),
    ({"service_name": "codex-tui"}, {}, "codex"),
    ({"service_name": "codex_vscode"}, {}, "codex"),
    ({"service_name": "Codex Desktop"}, {}, "codex"),
    ({"service_name": "gemini-cli"}, {}, "gemini-cli"),
    ({"service_name": "qwen-code"}, {}, "qwen-code"),
    ({"service_name": "coder-agent"}, {"gen_ai.agent.name": "coder"}, "coder-agent"),
    ({"service_name": "unknown_service:python"}, {"gen_ai.agent.name": "coder"}, "coder"),
    ({}, {}, ""),
])
def test_the_file_names_its_agent_by_service_name_else_gen_ai_agent_name(tmp_path: Path, resource: dict, attrs: dict, agent: str) -> None:
    parent = {"gen_ai.operation.name": "invoke_agent"} | attrs
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(resource_spans([span("a", parent, 0), span("a1", CHAT, 0, parent="a")], **resource)) + "\n")
    _, summary = read(path)
    assert summary.agent == agent


def test_claude_code_events_name_claude_code_and_several_agents_are_noted(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    lines = [resource_spans([span("a1", CHAT, 0)], service_name="coder-agent"), resource_spans([span("b1", CHAT, 5, trace="t2")], service_name="claude-code"),
             resource_spans([span("c1", CHAT, 9, trace="t3")], service_name="claude-code")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    _, summary = read(path)
    assert summary.agent == "claude-code"
    assert "calls of several agents (claude-code x2, coder-agent x1): the file's advice is claude-code's" in summary.notes


def test_the_advice_names_the_agent_the_export_names_not_otel(tmp_path: Path) -> None:
    """Claude Code's calls in an OTLP export, 20 minutes apart: keep-alive is Claude Code's fix."""
    from prefixbench.workloads.audit.advice import advise
    from prefixbench.workloads.audit.core import load_trace

    second = CHAT | {"gen_ai.usage.input_tokens": 5020, "gen_ai.usage.cache_creation.input_tokens": 5010}
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(resource_spans([span("a1", CHAT, 0), span("a2", second, 1200)], service_name="claude-code")) + "\n")
    trace = load_trace([path])
    result = advise(run_audit([path], trace=trace), trace)
    assert result.recommendations and {rec.agent for rec in result.recommendations} == {"Claude Code"}


def test_the_calls_under_a_deep_chain_of_agent_spans_are_read_in_steps_linear_in_the_spans(tmp_path: Path) -> None:
    """Found fuzzing the lane naming: each call walked every span above it, twice (the sums of
    usage under a span, then the conversation id up the chain), so 4,000 nested invoke_agent
    spans each over one call (3 MB) took 32 s to read. Each chain is walked once now: the steps
    counted are the walks' set insertions (before: 181,200 here; after: 1,200)."""
    import sys

    n = 300
    spans = []
    for i in range(n):
        spans.append(span(f"a{i}", {"gen_ai.operation.name": "invoke_agent"} | ({"gen_ai.conversation.id": "conv-a"} if i == 0 else {}), i,
                          parent=f"a{i - 1}" if i else ""))
        spans.append(span(f"c{i}", CHAT, i, parent=f"a{i}"))
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(otlp(spans)) + "\n")
    added = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal added
        if event == "c_call" and getattr(arg, "__name__", "") == "add" and isinstance(getattr(arg, "__self__", None), set):
            added += 1

    sys.setprofile(count)
    try:
        requests, _ = read(path)
    finally:
        sys.setprofile(None)
    assert len(requests) == n and {r.lane for r in requests} == {"conv-a"}
    assert added < 6 * len(spans), added


def test_a_span_a_third_party_host_served_is_unpriced(tmp_path: Path) -> None:
    """``gen_ai.provider.name`` naming Groq on DeepSeek's model: Groq bills its own prices, which
    the table does not hold (main: priced at DeepSeek's list price); DeepSeek's own keeps it."""
    from prefixbench.workloads.audit.core import run_audit

    chat = {"gen_ai.request.model": "deepseek-v4-pro", "gen_ai.usage.input_tokens": 5010, "gen_ai.usage.output_tokens": 40}
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(otlp([span("a1", chat | {"gen_ai.provider.name": "groq"}, 0, trace="t1"),
                                     span("b1", chat | {"gen_ai.provider.name": "deepseek"}, 60, trace="t2")])) + "\n")
    requests, _ = read(path)
    assert [r.upstream for r in requests] == ["groq", ""]
    result = run_audit([path])
    assert [row.cost_usd is None for row in result.rows] == [True, False] and result.totals.unpriced_requests == 1
    assert any("served by groq (the log names it): Groq sets its own" in n for n in result.notes), result.notes


def test_an_agent_span_beside_its_calls_under_one_parent_sums_them(tmp_path: Path) -> None:
    """Microsoft Agent Framework (Python) opens its ``invoke_agent`` span beside its ``chat`` spans,
    all under the workflow's executor span, not above them, and gives it their summed usage (a real
    export: github.com/Josh-Weston/microsoft-agent-framework-samples, 22 such agent spans over 34
    calls). Before, each agent span was counted as one more call: the prompt and output twice over.
    An agent span with no call beside it in its time window is still a call."""
    model = {"gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-5-mini"}
    chat = model | {"gen_ai.operation.name": "chat"}
    agent = model | {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Weather agent"}
    spans = [
        span("e1", {}, 0, parent="w"),
        span("a1", agent | {"gen_ai.usage.input_tokens": 346, "gen_ai.usage.output_tokens": 82}, 0, parent="e1"),
        span("c1", chat | {"gen_ai.usage.input_tokens": 145, "gen_ai.usage.output_tokens": 51}, 0.1, parent="e1"),
        span("x1", {"gen_ai.operation.name": "execute_tool"}, 0.4, parent="e1"),
        span("c2", chat | {"gen_ai.usage.input_tokens": 201, "gen_ai.usage.output_tokens": 31}, 0.5, parent="e1"),
        span("e2", {}, 3, parent="w"),
        span("a2", agent | {"gen_ai.usage.input_tokens": 289, "gen_ai.usage.output_tokens": 94}, 3, parent="e2"),
        span("c3", chat | {"gen_ai.usage.input_tokens": 289, "gen_ai.usage.output_tokens": 94}, 3.2, parent="e2"),
        # Another trace: an agent span alone (its calls not exported) is the only count there is.
        span("a3", agent | {"gen_ai.usage.input_tokens": 500, "gen_ai.usage.output_tokens": 9}, 9, trace="t2", parent="e3"),
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps(otlp(spans)) + "\n")
    requests, summary = read(path)
    assert [(r.lane, r.usage.uncached, r.usage.output) for r in requests] == [("t1", 145, 51), ("t1", 201, 31), ("t1", 289, 94), ("t2", 500, 9)]
    assert [why.split(":")[0] for _, why in summary.skipped] == ["span a1", "span a2"]
    assert all("sums the usage of the" in why and "beside it" in why for _, why in summary.skipped)
    totals = run_audit([path]).totals
    assert (totals.requests, totals.input, totals.output) == (4, 145 + 201 + 289 + 500, 51 + 31 + 94 + 9)
