"""Which cause a miss gets: one ordered table of rules, the first that applies wins.

Each rule is a small named function of the :class:`Evidence` the audit has for one request (the
request, the lane's previous request, the cache model's prediction, the clock, the shared head,
the tokens lost) that returns a :class:`Finding` when it applies and None when it does not. The
order in :data:`CAUSE_RULES` is the precedence: stronger evidence first (the provider's own
diagnostic, then a lane start's facts, then the exact body diff, then what the log records),
and within the log's evidence the change the agent made before the provider's rules that could
also explain it. ``unexplained`` applies always and closes the table. The causes themselves
are listed in :mod:`prefixbench.workloads.audit.causes`; each rule has a test in
tests/unit/audit/test_precedence.py.

Provider facts (TTLs, minimums, breakpoint lookback, best-effort notes) come from the rule
objects of :mod:`prefixbench.simulator.providers`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import msgspec
from prefixbench.simulator.providers import UNKNOWN, rules_for
from prefixbench.simulator.providers.base import ProviderRules
from prefixbench.workloads.audit.causes import DIAGNOSTIC_CAUSES
from prefixbench.workloads.audit.locate import Location
from prefixbench.workloads.logs.bodydiff import body_diff
from prefixbench.workloads.logs.trace import NO_MODEL, TraceRequest

#: Relative error within which a predicted read counts as right.
READ_TOLERANCE = 0.03
#: Idle time after which nothing is alive for a provider without a TTL.
NO_TTL_MS = 10**15


class Prediction(msgspec.Struct, frozen=True, gc=False):  # scalars only: no cycle
    """What the cache model predicts for one request, and how (``chain``, ``body``, ``blocks``, ``none``)."""

    read: int
    write: int
    uncached: int
    by: str
    #: An entry that would have served was still being written.
    in_flight: bool = False
    #: An entry that would have served had expired.
    expired: bool = False
    write_1h: int = 0
    #: Where the provider's idle rule zeroed the read (Gemini: nothing read after a lane idled past
    #: ``unread_after_idle``): the idle time since the lane's previous call was sent, and the
    #: limit that applied (ms); 0: the rule did not apply.
    idle_ms: int = 0
    idle_limit_ms: int = 0
    #: The idle was counted since the lane's previous call to this model, another model's calls
    #: between (a lane that went back to a model: its entry aged since its own last use).
    idle_since_model: bool = False
    #: The lane had read nothing yet, and the model reads nothing until its lane has read (Gemini
    #: 2.5: the provider's ``unread_until_read``): that rule predicted nothing read.
    unread_until_read: bool = False
    #: The idle above did not decide the prediction: ``unread_until_read`` had predicted nothing
    #: already, and the lane had also idled past the limit (the row names both, the idle as "also").
    idle_also: bool = False


class Previous(msgspec.Struct, frozen=True):
    """The lane's previous request, with its send tick and the tick its response began."""

    request: TraceRequest
    tick: int
    ready: int
    #: The tick its response ended, where the log records it.
    done: int | None = None
    #: A call of its lane up to and including it reported a cache write above 0 (a relay that
    #: counts writes: a 0 it reports can be trusted; see
    #: :meth:`~prefixbench.simulator.providers.base.ProviderRules.written_bound`).
    lane_wrote: bool = False


class Later(msgspec.Struct, frozen=True):
    """A later call of the lane that read past a request's read of the same content
    (:func:`prefixbench.workloads.audit.core.read_later`): its line, how long after the request
    it was sent (logical ms) and what it read."""

    line: int
    ms: int
    read: int


class Evidence(msgspec.Struct, frozen=True):
    """Everything the cause rules may look at for one request with lost (or no) reads."""

    r: TraceRequest
    prev: Previous | None
    pred: Prediction
    tick: int
    #: Size of the shared head the request's prefix starts with, when known.
    head: int | None
    lost: int
    expected: int
    #: Per file, the line of its latest compaction call before this request.
    compaction_at: Mapping[str, int]
    use_diagnostic: bool = True
    #: For a compaction call: the main-lane request of its session sent last before it (the
    #: conversation it summarizes, whose cached prefix it could replay), None when the log has none.
    source: Previous | None = None
    #: Where the cached prefix ended on the logged history (transcript logs), when it could be told.
    location: Location | None = None
    #: The reads two or more cold points of the request's head agree on, ``(tokens, cold points)``
    #: (:func:`prefixbench.workloads.audit.core.warm_levels`): prefixes kept warm outside the log.
    levels: tuple[tuple[int, int], ...] = ()
    #: For any request: logical ms since a call of any lane (this one's included) last sent a request
    #: under the same head and of the same request family (model, envelope, speed, upstream: the
    #: provider keeps a cache a family), None when none did: how long the shared head had been idle.
    head_since: int | None = None
    #: The later call of the lane that, with the same content up to past this one's read and
    #: within the TTL of what this one cached, read more before anything written since this one
    #: could be read (None: none did, or it is not known).
    later: Later | None = None

    @property
    def events(self) -> dict[str, str]:
        return dict(self.r.events)

    @property
    def before(self) -> TraceRequest | None:
        return self.prev.request if self.prev else None

    @property
    def gap(self) -> int:
        """Logical ms since the previous request was sent (0 at a lane start)."""
        return self.tick - self.prev.tick if self.prev else 0

    @property
    def idle_ms(self) -> int | None:
        """Logical ms since the previous response ended, where the log records its end."""
        if self.prev is None or self.prev.done is None:
            return None
        return max(0, self.tick - self.prev.done)

    @property
    def is_start(self) -> bool:
        """A lane (or chain) start that follows no compaction: only the shared head could be read."""
        r = self.r
        return self.prev is None or (r.prefix is not None and r.prefix.parent is None and "compaction" not in self.events)

    @property
    def crosses(self) -> bool:
        """The previous request is another lane's: the call a subagent's or fork's first prompt extends."""
        prev = self.before
        return prev is not None and (prev.file, prev.lane) != (self.r.file, self.r.lane)

    @property
    def rules(self) -> ProviderRules:
        return rules_for(self.r.provider)

    @property
    def cache_read(self) -> int:
        assert self.r.usage is not None
        return self.r.usage.cache_read


class Finding(msgspec.Struct, frozen=True):
    """A rule's answer: the cause, the evidence level (see :data:`.causes.EVIDENCE`) and the detail;
    where a second cause accounts for part of the lost tokens on its own (a compaction after an
    expired head), that cause (``also``) and its part (``also_tokens``, fewer than the loss): the
    totals by cause split the loss between the two."""

    cause: str
    evidence: str
    detail: str
    also: str | None = None
    also_tokens: int = 0

    def as_tuple(self) -> tuple[str, str, str]:
        return self.cause, self.evidence, self.detail


