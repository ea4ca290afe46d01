"""Langfuse observations: the public API's answers, the UI export and the blob-storage export.

Shapes read (one JSON value a record, pretty-printed or one a line):

* ``GET /api/public/observations`` (and ``/api/public/v2/observations``): ``{"data": [...], "meta": {...}}``;
* a bare list of observations (a JSON array), or one observation a line (the UI's JSONL export);
* ``GET /api/public/traces/{id}``: a trace holding its ``observations`` (and its ``sessionId``);
* the UI's trace download, ``{"trace": {...}, "observations": [...]}`` (the framework traces in
  Langfuse's repository, ``packages/shared/scripts/seeder/utils/framework-traces/``, are such
  files), and its log view copied as JSON (observations keyed by id);
* the blob-storage export of the observations table: snake_case columns (``trace_id``,
  ``start_time`` as ClickHouse writes it, ``provided_model_name``, ``usage_details`` with counts
  as strings).

One call = one observation of type ``GENERATION``. Its usage is ``usageDetails``: a map of usage
types. Langfuse's ingestion keeps the buckets disjoint: an OpenAI-shaped usage has its
``prompt_tokens_details`` split out of ``input`` (``input_cached_tokens`` is subtracted from
``input``), the LangChain handler does the same with ``input_token_details``
(``input_cache_read``, ``input_cache_creation``), the OpenTelemetry path subtracts reads and
writes (before it did, it kept the attribute's tail: ``prompt_details.cache_read`` inside
``input``, ``completion_details.reasoning`` inside ``output``; and before langfuse#13110, April
2026, the conventions' ``cache_read.input_tokens`` / ``cache_creation.input_tokens`` and
pydantic-ai's ``cache_read_tokens`` / ``cache_write_tokens`` as they came, inside ``input``; its
newest still keeps ``cache_write.input_tokens`` so; from December 2025 to then pydantic-ai's
``input_cache_read`` / ``input_cache_creation`` too), LiteLLM's Langfuse callback sends
``input`` as its whole ``prompt_tokens`` or, since November 2025, less the reads (the writes
inside it where that LiteLLM's prompt count held them: each observation read as its own numbers
tell, :func:`litellm_readings`), and an Anthropic usage passed as it is keeps Anthropic's own uncached ``input_tokens``
beside ``cache_read_input_tokens`` and ``cache_creation_input_tokens``. ``total`` is the sum of
the buckets unless the sender gave one; a sender's total above the buckets' sum counts tokens no
bucket names (such as a Gemini model's thinking tokens, which Vertex AI counts in its total):
they are not counted, and the notes say how many. So the buckets are read as additive, per observation,
unless the observation says otherwise: a sender-given ``total`` below the buckets' sum means an
``input`` that already includes its cache buckets (Langfuse's ingestion warns of this class), and
a raw ``prompt_tokens`` key (a usage Langfuse stored unnormalized) is OpenAI-shaped, the cached
part inside; either reading is refused where ``input`` is below its reads plus writes. An
observation with no cache key at all reports no cache use (not zero). Older observations carry
only ``usage {input, output, total, unit}`` or ``promptTokens`` / ``completionTokens``.

A generation at ``level`` ERROR is a failed call, counted apart; an embedding is not a prompt to
cache. Each session (where the export names it) or else each trace is a lane, its generations in
start order; idle counts from the previous ``endTime``. Where ``input`` holds the chat messages
sent (a list, or ``{"messages", "tools"}`` as Langfuse's OpenAI integration logs it) they are the
request body, so a miss is located on them (the v2 API returns ``input`` as its raw JSON text,
read the same); else the lane is a chain of calls. Who served a call
comes from its model name (:func:`.gateway_usage.provider_of`). ``costDetails.total`` is kept only
as a check on the dollars.

An API page with no observation (``{"data": [], "meta": {...}}`` with Langfuse's page counts) is
bad input said as such (exit 2), as Helicone's empty answer is; in a file of saved pages it adds
nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import Usage
from prefixbench.simulator.wire import Request
from prefixbench.workloads.logs.chat_completions import REASONING_EFFORTS, LineError, parse_request
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, logged_count, logged_dollars_of, objects, parse_time_ms, refuse_lone_surrogates
from prefixbench.workloads.logs.jsonlines import BadJson
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Prefix, TraceRequest

NAME = "langfuse"
#: Langfuse's observation types (``SPAN``, ``EVENT`` and ``GENERATION``; the agent types since v3).
TYPES = frozenset(
    ("GENERATION", "SPAN", "EVENT", "AGENT", "TOOL", "CHAIN", "RETRIEVER", "EVALUATOR", "EMBEDDING", "GUARDRAIL")
)
#: Usage types holding cache reads, as the integrations name them.
READ_KEYS = ("input_cached_tokens", "cache_read_input_tokens", "input_cache_read", "input_cache_read_tokens", "prompt_details.cache_read")
#: Usage types holding cache writes (the 5-minute or unsplit part)...
WRITE_KEYS = (
    "input_cache_creation", "cache_creation_input_tokens", "input_cache_write", "input_cache_creation_tokens",
    "cache_write_input_tokens", "input_cache_creation_5m", "prompt_details.cache_write",
)
#: ... and the 1-hour part, where the integration splits Anthropic's writes by TTL.
WRITE_1H_KEYS = ("input_cache_creation_1h",)
#: Langfuse's OpenTelemetry path before it normalized the conventions' usage attributes
#: (langfuse/langfuse#13110, April 2026) kept each ``gen_ai.usage.*`` attribute's tail as a usage
#: type, beside an ``input`` that is the span's whole ``input_tokens``: these reads and writes are
#: inside ``input``. The first present of each tuple is read, as Langfuse itself picks one (a span
#: may name the same count twice). The conventions' newer write name, ``cache_write.input_tokens``
#: (August 2026), is not among the names Langfuse normalizes, so it is still kept so.
INSIDE_READ_KEYS = ("cache_read.input_tokens", "cache_read_tokens", "details.cache_read_tokens", "details.cache_read_input_tokens")
INSIDE_WRITE_KEYS = (
    "cache_write.input_tokens", "cache_creation.input_tokens", "cache_write_tokens", "details.cache_write_tokens",
    "details.cache_creation_input_tokens",
)
#: From December 2025 (langfuse/langfuse#10974) to #13110 (April 2026) Langfuse wrote pydantic-ai's
#: spans (instrumentation scope ``pydantic-ai``, kept in the observation's ``metadata.scope``) as
#: ``input_cache_read`` / ``input_cache_creation`` beside the span's whole ``input_tokens``: the same
#: keys the LangChain handler writes beside an input it split them out of.
PYDANTIC_AI_SCOPE = "pydantic-ai"
#: LiteLLM's Langfuse callback (``litellm/integrations/langfuse/langfuse.py``) sends Anthropic's two
#: keys beside ``input`` (BerriAI/litellm#10955, May 2025); its metadata carries
#: ``litellm_response_cost`` and ``hidden_params``, its default generation name is
#: ``litellm-<call type>`` (``litellm:<key alias>``). ``input`` was its whole ``prompt_tokens``
#: until #16203 (November 2025), the prompt less the reads since; from #15015 (September 2025) it
#: sends ``total`` = prompt + completion (before, Langfuse summed the buckets). Whether the prompt
#: held the writes follows the LiteLLM release (:mod:`.gateway_usage`). See :func:`litellm_readings`.
LITELLM_METADATA = ("litellm_response_cost", "hidden_params")
LITELLM_KEYS = ("cache_read_input_tokens", "cache_creation_input_tokens")
#: The Python SDK's LangChain handler splits Anthropic's ``cache_creation`` by TTL and keeps the
#: sum too (``cache_creation_input_tokens``): these repeat a write already counted.
SPLIT_WRITE_KEYS = ("cache_creation_ephemeral_5m_input_tokens", "cache_creation_ephemeral_1h_input_tokens")
#: Raw keys of a usage Langfuse stored as it came (the first present is the input or output figure).
INPUT_FIGURES = ("input", "prompt_tokens", "input_tokens", "promptTokens")
OUTPUT_FIGURES = ("output", "completion_tokens", "output_tokens", "completionTokens")
_TOTALS = ("total", "total_tokens", "totalTokens")
#: A sender's total may round; Langfuse's own check allows 1% (at least one token).
_TOLERANCE = 0.01


def _get(value: dict, camel: str, snake: str) -> object:
    """A field of an observation, under its API name or its blob-export column name."""
    return value[camel] if camel in value else value.get(snake)


def _is_observation(value: object) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("type"), str) or value["type"] not in TYPES or "id" not in value:
        return False
    return ("traceId" in value or "trace_id" in value) and ("startTime" in value or "start_time" in value)


def _is_trace(value: dict) -> bool:
    observations = value.get("observations")
    return isinstance(observations, list) and "id" in value and ("timestamp" in value or "sessionId" in value or "htmlPath" in value)


def _is_download(value: dict) -> bool:
    """The UI's trace download: ``{"trace": {...}, "observations": [...]}``."""
    return isinstance(value.get("trace"), dict) and isinstance(value.get("observations"), list)


