"""``anthropic-context-editing``: Anthropic's server-side ``clear_tool_uses`` and ``clear_thinking``.

The client sends its whole history every time; the server edits it before the prompt reaches
the model (and the cache), so the edit is a pure function of the history and the settings::

    clear_tool_uses_20250919   when the prompt exceeds ``trigger`` (input tokens, or tool uses),
                               clear the results of the oldest tool uses, keeping the newest
                               ``keep``; never the tools in ``exclude_tools``; when the clearing
                               frees less than ``clear_at_least`` tokens it is not applied;
                               ``clear_tool_inputs`` empties the calls' arguments too
    clear_thinking_20251015    keep the reasoning of the newest ``thinking_keep`` assistant
                               turns (1 by default, ``"all"`` keeps all); drop the rest

A cleared result keeps its call id and carries a short placeholder. Whenever the set of cleared
results or turns grows, a message the provider cached changes: the engine declares it
(``clear_tool_uses`` / ``clear_thinking``) and the cache is read up to that message only. Once
the trigger is passed, every new tool use pushes the oldest kept one out of ``keep``, so a clear
lands on nearly every request, a few steps before the tail (docs/strategies.md).

Settings (``--engine-config``, table ``[anthropic-context-editing]``):

* ``trigger`` (input tokens; default 100,000, the documented default, but at most half the
  window: the default was written for 200k windows), ``trigger_type`` (``input_tokens`` or
  ``tool_uses``), ``keep`` (3), ``clear_at_least`` (0), ``exclude_tools`` ([]),
  ``clear_tool_inputs`` (false);
* ``clear_thinking`` (true), ``thinking_keep`` (1; 0 drops every turn's reasoning; ``"all"``);
* ``clear_tool_uses`` (true).
"""

from __future__ import annotations

from prefixbench.kernel import EngineBase, EngineOptions, Message, Session, StepContext

from prefixbench.kernel.strategies.history import clear_inputs, clear_result, tool_names, tool_uses, user_turn_starts
from prefixbench.kernel.strategies.settings import read_settings

#: The documented default trigger, in input tokens.
DEFAULT_TRIGGER_TOKENS = 100_000
#: What a cleared tool result carries.
PLACEHOLDER = "[tool result cleared by context editing]"
DEFAULTS: dict[str, object] = {
    "clear_tool_uses": True,
    "trigger": None,
    "trigger_type": "input_tokens",
    "keep": 3,
    "clear_at_least": 0,
    "exclude_tools": [],
    "clear_tool_inputs": False,
    "clear_thinking": True,
    "thinking_keep": "1",
}


class ContextEditing(EngineBase):
    """Sends the history with the server's edits applied; declares each edit that grows."""

    name = "anthropic-context-editing"

    def __init__(self, window: int, settings: dict[str, object]) -> None:
        self.window = window
        self.settings = settings
        trigger = settings["trigger"]
        self.trigger = int(trigger) if trigger is not None else min(DEFAULT_TRIGGER_TOKENS, window // 2)
        #: Call ids whose results the last request cleared.
        self.cleared: frozenset[str] = frozenset()
        #: Messages before this index lost their reasoning in the last request.
        self.thinking_before = 0

    def view(self, session: Session) -> tuple[Message, ...]:
        """The history with the current edits applied."""
        return self.edited(session.derive_messages(), self.cleared, self.thinking_before)

    def edited(self, messages: tuple[Message, ...], cleared: frozenset[str], thinking_before: int) -> tuple[Message, ...]:
        """``messages`` with ``cleared`` results (and inputs) and the reasoning before ``thinking_before`` dropped."""
        inputs = bool(self.settings["clear_tool_inputs"])
        out = []
        for index, message in enumerate(messages):
            if cleared:
                if message.role == "tool":
                    message = clear_result(message, cleared, PLACEHOLDER)
                elif inputs and message.tool_calls:
                    message = clear_inputs(message, cleared)
            if index < thinking_before and message.reasoning:
                message = Message(message.role, tuple(b for b in message.blocks if b not in message.reasoning))
            out.append(message)
        return tuple(out)

    def before_step(self, ctx: StepContext) -> None:
        """Work out the server's edits for this request from the full history; declare growth."""
        messages = ctx.messages()
        cleared = self.plan_clear(ctx, messages) if self.settings["clear_tool_uses"] else frozenset()
        thinking_before = self.plan_thinking(messages) if self.settings["clear_thinking"] else 0
        if cleared - self.cleared:
            ctx.declare_rewrite("clear_tool_uses", cleared=len(cleared))
        if thinking_before > self.thinking_before and any(m.reasoning for m in messages[self.thinking_before : thinking_before]):
            ctx.declare_rewrite("clear_thinking", before=thinking_before)
        self.cleared, self.thinking_before = cleared, thinking_before

    def plan_clear(self, ctx: StepContext, messages: tuple[Message, ...]) -> frozenset[str]:
        """The results ``clear_tool_uses`` clears in a request carrying ``messages``."""
        uses = tool_uses(messages)
        if self.settings["trigger_type"] == "tool_uses":
            triggered = len(uses) > self.trigger
        else:
            triggered = ctx.measure(messages).total_tokens > self.trigger
        if not triggered:
            return frozenset()
        names = tool_names(messages)
        excluded = set(self.settings["exclude_tools"])  # type: ignore[arg-type]
        candidates = [call_id for call_id in uses if names.get(call_id) not in excluded]
        keep = int(self.settings["keep"])
        chosen = frozenset(candidates[: max(0, len(candidates) - keep)])
        if not chosen:
            return frozenset()
        before = ctx.measure(messages).total_tokens
        after = ctx.measure(self.edited(messages, chosen, 0)).total_tokens
        if before - after < int(self.settings["clear_at_least"]):
            return frozenset()  # not worth the cache write: the strategy is not applied
        return chosen

    def plan_thinking(self, messages: tuple[Message, ...]) -> int:
        """The index before which ``clear_thinking`` drops reasoning: the start of the oldest kept turn."""
        keep = str(self.settings["thinking_keep"])
        if keep == "all":
            return 0
        starts = user_turn_starts(messages)
        count = int(keep)
        if count == 0:
            return len(messages)
        if len(starts) <= count:
            return 0
        return starts[-count]


def factory(window: int, options: EngineOptions) -> ContextEditing:
    """Context editing sized to ``window`` (settings: the module docstring)."""
    config = dict(options.config)
    if "thinking_keep" in config and isinstance(config["thinking_keep"], int) and not isinstance(config["thinking_keep"], bool):
        config["thinking_keep"] = str(config["thinking_keep"])
    settings = read_settings(ContextEditing.name, config, DEFAULTS)
    keep = settings["thinking_keep"]
    if keep != "all" and not (isinstance(keep, str) and keep.isascii() and keep.isdigit()):
        raise ValueError(f"{ContextEditing.name}: thinking_keep must be an integer >= 0 or \"all\", got {keep!r}")
    if settings["trigger_type"] not in ("input_tokens", "tool_uses"):
        raise ValueError(f"{ContextEditing.name}: trigger_type must be input_tokens or tool_uses, got {settings['trigger_type']!r}")
    return ContextEditing(window, settings)
