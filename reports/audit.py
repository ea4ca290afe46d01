"""Writers for ``prefixbench audit``: terminal table, JSON, Markdown, CSV and PNG.

The audit itself lives in :mod:`prefixbench.workloads.audit`; nothing here recomputes it.
"""

from __future__ import annotations

import csv
import io
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from pathlib import Path

import msgspec
from msgspec.structs import replace

from prefixbench.reports.auditwords import causes_compaction_line, COMPACTION_HEADER, COMPACTIONS_AGAINST, PREDICTED_COMPACTION, compaction_cells, compactions_heading
from prefixbench.reports.auditwords import IDLE_GAP_MS, idle_duration, idle_gaps, file_labels, headline_hit, hit_cell, lost_cell, loss_legend, none_priced, none_seen, PREDICTED_HIT, SESSIONLESS_ROW, WRITES_NOT_REPORTED, paid_cell, ratio_basis, request_where, SHARED_LEGEND, left_out_counts, lost_total_words, model_paid_cell, no_usage_words, paid_total_words, relay_words, service_words, usd_cents4, REWRITE_LEGEND, MAIN_ABSENT
from prefixbench.reports.progress import ReadProgress
from prefixbench.reports.textable import ELLIPSIS, ellipsize, md_code, text_lines, visible
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import format_usd
from prefixbench.simulator.providers import rules_for
from prefixbench.workloads.audit.causes import CAUSES, VERDICTS, cause_meaning
from prefixbench.workloads.audit.explicit import usd_or_unknown
from prefixbench.workloads.audit.locate import short_where
from prefixbench.workloads.audit.core import AuditResult, AuditRow, FileCalibration, LaneSummary, ModelSummary, RollUp, Totals, fold_sessionless
from prefixbench.workloads.audit.losses import LOSS_CLASSES, LossSplit, Recommendation
from prefixbench.workloads.audit.schema import (
    CAUSE_FIELDS,
    CONVERTED_TYPES,
    AGREEMENT_FIELDS,
    LOSS_SPLIT_FIELDS,
    RECOMMENDATION_FIELDS,
    COMPACTION_FIELDS,
    FILE_FIELDS,
    LANE_FIELDS,
    MODEL_FIELDS,
    REQUEST_FIELDS as REQUEST_SCHEMA,
    REQUESTS_SHOWN_FIELDS,
    FILE_SESSION_FIELD,
    MAIN_ABSENT_FIELD,
    ROLLUP_FIELDS,
    SCHEMA_VERSION,
    TOTALS_FIELDS,
    EXPLICIT_CACHE_FIELDS,
    section_record,
)
from prefixbench.workloads.fields import names

#: Files drawn as a panel each in audit.png; beyond this, one panel holds every request.
CHART_PANELS = 12
#: Request slots a panel of audit.png spans at least (a one-request panel is not one wall of colour).
CHART_MIN_SLOTS = 3
#: Steps drawn in one panel of audit.png at most; past it, each step is the mean of several requests.
CHART_STEPS = 2000
#: Worst requests listed after the cause summary.
WORST = 15
#: The per-request columns of audit.csv and of each request in --format json, in order.
REQUEST_FIELDS = names(REQUEST_SCHEMA)


def request_record(row: AuditRow) -> dict[str, object]:
    """One request as JSON-ready data (dollars as numbers)."""
    return section_record(REQUEST_SCHEMA, row)


def audit_record(result: AuditResult, rows: Sequence[AuditRow] | None = None) -> dict[str, object]:
    """The whole audit as the ``--format json`` object (:mod:`prefixbench.workloads.audit.schema`);
    with ``rows``, only those requests (report.html's page of the worst ones)."""
    return {
        "schema": SCHEMA_VERSION,
        # What to change opens the object, as it opens every view.
        "loss_split": None if result.loss_split is None else _split_record(result.loss_split, result.totals),
        "recommendations": (
            None if result.recommendations is None
            else [_recommendation_record(rec) for rec in result.recommendations]
        ),
        "requests": [request_record(row) for row in (result.rows if rows is None else rows)],
        "lanes": [_group_record(LANE_FIELDS, lane, lane.reported_cache_read is None) for lane in result.lanes],
        "causes": [_group_record(CAUSE_FIELDS, cause) for cause in result.causes],
        "totals": _group_record(TOTALS_FIELDS, result.totals),
        "models": [_group_record(MODEL_FIELDS, model) for model in result.models],
        "files": [_file_record(calibration, result.session_of) for calibration in result.files],
        "agreement": [section_record(AGREEMENT_FIELDS, pair) for pair in result.agreement],
        "compactions": [section_record(COMPACTION_FIELDS, compaction) for compaction in result.compactions],
        "sessions": [_session_record(session) for session in result.sessions],
        "days": [_group_record(ROLLUP_FIELDS, day, day.misses is None) for day in result.days],
        "explicit_caches": [section_record(EXPLICIT_CACHE_FIELDS, cache) for cache in result.explicit_caches],
        "notes": list(result.notes),
    }


def _file_record(calibration, session_of: dict[str, str]) -> dict[str, object]:
    """A file's record: its group record (:func:`_group_record`), and ``session``, the main
    transcript of the session it is part of (``AuditResult.session_of``), on a file that is part of
    another's only: a file that is a session of its own is written as before."""
    record = _group_record(FILE_FIELDS, calibration)
    session = session_of.get(calibration.file)
    if session:
        record[FILE_SESSION_FIELD] = session
    return record


def _session_record(session: RollUp) -> dict[str, object]:
    """A session's record: its roll-up's (:func:`_group_record`), and ``main_transcript_absent``
    true where its key, its main transcript, is not among the files read (``RollUp.main_absent``):
    written on those records only, so a session read whole is written as before."""
    record = _group_record(ROLLUP_FIELDS, session, session.misses is None)
    if session.main_absent:
        record[MAIN_ABSENT_FIELD] = True
    return record


def _group_record(fields, group, unseen: bool = False) -> dict[str, object]:
    """A group's record (a lane, a model, a file, a session, a day, a cause), null where its
    table row says ``-`` or why it has no figure: ``cost_usd`` and ``lost_usd`` where none of its
    requests is priced (:func:`none_priced`: its *paid* cell says ``no usage``, ``no price``...),
    ``lost_usd`` and ``lost_tokens`` where nothing tells the loss of any of its requests
    (:func:`none_seen`: its *lost* cell says ``-``), and ``lost_tokens`` where no request of it
    reports its cache use (``unseen``: no miss could be seen), as its ``misses`` is; a 0 there
    would claim nothing was paid or lost. The totals too (their counts already None where no
    request reports them: :func:`reported_sum`)."""
    record = section_record(fields, group)
    # (a cause's shared misses, another cause's whose loss it shares, are of its misses here)
    if none_priced(group.requests + getattr(group, "shared_requests", 0), group.unpriced_requests):
        record["lost_usd"] = None
        if "cost_usd" in record:
            record["cost_usd"] = None
    if "unseen_requests" in record and none_seen(group.requests, group.unseen_requests):
        record["lost_usd"] = None
        unseen = True
    if unseen and "lost_tokens" in record:
        record["lost_tokens"] = None
    return record


def _split_record(split: LossSplit, totals: Totals) -> dict[str, object]:
    """The loss split's record, null where its dollars are unknown, as a group's are: the total
    where the totals' ``lost_usd`` is (none of the requests is priced), every class's where no miss
    could be seen at all (a block-hash trace's), and a class's where some of its requests lost
    tokens no dollar figure holds and no priced one lost anything (:meth:`LossSplit.usd_unknown`,
    which the text and the page decide by too); $0.00 there would claim nothing was lost. A class
    whose requests lost nothing (cold starts) is a known $0, priced or not."""
    record = section_record(LOSS_SPLIT_FIELDS, split)
    unknown = none_priced(totals.requests, totals.unpriced_requests)
    # (No request's loss told at all, priced or not: nothing was seen, no class is a known $0.)
    blind = none_seen(totals.requests, totals.unseen_requests)
    if unknown or blind:
        record["lost_usd"] = None
    # Where no request reports its cache use and no miss was classed (a block-hash trace alone),
    # no miss could be seen: an empty class is not a known $0 either.
    unseen = totals.cache_read is None and not any(split.requests(name) for name in LOSS_CLASSES)
    for name in LOSS_CLASSES:
        if (unknown and unseen) or blind or split.usd_unknown(name):
            record[f"{name}_usd"] = None
    return record


def _recommendation_record(rec: Recommendation) -> dict[str, object]:
    """A recommendation's record: ``lost_usd`` null where none of the misses it targets is
    priced (its *lost to its misses* reads ``unpriced``: :func:`~.advice.lost_words`), and
    ``saved_usd`` where what it saves is unknown for that reason (its *dollars* read ``unknown
    (unpriced)``: :func:`~.advice.saves_text`), not a 0.0 that reads as "does not pay"."""
    record = section_record(RECOMMENDATION_FIELDS, rec)
    if rec.lost_unknown:
        record["lost_usd"] = None
    if rec.saved_unknown:
        record["saved_usd"] = None
    return record


def _formatted(value: object) -> str:
    """``value`` as JSON text laid out as json.dumps(indent=1, ensure_ascii=False) lays it out.

    msgspec writes the same layout about 8x faster (10 MB for the shared logs: 0.35 s -> 0.045
    s); floats in plain notation (0.0000104, not 1.04e-05), the same values. A lone surrogate
    read from a log (legal in JSON text, not in UTF-8) is left to json.dumps, and escaped by the
    writers.
    """
    try:
        return msgspec.json.format(msgspec.json.encode(value), indent=1).decode()
    except UnicodeEncodeError:
        import json

        return json.dumps(value, indent=1, ensure_ascii=False)


