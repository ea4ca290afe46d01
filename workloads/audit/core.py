"""The audit: every request of every lane predicted, every miss explained and priced.

:func:`run_audit` reads the logs (:mod:`prefixbench.workloads.logs.formats`), replays every request in send order
through the provider's cache model (the byte-level models of :mod:`prefixbench.simulator` when
the log has request bodies, the chain model :mod:`prefixbench.simulator.chain` when it does not;
the clock is the log's timestamps), decides a cause for each miss (:mod:`.causes`) and prices
everything from the dated price table. The result (:class:`AuditResult`) is plain data: the
writers in ``reports/`` and anything built on the audit read it and never recompute.

Data model (stable; fields are only added):

* :class:`AuditRow` one request: reported vs predicted read / write / uncached, the read it
  *should* have been (``expected_cache_read``), the tokens lost against it, cause, evidence,
  detail, dollars paid and lost.
* :class:`LaneSummary` one lane: sums, the prediction error, hit ratio, dollars.
* :class:`CauseSummary` one cause: requests, lost tokens, lost dollars.
* :class:`ModelSummary` one model: reported counts and dollars.
* :class:`FileCalibration` one file: how well predicted reads match reported ones.
* :class:`Totals` everything.

Definitions:

* ``expected_cache_read``: for a request that continues its lane, what the previous request
  left cached (Anthropic: its read + write; OpenAI / DeepSeek: its prompt rounded down to 128
  tokens, nothing below 1,024 on OpenAI), capped at this request's prompt; for the
  first request of a lane, the same against the call of another lane its prompt extends (a
  Codex subagent's parent at the spawn, a fork's source at the fork point, a Claude Code fork
  subagent's spawning call:
  :func:`chain_origins`), else the shared head when an earlier request had sent it, else 0.
* ``lost_tokens = max(0, expected - reported read)`` (None where the request reports no read:
  unknown, not 0): tokens paid at the write or input price that should have been reads; ``lost_usd`` is that difference in dollars.
* A request is a miss when it lost tokens, or read nothing on a cold or concurrent start.
* ``identity``: inside one chain, whether ``read(k) == read(k-1) + write(k-1)`` held (Anthropic).
"""

from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import takewhile
from typing import Protocol
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path, PurePath

import msgspec
from msgspec.structs import replace
from prefixbench.simulator.chain import BY_CONTENT, ChainCache
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.models import make_cache
from prefixbench.simulator.pricing import (
    FAST_SUFFIX,
    PRICE_TABLE_WHERE,
    PriceRow,
    cost_total,
    load_prices,
    usd_sum,
)
from prefixbench.simulator.provider import SimulatedProvider
from prefixbench.simulator.providers import UNKNOWN, chain_rules, rules_for
from prefixbench.simulator.providers.base import ProviderRules
from prefixbench.simulator.providers.hosts import host_model, host_price_file, named_host, third_party_host
from prefixbench.simulator.providers.vllm import OLLAMA_COM, ollama_cloud, own_host
from prefixbench.simulator.wire import Request
from prefixbench.workloads.audit.causes import CAUSES, NO_MISS, verdict
from prefixbench.workloads.audit import explicit, grid
from prefixbench.workloads.audit.explicit import ExplicitCacheRow
from prefixbench.workloads.audit.losses import LossSplit, Recommendation, loss_class, split_sums
from prefixbench.workloads.audit.locate import Histories, Segment, locate
from prefixbench.simulator.price_lookup import Prices
from prefixbench.workloads.audit.precedence import (
    READ_TOLERANCE,
    WARM_LEVEL_TOLERANCE,
    Evidence,
    Later,
    Prediction,
    Previous,
    duration,
    find_cause,
    out_of_order,
    relay_takes_misses,
    ttl_ms,
)
from prefixbench.workloads.audit.reading import (
    Book, FileMap, FileRead, NotedContext, answers_first, read_holds, read_in_parallel, take_read,
)
from prefixbench.workloads.audit.shares import loss_parts
from prefixbench.workloads.logs import endpoints
from prefixbench.workloads.logs.bodydiff import body_diff
from prefixbench.workloads.logs.formats import detect_format, import_file, no_records, resolve
from prefixbench.workloads.logs.formats.base import LogFormat
from prefixbench.workloads.logs.formats.common import in_own_lane
from prefixbench.workloads.logs.formats import gemini_cli
from prefixbench.workloads.logs.claude_layout import RUN_JOURNAL_WHY, project_folder
from prefixbench.workloads.logs.formats.gateway_usage import gateway_of_id
from prefixbench.workloads.logs.records import ProgressFn
from prefixbench.workloads.logs.sources import (COPY_OF, EMPTY_EXPORT, GEMINI_KEYCHAIN, GEMINI_KEYCHAIN_WHY, HEADLESS, RUN_JOURNAL, UNREADABLE,
                                                find_log_files, is_unreadable)
from prefixbench.simulator.usage import Usage, plain_usage
from prefixbench.workloads.logs.trace import NO_MODEL, SENT_UNCOUNTED, UNNAMED_RELAY, FileSummary, PLAIN_TYPES, Prefix, ReplayedToReasoning, TraceRequest, link_call_parents, plain, take_final_usage, whole



class AuditRow(msgspec.Struct, frozen=True, gc=False):
    """One request, predicted and explained (see the module doc for the definitions).

    ``gc=False``: scalars only, so no cycle; an audit keeps one a request (16 bytes less each)."""

    file: str
    lane: str
    lane_kind: str
    #: Position of the request in its lane (0-based, file order).
    index: int
    line: int
    timestamp: str | None
    provider: str
    model: str
    reported_cache_read: int | None
    #: None where the request's usage gives no write count (:func:`writes_reported`: an
    #: OpenAI-shaped usage's 0), as ``reported_cache_read`` is where it has no cache field.
    reported_cache_write: int | None
    reported_cache_write_1h: int | None
    reported_uncached: int | None
    reported_output: int | None
    predicted_cache_read: int
    predicted_cache_write: int
    predicted_uncached: int
    expected_cache_read: int
    #: None where nothing tells the request's loss (:func:`loss_seen` False: its usage has no
    #: cache field, or it has no usage and no logged body, a block-hash trace's), not 0.
    lost_tokens: int | None
    #: A cause from ``CAUSES`` for a miss, None for a hit.
    cause: str | None
    #: ``diagnostic``, ``body-diff``, ``log`` or ``none`` (None for a hit).
    evidence: str | None
    detail: str
    cost_usd: Decimal | None
    lost_usd: Decimal | None
    #: ``body`` (byte-level model on the logged body), ``chain`` (chain model), ``common-head`` (the chain model, a
    #: session start raised to the head its group's earlier starts read: :func:`common_start_levels`),
    #: ``blocks`` (Mooncake).
    predicted_by: str = "chain"
    identity: bool | None = None
    #: Milliseconds since the previous request of the lane (None for the first).
    gap_ms: int | None = None
    #: When the provider's diagnostic decided the cause: what the audit infers without it, so the
    #: two can be scored against each other (None otherwise).
    inferred_cause: str | None = None
    #: The server's own miss reason as logged (Anthropic's ``cache_miss_reason``, OpenAI's
    #: ``prompt_cache_diagnostics``), whether or not it decided the cause.
    server_reason: str | None = None
    #: Of a request with a cause: ``recoverable``, ``unavoidable`` or ``unknown``
    #: (:func:`.losses.loss_class`); None for a hit.
    loss_class: str | None = None
    #: A miss in a transcript log: where its cached prefix ended on the logged history ("the
    #: cached prefix ended inside message N (role, about token T of P): excerpt"), with the likely
    #: change where the cause is a content change ("" where no history was logged).
    location: str = ""
    #: Where in the line's record the request is, when one record holds several
    #: (:attr:`~prefixbench.workloads.logs.trace.TraceRequest.path`): ``messages[7]``; "" otherwise.
    path: str = ""
    #: Where a second cause accounts for part of the loss on its own (a compaction after an
    #: expired head, :class:`~.precedence.Finding`'s ``also``): that cause, its loss class, and its
    #: part of ``lost_tokens`` and ``lost_usd`` (the row's ``cause`` has the rest); the totals by
    #: cause and by class split the row's loss so. None otherwise.
    secondary_cause: str | None = None
    secondary_loss_class: str | None = None
    secondary_lost_tokens: int | None = None
    secondary_lost_usd: Decimal | None = None
    #: The service of the maker's models the request went to, where the log names one
    #: (:attr:`~prefixbench.workloads.logs.trace.TraceRequest.service`: ``Azure OpenAI deployment
    #: 'gpt-4o-mini'``, ``Vertex AI``); None where it names none (the maker's own API, as far as
    #: the log tells).
    service: str | None = None

    @property
    def read_error(self) -> float | None:
        """Relative error of the predicted read (0 when both are 0; None when only reported is 0)."""
        if self.reported_cache_read is None:
            return None
        if self.reported_cache_read == 0:
            return 0.0 if self.predicted_cache_read == 0 else None
        return (self.predicted_cache_read - self.reported_cache_read) / self.reported_cache_read

    @property
    def read_within(self) -> bool:
        """Predicted read within ``READ_TOLERANCE`` of the reported one."""
        if self.reported_cache_read is None:
            return False
        return abs(self.predicted_cache_read - self.reported_cache_read) <= READ_TOLERANCE * self.reported_cache_read


#: The order of :class:`AuditRow`'s fields that :func:`_explain` gives a row's values in (by
#: position: a row a request). A field added, moved or renamed must be placed there too.
EXPLAIN_ROW_ORDER = (
    "file", "lane", "lane_kind", "index", "line", "timestamp", "provider", "model", "reported_cache_read",
    "reported_cache_write", "reported_cache_write_1h", "reported_uncached", "reported_output", "predicted_cache_read",
    "predicted_cache_write", "predicted_uncached", "expected_cache_read", "lost_tokens", "cause", "evidence", "detail",
    "cost_usd", "lost_usd", "predicted_by", "identity", "gap_ms", "inferred_cause", "server_reason", "loss_class",
    "location", "path", "secondary_cause", "secondary_loss_class", "secondary_lost_tokens", "secondary_lost_usd", "service",
)
if AuditRow.__struct_fields__ != EXPLAIN_ROW_ORDER:
    raise ImportError("AuditRow's fields changed: place them in _explain's row and in EXPLAIN_ROW_ORDER")


class LaneSummary(msgspec.Struct, frozen=True):
    """One lane of one file."""

    file: str
    lane: str
    kind: str
    requests: int
    model: str
    #: None (shown ``-``) where no request of the lane reports it (:func:`reported_sum`).
    reported_cache_read: int | None
    reported_cache_write: int | None
    reported_uncached: int | None
    reported_output: int | None
    predicted_cache_read: int
    predicted_cache_write: int
    predicted_uncached: int
    #: Requests whose predicted read is within 3% of the reported one (None, shown ``-``, where
    #: no request of the lane reports its cache use: :func:`reported_sum`).
    read_within: int | None
    #: The reported hit ratio, or the predicted one where no request of the lane reports its
    #: cache use and its requests have no usage at all (a block-hash trace's; ``reported_cache_read``
    #: None; the tables' ``pred``), else None (shown ``-``): :func:`hit_ratio`.
    hit_ratio: float | None
    cost_usd: Decimal
    lost_usd: Decimal
    lost_tokens: int
    #: The unlogged head's size in tokens (None: the log has bodies, or nothing revealed it).
    head_tokens: int | None = None
    #: Requests in none of its dollars (as :class:`Totals` counts them): those with no usage, and
    #: those whose log sums their cache reads and writes (priced as a range only).
    unpriced_requests: int = 0
    unpriced_no_usage: int = 0
    ranged_requests: int = 0
    #: Of its unpriced requests with usage, those an engine of the user's served (Ollama, vLLM,
    #: a local host: :func:`self_hosted_where`): no vendor bills them; its *paid* cell says
    #: ``self-hosted`` where they are all its unpriced ones.
    self_hosted_requests: int = 0
    #: Requests whose loss nothing tells (:func:`loss_seen` False: no cache use reported, no
    #: prediction from a logged body): its ``lost_usd`` sums the others' only, and is unknown
    #: (``-``, null in JSON) where that is all of them.
    unseen_requests: int = 0


class ModelSummary(msgspec.Struct, frozen=True):
    """One model over the whole audit (reported counts, dollars)."""

    provider: str
    model: str
    requests: int
    #: None (shown ``-``) where no request of the model reports it (:func:`reported_sum`).
    input: int | None
    output: int | None
    cache_read: int | None
    cache_write: int | None
    cost_usd: Decimal
    lost_usd: Decimal
    #: Whether the price table has a row for the model (else its dollars are 0 and a note says
    #: so); a model it prices may still have requests in no dollar figure (``unpriced_requests``:
    #: with no usage to price, or priced as a range only).
    priced: bool = True
    unpriced_requests: int = 0
    unpriced_no_usage: int = 0
    ranged_requests: int = 0
    #: Of its unpriced requests with usage, those an engine of the user's served (Ollama, vLLM,
    #: a local host: :func:`self_hosted_where`): no vendor bills them; its *paid* cell says
    #: ``self-hosted`` where they are all its unpriced ones.
    self_hosted_requests: int = 0
    #: Requests whose loss nothing tells (:func:`loss_seen` False: no cache use reported, no
    #: prediction from a logged body): its ``lost_usd`` sums the others' only, and is unknown
    #: (``-``, null in JSON) where that is all of them.
    unseen_requests: int = 0
    #: The service of the maker's models its requests went to, where the log names one
    #: (:func:`model_service`); None where none of them names one.
    service: str | None = None


class CauseSummary(msgspec.Struct, frozen=True):
    """One cause over the whole audit."""

    cause: str
    requests: int
    lost_tokens: int
    lost_usd: Decimal
    #: Of its misses, those that lost tokens no dollar figure holds (no price, a range only),
    #: and of the misses whose loss it shares, those whose part no dollar figure holds.
    unpriced_requests: int = 0
    #: Misses another cause leads whose loss this one shares (:attr:`AuditRow.secondary_cause`):
    #: not in ``requests``; their part is in ``lost_tokens`` and ``lost_usd``.
    shared_requests: int = 0


class FileCalibration(msgspec.Struct, frozen=True):
    """How well the model's reads match the reported ones in one file."""

    file: str
    format: str
    requests: int
    read_within: int
    #: Mean absolute relative error of the read over requests with a reported read > 0.
    mean_abs_read_error: float | None
    #: Log records the importer read but did not count as requests (no usage, a synthetic
    #: message, an HTTP error, a repeated or replayed Codex token_count, a request another file
    #: already counted); not in ``requests``.
    skipped: int
    notes: tuple[str, ...]
    cost_usd: Decimal
    lost_usd: Decimal
    #: Why the ``skipped`` records were not counted as requests: (reason, records), most first.
    skip_reasons: tuple[tuple[str, int], ...] = ()
    #: Requests in none of its dollars (as :class:`Totals` counts them).
    unpriced_requests: int = 0
    unpriced_no_usage: int = 0
    ranged_requests: int = 0
    #: Of its unpriced requests with usage, those an engine of the user's served (Ollama, vLLM,
    #: a local host: :func:`self_hosted_where`): no vendor bills them; its *paid* cell says
    #: ``self-hosted`` where they are all its unpriced ones.
    self_hosted_requests: int = 0
    #: Requests whose loss nothing tells (:func:`loss_seen` False: no cache use reported, no
    #: prediction from a logged body): its ``lost_usd`` sums the others' only, and is unknown
    #: (``-``, null in JSON) where that is all of them.
    unseen_requests: int = 0
    #: The file's own prompt and reply lengths summed, where it gives them for every request and
    #: reports no usage (:attr:`FileSummary.lengths`): the JSON's ``logged_prompt_tokens`` and
    #: ``logged_output_tokens`` (null where it gives none).
    lengths: tuple[int, int] | None = None

    @property
    def logged_prompt_tokens(self) -> int | None:
        """The prompt tokens the file's own lengths sum to (a block-hash trace's ``in``), or None."""
        return None if self.lengths is None else self.lengths[0]

    @property
    def logged_output_tokens(self) -> int | None:
        """The output tokens the file's own lengths sum to (a block-hash trace's ``out``), or None."""
        return None if self.lengths is None else self.lengths[1]


class Totals(msgspec.Struct, frozen=True):
    """Everything, summed (``input`` = uncached input, as invoices show it).

    ``input`` and ``output`` are None (shown ``-``, null in JSON) when no request reports its
    uncached input, and the cache counts when none reports its cache use (a block-hash trace
    alone): the rule of every group, :func:`reported_sum`. The write counts are None too when no
    request gives a write count (:func:`writes_reported`: an OpenAI-shaped usage has none, its 0
    is no figure, unless it logs a write, where an Anthropic-shaped one always does); where some
    do, they sum those requests' writes only, as every group's do."""

    requests: int
    input: int | None
    output: int | None
    cache_read: int | None
    cache_write: int | None
    cache_write_1h: int | None
    cost_usd: Decimal
    lost_usd: Decimal
    #: As a roll-up's (:func:`hit_ratio`): None where nothing reports its cache use or is traced.
    hit_ratio: float | None
    #: Explicit caches the logs created (:mod:`.explicit`), in ``cost_usd`` and in no request:
    #: their tokens at the input price, and their storage (None: caches were created and none of
    #: them has the figure: a model with no price row, a log that does not show how long it was kept).
    cache_create_usd: Decimal | None = Decimal(0)
    storage_usd: Decimal | None = Decimal(0)
    #: Requests in no dollar figure: with usage of a model the price table does not price, or
    #: with no usage and no body to price them from (a block-hash trace, a trajectory).
    unpriced_requests: int = 0
    #: Of those, the requests with no usage (a block-hash trace's, a trajectory's): no price
    #: would have priced them; the rest have usage of a model the price table does not price.
    unpriced_no_usage: int = 0
    #: Of those, the requests whose log sums their cache reads and writes (``Usage.cache_unsplit``):
    #: priced as a range only, from all read (``low``) to all written (``high``).
    ranged_requests: int = 0
    ranged_low_usd: Decimal = Decimal(0)
    ranged_high_usd: Decimal = Decimal(0)
    #: Requests whose loss nothing tells (:func:`loss_seen` False: no cache use reported, no
    #: prediction from a logged body): its ``lost_usd`` sums the others' only, and is unknown
    #: (``-``, null in JSON) where that is all of them.
    unseen_requests: int = 0
    #: The prompt and output tokens the files' own lengths give (:attr:`FileCalibration.lengths`,
    #: a block-hash trace's ``in`` and ``out``), summed where every file with requests gives them
    #: (the headline's ``prompts N tokens and output M``); None where any gives none.
    logged_prompt_tokens: int | None = None
    logged_output_tokens: int | None = None


class RollUp(msgspec.Struct, frozen=True):
    """The requests of one session (the agent's session: its log file, or its files where the
    agent writes it as several, as Claude Code writes a session's subagents and compaction agents
    apart from its main transcript, :attr:`FileSummary.session`) or of one UTC day, summed; a
    session's ``key`` is its file (its main transcript's, ``main_absent`` where that file is not
    among those read). ``first`` and ``last`` are the earliest and latest request times (None
    when no request of it has a timestamp); ``top_cause`` is the cause that lost the most there.

    ``rewrite_factor``: the tokens paid at the write or the full input price (written + uncached)
    over the context there was to pay for once (the sum of each lane's largest prompt): 1.0x when
    every lane wrote its context once and read it after; 2.0x when it was written twice (an
    expiry, a changed prefix). None when no request of it reports its cache use.

    ``misses``, ``cache_read`` and ``cache_write`` are None (shown ``-``) when no request of it
    reports its cache use (a block-hash trace), ``cache_write`` too when none gives a write count
    (:func:`writes_reported`), and ``input`` when none reports its uncached tokens: the log says
    nothing of them, so a 0 would claim what it never showed."""

    key: str
    first: str | None
    last: str | None
    requests: int
    lanes: int
    misses: int | None
    input: int | None
    cache_read: int | None
    cache_write: int | None
    #: Reported, predicted (``cache_read`` None) or None: :func:`hit_ratio`.
    hit_ratio: float | None
    cost_usd: Decimal
    lost_usd: Decimal
    lost_tokens: int
    top_cause: str | None
    rewrite_factor: float | None = None
    #: Requests in none of its dollars (as :class:`Totals` counts them): with no usage
    #: (``unpriced_no_usage``), priced as a range only (``ranged_requests``), or of a model the
    #: price table does not price (the rest).
    unpriced_requests: int = 0
    unpriced_no_usage: int = 0
    ranged_requests: int = 0
    #: Of its unpriced requests with usage, those an engine of the user's served (Ollama, vLLM,
    #: a local host: :func:`self_hosted_where`): no vendor bills them; its *paid* cell says
    #: ``self-hosted`` where they are all its unpriced ones.
    self_hosted_requests: int = 0
    #: Requests whose loss nothing tells (:func:`loss_seen` False: no cache use reported, no
    #: prediction from a logged body): its ``lost_usd`` sums the others' only, and is unknown
    #: (``-``, null in JSON) where that is all of them.
    unseen_requests: int = 0
    #: A session's: its ``key`` (its main transcript) is not among the files read, only transcripts
    #: that name it as theirs are (a Claude Code session's subagents' with no ``<session>.jsonl``).
    main_absent: bool = False


#: The day of requests with no absolute timestamp (per-day roll-up).
NO_DAY = "no timestamp"


class Agreement(msgspec.Struct, frozen=True):
    """One pair of the server's reason and the cause the audit infers without it (``no miss``
    where the audit finds none).

    ``verdict``: how the two score (:func:`~prefixbench.workloads.audit.causes.verdict`);
    ``agree``: they are consistent (True: ``agrees`` or ``names-more``), or not (False:
    ``disagrees``); None where nothing is scored (``no-miss``, ``unscored``).
    """

    server_reason: str
    audit_cause: str
    requests: int
    agree: bool | None
    verdict: str


class CompactionSummary(msgspec.Struct, frozen=True):
    """One compaction the log shows, judged: did it replay the cached prefix (warm) or not (cold)?

    ``kind``: ``call`` (the request that asked for the summary: judged against the main request
    it summarizes, whose cached prefix it could have replayed), ``after`` (the first request on a
    compacted or truncated context the log marks; the compaction call itself is not logged) or
    ``shrink`` (a prompt that fell below half of the lane's previous one with nothing logged).
    ``warm_cost_usd`` is what it would have cost warm: its cost less the dollars it lost.
    ``expected_cache_read`` (what it could have read) is None where the log does not tell it: a
    cold or unknown compaction with no cached prefix known (a cold one's ``warm_cost_usd`` then
    None too, and an ``after`` or ``shrink`` one's ``lost_usd``, which would price that unknown
    prefix as 0).
    A compaction whose request reports no cache use (its usage has no cache field, or the log
    has no usage for it) is ``unknown``: what it read is not told, so neither is whether it was
    warm, what it lost or what it would have cost warm (``lost_usd`` and ``warm_cost_usd`` None).
    """

    file: str
    lane: str
    line: int
    kind: str
    #: ``warm`` (read what was cached before it, nothing lost), ``cold``, or ``unknown`` (its
    #: cache use is not reported: nothing to judge it by).
    verdict: str
    cache_read: int | None
    expected_cache_read: int | None
    prompt: int | None
    cost_usd: Decimal | None
    lost_usd: Decimal | None
    warm_cost_usd: Decimal | None
    cause: str | None
    detail: str
    #: Its ``cache_read`` is the cache model's prediction, not a reported read (a request-body
    #: log's request with no usage): a ``call`` is judged on that prediction against what the main
    #: request left cached; an ``after`` or ``shrink`` one, whose readable prefix is the same
    #: prediction, is ``unknown``.
    predicted: bool = False


class AuditResult(msgspec.Struct, frozen=True):
    """What :func:`run_audit` returns."""

    rows: tuple[AuditRow, ...]
    lanes: tuple[LaneSummary, ...]
    causes: tuple[CauseSummary, ...]
    files: tuple[FileCalibration, ...]
    totals: Totals
    #: Facts the report must state (unlogged heads, unpriced models, price dates...).
    notes: tuple[str, ...] = ()
    models: tuple[ModelSummary, ...] = ()
    #: The server's miss reasons against the audit's own causes (logs with diagnostics only).
    agreement: tuple[Agreement, ...] = ()
    #: The lost dollars split into recoverable, unavoidable and unknown (:mod:`.losses`).
    loss_split: LossSplit | None = None
    #: What to change, best first (:func:`.advice.advise`); None: not computed.
    recommendations: tuple[Recommendation, ...] | None = None
    #: Every compaction the log shows, judged warm, cold or unknown (:class:`CompactionSummary`).
    compactions: tuple[CompactionSummary, ...] = ()
    #: Per session (the agent's: its file, or its files, :attr:`FileSummary.session`), in file
    #: order; per UTC day, in date order (:class:`RollUp`).
    sessions: tuple[RollUp, ...] = ()
    days: tuple[RollUp, ...] = ()
    #: Explicit caches the logs created, priced (:class:`.explicit.ExplicitCacheRow`).
    explicit_caches: tuple[ExplicitCacheRow, ...] = ()
    #: The requests with usage left unpriced because the host that served them bills its own
    #: price or none (:func:`host_unpriced`), as ``(model, host, requests)``: the headline gives
    #: them their own reason. Not in the JSON record (its unpriced counts are per model).
    unpriced_hosts: tuple[tuple[str, str, int], ...] = ()
    #: The requests that went through a relay the log names (:attr:`TraceRequest.relay`), as
    #: ``(provider, model, relay, requests)``: the headline and models table name the relay. Not
    #: in the JSON record (the notes say it).
    relays: tuple[tuple[str, str, str, int], ...] = ()
    #: The requests that went to a service of the maker's models the log names
    #: (:attr:`TraceRequest.service`: Azure OpenAI), as ``(provider, model, service, requests)``:
    #: the headline and models table name the service. Not in the JSON record (the notes say it).
    services: tuple[tuple[str, str, str, int], ...] = ()
    #: The lanes of gateway calls naming no session, each alone (``(file, lane)``): the lanes
    #: tables fold them into one row a file (:func:`fold_sessionless`). Not in the JSON record.
    sessionless_lanes: frozenset[tuple[str, str]] = frozenset()
    #: The session of each file that is part of another's (:attr:`FileSummary.session`: a Claude
    #: Code subagent's or compaction agent's transcript, its session's main transcript, the key of
    #: its roll-up in ``sessions``), so a count of sessions counts them as ``sessions`` does. In the
    #: JSON record as each such file's ``session`` (:data:`~prefixbench.workloads.audit.schema.FILE_SESSION_FIELD`).
    session_of: dict[str, str] = {}


#: What a miss's detail adds where its provider is unknown (no rules: a reseller's relay).
UNKNOWN_CACHING = ("the provider is unknown (a relay or a server prefixbench has no rules for): its caching (whether it "
                   "caches, its TTL, its minimum) is not known, so this cause is read under default rules")


def sessionless_lanes(requests: Sequence[TraceRequest]) -> frozenset[tuple[str, str]]:
    """The lanes of gateway calls naming no session, ``(file, lane)``: read by :func:`audit_requests`
    before the requests' ids are dropped (:func:`drop_request_ids`), which tell them."""
    return frozenset((r.file, r.lane) for r in requests if in_own_lane(r.source_format, r.lane, r.request_id, r.line))


def fold_sessionless(lanes: Sequence[LaneSummary], alone: frozenset[tuple[str, str]]) -> list[LaneSummary]:
    """``lanes`` with each file's lanes in ``alone`` summed into one row, ``sessionless calls (N)``,
    where the first of them stood (they stay separate lanes for the cache replay and the JSON).
    Its hit ratio is its reported read over its reported read, write and uncached tokens (the
    predicted ones where none of them reports)."""
    groups: dict[str, list[LaneSummary]] = defaultdict(list)
    for lane in lanes:
        if (lane.file, lane.lane) in alone:
            groups[lane.file].append(lane)
    out: list[LaneSummary] = []
    for lane in lanes:
        group = groups.get(lane.file) if (lane.file, lane.lane) in alone else None
        if group is None:
            out.append(lane)
        elif group[0] is lane:
            out.append(lane if len(group) == 1 else _folded(group))
    return out


def _folded(group: list[LaneSummary]) -> LaneSummary:
    def summed(name: str) -> int | None:
        values = [getattr(lane, name) for lane in group if getattr(lane, name) is not None]
        return sum(values) if values else None

    reporting = [lane for lane in group if lane.reported_cache_read is not None]
    if reporting:
        read = sum(lane.reported_cache_read or 0 for lane in reporting)
        prompt = read + sum((lane.reported_cache_write or 0) + (lane.reported_uncached or 0) for lane in reporting)
    else:
        read = sum(lane.predicted_cache_read for lane in group)
        prompt = read + sum(lane.predicted_cache_write + lane.predicted_uncached for lane in group)
    first = group[0]
    return replace(
        first,
        lane=f"sessionless calls ({len(group)})",
        requests=sum(lane.requests for lane in group),
        model=",".join(sorted({m for lane in group for m in lane.model.split(",")})),
        reported_cache_read=summed("reported_cache_read"),
        reported_cache_write=summed("reported_cache_write"),
        reported_uncached=summed("reported_uncached"),
        reported_output=summed("reported_output"),
        predicted_cache_read=sum(lane.predicted_cache_read for lane in group),
        predicted_cache_write=sum(lane.predicted_cache_write for lane in group),
        predicted_uncached=sum(lane.predicted_uncached for lane in group),
        read_within=summed("read_within"),
        hit_ratio=None if all(lane.hit_ratio is None for lane in group) or not prompt else read / prompt,
        cost_usd=usd_sum(lane.cost_usd for lane in group),
        lost_usd=usd_sum(lane.lost_usd for lane in group),
        lost_tokens=sum(lane.lost_tokens for lane in group),
        head_tokens=None,
        unpriced_requests=sum(lane.unpriced_requests for lane in group),
        unpriced_no_usage=sum(lane.unpriced_no_usage for lane in group),
        unseen_requests=sum(lane.unseen_requests for lane in group),
        ranged_requests=sum(lane.ranged_requests for lane in group),
        self_hosted_requests=sum(lane.self_hosted_requests for lane in group),
    )


