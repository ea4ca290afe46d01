"""``openclaw-compaction``: OpenClaw's compaction (openclaw/openclaw). OpenClaw runs the pi coding
agent's core, so its compaction is pi's (``pi-compaction``), with three additions:

* ``reserveTokensFloor`` (``src/agents/pi-settings.ts``, ``DEFAULT_PI_COMPACTION_RESERVE_TOKENS_FLOOR``
  = 20,000): pi's ``reserve_tokens`` (16,384) is raised to it, so compaction fires at
  ``window - 20,000`` (``keep_recent_tokens`` stays pi's 20,000).
* The pre-compaction memory flush (``compaction.memoryFlush``, on by default): once per compaction
  cycle, when the context crosses ``window - reserveTokensFloor - softThresholdTokens`` (4,000), a
  silent turn of the conversation asks the model to write durable notes to its memory files; the
  flush instruction is appended to the system prompt and sent as a user message after the
  history. The model answers ``NO_REPLY``; here that turn is not kept in the view.
* Session pruning (``contextPruning``, mode ``cache-ttl``; off unless set, OpenClaw's smart
  defaults turn it on, with a 1-hour ``ttl``, for Anthropic profiles): when the last call is older
  than ``ttl`` (5 minutes when the mode is set without one), the request's old tool results (before
  the newest ``keep_last_assistants`` = 3 assistant messages; 0: all) are soft-trimmed (head and
  tail of those over 4,000 characters) once the context is 30% of the window (in characters, four
  a token, thinking included), and hard-cleared oldest first while it is over 50% and the
  prunable results hold 50,000 characters or more. It is transient: only that request is pruned
  (``prune`` declared, and again when the next request goes back).

OpenClaw's effective default compaction mode is ``safeguard`` (chunked summaries); the summary
calls here are pi's default mode. The class extends ``PiCompaction``, pi's extension point.
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from prefixbench.kernel import EngineOptions, Message, Reasoning, Session, StepContext, Text, ToolResult, user_text, warn

from prefixbench.kernel.strategies.pi import PiCompaction
from prefixbench.kernel.strategies.settings import TtlSetting, read_settings

#: pi's own default, which OpenClaw raises to its floor.
PI_RESERVE_TOKENS = 16_384
DEFAULTS: dict[str, object] = {
    "reserve_tokens_floor": 20_000,
    "keep_recent_tokens": 20_000,
    "memory_flush": True,
    "soft_threshold_tokens": 4_000,
    "context_pruning": "off",
    "ttl_s": 300,
    "keep_last_assistants": 3,
    "soft_trim_ratio": 0.3,
    "hard_clear_ratio": 0.5,
    "min_prunable_tool_chars": 50_000,
}
FLUSH_SYSTEM = "The session is close to compaction. Store durable memories now."
FLUSH_PROMPT = (
    "Write any lasting notes to memory/YYYY-MM-DD.md now; if there is nothing worth storing, "
    "reply with NO_REPLY."
)
SOFT_TRIM_MAX, SOFT_TRIM_HEAD, SOFT_TRIM_TAIL = 4_000, 1_500, 1_500
CLEARED = "[Old tool result content cleared]"


def result_chars(message: Message) -> int:
    return sum(len(item.text) for block in message.tool_results for item in block.content)


def message_chars(message: Message) -> int:
    """OpenClaw's ``estimateMessageChars``: text, thinking, tool results and call arguments."""
    thinking = sum(len(b.text) for b in message.blocks if isinstance(b, Reasoning))
    return len(message.text()) + thinking + result_chars(message) + sum(len(c.arguments) for c in message.tool_calls)


def with_results(message: Message, text_of: dict[str, str]) -> Message:
    blocks = tuple(
        ToolResult(b.call_id, (Text(text_of[b.call_id]),), b.is_error) if isinstance(b, ToolResult) and b.call_id in text_of else b
        for b in message.blocks
    )
    return Message(message.role, blocks)


