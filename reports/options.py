"""Parsing of option values shared by the subcommands (windows, comma lists)."""

from __future__ import annotations

from prefixbench.simulator.errors import UserError


class Default(str):
    """An option's default value, told apart from the same text typed on the command line
    (a grid file's value is overridden only by flags the user gave)."""


def given(value: object) -> bool:
    """Whether an option value came from the command line (not its default, not unset)."""
    return value is not None and not isinstance(value, Default)


def parse_window(text: str) -> int:
    """``32k`` -> 32,000; ``1m`` -> 1,000,000; ``128000`` -> 128,000 (k = 1,000, as in seed 001)."""
    raw = text.strip().lower().replace("_", "").replace(",", "")
    scale = 1
    if raw.endswith("k"):
        raw, scale = raw[:-1], 1_000
    elif raw.endswith("m"):
        raw, scale = raw[:-1], 1_000_000
    try:
        value = float(raw) * scale
    except ValueError:
        raise UserError(f"--windows: {text!r} is not a token count (use e.g. 32k, 128k or 128000)") from None
    if value != int(value) or value <= 0:
        raise UserError(f"--windows: window must be a positive whole number of tokens, got {text!r}")
    return int(value)


def parse_list(text: str, option: str) -> tuple[str, ...]:
    """A comma-separated option value; empty items are an error."""
    items = tuple(item.strip() for item in text.split(","))
    if not all(items):
        raise UserError(f"{option}: empty item in {text!r}")
    return items


#: More seeds than this in one sweep is almost certainly a typo (``0-100000``).
MAX_SEEDS = 10_000


def parse_seeds(text: str, option: str = "--seeds") -> tuple[int, ...]:
    """``0-16`` (inclusive), ``0,3,5`` or a mix (``0-3,7``) -> the seeds, in the order given."""
    seeds: list[int] = []
    for item in parse_list(text, option):
        low, sep, high = item.partition("-")
        try:
            first = int(low)
            last = int(high) if sep else first
        except ValueError:
            raise UserError(f"{option}: {item!r} is not a seed or a range of seeds (e.g. 0-16 or 0,3,5)") from None
        if first < 0 or last < first:
            raise UserError(f"{option}: {item!r} is not a range of seeds >= 0 (e.g. 0-16)")
        if last - first + len(seeds) >= MAX_SEEDS:
            raise UserError(f"{option}: {item!r} names more than {MAX_SEEDS:,} seeds")
        seeds.extend(range(first, last + 1))
    if len(set(seeds)) != len(seeds):
        raise UserError(f"{option}: {text!r} names a seed twice")
    return tuple(seeds)
