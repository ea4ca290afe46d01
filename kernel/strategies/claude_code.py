"""``claude-code-autocompact`` and ``claude-code-idle-compact``: Claude Code's compaction.

Auto-compact. Claude Code compacts when the conversation reaches its threshold::

    effective = window - min(output cap, 20,000)      room left for the summary's output
    threshold = effective - 13,000                    167,000 tokens on a 200k window (83.5%)

The summary call sends the conversation followed by a summary instruction, in the conversation's
own request family, so it replays the prefix the last request cached and pays only what is new
since and the instruction; the summary's output is capped at 20,000 tokens. The conversation then
restarts from one user message carrying the summary, and the rewrite is declared (``checkpoint``).

What is kept after the summary (checked against Claude Code's transcripts and npm packages, see
docs/strategies_agents.md):

* The newest API rounds, verbatim (``preserve_recent``, 1). A round is one model reply and the
  tool results or user messages after it, so a kept round never splits a call from its result.
  The summary call then sends the conversation without those rounds. Claude Code 2.1.185 logs
  these as the boundary's ``preservedSegment``; its versions up to 2.1.152 keep the summary
  alone (``preserve_recent = 0``).
* Precomputed compaction (``precompute_buffer``, 0.15). 2.1.185 makes the summary call early,
  once the context reaches ``effective - round(effective x precompute_buffer)`` (153,000 tokens
  on a 200k window), and applies it at the threshold: the summary, then the round it left out
  and every message since. ``precompute_buffer = 0`` summarizes at the threshold. The package
  falls back to 0.2 where its remote configuration gives no figure; the transcripts' first
  precomputes fire between 152,943 and 153,223 tokens, which 0.15 fits. It re-arms (2.1.185 and
  2.1.337 alike) on any later request at the point, but the one a compaction was made for and
  while one is pending, so after a compaction the next call comes once the context has grown
  back to the point; after ``precompute_failures`` (3) failed calls in a row it arms no more.
* Files re-read after the summary (``restore_files`` 5, ``restore_file_tokens`` 5,000,
  ``restore_tokens`` 50,000): the newest files the conversation read through a tool named in
  ``restore_tools`` (the call's arguments name the file), each re-added as a user message with
  the last content read, newest first, while the total stays within ``restore_tokens``. A file
  over ``restore_file_tokens`` is left out (Claude Code's re-read fails over that limit and it
  adds a one-line reference instead), as is a file a kept round read. The list restarts from
  the restored files at each compaction, as Claude Code clears its read-file state.
  ``restore_files = 0`` turns it off.
* Room left: Claude Code re-reads files within its fixed budgets whatever the window, so on a
  small one the restarted context can be over the threshold and the next request compacts again
  (a refill). ``restore_fit`` (false; prefixbench's former default) re-reads a file only while the
  summary, the kept rounds and the files before it stay under the threshold. The newest rounds
  are kept only when they fit there with the longest summary the call may write (prefixbench's
  choice, not Claude Code's).
* The thrash stop (2.1.92 to 2.1.337; not in 2.1.22): a compaction within ``thrash_turns`` (3)
  requests of the previous one in the same user turn is a rapid refill; at ``thrash_refills``
  (3) in a row Claude Code compacts no more, ends the turn with "Autocompact is thrashing" and
  sends nothing; the user's next prompt starts the count over. prefixbench's scripted turns go
  on, so the engine logs the stop as a warning, counts it (``thrash``) and compacts as the next
  turn's first compaction would, the count started over. ``thrash_refills = 0``: no stop.
* A threshold at or below the context a compaction restarts with (the summary, the kept rounds
  and the re-read files) makes every compaction followed by another at the next request,
  whatever the workload does (a small window: 2,000 tokens on seed-coding's 16k). The engine
  warns once a run then, naming the threshold (:meth:`ClaudeCodeCompact.check_restart`).

Clearing old tool results (time-based micro-compaction). When the user comes back after the
cache's lifetime (``cache_ttl_s``, 1 h: the cache Claude Code writes on subscription traffic),
the cached prefix is gone anyway, so Claude Code clears the content of every tool result but the
5 newest before the next request ("[Old tool result content cleared]"); the cleared results stay
cleared. A precomputed summary not yet applied is dropped then. (Its other micro-compaction,
deleting results through the cache-edit API without invalidating the cache, has no counterpart
in prefixbench's caches and is left out.)

Idle compaction (``claude-code-idle-compact``), as the Claude Code binaries on npm read
(``@anthropic-ai/claude-code-linux-x64`` 2.1.285, 2.1.286 and 2.1.337, the newest). After each
main-thread request Claude Code arms a timer for ``idle_fire_fraction`` (0.9) of the cache's
lifetime after the cache's last use: minute 54 on the 1 h cache. When it fires while the cache is
still warm, on a context of at least ``idle_min_tokens`` (200,000; Claude Code never goes under
100,000), and only with the 1 h cache (``cache_ttl_s = 3600``; the 5 min cache never arms it),
Claude Code compacts then, so the first request after the user returns writes the summary rather
than the whole context again. 2.1.285/2.1.286 have it behind a remote flag that is off unless
Anthropic turns it on (its figures, fraction 0.5-0.95 and at least 100,000 tokens, also come from
the flag); 2.1.337 has it on by default, behind the ``idleCompaction`` setting (true), with the
fraction fixed at 0.9 and the token floor from ``CLAUDE_CODE_IDLE_COMPACT_MIN_TOKENS``.
The engine arms the same timer: each step asks the loop to wake it ``idle_fire_fraction`` of the
1 h cache's life after the step's request (``ctx.wake_at``), and when that falls inside an idle
gap it compacts there (:meth:`ClaudeCodeCompact.on_wake`), the summary call priced at minute 54
against the warm cache; the user's return then sends the compacted context. It summarizes at
once and keeps the same rounds and files as auto-compact. Driven by a caller that takes no wake
asks, it compacts at the return instead, once the gap reaches the same fraction. It cannot see
the run's cache, only ``cache_ttl_s`` (the reports note a run whose cache differs:
:func:`ttl_note`), and it warns once a run where idle compaction cannot fire
(:meth:`ClaudeCodeCompact.check_idle`: ``idle_min_tokens`` at or over the window, or not the 1 h cache),
at the run's first idle gap (:data:`IDLE_GAP_MS`): a workload without one gets no warning.

Compaction after the cache expired (``after_expiry``, false; 2.1.337 only, ``release``). 2.1.337
also installs a precomputed summary (the one auto-compact made early, above) at the first prompt
of a user turn once the cache has expired, before the context reaches the threshold: the context
has to be written again anyway, and the summary is shorter. No summary call is made then. It runs
only in an attended session with no in-process host to compact (the interactive CLI has one: there
the minute-54 timer compacts in place and this install never happens; without one the timer only
writes an idle summary, installed at the next prompt, which this install leaves alone), with the
1 h cache, idle compaction on and a context of ``idle_min_tokens``; Claude Code keeps it behind a
remote flag that is off by default, hence the setting's default. The engine compacts in place at
minute 54 as the CLI does and drops the precomputed summary then, so with the setting on a run
differs from the same run with it off only where that compaction did not land at a return after
the cache expired: its summary call failed, the context was under ``idle_min_tokens`` at minute
54 and the user's new prompt brings it there, or the caller takes no wake asks. Here it comes
before the idle compaction and the clearing of old results on such a return.

Idle time is read from the run's logical clock (``ctx.now_ms()``): the timer from the time a
step's request is sent; the clearing of old results and ``after_expiry`` from the time since the
previous step began, which is the idle gap plus one step's model and tool latency (seconds).

Settings (``--engine-config``, table ``[claude-code-autocompact]``): ``threshold_tokens``
(default: the formula above), ``summary_max_tokens`` (20,000), ``preserve_recent`` (1),
``precompute_buffer`` (0.15, under 1), ``precompute_failures`` (3), ``restore_files`` (5),
``restore_file_tokens`` (5,000), ``restore_tokens`` (50,000), ``restore_tools`` (``["read_file",
"Read"]``), ``restore_fit`` (false), ``thrash_refills`` (3), ``thrash_turns`` (3),
``microcompact`` (true), ``microcompact_keep`` (5), ``cache_ttl_s`` (3,600), ``idle_compact``
(false; true for ``claude-code-idle-compact``), ``idle_fire_fraction`` (0.9, 0.5 to 0.95),
``idle_min_tokens`` (200,000), ``after_expiry`` (false), ``release`` (``"2.1.337"`` or
``"2.1.286"``, which has no ``after_expiry``). Claude Code before 2.1.185 as logged: ``preserve_recent = 0`` and
``precompute_buffer = 0``; 2.1.22, with no thrash stop: also ``thrash_refills = 0``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from prefixbench.kernel import EngineBase, EngineOptions, Message, Session, StepContext, Text, user_text, warn

from prefixbench.kernel.strategies.history import clear_result
from prefixbench.kernel.strategies.settings import TtlSetting, read_settings, spelled, ttl_note_text
from prefixbench.kernel.strategies.sliding_window import output_cap

#: Claude Code reserves at most this much of the window for the summary's output.
SUMMARY_OUTPUT_TOKENS = 20_000
#: And compacts this many tokens before the rest of the window is used up.
AUTOCOMPACT_BUFFER_TOKENS = 13_000
#: The placeholder a cleared tool result carries (the text Claude Code writes).
CLEARED = "[Old tool result content cleared]"
INSTRUCTION = user_text(
    "Your context is nearly full. Write a detailed summary of the conversation so far for the "
    "next part of this session: the user's requests, the decisions and their reasons, the files "
    "and commands with their results, the errors and how they were fixed, and the task in "
    "progress with its next step. Answer with the summary only, as text; call no tool."
)
#: How the summary opens the continued conversation.
CONTINUED = "This session continues an earlier conversation that ran out of context. Its summary:\n\n"
#: How a file re-read after the summary is introduced.
RESTORED = "A file read earlier in this session, as it reads now:\n\n"

DEFAULTS: dict[str, object] = {
    "threshold_tokens": None,
    "summary_max_tokens": SUMMARY_OUTPUT_TOKENS,
    "preserve_recent": 1,
    "precompute_buffer": 0.15,
    "precompute_failures": 3,
    "restore_files": 5,
    "restore_file_tokens": 5_000,
    "restore_tokens": 50_000,
    "restore_tools": ["read_file", "Read"],
    "restore_fit": False,
    "thrash_refills": 3,
    "thrash_turns": 3,
    "microcompact": True,
    "microcompact_keep": 5,
    "cache_ttl_s": 3_600,
    "idle_compact": False,
    "idle_fire_fraction": 0.9,
    "idle_min_tokens": 200_000,
    "after_expiry": False,
    "release": "2.1.337",
}
#: Settings earlier prefixbench releases had, and what replaced them (named in the error).
_REPLACED = {
    "idle_after_s": "use idle_fire_fraction, the share of cache_ttl_s after which the idle "
                    "compaction fires (0.9: 3,240 s of the 1 h cache, as Claude Code's binaries do)",
}
#: The releases whose idle compaction the engine follows (the module docstring).
RELEASES = ("2.1.286", "2.1.337")
#: Claude Code's idle compaction and its compaction after the cache expired run with the 1 h
#: cache only (its check reads the TTL of the main thread's last request).
ONE_HOUR_S = 3_600
#: The time between two steps that makes an idle gap for :meth:`ClaudeCodeCompact.check_idle`:
#: 5 minutes, the shortest lifetime a provider's cache gives by default (Anthropic's), past any
#: step's model and tool latency; workloads whose user never steps away (seed-coding,
#: thinking-tools) have none.
IDLE_GAP_MS = 300_000
#: The range 2.1.286 clamps its remote ``fireAtFraction`` to (2.1.337 fixes it at 0.9).
FIRE_FRACTION = (0.5, 0.95)


def autocompact_threshold(window: int, cap: int) -> int:
    """Claude Code's auto-compact threshold for a window and the route's output cap."""
    effective = window - min(cap, SUMMARY_OUTPUT_TOKENS)
    return max(0, effective - AUTOCOMPACT_BUFFER_TOKENS)


def precompute_point(window: int, cap: int, buffer: float, threshold: int) -> int:
    """Where 2.1.185 starts its summary early: ``buffer`` of the effective window before its
    end, never later than ``threshold``."""
    effective = window - min(cap, SUMMARY_OUTPUT_TOKENS)
    return min(effective - round(effective * buffer), threshold)


def round_starts(messages: tuple[Message, ...]) -> list[int]:
    """Indexes of the model replies: each opens an API round (its tool results, or the user's
    next message, follow it up to the next reply)."""
    return [index for index, message in enumerate(messages) if message.role == "assistant"]


def kept_start(view: tuple[Message, ...], rounds: int) -> int:
    """Where the newest ``rounds`` API rounds of ``view`` begin (``len(view)``: none kept). At
    least one round is left to summarize, or nothing is kept."""
    starts = round_starts(view)
    if rounds <= 0 or len(starts) < 2:
        return len(view)
    return starts[-min(rounds, len(starts) - 1)]


#: The kinds of the warnings :meth:`ClaudeCodeCompact.thrashed` and
#: :meth:`ClaudeCodeCompact.check_restart` log (their text up to the details, as
#: :func:`prefixbench.workloads.runs.schema.warning_kind` reads it; the bracket, kept whole with its
#: numbers, names the settings the run had), and how the sweep, bench and check notes describe
#: them (:func:`warning_note`).
THRASH_KIND = "autocompact is thrashing"
LOW_THRESHOLD_KIND = "the threshold is below the restarted context"
_THRASH = re.compile(re.escape(THRASH_KIND) + r" \[threshold ([\d,]+) tokens, within (\d+) requests, (\d+) in a row\]")
_LOW = re.compile(re.escape(LOW_THRESHOLD_KIND) + r" \[threshold ([\d,]+) tokens\]")


def warning_note(kind: str, times: str) -> tuple[str, str] | None:
    """``(what the engine did, what happened instead)`` for a warning kind of this engine's logged
    ``times`` (``19 times``), the settings of its bracket filled in; None for another kind."""
    found = _THRASH.fullmatch(kind)
    if found:
        threshold, turns, limit = found.groups()
        return (f"stopped auto-compacting {times} (Claude Code's thrash stop: the context refilled to the threshold, "
                f"{threshold} tokens, within {turns} requests of the previous compaction, {limit} times in a row)",
                "the engine compacted anyway, as the user's next turn would")
    idle = idle_note(kind, times)
    if idle is not None:
        return idle
    found = _LOW.fullmatch(kind)
    if found:
        return (f"had its threshold ({found.group(1)} tokens) at or below the context a compaction restarts with "
                "(the summary, the kept rounds and the re-read files)",
                "the request after such a compaction compacts again: the window is too small for Claude Code's "
                "threshold and re-read budgets, and its compactions and thrash stops there say little about the workload")
    return None


#: The kind of the warning :meth:`ClaudeCodeCompact.check_idle` logs when idle compaction cannot
#: fire on the run's settings (the bracket names why).
IDLE_OFF_KIND = "idle compaction cannot fire"
_IDLE_OFF = re.compile(re.escape(IDLE_OFF_KIND) + r" \[(.*)\]")


def idle_note(kind: str, times: str) -> tuple[str, str] | None:
    """:func:`warning_note` for :data:`IDLE_OFF_KIND`."""
    found = _IDLE_OFF.fullmatch(kind)
    if found is None:
        return None
    return (f"could not idle-compact ({found.group(1)})",
            "it ran as claude-code-autocompact would, so its figures say nothing of idle compaction")


def ttl_setting(engine: str, settings: Mapping[str, object], run_ttl_ms: int | None,
                window: int | None = None) -> TtlSetting | None:
    """The ``cache_ttl_s`` ``engine`` went by (its ``--engine-config`` table ``settings``, values
    as given or as text) when it is not the lifetime the run's cache gives its requests
    (``run_ttl_ms``; None: entries never expire) and something the engine does goes by it: the
    clearing of old tool results (``microcompact``, on by default, in both Claude Code engines),
    idle compaction where it is on and could fire in a ``window`` (not when ``idle_min_tokens`` is
    at or over it: the engine warns of that instead); else None."""
    if engine not in (ClaudeCodeCompact.name, "claude-code-idle-compact") or run_ttl_ms is None:
        return None
    try:
        setting = int(str(settings.get("cache_ttl_s", DEFAULTS["cache_ttl_s"])).strip())
        floor = int(str(settings.get("idle_min_tokens", DEFAULTS["idle_min_tokens"])).strip())
        fraction = float(str(settings.get("idle_fire_fraction", DEFAULTS["idle_fire_fraction"])).strip())
    except ValueError:
        return None
    if setting * 1000 == run_ttl_ms:
        return None
    idle = (str(settings.get("idle_compact", engine == "claude-code-idle-compact")).strip().lower() == "true"
            and not (window is not None and floor >= window))  # (cannot fire at all there: check_idle's warning says so)
    clears = str(settings.get("microcompact", DEFAULTS["microcompact"])).strip().lower() == "true"
    if not (idle or clears):
        return None
    # The clearing differs from one set to the run's lifetime in a gap of the shorter of the two;
    # idle compaction at its fraction of the 1 h cache (the only one it arms with).
    acts = [min(setting * 1000, run_ttl_ms)] if clears else []
    if idle:
        acts.append(round(ONE_HOUR_S * 1000 * fraction))
        does = "idle-compacts and clears old tool results" if clears else "idle-compacts"
        models = "idle compaction"
    else:
        does, models = "clears old tool results", "the clearing of old tool results"
    return TtlSetting("cache_ttl_s", setting, does, models, min(acts))


def ttl_note(engine: str, settings: Mapping[str, object], run_ttl_ms: int | None, cache: str,
             window: int | None = None) -> str | None:
    """A note when :func:`ttl_setting` finds the engine went by a ``cache_ttl_s`` other than the
    run's cache ``cache`` gives (the engine cannot see the run's cache, and its idle compaction
    and clearing of old results go by the setting alone)."""
    found = ttl_setting(engine, settings, run_ttl_ms, window)
    if found is None or run_ttl_ms is None:
        return None
    return ttl_note_text(engine, found, run_ttl_ms, cache)


class ClaudeCodeCompact(EngineBase):
    """Auto-compact near the window's end (the summary, the newest rounds and re-read files),
    micro-compaction after the cache expired, and (when ``idle_compact``) a compaction after a
    long idle gap on a large context (with ``after_expiry``, the precomputed summary installed
    once the cache expired)."""

    name = "claude-code-autocompact"

    def __init__(self, window: int, settings: dict[str, object]) -> None:
        if settings["idle_compact"]:
            self.name = "claude-code-idle-compact"  # before the checks: their errors name the engine built
        if not float(settings["precompute_buffer"]) < 1:  # type: ignore[arg-type]
            raise ValueError(f"{self.name}: precompute_buffer must be under 1, got {settings['precompute_buffer']!r}")
        fraction = float(settings["idle_fire_fraction"])  # type: ignore[arg-type]
        if not FIRE_FRACTION[0] <= fraction <= FIRE_FRACTION[1]:
            raise ValueError(f"{self.name}: idle_fire_fraction must be a number between {FIRE_FRACTION[0]} and "
                             f"{FIRE_FRACTION[1]}, got {fraction!r}")
        if settings["release"] not in RELEASES:
            raise ValueError(f"{self.name}: release must be one of {', '.join(RELEASES)}, got {settings['release']!r}")
        if settings["after_expiry"] and settings["release"] != "2.1.337":
            raise ValueError(f"{self.name}: after_expiry needs release 2.1.337 (2.1.286 has no compaction after the cache expired)")
        if settings["after_expiry"] and not settings["idle_compact"]:
            raise ValueError(f"{self.name}: after_expiry needs idle_compact (Claude Code checks its idleCompaction setting for both)")
        self.window = window
        self.settings = settings
        #: What the view opens with after a compaction: the summary, the kept rounds and the
        #: re-read files (empty before the first compaction).
        self.head: tuple[Message, ...] = ()
        #: Session messages before this index are replaced by ``head``.
        self.cut = 0
        #: Call ids whose results micro-compaction cleared.
        self.cleared: frozenset[str] = frozenset()
        #: The logical time the previous step began (None before the first step).
        self.last_ms: int | None = None
        #: When the last conversation request was sent, as the idle timer reads it (None before
        #: one was armed), and whether the context takes wake asks (``ctx.wake_at``): without
        #: them the idle compaction runs at the return instead.
        self.sent_ms: int | None = None
        self.wakes = False
        #: A precomputed compaction not yet applied: (summary message, the rounds it left out,
        #: the session's length when it was made).
        self.pending: tuple[Message, tuple[Message, ...], int] | None = None
        #: Files read since the last compaction (or re-read by it): (tool, arguments) -> the
        #: content last read, in reading order.
        self.files: dict[tuple[str, str], str] = {}
        #: Session messages before this index were scanned for file reads.
        self.scanned = 0
        #: The read calls of those messages: call id -> (tool, arguments).
        self.calls: dict[str, tuple[str, str]] = {}
        #: Session messages before this index had their read calls noted in ``calls``.
        self.called = 0
        #: How many compactions of each kind landed (``auto``, ``idle``, ``expiry``: a precomputed
        #: summary installed after the cache expired, ``microcompact``), and how many applied a
        #: precomputed summary (``precomputed``).
        self.counts: dict[str, int] = {"auto": 0, "idle": 0, "expiry": 0, "microcompact": 0, "precomputed": 0, "thrash": 0}
        #: Requests since the last auto-compaction of the current user turn (None: none this
        #: turn), and how many rapid refills in a row led to it (Claude Code's compact tracking).
        self.since: int | None = None
        self.refills = 0
        #: Precomputed summary calls that failed in a row (a success starts the count over).
        self.precompute_failed = 0
        #: Whether :meth:`check_restart` warned (once a run), and whether :meth:`check_idle` looked.
        self.low_warned = False
        self.idle_checked = False

    @property
    def summary(self) -> Message | None:
        """The latest summary message (None before the first compaction)."""
        return self.head[0] if self.head else None

    def view(self, session: Session) -> tuple[Message, ...]:
        """The head (summary, kept rounds, re-read files), then the messages since, with
        micro-compacted results cleared."""
        tail = session.derive_messages()[self.cut :]
        head = self.head
        if self.cleared:
            head = tuple(clear_result(m, self.cleared, CLEARED) if m.role == "tool" else m for m in head)
            tail = tuple(clear_result(m, self.cleared, CLEARED) if m.role == "tool" else m for m in tail)
        return (*head, *tail)

    def threshold(self, ctx: StepContext) -> int:
        """The auto-compact threshold (the setting, else Claude Code's formula)."""
        given = self.settings["threshold_tokens"]
        return int(given) if given is not None else autocompact_threshold(self.window, output_cap(ctx))

    def before_step(self, ctx: StepContext) -> None:
        """Compact if needed (:meth:`prepare`), then arm the idle timer for the request this step
        sends (:meth:`arm`)."""
        if self.last_ms is not None and ctx.now_ms() - self.last_ms >= IDLE_GAP_MS:
            self.check_idle(ctx)  # the run's first idle gap: the workload has them
        self.prepare(ctx)
        self.arm(ctx)

    def check_idle(self, ctx: StepContext) -> None:
        """Warn, once a run, when idle compaction is on but cannot fire: ``idle_min_tokens`` at or
        over the window (the context never gets there), or ``cache_ttl_s`` not the 1 h cache
        (Claude Code arms its timer with that cache only). Called at the run's first idle gap
        (:data:`IDLE_GAP_MS` or more between two steps): a workload whose user never steps away
        could not idle-compact on any settings, so it gets no warning."""
        settings = self.settings
        if self.idle_checked or not settings["idle_compact"]:
            return
        self.idle_checked = True
        floor, ttl = int(settings["idle_min_tokens"]), int(settings["cache_ttl_s"])  # type: ignore[call-overload]
        if ttl != ONE_HOUR_S:
            why = f"cache_ttl_s {ttl:,}, not the 1 h cache"
        elif floor >= self.window:
            why = f"idle_min_tokens {floor:,} at or over the run's window"  # (the runs' labels name it: one note an engine)
        else:
            return
        warn(ctx.session, f"{self.name}: {IDLE_OFF_KIND} [{why}]: the run compacts as claude-code-autocompact would")

    def arm(self, ctx: StepContext) -> None:
        """With ``idle_compact`` on the 1 h cache: ask to be woken ``idle_fire_fraction`` of the
        cache's lifetime after this step's request, which the loop sends now (Claude Code arms its
        timer after each main request; each ask replaces the last)."""
        settings = self.settings
        if not settings["idle_compact"] or int(settings["cache_ttl_s"]) != ONE_HOUR_S:  # type: ignore[call-overload]
            return
        self.sent_ms = ctx.now_ms()
        fire_ms = round(ONE_HOUR_S * 1000 * float(settings["idle_fire_fraction"]))  # type: ignore[arg-type]
        self.wakes = ctx.wake_at(self.sent_ms + fire_ms)

    def on_wake(self, ctx: StepContext) -> None:
        """The idle timer fired inside the gap (minute 54 of the 1 h cache): compact now, while the
        cache the last request wrote is warm, when the context is at least ``idle_min_tokens``;
        the user's return then sends the compacted context."""
        if self.sent_ms is None or ctx.now_ms() - self.sent_ms >= ONE_HOUR_S * 1000:
            return  # the cache has expired (Claude Code: "lapsed")
        self.scan(ctx)
        if ctx.usage_tokens(self.view(ctx.session)) >= int(self.settings["idle_min_tokens"]):  # type: ignore[call-overload]
            self.compact(ctx, "idle")

    def prepare(self, ctx: StepContext) -> None:
        """After a long gap: a precomputed summary installed (``after_expiry``), idle compaction
        (at the return, only where the context could not wake the engine) or micro-compaction;
        then a precomputed summary once the context nears the threshold, and auto-compact at it."""
        now = ctx.now_ms()
        idle_ms = 0 if self.last_ms is None else now - self.last_ms
        self.last_ms = now
        self.scan(ctx)
        turn_start = self.count_turns(ctx)
        tokens = ctx.usage_tokens(self.view(ctx.session))
        settings = self.settings
        ttl_ms = int(settings["cache_ttl_s"]) * 1000  # type: ignore[call-overload]
        large = int(settings["cache_ttl_s"]) == ONE_HOUR_S and tokens >= int(settings["idle_min_tokens"])  # type: ignore[call-overload]
        if (settings["after_expiry"] and large and turn_start and idle_ms >= ttl_ms
                and tokens < self.threshold(ctx) and self.apply_pending(ctx, "expiry")):
            return
        if (settings["idle_compact"] and not self.wakes and large
                and idle_ms >= ttl_ms * float(settings["idle_fire_fraction"])):  # type: ignore[arg-type]
            if self.compact(ctx, "idle"):
                return
        if settings["microcompact"] and idle_ms >= ttl_ms:
            if self.microcompact(ctx):
                self.pending = None
                tokens = ctx.usage_tokens(self.view(ctx.session))
        threshold = self.threshold(ctx)
        if tokens >= threshold:
            refills = self.refill()
            if self.apply_pending(ctx) or self.compact(ctx, "auto"):
                if refills is None:
                    self.thrashed(ctx, tokens)
                self.since, self.refills = 0, refills or 0
        elif self.pending is None and float(settings["precompute_buffer"]) > 0 and self.may_precompute():  # type: ignore[arg-type]
            point = precompute_point(self.window, output_cap(ctx), float(settings["precompute_buffer"]), threshold)  # type: ignore[arg-type]
            if tokens >= point:
                self.precompute(ctx)

    def may_precompute(self) -> bool:
        """False once ``precompute_failures`` precomputed summary calls failed in a row (0: no
        limit): Claude Code stops re-arming its precompute then."""
        limit = int(self.settings["precompute_failures"])
        return limit <= 0 or self.precompute_failed < limit

    def count_turns(self, ctx: StepContext) -> bool:
        """A user message last starts a new turn, with no compaction counted yet; any other step
        is one request more since the last compaction. True at a turn's first request."""
        messages = ctx.messages()
        if messages and messages[-1].role == "user" and not messages[-1].tool_results:
            self.since, self.refills = None, 0
            return True
        if self.since is not None:
            self.since += 1
        return False

    def refill(self) -> int | None:
        """The rapid refills in a row a compaction now would make: one more than the last one's
        when it comes within ``thrash_turns`` requests of it in the same turn, else 0; None at
        ``thrash_refills``, where Claude Code stops (it ends the turn with an error and sends
        nothing). Here that compaction goes ahead as the first of the next turn would, the count
        started over; the stop is counted and logged once it has landed (:meth:`thrashed`)."""
        turns, limit = int(self.settings["thrash_turns"]), int(self.settings["thrash_refills"])
        refills = self.refills + 1 if self.since is not None and self.since < turns else 0
        return refills if limit <= 0 or refills < limit else None

    def thrashed(self, ctx: StepContext, tokens: int) -> None:
        """Count and log the stop Claude Code would have made at a compaction that landed."""
        turns, limit = int(self.settings["thrash_turns"]), int(self.settings["thrash_refills"])
        self.counts["thrash"] += 1
        warn(ctx.session, f"{self.name}: {THRASH_KIND} [threshold {self.threshold(ctx):,} tokens, within {turns} requests, "
                          f"{limit} in a row]: the context ({tokens:,} tokens) refilled to the threshold within {turns} "
                          f"requests of the previous compaction {limit} times in a row; Claude Code ends the turn here "
                          "with an error, the engine compacts as its next turn would")

    def check_restart(self, ctx: StepContext) -> None:
        """Warn, once a run, when the context a compaction restarted with (the head: the summary,
        the kept rounds, the re-read files) is at or over the threshold: the next request compacts
        again whatever the workload does (a window too small for the fixed re-read budgets, or a
        threshold of 0). A share of the window would be a guess; this is the point past which a
        compaction cannot bring the context under the threshold."""
        if self.low_warned:
            return
        threshold, tokens = self.threshold(ctx), ctx.usage_tokens(self.head)
        if tokens >= threshold:
            self.low_warned = True
            warn(ctx.session, f"{self.name}: {LOW_THRESHOLD_KIND} [threshold {threshold:,} tokens]: compaction "
                              f"{sum(self.counts[k] for k in ('auto', 'idle', 'expiry')) + 1} restarted the context at {tokens:,} "
                              f"tokens (window {self.window:,}), so the next request compacts again")

    def scan(self, ctx: StepContext) -> None:
        """Note the files the messages since the last scan read (the last read of a file wins)."""
        messages = ctx.messages()
        tools = set(self.settings["restore_tools"])  # type: ignore[call-overload]
        calls = self.calls  # kept across steps: the session's messages are only appended to
        for message in messages[self.called :]:
            for call in message.tool_calls:
                if call.name in tools:
                    calls[call.call_id] = (call.name, call.arguments)
        self.called = len(messages)
        for message in messages[self.scanned :]:
            for result in message.tool_results:
                if result.call_id in calls and not result.is_error:
                    text = "".join(block.text for block in result.content)
                    self.files.pop(calls[result.call_id], None)
                    self.files[calls[result.call_id]] = text
        self.scanned = len(messages)

    def microcompact(self, ctx: StepContext) -> bool:
        """Clear every tool result of the view but the newest ``microcompact_keep``; False when
        there was nothing new to clear."""
        live = self.view(ctx.session)
        ids = [r.call_id for m in live for r in m.tool_results]
        keep = int(self.settings["microcompact_keep"])
        older = frozenset(ids[: max(0, len(ids) - keep)])
        if older <= self.cleared:
            return False
        self.cleared = self.cleared | older
        self.counts["microcompact"] += 1
        ctx.declare_rewrite("microcompact", cleared=len(older))
        return True

    def summary_cap(self, ctx: StepContext) -> int:
        """The most output tokens the summary call may write."""
        cap = min(int(self.settings["summary_max_tokens"]), output_cap(ctx) or int(self.settings["summary_max_tokens"]))
        return max(1, cap)

    def summarize(self, ctx: StepContext, view: tuple[Message, ...]) -> Message | None:
        """The summary message of ``view`` through a call that replays it (None when it failed)."""
        reply = ctx.client(ctx.summary_request([*view, INSTRUCTION], max_tokens=self.summary_cap(ctx)))
        text = reply.text().strip()
        if reply.error is not None or not text:
            return None
        return Message("user", (Text(CONTINUED + text),))

    def precompute(self, ctx: StepContext) -> None:
        """Summarize now all but the newest ``preserve_recent`` rounds; applied at the threshold."""
        view = self.view(ctx.session)
        start = kept_start(view, int(self.settings["preserve_recent"]))
        if start == len(view):
            return
        summary = self.summarize(ctx, view[:start])
        if summary is None:
            self.precompute_failed += 1
            return
        self.precompute_failed = 0
        self.pending = (summary, view[start:], len(ctx.messages()))

    def apply_pending(self, ctx: StepContext, why: str = "auto") -> bool:
        """Restart from the precomputed summary, the rounds it left out and every message since
        (``why``: ``auto`` at the threshold, ``expiry`` after the cache expired)."""
        if self.pending is None:
            return False
        summary, kept, made_at = self.pending
        self.pending = None
        view = self.view(ctx.session)
        new = len(ctx.messages()) - made_at  # the view ends with the session's messages since
        kept = (*kept, *view[len(view) - new :]) if new > 0 else kept
        if ctx.usage_tokens((summary, *kept)) >= self.threshold(ctx):
            return False  # what it keeps would not fit: a fresh summary instead
        self.restart(ctx, summary, kept)
        self.counts["precomputed"] += 1
        self.counts[why] += 1
        ctx.declare_rewrite("checkpoint", trigger=why, precomputed=True, preserved=len(kept))
        return True

    def compact(self, ctx: StepContext, why: str) -> bool:
        """Summarize the view but its newest rounds, now; False when the call failed."""
        view = self.view(ctx.session)
        start = kept_start(view, int(self.settings["preserve_recent"]))
        # The newest rounds with the longest summary the call may write must fit under the
        # threshold, or none is kept (the summary then covers them too).
        opening = Message("user", (Text(CONTINUED),))
        if start < len(view) and ctx.usage_tokens((opening, *view[start:])) + self.summary_cap(ctx) >= self.threshold(ctx):
            start = len(view)
        summary = self.summarize(ctx, view[:start])
        if summary is None:
            return False
        self.pending = None
        self.restart(ctx, summary, view[start:])
        self.counts[why] += 1
        ctx.declare_rewrite("checkpoint", trigger=why, preserved=len(view) - start)
        return True

    def restart(self, ctx: StepContext, summary: Message, kept: tuple[Message, ...]) -> None:
        """The view becomes the summary, ``kept`` and the re-read files; the read-file list
        restarts from those files."""
        restored = self.restore(ctx, summary, kept)
        self.head = (summary, *kept, *(message for _, message in restored))
        self.files = {key: self.files[key] for key, _ in reversed(restored)}
        self.cut = len(ctx.messages())
        self.scanned = self.cut
        self.cleared = frozenset()
        self.check_restart(ctx)

    def restore(self, ctx: StepContext, summary: Message, kept: tuple[Message, ...]) -> list[tuple[tuple[str, str], Message]]:
        """The newest files read (none a kept round read), each under ``restore_file_tokens``,
        within ``restore_tokens`` in all (and, with ``restore_fit``, within the room the summary
        and ``kept`` leave under the threshold): (file, its user message), newest first."""
        limit, budget = int(self.settings["restore_files"]), int(self.settings["restore_tokens"])
        if limit <= 0:
            return []
        threshold = self.threshold(ctx)
        tools = set(self.settings["restore_tools"])  # type: ignore[call-overload]
        in_kept = {(c.name, c.arguments) for m in kept for c in m.tool_calls if c.name in tools}
        chosen, total = [], 0
        for key in [k for k in reversed(self.files) if k not in in_kept][:limit]:
            message = user_text(RESTORED + self.files[key])
            tokens = ctx.measure([message]).nodes[0].tokens
            if tokens > int(self.settings["restore_file_tokens"]) or total + tokens > budget:
                continue
            if self.settings["restore_fit"] and ctx.usage_tokens((summary, *kept, *(m for _, m in chosen), message)) >= threshold:
                continue  # no room left for it: the restarted view would compact again at once
            total += tokens
            chosen.append((key, message))
        return chosen


def _settings(engine: str, config: dict[str, object], defaults: dict[str, object]) -> dict[str, object]:
    """The table read as :func:`read_settings` does, but ``idle_fire_fraction`` of the wrong type
    says its range, as a value out of it does."""
    fraction = config.get("idle_fire_fraction", 0.9)
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
        name = "claude-code-idle-compact" if config.get("idle_compact", defaults["idle_compact"]) is True else engine
        raise ValueError(f"{name}: idle_fire_fraction must be a number between {FIRE_FRACTION[0]} and {FIRE_FRACTION[1]}, "
                         f"got {spelled(fraction)}")
    return read_settings(engine, config, defaults, _REPLACED)


def autocompact(window: int, options: EngineOptions) -> ClaudeCodeCompact:
    """Claude Code's auto-compact and micro-compaction (settings: the module docstring)."""
    return ClaudeCodeCompact(window, _settings(ClaudeCodeCompact.name, dict(options.config), DEFAULTS))


def idle_compact(window: int, options: EngineOptions) -> ClaudeCodeCompact:
    """The same with idle compaction on (``idle_compact = true``)."""
    return ClaudeCodeCompact(window, _settings("claude-code-idle-compact", dict(options.config), {**DEFAULTS, "idle_compact": True}))
