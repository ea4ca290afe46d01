"""``compare`` reads the audit JSON of every folder of ../shared/realdata that ``audit`` reads:
each compares with itself (exit 0) and fails (exit 1) when one figure worsens past its threshold.

A block-hash trace (agentx-traces, mooncake-conversation) reports no usage: its reported figures
are null, which compare leaves out on both sides, and its totals' and each lane's hit ratio are
the predicted ones, the figures that worsen there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from tests.conftest import AUDITED_FOLDERS


def _audit_json(folder: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["audit", str(folder), "--format", "json", "--quiet"]) == 0
    out.write_text(capsys.readouterr().out)
    return out


@pytest.mark.parametrize("name", AUDITED_FOLDERS)
def test_an_audit_json_compares_with_itself(realdata: Path, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not (realdata / name).is_dir():
        pytest.skip(f"{name} is not in {realdata}")
    audit = _audit_json(realdata / name, tmp_path / "audit.json", capsys)
    assert main(["compare", str(audit), str(audit)]) == 0
    assert "every shared figure is identical" in capsys.readouterr().out


@pytest.mark.parametrize("name", AUDITED_FOLDERS)
def test_a_lane_whose_uncached_input_rises_fails(realdata: Path, name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not (realdata / name).is_dir():
        pytest.skip(f"{name} is not in {realdata}")
    audit = _audit_json(realdata / name, tmp_path / "audit.json", capsys)
    data = json.loads(audit.read_text())
    # the last lane that reports its uncached input (a block-hash trace's is null: it reports none)
    lane = next((lane for lane in reversed(data["lanes"]) if lane["reported_uncached"] is not None), None)
    if lane is None:
        _a_worse_prediction_fails(data, audit, tmp_path, capsys)
        return
    lane["reported_uncached"] = round(lane["reported_uncached"] * 1.10) + 1_000
    new = tmp_path / "new.json"
    new.write_text(json.dumps(data))
    assert main(["compare", str(audit), str(new)]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 1 regression" in out and "reported_uncached" in out


def _predicted_hit(lanes: list[dict]) -> float:
    read = sum(lane["predicted_cache_read"] for lane in lanes)
    return read / sum(lane["predicted_cache_read"] + lane["predicted_cache_write"] + lane["predicted_uncached"] for lane in lanes)


def _a_worse_prediction_fails(data: dict, audit: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An audit of a log none of whose requests reports usage (a block-hash trace), against a copy
    whose prediction reads 2 points less of the prompts: the lane's and the totals' predicted hit
    ratios are the two regressions (the lane's was 0.0 on both sides, taken from reported usage
    alone); the lane's predicted counts are shown, not gated; no reported figure is compared
    (all null)."""
    assert all(lane[f"reported_{name}"] is None for lane in data["lanes"] for name in ("cache_read", "cache_write", "uncached", "output"))
    assert data["totals"]["input"] is None and data["totals"]["cache_read"] is None
    assert data["totals"]["hit_ratio"] == round(_predicted_hit(data["lanes"]), 6)
    assert all(lane["hit_ratio"] == round(_predicted_hit([lane]), 6) for lane in data["lanes"])
    lane = max(data["lanes"], key=lambda lane: lane["predicted_cache_read"])
    whole = sum(lane["predicted_cache_read"] + lane["predicted_cache_write"] + lane["predicted_uncached"] for lane in data["lanes"])
    moved = round(whole * 0.02)
    assert lane["predicted_cache_read"] >= moved, "the largest lane's predicted reads hold 2 points of the prompts"
    lane["predicted_cache_read"] -= moved
    lane["predicted_uncached"] += moved
    lane["hit_ratio"] = round(_predicted_hit([lane]), 6)
    data["totals"]["hit_ratio"] = round(_predicted_hit(data["lanes"]), 6)
    new = tmp_path / "new.json"
    new.write_text(json.dumps(data))
    assert main(["compare", str(audit), str(new)]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 2 regressions" in out and "reported_" not in out
    rows = [line.split() for line in out.splitlines() if "predicted_" in line or "hit_ratio" in line]
    assert [(row[1], "hit_ratio" in row) for row in rows if row[0] == "!"] == [("lane", True), ("totals", True)]
    shown = {word for row in rows if row[0] == "lane" for word in row if word.startswith("predicted_")}
    assert shown == {"predicted_cache_read", "predicted_uncached"} and all(row[-1] == "-" for row in rows if row[0] == "lane")
