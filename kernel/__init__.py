"""The agent's side: session log, token meter, pruner, compaction engines, presets.

Builds requests (:mod:`prefixbench.simulator.wire` types); never reads a cache. The public
engine API (:mod:`prefixbench.kernel.api`) is re-exported here: write an engine against
these names only.
"""

from prefixbench.kernel.api import (
    API_VERSION,
    CompactionError,
    Engine,
    EngineBase,
    EngineError,
    EngineFactory,
    EngineOptions,
    Envelope,
    Header,
    Measurement,
    Message,
    ModelInfo,
    Preset,
    Reasoning,
    Reply,
    Request,
    Session,
    StepContext,
    Text,
    ToolCall,
    ToolResult,
    count_tokens,
    user_text,
    warn,
)
from prefixbench.kernel.api import __all__ as __all__
