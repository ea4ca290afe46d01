"""``check --out DIR``: the spec verdicts as check.json (one object a spec result) and
report.html."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from prefixbench.reports.verdicts import count_statuses
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.specs.base import SpecResult


def tally(results: Sequence[SpecResult], vacuous_fails: bool = False, preset: str | None = None) -> tuple[list[SpecResult], str]:
    """The failed results and the closing line: ``34 passed, 2 skipped (vacuous), 0 failed``,
    after ``preset NAME:`` when the runs judged were made under a preset (not on ``--trace``,
    whose log says nothing of one): a user engine's spec lines do not name it."""
    failed = [r for r in results if r.failed(vacuous_fails)]
    return failed, count_statuses((r.spec, r.status(vacuous_fails)) for r in results).line(preset)


def check_records(results: Sequence[SpecResult], vacuous_fails: bool = False, trace: bool = False) -> list[dict[str, object]]:
    """One record a spec result: spec, engine, preset, window (or null), verdict, passed,
    status (PASS, SKIP or FAIL, as printed), figure (and workload, profile for a user engine's
    spec; profile for a ``--trace``'s, whose ``preset`` holds the profile too, as it always has)."""
    records: list[dict[str, object]] = []
    for r in results:
        record: dict[str, object] = {
            "spec": r.spec,
            "engine": r.engine,
            "preset": r.preset,
            "window": r.window,
            "verdict": r.verdict.value,
            "passed": r.passed,
            "status": r.status(vacuous_fails),
            "figure": r.figure,
        }
        if r.workload is not None:  # a user engine's spec: the case it judged
            record.update(workload=r.workload, profile=r.profile)
        elif trace:  # (a log's preset is the recording's: the key kept the profile, which "profile" names)
            record["profile"] = r.preset
        records.append(record)
    return records


def warning_lines(runs: Sequence[Run]) -> list[str]:
    """The warning notes (:func:`~prefixbench.reports.warning_notes.warning_notes`) of the runs the specs
    made, each run once: the ``deterministic`` spec runs a case again, and an equal run (same
    key, same warnings) is the same run, not a second one."""
    from prefixbench.reports.warning_notes import warning_notes
    from prefixbench.workloads.runs.schema import engine_warnings

    records = {}
    for r in runs:
        record = {"workload": r.workload, "window": r.window, "engine": r.engine, "preset": r.preset, "profile": r.profile,
                  "cache": r.cache, "seed": r.seed, "engine_warnings": engine_warnings(r),
                  "longest_idle_ms": r.longest_idle_ms}
        records.setdefault(tuple(record.values()), record)
    return warning_notes(records.values())


def write_check(out: Path, preset: str | None, results: Sequence[SpecResult], vacuous_fails: bool = False,
                notes: Sequence[str] = ()) -> None:
    """Write check.json and report.html into ``out`` (``preset`` None: a ``--trace``, which has none).
    ``notes``: the engines' warning notes, as ``notes`` in check.json (left out when none)."""
    from prefixbench.reports.html_pages import check_page, write_html

    out.mkdir(parents=True, exist_ok=True)
    records = check_records(results, vacuous_fails, trace=preset is None)
    document: dict[str, object] = {"preset": preset, "results": records}
    if notes:
        document["notes"] = list(notes)
    (out / "check.json").write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    write_html(out / "report.html", check_page(preset, records))
