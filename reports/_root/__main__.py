"""Allow ``python -m prefixbench``."""

from prefixbench.reports.entry import main

raise SystemExit(main())
