"""Z.AI (GLM): automatic caching, OpenAI-style subset usage.

Facts: GLM models cache automatically and report ``prompt_tokens_details.cached_tokens`` inside
``prompt_tokens`` (subset), like OpenAI [S]; reads cost about a fifth of input (GLM-4.6: 0.11
against 0.60 per 1M, https://docs.z.ai/guides/overview/pricing). No block, minimum or lifetime is
published, so its bodies replay through the byte-exact reference. The Anthropic-compatible
endpoint reports the Messages shape.
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import ProviderRules
from prefixbench.simulator.providers.compatible import reader

RULES = ProviderRules(
    speaks_messages=True,
    name="zai",
    usage_convention="subset",
    read_usage=reader(bills_writes=False),
    model_prefixes=("glm",),
    url_markers=("api.z.ai", "bigmodel.cn"),
    block_tokens=1,
    min_tokens=0,
    read_multiplier=0.18,
    write_multiplier=1.0,
    best_effort_note="Z.AI publishes no cache rules; a miss may be its own doing",
    chain_as="zai",
    sources=("https://docs.z.ai/guides/overview/pricing",),
)
