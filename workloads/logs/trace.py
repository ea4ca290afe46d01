"""The normalized trace: what every importer turns a real agent log into.

A trace is a stream of :class:`TraceRequest` values, one per model call the log shows, in the
order the log lists them. Each request belongs to a *lane* (one conversation thread: the main
agent, one subagent, the side calls of a capture...). Everything here is a frozen value with no
reference to the file it came from beyond ``file`` and ``line``, so a trace can be held, sorted
and compared cheaply; the request body (``body``) is present only when the log carries it.

Token counts follow one convention whatever the provider's own field names are:

* ``cache_read``        tokens served from the cache
* ``cache_write_5m``    tokens written with the default (5 minute) TTL
* ``cache_write_1h``    tokens written with the 1 hour TTL
* ``uncached``          input billed at the full input price (neither read nor written)
* ``output``            output tokens (the FINAL count of the response)

so ``prompt = cache_read + cache_write + uncached`` for every provider. Importers convert:
OpenAI's ``input_tokens`` includes cached tokens (``uncached = input - cached``); DeepSeek's
Anthropic-compatible ``input_tokens`` excludes reads (``uncached = input``); Anthropic's
``input_tokens`` is the uncached part already.

Times are epoch milliseconds (UTC). ``sent_ms`` is when the request left, as well as the log
can tell (for a Claude Code transcript, the timestamp of the message the request answers);
``ready_ms`` is when its response began (the earliest its cache entries can serve another
request), None when the log does not say.

``prefix`` describes, for logs without bodies, what the request's prompt is made of in terms
the chain cache model (:mod:`prefixbench.workloads.audit.chain`) can key on: the unlogged head
(system prompt and tools) and the id of the last logged message the prompt ends with.

Memory: an audit holds every request of every file until it ends, so the structs here are
``gc=False``. Frozen and holding only immutable values, they cannot form a reference cycle;
untracked by the garbage collector, each is 16 bytes smaller and is never walked by its
collections. Once read, the audit holds a request with none of the rare fields set as a
:class:`PlainRequest` (:func:`plain`), which reads the same.

This module is the stable contract between the importers and the audit (and anything built on
the audit, such as the HTML report): fields are only ever added, with defaults.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import ClassVar, Literal, TypeAlias

import msgspec
from msgspec.structs import replace
from prefixbench.simulator.usage import Usage as Usage  # the normalized usage, re-exported
from prefixbench.simulator.usage import plain_usage
from prefixbench.simulator.wire import Message, Request

#: What a lane is: the agent's own thread, a subagent, a compaction call, a side call (titles,
#: quota checks), or a trace request (Mooncake: no agent structure at all).
LaneKind: TypeAlias = Literal["main", "subagent", "compaction", "side", "trace"]
#: Who served a request: a name in :data:`prefixbench.simulator.providers.PROVIDERS` (whose rule
#: object holds its facts: ``rules_for``), ``engine`` (a self-hosted block cache: Mooncake) or
#: ``unknown``. A plain string, so a provider added to that table needs no second list here;
#: tests/test_provider_literals.py checks what the log formats produce.
Provider: TypeAlias = str


#: The model a reader puts down for a call whose log names none (no price row; not a switch of model).
NO_MODEL = "unknown"
#: :attr:`TraceRequest.relay` of a call that went through a relay its log does not name, told by
#: what the response carries (Claude Code: a message id of no shape Anthropic's API, Bedrock or
#: Vertex gives). Shown as is (``via relay '(unnamed)'``); the relay note says the evidence.
UNNAMED_RELAY = "(unnamed)"


class Prefix(msgspec.Struct, frozen=True, gc=False):
    """What a body-less request's prompt is made of, for the chain cache model.

    ``head`` names the unlogged system prompt + tools (requests with the same head share it,
    across lanes and files); ``node`` is the id of the last logged item the prompt ends with and
    ``parent`` the node of the previous request whose prompt this one extends (None: this
    request starts a new chain after the head: a lane start, a compaction, a fork).
    """

    head: str
    node: str
    parent: str | None = None
    #: Content blocks added since ``parent`` (Anthropic's breakpoint lookback counts blocks).
    new_blocks: int = 1
    #: The agent sends this call's response back whole (reasoning included) right after its
    #: prompt in the next call of the chain (Codex; pi on OpenAI's Responses APIs): a provider
    #: that caches output (``ProviderRules.caches_output``) then serves that call past this prompt.
    replays_output: bool = False
    #: Of ``parent``'s prompt, the tokens this one keeps where it drops a later part of it (Codex:
    #: a new turn sent without the previous turn's reasoning); None: all of it.
    shared: int | None = None
    #: A call the log does not hold, sent after this one, wrote this call's prompt and its response
    #: (:class:`OutputWritten`); the next call of the chain that sends both reads them, whether or
    #: not the provider's cache keeps output.
    output_written: ClassVar[bool] = False

    def replayed_output(self, output: int) -> int:
        """Of this call's ``output`` tokens, the ones the next call sent back can read."""
        return output


