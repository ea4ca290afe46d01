"""check's closing line and report.html's summary count the verdicts with one function
(:func:`~prefixbench.reports.verdicts.count_statuses`): before, the page counted its records
by hand beside the terminal's :func:`~prefixbench.reports.check_report.tally`, so a change to one
count (what a vacuous result is, how failed specs are named) could leave the other behind."""

from __future__ import annotations

import re

import pytest

from prefixbench.reports.check_report import check_records, tally
from prefixbench.reports.html_pages import check_page
from prefixbench.reports.verdicts import count_statuses
from prefixbench.workloads.specs.base import SpecResult, Verdict


def _results() -> list[SpecResult]:
    # Two windows of a failing spec (named once), a vacuous one, and two passes.
    return [
        SpecResult("summary-hits", Verdict.PASS, "99.4% read", "patched", 32_000),
        SpecResult("summary-hits", Verdict.PASS, "99.5% read", "patched", 128_000),
        SpecResult("rewrites-pay-back", Verdict.VIOLATED, "1 of 2 never paid back", "patched", 32_000),
        SpecResult("rewrites-pay-back", Verdict.VIOLATED, "2 of 2 never paid back", "patched", 128_000),
        SpecResult("no-400", Verdict.VACUOUS, "no strict request sent", "patched", None),
    ]


@pytest.mark.parametrize("vacuous_fails", [False, True])
def test_the_pages_summary_is_the_terminals_closing_line(vacuous_fails: bool) -> None:
    results = _results()
    # (under a preset, as check runs: the terminal says "preset patched: ...", and so must the page)
    failed, line = tally(results, vacuous_fails, preset="patched")
    page = check_page("patched", check_records(results, vacuous_fails))
    summary = re.search(r'<p data-field="summary" data-passed="(\d+)" data-skipped="(\d+)" data-failed="(\d+)"><b>([^<]*)</b>', page)
    assert summary is not None
    assert summary.group(4) == line
    assert (int(summary.group(1)), int(summary.group(2)), int(summary.group(3))) == (
        2, 0 if vacuous_fails else 1, len(failed))
    assert line == ("preset patched: 2 passed, 3 failed: no-400, rewrites-pay-back" if vacuous_fails
                    else "preset patched: 2 passed, 1 skipped (vacuous: proves nothing), 2 failed: rewrites-pay-back")
    # A recorded log (--trace) names no preset: neither does the page.
    traced = re.search(r'data-field="summary"[^>]*><b>([^<]*)</b>', check_page(None, check_records(results, vacuous_fails)))
    assert traced is not None and traced.group(1) == tally(results, vacuous_fails)[1] and "preset" not in traced.group(1)


def test_the_count_names_each_failed_spec_once_and_the_preset_where_given() -> None:
    counted = count_statuses([("a", "FAIL"), ("b", "PASS"), ("a", "FAIL"), ("c", "SKIP")])
    assert counted.line("legacy") == "preset legacy: 1 passed, 1 skipped (vacuous: proves nothing), 2 failed: a"
    assert count_statuses([]).line() == "0 passed, 0 failed"
