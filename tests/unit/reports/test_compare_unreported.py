"""compare with writes an audit does not report (null: an OpenAI-shaped lane's, or the totals' of a
Codex log alone): no crash, never read as 0, shown as ``not reported`` where one side says so,
never gated; where both say so there is nothing to compare."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prefixbench.reports.cli import main
from prefixbench.reports.compare import compare_markdown, compare_text
from prefixbench.workloads.runs.compare import Thresholds, compare, load_baseline, result_from_json, save_baseline

#: A Codex lane as the audit writes it now (writes null), and the totals of that log alone.
NEW = {
    "schema": 1,
    "requests": [],
    "lanes": [{"file": "rollout.jsonl", "lane": "main", "requests": 39, "reported_cache_read": 1_027_328,
               "reported_cache_write": None, "reported_uncached": 71_933, "cost_usd": 0.4414, "lost_usd": 0.0397,
               "hit_ratio": 0.935}],
    "causes": [],
    "totals": {"requests": 39, "input": 71_933, "output": 22_305, "cache_read": 1_027_328, "cache_write": None,
               "cache_write_1h": None, "cost_usd": 0.4414, "lost_usd": 0.0397, "hit_ratio": 0.935},
}


def _zeros() -> dict:
    """The same audit as an older release wrote it: 0 where no request gave a write count."""
    old = json.loads(json.dumps(NEW))
    old["lanes"][0]["reported_cache_write"] = 0
    old["totals"].update(cache_write=0, cache_write_1h=0)
    return old


def _write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_null_writes_on_both_sides_compare_as_identical(tmp_path: Path, capsys) -> None:
    new = _write(tmp_path / "new.json", NEW)
    assert main(["compare", str(new), str(new)]) == 0
    assert "every shared figure is identical" in capsys.readouterr().out
    comparison = compare(result_from_json(NEW, "a"), result_from_json(NEW, "b"), Thresholds.parse("written=0%"))
    assert not [c for c in comparison.changes if "write" in c.figure]  # neither reports: nothing to compare


def test_null_writes_on_one_side_read_not_reported_never_0(tmp_path: Path, capsys) -> None:
    old, new = _write(tmp_path / "old.json", _zeros()), _write(tmp_path / "new.json", NEW)
    # A write that was 0 and is now not reported is no regression, even under a 0% limit.
    assert main(["compare", str(old), str(new), "--max-regression", "written=0%"]) == 0
    out = capsys.readouterr().out
    shown = {tuple(line.split()[:2]): re.split(r"\s{2,}", line.strip()) for line in out.splitlines()}
    # unit, figure, base, new, change, limit
    assert shown[("lane", "rollout.jsonl")][2:5] == ["0", "not reported", "not reported in NEW"]
    assert shown[("totals", "cache_write")][2:5] == ["0", "not reported", "not reported in NEW"]
    assert shown[("totals", "cache_write_1h")][2:5] == ["0", "not reported", "not reported in NEW"]
    # The other way round: the baseline said not reported, NEW a 0 (a listed change, not left out as
    # a count only NEW has).
    comparison = compare(result_from_json(NEW, "base"), result_from_json(_zeros(), "new"), Thresholds.parse("written=0%"))
    text = compare_text(comparison)
    assert "not reported in BASE" in text and "only in NEW" not in text
    assert "| not reported | 0 | not reported in BASE |" in compare_markdown(comparison)
    assert main(["compare", str(new), str(old), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    writes = [c for c in report["changes"] if c["figure"] in ("reported_cache_write", "cache_write", "cache_write_1h")]
    assert [(c["base"], c["new"], c["not_reported"], c["regressed"]) for c in writes] == [(None, 0, "BASE", False)] * 3


def test_a_saved_baseline_keeps_what_it_does_not_report(tmp_path: Path) -> None:
    result = result_from_json(NEW, "a.json")
    save_baseline(result, "codex", tmp_path)
    again = load_baseline("codex", tmp_path)
    assert again.units == result.units
    assert again.units[("totals", "totals")].unreported == ("cache_write", "cache_write_1h")
