"""Text and JSON for ``replay --input anthropic-capture``: predicted vs reported, side by side.

The replay itself (and the acceptance figures) lives in :mod:`prefixbench.workloads.logs.capture_replay`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from prefixbench.reports.textable import text_lines
from prefixbench.workloads.logs.capture_replay import (
    COMPACTION_TOLERANCE,
    MAIN_READ_SHARE,
    MAIN_READ_TOLERANCE,
    CaptureRow,
    CaptureSummary,
    capture_summary,
    relative_error,
)


def capture_records(rows: Sequence[CaptureRow]) -> list[dict[str, object]]:
    """One JSON-ready object per request, with the absolute and relative error of each count."""
    records = []
    for row in rows:
        record: dict[str, object] = {
            "index": row.index,
            "line": row.line,
            "model": row.model,
            "kind": row.kind,
            "tick": row.tick,
        }
        for name in ("cache_read", "cache_write", "uncached"):
            predicted = getattr(row, f"predicted_{name}")
            reported = getattr(row, f"reported_{name}")
            error = relative_error(predicted, reported)
            record[f"predicted_{name}"] = predicted
            record[f"reported_{name}"] = reported
            record[f"{name}_error"] = predicted - reported
            record[f"{name}_error_pct"] = None if error is None else round(error * 100, 2)
        record["predicted_cache_write_1h"] = row.predicted_cache_write_1h
        record["divergence"] = row.divergence
        records.append(record)
    return records


def capture_json(rows: Sequence[CaptureRow]) -> str:
    """``--format json``: an array of one object per request."""
    return json.dumps(capture_records(rows), indent=2)


def _fmt_error(predicted: int, reported: int) -> str:
    error = relative_error(predicted, reported)
    pct = "n/a" if error is None else f"{error * 100:+.1f}%"
    return f"{predicted - reported:+,} ({pct})"


def _fmt_rel(error: float | None) -> str:
    return "n/a" if error is None else f"{error * 100:+.1f}%"


def capture_table(rows: Sequence[CaptureRow]) -> str:
    """Aligned text: predicted vs reported read / write / uncached per request, then the summary."""
    header = ["#", "model", "kind"] + ["read", "reported", "error", "write", "reported", "error"]
    header += ["uncached", "reported", "error"]
    cells = [
        [
            str(row.index),
            row.model,
            row.kind,
            f"{row.predicted_cache_read:,}",
            f"{row.reported_cache_read:,}",
            _fmt_error(row.predicted_cache_read, row.reported_cache_read),
            f"{row.predicted_cache_write:,}",
            f"{row.reported_cache_write:,}",
            _fmt_error(row.predicted_cache_write, row.reported_cache_write),
            f"{row.predicted_uncached:,}",
            f"{row.reported_uncached:,}",
            _fmt_error(row.predicted_uncached, row.reported_uncached),
        ]
        for row in rows
    ]
    right = set(range(len(header))) - {1, 2}  # all but model and kind
    table = text_lines(header, cells, right, footer=())  # closed by a second ruler
    return "\n".join([*table, *summary_lines(capture_summary(rows))])


def summary_lines(summary: CaptureSummary) -> list[str]:
    """The acceptance figures as text lines."""
    share = f"{summary.main_read_share:.1%}" if summary.num_main_after_first else "none to check"
    lines = [
        f"main requests after the first: {summary.num_main_read_within}/{summary.num_main_after_first} "
        f"with cache read within {MAIN_READ_TOLERANCE:.0%} of reported ({share}; "
        f"target >= {MAIN_READ_SHARE:.0%})"
    ]
    for check in summary.compaction_checks:
        lines.append(
            f"{check.role} #{check.index}: cache read {_fmt_rel(check.read_error)}, "
            f"cache write {_fmt_rel(check.write_error)} "
            f"(within {COMPACTION_TOLERANCE:.0%}: read {'yes' if check.read_ok else 'no'}, "
            f"write {'yes' if check.write_ok else 'no'})"
        )
    lines.append(
        f"side calls: {summary.num_side_predicted_uncached}/{summary.num_side} predicted fully uncached, "
        f"{summary.num_side_reported_uncached}/{summary.num_side} reported so"
    )
    return lines
