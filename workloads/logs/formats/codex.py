"""Codex CLI rollouts (``rollout-<date>-<id>.jsonl``).

``event_msg``/``token_count`` ``last_token_usage`` per request (``input_tokens`` includes
``cached_input_tokens`` and, in later versions, ``cache_write_input_tokens``); a token count whose running total was already seen (a repeat, or
history replayed by a fork or resume, in this file or another) is not counted again. A
request is sent at the last input item (user message or tool output) before it and its
response began at the first output item after that. Base instructions and tool schemas are
not in a rollout: the head is an opaque prefix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.simulator.providers import provider_named_in
from prefixbench.simulator.providers.base import count
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.common import as_dict, objects, parse_time_ms
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import FileSummary, Prefix, Provider, TraceRequest

NAME = "codex"
_LINE_KINDS = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")


def detect(value: dict) -> Evidence | None:
    """A rollout line (``type`` + ``payload``); an older rollout by its ``record_type`` lines or
    its first line ``{id, timestamp, instructions}``."""
    if value.get("type") in _LINE_KINDS and "payload" in value:
        return Evidence.ENTRY
    if "record_type" in value or ({"id", "timestamp", "instructions"} <= set(value) and "type" not in value):
        return Evidence.SHAPE  # rollouts before event_msg/token_count (no usage in them)
    return None


def _provider(session_meta: dict) -> Provider:
    """Who serves a session's calls, from its ``model_provider``."""
    return provider_named_in(str(session_meta.get("model_provider", ""))).name


def _usage(last: dict, where: str) -> Usage:
    """``last_token_usage``: ``input_tokens`` includes ``cached_input_tokens`` and, in later
    versions (the Responses API's ``cache_write_tokens``, GPT-5.6 on), ``cache_write_input_tokens``."""
    total_in = count(last.get("input_tokens"), where, "last_token_usage.input_tokens")
    cached = count(last.get("cached_input_tokens"), where, "last_token_usage.cached_input_tokens")
    written = count(last.get("cache_write_input_tokens"), where, "last_token_usage.cache_write_input_tokens")
    if cached + written > total_in:
        also = f" and cache_write_input_tokens ({written})" if written else ""
        raise UserError(f"{where}: cached_input_tokens ({cached}){also} exceed input_tokens ({total_in})")
    output = count(last.get("output_tokens"), where, "last_token_usage.output_tokens")
    return Usage(cache_read=cached, cache_write_5m=written, uncached=total_in - cached - written, output=output)


