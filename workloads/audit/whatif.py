"""``audit --what-if``: which change would have saved the money, re-simulated on the same log.

Each fix rewrites the imported trace (or the TTL each request writes with) the way the fix
would have sent it, and the whole log is replayed twice through the same cache models the
audit predicts with (:class:`~prefixbench.simulator.chain.ChainCache` for logs without bodies,
:class:`~prefixbench.simulator.anthropic.AnthropicCache` and the other byte-level models for
logs with bodies), on the audit's clock: once as logged, once with the fix. The fix's effect
on a request is the *difference* between the two predictions, applied to what the provider
reported::

    counterfactual = reported + (predicted with the fix - predicted as logged)

so the model's own error on a request cancels out, and a request the fix does not touch costs
exactly what it cost. The log as logged is predicted once; each fix is re-simulated only on
the requests that share cache state with one it changes (:func:`_resimulate`), the others
keeping that prediction, as a replay of the whole log would give them. ``saved_usd`` is reported cost minus counterfactual cost, at the same
price rows (negative when the fix costs more: a 1 h write costs 2x the input price, a 5 m one
1.25x). ``tokens_to_read`` is how many tokens moved into the cache read (negative when reads
were lost).

Fixes (:data:`FIXES`):

* ``ttl-1h`` / ``ttl-5m``: every Anthropic write with that TTL; every OpenAI request to a model
  that offers both retention policies with ``prompt_cache_retention`` ``24h`` / ``in_memory``
  (same price: only the reads change).
* ``ttl-auto``: per lane, the cheaper of the two, given the lane's idle gaps.
* ``stagger-subagents``: a lane that started while the shared head it needed was still being
  written (concurrent subagent starts) starts when that write has landed; its later requests
  move by the same delay.
* ``static-system``: the system prompt and tools held byte-stable inside each lane (a date line
  moved out of the prefix): every request of a lane sends its first request's system and tools.
* ``keep-prefix-compaction``: a compaction request sent as the kernel's cache-aware checkpoint
  sends it: the main lane's last request replayed (tools, system, messages, breakpoints) with
  the instruction appended, under the envelope :func:`~prefixbench.kernel.engines.checkpoint.summary_envelope`
  picks with ``inherit_envelope`` on.
* ``keep-alive``: inside every idle gap longer than the lane's TTL (that ten or fewer would
  bridge), the lane's previous request is sent again every TTL minus 30 s, counted from where
  the re-simulation starts the entry's lifetime (the provider's ``ttl_from``: the send, or
  Qwen's response end, :func:`_lifetime_from`), so the next request reads instead of
  rewriting; the keep-alives are charged (their read and 1 output token each) as one change of
  the lane with ``index`` -1. Every gap past the interval is bridged, whether
  or not the entry outlived it (a client cannot know that when the gap starts); the interval is
  the TTL (OpenAI's in-memory retention at its 5 min lower end) but, per source and model, where
  the history before the gap shows entries outliving it: the longest idle up to which every
  earlier judged gap was read in full, resting on at least two such reads, moves the first ping
  to 30 s before that length (a gap that ends sooner is not bridged), then every TTL minus 30 s
  (:func:`_judged_gaps`, :func:`_bound`), a schedule a client could take from what it had seen:
  a gap is history once its next request's response has ended, and the history is that of the
  unit one TTL setting of the agent covers (:func:`_survival_scope`), as ttl-auto picks in.
* ``pin-model``: every main and subagent lane sends all its requests to one model, the one it
  sent most of them to (ties: the first sent), as a client pinned to a model instead of one
  that switches on its own (a router, a fallback) would; a switch the log shows the user made
  (``model-chosen``) is kept, the lane pinned a part at a time between them. Each request is still priced at the
  model it was logged with: the figure is the cache reads the switches lost, not what the other
  model's prices would have changed (the detail gives that price effect apart, at the logged tokens).
* ``breakpoints=SPEC``: Anthropic ``cache_control`` markers moved to SPEC, ``+``-separated:
  ``tools``, ``system``, ``last``, ``last-N`` (the last block of the message N >= 1 before the last),
  or ``auto`` (automatic caching). At most 4.

A fix that cannot apply to a log (no bodies, no subagents, no compaction request, no Anthropic
requests) says why (``applies`` false, ``saved_usd`` None) instead of printing 0.
"""

from __future__ import annotations

import functools
import multiprocessing
import re
from bisect import bisect_left, bisect_right
from array import array
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from types import SimpleNamespace

import msgspec
from msgspec.structs import replace
from prefixbench.kernel.engines.checkpoint import summary_envelope
from prefixbench.kernel.session import Header
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.price_lookup import Prices
from prefixbench.simulator.pricing import cost_total, format_usd, usd_sum
from prefixbench.simulator.providers import ANTHROPIC, OPENAI, rules_for
from prefixbench.simulator.providers.openai import IN_MEMORY_TTL_MIN_MS, IN_MEMORY_TTL_MS
from prefixbench.simulator.wire import CacheBreakpoint, Request
from prefixbench.workloads.audit.losses import KEEP_ALIVE_MARGIN_MS, KEEP_ALIVE_MAX
from prefixbench.workloads.audit.precedence import READ_TOLERANCE
from prefixbench.workloads.audit.core import (
    Baseline,
    Heads,
    Key,
    Pred,
    Predictor,
    Preds,
    TtlPolicy,
    clock_by_position,
    compaction_sources,
    head_sizes,
    same_int,
    state_slots,
    writes_reported,
    wrote,
)
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.claude_layout import project_depth
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, TraceRequest, replace_request

#: :func:`clock_by_position` of a trace: each request's tick and ready tick, and the send order.
Clock = tuple[list[int], list[int], Sequence[int]]

#: Anthropic's 5 m TTL: how long a shared head stays written (stagger-subagents).
_TTL_5M = ANTHROPIC.ttl_ms("5m") or 0
#: Every fix ``--what-if`` knows, with what it assumes.
FIXES: dict[str, str] = {
    "ttl-1h": "every Anthropic cache write made with the 1 h TTL (billed at 2x the input price instead of 1.25x); every "
    "OpenAI request to a model offering both policies with prompt_cache_retention 24h (same price)",
    "ttl-5m": "every Anthropic cache write made with the 5 m TTL; every OpenAI request to a model offering both policies "
    "with prompt_cache_retention in_memory",
    "ttl-auto": "one TTL per lane kind (the main sessions, the subagents), as the agents' settings allow: the cheaper of "
    "ttl-1h and ttl-5m summed over the kind's lanes (the cheaper per lane, picked in hindsight, is re-simulated too: an upper "
    "bound where it saves at least the setting's figure; lanes share cached entries, so it can save less, and is then said "
    "to be no bound)",
    "stagger-subagents": "a lane that started while the shared head was still being written starts when that "
    "write has landed (its response began); its later requests move by the same delay",
    "static-system": "the system prompt and tools held byte-stable inside each main and subagent lane (e.g. a date "
    "line moved out of the prefix): every request sends its lane's first system prompt and tools; side calls keep theirs",
    "keep-prefix-compaction": "the compaction request sent as the cache-aware kernel sends it: the main lane's "
    "last request replayed (tools, system, messages, breakpoints) plus the instruction, under the routed envelope",
    "breakpoints": "Anthropic cache_control markers moved to the given places (tools, system, last, last-N, auto)",
    "pin-model": "every main and subagent lane sends all its requests to the model it sent most of them to (a switch the "
    "log shows the user made is kept: each part between such switches is pinned on its own); each request "
    "priced at the model it was sent to, so the saving is the cache reads the switches lost, not the price of the other "
    "model (the detail states that effect apart)",
    # The reach the loss split gives the fix too (losses.KEEP_ALIVE_MARGIN_MS, KEEP_ALIVE_MAX).
    "keep-alive": "a lane idle past its TTL sends its previous request again (1 output token) every TTL minus "
    f"{KEEP_ALIVE_MARGIN_MS // 1000} s of the gap, at most {KEEP_ALIVE_MAX} times a gap, so the entry stays warm; each "
    "is charged (its read, any write, 1 output token) on every such gap, whether the entry outlived it or not (unknown "
    "when the gap starts); the pings count from where the provider starts the entry's lifetime (the send; Qwen: the "
    "response's end), or, on a model whose earlier gaps in one home or source folder (its logs pooled) show entries "
    "outliving the TTL (2+ read in full past it plus "
    f"{KEEP_ALIVE_MARGIN_MS // 1000} s, idle from the response's end, none read short up to that idle), the first comes "
    f"{KEEP_ALIVE_MARGIN_MS // 1000} s before that idle and a shorter gap is not bridged; in that history a write the "
    "log does not report (an Anthropic usage with no write field) is none (the call left only its read cached), and no "
    "write premium is saved on one",
}


#: What keep-alive's assumption adds where the log has OpenAI requests (only there: a log of
#: other providers' is told of none it does not hold).
KEEP_ALIVE_OPENAI = (f" (the TTL of OpenAI's in-memory retention taken at its documented lower bound, "
                     f"{IN_MEMORY_TTL_MIN_MS // 60_000} min)")


def _keep_alive_assumption(requests: Sequence[TraceRequest]) -> str:
    """keep-alive's assumption, naming OpenAI's in-memory retention only where the log has OpenAI."""
    text = FIXES["keep-alive"]
    if any(rules_for(r.provider) is OPENAI for r in requests):
        head, tail = text.split(" times a gap, ", 1)
        text = f"{head} times a gap{KEEP_ALIVE_OPENAI}, {tail}"
    return text


#: How a fix that does not apply is said (:attr:`WhatIf.why_not`), by ``--what-if`` and by what to
#: change alike (:data:`~.advice.CANNOT_APPLY` opens the detail of a fix listed apart): the log
#: lacks the request bodies to re-simulate it on (it may apply to the agent), or nothing it changes
#: is in the log (no subagent lanes to stagger).
CANNOT_RESIMULATE = "cannot re-simulate"
CANNOT_APPLY = "cannot apply"

#: What ``--what-if all`` runs: every fix, breakpoints as Anthropic's automatic caching.
ALL_FIXES: tuple[str, ...] = (
    "ttl-1h", "ttl-5m", "ttl-auto", "keep-alive", "stagger-subagents", "static-system", "keep-prefix-compaction",
    "pin-model", "breakpoints=auto",
)


#: How to get a log the body-level fixes can re-simulate (said wherever one cannot apply), for any
#: agent: the proxy records whatever points its API base URL at it (an environment variable, or a
#: custom base URL in the agent's provider settings: Cline-family agents set it there).
RECORD_BODIES = (
    "to get request bodies, record the agent through `prefixbench proxy` (point the agent's API base URL at it: "
    "ANTHROPIC_BASE_URL or OPENAI_BASE_URL, or a custom base URL in its provider settings), and audit that capture"
)
#: The same for a log holding Claude Code's transcripts, which claude-trace can also record.
RECORD_BODIES_CLAUDE_CODE = (
    "to get request bodies, record the agent through `prefixbench proxy` (point its ANTHROPIC_BASE_URL or "
    "OPENAI_BASE_URL at it) or run Claude Code under claude-trace, and audit that capture"
)


def record_bodies(requests: Iterable[TraceRequest]) -> str:
    """How to record a log with bodies, naming claude-trace only where the log holds Claude Code's
    requests (it wraps Claude Code alone: on a Cline or Roo task it was advice that could not apply)."""
    return RECORD_BODIES_CLAUDE_CODE if any(r.source_format == "claude-code" for r in requests) else RECORD_BODIES


def given_write(provider: str, usage: Usage) -> int | None:
    """A request's written tokens as its usage gives them: None where it gives no write count
    (:func:`~prefixbench.workloads.audit.core.writes_reported`), never a 0."""
    return usage.cache_write if writes_reported(provider, usage) else None


class RequestChange(msgspec.Struct, frozen=True):
    """One request the fix changes: reported and counterfactual usage, and the dollars."""

    file: str
    lane: str
    index: int
    line: int
    reported_read: int
    #: None where the request's usage gives no write count (an OpenAI-shaped usage's 0:
    #: :func:`~prefixbench.workloads.audit.core.writes_reported`), as its audit row's.
    reported_write: int | None
    counterfactual_read: int
    counterfactual_write: int
    counterfactual_write_1h: int
    saved_usd: Decimal
    #: False: the request's model has no price row; its tokens moved, its dollars are unknown
    #: (``saved_usd`` 0 here, null in the JSON).
    priced: bool = True

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "lane": self.lane, "index": self.index, "line": self.line, "reported_cache_read": self.reported_read,
                "reported_cache_write": self.reported_write, "cache_read": self.counterfactual_read,
                "cache_write": self.counterfactual_write, "cache_write_1h": self.counterfactual_write_1h,
                "saved_usd": float(self.saved_usd) if self.priced else None}