def audit_json_chunks(result: AuditResult, what_if: list[dict[str, object]] | None = None) -> Iterator[str]:
    """``--format json`` as pieces of text, one request at a time, so that the whole object is
    never held at once (the requests are most of it: 85,000 of them are 60 MB of text); joined,
    the pieces are exactly the object laid out with indent 1."""
    record = audit_record(result, rows=())
    if what_if is not None:
        # Each fix's changed requests (one a request a fix changes: as many as the log's for
        # ttl-1h) are spliced in as the requests are, a few dozen at a time, not laid out whole.
        record["what_if"] = [{**fix, "changes": []} if "changes" in fix else fix for fix in what_if]
    # Every other section is small: lay the object out with no request, then splice them in
    # where its empty list is (keys sit at depth 1, and a JSON string holds no raw newline).
    head, tail = _formatted(record).split(_EMPTY_REQUESTS, 1)
    yield head + '\n "requests": ['
    rows = result.rows
    for start in range(0, len(rows), ROWS_A_CHUNK):
        yield ("\n" if start == 0 else ",\n") + _formatted_rows(rows[start:start + ROWS_A_CHUNK])
    if what_if is None:
        yield ("\n ]" if rows else "]") + tail
        return
    # "what_if" is the object's last key; each fix's "changes" sits at depth 3 of it (a fix is
    # an element of a list at depth 1), its elements at depth 4.
    from prefixbench.reports.whatif import change_records

    before, after = tail.split(_WHAT_IF, 1)
    listed = [fix["changes"] for fix in what_if if "changes" in fix]
    pieces = after.split(_EMPTY_CHANGES)
    assert len(pieces) == len(listed) + 1, "each fix's list of changes is where it was laid out"
    yield ("\n ]" if rows else "]") + before + _WHAT_IF + pieces[0]
    for changes, rest in zip(listed, pieces[1:]):
        yield '\n   "changes": ['
        for start in range(0, len(changes), ROWS_A_CHUNK):  # type: ignore[arg-type]
            yield ("\n" if start == 0 else ",\n") + _formatted_list(change_records(changes[start:start + ROWS_A_CHUNK]), 3)  # type: ignore[index]
        yield ("\n   ]" if changes else "]") + rest


#: Requests laid out together, one piece of :func:`audit_json_chunks` (a few dozen: one call of
#: msgspec for them, not three each, and still a small piece).
ROWS_A_CHUNK = 64


def _formatted_rows(rows: Sequence[AuditRow]) -> str:
    """``rows`` as they sit in the laid-out object's list of requests, separated by commas: each
    as ``_formatted`` lays it out alone, indented two spaces. Laid out as one list, the rows sit
    at depth 1 of it, one space short: every line after the list's opening is indented one more.

    Where a request's record is its row's fields, in their order, under their names, with only
    dollars converted (:data:`_ROWS_AS_RECORDS`), msgspec lays out the rows themselves, their
    dollars as floats: the same text as their records', in half the time (no dict a request)."""
    if _ROWS_AS_RECORDS:
        try:
            text = msgspec.json.format(msgspec.json.encode([
                replace(row, cost_usd=None if row.cost_usd is None else float(row.cost_usd),
                        lost_usd=None if row.lost_usd is None else float(row.lost_usd),
                        secondary_lost_usd=None if row.secondary_lost_usd is None else float(row.secondary_lost_usd))
                for row in rows]), indent=1).decode()
        except UnicodeEncodeError:  # a lone surrogate: the records, each the one way that writes it
            pass
        else:
            return " " + text[2:-2].replace("\n", "\n ")
    return _formatted_list([request_record(row) for row in rows], 1)


#: Whether a request's record (:func:`request_record`) is its row's fields in their order, each
#: under its own name, written as it is but for the three dollar fields (written as floats).
_ROWS_AS_RECORDS = (
    tuple(f.source for f in REQUEST_SCHEMA) == AuditRow.__struct_fields__
    and tuple(f.name for f in REQUEST_SCHEMA) == AuditRow.__struct_encode_fields__
    and {f.name: f.type for f in REQUEST_SCHEMA if f.type in CONVERTED_TYPES} == {"cost_usd": "usd?", "lost_usd": "usd?", "secondary_lost_usd": "usd?"}
    and AuditRow.__struct_config__.tag is None and not AuditRow.__struct_config__.array_like
    and not AuditRow.__struct_config__.omit_defaults
)


def _formatted_list(records: Sequence[object], indent: int) -> str:
    """``records`` as the elements of a list sit in the laid-out object, separated by commas:
    laid out alone, a list's elements sit at depth 1, so every line of them is indented
    ``indent`` more (1 for the requests, at depth 2; 3 for a fix's changes, at depth 4)."""
    pad = " " * indent
    try:
        text = msgspec.json.format(msgspec.json.encode(records), indent=1).decode()
    except UnicodeEncodeError:  # a lone surrogate: each record the one way that writes it
        return ",\n".join(pad + " " + _formatted(record).replace("\n", "\n" + pad + " ") for record in records)
    # "[\n {\n  ...\n }\n]": the records between the brackets (a JSON string holds no raw newline).
    return pad + text[2:-2].replace("\n", "\n" + pad)


#: Where the requests go in the laid-out object (see :func:`audit_json_chunks`).
_EMPTY_REQUESTS = '\n "requests": []'
#: Where ``--what-if``'s fixes begin in it, and where each fix's changed requests go.
_WHAT_IF = '\n "what_if": ['
_EMPTY_CHANGES = '\n   "changes": []'


def audit_json(result: AuditResult, what_if: list[dict[str, object]] | None = None) -> str:
    """``--format json`` (with ``"what_if"`` when ``--what-if`` ran) as one string."""
    return "".join(audit_json_chunks(result, what_if))


#: Pieces of :func:`audit_json_chunks` written at once: about 256 requests, as before they came
#: in pieces of 64.
_CHUNKS_A_WRITE = 4


def write_chunks(chunks: Iterable[str], stream, *, batch: int = 256) -> None:
    """Write ``chunks`` to a text stream a few hundred at a time, each as the stream can carry it
    (:func:`printable`), then a newline."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    pending: list[str] = []
    for chunk in chunks:
        pending.append(chunk)
        if len(pending) >= batch:
            stream.write(printable("".join(pending), encoding))
            pending.clear()
    pending.append("\n")
    stream.write(printable("".join(pending), encoding))


def _namer(result: AuditResult):
    """The file names of ``result``'s tables: each file's last part, or as many of its last
    parts as tell it from the result's other files (:func:`file_labels`)."""
    labels = file_labels([f.file for f in result.files] + [r.file for r in result.rows])
    return lambda path: labels.get(path) or Path(path).name


def _usd(value: Decimal | None) -> str:
    return "-" if value is None else format_usd(value)


#: Sessions the terminal table lists at most (those that lost the most); audit.md lists every one.
SESSIONS_SHOWN = 20


def audit_table(result: AuditResult, worst: int = WORST, sessions: int | None = SESSIONS_SHOWN,
                where_whole: str = "--format json, and in the audit.md --out writes") -> str:
    """The terminal view: what to change and the loss split, totals, misses by cause, the worst
    requests, the compactions, per session and per day, then every lane predicted vs reported,
    models, calibration per file and notes."""
    from prefixbench.reports.advice import advice_lines

    reported_files = {row.file for row in result.rows if row.reported_cache_read is not None}
    out = [*advice_lines(result), _headline(result), "", "misses by cause", *_causes_lines(result)]
    out += _worst_lines(result, worst, where_whole)
    out += _compaction_lines(result)
    out += _roll_up_lines(result, sessions)
    out += ["", "lanes: reported vs predicted", *_lane_lines(result, reported_files)]
    out += ["", "models", *_model_lines(result)]
    out += _explicit_cache_lines(result)
    out += ["", "calibration per file: predicted read against reported read", *_calibration_lines(result, reported_files)]
    out += _agreement_lines(result)
    out += _note_lines(result)
    return "\n".join(out)


def _headline(result: AuditResult) -> str:
    t = result.totals
    no_usage, no_price, hosts = _left_out(result)
    # A log with no usage at all has no token figures: zeros there would read as measured.
    tokens = (_no_usage_words(result) if t.requests and sum(no_usage.values()) >= t.requests
              else f"input {_count(t.input)}, output {_count(t.output)}, cache write {_write(t.cache_write)}"
                   + (f" ({_count(t.cache_write_1h)} at 1 h)" if t.cache_write is not None and _one_hour(result) else "")
                   + f", cache read {_count(t.cache_read)}")
    return (
        f"{t.requests:,} request{'' if t.requests == 1 else 's'}: {tokens}; hit ratio {headline_hit(t.hit_ratio, _ratio_basis(result))}; "
        f"{paid_total_words(format_usd(t.cost_usd), t.requests, no_usage, no_price, (t.ranged_requests, t.ranged_low_usd, t.ranged_high_usd), hosts)}"
        f"{relay_words(result.relays)}{service_words(result.services, no_price)}, "
        f"{lost_total_words(format_usd(t.lost_usd), not t.lost_usd, sum(c.unpriced_requests for c in result.causes), seen=reporting_requests(result)[0] > 0 or not t.requests or bool(result.causes))}"
        + (
            f"; explicit caches (not requests): {usd_or_unknown(t.cache_create_usd)} to create, {usd_or_unknown(t.storage_usd)} storage"
            if result.explicit_caches else ""
        )
    )


def _no_usage_words(result: AuditResult) -> str:
    """The headline's tokens where no request reports usage (:func:`no_usage_words`): the lengths
    the files give for every request (a block-hash agent trace's ``in`` and ``out``: their sums,
    :attr:`Totals.logged_prompt_tokens`), or, some file giving none, no token figure at all."""
    return no_usage_words(result.totals.logged_prompt_tokens, result.totals.logged_output_tokens)


def _write(count: int | None) -> str:
    """The headline's written tokens: ``not reported`` where no request's log gives a write count."""
    return "not reported" if count is None else f"{count:,}"


def _one_hour(result: AuditResult) -> bool:
    """The headline names 1 h writes where a provider that writes for 1 h is audited (Anthropic's
    ``1h``; OpenAI's long write is 12 h), or where any were reported."""
    return bool(result.totals.cache_write_1h) or any("1h" in rules_for(m.provider).long_write_ttls for m in result.models)


def _left_out(result: AuditResult) -> tuple[dict[str, int], dict[str, int], tuple[dict[str, int], dict[str, int]]]:
    """The requests the headline's *not in it* counts (a range aside): with no usage per format,
    with no price per model, served by a host of its own prices or a self-hosted engine per host."""
    return left_out_counts(((visible(f.format), f.unpriced_no_usage) for f in result.files),
                           ((visible(m.model), m.unpriced_requests, m.unpriced_no_usage, m.ranged_requests) for m in result.models),
                           ((visible(model), visible(host), n) for model, host, n in result.unpriced_hosts))


