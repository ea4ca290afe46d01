"""``opencode-summary``: OpenCode's compaction (sst/opencode, ``packages/opencode/src/session/
compaction.ts`` and ``overflow.ts``): tool-output pruning, then a summary in ``prepend`` mode.

* Overflow: the next request reaches ``usable = window - max_output - reserved``, where
  ``max_output`` is the model's output cap (at most 32,000) and ``reserved`` is
  ``min(20,000, max_output)`` unless configured.
* Pruning, once per user turn (OpenCode prunes when a prompt's loop ends; here, before the first
  request of the next turn): walking back from the newest message, the two newest user turns
  are skipped, then tool outputs are added up (``ceil(chars/4)``); those past the newest 40,000
  tokens of output are cleared to a fixed placeholder, if together they free more than 20,000
  tokens. It stops at the last summary and at an output already cleared. A prune is a declared
  rewrite (``prune``).
* Summary: the kept tail is the newest turns that fit ``preserve_recent_tokens`` (default
  ``min(15,000, max(2,000, floor(usable/4)))``), a turn that does not fit is split at the first
  message from which the rest fits; everything before the tail is serialized as text (each tool
  output cut to 2,000 characters, cleared outputs as the placeholder) into one user message with
  the previous summary, sent with no system prompt and no tools: it shares no prefix with the
  conversation. The view becomes a user request for a summary, the summary as an assistant
  message, then the tail (``checkpoint``).
"""

from __future__ import annotations

import math

from prefixbench.kernel import (
    EngineBase,
    EngineOptions,
    Message,
    Reasoning,
    Session,
    StepContext,
    Text,
    user_text,
    warn,
)

from prefixbench.kernel.strategies.foldview import (
    Folded,
    replace_results,
    skip_tool_results,
    tokens_of,
    tool_text,
    transcript,
)
from prefixbench.kernel.strategies.history import cold_request, reasoning_stand_in, summary_reply
from prefixbench.kernel.strategies.settings import read_settings

CLEARED = "[Old tool result content cleared]"
PRUNE_PROTECT = 40_000
PRUNE_MINIMUM = 20_000
OUTPUT_TOKEN_MAX = 32_000
TOOL_OUTPUT_MAX_CHARS = 2_000
ASK = "Summarize what we have done so far in this session."
SUMMARY_PROMPT = (
    "Write a summary of the conversation below for the agent that will continue it: what was "
    "done, what is in progress, which files are involved, and what comes next. If a previous "
    "summary is given, fold it in."
)

DEFAULTS: dict[str, object] = {"prune": True, "reserved": None, "preserve_recent_tokens": None}


