"""Cline's context management (cline/cline 3.x, ``src/core/context/context-management/
ContextManager.ts`` and ``context-window-utils.ts``; the auto-condense path in
``src/core/task/index.ts``, ``src/core/task/tools/handlers/SummarizeTaskHandler.ts`` and
``src/core/prompts/contextManagement.ts``).

Cline counts its history in Anthropic messages, which alternate user and assistant: here one
assistant message is one, and each run of user and tool messages between two assistant
messages is one (a tool result travels in the next user message).

* ``cline-truncate`` (Cline's default): before a request, when the previous request's prompt +
  output tokens reach ``maxAllowedSize`` (the window less a margin that depends on the model's
  window: 27,000 at 64k, 30,000 at 128k, 40,000 at 200k, else the larger of ``window - 40,000``
  and 80% of the window), it first rewrites older reads of a file read again later to a notice
  (kept instead of truncating when that saves 30% of the characters of the first pair and the
  messages after the deleted range, earlier rewrites counted at their current length),
  then deletes a range: the first user-assistant pair always stays, and of the messages after
  the last deleted range half (``keep = "half"``) or, when the previous request was over twice
  the limit, three quarters (``"quarter"``) go, an even number ending on an assistant message.
  The first assistant message's opening text becomes a truncation notice (even when the range
  deletes nothing). The first message kept after the range loses its tool results (their calls
  are gone; when that empties it and the first assistant message made no calls, a stand-in user
  message stays, as Cline's also carries environment details, so roles still alternate) and the first assistant
  message's calls get ``result missing`` results, so calls and results stay paired.
* ``cline-condense`` (Cline's opt-in auto-condense, ``useAutoCondense``): at the same threshold,
  the summarize instruction is sent as the conversation's next request (warm), and the reply
  replaces everything after the first user-assistant pair: the view becomes that pair (the user
  message's text replaced by a short continue instruction, the assistant's by the notice) and
  one user message carrying the continuation prompt and the summary.

Both answer a prompt over the window (Cline learns of it from the provider's context-window
error and retries once) with one ``"quarter"`` truncation that also replaces the first user
message's opening text (the task) with the continue note, so the cache breaks at message 0;
here it runs before the request.
Each change is a declared rewrite (``prune``, ``truncate``, ``checkpoint``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from prefixbench.kernel import (
    EngineBase,
    EngineOptions,
    Message,
    Session,
    StepContext,
    Text,
    ToolResult,
    user_text,
    warn,
)

from prefixbench.kernel.strategies.history import summary_reply
from prefixbench.kernel.strategies.settings import read_settings

#: What replaces an earlier read of a file read again later.
DUPLICATE_READ_NOTICE = (
    "[NOTE] This older read of the file was removed to save context space; the latest read "
    "of the same file has its current content.]"
)
#: What replaces the first assistant message's opening text once history is deleted. It says the
#: task is kept, as Cline's notice does, even after the context-window error path replaced the
#: task with :data:`CONTINUE_NOTE`.
TRUNCATION_NOTICE = (
    "[NOTE] Part of the earlier conversation was removed to keep the context window in bounds. "
    "The original task is still here; the messages in between are gone, so weigh the user's "
    "latest messages most."
)
#: What replaces the first user message's opening text after a condense or the context-window
#: error's truncation.
CONTINUE_NOTE = "[Go on helping the user.]"
#: What stands for the user message Cline keeps after the range when all it held was tool
#: results (Cline's also carries environment details, which are not modelled).
ENVIRONMENT_STANDIN = "<environment_details></environment_details>"
#: The result a kept call gets when its result was deleted with the range.
RESULT_MISSING = "result missing"
SUMMARIZE_PROMPT = (
    "<explicit_instructions type=\"summarize_task\">\nThe context window is almost full. Write a "
    "detailed summary of the conversation so far so the work can go on from it alone: the "
    "user's requests and intent, the key technical concepts, the files and code looked at or "
    "changed (with the snippets that matter), the problems solved, the pending tasks, how the "
    "task changed over time, the current work in detail, the next step (quoting the latest "
    "request), and the files needed to continue. Answer only with the summary.\n"
    "</explicit_instructions>"
)
CONTINUATION = (
    "This session continues an earlier conversation that ran out of context. Its summary:\n"
    "{summary}\n\nContinue from where it stopped without asking the user anything: go on with "
    "the last task, giving the user's most recent message more weight than the original task."
)
#: Share of the characters in range (the first pair and the messages after the deleted range)
#: that the duplicate-read rewrite must save to stand in for a truncation.
DEDUP_ENOUGH = 0.3
#: Cline's margins by context window: ``maxAllowedSize = window - margin``.
MARGINS = {64_000: 27_000, 128_000: 30_000, 200_000: 40_000}


def max_allowed_size(window: int) -> int:
    """Cline's ``maxAllowedSize`` for a context window."""
    if window in MARGINS:
        return window - MARGINS[window]
    return int(max(window - 40_000, window * 0.8))


