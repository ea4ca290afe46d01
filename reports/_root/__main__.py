"""Allow ``python -m prefixbench``."""

from prefixbench.reports.cli import main

raise SystemExit(main())