def _first_is_object(value: dict) -> bool:
    return bool(value) and isinstance(next(iter(value.values())), dict)


def _is_keyed(value: dict) -> bool:
    """The UI's log view copied as JSON: observations keyed by id."""
    first = next(iter(value.values()), None) if value else None
    return _is_observation(first)


def _is_page(value: dict) -> bool:
    data = value.get("data")
    return isinstance(data, list) and isinstance(value.get("meta"), dict) and any(_is_observation(o) or (isinstance(o, dict) and _is_trace(o)) for o in data[:5])


#: What an API page with no observation is said to be. ``{data, meta}`` is a common envelope: it
#: is told apart by the page counts Langfuse's ``meta`` gives (``page``, ``limit``,
#: ``totalItems``, ``totalPages``), and only where nothing claims the file.
EMPTY_PAGE = ("an answer {\"data\": [], \"meta\": {\"totalItems\": ...}} with no observations (Langfuse's API page shape): "
              "nothing to audit")
_PAGE_COUNTS = frozenset(("page", "limit", "totalItems", "totalPages"))


def is_empty_page(value: object) -> bool:
    """A public API page holding nothing: ``{"data": [], "meta": {"page", "limit", "totalItems", "totalPages"}}``."""
    return (isinstance(value, dict) and set(value) == {"data", "meta"} and value["data"] == []
            and isinstance(value["meta"], dict) and _PAGE_COUNTS <= value["meta"].keys())


def detect(value: dict) -> Evidence | None:
    """An observations API page, a trace with its observations, or one observation."""
    if "data" not in value and "observations" not in value and "id" not in value and not _first_is_object(value):
        return None  # (none of the shapes: a page has data, a trace observations, an observation an id)
    if _is_page(value) or (_is_trace(value) or _is_download(value)) and any(_is_observation(o) for o in value["observations"][:5]):
        return Evidence.WRAPPER
    if _is_keyed(value):
        return Evidence.WRAPPER
    return Evidence.SHAPE if _is_observation(value) else None