class CauseRule(msgspec.Struct, frozen=True):
    """One row of the precedence table."""

    name: str
    #: What the rule reads, for a reader of the table.
    uses: str
    test: Callable[[Evidence], Finding | None]


def duration(ms: int) -> str:
    """``42s``, ``7m05s`` or ``2h03m``."""
    seconds = ms // 1000
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def request_ttl(r: TraceRequest) -> str | None:
    """The label of the lifetime ``r`` gets where its provider decides it per request (OpenAI:
    the body's ``prompt_cache_retention`` where the model offers it, else the model's default on
    the day it was sent); None where the write decides it."""
    return rules_for(r.provider).ttl_label(r.model, r.asked_retention, r.sent_ms)


def ttl_ms(prev: TraceRequest) -> int:
    """How long what ``prev`` wrote lives: its provider's TTL for the write it made, or for the
    request (:func:`request_ttl`)."""
    long_write = prev.usage is not None and prev.usage.cache_write_1h
    ttl = rules_for(prev.provider).ttl_ms(request_ttl(prev) or ("1h" if long_write else None))
    return NO_TTL_MS if ttl is None else ttl


# --- the rules, in table order ------------------------------------------------------------------


def _diagnostic(ev: Evidence) -> Finding | None:
    d = ev.r.diagnostic
    if ev.use_diagnostic and d in DIAGNOSTIC_CAUSES:
        if DIAGNOSTIC_CAUSES[d] == "model-changed":
            # The diagnostic says the model changed, not who changed it: a switch the log shows
            # the user picked is still their choice.
            chosen = _model_changed(ev)
            if chosen is not None and chosen.cause == "model-chosen":
                return msgspec.structs.replace(chosen, detail=f"{chosen.detail}; provider diagnostic: {d}")
        return Finding(DIAGNOSTIC_CAUSES[d], "diagnostic", f"provider diagnostic: {d}")
    return None


def _compaction_call(ev: Evidence) -> Finding | None:
    """A compaction call that missed: judged against the main request it summarizes, never a cold start."""
    r, src = ev.r, ev.source
    if not r.is_compaction_call:
        return None
    if src is None:
        return Finding("compaction-miss", "log", (
            f"a compaction call that read {ev.cache_read:,} tokens, with no main-lane request before it in the log: "
            "the conversation it summarizes was not cached to replay"
        ))
    main = src.request
    gap = ev.tick - src.tick
    said = (
        f"the compaction call read {ev.cache_read:,} of the {ev.expected:,} tokens the main request at line "
        f"{main.line} left cached: it did not replay that prefix"
    )
    if gap > ttl_ms(main):
        expired = (f"the compaction call came {duration(gap)} after the main request at line {main.line}, "
                   f"past the {duration(ttl_ms(main))} TTL of what that request cached")
        # Judged as the TTL rule judges an idle lane: another lane's call under the same head (same
        # family, same folder) within that TTL kept the head warm, whatever the main lane's gap.
        since = ev.head_since if ev.head_since is not None and ev.head_since <= ttl_ms(main) else None
        if since is None:
            return Finding("ttl-expired", "log", expired)
        warmed = _warmed_by(since)
        if _cold_read(ev):
            return Finding("ttl-expired", "log", f"{expired}; {_not_this_head(ev, warmed)}")
        if ev.head is None or ev.cache_read >= ev.head:
            return Finding("ttl-expired", "log", expired + _warm_head_read(ev, warmed, "the main conversation's"))
        # The head was warm, yet the read stopped inside it: the expiry does not explain that; the
        # call did not replay the prefix (what a cache-aware compaction reads), the main
        # conversation's own part past the head having expired too.
        short = (f"; the head ({ev.head:,} tokens) was warm ({warmed}) yet read short by "
                 f"{ev.head - ev.cache_read:,} tokens, which the expiry does not explain; the main conversation's own "
                 f"part past the head had expired too ({expired})")
    else:
        short = ""
    if r.body is not None and main.body is not None:
        diff = body_diff(main.body, r.body)
        if diff is not None:
            return Finding("compaction-miss", "body-diff", f"{said} ({diff.cause}: {diff.detail}){short}")
    return Finding("compaction-miss", "log", f"{said} (another system prompt, tools, model or history than the main lane sent){short}")


def _start_in_flight(ev: Evidence) -> Finding | None:
    if not (ev.is_start and ev.pred.in_flight):
        return None
    return Finding("concurrent-write", "log", (
        "started while another request was still writing the shared head"
        + (f" ({ev.head:,} tokens)" if ev.head else "")
        + ": one cold start plus misses on an entry still being written, not a prefix change"
    ))


def _start_expired(ev: Evidence) -> Finding | None:
    if ev.is_start and ev.pred.expired:
        return Finding("ttl-expired", "log", "the shared head had been cached earlier, but its TTL had run out")
    return None


def _start_resumed(ev: Evidence) -> Finding | None:
    events = ev.events
    if ev.is_start and ("resume" in events or "fork" in events):
        return Finding("resume", "log", "a resumed or forked session: its history is re-sent from another file")
    return None


def _cold_start(ev: Evidence) -> Finding | None:
    if not (ev.is_start and ev.lost == 0):
        return None
    if ev.prev is None:
        return Finding("cold-start", "log", "first request of the lane: nothing cached to read yet")
    return Finding("cold-start", "log", "a new conversation root in the lane (no compaction logged): nothing it could read was cached")


def _upstream_changed(ev: Evidence) -> Finding | None:
    """A gateway that names the upstream serving each call (OpenRouter's ``provider``, Kilo
    Code's ``inferenceProvider``) routed this call to another upstream than the lane's previous
    one: each keeps a cache of its own, so nothing that call left cached was readable here. (Another
    model too: ``model-changed`` says so.)"""
    prev, r = ev.before, ev.r
    if prev is None or not prev.upstream or not r.upstream or prev.upstream == r.upstream or prev.model != r.model:
        return None
    return Finding("provider-best-effort", "log", (
        f"the gateway routed this request to {r.upstream}, the lane's previous one to {prev.upstream} (the log names "
        f"each call's upstream): each upstream keeps a cache of its own, so {r.upstream} held nothing the previous "
        f"request left cached; read {ev.cache_read:,} of {ev.expected:,}: the gateway's routing, not the agent's doing"
    ))


def _body_diff(ev: Evidence) -> Finding | None:
    r, prev = ev.r, ev.before
    if r.body is None or prev is None or prev.body is None:
        return None
    diff = body_diff(prev.body, r.body)
    if diff is None:
        return None
    comp = ev.compaction_at.get(r.file)
    if diff.cause == "messages-changed" and comp is not None and comp > prev.line:
        return Finding("compaction", "body-diff", f"after the compaction call at line {comp}: {diff.detail}")
    return Finding(diff.cause, "body-diff", diff.detail)


