"""``crush-summarize``: Charm's Crush auto-summarize (charmbracelet/crush,
``internal/agent/agent.go``: the ``StopWhen`` condition of ``Run``, ``Summarize``,
``getSessionMessages``; the prompt in ``internal/agent/templates/summary.md``).

* Trigger: after a step, Crush reads the session's tokens from the last response's usage
  (prompt + completion) and stops the loop when the context left, ``window - tokens``, is at
  most the threshold: 20,000 tokens on a window over 200,000, otherwise 20% of the window.
  Here that is checked before every step, on the provider's count of the last request and its
  reply (the tool results that came after are not counted, as Crush does not count them).
* Summary: the whole session since the last summary is replayed natively, with the summary
  prompt as the system prompt and no tools, and one user message asking for a detailed summary.
  The system prompt differs from the first byte, so the call is cold.
* The summary becomes the new start of the session: Crush lists the messages from the summary
  message on, as a user message. Nothing else is kept (the system prompt and tools stay).
  When the turn was not finished (the last reply called tools), Crush queues the turn's prompt
  again, prefixed with a sentence saying the session was interrupted for being too long; here
  that user message follows the summary. The rewrite is declared (``checkpoint``).
"""

from __future__ import annotations

from prefixbench.kernel import (
    EngineBase,
    EngineOptions,
    Message,
    Request,
    Session,
    StepContext,
    user_text,
)

from prefixbench.kernel.strategies.foldview import Folded
from prefixbench.kernel.strategies.history import cold_request, summary_reply
from prefixbench.kernel.strategies.settings import read_settings

SUMMARY_SYSTEM = (
    "You summarize a conversation so the work can continue later from your summary alone: the "
    "earlier messages will be gone. Be thorough, and cover: the current state (the user's exact "
    "request, what is done, what is in progress, what is left, as concrete next steps); the files "
    "changed, read or still to change, with paths and line numbers; the technical context "
    "(decisions and why, patterns, libraries, commands that worked and that failed, the "
    "environment); the approach, the insights, assumptions and risks; and the exact next steps. "
    "Write it as a briefing for a colleague taking over mid-task. No length limit."
)
SUMMARY_ASK = "Give a detailed summary of our conversation so far."
INTERRUPTED = "The session was cut short for being too long; the user's original request was: `{prompt}`"
#: Crush's thresholds: a fixed buffer above this window size, a fraction of the window below.
LARGE_WINDOW = 200_000
LARGE_WINDOW_BUFFER = 20_000
SMALL_WINDOW_RATIO = 0.2

DEFAULTS: dict[str, object] = {"threshold": None}


def threshold_for(window: int) -> int:
    """Crush's auto-summarize threshold on the context left, for a window of ``window`` tokens."""
    return LARGE_WINDOW_BUFFER if window > LARGE_WINDOW else int(window * SMALL_WINDOW_RATIO)


class CrushSummarize(EngineBase):
    """Near the end of the window, a cold summary of the whole session replaces it."""

    name = "crush-summarize"

    def __init__(self, window: int, threshold: int | None = None) -> None:
        self.window = window
        self.threshold = threshold_for(window) if threshold is None else threshold
        self.folded = Folded()

    def view(self, session: Session) -> tuple[Message, ...]:
        """The summary (and the re-queued prompt), then every message since."""
        return self.folded.view(session)

    def before_step(self, ctx: StepContext) -> None:
        """Summarize when the last response leaves ``threshold`` tokens or fewer of the window."""
        view = self.view(ctx.session)
        replied = [index for index, message in enumerate(view) if message.role == "assistant"]
        if not replied or replied[-1] < len(self.folded.head):
            return  # no step since the last summary: Crush checks after a step
        tokens = ctx.usage_tokens(view[: replied[-1] + 1])
        if self.window - tokens > self.threshold:
            return
        reply = summary_reply(ctx, self.request(ctx, view), "crush-summarize: summary call failed")
        if reply is None:
            return
        messages = ctx.session.derive_messages()
        head: tuple[Message, ...] = (user_text(reply.text().strip()),)
        if messages[-1].role == "user":
            # The turn had ended: the summary goes before the user's new message.
            cut = len(messages) - 1
        else:
            cut = len(messages)
            prompts = [m for m in messages if m.role == "user"]
            if prompts:
                head = (*head, user_text(INTERRUPTED.format(prompt=prompts[-1].text())))
        self.folded.land(head, cut)
        ctx.declare_rewrite("checkpoint")

    def request(self, ctx: StepContext, view: tuple[Message, ...]) -> Request | None:
        """The summary call: the session as it stands, the ask, the summary system prompt, no tools
        (None before the routed header is known)."""
        messages = view
        if messages and messages[-1].role == "user" and len(messages) > 1:
            messages = messages[:-1]  # the new user message comes after the summary
        return cold_request(ctx, (*messages, user_text(SUMMARY_ASK)), SUMMARY_SYSTEM)

def factory(window: int, options: EngineOptions) -> CrushSummarize:
    """``crush-summarize``; ``--engine-config``: ``threshold`` (tokens of the window left that trigger it)."""
    config = read_settings("crush-summarize", options.config, DEFAULTS)
    return CrushSummarize(window, config["threshold"])  # type: ignore[arg-type]
