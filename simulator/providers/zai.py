"""Z.AI (GLM): automatic caching, OpenAI-style subset usage, reads in 64-token steps.

Facts: GLM models cache automatically and report ``prompt_tokens_details.cached_tokens`` inside
``prompt_tokens`` (subset), like OpenAI [S]; reads cost about a fifth of input (GLM-4.6: 0.11
against 0.60 per 1M, https://docs.z.ai/guides/overview/pricing). The Anthropic-compatible
endpoint reports the Messages shape. No step, minimum or lifetime is published.

**Unknowns, as options.** The read step: every read of 5 real sessions of two users on Z.AI's
coding plan, glm-5.2, 2026-07, is a multiple of 64 tokens (568 reads; about half are not
multiples of 128) [M]: an OpenCode export through the OpenAI-compatible endpoint
(github.com/w12z/Cap, 42 calls) and four sessions of a pi-based agent through the
Anthropic-compatible one (github.com/pinion05/agent-complex-task, 526 calls). So ``block=64`` by
default, chain and bodies alike; ``block=1`` reads to the token. One recorded call of the general
API's glm-4.6v (an image prompt, pydantic-ai's test cassette) read 4 tokens: not enough to give
that API a rule of its own.
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import CacheOption, ProviderRules
from prefixbench.simulator.providers.compatible import reader

DEFAULT_BLOCK = 64

OPTIONS = (
    CacheOption(key="block", default=DEFAULT_BLOCK, seen="64 (coding plan, both endpoints, 568 reads [M]) - 1 (to the token)",
                source="M", help="read step in tokens"),
)

RULES = ProviderRules(
    speaks_messages=True,
    name="zai",
    usage_convention="subset",
    read_usage=reader(bills_writes=False),
    model_prefixes=("glm",),
    url_markers=("api.z.ai", "bigmodel.cn"),
    block_tokens=DEFAULT_BLOCK,
    min_tokens=0,
    read_multiplier=0.18,
    write_multiplier=1.0,
    best_effort_note="Z.AI publishes no cache rules; a miss may be its own doing",
    body_model="zai",
    chain_as="zai",
    cache_options=OPTIONS,
    sources=("https://docs.z.ai/guides/overview/pricing",),
)
