"""The date mark of a logged message (workloads/logs/history.py): found by substring tests before
any regular expression runs, with the same answer as the one search it replaced."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from prefixbench.workloads.logs.history import has_date, make_message, texts_of

#: The single search every message's text went through before (written out here to compare).
ONE_SEARCH = re.compile(
    r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b|current date|today's date|today is|date and time", re.IGNORECASE
)

#: Pieces that make or almost make a mark, case-insensitive look-alikes (U+0130, U+0131, U+017F
#: match i and s when case is ignored), other digits, word characters around a date.
PIECES = st.sampled_from([
    "2025-09-03", "1999-12-31", "2025-9-03", "2025-13-03", "x2025-09-03", "2025-09-03x", "_2025-09-03",
    "٢٠٢٥-٠٩-٠٣", "20٢٥-0٩-0٣", "CURRENT DATE", "Today's Date", "today iſ", "TODAY IS", "todaY İs",
    "today ıs", "date and time", "DATE AND TIME", "dat e", "to day", "-0", "-1", "-", "today", "date", " ", "é",
    "\u212a", "\u0130", "\u0131", "\u017f", "CURRENT DATE \u2500", "€ today is", "ünïcode date and time",
])
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=8).map("".join)


@settings(max_examples=600, deadline=None)
@given(TEXTS)
def test_has_date_answers_as_the_one_search_did(text: str) -> None:
    assert has_date(text) == (ONE_SEARCH.search(text) is not None)


def test_only_four_characters_beyond_ascii_bend_the_phrases() -> None:
    """has_date answers the phrases of a text beyond ASCII by substring tests on its lower case
    unless the text holds U+0130, U+0131, U+017F or U+212A: checked over every code point."""
    letters = "".join(sorted(set("current date today's date today is date and time")))
    phrase_letter = re.compile(f"[{re.escape(letters)}]", re.IGNORECASE)
    bending = {
        ch for ch in map(chr, range(128, 0x110000))
        if phrase_letter.fullmatch(ch) or any(c.isascii() for c in ch.lower())
    }
    assert bending == {"\u0130", "\u0131", "\u017f", "\u212a"}


def test_the_mark_is_kept_on_the_message() -> None:
    assert "date" in make_message("user", [{"type": "text", "text": "Today is Wednesday"}]).marks
    assert "date" in make_message("user", "released 2025-09-03.").marks
    assert "date" not in make_message("user", "lorem ipsum dolor sit amet " * 40).marks


def _every_string(content: object) -> list[str]:
    """Every string of a message's content, depth-first, less the values of the id and kind keys
    (texts_of's walk as it was: one stack for every shape, written out here to compare)."""
    if isinstance(content, str):
        return [content]
    found: list[str] = []
    stack = [content]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed([v for k, v in item.items() if k not in ("type", "id", "tool_use_id", "signature")]))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return found


#: JSON values shaped like a message's content: text, lists of blocks, blocks holding lists.
KEYS = st.sampled_from(["type", "id", "tool_use_id", "signature", "text", "content", "input", "name", "x"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(st.one_of(JSON, st.lists(st.dictionaries(KEYS, JSON, max_size=4) | JSON, max_size=5)))
def test_texts_of_reads_every_shape_in_the_order_of_the_one_walk(content: object) -> None:
    """The list-of-blocks shape is read in one loop (a speed-up): the same strings in the same
    order as the single walk it stands in for."""
    assert texts_of(content) == _every_string(content)


def _message_as_it_was(role: str, content: object, marks: tuple[str, ...]) -> tuple[str, int, str, tuple[str, ...]]:
    """make_message as it was written before its one-pass loop (a speed-up): the excerpt built in
    one loop, the marks in a dict in the order found, every text up to the scan limit searched."""
    from prefixbench.workloads.logs.history import EXCERPT_CHARS, SCAN_CHARS, _cut_at_word

    texts = texts_of(content)
    size = sum(map(len, texts))
    excerpt = ""
    for text in texts:
        if len(excerpt) >= EXCERPT_CHARS:
            break
        excerpt = (excerpt + " " + " ".join(text[: EXCERPT_CHARS * 2].split())).strip()
    found = dict.fromkeys(marks)
    scanned = 0
    for text in texts:
        if scanned >= SCAN_CHARS:
            break
        part = text[: SCAN_CHARS - scanned]
        scanned += len(part)
        if "<system-reminder>" in part:
            found.setdefault("system-reminder")
        if "date" not in found and has_date(part):
            found.setdefault("date")
    if len(excerpt) > EXCERPT_CHARS:
        excerpt = _cut_at_word(excerpt, EXCERPT_CHARS)
    return role, max(1, size // 4) if size else 0, excerpt, tuple(found)


#: Texts that carry marks, long ones (past the scan limit) and blanks among others.
MARKED = st.one_of(
    TEXTS, st.sampled_from(["<system-reminder>x</system-reminder>", "   ", "", "word " * 30, "a" * 20_001, "2025-09-03 " * 3]),
)
BLOCKS = st.lists(st.dictionaries(st.sampled_from(["type", "text", "content", "id"]), MARKED, max_size=3) | MARKED, max_size=4)


@settings(max_examples=400, deadline=None)
@given(st.one_of(MARKED, BLOCKS), st.lists(st.sampled_from(["file-read", "date", "system-reminder"]), max_size=3).map(tuple))
def test_make_message_says_what_it_said_before(content: object, marks: tuple[str, ...]) -> None:
    message = make_message("user", content, marks)
    assert (message.role, message.tokens, message.excerpt, message.marks) == _message_as_it_was("user", content, marks)