class _Rollout:
    """The requests of one rollout, line by line."""

    def __init__(self, path: Path, ctx: ImportContext) -> None:
        self.name = str(path)
        self.ctx = ctx
        self.out: list[TraceRequest] = []
        self.skipped: list[tuple[int, str]] = []
        self.session = self.name
        self.version: str | None = None
        self.provider: Provider = "openai"
        self.model = "unknown"
        self.effort: str | None = None
        self.last_input_ms: int | None = None
        self.first_output_ms: int | None = None
        self.blocks = 0
        self.events: list[tuple[str, str]] = []
        self.sessions_seen = 0
        self.previous_total: str | None = None
        self.last_total: dict | None = None
        self.chain_parent: str | None = None

    def line(self, record: Record) -> None:
        value: dict = record.value  # type: ignore[assignment]
        where = f"{self.name}:{record.line}"
        kind = value.get("type")
        payload = as_dict(value.get("payload"))
        when = parse_time_ms(value.get("timestamp"), where) if "timestamp" in value else None
        ptype = payload.get("type")
        if kind == "session_meta":
            self._session_meta(payload)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]
            if isinstance(payload.get("effort"), str) or payload.get("effort") is None:
                self.effort = payload.get("effort")
        elif kind == "compacted" or (kind == "event_msg" and ptype in ("context_compacted", "compacted")):
            self.events.append(("compaction", ""))
            self.chain_parent = None
        elif kind == "response_item":
            self._item(payload, when)
        elif kind == "event_msg" and ptype == "token_count":
            self._token_count(record, value, payload, when)

    def _session_meta(self, payload: dict) -> None:
        self.sessions_seen += 1
        self.session = str(payload.get("id") or self.session) if self.sessions_seen == 1 else self.session
        self.version = payload.get("cli_version") if isinstance(payload.get("cli_version"), str) else self.version
        self.provider = _provider(payload)
        if self.sessions_seen > 1:
            self.events.append(("resume", "a second session_meta: resumed or forked session"))

    def _item(self, payload: dict, when: int | None) -> None:
        """A message, tool call or output: inputs move the send time, the first output the answer time."""
        self.blocks += 1
        ptype = payload.get("type")
        role = payload.get("role")
        if ptype in ("function_call_output", "custom_tool_call_output") or (ptype == "message" and role == "user"):
            self.last_input_ms = when
            self.first_output_ms = None
            if ptype == "message" and role == "user":
                self.events.append(("user_turn", ""))
        elif self.first_output_ms is None:
            self.first_output_ms = when

    def _token_count(self, record: Record, value: dict, payload: dict, when: int | None) -> None:
        """One request, unless its running total repeats one already counted."""
        info = payload.get("info")
        if not isinstance(info, dict):
            return
        total = info.get("total_token_usage")
        last = info.get("last_token_usage")
        if not isinstance(last, dict):
            return
        if isinstance(total, dict):
            self.last_total = total
        total_key = json.dumps(total, sort_keys=True)
        if total_key == self.previous_total:
            self.skipped.append((record.line, "repeated token_count (same running total)"))
            return
        self.previous_total = total_key
        dedup = f"{total_key}@{value.get('timestamp')}"
        if dedup in self.ctx.codex_totals:
            self.skipped.append((record.line, "token_count replayed from an earlier session (fork/resume)"))
            return
        self.ctx.codex_totals.add(dedup)
        self._add(record, _usage(last, f"{self.name}:{record.line}"), when)

    def _add(self, record: Record, usage: Usage, when: int | None) -> None:
        node = f"codex:{self.session}#{len(self.out)}"
        self.out.append(
            TraceRequest(
                file=self.name,
                line=record.line,
                lane="main",
                lane_kind="main",
                seq=len(self.out),
                sent_ms=self.last_input_ms if self.last_input_ms is not None else when,
                ready_ms=self.first_output_ms if self.first_output_ms is not None else when,
                done_ms=when,  # token_count is written when the response has ended
                provider=self.provider,
                model=self.model,
                envelope=(("effort", self.effort),) if self.effort else (),
                usage=usage,
                # Codex sends every output item back (reasoning as encrypted_content) in the next request.
                prefix=Prefix(f"codex:{self.model}:{self.version or '?'}", node, self.chain_parent, max(1, self.blocks), replays_output=True),
                events=tuple(self.events),
                agent_version=self.version,
                source_format=NAME,
            )
        )
        self.chain_parent = node
        self.events = []
        self.blocks = 0

    def notes(self) -> tuple[str, ...]:
        """The unlogged head, and a check of the counted tokens against Codex's own total."""
        notes: tuple[str, ...] = ("Codex base instructions and tool schemas are not in a rollout: the head is an opaque prefix",)
        if not self.out:
            return notes + (
                "no token_count events: this rollout (an older Codex version, or a session that made no call) carries no usage to audit",
            )
        if self.last_total is None or self.sessions_seen > 1:
            return notes
        counted = (sum(r.usage.prompt for r in self.out if r.usage), sum(r.usage.output for r in self.out if r.usage))
        theirs = (self.last_total.get("input_tokens"), self.last_total.get("output_tokens"))
        if all(isinstance(n, int) and not isinstance(n, bool) for n in theirs):
            verdict = "the same" if counted == theirs else f"counted here {counted[0]:,} / {counted[1]:,}"
            notes += (f"Codex's own running total: input {theirs[0]:,} / output {theirs[1]:,} tokens ({verdict})",)
        return notes


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A rollout's requests; see the module doc."""
    rollout = _Rollout(path, ctx)
    seen_any = False
    for record in objects(path, records, " (a rollout line)"):
        seen_any = True
        rollout.line(record)
    if not seen_any:
        raise UserError(f"{rollout.name}:1: empty file, no rollout lines")
    return rollout.out, FileSummary(rollout.name, NAME, len(rollout.out), tuple(rollout.skipped), rollout.notes())


FORMAT = LogFormat(
    name=NAME,
    noun="Codex rollout",
    nouns="Codex rollouts",
    description="Codex CLI session rollouts (rollout-<date>-<id>.jsonl)",
    detect=detect,
    read=read,
    usage="subset",
    versions=(
        "rollouts with event_msg token_count (info.last_token_usage, total_token_usage)",
        "later rollouts: last_token_usage.cache_write_input_tokens (the Responses API's writes, GPT-5.6 on), inside input_tokens",
        "resumed or forked sessions: a second session_meta and the earlier history replayed",
        "older rollouts (record_type lines, or a first line {id, timestamp, instructions}): no usage, read as no calls",
    ),
)
