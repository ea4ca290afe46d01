"""OpenTelemetry GenAI spans: OTLP JSON exports, and the span JSON the Python SDK's console
exporter writes.

**OTLP JSON** (the collector's file exporter, ``otlp-json`` dumps): one
``{"resourceSpans": [{resource, scopeSpans: [{scope, spans: [...]}]}]}`` object a line (or one
pretty-printed), or (GitHub Copilot CLI's file exporter) each ``{resource, scopeSpans}`` on its
own, pretty-printed one after another; attribute values are typed (``{"intValue": "2000"}``, int64 as a string; some
exporters send usage counts as ``{"stringValue": "2000"}``, read as the same count);
``instrumentationLibrarySpans`` before OTLP 0.15; snake_case keys from protobuf's own JSON.
**SDK span JSON**: ``{name, context: {trace_id, span_id}, parent_id, start_time, end_time,
attributes: {...}}`` objects one after another.
**Log records** (the GenAI conventions' events): an OTLP logs export (``{"resourceLogs":
[{resource, scopeLogs: [{scope, logRecords: [...]}]}]}``, or one ``{resource, scopeLogs}``), and
the JavaScript SDK's log records serialized as they are (``{hrTime: [s, ns], attributes: {...},
spanContext, resource, instrumentationScope, _body}``, one a line: what GitHub Copilot Chat's file
exporter writes, ``github.copilot.chat.otel.outfile``, between its metrics, ``{resource,
scopeMetrics}``, and empty ``{}`` objects, neither a call). A record is a call where its event is
``gen_ai.client.inference.operation.details`` (one inference, its usage as a span's); a record of
another event with usage (Copilot Chat's ``copilot_chat.agent.turn``) sums its calls and is
skipped. Its time (``timeUnixNano``, ``hrTime``) is when the call ended, and when it was sent at the
latest (on the audit's clock, as Amp's calls after a tool result); its trace (the record's
span context) is its lane, else the resource's ``session.id`` and the model.

One call = one span with token usage. Attributes, current names first (the GenAI semantic
conventions registry), then the deprecated ones and OpenLLMetry's (the model likewise:
``gen_ai.response.model``, ``gen_ai.request.model``, then ``llm.response.model``,
``llm.request.model``):

==========  ==========================================================================================
input       ``gen_ai.usage.input_tokens``, ``gen_ai.usage.prompt_tokens``, ``llm.usage.prompt_tokens``,
            ``llm.token_count.prompt``
output      ``gen_ai.usage.output_tokens``, ``gen_ai.usage.completion_tokens``, ``llm.usage.completion_tokens``,
            ``llm.token_count.completion``
read        ``gen_ai.usage.cache_read.input_tokens``, ``gen_ai.usage.cache_read_input_tokens``,
            ``gen_ai.usage.cache_read_tokens``, ``gen_ai.usage.details.cache_read_tokens``,
            ``gen_ai.usage.details.cache_read_input_tokens``, ``llm.token_count.prompt_details.cache_read``,
            ``gen_ai.usage.input_tokens.cached``, ``ai.usage.inputTokenDetails.cacheReadTokens``,
            ``ai.usage.cachedInputTokens``
written     ``gen_ai.usage.cache_write.input_tokens`` (the conventions' name since August 2026),
            ``gen_ai.usage.cache_creation.input_tokens`` (before), ``gen_ai.usage.cache_creation_input_tokens``,
            ``gen_ai.usage.cache_write_tokens``, ``gen_ai.usage.details.cache_write_tokens``,
            ``gen_ai.usage.details.cache_creation_input_tokens``, ``llm.token_count.prompt_details.cache_write``,
            ``gen_ai.usage.input_tokens.cache_write``, ``ai.usage.inputTokenDetails.cacheWriteTokens``
==========  ==========================================================================================

The ``llm.token_count.*`` names are OpenInference's (Arize's instrumentors, Phoenix), which also
names the model ``llm.model_name``, who served it ``llm.provider`` / ``llm.system`` and the
conversation ``session.id``; the ``details.*`` names are pydantic-ai's (Logfire) before it wrote
the conventions' names too; ``input_tokens.cached`` / ``.cache_write`` are Sentry's older names
and ``ai.usage.*`` the Vercel AI SDK's own (its ``doGenerate`` spans carry ``gen_ai.usage.input_tokens``
beside them).

The conventions say ``input_tokens`` SHOULD include reads and writes; instrumentations that copy
Anthropic's ``input_tokens`` do not. A file is read one way, decided from its own numbers (an
input below its reads plus writes cannot include them) and stated in the notes. A span whose
descendants carry usage too (an ``invoke_agent`` span summing its calls) is not counted again, nor
is an ``invoke_agent`` span beside calls with usage of its parent that start within its time
(Microsoft Agent Framework's, which sums them).
A call span that names no model runs the one the nearest span above it names (those names, then
Codex's plain ``model``: its ``handle_responses`` spans carry the usage only, its ``turn`` and
sampling-request spans above them the model), else ``unknown``, said in a note.
Each conversation (``gen_ai.conversation.id``, else ``session.id``, of the span or a span above it
(a Codex service's: also its ``turn`` span's ``thread.id``), else of its resource; else its trace
id) is a lane, its calls a chain in start order; the file's
agent (:attr:`FileSummary.agent`, what the advice names) is its resource's ``service.name``, else
``gen_ai.agent.name``; who served a call comes from its model name, else ``gen_ai.provider.name`` /
``gen_ai.system`` (then ``llm.provider`` / ``llm.system``).

Coding agents' own per-call events (Claude Code's ``claude_code.api_request``, Codex's
``codex.sse_event``, Gemini CLI's and Qwen Code's ``api_response``) and Claude Code's
``claude_code.llm_request`` spans are calls too, read each agent's way: see :mod:`.otel_agents`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Iterator
from decimal import Decimal
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import cost_total, format_usd
from prefixbench.simulator.providers import OPENAI, UNKNOWN, hosted_provider, provider_named_in, provider_of_model, rules_for, writes_unreported
from prefixbench.simulator.providers.base import count, subset_usage
from prefixbench.simulator.providers.hosts import agent_relay, azure_service, billing_host, codex_azure
from prefixbench.simulator.providers.vllm import self_hosted_upstream
from prefixbench.simulator.usage import Usage
from prefixbench.simulator.price_lookup import Prices
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import MAX_EPOCH_MS, as_dict, logged_dollars, objects, parse_time_ms
from prefixbench.workloads.logs.formats.otel_agents import AGENTS, CODEX_PROVIDER, AgentEvent, agent_event, agent_span, error_event, is_codex_start
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Prefix, TraceRequest

NAME = "otel"
INPUT_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.usage.prompt_tokens", "llm.token_count.prompt")
OUTPUT_KEYS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.usage.completion_tokens", "llm.token_count.completion")
#: Reads and writes: the conventions' names (writes: ``cache_write.input_tokens`` since
#: semantic-conventions-genai#440, August 2026, ``cache_creation.input_tokens`` before), OpenLLMetry's,
#: then what other instrumentations write (OpenClaw's ``cache_*_tokens``, pydantic-ai's ``details.*``
#: before it wrote the conventions' names, OpenInference's ``llm.token_count.prompt_details.*``,
#: Sentry's ``input_tokens.cached`` / ``.cache_write``, the Vercel AI SDK's ``ai.usage.*``).
#: OpenInference's ``prompt_details.cache_input`` is not one: its LiteLLM instrumentor puts the
#: uncached text tokens there; nor are the conventions' per-modality parts (``text.cache_read...``).
READ_KEYS = (
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "gen_ai.usage.cache_read_tokens",
    "gen_ai.usage.details.cache_read_tokens",
    "gen_ai.usage.details.cache_read_input_tokens",
    "llm.token_count.prompt_details.cache_read",
    "gen_ai.usage.input_tokens.cached",
    "ai.usage.inputTokenDetails.cacheReadTokens",
    "ai.usage.cachedInputTokens",
)
WRITE_KEYS = (
    "gen_ai.usage.cache_write.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
    "gen_ai.usage.cache_write_tokens",
    "gen_ai.usage.details.cache_write_tokens",
    "gen_ai.usage.details.cache_creation_input_tokens",
    "llm.token_count.prompt_details.cache_write",
    "gen_ai.usage.input_tokens.cache_write",
    "ai.usage.inputTokenDetails.cacheWriteTokens",
)
#: Who served a call where its model names no provider: the conventions' names, then
#: OpenInference's (``llm.provider`` the host, ``llm.system`` the model's maker).
PROVIDER_KEYS = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
#: The conversation a call belongs to: the conventions' name, then OpenInference's.
CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id")
#: A Codex service's conversation: also its ``turn`` span's ``thread.id`` (openai/codex
#: codex-rs/core; each turn is a trace of its own, its calls under it), read for a Codex
#: service's spans only (the general conventions' ``thread.id`` is an OS thread's number).
CODEX_CONVERSATION_KEYS = (*CONVERSATION_KEYS, "thread.id")
#: The agent a call's spans name where the resource names no service (the conventions' name).
AGENT_NAME_KEYS = ("gen_ai.agent.name",)
#: ``service.name`` prefixes of coding agents whose own logs have a format (their settings then
#: apply), as each agent's source sets it:
#: Claude Code's ``claude-code`` (https://code.claude.com/docs/en/monitoring-usage);
#: Codex's originator (openai/codex codex-rs/core/src/otel_init.rs: ``service_name:
#: originator().value``), which codex-rs/core/src/default_client.rs defaults to ``codex_cli_rs``,
#: ``codex exec`` sets to ``codex_exec`` (codex-rs/exec/src/lib.rs) and an app-server client to its
#: own name (first-party: ``codex-tui``, ``codex_vscode``, ``Codex <product>``; matched without
#: case); Gemini CLI's ``gemini-cli`` (``SERVICE_NAME``, packages/core/src/telemetry/constants.ts of
#: google-gemini/gemini-cli). Qwen Code's ``qwen-code`` (the same constant in QwenLM/qwen-code) has
#: no format of its own here (its sessions are read as Gemini CLI's): the name itself.
SERVICE_FORMATS = (("claude-code", "claude-code"), ("codex", "codex"), ("gemini-cli", "gemini-cli"))
#: The log format of an agent whose own events :mod:`.otel_agents` reads (others: its name).
AGENT_FORMATS = {"Claude Code": "claude-code", "Codex": "codex", "Gemini CLI": "gemini-cli"}
#: The key spellings of OTLP's JSON (camelCase) and of protobuf's field names (snake_case).
_RESOURCE_SPANS = ("resourceSpans", "resource_spans")
_SCOPE_SPANS = ("scopeSpans", "scope_spans", "instrumentationLibrarySpans", "instrumentation_library_spans")


def _first(value: dict, keys: tuple[str, ...]) -> object:
    for key in keys:
        if key in value:
            return value[key]
    return None


def _named(value: dict, keys: tuple[str, ...]) -> str:
    """The one of ``keys`` ``value`` has (as :func:`_first` reads it), for a path; else the first."""
    return next((key for key in keys if key in value), keys[0])


def _resource_spans(value: dict) -> bool:
    """One ``ResourceSpans`` on its own, not inside an export's ``resourceSpans`` list: what
    GitHub Copilot CLI's file exporter writes (``COPILOT_OTEL_FILE_EXPORTER_PATH``), one
    pretty-printed after another."""
    return isinstance(_first(value, _SCOPE_SPANS), list) and isinstance(value.get("resource", {}), dict)


_RESOURCE_LOGS = ("resourceLogs", "resource_logs")
_SCOPE_LOGS = ("scopeLogs", "scope_logs")
_LOG_RECORDS = ("logRecords", "log_records")
#: The conventions' event for one inference: a log record of it is one call.
INFERENCE_EVENT = "gen_ai.client.inference.operation.details"


def _resource_logs(value: dict) -> bool:
    """An OTLP logs export (``resourceLogs``) or one ``ResourceLogs`` of it."""
    return isinstance(_first(value, _RESOURCE_LOGS), list) or (
        isinstance(_first(value, _SCOPE_LOGS), list) and isinstance(value.get("resource", {}), dict))


def _sdk_log_record(value: dict) -> bool:
    """A log record as the JavaScript SDK holds it, serialized whole: ``hrTime`` ([s, ns]) and
    ``attributes`` as an object, beside ``instrumentationScope``."""
    return isinstance(value.get("hrTime"), list) and isinstance(value.get("attributes"), dict) and "instrumentationScope" in value


def _not_a_call(value: dict) -> bool:
    """A record of a telemetry file that holds no call: an empty object, or the JavaScript SDK's
    metrics (``{resource, scopeMetrics}``) between the log records."""
    return not value or (isinstance(value.get("scopeMetrics"), list) and "resource" in value)


def _js_span(value: dict) -> bool:
    """A span as the JavaScript SDK holds it, serialized whole (``_spanContext``, ``startTime`` as
    [s, ns]): what Gemini CLI's ``--telemetry-outfile`` writes beside its log records and metrics."""
    return isinstance(value.get("_spanContext"), dict) and isinstance(value.get("startTime"), list) and (
        "instrumentationScope" in value or "instrumentationLibrary" in value)


