"""One table formatter for every table the command line prints or writes: aligned plain text
for the terminal and Markdown for report.md, PR comments and the audit.

A table is a header and rows of strings, already formatted; ``right`` names the columns
aligned right (numbers), the others align left. Plain text pads each column to its widest
cell, separates columns with two spaces and strips trailing blanks from each line::

    name   n
    -----  --
    alpha   3
    b      12

The details that differ between tables are options: ``ruler`` (the dashes under the header),
``footer`` (rows set apart below a second ruler, as replay's total; an empty footer closes
the table with a ruler) and, in Markdown, ``escape_pipes`` (cells that may hold ``|``).

Cells often hold strings read from a user's logs (a model name, a file name), so a control
character in a cell is shown escaped (``\\x1b``, ``\\n``) in both media: an escape sequence
would otherwise reach the terminal (set its title, clear the screen) and a newline would break
the table, or close the code fence audit.md sets it in (that fence is also longer than any run
of backticks in the table).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

import msgspec

Row = Sequence[str]

SEPARATOR = "  "

#: The control characters (C0, DEL, C1), the line and paragraph separators (U+2028, U+2029: a
#: line break to some terminals and editors) and the bidirectional embeddings, overrides and
#: isolates (U+202A-U+202E, U+2066-U+2069: they reorder what follows them on the line): none is
#: printed as itself.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` with each control character shown as its escape (``\\x1b``, ``\\n``, ``\\t``)."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def md_code(text: str) -> str:
    """``text`` as Markdown inline code that no backtick, newline or control character in it can
    close or break: :func:`visible`, then a backtick run longer than any inside (padded with
    spaces where the text starts or ends with one)."""
    shown = visible(text)
    ticks = "`" * (1 + max((len(run) for run in re.findall("`+", shown)), default=0))
    pad = " " if shown.startswith("`") or shown.endswith("`") else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}"


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


#: What :func:`ellipsize` puts where it cut.
ELLIPSIS = "…"
#: Where a long text may be cut besides a space: after one of these (a path's ``/``, ``a.b``...).
_SOFT_BREAK = re.compile(r"[\s/.,;:=_\-)\]}]")


def ellipsize(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut at a word boundary and ended with ``…``:
    after the last space (or, failing one in the second half, the last ``/ . , ; : = _ -`` and
    closing bracket) that leaves room for the ellipsis. Never cut inside a word: a first word
    longer than ``width`` is kept whole (the line is then longer than asked). Wherever a report
    shows a cut text, the whole text is one hover (report.html), one section (audit.md) or
    ``--format json`` away, and the report says where."""
    if len(text) <= width:
        return text
    room = max(1, width - len(ELLIPSIS))
    head = text[: room + 1]
    cut = head.rfind(" ")
    if cut < room // 2:
        soft = [m.end() for m in _SOFT_BREAK.finditer(head[:room])]
        cut = soft[-1] if soft and soft[-1] >= room // 2 else cut
    if cut <= 0:
        match = re.match(r"\S+", text)
        word = match.group() if match else text
        return word if len(word) >= len(text) else word + ELLIPSIS
    return text[:cut].rstrip() + ELLIPSIS


def visible_row(row: Row) -> tuple[str, ...]:
    """Each cell of ``row`` as :func:`visible` shows it."""
    return tuple(visible(cell) for cell in row)


def _visible_rows(rows: Sequence[Row]) -> list[tuple[str, ...]]:
    return [visible_row(row) for row in rows]


class Table(msgspec.Struct, frozen=True):
    """A header, its rows and the columns aligned right."""

    header: Row
    rows: Sequence[Row]
    right: Collection[int] = frozenset()

    def text(self, *, ruler: bool = True, footer: Sequence[Row] | None = None) -> str:
        """Aligned plain text, lines joined by newlines."""
        return "\n".join(text_lines(self.header, self.rows, self.right, ruler=ruler, footer=footer))

    def markdown(self, *, escape_pipes: bool = False) -> str:
        """A Markdown table, lines joined by newlines."""
        return "\n".join(markdown_lines(self.header, self.rows, self.right, escape_pipes=escape_pipes))


def columns_named(header: Row, names: Collection[str]) -> frozenset[int]:
    """The indices of the columns whose title is one of ``names`` (to align those right)."""
    return frozenset(i for i, h in enumerate(header) if h in names)


def widths(header: Row, rows: Sequence[Row]) -> tuple[int, ...]:
    """Each column's width: its widest cell, the header included."""
    return tuple(max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header))


def text_lines(
    header: Row,
    rows: Sequence[Row],
    right: Collection[int] = frozenset(),
    *,
    ruler: bool = True,
    footer: Sequence[Row] | None = None,
) -> tuple[str, ...]:
    """The table as aligned plain-text lines: the header, a ruler of dashes (unless ``ruler`` is
    False), the rows, then, when ``footer`` is given, a second ruler and the footer rows."""
    header, rows = visible_row(header), _visible_rows(rows)
    footer = None if footer is None else _visible_rows(footer)
    sized = widths(header, [*rows, *(footer or ())])

    def line(cells: Row) -> str:
        padded = (c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, sized)))
        return SEPARATOR.join(padded).rstrip()

    rule = (line(["-" * w for w in sized]),)
    head = (line(header), *(rule if ruler else ()))
    body = tuple(line(r) for r in rows)
    tail = () if footer is None else (*rule, *(line(r) for r in footer))
    return (*head, *body, *tail)


def markdown_lines(
    header: Row, rows: Sequence[Row], right: Collection[int] = frozenset(), *, escape_pipes: bool = False
) -> tuple[str, ...]:
    """The table as Markdown lines: ``| a | b |``, then ``|---|---:|`` (``---:`` for a column
    aligned right), then the rows. With ``escape_pipes`` a ``|`` inside a cell is written ``\\|``."""
    header, rows = visible_row(header), _visible_rows(rows)

    def line(cells: Row) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") if escape_pipes else c for c in cells) + " |"

    align = "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"
    return (line(header), align, *(line(r) for r in rows))
