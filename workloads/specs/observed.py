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
    strict-profile-accepts     the strict profile answers no request with 400      strict profiles
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.wire import Envelope
from prefixbench.workloads.specs.base import Verdict, first_silent_rewrite_in, hit_pct

#: Upper bound for the novel part of a warm summary call (as in seed 001's specs).
MAX_UNCACHED_SUMMARY_TOKENS = 2_000
#: Lower bound for a warm summary call's hit ratio.
MIN_SUMMARY_HIT = 0.95

Judgement = tuple[Verdict, str]


def _calls(count: int) -> str:
    return f"{count} summary call" + ("" if count == 1 else "s")


def _conversations(observations: Sequence[Observation]) -> list[Observation]:
    return [o for o in observations if o.purpose == "conversation"]


def _summaries(observations: Sequence[Observation]) -> list[Observation]:
    return [o for o in observations if o.purpose == "compaction"]


def judge_no_silent_rewrite(observations: Sequence[Observation]) -> Judgement:
    """Every break of the conversation prefix is explained by a declared durable rewrite."""
    index = first_silent_rewrite_in(observations)
    if index is not None:
        return Verdict.VIOLATED, f"request #{index} rewrote cached history with no durable rewrite"
    conversations = _conversations(observations)
    cold = [o.index for o in conversations if o.index > 0 and o.cached_tokens == 0 and not o.is_rejected]
    if cold:
        return Verdict.VIOLATED, f"request #{cold[0]} reused not even the static head"
    return Verdict.PASS, f"{len(conversations)} conversation requests, every break explained"


def judge_summary_bound(observations: Sequence[Observation]) -> Judgement:
    """No silent rewrite, and every compaction call warm: >= 95% hit, <= 2,000 uncached tokens."""
    index = first_silent_rewrite_in(observations)
    if index is not None:
        return Verdict.VIOLATED, f"request #{index} rewrote cached history silently"
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


def judge_accepts(observations: Sequence[Observation], profile: str) -> Judgement:
    """The strict profile answered no request with an error status."""
    rejected = [o for o in observations if o.is_rejected]
    if rejected:
        first = rejected[0]
        return Verdict.VIOLATED, (
            f"{len(rejected)} of {len(observations)} requests refused under {profile}; "
            f"first request #{first.index} ({first.purpose}): HTTP {first.status} {first.error}"
        )
    return Verdict.PASS, f"{len(observations)} requests under {profile}, none refused"


class ObservedSpec(msgspec.Struct, frozen=True):
    """A spec on observations: its name, what it asserts, its judge, whether a profile gates it."""

    name: str
    description: str
    judge: Callable[[Sequence[Observation], str], Judgement]
    #: Applies only under a strict provider profile.
    strict_only: bool = False

    def applies(self, profile: str) -> bool:
        """Whether the spec applies to a run under ``profile``."""
        return profile != "lenient" or not self.strict_only


OBSERVED_SPECS: tuple[ObservedSpec, ...] = (
    ObservedSpec("no-silent-rewrite", "every cache break is explained by a declared durable rewrite",
                 lambda obs, profile: judge_no_silent_rewrite(obs)),
    ObservedSpec("summary-uncached-bounded", "every summary call >= 95% hit and <= 2,000 uncached tokens",
                 lambda obs, profile: judge_summary_bound(obs)),
    ObservedSpec("summary-envelope-routed", "every summary call is sent in the routed request family",
                 lambda obs, profile: judge_summary_envelope(obs)),
    ObservedSpec("strict-profile-accepts", "the strict provider profile answers no request with 400",
                 judge_accepts, strict_only=True),
)


def get_observed_spec(name: str) -> ObservedSpec:
    """An observed spec by name (KeyError when unknown)."""
    return next(s for s in OBSERVED_SPECS if s.name == name)
