"""LangSmith runs: the SDK's ``client.list_runs`` written out, the REST API's answer and the JSON
bulk export.

Shapes read (one JSON value a record, pretty-printed or one a line):

* ``POST /api/v1/runs/query``: ``{"runs": [...], "cursors": {...}}``;
* a bare list of runs (a JSON array), or one run a line (``client.list_runs`` dumped as JSON
  lines, the bulk export's JSON files); a run may hold its ``child_runs`` (``read_run`` with
  ``load_child_runs``), read as runs too;
* one run (``GET /api/v1/runs/{id}``).

A run has an ``id``, a ``run_type`` (``llm``, ``chain``, ``tool``, ``retriever``, ``embedding``,
``prompt``, ``parser``: the Run schema of ``langchain-ai/langsmith-sdk``,
``python/langsmith/schemas.py``) and a ``start_time``, ``trace_id`` or ``dotted_order``. One call =
one run of type ``llm``; other runs are not model calls. A run with an ``error`` (or ``status``
``error``) is a failed call, counted apart.
An answer with no run (``{"runs": [], "cursors": {...}}``) is bad input said as such (exit 2),
as Helicone's empty answer is.

Usage, first present of:

1. the run's own ``prompt_tokens`` / ``completion_tokens`` with ``prompt_token_details``
   (``cache_read``, ``cache_creation``, ``ephemeral_1h_input_tokens``...), which LangSmith fills
   from the message's ``usage_metadata``;
2. the ``usage_metadata`` LangChain puts on the model's message
   (``outputs.generations[0][0].message.kwargs.usage_metadata``) or a ``@traceable`` function
   returns (``outputs.usage_metadata``), else the run's ``extra.metadata.usage_metadata`` (where
   the SDK's ``RunTree.set(usage_metadata=...)`` keeps it): ``input_tokens``, ``output_tokens``,
   ``input_token_details`` {``cache_read``, ``cache_creation``, ``audio``},
   ``output_token_details`` {``reasoning``}. LangChain's ``UsageMetadata`` makes ``input_tokens``
   the sum of all input token types (python.langchain.com/api_reference/core/messages/langchain_core.messages.ai.UsageMetadata.html),
   and its Anthropic integration adds the cache reads and writes into it, so for every provider
   the prompt count includes the cache buckets: uncached = input - cache_read - cache_creation.
   Where it splits the writes by TTL (``ephemeral_5m_input_tokens``, ``ephemeral_1h_input_tokens``)
   it sets ``cache_creation`` to 0 so they are not counted twice; the split's sum is then the writes.
   The output count includes reasoning. A usage with no ``input_token_details`` cache key reports
   no cache use (not zero);
3. the provider's own usage the integration passes on in ``outputs.llm_output.token_usage`` (or
   ``usage``): OpenAI-shaped ``prompt_tokens`` with ``prompt_tokens_details.cached_tokens``
   (subset), or Anthropic's ``input_tokens`` beside ``cache_read_input_tokens`` and
   ``cache_creation_input_tokens`` (additive), read as :mod:`.gateway_usage` reads them.

Who served a call comes from the model LangChain names (``extra.metadata.ls_model_name``, else
``extra.invocation_params.model`` / ``model_name``) routed through the provider it names
(``ls_provider``: ``openai``, ``anthropic``, ``groq``, ``fireworks``...), as LiteLLM routes are
(:func:`.gateway_usage.provider_of`, :func:`.gateway_usage.served_by`). Each thread (the
``thread_id``, ``session_id`` or ``conversation_id`` metadata LangSmith's threads view groups by)
or else each trace is a lane, its calls in start order (``dotted_order`` breaks ties); the lane is
a chain of calls (the messages LangChain serializes are not read as request bodies). LangSmith's
own ``total_cost`` is kept only as a check on the dollars.

A bulk export's Parquet files (pyarrow, a base dependency, reads them) are read row by row as the
same runs: a file that starts with Parquet's magic bytes and has ``id`` and ``run_type`` columns.
Columns holding JSON text (``inputs``, ``outputs``, ``extra``, the token details) are decoded,
timestamps written as ISO 8601 (a time without zone is UTC), 16-byte ids as UUIDs; a row's place
is its number (from 1) where a JSON file's is its line.
"""

