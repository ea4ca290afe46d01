"""One palette: every colour a chart or a page draws comes from reports/palette.py, and each miss
cause has a colour of its own, the same everywhere, a new cause's included."""

from __future__ import annotations

import re
from pathlib import Path

from prefixbench.reports import palette
from prefixbench.reports.palette import CAUSE_BASE, ROLES, cause_colour, cause_colours
from prefixbench.workloads.audit.causes import CAUSES

REPORTS = Path(palette.__file__).parent
HEX = re.compile(r"#[0-9a-fA-F]{6}\b")


def _spelled_colours(text: str) -> list[str]:
    """Hex colours spelled in a module's source, the page chrome's stylesheet (html.py's ``CSS``:
    backgrounds, borders, text) left out."""
    text = re.sub(r'^CSS = """.*?"""', "", text, flags=re.S | re.M)
    return HEX.findall(text)


def test_no_module_of_reports_spells_a_colour_but_the_palette():
    spelled = {
        path.name: found
        for path in sorted(REPORTS.glob("*.py"))
        if path.name != "palette.py" and (found := _spelled_colours(path.read_text(encoding="utf-8")))
    }
    assert spelled == {}


def test_the_check_sees_a_colour_planted_in_a_module():
    assert _spelled_colours('x = 1\ncolour = "#bf8700"\n') == ["#bf8700"]
    assert _spelled_colours('CSS = """\nbody{color:#1f2328}\n"""\n') == []


def test_every_cause_has_a_colour_distinct_from_the_others_and_from_the_token_kinds():
    colours = cause_colours()
    assert list(colours) == list(CAUSES)
    assert len(set(colours.values())) == len(colours)
    assert not set(colours.values()) & set(ROLES.values())
    assert all(HEX.fullmatch(c) for c in colours.values())


def test_a_new_cause_gets_a_colour_of_its_own_the_same_every_time():
    new = [f"made-up-cause-{n}" for n in range(12)]
    colours = [cause_colour(name) for name in new]
    assert colours == [cause_colour(name) for name in new]  # deterministic
    assert all(HEX.fullmatch(c) for c in colours)
    taken = [palette._rgb(c) for c in (*CAUSE_BASE.values(), *ROLES.values())]
    for c in colours:
        assert min(palette._distance(palette._rgb(c), other) for other in taken) >= palette.MIN_DISTANCE
    # adding causes moves no known cause's colour
    assert {cause: cause_colour(cause) for cause in CAUSES} == cause_colours()