def _iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    if ms < 1e11:  # a relative clock (Mooncake: ms since the first request)
        return f"+{ms}ms"
    if type(ms) is int and ms < _EXACT_ISO_MS:
        # The day's text made once a day, the time of day by integer arithmetic: the same text
        # as below (see _EXACT_ISO_MS), in half the time (one a row).
        day, rest = divmod(ms, 86_400_000)
        date = _ISO_DAYS.get(day)
        if date is None:
            date = _ISO_DAYS[day] = datetime.fromtimestamp(day * 86_400, UTC).strftime("%Y-%m-%dT")
        seconds, millis = divmod(rest, 1000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return f"{date}{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"
    # isoformat cuts to milliseconds as %f[:-3] did (never rounding up), in a third less time
    # (one a row); years from 1973 (1e11 ms) on are four digits in both.
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


#: Below 2**32 seconds (the year 2106) ``ms / 1000`` is within half a microsecond of the exact
#: time (a double's step there is 2**-20 s), so the microseconds ``fromtimestamp`` rounds it to
#: are the exact ones, and the milliseconds isoformat keeps are ``ms``'s: the arithmetic above
#: says the same. Later times (a clock far off) go the way below.
_EXACT_ISO_MS = 2**32 * 1000
#: Each day's ``YYYY-MM-DDT``, by days since 1970.
_ISO_DAYS: dict[int, str] = {}


def load_trace(
    paths: Sequence[Path],
    fmt: str = "auto",
    progress: ProgressFn | None = None,
    map_files: FileMap | None = None,
    files: list[tuple[Path, str | None]] | None = None,
    notice: Callable[[str], None] | None = None,
    held: bool = False,
    unread: list[str] | None = None,
) -> tuple[list[TraceRequest], list[FileSummary]]:
    """Import every log under ``paths`` (every file is checked before anything is computed).

    ``unread`` (``audit``'s own call): a file whose reading is bad input (a line cut short in its
    middle, a record of no format audit reads) is left out instead of ending the reading, its
    error added to ``unread`` (in file order) and its summary of :data:`BAD_INPUT` saying so; the
    other files are read as if it were not there (the files read are read again without it, so
    nothing it counted before its bad line stays counted). Without it, the first such error is raised.

    ``held``: each file's requests are held as the audit holds them from the moment the file is
    read, a :class:`~prefixbench.workloads.logs.trace.PlainRequest` where they can be
    (:func:`~prefixbench.workloads.logs.trace.plain`; the usage and the id as read, which the
    steps after the reading may still change or read): the reading holds every file read so far,
    104 bytes a request less so (``audit`` reads so; a step that sets a rare field makes the
    request :func:`~prefixbench.workloads.logs.trace.whole` first).

    ``map_files`` (``audit --jobs`` / ``--scheduler``) reads the files in workers first
    (:mod:`.reading`: the trace is the same as without it); ``progress`` is then told each file
    as it finishes, else the bytes read as they are read. ``files``: the walk of ``paths``
    (:func:`~prefixbench.workloads.logs.sources.find_log_files`) when the caller made it already
    (the command sizes its progress bar from it), so folders are walked and copies hashed once.

    The files are read in file order, but for one rule (:func:`~.reading.answers_first`): a
    Codex rollout holding an unmarked copy of another thread's rollout is read after that
    thread's own rollout, whatever their order, so the copy is known by the calls the source
    counted. When a file read earlier asked about a later file's calls, the files are read again
    in that order (``notice`` is told so, in a line): of them, only those whose questions to the
    files before them (:class:`~.reading.Book`) get another answer in that order are read again,
    the others' readings are kept. The requests and summaries are given in file order.
    """
    named = resolve(fmt)
    files = find_log_files(list(paths)) if files is None else files
    reads: dict[Path, FileRead] = {}
    if map_files is not None:
        todo = [path for path, skip in files if skip is None]
        reads = read_in_parallel(todo, fmt, map_files, progress, held) if len(todo) > 1 else {}
    order = owners_first(files, [index for index, (_, skip) in enumerate(files) if skip is None])
    tried = {tuple(order)}
    told = None if reads else progress  # after the workers' reads, progress has told every byte
    done: dict[int, _Done] = {}
    bad: dict[int, str] = {}
    while True:
        try:
            done = _read_in_order(files, order, named, fmt, dict(reads), told, done, held)
        except _BadFile as failed:
            if unread is None:
                raise failed.error from None
            # Read the files again without it: the files before it keep their readings (the
            # same answers), the files after it see nothing it counted.
            bad[failed.index] = str(failed.error)
            order = [index for index in order if index != failed.index]
            tried, done, told = {tuple(order)}, failed.done, None
            continue
        again = owners_first(files, answers_first(order, {k: read.asked for k, read in done.items()}, {k: read.calls for k, read in done.items()}))
        if tuple(again) in tried:
            break
        tried.add(tuple(again))
        if notice is not None:
            notice(_again_why(files, order, done))
        order, told = again, None
    reads.clear()  # the workers' reads: their keys counted are held by the files' readings no more
    requests: list[TraceRequest] = []
    summaries: list[FileSummary] = []
    for index, (path, skip) in enumerate(files):
        if skip == "read-with":
            continue  # read by the file it belongs to (an OpenCode session file reads its messages and parts)
        if index in bad:
            assert unread is not None
            unread.append(bad[index])
            summaries.append(FileSummary(str(path), BAD_INPUT, 0, (), (f"left out, bad input: {bad[index]}",)))
            continue
        if is_unreadable(skip):
            why = skip[len(UNREADABLE):]
            note = (f"skipped: a subfolder the folder walk could not read ({why}): the logs in it are not in this audit"
                    if path.is_dir()
                    else f"skipped: a log file the folder walk found and could not read ({why})")
            summaries.append(FileSummary(str(path), "unreadable", 0, (), (note,)))
            continue
        if skip is not None and skip.startswith(COPY_OF):
            original = skip[len(COPY_OF):]
            # A copy of a file left out as bad input is not counted once: it is left out with it.
            counted = ("left out with it as bad input" if any(str(files[i][0]) == original for i in bad)
                       else "counted once")
            note = f"skipped: the same bytes as {original}, {counted}"
            summaries.append(FileSummary(str(path), "copy", 0, (), (note,)))
            continue
        if skip is not None and skip.startswith(HEADLESS):
            summaries.append(FileSummary(str(path), "headless", 0, (), (f"skipped: {skip[len(HEADLESS):]}",)))
            continue
        if skip is not None and skip.startswith(EMPTY_EXPORT):
            summaries.append(FileSummary(str(path), "empty", 0, (), (f"skipped: {skip[len(EMPTY_EXPORT):]} (found by the folder walk)",)))
            continue
        if skip == RUN_JOURNAL:  # (listed as a file beside the logs, no warning: the layout's own)
            summaries.append(FileSummary(str(path), "not-a-log", 0, (), (f"skipped: {RUN_JOURNAL_WHY} (found by the folder walk)",)))
            continue
        if skip == GEMINI_KEYCHAIN:
            summaries.append(FileSummary(str(path), "not-a-log", 0, (), (f"skipped: {GEMINI_KEYCHAIN_WHY} (found by the folder walk)",)))
            continue
        if skip is not None:
            note = (
                f"skipped: {no_records(path)} (found by the folder walk)"
                if skip == "empty"
                else "skipped: found by the folder walk, and none of its first records is of a format audit reads "
                "(metadata or another tool's file beside the logs)"
            )
            summaries.append(FileSummary(str(path), skip, 0, (), (note,)))
            continue
        requests.extend(done[index].requests)
        summaries.append(done[index].summary)
    # An endpoint whose OpenAI-shaped prompt counts leave the cached part out has all its records read so.
    # A call counted from a line written mid-stream takes the final usage a later file's copy gives;
    # a lane start that names the call it extends by its id (a Claude Code fork's) names its node.
    requests = link_call_parents(take_final_usage(requests, summaries), summaries)
    # A Qwen Code runtime file read with its session is said as that session's, not pointed at it.
    summaries = gemini_cli.runtimes_with_sessions(summaries)
    return grid.settle(endpoints.settle(requests)), summaries


def _again_why(files: list[tuple[Path, str | None]], order: list[int], done: Mapping[int, _Done]) -> str:
    """The line that says why the files are read again: the first file read before a file whose
    calls it asked about (a Codex fork's unmarked copy of its source), and that file."""
    place = {index: n for n, index in enumerate(order)}
    owner: dict[str, int] = {}
    for index in sorted(order):
        for node in done[index].calls:
            owner.setdefault(node, index)
    for index in order:
        later = [owner[node] for node in done[index].asked if place.get(owner.get(node, index), -1) > place[index]]
        if later:
            fork, source = files[index][0], files[min(later, key=place.__getitem__)][0]
            return (f"reading again in another order: the Codex rollout {fork} holds an unmarked copy of calls "
                    f"of {source}, read after it; only the files that order can change are read again")
    return "reading again in another order (a Codex fork's rollout before its source's); only the files that order can change are read again"


#: The format of a file :func:`load_trace` left out, its reading bad input (``audit``'s call).
BAD_INPUT = "bad-input"


class _BadFile(Exception):
    """A file of a pass of :func:`load_trace` whose reading is bad input: its index, its error,
    and the files of the pass read before it (by index)."""

    def __init__(self, index: int, error: UserError, done: dict[int, "_Done"]) -> None:
        super().__init__(str(error))
        self.index, self.error, self.done = index, error, done


class _Done(msgspec.Struct, frozen=True):
    """One file's reading in a pass of :func:`load_trace`, with the Codex calls it counted and
    asked about (whether an earlier file counted them), which decide the next pass's order, and
    its questions to the files before it and additions for those after (its book)."""

    requests: list[TraceRequest]
    summary: FileSummary
    calls: frozenset[str]
    asked: frozenset[str]
    book: Book


#: Qwen Code's folders of one project: its sessions, and its subagents' transcripts, a folder a session
#: (QwenLM/qwen-code packages/core/src/agents/agent-transcript.ts).
QWEN_SESSIONS, QWEN_SUBAGENTS = "chats", "subagents"


def owners_first(files: Sequence[tuple[Path, str | None]], order: Sequence[int]) -> list[int]:
    """``order`` (indexes of ``files``), but a file read before the files in the folder named after
    it, two levels down at most (Claude Code 2.x: ``<session>.jsonl`` before
    ``<session>/subagents/agent-*.jsonl``): the session's own file counts the requests an
    ``agent-acompact-*`` file copies from it (2.1.81-2.1.88, the compaction agent's transcript holds
    the main conversation again), not the copy, whatever the file order. So is a Qwen Code session
    (``chats/<session>.jsonl``) before its subagents' transcripts (``subagents/<session>/agent-*.jsonl``,
    a sibling of ``chats``): the session's telemetry counts their calls with the model the
    transcripts do not name (a fork's calls came out model unknown where its transcript was read
    first, the session's telemetry skipping them as counted)."""
    owners: dict[Path, int] = {}
    for index in order:
        path = files[index][0]
        if path.suffix:
            owners[path.with_suffix("")] = index
            if path.parent.name == QWEN_SESSIONS:
                owners[path.parent.parent / QWEN_SUBAGENTS / path.stem] = index
    out: list[int] = []
    placed: set[int] = set()

    def place(index: int) -> None:
        # The farthest owner first, each owner after its own (an owner lies higher than the files
        # it owns, so this ends).
        placed.add(index)
        for folder in reversed(list(files[index][0].parents)[:3]):
            owner = owners.get(folder)
            if owner is not None and owner not in placed:
                place(owner)
        out.append(index)

    for index in order:
        if index not in placed:
            place(index)
    return out


def _read_in_order(
    files: list[tuple[Path, str | None]], order: list[int], named: LogFormat | None, fmt: str,
    reads: dict[Path, FileRead], progress: ProgressFn | None, kept: Mapping[int, _Done], held: bool = False,
) -> dict[int, _Done]:
    """The files of ``order`` (indexes into ``files``) read one after another with one context
    (a worker's read taken when the files before leave it unchanged; a previous pass's reading,
    ``kept``, when its every question gets the same answer); by index. ``held``: see :func:`load_trace`."""
    noted = NotedContext()
    ctx = noted.ctx
    done: dict[int, _Done] = {}
    offset = 0
    for index in order:
        path = files[index][0]
        read = reads.pop(path, None)
        before = kept.get(index)
        if before is not None and before.book.holds(ctx):
            before.book.replay(ctx)  # the same answers: the same reading, the same keys counted
            done[index] = before
            continue
        book = noted.begin()  # (ctx.codex_asked: this file's questions)
        try:
            if read is not None:
                if read_holds(read, ctx):
                    noted.taken(read)
                reqs, summary = take_read(path, read, fmt, ctx)
                ctx.codex_asked |= read.codex_asked
            else:
                if progress is not None:
                    base = offset
                    ctx.progress = lambda done, base=base: progress(base + done)
                    offset += path.stat().st_size
                reqs, summary = import_file(path, named or detect_format(path), ctx)
        except UserError as exc:
            raise _BadFile(index, exc, done) from None
        noted.end()
        if held:
            reqs = [plain(r, usage=False) for r in reqs]
        calls = frozenset(r.prefix.node for r in reqs if r.prefix is not None and r.source_format == "codex")
        done[index] = _Done(reqs, summary, calls, frozenset(ctx.codex_asked), book)
    return done


class Heads(dict[str, int | None]):
    """The unlogged head's size per head key, and the heads the account keeps warm."""

    def __init__(self, sizes: Mapping[str, int | None] = {}, warm: Mapping[str, int] = {}) -> None:
        super().__init__(sizes)
        #: Head key -> how many cold points (lane starts, reads after a TTL expiry) read exactly it.
        self.warm: dict[str, int] = dict(warm)
        #: Head key -> how many reads inside the TTL fell back to exactly it (counted in ``warm``).
        self.falls: dict[str, int] = {}
        #: Request -> how the byte-level model's tokens of its body map to the provider's, learned
        #: from the logged bodies and their reported prompts by the first prediction of each, and
        #: kept for re-simulations that change a body (what-if), which have no report.
        self.token_scales: dict[Key, TokenScale] = {}
        #: Lane -> the byte-level model's and the provider's count of its last logged body seen.
        self.last_sizes: dict[tuple[str, str], tuple[int, int]] = {}
        #: Heads kept warm because ``--codex-warm-head`` said so (in ``warm`` with 0 cold points).
        self.assumed: frozenset[str] = frozenset()
        #: Head key -> the reads two or more of its cold points agree on, each ``(tokens, cold
        #: points)``, smallest first: prefixes kept warm by traffic the log does not show (see
        #: :func:`warm_levels`).
        self.levels: dict[str, tuple[tuple[int, int], ...]] = {}
        #: Head key -> lane starts that read it, of a head not in ``warm`` (a cold point read 0, or
        #: none agreed on the smallest read) whose lane starts agree on one level more than on any
        #: other: the account keeps it warm for a session's first call (see :func:`head_sizes`).
        self.start_warm: dict[str, int] = {}
        #: Head key -> the largest read of its lane starts, for a head of no size because another lane
        #: start reported nothing it could have cached (read and wrote nothing): the head fits in none.
        self.capped: dict[str, int] = {}
        #: Request -> the read the main lanes' first bodies of its model agree on, for each such
        #: first body of a provider whose rules say ``body_starts_read_warm_level`` (see
        #: :func:`body_start_levels`): the least it is predicted to read.
        self.body_starts: dict[Key, int] = {}
        #: Request -> the read the earlier main lanes' first requests of its model, folder and day
        #: agree on and how many of them read it, for each such first request from the third on,
        #: of a provider whose rules say ``third_starts_read_common_head`` (see
        #: :func:`common_start_levels`): the least it is predicted to read.
        self.common_starts: dict[Key, tuple[int, int]] = {}


#: Model tokens short of the previous prompt's end a read may stop and still extend it (a
#: chat template's closing tokens, which the next prompt renders otherwise).
EXTENDS_WITHIN = 64


class TokenScale(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """The provider's tokens at a place in a body, from the byte-level model's count there.

    Two pieces: up to the end of the lane's previous logged prompt (``at`` model tokens, ``base``
    provider tokens, both reported), and past it to this prompt's end, each at its own density.
    A read that stops at the previous prompt's end is then counted as that prompt was reported.
    """

    at: int
    base: int
    above: float

    def tokens(self, model_tokens: int) -> int:
        if model_tokens <= self.at:  # (at 0: nothing before this prompt, one density)
            return round(model_tokens * self.base / self.at) if self.at else 0
        return self.base + round((model_tokens - self.at) * self.above)

    @classmethod
    def learn(cls, previous: tuple[int, int] | None, prompt: int, reported: int, read: int, step: int = 1) -> TokenScale:
        """From this body's count (``prompt`` model tokens, ``reported`` provider tokens) and the
        lane's previous logged body's, where this one extends it (``read``, the model tokens this
        body read, in whole steps of ``step``, reach within ``EXTENDS_WITHIN`` or a step of its end; a
        compaction's does not)."""
        if (previous is not None and 0 < previous[0] <= prompt and 0 < previous[1] <= reported
                and read >= previous[0] - max(EXTENDS_WITHIN, step)):
            at, base = previous
            return cls(at, base, (reported - base) / (prompt - at) if prompt > at else 0.0)
        return cls(0, 0, reported / prompt)


#: Cold points reading the same smallest amount (within this share) show a head kept warm.
WARM_TOLERANCE = 0.01


def head_sizes(requests: Sequence[TraceRequest]) -> Heads:
    """The unlogged head's size per head key, inferred from reported usage.

    A chain start (a lane's first request, or the first after a compaction) can only read what
    another prompt shared with it: the head. The largest read on a chain start is the head's
    size, capped at the smallest cacheable prompt of any chain start (the head fits in each);
    None when no chain start read anything.

    One account keeps its system + tools prefix warm across sessions (other sessions, other
    machines, not all in the logs). Where two or more *cold points* (chain starts but a
    compaction's inside the TTL, and requests more than the TTL after their lane's previous one)
    read the same smallest amount and no cold
    point read 0, that amount is the head, and it is warm: the cache model reads it at every cold
    point instead of letting it expire (a session's first request included). A read inside the
    TTL that fell from its lane's previous read to exactly that amount (the provider lost the
    conversation's entry but not the head: Codex on OpenAI, 2026) agrees as a cold point does.
    On a provider whose rules say ``warm_head_most_read`` (OpenAI), a longer warm level
    (:func:`warm_levels`) that more cold points read than the smallest (falls not counted) is the
    head instead: neither level outlived the other there; and there a few cold points that read 0
    do not undo the level most of them read, where more read it than read 0 (best effort). On other
    providers such a longer level is the head only where it outlived the smallest: one of its cold
    points came after a longer idle than any of the smallest's (github.com/JanDeDobbeleer/oh-my-posh's
    Claude Code 2.1.205 sessions: 24,962 tokens at nine lane starts and after 84 to 299 min idle,
    22,291 at one lane start).
    """
    best: dict[str, int] = {}
    cap: dict[str, int] = {}
    #: Head key -> whether its provider predicts the warm level most cold points read.
    most_read: dict[str, bool] = {}
    for r in requests:
        if r.prefix is None or r.usage is None or r.prefix.parent is not None or r.explicit_cache is not None:
            continue  # (a read from a named explicit cache is the client's cache, not the head)
        head = r.prefix.head
        rules = rules_for(r.provider)
        cacheable = rules.cacheable(r.usage)
        most_read[head] = rules.warm_head_most_read
        best[head] = max(best.get(head, 0), r.usage.cache_read)
        cap[head] = min(cap.get(head, cacheable), cacheable)
    sizes: dict[str, int | None] = {head: (min(size, cap[head]) or None) for head, size in best.items()}
    warm: dict[str, int] = {}
    falls: dict[str, int] = {}
    cold, fell, idles = _cold_reads(requests)
    for head, reads in cold.items():
        if head not in cap:
            continue
        if min(reads) == 0:
            # Best effort (OpenAI): a cold point that read nothing does not undo a level more of
            # them read (ISO-Bench's Trae runs: 132 of 149 first calls read 6,400, 15 read 0).
            top = _most_read(warm_levels(reads)) if most_read.get(head) else None
            if top is not None and top[1] > reads.count(0) and top[0] <= cap[head]:
                sizes[head], warm[head] = top
            continue
        low = min(reads)
        fallen = sum(read == low for read in fell.get(head, ()))
        agreeing = sum(read <= low * (1 + WARM_TOLERANCE) for read in reads) + fallen
        if agreeing >= 2 and low <= cap[head]:
            sizes[head], warm[head] = low, agreeing
            if fallen:
                falls[head] = fallen
            # A longer level more cold points read than the smallest (cold points only: a fall
            # inside the TTL shows the smallest kept, not what a cold point finds); elsewhere only
            # where it outlived the smallest, read after a longer idle than any read of the smallest.
            top = _most_read(warm_levels(reads)) or (low, 0)
            if (top[0] > low * (1 + WARM_TOLERANCE) and top[1] > agreeing - fallen and top[0] <= cap[head]
                    and (most_read.get(head) or _longest_idle(reads, idles[head], top[0]) > _longest_idle(reads, idles[head], low))):
                sizes[head], warm[head] = top
                falls.pop(head, None)
    assumed: dict[str, int] = {}
    for r in requests:
        # A head the user says is warm (--codex-warm-head), where the log's reads show none.
        if r.warm_head and r.prefix is not None and r.prefix.head not in warm:
            assumed[r.prefix.head] = r.warm_head
    for head, size in assumed.items():
        sizes[head], warm[head] = size, 0
    start_warm: dict[str, int] = {}
    for head, reads in _lane_start_reads(requests).items():
        # Sessions' first calls agreeing on a level more than on any other read what the account
        # kept warm, though a read after a long idle found nothing (github.com/marot/spotter's
        # Claude Code 2.1.39 sessions: four of five read 17,842 tokens on three days, one 11,442;
        # one read 0 after 19 min and 4 h idle): that level is read at lane starts, not after an
        # expiry. Only where that level is the head's smallest cacheable prompt or less.
        if head in warm or head not in cap:
            continue
        top = _most_read(warm_levels(reads))
        rivals = [count for level, count in _levels_of(reads) if top is not None and level != top[0]]
        if top is not None and top[0] <= cap[head] and all(count < top[1] for count in rivals):
            sizes[head], start_warm[head] = top
    heads = Heads(sizes, warm)
    heads.start_warm = start_warm
    heads.body_starts = body_start_levels(requests)
    heads.common_starts = common_start_levels(requests)
    heads.falls = falls
    heads.assumed = frozenset(assumed)
    heads.levels = {head: found for head, reads in cold.items() if head in cap and (found := warm_levels(reads))}
    heads.capped = {head: best[head] for head, size in sizes.items() if size is None and best.get(head, 0) > 0}
    return heads


def warm_levels(reads: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """The non-zero reads two or more cold points agree on (within ``WARM_LEVEL_TOLERANCE`` of the
    smallest of each run), as ``(tokens, cold points)``, smallest first.

    A cold point can only read what traffic outside its lane kept warm. Claude Code sessions show
    two such levels (github.com/thomasahle/trace-taxi: 12,249 tokens, system and tools, after idles
    of 27 min and 1h31m; 17,482, that and the project's first message, at the lane start and after
    5m22s and 13m15s): the smallest is the warm head :func:`head_sizes` predicts (on OpenAI the
    one most cold points read: see there), the others are not predicted (when that other traffic
    ran is not in the log) but name the cause of a read that stops at one after an idle past the
    TTL (``ttl-expired``, not a changed message).
    """
    return tuple(level for level in _levels_of(reads) if level[1] >= 2)


def _most_read(levels: Sequence[tuple[int, int]]) -> tuple[int, int] | None:
    """Of ``(tokens, reads)`` levels, the one the most reads agree on (a tie: the smallest)."""
    return max(levels, key=lambda level: (level[1], -level[0]), default=None)


def _levels_of(reads: Sequence[int]) -> list[tuple[int, int]]:
    """The non-zero reads in runs within ``WARM_LEVEL_TOLERANCE`` of each run's smallest, as
    ``(tokens, reads)``, smallest first (a run of one included)."""
    found: list[tuple[int, int]] = []
    for read in sorted(r for r in reads if r > 0):
        if found and read <= found[-1][0] * (1 + WARM_LEVEL_TOLERANCE):
            found[-1] = (found[-1][0], found[-1][1] + 1)
        else:
            found.append((read, 1))
    return found


def _lane_start_reads(requests: Sequence[TraceRequest]) -> dict[str, list[int]]:
    """Per head key of a provider whose lane starts read a level they agree on
    (:attr:`~prefixbench.simulator.providers.base.ProviderRules.lane_starts_read_warm_level`): the
    reads of the first request of each main lane (a session's: subagents started together read
    what their session's other subagents just wrote, not what the account kept warm)."""
    # (each lane's first request found in one pass, not by sorting every request: a sorted copy
    # and a key a request raised the reading's peak by ~65 bytes a request, test_audit_memory)
    first: dict[tuple[str, str], TraceRequest] = {}
    for r in requests:
        known = first.get(lane := (r.file, r.lane))
        if known is None or r.seq < known.seq:
            first[lane] = r
    found: dict[str, list[int]] = {}
    for _, r in sorted(first.items(), key=lambda item: item[0]):
        if (r.lane_kind != "main" or r.prefix is None or r.usage is None or not r.usage.cache_reported or r.explicit_cache is not None
                or r.prefix.parent is not None or not rules_for(r.provider).lane_starts_read_warm_level):
            continue
        found.setdefault(r.prefix.head, []).append(r.usage.cache_read)
    return found


def body_start_levels(requests: Sequence[TraceRequest]) -> dict[Key, int]:
    """Per first request of a main lane logged with its body, of a provider whose rules say
    ``body_starts_read_warm_level``: the read the first bodies of its model (and provider) agree
    on, where more of them read that level (within ``WARM_LEVEL_TOLERANCE``) than read 0 or any
    other level, and two or more do (the account kept a head warm that the bodies leave out)."""
    first: dict[tuple[str, str], TraceRequest] = {}
    for r in requests:
        known = first.get(lane := (r.file, r.lane))
        if known is None or r.seq < known.seq:
            first[lane] = r
    groups: dict[tuple[str, str], list[TraceRequest]] = {}
    for _, r in sorted(first.items(), key=lambda item: item[0]):
        if (r.body is None or r.lane_kind != "main" or r.usage is None or not r.usage.cache_reported
                or r.explicit_cache is not None or not rules_for(r.provider).body_starts_read_warm_level):
            continue
        groups.setdefault((r.provider, r.model), []).append(r)
    found: dict[Key, int] = {}
    for starts in groups.values():
        reads = [r.usage.cache_read for r in starts if r.usage is not None]
        top = _most_read(warm_levels(reads))
        if top is None or reads.count(0) >= top[1] or any(count >= top[1] for level, count in _levels_of(reads) if level != top[0]):
            continue
        found.update({(r.file, r.lane, r.seq): top[0] for r in starts})
    return found


def common_start_levels(requests: Sequence[TraceRequest]) -> dict[Key, tuple[int, int]]:
    """Per first request of a main lane with no body, of a provider whose rules say
    ``third_starts_read_common_head``, from the third such request of its model (and provider) in
    its file's folder on one UTC day (sent order; the day the agent's prompt dates is the user's
    local one, which the UTC day only approximates): the non-zero read two or more of the group's
    first requests sent before it agree on (within ``WARM_LEVEL_TOLERANCE``), more of them than
    read 0 or agree on any other read, with how many read it. Its own read and later ones are not
    looked at: they are what is predicted. Earlier sessions that send the head and part after it
    store it as a common prefix; later ones read it (DeepSeek's cache guide: ``A+B`` then ``A+C``
    stores ``A``)."""
    first: dict[tuple[str, str], TraceRequest] = {}
    for r in requests:
        known = first.get(lane := (r.file, r.lane))
        if known is None or r.seq < known.seq:
            first[lane] = r
    groups: dict[tuple[str, str, str, str], list[TraceRequest]] = {}
    for _, r in sorted(first.items(), key=lambda item: item[0]):
        if (r.body is not None or r.lane_kind != "main" or r.prefix is None or r.prefix.parent is not None or r.usage is None
                or not r.usage.cache_reported or r.explicit_cache is not None or r.sent_ms is None
                or not rules_for(r.provider).third_starts_read_common_head):
            continue
        day = datetime.fromtimestamp(r.sent_ms / 1000, UTC).date().isoformat()
        groups.setdefault((r.provider, r.model, str(PurePath(r.file).parent), day), []).append(r)
    found: dict[Key, tuple[int, int]] = {}
    for starts in groups.values():
        ordered = sorted(starts, key=lambda r: (r.sent_ms or 0, r.file, r.lane, r.seq))
        for at in range(2, len(ordered)):
            # (each call's level from the first calls sent before it only: its own read and later
            # ones would grade the prediction by what it is to predict)
            level = _agreed_level([r.usage.cache_read for r in ordered[:at] if r.usage is not None])
            if level is not None:
                r = ordered[at]
                found[(r.file, r.lane, r.seq)] = level
    return found


def _agreed_level(reads: Sequence[int]) -> tuple[int, int] | None:
    """The non-zero read two or more of ``reads`` agree on (within ``WARM_LEVEL_TOLERANCE``), more
    of them than read 0 or agree on any other read, and how many read it (None: no such read)."""
    top = _most_read(warm_levels(reads))
    if top is None or reads.count(0) >= top[1] or any(count >= top[1] for level, count in _levels_of(reads) if level != top[0]):
        return None
    return top


def _longest_idle(reads: Sequence[int], idles: Sequence[int], level: int) -> int:
    """Of the cold points whose read is at ``level`` (within ``WARM_LEVEL_TOLERANCE``), the longest
    idle before one (0: lane starts only)."""
    return max((idle for read, idle in zip(reads, idles) if level <= read <= level * (1 + WARM_LEVEL_TOLERANCE)), default=0)


def _cold_reads(requests: Sequence[TraceRequest]) -> tuple[dict[str, list[int]], dict[str, list[int]], dict[str, list[int]]]:
    """Per head key: the reads of its cold points (chain starts, requests past their lane's TTL),
    the reads of the other requests that fell below their lane's previous read, and, beside each
    cold point's read, the milliseconds since its lane's previous request (0 at a chain start)."""
    found: dict[str, list[int]] = {}
    fell: dict[str, list[int]] = {}
    idles: dict[str, list[int]] = {}
    last: dict[tuple[str, str], TraceRequest] = {}
    for r in sorted(requests, key=lambda r: (r.file, r.lane, r.seq)):
        previous = last.get((r.file, r.lane))
        last[(r.file, r.lane)] = r
        if r.prefix is None or r.usage is None or not r.usage.cache_reported or r.explicit_cache is not None:
            continue
        # A compaction's new chain inside the TTL reads a head its own lane kept warm: no cold point.
        start = r.prefix.parent is None and (previous is None or all(kind != "compaction" for kind, _ in r.events))
        expired = (
            previous is not None and r.sent_ms is not None and previous.sent_ms is not None
            and r.sent_ms - previous.sent_ms > ttl_ms(previous)
        )
        if start or expired:
            found.setdefault(r.prefix.head, []).append(r.usage.cache_read)
            idles.setdefault(r.prefix.head, []).append(r.sent_ms - previous.sent_ms if expired else 0)  # type: ignore[operator, union-attr]
        elif previous is not None and previous.usage is not None and previous.usage.cache_reported and 0 < r.usage.cache_read < previous.usage.cache_read:
            fell.setdefault(r.prefix.head, []).append(r.usage.cache_read)
    return found, fell, idles


def run_audit(
    paths: Sequence[Path],
    *,
    fmt: str = "auto",
    price_as_of: str | None = None,
    progress: ProgressFn | None = None,
    trace: tuple[list[TraceRequest], list[FileSummary]] | None = None,
    map_files: FileMap | None = None,
    follow_reads: bool = True,
    baseline: Baseline | None = None,
    billing_header: Mapping[str, str] | None = None,
    spill: RowBuckets | None = None,
    jobs: int = 1,
    drop_ids: bool = False,
) -> AuditResult:
    """Import, predict, explain and price (see the module doc); ``map_files``: see :func:`load_trace`;
    ``follow_reads``: see :class:`Predictor` (``--no-follow-reads`` turns it off); ``baseline``
    and ``spill``: see :func:`audit_requests`. ``billing_header``: {provider: ``ignored``/``keyed``} over the
    defaults of :mod:`~prefixbench.workloads.logs.billing_header`, applied to a trace this call
    loads (a ``trace`` given is taken as it is: the caller applied them). ``jobs`` and
    ``drop_ids``: see :func:`audit_requests`.

    Raises:
        UserError: bad input (``file:line``), an unknown format or a bad price date.
    """
    prices = Prices(price_as_of)
    assumed: tuple[str, ...] = ()
    if trace is not None:
        requests, summaries = trace
    else:
        from prefixbench.workloads.logs.billing_header import assume_billing_headers

        requests, summaries = load_trace(paths, fmt, progress, map_files)
        requests, assumed = assume_billing_headers(requests, billing_header)  # type: ignore[arg-type]
    result = audit_requests(requests, summaries, prices, follow_reads, baseline, spill, jobs=jobs, drop_ids=drop_ids)
    return replace(result, notes=result.notes + assumed) if assumed else result


class Pred(msgspec.Struct, frozen=True, gc=False):  # ints only: no cycle
    """One request's predicted usage, as the re-simulations of what to change read it."""

    read: int
    write: int
    write_1h: int
    uncached: int


class Preds(Sequence[Pred]):
    """A :class:`Pred` a request, by position, held as four machine ints a request in one array:
    what the re-simulations of what to change start from, kept for every request of every file
    through the audit and them (32 bytes a request, not a :class:`Prediction` object, its list
    slot, and a ``Pred`` and its dict slot more for what-if: about 200)."""

    __slots__ = ("values",)

    def __init__(self, n: int) -> None:
        self.values = array("q", [0]) * (4 * n)

    def __len__(self) -> int:
        return len(self.values) // 4

    def __getitem__(self, i: int) -> Pred:  # type: ignore[override]  (an index, no slice)
        n = len(self.values) // 4
        if not -n <= i < n:
            raise IndexError(i)
        j = 4 * (i % n)
        values = self.values
        return Pred(values[j], values[j + 1], values[j + 2], values[j + 3])

    def put(self, i: int, p: Prediction) -> None:
        """Request ``i``'s prediction."""
        values, j = self.values, 4 * i
        values[j], values[j + 1], values[j + 2], values[j + 3] = p.read, p.write, p.write_1h, p.uncached


class Baseline:
    """What the audit of a trace knows that the re-simulations of what to change
    (:func:`~prefixbench.workloads.audit.whatif.what_if`) start from, filled by
    :func:`audit_requests`: each request's prediction as the log was sent (``preds``, at the
    request's index: the same predictor on the same requests in the same order, before it
    follows a read or counts a named cache),
    the heads, the send clock and the compaction links. ``requests``: the length of the trace
    they are of."""

    __slots__ = ("preds", "heads", "clock", "sources", "requests")

    def __init__(self) -> None:
        self.preds = Preds(0)
        self.heads: Heads | None = None
        self.clock: tuple | None = None
        self.sources: dict[Key, Key] | None = None
        self.requests = -1


def audit_requests(
    requests: list[TraceRequest], summaries: list[FileSummary], prices: Prices | None = None, follow_reads: bool = True,
    baseline: Baseline | None = None, spill: RowBuckets | None = None, jobs: int = 1, drop_ids: bool = False,
) -> AuditResult:
    """The audit of an imported trace. ``baseline``: filled for what to change (see
    :class:`Baseline`), so it need not predict every request again. ``spill``: the rows go to
    that temporary file as the pass makes them, each file's under its own bucket, and the
    summaries read them back a file at a time and write them there in their order (the result
    holds none: :meth:`~prefixbench.workloads.audit.spill.RowSpill.load` reads them), so no more
    than a file's rows are ever in memory (but with ``jobs``: a part's). ``jobs`` > 1: the
    requests are predicted, explained and summed a file at a time in that many processes
    (forked, where the system forks) when they fall into parts that share nothing
    (:func:`pass_parts`); the files' sums are added up here in file order, with the same result.
    ``drop_ids``: the requests' ids are dropped (:func:`drop_request_ids`) once the sessionless
    lanes they tell are read, the only use the audit has for them."""
    prices = prices or Prices(None)
    alone = sessionless_lanes(requests)
    if drop_ids:
        drop_request_ids(requests)
    heads = head_sizes(requests)
    file_order = {summary.file: n for n, summary in enumerate(summaries)}
    ticks, readies, positions = clock_by_position(requests, summaries)
    sources = compaction_sources([requests[i] for i in positions])
    preds: Preds | None = None
    if baseline is not None:
        preds = Preds(len(requests))
        baseline.preds, baseline.heads, baseline.clock, baseline.sources = preds, heads, (ticks, readies, positions), sources
        baseline.requests = len(requests)
    origins = chain_origins(requests)
    caches = explicit.price_caches(summaries, requests, prices.row)
    created = {c.name: c.tokens for summary in summaries for c in summary.explicit_caches}
    inputs = _PassInputs(requests, heads, prices, ticks, readies, positions, sources, origins, created, follow_reads,
                         file_order, _head_firsts(requests, positions), _head_before(requests, positions, ticks),
                         read_later(requests, positions, ticks, readies), _uncounted(summaries), _copies(summaries))
    # Each row under its file's bucket: the rows are listed file by file, in line order.
    buckets = _Rows() if spill is None else spill
    of_file = explicit.cost_by(caches, lambda c: c.file)
    lane_heads = _lane_heads(requests, heads)
    parts = None
    if jobs > 1 and len(requests) >= PARALLEL_PASS_AT_LEAST and all(r.file in file_order for r in requests):
        parts = pass_parts(inputs, jobs)
    if parts is None:
        passed = _pass(inputs, range(len(positions)), frozenset(), preds, buckets)
        compactions = [c for _, c in passed.compactions]
        followed = passed.followed
        lagged = passed.lagged
        common = passed.common
        done = None
    else:
        passes, done = _parts_in_workers(inputs, parts, preds, buckets, lane_heads, of_file)
        found: list[tuple[int, CompactionSummary]] = []
        followed = Counter()
        lagged = Counter()
        common = Counter()
        for passed in passes:  # (in the parts' order: every figure merged below is summed or a part's own)
            found += passed.compactions
            followed.update(passed.followed)
            lagged.update(passed.lagged)
            common.update(passed.common)
            heads.token_scales.update(passed.token_scales)
            heads.last_sizes.update(passed.last_sizes)
            prices.missing |= passed.missing
            prices.fast_missing |= passed.fast_missing
        compactions = [c for _, c in sorted(found, key=lambda kc: kc[0])]  # in send order, as one pass finds them
        del found, passes
    # The pass's working state (the chain model, the histories, the clock) is not needed to sum
    # up: freed before the summaries are built beside the rows.
    del passed, inputs, ticks, readies, positions, sources
    result = _summarize(buckets, summaries, heads, requests, prices, caches, done, lane_heads, alone)
    if followed:
        result = replace(result, notes=result.notes + (follow_note(followed),))
    if lagged:
        result = replace(result, notes=result.notes + lag_notes(lagged))
    if common:
        result = replace(result, notes=result.notes + common_head_notes(common))
    unlinked = _unlinked_starts(requests, origins)
    if unlinked:
        result = replace(result, notes=result.notes + (unlinked,))
    compactions.sort(key=lambda c: (file_order.get(c.file, 0), c.line))
    return replace(result, compactions=tuple(compactions))


class _PassInputs(msgspec.Struct):
    """What one pass of :func:`audit_requests` reads: the trace, its heads (whose learned token
    scales it adds to), prices, send clock and links, the explicit caches the logs create, and
    each head key's first place in the send order."""

    requests: list[TraceRequest]
    heads: Heads
    prices: Prices
    ticks: list[int]
    readies: list[int]
    positions: array
    sources: dict[Key, Key]
    origins: dict[Key, Key]
    created: dict[str, int]
    follow_reads: bool
    #: Each file's place among the summaries (its rows' bucket).
    file_order: dict[str, int]
    #: (place in the send order, head key) of each head key's first request, in that order.
    head_firsts: list[tuple[int, str]]
    #: At each place in the send order, the send tick of the latest request before it under its
    #: head and of its request family, in any lane or part of the log (-1: none, or no head).
    head_before: array
    #: At each place in the send order, the position of the later call that read past this one's
    #: read of the same content, of what no call since had written (:func:`read_later`), -1 where none did.
    later: array
    #: Each file's lines, ascending, of responses sent without any token count (``SENT_UNCOUNTED``),
    #: by lane, and the lines of the calls it holds that another file counts (:func:`_uncounted`).
    uncounted: dict[str, dict[str, tuple[int, ...]]] = msgspec.field(default_factory=dict)
    copies: dict[str, dict[str, int]] = msgspec.field(default_factory=dict)


class _Passed(msgspec.Struct):
    """What a pass over some of the requests made beside their rows: the
    compactions with their place in the send order, and what it learned that the whole audit
    keeps (the followed reads, the token scales, the models without a price)."""

    compactions: list[tuple[int, CompactionSummary]]
    followed: Counter[str]
    lagged: Counter[tuple[str, str, str, int]]
    common: Counter[tuple[str, str, int, int]]
    token_scales: dict[Key, TokenScale]
    last_sizes: dict[tuple[str, str], tuple[int, int]]
    missing: set[str]
    fast_missing: set[str]


def upstream_key(r: TraceRequest) -> str:
    """The suffix that keeps apart the cache entries of each upstream a gateway names as the one
    that served ``r`` (each upstream's cache is its own): ``|@NAME``, empty where the log names
    none. The head entries, the chain families and the body caches all key on it."""
    return f"|@{r.upstream}" if r.upstream else ""


def head_entry(r: TraceRequest, head: str) -> str:
    """The key of ``r``'s head entry in the chain model: ``head``, of the upstream a gateway names
    as the one that served ``r`` where the log names it (:func:`upstream_key`)."""
    return head + upstream_key(r)


def _head_firsts(requests: Sequence[TraceRequest], positions: Sequence[int]) -> list[tuple[int, str]]:
    """Each head key's first place in the send order: the explanation of a request asks whether
    a request before it was sent under its head, whatever part of the log it was in."""
    firsts: dict[str, int] = {}
    for k, i in enumerate(positions):
        prefix = requests[i].prefix
        if prefix is not None and prefix.head not in firsts:
            firsts[prefix.head] = k
    return [(k, head) for head, k in firsts.items()]


def _project_folder(file: str) -> str:
    """The folder of a log's sessions: its own, or for a Claude Code subagent's (or compaction
    agent's) transcript in ``<session>/`` or ``<session>/subagents/`` the folder of
    ``<session>.jsonl``, its project's, in every layout
    :func:`~prefixbench.workloads.logs.claude_layout.project_folder` knows."""
    return str(project_folder(PurePath(file)))


def _head_before(requests: Sequence[TraceRequest], positions: Sequence[int], ticks: Sequence[int]) -> array:
    """At each place in the send order, the send tick of the latest request before it under its
    head and of its request family (the cache model's: model, envelope, speed, upstream; the
    provider keeps a cache a family, so only such a call kept the head warm for it) and of a file
    in its folder (a head key is inferred: Claude Code's system prompt differs by project, whose
    sessions are one folder, so a call of another folder is no evidence of the same head), -1 where
    none is: how long since another call used the head (a lane start's, a compaction's, a TTL
    expiry's evidence) is the whole log's, whatever part of it a request is passed in."""
    last: dict[tuple, int] = {}
    folders: dict[str, str] = {}
    before = array("q", [-1]) * len(positions)
    for k, i in enumerate(positions):
        r = requests[i]
        if r.prefix is not None:
            folder = folders.get(r.file)
            if folder is None:
                folder = folders[r.file] = _project_folder(r.file)
            key = (*_family_key(r), folder)
            before[k] = last.get(key, -1)
            last[key] = ticks[i]
    return before


def read_later(requests: Sequence[TraceRequest], positions: Sequence[int], ticks: Sequence[int], readies: Sequence[int]) -> array:
    """At each place in the send order, the position of the first later call of the same lane
    that read more than this one of content only calls before this one could have cached; -1
    where no call did (:func:`.precedence._read_later` judges the miss by it).

    A later call that extends a miss reads what the miss itself wrote, whatever the miss was (a
    change the agent made writes the changed prompt, which the next call reads): its read says
    nothing of the miss. It does where the miss, and every call between the two, wrote nothing
    the later call could read: each reported writing 0 tokens, or its response had not begun
    when the later call was sent (its write not stored yet). Then what the later call read past
    the miss's read was cached before the miss, with the same content as the miss's prompt up to
    there: the miss was no change of that content. Only where the chain runs unbroken from the
    miss to the later call (:func:`_extends`: the same content up to past the miss's read), the
    later call sent within the TTL of what the miss cached, on a provider that caches by itself
    (one that reads at the agent's breakpoints may have read short for want of one).

    Another lane under the same head and request family may have written what the later call
    read (its head, or a forked history): a write of such a call that could be read after the miss
    was sent ends the walk at the time it could be read, as the lane's own do.

    Computed once for the whole log from the requests and the send clock alone (not a pass's
    state), so a pass over any part of the log sees the same answer. The walk from each call
    stops at the first call that could have read a write (at most :data:`LATER_WALK` calls)."""
    later = array("q", [-1]) * len(positions)
    lanes: dict[tuple[str, str], list[int]] = defaultdict(list)
    # Per head and family, the ticks at which each call's write could be read, and its lane.
    writes: dict[tuple, list[tuple[int, tuple[str, str]]]] = defaultdict(list)
    for k, i in enumerate(positions):
        r = requests[i]
        lanes[(r.file, r.lane)].append(k)
        if r.prefix is not None and _may_write(r):
            writes[_family_key(r)].append((readies[i], (r.file, r.lane)))
    others = {key: _Writes(sorted(entries)) for key, entries in writes.items()}
    for places in lanes.values():
        # The lane cut into runs that each extend the one before with nothing logged between.
        runs: list[list[int]] = []
        last: TraceRequest | None = None
        for k in places:
            r = requests[positions[k]]
            if not runs or not _extends(r, last):
                runs.append([])
            runs[-1].append(k)
            last = r
        for run in runs:
            for n, k in enumerate(run):
                i = positions[k]
                r = requests[i]
                if r.usage is None or not r.usage.cache_reported or rules_for(r.provider).max_breakpoints is not None:
                    continue
                read, ttl = r.usage.cache_read, ttl_ms(r)
                # The earliest tick a write made since the miss (its own included) could be read.
                other = others.get(_family_key(r)) if r.prefix is not None else None
                readable: int | None = None if other is None else other.first_after(ticks[i], (r.file, r.lane))
                for m in range(n, min(len(run), n + LATER_WALK)):
                    if m > n:
                        j = positions[run[m]]
                        if (readable is not None and ticks[j] >= readable) or ticks[j] - ticks[i] > ttl:
                            break
                        later_usage = requests[j].usage
                        if later_usage is not None and later_usage.cache_reported and later_usage.cache_read > read:
                            later[k] = j
                            break
                    if _may_write(requests[positions[run[m]]]):
                        ready = readies[positions[run[m]]]
                        readable = ready if readable is None else min(readable, ready)
    return later


#: The most calls :func:`read_later` walks past a miss.
LATER_WALK = 64


def _may_write(r: TraceRequest) -> bool:
    """Whether ``r`` could have written the cache: no usage logged, a provider whose usage does
    not report writes, or a write reported."""
    return r.usage is None or not writes_reported(r.provider, r.usage) or bool(r.usage.cache_write)


def _family_key(r: TraceRequest) -> tuple:
    """What one cache entry is shared under: the head and the request family."""
    assert r.prefix is not None
    return (r.prefix.head, r.model, r.envelope, r.speed, r.upstream)


class _Writes:
    """The ticks at which the writes of the calls under one head and family could be read, in
    order, with each call's lane, and from each place the next one of another lane than its own."""

    __slots__ = ("lanes", "next_other", "ready")

    def __init__(self, entries: list[tuple[int, tuple[str, str]]]) -> None:
        self.ready = [ready for ready, _ in entries]
        self.lanes = [lane for _, lane in entries]
        self.next_other = [len(entries)] * len(entries)
        for n in range(len(entries) - 2, -1, -1):
            self.next_other[n] = n + 1 if self.lanes[n + 1] != self.lanes[n] else self.next_other[n + 1]

    def first_after(self, sent: int, lane: tuple[str, str]) -> int | None:
        """The first tick after ``sent`` at which another lane than ``lane`` wrote, or None."""
        n = bisect_right(self.ready, sent)
        if n < len(self.ready) and self.lanes[n] == lane:
            n = self.next_other[n]
        return self.ready[n] if n < len(self.ready) else None


def _extends(r: TraceRequest, before: TraceRequest | None) -> bool:
    """``r`` goes on from ``before``, the lane's call before it, with the same content: its chain
    extends that call's, under one head and request family, nothing logged between, its prompt
    no smaller and not sent before it."""
    if before is None or r.prefix is None or before.prefix is None or r.prefix.parent != before.prefix.node:
        return False
    if _family_key(r) != _family_key(before):
        return False
    if r.is_compaction_call or before.is_compaction_call or r.prefix.shared is not None:
        return False
    if r.events:
        # Anything logged between (even a new user turn: the agent may have restarted there and
        # rebuilt its head, which no log records) may have changed what was sent.
        return False
    if r.sent_ms is not None and before.sent_ms is not None and r.sent_ms < before.sent_ms:
        return False
    return r.usage is None or before.usage is None or r.usage.prompt >= before.usage.prompt


def _later(r: TraceRequest, ms: int) -> Later:
    """The call at ``r``, sent ``ms`` after the one it read past (:func:`read_later`)."""
    assert r.usage is not None
    return Later(r.line, ms, r.usage.cache_read)


def _pass(inputs: _PassInputs, order: Sequence[int], expire: Collection[int], preds: Preds | None, buckets: RowBuckets) -> _Passed:
    """Predict and explain the requests at ``order`` (places in the send order, ascending), in
    one predictor: all of them, or a part that shares nothing with the others (see
    :func:`pass_parts`; ``expire``: the places where a head's entry stored by another part has
    expired). ``preds``: each request's prediction is put there (the :class:`Baseline`'s); the
    rows go to ``buckets``, each under its file's place."""
    requests, heads, prices, ticks, readies, positions = (
        inputs.requests, inputs.heads, inputs.prices, inputs.ticks, inputs.readies, inputs.positions)
    sources, origins, created, file_order = inputs.sources, inputs.origins, inputs.created, inputs.file_order
    # The requests a compaction call or a lane start is compared with: the only ones kept past
    # their lane's next.
    needed = frozenset(sources.values()) | frozenset(origins.values())
    predictor = Predictor(heads, keep=needed, follow=inputs.follow_reads, in_order=True)
    shared = _Shared(heads, prices, Histories(heads), created=created, uncounted=inputs.uncounted,
                     copies=inputs.copies)
    uses = node_uses(requests, positions, order, sources)
    firsts, next_first = inputs.head_firsts, 0
    lane_prev: dict[tuple[str, str], Previous] = {}
    previous: dict[Key, Previous] = {}
    lane_index: dict[tuple[str, str], int] = defaultdict(int)
    compactions: list[tuple[int, CompactionSummary]] = []
    for k in order:
        i = positions[k]
        r = requests[i]
        while next_first < len(firsts) and firsts[next_first][0] < k:
            # Every head a request before this one was sent under (in any part of the log).
            shared.head_seen[firsts[next_first][1]] = ticks[positions[firsts[next_first][0]]]
            next_first += 1
        if k in expire:
            predictor.expire_head(r)
        key = (r.file, r.lane, r.seq)
        tick, ready = ticks[i], readies[i]
        lane_key = (r.file, r.lane)
        source = sources.get(key)
        used = uses[i]
        pred = predictor.predict(r, tick, ready, source, None if used == NODE_KEPT else used)
        if preds is not None:
            preds.put(i, predictor.unfollowed.pop(key, pred) if predictor.unfollowed else pred)
        if r.explicit_cache in created and r.usage is not None:
            # The client named a cache these logs created: the provider serves all of it.
            read = min(created[r.explicit_cache], r.usage.prompt)  # type: ignore[index]
            pred = replace(pred, read=read, write=0, uncached=r.usage.prompt - read, write_1h=0)
        predicted_only = r.usage is None and pred.by == "body"
        if predicted_only:
            r = replace(r, usage=_predicted_usage(pred))
        segment = shared.histories.add(r, None if used == NODE_KEPT else used, counted=True)
        prev = lane_prev.get(lane_key)
        if prev is None and key in origins:
            # A lane start whose prompt extends another lane's call (a Codex subagent's or fork's
            # first call): measured against what that call left cached, not the head.
            prev = previous.get(origins[key])
        used_at, after = inputs.head_before[k], inputs.later[k]
        step = _Step(r, prev, pred, tick, lane_index[lane_key], None if source is None else previous.get(source), segment,
                     None if used_at < 0 else used_at, None if after < 0 else _later(requests[after], ticks[after] - tick),
                     predictor.start_reads.pop(key, None) if predictor.start_reads else None)
        row = _explain(step, shared)
        buckets.add(file_order.get(row.file, 0), _unreported(row) if predicted_only else row)
        kind, shown = _compaction_kind(r, row), ""
        if kind is None and row.lost_tokens is None:
            kind, shown = _unseen_compaction(step, shared.compaction_at)
        if kind is not None:
            compactions.append((k, _judge_compaction(kind, r, row, pred, prices, shown, predicted_only)))
        lane_wrote = wrote(r) or (lane_prev[lane_key].lane_wrote if lane_key in lane_prev else False)
        here = Previous(r, tick, ready, end_tick(r, ready), lane_wrote)
        if key in needed:
            previous[key] = here
        if not (r.compaction_call and r.lane_kind != "compaction"):
            # A compaction call logged inside the main lane (a request-body log) is not what the
            # next request extends: that one is compared with the conversation before the call.
            lane_prev[lane_key] = here
        lane_index[lane_key] += 1
        if r.is_compaction_call:
            shared.compaction_at[r.file] = r.line
    return _Passed(compactions, predictor.followed, predictor.lagged, predictor.common, heads.token_scales, heads.last_sizes, prices.missing, prices.fast_missing)


#: :func:`node_uses`'s count of a node kept to the pass's end (its name is another request's
#: too, or more requests than this extend it).
NODE_KEPT = 255


def node_uses(requests: Sequence[TraceRequest], positions: Sequence[int], order: Sequence[int],
              sources: Mapping[Key, Key]) -> bytearray:
    """For each request (by position), how many requests after it at ``order`` extend its node
    (name their ``prefix.parent`` it, or start a chain as a compaction call whose source it is:
    the predictor may read the source's chain for it): what lets :class:`~.locate.Histories` and
    the :class:`Predictor`'s chain models forget a node no later request reaches. :data:`NODE_KEPT`
    where a node's name is more than one request's (a later one would be looked up in its place)
    or too many extend it."""
    uses = bytearray(len(requests))
    owner: dict[str, int] = {}
    wanted = frozenset(sources.values())
    source_nodes: dict[Key, str] = {}
    for k in order:
        i = positions[k]
        r = requests[i]
        prefix = r.prefix
        if prefix is None:
            continue
        extended = prefix.parent
        if sources:
            key = (r.file, r.lane, r.seq)
            if extended is None:
                source = sources.get(key)
                extended = None if source is None else source_nodes.get(source)
            if key in wanted:
                source_nodes[key] = prefix.node
        if extended is not None:
            j = owner.get(extended)
            if j is not None and uses[j] < NODE_KEPT:
                uses[j] += 1
        j = owner.get(prefix.node)
        if j is not None:
            uses[j] = uses[i] = NODE_KEPT
        owner[prefix.node] = i
    return uses


#: Requests an audit holds at the least before ``--jobs`` splits its pass into parts (below it,
#: forking costs more than it saves).
PARALLEL_PASS_AT_LEAST = 2000


class PassPart(msgspec.Struct, frozen=True):
    """Some of the requests, predicted and explained in one predictor of their own: their
    places in the send order (ascending), and the places where a head's entry that other parts
    stored has expired (:meth:`Predictor.expire_head`)."""

    order: list[int]
    expire: frozenset[int]


def pass_parts(inputs: _PassInputs, jobs: int) -> list[PassPart] | None:
    """The requests in at most ``jobs`` parts that share no state of the pass, largest first; None
    when they do not fall apart (one part would hold nearly all of them).

    Two requests share state, and go in one part, when they are of one file (a lane's previous
    request, its place and its reads; a compaction's line), are linked (a compaction call and
    the main request it summarizes, a lane start and the call of another lane it extends), name
    one chain node (their own or their parent: a chain entry, the walk back, a history), send
    bodies to one provider (its byte-level cache) or block hashes (their one set). A head's
    entry in the chain model (a head of known size the account does not keep warm) is shared by
    every request under it; those requests are split where the entry has certainly expired: a
    request sent after the latest tick any earlier one could keep it to (its send or answer tick,
    or its response's end where the lifetime counts from there, and the longest TTL written so
    far) starts a new stretch, and requests of one stretch go in
    one part. A part whose stretch follows another part's, when a request before it stored the
    entry, finds it expired there (what the whole log's model holds, an expired entry, reads
    the same as a tombstone: see :mod:`prefixbench.simulator.chain`). Which heads earlier
    requests were sent under, and when the latest before each was, are given to every part
    (:func:`_head_firsts`, :func:`_head_before`). Everything else a
    request's prediction and explanation read is the trace's own or fixed before the pass (the
    heads' sizes, the send clock, the links, the prices), so each part's rows are the rows one
    pass over the whole log makes for them.

    Keep this in step with :func:`_pass`, :class:`Predictor` and :func:`state_slots`.
    """
    requests, positions, ticks, readies, heads = inputs.requests, inputs.positions, inputs.ticks, inputs.readies, inputs.heads
    parent: list[int] = []
    names: dict[object, int] = {}

    def element(name: object) -> int:
        found = names.get(name)
        if found is None:
            found = names[name] = len(parent)
            parent.append(found)
        return found

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: int, b: int) -> None:
        a, b = find(a), find(b)
        if a != b:
            parent[b] = a

    asker = Predictor(heads, in_order=True)  # asks the rules only: it predicts nothing
    #: Per head entry: its current stretch's element, the latest tick it may live to, whether a
    #: request stored it, the longest TTL written in the stretch.
    stretch: dict[tuple[str, str, str], list] = {}
    expire: set[int] = set()
    files: list[int] = []
    for k, i in enumerate(positions):
        r = requests[i]
        here = element(("file", r.file))
        files.append(here)
        prefix = r.prefix
        if r.hash_ids is not None:
            union(here, element(("blocks",)))
        elif r.body is not None:
            union(here, element(("body", r.provider)))
        if prefix is not None:
            union(here, element(("node", prefix.node)))
            if prefix.parent is not None:
                union(here, element(("node", prefix.parent)))
        if r.hash_ids is not None or r.body is not None or prefix is None or r.usage is None:
            continue
        if heads.get(prefix.head) is None or prefix.head in heads.warm:
            continue  # no entry, or one no request reads (a warm head is read without it)
        slot = (chain_rules(r.provider).name, r.model, head_entry(r, prefix.head))
        tick, ready = ticks[i], readies[i]
        stores, lifetime, since = asker.head_touch(r, tick, ready)
        now = stretch.get(slot)
        if now is None or (now[1] is not None and tick > now[1]):
            if now is not None and now[2]:
                expire.add(k)  # stored before, expired now
            now = stretch[slot] = [element(("stretch", slot, k)), tick, now is not None and now[2], lifetime]
        union(here, now[0])
        now[2] = now[2] or stores
        if now[3] is not None:
            now[3] = None if lifetime is None else max(now[3], lifetime)
        if now[1] is not None:
            now[1] = None if now[3] is None else max(now[1], since + now[3])
    for links in (inputs.sources, inputs.origins):
        for a, b in links.items():
            union(element(("file", a[0])), element(("file", b[0])))
    groups: dict[int, list[int]] = defaultdict(list)
    for k, here in enumerate(files):
        groups[find(here)].append(k)
    if len(groups) < 2:
        return None
    # The largest parts first, each to the part with the fewest requests so far (places ascending in each).
    bins: list[list[int]] = [[] for _ in range(jobs)]
    for group in sorted(groups.values(), key=lambda g: (-len(g), g[0])):
        min(bins, key=len).extend(group)
    bins = [sorted(b) for b in bins if b]
    if len(bins) < 2 or max(map(len, bins)) > len(positions) * LARGEST_PART:
        return None
    return [PassPart(b, frozenset(k for k in b if k in expire)) for b in sorted(bins, key=len, reverse=True)]


#: The share of the requests past which a part is nearly all of them: one pass is no slower.
LARGEST_PART = 0.9


#: The inputs of the pass whose parts run in forked workers (a worker finds them in its memory):
#: the pass's, the parts, where the rows go (how a worker packs them), each lane's head size,
#: each file's explicit caches' cost.
_FORKED: tuple | None = None


def _parts_in_workers(
    inputs: _PassInputs, parts: list[PassPart], preds: Preds | None, buckets: RowBuckets,
    lane_heads: Mapping[tuple[str, str], int | None], of_file: Mapping[str, Decimal],
) -> tuple[list[_Passed], dict[int, _FileSums]]:
    """Each part but the first passed and summed a file at a time in a forked worker, the first
    here meanwhile: what each pass made beside its rows (in ``parts`` order), each file's sums by
    its bucket (its rows packed for ``buckets``), the predictions put in ``preds``."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    global _FORKED
    if "fork" not in mp.get_all_start_methods():
        out = [_part(inputs, part, preds, buckets, lane_heads, of_file) for part in parts]
        return [passed for passed, _ in out], {b: sums for _, files in out for b, sums in files.items()}
    _FORKED = (inputs, parts, buckets, lane_heads, of_file)
    try:
        with ProcessPoolExecutor(max_workers=len(parts) - 1, mp_context=mp.get_context("fork")) as pool:
            futures = [pool.submit(_forked_part, n) for n in range(1, len(parts))]
            here = _part(inputs, parts[0], preds, buckets, lane_heads, of_file)
            sent = [future.result() for future in futures]
    finally:
        _FORKED = None
    passes, files = [here[0]], dict(here[1])
    for part, (passed, summed, values) in zip(parts[1:], sent):
        if preds is not None:
            got = array("q")
            got.frombytes(values)
            for n, k in enumerate(part.order):
                j, at = 4 * inputs.positions[k], 4 * n
                preds.values[j:j + 4] = got[at:at + 4]
        passes.append(passed)
        files.update(summed)
    return passes, files


def _part(
    inputs: _PassInputs, part: PassPart, preds: Preds | None, buckets: RowBuckets,
    lane_heads: Mapping[tuple[str, str], int | None], of_file: Mapping[str, Decimal],
) -> tuple[_Passed, dict[int, _FileSums]]:
    """One part passed, its rows put where ``buckets`` would put them (a temporary file of the
    part's own for a :class:`~.spill.BucketSpill`: no more than a file's rows in memory, as in
    one pass), then summed a file at a time (its rows packed as ``buckets`` takes them back:
    :meth:`RowBuckets.pack`)."""
    mine = buckets.empty()
    try:
        passed = _pass(inputs, part.order, part.expire, preds, mine)
        files: dict[int, _FileSums] = {}
        for bucket in sorted(mine.buckets()):
            summed = _sum_file(mine.take(bucket), lane_heads, of_file)
            summed.rows = buckets.pack(summed.rows)
            files[bucket] = summed
    finally:
        mine.close()
    return passed, files


def _forked_part(n: int) -> tuple[_Passed, dict[int, _FileSums], bytes]:
    """Part ``n`` passed and summed in a worker forked by :func:`_parts_in_workers`, and its
    predictions in its order (four ints each)."""
    assert _FORKED is not None, "a pass worker runs only in a process forked by _parts_in_workers"
    inputs, parts, buckets, lane_heads, of_file = _FORKED
    part = parts[n]
    preds = Preds(len(inputs.requests))
    passed, files = _part(inputs, part, preds, buckets, lane_heads, of_file)
    values = array("q")
    for k in part.order:
        j = 4 * inputs.positions[k]
        values.extend(preds.values[j:j + 4])
    return passed, files, values.tobytes()


def _compaction_kind(r: TraceRequest, row: AuditRow) -> str | None:
    """What the request is to a compaction the log shows (see :class:`CompactionSummary`), or None."""
    if r.is_compaction_call:
        return "call"
    if row.cause == "compaction" and row.evidence == "log" and row.detail.startswith("the prompt fell"):
        return "shrink"
    if row.cause == "compaction" or any(kind == "compaction" for kind, _ in r.events):
        return "after"
    return None


def _unseen_compaction(step: _Step, compaction_at: Mapping[str, int]) -> tuple[str | None, str]:
    """The compaction a request whose cache use is not reported still shows (no cause was looked
    for, so :func:`_compaction_kind` finds none from its row): ``after`` where its body differs
    from the lane's previous one in its messages past a compaction call logged between them, or
    ``shrink`` where its reported prompt fell below half of the lane's previous one; with what
    showed it. ``(None, "")`` otherwise."""
    r, prev = step.r, step.prev.request if step.prev is not None else None
    if r.usage is None or prev is None or prev.usage is None or r.is_compaction_call or (prev.file, prev.lane) != (r.file, r.lane):
        return None, ""
    if any(kind == "rewind" for kind, _ in r.events):
        return None, ""
    comp = compaction_at.get(r.file)
    if comp is not None and comp > prev.line and r.body is not None and prev.body is not None:
        diff = body_diff(prev.body, r.body)
        if diff is not None and diff.cause == "messages-changed":
            return "after", f"after the compaction call at line {comp} (body-diff: {diff.detail})"
    before, now = prev.usage.prompt, r.usage.prompt
    if now < before / 2:
        return "shrink", f"the prompt fell from {before:,} to {now:,} tokens with no compaction logged (log: its usage's prompt)"
    return None, ""


def _judge_compaction(kind: str, r: TraceRequest, row: AuditRow, pred: Prediction, prices: Prices, shown: str = "",
                      predicted: bool = False) -> CompactionSummary:
    """One compaction, judged warm or cold, or unknown where its cache use is not reported (see
    :class:`CompactionSummary`).

    A ``call`` is judged against what the main request it summarizes left cached (the row's
    expected read). An ``after`` or ``shrink`` request starts a new context: what it could read
    is the prefix the new context shares with what was cached (the system prompt and tools, the
    unlogged head), as the cache model predicts it; its loss against the old context stays in its
    own row.
    """
    usage = r.usage
    could = row.expected_cache_read if kind == "call" else pred.read
    if usage is not None:
        could = min(could, usage.prompt)
    reported = usage is not None and usage.cache_reported
    read = usage.cache_read if usage is not None and reported else None
    if read is None:
        # No cache use reported (a usage with no cache field, or none logged): what it read is
        # not told, so it is neither warm nor cold, and its loss is unknown, not $0.
        why = "its usage has no cache field" if usage is not None else "the log has no usage for it"
        # What it could have read is as unknown as a cold one's where no cached prefix is known
        # (could 0): null and `?`, not 0.
        return CompactionSummary(
            file=row.file, lane=row.lane, line=row.line, kind=kind, verdict="unknown", cache_read=None,
            expected_cache_read=could or None, prompt=usage.prompt if usage is not None else None, cost_usd=row.cost_usd,
            lost_usd=None, warm_cost_usd=None, cause=row.cause,
            detail=(f"{shown}; " if shown else "") + f"no cache use reported ({why}): warm or cold, and its loss, unknown",
        )
    if predicted and kind != "call":
        # A request-body log's request with no usage: its read is the cache model's prediction,
        # and what it could read is that same prediction, so "warm" would be the model agreeing
        # with itself. Not judged: the predicted read is kept, marked so.
        return CompactionSummary(
            file=row.file, lane=row.lane, line=row.line, kind=kind, verdict="unknown", cache_read=read,
            expected_cache_read=could or None, prompt=usage.prompt, cost_usd=row.cost_usd, lost_usd=None, warm_cost_usd=None,
            cause=row.cause, predicted=True,
            detail=(f"predicted read {read:,} of its {usage.prompt:,} tokens (the cache model on the logged body: the log "
                    "reports no usage); what it could read is that same prediction, so warm or cold is not told"),
        )
    short = max(0, could - read)
    price = prices.row(r.model, r.sent_ms, r.speed, r.upstream) if usage is not None else None
    # A request that read nothing of a prompt is cold even where nothing could be told readable.
    warm = short <= READ_TOLERANCE * could and not (read == 0 and usage is not None and usage.prompt > 0)
    if kind == "call":
        lost = row.lost_usd
    elif usage is None or price is None:
        lost = None
    else:
        lost = _lost_usd(usage, 0 if warm else short, price)
    cost = row.cost_usd
    # Cold with nothing known readable: the log does not tell what it could have read, so that
    # figure and what it would have cost warm are unknown (None), not 0 and its own price.
    readable_unknown = not warm and could == 0
    if readable_unknown and kind != "call":
        lost = None
    if kind == "call" and row.cause is not None:
        detail = row.detail
    elif could == 0 and (row.cause == "ttl-expired" or (row.cause == "compaction" and "had expired too" in row.detail)):
        # An idle gap past the TTL before it: nothing cached was left to read (the row says which
        # gap, leading with the expiry or naming it beside the compaction, precedence._compaction);
        # what it could have read warm is not told (the header's "?"), and said so.
        detail = (f"read {read:,} of its {usage.prompt:,} tokens; nothing cached was left to read, and what it could have "
                  f"read warm the log does not tell: {row.detail}")
    elif could == 0:
        detail = f"read {read:,} of its {usage.prompt:,} tokens; the log does not tell what it could have read (no cached prefix known)"
    elif read > could:
        # The cache served more than predicted: "of" would say it read more than it could.
        detail = f"read {read:,}: more than the {could:,} the cache model predicted " + (
            "it shares with what was cached" if kind != "call" else "it could replay of what was cached")
    else:
        detail = f"read {read:,} of the {could:,} tokens it could have read" + (
            " (the prefix the new context shares with what was cached)" if kind != "call" else ""
        )
    if predicted:
        # Every detail of a predicted read says so, a cold call's (its row's own text, "the
        # compaction call read 0 of ...") as much as one this function words.
        detail = "predicted (the cache model on the logged bodies: the log reports no usage): " + (
            detail.replace("read ", "predicted to read ", 1) if detail.startswith("read ") else detail)
    return CompactionSummary(
        file=row.file,
        lane=row.lane,
        line=row.line,
        kind=kind,
        verdict="warm" if warm else "cold",
        cache_read=read,
        expected_cache_read=None if readable_unknown else could,
        prompt=usage.prompt if usage is not None else None,
        cost_usd=cost,
        lost_usd=lost,
        warm_cost_usd=None if cost is None or readable_unknown else usd_sum((cost, -(lost or Decimal(0)))),
        cause=row.cause,
        detail=detail,
        predicted=predicted,
    )


def _predicted_usage(pred: Prediction) -> Usage:
    """A request-body log reports no usage: the byte-level model's prediction stands in for it, so
    that its misses are found, explained and priced like reported ones (its row's reported
    figures stay empty, and a note says the dollars are predicted)."""
    return Usage(
        cache_read=pred.read, cache_write_5m=pred.write - pred.write_1h, cache_write_1h=pred.write_1h, uncached=pred.uncached
    )


def _unreported(row: AuditRow) -> AuditRow:
    return replace(
        row, reported_cache_read=None, reported_cache_write=None, reported_cache_write_1h=None, reported_uncached=None,
        reported_output=None,
    )


Key = tuple[str, str, int]  # (file, lane, seq)


def send_clock(requests: Sequence[TraceRequest], summaries: Sequence[FileSummary]) -> tuple[dict[Key, tuple[int, int]], list[TraceRequest]]:
    """The audit's clock: each lane's timestamps, never running backwards (file order is the
    order); returns each request's (tick, ready tick) and the requests in send order."""
    ticks, readies, positions = clock_by_position(requests, summaries)
    return (
        {(r.file, r.lane, r.seq): (tick, ready) for r, tick, ready in zip(requests, ticks, readies)},
        [requests[i] for i in positions],
    )


def end_tick(r: TraceRequest, ready: int) -> int | None:
    """The tick a call's response ended, for entry lifetimes and idle time: its ``done_ms`` only
    where its send time is known. A call without ``sent_ms`` is on the audit's counter ticks
    (:func:`clock_by_position`), which an epoch end time does not share (idle would read 0 and an
    entry it wrote would never expire). None where the log gives no end."""
    if r.done_ms is None or r.sent_ms is None:
        return None
    return max(ready, r.done_ms)


def clock_by_position(requests: Sequence[TraceRequest], summaries: Sequence[FileSummary]) -> tuple[list[int], list[int], array[int]]:
    """:func:`send_clock` by position in ``requests`` (a request's (file, lane, seq) is unique):
    each request's tick and ready tick, and the positions in send order (an array). Lists, not a
    dict keyed by (file, lane, seq): the audit holds them for every request of every file.

    A lane whose first calls give no send time and later ones do (a Claude Code transcript whose
    first exchange has no timestamp) counts those first calls up to just before its first known
    send time, not from 1: from a counter tick to an epoch time would look like ~56 years idle,
    and every entry they wrote would expire (the gap between them is unknown: no idle shown).

    A lane is one file's, so each file is clocked on its own (:func:`file_clock`) and sorted in
    its send order, and the send order across files is the merge of theirs (``heapq.merge`` by
    (tick, file order, seq, position), of the files whose spans of send times overlap only; a file
    sent after every earlier one is laid after them as it is): no more than one file's sort keys
    are made at a time, not every request's, and a file whose ticks never go back in its order
    is not sorted again."""
    file_order = {summary.file: n for n, summary in enumerate(summaries)}
    n = len(requests)
    ticks: list[int] = [0] * n
    readies: list[int] = [0] * n
    # The positions of each place in the file order (of a file, where the requests' files are
    # among the summaries; a file not among them is at 0, as in the sort keys), ascending.
    groups: dict[int, array[int]] = {}
    for i, r in enumerate(requests):
        place = file_order.get(r.file, 0)
        group = groups.get(place)
        if group is None:
            group = groups[place] = array("q")
        group.append(i)
    # Each place's positions in its send order, with its first and last send key.
    runs: list[tuple[tuple[int, int, int, int], tuple[int, int, int, int], int, array[int]]] = []
    for place in sorted(groups):
        group = groups.pop(place)
        in_order = file_clock(requests, group, ticks, readies)
        del group
        if all(map(int.__le__, (ticks[i] for i in in_order), (ticks[i] for i in in_order[1:]))):
            # Its ticks never go back in the file's order (seq, then position), which is then its
            # send order: sorted by (tick, seq, position) already (the usual file: no sort).
            send = array("q", in_order)
        else:
            # (a stable sort of ascending positions: ties in (tick, seq) go by position)
            send = array("q", sorted(in_order, key=lambda i: (ticks[i], requests[i].seq)))
        del in_order
        if send:
            first, last = send[0], send[-1]
            runs.append(((ticks[first], place, requests[first].seq, first), (ticks[last], place, requests[last].seq, last), place, send))
    # The send order as machine integers, not a list of int objects (32 bytes each past 256):
    # held through the whole pass. The merge of the places' send orders by (tick, place, seq,
    # position) (the places differ between files: it never ties): the places taken by their
    # first key, a place whose first key comes after every key of those before it is laid after
    # them as it is (sessions one after another: most of a folder), and only the places whose
    # spans overlap are merged (``heapq.merge``), one such cluster at a time.
    runs.sort(key=lambda run: run[0])
    positions = array("q")
    cluster: list[tuple[int, array[int]]] = []
    reach: tuple[int, int, int, int] | None = None
    for first, last, place, send in runs:
        if reach is not None and first < reach:
            cluster.append((place, send))
            reach = max(reach, last)
            continue
        _lay_out(requests, ticks, cluster, positions)
        cluster, reach = [(place, send)], last
    _lay_out(requests, ticks, cluster, positions)
    return ticks, readies, positions


def _lay_out(requests: Sequence[TraceRequest], ticks: list[int], cluster: list[tuple[int, array[int]]], positions: array[int]) -> None:
    """The places of ``cluster`` (place, its positions in send order) merged by send key onto ``positions``."""
    if len(cluster) == 1:
        positions.extend(cluster[0][1])
    elif cluster:
        positions.extend(key[3] for key in heapq.merge(*(_send_keys(requests, ticks, place, send) for place, send in cluster)))
    cluster.clear()


def _send_keys(requests: Sequence[TraceRequest], ticks: list[int], place: int, send: array[int]) -> Iterator[tuple[int, int, int, int]]:
    """The send-order keys of one file's positions ``send`` (in its send order), one at a time."""
    for i in send:
        yield ticks[i], place, requests[i].seq, i


def file_clock(requests: Sequence[TraceRequest], group: Sequence[int], ticks: list[int], readies: list[int]) -> list[int]:
    """The ticks and ready ticks (into ``ticks``, ``readies``, by position) of the requests at
    ``group`` (ascending positions holding every request of their lanes: one file's), each lane's
    never running backwards in the file's order (seq, then position); see :func:`clock_by_position`.
    Returns the positions in that order."""
    in_order = sorted(group, key=lambda i: requests[i].seq)
    last_tick: dict[tuple[str, str], int] = {}
    untimed: dict[tuple[str, str], int] = {}  # per lane, its calls before its first send time
    timed: set[tuple[str, str]] = set()
    for i in in_order:
        r = requests[i]
        lane_key = (r.file, r.lane)
        if lane_key in timed:
            continue
        if r.sent_ms is None:
            untimed[lane_key] = untimed.get(lane_key, 0) + 1
            continue
        timed.add(lane_key)
        if lane_key in untimed and r.sent_ms > untimed[lane_key]:
            last_tick[lane_key] = r.sent_ms - untimed[lane_key] - 1
    del untimed, timed
    for i in in_order:
        r = requests[i]
        lane_key = (r.file, r.lane)
        base = r.sent_ms if r.sent_ms is not None else last_tick.get(lane_key, 0) + 1
        tick = max(base, last_tick.get(lane_key, base))
        last_tick[lane_key] = tick
        ticks[i] = tick
        readies[i] = max(tick, r.ready_ms) if r.ready_ms is not None else tick
    return in_order


def _lane_starts(requests: Sequence[TraceRequest]) -> dict[tuple[str, str], TraceRequest]:
    """Each lane's first request (its lowest position in the file's stream)."""
    first: dict[tuple[str, str], TraceRequest] = {}
    for r in requests:
        lane = (r.file, r.lane)
        if lane not in first or r.seq < first[lane].seq:
            first[lane] = r
    return first


def chain_origins(requests: Sequence[TraceRequest]) -> dict[Key, Key]:
    """Per lane start whose prompt extends a call of another lane (``prefix.parent`` names that
    call's node: a Codex subagent's first call and its parent's call at the spawn, a fork's and
    its source's call at the fork point), that call: what the provider could have served it."""
    wanted: dict[str, list[TraceRequest]] = defaultdict(list)
    for r in _lane_starts(requests).values():
        if r.prefix is not None and r.prefix.parent is not None:
            wanted[r.prefix.parent].append(r)
    out: dict[Key, Key] = {}
    if not wanted:
        return out
    for r in requests:
        if r.prefix is None or r.prefix.node not in wanted:
            continue
        for start in wanted.pop(r.prefix.node):
            if (start.file, start.lane) != (r.file, r.lane):
                out[(start.file, start.lane, start.seq)] = (r.file, r.lane, r.seq)
    return out


def _unlinked_starts(requests: Sequence[TraceRequest], origins: Mapping[Key, Key]) -> str | None:
    """The note for lane starts whose prompt extends a call no log of the audit holds (a
    subagent's parent or a fork's source thread whose log was not given): measured from the head."""
    starts = [
        r for r in _lane_starts(requests).values()
        if r.prefix is not None and r.prefix.parent is not None and (r.file, r.lane, r.seq) not in origins
        and r.lane_kind in ("main", "subagent")
    ]
    # Only the nodes these starts name are looked for (a set of every request's node is 60 bytes a request).
    parents = {r.prefix.parent for r in starts}  # type: ignore[union-attr]
    held = {r.prefix.node for r in requests if r.prefix is not None and r.prefix.node in parents} if parents else set()
    missing = sorted((r.file, r.line) for r in starts if r.prefix.parent not in held)  # type: ignore[union-attr]
    if not missing:
        return None
    where = ", ".join(f"{Path(file).name}:{line}" for file, line in missing[:3]) + (", ..." if len(missing) > 3 else "")
    return (
        f"{len(missing)} lane start(s) extend a call of another thread whose log is not in this audit ({where}): "
        "their expected read is the head's, not that thread's cached prefix"
    )


def compaction_sources(order: Iterable[TraceRequest]) -> dict[Key, Key]:
    """Per compaction call (in send order), the main-lane request of its session sent last before
    it: the conversation it summarizes, whose cached prefix it can replay (``order``: read once).

    The session is the call's own file (an HTTP capture, an OpenCode session), or the file whose
    folder holds it (Claude Code 2.x: ``<session>.jsonl`` and ``<session>/subagents/agent-acompact-*.jsonl``).
    """
    latest: dict[str, TraceRequest] = {}
    by_stem: dict[str, str] = {}
    stems: set[str] = set()
    out: dict[Key, Key] = {}
    for r in order:
        if r.is_compaction_call:
            main = latest.get(r.file)
            if main is None:
                owner = next((by_stem[str(p)] for p in list(Path(r.file).parents)[:3] if str(p) in by_stem), None)
                main = latest.get(owner) if owner is not None else None
            if main is not None:
                out[(r.file, r.lane, r.seq)] = (main.file, main.lane, main.seq)
        elif r.lane_kind == "main":
            latest[r.file] = r
            if r.file not in stems:  # a path's stem once a file, not once a request
                stems.add(r.file)
                by_stem.setdefault(str(Path(r.file).with_suffix("")), r.file)
    return out


#: The TTL a request writes with under a counterfactual ("5m", "1h"), or None: as logged.
TtlPolicy = Callable[[TraceRequest], str | None]


#: One part of :class:`Predictor`'s state: (kind, namespace, name); see :func:`state_slots`.
Slot = tuple[str, str, object]


def state_slots(r: TraceRequest, heads: Heads, source: TraceRequest | None = None) -> list[Slot]:
    """The parts of :class:`Predictor`'s state that predicting ``r`` may read or write: two
    requests that share none (nor, through other requests, a chain of them) predict the same
    alone as together. ``source``: the main request a compaction call is linked to.

    * ``blocks``: the one set of block hashes every block-hash request reads and extends;
    * ``body``: a provider's byte-level cache, shared by every body of that provider;
    * ``node``: a chain node of a provider's chain model (the request's own, its parent, and the
      node of the main request a compaction call extends): entries, parents and the walk back
      along a chain all go through node names;
    * ``head``: a head's entry ``(model, head key)`` in a provider's chain model (:func:`head_entry`: of
      the upstream that served the request, where the log names it), where the head's
      size is known (else it has no entry) and the account does not keep it warm (a warm head is
      read without looking at its entry).

    Keep this in step with :class:`Predictor`: what-if re-simulates only the requests that share
    a slot, directly or through others, with a request a fix changes."""
    if r.hash_ids is not None:
        return [("blocks", "", "")]
    if r.body is not None:
        return [("body", r.provider, "")]
    if r.prefix is None or r.usage is None:
        return []
    space = chain_rules(r.provider).name
    prefix = r.prefix
    out: list[Slot] = [("node", space, prefix.node)]
    if prefix.parent is not None:
        out.append(("node", space, prefix.parent))
    if source is not None and source.prefix is not None:
        out.append(("node", space, source.prefix.node))
    if heads.get(prefix.head) is not None and prefix.head not in heads.warm:
        out.append(("head", space, (r.model, head_entry(r, prefix.head))))
    return out


class Predictor:
    """One cache per provider and mechanism, shared by every file of the audit (one account).
    ``ttl`` (what-if) overrides the TTL each request writes with. The state one request's
    prediction touches: :func:`state_slots`. ``in_order``: the requests come in send order (their
    ticks never go back), so the chain models keep an expired entry as a tombstone
    (:class:`~prefixbench.simulator.chain.ChainCache`)."""

    def __init__(self, heads: Heads, ttl: TtlPolicy | None = None, keep: Collection[Key] | None = None, follow: bool = True,
                 in_order: bool = False) -> None:
        self.heads = heads
        self.in_order = in_order
        #: Whether a provider whose rules say its reads keep to the checkpoint last read
        #: (:attr:`~prefixbench.simulator.providers.base.ProviderRules.follows_reads`) is predicted so.
        self.follow = follow
        #: Per lane, its latest chain request: (node, model, cacheable prompt, reported read,
        #: upstream), for :meth:`_follow`.
        self.last_reads: dict[tuple[str, str], tuple[str, str, int, int, str]] = {}
        #: The lanes a request of which reported reading anything, for :meth:`_follow`.
        self.lanes_read: set[tuple[str, str]] = set()
        #: Per provider, the requests :meth:`_follow` predicted otherwise than the chain model.
        self.followed: Counter[str] = Counter()
        #: The predictions an upstream's lag changed (:attr:`TraceRequest.read_lag`), by
        #: (provider, model, upstream, lag).
        self.lagged: Counter[tuple[str, str, str, int]] = Counter()
        #: The first requests predicted to read their group's common head (``common-head``), by
        #: (provider, model, level, earlier first requests that read it).
        self.common: Counter[tuple[str, str, int, int]] = Counter()
        #: Per node named by what its call sends (:data:`~prefixbench.simulator.chain.BY_CONTENT`:
        #: a lane start), ``file:line`` of the latest call that wrote its entry.
        self.start_writers: dict[str, str] = {}
        #: Per request (file, lane, seq), the ``file:line`` of the earlier call whose entry at
        #: its own start node it was predicted to read (the caller pops it).
        self.start_reads: dict[Key, str] = {}
        self.warm = frozenset(heads.warm)
        #: Heads read at lane starts only (:attr:`Heads.start_warm`).
        self.start_warm = frozenset(heads.start_warm)
        self.ttl = ttl
        self.chains: dict[str, ChainCache] = {}
        #: Per provider name, :func:`chain_rules` of it and their chain model (:meth:`_chain`).
        self.chained: dict[str, tuple[ProviderRules, ChainCache]] = {}
        self.bodies: dict[str, SimulatedProvider] = {}
        #: The keys of :attr:`bodies` whose model replays in a step of its own, not the one asked.
        self.own_step: set[str] = set()
        self.blocks: set[int | str] = set()
        #: Each chain request's prefix, so a compaction call can extend its main request's node
        #: (only the requests in ``keep``, the compaction calls' sources, when given).
        self.nodes: dict[Key, Prefix] = {}
        self.keep = keep
        #: The chain model's own prediction of each request :meth:`_follow` predicted otherwise
        #: (what a predictor that does not follow gives it; few: the followed providers' only).
        self.unfollowed: dict[Key, Prediction] = {}
        #: The chain model's family per (model, envelope, speed, upstream): one string each, not one
        #: a request.
        self.families: dict[tuple[str, tuple[tuple[str, str], ...], str, str], str] = {}
        #: The lanes whose first request was predicted (a provider whose ``reads_stored_head`` is
        #: off reads no head at a lane start but a warm one).
        self.started: set[tuple[str, str]] = set()
        #: Per lane, its latest run of chain nodes each extended by the next alone, the uses of its
        #: last and their chain model, for :meth:`_forget`.
        self.runs: dict[tuple[str, str], list] = {}
        #: Per lane, the model of its latest chain request (a model the provider's
        #: ``unread_after_switch`` names reads nothing right after a switch to it).
        self.lane_models: dict[tuple[str, str], str] = {}
        #: Per lane, the tick its latest chain request was sent at, None where the log gives no
        #: send time (a provider's ``unread_after_idle_ms`` reads nothing after its lane idled
        #: that long: told only between two known send times, not across the counter ticks
        #: :func:`clock_by_position` gives a call without one).
        self.lane_ticks: dict[tuple[str, str], int | None] = {}
        #: The same per lane and model: a lane that went back to a model it left idles, for that
        #: model's entry, since its own latest request, not the other model's.
        self.model_ticks: dict[tuple[str, str, str], int | None] = {}

    def predict(self, r: TraceRequest, tick: int, ready: int, source: Key | None = None, uses: int | None = None) -> Prediction:
        """``source``: for a compaction call, the main request it summarizes (:func:`compaction_sources`).
        ``uses``: how many later requests extend ``r``'s node (:func:`node_uses`; None: unknown),
        which lets the chain model forget nodes no later call's walk back reaches (:meth:`_forget`)."""
        if r.hash_ids is not None:
            return self._blocks(r)
        if r.body is not None:
            return self._body(r, tick, ready)
        if r.prefix is None or r.usage is None:
            return Prediction(0, 0, r.usage.prompt if r.usage else 0, "none")
        prefix = r.prefix
        main = self.nodes.get(source) if source is not None else None
        if main is not None and prefix.parent is None and main.head == prefix.head:
            # A compaction call that starts its own chain under the main lane's head (Claude Code
            # 2.x's agent-acompact lane) sends the main conversation again, then its instruction:
            # it reads the main lane's prefix.
            prefix = replace(prefix, parent=main.node, new_blocks=1)
        key = (r.file, r.lane, r.seq)
        if self.keep is None or key in self.keep:
            self.nodes[key] = r.prefix
        pred = self._chain(r, prefix, r.usage, tick, ready, uses)
        provider = rules_for(r.provider)
        if self.follow and provider.follows_reads:
            followed = self._follow(r, prefix, pred, provider)
            if followed is not pred:
                self.unfollowed[key] = pred
            pred = followed
        lane = (r.file, r.lane)
        switched = self.lane_models.get(lane, r.model) != r.model
        self.lane_models[lane] = r.model
        own = switched and (*lane, r.model) in self.model_ticks
        before = self.model_ticks[(*lane, r.model)] if own else self.lane_ticks.get(lane)
        idle = tick - before if before is not None and r.sent_ms is not None else 0
        self.lane_ticks[lane] = self.model_ticks[(*lane, r.model)] = tick if r.sent_ms is not None else None
        limit = provider.unread_after_idle(r.model)
        if pred.read and ((switched and not provider.reads_after_switch(r.model)) or 0 < limit < idle):
            # The lane's previous request went to another model, or was sent that long before:
            # nothing is read, neither this model's earlier prefix in the lane nor the head
            # (Gemini, measured: unread_after_switch on 2.5, unread_after_idle_ms, 20 min on 3 Flash).
            # An idle past the limit is kept for the row's detail to name.
            idled = (idle, limit) if 0 < limit < idle else (0, 0)
            pred = replace(pred, read=0, uncached=_predicted_uncached(provider, r.usage, 0, pred.write),
                           idle_ms=idled[0], idle_limit_ms=idled[1], idle_since_model=own and idled[1] > 0)
        elif pred.unread_until_read and 0 < limit < idle:
            # unread_until_read predicted nothing already (a Gemini 2.5 lane that has not read yet),
            # and the lane also idled past the limit: the row's detail names that rule as the one
            # that decided, and the idle as an added fact. (Not for a zero the chain model gave, a
            # prefix too short to cache say: the idle rule has nothing to add there.)
            pred = replace(pred, idle_ms=idle, idle_limit_ms=limit, idle_since_model=own, idle_also=True)
        return pred

    def _follow(self, r: TraceRequest, prefix: Prefix, pred: Prediction, rules: ProviderRules) -> Prediction:
        """A provider whose reads keep to the checkpoint last read (Gemini, measured: see
        :mod:`prefixbench.simulator.providers.gemini`): a request that extends its lane's previous
        one, same model, is predicted to read what that one reported reading (an earlier call's
        report, never its own), where its prompt holds that much; on a model whose reads count
        in a checkpoint grid, the newest checkpoint inside the shared prefix where that lies
        higher. A read of 0 keeps the lane's earlier read (a lapse: the next read mostly returns to
        it); before any read, the chain model's prediction stands, or on a model that reads nothing
        until its lane has read (Gemini 2.5: ``unread_until_read``), nothing."""
        usage = r.usage
        assert usage is not None
        lane = (r.file, r.lane)
        last = self.last_reads.get(lane)
        read_before = lane in self.lanes_read  # (an earlier request's report, never its own)
        cacheable = rules.cacheable(usage)
        if usage.cache_reported:
            kept = usage.cache_read
            if kept == 0 and last is not None and last[1] == r.model and last[4] == r.upstream and prefix.parent == last[0]:
                # A read of 0 in the middle of a lane (same model, the prompt extended) leaves the
                # checkpoint read before it: the next read mostly returns to it (measured, below).
                kept = last[3]
            self.last_reads[lane] = (prefix.node, r.model, cacheable, kept, r.upstream)
            if usage.cache_read:
                self.lanes_read.add(lane)
        else:
            self.last_reads.pop(lane, None)
        if last is None or pred.by != "chain":
            return pred
        node, model, before, read, upstream = last
        # Only a request that holds the whole previous prompt (a prompt that shrank changed
        # something inside it: the chain model's walk back decides what it shares), sent to the
        # same upstream (another's checkpoint is not this one's).
        if prefix.parent != node or model != r.model or upstream != r.upstream or before > cacheable or pred.read == 0:
            return pred
        if read <= 0 and not read_before and not rules.reads_before_a_read(r.model):
            # A lane that has read nothing yet reads nothing (Gemini 2.5, measured:
            # unread_until_read), whatever checkpoint step the model has (before the head's).
            self.followed[rules.name] += 1
            return replace(pred, read=0, uncached=_predicted_uncached(rules, usage, 0, pred.write), unread_until_read=True)
        gridded = rules.read_step(r.model, r.read_step) > 1
        if read <= 0 and gridded and rules.head_checkpoint and not r.read_offset and self.heads is not None:
            # The lane has read nothing yet: its first checkpoint is the head (system prompt and
            # tools), where its size is known (Gemini, measured: head_checkpoint), no newer one
            # until a request left new_checkpoint_min tokens past it.
            head = self.heads.get(prefix.head) or 0
            read = head if head <= before else 0
        if read <= 0:
            return pred
        # (An upstream's own lag wins over the model's: gemini-3-flash through the upstream Kilo's
        # gateway names Google, Vertex AI, measured; the reader set it with the step: read_lag.)
        lag = None if gridded else ((r.read_lag, 0) if r.read_lag else rules.read_lag(r.model))
        if gridded and r.read_offset and read >= r.read_offset:
            # On the grid an upstream reads on (gemini-3-flash through Google AI Studio, measured:
            # upstream_grids), the newer checkpoints lie whole steps past the one the lane read, as
            # the lane's own counts go (they fall behind the grid's points as its prompts grow).
            step = rules.read_step(r.model, r.read_step)
            followed = max(read, read + (min(before, cacheable) - read) // step * step)
        elif gridded:
            # On a grid, a newer checkpoint only once the previous request left enough uncached
            # past the one it read (Gemini, measured: new_checkpoint_min).
            followed = max(pred.read, read) if before - read >= rules.new_checkpoint_min else read
        elif lag is not None:
            # A model whose reads trail the previous prompt (Gemini 2.5, measured: read_lag_by_model;
            # gemini-3-flash through Kilo's gateway's Vertex AI upstream: upstream_read_lags):
            # once the previous request left enough uncached past its read, the higher of the
            # last read and that prompt less the lag.
            trail, after = lag
            followed = max(read, min(pred.read, before - trail)) if before - read >= after else read
            if r.read_lag and followed != read and followed != pred.read:
                # (The predictions the upstream's lag changed, for its note.)
                self.lagged[(r.provider, r.model, r.upstream, r.read_lag)] += 1
        else:
            followed = read
        if followed == pred.read:
            return pred
        uncached = _predicted_uncached(rules, usage, followed, pred.write)
        self.followed[rules.name] += 1
        return replace(pred, read=followed, uncached=uncached)


    def _chain(self, r: TraceRequest, prefix: Prefix, usage: Usage, tick: int, ready: int, uses: int | None = None) -> Prediction:
        chained = self.chained.get(r.provider)
        if chained is None:  # (the rules and their model once a provider, not two lookups a request)
            rules = chain_rules(r.provider)
            chained = self.chained[r.provider] = (rules, self._chain_cache(rules))
        rules, cache = chained
        ttl = self._ttl_label(r, usage)
        # Fast and standard calls do not share cached prefixes (Anthropic's fast-mode page:
        # "Requests at different speeds do not share cached prefixes"): a fast call is a family
        # of its own.
        # An upstream a gateway names keeps a cache of its own (OpenRouter routing one model to
        # DeepSeek, DeepInfra, Chutes...): its calls read its own entries only, never another's,
        # the head's included.
        speed, upstream = r.speed, r.upstream
        family = self.families.get((r.model, r.envelope, speed, upstream))
        if family is None:
            family = self.families[(r.model, r.envelope, speed, upstream)] = (
                f"{r.model}|{r.envelope}" + (f"|{speed}" if speed else "") + upstream_key(r))
        head_tokens = self.heads.get(prefix.head)
        lane = (r.file, r.lane)
        head_warm = prefix.head in self.warm
        if lane not in self.started:
            self.started.add(lane)
            head_warm = head_warm or prefix.head in self.start_warm
            if not rules.reads_stored_head and prefix.head not in self.warm:
                head_tokens = None  # (a lane start: the head other lanes sent is not read)
        verdict = cache.observe_positional(  # (ChainCache.observe's arguments, by position)
            family,
            head_entry(r, prefix.head),  # head
            head_tokens,
            prefix.node,  # node
            prefix.parent,  # parent
            prefix.new_blocks,  # new_blocks
            rules.cacheable(usage),  # cacheable
            r.model,  # model
            tick,
            ready,
            ttl,
            head_warm,
            prefix.replayed_output(usage.output) if prefix.replays_output or prefix.output_written else 0,  # output
            prefix.output_written,  # output_written
            r.read_step,  # step
            r.read_offset,  # offset
            prefix.shared,  # shared
            r.sent_ms,  # sent_ms
            end_tick(r, ready),  # done
            bool(r.read_offset) and grid.keeps_output(r),  # grid_output
        )
        if prefix.parent is None and prefix.node.startswith(BY_CONTENT):
            if verdict.source == "node":
                self.start_reads[(r.file, r.lane, r.seq)] = self.start_writers.get(prefix.node, "?")
            elif verdict.write:
                self.start_writers[prefix.node] = f"{r.file}:{r.line}"
        if uses is not None and self.in_order:
            self._forget(cache, lane, prefix, uses)
        read = verdict.read
        level, agreed = self.heads.common_starts.get((r.file, r.lane, r.seq), (0, 0))
        by = "chain"
        if read < level <= rules.cacheable(usage) - verdict.write:
            # A lane's first request from the third of its model, folder and day: the head the
            # earlier ones stored as their common prefix (``third_starts_read_common_head``).
            read, by = level, "common-head"
            self.common[(r.provider, r.model, level, agreed)] += 1
        uncached = _predicted_uncached(rules, usage, read, verdict.write)
        if rules.is_additive and read == 0 and verdict.write == 0:
            uncached = usage.prompt  # below the minimum: nothing cached
        return Prediction(
            read, verdict.write, uncached, by, verdict.in_flight, verdict.expired,
            verdict.write if ttl in rules.long_write_ttls else 0,
        )

    def _forget(self, cache: ChainCache, lane: tuple[str, str], prefix: Prefix, uses: int) -> None:
        """After ``prefix``'s node is observed: where it extends its lane's last node, and that
        node is extended by it alone, it goes on the lane's run of such nodes; once the run is
        longer than the chain model's walk back, its first node is forgotten. No later call reaches
        it: a walk back starts at a call's parent and stops ``max_walk`` nodes on, and every node
        of the run below it is extended by the next one alone (what :func:`node_uses` counted,
        the compaction calls' sources included), so a later call's parent is the run's last node
        or below it, ``max_walk`` nodes away at the least. (A node of unknown uses joins no run:
        the next node's parent is then not a run's last, and a run starts again there.)"""
        run = self.runs.get(lane)
        if run is not None and run[1] == 1 and run[2] is cache and run[0][-1] == prefix.parent:
            nodes = run[0]
            nodes.append(prefix.node)
            run[1] = uses
            if len(nodes) > cache.max_walk:
                cache.forget(nodes.popleft())
        else:
            self.runs[lane] = [deque((prefix.node,)), uses, cache]

    def _chain_cache(self, rules: ProviderRules) -> ChainCache:
        cache = self.chains.get(rules.name)
        if cache is None:  # made once a provider, not once a request (setdefault would build one each time)
            cache = self.chains[rules.name] = ChainCache(rules, in_order=self.in_order)
        return cache

    def _ttl_label(self, r: TraceRequest, usage: Usage) -> str:
        """The TTL a chain request writes with."""
        asked = self.ttl(r) if self.ttl else None
        provider = rules_for(r.provider)
        if provider.request_ttl is not None:
            # The provider decides per request (OpenAI): a what-if's retention where the model
            # offers it, else the body's, else the model's default on the day it was sent.
            return provider.ttl_label(r.model, asked or r.asked_retention, r.sent_ms) or "5m"
        return asked or ("1h" if usage.cache_write_1h else "5m")

    def head_touch(self, r: TraceRequest, tick: int, ready: int) -> tuple[bool, int | None, int]:
        """For a chain request under a head whose entry the chain model keeps (see
        :func:`pass_parts`), sent at ``tick`` and answered from ``ready``: whether it stores that
        entry, the lifetime its writes get (None: no end), and the latest tick that lifetime
        counts from (the response's end where the model counts from there: ``ttl_from='end'``,
        as :meth:`_chain` passes it), whatever the model holds (all depend on the request alone)."""
        assert r.prefix is not None and r.usage is not None
        rules = chain_rules(r.provider)
        cache = self._chain_cache(rules)
        stores = cache.stores_head(model=r.model, head_tokens=self.heads.get(r.prefix.head),
                                   cacheable=rules.cacheable(r.usage), sent_ms=r.sent_ms)
        ended = end_tick(r, ready) if cache.ttl_from == "end" else None
        since = max(tick, ready) if ended is None else max(tick, ready, ended)
        return stores, cache.rules.ttl_ms(self._ttl_label(r, r.usage)), since

    def expire_head(self, r: TraceRequest) -> None:
        """Before ``r``: its head's entry was stored by requests not predicted here and has
        expired (see :meth:`ChainCache.expire_head`)."""
        assert r.prefix is not None
        head_tokens = self.heads.get(r.prefix.head)
        assert head_tokens is not None
        self._chain_cache(chain_rules(r.provider)).expire_head(model=r.model, head=head_entry(r, r.prefix.head), head_tokens=head_tokens)

    def _body(self, r: TraceRequest, tick: int, ready: int) -> Prediction:
        rules = rules_for(r.provider)
        step = rules.read_step(r.model, r.read_step)
        key = r.provider if step == rules.block_tokens else f"{r.provider}|{step}"  # a model with its own step
        dated = rules.body_options_at(r.sent_ms)  # the provider's rules on the day it was sent (Gemini's minimums)
        if dated:
            key += "|" + ",".join(f"{k}={v}" for k, v in dated)
        if r.speed:
            key += f"|speed={r.speed}"  # fast calls cache apart from standard ones (see _chain)
        key += upstream_key(r)  # each upstream a gateway names caches apart (see _chain)
        provider = self.bodies.get(key)
        if provider is None:
            cache, stepped = _body_cache(r.provider, step, dated)
            provider = self.bodies[key] = SimulatedProvider(cache=cache)
            if not stepped:
                self.own_step.add(key)
        assert r.body is not None
        body = r.body
        ttl = self.ttl(r) if self.ttl else None
        if ttl is not None and rules.ttl_per_request:
            body = _with_ttl(body, ttl)
        if rules.request_ttl is not None:
            # The lifetime this request gets (a what-if's, where the model offers it; else the
            # body's or the model's default on the day it was sent), for the model to keep to.
            asked = ttl or r.asked_retention
            body = replace(body, retention=rules.ttl_label(r.model, asked, r.sent_ms))
        seen = provider.send(body, tick, ready_tick=ready)
        if r.reply and rules.bodies_keep_output:
            # The provider keeps the response after the prompt: a next body that sends it back
            # byte for byte reads into it.
            provider.record_reply(seen, body, r.reply)
        written = seen.written_tokens if rules.bills_writes else 0
        written_1h = seen.written_long_tokens if rules.bills_writes else 0
        read, prompt = seen.cached_tokens, seen.prompt_tokens
        scale = self._token_scale(r, prompt, read, step)
        if scale is not None:
            # The byte-level model counts its own tokens (a few bytes each); the provider's
            # tokenizer counted the logged prompts otherwise. The read, the write and the rest
            # keep their places in the prompt, counted in the provider's tokens, the read in its
            # steps.
            total, cached = scale.tokens(prompt), seen.cached_tokens
            end = scale.tokens(cached)
            if cached and step > 1 and key in self.own_step:
                # The model replayed in its own step (--read-step asked one it cannot take): its
                # read, counted in the provider's tokens, down to the step asked.
                read = min(total, end) // step * step
            elif cached and step > 1 and rules.body_step_option == "block":
                # The model read whole steps of its own tokens: the match ended somewhere in the
                # next step. At the lane's previous prompt's end when that lies there (a call
                # extending the previous one), else at the step's middle; then counted in the
                # provider's steps.
                match = scale.at if cached <= scale.at < cached + step else min(prompt, cached + step // 2)
                read = rules.round_read(min(total, scale.tokens(match)), r.model, step)
            elif cached and step > 1 and getattr(provider.cache, "whole_units", False):
                # DeepSeek reads whole units of its own tokens, at a message end's unit too: the
                # unit the model read, counted in the provider's tokens, down to its step.
                read = min(total, end) // step * step
            else:  # read to the token
                read = min(total, end)
            written = min(total - read, scale.tokens(cached + written) - end) if written else 0
            written_1h = min(written, scale.tokens(cached + written_1h) - end) if written_1h else 0
            prompt = total
        level = self.heads.body_starts.get((r.file, r.lane, r.seq), 0)
        if read < level <= prompt - written:
            # A lane's first body, where the first bodies of its model agree on a read: the head
            # the bodies leave out, kept warm (``body_starts_read_warm_level``).
            read = level
        return Prediction(read, written, prompt - read - written, "body", write_1h=written_1h)

    def _token_scale(self, r: TraceRequest, prompt: int, read: int, step: int) -> TokenScale | None:
        """How ``r``'s body's model tokens map to the provider's (None: no report to map by)."""
        key = (r.file, r.lane, r.seq)
        scale = self.heads.token_scales.get(key)
        if scale is None and r.usage is not None and r.usage.prompt and prompt:
            lane = (r.file, r.lane)
            scale = self.heads.token_scales[key] = TokenScale.learn(self.heads.last_sizes.get(lane), prompt, r.usage.prompt, read, step)
            self.heads.last_sizes[lane] = (prompt, r.usage.prompt)
        return scale

    def _blocks(self, r: TraceRequest) -> Prediction:
        assert r.hash_ids is not None
        length = int(r.envelope_dict.get("input_length", "0"))
        sizes = r.block_tokens
        assert sizes is not None  # the block-hash importer sets both
        # The blocks seen before, from the first up to the first unseen one (scanned in C: a
        # request of an agent trace holds thousands), and then the rest stored.
        known = len(list(takewhile(self.blocks.__contains__, r.hash_ids)))
        shared = sum(sizes[:known])
        self.blocks.update(r.hash_ids[known:])
        read = min(length, shared)
        return Prediction(read, 0, length - read, "blocks")


def lag_notes(lagged: Mapping[tuple[str, str, str, int], int]) -> tuple[str, ...]:
    """One note per upstream whose lag (:attr:`TraceRequest.read_lag`) changed predictions: how
    many, and what the lag is."""
    return tuple(
        f"{provider} reads of {model} through the upstream {upstream} predicted to the token ({n:,} prediction(s) "
        f"its lag moved): the reads that upstream served lie on no grid, short of the previous prompt by a "
        f"varying amount (measured), so a read followed from the lane's last one moves up to the previous "
        f"prompt less {trail:,} tokens, not onto the model's {rules_for(provider).read_step(model):,}-token steps"
        for (provider, model, upstream, trail), n in sorted(lagged.items()))


def common_head_notes(common: Mapping[tuple[str, str, int, int], int]) -> tuple[str, ...]:
    """One note per model and level of the first requests predicted to read their group's common
    head (``third_starts_read_common_head``): how many, and how many earlier first requests of
    the group read that level."""
    found: dict[tuple[str, str, int], list[int]] = {}
    for (provider, model, level, agreed), n in sorted(common.items()):
        found.setdefault((provider, model, level), []).extend([agreed] * n)
    return tuple(
        f"{len(agreed)} first call(s) of {provider} {model} predicted from the level {level:,} tokens that "
        + (f"{agreed[0]}" if min(agreed) == max(agreed) else f"{min(agreed)} to {max(agreed)}")
        + " earlier first calls of their group (model, session folder, UTC day) read, more than read 0 or another "
        "level (predicted_by common-head): the head earlier sessions stored as their common prefix, not in the log"
        for (provider, model, level), agreed in found.items())


def follow_note(followed: Mapping[str, int]) -> str:
    """The report's note on the requests :meth:`Predictor._follow` predicted."""
    counts = ", ".join(f"{name}: {n} request(s)" for name, n in sorted(followed.items()))
    reasons = [rules_for(name).follow_reason for name in sorted(followed)]
    return (
        f"reads predicted to keep to the checkpoint the lane's previous request read ({counts}): "
        f"{' and '.join(reasons)} {'is' if len(reasons) == 1 else 'are'} predicted from the last read "
        f"{'it' if len(reasons) == 1 else 'each'} reported, "
        "never the request's own; a miss is still counted against the previous prompt; --no-follow-reads predicts the "
        "shared prefix instead"
    )


def _body_cache(
    provider: str, step: int | None = None, dated: tuple[tuple[str, object], ...] = ()
) -> tuple[CacheModel, bool]:
    """The byte-level model that replays a provider's bodies: its own when it has one, else the
    reference; ``step``: a model's own read step where the rules give it one (Kimi's coding plan,
    DeepSeek before V4), or ``--read-step``'s; ``dated``: options of the provider's rules as they
    stood when the body was sent (``ProviderRules.body_options_at``). The flag: whether the
    model replays in ``step`` (False: in its own, ``step`` being one it cannot take)."""
    rules = rules_for(provider)
    if rules.body_model is None:
        return make_cache("byte-exact"), True
    options = dict(rules.body_model_options) | dict(dated)
    if rules.caches_output:
        options.setdefault("cache_output", True)
    if step is not None and step != rules.block_tokens:
        try:
            return make_cache(rules.body_model, **options, **{rules.body_step_option: step}), True
        except UserError:
            # A step the model cannot replay in (--read-step anthropic=64: its model reads to
            # the token; deepseek=1: its units are 64 or 128 tokens): the model replays in its
            # own, and the read is counted in the step after it (see _body).
            return make_cache(rules.body_model, **options), False
    return make_cache(rules.body_model, **options), True


def _with_ttl(body: Request, ttl: str) -> Request:
    """The body with every cache breakpoint (and automatic caching) writing with ``ttl``."""
    return replace(
        body,
        cache_breakpoints=tuple(replace(bp, ttl=ttl) for bp in body.cache_breakpoints),  # type: ignore[arg-type]
        auto_cache=None if body.auto_cache is None else ttl,  # type: ignore[arg-type]
    )


def wrote(r: TraceRequest) -> bool:
    """Whether ``r``'s usage gives a write above 0 (:func:`writes_reported`)."""
    return r.usage is not None and r.usage.cache_write > 0 and writes_reported(r.provider, r.usage)


def _written_bound(r: TraceRequest, prev: Previous) -> int | None:
    """The most ``r`` can read of what ``prev`` stored, where its provider's rules bound reads by a
    trusted write count (:meth:`~prefixbench.simulator.providers.base.ProviderRules.written_bound`);
    None otherwise, or where either call reports no usage. Not what ``prev`` left cached (that is
    :meth:`~prefixbench.simulator.providers.base.ProviderRules.left_cached`, which this bounds on
    such a provider): only whether a write count bounds it, for the detail of a read that took all
    of it while the rest of the prompt went uncached and unwritten."""
    p = prev.request
    if r.usage is None or p.usage is None:
        return None
    return rules_for(r.provider).written_bound(p.usage, prev.lane_wrote)


def _identity_expected(r: TraceRequest, previous: Previous) -> int:
    """What ``previous`` left cached that ``r`` could read (see the module doc)."""
    prev = previous.request
    if r.usage is None or prev.usage is None:
        return 0
    rules = rules_for(r.provider)
    left = rules.left_cached(prev.usage, previous.lane_wrote)
    if rules.is_additive:
        # Capped at the whole prompt, not at what this request cached: a request whose markers
        # do not reach the previous entry pays it as uncached input, and that is a miss.
        return min(r.usage.prompt, left)
    return rules.round_read(min(r.usage.prompt, left), r.model, r.read_step, r.read_offset)


class _Shared(msgspec.Struct):
    """What the audit keeps across requests: head sizes, when each head was first seen, each
    file's latest compaction line, and the prices."""

    heads: Heads
    prices: Prices
    #: The logged history of every chain (transcripts), for locating breaks.
    histories: Histories
    head_seen: dict[str, int] = msgspec.field(default_factory=dict)
    compaction_at: dict[str, int] = msgspec.field(default_factory=dict)
    #: The explicit caches the logs create, with their tokens (a read of another one says its
    #: storage is unknown).
    created: dict[str, int] = msgspec.field(default_factory=dict)
    #: Each file's lines, ascending, of responses sent without any token count (no call here), by lane.
    uncounted: dict[str, dict[str, tuple[int, ...]]] = msgspec.field(default_factory=dict)
    #: Each file's line of each call it holds that another file counts, by request id.
    copies: dict[str, dict[str, int]] = msgspec.field(default_factory=dict)


def _uncounted(summaries: Iterable[FileSummary]) -> dict[str, dict[str, tuple[int, ...]]]:
    """Each file's lines, ascending, of the responses its endpoint answered without any token
    count (:attr:`FileSummary.uncounted`, skipped as ``SENT_UNCOUNTED``), by lane: calls that were
    sent, and may have cached, though the log counts none of them."""
    out: dict[str, dict[str, tuple[int, ...]]] = {}
    for summary in summaries:
        by_lane: dict[str, list[int]] = {}
        for line, lane in summary.uncounted:
            by_lane.setdefault(lane, []).append(line)
        if by_lane:
            out[summary.file] = {lane: tuple(sorted(lines)) for lane, lines in by_lane.items()}
    return out


def _copies(summaries: Iterable[FileSummary]) -> dict[str, dict[str, int]]:
    """Each file's line of each call it holds that another file counts (:attr:`FileSummary.copies`)."""
    return {summary.file: dict(summary.copies) for summary in summaries if summary.copies}


class _Step(msgspec.Struct, frozen=True):
    """One request as the audit explains it: with its lane's previous request, the model's
    prediction, its send tick and its position in the lane."""

    r: TraceRequest
    prev: Previous | None
    pred: Prediction
    tick: int
    index: int
    #: For a compaction call: the main request it summarizes (its session's last before it).
    source: Previous | None = None
    #: The request's logged history (transcript logs), None without one.
    segment: Segment | None = None
    #: The send tick of the latest request before it under its head, in any lane (None: none).
    head_used: int | None = None
    #: The later call of its lane that read past its read what no call since had written (:func:`read_later`).
    later: Later | None = None
    #: A lane start predicted to read the entry at its own node, named by what it sends (the
    #: same prompt sent again): ``file:line`` of the earlier call that wrote it.
    start_from: str | None = None

    @property
    def continues(self) -> bool:
        """It extends the lane's previous request (a body, or a prefix with a parent)."""
        r = self.r
        return self.prev is not None and (r.prefix is None or r.prefix.parent is not None or r.body is not None)


def _expected(step: _Step, shared: _Shared) -> int:
    """What should have been read."""
    r, pred, usage = step.r, step.pred, step.r.usage
    prev = step.prev.request if step.prev else None
    # A new chain that is not a compaction (a new root, a branch back to the start) could only
    # read the head; after a compaction the rebuilt context is counted against what it replaced.
    compacted = any(kind == "compaction" for kind, _ in r.events)
    if usage is None:
        return pred.read
    if r.explicit_cache is not None:
        # The client named its own cache: what it holds should be read (its creation's tokens
        # where these logs show it, else the report, the only account of it).
        return min(usage.prompt, shared.created.get(r.explicit_cache, usage.cache_read_explicit))
    if step.source is not None and step.source.request.usage is not None:
        # A compaction call could have replayed what the main request it summarizes left cached.
        return _identity_expected(r, step.source)
    if step.prev is not None and prev is not None and prev.usage is not None and (step.continues or compacted):
        return _identity_expected(r, step.prev)
    if r.body is not None:
        # A lane start with a body: what the model says was cached, unless the report is within
        # the model's token-count tolerance of it.
        return pred.read if pred.read > usage.cache_read * (1 + READ_TOLERANCE) else usage.cache_read
    head = shared.heads.get(r.prefix.head) if r.prefix is not None else None
    earlier = r.prefix is not None and r.prefix.head in shared.head_seen
    return head if (head is not None and earlier) else 0


def _dropped_part(step: _Step, expected: int) -> int:
    """Of ``expected`` (what the lane's previous request left cached), the tokens past the part of
    its prompt this request kept (``Prefix.shared``: a Codex turn sent without the previous turn's
    reasoning), which it did not send; 0 where it kept all of it."""
    r = step.r
    if r.prefix is None or r.prefix.shared is None or r.usage is None or step.prev is None:
        return 0
    if step.source is not None or r.explicit_cache is not None:
        return 0
    rules = rules_for(r.provider)
    kept = min(r.usage.prompt, r.prefix.shared)
    kept = kept if rules.is_additive else rules.round_read(kept, r.model, r.read_step, r.read_offset)
    return max(0, expected - kept)


def _identity(step: _Step) -> bool | None:
    """Additive usage: whether this read is exactly what the previous request read and wrote."""
    usage, prev = step.r.usage, step.prev.request if step.prev else None
    if usage is None or prev is None or prev.usage is None or not step.continues:
        return None
    if not rules_for(step.r.provider).is_additive:
        return None
    return usage.cache_read == prev.usage.cache_read + prev.usage.cache_write


def _uncounted_between(step: _Step, shared: _Shared) -> tuple[int, ...]:
    """The lines of responses of this request's lane with no token counts between the lane's
    previous request and this one in this request's file (``()`` where there are none). A previous
    request another file counted starts the window at its copy's line here (a resumed or forked
    session), whichever file was read first; one with no copy here leaves none."""
    lines = shared.uncounted.get(step.r.file, {}).get(step.r.lane)
    if not lines or step.prev is None:
        return ()
    prev = step.prev.request
    start = prev.line if prev.file == step.r.file else shared.copies.get(step.r.file, {}).get(prev.request_id)
    if start is None:
        return ()
    return lines[bisect_right(lines, start):bisect_left(lines, step.r.line)]


def _uncounted_words(lines: tuple[int, ...]) -> str:
    """What the responses at ``lines`` with no token counts tell: the evidence a surplus names."""
    shown = ", ".join(map(str, lines[:5])) + (f" and {len(lines) - 5} more" if len(lines) > 5 else "")
    if len(lines) == 1:
        return f"the log has a response with no token counts between them (its file's line {shown}), which was sent and may have cached"
    return (f"the log has {len(lines)} responses with no token counts between them (its file's lines {shown}), "
            "which were sent and may have cached")


def _surplus_detail(step: _Step, expected: int, identity: bool | None, shared: _Shared) -> str:
    """Why a request read more than expected, when it did, naming the evidence."""
    usage = step.r.usage
    if usage is None:
        return ""
    if identity is False and usage.cache_read > expected:
        between = _uncounted_between(step, shared)
        return (
            f"read {usage.cache_read - expected:,} tokens more than the previous request left cached: "
            + (_uncounted_words(between) if between else
               "a call the log does not count (aborted, no usage) or the provider's own checkpoints stored them")
        )
    if (identity is None and step.continues and usage.cache_read > max(expected, step.pred.read * (1 + READ_TOLERANCE))
            and (between := _uncounted_between(step, shared))):
        # (a provider whose usage is not additive, Z.AI's: no identity to break, but the calls the
        # log leaves uncounted are still its evidence; named where the read is past the
        # prediction's tolerance, not for a read within it)
        return f"read {usage.cache_read - expected:,} tokens more than the previous counted call left: {_uncounted_words(between)}"
    if step.prev is None and usage.cache_read > step.pred.read:
        return (
            f"read {usage.cache_read - step.pred.read:,} tokens more than the model predicts for a lane start: cached "
            "before the log begins (another session, or requests not in these files)"
        )
    prev = step.prev.request if step.prev is not None else None
    written = _written_bound(step.r, step.prev) if step.prev is not None and step.continues else None
    if written is not None and prev is not None and prev.usage is not None and usage.cache_read >= written and usage.uncached:
        return (
            f"read all {written:,} tokens the previous call read and wrote; the other {usage.uncached:,} were sent "
            "uncached and never written (the provider's usage counts writes, and a cache returns only what was "
            "written): unwritten, not counted as a loss"
        )
    # (the read tested first: the TTL is looked up only for a read above the prediction, a few requests)
    if prev is not None and usage.cache_read > step.pred.read * (1 + READ_TOLERANCE) and step.tick - step.prev.tick > ttl_ms(prev):
        # The model let the previous request's entry expire; the provider still served it. (One
        # string per TTL: the gap and the counts are the row's own columns.)
        ttl = ttl_ms(prev)
        said = _OUTLIVED.get(ttl)
        if said is None:
            said = _OUTLIVED[ttl] = (
                f"read more than the model predicts past the {duration(ttl)} TTL since the previous request: "
                "the provider kept its entry longer (a TTL is a minimum)"
            )
        return said
    rules = rules_for(step.r.provider)
    read, predicted = usage.cache_read, step.pred.read
    if prev is not None and prev.usage is not None and rules.follows_reads and abs(read - predicted) > READ_TOLERANCE * read:
        # A checkpoint that moved (Gemini): no loss, so no cause, but the row says why the
        # prediction missed rather than nothing.
        if read > rules.cacheable(prev.usage) and read > predicted:
            return (f"read {read - predicted:,} tokens more than predicted, {read - rules.cacheable(prev.usage):,} past the "
                    "previous prompt: the provider cached into the previous response or a call the log does not count "
                    "(not modelled)")
        moved = f"{read - predicted:,} tokens more" if read > predicted else f"{predicted - read:,} tokens less"
        return (f"read {moved} than predicted: the provider's checkpoint moved, which nothing in the log tells; "
                f"{rules.best_effort_note}; no loss")
    if prev is not None and read > predicted * (1 + READ_TOLERANCE):
        # Past the prediction by more than the tolerance with nothing above to tell why: the row
        # still says so, and what could have cached the rest.
        return (f"read {read - predicted:,} tokens more than the model predicts, and nothing in the log tells what "
                "cached them (a call the log does not record, another session under the same head, or the provider's "
                "own checkpoints): not modelled")
    return ""


#: The detail of a read past the TTL the model let expire, one string per TTL.
_OUTLIVED: dict[int, str] = {}


#: Causes that are a change of the prompt's content: a location names its likely change for these
#: (for a TTL expiry or a model change, where the prefix ended is told without a change).
CONTENT_CAUSES = frozenset({"messages-changed", "system-changed", "tools-changed", "breakpoint-placement", "unexplained"})

#: The detail of a request whose provider reported no cache fields.
NOT_REPORTED = "cache not reported: the provider's usage has no cache field, so neither a read nor a loss can be told"


def _within_step_slack(r: TraceRequest, lost: int) -> int:
    """``lost`` when it is a shortfall within the provider's :attr:`step_slack` of a read counted
    in a step of its own (a checkpoint grid), which is no miss; else 0."""
    if lost <= 0:
        return 0
    rules = rules_for(r.provider)
    if not rules.step_slack or lost > rules.step_slack or rules.read_step(r.model, r.read_step) <= 1:
        return 0
    return lost


def _explain(step: _Step, shared: _Shared) -> AuditRow:
    r, pred, usage = step.r, step.pred, step.r.usage
    expected = _expected(step, shared)
    read = usage.cache_read if usage is not None else pred.read
    seen = usage is not None and usage.cache_reported
    lost = max(0, expected - read) if seen else 0
    slack = _within_step_slack(r, lost)
    if slack:
        lost = 0
    identity = _identity(step)
    cause = evidence = inferred = also = also_tokens = also_usd = None
    detail = location = ""
    starts = step.prev is None or (r.prefix is not None and r.prefix.parent is None)
    if usage is not None and usage.cache_reported and (lost > 0 or (read == 0 and (starts or r.is_compaction_call))):
        head = shared.heads.get(r.prefix.head) if r.prefix is not None else None
        where = locate(step.segment, read, r) if step.segment is not None and lost > 0 else None
        levels = shared.heads.levels.get(r.prefix.head, ()) if r.prefix is not None else ()
        head_since = None if step.head_used is None else step.tick - step.head_used
        ev = Evidence(r, step.prev, pred, step.tick, head, lost, expected, shared.compaction_at, source=step.source, location=where,
                      levels=levels, head_since=head_since, later=step.later)
        finding = find_cause(ev)
        cause, evidence, detail = finding.as_tuple()
        if lost > 0 and rules_for(r.provider) is UNKNOWN and UNKNOWN_CACHING not in detail and "(provider unknown)" not in detail:
            # (a reseller's relay, a server no rules are known for: the cause is read under default
            # rules; ``unexplained`` says as much in its own words)
            detail = f"{detail}; {UNKNOWN_CACHING}"
        if finding.also is not None and 0 < finding.also_tokens < lost:
            also, also_tokens = finding.also, finding.also_tokens
        elif cause != "messages-changed" and (dropped := _dropped_part(step, expected)) and 0 < dropped < lost:
            # Sent without part of the previous prompt (Codex: the previous turn's reasoning): that
            # part was not sent, so no fix of this cause reads it (the what-if re-simulations read
            # only the part kept); it is the dropped part's own loss, split off as the causes
            # table splits a compaction after an expiry.
            also, also_tokens = "messages-changed", dropped
            detail = (f"{detail}; {dropped:,} of the {lost:,} tokens lost were not sent: the prompt kept only "
                      f"{r.prefix.shared:,} tokens of the previous one (sent without a later part of it: the previous "
                      "turn's reasoning where the file's note says so), counted messages-changed")
        if where is not None and not out_of_order(ev):
            location = where.text() if cause in CONTENT_CAUSES else where.where()
        if evidence == "diagnostic":
            inferred = find_cause(replace(ev, use_diagnostic=False)).cause
        elif r.diagnostic is not None:
            inferred = cause  # the server gave no cause (unavailable): the audit's own is the answer
    if cause is None:
        detail = _surplus_detail(step, expected, identity, shared) if usage is None or usage.cache_reported else NOT_REPORTED
        if slack:
            detail = (f"read {slack:,} tokens short of the {expected:,} predicted, within the {rules_for(r.provider).step_slack:,} "
                      "its provider's counts of one checkpoint vary by: no miss")
    if r.read_step and r.upstream and r.request_id:
        # A step a gateway's route and upstream gave (gemini-3-pro through OpenRouter's Google
        # routes, measured): the row names the rule and what it rests on, the route the
        # response's id names (not any gateway whose rule gives that upstream the same step).
        route = rules_for(r.provider).route_upstream_detail(gateway_of_id(r.request_id), r.upstream, r.model, r.read_step)
        if route:
            detail = f"{detail}; {route}" if detail else route
    if step.start_from is not None:
        # A lane start predicted to read an earlier lane start's entry: the row names that call
        # and what the two were matched on (counts and a digest, not the prompts themselves).
        said = (f"predicted to read the entry {step.start_from} wrote: an earlier first call with the same first "
                "message, the same reported prompt size, home, project folder and version; inferred from the "
                "counts (the log leaves the system prompt out)")
        detail = f"{detail}; {said}" if detail else said
    if r.explicit_cache is not None:
        # A read from an explicit cache is the client's own cache, not the lane's prefix: say so
        # rather than call it a surplus.
        said = explicit.read_detail(r, shared.created)
        detail = said if cause is None else f"{detail}; {said}"
    if pred.idle_limit_ms:
        # The rule that predicted nothing read, named: the provider's idle rule with the limit that
        # applied, or unread_until_read where that rule had predicted nothing already, the idle
        # past the limit then an added fact (the prediction would have been 0 without it).
        since = f"its lane's previous {r.model} call" if pred.idle_since_model else "its lane's previous call"
        idled = (f"sent {duration(pred.idle_ms)} after {since}, past the {duration(pred.idle_limit_ms)} idle after "
                 f"which the audit predicts a {r.model} call reads nothing (a measured rule, not a published lifetime)")
        if pred.idle_also:
            detail = (f"{detail}; predicted to read nothing: its lane had read nothing yet, and a {r.model} call whose "
                      f"lane has read nothing reads nothing (unread_until_read, a measured rule); also {idled}")
        else:
            detail = f"{detail}; predicted to read nothing: {idled}"
    cost = lost_usd = None
    row = shared.prices.row(r.model, r.sent_ms, r.speed, r.upstream) if usage is not None else None
    if usage is not None and row is not None and usage.cache_unsplit:
        low, high = unsplit_range(usage, row)  # one figure would be a guess: the range, in no dollar total
        detail = (f"{detail}; {usage.cache_unsplit:,} tokens logged as cache reads and writes summed: "
                  f"${low:.4f} if all read to ${high:.4f} if all written, in no dollar figure")
    elif usage is not None and row is not None:
        cost = cost_total(usage, row)
        # (None where its usage has no cache field: no miss could be seen, so $0 would claim none)
        lost_usd = _lost_usd(usage, lost, row) if usage.cache_reported else None
        if lost_usd is not None and also_tokens:
            # The leading cause's part priced alone, the second cause's the rest: the two add
            # up to the row's loss exactly.
            also_usd = usd_sum((lost_usd, -_lost_usd(usage, lost - also_tokens, row)))
    reported_read = usage.cache_read if usage and usage.cache_reported else None
    writes = usage is not None and writes_reported(r.provider, usage)
    reported_write = usage.cache_write if writes else None
    reported_uncached = usage.uncached if usage else None
    # Positional, in the order of AuditRow's fields (EXPLAIN_ROW_ORDER): a row a request,
    # and msgspec matches 31 keywords in about 4.5 us where it takes positions in 0.4.
    return AuditRow(
        r.file,  # file
        r.lane,  # lane
        r.lane_kind,  # lane_kind
        step.index,  # index
        r.line,  # line
        _iso(r.sent_ms),  # timestamp
        r.provider,  # provider
        r.model,  # model
        reported_read,  # reported_cache_read
        reported_write,  # reported_cache_write
        usage.cache_write_1h if writes else None,  # reported_cache_write_1h
        reported_uncached,  # reported_uncached
        usage.output if usage else None,  # reported_output
        same_int(pred.read, reported_read),  # predicted_cache_read
        same_int(pred.write, reported_write),  # predicted_cache_write
        same_int(pred.uncached, reported_uncached),  # predicted_uncached
        same_int(expected, reported_read),  # expected_cache_read
        # None where nothing tells the loss (no cache use reported: a usage with no cache field, a
        # block-hash trace's request with no usage): 0 would claim nothing was lost.
        lost if seen else None,  # lost_tokens
        cause,  # cause
        evidence,  # evidence
        detail,  # detail
        cost,  # cost_usd
        lost_usd,  # lost_usd
        pred.by,  # predicted_by
        identity,  # identity
        # None between a counter tick and a send time (:func:`clock_by_position`): unknown.
        step.tick - step.prev.tick if step.prev and (r.sent_ms is None) == (step.prev.request.sent_ms is None) else None,  # gap_ms
        inferred,  # inferred_cause
        r.diagnostic,  # server_reason
        None,  # loss_class (given by _sum_file)
        location,  # location
        r.path,  # path
        also,  # secondary_cause
        None,  # secondary_loss_class (given by _sum_file)
        also_tokens,  # secondary_lost_tokens
        also_usd,  # secondary_lost_usd
        r.service or None,  # service
    )


#: Nothing lost: one object for every row that lost nothing (most of them).
_ZERO = Decimal(0)


def same_int(value: int, reported: int | None) -> int:
    """``value``, or the reported figure's int object where they are equal: a row holds one int
    object where a prediction matches the report (most rows), not two (32 bytes each past 256)."""
    return reported if type(value) is int and type(reported) is int and value == reported else value


def unsplit_range(usage: Usage, row: PriceRow) -> tuple[Decimal, Decimal]:
    """The dollars of a call whose log sums its cache reads and writes (``usage.cache_unsplit``):
    all of them read, and all of them written (at the input price where
    the provider bills no writes: a DeepSeek-shaped server's misses)."""
    read = replace(usage, cache_read=usage.cache_read + usage.cache_unsplit, cache_unsplit=0)
    written = replace(usage, cache_write_5m=usage.cache_write_5m + usage.cache_unsplit, cache_unsplit=0)
    return cost_total(read, row), cost_total(written, row)


def _unsplit_ranges(
    requests: Sequence[TraceRequest], prices: Prices, totals: Totals, where: Counter[tuple[str, object]] | None = None
) -> tuple[Totals, tuple[str, ...], set[tuple[str, str]]]:
    """``totals`` with the range of the calls whose log sums their cache reads and writes, the
    note that states it (none without such calls), and the (provider, model) of those calls
    (priced models: their price row gave the range); ``where`` counts those calls by the group
    each is in: (``file``, file), (``lane``, (file, lane)), (``day``, day), (``model``, (provider, model))."""
    calls = tokens = 0
    ranged: set[tuple[str, str]] = set()
    low = high = Decimal(0)
    no_write_fee = False  # a call whose price row has no write rate: "all written" is at the input price
    for r in requests:
        usage = r.usage
        if usage is None or not usage.cache_unsplit:
            continue
        row = prices.row(r.model, r.sent_ms, r.speed, r.upstream)
        if row is None:
            continue
        least, most = unsplit_range(usage, row)
        ranged.add((r.provider, r.model))
        if where is not None:
            day = _day_of(_iso(r.sent_ms))
            where.update((("file", r.file), ("lane", (r.file, r.lane)), ("day", day), ("model", (r.provider, r.model))))
        no_write_fee = no_write_fee or row.rates_for(usage.prompt).cache_write is None
        calls, tokens, low, high = calls + 1, tokens + usage.cache_unsplit, low + least, high + most
    if not calls:
        return totals, (), ranged
    note = (f"{calls:,} request(s) log their cache reads and writes summed, the split unknown ({tokens:,} tokens: "
            "a Cline history file's metrics.tokens.cached), so no one figure prices them: "
            f"${usd_sum((low,)):.4f} if all were read to ${usd_sum((high,)):.4f} if all were written"
            + (" (where the price has no write rate, a DeepSeek miss: at the input price)" if no_write_fee else "")
            + "; they are in no dollar figure here (counted unpriced), and those tokens in "
            "none of the input, read and write totals")
    return replace(totals, ranged_requests=calls, ranged_low_usd=usd_sum((low,)), ranged_high_usd=usd_sum((high,))), (note,), ranged


def _lost_usd(usage: Usage, lost: int, row: PriceRow) -> Decimal:
    """Lost tokens were paid as writes (as far as the request wrote) and then as input, not as reads."""
    if lost == 0:
        return _ZERO
    rates = row.rates_for(usage.prompt)
    million = Decimal(1_000_000)
    if rates.cache_write is None:
        return Decimal(lost) * (rates.input - rates.cache_read) / million
    long_part = min(lost, usage.cache_write_1h)
    short_part = min(lost - long_part, usage.cache_write_5m)
    rest = lost - long_part - short_part
    long_rate = rates.cache_write_1h if rates.cache_write_1h is not None else rates.cache_write
    return (
        Decimal(long_part) * (long_rate - rates.cache_read)
        + Decimal(short_part) * (rates.cache_write - rates.cache_read)
        + Decimal(rest) * (rates.input - rates.cache_read)
    ) / million


class RowBuckets(Protocol):
    """Where the pass puts its rows, a bucket a file, and the summaries take them back:
    :class:`_Rows` in memory or :class:`~prefixbench.workloads.audit.spill.BucketSpill` on disk
    (named here by its shape, not imported: the spill imports this module's rows). A worker of
    ``--jobs`` packs a file's summed rows as :meth:`extend` takes them (:meth:`pack`)."""

    def add(self, bucket: int, row: AuditRow) -> None: ...

    def take(self, bucket: int) -> list[AuditRow]: ...

    def append(self, row: AuditRow) -> None: ...

    def pack(self, rows: list[AuditRow]) -> object: ...

    def extend(self, packed: object) -> None: ...

    def buckets(self) -> list[int]: ...

    def empty(self) -> RowBuckets:
        """An empty one of the same kind (where a part of ``--jobs`` puts its rows)."""
        ...

    def close(self) -> None: ...


#: Rows a worker sends back as MessagePack (a tenth of pickle's time); Decimals as their text.
_ROWS = msgspec.msgpack.Decoder(list[AuditRow])


class _Rows:
    """The audit's rows in memory, in buckets (what :class:`~.spill.BucketSpill` keeps on disk)."""

    def __init__(self) -> None:
        self._buckets: dict[int, list[AuditRow]] = defaultdict(list)
        self.rows: list[AuditRow] = []

    def add(self, bucket: int, row: AuditRow) -> None:
        self._buckets[bucket].append(row)

    def take(self, bucket: int) -> list[AuditRow]:
        return self._buckets.pop(bucket, [])

    def buckets(self) -> list[int]:
        """The buckets holding rows."""
        return list(self._buckets)

    def append(self, row: AuditRow) -> None:
        self.rows.append(row)

    def pack(self, rows: list[AuditRow]) -> bytes | list[AuditRow]:
        try:
            return msgspec.msgpack.encode(rows)
        except UnicodeEncodeError:  # a lone surrogate read from a log (no UTF-8): pickled as they are
            return rows

    def extend(self, packed: bytes | list[AuditRow]) -> None:
        self.rows.extend(_ROWS.decode(packed) if isinstance(packed, bytes) else packed)

    def empty(self) -> _Rows:
        return _Rows()

    def close(self) -> None:
        pass


def _lane_heads(requests: Sequence[TraceRequest], heads: Heads) -> dict[tuple[str, str], int | None]:
    """Each lane's head size (its first request with a prefix names the head)."""
    head_of_lane: dict[tuple[str, str], int | None] = {}
    for r in requests:
        if r.prefix is not None:
            head_of_lane.setdefault((r.file, r.lane), heads.get(r.prefix.head))
    return head_of_lane


class _FileSums:
    """A file's rows (in line order, with their loss class; or as a worker packed them) and
    their sums: its lanes, calibration and session, and its share of every roll-up."""

    __slots__ = ("rows", "lanes", "calibrations", "sessions", "total", "days", "models", "causes", "classes", "pairs", "notes")

    def __init__(self) -> None:
        self.rows: object = None
        self.lanes: list[LaneSummary] = []
        self.calibrations: dict[str, tuple] = {}
        #: Each file's sums, by its file (:func:`_session_roll_ups` sums a session's files as one).
        self.sessions: dict[str, _Roll] = {}
        self.total = _Roll()
        self.days: dict[str, _Roll] = {}
        self.models: dict[tuple[str, str], _Roll] = {}
        self.causes: dict[str, _Roll] = {}
        self.classes: dict[str, _Roll] = {}
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.notes = _NoteCounts()

    def merge(self, other: _FileSums) -> None:
        """``other`` (a later file's) summed in, as if its rows were summed here."""
        self.lanes += other.lanes
        self.calibrations.update(other.calibrations)
        for file, roll in other.sessions.items():
            self.sessions.setdefault(file, _Roll()).merge(roll)
        self.total.merge(other.total)
        for mine, theirs in ((self.days, other.days), (self.models, other.models), (self.causes, other.causes),
                             (self.classes, other.classes)):
            for value, roll in theirs.items():
                mine.setdefault(value, _Roll()).merge(roll)
        self.pairs.update(other.pairs)
        self.notes.merge(other.notes)


def _sum_file(rows: list[AuditRow], lane_heads: Mapping[tuple[str, str], int | None], of_file: Mapping[str, Decimal]) -> _FileSums:
    """A file's rows put in line order, given their loss class and summed."""
    out = _FileSums()
    # Sorted as the rows of every file were, by (the file's position, line): stable, in send order on a tie.
    rows.sort(key=lambda row: row.line)
    lanes: dict[tuple[str, str], list[AuditRow]] = defaultdict(list)
    for row in rows:
        lanes[(row.file, row.lane)].append(row)
    out.lanes = [_lane(file, lane, items, lane_heads.get((file, lane))) for (file, lane), items in lanes.items()]
    del lanes
    rows = [_classed(row) if row.cause is not None else row for row in rows]
    files: dict[str, list[AuditRow]] = {}
    for row in rows:
        files.setdefault(row.file, []).append(row)
    for file, items in files.items():
        out.calibrations[file] = _file_sums(items, of_file.get(file, Decimal(0)))
        out.sessions[file] = _Roll()
        out.sessions[file].add(items)
    del files
    out.total.add(rows, "totals")
    for what, groups, key in (
        ("roll-up", out.days, _day), ("model", out.models, lambda row: (row.provider, row.model)),
        ("losses", out.causes, lambda row: row.cause), ("losses", out.classes, lambda row: row.loss_class),
    ):
        grouped: dict = defaultdict(list)
        for row in rows if what != "losses" else (row for row in rows if row.cause is not None):
            grouped[key(row)].append(row)
        for value, items in grouped.items():
            if value is not None:
                groups.setdefault(value, _Roll()).add(items, what)
    for row in rows:
        if row.secondary_cause is not None:
            # A shared miss: its second cause's part moves to that cause's (and class's) losses.
            for groups, mine, theirs in ((out.causes, row.cause, row.secondary_cause),
                                         (out.classes, row.loss_class, row.secondary_loss_class)):
                if mine != theirs:
                    groups[mine].give(row, groups.setdefault(theirs, _Roll()))
    out.pairs.update((row.server_reason, row.inferred_cause or NO_MISS) for row in rows if row.server_reason is not None)
    out.notes.add(rows)
    out.rows = rows
    return out


def _classed(row: AuditRow) -> AuditRow:
    """A miss with its loss class, and its second cause's where it has one."""
    if row.secondary_cause is None:
        return replace(row, loss_class=loss_class(row))
    return replace(row, loss_class=loss_class(row), secondary_loss_class=loss_class(replace(row, cause=row.secondary_cause)))


def _summarize(
    buckets,
    summaries: list[FileSummary],
    heads: Heads,
    requests: list[TraceRequest],
    prices: Prices,
    caches: tuple[ExplicitCacheRow, ...] = (),
    done: dict[int, _FileSums] | None = None,
    lane_heads: Mapping[tuple[str, str], int | None] | None = None,
    sessionless: frozenset[tuple[str, str]] = frozenset(),
) -> AuditResult:
    """The summaries, summed a file at a time: ``buckets`` holds each file's rows under its
    position in ``summaries`` (:class:`_Rows` or a :class:`~.spill.BucketSpill`); each file's are
    put in line order, given their loss class, summed and appended to ``buckets`` in that order
    (the result's rows when ``buckets`` is a :class:`_Rows`, none when the rows are on disk).
    ``done``: each file's sums by its bucket, made already (by the workers of ``--jobs``, its rows
    packed), added up in the same order."""
    if lane_heads is None:
        lane_heads = _lane_heads(requests, heads)
    of_file = explicit.cost_by(caches, lambda c: c.file)
    of_model = explicit.cost_by(caches, lambda c: f"{c.provider}\n{c.model}")
    of_day = explicit.cost_by(caches, lambda c: c.created[:10] if c.created and not c.created.startswith("+") else NO_DAY)
    sums = _FileSums()
    for bucket in range(max(len(summaries), 1)):
        if done is None:
            summed = _sum_file(buckets.take(bucket), lane_heads, of_file)
            rows = summed.rows
            summed.rows = None
            sums.merge(summed)
            for row in rows:  # type: ignore[attr-defined]
                buckets.append(row)
            del rows
        else:
            summed = done.pop(bucket, None)
            if summed is not None:
                sums.merge(summed)
                buckets.extend(summed.rows)
        del summed
    where: Counter[tuple[str, object]] = Counter()
    hosted = self_hosted_where(requests, prices)
    totals, ranged, ranged_models = _unsplit_ranges(requests, prices, _totals(sums.total, caches), where)
    days = sorted((roll.roll_up(day, of_day) for day, roll in sums.days.items()), key=lambda r: (r.key == NO_DAY, r.key))
    relays, services = relayed(requests), served_through(requests)
    files = _both(_file_calibrations(sums.calibrations, summaries, of_file, _relays_by_file(requests)), where, hosted, "file",
                  lambda f: f.file)
    return AuditResult(
        tuple(buckets.rows) if isinstance(buckets, _Rows) else (),
        _both(sums.lanes, where, hosted, "lane", lambda lane: (lane.file, lane.lane)),
        _cause_summaries(sums.causes),
        files,
        _logged_lengths(totals, files),
        _notes(sums.notes, heads, prices, _output_replays(requests), _body_replies(requests), totals.ranged_requests) + ranged
        + free_notes({r.model for r in requests}, prices) + host_notes(requests, prices) + relay_notes(relays) + service_notes(services, prices.missing) + retention_notes(requests) + step_notes(requests) + grid.notes(requests) + endpoints.notes(requests) + tuple(explicit.notes(caches, requests)),
        _with_services(_both(_model_summaries(sums.models, prices, of_model, ranged_models), where, hosted, "model",
                               lambda m: (m.provider, m.model)), services),
        _agreement(sums.pairs),
        split_sums({name: (roll.requests, roll.lost, roll.unpriced, roll.shared) for name, roll in sums.classes.items()}),
        sessions=_session_roll_ups(sums.sessions, summaries, of_file, where, hosted),
        days=_both(days, where, hosted, "day", lambda r: r.key),
        explicit_caches=caches,
        unpriced_hosts=host_unpriced(requests, prices),
        relays=relays,
        services=services,
        sessionless_lanes=sessionless,
        session_of={s.file: s.session for s in summaries if s.session},
    )


def _session_roll_ups(files: Mapping[str, _Roll], summaries: Sequence[FileSummary], of_file: Mapping[str, Decimal],
                      where: Counter[tuple[str, object]], hosted: Counter[tuple[str, object]]) -> tuple[RollUp, ...]:
    """The roll-up per session: the sums of each file (``files``, in file order) added up per the
    agent's session it is part of (its summary's ``session``: a Claude Code subagent's transcript
    is its session's, named by the session's main transcript), else per file (a file is its own
    session), in the order each session's first file comes. ``of_file``: dollars billed outside
    any request per file (explicit caches); ``where``, ``hosted``: the per-file counts of ranged
    and self-hosted requests (:func:`_both`), summed per session the same way."""
    session_of = {s.file: s.session for s in summaries if s.session}
    rolls: dict[str, _Roll] = {}
    extra: dict[str, list[Decimal]] = defaultdict(list)
    counts: tuple[Counter[tuple[str, object]], Counter[tuple[str, object]]] = (Counter(), Counter())
    for file, roll in files.items():
        key = session_of.get(file, file)
        rolls.setdefault(key, _Roll()).merge(roll)
        if file in of_file:
            extra[key].append(of_file[file])
        for mine, theirs in zip(counts, (where, hosted)):
            if n := theirs[("file", file)]:
                mine[("session", key)] += n
    of_session = {key: usd_sum(dollars) for key, dollars in extra.items()}
    # A session named by its main transcript where only other files name it: said so (main_absent).
    read = {s.file for s in summaries}
    absent = {key for key in session_of.values() if key not in read}
    return _both([replace(up, main_absent=True) if (up := roll.roll_up(key, of_session)).key in absent else up
                  for key, roll in rolls.items()], counts[0], counts[1], "session", lambda r: r.key)


def _logged_lengths(totals: Totals, files: Sequence[FileCalibration]) -> Totals:
    """``totals`` with the prompt and output tokens the files' own lengths give, where every file
    with requests gives them (:attr:`Totals.logged_prompt_tokens`)."""
    given = [f.lengths for f in files if f.requests]
    if not given or any(lengths is None for lengths in given):
        return totals
    return replace(totals, logged_prompt_tokens=sum(lengths[0] for lengths in given if lengths is not None),
                   logged_output_tokens=sum(lengths[1] for lengths in given if lengths is not None))


def _ranged(items: Sequence, where: Counter[tuple[str, object]], group: str, key: Callable[[object], object],
            field: str = "ranged_requests") -> tuple:
    """``items`` (summaries of one ``group``) with their ``field`` from ``where``: by default their
    ``ranged_requests`` (:func:`_unsplit_ranges`'s counts: those of their unpriced requests priced
    as a range only); or their ``self_hosted_requests`` (:func:`self_hosted_where`'s)."""
    if not where:
        return tuple(items)
    return tuple(replace(item, **{field: n}) if (n := where[(group, key(item))]) else item for item in items)


def _both(items: Sequence, where: Counter[tuple[str, object]], hosted: Counter[tuple[str, object]], group: str,
          key: Callable[[object], object]) -> tuple:
    """``items`` with their ranged requests (``where``) and self-hosted ones (``hosted``): :func:`_ranged`."""
    return _ranged(_ranged(items, where, group, key), hosted, group, key, "self_hosted_requests")


class _Roll:
    """Sums of a group of rows (all of them, a day, a model, a cause, a loss class) over the files
    they come in: each file's items added at once (the dollars summed exactly, as ``usd_sum``)."""

    def __init__(self) -> None:
        self.requests = self.misses = self.lost_tokens = self.unpriced = self.unpriced_no_usage = 0
        self.unseen = 0  # the requests whose loss nothing tells (:func:`loss_seen`)
        self.shared = 0  # a cause's or class's: the misses another leads whose loss it shares (:meth:`give`)
        self.first: str | None = None
        self.last: str | None = None
        self.lanes: set[tuple[str, str]] = set()
        self.reported = self.read = self.write = self.uncached = self.write_1h = 0
        self.writing = 0  # the requests whose usage gives a write count (:func:`writes_reported`)
        self.billed = 0  # the requests that report their uncached tokens
        self.outputs = 0  # the requests that report their output tokens (a model's only)
        self.input = self.output = 0  # of the billed (those reporting their uncached tokens)
        self.all_uncached = self.all_output = self.all_read = self.all_write = 0
        self.predicted_read = self.predicted_rest = 0
        self.traced = 0  # the requests with no usage at all (a block-hash trace's): hit_ratio
        self.cost = Decimal(0)
        self.lost = Decimal(0)
        self.priced = False
        self.lost_by_cause: dict[str, Decimal] = defaultdict(Decimal)
        #: Tokens lost per cause: decides the top cause between causes that lost the same dollars
        #: (all $0 where no price row holds the model).
        self.tokens_by_cause: dict[str, int] = defaultdict(int)
        self.largest: dict[tuple[str, str], int] = {}

    def add(self, items: list[AuditRow], what: str = "roll-up") -> None:
        """``items`` summed in: every figure for a ``roll-up`` (a day, a session) or the
        ``totals``; a ``model``'s; a cause's or a loss class's ``losses`` only."""
        self.requests += len(items)
        self.lost_tokens += sum(i.lost_tokens or 0 for i in items)
        self.lost = usd_sum([self.lost, *(i.lost_usd or Decimal(0) for i in items)])
        self.unseen += sum(not loss_seen(i) for i in items)
        if what == "losses":
            self.unpriced += sum(i.lost_usd is None and (i.lost_tokens or 0) > 0 for i in items)
            return
        self.cost = usd_sum([self.cost, *(i.cost_usd or Decimal(0) for i in items)])
        self.unpriced += sum(i.cost_usd is None for i in items)
        self.unpriced_no_usage += sum(i.cost_usd is None and i.reported_uncached is None for i in items)
        if what == "model":
            self.all_uncached += sum(i.reported_uncached or 0 for i in items)
            self.all_output += sum(i.reported_output or 0 for i in items)
            self.all_read += sum(i.reported_cache_read or 0 for i in items)
            self.all_write += sum(i.reported_cache_write or 0 for i in items)
            self.writing += sum(i.reported_cache_write is not None for i in items)
            self.reported += sum(i.reported_cache_read is not None for i in items)
            self.billed += sum(i.reported_uncached is not None for i in items)
            self.outputs += sum(i.reported_output is not None for i in items)
            self.priced = self.priced or any(i.cost_usd is not None for i in items)
            return
        reported = [i for i in items if i.reported_cache_read is not None]
        billed = [i for i in items if i.reported_uncached is not None]
        self.reported += len(reported)
        self.billed += len(billed)
        self.read += sum(i.reported_cache_read or 0 for i in reported)
        self.write += sum(i.reported_cache_write or 0 for i in reported)
        self.writing += sum(i.reported_cache_write is not None for i in reported)
        self.uncached += sum(i.reported_uncached or 0 for i in reported)
        self.input += sum(i.reported_uncached or 0 for i in billed)
        blind = [i for i in items if traced(i)]
        self.traced += len(blind)
        if not self.reported:  # (read only while no row reports: see hit_ratio)
            self.predicted_read += sum(i.predicted_cache_read for i in blind)
            self.predicted_rest += sum(i.predicted_cache_write + i.predicted_uncached for i in blind)
        if what == "totals":
            self.write_1h += sum(i.reported_cache_write_1h or 0 for i in reported)
            self.output += sum(i.reported_output or 0 for i in billed)
            return
        self.misses += sum(i.cause is not None for i in items)
        stamps = [i.timestamp for i in items if i.timestamp and not i.timestamp.startswith("+")]
        if stamps:
            low, high = min(stamps), max(stamps)
            self.first = low if self.first is None else min(self.first, low)
            self.last = high if self.last is None else max(self.last, high)
        self.lanes.update((i.file, i.lane) for i in items)
        for i in items:
            if i.cause is not None:
                for part in loss_parts(i):  # (a shared miss: its second cause's part is that cause's)
                    self.lost_by_cause[part.cause] += part.usd or Decimal(0)
                    self.tokens_by_cause[part.cause] += part.tokens
        for i in reported:
            prompt = (i.reported_cache_read or 0) + (i.reported_cache_write or 0) + (i.reported_uncached or 0)
            self.largest[(i.file, i.lane)] = max(self.largest.get((i.file, i.lane), 0), prompt)

    def give(self, row: AuditRow, other: _Roll) -> None:
        """``row``'s second cause's part of its loss (summed here under its leading cause or
        class) moved to ``other``'s losses, which count it among their shared misses."""
        _, second = loss_parts(row)
        tokens, usd = second.tokens, second.usd
        self.lost_tokens -= tokens
        other.lost_tokens += tokens
        if usd is not None:
            self.lost = usd_sum((self.lost, -usd))
            other.lost = usd_sum((other.lost, usd))
        elif row.lost_usd is None:
            other.unpriced += 1  # (the part lost tokens no dollar figure holds, as the whole did)
        other.shared += 1

    def merge(self, other: _Roll) -> None:
        """``other``'s sums (a later file's rows, added to a fresh roll) added in: what adding
        those rows here makes (the dollars exact, so in any grouping)."""
        self.predicted_read += other.predicted_read if not self.reported else 0
        self.predicted_rest += other.predicted_rest if not self.reported else 0
        for name in ("requests", "shared", "misses", "lost_tokens", "unpriced", "unpriced_no_usage", "unseen", "reported", "traced", "billed", "outputs", "read", "write", "uncached", "write_1h", "writing",
                     "input", "output", "all_uncached", "all_output", "all_read", "all_write"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cost = usd_sum([self.cost, other.cost])
        self.lost = usd_sum([self.lost, other.lost])
        self.priced = self.priced or other.priced
        if other.first is not None:
            self.first = other.first if self.first is None else min(self.first, other.first)
        if other.last is not None:
            self.last = other.last if self.last is None else max(self.last, other.last)
        self.lanes |= other.lanes
        for cause, lost in other.lost_by_cause.items():
            self.lost_by_cause[cause] += lost
        for cause, tokens in other.tokens_by_cause.items():
            self.tokens_by_cause[cause] += tokens
        for lane, prompt in other.largest.items():
            self.largest[lane] = max(self.largest.get(lane, 0), prompt)

    @property
    def hit_ratio(self) -> float | None:
        return hit_ratio(self.read, self.read + self.write + self.uncached, self.reported, self.traced,
                         self.predicted_read, self.predicted_read + self.predicted_rest)

    def roll_up(self, name: str, extra: Mapping[str, Decimal] = {}) -> RollUp:
        top = min(self.lost_by_cause.items(),
                  key=lambda kv: (-kv[1], -self.tokens_by_cause[kv[0]],
                                  list(CAUSES).index(kv[0]) if kv[0] in CAUSES else len(CAUSES), kv[0]), default=None)
        context = sum(self.largest.values())
        return RollUp(
            key=name,
            first=self.first,
            last=self.last,
            requests=self.requests,
            lanes=len(self.lanes),
            misses=reported_sum(self.misses, self.reported + self.misses),
            input=reported_sum(self.input, self.billed),
            cache_read=reported_sum(self.read, self.reported),
            cache_write=reported_sum(self.write, self.writing),
            hit_ratio=self.hit_ratio,
            cost_usd=usd_sum([self.cost, extra.get(name, Decimal(0))]),
            lost_usd=self.lost,
            lost_tokens=self.lost_tokens,
            top_cause=None if top is None else top[0],
            rewrite_factor=(self.write + self.uncached) / context if context else None,
            unpriced_requests=self.unpriced,
            unpriced_no_usage=self.unpriced_no_usage,
            unseen_requests=self.unseen,
        )


class _NoteCounts:
    """What :func:`_notes` counts over the rows."""

    def __init__(self) -> None:
        self.rows = self.unreported = self.reported = self.predicted = self.diagnosed = self.agree = self.narrower = 0
        #: Labelled misses the agreement table scores whose cause the log decided (not the server's label).
        self.own = 0

    def merge(self, other: _NoteCounts) -> None:
        for name in ("rows", "unreported", "reported", "predicted", "diagnosed", "agree", "narrower", "own"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def add(self, rows: list[AuditRow]) -> None:
        self.rows += len(rows)
        self.unreported += sum(row.reported_cache_read is None and row.reported_uncached is not None for row in rows)
        self.reported += sum(row.reported_cache_read is not None for row in rows)
        self.predicted += sum(row.predicted_by == "body" and row.reported_uncached is None and row.cost_usd is not None for row in rows)
        diagnosed = [row for row in rows if row.evidence == "diagnostic"]
        self.diagnosed += len(diagnosed)
        said = [verdict(row.server_reason or "", row.inferred_cause) for row in diagnosed]
        self.agree += said.count("agrees")
        self.narrower += said.count("names-more")
        self.own += sum(verdict(row.server_reason, row.inferred_cause) in ("agrees", "names-more", "disagrees") for row in rows
                        if row.server_reason is not None and row.evidence != "diagnostic")


def _day(row: AuditRow) -> str:
    """The UTC day a request was sent (``_iso``'s text starts with it), or :data:`NO_DAY`."""
    return _day_of(row.timestamp)


def _day_of(stamp: str | None) -> str:
    """The UTC day an ``_iso`` time falls on, or :data:`NO_DAY` (none, or a time since the log's start)."""
    return stamp[:10] if stamp and not stamp.startswith("+") and len(stamp) >= 10 else NO_DAY


def _agreement(pairs: Counter[tuple[str, str]]) -> tuple[Agreement, ...]:
    """Server reason x audit cause over the calls that carry a server reason (``pairs``: their
    counts; the audit cause :data:`NO_MISS` where it finds no miss)."""
    out = []
    for (server, audit), n in sorted(pairs.items(), key=lambda item: (-item[1], item[0])):
        said = verdict(server, audit)
        out.append(Agreement(server, audit, n, True if said in ("agrees", "names-more") else False if said == "disagrees" else None, said))
    return tuple(out)


def _cause_summaries(causes: Mapping[str, _Roll]) -> tuple[CauseSummary, ...]:
    """Per cause: misses, lost tokens and dollars, costliest first."""
    return tuple(
        sorted(
            (CauseSummary(cause, roll.requests, roll.lost_tokens, roll.lost, roll.unpriced, roll.shared)
             for cause, roll in causes.items()),
            key=lambda c: (-c.lost_usd, -c.lost_tokens, list(CAUSES).index(c.cause)),
        )
    )


def _file_sums(items: list[AuditRow], extra: Decimal) -> tuple[int, int, float | None, Decimal, Decimal, int, int, int]:
    """One file's rows summed for its :class:`FileCalibration`: requests, reads within tolerance, the
    mean absolute read error, dollars paid (``extra``: billed outside any request) and lost, the
    requests in neither (unpriced) and of those with no usage, and those whose loss nothing tells."""
    errors = [abs(e) for row in items if (e := row.read_error) is not None and row.reported_cache_read]
    return (
        len(items),
        sum(row.read_within for row in items),
        sum(errors) / len(errors) if errors else None,
        usd_sum([*(row.cost_usd or Decimal(0) for row in items), extra]),
        usd_sum(row.lost_usd or Decimal(0) for row in items),
        sum(row.cost_usd is None for row in items),
        sum(row.cost_usd is None and row.reported_uncached is None for row in items),
        sum(not loss_seen(row) for row in items),
    )


def _file_calibrations(sums: Mapping[str, tuple], summaries: list[FileSummary], extra: Mapping[str, Decimal] = {},
                       relays: Mapping[str, frozenset[str]] = {}) -> tuple[FileCalibration, ...]:
    """Per file: how close the predicted reads came to the reported ones (``sums``: :func:`_file_sums`
    of the files with rows), and what was skipped (``extra``: its dollars billed outside any request);
    where the log's own cost fields are off its dollars, a note saying so (:func:`cost_check_note`,
    ``relays``: the relays each file's calls went through, by file)."""
    files = []
    for summary in summaries:
        requests, within, error, cost, lost, unpriced, no_usage, unseen = (
            sums.get(summary.file) or _file_sums([], extra.get(summary.file, Decimal(0))))
        check = cost_check_note(summary.logged_cost, cost, requests, unpriced, relays.get(summary.file, frozenset()),
                                summary.relay_by_cost)
        files.append(
            FileCalibration(
                summary.file,
                summary.format,
                requests,
                within,
                error,
                len(summary.skipped),
                summary.notes + ((check,) if check else ()),
                cost,
                lost,
                tuple(Counter(reason for _, reason in summary.skipped).most_common()),
                unpriced,
                no_usage,
                unseen_requests=unseen,
                lengths=summary.lengths,
            )
        )
    return tuple(files)


def _totals(total: _Roll, caches: Sequence[ExplicitCacheRow] = ()) -> Totals:
    # Requests whose provider reported no cache fields count in the tokens, not in the hit ratio.
    # (None where caches were created and none of them has the figure: unknown, not $0)
    create, storage = explicit.known_sum(caches, "create_usd"), explicit.known_sum(caches, "storage_usd")
    return Totals(
        requests=total.requests,
        input=reported_sum(total.input, total.billed),
        output=reported_sum(total.output, total.billed),
        cache_read=reported_sum(total.read, total.reported),
        cache_write=reported_sum(total.write, total.writing),
        cache_write_1h=reported_sum(total.write_1h, total.writing),
        cost_usd=usd_sum([total.cost, create or Decimal(0), storage or Decimal(0)]),
        lost_usd=total.lost,
        hit_ratio=total.hit_ratio,
        cache_create_usd=create,
        storage_usd=storage,
        unpriced_requests=total.unpriced,
        unpriced_no_usage=total.unpriced_no_usage,
        unseen_requests=total.unseen,
    )


def _model_summaries(
    models: Mapping[tuple[str, str], _Roll], prices: Prices, extra: Mapping[str, Decimal] = {},
    ranged: Collection[tuple[str, str]] = (),
) -> tuple[ModelSummary, ...]:
    """Per model; ``extra``: dollars billed outside any request (explicit caches), keyed
    ``provider\nmodel``; ``ranged``: the (provider, model) of calls priced as a range only
    (:func:`_unsplit_ranges`), whose model the price table knows though no row of it has a cost."""
    return tuple(
        ModelSummary(
            provider,
            model,
            roll.requests,
            reported_sum(roll.all_uncached, roll.billed),
            reported_sum(roll.all_output, roll.outputs),
            reported_sum(roll.all_read, roll.reported),
            reported_sum(roll.all_write, roll.writing),
            usd_sum([roll.cost, extra.get(f"{provider}\n{model}", Decimal(0))]),
            roll.lost,
            # (a model none of whose requests with usage was priced, a host's calls left unpriced, is not
            # priced because the maker's table knows it: only one whose requests carry no usage is)
            model not in prices.missing and (roll.priced or (provider, model) in ranged
                                             or (roll.unpriced == roll.unpriced_no_usage and _in_table(prices, model))),
            roll.unpriced,
            roll.unpriced_no_usage,
            unseen_requests=roll.unseen,
        )
        for (provider, model), roll in sorted(models.items())
    )


def _in_table(prices: Prices, model: str) -> bool:
    """Whether the price table has a row for ``model`` (asked only of a model none of whose
    requests was priced: one whose requests carry no usage was never looked up)."""
    try:
        return bool(prices.table.history(model))
    except UserError:
        return False


def _output_replays(requests: list[TraceRequest]) -> tuple[int, int]:
    """Chain calls whose next call was predicted to read their response too (see ``Prefix.replays_output``):
    those read whole, and those read only as far as their reasoning (:class:`ReplayedToReasoning`)."""
    whole = reasoning = 0
    for r in requests:
        if (r.body is None and r.prefix is not None and r.prefix.replays_output and chain_rules(r.provider).caches_output
                and (not r.read_offset or grid.keeps_output(r))):  # (on a learned grid: see grid.keeps_output)
            if isinstance(r.prefix, ReplayedToReasoning):
                reasoning += 1
            else:
                whole += 1
    return whole, reasoning


def _body_replies(requests: list[TraceRequest]) -> tuple[int, int]:
    """Captured calls whose response the body model keeps (``TraceRequest.reply``, a provider that
    caches output), and how many of them the next body of their lane sends back whole."""
    kept = held = 0
    last: dict[tuple[str, str], TraceRequest] = {}
    for r in requests:
        if r.body is None:
            continue
        lane = (r.file, r.lane)
        prev = last.get(lane)
        last[lane] = r
        if prev is not None and prev.reply and prev.body is not None:
            count = len(prev.body.messages)
            held += r.body.messages[: count + len(prev.reply)] == (*prev.body.messages, *prev.reply)
        if r.reply and rules_for(r.provider).bodies_keep_output:
            kept += 1
    return kept, held


def _predicted_uncached(rules: ProviderRules, usage: Usage, read: int, write: int) -> int:
    """The uncached part of a call predicted to read ``read`` and write ``write``: an additive
    provider's reported tail past the last breakpoint, where the log reports writes; where it
    does not (:attr:`~prefixbench.simulator.usage.Usage.writes_reported`), the whole prompt was
    cacheable and the rest of it is what was neither read nor written (not the reported
    ``uncached``, which holds the unknown writes: counted twice); a subset provider's, the
    prompt less the read."""
    if not rules.is_additive:
        return usage.prompt - read
    return usage.uncached if usage.writes_reported else max(0, usage.prompt - read - write)


def drop_request_ids(requests: list[TraceRequest]) -> None:
    """Each request's ``request_id`` (the log's id for the call) dropped, in place, one request at
    a time: the readers read it (a call two files log is counted once), the audit never does (but
    for a gateway's id where its route gave the read step), and the trace is held to the audit's end (an id is a string of its own, 50-90 bytes a request).
    So held, a request whose other rare fields are at their default too is a
    :class:`~prefixbench.workloads.logs.trace.PlainRequest` (:func:`~prefixbench.workloads.logs.trace.plain`:
    104 bytes less), its usage a :class:`~prefixbench.simulator.usage.PlainUsage` where it can be."""
    for i, r in enumerate(requests):
        if type(r) in PLAIN_TYPES:  # (read held: its usage was left as read)
            usage = None if r.usage is None else plain_usage(r.usage)
            if r.request_id is not None or usage is not r.usage:
                requests[i] = replace(r, request_id=None, usage=usage)
        elif r.read_step and r.upstream and gateway_of_id(r.request_id or ""):
            # (kept where it names the gateway whose route gave the step: the row's detail names
            # that route, :meth:`~prefixbench.simulator.providers.base.ProviderRules.route_upstream_detail`)
            continue
        else:
            requests[i] = plain(r if r.request_id is None else replace(r, request_id=None))


def drop_histories(requests: list[TraceRequest]) -> None:
    """Each request's logged history (``messages``) dropped, in place, one request at a time: once
    the audit has located its breaks on them, nothing after it reads them (the re-simulations of
    what to change and ``--what-if`` take the audit's ``system-changed`` misses from its rows), and
    the trace is held through those."""
    for i, r in enumerate(requests):
        if r.messages:
            requests[i] = replace(r, messages=())


def assume_zdr(requests: list[TraceRequest]) -> list[TraceRequest]:
    """The requests as an organization with Zero Data Retention sends them (``--openai-zdr``):
    every request of a provider that decides the lifetime per request (OpenAI) and asks for none
    gets ``in_memory``, the default the API reference documents for such an organization."""
    return [
        replace(whole(r), retention="in_memory")
        if r.asked_retention is None and rules_for(r.provider).request_ttl is not None else r
        for r in requests
    ]


def zdr_unused_note(requests: Sequence[TraceRequest]) -> tuple[str, ...]:
    """``--openai-zdr`` on logs with no request of a provider that decides the lifetime per request
    (OpenAI): a note that it changed nothing, as the other options say (it was silent)."""
    if any(rules_for(r.provider).request_ttl is not None for r in requests):
        return ()
    return ("--openai-zdr: no request to OpenAI (whose cache lifetime a request or the organization's ZDR decides) "
            "in these logs, nothing changed",)


def no_follow_unused_note(requests: Sequence[TraceRequest]) -> tuple[str, ...]:
    """``--no-follow-reads`` on logs with no request of a provider whose reads follow the last one
    (Gemini, MiniMax): a note that it changed nothing, as the other options say."""
    if any(rules_for(r.provider).follows_reads for r in requests):
        return ()
    return ("--no-follow-reads: no request to a provider whose reads follow the checkpoint last read (Gemini, MiniMax) "
            "in these logs, nothing changed",)


def assume_read_steps(requests: list[TraceRequest], steps: Mapping[str, int]) -> list[TraceRequest]:
    """The requests with the read step ``steps`` gives their provider (``--read-step``): it wins
    over the step the rules, the request's date or its endpoint gave it, and over the lag an
    upstream gave (:attr:`TraceRequest.read_lag`)."""
    if not steps:
        return requests
    return [replace(whole(r), read_step=steps[r.provider], read_offset=0, read_lag=0) if r.provider in steps else r
            for r in requests]


def assume_codex_heads(requests: list[TraceRequest], heads: Mapping[str, int]) -> list[TraceRequest]:
    """The Codex requests with the head ``heads`` gives their model (``--codex-warm-head``; key
    ``*``: every model not named) assumed kept warm outside the log (:attr:`TraceRequest.warm_head`).
    A side thread's or a compaction's head (instructions of its own) is left as it is."""
    if not heads:
        return requests
    out = []
    for r in requests:
        codex = r.source_format == "codex" and r.lane_kind not in ("side", "compaction")
        size = heads.get(r.model, heads.get("*", 0)) if codex else 0
        out.append(replace(whole(r), warm_head=size) if size else r)
    return out


def codex_head_notes(requests: Sequence[TraceRequest], heads: Mapping[str, int]) -> tuple[str, ...]:
    """One note for each model ``--codex-warm-head`` names: how many Codex requests it covers, or
    that the logs have none."""
    counts = Counter(r.model for r in requests if r.source_format == "codex" and r.lane_kind not in ("side", "compaction"))
    out = []
    for name in sorted(heads):
        covered = sum(n for model, n in counts.items() if model not in heads) if name == "*" else counts.get(name, 0)
        what = ("every Codex model" + (" not named" if len(heads) > 1 else "")) if name == "*" else f"Codex on {name}"
        out.append(
            f"--codex-warm-head {name}={heads[name]:,}: {what} assumed to find that many tokens of its head cached before "
            f"the log ({covered:,} request(s)); where the log's own cold points agree on a warm head, theirs is kept"
            if covered else f"--codex-warm-head {name}={heads[name]:,}: no request of "
            f"{('Codex' + (' on a model not named' if len(heads) > 1 else '')) if name == '*' else what} in these logs, nothing changed"
        )
    return tuple(out)


def read_step_notes(requests: Sequence[TraceRequest], steps: Mapping[str, int]) -> tuple[str, ...]:
    """One note for each provider whose step ``--read-step`` sets: how many of ``requests`` (as
    read, before :func:`assume_read_steps`) it counts that way, and the steps the rules, the
    request's date or its endpoint gave them."""
    counts: dict[str, Counter[tuple[int, str]]] = {}
    for r in requests:
        if r.provider in steps:
            counts.setdefault(r.provider, Counter())[(rules_for(r.provider).read_step(r.model, r.read_step), r.model)] += 1
    return tuple(
        f"{name} reads counted in steps of {steps[name]:,} token(s) for {sum(counts[name].values()):,} request(s), as "
        "--read-step asked (otherwise: "
        + ", ".join(f"{n:,} of {model} in steps of {step:,}" for (step, model), n in sorted(counts[name].items()))
        + ")"
        if name in counts else f"--read-step {name}={steps[name]}: no request of {name} in these logs, nothing changed"
        for name in sorted(steps)
    )


def retention_notes(requests: Sequence[TraceRequest]) -> tuple[str, ...]:
    """The lifetimes the audit gave the requests of a provider that decides them per request
    (OpenAI's ``prompt_cache_retention``), and what they rest on: one note, or none."""
    asked: Counter[str] = Counter()
    default: Counter[str] = Counter()
    for r in requests:
        rules = rules_for(r.provider)
        if rules.request_ttl is None:
            continue
        label = rules.ttl_label(r.model, r.asked_retention, r.sent_ms) or "?"
        (asked if r.asked_retention is not None else default)[label] += 1
    if not asked and not default:
        return ()
    # The lifetimes after the count, each with its own count only where there are several: a count
    # then a label that starts with one ("14 24h (extended)") stuttered.
    def listed(counts: Counter[str]) -> str:
        if len(counts) == 1:
            return _RETENTION_WORDS.get(next(iter(counts)), next(iter(counts)))
        return ", ".join(f"{_RETENTION_WORDS.get(label, label)} for {n:,}" for label, n in sorted(counts.items()))
    parts = []
    if asked:
        parts.append(f"{sum(asked.values()):,} request(s) as their body or --openai-zdr asked: {listed(asked)}")
    if default:
        parts.append(f"{sum(default.values()):,} request(s) with their model's documented default: {listed(default)}")
    return (_LIFETIME_NOTE + "; ".join(parts) + f". {_NO_ZDR}; {_IN_MEMORY}",)


#: What :func:`retention_notes` assumes of the organization, and what it says instead under
#: ``--openai-zdr`` (:func:`zdr_notes`): the default's words contradicted the option given.
_NO_ZDR = ("Assumed: the organization has no Zero Data Retention unless --openai-zdr (a model offering both policies "
           "defaults to 24h since the API reference of 2026-06-01, to in_memory before it and under ZDR)")
_ZDR = ("Assumed (--openai-zdr): the organization has Zero Data Retention, so a request that asks no "
        "prompt_cache_retention keeps in_memory, its default under ZDR")
_IN_MEMORY = "in_memory is modelled as 10 min idle (documented: 5-10 min, at most 1 h)"
_LIFETIME_NOTE = "OpenAI cache lifetime per request: "


def zdr_notes(notes: tuple[str, ...]) -> tuple[str, ...]:
    """``notes`` of an audit run with ``--openai-zdr``: the lifetime note says the ZDR it assumed."""
    return tuple(note.replace(_NO_ZDR, _ZDR) if note.startswith(_LIFETIME_NOTE) else note
                 for note in notes)


def step_notes(requests: Sequence[TraceRequest]) -> tuple[str, ...]:
    """The models whose reads the audit counted in a step of their own that a provider's rules
    explain (:attr:`~prefixbench.simulator.providers.base.ProviderRules.step_note`), one note each
    provider."""
    steps: dict[str, Counter[tuple[str, int]]] = {}
    for r in requests:
        rules = rules_for(r.provider)
        # A step the endpoint or --read-step gave is said where that is; the step of the
        # request's date (DeepSeek's 64 before V4) is the rules' own.
        if rules.step_note is None or (r.read_step and r.read_step != rules.dated_step(r.sent_ms)
                                       and not rules.is_route_step(r.read_step)):
            continue
        step = rules.read_step(r.model, r.read_step)
        if step > 1:
            steps.setdefault(rules.name, Counter())[(r.model, step)] += 1
    return tuple(
        f"{name} reads counted in checkpoints: "
        + ", ".join(f"{n} request(s) of {model} in steps of {step:,} tokens" for (model, step), n in sorted(counts.items()))
        + f" (a read is the last step inside the shared prefix; {rules_for(name).step_note})"
        for name, counts in sorted(steps.items())
    )


_RETENTION_WORDS = {"in_memory": "in_memory (10 min)", "24h": "24h (extended)", "30m": "30m (GPT-5.6 on)",
                    "12h": "12h (GPT-6.2 Sol's 12-hour retention)"}


@lru_cache(maxsize=1)
def reasoning_read_models() -> str:
    """The models whose next call reads a response sent back whole only as far as its reasoning,
    as the audit's note names them: OpenAI's priced models (the shipped price table) that its
    rule (:attr:`ProviderRules.output_read_to_reasoning`) covers, so the note cannot name other
    models than the rule does."""
    rules = rules_for("openai")
    return ", ".join(sorted({row.model for row in load_prices().rows
                             if row.provider == rules.name and rules.reads_output_to_reasoning(row.model)}))


def _notes(
    counts: _NoteCounts, heads: Heads, prices: Prices, replays: tuple[int, int] = (0, 0), replies: tuple[int, int] = (0, 0), ranged: int = 0
) -> tuple[str, ...]:
    """Facts the report must state: no reported usage, unlogged heads, diagnostics, output
    caching assumed, prices."""
    notes = []
    unreported = counts.unreported
    if counts.rows and not counts.reported:
        notes.append(
            "no reported usage in these logs: the hit ratio is the predicted one" if not unreported
            # no cache trace among them: no ratio (hit_ratio); with one, the trace's prediction
            else "no reported cache usage in these logs: there is no hit ratio" if unreported == counts.rows
            else "no reported cache usage in these logs: the hit ratio is the one predicted for the requests with no usage"
        )
    if unreported:
        notes.append(
            f"{unreported} request(s) whose provider reported no cache fields (cache not reported, which is not 0 read): "
            "their tokens count in the totals and are priced as uncached (at most what they cost: a read the log does not "
            "show would cost less), but not in the hit ratio or the loss"
            + (f" ({ranged:,} of them log their cache reads and writes summed: those tokens count nowhere, see below)"
               if ranged else "")
        )
    predicted = counts.predicted
    if predicted:
        notes.append(
            f"{predicted} request(s) of request-body logs report no usage: their reads, writes, dollars and misses are the "
            "byte-level cache model's prediction on the logged bodies (output tokens unknown, priced as 0)"
        )
    warm = heads.warm
    for head, size in sorted(heads.items()):
        notes.append(
            f"unlogged head {head}: "
            + (
                f"{size:,} tokens kept warm by the account: {warm[head]} cold points (lane starts, reads after a TTL "
                "expiry" + (f"; {heads.falls[head]} of them reads inside the TTL that fell back to it" if heads.falls.get(head) else "")
                + ") read exactly that, so the model reads it at every cold point"
                if head in warm and head not in heads.assumed
                else f"{size:,} tokens assumed kept warm by the account (--codex-warm-head): read at every lane start and "
                "after every TTL expiry, where they hold it (the log's own cold points show no warm head)"
                if head in heads.assumed
                else f"{size:,} tokens kept warm by the account for sessions' first calls: {heads.start_warm[head]} lane "
                "starts read exactly that (more than any other amount), so the model reads it at every lane start, not "
                "after a TTL expiry"
                if head in heads.start_warm
                else f"{size:,} tokens, inferred from the reads of lane starts" if size
                else f"size unknown (lane starts read up to {heads.capped[head]:,} tokens, but another lane start reported "
                "nothing it could have cached, so no head size fits every lane start)" if head in heads.capped
                else "size unknown (no lane start read anything)"
            )
        )
    if counts.diagnosed:
        agree, narrower = counts.agree, counts.narrower
        notes.append(
            f"provider cache diagnostics decided {counts.diagnosed} miss(es); without them the audit's own inference "
            f"names the same cause for {agree} ({agree / counts.diagnosed:.0%})"
            + (f" and one that says more of the same miss for {narrower} ({narrower / counts.diagnosed:.0%}: an entry not "
               "found that had expired or was still being written, messages that changed in a compaction)" if narrower else "")
            + (f"; the agreement table scores {counts.own} labelled miss(es) more, whose cause the log itself decided (a "
               "cause that refines the server's reason, or a label with no reason), so its counts are not these" if counts.own else "")
        )
    whole_replays, reasoning_replays = replays
    if whole_replays:
        notes.append(
            f"{whole_replays} call(s) send their response back whole to a cache that keeps output (OpenAI: measured on Codex "
            "rollouts, not documented; DeepSeek: documented; Z.AI: measured on Crush's GLM calls): the next call's read is predicted up to the previous prompt "
            "+ output; a read of the previous prompt alone is not counted as a miss"
        )
    if reasoning_replays:
        notes.append(
            f"{reasoning_replays} call(s) send their response back whole to a model whose next call reads it only as far as its "
            f"reasoning (OpenAI's {reasoning_read_models()}: measured on Codex rollouts, not documented): the next call's read is "
            "predicted up to the previous prompt + its logged reasoning tokens; a read of the previous prompt alone is not "
            "counted as a miss"
        )
    kept, held = replies
    if kept:
        notes.append(
            f"{kept} captured call(s) answered by a cache that keeps output (OpenAI: measured on Codex traffic, not "
            f"documented; DeepSeek: documented; Z.AI: measured on Crush's GLM calls): the byte-level model keeps each response after its prompt, and for {held} "
            "of them the next body of the lane sent it back whole and reads into it; a read of the previous prompt alone "
            "is not counted as a miss"
        )
    if prices.missing:
        notes.append(_unpriced_note(sorted(prices.missing), prices.fast_missing))
    early = "".join(f"; {model} has no row in force {_when_early(prices, model)}: priced at its first "
                    f"row (effective {effective})" for model, effective in sorted(prices.early.items()))
    notes.append(
        "prices: " + (f"as of {prices.as_of}" if prices.as_of else "the row in force at each request's time") + f" ({PRICE_TABLE_WHERE})"
        + early
    )
    return tuple(notes)


def _host_unpriced(r: TraceRequest, prices: Prices) -> str:
    """The host whose serving leaves ``r`` in no dollar figure (:func:`host_unpriced`), or ""."""
    if r.usage is None or not (host := _served_by(r)) or prices.free_variant(r.model):
        return ""
    return "" if prices.at_list_price(r.model, host) or prices.priced_by_host(r.model, host) else host


def self_hosted_where(requests: Iterable[TraceRequest], prices: Prices) -> Counter[tuple[str, object]]:
    """The calls with usage that an engine of the user's served (:func:`host_unpriced`'s, of a
    host :func:`~prefixbench.simulator.providers.vllm.own_host` keeps, Ollama's cloud not among
    them: the calls the headline says no vendor bills), counted by the group each is in, as
    :func:`_unsplit_ranges` counts: (``file``, file), (``lane``, (file, lane)), (``day``, day),
    (``model``, (provider, model))."""
    where: Counter[tuple[str, object]] = Counter()
    for r in requests:
        host = _host_unpriced(r, prices)
        if host and own_host(host) and not ollama_cloud(r.model, host):
            where.update((("file", r.file), ("lane", (r.file, r.lane)), ("day", _day_of(_iso(r.sent_ms))),
                          ("model", (r.provider, r.model))))
    return where


def host_unpriced(requests: Iterable[TraceRequest], prices: Prices) -> tuple[tuple[str, str, int], ...]:
    """The requests with usage that no dollar figure holds because of the host that served them
    (:meth:`Prices.at_list_price`: a host running open models itself, a third-party host of
    them whose own table has no row of the model, :meth:`Prices.priced_by_host`, another host
    than an open-weight model's maker), as sorted ``(model, host, requests)``."""
    counted: Counter[tuple[str, str]] = Counter((r.model, host) for r in requests if (host := _host_unpriced(r, prices)))
    return tuple((model, host, n) for (model, host), n in sorted(counted.items()))


#: How far the dollars here may be off the log's own cost fields before the audit says so.
COST_CHECK_ROOM = Decimal("0.01")
#: OpenRouter's fee on a call made with a provider key of one's own (BYOK): its ``cost`` is the
#: upstream's bill and this share of it (openrouter.ai/docs, "BYOK"), so every such call's cost
#: field is 1.05 times the maker's list price.
OPENROUTER_BYOK_FEE = Decimal("0.05")


def cost_check_note(logged: float | None, cost: Decimal, requests: int, unpriced: int, relays: Collection[str],
                    by_cost: bool = False) -> str:
    """What the audit says where a file's own cost fields (``logged``: :attr:`FileSummary.logged_cost`)
    are off the dollars it priced the file's ``requests`` at (``cost``) by more than
    :data:`COST_CHECK_ROOM`: by how much, and why where a reason fits: every call went through
    OpenRouter (``relays``, as the reader named it) and the sum is 1.05 times the dollars here
    (within half a percent): OpenRouter's fee on calls of a key of one's own; ``by_cost``: the
    reader told that relay from the same cost fields (:attr:`FileSummary.relay_by_cost`), which
    the note says, the log naming none. Otherwise that the two disagree, claiming neither is the
    bill (the cost field of pi or Cline is the agent's own estimate). "" where they agree, or
    where some request is unpriced (the two sums are then not of the same calls)."""
    if not logged or unpriced or not requests or cost <= 0:
        return ""
    stated = Decimal(repr(logged))
    off = stated / cost - 1
    if abs(off) <= COST_CHECK_ROOM:
        return ""
    said = (f"cost check: the log's own cost fields are {abs(off):.1%} {'above' if off > 0 else 'below'} the dollars here "
            f"(${cost:.4f}, the maker's list price of the counts read): ")
    if {relay.lower() for relay in relays} == {"openrouter"} and abs(off - OPENROUTER_BYOK_FEE) <= Decimal("0.005"):
        return said + ("every call went through OpenRouter" + (
            " (told from the cost: the log names no relay, and these same cost fields showed its handler)"
            if by_cost else "") + ", whose cost field is the upstream's bill and OpenRouter's "
                       f"{OPENROUTER_BYOK_FEE:.0%} fee on a call made with a provider key of one's own (BYOK): the fee is "
                       "not in the dollars here")
    return said + ("the log does not say why (a fee, a discount, a price other than the list price, or counts read "
                   "otherwise than the agent billed them): the two disagree, and the log does not say which, if "
                   "either, is the bill")


def _relays_by_file(requests: Iterable[TraceRequest]) -> dict[str, frozenset[str]]:
    """The relays each file's calls went through (:attr:`TraceRequest.relay`; "" for a call that
    went through none), by file."""
    found: dict[str, set[str]] = {}
    for r in requests:
        found.setdefault(r.file, set()).add(r.relay)
    return {file: frozenset(relays) for file, relays in found.items()}


def relayed(requests: Iterable[TraceRequest]) -> tuple[tuple[str, str, str, int], ...]:
    """The requests that went through a relay the log names, as ``(provider, model, relay,
    requests)`` in that order (:attr:`AuditResult.relays`)."""
    counted: Counter[tuple[str, str, str]] = Counter((r.provider, r.model, r.relay) for r in requests if r.relay)
    return tuple((*key, n) for key, n in sorted(counted.items()))


def model_service(services: Iterable[tuple[str, int]], requests: int) -> str | None:
    """A model's ``service`` (:class:`ModelSummary`) from the ``(service, requests)`` its calls
    went to (:func:`served_through`) of its ``requests``: the one service where every call went
    there (``Azure OpenAI deployment 'chat'``); else each, with its count, in that order
    (``Azure OpenAI deployment 'chat', 2 req; Azure OpenAI, 1 req``: the rest of its calls named
    none); None where none did."""
    services = list(services)
    if not services:
        return None
    if len(services) == 1 and services[0][1] == requests:
        return services[0][0]
    return "; ".join(f"{service}, {n:,} req" for service, n in services)


def _with_services(models: tuple[ModelSummary, ...], services: Iterable[tuple[str, str, str, int]]) -> tuple[ModelSummary, ...]:
    """``models`` with the service their calls went to (:func:`model_service`), where any did."""
    went: dict[tuple[str, str], list[tuple[str, int]]] = {}
    for provider, model, service, n in services:
        went.setdefault((provider, model), []).append((service, n))
    if not went:
        return models
    return tuple(replace(m, service=model_service(at, m.requests)) if (at := went.get((m.provider, m.model))) else m for m in models)


def served_through(requests: Iterable[TraceRequest]) -> tuple[tuple[str, str, str, int], ...]:
    """The requests that went to a service of the maker's models the log names (Azure OpenAI), as
    ``(provider, model, service, requests)`` in that order (:attr:`AuditResult.services`)."""
    counted: Counter[tuple[str, str, str]] = Counter((r.provider, r.model, r.service) for r in requests if r.service)
    return tuple((*key, n) for key, n in sorted(counted.items()))


def service_notes(services: Iterable[tuple[str, str, str, int]], unpriced: Collection[str] = ()) -> tuple[str, ...]:
    """What the audit says of the calls that went to a service of the maker's models
    (:func:`served_through`): read under the maker's rules and priced at its list price, the
    service's own bill not in the log; those of a model in ``unpriced`` (no row in the price
    table: :attr:`Prices.missing`) said to be unpriced, not at any list price."""
    notes = []
    for provider, model, service, calls in services:
        maker = rules_for(provider).maker or provider
        rules = (f"{calls:,} request(s) of {model} went to {service}, not {maker}'s own API: read under {maker}'s "
                 "caching rules, which the service follows; ")
        bill = "the service's bill (its price for a deployment, set by the deployment's type and region) is not in the log"
        notes.append(rules + (f"unpriced: the price table has no row of {model} (counted unpriced), and {bill}" if model in unpriced
                              else f"paid and lost are {maker}'s list price, not the service's bill (its price for a "
                                   "deployment, set by the deployment's type and region, is not in the log)"))
    return tuple(notes)


def relay_notes(relays: Iterable[tuple[str, str, str, int]]) -> tuple[str, ...]:
    """What the audit says of the calls that went through a relay (:func:`relayed`): priced at the
    maker's list price, not the relay's bill; their misses with nothing changed the relay's cache's
    where the maker's own cache is best effort (:func:`~.precedence.relay_takes_misses`), else
    left unexplained, as the audit leaves them."""
    notes = []
    for provider, model, relay, calls in relays:
        rules = rules_for(provider)
        maker = rules.maker or provider
        why = (f"the cache that answered was the relay's, read under {maker}'s rules (the relay's are not known), so a miss "
               f"with nothing changed in the log is put down to the relay, not {maker}" if relay_takes_misses(rules) else
               f"read under {maker}'s rules (the relay's are not known); {maker}'s cache is not best effort, so a miss with "
               "nothing changed in the log is left unexplained: the log does not say whether the relay or the maker missed")
        through = (f"went through a relay the log does not name ({relay!r}, not {maker}'s own API: told by what its "
                   "responses carry, as the file's note says)" if relay == UNNAMED_RELAY else
                   f"went through {relay!r}, an endpoint of your configuration (a relay or gateway, not {maker}'s own API)")
        notes.append(f"{calls:,} request(s) of {model} {through}: paid and lost are {maker}'s list price, not the relay's bill, which the log does "
                     f"not show; " + why)
    return tuple(notes)


def host_notes(requests: Iterable[TraceRequest], prices: Prices) -> tuple[str, ...]:
    """What the audit says of open-weight models a gateway or another host served (:meth:`Prices.at_list_price`):
    those calls a gateway says another host than the model's maker served, or the log names a
    third-party host of open models as their provider (Fireworks, Groq...:
    :func:`~prefixbench.simulator.providers.hosts.third_party_host`), left unpriced (that host
    bills its own price, which the table does not hold), by model and host, or priced at the
    host's own row where prefixbench holds it (:meth:`Prices.host_row`, said so by model and
    host); and the models
    named by a gateway's id (``vendor/model``) whose calls name no upstream, priced at the maker's
    list price though the gateway may have sent them to hosts of other prices (said once). A
    call went through a gateway where its model keeps a gateway's id (``vendor/model``) or where
    other calls of its model name their upstream (the logs' gateway names them)."""
    elsewhere: Counter[tuple[str, str]] = Counter()
    by_host: Counter[tuple[str, str]] = Counter()
    named: set[str] = set()
    logged: set[str] = set()  # the models some call of which the log's upstream names the host of
    unnamed: set[str] = set()
    rows: dict[tuple[str, str], dict[PriceRow, int]] = {}
    for r in requests:
        if r.usage is None:
            continue
        if host := _served_by(r):
            named.add(r.model)
            if r.upstream:
                logged.add(r.model)
            if prices.free_variant(r.model):
                continue
            if not prices.at_list_price(r.model, host):
                if prices.priced_by_host(r.model, host):
                    by_host[(r.model, host)] += 1
                    row = prices.host_row(r.model, r.sent_ms, host)
                    if row is not None:  # (the row each call was priced at, not the model's latest)
                        used = rows.setdefault((r.model, host), {})
                        used[row] = used.get(row, 0) + 1
                else:
                    elsewhere[(r.model, host)] += 1
        else:
            unnamed.add(r.model)
    # (each model tested once, not each call)
    unnamed = {model for model in unnamed
               if ("/" in model or model in named) and model not in prices.missing and prices.open_weight(model)}
    notes = [f"no price for {calls:,} request(s) of {model} served by {host}: a cloud model of Ollama's "
             f"({'called at ollama.com' if host.lower() == OLLAMA_COM else 'its tag ends in cloud'}) runs in Ollama's cloud, not on the user's machine, and Ollama bills it through its plans (a usage "
             "allowance measured in GPU time, or usage credits), not at a price per token the table could hold; counted unpriced"
             if ollama_cloud(model, host) else
             f"no price for {calls:,} request(s) of {model} served by {host}, a host running open models itself: no vendor "
             f"bills its calls, whatever the model's name; counted unpriced" if own_host(host) else
             f"no price for {calls:,} request(s) of {model} served by {host} ({_told(model, logged)}): {shown} sets its own "
             "per-token prices and cache discount (or none) for the open models it serves, not their maker's list price, "
             f"and {_host_lacks(model, host)}; counted unpriced" if (shown := third_party_host(host)) else
             f"no price for {calls:,} request(s) of {model} served by {host} (the gateway names it): an open-weight model "
             f"served by another host than its maker bills that host's price, which the table does not hold; counted unpriced"
             for (model, host), calls in sorted(elsewhere.items())]
    notes += [_host_priced_note(model, host, used, prices, by_id=model not in logged)
              for (model, host), used in sorted(rows.items())]
    if unnamed:
        notes.append(f"{', '.join(sorted(unnamed))}: an open-weight model through a gateway that names no upstream per call, "
                     "priced at its maker's list price; the gateway may have routed calls to hosts that bill other prices")
    return tuple(notes)


def _told(model: str, logged: Collection[str]) -> str:
    """What named the host that served ``model``'s calls: ``the log names it`` (a reader's
    upstream, for a model in ``logged``), or ``its model id names it`` (``accounts/fireworks/...``,
    a ``:groq`` suffix)."""
    return "the log names it" if model in logged else "its model id names it"


def _served_by(r: TraceRequest) -> str:
    """The host a call was served by as :meth:`Prices.row` prices it: the reader's ``upstream``,
    else the host the model's own id names (:func:`~prefixbench.simulator.providers.hosts.named_host`)."""
    return r.upstream or named_host(r.model)


def _host_lacks(model: str, host: str) -> str:
    """Why a third-party host's call of ``model`` has no price: a Fireworks path that is no
    serverless model of its own (:func:`~prefixbench.simulator.providers.hosts.host_model`: a
    dedicated deployment billed by the GPU-hour), the host's own file lacking the model (named),
    or no file of the host's prices at all."""
    name, why = host_model(model)
    if not name:
        return f"{model} is {why}, which no per-token row prices"
    where = host_price_file(host)
    return f"{where} has no row for it" if where else "prefixbench has no price row for it"


def _host_priced_note(model: str, host: str, used: Mapping[PriceRow, int], prices: Prices, *, by_id: bool = False) -> str:
    """The note on calls a third-party host of open models served that its own price rows billed
    (:meth:`Prices.host_row`, ``used``: each row and its calls): the host, the rows that priced
    them and their sources, and where the host's table is; ``by_id``: the model's own id named the
    host (``accounts/fireworks/...``, a ``:groq`` suffix), not the log's upstream."""
    table = prices.host_table(host)
    told = "its model id names it" if by_id else "the log names it"
    shown = third_party_host(host) or host
    shown += "'" if shown.endswith("s") else "'s"
    calls = sum(used.values())
    where = f"prefixbench/simulator/data/{Path(table.path).name}" if table is not None else ""
    if len(used) == 1:
        ((row, _),) = used.items()
        dated = f" (effective {row.effective})" if row.effective else ""
        return (f"{calls:,} request(s) of {model} served by {host} ({told}) priced at {shown} own price for "
                f"{row.model}{dated}, not its maker's list price ({row.evidence}: {row.source}; {shown} table: {where})")
    each = "; ".join(f"{n:,} at {row.model} effective {row.effective or 'since its launch'} ({row.evidence}: {row.source})"
                     for row, n in sorted(used.items(), key=lambda item: str(item[0].effective or "")))
    return (f"{calls:,} request(s) of {model} served by {host} ({told}) priced at {shown} own prices, not its "
            f"maker's list price: {each} ({shown} table: {where})")


def free_notes(models: Iterable[str], prices: Prices) -> tuple[str, ...]:
    """The models the price table bills nothing for (a gateway's free variant: OpenRouter's
    ``vendor/model:free`` at the ``openrouter-free`` row), said so: their dollars are $0, not
    unknown, and are in every total."""
    free: dict[str, list[str]] = {}
    for model in sorted(models):
        if model in prices.missing:
            continue
        try:
            row = prices.table.history(model)[-1]
        except UserError:
            continue
        if row.is_free:
            free.setdefault(row.model, []).append(model)
    return tuple(f"priced at $0 by the row {row} (a free variant, no charge a token): {', '.join(names)}" for row, names in free.items())


def _unpriced_note(models: list[str], fast_rows: Collection[str] = ()) -> str:
    """The note on the models with no price row: their dollars left out, and how to price them
    (``--model-alias`` for a name that may be a gateway's or an agent's own for a priced model,
    ``--assume-model`` for calls whose log names none). Nothing is guessed: the alias is named,
    the model it stands for left to the user. A name of ``fast_rows`` (:attr:`Prices.fast_missing`)
    is the fast-mode row the table lacks for calls with ``speed: fast`` (never billed at the
    standard rate), a name no call gives: no alias prices those calls, so none is offered for it.
    A log's own name that merely ends in ``-fast`` is offered the alias as any other."""
    from prefixbench.workloads.audit.assume_model import option_misfit

    fast = [m for m in models if m in fast_rows]
    named = [m for m in models if m != NO_MODEL and m not in fast and option_misfit(m) is None]
    hints = []
    if fast:
        bases = ", ".join(m[: -len(FAST_SUFFIX)] for m in fast)
        hints.append(f"{', '.join(fast)} {'is the fast-mode row' if len(fast) == 1 else 'are the fast-mode rows'} the table "
                     f"lacks for {bases} (calls run with speed fast): no option prices them at the standard rate")
    unfit: dict[str, list[str]] = {}  # (by reason, in the models' order: the note names each name's own)
    for m in models:
        if m != NO_MODEL and (why := option_misfit(m)) is not None:
            unfit.setdefault(why, []).append(m)
    for why, names in unfit.items():
        hints.append(f"{', '.join(map(repr, names))} cannot be given to --model-alias ({why})")
    if named:
        items = ",".join(f"{m}=MODEL" for m in named)
        hints.append(f"if {'it is' if len(named) == 1 else 'they are'} a gateway's or an agent's name for a priced model, "
                     f"--model-alias {items} prices {'it' if len(named) == 1 else 'them'} as MODEL")
    if NO_MODEL in models:
        hints.append("--assume-model MODEL names the model of the calls whose log names none")
    return f"no price for {', '.join(models)}: their dollars are left out" + "".join(f"; {hint}" for hint in hints)


def _when_early(prices: Prices, model: str) -> str:
    """When ``model`` had no price row in force: ``--price-as-of``'s date, or at all of its
    requests or only some (the others found a row)."""
    if prices.as_of:
        return "then"
    return "at some of its requests" if model in prices.in_force else "at any of its requests"


def writes_reported(provider: str, usage: Usage) -> bool:
    """Whether a request's usage gives a write count: the one rule of a request's written tokens
    (its row's ``reported_cache_write`` and ``reported_cache_write_1h``, else None) and so of
    every group's (:func:`reported_sum` over the requests that give one: the totals, a lane, a
    model, a session, a day). An additive provider's usage (Anthropic-shaped) has a write field;
    a subset provider's (OpenAI-shaped) has none before its writes are billed, so its 0 is no
    figure, unless the log gives a write above 0. A usage with no cache field, or whose log has no
    write field (:attr:`~prefixbench.simulator.usage.Usage.writes_reported` False), gives none."""
    return usage.cache_reported and usage.writes_reported and (usage.cache_write > 0 or rules_for(provider).is_additive)


def reported_sum(total: int, reporting: int) -> int | None:
    """A group's sum of a reported count: ``total`` when ``reporting`` (its requests that report
    that count) is not 0, else None (shown ``-``, null in JSON). The one rule of every group (a
    session, a day, a lane, a model): a block-hash trace reports no usage, and a 0 there would
    claim a count the log never gave."""
    return total if reporting else None


def hit_ratio(read: int, prompt: int, reporting: int, traced: int, predicted_read: int, predicted_prompt: int) -> float | None:
    """A group's hit ratio (the totals', a session's, a day's, a lane's): its reported ``read``
    over its reported ``prompt`` when ``reporting`` (its requests that report their cache use) is
    not 0; else, when ``traced`` (its requests with no usage at all: a block-hash or Mooncake
    trace's, whose whole input is the cache trace) is not 0, the cache model's prediction for
    those, ``predicted_read`` over ``predicted_prompt``: 0.0 there would claim a cold cache the
    trace never showed. Else None: requests whose usage has no cache field (an aider history
    without cache counts, a zed thread) are in no hit ratio, and a prediction for them would
    stand in for a cache the log never showed (for a provider the audit does not model, by
    stand-in rules). Which a group's ratio is, its reported cache read says (None with a ratio:
    predicted; the tables' ``pred``)."""
    if reporting:
        return _ratio(read, prompt)
    if traced:
        return _ratio(predicted_read, predicted_prompt)
    return None


def traced(row: AuditRow) -> bool:
    """Whether ``row``'s request logged no usage at all (a block-hash or Mooncake trace's: the
    tables' ``n/a``), as against one whose usage has no cache field: :func:`hit_ratio`."""
    return row.reported_cache_read is None and row.reported_uncached is None


def loss_seen(row: AuditRow) -> bool:
    """Whether anything tells ``row``'s loss: its request reports its cache use (its reported
    cache read, set from :attr:`~prefixbench.simulator.usage.Usage.cache_reported`), or it is a
    request-body log's request with no usage, whose loss is the cache model's prediction (a known
    figure, labelled predicted). Else (usage with no cache field; no usage and no body: a block-hash
    trace's) no miss could be seen, and a group none of whose requests is seen lost an unknown
    amount, never $0: the tables' ``-``, null in JSON (:func:`~prefixbench.reports.auditwords.none_seen`)."""
    return row.reported_cache_read is not None or (row.reported_uncached is None and row.predicted_by == "body")


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _lane(file: str, lane: str, items: list[AuditRow], head: int | None) -> LaneSummary:
    read = sum(i.reported_cache_read or 0 for i in items)
    write = sum(i.reported_cache_write or 0 for i in items)
    uncached = sum(i.reported_uncached or 0 for i in items)
    known = sum(i.reported_uncached or 0 for i in items if i.reported_cache_read is not None)
    reporting = sum(i.reported_cache_read is not None for i in items)
    models = sorted({i.model for i in items})
    return LaneSummary(
        file=file,
        lane=lane,
        kind=items[0].lane_kind,
        requests=len(items),
        model=",".join(models),
        reported_cache_read=reported_sum(read, reporting),
        reported_cache_write=reported_sum(write, sum(i.reported_cache_write is not None for i in items)),
        reported_uncached=reported_sum(uncached, sum(i.reported_uncached is not None for i in items)),
        reported_output=reported_sum(sum(i.reported_output or 0 for i in items), sum(i.reported_output is not None for i in items)),
        predicted_cache_read=sum(i.predicted_cache_read for i in items),
        predicted_cache_write=sum(i.predicted_cache_write for i in items),
        predicted_uncached=sum(i.predicted_uncached for i in items),
        read_within=reported_sum(sum(i.read_within for i in items), reporting),
        hit_ratio=hit_ratio(read, read + write + known, reporting, len(blind := [i for i in items if traced(i)]),
                            sum(i.predicted_cache_read for i in blind),
                            sum(i.predicted_cache_read + i.predicted_cache_write + i.predicted_uncached for i in blind)),
        cost_usd=usd_sum(i.cost_usd or Decimal(0) for i in items),
        lost_usd=usd_sum(i.lost_usd or Decimal(0) for i in items),
        lost_tokens=sum(i.lost_tokens or 0 for i in items),
        head_tokens=head,
        unpriced_requests=sum(i.cost_usd is None for i in items),
        unpriced_no_usage=sum(i.cost_usd is None and i.reported_uncached is None for i in items),
        unseen_requests=sum(not loss_seen(i) for i in items),
    )

