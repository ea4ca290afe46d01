"""``aider-chat-summary``: aider's chat history summary (Aider-AI/aider, ``aider/history.py``
``ChatSummary``, driven from ``aider/coders/base_coder.py``).

aider keeps two lists: ``done_messages`` (finished exchanges) and ``cur_messages`` (the
exchange in progress). When a reply's edits land, the current messages move to the done list
and, if the done list is over ``max_chat_history_tokens`` (the model's setting:
``min(max(max_input_tokens / 16, 1024), 8192)``), a background thread summarizes it; the
result replaces the done list before the next request is formatted. Here:

* the move back happens before every step (``move_back = "step"``, the default: each tool step
  stands for a reply whose edits landed and the reflected lint or test output it drew; the
  newest step, call and result together, is the current exchange) or only at a new user turn
  (``move_back = "turn"``); the done list is every message of the view before that point;
* the summary (``summarize_real``): the tail is the newest messages that stay under half the
  budget, moved back until the head ends on an assistant message (and, here, until the tail
  does not open on a tool result, so a call and its result stay together); a head of at most
  four messages, or a fourth level of recursion, summarizes everything instead; the head, as
  far as ``window - 512`` tokens reach, goes to one cold call (its own system prompt, one user
  message holding the user and assistant text, each tool result as user text: the reflected
  output aider sends back as a user message; no tools); ``summary + tail`` is kept when it
  fits the budget, otherwise summarized again one level deeper;
* the summary is one user message opening with aider's summary prefix; an assistant ``Ok.``
  follows when the kept list does not end on an assistant message. The rewrite is declared
  (``checkpoint``).
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

from prefixbench.kernel.strategies.foldview import tokens_of
from prefixbench.kernel.strategies.history import assistant_note
from prefixbench.kernel.strategies.settings import read_settings

SUMMARIZE_PROMPT = (
    "Briefly summarize this part of a longer conversation about programming, in less detail for "
    "the older parts and more for the newest. Begin a new paragraph at each change of topic. Name "
    "the functions, libraries, packages and file names discussed, but include no fenced code. The "
    "conversation goes on after the summary, so do not wrap it up. Write it as the user, speaking "
    "to the assistant as you, starting with \"I asked you\"."
)
#: What opens every summary message (aider prefixes the reply with a fixed sentence).
SUMMARY_PREFIX = "I talked with you earlier about several things.\n"
ACK = "Ok."
#: aider splits no list of at most this many messages, and stops recursing past this depth.
MIN_SPLIT = 4
MAX_DEPTH = 3
#: Kept free of the summarizer's input limit (``max_input_tokens - 512``).
INPUT_RESERVE = 512

DEFAULTS: dict[str, object] = {"max_chat_history_tokens": None, "move_back": "step", "weak_model": ""}
MOVE_BACK = ("step", "turn")


def history_budget(window: int) -> int:
    """aider's ``max_chat_history_tokens`` for a model whose input limit is ``window``."""
    return int(min(max(window / 16, 1024), 8192))


class SummaryFailed(Exception):
    """The summary call was refused or came back empty."""


