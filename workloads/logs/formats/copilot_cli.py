"""GitHub Copilot CLI's session store: ``~/.copilot/session-store.db`` (``$COPILOT_HOME``), the
SQLite database Copilot CLI keeps beside its ``session-state/<id>/`` folders, read where it holds
``assistant_usage_events`` (store schemas 6 to 8, Copilot CLI 1.0.73 to 1.0.91 seen; the changelog
of 1.0.69 says "Show exact local assistant usage in Chronicle and session SQL"). That table has one row per
model call: ``id`` (autoincrement), ``session_id``, ``turn_index`` (the user turn), ``model``,
``input_tokens``, ``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``,
``reasoning_tokens``, ``total_nano_aiu``, ``duration_ms``, ``time_to_first_token_ms``,
``finish_reason``, ``agent_id``, ``parent_tool_call_id``, ``initiator``, ``created_at`` (ISO
8601), and more that are not read. The same rows exported as JSON (``sqlite3 -json
session-store.db "SELECT * FROM assistant_usage_events"``: an array of row objects, or one a line)
are read the same way.

The session folders' ``events.jsonl`` holds no call's prompt or cache counts (its per-call
``assistant.usage`` event is never written to it): it is refused, pointing here and to the OTel
export (``formats.COPILOT_CLI``); where the store of its home (or one in the same folder) has no
usage table either, the refusal says so of both and names only the OTel export and a later
Copilot CLI (``copilot_store.neither_holds_usage``). A store of an earlier schema (2 and 4 are seen) has ``sessions``
and ``turns`` but no usage table: named on the command line, it is one line saying so. So are
``copilot -p --output-format json``'s output (``formats.headless.COPILOT_JSON``: no call's prompt
or cache counts) and a legacy ``history-session-state/<id>.json`` session
(``copilot_store.LEGACY_SESSION``: no token count).

Usage convention: ``input_tokens`` is the whole prompt, cache reads and writes included, for
every model Copilot routes (Claude, GPT, Gemini): each row's billed counts (``token_details_json``)
say so (docs/formats.md says how we know); so ``uncached = input - read - written``. Were any row's ``input_tokens`` below its reads
plus writes, the file could not be read so: it is then read as additive (``uncached = input``),
and the notes say which reading was taken. A NULL count is not reported (a NULL write count of a
provider that bills writes apart: what it wrote is unknown); a row with no tokens at all is a
call that failed or was aborted, counted apart.

Copilot CLI 1.0.102's rows also keep their billed counts per token type (``token_details_json``:
``[{tokenType, tokenCount, model?, ...}]``): where those name 1-hour cache writes
(``cache_write_1h``), the call's writes are the larger of ``cache_write_tokens`` and the billed
5-minute plus 1-hour writes (as 1.0.102's own usage sums count them: its bundle's function
``ubn``), no more than ``input_tokens`` holds beside the reads where it holds them, the 1-hour
ones read as such; whether the file is additive is decided on the columns alone. A call a host
reported without a model (``usageReported``: model ``unknown``) is named by its billing model
(``copilot_usage_model``, else the one model of its billed counts).

Who served a call is asked of :func:`prefixbench.simulator.providers.provider_of_model` with its
``model``. Lanes: each session is one (``main``); a row with an ``agent_id`` (other than ``main``)
or a ``parent_tool_call_id`` is a subagent's, in the lane ``<session>/<agent>``. A call was done
when its row was written (``created_at``) and sent ``duration_ms`` before.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import counted_provider, writes_unreported
from prefixbench.simulator.providers.base import count
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import Lane, parse_time_ms
from prefixbench.workloads.logs.formats.copilot_store import COLUMNS, SUFFIXES, TABLE, is_store, rows
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LaneKind, Prefix, TraceRequest

NAME = "copilot-cli"
_COLUMNS = frozenset(COLUMNS)


def detect(value: dict) -> Evidence | None:
    """An exported ``assistant_usage_events`` row: the usage columns, by name."""
    return Evidence.SHAPE if _COLUMNS <= value.keys() else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _entries(value: object) -> list[dict] | None:
    """The entries of a row's ``token_details_json`` (a JSON array of ``{tokenType, tokenCount,
    model?, ...}``); [] where the row has none, None where it is no such array."""
    if value is None or value == "":
        return []
    try:
        entries = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return None
    return entries if isinstance(entries, list) and all(isinstance(e, dict) for e in entries) else None


def _hour_writes(entries: list[dict], where: str) -> tuple[int, int]:
    """The billed 5 min and 1 h cache writes of a row's token details: ``cache_write`` and
    ``cache_write_1h``, each summed (0, 0 where no entry names 1 h writes)."""
    if not any(e.get("tokenType") == "cache_write_1h" for e in entries):
        return 0, 0
    five = hour = 0
    for entry in entries:
        kind = entry.get("tokenType")
        if kind in ("cache_write", "cache_write_1h"):
            n = count(entry.get("tokenCount"), where, f"token_details_json {kind} tokenCount")
            five, hour = (five + n, hour) if kind == "cache_write" else (five, hour + n)
    return five, hour


def _billing_model(row: dict, entries: list[dict]) -> str:
    """The model a row's billing names: ``copilot_usage_model``, else the one model its
    ``token_details_json`` ``entries`` name ("" where they name none, or two)."""
    if billed := _text(row.get("copilot_usage_model")):
        return billed
    models = {_text(e.get("model")) for e in entries}
    return models.pop() if len(models) == 1 else ""


class _Lane(Lane):
    def __init__(self, name: str, kind: LaneKind) -> None:
        super().__init__(name, kind)
        self.turn: object = None


def _calls(path: Path, rows: Iterable[tuple[int, dict, str]], source: str) -> tuple[list[TraceRequest], FileSummary]:
    """The requests of usage rows ``(line, row, where)``; see the module doc."""
    name = str(path)
    parsed: list[tuple[int, dict, str, int, int, int, int, int, int]] = []
    details: list[list[dict]] = []  # each row's token_details_json entries, parsed once
    for line, row, where in rows:
        inp, output, read, written = (count(row.get(key), where, key)
                                      for key in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"))
        details.append(_entries(row.get("token_details_json")) or [])
        five, hour = _hour_writes(details[-1], where)
        parsed.append((line, row, where, inp, output, read, written, five + hour, hour))
    if not parsed:
        raise UserError(f"{name}:1: no Copilot CLI usage row ({', '.join(COLUMNS)})")
    # input_tokens below its reads and writes cannot include them: read the file as additive
    # (decided on the columns alone: a billed count above cache_write_tokens is no column's).
    additive = any(inp < read + written for _, _, _, inp, _, read, written, _, _ in parsed)
    capped = 0
    for n, (line, row, where, inp, output, read, written, billed, hour) in enumerate(parsed):
        if hour:
            # 1.0.102's own usage sums (function ubn) count the larger of cache_write_tokens and the
            # billed 5 min plus 1 h writes; where input_tokens holds the writes, no more than it
            # holds beside the reads (uncached never below 0, as Copilot's own max(0, ...)).
            raised = max(written, billed)
            if not additive and raised > inp - read:
                raised, capped = inp - read, capped + 1
            parsed[n] = (line, row, where, inp, output, read, raised, billed, min(hour, raised))
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    lanes: dict[str, _Lane] = {}
    sessions: set[str] = set()
    not_reported = writes_unknown = hour_calls = renamed = 0
    for (line, row, where, inp, output, read, written, _, hour), entries in zip(parsed, details):
        sid = row.get("session_id")
        if not isinstance(sid, str) or not sid:
            raise UserError(f"{where}: session_id is not a session id ({sid!r:.40})")
        sessions.add(sid)
        if inp + output + read + written == 0:
            skipped.append((line, f"{source} {line}: no tokens (a call that failed or was aborted)"))
            continue
        model = _text(row.get("model")) or NO_MODEL
        # A call a remote host reported without a model (its usageReported relay event) is
        # written as "unknown", NO_MODEL's own spelling: its billing model names it.
        if model == NO_MODEL and (billed := _billing_model(row, entries)):
            model, renamed = billed, renamed + 1
        hour_calls += hour > 0
        agent = _text(row.get("agent_id")) if _text(row.get("agent_id")) not in ("", "main") else _text(row.get("parent_tool_call_id"))
        key = f"{sid}/{agent}" if agent else sid  # the whole id: two agents may share a long head
        lane = lanes.get(key)
        if lane is None:
            lane = lanes[key] = _Lane(key, "subagent" if agent else "main")
        turn = row.get("turn_index")
        if lane.kind == "main" and turn is not None and turn != lane.turn:
            lane.events.append(("user_turn", ""))
        lane.turn = turn if turn is not None else lane.turn
        lane.send_to(model)
        provider = counted_provider(model)
        uncached = inp if additive else inp - read - written
        writes_reported = not writes_unreported(row.get("cache_write_tokens") is not None, provider)
        cache_reported = row.get("cache_read_tokens") is not None or row.get("cache_write_tokens") is not None
        not_reported += not cache_reported
        writes_unknown += not writes_reported
        done = parse_time_ms(row["created_at"], f"{where}: created_at") if row.get("created_at") is not None else None
        duration = row.get("duration_ms")
        sent = done
        if done is not None and isinstance(duration, (int, float)) and not isinstance(duration, bool) and 0 <= duration < 86_400_000:
            sent = done - round(duration)
        node = f"{NAME}:{name}#{line}:{len(out)}"
        out.append(
            TraceRequest(
                file=name,
                line=line,
                lane=lane.name,
                lane_kind=lane.kind,
                seq=len(out),
                sent_ms=sent,
                ready_ms=None,
                done_ms=done,
                provider=provider,
                model=model,
                usage=Usage(cache_read=read, cache_write_5m=written - hour, cache_write_1h=hour, uncached=uncached, output=output,
                            cache_reported=cache_reported, writes_reported=writes_reported),
                prefix=Prefix(f"{NAME}:{lane.kind}:{model}", node, lane.parent),
                events=tuple(lane.events),
                request_id=f"{sid}#{row['id'] if isinstance(row.get('id'), int) and not isinstance(row.get('id'), bool) else line}",
                source_format=NAME,
            )
        )
        lane.parent = node
        lane.events = []
    reading = (
        "input_tokens below its cache reads and writes on some row, so it cannot include them: read as additive (uncached = input)"
        if additive
        else "input_tokens includes cache reads and writes (as Copilot CLI reports every model's): uncached = input - read - written"
    )
    notes = [f"{len(out)} call(s) of {len(sessions)} session(s): {reading}",
             "Copilot CLI's system prompt and tools are not in the store: the head is an opaque prefix per lane kind and model"]
    if skipped:
        notes.append(f"{len(skipped)} row(s) with no tokens (calls that failed or were aborted): not counted")
    if not_reported:
        notes.append(f"{not_reported} call(s) with NULL cache counts: their cache use is not reported, not zero")
    if writes_unknown:
        notes.append(f"{writes_unknown} call(s) of a provider that bills writes apart with a NULL write count: what they wrote is unknown")
    if hour_calls:
        notes.append(f"{hour_calls} call(s) whose billed counts (token_details_json) name 1-hour cache writes (cache_write_1h): "
                     "those are read as 1 h writes, the rest of cache_write_tokens as 5 min writes"
                     + (f" ({capped} of them billed more writes than input_tokens holds beside the reads: "
                        "read as what it holds)" if capped else ""))
    if renamed:
        notes.append(f"{renamed} call(s) reported by a host with no model (model {NO_MODEL!r}): "
                     "named by their billing model (copilot_usage_model, else the one model of token_details_json)")
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(notes))


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """Exported usage rows (a JSON array or JSON lines); a record that is no usage row (another
    table's, exported beside them) is counted in the notes, not read."""
    others = 0

    def exported() -> Iterator[tuple[int, dict, str]]:
        nonlocal others
        for record in records:
            if isinstance(record.value, dict) and detect(record.value) is not None:
                yield record.line, record.value, f"{path}:{record.line}"
            else:
                others += 1

    out, summary = _calls(path, exported(), "line")
    if others:
        summary = FileSummary(summary.file, summary.format, summary.requests, summary.skipped,
                              (*summary.notes, f"{others} record(s) that are no {TABLE} row: not read"))
    return out, summary


def read_store(path: Path, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The usage rows of a session store (opened read-only)."""
    out, summary = _calls(path, ((line, row, f"{path}: {TABLE} row {line}") for line, row in rows(path)), f"{TABLE} row")
    return out, FileSummary(summary.file, summary.format, summary.requests, summary.skipped,
                            (*summary.notes, "a GitHub Copilot CLI session store (opened read-only)"))


FORMAT = LogFormat(
    name=NAME,
    noun="Copilot CLI session store",
    nouns="Copilot CLI session stores",
    description="GitHub Copilot CLI's session store (~/.copilot/session-store.db, or its assistant_usage_events rows exported as JSON: one row per model call)",
    detect=detect,
    read=read,
    usage="subset",
    versions=(
        "store schemas 6 to 8 (Copilot CLI 1.0.73 to 1.0.91 seen; 1.0.77's read): assistant_usage_events, one row per model call, input_tokens including cache reads and writes",
        "Copilot CLI 1.0.102's store (checked from its package): the same columns read; token_details_json's 1-hour writes "
        "(cache_write_1h) read as 1 h, copilot_usage_model names a host-reported call of model unknown",
        "stores of schema 2 and 4 (1.0.14 to 1.0.60): no usage table, refused in one line",
        "the rows exported as JSON (sqlite3 -json: an array of row objects, or one a line)",
        "copilot -p --output-format json output (no call's prompt or cache counts) and legacy "
        "history-session-state/<id>.json sessions (no token count): refused in one line",
    ),
    aliases=("copilot", "copilot-store"),
    detect_file=is_store,
    read_file=read_store,
    file_suffixes=SUFFIXES,
)
