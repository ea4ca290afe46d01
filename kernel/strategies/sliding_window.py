"""``sliding-window``: drop the oldest messages so the prompt fits, keeping tool pairs whole.

Before each step, when the prompt the engine would send (counted as the provider counted the last
request: ``ctx.usage_tokens``) is over its budget (the window less the
model's output cap, so the reply fits), it drops messages from the head until it fits again. A
cut never opens on a tool result whose call it dropped. Each drop changes the first message the
provider sees, so it is declared (``truncate``) and the next request is a cold prefill of
everything after the static head: once the window is full that is every request, which is why
the published sliding windows keep almost no cache hits (docs/strategies.md).

Settings (``--engine-config``, table ``[sliding-window]``):

* ``budget_tokens``: the most the prompt may hold (default: window - the route's output cap);
* ``low_water_tokens``: drop down to this many when over budget (default: the budget, so it
  drops as little as fits each time; a lower mark drops more at once and so less often).
"""

from __future__ import annotations

from prefixbench.kernel import EngineBase, EngineOptions, Message, Session, StepContext

from prefixbench.kernel.strategies.history import pair_safe_start
from prefixbench.kernel.strategies.settings import read_settings


class SlidingWindow(EngineBase):
    """Sends the newest messages that fit the budget; the head it dropped stays dropped."""

    name = "sliding-window"

    def __init__(self, window: int, budget_tokens: int | None = None, low_water_tokens: int | None = None) -> None:
        self.window = window
        self.budget_tokens = budget_tokens
        self.low_water_tokens = low_water_tokens
        #: Messages of the session dropped from the head so far.
        self.start = 0

    def view(self, session: Session) -> tuple[Message, ...]:
        """The session's messages from the first kept one."""
        return session.derive_messages()[self.start :]

    def budget(self, ctx: StepContext) -> int:
        """The budget in tokens: the setting, else the window less the route's output cap."""
        if self.budget_tokens is not None:
            return self.budget_tokens
        return self.window - output_cap(ctx)

    def before_step(self, ctx: StepContext) -> None:
        """Drop from the head until the prompt fits (and declare it when anything was dropped)."""
        messages = ctx.messages()
        kept = messages[self.start :]
        total = ctx.usage_tokens(kept)  # the provider's count where it reported one
        budget = self.budget(ctx)
        if total <= budget:
            return
        target = min(budget, self.low_water_tokens if self.low_water_tokens is not None else budget)
        measurement = ctx.measure(kept)
        scale = total / measurement.total_tokens if measurement.total_tokens else 1.0
        prices = [node.tokens * scale for node in measurement.nodes]
        start = self.start
        last = len(messages) - 1
        while total > target and start < last:
            nxt = pair_safe_start(messages, start + 1)
            total -= sum(prices[start - self.start : nxt - self.start])
            start = nxt
        if start != self.start:
            self.start = start
            ctx.declare_rewrite("truncate", dropped=start)


def output_cap(ctx: StepContext) -> int:
    """The routed model's default output cap (0 when the context names no route)."""
    header = ctx.routed or ctx.header()
    if header is None:
        return 0
    envelope = header.envelope
    return ctx.catalog(envelope.provider, envelope.model).default_max_tokens


def factory(window: int, options: EngineOptions) -> SlidingWindow:
    """A sliding window sized to ``window`` (settings: ``budget_tokens``, ``low_water_tokens``)."""
    settings = read_settings(SlidingWindow.name, options.config, {"budget_tokens": None, "low_water_tokens": None})
    return SlidingWindow(window, settings["budget_tokens"], settings["low_water_tokens"])