def _paid(group: RollUp | LaneSummary | ModelSummary | FileCalibration) -> str:
    """A group's *paid* cell: its dollars, and its requests in none of them (:func:`paid_cell`)."""
    return paid_cell(format_usd(group.cost_usd), group.requests, group.unpriced_requests, group.unpriced_no_usage,
                     group.ranged_requests, group.self_hosted_requests)


def _lost(group: RollUp | LaneSummary | ModelSummary | FileCalibration) -> str:
    """A group's *lost* cell: ``-`` where none of its requests is priced or reports its cache use
    (:func:`lost_cell`)."""
    return lost_cell(format_usd(group.lost_usd), group.requests, group.unpriced_requests, unseen=group.unseen_requests)


def _loss_legend(groups: Iterable[RollUp | LaneSummary | ModelSummary | FileCalibration]) -> list[str]:
    """The legend of a *lost* cell some request of its row leaves untold (:func:`loss_legend`)."""
    return loss_legend((g.requests, g.unpriced_requests, g.unseen_requests) for g in groups)


def _ratio_basis(result: AuditResult) -> str:
    """What the headline's hit ratio is over, when not every request reports its cache use."""
    return ratio_basis(*reporting_requests(result))


def reporting_requests(result: AuditResult) -> tuple[int, int]:
    """(requests that report their cache use, requests): what :func:`ratio_basis` reads."""
    return sum(row.reported_cache_read is not None for row in result.rows), len(result.rows)


def _none_why(result: AuditResult) -> str:
    """Why an audit's miss tables are empty: no request lost tokens to a miss, or no request
    reports its cache use (a block-hash trace), so no miss could be seen at all."""
    if result.rows and not reporting_requests(result)[0]:
        return "(none: no request reports its cache use, so no miss could be seen)"
    return "(none: no request lost tokens to a miss)"


def _causes_lines(result: AuditResult) -> list[str]:
    if not result.causes:
        return [_none_why(result)]
    providers = [m.provider for m in result.models]
    lines = list(text_lines(
        ["cause", "requests", "lost tokens", "lost", "meaning"],
        [[c.cause, f"{c.requests:,}" + (f" +{c.shared_requests:,} shared" if c.shared_requests else ""), f"{c.lost_tokens:,}",
          lost_cell(format_usd(c.lost_usd), c.requests + c.shared_requests, c.unpriced_requests, count=True),
          cause_meaning(c.cause, providers)] for c in result.causes],
        {1, 2, 3},
    ))
    if any(c.shared_requests for c in result.causes):
        lines.append(f"({SHARED_LEGEND})")
    if against := causes_compaction_line((c.cause for c in result.causes), bool(result.compactions)):
        lines.append(against)
    return lines


#: Characters of a miss's detail the worst-requests table shows (cut at a word boundary).
DETAIL_WIDTH = 100


def _worst_rows(result: AuditResult, worst: int) -> list[AuditRow]:
    """The requests that lost most, by dollars then tokens."""
    return sorted(
        (row for row in result.rows if row.cause is not None and (row.lost_tokens or 0) > 0),
        key=lambda row: (-(row.lost_usd or Decimal(0)), -(row.lost_tokens or 0), row.file, row.line),
    )[:worst]


def _worst_lines(result: AuditResult, worst: int, where_whole: str = "--format json, and in the audit.md --out writes") -> list[str]:
    """The requests that lost most, by dollars then tokens; a long detail cut at a word boundary,
    with where its whole text is."""
    ranked = _worst_rows(result, worst)
    if not ranked:
        return ["", "worst requests (by dollars lost)", _none_why(result)]
    short = _namer(result)
    # ranked by tokens where none of them has a dollar figure (an unpriced model): not "by dollars"
    by = "by dollars lost" if any(row.lost_usd for row in ranked) else "by tokens lost: none has a dollar figure"
    out = ["", f"worst requests (top {len(ranked)} {by})", *text_lines(
        ["file:line", "lane", "read", "expected", "lost", "cause", "evidence", "where", "detail"],
        [
            [
                request_where(row.file, row.line, row.path, short), row.lane, f"{row.reported_cache_read or 0:,}",
                f"{row.expected_cache_read:,}", usd_cents4(row.lost_usd), row.cause or "", row.evidence or "",
                short_where(row.location), ellipsize(visible(row.detail), DETAIL_WIDTH),
            ]
            for row in ranked
        ],
        {2, 3, 4},
    )]
    if any(len(visible(row.detail)) > DETAIL_WIDTH for row in ranked):
        out.append(f"{ELLIPSIS} a detail cut at a word boundary: the whole text is in {where_whole}")
    return out


def _span(roll: RollUp) -> str:
    """``first .. last`` of a roll-up, the day left out of ``last`` when it is ``first``'s."""
    if roll.first is None or roll.last is None:
        return "no timestamp"
    first, last = roll.first[:16].replace("T", " "), roll.last[:16].replace("T", " ")
    return first if first == last else f"{first} .. {last[11:] if last[:10] == first[:10] else last}"


def _roll_up_rows(rolls: Sequence[RollUp], name) -> list[list[str]]:
    return [
        [
            name(r), _span(r), f"{r.requests:,}", f"{r.lanes:,}", "-" if r.misses is None else f"{r.misses:,}",
            hit_cell(r.hit_ratio, r.cache_read is None),
            "-" if r.rewrite_factor is None else f"{r.rewrite_factor:.2f}x", _paid(r), _lost(r),
            r.top_cause or "-",
        ]
        for r in rolls
    ]


ROLL_UP_HEADER = ("{what}", "time (UTC)", "requests", "lanes", "misses", "hit", "re-write", "paid", "lost", "top cause")


def _roll_up_lines(result: AuditResult, sessions: int | None) -> list[str]:
    """Per session (the agent's: its main lane, subagents and compactions, its log file or files,
    :attr:`~prefixbench.workloads.logs.trace.FileSummary.session`), then per UTC day."""
    if not result.rows:
        return []
    rolls = list(result.sessions)
    left_out = 0
    # What the kept sessions are ordered by, said as it is: where none lost dollars (or none has a
    # dollar figure: a block-hash trace), "the 20 that lost the most" would claim losses not seen.
    order = "that lost the most" if any(r.lost_usd for r in rolls) else (
        "that paid the most (none lost dollars)" if any(r.cost_usd for r in rolls) else
        "first in file order (none has a dollar figure)")
    # A session with no loss figure (no usage logged: a block-hash or request-body trace) is not
    # ranked among those that lost the most where some have one: counted apart.
    unseen = [i for i, r in enumerate(rolls) if r.misses is None] if any(r.misses is not None for r in rolls) else []
    unseen_at = set(unseen)
    ranked = [i for i in range(len(rolls)) if i not in unseen_at]
    if sessions is not None and len(rolls) > sessions:
        kept = sorted(ranked, key=lambda i: (-rolls[i].lost_usd, -rolls[i].cost_usd, i))[:sessions]
        left_out = len(rolls) - len(kept)
        rolls = [rolls[i] for i in kept]  # costliest first, as the title says
    right = {2, 3, 4, 5, 6, 7, 8}
    short = _namer(result)
    title = "per session (the agent's: its main lane, subagents and compactions, in one log file or several)"
    if left_out:
        more = left_out - len(unseen)
        apart = f"{len(unseen):,} with no loss figure (no usage logged)" if unseen else ""
        shown = (f"the {len(rolls):,} with a loss figure, costliest first" if unseen and not more else
                 f"the {len(rolls):,} {order}" + (f" of the {len(ranked):,} with a loss figure" if unseen else ""))
        title += (f": {shown}" + ("; " if unseen else ", ") + " and ".join(part for part in (f"{more:,} more" if more else "", apart) if part)
                  + " in audit.md and audit.json")
    out = ["", title, *text_lines([ROLL_UP_HEADER[0].format(what="session"), *ROLL_UP_HEADER[1:]],
                                  _roll_up_rows(rolls, lambda r: short(r.key) + (f" ({MAIN_ABSENT})" if r.main_absent else "")),
                                  right)]
    out += ["", "per day (UTC)", *text_lines([ROLL_UP_HEADER[0].format(what="day"), *ROLL_UP_HEADER[1:]],
                                             _roll_up_rows(result.days, lambda r: r.key), right)]
    if any(r.rewrite_factor is not None for r in (*rolls, *result.days)):
        out.append(REWRITE_LEGEND)
    if any(r.cache_read is None and r.hit_ratio is not None for r in (*rolls, *result.days)):
        out.append(PREDICTED_HIT)
    return out + _loss_legend((*rolls, *result.days))


def _compaction_lines(result: AuditResult) -> list[str]:
    """Every compaction the log shows, judged warm, cold or unknown, and what the cold ones would
    have cost warm. One whose readable prefix is unknown shows ``?`` and stays out of the cold
    sums; an unknown one (its cache use not reported) shows ``?`` for its warm cost, counted apart.
    A read the cache model predicted (a request-body log with no usage) shows ``pred N``, and a
    line under the table says so; another says what *cached before* measures against
    (:data:`~.auditwords.COMPACTIONS_AGAINST`). report.html's table is the same
    (:mod:`~.auditwords`'s words and cells)."""
    found = result.compactions
    if not found:
        return []
    short = _namer(result)
    return ["", compactions_heading(found, format_usd), *text_lines(
        list(COMPACTION_HEADER),
        [[*compaction_cells(c, f"{short(c.file)}:{c.line}", _usd), ellipsize(visible(c.detail), DETAIL_WIDTH)] for c in found],
        {4, 5, 6, 7},
    ), COMPACTIONS_AGAINST, *([PREDICTED_COMPACTION] if any(c.predicted for c in found) else [])]


def _count(value: int | None) -> str:
    """A count cell: ``-`` where no request of the group reports it (None: :func:`reported_sum`)."""
    return "-" if value is None else f"{value:,}"


