"""Zed's agent panel threads: its SQLite database (``~/.local/share/zed/threads/threads.db``,
``~/Library/Application Support/Zed/threads/threads.db`` on macOS), or one thread's JSON taken
out of it.

The database (zed-industries/zed ``crates/agent/src/db.rs``; earlier ``thread_store.rs``) has one
table, ``threads(id, summary, updated_at, data_type, data, parent_id?, folder_paths?,
folder_paths_order?, created_at?)``: ``data`` is the thread serialized as JSON, zstd-compressed
when ``data_type`` is ``zstd`` (every thread saved since mid-2025), plain when ``json``. The
serialized thread has had these versions (``version``):

* none: ``{summary, updated_at, messages [{id, role, text, tool_uses, tool_results}]}``, before
  Zed kept any token usage: nothing to read.
* ``0.1.0`` and ``0.2.0`` (the first agent panel, "agent 1", until about August 2025):
  ``{version, summary, updated_at, messages [{id, role, segments, tool_uses, tool_results,
  context, ...}], cumulative_token_usage, request_token_usage [...], model {provider, model},
  ...}``. ``request_token_usage`` is a list beside ``messages``, one entry per message: each
  model call begins an assistant message, and each usage update of the call overwrites the entry
  at the last message's index, so the entry at an assistant message is the usage of the call
  that produced it. The entries Zed fills in when it grows the list (at user messages, and at an
  assistant message whose call reported no usage) are copies of the previous call's usage: an
  assistant entry equal to the previous assistant entry is such a copy, and is not a call. In
  ``0.1.0`` tool results are user messages of their own (not user turns); ``0.2.0`` keeps them
  on the assistant message that asked for them.
* ``0.3.0`` (Zed's current agent, from about August 2025): ``request_token_usage`` is a map from
  a user message's id to ONE usage, which each call of that turn overwrites: what is left is
  the turn's last call, the calls before it in the turn's tool loop are lost. Such a thread holds
  no call-by-call usage: it is counted apart (skipped, with why), never read as calls. A
  database holding only such threads is refused with one line saying why and what records
  Zed's calls instead (``prefixbench proxy``).
* ``0.4.0`` (2026): the same, plus ``thread_log`` (an append-only event log of the messages,
  with the prompt cache layout: the system prompt and the tools' order) and a ``thread_events``
  table holding those events; ``request_token_usage`` is still one usage per user turn, so such
  a thread is counted apart as ``0.3.0`` is.
  Not verified against Zed's published source: the newest ``crates/agent/src/db.rs`` this
  project could read (zed-industries/zed at ``0642ec7e49e2d2c06f55db8c5bb2d4eca0f5223b``) still
  has ``DbThread::VERSION = "0.3.0"`` and no ``thread_log``; no commit setting ``"0.4.0"`` was
  found. A thread naming ``0.4.0`` is read as that shape: one usage per user turn, counted apart.

Each entry is Zed's ``TokenUsage {input_tokens, output_tokens, cache_creation_input_tokens,
cache_read_input_tokens}`` as Zed's provider code filled it from the wire, so ``input_tokens``
keeps the wire's meaning: Anthropic's (and Bedrock's) uncached input (additive); Google's
``promptTokenCount`` with the cached part inside (subset); OpenAI's ``prompt_tokens`` with the
cached part inside, and Zed's OpenAI mapper wrote no cache count (zeros), so where no call of a
thread through a subset provider reports a cache count, its calls are read as cache not
reported. Who served a call, and its convention, is asked of :mod:`prefixbench.simulator.providers`
(the model's name, then Zed's provider id as an agent handler; a provider id naming a host that
runs open models itself, ``ollama`` or ``lmstudio``, gives none); a call of a provider the audit
does not model is read as additive (the fields' Anthropic naming) under provider ``unknown``.

A thread keeps no time per message: its calls are read in order, without times. Each thread is
a lane of its own, named by its id (a thread JSON read alone: ``main``).
"""

