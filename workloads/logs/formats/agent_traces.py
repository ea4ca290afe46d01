"""Block-hash agent traces: kv-cache-tester's (AgentX kind), one JSON object per conversation.

A conversation names its ``block_size`` (64 in the published traces), ``hash_id_scope``,
``tool_tokens`` and ``system_tokens``, ``totals`` and its ``requests``: per request ``t``
(seconds from the conversation's start), ``type`` (``s`` streaming, ``n`` non-streaming,
``subagent`` a nested entry with its own ``requests`` whose ``t`` count from the entry's own
``t``), ``model``, ``in``, ``out`` and ``hash_ids`` (one id per full block of the prompt: equal
ids are equal prefix blocks; the tail shorter than a block has none), and optional
``api_time``, ``think_time`` and ``ttft`` (seconds).

Where a request's ids cannot be its prompt's full blocks (fewer than the whole ``block_size``
blocks ``in`` holds, or more than it can hold), the conversation's ids were hashed over blocks of
another size (the traces kv-cache-tester built from its agentic proxy's database,
``traces_neon/``: ids over about 85 of the prompt's tokens each, against a declared 64); each id
of that conversation is then read as one size wherever it is sent: its even share of what the
request that first sent it held past its ids sent before (what the cache holds under it), and
the file's note counts those requests. Read as ``block_size``
tokens, a prompt re-sent whole would be predicted to read only part of itself.

``hash_id_scope`` says which contexts share ids: ``global`` (the v6 set) and ``local`` (the
v8 set, and the traces NVIDIA's aiperf converts from TraceLab) the parent and its subagents,
one namespace per conversation (kv-cache-tester's README: "scoped per conversation, with
sub-agents sharing the parent's namespace"); ``per_context``, the default of the traces that
predate the field, whose subagents number their blocks from 1 again, each context its own. Ids
are namespaced here accordingly (per file, conversation and scope), so no two conversations
ever share a block (``global`` ids were minted over a whole build run, but a set of files need
not come from one run, and the replay tester keys blocks by conversation too). No usage is reported: the audit predicts only, as
for a Mooncake trace. The file is usually one object, compact or pretty-printed; several
conversations as JSON lines read too.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers.base import count
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import id_space
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LaneKind, Provider, TraceRequest

NAME = "agent-traces"
#: The block size when a conversation does not name one (the published traces' and the
#: replay tester's default).
DEFAULT_BLOCK_TOKENS = 64
#: The largest block a trace may declare (tokens per hash id).
MAX_BLOCK_TOKENS = 1 << 20
#: ``hash_id_scope`` values: whether the subagents' ids are the parent's (``local``: one
#: namespace per conversation, its subagents' included).
SHARED_SCOPES = frozenset({"global", "local"})
OWN_SCOPES = frozenset({"per_context"})
#: The scope of a trace that does not say (the first published set: ids per context).
DEFAULT_SCOPE = "per_context"
#: A request's timestamps are at most this many seconds after the conversation's start.
MAX_SECONDS = 10**9
SUBAGENT = "subagent"


def detect(value: dict) -> Evidence | None:
    """A conversation: requests under a block size and the unlogged head's token counts."""
    if not isinstance(value.get("requests"), list) or "block_size" not in value:
        return None
    return Evidence.WRAPPER if "hash_id_scope" in value or "tool_tokens" in value or "system_tokens" in value else None


def _provider() -> Provider:
    """The hash ids model a self-hosted engine's block cache, not a provider's."""
    return "engine"


class _Conversation(msgspec.Struct):
    """What the requests of one conversation (record) share while it is read."""

    file: str
    line: int
    block_tokens: int
    shared_ids: bool
    #: The namespace of this file and conversation; a context's ids are keyed under it.
    key: str
    out: list[TraceRequest]
    #: Whether some request's ids cannot be ``block_tokens``-token blocks of its prompt.
    misfit: bool = False
    #: Whether some request gives no ``in`` or no ``out`` (its lengths then not summed).
    unmeasured: bool = False
    #: Raw id to namespaced id, per context: a block repeated by every later request of a lane
    #: is one object, not one per request.
    ids: dict[str, dict[int | str, int | str]] = msgspec.field(default_factory=dict)


def _number(value: object, where: str, key: str, *, required: bool) -> float | None:
    """Seconds: a finite non-negative number (absent: None, or an error when ``required``)."""
    if value is None and not required:
        return None
    # The range first: NaN and the infinities fail it, and an integer too large for a float is
    # compared exactly (math.isfinite of 10**400 raised OverflowError).
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_SECONDS:
        raise UserError(f"{where}: {key} is not a number of seconds ({value!r:.40})")
    return float(value)


