"""OpenRouter generations: the answers of ``GET /api/v1/generation?id=`` kept by a team, one per
call.

Shapes read (one JSON value a record, pretty-printed or one a line):

* the endpoint's answer, ``{"data": {...}}`` (openrouter.ai/docs/api/api-reference/generations/get-generation),
  one a line or as a JSON array;
* the generation itself (``data``'s value) one a line, as a JSON array, or a list under ``data``;
* the same fields in the camelCase the TypeScript SDK's ``GenerationResponseData`` uses
  (``nativeTokensPrompt``...: openrouter.ai/docs/client-sdks/typescript/models/generationresponsedata.md).

The account's activity export as CSV is not read (export it as JSON).

A generation has an ``id``, a ``model`` (OpenRouter's ``vendor/model`` slug), ``created_at`` and
token counts: ``tokens_prompt`` / ``tokens_completion`` and the counts the upstream reported,
``native_tokens_prompt``, ``native_tokens_completion``, ``native_tokens_reasoning``,
``native_tokens_cached`` and, where given, ``native_tokens_cache_creation``. The native counts
are read (they are what was billed); they follow OpenRouter's usage shape, the OpenAI one: the
prompt count includes the cached part (and the writes), the completion count the reasoning. So
uncached = native prompt - cached - written, refused where that is below 0. Without native
counts the normalized ``tokens_*`` are read and the cache is not reported; a model whose
provider bills cache writes apart with no ``native_tokens_cache_creation`` field has its writes
not reported, not 0.

Who served a call: the model the slug names decides the provider and its cache rules
(:func:`.gateway_usage.provider_of`), the upstream OpenRouter routed it to (``provider_name``:
``Anthropic``, ``Google Vertex``, ``DeepInfra``...) its host, as the LiteLLM reader does with
OpenRouter's response ``provider`` (:func:`.gateway_usage.upstream_of`). ``created_at`` is when
the call was sent and ``latency`` (total latency in milliseconds) when it ended. A generation
with ``finish_reason`` ``error`` is a failed call, counted apart; a ``cancelled`` one ran and is
counted. Each ``session_id`` (where the answer names one), else each ``external_user``, is a lane
read as a chain in time order; a generation naming neither is a lane of its own (named by its id):
the endpoint's answers seldom name a session, and nothing else in them links one call to another,
so calls of one file are not assumed to extend each other. ``total_cost`` (or ``usage``) is kept
only as a check on the dollars.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import rules_for
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import clipped_text as _text
from prefixbench.workloads.logs.formats.common import logged_count, logged_dollars_of, logged_millis, objects, own_lane, parse_time_ms
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Prefix, TraceRequest

NAME = "openrouter"
#: The route name the provider rules key OpenRouter's own read steps by (``route_steps``).
ROUTE = "openrouter"
_COUNTS = ("tokens_prompt", "native_tokens_prompt", "tokens_completion", "native_tokens_completion")


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def _get(value: dict, key: str) -> object:
    """A field under its API name, else the TypeScript SDK's camelCase one."""
    return value[key] if key in value else value.get(_camel(key))


def is_generation(value: object) -> bool:
    """An OpenRouter generation: an id, a model, ``created_at`` and a token count."""
    return (isinstance(value, dict) and "id" in value and "model" in value
            and ("created_at" in value or "createdAt" in value)
            and any(k in value or _camel(k) in value for k in _COUNTS))


def _wrapped(value: dict) -> list | None:
    data = value.get("data")
    if is_generation(data):
        return [data]
    return data if isinstance(data, list) and any(is_generation(g) for g in data[:5]) else None


def detect(value: dict) -> Evidence | None:
    """A generation endpoint's answer (or a list under ``data``), or one generation."""
    if "data" in value and _wrapped(value) is not None:
        return Evidence.WRAPPER
    return Evidence.SHAPE if is_generation(value) else None


def _generations(record: Record, where: str) -> Iterator[tuple[dict, str]]:
    value: dict = record.value  # type: ignore[assignment]
    if is_generation(value):
        yield value, record.path
        return
    items = _wrapped(value) if "data" in value else None
    if items is None:
        raise UserError(f"{where}: neither an OpenRouter generation (id, model, created_at, tokens) nor a generation answer {{data}}")
    at = f"{record.path}." if record.path else ""
    single = isinstance(value.get("data"), dict)
    for i, item in enumerate(items):
        if not is_generation(item):
            raise UserError(f"{where}: data[{i}] is not an OpenRouter generation (id, model, created_at, tokens)")
        yield item, f"{at}data" if single else f"{at}data[{i}]"


def _number(value: dict, key: str, where: str) -> int | None:
    return logged_count(_get(value, key), where, key)


class _Reading(msgspec.Struct, frozen=True):
    usage: Usage
    native: bool
    names_writes: bool


def read_counts(value: dict, where: str) -> _Reading:
    """One generation's token counts as the normalized usage; see the module doc.

    Raises:
        UserError: a bad count, or cached and written tokens above the prompt count.
    """
    prompt = _number(value, "native_tokens_prompt", where)
    output = _number(value, "native_tokens_completion", where)
    if prompt is None and output is None:
        prompt = _number(value, "tokens_prompt", where) or 0
        output = _number(value, "tokens_completion", where) or 0
        return _Reading(Usage(uncached=prompt, output=output, cache_reported=False), False, False)
    prompt, output = prompt or 0, output or 0
    cached = _number(value, "native_tokens_cached", where)
    written = _number(value, "native_tokens_cache_creation", where)
    if (cached or 0) + (written or 0) > prompt:
        fields = (("native_tokens_cached", cached), ("native_tokens_cache_creation", written))
        given = [f"{key} ({n})" for key, n in fields if n is not None]
        raise UserError(f"{where}: {' and '.join(given)} exceed{'s' if len(given) == 1 else ''} native_tokens_prompt ({prompt})")
    reported = cached is not None or written is not None
    usage = Usage(cached or 0, written or 0, 0, prompt - (cached or 0) - (written or 0), output, cache_reported=reported)
    return _Reading(usage, True, written is not None)