def prune_context(
    messages: tuple[Message, ...],
    window: int,
    keep_last_assistants: int,
    soft_trim_ratio: float,
    hard_clear_ratio: float,
    min_prunable_chars: int,
) -> tuple[Message, ...]:
    """OpenClaw's soft-trim and hard-clear of old tool results (the messages unchanged when
    nothing applies)."""
    assistants = [i for i, m in enumerate(messages) if m.role == "assistant"]
    if keep_last_assistants <= 0:
        cutoff = len(messages)  # ``findAssistantCutoffIndex``: nothing is protected
    elif len(assistants) < keep_last_assistants:
        return messages
    else:
        cutoff = assistants[-keep_last_assistants]
    char_window = window * 4
    out = list(messages)
    total = sum(message_chars(m) for m in out)
    if total / char_window < soft_trim_ratio:
        return messages
    prunable = [i for i in range(cutoff) if out[i].role == "tool"]
    for index in prunable:
        trimmed: dict[str, str] = {}
        for block in out[index].tool_results:
            text = "".join(item.text for item in block.content)
            if len(text) > SOFT_TRIM_MAX:
                trimmed[block.call_id] = (
                    f"{text[:SOFT_TRIM_HEAD]}\n...\n{text[-SOFT_TRIM_TAIL:]}\n\n[Tool result trimmed: kept the "
                    f"first {SOFT_TRIM_HEAD} and last {SOFT_TRIM_TAIL} of {len(text)} characters.]"
                )
        if trimmed:
            before = message_chars(out[index])
            out[index] = with_results(out[index], trimmed)
            total += message_chars(out[index]) - before
    if total / char_window >= hard_clear_ratio and sum(result_chars(out[i]) for i in prunable) >= min_prunable_chars:
        for index in prunable:
            if total / char_window < hard_clear_ratio:
                break
            before = message_chars(out[index])
            out[index] = with_results(out[index], {b.call_id: CLEARED for b in out[index].tool_results})
            total += message_chars(out[index]) - before
    return tuple(out)


class OpenClawCompaction(PiCompaction):
    """pi's compaction at OpenClaw's reserve floor, a memory-flush turn before it, and cache-ttl pruning."""

    name = "openclaw-compaction"

    def __init__(self, window: int, settings: dict[str, object]) -> None:
        reserve = max(PI_RESERVE_TOKENS, int(settings["reserve_tokens_floor"]))  # type: ignore[call-overload]
        super().__init__(window, reserve, int(settings["keep_recent_tokens"]))  # type: ignore[call-overload]
        self.settings = settings
        self.flushed = False
        self.last_ms: int | None = None
        self.transient: tuple[Message, ...] | None = None

    def view(self, session: Session) -> tuple[Message, ...]:
        """pi's view, or the pruned copy of it for the request after a gap past the TTL."""
        return self.transient if self.transient is not None else super().view(session)

    def flush_threshold(self) -> int:
        return self.window - int(self.settings["reserve_tokens_floor"]) - int(self.settings["soft_threshold_tokens"])  # type: ignore[call-overload]

    def before_step(self, ctx: StepContext) -> None:
        """Undo the last request's pruning, flush memory once per cycle, compact as pi, prune after a gap."""
        now = ctx.now_ms()
        idle_ms = 0 if self.last_ms is None else now - self.last_ms
        self.last_ms = now
        if self.transient is not None:
            self.transient = None
            ctx.declare_rewrite("prune")
        view = super().view(ctx.session)
        if self.settings["memory_flush"] and not self.flushed and ctx.usage_tokens(view) >= self.flush_threshold():
            self.flush(ctx, view)
        cut = self.folded.cut
        super().before_step(ctx)
        if self.folded.cut != cut:
            self.flushed = False  # a new compaction cycle
        if self.settings["context_pruning"] == "cache-ttl" and idle_ms >= int(self.settings["ttl_s"]) * 1000:  # type: ignore[call-overload]
            full = super().view(ctx.session)
            pruned = prune_context(
                full,
                self.window,
                int(self.settings["keep_last_assistants"]),  # type: ignore[call-overload]
                float(self.settings["soft_trim_ratio"]),  # type: ignore[arg-type]
                float(self.settings["hard_clear_ratio"]),  # type: ignore[arg-type]
                int(self.settings["min_prunable_tool_chars"]),  # type: ignore[call-overload]
            )
            if pruned != full:
                self.transient = pruned
                ctx.declare_rewrite("prune")

    def flush(self, ctx: StepContext, view: tuple[Message, ...]) -> None:
        """The silent memory-flush turn: the history, the flush prompt; the flush system note appended."""
        self.flushed = True
        request = ctx.summary_request((*view, user_text(FLUSH_PROMPT)))
        system = f"{request.system}\n\n{FLUSH_SYSTEM}" if request.system else FLUSH_SYSTEM
        reply = ctx.client(msgspec.structs.replace(request, system=system))
        if reply.error is not None:
            warn(ctx.session, f"openclaw-compaction: memory flush failed: {reply.error}")


