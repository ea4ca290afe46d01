"""Every mark a table uses has its footnote under that table (the sweep's ``*`` in *vs legacy*)."""

from __future__ import annotations

from prefixbench.reports import seeds
from prefixbench.reports.seeds import LEGACY_REJECTED_NOTE, footnotes, sweep_text_table


def _table(monkeypatch, last: str) -> str:
    header = ["window", "preset", "vs legacy"]
    rows = [["32k", "legacy", "-"], ["32k", "patched", last]]
    monkeypatch.setattr(seeds, "needs_aggregate", lambda runs: False)
    monkeypatch.setattr(seeds, "table_rows", lambda runs, same=(): (header, rows))
    monkeypatch.setattr(seeds, "text_table", lambda runs, same=(): "\n".join("  ".join(row) for row in [header, *rows]))
    return sweep_text_table(None)


def test_a_star_in_the_terminal_sweep_table_has_its_footnote(monkeypatch):
    """main printed the ``*`` with no footnote on the terminal (only report.md explained it)."""
    text = _table(monkeypatch, "-34.5%*")
    assert "-34.5%*" in text and text.splitlines()[-1] == LEGACY_REJECTED_NOTE


def test_no_mark_no_footnote(monkeypatch):
    assert LEGACY_REJECTED_NOTE not in _table(monkeypatch, "-34.5%")
    assert footnotes([["a", "b"]]) == []


def test_a_sweep_with_refused_requests_says_so_under_its_table(tmp_path, capsys):
    """``no-compaction`` at 32k sends prompts over the window: 38 of its 61 requests are refused,
    so its session uncached tokens look cheapest. The terminal table counts the 400s and says
    what they mean; report.md and runs.csv keep the count."""
    from prefixbench.reports.entry import main
    from prefixbench.reports.seeds import REJECTED_NOTE

    out = tmp_path / "out"
    assert main(["sweep", "--engines", "no-compaction,sliding-window", "--windows", "32k", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    header, *rows = [line.split() for line in text.splitlines() if line.startswith(("window", "32k"))]
    assert "400s" in header
    refused = {row[1]: row[header.index("400s")] for row in rows}  # the columns before 400s are one word each
    assert refused == {"no-compaction": "38", "sliding-window": "0"}
    assert REJECTED_NOTE in text
    assert "| 400s |" in (out / "report.md").read_text() and "num_rejected" in (out / "runs.csv").read_text()