class AiderChatSummary(EngineBase):
    """Summarize the finished messages once they pass a small budget; the current exchange stays."""

    name = "aider-chat-summary"

    def __init__(
        self, window: int, max_chat_history_tokens: int | None = None, move_back: str = "step", weak_model: str = ""
    ) -> None:
        if move_back not in MOVE_BACK:
            raise ValueError(f"aider-chat-summary: move_back must be one of {', '.join(MOVE_BACK)}, got {move_back!r}")
        self.window = window
        self.budget = history_budget(window) if max_chat_history_tokens is None else max_chat_history_tokens
        self.move_back = move_back
        #: The model the summary goes to ("": the routed one).
        self.weak_model = weak_model
        #: The done list as last summarized (a copy of the messages it keeps), and the session
        #: index the messages after it start at.
        self.done: tuple[Message, ...] = ()
        self.cut = 0

    def view(self, session: Session) -> tuple[Message, ...]:
        """The summarized done list, then every message since."""
        return (*self.done, *session.derive_messages()[self.cut :])

    def boundary(self, messages: tuple[Message, ...]) -> int:
        """Session index where the current exchange starts: the newest message (step) or the
        current turn's user message (turn); -1 when nothing has moved back yet."""
        if self.move_back == "turn":
            starts = [index for index, message in enumerate(messages) if message.role == "user"]
            return starts[-1] if starts and starts[-1] > 0 else -1
        if len(messages) < 2:
            return -1
        # The newest step (the assistant's call and its results: the reflected output) is the
        # current exchange; a call and its result never part.
        index = len(messages)
        while index > 0 and messages[index - 1].role == "tool":
            index -= 1
        if index < len(messages) and index > 0 and messages[index - 1].role == "assistant":
            index -= 1
        return min(index, len(messages) - 1)

    def before_step(self, ctx: StepContext) -> None:
        """Summarize the done list when it is over the budget."""
        messages = ctx.session.derive_messages()
        boundary = self.boundary(messages)
        if boundary <= self.cut:
            return
        done = (*self.done, *messages[self.cut : boundary])
        if tokens_of(done) <= self.budget:
            return
        try:
            summarized = self.summarize(ctx, list(done))
        except SummaryFailed as error:
            warn(ctx.session, f"aider-chat-summary: summary call failed: {error}")
            return
        if summarized and summarized[-1].role != "assistant":
            summarized.append(assistant_note(messages, ACK))
        self.done, self.cut = tuple(summarized), boundary
        ctx.declare_rewrite("checkpoint")

    def summarize(self, ctx: StepContext, messages: list[Message], depth: int = 0) -> list[Message]:
        """aider's ``summarize_real``: split off a tail under half the budget, summarize the head,
        recurse while the result is still over the budget."""
        sizes = [tokens_of([message]) for message in messages]
        if sum(sizes) <= self.budget and depth == 0:
            return messages
        if len(messages) <= MIN_SPLIT or depth > MAX_DEPTH:
            return [self.summarize_all(ctx, messages)]
        split = split_index(messages, sizes, self.budget // 2)
        if split <= MIN_SPLIT:
            return [self.summarize_all(ctx, messages)]
        head, tail = messages[:split], messages[split:]
        limit = self.window - INPUT_RESERVE
        kept: list[Message] = []
        total = 0
        for message, size in zip(head, sizes[:split], strict=True):
            total += size
            if total > limit:
                break
            kept.append(message)
        summary = self.summarize_all(ctx, kept)
        if tokens_of([summary]) + sum(sizes[split:]) < self.budget:
            return [summary, *tail]
        return self.summarize(ctx, [summary, *tail], depth + 1)

    def summarize_all(self, ctx: StepContext, messages: list[Message]) -> Message:
        """One cold call on the text of ``messages``; the summary as a user message. A tool result
        stands for the lint or test output aider sends back as a user message, so it is a
        ``# USER`` section like the user's own."""
        content = "".join(
            f"# {label}\n{text}{'' if not text or text.endswith(chr(10)) else chr(10)}"
            for message in messages
            if message.role in ("user", "assistant", "tool")
            for label, text in ((section_role(message), section_text(message)),)
        )
        header = ctx.routed or ctx.header()
        if header is None:
            raise SummaryFailed("no routed header")
        model = self.weak_model or header.envelope.model
        info = ctx.catalog(header.envelope.provider, model)
        envelope = info.wire_envelope(msgspec.structs.replace(header.envelope, model=model))
        reply = ctx.client(
            Request(envelope, (user_text(content),), SUMMARIZE_PROMPT, (), info.default_max_tokens, "compaction")
        )
        if reply.error is not None or not reply.text().strip():
            raise SummaryFailed(str(reply.error or "no text"))
        return user_text(SUMMARY_PREFIX + reply.text().strip())


def section_role(message: Message) -> str:
    """The role a message is written under in the summary input (a tool result is the user's)."""
    return "ASSISTANT" if message.role == "assistant" else "USER"


def section_text(message: Message) -> str:
    """A message's text in the summary input: its text blocks, or a tool message's results."""
    if message.role == "tool":
        return "".join(item.text for result in message.tool_results for item in result.content)
    return message.text()


def split_index(messages: list[Message], sizes: list[int], half: int) -> int:
    """Where the tail starts: the newest messages while they stay under ``half`` tokens, then back
    until the head ends on an assistant message and the tail opens on no tool result."""
    tail = 0
    split = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        if tail + sizes[index] < half:
            tail += sizes[index]
            split = index
        else:
            break
    while split > 1 and (
        messages[split - 1].role != "assistant" or (split < len(messages) and messages[split].role == "tool")
    ):
        split -= 1
    return split


def factory(window: int, options: EngineOptions) -> AiderChatSummary:
    """``aider-chat-summary``; ``--engine-config``: ``max_chat_history_tokens``, ``move_back`` ("step" or
    "turn"), ``weak_model`` (the model the summary goes to; empty: the routed one)."""
    config = read_settings("aider-chat-summary", options.config, DEFAULTS)
    return AiderChatSummary(
        window, config["max_chat_history_tokens"], config["move_back"], config["weak_model"]  # type: ignore[arg-type]
    )