from __future__ import annotations

import io
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import UNKNOWN, agent_handler, provider_of_model
from prefixbench.simulator.providers.base import ProviderRules, count, subset_usage
from prefixbench.simulator.providers.hosts import billing_host
from prefixbench.simulator.providers.vllm import self_hosted
from prefixbench.simulator.usage import PROMPT_EXCLUSIVE, PROMPT_EXCLUSIVE_BY_PEERS, Usage
from prefixbench.workloads.logs.formats import opencode_db
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, objects
from prefixbench.workloads.logs.formats.opencode import replace_seq
from prefixbench.workloads.logs.history import READ_TOOLS, make_message
from prefixbench.workloads.logs.jsonlines import json_object
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LoggedMessage, Prefix, TraceRequest

NAME = "zed"
#: The table (and the columns read) a database must have to be Zed's threads database.
TABLE = ("id", "summary", "updated_at", "data_type", "data")
#: The serialized thread versions whose usage is one entry per model call.
PER_CALL_VERSIONS = ("0.1.0", "0.2.0")
#: The version whose usage is one entry per user turn (the turn's last call).
PER_TURN_VERSION = "0.3.0"
#: Every such version: 0.4.0 (2026, the thread's append-only event log added) keeps the same
#: ``request_token_usage`` map.
PER_TURN_VERSIONS = (PER_TURN_VERSION, "0.4.0")
#: Largest thread JSON read, decompressed (bytes): far above any thread's.
MAX_THREAD_BYTES = 512 * 1024 * 1024
#: Most threads read from one database.
MAX_ROWS = 10_000_000
#: The keys of Zed's TokenUsage.
_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
#: What records Zed's calls one by one, said where a thread or database holds no per-call usage.
RECORD_INSTEAD = "record Zed's calls with `prefixbench proxy` (Zed's provider settings take its URL as api_url)"


def per_turn_why(version: str) -> str:
    """Why a thread of ``version`` (one of :data:`PER_TURN_VERSIONS`) is not read as calls."""
    return (f"a thread of Zed's current agent (version {version}): it keeps one usage per user turn, "
            "the turn's last call, not each call's")


def detect(value: dict) -> Evidence | None:
    """A serialized Zed thread: a ``version`` string, ``updated_at``, ``messages`` and Zed's token
    usage keys (or the ``summary`` of a thread from before them)."""
    if not isinstance(value.get("messages"), list):
        return None
    if not isinstance(value.get("version"), str) or not isinstance(value.get("updated_at"), str):
        # Zed's usage keys beside a version and updated_at of another type: a damaged thread,
        # claimed so that its version is named (it read as a request body: "field 'model' ...").
        if ("request_token_usage" in value or "cumulative_token_usage" in value) and "version" in value and "updated_at" in value:
            return Evidence.WRAPPER
        return None
    if "request_token_usage" in value or "cumulative_token_usage" in value:
        return Evidence.WRAPPER
    return None


def is_zed_db(path: Path) -> bool:
    """Whether ``path`` is Zed's threads database: the SQLite header and the ``threads`` table.

    Raises:
        UserError: a SQLite file that cannot be read (locked, corrupt).
    """
    if not path.is_file() or not opencode_db.has_header(path):
        return False
    db = opencode_db.connect(path, "Zed")
    try:
        return set(TABLE) <= opencode_db.columns(db, "threads")
    except sqlite3.Error as exc:
        raise opencode_db.failure(path, exc, "Zed") from None
    finally:
        db.close()


def _rules(provider_id: str, model: str) -> ProviderRules | None:
    """Who served a call: the provider the model's name gives, else the one Zed's provider id
    names as an agent handler; None for one the audit does not model, and for a host running open
    models itself (Zed's ``ollama``, ``lmstudio``: :func:`~prefixbench.simulator.providers.vllm.self_hosted`),
    whose cache is its own whatever the model's name."""
    if self_hosted(provider_id):
        return None
    rules = provider_of_model(model)
    if rules is None:
        handler = agent_handler(provider_id)
        rules = handler[0] if handler is not None else None
    return rules if rules is not None and rules.reports_usage else None


