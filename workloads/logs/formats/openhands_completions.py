"""OpenHands completion logs (``log_completions``): one JSON file per model call.

With ``log_completions`` on, OpenHands writes each completed call to its
``log_completions_folder`` as ``<model, "/" as "__">-<epoch seconds>.json`` (the 0.x app;
the software-agent-sdk 1.x adds ``-<4 hex>`` after the time, and writes a failed call as
``...-error.json``). A file holds the request as sent and the response whole:

* 1.x, chat completions: ``messages``, ``tools``, ``kwargs`` (the call's other arguments; the
  tools in them too before the SDK popped the copy), ``context_window``, ``response`` (LiteLLM's
  ``ModelResponse``, with its ``usage``), ``cost``, ``timestamp`` (when the response was
  logged) and ``latency_sec``; with function calling mocked in the prompt, ``raw_messages`` and
  ``raw_response`` (the calls before conversion) beside them, and no tools sent;
* 1.x, Responses API: ``llm_path: "responses"``, ``instructions``, ``input``, ``tools``;
* 0.x: ``messages``, ``response``, ``args``, ``kwargs`` (tools among them), ``timestamp``, ``cost``;
  mocked function calling keeps ``fncall_messages`` / ``fncall_response`` beside them;
* a failed call (1.x): the request and ``error``, no response: skipped, named.

Usage is LiteLLM's (:mod:`.gateway_usage`). A folder of such files is one conversation's calls:
the walk leaves them to the folder's first file (by the time in its name), which reads every
one in time order (``timestamp``, then the name) as one lane per model, so each request's body
is diffed against the one before it. Named alone, another file of the folder is read with it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import rules_for
from prefixbench.simulator.wire import CacheBreakpoint, Request
from prefixbench.workloads.logs.anthropic_capture import classify_call
from prefixbench.workloads.logs.chat_completions import LineError, MessageMemo, parse_request
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, logged_cost, objects, parse_time_ms, refuse_lone_surrogates
from prefixbench.workloads.logs.jsonlines import BadJson
from prefixbench.workloads.logs.records import Record, iter_records
from prefixbench.workloads.logs.responses_body import chat_shape
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Prefix, TraceRequest

NAME = "openhands-completions"
#: ``<model>-<epoch>[-<4 hex>][-error].json``, the names OpenHands gives its completion logs.
_FILE = re.compile(r"(?P<model>.+)-(?P<time>\d{9,11}(?:\.\d+)?)(?:-[0-9a-f]{4})?(?P<error>-error)?\.json")
_ENCODE = msgspec.json.encode


def _is_request(value: dict) -> bool:
    if value.get("llm_path") == "responses":
        return "input" in value
    return isinstance(value.get("messages"), list)


def detect(value: dict) -> Evidence | None:
    """A completion log: the request (``messages``, or a Responses ``input``), a numeric
    ``timestamp`` and the ``response`` (or a failed call's ``error``), with ``kwargs`` or ``cost``."""
    stamp = value.get("timestamp")
    if not isinstance(stamp, (int, float)) or isinstance(stamp, bool) or not _is_request(value):
        return None
    if not (isinstance(value.get("response"), dict) or isinstance(value.get("error"), dict)):
        return None
    return Evidence.SHAPE if "kwargs" in value or "cost" in value else None


def _named(path: Path) -> re.Match[str] | None:
    return _FILE.fullmatch(path.name)


@lru_cache(maxsize=64)
def _folder_logs(folder: str, stamp: int) -> tuple[str, ...]:
    """The names of the completion logs in ``folder``, the file that reads them first (the
    oldest, by its name, that holds a completion log), then the others oldest first; ``stamp``
    (the folder's mtime) keys the cache."""
    try:
        names = [entry.name for entry in os.scandir(folder) if entry.is_file()]
    except OSError:
        return ()
    timed = [(float(m["time"]), name) for name in names if (m := _FILE.fullmatch(name))]
    found = [name for _, name in sorted(timed)]
    for idx, name in enumerate(found):
        if _holds_a_log(Path(folder) / name):
            return (name, *found[:idx], *found[idx + 1:])
    return ()


def _holds_a_log(path: Path) -> bool:
    """Whether a file's first record is a completion log (a file that cannot be read is not)."""
    try:
        for record in iter_records(path):
            return isinstance(record.value, dict) and detect(record.value) is not None
    except (UserError, OSError):
        return False
    return False


def _siblings(path: Path) -> tuple[str, ...]:
    try:
        stamp = path.parent.stat().st_mtime_ns
    except OSError:
        return ()
    return _folder_logs(str(path.parent), stamp)


def lead_file_of(path: Path, value: dict) -> Path | None:
    """The file a completion log is read with: its folder's first completion log (None: it is
    that file, or not a completion log named as OpenHands names them). A file named as one that
    holds none is left to the walk, which says what it is."""
    if detect(value) is None or _named(path) is None:
        return None
    logs = _siblings(path)
    if not logs or logs[0] == path.name:
        return None
    return path.parent / logs[0]


class _Call(msgspec.Struct):
    """One file's call, reduced to what its request needs (the file's messages are not kept: a
    folder's calls share theirs through the body parser's memo)."""

    file: str
    line: int
    model: str
    done_ms: int | None
    order: tuple[float, str]
    usage: dict | None
    error: str | None
    body: Request | None
    sent_ms: int | None
    cost: float
    response_id: str | None
    #: The upstream the gateway says served it (OpenRouter's response ``provider``), "" where none.
    upstream: str = ""


def _call(path: Path, record: Record, memo: MessageMemo) -> _Call | None:
    """One file's call, None when its record is no completion log."""
    value = record.value
    if not isinstance(value, dict) or detect(value) is None:
        return None
    where = f"{path}:{record.line}"
    if record.plain:
        refuse_lone_surrogates(value, where)
    match = _named(path)
    response = as_dict(value.get("response"))
    model = response.get("model")
    if not isinstance(model, str) or not model:
        model = match["model"].replace("__", "/") if match else NO_MODEL
    done = parse_time_ms(value["timestamp"], where)
    usage = response.get("usage")
    usage = usage if isinstance(usage, dict) else None
    error = value.get("error")
    failed = str(as_dict(error).get("type") or "error")[:60] if isinstance(error, dict) else None
    latency = value.get("latency_sec")
    sent = (done - round(latency * 1000)
            if done is not None and isinstance(latency, (int, float)) and not isinstance(latency, bool) and 0 <= latency < 86_400
            else None)
    body = None
    if usage is not None and failed is None:
        provider = gateway_usage.provider_of(model, gateway_usage.is_anthropic_shaped(usage))
        body = _body(value, model, provider, memo)
    rid = response.get("id")
    return _Call(str(path), record.line, model, done, (float(value["timestamp"]), path.name), usage, failed, body, sent,
                 logged_cost(value.get("cost")), rid if isinstance(rid, str) else None, gateway_usage.upstream_of(response))


def _read_one(path: Path, memo: MessageMemo) -> _Call | str:
    """The call of another file of the folder, or why it holds none."""
    for record in iter_records(path):
        return _call(path, record, memo) or f"{path.name}: named as a completion log, holds none"
    return f"{path.name}: empty"


def _has_marker(message: object) -> bool:
    if not isinstance(message, dict):
        return False
    if isinstance(message.get("cache_control"), dict):
        return True
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and isinstance(p.get("cache_control"), dict) for p in content)


