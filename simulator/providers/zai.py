"""Z.AI (GLM): automatic caching, OpenAI-style subset usage; glm-5 models read in 64-token steps.

Facts: GLM models cache automatically and report ``prompt_tokens_details.cached_tokens`` inside
``prompt_tokens`` (subset), like OpenAI [S]; reads cost about a fifth of input (GLM-4.6: 0.11
against 0.60 per 1M, https://docs.z.ai/guides/overview/pricing). The Anthropic-compatible
endpoint reports the Messages shape. No step, minimum or lifetime is published.

**Unknowns, as options.** The read step, which differs by model [M]:

* glm-5.2: every read of 5 real sessions of two users on Z.AI's coding plan, 2026-07, is a
  multiple of 64 tokens (568 reads; about half are not multiples of 128): an OpenCode export
  through the OpenAI-compatible endpoint (github.com/w12z/Cap, 42 calls) and four sessions of a
  pi-based agent through the Anthropic-compatible one (github.com/pinion05/agent-complex-task,
  526 calls). glm-5.1 through Charm's gateway read in 64s too in 2026-05, to the token from
  2026-06 (Crush's recorded agent tests; a gateway may have changed its backend).
* glm-4.6: to the token. Crush's recorded agent tests on Z.AI's coding endpoint, re-recorded
  from 2025-10 to 2026-04 (about 40 calls each time), never read a multiple of 64 (11,238,
  11,326, 7,003, 7,214...); pydantic-ai's one recorded glm-4.6v call read 4 tokens.

So ``block=1`` by default and 64 for the glm-5 models (``block_tokens_by_model``), chain and
bodies alike; ``block=64`` reads every model in 64s.
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import CacheOption, ProviderRules
from prefixbench.simulator.providers.compatible import reader

DEFAULT_BLOCK = 1
#: The glm-5 models' read step, measured on glm-5.2 (568 reads, all multiples of 64).
GLM5_BLOCK = 64

OPTIONS = (
    CacheOption(key="block", default=DEFAULT_BLOCK,
                seen=f"1 (glm-4.6, Z.AI's coding endpoint [M]) - {GLM5_BLOCK} (glm-5.2, coding plan, both endpoints [M]; the audit's step for glm-5)",
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
    block_tokens_by_model=((r"(?i)glm-5", GLM5_BLOCK),),
    min_tokens=0,
    read_multiplier=0.18,
    write_multiplier=1.0,
    best_effort_note="Z.AI publishes no cache rules; a miss may be its own doing",
    body_model="zai",
    chain_as="zai",
    cache_options=OPTIONS,
    sources=("https://docs.z.ai/guides/overview/pricing",),
)