def _compaction(ev: Evidence) -> Finding | None:
    events = ev.events
    if "compaction" not in events:
        return None
    head = ev.head
    logged = f"compaction logged for this request ({events['compaction'] or 'new context'})"
    # The head is shared: a call of another lane under it (a compaction call sent just before) kept
    # it warm, whatever this lane's own idle gap; its expiry is then no cause here.
    expired = _past_ttl(ev) if ev.cache_read < (head or 1) and warm_head(ev) is None else None
    if expired is not None:
        # Two causes, each enough for the part it covers: the compaction rewrote what followed the
        # head, the idle gap expired the head too (what a keep-alive or a longer TTL recovers). The
        # one that accounts for more of the lost tokens leads and the other is named: the expiry
        # only where the head's share (its size, read short) is at least half of them; where the
        # head's size is not known, the compaction, whose rewrite is the rest.
        # Each part's tokens go to its own cause in the totals (``also``): the head's to the expiry,
        # the rest to the compaction.
        head_part = min(head - ev.cache_read, ev.lost) if head else 0
        rest = ev.lost - head_part
        if head and 2 * head_part >= ev.lost:
            return Finding("ttl-expired", "log", f"{expired}: the head ({head:,} tokens) had expired in that gap; "
                           f"{logged}: what followed the head was rewritten anyway"
                           + (f" ({rest:,} of the {ev.lost:,} lost)" if rest else ""),
                           also="compaction" if rest else None, also_tokens=rest)
        share = f"the head ({head:,} tokens, {head_part:,} of the {ev.lost:,} lost)" if head else "the head"
        return Finding("compaction", "log", f"{logged}; {share} had expired too: {expired}",
                       also="ttl-expired" if head_part else None, also_tokens=head_part)
    return Finding("compaction", "log", logged + (
        f"; the head ({head:,} tokens) could still be read" if head and ev.cache_read < head else ""
    ))


def _resumed(ev: Evidence) -> Finding | None:
    events = ev.events
    if ev.crosses:
        return None  # measured against the call it goes on from (a fork's source): its loss there has another cause
    if "resume" in events or "fork" in events:
        return Finding("resume", "log", events.get("resume") or events.get("fork") or "resumed session")
    return None


def user_chose_model(r: TraceRequest) -> bool:
    """Whether the log records the user picking ``r``'s model before it: Gemini CLI's info line
    naming it, or Claude Code's /model output (which names an alias or a display name: "")."""
    chosen = [detail for kind, detail in r.events if kind == "model_chosen"]
    return r.model in chosen or "" in chosen


def _model_changed(ev: Evidence) -> Finding | None:
    prev = ev.before
    # A model the log does not name (NO_MODEL: a Cline-family task's call with no model id)
    # shows no switch: the call may have gone to the same model.
    if prev is not None and prev.model != ev.r.model and NO_MODEL not in (prev.model, ev.r.model):
        # Gemini CLI's record names the model set (the switch to it is the user's); Claude Code's
        # /model output names an alias or a display name ("" here): the switch after it is.
        chosen = [detail for kind, detail in ev.r.events if kind == "model_chosen"]
        expired = _expired_anyway(ev)
        if expired is not None:
            return msgspec.structs.replace(expired, detail=(
                f"{expired.detail}; the model changed too ({prev.model} -> {ev.r.model}"
                + (", picked by the user" if user_chose_model(ev.r) else "")
                + "), but any entry of this prompt had expired in that gap whichever model it was sent to"))
        if user_chose_model(ev.r):
            return Finding("model-chosen", "log", f"model {prev.model} -> {ev.r.model}, picked by the user (the log records "
                           + ("a /model" if "" in chosen else f"the model set to {ev.r.model}") + " before this request)")
        return Finding("model-changed", "log", f"model {prev.model} -> {ev.r.model}")
    return None


def _expired_anyway(ev: Evidence) -> Finding | None:
    """Where a request that changed model (or family) came after an idle gap past the TTL of what
    the previous request cached, with no other lane's call keeping the head warm: the expiry, which
    alone explains the whole miss (the new model's entry, written before that gap, had expired as
    well; keeping the model would have read nothing either), as :func:`_idle_past_ttl` finds it;
    None otherwise. The change is then named in the detail, not as the cause (a model pin would
    recover none of it)."""
    if _past_ttl(ev) is None or warm_head(ev) is not None:
        return None
    finding = _idle_past_ttl(ev)
    return finding if finding is not None and finding.cause == "ttl-expired" else None


def _family_changed(ev: Evidence) -> Finding | None:
    prev, r = ev.before, ev.r
    if prev is None or (prev.envelope == r.envelope and prev.speed == r.speed):
        return None
    before, after = prev.envelope_dict, r.envelope_dict
    changed = [
        f"{k} {before.get(k, 'default')} -> {after.get(k, 'default')}"
        for k in sorted(set(before) | set(after))
        if before.get(k) != after.get(k)
    ]
    if prev.speed != r.speed:
        # Fast mode: "Requests at different speeds do not share cached prefixes" (Anthropic's
        # fast-mode page); the speed is the one each response's usage reports.
        changed.append(f"speed {prev.speed or 'standard'} -> {r.speed or 'standard'} (usage.speed)")
    levels = [detail for kind, detail in r.events if kind == "thinking_change"]
    logged = f" (thinking_level_change: {'; '.join(levels[-3:])})" if levels else ""
    return Finding("effort-changed", "log", "new request family: " + ", ".join(changed) + logged)


#: A read within this share of a warm level stopped at it (the share the levels are grouped by).
WARM_LEVEL_TOLERANCE = 0.01


def _past_ttl(ev: Evidence) -> str | None:
    """The idle gap since the previous request where it ran past the TTL of what that request
    cached, in words; None inside the TTL (or at a lane start)."""
    prev = ev.before
    if prev is None:
        return None
    # A TTL counted from the end of the response that wrote the entry (the rules' ttl_from='end',
    # as the chain model counts it) is judged by the idle time since then, where the log says.
    end = rules_for(prev.provider).ttl_from == "end" and ev.idle_ms is not None
    if (ev.idle_ms if end else ev.gap) <= ttl_ms(prev):
        return None
    if ev.idle_ms is None:
        return f"idle {duration(ev.gap)} since the previous request, past the {duration(ttl_ms(prev))} TTL"
    return (f"{duration(ev.gap)} since the previous request was sent ({duration(ev.idle_ms)} idle after its response ended), "
            f"past the {duration(ttl_ms(prev))} TTL")


