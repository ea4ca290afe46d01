"""What every compaction engine offers the agent loop: the public API (:mod:`prefixbench.kernel.api`).

Kept so existing imports keep working; new code imports from :mod:`prefixbench.kernel.api`.
"""

from __future__ import annotations

from prefixbench.kernel.api import CompactionError, Engine, StepContext, warn

__all__ = ["CompactionError", "Engine", "StepContext", "warn"]
