"""The observed specs on a recorded request log: gate an agent written in any language.

The agent records every request it sends in a test run, one chat-completions body per line
(:mod:`prefixbench.workloads.logs.chat_completions`; ``purpose: "compaction"`` marks a summary
call, ``rewrites: [...]`` the durable rewrites it declared since the previous request). The
log is replayed in order through the byte-exact reference cache, under each provider profile
asked for, and judged by the specs of :mod:`prefixbench.workloads.specs.observed` that apply:
the summary-call specs only when the log holds a summary call, the acceptance spec only
under a strict profile.

A log may hold several sessions, one after another or interleaved (an agent's test run records
every request it sends, usually over several sessions; subagents run beside their main agent).
Each conversation is judged on its own (:func:`conversations`, grouped by replay's lane): each
is replayed on a fresh provider, as if it had been recorded alone, and its requests keep their
numbers in the log.

A strict profile remembers what the model emitted to judge replayed reasoning. A log holds
requests only, so the reply to a conversation request is read from the next conversation
request that extends it (its first new message, when that is the assistant's).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.provider import SimulatedProvider, extends, lane_key
from prefixbench.simulator.render import RenderedRequest, render_request
from prefixbench.simulator.validate import PROFILES, make_validator
from prefixbench.simulator.wire import Block, Request
from prefixbench.workloads.logs.chat_completions import read_recorded
from prefixbench.workloads.logs.formats import REPLAYS
from prefixbench.workloads.logs.replay import reply_in
from prefixbench.workloads.specs.base import SpecResult, Verdict
from prefixbench.workloads.specs.observed import OBSERVED_SPECS

#: Recorded-log formats ``check --trace`` reads: those the format table replays body for body
#: (request bodies with their purpose and declared rewrites, as ``prefixbench record`` writes).
TRACE_FORMATS: tuple[str, ...] = tuple(name for name, replay in REPLAYS.items() if replay.kind == "bodies")


class TraceEntry(msgspec.Struct, frozen=True):
    """One recorded request and the durable rewrites declared before it."""

    request: Request
    rewrites: tuple[str, ...] = ()


def read_trace(
    path: Path, input_format: str = "chat-completions", torn: list[int] | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[TraceEntry]:
    """Every recorded request, in order (UserError with file:line on a bad line; a torn last
    line, when ``torn`` is given, is left out and its number appended there; ``progress`` is
    told the bytes read so far, as :func:`~prefixbench.workloads.logs.jsonlines.iter_lines` tells)."""
    if input_format not in TRACE_FORMATS:
        raise UserError(f"--input {input_format!r}: check --trace reads {', '.join(TRACE_FORMATS)}")
    # A tool result that answers no call is the agent's error, not the log's: the provider
    # refuses that request, and tool-pairs-intact names it.
    return [TraceEntry(request, rewrites) for request, rewrites in read_recorded(path, torn, progress, pairs_checked=False)]


def conversations(entries: Sequence[TraceEntry]) -> list[list[int]]:
    """The requests of each conversation in the log, by index, in order of their first request
    (``[[0, 1, ..., n - 1]]`` for one conversation).

    Requests are grouped by replay's conversation lane (:func:`~prefixbench.simulator.provider.lane_key`:
    family, tools, system and first message), so interleaved sessions each get their own. A lane
    holds several conversations when requests that share an opening do not continue each other.
    A request that continues the latest request of one of them (repeats it, then adds to it)
    joins the one it adds to furthest, else one it repeats (a retry). Otherwise:

    - a conversation request that holds no assistant message, declares no rewrite and does not
      follow a summary call opens a new conversation (another session, or a parallel subagent);
    - the request after a summary call (the restart from its summary), a summary call, and any
      request of a new lane that is no opening (one that rewrites its first message) belong to
      the conversation of the line before;
    - any other, a rewrite, joins its lane's most recent conversation, where it is judged.
    """
    groups: list[list[int]] = []
    #: Per lane: its conversations (group number, rendered latest request), most recent last.
    lanes: dict[tuple[object, ...], list[tuple[int, RenderedRequest]]] = {}
    line_group: list[int] = []
    lane_of: dict[int, tuple[object, ...]] = {}
    for index, entry in enumerate(entries):
        request = entry.request
        rendered = render_request(request)
        key = lane_key(request.envelope, rendered)
        held = lanes.get(key, [])
        after_summary = index > 0 and entries[index - 1].request.purpose == "compaction"
        opening = (
            request.purpose == "conversation" and not entry.rewrites and not after_summary
            and all(message.role != "assistant" for message in request.messages)
        )
        # The conversation it adds to furthest, then one it repeats (a retry), the most recent of
        # equals: of two sessions that opened alike, a request continues both its own latest and
        # the other's opening; of two identical ones, it repeats the first's latest.
        continued = [
            (len(latest.units) < len(rendered.units), len(latest.units), k)
            for k, (_, latest) in enumerate(held) if extends(latest, rendered)
        ]
        if continued:
            group = held[max(continued)[2]][0]
        elif opening or not line_group:
            group = len(groups)
            groups.append([])
        elif held and request.purpose == "conversation" and not after_summary:
            group = held[-1][0]
        else:
            group = line_group[-1]
        groups[group].append(index)
        line_group.append(group)
        if request.purpose == "conversation":
            # A conversation's latest request is in one lane: the one it moved to last.
            before = lanes.get(lane_of.get(group, key), [])
            before[:] = [(number, latest) for number, latest in before if number != group]
            held.append((group, rendered))
            lanes[key] = held
            lane_of[group] = key
    return groups


def inferred_reply(entries: Sequence[TraceEntry], index: int) -> tuple[Block, ...]:
    """The reply to conversation request ``index``, read from the next conversation request
    that extends it (empty when none does)."""
    for later in entries[index + 1 :]:
        if later.request.purpose == "conversation":
            return reply_in(entries[index].request, later.request)
    return ()


def replay_trace(entries: Sequence[TraceEntry], profile: str = "lenient", window: int | None = None) -> list[Observation]:
    """Send each request, in order, to a fresh provider under ``profile`` (refusing a prompt over
    ``window`` tokens, when given); one observation each."""
    if profile not in PROFILES:
        raise UserError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    # Every profile refuses tool calls and results that do not pair up; only a strict one
    # remembers what the model emitted.
    provider = SimulatedProvider(validator=make_validator(profile), window=window)
    for tick, entry in enumerate(entries):
        for kind in entry.rewrites:
            provider.note_rewrite(kind)
        observation = provider.send(entry.request, tick)
        if profile != "lenient":
            # As in a run: the validator learns what the model emitted, even after a refusal.
            reply = inferred_reply(entries, tick) if entry.request.purpose == "conversation" else ()
            provider.record_output(observation, entry.request, reply, 0)
    return provider.observations


def run_trace_specs(
    path: Path, input_format: str = "chat-completions", profiles: Sequence[str] = ("lenient",),
    windows: Sequence[int | None] = (None,), torn: list[int] | None = None,
    progress: Callable[[int], None] | None = None, phase: Callable[[str], None] | None = None,
) -> list[SpecResult]:
    """The applicable specs on the log, once per profile and window; named ``[FILE/profile]``.

    The verdicts are those a run of the same requests gets from ``check --engine`` and the
    pytest plugin: a spec the log never exercises (no summary call) is vacuous, and so is
    ``window-respected`` when no window is given (a log does not say its model's window).
    ``torn`` and ``progress``: as :func:`read_trace`'s; ``phase`` is told each replay of the
    log, before it runs (the command's progress line).
    """
    entries = read_trace(path, input_format, torn, progress)
    groups = conversations(entries)
    results = []
    for window in windows:
        for profile in profiles:
            if phase is not None:
                at = "" if window is None else f" at a {window:,}-token window"
                phase(f"judging {len(entries):,} requests under the {profile} profile{at}")
            # Each conversation on a fresh provider, as if recorded alone (so its verdicts do not
            # depend on what another left in the cache); numbered by its line in the log.
            judged = [_numbered(replay_trace([entries[i] for i in group], profile, window), group) for group in groups]
            for spec in OBSERVED_SPECS:
                if not spec.applies(profile):
                    continue
                for number, (group, observations) in enumerate(zip(groups, judged), 1):
                    if spec.name == "window-respected" and window is None:
                        verdict, figure = Verdict.VACUOUS, "the log does not say the model's context window (give --windows), so the spec proves nothing"
                    else:
                        verdict, figure = spec.judge(observations, profile, window)
                    results.append(SpecResult(spec.name, verdict, figure, profile, window, _source(path.name, number, group, len(groups))))
    return results


def _numbered(observations: list[Observation], group: list[int]) -> list[Observation]:
    """A conversation's observations numbered by their line in the whole log (``group``)."""
    if group == list(range(len(group))):
        return observations
    return [msgspec.structs.replace(o, index=group[o.index]) for o in observations]


def _source(name: str, number: int, group: list[int], count: int) -> str:
    """What a result judged: the file, or with several conversations
    ``two.jsonl lane 2 (64 requests from #64)``."""
    if count == 1:
        return name
    return f"{name} lane {number} ({len(group):,} request{'' if len(group) == 1 else 's'} from #{group[0]})"
