"""A row none of whose requests reports its cache use (chat-completions usage with no cached-tokens
field, an OTel span without cache attributes) lost an unknown amount, not $0: ``-`` in every
table and in Markdown, null in JSON (every group, the totals, the loss split and each request),
empty in audit.csv, ``-`` on the report page; a row mixing requests that report with requests
that do not sums those that report and a legend line says so. ``compare`` reads such a null as
``not reported``, never as a drop to 0 and never gated. The base printed ``lost $0`` and wrote
``"lost_usd": 0.0`` for every one of them (the headline alone said unknown)."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from decimal import Decimal
from pathlib import Path

from prefixbench.reports.audit import audit_csv, audit_html, audit_json, audit_markdown, audit_table
from prefixbench.reports.auditwords import LOSS_NOT_SEEN
from prefixbench.reports.compare import compare_text
from prefixbench.workloads.audit.core import loss_seen, run_audit
from prefixbench.workloads.audit.schema import READ_SCHEMAS, SCHEMA_VERSION
from prefixbench.workloads.runs.compare import Thresholds, compare, result_from_json

from .fixtures import write_jsonl
from .test_provider_usage import _call

URL = "https://api.openai.com/v1/chat/completions"


def _plain(prompt: int) -> dict:
    """A chat-completions usage with no cache field at all."""
    return {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20}


def _unseen_log(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "plain.jsonl", [_call(n, URL, "gpt-4o", _plain(1_300 + 10 * n)) for n in range(3)])


def _mixed_log(tmp_path: Path) -> Path:
    """One session: a call with no cache field, then two that report theirs (the second reads
    nothing of the prefix the first wrote: a miss with dollars)."""
    reported = {"prompt_tokens": 1_310, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 0}}
    calls = [_call(0, URL, "gpt-4o", _plain(1_300)), _call(1, URL, "gpt-4o", reported), _call(2, URL, "gpt-4o", reported)]
    return write_jsonl(tmp_path / "mixed.jsonl", calls)


def _section(text: str, title: str) -> list[str]:
    return text.split(f"\n{title}\n", 1)[1].split("\n\n", 1)[0].splitlines()


def _column(lines: list[str], name: str) -> list[str]:
    header = re.split(r"\s{2,}", lines[0].strip())
    rows = [re.split(r"\s{2,}", line.strip()) for line in lines[2:]]
    return [cells[header.index(name)] for cells in rows if len(cells) == len(header)]  # (not the legend lines)


def test_no_request_reports_its_cache_use(tmp_path: Path) -> None:
    result = run_audit([_unseen_log(tmp_path)])
    assert all(row.reported_cache_read is None and not loss_seen(row) for row in result.rows)
    assert all(row.cost_usd is not None and row.lost_usd is None for row in result.rows)  # priced; the loss unknown
    text = audit_table(result)
    for title in ("per session (the agent's: its main lane, subagents and compactions, in one log file or several)", "per day (UTC)",
                  "lanes: reported vs predicted", "models"):
        lines = _section(text, title)
        assert set(_column(lines, "lost")) == {"-"}, title  # the base said $0
        assert LOSS_NOT_SEEN in lines or title.startswith("per session"), title  # (one legend under both roll-ups)
    assert set(_column(_section(text, "calibration per file: predicted read against reported read"), "lost")) == {"-"}
    assert "lost to misses unknown (no request reports its cache use" in text
    md = audit_markdown(result)
    assert set(_column(_section(md, "models"), "lost")) == {"-"}


def test_the_json_the_csv_and_the_page_say_unknown(tmp_path: Path) -> None:
    result = run_audit([_unseen_log(tmp_path)])
    record = json.loads(audit_json(result))
    assert record["schema"] == SCHEMA_VERSION == 6
    for section in ("models", "lanes", "sessions", "days", "files"):
        assert [(g["lost_usd"], g["unseen_requests"]) for g in record[section]] == [(None, g["requests"]) for g in record[section]], section
        assert all(g["cost_usd"] is not None for g in record[section])  # what was paid is known
    assert (record["totals"]["lost_usd"], record["totals"]["unseen_requests"]) == (None, 3)
    split = record["loss_split"]
    assert [split[k] for k in ("lost_usd", "recoverable_usd", "unavoidable_usd", "unknown_usd")] == [None] * 4
    assert [r["lost_usd"] for r in record["requests"]] == [None] * 3
    assert [r["lost_usd"] for r in csv.DictReader(io.StringIO(audit_csv(result)))] == [""] * 3
    page = audit_html(result)
    assert html.escape(LOSS_NOT_SEEN) in page
    assert 'data-field="lost_usd" data-value="">-<' in page and 'data-field="lost_usd" data-value="0' not in page


def test_a_mixed_row_sums_the_requests_that_report(tmp_path: Path) -> None:
    result = run_audit([_mixed_log(tmp_path)])
    told = [row for row in result.rows if loss_seen(row)]
    assert len(told) == 2 and len(result.rows) == 3
    lost = sum((row.lost_usd for row in told), Decimal(0))
    session = result.sessions[0]
    assert (session.unseen_requests, session.lost_usd) == (1, lost)
    record = json.loads(audit_json(result))
    assert record["sessions"][0]["lost_usd"] == float(lost) and record["sessions"][0]["unseen_requests"] == 1
    assert record["models"][0]["lost_usd"] == float(lost)
    lines = _section(audit_table(result), "models")
    assert lost > 0 and _column(lines, "lost") != ["-"]
    assert LOSS_NOT_SEEN in lines  # a row that sums some of its requests says so


def test_a_request_body_logs_predicted_loss_stays_a_figure() -> None:
    """No usage, a logged body: the loss is the cache model's prediction (labelled predicted), seen."""
    from prefixbench.workloads.audit.core import AuditRow

    fields = dict.fromkeys(AuditRow.__struct_fields__)
    fields.update(reported_cache_read=None, reported_uncached=None, predicted_by="body")
    assert loss_seen(AuditRow(**fields))
    fields.update(predicted_by="blocks")  # a block-hash trace's: no loss is predicted for it
    assert not loss_seen(AuditRow(**fields))
    fields.update(reported_uncached=900, predicted_by="body")  # usage with no cache field
    assert not loss_seen(AuditRow(**fields))


