"""The loss split: every lost dollar is recoverable, unavoidable or unknown.

* ``recoverable``: a fix of :mod:`.whatif` exists that re-sends the request so that it reads
  what it lost (a longer TTL, staggered subagent starts, a byte-stable system prompt, moved
  breakpoints, a compaction call that replays the cached prefix);
* ``unavoidable``: the first write of a prefix (a lane's cold start, the context a compaction
  rebuilt), a prompt below the provider's minimum, the provider's own best-effort miss, or an
  idle gap longer than any TTL the provider offers that keep-alives would not have bridged (one
  they bridge is recoverable, by ``keep-alive``);
* ``unknown``: nothing says which (an unexplained miss, an earlier message rewritten, a resumed
  session, an effort change outside a compaction call, a model switch: the logs record the
  model each request went to, not who picked it, a router or fallback of the agent's own, which
  pinning the model recovers, or the user's ``/model``, a choice; a switch the log shows the user
  made is ``model-chosen``, unavoidable; a lane that starts on another model than the request it
  goes on from, a subagent run on a smaller model, switched nothing: unavoidable).

The class of a cause is one line of :data:`CAUSE_CLASS`; a cause missing from it is ``unknown``
(a new cause is added to the table in one line). Two causes depend on the request too
(:func:`loss_class`): ``ttl-expired`` is unavoidable past the provider's longest TTL and only
recoverable where the client picks the TTL; a compaction call that missed for its envelope or
its messages is recoverable by ``keep-prefix-compaction``.

:func:`split_losses` adds the requests' dollars up per class, exactly: each class's dollars are
the exact sum of its requests' (and of the parts of shared misses it holds), and the total their
exact sum, so summing a report's rows by ``loss_class`` gives the same figures. Reports round each
on its own, as any other dollar figure (no part is moved to make rounded parts add up: before,
the total was rounded to the cent and its cents split by largest remainders, so a class could read
a cent its rows did not lose, and the JSON kept only those cents).

:class:`Recommendation` is the record of one thing to change (made by :mod:`.advice`, held by
the audit result).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Protocol

import msgspec
from prefixbench.simulator.pricing import usd_sum
from prefixbench.simulator.providers import rules_for
from prefixbench.workloads.audit.shares import loss_parts

#: The three classes, in the order reports list them.
LOSS_CLASSES: tuple[str, ...] = ("recoverable", "unavoidable", "unknown")
#: The keep-alive fix's reach (``--what-if keep-alive``): a keep-alive this long before the entry
#: would expire, at most this many a gap (ten reads of the prefix cost about one rewrite).
KEEP_ALIVE_MARGIN_MS = 30_000
KEEP_ALIVE_MAX = 10

#: What each class means (reports print it). An idle gap past the provider's longest TTL is
#: unavoidable only where keep-alives would not have bridged it (:func:`loss_class`,
#: :func:`keep_alive_may_bridge`); one they bridge is recoverable, so the legend says both.
CLASS_MEANINGS: dict[str, str] = {
    "recoverable": "a fix re-simulated by --what-if would have read these tokens (keep-alive bridging an idle gap "
    "counts here, even a gap past the longest TTL the provider offers)",
    "unavoidable": "first write of a prefix, below the minimum, a model the user picked or a lane began on, the provider's own miss, "
    f"or idle past the longest TTL the provider offers where keep-alive requests (at most {KEEP_ALIVE_MAX} a gap) "
    "would not have bridged it",
    "unknown": "the log does not tell whether a change of the agent would have saved it",
}

#: Each cause's class. A cause not listed is ``unknown``; ``ttl-expired`` and the compaction
#: call's causes are refined per request by :func:`loss_class`.
CAUSE_CLASS: dict[str, str] = {
    "cold-start": "unavoidable",
    "below-minimum": "unavoidable",
    "provider-best-effort": "unavoidable",
    # The request after a compaction sends a new context: its first write.
    "compaction": "unavoidable",
    "ttl-expired": "recoverable",
    "concurrent-write": "recoverable",
    "system-changed": "recoverable",
    "tools-changed": "recoverable",
    "breakpoint-placement": "recoverable",
    # A compaction call that did not replay the cached prefix (the cause is added with the
    # compaction judge; listed here so that it is classified the day it lands).
    "compaction-miss": "recoverable",
    "messages-changed": "unknown",
    # The log names the model of each request, not who switched it: the agent on its own (Gemini
    # CLI's default auto routing between Pro and Flash, a fallback model), which pinning the model
    # recovers, or the user (/model, a choice). Gemini CLI records neither its router's pick nor a
    # /model dialog's; Claude Code's side calls to a small model are lanes of their own, not a switch.
    "model-changed": "unknown",
    # A switch the log shows the user made (an info line Gemini CLI records): a choice.
    "model-chosen": "unavoidable",
    "effort-changed": "unknown",
    "resume": "unknown",
    "previous-message-not-found": "unknown",
    "unexplained": "unknown",
}

#: The --what-if fixes that recover a recoverable cause (what advice re-simulates).
CAUSE_FIX: dict[str, tuple[str, ...]] = {
    "ttl-expired": ("ttl-auto", "keep-alive"),
    "concurrent-write": ("stagger-subagents",),
    "system-changed": ("static-system",),
    "tools-changed": ("static-system",),
    "breakpoint-placement": ("breakpoints=auto",),
    "compaction-miss": ("keep-prefix-compaction",),
}
#: The fixes that recover an ``unknown`` cause where the agent, not the user, made the change:
#: re-simulated and listed in what to change (their change says on what condition), while the
#: loss split keeps the misses ``unknown``.
UNKNOWN_FIX: dict[str, tuple[str, ...]] = {
    "model-changed": ("pin-model",),
}
#: Causes that a compaction call (lane kind ``compaction``) recovers by replaying the main
#: lane's cached prefix under its envelope (``keep-prefix-compaction``).
COMPACTION_CALL_CAUSES = frozenset({"effort-changed", "messages-changed", "model-changed", "compaction", "cold-start", "unexplained"})


class _Row(Protocol):
    cause: str | None
    provider: str
    model: str
    lane_kind: str
    gap_ms: int | None


def longest_ttl_ms(provider: str, model: str = "") -> int | None:
    """The longest cache lifetime the provider offers ``model`` (None: it publishes none)."""
    return rules_for(provider).longest_ttl_ms(model)


def _kept_alive(row: _Row, longest: int) -> bool:
    """Whether keep-alives alone would have bridged ``row``'s gap past the longest TTL: only on a
    model with one lifetime (the client picks none, so the lane's TTL is that one), within ten
    keep-alives. (Where the client picks the TTL, the row does not say which its lane asked for.)"""
    rules = rules_for(row.provider)
    if rules.picks_ttl(row.model) or rules.retention_choice(row.model) is not None or longest <= KEEP_ALIVE_MARGIN_MS:
        return False
    if rules.ttl_label(row.model) == "in_memory":  # OpenAI's 5-10 min, best effort: a keep-alive may come too late
        return False
    return row.gap_ms is not None and row.gap_ms <= (KEEP_ALIVE_MAX + 1) * (longest - KEEP_ALIVE_MARGIN_MS)


def loss_class(row: _Row) -> str | None:
    """``recoverable``, ``unavoidable`` or ``unknown`` for a request with a cause; None for a hit."""
    cause = row.cause
    if cause is None:
        return None
    if row.lane_kind == "compaction" and cause in COMPACTION_CALL_CAUSES:
        return "recoverable"
    if cause == "model-changed" and getattr(row, "index", None) == 0:
        # A lane that starts on another model than the request it goes on from (a subagent the
        # agent runs on a smaller model) switched nothing: its model is how the lane is made.
        return "unavoidable"
    if cause == "ttl-expired":
        longest = longest_ttl_ms(row.provider, row.model)
        if longest is not None and row.gap_ms is not None and row.gap_ms > longest:
            return "recoverable" if _kept_alive(row, longest) else "unavoidable"
        rules = rules_for(row.provider)
        # The client could have asked a longer lifetime: a TTL per write (Anthropic), or a
        # retention per request on a model offering two (OpenAI's 24h, GPT-6.2 Sol's 12h).
        chooses = rules.picks_ttl(row.model) or rules.retention_choice(row.model) is not None
        return "recoverable" if chooses else "unknown"
    return CAUSE_CLASS.get(cause, "unknown")


def keep_alive_may_bridge(row: _Row) -> bool:
    """Whether keep-alives could have bridged an ``unavoidable`` ttl-expired gap past the longest
    TTL on a model whose client picks the TTL: only if the lane's write asked for that longest TTL,
    which the row does not say but the log does (the previous request's 1 h write), so the gap is
    re-simulated (``keep-alive``) and the split follows what it finds (:func:`.advice.follow_resimulation`).

    So too a miss whose provider could not find the previous message (``previous-message-not-found``,
    its diagnostic) where the audit's own cause without the diagnostic is ``ttl-expired`` (its
    ``inferred_cause``): the diagnostic says the entry was gone, the gap says why (the audit's cause
    names more than the server's, :data:`.causes.NARROWER`). Past a 1 h TTL such a miss is the same
    gap as a ttl-expired one, so it is re-simulated the same way rather than counted unknown
    while keep-alive's saving rests on it (9 such misses after 66-540 min gaps in a Claude Code home)."""
    expired = row.cause == "ttl-expired" or (
        row.cause == "previous-message-not-found" and getattr(row, "inferred_cause", None) == "ttl-expired")
    if not expired or row.gap_ms is None:
        return False
    longest = longest_ttl_ms(row.provider, row.model)
    rules = rules_for(row.provider)
    return (longest is not None and row.gap_ms > longest > KEEP_ALIVE_MARGIN_MS and rules.picks_ttl(row.model)
            and row.gap_ms <= (KEEP_ALIVE_MAX + 1) * (longest - KEEP_ALIVE_MARGIN_MS))


class _AsCause(msgspec.Struct, frozen=True):
    """A row's facts with another cause: the second cause of a shared miss, classed and fixed as
    a row of that cause would be."""

    cause: str | None
    provider: str
    model: str
    lane_kind: str
    gap_ms: int | None
    index: int | None = None


def _as_second(row: _Row, second: str) -> _AsCause:
    """``row``'s facts under its ``second`` cause (a shared miss's)."""
    return _AsCause(second, row.provider, row.model, row.lane_kind, row.gap_ms, getattr(row, "index", None))


def fixes_for(row: _Row) -> tuple[str, ...]:
    """The --what-if fixes that would recover a recoverable request, or an unknown one if the
    agent made the change (:data:`UNKNOWN_FIX`); none otherwise. A miss two causes share
    (``secondary_cause``) gets its second cause's fixes too: its part is in that cause's class, so
    a recoverable part is one a fix recovers."""
    own = _fixes(row)
    second = getattr(row, "secondary_cause", None)
    if second is None:
        return own
    other = _fixes(_as_second(row, second))
    return own + tuple(fix for fix in other if fix not in own)


def fix_parts(row: _Row, fix: str) -> tuple[tuple[str, Decimal | None], ...]:
    """The parts of ``row``'s loss that ``fix`` recovers, each under its own cause: ``(cause,
    dollars)``. A miss two causes share (``secondary_cause``) has two parts (:func:`.shares.loss_parts`,
    as the causes table splits it), each the fix's where the fix is among that cause's
    (:func:`fixes_for`), so the parts of the fixes add up to the row's loss as the causes table's
    do. A row with one cause is one part (dollars None: not priced)."""
    whole = loss_parts(row)
    if len(whole) == 1:
        return ((whole[0].cause, whole[0].usd),)
    lead, second = whole
    parts = tuple((part.cause, part.usd) for part, facts in ((lead, row), (second, _as_second(row, second.cause)))
                  if fix in _fixes(facts))
    return parts or ((lead.cause, getattr(row, "lost_usd", None)),)


def _fixes(row: _Row) -> tuple[str, ...]:
    found = loss_class(row)
    if found == "unknown":
        return UNKNOWN_FIX.get(row.cause or "", ())
    if found != "recoverable":
        return ()
    if row.lane_kind == "compaction" and row.cause in COMPACTION_CALL_CAUSES:
        return ("keep-prefix-compaction",)
    if row.cause == "ttl-expired":
        longest = longest_ttl_ms(row.provider, row.model)
        if longest is not None and row.gap_ms is not None and row.gap_ms > longest:
            return ("keep-alive",)  # past the one lifetime the model offers: no longer TTL to ask for
    return CAUSE_FIX.get(row.cause or "", ())


class LossSplit(msgspec.Struct, frozen=True):
    """The lost dollars in three classes, each the exact sum of its requests' (not rounded):
    ``recoverable_usd + unavoidable_usd + unknown_usd == lost_usd`` exactly."""

    lost_usd: Decimal
    recoverable_usd: Decimal
    unavoidable_usd: Decimal
    unknown_usd: Decimal
    recoverable_requests: int
    unavoidable_requests: int
    unknown_requests: int
    #: Of each class's requests, those that lost tokens no dollar figure holds (a model with no
    #: price, a range only): in its requests, not in its dollars.
    recoverable_unpriced: int = 0
    unavoidable_unpriced: int = 0
    unknown_unpriced: int = 0
    #: The classes some priced request of which lost dollars (their exact sum above 0, before
    #: rounding to the cent): not written, it decides :meth:`usd_unknown`.
    priced_loss: tuple[str, ...] = ()
    #: Of each class, the misses another class leads whose loss it shares (a shared miss's second
    #: cause's part): not in its requests, their part in its dollars.
    recoverable_shared: int = 0
    unavoidable_shared: int = 0
    unknown_shared: int = 0

    def usd(self, name: str) -> Decimal:
        return getattr(self, f"{name}_usd")

    def usd_unknown(self, name: str) -> bool:
        """Whether the class's dollars are unknown: some request of it lost tokens no dollar
        figure holds and no priced request of it lost anything, so its $0.00 would claim nothing
        was lost. A class whose requests all lost nothing (a cold start's) is $0, known, priced
        or not, as the causes table says (``cold-start 3 0 $0``): where no request of the audit
        is priced too (before, every class with a request was unknown there). A request with a
        class always tells its loss (a cause is found only where the usage reports cache use).
        Every view decides it here: the JSON's null, the text's and the page's *unknown*."""
        return self.unpriced(name) > 0 and name not in self.priced_loss

    def requests(self, name: str) -> int:
        return getattr(self, f"{name}_requests")

    def unpriced(self, name: str) -> int:
        return getattr(self, f"{name}_unpriced")

    def shared(self, name: str) -> int:
        return getattr(self, f"{name}_shared")


CENT = Decimal("0.01")


def cents(amount: Decimal) -> Decimal:
    """``amount`` rounded half-up to the cent."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


class _Priced(_Row, Protocol):
    lost_usd: Decimal | None
    lost_tokens: int | None
    loss_class: str | None
    secondary_loss_class: str | None
    secondary_lost_usd: Decimal | None


def split_losses(rows: Iterable[_Priced]) -> LossSplit:
    """Per class: the requests and their lost dollars, exact (not rounded). A miss two causes share counts in its leading cause's class; its second cause's part
    of the dollars (:func:`.shares.loss_parts`) goes to that cause's class."""
    groups: dict[str, tuple[int, Decimal, int, int]] = {}
    for row in rows:
        if row.loss_class is not None:
            unseen = row.lost_usd is None and (row.lost_tokens or 0) > 0
            for k, part in enumerate(loss_parts(row)):
                # The second part's class, where it has one of its own (else it stays in the
                # leading class, and adds only dollars there).
                name = row.loss_class if k == 0 else row.secondary_loss_class or row.loss_class
                moved = name != row.loss_class
                n, lost, unpriced, shared = groups.get(name, (0, Decimal(0), 0, 0))
                groups[name] = (n + (k == 0), usd_sum((lost, part.usd or Decimal(0))),
                                unpriced + (unseen if k == 0 or moved else 0), shared + moved)
    return split_sums(groups)


def split_sums(groups: Mapping[str, tuple[int, Decimal, int, int]]) -> LossSplit:
    """:func:`split_losses` of rows already summed per loss class: {class: (requests, lost dollars,
    requests that lost tokens no dollar figure holds, shared misses another class leads)} (a class
    of another name counts as ``unknown``)."""
    exact: dict[str, list[Decimal]] = {name: [] for name in LOSS_CLASSES}
    counts = dict.fromkeys(LOSS_CLASSES, 0)
    unpriced = dict.fromkeys(LOSS_CLASSES, 0)
    shared = dict.fromkeys(LOSS_CLASSES, 0)
    for name, (n, lost, left_out, also) in groups.items():
        name = name if name in exact else "unknown"
        counts[name] += n
        unpriced[name] += left_out
        shared[name] += also
        exact[name].append(lost)
    parts = {name: usd_sum(values) for name, values in exact.items()}
    total = usd_sum(parts.values())
    return LossSplit(
        total, parts["recoverable"], parts["unavoidable"], parts["unknown"],
        counts["recoverable"], counts["unavoidable"], counts["unknown"],
        unpriced["recoverable"], unpriced["unavoidable"], unpriced["unknown"],
        tuple(name for name in LOSS_CLASSES if parts[name] > 0),
        shared["recoverable"], shared["unavoidable"], shared["unknown"],
    )


class Recommendation(msgspec.Struct, frozen=True):
    """One thing to change, with the dollars its fix saved when the log was re-simulated with it."""

    #: Its place among the fixes ranked, from 1; None where its fix saves nothing on the log
    #: or cannot apply to it (:func:`~.advice.not_ranked`): listed apart, after the ranked ones.
    rank: int | None
    #: The ``--what-if`` fix that re-simulated it.
    fix: str
    #: What the audit saw: the causes and how many misses.
    pattern: str
    causes: tuple[str, ...]
    #: Evidence: requests the fix changes (or, when it cannot re-simulate, the misses it targets),
    #: in how many lanes and sessions (log files).
    requests: int
    lanes: int
    sessions: int
    #: The agent that wrote the log (its format's name when no agent is known).
    agent: str
    #: What to change in that agent.
    change: str
    #: The agent's documented setting for it, and where it is documented (None: none found).
    setting: str | None
    source: str | None
    #: Net dollars saved by re-simulation (None: the log cannot re-simulate this fix).
    saved_usd: Decimal | None
    #: Dollars the audit lost to the misses this fix targets.
    lost_usd: Decimal
    assumption: str
    #: What drove the figure, or why it cannot be re-simulated and how to record a log that can.
    detail: str
    #: Of the misses it targets, those that lost tokens no dollar figure holds (a model with no
    #: price, a range only): not in ``lost_usd``, and what the fix saves on them is unknown.
    unpriced_requests: int = 0
    #: Whether its saving rests on a change inferred from the reads, not seen (static-system on a
    #: log without bodies): every report says "may save" for it, never "saves".
    inferred: bool = False

    @property
    def lost_unknown(self) -> bool:
        """Whether what its misses lost is unknown: some lost tokens no dollar figure holds and
        the priced ones lost nothing (its *lost to its misses* reads ``unpriced``)."""
        return bool(self.unpriced_requests) and not self.lost_usd

    @property
    def saved_unknown(self) -> bool:
        """Whether what it saves is unknown (its *dollars* read ``unknown (unpriced)``): it saves
        nothing on priced requests, or cannot be re-simulated, and :attr:`lost_unknown`."""
        return (self.saved_usd is None or self.saved_usd <= 0) and self.lost_unknown