def ttl_setting(engine: str, settings: Mapping[str, object], run_ttl_ms: int | None,
                window: int | None = None) -> TtlSetting | None:
    """The ``ttl_s`` ``openclaw-compaction`` pruned old tool results by (``context_pruning =
    "cache-ttl"``; its ``--engine-config`` table ``settings``, values as given or as text) when it
    is not the lifetime the run's cache gives its requests (``run_ttl_ms``; None: entries never
    expire); else None. (``window``: unused, the pruning fires at any window.)"""
    if engine != OpenClawCompaction.name or run_ttl_ms is None:
        return None
    if str(settings.get("context_pruning", DEFAULTS["context_pruning"])).strip() != "cache-ttl":
        return None
    try:
        setting = int(str(settings.get("ttl_s", DEFAULTS["ttl_s"])).strip())
    except ValueError:
        return None
    if setting * 1000 == run_ttl_ms:
        return None
    return TtlSetting("ttl_s", setting, "prunes old tool results", "the pruning of old tool results",
                      min(setting * 1000, run_ttl_ms))


def factory(window: int, options: EngineOptions) -> OpenClawCompaction:
    """``openclaw-compaction``; ``--engine-config``: ``reserve_tokens_floor``, ``keep_recent_tokens``,
    ``memory_flush``, ``soft_threshold_tokens``, ``context_pruning`` (``off`` or ``cache-ttl``),
    ``ttl_s``, ``keep_last_assistants``, ``soft_trim_ratio``, ``hard_clear_ratio``,
    ``min_prunable_tool_chars``."""
    config = read_settings("openclaw-compaction", options.config, DEFAULTS)
    if config["context_pruning"] not in ("off", "cache-ttl"):
        raise ValueError(f"openclaw-compaction: context_pruning must be 'off' or 'cache-ttl', got {config['context_pruning']!r}")
    floor, soft = int(config["reserve_tokens_floor"]), int(config["soft_threshold_tokens"])  # type: ignore[call-overload]
    chosen = options.config or {}
    # (the defaults run at any window, as OpenClaw does with a small model: it then compacts and
    # flushes before every turn; only a user's own figures that leave no room are a mistake)
    if ("reserve_tokens_floor" in chosen or "soft_threshold_tokens" in chosen) and max(PI_RESERVE_TOKENS, floor) + soft >= window:
        raise ValueError(
            f"openclaw-compaction: reserve_tokens_floor {floor} and soft_threshold_tokens {soft} leave no room "
            f"in a window of {window}"
        )
    if int(config["keep_recent_tokens"]) <= 0:  # type: ignore[call-overload]
        raise ValueError(f"openclaw-compaction: keep_recent_tokens must be positive, got {config['keep_recent_tokens']!r}")
    soft_ratio, hard_ratio = float(config["soft_trim_ratio"]), float(config["hard_clear_ratio"])  # type: ignore[arg-type]
    if not 0.0 < soft_ratio <= 1.0:
        raise ValueError(f"openclaw-compaction: soft_trim_ratio must be in (0, 1], got {config['soft_trim_ratio']!r}")
    if hard_ratio < soft_ratio:
        raise ValueError(
            f"openclaw-compaction: hard_clear_ratio {hard_ratio} must not be under soft_trim_ratio {soft_ratio}"
        )
    return OpenClawCompaction(window, config)