from __future__ import annotations

import json
import uuid
from collections import deque
from collections.abc import Iterable, Iterator
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, logged_count, logged_dollars_of, objects, parse_time_ms
from prefixbench.workloads.logs.reading import starts_with
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Prefix, TraceRequest

NAME = "langsmith"
#: The first bytes of a Parquet file.
PARQUET_MAGIC = b"PAR1"
#: Parquet columns of a bulk export that may hold JSON text.
_JSON_COLUMNS = frozenset(("inputs", "outputs", "extra", "prompt_token_details", "completion_token_details", "events", "child_runs"))
#: The run types of LangSmith's Run schema.
RUN_TYPES = frozenset(("llm", "chain", "tool", "retriever", "embedding", "prompt", "parser"))
#: ``ls_provider`` values whose LiteLLM route has another name (the route decides the host).
_ROUTES = {"fireworks": "fireworks_ai", "together": "together_ai", "google_vertexai": "vertex_ai", "amazon_bedrock": "bedrock"}
#: Metadata keys LangSmith groups a thread by.
_THREAD_KEYS = ("thread_id", "session_id", "conversation_id")


def is_run(value: object) -> bool:
    """A LangSmith run: an id, a known ``run_type`` and where it sits in time or in its trace."""
    kind = value.get("run_type") if isinstance(value, dict) else None
    return (isinstance(kind, str) and kind in RUN_TYPES and "id" in value
            and any(k in value for k in ("start_time", "trace_id", "dotted_order")))


def _is_page(value: dict) -> bool:
    runs = value.get("runs")
    return isinstance(runs, list) and any(is_run(r) for r in runs[:5])


#: What a runs query answer with no run is said to be (told apart by ``runs`` beside
#: ``cursors``, and only where nothing claims the file).
EMPTY_ANSWER = "an answer {\"runs\": [], \"cursors\": ...} with no runs (LangSmith's runs query shape): nothing to audit"


def is_empty_answer(value: object) -> bool:
    """A ``POST /api/v1/runs/query`` answer holding no run: ``{"runs": [], "cursors": {...}}``."""
    return (isinstance(value, dict) and value.get("runs") == [] and isinstance(value.get("cursors"), dict)
            and set(value) <= {"runs", "cursors", "parsed_query"})


def detect(value: dict) -> Evidence | None:
    """A runs query answer, or one run."""
    if _is_page(value):
        return Evidence.WRAPPER
    return Evidence.SHAPE if is_run(value) else None


class _Run(msgspec.Struct):
    line: int
    value: dict
    path: str


def _runs(record: Record, where: str) -> Iterator[_Run]:
    """The runs a record holds (a page, or one run), with their child runs."""
    value: dict = record.value  # type: ignore[assignment]
    at = f"{record.path}." if record.path else ""
    if is_run(value):
        stack = [(value, record.path)]
    elif isinstance(value.get("runs"), list):
        stack = []
        for i, run in enumerate(value["runs"]):
            if not is_run(run):
                raise UserError(f"{where}: runs[{i}] is not a LangSmith run (id, run_type, start_time or trace_id)")
            stack.append((run, f"{at}runs[{i}]"))
    else:
        raise UserError(f"{where}: neither a LangSmith run (id, run_type, start_time or trace_id) nor a runs query answer")
    queue = deque(stack)
    while queue:
        run, place = queue.popleft()
        yield _Run(record.line, run, place)
        children = run.get("child_runs")
        if isinstance(children, list):
            queue.extend((child, f"{place}.child_runs[{j}]" if place else f"child_runs[{j}]")
                         for j, child in enumerate(children) if is_run(child))


def _usage_metadata(run: dict) -> dict | None:
    """The ``usage_metadata`` of the run's message (LangChain), or its outputs' (``@traceable``),
    else the run's metadata's (``extra.metadata.usage_metadata``: where the SDK's
    ``RunTree.set(usage_metadata=...)`` keeps it, and its wrappers copy it)."""
    outputs = as_dict(run.get("outputs"))
    found = outputs.get("usage_metadata")
    if isinstance(found, dict):
        return found
    generations = outputs.get("generations")
    while isinstance(generations, list) and generations:
        generations = generations[0]
    message = as_dict(as_dict(generations).get("message"))
    for place in (as_dict(message.get("kwargs")), message):
        if isinstance(place.get("usage_metadata"), dict):
            return place["usage_metadata"]
    found = as_dict(as_dict(run.get("extra")).get("metadata")).get("usage_metadata")
    return found if isinstance(found, dict) else None


