"""LiteLLM proxy spend logs: the ``LiteLLM_SpendLogs`` rows, as ``/spend/logs`` returns them (a JSON
array), as the paginated ``/spend/logs/ui`` and ``/spend/logs/v2`` return them (``{data: [rows],
total, page, page_size, total_pages}``, newest first) or exported one row a line; and the ``StandardLoggingPayload`` LiteLLM hands every logging
callback (what the S3, GCS and generic loggers write), one call each the same way.

A row is one call through the proxy: ``request_id``, ``call_type``, ``model``,
``custom_llm_provider``, ``prompt_tokens`` / ``completion_tokens``, ``startTime`` /
``completionStartTime`` / ``endTime``, ``status``, ``cache_hit``, ``session_id`` and ``metadata``
(an object, or a JSON string in the logged payload). Where the cache counts are:

* ``metadata.usage_object`` (newer proxies): the whole LiteLLM usage;
* the logged ``response``'s ``usage`` (a row or payload that stored the response);
* ``metadata.additional_usage_values`` (from late 2024): the provider-specific part
  (``cache_read_input_tokens``, ``cache_creation_input_tokens``, ``prompt_tokens_details``),
  beside the row's ``prompt_tokens``;
* none of them (older rows): the cache use is not reported.

The usage is LiteLLM's (:mod:`.gateway_usage`), read per file the same way as a trajectory's.
A row served from LiteLLM's own response cache (``cache_hit``) never reached a provider, and a
failed row was not served: both are skipped and listed. With ``store_prompts_in_spend_logs`` the
row keeps the messages sent (``proxy_server_request`` or ``messages``): they become the body.
Rows of one ``session_id`` are a lane and a chain; a row without one is a lane and a chain of its
own, named by its request id (a proxy mixes conversations, and nothing in the row links it to
another: no model switch is seen between two such rows). A row routed to an
engine the user runs (``hosted_vllm``, ``ollama_chat``...: :func:`.gateway_usage.served_by`) is
provider unknown and unpriced, the engine its upstream.

A ``StandardLoggingPayload`` (``litellm/types/utils.py``) differs from a row in its names and
types: ``id`` (no ``request_id``), ``trace_id`` (the proxy stores it as the row's ``session_id``:
here the lane), times in epoch seconds, a boolean ``cache_hit``, ``metadata`` an object. Payloads
older than ``metadata.usage_object`` keep the usage in the ``response`` they logged (with message
logging on); a spend-log row's stored ``response`` is read the same way.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import ANTHROPIC, OPENAI
from prefixbench.simulator.providers.hosts import azure_service
from prefixbench.simulator.wire import Request
from prefixbench.workloads.logs.chat_completions import LineError, parse_request
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, objects, own_lane, parse_time_ms, refuse_lone_surrogates
from prefixbench.workloads.logs.reading import loads
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Prefix, TraceRequest

NAME = "litellm"
#: Where a Vertex AI endpoint URL names its location (``.../locations/us-east5/...``, or the
#: regional host ``us-east5-aiplatform.googleapis.com``).
_VERTEX_LOCATION = re.compile(r"/locations/([A-Za-z0-9-]+)|^https?://([a-z0-9-]+)-aiplatform\.googleapis\.com")
#: Call types that are not a chat call (no prompt to cache).
_OTHER_CALLS = ("embedding", "image", "moderation", "transcription", "speech", "rerank", "file", "batch")


#: The keys of a spend-log row, and of a StandardLoggingPayload, that say it is one.
_ROW_KEYS = frozenset(("request_id", "call_type", "startTime"))
_PAYLOAD_KEYS = frozenset(("id", "trace_id", "call_type", "startTime"))


#: The keys of a page of the paginated endpoints (``/spend/logs/ui``, ``/spend/logs/v2``) beside its ``data``.
_PAGE_KEYS = frozenset(("total_pages", "page_size"))


def _is_row(value: object) -> bool:
    return isinstance(value, dict) and (_ROW_KEYS <= value.keys() or _PAYLOAD_KEYS <= value.keys())


def _is_page(value: dict) -> bool:
    """A page of ``/spend/logs/ui`` or ``/spend/logs/v2`` (the Admin UI's logs):
    ``{data: [rows], total, page, page_size, total_pages}``."""
    data = value.get("data")
    return isinstance(data, list) and _PAGE_KEYS <= value.keys() and all(_is_row(row) for row in data[:5])


def detect(value: dict) -> Evidence | None:
    """A spend-log row (a request id, a call type and a start time) or a StandardLoggingPayload
    (an id, a trace id, a call type and a start time), or a page of rows."""
    if _is_page(value):
        return Evidence.WRAPPER
    return Evidence.SHAPE if _is_row(value) else None


def _rows_of(record: Record, where: str) -> list[tuple[dict, str]]:
    """The rows a record holds, with where each is on its line: itself, or a page's ``data``."""
    value: dict = record.value  # type: ignore[assignment]
    if not _is_page(value):
        return [(value, record.path)]
    at = f"{record.path}." if record.path else ""
    rows = []
    for i, row in enumerate(value["data"]):
        if not _is_row(row):
            raise UserError(f"{where}: data[{i}] of a spend-logs page is not a spend-log row (request_id, call_type, startTime)")
        rows.append((row, f"{at}data[{i}]"))
    return rows


def _json_field(value: object, where: str, key: str) -> object:
    """A field the proxy may log as a JSON string."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        return loads(value, f"{where}: {key}")
    return value


def _logged_response(value: object, where: str) -> dict:
    """The response a row or payload logged (an object, or a JSON string of one); {} where it kept
    none or something else (a redaction note): it is only a second source of the usage."""
    try:
        return as_dict(_json_field(value, where, "response"))
    except UserError:
        return {}


def _upstream(row: dict, where: str) -> str:
    """The upstream a gateway says served the row's call: the logged response's ``provider``
    (OpenRouter's, which LiteLLM keeps in the response); "" where it logged none."""
    value = row.get("response")
    if isinstance(value, str) and '"provider"' not in value:
        return ""
    return gateway_usage.upstream_of(_logged_response(value, where))


class _Row(msgspec.Struct):
    record: Record
    usage: dict
    reported: bool
    #: The row (the record itself, or one of a page's ``data``) and where on its line it is.
    value: dict
    path: str


def _usage_of(row: dict, metadata: dict, where: str) -> tuple[dict, bool]:
    """The row's LiteLLM usage, and whether it says anything of the cache."""
    usage = metadata.get("usage_object")
    if not isinstance(usage, dict) or not usage:
        usage = as_dict(_logged_response(row.get("response"), where).get("usage"))
    if usage:
        merged = dict(usage)
    else:
        merged = {"prompt_tokens": row.get("prompt_tokens"), "completion_tokens": row.get("completion_tokens")}
        merged.update(as_dict(metadata.get("additional_usage_values")))
    return merged, gateway_usage.names_cache(merged)


def _body(row: dict, provider: str, model: str, where: str) -> Request | None:
    """The messages the row kept (``store_prompts_in_spend_logs``), as a wire Request."""
    sent = as_dict(_json_field(row.get("proxy_server_request"), where, "proxy_server_request"))
    messages = sent.get("messages") if isinstance(sent.get("messages"), list) else _json_field(row.get("messages"), where, "messages")
    if not isinstance(messages, list) or not messages:
        return None
    refuse_lone_surrogates(messages, where, "messages")
    body = {"provider": provider, "model": model.rsplit("/", 1)[-1], "messages": messages}
    if isinstance(sent.get("tools"), list):
        body["tools"] = sent["tools"]
    try:
        return parse_request(body)
    except LineError:
        return None


def _service(row: dict, provider: str) -> str:
    """Azure OpenAI where the call is read as OpenAI's and the row's ``api_base`` is an Azure
    OpenAI resource's, or its ``custom_llm_provider`` is ``azure``
    (:func:`~prefixbench.simulator.providers.hosts.azure_service`); "" for any other (another
    maker's model on Azure is not Azure OpenAI)."""
    if provider != OPENAI.name:
        return ""
    base = row.get("api_base")
    at = azure_service(base.split("://", 1)[-1].lower()) if isinstance(base, str) else ""
    return at or azure_service(name=str(row.get("custom_llm_provider") or ""))


def _vertex_location(row: dict) -> str:
    """The Vertex AI location a row's ``api_base`` names (``global``, ``us-east5``...); "" where it
    names none."""
    base = row.get("api_base")
    found = _VERTEX_LOCATION.search(base) if isinstance(base, str) else None
    return next((g for g in found.groups() if g), "") if found else ""


def _vertex_note(calls: Counter[tuple[str, str]]) -> str | None:
    """What the audit says of Claude calls through Vertex AI (LiteLLM's ``vertex_ai`` route), by
    (model, location): priced at Anthropic's list price, which is what Vertex bills on its global
    endpoint; its regional endpoints bill Claude Sonnet 4.5 and later models 10% more
    (https://docs.claude.com/en/docs/build-with-claude/claude-on-vertex-ai, "Global vs regional
    endpoints"), which the price table does not hold. None for no such call."""
    if not calls:
        return None
    models = sorted({model for model, _ in calls})
    total = sum(calls.values())
    regional: Counter[str] = Counter()
    for (_, location), n in calls.items():
        if location and location != "global":
            regional[location] += n
    on_global = sum(n for (_, location), n in calls.items() if location == "global")
    unnamed = total - on_global - sum(regional.values())
    where = []
    if on_global:
        where.append(f"{on_global} on the global endpoint")
    if regional:
        where.append(f"{sum(regional.values())} on a regional endpoint ({', '.join(sorted(regional))}): billed 10% above the dollars "
                     "here for those models")
    if unnamed:
        where.append(f"{unnamed} naming no endpoint")
    return (f"{total} call(s) of {', '.join(models)} through Vertex AI (LiteLLM's vertex_ai route), priced at Anthropic's "
            "list price, which Vertex bills on its global endpoint; its regional endpoints bill Claude Sonnet 4.5 and later "
            f"models 10% more (Anthropic's Claude on Vertex AI page): {'; '.join(where)}")


#: Paired with a row's request id in :attr:`ImportContext.counted_ids`: a LiteLLM call counted,
#: asked of the files after it (saved pages of ``/spend/logs/ui`` overlap: newest first, a row
#: added between two fetches pushes the last row of one page to the top of the next).
LITELLM_ROW = "litellm row: "


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The calls of a spend-log export; see the module doc."""
    name = str(path)
    rows: list[_Row] = []
    skipped: list[tuple[int, str]] = []
    seen_any = False
    counted: set[str] = set()  # the request ids of this file's rows, counted once
    repeated = 0  # rows an earlier row or file counted
    for record in objects(path, records, " (a LiteLLM spend-log row)"):
        seen_any = True
        where = f"{name}:{record.line}"
        if detect(record.value) is None:  # type: ignore[arg-type]
            raise UserError(f"{where}: neither a spend-log row (request_id, call_type, startTime) nor a logging payload (id, trace_id, call_type, startTime)")
        for row, place in _rows_of(record, where):
            label = f"{place}: " if place != record.path else ""  # a page's row: which one
            if str(row.get("status", "success")).lower() == "failure":
                skipped.append((record.line, f"{label}failed call: not served"))
                continue
            if str(row.get("cache_hit", "")).lower() == "true":
                skipped.append((record.line, f"{label}served from LiteLLM's response cache: never sent to a provider"))
                continue
            if any(kind in str(row.get("call_type", "")).lower() for kind in _OTHER_CALLS):
                skipped.append((record.line, f"{label}{row.get('call_type')} call: no prompt to cache"))
                continue
            rid = row.get("request_id", row.get("id"))
            if isinstance(rid, str) and rid:
                if rid in counted or (LITELLM_ROW, rid) in ctx.counted_ids:
                    skipped.append((record.line, f"{label}request {rid} already counted (pages of the paginated endpoints "
                                    "overlap where rows were added between fetches; an export saved twice)"))
                    repeated += 1
                    continue
                counted.add(rid)
            metadata = as_dict(_json_field(row.get("metadata"), where, "metadata"))
            usage, reported = _usage_of(row, metadata, where)
            rows.append(_Row(record, usage, reported, row, place))
    if not seen_any:
        raise UserError(f"{name}:1: empty file, no spend-log rows")
    ctx.counted_ids.update((LITELLM_ROW, rid) for rid in sorted(counted))
    included = gateway_usage.writes_in_prompt((r.usage, f"{name}:{r.record.line}") for r in rows)
    rows.sort(key=lambda r: (str(r.value.get("startTime") or ""), r.record.line))
    out: list[TraceRequest] = []
    last_node: dict[str, str] = {}
    anthropic_calls = not_reported = with_body = writes_unknown = 0
    vertex: Counter[tuple[str, str]] = Counter()
    for r in rows:
        row = r.value
        where = f"{name}:{r.record.line}"
        usage = gateway_usage.read_usage(r.usage, where, writes_included=included, model=str(r.value.get("model") or ""))
        shaped = gateway_usage.is_anthropic_shaped(r.usage)
        anthropic_calls += shaped
        not_reported += not r.reported
        route = f"{row.get('custom_llm_provider') or ''}/{row.get('model') or NO_MODEL}".lstrip("/")
        provider = gateway_usage.provider_of(route, shaped)
        usage = gateway_usage.writes_unknown(usage, r.usage, provider)
        writes_unknown += not usage.writes_reported
        model = str(row.get("model") or NO_MODEL).rsplit("/", 1)[-1] or NO_MODEL
        body = _body(row, provider, model, where)
        if provider == ANTHROPIC.name and route.lower().startswith("vertex_ai"):
            vertex[(model, _vertex_location(row))] += 1
        with_body += body is not None
        session = row.get("session_id") or as_dict(_json_field(row.get("metadata"), where, "metadata")).get("session_id") or row.get("trace_id")
        rid = row.get("request_id", row.get("id"))
        own = rid if isinstance(rid, str) and rid else f"line {r.record.line}" + (f" {r.path}" if r.path else "")
        lane = own_lane(session if isinstance(session, str) else "", own)
        node = f"litellm:{name}#{r.record.line}:{rid}"
        out.append(
            TraceRequest(
                file=name,
                line=r.record.line,
                path=r.path,
                lane=lane,
                lane_kind="main",
                seq=len(out),
                sent_ms=parse_time_ms(row.get("startTime"), where),
                ready_ms=parse_time_ms(row.get("completionStartTime"), where),
                done_ms=parse_time_ms(row.get("endTime"), where) if row.get("endTime") is not None else None,
                provider=provider,
                model=model,
                usage=usage,
                body=body,
                prefix=None if body is not None else Prefix(f"litellm:{provider}:{model}", node, last_node.get(lane)),
                request_id=rid if isinstance(rid, str) else None,
                source_format=NAME,
                upstream=gateway_usage.served_by(route, _upstream(row, where), base if isinstance(base := row.get("api_base"), str) else ""),
                service=_service(row, provider),
            )
        )
        last_node[lane] = node
    if not out and repeated:
        # A page or export whose every served row another file counted: nothing of its own, no error.
        return out, FileSummary(name, NAME, 0, tuple(skipped), (
            f"every served row ({repeated}) already counted from an earlier file of the audit: nothing of this file's own",))
    if not out:
        raise UserError(f"{name}:1: no served chat calls among {len(skipped)} spend-log rows")
    notes = gateway_usage.reading_notes(len(out), anthropic_calls, included)
    if not_reported:
        notes.append(f"{not_reported} row(s) carry no cache counts (no usage_object, response usage or additional_usage_values): cache use not reported, not zero")
    if writes_unknown:
        notes.append(gateway_usage.WRITES_UNKNOWN_NOTE.format(writes_unknown))
    said = _vertex_note(vertex)
    if said is not None:
        notes.append(said)
    if with_body < len(out):
        notes.append("rows without stored messages are read as chains: one per session_id; a row without one is a lane of its own (nothing links it to another call)")
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(notes))


FORMAT = LogFormat(
    name=NAME,
    noun="LiteLLM spend log",
    nouns="LiteLLM spend logs",
    description="LiteLLM proxy spend logs (LiteLLM_SpendLogs rows: a /spend/logs JSON array, a /spend/logs/ui or /spend/logs/v2 page, or one row a line) "
    "and the StandardLoggingPayload its logging callbacks write",
    detect=detect,
    read=read,
    usage="by-endpoint",
    versions=(
        "rows with prompt_tokens / completion_tokens only (cache not reported)",
        "metadata.additional_usage_values (provider-specific usage: Anthropic's cache counts, prompt_tokens_details)",
        "metadata.usage_object (the whole LiteLLM usage)",
        "metadata as an object or as a JSON string; stored prompts (proxy_server_request, messages) read as bodies",
        "LiteLLM's Anthropic usage: prompt_tokens without writes (older) or with them (newer)",
        "StandardLoggingPayload (what logging callbacks write): id, trace_id (the lane), epoch-second times, boolean cache_hit, "
        "metadata.usage_object or the logged response's usage",
        "a page of /spend/logs/ui or /spend/logs/v2 (the Admin UI's logs): {data: [rows], total, page, page_size, total_pages}",
    ),
    aliases=("litellm-spend-logs",),
)