class OutputWritten(Prefix, frozen=True, gc=False):
    """A :class:`Prefix` whose prompt and response a call outside the log wrote after it (Claude
    Code 2.1.185 on, after a main-thread turn ends: see its log format). A class of its own, not a
    field of every prefix: a field cost each request of a trace 8 bytes (test_audit_memory)."""

    output_written: ClassVar[bool] = True


class ReplayedToReasoning(Prefix, frozen=True, gc=False):
    """A :class:`Prefix` whose response the next call reads only as far as its ``reasoning``
    tokens (``ProviderRules.output_read_to_reasoning``: OpenAI's ``-codex`` models through Codex,
    whose rollouts log them). A class of its own, as :class:`OutputWritten`."""

    reasoning: int = 0

    def replayed_output(self, output: int) -> int:
        return min(output, self.reasoning)


class LoggedMessage(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """One message of a transcript, kept small so a break can be located on it (no full text).

    ``tokens`` is an estimate from the logged text (the audit scales it to the reported
    prompts); ``marks`` name what in it an agent is known to send differently later (see
    :mod:`prefixbench.workloads.logs.history`).
    """

    role: str
    tokens: int
    #: The first characters of its text, whitespace folded (at most ``EXCERPT_CHARS``).
    excerpt: str
    marks: tuple[str, ...] = ()


def packed_offsets(offsets: Sequence[int]) -> bytes:
    """Where a request's message lines start, as its ``messages`` keep them: native unsigned 32-bit
    ints and one byte more (an odd length) where every offset is below 4 GiB, else native unsigned
    64-bit ints (a length of eight bytes a message). (8 bytes a message made a generated request's
    four offsets a block of 80 bytes, 64 now.)"""
    if max(offsets) < 1 << 32:
        return array("I", offsets).tobytes() + b"\0"
    return array("Q", offsets).tobytes()


def unpacked_offsets(data: bytes) -> array[int]:
    """The offsets :func:`packed_offsets` packed, in their order."""
    if len(data) & 1:
        places = array("I")
        places.frombytes(data[:-1])
    else:
        places = array("Q")
        places.frombytes(data)
    return places


def offsets_count(data: bytes) -> int:
    """How many offsets :func:`packed_offsets` packed."""
    return len(data) >> 2 if len(data) & 1 else len(data) >> 3


class TraceRequest(msgspec.Struct, frozen=True, gc=False):
    """One model call of a real log."""

    file: str
    #: 1-based line (the record that decided the usage: a Claude Code request's LAST line).
    line: int
    lane: str
    lane_kind: LaneKind
    #: Position in the file's stream of requests (file order, 0-based).
    seq: int
    sent_ms: int | None
    ready_ms: int | None
    provider: Provider
    model: str
    #: Request-family settings beyond the model, e.g. ``{"effort": "high"}`` or ``{"thinking": "low"}``.
    envelope: tuple[tuple[str, str], ...] = ()
    usage: Usage | None = None
    #: The request body, when the log has it (HTTP captures, request-body logs).
    body: Request | None = None
    prefix: Prefix | None = None
    #: Things the log shows between the lane's previous request and this one, as
    #: ``(kind, detail)``: ``compaction``, ``model_change``, ``thinking_change``, ``resume``,
    #: ``user_turn``, ``fork``...
    events: tuple[tuple[str, str], ...] = ()
    #: The provider's own cache diagnostic (Anthropic: ``model_changed``, ``system_changed``,
    #: ``tools_changed``, ``messages_changed``, ``previous_message_not_found``), when logged.
    diagnostic: str | None = None
    #: The log's id for the call (Claude Code requestId, response id, ...).
    request_id: str | None = None
    #: Block-hash traces (Mooncake, kvcache-simulator): the request's prefix-chained block ids...
    hash_ids: tuple[int | str, ...] | None = None
    #: ... and the tokens of each block (512 each in Mooncake; a last partial block is shorter).
    block_tokens: tuple[int, ...] | None = None
    #: The agent's version when the log names it (heads differ between versions).
    agent_version: str | None = None
    #: The log format the request came from.
    source_format: str = ""
    #: When the response ended (its last event), where the log records it: idle time is
    #: measured from here, not from the send.
    done_ms: int | None = None
    #: The request IS a compaction call: it asked the model for the summary that replaces the
    #: history (a Claude Code ``agent-acompact-*`` lane, a captured or logged body whose last user
    #: text asks for a summary of the conversation, an OpenCode ``summary`` message). The
    #: requests sent on the compacted context carry a ``compaction`` event instead.
    compaction_call: bool = False
    #: The step (tokens) its reads count in where the endpoint, not the model, decides it (a
    #: captured call to Kimi's coding endpoint under a Claude model name: 256); 0: the model's.
    read_step: int = 0
    #: Where the grid of :attr:`read_step` starts (tokens): reads are ``offset + k x step``. 0
    #: but where the audit learned a coarser grid from the log's own reads
    #: (:mod:`prefixbench.workloads.audit.grid`).
    read_offset: int = 0
    #: Tokens a read followed from the lane's last one trails the previous prompt by, where the
    #: upstream a gateway names gave the request read step 1 and this lag
    #: (:meth:`~prefixbench.simulator.providers.base.ProviderRules.upstream_grid`); 0: none.
    #: ``--read-step`` clears it.
    read_lag: int = 0
    #: Tokens of its head the account is assumed to keep warm outside the log (``--codex-warm-head``:
    #: read at a lane start and after an expiry where the log's own cold points show no warm head);
    #: 0: none assumed.
    warm_head: int = 0

    @property
    def is_compaction_call(self) -> bool:
        """The request asked for a compaction's summary (the flag, or a compaction lane)."""
        return self.compaction_call or self.lane_kind == "compaction"
    #: Transcript logs: the logged messages this prompt adds after ``prefix.parent``'s prompt
    #: (the previous response, tool results, user turns), in prompt order; the audit locates a
    #: break on them. Empty where the log holds no message history (or a body instead). A reader
    #: of a file read as it lies on disk may keep them as where their lines start in ``file``
    #: instead (bytes, no record: :func:`packed_offsets`, 4 or 8 bytes a message), their records
    #: made from the lines read again only when a break is located on them (its format's
    #: ``message_of_line``: :func:`~prefixbench.workloads.audit.locate.logged`): making every
    #: message's record as the file was read was a quarter of the reading, for the few requests
    #: whose read falls.
    messages: tuple[LoggedMessage, ...] | bytes = ()
    #: The explicit cache the request named (Gemini ``cachedContent``, as
    #: ``cachedContents/<id>``): its ``usage.cache_read_explicit`` was read from it.
    explicit_cache: str | None = None
    #: Where in the line's record the request is, when one record holds several (a one-object
    #: JSON session: ``messages[7]``; an agent trace: ``requests[2].requests[0]``); "" otherwise.
    path: str = ""
    #: A captured call's response as the next request of its lane sends it back: the assistant
    #: messages the body's ``output`` items (Responses) or its message (chat completions) read
    #: to (:mod:`prefixbench.workloads.logs.captured_reply`). A body replay keeps them after the
    #: prompt where the provider's cache keeps output (``ProviderRules.caches_output``). Empty
    #: where the log does not hold the response.
    reply: tuple[Message, ...] = ()
    #: The cache lifetime the request asked for where the log says so other than in a body
    #: (the audit's ``--openai-zdr`` sets ``in_memory`` on every OpenAI request that asks
    #: nothing); :attr:`asked_retention` falls back to the body's.
    retention: str | None = None
    #: The endpoint that answered (host and path), where the log names it (an HTTP capture's
    #: URL): the audit decides how an OpenAI-shaped prompt count holds the cached part per
    #: endpoint, and per file where this is empty (:mod:`prefixbench.workloads.logs.endpoints`).
    endpoint: str = ""
    #: The reader took :attr:`provider` from the model's name: the log names no endpoint that
    #: tells who served the call (a proxy's record with no URL, a URL of no provider's own, such
    #: as a local proxy's). An assumption: the audit says so, and ``audit --assume-provider``
    #: corrects it.
    provider_by_model: bool = False
    #: The server a gateway says served the call, where its log names it (OpenRouter's response
    #: ``provider``, Kilo Code's ``inferenceProvider``: ``DeepInfra``, ``Google AI Studio``): each
    #: such upstream keeps a cache of its own, so the audit predicts the call against that
    #: upstream's entries alone; "" where the log names none (the provider's one cache).
    upstream: str = ""
    #: The endpoint of the user's own configuration the call went through where the log names one
    #: that is not the model maker's (Codex's ``model_provider`` of a reseller's relay, ``codex``):
    #: the call keeps the maker's rules and list price, but the cache that answered and the bill
    #: were the relay's, which the audit says; "" where the log names none.
    #: :data:`UNNAMED_RELAY` where the log names none but shows one went between (Claude Code's
    #: message ids of no maker's shape).
    relay: str = ""
    #: The agent's own name of the wire API the call went through, where its log names one (pi's
    #: ``message.api``: ``openai-completions``, ``anthropic-messages``...); "" where it names none.
    #: What the agent marked for the provider may follow from it (pi marks no DashScope request
    #: on ``openai-completions`` by default).
    api: str = ""
    #: The maker's own models' service of another company the call went to, where the log says
    #: so (:func:`~prefixbench.simulator.providers.hosts.azure_service`: ``Azure OpenAI``, with
    #: its deployment where the URL names it): the call keeps the maker's rules and list price,
    #: and the audit names the service beside the provider; "" where the log names none.
    service: str = ""

    @property
    def asked_retention(self) -> str | None:
        """The cache lifetime the request asked for (OpenAI ``prompt_cache_retention`` /
        ``prompt_cache_options.ttl``): this record's, else its body's; None: not asked, or unknown."""
        if self.retention is not None:
            return self.retention
        return None if self.body is None else self.body.retention

    @property
    def speed(self) -> str:
        """``fast`` where the call's reported usage says it ran in fast mode (Anthropic's
        ``usage.speed``), else "" (standard, or the log does not say: never guessed)."""
        return "" if self.usage is None else self.usage.speed

    @property
    def envelope_dict(self) -> dict[str, str]:
        """The envelope settings as a dict."""
        return dict(self.envelope)


#: The fields most requests of a log leave at their default (a body, block hashes, an endpoint, the
#: settings ``audit`` assumes...): a :class:`PlainRequest` holds none of them.
RARE_FIELDS = ("body", "diagnostic", "hash_ids", "block_tokens", "compaction_call", "read_step",
               "read_offset", "read_lag", "warm_head", "explicit_cache", "reply", "retention", "endpoint", "provider_by_model",
               "upstream", "relay", "service")


class Shape(msgspec.Struct, frozen=True, gc=False):
    """What a :class:`PlainRequest` shares with the requests beside it: the fields a file's requests
    mostly hold alike (its reader, agent version, the lane's kind, the provider, model, envelope
    and events), held once for all of them (:func:`plain` gives requests that hold the same values
    one shape) and read through the request as its own fields. Not the request's ``path`` inside
    its record: a file of one record (an OpenTelemetry export's ``spans[k]``, a Zed thread's
    ``messages[i]``) gives each request a path of its own, and a shape each with it."""

    lane_kind: LaneKind
    provider: Provider
    model: str
    envelope: tuple[tuple[str, str], ...]
    events: tuple[tuple[str, str], ...]
    agent_version: str | None
    source_format: str
    api: str = ""


#: The fields of a :class:`TraceRequest` a :class:`PlainRequest` holds in its :class:`Shape`.
SHAPE_FIELDS = Shape.__struct_fields__


class PlainRequest(msgspec.Struct, frozen=True, gc=False):
    """A :class:`TraceRequest` whose :data:`RARE_FIELDS` are all at their default, held in 12
    slots, not 35: the same fields, properties and values, read the same way (each rare field
    reads as its default, each of :data:`SHAPE_FIELDS` as its :class:`Shape`'s, which the requests
    that hold the same values share). The audit holds every request of every file to its end, so
    it holds such a request as this (:func:`plain`; 184 bytes less each; its file, the most read of
    the shared fields, keeps a slot of its own: 12 slots take the allocator's same block as 11;
    its ``path`` is "", a request with one being a :class:`PathRequest`),
    from the moment its file is read (``load_trace(held=True)``: the request's id is kept until
    the trace is complete, where a later file may give the call's final usage);
    :func:`replace_request` of any of its fields keeps it plain (the re-simulations of what to
    change move or relink requests, never set a rare field on them; a step that sets one makes
    the request :func:`whole` first). Never made by a reader, never compared with a
    :class:`TraceRequest` (a struct of another type is not equal)."""

    file: str
    shape: Shape
    line: int
    lane: str
    seq: int
    sent_ms: int | None
    ready_ms: int | None
    usage: Usage | None = None
    prefix: Prefix | None = None
    done_ms: int | None = None
    messages: tuple[LoggedMessage, ...] | bytes = ()
    request_id: str | None = None

    asked_retention = TraceRequest.asked_retention
    speed = TraceRequest.speed
    envelope_dict = TraceRequest.envelope_dict

    @property
    def is_compaction_call(self) -> bool:
        """As :attr:`TraceRequest.is_compaction_call` (never the flag: a rare field): the lane's
        kind read from the shape once, not through its property (asked about three times a
        request in the audit's pass)."""
        return self.shape.lane_kind == "compaction"

    # Each of SHAPE_FIELDS read from the shape (a property whose function reads one attribute: what
    # Python 3.11 reads fastest, about 25 ns above a slot; the pass reads about 40 a request).
    @property
    def lane_kind(self) -> LaneKind:
        return self.shape.lane_kind

    @property
    def provider(self) -> Provider:
        return self.shape.provider

    @property
    def model(self) -> str:
        return self.shape.model

    @property
    def envelope(self) -> tuple[tuple[str, str], ...]:
        return self.shape.envelope

    @property
    def events(self) -> tuple[tuple[str, str], ...]:
        return self.shape.events

    @property
    def agent_version(self) -> str | None:
        return self.shape.agent_version

    @property
    def source_format(self) -> str:
        return self.shape.source_format

    @property
    def api(self) -> str:
        return self.shape.api


_DEFAULTS = dict(zip(TraceRequest.__struct_fields__[-len(TraceRequest.__struct_defaults__):], TraceRequest.__struct_defaults__))
for _name in RARE_FIELDS:
    # Its default as a class attribute, which an instance reads as its own (the struct has no slot
    # of that name): a property made a call of every read, 26 a request in the audit's pass.
    setattr(PlainRequest, _name, _DEFAULTS[_name])
del _name
#: (a :class:`PathRequest`'s is its slot's)
PlainRequest.path = ""  # type: ignore[misc]


class PathRequest(PlainRequest, frozen=True, gc=False):
    """A :class:`PlainRequest` of a request with a ``path`` (:attr:`TraceRequest.path`: where in
    its line's record it is), held in a 13th slot of its own: a file of one record (an
    OpenTelemetry export's ``spans[k]``, a Zed thread's ``messages[i]``) gives each request its
    own path, and a path in the :class:`Shape` gave each of them a shape of its own (192 bytes a
    request, not 176 less than a trace request)."""

    path: str = ""


#: The types :func:`plain` makes.
PLAIN_TYPES = (PlainRequest, PathRequest)

#: The fields of a :class:`TraceRequest` a :class:`PlainRequest` holds, in its slots or its shape.
PLAIN_FIELDS = tuple(name for name in TraceRequest.__struct_fields__ if name not in RARE_FIELDS)

#: The shapes made so far, each once (:func:`_shape`); emptied past :data:`SHAPES_KEPT` (a shape
#: forgotten is made again: only the sharing is lost, never a value).
_SHAPES: dict[Shape, Shape] = {}
SHAPES_KEPT = 4096


def _shape(*values: object) -> Shape:
    """The one :class:`Shape` of these values (of :data:`SHAPE_FIELDS`, in their order)."""
    made = Shape(*values)  # type: ignore[arg-type]
    found = _SHAPES.get(made)
    if found is None:
        if len(_SHAPES) >= SHAPES_KEPT:
            _SHAPES.clear()
        found = _SHAPES[made] = made
    return found


def plain(r: TraceRequest, usage: bool = True) -> TraceRequest:
    """``r`` as a :class:`PlainRequest` where its :data:`RARE_FIELDS` are all at their default
    (its usage a :class:`~prefixbench.simulator.usage.PlainUsage` where it can be: see
    :func:`~prefixbench.simulator.usage.plain_usage`; not with ``usage`` False: a reading's
    later steps may set a rare usage field), else ``r`` (typed as the request it reads as)."""
    # (each field tested, no tuple of them made: the audit asks this of every request)
    if (type(r) is not TraceRequest or r.body is not None or r.diagnostic is not None
            or r.hash_ids is not None or r.block_tokens is not None or r.compaction_call or r.read_step or r.read_offset
            or r.read_lag or r.warm_head or r.explicit_cache is not None or r.reply or r.retention is not None or r.endpoint
            or r.provider_by_model or r.upstream or r.relay or r.service):
        return r
    held = r.usage if r.usage is None or not usage else plain_usage(r.usage)
    # A time equal to the send's is the send's int (a response begun or ended in the same
    # millisecond, as a log that stamps both with one time says): not a second int of 32 bytes.
    sent = r.sent_ms
    ready = sent if r.ready_ms == sent else r.ready_ms
    done = sent if r.done_ms == sent else r.done_ms
    shape = _shape(r.lane_kind, r.provider, r.model, r.envelope, r.events, r.agent_version, r.source_format, r.api)
    if r.path:
        return PathRequest(r.file, shape, r.line, r.lane, r.seq, sent, ready, held, r.prefix, done, r.messages,  # type: ignore[return-value]
                           r.request_id, r.path)
    return PlainRequest(r.file, shape, r.line, r.lane, r.seq, sent, ready, held, r.prefix, done, r.messages,  # type: ignore[return-value]
                        r.request_id)


def replace_request(r: TraceRequest, **changes: object) -> TraceRequest:
    """``r`` with ``changes`` (any of its fields), as ``msgspec.structs.replace`` makes it: a
    :class:`PlainRequest` stays plain, any of its :data:`SHAPE_FIELDS` changed giving it the shape
    of its new values."""
    if type(r) not in PLAIN_TYPES:
        return msgspec.structs.replace(r, **changes)
    if "path" in changes and type(r) is PlainRequest:  # (no slot for it: made again, a PathRequest)
        return plain(msgspec.structs.replace(whole(r), **changes), usage=False)
    if not any(name in changes for name in SHAPE_FIELDS):
        return msgspec.structs.replace(r, **changes)
    shape = r.shape  # type: ignore[attr-defined]
    values = [changes.pop(name) if name in changes else getattr(shape, name) for name in SHAPE_FIELDS]
    return msgspec.structs.replace(r, shape=_shape(*values), **changes)  # type: ignore[arg-type]


def whole(r: TraceRequest) -> TraceRequest:
    """``r`` as a :class:`TraceRequest` (a :class:`PlainRequest` with its rare fields at their
    defaults), for a step that sets a rare field; ``r`` itself where it is one."""
    if type(r) is TraceRequest:
        return r
    return TraceRequest(**{name: getattr(r, name) for name in PLAIN_FIELDS})


class ExplicitCache(msgspec.Struct, frozen=True):
    """An explicit cache a log shows being created (Gemini ``POST .../cachedContents``): not a
    model call, but billed: its tokens once at the input price, and storage for as long as it
    was kept.

    ``kept_ms`` runs from its creation to its expiry as last set (the creation's ``expireTime``
    or ``ttl``, an update's), or to its deletion when that came first; None when the log cannot
    tell (an update or a delete without a time), and its storage is then unknown.
    """

    file: str
    #: The line of the creation.
    line: int
    #: ``cachedContents/<id>``.
    name: str
    provider: str
    model: str
    tokens: int
    created_ms: int | None
    kept_ms: int | None
    #: What ended it: ``expiry``, ``delete``; ``update`` when an update set the expiry last.
    ended_by: str = "expiry"


#: The reason a skipped record gives where the endpoint answered a call without any token count
#: (a gateway or Anthropic-compatible server that reports zeros): the call was sent, and may have
#: cached, but there is nothing to count (the audit names such lines where a later call reads past
#: what the previous counted call left).
SENT_UNCOUNTED = "usage all zero: the endpoint reported no token counts for this call (nothing to audit in it)"


class FileSummary(msgspec.Struct, frozen=True):
    """What an importer saw in one file besides its requests."""

    file: str
    format: str
    requests: int
    #: ``(line, reason)`` of records that look like calls but were not counted (HTTP 4xx/5xx,
    #: ``<synthetic>`` messages, aborted calls with no usage, repeated token counts...).
    skipped: tuple[tuple[int, str], ...] = ()
    #: Human-readable facts about the file the report must state (e.g. the unlogged head).
    notes: tuple[str, ...] = ()
    #: Explicit caches the file shows being created (billed apart from its requests).
    explicit_caches: tuple[ExplicitCache, ...] = ()
    #: ``(request id, usage)`` of calls an earlier file counted from a line written before the
    #: response ended, whose copy here holds its end (Claude Code 2.1: a session's file holding a
    #: reply's one block written mid-stream, a compaction agent's file the same reply complete):
    #: :func:`take_final_usage` keeps this usage where it is the same prompt with more output.
    final_usage: tuple[tuple[str, Usage], ...] = ()
    #: Ids of calls another file holds that a lane start of this file extends, named in its
    #: ``prefix.parent`` as :func:`call_parent` of the id (Claude Code 2.1.232 on: a fork
    #: subagent's first call extends the parent's call that spawned it, which the fork's
    #: transcript names by its request id alone): :func:`link_call_parents` puts that call's node there.
    call_parents: tuple[str, ...] = ()
    #: Other names of this file's calls a lane start of another file may extend, ``(name, request
    #: id)``: a Qwen Code fork subagent's transcript names the parent's call that spawned it by
    #: its function call's id alone. An empty request id: the name is of a call whose prompt the
    #: start does not extend (a fork of the last turns alone), which then starts from its head.
    call_aliases: tuple[tuple[str, str], ...] = ()
    #: Requests another file counted (by their chain node) that are lane starts extending a call
    #: named by its id or an alias, ``(node, key)``: a Qwen Code fork's first call, counted from
    #: the session's telemetry, whose transcript (read after it) says where the fork began.
    start_links: tuple[tuple[str, str], ...] = ()
    #: The agent that wrote the file where its format names no one agent and the file does (an
    #: OpenTelemetry export's ``service.name``): a log format's name where the agent has one
    #: (``claude-code``: its settings apply), else the agent's own name; "" where none is named.
    agent: str = ""
    #: ``(line, lane)`` of the responses skipped as :data:`SENT_UNCOUNTED`, ascending: the audit
    #: names one as evidence only for a request of the same lane.
    uncounted: tuple[tuple[int, str], ...] = ()
    #: ``(request id, line)`` of the calls this file holds that another file counts (a resumed or
    #: forked session's copies): where the lane's previous call sits in this file.
    copies: tuple[tuple[str, int], ...] = ()
    #: ``(input, output)``: the prompt and reply lengths the file gives for every one of its
    #: requests, summed, where it reports no usage (a block-hash agent trace's ``in`` and ``out``);
    #: None where it gives none, or not for every request.
    lengths: tuple[int, int] | None = None
    #: The log's own cost fields summed over the calls counted here, where the file logs them and
    #: a note of the reader names the sum (``the log's own cost fields sum to $X``): the audit
    #: says where its own dollars for the file are off it by more than 1% (:func:`cost_check_note`
    #: of :mod:`~prefixbench.workloads.audit.core`). None where it logs none.
    logged_cost: float | None = None
    #: Whether the relay of some call was told from that call's cost, the log naming none (Roo
    #: Code's OpenRouter handler under its ``openai`` protocol: the Cline reader's
    #: ``_folded_by_cost``): the cost check then does not take the relay as the log's word.
    relay_by_cost: bool = False
    #: The agent's session the file is one part of, where the agent writes a session as several
    #: files and the file is not the one named after it (a Claude Code subagent's or compaction
    #: agent's transcript: its session's main transcript, ``<project>/<sessionId>.jsonl``, from
    #: the ``sessionId`` its records name); "" where the file is its own session. The audit's
    #: roll-up per session sums a session's files as one.
    session: str = ""


#: How a ``prefix.parent`` names a call by its request id, where the reader knows no more of
#: it: :func:`call_parent`.
_CALL_PARENT = "call:"


def call_parent(request_id: str) -> str:
    """The ``prefix.parent`` of a request whose prompt extends the call ``request_id`` of another
    file, until :func:`link_call_parents` names that call's node instead."""
    return _CALL_PARENT + request_id


def link_call_parents(requests: list[TraceRequest], summaries: Sequence[FileSummary]) -> list[TraceRequest]:
    """``requests`` with each ``prefix.parent`` that names a call by its id (:func:`call_parent`;
    the ids are in :attr:`FileSummary.call_parents`) naming that call's node instead: the call of
    the same format with that id (not a compaction call split from it), or the call another name
    of it (:attr:`FileSummary.call_aliases`) stands for; a name of a call whose prompt the start
    does not extend leaves it no parent. A lane start another file counted is first given the
    parent its :attr:`FileSummary.start_links` name. A call no file of the audit holds stays named
    by its id, a node no request has (the audit says such a start extends a call whose log is not
    in it). The same list, changed in place where there is one."""
    starts = {(s.format, node): call_parent(key) for s in summaries for node, key in s.start_links}
    wanted = {(s.format, call_parent(key)) for s in summaries for key in s.call_parents}
    wanted.update((fmt, parent) for (fmt, _), parent in starts.items())
    if not wanted:
        return requests
    if starts:
        for i, r in enumerate(requests):
            prefix = r.prefix
            if prefix is not None and prefix.parent is None and (named := starts.get((r.source_format, prefix.node))) is not None:
                requests[i] = replace(r, prefix=replace(prefix, parent=named))
    aliases = {(s.format, call_parent(name)): request_id for s in summaries for name, request_id in s.call_aliases}
    # The call each wanted name stands for: itself, or the call its alias names ("" none).
    target = {at: ((at[0], call_parent(aliases[at])) if aliases[at] else None) if at in aliases else at for at in wanted}
    called = {at for at in target.values() if at is not None}
    nodes: dict[tuple[str, str], str] = {}
    for r in requests:
        if r.request_id is not None and r.prefix is not None and not r.compaction_call:
            at = (r.source_format, call_parent(r.request_id))
            if at in called:
                nodes.setdefault(at, r.prefix.node)
    for i, r in enumerate(requests):
        prefix = r.prefix
        if prefix is None or prefix.parent is None or (at := (r.source_format, prefix.parent)) not in target:
            continue
        goal = target[at]
        if goal is None:
            requests[i] = replace(r, prefix=replace(prefix, parent=None))
        elif (node := nodes.get(goal)) is not None:
            requests[i] = replace(r, prefix=replace(prefix, parent=node))
    return requests


def take_final_usage(requests: list[TraceRequest], summaries: Sequence[FileSummary]) -> list[TraceRequest]:
    """``requests`` with each call a later file gave the final usage of (:attr:`FileSummary.final_usage`)
    taking it: where it is the counted call's prompt (read, written, uncached: the same response)
    with more output. A call of another format with the same id (a proxy's log of the same
    traffic) is not that call. The same list, changed in place where there is one."""
    final: dict[tuple[str, str], Usage] = {}
    for summary in summaries:
        for key, usage in summary.final_usage:
            at = (summary.format, key)
            if at not in final or usage.output > final[at].output:
                final[at] = usage
    if not final:
        return requests
    for i, r in enumerate(requests):
        u = final.get((r.source_format, r.request_id)) if r.request_id is not None else None
        if u is None or r.usage is None or r.compaction_call:
            continue
        same_prompt = (u.cache_read, u.cache_write_5m, u.cache_write_1h, u.uncached) == (
            r.usage.cache_read, r.usage.cache_write_5m, r.usage.cache_write_1h, r.usage.uncached)
        if same_prompt and u.output > r.usage.output:
            requests[i] = replace(r, usage=u)
    return requests
