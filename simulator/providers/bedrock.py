"""AWS Bedrock: cache points on Claude (and Nova) models, additive usage, per-model minimums.

Facts (https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html) [O]: a
request marks ``cachePoint`` blocks (Converse) or ``cache_control`` (InvokeModel, Anthropic's
body); on Claude one simplified point looks back about 20 blocks, or several points with mixed
5 m / 1 h lifetimes (1 h on some models); writes cost more than input and reads less (Claude:
1.25x and 0.1x, as on Anthropic); reads do not count toward quotas. Converse usage names
``cacheReadInputTokens`` and ``cacheWriteInputTokens`` beside ``inputTokens``, which excludes
them (additive). Minimums per model: 1,024 for Sonnet and 4,096 for Haiku per one SDK [S].

Its request bodies replay through the ``anthropic`` cache model.
"""

from __future__ import annotations

from collections.abc import Mapping

from prefixbench.simulator.providers.anthropic import read_usage as read_anthropic_usage
from prefixbench.simulator.providers.base import ProviderRules, count
from prefixbench.simulator.usage import Usage

MIN_TOKENS_BY_MODEL: tuple[tuple[str, int], ...] = (
    (r"haiku", 4096),
    (r"sonnet", 1024),
)


def read_usage(usage: Mapping[str, object], where: str) -> Usage:
    """Converse usage (camelCase; ``inputTokens`` excludes reads and writes), else Anthropic's."""
    if "inputTokens" not in usage:
        return read_anthropic_usage(usage, where)
    return Usage(
        cache_read=count(usage.get("cacheReadInputTokens"), where, "usage.cacheReadInputTokens"),
        cache_write_5m=count(usage.get("cacheWriteInputTokens"), where, "usage.cacheWriteInputTokens"),
        uncached=count(usage.get("inputTokens"), where, "usage.inputTokens"),
        output=count(usage.get("outputTokens"), where, "usage.outputTokens"),
    )


RULES = ProviderRules(
    speaks_messages=True,
    name="bedrock",
    usage_convention="additive",
    read_usage=read_usage,
    model_prefixes=tuple(f"{region}anthropic." for region in ("", "us.", "eu.", "apac.", "global."))
    + ("amazon.nova", "us.amazon.nova"),
    url_markers=("bedrock",),
    block_tokens=1,
    min_tokens=1024,
    min_tokens_by_model=MIN_TOKENS_BY_MODEL,
    min_applies_to="prompt",
    ttls_ms=(("5m", 5 * 60_000), ("1h", 60 * 60_000)),
    default_ttl="5m",
    ttl_per_request=True,
    max_breakpoints=4,
    lookback_blocks=20,
    read_multiplier=0.1,
    write_multiplier=1.25,
    write_1h_multiplier=2.0,
    bills_writes=True,
    body_model="anthropic",
    body_model_options=(("auto_when_unmarked", None),),
    chain_as="bedrock",
    sources=("https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html",),
)