#: The keys one of the shapes :func:`detect` claims has (a record with none is turned away first:
#: every one of a file's first lines meets this detector).
_DETECT_KEYS = frozenset((*_RESOURCE_SPANS, *_SCOPE_SPANS, *_RESOURCE_LOGS, *_SCOPE_LOGS, "context", "hrTime"))


def detect(value: dict) -> Evidence | None:
    """An OTLP trace or logs export (``resourceSpans``, ``resourceLogs``), one resource of it, one
    span as the Python SDK writes it, or one log record as the JavaScript SDK holds it."""
    if value.keys().isdisjoint(_DETECT_KEYS):
        return None
    if isinstance(_first(value, _RESOURCE_SPANS), list) or _resource_spans(value) or _resource_logs(value):
        return Evidence.WRAPPER
    context = value.get("context")
    if isinstance(context, dict) and "span_id" in context and "trace_id" in context and isinstance(value.get("attributes"), dict):
        return Evidence.SHAPE
    if _sdk_log_record(value):
        return Evidence.SHAPE
    return None


class Span(msgspec.Struct):
    """One span, whatever the export it came from."""

    line: int
    trace_id: str
    span_id: str
    parent_id: str
    start_ms: int | None
    end_ms: int | None
    attributes: dict
    #: A log record's event name ("" for a span): only the inference event's record is a call.
    event: str | None = None
    #: The ``service.name`` of its resource ("" where none is named): who emitted it.
    service: str = ""
    #: A log record's body (an agent's event names itself there) and its resource's ``session.id``.
    body: object = None
    session: str = ""
    #: Where in its line's record it is (``resourceSpans[0].scopeSpans[1].spans[3]``; a record
    #: sharing its line: :attr:`Record.path`), so that file:line tells apart the calls of one
    #: export; "" where it has the line to itself.
    path: str = ""
    #: A span's name (``claude_code.llm_request``); "" for a log record or a span without one.
    name: str = ""


