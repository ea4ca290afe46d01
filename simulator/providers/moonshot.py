"""Moonshot Kimi: automatic caching, 5 m / 1 h lifetimes, writes billed apart on newer models.

Facts: caching is automatic; ``prompt_cache_options`` picks the lifetime, 5 min by default or
1 h; newer models bill cache writes apart, with different 5 m and 1 h write prices; a read
costs a tenth of a miss (https://platform.moonshot.ai/docs/guide/use-context-caching-feature-of-kimi-api
and Moonshot's forum) [O]. Usage is OpenAI-style, the cached part inside the prompt (subset);
the Anthropic-compatible endpoint reports it in the Messages shape.

The coding endpoint (``api.kimi.com/coding``, Anthropic-compatible) is Kimi's whatever model
name the agent sends (Claude Code pointed at it keeps its Claude model names), so its host
names the provider.

**Unknowns, as options.** The coding endpoint was measured to cache in 256-token chunks and to
ignore ``prompt_cache_key`` and ``cache_control`` [M]; the general API's step is not published,
so ``block=1`` by default and ``block=256`` models the coding endpoint. No minimum is published.
The coding plan's model (``kimi-for-coding``, what Kimi CLI and Kimi Code call it) reads in
256-token steps in the audit: a real Kimi CLI session (MoonshotAI/kimi-code's
``large-100msgs`` fixture) read the previous prompt floored to 256 on 13 of its 14 follow-on calls [M].
A captured call to the coding endpoint reads in 256 whatever model name it carries (Claude Code
pointed at it sends its Claude names): the endpoint's URL decides the step there.
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import CacheOption, ProviderRules
from prefixbench.simulator.providers.compatible import reader

TTL_MS: dict[str, int] = {"5m": 5 * 60_000, "1h": 60 * 60_000}
CODING_BLOCK = 256

OPTIONS = (
    CacheOption(key="block", default=1, seen=f"1 - {CODING_BLOCK} (coding endpoint [M])", source="M",
                help="read step in tokens"),
    CacheOption(key="ttl", default="5m", seen="5m | 1h", source="O", help="lifetime the client asks for"),
)

RULES = ProviderRules(
    speaks_messages=True,
    name="moonshot",
    own_hosts=("moonshotai", "kimi"),  # its own API as gateways name it (OpenRouter's provider names)
    usage_convention="subset",
    read_usage=reader(bills_writes=True),
    model_prefixes=("kimi", "moonshot"),
    url_markers=("moonshot", "api.kimi.com"),
    block_tokens=1,
    block_tokens_by_model=((r"kimi-for-coding", CODING_BLOCK),),
    block_tokens_by_url=(("api.kimi.com/coding", CODING_BLOCK),),
    min_tokens=0,
    ttls_ms=tuple(TTL_MS.items()),
    default_ttl="5m",
    read_multiplier=0.1,
    write_multiplier=1.0,
    bills_writes=True,
    body_model="kimi",
    chain_as="moonshot",
    cache_options=OPTIONS,
    sources=("https://platform.moonshot.ai/docs/guide/use-context-caching-feature-of-kimi-api",),
    # Cline's handler wrote prompt_tokens whole (3.30-3.50), then prompt_tokens less the cached (3.89).
    agent_handlers=(("moonshot", "by-counts"),),
)