class _Obs(msgspec.Struct):
    """One observation and what the export says around it."""

    line: int
    value: dict
    session: str | None
    #: Where in its line's record it is when the record holds several (``observations[3]``,
    #: ``data[2].observations[0]``) or shares its line (``[4]``: :attr:`Record.path`); "" else.
    path: str = ""


def _observations(record: Record, where: str) -> Iterator[_Obs]:
    """The observations a record holds (a page, a trace, a list of traces, or one)."""
    value: dict = record.value  # type: ignore[assignment]
    at = f"{record.path}." if record.path else ""
    if _is_observation(value):
        yield _Obs(record.line, value, _session(value), record.path)
        return
    if _is_download(value):
        value = {**value["trace"], "observations": value["observations"]}
        places = None
    elif _is_keyed(value):
        places = [f"{at}[{json.dumps(key)}]" for key in value]
        value = {"data": list(value.values())}
    else:
        places = [f"{at}data[{i}]" for i in range(len(value["data"]))] if isinstance(value.get("data"), list) else None
    items = value.get("data") if isinstance(value.get("data"), list) else [value]
    for i, item in enumerate(items):
        item = as_dict(item)
        place = places[i] if places is not None else at.removesuffix(".")
        if _is_observation(item):
            yield _Obs(record.line, item, _session(item), place)
        elif isinstance(item.get("observations"), list):
            session = _session(item)
            for j, obs in enumerate(item["observations"]):
                if isinstance(obs, str):
                    raise UserError(f"{where}: this trace list names its observations by id only; export the observations (GET /api/public/observations)")
                if _is_observation(obs):
                    yield _Obs(record.line, obs, _session(obs) or session, f"{place}.observations[{j}]" if place else f"observations[{j}]")
        elif item:
            raise UserError(f"{where}: neither a Langfuse observation (id, type, traceId, startTime) nor a trace with observations")


def _session(value: dict) -> str | None:
    session = _get(value, "sessionId", "session_id")
    return session if isinstance(session, str) and session else None


def _number(value: object, where: str, key: str) -> int | None:
    """A usage count: an integer, or digits as ClickHouse quotes 64-bit integers; None when absent."""
    if value is None:
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 19:  # ("²" is a digit to isdigit, no int)
        value = int(value)
    return logged_count(value, where, key)


def _details(value: dict, where: str) -> dict[str, int]:
    """The observation's usage types: ``usageDetails``, else the legacy ``usage`` and token fields."""
    raw = _get(value, "usageDetails", "usage_details")
    if not isinstance(raw, dict) or not raw:
        usage = as_dict(value.get("usage"))
        unit = usage.get("unit")
        if unit is not None and str(unit).upper() != "TOKENS":
            raise _NotTokens(str(unit))
        raw = {k: usage.get(k) for k in ("input", "output", "total") if usage.get(k) is not None}
        if not raw:
            raw = {k: value.get(k) for k in ("promptTokens", "completionTokens", "totalTokens") if value.get(k) is not None}
    out: dict[str, int] = {}
    for key, amount in raw.items():
        if isinstance(amount, (dict, list)):
            continue  # a nested detail Langfuse itself drops
        number = _number(amount, where, f"usageDetails.{key}")
        if number is not None:
            out[str(key)] = number
    return out


class _NotTokens(Exception):
    """Usage counted in another unit (characters, images, seconds)."""


class _Reading(msgspec.Struct, frozen=True):
    usage: Usage
    #: ``additive`` (disjoint buckets), ``inclusive`` (input holds the cache buckets: total says
    #: so), ``raw`` (an OpenAI-shaped prompt_tokens kept unnormalized), ``tails`` (OpenTelemetry
    #: attribute tails inside input: :data:`INSIDE_READ_KEYS`), ``pydantic-ai`` (its
    #: ``input_cache_read`` / ``input_cache_creation`` inside input), ``litellm-...`` (LiteLLM's
    #: callback: :func:`litellm_readings`), or ``none`` (no cache key).
    convention: str
    #: Tokens a sender-given ``total`` counts above the sum of the buckets, which no bucket names
    #: (such as a Gemini model's thinking tokens, which Vertex AI counts in its total): not counted.
    unnamed: int = 0
    #: What decided a LiteLLM observation's reading (:func:`litellm_readings`), else "".
    evidence: str = ""


def _first(details: dict[str, int], keys: tuple[str, ...]) -> tuple[str | None, int]:
    for key in keys:
        if key in details:
            return key, details[key]
    return None, 0


def scope_of(value: dict) -> str | None:
    """The instrumentation scope Langfuse's OpenTelemetry path keeps in an observation's metadata
    (``metadata.scope.name``; the metadata and the scope may be JSON text), or None."""
    scope = _metadata(value).get("scope")
    if isinstance(scope, str) and scope.lstrip()[:1] == "{":
        scope = _decoded(scope)
    name = scope.get("name") if isinstance(scope, dict) else None
    return name if isinstance(name, str) else None


def _metadata(value: dict) -> dict:
    metadata = value.get("metadata")
    if isinstance(metadata, str) and metadata.lstrip()[:1] == "{":
        metadata = _decoded(metadata)
    return metadata if isinstance(metadata, dict) else {}


def from_litellm(value: dict, details: dict[str, int]) -> bool:
    """Whether an observation is one LiteLLM's Langfuse callback sent (:data:`LITELLM_METADATA`,
    or its default generation name), with its usage in that callback's shape."""
    if "input" not in details or not all(k in details for k in LITELLM_KEYS) or tails_of(details) is not None:
        return False
    name = value.get("name")
    named = isinstance(name, str) and name.startswith(("litellm-", "litellm:"))
    return named or any(k in _metadata(value) for k in LITELLM_METADATA)


