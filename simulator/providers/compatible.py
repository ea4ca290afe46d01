"""Usage readers shared by providers that serve both OpenAI- and Anthropic-shaped endpoints.

Several providers (Kimi, Qwen, MiniMax, GLM) answer on an OpenAI-compatible chat-completions
endpoint and on an Anthropic-compatible Messages endpoint. Their usage reads into one
:class:`~prefixbench.simulator.usage.Usage` either way: the Messages shape names
``cache_read_input_tokens`` and ``cache_creation_input_tokens`` beside ``input_tokens`` (which
excludes both); the chat shape puts ``cached_tokens`` (and, where writes are billed,
``cache_creation_input_tokens`` or ``cache_write_tokens``) inside ``prompt_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping

from prefixbench.simulator.providers.base import count, given, mapping, subset_usage
from prefixbench.simulator.usage import Usage


def read_usage(usage: Mapping[str, object], where: str, *, bills_writes: bool) -> Usage:
    """Either shape; written tokens count as writes only where the provider bills them apart
    (else they are uncached input, which is what they cost).

    Raises:
        UserError: a bad count, or cached and written tokens above the prompt count where the
            cached ones alone are not (cached tokens above it read as a count without them:
            see :func:`~.base.subset_usage`).
    """
    if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage or "input_tokens" in usage and "prompt_tokens" not in usage and "input_tokens_details" not in usage:
        read = count(usage.get("cache_read_input_tokens"), where, "usage.cache_read_input_tokens")
        written = count(usage.get("cache_creation_input_tokens"), where, "usage.cache_creation_input_tokens")
        uncached = count(usage.get("input_tokens"), where, "usage.input_tokens")
        output = count(usage.get("output_tokens"), where, "usage.output_tokens")
        # Neither cache field (a server that omits both or sends them as null): the cache use is
        # not reported, which is not a 0 read, as in the chat shape below.
        reported = given(usage, "cache_read_input_tokens", "cache_creation_input_tokens")
        if not bills_writes:
            return Usage(cache_read=read, uncached=uncached + written, output=output, cache_reported=reported)
        return Usage(cache_read=read, cache_write_5m=written, uncached=uncached, output=output, cache_reported=reported)
    responses = "input_tokens" in usage
    total_key, details_key, output_key = (
        ("input_tokens", "input_tokens_details", "output_tokens") if responses
        else ("prompt_tokens", "prompt_tokens_details", "completion_tokens")
    )
    total = count(usage.get(total_key), where, f"usage.{total_key}")
    details = mapping(usage.get(details_key))
    # Kimi's older chat usage puts cached_tokens at the top level.
    cached_value = details.get("cached_tokens", usage.get("cached_tokens"))
    cached = count(cached_value, where, f"{details_key}.cached_tokens")
    write_key = "cache_creation_input_tokens" if "cache_creation_input_tokens" in details else "cache_write_tokens"
    written = count(details.get(write_key), where, f"{details_key}.{write_key}")
    output = count(usage.get(output_key), where, f"usage.{output_key}")
    # No cached_tokens anywhere: the cache use is not reported, which is not a 0 read. Cached
    # tokens above the count: a gateway's count without them (see subset_usage).
    return subset_usage(total, cached, written, output, reported=cached_value is not None, bills_writes=bills_writes,
                        excess=f"{where}: cached ({cached}) and written ({written}) tokens exceed {total_key} ({total})")


def reader(*, bills_writes: bool):  # noqa: ANN201 - a UsageReader
    """A :data:`~.base.UsageReader` for a provider that does or does not bill writes apart."""

    def read(usage: Mapping[str, object], where: str) -> Usage:
        return read_usage(usage, where, bills_writes=bills_writes)

    return read