class _Changes(Sequence[RequestChange]):
    """A fix's changed requests, held by column and made a :class:`RequestChange` each when read:
    what a tuple of them gives, in about 70 bytes a change rather than about 330 (the struct, its
    counterfactual ints, its ``Decimal`` and the slots of the lists that held it). ``ttl-1h``
    changes nearly every request, and every fix's changes are held until they are written out.

    ``saved_usd`` is held as its coefficient and exponent (rebuilt exactly, the same digits); one
    that does not fit (more than 18 digits, a negative zero) as it is."""

    __slots__ = ("lanes", "lane_ids", "of", "ints", "coef", "exp", "odd", "priced")
    _FIELDS = 7  # index, line, reported read and write, counterfactual read, write and write_1h

    def __init__(self) -> None:
        self.lanes: list[tuple[str, str]] = []
        self.lane_ids: dict[tuple[str, str], int] = {}
        self.of = array("i")  # each change's lane, in ``lanes``
        self.ints = array("q")
        self.coef = array("q")
        self.exp = array("b")
        self.odd: dict[int, Decimal] = {}
        self.priced = bytearray()

    def add(self, lane: tuple[str, str], index: int, line: int, reported_read: int, reported_write: int | None, read: int,
            write: int, write_1h: int, saved: Decimal, priced: bool = True) -> None:
        n = self.lane_ids.get(lane)
        if n is None:
            n = self.lane_ids[lane] = len(self.lanes)
            self.lanes.append(lane)
        self.of.append(n)
        # A write count the usage does not give (None) is held as -1: no count is below 0.
        self.ints.extend((index, line, reported_read, -1 if reported_write is None else reported_write, read, write, write_1h))
        sign, digits, exponent = saved.as_tuple()
        if type(exponent) is int and -128 <= exponent <= 127 and len(digits) <= 18 and (any(digits) or not sign):
            self.coef.append(int(saved.scaleb(-exponent)))
            self.exp.append(exponent)
        else:
            self.odd[len(self.priced)] = saved
            self.coef.append(0)
            self.exp.append(0)
        self.priced.append(priced)

    def saved(self, i: int) -> Decimal:
        found = self.odd.get(i) if self.odd else None
        return Decimal(self.coef[i]).scaleb(self.exp[i]) if found is None else found

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        file, lane = self.lanes[self.of[i]]
        k, v = self._FIELDS * i, self.ints
        written = v[k + 3]
        return RequestChange(file, lane, v[k], v[k + 1], v[k + 2], None if written < 0 else written, v[k + 4], v[k + 5], v[k + 6],
                             self.saved(i), priced=bool(self.priced[i]))

    def __len__(self) -> int:
        return len(self.priced)

    def __iter__(self) -> Iterator[RequestChange]:
        return (self[i] for i in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (tuple, list, _Changes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def by_lane(self) -> dict[tuple[str, str], array]:
        """Each lane's changes (their places here), the lanes in the order of their first change."""
        out: dict[tuple[str, str], array] = {}
        lanes = self.lanes
        for i, n in enumerate(self.of):
            found = out.get(lanes[n])
            if found is None:
                found = out[lanes[n]] = array("q")
            found.append(i)
        return out

    def requests_changed(self, at: Iterable[int]) -> int:
        v = self.ints
        return sum(v[self._FIELDS * i] >= 0 for i in at)

    def tokens_to_read(self, at: Iterable[int]) -> int:
        v, f = self.ints, self._FIELDS
        return sum(v[f * i + 4] - v[f * i + 2] for i in at)

    def saved_usd(self, at: Iterable[int]) -> Decimal:
        return usd_sum(self.saved(i) for i in at)

    def any_priced(self, at: Iterable[int]) -> bool:
        return any(self.priced[i] for i in at)

    def writes_1h(self) -> bool:
        """Whether a changed request writes at 1 h in the re-simulation (its ``write_1h``, read
        from its column: no change made for it)."""
        v, n = self.ints, self._FIELDS
        return any(v[k] > 0 for k in range(6, len(v), n))

    def unpriced_requests(self) -> int:
        """The changes of a request (not a lane's keep-alives) that no price row prices."""
        if all(self.priced):
            return 0
        v, f = self.ints, self._FIELDS
        return sum(v[f * i] >= 0 for i, priced in enumerate(self.priced) if not priced)


class LaneEffect(msgspec.Struct, frozen=True):
    file: str
    lane: str
    requests_changed: int
    tokens_to_read: int
    saved_usd: Decimal
    #: ttl-auto: what the lane asks for (the TTL, or the retention) and its idle gaps; ttl fixes:
    #: the lane's idle gaps, in its provider's two lifetimes (:class:`GapBounds`).
    note: str = ""
    #: False: no change of the lane has a price row (its ``saved_usd`` 0 here, null in the JSON).
    priced: bool = True


#: How a fix's detail says requests it adds (keep-alives to a model with no price row) are left
#: out of its figure: what it saves is then at most the figure (the views say ``saves up to``).
UNCHARGED = "not charged in the figure (their cost is unknown)"

#: How static-system's detail says, on a log without bodies, that the change it re-simulates was
#: never seen: the views say ``may save`` (:func:`~prefixbench.reports.whatif.hedged`).
INFERRED = "the change itself is inferred from the reads, not seen"

#: How a fix's detail says that what it saves is on calls through a relay (a ``model_provider``
#: of the user's configuration: :attr:`~prefixbench.workloads.logs.trace.TraceRequest.relay`),
#: whose cache answered under rules the log does not give (the maker's were applied): the views
#: say ``may save`` (:func:`~prefixbench.reports.whatif.hedged`), as the relay notes say the
#: relay's rules are not known.
RELAYED = "whose cache rules are not known"


class WhatIf(msgspec.Struct, frozen=True):
    """One fix over the whole log."""

    fix: str
    applies: bool
    requests_changed: int
    tokens_to_read: int
    saved_usd: Decimal | None
    assumption: str
    #: Why it cannot apply, or what drove the figure (gaps, the compaction read...).
    detail: str = ""
    lanes: tuple[LaneEffect, ...] = ()
    changes: tuple[RequestChange, ...] = ()
    #: Not applied for want of request bodies (:class:`_NoBodies`): the fix may apply to the agent,
    #: the log cannot show it; False where it applies, or where nothing it changes is in the log.
    #: What to change ranks the former by what its misses lost, never the latter.
    needs_bodies: bool = False

    @property
    def why_not(self) -> str:
        """How a fix that does not apply is said, in what to change's words too: ``cannot
        re-simulate`` where the log lacks the request bodies (:attr:`needs_bodies`), ``cannot
        apply`` where nothing the fix changes is in the log."""
        return CANNOT_RESIMULATE if self.needs_bodies else CANNOT_APPLY

    @property
    def unpriced_requests(self) -> int:
        """The requests the fix changes that no price row prices: in ``requests_changed`` and
        ``tokens_to_read``, not in ``saved_usd``."""
        changes = self.changes
        if isinstance(changes, _Changes):  # (read from its columns: the writers ask for it a few times)
            return changes.unpriced_requests()
        return sum(c.index >= 0 and not c.priced for c in changes)

    @property
    def unpriced_only(self) -> bool:
        """The fix changes requests and none of them has a price row: its dollars are unknown
        (null in the JSON, as a lane's is), not the 0 :attr:`saved_usd` sums to."""
        return self.unpriced_requests > 0 and not any(c.priced for c in self.changes)

    def to_json(self, changes: bool = True) -> dict[str, object]:
        """``changes`` False: the changed requests are left as they are (:class:`RequestChange`:
        :meth:`RequestChange.to_json` each), not a dict each made for all of them at once."""
        return {
            "fix": self.fix,
            "applies": self.applies,
            "requests_changed": self.requests_changed if self.applies else None,
            "tokens_to_read": self.tokens_to_read if self.applies else None,
            "saved_usd": None if self.saved_usd is None or self.unpriced_only else float(self.saved_usd),
            "unpriced_requests": self.unpriced_requests if self.applies else None,
            "assumption": self.assumption,
            "detail": self.detail,
            # (on a fix that does not apply only: which of the two it is, as :attr:`why_not` says)
            **({} if self.applies else {"needs_bodies": self.needs_bodies}),
            "lanes": [
                {"file": e.file, "lane": e.lane, "requests_changed": e.requests_changed, "tokens_to_read": e.tokens_to_read,
                 "saved_usd": float(e.saved_usd) if e.priced else None, "note": e.note}
                for e in self.lanes
            ],
            "changes": [c.to_json() for c in self.changes] if changes else self.changes,
        }


# --- parsing -------------------------------------------------------------------------------


def parse_fixes(text: str) -> list[str]:
    """``ttl-1h,stagger-subagents,breakpoints=system+last`` -> the fixes, checked (``all``: :data:`ALL_FIXES`)."""
    if not text.strip():
        raise UserError("--what-if: no fix named (give one or more, or all)")
    fixes = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            raise UserError(f"--what-if: empty item in {text!r}")
        if item == "all":
            fixes.extend(ALL_FIXES)
            continue
        name = item.split("=", 1)[0]
        if name not in FIXES:
            raise UserError(f"--what-if: unknown fix {item!r} (known: all, {', '.join(n if n != 'breakpoints' else 'breakpoints=PLACE+...' for n in FIXES)})")
        if name == "breakpoints":
            if "=" not in item:
                raise UserError("--what-if: breakpoints needs places, e.g. breakpoints=tools+system+last")
            parse_breakpoints(item.split("=", 1)[1])
        elif "=" in item:
            raise UserError(f"--what-if: {name} takes no value")
        fixes.append(item)
    return list(dict.fromkeys(fixes))


#: last-N: up to four digits (a conversation of more messages is not one a person counts back in).
_PLACE = re.compile(r"tools|system|last(?:-[0-9]{1,4})?|auto")


def parse_breakpoints(spec: str) -> tuple[str, ...]:
    places = tuple(p.strip() for p in spec.split("+"))
    for place in places:
        if not _PLACE.fullmatch(place):
            raise UserError(f"--what-if: breakpoints: {place!r} is not tools, system, last, last-N (N up to 9999) or auto")
    # last-N by its number: last-01 is last-1, and last-0 the last message (one place, two names).
    places = tuple(f"last-{int(p[5:])}" if p.startswith("last-") else p for p in places)
    if "last-0" in places:
        raise UserError("--what-if: breakpoints: last-0 is the last message: write last (last-N counts from 1)")
    if "auto" in places and len(places) > 1:
        raise UserError("--what-if: breakpoints=auto is automatic caching alone (one top-level marker)")
    if len(places) > (ANTHROPIC.max_breakpoints or 0):
        raise UserError(f"--what-if: breakpoints: {len(places)} places, Anthropic allows at most {ANTHROPIC.max_breakpoints}")
    if len(set(places)) != len(places):
        raise UserError(f"--what-if: breakpoints: a place is named twice in {spec!r}")
    return places


# --- the replay ----------------------------------------------------------------------------


def simulate(
    requests: Sequence[TraceRequest],
    summaries: Sequence[FileSummary],
    heads: Heads,
    ttl: TtlPolicy = lambda r: None,
    *,
    link: bool = True,
    clock: Clock | None = None,
) -> dict[Key, Pred]:
    """Predict every request of the trace in send order (``link``: a compaction call that starts
    its own chain under the main lane's head reads the main lane's prefix, as the audit predicts;
    ``clock``: :func:`clock_by_position` of these requests, when the caller has it already)."""
    ticks, readies, positions = clock if clock is not None else clock_by_position(requests, summaries)
    sources = compaction_sources([requests[i] for i in positions]) if link else {}
    return _predict(requests, heads, ttl, ticks, readies, positions, sources)


def _predict(
    requests: Sequence[TraceRequest],
    heads: Heads,
    ttl: TtlPolicy,
    ticks: Sequence[int],
    readies: Sequence[int],
    positions: Sequence[int],
    sources: dict[Key, Key],
    at: Preds | None = None,
    keep: frozenset[Key] | None = None,
) -> dict[Key, Pred]:
    """The requests at ``positions`` (send order) predicted on one fresh cache, compaction calls
    linked to ``sources``; ``at``: each prediction put there by position instead (the dict
    returned is then empty); ``keep``: ``sources``' main requests, made already."""
    # A fix changes what the provider would have read: the log's reads are no guide to it, so no
    # prediction keeps to them (the baseline is predicted alike).
    predictor = Predictor(heads, ttl, keep=frozenset(sources.values()) if keep is None else keep, follow=False, in_order=True)
    out: dict[Key, Pred] = {}
    for i in positions:
        r = requests[i]
        key = (r.file, r.lane, r.seq)  # (from the request read: a plan's moved request is made once)
        p = predictor.predict(r, ticks[i], readies[i], sources.get(key))
        u = r.usage
        if at is not None:
            at.put(i, p)
        elif u is None:
            out[key] = Pred(p.read, p.write, p.write_1h, p.uncached)
        else:  # (the reported int objects where the prediction equals them: one int, not two)
            out[key] = Pred(same_int(p.read, u.cache_read), same_int(p.write, u.cache_write_5m),
                            same_int(p.write_1h, u.cache_write_1h), same_int(p.uncached, u.uncached))
    return out


# --- re-simulating only what a fix reaches -------------------------------------------------


class _ByKey(Mapping[Key, Pred]):
    """Predictions by position (:class:`~prefixbench.workloads.audit.core.Preds`) looked up by
    request key through ``index`` (key -> position): what a dict of them would hold, without a
    ``Pred`` object and a dict slot a request."""

    __slots__ = ("index", "values")

    def __init__(self, index: dict[Key, int], preds: Preds) -> None:
        self.index, self.values = index, preds.values

    def __getitem__(self, key: Key) -> Pred:
        values, j = self.values, 4 * self.index[key]  # (Preds' layout, read here: one call a lookup, not two)
        return Pred(values[j], values[j + 1], values[j + 2], values[j + 3])

    def get(self, key: Key, default: Pred | None = None) -> Pred | None:  # type: ignore[override]
        return self[key] if key in self.index else default

    def __contains__(self, key: object) -> bool:
        return key in self.index

    def __iter__(self) -> Iterator[Key]:
        return iter(self.index)

    def __len__(self) -> int:
        return len(self.index)


class _Again(Mapping[Key, Pred]):
    """``base`` with the requests of ``again`` predicted again: what ``{**base, **again}`` holds,
    without a copy of ``base`` a fix."""

    __slots__ = ("base", "again")

    def __init__(self, base: Mapping[Key, Pred], again: dict[Key, Pred]) -> None:
        self.base, self.again = base, again

    def __getitem__(self, key: Key) -> Pred:
        return self.again.get(key) or self.base[key]

    def get(self, key: Key, default: Pred | None = None) -> Pred | None:  # type: ignore[override]
        return self.again.get(key) or self.base.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self.again or key in self.base

    def __iter__(self) -> Iterator[Key]:
        yield from self.base
        yield from (key for key in self.again if key not in self.base)

    def __len__(self) -> int:
        return len(self.base) + sum(key not in self.base for key in self.again)


class _AgainAt(Mapping[Key, Pred]):
    """:class:`_Again` for a plan of the log's requests in the log's positions: the predictions
    made again held by position (``again``, those ``made``), 33 bytes a request of the log rather
    than a key's dict slot and a ``Pred`` a request predicted again (about 100)."""

    __slots__ = ("base", "index", "again", "made")

    def __init__(self, base: Mapping[Key, Pred], index: dict[Key, int], again: Preds, made: bytearray) -> None:
        self.base, self.index, self.again, self.made = base, index, again, made

    def __getitem__(self, key: Key) -> Pred:
        i = self.index[key]
        return self.again[i] if self.made[i] else self.base[key]

    def get(self, key: Key, default: Pred | None = None) -> Pred | None:  # type: ignore[override]
        i = self.index.get(key)
        return self.base.get(key, default) if i is None or not self.made[i] else self.again[i]

    def __contains__(self, key: object) -> bool:
        return key in self.base

    def __iter__(self) -> Iterator[Key]:
        return iter(self.base)

    def __len__(self) -> int:
        return len(self.base)


class _Keys(Sequence[Key]):
    """Each request's key, made when asked: what a list of them would hold, without a tuple and a
    list slot a request (about 70 bytes) held while the fixes run."""

    __slots__ = ("requests",)

    def __init__(self, requests: Sequence[TraceRequest]) -> None:
        self.requests = requests

    def __getitem__(self, i: int) -> Key:  # type: ignore[override]  (an index, no slice)
        r = self.requests[i]
        return (r.file, r.lane, r.seq)

    def __len__(self) -> int:
        return len(self.requests)

    def __iter__(self) -> Iterator[Key]:
        return ((r.file, r.lane, r.seq) for r in self.requests)


class _Places(Mapping[Key, int]):
    """Each request's position by its key, worked out rather than held: a file's requests sit in
    their order (``seq``) from the file's first, so a key's position is its file's start plus its
    ``seq``, checked against the request there; the few that sit elsewhere, or whose place is not
    a whole number, are held (the last of
    two with one key, as a dict of every key would hold it). What a dict of every request's key
    would give, without its slot and its position's int a request (about 100 bytes)."""

    __slots__ = ("requests", "start", "moved")

    def __init__(self, requests: Sequence[TraceRequest]) -> None:
        self.requests = requests
        self.start: dict[str, int] = {}
        self.moved: dict[Key, int] = {}
        start, moved = self.start, self.moved
        for i, r in enumerate(requests):
            if type(r.seq) is not int or start.setdefault(r.file, i - r.seq) + r.seq != i:
                moved[(r.file, r.lane, r.seq)] = i
            elif moved:
                moved.pop((r.file, r.lane, r.seq), None)

    def get(self, key: Key, default: int | None = None) -> int | None:  # type: ignore[override]
        if self.moved:
            i = self.moved.get(key)
            if i is not None:
                return i
        file, lane, seq = key
        start = self.start.get(file)
        if start is None or type(seq) is not int:  # (an added request's place between two: 1.2)
            return default
        i = start + seq
        if 0 <= i < len(self.requests):
            r = self.requests[i]
            if r.seq == seq and r.lane == lane and r.file == file:
                return i
        return default

    def __getitem__(self, key: Key) -> int:
        i = self.get(key)
        if i is None:
            raise KeyError(key)
        return i

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Key]:
        for i, r in enumerate(self.requests):
            key = (r.file, r.lane, r.seq)
            if self.get(key) == i:
                yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _Reference:
    """The log as sent and its prediction, from which a fix is re-simulated in part.

    The requests are grouped into *units*: those that share a part of the predictor's state
    (:func:`~prefixbench.workloads.audit.core.state_slots`: a chain node, a head's entry, a
    provider's body cache, the block hashes), directly or through other requests, and a
    compaction call with the main request it is linked to. A request's prediction depends only
    on the requests of its unit, so a fix is re-simulated on the units it changes a request of
    (:func:`_resimulate`) and every other request keeps its prediction here."""

    def __init__(self, requests: list[TraceRequest], heads: Heads, clock: Clock, sources: dict[Key, Key],
                 preds: Mapping[Key, Pred] | Preds) -> None:
        """``preds``: by key, or by position in ``requests`` (the audit's :class:`~prefixbench.workloads.audit.core.Baseline`)."""
        self.requests, self.heads, self.clock, self.sources = requests, heads, clock, sources
        #: Each request's key (made when asked), and its position by key.
        self.keys: Sequence[Key] = _Keys(requests)
        self.index: Mapping[Key, int] = _Places(requests)
        self.preds: Mapping[Key, Pred] = _ByKey(self.index, preds) if isinstance(preds, Preds) else preds
        # Union-find over the requests (0..n-1) and then their slots; flattened once built.
        parent = list(range(len(requests)))
        #: Per (kind, namespace): each slot name's element.
        self.slots: dict[tuple[str, str], dict[object, int]] = {}

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for i, r in enumerate(requests):
            source = sources.get(self.keys[i])
            linked = None if source is None else self.index.get(source)
            here = find(i)
            for kind, space, name in state_slots(r, heads, None if linked is None else requests[linked]):
                table = self.slots.setdefault((kind, space), {})
                element = table.get(name)
                if element is None:
                    element = table[name] = len(parent)
                    parent.append(element)
                other = find(element)
                if other != here:
                    parent[other] = here
            if linked is not None:
                other = find(linked)
                if other != here:
                    parent[other] = here
        #: Each element's unit (the root of its group).
        self.unit: list[int] = [find(x) for x in range(len(parent))]

    def slot_unit(self, slot: tuple[str, str, object]) -> int | None:
        element = self.slots.get((slot[0], slot[1]), {}).get(slot[2])
        return None if element is None else self.unit[element]


def _ttl_moves(r: TraceRequest, ttl: str | None) -> bool:
    """Whether writing with ``ttl`` (a plan's TTL for ``r``) changes what the predictor sends for
    ``r`` from the log's own TTL (as :class:`~prefixbench.workloads.audit.core.Predictor` reads it)."""
    if ttl is None or r.hash_ids is not None:
        return False
    rules = rules_for(r.provider)
    if rules.request_ttl is not None and (r.body is not None or (r.prefix is not None and r.usage is not None)):
        # The provider keeps a prefix per request for the lifetime it asked (OpenAI's retention):
        # the plan's moves it where it names another than the request's own.
        return rules.ttl_label(r.model, ttl, r.sent_ms) != rules.ttl_label(r.model, r.asked_retention, r.sent_ms)
    if r.body is not None:
        body = r.body
        return rules_for(r.provider).ttl_per_request and (
            any(bp.ttl != ttl for bp in body.cache_breakpoints) or body.auto_cache not in (None, ttl))
    if r.prefix is None or r.usage is None:
        return False
    return ttl != ("1h" if r.usage.cache_write_1h else "5m")


def _resimulate(ref: _Reference, requests: list[TraceRequest], summaries, ttl: TtlPolicy = lambda r: None, *,
                link: bool = True, aligned: bool = False) -> Mapping[Key, Pred]:
    """What :func:`simulate` predicts for ``requests`` (a plan: ``ref``'s requests, some changed,
    moved or added) with ``ttl`` and ``link``, re-simulating only the units (:class:`_Reference`)
    that hold a request the plan changes; every other request keeps its prediction in ``ref``.

    A request is changed when it is another object than the log's, sent at another tick, added,
    written with another TTL (:func:`_ttl_moves`) or, for a compaction call, linked to another
    main request; the units are those of the log joined by what the changed requests share in
    the plan. Outside them, every request and everything it shares state with is as logged, so
    its prediction is; inside them, no request shares state with one outside, so predicting them
    alone, in the plan's send order, is what the whole log would predict for them.

    ``aligned``: the plan is the log request for request, in its positions, a changed one sent as
    the log's (its file, lane, place, send and ready times and compaction link): the log's clock,
    keys and links hold, and nothing a request of every file is made again."""
    same = requests is ref.requests
    ticks, readies, positions = ref.clock if same or aligned else clock_by_position(requests, summaries)
    if not link:
        sources = {}
    else:
        keyed = _unmoved(requests)  # (keys and kinds only: no moved request made for them)
        sources = ref.sources if same or aligned else compaction_sources(keyed[i] for i in positions)
    index, logged, unit = ref.index, ref.requests, ref.unit
    ref_ticks, ref_readies = ref.clock[0], ref.clock[1]
    #: Elements the log has no unit for (added requests, slots no logged request has).
    fresh: dict[object, int] = {}
    #: Positions whose prediction may change, and of those the ones whose slots or link may
    #: differ from the log's (another request, an added one, another link): only these join units.
    changed = array("q")  # (8 bytes a position, not an int object and a slot: a TTL changes every request)
    rewired = array("q")
    keys: Sequence[Key]
    elements: Sequence[int]  # each position's unit in the log (or its fresh element)
    #: Whether each request of the plan has its key's place in the log (a plan that moves some in time).
    placed = False
    if same:
        keys, elements, found = ref.keys, unit, len(logged)
        for j, r in enumerate(requests):
            if _ttl_moves(r, ttl(r)):
                changed.append(j)
    elif aligned:
        keys, elements, found = ref.keys, unit, len(logged)
        for j, r in enumerate(requests):
            if logged[j] is not r:
                changed.append(j)
                rewired.append(j)
            elif _ttl_moves(r, ttl(r)):
                changed.append(j)
    else:
        keys, found, placed = _Keys(_unmoved(requests)), 0, len(requests) == len(logged)
        elements = []
        for j, r in enumerate(requests):
            key = (r.file, r.lane, r.seq)
            i = index.get(key)
            if i is None:
                elements.append(fresh.setdefault(("request", key), len(unit) + len(fresh)))
                changed.append(j)
                rewired.append(j)
                placed = False
                continue
            found += 1
            placed = placed and i == j
            elements.append(unit[i])
            if logged[i] is not r:
                changed.append(j)
                rewired.append(j)
            elif ticks[j] != ref_ticks[i] or readies[j] != ref_readies[i] or _ttl_moves(r, ttl(r)):
                changed.append(j)
    linked = set(sources) | set(ref.sources)
    # Positions by key, of the compaction calls and their main requests only (all of them: the log's).
    wanted = linked | set(sources.values())
    at = index if same or aligned else {key: j for j, key in enumerate(keys) if key in wanted}
    for key in linked:
        if sources.get(key) != ref.sources.get(key) and key in at:
            changed.append(at[key])
            rewired.append(at[key])
    if not changed and found == len(logged):
        return ref.preds
    # The units of the log, joined by the slots and links the rewired requests have in the plan.
    joined: dict[int, int] = {}

    def root(x: int) -> int:
        return _find(joined, x)

    for j in dict.fromkeys(rewired):
        here = root(elements[j])
        source = sources.get(keys[j])
        links = [] if source is None else [elements[at[source]]]
        for slot in state_slots(requests[j], ref.heads, None if source is None else requests[at[source]]):
            found_unit = ref.slot_unit(slot)
            links.append(found_unit if found_unit is not None else fresh.setdefault(slot, len(unit) + len(fresh)))
        for other in links:
            other = root(other)
            if other != here:
                joined[other] = here
    # (each unit's root once: a TTL plan changes every request, most of one unit)
    reached = {root(u) for u in {elements[j] for j in changed}}
    if found < len(logged):  # a request the plan leaves out: its unit is changed too
        present = set(keys)
        reached.update(root(unit[i]) for i, key in enumerate(ref.keys) if key not in present)
    parts = _parts(requests, positions, elements, root, reached)
    keep = frozenset(sources.values())
    if (same or aligned or placed) and 3 * sum(map(len, parts)) > len(requests):
        # Most of the log predicted again, in the log's positions: by position (see _AgainAt).
        again, made = Preds(len(requests)), bytearray(len(requests))
        for part in parts:
            for j in part:
                made[j] = 1
            _predict(requests, ref.heads, ttl, ticks, readies, part, sources, again, keep)
        return _AgainAt(ref.preds, index, again, made)
    found_again: dict[Key, Pred] = {}
    for part in parts:
        found_again.update(_predict(requests, ref.heads, ttl, ticks, readies, part, sources, keep=keep))
    return _Again(ref.preds, found_again)


def _find(joined: dict, x):
    """The root of ``x`` in the union-find forest ``joined`` (child -> parent), the path to it
    flattened on the way."""
    if x not in joined:  # (most elements: a root, no path to flatten)
        return x
    path = []
    while x in joined:
        path.append(x)
        x = joined[x]
    for p in path:
        joined[p] = x
    return x


def _parts(requests: Sequence[TraceRequest], positions: Sequence[int], elements: Sequence[int],
           root: Callable[[int], int], reached: set[int]) -> list[array]:
    """The positions (send order) of the requests in the ``reached`` units, in parts that share
    nothing a prediction reads: the units, joined where they share a lane (the predictor keeps a
    lane's start, model and last send beside the slots), each part's positions in send order.
    Each part is predicted on a cache of its own, so the predictor holds one part's chain nodes
    at a time, not those of every request predicted again."""
    joined: dict[object, object] = {}
    # Each element's unit, looked up once (``root``'s forest does not change here; a part's
    # requests share a few elements).
    units: dict[int, int] = {}
    done: set[tuple[int, str, str]] = set()

    def top(x: object) -> object:
        return _find(joined, x)

    for j in positions:
        u = units.get(elements[j])
        if u is None:
            u = units[elements[j]] = root(elements[j])
        if u in reached:
            r = requests[j]
            pair = (u, r.file, r.lane)
            if pair in done:  # (joined already: a lane's requests mostly share one unit)
                continue
            done.add(pair)
            a, b = top(u), top((r.file, r.lane))
            if a != b:
                joined[b] = a
    parts: dict[object, array] = {}  # (8 bytes a position, not an int object and a slot)
    for j in positions:
        u = units[elements[j]]  # (every position's element looked up above)
        if u in reached:
            parts.setdefault(top(u), array("q")).append(j)
    return list(parts.values())


# --- fixes as trace rewrites ---------------------------------------------------------------


class _Plan(msgspec.Struct, frozen=True):
    #: (A list, or the log's requests some moved in time, :class:`_Shifted`.)
    requests: Sequence[TraceRequest]
    ttl: TtlPolicy
    detail: str = ""
    #: The fix sends the same prompt (only the cache's use of it changes); False when the
    #: request itself changes size (keep-prefix-compaction replays the main lane's tools).
    same_prompt: bool = True
    #: Requests the fix adds (keep-alive): charged at their predicted usage.
    added: tuple[TraceRequest, ...] = ()
    #: Price each request at the model the log sent it to, not the plan's (pin-model: the
    #: figure is the cache effect alone).
    logged_prices: bool = False


class _CannotApply(Exception):
    """The fix cannot apply to the log: nothing it changes is in it (no subagent lanes, no
    compaction request, one model a lane), or the log cannot show it (:class:`_NoBodies`)."""


class _NoBodies(_CannotApply):
    """The fix would change what the requests sent, and the log holds no request bodies to change
    (nor, on the chain model, a read that shows the change): it cannot be re-simulated here,
    though it may apply to the agent that wrote the log (:attr:`WhatIf.needs_bodies`)."""


def _ttl_choosers(requests: Sequence[TraceRequest]) -> list[TraceRequest]:
    """Requests whose provider lets the client pick the TTL (per write, or OpenAI's retention per
    request), with usage and a body or prefix chain."""
    # (whether a provider and model let the client pick, asked once a pair: a plan asks this of
    # every request, and a run of the TTL fixes nine times)
    picks: dict[tuple[str, str], bool] = {}
    found = []
    for r in requests:
        if r.usage is None or (r.body is None and r.prefix is None):
            continue
        key = (r.provider, r.model)
        chooses = picks.get(key)
        if chooses is None:
            chooses = picks[key] = _picks_ttl(r) or _picks_retention(r)
        if chooses:
            found.append(r)
    return found


def _ttl_for(r: TraceRequest, ttl: str) -> str | None:
    """What a ttl plan (``1h`` / ``5m``) has ``r`` ask for: the TTL of its writes (Anthropic),
    the longer or shorter retention its model offers (OpenAI: ``24h`` / ``in_memory``, ``12h`` /
    ``30m`` on GPT-6.2 Sol), or None (nothing to choose). Answered once a provider, model and
    ``ttl`` (a TTL plan asks it of every request it re-simulates)."""
    key = (r.provider, r.model, ttl)
    found = _TTL_FOR.get(key, _TTL_FOR)
    if found is _TTL_FOR:
        found = _TTL_FOR[key] = _model_ttl_for(*key)
    return found  # type: ignore[return-value]


def _model_ttl_for(provider: str, model: str, ttl: str) -> str | None:
    if _model_picks_ttl(provider, model):
        return ttl
    choice = _retention_choice(provider, model)
    if choice is not None:
        return choice[1] if ttl == "1h" else choice[0]
    return None


_TTL_FOR: dict[tuple[str, str, str], str | None] = {}


def _picks_retention(r: TraceRequest) -> bool:
    """Whether ``r``'s provider keeps a prefix per request under a retention the client picks,
    and its model offers more than one (OpenAI: ``in_memory`` or ``24h``; ``30m`` or ``12h``)."""
    return _retention_choice(r.provider, r.model) is not None


def _retention_choice(provider: str, model: str) -> tuple[str, str] | None:
    """The (short, long) retentions a client of (provider, model) picks between, asked once each."""
    key = (provider, model)
    if key not in _RETENTION_CHOICE:
        _RETENTION_CHOICE[key] = rules_for(provider).retention_choice(model)
    return _RETENTION_CHOICE[key]


_RETENTION_CHOICE: dict[tuple[str, str], tuple[str, str] | None] = {}


def _picks_ttl(r: TraceRequest) -> bool:
    return _model_picks_ttl(r.provider, r.model)


def _model_picks_ttl(provider: str, model: str) -> bool:
    key = (provider, model)
    found = _PICKS_TTL.get(key)
    if found is None:
        found = _PICKS_TTL[key] = rules_for(provider).picks_ttl(model)
    return found


def lifetime_knobs(pairs: Iterable[tuple[str, str]]) -> tuple[bool, frozenset[str]]:
    """How the clients of these (provider, model) pairs pick a cache lifetime: (a TTL per write,
    as on Anthropic; the longer retentions they may ask per request, as OpenAI's ``24h`` on a
    model offering both or ``12h`` on GPT-6.2 Sol: empty where none does)."""
    per_write = False
    longer: set[str] = set()
    for provider, model in pairs:
        per_write = per_write or _model_picks_ttl(provider, model)
        choice = _retention_choice(provider, model)
        if choice is not None:
            longer.add(choice[1])
    return per_write, frozenset(longer)


#: Whether a (provider, model) lets the client pick the TTL: asked once each (a TTL plan asks it
#: for every request of every re-simulation, and the rules answer with regular expressions).
_PICKS_TTL: dict[tuple[str, str], bool] = {}


def _has_breakpoints(r: TraceRequest) -> bool:
    return r.body is not None and rules_for(r.provider).max_breakpoints is not None


def _plan_ttl(requests: list[TraceRequest], ttl: str) -> _Plan:
    if not _ttl_choosers(requests):
        raise _CannotApply(_no_ttl_choice(requests))
    return _Plan(requests, lambda r: _ttl_for(r, ttl))


#: What a provider offers instead of a TTL per write, where it offers something (said when a
#: ttl fix cannot apply to its requests; docs/providers.md).
OTHER_TTL_KNOBS: dict[str, str] = {
    "openai": "OpenAI has no TTL per write: its knob is prompt_cache_retention per request, \"in_memory\" (a prefix "
    "stays 5-10 min idle) or \"24h\" (kept up to 24 h, same price), which this fix re-simulates on the models that "
    "offer both (gpt-5.4, gpt-5.2, gpt-5.1 and its codex variants, gpt-5, gpt-5-codex, gpt-4.1); gpt-5.5 keeps 24h only, "
    "GPT-5.6 on keeps 30 min (gpt-6.2-sol: 30 min or, asked, 12 h, its write at 2x the 30-minute write's price), "
    "other models in_memory only",
}


def _no_ttl_choice(requests: Sequence[TraceRequest]) -> str:
    """Why a ttl fix cannot apply: no request with usage of a provider that lets the client pick a
    5 m or 1 h TTL (Anthropic's ``cache_control`` ttl, also through Bedrock); what the log's
    providers offer instead, where they offer something."""
    reason = ("no request of a provider that lets the client pick a 5 m or 1 h cache TTL (Anthropic's cache_control "
              "ttl, also on Bedrock) or a retention policy (OpenAI's prompt_cache_retention, on a model offering both) "
              "reports its usage in the log")
    providers = sorted({r.provider for r in requests})
    knobs = [OTHER_TTL_KNOBS[p] for p in providers if p in OTHER_TTL_KNOBS]
    return "; ".join([reason, *knobs])


def _plan_stagger(requests: list[TraceRequest], summaries, heads, base: Mapping[Key, Pred], clock: Clock | None = None) -> _Plan:
    lanes = {(r.file, r.lane) for r in requests if r.lane_kind == "subagent"}
    if not lanes:
        raise _CannotApply("the log has no subagent lanes to stagger")
    # The send clock by position (no table of every request: a lane's first request is all it reads).
    ticks, readies, positions = clock_by_position(requests, summaries) if clock is None else clock
    first: dict[tuple[str, str], int] = {}
    for i in positions:
        r = requests[i]
        first.setdefault((r.file, r.lane), i)
    # The first writer of each shared head, and when its response began.
    writer: dict[str, tuple[int, int]] = {}
    shift: dict[tuple[str, str], int] = {}
    for i in first.values():  # (in send order: each lane at its first request)
        r = requests[i]
        if r.prefix is None or r.prefix.parent is not None:
            continue
        tick, ready = ticks[i], readies[i]
        head = r.prefix.head
        if head in writer and writer[head][0] <= tick < writer[head][1] and (r.file, r.lane) in lanes:
            shift[(r.file, r.lane)] = writer[head][1] - tick + 1
        elif head not in writer or tick >= writer[head][1] + _TTL_5M:
            writer[head] = (tick, ready)
    if not shift:
        return _Plan(requests, lambda r: None, "no subagent started while the shared head it needed was being written")
    moved = _Shifted(requests, shift)
    many = len({file for file, _ in shift}) > 1
    detail = "; ".join(
        f"{(file.rsplit('/', 1)[-1] + ' ') if many else ''}{lane} starts {delay / 1000:.3f}s later"
        for (file, lane), delay in sorted(shift.items())
    )
    return _Plan(moved, lambda r: None, detail)


def _unmoved(requests: Sequence[TraceRequest]) -> Sequence[TraceRequest]:
    """The log's requests behind a plan that moves some in time (:class:`_Shifted`), else
    ``requests``: a moved request keeps its key, lane and kinds, so what reads only those reads
    them here, without a moved request made for each (one a request and a read)."""
    return requests.requests if type(requests) is _Shifted else requests


class _Shifted(Sequence[TraceRequest]):
    """``requests`` with each lane of ``shift`` sent that many ms later, a moved request made
    when asked for (a new object each time: a moved request is never the log's) rather than held:
    a plan of a copy of every subagent's request, held while its fix is re-simulated, was the
    peak of what to change."""

    __slots__ = ("requests", "lanes")

    def __init__(self, requests: Sequence[TraceRequest], shift: dict[tuple[str, str], int]) -> None:
        self.requests = requests
        #: The shift by lane name, then file (a request of an unmoved lane is told by one lookup, no tuple).
        self.lanes: dict[str, dict[str, int]] = {}
        for (file, lane), delay in shift.items():
            self.lanes.setdefault(lane, {})[file] = delay

    def _moved(self, r: TraceRequest) -> TraceRequest:
        files = self.lanes.get(r.lane)
        delay = 0 if files is None else files.get(r.file, 0)
        if delay and r.sent_ms is not None:
            # The call moved whole: its response's end too (idle time, and Qwen's lifetimes, count from it).
            return replace(r, sent_ms=r.sent_ms + delay, ready_ms=None if r.ready_ms is None else r.ready_ms + delay,
                           done_ms=None if r.done_ms is None else r.done_ms + delay)
        return r

    def __getitem__(self, i: int) -> TraceRequest:  # type: ignore[override]  (an index, no slice)
        r = self.requests[i]
        return r if r.lane not in self.lanes else self._moved(r)  # (read often: an unmoved lane's in one lookup)

    def __len__(self) -> int:
        return len(self.requests)

    def __iter__(self) -> Iterator[TraceRequest]:
        return map(self._moved, self.requests)


def _head_breaks(requests: Sequence[TraceRequest], heads: Heads, base: Mapping[Key, Pred]) -> list[Key]:
    """Body-less main and subagent requests whose reported read fell inside the unlogged head
    (system prompt and tools) where the chain model read past it, with no tool-list change
    logged: the breaks the audit locates in the head (``system-changed``)."""
    out = []
    for r in requests:
        if r.body is not None or r.prefix is None or r.usage is None or r.lane_kind not in ("main", "subagent"):
            continue
        # An unknown head size (no chain start read anything) is at least one token: a read of 0.
        size = heads.get(r.prefix.head) or 1
        key = (r.file, r.lane, r.seq)
        if key not in base or any(kind == "tools_change" for kind, _ in r.events):
            continue
        if r.usage.cache_read < size * (1 - READ_TOLERANCE) and base[key].read >= size:
            out.append(key)
    return out


def _static_system_chains(
    requests: list[TraceRequest],
    summaries: Sequence[FileSummary],
    heads: Heads,
    base: Mapping[Key, Pred],
    attributed: Collection[tuple[str, int]],
    ref: _Reference | None = None,
) -> tuple[_Plan, Mapping[Key, Pred]]:
    """``static-system`` on a log without bodies: the plan (the log as the chain model reads it,
    every prompt extending its chain under its lane's head) and the baseline it is measured
    against (the log with each located head break as a new chain under a head of its own).
    ``attributed``: the (file, line) of the requests the audit put down to the system prompt
    (a break it puts down to an effort change, say, is not this fix's)."""
    # The breaks' lines only, not a line a request of every file.
    located = set(_head_breaks(requests, heads, base))
    breaks = {key for r in requests if (key := (r.file, r.lane, r.seq)) in located and (r.file, r.line) in attributed}
    if not breaks:
        raise _NoBodies(
            "the log has no request bodies, and no request's read fell inside the unlogged system prompt and tools "
            f"where the cache model read past them (nothing shows them changing); {record_bodies(requests)}"
        )
    as_logged = [
        replace(r, prefix=replace(r.prefix, head=f"{r.prefix.head}|changed@{r.file}:{r.line}", parent=None))
        if (r.file, r.lane, r.seq) in breaks and r.prefix is not None else r
        for r in requests
    ]
    lanes = len({(file, lane) for file, lane, _ in breaks})
    detail = (
        f"{len(breaks)} request(s) in {lanes} lane(s) read less than the unlogged system prompt and tools where "
        "the cache model read past them (the breaks the audit locates in the head); re-simulated on the chain "
        f"model with each of them extending its chain under the lane's head (no bodies: {INFERRED})"
    )
    # (Each break sent as logged under a head of its own: the log's clock and links hold.)
    logged = simulate(as_logged, summaries, heads) if ref is None else _resimulate(ref, as_logged, summaries, aligned=True)
    return _Plan(requests, lambda r: None, detail), logged


def _day_breaks(requests: Sequence[TraceRequest], summaries: Sequence[FileSummary], changes: _Changes) -> str:
    """What ``static-system`` on a log without bodies says of the breaks it removed in pi-format
    sessions that came after their lane's previous request of another UTC date: pi writes the date
    into its system prompt (0.58 and later; the time before), so if the local date changed too, the
    date line alone would break the prefix whatever its settings. The local time zone is not
    logged, and the log does not show what changed in the unlogged head: the words say where such a
    break lies, not that the date caused it, and the saving counts it as removed all the same.
    Named as the transcripts' breaks: an audit holding bodies too says of those apart. Empty where
    there is none."""
    from datetime import datetime, timezone

    pi = {f.file for f in summaries if f.format == "pi"}
    changed = {(c.file, c.line): c for c in changes if c.index >= 0 and c.file in pi}
    if not changed:
        return ""
    lanes = {(file, c.lane) for (file, _), c in changed.items()}
    by_lane: dict[tuple[str, str], list[TraceRequest]] = defaultdict(list)
    for r in requests:
        if (r.file, r.lane) in lanes and r.sent_ms is not None:
            by_lane[(r.file, r.lane)].append(r)

    def day(ms: int) -> str:
        return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%d")

    found: list[RequestChange] = []
    for lane in by_lane.values():
        lane.sort(key=lambda r: r.seq)
        for prev, r in zip(lane, lane[1:]):
            c = changed.get((r.file, r.line))
            if c is not None and prev.sent_ms is not None and day(prev.sent_ms) != day(r.sent_ms):  # type: ignore[arg-type]
                found.append(c)
    if not found:
        return ""
    usd = usd_sum(c.saved_usd for c in found if c.priced)
    return (f"; {len(found):,} of the breaks located in pi-format transcripts (not the request bodies) came after a "
            "request of their lane of another UTC date, where pi's date line alone would break the prefix if the local date "
            "changed too (pi writes the date into its system prompt; the local time zone is not logged); the log does not "
            "show whether that caused it. The figure counts them as removed all the same "
            f"({format_usd(usd)} of it on those requests; where the date did cause one, only moving the date out of the "
            "system prompt would save it)")


def _plan_static_system(requests: list[TraceRequest], also: str = "") -> _Plan:
    """Every body of a main or subagent lane sent with its lane's first system prompt and tools;
    ``also``: what the same fix does to the requests without bodies (see ``_static_system_chains``)."""
    with_body = [r for r in requests if r.body is not None]
    if not with_body:
        raise _NoBodies(
            "the log has no request bodies, so it cannot show the system prompt or tools changing "
            f"(a miss the log cannot explain is not evidence that they did); {record_bodies(requests)}"
        )
    first: dict[tuple[str, str], Request] = {}
    out = []
    changed = 0
    for r in requests:
        if r.body is None or r.lane_kind not in ("main", "subagent"):
            out.append(r)  # side calls (titles, quota checks) are different prompts by design
            continue
        lane = (r.file, r.lane)
        ref = first.setdefault(lane, r.body)
        if (r.body.system, r.body.system_blocks, r.body.tools) != (ref.system, ref.system_blocks, ref.tools):
            body = replace(r.body, system=ref.system, system_blocks=ref.system_blocks, tools=ref.tools)
            r = replace(r, body=_valid_breakpoints(body))
            changed += 1
        out.append(r)
    detail = f"{changed} request(s) sent another system prompt or tools than their lane's first" if changed else (
        "every main and subagent lane already sends one system prompt and one tool set"
    )
    if also:
        detail = f"logged bodies: {detail}; logs without bodies: {also}"
    return _Plan(out, lambda r: None, detail)


def _valid_breakpoints(body: Request) -> Request:
    """Drop markers that point past the (new) system blocks or tools."""
    keep = []
    for bp in body.cache_breakpoints:
        if bp.section == "tools" and bp.block_idx >= len(body.tools):
            continue
        if bp.section == "system" and (
            not (body.system or body.system_blocks) or bp.block_idx >= max(1, len(body.system_blocks))
        ):
            continue
        keep.append(bp)
    return replace(body, cache_breakpoints=tuple(keep))


def _plan_keep_prefix(requests: list[TraceRequest], summaries: Sequence[FileSummary], clock: Clock | None = None) -> _Plan:
    """Every compaction call the log shows, sent as a replay of the main request it summarizes.

    A call that already read what that request left cached (Claude Code 2.x's compaction lane)
    is left as it is; the others are rewritten. The plan is judged against a baseline that does
    not link compaction calls to their main lane (``simulate(link=False)``), so the fix is what moves.
    """
    compactions = [i for i, r in enumerate(requests) if r.is_compaction_call]
    if not compactions:
        raise _CannotApply("the log has no compaction request (at most the compacted context after one)")
    # The send order by position, and a table of the main requests replayed only (not of every request).
    positions = (clock if clock is not None else clock_by_position(requests, summaries))[2]
    sources = compaction_sources(requests[i] for i in positions)
    wanted = set(sources.values())
    by_key = {key: r for r in requests if (key := (r.file, r.lane, r.seq)) in wanted}
    out = list(requests)
    notes = []
    for at in compactions:
        c = requests[at]
        source = sources.get((c.file, c.lane, c.seq))
        if source is None:
            notes.append(f"{c.lane} at line {c.line}: no main-lane request of its session before it to replay")
            continue
        prev = by_key[source]
        where = "" if prev.file == c.file else f" of {prev.file.rsplit('/', 1)[-1]}"
        if _already_warm(c, prev):
            notes.append(f"{c.lane} at line {c.line} already read what the main request at line {prev.line}{where} left cached")
            continue
        if c.body is not None and prev.body is not None:
            instruction = c.body.messages[-1]
            header = Header(prev.body.envelope, prev.body.system, prev.body.tools)
            envelope = summary_envelope(header, (c.body.envelope.provider, c.body.envelope.model), inherit=True)
            messages = (*prev.body.messages, instruction)
            marks = [bp for bp in prev.body.cache_breakpoints]
            ttl = marks[-1].ttl if marks else "5m"
            last = CacheBreakpoint("messages", max(0, len(instruction.blocks) - 1), len(messages) - 1, ttl)
            marks.append(last)
            while len(marks) > 4:  # drop the oldest message marker first, as Claude Code does
                oldest = next((i for i, bp in enumerate(marks) if bp.section == "messages"), 0)
                marks.pop(oldest)
            body = replace(
                prev.body,
                envelope=envelope,
                messages=messages,
                cache_breakpoints=tuple(marks),
                max_tokens=c.body.max_tokens,
                purpose="compaction",
            )
            out[at] = replace(c, body=body, model=envelope.model)
            notes.append(f"{c.lane} at line {c.line} replays the main request at line {prev.line}{where} plus its instruction")
        elif c.body is None and c.prefix is not None and prev.prefix is not None:
            prefix = replace(c.prefix, head=prev.prefix.head, parent=prev.prefix.node, new_blocks=1)
            out[at] = replace_request(c, prefix=prefix, envelope=prev.envelope, model=prev.model)
            notes.append(f"{c.lane} at line {c.line} extends the main request at line {prev.line}{where} (same head and family)")
        else:
            notes.append(f"{c.lane} at line {c.line}: the log has neither its body nor its prefix chain")
    return _Plan(out, lambda r: None, "; ".join(notes), same_prompt=False)


def _unnamed_note(unnamed: int) -> str:
    """What pin-model says of the requests whose model the log does not name (left as logged)."""
    if not unnamed:
        return ""
    return (f"; {unnamed:,} request(s) whose model the log does not name are left as logged, not counted as a switch "
            "(the log cannot tell whether they went to their lane's model)")


def _chosen_note(chosen: int) -> str:
    """The user's model switches a "nothing to pin" keeps, said only where the log shows some."""
    if not chosen:
        return ""
    return f", but for the {chosen:,} switch(es) the log shows the user made (kept)"


def _plan_pin_model(requests: list[TraceRequest], prices: Prices) -> _Plan:
    """Every main and subagent lane's requests sent to the model it sent most of them to (ties:
    the first sent), within one provider and between the switches the log shows the user made
    (:func:`~prefixbench.workloads.audit.precedence.user_chose_model`: kept); priced as logged (:attr:`_Plan.logged_prices`). The
    detail counts the requests moved, per model, and what their logged tokens would cost at the
    pinned model instead (the price effect the figure leaves out)."""
    from prefixbench.workloads.audit.precedence import user_chose_model

    # A switch the log shows the user made (model-chosen) is kept: a lane is pinned a part at a
    # time, each part from one such switch to the next (its number counted in the lane's send order).
    # Each lane's positions, then each lane in its send order alone: no sort key of every request.
    lanes: dict[tuple[str, str, str], array] = {}
    for i, r in enumerate(requests):
        lanes.setdefault((r.file, r.lane, r.provider), array("q")).append(i)
    part = array("q", bytes(8 * len(requests)))  # (8 bytes a request, not a dict slot and an int)
    chosen = 0  # the user's switches, all lanes: named in a "nothing to pin" only where there are any
    for positions in lanes.values():
        order = sorted(positions, key=lambda i: (requests[i].seq, i))
        model, n = requests[order[0]].model, 0
        for i in order:
            r = requests[i]
            if r.model != model and user_chose_model(r):
                n += 1
            model = r.model
            part[i] = n
        chosen += n
    del lanes
    # A request whose model the log does not name (NO_MODEL: a Cline-family task's call with no
    # model id) shows no switch: it may have gone to the lane's own model. It is neither a model to
    # pin to nor moved.
    counts: dict[tuple[str, str, str, int], dict[str, int]] = defaultdict(dict)
    unnamed = 0
    for i, r in enumerate(requests):
        if r.lane_kind in ("main", "subagent") and r.model == NO_MODEL:
            unnamed += 1
        elif r.lane_kind in ("main", "subagent") and r.model:
            seen = counts[(r.file, r.lane, r.provider, part[i])]
            seen[r.model] = seen.get(r.model, 0) + 1
    # max() keeps the first of equal counts: the dict holds the models in the order first sent.
    pinned = {lane: max(seen, key=lambda m: seen[m]) for lane, seen in counts.items() if len(seen) > 1}
    if not pinned:
        # A lane whose models are each of another provider (a gateway's session moving from Claude
        # to Grok) switched models, but not within a provider: say so rather than "one model".
        across: dict[tuple[str, str], dict[str, None]] = defaultdict(dict)
        for (file, lane, _provider, _part), seen in counts.items():
            across[(file, lane)].update(dict.fromkeys(seen))
        crossed = [models for models in across.values() if len(models) > 1]
        if crossed:
            raise _CannotApply(
                f"{len(crossed):,} lane(s) switch models only across providers ({' -> '.join(crossed[0])}"
                f"{' and others' if len(crossed) > 1 else ''}): pin-model pins a lane within one provider, since a move "
                "to another provider's model changes its prices and its cache rules, which the re-simulation does not "
                f"model; within each provider every lane keeps one model{_chosen_note(chosen)}, so nothing to pin"
                + _unnamed_note(unnamed))
        raise _CannotApply(f"every main and subagent lane sends all its requests to one model{_chosen_note(chosen)}: "
                           "nothing to pin" + _unnamed_note(unnamed))
    out: list[TraceRequest] = []
    moved: dict[tuple[str, str], int] = defaultdict(int)
    price_effect: list[Decimal] = []
    unpriced = 0
    for i, r in enumerate(requests):
        model = pinned.get((r.file, r.lane, r.provider, part[i])) if r.lane_kind in ("main", "subagent") else None
        if model is None or r.model == model or not r.model or r.model == NO_MODEL:
            out.append(r)
            continue
        moved[(r.model, model)] += 1
        u = r.usage
        was, now = prices.row(r.model, r.sent_ms, r.speed, r.upstream), prices.row(model, r.sent_ms, r.speed, r.upstream)
        if u is not None and was is not None and now is not None:
            usage = SimpleNamespace(prompt_tokens=u.prompt, cached_tokens=u.cache_read, written_tokens=u.cache_write,
                                    written_long_tokens=u.cache_write_1h, output_tokens=u.output)
            price_effect.append(usd_sum((_cost(usage, now), -_cost(usage, was))))
        else:
            unpriced += 1
        out.append(replace_request(r, model=model))
    n = sum(moved.values())
    each = ", ".join(f"{k:,} from {old} to {new}" for (old, new), k in sorted(moved.items(), key=lambda item: (-item[1], item[0])))
    effect = usd_sum(price_effect)
    detail = (f"{n:,} request(s) in {len({key[:3] for key in pinned}):,} lane(s) sent to another model than their lane's most used one ({each}); "
              "re-simulated with every lane on its most used model, each request priced at the model it was sent to: "
              "the figure is the cache reads alone. Sent to the pinned model, those requests' logged tokens would also ")
    if price_effect:
        detail += f"cost {format_usd(abs(effect))} {'more' if effect >= 0 else 'less'} at its prices (not in the figure"
        detail += f"; {unpriced:,} of them unpriced)" if unpriced else ")"
    else:  # none priced at both models: the effect is not known, not $0
        detail += "cost an amount the log cannot price (not in the figure; none of them is priced at both models)"
    detail += _unnamed_note(unnamed)
    return _Plan(out, lambda r: None, detail, logged_prices=True)


def _read_in_full(r: TraceRequest, prev: TraceRequest, lane_wrote: bool = False) -> bool:
    """``r`` read (within the read tolerance) all that its lane's previous request ``prev`` left
    cached (:func:`_left_cached`), and that was something: the entry outlived the gap between
    them (or was refreshed)."""
    if r.usage is None or prev.usage is None or not r.usage.cache_reported or not prev.usage.cache_reported:
        return False
    cached = _left_cached(prev, lane_wrote)
    return cached > 0 and r.usage.cache_read >= cached * (1 - READ_TOLERANCE)


def _left_cached(prev: TraceRequest, lane_wrote: bool = False) -> int:
    """What ``prev`` left cached, by the audit's own rule
    (:meth:`~prefixbench.simulator.providers.base.ProviderRules.left_cached`: the expected read of
    the next request is measured against the same): so a gap keep-alive judges read in full is one
    the audit finds no miss after. ``lane_wrote``: a request of its lane up to ``prev`` reported a
    write (:func:`~prefixbench.workloads.audit.core.wrote`)."""
    u = prev.usage
    return 0 if u is None else rules_for(prev.provider).left_cached(u, lane_wrote)


#: The folders of an agent's home that hold its sessions, innermost part last: the path up to
#: one of them is one home, one account's client and cache (Claude Code's ``.claude/projects``,
#: Codex's ``.codex``: its ``sessions`` and ``archived_sessions`` are one account's, pi's
#: ``.pi/agent/sessions``, Gemini CLI's ``.gemini/tmp``, opencode's ``opencode/storage``).
_AGENT_HOMES = ((".claude", "projects"), (".codex",), (".pi", "agent", "sessions"), (".gemini", "tmp"),
                ("opencode", "storage"))


@functools.lru_cache(maxsize=4096)
def _source_of(file: str) -> str:
    """The source a file came from, where its format has no layout :func:`_setting_scope` reads
    (the survival bound's and ttl-auto's unit for such a file): one agent home (one account's cache). The path up to the innermost agent
    home folder in it (:data:`_AGENT_HOMES`); else up to its innermost ``projects`` or
    ``sessions`` folder (a copied home, whose sessions lie in folders under it); else its
    folder. Two sources' histories are not pooled (a ``projects`` folder above two homes keeps
    them apart); one source's are, whoever's account wrote its files: nothing in a transcript
    names the account (:func:`_survival_scope`)."""
    parts = file.split("/")
    for k in range(len(parts) - 2, -1, -1):
        for home in _AGENT_HOMES:
            if tuple(parts[k:k + len(home)]) == home and k + len(home) < len(parts):
                return "/".join(parts[:k + len(home)])
    for k in range(len(parts) - 2, -1, -1):
        if parts[k] in ("projects", "sessions"):
            return "/".join(parts[:k + 1])
    return "/".join(parts[:-1])


#: The folder layouts ttl-auto reads a setting's unit from, by log format: how many of a file's
#: last path parts lie below the unit one TTL setting of its agent covers (the file and the
#: folders the agent makes per project, session or task), whatever the folders are named. Claude
#: Code: ``<home>/<project>/<session>.jsonl`` (the home, ``~/.claude/projects`` or a copy of it
#: under any name: ``promptCacheTtl`` is in its settings.json); Cline, Roo Code, Kilo Code:
#: ``<tasks>/<id>/<file>`` (one extension's global storage); pi: ``<sessions>/<cwd>/<session>.jsonl``
#: (one home), OpenClaw, written as pi: ``<agent>/sessions/<session>.jsonl`` (one agent's
#: ``params``). Codex: :func:`_setting_scope`.
_SCOPE_DEPTH = {"claude-code": 2, "cline": 2, "pi": 2}


@functools.lru_cache(maxsize=4096)
def _setting_scope(file: str, fmt: str) -> str:
    """The unit one TTL setting covers for the lanes of ``file`` (a log of format ``fmt``):
    ttl-auto picks one TTL per lane kind in each such unit. Read from the folder layout the agent
    writes (:data:`_SCOPE_DEPTH`), never from a folder's name: a copied Claude Code home is one
    unit whatever its folder is called, and a Cline ``tasks`` folder's tasks are one. A Claude
    Code subagent (``<project>/<session>/subagents/agent-<id>.jsonl``) lies two folders deeper
    than its session, one in ``<project>/<session>/agent-<id>.jsonl`` one, a workflow run's agent
    four, a swapped copy's ``<project>/sessions/<session>.jsonl`` one
    (:func:`~prefixbench.workloads.logs.claude_layout.project_depth`); a Codex rollout under ``<sessions>/YYYY/MM/DD/`` four below its home, one
    in the flat ``archived_sessions`` one (a relative path from inside ``sessions``,
    ``2026/06/10/r.jsonl``, is dated too: one home, not one a month). Other formats: the source
    (:func:`_source_of`). Folders are split at ``/`` and ``\\`` alike (a Windows path)."""
    parts = re.split(r"[/\\]", file)
    if fmt == "codex":
        dated = len(parts) >= 4 and [len(p) for p in parts[-4:-1]] == [4, 2, 2] and all(
            p.isdigit() for p in parts[-4:-1])
        depth = 5 if dated else 2
    elif fmt in _SCOPE_DEPTH:
        depth = _SCOPE_DEPTH[fmt]
        if fmt == "claude-code":
            depth += project_depth(parts)
    else:
        return _source_of(file)
    kept = parts[:max(len(parts) - depth, 0)]
    return file[:max(sum(len(p) + 1 for p in kept) - 1, 0)]  # (the path's own separators)


def _keep_alive_ttl(prev: TraceRequest, ttl: int) -> int:
    """The interval keep-alive judges and bridges gaps with: the TTL, but OpenAI's in-memory
    retention (5-10 min, best effort) at its lower end, as its pings are planned."""
    return IN_MEMORY_TTL_MIN_MS if rules_for(prev.provider) is OPENAI and ttl == IN_MEMORY_TTL_MS else ttl


def _idle_from(prev: TraceRequest, tick: int, ready: int) -> int:
    """When ``prev``'s entry started its idle: its response's end where the log has it, else
    its ready time, else its send (the TTL runs from the entry's last use, not the send)."""
    if prev.done_ms is not None:
        return max(tick, prev.done_ms)
    return max(tick, ready)


def _lifetime_from(prev: TraceRequest, tick: int, ready: int) -> int:
    """Where the lifetime of ``prev``'s entry starts, as the re-simulation counts it (the rules'
    ``ttl_from``, :class:`~prefixbench.simulator.chain.ChainCache`): its send (``start``), its
    response's first byte (``response``) or its response's end (``end``, :func:`_idle_from`).
    Keep-alive's pings at the TTL count from there, so none comes after the entry went."""
    ttl_from = rules_for(prev.provider).ttl_from
    if ttl_from == "end":
        return _idle_from(prev, tick, ready)
    return max(tick, ready) if ttl_from == "response" else tick


class _Judged(msgspec.Struct, frozen=True, gc=False):
    """One idle gap past the interval the log can judge: when its outcome was known (``end``: its
    next request's response's end, else its ready time, :func:`_idle_from`), how long it was
    idle (from the previous response's end), whether the next request read in full what the
    previous one left cached, and that request."""

    end: int
    idle: int
    read: bool
    r: TraceRequest


def _survival_scope(file: str, formats: Mapping[str, str]) -> str:
    """The unit whose history keep-alive's survival bound reads for the lanes of ``file``: the
    unit its agent's TTL setting covers (:func:`_setting_scope`, read from the folders the agent
    writes, never a folder's name), as ttl-auto picks in, so a home audits the same under any
    folder name. ``formats``: each file's log format (a file not in it: the source,
    :func:`_source_of`). The unit's history is pooled: folders of transcripts kept flat side by
    side (``dump/alice/``, ``dump/bob/``) are laid out as one Claude Code home's projects, and no
    record names the account that wrote it (Claude Code 2.0-2.1 transcripts carry ``cwd``,
    ``sessionId``, ``version``, ``userType``, ``gitBranch``, no account, org or user id), so one
    account's survivals can set another's bound: the detail names the folder it pooled, and the
    user audits each account's folder on its own."""
    return _setting_scope(file, formats.get(file, ""))


def _judged_gaps(requests: Sequence[TraceRequest], ticks: Sequence[int], readies: Sequence[int],
                 positions: Sequence[int], ttl_of: Callable[[TraceRequest], int],
                 formats: Mapping[str, str] | None = None) -> dict[tuple[str, str, str], list[_Judged]]:
    """Per (scope, provider, model), the scope of :func:`_survival_scope` (``formats``: each
    file's log format), in the order their outcome was known (the next request's
    response's end, :func:`_idle_from`), the idle gaps whose outcome shows something of an
    entry's life: the previous request of the lane, of the same
    model, left something cached and both report their cache; the gap, measured from the
    previous response's end, is past the keep-alive interval (:func:`_keep_alive_ttl`); and no
    other request of that provider and model in the same scope was sent during it (it may have
    refreshed the entry). A read in full counts only past the interval plus the keep-alive margin
    (a few seconds past it are clock noise, not survival); a short read counts past the interval."""
    formats = {} if formats is None else formats
    sent: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i in positions:
        r = requests[i]
        sent[(_survival_scope(r.file, formats), r.provider, r.model)].append(ticks[i])
    last: dict[tuple[str, str], int] = {}
    lane_wrote: dict[tuple[str, str], bool] = {}  # a request of the lane up to the last reported a write
    judged: dict[tuple[str, str, str], list[_Judged]] = defaultdict(list)
    for i in positions:
        r = requests[i]
        j = last.get((r.file, r.lane))
        last[(r.file, r.lane)] = i
        wrote_before = lane_wrote.get((r.file, r.lane), False)
        lane_wrote[(r.file, r.lane)] = wrote_before or wrote(r)
        if j is None:
            continue
        prev = requests[j]
        if prev.model != r.model or r.usage is None or prev.usage is None:
            continue
        if not r.usage.cache_reported or not prev.usage.cache_reported:
            continue
        interval = _keep_alive_ttl(prev, ttl_of(prev))
        idle = ticks[i] - _idle_from(prev, ticks[j], readies[j])
        if idle <= interval or _left_cached(prev, wrote_before) <= 0:
            continue  # within the interval, or nothing was cached: the gap says nothing of an entry's life
        key = (_survival_scope(r.file, formats), prev.provider, prev.model)
        others = sent[key]
        if bisect_left(others, ticks[i]) > bisect_right(others, ticks[j]):
            continue  # another request of the model was sent during the gap: it may have refreshed the entry
        read = _read_in_full(r, prev, wrote_before)
        if read and idle <= interval + KEEP_ALIVE_MARGIN_MS:
            continue
        judged[key].append(_Judged(_idle_from(r, ticks[i], readies[i]), idle, read, r))
    for gaps in judged.values():
        gaps.sort(key=lambda g: g.end)  # stable: equal ends stay in send order
    return judged


#: Reads in full (each past the interval plus the margin) a model's history must show before a
#: client would trust its entries to outlive the published TTL: one could be a refresh the log
#: does not hold.
MIN_SURVIVALS = 2


def _bound(history: Sequence[_Judged]) -> tuple[int, TraceRequest, int] | None:
    """The survival bound a client that kept ``history`` (the gaps it had seen end) would use:
    the longest idle up to which every judged gap was read in full, with the request that read
    after it and how many reads in full it rests on; None under :data:`MIN_SURVIVALS` of them.
    A gap read short at or under a full one's length ends the bound there."""
    found: tuple[int, TraceRequest] | None = None
    count = 0
    # The gaps by length, a short read first among equal ones: the bound stops before it.
    for g in sorted(history, key=lambda g: (g.idle, g.read)):
        if not g.read:
            break
        found = (g.idle, g.r)
        count += 1
    if found is None or count < MIN_SURVIVALS:
        return None
    return found[0], found[1], count


def _plan_keep_alive(requests: list[TraceRequest], summaries, clock: Clock | None = None) -> _Plan:
    """Keep-alive requests inside every idle gap longer than the lane's keep-alive interval (see
    :data:`FIXES`), whether or not its entry outlived it: the first a margin before the interval
    ends (counted from where the entry's lifetime starts, :func:`_lifetime_from`), then one every
    interval minus the margin. Where its model's survival bound at the time the gap starts is
    longer (:func:`_bound` of the gaps of its source and model whose outcome was known by then,
    :func:`_judged_gaps`), the first comes a margin before the bound instead, in idle from the
    previous response's end (:func:`_idle_from`, the bound's own measure); a gap that ends before
    it is not bridged, and the detail says how many were not, per model. Only history is used: a
    gap's own outcome, or a later one's, is hindsight a client does not have when the gap starts."""
    from prefixbench.workloads.audit.precedence import NO_TTL_MS, duration, ttl_ms

    # The send clock by position (a request's key is unique): no table of every request's tick.
    ticks, readies, positions = clock if clock is not None else clock_by_position(requests, summaries)
    formats = {s.file: s.format for s in summaries}
    judged = _judged_gaps(requests, ticks, readies, positions, ttl_ms, formats)
    ends = {key: [g.end for g in gaps] for key, gaps in judged.items()}
    bounds: dict[tuple[tuple[str, str, str], int], tuple[int, TraceRequest, int] | None] = {}
    last: dict[tuple[str, str], int] = {}
    added: list[TraceRequest] = []
    gaps = 0
    # Gaps not bridged, by model, with the longest bound that left one unbridged.
    kept: dict[tuple[str, str], int] = defaultdict(int)
    widest: dict[tuple[str, str], tuple[int, TraceRequest, int]] = {}
    timed = False  # a lane went on after a request whose provider publishes a cache lifetime
    for i in positions:
        r = requests[i]
        lane = (r.file, r.lane)
        j = last.get(lane)
        last[lane] = i
        if j is None:
            continue
        prev = requests[j]
        ttl = ttl_ms(prev)
        if ttl >= NO_TTL_MS or ttl <= KEEP_ALIVE_MARGIN_MS:
            continue
        timed = True
        if prev.usage is None or (prev.body is None and prev.prefix is None):
            continue
        # The TTL's pings count from where the provider's entry lifetime starts, as the
        # re-simulation counts it (:func:`_lifetime_from`); the bound, an idle the log showed
        # entries outliving, counts from the previous response's end (:func:`_idle_from`).
        lifetime, start, end = _lifetime_from(prev, ticks[j], readies[j]), _idle_from(prev, ticks[j], readies[j]), ticks[i]
        # OpenAI's in-memory retention lasts 5-10 min, best effort: a keep-alive planned at the
        # upper end may come after the entry went, so it pings before the lower end, and a gap
        # past the lower end is one to bridge.
        interval = _keep_alive_ttl(prev, ttl)
        step = interval - KEEP_ALIVE_MARGIN_MS
        if end - lifetime <= interval:
            continue  # the entry lives past the next send (as the re-simulation counts its TTL)
        key = (_survival_scope(prev.file, formats), prev.provider, prev.model)
        # The history a client has when the gap starts: the judged gaps whose outcome was known
        # by then (their next request's response had ended: the gap's own previous request among
        # them, whose response, read or not, ended as the idle began), never this gap or a later one.
        seen = bisect_right(ends.get(key, ()), start)
        if (key, seen) not in bounds:
            bounds[(key, seen)] = _bound(judged[key][:seen]) if seen else None
        outlived = bounds[(key, seen)]
        # A client that trusts entries to outlive the bound pings first a margin before it (in
        # idle), then every interval minus the margin; else a margin before the TTL, and so on.
        if outlived is not None and outlived[0] <= interval:
            outlived = None  # a bound under this lane's interval (another TTL's gaps): the interval decides
        first = (lifetime + interval if outlived is None else start + outlived[0]) - KEEP_ALIVE_MARGIN_MS
        pings = [first + step * k for k in range(KEEP_ALIVE_MAX + 1) if first + step * k < end]
        if outlived is not None and not pings:
            # The gap ended before the first ping a client trusting the bound would send.
            kept[(prev.provider, prev.model)] += 1
            if outlived[0] > widest.get((prev.provider, prev.model), (-1,))[0]:
                widest[(prev.provider, prev.model)] = outlived
            continue
        if not pings or len(pings) > KEEP_ALIVE_MAX:
            continue
        gaps += 1
        for k, tick in enumerate(pings, 1):
            # The previous request again: it reads what that one left cached and refreshes it. Its
            # seq sits between the two requests, so the lane's order holds.
            prefix = None if prev.prefix is None else replace(prev.prefix, parent=prev.prefix.node, node=f"{prev.prefix.node}#keep-alive-{k}", new_blocks=0)
            added.append(replace_request(prev, seq=prev.seq + k / (len(pings) + 1), sent_ms=tick, ready_ms=tick, done_ms=None,
                                         prefix=prefix, events=()))  # type: ignore[arg-type]
    if not gaps and not timed:
        raise _CannotApply("no request went on from one whose provider publishes a cache lifetime (an unknown "
                           "provider, or one that names none): there is no TTL for a keep-alive to beat")
    outlived_text = ""
    if kept:
        each = []
        for (provider, model), under in sorted(kept.items()):
            idle, r, count = widest[(provider, model)]
            # (the scope its bound came from: the folder whose transcripts were pooled, in the user's terms)
            scope = _survival_scope(r.file, formats) or "."
            each.append(f"{model}: {under:,} idle no longer than a bound of at most {duration(idle)}, the longest idle up to "
                        f"which every earlier gap of the model in {scope} (one history: every transcript under that folder, "
                        f"whichever account wrote it) was read in full ({count:,} such reads "
                        f"past the TTL and margin, the longest at {r.file.rsplit('/', 1)[-1]}:{r.line})")
        outlived_text = (f"{sum(kept.values()):,} idle gap(s) past the TTL not bridged, as the log had already shown the "
                         f"model's entries outliving gaps that long, so a client's first ping, {KEEP_ALIVE_MARGIN_MS // 1000} s before that length, would come after the gap's end ({'; '.join(each)})")
    if not gaps:
        if outlived_text:
            return _Plan(requests, lambda r: None, f"no idle gap bridged: {outlived_text}")
        return _Plan(requests, lambda r: None, "no idle gap past a TTL that ten keep-alives or fewer would bridge")
    detail = f"{len(added)} keep-alive request(s) bridge {gaps} idle gap(s) past the TTL"
    if outlived_text:
        detail += f"; {outlived_text}"
    return _Plan([*requests, *added], lambda r: None, detail, added=tuple(added))


def _keep_alive_cost(plan: _Plan, fixed: Mapping[Key, Pred], prices: Prices) -> Decimal:
    """What the added keep-alive requests cost: their predicted read, write and uncached input,
    and 1 output token each."""
    total = []
    for r in plan.added:
        p = fixed.get((r.file, r.lane, r.seq))  # type: ignore[arg-type]
        row = prices.row(r.model, r.sent_ms, r.speed, r.upstream)
        if p is None or row is None:
            continue
        total.append(_cost(SimpleNamespace(prompt_tokens=p.read + p.write + p.uncached, cached_tokens=p.read, written_tokens=p.write,
                                           written_long_tokens=p.write_1h, output_tokens=1), row))
    return usd_sum(total)


def _already_warm(call: TraceRequest, main: TraceRequest) -> bool:
    """The compaction call read what the main request left cached (within the read tolerance)."""
    if call.usage is None or main.usage is None or not call.usage.cache_reported:
        return False
    rules = rules_for(call.provider)
    if rules.is_additive:
        cached = min(call.usage.prompt, main.usage.cache_read + main.usage.cache_write)
    else:
        cached = rules.round_read(min(call.usage.prompt, rules.cacheable(main.usage)), call.model, call.read_step, call.read_offset)
    return call.usage.cache_read >= cached * (1 - READ_TOLERANCE)


def _plan_breakpoints(requests: list[TraceRequest], spec: str) -> _Plan:
    places = parse_breakpoints(spec)
    bodies = [r for r in requests if _has_breakpoints(r)]
    if not bodies:
        # (for want of bodies only where the log has requests whose provider takes markers)
        missing = any(r.body is None and rules_for(r.provider).max_breakpoints is not None for r in requests)
        raise (_NoBodies if missing else _CannotApply)(
            f"breakpoints can only be moved where the log has Anthropic request bodies; {record_bodies(requests)}")
    out = []
    for r in requests:
        if r.body is not None and _has_breakpoints(r) and (r.body.cache_breakpoints or r.body.auto_cache):
            r = replace(r, body=_place_breakpoints(r.body, places))
        out.append(r)
    return _Plan(out, lambda r: None, f"markers at {' + '.join(places)} on every request that had any")


def _place_breakpoints(body: Request, places: tuple[str, ...]) -> Request:
    ttl = body.cache_breakpoints[-1].ttl if body.cache_breakpoints else (body.auto_cache or "5m")
    if places == ("auto",):
        return replace(body, cache_breakpoints=(), auto_cache=ttl)
    marks: list[CacheBreakpoint] = []
    for place in places:
        if place == "tools" and body.tools:
            marks.append(CacheBreakpoint("tools", len(body.tools) - 1, None, ttl))
        elif place == "system" and (body.system or body.system_blocks):
            marks.append(CacheBreakpoint("system", max(0, len(body.system_blocks) - 1), None, ttl))
        elif place.startswith("last"):
            back = int(place.split("-", 1)[1]) if "-" in place else 0
            k = len(body.messages) - 1 - back
            if k >= 0 and body.messages[k].blocks:
                marks.append(CacheBreakpoint("messages", len(body.messages[k].blocks) - 1, k, ttl))
    return replace(body, cache_breakpoints=tuple(dict.fromkeys(marks)), auto_cache=None)


# --- evaluation ----------------------------------------------------------------------------


def _predicted_usage(p: Pred) -> Usage:
    return Usage(cache_read=p.read, cache_write_5m=p.write - p.write_1h, cache_write_1h=p.write_1h, uncached=p.uncached)


def _cost(usage: SimpleNamespace, row) -> Decimal:
    return cost_total(usage, row)


def _evaluate(
    fix: str,
    requests: list[TraceRequest],
    plan: _Plan,
    base: Mapping[Key, Pred],
    summaries,
    heads,
    prices: Prices,
    *,
    link: bool = True,
    clock: Clock | None = None,
    reported_usd: dict[tuple[int, ...], Decimal] | None = None,
    ref: _Reference | None = None,
) -> _Changes:
    """The requests the plan changes, held by column (:class:`_Changes`; :meth:`_Changes.by_lane`:
    each lane's). ``clock``: the send clock of ``requests``, reused when the plan sends them as they are.
    ``reported_usd``: the logged cost of each request priced so far by the fixes of one
    :func:`what_if` under ``prices``, by its price row (its identity) and its counts; filled here.
    ``ref``: ``requests`` and their prediction, from which the plan is re-simulated only where it
    changes something (:func:`_resimulate`); None: the whole plan is."""
    if ref is not None:
        fixed = _resimulate(ref, plan.requests, summaries, plan.ttl, link=link)
    else:
        fixed = simulate(plan.requests, summaries, heads, plan.ttl, link=link,
                         clock=clock if plan.requests is requests else None)
    # A plan that sends the log's own requests (the TTL fixes), or its requests each in its place
    # (stagger-subagents: some moved in time; keep-alive: its requests after the log's), needs no
    # table of them.
    sent = plan.requests
    placed = sent is requests or len(sent) == len(requests) + len(plan.added) and all(
        p is r or (p.file, p.lane, p.seq) == (r.file, r.lane, r.seq) for p, r in zip(_unmoved(sent), requests))
    by_key = None if placed else {(r.file, r.lane, r.seq): r for r in sent}
    keep_alive: dict[tuple[str, str], list[TraceRequest]] = defaultdict(list)
    for r in plan.added:
        keep_alive[(r.file, r.lane)].append(r)
    lane_index: dict[tuple[str, str], int] = defaultdict(int)
    changes = _Changes()
    plan_ttl, same_prompt = plan.ttl, plan.same_prompt
    # Keyed by the row's identity: the rows stay in ``prices`` (and so alive) while it lives.
    reported_usd = {} if reported_usd is None else reported_usd
    for at, original in enumerate(requests):
        key = (original.file, original.lane, original.seq)
        lane = (original.file, original.lane)
        index = lane_index[lane]
        lane_index[lane] = index + 1
        usage = original.usage
        if usage is None and original.body is not None and key in base:
            # A request-body log reports no usage: the audit prices the prediction, and so does this.
            usage = _predicted_usage(base[key])
        # A call whose log sums its cache reads and writes has no one cost to compare a fix with.
        f = fixed.get(key) if usage is not None and not usage.cache_unsplit else None
        if f is None:
            continue
        b = base[key]
        r = sent[at] if by_key is None else by_key[key]
        ttl = plan_ttl(r)
        cache_read, cache_write = usage.cache_read, usage.cache_write
        if same_prompt:
            # The fix moves tokens between read, write and uncached; the prompt stays as sent.
            prompt = usage.prompt
            read = min(prompt, max(0, cache_read + f.read - b.read))
            write = min(prompt - read, max(0, cache_write + f.write - b.write))
            uncached = prompt - read - write
        else:
            read = max(0, cache_read + f.read - b.read)
            write = max(0, cache_write + f.write - b.write)
            uncached = max(0, usage.uncached + f.uncached - b.uncached)
        if ttl in rules_for(r.provider).long_write_ttls:  # every write a long one (Anthropic's 1h, OpenAI's 12h)
            write_1h = write
        elif ttl == "5m":
            write_1h = 0
        else:
            write_1h = min(write, max(0, usage.cache_write_1h + f.write_1h - b.write_1h))
        if read == cache_read and write == cache_write and write_1h == usage.cache_write_1h and uncached == usage.uncached:
            continue
        priced_as = original if plan.logged_prices else r
        row = prices.row(priced_as.model, r.sent_ms, r.speed, r.upstream)
        if row is None:
            # No price: the tokens still moved (counted), the dollars are unknown (not $0).
            changes.add(lane, index, original.line, usage.cache_read, given_write(original.provider, usage), read, write, write_1h,
                        Decimal(0), priced=False)
            continue
        # What the request cost as logged: the same in every fix that changes it (a TTL fix
        # changes nearly every request, and ttl-auto evaluates up to four plans), so priced once.
        logged = (id(row), usage.prompt, cache_read, cache_write, usage.cache_write_1h, usage.output)
        reported = reported_usd.get(logged)
        if reported is None:
            reported = reported_usd[logged] = _cost(SimpleNamespace(
                prompt_tokens=usage.prompt, cached_tokens=cache_read, written_tokens=cache_write,
                written_long_tokens=usage.cache_write_1h, output_tokens=usage.output), row)
        counter = _cost(SimpleNamespace(prompt_tokens=read + write + uncached, cached_tokens=read, written_tokens=write,
                                        written_long_tokens=write_1h, output_tokens=usage.output), row)
        changes.add(lane, index, original.line, usage.cache_read, given_write(original.provider, usage), read, write, write_1h,
                    usd_sum((reported, -counter)))
    for (file, lane), added in keep_alive.items():
        # The keep-alives are charged to their lane as one change of no request (index -1, line 0).
        cost = _keep_alive_cost(replace(plan, added=tuple(added)), fixed, prices)
        priced = any(prices.row(r.model, r.sent_ms, r.speed, r.upstream) is not None for r in added)
        changes.add((file, lane), -1, 0, 0, 0, 0, 0, 0, -cost, priced=priced)
    return changes


def _lane_effects(changes: _Changes, notes: dict[tuple[str, str], str] | None = None) -> tuple[LaneEffect, ...]:
    effects = []
    per_lane = changes.by_lane()
    keys = list(per_lane) + [k for k in (notes or {}) if k not in per_lane]
    for key in keys:
        items = per_lane.get(key, ())
        effects.append(LaneEffect(key[0], key[1], changes.requests_changed(items), changes.tokens_to_read(items),
                                  changes.saved_usd(items), (notes or {}).get(key, ""),
                                  priced=not items or changes.any_priced(items)))
    return tuple(effects)


class GapBounds(msgspec.Struct, frozen=True):
    """The two lifetimes a ttl fix chooses between on a lane, from its provider's rules: what
    the lane asks for (``5m`` / ``1h`` of Anthropic's TTL per write, ``in_memory`` / ``24h`` of
    OpenAI's retention) and how long each keeps a prefix idle."""

    provider: str
    short: str
    long: str
    short_ms: int
    long_ms: int
    #: What keeps the middle bucket warm: ``a 1 h TTL``, ``24h retention``.
    keeps: str


def _span(ms: int) -> str:
    """``300000`` -> ``5 m``, ``86400000`` -> ``24 h``."""
    if ms and ms % 3_600_000 == 0:
        return f"{ms // 3_600_000} h"
    return f"{ms // 60_000} m" if ms % 60_000 == 0 else f"{ms / 60_000:g} m"


def _bounds(r: TraceRequest) -> GapBounds:
    """:class:`GapBounds` of the lane of ``r`` (a request of :func:`_ttl_choosers`)."""
    rules = rules_for(r.provider)
    asked = {ttl: _ttl_for(r, ttl) or ttl for ttl in ("5m", "1h")}
    ms = {ttl: rules.ttl_ms(rules.ttl_label(r.model, label) or label) or 0 for ttl, label in asked.items()}
    keeps = f"a {_span(ms['1h'])} TTL" if _picks_ttl(r) else f"{asked['1h']} retention"
    return GapBounds(r.provider, asked["5m"], asked["1h"], ms["5m"], ms["1h"], keeps)


def lane_bounds(requests: Sequence[TraceRequest]) -> dict[tuple[str, str], GapBounds]:
    """Per lane a ttl fix reaches (:func:`_ttl_choosers`): the lifetimes it chooses between."""
    found: dict[tuple[str, str], GapBounds] = {}
    for r in _ttl_choosers(requests):
        if (r.file, r.lane) not in found:
            found[(r.file, r.lane)] = _bounds(r)
    return found


def lane_gaps(requests: Sequence[TraceRequest], summaries, clock: Clock | None = None) -> dict[tuple[str, str], list[int]]:
    """Per lane (every lane, in send order): the idle gaps between its consecutive requests, in ms."""
    ticks, _, positions = clock_by_position(requests, summaries) if clock is None else clock
    last: dict[tuple[str, str], int] = {}
    gaps: dict[tuple[str, str], list[int]] = {}
    for i in positions:  # (by position: no table of every request's tick)
        r = requests[i]
        lane = (r.file, r.lane)
        tick = ticks[i]
        found = gaps.setdefault(lane, [])
        if lane in last:
            found.append(tick - last[lane])
        last[lane] = tick
    return gaps


def _buckets(gaps: Sequence[int], bounds: GapBounds) -> tuple[list[int], list[int], list[int]]:
    """``gaps`` <= the short lifetime, in (short, long], > long."""
    out: tuple[list[int], list[int], list[int]] = ([], [], [])
    for gap in gaps:
        out[0 if gap <= bounds.short_ms else 1 if gap <= bounds.long_ms else 2].append(gap)
    return out


def _minutes(ms: int) -> str:
    return f"{ms // 60_000}m{ms % 60_000 // 1000:02d}s"


def _gaps_text(g: tuple[int, int, int], bounds: GapBounds, middle: Sequence[int] = ()) -> str:
    short, long = _span(bounds.short_ms), _span(bounds.long_ms)
    # The middle gaps are listed right after their own count, so the list does not read as the gaps past
    # the long lifetime (it once followed "> 1 h").
    listed = ""
    if middle:
        shown = sorted(middle)
        listed = " [" + ", ".join(_minutes(m) for m in shown[:10]) + (", ..." if len(shown) > 10 else "") + "]"
    return (f"gaps: {g[0]:,} <= {short}, {g[1]:,} in {short}-{long}{listed} ({bounds.keeps} keeps these warm), "
            f"{g[2]:,} > {long}")


def _lane_gaps_text(gaps: Sequence[int], bounds: GapBounds, middle: bool = True) -> str:
    """:func:`_gaps_text` of one lane (``middle``: with its gaps in the middle bucket listed)."""
    found = _buckets(gaps, bounds)
    return _gaps_text((len(found[0]), len(found[1]), len(found[2])), bounds, found[1] if middle else ())


def _total_gaps_text(gaps: Mapping[tuple[str, str], Sequence[int]], bounds: Mapping[tuple[str, str], GapBounds]) -> str:
    """:func:`_gaps_text` summed over the lanes of ``bounds``; per provider (named) when the lanes
    are of more than one, whose buckets have other bounds."""
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for lane, found in bounds.items():
        groups[found.provider].append(lane)
    parts = []
    for provider in sorted(groups):
        lanes = groups[provider]
        lists = [_buckets(gaps.get(lane, ()), bounds[lane]) for lane in lanes]
        total = tuple(sum(len(found[i]) for found in lists) for i in range(3))
        text = _gaps_text(total, bounds[lanes[0]], [gap for found in lists for gap in found[1]])  # type: ignore[arg-type]
        parts.append(text if len(groups) == 1 else f"{provider} ({len(lanes):,} lane(s)): {text}")
    return "; ".join(parts)


class _Inputs(msgspec.Struct, frozen=True):
    """What every fix of one :func:`what_if` call reads (never changes once made)."""

    requests: list[TraceRequest]
    summaries: list[FileSummary]
    prices: Prices
    heads: Heads
    base: Mapping[Key, Pred]
    #: :func:`lane_gaps`: every lane's idle gaps (the ttl fixes bucket them by its provider's lifetimes;
    #: empty when no TTL fix is asked).
    gaps: dict[tuple[str, str], list[int]]
    system_changed: Collection[tuple[str, int]] | None
    #: :func:`clock_by_position` of ``requests``: every plan that sends them as they are reuses it.
    clock: Clock
    #: :func:`_evaluate`'s logged cost of each request priced so far, shared by the fixes.
    reported_usd: dict[tuple[int, ...], Decimal]
    #: ``requests`` and ``base`` grouped in units, for re-simulating a fix only where it reaches.
    ref: _Reference
    #: :func:`_evaluate` of the plan of each TTL (``1h``, ``5m``) made so far, when ttl-auto is
    #: asked beside ttl-1h or ttl-5m (``--what-if all``): it evaluates both plans, as they do, so
    #: once each. None otherwise (nothing is evaluated twice; not kept).
    ttl_evaluations: dict | None = None


def what_if(
    requests: list[TraceRequest],
    summaries: list[FileSummary],
    fixes: Sequence[str],
    *,
    price_as_of: str | None = None,
    prices: Prices | None = None,
    system_changed: Collection[tuple[str, int]] | None = None,
    jobs: int = 1,
    baseline: Baseline | None = None,
) -> list[WhatIf]:
    """Each fix, applied alone, re-simulated on the log where it changes it (see the module doc).

    ``system_changed``: the (file, line) of the requests the audit put down to a changed system
    prompt (``static-system`` on a log without bodies re-simulates those only; None: audit the
    log to find them). ``jobs`` > 1: the fixes are re-simulated in that many forked worker
    processes (:func:`_in_workers`), with the same results in the same order. ``baseline``: what the
    audit of these requests and summaries knows (:class:`~prefixbench.workloads.audit.core.Baseline`:
    the prediction of the log as sent, its heads, clock and links); None: all made here."""
    prices = prices or Prices(price_as_of)
    # The prediction as logged by position (no key tuple a request: the reference finds a key's
    # position from its file and place, :class:`_Places`).
    if baseline is not None and baseline.requests == len(requests):
        heads, clock, sources, preds = baseline.heads, baseline.clock, baseline.sources, baseline.preds
    else:
        heads = head_sizes(requests)
        clock = clock_by_position(requests, summaries)
        sources = compaction_sources([requests[i] for i in clock[2]])
        preds = Preds(len(requests))
        _predict(requests, heads, lambda r: None, *clock, sources, at=preds)
    # Only the TTL fixes read the lanes' idle gaps.
    names = {fix.split("=", 1)[0] for fix in fixes}
    gaps = lane_gaps(requests, summaries, clock) if names & {"ttl-1h", "ttl-5m", "ttl-auto"} else {}
    ref = _Reference(requests, heads, clock, sources, preds)
    base = ref.preds
    # The logged costs priced for these fixes live as long as this call (a forked worker fills its own copy).
    shared_ttl = {} if "ttl-auto" in names and names & {"ttl-1h", "ttl-5m"} else None
    inputs = _Inputs(requests, summaries, prices, heads, base, gaps, system_changed, clock, {}, ref, shared_ttl)
    if jobs > 1 and len(fixes) > 1 and "fork" in multiprocessing.get_all_start_methods():
        return _in_workers(inputs, list(fixes), jobs)
    return [_one_fix(inputs, fix) for fix in fixes]


#: The inputs of the :func:`what_if` call whose workers are running: a forked worker finds them
#: here, already in its memory, so nothing of the trace is pickled to it.
_FORKED: _Inputs | None = None
#: Re-simulations a fix costs, for handing the longest out first (``ttl-auto`` runs two to four).
_WEIGHT = {"ttl-auto": 4, "keep-prefix-compaction": 2, "stagger-subagents": 2}


def _in_workers(inputs: _Inputs, fixes: list[str], jobs: int) -> list[WhatIf]:
    """Each fix re-simulated in a forked worker (the longest first); the results in ``fixes`` order."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    global _FORKED
    order = sorted(range(len(fixes)), key=lambda i: (-_WEIGHT.get(fixes[i].split("=", 1)[0], 1), i))
    _FORKED = inputs
    try:
        with ProcessPoolExecutor(max_workers=min(jobs, len(fixes)), mp_context=mp.get_context("fork")) as pool:
            futures = {i: pool.submit(_forked_fix, fixes[i]) for i in order}
            return [futures[i].result() for i in range(len(fixes))]
    finally:
        _FORKED = None


def _forked_fix(fix: str) -> WhatIf:
    assert _FORKED is not None, "a what-if worker runs only in a process forked by _in_workers"
    return _one_fix(_FORKED, fix)


def _one_fix(inputs: _Inputs, fix: str) -> WhatIf:
    """One fix applied alone and re-simulated, its detail saying where its saving rests on calls
    through a relay (:func:`_relay_hedge`)."""
    return _relay_hedge(inputs.requests, _one_fix_alone(inputs, fix))


def _relay_hedge(requests: Sequence[TraceRequest], w: WhatIf) -> WhatIf:
    """``w`` with its detail saying (:data:`RELAYED`) how much of what it saves is on calls that
    went through a relay: the re-simulation read them under the maker's caching rules, which the
    relay's cache need not follow, so that saving is an inference about the relay. Unchanged
    where it saves nothing or none of its saving is on a relayed call."""
    if not w.applies or w.saved_usd is None or w.saved_usd <= 0:
        return w
    relayed_calls = {(r.file, r.line): r for r in requests if r.relay}
    if not relayed_calls:
        return w
    relays = {key: r.relay for key, r in relayed_calls.items()}
    saving = [c for c in w.changes if c.priced and c.saved_usd > 0]
    on = [c for c in saving if c.index >= 0 and (c.file, c.line) in relays]
    if not on:
        return w
    names = " and ".join(f"the relay {name!r}" for name in sorted({relays[(c.file, c.line)] for c in on}))
    gross, relayed = usd_sum(c.saved_usd for c in saving), usd_sum(c.saved_usd for c in on)
    share = "all it saves" if relayed == gross else f"{format_usd(relayed)} of the {format_usd(gross)} it saves gross"
    makers = {rules_for(p).maker or p for p in {relayed_calls[(c.file, c.line)].provider for c in on}}
    one = len(makers) == 1
    maker = next(iter(makers)) if one else "the makers"
    said = (f"{share} is on {len(on):,} call(s) through {names}, {RELAYED} ({maker}'{'s' if one else ''} were applied): "
            f"that saving holds only as far as the relay caches as {maker} {'does' if one else 'do'}")
    # Each lane it saves on through a relay says so in its note (report.html's per-lane table
    # hedges that lane's saving as the fix's).
    lanes_on = {(c.file, c.lane): relays[(c.file, c.line)] for c in on}
    lanes = tuple(replace(e, note="; ".join(filter(None, (e.note, f"through the relay {lanes_on[(e.file, e.lane)]!r}, {RELAYED}"))))
                  if (e.file, e.lane) in lanes_on and e.saved_usd > 0 else e for e in w.lanes)
    return replace(w, detail=f"{w.detail}; {said}" if w.detail else said, lanes=lanes)


def _one_fix_alone(inputs: _Inputs, fix: str) -> WhatIf:
    """One fix applied alone and re-simulated."""
    requests, summaries, prices, heads, base, gaps = (
        inputs.requests, inputs.summaries, inputs.prices, inputs.heads, inputs.base, inputs.gaps)
    name = fix.split("=", 1)[0]
    assumption = FIXES[name]
    try:
        if name in ("ttl-1h", "ttl-5m"):
            plan = _plan_ttl(requests, name.removeprefix("ttl-"))
        elif name == "ttl-auto":
            return _ttl_auto(requests, summaries, heads, base, prices, gaps, inputs.clock, inputs.reported_usd, inputs.ref,
                             inputs.ttl_evaluations)
        elif name == "stagger-subagents":
            plan = _plan_stagger(requests, summaries, heads, base, inputs.clock)
        elif name == "static-system":
            # Logs with bodies show the system prompt changing; logs without (transcripts) show
            # reads that fell inside it. An audit holding both re-simulates each its own way, at once.
            bodies = any(r.body is not None for r in requests)
            chains = None
            if any(r.body is None and r.prefix is not None for r in requests):
                system_changed = inputs.system_changed
                if system_changed is None:
                    from prefixbench.workloads.audit.core import audit_requests

                    rows = audit_requests(requests, summaries, prices).rows
                    system_changed = {(row.file, row.line) for row in rows if row.cause == "system-changed"}
                try:
                    chains = _static_system_chains(requests, summaries, heads, base, system_changed, inputs.ref)
                except _CannotApply:
                    if not bodies:
                        raise
            if chains is not None:
                plan, logged = chains
                if bodies:
                    plan = _plan_static_system(requests, also=plan.detail)
                changes = _evaluate(fix, requests, plan, logged, summaries, heads, prices, clock=inputs.clock,
                                    reported_usd=inputs.reported_usd, ref=inputs.ref)
                return _summarize(fix, assumption, plan.detail + _day_breaks(requests, summaries, changes), changes)
            plan = _plan_static_system(requests)
        elif name == "keep-prefix-compaction":
            plan = _plan_keep_prefix(requests, summaries, inputs.clock)
        elif name == "keep-alive":
            assumption = _keep_alive_assumption(requests)
            plan = _plan_keep_alive(requests, summaries, inputs.clock)
            unpriced = sum(prices.row(r.model, r.sent_ms, r.speed, r.upstream) is None for r in plan.added)
            if unpriced:  # charged nothing in the figure: said, not hidden in it
                plan = replace(plan, detail=f"{plan.detail}; {unpriced:,} of them to a model with no price row, "
                               f"{UNCHARGED}")
        elif name == "pin-model":
            plan = _plan_pin_model(requests, prices)
        else:
            spec = fix.split("=", 1)[1]
            plan = _plan_breakpoints(requests, spec)
            assumption = f"Anthropic cache_control markers at {spec.replace('+', ' + ')} on every request that had markers"
    except _CannotApply as reason:
        return WhatIf(fix, False, 0, 0, None, assumption, str(reason), needs_bodies=isinstance(reason, _NoBodies))
    if name in ("ttl-1h", "ttl-5m"):
        changes = _evaluate_ttl(name.removeprefix("ttl-"), requests, plan, base, summaries, heads, prices, inputs.clock,
                                inputs.reported_usd, inputs.ref, inputs.ttl_evaluations)
    else:
        unlinked = _resimulate(inputs.ref, requests, summaries, link=False) if name == "keep-prefix-compaction" else base
        changes = _evaluate(fix, requests, plan, unlinked, summaries, heads, prices, link=name != "keep-prefix-compaction",
                            clock=inputs.clock, reported_usd=inputs.reported_usd, ref=inputs.ref)
    notes = None
    detail = plan.detail
    if name == "keep-prefix-compaction":
        detail = _replay_against_warm_cost(detail, requests, plan, changes)
    if name in ("ttl-1h", "ttl-5m"):
        # Counted over the lanes the fix reaches (a provider that lets the client pick the TTL),
        # each in its provider's two lifetimes: another provider's gaps say nothing about what a
        # TTL would keep warm.
        bounds = lane_bounds(requests)
        notes = {lane: _lane_gaps_text(found, bounds[lane]) for lane, found in gaps.items() if lane in bounds}
        detail = _total_gaps_text(gaps, bounds)
        others = len(set(gaps) - set(bounds))
        if others:
            detail = (f"over the {len(bounds):,} lane(s) whose provider lets the client pick the TTL "
                      f"({others:,} lane(s) of other providers left out: the fix does not reach them): {detail}")
        other = "1h" if name == "ttl-5m" else "5m"
        logged = [r.usage for r in _ttl_choosers(requests) if r.usage is not None and r.usage.cache_write]
        if logged and all((u.cache_write_1h == 0) if other == "1h" else (u.cache_write_1h == u.cache_write) for u in logged):
            detail = f"every write in the log already uses the {name.removeprefix('ttl-').replace('m', ' m').replace('h', ' h')} TTL; " + detail
    return _summarize(fix, assumption, detail, changes, notes)


def _replay_against_warm_cost(detail: str, requests: Sequence[TraceRequest], plan: _Plan, changes: _Changes) -> str:
    """``keep-prefix-compaction``'s detail, with what each replayed call reads and writes against
    the prompt the call was logged with: the compactions table's *warm cost* prices that logged
    prompt with what the main request left cached read, while the replay sends the main request's
    prompt plus the instruction (another size), so their two savings differ and each says why."""
    replayed = {(r.file, r.line): old for r, old in zip(plan.requests, requests) if r is not old and old.usage is not None}
    said = []
    for c in changes:
        old = replayed.get((c.file, c.line))
        if old is None or c.index < 0:
            continue
        said.append(f"{c.lane} at line {c.line}: the replay sends the main request's prompt and the instruction, "
                    f"{c.counterfactual_read:,} tokens read and {c.counterfactual_write:,} written, where the call as logged sent "
                    f"{old.usage.prompt:,} of its own (read {c.reported_read:,}); the compactions table's warm cost prices those "
                    f"{old.usage.prompt:,} read as far as the main request left them cached: it counts the logged prompt, this "
                    f"figure the replay's, so the two savings differ")
    return "; ".join([detail, *said]) if said else detail


def _summarize(fix, assumption, detail, changes: _Changes, notes=None) -> WhatIf:
    every = range(len(changes))
    return WhatIf(
        fix,
        True,
        changes.requests_changed(every),
        changes.tokens_to_read(every),
        changes.saved_usd(every),
        assumption,
        detail,
        _lane_effects(changes, notes),
        changes,  # type: ignore[arg-type]  (a sequence of them, held by column)
    )


def _evaluate_ttl(ttl: str, requests, plan: _Plan, base, summaries, heads, prices, clock: Clock | None,
                  reported_usd: dict[tuple[int, ...], Decimal] | None, ref: _Reference | None,
                  memo: dict | None) -> _Changes:
    """:func:`_evaluate` of the plan that writes every request with ``ttl`` (:func:`_plan_ttl`),
    the log's own requests against ``base``; kept in ``memo`` (the same for ttl-1h, ttl-5m and
    ttl-auto of one :func:`what_if`: read only once made)."""
    found = None if memo is None else memo.get(ttl)
    if found is None:
        found = _evaluate(f"ttl-{ttl}", requests, plan, base, summaries, heads, prices, clock=clock, reported_usd=reported_usd,
                          ref=ref)
        if memo is not None:
            memo[ttl] = found
    return found


#: How ttl-auto words its choice on the lanes of each way of picking a lifetime (by what the long
#: one asks for, :attr:`GapBounds.long`): a TTL per write, or a retention policy per request.
_TTL_AUTO_WORDS = {
    "1h": "1 h on {} of {} lane(s) picking Anthropic's cache TTL per write (5 m / 1 h), 5 m on the rest",
    "24h": "24h on {} of {} lane(s) picking OpenAI's prompt cache retention per request (in_memory / 24h), in_memory on the rest",
    "12h": "12h on {} of {} lane(s) picking gpt-6.2-sol's prompt cache retention per request (30m / 12h), 30m on the rest",
}


def _ttl_auto_choice(choice: Mapping[tuple[str, str], str], bounds: Mapping[tuple[str, str], GapBounds]) -> str:
    """What ttl-auto chose, in the words of each way of picking the log's lanes have, and only those."""
    parts = []
    for long, words in _TTL_AUTO_WORDS.items():
        lanes = [lane for lane in choice if bounds[lane].long == long]
        if lanes:
            parts.append(words.format(sum(1 for lane in lanes if choice[lane] == "1h"), len(lanes)))
    return "; ".join(parts)


