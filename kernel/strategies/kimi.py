"""``kimi-cli-compact``: Kimi CLI's auto-compaction (MoonshotAI/kimi-cli,
``src/kimi_cli/soul/compaction.py`` ``SimpleCompaction`` and ``should_auto_compact``, called at
the start of every step from ``src/kimi_cli/soul/kimisoul.py``; defaults in
``src/kimi_cli/config.py``).

* Trigger, before every step: the context's tokens (the last response's count plus an estimate
  of what came after) reach ``compaction_trigger_ratio`` (0.85) of the window, or come within
  ``reserved_context_size`` (50,000) of it, whichever fires first. Under a window of 50,000
  tokens or less the second condition always holds.
* Split: walking back, the newest ``max_preserved_messages`` (2) user or assistant messages
  and everything after the older of them are preserved (a tool result follows its call, so a
  pair is never split); everything before goes to the compaction call. With fewer such
  messages, or nothing before them, nothing is compacted.
* Compaction call: one user message listing each compacted message as ``## Message i``, its
  role and its text (tool calls' arguments are not text, so they are left out), then the
  compaction instructions; a one-line system prompt of its own, no tools: cold.
* The view becomes one user message, a ``<system>`` note that the context was compacted and
  the reply's text (its reasoning dropped), then the preserved messages. The rewrite is
  declared (``checkpoint``).
* A failed compaction call: Kimi CLI raises the error again and the turn ends; here a warning,
  and the run goes on uncompacted.
"""

from __future__ import annotations

from prefixbench.kernel import (
    EngineBase,
    EngineOptions,
    Message,
    Session,
    StepContext,
    Text,
    ToolResult,
    user_text,
)

from prefixbench.kernel.strategies.foldview import Folded
from prefixbench.kernel.strategies.history import cold_request, summary_reply
from prefixbench.kernel.strategies.settings import read_settings

SYSTEM_PROMPT = "You compact the context of a conversation."
OUTPUT_PREFIX = "<system>The earlier context was compacted; this is what the compaction produced:</system>"
COMPACT_PROMPT = (
    "The messages above come from an agent's conversation. Compact them. In order of priority, keep: "
    "the task in progress now; every error met and how it was solved; the final working code only "
    "(signatures and key logic of long blocks); the project structure, dependencies and environment; "
    "design decisions and their reasons; open tasks and known issues. Keep error messages, stack "
    "traces and working solutions whole; merge similar discussions; drop repetition and abandoned "
    "attempts, keeping what they taught. Answer in sections: current focus, environment, completed "
    "tasks, active issues, code state (per file), and important context."
)

DEFAULTS: dict[str, object] = {
    "compaction_trigger_ratio": 0.85,
    "reserved_context_size": 50_000,
    "max_preserved_messages": 2,
}


def should_compact(tokens: int, window: int, ratio: float, reserved: int) -> bool:
    """Kimi CLI's trigger: at ``ratio`` of the window, or within ``reserved`` tokens of it."""
    return tokens >= window * ratio or tokens + reserved >= window


def preserve_start(messages: tuple[Message, ...], keep: int) -> int | None:
    """Index of the older of the newest ``keep`` user or assistant messages (None: fewer exist)."""
    if keep <= 0:
        return None
    seen = 0
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role in ("user", "assistant"):
            seen += 1
            if seen == keep:
                return index
    return None


def message_text(message: Message) -> str:
    """The text parts of a message, tool results' text included (calls and reasoning are not text)."""
    parts: list[str] = []
    for block in message.blocks:
        if isinstance(block, Text):
            parts.append(block.text)
        elif isinstance(block, ToolResult):
            parts.extend(item.text for item in block.content)
    return "".join(parts)


class KimiCliCompact(EngineBase):
    """Near the window, everything but the newest two user or assistant messages is summarized, cold."""

    name = "kimi-cli-compact"

    def __init__(
        self,
        window: int,
        compaction_trigger_ratio: float = 0.85,
        reserved_context_size: int = 50_000,
        max_preserved_messages: int = 2,
    ) -> None:
        # Kimi CLI's own bounds (its config.py rejects anything else).
        if not 0.5 <= compaction_trigger_ratio <= 0.99:
            raise ValueError(
                f"kimi-cli-compact: compaction_trigger_ratio must be between 0.5 and 0.99, got {compaction_trigger_ratio!r}"
            )
        if reserved_context_size < 1000:
            raise ValueError(f"kimi-cli-compact: reserved_context_size must be at least 1000, got {reserved_context_size!r}")
        self.window = window
        self.ratio = compaction_trigger_ratio
        self.reserved = reserved_context_size
        self.keep = max_preserved_messages
        self.folded = Folded()

    def view(self, session: Session) -> tuple[Message, ...]:
        """The compaction output, then the preserved messages and everything since."""
        return self.folded.view(session)

    def before_step(self, ctx: StepContext) -> None:
        """Compact when the context reaches the trigger."""
        view = self.view(ctx.session)
        tokens = ctx.usage_tokens(view)
        if not should_compact(tokens, self.window, self.ratio, self.reserved):
            return
        start = preserve_start(view, self.keep)
        if start is None or start == 0:
            return  # nothing to compact: Kimi CLI re-writes the same messages
        compact, head_len = view[:start], len(self.folded.head)
        text = "".join(
            f"## Message {number}\nRole: {message.role}\nContent:\n{message_text(message)}"
            for number, message in enumerate(compact, 1)
        )
        request = cold_request(ctx, (user_text(f"{text}\n{COMPACT_PROMPT}"),), SYSTEM_PROMPT)
        reply = summary_reply(ctx, request, "kimi-cli-compact: compaction call failed")
        if reply is None:
            return
        summary = Message("user", (Text(OUTPUT_PREFIX), Text(reply.text())))
        # Preserved messages from the head (an earlier summary) stay in the head.
        kept_head = view[start:head_len] if start < head_len else ()
        self.folded.land((summary, *kept_head), self.folded.cut + max(0, start - head_len))
        ctx.declare_rewrite("checkpoint")


def factory(window: int, options: EngineOptions) -> KimiCliCompact:
    """``kimi-cli-compact``; ``--engine-config``: ``compaction_trigger_ratio``, ``reserved_context_size``,
    ``max_preserved_messages``."""
    config = read_settings("kimi-cli-compact", options.config, DEFAULTS)
    return KimiCliCompact(
        window,
        config["compaction_trigger_ratio"],  # type: ignore[arg-type]
        config["reserved_context_size"],  # type: ignore[arg-type]
        config["max_preserved_messages"],  # type: ignore[arg-type]
    )
