"""The agent's side: session log, token meter, pruner, compaction engines, presets.

Builds requests (:mod:`prefixbench.simulator.wire` types); never reads a cache.
"""