def _content(message: dict) -> list[dict]:
    """A legacy message's content as Anthropic-shaped blocks (text, tool uses, tool results)."""
    blocks: list[dict] = []
    for segment in message.get("segments") if isinstance(message.get("segments"), list) else []:
        segment = as_dict(segment)
        text = segment.get("text")
        if isinstance(text, str):
            blocks.append({"type": "text", "text": text})
    if isinstance(message.get("context"), str) and message["context"]:
        blocks.append({"type": "text", "text": message["context"]})
    for use in message.get("tool_uses") if isinstance(message.get("tool_uses"), list) else []:
        use = as_dict(use)
        blocks.append({"type": "tool_use", "name": str(use.get("name") or ""), "input": use.get("input")})
    for result in message.get("tool_results") if isinstance(message.get("tool_results"), list) else []:
        blocks.append({"type": "tool_result", "content": as_dict(result).get("content")})
    return blocks


def _marks(content: list[dict]) -> tuple[str, ...]:
    """``file-read`` where the content asks for a file-reading tool (Zed's ``read_file``)."""
    return ("file-read",) if any(b["type"] == "tool_use" and b["name"].lower() in READ_TOOLS for b in content) else ()


class _Thread:
    """The requests of one serialized thread."""

    def __init__(self, file: str, line: int, where: str, lane: str, value: dict, label: str = "") -> None:
        self.file = file
        self.line = line
        self.where = where
        #: What a skipped record's reason starts with: the thread, in a database of many.
        self.label = label
        self.lane = lane
        self.value = value
        self.out: list[TraceRequest] = []
        self.skipped: list[tuple[int, str]] = []
        #: Tokens counted here and Zed's own cumulative_token_usage of the thread, for the notes.
        self.counted = dict.fromkeys(_KEYS, 0)
        self.zed_total = dict.fromkeys(_KEYS, 0)
        self.unknown_provider = 0
        self.cache_unreported = 0
        #: Calls of a subset provider read with the cached part outside input_tokens, and whether
        #: the thread's calls say so (one read above its input_tokens).
        self.read_exclusive = 0
        self.exclusive = False
        #: The thread's calls' upstream: its provider where that is a host running open models
        #: itself or a third-party host of them (a provider Zed's user named ``Together AI``),
        #: whose price is its own or none, so the calls are left unpriced; "" for any other.
        self.upstream = ""

    def read(self) -> None:
        version = self.value.get("version")
        if version in PER_TURN_VERSIONS:
            turns = len(as_dict(self.value.get("request_token_usage")))
            self.skipped.append((self.line, f"{self.label}{per_turn_why(version)} ({turns} turn(s)): not read as calls"))
            return
        if version not in PER_CALL_VERSIONS:
            self.skipped.append((self.line, f"{self.label}a Zed thread of version {str(version)[:20]!r}, which audit does not know"))
            return
        messages = self.value["messages"]
        usages = self.value.get("request_token_usage")
        if usages is None:
            usages = []
        if not isinstance(usages, list):
            raise UserError(f"{self.where}: request_token_usage is not a list (version {version})")
        model_of = as_dict(self.value.get("model"))
        model = model_of.get("model") if isinstance(model_of.get("model"), str) and model_of.get("model") else NO_MODEL
        provider_id = model_of.get("provider") if isinstance(model_of.get("provider"), str) else ""
        rules = _rules(provider_id, model)
        self.upstream = billing_host(provider_id)
        for key in _KEYS:
            self.zed_total[key] = count(as_dict(self.value.get("cumulative_token_usage")).get(key), self.where, f"cumulative_token_usage.{key}")
        calls: list[tuple[int, dict[str, int]]] = []
        previous: dict[str, int] | None = None
        for index, message in enumerate(messages):
            if not isinstance(message, dict):
                raise UserError(f"{self.where}: messages[{index}] is not an object")
            if message.get("role") != "assistant":
                continue
            if index >= len(usages) or usages[index] is None:
                self.skipped.append((self.line, f"{self.label}messages[{index}]: assistant message without usage (its call reported none)"))
                continue
            entry = usages[index]
            if not isinstance(entry, dict):
                raise UserError(f"{self.where}: request_token_usage[{index}] is not an object")
            got = {key: count(entry.get(key), self.where, f"request_token_usage[{index}].{key}") for key in _KEYS}
            if got == previous:
                self.skipped.append((self.line, f"{self.label}messages[{index}]: usage copied from the previous call (its own call reported none)"))
                continue
            previous = got
            if not any(got.values()):
                self.skipped.append((self.line, f"{self.label}messages[{index}]: call with no tokens"))
                continue
            calls.append((index, got))
        # Zed's OpenAI-shaped mappers wrote zeros for the cache counts: a thread whose calls never
        # report one says nothing about its cache.
        reports_cache = any(got["cache_read_input_tokens"] or got["cache_creation_input_tokens"] for _, got in calls)
        # Later Zed versions take the cached part out of Google's prompt count: a call whose read
        # exceeds its input_tokens can only be such, and so are the other calls of its thread.
        self.exclusive = any(got["cache_read_input_tokens"] > got["input_tokens"] for _, got in calls)
        self._requests(messages, calls, rules, model, reports_cache)

    def _usage(self, got: dict[str, int], rules: ProviderRules | None, reports_cache: bool, index: int) -> Usage:
        tokens_in, output = got["input_tokens"], got["output_tokens"]
        read, write = got["cache_read_input_tokens"], got["cache_creation_input_tokens"]
        if rules is None or rules.is_additive:
            self.unknown_provider += rules is None
            return Usage(cache_read=read, cache_write_5m=write, uncached=tokens_in, output=output)
        if not reports_cache:
            self.cache_unreported += 1
            return Usage(uncached=tokens_in, output=output, cache_reported=False)
        if self.exclusive:
            self.read_exclusive += 1
            how = PROMPT_EXCLUSIVE if read > tokens_in else PROMPT_EXCLUSIVE_BY_PEERS
            return Usage(cache_read=read, cache_write_5m=write, uncached=tokens_in, output=output, prompt_count=how)
        return subset_usage(
            tokens_in, read, write, output,
            excess=f"{self.where}: request_token_usage[{index}]: cache tokens ({read} read, {write} written) exceed input_tokens {tokens_in}",
        )

    def _requests(self, messages: list, calls: list[tuple[int, dict[str, int]]], rules: ProviderRules | None, model: str, reports_cache: bool) -> None:
        by_index = dict(calls)
        pending: list[LoggedMessage] = []
        events: list[tuple[str, str]] = []
        blocks = 0
        parent: str | None = None
        head = f"zed:main:{model}"
        for index, message in enumerate(messages):
            role = message.get("role")
            if role not in ("user", "assistant"):
                continue  # a system message is not part of the thread's requests
            content = _content(message)
            if role == "user":
                # In 0.1.0 a tool result is a user message of its own: no user turn.
                if not message.get("tool_results"):
                    events.append(("user_turn", ""))
                pending.append(make_message("user", content, _marks(content)))
                blocks += max(1, len(content))
                continue
            got = by_index.get(index)
            if got is not None:
                usage = self._usage(got, rules, reports_cache, index)
                for key in _KEYS:
                    self.counted[key] += got[key]
                node = f"zed:{self.lane}#{index}"
                self.out.append(
                    TraceRequest(
                        file=self.file,
                        line=self.line,
                        # Every call of a thread is on its record's line (a database's on line 1).
                        path=f"{self.label.removesuffix(': ')} messages[{index}]".lstrip(),
                        lane=self.lane,
                        lane_kind="main",
                        seq=len(self.out),
                        sent_ms=None,
                        ready_ms=None,
                        provider=rules.name if rules is not None else UNKNOWN.name,
                        model=model,
                        usage=usage,
                        prefix=Prefix(head, node, parent, max(1, blocks)),
                        events=tuple(events),
                        request_id=f"{self.lane}#{index}",
                        source_format=NAME,
                        messages=tuple(pending),
                        upstream=self.upstream,
                    )
                )
                parent, events, pending, blocks = node, [], [], 0
            # The assistant message (and, from 0.2.0, the tool results on it) is in the next prompt.
            pending.append(make_message("assistant", content, _marks(content)))
            blocks += max(1, len(content))


