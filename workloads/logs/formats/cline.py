"""Cline, Roo Code and Kilo Code task folders (``tasks/<id>/``).

A task folder holds three files, each read here whatever its name:

* ``ui_messages.json``: a JSON array of chat entries ``{ts, type: "say"|"ask", say|ask, text}``.
  Each ``say: "api_req_started"`` entry is one model call; its ``text`` is itself JSON
  ``{request, tokensIn, tokensOut, cacheWrites, cacheReads, cost, cancelReason?,
  streamingFailedMessage?}`` (Roo Code and Kilo Code add ``apiProtocol``, Kilo Code also
  ``usageMissing`` and ``inferenceProvider``; Cline 3.x adds ``modelInfo {providerId, modelId,
  mode}`` to the entry). The oldest logs (Claude Dev) put the counts in a following
  ``api_req_finished`` entry. A cancelled or failed stream keeps its
  entry with ``cancelReason`` / ``streamingFailedMessage``: counted apart, never in the totals.
  ``conversationHistoryDeletedRange`` (Cline's truncation, saved with the entries after the
  api_req_started of the call it truncated: that call's when its prompt fell), ``condense_context`` and
  ``sliding_window_truncation`` (Roo Code, Kilo Code) and ``compaction`` entries are compactions.
  Roo Code condenses for a call after saying its api_req_started (a placeholder, counted when the
  reply ends), so a condense or truncation entry after one and before its reply's first entry (a
  failed condense, a retry's or rate limit's countdown may come between: :data:`_BEFORE_REPLY`)
  is read as the truncation range is: that call's when its prompt fell below the previous call's
  or it read less than the previous call left cached, else the next call's. A condense entry
  still partial, or carrying neither ``contextCondense`` nor ``contextTruncation``, was
  interrupted: no compaction.
* ``api_conversation_history.json``: the messages sent (Anthropic-shaped, no system prompt, no
  tools). Read with the ``ui_messages.json`` beside it: the content blocks a call added since the
  previous one (the entry's ``conversationHistoryIndex`` says where its prompt ends). A folder
  walk leaves it to that file (``read_with``). Named alone, it yields one request per assistant
  message carrying ``metrics {tokens {prompt, completion, cached}}`` (Cline 3.x, 2026: ``prompt``
  the handler's tokensIn, ``cached`` its reads and writes summed; :func:`_history_usage`), and
  none from bare messages.
  Roo Code's and Kilo Code's user messages end with environment details naming the model in
  force (``<model>...</model>``): the model of a call whose other files name none
  (:class:`_HistoryModels`). Their messages' times place them between the calls (a call's
  user message is saved before its reply's first entry, the reply after): a call whose reply
  thought (thinking blocks, ``reasoning_details``) and a user message with more than tool results
  (a turn, for Anthropic: :func:`~prefixbench.workloads.logs.formats.common.kept_before_thinking`).
* ``task_metadata.json``: ``model_usage`` ``{ts, model_id, model_provider_id, mode}`` names the
  model and handler of calls whose entries do not (Cline before ``modelInfo``). Read with the
  ui file the same way.

Cline 4.x (the VS Code extension on the Cline SDK, from June 2026) and the Cline CLI keep a session
under ``~/.cline/data/sessions/<id>/`` instead: ``<id>.messages.json`` is one object ``{version: 1,
updated_at, agent: "lead"|"subagent"|"teammate", sessionId, messages, system_prompt?}``
rewritten whole on every change (a subagent's or teammate's file sits beside it). Each assistant
message that ends a model call carries ``modelInfo {id, provider}`` and ``metrics {inputTokens,
outputTokens, cacheReadTokens, cacheWriteTokens, cost}``: that call's usage, normalized by the SDK
whatever the provider, ``inputTokens`` the whole prompt with the reads and writes inside it. The
``<id>.compaction.json`` beside it holds the latest compacted context; its
``source_message_count`` says where in the history that compaction happened. ``<id>.json`` is the
session's manifest (no usage). A pre-4.0 task resumed in 4.x becomes such a session: its history
converted, the old task's summed usage on the last converted assistant message, then a user
message warning of a legacy conversation; that sum is skipped (the old task folder has the calls).
Earlier SDK releases also put a run's summed usage on its last assistant message (alone before
2026-04-22; beside per-turn metrics until cline/cline#10689): skipped too (:func:`_sdk_run_totals`).
From August 2026 (cline/cline#12927) a turn retried after empty replies carries its attempts'
usage summed: counted as one call, named in a note where its neighbours' prompts show it
(:func:`_sdk_retried`). Session files compared with cline/cline 21cb8d25 (2026-08-22) and the
Cline CLI 3.0.65 (@cline/core 0.0.86, 2026-09-27): a session it imported from Claude Code, Codex or
OpenCode holds that agent's calls' usage, skipped (:func:`_sdk_import`); a failed run's error
message marked ``displayOnly`` is never sent.

The four usage fields mean what the agent's provider handler made of the wire, which differs by
handler (:attr:`~prefixbench.simulator.providers.base.ProviderRules.agent_handlers`): Anthropic's
is additive; DeepSeek's puts the cache MISS count in ``cacheWrites`` (read here as uncached
input, never as a write); the OpenAI-compatible handler keeps ``prompt_tokens`` whole in
``tokensIn``; gateways (OpenRouter, Cline's own) report additive counts and may fold writes
into ``tokensIn`` (Cline's own reports ``cacheWrites`` 0 always: an Anthropic model's
``tokensIn`` there is read as written); Roo Code since late 2025 writes the whole prompt into ``tokensIn`` whatever
the protocol. Kilo Code's own gateway (handler ``kilocode``) is its OpenRouter handler: protocol
``openai``, ``tokensIn`` OpenRouter's ``prompt_tokens`` (the whole prompt, reads inside, writes
folded in), so read as the OpenAI-compatible handler's; under that protocol ``cacheWrites`` from a
model whose provider bills writes (Roo's OpenRouter, Requesty, LiteLLM handlers to Claude) are
writes inside ``tokensIn``; Kilo Code's virtual-quota-fallback handler is ``openai`` whatever
profile it wraps, an Anthropic one's counts additive (told from the counts); their Vercel AI
Gateway handler's ``anthropic`` protocol since late 2025 counts the reads and writes twice (told
from the counts too); Kilo Code's openai-native (to 4.81) and Groq (4.85-4.95) handlers
write ``tokensIn`` less the cached part under the ``openai`` protocol (told from the cost). Kilo
Code's gateway and OpenRouter handlers before June 2025 (no ``apiProtocol``) and Cline's OpenRouter
handler before cline/cline#3340 reported no cached tokens: told from the cost, their calls are
cache not reported, else a note says the log cannot tell. Cline's xAI, Z.AI,
Qwen, Fireworks, Doubao, HiCap and LM Studio handlers pass ``prompt_tokens`` on as the
OpenAI-compatible one does (``cacheWrites`` a MISS count or 0); LiteLLM, Requesty and OCA pass it on
with the writes inside (LiteLLM's and OCA's ``cacheWrites`` a DeepSeek model's MISS count);
OpenRouter's (before cline/cline#4314), Cline's own (before cline/cline#5426), Gemini's and
Moonshot's wrote it whole in early releases and additive later, told from the counts
(:data:`~prefixbench.simulator.providers.MULTI_PROVIDER_HANDLERS` for handlers no provider claims).
The reading used is stated in the file's notes, and so are calls whose own cost is 0 (a free
model: priced here at list, not as the log billed them).
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from decimal import Decimal
from fractions import Fraction
from itertools import combinations
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.pricing import PriceRow, get_price
from prefixbench.simulator.providers import (
    PROVIDERS,
    UNKNOWN,
    agent_handler,
    hosted_provider,
    multi_provider_handler,
    provider_named_in,
    provider_of_model,
)
from prefixbench.simulator.providers.base import ProviderRules, count, subset_usage
from prefixbench.simulator.providers.hosts import billing_host
from prefixbench.simulator.usage import PROMPT_EXCLUSIVE, PROMPT_EXCLUSIVE_BY_COST, Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import (
    as_dict, kept_before_thinking, logged_cost, logged_dollars, objects, parse_time_ms,
)
from prefixbench.workloads.logs.jsonlines import ZeroTail, ZerosAfterDocument, ZerosAfterRecord, is_skip, tail_reason
from prefixbench.workloads.logs.records import Record, iter_records
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Prefix, TraceRequest

NAME = "cline"
#: The file names a task folder gives its parts (a ui file is paired with these beside it).
HISTORY_FILE = "api_conversation_history.json"
METADATA_FILE = "task_metadata.json"
UI_FILE = "ui_messages.json"
#: Keys a message of api_conversation_history.json may carry besides role and content.
_HISTORY_KEYS = frozenset({"role", "content", "ts", "id", "modelInfo", "metrics", "reasoning_details", "isSummary",
                           "condenseId", "condenseParent", "truncationId", "truncationParent"})
_METADATA_KEYS = frozenset({"files_in_context", "model_usage", "environment_history"})
#: The keys every ``history_item.json`` has: the task's summary that Roo Code keeps in its task
#: folder since February 2026 (``TaskHistoryStore``), its usage summed over the task's calls.
_HISTORY_ITEM_KEYS = frozenset({"id", "number", "ts", "task", "tokensIn", "tokensOut", "totalCost"})
#: ``say`` entries that rewrite the history the next call sends.
_COMPACTIONS = {
    "condense_context": "context condensed",
    "sliding_window_truncation": "sliding-window truncation",
    "compaction": "context compacted",
}
_USER_TURNS = ("task", "user_feedback")
#: The ``say`` and ``ask`` types Roo Code and Kilo Code write between a call's api_req_started and
#: its reply (RooCodeInc/Roo-Code ``packages/types/src/message.ts``, ``Task.attemptApiRequest``):
#: the compaction made for the call, a failed condense, a rate limit's or a retry's countdown, a
#: failed request's retry prompt. Any other entry is the reply's (text, reasoning, a tool ask...).
_BEFORE_REPLY = frozenset({
    "api_req_started", "api_req_retry_delayed", "api_req_rate_limited", "api_req_retried", "api_req_failed",
    "condense_context", "condense_context_error", "sliding_window_truncation", "compaction",
})
#: Providers whose calls Cline sends back whole in the next call, so that a provider that caches
#: output serves the next call past this prompt: DeepSeek (its thinking mode wants
#: ``reasoning_content`` back with tool calls). On a real task (DeepSeek's handler, 60 calls)
#: reads reach into the previous call's output (2,706 of a 2,734-token reply): 55 of 60 within
#: 3% without this, 57 with it; the 3 left are a best-effort miss and two resumes. xAI too: on
#: Kilo's gateway (43 tasks, 120 grok-code-fast-1 calls) reads reach past the previous prompt
#: into its reply, up to prompt + reply + 1 in 64-token steps: 58 within 3% without this, 63 with it.
_REPLAYS_OUTPUT = frozenset({"deepseek", "xai"})
#: Cline's own provider (handler ``cline``, a gateway) writes ``cacheWriteTokens: 0`` whatever the
#: wire says (src/core/api/providers/cline.ts, 2026-01), while its OpenRouter stream marks the
#: system prompt and the last two user messages ``cache_control`` for Anthropic models: the
#: prompt past the reads is written, and its ``tokensIn`` holds those writes (its cost fields
#: price them at the write rate: $0.1999575 for 50,868 tokensIn on claude-sonnet-4.5).
_WRITES_IN_TOKENS_IN = frozenset({"cline"})
#: The ``agent`` of a Cline SDK session file, and the lane each is.
_SDK_AGENTS = {"lead": "main", "subagent": "subagent", "teammate": "subagent"}
#: The start of the user message Cline 4.x appends when it resumes a pre-4.0 task as an SDK
#: session (``LEGACY_RESUME_MODEL_WARNING``): the messages before it were converted from the old
#: task, the last assistant one carrying the old task's summed usage as its ``metrics``.
_LEGACY_RESUME_WARNING = "Warning: this is a legacy conversation"
#: The compaction state the Cline SDK keeps beside ``<id>.messages.json``.
SDK_MESSAGES_SUFFIX = ".messages.json"
SDK_COMPACTION_SUFFIX = ".compaction.json"
#: The tag Roo Code's and Kilo Code's environment details name the model in (:func:`_model_named`).
_MODEL_OPEN, _MODEL_CLOSE = "<model>", "</model>"
_DETAILS_OPEN, _DETAILS_CLOSE = "<environment_details>", "</environment_details>"
#: Why a call Kilo Code marks ``usageMissing`` (every count 0) is skipped.
_MISSING = "api_req_started marked usageMissing (Kilo Code found no usage for the call: its counts are 0)"
#: What each reading of the four fields says, for the notes.
_READING_TEXT: dict[str, str] = {
    "additive": "tokensIn excludes cacheReads and cacheWrites (additive)",
    "total": "tokensIn is the whole prompt, cacheReads and cacheWrites included (Roo Code / Kilo Code since late 2025; Cline 4.x inputTokens)",
    "subset": (
        "tokensIn is the whole prompt (prompt_tokens) and includes cacheReads; "
        "cacheWrites is not a write (a DeepSeek-shaped server's miss count, already inside tokensIn)"
    ),
    "miss-as-write": (
        "cacheWrites holds the provider's cache MISS count: read as uncached input, never as a cache write; "
        "tokensIn is 0 or the whole prompt"
    ),
    "gateway-total": (
        "a gateway's handler passing prompt_tokens on (LiteLLM, Requesty, OCA): tokensIn is the whole prompt, "
        "cacheReads and cacheWrites inside it"
    ),
    "protocol-total": (
        "the openai protocol with cacheWrites from a provider that bills writes: tokensIn is the whole prompt, "
        "cacheReads and cacheWrites (writes) inside it"
    ),
    "doubled-total": (
        "tokensIn counts cacheReads and cacheWrites twice: the Vercel AI Gateway handler's whole prompt_tokens "
        "under the anthropic protocol, to which Roo Code's / Kilo Code's writer since late 2025 adds the reads and "
        "writes again (told from the counts: every cached call's tokensIn is at least twice its reads and writes)"
    ),
    "protocol-additive": (
        "the openai protocol, yet tokensIn excludes cacheReads and cacheWrites (additive; cacheWrites real "
        "writes): an Anthropic-kind handler behind it, as Kilo Code's virtual-quota-fallback handler wraps one "
        "(told from the counts: a call with writes has tokensIn below its reads and writes)"
    ),
    "protocol-exclusive": (
        "the openai protocol, yet tokensIn is prompt_tokens less cacheReads (additive): Kilo Code's openai-native "
        "(chat completions, to 4.81) and Groq (Kimi K2, 4.85-4.95) handlers yield the uncached part, their cost "
        "the whole prompt_tokens priced (told from the cost: a call's cost is tokensIn at the input price and "
        "cacheReads at the read price, not tokensIn less cacheReads at the input price; for a model without listed "
        "prices, four calls' costs or more fit one set of prices only with a read price below the input price so)"
    ),
    "unreported": (
        "cache not reported: no call reports a cache read or write, yet the log's cost is not what the counts "
        "price at with no cache (Kilo Code's gateway and OpenRouter handlers before June 2025, Cline's OpenRouter "
        "handler before cline/cline#3340, May 2025, report no cached tokens, their cost the gateway's bill): "
        "tokensIn read as the whole prompt, its cached part not known"
    ),
    "by-counts-subset": (
        "tokensIn is the whole prompt (prompt_tokens) and includes cacheReads, as this handler wrote it in early "
        "releases (told from the counts: every call that read the cache has tokensIn at least its reads); "
        "later releases write it additive"
    ),
    "unnamed": (
        "read as additive, as every handler but DeepSeek's and the OpenAI-compatible one writes them "
        "(Claude Dev, or a log without modelInfo and task_metadata.json)"
    ),
    "zero-in": (
        "tokensIn is 0 on every call beside its cache counts, as only DeepSeek's handler writes them: "
        "cacheWrites read as the cache MISS count (uncached input), never as a cache write"
    ),
    "gateway": (
        "a gateway handler: tokensIn excludes cacheReads and cacheWrites (additive); "
        "where the gateway reports no writes they may be folded into tokensIn (counted as uncached)"
    ),
    "history-subset": (
        "metrics.tokens.prompt is the whole prompt (prompt_tokens) and includes metrics.tokens.cached, read as "
        "cache reads (a DeepSeek-shaped server's miss count would be inside it too)"
    ),
    "history-total-merged": (
        "metrics.tokens.prompt is the whole prompt (prompt_tokens passed on by a gateway's handler) and includes "
        "metrics.tokens.cached, which sums cache reads and writes: calls with cached above 0 are read as cache not "
        "reported, their cached tokens priced as a range, all read to all written"
    ),
    "history-total-misses": (
        "metrics.tokens.prompt is the whole prompt (prompt_tokens passed on by a gateway's handler, LiteLLM's or "
        "OCA's) and includes metrics.tokens.cached, which sums a DeepSeek-shaped server's cache hits and MISSES "
        "(the split is only in ui_messages.json): calls with cached above 0 are read as cache not reported, never "
        "as hits or writes, their cached tokens priced as a range, all hits to all misses"
    ),
    "history-total-misses-by-cost": (
        "metrics.tokens.prompt is the whole prompt (prompt_tokens passed on by a gateway's handler, LiteLLM's or "
        "OCA's) and includes metrics.tokens.cached, which sums a DeepSeek-shaped server's cache hits and MISSES, "
        "split by each call's own metrics.cost at the model's listed prices (misses at the input price; calls whose "
        "cost does not split to whole tokens: cache not reported); a miss is uncached input, never a write"
    ),
    "history-additive": (
        "metrics.tokens.prompt excludes metrics.tokens.cached (additive); cached read as cache reads "
        "(Cline sums reads and writes there; this provider or handler reports no writes apart)"
    ),
    "history-merged": (
        "metrics.tokens.cached sums cache reads and writes (Cline keeps the split only in ui_messages.json; "
        "this handler logs no cost to split it by): calls with cached above 0 are read as cache not reported, "
        "their cached tokens priced as a range, all read to all written"
    ),
    "history-by-cost": (
        "metrics.tokens.prompt excludes metrics.tokens.cached (additive); cached sums cache reads and writes, "
        "split by each call's own metrics.cost at the model's listed prices (calls whose cost does not split "
        "to whole tokens: cache not reported)"
    ),
    "history-misses-by-cost": (
        "DeepSeek's handler: metrics.tokens.cached sums cache hits and MISSES, split by each call's own "
        "metrics.cost at the model's listed prices (misses at the input price; calls whose cost does not split "
        "to whole tokens: cache not reported); a miss is uncached input, never a write"
    ),
    "history-misses": (
        "DeepSeek's handler: metrics.tokens.cached sums cache hits and MISSES (the split is only in "
        "ui_messages.json): calls with cached above 0 are read as cache not reported, never as hits or writes, "
        "their cached tokens priced as a range, all hits to all misses"
    ),
    "sdk-gateway-writes": (
        "Cline's own provider reports cacheWriteTokens 0 whatever was written, and marks an Anthropic model's "
        "last messages for caching: inputTokens less the reads read as written, but for the uncached tail "
        "after the last breakpoint where the call's own cost tells it apart"
    ),
    "gateway-writes": (
        "Cline's own provider reports cacheWrites 0 whatever was written, and marks an Anthropic "
        "model's last user messages for caching: tokensIn read as written (additive), but for the uncached tail "
        "after the last breakpoint where the call's own cost tells it apart"
    ),
    "whole-gateway-writes": (
        "Cline's own provider before cline/cline#5426 (August 2025) wrote prompt_tokens whole as tokensIn and "
        "cacheWrites 0 whatever was written (told from the counts: every call that read the cache has tokensIn at "
        "least its reads): for an Anthropic model the prompt past the reads read as written, but for the uncached "
        "tail after the last breakpoint where the call's own cost tells it apart"
    ),
    "cost-folded-writes": (
        "Roo Code's OpenRouter handler reports no cache writes (the writes folded into tokensIn, the whole prompt) "
        "while its calls' own costs bill them: for an Anthropic-kind model the prompt past the reads tokensIn read "
        "as written, but for the uncached tail after the last breakpoint where the call's own cost tells it apart"
    ),
    "folded-writes": (
        "Kilo Code's gateway and OpenRouter handlers report cacheWrites 0 whatever was written (the writes "
        "folded into tokensIn, the whole prompt): for an Anthropic-kind model the prompt past the reads "
        "tokensIn read as written, but for the uncached tail after the last breakpoint where the call's own cost "
        "tells it apart"
    ),
}


def _reading_notes(readings: dict[str, str]) -> list[str]:
    """The notes on how the usage was read: one per reading, naming every handler and model read
    so (a task that switched models says each reading once, not once per model)."""
    labels: dict[str, list[str]] = {}
    for label, reading in readings.items():
        labels.setdefault(reading, []).append(label)
    notes = []
    for reading, named in labels.items():
        said = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
        notes.append(f"usage of {said}: {_READING_TEXT[reading]}")
    return notes


def _is_sdk_session(value: dict) -> bool:
    """A Cline SDK session's ``<id>.messages.json`` (Cline 4.x, the Cline CLI)."""
    return (
        isinstance(value.get("sessionId"), str)
        and isinstance(value.get("messages"), list)
        and isinstance(value.get("version"), int)
        and isinstance(value.get("agent"), str)
        and value["agent"] in _SDK_AGENTS
    )