class OpenCodeSummary(EngineBase):
    """Prune old tool outputs per turn; on overflow, a cold text summary and a recent tail."""

    name = "opencode-summary"

    def __init__(
        self, window: int, prune: bool = True, reserved: int | None = None, preserve_recent_tokens: int | None = None
    ) -> None:
        self.window = window
        self.prune_enabled = prune
        self.reserved = reserved
        self.preserve = preserve_recent_tokens
        self.folded = Folded()
        self.summary: str | None = None
        #: Session indices of tool messages whose output was cleared.
        self.cleared: set[int] = set()
        #: Session index of the last user message a prune pass ran for.
        self.pruned_for = -1

    def view(self, session: Session) -> tuple[Message, ...]:
        """The summary exchange, then the live messages, cleared outputs as the placeholder."""
        messages = session.derive_messages()
        live = tuple(
            replace_results(m, CLEARED) if index in self.cleared else m
            for index, m in enumerate(messages)
            if index >= self.folded.cut
        )
        return (*self.folded.head, *live)

    def usable(self, ctx: StepContext) -> int:
        """The overflow threshold for the routed model."""
        header = ctx.routed or ctx.header()
        cap = OUTPUT_TOKEN_MAX
        if header is not None:
            cap = min(ctx.catalog(header.envelope.provider, header.envelope.model).default_max_tokens, OUTPUT_TOKEN_MAX)
        reserved = self.reserved if self.reserved is not None else min(20_000, cap)
        return max(0, self.window - cap - reserved)

    def before_step(self, ctx: StepContext) -> None:
        """Prune at a new user turn; compact when the next request reaches the usable limit."""
        messages = ctx.session.derive_messages()
        if self.prune_enabled and messages and messages[-1].role == "user" and len(messages) - 1 > self.pruned_for:
            self.pruned_for = len(messages) - 1
            self.prune(ctx, messages)
        usable = self.usable(ctx)
        tokens = ctx.usage_tokens(self.view(ctx.session))
        if tokens < usable:
            return
        self.compact(ctx, usable)

    def prune(self, ctx: StepContext, messages: tuple[Message, ...]) -> None:
        """Clear the outputs past the newest PRUNE_PROTECT tokens, if that frees more than PRUNE_MINIMUM."""
        turns = total = freed = 0
        chosen: list[int] = []
        for index in range(len(messages) - 1, self.folded.cut - 1, -1):
            message = messages[index]
            if message.role == "user":
                turns += 1
            if turns < 2 or message.role != "tool":
                continue
            if index in self.cleared:
                break
            estimate = math.ceil(len(tool_text(message)) / 4)
            total += estimate
            if total <= PRUNE_PROTECT:
                continue
            freed += estimate
            chosen.append(index)
        if freed > PRUNE_MINIMUM:
            self.cleared.update(chosen)
            ctx.declare_rewrite("prune", cleared=len(chosen))

    def compact(self, ctx: StepContext, usable: int) -> None:
        """Summarize everything before the kept tail into a summary exchange."""
        live = self.view(ctx.session)[len(self.folded.head) :]
        budget = self.preserve if self.preserve is not None else min(15_000, max(2_000, usable // 4))
        keep = tail_start(live, budget)
        head = live[:keep] if keep else live
        if not head:
            warn(ctx.session, "opencode-summary: overflow with nothing to summarize")
            return
        text = SUMMARY_PROMPT
        if self.summary is not None:
            text += f"\n\n<previous-summary>\n{self.summary}\n</previous-summary>"
        text += "\n\n" + transcript(head, TOOL_OUTPUT_MAX_CHARS)
        reply = summary_reply(ctx, cold_request(ctx, (user_text(text),), ""), "opencode-summary: summary call failed")
        if reply is None:
            return
        self.summary = reply.text().strip()
        # The summary message keeps the reply's reasoning, as OpenCode stores the reasoning part of
        # the compaction reply with it (a thinking-mode provider wants it passed back).
        thinking = tuple(block for block in reply.blocks if isinstance(block, Reasoning))
        if not thinking:
            # The scripted summary reply carries none; where the conversation's assistant rows carry
            # a reasoning field, an empty one in the same field stands in for the real reply's.
            thinking = reasoning_stand_in(live)
        exchange = (user_text(ASK), Message("assistant", (*thinking, Text(self.summary))))
        self.folded.land(exchange, self.folded.cut + (keep if keep else len(live)))
        ctx.declare_rewrite("checkpoint")


def tail_start(live: tuple[Message, ...], budget: int) -> int:
    """Where the kept tail starts in ``live``: whole turns from the newest while they fit ``budget``,
    then the part of the next turn that fits (0: no tail). The live region counts as opening a turn."""
    # The live region after a split continues a turn whose user message was folded: it opens one.
    starts = sorted({0, *(index for index, message in enumerate(live) if message.role == "user")}) if live else []
    ends = [*starts[1:], len(live)]
    total = 0
    keep = 0
    for start, end in reversed(list(zip(starts, ends, strict=True))):
        size = tokens_of(live[start:end])
        if total + size <= budget:
            total += size
            keep = start
            continue
        for split in range(start + 1, end):
            if live[split].role != "tool" and tokens_of(live[split:end]) <= budget - total:
                keep = split
                break
        break
    return skip_tool_results(live, keep) if keep else 0


def factory(window: int, options: EngineOptions) -> OpenCodeSummary:
    """``opencode-summary``; ``--engine-config``: ``prune``, ``reserved``, ``preserve_recent_tokens``."""
    config = read_settings("opencode-summary", options.config, DEFAULTS)
    return OpenCodeSummary(window, config["prune"], config["reserved"], config["preserve_recent_tokens"])  # type: ignore[arg-type]