def _notes(threads: list[_Thread], where: str) -> tuple[str, ...]:
    notes = [f"Zed's threads keep no time per message: {where}'s calls are read in order, without times (no TTL expiry is judged)",
             "Zed's system prompt and tools are not in a thread: the head is an opaque prefix per model, shared by every thread"]
    unknown = sum(t.unknown_provider for t in threads)
    unreported = sum(t.cache_unreported for t in threads)
    if unknown:
        notes.append(f"{unknown} call(s) of a provider the audit does not model read as additive (input_tokens without the cache counts)")
    exclusive = sum(t.read_exclusive for t in threads)
    if exclusive:
        notes.append(f"{exclusive} call(s) through a provider whose prompt count includes the cache, in threads where a call's read exceeds "
                     "its input_tokens (later Zed versions take the cached part out): read with input_tokens excluding the cache")
    if unreported:
        notes.append(f"{unreported} call(s) through a provider whose prompt count includes the cache, in threads that never report a cache count "
                     "(Zed's OpenAI-shaped mappers wrote zeros there): read as cache not reported")
    read = [t for t in threads if t.out]
    if threads and not read and not any(t.skipped for t in threads):  # first: what the audit's "nothing to audit" quotes
        notes.insert(0, f"no call read from {where}: no assistant message with its call's usage")
    if read:
        ours = {key: sum(t.counted[key] for t in read) for key in _KEYS}
        zeds = {key: sum(t.zed_total[key] for t in read) for key in _KEYS}
        shown = ", ".join(f"{key} {ours[key]:,}" + ("" if ours[key] == zeds[key] else f" (Zed's {zeds[key]:,})") for key in _KEYS)
        notes.append(f"counted against Zed's own cumulative_token_usage of the threads read: {shown}")
    return tuple(notes)


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A thread JSON's requests (one thread taken out of the database); see the module doc."""
    threads: list[_Thread] = []
    for record in objects(path, records, " (a Zed thread)"):
        value: dict = record.value  # type: ignore[assignment]
        if detect(value) is None:
            raise UserError(f"{path}:{record.line}: not a Zed thread (no version, updated_at, messages and token usage)")
        thread = _Thread(str(path), record.line, f"{path}:{record.line}", "main" if not threads else f"thread{len(threads)}", value)
        thread.read()
        threads.append(thread)
    if not threads:
        raise UserError(f"{path}:1: empty file, no Zed thread")
    return _summary(path, threads, "the thread")


