"""The progress lines the guide quotes are the lines the commands print."""

from __future__ import annotations

import re
from pathlib import Path

from prefixbench.reports.progress import SweepProgress

ROOT = Path(__file__).resolve().parents[3]

# what ``Progress`` prints when stderr is not a terminal (reports/progress.py)
LINE = re.compile(
    r"prefixbench: (sweep|check|bench|record) [\d,]+/[\d,]+ runs done( \([^)]*\))?, [\d,]+ running, "
    r"\d+(:\d\d)+ elapsed, ETA (-|\d+(:\d\d)+)(, running .+)?"
)
QUOTED = re.compile(r"`(prefixbench: (?:sweep|check|bench|record) [\d,]+/[\d,]+ runs done[^`]*)`")


def quoted_progress_lines() -> list[tuple[str, str]]:
    found = []
    for page in sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md"]):
        text = " ".join(page.read_text(encoding="utf-8").split())  # a quote may wrap across lines
        found += [(page.name, m.group(1)) for m in QUOTED.finditer(text)]
    return found


def test_every_quoted_progress_line_has_the_printed_shape() -> None:
    lines = quoted_progress_lines()
    assert len(lines) >= 2, lines  # sweep.md's and engine-api.md's at least
    wrong = [(page, line) for page, line in lines if not LINE.fullmatch(line)]
    assert not wrong, wrong


def test_the_shape_is_the_one_progress_prints() -> None:
    progress = SweepProgress(6, 1, command="check")
    assert LINE.fullmatch(progress.line()), progress.line()
    progress.started("my_engine:factory 32k-thinking-tools-lenient")
    progress.finished("x")
    assert LINE.fullmatch(progress.line()), progress.line()
    assert LINE.fullmatch(SweepProgress(200, 12).line())
