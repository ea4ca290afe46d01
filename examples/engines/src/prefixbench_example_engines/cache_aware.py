"""``cache-aware``: summarize a head region with a warm summary call, then declare the rewrite.

Before a step, when the view reaches ``full_ratio`` of the window:

1. pick a head region of the view, leaving a tail of at least ``retain_ratio`` of the window
   that starts at a user or assistant message (no tool result cut from its call);
2. send a summary call of exactly ``[region..., instruction]`` in the routed request family
   (``ctx.summary_request``): the region is a byte prefix of the last request, so only the
   instruction is uncached;
3. replace the region by one user message carrying the summary, and declare the rewrite
   (``ctx.declare_rewrite("checkpoint")``) so the provider-side break is explained.
"""

from __future__ import annotations

from prefixbench.kernel import EngineBase, Message, Session, StepContext, Text, count_tokens, user_text

INSTRUCTION = user_text(
    "Write a checkpoint of the conversation above: the goal, the decisions, the files and "
    "commands with their results, and the next action. Copy exact strings exactly. Output "
    "only the checkpoint."
)


class CacheAwareEngine(EngineBase):
    """Head-region summaries whose summary call replays the last request's prefix."""

    name = "cache-aware"

    def __init__(self, window: int, full_ratio: float = 0.8, retain_ratio: float = 0.2) -> None:
        self.window = window
        self.full_ratio = full_ratio
        self.retain_ratio = retain_ratio
        #: The latest summary message (None before the first fold).
        self.summary: Message | None = None
        #: Session messages before this index are folded into ``summary``.
        self.cut = 0

    def view(self, session: Session) -> tuple[Message, ...]:
        """The summary, then every message after the cut."""
        head = (self.summary,) if self.summary is not None else ()
        return (*head, *session.derive_messages()[self.cut :])

    def before_step(self, ctx: StepContext) -> None:
        """Fold a head region when the view is full; on a failed summary call keep the view."""
        view = self.view(ctx.session)
        if ctx.measure(view).total_tokens < self.full_ratio * self.window:  # what the next request sends
            return
        keep = self._tail_start(view)
        if keep <= 1:
            return
        reply = ctx.client(ctx.summary_request([*view[:keep], INSTRUCTION]))
        text = reply.text().strip()
        if reply.error is not None or not text:
            return
        self.cut += keep - (1 if self.summary is not None else 0)
        self.summary = Message("user", (Text("Summary of the conversation so far:\n\n" + text),))
        ctx.declare_rewrite("checkpoint", folded=keep)

    def _tail_start(self, view: tuple[Message, ...]) -> int:
        """The first kept index: a retained tail of >= retain_ratio of the window, opening on a non-tool message."""
        tail = 0
        index = len(view)
        while index > 0 and tail < self.retain_ratio * self.window:
            index -= 1
            tail += count_tokens(view[index : index + 1])
        while index > 0 and view[index].role == "tool":
            index -= 1
        return index