def warm_head(ev: Evidence) -> int | None:
    """Logical ms since a call under the request's head last sent, where that call came within
    the TTL of what the lane's previous request cached (and so after that request: another
    lane's, of the same head and request family); None otherwise. The provider's cache is one
    per family and a read refreshes the TTL of the prefix it read, so that call kept the shared
    head warm whatever this lane's own idle gap."""
    if ev.before is None or ev.head_since is None or ev.head_since > ttl_ms(ev.before):
        return None
    return ev.head_since


def _idle_past_ttl(ev: Evidence) -> Finding | None:
    idle = _past_ttl(ev)
    if idle is None:
        return None
    level = next((level for level in ev.levels if abs(ev.cache_read - level[0]) <= WARM_LEVEL_TOLERANCE * level[0]), None)
    if ev.head is not None and ev.cache_read > ev.head and level is None:
        # It read past the shared head: the conversation's own entry outlived the gap (a TTL
        # the provider documents as a minimum), so what it did not read was not lost to expiry.
        return None
    since = warm_head(ev)
    if since is not None:
        warmed = _warmed_by(since)
        if _cold_read(ev):
            return Finding("ttl-expired", "log", f"{idle}; {_not_this_head(ev, warmed)}")
        if ev.head is not None and ev.cache_read < ev.head:
            # The head was warm, yet the read stopped inside it: the expiry does not explain where
            # the read stopped (what stopped it would have cut off the lane's own part too).
            return _warm_head_short(ev, idle, warmed)
        idle += _warm_head_read(ev, warmed, "this lane's")
    if level is not None and ev.cache_read > ev.pred.read * (1 + READ_TOLERANCE):
        # Past the TTL, the read stopped at a prefix other cold points read too: kept warm by traffic
        # outside the log (not a change of the message it ends in), and not predictable from it.
        # (A request naming an explicit cache is no cold point: its read may be that cache's.)
        counted = "this one included" if ev.r.explicit_cache is None else "not this one, which names an explicit cache"
        idle += (
            f"; it read {ev.cache_read:,} tokens, as {level[1]} cold points of this log did (lane starts and reads after a TTL expiry, "
            f"{counted}; reads within {WARM_LEVEL_TOLERANCE:.0%} of {level[0]:,} tokens, their sizes alone compared): a prefix "
            "kept warm by traffic the log does not show (the account's other sessions sending the same prefix), not predicted, as the "
            "log does not show when that traffic ran"
        )
    return Finding("ttl-expired", "log", idle)


def _warmed_by(since: int) -> str:
    """What kept a head warm: another lane's call under it sent ``since`` ms before, within the TTL."""
    return f"another lane's call under the same head, in the same folder, was sent {duration(since)} before, within the TTL"


def _warm_head_read(ev: Evidence, warmed: str, whose: str) -> str:
    """The suffix of a TTL expiry under a head ``warmed`` kept warm and read in full (or of a size
    not known): only ``whose`` own part past the head expired."""
    if ev.head is None:
        return (f"; {warmed}, so the shared head was warm and only {whose} own part past it had expired "
                "(the head's size is not known: how much of the loss is past it is not told)")
    return (f"; {warmed}: the head ({ev.head:,} tokens) was warm and read, so what expired is {whose} own "
            f"part past it ({ev.lost:,} tokens lost)")


def _not_this_head(ev: Evidence, warmed: str) -> str:
    """Where another lane's call kept the head warm yet this call read cold (:func:`_cold_read`):
    a head key is an inference (Claude Code's main head is one per model, version and client, yet
    its system prompt differs by project: cwd, CLAUDE.md), and this read shows nothing of it warm,
    so the other lane's call is no evidence of a head change here."""
    return (f"{warmed}, yet this call read {ev.cache_read:,} tokens, "
            + ("nothing" if ev.cache_read == 0 else f"less than the smallest prefix cold points of this head agree on ({ev.levels[0][0]:,})")
            + ": that call's head was not this lane's (a head key is inferred), so nothing here says the head changed")


def _cold_read(ev: Evidence) -> bool:
    """The request read 0, or less than the smallest prefix its head's cold points agree on (a lane
    start or a read after an expiry finds at least that where the head is warm): no sign the head
    another lane's call used was this one."""
    return ev.cache_read == 0 or (bool(ev.levels) and ev.cache_read < ev.levels[0][0] * (1 - WARM_LEVEL_TOLERANCE))


def _warm_head_short(ev: Evidence, idle: str, warmed: str) -> Finding:
    """A read short of a head another lane kept warm, past the lane's own TTL: the rules after
    the TTL's decide where the read stopped (not ``unexplained``'s, which would call the gap inside
    the TTL); the lane's own part past the head is named as expired too."""
    assert ev.head is not None
    own = (f"the head ({ev.head:,} tokens) was warm ({warmed}) yet read short by {ev.head - ev.cache_read:,} tokens, "
           f"which the expiry does not explain; the lane's own part past the head had expired too ({idle})")
    after = next(k for k, rule in enumerate(CAUSE_RULES) if rule.name == "idle-past-ttl") + 1
    for rule in CAUSE_RULES[after:-1]:
        finding = rule.test(ev)
        if finding is not None:
            return msgspec.structs.replace(finding, detail=f"{finding.detail}; {own}")
    return Finding("unexplained", "none", f"read {ev.cache_read:,} of {ev.expected:,} tokens: {own}; nothing logged "
                   "explains the shortfall inside the head")


#: A prompt smaller than the lane's previous one by more than this share was rewritten: agents
#: only ever append, so history went (an in-turn truncation, context editing, a compaction).
SHRINK_TOLERANCE = 0.01


