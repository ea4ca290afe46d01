"""Chat-completions request-body logs: one OpenAI-style ``{model, messages, ...}`` body a line.

Read by the request-log parser (:mod:`prefixbench.workloads.logs.chat_completions`); no
reported usage, so the audit predicts only. ``prefixbench replay`` reads these body for body.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Request
from prefixbench.workloads.logs.chat_completions import LineError, parse_request
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat, Replay
from prefixbench.workloads.logs.formats.request_bodies import read_bodies
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import FileSummary, Provider, TraceRequest

NAME = "chat-completions"


def detect(value: dict) -> Evidence | None:
    """Any body with a model and a list of messages (the most generic shape)."""
    return Evidence.GENERIC if "model" in value and isinstance(value.get("messages"), list) else None


def _provider() -> Provider:
    """Who a chat-completions body is priced and predicted as."""
    return "openai"


def _parse(value: object, where: str) -> Request:
    try:
        return parse_request(value)
    except LineError as exc:
        raise UserError(f"{where}: {exc}") from None


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The bodies of a chat-completions log."""
    return read_bodies(path, records, NAME, _parse, _provider())


FORMAT = LogFormat(
    name=NAME,
    noun="request-body log",
    nouns="request-body logs",
    description="chat-completions request bodies, one {model, messages, ...} a line (no usage: predictions only)",
    detect=detect,
    read=read,
    usage="none",
    versions=("OpenAI chat-completions bodies: string or part-list content, tool calls, reasoning_effort",),
    replay=Replay(name=NAME, help="request bodies", kind="bodies", default=True),
)