def detect(value: dict) -> Evidence | None:
    """A Cline SDK session file, a ui_messages entry (``ts`` and ``type`` say/ask), an api_conversation_history message (a
    bare role and content, nothing but the agent's own keys), or a task_metadata object."""
    if value and value.keys() <= _METADATA_KEYS and isinstance(value.get("model_usage", []), list):
        return Evidence.SHAPE  # (task metadata has none of the keys the tests below need)
    if not ("ts" in value or "messages" in value or "role" in value):
        # A ui_messages entry and a history item have a ts, an SDK session its messages, a history
        # message its role: every line of another agent's log is classified here too, most without.
        return None
    if _is_sdk_session(value):
        return Evidence.WRAPPER
    kind = value.get("type")
    if kind in ("say", "ask") and isinstance(value.get("ts"), (int, float)) and isinstance(value.get(kind), str):
        return Evidence.ENTRY
    if (
        value.get("role") in ("user", "assistant")
        and isinstance(value.get("content"), (str, list))
        and value.keys() <= _HISTORY_KEYS
    ):
        return Evidence.SHAPE
    if _is_history_item(value):
        return Evidence.SHAPE
    return None


def _is_history_item(value: dict) -> bool:
    """A Roo Code ``history_item.json``: the task's summary with its summed usage (no call)."""
    return value.keys() >= _HISTORY_ITEM_KEYS and isinstance(value.get("task"), str) and isinstance(value.get("tokensIn"), (int, float))


