"""The sweep's progress bar at 80 columns: every figure whole on one line, the last run's name
ellipsized into what room is left."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from prefixbench.reports.progress import SweepProgress


@pytest.mark.parametrize("total, flight", [(200, 2), (12_000, 16)])
def test_the_bar_is_readable_at_80_columns(monkeypatch, total, flight):
    monkeypatch.setenv("COLUMNS", "80")
    with SweepProgress(total, 12, mode="bar", stream=io.StringIO()) as progress:
        progress.set_running(flight)
        progress.finished("seed-coding @128k envelope-fix seed 3, engine default, profile anthropic-sonnet-4-5")
        out = io.StringIO()
        Console(file=out, width=80, color_system=None).print(progress._progress.get_renderable())
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    assert len(lines) == 1 and len(lines[0]) <= 80, lines
    line = lines[0]
    assert line.startswith("sweep ")
    assert f"13/{total}" in line and f"{flight} running" in line and "ETA" in line
    assert "last done: se" in line and line.endswith("…")


def test_run_counts_are_grouped_as_the_other_lines_give_them() -> None:
    # walk34: the bench's own line said "bench of 2,560 runs; running 2560" and the progress
    # line "476/2400 runs done": every count of runs reads with thousands grouped now.
    from prefixbench.reports.progress import SweepProgress

    progress = SweepProgress(2_400, skipped=1_200, command="bench")
    assert progress.line().startswith("prefixbench: bench 1,200/2,400 runs done (1,200 skipped, in store), 0 running")