def _prompt_shrank(ev: Evidence) -> Finding | None:
    prev, usage = ev.before, ev.r.usage
    if prev is None or prev.usage is None or usage is None or ev.cache_read >= ev.expected:
        return None
    before, now = prev.usage.prompt, usage.prompt
    rewound = ev.events.get("rewind")
    if rewound is not None:
        # The agent logged a rewind (Codex's thread rollback, Gemini CLI's /rewind, Kimi Code's
        # undo): the prompt goes on from before the turns it dropped, not from the previous request.
        return Finding("messages-changed", "log", (
            f"{rewound or 'history rewound'}: the prompt ({now:,} tokens) goes on from before the dropped turns, not from "
            f"the previous request ({before:,} tokens), so the cached prefix ended where they began"
        ))
    if "tools_change" in ev.events and ev.location is not None and ev.location.message == 0:
        # The read ended inside the unlogged head and the tool list changed on the way: the tools
        # come first in the prefix, so history dropped after them did not end it (Claude Code
        # 2.1.152's deferred tools, allym-4/test: the prompt 43,879 tokens smaller, the read at
        # 11,213, Anthropic's diagnostic tools_changed). The location names the change.
        return None
    # A user turn sent without the previous turn's reasoning: Codex's, or a reader's that says so
    # (Trae Agent's nudge: trae_agent.py, _Run._shared).
    turn = "user_turn" in ev.events and (
        ev.r.source_format == "codex" or (ev.r.prefix is not None and ev.r.prefix.shared is not None))
    if now >= before * (1 - SHRINK_TOLERANCE):
        if turn and ev.r.prefix is not None and ev.r.prefix.shared is not None and ev.r.prefix.shared < before:
            # Sent without the previous turn's reasoning (codex.py, _shared).
            if now < before + prev.usage.output:
                return Finding("messages-changed", "log", (
                    f"the prompt ({now:,} tokens) at a new user turn is smaller than the previous prompt and the response it "
                    f"sends back ({before:,} + {prev.usage.output:,}): sent without the previous turn's reasoning (OpenAI "
                    "renders none of an earlier turn), so the cached prefix ended where that reasoning began"
                ))
            return Finding("messages-changed", "log", (
                f"the prompt ({now:,} tokens) at a new user turn follows a turn that reasoned: sent without that reasoning "
                "(OpenAI renders none of an earlier turn; the user's message outgrew it), so the cached prefix ended "
                "where that reasoning began"
            ))
        return None
    if now < before / 2:
        return Finding("compaction", "log", (
            f"the prompt fell from {before:,} to {now:,} tokens with no compaction logged: the history was "
            "replaced (a compaction or truncation the log does not mark)"
        ))
    if turn:
        return Finding("messages-changed", "log", (
            f"the prompt shrank by {before - now:,} tokens ({before:,} -> {now:,}) at a new user turn: sent without the "
            "previous turn's reasoning (OpenAI renders none of an earlier turn), so the cached prefix ended where that "
            "reasoning began"
        ))
    return Finding("messages-changed", "log", (
        f"the prompt shrank by {before - now:,} tokens ({before:,} -> {now:,}) since the previous request: earlier "
        "history was dropped or rewritten (an in-turn truncation or context editing), so the cached prefix ended there"
    ))


def carries_reply(r: TraceRequest, prev: TraceRequest) -> bool:
    """Whether ``r``'s body sends back ``prev``'s response: its messages are ``prev``'s, then an
    assistant message (the answer, whose tool results may follow). Such a request was sent after
    that response, whatever the log's clock says (a clock that stepped back between the two)."""
    if r.body is None or prev.body is None:
        return False
    before, now = prev.body.messages, r.body.messages
    return len(now) > len(before) and now[len(before)].role == "assistant" and now[:len(before)] == before


def _sent_before_ready(ev: Evidence) -> Finding | None:
    # A request that sends the previous response back was sent after it: the clock, not the
    # cache, is wrong there, and the later rules decide.
    if ev.prev is not None and ev.tick < ev.prev.ready and not carries_reply(ev.r, ev.prev.request):
        return Finding("concurrent-write", "log", "sent before the previous request's response had begun (entry still being written)")
    return None


def _below_minimum(ev: Evidence) -> Finding | None:
    """A miss the provider's minimum accounts for, by what its rule bounds
    (:attr:`~prefixbench.simulator.providers.base.ProviderRules.min_applies_to`): where it bounds
    the prompt (Anthropic, Bedrock, Gemini, Qwen, MiniMax), a call that read (and, where writes
    are counted, wrote) nothing and whose prompt is below it (nothing of it is read or written, as
    the chain model has it); where it
    bounds each read (OpenAI, vLLM), the read expected is below it (reported as 0). A read expected
    below the minimum of a prompt above it is no such miss (a Gemini lane start of 8,104 tokens
    reads a 4,007-token head: the minimum of 4,096 is the prompt's)."""
    rules, model, usage = ev.rules, ev.r.model, ev.r.usage
    minimum = rules.min_cacheable(model, ev.r.sent_ms)  # the provider's table on the day it was sent
    if rules.min_applies_to == "read":
        if ev.expected < minimum:
            return Finding("below-minimum", "log", (
                f"the {ev.expected:,} tokens it could have read are below {model}'s minimum of {minimum:,} for a read"))
        return None
    if usage is None or usage.cache_read or (rules.is_additive and usage.cache_write):
        return None  # (a call that read or wrote was cacheable)
    # The whole prompt on an additive provider: one that wrote nothing reports no breakpoint, and
    # only a prompt below the minimum shows the minimum, not a missing breakpoint, kept it out.
    prompt = usage.prompt if rules.is_additive else rules.cacheable(usage)
    cap = rules.max_cached(model)
    if cap is not None:
        prompt = min(prompt, cap)
    if prompt < minimum:
        return Finding("below-minimum", "log", (
            f"its prompt ({prompt:,} tokens) is below {model}'s minimum of {minimum:,}: "
            "nothing of it is cached"))
    return None


def _beyond_lookback(ev: Evidence) -> Finding | None:
    lookback, prefix = ev.rules.lookback_blocks, ev.r.prefix
    if lookback is None or prefix is None or prefix.new_blocks <= lookback or ev.cache_read >= ev.expected:
        return None
    return Finding(
        "breakpoint-placement", "log", f"{prefix.new_blocks} blocks since the previous breakpoint: beyond the {lookback}-block lookback"
    )


def _breakpoints_miss(ev: Evidence) -> Finding | None:
    rules, body = ev.rules, ev.r.body
    if rules.max_breakpoints is None or body is None or ev.pred.read >= ev.expected * (1 - READ_TOLERANCE):
        return None
    marks = len(body.cache_breakpoints) + (body.auto_cache is not None)
    return Finding("breakpoint-placement", "body-diff", (
        "the body only grew, yet replaying the exact bodies predicts the miss too: "
        + ("the request carries no cache_control at all" if marks == 0 else
           f"none of its {marks} breakpoint(s) reaches the entry the previous request wrote ({rules.lookback_blocks}-block lookback)")
    ))


def _unwritten_miss(ev: Evidence) -> Finding | None:
    """A miss whose call reported writing nothing, on a provider that writes what an agent's
    breakpoints mark (MiniMax): nothing in the prompt changed, or the change would have been written."""
    note, usage = ev.rules.unwritten_miss_note, ev.r.usage
    if note is None or usage is None or not usage.writes_reported or usage.cache_write != 0:
        return None
    return Finding("provider-best-effort", "log", (
        f"read {ev.cache_read:,} of {ev.expected:,} cached tokens and wrote nothing: " + note + ", not the agent's doing"
        + _lagging(ev)
    ))


def _alone(ev: Evidence) -> str:
    """For a request with no previous call in its lane: that, and how long since another lane's
    call under the same head (what the expected read rests on: with no call of its own lane
    before it, the latest call under its head was another lane's)."""
    since = "" if ev.head_since is None else f"; another lane's call under the same head was sent {duration(ev.head_since)} before"
    return f"no previous call in its lane (its first call, so no idle time of its own){since}"