def _lane(lost: float | None, read: int | None, tokens: int | None) -> dict:
    return {"file": "plain.jsonl", "lane": "main", "requests": 3, "reported_cache_read": read, "cost_usd": 0.01,
            "lost_usd": lost, "lost_tokens": tokens, "hit_ratio": None, "unpriced_requests": 0}


def _audit(schema: int, lane: dict) -> dict:
    totals = {"requests": 3, "cache_read": lane["reported_cache_read"], "cost_usd": 0.01, "lost_usd": lane["lost_usd"],
              "hit_ratio": None, "unpriced_requests": 0}
    return {"schema": schema, "lanes": [lane], "causes": [], "totals": totals}


def test_compare_reads_an_unknown_loss_as_not_reported_never_gated() -> None:
    assert READ_SCHEMAS == (1, 2, 3, 4, 5, 6)
    known = _audit(3, _lane(0.25, 1_000, 900))
    unseen = _audit(3, _lane(None, None, None))
    comparison = compare(result_from_json(known, "base"), result_from_json(unseen, "new"), Thresholds.parse("usd=0%"))
    lost = [c for c in comparison.changes if c.figure == "lost_usd"]
    assert [(c.group, c.base, c.new, c.unreported, c.regressed) for c in lost] == [
        ("lane", 0.25, None, "NEW", False), ("totals", 0.25, None, "NEW", False)]
    assert not comparison.failed
    assert "not reported in NEW" in compare_text(comparison)
    # An audit saved as schema 2 wrote 0.0 there: read as not reported too, so nothing to compare.
    old = _audit(2, _lane(0.0, None, None))
    again = compare(result_from_json(old, "base"), result_from_json(unseen, "new"), Thresholds.parse("usd=0%"))
    assert not [c for c in again.changes if c.figure == "lost_usd"]
    # A reported 0.0 of schema 2 stays a figure.
    reported = result_from_json(_audit(2, _lane(0.0, 1_000, 0)), "old")
    assert reported.units[("lane", "plain.jsonl main")].figures["lost_usd"] == 0.0


def test_the_lost_dollars_gate_fails_a_log_none_of_whose_misses_could_be_seen(tmp_path: Path, capsys) -> None:
    """``--max-lost-usd`` passed a log whose requests report no cache use (a $0 it never saw),
    with a warning, while ``--min-hit-ratio`` failed the same log: both fail it now, saying why."""
    from prefixbench.reports.cli import main

    assert main(["audit", str(_unseen_log(tmp_path)), "--quiet", "--max-lost-usd", "0"]) == 1
    out, err = capsys.readouterr()
    assert "FAIL no loss (no request reports its cache use, so no miss could be seen) to hold to --max-lost-usd $0" in out + err
    assert "warning" not in err


def test_the_lost_dollars_gate_warns_on_a_mixed_log(tmp_path: Path, capsys) -> None:
    from prefixbench.reports.cli import main

    main(["audit", str(_mixed_log(tmp_path)), "--quiet", "--max-lost-usd", "100"])
    out, err = capsys.readouterr()
    assert "--max-lost-usd judged the requests that report their cache use only:" in err
    assert "FAIL no loss" not in out + err