def _summary(path: Path, threads: list[_Thread], where: str) -> tuple[list[TraceRequest], FileSummary]:
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    for thread in threads:
        out.extend(replace_seq(thread.out, len(out)))
        skipped.extend(thread.skipped)
    if not out:
        versions = sorted({str(t.value.get("version")) for t in threads if t.value.get("version") in PER_TURN_VERSIONS})
        per_turn = sum(1 for t in threads if t.value.get("version") in PER_TURN_VERSIONS)
        if per_turn:
            raise UserError(
                f"{path}: {per_turn} of {len(threads)} Zed thread(s) {'is' if per_turn == 1 else 'are'} of its current agent "
                f"(version {' and '.join(versions)}), which keeps one usage per user turn (the turn's last call), not each call's; "
                f"no thread here holds each call's usage: no request to audit; {RECORD_INSTEAD}"
            )
    return out, FileSummary(str(path), NAME, len(out), tuple(skipped), _notes(threads, where))


def _thread_json(path: Path, row_id: str, data_type: object, data: object) -> dict:
    """A ``threads`` row's ``data``, decompressed when ``zstd``, as a JSON object; else one line."""
    where = f"{path}: thread {row_id[:80]!r}"
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, bytes):
        raise UserError(f"{where}: data is not a blob")
    if data_type == "zstd":
        try:  # imported here: only a database needs it, and start-up time is a feature
            import zstandard
        except ImportError:
            raise UserError(f"{where}: zstd-compressed: reading it needs the zstandard package (pip install zstandard)") from None
        try:
            with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as reader:
                raw = reader.read(MAX_THREAD_BYTES + 1)
        except zstandard.ZstdError as exc:
            raise UserError(f"{where}: data is not valid zstd ({str(exc)[:80]})") from None
        if len(raw) > MAX_THREAD_BYTES:
            raise UserError(f"{where}: data decompresses to more than {MAX_THREAD_BYTES:,} bytes")
    elif data_type == "json":
        raw = data
    else:
        raise UserError(f"{where}: data_type {str(data_type)[:20]!r} is neither json nor zstd")
    return json_object(raw, where, "data")


