"""Z.AI (GLM): automatic caching, OpenAI-style subset usage; glm-5 models read in 64-token steps.

Facts: GLM models cache automatically and report ``prompt_tokens_details.cached_tokens`` inside
``prompt_tokens`` (subset), like OpenAI [S]; reads cost about a fifth of input (GLM-4.6: 0.11
against 0.60 per 1M, https://docs.z.ai/guides/overview/pricing). The Anthropic-compatible
endpoint reports the Messages shape. No step, minimum or lifetime is published: the caching
page says only that content "identical or highly similar to previous requests" is reused
(https://docs.z.ai/guides/capabilities/cache).

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
* glm-4.5-air: to the token in two logs (Crush's title calls, 13 reads of 130-131 tokens;
  Claude Code's subagent calls in github.com/aistrad/work, 4 of 868-871); glm-4.7-flashx to the
  token in one (an OpenClaw home, github.com/CroCooCn/zhipuclaw: 1 of 206 reads a multiple of 64).
* glm-4.7: one log only, so no rule. Claude Code through claude-code-router
  (github.com/aistrad/work, 2025-12/2026-01): all 287 reads above 0 are multiples of 128 and 161
  of them of 256 (a 128 step: read to the token 1 in 128 would be, in 64s about half). No other Z.AI
  log of glm-4.7 at hand reports a read (github.com/bastion-agentique/bastion's Claude Code
  session and a pi session's calls through a free router log zero usage; Volcengine Ark's
  glm-4-7 is another host). In 128s the log's reads are predicted exactly 205 times of 288 (14
  to the token) but within 3% no more often (225 of 292 either way), so glm-4.7 stays at
  ``block=1`` until a second log agrees.

So ``block=1`` by default and 64 for the glm-5 models (``block_tokens_by_model``), chain and
bodies alike; ``block=64`` reads every model in 64s.

**The answer is cached too** [M] (``caches_output``, the ``cache_output`` option): a next prompt
that sends the previous answer back as the model wrote it reads past the previous prompt into
that answer. Z.AI's thinking-mode guide says only that the reasoning sent back must be the
model's own, unmodified, or "cache hit rates may be affected" [O]; what the reads show:

* glm-4.6 on the coding endpoint, Crush (which sends ``reasoning_content`` and the tool calls
  back verbatim), its recorded agent tests of 2025-10 to 2026-04 (438 follow-ups of distinct
  recordings): 210 read the previous prompt and all of the answer but its last 1 (to 2026-02)
  or 2 tokens (2026-03/04: 99 of 99); where Crush dropped the reasoning (2025-10/11) 15 read 2
  tokens past the prompt; 212 (none after 2026-02) found no entry of their own and fell back to
  the prefix the runs share; 1 ended just short of the previous prompt, 1 17 tokens past it.
* glm-5.2 on the coding plan: 2 of OpenCode's 41 follow-ups (both after a user message) read
  past the previous prompt, to the 64-step under prompt + answer (13,056 = 11,799 + 1,286
  rounded); the other 39 (its 35 tool-loop calls among them) and every follow-up of the
  pi-based GJC (522; pi sends unsigned thinking back as text) stopped at the previous prompt.

So the agent decides whether the answer is read (the formats' ``replays_output``; the byte-level
model compares the bodies) and the provider keeps it. Unknown: whether glm-5 keeps the answer
of a tool-call turn (OpenCode's tool loops do not show it, and no recording of an agent that
sends those back verbatim to glm-5 through Z.AI is at hand).

**Unexplained: glm-5 on the coding endpoint in 2026-03** [M]. An OpenClaw home
(github.com/CroCooCn/zhipuclaw, OpenAI-compatible ``api/coding/paas/v4``, 655 glm-5 follow-ups)
read the previous prompt in 330; of the 325 others, 155 read exactly an earlier call's prompt
(64-step, mostly 4 or more calls back, inside a tool loop as often as after a user's text), 135
a head of 1-6K tokens (4,480 in 49) and 34 something else. Nothing in the log tells which: the
share read falls with the idle time (71 of 100 under 5 s, about half at 5-60 s, 2 of 29 past
5 min), as of a cache spread over servers without affinity. Predicted from the lane's last read
(as MiniMax's) 424 of the home's 889 calls within 3% fall to 409, and from the prompt two calls
back (a read lag) its glm-5 follow-ups gain 21 but glm-5.1 and glm-5.2's lose 34 and 73 (GJC), so
no rule is taken from it; glm-5.2 on the coding plan, 2026-07, is predicted as it read.

**An entry lives about 20 min idle** [M] (``ttl_ms``, ``IDLE_TTL_MS``; ``ttl_ms=none``: no lifetime). Across the GLM
follow-ups at hand on Z.AI (the OpenClaw home, GJC, OpenCode, a pi session on glm-5.1, two Claude
Code sessions; 2026-03 to 07) the share that read its previous prompt falls with the idle time:
1,353 of 1,791 under 5 min, 25 of 52 at 5-15 min, 3 of 20 at 15-30 min, 0 of 34 past 30 min (those
fell to a shorter head, 128 tokens to 26K, or to nothing). So a request more than 20 min after
its lane's previous one reads no entry of its own (``ttl-expired``) and, where the cold points
agree on a warm head, that head. Calls within 3%, by lifetime (none, 10, 15, 20, 30, 60 min): the
home 424, 428, 430, 432, 428, 426 of 889; GJC 504, 500, 505, 505, 506, 506 of 526; the glm-5.1
session 432, 429, 432, 432, 433, 434 of 470; every other pinned GLM sample unchanged but Claude
Code through Volcengine Ark (glm-4-7 read with these rules), 12 -> 14 of 49 at 20 min.
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import CacheOption, ProviderRules
from prefixbench.simulator.providers.compatible import reader

DEFAULT_BLOCK = 1
#: The glm-5 models' read step, measured on glm-5.2 (568 reads, all multiples of 64).
GLM5_BLOCK = 64
#: How long an entry lives idle, measured (see the module doc): none of 34 follow-ups past 30 min
#: read its previous prompt.
IDLE_TTL_MS = 20 * 60_000

OPTIONS = (
    CacheOption(key="block", default=DEFAULT_BLOCK,
                seen=f"1 (glm-4.6, Z.AI's coding endpoint [M]) - {GLM5_BLOCK} (glm-5.2, coding plan, both endpoints [M]; the audit's step for glm-5)",
                source="M", help="read step in tokens"),
    CacheOption(key="cache_output", default=True,
                seen="glm-4.6: every follow-up of Crush past the previous prompt read its answer but 1-2 tokens; glm-5.2: 2 of OpenCode's 41",
                source="M", help="keep each answer after its prompt, for a next prompt that sends it back verbatim"),
    CacheOption(key="ttl_ms", default=IDLE_TTL_MS,
                seen="previous prompt read by 1,353 of 1,791 follow-ups under 5 min idle, 3 of 20 at 15-30 min, 0 of 34 past 30 min",
                source="M", help="idle lifetime of an entry in ms", none_means="no lifetime (kept until evicted)"),
)

RULES = ProviderRules(
    speaks_messages=True,
    name="zai",
    own_hosts=("zai", "zhipu", "zhipuai", "bigmodel"),  # its own API as gateways name it (OpenRouter's provider names)
    usage_convention="subset",
    read_usage=reader(bills_writes=False),
    model_prefixes=("glm",),
    url_markers=("api.z.ai", "bigmodel.cn"),
    block_tokens=DEFAULT_BLOCK,
    block_tokens_by_model=((r"(?i)glm-5", GLM5_BLOCK),),
    min_tokens=0,
    # [M] An entry is read for about 20 min idle: see the module doc.
    ttls_ms=(("20m", IDLE_TTL_MS),),
    default_ttl="20m",
    read_multiplier=0.18,
    write_multiplier=1.0,
    best_effort_note="Z.AI publishes no cache rules; a miss may be its own doing",
    # [M] The answer is kept after its prompt: see the module doc.
    caches_output=True,
    body_model="zai",
    chain_as="zai",
    cache_options=OPTIONS,
    sources=("https://docs.z.ai/guides/overview/pricing", "https://docs.z.ai/guides/capabilities/thinking-mode",
             "https://docs.z.ai/guides/capabilities/cache"),
    # Cline's and Roo Code's handler: tokensIn is prompt_tokens, the cached part inside, cacheWrites 0.
    agent_handlers=(("zai", "subset"),),
)
