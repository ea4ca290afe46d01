"""Writers for ``prefixbench audit``: terminal table, JSON, Markdown, CSV, PNG, and progress.

The audit itself lives in :mod:`prefixbench.workloads.audit`; nothing here recomputes it.
"""

from __future__ import annotations

import csv
import io
import re
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from pathlib import Path

import msgspec

from prefixbench.reports.textable import text_lines, visible
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import format_usd
from prefixbench.workloads.audit.causes import CAUSES
from prefixbench.workloads.audit.locate import short_where
from prefixbench.workloads.audit.core import AuditResult, AuditRow, LaneSummary
from prefixbench.workloads.audit.schema import (
    CAUSE_FIELDS,
    AGREEMENT_FIELDS,
    FILE_FIELDS,
    LANE_FIELDS,
    MODEL_FIELDS,
    REQUEST_FIELDS as REQUEST_SCHEMA,
    REQUESTS_SHOWN_FIELDS,
    SCHEMA_VERSION,
    TOTALS_FIELDS,
    section_record,
)
from prefixbench.workloads.fields import names

#: Files drawn as a panel each in audit.png; beyond this, one panel holds every request.
CHART_PANELS = 12
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
        "requests": [request_record(row) for row in (result.rows if rows is None else rows)],
        "lanes": [section_record(LANE_FIELDS, lane) for lane in result.lanes],
        "causes": [section_record(CAUSE_FIELDS, cause) for cause in result.causes],
        "totals": section_record(TOTALS_FIELDS, result.totals),
        "models": [section_record(MODEL_FIELDS, model) for model in result.models],
        "files": [section_record(FILE_FIELDS, calibration) for calibration in result.files],
        "agreement": [section_record(AGREEMENT_FIELDS, pair) for pair in result.agreement],
        "notes": list(result.notes),
    }


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
        record["what_if"] = what_if
    # Every other section is small: lay the object out with no request, then splice them in
    # where its empty list is (keys sit at depth 1, and a JSON string holds no raw newline).
    head, tail = _formatted(record).split(_EMPTY_REQUESTS, 1)
    yield head + '\n "requests": ['
    for n, row in enumerate(result.rows):
        yield ("\n  " if n == 0 else ",\n  ") + _formatted(request_record(row)).replace("\n", "\n  ")
    yield ("\n ]" if result.rows else "]") + tail


#: Where the requests go in the laid-out object (see :func:`audit_json_chunks`).
_EMPTY_REQUESTS = '\n "requests": []'


def audit_json(result: AuditResult, what_if: list[dict[str, object]] | None = None) -> str:
    """``--format json`` (with ``"what_if"`` when ``--what-if`` ran) as one string."""
    return "".join(audit_json_chunks(result, what_if))


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


def _short(path: str) -> str:
    return Path(path).name


def _usd(value: Decimal | None) -> str:
    return "-" if value is None else format_usd(value)


def audit_table(result: AuditResult, worst: int = WORST) -> str:
    """The terminal view: totals, misses by cause, the worst requests, then every lane predicted vs
    reported, models, calibration per file and notes."""
    reported_files = {row.file for row in result.rows if row.reported_cache_read is not None}
    out = [_headline(result), "", "misses by cause", *_causes_lines(result)]
    out += _worst_lines(result, worst)
    out += ["", "lanes: reported vs predicted", *_lane_lines(result, reported_files)]
    out += ["", "models", *_model_lines(result)]
    out += ["", "calibration per file: predicted read against reported read", *_calibration_lines(result, reported_files)]
    out += _agreement_lines(result)
    out += _note_lines(result)
    return "\n".join(out)


def _headline(result: AuditResult) -> str:
    t = result.totals
    return (
        f"{t.requests:,} requests: input {t.input:,}, output {t.output:,}, cache write {t.cache_write:,} "
        f"({t.cache_write_1h:,} at 1 h), cache read {t.cache_read:,}; hit ratio {t.hit_ratio:.1%}; "
        f"paid {format_usd(t.cost_usd)}, lost to misses {format_usd(t.lost_usd)}"
    )


def _causes_lines(result: AuditResult) -> list[str]:
    return list(text_lines(
        ["cause", "requests", "lost tokens", "lost", "meaning"],
        [[c.cause, f"{c.requests:,}", f"{c.lost_tokens:,}", format_usd(c.lost_usd), CAUSES[c.cause]] for c in result.causes],
        {1, 2, 3},
    )) or ["(none)"]


