"""OpenHands condensers (All-Hands-AI/OpenHands, ``openhands/memory/condenser/impl/`` and the
defaults of ``openhands/core/config/condenser_config.py``).

OpenHands condenses a list of events (each action and each observation is one); here every
message after the system prompt is one event, so the first event is the user's task.

* ``openhands-observation-masking``: every step, the content of each tool result older than the
  newest ``attention_window`` events (default 100) is replaced by ``<MASKED>``.
* ``openhands-recent-events``: every step, only the first ``keep_first`` events (default 1) and
  the newest ``max_events - keep_first`` (default 100 in all) are sent.
* ``openhands-amortized-forgetting``: when the view holds more than ``max_size`` events (default
  100), it is cut to the first ``keep_first`` (default 1) and the newest
  ``max_size // 2 - keep_first``; the cut is kept until the next one.
* ``openhands-llm-summarizing``: the same rolling cut, with one summary event after the first
  ``keep_first``; the forgotten events (each cut to ``max_event_length`` characters, default
  10,000) and the previous summary go to a summary call as one user message with no system
  prompt and no tools (OpenHands turns prompt caching off for the condenser's model).

The two rolling condensers also condense when the next request would not fit the window: in
OpenHands the provider's context-window error makes the controller ask for a condensation.
The two others cannot shrink a view that outgrows the window on their own; there OpenHands'
controller cuts the history (``enable_history_truncation``, on by default): on the error it
keeps the first user message and roughly the newest half of the events, action-observation
pairs whole, and the cut stays until the next one. ``history_truncation = false`` turns it off
(the strategy alone). Here the check runs before the request, on the provider's count
(``ctx.usage_tokens``), at ``FIT`` of the window: a simulated run must not send the request the
provider would refuse.
Each change to what was sent is a declared rewrite (``mask``, ``truncate``, ``checkpoint``).
"""

from __future__ import annotations

from collections.abc import Sequence

from prefixbench.kernel import (
    EngineBase,
    EngineOptions,
    Message,
    Session,
    StepContext,
    ToolCall,
    ToolResult,
    user_text,
    warn,
)

from prefixbench.kernel.strategies.foldview import replace_results, transcript
from prefixbench.kernel.strategies.history import cold_request, summary_reply
from prefixbench.kernel.strategies.settings import read_settings

MASKED = "<MASKED>"
SUMMARY_PROMPT = (
    "You keep the state summary of an agent at work. From the previous summary and the events "
    "below, write the new summary under these headings: USER_CONTEXT (what the user wants), "
    "COMPLETED, PENDING, CURRENT_STATE; for code also CODE_STATE, TESTS, CHANGES, DEPS and "
    "VERSION_CONTROL_STATUS. Be concise and keep task identifiers exact."
)
#: How many condensations a window overflow may run in one step before the engine gives up.
MAX_ROUNDS = 8
#: The share of the window the meter's reading may reach before a rolling condenser condenses:
#: the meter is a chars/4 estimate, and the provider counts the rendered request (its JSON
#: framing, the step's new messages), 2-3% more at 32k. OpenHands itself learns of an overflow
#: from the provider's error and condenses then; a simulated run must not send that request.
FIT = 0.9


def _no_orphans(messages: Sequence[Message], kept: list[int]) -> list[int]:
    """``kept`` (ascending indices) without tool results whose call is not kept."""
    calls = {block.call_id for i in kept for block in messages[i].blocks if isinstance(block, ToolCall)}
    out = []
    for index in kept:
        message = messages[index]
        if message.role == "tool":
            ids = {block.call_id for block in message.blocks if isinstance(block, ToolResult)}
            if not ids <= calls:
                continue
        out.append(index)
    return out


