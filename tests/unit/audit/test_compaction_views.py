"""The compactions table and the misses-by-cause table measure a compaction's request against
different contexts (what the new context shares with what was cached; the whole context the
lane's previous request left cached), so a compaction "warm" with $0 lost in one can lose in the
other. Each table says what it measures against, in the terminal, audit.md and report.html; and
report.html lists the compactions as the terminal and audit.md do, the same figures and words."""

from __future__ import annotations

import html
import re
from pathlib import Path

from prefixbench.reports.cli import main

#: A Claude Code 2.1 session: its compaction call and the request after the boundary both warm,
#: the latter losing $0.0196 under cause compaction (18,403 expected against the old context,
#: 15,400 cached before against the new one).
CC21 = Path(__file__).parent / "data" / "claude-code-2.1"
COMPACTIONS_AGAINST = (
    "cached before: what the compaction could have read, the prefix its new context shares with what was cached "
    "(a call: what the main request before it left cached); misses by cause measure the same request against the "
    "whole context the lane's previous request left cached, so a compaction warm here can still lose there")
CAUSES_LINE = ("compaction: lost against the whole context the lane's previous request left cached; the compactions "
               "table judges each compaction against what its new context shares with that (its cached before)")


def _text(page: str, section: str) -> str:
    start = page.index(f'<section id="{section}">')
    body = page[start:page.index("</section>", start)]
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


def test_each_table_says_what_it_measures_a_compaction_against(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["audit", str(CC21), "--quiet", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    md = (out / "audit.md").read_text(encoding="utf-8")
    for text in (table, md):
        lines = text.splitlines()
        causes = lines.index("misses by cause")
        assert lines[causes + 1].startswith("cause ") and CAUSES_LINE in lines[causes:causes + 8]
        heading = next(i for i, line in enumerate(lines) if line.startswith("compactions (2: 2 warm, 0 cold)"))
        assert lines[heading + 5] == COMPACTIONS_AGAINST  # right under the table's two rows
    page = (out / "report.html").read_text(encoding="utf-8")
    assert CAUSES_LINE in _text(page, "causes")
    # report.html lists the compactions: the same heading, rows and line as the terminal's.
    compactions = _text(page, "compactions")
    assert compactions.startswith(" Compactions compactions (2: 2 warm, 0 cold) file:line lane kind verdict read cached before "
                                  "paid warm cost cause detail")
    assert "agent-acompact-5e21a9 call warm 164,830 164,830 $0.1703 $0.1703 read 164,830 of the 164,830" in compactions
    assert "main after warm 15,000 15,400 $0.0310 $0.0310 compaction read 15,000 of the 15,400 tokens" in compactions
    assert compactions.rstrip().endswith(COMPACTIONS_AGAINST)
    assert page.index('<section id="causes">') < page.index('<section id="compactions">')


def test_no_compaction_no_line(tmp_path: Path, capsys) -> None:
    from tests.unit.audit.test_relay_fix_may_save import _rollout

    log = _rollout(tmp_path / "openai" / "rollout.jsonl", "openai")
    out = tmp_path / "out"
    assert main(["audit", str(log), "--quiet", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    assert "compactions (" not in table and "cached before:" not in table and "compaction:" not in table
    assert '<section id="compactions">' not in (out / "report.html").read_text(encoding="utf-8")
