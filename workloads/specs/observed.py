"""Specs that judge only what the provider received: they apply to any engine and to recorded traffic.

Each judge reads a sequence of observations (what the simulated provider saw, in send order)
and returns a verdict with the figure that decided it, naming the request by its index.
:mod:`prefixbench.workloads.specs.engine` runs them on a user's engine driven through a
workload; :mod:`prefixbench.workloads.specs.trace` on a recorded request log.

::

    spec                       judges                                              applies
    no-silent-rewrite          every conversation request extends the previous     always
                               one unless a durable rewrite was declared, and
                               reuses at least the static head
    summary-uncached-bounded   every compaction call >= 95% hit, <= 2,000          always (vacuous
                               uncached tokens, and no silent rewrite               without a call)
    summary-envelope-routed    every compaction call is sent in the routed          always (vacuous
                               request family (provider, model, effort,             without a call)
                               temperature, stop)
    tool-pairs-intact          every request's tool calls and results pair up:     always
                               each result right after the row of its call, no
                               call left unanswered (every provider refuses it)
    strict-profile-accepts     the strict profile answers no request with 400      strict profiles
                               (a protocol refusal; the window is the next spec's)
    window-respected           no prompt over the model's context window: the      always (vacuous
                               provider refuses it with 400 "prompt is too long"    for a log with no
                               (or refused it first for another reason, and its     --windows)
                               prompt is longer than the window)
    rewrites-pay-back          every durable rewrite recovers its extra write       always (vacuous
                               before the next rewrite (break-even below)           without a rewrite)

A durable rewrite (a checkpoint, a prune, masking old tool results) breaks the cache once and
then makes every later request shorter. At the request that carries it, ``I`` tokens are sent
uncached that would otherwise have been read from the cache; each later request reads ``H``
fewer tokens (the prompt's shrink: the previous prompt plus the run's median step between
requests without a rewrite, minus this prompt). With input price ``P_in`` and cached-read price ``P_cache``
the rewrite has paid back after ``R`` requests once ``R * H * P_cache >= I * (P_in - P_cache)``:
``R >= (I/H)(P_in - P_cache)/P_cache``. A rewrite that is followed by another before that point
never paid back (the spec fails, naming it and the figures); one the session's end cuts short
is not judged (the workload ended it, not the engine).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal
from functools import lru_cache

import msgspec
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.provider import is_too_long
from prefixbench.simulator.validate import is_pairing_refusal
from prefixbench.simulator.wire import Envelope
from prefixbench.workloads.specs.base import Verdict, first_silent_rewrite_in, hit_pct

#: Upper bound for the novel part of a warm summary call (as in seed 001's specs).
MAX_UNCACHED_SUMMARY_TOKENS = 2_000
#: Lower bound for a warm summary call's hit ratio.
MIN_SUMMARY_HIT = 0.95

Judgement = tuple[Verdict, str]


def _calls(count: int) -> str:
    return f"{count:,} summary call" + ("" if count == 1 else "s")


def _conversations(observations: Sequence[Observation]) -> list[Observation]:
    return [o for o in observations if o.purpose == "conversation"]


def _summaries(observations: Sequence[Observation]) -> list[Observation]:
    return [o for o in observations if o.purpose == "compaction"]


def _refused(observations: Sequence[Observation]) -> str:
    """``; judged on the 12 of 64 requests the provider accepted (52 refused, never cached)``:
    what a spec that reads the cache could not see ("" when nothing was refused)."""
    refused = sum(1 for o in observations if o.is_rejected)
    if not refused:
        return ""
    return f"; judged on the {len(observations) - refused:,} of {len(observations):,} requests the provider accepted ({refused:,} refused, never cached)"


def _where_rewritten(observations: Sequence[Observation], index: int) -> str:
    """`` (diverged at message 0 @ byte 362: 19,227 tokens uncached from there)``: where the
    silent rewrite of request ``index`` first departed from what the cache held, and what the
    request paid from that byte on ("" when the observation does not say)."""
    found = next((o for o in observations if o.index == index), None)
    if found is None or found.divergence is None:
        return ""
    return f" (diverged at {found.divergence.describe()}: {found.uncached_tokens:,} tokens uncached from there)"


def judge_no_silent_rewrite(observations: Sequence[Observation]) -> Judgement:
    """Every break of the conversation prefix is explained by a declared durable rewrite."""
    index = first_silent_rewrite_in(observations)
    if index is not None:
        return Verdict.VIOLATED, (
            f"request #{index} rewrote cached history with no durable rewrite{_where_rewritten(observations, index)}"
        )
    conversations = _conversations(observations)
    # The first request judged (0 in a run; a later session's first in a log of several) opens
    # the conversation: it has no head of its own to reuse yet.
    start = observations[0].index if observations else 0
    cold = [o.index for o in conversations if o.index > start and o.cached_tokens == 0 and not o.is_rejected]
    if cold:
        return Verdict.VIOLATED, f"request #{cold[0]} reused not even the static head"
    accepted = [o for o in conversations if not o.is_rejected]
    if len(accepted) < 2 and len(conversations) >= 2:
        refused = sum(1 for o in observations if o.is_rejected)
        return Verdict.VACUOUS, (
            f"{refused:,} of {len(observations):,} requests refused (never cached): {len(accepted):,} accepted conversation "
            f"request{'' if len(accepted) == 1 else 's'}, no break to judge, so the spec proves nothing"
        )
    return Verdict.PASS, f"{len(conversations):,} conversation requests, every break explained{_refused(observations)}"


def judge_summary_bound(observations: Sequence[Observation]) -> Judgement:
    """No silent rewrite, and every compaction call warm: >= 95% hit, <= 2,000 uncached tokens."""
    index = first_silent_rewrite_in(observations)
    if index is not None:
        return Verdict.VIOLATED, f"request #{index} rewrote cached history silently{_where_rewritten(observations, index)}"
    summaries = _summaries(observations)
    if not summaries:
        return Verdict.VACUOUS, "no summary call, so the spec proves nothing"
    for number, summary in enumerate(summaries, 1):
        if summary.is_rejected:
            return Verdict.VIOLATED, f"summary {number}/{len(summaries)} (request #{summary.index}) refused: HTTP {summary.status}"
        if summary.hit_ratio < MIN_SUMMARY_HIT or summary.uncached_tokens > MAX_UNCACHED_SUMMARY_TOKENS:
            where = summary.divergence.describe() if summary.divergence else "-"
            return Verdict.VIOLATED, (
                f"summary {number}/{len(summaries)} (request #{summary.index}) hit {hit_pct(summary.hit_ratio)}, "
                f"{summary.uncached_tokens:,} uncached tokens (diverged at {where})"
            )
    ratios = [s.hit_ratio for s in summaries]
    worst = max(s.uncached_tokens for s in summaries)
    return Verdict.PASS, f"{_calls(len(summaries))}, min hit {hit_pct(min(ratios))}, max {worst:,} uncached tokens"


def envelope_difference(sent: Envelope, routed: Envelope) -> str | None:
    """How a sent envelope differs from the routed one (None when it is the same family)."""
    if (sent.provider, sent.model) != (routed.provider, routed.model):
        return f"sent to {sent.provider}/{sent.model}, routed {routed.provider}/{routed.model}"
    if sent.reasoning_effort != routed.reasoning_effort:
        return f"sent effort {sent.reasoning_effort!r}, routed {routed.reasoning_effort!r}"
    if sent.temperature != routed.temperature:
        return f"sent temperature {sent.temperature!r}, routed {routed.temperature!r}"
    if sent.stop != routed.stop:
        return f"sent stop {list(sent.stop or ())!r}, routed {list(routed.stop or ())!r}"
    return None


def judge_summary_envelope(observations: Sequence[Observation]) -> Judgement:
    """Every compaction call carries the envelope of the conversation request it follows."""
    summaries = _summaries(observations)
    if not summaries:
        return Verdict.VACUOUS, "no summary call, so the spec proves nothing"
    routed: Envelope | None = None
    conversations = _conversations(observations)
    for observation in observations:
        if observation.purpose == "conversation":
            routed = observation.envelope
            continue
        reference = routed or (conversations[0].envelope if conversations else None)
        if reference is None:
            return Verdict.VACUOUS, "no conversation request to compare the summary call with"
        difference = envelope_difference(observation.envelope, reference)
        if difference is not None:
            return Verdict.VIOLATED, f"request #{observation.index}: summary call {difference}"
    return Verdict.PASS, f"{_calls(len(summaries))} in the routed family ({summaries[0].envelope.label()})"


def judge_tool_pairs(observations: Sequence[Observation]) -> Judgement:
    """Every request's tool calls and results pair up as the wire requires (the rule of
    :func:`~prefixbench.simulator.validate.pairing_problem`): the provider, under every
    profile, refuses a request that breaks it, so a refusal with its text is the evidence."""
    broken = [o for o in observations if o.is_rejected and is_pairing_refusal(o.error)]
    if broken:
        return Verdict.VIOLATED, (
            f"{len(broken):,} of {len(observations):,} requests break the pairing of tool calls and results "
            f"(refused, as Anthropic and chat-completions endpoints refuse them); {_first_refused(broken)}"
        )
    return Verdict.PASS, f"{len(observations):,} requests, every tool call followed by its result"


def judge_accepts(observations: Sequence[Observation], profile: str) -> Judgement:
    """The strict profile answered no request with an error status (a prompt over the window
    is ``window-respected``'s to judge)."""
    rejected = [o for o in observations if o.is_rejected and not is_too_long(o.error)]
    if rejected:
        return Verdict.VIOLATED, (
            f"{len(rejected):,} of {len(observations):,} requests refused under {profile}; {_first_refused(rejected)}"
        )
    return Verdict.PASS, f"{len(observations):,} requests under {profile}, none refused"


def _first_refused(refused: Sequence[Observation]) -> str:
    """The first refused request: its number, purpose and the provider's status and text."""
    first = refused[0]
    return f"first request #{first.index} ({first.purpose}): HTTP {first.status} {first.error}"


def judge_window(observations: Sequence[Observation], window: int | None = None) -> Judgement:
    """No prompt over the context window: none refused as too long and, when the ``window`` is
    known, none refused first for another reason (a strict profile's) with a prompt longer than
    the window, which the provider would have refused for its length as well."""
    over = [
        o for o in observations
        if o.is_rejected and (is_too_long(o.error) or (window is not None and o.prompt_tokens > window))
    ]
    if over:
        first = over[0]
        if is_too_long(first.error):
            what = f"HTTP {first.status} {first.error}"
        else:
            what = f"{first.prompt_tokens:,} tokens > {window:,} maximum (refused first with HTTP {first.status} {first.error})"
        return Verdict.VIOLATED, (
            f"{len(over):,} of {len(observations):,} requests over the context window; first request #{first.index} "
            f"({first.purpose}): {what}"
        )
    largest = max((o.prompt_tokens for o in observations), default=0)
    other = sum(1 for o in observations if o.is_rejected)
    if other:
        # A request a strict profile refuses is refused before its length is checked.
        unchecked = "their length unchecked by the provider" if window is None else "each within the window"
        return Verdict.PASS, (
            f"{len(observations):,} requests, largest prompt {largest:,} tokens, none refused as over the window "
            f"({other:,} refused first for another reason, {unchecked})"
        )
    return Verdict.PASS, f"{len(observations):,} requests, largest prompt {largest:,} tokens, none over the window"


#: The cached-read price as a share of the input price for a model without a price row (the
#: scripted workloads' ``mock``): Anthropic's and most OpenAI models' 90% read discount.
DEFAULT_READ_SHARE = Decimal("0.1")


@lru_cache(maxsize=64)
def read_share(model: str) -> tuple[Decimal, str]:
    """``P_cache / P_in`` for ``model`` at its current prices, and where the figure comes from."""
    from prefixbench.simulator.errors import UserError
    from prefixbench.simulator.pricing import get_price

    try:
        row = get_price(model)
    except UserError:
        return DEFAULT_READ_SHARE, f"no price row for {model!r}: cached read at {DEFAULT_READ_SHARE}x input"
    return row.rates.cache_read / row.rates.input, f"{row.model} prices"


class Payback(msgspec.Struct, frozen=True):
    """One durable rewrite and whether it recovered its extra write.

    ``needed``: requests after it for the break-even (None: the prompt did not shrink, so it
    never can); ``served``: requests that read the rewritten prefix before the next rewrite or
    the end; ``cut_short``: the session ended first (not judged).
    """

    index: int
    kinds: tuple[str, ...]
    invalidated: int
    shrink: int
    needed: float | None
    served: int
    cut_short: bool

    @property
    def paid_back(self) -> bool:
        return self.needed is not None and self.served >= self.needed


def rewrite_paybacks(observations: Sequence[Observation], share: Decimal) -> list[Payback]:
    """Every durable rewrite of the accepted conversation requests, with its break-even.

    A rewrite is carried by the first conversation request after it (whatever request the
    engine sent in between, e.g. its summary call); one after which that request still extends
    the previous one byte for byte broke nothing and is not counted.
    """
    conversations: list[tuple[Observation, tuple[str, ...]]] = []
    pending: list[str] = []
    for o in observations:
        pending.extend(o.rewrites_since_previous)
        if o.purpose == "conversation" and not o.is_rejected:
            conversations.append((o, tuple(pending)))
            pending = []
    # A declared rewrite that left the prompt a byte extension of the previous one broke nothing.
    starts = [k for k, (o, kinds) in enumerate(conversations) if kinds and k > 0 and not o.extends_previous_conversation]
    # What a request adds to the one before when nothing is rewritten (the median step): the
    # rewrite's request would have grown by as much, so its shrink counts from there.
    steps = sorted(
        conversations[k][0].prompt_tokens - conversations[k - 1][0].prompt_tokens
        for k in range(1, len(conversations)) if not conversations[k][1]
    )
    growth = max(steps[len(steps) // 2], 0) if steps else 0
    paybacks = []
    factor = float((1 - share) / share) if share > 0 else float("inf")
    for number, k in enumerate(starts):
        o, kinds = conversations[k]
        invalidated = o.uncached_tokens
        shrink = conversations[k - 1][0].prompt_tokens + growth - o.prompt_tokens
        end = starts[number + 1] if number + 1 < len(starts) else len(conversations)
        served = end - k - 1
        needed = None if shrink <= 0 else invalidated / shrink * factor
        cut_short = number + 1 == len(starts)
        paybacks.append(Payback(o.index, kinds, invalidated, max(shrink, 0), needed, served, cut_short))
    return paybacks


def judge_rewrites_pay_back(observations: Sequence[Observation]) -> Judgement:
    """Every durable rewrite recovered its extra write before the next one (break-even above)."""
    model = next((o.envelope.model for o in observations if o.purpose == "conversation"), None)
    if model is None:
        return Verdict.VACUOUS, "no conversation request, so the spec proves nothing"
    share, source = read_share(model)
    paybacks = rewrite_paybacks(observations, share)
    if not paybacks:
        declared = sum(1 for o in observations if o.rewrites_since_previous)
        refused = sum(1 for o in observations if o.is_rejected)
        if declared and refused:
            return Verdict.VACUOUS, (
                f"{declared:,} request{'' if declared == 1 else 's'} declared a durable rewrite, but {refused:,} of {len(observations):,} requests were "
                "refused (never cached): no rewrite landed between two accepted requests, so the spec proves nothing"
            )
        return Verdict.VACUOUS, "no durable rewrite, so the spec proves nothing"
    judged = [p for p in paybacks if not (p.cut_short and not p.paid_back)]
    failed = [p for p in judged if not p.paid_back]
    if failed:
        first = failed[0]
        counts = {kind: first.kinds.count(kind) for kind in first.kinds}
        kinds = "+".join(kind if n == 1 else f"{kind} x{n}" for kind, n in counts.items())
        if first.needed is None:
            why = f"the prompt did not shrink ({first.invalidated:,} tokens re-sent uncached), so it never pays back"
        else:
            why = (f"re-sent {first.invalidated:,} tokens uncached to read {first.shrink:,} fewer per request: break-even "
                   f"after {first.needed:,.1f} requests, " + (
                "but the next rewrite came with the very next request" if not first.served else
                f"but only {first.served:,} request{' read' if first.served == 1 else 's read'} the shorter prompt before the next rewrite"))
        return Verdict.VIOLATED, (
            f"{len(failed):,} of {len(judged):,} rewrites never paid back; first at request #{first.index} ({kinds}): {why} ({source})"
            f"{_refused(observations)}"
        )
    if not judged:
        return Verdict.VACUOUS, f"{len(paybacks):,} rewrite{'' if len(paybacks) == 1 else 's'}, the session ended before the break-even of each, so the spec proves nothing"
    slowest = max(judged, key=lambda p: p.needed or 0.0)
    return Verdict.PASS, (
        f"{len(judged):,} rewrite{'' if len(judged) == 1 else 's'} paid back (slowest: break-even {slowest.needed:,.1f} requests, served {slowest.served:,})"
        + (f"; {len(paybacks) - len(judged):,} cut short by the session's end" if len(judged) < len(paybacks) else "")
        + f" ({source})"
        + _refused(observations)
    )


class ObservedSpec(msgspec.Struct, frozen=True):
    """A spec on observations: its name, what it asserts, its judge, whether a profile gates it."""

    name: str
    description: str
    #: ``judge(observations, profile, window)``; ``window`` is the context window the requests
    #: had to fit (None when not known: a log replayed without ``--windows``).
    judge: Callable[[Sequence[Observation], str, int | None], Judgement]
    #: Applies only under a strict provider profile.
    strict_only: bool = False

    def applies(self, profile: str) -> bool:
        """Whether the spec applies to a run under ``profile``."""
        return profile != "lenient" or not self.strict_only


OBSERVED_SPECS: tuple[ObservedSpec, ...] = (
    ObservedSpec("no-silent-rewrite", "every cache break is explained by a declared durable rewrite",
                 lambda obs, profile, window: judge_no_silent_rewrite(obs)),
    ObservedSpec("summary-uncached-bounded", "every summary call >= 95% hit and <= 2,000 uncached tokens",
                 lambda obs, profile, window: judge_summary_bound(obs)),
    ObservedSpec("summary-envelope-routed", "every summary call is sent in the routed request family",
                 lambda obs, profile, window: judge_summary_envelope(obs)),
    ObservedSpec("tool-pairs-intact", "every tool call is followed by its result, every result answers the call before it",
                 lambda obs, profile, window: judge_tool_pairs(obs)),
    ObservedSpec("strict-profile-accepts", "the strict provider profile answers no request with 400",
                 lambda obs, profile, window: judge_accepts(obs, profile), strict_only=True),
    ObservedSpec("window-respected", "no prompt over the context window (the provider's 400 'prompt is too long')",
                 lambda obs, profile, window: judge_window(obs, window)),
    ObservedSpec("rewrites-pay-back", "every durable rewrite recovers its extra write before the next rewrite",
                 lambda obs, profile, window: judge_rewrites_pay_back(obs)),
)


def get_observed_spec(name: str) -> ObservedSpec:
    """An observed spec by name (KeyError when unknown)."""
    return next(s for s in OBSERVED_SPECS if s.name == name)