def _worst_lines(result: AuditResult, worst: int) -> list[str]:
    """The requests that lost most, by dollars then tokens."""
    ranked = sorted(
        (row for row in result.rows if row.cause is not None and row.lost_tokens > 0),
        key=lambda row: (-(row.lost_usd or Decimal(0)), -row.lost_tokens, row.file, row.line),
    )[:worst]
    return ["", f"worst requests (top {len(ranked)} by dollars lost)", *text_lines(
        ["file:line", "lane", "read", "expected", "lost", "cause", "evidence", "where", "detail"],
        [
            [
                f"{_short(row.file)}:{row.line}", row.lane, f"{row.reported_cache_read or 0:,}",
                f"{row.expected_cache_read:,}", _usd(row.lost_usd), row.cause or "", row.evidence or "",
                short_where(row.location), row.detail[:110],
            ]
            for row in ranked
        ],
        {2, 3, 4},
    )]


def _lane_cells(lane: LaneSummary, reported: bool) -> list[str]:
    """One lane's row: reported against predicted (``n/a`` where the file reports no usage)."""
    if not reported:
        return [_short(lane.file), lane.lane, f"{lane.requests:,}", "n/a", f"{lane.predicted_cache_read:,}", "n/a", "n/a",
                f"{lane.predicted_cache_write:,}", "n/a", f"{lane.predicted_uncached:,}", "n/a", "n/a", "-", "-"]
    error = (
        "n/a"
        if lane.reported_cache_read == 0
        else f"{(lane.predicted_cache_read - lane.reported_cache_read) / lane.reported_cache_read:+.1%}"
    )
    return [
        _short(lane.file), lane.lane, f"{lane.requests:,}", f"{lane.reported_cache_read:,}",
        f"{lane.predicted_cache_read:,}", error, f"{lane.reported_cache_write:,}", f"{lane.predicted_cache_write:,}",
        f"{lane.reported_uncached:,}", f"{lane.predicted_uncached:,}", f"{lane.read_within}/{lane.requests}",
        f"{lane.hit_ratio:.1%}", format_usd(lane.cost_usd), format_usd(lane.lost_usd),
    ]


def _lane_lines(result: AuditResult, reported_files: set[str]) -> list[str]:
    return list(text_lines(
        ["file", "lane", "reqs", "read", "pred", "err", "write", "pred", "uncached", "pred", "read ±3%", "hit", "paid", "lost"],
        [_lane_cells(lane, lane.file in reported_files) for lane in result.lanes],
        set(range(2, 14)),
    ))


def _model_lines(result: AuditResult) -> list[str]:
    return list(text_lines(
        ["provider", "model", "requests", "input", "output", "cache read", "cache write", "paid", "lost"],
        [
            [
                m.provider, m.model, f"{m.requests:,}", f"{m.input:,}", f"{m.output:,}", f"{m.cache_read:,}",
                f"{m.cache_write:,}", format_usd(m.cost_usd) if m.priced else "no price",
                format_usd(m.lost_usd) if m.priced else "-",
            ]
            for m in result.models
        ],
        set(range(2, 9)),
    ))


def _calibration_lines(result: AuditResult, reported_files: set[str]) -> list[str]:
    """Calibration per file, with footnotes saying what each figure counts and the skipped records."""
    positive: dict[str, int] = {}
    for row in result.rows:
        if row.reported_cache_read:
            positive[row.file] = positive.get(row.file, 0) + 1
    out = list(text_lines(
        ["file", "format", "requests", "within 3%", "read > 0", "mean |error|", "skipped", "paid", "lost"],
        [
            [
                _short(f.file), f.format, f"{f.requests:,}",
                f"{f.read_within:,}" if f.file in reported_files else "n/a",
                f"{positive.get(f.file, 0):,}" if f.file in reported_files else "n/a",
                "n/a" if f.mean_abs_read_error is None else f"{f.mean_abs_read_error:.2%}",
                f"{f.skipped:,}", format_usd(f.cost_usd), format_usd(f.lost_usd),
            ]
            for f in result.files
        ],
        {2, 3, 4, 5, 6, 7, 8},
    ))
    out += [
        "within 3%: requests whose predicted read is within 3% of the reported one (a reported read of 0 counts "
        "only if 0 was predicted)",
        "read > 0: requests that reported a read above 0; mean |error| (|predicted - reported| / reported) is over "
        "these only, so a request that reported 0 where a read was predicted counts against within 3% but not in "
        "the mean",
        "skipped: log records read but not counted as requests (not in requests or any figure above), by reason:",
    ]
    skips = [(f, reason, n) for f in result.files for reason, n in f.skip_reasons]
    return out + ([visible(f"  {_short(f.file)}: {n:,} {reason}") for f, reason, n in skips] or ["  (none)"])


