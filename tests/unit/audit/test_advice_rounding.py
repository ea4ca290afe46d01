"""A fix's *lost to its misses* reads as its pattern, the causes table and the loss split read the
same figure (format_usd: 4 decimals from a cent up, 4 significant digits under one), in the
terminal, audit.md and report.html. Before, the column had 4 decimals whatever the figure: a
mini-swe-agent log read ``$0.0003`` in it above ``concurrent-write x2: $0.0002580 lost``, and
``unknown $0.0002580`` in the split, the same loss printed two ways on adjacent lines."""

from __future__ import annotations

import json
from pathlib import Path

from prefixbench.reports.advice import advice_html
from prefixbench.reports.cli import main
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl


def _paused_small(tmp_path: Path) -> Path:
    """A Claude Code session idle 20 minutes between two requests of 2,345 written tokens: its
    ttl-expired miss loses under a cent ($0.008090)."""
    t = Transcript("s1")
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 2_345, 0, 40)])
    t.user("after a pause", "2025-09-03T00:20:00.000Z")
    t.assistant("r2", "2025-09-03T00:20:02.000Z", [cc_usage(3, 2_645, 0, 40)])
    return write_jsonl(tmp_path / "s1.jsonl", t.lines)


def test_a_loss_under_a_cent_reads_the_same_in_the_ranking_as_in_its_pattern(tmp_path: Path, capsys) -> None:
    path = _paused_small(tmp_path)
    assert main(["audit", str(path), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    lost = "$0.008090"
    row = next(line for line in lines if line.startswith("1  keep-alive"))
    assert row.split()[-4] == lost, row  # (lost to its misses, then requests, lanes, sessions)
    assert f"   pattern: ttl-expired x1: {lost} lost" in lines
    assert any(line.startswith("ttl-expired ") and f" {lost} " in line for line in lines)  # the causes table
    assert any(line.startswith(f"lost {lost} = recoverable {lost} (1 req)") for line in lines)  # the split

    assert main(["audit", str(path), "--quiet", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    html = advice_html(record)
    assert f">{lost}<" in html and ">$0.0081<" not in html
