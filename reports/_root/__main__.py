"""Allow ``python -m prefixbench``."""

from prefixbench.reports.entry import console

raise SystemExit(console())
