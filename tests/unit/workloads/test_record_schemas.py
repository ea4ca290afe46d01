"""The run and audit schemas are the one declaration of their records: the writers write exactly
the declared fields, compare gates exactly the figures the schemas gate, and report.html reads
no audit or run field the schemas do not declare."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest

from prefixbench.reports.cost import COST_PARTS
from prefixbench.workloads.audit.schema import CAUSE_FIELDS, LANE_FIELDS, REQUESTS_SHOWN_FIELDS, SECTIONS, TOTALS_FIELDS
from prefixbench.workloads.fields import Field, Gate, names
from prefixbench.workloads.runs.compare import THRESHOLD_HELP, Result, Thresholds, Unit, compare, figure_gate
from prefixbench.workloads.runs.schema import (
    COST_COLUMNS,
    OBSERVATION_FIELDS,
    RUN_COLUMNS,
    RUN_FIELDS,
    RUN_FIGURE_ORDER,
    RUN_KEYS,
    observation_records,
    run_record,
)

ROOT = Path(__file__).resolve().parents[3]


def test_every_threshold_is_a_gate_and_every_gate_a_threshold() -> None:
    assert set(THRESHOLD_HELP) == set(get_args(Gate))


def test_the_run_keys_include_the_seed_and_compare_lists_every_run_figure() -> None:
    assert RUN_KEYS[-1] == "seed"
    declared = {f.name for f in RUN_FIELDS if f.role == "figure"} | {"total_usd"}
    assert set(RUN_FIGURE_ORDER) == declared and len(RUN_FIGURE_ORDER) == len(declared)
    assert COST_COLUMNS == (*(f"{p}_usd" for p in COST_PARTS), "total_usd")


def test_the_gates_are_the_ones_compare_applied() -> None:
    """What substrings of each name decided before the gates were declared, for every figure
    prefixbench writes (the verdicts on its files stay the same)."""
    run = {"summary_hit_min": "hit", "summary_uncached_tokens": "uncached", "session_uncached_tokens": "uncached",
           "session_written_tokens": "written", "num_rejected": "rejected", "total_usd": "usd"}
    for name in ("session_prompt_tokens", "session_cached_tokens", "num_folds"):
        run[name] = None
    assert {name: figure_gate("run", name) for name in run} == run
    lane = {f.name: f.gate for f in LANE_FIELDS if f.role == "figure"}
    assert {k: v for k, v in lane.items() if v} == {
        "reported_cache_write": "written", "reported_uncached": "uncached", "hit_ratio": "hit", "cost_usd": "usd", "lost_usd": "usd"
    }
    totals = {f.name: f.gate for f in TOTALS_FIELDS if f.gate}
    assert totals == {"input": "uncached", "cache_write": "written", "cache_write_1h": "written", "cost_usd": "usd",
                      "lost_usd": "usd", "hit_ratio": "hit"}
    assert all(f.gate is None for f in CAUSE_FIELDS)
    assert all((f.worse == "drop") == (f.gate == "hit") for f in (*RUN_FIELDS, *LANE_FIELDS, *TOTALS_FIELDS))


def test_a_name_alone_gates_nothing() -> None:
    """A figure the schema does not declare is shown, never gated, whatever its name says."""
    base = Result("audit", "a", {("lane", "x"): Unit("lane", "x", {"uncached_hit_usd": 1.0, "reported_uncached": 100.0})})
    new = Result("audit", "b", {("lane", "x"): Unit("lane", "x", {"uncached_hit_usd": 9.0, "reported_uncached": 100.0})})
    result = compare(base, new, Thresholds.parse("uncached=0%,hit=0pt,usd=0%,written=0%"))
    assert not result.failed and figure_gate("lane", "uncached_hit_usd") is None


def test_a_hit_figure_regresses_when_it_drops() -> None:
    base = Result("sweep", "a", {("run", "r"): Unit("run", "r", {"summary_hit_min": 0.99})})
    new = Result("sweep", "b", {("run", "r"): Unit("run", "r", {"summary_hit_min": 0.98})})
    assert compare(base, new, Thresholds.parse("hit=0.5pt")).failed
    assert not compare(new, base, Thresholds.parse("hit=0.5pt")).failed


def test_a_field_is_gated_only_as_a_figure() -> None:
    with pytest.raises(ValueError, match="only a figure"):
        Field("x", "int", "info", gate="usd")
    with pytest.raises(ValueError, match="needs a reduce"):
        Field("x", "ints", "figure")


def test_the_run_writers_write_the_declared_columns() -> None:
    from prefixbench.workloads.runs.sweep import SweepSpec, execute_planned, plan_sweep

    (run,) = [execute_planned(item) for item in plan_sweep(SweepSpec(windows=(32_000,), presets=("patched",), options={"steps": 40})).runs]
    assert tuple(run_record(run)) == RUN_COLUMNS
    assert all(tuple(rec) == names(OBSERVATION_FIELDS) for rec in observation_records(run))


def _string_subscripts(path: Path) -> set[str]:
    keys: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            keys.add(node.slice.value)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            keys.add(node.args[0].value)
    return keys


def test_report_html_reads_only_declared_fields() -> None:
    """Every ``record["name"]`` report.html reads of a run or an audit is a field of a schema (or a
    column the sweep's JSON output adds: dollars against legacy, what-if)."""
    declared = {f.name for fields in SECTIONS.values() for f in fields} | set(RUN_COLUMNS) | set(COST_COLUMNS)
    declared |= set(SECTIONS) | {"notes", "what_if"} | {"requests_shown", *names(REQUESTS_SHOWN_FIELDS)}
    added_by_sweep_json = {"uncached_change_vs_legacy", "legacy_rejected", "compaction_usd", "saving_vs_legacy_usd", "saving_vs_legacy_pct"}
    what_if = {"fix", "applies", "saved_usd", "requests_changed", "tokens_to_read", "assumption", "detail", "lanes", "note", "needs_bodies"}
    check = {"spec", "passed", "verdict", "status", "figure"}
    colours = {"summary", "refill", "growth"}  # PART_COLOURS, not a record
    read = _string_subscripts(ROOT / "reports" / "html_pages.py")
    assert read - declared - added_by_sweep_json - what_if - check - colours == set()