#: BerriAI/litellm#16203 (the callback's ``input`` less the reads) was opened on 2025-11-03: an
#: observation started before then cannot have been sent so (epoch ms).
LESS_READS_FROM_MS = 1762128000000
#: What decided a LiteLLM observation's reading (:func:`litellm_readings`), for the notes.
LITELLM_EVIDENCE = {
    "total-whole": "its own total (below the buckets' sum by the reads plus the writes)",
    "sum-whole": "its own total (the buckets' sum with writes: Langfuse's own, before BerriAI/litellm#15015)",
    "total-less": "its own total (below the buckets' sum by the writes alone)",
    "below-reads": "its input below its reads",
    "date": "its start before BerriAI/litellm#16203 was opened (2025-11-03)",
    "no-reads": "no reads to place",
    "assumed": "nothing told (no total that tells, no input below its reads, a start since 2025-11-03): assumed whole",
}


def litellm_verdict(details: dict[str, int], start_ms: int | None) -> tuple[bool | None, str]:
    """Whether one observation LiteLLM's callback sent holds its reads inside ``input``, from its
    own numbers, and what told (a :data:`LITELLM_EVIDENCE` key); None where it does not tell.

    A sender's ``total`` (prompt + completion) below the buckets' sum by the reads plus the writes
    means the whole prompt; by the writes alone (some writes), the prompt less the reads; a total
    equal to the sum with writes is Langfuse's own (before the callback sent one: the whole
    prompt). A total equal to the sum without writes does not tell (less the reads, it is the
    callback's; whole, Langfuse's). Else an ``input`` below its reads rules the whole prompt out,
    and a start before #16203 rules less the reads out.
    """
    read, written = details["cache_read_input_tokens"], details["cache_creation_input_tokens"]
    if read == 0:
        return None, "no-reads"
    if "total" in details:
        extra = sum(n for k, n in details.items() if k not in _TOTALS) - details["total"]
        if extra == read + written:
            return True, "total-whole"
        if written > 0 and extra == 0:
            return True, "sum-whole"
        if written > 0 and extra == written:
            return False, "total-less"
    if details["input"] < read:
        return False, "below-reads"
    if start_ms is not None and start_ms < LESS_READS_FROM_MS:
        return True, "date"
    return None, "assumed"


def litellm_readings(observations: Sequence[tuple[dict[str, int], int | None, str, str]]) -> list[tuple[tuple[bool | None, bool], str]]:
    """For the observations of one file that LiteLLM's callback sent, each given as (usage types,
    start in epoch ms or None, where, its line as the notes name it), ((reads inside ``input``, writes inside ``input``), what
    decided it: a :data:`LITELLM_EVIDENCE` key, or ``file:<line>`` where another observation's
    own numbers decided for the file). See :func:`litellm_verdict`.

    Where the observations whose own numbers tell (not their start: a date rules one reading out
    for that observation alone) agree, the rest read as they do; where none tells, the whole
    prompt is assumed; where the verdicts disagree (a file spanning LiteLLM releases) each reads
    as its own numbers (or start) tell, and one that does not tell is refused. Reads None where
    the file has no read (nothing to place). Writes: inside unless some ``input`` is below what
    it would then hold (older LiteLLM left them out of ``prompt_tokens``), decided per release:
    over the observations read the same way (in a file of one release, the whole file).

    Raises:
        UserError: a file mixing LiteLLM releases with an observation whose own numbers do not tell.
    """
    verdicts = [litellm_verdict(d, start) for d, start, _, _ in observations]
    told = {reads: line for (reads, _), (_, _, _, line) in zip(verdicts, observations) if reads is not None}
    # Only an observation's own numbers decide others: its start says nothing of a later one's.
    by_numbers = {reads: line for (reads, why), (_, _, _, line) in zip(verdicts, observations)
                  if reads is not None and why != "date"}
    any_read = any(d["cache_read_input_tokens"] for d, _, _, _ in observations)
    mixed = len(told) > 1
    decided: list[tuple[bool | None, str]] = []
    for (reads, why), (_, _, where, _) in zip(verdicts, observations):
        if reads is not None:
            decided.append((reads, why))
        elif not any_read:
            decided.append((None, "no-reads"))
        elif mixed:
            if why != "no-reads":
                raise UserError(
                    f"{where}: LiteLLM's input here cannot be told from its own numbers, and the file has mixed LiteLLM "
                    f"releases ({told[True]} reads the whole prompt, {told[False]} the prompt less the reads)"
                )
            decided.append((None, "no-reads"))
        elif by_numbers:
            reads = next(iter(by_numbers))
            decided.append((reads, why if why == "no-reads" else f"file:{by_numbers[reads]}"))
        else:
            decided.append((True, why))

    def below(d: dict[str, int], reads: bool | None) -> bool:
        return d["input"] < (d["cache_read_input_tokens"] if reads else 0) + d["cache_creation_input_tokens"]

    # A release's writes: one file of two releases (an older LiteLLM whose prompt_tokens left the
    # writes out, a newer one whose held them) decides each apart.
    groups = [reads if mixed else None for reads, _ in decided]
    writes_out = {group for group, (reads, _), (d, _, _, _) in zip(groups, decided, observations) if below(d, reads)}
    return [((reads, group not in writes_out), why) for group, (reads, why) in zip(groups, decided)]


def tails_of(details: dict[str, int]) -> int | None:
    """The reads plus writes an observation names by OpenTelemetry attribute tails
    (:data:`INSIDE_READ_KEYS`, :data:`INSIDE_WRITE_KEYS`; the first of each present), or None
    where it names none."""
    read_key, read = _first(details, INSIDE_READ_KEYS)
    write_key, written = _first(details, INSIDE_WRITE_KEYS)
    return None if read_key is None and write_key is None else read + written


