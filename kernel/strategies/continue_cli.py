"""``continue-cli-compact``: the auto-compaction of Continue's CLI, ``cn`` (continuedev/continue,
``extensions/cli/src/compaction.ts``: ``shouldAutoCompact``, ``compactChatHistory``,
``pruneLastMessage``, ``getHistoryForLLM``; the calls in
``extensions/cli/src/stream/streamChatResponse.ts`` and ``streamChatResponse.compactionHelpers.ts``;
the token budget in ``extensions/cli/src/util/tokenizer.ts``).

* Trigger, before every request (``handlePreApiCompaction``; the checks after tool results land
  fire on the same count before the next request): the input (history, system message and tool
  definitions, counted with a tokenizer, here the meter) reaches
  ``window - max_tokens - buffer``, where ``buffer`` is ``max(max_tokens, 20% of (window -
  max_tokens))`` capped at 15,000 and ``max_tokens`` is the model's configured output cap or,
  unset, 35% of the window up to 64,000. At 32k (32,000) that is 9,600 tokens; at 128k,
  68,200; at 512k, 433,000.
* Compaction request: the history as it stands, then one user message asking for a summary,
  sent as a normal turn (``streamChatResponse`` with the same system message and tools): it
  extends the previous request, so it is warm. When it would not fit ``window - max_tokens -
  150``, messages are pruned from its end: a trailing tool result goes with its calling
  assistant message and every result of that batch, so no call is left unanswered.
* The history becomes the system message and one assistant message holding the summary;
  nothing else is kept, not even the task or the turn's pending tool results. The rewrite is
  declared (``checkpoint``).
"""

from __future__ import annotations

import math

from prefixbench.kernel import (
    EngineBase,
    EngineOptions,
    Message,
    Session,
    StepContext,
    user_text,
)

from prefixbench.kernel.strategies.foldview import Folded
from prefixbench.kernel.strategies.history import assistant_note, summary_reply
from prefixbench.kernel.strategies.settings import read_settings

COMPACTION_PROMPT = (
    "Summarize our conversation so far in one message that keeps everything needed to carry on: "
    "the key context, the decisions taken and the current state. Leave out the system message, "
    "which stays. Make clear what was being worked on at the very end, so the work can resume "
    "exactly where it stopped."
)
#: cn's rough count of the compaction prompt, reserved when it checks the compaction request fits.
COMPACTION_PROMPT_TOKENS = 150
#: The output reservation when no max_tokens is configured: a share of the window, capped.
DEFAULT_MAX_TOKENS_RATIO = 0.35
MAX_MAX_TOKENS = 64_000
#: The auto-compact buffer: a share of what is left after the output, capped.
AUTO_COMPACT_BUFFER_RATIO = 0.8
AUTO_COMPACT_BUFFER_CAP = 15_000

DEFAULTS: dict[str, object] = {"max_tokens": None}


def output_reserve(window: int, max_tokens: int | None) -> int:
    """cn's ``getModelMaxTokens``: the configured cap, else 35% of the window up to 64,000."""
    if max_tokens is not None:
        return max_tokens
    return math.ceil(min(window * DEFAULT_MAX_TOKENS_RATIO, MAX_MAX_TOKENS))


def compaction_threshold(window: int, max_tokens: int | None) -> int:
    """The input count at which cn auto-compacts, for a window of ``window`` tokens."""
    reserve = output_reserve(window, max_tokens)
    ratio_buffer = math.ceil((1 - AUTO_COMPACT_BUFFER_RATIO) * (window - reserve))
    buffer = min(max(reserve, ratio_buffer), AUTO_COMPACT_BUFFER_CAP)
    return window - reserve - buffer


def prune_last(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """cn's ``pruneLastMessage``: drop the last message, or the last two when the one before it is
    a user message or an assistant message with tool calls. A tool result goes back to and with
    the assistant message that called it, so no call of a parallel batch is left unanswered."""
    if len(messages) <= 1:
        return ()
    if messages[-1].role == "tool":
        index = len(messages) - 1
        while index > 0 and messages[index].role == "tool":
            index -= 1
        if messages[index].role == "assistant" and messages[index].tool_calls:
            return messages[:index]
        return messages[: index + 1]
    before = messages[-2]
    if before.role == "user" or (before.role == "assistant" and before.tool_calls):
        return messages[:-2]
    return messages[:-1]


class ContinueCliCompact(EngineBase):
    """Before a request past the threshold, a warm summary turn replaces the whole history."""

    name = "continue-cli-compact"

    def __init__(self, window: int, max_tokens: int | None = None) -> None:
        self.window = window
        self.max_tokens = max_tokens
        self.threshold = compaction_threshold(window, max_tokens)
        if self.threshold <= 0:
            raise ValueError(f"continue-cli-compact: max_tokens {max_tokens} leaves no room in a window of {window}")
        self.folded = Folded()

    def view(self, session: Session) -> tuple[Message, ...]:
        """The summary (an assistant message), then every message since."""
        return self.folded.view(session)

    def before_step(self, ctx: StepContext) -> None:
        """Compact when the next request's input reaches the threshold."""
        view = self.view(ctx.session)
        if ctx.measure(view).total_tokens < self.threshold:
            return
        if len(view) <= len(self.folded.head):
            return  # nothing but the summary: cn would compact the summary alone (not modelled)
        history = view
        limit = self.window - output_reserve(self.window, self.max_tokens) - COMPACTION_PROMPT_TOKENS
        while history and ctx.measure((*history, user_text(COMPACTION_PROMPT))).total_tokens > limit:
            pruned = prune_last(history)
            if len(pruned) == len(history):
                break
            history = pruned
        # cn goes on without compaction (it warns only when the call throws).
        request = ctx.summary_request((*history, user_text(COMPACTION_PROMPT)))
        reply = summary_reply(ctx, request, "continue-cli-compact: compaction failed")
        if reply is None:
            return
        self.folded.land((assistant_note(view, reply.text()),), len(ctx.session.derive_messages()))
        ctx.declare_rewrite("checkpoint")


def factory(window: int, options: EngineOptions) -> ContinueCliCompact:
    """``continue-cli-compact``; ``--engine-config``: ``max_tokens`` (the model's configured output
    cap; unset, 35% of the window up to 64,000)."""
    config = read_settings("continue-cli-compact", options.config, DEFAULTS)
    return ContinueCliCompact(window, config["max_tokens"])  # type: ignore[arg-type]
