"""Helicone request logs: the answer of ``POST /v1/request/query`` (and ``query-clickhouse``) and
the rows of the dashboard's export.

Shapes read (one JSON value a record, pretty-printed or one a line):

* the API's answer, ``{"data": [...], "error": null}``;
* the requests as a JSON array, or one a line.

An answer with no requests (``{"data": [], "error": null}``) is bad input said as such (exit 2),
as other empty exports are.

A request is a ``HeliconeRequest`` (``packages/llm-mapper/types.ts`` in ``Helicone/helicone``):
``request_id``, ``request_created_at``, ``response_created_at``, ``response_status``, ``model``
(else ``response_model``, ``request_model``), ``provider`` (Helicone's name of the API it proxied:
``OPENAI``, ``ANTHROPIC``, ``OPENROUTER``...), ``prompt_tokens``, ``completion_tokens``,
``prompt_cache_read_tokens``, ``prompt_cache_write_tokens``, ``delay_ms``,
``time_to_first_token``, ``cost`` (``costUSD``) and ``properties`` (where
``Helicone-Session-Id`` names a session).

Helicone stores the counts disjoint, whoever served the call: its cost code prices
``prompt_tokens`` as "the fresh, uncached tokens" and adds the cache writes and reads at their
own rates (``costOfPrompt`` in ``packages/cost/index.ts``), and its token totals add the four
columns. So uncached = ``prompt_tokens``, reads = ``prompt_cache_read_tokens``, writes =
``prompt_cache_write_tokens`` (Anthropic's 5-minute and 1-hour parts, where the row has
``prompt_cache_write_1h``, split by it). A row with neither cache column reports no cache use
(not zero); one of a provider that bills writes apart with reads but no write column has its
writes not reported, not 0.

One call = one request. A ``response_status`` outside 200-299 is a failed call, counted apart.
Who served it: the model decides the provider and its cache rules
(:func:`.gateway_usage.provider_of`), routed through Helicone's ``provider`` as a LiteLLM route
is (:func:`.gateway_usage.served_by`). Sent at ``request_created_at``, its first token
``time_to_first_token`` ms later, ended at ``response_created_at`` (else ``delay_ms`` after it
was sent). Each session (``Helicone-Session-Id``), else each user (``helicone_user``,
``request_user_id``), is a lane read as a chain in time order; a request naming neither is a lane
of its own (named by its id): nothing else in a row links one call to another.
The request and response bodies Helicone may include are not read. ``cost`` is kept only as a
check on the dollars.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, logged_count, logged_dollars_of, logged_millis, objects, own_lane, parse_time_ms
from prefixbench.workloads.logs.formats.common import clipped_text as _text
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Prefix, TraceRequest

NAME = "helicone"
_COUNTS = ("prompt_tokens", "completion_tokens", "prompt_cache_read_tokens", "prompt_cache_write_tokens")
#: The property Helicone's sessions are keyed by.
SESSION = "Helicone-Session-Id"


def is_request(value: object) -> bool:
    """A Helicone request row: its id, when it was created and a token column."""
    return (isinstance(value, dict) and "request_id" in value and "request_created_at" in value
            and any(k in value for k in _COUNTS))


def _is_answer(value: dict) -> bool:
    data = value.get("data")
    return isinstance(data, list) and "error" in value and any(is_request(r) for r in data[:5])


#: What an answer with no requests is said to be (it names no format by its shape alone:
#: ``{data, error}`` is a common envelope, so it is told apart only where nothing claims it).
EMPTY_ANSWER = "an answer {\"data\": [], \"error\": ...} with no requests (Helicone's request query shape): nothing to audit"


def is_empty_answer(value: object) -> bool:
    """A request query answer holding no request: ``{"data": [], "error": null}``."""
    return isinstance(value, dict) and set(value) == {"data", "error"} and value["data"] == []


def detect(value: dict) -> Evidence | None:
    """A request query answer, or one request row."""
    if "data" in value and _is_answer(value):
        return Evidence.WRAPPER
    return Evidence.SHAPE if is_request(value) else None


def _requests(record: Record, where: str) -> Iterator[tuple[dict, str]]:
    value: dict = record.value  # type: ignore[assignment]
    if is_request(value):
        yield value, record.path
        return
    if is_empty_answer(value):
        raise UserError(f"{where}: {EMPTY_ANSWER}")
    if not _is_answer(value):
        raise UserError(f"{where}: neither a Helicone request (request_id, request_created_at, token counts) nor a request query answer")
    at = f"{record.path}." if record.path else ""
    for i, item in enumerate(value["data"]):
        if not is_request(item):
            raise UserError(f"{where}: data[{i}] is not a Helicone request (request_id, request_created_at, token counts)")
        yield item, f"{at}data[{i}]"


def _number(value: dict, key: str, where: str) -> int | None:
    return logged_count(value.get(key), where, key)


def read_counts(value: dict, where: str) -> tuple[Usage, bool]:
    """One row's counts as the normalized usage, and whether it has a cache-write column."""
    read = _number(value, "prompt_cache_read_tokens", where)
    written = _number(value, "prompt_cache_write_tokens", where)
    long = min(_number(value, "prompt_cache_write_1h", where) or 0, written or 0)
    usage = Usage(read or 0, (written or 0) - long, long, _number(value, "prompt_tokens", where) or 0,
                  _number(value, "completion_tokens", where) or 0, cache_reported=read is not None or written is not None)
    return usage, written is not None