def _sent_tools(value: dict) -> list | None:
    """The tools a call sent: none when function calling was mocked in the prompt (``raw_messages``
    or ``fncall_messages`` kept), else ``kwargs.tools`` (0.x, early 1.x) or ``tools``."""
    if "raw_messages" in value or "fncall_messages" in value:
        return None
    tools = as_dict(value.get("kwargs")).get("tools")
    if not isinstance(tools, list):
        tools = value.get("tools")
    return tools if isinstance(tools, list) else None


def _body(value: dict, routed: str, provider: str, memo: MessageMemo) -> Request | None:
    """The request a call sent, as a wire Request; None when it cannot be rebuilt."""
    model = routed.rsplit("/", 1)[-1] or NO_MODEL
    if value.get("llm_path") == "responses":
        shaped = chat_shape({"model": model, "instructions": value.get("instructions"), "input": value.get("input"),
                             "tools": value.get("tools") or []})
        if shaped is None:
            return None
        body = {**shaped, "provider": provider}
        messages: list = []
    else:
        messages = [m for m in value["messages"]]
        body = {"provider": provider, "model": model, "messages": [_ENCODE(m) for m in messages]}
        tools = _sent_tools(value)
        if tools:
            body["tools"] = tools
    try:
        request = parse_request(body, None if value.get("llm_path") == "responses" else memo)
    except (LineError, BadJson, TypeError):
        return None
    rules = rules_for(provider)
    markers = [i for i, m in enumerate(messages) if _has_marker(m)]
    if not markers or rules.max_breakpoints is None or not request.messages:
        return request
    offset = len(messages) - len(request.messages)  # leading system messages became the system prompt
    # A marker on a leading system message marks the system prompt they were joined into (none
    # where their text was empty: a mark on nothing sent, which the replay refused by a crash).
    system = bool(request.system or request.system_blocks)
    points = ([CacheBreakpoint("system", 0)] if system and any(i < offset for i in markers) else []) + [
        CacheBreakpoint("messages", max(0, len(request.messages[i - offset].blocks) - 1), i - offset)
        for i in markers if i >= offset]
    points = points[-rules.max_breakpoints:]
    return replace(request, cache_breakpoints=tuple(points)) if points else request


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The calls of a completion log, or of its folder's; see the module doc."""
    name = str(path)
    memo = MessageMemo()
    first: _Call | None = None
    seen = False
    for record in objects(path, records, " (an OpenHands completion log)"):
        if not seen:
            seen = True
            lead = lead_file_of(path, record.value)  # type: ignore[arg-type]
            if lead is not None:
                note = (f"an OpenHands completion log read with {lead}, the first of its folder, which reads them all as one "
                        "conversation: audit the folder or that file")
                return [], FileSummary(name, NAME, 0, (), (note,))
            first = _call(path, record, memo)
            if first is None:
                raise UserError(f"{name}:{record.line}: not an OpenHands completion log (no messages, timestamp and response)")
    if first is None:
        raise UserError(f"{name}:1: empty file, no OpenHands completion log")
    calls = [first]
    skipped: list[tuple[int, str]] = []
    if _named(path) is not None:
        for sibling in _siblings(path)[1:]:
            got = _read_one(path.parent / sibling, memo)
            if isinstance(got, str):
                skipped.append((1, got))
            else:
                calls.append(got)
    calls.sort(key=lambda c: c.order)
    return _requests(name, calls, skipped)


