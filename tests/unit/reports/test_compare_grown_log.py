"""compare of an audit of a log that grew (the same lane with more requests, as a CI job auditing a
growing home sees on every run): tokens and dollars are judged per request where a unit's request
counts differ, so growth alone is no regression and a rise per request still is; the output says
when counts differ, and ``--per-request off`` judges the figures as they are."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.reports.cli import main
from prefixbench.workloads.runs.compare import Thresholds, compare, result_from_json


def _audit(requests: int, uncached: int, cost: float, lost: float, hit: float) -> dict:
    lane = {"file": "rollout.jsonl", "lane": "main", "requests": requests, "reported_cache_read": 1_000_000,
            "reported_uncached": uncached, "cost_usd": cost, "lost_usd": lost, "hit_ratio": hit}
    totals = {"requests": requests, "input": uncached, "output": 9_000, "cache_read": 1_000_000, "cost_usd": cost,
              "lost_usd": lost, "hit_ratio": hit}
    return {"schema": 6, "requests": [], "lanes": [lane], "causes": [], "totals": totals}


#: The lane cut after 18 of its 27 requests, then whole (the figures of unitree-A1's grown rollout:
#: +50% requests, uncached +11%, cost +41.5%, lost +50%, hit up 2.1 points).
SHORT = _audit(18, 73_299, 0.5802, 0.002304, 0.932)
GROWN = _audit(27, 81_388, 0.8209, 0.003456, 0.953)


def _write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_a_log_that_grew_passes_and_says_its_figures_are_per_request(tmp_path: Path, capsys) -> None:
    base, new = _write(tmp_path / "base.json", SHORT), _write(tmp_path / "new.json", GROWN)
    assert main(["compare", str(base), str(new)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PASS: no figure crossed its threshold")
    assert ("note: totals: NEW has 50.0% more requests (18 in BASE, 27 in NEW): its tokens and dollars compared per "
            "request (--per-request off compares them as they are)") in out
    assert "note: lane rollout.jsonl main: NEW has 50.0% more requests" in out
    lost = next(line for line in out.splitlines() if line.split()[:1] == ["totals"] and "lost_usd" in line)
    assert "+50.0% (+0.0% per request)" in lost and "usd=5%" in lost
    cost = next(line for line in out.splitlines() if line.split()[:1] == ["totals"] and "cost_usd" in line)
    assert "+41.5% (-5.7% per request)" in cost
    # As they are, the growth fails as it did.
    assert main(["compare", str(base), str(new), "--per-request", "off"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL: 6 regressions") and "per request" not in out
    assert main(["compare", str(base), str(new), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and any("NEW has 50.0% more requests" in n for n in report["notes"])
    cost = next(c for c in report["changes"] if c["group"] == "totals" and c["figure"] == "cost_usd")
    assert abs(cost["relative_per_request"] + 0.0567) < 0.001 and abs(cost["new_per_base_requests"] - 0.8209 * 18 / 27) < 1e-9
    assert cost["relative"] > 0.41 and not cost["regressed"]


def test_a_rise_per_request_still_fails_and_equal_counts_are_judged_as_they_are() -> None:
    # Twice the requests and three times the dollars lost: +50% per request, a regression.
    worse = _audit(36, 146_598, 1.1604, 0.006912, 0.932)
    comparison = compare(result_from_json(SHORT, "base"), result_from_json(worse, "new"), Thresholds.parse("usd=5%"))
    lost = [c for c in comparison.regressions if c.figure == "lost_usd"]
    assert lost and all(c.per_request == 0.5 and abs(c.relative_per_request - 0.5) < 1e-9 for c in lost)
    assert not [c for c in comparison.regressions if c.figure in ("cost_usd", "reported_uncached", "input")]
    # A fewer-requests NEW says so too.
    back = compare(result_from_json(GROWN, "base"), result_from_json(SHORT, "new"), Thresholds.parse("usd=5%"))
    assert any("NEW has 33.3% fewer requests (27 in BASE, 18 in NEW)" in n for n in back.notes)
    # The same counts: no note, nothing per request (the change an audit of the same logs shows).
    same = compare(result_from_json(SHORT, "base"), result_from_json(_audit(18, 80_000, 0.7, 0.003, 0.93), "new"),
                   Thresholds.parse("usd=5%"))
    assert not same.notes and all(c.per_request is None for c in same.changes)
    assert {c.figure for c in same.regressions} >= {"cost_usd", "lost_usd"}


def test_an_unchanged_per_request_figure_is_exactly_unchanged(tmp_path: Path, capsys) -> None:
    """lost_usd 0.002304 over 18 requests, then 0.003456 over 27: the same per request. In floats
    0.003456 * (18 / 27) is not 0.002304, and the JSON said ``relative_per_request:
    -1.88e-16``; and ``usd=0%`` must not read that noise as a change either way."""
    base, new = _write(tmp_path / "base.json", SHORT), _write(tmp_path / "new.json", GROWN)
    assert main(["compare", str(base), str(new), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    lost = [c for c in report["changes"] if c["figure"] == "lost_usd"]
    assert len(lost) == 2 and all(c["relative_per_request"] == 0 and c["new_per_base_requests"] == 0.002304 for c in lost)
    # A grown NEW whose per-request figure is up by one part in ten thousand still shows it.
    up = _audit(27, 81_388, 0.8209, 0.0034563456, 0.953)
    comparison = compare(result_from_json(SHORT, "base"), result_from_json(up, "new"), Thresholds.parse("usd=0%"))
    lost = [c for c in comparison.changes if c.figure == "lost_usd"]
    assert len(lost) == 2 and all(c.regressed and abs(c.relative_per_request - 1e-4) < 1e-9 for c in lost)
    same = compare(result_from_json(SHORT, "base"), result_from_json(GROWN, "new"), Thresholds.parse("usd=0%"))
    assert all(not c.regressed and c.relative_per_request == 0 for c in same.changes if c.figure == "lost_usd")


def test_an_unchanged_figure_over_fewer_requests_is_shown_where_it_regressed(tmp_path: Path, capsys) -> None:
    # review62c: the same figures over 18 requests where BASE had 27 are +50% per request, six
    # regressions; the table said "FAIL: 6 regressions" and listed none of them (an unchanged
    # figure was left out as unchanged), and Markdown's change column read "=".
    fewer = _audit(18, 81_388, 0.8209, 0.003456, 0.953)
    base, new = _write(tmp_path / "base.json", GROWN), _write(tmp_path / "new.json", fewer)
    assert main(["compare", str(base), str(new)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL: 6 regressions")
    lost = next(line for line in out.splitlines() if "totals" in line.split()[:2] and "lost_usd" in line)
    assert "= (+50.0% per request)" in lost and lost.startswith("!")
    assert main(["compare", str(base), str(new), "--format", "md"]) == 1
    md = capsys.readouterr().out
    assert "= (+50.0% per request)" in md and "| = |" not in md


def test_a_request_count_that_is_no_whole_number_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    # review62c: 0.5 requests read as "98.1% fewer requests (27 in BASE, 0 in NEW)", -5 judged as it was.
    base = _write(tmp_path / "base.json", GROWN)
    for bad in (0.5, -5):
        new = _write(tmp_path / "new.json", _audit(27, 81_388, 0.8209, 0.003456, 0.953) | {"totals": {**GROWN["totals"], "requests": bad}})
        assert main(["compare", str(base), str(new)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "'requests' is" in err[0] and "expected a whole number of requests (0 or more)" in err[0], err
