"""MiniMax: automatic caching from 512 tokens, plus Anthropic-style explicit markers.

Facts (https://platform.minimax.io/docs/guides/prompt-caching) [O]: caching is automatic for
prompts of 512 tokens or more, matched in the order system, tools, messages; explicit
``cache_control`` markers work as Anthropic's (20-block lookback); a write costs 1.25x and a
read 0.1x (one model lists 0.2x). Usage is returned in the shape of the endpoint called (subset
on the OpenAI-compatible one).

Not modelled: the system-before-tools order (prefixbench renders tools first, so a change to
the tools breaks the system prompt's entry too; MiniMax would keep it).
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import CacheOption, ProviderRules
from prefixbench.simulator.providers.compatible import reader

MIN_TOKENS = 512
LOOKBACK_BLOCKS = 20

OPTIONS = (
    CacheOption(key="mode", default="per-request", seen="per-request | explicit | implicit", source="O",
                help="per-request: marked requests explicit, others automatic"),
    CacheOption(key="implicit_ttl_ms", default=None, seen="not published", source="O",
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
    sources=("https://platform.minimax.io/docs/guides/prompt-caching",),
)