def _unmarked(ev: Evidence) -> str | None:
    """What shows the request carries no cache marker, or None where nothing does. A call that
    reported writing anything was marked (an unmarked one writes no explicit entry). Else its
    logged body holds none (not at the top, on a message or on a content part); with no body
    logged, a call whose log format and API are one of the provider's :attr:`unmarking_apis`
    (pi's ``openai-completions``, whose ``cacheWrite`` is 0 on every call: the 0 tells nothing) is
    taken as its agent's default, which sends that provider no marker: assumed, as a model
    configuration's ``compat.cacheControlFormat`` (later pi), which would mark it, is not logged."""
    body, usage = ev.r.body, ev.r.usage
    if usage is not None and usage.cache_write > 0:
        return None
    if body is not None:
        marked = body.cache_breakpoints or body.auto_cache is not None or body.cache_marked
        return None if marked else "its logged body carries no cache_control"
    if (ev.r.source_format, ev.r.api) in ev.rules.unmarking_apis:
        return (f"taken as unmarked: {ev.r.source_format} sends this provider no cache_control by default on {ev.r.api}, "
                "the API its log names; assumed, a model configuration that marks (compat.cacheControlFormat) not being logged")
    return None


def _best_effort_note(ev: Evidence) -> str | None:
    """Why a miss with nothing changed is the provider's doing, where it is (its cache, or its
    implicit cache for a request with no marker, is best effort, the detail saying what showed it
    unmarked); None where it is not."""
    rules = ev.rules
    if ev.r.relay and relay_takes_misses(rules):
        # (only where the maker's own cache is best effort: a relay of a maker whose cache keeps
        # its promise, a gateway such as OpenRouter keeping no cache of its own, says nothing of
        # why a read fell short, so such a miss stays unexplained, not the relay's nor unavoidable)
        return relay_miss(ev.r.relay, rules)
    if rules.best_effort_note is not None:
        return rules.best_effort_note
    if rules.unmarked_best_effort_note is not None:
        why = _unmarked(ev)
        if why is not None:
            return f"{rules.unmarked_best_effort_note} ({why})"
    return None


#: How the detail of a provider-best-effort miss of a call through a relay starts (:func:`_through`).
RELAYED = "through the relay "


def relay_takes_misses(rules: ProviderRules) -> bool:
    """Whether a miss with nothing changed of a call through a relay is put down to the relay:
    only where the maker's own cache (or its implicit cache) is best effort (:func:`_best_effort_note`)."""
    return rules.best_effort_note is not None or rules.unmarked_best_effort_note is not None


def _through(ev: Evidence) -> str:
    """The start of a provider-best-effort detail of a call that went through a relay (named
    first: a table cuts a long detail), else ""."""
    return f"{RELAYED}{ev.r.relay!r}: " if ev.r.relay else ""


def relay_miss(relay: str, rules: ProviderRules) -> str:
    """Why a miss with nothing changed is put down to the relay a call went through
    (:attr:`~prefixbench.workloads.logs.trace.TraceRequest.relay`): its cache answered, not the
    model maker's, whose rules the audit applies for want of the relay's."""
    maker = rules.maker or rules.name
    return (f"the relay, not {maker}: the log names {relay!r}, not {maker}'s own API, as the endpoint the call went "
            f"through, so the cache that missed was the relay's (its rules are not known; {maker}'s were applied)")


def _tool_changes(ev: Evidence) -> list[str]:
    """The tool-list changes the log recorded since the previous request (``tools_change`` events)."""
    return sorted({detail for kind, detail in ev.r.events if kind == "tools_change"})


def _past_tools(ev: Evidence) -> int:
    """The read past which the tools were cached as sent: the shared head where its size is
    known, and never less than the model's minimum (a read below it caches nothing)."""
    return max(ev.head or 0, ev.rules.min_cacheable(ev.r.model, ev.r.sent_ms))


def _tools_logged(ev: Evidence) -> Finding | None:
    """A short read on a provider whose cache is best-effort, after the log recorded a change of
    the tool list since the previous request (Codex's ``dynamic_tools_updated``, Kimi CLI's
    ``toolsHash``): the request's tools are part of its prefix (sent before the conversation), so
    the prefix cached before the change was not the one sent. Before, such a miss was put down to
    the provider, its detail saying nothing had changed in the log. A read past the shared head
    (or, where its size is not known, past the model's minimum) shows the tools were cached as
    this request sent them: then the change is not the miss's cause, and the provider's rule
    decides, naming the change."""
    if _best_effort_note(ev) is None or out_of_order(ev):
        return None
    tools = _tool_changes(ev)
    if not tools or ev.cache_read > _past_tools(ev):
        return None
    return Finding("tools-changed", "log", (
        f"read {ev.cache_read:,} of {ev.expected:,} cached tokens after the tool list changed since the previous request "
        f"(logged: {'; '.join(tools)}): the tools are part of the prefix, sent before the conversation, so what was "
        "cached before the change was not what this request sent: the agent's doing, not the provider's"
    ))


def _best_effort(ev: Evidence) -> Finding | None:
    note = _best_effort_note(ev)
    if note is None:
        return None
    if ev.prev is None:
        if ev.r.body is None:
            # Only other lanes' reads say what it could have read: with no body, nothing shows its
            # prompt starts as theirs did, so the provider is not blamed (unexplained says why).
            return None
        return Finding("provider-best-effort", "log", (
            _through(ev)
            + f"read {ev.cache_read:,} of {ev.expected:,} cached tokens of a head its body shares with other lanes' calls, "
            f"with {_alone(ev)}: {note}, not the agent's doing"
        ))
    return Finding("provider-best-effort", "log", (
        _through(ev)
        + f"read {ev.cache_read:,} of {ev.expected:,} cached tokens {_logged_changes(ev)} and "
        + (f"{duration(ev.gap)} idle: " if ev.idle_ms is None else f"{duration(ev.idle_ms)} idle after the previous response ended: ")
        + note
        + ", not the agent's doing"
        + _lagging(ev)
    ))


def _logged_changes(ev: Evidence) -> str:
    """What the log recorded since the previous request, for a miss put down to the provider:
    nothing, or a tool-list change that :func:`_tools_logged` did not take as the cause (the read
    went past it, or the request was sent before the previous one), and why not."""
    tools = _tool_changes(ev)
    if not tools:
        return "with nothing changed in the log"
    logged = f"the tool-list change logged since the previous request ({'; '.join(tools)})"
    if ev.cache_read > _past_tools(ev):
        minimum = ev.rules.min_cacheable(ev.r.model, ev.r.sent_ms)
        bound = (f"the shared head's {ev.head:,} tokens" if ev.head is not None and ev.head >= minimum else
                 f"{ev.r.model}'s minimum of {minimum:,}" + ("" if ev.head is not None else ", the head's size not being known"))
        return (f"past {logged}: a read past {bound} shows the tools were cached as this request sent them; "
                "with nothing else changed in the log")
    return (f"with {logged} telling nothing, as it was sent before that request (its prompt does not extend that "
            "one's); with nothing else changed in the log")