def _namespaced(conv: _Conversation, context: str, hashes: object, where: str) -> tuple[int | str, ...]:
    """The request's ids in its context's namespace (see the module doc)."""
    if not isinstance(hashes, list):
        raise UserError(f"{where}: hash_ids must be a list of block ids")
    scope = conv.key if conv.shared_ids else f"{conv.key}\0{context}"
    table = conv.ids.get(scope)
    if table is None:
        table = conv.ids[scope] = {}
    if not set(map(type, hashes)) <= {int, str}:  # per element in C, as for the new ids below
        raise UserError(f"{where}: hash_ids must be non-negative 64-bit integers or non-empty strings")
    new = set(hashes).difference(table)  # most ids repeat the previous request's
    if new:
        _check_ids(new, where)
        prefix = id_space(scope)
        for raw in new:
            table[raw] = prefix | raw if type(raw) is int else f"{prefix:x}:{raw}"
    return tuple(map(table.__getitem__, hashes))


def _check_ids(ids: set, where: str) -> None:
    """Block ids are non-negative integers below 2**64 or non-empty strings."""
    numbers = {i for i in ids if type(i) is int}
    if "" in ids or (numbers and (min(numbers) < 0 or max(numbers) >> 64)):
        raise UserError(f"{where}: hash_ids must be non-negative 64-bit integers or non-empty strings")


def _request(conv: _Conversation, value: dict, lane: str, kind: LaneKind, base_s: float, where: str) -> TraceRequest:
    sent_s = base_s + (_number(value.get("t"), where, "t", required=True) or 0.0)
    ttft = _number(value.get("ttft"), where, "ttft", required=False)
    api_time = _number(value.get("api_time"), where, "api_time", required=False)
    model = value.get("model")
    if model is not None and not isinstance(model, str):
        raise UserError(f"{where}: model is not a string ({model!r:.40})")
    hashes = _namespaced(conv, lane, value.get("hash_ids"), where)
    length = count(value.get("in"), where, "in")
    conv.unmeasured = conv.unmeasured or value.get("in") is None or value.get("out") is None
    conv.misfit = conv.misfit or not _fits(conv.block_tokens, length, len(hashes))
    sent_ms = round(sent_s * 1000)
    return TraceRequest(
        file=conv.file,
        line=conv.line,
        lane=lane,
        lane_kind=kind,
        seq=len(conv.out),
        sent_ms=sent_ms,  # ms since the conversation's start
        ready_ms=None if ttft is None else sent_ms + round(ttft * 1000),
        done_ms=None if api_time is None else sent_ms + round(api_time * 1000),
        provider=_provider(),
        model=model or NO_MODEL,
        envelope=(("input_length", str(length)), ("output_length", str(count(value.get("out"), where, "out")))),
        hash_ids=hashes,
        block_tokens=(conv.block_tokens,) * len(hashes),  # spread by _conversation where the ids do not fit
        source_format=NAME,
        path=where.rpartition(": ")[2],  # requests[2].requests[0]: every request of the file is on its line
    )


def _fits(block: int, length: int, n: int) -> bool:
    """Whether ``n`` ids can be ``block``-token blocks of a ``length``-token prompt: its whole
    blocks (with its tail or without), or none."""
    return not n or length // block <= n <= -(-length // block)


