"""What the two request-body log formats share: one body a line, no reported usage."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Request
from prefixbench.workloads.logs.anthropic_capture import classify_call
from prefixbench.workloads.logs.formats.common import refuse_lone_surrogates
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import FileSummary, Provider, TraceRequest

#: A record's JSON value and its ``file:line`` to the parsed body (UserError when it is none).
BodyParser = Callable[[object, str], Request]


def read_bodies(
    path: Path, records: Iterable[Record], fmt: str, parse: BodyParser, provider: Provider
) -> tuple[list[TraceRequest], FileSummary]:
    """Request-body logs (chat completions or Anthropic Messages): bodies, no reported usage."""
    name = str(path)
    out: list[TraceRequest] = []
    for record in records:
        if record.plain:
            refuse_lone_surrogates(record.value, f"{name}:{record.line}")
        parsed = parse(record.value, f"{name}:{record.line}")
        effort = parsed.envelope.reasoning_effort
        out.append(
            TraceRequest(
                file=name,
                line=record.line,
                lane="main",
                lane_kind="main",
                seq=len(out),
                sent_ms=None,
                ready_ms=None,
                provider=provider,
                model=parsed.envelope.model,
                envelope=(("effort", effort),) if effort else (),
                body=parsed,
                source_format=fmt,
                compaction_call=parsed.purpose == "compaction" or classify_call(parsed) == "compaction",
            )
        )
    if not out:
        raise UserError(f"{name}:1: empty file, no request bodies")
    return out, FileSummary(name, fmt, len(out), (), ("request-body log: no reported usage, predictions only",))
