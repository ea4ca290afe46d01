"""Anthropic Messages request-body logs: one ``{model, system, tools, messages}`` body a line.

A body is told from a chat-completions one by a ``system`` field or a ``tool_use``,
``tool_result`` or ``thinking`` block; a file of them may hold bodies with neither (they read
the same either way). No reported usage, so the audit predicts only.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Request
from prefixbench.workloads.logs.anthropic_capture import parse_request_body
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.request_bodies import read_bodies
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import FileSummary, Provider, TraceRequest

NAME = "anthropic-bodies"
_ANTHROPIC_BLOCKS = ("tool_use", "tool_result", "thinking")


def detect(value: dict) -> Evidence | None:
    """A body with a model and messages, and a ``system`` field or an Anthropic-only block."""
    messages = value.get("messages")
    if "model" not in value or not isinstance(messages, list):
        return None
    if "system" in value or any(
        isinstance(m, dict)
        and isinstance(m.get("content"), list)
        and any(isinstance(b, dict) and b.get("type") in _ANTHROPIC_BLOCKS for b in m["content"])
        for m in messages
    ):
        return Evidence.SHAPE
    return None


def _provider() -> Provider:
    """Who an Anthropic Messages body is priced and predicted as."""
    return "anthropic"


def _parse(value: object, where: str) -> Request:
    if not isinstance(value, dict):
        raise UserError(f"{where}: expected a JSON object (a request body)")
    return parse_request_body(value, where)


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The bodies of an Anthropic Messages body log."""
    return read_bodies(path, records, NAME, _parse, _provider())


FORMAT = LogFormat(
    name=NAME,
    noun="request-body log",
    nouns="request-body logs",
    description="Anthropic Messages request bodies, one {model, system, tools, messages} a line (no usage: predictions only)",
    detect=detect,
    read=read,
    usage="none",
    versions=("Anthropic Messages bodies: system as text or blocks, tools, cache_control, thinking blocks",),
    admits=("chat-completions",),
)