def _info(text: object) -> dict | None:
    """The JSON object an api_req_started / api_req_finished ``text`` holds (None: not one)."""
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: object) -> int:
    """A count where a wrong type only decides a reading (the reading itself refuses it)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _has_usage(info: dict) -> bool:
    return any(key in info for key in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads", "cost"))


def _usage(reading: str, info: dict, where: str) -> Usage:
    """The four fields as the normalized usage, per ``reading`` (see the module doc)."""
    tokens_in = count(info.get("tokensIn"), where, "tokensIn")
    reads = count(info.get("cacheReads"), where, "cacheReads")
    writes = count(info.get("cacheWrites"), where, "cacheWrites")
    output = count(info.get("tokensOut"), where, "tokensOut")
    if reading == "subset":
        if not tokens_in and writes:
            # Cline 3.17's xAI handler wrote tokensIn 0 beside the hits and the MISSES.
            return Usage(cache_read=reads, uncached=writes, output=output)
        # tokensIn is prompt_tokens: reads above it mean a server that leaves them out of it
        # (see subset_usage); cacheWrites is no write here.
        return subset_usage(tokens_in, reads, 0, output, excess="")
    if reading == "miss-as-write":
        return Usage(cache_read=reads, uncached=writes + max(0, tokens_in - reads - writes), output=output)
    if reading in ("total", "gateway-total"):
        return Usage(cache_read=reads, cache_write_5m=writes, uncached=max(0, tokens_in - reads - writes), output=output)
    if reading == "doubled-total":
        return Usage(cache_read=reads, cache_write_5m=writes, uncached=max(0, tokens_in - 2 * (reads + writes)), output=output)
    if reading == "protocol-exclusive":
        # (marked so, for the audit not to add the reads to a count that already leaves them out)
        how = "" if not reads else PROMPT_EXCLUSIVE if reads > tokens_in else PROMPT_EXCLUSIVE_BY_COST
        return Usage(cache_read=reads, uncached=tokens_in, output=output, prompt_count=how)
    if reading == "unreported":
        return Usage(uncached=tokens_in, output=output, cache_reported=False)
    return Usage(cache_read=reads, cache_write_5m=writes, uncached=tokens_in, output=output)


def _upstream(info: dict) -> ProviderRules | None:
    """The provider Kilo Code's ``inferenceProvider`` names: the upstream that served a call of an
    OpenRouter-shaped handler (Kilo's own gateway ``kilocode``, OpenRouter), as OpenRouter names it
    (``Anthropic``, ``Amazon Bedrock``, ``DeepSeek``...); None where it names none prefixbench
    models, or is absent."""
    name = info.get("inferenceProvider")
    if not isinstance(name, str) or not name.strip():
        return None
    found = hosted_provider(name.strip().lower())
    if found is not None:
        return found
    named = provider_named_in(name, UNKNOWN)
    return None if named is UNKNOWN else named


def _served_by(info: dict) -> str:
    """The upstream ``inferenceProvider`` names (trimmed, cut to 60 characters), "" where absent:
    each keeps a cache of its own."""
    name = info.get("inferenceProvider")
    return name.strip()[:60] if isinstance(name, str) else ""


#: The API handlers of Cline, Roo Code and Kilo Code (``modelInfo.providerId``, task_metadata's
#: ``model_provider_id``, the SDK's ``modelInfo.provider``) that are gateways passing the model
#: makers' models on, not a maker's own API (cline/cline ``src/core/api/providers/``,
#: RooCodeInc/Roo-Code ``src/api/providers/``): OpenRouter, Cline's own and Kilo Code's own
#: gateways, Requesty, LiteLLM, Vercel AI Gateway, Glama, Unbound, Roo Code Cloud, AIHubMix.
#: A call through one is read under the maker's rules and priced at its list price, the bill and
#: the cache that answered being the gateway's (:attr:`TraceRequest.relay`).
GATEWAY_HANDLERS = frozenset({"openrouter", "cline", "kilocode", "requesty", "litellm", "vercel-ai-gateway", "glama",
                              "unbound", "roo", "aihubmix", "poe"})


def _relay(handler: str, model: str, info: dict, by_cost: bool = False) -> str:
    """The gateway a call went through (:attr:`TraceRequest.relay`), from what the log says: a
    gateway's handler (:data:`GATEWAY_HANDLERS`), or, where the log names only Roo Code's
    protocol (``openai``), Roo Code's OpenRouter handler told from the cost (``by_cost``:
    :func:`_folded_by_cost`, a model named by OpenRouter's ``vendor/model`` id); "" for any other, and for a model no provider claims by
    name or an upstream that bills its own price (a host of open models: the maker's list price
    is not what was billed)."""
    relay = handler if handler in GATEWAY_HANDLERS else "openrouter" if by_cost and "/" in model else ""
    if not relay or _provider_of(model) is None or billing_host(_served_by(info)) or billing_host(handler):
        return ""
    return relay


def _route(handler: str, model: str, protocol: bool) -> str:
    """The gateway a call went through, for the rules' per-route steps (``route_steps``):
    ``openrouter`` where the handler is OpenRouter's, or where the log names only Roo Code's /
    Kilo Code's protocol (``openai``) and the model is a gateway's vendor slug
    (``google/gemini-2.5-pro``: through OpenRouter, as in the one measured task; an assumption);
    else the handler's id."""
    if handler == "openrouter" or (protocol and "/" in model):
        return "openrouter"
    return handler


def _provider_of(model: str) -> ProviderRules | None:
    """The provider a model id names (``anthropic/claude-...``, ``us.anthropic.claude-...``)."""
    found = provider_of_model(model.rsplit("/", 1)[-1])
    if found is not None:
        return found
    named = provider_named_in(model, UNKNOWN)
    return None if named is UNKNOWN else named


class _Pending:
    """An api_req_started entry waiting for its usage (the oldest logs give it in api_req_finished)."""

    def __init__(self, line: int, entry: dict, info: dict, events: list[tuple[str, str]], history_end: int | None,
                 path: str = "") -> None:
        self.line = line
        #: Which entry of a one-line file it is (``[57]``: :attr:`Record.path`), "" otherwise.
        self.path = path
        self.entry = entry
        self.info = info
        self.events = events
        self.history_end = history_end
        #: Truncations first seen on the entries after this call's api_req_started (before the
        #: next one): Cline truncates inside the request it has just announced, or (condensing
        #: as a tool) for the next one; which, the counts decide (:func:`_read_ui`).
        self.late: list[tuple[str, str]] = []
        #: The ``ts`` of the first entry after this one that is not a call's start (the reply's
        #: first words, most often): Roo Code saves the call's user message before it.
        self.replied: int | None = None
        #: Whether an entry of the reply came yet (one not in :data:`_BEFORE_REPLY`): until then a
        #: compaction entry may be this call's.
        self.answered = False


class _Task:
    """The calls of one ui_messages file, entry by entry."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.name = str(path)
        self.calls: list[_Pending] = []
        self.skipped: list[tuple[int, str]] = []
        self.events: list[tuple[str, str]] = []
        self.deleted: object = None
        self.model_info: dict | None = None
        self.cancelled: list[tuple[int, str, int]] = []
        self.last_started: _Pending | None = None
        #: ``deleted_api_reqs`` entries: (line, the summed usage of the calls a restore deleted).
        self.deleted_usage: list[tuple[int, dict]] = []
        #: ``subagent_usage`` entries (Cline's SDK build, 2026-08): (line, the summed usage of the
        #: subagents a ``spawn_agent`` round ran), see :data:`_SUBAGENT_USAGE`.
        self.subagent_usage: list[tuple[int, dict]] = []

    def entry(self, record: Record) -> None:
        value: dict = record.value  # type: ignore[assignment]
        kind = value.get("type")
        if kind not in ("say", "ask"):
            raise UserError(f"{self.name}:{record.line}: expected a say or ask entry of ui_messages (type {kind!r:.40})")
        pending = self.last_started
        #: No reply entry since the last call's api_req_started: Roo Code and Kilo Code condense (or
        #: truncate) for a call after saying its api_req_started, before its reply; a failed condense,
        #: a retry's or the rate limit's countdown may come first (:data:`_BEFORE_REPLY`).
        unreplied = pending is not None and not pending.answered
        if pending is not None and pending.replied is None and value.get("say") != "api_req_started":
            ts = value.get("ts")
            if isinstance(ts, int) and not isinstance(ts, bool):
                pending.replied = ts
        if pending is not None and _text(value.get(kind)) not in _BEFORE_REPLY:
            pending.answered = True
        deleted = value.get("conversationHistoryDeletedRange")
        if deleted is not None and deleted != self.deleted:
            if isinstance(deleted, list) and len(deleted) == 2:
                event = ("compaction", f"history truncated: messages {deleted[0]}-{deleted[1]} dropped")
                # Cline says api_req_started, then truncates the history for that request and
                # saves the new range with the entries after it: seen there first, it may be
                # this call's.
                started = kind == "say" and value.get("say") == "api_req_started"
                (self.events if started or self.last_started is None else self.last_started.late).append(event)
            self.deleted = deleted
        info = as_dict(value.get("modelInfo"))
        if info:
            if self.model_info is not None and (info.get("providerId"), info.get("modelId")) != (
                self.model_info.get("providerId"), self.model_info.get("modelId")
            ):
                self.events.append(("model_change", f"{info.get('providerId')}/{info.get('modelId')}"))
            self.model_info = info
        say = _text(value.get("say")) if kind == "say" else None
        ask = _text(value.get("ask")) if kind == "ask" else None
        if say in _USER_TURNS:
            self.events.append(("user_turn", ""))
        elif ask in ("resume_task", "resume_completed_task"):
            self.events.append(("resume", "task resumed"))
        elif say in _COMPACTIONS:
            status = as_dict(_info(value.get("text"))).get("status")
            # Roo Code and Kilo Code say a condense while it runs (partial, no contextCondense) and
            # again when it lands; an entry left so was interrupted: no compaction happened.
            landed = say == "compaction" or (value.get("partial") is not True and (
                "contextCondense" in value or "contextTruncation" in value))
            if status in (None, "completed") and landed:
                # Right after a call's start, it may be that call's (Roo's automatic condense, made
                # after the api_req_started it is for): decided by that call's prompt, as a
                # truncation range seen there is; after a reply, the next call's (a manual condense).
                (pending.late if pending is not None and unreplied and say != "compaction" else self.events).append(
                    ("compaction", _COMPACTIONS[say]))
        elif say == "deleted_api_reqs":
            # A checkpoint restore deleted the calls after it and left their summed usage here.
            self.deleted_usage.append((record.line, as_dict(_info(value.get("text")))))
            self.events.append(("fork", "checkpoint restored: the calls after it were deleted"))
        elif say == "subagent_usage":
            self.subagent_usage.append((record.line, as_dict(_info(value.get("text")))))
        elif say == "api_req_started":
            self._started(record, value)
        elif say == "api_req_finished":
            finished = _info(value.get("text"))
            pending = self.last_started
            if finished is not None and pending is not None and not _has_usage(pending.info):
                pending.info = {**pending.info, **finished}

    def _started(self, record: Record, value: dict) -> None:
        info = _info(value.get("text"))
        if info is None:
            self.skipped.append((record.line, "api_req_started text is not a JSON object"))
            return
        entry = dict(value)
        if self.model_info is not None and "modelInfo" not in entry:
            entry["modelInfo"] = self.model_info
        index = value.get("conversationHistoryIndex")
        end = index + 1 if isinstance(index, int) and not isinstance(index, bool) and index >= -1 else None
        pending = _Pending(record.line, entry, info, self.events, end, record.path)
        self.events = []
        self.calls.append(pending)
        self.last_started = pending


#: What a ``subagent_usage`` row is: Cline's SDK build (apps/vscode/src/sdk/message-translator.ts,
#: 2026-08) writes one when every ``spawn_agent`` call of a round has finished, summing the
#: subagents' ``inputTokens``, ``outputTokens`` and cost, its ``cacheWrites`` and ``cacheReads``
#: always 0: no call's usage, and no cache split.
_SUBAGENT_USAGE = ("the spawned subagents' calls summed by Cline, with no cache split (cacheWrites and cacheReads "
                   "written as 0): counted apart, not in the totals (their own session files hold the calls)")
#: The same where the rows do give a cache split (not Cline's subagents' rows: a fork of its SDK
#: build, lgiaccar/PlinyCode's ``advisor-rows.ts``, writes its advisor's call so, source "advisor").
_SUBAGENT_USAGE_SPLIT = "calls other than this task's summed by the agent (subagents', an advisor's): counted apart, not in the totals"


class _Metadata:
    """``model_usage`` of task_metadata.json: which model and handler served calls from when."""

    def __init__(self, entries: list[tuple[int, str, str]]) -> None:
        self.entries = sorted(entries)

    def at(self, ts: int | None) -> tuple[str, str] | None:
        if not self.entries:
            return None
        chosen = self.entries[0]
        for entry in self.entries:
            if ts is not None and entry[0] <= ts:
                chosen = entry
        return chosen[1], chosen[2]


def _side_records(path: Path, said: list[str]) -> Iterator[Record]:
    """The records of a file a task's ui_messages.json is read with (its history, its metadata).
    One whole before zero bytes that end it (after its last line, or after a whole record or
    document) is read, what is said of the zeros appended to
    ``said`` as ``NAME:LINE: ...`` (a note of the task's, and audit's warning); any other tail not
    read is refused with the error the file gives read whole (nothing of it is left out unsaid)."""
    torn: list[int] = []
    records = 0
    for record in iter_records(path, torn=torn):
        records += 1
        yield record
    if torn and is_skip(torn[0]) and type(torn[0]) is not ZeroTail:  # (zeros alone after whole lines: all read)
        for _ in iter_records(path):  # (raises at the tail: a side file's lines are all read or none)
            pass
        raise UserError(f"{path}:{int(torn[0])}: {tail_reason(torn[0])}")
    if torn:
        end = torn[0] if records != 1 else _document_zeros(path, torn[0])
        said.append(f"{path.name}:{int(end)}: {tail_reason(end)}")


def _document_zeros(path: Path, end: int) -> int:
    """``end``, the zero bytes that end a side file read as one JSON line (an object or an array
    Cline writes on one line), said as those after the JSON document it is: the zeros counted and
    placed in the file as it lies on disk (as its ui_messages.json's, read as a document, are).
    A ``ZeroTail`` (zeros on the line after it) or a ``ZerosAfterRecord`` (zeros right after it);
    ``end`` unchanged where the file on disk does not end in those zeros (a compressed copy)."""
    if type(end) not in (ZeroTail, ZerosAfterRecord):
        return end
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            zeros = 0
            while zeros < size:
                step = min(1 << 16, size - zeros)
                handle.seek(size - zeros - step)
                chunk = handle.read(step)
                kept = len(chunk.rstrip(b"\x00"))
                zeros += step - kept
                if kept:
                    break
    except OSError:
        return end
    if not zeros:
        return end
    return ZerosAfterDocument(int(end), zeros, size - zeros)


def _metadata(path: Path, said: list[str]) -> _Metadata:
    entries: list[tuple[int, str, str]] = []
    if path.is_file():
        for record in _side_records(path, said):
            usage = as_dict(record.value).get("model_usage")
            for item in usage if isinstance(usage, list) else ():  # anything else: no model history
                item = as_dict(item)
                ts = item.get("ts")
                if isinstance(ts, int) and not isinstance(ts, bool):
                    entries.append((ts, str(item.get("model_provider_id") or ""), str(item.get("model_id") or "")))
    return _Metadata(entries)


class _HistoryModels:
    """The model Roo Code and Kilo Code name in each user message's environment details
    (``<model>...</model>`` under ``# Current Mode``): the model in force when the message was
    sent. Roo Code announces a call (its ``api_req_started`` entry), then gathers the environment
    details and saves the user message, then streams the reply: a call's model is that of the
    user message saved from its start to its reply's first entry. A call with none there sent the
    latest message saved since the call before it started: a retry, or a parent task going on
    from a subtask's result (saved to its history when the subtask ended). A message older than
    that belongs to an earlier call: a history rewritten since (a restored task) names no model
    for the calls it lost."""

    def __init__(self, entries: list[tuple[int, str]]) -> None:
        entries = sorted(entries, key=lambda entry: entry[0])
        self.times = [ts for ts, _ in entries]
        self.models = [model for _, model in entries]

    def at(self, start: int | None, replied: int | None, since: int | None) -> str | None:
        if start is None:
            return None
        first = bisect_left(self.times, start)
        if first < len(self.times) and (replied is None or self.times[first] <= replied):
            return self.models[first]
        if first > 0 and (since is None or self.times[first - 1] > since):
            return self.models[first - 1]
        return None


def _texts(content: object, depth: int = 0) -> Iterable[str]:
    """The text of a message's content: a string, its text blocks, and the text inside its
    tool results (native tool calls put the environment details there)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list) and depth < 2:
        for block in content:
            if isinstance(block, str):
                yield block
            elif isinstance(block, dict):
                text = block.get("text")
                if isinstance(text, str):
                    yield text
                yield from _texts(block.get("content"), depth + 1)


def _model_named(content: object) -> str | None:
    """The last ``<model>`` tag of the environment details in a user message's text (not one in
    the text before them: a file read, a tool's output, the user's own words)."""
    found: str | None = None
    for text in _texts(content):
        details = text.rfind(_DETAILS_OPEN)
        if details < 0:
            continue
        closed = text.find(_DETAILS_CLOSE, details)
        end = text.rfind(_MODEL_CLOSE, details, closed if closed >= 0 else len(text))
        start = text.rfind(_MODEL_OPEN, details, end) if end >= 0 else -1
        if start >= 0:
            named = text[start + len(_MODEL_OPEN) : end].strip()
            if named and len(named) <= 200 and not any(c in named for c in "\n<>"):  # (no tag inside)
                found = named
    return found


#: Content blocks of an assistant message that are its thinking (Anthropic's, and as Kilo Code
#: keeps a gateway's).
_THINKING = frozenset({"thinking", "redacted_thinking", "reasoning"})


def _history(path: Path, said: list[str]) -> tuple[list[int] | None, _HistoryModels, list[tuple[int, bool, bool]]]:
    """Content blocks per message of the api_conversation_history.json beside a ui file, the
    models its user messages name, and each message that gives its time as ``(ts, thought,
    new_turn)``: an assistant message that holds thinking (a thinking block, or the
    ``reasoning_details`` Kilo Code keeps), a user message with more than tool results (text the
    user typed, the environment details Roo Code and Kilo Code add after a subtask)."""
    if not path.is_file():
        return None, _HistoryModels([]), []
    blocks: list[int] = []
    models: list[tuple[int, str]] = []
    turns: list[tuple[int, bool, bool]] = []
    for record in _side_records(path, said):
        message = as_dict(record.value)
        content = message.get("content")
        blocks.append(len(content) if isinstance(content, list) else 1)
        ts = message.get("ts")
        if not isinstance(ts, int) or isinstance(ts, bool):
            continue
        # A block's type that is not text (an object, a list) names no kind: it cannot be looked up.
        kinds = [kind if isinstance(kind := as_dict(b).get("type"), str) else None for b in content] if isinstance(content, list) else ["text"]
        if message.get("role") == "user":
            named = _model_named(content)
            if named is not None:
                models.append((ts, named))
            turns.append((ts, False, any(kind != "tool_result" for kind in kinds)))
        elif message.get("role") == "assistant":
            turns.append((ts, bool(message.get("reasoning_details")) or any(kind in _THINKING for kind in kinds), False))
    return blocks, _HistoryModels(models), turns


def _reading(handler: str) -> tuple[ProviderRules | None, str]:
    """The provider a handler id names and how its four fields read (``gateway``: no provider
    claims it and its way is not known; ``unnamed``: the log names no handler)."""
    if not handler:
        return None, "unnamed"
    found = agent_handler(handler)
    if found is not None:
        return found
    return None, multi_provider_handler(handler) or "gateway"


def _inclusive_tokens_in(calls: list[_Pending], named: list[tuple[int | None, str, str, bool]], handler: str) -> bool:
    """A handler that wrote ``prompt_tokens`` whole in early releases and less the cached part
    later (``by-counts``): whole where every call of ``handler`` that read the cache has a
    tokensIn at least its reads, and one did (an additive tokensIn after a read is the new tail,
    smaller than the prefix read on some call of a task). A call's handler is the one
    :func:`_named` gives it (its entry's, else task_metadata.json's)."""
    seen = False
    for call, (_, named_handler, _, protocol) in zip(calls, named):
        if protocol or named_handler != handler:
            continue
        reads = _int(call.info.get("cacheReads"))
        if reads > 0:
            seen = True
            if _int(call.info.get("tokensIn")) < reads:
                return False
    return seen


def _misses_as_writes(rules: ProviderRules | None) -> bool:
    """A provider whose server sends its cache MISS count (``prompt_cache_miss_tokens``), which
    handlers that pass the wire on copy into cacheWrites: DeepSeek's kind."""
    return rules is not None and any(reading == "miss-as-write" for _, reading in rules.agent_handlers)


def _total_tokens_in(calls: list[_Pending]) -> bool:
    """Roo Code / Kilo Code since late 2025: ``tokensIn`` is the whole prompt under the anthropic
    protocol too. Told from the counts: every cached call's tokensIn covers its reads and writes."""
    seen = False
    for call in calls:
        info = call.info
        if "apiProtocol" not in info:
            continue
        cached = _int(info.get("cacheReads")) + _int(info.get("cacheWrites"))
        if cached > 0:
            seen = True
            if _int(info.get("tokensIn")) < cached:
                return False
    return seen


def _named(call: _Pending, sent: int | None, since: int | None, metadata: _Metadata,
           history_models: _HistoryModels) -> tuple[str, str, bool]:
    """A call's handler, model (``unknown`` where no file names one) and whether the handler is
    Roo Code's / Kilo Code's ``apiProtocol`` (no handler named otherwise): from its entry's
    ``modelInfo``, else task_metadata.json, else the history's environment details, else those
    at the end of the entry's own ``request``; ``since``: the previous call's start."""
    model_info = as_dict(call.entry.get("modelInfo"))
    handler = str(model_info.get("providerId") or "")
    model = str(model_info.get("modelId") or "")
    if not handler or not model:
        named = metadata.at(sent)
        if named is not None:
            handler, model = handler or named[0], model or named[1]
    if not model:
        model = history_models.at(sent, call.replied, since) or ""
    if not model:
        # Roo Code's and Kilo Code's entry keeps the user message it sent as ``request``, the
        # environment details (and their <model>) at its end: the call's own, where a rewritten
        # history lost the message.
        model = _model_named(call.info.get("request")) or ""
    protocol = not handler and isinstance(call.info.get("apiProtocol"), str)
    if protocol:
        handler = call.info["apiProtocol"]
    return handler, model or NO_MODEL, protocol


def _protocol_additive(calls: list[_Pending], named: list[tuple[int | None, str, str, bool]]) -> set[str]:
    """The models whose calls under Roo Code's / Kilo Code's ``openai`` protocol carry additive
    counts: an Anthropic-kind handler behind it, which only Kilo Code's virtual-quota-fallback
    handler puts there (its protocol is ``openai`` whatever profile it wraps, and it passes the
    wrapped handler's usage on: src/api/providers/virtual-quota-fallback.ts, Kilo Code 4.64 on).
    Told from the counts: a call of the model, whose provider bills writes, with writes and a
    tokensIn below its reads and writes, which no handler writing ``prompt_tokens`` whole (the
    writes inside it) gives."""
    found: set[str] = set()
    for call, (_, handler, model, protocol) in zip(calls, named):
        info = call.info
        stopped = info.get("cancelReason") or info.get("streamingFailedMessage")
        if not protocol or _reading(handler)[1] != "subset" or model in found or stopped:
            continue
        writes = _int(info.get("cacheWrites"))
        if not writes or _int(info.get("tokensIn")) >= _int(info.get("cacheReads")) + writes:
            continue
        rules = _provider_of(model) or _upstream(info)
        if rules is not None and rules.bills_writes and not _misses_as_writes(rules):
            found.add(model)
    return found


#: The room between a call's own cost and the cost its counts price at the model's listed prices
#: (the handler's price table may differ from this project's in the last digits).
_COST_ROOM = Decimal("0.01")


def _price_row(model: str, sent_ms: int | None) -> PriceRow | None:
    """The model's price row in force when the call was sent (None: no price, or no time that
    dates one)."""
    try:
        when = None if sent_ms is None else datetime.fromtimestamp(sent_ms / 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
        return get_price(model, as_of=when)
    except (UserError, ValueError, OverflowError, OSError):
        return None


def _list_cost(model: str, sent_ms: int | None, uncached: int, reads: int, output: int) -> Decimal | None:
    """What ``uncached`` input, ``reads`` and ``output`` tokens cost at the model's listed prices
    when the call was sent (None: no price, or no read price where there are reads)."""
    row = _price_row(model, sent_ms)
    if row is None:
        return None
    rates = row.rates
    if row.long_tier and uncached + reads > row.long_tier.threshold:
        return None  # (a long prompt's prices: not told here)
    if rates.input is None or rates.output is None or (reads and rates.cache_read is None):
        return None
    return (uncached * rates.input + reads * (rates.cache_read or 0) + output * rates.output) / 1_000_000


def _stated_cost(value: object) -> float | None:
    """A call's own cost, where it is one to solve or check prices by: above 0 and within
    :func:`logged_dollars`' range (a huge integer is out of range there, where ``math.isfinite``
    or ``float`` of it raised OverflowError and the audit crashed)."""
    dollars = logged_dollars(value)
    return dollars if dollars else None


def _fits(cost: object, priced: Decimal | None) -> bool | None:
    """Whether a call's own ``cost`` is ``priced`` (None: no cost or no price to tell by)."""
    dollars = _stated_cost(cost)
    if priced is None or dollars is None:
        return None
    logged = Decimal(repr(dollars))
    return abs(logged - priced) <= _COST_ROOM * logged


def _exclusive_by_cost(calls: list[_Pending], named: list[tuple[int | None, str, str, bool]]) -> set[str]:
    """The models whose calls under Roo Code's / Kilo Code's ``openai`` protocol write tokensIn
    less the cached part: Kilo Code's openai-native handler (its chat-completions path, to 4.81;
    before June 2025 no protocol is named and the additive reading holds) and its Groq handler
    (Kimi K2's caching, 4.85 to 4.95) yield ``prompt_tokens`` less
    ``cached_tokens`` as inputTokens and, as the cost, ``calculateApiCostOpenAI`` of the whole
    ``prompt_tokens`` (src/api/providers/openai-native.ts, groq.ts). A call whose reads exceed its
    tokensIn says so itself (:func:`subset_usage`); one at or below fits either reading but for
    its cost. Told from the cost: a call with reads whose cost is tokensIn at the input price and
    its reads at the read price (within 1%), not tokensIn less the reads at the input price, and no
    call of the model whose cost says the other way; a model without listed prices (Groq's Kimi
    K2) by the prices its calls' costs fit (:func:`_fitted_read_price`)."""
    verdict: dict[str, bool] = {}
    unpriced: dict[str, list[tuple[int, int, int, Fraction]]] = {}
    for call, (sent, handler, model, protocol) in zip(calls, named):
        info = call.info
        stopped = info.get("cancelReason") or info.get("streamingFailedMessage")
        if not protocol or _reading(handler)[1] != "subset" or verdict.get(model) is False or stopped:
            continue
        reads, tokens_in, output = _int(info.get("cacheReads")), _int(info.get("tokensIn")), _int(info.get("tokensOut"))
        if _int(info.get("cacheWrites")):
            continue
        cost = info.get("cost")
        if _list_cost(model, sent, tokens_in, reads, output) is None:
            if (dollars := _stated_cost(cost)) is not None:
                unpriced.setdefault(model, []).append((tokens_in, reads, output, Fraction(repr(dollars))))
            continue
        if not reads:
            continue
        exclusive = _fits(cost, _list_cost(model, sent, tokens_in, reads, output))
        inclusive = _fits(cost, _list_cost(model, sent, tokens_in - reads, reads, output)) if reads <= tokens_in else False
        if exclusive and inclusive is False:
            verdict.setdefault(model, True)
        elif inclusive and exclusive is False:
            verdict[model] = False
    for model, rows in unpriced.items():
        if model not in verdict:
            fitted = _fitted_read_price(rows)
            if fitted is not None:
                verdict[model] = fitted
    return {model for model, exclusive in verdict.items() if exclusive}


def _fitted_read_price(rows: list[tuple[int, int, int, Fraction]]) -> bool | None:
    """For a model without a listed price: whether its calls' (tokensIn, reads, output, cost) fit
    one set of prices with tokensIn the uncached part (True) or the whole prompt (False). Both
    readings fit three calls exactly, so the prices solved from three calls are checked on every
    other (four calls at least, within 0.1%); read as the uncached part, tokensIn less the reads
    fits with a read price above the input price (the read price plus the input price), which no
    provider charges: so the reading is the one whose read price lies from 0 to the input price.
    None: too few calls, calls the prices do not fit, or prices neither reading gives."""
    if len(rows) < 4 or not any(reads for _, reads, _, _ in rows):
        return None
    # The three calls of the first twelve whose counts differ most (the largest determinant).
    head = rows[:12]
    best = max(((abs(_det([[Fraction(n) for n in row[:3]] for row in trio])), trio) for trio in combinations(head, 3)),
               key=lambda found: found[0])
    solved = _solve3(list(best[1]))
    if solved is None:
        return None
    uncached, read, output = solved
    if any(abs(t * uncached + r * read + o * output - cost) > cost / 1000 for t, r, o, cost in rows):
        return None
    if uncached <= 0 or output < 0:
        return None
    if 0 <= read < uncached:
        return True
    if -uncached <= read < 0:
        return False
    return None


def _det(m: list[list[Fraction]]) -> Fraction:
    """The determinant of a 3x3 matrix."""
    return (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]))


def _solve3(rows: list[tuple[int, int, int, Fraction]]) -> tuple[Fraction, Fraction, Fraction] | None:
    """The prices (input, read, output) three calls' counts and costs give (Cramer's rule; None
    where the counts do not tell them apart)."""
    matrix = [[Fraction(t), Fraction(r), Fraction(o)] for t, r, o, _ in rows]
    whole = _det(matrix)
    if whole == 0:
        return None
    costs = [cost for _, _, _, cost in rows]
    found = []
    for column in range(3):
        swapped = [[costs[n] if c == column else matrix[n][c] for c in range(3)] for n in range(3)]
        found.append(_det(swapped) / whole)
    return found[0], found[1], found[2]


def _folded_by_cost(calls: list[_Pending], named: list[tuple[int | None, str, str, bool]]) -> set[str]:
    """The Anthropic-kind models whose calls under Roo Code's ``openai`` protocol name no
    ``inferenceProvider`` and report no write, yet whose costs bill the prompt past the reads as
    written: Roo Code's OpenRouter handler (to late 2025) yields OpenRouter's ``prompt_tokens``
    (the reads inside, the writes folded in) and no ``cacheWriteTokens`` at all, its cost
    OpenRouter's ``cost`` plus ``upstream_inference_cost`` (with a key of one's own: the
    upstream's bill and OpenRouter's 5% fee), as Kilo Code's OpenRouter handler does with the
    upstream named. Told from the cost: some call's cost is above what its counts price at with
    no write (by more than 1%) and not below what they price at with the prompt past the reads
    written, and no call of the model has a cost that fits the first and is below the second."""
    verdict: dict[str, bool] = {}
    for call, (sent, handler, model, protocol) in zip(calls, named):
        info = call.info
        if (not protocol or _reading(handler)[1] != "subset" or verdict.get(model) is False
                or isinstance(info.get("inferenceProvider"), str) or _int(info.get("cacheWrites"))
                or info.get("cancelReason") or info.get("streamingFailedMessage")):
            continue
        rules = _provider_of(model)
        if rules is None or not rules.is_additive or not rules.bills_writes:
            continue
        reads, tokens_in, output = _int(info.get("cacheReads")), _int(info.get("tokensIn")), _int(info.get("tokensOut"))
        dollars, row = _stated_cost(info.get("cost")), _price_row(model, sent)
        plain = _list_cost(model, sent, tokens_in - reads, reads, output) if reads < tokens_in else None
        if dollars is None or row is None or plain is None or row.rates.cache_write is None:
            continue
        written = plain + (tokens_in - reads) * (row.rates.cache_write - row.rates.input) / 1_000_000
        logged = Decimal(repr(dollars))
        if logged > plain * (1 + _COST_ROOM) and logged >= written * (1 - _COST_ROOM):
            verdict.setdefault(model, True)
        elif _fits(dollars, plain) and logged < written * (1 - _COST_ROOM):
            verdict[model] = False
    return {model for model, folded in verdict.items() if folded}


#: Handlers that reported no cached tokens at all in some releases, a gateway's bill as the cost:
#: Cline's OpenRouter handler before cline/cline#3340 (May 2025: the generation endpoint's
#: counts, cacheReadTokens 0), and, naming no handler (no apiProtocol before June 2025), Kilo
#: Code's gateway and OpenRouter handlers (``cacheReadTokens`` commented out until Kilo Code's
#: fb40132, 2025-06-20) and Roo Code's OpenRouter handler of the same code.
_UNREPORTING_HANDLERS = frozenset({"", "openrouter"})


def _unreported_cache(calls: list[_Pending], named: list[tuple[int | None, str, str, bool]]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The (handler, model) pairs of :data:`_UNREPORTING_HANDLERS` none of whose calls in the file
    reports a cache read or write: first those whose cache use the handler left out, told from the
    cost (a call's own cost is not what its counts price at with no cache, by more than 1%), then
    those of two calls or more the log cannot tell (no cost or no price to tell by, or every cost
    fits: nothing cached, or a handler that priced its own counts)."""
    reported: set[tuple[str, str]] = set()
    fits: dict[tuple[str, str], list[bool | None]] = {}
    for call, (sent, handler, model, protocol) in zip(calls, named):
        info = call.info
        if protocol or handler not in _UNREPORTING_HANDLERS or info.get("cancelReason") or info.get("streamingFailedMessage"):
            continue
        if _int(info.get("cacheReads")) or _int(info.get("cacheWrites")):
            reported.add((handler, model))
        elif _int(info.get("tokensIn")) or _int(info.get("tokensOut")):
            priced = _list_cost(model, sent, _int(info.get("tokensIn")), 0, _int(info.get("tokensOut")))
            fits.setdefault((handler, model), []).append(_fits(info.get("cost"), priced))
    unreported = {pair for pair, found in fits.items() if pair not in reported and False in found}
    unknown = {pair for pair, found in fits.items() if pair not in reported and pair not in unreported and len(found) > 1}
    return unreported, unknown


def _doubled_tokens_in(calls: list[_Pending], named: list[tuple[int | None, str, str, bool]]) -> set[str]:
    """The models whose calls under Roo Code's / Kilo Code's ``anthropic`` protocol count the
    reads and writes twice in tokensIn: the Vercel AI Gateway handler (a gateway's model id,
    ``provider/model``) passes ``prompt_tokens`` on, the reads and writes inside it, as the
    uncached input the protocol expects, and the writer since late 2025 (Roo Code #8954, Kilo
    Code after it) adds the reads and writes again (``calculateApiCostAnthropic``'s
    ``totalInputTokens``). Told from the counts: every call of the model that read or wrote the
    cache, and one did, has tokensIn at least twice its reads and writes, which a whole prompt
    gives only where the tail past the cached part outweighs it on every call."""
    seen: dict[str, bool] = {}
    for call, (_, handler, model, protocol) in zip(calls, named):
        info = call.info
        if not protocol or "/" not in model or _reading(handler)[1] != "additive" or seen.get(model) is False:
            continue
        cached = _int(info.get("cacheReads")) + _int(info.get("cacheWrites"))
        if cached > 0 and not info.get("cancelReason") and not info.get("streamingFailedMessage"):
            seen[model] = _int(info.get("tokensIn")) >= 2 * cached
    return {model for model, doubled in seen.items() if doubled}


def _zero_tokens_in(calls: list[_Pending]) -> ProviderRules | None:
    """The provider whose handler writes tokensIn 0 beside its cache counts (DeepSeek's puts the
    whole prompt in cacheReads + cacheWrites), when every call of a file naming no handler does
    so and one of them counts a cacheWrite: no other handler leaves tokensIn at 0 on every call."""
    finished = [c.info for c in calls if _has_usage(c.info) and not c.info.get("cancelReason")]
    if not finished or any(c.info.get("apiProtocol") for c in calls):
        return None
    if any(info.get("tokensIn") not in (0, None) for info in finished) or not any(_int(i.get("cacheWrites")) for i in finished):
        return None
    return next((rules for rules in PROVIDERS.values() if any(r == "miss-as-write" for _, r in rules.agent_handlers)), None)


def _call(file: str, line: int, seq: int, sent: int | None, done: int | None, rules: ProviderRules | None, model: str,
          usage: Usage, chain: tuple[str, str, str | None, int], events: list[tuple[str, str]], *, lane: str = "main",
          lane_kind: str = "main", request_id: str | None = None, grid: tuple[int, int, int] = (0, 0, 0), upstream: str = "",
          path: str = "", shared: int | None = None, relay: str = "") -> TraceRequest:
    """One call of any of Cline's files: its provider from ``rules`` (unknown without); ``chain``:
    its prefix's (key, node, parent, new blocks), replaying the previous answer where that
    provider's cache keeps output; ``grid``: the ``(step, first, lag)`` its reads follow where
    the upstream a gateway names or the route decides it (else ``(0, 0, 0)``); ``upstream``: the server that gateway
    names as the one that served it (``inferenceProvider``), "" where none; ``path``: where in
    its line it is (``[57]``, ``messages[3]``: :attr:`TraceRequest.path`), "" where it has the
    line to itself; ``shared``: of the parent's prompt, what this one keeps (:attr:`Prefix.shared`);
    ``relay``: the gateway it went through (:func:`_relay`), "" where none."""
    provider = UNKNOWN.name if rules is None else rules.name
    key, node, parent, blocks = chain
    return TraceRequest(
        file=file, line=line, lane=lane, lane_kind=lane_kind,  # type: ignore[arg-type]
        seq=seq, sent_ms=sent, ready_ms=None, done_ms=done, provider=provider, model=model, usage=usage,
        prefix=Prefix(key, node, parent, max(1, blocks), replays_output=provider in _REPLAYS_OUTPUT, shared=shared),
        events=tuple(events),
        request_id=request_id, source_format=NAME, read_step=grid[0], read_offset=grid[1], read_lag=grid[2], upstream=upstream,
        path=path, relay=relay if rules is not None else "",
    )


def _read_ui(path: Path, records: Iterable[Record]) -> tuple[list[TraceRequest], FileSummary]:
    task = _Task(path)
    for record in records:
        task.entry(record)
    said: list[str] = []  # what is said of zero bytes that end a file read with this one
    metadata = _metadata(path.with_name(METADATA_FILE), said)
    history, history_models, turns = _history(path.with_name(HISTORY_FILE), said)
    #: The chain's calls so far, oldest first, ``(model, thought, new_turn, prompt)`` (as
    #: :func:`kept_before_thinking` reads them, reversed), and the last one's reply time.
    chain: list[tuple[str, bool, bool, int]] = []
    last_replied: int | None = None
    roo_total = _total_tokens_in(task.calls)
    zero_in = _zero_tokens_in(task.calls)
    out: list[TraceRequest] = []
    readings: dict[str, str] = {}
    inclusive: dict[str, bool] = {}
    #: Calls whose own cost field is 0 (a free model, or a plan), by model.
    unbilled: dict[str, int] = {}
    upstreams: set[str] = set()
    cost = 0.0
    uncosted = 0  # calls counted whose cost field is absent or 0, and costs of calls not counted
    apart: dict[str, list[int]] = {}
    parent: str | None = None
    history_done = 0
    carried: list[tuple[str, str]] = []
    #: The prompt of the last counted call and what it left cached (its read and write): a
    #: truncation seen after a call's start is that call's when its prompt is below the one, or
    #: its read below the other.
    last_prompt: int | None = None
    last_cached: int | None = None
    previous_start: int | None = None
    named_calls: list[tuple[int | None, str, str, bool]] = []
    for call in task.calls:
        sent = parse_time_ms(call.entry.get("ts"), f"{task.name}:{call.line}")
        named_calls.append((sent, *_named(call, sent, previous_start, metadata, history_models)))
        previous_start = sent
    protocol_additive = _protocol_additive(task.calls, named_calls)
    exclusive = _exclusive_by_cost(task.calls, named_calls)
    priced_folded = _folded_by_cost(task.calls, named_calls)
    told_by_cost = False  # some call's relay told from its cost (_relay's by_cost), the log naming none
    unreported, untold = _unreported_cache(task.calls, named_calls)
    doubled = _doubled_tokens_in(task.calls, named_calls)
    for call, (sent, handler, model, protocol) in zip(task.calls, named_calls):
        where = f"{task.name}:{call.line}"
        info = call.info
        events = carried + call.events
        stopped = info.get("cancelReason") or ("streaming_failed" if info.get("streamingFailedMessage") else None)
        if stopped is not None:
            reason = "failed" if str(stopped) != "user_cancelled" else "cancelled"
            tokens = sum(count(info.get(k), where, k) for k in ("tokensIn", "cacheWrites", "cacheReads"))
            apart.setdefault(reason, []).append(tokens)
            task.skipped.append((call.line, f"{reason} stream ({str(stopped)[:40]}): counted apart, not in the totals"))
            carried = events + call.late
            continue
        if not _has_usage(info):
            task.skipped.append((call.line, "api_req_started with no usage (the call never finished)"))
            carried = events + call.late
            continue
        if not any(count(info.get(k), where, k) for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads")):
            # Every count 0: a call that failed ("the language model did not provide any assistant
            # messages") or a provider that streamed no usage; no call of known usage either way.
            # Kilo Code marks the latter usageMissing (its stream ended with no usage chunk).
            task.skipped.append((call.line, _MISSING if info.get("usageMissing") is True else
                                 "api_req_started with every count 0 (a failed call, or no usage reported)"))
            carried = events + call.late
            continue
        carried = []
        owner, reading = _reading(handler)
        if reading == "by-counts":
            if handler not in inclusive:
                inclusive[handler] = _inclusive_tokens_in(task.calls, named_calls, handler)
            reading = "by-counts-subset" if inclusive[handler] else "additive" if owner is not None else "gateway"
        if reading == "unnamed" and zero_in is not None:
            owner, reading = zero_in, "miss-as-write"
        if protocol and reading != "additive":
            owner = None  # Roo Code's "openai" protocol is every provider but Anthropic's kind
        if reading == "additive" and roo_total and "apiProtocol" in info:
            reading = "total"
        if protocol and reading in ("additive", "total") and model in doubled:
            reading = "doubled-total"
        upstream = _upstream(info)
        by_model = _provider_of(model)
        rules = by_model or upstream or owner
        if reading == "total" and not protocol and _reading(handler)[1] == "total":
            # A gateway's handler passing prompt_tokens on (LiteLLM, Requesty): LiteLLM writes a
            # DeepSeek-shaped server's MISS count as cacheWrites. (Not an additive handler Roo
            # Code's / Kilo Code's writer made whole since late 2025: that is "total" as it is.)
            reading = "miss-as-write" if _misses_as_writes(rules) else "gateway-total"
        elif protocol and reading == "subset" and model in protocol_additive:
            # Kilo Code's virtual-quota-fallback handler: protocol openai whatever profile it
            # wraps, an Anthropic-kind one's counts additive (_protocol_additive).
            reading = "protocol-additive"
        elif protocol and reading == "subset" and model in exclusive:
            reading = "protocol-exclusive"
        elif (protocol and reading == "subset" and _int(info.get("cacheWrites")) and rules is not None
              and rules.bills_writes and not _misses_as_writes(rules)
              and _int(info.get("tokensIn")) >= _int(info.get("cacheReads")) + _int(info.get("cacheWrites"))):
            # Roo Code's and Kilo Code's "openai" protocol: tokensIn is the whole prompt, the reads
            # and writes inside; cacheWrites is a write where the model's provider bills writes
            # (OpenRouter, Requesty, LiteLLM, Roo's gateway to Claude), a MISS count on DeepSeek's.
            reading = "protocol-total"
        if not protocol and (handler, model) in unreported and reading != "miss-as-write":
            reading = "unreported"
        if by_model is None and upstream is not None and rules is upstream:  # no model named, or none a provider claims
            upstreams.add(f"{info['inferenceProvider'].strip()[:40]} ({upstream.name})")
        label = f"{'protocol ' if protocol else ''}{handler} ({model})" if handler else f"calls naming no handler ({model})"
        readings.setdefault(label, "zero-in" if not handler and reading == "miss-as-write" else reading)
        usage = _usage("additive" if reading in ("gateway", "unnamed", "protocol-additive") else "subset" if reading == "by-counts-subset"
                       else "total" if reading in ("gateway-total", "protocol-total") else reading, info, where)
        # Kilo Code's gateway and OpenRouter handlers (their protocol's tokensIn the whole prompt,
        # the calls naming their inferenceProvider) fold an Anthropic model's writes into
        # tokensIn, as Cline's own provider does: a model its name gives to an Anthropic-kind
        # provider, or, no model named, served by one; not a model no provider claims (an open
        # model an Anthropic-kind upstream serves, Llama on Bedrock: no write to fold).
        folded = (protocol and reading == "subset" and isinstance(info.get("inferenceProvider"), str)
                  and (model == NO_MODEL or _provider_of(model) is not None))
        # Roo Code's OpenRouter handler folds them the same way, naming no upstream: told from the cost.
        by_cost = protocol and reading == "subset" and model in priced_folded and not folded
        gateway = _gateway_writes(handler, rules, usage, model, sent, info.get("cost"), folded or by_cost)
        if gateway is not None:
            usage, readings[label] = gateway, ("folded-writes" if folded else "cost-folded-writes" if by_cost
                                               else "whole-gateway-writes" if reading == "by-counts-subset" else "gateway-writes")
        cost += logged_cost(info.get("cost"))
        uncosted += logged_cost(info.get("cost")) <= 0
        logged = info.get("cost")
        if isinstance(logged, (int, float)) and not isinstance(logged, bool) and logged == 0:
            unbilled.setdefault(model, 0)
            unbilled[model] += 1
        if call.late:
            # This call's own truncation if its prompt fell below the previous call's (the range
            # saved just after it was announced), or if it read less than the previous call left
            # cached (the truncation cut into it though what the call added outweighed what was
            # dropped: Cline 3.12, a 148k-token first message kept and a few messages dropped a
            # call); else one made for the next call (a condense).
            if last_prompt is not None and (
                usage.prompt < last_prompt
                or (usage.cache_reported and last_cached is not None and usage.cache_read < last_cached)
            ):
                events = events + call.late
            else:
                carried = list(call.late)
        last_prompt = usage.prompt
        last_cached = usage.cache_read + usage.cache_write if usage.cache_reported else None
        if any(kind == "compaction" for kind, _ in events):
            parent = None
        if history is not None and call.history_end is not None:
            end = min(call.history_end, len(history) - 1)
            blocks = sum(history[history_done : end + 1])
            history_done = max(history_done, end + 1)
        else:
            blocks = 1
        # Named by the call's place, not its line: a task file written as one line gives every
        # entry line 1.
        node = f"{NAME}:{task.name}#{len(out)}"
        grid = (0, 0, 0) if rules is None else rules.upstream_grid(info.get("inferenceProvider"), model)
        if rules is not None and grid == (0, 0, 0):
            grid = (rules.route_step(_route(handler, model, protocol), model), 0, 0)
        # Roo Code and Kilo Code save a call's user message before its reply's first entry, and the
        # reply after it: the messages between the previous call's reply and this one's tell whether
        # that call's response thought and whether this call starts a user turn.
        if parent is None:
            chain = []
        shared = None
        if turns and call.replied is not None and last_replied is not None and chain:
            between = [(thought, new_turn) for ts, thought, new_turn in turns if last_replied <= ts < call.replied]
            chain[-1] = (chain[-1][0], any(t for t, _ in between), *chain[-1][2:])
            new_turn = any(n for _, n in between)
            shared = kept_before_thinking(rules, model, new_turn, reversed(chain))
        else:
            new_turn = True
        out.append(_call(task.name, call.line, len(out), sent, None, rules, model, usage,
                         (f"{NAME}:{path.parent}:{model}", node, parent, blocks), events, grid=grid,
                         upstream=_served_by(info) or billing_host(handler), path=call.path, shared=shared,
                         relay=(relay := _relay(handler, model, info, by_cost=bool(by_cost)))))
        told_by_cost = told_by_cost or bool(relay and handler not in GATEWAY_HANDLERS)
        chain.append((model, False, new_turn, usage.prompt))
        last_replied = call.replied
        parent = node
    notes = [
        "a task folder logs no system prompt or tools (the agent rebuilds them for every call)",
        *_reading_notes(readings),
    ]
    for handler, model in sorted(untold):
        notes.append(
            f"no call of {handler or 'no handler named'} ({model}) reports a cache read or write: the log cannot tell calls "
            "that read nothing from a handler that reported no cached tokens (Kilo Code's gateway and OpenRouter handlers "
            "before June 2025, Cline's OpenRouter handler before May 2025: no cost, no price or every cost fitting the "
            "counts to tell by); read as reported, 0 read"
        )
    if upstreams:
        notes.append("calls naming no model, or one no provider claims, counted under the upstream their inferenceProvider "
                     f"names (Kilo Code's gateway and OpenRouter handlers): {', '.join(sorted(upstreams))}")
    if task.deleted_usage:
        summed = {k: sum(count(info.get(k), f"{task.name}:{line}", k) for line, info in task.deleted_usage)
                  for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads")}
        notes.append(
            f"{len(task.deleted_usage)} checkpoint restore{'s' if len(task.deleted_usage) != 1 else ''} deleted earlier calls "
            f"(counted apart, not in the totals; their summed fields: "
            + ", ".join(f"{k} {v:,}" for k, v in summed.items()) + ")"
        )
    if task.subagent_usage:
        summed = {k: sum(count(info.get(k), f"{task.name}:{line}", k) for line, info in task.subagent_usage)
                  for k in ("tokensIn", "tokensOut", "cacheWrites", "cacheReads")}
        spent = sum(logged_cost(info.get("cost")) for _, info in task.subagent_usage)
        rows = f"{len(task.subagent_usage)} subagent_usage row{'s' if len(task.subagent_usage) != 1 else ''}: "
        if summed["cacheWrites"] or summed["cacheReads"]:
            # (not Cline's own rows: a build that writes a call's cache split on one, a fork's advisor)
            notes.append(rows + _SUBAGENT_USAGE_SPLIT + " (" + ", ".join(f"{k} {v:,}" for k, v in summed.items())
                         + f", cost ${spent:.4f})")
        else:
            notes.append(rows + _SUBAGENT_USAGE
                         + f" (tokensIn {summed['tokensIn']:,}, tokensOut {summed['tokensOut']:,}, cost ${spent:.4f})")
    for reason, tokens in sorted(apart.items()):
        notes.append(
            f"{len(tokens)} {reason} stream{'s' if len(tokens) != 1 else ''} counted apart, not in the totals "
            f"({sum(tokens):,} prompt tokens reported on them)"
        )
    if cost:
        notes.append(f"the log's own cost fields sum to ${cost:.4f} (a check on the dollars here)")
    if unbilled:
        notes.append(
            "calls the log says cost $0 (a free model, or one billed by a plan): "
            + ", ".join(f"{n} of {model}" for model, n in sorted(unbilled.items()))
            + "; the dollars here price them at the model's list prices, not at what the log says was billed"
        )
    if history is None:
        notes.append(f"no {HISTORY_FILE} beside it: content blocks per call not known")
    notes += said
    return out, FileSummary(task.name, NAME, len(out), tuple(task.skipped), tuple(notes), logged_cost=None if uncosted else cost or None,
                            relay_by_cost=told_by_cost)


def _sdk_compacted_at(path: Path) -> int | None:
    """``source_message_count`` of the compaction state beside a Cline SDK session file (None:
    no compaction recorded, or a state the audit cannot use)."""
    if not path.name.endswith(SDK_MESSAGES_SUFFIX):
        return None
    state = path.with_name(path.name[: -len(SDK_MESSAGES_SUFFIX)] + SDK_COMPACTION_SUFFIX)
    if not state.is_file():
        return None
    try:
        first = next(iter(iter_records(state)), None)
    except UserError:
        return None
    at = as_dict(first.value if first is not None else None).get("source_message_count")
    return at if isinstance(at, int) and not isinstance(at, bool) and at >= 0 else None


def _legacy_end(messages: list) -> int:
    """The index of the legacy-resume warning in a Cline SDK session's messages (-1: none)."""
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        for part in content if isinstance(content, list) else [content]:
            text = part.get("text") if isinstance(part, dict) else part
            if isinstance(text, str) and text.startswith(_LEGACY_RESUME_WARNING):
                return index
    return -1


#: The Cline SDK's session import (``services/session-import`` of @cline/core 0.0.86, the Cline
#: CLI 3.0.65, September 2026) copies a Claude Code, Codex or OpenCode session into a new Cline
#: session: each converted assistant message carries the source call's usage as ``metrics``
#: (``cost`` 0 but OpenCode's own; Claude Code's and OpenCode's ``inputTokens`` without the cache, Codex's with it).
#: The session says so in ``origin {mode: "import", trigger: <tool>}`` of its messages file and,
#: in its manifest ``<id>.json``, ``metadata.importedFrom {tool, sourceSessionId, importedAt}``.
_SDK_IMPORT_MODE = "import"
SDK_MANIFEST_SUFFIX = ".json"


def _sdk_import(path: Path, value: dict) -> tuple[str, int | None] | None:
    """``(tool, importedAt as epoch ms or None)`` for a Cline SDK session imported from another
    agent (see :data:`_SDK_IMPORT_MODE`), None for one Cline began. The time comes from the
    manifest beside the messages file; without it the file cannot place the import."""
    origin = as_dict(value.get("origin"))
    metadata: dict = {}
    if path.name.endswith(SDK_MESSAGES_SUFFIX):
        manifest = path.with_name(path.name[: -len(SDK_MESSAGES_SUFFIX)] + SDK_MANIFEST_SUFFIX)
        if manifest.is_file():
            try:
                first = next(iter(iter_records(manifest)), None)
            except UserError:
                first = None
            metadata = as_dict(as_dict(first.value if first is not None else None).get("metadata"))
    imported = as_dict(metadata.get("importedFrom"))
    history = as_dict(metadata.get("sessionHistoryOrigin"))
    if _SDK_IMPORT_MODE not in (origin.get("mode"), history.get("mode")) and not imported:
        return None
    tool = next((t for t in (imported.get("tool"), origin.get("trigger"), history.get("trigger"))
                 if isinstance(t, str) and t), "another agent")
    at = imported.get("importedAt")
    try:
        at_ms = parse_time_ms(at, f"{path}: importedAt") if isinstance(at, str) else None
    except UserError:
        at_ms = None
    return tool, at_ms


def _sdk_import_end(messages: list, at_ms: int) -> int:
    """The index of the first message Cline wrote after the import: past the last message dated
    before ``at_ms`` (the imported ones keep their source's times, Cline dates its own)."""
    end = 0
    for index, message in enumerate(messages):
        when = message.get("ts") if isinstance(message, dict) else None
        if isinstance(when, (int, float)) and not isinstance(when, bool) and when < at_ms:
            end = index + 1
    return end


#: The Cline SDK stamped a run's summed usage (``AgentResult.usage``, every call of one prompt's
#: tool loop) on the run's last assistant message: on that message alone until per-turn metrics
#: (cline/cline c1c11c186d, 2026-04-22: "Usage attached to each assistant message ... was showing
#: the final session totals"), then on a last message without metrics of its own (an empty
#: terminal message) beside the per-turn ones until #10689 (2026-05-12). A file last written
#: before the first fix may hold only run totals; the second kind is told by its counts.
_SDK_PER_TURN_FROM = "2026-04-23"
_SDK_COUNTS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")


def _display_only(message: dict) -> bool:
    """Whether a Cline SDK message is marked ``displayOnly`` (shown, never sent)."""
    return as_dict(message.get("metadata")).get("displayOnly") is True


def _sdk_run_totals(messages: list, legacy_end: int, updated_at: object) -> dict[int, str]:
    """The assistant messages of a Cline SDK session whose metrics are a run's summed usage,
    not one call's (see :data:`_SDK_PER_TURN_FROM`), by index, with why."""
    runs: list[list[int]] = [[]]
    for index, message in enumerate(messages):
        if index <= legacy_end or not isinstance(message, dict) or _display_only(message):
            continue
        if message.get("role") == "user":
            content = message.get("content")
            parts = content if isinstance(content, list) else [content]
            if any(not (isinstance(p, dict) and p.get("type") == "tool_result") for p in parts):
                runs.append([])  # a prompt starts a run; tool results continue it
        elif message.get("role") == "assistant":
            runs[-1].append(index)
    early = isinstance(updated_at, str) and updated_at[:10] < _SDK_PER_TURN_FROM
    found: dict[int, str] = {}
    for run in runs:
        if not run or not isinstance(messages[run[-1]].get("metrics"), dict):
            continue
        last = messages[run[-1]]["metrics"]
        others = [messages[i]["metrics"] for i in run[:-1] if isinstance(messages[i].get("metrics"), dict)]
        if others:
            # (a sum of nothing, every count 0 as a provider that reports no usage leaves them, is
            # no sign on a call with content: only on an empty terminal message)
            empty = messages[run[-1]].get("content") in ([], "", None)
            if all(_int(last.get(key)) == sum(_int(m.get(key)) for m in others) for key in _SDK_COUNTS) and (
                empty or any(_int(last.get(key)) for key in _SDK_COUNTS)
            ):
                found[run[-1]] = (f"the summed usage of the {len(others)} call(s) before it in its run, stamped again on the "
                                  "run's last message (Cline SDK before cline/cline#10689, May 2026): not one call")
            continue
        calls = sum(1 for i in run if messages[i].get("content") not in ([], "", None))
        if early and calls > 1:
            counts = ", ".join(f"{key} {_int(last.get(key)):,}" for key in _SDK_COUNTS)
            found[run[-1]] = (f"the summed usage of a run of {calls} calls ({counts}), on its last message only (Cline SDK "
                              "before per-turn metrics, 2026-04-22): not one call, and not split")
    return found


#: From cline/cline cf710d76bf (2026-08-01, Ollama) and d1462cf919 (#12927, 2026-08-04, every
#: provider) the Cline SDK retries a model turn that came back empty (no text, reasoning or tool
#: call), up to 3 attempts, and adds the discarded attempts' usage to the accepted one's
#: (``retry-empty-response.ts``): one assistant message's metrics are then several requests of the
#: same prompt, summed, and nothing in the file says so. A session last written before cannot hold
#: one.
_SDK_EMPTY_RETRY_FROM = "2026-08-01"
_SDK_EMPTY_RETRY_ATTEMPTS = (2, 3)


def _sdk_retried(prompts: list[tuple[int, int]], compacted_at: int | None, updated_at: object) -> list[str]:
    """The counted calls of a Cline SDK session (``(message index, inputTokens)`` in order) whose
    prompt reads as 2 or 3 attempts of one prompt summed (see :data:`_SDK_EMPTY_RETRY_FROM`): more
    than the next call's, with no compaction between, and a whole share of it between the previous
    call's prompt and the next's, as a prompt that only grows would be. A call with no previous
    one to bound it from below (the first, or the first after the compaction) is never named: any
    prompt up to 3 times the next would pass. Said, not split: the file does not say how many
    attempts there were."""
    if not (isinstance(updated_at, str) and updated_at[:10] >= _SDK_EMPTY_RETRY_FROM):
        return []
    found: list[str] = []
    for n in range(len(prompts) - 1):
        index, prompt = prompts[n]
        after_index, after = prompts[n + 1]
        if not n or (compacted_at is not None and prompts[n - 1][0] < compacted_at <= index):
            continue  # no lower bound
        before = prompts[n - 1][1]
        if prompt <= after or (compacted_at is not None and index < compacted_at <= after_index):
            continue
        shares = [k for k in _SDK_EMPTY_RETRY_ATTEMPTS if before <= prompt / k <= after]
        if shares:
            found.append(f"messages[{index}] (inputTokens {prompt:,}, the next call's {after:,}: "
                         f"{' or '.join(map(str, shares))} attempts)")
    return found


def _read_sdk(path: Path, record: Record) -> tuple[list[TraceRequest], FileSummary]:
    """A Cline SDK session: one call per assistant message carrying ``metrics``."""
    name = str(path)
    value: dict = record.value  # type: ignore[assignment]
    lane_kind = _SDK_AGENTS[value["agent"]]
    lane = "main" if lane_kind == "main" else f"{value['agent']}:{value['sessionId']}"
    compacted_at = _sdk_compacted_at(path)
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    readings: dict[str, str] = {}
    cost = 0.0
    uncosted = 0  # calls counted whose cost field is absent or 0, and costs of calls not counted
    parent: str | None = None
    model: str | None = None
    events: list[tuple[str, str]] = []
    blocks = 0
    sent: int | None = None
    prompts: list[tuple[int, int]] = []
    legacy_end = _legacy_end(value["messages"])
    run_totals = _sdk_run_totals(value["messages"], legacy_end, value.get("updated_at"))
    imported = _sdk_import(path, value)
    import_tool, import_at = imported if imported else ("", None)
    import_end = _sdk_import_end(value["messages"], import_at) if import_at is not None else 0
    for index, message in enumerate(value["messages"]):
        where = f"{name}:{record.line}: messages[{index}]"
        if not isinstance(message, dict):
            raise UserError(f"{where}: not a message object")
        if index == legacy_end:
            events.append(("resume", "a pre-4.0 Cline task resumed as an SDK session"))
        if import_end and index == import_end:
            events.append(("resume", f"a {import_tool} session imported into Cline, continued there"))
        if compacted_at is not None and index == compacted_at:
            events.append(("compaction", "context compacted (the session's compaction state)"))
            parent = None
        if _display_only(message) and message.get("metrics") is None:
            continue  # shown, never sent (SDK 0.0.86's terminal errors): in no prompt, no call
        content = message.get("content")
        size = len(content) if isinstance(content, list) else 1
        when = message.get("ts")
        # Epoch ms; an implausible one (past year 9999) is an error, not a crash later.
        when = parse_time_ms(when, f"{where}.ts") if isinstance(when, int) and not isinstance(when, bool) else None
        if message.get("role") == "user":
            parts = content if isinstance(content, list) else [content]
            if any(not (isinstance(p, dict) and p.get("type") == "tool_result") for p in parts):
                events.append(("user_turn", ""))
            sent = when if when is not None else sent
            blocks += size
            continue
        metrics = message.get("metrics")
        if message.get("role") != "assistant" or metrics is None:
            blocks += size  # an answer without usage: part of the next call's prompt
            continue
        if not isinstance(metrics, dict):
            raise UserError(f"{where}: metrics is not an object")
        if index < legacy_end:
            skipped.append((record.line, f"messages[{index}]: the summed usage of a pre-4.0 task, carried over when it was resumed (not one call)"))
            blocks += size
            continue
        if index in run_totals:
            skipped.append((record.line, f"messages[{index}]: {run_totals[index]}"))
            blocks += size
            continue
        if index < import_end:
            skipped.append((record.line, f"messages[{index}]: a call of the {import_tool} session this one was imported from "
                                         f"(its usage copied): that agent's call, in its own log, not Cline's"))
            blocks += size
            continue
        info = as_dict(message.get("modelInfo"))
        handler = str(info.get("provider") or "")
        this_model = str(info.get("id") or model or NO_MODEL)
        if model is not None and this_model != model:
            events.append(("model_change", f"{model} -> {this_model}"))
        model = this_model
        tokens_in = count(metrics.get("inputTokens"), where, "metrics.inputTokens")
        reads = count(metrics.get("cacheReadTokens"), where, "metrics.cacheReadTokens")
        writes = count(metrics.get("cacheWriteTokens"), where, "metrics.cacheWriteTokens")
        output = count(metrics.get("outputTokens"), where, "metrics.outputTokens")
        label = f"{handler or 'no handler named'} ({this_model})"
        if tokens_in >= reads + writes:
            usage = Usage(cache_read=reads, cache_write_5m=writes, uncached=tokens_in - reads - writes, output=output)
            readings.setdefault(label, "total")
        else:  # a count the SDK did not fold in: read as additive, saying so
            usage = Usage(cache_read=reads, cache_write_5m=writes, uncached=tokens_in, output=output)
            readings[label] = "additive"
        prompts.append((index, tokens_in if tokens_in >= reads + writes else tokens_in + reads + writes))  # the whole prompt
        cost += logged_cost(metrics.get("cost"))
        uncosted += logged_cost(metrics.get("cost")) <= 0
        found = agent_handler(handler) if handler else None
        rules = _provider_of(this_model) or (found[0] if found else None)
        # As in a task's ui_messages.json: Cline's own provider reports no writes.
        gateway = _gateway_writes(handler, rules, usage, this_model, sent if sent is not None else when, metrics.get("cost"))
        if gateway is not None:
            usage, readings[label] = gateway, "sdk-gateway-writes"
        key = str(message.get("id") or index)
        node = f"{NAME}:{name}#{key}"
        out.append(_call(name, record.line, len(out), sent if sent is not None else when, when, rules, this_model, usage,
                         (f"{NAME}:sdk:{lane_kind}:{this_model}", node, parent, blocks), events,
                         lane=lane, lane_kind=lane_kind, request_id=key, path=f"messages[{index}]", upstream=billing_host(handler),
                         relay=_relay(handler, this_model, {})))
        parent = node
        events = []
        blocks = size  # the answer is part of the next call's prompt
        sent = when
    notes = [
        "a Cline SDK session keeps its system prompt but not its tools: the head is an opaque prefix",
        *_reading_notes(readings),
    ]
    if imported and not import_end:
        why = ("(origin mode import) with no manifest beside it saying when" if import_at is None else
               "(the manifest's importedFrom) with no message dated before its importedAt")
        notes.append(f"a session imported from {import_tool} {why}: "
                     "the imported messages' copied usage cannot be told from Cline's own calls, and all are read as calls")
    elif imported:
        notes.append(f"a session imported from {import_tool} (the manifest's importedFrom): the {import_tool} calls copied "
                     "into it are skipped (their usage is that agent's, in its own log)")
    retried = _sdk_retried(prompts, compacted_at, value.get("updated_at"))
    if retried:
        notes.append(f"{len(retried)} call(s) whose prompt reads as an empty reply's retries summed on one message (Cline "
                     "SDK from 2026-08, cline/cline#12927: the discarded attempts' usage added to the accepted one's), "
                     "each counted as one call of the summed tokens: " + "; ".join(retried))
    if compacted_at is not None:
        notes.append(f"compaction state beside it: the context was compacted after message {compacted_at} (only the latest compaction is kept)")
    if cost:
        notes.append(f"the log's own cost fields sum to ${cost:.4f} (a check on the dollars here)")
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(notes), logged_cost=None if uncosted else cost or None)


#: Which reading a handler's note states when its calls were read in more than one way.
_HISTORY_RANK = {"history-merged": 1, "history-total-merged": 1, "history-misses": 1, "history-total-misses": 1, "history-by-cost": 2,
                 "history-misses-by-cost": 2, "history-total-misses-by-cost": 2}


def _history_tokens(value: object) -> dict | None:
    """``metrics.tokens`` of an assistant message of api_conversation_history.json (Cline 3.x
    since early 2026), None for any other message."""
    if not isinstance(value, dict) or value.get("role") != "assistant":
        return None
    tokens = as_dict(value.get("metrics")).get("tokens")
    return tokens if isinstance(tokens, dict) else None


def _solve_by_cost(model: str, sent_ms: int | None, cost: object, fixed: tuple[tuple[int, str], ...], pool: int,
                   part_rate: str, rest_rate: str) -> int | None:
    """The tokens of ``pool`` billed at ``part_rate`` (the rest at ``rest_rate``) that a call's own
    ``cost`` says, at the model's listed prices then: cost = the ``fixed`` (tokens, rate) terms +
    part x part_rate + (pool - part) x rest_rate. None where the cost, the price or the result
    does not fit: not a whole number of tokens within 0..pool (Cline priced it otherwise)."""
    dollars = _stated_cost(cost)
    if dollars is None or pool <= 0:
        return None
    row = _price_row(model, sent_ms)
    if row is None:
        return None
    rates = row.rates
    part, rest = getattr(rates, part_rate), getattr(rates, rest_rate)
    prompt = pool + sum(n for n, rate in fixed if rate != "output")
    if part is None or rest is None or part == rest or (row.long_tier and prompt > row.long_tier.threshold):
        return None
    priced = []
    for n, rate in fixed:
        price = getattr(rates, rate)
        if price is None:
            return None
        priced.append(n * price)
    spent = Decimal(repr(dollars)) * 1_000_000 - sum(priced, Decimal(0)) - pool * rest
    tokens = spent / (part - rest)
    whole = int(tokens.to_integral_value())
    # Cline's cost is the product of its prices and the counts, to a float's precision: a split
    # that is not a whole number to a millionth of a token is priced otherwise (a looser bound
    # takes chance costs: one in ten lands within 0.05 of a whole number).
    return whole if abs(tokens - whole) <= Decimal("0.000001") and 0 <= whole <= pool else None


def _writes_by_cost(model: str, sent_ms: int | None, prompt: int, cached: int, output: int, cost: object,
                    misses: bool = False) -> int | None:
    """The writes inside ``cached`` (reads + writes) that the call's own ``cost`` says: cost =
    prompt x input + output x output + reads x read + writes x write. ``misses``: DeepSeek's
    handler, whose "writes" are cache misses, billed at the input price."""
    return _solve_by_cost(model, sent_ms, cost, ((prompt, "input"), (output, "output")), cached,
                          "input" if misses else "cache_write", "cache_read")


def _gateway_writes(handler: str, rules: ProviderRules | None, usage: Usage, model: str, sent_ms: int | None,
                    cost: object, folded: bool = False) -> Usage | None:
    """A call through Cline's own provider (every file of Cline: ui_messages, an SDK session, a
    history file alone), or one whose writes its handler ``folded`` into tokensIn (Kilo Code's
    gateway and OpenRouter handlers), to an Anthropic-kind model that reported no write, read as
    :func:`_gateway_usage` does; None for any other call."""
    if ((handler in _WRITES_IN_TOKENS_IN or folded) and rules is not None and rules.is_additive
            and not usage.cache_write and usage.uncached):
        return _gateway_usage(model, sent_ms, usage, cost)
    return None


def _gateway_usage(model: str, sent_ms: int | None, usage: Usage, cost: object) -> Usage:
    """Cline's own provider, or Kilo Code's gateway and OpenRouter handlers (:func:`_gateway_writes`),
    with an Anthropic-kind model (cacheWrites 0 whatever was written): the prompt past the reads
    is what was written, but for the uncached tail after the last breakpoint,
    which the call's own cost tells apart where it splits to whole tokens."""
    written = _solve_by_cost(model, sent_ms, cost, ((usage.cache_read, "cache_read"), (usage.output, "output")),
                             usage.uncached, "cache_write", "input")
    written = usage.uncached if written is None else written
    return Usage(cache_read=usage.cache_read, cache_write_5m=written, uncached=usage.uncached - written, output=usage.output)


def _history_usage(handler: str, rules: ProviderRules | None, tokens: dict, where: str, model: str = "",
                   sent_ms: int | None = None, cost: object = None) -> tuple[Usage, str]:
    """One call's ``metrics.tokens {prompt, completion, cached}`` as usage, and how it was read.

    Cline writes ``prompt`` = the handler's inputTokens and ``cached`` = its cacheWriteTokens +
    cacheReadTokens summed, so the split of ``cached`` is lost: it is a read where the handler
    or the provider writes nothing apart (reads only), and "not reported" where it may hold
    writes (an Anthropic-kind provider, or DeepSeek's handler, whose cacheWriteTokens is the
    MISS count), is not 0 and the call's cost does not split it: then kept apart as
    ``Usage.cache_unsplit``, which the audit prices as a range. Cline writes ``metrics.cost``
    only where the handler's stream gives a total cost (``totalCost``: OpenRouter, Cline's own
    gateway...); the Anthropic handler's gives none."""
    prompt = count(tokens.get("prompt"), where, "metrics.tokens.prompt")
    cached = count(tokens.get("cached"), where, "metrics.tokens.cached")
    output = count(tokens.get("completion"), where, "metrics.tokens.completion")
    reading = _reading(handler)[1]
    if reading == "total" and cached <= prompt and rules is not None and rules.bills_writes and not _misses_as_writes(rules):
        # A gateway's handler passing prompt_tokens on: the reads and writes summed in cached are
        # both inside prompt, and the split is lost.
        if not cached:
            return Usage(uncached=prompt, output=output), "history-subset"
        return (Usage(uncached=prompt - cached, output=output, cache_reported=False, cache_unsplit=cached),
                "history-total-merged")
    if reading == "total" and 0 < cached <= prompt and _misses_as_writes(rules):
        # LiteLLM's and OCA's handlers to a DeepSeek-shaped server: cached sums its hits and the
        # MISS count they write as cacheWrites, both inside prompt (a miss is never a hit).
        missed = _writes_by_cost(model, sent_ms, prompt - cached, cached, output, cost, misses=True)
        if missed is not None:
            return (Usage(cache_read=cached - missed, uncached=prompt - cached + missed, output=output),
                    "history-total-misses-by-cost")
        return (Usage(uncached=prompt - cached, output=output, cache_reported=False, cache_unsplit=cached),
                "history-total-misses")
    if reading in ("subset", "total"):
        # The OpenAI-compatible handler: prompt is prompt_tokens, the cached part inside it.
        excess = f"{where}: metrics.tokens.cached {cached:,} exceeds metrics.tokens.prompt {prompt:,}"
        return subset_usage(prompt, cached, 0, output, excess=excess), "history-subset"
    if reading == "miss-as-write" and cached:
        missed = _writes_by_cost(model, sent_ms, prompt, cached, output, cost, misses=True)
        if missed is not None:
            return Usage(cache_read=cached - missed, uncached=prompt + missed, output=output), "history-misses-by-cost"
        return Usage(uncached=prompt, output=output, cache_reported=False, cache_unsplit=cached), "history-misses"
    # Cline's own gateway reports no writes: cached is its reads, and an Anthropic-kind model's
    # prompt (tokensIn) is what it wrote, as in its ui_messages.json.
    gateway = _gateway_writes(handler, rules, Usage(cache_read=cached, uncached=prompt, output=output), model, sent_ms, cost)
    if gateway is not None:
        return gateway, "gateway-writes"
    if not cached:
        return Usage(uncached=prompt, output=output), "history-additive"
    if handler in _WRITES_IN_TOKENS_IN or (rules is not None and not rules.bills_writes):
        # No write is reported apart: a provider that bills no writes has none.
        return Usage(cache_read=cached, uncached=prompt, output=output), "history-additive"
    writes = _writes_by_cost(model, sent_ms, prompt, cached, output, cost)
    if writes is not None:
        return Usage(cache_read=cached - writes, cache_write_5m=writes, uncached=prompt, output=output), "history-by-cost"
    return Usage(uncached=prompt, output=output, cache_reported=False, cache_unsplit=cached), "history-merged"


def _read_history(path: Path, records: list[Record]) -> tuple[list[TraceRequest], FileSummary]:
    """An api_conversation_history.json without its ui_messages.json, whose assistant messages
    carry ``modelInfo`` and ``metrics`` (Cline 3.x since early 2026): one call per such message."""
    name = str(path)
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    readings: dict[str, str] = {}
    cost = 0.0
    uncosted = 0  # calls counted whose cost field is absent or 0, and costs of calls not counted
    parent: str | None = None
    model: str | None = None
    events: list[tuple[str, str]] = []
    blocks = 0
    sent: int | None = None
    for index, record in enumerate(records):
        message: dict = record.value  # type: ignore[assignment]
        where = f"{name}:{record.line}: messages[{index}]"
        content = message.get("content")
        size = len(content) if isinstance(content, list) else 1
        when = message.get("ts")
        when = parse_time_ms(when, f"{where}.ts") if isinstance(when, int) and not isinstance(when, bool) else None
        tokens = _history_tokens(message)
        if tokens is None:
            if message.get("role") == "user":
                sent = when if when is not None else sent
            blocks += size  # a message without usage: part of the next call's prompt
            continue
        info = as_dict(message.get("modelInfo"))
        handler = str(info.get("providerId") or "")
        this_model = str(info.get("modelId") or model or NO_MODEL)
        if model is not None and this_model != model:
            events.append(("model_change", f"{model} -> {this_model}"))
        model = this_model
        found = agent_handler(handler) if handler else None
        rules = _provider_of(this_model) or (found[0] if found else None)
        logged = as_dict(message.get("metrics")).get("cost")
        usage, reading = _history_usage(handler, rules, tokens, where, this_model, sent if sent is not None else when, logged)
        cost += logged_cost(logged)
        if usage.is_empty:
            uncosted += logged_cost(logged) > 0
            skipped.append((record.line, "assistant message with metrics all 0 (no usage recorded)"))
            blocks += size
            continue
        uncosted += logged_cost(logged) <= 0
        label = f"{handler or 'no handler named'} ({this_model})"
        if _HISTORY_RANK.get(reading, 0) >= _HISTORY_RANK.get(readings.get(label, ""), 0):
            readings[label] = reading  # the note of a split by cost names the calls it could not split
        node = f"{NAME}:{name}#{index}"
        out.append(_call(name, record.line, len(out), sent if sent is not None else when, when, rules, this_model, usage,
                         (f"{NAME}:{path.parent}:{this_model}", node, parent, blocks), events, path=record.path,
                         upstream=billing_host(handler), relay=_relay(handler, this_model, {})))  # (a third-party host of open models: its own prices)
        parent = node
        events = []
        blocks = size  # the answer is part of the next call's prompt
        sent = when
    notes = [
        f"an {HISTORY_FILE} read without its {UI_FILE}: one call per assistant message's metrics "
        "(tokens {prompt, completion, cached}; the system prompt and tools are not logged)",
        *_reading_notes(readings),
    ]
    if cost:
        notes.append(f"the log's own cost fields sum to ${cost:.4f} (a check on the dollars here)")
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(notes), logged_cost=None if uncosted else cost or None)


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A task folder's file: the calls of a ui_messages file; nothing from its other files."""
    stream = iter(objects(path, records, " (a Cline, Roo Code or Kilo Code task entry)"))
    first = next(stream, None)
    if first is None:
        raise UserError(f"{path}:1: empty file, no task entries")
    value: dict = first.value  # type: ignore[assignment]
    if _is_sdk_session(value):
        extra = next(stream, None)
        if extra is not None:
            raise UserError(f"{path}:{extra.line}: a second record after a Cline session's messages object")
        return _read_sdk(path, first)
    if "type" in value:
        return _read_ui(path, _chain(first, stream))
    kind = "messages sent" if "role" in value else "history item" if _is_history_item(value) else "task metadata"
    kept = [first]
    for record in stream:  # checked all the same: a file is one kind
        if ("type" in record.value) != ("type" in value):  # type: ignore[operator]
            raise UserError(f"{path}:{record.line}: a ui_messages entry among the {kind} of a task folder")
        if kind == "messages sent":
            kept.append(record)
    ui = path.with_name(UI_FILE)
    if kind == "messages sent" and not ui.is_file() and any(_history_tokens(r.value) is not None for r in kept):
        return _read_history(path, kept)
    note = (
        f"the {kind} of the calls in {ui}, read with it"
        if ui.is_file()
        else f"the {kind} of a task folder, without its {UI_FILE}: the usage is there, so no call is read here"
        if path.name == HISTORY_FILE or kind != "messages sent"
        # Any file of bare chat messages has this shape (a trajectory's messages kept alone, too).
        else f"chat messages with no usage (as a Cline task's {HISTORY_FILE} keeps them, its usage in the "
        f"{UI_FILE} beside it), so no call is read here"
    )
    return [], FileSummary(str(path), NAME, 0, (), (note,))


def ui_file_of(path: Path, value: dict) -> Path | None:
    """The ui_messages.json that reads ``path`` when ``path`` holds the messages sent or the
    metadata of a task folder and that file is beside it (a folder walk then skips ``path``)."""
    if "type" in value or path.name == UI_FILE:
        return None
    ui = path.with_name(UI_FILE)
    return ui if ui.is_file() else None


def _chain(first: Record, rest: Iterable[Record]) -> Iterable[Record]:
    yield first
    yield from rest


FORMAT = LogFormat(
    name=NAME,
    noun="Cline task folder",
    nouns="Cline, Roo Code and Kilo Code task folders",
    description=(
        "Cline, Roo Code and Kilo Code task folders (ui_messages.json: api_req_started usage; "
        "api_conversation_history.json and task_metadata.json read beside it); Cline 4.x sessions (<id>.messages.json)"
    ),
    detect=detect,
    read=read,
    usage="by-endpoint",
    versions=(
        "Claude Dev / early Cline: usage in api_req_finished entries after each api_req_started",
        "Cline 2.x-3.x: usage in the api_req_started text; handler and model from task_metadata.json model_usage",
        "Cline 3.x with modelInfo {providerId, modelId, mode} on each entry; cancelReason / streamingFailedMessage",
        "Cline 3.x (2026): api_conversation_history.json alone, metrics.tokens {prompt, completion, cached} "
        "on each assistant message (cached: reads + writes summed)",
        "Cline conversationHistoryDeletedRange truncations and compaction entries",
        "Cline's SDK build (2026-08): subagent_usage rows (the spawned subagents' calls summed, no cache split): counted apart",
        "Roo Code / Kilo Code: apiProtocol in the api_req_started text; condense_context and sliding_window_truncation",
        "Roo Code / Kilo Code since late 2025: tokensIn is the whole prompt (told from the counts)",
        "Kilo Code before 7.x and the Kilo CLI 0.x (globalStorage/kilocode.kilo-code/tasks/, ~/.kilocode/cli/global/tasks/): "
        "usageMissing (a call with no usage, skipped) and inferenceProvider (the upstream of its gateway and "
        "OpenRouter handlers, naming the provider of a call whose model the log does not name)",
        "Roo Code 3.49 on: history_item.json in each task folder (summed usage, read with ui_messages.json)",
        "DeepSeek handler: cacheWrites holds the MISS count (tokensIn 0, or prompt_tokens early 2025)",
        "Cline 4.x and the Cline CLI (SDK sessions, June 2026 on): sessions/<id>/<id>.messages.json, "
        "metrics {inputTokens (whole prompt), cacheReadTokens, cacheWriteTokens} per assistant message; <id>.compaction.json; "
        "resumed pre-4.0 tasks (their summed usage skipped)",
        "Cline SDK sessions before per-turn metrics (written before 2026-04-23: a run's summed usage on its last message "
        "only) and until cline/cline#10689 (May 2026: the run's sum again on an empty terminal message): the sums skipped",
        "Cline SDK sessions from August 2026 (cline/cline#12927): a turn retried after empty replies carries its attempts' "
        "usage summed (counted as one call; named in a note where the neighbouring prompts show it)",
        "Cline CLI 3.0.65 (SDK 0.0.86, September 2026): sessions imported from Claude Code, Codex or OpenCode "
        "(origin mode import; the manifest's importedFrom.importedAt): the copied calls skipped; displayOnly error messages",
    ),
    aliases=("roo", "roo-code", "kilo", "kilo-code"),
    read_with=ui_file_of,
)