class _Reading(msgspec.Struct, frozen=True):
    usage: Usage
    #: ``run`` (the run's prompt_tokens), ``usage_metadata``, ``provider`` (llm_output's raw usage).
    source: str
    #: Whether the usage has a field for cache writes (given, even as 0).
    names_writes: bool
    #: Whether the usage is Anthropic-shaped (the provider's raw keys).
    anthropic_shaped: bool = False


def _inclusive(prompt: int, output: int, details: dict, where: str, source: str) -> _Reading:
    """A LangChain-normalized usage: the prompt count includes the cache buckets."""
    read = logged_count(details.get("cache_read"), where, "cache_read") or 0
    long = logged_count(details.get("ephemeral_1h_input_tokens"), where, "ephemeral_1h_input_tokens") or 0
    written = logged_count(details.get("cache_creation"), where, "cache_creation")
    if "ephemeral_5m_input_tokens" in details or "ephemeral_1h_input_tokens" in details:
        # langchain-anthropic moves the writes into the TTL keys and sets cache_creation to 0 so
        # they are not counted twice: the breakdown's sum is the writes whenever it is larger.
        split = (logged_count(details.get("ephemeral_5m_input_tokens"), where, "ephemeral_5m_input_tokens") or 0) + long
        written = max(written or 0, split)
    names = written is not None
    written = written or 0
    if read + written > prompt:
        raise UserError(f"{where}: cache reads ({read}) and writes ({written}) exceed the prompt count ({prompt})")
    reported = "cache_read" in details or names
    long = min(long, written)
    return _Reading(Usage(read, written - long, long, prompt - read - written, output, cache_reported=reported), source, names)


def read_run_usage(run: dict, where: str) -> _Reading | None:
    """One llm run's usage (see the module doc); None where the run carries none."""
    prompt = logged_count(run.get("prompt_tokens"), where, "prompt_tokens")
    output = logged_count(run.get("completion_tokens"), where, "completion_tokens")
    metadata = _usage_metadata(run)
    if prompt is not None or output is not None:
        details = as_dict(run.get("prompt_token_details")) or as_dict(as_dict(metadata).get("input_token_details"))
        return _inclusive(prompt or 0, output or 0, details, where, "run")
    if metadata is not None and ("input_tokens" in metadata or "output_tokens" in metadata):
        return _inclusive(
            logged_count(metadata.get("input_tokens"), where, "usage_metadata.input_tokens") or 0,
            logged_count(metadata.get("output_tokens"), where, "usage_metadata.output_tokens") or 0,
            as_dict(metadata.get("input_token_details")), where, "usage_metadata",
        )
    llm_output = as_dict(as_dict(run.get("outputs")).get("llm_output"))
    raw = llm_output.get("token_usage") or llm_output.get("usage")
    if isinstance(raw, dict) and raw:
        shaped = gateway_usage.is_anthropic_shaped(raw)
        if shaped and "prompt_tokens" not in raw:
            # Anthropic's own usage: input_tokens is the uncached part, beside the cache buckets.
            read = logged_count(raw.get("cache_read_input_tokens"), where, "cache_read_input_tokens") or 0
            written = logged_count(raw.get("cache_creation_input_tokens"), where, "cache_creation_input_tokens") or 0
            long = min(logged_count(as_dict(raw.get("cache_creation")).get("ephemeral_1h_input_tokens"), where, "ephemeral_1h_input_tokens") or 0, written)
            usage = Usage(read, written - long, long, logged_count(raw.get("input_tokens"), where, "input_tokens") or 0,
                          logged_count(raw.get("output_tokens"), where, "output_tokens") or 0)
            return _Reading(usage, "provider", "cache_creation_input_tokens" in raw, True)
        if "prompt_tokens" in raw or "completion_tokens" in raw:
            return _Reading(gateway_usage.read_usage(raw, where, model=_model(run)[0]), "provider", gateway_usage.names_writes(raw), shaped)
    return None


