"""Words and figures the audit's views share, so that the terminal table, audit.md and
report.html say the same thing the same way: what a hit ratio is over, where a request is, and
the one precision of a column of dollars."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path, PurePath


def ratio_basis(reporting: int, total: int) -> str:
    """What a hit ratio is over, when not every one of ``total`` requests reports its cache use
    (the terminal's and audit.md's headline, and report.html's): "" when every one does."""
    if reporting == total:
        return ""
    if not reporting:
        return " (predicted: no request reports its cache use)"
    return f" (of the {reporting:,} requests that report their cache use)"


def unpriced_words(unpriced: int, models: list[str], no_usage: int = 0) -> str:
    """What a dollar total leaves out, and why: `` (not in it: 42 request(s) of glm-5.2, no
    price)``, `` (... of mooncake, no usage)`` where none of them has usage to price, else
    `` (... of a, b: 40 with no usage, 2 with no price)``; '' when every request is priced."""
    if not unpriced:
        return ""
    named = f" of {', '.join(sorted(models))}" if models else ""
    no_usage = min(no_usage, unpriced)
    why = ("no price" if not no_usage else "no usage" if no_usage == unpriced
           else f": {no_usage:,} with no usage, {unpriced - no_usage:,} with no price")
    return f" (not in it: {unpriced:,} request(s){named}{'' if why.startswith(':') else ', '}{why})"


def unpriced_misses_words(misses: int) -> str:
    """What the lost-dollars total leaves out: `` (not in it: 2 misses with no dollar figure)``, '' when
    every miss that lost tokens is priced (no price row, or a range only: ``-`` in the causes table)."""
    if not misses:
        return ""
    return f" (not in it: {misses:,} miss{'es' if misses != 1 else ''} with no dollar figure)"


def plus_unpriced(figure: str, unpriced: int) -> str:
    """A dollar figure and the requests it leaves out for want of a price, the one way every view
    says it (a group's *paid* and *lost* cells, a fix's *saved*): ``$1.2345 + 3 unpriced``;
    ``figure`` alone where none is."""
    return f"{figure} + {unpriced:,} unpriced" if unpriced else figure


def paid_cell(paid: str, requests: int, unpriced: int = 0, no_usage: int = 0, ranged: int = 0) -> str:
    """A group's *paid* cell (a session, a day, a lane, a file, a model; ``paid``: its dollars
    formatted), saying which of its ``requests`` are in it as the headline does: ``paid`` when
    every one is priced; ``$1.2345 + 3 unpriced`` when some are not; when none is, why: ``no
    usage`` (none carries usage to price), ``range only`` (each log sums its cache reads and
    writes), ``no price`` (a model the price table does not price) or ``unpriced`` (a mix)."""
    if not unpriced:
        return paid
    if unpriced < requests:
        return plus_unpriced(paid, unpriced)
    no_price = unpriced - no_usage - ranged
    return ("no usage" if no_usage == unpriced else "range only" if ranged == unpriced
            else "no price" if no_price == unpriced else "unpriced")


def lost_cell(lost: str, requests: int, unpriced: int = 0, *, count: bool = False) -> str:
    """A group's *lost* cell: ``-`` when none of its ``requests`` is priced (nothing could be
    priced, so $0 would claim none was lost), else ``lost`` (its dollars formatted); ``count``:
    ``$1.2345 + 2 unpriced`` when some are not (a cause's, which has no *paid* cell to say so)."""
    if requests and unpriced >= requests:
        return "-"
    return plus_unpriced(lost, unpriced) if count else lost


def ranged_words(ranged: int, low: Decimal, high: Decimal) -> str:
    """What a dollar total leaves out because no one figure prices it: `` (not in it: 36
    request(s) whose log sums cache reads and writes: $1.4616 to $9.5612)``; '' for none."""
    if not ranged:
        return ""
    return f" (not in it: {ranged:,} request(s) whose log sums cache reads and writes: {usd_cents4(low)} to {usd_cents4(high)})"


def usd_cents4(value: Decimal | float | None) -> str:
    """Dollars at one precision for a whole column (the worst requests' *lost*): 4 decimals,
    ``<$0.0001`` for a smaller amount above 0, ``$0`` for none, ``-`` for unknown."""
    if value is None:
        return "-"
    amount = value if isinstance(value, Decimal) else Decimal(str(value))
    if amount == 0:
        return "$0"
    if abs(amount) < Decimal("0.00005"):
        return f"{'-' if amount < 0 else ''}<$0.0001"
    return f"{'-' if amount < 0 else ''}${abs(amount).quantize(Decimal('0.0001'), rounding=ROUND_HALF_UP):,f}"


def file_labels(files: Iterable[str]) -> dict[str, str]:
    """Each file's name for a table cell: its last part, or as many of its last parts as tell it
    from every other file (``a1b2/events/0.json``, ``c3d4/events/0.json``: OpenHands sessions'
    event files, conversation folders' ``base_state.json``, share their names)."""
    paths = sorted(set(files))
    parts = {path: PurePath(path).parts or (path,) for path in paths}
    labels: dict[str, str] = {}
    depth = 1
    while len(labels) < len(paths):
        pending = [path for path in paths if path not in labels]
        tails = {path: PurePath(*parts[path][-depth:]).as_posix() for path in pending}  # (a root part once: /a/b.json)
        taken = Counter(PurePath(*parts[path][-depth:]).as_posix() for path in paths)
        for path in pending:
            if taken[tails[path]] == 1 or depth >= len(parts[path]):
                labels[path] = tails[path]
        depth += 1
    return labels


def request_where(file: str, line: int, path: str = "", short: Callable[[str], str] | None = None) -> str:
    """Where a request is: ``file:line``, and where in the line's record when one record holds
    several requests (``gemini-session.json:1 messages[7]``); ``short`` shortens the file name
    (its last part by default)."""
    name = short(file) if short is not None else Path(file).name
    return f"{name}:{line}" + (f" {path}" if path else "")
