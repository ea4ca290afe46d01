"""Two engines written against prefixbench's public engine API (``prefixbench.kernel``) only.

* ``truncate-oldest`` drops the oldest messages when the context is full and declares
  nothing: each drop rewrites history the provider has cached, silently. The specs must
  catch it.
* ``cache-aware`` summarizes a head region through a summary call that replays exactly the
  messages the last request sent (so it hits the warm cache and pays only its instruction),
  then declares the rewrite. It passes.

Each is built by a factory ``factory(window, options)``; the package lists both under the
``prefixbench.engines`` entry-point group.
"""

from __future__ import annotations

from prefixbench.kernel import EngineOptions

from prefixbench_example_engines.cache_aware import CacheAwareEngine
from prefixbench_example_engines.truncate import TruncateOldestEngine

__all__ = ["CacheAwareEngine", "TruncateOldestEngine", "cache_aware", "truncate_oldest"]


def truncate_oldest(window: int, options: EngineOptions) -> TruncateOldestEngine:
    """The silently truncating engine, sized to ``window``."""
    return TruncateOldestEngine(window)


def cache_aware(window: int, options: EngineOptions) -> CacheAwareEngine:
    """The cache-aware summarizing engine, sized to ``window``."""
    return CacheAwareEngine(window)
