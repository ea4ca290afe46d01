"""xAI (grok): automatic caching on the server a conversation is routed to, subset usage.

Facts: caching is automatic; requests are routed by the ``x-grok-conv-id`` header (chat
completions) or ``prompt_cache_key`` (Responses) to a server, and the cache lives on that
server, so a request routed to another one misses; an entry may be evicted at any time (load,
restarts); cached tokens are ``prompt_tokens_details.cached_tokens`` /
``input_tokens_details.cached_tokens``, part of the prompt (https://docs.x.ai/docs/guides/prompt-caching) [O].
A read costs 0.25x and writes carry no fee [S].

**Unknowns, as options.** The read step: 128-token blocks in one reseller's test of 124 calls
[S], multiples of 64 in reads logged through a gateway [M]; ``block=128`` by default. Routing:
``routing=sticky`` (the default: the client sends a conversation id, every request of a
conversation reaches one of ``servers`` servers), ``routing=random`` (no id sent: each request
lands on a server drawn from a ``seed``-ed generator) and ``routing=prefix`` (a hash of the
first 256 tokens picks the server, as OpenAI routes). Eviction: before each request its server
loses everything with probability ``evict_p`` (seeded; default 0).
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import CacheOption, ProviderRules
from prefixbench.simulator.providers.openai import read_usage

DEFAULT_BLOCK = 128
BLOCKS = (64, 128)
DEFAULT_SERVERS = 8

OPTIONS = (
    CacheOption(key="block", default=DEFAULT_BLOCK, seen="64 [M] - 128 [S]", source="S", help="read step in tokens"),
    CacheOption(key="routing", default="sticky", seen="sticky | prefix | random", source="O",
                help="how a request picks its server (sticky: by conversation id)"),
    CacheOption(key="servers", default=DEFAULT_SERVERS, seen="not published", source="O",
                help="servers a request may be routed to"),
    CacheOption(key="evict_p", default=0.0, seen="0-1 (evicted at any time)", source="O",
                help="chance a server has lost its cache before a request"),
    CacheOption(key="seed", default=0, seen="-", source="O", help="seed of the routing and eviction draws"),
    CacheOption(key="ttl_ms", default=None, seen="not published", source="O", help="idle lifetime of an entry in ms"),
)

RULES = ProviderRules(
    name="xai",
    usage_convention="subset",
    read_usage=read_usage,
    model_prefixes=("grok",),
    url_markers=("api.x.ai",),
    block_tokens=DEFAULT_BLOCK,
    min_tokens=0,
    read_multiplier=0.25,
    write_multiplier=1.0,
    best_effort_note="xAI caches per server and may evict at any time",
    body_model="xai",
    chain_as="xai",
    cache_options=OPTIONS,
    sources=("https://docs.x.ai/docs/guides/prompt-caching",),
)
