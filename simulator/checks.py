"""Type checks for values read from configs, option strings and logs, in one place.

JSON and TOML give ``True`` where a number was meant as easily as ``1``, and Python counts
``bool`` as an ``int``; every reader asks these instead of repeating ``isinstance`` pairs.
"""

from __future__ import annotations


def is_int(value: object) -> bool:
    """An integer that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    """An int or a float that is not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def spelled(value: object) -> str:
    """``value`` as a config file or a JSON object spells it, for an error line that quotes what it
    read: ``true``, ``false``, ``null`` (Python's ``True``, ``False``, ``None`` are no one's
    spelling), else as Python shows it (``6.0``, ``'text'``, ``[1, 2]``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else repr(value)


def range_text(low: int, high: int | None = None) -> str:
    """An integer option's accepted range in the words its ``--help``, its error line and the docs
    all use: ``1 to 10,000``, or ``0 or more`` where it has no upper end."""
    return f"{low:,} or more" if high is None else f"{low:,} to {high:,}"


def is_positive_int(value: object, *, minimum: int = 1) -> bool:
    """An integer (not a bool) of at least ``minimum``."""
    return is_int(value) and value >= minimum  # type: ignore[operator]
