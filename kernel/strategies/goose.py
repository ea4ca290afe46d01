"""``goose-auto-compact``: Block's Goose auto-compaction (block/goose,
``crates/goose/src/context_mgmt/mod.rs``: ``check_if_compaction_needed``, ``compact_messages``,
``do_compact``, ``filter_tool_responses``, ``format_message_for_compacting``; the calls in
``crates/goose/src/agents/agent.rs``: ``reply`` and the context-length recovery of
``reply_internal``, read at commit 0086ae6, older than the 0036b81 read for ``mod.rs``; the prompt
in ``crates/goose/src/prompts/compaction.md``).

* Trigger, once per user message (Goose checks in ``reply`` before the turn's loop starts): the
  session's token count, the last response's usage (prompt + output), is over ``threshold`` of
  the window (``GOOSE_AUTO_COMPACT_THRESHOLD``, default 0.8; 0 or 1 turns it off). Within a
  turn nothing is checked: only a request the provider refuses as too long compacts (Goose's
  ``ContextLengthExceeded`` recovery: one compaction, ``max_recovery`` = 1; a second refusal in
  a row ends Goose's turn). Here that runs before a request over the window.
* Summary: every visible message, written as text (``[user]: ...``, ``tool_request(name):
  args``, ``tool_response: text``; reasoning left out), goes inside the system prompt, and one
  user message asks for the summary; no tools: cold. When that call is refused as too long,
  10%, 20%, 50%, then all of the tool results are dropped from the middle out and it is sent
  again.
* Nothing is kept: every earlier message becomes user-visible only (Goose keeps them for the
  UI, not for the model). The model then sees the summary (a user message), an assistant note
  that the context was compacted (to go on naturally at a turn boundary, to go on calling tools
  in a tool loop), then a fresh copy of the newest user text message. The rewrite is declared
  (``checkpoint``).
"""

from __future__ import annotations

import json

from prefixbench.kernel import (
    EngineBase,
    EngineOptions,
    Message,
    Session,
    StepContext,
    Text,
    ToolCall,
    ToolResult,
    user_text,
    warn,
)

from prefixbench.kernel.strategies.foldview import Folded
from prefixbench.kernel.strategies.history import assistant_note, cold_request
from prefixbench.kernel.strategies.settings import read_settings

SUMMARY_SYSTEM = (
    "Below is a conversation to summarize into a structured checkpoint that another model will "
    "use to carry on the work.\n\nConversation:\n{messages}\n\nAnswer in these sections: Goal (what "
    "the user wants, possibly several tasks); Constraints and preferences (or none); Progress "
    "(done, with file paths; in progress; blocked); Key decisions, each with its reason; Next "
    "steps, in order; Critical context (data, error messages, references needed to go on, or "
    "none). Keep each section short but complete, keep file paths, function names and error "
    "messages exact, include code only where the work cannot go on without it, and leave out "
    "what can be read again from the files."
)
SUMMARY_ASK = "Summarize the conversation history given in the system prompt."
CONTINUE_TURN = (
    "The context was compacted: the message before this one summarizes the conversation so far. "
    "Do not mention the summary or that the conversation was summarized; go on naturally from it."
)
CONTINUE_TOOLS = (
    "The context was compacted: the message before this one summarizes the conversation so far. "
    "Do not mention the summary or that the conversation was summarized; go on calling tools as "
    "needed to finish the task."
)
#: Shares of the tool results dropped, from the middle out, on each retry of a refused summary call.
REMOVAL_PERCENTAGES = (0, 10, 20, 50, 100)

DEFAULTS: dict[str, object] = {"threshold": 0.8, "max_recovery": 1}


def goose_line(message: Message) -> str:
    """One message as Goose writes it for the summary: ``[role]: part`` lines (a tool message is a
    user message in Goose's format), reasoning left out."""
    parts: list[str] = []
    for block in message.blocks:
        if isinstance(block, Text):
            parts.append(block.text)
        elif isinstance(block, ToolCall):
            parts.append(f"tool_request({block.name}): {compact_json(block.arguments)}")
        elif isinstance(block, ToolResult):
            texts = [item.text for item in block.content]
            parts.append("tool_response: " + "\n".join(texts) if texts else "tool_response: [non-text content]")
    role = "assistant" if message.role == "assistant" else "user"
    return f"[{role}]: " + "\n".join(parts) if parts else f"[{role}]: <empty message>"


def compact_json(arguments: str) -> str:
    """The call's arguments re-serialized compactly, as serde_json writes them (as given when not JSON)."""
    try:
        return json.dumps(json.loads(arguments), separators=(",", ":"), ensure_ascii=False)
    except ValueError:
        return arguments


