"""``claude-code-autocompact`` and ``claude-code-idle-compact``: Claude Code's compaction.

Auto-compact. Claude Code compacts when the conversation reaches its threshold::

    effective = window - min(output cap, 20,000)      room left for the summary's output
    threshold = effective - 13,000                    167,000 tokens on a 200k window (83.5%)

It then sends the whole conversation followed by a summary instruction, in the conversation's
own request family, so the call replays the prefix the last request cached and pays only what
is new since (the last step's reply and tool results) and the instruction; the summary's output
is capped at 20,000 tokens. The conversation then restarts from one user message carrying the
summary, and the rewrite is declared (``checkpoint``).

Clearing old tool results (time-based micro-compaction). When the user comes back after the
cache's lifetime (``cache_ttl_s``, 1 h: the cache Claude Code writes on subscription traffic),
the cached prefix is gone anyway, so Claude Code clears the content of every tool result but the
5 newest before the next request ("[Old tool result content cleared]"); the cleared results stay
cleared. (Its other micro-compaction, deleting results through the cache-edit API without
invalidating the cache, has no counterpart in prefixbench's caches and is left out.)

Idle compaction (``claude-code-idle-compact``). From about version 2.1.286, after ~55 minutes
idle on a context of 200k tokens or more with the 1 h cache, Claude Code compacts on its own,
while the cache is still warm, so the first request after the user returns writes the summary
rather than the whole context again. prefixbench's loop gives an engine control only when the
user returns, so the compaction runs then: a return before the cache expired (between 55 and
60 minutes) is the case Claude Code is built for; a later return finds the cache expired and
pays a cold summary call, which Claude Code avoids by compacting at minute 55.

Idle time is read from the run's logical clock (``ctx.now_ms()``): the time since the previous
step began, which is the idle gap plus one step's model and tool latency (seconds).

Settings (``--engine-config``, table ``[claude-code-autocompact]``): ``threshold_tokens``
(default: the formula above), ``summary_max_tokens`` (20,000), ``microcompact`` (true),
``microcompact_keep`` (5), ``cache_ttl_s`` (3,600), ``idle_compact`` (false; true for
``claude-code-idle-compact``), ``idle_after_s`` (3,300), ``idle_min_tokens`` (200,000).
"""

from __future__ import annotations

from prefixbench.kernel import EngineBase, EngineOptions, Message, Session, StepContext, Text, user_text

from prefixbench.kernel.strategies.history import clear_result
from prefixbench.kernel.strategies.settings import read_settings
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

DEFAULTS: dict[str, object] = {
    "threshold_tokens": None,
    "summary_max_tokens": SUMMARY_OUTPUT_TOKENS,
    "microcompact": True,
    "microcompact_keep": 5,
    "cache_ttl_s": 3_600,
    "idle_compact": False,
    "idle_after_s": 3_300,
    "idle_min_tokens": 200_000,
}


def autocompact_threshold(window: int, cap: int) -> int:
    """Claude Code's auto-compact threshold for a window and the route's output cap."""
    effective = window - min(cap, SUMMARY_OUTPUT_TOKENS)
    return max(0, effective - AUTOCOMPACT_BUFFER_TOKENS)


class ClaudeCodeCompact(EngineBase):
    """Auto-compact near the window's end, micro-compaction after the cache expired, and
    (when ``idle_compact``) a compaction after a long idle gap on a large context."""

    name = "claude-code-autocompact"

    def __init__(self, window: int, settings: dict[str, object]) -> None:
        self.window = window
        self.settings = settings
        if settings["idle_compact"]:
            self.name = "claude-code-idle-compact"
        #: The latest summary message (None before the first compaction).
        self.summary: Message | None = None
        #: Session messages before this index are replaced by ``summary``.
        self.cut = 0
        #: Call ids whose results micro-compaction cleared.
        self.cleared: frozenset[str] = frozenset()
        #: The logical time the previous step began (None before the first step).
        self.last_ms: int | None = None
        #: How many compactions of each kind landed (``auto``, ``idle``, ``microcompact``).
        self.counts: dict[str, int] = {"auto": 0, "idle": 0, "microcompact": 0}

    def view(self, session: Session) -> tuple[Message, ...]:
        """The summary, then the messages since, with micro-compacted results cleared."""
        head = (self.summary,) if self.summary is not None else ()
        tail = session.derive_messages()[self.cut :]
        if self.cleared:
            tail = tuple(clear_result(m, self.cleared, CLEARED) if m.role == "tool" else m for m in tail)
        return (*head, *tail)

    def threshold(self, ctx: StepContext) -> int:
        """The auto-compact threshold (the setting, else Claude Code's formula)."""
        given = self.settings["threshold_tokens"]
        return int(given) if given is not None else autocompact_threshold(self.window, output_cap(ctx))

    def before_step(self, ctx: StepContext) -> None:
        """Idle compaction or micro-compaction after a long gap, then auto-compact if full."""
        now = ctx.now_ms()
        idle_ms = 0 if self.last_ms is None else now - self.last_ms
        self.last_ms = now
        tokens = ctx.usage_tokens(self.view(ctx.session))
        settings = self.settings
        if settings["idle_compact"] and idle_ms >= int(settings["idle_after_s"]) * 1000 and tokens >= int(settings["idle_min_tokens"]):
            if self.compact(ctx, "idle"):
                return
        if settings["microcompact"] and idle_ms >= int(settings["cache_ttl_s"]) * 1000:
            self.microcompact(ctx)
            tokens = ctx.usage_tokens(self.view(ctx.session))
        if tokens >= self.threshold(ctx):
            self.compact(ctx, "auto")

    def microcompact(self, ctx: StepContext) -> None:
        """Clear every tool result of the view but the newest ``microcompact_keep``."""
        live = ctx.messages()[self.cut :]
        ids = [r.call_id for m in live for r in m.tool_results]
        keep = int(self.settings["microcompact_keep"])
        older = frozenset(ids[: max(0, len(ids) - keep)])
        if older <= self.cleared:
            return
        self.cleared = self.cleared | older
        self.counts["microcompact"] += 1
        ctx.declare_rewrite("microcompact", cleared=len(older))

    def compact(self, ctx: StepContext, why: str) -> bool:
        """Summarize the view through a call that replays it; False when the call failed."""
        view = self.view(ctx.session)
        cap = min(int(self.settings["summary_max_tokens"]), output_cap(ctx) or int(self.settings["summary_max_tokens"]))
        reply = ctx.client(ctx.summary_request([*view, INSTRUCTION], max_tokens=max(1, cap)))
        text = reply.text().strip()
        if reply.error is not None or not text:
            return False
        self.summary = Message("user", (Text(CONTINUED + text),))
        self.cut = len(ctx.messages())
        self.cleared = frozenset()
        self.counts[why] += 1
        ctx.declare_rewrite("checkpoint", trigger=why)
        return True


def autocompact(window: int, options: EngineOptions) -> ClaudeCodeCompact:
    """Claude Code's auto-compact and micro-compaction (settings: the module docstring)."""
    return ClaudeCodeCompact(window, read_settings(ClaudeCodeCompact.name, options.config, DEFAULTS))


def idle_compact(window: int, options: EngineOptions) -> ClaudeCodeCompact:
    """The same with idle compaction on (``idle_compact = true``)."""
    settings = read_settings("claude-code-idle-compact", options.config, {**DEFAULTS, "idle_compact": True})
    return ClaudeCodeCompact(window, settings)
