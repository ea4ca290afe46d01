"""OpenAI: automatic exact-prefix caching, subset usage, 1,024-token minimum, 128-token steps.

Facts (the official guide, https://developers.openai.com/api/docs/guides/prompt-caching): caching starts at 1,024 tokens
and, before GPT-5.6, hits count in 128-token steps; ``cached_tokens`` is part of
``prompt_tokens`` / ``input_tokens`` (subset usage); reads cost 0.5x-0.1x by model, writes carry
no fee before GPT-5.6 (1.25x from GPT-5.6, ``cache_write_tokens``).

**Lifetime, per request** (:func:`retention`). Models before GPT-5.6 keep a prefix under one of
two policies, ``prompt_cache_retention`` [O]: ``in_memory``, "typically" 5 to 10 minutes of
inactivity and at most one hour (the guide; its Azure copy: the system "typically clears caches
within 5 to 10 minutes of inactivity",
https://learn.microsoft.com/azure/foundry/openai/how-to/prompt-caching), modelled as the upper
end, 10 min idle (a hit after a longer gap is the provider's best effort; measured [M]: in Codex
rollouts of 2025-11 to 2026-04 on in-memory models, 18 of 24 calls sent 5 to 10 min after the
one before read the conversation's entry, past the shared head, and 6 only the head or a warm
level of it; the lower end, 5 min, predicted the head for all 24); or ``24h``, extended
retention (KV offloaded to GPU-local storage), up to 24 h, at the same price. Extended
retention exists on :data:`EXTENDED` models only; ``gpt-5.5`` and ``gpt-5.5-pro`` accept
nothing else. What a request gets:

1. what its body asks (``prompt_cache_retention``; GPT-5.6 on, ``prompt_cache_options.ttl``,
   whose only value ``30m`` is a minimum lifetime, modelled as 30 min idle), where the log
   holds the body and the model offers it;
2. else the model's documented default. The API reference (text generated into the OpenAI
   SDKs; in openai-python from commit 268de687, 2026-06-01) says a model offering both
   policies defaults to ``24h`` for organizations without Zero Data Retention and to
   ``in_memory`` for those with it. Before that the same reference only said "set to `24h` to
   enable extended prompt caching" (openai-python ac534dcd, 2025-11-13, when the parameter
   came with gpt-5.1): ``in_memory`` unless asked. So a request sent before
   :data:`EXTENDED_DEFAULT_SINCE` gets ``in_memory``, one sent on or after it (or at an unknown
   time) ``24h``. A news post dates the change of default to 2026-05-29 (modeldex.dev, secondary);
   the three days between it and the reference's date are left to the reference. The
   organization's ZDR setting is not in any log: ``zdr`` (an option of the ``openai`` model; the
   audit's ``--openai-zdr``) assumes it on, default off.

**A 12-hour retention on GPT-6.2 Sol** [O]. Its model page
(https://developers.openai.com/api/docs/models/gpt-6.2-sol, the model released 2026-11-17)
prices a cache write for 30 minutes of retention (2.50, 1.25x input) and says "A 12-hour cache
write costs $5 per million tokens for short-context requests at Standard pricing" (2.5x input,
2x the 30-minute write; over 272K input tokens the page doubles every cache rate). So a
request to :data:`TWELVE_HOUR` models may keep its prefix 12 h (the ``12h`` label, modelled as
12 h idle, as ``30m`` is 30 min) and its writes bill at the price row's long write price
(``cache_write_1h``). No other GPT-6 page seen names it (GPT-6.2 Astra's cache prices are not
in the sources), and none names the request field that asks for it: ``12h`` is this module's
label, and a logged ``prompt_cache_options.ttl`` of ``12h`` is read as asking it (the spelling
is assumed, as ``30m`` is the documented one). A request asks nothing by default: 30 min.

Codex does not send ``prompt_cache_retention`` (its Responses body: model, instructions, input,
tools, reasoning, store, stream, include, ``prompt_cache_key``, text; openai/codex
``codex-rs/codex-api/src/common.rs``), and its rollouts hold no body: a Codex request gets its
model's default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timezone
from functools import lru_cache
from typing import Literal

from prefixbench.simulator.providers.base import CacheOption, ProviderRules, count, given, mapping, subset_usage
from prefixbench.simulator.usage import Usage

#: Shortest cacheable prefix (tokens), every model.
MIN_TOKENS = 1024
#: Step of a pre-5.6 hit above the minimum (tokens).
INCREMENT = 128
#: ``in_memory``: the upper end of the documented 5-10 min of inactivity (see the module doc).
IN_MEMORY_TTL_MS = 10 * 60_000
#: ``in_memory``: the lower end of the same 5-10 min, best effort: what a keep-alive must beat to
#: keep an entry warm (the what-if keep-alive pings at it).
IN_MEMORY_TTL_MIN_MS = 5 * 60_000
EXTENDED_TTL_MS = 24 * 3_600_000
BREAKPOINT_TTL_MS = 30 * 60_000
#: GPT-6.2 Sol's 12-hour retention (see the module doc).
TWELVE_HOUR_TTL_MS = 12 * 3_600_000
#: Latest breakpoints a 5.6 read considers (guide: 50; API reference: 80).
LOOKBACK = 50

#: The lifetimes a request may get (labels of ``RULES.ttls_ms``).
RetentionLabel = Literal["in_memory", "24h", "30m", "12h"]
#: Models that offer extended (``24h``) retention, as the guide lists them (a dated snapshot
#: suffix such as ``-2025-04-14`` is ignored) [O].
EXTENDED = (
    "gpt-5.5", "gpt-5.5-pro", "gpt-5.4", "gpt-5.2", "gpt-5.1", "gpt-5.1-codex", "gpt-5.1-codex-mini",
    "gpt-5.1-codex-max", "gpt-5.1-chat-latest", "gpt-5", "gpt-5-codex", "gpt-4.1",
)
#: Models that accept ``24h`` only (the API reference: "for `gpt-5.5`, `gpt-5.5-pro`, and future
#: models, only `24h` is supported"; GPT-5.6 on replaces the parameter) [O].
EXTENDED_ONLY = ("gpt-5.5", "gpt-5.5-pro")
#: Models whose page prices a 12-hour cache write beside the 30-minute one (GPT-6.2 Sol's) [O].
TWELVE_HOUR = ("gpt-6.2-sol",)
#: The first day the API reference documents ``24h`` as the default of a model offering both
#: policies (organizations without ZDR): openai-python 268de687, 2026-06-01 [O].
EXTENDED_DEFAULT_SINCE = "2026-06-01"
EXTENDED_DEFAULT_SINCE_MS = int(datetime(2026, 6, 1, tzinfo=timezone.utc).timestamp() * 1000)
_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")
#: GPT-5.6 and later: breakpoints, ``prompt_cache_options.ttl`` (30 min minimum).
_BREAKPOINT_ERA = re.compile(r"^gpt-(?:5\.(?:[6-9]|[1-9]\d)|[6-9](?:\.\d+)?)(?![0-9])")
#: What the bodies may ask: ``prompt_cache_retention`` (``in-memory``: the SDKs' first spelling,
#: November 2025) and ``prompt_cache_options.ttl`` (``12h``: assumed, see the module doc).
ASKED = {"in_memory": "in_memory", "in-memory": "in_memory", "24h": "24h", "30m": "30m", "12h": "12h"}


def base_model(model: str) -> str:
    """``openai/gpt-5.1-codex-2025-11-13`` -> ``gpt-5.1-codex``."""
    return _SNAPSHOT.sub("", model.strip().lower().rpartition("/")[2])


@lru_cache(maxsize=1024)
def retention(model: str, asked: str | None = None, sent_ms: int | None = None, zdr: bool = False) -> RetentionLabel:
    """The lifetime a request to ``model`` gets (see the module doc): ``asked`` (the body's
    ``prompt_cache_retention`` or ``prompt_cache_options.ttl``, None when the log has no body or
    the body none) where the model offers it, else the model's default at ``sent_ms`` (None:
    today's); ``zdr``: the organization has Zero Data Retention (dual models default to
    ``in_memory``)."""
    name = base_model(model)
    if _BREAKPOINT_ERA.search(name):
        return "12h" if asked == "12h" and name in TWELVE_HOUR else "30m"
    if name in EXTENDED_ONLY:
        return "24h"
    if name not in EXTENDED:
        return "in_memory"
    label = ASKED.get(asked or "")
    if label in ("in_memory", "24h"):
        return label  # type: ignore[return-value]
    if zdr or (sent_ms is not None and sent_ms < EXTENDED_DEFAULT_SINCE_MS):
        return "in_memory"
    return "24h"


def retention_choices(model: str) -> tuple[str, str] | None:
    """The (short, long) retentions a request to ``model`` may ask for: ``in_memory`` / ``24h``
    on a model offering both, ``30m`` / ``12h`` on :data:`TWELVE_HOUR`; None: one lifetime only."""
    name = base_model(model)
    if name in TWELVE_HOUR:
        return ("30m", "12h")
    if name in EXTENDED and name not in EXTENDED_ONLY:
        return ("in_memory", "24h")
    return None


#: The ``openai`` model's rules that the guide leaves open (the fleet, the overflow rate, the
#: idle lifetime's range), with the documented value where it gives one.
OPTIONS = (
    CacheOption(key="servers", default=1, seen="not published", source="O",
                help="machines a request may be routed to (1: routing and overflow not modelled)"),
    CacheOption(key="routing", default="key", seen="key | prefix", source="O",
                help="the routing hash: first ~256 tokens + prompt_cache_key per conversation (key), or the tokens alone"),
    CacheOption(key="overflow_rpm", default=15, seen="~15 requests a minute per (prefix, key)", source="O",
                help="requests a minute before the rest overflow to other machines (none: never)"),
    CacheOption(key="retention", default=None, seen="in_memory | 24h, per request (body, else the model's default)",
                source="O", help="every request's retention (none: per request, the body's, else the model's documented default)"),
    CacheOption(key="zdr", default=False, seen="ZDR organizations default to in_memory, others to 24h (API reference, 2026-06-01 on)",
                source="O", help="the organization has Zero Data Retention: a model offering both policies defaults to in_memory"),
    CacheOption(key="ttl_ms", default=None, seen="5-10 min idle, at most 1 h (in-memory; 18 of 24 Codex calls read the conversation after 5-10 min idle [M]); 24 h extended; 30 min on 5.6 (a minimum: one gpt-5.6-sol entry read after 1h05m idle [M]); 12 h on gpt-6.2-sol where asked (its model page)", source="O",
                help="idle lifetime in ms (none: 10 min in memory, 24 h extended, 30 min on 5.6, as each request gets)"),
    CacheOption(key="cache_output", default=False, seen="13 of 60 Codex reads past the previous prompt, into its response (Codex 0.58-0.118); 2 of 350 follow-ups from Codex 0.122 on",
                source="M", help="keep each response after its prompt (pre-5.6; off in sweeps, on in the audit: caches_output)"),
)


def read_usage(usage: Mapping[str, object], where: str) -> Usage:
    """OpenAI usage, Responses (``input_tokens``) or Chat Completions (``prompt_tokens``): the
    input count includes cached (and, GPT-5.6+, written) tokens; where the cached ones exceed
    it, the count is read as one without them (:func:`~.base.subset_usage`). DeepSeek's chat
    completions name the cached part ``prompt_cache_hit_tokens``; it is read the same way, and so
    is a ``cached_tokens`` at the top level of a chat usage whose ``prompt_tokens_details`` holds
    none (Hugging Face's router for DeepSeek-R1; Kimi's older usage, as :mod:`.compatible` reads it).

    Raises:
        UserError: a bad count, or cached + written tokens above the input where the cached
            ones alone are not (or the written ones are too).
    """
    if "input_tokens" in usage:  # Responses API
        total = count(usage.get("input_tokens"), where, "usage.input_tokens")
        details = mapping(usage.get("input_tokens_details"))
        cached = count(details.get("cached_tokens"), where, "input_tokens_details.cached_tokens")
        written = count(details.get("cache_write_tokens"), where, "input_tokens_details.cache_write_tokens")
        output = count(usage.get("output_tokens"), where, "usage.output_tokens")
        reported = given(details, "cached_tokens")
    else:  # chat completions
        total = count(usage.get("prompt_tokens"), where, "usage.prompt_tokens")
        details = mapping(usage.get("prompt_tokens_details"))
        hit = usage.get("prompt_cache_hit_tokens")
        if hit is None and details.get("cached_tokens") is None:
            hit = usage.get("cached_tokens")  # at the top level, not in the details
            if isinstance(hit, float) and hit.is_integer():
                hit = int(hit)  # a whole number written as a double (40.0): a count, as Cohere's is read
        cached = count(details.get("cached_tokens") if hit is None else hit, where, "cached tokens")
        written = count(details.get("cache_write_tokens"), where, "prompt_tokens_details.cache_write_tokens")
        output = count(usage.get("completion_tokens"), where, "usage.completion_tokens")
        reported = given(details, "cached_tokens") or hit is not None
    # Cached tokens above the count: a gateway's count without them (see subset_usage).
    return subset_usage(total, cached, written, output, reported=reported,
                        excess=f"{where}: cached ({cached}) and written ({written}) tokens exceed input tokens ({total})")


#: What ``prompt_cache_diagnostics.type`` may say besides ``cache_miss`` (whose ``reason`` is the
#: label) and ``cache_hit`` (no label): the Responses API, GPT-5.6 on, when the request named a
#: ``prompt_cache_options.comparison_response_id``.
DIAGNOSTIC_OUTCOMES = ("comparison_response_not_found", "unavailable")
#: The documented ``reason`` values of a ``cache_miss``.
DIAGNOSTIC_REASONS = (
    "model_changed",
    "prompt_cache_key_changed",
    "tools_changed",
    "text_format_changed",
    "reasoning_effort_changed",
    "verbosity_changed",
    "context_compacted",
    "input_changed",
    "service_tier_changed",
)


def read_diagnostic(obj: object) -> str | None:
    """The server's own miss reason in a Responses body or ``response.completed`` event: a
    ``cache_miss``'s ``reason``, or ``comparison_response_not_found`` / ``unavailable``; None for a
    hit, no diagnostic, or a value the API does not document."""
    if not isinstance(obj, dict):
        return None
    for holder in (obj, mapping(obj.get("response"))):
        found = mapping(holder.get("prompt_cache_diagnostics"))
        kind = found.get("type")
        if kind == "cache_miss" and found.get("reason") in DIAGNOSTIC_REASONS:
            return str(found["reason"])
        if kind in DIAGNOSTIC_OUTCOMES:
            return str(kind)
    return None


RULES = ProviderRules(
    hosts_bill_list_price=True,  # closed weights: OpenAI's API and Azure's global deployments
    name="openai",
    api_base="https://api.openai.com",
    # Cline's OpenAI (native) handler subtracts the cached part from tokensIn; its "OpenAI
    # Compatible" handler (and Roo Code's "openai" protocol) keeps prompt_tokens whole.
    agent_handlers=(("openai-native", "additive"), ("openai", "subset")),
    usage_convention="subset",
    read_usage=read_usage,
    model_prefixes=("gpt", "o1", "o3", "o4", "codex"),
    block_tokens=INCREMENT,
    min_tokens=MIN_TOKENS,
    min_applies_to="read",
    ttls_ms=(("in_memory", IN_MEMORY_TTL_MS), ("24h", EXTENDED_TTL_MS), ("30m", BREAKPOINT_TTL_MS), ("12h", TWELVE_HOUR_TTL_MS)),
    default_ttl="in_memory",
    ttl_text="in-memory retention ~5-10 min idle (up to 1 h), 24 h with extended retention, 30 min or more with GPT-5.6 "
             "breakpoints, 12 h on GPT-6.2 Sol where asked",
    request_ttl=retention,
    retention_choices=retention_choices,
    long_write_ttls=("12h",),
    read_multiplier=0.1,
    write_multiplier=1.0,
    maker="OpenAI",
    best_effort_note="OpenAI routes by a prefix hash and caches best-effort",
    # [M] Codex rollouts (../shared's and a public one, 60 calls): a read often goes past the
    # previous prompt, into the previous response (reasoning included), which Codex sends back
    # whole; 13 reads equal the previous prompt + output floored to 128 tokens, 8 equal the
    # previous prompt floored. No OpenAI page says so.
    caches_output=True,
    # [M] BearTDK6/ba-pro (Codex 0.98, gpt-5.2-codex): 11 cold points read 8,320 tokens and 6 read
    # 7,680, at lane starts and after 1 to 27 h idle alike: neither level outlived the other.
    warm_head_most_read=True,
    # [M] OpenAI renders no reasoning item of an earlier turn (the reasoning guide), and Codex's
    # new turns read up to where the previous turn's reasoning began; GPT-5.6's went past it
    # (AkashJana18/edgerunner on gpt-5.6-sol, inspi-writer001/gildore-arena on gpt-5.6-terra).
    # Only 5.6 and its variants were measured: a later model keeps to the guide until one is.
    turn_reasoning_dropped=True,
    turn_reasoning_kept=(r"^(?:openai/)?gpt-5\.6",),
    # [M] BearTDK6/ba-pro (Codex 0.64 to 0.107, 2025-12 to 2026-03) and a public rollout (0.58):
    # after a call of gpt-5.1-codex (-max, -mini), gpt-5.2-codex or gpt-5.3-codex the next call
    # of its turn reads the previous prompt and that call's reasoning tokens, not its visible
    # output: ba-pro's 1,470 reads of these models 1,039 -> 1,093 within 3% (gpt-5.4 reads the
    # whole response: there it loses). Derived on half of ba-pro's rollouts, held out on the
    # other half (770 -> 803 of 1,029 reads), two other homes (Autos 162 -> 167, MoonMind
    # 169 -> 171) and ../shared's rollout (33 -> 34 of 39). See docs/audit.md, Calibration.
    output_read_to_reasoning=(r"^(?:openai/)?gpt-5\.[123]-codex",),
    diagnostics_fields=("prompt_cache_diagnostics",),
    body_model="openai",
    chain_as="openai",
    cache_options=OPTIONS,
    sources=(
        "https://developers.openai.com/api/docs/guides/prompt-caching",
        "https://learn.microsoft.com/azure/foundry/openai/how-to/prompt-caching",
        "https://github.com/openai/openai-python/blob/main/src/openai/types/responses/response_create_params.py",
        "https://developers.openai.com/api/docs/models/gpt-6.2-sol",
    ),
)