def _cost(value: dict) -> float | None:
    return logged_dollars_of(value.get(key) for key in ("costUSD", "cost"))


class _Call(msgspec.Struct):
    line: int
    path: str
    rid: str
    usage: Usage
    model: str
    route: str
    sent_ms: int | None
    ready_ms: int | None
    done_ms: int | None
    lane: str


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The requests of a Helicone export; see the module doc."""
    name = str(path)
    skipped: list[tuple[int, str]] = []
    calls: list[_Call] = []
    seen: set[str] = set()
    writes_unknown = 0
    cost = 0.0
    for record in objects(path, records, " (a Helicone request or request query answer)"):
        where = f"{name}:{record.line}"
        for value, place in _requests(record, where):
            rid = str(value.get("request_id"))[:80]
            if rid in seen:
                skipped.append((record.line, f"request {rid} repeated: counted once"))
                continue
            seen.add(rid)
            here = f"{where}: request {rid}"
            status = value.get("response_status")
            if isinstance(status, int) and not isinstance(status, bool) and not 200 <= status < 300:
                skipped.append((record.line, f"failed request {rid} (response_status {status})"))
                continue
            usage, names_writes = read_counts(value, here)
            model = _text(value.get("model")) or _text(value.get("response_model")) or _text(value.get("request_model")) or NO_MODEL
            helicone = _text(value.get("provider"), 60).lower()
            route = f"{helicone}/{model}" if helicone else model
            provider = gateway_usage.provider_of(route, False)
            marked = gateway_usage.writes_unknown_unless_named(usage, names_writes, provider)
            if marked is not usage:
                usage = marked
                writes_unknown += 1
            cost += _cost(value) or 0.0
            sent = parse_time_ms(value.get("request_created_at"), here)
            done = parse_time_ms(value.get("response_created_at"), here)
            delay, first = logged_millis(value.get("delay_ms")), logged_millis(value.get("time_to_first_token"))
            if done is None and sent is not None and delay is not None:
                done = sent + delay
            properties = as_dict(value.get("properties")) or as_dict(value.get("request_properties"))
            lane = own_lane(_text(properties.get(SESSION)) or _text(value.get("helicone_user")) or _text(value.get("request_user_id")), rid)
            calls.append(_Call(record.line, place, rid, usage, model, route, sent,
                               sent + first if sent is not None and first is not None else None, done, lane))
    if not calls:
        raise UserError(f"{name}:1: no Helicone request with token counts ({len(skipped)} skipped)")
    calls.sort(key=lambda c: (c.sent_ms is None, c.sent_ms or 0, c.line, c.path))
    out: list[TraceRequest] = []
    last_node: dict[str, str] = {}
    for call in calls:
        provider = gateway_usage.provider_of(call.route, False)
        model = call.model.rsplit("/", 1)[-1] or NO_MODEL
        node = f"helicone:{name}#{call.lane}:{call.rid}"
        out.append(TraceRequest(
            file=name, line=call.line, path=call.path, lane=call.lane, lane_kind="main", seq=len(out),
            sent_ms=call.sent_ms, ready_ms=call.ready_ms, provider=provider, model=model, usage=call.usage,
            prefix=Prefix(f"helicone:{provider}:{model}", node, last_node.get(call.lane)),
            request_id=call.rid, source_format=NAME, done_ms=call.done_ms,
            upstream=gateway_usage.served_by(call.route, "") if "/" in call.route else "",
        ))
        last_node[call.lane] = node
    notes = [
        "Helicone's columns are disjoint: uncached = prompt_tokens, reads = prompt_cache_read_tokens, writes = prompt_cache_write_tokens",
        "requests are read as chains: one per Helicone-Session-Id, else per user, in time order; "
        "a request naming neither is a lane of its own (nothing links it to another call)",
    ]
    if writes_unknown:
        notes.append(f"{writes_unknown} request(s) of a provider that bills cache writes apart have no prompt_cache_write_tokens: "
                     "what they wrote is not reported, not 0")
    if cost:
        notes.append(f"Helicone's own cost figures (cost) sum to ${cost:.4f} (a check on the dollars here)")
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(notes))


FORMAT = LogFormat(
    name=NAME,
    noun="Helicone request export",
    nouns="Helicone request exports",
    description="Helicone request logs: POST /v1/request/query answers ({data, error}) or their rows, one a line or as a JSON array",
    detect=detect,
    read=read,
    usage="additive",
    versions=(
        "request rows with prompt_tokens, completion_tokens, prompt_cache_read_tokens, prompt_cache_write_tokens (disjoint)",
        "rows without cache columns: cache not reported",
    ),
)
