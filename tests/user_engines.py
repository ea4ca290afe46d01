"""Small user engines the tests load by import path (``tests.user_engines:...``)."""

from __future__ import annotations

from prefixbench.kernel import EngineBase, EngineOptions, Message, Session, StepContext, count_tokens


class Truncating(EngineBase):
    """Drops the oldest messages past 80% of the window; declares the drop only when asked to."""

    name = "truncating"

    def __init__(self, window: int, declare: bool) -> None:
        self.window, self.declare, self.dropped = window, declare, 0

    def before_step(self, ctx: StepContext) -> None:
        messages = ctx.messages()
        if count_tokens(messages[self.dropped :], ctx.routed) < 0.8 * self.window:
            return
        while count_tokens(messages[self.dropped :], ctx.routed) > 0.5 * self.window or messages[self.dropped].role == "tool":
            self.dropped += 1
        if self.declare:
            ctx.declare_rewrite("truncate")

    def view(self, session: Session) -> tuple[Message, ...]:
        return session.derive_messages()[self.dropped :]


def silent(window: int, options: EngineOptions) -> Truncating:
    """Truncates without a word: no-silent-rewrite must fail."""
    return Truncating(window, declare=False)


def declared(window: int, options: EngineOptions) -> Truncating:
    """Truncates and declares it: every break is explained (but it never summarizes)."""
    engine = Truncating(window, declare=True)
    engine.name = "declared-truncating"
    return engine


def raises(window: int, options: EngineOptions) -> Truncating:
    """A factory that fails."""
    raise ValueError(f"no engine for window {window}")


def not_an_engine(window: int, options: EngineOptions) -> object:
    """A factory that returns something else."""
    return object()


NOT_CALLABLE = 42


def configurable(window: int, options: EngineOptions) -> Truncating:
    """Declares its truncations when its ``--engine-config`` table says ``declare = true``."""
    declare = options.config.get("declare", False)
    if not isinstance(declare, bool):
        raise ValueError(f"declare must be true or false, got {declare!r}")
    engine = Truncating(window, declare=declare)
    engine.name = f"configurable-{'declared' if declare else 'silent'}"
    return engine
