"""Tiny strategies the bench tests load by import path (``tests.bench_engines:...``)."""

from __future__ import annotations

from prefixbench.kernel import EngineBase, EngineOptions, Message, Session, StepContext, Text, ToolResult


class KeepAll(EngineBase):
    """Never compacts: every request sends the whole history, past the window if it grows so."""

    name = "keep-all"

    def before_step(self, ctx: StepContext) -> None:
        return None

    def view(self, session: Session) -> tuple[Message, ...]:
        return session.derive_messages()


def keep_all(window: int, options: EngineOptions) -> KeepAll:
    """The never-compacting baseline."""
    return KeepAll()


class MaskDeclared(EngineBase):
    """Replaces every tool result but the newest ``keep`` with a one-line placeholder, and declares
    a rewrite at each step that masks one more: the prefix changes on almost every request."""

    name = "mask-declared"

    def __init__(self, keep: int = 3) -> None:
        self.keep, self.masked = keep, 0

    def _results(self, messages: tuple[Message, ...]) -> list[int]:
        return [i for i, m in enumerate(messages) if m.tool_results]

    def before_step(self, ctx: StepContext) -> None:
        older = max(0, len(self._results(ctx.messages())) - self.keep)
        if older > self.masked:
            self.masked = older
            ctx.declare_rewrite("mask")

    def view(self, session: Session) -> tuple[Message, ...]:
        messages = session.derive_messages()
        hidden = set(self._results(messages)[: self.masked])
        out = []
        for i, message in enumerate(messages):
            if i in hidden:
                blocks = tuple(
                    ToolResult(b.call_id, (Text("[older tool output hidden]"),)) if isinstance(b, ToolResult) else b
                    for b in message.blocks
                )
                message = Message(message.role, blocks)
            out.append(message)
        return tuple(out)


def mask_declared(window: int, options: EngineOptions) -> MaskDeclared:
    """Observation masking with a declared rewrite on nearly every request."""
    return MaskDeclared()


class ClearInBatches(MaskDeclared):
    """Tool-result clearing in batches: past 70% of the window, hides every tool result but the
    newest ``keep`` at once and declares one rewrite; below it, the prefix stays as it was."""

    name = "clear-in-batches"

    def __init__(self, window: int, keep: int = 3) -> None:
        super().__init__(keep)
        self.window = window

    def before_step(self, ctx: StepContext) -> None:
        if ctx.measure(self.view(ctx.session)).total_tokens < 0.7 * self.window:
            return
        older = max(0, len(self._results(ctx.messages())) - self.keep)
        if older > self.masked:
            self.masked = older
            ctx.declare_rewrite("clear")


def clear_in_batches(window: int, options: EngineOptions) -> ClearInBatches:
    """Clears old tool results only when the window fills."""
    return ClearInBatches(window)
