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

**A tool loop reads only the head [M].** pi (and OpenClaw, which runs pi's Anthropic client)
marks two breakpoints on an Anthropic-compatible endpoint: the system prompt and the last block of
the last user message, a ``tool_result`` in a tool loop (pi-mono's
``packages/ai/src/providers/anthropic.ts``, ``convertMessages``). In a committed OpenClaw home on
MiniMax-M2.5-highspeed through ``api.minimaxi.com/anthropic`` (github.com/Ccccx/openclaw-bak,
2026-03/04, 434 calls) every call after tool results wrote nothing and read the same head,
12,787-12,885 tokens in March and 37,026 in April (342 of the 382 such calls read what the lane's
previous call read), and only a call after a user's text wrote, up to that message (all but its
last 20-149 tokens). So MiniMax kept no entry at the tool-result breakpoint, and the read stayed
on the system prompt's: a request is predicted to read what its lane's previous request reported
reading (:attr:`~prefixbench.simulator.providers.base.ProviderRules.follows_reads`, as Gemini's;
``--no-follow-reads`` turns it off): 64 -> 403 of the 434 within 3% (March 40 -> 304 of 331, April
24 -> 99 of 103: no parameter fitted). Still missed: a user turn that read the previous user
turn's entry within the 20-block lookback (about 10), and the tool call after it, which fell back
to the head. Whether MiniMax ignores a marker on a ``tool_result`` or only writes none there is
not told apart (no request body is logged); other agents' placements are not measured. Such a
miss whose call wrote nothing is the provider's doing (``provider-best-effort``,
:attr:`~prefixbench.simulator.providers.base.ProviderRules.unwritten_miss_note`): a changed
system prompt or history would have been written at the agent's breakpoints, as every call after
a user's text was; before, the audit put the 381 tool-loop reads down to pi's date-stamped system
prompt (``system-changed``, a recoverable loss), which the writes of 0 contradict.
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
    own_hosts=("minimax",),  # its own API as gateways name it (OpenRouter's provider names)
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
    # [M] A tool loop's reads keep to the head: see the module doc.
    follows_reads=True,
    follow_reason="a provider that keeps no entry at an agent's tool-result breakpoint (MiniMax, measured: a tool loop "
                  "reads only the system prompt's entry)",
    unwritten_miss_note=("MiniMax kept no entry at the agent's last breakpoint (measured: a tool loop's calls write "
                         "nothing and read the system prompt's entry again; a changed prefix would have been written)"),
    body_model="minimax",
    chain_as="minimax",
    cache_options=OPTIONS,
    sources=("https://platform.minimax.io/docs/api-reference/text-prompt-caching",),
    # Cline's handler copies the Anthropic-shaped usage (input_tokens without the cache).
    agent_handlers=(("minimax", "additive"),),
)