def drop_tool_results(messages: tuple[Message, ...], percent: int) -> tuple[Message, ...]:
    """``messages`` without ``percent``% (at least one) of the messages carrying tool results,
    taken alternately left and right of the middle one, as Goose's ``filter_tool_responses``."""
    if percent == 0:
        return messages
    carrying = [i for i, m in enumerate(messages) if m.tool_results]
    if not carrying:
        return messages
    count = max(1, len(carrying) * percent // 100)
    middle = len(carrying) // 2
    removed: set[int] = set()
    for i in range(count):
        offset = i // 2
        if i % 2 == 0:
            if middle > offset:
                removed.add(carrying[middle - offset - 1])
        elif middle + offset < len(carrying):
            removed.add(carrying[middle + offset])
    return tuple(m for i, m in enumerate(messages) if i not in removed)


def context_exceeded(error: str) -> bool:
    """Whether a provider's refusal is for the prompt's length (Anthropic's and OpenAI's words)."""
    return "prompt is too long" in error or "maximum context length" in error


def preserved_user(messages: tuple[Message, ...]) -> tuple[int, Message] | None:
    """The newest user message with text and no tool content, and its index."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and message.text() and not message.tool_results and not message.tool_calls:
            return index, message
    return None


class GooseAutoCompact(EngineBase):
    """At a new user message past 80% of the window (or a request over it), a cold summary replaces everything."""

    name = "goose-auto-compact"

    def __init__(self, window: int, threshold: float = 0.8, max_recovery: int = 1) -> None:
        self.window = window
        self.threshold = threshold
        self.max_recovery = max_recovery
        self.folded = Folded()

    def view(self, session: Session) -> tuple[Message, ...]:
        """The summary, the continuation note and the preserved user message, then every message since."""
        return self.folded.view(session)

    def enabled(self) -> bool:
        """Goose turns auto-compaction off for a threshold of 0 or less, or 1 or more."""
        return 0.0 < self.threshold < 1.0

    def before_step(self, ctx: StepContext) -> None:
        """Compact at a new user message over the threshold; recover before a request over the window."""
        view = self.view(ctx.session)
        if self.enabled() and view and view[-1].role == "user" and self.over_threshold(ctx, view):
            self.compact(ctx)
        for _ in range(self.max_recovery):
            if ctx.usage_tokens(self.view(ctx.session)) <= self.window:
                return
            if not self.compact(ctx):
                return

    def over_threshold(self, ctx: StepContext, view: tuple[Message, ...]) -> bool:
        """The last response's prompt + output over ``threshold`` of the window (before any reply
        since the last compaction, Goose estimates the visible messages)."""
        replied = [index for index, message in enumerate(view) if message.role == "assistant"]
        if replied and replied[-1] >= len(self.folded.head):
            tokens = ctx.usage_tokens(view[: replied[-1] + 1])
        else:
            tokens = ctx.measure(view).total_tokens
        return tokens / self.window > self.threshold

    def compact(self, ctx: StepContext) -> bool:
        """Summarize every visible message; True when the summary landed."""
        view = self.view(ctx.session)
        reply_text = self.summarize(ctx, view)
        if reply_text is None:
            return False
        kept = preserved_user(view)
        at_turn_start = kept is not None and kept[0] == len(view) - 1
        note = CONTINUE_TURN if at_turn_start else CONTINUE_TOOLS
        head = [user_text(reply_text), assistant_note(view, note)]
        if kept is not None:
            head.append(user_text(kept[1].text()))
        self.folded.land(head, len(ctx.session.derive_messages()))
        ctx.declare_rewrite("checkpoint")
        return True

    def summarize(self, ctx: StepContext, view: tuple[Message, ...]) -> str | None:
        """The summary call, retried with fewer tool results while it is refused (None: it failed)."""
        error = "no text"
        for percent in REMOVAL_PERCENTAGES:
            text = "\n".join(goose_line(m) for m in drop_tool_results(view, percent))
            request = cold_request(ctx, (user_text(SUMMARY_ASK),), SUMMARY_SYSTEM.format(messages=text))
            if request is None:
                return None
            reply = ctx.client(request)
            if reply.error is None:
                summary = reply.text().strip()
                if summary:
                    return summary
                error = "no text"
                break
            error = str(reply.error)
            if not context_exceeded(error):
                break  # Goose retries only a refusal for length
        warn(ctx.session, f"goose-auto-compact: summary call failed: {error}")
        return None


def factory(window: int, options: EngineOptions) -> GooseAutoCompact:
    """``goose-auto-compact``; ``--engine-config``: ``threshold`` (share of the window, Goose's
    ``GOOSE_AUTO_COMPACT_THRESHOLD``), ``max_recovery`` (compactions in a row for requests over
    the window; Goose gives up at the second refusal in a row, so 1)."""
    config = read_settings("goose-auto-compact", options.config, DEFAULTS)
    return GooseAutoCompact(window, float(config["threshold"]), config["max_recovery"])  # type: ignore[arg-type]