def _settable_kind(r: TraceRequest) -> str:
    """The lanes one TTL setting reaches: subagents (Claude Code's subagentPromptCacheTtl), or the
    main session with its side and compaction calls (promptCacheTtl)."""
    return "subagent" if r.lane_kind == "subagent" else "main"


def _ttl_auto_kind_choice(kind_choice: Mapping[tuple[str, str, str, str], str],
                          by_kind: Mapping[tuple[str, str, str, str], Sequence],
                          bounds: Mapping[tuple[str, str], GapBounds]) -> str:
    """ttl-auto's settable choice: the TTL of each lane kind of each agent and home, in the words
    of its way of picking; the agent and home are named where the run has more than one."""
    several = len({(fmt, source) for _, _, fmt, source in kind_choice}) > 1
    parts = []
    for (kind, long, fmt, source), ttl in sorted(kind_choice.items()):
        group = by_kind[(kind, long, fmt, source)]
        short = bounds[group[0]].short
        name = "main-session" if kind == "main" else "subagent"
        where = f" of {fmt or 'the log'} in {source or '.'}" if several else ""
        parts.append(f"{long if ttl == '1h' else short} on the {len(group):,} {name} lane(s){where}")
    return "one TTL per lane kind, as the agents' settings allow, the cheaper over its lanes: " + ", ".join(parts)


