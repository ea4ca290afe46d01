"""The docs' tables that the code's own tables decide: the log formats (``FORMATS``) in
docs/formats.md and the provider rules (``PROVIDERS``) in docs/providers.md.

Each table sits in its page between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``.
``python -m prefixbench.reports.docs_tables [DOCS_DIR]`` rewrites them from the code, and
``tests/test_docs.py`` fails when a page is out of date, so a format or a provider added to its
table cannot be missing from the guide.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from prefixbench.reports.textable import markdown_lines

_USAGE = {
    "additive": "additive: input excludes reads and writes",
    "subset": "subset: input includes the cached part",
    "by-endpoint": "as the serving provider reports it",
    "none": "none (predictions only)",
}


def formats_table() -> str:
    """One row per log format of ``FORMATS``, in the table's order."""
    from prefixbench.workloads.logs.formats import FORMATS
    from prefixbench.workloads.specs.trace import TRACE_FORMATS

    rows = []
    for fmt in FORMATS.values():
        readers = ["audit"]
        if fmt.replay is not None:
            readers.append("replay" if fmt.replay.name == fmt.name else f"replay as `{fmt.replay.name}`")
        if fmt.name in TRACE_FORMATS:
            readers.append("check --trace")
        aliases = ", ".join(f"`{alias}`" for alias in fmt.aliases) or "-"
        rows.append([f"`{fmt.name}`", aliases, "; ".join(readers), _USAGE[fmt.usage], fmt.description])
    return "\n".join(markdown_lines(["format", "also named", "read by", "usage in the log", "holds"], rows,
                                    escape_pipes=True))


def providers_table() -> str:
    """One row per provider rule of ``PROVIDERS``: the facts the cache models and the audit read."""
    from prefixbench.simulator.providers import PROVIDERS

    rows = []
    for rules in PROVIDERS.values():
        minimum = f"{rules.min_tokens:,}" + (" (per model)" if rules.min_tokens_by_model else "")
        minimum += "" if rules.min_tokens == 0 else f", per {rules.min_applies_to}"
        ttls = ", ".join(label + (" (default)" if label == rules.default_ttl else "") for label, _ in rules.ttls_ms)
        breakpoints = "-" if rules.max_breakpoints is None else f"{rules.max_breakpoints}"
        if rules.lookback_blocks is not None:
            breakpoints += f", {rules.lookback_blocks}-block lookback"
        writes = f"{rules.write_multiplier:g}x" if rules.bills_writes else "not billed apart"
        if rules.write_1h_multiplier is not None:
            writes += f" (1 h: {rules.write_1h_multiplier:g}x)"
        model = "-" if rules.body_model is None else f"`{rules.body_model}`"
        options = "<br>".join(f"`{o.key}={o.default_text}` [{o.source}], seen {o.seen}" for o in rules.cache_options)
        rows.append([
            f"`{rules.name}`", rules.usage_convention, f"{rules.block_tokens:,}", minimum or "0", ttls or "-",
            breakpoints, f"{rules.read_multiplier:g}x", writes,
            ", ".join(f"`{field}`" for field in rules.diagnostics_fields) or "-",
            model, options or "-", " ".join(f"<{url}>" for url in rules.sources) or "the module's doc",
        ])
    header = ["provider", "usage", "step (tokens)", "minimum", "TTLs", "breakpoints", "read", "write", "diagnostics",
              "`--cache` model", "its options: default [source], range seen", "sources"]
    return "\n".join(markdown_lines(header, rows, escape_pipes=True))


#: Page, marker name and the function that makes the table.
TABLES: tuple[tuple[str, str, Callable[[], str]], ...] = (
    ("formats.md", "formats", formats_table),
    ("providers.md", "providers", providers_table),
)


def replace_block(text: str, name: str, table: str) -> str:
    """``text`` with the block between ``name``'s markers replaced by ``table``."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in text or end not in text:
        raise ValueError(f"no {begin} ... {end} block")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{table}\n{end}{tail}"


def main(argv: list[str]) -> int:
    docs = Path(argv[0]) if argv else Path("docs")
    for page, name, make in TABLES:
        path = docs / page
        text = path.read_text(encoding="utf-8")
        new = replace_block(text, name, make())
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote the {name} table in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