def _lane_cells(lane: LaneSummary, reported: bool, short) -> list[str]:
    """One lane's row: reported against predicted (``n/a`` where the file reports no usage, ``-``
    where the file does and no request of the lane); its *hit* ``pred 50.0%`` where no request of
    it reports its cache use, as a roll-up's (:func:`hit_cell`)."""
    hit = hit_cell(lane.hit_ratio, lane.reported_cache_read is None)
    if not reported:
        return [short(lane.file), lane.lane, f"{lane.requests:,}", "n/a", f"{lane.predicted_cache_read:,}", "n/a", "n/a",
                f"{lane.predicted_cache_write:,}", "n/a", f"{lane.predicted_uncached:,}", "n/a", hit, _paid(lane), _lost(lane)]
    error = (
        "n/a"
        if not lane.reported_cache_read
        else f"{(lane.predicted_cache_read - lane.reported_cache_read) / lane.reported_cache_read:+.1%}"
    )
    return [
        short(lane.file), lane.lane, f"{lane.requests:,}", _count(lane.reported_cache_read),
        f"{lane.predicted_cache_read:,}", error, _count(lane.reported_cache_write), f"{lane.predicted_cache_write:,}",
        _count(lane.reported_uncached), f"{lane.predicted_uncached:,}", "-" if lane.read_within is None else f"{lane.read_within}/{lane.requests}",
        hit, _paid(lane), _lost(lane),
    ]


def _lane_lines(result: AuditResult, reported_files: set[str]) -> list[str]:
    short = _namer(result)
    out = list(text_lines(
        ["file", "lane", "reqs", "read", "pred", "err", "write", "pred", "uncached", "pred", "read ±3%", "hit", "paid", "lost"],
        [_lane_cells(lane, lane.file in reported_files, short) for lane in fold_sessionless(result.lanes, result.sessionless_lanes)],
        set(range(2, 14)),
    ))
    if result.sessionless_lanes:
        out.append(SESSIONLESS_ROW)
    if any(lane.reported_cache_read is None and lane.hit_ratio is not None for lane in result.lanes):
        out.append(PREDICTED_HIT)
    if any(lane.reported_cache_read is not None and lane.reported_cache_write is None for lane in result.lanes):
        out.append(WRITES_NOT_REPORTED)
    return out + _loss_legend(result.lanes)


#: Said under the models table when a row's provider is ``engine`` (a block-hash trace's): what
#: the trace is, and that it says nothing of where its model ran (a kv-cache-tester trace of
#: claude-opus-4-5 traffic is no self-hosted Claude).
ENGINE_PROVIDER = (
    "engine: a block-hash replay trace of the row's traffic, simulated as an inference engine's block cache "
    "(block-hash traces name no provider, so this does not say where the model ran): "
    "predicted by block hashes, no usage reported, no prices"
)


def _model_lines(result: AuditResult) -> list[str]:
    return list(text_lines(
        ["provider", "model", "requests", "input", "output", "cache read", "cache write", "paid", "lost"],
        [
            [
                _via(result, m), m.model, f"{m.requests:,}", _count(m.input), _count(m.output), _count(m.cache_read),
                _count(m.cache_write), model_paid_cell(format_usd(m.cost_usd), m.requests, m.unpriced_requests, m.unpriced_no_usage,
                                                       m.ranged_requests, m.priced, m.self_hosted_requests), _lost(m),
            ]
            for m in result.models
        ],
        set(range(2, 9)),
    )) + ([ENGINE_PROVIDER] if any(m.provider == "engine" for m in result.models) else []) + (
        [WRITES_NOT_REPORTED] if any(m.cache_read is not None and m.cache_write is None for m in result.models) else []) + (
        _loss_legend(result.models))


def _via(result: AuditResult, m: ModelSummary) -> str:
    """A models row's provider, with the relay its calls went through (``openai via relay 'codex'``:
    :attr:`AuditResult.relays`; a relay that served only some of them says how many)."""
    via = [(relay, n) for provider, model, relay, n in result.relays if (provider, model) == (m.provider, m.model)]
    # A service of the maker's models (Azure OpenAI, :attr:`AuditResult.services`) in brackets:
    # ``openai (Azure OpenAI deployment 'gpt-4o-mini')``.
    at = [(service, n) for provider, model, service, n in result.services if (provider, model) == (m.provider, m.model)]
    return m.provider + "".join(f" via relay {relay!r}" + ("" if n == m.requests else f" ({n:,} req)") for relay, n in via) + "".join(
        f" ({service}" + ("" if n == m.requests else f", {n:,} req") + ")" for service, n in at)


def _explicit_cache_lines(result: AuditResult) -> list[str]:
    """The explicit caches the logs created (Gemini ``cachedContents``): not requests, billed
    apart; a figure the log does not show is ``unknown``, never a guess."""
    if not result.explicit_caches:
        return []
    def usd(value: object) -> str:
        return "unknown" if value is None else format_usd(value)  # type: ignore[arg-type]
    short = _namer(result)
    rows = [
        [
            f"{short(c.file)}:{c.line}", visible(c.name), visible(c.model), f"{c.tokens:,}", c.created or "unknown",
            "unknown" if c.kept_hours is None else f"{c.kept_hours:,.2f} h", c.ended_by, f"{c.reads:,}",
            f"{c.read_tokens:,}", usd(c.create_usd), usd(c.storage_usd),
        ]
        for c in result.explicit_caches
    ]
    return ["", "explicit caches the logs created (not requests: billed apart, creation at the input price, storage "
                "for the hours kept)", *text_lines(
        ["file:line", "cache", "model", "tokens", "created", "kept", "ended by", "reads", "read tokens", "create",
         "storage"], rows, {3, 5, 7, 8, 9, 10})]


def _calibration_lines(result: AuditResult, reported_files: set[str]) -> list[str]:
    """Calibration per file, with footnotes saying what each figure counts and the skipped records."""
    positive: dict[str, int] = {}
    for row in result.rows:
        if row.reported_cache_read:
            positive[row.file] = positive.get(row.file, 0) + 1
    short = _namer(result)
    out = list(text_lines(
        ["file", "format", "requests", "within 3%", "read > 0", "mean |error|", "skipped", "paid", "lost"],
        [
            [
                short(f.file), f.format, f"{f.requests:,}",
                f"{f.read_within:,}" if f.file in reported_files else "n/a",
                f"{positive.get(f.file, 0):,}" if f.file in reported_files else "n/a",
                "n/a" if f.mean_abs_read_error is None else f"{f.mean_abs_read_error:.2%}",
                f"{f.skipped:,}", _paid(f), _lost(f),
            ]
            for f in result.files
        ],
        {2, 3, 4, 5, 6, 7, 8},
    ))
    out += [
        *_loss_legend(result.files),
        "within 3%: requests whose predicted read is within 3% of the reported one (a reported read of 0 counts "
        "only if 0 was predicted)",
        "read > 0: requests that reported a read above 0; mean |error| (|predicted - reported| / reported) is over "
        "these only, so a request that reported 0 where a read was predicted counts against within 3% but not in "
        "the mean",
        "skipped: log records read but not counted as requests (not in requests or any figure above), by reason:",
    ]
    skips = [(f, reason, n) for f in result.files for reason, n in f.skip_reasons]
    return out + ([visible(f"  {short(f.file)}: {n:,} {reason}") for f, reason, n in skips] or ["  (none)"])


def _agreement_lines(result: AuditResult) -> list[str]:
    """The server's miss reasons against the audit's own causes, where the log carries them."""
    if not result.agreement:
        return []
    rows = [(pair.server_reason, pair.audit_cause, f"{pair.requests:,}", _VERDICT_WORDS.get(pair.verdict, pair.verdict))
            for pair in result.agreement]
    n = {said: sum(pair.requests for pair in result.agreement if pair.verdict == said) for said in VERDICTS}
    scored = n["agrees"] + n["names-more"] + n["disagrees"]
    head = "server's reasons vs the audit's own causes (inferred without the server's)"
    if scored:
        head += (f": consistent on {n['agrees'] + n['names-more']:,} of {scored:,} scored "
                 f"({(n['agrees'] + n['names-more']) / scored:.0%}; the same cause {n['agrees']:,}, the audit names more "
                 f"{n['names-more']:,}), another cause on {n['disagrees']:,}")
    if n["no-miss"]:
        head += f"; {n['no-miss']:,} labelled call(s) the audit finds no miss in"
    return ["", head, *text_lines(("server reason", "audit cause", "requests", "verdict"), rows, {2})]


#: The agreement table's words for each verdict (causes.VERDICTS).
_VERDICT_WORDS = {
    "agrees": "agrees",
    "names-more": "audit names more",
    "disagrees": "disagrees",
    "no-miss": "no miss: nothing to score",
    "unscored": "label unknown: not scored",
}


#: A figure in a note (a count, a sum, a share): a number standing alone, not a part of a name
#: (``claude-sonnet-4-5``, ``v1.2``, ``gpt-5.4``).
_FIGURE = re.compile(r"(?<![\w.-])\$?\d[\d,]*(?:\.\d+)?%?(?![\w-]|\.\w)")


def _note_lines(result: AuditResult) -> list[str]:
    """The files' notes (one line per note, naming the file or how many files carry it), then the audit's."""
    file_notes: dict[str, list[str]] = {}
    short = _namer(result)
    for calibration in result.files:
        for note in calibration.notes:
            file_notes.setdefault(note, []).append(short(calibration.file))
    out = [""]
    for note, files in file_notes.items():
        # A note said alike of several files is said once; one that holds a figure (a count, a
        # sum) says it of each file, not of them all: "each of 3 files", lest 1 call read as 1 in all.
        where = files[0] if len(files) == 1 else f"{'each of ' if _FIGURE.search(note) else ''}{len(files)} files"
        out.append(visible(f"note ({where}): {note}"))
    return out + [visible(f"note: {note}") for note in result.notes]