def _requests(name: str, calls: list[_Call], skipped: list[tuple[int, str]]) -> tuple[list[TraceRequest], FileSummary]:
    usable: list[tuple[_Call, dict]] = []
    for call in calls:
        if call.error is not None:
            skipped.append((call.line, f"{Path(call.file).name}: failed call ({call.error}), no response"))
        elif call.usage is None:
            skipped.append((call.line, f"{Path(call.file).name}: response without usage"))
        else:
            usable.append((call, call.usage))
    included = gateway_usage.writes_in_prompt((u, f"{c.file}:{c.line}") for c, u in usable)
    lanes: dict[str, int] = {}
    for call, _ in usable:
        lanes[call.model] = lanes.get(call.model, 0) + 1
    main = max(lanes, key=lambda m: lanes[m]) if lanes else ""
    out: list[TraceRequest] = []
    anthropic_calls = writes_unknown = 0
    without_body = 0
    for call, raw in usable:
        where = f"{call.file}:{call.line}"
        shaped = gateway_usage.is_anthropic_shaped(raw)
        anthropic_calls += shaped
        usage = gateway_usage.read_usage(raw, where, writes_included=included, model=call.model)
        provider = gateway_usage.provider_of(call.model, shaped)
        usage = gateway_usage.writes_unknown(usage, raw, provider)
        writes_unknown += not usage.writes_reported
        without_body += call.body is None
        lane = "main" if call.model == main else call.model
        out.append(TraceRequest(
            file=name, line=call.line, path=Path(call.file).name if call.file != name else "",
            lane=lane, lane_kind="main" if lane == "main" else "side", seq=len(out),
            sent_ms=call.sent_ms, ready_ms=None, provider=provider, model=call.model.rsplit("/", 1)[-1] or NO_MODEL,
            usage=usage, body=call.body,
            prefix=None if call.body is not None else Prefix(f"openhands-completions:{name}:{call.model}", f"{where}#{len(out)}"),
            request_id=call.response_id, source_format=NAME, done_ms=call.done_ms,
            compaction_call=call.body is not None and classify_call(call.body) == "compaction", upstream=gateway_usage.served_by(call.model, call.upstream),
        ))
    notes = [f"OpenHands completion logs: one call per file, {len(calls)} file(s) read in time order (their timestamp), "
             f"one lane per model ({', '.join(f'{m}: {n}' for m, n in lanes.items()) or 'none'})"]
    notes += gateway_usage.reading_notes(len(out), anthropic_calls, included)
    if writes_unknown:
        notes.append(gateway_usage.WRITES_UNKNOWN_NOTE.format(writes_unknown))
    if without_body:
        notes.append(f"{without_body} call(s) whose request could not be rebuilt as a body (read as a chain of their own)")
    cost = sum(c.cost for c in calls)
    if cost:
        notes.append(f"OpenHands' own cost fields sum to ${cost:.4f}")
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(notes))


FORMAT = LogFormat(
    name=NAME,
    noun="OpenHands completion log",
    nouns="OpenHands completion logs",
    description="OpenHands completion logs (log_completions: <model>-<time>.json, one call's request and response a file; "
    "a folder of them is one conversation)",
    detect=detect,
    read=read,
    usage="by-endpoint",
    read_with=lead_file_of,
    versions=(
        "OpenHands 0.x: messages, response, args, kwargs (with tools), timestamp, cost; fncall_messages when mocked",
        "software-agent-sdk 1.x: messages, tools, kwargs, context_window, response, cost, timestamp, latency_sec "
        "(raw_messages/raw_response when function calling is mocked); <model>-<time>-<hex>.json names; -error.json for "
        "a failed call",
        "software-agent-sdk 1.x Responses API: llm_path responses, instructions, input, tools",
    ),
    aliases=("openhands-llm-logs",),
)