def _even(length: int, n: int) -> tuple[int, ...]:
    """``length`` tokens over ``n`` ids as evenly as whole tokens go: the first ``k`` hold
    ``length * k // n`` (none where ``n`` is 0)."""
    return tuple(length * (i + 1) // n - length * i // n for i in range(n))


def _lane(conv: _Conversation, entries: object, lane: str, kind: LaneKind, base_s: float, where: str) -> None:
    """Read one context's requests into ``conv.out``, its subagents each as a lane of their own."""
    if not isinstance(entries, list):
        raise UserError(f"{where}: requests must be a list")
    agents = 0
    for n, entry in enumerate(entries):
        at = f"{where}[{n}]"
        if not isinstance(entry, dict):
            raise UserError(f"{at}: expected a request object")
        if entry.get("type") != SUBAGENT:
            conv.out.append(_request(conv, entry, lane, kind, base_s, at))
            continue
        agents += 1
        agent = entry.get("agent_id")
        name = agent if isinstance(agent, str) and agent else f"subagent-{agents}"
        start = base_s + (_number(entry.get("t"), at, "t", required=True) or 0.0)
        _lane(conv, entry.get("requests", []), f"{lane}/{name}", "subagent", start, f"{at}.requests")


def _block_tokens(value: dict, where: str) -> int:
    size = value.get("block_size", DEFAULT_BLOCK_TOKENS)
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= MAX_BLOCK_TOKENS:
        raise UserError(f"{where}: block_size is not a block size in tokens (1..{MAX_BLOCK_TOKENS:,}): {size!r:.40}")
    return size


def _shared_ids(value: dict, where: str) -> bool:
    scope = value.get("hash_id_scope", DEFAULT_SCOPE)
    if isinstance(scope, str) and scope in SHARED_SCOPES:  # (a list or an object would not hash)
        return True
    if isinstance(scope, str) and scope in OWN_SCOPES:
        return False
    known = ", ".join(sorted(SHARED_SCOPES | OWN_SCOPES))
    raise UserError(f"{where}: hash_id_scope {scope!r:.40} is none of {known}")


def _conversation(name: str, ordinal: int, record: Record, out: list[TraceRequest], lanes: set[str]) -> tuple[int, bool]:
    """Read one conversation's requests into ``out``; how many of them had their prompt spread
    over their ids (all of them where some request's ids cannot be its blocks, else none), and
    whether every one of them gives its ``in`` and ``out``."""
    where = f"{name}:{record.line}"
    value = record.value
    if not isinstance(value, dict) or detect(value) is None:
        raise UserError(f"{where}: expected a conversation object with block_size and requests")
    ident = value.get("id")
    lane = ident if isinstance(ident, str) and ident else f"conversation-{ordinal + 1}"
    if lane in lanes:
        lane = f"{lane}#{ordinal + 1}"
    lanes.add(lane)
    conv = _Conversation(name, record.line, _block_tokens(value, where), _shared_ids(value, where), f"{name}\0{ordinal}", out)
    start = len(out)
    _lane(conv, value["requests"], lane, "main", 0.0, f"{where}: requests")
    if not conv.misfit:
        return 0, not conv.unmeasured
    _spread(out, start)
    return len(out) - start, not conv.unmeasured


def _spread(out: list[TraceRequest], start: int) -> None:
    """Give each id of the requests from ``start`` on one size for the whole conversation: the
    share it had in the request that first sent it (what the cache holds under it), the tokens of
    that request's prompt past its ids sent before spread evenly over its new ids. An even share
    of each request's own ``in`` gave an id another size in each request, so a request could be
    predicted to read more than was ever cached under its ids (3 tokens over 8 ids, then 500 over
    those 8 and one more: 444 predicted of the 3 cached)."""
    sizes: dict[int | str, int] = {}
    for n in range(start, len(out)):
        r = out[n]
        ids = r.hash_ids or ()
        new = [i for i in dict.fromkeys(ids) if i not in sizes]
        sent_before = sum(sizes[i] for i in ids if i in sizes)
        sizes.update(zip(new, _even(max(int(r.envelope_dict["input_length"]) - sent_before, 0), len(new))))
        out[n] = msgspec.structs.replace(r, block_tokens=tuple(sizes[i] for i in ids))


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A file's conversations (usually one), each a lane and each subagent a lane of its own."""
    name = str(path)
    out: list[TraceRequest] = []
    lanes: set[str] = set()
    spread, measured = 0, True
    for ordinal, record in enumerate(records):
        n, whole = _conversation(name, ordinal, record, out, lanes)
        spread, measured = spread + n, measured and whole
    if not out:
        raise UserError(f"{name}:1: no requests in this trace")
    # The prompt and reply lengths every request gives (``in``, ``out``), summed: what the log does
    # say of its tokens (the whole prompt, cached or not; no cache counts).
    lengths = (sum(int(r.envelope_dict["input_length"]) for r in out),
               sum(int(r.envelope_dict["output_length"]) for r in out)) if measured else None
    notes = ["block-hash agent trace: no reported usage, predictions only"]
    if spread:
        notes.append(
            f"{spread:,} of {len(out):,} request(s) are of a conversation whose hash_ids cannot all be block_size-token "
            "blocks of their prompts (fewer than a prompt's whole blocks, or more than it holds): each id is read as its "
            "even share of the new tokens of the request that first sent it")
    return out, FileSummary(name, NAME, len(out), (), tuple(notes), lengths=lengths)


FORMAT = LogFormat(
    name=NAME,
    noun="block-hash agent trace",
    nouns="block-hash agent traces",
    description="block-hash agent traces (kv-cache-tester's, AgentX kind): a conversation per object, hash_ids per request, no usage",
    detect=detect,
    read=read,
    usage="none",
    versions=(
        "kv-cache-tester's first traces (2026-02): no hash_id_scope (ids per context), no timing fields",
        "the v6 set (2026-03): hash_id_scope global (subagents share the parent's ids), api_time and think_time, subagent entries",
        "the curated v8 set (2026-04, current to 94f6046 2026-07): hash_id_scope local (ids per conversation, subagents "
        "sharing the parent's), one request per turn, an occasional ttft",
        "traces_neon/ (2026-04, on the agentx branches): built from a proxy's database of Claude Code requests, "
        "hash_id_scope global, ids over about 85 tokens each though block_size says 64 (read as even shares of the new tokens of the request that first sent each)",
    ),
    aliases=("agentx",),
)
