"""Compaction strategies of real agents, each an engine built on the public engine API only
(:mod:`prefixbench.kernel`) and installed under the ``prefixbench.engines`` entry-point group.

What each models, from which public source, and what it simplifies: docs/strategies_agents.md.
"""
