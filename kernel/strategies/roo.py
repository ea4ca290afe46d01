"""``roo-condense``: Roo Code's context management (RooCodeInc/Roo-Code,
``src/core/context-management/index.ts``, ``src/core/condense/index.ts``, the calls in
``src/core/task/Task.ts``, the output cap of ``src/shared/api.ts``).

* Trigger, before each request: the last request's context tokens plus the pending message
  (``ctx.usage_tokens`` of the view) reach ``condense_percent`` of the window (default 100) or
  exceed ``allowed = window * (1 - 0.1) - reserved``, where ``reserved`` is the model's output
  cap clamped to 20% of the window, 8,192 without one (``max_tokens`` overrides it; 0 is unset).
* Condense (``auto_condense``, on by default): the messages since the last summary (the summary
  included), every tool call and result turned into text, and the condense instruction as one
  more user message, are sent with a summarizer system prompt of its own and the routed tools:
  a prefix the conversation never sent, so cold. The view becomes one user message, the
  summary under ``## Conversation Summary``, and whatever comes after it (a fresh start: the
  first message goes too).
* Fallback, when condensing is off or fails and the prompt exceeds ``allowed``: the sliding
  window keeps the first visible message and hides half of the others (an even number, so the
  first kept one is an assistant message and tool calls keep their results), and a user marker
  naming how many were hidden goes where they were; markers of earlier truncations stay.
* Over the window (Roo learns of it from the provider's error): up to 3 forced condenses
  (truncation when a condense fails), here before the request.

Simplified: after a summary, Roo's sliding window counts the whole stored history (the messages
before the summary too) and drops a marker that lands before the summary; here it counts and hides
the messages since the summary only. Roo's reserve differs for Claude hybrid-reasoning models
(8,192), a reasoning budget (``modelMaxTokens``) and GPT-5 (the full cap); here every model's cap
is clamped to 20% of the window.

Roo counts messages as Anthropic does: one assistant message is one, a run of user and tool
messages between two assistant messages is one. Each change is a declared rewrite.

``release = "3.28"`` is Roo Code 3.28 (September 2025, ``src/core/condense/index.ts`` and
``src/core/sliding-window/index.ts`` at tag ``v3.28.8``), the release the public Roo task folders
were written by. The trigger is the same; the condense and the fallback differ:

* Condense: the stored messages but the last 3 (since the last summary, the first message put
  back in front of it), tool calls and results as text (3.28 wrote them as XML text), and a short
  closing request, go out under a summarizer system prompt and no tools: cold. The history
  becomes the first message, the summary as an assistant message, and the last 3 messages kept
  as they were (the first kept one's tool results as text: their calls went into the summary).
  Nothing is done when only the first message would be summarized, when the last 3 hold the
  summary, or when the context would not shrink (Roo's ``condense_context_grew``).
* Fallback: the sliding window keeps the first message and drops half of the others (an even
  number) outright, no marker; the summary can go with them.
"""

from __future__ import annotations

import json
import math

from prefixbench.kernel import (
    EngineBase,
    EngineOptions,
    Header,
    Message,
    Request,
    Session,
    StepContext,
    Text,
    ToolCall,
    ToolResult,
    user_text,
    warn,
)

from prefixbench.kernel.strategies.cline import units
from prefixbench.kernel.strategies.history import summary_reply
from prefixbench.kernel.strategies.settings import read_settings

