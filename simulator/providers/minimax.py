"""MiniMax: automatic caching from 512 tokens, plus Anthropic-style explicit markers.

Facts (https://platform.minimax.io/docs/api-reference/text-prompt-caching, formerly
https://platform.minimax.io/docs/guides/prompt-caching) [O]: caching is automatic for prompts of
512 tokens or more, matched as a prefix; explicit ``cache_control`` markers on the
Anthropic-compatible endpoint work as Anthropic's (20-block lookback, 5 min, renewed by use); a
write costs 1.25x and a read 0.1x (M2.7 lists 0.2x: its price row). An automatic entry's
lifetime is set by the system's load (the Chinese page), not published. Usage is returned in the
shape of the endpoint called (subset on the OpenAI-compatible one).

The two language versions of the page disagree on the order the automatic prefix is built in:
system, tools, messages (the English page, which lists MiniMax-M3 and M3.1-Flash) or tools,
system, history (the Chinese page, platform.minimaxi.com, which lists the M2.1 and M2.5
series). prefixbench renders tools first, as the Chinese page says; under the English order a
change to the tools would keep the system prompt's entry, which is not modelled.
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import CacheOption, ProviderRules
from prefixbench.simulator.providers.compatible import reader

MIN_TOKENS = 512
LOOKBACK_BLOCKS = 20

OPTIONS = (
    CacheOption(key="mode", default="per-request", seen="per-request | explicit | implicit", source="O",
                help="per-request: marked requests explicit, others automatic"),
    CacheOption(key="implicit_ttl_ms", default=None, seen="not published (set by the system's load)", source="O",
                help="idle lifetime of an automatic entry in ms"),
)

RULES = ProviderRules(
    speaks_messages=True,
    name="minimax",
    usage_convention="subset",
    read_usage=reader(bills_writes=True),
    model_prefixes=("minimax",),
    url_markers=("minimax",),
    block_tokens=1,
    min_tokens=MIN_TOKENS,
    min_applies_to="prompt",
    ttls_ms=(("5m", 5 * 60_000),),
    default_ttl="5m",
    max_breakpoints=4,
    lookback_blocks=LOOKBACK_BLOCKS,
    read_multiplier=0.1,
    write_multiplier=1.25,
    bills_writes=True,
    body_model="minimax",
    chain_as="minimax",
    cache_options=OPTIONS,
    sources=("https://platform.minimax.io/docs/api-reference/text-prompt-caching",),
)
