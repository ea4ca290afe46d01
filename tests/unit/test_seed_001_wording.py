"""The guide says what the default sweep reproduces of seed 001: its findings, not its figures."""

from __future__ import annotations

import re
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]


def flat(name: str) -> str:
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


def test_no_page_claims_the_default_sweep_reproduces_seed_001s_table_as_is() -> None:
    # Its figures differ from seed 001's (182,365 against 191,515 on legacy at 32k), so a bare
    # "reproduces seed 001's table" tells a reader to expect the same numbers.
    for name in ("README.md", "docs/getting-started.md"):
        text = flat(name)
        assert not re.search(r"reproduces (seed 001's table|the table of seed 001)", text), name
        assert "not its figures" in text, name


def test_the_side_by_side_figures_are_the_ones_the_sweep_prints() -> None:
    text = flat("docs/getting-started.md")
    printed = flat("README.md")
    for figure in ("22,268 / 21,112 / 21,020", "84,368 / 85,664 / 84,385", "332,768 / 313,612 / 313,518",
                   "182,365", "119,375", "619,732", "366,725", "2,449,716", "1,491,228"):
        assert figure in text and figure in printed, figure


def _figures(cell: str) -> list[int]:
    return [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*\d(?=\s|$|\s*\()", cell)]


def _table_gaps() -> tuple[float, float]:
    """The largest gaps, in percent, between seed 001's figures and the sweep's in the guide's table."""
    session_gap = call_gap = 0.0
    for line in (ROOT / "docs/getting-started.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not re.fullmatch(r"\d+k", cells[0]):
            continue
        theirs_calls, ours_calls = _figures(cells[1]), _figures(cells[2])
        theirs_session = [int(n.replace(",", "")) for n in re.findall(r"[\d,]{4,}", cells[3])]
        ours_session = [int(n.replace(",", "")) for n in re.findall(r"[\d,]{4,}", cells[4])]
        assert len(theirs_calls) == len(ours_calls) == 3 and len(theirs_session) == len(ours_session) == 2, line
        call_gap = max([call_gap] + [abs(o - t) / t * 100 for t, o in zip(theirs_calls, ours_calls)])
        session_gap = max([session_gap] + [abs(o - t) / t * 100 for t, o in zip(theirs_session, ours_session)])
    assert session_gap and call_gap, "no table rows found"
    return session_gap, call_gap


def test_the_readmes_within_claims_hold_for_the_guides_table() -> None:
    # The README once said "within 5%" while patched at 32k was 5.9% below seed 001's figure.
    session_gap, call_gap = _table_gaps()
    text = flat("README.md")
    session = re.search(r"session totals land within (\d+)%", text)
    calls = re.search(r"summary calls within (\d+)%", text)
    assert session and calls, "README states no bound"
    for bound, gap in ((int(session.group(1)), session_gap), (int(calls.group(1)), call_gap)):
        assert gap <= bound, (bound, gap)
        assert gap > bound - 1, (bound, gap)  # the bound is the tightest whole percent
    worst = re.search(r"worst: ([\d,]+) against ([\d,]+) .*?, (\d+\.\d)% (lower|higher)", text)
    assert worst, "README names no worst gap"
    ours, theirs = (int(worst.group(i).replace(",", "")) for i in (1, 2))
    assert f"{abs(ours - theirs) / theirs * 100:.1f}" == worst.group(3)
    assert abs(abs(ours - theirs) / theirs * 100 - session_gap) < 1e-9


def test_the_readmes_named_summary_call_gap_is_the_largest() -> None:
    # The bound on summary calls was checked; the pair the README names as its example was not.
    _, call_gap = _table_gaps()
    named = re.search(r"summary calls within \d+% \(([\d,]+) against ([\d,]+) at \d+k, (\d+\.\d)% (lower|higher)\)", flat("README.md"))
    assert named, "README names no summary-call pair"
    ours, theirs = (int(named.group(i).replace(",", "")) for i in (1, 2))
    assert f"{abs(ours - theirs) / theirs * 100:.1f}" == named.group(3)
    assert abs(abs(ours - theirs) / theirs * 100 - call_gap) < 1e-9
    assert named.group(4) == ("lower" if ours < theirs else "higher")
