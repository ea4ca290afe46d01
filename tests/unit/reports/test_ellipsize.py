"""Cut text ends at a word boundary, never inside a word (the worst-requests tables, FAIL lines,
chart labels)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.reports.textable import ELLIPSIS, _SOFT_BREAK, ellipsize


def test_short_text_is_left_whole():
    assert ellipsize("idle 6m13s", 40) == "idle 6m13s"


def test_a_long_text_ends_at_the_last_space_that_fits():
    assert ellipsize("at a new user turn 1m07s after the previous request", 25) == "at a new user turn 1m07s…"
    assert ellipsize("at a new user turn 1m07s after the previous request", 24) == "at a new user turn…"


def test_a_path_is_cut_after_a_separator_and_a_long_first_word_is_kept_whole():
    assert ellipsize("message 3 /home/user/project/src/module/file.py", 30).endswith("/" + ELLIPSIS)
    assert ellipsize("supercalifragilistic rest", 8) == "supercalifragilistic" + ELLIPSIS


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab c/.-_"), max_size=80), st.integers(min_value=2, max_value=60))
def test_never_cut_inside_a_word(text, width):
    out = ellipsize(text, width)
    if out == text:
        return
    assert out.endswith(ELLIPSIS)
    kept = out[: -len(ELLIPSIS)]
    assert text.startswith(kept)
    rest = text[len(kept):]
    # the cut falls where a word ends: after a boundary character, or before a space
    boundary_before = bool(kept) and _SOFT_BREAK.match(kept[-1]) is not None
    assert boundary_before or rest[:1].isspace() or not kept.strip(), (text, width, out)
    first_word = re.match(r"\S*", text).group()
    assert len(out) <= width or kept == first_word