def _any_value(value: object) -> object:
    """An OTLP ``AnyValue`` as a plain value (int64 values come as strings)."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "string_value", "boolValue", "bool_value", "doubleValue", "double_value"):
        if key in value:
            return value[key]
    for key in ("intValue", "int_value"):
        if key in value:
            raw = value[key]
            return int(raw) if isinstance(raw, str) and raw.isascii() and raw.lstrip("-").isdigit() and len(raw) < 20 else raw
    array = as_dict(_first(value, ("arrayValue", "array_value"))).get("values")
    if isinstance(array, list):
        return [_any_value(v) for v in array]
    return None


def _listed(value: object) -> list | tuple:
    """``value`` when it is a list, else nothing (a wrapper's list that is not one holds no span,
    as an entry that is not an object is none)."""
    return value if isinstance(value, list) else ()


def _attributes(raw: object) -> dict:
    """OTLP's ``[{key, value}]`` list (or an SDK's plain object) as one dict."""
    if isinstance(raw, dict):
        return raw
    out: dict = {}
    for item in _listed(raw):
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = _any_value(item.get("value"))
    return out


def _nanos(value: object, where: str) -> int | None:
    """Epoch nanoseconds (a number, or a string of digits) as epoch ms."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 25:
        value = int(value)
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value // 1_000_000 < MAX_EPOCH_MS:
        raise UserError(f"{where}: span time {value!r:.40} is not epoch nanoseconds")
    return value // 1_000_000


def _service(resource: object) -> str:
    """The ``service.name`` a resource names, else ""."""
    return _resource_attribute(resource, "service.name")


def _resource_attribute(resource: object, key: str) -> str:
    """The text attribute ``key`` of a resource (OTLP's attribute list, an SDK's plain object, or
    the JavaScript SDK's ``_rawAttributes`` pairs), else ""."""
    resource = as_dict(resource)
    found = _attributes(resource.get("attributes")).get(key)
    for pair in _listed(resource.get("_rawAttributes")) if found is None else ():
        if isinstance(pair, list) and len(pair) == 2 and pair[0] == key:
            found = pair[1]
    return found if isinstance(found, str) else ""


def _otlp_spans(record: Record, where: str) -> Iterator[Span]:
    value: dict = record.value  # type: ignore[assignment]
    resources = _first(value, _RESOURCE_SPANS)
    at = f"{record.path}." if record.path else ""
    outer = [f"{at}{_named(value, _RESOURCE_SPANS)}[{i}]." for i in range(len(resources))] if isinstance(resources, list) else [at]
    for resource, place in zip(resources if isinstance(resources, list) else (value,), outer):
        service = _service(as_dict(resource).get("resource"))
        session = _resource_session(as_dict(resource).get("resource"))
        scopes = f"{place}{_named(as_dict(resource), _SCOPE_SPANS)}"
        for j, scope in enumerate(_listed(_first(as_dict(resource), _SCOPE_SPANS))):
            for k, span in enumerate(_listed(as_dict(scope).get("spans"))):
                span = as_dict(span)
                yield Span(
                    record.line,
                    str(_first(span, ("traceId", "trace_id")) or ""),
                    str(_first(span, ("spanId", "span_id")) or ""),
                    str(_first(span, ("parentSpanId", "parent_span_id")) or ""),
                    _nanos(_first(span, ("startTimeUnixNano", "start_time_unix_nano")), where),
                    _nanos(_first(span, ("endTimeUnixNano", "end_time_unix_nano")), where),
                    _attributes(span.get("attributes")),
                    service=service,
                    session=session,
                    path=f"{scopes}[{j}].spans[{k}]",
                    name=span["name"] if isinstance(span.get("name"), str) else "",
                )


def _sdk_span(record: Record, where: str) -> Span:
    value: dict = record.value  # type: ignore[assignment]
    context = as_dict(value.get("context"))
    return Span(
        record.line,
        str(context.get("trace_id") or ""),
        str(context.get("span_id") or ""),
        str(value.get("parent_id") or ""),
        parse_time_ms(value.get("start_time"), where),
        parse_time_ms(value.get("end_time"), where),
        as_dict(value.get("attributes")),
        service=_service(value.get("resource")),
        session=_resource_session(value.get("resource")),
        path=record.path,
        name=value["name"] if isinstance(value.get("name"), str) else "",
    )


