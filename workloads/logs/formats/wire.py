"""Providers' usage and cache diagnostics as their wire shows them, read into the trace's terms.

The trace counts ``prompt = cache_read + cache_write + uncached`` whatever the provider (see
:mod:`..trace`); each provider's wire reads into that here, and only here within the formats:

* Anthropic Messages: additive, ``input_tokens`` is the uncached part; ``cache_creation``
  splits the writes into 5 m and 1 h.
* DeepSeek's Anthropic-compatible endpoint: ``input_tokens`` excludes reads; no write fee and
  no split, so written tokens are billed as uncached.
* OpenAI Responses and chat completions: subset, the input count INCLUDES the cached tokens
  (and, GPT-5.6 on, the written ones).
"""

from __future__ import annotations

from collections.abc import Mapping

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats.common import as_dict, count
from prefixbench.workloads.logs.trace import Usage


def anthropic_usage(usage: Mapping, where: str) -> Usage:
    """Anthropic usage: ``input_tokens`` is uncached; ``cache_creation`` splits 5 m / 1 h writes."""
    uncached = count(usage.get("input_tokens"), where, "usage.input_tokens")
    read = count(usage.get("cache_read_input_tokens"), where, "usage.cache_read_input_tokens")
    written = count(usage.get("cache_creation_input_tokens"), where, "usage.cache_creation_input_tokens")
    output = count(usage.get("output_tokens"), where, "usage.output_tokens")
    split = as_dict(usage.get("cache_creation"))
    long_part = count(split.get("ephemeral_1h_input_tokens"), where, "cache_creation.ephemeral_1h_input_tokens")
    long_part = min(long_part, written)
    return Usage(read, written - long_part, long_part, uncached, output)


def messages_usage(provider: str, usage: Mapping, where: str) -> Usage:
    """Usage of an Anthropic Messages-shaped response from ``provider``."""
    if provider != "deepseek":
        return anthropic_usage(usage, where)
    # DeepSeek's Anthropic-compatible input_tokens EXCLUDES reads; no write fee, no split.
    return Usage(
        cache_read=count(usage.get("cache_read_input_tokens"), where, "usage.cache_read_input_tokens"),
        uncached=count(usage.get("input_tokens"), where, "usage.input_tokens")
        + count(usage.get("cache_creation_input_tokens"), where, "usage.cache_creation_input_tokens"),
        output=count(usage.get("output_tokens"), where, "usage.output_tokens"),
    )


def openai_usage(usage: Mapping, where: str) -> Usage:
    """OpenAI usage, Responses (``input_tokens``) or chat completions (``prompt_tokens``): the
    input count includes the cached and written tokens."""
    if "input_tokens" in usage:  # Responses API: input includes cached (and, GPT-5.6+, written) tokens
        total = count(usage.get("input_tokens"), where, "usage.input_tokens")
        details = as_dict(usage.get("input_tokens_details"))
        cached = count(details.get("cached_tokens"), where, "input_tokens_details.cached_tokens")
        written = count(details.get("cache_write_tokens"), where, "input_tokens_details.cache_write_tokens")
        output = count(usage.get("output_tokens"), where, "usage.output_tokens")
    else:  # chat completions
        total = count(usage.get("prompt_tokens"), where, "usage.prompt_tokens")
        details = as_dict(usage.get("prompt_tokens_details"))
        cached = usage.get("prompt_cache_hit_tokens")
        if cached is None:
            cached = details.get("cached_tokens")
        cached = count(cached, where, "cached tokens")
        written = count(details.get("cache_write_tokens"), where, "prompt_tokens_details.cache_write_tokens")
        output = count(usage.get("completion_tokens"), where, "usage.completion_tokens")
    if cached + written > total:
        raise UserError(f"{where}: cached ({cached}) and written ({written}) tokens exceed input tokens ({total})")
    return Usage(cache_read=cached, cache_write_5m=written, uncached=total - cached - written, output=output)


DIAGNOSTIC_LABELS = (
    "model_changed",
    "system_changed",
    "tools_changed",
    "messages_changed",
    "previous_message_not_found",
)
_DIAGNOSTIC_KEYS = ("cache_miss_reason", "cache_diagnostics", "diagnostics", "cache_diagnosis")
_DIAGNOSTIC_KEY_SET = frozenset(_DIAGNOSTIC_KEYS)


def diagnostic(obj: object) -> str | None:
    """Anthropic's cache diagnostic label, wherever a response carries it (usage or top level)."""
    if not isinstance(obj, dict):
        return None
    usage = obj.get("usage")
    message = obj.get("message")
    if not any(
        isinstance(holder, dict) and not _DIAGNOSTIC_KEY_SET.isdisjoint(holder)
        for holder in (obj, usage, message, message.get("usage") if isinstance(message, dict) else None)
    ):
        return None
    for holder in (obj, as_dict(obj.get("usage")), as_dict(obj.get("message")), as_dict(as_dict(obj.get("message")).get("usage"))):
        for key in _DIAGNOSTIC_KEYS:
            label = _label_of(holder.get(key))
            if label is not None:
                return label
    return None


def _label_of(value: object) -> str | None:
    if isinstance(value, str):
        return value if value in DIAGNOSTIC_LABELS or value == "unavailable" else None
    if isinstance(value, dict):
        for key in ("type", "reason", "cache_miss_reason", "code"):
            label = _label_of(value.get(key))
            if label is not None:
                return label
    return None
