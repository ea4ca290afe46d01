"""What the kernel knows about a model endpoint: its adapter facts, and how it is called."""

from __future__ import annotations

from typing import Protocol

import msgspec
from prefixbench.simulator.wire import Block, Envelope, Request, Text, ToolCall


class ModelInfo(msgspec.Struct, frozen=True):
    """Adapter-declared facts about one provider/model route."""

    provider: str
    model: str
    context_window: int
    default_max_tokens: int
    #: Effort the adapter sends when a call names none (seed 001: ``high``).
    default_effort: str | None = None

    def wire_envelope(self, config: Envelope) -> Envelope:
        """The envelope actually sent: the adapter fills in its default effort when none is set."""
        if config.reasoning_effort is None and self.default_effort is not None:
            return Envelope(config.provider, config.model, self.default_effort, config.temperature, config.stop)
        return config


class Reply(msgspec.Struct, frozen=True):
    """A model's answer to one request (or the provider's refusal)."""

    blocks: tuple[Block, ...] = ()
    output_tokens: int = 0
    #: Provider error (e.g. an HTTP 400 reason); ``blocks`` is then empty.
    error: str | None = None

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool calls the model asked for."""
        return tuple(block for block in self.blocks if isinstance(block, ToolCall))

    def text(self) -> str:
        """Concatenated text blocks."""
        return "".join(block.text for block in self.blocks if isinstance(block, Text))


class ModelClient(Protocol):
    """How the kernel calls a model (the summary call): send one request, get the reply."""

    def __call__(self, request: Request) -> Reply:
        """Send ``request`` and return the model's reply."""
        ...


class ModelCatalog(Protocol):
    """Resolves a provider/model route to its adapter facts."""

    def __call__(self, provider: str, model: str) -> ModelInfo:
        """Adapter facts for ``provider``/``model``."""
        ...