def _agreement_lines(result: AuditResult) -> list[str]:
    """The server's miss reasons against the audit's own causes, where the log carries them."""
    if not result.agreement:
        return []
    rows = [
        (pair.server_reason, pair.audit_cause, f"{pair.requests:,}",
         "yes" if pair.agree else "no" if pair.agree is False else "server names no cause: the audit's is the only one")
        for pair in result.agreement
    ]
    decided = [pair for pair in result.agreement if pair.agree is not None]
    agreed = sum(pair.requests for pair in decided if pair.agree)
    total = sum(pair.requests for pair in decided)
    head = "server's reasons vs the audit's own causes (inferred without the server's)"
    if total:
        head += f": the same cause on {agreed:,} of {total:,} ({agreed / total:.0%})"
    return ["", head, *text_lines(("server reason", "audit cause", "requests", "agree"), rows, {2})]


def _note_lines(result: AuditResult) -> list[str]:
    """The files' notes (one line per note, naming the file or how many files carry it), then the audit's."""
    file_notes: dict[str, list[str]] = {}
    for calibration in result.files:
        for note in calibration.notes:
            file_notes.setdefault(note, []).append(_short(calibration.file))
    out = [""]
    for note, files in file_notes.items():
        where = files[0] if len(files) == 1 else f"{len(files)} files"
        out.append(visible(f"note ({where}): {note}"))
    return out + [visible(f"note: {note}") for note in result.notes]


