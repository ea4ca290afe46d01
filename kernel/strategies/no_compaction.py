"""``no-compaction``: the baseline. Sends the whole conversation every step and never compacts.

Every request extends the previous one byte for byte, so it keeps every cache hit there is; the
price is a prompt that grows without bound (past the window on long sessions, which a provider
refuses). What every other strategy is measured against (docs/strategies.md).
"""

from __future__ import annotations

from prefixbench.kernel import EngineBase, EngineOptions

from prefixbench.kernel.strategies.settings import read_settings


class NoCompaction(EngineBase):
    """Sends the session's messages as they are; owns no tools, declares nothing."""

    name = "no-compaction"


def factory(window: int, options: EngineOptions) -> NoCompaction:
    """The baseline engine (it takes no settings)."""
    read_settings(NoCompaction.name, options.config, {})
    return NoCompaction()