def read_db(path: Path, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The requests of every thread in Zed's threads database, each a lane named by its id."""
    db = opencode_db.connect(path, "Zed")
    threads: list[_Thread] = []
    try:
        rows = db.execute("SELECT id, data_type, data FROM threads ORDER BY updated_at, id LIMIT ?", (MAX_ROWS,))
        for row_id, data_type, data in rows:
            tid = str(row_id)
            value = _thread_json(path, tid, data_type, data)
            thread = _Thread(str(path), 1, f"{path}: thread {tid[:80]!r}", tid, value, f"thread {tid[:80]!r}: ")
            if detect(value) is None:
                version = value.get("version")
                why = "no token usage (a thread from before Zed kept any)" if version is None else f"not a thread Zed's agent wrote (version {str(version)[:20]!r})"
                thread.skipped.append((1, f"{thread.label}{why}"))
            else:
                thread.read()
            threads.append(thread)
    except sqlite3.Error as exc:
        raise opencode_db.failure(path, exc, "Zed") from None
    finally:
        db.close()
    out, summary = _summary(path, threads, "a thread")
    if not threads:  # first, so that the audit's "nothing to audit" says this, not the notes on times
        notes = ("a Zed threads database holding no thread: no call to read (opened read-only)", *summary.notes)
    else:
        notes = (*summary.notes, f"a Zed threads database: {len(threads):,} thread(s), {sum(bool(t.out) for t in threads):,} read call by call (opened read-only)")
    return out, replace(summary, notes=notes)


FORMAT = LogFormat(
    name=NAME,
    noun="Zed thread",
    nouns="Zed threads",
    description="Zed's agent panel threads (~/.local/share/zed/threads/threads.db, or one thread's JSON: per-call usage in versions 0.1.0 and 0.2.0)",
    detect=detect,
    read=read,
    usage="by-endpoint",
    versions=(
        "unversioned threads (before Zed kept token usage): no usage, skipped",
        "0.1.0: request_token_usage one entry per message, tool results as user messages of their own",
        "0.2.0: the same, tool results on the assistant message that asked for them",
        "0.3.0 (Zed's current agent): one usage per user turn (its last call): skipped, and a database of only such threads is refused",
        "0.4.0 (2026: the same usage map, an append-only thread_log beside the messages and a thread_events table): as 0.3.0",
        "data_type json and zstd",
    ),
    detect_file=is_zed_db,
    read_file=read_db,
    file_suffixes=(".db",),
    aliases=("zed-threads",),
)
