"""AWS Bedrock: cache points on Claude and Amazon Nova models, additive usage, per-model minimums.

Facts (https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html) [O]: a
request marks ``cachePoint`` blocks (Converse) or ``cache_control`` (InvokeModel, Anthropic's
body); on Claude one simplified point looks back about 20 blocks, or several points with mixed
5 m / 1 h lifetimes (1 h on some models); writes cost more than input and reads less (Claude:
1.25x and 0.1x, as on Anthropic); reads do not count toward quotas. Converse usage names
``cacheReadInputTokens`` and ``cacheWriteInputTokens`` beside ``inputTokens``, which excludes
them (additive): "total input tokens = inputTokens + cacheReadInputTokens +
cacheWriteInputTokens"; ``cacheDetails`` splits the write by TTL (``[{ttl, inputTokens}]``).

Minimums per cache checkpoint, the page's model table [O] (first match wins below): 512 for
Opus 5, Fable 5 and Mythos 5; 4,096 for Opus 4.5 to 4.7, Haiku 4.5 and Mythos Preview; 2,048
for Claude 3.5 Haiku (an earlier version of the page); 1,024 for the other Claude models (Sonnet
4.5 was listed at 4,096 in one version of the page and 1,024 in the latest, which is kept).
Anthropic's own claude-api skill (anthropics/skills) says its table, 2,048 for Opus 4.7 and
Mythos Preview, applies on every platform, Bedrock included: a conflict between two official
sources; the AWS page's 4,096 is kept here.

Amazon Nova (Micro, Lite, Pro, Premier; an earlier version of the same page's table) [O]: a
checkpoint needs "1K" tokens (1,000 here, as a gateway's copy of the table writes it [S]; one
SDK sample uses 1,024 [S]; Nova 2 Lite, not in the table, is assumed the same), at most 4 per
request, only in ``system`` and ``messages`` (no cache point in ``tools``), at most 20K tokens
cached per request (the gateway's copy says 32K [S]), a 5 min TTL; Nova also caches text
prompts implicitly, without cache points, for latency (the latest page bills any read at the
cache-read rate). Prices, in
``simulator/data/prices.csv``, are per model: a Nova read costs 0.25x input and a write bills
as input (no write fee); the multipliers below are Claude's. Nova's InvokeModel body is its own
shape (``messages`` of ``{"text": ...}`` blocks, not replayed); its usage says
``inputTokens`` beside ``cacheReadInputTokenCount`` / ``cacheWriteInputTokenCount``.

InvokeModel on Claude sends Anthropic's Messages body, recognised by :data:`MESSAGES_BODY_KEY`
(Bedrock requires it on Claude bodies), and answers Anthropic's usage; a streamed answer's last
chunk carries ``amazon-bedrock-invocationMetrics`` (``inputTokenCount``, ``outputTokenCount``,
``cacheReadInputTokenCount``, ``cacheWriteInputTokenCount``, additive as well), and a
non-streamed one the same counts in ``X-Amzn-Bedrock-*-Token-Count`` headers (see
:data:`COUNT_HEADERS`).

Its request bodies replay through the ``anthropic`` cache model with these rules
(``rules=bedrock``: Bedrock's minimums, Nova's cap): InvokeModel's Messages body, and a
Converse body, whose ``cachePoint`` blocks are breakpoints at the end of the block before them
(:mod:`prefixbench.workloads.logs.converse_body`).
"""

from __future__ import annotations

from collections.abc import Mapping

from prefixbench.simulator.providers.anthropic import STRIPS_PRIOR_THINKING
from prefixbench.simulator.providers.anthropic import read_usage as read_anthropic_usage
from prefixbench.simulator.providers.base import ProviderRules, count, mapping
from prefixbench.simulator.usage import Usage

#: The geographies of cross-region inference profiles (``us.anthropic.claude-...``,
#: https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html).
GEOGRAPHIES = ("", "us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.")

#: Minimum tokens per cache checkpoint by model (see the module doc); others: 1,024.
MIN_TOKENS_BY_MODEL: tuple[tuple[str, int], ...] = (
    (r"(opus|fable|mythos)-5", 512),
    (r"(opus-4-[5-7]|haiku-4-5|mythos-preview)", 4096),
    (r"3-5-haiku", 2048),
    (r"nova", 1000),
)

