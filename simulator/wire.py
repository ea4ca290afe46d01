"""Wire model: what a provider receives.

A :class:`Request` is the request family (:class:`Envelope`) plus the prompt (tools, system,
messages) plus ``max_tokens`` and the purpose. Everything is a frozen, hashable value so that
renderings can be memoized and requests compared structurally.

``max_tokens`` is deliberately not part of the envelope: it caps output and does not shape the
cached prompt (seed 001: folds with a matching effort but another cap still reused 99.9%).
"""

from __future__ import annotations

import json
from typing import Literal, TypeAlias

import msgspec

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
Purpose: TypeAlias = Literal["conversation", "compaction"]
#: Lifetime of an Anthropic cache entry: 5 minutes (the default) or 1 hour.
CacheTtl: TypeAlias = Literal["5m", "1h"]
#: The part of the prompt a cache breakpoint sits in, in wire order.
CacheSection: TypeAlias = Literal["tools", "system", "messages"]

#: Field names under which protocols carry an assistant turn's reasoning.
REASONING_FIELDS: tuple[str, ...] = ("reasoning_content", "reasoning_text", "reasoning")


class Envelope(msgspec.Struct, frozen=True):
    """The request family a provider cache keys on."""

    provider: str
    model: str
    reasoning_effort: str | None = None
    temperature: float | None = None
    stop: tuple[str, ...] | None = None

    def label(self) -> str:
        """Short human-readable form, e.g. ``mock/mock effort=max``."""
        parts = [f"{self.provider}/{self.model}"]
        if self.reasoning_effort is not None:
            parts.append(f"effort={self.reasoning_effort}")
        if self.temperature is not None:
            parts.append(f"temperature={self.temperature:g}")
        if self.stop is not None:
            parts.append(f"stop={list(self.stop)!r}")
        return " ".join(parts)


class Text(msgspec.Struct, frozen=True):
    """A text block."""

    text: str


class Reasoning(msgspec.Struct, frozen=True):
    """Reasoning (thinking) text, and the wire field a protocol replays it in."""

    text: str
    field: str = "reasoning_content"


class ToolCall(msgspec.Struct, frozen=True):
    """A model's request to run a tool; ``arguments`` is the raw JSON string."""

    call_id: str
    name: str
    arguments: str


class ToolResult(msgspec.Struct, frozen=True):
    """The answer to one tool call."""

    call_id: str
    content: tuple[Text, ...]
    is_error: bool = False

    def text_chars(self) -> int:
        """Unicode code points of the text content."""
        return sum(len(block.text) for block in self.content)


Block: TypeAlias = Text | Reasoning | ToolCall | ToolResult


class Message(msgspec.Struct, frozen=True):
    """One message: a role and its blocks, in order."""

    role: Role
    blocks: tuple[Block, ...]

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The tool-call blocks of this message."""
        return tuple(block for block in self.blocks if isinstance(block, ToolCall))

    @property
    def tool_results(self) -> tuple[ToolResult, ...]:
        """The tool-result blocks of this message."""
        return tuple(block for block in self.blocks if isinstance(block, ToolResult))

    @property
    def reasoning(self) -> tuple[Reasoning, ...]:
        """The reasoning blocks of this message."""
        return tuple(block for block in self.blocks if isinstance(block, Reasoning))

    def text(self) -> str:
        """Concatenated text of the text blocks."""
        return "".join(block.text for block in self.blocks if isinstance(block, Text))


class ToolSchema(msgspec.Struct, frozen=True):
    """A tool definition; ``parameters`` is canonical JSON (sorted keys, no spaces)."""

    name: str
    description: str
    parameters: str = "{}"

    @staticmethod
    def make(name: str, description: str, parameters: dict[str, object] | None = None) -> ToolSchema:
        """Build a schema from a parameters dict, canonicalizing its JSON."""
        return ToolSchema(name, description, canonical_json(parameters or {}))


class CacheBreakpoint(msgspec.Struct, frozen=True):
    """A ``cache_control`` marker on one block: it shapes what is cached, never the prompt bytes."""

    section: CacheSection
    #: Tool index, system block index, or block index inside message ``message_idx``.
    block_idx: int
    #: The message the block is in (``messages`` section only).
    message_idx: int | None = None
    ttl: CacheTtl = "5m"


class Request(msgspec.Struct, frozen=True):
    """Everything one call sends: the family, the prompt, the output cap and why it was sent."""

    envelope: Envelope
    messages: tuple[Message, ...]
    system: str = ""
    tools: tuple[ToolSchema, ...] = ()
    max_tokens: int | None = None
    purpose: Purpose = "conversation"
    #: The system prompt as several text blocks (Anthropic's array form, so breakpoints can sit
    #: between them); when given, ``system`` stays empty. Renders differently from ``system``.
    system_blocks: tuple[str, ...] = ()
    #: Explicit cache breakpoints (Anthropic ``cache_control``), at most 4; not prompt bytes.
    cache_breakpoints: tuple[CacheBreakpoint, ...] = ()
    #: Automatic caching (one top-level ``cache_control``): its TTL, or None when off.
    auto_cache: CacheTtl | None = None
    #: The cache lifetime the body asks for, where the provider takes one per request (OpenAI's
    #: ``prompt_cache_retention``: ``in_memory`` / ``24h``; ``prompt_cache_options.ttl``:
    #: ``30m``, ``12h`` on GPT-6.2 Sol); None: not asked. Not prompt bytes.
    retention: str | None = None
    #: The body carried ``cache_control`` (top level, on a message or one of its parts) that its
    #: reader did not place as :attr:`cache_breakpoints` (an OpenAI-shaped chat-completions body):
    #: the request is marked, though no replay places its marks. Not prompt bytes.
    cache_marked: bool = False

    def __post_init__(self) -> None:
        if self.system and self.system_blocks:
            raise ValueError("a request carries its system prompt in system or system_blocks, not both")


def user_text(text: str) -> Message:
    """A user message with one text block."""
    return Message("user", (Text(text),))


def canonical_json(value: object) -> str:
    """Compact, key-sorted, non-ASCII-preserving JSON: the one encoding used for hashing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