#: Share of the window kept free besides the output cap.
TOKEN_BUFFER_PERCENTAGE = 0.1
#: Share of the visible messages (after the first) the sliding window hides.
TRUNCATE_FRACTION = 0.5
#: Forced condenses on a context-window error.
MAX_CONTEXT_WINDOW_RETRIES = 3
SUMMARY_SYSTEM = (
    "You summarize conversations. This is a summarization request only: call no tool, answer "
    "with text. The request is an operation of the system, not a message of the user: the "
    "user's latest request and the next step are what the user was doing before it."
)
CONDENSE_PROMPT = (
    "This summarization request comes from the system, not from the user. Write a detailed "
    "summary of the conversation so far for the work to go on without it: the user's requests "
    "and intent, key technical concepts, files and code sections (with the snippets that "
    "matter), problems solved, pending tasks, the current work, and an optional next step "
    "quoting the latest request."
)
SUMMARY_HEADING = "## Conversation Summary\n"
MARKER = "[Sliding window truncation: {n} messages hidden to reduce context]"
#: Roo 3.28: the messages kept after the summary, its summarizer prompt and closing request.
N_MESSAGES_TO_KEEP = 3
SUMMARY_SYSTEM_328 = (
    "Write a detailed summary of the conversation so far for the work to go on without it, "
    "minding the user's explicit requests and your own actions: the conversation's course, the "
    "current work, key technical concepts, files and code (with the snippets that matter), "
    "problems solved, and pending tasks with next steps quoting the latest messages. Answer with "
    "the summary only."
)
CLOSING_328 = "Summarize the conversation so far as the instructions say."
#: The releases the engine models: 3.52 (the source at commit cb83656, April 2026) and 3.28.
RELEASES = ("3.52", "3.28")

DEFAULTS: dict[str, object] = {"auto_condense": True, "condense_percent": 100, "max_tokens": None, "release": "3.52"}