def units(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """The messages as Cline's alternating history: ``(start, end)`` index ranges, each assistant
    message one unit, each run of user and tool messages between them one unit."""
    out: list[tuple[int, int]] = []
    for index, message in enumerate(messages):
        if out and message.role != "assistant" and messages[out[-1][0]].role != "assistant":
            out[-1] = (out[-1][0], index + 1)
        else:
            out.append((index, index + 1))
    return out


def next_truncation_range(count: int, deleted_end: int | None, keep: str, roles: Sequence[str]) -> tuple[int, int]:
    """Cline's ``getNextTruncationRange`` on a history of ``count`` units: the inclusive range
    ``[2, end]`` to delete. ``roles[i]`` is unit i's role (``assistant`` or not)."""
    start_of_rest = deleted_end + 1 if deleted_end is not None else 2
    rest = count - start_of_rest
    if keep == "none":
        remove = max(rest, 0)
    elif keep == "lastTwo":
        remove = max(rest - 2, 0)
    elif keep == "half":
        remove = rest // 4 * 2
    else:  # quarter: three quarters go
        remove = rest * 3 // 4 // 2 * 2
    end = start_of_rest + remove - 1
    if 0 <= end < count and roles[end] != "assistant":
        end -= 1
    return 2, end


class ClineTruncate(EngineBase):
    """Cline's default: delete half (or three quarters) of the history after the first pair."""

    name = "cline-truncate"

    def __init__(self, window: int, max_allowed: int | None = None, file_read_dedup: bool = True) -> None:
        self.window = window
        self.max_allowed = max_allowed if max_allowed is not None else max_allowed_size(window)
        self.file_read_dedup = file_read_dedup
        #: Last deleted history unit (inclusive); the range is ``[2, deleted_end]``.
        self.deleted_end: int | None = None
        #: Whether the first assistant message carries the truncation notice.
        self.noticed = False
        #: Whether the first user message's text was replaced (condense, context-window error).
        self.first_replaced = False
        #: Call ids of file reads replaced by the duplicate-read notice.
        self.deduped: set[str] = set()
        #: Engine messages in the history: (session unit index they precede, message).
        self.inserted: list[tuple[int, Message]] = []

    # The history as Cline holds it: the session's units with this engine's own messages.
    def history(self, session: Session) -> list[tuple[Message, ...]]:
        """The history units: the session's, with the engine's own messages spliced in."""
        messages = session.derive_messages()
        spans = units(messages)
        out: list[tuple[Message, ...]] = []
        for position, (start, end) in enumerate(spans):
            out += [(m,) for at, m in self.inserted if at == position]
            out.append(tuple(messages[start:end]))
        out += [(m,) for at, m in self.inserted if at >= len(spans)]
        return out

    def view(self, session: Session) -> tuple[Message, ...]:
        """The first pair (altered once history is deleted), then the units after the range."""
        history = self.history(session)
        head = [self._first_user(m) for m in history[0]] if history else []
        first_assistant = [self._noticed(m) for m in history[1]] if len(history) > 1 else []
        if self.deleted_end is None or self.deleted_end < 2 or len(history) <= 2:
            # Nothing deleted; the notices (Cline sets them whatever the range) still show.
            kept = [*head, *first_assistant, *(m for unit in history[2:] for m in unit)]
            return tuple(self._dedup(m) for m in kept) if self.deduped else tuple(kept)
        rest = history[self.deleted_end + 1 :]
        calls = [c.call_id for m in first_assistant for c in m.tool_calls]
        bridge: list[Message] = []
        if calls:
            bridge.append(Message("tool", tuple(ToolResult(c, (Text(RESULT_MISSING),)) for c in calls)))
        if rest:
            # The first unit after the range loses its tool results: their calls were deleted.
            # Cline's user message stays (it also carries environment details): a unit of tool
            # results only leaves an empty user message, so two assistant messages never meet.
            first = [message for message in rest[0] if message.role != "tool"]
            if not first and not calls and rest[0][0].role != "assistant":
                first = [user_text(ENVIRONMENT_STANDIN)]
            bridge += first
            rest = rest[1:]
        kept = [*head, *first_assistant, *bridge, *(m for unit in rest for m in unit)]
        return tuple(self._dedup(m) for m in kept)

    def _first_user(self, message: Message) -> Message:
        if not self.first_replaced or message.role != "user" or not message.blocks or not isinstance(message.blocks[0], Text):
            return message
        return Message(message.role, (Text(CONTINUE_NOTE), *message.blocks[1:]))

    def _noticed(self, message: Message) -> Message:
        # Cline rewrites the opening text block; a message that opens on reasoning keeps it.
        if not self.noticed or not message.blocks or not isinstance(message.blocks[0], Text):
            return message
        return Message(message.role, (Text(TRUNCATION_NOTICE), *message.blocks[1:]))

    def _dedup(self, message: Message) -> Message:
        if message.role != "tool" or not any(r.call_id in self.deduped for r in message.tool_results):
            return message
        blocks = tuple(
            ToolResult(b.call_id, (Text(DUPLICATE_READ_NOTICE),), b.is_error) if isinstance(b, ToolResult) and b.call_id in self.deduped else b
            for b in message.blocks
        )
        return Message(message.role, blocks)

    def previous_total(self, ctx: StepContext) -> int | None:
        """The previous request's prompt + output tokens (None before the first request)."""
        view = self.view(ctx.session)
        last = max((i for i, m in enumerate(view) if m.role == "assistant"), default=-1)
        if last < 0:
            return None
        return ctx.usage_tokens(view[: last + 1])

    def before_step(self, ctx: StepContext) -> None:
        """At ``maxAllowedSize``, deduplicate file reads and delete history; then fit the window."""
        total = self.previous_total(ctx)
        if total is not None and total >= self.max_allowed:
            self.manage(ctx, total)
        self.fit(ctx)

    def manage(self, ctx: StepContext, total: int) -> None:
        """Cline's standard truncation (the condensing engine overrides it)."""
        if self.dedup_enough(ctx):
            return
        self.truncate(ctx, "quarter" if total / 2 > self.max_allowed else "half")

    def fit(self, ctx: StepContext) -> None:
        """Over the window: the one ``quarter`` truncation of Cline's context-window error retry,
        which also replaces the first user message's opening text (the task) with the continue
        note (``triggerApplyStandardContextTruncationNoticeChange``)."""
        tokens = ctx.usage_tokens(self.view(ctx.session))
        if tokens > self.window:
            self.truncate(ctx, "quarter", replace_first=True)
            if ctx.usage_tokens(self.view(ctx.session)) > self.window:
                warn(ctx.session, f"{self.name}: still over the window after the error's truncation")

    def truncate(self, ctx: StepContext, keep: str, replace_first: bool = False) -> None:
        """Delete the next range and put the notice on the first assistant message (and, on the
        context-window error's path, the continue note on the first user message). Declared when
        the view changes."""
        before = self.view(ctx.session)
        history = self.history(ctx.session)
        roles = ["assistant" if unit[0].role == "assistant" else "user" for unit in history]
        _, end = next_truncation_range(len(history), self.deleted_end, keep, roles)
        self.noticed = True
        if replace_first:
            self.first_replaced = True
        if end >= 2 and end > (self.deleted_end or 1):
            self.deleted_end = end
        if self.view(ctx.session) != before:
            ctx.declare_rewrite("truncate", deleted_end=end, keep=keep)

    def dedup_enough(self, ctx: StepContext) -> bool:
        """Replace earlier reads of a file read again after the deleted range; True when that saved
        at least 30% of the characters in range (then Cline does not truncate): the first pair and
        the messages after the deleted range, a result rewritten earlier counted at its current
        length (``calculateContextOptimizationMetrics``)."""
        if not self.file_read_dedup:
            return False
        history = self.history(ctx.session)
        start = self.deleted_end + 1 if self.deleted_end is not None else 2
        live = [m for unit in history[start:] for m in unit]
        reads: dict[str, list[str]] = {}
        names = {c.call_id: (c.name, c.arguments) for unit in history for m in unit for c in m.tool_calls}
        for message in live:
            for result in message.tool_results:
                name, arguments = names.get(result.call_id, ("", ""))
                path = read_path(name, arguments)
                if path is not None:
                    reads.setdefault(path, []).append(result.call_id)
        new = {call for calls in reads.values() for call in calls[:-1]} - self.deduped
        if not new:
            return False
        head = [*(self._first_user(m) for m in history[0]), *(self._noticed(m) for m in history[1])] if len(history) > 1 else []
        in_range = [*head, *live]
        before = sum(chars(self._dedup(m)) for m in in_range)
        self.deduped |= new
        after = sum(chars(self._dedup(m)) for m in in_range)
        total = before
        ctx.declare_rewrite("prune", deduplicated=len(new))
        return total > 0 and (before - after) / total >= DEDUP_ENOUGH


class ClineCondense(ClineTruncate):
    """Cline's auto-condense: a warm summarize turn, then the first pair and the summary."""

    name = "cline-condense"

    def manage(self, ctx: StepContext, total: int) -> None:
        history = self.history(ctx.session)
        start = self.deleted_end + 1 if self.deleted_end is not None else 2
        # Cline does not condense again right after a condense (two messages or fewer since).
        if self.deleted_end is not None and len(history) - start - 1 <= 2:
            return
        if self.dedup_enough(ctx):
            return
        view = self.view(ctx.session)
        request = ctx.summary_request([*view, user_text(SUMMARIZE_PROMPT)])
        reply = summary_reply(ctx, request, "cline-condense: the summarize turn failed")
        if reply is None:
            return
        summary = reply.text().strip()
        count = len(units(ctx.session.derive_messages()))
        self.inserted.append((count, user_text(CONTINUATION.format(summary=summary))))
        # Everything from the third unit to the one before the continuation message goes.
        self.deleted_end = len(self.history(ctx.session)) - 2
        self.noticed = self.first_replaced = True
        ctx.declare_rewrite("checkpoint")


def read_path(name: str, arguments: str) -> str | None:
    """The file a ``read_file`` call reads (its ``path`` argument), else None."""
    if name != "read_file":
        return None
    try:
        parsed = json.loads(arguments)
    except ValueError:
        return None
    path = parsed.get("path") if isinstance(parsed, dict) else None
    return path if isinstance(path, str) else None


def chars(message: Message) -> int:
    """Characters of a message's text and tool results."""
    return len(message.text()) + sum(r.text_chars() for r in message.tool_results)


DEFAULTS: dict[str, object] = {"max_allowed": None, "file_read_dedup": True}


def _settings(engine: str, window: int, options: EngineOptions) -> dict[str, object]:
    config = read_settings(engine, options.config, DEFAULTS)
    limit = config["max_allowed"]
    if limit is not None and not 1 <= limit <= window:
        raise ValueError(f"{engine}: max_allowed must be from 1 to the window ({window:,}), got {limit}")
    return config


def truncate(window: int, options: EngineOptions) -> ClineTruncate:
    """``cline-truncate``; ``--engine-config``: ``max_allowed`` (tokens, 1 to the window), ``file_read_dedup``."""
    config = _settings("cline-truncate", window, options)
    return ClineTruncate(window, config["max_allowed"], config["file_read_dedup"])


def condense(window: int, options: EngineOptions) -> ClineCondense:
    """``cline-condense``; ``--engine-config``: ``max_allowed`` (tokens, 1 to the window), ``file_read_dedup``."""
    config = _settings("cline-condense", window, options)
    return ClineCondense(window, config["max_allowed"], config["file_read_dedup"])
