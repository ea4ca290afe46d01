"""``prefixbench audit``: real agent logs in, every request predicted, every miss explained and priced.

Modules, in the order data flows through them (the reading side lives in
:mod:`prefixbench.workloads.logs`: the normalized trace, the folder walk and the log formats):

* :mod:`prefixbench.simulator.chain` the prefix-chain cache model for logs without request bodies
* :mod:`.causes` the closed set of causes and evidence levels
* :mod:`.core` prediction per lane, causes, dollars and totals: :func:`.core.run_audit`
* :mod:`.gate` ``--fail-on`` / ``--min-hit-ratio`` / ``--max-lost-usd`` and the JUnit view
* :mod:`.whatif` re-simulation of the log with one fix at a time
* :mod:`.losses` the loss split (recoverable, unavoidable, unknown) and the recommendation record
* :mod:`.advice` what to change: the recoverable misses' fixes re-simulated and ranked

The writers (table, JSON, Markdown, CSV, PNG) live in :mod:`prefixbench.reports.audit`.
"""
