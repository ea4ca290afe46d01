"""``prefixbench audit``: real agent logs in, every request predicted, every miss explained and priced.

Modules, in the order data flows through them:

* :mod:`.trace` the normalized trace every importer yields (the stable data model)
* :mod:`.sources` walking paths, detecting formats, streaming records with ``file:line``
* :mod:`.importers` one importer per log format (Claude Code, HTTP captures, Codex, pi, ...)
* :mod:`prefixbench.simulator.chain` the prefix-chain cache model for logs without request bodies
* :mod:`.causes` the closed set of causes, evidence levels and the exact body diff
* :mod:`.core` prediction per lane, causes, dollars and totals: :func:`.core.run_audit`
* :mod:`.gate` ``--fail-on`` / ``--min-hit-ratio`` / ``--max-lost-usd`` and the JUnit view

The writers (table, JSON, Markdown, CSV, PNG) live in :mod:`prefixbench.reports.audit`.
"""
