"""Coding agents' own OpenTelemetry events: the log records Claude Code, Codex, Gemini CLI and
Qwen Code emit for each model call, read as calls by :mod:`.otel` (they sit in the same OTLP
logs exports, the collector's file exporter lines and the JavaScript SDK's serialized records).

These are not the GenAI conventions' names: each agent names its event and its counts its own
way, and counts its input its own way (read from each agent's telemetry source and docs):

===========================  ==========================================================================================
Claude Code                  ``claude_code.api_request`` (the record's body; ``event.name`` is ``api_request``):
                             ``input_tokens``, ``output_tokens``, ``cache_read_tokens``, ``cache_creation_tokens``,
                             ``model``, ``duration_ms``, ``cost_usd``, ``session.id``, ``prompt.id``, ``event.timestamp``.
                             Anthropic's usage as it is: input EXCLUDES reads and writes (additive).
                             From 2.1.300 also ``cache_creation_5m_tokens`` and ``cache_creation_1h_tokens``
                             (``usage.cache_creation``'s split of the writes): the 1 h part is priced as such.
                             ``cost_usd`` is the call priced by Claude Code's own table: summed, and
                             checked against the counts at the price table's row, in a note.
                             Its traces (beta, 2.1.x): a ``claude_code.llm_request`` span, the same counts as
                             flat attributes (no ``gen_ai.usage.*``) and ``speed`` (``fast`` or ``normal``);
                             read where the service logs no ``api_request`` event (else the same calls).
Codex                        ``codex.sse_event`` of ``event.kind`` ``response.completed``: ``input_token_count``,
                             ``output_token_count``, ``cached_token_count``, ``reasoning_token_count``,
                             ``tool_token_count`` (the response's total, despite its name), later
                             ``cache_write_token_count`` (``input_tokens_details.cache_write_tokens``), ``model``,
                             ``conversation.id``; counts written with ``%`` (as strings) by the tracing bridge. The
                             Responses API's usage: input INCLUDES the cached and written parts (subset); reasoning is inside
                             output. ``codex.conversation_starts`` names the ``provider_name`` of its conversation.
                             The record's ``eventName`` is the tracing bridge's (``event otel/src/...rs:925``):
                             its ``event.name`` attribute names the event.
Gemini CLI                   ``gemini_cli.api_response``: ``input_token_count`` (``promptTokenCount``, cached part
                             inside), ``cached_content_token_count``, ``output_token_count`` (``candidatesTokenCount``),
                             ``thoughts_token_count`` (billed as output, not inside it), ``tool_token_count``
                             (``toolUsePromptTokenCount``, prompt counted apart), ``model``, ``session.id``,
                             ``prompt_id``, ``duration_ms``.
Qwen Code                    ``qwen-code.api_response`` (``qwen_code.`` and ``qwen_cli.`` in early releases): Gemini
                             CLI's fields, filled from an OpenAI-shaped usage (thoughts are the reasoning tokens
                             already inside output; no tool count).
===========================  ==========================================================================================

Gemini CLI (from 0.12 it also writes the conventions' ``gen_ai.client.inference.operation.details``
record for each call) says each call twice; where one service writes both, :mod:`.otel` counts
the agent's event and skips the conventions' record, which names no cached or thinking tokens.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from prefixbench.simulator.providers import ANTHROPIC, GEMINI, OPENAI, QWEN, UNKNOWN
from prefixbench.simulator.providers.base import ProviderRules


class AgentEvent(msgspec.Struct, frozen=True):
    """One agent's per-call event: its names and the attributes its counts are in."""

    agent: str
    #: The event's full names (the record's ``eventName``, body or ``event.name``).
    names: tuple[str, ...]
    #: ``event.name`` values without the agent's prefix, with the ``service.name`` that writes them.
    short_names: tuple[str, ...]
    services: tuple[str, ...]
    input: str
    output: str
    read: str
    #: The written count ("" where the agent reports none).
    write: str
    #: additive: input excludes reads and writes; subset: input includes the cached part.
    convention: Literal["additive", "subset"]
    #: Where the session of a call is named.
    session_keys: tuple[str, ...]
    #: Counts added to output (billed as output, reported apart) and to uncached input.
    extra_output: str = ""
    extra_input: str = ""
    #: The provider of a call whose model names none.
    default: ProviderRules = UNKNOWN
    #: ``event.kind`` a record must have to be a call ("" for any).
    kind: str = ""
    #: Events of a failed call (no usage): counted in the notes.
    errors: tuple[str, ...] = ()
    #: The attribute holding the call's cost in dollars as the agent priced it ("" for none): a
    #: check on the audit's dollars (:mod:`.otel` says in a note how many calls it fits).
    cost: str = ""
    #: The agent's own spans that are one call each (its traces), read as its events are.
    span_names: tuple[str, ...] = ()
    #: The attribute naming the call's speed (``fast`` is billed at the model's fast price; "" for none).
    speed: str = ""
    #: The part of the written count written with a 1 h lifetime ("" for none: all of it 5 m).
    write_1h: str = ""

    def reading(self) -> str:
        if self.convention == "additive":
            return f"{self.input} excludes cache reads and writes (Anthropic's usage): uncached = {self.input}"
        parts = f"{self.read} and {self.write}" if self.write else self.read
        minus = f" - {self.write}" if self.write else ""
        extra = f" + {self.extra_input}" if self.extra_input else ""
        out = f"; output = {self.output} + {self.extra_output}" if self.extra_output else ""
        return f"{self.input} includes {parts}: uncached = {self.input} - {self.read}{minus}{extra}{out}"


