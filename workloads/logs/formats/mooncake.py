"""Block-hash traces: Mooncake's, and kvcache-simulator's.

One request a line: ``hash_ids`` (prefix-chained block ids, 512-token blocks in Mooncake),
``input_length``, ``output_length``, ``timestamp`` (ms since the first request); no reported
usage, so the audit predicts only. kvcache-simulator's traces read too: string ids, a
``block_size`` and per-block ``block_tokens`` (a last partial block counts its own tokens).

Agentic Mooncake v2 (AISimulate's and Dynamo's interchange, what its Weka/AgentX importer lowers
an agent trace to): a header line ``{schema: "dynamo.agentic_mooncake", version: 2, block_size,
hash_id_scope: "local", source}``, then one request a line with ``request_id``, ``play_id``,
``session_id``, ``model``, ``input_length`` (or ``input_tokens``), ``output_length`` (or
``output_tokens``), ``hash_ids``, ``not_before_ms`` (its authored start) and ``dependencies``
(the requests it waits for). Each play is one namespace of ids (two plays may reuse both session
names and ids); each session of a play is a lane, the play's first the main one, the others
subagents; a request is sent at its ``not_before_ms``.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import id_space
from prefixbench.simulator.providers.base import count
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Provider, TraceRequest

NAME = "mooncake"
#: Mooncake block size (tokens per hash id).
MOONCAKE_BLOCK_TOKENS = 512
#: The largest block a trace may declare (tokens per hash id).
MAX_BLOCK_TOKENS = 1 << 20


#: The header of an Agentic Mooncake trace, and the one version read.
AGENTIC_SCHEMA = "dynamo.agentic_mooncake"
AGENTIC_VERSION = 2


def detect(value: dict) -> Evidence | None:
    """A request as block hashes and an input length, or an Agentic Mooncake header."""
    if value.get("schema") == AGENTIC_SCHEMA:
        return Evidence.SHAPE
    return Evidence.WRAPPER if "hash_ids" in value and "input_length" in value else None


def _provider() -> Provider:
    """A block-hash trace is a self-hosted engine's block cache, not a provider's."""
    return "engine"


def _block_tokens(value: dict, blocks: int, where: str) -> tuple[int, ...]:
    """Tokens of each hashed block: ``block_tokens`` when the trace gives them, else
    ``block_size`` (default 512, Mooncake's) for every block."""
    size = value.get("block_size", MOONCAKE_BLOCK_TOKENS)
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= MAX_BLOCK_TOKENS:
        raise UserError(f"{where}: block_size is not a block size in tokens (1..{MAX_BLOCK_TOKENS:,}): {size!r:.40}")
    given = value.get("block_tokens")
    if given is None:
        return (size,) * blocks
    if not isinstance(given, list) or len(given) != blocks:
        raise UserError(f"{where}: block_tokens must be a list with one count per hash id ({blocks})")
    if not all(isinstance(n, int) and not isinstance(n, bool) and 0 < n <= size for n in given):
        raise UserError(f"{where}: block_tokens must be counts from 1 to block_size ({size})")
    return tuple(given)


def _request(name: str, seq: int, record: Record) -> TraceRequest:
    where = f"{name}:{record.line}"
    value = record.value
    if not isinstance(value, dict) or not isinstance(value.get("hash_ids"), list):
        raise UserError(f"{where}: expected an object with hash_ids")
    hashes = value["hash_ids"]
    kinds = set(map(type, hashes))  # per element in C: a trace holds hundreds of thousands
    if not kinds <= {int, str} or (str in kinds and "" in hashes):
        raise UserError(f"{where}: hash_ids must be integers or non-empty strings")
    length = count(value.get("input_length"), where, "input_length")
    block_tokens = _block_tokens(value, len(hashes), where)
    return TraceRequest(
        file=name,
        line=record.line,
        lane="trace",
        lane_kind="trace",
        seq=seq,
        sent_ms=count(value.get("timestamp"), where, "timestamp"),  # ms since the first request
        ready_ms=None,
        provider=_provider(),
        model="mooncake",
        usage=None,
        hash_ids=tuple(hashes),
        block_tokens=block_tokens,
        envelope=(("input_length", str(length)), ("output_length", str(count(value.get("output_length"), where, "output_length")))),
        source_format=NAME,
    )


def _agentic_header(name: str, record: Record) -> int:
    """The block size an Agentic Mooncake header names, its fields checked."""
    where = f"{name}:{record.line}"
    value: dict = record.value  # type: ignore[assignment]
    version = value.get("version")
    if version != AGENTIC_VERSION or isinstance(version, bool):
        raise UserError(f"{where}: Agentic Mooncake version {version!r:.40} is not the one read ({AGENTIC_VERSION})")
    if value.get("hash_id_scope") != "local":
        raise UserError(f"{where}: Agentic Mooncake hash_id_scope {value.get('hash_id_scope')!r:.40} is not local")
    size = value.get("block_size")
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= MAX_BLOCK_TOKENS:
        raise UserError(f"{where}: block_size is not a block size in tokens (1..{MAX_BLOCK_TOKENS:,}): {size!r:.40}")
    return size


def _play_ids(name: str, play: str, hashes: object, ids: dict[str, dict[int, int]], where: str) -> tuple[int, ...]:
    """A row's ids in its play's namespace, packed as the other block-hash readers pack theirs
    (:func:`~.common.id_space` of the file and play): ``ids`` maps each play's raw ids to packed
    ones, so a block every later row of a session repeats is one object, checked once."""
    if not isinstance(hashes, list) or not set(map(type, hashes)) <= {int}:  # per element in C
        raise UserError(f"{where}: hash_ids must be a list of non-negative 64-bit integers")
    table = ids.get(play)
    if table is None:
        table = ids[play] = {}
    new = set(hashes).difference(table)  # most ids repeat the session's previous row's
    if new:
        if min(new) < 0 or max(new) >> 64:
            raise UserError(f"{where}: hash_ids must be a list of non-negative 64-bit integers")
        space = id_space(f"{name}\0{play}")
        for raw in new:
            table[raw] = space | raw
    return tuple(map(table.__getitem__, hashes))


def _agentic_request(name: str, seq: int, record: Record, size: int, roots: dict[str, str],
                     ids: dict[str, dict[int, int]]) -> TraceRequest:
    """One Agentic Mooncake row: its play's namespace of ids (``ids``, see :func:`_play_ids`), its
    session's lane (``roots``: each play's first session, its main lane)."""
    where = f"{name}:{record.line}"
    value = record.value
    if not isinstance(value, dict):
        raise UserError(f"{where}: expected an Agentic Mooncake request object")
    names = [value.get(k) for k in ("request_id", "play_id", "session_id")]
    if not all(isinstance(n, str) and n for n in names):
        raise UserError(f"{where}: request_id, play_id and session_id must be non-empty strings")
    _, play, session = names
    if "hash_ids" not in value:
        raise UserError(f"{where}: an Agentic Mooncake request without hash_ids")
    hashes = _play_ids(name, play, value["hash_ids"], ids, where)
    start = value.get("not_before_ms")
    if isinstance(start, bool) or not isinstance(start, (int, float)) or not 0 <= start < 1e14:
        raise UserError(f"{where}: not_before_ms is not a time in ms ({start!r:.40})")
    model = value.get("model")
    if not isinstance(model, str):
        raise UserError(f"{where}: model is not a string ({model!r:.40})")
    length = count(value.get("input_length", value.get("input_tokens")), where, "input_length")
    output = count(value.get("output_length", value.get("output_tokens")), where, "output_length")
    return TraceRequest(
        file=name,
        line=record.line,
        lane=f"{play}/{session}",
        lane_kind="main" if roots.setdefault(play, session) == session else "subagent",
        seq=seq,
        sent_ms=round(start),
        ready_ms=None,
        provider=_provider(),
        model=model or NO_MODEL,
        usage=None,
        hash_ids=hashes,
        block_tokens=(size,) * len(hashes),
        envelope=(("input_length", str(length)), ("output_length", str(output))),
        source_format=NAME,
    )


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A trace's requests, one a line."""
    name = str(path)
    out: list[TraceRequest] = []
    found = iter(records)
    head = next(found, None)
    if head is not None and isinstance(head.value, dict) and head.value.get("schema") == AGENTIC_SCHEMA:
        size = _agentic_header(name, head)
        roots: dict[str, str] = {}
        ids: dict[str, dict[int, int]] = {}
        for record in found:
            out.append(_agentic_request(name, len(out), record, size, roots, ids))
        if not out:
            raise UserError(f"{name}:{head.line}: an Agentic Mooncake header with no request lines")
        note = (f"Agentic Mooncake v2 trace: {len(roots)} play(s), {len({r.lane for r in out})} session(s), each a lane; "
                "a request sent at its not_before_ms (its dependencies not modelled); no reported usage, predictions only")
        return out, FileSummary(name, NAME, len(out), (), (note,))
    for record in chain([head] if head is not None else [], found):
        out.append(_request(name, len(out), record))
    if not out:
        raise UserError(f"{name}:1: empty file, no trace lines")
    return out, FileSummary(name, NAME, len(out), (), ("block-hash trace: no reported usage, predictions only",))


FORMAT = LogFormat(
    name=NAME,
    noun="Mooncake trace",
    nouns="Mooncake traces",
    description="block-hash request traces (Mooncake's, kvcache-simulator's, Agentic Mooncake v2): hash_ids per request, no usage",
    detect=detect,
    read=read,
    usage="none",
    versions=(
        "Mooncake traces: integer hash_ids, 512-token blocks",
        "kvcache-simulator traces: string ids, block_size and per-block block_tokens (a last partial block)",
        "Agentic Mooncake v2 (AISimulate/Dynamo): a header line, then rows with play_id, session_id, not_before_ms",
    ),
)
