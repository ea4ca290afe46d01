"""Parsing of option values shared by the subcommands (windows, comma lists)."""

from __future__ import annotations

from prefixbench.simulator.errors import UserError


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
