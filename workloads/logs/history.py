"""The message history of a transcript, kept small: what the audit needs to locate a break.

A transcript log (Claude Code, pi, Codex...) holds the conversation but not the bytes sent, so
when a request reads less than its lane left cached, the audit can still say *where* the cached
prefix ended: inside which logged message, at about which token. Readers keep, per message, a
:class:`~prefixbench.workloads.logs.trace.LoggedMessage`: its role, a token estimate, a short
excerpt and the *marks* below (never its full text), so the history costs a few dozen bytes a
message; or (Claude Code, a file read as it lies on disk) only where its line starts, 4 bytes (8 in a file past 4 GiB), the
record made from the line read again when a break is located on it
(:func:`~prefixbench.workloads.audit.locate.logged`).

Marks name what an agent is known to send differently on a later request, so that a break that
lands in a marked message can name its likely change:

* ``system-reminder``: a ``<system-reminder>`` block (Claude Code re-renders these);
* ``date``: a date or "current date / time" in the text;
* ``file-read``: a tool result holding a file's content (re-reading a file re-sends it).

(A tool list change is an event of the request, ``tools_change``, not a mark: tools are sent
before every message.)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

from prefixbench.workloads.logs.trace import LoggedMessage, offsets_count

#: Characters of text kept as a message's excerpt (cut at a word, ending in ``...``: plain
#: ASCII, so CPython keeps it at one byte a character).
EXCERPT_CHARS = 48
#: Characters per token of the estimate (the audit rescales it to the reported prompts).
CHARS_PER_TOKEN = 4
#: Characters of a message searched for marks (a long file is not scanned whole).
SCAN_CHARS = 20_000

MARKS: dict[str, str] = {
    "system-reminder": "a system reminder (the agent re-renders reminders, so the bytes sent change)",
    "date": "a date or time (rendered anew when the day or time changes)",
    "file-read": "a file's content (a file re-read, or its earlier read elided, re-sends different bytes)",
}
#: A date mark is a calendar date (2025-09-03) or one of these phrases, in any case.
_DATE_WORDS = re.compile(r"current date|today's date|today is|date and time", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b")
#: A date's tail (``-09-03``): it starts with a literal, which the regular expression engine
#: finds as fast as a substring search; the whole date is then matched where a tail is.
_DATE_TAIL = re.compile(r"-[01]\d-[0-3]\d\b")
_REMINDER = "<system-reminder>"
#: Tool names whose results are a file's content.
READ_TOOLS = frozenset({"read", "read_file", "view", "cat", "readfile", "read_many_files", "view_file"})


#: Keys of a content block whose values are ids or kinds, not text.
_NOT_TEXT = frozenset({"type", "id", "tool_use_id", "signature"})


def texts_of(content: object) -> list[str]:
    """Every string a message's content holds (text blocks, tool inputs, tool results), depth-first."""
    if isinstance(content, str):
        return [content]
    found: list[str] = []
    if type(content) is list:
        # The usual shape, a list of blocks whose values are mostly strings, read in one loop;
        # any other value is walked below, in the same order.
        for block in content:
            if type(block) is dict:
                for key, value in block.items():
                    if key not in _NOT_TEXT:
                        if type(value) is str:
                            found.append(value)
                        else:
                            _walk_texts(value, found)
            else:
                _walk_texts(block, found)
        return found
    _walk_texts(content, found)
    return found


def _walk_texts(content: object, found: list[str]) -> None:
    """Append every string ``content`` holds to ``found``, depth-first (no recursion: any depth)."""
    stack = [content]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            values = [v for k, v in item.items() if k not in _NOT_TEXT]
            values.reverse()
            stack.extend(values)
        elif isinstance(item, list):
            stack.extend(reversed(item))