class RooCondense(EngineBase):
    """Cold fresh-start condense near the window's end; half-the-history sliding window as fallback."""

    name = "roo-condense"

    def __init__(self, window: int, auto_condense: bool = True, condense_percent: int = 100, max_tokens: int | None = None,
                 release: str = "3.52") -> None:
        if isinstance(condense_percent, bool) or not isinstance(condense_percent, int) or not 5 <= condense_percent <= 100:
            raise ValueError(f"roo-condense: condense_percent must be an integer from 5 to 100, got {condense_percent!r}")
        if release not in RELEASES:
            raise ValueError(f"roo-condense: release must be one of {', '.join(map(repr, RELEASES))}, got {release!r}")
        self.release = release
        self.window = window
        self.auto_condense = auto_condense
        self.condense_percent = condense_percent
        #: The reply reserve; 0 means unset, as Roo's ``maxTokens || ...`` reads it.
        self.max_tokens = max_tokens or None
        #: The last summary message, and the session index the messages after it start at.
        self.summary: Message | None = None
        self.cut = 0
        #: Visible units hidden after the first one, and the markers left (since the last summary).
        self.hidden = 0
        self.markers: list[tuple[int, Message]] = []
        #: Release 3.28: the stored history standing for the session's messages before ``cut``,
        #: and where the summary sits in it (None: no summary, or a truncation dropped it).
        self.history: tuple[Message, ...] = ()
        self.summary_at: int | None = None

    def stored_328(self, session: Session) -> tuple[Message, ...]:
        """Release 3.28: the stored history, which is also what is sent (the messages since the
        summary with the first message in front are all of it: the summary follows the first)."""
        return (*self.history, *session.derive_messages()[self.cut :])

    def visible(self, session: Session) -> list[tuple[Message, ...]]:
        """Roo's effective history as units before the sliding window: the summary (if any), then
        every message after it."""
        live = session.derive_messages()[self.cut :]
        head = [(self.summary,)] if self.summary is not None else []
        spans = units(live)
        if head and spans and live[spans[0][0]].role != "assistant":
            # A run of user and tool messages right after the summary joins its unit.
            first, *spans = spans
            head = [(self.summary, *live[first[0] : first[1]])]
        return [*head, *(tuple(live[s:e]) for s, e in spans)]

    def view(self, session: Session) -> tuple[Message, ...]:
        """The first visible unit, the truncation markers, then the units not hidden."""
        if self.release == "3.28":
            return self.stored_328(session)
        shown = self.visible(session)
        if not shown:
            return ()
        markers = [marker for _, marker in self.markers]
        return (*shown[0], *markers, *(m for unit in shown[1 + self.hidden :] for m in unit))

    def stored(self, session: Session) -> tuple[Message, ...]:
        """Everything Roo stores since the last summary (the summary included): hidden messages
        too, each marker before the unit that was the first kept when it was written."""
        out: list[Message] = []
        for index, unit in enumerate(self.visible(session)):
            out += [marker for at, marker in self.markers if at == index]
            out += unit
        return tuple(out)

    def reserved(self, ctx: StepContext) -> int:
        """Tokens kept for the reply: the setting, else the output cap clamped to 20% of the window."""
        if self.max_tokens is not None:
            return self.max_tokens
        header = ctx.routed or ctx.header()
        cap = None if header is None else ctx.catalog(header.envelope.provider, header.envelope.model).default_max_tokens
        if not cap:
            # Roo reserves ``maxTokens || ANTHROPIC_DEFAULT_MAX_TOKENS``: 8,192 for a model without a
            # cap, unclamped.
            return 8_192
        return min(cap, math.ceil(self.window * 0.2))

    def allowed(self, ctx: StepContext) -> float:
        """``window * 0.9 - reserved``: past it, Roo condenses or truncates."""
        return self.window * (1 - TOKEN_BUFFER_PERCENTAGE) - self.reserved(ctx)

    def before_step(self, ctx: StepContext) -> None:
        """Condense at the threshold, else truncate past ``allowed``; then keep the window."""
        tokens = ctx.usage_tokens(self.view(ctx.session))
        allowed = self.allowed(ctx)
        over = tokens > allowed
        if self.auto_condense and (100 * tokens / self.window >= self.condense_percent or over):
            if self.condense(ctx):
                over = False
        if over:
            self.truncate(ctx)
        for _ in range(MAX_CONTEXT_WINDOW_RETRIES):
            if ctx.usage_tokens(self.view(ctx.session)) <= self.window:
                return
            # Roo's context-window error path condenses (at 75%) even with auto-condense off.
            if not self.condense(ctx):
                self.truncate(ctx)
        if ctx.usage_tokens(self.view(ctx.session)) > self.window:
            warn(ctx.session, f"roo-condense: still over the window after {MAX_CONTEXT_WINDOW_RETRIES} retries")

    def condense(self, ctx: StepContext) -> bool:
        """Summarize the messages since the last summary; True when the summary landed."""
        header = ctx.routed or ctx.header()
        if header is None:
            return False
        if self.release == "3.28":
            return self.condense_328(ctx, header)
        since = self.stored(ctx.session)
        if len(since) <= 1 or (self.summary is not None and len(since) <= 2):
            warn(ctx.session, "roo-condense: too few messages since the last condense")
            return False
        messages = (*(as_text(m) for m in since), user_text(CONDENSE_PROMPT))
        info = ctx.catalog(header.envelope.provider, header.envelope.model)
        request = Request(info.wire_envelope(header.envelope), messages, SUMMARY_SYSTEM, header.tools, info.default_max_tokens, "compaction")
        reply = summary_reply(ctx, request, "roo-condense: summary call failed")
        if reply is None:
            return False
        text = reply.text().strip()
        self.summary = user_text(SUMMARY_HEADING + text)
        self.cut = len(ctx.session.derive_messages())
        self.hidden, self.markers = 0, []
        ctx.declare_rewrite("checkpoint")
        return True

    def condense_328(self, ctx: StepContext, header: Header) -> bool:
        """Roo 3.28's ``summarizeConversation``: the first message, the summary (an assistant
        message), the last 3 messages; True when the summary landed and the context shrank."""
        session = ctx.session
        stored = self.stored_328(session)
        spans = units(stored)
        if len(spans) <= N_MESSAGES_TO_KEEP + 1:
            warn(session, "roo-condense: not enough messages to condense")
            return False
        keep_from = spans[-N_MESSAGES_TO_KEEP][0]
        if self.summary_at is not None and self.summary_at >= keep_from:
            warn(session, "roo-condense: condensed too recently (the summary is among the last 3 messages)")
            return False
        first = stored[: spans[0][1]]
        if self.summary_at is None:
            since = stored[:keep_from]
        else:
            # Since the summary, the first message put back in front of it (Bedrock wants a user first).
            since = (*first, *stored[self.summary_at : keep_from])
        if len(units(since)) <= 1:
            warn(session, "roo-condense: too few messages since the last condense")
            return False
        before = ctx.usage_tokens(self.view(session))
        info = ctx.catalog(header.envelope.provider, header.envelope.model)
        messages = (*(as_text(m) for m in since), user_text(CLOSING_328))
        request = Request(info.wire_envelope(header.envelope), messages, SUMMARY_SYSTEM_328, (), info.default_max_tokens, "compaction")
        reply = summary_reply(ctx, request, "roo-condense: summary call failed")
        if reply is None:
            return False
        kept = stored[keep_from:]
        opening = units(kept)[0]
        # The first kept message's tool results answer calls now in the summary: text, as 3.28 had them.
        kept = (*(as_text(m) for m in kept[: opening[1]]), *kept[opening[1] :])
        summary = Message("assistant", (Text(reply.text().strip()),))
        saved = (self.history, self.cut, self.summary_at)
        self.history, self.cut, self.summary_at = (*first, summary, *kept), len(session.derive_messages()), len(first)
        if ctx.usage_tokens(self.view(session)) >= before:
            self.history, self.cut, self.summary_at = saved
            warn(session, "roo-condense: the condensed context would not be smaller")
            return False
        ctx.declare_rewrite("checkpoint")
        return True

    def truncate(self, ctx: StepContext) -> None:
        """Hide half of the visible units after the first (an even number) behind a marker."""
        if self.release == "3.28":
            self.truncate_328(ctx)
            return
        count = len(self.visible(ctx.session)) - self.hidden
        remove = int((count - 1) * TRUNCATE_FRACTION)
        remove -= remove % 2
        if remove <= 0:
            return
        self.hidden += remove
        self.markers.append((1 + self.hidden, user_text(MARKER.format(n=remove))))
        ctx.declare_rewrite("truncate", hidden=remove)

    def truncate_328(self, ctx: StepContext) -> None:
        """Roo 3.28's ``truncateConversation``: keep the first message, drop half of the others
        (an even number) outright."""
        stored = self.stored_328(ctx.session)
        spans = units(stored)
        remove = int((len(spans) - 1) * TRUNCATE_FRACTION)
        remove -= remove % 2
        if remove <= 0:
            return
        self.history = (*stored[: spans[0][1]], *stored[spans[1 + remove][0] :])
        self.cut = len(ctx.session.derive_messages())
        if self.summary_at is not None:
            # The summary follows the first message: any truncation drops it.
            self.summary_at = None
        ctx.declare_rewrite("truncate", hidden=remove)


