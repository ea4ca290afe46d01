"""``swe-agent-last-n-observations``: SWE-agent's ``LastNObservations`` history processor
(SWE-agent/SWE-agent, ``sweagent/agent/history_processors.py``).

Every request, all observations but the newest ``n`` (default 5, as in the SWE-agent paper's
configuration) are elided: a tool result's content becomes ``Old environment output: (K lines
omitted)``. The first observation (SWE-agent's instance template; here the user's task, the
first message) is never elided. With ``polling`` p > 1 the elision edge only moves every p
observations, so between ``n`` and ``n + p`` of them stay whole and the prefix is rewritten
once per p steps instead of every step. Each move of the edge is a declared rewrite (``mask``).
"""

from __future__ import annotations

from collections.abc import Sequence

from prefixbench.kernel import EngineBase, EngineOptions, Message, Session, StepContext

from prefixbench.kernel.strategies.foldview import replace_results, tool_text
from prefixbench.kernel.strategies.settings import read_settings


class LastNObservations(EngineBase):
    """Elides all tool results but the newest ``n`` (the edge moving every ``polling`` observations)."""

    name = "swe-agent-last-n-observations"

    def __init__(self, n: int = 5, polling: int = 1) -> None:
        if n <= 0 or polling <= 0:
            raise ValueError(f"n and polling must be positive integers, got n={n}, polling={polling}")
        self.n, self.polling = n, polling
        self.elided = 0

    def omitted(self, messages: Sequence[Message]) -> set[int]:
        """Indices of the tool results elided."""
        observations = [0, *(index for index, m in enumerate(messages) if m.role == "tool")] if messages else []
        last = max(0, (len(observations) // self.polling) * self.polling - self.n)
        return set(observations[1:last])

    def view(self, session: Session) -> tuple[Message, ...]:
        messages = session.derive_messages()
        omitted = self.omitted(messages)
        return tuple(elide(m) if index in omitted else m for index, m in enumerate(messages))

    def before_step(self, ctx: StepContext) -> None:
        elided = len(self.omitted(ctx.session.derive_messages()))
        if elided != self.elided:
            self.elided = elided
            ctx.declare_rewrite("mask", elided=elided)


def elide(message: Message) -> Message:
    """The tool message with its output replaced by a line count."""
    lines = len(tool_text(message).splitlines())
    return replace_results(message, f"Old environment output: ({lines} lines omitted)")


def factory(window: int, options: EngineOptions) -> LastNObservations:
    """``swe-agent-last-n-observations``; ``--engine-config``: ``n``, ``polling``."""
    config = read_settings("swe-agent-last-n-observations", options.config, {"n": 5, "polling": 1})
    return LastNObservations(config["n"], config["polling"])  # type: ignore[arg-type]
