"""Anthropic: ``cache_control`` breakpoints, 5 m / 1 h TTLs, additive usage, per-model minimums.

Facts (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching):
at most 4 explicit breakpoints, each checking 20 block boundaries back; a 5 min default TTL or
1 h on request, refreshed by each read; reads 0.1x, 5 m writes 1.25x, 1 h writes 2x uncached
input; ``input_tokens`` counts only what comes after the last breakpoint (additive usage);
``cache_creation`` splits the write by TTL; the cache diagnostics beta explains a miss in
``cache_miss_reason``.

Thinking blocks of earlier turns (https://docs.claude.com/en/docs/build-with-claude/extended-thinking,
its prompt caching section): on the Haiku models and the models before Opus 4.5 and Sonnet 4.6,
a user turn that is not only tool results drops every earlier turn's thinking from the context,
so the messages' cached prefix ends where the first thinking block dropped stood; Opus 4.5 on
keeps them (``STRIPS_PRIOR_THINKING``). Measured where a log shows the thinking: the Claude Code
home of github.com/LAF-US/IDAHO-VAULT, whose claude-haiku-4-5 turns after a turn that thought read
the prompt of the previous turn's first call that thought (4 more of its reads within 3%, none
fewer; its Sonnet 4.6 and Opus 4.6 turns read on past it, as the page says), and Kilo Code
tasks on claude-sonnet-4.5 (github.com/gao51-qw/n8nworkflow.com: 9 more of 111, none fewer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers.base import CacheOption, ProviderRules, count, given, mapping
from prefixbench.simulator.usage import Usage

#: Minimum cacheable prefix for a model the table does not know.
DEFAULT_MIN_TOKENS = 1024
#: Block boundaries a breakpoint checks for an earlier entry, its own included.
LOOKBACK_BLOCKS = 20
#: Explicit breakpoints per request (the API answers 400 above it).
MAX_BREAKPOINTS = 4
#: Entry lifetimes in logical ms.
TTL_MS: dict[str, int] = {"5m": 5 * 60_000, "1h": 60 * 60_000}

#: Minimum cacheable prefix per model, first match wins: the official model table, every row of
#: which Anthropic's own claude-api skill (anthropics/skills, skills/claude-api/shared/
#: prompt-caching.md, its version naming Fable 5.1 and Mythos 5.1) gives too: 512 for Opus 5,
#: Fable 5 / 5.1, Mythos 5 / 5.1; 1,024 for Opus 4.8, Sonnet 5, Sonnet 4.6 / 4.5, Opus 4.1 / 4,
#: Sonnet 4; 2,048 for Opus 4.7, Mythos Preview, Haiku 3.5; 4,096 for Opus 4.6 / 4.5, Haiku 4.5
#: ("on every platform", Bedrock included). Its versions of April to July 2026 said 4,096 for
#: Opus 4.7 / 4.8 and 2,048 for Sonnet 4.6 and Fable 5; Sonnet 4.6 was reported to start
#: caching near 2048 (anthropic-sdk-python#1194). The latest is kept. Opus 5.5, Sonnet 5.5 and
#: Haiku 5.5 are in no table: 512, 1,024 and 1,024 by these rows and the default.
MIN_TOKENS_BY_MODEL: tuple[tuple[str, int], ...] = (
    (r"(opus|fable|mythos)-5", 512),
    (r"(opus-4-8|sonnet-5|sonnet-4-6|sonnet-4-5)", 1024),
    (r"(opus-4-7|mythos-preview)", 2048),
    (r"(opus-4-6|opus-4-5|haiku-4-5)", 4096),
    (r"(opus-4-1|opus-4|sonnet-4|3-7-sonnet|3-5-sonnet|3-opus)", 1024),
    (r"(3-5-haiku|3-haiku)", 2048),
)


def read_usage(usage: Mapping[str, object], where: str, key: str = "usage") -> Usage:
    """Anthropic usage: ``input_tokens`` is uncached; ``cache_creation`` splits 5 m / 1 h writes;
    neither cache field is cache not reported (not a 0 read). The one reader of this shape: captures and Managed Agents spans read theirs here too.
    ``key``: what an error calls the record (a Managed Agents span's ``model_usage``)."""
    uncached = count(usage.get("input_tokens"), where, f"{key}.input_tokens")
    read = count(usage.get("cache_read_input_tokens"), where, f"{key}.cache_read_input_tokens")
    written = count(usage.get("cache_creation_input_tokens"), where, f"{key}.cache_creation_input_tokens")
    output = count(usage.get("output_tokens"), where, f"{key}.output_tokens")
    split = mapping(usage.get("cache_creation"))
    named = "cache_creation.ephemeral_1h_input_tokens" if key == "usage" else f"{key}.cache_creation.ephemeral_1h_input_tokens"
    long_part = count(split.get("ephemeral_1h_input_tokens"), where, named)
    long_part = min(long_part, written)
    # Neither cache field (a gateway that strips them or sends null): the cache use is not reported, which is
    # not a 0 read. The API itself names both on every response, 0 included, and so do the logs
    # that copy its usage (Claude Code transcripts, Managed Agents spans).
    reported = given(usage, "cache_read_input_tokens", "cache_creation_input_tokens")
    # Fast mode (https://platform.claude.com/docs/en/build-with-claude/fast-mode): the response's
    # usage.speed says which speed served the call, "fast" or "standard"; only "fast" is kept.
    speed = "fast" if usage.get("speed") == "fast" else ""
    # (``written`` itself where nothing is 1 h: not a new int of the same value, held a request to the audit's end)
    return Usage(read, written - long_part if long_part else written, long_part, uncached, output, cache_reported=reported, speed=speed)


def compaction_iterations(usage: Mapping[str, object], where: str) -> list[Mapping[str, object]]:
    """The server-side compaction samplings of one response (the ``compact-2026-01-12`` beta's
    ``compact_20260112`` edit, or the ``compaction`` parameter): ``usage.iterations`` lists each
    sampling, ``{type: "compaction" | "message", input_tokens, output_tokens, cache_read_input_tokens,
    cache_creation_input_tokens, cache_creation}``, and the top-level counts are the message's
    only (https://platform.claude.com/docs/en/build-with-claude/compaction): a compaction
    iteration is a call of its own, read the way the top level is."""
    return _iterations(usage, where, "compaction")


def advisor_iterations(usage: Mapping[str, object], where: str) -> list[Mapping[str, object]]:
    """The advisor calls of one response (the advisor tool, ``advisor_20260301``, beta
    ``advisor-tool-2026-03-01``; Claude Code's ``/advisor`` from 2.1.98): ``usage.iterations``
    lists each ``{type: "advisor_message", model, input_tokens, output_tokens,
    cache_read_input_tokens, cache_creation_input_tokens, cache_creation}``, a sub-inference of the
    advisor model (``model``) over the whole conversation, billed at that model's rates; the
    top-level counts are the executor's alone (the ``message`` iterations' sum), so an advisor
    iteration is a call of its own, read the way the top level is."""
    return _iterations(usage, where, "advisor_message")


def _iterations(usage: Mapping[str, object], where: str, kind: str) -> list[Mapping[str, object]]:
    """The ``usage.iterations`` entries of type ``kind`` (none where the list is absent); a value
    that is not a list is one line naming ``where``."""
    iterations = usage.get("iterations")
    if iterations is None:
        return []
    if not isinstance(iterations, list):
        raise UserError(f"{where}: usage.iterations is not a list ({iterations!r:.40})")
    return [step for step in iterations if isinstance(step, Mapping) and step.get("type") == kind]


class ServerCall(msgspec.Struct, frozen=True):
    """One ``usage.iterations`` sampling that is a call of its own, with counts."""

    #: Its place among the response's iterations of its type (what its node is named by).
    index: int
    usage: Usage
    #: The advisor model an ``advisor_message`` names ("unknown" where it names none); "" for a compaction.
    model: str = ""


class ServerCalls(msgspec.Struct, frozen=True):
    """The samplings of one Messages response that are calls of their own (server-side
    compactions, advisor calls), read once for every log format that carries Anthropic's usage."""

    compactions: tuple[ServerCall, ...] = ()
    advisors: tuple[ServerCall, ...] = ()
    #: Whether ``usage.iterations`` lists a compaction at all, counted or not: the message's
    #: prompt is then the compacted context.
    compacted: bool = False
    #: Why each entry with no token counts is no call (listed, not a 0-token call), by kind.
    compaction_skips: tuple[str, ...] = ()
    advisor_skips: tuple[str, ...] = ()

    @property
    def compaction_event(self) -> tuple[str, str]:
        """The event the compacted message carries: the compaction calls counted."""
        return ("compaction", f"server-side compaction: {len(self.compactions)} compaction iteration(s) in usage.iterations")


def server_calls(usage: Mapping[str, object], where: str, read: Callable[[Mapping[str, object], str, str], Usage]) -> ServerCalls:
    """The compaction and advisor calls of one response's ``usage.iterations``
    (:func:`compaction_iterations`, :func:`advisor_iterations`), each read by ``read(entry, where,
    model)`` (``model``: the advisor's, "" for a compaction); an entry with no token counts is
    listed in the skips, not a 0-token call."""
    compactions, advisors, compaction_skips, advisor_skips = [], [], [], []
    steps = compaction_iterations(usage, where)
    for n, step in enumerate(steps):
        read_as = read(step, f"{where} (usage.iterations compaction {n})", "")
        if read_as.is_empty:
            compaction_skips.append(f"compaction iteration {n} with no token counts: no call to count")
        else:
            compactions.append(ServerCall(n, read_as))
    for n, step in enumerate(advisor_iterations(usage, where)):
        model = step.get("model")
        model = model[:120] if isinstance(model, str) and model else "unknown"
        read_as = read(step, f"{where} (usage.iterations advisor_message {n})", model)
        if read_as.is_empty:
            advisor_skips.append(f"advisor iteration {n} with no token counts: no call to count")
        else:
            advisors.append(ServerCall(n, read_as, model))
    return ServerCalls(tuple(compactions), tuple(advisors), bool(steps), tuple(compaction_skips), tuple(advisor_skips))


#: Rules of the ``anthropic`` model that rest on secondary sources or measurements.
OPTIONS = (
    CacheOption(key="ttl_from", default="start",
                seen="start (Anthropic's claude-api skill: 'measured from the start of the request') | response", source="O",
                help="where an entry's lifetime counts from: the request's start (a long response uses "
                     "part of it) or its response's first token"),
    CacheOption(key="chars_per_token", default=3.85, seen="3.76-3.94 by call on one capture (Claude Code 1.0.6)",
                source="M", help="rendered characters per token (no public Claude tokenizer)"),
)

#: The models that drop earlier turns' thinking at a new user turn (see the module doc): every
#: Haiku, Sonnet 4.5 and 4, Opus 4.1 and 4, Sonnet 3.7 (each as Anthropic, Bedrock, Vertex and
#: gateways name it: ``claude-sonnet-4-0``, ``claude-sonnet-4@20250514``,
#: ``us.anthropic.claude-sonnet-4-20250514-v1:0``, ``claude-4-sonnet``, ``claude-4.5-sonnet``).
#: Sonnet or Opus 4 is "-4" not followed by a minor version of one digit (a date may follow).
STRIPS_PRIOR_THINKING = (r"haiku", r"sonnet-4[.-]5", r"opus-4[.-]1", r"(sonnet|opus)-4(?![.-][1-9](?![0-9]))",
                         r"claude-4-(sonnet|opus)", r"claude-4[.-]1-opus", r"claude-4[.-]5-sonnet",
                         r"3[.-]7-sonnet", r"sonnet-3[.-]7")

#: Where a response carries the diagnostics beta's miss reason (usage, message or top level).
DIAGNOSTICS_FIELDS = ("cache_miss_reason", "cache_diagnostics", "diagnostics", "cache_diagnosis")


RULES = ProviderRules(
    hosts_bill_list_price=True,  # closed weights: Anthropic's API, Bedrock's and Vertex AI's global endpoints at its list price
    speaks_messages=True,
    name="anthropic",
    api_base="https://api.anthropic.com",
    # Cline's Anthropic and Claude Code handlers copy input_tokens, cache_creation_input_tokens and
    # cache_read_input_tokens as they are (Roo Code and Kilo Code name the protocol "anthropic").
    agent_handlers=(("anthropic", "additive"), ("claude-code", "additive")),
    usage_convention="additive",
    read_usage=read_usage,
    model_prefixes=("claude",),
    url_markers=("anthropic", "/v1/messages"),
    block_tokens=1,
    min_tokens=DEFAULT_MIN_TOKENS,
    min_tokens_by_model=MIN_TOKENS_BY_MODEL,
    min_applies_to="prompt",
    ttls_ms=tuple(TTL_MS.items()),
    default_ttl="5m",
    ttl_text="5 m, or 1 h where the write asks for it",
    ttl_per_request=True,
    max_breakpoints=MAX_BREAKPOINTS,
    lookback_blocks=LOOKBACK_BLOCKS,
    strips_prior_thinking=STRIPS_PRIOR_THINKING,
    read_multiplier=0.1,
    write_multiplier=1.25,
    write_1h_multiplier=2.0,
    bills_writes=True,
    diagnostics_fields=DIAGNOSTICS_FIELDS,
    body_model="anthropic",
    #: A request with no cache_control at all caches nothing (the API's rule; the byte-level
    #: model's own default treats it as automatic caching).
    body_model_options=(("auto_when_unmarked", None),),
    chain_as="anthropic",
    lane_starts_read_warm_level=True,
    billing_cch="ignored",  # assumed: see prefixbench.workloads.logs.billing_header
    cache_options=OPTIONS,
    sources=("https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching",),
)


#: The labels of Anthropic's cache diagnostics (the audit's causes of the same names).
DIAGNOSTIC_LABELS = (
    "model_changed",
    "system_changed",
    "tools_changed",
    "messages_changed",
    "previous_message_not_found",
)
_DIAGNOSTIC_KEY_SET = frozenset(DIAGNOSTICS_FIELDS)


def read_diagnostic(obj: object) -> str | None:
    """Anthropic's cache diagnostic label, wherever a response carries it (usage or top level)."""
    if not isinstance(obj, dict):
        return None
    usage = obj.get("usage")
    message = obj.get("message")
    if not any(
        isinstance(holder, dict) and not _DIAGNOSTIC_KEY_SET.isdisjoint(holder)
        for holder in (obj, usage, message, message.get("usage") if isinstance(message, dict) else None)
    ):
        return None
    for holder in (obj, mapping(obj.get("usage")), mapping(obj.get("message")), mapping(mapping(obj.get("message")).get("usage"))):
        for key in DIAGNOSTICS_FIELDS:
            label = _label_of(holder.get(key))
            if label is not None:
                return label
    return None


def _label_of(value: object) -> str | None:
    if isinstance(value, str):
        return value if value in DIAGNOSTIC_LABELS or value == "unavailable" else None
    if isinstance(value, dict):
        for key in ("type", "reason", "cache_miss_reason", "code"):
            label = _label_of(value.get(key))
            if label is not None:
                return label
    return None
