"""A row whose requests give no write count (an OpenAI-shaped usage: cached tokens only) shows its
writes as not reported in every table and output form (``-`` in the tables and Markdown, null in
JSON, empty in CSV), as the totals do; a row mixing requests that give one with requests that do
not sums those that give one. The base showed 0 in each of them for a Codex row."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from prefixbench.reports.audit import audit_csv, audit_html, audit_json, audit_markdown, audit_table
from prefixbench.workloads.audit.core import run_audit
from tests.unit.audit.test_provider_usage import _audit as _providers_audit

CODEX = Path(__file__).parents[1] / "logs" / "fixtures" / "codex.jsonl"


def _section(text: str, title: str) -> list[str]:
    """The lines of one table of the audit's text (its header, ruler and rows, its notes)."""
    return text.split(f"\n{title}\n", 1)[1].split("\n\n", 1)[0].splitlines()


def _cells(line: str) -> list[str]:
    return re.split(r"\s{2,}", line.strip())


def test_a_codex_rows_writes_read_not_reported_in_the_lanes_and_models_tables() -> None:
    text = audit_table(run_audit([CODEX]))
    lanes = _section(text, "lanes: reported vs predicted")
    header, row = _cells(lanes[0]), _cells(lanes[2])
    assert row[header.index("write")] == "-"  # the base said 0
    assert any(line.startswith("write -: cache write not reported") for line in lanes)
    models = _section(text, "models")
    header, row = _cells(models[0]), _cells(models[2])
    assert row[0] == "openai" and row[header.index("cache write")] == "-"
    assert row[header.index("cache read")] == "4,096"  # the read it does report stands
    assert any(line.startswith("write -: cache write not reported") for line in models)


def test_the_markdown_says_the_same() -> None:
    md = audit_markdown(run_audit([CODEX]))
    models = _section(md, "models")
    header, row = _cells(models[0]), _cells(models[2])
    assert row[header.index("cache write")] == "-"
    lanes = _section(md, "lanes: reported vs predicted")
    assert _cells(lanes[2])[_cells(lanes[0]).index("write")] == "-"


def test_the_json_writes_null_for_every_row_and_request() -> None:
    record = json.loads(audit_json(run_audit([CODEX])))
    assert [lane["reported_cache_write"] for lane in record["lanes"]] == [None]
    assert [m["cache_write"] for m in record["models"]] == [None]
    assert [s["cache_write"] for s in record["sessions"]] == [None]
    assert [d["cache_write"] for d in record["days"]] == [None]
    assert [(r["reported_cache_write"], r["reported_cache_write_1h"]) for r in record["requests"]] == [(None, None)]
    # What is reported stays a figure.
    assert record["lanes"][0]["reported_cache_read"] == 4096 and record["sessions"][0]["cache_read"] == 4096


def test_the_csv_leaves_the_write_cells_empty() -> None:
    rows = list(csv.DictReader(io.StringIO(audit_csv(run_audit([CODEX])))))
    assert [(r["reported_cache_write"], r["reported_cache_write_1h"], r["reported_cache_read"]) for r in rows] == [("", "", "4096")]


def test_the_report_pages_bar_tip_says_not_reported() -> None:
    page = audit_html(run_audit([CODEX]))
    assert "write not reported · uncached 904" in page
    assert "write 0 (1 h 0)" not in page


def test_an_anthropic_row_still_shows_its_zero_writes(tmp_path: Path) -> None:
    """An Anthropic-shaped usage has a write field: its 0 is a count, and stays one."""
    from tests.unit.audit.test_rollups import _two_sessions

    record = json.loads(audit_json(run_audit([_two_sessions(tmp_path)])))
    assert all(r["reported_cache_write"] is not None for r in record["requests"] if r["reported_cache_read"] is not None)
    assert all(lane["reported_cache_write"] is not None for lane in record["lanes"])
    assert all(m["cache_write"] is not None for m in record["models"])


def test_a_row_mixing_writers_sums_the_writes_of_those_that_give_a_count(tmp_path: Path) -> None:
    """Qwen's chat usage gives a write count where it wrote (1,200) and none on its next call (no
    ``cache_creation_input_tokens``): the model's row is the 1,200, the second request's write None;
    xAI's gives none on either call: its row is not reported. The totals sum the same requests."""
    result = _providers_audit(tmp_path)
    models = {m.model: m for m in result.models}
    assert models["qwen3-coder-plus"].cache_write == 1_200
    assert models["grok-code-fast-1"].cache_write is None
    qwen = [r for r in result.rows if r.model == "qwen3-coder-plus"]
    assert [r.reported_cache_write for r in qwen] == [1_200, None]
    given = [r.reported_cache_write for r in result.rows if r.reported_cache_write is not None]
    assert result.totals.cache_write == sum(given)
    assert sum(lane.reported_cache_write or 0 for lane in result.lanes) == sum(given)
    assert sum(d.cache_write or 0 for d in result.days) == sum(given)


def test_a_what_if_change_of_a_codex_request_says_its_write_is_not_reported(tmp_path: Path) -> None:
    """The what-if's per-request changes carry the reported write: null for a Codex call that
    logs none (its 0 is no count), the count for one that logs its writes (GPT-5.6 on)."""
    from prefixbench.workloads.audit.core import load_trace
    from prefixbench.workloads.audit.whatif import what_if
    from tests.unit.audit.test_openai_retention import rollout, written_rollout

    requests, summaries = load_trace([rollout(tmp_path / "r.jsonl", "gpt-5.1", "2026-05-20", 20, 0)])
    (longer,) = what_if(list(requests), list(summaries), ["ttl-1h"])
    (change,) = longer.changes
    assert change.reported_write is None and change.to_json()["reported_cache_write"] is None  # the base said 0
    requests, summaries = load_trace([written_rollout(tmp_path / "w.jsonl", "gpt-6.2-sol", 40)])
    (longer,) = what_if(list(requests), list(summaries), ["ttl-1h"])
    assert sorted((c.index, c.reported_write) for c in longer.changes) == [(0, 20_000), (1, 21_000)]


def test_the_never_read_words_claim_no_write_the_log_did_not_count() -> None:
    """Where nothing was read, the opening said the requests 'read or wrote' nothing: of an
    OpenAI-shaped log, whose writes are not reported (None), it says only what it saw."""
    from prefixbench.reports.advice import never_read_words

    words = never_read_words(2, 0, None, False, 2_000)
    assert "read anything from it (their writes are not reported)" in words and "wrote" not in words
    assert "read or wrote anything in it" in never_read_words(2, 0, 0, False, 2_000)  # a write count of 0 is one
