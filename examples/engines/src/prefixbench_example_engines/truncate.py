"""``truncate-oldest``: when full, drop the oldest messages. Deliberately wrong.

Every drop changes the first message the provider sees, so the next request no longer
extends the one it cached, and the engine never says so (no ``declare_rewrite``): a silent
rewrite of cached history, which costs a full prefill and which prefixbench's specs flag.
"""

from __future__ import annotations

from prefixbench.kernel import EngineBase, Message, Session, StepContext, count_tokens


class TruncateOldestEngine(EngineBase):
    """Keeps the newest messages that fit under ``keep_ratio`` of the window once ``full_ratio`` is reached."""

    name = "truncate-oldest"

    def __init__(self, window: int, full_ratio: float = 0.8, keep_ratio: float = 0.6) -> None:
        self.window = window
        self.full_ratio = full_ratio
        self.keep_ratio = keep_ratio
        #: Messages dropped from the head so far.
        self.dropped = 0

    def before_step(self, ctx: StepContext) -> None:
        """Drop from the head until the rest fits (no summary, no declaration)."""
        messages = ctx.messages()
        if count_tokens(messages[self.dropped :], ctx.routed) < self.full_ratio * self.window:
            return
        while self.dropped < len(messages) - 1 and count_tokens(messages[self.dropped :], ctx.routed) > self.keep_ratio * self.window:
            self.dropped += 1
        # Never open on a tool result whose call was dropped.
        while self.dropped < len(messages) - 1 and messages[self.dropped].role == "tool":
            self.dropped += 1

    def view(self, session: Session) -> tuple[Message, ...]:
        """The newest messages only."""
        return session.derive_messages()[self.dropped :]