def audit_markdown(result: AuditResult) -> str:
    """audit.md: the table view in Markdown, with how to read it."""
    body = audit_table(result, worst=50, sessions=None, where_whole='"Details of the worst requests" below')
    # The fence is longer than any run of backticks in the table (a model or file name can hold
    # some), so nothing read from a log closes it; control characters are already shown escaped.
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", body)), default=0))
    return (
        "# prefixbench audit\n\n"
        "It opens with what to change: the fixes for the recoverable misses, re-simulated on the whole log and "
        "ranked by the net dollars they save, then the lost dollars split into recoverable, unavoidable and "
        "unknown. Every request of every lane, predicted by the provider's cache model on the log's clock and "
        "compared with what the provider reported. *expected* is the read the previous request of the "
        "lane left possible; *lost* is what the tokens missing from it cost above the read price. Each "
        "miss carries one cause and the evidence that decided it: `diagnostic` (the provider said so), "
        "`body-diff` (the request bodies differ there), `log` (inferred from what the log records), "
        "`position` (a transcript without bodies: where the cached prefix ended on the logged messages, "
        "and the likely change the log shows there; *where* names the message, or the unlogged head) or "
        "`none` (`unexplained`, with why the log cannot tell).\n\n"
        f"{fence}\n{body}\n{fence}\n\n"
        + _worst_details_markdown(result, 50)
        + "## Causes\n\n"
        + "\n".join(f"- `{name}`: {cause_meaning(name, [m.provider for m in result.models])}" for name in CAUSES)
        + "\n"
    )


def what_if_markdown(table: str) -> str:
    """``--format md``'s --what-if section: the table in a code fence under a heading, as
    :func:`audit_markdown` fences the audit's (bare, its dashes made a Markdown heading of the
    header line and its rows one paragraph)."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", table)), default=0))
    return f"## What if\n\n{fence}\n{table.strip(chr(10))}\n{fence}"


def _worst_details_markdown(result: AuditResult, worst: int) -> str:
    """Every worst request's whole detail, the text the table cut at a word boundary."""
    ranked = [row for row in _worst_rows(result, worst) if len(visible(row.detail)) > DETAIL_WIDTH]
    if not ranked:
        return ""
    short = _namer(result)
    items = "\n".join(f"- {md_code(request_where(row.file, row.line, row.path, short))} ({md_code(row.lane)}, {row.cause}): {md_code(row.detail)}"
                      for row in ranked)
    return f"## Details of the worst requests\n\nThe whole text of each detail the table above cut.\n\n{items}\n\n"


def audit_csv(result: AuditResult) -> str:
    """audit.csv: one row a request."""
    buffer = io.StringIO()
    write_audit_csv(result, buffer)
    return buffer.getvalue()


def write_audit_csv(result: AuditResult, stream) -> None:
    """audit.csv into a text stream, a row at a time."""
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(REQUEST_FIELDS)
    for row in result.rows:
        record = request_record(row)
        writer.writerow(["" if record[name] is None else record[name] for name in REQUEST_FIELDS])


def audit_chart(result: AuditResult, path: Path) -> None:
    """audit.png: per file, per request stacked read / write / uncached, predicted read, misses by
    cause (:func:`audit_figure`)."""
    audit_figure(result).savefig(path, dpi=100, metadata={"Software": None})  # as reports/charts.py's save(): the same bytes every time


#: Milliseconds a day (matplotlib's date numbers are days since 1970-01-01 UTC).
_DAY_MS = 86_400_000


def request_times(rows: Sequence[AuditRow]) -> list[int] | None:
    """Each request's send time in ms since the epoch, or None when one of them has no absolute
    timestamp (then the charts' x axis is the request's place, not the clock)."""
    from prefixbench.reports.html_pages import times_ms

    return times_ms([row.timestamp for row in rows])