def audit_markdown(result: AuditResult) -> str:
    """audit.md: the table view in Markdown, with how to read it."""
    body = audit_table(result, worst=50)
    # The fence is longer than any run of backticks in the table (a model or file name can hold
    # some), so nothing read from a log closes it; control characters are already shown escaped.
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", body)), default=0))
    return (
        "# prefixbench audit\n\n"
        "Every request of every lane, predicted by the provider's cache model on the log's clock and "
        "compared with what the provider reported. *expected* is the read the previous request of the "
        "lane left possible; *lost* is what the tokens missing from it cost above the read price. Each "
        "miss carries one cause and the evidence that decided it: `diagnostic` (the provider said so), "
        "`body-diff` (the request bodies differ there), `log` (inferred from what the log records), "
        "`position` (a transcript without bodies: where the cached prefix ended on the logged messages, "
        "and the likely change the log shows there; *where* names the message, or the unlogged head) or "
        "`none` (`unexplained`, with why the log cannot tell).\n\n"
        f"{fence}\n{body}\n{fence}\n\n## Causes\n\n"
        + "\n".join(f"- `{name}`: {meaning}" for name, meaning in CAUSES.items())
        + "\n"
    )


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
    """audit.png: per file, per request stacked read / write / uncached, predicted read, misses by cause."""
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator
    from prefixbench.reports.palette import CACHED, UNCACHED

    # A bare Figure, drawn by Agg when saved: no pyplot, no backend to select, and none of the
    # sweep charts' imports (reports/charts.py brings pandas: about 60 MB an audit does not need).

    files = [f.file for f in result.files]
    rows_by_file: dict[str, list[AuditRow]] = {name: [] for name in files}
    for row in result.rows:
        rows_by_file[row.file].append(row)
    if len(files) > CHART_PANELS:
        # Too many files for a panel each: one panel, every request in file order (nothing left out).
        rows_by_file = {f"{len(files)} files, in order": [row for name in files for row in rows_by_file[name]]}
        files = list(rows_by_file)
    colours = dict(zip(CAUSES, ("#57606a", "#8250df", "#bf8700", "#cf222e", "#fb8f44", "#0550ae", "#0969da", "#a40e26",
                                "#953800", "#1a7f37", "#6639ba", "#6e7781", "#116329", "#4d2d00", "#000000")))
    fig = Figure(figsize=(12, 2.6 * len(files) + 0.6))
    axes = fig.subplots(len(files), 1, squeeze=False)
    used: set[str] = set()
    for ax, name in zip(axes[:, 0], files):
        rows = rows_by_file[name]
        if not rows:
            ax.text(0.5, 0.5, "no model calls with usage in this file", ha="center", va="center", transform=ax.transAxes)
            ax.set_title(visible(printable(Path(name).name)), fontsize=9)
            continue
        reported = all(row.reported_cache_read is not None for row in rows)
        read = np.array([(row.reported_cache_read if reported else row.predicted_cache_read) or 0 for row in rows], float)
        write = np.array([(row.reported_cache_write if reported else row.predicted_cache_write) or 0 for row in rows], float)
        uncached = np.array([(row.reported_uncached if reported else row.predicted_uncached) or 0 for row in rows], float)
        predicted = np.array([row.predicted_cache_read for row in rows], float)
        # More requests than the panel has room for: each step is the mean of ``width`` requests
        # (the figure's memory grows with its steps and markers, not with the log).
        width = max(1, -(-len(rows) // CHART_STEPS))
        if width == 1:
            x = np.arange(len(rows))
            edges = np.arange(len(rows) + 1) - 0.5
        else:
            starts = np.arange(0, len(rows), width)
            counts = np.diff(np.append(starts, len(rows)))
            read, write, uncached, predicted = (np.add.reduceat(a, starts) / counts for a in (read, write, uncached, predicted))
            edges = np.append(starts, len(rows)) - 0.5
            x = starts + (counts - 1) / 2
        ax.stairs(read, edges, fill=True, color=CACHED, label="cache read")
        ax.stairs(read + write, edges, baseline=read, fill=True, color="#bf8700", label="cache write")
        ax.stairs(read + write + uncached, edges, baseline=read + write, fill=True, color=UNCACHED, label="uncached")
        if reported:
            ax.step(x, predicted, where="mid", color="black", linewidth=0.8, label="predicted read")
        top = (read + write + uncached).max() if len(rows) else 1
        for cause in CAUSES:
            picked = [i for i, row in enumerate(rows) if row.cause == cause]
            if width > 1:  # one marker a step
                picked = [x[i] for i in sorted({i // width for i in picked})]
            if picked:
                used.add(cause)
                ax.scatter(picked, [top * 1.04] * len(picked), marker="v", s=18, color=colours[cause], label=f"miss: {cause}", zorder=3)
        ax.set_xlim(-0.5, max(len(rows) - 0.5, 0.5))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylim(0, top * 1.12 if top else 1)
        steps = "" if width == 1 else f", each step the mean of {width:,}"
        ax.set_title(visible(printable(f"{Path(name).name} ({len(rows):,} requests{'' if reported else ', predicted only'}{steps})")), fontsize=9)
        ax.set_ylabel("tokens", fontsize=8)
        ax.tick_params(labelsize=7)
    handles: dict[str, object] = {}
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        fig.legend(list(handles.values()), list(handles.keys()), loc="upper center", ncol=min(6, len(handles)), fontsize=7, frameon=False)
    axes[-1, 0].set_xlabel("request (file order)", fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))
    fig.savefig(path, dpi=100, metadata={"Software": None})  # as reports/charts.py's save(): the same bytes every time


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
        key=lambda i: (rows[i].cause is None, -(rows[i].lost_usd or Decimal(0)), -rows[i].lost_tokens, i),
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
    return audit_page(record, what_if)


def _text_file(path: Path):
    """A UTF-8 file to stream text into; a lone surrogate is written as its escape (:func:`printable`)."""
    return path.open("w", encoding="utf-8", errors="backslashreplace", newline="")


def write_outputs(result: AuditResult, out: Path, what_if: list[dict[str, object]] | None = None) -> list[Path]:
    """audit.md, audit.csv, audit.json, audit.png and report.html in ``out``, all or nothing.

    Everything is written to a staging folder beside ``out`` first, then lands together
    (:func:`prefixbench.reports.outdir.staged_out`), so a failure or a kill never leaves half
    the files, nor old and new ones mixed.
    """
    from prefixbench.reports.outdir import staged_out

    with staged_out(out, AUDIT_FILES) as staging:
        (staging / "audit.md").write_text(printable(audit_markdown(result)), encoding="utf-8")
        with _text_file(staging / "audit.csv") as handle:
            write_audit_csv(result, handle)
        with _text_file(staging / "audit.json") as handle:
            write_chunks(audit_json_chunks(result, what_if), handle)
        audit_chart(result, staging / "audit.png")
        (staging / "report.html").write_text(printable(audit_html(result, what_if)), encoding="utf-8")
    return [out / name for name in AUDIT_FILES]


#: The files ``audit --out`` writes.
AUDIT_FILES = ("audit.md", "audit.csv", "audit.json", "audit.png", "report.html")


class Progress:
    """Bytes read so far (across files): a rich bar on a terminal, else a plain line every few seconds."""

    def __init__(self, total: int, *, enabled: bool = True, every: float = 3.0) -> None:
        self.total = max(total, 1)
        self.enabled = enabled and total > 0
        self.every = every
        self.last = time.monotonic()
        self.start = self.last
        self._bar = None
        if self.enabled and sys.stderr.isatty():
            from rich.progress import BarColumn, TransferSpeedColumn
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress("reading logs", BarColumn(), TransferSpeedColumn(), transient=True)
            self._task = self._bar.add_task("read", total=self.total)
            self._bar.start()

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        now_done = done
        if self._bar is not None:
            self._bar.update(self._task, completed=now_done)
            return
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            rate = now_done / max(now - self.start, 1e-9) / 1e6
            print(f"prefixbench audit: read {now_done / 1e6:,.1f} of {self.total / 1e6:,.1f} MB ({rate:.1f} MB/s)", file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def printable(text: str, encoding: str = "utf-8") -> str:
    """``text`` as the stream can carry it: a lone surrogate (a log can hold one, e.g. an emoji
    cut in half) or a character the encoding lacks becomes a backslash escape, never a crash."""
    return text.encode(encoding, "backslashreplace").decode(encoding)


def emit(text: str, stream=None) -> None:
    """Print ``text`` (and a newline) safely; see :func:`printable`."""
    stream = stream or sys.stdout
    print(printable(text, getattr(stream, "encoding", None) or "utf-8"), file=stream)


def total_bytes(paths: list[Path]) -> int:
    """Bytes of the log files an audit will read (for the progress bar)."""
    from prefixbench.workloads.logs.sources import find_logs

    return sum(path.stat().st_size for path in find_logs(paths))


def run_audit_command(args) -> int:
    """``prefixbench audit``: check every option, audit, print, write, gate."""
    from prefixbench.workloads.audit.core import run_audit
    from prefixbench.workloads.audit.gate import Gate, junit_xml, violations

    gate = Gate.parse(args.fail_on, args.min_hit_ratio, args.max_lost_usd)
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise UserError(f"--out {args.out}: exists and is a file")
    if args.junit is not None:
        from prefixbench.reports.outdir import check_out_file

        check_out_file(args.junit, "--junit")  # before any work: a bad --junit writes nothing anywhere
    if args.out is not None:
        from prefixbench.reports.outdir import check_out_dir

        existed = args.out.exists()
        check_out_dir(args.out, AUDIT_FILES)
        if not existed:
            args.out.rmdir()  # checked only: the folder appears when the audit's files land, all at once
    if getattr(args, "what_if", None):
        from prefixbench.workloads.audit.whatif import parse_fixes

        parse_fixes(args.what_if)  # a bad fix name is an error before any log is read
    progress = Progress(total_bytes(args.paths), enabled=not args.quiet)
    what_if = None
    try:
        from prefixbench.workloads.audit.core import load_trace

        trace = load_trace(args.paths, args.input, progress)
        result = run_audit(args.paths, fmt=args.input, price_as_of=args.price_as_of, trace=trace)
        if getattr(args, "what_if", None):
            from prefixbench.reports.whatif import run_what_if, what_if_records, what_if_table

            fixes = run_what_if(trace, args.what_if, args.price_as_of)
            what_if = what_if_records(fixes)
    finally:
        progress.close()
    match args.format:
        case "json":
            write_chunks(audit_json_chunks(result, what_if), sys.stdout)
        case "md":
            emit(audit_markdown(result))
        case _:
            emit(audit_table(result))
    if what_if is not None and args.format != "json":
        emit("\n".join(visible(line) for line in what_if_table(fixes).split("\n")))
    if args.out is not None:
        write_outputs(result, args.out, what_if)
    if args.junit is not None:
        try:
            args.junit.parent.mkdir(parents=True, exist_ok=True)
            args.junit.write_bytes(junit_xml(result, gate, escape=printable))
        except OSError as exc:
            raise UserError(f"--junit {args.junit}: cannot write ({exc.strerror or exc})") from None
    failed = violations(result, gate)
    for line in failed:
        emit(visible(line), sys.stderr)  # a cause's detail quotes the log: a model name, a body excerpt
    return 1 if failed else 0