def read_details(details: dict[str, int], where: str, *, scope: str | None = None,
                 litellm: tuple[tuple[bool | None, bool], str] | None = None, tails_inside: bool = True) -> _Reading:
    """One observation's usage types as the normalized usage; see the module doc. ``scope``: the
    instrumentation scope the observation's metadata names (:func:`scope_of`). ``litellm``: for an
    observation LiteLLM's callback sent (:func:`from_litellm`), whether its ``input`` holds the
    reads and the writes and what decided it (:func:`litellm_readings`), else None. ``tails_inside``: whether its
    file's attribute tails lie inside ``input`` (the conventions' reading) or beside it (an
    instrumentation that copied Anthropic's uncached ``input_tokens``: some input is below them).

    Raises:
        UserError: reads and writes above an input that must include them.
    """
    input_key, input_n = _first(details, INPUT_FIGURES)
    output_key, output_n = _first(details, OUTPUT_FIGURES)
    inside_read_key, inside_read = _first(details, INSIDE_READ_KEYS)
    inside_write_key, inside_write = _first(details, INSIDE_WRITE_KEYS)
    inside = inside_read_key is not None or inside_write_key is not None
    read_n = sum(details[k] for k in READ_KEYS if k in details) + inside_read
    long_n = sum(details[k] for k in WRITE_1H_KEYS if k in details)
    write_n = sum(details[k] for k in WRITE_KEYS if k in details) + long_n + inside_write
    if not any(k in details for k in WRITE_KEYS + WRITE_1H_KEYS) and any(k in details for k in SPLIT_WRITE_KEYS):
        long_n = details.get(SPLIT_WRITE_KEYS[1], 0)
        write_n = details.get(SPLIT_WRITE_KEYS[0], 0) + long_n
    elif not any(k in details for k in WRITE_1H_KEYS):
        long_n = min(details.get(SPLIT_WRITE_KEYS[1], 0), write_n)  # the TTL split of a sum counted above
    reported = read_n + write_n > 0 or inside or any(k in details for k in READ_KEYS + WRITE_KEYS + WRITE_1H_KEYS + SPLIT_WRITE_KEYS)
    cache = set(READ_KEYS + WRITE_KEYS + WRITE_1H_KEYS + SPLIT_WRITE_KEYS + INSIDE_READ_KEYS + INSIDE_WRITE_KEYS)
    # Other input buckets (input_audio_tokens, input_text_tokens...) were split out of input too.
    other_in = sum(n for k, n in details.items() if k.startswith("input_") and k not in cache and "priority" not in k)
    other_out = sum(n for k, n in details.items() if k.startswith("output_") and "priority" not in k)
    total_key, total_n = _first(details, _TOTALS)
    buckets = sum(n for k, n in details.items() if k not in _TOTALS and k not in SPLIT_WRITE_KEYS and "priority" not in k)
    given_total = total_key is not None and buckets > total_n + max(1, total_n * _TOLERANCE)
    unnamed = total_n - buckets if total_key is not None and total_n > buckets + max(1, total_n * _TOLERANCE) else 0
    # Told by input_cache_read: since #13110 the same spans carry input_cached_tokens instead (and
    # input_cache_creation, now split out of input), so a write-only one of the window stays additive.
    pydantic_ai = scope == PYDANTIC_AI_SCOPE and "input_cache_read" in details and "input_cached_tokens" not in details
    if pydantic_ai and input_n < read_n + write_n:
        raise UserError(f"{where}: pydantic-ai's cache reads ({read_n}) and writes ({write_n}) exceed the input ({input_n}) that includes them")
    inclusive = ((given_total or pydantic_ai or input_key in ("prompt_tokens", "promptTokens"))
                 and input_n >= read_n + write_n and read_n + write_n > 0)
    evidence = ""
    if litellm is not None and not inside:
        (reads_in, writes_in), evidence = litellm
        held = (details["cache_read_input_tokens"] if reads_in else 0) + (details["cache_creation_input_tokens"] if writes_in else 0)
        if input_n < held:
            raise UserError(f"{where}: the cache tokens ({held}) this file's LiteLLM counts inside input exceed it ({input_n})")
        uncached = input_n - held + other_in
        output = output_n + other_out
        reads = "no-reads" if reads_in is None else "whole" if reads_in else "less-reads"
        convention = f"litellm-{reads}-{'with' if writes_in else 'without'}-writes"
    elif inside:
        # The attribute tails are inside input (other cache buckets, where the newest path split
        # some out beside a tail it does not know, are not).
        held = inside_read + inside_write if tails_inside else 0
        if input_n < held:
            named = ", ".join(f"{k} ({n})" for k, n in ((inside_read_key, inside_read), (inside_write_key, inside_write)) if k)
            raise UserError(f"{where}: {named} exceed the input ({input_n}) that includes them")
        uncached = input_n - held + other_in
        output = output_n + other_out
        convention = "tails" if tails_inside else "tails-beside"
    elif inclusive:
        uncached = input_n - read_n - write_n
        output = output_n if given_total else output_n + other_out
        convention = "inclusive" if given_total else "pydantic-ai" if pydantic_ai else "raw"
    else:
        uncached = input_n + other_in
        output = output_n + other_out
        convention = "additive" if reported else "none"
    if output_key is None and input_key is None and not reported:
        raise UserError(f"{where}: no token counts in usageDetails")
    return _Reading(Usage(read_n, write_n - long_n, long_n, uncached, output, cache_reported=reported), convention, unnamed, evidence)


