"""The rule type every provider module fills in: one frozen record of a provider's cache facts.

The byte-exact models, the body-less chain model (:mod:`prefixbench.simulator.chain`), the audit
(usage, causes, TTLs, minimums), what-if and pricing read these records; nothing outside
:mod:`prefixbench.simulator.providers` branches on a provider's name. Dollar prices stay dated
rows in ``simulator/data/prices.csv``; a rule holds only the multipliers of a cache read and
write over uncached input, as the provider documents them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Literal

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.usage import PROMPT_EXCLUSIVE, Usage

#: ``additive``: the wire's input count excludes the read and written parts (Anthropic);
#: ``subset``: the prompt count includes the cached part (OpenAI, DeepSeek).
UsageConvention = Literal["additive", "subset"]
#: How an agent's own log re-labels this provider's usage in the four fields Cline, Roo Code and
#: Kilo Code write (tokensIn, tokensOut, cacheWrites, cacheReads), handler by handler:
#: ``additive`` (tokensIn excludes reads and writes), ``subset`` (tokensIn is the whole prompt,
#: cacheWrites is no write), ``miss-as-write`` (cacheWrites holds the provider's MISS count, the
#: uncached part; tokensIn is 0 or the whole prompt), ``total`` (tokensIn is the whole prompt,
#: ``prompt_tokens`` passed on, the reads and the writes inside it: a gateway's handler),
#: ``by-counts`` (the handler changed between releases from ``subset`` to ``additive``, which
#: the log does not name: told from the counts).
AgentUsageReading = Literal["additive", "subset", "miss-as-write", "total", "by-counts"]
#: Largest usage count accepted: far above any context window.
MAX_COUNT = 10**12

#: Reads a provider's wire ``usage`` object (and the place it came from, for errors) into a Usage.
UsageReader = Callable[[Mapping[str, object], str], Usage]


def given(usage: Mapping[str, object], *keys: str) -> bool:
    """Whether any of ``keys`` holds a value: a key set to null is not reported, the same as one
    left out (a cache field given as null is cache use not reported, not a 0 read)."""
    return any(usage.get(key) is not None for key in keys)


def count(value: object, where: str, key: str) -> int:
    """A reported token count: absent is 0; anything but a plausible non-negative integer is an error.

    Raises:
        UserError: naming ``where`` and ``key``.
    """
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UserError(f"{where}: {key} is not a non-negative integer ({value!r:.40})")
    if value > MAX_COUNT:
        raise UserError(f"{where}: {key} is not a plausible count ({str(value)[:20]}... > {MAX_COUNT:,})")
    return value


def subset_usage(
    total: int, cached: int, written: int, output: int, *, excess: str, reported: bool = True, bills_writes: bool = True
) -> Usage:
    """An OpenAI-shaped record: ``total`` (``prompt_tokens`` / ``input_tokens``) includes the
    ``cached`` and ``written`` parts by the spec. Where the cached part alone exceeds it, the
    record can only mean a count without the cached part (a gateway that sends it so: Charm's
    Hyper): it is read as ``total + cached`` and marked so
    (:data:`~prefixbench.simulator.usage.PROMPT_EXCLUSIVE`), for the audit to read the
    endpoint's other records alike. ``bills_writes``: written tokens are a write, else uncached
    input (what they cost).

    Raises:
        UserError: ``excess`` (what exceeds what, with ``where``) when cached and written tokens
            exceed the count and the cached part alone does not, or the written part does too:
            neither reading fits, or the record does not tell which part the count leaves out.
    """
    if cached + written <= total:
        how = ""
        uncached = total - cached - (written if bills_writes else 0)
    elif cached > total and written <= total:
        how, uncached = PROMPT_EXCLUSIVE, total - (written if bills_writes else 0)
    else:
        raise UserError(excess)
    return Usage(cache_read=cached, cache_write_5m=written if bills_writes else 0, uncached=uncached, output=output,
                 cache_reported=reported, prompt_count=how)


def mapping(value: object) -> Mapping[str, object]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


#: Gateways' names as a row gives them, by the route name the rules key steps by.
_ROUTE_NAMES = {"openrouter": "OpenRouter", "portkey": "Portkey"}


@lru_cache(maxsize=64)
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text + r"(?![0-9])")


# The two lookups every simulated request makes, answered once per distinct argument (the
# rules are frozen, so their tables are hashable and never change under the cache).
@lru_cache(maxsize=4096)
def per_model(by_model: tuple[tuple[str, int], ...], default: int, model: str) -> int:
    """The value of the first ``(pattern, value)`` row whose pattern ``model`` holds (a digit may
    not follow it), else ``default``."""
    for pattern, tokens in by_model:
        if _pattern(pattern).search(model):
            return tokens
    return default


@lru_cache(maxsize=4096)
def _max_cached(by_model: tuple[tuple[str, int], ...], model: str) -> int | None:
    return next((tokens for pattern, tokens in by_model if _pattern(pattern).search(model)), None)


def _duration_words(ms: int) -> str:
    """A lifetime in the largest whole unit (``5 m``, ``1 h``, ``24 h``, ``90 s``)."""
    for unit, size in (("h", 3_600_000), ("m", 60_000), ("s", 1_000)):
        if ms >= size and ms % size == 0:
            return f"{ms // size} {unit}"
    return f"{ms} ms"


@lru_cache(maxsize=1024)
def _ttl_ms(ttls: tuple[tuple[str, int], ...], default: str | None, label: str | None) -> int | None:
    table = dict(ttls)
    if label in table:
        return table[label]
    return table.get(default) if default is not None else None


#: How solid a rule is: [O] the provider's own docs, [S] a secondary source (a reseller, a
#: blog, a third party's test), [M] a measurement (logs).
SourceKind = Literal["O", "S", "M"]
#: Where a cache entry's lifetime is counted from (see :attr:`ProviderRules.ttl_from`).
TtlFrom = Literal["start", "response", "end"]
#: The choices of the byte-level models (``end`` needs the log's time a response ended: the
#: chain model's alone).
TTL_FROM: tuple[TtlFrom, ...] = ("start", "response")


class CacheOption(msgspec.Struct, frozen=True, kw_only=True):
    """One option of a provider's ``--cache`` model: a rule the sources leave open, or a choice
    the client makes. ``--cache NAME:KEY=VALUE`` sets it, so a sweep can vary it."""

    key: str
    #: The value used unless one is given (the documented one where the docs give one).
    default: object
    #: The values or range seen across the sources, as text (``64-128``, ``1024 | 2048``).
    seen: str
    #: What the default rests on.
    source: SourceKind
    #: What the option means, one short phrase.
    help: str
    #: What ``none`` means where an option with a number for its default takes it too (a
    #: lifetime's: no lifetime, kept until evicted); empty: it does not (an option whose default
    #: is none always takes it).
    none_means: str = ""

    @property
    def default_text(self) -> str:
        """The default as ``--cache`` takes it (``none``, ``true``, ``0.5``)."""
        return _shown(self.default)

    def describe(self) -> str:
        """``block=128 [S] (seen 64-128): read step in tokens`` (then ``; none: ...`` where it takes none)."""
        none = f"; none: {self.none_means}" if self.none_means else ""
        return f"{self.key}={self.default_text} [{self.source}] (seen {self.seen}): {self.help}{none}"


def _shown(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


def _no_usage(usage: Mapping[str, object], where: str) -> Usage:
    raise UserError(f"{where}: this provider reports no usage on the wire")


class ProviderRules(msgspec.Struct, frozen=True, kw_only=True):
    """What one provider (or self-hosted engine) does with a prompt's prefix."""

    name: str
    #: How its wire usage counts the prompt (see :data:`UsageConvention`).
    usage_convention: UsageConvention
    #: A usage that gives a write count that can be trusted is read as an additive one, whatever
    #: :attr:`usage_convention` says: the next call reads at most what that call read and wrote,
    #: as a cache returns only what was written (a relay the audit cannot name, whose usage may
    #: come in Anthropic's shape). :meth:`cacheable_given` applies it.
    writes_bound_reads: bool = False
    #: Reads its wire usage into the normalized :class:`~prefixbench.simulator.usage.Usage`.
    read_usage: UsageReader = _no_usage
    #: Lower-case model-name prefixes that name this provider (``claude`` -> Anthropic).
    model_prefixes: tuple[str, ...] = ()
    #: Lower-case substrings of an endpoint URL that name this provider.
    url_markers: tuple[str, ...] = ()
    #: The public API's base URL (scheme and host, and a path prefix where the API has one):
    #: where ``prefixbench proxy --upstream NAME`` forwards; empty for engines one hosts oneself.
    api_base: str = ""
    #: Step a hit counts in (tokens; 1 = exact), and the engine's block size where it has one.
    block_tokens: int = 1
    #: ``(regex, tokens)``: the step of the models that count in another (Kimi's coding plan: 256).
    block_tokens_by_model: tuple[tuple[str, int], ...] = ()
    #: ``(substring of an endpoint URL, tokens)``: the step of an endpoint that counts in another
    #: whatever model name it is sent (Kimi's coding endpoint behind Claude Code's Claude names).
    block_tokens_by_url: tuple[tuple[str, int], ...] = ()
    #: ``(epoch ms, tokens)``, earliest first: a read sent before that moment counts in ``tokens``
    #: (an earlier generation of the provider's cache: DeepSeek's 64-token units before V4).
    block_tokens_before: tuple[tuple[int, int], ...] = ()
    #: ``(upstream, model regex, step, first)``: the grid a model's reads lie on when a gateway
    #: names the upstream that served it (Kilo Code's and OpenRouter's ``inferenceProvider``, any
    #: case): ``first + k x step`` tokens, none below ``first`` (gemini-3-flash through Google AI
    #: Studio: measured).
    upstream_grids: tuple[tuple[str, str, int, int], ...] = ()
    #: ``(upstream, model regex, lag)``: a model whose reads, when a gateway names that upstream as
    #: the one that served it (any case), count to the token (the model's own step set aside) and,
    #: followed from the lane's last read, move up to the previous prompt less ``lag`` tokens,
    #: which wins over :attr:`read_lag_by_model` (gemini-3-flash through the upstream Kilo Code's
    #: gateway names ``Google``, Vertex AI: measured). :meth:`upstream_grid` gives it.
    upstream_read_lags: tuple[tuple[str, str, int], ...] = ()
    #: ``(route, model regex, step)``: the step a model's reads count in when sent through that
    #: route (a gateway: ``openrouter``), and through it only (google/gemini-2.5-pro through
    #: OpenRouter: measured; the same name on Vertex AI's own endpoint reads to the token).
    route_steps: tuple[tuple[str, str, int], ...] = ()
    #: ``(route, upstream, model regex, step)``: the step a model's reads count in when sent
    #: through that route (a gateway: ``openrouter``, ``portkey``) AND the gateway names that
    #: upstream as the one that served it (any case); the route and upstream together, never the
    #: model alone, decide it (gemini-3-pro through OpenRouter's ``Google`` and ``Google AI
    #: Studio``: measured). :meth:`route_upstream_step` gives it.
    route_upstream_steps: tuple[tuple[str, str, str, int], ...] = ()
    #: What :attr:`route_upstream_steps` rests on, for the detail of each row whose step they gave.
    route_upstream_evidence: str = ""
    #: Tokens at the end of a prompt that the next call of the conversation does not read, as
    #: reported (the chat template's closing tokens, which the next prompt renders otherwise):
    #: the audit's chain and expected reads leave them out (xAI: measured).
    unread_tail: int = 0
    #: Shortest cacheable prefix (tokens) for a model :attr:`min_tokens_by_model` does not know.
    min_tokens: int = 0
    #: What the minimum bounds: the whole cacheable prompt (below it nothing is read or written)
    #: or each read (a shorter hit is reported as 0).
    min_applies_to: Literal["prompt", "read"] = "prompt"
    #: ``(regex, tokens)`` per model family, first match wins.
    min_tokens_by_model: tuple[tuple[str, int], ...] = ()
    #: ``(epoch ms, table)``, earliest first: a request sent before that moment takes that
    #: ``(regex, tokens)`` table instead of :attr:`min_tokens_by_model` (the provider's page as
    #: it stood then: Gemini's before its table changed in mid-2026). A request of unknown time
    #: takes the current table.
    min_tokens_before: tuple[tuple[int, tuple[tuple[str, int], ...]], ...] = ()
    #: Entry lifetimes offered, ``(label, logical ms)``; empty = no TTL (best effort or capacity).
    ttls_ms: tuple[tuple[str, int], ...] = ()
    #: The label of the lifetime an entry gets unless the request asks for another.
    default_ttl: str | None = None
    #: The lifetimes in words, as the provider documents them (the audit's ttl-expired meaning);
    #: empty: :meth:`ttl_words` spells :attr:`ttls_ms`.
    ttl_text: str = ""
    #: The client picks each write's TTL in the request (the what-if TTL plans apply).
    ttl_per_request: bool = False
    #: The lifetime one request gets where the provider decides it per request rather than per
    #: write: ``(model, asked, sent_ms, zdr) -> label`` of :attr:`ttls_ms`, from what the body
    #: asked (None: no body, or none asked), the model's documented default at ``sent_ms`` (None:
    #: unknown time) and ``zdr`` (the organization has Zero Data Retention). None: the default
    #: TTL, or the write's own (OpenAI: ``prompt_cache_retention``, :func:`~prefixbench.simulator.providers.openai.retention`).
    request_ttl: Callable[[str, str | None, int | None, bool], str] | None = None
    #: Where the provider decides the lifetime per request: ``model -> (short, long)``, the two
    #: labels of :attr:`ttls_ms` a client of ``model`` may pick between (OpenAI: ``in_memory`` /
    #: ``24h``, or ``30m`` / ``12h`` on GPT-6.2 Sol), or None where the model keeps one lifetime
    #: whatever is asked. None: nothing to pick per request.
    retention_choices: Callable[[str], tuple[str, str] | None] | None = None
    #: Labels of :attr:`ttls_ms` whose writes bill at the price table's long write price
    #: (``cache_write_1h``): Anthropic's ``1h``, OpenAI's ``12h``.
    long_write_ttls: tuple[str, ...] = ("1h",)
    #: Models (regular expressions, as in ``min_tokens_by_model``) that get the default TTL
    #: only, whatever the request asks (Bedrock's Nova: 5 min).
    default_ttl_only: tuple[str, ...] = ()
    #: The most tokens one request's prompt may have cached, by model (regular expressions, as in
    #: ``min_tokens_by_model``; Bedrock's Nova: 20K); others: no limit.
    max_cached_by_model: tuple[tuple[str, int], ...] = ()
    #: Explicit breakpoints a request may carry (None: no breakpoints on the wire).
    max_breakpoints: int | None = None
    #: Block boundaries a breakpoint checks back for an earlier entry (None: no limit).
    lookback_blocks: int | None = None
    #: Models (regular expressions, as in ``min_tokens_by_model``) that drop the thinking blocks of
    #: earlier turns once a user turn that is not only tool results begins, so that a cached prefix
    #: ends where the first of them stood (Anthropic's Haiku models and its models before Opus 4.5
    #: and Sonnet 4.6); an agent that sends its thinking back marks where (:attr:`Prefix.shared`).
    strips_prior_thinking: tuple[str, ...] = ()
    #: Price of a read / a 5 m (default) write / a 1 h write, over uncached input.
    read_multiplier: float = 1.0
    write_multiplier: float = 1.0
    write_1h_multiplier: float | None = None
    #: Writes are billed apart from uncached input (else a write costs what a miss costs).
    bills_writes: bool = False
    #: Every host serving this provider's models bills them at the provider's list price (its own
    #: API, and the clouds and gateways passing them on: closed weights); False where other hosts
    #: serve the models at prices of their own (open weights), so a gateway's routing variant of
    #: one (OpenRouter's ``:nitro``, ``:floor``, ``:exacto``) has no list price (:mod:`..pricing`).
    hosts_bill_list_price: bool = False
    #: The names a gateway gives this provider's own API when it names the upstream that served
    #: a call (OpenRouter's response ``provider``, Kilo Code's ``inferenceProvider``), written
    #: lower-case with letters and digits only (``Moonshot AI`` -> ``moonshotai``); the
    #: provider's :attr:`name` is one too. Another upstream of an open-weight model bills its own
    #: price (:meth:`bills_list_price_at`).
    own_hosts: tuple[str, ...] = ()
    #: The maker's name as the audit writes it in a sentence (``OpenAI``); "" for :attr:`name`.
    maker: str = ""
    #: Why a miss with nothing changed is the provider's doing (None: it is not best-effort).
    best_effort_note: str | None = None
    #: Why a miss with nothing changed is the provider's doing for a request known to carry no
    #: cache marker, on a provider whose marked (explicit) cache is deterministic and whose
    #: unmarked (implicit) one is best effort (None: a request's markers do not decide it). Known
    #: unmarked: it reported no write and its logged body holds no ``cache_control``, or, with no
    #: body logged, its log format and the API its log names are one of :attr:`unmarking_apis`
    #: (pi's ``openai-completions``, which marks nothing by default: assumed, the row's detail says
    #: so) and it reported no write. Any other request is judged as before (it may be marked:
    #: Qwen Code and Claude Code mark every one).
    unmarked_best_effort_note: str | None = None
    #: ``(log format, API)`` pairs whose agent, by default, sends this provider no cache marker on
    #: that API (its log's name of it: :attr:`~prefixbench.workloads.logs.trace.TraceRequest.api`),
    #: read where a request's body is not logged (:attr:`unmarked_best_effort_note`).
    unmarking_apis: tuple[tuple[str, str], ...] = ()
    #: Why a miss whose call reported writing nothing is the provider's doing, where the agent's
    #: breakpoints would have had it write a changed prefix (None: such a miss is judged as any).
    unwritten_miss_note: str | None = None
    #: What the per-model read steps of :attr:`block_tokens_by_model` rest on, for the audit's
    #: notes (None: no note).
    step_note: str | None = None
    #: Tokens a read counted in a step of its own (a checkpoint grid, above 1 token) may fall short
    #: of the step predicted without losing anything: the provider's counts of one checkpoint vary
    #: by that much from call to call (gemini-3-flash: 36-331 short, against 4,030 and more for a
    #: checkpoint really lost: measured). The audit counts such a shortfall as no miss, saying so.
    step_slack: int = 0
    #: A read keeps to the checkpoint its lane's previous request read (measured, not documented;
    #: Gemini's implicit cache): a request that extends the previous one is predicted to read at
    #: least what that one reported reading, where it holds that much, and on a model read to the
    #: token (no checkpoint grid) no more either; the reads move up only as the provider's do.
    #: Off with the audit's ``--no-follow-reads``.
    follows_reads: bool = False
    #: Why :attr:`follows_reads` holds, for the audit's note (a phrase naming the provider).
    follow_reason: str = ""
    #: With :attr:`follows_reads`, on a model whose reads count in a checkpoint grid: the read moves
    #: up to a newer checkpoint only after the lane's previous request left at least this many
    #: tokens past the one it read uncached; below, it keeps to that read (0: no such rule).
    new_checkpoint_min: int = 0
    #: With :attr:`new_checkpoint_min`, on a model whose reads count in a checkpoint grid (not an
    #: upstream's own grid): a lane that has read nothing yet keeps to the head (system prompt and
    #: tools, where the audit knows its size) as the checkpoint last read, so its first read is the
    #: head until a request left ``new_checkpoint_min`` tokens past it (Gemini, measured).
    head_checkpoint: bool = False
    #: With :attr:`follows_reads`, on a model read to the token: per model (pattern, lag, after;
    #: first match wins; no match: the read keeps to the last one), how far its reads trail the
    #: lane's previous prompt. A request that extends its lane's previous one, which left at least
    #: ``after`` tokens uncached past what it read, is predicted to read at least that previous
    #: prompt less ``lag`` (where the chain model predicts that much), not only what the previous
    #: one read: such a model's reads move up with the prompts, short of them by a few hundred tokens.
    read_lag_by_model: tuple[tuple[str, int, int], ...] = ()
    #: A lane's first request reads the unlogged head other lanes stored (False: only a head the
    #: account keeps warm, which the cold points' reads show; a chain restarted inside a lane still
    #: reads its own lane's; measured on Gemini's implicit cache, whose session starts mostly read
    #: nothing of a head another session sent seconds before).
    reads_stored_head: bool = True
    #: Where the cold points agree on two or more warm levels, the head predicted is the level
    #: most of them read, not the smallest (measured on OpenAI, where neither level outlived the
    #: other: see :mod:`prefixbench.simulator.providers.openai`), and cold points that read 0 do
    #: not undo the level where more cold points read it than read 0 (best effort); False keeps
    #: the smallest (a longer level lives shorter: Anthropic's, measured) unless the longer one was
    #: read after a longer idle than any read of the smallest (it outlived it), and a cold point
    #: that read 0 leaves the head cold (see ``head_sizes``).
    warm_head_most_read: bool = False
    #: Where the main lanes' first requests of a head agree on one read more than on any other,
    #: though a cold point read nothing or none agreed on the smallest read (no warm head), that
    #: read is the head and every lane start reads it (the account kept it warm for sessions'
    #: first calls), not a read after an expiry (measured on Anthropic, Claude Code 2.1.39:
    #: github.com/marot/spotter, four of five sessions over three days read 17,842 tokens at their
    #: start, and one of them 0 after idles of 19 min and 4 h).
    lane_starts_read_warm_level: bool = False
    #: The same for a log with request bodies whose head the bodies leave out (an agent's tools,
    #: never logged): where the main lanes' first requests of one model agree on one non-zero read
    #: more than on any other read, 0 included, every such lane start reads at least it (the
    #: account kept that head warm between runs), though the byte-level model, replaying the
    #: logged bodies alone, sees no shared prefix there (measured on DeepSeek: see its module).
    body_starts_read_warm_level: bool = False
    #: The same for a body-less log whose sessions each name their own head (pi's and OpenClaw's
    #: files): the main lanes' first requests of one model, in one folder (a project's sessions) and
    #: one UTC day (pi's system prompt dates the user's local day, which that approximates), from the
    #: third on, read the non-zero level two or more of the first requests sent before them agree on
    #: (more than read 0 or agree on any other read) where their prompt holds it: earlier ones send
    #: the head and diverge after it, which stores it as a common prefix, and later ones read it
    #: (measured on DeepSeek: see its module).
    third_starts_read_common_head: bool = False
    #: Models (patterns) whose request reads nothing when its lane's previous request went to
    #: another model of the provider: neither the head nor the model's own earlier prefix in the
    #: lane (measured on Gemini 2.5's implicit cache); other models read what the chain model says.
    unread_after_switch: tuple[str, ...] = ()
    #: Models (patterns) whose request reads nothing while its lane has read nothing yet: a call
    #: that extends the previous one of the lane, same model, after every earlier read of 0
    #: (measured on Gemini 2.5's implicit cache); other models read what the chain model says.
    unread_until_read: tuple[str, ...] = ()
    #: Its models render no reasoning item of an earlier user turn in a later turn's prompt (but
    #: those :attr:`turn_reasoning_kept` names), so a new turn's prompt differs from the previous
    #: one where that turn's reasoning began (measured on OpenAI; read by the Codex reader). False:
    #: not known, a new turn is taken to keep it (unless its prompt shrank).
    turn_reasoning_dropped: bool = False
    #: Models (patterns) of a provider that drops an earlier user turn's reasoning
    #: (:attr:`turn_reasoning_dropped`) that keep it all the same.
    turn_reasoning_kept: tuple[str, ...] = ()
    #: Models (patterns) whose cached response, sent back whole in the next call of its turn
    #: (:attr:`caches_output`), is read only as far as its reasoning: the next call reads the
    #: previous prompt and that call's reasoning tokens, not its visible output (measured on
    #: OpenAI's ``-codex`` models through Codex, whose rollouts log the reasoning tokens).
    output_read_to_reasoning: tuple[str, ...] = ()
    #: A request sent more than this many ms after its lane's previous one reads nothing: neither
    #: its lane's prefix nor the head (measured on Gemini's implicit cache, whose in-memory entries
    #: are evicted as capacity is reclaimed, no lifetime published); 0: no such rule. Applied by
    #: the audit's chain model only (a log without request bodies, both calls' send times known),
    #: not by the byte-level models that replay bodies.
    unread_after_idle_ms: int = 0
    #: ``(model regex, ms)``, first match wins over :attr:`unread_after_idle_ms` for that model (0:
    #: no such rule for it). :meth:`unread_after_idle` gives it.
    unread_after_idle_by_model: tuple[tuple[str, int], ...] = ()
    #: Serves the Anthropic Messages wire format (its own endpoint or a compatible one), so a
    #: captured call's body and usage read in that shape.
    speaks_messages: bool = False
    #: Response fields where the server explains its own cache misses.
    diagnostics_fields: tuple[str, ...] = ()
    #: The ids agents' settings give the API handlers that serve it (Cline's ``providerId`` /
    #: ``model_provider_id``, Roo Code's and Kilo Code's ``apiProvider``), each with how that
    #: handler writes the usage fields of the agent's log (see :data:`AgentUsageReading`).
    agent_handlers: tuple[tuple[str, AgentUsageReading], ...] = ()
    #: The rules the body-less chain model runs for it (a name in ``PROVIDERS``).
    chain_as: str | None = None
    #: The byte-level cache model (``--cache`` name) that replays its request bodies, and the
    #: options the audit builds it with (None: the byte-exact reference).
    body_model: str | None = None
    body_model_options: tuple[tuple[str, object], ...] = ()
    #: ``(epoch ms, options)``, earliest first: the options the byte-level model replays a body
    #: sent before that moment with, on top of :attr:`body_model_options` (the same rule as
    #: :attr:`min_tokens_before`, told in the model's own option: Gemini's earlier minimums).
    body_model_options_before: tuple[tuple[int, tuple[tuple[str, object], ...]], ...] = ()

    def body_options_at(self, sent_ms: int | None) -> tuple[tuple[str, object], ...]:
        """The byte-level model's dated options for a body sent at ``sent_ms`` (None: today's: none)."""
        if sent_ms is None:
            return ()
        return next((options for until, options in self.body_model_options_before if sent_ms < until), ())
    #: The byte-level model's option that sets a read step other than :attr:`block_tokens`.
    body_step_option: str = "block"
    #: Where an entry's lifetime is counted from: ``start``, the request that wrote or read it
    #: was sent (so a long response uses up part of it), ``response``, its response began, or
    #: ``end``, its response ended, where the log says when (else as ``response``; a read pushes
    #: the entry's expiry on from there too).
    ttl_from: TtlFrom = "start"
    #: Whether the cache keeps a response's tokens after its prompt, so that the next prompt that
    #: starts with the prompt and the whole response (an agent that sends every output item back,
    #: reasoning included) can read into them. Measured, not documented: see the provider's module.
    caches_output: bool = False
    #: The options of its own ``--cache`` model (empty: none, or documented in the model).
    cache_options: tuple[CacheOption, ...] = ()
    #: Whether its prompt cache keys on the ``cch`` value of Claude Code's billing header block
    #: (``keyed``, as every third-party server measured does) or ignores it (``ignored``: Anthropic's
    #: API, an assumption; evidence in :mod:`prefixbench.workloads.logs.billing_header`).
    billing_cch: Literal["ignored", "keyed"] = "keyed"
    #: The pages its rules come from (URLs), for the docs' provider table.
    sources: tuple[str, ...] = ()

    def min_cacheable(self, model: str, sent_ms: int | None = None) -> int:
        """Shortest cacheable prefix (tokens) for ``model``, in a request sent at ``sent_ms``
        (None: unknown, today's table; see :attr:`min_tokens_before`)."""
        table = self.min_tokens_by_model
        if sent_ms is not None:
            table = next((old for until, old in self.min_tokens_before if sent_ms < until), table)
        return per_model(table, self.min_tokens, model)

    def max_cached(self, model: str) -> int | None:
        """The most tokens a request to ``model`` may have cached (None: no limit)."""
        return _max_cached(self.max_cached_by_model, model) if self.max_cached_by_model else None

    def picks_ttl(self, model: str) -> bool:
        """Whether a request to ``model`` may ask for its writes' TTL."""
        return self.ttl_per_request and not any(_pattern(p).search(model) for p in self.default_ttl_only)

    def longest_ttl_ms(self, model: str) -> int | None:
        """The longest lifetime an entry of ``model`` can get (None: the provider publishes none)."""
        if self.request_ttl is not None:  # what the model can get, asking each label in turn
            labels = {self.request_ttl(model, asked, None, False) for asked in (None, *dict(self.ttls_ms))}
            return max((ms for ms in map(self.ttl_ms, labels) if ms is not None), default=None)
        if not self.picks_ttl(model) and self.default_ttl is not None:
            return self.ttl_ms(self.default_ttl)
        ttls = [ms for _, ms in self.ttls_ms]
        return max(ttls) if ttls else None

    def ttl_words(self) -> str:
        """The entry lifetimes this provider offers, in words (``5 m / 1 h``); empty: no TTL."""
        if self.ttl_text:
            return self.ttl_text
        return " / ".join(_duration_words(ms) for _, ms in self.ttls_ms)

    def ttl_ms(self, label: str | None = None) -> int | None:
        """Lifetime (logical ms) of ``label``, or of the default when ``label`` is not offered."""
        return _ttl_ms(self.ttls_ms, self.default_ttl, label)

    def retention_choice(self, model: str) -> tuple[str, str] | None:
        """The (short, long) lifetimes a client of ``model`` picks between per request (OpenAI's
        retention), or None: nothing to pick (:attr:`retention_choices`)."""
        return None if self.retention_choices is None else self.retention_choices(model)

    def ttl_label(self, model: str, asked: str | None = None, sent_ms: int | None = None, zdr: bool = False) -> str | None:
        """The label of the lifetime a request gets where the provider decides it per request
        (:attr:`request_ttl`); None where the write or the default decides it."""
        return None if self.request_ttl is None else self.request_ttl(model, asked, sent_ms, zdr)

    @property
    def default_ttl_ms(self) -> int | None:
        """Lifetime of an entry written with the default TTL (None: no TTL)."""
        return self.ttl_ms(self.default_ttl)

    @property
    def bodies_keep_output(self) -> bool:
        """Whether the byte-level model keeps a captured response after its prompt: where the
        cache keeps output (:attr:`caches_output`) and :attr:`body_model_options` leave the model's
        ``cache_output`` on (xAI's bodies measured otherwise)."""
        return self.caches_output and dict(self.body_model_options).get("cache_output", True) is not False

    @property
    def reports_usage(self) -> bool:
        """Whether its API reports cache usage on the wire (a hosted provider, not an engine)."""
        return self.read_usage is not _no_usage

    @property
    def is_additive(self) -> bool:
        """Its input count excludes the read and written parts."""
        return self.usage_convention == "additive"

    def cacheable(self, usage: Usage) -> int:
        """The part of a reported prompt the cache could hold: additive providers cache up to
        the last breakpoint (the uncached tail is not; where the log reports no writes, the
        breakpoint is not known: the whole prompt), subset providers the whole prompt, less its
        :attr:`unread_tail`."""
        if self.is_additive:
            return usage.prompt - usage.uncached if usage.writes_reported else usage.prompt
        return max(0, usage.prompt - self.unread_tail)

    def written_bound(self, usage: Usage, lane_wrote: bool = False) -> int | None:
        """Under :attr:`writes_bound_reads`: what a call of ``usage`` read and wrote, the most the
        next call can read from its cache (the rest of its prompt was sent uncached and never
        stored), where its write count can be trusted: its usage has a write field and it wrote
        something, or ``lane_wrote`` (a call of its lane up to it reported a write: a relay that
        counts writes on some responses only gives 0 or no field on the others, and those say
        nothing of what was stored). None otherwise (:meth:`cacheable` alone applies)."""
        if not (self.writes_bound_reads and usage.cache_reported and usage.writes_reported):
            return None
        if usage.cache_write <= 0 and not lane_wrote:
            return None
        return usage.cache_read + usage.cache_write

    def cacheable_given(self, usage: Usage, lane_wrote: bool = False) -> int:
        """:meth:`cacheable` of a previous call's ``usage``, capped at :meth:`written_bound` where
        that applies (``lane_wrote``: a call of its lane up to it reported a write)."""
        cacheable = self.cacheable(usage)
        written = self.written_bound(usage, lane_wrote)
        return cacheable if written is None else min(cacheable, written)

    def left_cached(self, usage: Usage, lane_wrote: bool = False) -> int:
        """What a call of ``usage`` left in the cache for the next call of its lane, before that
        call's own prompt and read step bound it: on an additive provider what it read and wrote
        (what it stored; a usage with no write field, its read), on a subset provider
        :meth:`cacheable_given` (``lane_wrote``: as there). The one rule the audit's expected read
        and keep-alive's judgement of an idle gap (whether the next call read all of it) share."""
        if self.is_additive:
            return usage.cache_read + usage.cache_write
        return self.cacheable_given(usage, lane_wrote)

    def round_read(self, tokens: int, model: str = "", step: int = 0, offset: int = 0) -> int:
        """A read as the provider reports it: in :attr:`block_tokens` steps (``model``'s own, where
        :attr:`block_tokens_by_model` names it; ``step``, where the endpoint decided it: see
        :meth:`url_step`), on a grid starting at ``offset`` (:func:`on_grid`), and 0 below a read
        minimum."""
        if self.min_applies_to == "read" and tokens < self.min_tokens:
            return 0
        read = on_grid(tokens, self.read_step(model, step), offset)
        # (a learned grid's points below the minimum read 0 too)
        return 0 if offset and self.min_applies_to == "read" and read < self.min_tokens else read

    def step_text(self, quote: str = "") -> str:
        """The read step in words, as the provider table gives it: ``128 (64: sent before
        2026-04-24)``; ``quote`` wraps model patterns and endpoint markers (a backtick in Markdown)."""
        from datetime import datetime, timezone

        def day(epoch_ms: int) -> str:
            return datetime.fromtimestamp(epoch_ms / 1000, timezone.utc).strftime("%Y-%m-%d")

        return (
            f"{self.block_tokens:,}"
            + "".join(f" ({tokens:,}: {quote}{pattern}{quote})" for pattern, tokens in self.block_tokens_by_model)
            + "".join(f" ({tokens:,}: {quote}{pattern}{quote} through {route})" for route, pattern, tokens in self.route_steps)
            + "".join(f" ({tokens:,}: {quote}{pattern}{quote} through {route}, upstream {quote}{served}{quote})"
                      for route, served, pattern, tokens in self.route_upstream_steps)
            + "".join(f" ({tokens:,}: {quote}{marker}{quote} endpoint)" for marker, tokens in self.block_tokens_by_url)
            + "".join(f" ({tokens:,}: sent before {day(until)})" for until, tokens in self.block_tokens_before)
        )

    def read_step(self, model: str = "", step: int = 0) -> int:
        """The step ``model``'s reads count in (tokens); ``step`` (not 0): the endpoint's, which wins."""
        if step:
            return step
        if not self.block_tokens_by_model:
            return self.block_tokens
        return per_model(self.block_tokens_by_model, self.block_tokens, model)

    def strips_thinking(self, model: str) -> bool:
        """Whether ``model`` drops earlier turns' thinking at a new user turn (:attr:`strips_prior_thinking`)."""
        return any(_pattern(pattern).search(model) for pattern in self.strips_prior_thinking)

    def read_lag(self, model: str) -> tuple[int, int] | None:
        """How far ``model``'s reads trail its lane's previous prompt, and the fewest tokens that
        one must leave uncached before they move up (:attr:`read_lag_by_model`); None where they
        keep to the last read."""
        return next(((lag, after) for pattern, lag, after in self.read_lag_by_model
                     if _pattern(pattern).search(model)), None)

    def unread_after_idle(self, model: str) -> int:
        """The idle ms after which ``model``'s request reads nothing (:attr:`unread_after_idle_by_model`,
        else :attr:`unread_after_idle_ms`); 0: no such rule."""
        return per_model(self.unread_after_idle_by_model, self.unread_after_idle_ms, model)

    def reads_after_switch(self, model: str) -> bool:
        """Whether ``model``'s request right after its lane switched to it reads anything
        (:attr:`unread_after_switch`)."""
        return not any(_pattern(pattern).search(model) for pattern in self.unread_after_switch)

    def reads_before_a_read(self, model: str) -> bool:
        """Whether ``model``'s request reads anything while its lane has read nothing yet
        (:attr:`unread_until_read`)."""
        return not any(_pattern(pattern).search(model) for pattern in self.unread_until_read)

    def drops_turn_reasoning(self, model: str) -> bool:
        """Whether ``model`` renders none of an earlier user turn's reasoning in a later turn's
        prompt (:attr:`turn_reasoning_dropped`, :attr:`turn_reasoning_kept`)."""
        return self.turn_reasoning_dropped and not any(_pattern(pattern).search(model) for pattern in self.turn_reasoning_kept)

    def reads_output_to_reasoning(self, model: str) -> bool:
        """Whether the next call reads only the reasoning of ``model``'s response it was sent
        back (:attr:`output_read_to_reasoning`)."""
        return any(_pattern(pattern).search(model) for pattern in self.output_read_to_reasoning)

    def names_model(self, model: str) -> bool:
        """Whether ``model`` (any case) is one of this provider's model names, also behind a
        gateway's vendor part (``x-ai/grok-4``, ``google/gemini-2.5-pro``)."""
        if not self.model_prefixes:
            return False
        lowered = model.lower()
        return lowered.startswith(self.model_prefixes) or lowered.rpartition("/")[2].startswith(self.model_prefixes)

    def option_defaults(self) -> dict[str, object]:
        """Its ``--cache`` model's options and their defaults."""
        return {option.key: option.default for option in self.cache_options}

    def dated_step(self, sent_ms: int | None) -> int:
        """The step a read sent at ``sent_ms`` counts in when the provider's cache counted in
        another then (:attr:`block_tokens_before`); 0 where the model decides it."""
        if sent_ms is None:
            return 0
        return next((tokens for until, tokens in self.block_tokens_before if sent_ms < until), 0)

    def bills_list_price_at(self, upstream: str) -> bool:
        """Whether a call of this provider's model that a gateway says ``upstream`` served is
        billed at this provider's list price: always for closed weights
        (:attr:`hosts_bill_list_price`), else only where ``upstream`` is the provider itself (any
        case and spelling: ``DeepSeek``, ``deepseek``, ``Moonshot AI``; :attr:`own_hosts`). An
        empty ``upstream`` (the log names none) is taken at the list price."""
        if self.hosts_bill_list_price or not upstream:
            return True
        name = "".join(c for c in upstream.lower() if c.isalnum())
        return name == self.name or name in self.own_hosts

    def upstream_grid(self, upstream: object, model: str) -> tuple[int, int, int]:
        """The ``(step, first, lag)`` ``model``'s reads follow when the gateway names ``upstream``
        as the one that served it: the grid they lie on (:attr:`upstream_grids`), or step 1 and the
        tokens a followed read trails the previous prompt by (:attr:`upstream_read_lags`);
        ``(0, 0, 0)`` where the model decides it. The one lookup: a reader that names the upstream
        sets all three on its requests (:attr:`TraceRequest.read_lag`)."""
        if not isinstance(upstream, str):
            return 0, 0, 0
        name = upstream.strip().lower()
        grid = next(((step, first, 0) for served, pattern, step, first in self.upstream_grids
                     if served == name and _pattern(pattern).search(model)), None)
        if grid is not None:
            return grid
        return next(((1, 0, lag) for served, pattern, lag in self.upstream_read_lags
                     if served == name and _pattern(pattern).search(model)), (0, 0, 0))

    def route_step(self, route: str, model: str) -> int:
        """The step ``model``'s reads count in when sent through ``route`` (:attr:`route_steps`);
        0 where the model decides it."""
        return next((step for through, pattern, step in self.route_steps
                     if through == route and _pattern(pattern).search(model)), 0)

    def route_upstream_step(self, route: str, upstream: object, model: str) -> int:
        """The step ``model``'s reads count in when sent through ``route`` and served by the
        upstream the gateway names (:attr:`route_upstream_steps`); 0 where neither is known or no
        rule names them (the model decides it)."""
        if not route or not isinstance(upstream, str):
            return 0
        name = upstream.strip().lower()
        return next((step for through, served, pattern, step in self.route_upstream_steps
                     if through == route and served == name and _pattern(pattern).search(model)), 0)

    def route_upstream_detail(self, route: str, upstream: str, model: str, step: int) -> str:
        """The words a row gives the rule of :attr:`route_upstream_steps` that set its ``step``
        (the gateway, the upstream as the log names it, the step and :attr:`route_upstream_evidence`);
        "" where the rule of ``route`` and ``upstream`` gives that model no step, or another
        (a step ``--read-step`` set: the gateway's rule did not give it)."""
        if not step or not route or self.route_upstream_step(route, upstream, model) != step:
            return ""
        return f"{_ROUTE_NAMES.get(route, route)}'s {upstream.strip()} route: blocks of {step:,}, {self.route_upstream_evidence}"

    def is_route_step(self, step: int) -> bool:
        """Whether ``step`` is one of :attr:`route_steps`' (the rules' own, not an endpoint's)."""
        return any(step == tokens for _, _, tokens in self.route_steps)

    def url_step(self, url: str) -> int:
        """The step the endpoint ``url`` reads in whatever the model (:attr:`block_tokens_by_url`);
        0 where the model decides it."""
        lowered = url.lower()
        return next((tokens for marker, tokens in self.block_tokens_by_url if marker in lowered), 0)

    def names_url(self, url: str) -> bool:
        """Whether the endpoint ``url`` (any case) is this provider's."""
        lowered = url.lower()
        return any(marker in lowered for marker in self.url_markers)


def on_grid(tokens: int, step: int, offset: int = 0) -> int:
    """The last point of the grid ``offset + k x step`` at or below ``tokens`` (0 below its first)."""
    if tokens < offset:
        return 0
    return offset + (tokens - offset) // step * step
