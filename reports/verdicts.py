"""The verdicts of ``check`` counted once, for its closing line and report.html's summary alike."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple


class Tally(NamedTuple):
    """The verdicts counted: how many passed and were skipped (vacuous), and the specs that
    failed (sorted, each once)."""

    passed: int
    skipped: int
    failed: int
    failed_specs: tuple[str, ...]

    def line(self, preset: str | None = None) -> str:
        """``34 passed, 2 skipped (vacuous: proves nothing), 1 failed: spec``, after ``preset NAME:``
        where given."""
        line = (f"preset {preset}: " if preset is not None else "") + f"{self.passed} passed, " + (
            f"{self.skipped} skipped (vacuous: proves nothing), " if self.skipped else "") + f"{self.failed} failed"
        return line + (f": {', '.join(self.failed_specs)}" if self.failed_specs else "")


def count_statuses(verdicts: Iterable[tuple[str, str]]) -> Tally:
    """The tally of ``(spec, status)`` pairs, status as check prints it (``PASS``, ``SKIP`` or
    ``FAIL``): the one count the terminal's closing line and report.html's summary are made of."""
    passed = skipped = failed = 0
    failed_specs: set[str] = set()
    for spec, status in verdicts:
        if status == "FAIL":
            failed += 1
            failed_specs.add(spec)
        elif status == "SKIP":
            skipped += 1
        else:
            passed += 1
    return Tally(passed, skipped, failed, tuple(sorted(failed_specs)))