#: The key Bedrock requires in a Claude InvokeModel body: such a body is Anthropic's Messages shape.
MESSAGES_BODY_KEY = "anthropic_version"

#: The usage of a non-streamed InvokeModel answer in its headers (lower case): the field of the
#: ``amazon-bedrock-invocationMetrics`` record each one carries.
COUNT_HEADERS: tuple[tuple[str, str], ...] = (
    ("x-amzn-bedrock-input-token-count", "inputTokenCount"),
    ("x-amzn-bedrock-output-token-count", "outputTokenCount"),
    ("x-amzn-bedrock-cache-read-input-token-count", "cacheReadInputTokenCount"),
    ("x-amzn-bedrock-cache-write-input-token-count", "cacheWriteInputTokenCount"),
)


def read_usage(usage: Mapping[str, object], where: str) -> Usage:
    """Bedrock usage in any of its three spellings, all additive: Converse's (``inputTokens``,
    also Nova's InvokeModel answer), the invocation metrics (``inputTokenCount``), else Anthropic's."""
    if "inputTokens" in usage:
        read_key = "cacheReadInputTokens" if "cacheReadInputTokens" in usage else "cacheReadInputTokenCount"
        write_key = "cacheWriteInputTokens" if "cacheWriteInputTokens" in usage else "cacheWriteInputTokenCount"
        uncached_key, output_key = "inputTokens", "outputTokens"
    elif "inputTokenCount" in usage:
        read_key, write_key = "cacheReadInputTokenCount", "cacheWriteInputTokenCount"
        uncached_key, output_key = "inputTokenCount", "outputTokenCount"
    else:
        return read_anthropic_usage(usage, where)
    written = count(usage.get(write_key), where, f"usage.{write_key}")
    long_part = min(_written_1h(usage.get("cacheDetails"), where), written)
    return Usage(
        cache_read=count(usage.get(read_key), where, f"usage.{read_key}"),
        cache_write_5m=written - long_part,
        cache_write_1h=long_part,
        uncached=count(usage.get(uncached_key), where, f"usage.{uncached_key}"),
        output=count(usage.get(output_key), where, f"usage.{output_key}"),
    )


def _written_1h(details: object, where: str) -> int:
    """The tokens ``cacheDetails`` says were written with the 1 h TTL (0 when it says nothing)."""
    if not isinstance(details, list):
        return 0
    return sum(
        count(mapping(item).get("inputTokens"), where, "usage.cacheDetails[].inputTokens")
        for item in details
        if mapping(item).get("ttl") == "1h"
    )


RULES = ProviderRules(
    hosts_bill_list_price=True,  # closed weights: its own ids are Bedrock's
    speaks_messages=True,
    name="bedrock",
    usage_convention="additive",
    read_usage=read_usage,
    model_prefixes=tuple(f"{geo}{vendor}" for vendor in ("anthropic.", "amazon.nova") for geo in GEOGRAPHIES),
    # The Claude models it serves drop earlier turns' thinking as on Anthropic's API (the same
    # model list; no Bedrock log with thinking has measured it).
    strips_prior_thinking=STRIPS_PRIOR_THINKING,
    url_markers=("bedrock",),
    block_tokens=1,
    min_tokens=1024,
    min_tokens_by_model=MIN_TOKENS_BY_MODEL,
    min_applies_to="prompt",
    ttls_ms=(("5m", 5 * 60_000), ("1h", 60 * 60_000)),
    default_ttl="5m",
    ttl_per_request=True,
    default_ttl_only=(r"nova",),
    max_cached_by_model=((r"nova", 20_000),),
    max_breakpoints=4,
    lookback_blocks=20,
    read_multiplier=0.1,
    write_multiplier=1.25,
    write_1h_multiplier=2.0,
    bills_writes=True,
    body_model="anthropic",
    body_model_options=(("auto_when_unmarked", None), ("rules", "bedrock")),
    chain_as="bedrock",
    sources=("https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html",),
)
