"""Comments and docstrings cite only what a reader of the repository can open.

The seeds are cited by name ("seed 003"), files by their path in the repository, providers by
their public pages. Notes that live outside the repository (the team's reference sheets, issue
numbers) are not citations a reader can follow, so they are refused; an ADR or decision number
(ADR 0256, D677) is allowed only in a file that names the seed that states it.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simulator", "kernel", "workloads", "reports")

#: References to documents a reader of the repository cannot open.
#: (``docs/providers.md``, a page of this repository, a file name in a string, and a provider's
#: page whose URL holds ``api-reference/`` are not such.)
OUTSIDE = re.compile(
    r"(?<![/\"'])\b(?:providers|engines|logs|DESIGN)\.md\b|(?<!-)\breference/|\bissue \d+|\bissues? #\d+", re.IGNORECASE
)
DECISION = re.compile(r"\bADR \d+|\bD\d{3}\b")
SEED = re.compile(r"\bseed 00\d\b", re.IGNORECASE)


def uncitable(text: str) -> list[str]:
    """The lines of ``text`` that cite what the repository does not hold, as ``line: text``."""
    lines = text.splitlines()
    found = [f"{i}: {line.strip()}" for i, line in enumerate(lines, 1) if OUTSIDE.search(line)]
    if not SEED.search(text):
        found += [f"{i}: {line.strip()} (no seed named)" for i, line in enumerate(lines, 1) if DECISION.search(line)]
    return sorted(found, key=lambda entry: int(entry.split(":")[0]))


def test_sources_cite_only_what_a_reader_can_open() -> None:
    paths = [p for top in PACKAGES for p in sorted((ROOT / top).rglob("*.py"))] + [ROOT / "prefixbench_pytest.py"]
    assert len(paths) > 50
    bad = {str(p.relative_to(ROOT)): found for p in paths if (found := uncitable(p.read_text(encoding="utf-8")))}
    assert bad == {}


def test_the_check_refuses_outside_notes_and_unsourced_decisions() -> None:
    text = '"""Rules (providers.md §3).\n\nKept since issue 9; backfill per ADR 0256."""\n'
    assert uncitable(text) == [
        "1: \"\"\"Rules (providers.md §3).",
        "3: Kept since issue 9; backfill per ADR 0256.\"\"\"",
        "3: Kept since issue 9; backfill per ADR 0256.\"\"\" (no seed named)",
    ]
    assert uncitable('"""Backfill per seed 003\'s ADR 0256 and D677."""') == []
    assert uncitable('"""The tables of docs/providers.md."""\nPAGES = ("providers.md",)\n') == []
    assert uncitable("# see ../shared/reference/providers.md") != []
    assert uncitable('"""Facts (https://platform.minimax.io/docs/api-reference/text-prompt-caching)."""') == []