def _messages(raw: object) -> tuple[list | None, list | None]:
    """The chat messages and tools an observation's input holds, as Langfuse's integrations log them.
    The v2 observations API returns ``input`` as the raw string Langfuse stored (``parseIoAsJson``
    is refused there): JSON text of a list or an object is read as that value; other text (a plain
    prompt) holds no messages."""
    if isinstance(raw, str) and raw.lstrip()[:1] in ("[", "{"):
        raw = _decoded(raw)
    if isinstance(raw, dict):
        messages = raw.get("messages")
        tools = raw.get("tools")
        return (messages if isinstance(messages, list) else None), (tools if isinstance(tools, list) else None)
    return (raw if isinstance(raw, list) else None), None


def _decoded(text: str) -> object:
    """The value JSON ``text`` holds; None where it holds none (malformed, a number out of range,
    nested too deep). Text with a lone surrogate (an escape the file's own JSON decoded into it),
    which msgspec cannot encode to decode, is read by ``json``: the caller refuses it in one line,
    as it does the same messages given as a list."""
    try:
        return msgspec.json.decode(text)
    except UnicodeEncodeError:
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return None
    except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError
        return None


def _body(value: dict, provider: str, model: str, effort: str | None, where: str) -> Request | None:
    """The messages a generation sent, as a wire Request; None when its input holds none."""
    messages, tools = _messages(value.get("input"))
    if not messages or not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
        return None
    refuse_lone_surrogates(messages, where, "input")
    body: dict = {"provider": provider, "model": model, "messages": messages}
    if tools:
        refuse_lone_surrogates(tools, where, "input.tools")
        body["tools"] = tools
    if effort is not None:
        body["reasoning_effort"] = effort
    try:
        return parse_request(body)
    except (LineError, BadJson):
        return None


def _cost(value: dict) -> float | None:
    """Langfuse's own total cost of the observation, where it has one."""
    details = as_dict(_get(value, "costDetails", "cost_details"))
    return logged_dollars_of((details.get("total"), value.get("calculatedTotalCost"), _get(value, "totalCost", "total_cost")), text=True)


class _Call(msgspec.Struct):
    obs: _Obs
    where: str
    reading: _Reading
    model: str
    provider: str
    sent_ms: int | None
    ready_ms: int | None
    done_ms: int | None
    lane: str
    effort: str | None
    #: The engine the user runs that the model's route names (gateway_usage.served_by), else "".
    upstream: str = ""
    #: The usage types of an observation LiteLLM's callback sent (read again where its file's
    #: LiteLLM left the writes out of the prompt), else None.
    litellm: dict | None = None
    #: The usage types of an observation naming OpenTelemetry attribute tails (read again where
    #: its file's tails lie beside input), else None.
    tails: dict | None = None


def _model(value: dict) -> str:
    model = value.get("model") or _get(value, "providedModelName", "provided_model_name")
    return model if isinstance(model, str) and model else NO_MODEL


def _effort(value: dict) -> str | None:
    effort = as_dict(_get(value, "modelParameters", "model_parameters")).get("reasoning_effort")
    return effort if isinstance(effort, str) and effort in REASONING_EFFORTS else None


def _writes_named(details: dict[str, int]) -> bool:
    return any(k in details for k in WRITE_KEYS + WRITE_1H_KEYS + SPLIT_WRITE_KEYS + INSIDE_WRITE_KEYS)