def _cost(value: dict) -> float | None:
    return logged_dollars_of(_get(value, key) for key in ("total_cost", "usage"))


class _Call(msgspec.Struct):
    line: int
    path: str
    gid: str
    reading: _Reading
    slug: str
    sent_ms: int | None
    done_ms: int | None
    lane: str
    upstream: str


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The generations of an OpenRouter export; see the module doc."""
    name = str(path)
    skipped: list[tuple[int, str]] = []
    calls: list[_Call] = []
    seen: set[str] = set()
    cancelled = writes_unknown = normalized = 0
    cost = 0.0
    for record in objects(path, records, " (an OpenRouter generation or generation answer)"):
        where = f"{name}:{record.line}"
        for value, place in _generations(record, where):
            gid = str(value.get("id"))[:80]
            if gid in seen:
                skipped.append((record.line, f"generation {gid} repeated: counted once"))
                continue
            seen.add(gid)
            here = f"{where}: generation {gid}"
            if _text(_get(value, "finish_reason")).lower() == "error":
                skipped.append((record.line, f"failed generation {gid} (finish_reason error)"))
                continue
            reading = read_counts(value, here)
            slug = _text(value.get("model")) or NO_MODEL
            provider = gateway_usage.provider_of(slug, False)
            usage = gateway_usage.writes_unknown_unless_named(reading.usage, reading.names_writes, provider)
            if usage is not reading.usage:
                reading = msgspec.structs.replace(reading, usage=usage)
                writes_unknown += 1
            normalized += not reading.native
            cancelled += _get(value, "cancelled") is True
            cost += _cost(value) or 0.0
            sent = parse_time_ms(_get(value, "created_at"), here)
            latency = logged_millis(_get(value, "latency"))
            lane = own_lane(_text(_get(value, "session_id")) or _text(_get(value, "external_user")), gid)
            upstream = gateway_usage.upstream_of({"provider": _get(value, "provider_name")})
            calls.append(_Call(record.line, place, gid, reading, slug, sent,
                               sent + latency if sent is not None and latency is not None else None, lane,
                               gateway_usage.served_by(slug, upstream)))
    if not calls:
        raise UserError(f"{name}:1: no OpenRouter generation with token counts ({len(skipped)} skipped)")
    calls.sort(key=lambda c: (c.sent_ms is None, c.sent_ms or 0, c.line, c.path))
    out: list[TraceRequest] = []
    last_node: dict[str, str] = {}
    for call in calls:
        provider = gateway_usage.provider_of(call.slug, False)
        model = call.slug.rsplit("/", 1)[-1] or NO_MODEL
        node = f"openrouter:{name}#{call.lane}:{call.gid}"
        out.append(TraceRequest(
            file=name, line=call.line, path=call.path, lane=call.lane, lane_kind="main", seq=len(out),
            sent_ms=call.sent_ms, ready_ms=None, provider=provider, model=model, usage=call.reading.usage,
            prefix=Prefix(f"openrouter:{provider}:{model}", node, last_node.get(call.lane)),
            request_id=call.gid, source_format=NAME, done_ms=call.done_ms, upstream=call.upstream,
            read_step=rules_for(provider).route_step(ROUTE, call.slug),
        ))
        last_node[call.lane] = node
    native = len(out) - normalized
    notes = []
    if native:
        notes.append(f"{native} generation(s): native counts, OpenAI-shaped: native_tokens_prompt includes native_tokens_cached "
                     "and native_tokens_cache_creation (uncached = prompt - cached - written)")
    if normalized:
        notes.append(f"{normalized} generation(s) without native counts: tokens_prompt / tokens_completion read, cache not reported")
    notes.append("generations are read as chains: one per session_id, else per external_user, in time order; "
                 "a generation naming neither is a lane of its own (nothing links it to another call)")
    if writes_unknown:
        notes.append(f"{writes_unknown} generation(s) of a provider that bills cache writes apart have no native_tokens_cache_creation: "
                     "what they wrote is not reported, not 0")
    if cancelled:
        notes.append(f"{cancelled} cancelled generation(s) ran and are counted")
    if cost:
        notes.append(f"OpenRouter's own cost figures (total_cost) sum to ${cost:.4f} (a check on the dollars here)")
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(notes))


FORMAT = LogFormat(
    name=NAME,
    noun="OpenRouter generation export",
    nouns="OpenRouter generation exports",
    description="OpenRouter generations: GET /api/v1/generation answers ({data}) or their generations, one a line or as a JSON array",
    detect=detect,
    read=read,
    usage="subset",
    versions=(
        "generations with native_tokens_prompt / _completion / _cached (the upstream's counts, OpenAI-shaped)",
        "newer generations with native_tokens_cache_creation beside native_tokens_cached",
        "generations without native counts: tokens_prompt / tokens_completion only, cache not reported",
        "the TypeScript SDK's camelCase fields (nativeTokensPrompt...)",
    ),
    aliases=("openrouter-generations",),
)
