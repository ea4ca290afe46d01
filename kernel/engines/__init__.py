"""Compaction engines. Each one decides before a step whether and how to shrink the context,
and renders the messages a request carries."""