AGENTS: tuple[AgentEvent, ...] = (
    AgentEvent("Claude Code", ("claude_code.api_request",), ("api_request",), ("claude-code",), "input_tokens", "output_tokens",
               "cache_read_tokens", "cache_creation_tokens", "additive", ("session.id",), default=ANTHROPIC,
               errors=("claude_code.api_error",), cost="cost_usd", span_names=("claude_code.llm_request",), speed="speed",
               write_1h="cache_creation_1h_tokens"),
    AgentEvent("Codex", ("codex.sse_event",), (), (), "input_token_count", "output_token_count", "cached_token_count", "cache_write_token_count", "subset",
               ("conversation.id",), default=OPENAI, kind="response.completed"),
    AgentEvent("Gemini CLI", ("gemini_cli.api_response",), ("api_response",), ("gemini-cli",), "input_token_count", "output_token_count",
               "cached_content_token_count", "", "subset", ("session.id",), extra_output="thoughts_token_count",
               extra_input="tool_token_count", default=GEMINI, errors=("gemini_cli.api_error",)),
    AgentEvent("Qwen Code", ("qwen-code.api_response", "qwen_code.api_response", "qwen_cli.api_response"), (), (), "input_token_count",
               "output_token_count", "cached_content_token_count", "", "subset", ("session.id",), default=QWEN,
               errors=("qwen-code.api_error", "qwen_code.api_error")),
)
#: The event that names a Codex conversation's provider, and its attribute.
CODEX_START = "codex.conversation_starts"
CODEX_PROVIDER = "provider_name"


def _names(event: str, body: object, attributes: dict) -> set[str]:
    # Strings kept before any goes into a set: an ``event.name`` of an object or a list (a log's
    # plain attribute, or ``{"stringValue": {...}}``) is no name, not a TypeError.
    return {n for n in (event, body, attributes.get("event.name")) if isinstance(n, str) and n}


def agent_event(event: str, body: object, attributes: dict, service: str) -> AgentEvent | None:
    """The agent whose per-call event a log record is (its event name, body or ``event.name``;
    an unprefixed ``event.name`` where the service is the agent's), or None."""
    names = _names(event, body, attributes)
    for agent in AGENTS:
        if not names.isdisjoint(agent.names) or (service in agent.services and not names.isdisjoint(agent.short_names)):
            if agent.kind and attributes.get("event.kind") != agent.kind:
                return None
            return agent if attributes.get(agent.input) is not None or attributes.get(agent.output) is not None else None
    return None


def agent_span(name: str, attributes: dict) -> AgentEvent | None:
    """The agent whose per-call span this is (Claude Code's ``claude_code.llm_request``, with its
    counts), or None."""
    for agent in AGENTS:
        if name in agent.span_names:
            return agent if attributes.get(agent.input) is not None or attributes.get(agent.output) is not None else None
    return None


def error_event(event: str, body: object, attributes: dict) -> str | None:
    """The agent whose failed-call event a record is (no usage: the call is not counted), or None."""
    names = _names(event, body, attributes)
    return next((agent.agent for agent in AGENTS if not names.isdisjoint(agent.errors)), None)


def is_codex_start(event: str, body: object, attributes: dict) -> bool:
    return CODEX_START in _names(event, body, attributes)