class _ControllerTruncation(EngineBase):
    """OpenHands' controller cut of the history on a context-window error (see the module doc):
    events 1 to ``cut - 1`` are forgotten (event 0, the user's task, stays)."""

    name = "openhands-controller"

    def __init__(self, window: int, history_truncation: bool) -> None:
        self.window, self.history_truncation = window, history_truncation
        self.cut = 0

    def chosen(self, messages: Sequence[Message]) -> list[int]:
        """The indices the condenser itself would send (before the controller's cut)."""
        return list(range(len(messages)))

    def kept(self, messages: Sequence[Message]) -> list[int]:
        """The indices sent: the condenser's, less what the controller cut."""
        return _no_orphans(messages, [i for i in self.chosen(messages) if i == 0 or i >= self.cut])

    def fit(self, ctx: StepContext) -> bool:
        """Cut roughly the older half while the next request would not fit; True if it cut."""
        if not self.history_truncation or self.window <= 0:
            return False
        cut_now = False
        for _ in range(MAX_ROUNDS):
            if ctx.usage_tokens(self.view(ctx.session)) <= FIT * self.window:
                return cut_now
            events = [i for i in self.kept(ctx.session.derive_messages()) if i > 0]
            if len(events) < 2:
                break
            self.cut = events[len(events) // 2]
            cut_now = True
            ctx.declare_rewrite("truncate", cut=self.cut)
        warn(ctx.session, f"{self.name}: still over the window after cutting the history")
        return cut_now


class ObservationMasking(_ControllerTruncation):
    """Masks tool results outside the newest ``attention_window`` events."""

    name = "openhands-observation-masking"

    def __init__(self, attention_window: int = 100, window: int = 0, history_truncation: bool = True) -> None:
        super().__init__(window, history_truncation)
        self.window_events = attention_window
        self.masked = 0

    def _masked(self, messages: Sequence[Message]) -> int:
        edge = len(messages) - self.window_events
        return sum(1 for index, m in enumerate(messages) if m.role == "tool" and index < edge)

    def view(self, session: Session) -> tuple[Message, ...]:
        messages = session.derive_messages()
        edge = len(messages) - self.window_events
        return tuple(
            replace_results(messages[i], MASKED) if messages[i].role == "tool" and i < edge else messages[i]
            for i in self.kept(messages)
        )

    def before_step(self, ctx: StepContext) -> None:
        masked = self._masked(ctx.session.derive_messages())
        if masked != self.masked:
            self.masked = masked
            ctx.declare_rewrite("mask", masked=masked)
        self.fit(ctx)


class RecentEvents(_ControllerTruncation):
    """The first ``keep_first`` events and the newest ones, ``max_events`` in all."""

    name = "openhands-recent-events"

    def __init__(self, keep_first: int = 1, max_events: int = 100, window: int = 0, history_truncation: bool = True) -> None:
        super().__init__(window, history_truncation)
        self.keep_first, self.max_events = keep_first, max_events
        self.sent: tuple[int, ...] = ()

    def chosen(self, messages: Sequence[Message]) -> list[int]:
        head = list(range(min(self.keep_first, len(messages))))
        tail_length = max(0, self.max_events - len(head))
        tail = [i for i in range(max(len(messages) - tail_length, 0), len(messages)) if i not in head] if tail_length else []
        return [*head, *tail]

    def view(self, session: Session) -> tuple[Message, ...]:
        messages = session.derive_messages()
        return tuple(messages[i] for i in self.kept(messages))

    def before_step(self, ctx: StepContext) -> None:
        messages = ctx.session.derive_messages()
        kept = tuple(self.kept(messages))
        if kept[: len(self.sent)] != self.sent:  # the view no longer extends the one sent before
            ctx.declare_rewrite("truncate", kept=len(kept))
        if self.fit(ctx):
            kept = tuple(self.kept(messages))
        self.sent = kept


class AmortizedForgetting(EngineBase):
    """Past ``max_size`` events, forget all but the first ``keep_first`` and the newest half."""

    name = "openhands-amortized-forgetting"
    #: Events a condensation leaves besides the head (the summarizing condenser adds its summary).
    summary_slots = 0

    def __init__(self, window: int, max_size: int = 100, keep_first: int = 1) -> None:
        if keep_first >= max_size // 2:
            raise ValueError(f"keep_first ({keep_first}) must be less than half of max_size ({max_size})")
        self.window, self.max_size, self.keep_first = window, max_size, keep_first
        self.forgotten: set[int] = set()
        self.summary: Message | None = None

    def kept(self, messages: Sequence[Message]) -> list[int]:
        """Indices of the events not forgotten."""
        return _no_orphans(messages, [i for i in range(len(messages)) if i not in self.forgotten])

    def view(self, session: Session) -> tuple[Message, ...]:
        messages = session.derive_messages()
        events = [messages[i] for i in self.kept(messages)]
        if self.summary is not None:
            events.insert(min(self.keep_first, len(events)), self.summary)
        return tuple(events)

    def size(self, session: Session) -> int:
        """Events in the view (the summary counts as one)."""
        return len(self.view(session))

    def before_step(self, ctx: StepContext) -> None:
        """Condense past ``max_size`` events, or while the next request would not fit the window."""
        for _ in range(MAX_ROUNDS):
            size = self.size(ctx.session)
            over = ctx.usage_tokens(self.view(ctx.session)) > FIT * self.window
            if size <= self.max_size and not over:
                return
            target = self.max_size // 2 if size > self.max_size else min(self.max_size, size) // 2
            if not self.condense(ctx, target):
                return
        warn(ctx.session, f"{self.name}: still over the window after {MAX_ROUNDS} condensations")

    def condense(self, ctx: StepContext, target: int) -> bool:
        """Forget the events between the head and the newest ones; False when nothing can go."""
        messages = ctx.session.derive_messages()
        kept = self.kept(messages)
        head = kept[: self.keep_first]
        from_tail = max(1, target - len(head) - self.summary_slots)
        forget = kept[len(head) : -from_tail]
        if not forget:
            return False
        if not self.land(ctx, messages, forget):
            return False
        self.forgotten.update(forget)
        ctx.declare_rewrite(self.rewrite_kind, forgotten=len(forget))
        return True

    rewrite_kind = "truncate"

    def land(self, ctx: StepContext, messages: Sequence[Message], forget: list[int]) -> bool:
        """Nothing to do besides forgetting (the summarizing condenser writes its summary here)."""
        return True


class LLMSummarizing(AmortizedForgetting):
    """Amortized forgetting with a summary event of what was forgotten (a cold summary call)."""

    name = "openhands-llm-summarizing"
    summary_slots = 1
    rewrite_kind = "checkpoint"

    def __init__(self, window: int, max_size: int = 100, keep_first: int = 1, max_event_length: int = 10_000) -> None:
        super().__init__(window, max_size, keep_first)
        self.max_event_length = max_event_length
        self.summary_text = ""

    def land(self, ctx: StepContext, messages: Sequence[Message], forget: list[int]) -> bool:
        events = "\n".join(
            f"<EVENT id={i}>\n{transcript([messages[i]])[: self.max_event_length]}\n</EVENT>" for i in forget
        )
        text = (
            f"{SUMMARY_PROMPT}\n\n<PREVIOUS SUMMARY>\n{self.summary_text[: self.max_event_length]}\n"
            f"</PREVIOUS SUMMARY>\n\n{events}\nNow write the summary."
        )
        reply = summary_reply(ctx, cold_request(ctx, (user_text(text),), ""), f"{self.name}: summary call failed")
        if reply is None:
            return False
        self.summary_text = reply.text().strip()
        self.summary = user_text(self.summary_text)
        return True


def observation_masking(window: int, options: EngineOptions) -> ObservationMasking:
    """``openhands-observation-masking``; ``--engine-config``: ``attention_window``, ``history_truncation``."""
    config = read_settings("openhands-observation-masking", options.config, {"attention_window": 100, "history_truncation": True})
    return ObservationMasking(max(1, config["attention_window"]), window, bool(config["history_truncation"]))  # type: ignore[arg-type]


def recent_events(window: int, options: EngineOptions) -> RecentEvents:
    """``openhands-recent-events``; ``--engine-config``: ``keep_first``, ``max_events``, ``history_truncation``."""
    defaults = {"keep_first": 1, "max_events": 100, "history_truncation": True}
    config = read_settings("openhands-recent-events", options.config, defaults)
    return RecentEvents(config["keep_first"], max(1, config["max_events"]), window, bool(config["history_truncation"]))  # type: ignore[arg-type]


def amortized_forgetting(window: int, options: EngineOptions) -> AmortizedForgetting:
    """``openhands-amortized-forgetting``; ``--engine-config``: ``max_size``, ``keep_first``."""
    config = read_settings("openhands-amortized-forgetting", options.config, {"max_size": 100, "keep_first": 1})
    return AmortizedForgetting(window, config["max_size"], config["keep_first"])  # type: ignore[arg-type]


def llm_summarizing(window: int, options: EngineOptions) -> LLMSummarizing:
    """``openhands-llm-summarizing``; ``--engine-config``: ``max_size``, ``keep_first``, ``max_event_length``."""
    defaults = {"max_size": 100, "keep_first": 1, "max_event_length": 10_000}
    config = read_settings("openhands-llm-summarizing", options.config, defaults)
    return LLMSummarizing(window, config["max_size"], config["keep_first"], config["max_event_length"])  # type: ignore[arg-type]
