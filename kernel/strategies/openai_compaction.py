"""``openai-server-compaction``: OpenAI's server-side compaction (``compact_threshold``).

A Responses request that sets ``context_management: [{type: "compaction", compact_threshold}]``
is compacted by the server when its rendered token count crosses the threshold: the response
carries an encrypted compaction item that stands for everything before it, and the client may
drop the items that came before the most recent compaction item. The item is opaque (not meant
to be read by people); its content carries the earlier state in fewer tokens.

Modelled as: before a step, when the prompt the engine would send reaches ``compact_threshold``,
one ``compaction`` request replays that prompt with an instruction (the server's own pass over
the same input; its prompt is not published), and the reply becomes the compaction item: a
user message holding the summary encoded as an opaque base64 blob. The conversation then
continues from the item alone, with the rewrite declared (``compaction``). A later compaction
replays the item and what followed it, and its item replaces them.

Settings (``--engine-config``, table ``[openai-server-compaction]``): ``compact_threshold``
(tokens; default 80% of the window, prefixbench's choice: the parameter has no documented
default), ``item_max_tokens`` (the compaction pass's output cap; default the route's).
"""

from __future__ import annotations

import base64

from prefixbench.kernel import EngineBase, EngineOptions, Message, Session, StepContext, Text, user_text

from prefixbench.kernel.strategies.settings import read_settings

#: The share of the window the threshold defaults to.
DEFAULT_THRESHOLD_RATIO = 0.8
INSTRUCTION = user_text(
    "Compact the conversation above into a state that lets the next turn continue the task: "
    "the goal, what was done and found, and what comes next."
)


def compaction_item(summary: str) -> Message:
    """The opaque item a compaction returns: the summary as a base64 blob, in one user message."""
    blob = base64.b64encode(summary.encode("utf-8")).decode("ascii")
    return Message("user", (Text(f"[compaction encrypted_content={blob}]"),))


class ServerCompaction(EngineBase):
    """Sends the latest compaction item and the items after it; compacts at the threshold."""

    name = "openai-server-compaction"

    def __init__(self, window: int, compact_threshold: int | None = None, item_max_tokens: int | None = None) -> None:
        self.window = window
        self.compact_threshold = (
            compact_threshold if compact_threshold is not None else int(window * DEFAULT_THRESHOLD_RATIO)
        )
        self.item_max_tokens = item_max_tokens
        #: The latest compaction item (None before the first compaction).
        self.item: Message | None = None
        #: Session messages before this index are carried by ``item``.
        self.cut = 0

    def view(self, session: Session) -> tuple[Message, ...]:
        """The latest compaction item, then every message after it."""
        head = (self.item,) if self.item is not None else ()
        return (*head, *session.derive_messages()[self.cut :])

    def before_step(self, ctx: StepContext) -> None:
        """Compact when the prompt reaches the threshold; on a failed pass send it as it is."""
        view = self.view(ctx.session)
        if ctx.usage_tokens(view) < self.compact_threshold:
            return
        reply = ctx.client(ctx.summary_request([*view, INSTRUCTION], max_tokens=self.item_max_tokens))
        text = reply.text()
        if reply.error is not None or not text.strip():
            return
        self.item = compaction_item(text)
        self.cut = len(ctx.messages())
        ctx.declare_rewrite("compaction")


def factory(window: int, options: EngineOptions) -> ServerCompaction:
    """Server-side compaction sized to ``window`` (settings: the module docstring)."""
    settings = read_settings(ServerCompaction.name, options.config, {"compact_threshold": None, "item_max_tokens": None})
    if settings["compact_threshold"] == 0 or settings["item_max_tokens"] == 0:
        raise ValueError(f"{ServerCompaction.name}: compact_threshold and item_max_tokens must be positive")
    return ServerCompaction(window, settings["compact_threshold"], settings["item_max_tokens"])
