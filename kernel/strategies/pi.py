"""``pi-compaction``: the pi coding agent's compaction (badlogic/pi-mono,
``packages/coding-agent/src/core/compaction/compaction.ts``).

Before a step, when the view is over ``window - reserve_tokens`` (defaults 16,384 and, for the
kept part, ``keep_recent_tokens`` 20,000):

1. the cut: walking back from the newest message of the live region (everything since the last
   compaction), add up token estimates until they reach ``keep_recent_tokens``; cut at the
   first user or assistant message at or after that point (never at a tool result);
2. the messages before the cut are summarized by a summary call that carries them as *text*
   (one user message: the transcript in ``<conversation>`` tags, the previous summary in
   ``<previous-summary>`` tags, the instruction) under a summarizer system prompt, with no tools,
   at reasoning effort ``high`` and ``max_tokens = floor(0.8 * reserve_tokens)``: it shares no
   prefix with the conversation;
3. when the cut falls inside a user turn (a split turn), the part of that turn before the cut
   is summarized by a second call that replays those messages natively with a short
   instruction, without system prompt or tools, ``max_tokens = floor(0.5 * reserve_tokens)``;
4. the view becomes one user message carrying the summary, then every message from the cut
   on; the rewrite is declared (``checkpoint``).
"""

from __future__ import annotations

import msgspec

from prefixbench.kernel import (
    EngineBase,
    EngineOptions,
    Message,
    Request,
    Session,
    StepContext,
    user_text,
    warn,
)

from prefixbench.kernel.strategies.foldview import Folded, tokens_of, transcript
from prefixbench.kernel.strategies.history import summary_reply
from prefixbench.kernel.strategies.settings import read_settings

SUMMARIZER_SYSTEM = (
    "You write context checkpoints of coding sessions. Read the conversation you are given and "
    "answer with the checkpoint in the requested format, nothing else."
)
FIRST_PROMPT = (
    "Summarize the conversation above as a checkpoint another model will continue from, under "
    "these headings: Goal; Constraints and preferences; Progress (done, in progress, blocked); "
    "Key decisions; Next steps; Critical context. Keep exact paths, names and error text."
)
UPDATE_PROMPT = (
    "The conversation above is new since the checkpoint in <previous-summary>. Update that "
    "checkpoint: keep what still holds, add the new progress and decisions, move finished work "
    "to done, and refresh the next steps. Same headings; keep exact paths, names and error text."
)
TURN_PREFIX_PROMPT = (
    "This is the start of a turn too long to keep; its end is kept. Summarize the start for that "
    "end: what the user asked, the early progress and decisions, and what the kept part needs."
)
SUMMARY_INTRO = "Earlier messages of this session were compacted into this summary:"

DEFAULTS: dict[str, object] = {"reserve_tokens": 16_384, "keep_recent_tokens": 20_000}
#: The reasoning effort pi asks for on the history summary.
SUMMARY_EFFORT = "high"


class PiCompaction(EngineBase):
    """Cold text summary of the head, the newest ``keep_recent_tokens`` kept after it."""

    name = "pi-compaction"

    def __init__(self, window: int, reserve_tokens: int = 16_384, keep_recent_tokens: int = 20_000) -> None:
        self.window = window
        self.reserve = reserve_tokens
        self.keep_recent = keep_recent_tokens
        self.folded = Folded()
        self.summary: str | None = None

    def view(self, session: Session) -> tuple[Message, ...]:
        """The summary message, then every message from the last cut on."""
        return self.folded.view(session)

    def before_step(self, ctx: StepContext) -> None:
        """Compact when the next request is over ``window - reserve_tokens``."""
        tokens = ctx.usage_tokens(self.view(ctx.session))
        if tokens <= self.window - self.reserve:
            return
        live = self.folded.live(ctx.session)
        cut = find_cut(live, self.keep_recent)
        if cut == 0:
            warn(ctx.session, f"pi-compaction: {tokens} tokens over the threshold, nothing before the cut")
            return
        turn_start = -1 if live[cut].role == "user" else last_user_before(live, cut)
        split = turn_start != -1
        history = live[: turn_start if split else cut]
        summary = self._history_summary(ctx, history) if history or not split else "No earlier history."
        if summary is None:
            return
        if split:
            prefix = self._turn_prefix_summary(ctx, live[turn_start:cut])
            if prefix is None:
                return
            summary = f"{summary}\n\n---\n\nStart of the current turn (split):\n\n{prefix}"
        self.summary = summary
        message = user_text(f"{SUMMARY_INTRO}\n\n<summary>\n{summary}\n</summary>")
        self.folded.land((message,), self.folded.cut + cut)
        ctx.declare_rewrite("checkpoint")

    def _history_summary(self, ctx: StepContext, history: tuple[Message, ...]) -> str | None:
        text = f"<conversation>\n{transcript(history)}\n</conversation>\n\n"
        if self.summary is not None:
            text += f"<previous-summary>\n{self.summary}\n</previous-summary>\n\n"
        text += UPDATE_PROMPT if self.summary is not None else FIRST_PROMPT
        return self._send(ctx, (user_text(text),), SUMMARIZER_SYSTEM, SUMMARY_EFFORT, int(0.8 * self.reserve))

    def _turn_prefix_summary(self, ctx: StepContext, prefix: tuple[Message, ...]) -> str | None:
        return self._send(ctx, (*prefix, user_text(TURN_PREFIX_PROMPT)), "", None, int(0.5 * self.reserve))

    def _send(
        self, ctx: StepContext, messages: tuple[Message, ...], system: str, effort: str | None, max_tokens: int
    ) -> str | None:
        header = ctx.routed or ctx.header()
        if header is None:
            return None
        info = ctx.catalog(header.envelope.provider, header.envelope.model)
        envelope = info.wire_envelope(msgspec.structs.replace(header.envelope, reasoning_effort=effort))
        request = Request(envelope, messages, system, (), max_tokens, "compaction")
        reply = summary_reply(ctx, request, "pi-compaction: summary call failed")
        return None if reply is None else reply.text().strip()


def find_cut(live: tuple[Message, ...], keep_recent: int) -> int:
    """The index of the first kept message: a user or assistant message at or after the point where
    the newest messages add up to ``keep_recent`` tokens (the first such message when they never do)."""
    valid = [index for index, message in enumerate(live) if message.role != "tool"]
    if not valid:
        return 0
    cut = valid[0]
    total = 0
    for index in range(len(live) - 1, -1, -1):
        total += tokens_of(live[index : index + 1])
        if total >= keep_recent:
            cut = next((v for v in valid if v >= index), cut)
            break
    return cut


def last_user_before(live: tuple[Message, ...], index: int) -> int:
    """The index of the user message that opens the turn holding ``index`` (-1 when none)."""
    for position in range(index, -1, -1):
        if live[position].role == "user":
            return position
    return -1


def factory(window: int, options: EngineOptions) -> PiCompaction:
    """``pi-compaction``; ``--engine-config``: ``reserve_tokens``, ``keep_recent_tokens``."""
    config = read_settings("pi-compaction", options.config, DEFAULTS)
    return PiCompaction(window, config["reserve_tokens"], config["keep_recent_tokens"])  # type: ignore[arg-type]