def _model(run: dict) -> tuple[str, str]:
    """The model a run names and the provider LangChain says it called (``ls_provider``)."""
    extra = as_dict(run.get("extra"))
    metadata, params = as_dict(extra.get("metadata")), as_dict(extra.get("invocation_params"))
    model = ""
    for raw in (metadata.get("ls_model_name"), params.get("model"), params.get("model_name"), params.get("ls_model_name")):
        if isinstance(raw, str) and raw.strip():
            model = raw.strip()[:200]
            break
    provider = metadata.get("ls_provider", params.get("ls_provider"))
    return model, provider.strip().lower()[:60] if isinstance(provider, str) else ""


def _lane(run: dict) -> str:
    metadata = as_dict(as_dict(run.get("extra")).get("metadata"))
    for key in _THREAD_KEYS:
        value = metadata.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)[:200]
    trace = run.get("trace_id")
    return str(trace)[:200] if isinstance(trace, (str, int)) and not isinstance(trace, bool) and str(trace) else "main"


def _cost(run: dict) -> float | None:
    return logged_dollars_of((run.get("total_cost"),), text=True)


class _Call(msgspec.Struct):
    run: _Run
    where: str
    reading: _Reading
    model: str
    provider: str
    upstream: str
    sent_ms: int | None
    ready_ms: int | None
    done_ms: int | None
    lane: str
    order: str


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The llm runs of a LangSmith export; see the module doc."""
    name = str(path)
    skipped: list[tuple[int, str]] = []
    calls: list[_Call] = []
    seen: set[str] = set()
    others = writes_unknown = 0
    cost = 0.0
    for record in objects(path, records, " (a LangSmith run or runs query answer)"):
        where = f"{name}:{record.line}"
        for run in _runs(record, where):
            value = run.value
            rid = str(value.get("id"))[:80]
            if value.get("run_type") != "llm":
                others += 1
                continue
            if rid in seen:
                skipped.append((run.line, f"llm run {rid} repeated: counted once"))
                continue
            seen.add(rid)
            here = f"{where}: run {rid}"
            error = value.get("error")
            if error or str(value.get("status", "")).lower() == "error":
                skipped.append((run.line, f"failed llm run {rid}{': ' + str(error)[:80] if error else ' (status error)'}"))
                continue
            reading = read_run_usage(value, here)
            if reading is None:
                skipped.append((run.line, f"llm run {rid}: no usage"))
                continue
            model, named = _model(value)
            route = f"{_ROUTES.get(named, named)}/{model}" if named and model else model
            provider = gateway_usage.provider_of(route, reading.anthropic_shaped)
            usage = gateway_usage.writes_unknown_unless_named(reading.usage, reading.names_writes, provider)
            if usage is not reading.usage:
                reading = msgspec.structs.replace(reading, usage=usage)
                writes_unknown += 1
            spent = _cost(value)
            cost += spent or 0.0
            order = value.get("dotted_order")
            calls.append(_Call(
                run, here, reading, model.rsplit("/", 1)[-1] or NO_MODEL, provider,
                gateway_usage.served_by(route, "") if "/" in route else "",
                parse_time_ms(value.get("start_time"), here), parse_time_ms(value.get("first_token_time"), here),
                parse_time_ms(value.get("end_time"), here), _lane(value), order if isinstance(order, str) else "",
            ))
    if not calls:
        raise UserError(f"{name}:1: no llm run with token usage among the runs ({len(skipped)} skipped, {others} other runs)")
    calls.sort(key=lambda c: (c.sent_ms is None, c.sent_ms or 0, c.order, c.run.line))
    out: list[TraceRequest] = []
    last_node: dict[str, str] = {}
    sources: dict[str, int] = {}
    for call in calls:
        sources[call.reading.source] = sources.get(call.reading.source, 0) + 1
        rid = str(call.run.value.get("id"))[:80]
        node = f"langsmith:{name}#{call.lane}:{rid}"
        out.append(TraceRequest(
            file=name, line=call.run.line, path=call.run.path, lane=call.lane, lane_kind="main", seq=len(out),
            sent_ms=call.sent_ms, ready_ms=call.ready_ms, provider=call.provider, model=call.model,
            usage=call.reading.usage,
            prefix=Prefix(f"langsmith:{call.provider}:{call.model}", node, last_node.get(call.lane)),
            request_id=rid, source_format=NAME, done_ms=call.done_ms, upstream=call.upstream,
        ))
        last_node[call.lane] = node
    notes = [f"{n} llm run(s): {SOURCES[kind]}" for kind, n in sorted(sources.items())]
    notes.append("llm runs are read as chains: one per thread (thread_id, session_id or conversation_id metadata), else per trace, in start order")
    if writes_unknown:
        notes.append(f"{writes_unknown} llm run(s) of a provider that bills cache writes apart have no cache-write field "
                     "(no cache_creation): what they wrote is not reported, not 0")
    if cost:
        notes.append(f"LangSmith's own cost figures (total_cost) sum to ${cost:.4f} (a check on the dollars here)")
    if others:
        notes.append(f"{others} chain, tool, retriever and other non-llm run(s) are not model calls")
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(notes))


#: Where each call's usage was read from, for the notes.
SOURCES = {
    "run": "the run's prompt_tokens (LangChain's input_tokens) include the cache buckets: uncached = prompt_tokens - cache_read - cache_creation",
    "usage_metadata": "usage_metadata.input_tokens includes the cache buckets: uncached = input_tokens - cache_read - cache_creation",
    "provider": "the provider's own usage in outputs.llm_output, read by its wire shape",
}


def _parquet_failure(path: Path, exc: Exception) -> UserError:
    return UserError(f"{path}: a Parquet file that cannot be read ({type(exc).__name__}: {str(exc)[:120]})")


def is_parquet_runs(path: Path) -> bool:
    """Whether ``path`` is a Parquet file of LangSmith runs (its magic bytes, ``id`` and ``run_type``
    columns).

    Raises:
        UserError: a file with Parquet's magic bytes pyarrow cannot read.
    """
    if not starts_with(path, PARQUET_MAGIC):
        return False
    import pyarrow.parquet as pq  # (only for a Parquet file: the audit does not load pyarrow otherwise)

    try:
        names = set(pq.read_schema(path).names)
    except Exception as exc:  # pyarrow raises its own errors and OSError for a damaged file
        raise _parquet_failure(path, exc) from None
    return {"id", "run_type"} <= names


def _plain(key: str, value: object) -> object:
    """A Parquet cell as the JSON value a run's field holds."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return str(uuid.UUID(bytes=value)) if len(value) == 16 else value.hex()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, str) and key in _JSON_COLUMNS and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    if isinstance(value, dict):
        return {str(k): _plain(str(k), v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(key, v) for v in value]
    return value


def read_parquet(path: Path, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The llm runs of a bulk export's Parquet file: each row a run (see the module doc)."""
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except Exception as exc:
        raise _parquet_failure(path, exc) from None
    records = (Record(i, {str(k): _plain(str(k), v) for k, v in row.items()}) for i, row in enumerate(rows, 1))
    return read(path, records, ctx)


FORMAT = LogFormat(
    name=NAME,
    noun="LangSmith run export",
    nouns="LangSmith run exports",
    description="LangSmith runs: POST /runs/query answers, client.list_runs dumps and JSON bulk exports (llm runs are the calls)",
    detect=detect,
    read=read,
    usage="subset",
    versions=(
        "runs with prompt_tokens / completion_tokens and prompt_token_details {cache_read, cache_creation} (LangSmith's own counts)",
        "older runs with usage only in the message's usage_metadata (input_tokens includes input_token_details' cache buckets)",
        "runs of integrations that pass on only the provider's usage in outputs.llm_output.token_usage",
        "POST /runs/query answers {runs, cursors}, JSON arrays and JSON lines, runs holding child_runs",
        "bulk exports' Parquet files (JSON text columns decoded)",
    ),
    detect_file=is_parquet_runs,
    read_file=read_parquet,
    file_suffixes=(".parquet",),
)
