"""Qwen on Alibaba Cloud Model Studio (DashScope): explicit OR implicit caching, never both.

Facts (https://www.alibabacloud.com/help/en/model-studio/context-cache) [O]:

* **Explicit**: ``cache_control`` markers, at most 4 a request, each checking 20 blocks back;
  at least 1,024 tokens; an entry lives 5 min, reset by each hit; a write costs 1.25x, a read
  0.1x.
* **Implicit**: automatic when a request carries no marker; a read costs 0.2x, writes bill as
  input. Its minimum is 256 tokens in one language version of the page and 1,024 in the other:
  an option, ``implicit_min``, default 1,024.
* A request uses one mode: a marked request reads and writes only explicit entries, an
  unmarked one only implicit ones.
* The implicit cache is best effort: its hit rate is not guaranteed, and the Chinese page adds
  that even a request whose context is exactly the same may miss, the system deciding; the
  explicit one guarantees a hit within its 5 min. So a miss with nothing changed in the log is
  the provider's (``provider-best-effort``) where the request is known unmarked
  (:attr:`~prefixbench.simulator.providers.base.ProviderRules.unmarked_best_effort_note`): by its
  logged body (no ``cache_control`` at its top, on a message or on a content part), or, with
  none, as a pi call on ``openai-completions``, which by default marks no request to DashScope
  (assumed: a model configuration's ``compat.cacheControlFormat`` would mark, and is not
  logged); a call that reported a write was marked. Qwen Code and Claude Code mark every request,
  other agents are not known: theirs are judged as before. Measured on the one implicit source at
  hand (github.com/xiayongchao/pi-demo@b244c80, pi's SDK on qwen-plus, 28 calls, 2026-03-25): 17
  read 0, 6 of them lane starts, 9 of the other 11 sent 0.7-1.9 s after the lane's previous call
  (one 41 s, one 2 min after), and calls after a read of 0 read prefixes it held (1,216 tokens
  right after a call of 1,326 read 0; 1,344 tokens 4.5 min after a call of 1,456 read 0): the
  prefix, head included, was kept as sent, so those reads of 0 changed nothing. Every read there
  is a whole number of 64-token units (1,024 to 1,344), one or two units short of the previous
  prompt; the pages give no unit and one source does not make one, so reads stay predicted to
  the token.

Usage is OpenAI-style (``prompt_tokens_details.cached_tokens``, and
``cache_creation_input_tokens`` for explicit writes) or Anthropic-style on the compatible
endpoint; the cached part is inside the prompt (subset).

Qwen Code's own login (``auth_type: qwen-oauth`` in its telemetry, the agent handler
``qwen-code/qwen-oauth``) serves ``coder-model``, a name of no provider, through DashScope's
compatible endpoint: Qwen Code's DashScope provider (QwenLM/qwen-code,
``packages/core/src/core/openaiContentGenerator/provider/dashscope.ts``) treats that login as
DashScope and marks the system message and the last message of every streamed request with
``cache_control``, so its calls are read with these rules (each writes its prompt, explicit).
Of its calls that read their previous call's prompt, every one read all of it but the last
``UNREAD_TAIL`` tokens (1,740 of 1,740 calls, 2026-03 to 04: the template's closing tokens after
the marked message; 4 in 143 calls of 2025-12): measured, so :attr:`unread_tail`. And an entry's
5 min count from the end of the response that wrote it (``ttl_from="end"``, measured): of 73
follow-ups sent over 4 min after the call before, those idle at most 279 s since its response
ended read it (22 of 24; 2 the head only), those idle 301 s or more read nothing (46 of 47), 7
of the first sent 304-939 s after it (a long answer).

The price table prices the two reads apart: ``cache_read`` is the implicit read (0.2x),
``explicit_read`` the explicit one (0.1x); the model reports explicit reads as
``cached_explicit_tokens``.
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import CacheOption, ProviderRules
from prefixbench.simulator.providers.compatible import reader

EXPLICIT_MIN = 1024
IMPLICIT_MIN = 1024
IMPLICIT_MINS = (256, 1024)
MAX_MARKERS = 4
LOOKBACK_BLOCKS = 20
EXPLICIT_TTL_MS = 5 * 60_000
UNREAD_TAIL = 6

OPTIONS = (
    CacheOption(key="mode", default="per-request", seen="per-request | explicit | implicit", source="O",
                help="per-request: marked requests explicit, others implicit; explicit: an unmarked "
                     "request is marked at its last block (as an agent that caches would)"),
    CacheOption(key="implicit_min", default=IMPLICIT_MIN, seen="256 | 1,024 (the two language versions)", source="O",
                help="minimum of an implicit read"),
    CacheOption(key="implicit_ttl_ms", default=None, seen="not published", source="O",
                help="idle lifetime of an implicit entry in ms"),
)

RULES = ProviderRules(
    speaks_messages=True,
    name="qwen",
    # Its own API as gateways name it: OpenRouter's provider "Alibaba Cloud Int." (slug alibaba) is
    # Model Studio's international endpoint, the one whose prices the table's Qwen rows are.
    own_hosts=("alibaba", "alibabacloud", "alibabacloudint", "dashscope"),
    usage_convention="subset",
    read_usage=reader(bills_writes=True),
    model_prefixes=("qwen", "qwq"),
    url_markers=("dashscope",),
    block_tokens=1,
    unread_tail=UNREAD_TAIL,
    min_tokens=EXPLICIT_MIN,
    min_applies_to="prompt",
    ttls_ms=(("5m", EXPLICIT_TTL_MS),),
    default_ttl="5m",
    max_breakpoints=MAX_MARKERS,
    lookback_blocks=LOOKBACK_BLOCKS,
    read_multiplier=0.2,
    write_multiplier=1.25,
    bills_writes=True,
    body_model="qwen",
    body_model_options=(("mode", "per-request"),),
    chain_as="qwen",
    ttl_from="end",
    agent_handlers=(("qwen-code/qwen-oauth", "subset"), ("qwen", "subset")),
    unmarked_best_effort_note="Qwen's implicit cache (a request with no cache_control) is best effort: Model Studio "
                              "guarantees no hit, even for the same prompt",
    # pi's openai-completions API marks only OpenRouter's anthropic/ models by default
    # (badlogic/pi-mono, packages/ai/src/providers/openai-completions.ts, 2026-03; later pi marks
    # where a model's compat.cacheControlFormat is "anthropic", which its session log does not
    # record) and logs cacheWrite 0 on every call, so its 0 tells nothing: the API its session
    # log names decides (message.api). Its Anthropic API marks every call.
    unmarking_apis=(("pi", "openai-completions"),),
    cache_options=OPTIONS,
    sources=("https://www.alibabacloud.com/help/en/model-studio/context-cache",),
)
