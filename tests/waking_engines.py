"""User engines that ask to be woken inside an idle gap (``ctx.wake_at``), and one written before
the hook existed (tests/unit/workloads/test_engine_wake.py loads them by import path)."""

from __future__ import annotations

from prefixbench.kernel import EngineOptions, Message, Session, StepContext, ToolCall, user_text

ASK = user_text("Summarize the conversation so far.")


class Plain:
    """A third-party engine as written against the first API: no EngineBase, no on_wake."""

    name = "plain"

    def before_step(self, ctx: StepContext) -> None:
        pass

    def view(self, session: Session) -> tuple[Message, ...]:
        return session.derive_messages()

    def run_tool(self, session: Session, call: ToolCall) -> Message | None:
        return None


class Waker(Plain):
    """Asks to be woken ``after_s`` after each conversation request; when woken, records the time
    and sends a summary call of the conversation (declaring nothing: its view does not change).
    ``again_s``: when woken, ask once more that much later."""

    name = "waker"

    def __init__(self, after_s: float, again_s: float | None = None) -> None:
        self.after_ms, self.again_ms = round(after_s * 1000), None if again_s is None else round(again_s * 1000)
        self.woken: list[int] = []
        self.takes_asks: bool | None = None

    def before_step(self, ctx: StepContext) -> None:
        self.takes_asks = ctx.wake_at(ctx.now_ms() + self.after_ms)

    def on_wake(self, ctx: StepContext) -> None:
        now = ctx.now_ms()
        self.woken.append(now)
        ctx.client(ctx.summary_request([*ctx.messages(), ASK]))
        if self.again_ms is not None and len(self.woken) % 2 == 1:
            ctx.wake_at(now + self.again_ms)


class NoHook(Plain):
    """Asks to be woken but has no on_wake."""

    name = "no-hook"

    def before_step(self, ctx: StepContext) -> None:
        ctx.wake_at(ctx.now_ms() + 60_000)


class WakeRaises(Waker):
    """Its on_wake raises."""

    name = "wake-raises"

    def on_wake(self, ctx: StepContext) -> None:
        raise RuntimeError("the engine's own bug when woken")


def plain(window: int, options: EngineOptions) -> Plain:
    return Plain()


def waker(window: int, options: EngineOptions) -> Waker:
    again = options.config.get("again_s")
    return Waker(float(options.config.get("after_s", 3_000)), None if again is None else float(again))


def no_hook(window: int, options: EngineOptions) -> NoHook:
    return NoHook()


def wake_raises(window: int, options: EngineOptions) -> WakeRaises:
    return WakeRaises(3_000)