def make_message(role: str, content: object, marks: Iterable[str] = ()) -> LoggedMessage:
    """The small record of one message: role, estimated tokens, excerpt and marks found in its text."""
    texts = [content] if type(content) is str else texts_of(content)
    if len(texts) == 1 and not marks:
        return _one_text(role, texts[0])
    size = 0
    excerpt = ""
    for text in texts:
        size += len(text)
        if len(excerpt) < EXCERPT_CHARS:
            excerpt = (excerpt + " " + " ".join(text[: EXCERPT_CHARS * 2].split())).strip()
    # The marks in the order found (the given ones first), each once.
    found: list[str] = list(dict.fromkeys(marks)) if marks else []
    reminder = date = False
    scanned = 0
    for text in texts:
        if scanned >= SCAN_CHARS:
            break
        part = text[: SCAN_CHARS - scanned] if len(text) > SCAN_CHARS - scanned else text
        scanned += len(part)
        if not reminder and _REMINDER in part:
            reminder = True
            if "system-reminder" not in found:
                found.append("system-reminder")
        if not date and "date" not in found and has_date(part):
            date = True
            found.append("date")
    if len(excerpt) > EXCERPT_CHARS:
        excerpt = _cut_at_word(excerpt, EXCERPT_CHARS)
    # One string a role, an excerpt and a set of marks for the whole audit, not one a message (kept
    # for every request of every file): tool results and reminders repeat their first words.
    return LoggedMessage(
        sys.intern(role), max(1, size // CHARS_PER_TOKEN) if size else 0, sys.intern(excerpt), _marks(tuple(found))
    )


def _one_text(role: str, text: str) -> LoggedMessage:
    """:func:`make_message` of a message of one text and no given marks (most messages): the same
    record, made without the loops over texts (its excerpt is the text's first words, its marks
    those of its first :data:`SCAN_CHARS` characters)."""
    size = len(text)
    excerpt = " ".join(text[: EXCERPT_CHARS * 2].split())
    if len(excerpt) > EXCERPT_CHARS:
        excerpt = _cut_at_word(excerpt, EXCERPT_CHARS)
    part = text[:SCAN_CHARS] if size > SCAN_CHARS else text
    if _REMINDER in part:
        found: tuple[str, ...] = ("system-reminder", "date") if has_date(part) else ("system-reminder",)
    else:
        found = ("date",) if has_date(part) else ()
    return LoggedMessage(
        sys.intern(role), max(1, size // CHARS_PER_TOKEN) if size else 0, sys.intern(excerpt), _marks(found)
    )


def message_count(messages: tuple[LoggedMessage, ...] | bytes) -> int:
    """How many messages a request's ``messages`` hold, kept as records or as where their lines
    start (:func:`~prefixbench.workloads.audit.locate.logged`)."""
    return len(messages) if type(messages) is tuple else offsets_count(messages)


#: Every set of marks met, as one tuple each (there are a handful).
_MARK_SETS: dict[tuple[str, ...], tuple[str, ...]] = {}


def _marks(found: tuple[str, ...]) -> tuple[str, ...]:
    return _MARK_SETS.setdefault(found, found) if found else ()


def has_date(text: str) -> bool:
    """Whether ``text`` holds a date mark. Each regular expression runs only where a cheap test
    shows it can match: every phrase holds "date" or "today" (whose letters have no other
    case-insensitive equivalent); a calendar date is looked for only where its tail
    (``-MM-DD``, found by a search that starts on a literal ``-``) is, by matching the whole date
    four characters before it. A search of every message's text for the date pattern (which
    the engine tries at every position) was most of the time of reading a transcript."""
    # Only ASCII letters make the phrases, and beyond ASCII only U+0130 and U+212A have ASCII in
    # their lower case: a text beyond ASCII is lowered with every other character as "?" (which
    # no phrase holds), three fast ASCII passes where its own lower case is a slow one.
    low = text.lower() if text.isascii() else text.encode("ascii", "replace").decode("ascii").lower()
    if "date" in low or "today" in low:
        if text.isascii() or not ("\u0130" in text or "\u0131" in text or "\u017f" in text or "\u212a" in text):
            # Ignoring case, U+0130 and U+0131 match "i" and U+017F "s" (the phrases' only
            # look-alikes), and U+0130 and U+212A are the only characters beyond ASCII whose lower
            # case holds ASCII: without these four, the phrases in the lower case are the matches.
            if "current date" in low or "today's date" in low or "today is" in low or "date and time" in low:
                return True
        elif _DATE_WORDS.search(text):
            return True
    if "-" not in text:
        return False
    tail = _DATE_TAIL.search(text)
    while tail is not None:
        start = tail.start()
        if start >= 4 and _ISO_DATE.match(text, start - 4) is not None:
            return True
        tail = _DATE_TAIL.search(text, start + 1)
    return False


def _cut_at_word(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, with an ellipsis."""
    cut = text[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "..."
