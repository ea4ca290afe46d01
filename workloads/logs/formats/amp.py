"""Amp threads (Sourcegraph's ampcode).

Amp keeps each thread as one JSON object, ``${AMP_DATA_DIR:-~/.local/share/amp}/threads/T-<uuid>.json``
(older VS Code extensions: ``globalStorage/sourcegraph.amp/threads3/``), rewritten whole as the
thread grows: ``{id: "T-...", v, created, title, agentMode, env, messages, usageLedger?}``.

* ``messages[]``: ``{role, messageId, content: [blocks], state: {type, stopReason}, usage?}``;
  the content blocks are Anthropic-shaped (``text``, ``thinking``, ``tool_use``, ``tool_result``).
  Since about January 2026 an assistant message carries the usage of the one call that produced
  it: ``usage {model, inputTokens, outputTokens, cacheCreationInputTokens, cacheReadInputTokens,
  totalInputTokens, credits, timestamp}``.
* Older threads keep ``usageLedger.events[]``: ``{id, timestamp, model, credits, tokens {input,
  output}, operationType, fromMessageId, toMessageId}``; the cache counts of such an event sit in
  the usage of the assistant message ``toMessageId`` names.

One request per assistant message with usage, in message order; a ledger event is a request of
its own only when the message it names was not counted from its own usage (so a thread holding
both is counted once), in the lane ``side:<operationType>`` when that is not ``inference``.

Times: a call ended at its usage's ``timestamp`` (``done_ms``), or, in a thread of late 2025 whose
usage has none, when the ledger event naming its message was billed (that event's ``timestamp``,
seconds after the user message the call answers); it was sent when the user message it answers
was (``meta.sentAt``), or, after a tool result (which Amp does not stamp), at the latest when it
ended.

Usage convention, decided per call from what the thread says: ``inputTokens`` is Anthropic's
uncached input (additive: ``totalInputTokens = inputTokens + cacheCreationInputTokens +
cacheReadInputTokens``, what Amp's Claude calls show). Where a call's ``totalInputTokens`` equals
``inputTokens`` instead (the prompt count with the cached part inside: the subset convention
OpenAI, Gemini and xAI report), the reads and writes are taken out of it. A call without
``totalInputTokens`` is read as additive, the fields' own (Anthropic) naming, and the report
says how many were read so. Who served a call is asked of
:func:`prefixbench.simulator.providers.provider_of_model` with its ``model``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import counted_provider
from prefixbench.simulator.providers.base import count
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import Lane, as_dict, objects, parse_time_ms
from prefixbench.workloads.logs.history import READ_TOOLS, make_message
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LaneKind, LoggedMessage, Prefix, TraceRequest

NAME = "amp"
#: The keys of a call's usage in an assistant message.
_SPLIT_KEYS = ("inputTokens", "outputTokens", "cacheCreationInputTokens", "cacheReadInputTokens")


def detect(value: dict) -> Evidence | None:
    """A thread: an ``id`` ``T-...`` with ``messages`` or a ``usageLedger``."""
    tid = value.get("id")
    if isinstance(tid, str) and tid.startswith("T-") and ("messages" in value or "usageLedger" in value):
        return Evidence.WRAPPER
    return None


def _message_id(value: object) -> int | str | None:
    """A message id (Amp writes integers) as a key; anything else names no message."""
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else None


class _Lane(Lane):
    def __init__(self, name: str, kind: LaneKind) -> None:
        super().__init__(name, kind)
        self.blocks = 0
        self.pending: list[LoggedMessage] = []
        #: When the user message the next call answers was sent (``meta.sentAt``), if one was.
        self.input_ms: int | None = None


class _Thread:
    """The requests of one thread object."""

    def __init__(self, path: Path, record: Record, value: dict, out: list[TraceRequest]) -> None:
        self.name = str(path)
        self.line = record.line
        self.where = f"{self.name}:{record.line}"
        self.value = value
        self.tid = str(value["id"]) if isinstance(value.get("id"), str) else f"line{record.line}"
        self.out = out
        self.skipped: list[tuple[int, str]] = []
        self.lanes: dict[str, _Lane] = {}
        self.credits = 0.0
        self.credits_seen = False
        self.additive_assumed = 0
        self.subset_read = 0
        self.ledger_calls = 0
        #: Calls counted from their message's usage, timed by the ledger event naming the message.
        self.ledger_timed = 0

    def lane(self, name: str = "main", kind: LaneKind = "main") -> _Lane:
        found = self.lanes.get(name)
        if found is None:
            found = self.lanes[name] = _Lane(name, kind)
        return found

    def _list(self, value: object, what: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            raise UserError(f"{self.where}: Amp thread {what} is not a list")
        return value

    def read(self) -> None:
        messages = self._list(self.value.get("messages"), "messages")
        ledger = self._list(as_dict(self.value.get("usageLedger")).get("events"), "usageLedger.events")
        if "usageLedger" in self.value and not isinstance(self.value["usageLedger"], dict):
            raise UserError(f"{self.where}: Amp thread usageLedger is not an object")
        counted: set[object] = set()
        cache_of: dict[object, dict] = {}
        ledger_by_message: dict[object, list[dict]] = {}
        for event in ledger:
            if not isinstance(event, dict):
                raise UserError(f"{self.where}: a usageLedger event is not an object")
            ledger_by_message.setdefault(_message_id(event.get("toMessageId")), []).append(event)
        main = self.lane()
        if not messages and not ledger:
            self.skipped.append((self.line, "an Amp thread with no message yet (Amp writes one when a thread is opened): no call in it"))
        for index, message in enumerate(messages):
            if not isinstance(message, dict):
                raise UserError(f"{self.where}: messages[{index}] is not an object")
            role = message.get("role")
            content = message.get("content")
            if role != "assistant":
                blocks = content if isinstance(content, list) else [content]
                main.blocks += max(1, len(blocks))
                tool = any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)
                if role == "user" and not tool:
                    main.events.append(("user_turn", ""))
                    sent_at = as_dict(message.get("meta")).get("sentAt")
                    if sent_at is not None:
                        main.input_ms = parse_time_ms(sent_at, f"{self.where}: messages[{index}].meta.sentAt")
                marks = ("file-read",) if any(
                    isinstance(b, dict) and str(b.get("name") or "").lower() in READ_TOOLS for b in blocks
                ) else ()
                main.pending.append(make_message(str(role), content, marks))
                continue
            main.blocks += 1
            usage = message.get("usage")
            mid = _message_id(message.get("messageId"))
            before = (len(self.out), len(self.skipped))
            if usage is not None and not isinstance(usage, dict):
                raise UserError(f"{self.where}: messages[{index}].usage is not an object")
            if isinstance(usage, dict) and any(k in usage for k in ("inputTokens", "outputTokens")):
                stamp = self._ledger_stamp(ledger_by_message.get(mid, [])) if usage.get("timestamp") is None and mid is not None else None
                if stamp is not None:
                    usage = {**usage, "timestamp": stamp}
                if self._call(main, usage, message, f"messages[{index}].usage", usage.get("credits")):
                    counted.add(mid)
                    self.ledger_timed += stamp is not None
            elif isinstance(usage, dict) and usage:
                cache_of[mid] = usage
            # The ledger's events for this message, when its own usage did not count it.
            if mid is not None and mid not in counted:
                for event in ledger_by_message.pop(mid, []):
                    self._ledger(event, cache_of.get(mid, {}))
            if (len(self.out), len(self.skipped)) == before:
                state = as_dict(message.get("state")).get("type")
                self.skipped.append((self.line, f"messages[{index}]: assistant message with no counted usage ({str(state or 'no state')[:40]})"))
            main.pending.append(make_message("assistant", content))
        for mid, events in ledger_by_message.items():
            if mid is not None and mid in counted:
                continue  # the message's own usage counted this call
            for event in events:
                self._ledger(event, cache_of.get(mid, {}))

    @staticmethod
    def _ledger_stamp(events: list[dict]) -> object:
        """When the inference event naming a message was billed (its call's end), if one says."""
        for event in events:
            if event.get("operationType") in (None, "inference") and event.get("timestamp") is not None:
                return event["timestamp"]
        return None

    def _ledger(self, event: dict, cache: dict) -> None:
        where = f"usageLedger event {str(event.get('id'))[:40]}"
        tokens = event.get("tokens")
        if not isinstance(tokens, dict):
            self.skipped.append((self.line, f"usageLedger event {str(event.get('id'))[:40]} without tokens"))
            return
        op = event.get("operationType")
        lane = self.lane() if op in (None, "inference") else self.lane(f"side:{str(op)[:40]}", "side")
        usage = {
            "model": event.get("model"),
            "timestamp": event.get("timestamp"),
            "inputTokens": tokens.get("input"),
            "outputTokens": tokens.get("output"),
            "cacheCreationInputTokens": cache.get("cacheCreationInputTokens"),
            "cacheReadInputTokens": cache.get("cacheReadInputTokens"),
            "totalInputTokens": cache.get("totalInputTokens"),
        }
        if self._call(lane, usage, {"messageId": _message_id(event.get("toMessageId"))}, where, event.get("credits")):
            self.ledger_calls += 1

    def _usage(self, usage: dict, where: str) -> tuple[Usage, str]:
        got = {key: count(usage.get(key), where, key) for key in _SPLIT_KEYS}
        tokens_in, output, write, read = got["inputTokens"], got["outputTokens"], got["cacheCreationInputTokens"], got["cacheReadInputTokens"]
        total = usage.get("totalInputTokens")
        reading = "assumed"
        if total is not None:
            reading = "additive"
            total = count(total, where, "totalInputTokens")
            if total != tokens_in + read + write and total == tokens_in and 0 < read + write <= tokens_in:
                # The prompt count with the cached part inside (a subset-convention provider).
                reading = "subset"
                tokens_in -= read + write
        return Usage(cache_read=read, cache_write_5m=write, uncached=tokens_in, output=output), reading

    def _call(self, lane: _Lane, usage: dict, message: dict, where: str, credits: object) -> bool:
        model = usage.get("model") if isinstance(usage.get("model"), str) and usage.get("model") else lane.model or NO_MODEL
        reported, reading = self._usage(usage, f"{self.where}: {where}")
        if isinstance(credits, (int, float)) and not isinstance(credits, bool) and credits == credits and abs(credits) < 1e12:
            self.credits += credits
            self.credits_seen = True
        if reported.prompt + reported.output == 0:
            self.skipped.append((self.line, f"{where}: call with no tokens"))
            return False
        self.additive_assumed += reading == "assumed"
        self.subset_read += reading == "subset"
        done = parse_time_ms(usage.get("timestamp"), f"{self.where}: {where}") if usage.get("timestamp") is not None else None
        # Sent when its user message was (meta.sentAt); after a tool result (Amp stamps none) the
        # latest it can have been sent is when it ended.
        sent = lane.input_ms if lane.input_ms is not None and (done is None or lane.input_ms <= done) else done
        if lane.model is not None and model != lane.model:
            lane.events.append(("model_change", f"{lane.model} -> {model}"))
        lane.model = str(model)
        mid = _message_id(message.get("messageId"))
        key = f"{self.tid}#{str(mid)[:40]}" if mid is not None else f"{self.tid}#{len(self.out)}"
        node = f"amp:{self.name}:{key}:{len(self.out)}"
        self.out.append(
            TraceRequest(
                file=self.name,
                line=self.line,
                path=where.removesuffix(".usage"),  # a thread is one object: every call is on its line
                lane=lane.name,
                lane_kind=lane.kind,
                seq=len(self.out),
                sent_ms=sent,
                ready_ms=None,
                done_ms=done,
                provider=counted_provider(str(model)),
                model=str(model),
                usage=reported,
                prefix=Prefix(f"amp:{lane.kind}:{model}", node, lane.parent, max(1, lane.blocks)),
                events=tuple(lane.events),
                request_id=key,
                source_format=NAME,
                messages=tuple(lane.pending) if lane.kind == "main" else (),
            )
        )
        lane.parent = node
        lane.events = []
        lane.blocks = 0
        lane.pending = []
        lane.input_ms = None
        return True


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A thread file's requests; see the module doc."""
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    credits = 0.0
    credits_seen = False
    assumed = subset = ledger = timed = 0
    seen_any = False
    for record in objects(path, records, " (an Amp thread)"):
        seen_any = True
        value: dict = record.value  # type: ignore[assignment]
        if detect(value) is None:
            raise UserError(f"{path}:{record.line}: not an Amp thread (no id T-... with messages or usageLedger)")
        thread = _Thread(path, record, value, out)
        thread.read()
        skipped += thread.skipped
        credits += thread.credits
        credits_seen = credits_seen or thread.credits_seen
        assumed += thread.additive_assumed
        subset += thread.subset_read
        ledger += thread.ledger_calls
        timed += thread.ledger_timed
    if not seen_any:
        raise UserError(f"{path}:1: empty file, no Amp thread")
    notes = ["Amp's system prompt and tools are not in a thread file: the head is an opaque prefix per lane kind and model, shared by every thread"]
    if assumed:
        notes.append(f"{assumed} call(s) without totalInputTokens read as additive (inputTokens excludes the cache reads and writes, as the field names say)")
    if subset:
        notes.append(f"{subset} call(s) whose totalInputTokens equals inputTokens read as subset (the cached part taken out of inputTokens)")
    if ledger:
        notes.append(f"{ledger} call(s) read from usageLedger events (older threads), cache counts from the message each names")
    if timed:
        notes.append(f"{timed} call(s) timed by the usageLedger event naming their message (their usage has no timestamp: threads before about January 2026)")
    if credits_seen:
        notes.append(f"Amp's own credits fields sum to {credits:.4f} (a check on the dollars here)")
    return out, FileSummary(str(path), NAME, len(out), tuple(skipped), tuple(notes))


FORMAT = LogFormat(
    name=NAME,
    noun="Amp thread",
    nouns="Amp threads",
    description="Amp threads (~/.local/share/amp/threads/T-<uuid>.json: messages with per-call usage, or an older usageLedger)",
    detect=detect,
    read=read,
    usage="additive",
    versions=(
        "threads from about January 2026: usage {model, inputTokens, outputTokens, cacheCreationInputTokens, cacheReadInputTokens, totalInputTokens, credits, timestamp} on each assistant message",
        "older threads: usageLedger.events {timestamp, model, credits, tokens {input, output}, operationType, toMessageId}, cache counts on the message named",
        "threads holding both: each call counted once (its message's usage first), timed by the ledger event naming the message where the usage has no timestamp",
        "a call whose totalInputTokens equals inputTokens (the cached part inside): read as subset",
        "threads of the local-first CLI (late 2025 to March 2026; later Amp keeps threads on its server), usage.timestamp from about January 2026",
    ),
    aliases=("ampcode",),
)