def as_text(message: Message) -> Message:
    """The message with its tool calls and results written as text (a tool message becomes a user
    message), as Roo sends the history to its summary call; reasoning stays."""
    if not message.tool_calls and not message.tool_results:
        return message
    blocks = tuple(_block_text(block) for block in message.blocks)
    return Message("user" if message.role == "tool" else message.role, blocks)


def _block_text(block: object) -> object:
    if isinstance(block, ToolCall):
        try:
            parsed = json.loads(block.arguments)
        except ValueError:
            parsed = block.arguments
        if isinstance(parsed, dict):
            body = "\n".join(f"{k}: {json.dumps(v, indent=2) if isinstance(v, (dict, list)) else v}" for k, v in parsed.items())
        else:
            body = str(parsed)
        return Text(f"[Tool Use: {block.name}]\n{body}")
    if isinstance(block, ToolResult):
        suffix = " (Error)" if block.is_error else ""
        return Text(f"[Tool Result{suffix}]\n" + "\n".join(item.text for item in block.content))
    return block


def factory(window: int, options: EngineOptions) -> RooCondense:
    """``roo-condense``; ``--engine-config``: ``auto_condense``, ``condense_percent`` (an integer
    from 5 to 100), ``max_tokens`` (0 or absent: the model's output cap), ``release`` (``"3.52"``,
    the default, or ``"3.28"``)."""
    table = dict(options.config)
    # Checked here, so that a fraction or a value out of range gets the one message naming 5-100.
    percent = table.pop("condense_percent", DEFAULTS["condense_percent"])
    config = read_settings("roo-condense", table, DEFAULTS)
    config["condense_percent"] = percent
    return RooCondense(window, config["auto_condense"], config["condense_percent"], config["max_tokens"], config["release"])