def _time_bars(starts_ms: Sequence[int]) -> tuple[list[float], list[float]]:
    """Left edges (matplotlib date numbers) and widths of one bar per step drawn on the clock: each
    as wide as the time to the next step, capped at the median such time (an idle hour is empty
    axis, not a wide bar), never narrower than 1/2000 of the span so that every step shows; steps
    whose bars would overlap (sent at the same moment) side by side in the room they span, each at
    least that wide (:func:`~prefixbench.reports.html.side_by_side`), so none hides another."""
    from prefixbench.reports.html import side_by_side

    gaps = sorted(b - a for a, b in zip(starts_ms, starts_ms[1:]) if b > a)
    span = (starts_ms[-1] - starts_ms[0]) if starts_ms else 0
    typical = gaps[(len(gaps) - 1) // 2] if gaps else 1000
    # Never narrower than a third of an even share of the span either: a few requests in a short
    # capture, most of them seconds apart, are bars, not hairlines.
    floor = max(span / 2000, span / (3 * len(starts_ms)) if starts_ms else 0, 1.0)
    widths = []
    for i, start in enumerate(starts_ms):
        following = starts_ms[i + 1] - start if i + 1 < len(starts_ms) else typical
        widths.append(max(min(following, typical) * 0.9, floor))
    lefts, widths = side_by_side([float(t) for t in starts_ms], widths, floor)
    return [t / _DAY_MS for t in lefts], [w / _DAY_MS for w in widths]


def chart_panels(result: AuditResult, panels: int = CHART_PANELS) -> tuple[dict[str, list[AuditRow]], list[str]]:
    """audit.png's panels (title -> requests in file order) and their order: one a file up to
    ``panels``. Past that, the files whose requests report their cache use first, a panel each;
    those that do not (predicted only) folded into one panel, in file order, its title saying so;
    reported files beyond the panels left folded into one more. No request is left out."""
    files = [f.file for f in result.files]
    by_file: dict[str, list[AuditRow]] = {name: [] for name in files}
    for row in result.rows:
        by_file[row.file].append(row)
    if len(files) <= panels:
        return by_file, files
    reported = [name for name in files if any(row.reported_cache_read is not None for row in by_file[name])]
    predicted = [name for name in files if name not in set(reported)]
    slots = panels - (1 if predicted else 0)
    own = reported if len(reported) <= slots else reported[: slots - 1]  # the last slot folds the rest
    rest = reported[len(own):]
    out = {name: by_file[name] for name in own}
    if rest:
        out[f"{len(rest):,} more files that report their cache use, in order"] = [row for name in rest for row in by_file[name]]
    if predicted:
        title = (f"{len(predicted):,} files that report no cache use, in order" if len(predicted) > 1
                 else Path(predicted[0]).name)
        out[title] = [row for name in predicted for row in by_file[name]]
    return out, list(out)


def _days(times: Sequence[int]) -> str:
    """``2025-05-29`` (or ``2025-05-29 .. 2025-05-31``) of a panel drawn on the clock."""
    from datetime import UTC, datetime

    first, last = (datetime.fromtimestamp(t / 1000, UTC).strftime("%Y-%m-%d") for t in (times[0], times[-1]))
    return first if first == last else f"{first} .. {last}"


def audit_figure(result: AuditResult):
    """The figure of audit.png. The x axis is the clock (UTC) where every request of a panel has
    a timestamp, the request's place in the file otherwise; colours are the palette's
    (:mod:`prefixbench.reports.palette`), a miss marker's its cause's."""
    import numpy as np
    from matplotlib.dates import AutoDateLocator, DateFormatter

    from prefixbench.reports.html import clock_format
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator
    from prefixbench.reports.palette import CACHED, PREDICTED, UNCACHED, WRITTEN, cause_colour

    # A bare Figure, drawn by Agg when saved: no pyplot, no backend to select, and none of the
    # sweep charts' imports (reports/charts.py brings pandas: about 60 MB an audit does not need).

    rows_by_file, files = chart_panels(result)
    fig = Figure(figsize=(12, 2.6 * len(files) + 0.6))
    axes = fig.subplots(len(files), 1, squeeze=False)
    for ax, name in zip(axes[:, 0], files):
        rows = rows_by_file[name]
        if not rows:
            ax.text(0.5, 0.5, "no model calls with usage in this file", ha="center", va="center", transform=ax.transAxes)
            ax.set_title(visible(printable(Path(name).name)), fontsize=9)
            continue
        # A one-request panel is drawn by request: a clock axis around one bar says nothing.
        times = request_times(rows) if len(rows) > 1 else None
        if times is not None:
            # drawn on the clock: in send order (lanes of one file interleave)
            order = sorted(range(len(rows)), key=lambda i: (times[i], i))
            rows = [rows[i] for i in order]
            times = [times[i] for i in order]
        idle = idle_gaps(times) if times is not None else []
        sent_at = times
        if idle:  # mostly idle: on the clock the requests are slivers; by place, the gaps are marked
            times = None
        reported = all(row.reported_cache_read is not None for row in rows)
        read = np.array([(row.reported_cache_read if reported else row.predicted_cache_read) or 0 for row in rows], float)
        write = np.array([(row.reported_cache_write if reported else row.predicted_cache_write) or 0 for row in rows], float)
        uncached = np.array([(row.reported_uncached if reported else row.predicted_uncached) or 0 for row in rows], float)
        predicted = np.array([row.predicted_cache_read for row in rows], float)
        # More requests than the panel has room for: each step is the mean of ``width`` requests
        # (the figure's memory grows with its steps and markers, not with the log).
        width = max(1, -(-len(rows) // CHART_STEPS))
        starts = np.arange(0, len(rows), width)
        if width > 1:
            counts = np.diff(np.append(starts, len(rows)))
            read, write, uncached, predicted = (np.add.reduceat(a, starts) / counts for a in (read, write, uncached, predicted))
        if times is not None:
            lefts, widths = _time_bars([times[i] for i in starts])
        else:
            lefts = list(starts - 0.5)
            widths = [float(w) for w in np.diff(np.append(starts, len(rows)))]
        lefts_a, widths_a = np.array(lefts), np.array(widths)
        mids = lefts_a + widths_a / 2
        _bars(ax, lefts_a, widths_a, 0, read, CACHED, "cache read")
        _bars(ax, lefts_a, widths_a, read, write, WRITTEN, "cache write")
        _bars(ax, lefts_a, widths_a, read + write, uncached, UNCACHED, "uncached")
        if reported:
            # one tick a step, at the read the model predicted (a lone request gets its tick too)
            ax.hlines(predicted, lefts_a, lefts_a + widths_a, colors=PREDICTED, linewidth=1.2, label="predicted read")
        top = (read + write + uncached).max() if len(rows) else 1
        top = max(top, predicted.max() if reported and len(rows) else 0)
        for cause in sorted({row.cause for row in rows if row.cause is not None}, key=_cause_order):
            picked = sorted({i // width for i, row in enumerate(rows) if row.cause == cause})
            ax.scatter(mids[picked], [top * 1.04] * len(picked), marker="v", s=18, color=cause_colour(cause),
                       label=f"miss: {cause}", zorder=3)
        for i, gap_ms in idle:
            ax.axvline(i - 0.5, color="0.45", linestyle=":", linewidth=1)
            ax.text(i - 0.5, top * 1.1, f" idle {idle_duration(gap_ms)}", fontsize=6, color="0.3", va="top", ha="left")
        if times is None:
            # A panel of one or two requests keeps room beside its bars, and ticks only at requests.
            pad = max(0.0, (CHART_MIN_SLOTS - len(rows)) / 2)
            ax.set_xlim(-0.5 - pad, len(rows) - 0.5 + pad)
            if len(rows) <= 10:
                ax.set_xticks(range(len(rows)))
            else:
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        else:
            pad = max((lefts_a[-1] + widths_a[-1] - lefts_a[0]) * 0.02, 1 / 86_400)
            ax.set_xlim(lefts_a[0] - pad, lefts_a[-1] + widths_a[-1] + pad)
            ax.xaxis.set_major_locator(AutoDateLocator(minticks=4, maxticks=9))
            # Times of day a reader can read (12:04:30, not "30"): seconds under 10 minutes, the
            # date past a day, as report.html's ticks (:func:`~prefixbench.reports.html.clock_format`).
            ax.xaxis.set_major_formatter(DateFormatter(clock_format(times[-1] - times[0])))
        ax.set_ylim(0, top * 1.12 if top else 1)
        steps = "" if width == 1 else f", each step the mean of {width:,}"
        ax.set_title(visible(printable(f"{Path(name).name} ({len(rows):,} request{'' if len(rows) == 1 else 's'}{'' if reported else ', predicted only'}{steps})")), fontsize=9)
        ax.set_ylabel("tokens", fontsize=8)
        if idle and sent_at is not None:
            xlabel = f"request (send order; dotted: idle {idle_duration(IDLE_GAP_MS)} or more, the clock cut there), {_days(sent_at)}"
        else:
            xlabel = "request (file order)" if times is None else f"time (UTC), {_days(times)}"
        ax.set_xlabel(xlabel, fontsize=8)
        ax.tick_params(labelsize=7)
    handles: dict[str, object] = {}
    for ax in axes[:, 0]:
        # A panel's bars after its lines and markers (where ax.bar's containers came)
        pairs = sorted(zip(*ax.get_legend_handles_labels()), key=lambda pair: pair[1] in _BAR_LABELS)
        for handle, label in pairs:
            handles.setdefault(label, handle)
    if handles:
        fig.legend(list(handles.values()), list(handles.keys()), loc="upper center", ncol=min(6, len(handles)), fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))
    return fig


#: The labels of :func:`_bars`'s series.
_BAR_LABELS = frozenset({"cache read", "cache write", "uncached"})


def _bars(ax, lefts, widths, bottoms, heights, colour: str, label: str) -> None:
    """One series of stacked bars (left edges, widths, bottoms, heights) drawn as one collection of
    rectangles: what ``ax.bar(..., align="edge", linewidth=0)`` draws, without an artist a bar
    (about 10 KB each: 12 panels of 2,000 steps, three series, took 700 MB)."""
    import numpy as np
    from matplotlib.collections import PolyCollection

    x0 = np.asarray(lefts, float)
    x1 = x0 + np.asarray(widths, float)
    y0 = np.broadcast_to(np.asarray(bottoms, float), x0.shape)
    y1 = y0 + np.asarray(heights, float)
    # each bar's corners in Rectangle's order: (x0, y0), (x1, y0), (x1, y1), (x0, y1)
    verts = np.stack([np.stack([x0, y0], -1), np.stack([x1, y0], -1), np.stack([x1, y1], -1), np.stack([x0, y1], -1)], 1)
    ax.add_collection(PolyCollection(verts, facecolors=colour, edgecolors="face", linewidths=0, label=label), autolim=False)


def _cause_order(cause: str) -> tuple[int, str]:
    names = list(CAUSES)
    return (names.index(cause) if cause in names else len(names), cause)


#: report.html draws at most this many requests (the worst: see :func:`page_rows`); every request
#: is in audit.csv and audit.json beside it, and the page says so.
PAGE_REQUESTS = 2000


def page_rows(result: AuditResult, cap: int = PAGE_REQUESTS) -> tuple[AuditRow, ...] | None:
    """The requests report.html draws when the audit has more than ``cap`` (None: it draws every
    one): misses first, then by dollars and tokens lost, then in file order; drawn in file order."""
    if len(result.rows) <= cap:
        return None
    import heapq

    rows = result.rows
    picked = heapq.nsmallest(
        cap, range(len(rows)),
        key=lambda i: (rows[i].cause is None, -(rows[i].lost_usd or Decimal(0)), -(rows[i].lost_tokens or 0), i),
    )
    return tuple(rows[i] for i in sorted(picked))


def audit_html(result: AuditResult, what_if: list[dict[str, object]] | None = None, cap: int | None = None) -> str:
    """report.html: the ``--format json`` object drawn, its requests cut to the worst ``cap``
    (:func:`page_rows`), so that the page and the memory it takes stay bounded."""
    from prefixbench.reports.html_pages import audit_page

    shown = page_rows(result, PAGE_REQUESTS if cap is None else cap)
    record = audit_record(result, rows=shown)
    if shown is not None:
        figures = (len(shown), len(result.rows), ["audit.csv", "audit.json"])
        record["requests_shown"] = {field.name: value for field, value in zip(REQUESTS_SHOWN_FIELDS, figures, strict=True)}
    # What the hit ratio is over, counted on every request (the page may draw only the worst).
    if what_if is not None:
        from prefixbench.reports.whatif import with_change_records

        what_if = with_change_records(what_if)
    lanes = None
    if result.sessionless_lanes:
        lanes = [_group_record(LANE_FIELDS, lane, lane.reported_cache_read is None)
                 for lane in fold_sessionless(result.lanes, result.sessionless_lanes)]
    return audit_page(record, what_if, basis=ratio_basis(*reporting_requests(result)), hosts=result.unpriced_hosts, relays=result.relays, services=result.services,
                      lanes=lanes)


def _text_file(path: Path):
    """A UTF-8 file to stream text into; a lone surrogate is written as its escape (:func:`printable`)."""
    return path.open("w", encoding="utf-8", errors="backslashreplace", newline="")


def write_outputs(result: AuditResult, out: Path, what_if: list[dict[str, object]] | None = None,
                  what_if_md: str | None = None, say: Callable[[str], None] | None = None) -> list[Path]:
    """audit.md, audit.csv, audit.json, audit.png and report.html in ``out``, all or nothing;
    ``what_if_md``: ``--what-if``'s section (:func:`what_if_markdown`), which ends audit.md as
    it ends ``--format md``; ``say``: told before each step that takes seconds on a big log (the
    tables, the chart, the page), as ``audit``'s progress says its steps
    (:meth:`~prefixbench.reports.progress.ReadProgress.phase`).

    Everything is written to a staging folder beside ``out`` first, then lands together
    (:func:`prefixbench.reports.outdir.staged_out`), so a failure or a kill never leaves half
    the files, nor old and new ones mixed.
    """
    from prefixbench.reports.outdir import staged_out

    tell = say or (lambda text: None)
    with staged_out(out, AUDIT_FILES) as staging:
        tell(f"writing {out}/: audit.md, audit.csv, audit.json")
        markdown = audit_markdown(result) + (f"\n{what_if_md}\n" if what_if_md else "")
        (staging / "audit.md").write_text(printable(markdown), encoding="utf-8")
        with _text_file(staging / "audit.csv") as handle:
            write_audit_csv(result, handle)
        with _text_file(staging / "audit.json") as handle:
            write_chunks(audit_json_chunks(result, what_if), handle, batch=_CHUNKS_A_WRITE)
        tell(f"drawing {out}/audit.png")
        audit_chart(result, staging / "audit.png")
        tell(f"writing {out}/report.html")
        (staging / "report.html").write_text(printable(audit_html(result, what_if)), encoding="utf-8")
    return [out / name for name in AUDIT_FILES]


#: The files ``audit --out`` writes.
AUDIT_FILES = ("audit.md", "audit.csv", "audit.json", "audit.png", "report.html")


def printable(text: str, encoding: str = "utf-8") -> str:
    """``text`` as the stream can carry it: a lone surrogate (a log can hold one, e.g. an emoji
    cut in half) or a character the encoding lacks becomes a backslash escape, never a crash."""
    return text.encode(encoding, "backslashreplace").decode(encoding)


def emit(text: str, stream=None) -> None:
    """Print ``text`` (and a newline) safely; see :func:`printable`."""
    stream = stream or sys.stdout
    print(printable(text, getattr(stream, "encoding", None) or "utf-8"), file=stream)


def nothing_to_audit(summaries) -> str:
    """The error of an audit whose logs hold no model call: what the first file says instead
    (that no call in it was answered, a record skipped and why, or its first note), so the user knows where the calls are; a log
    first, before a file the walk skipped as none (an app's settings beside its conversations).
    Where that file's words send the user to a file that this audit read too (a Kimi CLI
    context.jsonl's wire.jsonl), the pointer is left out and what that file lacks is said instead."""
    read = [s for s in summaries if s.format not in ("copy", "unreadable")] or list(summaries)
    first = next((s for s in read if s.format != "not-a-log"), read[0])
    why, said = _unpointed(_why_none(first), first, read)
    more = f"; {len(read) - said} other file(s) hold none either" if len(read) > said else ""
    return f"nothing to audit: no model call with usage in the logs given ({why}{more})"


def left_out_error(error: str, summaries) -> str:
    """The error of an audit with no model call whose first file left out as bad input is ``error``:
    that, unless it sends the user to a file this audit read and found no call in (an aider
    analytics log's chat history): then what that file lacks is said in the pointer's place."""
    from prefixbench.workloads.audit.core import BAD_INPUT

    left = next((s for s in summaries if s.format == BAD_INPUT and s.notes and s.notes[0].endswith(error)), None)
    if left is None:
        return error
    read = [s for s in summaries if s.format not in ("copy", "unreadable", BAD_INPUT)]
    return _unpointed(error, left, read)[0]


def _unpointed(why: str, summary, read) -> tuple[str, int]:
    """``why`` (what ``summary``'s file is) and how many files it speaks of: where its last words
    send the user to files ``read`` holds (which held no call), those words left out and the
    first such file's reason said instead."""
    from prefixbench.workloads.logs.formats import SIBLING_POINTERS

    pointer = next((p for p in SIBLING_POINTERS if why.endswith(p)), None)
    if pointer is None:
        return why, 1
    here = Path(os.path.abspath(summary.file))
    meant = [s for s in read if s is not summary and SIBLING_POINTERS[pointer](here, Path(os.path.abspath(s.file)), s.format)]
    if not meant:
        return why, 1
    return f"{why.removesuffix(pointer)}; {_why_none(meant[0])}", 2


def _why_none(summary) -> str:
    """Why a file read holds no model call, after its name, from its summary: that no call in it was
    answered, a record skipped (``file:line``) and why, the note that says why no call was read,
    else its first note."""
    from prefixbench.workloads.logs.formats.http_capture import UNANSWERED

    unanswered = [n for n in summary.notes if n.startswith(UNANSWERED)]
    if unanswered:  # a proxy's capture of calls the upstream never answered: that, not a record's skip
        return f"{summary.file}: {unanswered[0]}"
    if summary.skipped:
        line, reason = summary.skipped[0]
        return f"{summary.file}:{line}: {reason}" + (f" ({len(summary.skipped)} record(s) skipped)" if len(summary.skipped) > 1 else "")
    if summary.notes:
        # The note that says why no call was read, where one does (else the file's first).
        said = [n for n in summary.notes if any(w in n for w in ("no call", "no usage", "no per-call usage", "no model call", "usage is"))]
        return f"{summary.file}: {(said or list(summary.notes))[0]}"
    return f"{summary.file}: read as {summary.format}, no model call in it"


def total_bytes(files: list[tuple[Path, str | None]]) -> int:
    """Bytes of the log files an audit will read (for the progress bar), from the walk
    :func:`~prefixbench.workloads.logs.sources.find_log_files` made: the skipped files, copies
    and unreadable folders left out."""
    from prefixbench.workloads.logs.sources import COPY_OF, is_unreadable

    return sum(path.stat().st_size for path, reason in files
               if not is_unreadable(reason) and not (reason or "").startswith(COPY_OF))


#: ``audit`` without ``--jobs`` reads in one process below this many bytes of logs. Below it the
#: gain is small and depends on the machine being idle (40 MB of Claude Code transcripts: two
#: workers 0.75-0.87 s against 1.0 s for one; 80 MB at load 2, 1.78-2.01 s against 1.65-1.78 s),
#: and each worker is a forked process of its own memory; on 0.6 MB the same time either way.
AUTO_JOBS_BYTES = 64 * 2**20
#: ... and with at most this many workers (the cores this process may use, the files, this).
AUTO_JOBS_MAX = 8


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it, as with
    ``taskset`` or a container pinned to some cores; a CPU quota such as ``docker --cpus`` is not
    seen), else the machine's."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # macOS and Windows have no affinity call
        return os.cpu_count() or 1


def auto_jobs(files: list[tuple[Path, str | None]], size: int) -> int:
    """Worker processes for an ``audit`` given no ``--jobs``: 1 for less than
    :data:`AUTO_JOBS_BYTES` of logs or a single file to read, else one per usable core, at most
    one per file and :data:`AUTO_JOBS_MAX`. The output is the same whatever the number."""
    from prefixbench.workloads.logs.sources import logs_of

    readable = len(logs_of(files))
    if size < AUTO_JOBS_BYTES or readable < 2:
        return 1
    return max(1, min(usable_cores(), readable, AUTO_JOBS_MAX))


def file_map(jobs: int, scheduler: str | None):
    """How ``audit --jobs`` / ``--scheduler`` read the log files: None (one by one, here), else
    ``map_runs`` with them bound (:mod:`prefixbench.workloads.audit.reading`).

    Raises:
        UserError: ``--jobs`` below 1, or ``--scheduler`` without Dask installed.
    """
    from prefixbench.workloads.runs.execute import check_jobs

    check_jobs(jobs, scheduler, "audit")
    if jobs == 1 and scheduler is None:
        return None
    import functools

    from prefixbench.workloads.runs.execute import map_runs, require_scheduler

    require_scheduler(scheduler)
    return functools.partial(map_runs, jobs=jobs, scheduler=scheduler)


#: The largest read step ``--read-step`` takes (tokens): past any provider's block or checkpoint.
MAX_READ_STEP = 1_000_000


def parse_read_steps(text: str | None) -> dict[str, int]:
    """``--read-step gemini=1,xai=64`` as {provider: step}.

    Raises:
        UserError: an unknown provider, a step that is not a whole number from 1 to
            :data:`MAX_READ_STEP`, or a provider named twice.
    """
    if text is None:
        return {}
    from prefixbench.simulator.providers import PROVIDERS

    steps: dict[str, int] = {}
    for item in text.split(","):
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not name or not value:
            raise UserError(f"--read-step {text}: {item.strip()!r} is not PROVIDER=N (e.g. gemini=1)")
        if name not in PROVIDERS:
            raise UserError(f"--read-step {text}: unknown provider {name!r} (one of: {', '.join(sorted(PROVIDERS))})")
        if name in steps:
            raise UserError(f"--read-step {text}: {name} is named twice")
        if not (value.isascii() and value.isdigit() and len(value) < 16) or not 1 <= int(value) <= MAX_READ_STEP:
            raise UserError(f"--read-step {text}: {name}'s step {value!r} is not a whole number of tokens from 1 to {MAX_READ_STEP:,}")
        steps[name] = int(value)
    return steps


#: The largest head ``--codex-warm-head`` takes (tokens): past any context window Codex runs in.
MAX_CODEX_HEAD = 2_000_000


def parse_codex_heads(text: str | None) -> dict[str, int]:
    """``--codex-warm-head 11648`` as {"*": 11648}; ``gpt-5.5=11648,gpt-5.4=5504`` as {model: tokens}.

    Raises:
        UserError: a size that is not a whole number from 1 to :data:`MAX_CODEX_HEAD`, an empty
            model, or a model named twice.
    """
    if text is None:
        return {}
    heads: dict[str, int] = {}
    for item in text.split(","):
        name, sep, value = (part.strip() for part in item.rpartition("="))
        name = name if sep else "*"
        if not name or not value:
            raise UserError(f"--codex-warm-head {text}: {item.strip()!r} is not N or MODEL=N (e.g. 11648 or gpt-5.5=11648)")
        if name in heads:
            raise UserError(f"--codex-warm-head {text}: {'every model' if name == '*' else name} is named twice")
        if not (value.isascii() and value.isdigit() and len(value) < 16) or not 1 <= int(value) <= MAX_CODEX_HEAD:
            raise UserError(f"--codex-warm-head {text}: {value!r} is not a whole number of tokens from 1 to {MAX_CODEX_HEAD:,}")
        heads[name] = int(value)
    return heads


def run_audit_command(args) -> int:
    """``prefixbench audit``: check every option, audit, print, write, gate. A PATH ``-`` is
    standard input, kept in a temporary file named ``<stdin>`` while the audit reads it (as
    ``replay -`` reads it), its format found from its content as a file's is."""
    from prefixbench.reports.stdio import is_dash, readable_file

    dashes = [path for path in args.paths if is_dash(path)]
    if not dashes:
        return _run_audit_command(args)
    if len(dashes) > 1:
        raise UserError("audit - -: standard input is one log; name the others by their paths")
    scheduler = getattr(args, "scheduler", None)
    if scheduler is not None and scheduler != "local":
        raise UserError(f"audit - --scheduler {scheduler}: a remote scheduler's workers read the logs by their paths, "
                        "and standard input has none; save the log to a file, or use --scheduler local")
    with readable_file(dashes[0], "audit") as copy:
        args.paths = [copy if is_dash(path) else path for path in args.paths]
        args.stdin_copy = str(copy)
        return _run_audit_command(args)


def _as_given(args, text: str) -> str:
    """``text`` naming standard input ``<stdin>``, not the temporary copy the audit read it from
    (nor that copy's folder), where a PATH was ``-``; else as it is."""
    copy = getattr(args, "stdin_copy", None)
    if not copy:
        return text
    from prefixbench.reports.stdio import STDIN_NAME

    return text.replace(copy, STDIN_NAME).replace(str(Path(copy).parent), STDIN_NAME)


def _run_audit_command(args) -> int:
    from prefixbench.workloads.audit.core import run_audit
    from prefixbench.workloads.audit.gate import Gate, junit_xml, unjudged, violations

    gate = Gate.parse(args.fail_on, args.min_hit_ratio, args.max_lost_usd)
    from prefixbench.reports.options import check_price_date

    check_price_date(args.price_as_of)  # before any log is read (the prices are looked up after)
    steps = parse_read_steps(getattr(args, "read_step", None))
    from prefixbench.workloads.logs.billing_header import assume_billing_headers, parse_modes

    billing = parse_modes(getattr(args, "billing_header", None))
    codex_heads = parse_codex_heads(getattr(args, "codex_warm_head", None))
    from prefixbench.workloads.audit.assume_model import alias_models, assume_models, parse_assumed_models, parse_model_aliases

    assumed_models = parse_assumed_models(getattr(args, "assume_model", None))
    model_aliases = parse_model_aliases(getattr(args, "model_alias", None))
    from prefixbench.workloads.audit.assume_provider import assume_providers, parse_assumed_providers

    assumed_providers = parse_assumed_providers(getattr(args, "assume_provider", None))
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise UserError(f"--out {args.out}: is a file, not a folder")
    if args.junit is not None:
        from prefixbench.reports.outdir import check_out_file

        check_out_file(args.junit, "--junit")  # before any work: a bad --junit writes nothing anywhere
    if args.out is not None:
        from prefixbench.reports.outdir import check_out_dir

        existed = args.out.exists()
        check_out_dir(args.out, AUDIT_FILES, "audit")
        if not existed:
            args.out.rmdir()  # checked only: the folder appears when the audit's files land, all at once
    if getattr(args, "what_if", None) is not None:  # --what-if "" too: refused, not taken as no fix
        from prefixbench.workloads.audit.whatif import parse_fixes

        parse_fixes(args.what_if)  # a bad fix name is an error before any log is read
    jobs, scheduler = getattr(args, "jobs", 1), getattr(args, "scheduler", None)
    file_map(1 if jobs is None else jobs, scheduler)  # a bad --jobs or a missing Dask is an error before the walk
    from prefixbench.workloads.logs.sources import find_log_files

    files = find_log_files(list(args.paths))  # walked once: the progress bar's total, then the read
    size = total_bytes(files)
    if jobs is None:  # not given: one process for a small audit, the cores for a big folder
        jobs = auto_jobs(files, size) if scheduler is None else 1
    map_files = file_map(jobs, scheduler)
    # The audit's pass and the fixes' re-simulations run in forked local processes: --jobs of
    # them (a --scheduler's workers would need the whole trace sent to them; its --jobs still
    # counts here).
    what_if_jobs = jobs
    progress = ReadProgress(size, enabled=not args.quiet)
    what_if = None
    try:
        from prefixbench.workloads.audit.core import load_trace
        from prefixbench.workloads.logs.claude_layout import RUN_JOURNAL_WHY
        from prefixbench.workloads.logs.jsonlines import TAIL_REASONS, ZERO_TAIL, ZEROS_NOT_READ, torn_note

        # A file of bad input is left out (each error in unread): the others' audit is given and
        # written all the same, and the first error is the command's last line (exit 2).
        unread: list[str] = []
        trace = load_trace(args.paths, args.input, progress, map_files, files=files,
                           notice=lambda text: progress.notice(_as_given(args, text)), held=True, unread=unread)
        # An audit with no call ends in one error line: a warning that line already says (the
        # torn last line of a file whose only other lines hold no call) is not said twice.
        error = None if trace[0] else left_out_error(unread[0], trace[1]) if unread else nothing_to_audit(trace[1])
        warned: set[str] = set()
        for summary in trace[1]:
            # Said even with --quiet: the audit covers less than was named (a JSON-lines file of no
            # format audit reads may be a log of a version it does not know yet).
            warnings = [f"{summary.file}: {summary.notes[0]}"] if (
                summary.format in ("unreadable", "headless") or summary.format == "not-a-log" and summary.file.endswith(".jsonl")
                and not summary.notes[0].startswith(f"skipped: {RUN_JOURNAL_WHY}")) else []
            warnings += [torn_note(summary.file, line, reason) for line, reason in summary.skipped if reason in TAIL_REASONS]
            # (a whole last record or document that zeros follow: read, so no skip; its file's note says so: "line N: ...")
            warnings += [f"{summary.file}:{note.removeprefix('line ')}" for note in summary.notes
                         if note.startswith("line ") and note.endswith(ZEROS_NOT_READ)]
            # (a file read with this one, a Cline task's history beside its ui_messages.json: "NAME:LINE: ...")
            warnings += [os.path.join(os.path.dirname(summary.file), note) for note in summary.notes
                         if not note.startswith("line ") and note.endswith((ZEROS_NOT_READ, ZERO_TAIL))]
            for text in warnings:
                if text in warned:  # (a folder's file warned of by itself, and by the file read with it)
                    continue
                warned.add(text)
                if error is None or text not in error:
                    emit(visible(_as_given(args, f"prefixbench: warning: {text}")), sys.stderr)
        if error is not None:
            raise UserError(error)
        # First: the assumptions below go by the calls' providers, which a model assumed sets.
        # The names the user mapped to a priced model first: a call the log names a model of is
        # then that model's for every assumption below.
        trace_requests, aliased = alias_models(trace[0], model_aliases)
        trace_requests, assumed = assume_models(trace_requests, assumed_models)
        assumed = aliased + assumed
        # Then who served the calls whose log names no endpoint (said even without the option).
        trace_requests, served = assume_providers(trace_requests, assumed_providers)
        assumed += served
        trace = (trace_requests, trace[1])
        if getattr(args, "openai_zdr", False):
            from prefixbench.workloads.audit.core import assume_zdr, zdr_unused_note

            trace = (assume_zdr(trace[0]), trace[1])
            assumed += zdr_unused_note(trace[0])
        if not getattr(args, "follow_reads", True):
            from prefixbench.workloads.audit.core import no_follow_unused_note

            assumed += no_follow_unused_note(trace[0])
        trace_requests, billed = assume_billing_headers(trace[0], billing)
        assumed += billed
        trace = (trace_requests, trace[1])
        del trace_requests
        if steps:
            from prefixbench.workloads.audit.core import assume_read_steps, read_step_notes

            assumed += read_step_notes(trace[0], steps)
            trace = (assume_read_steps(trace[0], steps), trace[1])
        if codex_heads:
            from prefixbench.workloads.audit.core import assume_codex_heads, codex_head_notes

            assumed += codex_head_notes(trace[0], codex_heads)
            trace = (assume_codex_heads(trace[0], codex_heads), trace[1])
        progress.phase(f"read {progress.total / 1e6:,.1f} MB in {time.monotonic() - progress.start:.1f} s; "
                       f"auditing {len(trace[0]):,} requests")
        # The audit's prediction of the log as sent, which the re-simulations below start from.
        from prefixbench.workloads.audit.core import Baseline
        from prefixbench.workloads.audit.spill import BucketSpill

        baseline = Baseline()
        # The rows go to a temporary file as the audit makes them (BucketSpill) and come back a
        # file at a time to be summed, then once the re-simulations below are done and the trace
        # is freed: they are never in memory with the trace (nor with each other but a file's).
        with BucketSpill() as spill:
            result = run_audit(args.paths, fmt=args.input, price_as_of=args.price_as_of, trace=trace,
                               follow_reads=getattr(args, "follow_reads", True), baseline=baseline, spill=spill,
                               jobs=what_if_jobs, drop_ids=True)  # the ids: read there for the sessionless lanes, then dropped
            from prefixbench.workloads.audit.core import drop_histories

            drop_histories(trace[0])  # located: the re-simulations below do not read them

            if assumed:
                result = replace(result, notes=result.notes + assumed)
            if getattr(args, "openai_zdr", False):
                from prefixbench.workloads.audit.core import zdr_notes

                result = replace(result, notes=zdr_notes(result.notes))
            from prefixbench.workloads.audit.advice import follow_resimulation, rank, resimulate, resimulation_targets
            from prefixbench.simulator.price_lookup import Prices

            # The re-simulations below read two small sets of the rows, not the rows.
            wanted, changed = resimulation_targets(spill.misses())  # (a row without a cause points at no fix)
            fixes = None
            if getattr(args, "what_if", None):
                from prefixbench.reports.whatif import run_what_if, what_if_records, what_if_table

                progress.phase(f"re-simulating the log with each --what-if fix ({args.what_if})")
                fixes = run_what_if(trace, args.what_if, args.price_as_of, jobs=what_if_jobs, baseline=baseline,
                                    system_changed=changed)
                what_if = what_if_records(fixes, changes=False)  # each change made a record as it is written
            # What to change opens every view: the recoverable misses' fixes re-simulated (reusing --what-if's).
            progress.phase("re-simulating the fixes of the recoverable misses (what to change)")
            found = resimulate(trace[0], trace[1], wanted, changed, result.files, prices=Prices(args.price_as_of),
                               what_ifs=fixes, jobs=what_if_jobs, baseline=baseline)
            # The writers read the result only: the trace (every request of every file) is freed
            # before the rows come back, and its memory serves them.
            del baseline, trace, changed
            result = replace(result, rows=spill.load())
        followed = follow_resimulation(result, found)
        result = replace(followed, recommendations=rank(followed, found))
        del found
    finally:
        progress.close()
    copy = getattr(args, "stdin_copy", None)
    if copy:  # standard input is <stdin> in every view, not the temporary file it was read from
        from prefixbench.reports.stdio import STDIN_NAME, renamed

        # (and its folder, which a log named by its folder names: a Cline task's head, cline:<folder>:model)
        named = renamed((result, fixes, what_if), copy, STDIN_NAME)
        result, fixes, what_if = renamed(named, str(Path(copy).parent), STDIN_NAME)
    match args.format:
        case "json":
            write_chunks(audit_json_chunks(result, what_if), sys.stdout, batch=_CHUNKS_A_WRITE)
        case "md":
            emit(audit_markdown(result))
        case _:
            emit(audit_table(result))
    what_if_md = None
    if what_if is not None:
        table = "\n".join(visible(line) for line in what_if_table(fixes).split("\n"))
        what_if_md = what_if_markdown(table)
        if args.format != "json":
            emit(what_if_md if args.format == "md" else table)
    if args.out is not None:
        write_outputs(result, args.out, what_if, what_if_md, say=lambda text: progress.phase(visible(text)))
        if not args.quiet:  # as sweep says where it wrote
            emit(visible(f"wrote {args.out}/: {', '.join(AUDIT_FILES)}"), sys.stderr)
    if args.junit is not None:
        try:
            args.junit.parent.mkdir(parents=True, exist_ok=True)
            args.junit.write_bytes(junit_xml(result, gate, escape=printable))
        except OSError as exc:
            raise UserError(f"--junit {args.junit}: cannot write ({exc.strerror or exc})") from None
        if not args.quiet:  # as --out says where it wrote
            emit(visible(f"wrote {args.junit}: JUnit XML, a test case per lane and one for the totals"), sys.stderr)
    for line in unjudged(result, gate):  # said even with --quiet: the gate passed on less than the log
        emit(line, sys.stderr)
    failed = violations(result, gate)
    for line in failed:
        emit(visible(line), sys.stderr)  # a cause's detail quotes the log: a model name, a body excerpt
    if unread:
        raise UserError(left_out(unread))
    return 1 if failed else 0


def left_out(unread: list[str]) -> str:
    """The line of an audit that left out files of bad input (``unread``: their errors, in file
    order): the first error, and that the audit given is of the other files."""
    others = f" and {len(unread) - 1} other file(s) of bad input (each named in the audit's notes)" if len(unread) > 1 else ""
    return f"{unread[0]} (this file{others} left out: the audit given is of the other files)"