def _ttl_auto(requests, summaries, heads, base, prices, gaps, clock: Clock | None = None,
              reported_usd: dict[tuple[int, ...], Decimal] | None = None, ref: _Reference | None = None,
              memo: dict | None = None) -> WhatIf:
    assumption = FIXES["ttl-auto"]
    try:
        plans = {ttl: _plan_ttl(requests, ttl) for ttl in ("5m", "1h")}
    except _CannotApply as reason:
        return WhatIf("ttl-auto", False, 0, 0, None, assumption, str(reason))
    saved: dict[str, dict[tuple[str, str], Decimal]] = {}
    unpriced: set[tuple[str, str]] = set()  # lanes a plan changes with no price row for any change
    evaluated: dict[str, _Changes] = {}  # each TTL's plan evaluated, for a final plan that is one of them
    for ttl, plan in plans.items():
        found = evaluated[ttl] = _evaluate_ttl(ttl, requests, plan, base, summaries, heads, prices, clock, reported_usd,
                                               ref, memo)
        per_lane = found.by_lane()
        saved[ttl] = {lane: found.saved_usd(items) for lane, items in per_lane.items()}
        unpriced |= {lane for lane, items in per_lane.items() if items and not found.any_priced(items)}
    bounds = lane_bounds(requests)
    lanes = set(bounds)
    # Hindsight: the cheaper TTL of each lane alone, which no setting picks (a setting applies to
    # every session of its kind). The figure is the settable choice: one TTL per lane kind (the
    # main lanes, the subagents) and way of picking a lifetime, the cheaper summed over its lanes.
    hindsight = {lane: ("1h" if saved["1h"].get(lane, Decimal(0)) > saved["5m"].get(lane, Decimal(0)) else "5m")
                 for lane in lanes}
    kinds = {(r.file, r.lane): _settable_kind(r) for r in requests if (r.file, r.lane) in lanes}
    # A setting is one agent's, in the unit it covers (a home, an extension's storage): lanes of
    # two agents (log formats) or two such units (:func:`_setting_scope`) get their own picks,
    # never one pooled across them, and a unit's projects or tasks share one.
    formats = {s.file: s.format for s in summaries}
    by_kind: dict[tuple[str, str, str, str], list[tuple[str, str]]] = defaultdict(list)
    for lane in sorted(lanes):
        fmt = formats.get(lane[0], "")
        by_kind[(kinds.get(lane, "main"), bounds[lane].long, fmt, _setting_scope(lane[0], fmt))].append(lane)
    kind_choice = {key: ("1h" if usd_sum(saved["1h"].get(lane, Decimal(0)) for lane in group)
                         > usd_sum(saved["5m"].get(lane, Decimal(0)) for lane in group) else "5m")
                   for key, group in by_kind.items()}
    choice = {lane: kind_choice[key] for key, group in by_kind.items() for lane in group}

    def evaluate(picks: Mapping[tuple[str, str], str]) -> _Changes:
        def ttl_of(r: TraceRequest) -> str | None:
            return _ttl_for(r, picks[(r.file, r.lane)]) if (r.file, r.lane) in picks else None

        # A plan that asks every request for what one TTL's plan asks (every lane picked the same,
        # and no request outside them asks for anything) is that plan, evaluated above: reused,
        # not re-simulated again (the same changes; one re-simulation fewer).
        picked = set(picks.values())
        if len(picked) == 1:
            (ttl,) = picked
            if all(ttl_of(r) == _ttl_for(r, ttl) for r in requests):
                return evaluated[ttl]
        return _evaluate("ttl-auto", requests, _Plan(requests, ttl_of), base, summaries, heads, prices, clock=clock,
                         reported_usd=reported_usd, ref=ref)

    changes = evaluate(choice)
    # What the lane asks for (5m / 1h, in_memory / 24h), and its gaps in those two lifetimes.
    notes = {
        lane: f"{bounds[lane].long if choice[lane] == '1h' else bounds[lane].short} "
        f"({_lane_gaps_text(gaps.get(lane, ()), bounds[lane], middle=False)})"
        for lane in sorted(lanes)
    }
    detail = f"{_ttl_auto_choice(choice, bounds)} ({_ttl_auto_kind_choice(kind_choice, by_kind, bounds)})"
    if choice and all(pick == "5m" for pick in choice.values()):
        # The change names "the lane kind the detail gives 1 h": say that none is, so the plan
        # re-simulated is every lane on the short lifetime (ttl-5m's), not a long one somewhere.
        detail += "; no lane kind is given the long lifetime, so the plan re-simulated keeps every lane on the short one"
    if hindsight != choice:
        found = evaluate(hindsight)
        upper = found.saved_usd(range(len(found)))
        said = f"; picked per lane in hindsight ({_ttl_auto_choice(hindsight, bounds)}) it would save {format_usd(upper)}"
        if upper >= changes.saved_usd(range(len(changes))):
            detail += f"{said}: an upper bound, not a setting (a setting applies to every session of its kind)"
        else:
            # Each lane's pick is the cheaper of its figures with every lane on one TTL; lanes
            # share cached entries (a head the lanes of a model read), so the picks re-simulated
            # together can save less than the setting (a Codex home: $1.8865 against $1.8873),
            # and the figure is no bound: said as what it is.
            detail += (f"{said}, less than the setting: each lane's pick was made with every lane on one TTL, and "
                       "lanes share cached entries, so picks made lane by lane do not add up (no upper bound)")
    if unpriced:
        detail += f"; {len(unpriced)} lane(s) with no price row among them: 5 m, no price to tell which TTL is cheaper"
    return _summarize("ttl-auto", assumption, detail, changes, notes)