def _lagging(ev: Evidence) -> str:
    """For a provider whose reads keep to the checkpoint last read (Gemini): where this read
    stands against the previous request's, the evidence that the provider's checkpoint lagged."""
    before = ev.before
    if not ev.rules.follows_reads or before is None or before.usage is None or before.model != ev.r.model:
        return ""
    last, read = before.usage.cache_read, ev.cache_read
    if last <= 0:
        return ""
    if read == 0:
        return f" (it read nothing; the previous request read {last:,})"
    if abs(read - last) <= READ_TOLERANCE * last:
        rules, left = ev.rules, ev.rules.cacheable(before.usage) - last
        if rules.read_step(ev.r.model, ev.r.read_step) > 1 and 0 <= left < rules.new_checkpoint_min:
            return (f" (it kept to the checkpoint the previous request read, {last:,}: that request left {left:,} tokens "
                    f"uncached past it, fewer than the ~{rules.new_checkpoint_min:,} after which this model's reads move up, measured)")
        return f" (it kept to the checkpoint the previous request read, {last:,})"
    if read < last:
        return f" (it fell back below the previous request's read, {last:,})"
    return f" (it moved up from the previous request's read, {last:,}, short of the previous prompt)"


def _read_later(ev: Evidence) -> Finding | None:
    """A read a later call of the lane contradicts: that call sent the same content up to past
    where this read stopped (the chain ran unbroken from this call to it, one head and request
    family, nothing logged in between), within the TTL of what this one cached, and read past that
    point what neither this call nor one between had written by then (each reported writing
    nothing, or had not begun its response: :func:`prefixbench.workloads.audit.core.read_later`).
    So it was cached before this call, as this call sent it: where this read stopped was the
    provider's miss (a server without the entry, an eviction), not a change of the head or of the
    messages before it. (A later read of what the miss itself wrote tells nothing: a change the
    agent made is written by the call that makes it, and read by the next.)"""
    later = ev.later
    if later is None or later.read <= ev.cache_read or out_of_order(ev):
        return None
    ttl = ttl_ms(ev.r)
    return Finding("provider-best-effort", "log", (
        _through(ev)
        + f"read {ev.cache_read:,} of {ev.expected:,} cached tokens; the call at line {later.line}, sent "
        f"{duration(later.ms)} later" + (f" (inside the {duration(ttl)} TTL)" if ttl != NO_TTL_MS else "")
        + f" with the same head and logged messages and nothing logged in between, read {later.read:,} tokens of that "
        "prefix, none of it written by this call or one between (each reported writing nothing or had not begun its "
        f"response), so the prefix before token {ev.cache_read:,} was cached as this call sent it: the "
        + ("relay" if ev.r.relay else "provider") + " missed "
        "(a server without the entry, an eviction), not the agent's doing"
    ))


def _stopped_at_head(ev: Evidence) -> Finding | None:
    if ev.head is None or ev.cache_read != ev.head:
        return None
    if tools := sorted({detail for kind, detail in ev.r.events if kind == "tools_change"}):
        # Tools loaded mid-session (ToolSearch, MCP): Anthropic's diagnostic calls such a fall,
        # the head kept, tools_changed (a public Claude Code 2.1.126 session).
        return Finding("tools-changed", "log", (
            f"the read stopped exactly at the head ({ev.head:,} tokens) {duration(ev.gap)} after the previous request, "
            f"and the tool list changed on the way (logged: {', '.join(tools)})"
        ))
    return Finding("messages-changed", "log", (
        f"the read stopped exactly at the head ({ev.head:,} tokens) {duration(ev.gap)} after the previous request: "
        "the conversation after it was sent differently (a transcript does not record the wire bytes)"
    ))


def out_of_order(ev: Evidence) -> bool:
    """Sent before the request it follows in the file: its prompt does not extend that one."""
    r, prev = ev.r, ev.before
    return prev is not None and r.sent_ms is not None and prev.sent_ms is not None and r.sent_ms < prev.sent_ms


#: The cause a location names, by the kind of its likely change (messages-changed otherwise).
_LOCATED_CAUSES: dict[str, str] = {"tools": "tools-changed", "lookback": "breakpoint-placement", "head": "system-changed"}

#: The cause the logged prompt snapshots decide, by the location's kind (locate.SNAPSHOT_KINDS).
_SNAPSHOT_CAUSES: dict[str, str] = {"tools-snapshot": "tools-changed", "system-snapshot": "system-changed"}


def _snapshot_changed(ev: Evidence) -> Finding | None:
    """A read that fell at or before the head's end, where the log holds the system prompt and
    tools the call went out with (Claude Code 2.1.263's ``prompt_snapshot``, or the call's own
    ``api-request`` row from 2.1.282) and they differ from the lane's previous snapshot (or the row
    the call extends): the log decides the head changed, and which part, not the
    head's size estimated from reads."""
    loc = ev.location
    if loc is None or loc.message != 0 or loc.kind not in _SNAPSHOT_CAUSES or out_of_order(ev):
        return None
    return Finding(_SNAPSHOT_CAUSES[loc.kind], "log", f"{loc.change}; {loc.where()}")


def inferred_head(ev: Evidence) -> bool:
    """A lane's first call (no previous call in its lane) whose prompt is logged without a body:
    the head it was expected to read is a size other lanes' calls read under the same inferred
    head key (:func:`~prefixbench.workloads.audit.core.head_sizes`), not its own."""
    return ev.prev is None and ev.r.body is None and ev.r.prefix is not None


def _located(ev: Evidence) -> Finding | None:
    loc = ev.location
    if loc is None or out_of_order(ev):
        return None
    if ev.cache_read == 0 and ev.r.provider == UNKNOWN.name:
        # Nothing read on a server whose cache is not modelled: it may not cache at all, so where
        # a read of 0 "ended" tells nothing of what changed.
        return None
    if loc.kind == "snapshot-same" and loc.message == 0:
        # Inside the head, yet the logged snapshots show it the same: not the head (unexplained).
        return None
    if loc.message == 0 and inferred_head(ev):
        # A lane's first call read less than a head whose size other lanes' calls read: with no
        # body and no call of its own before it, nothing shows its head was theirs (Claude Code's
        # head key is one per model, version and client, yet its system prompt differs by project),
        # let alone that it changed: not a change mid-session (unexplained, saying so).
        return None
    cause = _LOCATED_CAUSES.get(loc.kind, "system-changed" if loc.message == 0 else "messages-changed")
    return Finding(cause, "position", loc.text())


