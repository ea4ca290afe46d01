"""The one table formatter (reports/textable.py), against hand-written tables."""

from __future__ import annotations

from prefixbench.reports.textable import Table, columns_named, markdown_lines, text_lines, widths

HEADER = ["name", "n", "note"]
ROWS = [["alpha", "3", "ok"], ["b", "1,200", ""]]


def test_text_pads_left_and_right_and_strips_trailing_blanks():
    # "n" is right-aligned; "note" is the last column, left-aligned: its padding is stripped,
    # and the empty note leaves no trailing blanks at all.
    assert Table(HEADER, ROWS, right={1}).text() == (
        "name       n  note\n"
        "-----  -----  ----\n"
        "alpha      3  ok\n"
        "b      1,200"
    )


def test_without_a_ruler_the_rows_follow_the_header():
    assert text_lines(HEADER, ROWS, {1}, ruler=False) == (
        "name       n  note",
        "alpha      3  ok",
        "b      1,200",
    )


def test_a_footer_sits_under_a_second_ruler_and_counts_in_the_widths():
    assert text_lines(["#", "tokens"], [["1", "10"], ["2", "20"]], {0, 1}, footer=[["all", "1,030"]]) == (
        "  #  tokens",
        "---  ------",
        "  1      10",
        "  2      20",
        "---  ------",
        "all   1,030",
    )


def test_an_empty_footer_closes_the_table_with_a_ruler():
    assert text_lines(["a", "b"], [["x", "yy"]], footer=()) == ("a  b", "-  --", "x  yy", "-  --")


def test_a_table_without_rows_is_its_header_and_ruler():
    assert text_lines(["model", "n"], [], {1}) == ("model  n", "-----  -")
    assert widths(["model", "n"], []) == (5, 1)


def test_a_right_aligned_first_column_keeps_its_leading_blanks():
    # compare's mark column: " " or "!" under a blank title
    assert text_lines([" ", "unit"], [["!", "a"], [" ", "bb"]], ruler=False) == (
        "   unit",
        "!  a",
        "   bb",
    )


def test_markdown_marks_right_aligned_columns():
    assert Table(HEADER, ROWS, right={1}).markdown() == (
        "| name | n | note |\n"
        "|---|---:|---|\n"
        "| alpha | 3 | ok |\n"
        "| b | 1,200 |  |"
    )


def test_markdown_escapes_pipes_only_when_asked():
    rows = [["a|b", "1"]]
    assert markdown_lines(["unit", "n"], rows) == ("| unit | n |", "|---|---|", "| a|b | 1 |")
    assert markdown_lines(["unit", "n"], rows, {1}, escape_pipes=True) == (
        "| unit | n |",
        "|---|---:|",
        "| a\\|b | 1 |",
    )


def test_columns_named_finds_the_titles_given():
    assert columns_named(["workload", "folds", "preset", "400s"], ("folds", "400s", "seeds")) == {1, 3}


def test_control_characters_in_a_cell_are_shown_escaped_in_both_media():
    # A log string can hold terminal escapes (set the window title, clear the screen) or a
    # newline that would break the table (and close audit.md's code fence): shown, never sent.
    rows = [["gpt\x1b]0;owned\x07\x1b[2J", "1"], ["a\nb\tc\x7f\x9b", "2"]]
    title, other = "gpt\\x1b]0;owned\\x07\\x1b[2J", "a\\nb\\tc\\x7f\\x9b"  # 26 and 15 characters shown
    assert Table(["model", "n"], rows, right={1}).text() == "\n".join(
        [f"{'model':<26}  n", f"{'-' * 26}  -", f"{title}  1", f"{other:<26}  2"]
    )
    markdown = Table(["model", "n"], rows).markdown()
    assert "\x1b" not in markdown and "\n" not in markdown.replace("\n|", "") and "gpt\\x1b]0;owned\\x07" in markdown
    assert Table(["é", "emoji 😀"], [["naïve", "ok"]]).text() == "é      emoji 😀\n-----  -------\nnaïve  ok"
