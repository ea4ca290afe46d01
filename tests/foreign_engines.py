"""Small engines the way other teams write theirs, from the docs alone (tests/unit/workloads/test_foreign_engines.py).

Each does one thing a real agent's compaction gets wrong: it sends tool calls and results a
strict provider refuses, never compacts while the provider refuses it for another reason,
prints while it runs, calls ``sys.exit()``, or sends no message at all.
"""

from __future__ import annotations

import sys
import time

from prefixbench.kernel import EngineBase, EngineOptions, Message, Reasoning, Session, StepContext, ToolCall


def _first_pair(messages: tuple[Message, ...]) -> int | None:
    """Index of the first assistant row with tool calls that its result row follows."""
    return next(
        (i for i in range(len(messages) - 1)
         if messages[i].role == "assistant" and messages[i].tool_calls and messages[i + 1].role == "tool"),
        None,
    )


class SwapsFirstPair(EngineBase):
    """Once past half the window, sends the first tool result before its tool call, from then on
    (one declared rewrite): a cache-honest engine that a chat-completions endpoint refuses."""

    name = "swaps-first-pair"

    def __init__(self, window: int) -> None:
        self.window, self.swapped = window, False

    def before_step(self, ctx: StepContext) -> None:
        if not self.swapped and ctx.measure(self.view(ctx.session)).total_tokens > 0.5 * self.window:
            self.swapped = True
            ctx.declare_rewrite("reorder")

    def view(self, session: Session) -> tuple[Message, ...]:
        messages = list(session.derive_messages())
        at = _first_pair(tuple(messages)) if self.swapped else None
        if at is not None:
            messages[at], messages[at + 1] = messages[at + 1], messages[at]
        return tuple(messages)


class DropsFirstCallRow(EngineBase):
    """Once past half the window, drops the assistant row of the first tool call and keeps its
    result (a truncation cut between a call and its result), declared once."""

    name = "drops-first-call-row"

    def __init__(self, window: int) -> None:
        self.window, self.dropped = window, False

    def before_step(self, ctx: StepContext) -> None:
        if not self.dropped and ctx.measure(self.view(ctx.session)).total_tokens > 0.5 * self.window:
            self.dropped = True
            ctx.declare_rewrite("truncate")

    def view(self, session: Session) -> tuple[Message, ...]:
        messages = session.derive_messages()
        at = _first_pair(messages) if self.dropped else None
        return messages if at is None else (*messages[:at], *messages[at + 1 :])


class StripsReasoning(EngineBase):
    """Never compacts, and strips every reasoning block of tool-call turns (declared once, at
    its first step): a DeepSeek endpoint refuses it from the first such turn, so its prompts grow
    past the window while refused for the reasoning."""

    name = "strips-reasoning"

    def before_step(self, ctx: StepContext) -> None:
        if not ctx.session.derive_messages()[1:]:
            ctx.declare_rewrite("strip-reasoning")

    def view(self, session: Session) -> tuple[Message, ...]:
        return tuple(
            Message(m.role, tuple(b for b in m.blocks if not isinstance(b, Reasoning)))
            if m.role == "assistant" and any(isinstance(b, ToolCall) for b in m.blocks) else m
            for m in session.derive_messages()
        )


class Prints(EngineBase):
    """Prints a debugging line on standard output at every call."""

    name = "prints"

    def before_step(self, ctx: StepContext) -> None:
        print(f"debug: before_step with {len(ctx.messages())} messages")

    def view(self, session: Session) -> tuple[Message, ...]:
        print("debug: view")
        return session.derive_messages()


class Exits(EngineBase):
    """Calls ``sys.exit(3)`` at its 4th step."""

    name = "exits"

    def __init__(self) -> None:
        self.steps = 0

    def before_step(self, ctx: StepContext) -> None:
        self.steps += 1
        if self.steps == 4:
            sys.exit(3)


class EmptyView(EngineBase):
    """Sends no message at all once the session has a few."""

    name = "empty-view"

    def view(self, session: Session) -> tuple[Message, ...]:
        messages = session.derive_messages()
        return () if len(messages) > 4 else messages


class SlowFirstStep(EngineBase):
    """Sleeps at its first step (a slow engine, long enough for a progress line)."""

    name = "slow-first-step"

    def __init__(self, seconds: float) -> None:
        self.seconds, self.slept = seconds, False

    def before_step(self, ctx: StepContext) -> None:
        if not self.slept:
            self.slept = True
            time.sleep(self.seconds)


def swaps_first_pair(window: int, options: EngineOptions) -> SwapsFirstPair:
    return SwapsFirstPair(window)


def drops_first_call_row(window: int, options: EngineOptions) -> DropsFirstCallRow:
    return DropsFirstCallRow(window)


def strips_reasoning(window: int, options: EngineOptions) -> StripsReasoning:
    return StripsReasoning()


def prints(window: int, options: EngineOptions) -> Prints:
    print("debug: factory called")
    return Prints()


def exits(window: int, options: EngineOptions) -> Exits:
    return Exits()


def empty_view(window: int, options: EngineOptions) -> EmptyView:
    return EmptyView()


def slow_first_step(window: int, options: EngineOptions) -> SlowFirstStep:
    return SlowFirstStep(float(options.config.get("seconds", 0.5)))
