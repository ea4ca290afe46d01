"""Every mark a table uses has its footnote under that table (the sweep's ``*`` in *vs legacy*)."""

from __future__ import annotations

from prefixbench.reports import seeds
from prefixbench.reports.seeds import LEGACY_REJECTED_NOTE, footnotes, sweep_text_table


def _table(monkeypatch, last: str) -> str:
    header = ["window", "preset", "vs legacy"]
    rows = [["32k", "legacy", "-"], ["32k", "patched", last]]
    monkeypatch.setattr(seeds, "needs_aggregate", lambda runs: False)
    monkeypatch.setattr(seeds, "table_rows", lambda runs: (header, rows))
    monkeypatch.setattr(seeds, "text_table", lambda runs: "\n".join("  ".join(row) for row in [header, *rows]))
    return sweep_text_table(None)


def test_a_star_in_the_terminal_sweep_table_has_its_footnote(monkeypatch):
    """main printed the ``*`` with no footnote on the terminal (only report.md explained it)."""
    text = _table(monkeypatch, "-34.5%*")
    assert "-34.5%*" in text and text.splitlines()[-1] == LEGACY_REJECTED_NOTE


def test_no_mark_no_footnote(monkeypatch):
    assert LEGACY_REJECTED_NOTE not in _table(monkeypatch, "-34.5%")
    assert footnotes([["a", "b"]]) == []
