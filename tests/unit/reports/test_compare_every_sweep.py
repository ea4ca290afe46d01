"""``compare`` reads every sweep prefixbench writes: several seeds (the seed is part of a run's
key), runs without a summary call (``--steps 10``, an engine that never summarizes) and user
engines, from the JSON output and from runs.csv alike. Each compares with itself (exit 0) and
fails (exit 1) when one figure is edited past its threshold."""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import pytest

from prefixbench.reports.cli import main

SWEEPS = {
    "three-seeds": ["--windows", "32k", "--presets", "patched", "--steps", "40", "--seeds", "0-2"],
    "steps-10": ["--windows", "32k", "--steps", "10"],
    "user-engine": ["--windows", "32k", "--presets", "patched", "--steps", "40", "--engine", "tests.user_engines:declared"],
}


@pytest.fixture(scope="module", params=sorted(SWEEPS))
def sweep(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(sweep --format json output, runs.csv)`` of one sweep."""
    root = tmp_path_factory.mktemp(request.param)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["sweep", *SWEEPS[request.param], "--quiet", "--jobs", "1", "--out", str(root / "out"), "--format", "json"]) == 0
    (root / "sweep.json").write_text(buf.getvalue())
    return root / "sweep.json", root / "out" / "runs.csv"


def test_a_sweep_json_compares_with_itself(sweep: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    js, _ = sweep
    assert main(["compare", str(js), str(js)]) == 0
    assert "every shared figure is identical" in capsys.readouterr().out


def test_its_runs_csv_compares_with_itself_and_with_the_json(sweep: tuple[Path, Path]) -> None:
    js, runs_csv = sweep
    assert main(["compare", str(runs_csv), str(runs_csv)]) == 0
    assert main(["compare", str(runs_csv), str(js)]) == 0


def test_a_session_uncached_rise_in_the_last_run_of_the_json_fails(sweep: tuple[Path, Path], tmp_path: Path) -> None:
    js, _ = sweep
    runs = json.loads(js.read_text())
    runs[-1]["session_uncached_tokens"] = round(runs[-1]["session_uncached_tokens"] * 1.10)
    new = tmp_path / "new.json"
    new.write_text(json.dumps(runs))
    assert main(["compare", str(js), str(new)]) == 1


def test_a_session_uncached_rise_in_the_last_row_of_runs_csv_fails(sweep: tuple[Path, Path], tmp_path: Path) -> None:
    _, runs_csv = sweep
    rows = list(csv.DictReader(runs_csv.read_text().splitlines()))
    rows[-1]["session_uncached_tokens"] = str(round(int(rows[-1]["session_uncached_tokens"]) * 1.10))
    new = tmp_path / "runs.csv"
    with new.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    assert main(["compare", str(runs_csv), str(new)]) == 1


def test_the_seeds_are_told_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two seeds of one configuration are two runs; a regression names its seed."""
    js = tmp_path / "seeds.json"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["sweep", *SWEEPS["three-seeds"], "--quiet", "--jobs", "1", "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    js.write_text(buf.getvalue())
    runs = json.loads(js.read_text())
    assert [r["seed"] for r in runs] == [0, 1, 2]
    runs[1]["session_uncached_tokens"] *= 2
    new = tmp_path / "new.json"
    new.write_text(json.dumps(runs))
    capsys.readouterr()
    assert main(["compare", str(js), str(new)]) == 1
    out = capsys.readouterr().out
    assert "FAIL: 1 regression" in out and "seed=1" in out