def _unexplained(ev: Evidence) -> Finding:
    return Finding("unexplained", "none", "; ".join(_why_not_known(ev)))


def _why_not_known(ev: Evidence) -> list[str]:
    """What the log does show around an unexplained miss, each a reason it cannot tell."""
    r, prev, gap = ev.r, ev.before, ev.gap
    usage = r.usage
    assert usage is not None
    why = []
    if prev is not None and out_of_order(ev):
        assert r.sent_ms is not None and prev.sent_ms is not None
        why.append(
            f"the log cannot tell: sent {duration(prev.sent_ms - r.sent_ms)} BEFORE the previous request it follows in the "
            "file, so two requests were in flight at once (a second process or a queued message); its prompt "
            f"({usage.cache_read + usage.cache_write:,} tokens) does not extend the previous one"
        )
    if ev.location is not None and ev.location.kind == "snapshot-same" and ev.location.message == 0:
        why.append(f"{ev.location.where()}, yet {ev.location.change}: the head's size, estimated from reads, is off, or "
                   "the provider kept less than was written")
    thinking = [detail for kind, detail in r.events if kind == "thinking_change"]
    if thinking:
        why.append(
            f"thinking_level_change logged {len(thinking)} time(s) since ({'; '.join(thinking[:3])}{'...' if len(thinking) > 3 else ''}) "
            "but thinking stayed on (or off), which kept the cache elsewhere in these logs"
        )
    if "user_turn" in ev.events and ev.prev is not None:
        if r.source_format == "pi":
            why.append(
                f"at a new user turn {duration(gap)} after the previous request (inside the TTL), with no model, thinking "
                "or compaction change logged; pi rebuilds its system prompt with the current time when it restarts, and "
                "restarts are not logged, so the log cannot tell"
            )
        else:
            why.append(f"at a new user turn {duration(gap)} after the previous request, with no change logged")
    if not why and ev.location is not None and ev.location.message == 0 and inferred_head(ev):
        why.append(
            f"read {ev.cache_read:,} of the {ev.expected:,} tokens other lanes' calls read under the same inferred head, "
            f"with {_alone(ev)}: no body is logged, so whether its prompt starts as theirs did (the head key is inferred; "
            "an agent's system prompt may differ by project) is not in the log, and nothing changed inside its lane"
            + (f" ({ev.location.change}, before its first call: its head may differ from theirs)"
               if ev.location.kind == "tools" and ev.location.change else "")
        )
    if not why and r.provider == UNKNOWN.name:
        why.append(
            (f"{duration(gap)} after the previous request" if ev.prev is not None else _alone(ev)) + ", on a server whose cache prefixbench does not model (provider "
            "unknown): whether it caches at all, and for how long, is not in the log"
        )
    if not why and prev is None:
        why.append(
            f"read {ev.cache_read:,} of the {ev.expected:,} tokens other lanes' calls read, with {_alone(ev)}: "
            + ("no body is logged, so whether its prompt starts as theirs did is not in the log" if r.body is None
               else "nothing logged explains it")
        )
    if not why:
        why.append(f"{duration(gap)} after the previous request, inside the TTL, and nothing logged in between explains it")
    return why


#: The precedence of causes: the first rule that applies decides. ``unexplained`` always applies.
CAUSE_RULES: tuple[CauseRule, ...] = (
    CauseRule("diagnostic", "the provider's own cache diagnostic label", _diagnostic),
    CauseRule("compaction-call", "a compaction call; the main request it summarizes and its TTL; another lane's use of the head within it", _compaction_call),
    CauseRule("start-in-flight", "lane start; the model: the head's entry was still being written", _start_in_flight),
    CauseRule("start-expired", "lane start; the model: the head's entry had expired", _start_expired),
    CauseRule("start-resumed", "lane start; a resume or fork event", _start_resumed),
    CauseRule("cold-start", "lane start; nothing expected was lost", _cold_start),
    CauseRule("upstream-changed", "the upstream a gateway names for both requests, of one model", _upstream_changed),
    CauseRule("body-diff", "both request bodies: the first difference", _body_diff),
    CauseRule("compaction", "a compaction event for the request; past the TTL with the head unread, the gap (ttl-expired)",
              _compaction),
    CauseRule("resumed", "a resume or fork event, unless measured against the call it goes on from", _resumed),
    CauseRule("model-changed", "the model of both requests; past the TTL with no other lane's call keeping the head warm, the gap (ttl-expired)", _model_changed),
    CauseRule("family-changed", "the request family (effort, thinking, fast-mode speed) of both requests", _family_changed),
    CauseRule(
        "idle-past-ttl", "the gap since the previous request; the provider's TTL, unless another lane's call kept the "
        "head warm (then the later rules decide a read short of the head)", _idle_past_ttl),
    CauseRule("snapshot-changed", "the logged prompt snapshots (system prompt and tools) around a read at the head",
              _snapshot_changed),
    CauseRule("prompt-shrank", "the prompt sizes of both requests", _prompt_shrank),
    CauseRule("sent-before-ready", "the tick the previous response began; a body that sends that response back was sent after it",
              _sent_before_ready),
    CauseRule("below-minimum", "the expected read; the provider's minimum for the model", _below_minimum),
    CauseRule("beyond-lookback", "blocks since the previous request; the provider's breakpoint lookback", _beyond_lookback),
    CauseRule("breakpoints-miss", "the body's breakpoints; the byte-level model's read", _breakpoints_miss),
    CauseRule("unwritten-miss", "the call's reported writes of 0; a provider that writes at the agent's breakpoints",
              _unwritten_miss),
    CauseRule("read-later", "a later call of the lane, same head and logged messages, that read past this read within "
              "its TTL what no call since had written", _read_later),
    CauseRule("tools-logged", "a tool-list change logged since the previous request, on a provider whose cache is best-effort",
              _tools_logged),
    CauseRule("best-effort", "a provider whose cache is best-effort", _best_effort),
    CauseRule("stopped-at-head", "the reported read equals the shared head", _stopped_at_head),
    CauseRule("located", "the reported read mapped onto the logged messages (transcripts)", _located),
    CauseRule("unexplained", "nothing: what the log shows and why it cannot tell", _unexplained),
)


def find_cause(ev: Evidence) -> Finding:
    """The cause of one miss: the first rule of :data:`CAUSE_RULES` that applies."""
    assert ev.r.usage is not None
    for rule in CAUSE_RULES:
        finding = rule.test(ev)
        if finding is not None:
            return finding
    raise AssertionError("unexplained applies always")
