"""Block-hash traces: Mooncake's, and kvcache-simulator's.

One request a line: ``hash_ids`` (prefix-chained block ids, 512-token blocks in Mooncake),
``input_length``, ``output_length``, ``timestamp`` (ms since the first request); no reported
usage, so the audit predicts only. kvcache-simulator's traces read too: string ids, a
``block_size`` and per-block ``block_tokens`` (a last partial block counts its own tokens).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.simulator.providers.base import count
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import FileSummary, Provider, TraceRequest

NAME = "mooncake"
#: Mooncake block size (tokens per hash id).
MOONCAKE_BLOCK_TOKENS = 512
#: The largest block a trace may declare (tokens per hash id).
MAX_BLOCK_TOKENS = 1 << 20


def detect(value: dict) -> Evidence | None:
    """A request as block hashes and an input length."""
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


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A trace's requests, one a line."""
    name = str(path)
    out: list[TraceRequest] = []
    for record in records:
        out.append(_request(name, len(out), record))
    if not out:
        raise UserError(f"{name}:1: empty file, no trace lines")
    return out, FileSummary(name, NAME, len(out), (), ("block-hash trace: no reported usage, predictions only",))


FORMAT = LogFormat(
    name=NAME,
    noun="Mooncake trace",
    nouns="Mooncake traces",
    description="block-hash request traces (Mooncake's, kvcache-simulator's): hash_ids per request, no usage",
    detect=detect,
    read=read,
    usage="none",
    versions=(
        "Mooncake traces: integer hash_ids, 512-token blocks",
        "kvcache-simulator traces: string ids, block_size and per-block block_tokens (a last partial block)",
    ),
)
