"""Where requests come from and what judges them, one sub-package per job:

* :mod:`.logs` reading real and recorded logs: safe reading, JSON lines, the normalized trace,
  the log formats, replay and the exact body diff
* :mod:`.scripted` scripted agents, the loop that drives kernel -> simulator, their registry
* :mod:`.audit` prediction per lane, causes with evidence, dollars, what-if, gates
* :mod:`.specs` the specs that judge runs and traces
* :mod:`.runs` sweep plan, execution (local or Dask), the result store, manifest, the run
  record, compare

Imports between them point one way (``tests/test_imports.py``).
"""