def _reread(call: _Call, reading: _Reading) -> _Call:
    """``call`` read again as its file decided, its writes not reported where they were not before."""
    details = call.tails if call.tails is not None else call.litellm
    usage = gateway_usage.writes_unknown_unless_named(reading.usage, _writes_named(details or {}), call.provider)
    return msgspec.structs.replace(call, reading=msgspec.structs.replace(reading, usage=usage))


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The generations of a Langfuse export; see the module doc."""
    name = str(path)
    skipped: list[tuple[int, str]] = []
    calls: list[_Call] = []
    seen: set[str] = set()
    spans = writes_unknown = 0
    cost = 0.0
    for record in objects(path, records, " (a Langfuse observation, trace or observations page)"):
        where = f"{name}:{record.line}"
        if is_empty_page(record.value):
            continue  # (a page of a saved series with nothing on it; a file of only such pages is said empty)
        if detect(record.value) is None:  # type: ignore[arg-type]
            raise UserError(f"{where}: neither a Langfuse observation (id, type, traceId, startTime) nor a trace or page of them")
        for obs in _observations(record, where):
            value = obs.value
            oid = str(value.get("id"))
            kind = value.get("type")
            if kind != "GENERATION":
                spans += 1
                if kind == "EMBEDDING":
                    skipped.append((obs.line, f"embedding {oid}: no prompt to cache"))
                continue
            if oid in seen:
                skipped.append((obs.line, f"generation {oid} repeated: counted once"))
                continue
            seen.add(oid)
            here = f"{where}: observation {oid:.60}"
            if str(value.get("level", "")).upper() == "ERROR":
                message = value.get("statusMessage", value.get("status_message"))
                skipped.append((obs.line, f"failed generation {oid:.60} (level ERROR{': ' + str(message)[:80] if message else ''})"))
                continue
            try:
                details = _details(value, here)
            except _NotTokens as unit:
                skipped.append((obs.line, f"generation {oid:.60}: usage in {str(unit)[:20]}, not tokens"))
                continue
            if not details:
                skipped.append((obs.line, f"generation {oid:.60}: no usage"))
                continue
            litellm = from_litellm(value, details)
            # (read again below, once the file's own numbers say what its input held)
            tails = tails_of(details)
            reading = read_details(details, here, scope=scope_of(value), litellm=((False, False), "") if litellm else None,
                                   tails_inside=tails is None or _first(details, INPUT_FIGURES)[1] >= tails)
            model = _model(value)
            shaped = any(k in details for k in ("cache_read_input_tokens", "cache_creation_input_tokens"))
            provider = gateway_usage.provider_of(model, shaped)
            # A provider that bills writes apart, its usage without a write bucket: what the
            # call wrote is unknown (inside nothing counted), not 0.
            named = _writes_named(details)
            usage = gateway_usage.writes_unknown_unless_named(reading.usage, named, provider)
            if usage is not reading.usage:
                reading = msgspec.structs.replace(reading, usage=usage)
                writes_unknown += 1
            trace = _get(value, "traceId", "trace_id")
            lane = obs.session or (str(trace) if isinstance(trace, (str, int)) and trace != "" else "main")
            spent = _cost(value)
            cost += spent or 0.0
            calls.append(
                _Call(
                    obs, here, reading, model.rsplit("/", 1)[-1] or NO_MODEL, provider,
                    parse_time_ms(_get(value, "startTime", "start_time"), here),
                    parse_time_ms(_get(value, "completionStartTime", "completion_start_time"), here),
                    parse_time_ms(_get(value, "endTime", "end_time"), here),
                    lane, _effort(value), gateway_usage.served_by(model, ""), details if litellm else None,
                    details if tails is not None else None,
                )
            )
    # Attribute tails: inside input (the conventions' reading) unless some input is below its own,
    # decided for the file as the otel reader decides its spans.
    if any(c.tails is not None and _first(c.tails, INPUT_FIGURES)[1] < (tails_of(c.tails) or 0) for c in calls):
        calls = [c if c.tails is None else _reread(c, read_details(c.tails, c.where, tails_inside=False)) for c in calls]
    # LiteLLM's callback: what its input held, decided from the file's own numbers (litellm_readings).
    sent = [(c.litellm, c.sent_ms, c.where, f"line {c.obs.line}") for c in calls if c.litellm is not None]
    if sent:
        held = iter(litellm_readings(sent))
        calls = [c if c.litellm is None else _reread(c, read_details(c.litellm, c.where, litellm=next(held))) for c in calls]
    if not calls:
        raise UserError(f"{name}:1: no generation with token usage among the observations ({len(skipped)} skipped, {spans} spans and events)")
    calls.sort(key=lambda c: (c.sent_ms is None, c.sent_ms or 0, c.obs.line))
    bodies = [_body(c.obs.value, c.provider, c.model, c.effort, c.where) for c in calls]
    # A lane is read one way: as bodies, or as a chain.
    chained = {c.lane for c, b in zip(calls, bodies) if b is None}
    bodies = [None if c.lane in chained else b for c, b in zip(calls, bodies)]
    out: list[TraceRequest] = []
    last_node: dict[str, str] = {}
    conventions: dict[str, int] = {}
    evidence: dict[str, dict[str, int]] = {}
    unnamed = [call.reading.unnamed for call in calls if call.reading.unnamed]
    for call, body in zip(calls, bodies):
        conventions[call.reading.convention] = conventions.get(call.reading.convention, 0) + 1
        if call.reading.evidence:
            told = evidence.setdefault(call.reading.convention, {})
            told[call.reading.evidence] = told.get(call.reading.evidence, 0) + 1
        oid = str(call.obs.value.get("id"))
        node = f"langfuse:{name}#{call.lane}:{oid}"
        out.append(
            TraceRequest(
                file=name,
                line=call.obs.line,
                path=call.obs.path,
                lane=call.lane,
                lane_kind="main",
                seq=len(out),
                sent_ms=call.sent_ms,
                ready_ms=call.ready_ms,
                provider=call.provider,
                model=call.model,
                envelope=(("effort", call.effort),) if call.effort else (),
                usage=call.reading.usage,
                body=body,
                prefix=None if body is not None else Prefix(f"langfuse:{call.provider}:{call.model}", node, last_node.get(call.lane)),
                request_id=oid,
                source_format=NAME,
                done_ms=call.done_ms,
                upstream=call.upstream,
            )
        )
        last_node[call.lane] = node
    notes = _notes(conventions, cost, len(chained), len(out), spans, evidence)
    if any(k.startswith("litellm-whole-") for k in conventions) and any(k.startswith("litellm-less-reads-") for k in conventions):
        notes.append("mixed LiteLLM releases: some generations' own numbers say input is the whole prompt_tokens, others' less the reads; "
                     "each is read as its own numbers (or its start) tell")
    if writes_unknown:
        notes.append(f"{writes_unknown} generation(s) of a provider that bills cache writes apart have no write bucket in usageDetails "
                     "(no input_cache_creation, cache_creation_input_tokens or the like): what they wrote is not reported, not 0")
    if unnamed:
        notes.append(
            f"{len(unnamed)} generation(s): usageDetails.total is {sum(unnamed):,} tokens above the sum of the buckets, tokens no "
            "bucket names (such as a Gemini model's thinking tokens, which Vertex AI counts in its total): not counted"
        )
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(notes))


#: What each reading of usageDetails says, for the notes.
_LITELLM_INPUT = {
    "whole": "whole prompt_tokens (before BerriAI/litellm#16203)",
    "less-reads": "prompt_tokens less the reads (since BerriAI/litellm#16203)",
    "no-reads": "prompt_tokens (no call read the cache: whether less the reads cannot be told, nor matters)",
}
READINGS = {
    "additive": "usageDetails buckets are disjoint (Langfuse splits cache reads and writes out of input): uncached = input (+ other input_* buckets)",
    "inclusive": "the sender's total is below the sum of the buckets, so input includes the cache buckets: uncached = input - read - written",
    "raw": "a raw OpenAI-shaped prompt_tokens (a usage Langfuse stored unnormalized) includes the cached part: uncached = prompt_tokens - read - written",
    "none": "no cache key in usageDetails: cache use not reported, not zero",
    "pydantic-ai": ("pydantic-ai's spans as Langfuse wrote them from December 2025 to April 2026 (langfuse#10974 to #13110): "
                    "input_cache_read / input_cache_creation beside the whole input_tokens: uncached = input - read - written"),
    **{f"litellm-{reads}-{writes}-writes": (
        f"sent by LiteLLM's Langfuse callback: input is its {_LITELLM_INPUT[reads]}, "
        f"{'the writes inside it' if writes == 'with' else 'without the writes (an older LiteLLM: some input below them)'}: "
        f"uncached = input{' - cache_read_input_tokens' if reads == 'whole' else ''}{' - cache_creation_input_tokens' if writes == 'with' else ''}")
       for reads in _LITELLM_INPUT for writes in ("with", "without")},
    "tails-beside": ("OpenTelemetry attribute tails kept as usage types, beside input: some input is below its tails "
                     "(an instrumentation that copied Anthropic's uncached input_tokens): uncached = input"),
    "tails": ("OpenTelemetry attribute tails kept as usage types (cache_read.input_tokens, cache_creation.input_tokens, "
              "cache_read_tokens, cache_write_tokens...: Langfuse before langfuse#13110, April 2026, and its newest for "
              "cache_write.input_tokens) are inside input: uncached = input - read - written"),
}


# Where each LITELLM_EVIDENCE key stands in its order (the evidence is listed in that order).
_EVIDENCE_RANK = {why: n for n, why in enumerate(LITELLM_EVIDENCE)}


def _evidence_order(item: tuple[str, int]) -> tuple[int, str]:
    return (_EVIDENCE_RANK.get(item[0], len(_EVIDENCE_RANK)), item[0])


def _told(why: str) -> str:
    if why.startswith("file:"):
        return f"the file's others, as {why[5:]} tells by its own numbers"
    return LITELLM_EVIDENCE[why]


def _reading(kind: str, told: dict[str, int]) -> str:
    """What a reading says, for the notes: a whole prompt nothing told is assumed, and no release is
    claimed for it (the callback sent it so before BerriAI/litellm#16203, but a later release whose
    numbers do not tell it apart may have sent what is read so)."""
    text = READINGS[kind]
    if kind.startswith("litellm-whole-") and "assumed" in told:
        said = "(before BerriAI/litellm#16203)"
        text = text.replace(said, "(assumed: nothing shows which LiteLLM release sent it)" if len(told) == 1
                            else "(before BerriAI/litellm#16203 where its own numbers or start tell; assumed for the rest)")
    return text


def _notes(conventions: dict[str, int], cost: float, chained_lanes: int, requests: int, spans: int,
           evidence: dict[str, dict[str, int]]) -> list[str]:
    notes = [
        f"{n} generation(s): {_reading(kind, evidence.get(kind, {}))}"
        + ("; what decided it: " + "; ".join(f"{_told(why)} ({k})" for why, k in sorted(evidence[kind].items(), key=_evidence_order))
           if kind in evidence else "")
        for kind, n in sorted(conventions.items())
    ]
    if chained_lanes:
        notes.append("generations whose input holds no chat messages are read as chains: one per session, else per trace, in start order")
    if cost:
        notes.append(f"Langfuse's own cost figures (costDetails.total, else calculatedTotalCost) sum to ${cost:.4f} (a check on the dollars here)")
    if spans:
        notes.append(f"{spans} span(s), event(s) and other non-generation observation(s) are not model calls")
    return notes


FORMAT = LogFormat(
    name=NAME,
    noun="Langfuse observation export",
    nouns="Langfuse observation exports",
    description="Langfuse observations: GET /api/public/observations pages, traces with their observations, UI and blob-storage exports",
    detect=detect,
    read=read,
    usage="by-endpoint",
    versions=(
        "usage {input, output, total, unit} and promptTokens / completionTokens only (before usageDetails, late 2024): cache not reported",
        "usageDetails from the OpenAI integration: input_cached_tokens split out of input (additive), output_reasoning_tokens out of output",
        "usageDetails from the LangChain handler: input_cache_read / input_cache_creation, or Anthropic's cache_read_input_tokens / cache_creation_input_tokens beside its uncached input",
        "usageDetails from OpenTelemetry ingestion: input_cached_tokens, input_cache_creation (_5m, _1h)",
        "an input that includes its cache buckets (a sender's total below their sum), or a raw prompt_tokens kept unnormalized",
        "older OpenTelemetry keys: prompt_details.cache_read inside input, completion_details.reasoning inside output (total = input + output)",
        "LiteLLM's Langfuse callback (BerriAI/litellm#10955, May 2025): input = its whole prompt_tokens beside cache_read_input_tokens / "
        "cache_creation_input_tokens, total from #15015 (September 2025), input less the reads from #16203 (November 2025); "
        "the writes inside input where that LiteLLM's prompt_tokens held them",
        "pydantic-ai spans (metadata.scope.name pydantic-ai), December 2025 to April 2026: input_cache_read / input_cache_creation inside input",
        "OpenTelemetry conventions' keys kept as their attribute tails (before langfuse#13110, April 2026): cache_read.input_tokens, "
        "cache_creation.input_tokens, pydantic-ai's cache_read_tokens / cache_write_tokens and details.*, inside input; "
        "cache_write.input_tokens (the conventions' name since August 2026) still so",
        "API pages {data, meta} (v1 and v2), traces with observations and sessionId, JSON arrays and JSONL, the blob-storage export's snake_case columns",
        "the UI's trace download {trace, observations} and its log view (observations keyed by id)",
    ),
)