def _hr_time(value: object, where: str) -> int | None:
    """The JavaScript SDK's ``[seconds, nanoseconds]`` time as epoch ms."""
    if value in (None, [0, 0]):
        return None
    if (not isinstance(value, list) or len(value) != 2 or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
            or not 0 < value[0] < MAX_EPOCH_MS // 1000 or not 0 <= value[1] < 1_000_000_000):
        raise UserError(f"{where}: log record hrTime {value!r:.40} is not [epoch seconds, nanoseconds]")
    return value[0] * 1000 + value[1] // 1_000_000


def _resource_session(resource: object) -> str:
    """The conversation a resource names (``gen_ai.conversation.id``, else ``session.id``), else ""."""
    return next((found for key in CONVERSATION_KEYS if (found := _resource_attribute(resource, key))), "")


def _log_span(line: int, record: dict, resource: object, time_ms: int | None, path: str = "") -> Span:
    """One log record as a call-shaped span: its trace (span context) or, outside any trace, its
    resource's session and model as the lane; its time the call's end; ``path``: where in its
    line it is (:attr:`Span.path`)."""
    attributes = _attributes(record.get("attributes"))
    context = as_dict(record.get("spanContext"))
    trace = str(_first(record, ("traceId", "trace_id")) or context.get("traceId") or "")
    if not trace:
        trace = f"{_resource_session(resource) or 'main'}/{_model(attributes)}"
    event = _first(record, ("eventName", "event_name"))
    event = attributes.get("event.name") if not isinstance(event, str) or not event else event
    body = _any_value(record["body"]) if "body" in record else record.get("_body")
    return Span(line, trace, f"log@{line}", "", None, time_ms, attributes, event if isinstance(event, str) else "", _service(resource),
                body, _resource_session(resource), path)


def _otlp_log_spans(record: Record, where: str) -> Iterator[Span]:
    value: dict = record.value  # type: ignore[assignment]
    resources = _first(value, _RESOURCE_LOGS)
    at = f"{record.path}." if record.path else ""
    outer = [f"{at}{_named(value, _RESOURCE_LOGS)}[{i}]." for i in range(len(resources))] if isinstance(resources, list) else [at]
    for resource, place in zip(resources if isinstance(resources, list) else (value,), outer):
        resource = as_dict(resource)
        scopes = f"{place}{_named(resource, _SCOPE_LOGS)}"
        for j, scope in enumerate(_listed(_first(resource, _SCOPE_LOGS))):
            logs = f"{scopes}[{j}].{_named(as_dict(scope), _LOG_RECORDS)}"
            for k, log in enumerate(_listed(_first(as_dict(scope), _LOG_RECORDS))):
                log = as_dict(log)
                time_ms = _nanos(_first(log, ("timeUnixNano", "time_unix_nano")), where) or _nanos(
                    _first(log, ("observedTimeUnixNano", "observed_time_unix_nano")), where)
                yield _log_span(record.line, log, resource.get("resource"), time_ms, f"{logs}[{k}]")


def _count(attributes: dict, keys: tuple[str, ...], where: str) -> int | None:
    """A usage attribute; a count some exporters send as a string of decimal digits
    (``{"stringValue": "1024"}``) is that count, any other string an error."""
    for key in keys:
        value = attributes.get(key)
        if value is not None:
            if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20:
                value = int(value)
            return count(value, where, key)
    return None


def _at(span: Span) -> int | None:
    """When a call is ordered: its span's start, else (a log record) its end."""
    return span.start_ms if span.start_ms is not None else span.end_ms


def _has_usage(span: Span) -> bool:
    return any(span.attributes.get(key) is not None for key in INPUT_KEYS + OUTPUT_KEYS)


#: The conventions' operation of a span that runs an agent (its calls are spans of their own).
AGENT_OPERATION = "invoke_agent"


def _agents_beside_calls(spans: list[Span]) -> list[tuple[Span, int]]:
    """The ``invoke_agent`` spans with usage that sum the calls beside them, each with how many:
    Microsoft Agent Framework (Python) opens its agent span as a sibling of its ``chat`` spans
    (both under the workflow's executor span) and gives it their summed usage. An agent span is
    such a sum where another span with usage of its trace and parent, not an agent's, starts
    within its time; one with no such call is counted (its calls were not exported)."""
    starts: dict[tuple[str, str], list[int]] = {}
    for span in spans:
        if span.parent_id and span.start_ms is not None and span.attributes.get("gen_ai.operation.name") != AGENT_OPERATION:
            starts.setdefault((span.trace_id, span.parent_id), []).append(span.start_ms)
    for found in starts.values():
        found.sort()
    beside: list[tuple[Span, int]] = []
    for span in spans:
        if span.attributes.get("gen_ai.operation.name") != AGENT_OPERATION or span.start_ms is None or span.end_ms is None:
            continue
        found = starts.get((span.trace_id, span.parent_id), [])
        n = bisect_right(found, span.end_ms) - bisect_left(found, span.start_ms)
        if n:
            beside.append((span, n))
    return beside


#: The model a call ran, current names first, then the ``llm.*`` names of instrumentations older
#: than the GenAI conventions (OpenLLMetry's early releases, promptflow's tracing), which name
#: their usage ``llm.usage.*`` too, then OpenInference's ``llm.model_name``.
MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.response.model", "llm.request.model", "llm.model_name")
#: Where a call span names no model, the spans above it are asked (:func:`_named_up`): these names,
#: then Codex's plain ``model`` (the model's slug on its ``turn``, ``run_sampling_request`` and
#: ``try_run_sampling_request`` spans, openai/codex codex-rs/core; its ``handle_responses`` spans
#: under them carry the usage and no model).
MODEL_KEYS_ABOVE = (*MODEL_KEYS, "model")
#: Codex's span that carries a response's usage (and no model).
CODEX_USAGE_SPAN = "handle_responses"


def _model(attributes: dict) -> str:
    for key in MODEL_KEYS:
        model = attributes.get(key)
        if isinstance(model, str) and model:
            return model
    return NO_MODEL


def _provider(attributes: dict, model: str) -> str:
    """Who served a call: the provider whose model names ``model``, else the span's own name for it."""
    rules = provider_of_model(model.rsplit("/", 1)[-1])
    for key in PROVIDER_KEYS if rules is None else ():
        system = attributes.get(key)
        rules = hosted_provider(system.lower()) if isinstance(system, str) else None
        if rules is not None:
            break
    return rules.name if rules is not None and rules.reports_usage else UNKNOWN.name


def _host(attributes: dict) -> str:
    """The host a span's provider keys name where no model maker bills the call at its list price
    (``gen_ai.provider.name`` ``groq``, ``fireworks``; ``ollama``: :func:`~prefixbench.simulator.providers.hosts.billing_host`),
    kept as the call's upstream, which leaves it unpriced; "" for any other."""
    return next((host for key in PROVIDER_KEYS if isinstance(named := attributes.get(key), str) and (host := billing_host(named))), "")


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The GenAI calls of a span export; see the module doc."""
    name = str(path)
    spans: list[Span] = []
    no_calls = 0
    sdk_spans = 0
    for record in objects(path, records, " (an OTLP export, a span or a log record)"):
        where = f"{name}:{record.line}"
        value: dict = record.value  # type: ignore[assignment]
        kind = detect(value)
        if kind is None and _not_a_call(value):
            no_calls += 1
        elif kind is None and _js_span(value):
            sdk_spans += 1
        elif kind is None:
            raise UserError(f"{where}: neither an OTLP export (resourceSpans or resourceLogs, or a resource's scopeSpans or "
                            "scopeLogs) nor a span (context, attributes) nor a log record (hrTime, attributes)")
        elif _resource_logs(value):
            spans.extend(_otlp_log_spans(record, where))
        elif kind == Evidence.WRAPPER:
            spans.extend(_otlp_spans(record, where))
        elif _sdk_log_record(value):
            spans.append(_log_span(record.line, value, value.get("resource"), _hr_time(value.get("hrTime"), where), record.path))
        else:
            spans.append(_sdk_span(record, where))
    # An agent's own per-call event (Claude Code's, Codex's, Gemini CLI's...) or span (Claude
    # Code's llm_request, traces beta): see otel_agents.
    agents = [(s, a) for s in spans if (a := agent_event(s.event, s.body, s.attributes, s.service) if s.event is not None
                                         else agent_span(s.name, s.attributes)) is not None]
    agent_spans = {id(s) for s, _ in agents if s.event is None}  # not read as the conventions' spans, counted or not
    # A span of a failed request (``success`` false: Claude Code's) is no served call.
    failed_spans = [(s, a) for s, a in agents if _failed_span(s)]
    agents = [(s, a) for s, a in agents if not _failed_span(s)]
    # A service's spans are skipped where it logs its own per-call event too: the same calls.
    logged = {(s.service, a.agent) for s, a in agents if s.event is not None}
    skipped_spans = [(s, a) for s, a in agents if s.event is None and (s.service, a.agent) in logged]
    agents = [(s, a) for s, a in agents if not (s.event is None and (s.service, a.agent) in logged)]
    with_usage = [s for s in spans if _has_usage(s) and id(s) not in agent_spans]
    if not with_usage and not agents:
        raise UserError(f"{name}:1: no span or log record with gen_ai.usage token counts ({len(spans)} read)")
    # A log record of another event than one inference's (an agent's turn) sums its calls.
    skipped = [(s.line, f"{a.agent} span {s.name}: the same call as its service's {a.names[0]} event") for s, a in skipped_spans]
    skipped += [(s.line, f"{a.agent} span {s.name}: a failed request (success false), not served") for s, a in failed_spans]
    skipped += [(s.line, f"log record of {s.event or 'no event'}: not one inference ({INFERENCE_EVENT}), its usage sums calls")
               for s in with_usage if s.event not in (None, INFERENCE_EVENT)]
    with_usage = [s for s in with_usage if s.event in (None, INFERENCE_EVENT)]
    # A service that writes its own per-call event and the conventions' record for each call
    # (Gemini CLI from 0.12) says each call twice; its own event is the one counted: Gemini CLI's
    # record names no cached or thinking tokens (input and candidates counts only). So does a named
    # service that logs its own events and exports its spans with gen_ai.usage too (Codex's
    # handle_responses spans beside its codex.sse_event records, Gemini CLI's generate-content
    # spans, loggingContentGenerator.ts, beside its api_response records: traces and logs in one file).
    agent_services = {s.service for s, _ in agents}
    skipped += [(s.line, f"{INFERENCE_EVENT} record: the same call as its service's own event, which also counts its cached tokens")
                for s in with_usage if s.event == INFERENCE_EVENT and s.service in agent_services]
    skipped += [(s.line, f"span {s.span_id}: the same call as its service's own event ({s.service})")
                for s in with_usage if s.event is None and s.service and s.service in agent_services]
    with_usage = [s for s in with_usage if not ((s.event == INFERENCE_EVENT or (s.event is None and s.service)) and s.service in agent_services)]
    if not with_usage and not agents:
        raise UserError(f"{name}:1: no span or {INFERENCE_EVENT} log record with gen_ai.usage token counts")
    # A span with a usage-carrying descendant sums its calls (invoke_agent): count the calls only.
    parent_of = {(s.trace_id, s.span_id): s.parent_id for s in spans if s.span_id}
    aggregates: set[tuple[str, str]] = set()
    for span in with_usage:
        seen: set[str] = set()
        parent = parent_of.get((span.trace_id, span.span_id), "")
        # (a parent counted before had its ancestors counted then: one walk a chain, not one a span)
        while parent and parent not in seen and (span.trace_id, parent) not in aggregates:
            seen.add(parent)
            aggregates.add((span.trace_id, parent))
            parent = parent_of.get((span.trace_id, parent), "")
    skipped += [(s.line, f"span {s.span_id}: sums the usage of the calls under it") for s in with_usage if (s.trace_id, s.span_id) in aggregates]
    calls = [s for s in with_usage if (s.trace_id, s.span_id) not in aggregates]
    beside = _agents_beside_calls(calls)
    skipped += [(s.line, f"span {s.span_id}: an {AGENT_OPERATION} span that sums the usage of the {n} call span(s) beside it "
                         "(same parent, within its time)") for s, n in beside]
    summed = {id(a) for a, _ in beside}
    calls = [s for s in calls if id(s) not in summed]
    parts = [
        (s, *(_count(s.attributes, keys, f"{name}:{s.line}: span {s.span_id}") for keys in (INPUT_KEYS, OUTPUT_KEYS, READ_KEYS, WRITE_KEYS)))
        for s in calls
    ]
    # input < read + written cannot include them: the instrumentation copied Anthropic's input_tokens.
    additive = any((i or 0) < (r or 0) + (w or 0) for _, i, _, r, w in parts)
    # In start order; a log record, which holds only when its call ended, by that.
    calls_sorted = sorted(parts, key=lambda p: (_at(p[0]) is None, _at(p[0]) or 0, p[0].line))
    # A provider that bills writes apart, a span with no write attribute: where another span of
    # the same emitter (this file's spans of one service.name) names one, it leaves the attribute
    # out when nothing was written (0); where none does, what it wrote is unknown.
    names_writes = {p[0].service for p in parts if p[4] is not None}
    writes_zero: set[str] = set()
    writes_unknown: set[str] = set()
    out: list[TraceRequest] = []
    last_node: dict[str, str] = {}
    not_reported = 0
    by_id = {(s.trace_id, s.span_id): s for s in spans if s.span_id}
    conversations: dict[tuple[str, str], str] = {}
    agent_names: dict[tuple[str, str], str] = {}
    agents_named: Counter[str] = Counter()
    models_above: dict[tuple[str, str], str] = {}
    codex_threads: dict[tuple[str, str], str] = {}
    model_above: list[str] = []
    no_model: list[str] = []
    for span, input_, output, read_, written_ in calls_sorted:
        where = f"{name}:{span.line}: span {span.span_id}"
        read_n, written_n = read_ or 0, written_ or 0
        uncached = (input_ or 0) if additive else (input_ or 0) - read_n - written_n
        if uncached < 0:
            raise UserError(f"{where}: cache reads ({read_n}) and writes ({written_n}) exceed input tokens ({input_})")
        if read_ is None and written_ is None:
            not_reported += 1
        model = _model(span.attributes)
        if model == NO_MODEL:
            model = _named_up(span, MODEL_KEYS_ABOVE, by_id, models_above) or NO_MODEL
            (model_above if model != NO_MODEL else no_model).append(span.name)
        provider = _provider(span.attributes, model)
        writes_reported = not writes_unreported(written_ is not None or span.service in names_writes, provider)
        if writes_unreported(written_ is not None, provider):
            (writes_zero if writes_reported else writes_unknown).add(span.service)
        # Its conversation (the span's or an ancestor's, else its resource's), else its trace; a log
        # record outside a trace has its resource's session and model as its trace (_log_span).
        codex = _service_agent(span.service) == "codex"
        lane = (_named_up(span, CODEX_CONVERSATION_KEYS if codex else CONVERSATION_KEYS, by_id, codex_threads if codex else conversations)
                or (span.session if span.event is None else "") or span.trace_id or "main")
        agents_named[_service_agent(span.service) or _named_up(span, AGENT_NAME_KEYS, by_id, agent_names)] += 1
        node = f"otel:{name}#{span.trace_id}:{span.span_id}:{len(out)}"
        out.append(
            TraceRequest(
                file=name,
                line=span.line,
                path=span.path,
                lane=lane,
                lane_kind="main",
                seq=len(out),
                sent_ms=_at(span),  # a log record's call was sent at the latest when it ended (its only time)
                ready_ms=None,
                done_ms=span.end_ms,  # the span ends with the response: idle counts from here
                provider=provider,
                model=model,
                usage=Usage(cache_read=read_n, cache_write_5m=written_n, uncached=uncached, output=output or 0,
                            cache_reported=read_ is not None or written_ is not None, writes_reported=writes_reported),
                prefix=Prefix(f"otel:{provider}:{model}", node, last_node.get(lane)),
                request_id=str(span.attributes["gen_ai.response.id"]) if isinstance(span.attributes.get("gen_ai.response.id"), str) else None,
                source_format=NAME,
                upstream=_host(span.attributes),
            )
        )
        last_node[lane] = node
    reading = (
        "input_tokens excludes cache reads and writes (the instrumentation copied Anthropic's input_tokens): input = uncached"
        if additive
        else "input_tokens includes cache reads and writes (the semantic conventions): uncached = input - read - written"
    )
    notes = [f"{len(out)} GenAI span(s) with usage: {reading}"] if out else []
    if not_reported:
        notes.append(f"{not_reported} span(s) carry no cache attribute: their cache use is not reported, not zero")
    for service in sorted(writes_zero):
        notes.append(f"{_emitter(service)} names a cache-write attribute on some spans: a span of a provider that bills writes apart "
                     "without one wrote 0")
    for service in sorted(writes_unknown):
        notes.append(f"{_emitter(service)} names no cache-write attribute on any span: what its calls to a provider that bills writes "
                     "apart wrote is unknown, their whole prompt is what the next call may read")
    if model_above:
        notes.append(f"{len(model_above)} call span(s) name no model: each runs the model named by a span above them "
                     f"({_span_kinds(model_above)}; Codex names it on the turn and sampling-request spans above its handle_responses)")
    if no_model:
        why = (f"Codex's {CODEX_USAGE_SPAN} spans carry the usage only, the turn and sampling-request spans above them name the model: "
               "export those too" if CODEX_USAGE_SPAN in no_model else "the spans above them name none either")
        notes.append(f"{len(no_model)} call span(s) ({_span_kinds(no_model)}) name no model, nor does any span above them in this file: "
                     f"model {NO_MODEL}, unpriced ({why}, or name it with --assume-model)")
    if out:
        notes.append("spans carry no prompt bodies here: each trace is read as a chain of calls in start order")
    agent_out, agent_skipped, agent_notes, counted = _agent_calls(name, agents, spans, len(out), ctx)
    for agent, n in counted.items():
        agents_named[AGENT_FORMATS.get(agent, agent)] += n
    out += agent_out
    skipped += agent_skipped
    notes += agent_notes
    if no_calls:
        notes.append(f"{no_calls} record(s) hold no call (empty objects, metrics)")
    if sdk_spans:
        notes.append(f"{sdk_spans} span(s) as the JavaScript SDK holds them (Gemini CLI's --telemetry-outfile writes them beside its log "
                     "records): not read, the log records are the calls")
    named = sorted(((n, agent) for agent, n in agents_named.items() if agent), key=lambda item: (-item[0], item[1]))
    if len(named) > 1:
        notes.append("calls of several agents (" + ", ".join(f"{agent} x{n:,}" for n, agent in named) + f"): the file's advice is {named[0][1]}'s")
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(notes), agent=named[0][1] if named else "")


def _named_up(span: Span, keys: tuple[str, ...], by_id: dict[tuple[str, str], Span], known: dict[tuple[str, str], str]) -> str:
    """The first of ``keys`` a span names as text, else what its nearest ancestor of its trace
    names (the conventions put ``gen_ai.agent.name`` and often ``gen_ai.conversation.id`` on the
    ``invoke_agent`` span above the calls), else "". ``known``: each ancestor's answer found so
    far (the calls under one deep chain of spans walk it once, not once each)."""
    found = _span_names(span, keys)
    if found or not span.parent_id:
        return found
    seen = {span.span_id}
    walked: list[tuple[str, str]] = []
    at = by_id.get((span.trace_id, span.parent_id))
    while at is not None and at.span_id not in seen:
        place = (at.trace_id, at.span_id)
        if place in known:
            found = known[place]
            break
        seen.add(at.span_id)
        walked.append(place)
        found = _span_names(at, keys)
        if found:
            break
        at = by_id.get((at.trace_id, at.parent_id)) if at.parent_id else None
    for place in walked:  # (each of them has the same nearest name above it, or none)
        known[place] = found
    return found


def _span_kinds(names: list[str]) -> str:
    """The span names of some calls, most frequent first, for a note."""
    return ", ".join(f"{name or 'unnamed'} x{n}" for name, n in Counter(names).most_common())


def _span_names(span: Span, keys: tuple[str, ...]) -> str:
    """The first of ``keys`` a span names as text, else ""."""
    return next((v for k in keys if isinstance(v := span.attributes.get(k), str) and v), "")


def _service_agent(service: str) -> str:
    """The agent a ``service.name`` names: a coding agent's log format where it is one of theirs
    (:data:`SERVICE_FORMATS`), else the name itself; "" for none (the SDK's ``unknown_service``)."""
    if not service or service.startswith("unknown_service"):
        return ""
    lowered = service.lower()
    return next((fmt for prefix, fmt in SERVICE_FORMATS if lowered.startswith(prefix)), service)


def _agent_count(span: Span, key: str, where: str) -> int | None:
    return _count(span.attributes, (key,), where) if key else None


def _duration_ms(value: object) -> int | None:
    """A call's ``duration_ms`` (a count, or its digits as text: Codex writes it with ``%``), else None."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 16:
        return int(value)
    if isinstance(value, float) and 0 <= value < 1e15:
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**15 else None


#: The room between a call's own cost and what its counts cost at the price table's row (the
#: agent's table may round a price, or price a model a little apart): 1% of the logged cost.
COST_ROOM = Decimal("0.01")


class _OwnCosts:
    """An agent's own per-call costs (Claude Code's ``cost_usd``), summed and checked against the
    price table: what the calls it prices cost there, how many fit, which do not, and the cost of
    the calls it cannot price."""

    def __init__(self) -> None:
        self.total = Decimal(0)
        self.calls = 0
        #: Of the calls the table prices: their own costs, and their costs at the table's rows.
        self.priced = 0
        self.priced_own = Decimal(0)
        self.priced_listed = Decimal(0)
        self.fit = 0
        #: (where, logged, listed) of the priced calls whose cost is not the listed one: the line,
        #: and where in its record when one record holds several calls (an OTLP export's line).
        self.off: list[tuple[str, Decimal, Decimal]] = []
        #: The rows the audit bills at (the row in force when each call was sent).
        self.prices = Prices(None)

    def add(self, where: str, logged: object, model: str, sent_ms: int | None, usage: Usage) -> None:
        """Count one call's own cost (:func:`.common.logged_dollars`: any other value is not read)."""
        dollars = logged_dollars(logged)
        if dollars is None:
            return
        own = Decimal(repr(dollars))
        self.total += own
        self.calls += 1
        row = self.prices.row(model, sent_ms)
        if row is None:
            return
        listed = cost_total(usage, row)
        self.priced += 1
        self.priced_own += own
        self.priced_listed += listed
        if abs(own - listed) <= COST_ROOM * own:
            self.fit += 1
        else:
            self.off.append((where, own, listed))

    def note(self, agent: AgentEvent) -> str:
        said = f"{agent.agent}'s own {agent.cost} fields sum to {format_usd(self.total)} (a check on the dollars here)"
        if self.priced:
            said += (f": on the {self.priced} call(s) the price table prices, {format_usd(self.priced_own)} logged against "
                     f"{format_usd(self.priced_listed)} at the table's rows in force, {self.fit} of them within {COST_ROOM:.0%}")
        if self.off:
            shown = "; ".join(f"line {where}: {format_usd(own)} logged, {format_usd(listed)} listed" for where, own, listed in self.off[:3])
            said += (f"; {len(self.off)} not ({shown}{'; ...' if len(self.off) > 3 else ''}): the agent priced them otherwise "
                     "(another rate, fast mode, a gateway's price) or counted them otherwise")
        if self.calls > self.priced:
            said += (f"; {self.calls - self.priced} call(s) of a model the table does not price, "
                     f"{format_usd(self.total - self.priced_own)} logged (in no dollar figure here)")
        return said


def _failed_span(span: Span) -> bool:
    """Whether an agent's span is of a failed request (``success`` false: Claude Code's
    ``claude_code.llm_request``): no served call."""
    return span.event is None and str(span.attributes.get("success", "")).lower() == "false"


#: Paired with an agent's name and a request id in :attr:`ImportContext.counted_ids`: a call of
#: an agent's own event or span counted from an OpenTelemetry export (a pair no transcript's
#: request id equals), asked of the files after it.
OTEL_CALL = "otel call: "


def _agent_calls(name: str, agents: list[tuple[Span, AgentEvent]], spans: list[Span],
                 seq: int, ctx: ImportContext) -> tuple[list[TraceRequest], list[tuple[int, str]], list[str], dict[str, int]]:
    """The calls of agents' own per-call events (:mod:`.otel_agents`): each session's calls of one
    model a chain in send order, its usage read the agent's way."""
    skipped: list[tuple[int, str]] = []
    codex_providers = {str(s.attributes.get("conversation.id")): s.attributes[CODEX_PROVIDER] for s in spans
                       if s.event is not None and is_codex_start(s.event, s.body, s.attributes) and isinstance(s.attributes.get(CODEX_PROVIDER), str)}
    failed: dict[str, int] = {}
    for s in spans:
        agent = error_event(s.event, s.body, s.attributes) if s.event is not None else None
        if agent is not None:
            failed[agent] = failed.get(agent, 0) + 1
    calls = []
    for span, agent in agents:
        where = f"{name}:{span.line}: {agent.agent} {'event' if span.event is not None else 'span'}"
        done = span.end_ms if span.end_ms is not None else parse_time_ms(span.attributes.get("event.timestamp"), where)
        duration = _duration_ms(span.attributes.get("duration_ms"))
        sent = done - duration if done is not None and duration is not None and duration <= done else done
        if span.event is None and span.start_ms is not None:
            sent = span.start_ms  # a span holds when it started
        calls.append((span, agent, where, sent, done))
    calls.sort(key=lambda c: (c[3] is None, c[3] or 0, c[0].line))
    # An export sent twice (a collector's retry) repeats a call's event: its request id says so.
    # So does another file of the export, where its signals are written apart (Claude Code's
    # llm_request span in the traces' file, its api_request event in the logs'): counted once,
    # by the file read first (:data:`OTEL_CALL` marks its key among the counted request ids).
    seen: set[str] = set()
    kept = []
    for call in calls:
        request_id = call[0].attributes.get("request_id")
        if isinstance(request_id, str) and request_id:
            if request_id in seen:
                skipped.append((call[0].line, f"{call[1].agent} event: repeats request {request_id}'s (an export sent twice)"))
                continue
            if (OTEL_CALL, f"{call[1].agent}:{request_id}") in ctx.counted_ids:
                skipped.append((call[0].line, f"{call[1].agent} {'event' if call[0].event is not None else 'span'}: request "
                                f"{request_id} already counted from another file of the export (its traces and logs written "
                                "apart, or an export sent twice)"))
                continue
            seen.add(request_id)
        kept.append(call)
    for call in kept:
        if isinstance(request_id := call[0].attributes.get("request_id"), str) and request_id:
            ctx.counted_ids.add((OTEL_CALL, f"{call[1].agent}:{request_id}"))
    calls = kept
    out: list[TraceRequest] = []
    last_node: dict[str, str] = {}
    counted: dict[str, int] = {}
    from_spans: dict[str, int] = {}
    own_costs: dict[str, _OwnCosts] = {}
    for span, agent, where, sent, done in calls:
        input_, output, read_, written_ = (_agent_count(span, key, where) for key in (agent.input, agent.output, agent.read, agent.write))
        extra_in, extra_out = _agent_count(span, agent.extra_input, where) or 0, _agent_count(span, agent.extra_output, where) or 0
        model = next((m for m in (span.attributes.get("model"),) if isinstance(m, str) and m), NO_MODEL)
        session = next((v for k in agent.session_keys if isinstance(v := span.attributes.get(k), str) and v), span.session or "main")
        rules = provider_of_model(model.rsplit("/", 1)[-1])
        host = relay = service = ""
        if session in codex_providers and agent.kind:
            # The conversation's configured provider ("OpenAI" for Codex's own), read as a rollout's
            # model_provider is (codex.py): a host running open models itself is not OpenAI's.
            named = codex_providers[session]
            rules = UNKNOWN if self_hosted_upstream(named, oss=True) else provider_named_in(named.lower())
            host = billing_host(named, oss=True)  # (no maker bills it at its list price: unpriced)
            relay = agent_relay(named, OPENAI.name)  # (a relay of the user's: named, the maker's rules kept)
            # (Azure OpenAI: OpenAI's rules, the service named; only calls read as OpenAI's)
            service = azure_service(name=named) if rules.name == OPENAI.name and codex_azure(named) else ""
        elif rules is None or not rules.reports_usage:
            rules = agent.default
        provider = rules.name if rules.reports_usage else UNKNOWN.name
        reported = read_ is not None or written_ is not None
        writes_reported = not writes_unreported(written_ is not None, provider)
        if agent.convention == "additive":
            long = _agent_count(span, agent.write_1h, where) or 0
            if long > (written_ or 0):
                raise UserError(f"{where}: {agent.write_1h} ({long}) exceeds {agent.write} ({written_ or 0})")
            usage = Usage(cache_read=read_ or 0, cache_write_5m=(written_ or 0) - long, cache_write_1h=long, uncached=(input_ or 0) + extra_in, output=(output or 0) + extra_out,
                          cache_reported=reported, writes_reported=writes_reported,
                          speed="fast" if agent.speed and span.attributes.get(agent.speed) == "fast" else "")
        else:
            also = f" and {agent.write} ({written_})" if written_ else ""
            usage = subset_usage(input_ or 0, read_ or 0, written_ or 0, (output or 0) + extra_out, reported=reported,
                                 excess=f"{where}: {agent.read} ({read_ or 0}){also} exceed {agent.input} ({input_ or 0})")
            usage = msgspec.structs.replace(usage, uncached=usage.uncached + extra_in, writes_reported=writes_reported)
        lane = f"{session}/{model}"
        node = f"otel:{name}#{lane}:{span.line}:{seq + len(out)}"
        request_id = span.attributes.get("request_id")
        out.append(TraceRequest(
            file=name, line=span.line, path=span.path, lane=lane, lane_kind="main", seq=seq + len(out), sent_ms=sent, ready_ms=None, done_ms=done,
            provider=provider, model=model, upstream=host, relay=relay, service=service,
            usage=usage,
            prefix=Prefix(f"otel:{provider}:{model}", node, last_node.get(lane)),
            request_id=request_id if isinstance(request_id, str) and request_id else None, source_format=NAME,
        ))
        last_node[lane] = node
        counted[agent.agent] = counted.get(agent.agent, 0) + 1
        if span.event is None:
            from_spans[agent.agent] = from_spans.get(agent.agent, 0) + 1
        if agent.cost and span.attributes.get(agent.cost) is not None:
            where = f"{span.line} {span.path}" if span.path else str(span.line)
            own_costs.setdefault(agent.agent, _OwnCosts()).add(where, span.attributes[agent.cost], model, sent, usage)
    notes = [f"{n} {agent.agent} call(s) ({_sources(agent, n, from_spans.get(agent.agent, 0))}): {agent.reading()}"
             for agent in AGENTS if (n := counted.get(agent.agent))]
    notes += [own.note(agent) for agent in AGENTS if (own := own_costs.get(agent.agent)) is not None and own.calls]
    if out:
        spans = sum(from_spans.values())
        when = ("a span's start" if spans == len(out) else "the record's time less its duration_ms where given"
                + ("; a span's start" if spans else ""))
        notes.append(f"agent events carry no prompt bodies: each session's calls of one model are read as a chain in send order ({when})")
    notes += [f"{n} {agent} failed call(s) (api_error events): no usage, not counted" for agent, n in sorted(failed.items())]
    return out, skipped, notes, counted


def _sources(agent: AgentEvent, calls: int, spans: int) -> str:
    """What an agent's calls were read from: its events, its spans (Claude Code's traces), or both."""
    if not spans:
        return f"{agent.names[0]} events"
    if spans == calls:
        return f"{agent.span_names[0]} spans"
    return f"{calls - spans} {agent.names[0]} events, {spans} {agent.span_names[0]} spans"


def _emitter(service: str) -> str:
    return f"service {service!r}" if service else "the file (no service.name)"


FORMAT = LogFormat(
    name=NAME,
    noun="OpenTelemetry span export",
    nouns="OpenTelemetry span exports",
    description="OpenTelemetry GenAI spans and inference log records: OTLP JSON exports (resourceSpans, resourceLogs), the Python SDK's "
    "span JSON or the JavaScript SDK's log records, gen_ai.usage.* attributes; Claude Code's, Codex's, Gemini CLI's and Qwen Code's "
    "own per-call events",
    detect=detect,
    read=read,
    usage="by-endpoint",
    versions=(
        "OTLP JSON: resourceSpans / scopeSpans, typed attribute values (intValue as a string); instrumentationLibrarySpans (before OTLP 0.15); snake_case keys",
        "bare ResourceSpans objects ({resource, scopeSpans}) one after another, pretty-printed (GitHub Copilot CLI's file exporter)",
        "log records: OTLP resourceLogs / scopeLogs / logRecords, and the JavaScript SDK's serialized log records (hrTime, "
        "attributes, spanContext) between metrics (GitHub Copilot Chat's file exporter, 0.41): "
        "gen_ai.client.inference.operation.details events are the calls",
        "the Python SDK's span JSON (ConsoleSpanExporter): context.trace_id / span_id, attributes as an object",
        "semantic conventions: gen_ai.usage.input_tokens / output_tokens, cache_read.input_tokens, cache_write.input_tokens "
        "(semantic-conventions-genai#440, August 2026; cache_creation.input_tokens before); deprecated prompt_tokens / completion_tokens",
        "OpenLLMetry: gen_ai.usage.cache_read_input_tokens / cache_creation_input_tokens, llm.usage.*",
        "llm.response.model / llm.request.model beside llm.usage.* (early OpenLLMetry; promptflow's tracing, 2024)",
        "OpenInference (Arize, Phoenix): llm.token_count.prompt / completion, prompt_details.cache_read / cache_write (2025 on), "
        "llm.model_name, llm.provider / llm.system, session.id",
        "pydantic-ai (Logfire) before April 2026: gen_ai.usage.details.cache_read_tokens / cache_write_tokens "
        "(and an Anthropic call's details.cache_read_input_tokens / cache_creation_input_tokens)",
        "Sentry's gen_ai.usage.input_tokens.cached / .cache_write; the Vercel AI SDK's ai.usage.cachedInputTokens (v5) and "
        "ai.usage.inputTokenDetails.cacheReadTokens / cacheWriteTokens (v6)",
        "input_tokens with reads and writes (the conventions) or without them (instrumentations copying Anthropic's input_tokens), decided per file",
        "Claude Code's claude_code.api_request events (1.0 on; prompt.id, event.sequence, request_id in 2.x): input_tokens, "
        "cache_read_tokens, cache_creation_tokens, additive; its traces' claude_code.llm_request spans (beta, 2.1.x; speed), "
        "read where its service logs no api_request event",
        "Codex's codex.sse_event response.completed events: input/output/cached_token_count as numbers (OtelEventManager, 0.4x) "
        "or as text (SessionTelemetry), later cache_write_token_count, subset; codex.conversation_starts' provider_name; "
        "its handle_responses spans' gen_ai.usage.* (the same calls: skipped beside its events; traces-only: the model of the "
        "turn / sampling-request spans above them, one lane a turn span's thread.id)",
        "Gemini CLI's gemini_cli.api_response (and api_error) events, beside the conventions' record from 0.12 (counted once, from its own event); "
        "Qwen Code's qwen-code.api_response (qwen_code., qwen_cli. in early releases)",
    ),
    aliases=("otlp",),
)
