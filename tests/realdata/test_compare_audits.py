"""``compare`` reads the audit JSON of every folder of ../shared/realdata that ``audit`` reads:
each compares with itself (exit 0) and fails (exit 1) when one figure worsens past its threshold."""

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
        pytest.skip(f"no lane of {name} reports its uncached input (block-hash traces): no figure to worsen")
    lane["reported_uncached"] = round(lane["reported_uncached"] * 1.10) + 1_000
    new = tmp_path / "new.json"
    new.write_text(json.dumps(data))
    assert main(["compare", str(audit), str(new)]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 1 regression" in out and "reported_uncached" in out
