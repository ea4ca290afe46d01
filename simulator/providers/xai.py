"""xAI (grok): automatic caching on the server a conversation is routed to, subset usage.

Facts: caching is automatic; requests are routed by the ``x-grok-conv-id`` header (chat
completions) or ``prompt_cache_key`` (Responses) to a server, and the cache lives on that
server, so a request routed to another one misses; an entry may be evicted at any time (load,
restarts); cached tokens are ``prompt_tokens_details.cached_tokens`` /
``input_tokens_details.cached_tokens``, part of the prompt
(https://docs.x.ai/developers/advanced-api-usage/prompt-caching, formerly
https://docs.x.ai/docs/guides/prompt-caching) [O]. Its FAQ: a request without the header (or
with another id) may land on a different server, so ``routing=random`` models a client that
sends none; caching is on for every grok language model, each with its cached price on the
models page (the price rows).
A read costs 0.25x and writes carry no fee [S].

**Unknowns, as options.** The read step: 128-token blocks in one reseller's test of 124 calls
[S], multiples of 64 in reads logged through Cline's gateway [M], but to the token in real calls
made directly and through OpenRouter [M]: xAI's own recorded gRPC calls in pydantic-ai's test
cassettes read 2, 5, 147, 601 tokens (2 of 33 a multiple of 128), and a mini-swe-agent run on
grok-4-fast through OpenRouter read the whole previous prompt but its last 5 tokens on 15 of 16
follow-ups. So ``block=1`` by default (what most traffic measured), ``block=64`` / ``block=128``
to model the gateway or the reseller's figure. A follow-up reads the previous prompt but its last
1-5 tokens (the template's closing tokens, it seems): the audit expects the prompt less 5.
**The reply is kept too** [M] (``caches_output``): a next prompt that holds the previous prompt
and its whole reply reads into the reply: xAI's own recorded gRPC calls (pydantic-ai) read the
previous prompt + reply exactly on 2 follow-ups, and grok-code-fast-1 through Kilo's gateway read
up to prompt + reply + 1 (in 64-token steps) where Kilo sent the reply back (58 of 120 within 3%
without it, 63 with it). Not in replayed bodies (the ``cache_output`` option, off): through
OpenRouter, grok-4-fast read the previous prompt but 5 tokens on 15 of 16 follow-ups that sent
the reply back (15 of 17 within 3% off, 8 on). Routing:
``routing=sticky`` (the default: the client sends a conversation id, every request of a
conversation reaches one of ``servers`` servers), ``routing=random`` (no id sent: each request
lands on a server drawn from a ``seed``-ed generator) and ``routing=prefix`` (a hash of the
first 256 tokens picks the server, as OpenAI routes). Eviction: before each request its server
loses everything with probability ``evict_p`` (seeded; default 0).
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import CacheOption, ProviderRules
from prefixbench.simulator.providers.openai import read_usage

DEFAULT_BLOCK = 1
#: The previous prompt's last tokens a follow-up did not read: 5 through OpenRouter (15 of 16
#: follow-ups), 1 in xAI's own recorded calls (11 of 33) [M]; the larger is left out of what the
#: audit expects, so neither shortfall is called a miss.
UNREAD_TAIL = 5
BLOCKS = (1, 64, 128)
DEFAULT_SERVERS = 8

OPTIONS = (
    CacheOption(key="block", default=DEFAULT_BLOCK, seen="1 (direct, OpenRouter [M]) - 64 (a gateway [M]) - 128 [S]", source="M", help="read step in tokens"),
    CacheOption(key="routing", default="sticky", seen="sticky | prefix | random", source="O",
                help="how a request picks its server (sticky: by conversation id)"),
    CacheOption(key="servers", default=DEFAULT_SERVERS, seen="not published", source="O",
                help="servers a request may be routed to"),
    CacheOption(key="evict_p", default=0.0, seen="0-1 (evicted at any time)", source="O",
                help="chance a server has lost its cache before a request"),
    CacheOption(key="cache_output", default=False,
                seen="replayed bodies through OpenRouter: never read (15 of 16 follow-ups) [M]; logged counts through Kilo's gateway: read",
                source="M", help="keep each reply after its prompt (replayed bodies)"),
    CacheOption(key="seed", default=0, seen="-", source="O", help="seed of the routing and eviction draws"),
    CacheOption(key="ttl_ms", default=None, seen="not published", source="O", help="idle lifetime of an entry in ms"),
)

RULES = ProviderRules(
    hosts_bill_list_price=True,  # closed weights: xAI's API alone
    name="xai",
    usage_convention="subset",
    read_usage=read_usage,
    model_prefixes=("grok",),
    url_markers=("api.x.ai",),
    block_tokens=DEFAULT_BLOCK,
    unread_tail=UNREAD_TAIL,
    min_tokens=0,
    read_multiplier=0.25,
    write_multiplier=1.0,
    best_effort_note="xAI caches per server and may evict at any time",
    caches_output=True,
    body_model_options=(("cache_output", False),),
    body_model="xai",
    chain_as="xai",
    cache_options=OPTIONS,
    sources=("https://docs.x.ai/developers/advanced-api-usage/prompt-caching",),
    # Cline's handler passes prompt_tokens on whole with the cached part inside (prompt_cache_miss_tokens,
    # never sent by xAI, as cacheWrites); Cline 3.17 wrote tokensIn 0 beside hits and misses.
    agent_handlers=(("xai", "subset"),),
)
