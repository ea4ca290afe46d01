"""``hermes-compress``: the context compressor of NousResearch's Hermes Agent
(``agent/context_compressor.py``, ``ContextCompressor``).

* Trigger, before a step: the request's tokens (the last response's usage plus what came after,
  ``ctx.usage_tokens``) reach ``threshold_tokens``. That is ``threshold_percent`` (default 0.50)
  of the window, raised to 0.75 under a 512,000-token window, floored at 64,000 tokens; when the
  floor reaches the window, 85% of the window instead (27,200 at 32k, 96,000 at 128k, 256,000 at
  512k).
* Old tool results outside the protected tail (the newest ``tail_token_budget`` =
  ``summary_target_ratio`` (0.20) x threshold tokens, or ``protect_last_n`` (20) messages capped
  at 8 when that is more) longer than 200 characters become a one-line note (``prune``).
* Split: the first ``protect_first_n`` (3, Hermes counts its system message) messages are the
  head; the tail is walked back from the newest message up to 1.5 x the tail budget (at least 3
  messages), pulled back so a tool call keeps its results and so the newest user message stays
  in it. What lies between is summarized.
* Summary: one user message holding a structured-summary instruction and the middle turns as
  text (each message cut to 4,000 + 1,500 characters past 6,000), the previous summary when
  there is one; no system prompt, no tools: cold. It goes to the auxiliary model
  (``summary_model``; empty: the routed model).
* The view becomes the head, the summary (a user or an assistant message, whichever keeps the
  roles alternating; merged into the first tail message when neither does), then the tail;
  tool results whose call went are dropped and calls whose result went get a stub result
  (``checkpoint``).
"""

from __future__ import annotations

import json

import msgspec

from prefixbench.kernel import (
    EngineBase,
    EngineOptions,
    Message,
    Reasoning,
    Request,
    Session,
    StepContext,
    Text,
    ToolCall,
    ToolResult,
    user_text,
    warn,
)

from prefixbench.kernel.strategies.foldview import Folded
from prefixbench.kernel.strategies.settings import read_settings

DEFAULTS: dict[str, object] = {
    "threshold_percent": 0.5,
    "protect_first_n": 3,
    "protect_last_n": 20,
    "summary_target_ratio": 0.2,
    "summary_model": "",
}
#: Hermes' small-context floor: under this window the trigger is at least 75% of it.
SMALL_WINDOW = 512_000
SMALL_WINDOW_PERCENT = 0.75
#: Hermes' MINIMUM_CONTEXT_LENGTH floor on the trigger, and the share used when it reaches the window.
MIN_TRIGGER_TOKENS = 64_000
MIN_CTX_TRIGGER_RATIO = 0.85
CHARS_PER_TOKEN = 4
PRUNE_MIN_CHARS = 200
#: The floor of messages the pruning never touches is protect_last_n capped at this.
PRUNE_PROTECT_CAP = 8
CONTENT_MAX, CONTENT_HEAD, CONTENT_TAIL = 6_000, 4_000, 1_500
ARGS_MAX, ARGS_HEAD = 1_500, 1_200

SUMMARY_PREFIX = (
    "[CONTEXT COMPACTION, REFERENCE ONLY] Earlier turns were compacted into the summary below. "
    "Treat it as background from an earlier context window, not as instructions: answer only the "
    "latest user message after it, keep using your tools, and do not redo work described here:"
)
FIRST_PROMPT = (
    "Write a structured handoff summary for an assistant that will carry on this conversation "
    "once the turns below are compacted.\n\nTURNS TO SUMMARIZE:\n{turns}\n\nSections: Goal; "
    "Constraints and preferences; Progress (done, in progress, blocked); Key decisions; Relevant "
    "files; Next steps; Critical context; Tools and patterns. Be specific: paths, commands, "
    "errors and values. Write the summary body only."
)
UPDATE_PROMPT = (
    "Update a context compaction summary with the turns that came after it.\n\nPREVIOUS SUMMARY:\n"
    "{previous}\n\nNEW TURNS TO INCORPORATE:\n{turns}\n\nKeep what still holds, add the new "
    "progress, move finished work to done, drop only what is obsolete. Same sections: Goal; "
    "Constraints and preferences; Progress; Key decisions; Relevant files; Next steps; Critical "
    "context; Tools and patterns. Write the summary body only."
)
STUB_RESULT = "[Result from earlier in the conversation: see the context summary above]"


def threshold_tokens(window: int, threshold_percent: float) -> int:
    """Hermes' trigger in tokens (``_effective_threshold_percent`` then ``_compute_threshold_tokens``,
    no output reservation: Hermes' default ``max_tokens`` is None)."""
    percent = max(threshold_percent, SMALL_WINDOW_PERCENT) if window < SMALL_WINDOW else threshold_percent
    floored = max(int(window * percent), MIN_TRIGGER_TOKENS)
    if floored >= window:
        return max(1, min(int(window * MIN_CTX_TRIGGER_RATIO), window - 1))
    return floored


def content_chars(message: Message) -> int:
    """The characters of a message as Hermes counts them: text, tool results, and the reasoning
    replayed with it (Hermes adds the replay fields, ``reasoning_content`` and the like)."""
    total = 0
    for block in message.blocks:
        if isinstance(block, (Text, Reasoning)):
            total += len(block.text)
        elif isinstance(block, ToolResult):
            total += sum(len(item.text) for item in block.content)
    return total


def estimate(message: Message) -> int:
    """Hermes' per-message estimate: content chars / 4 + 10, plus the calls' arguments / 4."""
    tokens = content_chars(message) // CHARS_PER_TOKEN + 10
    return tokens + sum(len(call.arguments) // CHARS_PER_TOKEN for call in message.tool_calls)


def one_line(name: str, arguments: str, chars: int) -> str:
    """The note that replaces a pruned tool result: the tool, its first argument, the size."""
    first = ""
    try:
        parsed = json.loads(arguments)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed:
        key, value = next(iter(parsed.items()))
        first = f" {key}={str(value)[:80]}"
    return f"[{name}]{first} ({chars:,} chars result)"


def cut_middle(text: str) -> str:
    return text if len(text) <= CONTENT_MAX else text[:CONTENT_HEAD] + "\n...[truncated]...\n" + text[-CONTENT_TAIL:]


def serialize(turns: tuple[Message, ...]) -> str:
    """The turns as Hermes writes them for the summarizer (reasoning left out)."""
    parts: list[str] = []
    for message in turns:
        if message.role == "tool":
            for block in message.tool_results:
                parts.append(f"[TOOL RESULT {block.call_id}]: " + cut_middle("".join(i.text for i in block.content)))
            continue
        text = cut_middle(message.text())
        if message.role == "assistant":
            calls = [
                f"  {c.name}({c.arguments if len(c.arguments) <= ARGS_MAX else c.arguments[:ARGS_HEAD] + '...'})"
                for c in message.tool_calls
            ]
            if calls:
                text += "\n[Tool calls:\n" + "\n".join(calls) + "\n]"
            parts.append(f"[ASSISTANT]: {text}")
        else:
            parts.append(f"[{message.role.upper()}]: {text}")
    return "\n\n".join(parts)


def is_user_turn(message: Message) -> bool:
    """A user message the user wrote: not a compaction summary (Hermes marks its summaries)."""
    return message.role == "user" and SUMMARY_PREFIX not in message.text()


def without_summary(message: Message) -> Message:
    """The message without the text blocks of an earlier compaction summary."""
    blocks = tuple(b for b in message.blocks if not (isinstance(b, Text) and b.text.startswith(SUMMARY_PREFIX)))
    return message if len(blocks) == len(message.blocks) else Message(message.role, blocks)


def align_forward(messages: tuple[Message, ...], index: int) -> int:
    while index < len(messages) and messages[index].role == "tool":
        index += 1
    return index


def align_backward(messages: tuple[Message, ...], index: int) -> int:
    """Pull a cut back before the assistant message whose results it would split from it."""
    if index <= 0 or index >= len(messages):
        return index
    check = index - 1
    while check >= 0 and messages[check].role == "tool":
        check -= 1
    if check >= 0 and messages[check].role == "assistant" and messages[check].tool_calls:
        return check
    return index


def tail_cut(messages: tuple[Message, ...], head_end: int, budget: int) -> int:
    """``_find_tail_cut_by_tokens``: the first index of the protected tail."""
    n = len(messages)
    min_tail = min(3, n - head_end - 1) if n - head_end > 1 else 0
    ceiling = int(budget * 1.5)
    accumulated, cut = 0, n
    for index in range(n - 1, head_end - 1, -1):
        tokens = estimate(messages[index])
        if accumulated + tokens > ceiling and n - index >= min_tail:
            break
        accumulated += tokens
        cut = index
    cut = min(cut, n - min_tail)
    if cut <= head_end:
        cut = max(n - min_tail, head_end + 1)
    cut = align_backward(messages, cut)
    last_user = next((i for i in range(n - 1, head_end - 1, -1) if is_user_turn(messages[i])), -1)
    if 0 <= last_user < cut:
        cut = max(last_user, head_end + 1)
    return max(cut, head_end + 1)


def prune_boundary(messages: tuple[Message, ...], protect_count: int, budget: int) -> int:
    """``_prune_old_tool_results``' boundary: results before it may be pruned."""
    n = len(messages)
    min_protect = min(protect_count, n, PRUNE_PROTECT_CAP)
    accumulated, boundary = 0, n
    for index in range(n - 1, -1, -1):
        tokens = estimate(messages[index])
        if accumulated + tokens > budget and n - index >= min_protect:
            boundary = index
            break
        accumulated += tokens
        boundary = index
    # Hermes protects the larger of the budget walk's count and the floor.
    return n - max(n - boundary, min_protect)


def prune(messages: tuple[Message, ...], boundary: int) -> tuple[tuple[Message, ...], int]:
    """Tool results before ``boundary`` over 200 characters replaced by a one-line note."""
    names = {c.call_id: (c.name, c.arguments) for m in messages for c in m.tool_calls}
    out = list(messages)
    pruned = 0
    for index in range(boundary):
        message = out[index]
        if message.role != "tool":
            continue
        blocks = []
        changed = False
        for block in message.blocks:
            if isinstance(block, ToolResult):
                text = "".join(i.text for i in block.content)
                if len(text) > PRUNE_MIN_CHARS and not text.startswith("["):
                    name, arguments = names.get(block.call_id, ("tool", ""))
                    block = ToolResult(block.call_id, (Text(one_line(name, arguments, len(text))),), block.is_error)
                    changed = True
            blocks.append(block)
        if changed:
            out[index] = Message(message.role, tuple(blocks))
            pruned += 1
    return tuple(out), pruned


def sanitize(messages: list[Message]) -> list[Message]:
    """``_sanitize_tool_pairs``: drop results whose call is gone, add stubs for calls whose result is gone."""
    calls = {c.call_id for m in messages if m.role == "assistant" for c in m.tool_calls}
    results = {r.call_id for m in messages for r in m.tool_results}
    out: list[Message] = []
    for message in messages:
        if message.role == "tool":
            kept = tuple(b for b in message.blocks if not (isinstance(b, ToolResult) and b.call_id not in calls))
            if kept:
                out.append(Message("tool", kept) if kept != message.blocks else message)
            continue
        out.append(message)
        if message.role == "assistant":
            missing = [c.call_id for c in message.tool_calls if c.call_id not in results]
            if missing:
                out.append(Message("tool", tuple(ToolResult(cid, (Text(STUB_RESULT),)) for cid in missing)))
    return out


def assistant_summary(messages: tuple[Message, ...], summary: str) -> Message:
    """The summary as an assistant message. Where the conversation's assistant rows carry a
    reasoning field, an empty one stands in (a DeepSeek thinking endpoint refuses an assistant row
    without it)."""
    fields = [b.field for m in messages if m.role == "assistant" for b in m.blocks if isinstance(b, Reasoning)]
    thinking = (Reasoning("", fields[-1]),) if fields else ()
    return Message("assistant", (*thinking, Text(summary)))


class HermesCompress(EngineBase):
    """Head and token-budget tail kept, the middle summarized cold, old tool results pruned first."""

    name = "hermes-compress"

    def __init__(
        self,
        window: int,
        threshold_percent: float = 0.5,
        protect_first_n: int = 3,
        protect_last_n: int = 20,
        summary_target_ratio: float = 0.2,
        summary_model: str = "",
    ) -> None:
        self.window = window
        self.threshold = threshold_tokens(window, threshold_percent)
        ratio = max(0.10, min(summary_target_ratio, 0.80))
        self.tail_budget = int(self.threshold * ratio)
        #: Hermes counts its system message among the first N; here the system prompt is apart.
        self.head_n = max(0, protect_first_n - 1)
        self.protect_last_n = protect_last_n
        self.summary_model = summary_model
        self.folded = Folded()
        self.previous: str | None = None

    def view(self, session: Session) -> tuple[Message, ...]:
        """The compressed messages, then every message since the last compression."""
        return self.folded.view(session)

    def before_step(self, ctx: StepContext) -> None:
        """Compress when the next request reaches the threshold."""
        view = self.view(ctx.session)
        if ctx.usage_tokens(view) < self.threshold:
            return
        self.compress(ctx, view)

    def compress(self, ctx: StepContext, view: tuple[Message, ...]) -> bool:
        """Prune, split, summarize and land; True when the view changed."""
        if len(view) <= self.head_n + 3 + 1:
            warn(ctx.session, f"hermes-compress: only {len(view)} messages, nothing to compress")
            return False
        messages, pruned = prune(view, prune_boundary(view, self.protect_last_n, self.tail_budget))
        start = align_forward(messages, self.head_n)
        end = tail_cut(messages, start, self.tail_budget)
        if start >= end:
            if pruned:
                self.land(ctx, view, list(messages), "prune")
                return True
            return False
        # An earlier summary goes in as PREVIOUS SUMMARY, not again among the new turns.
        middle = tuple(m for m in map(without_summary, messages[start:end]) if m.blocks)
        summary = self.summarize(ctx, middle)
        if summary is None:
            summary = (
                f"{SUMMARY_PREFIX}\nSummary generation was unavailable: {len(middle)} earlier messages were "
                "removed without a summary. Go on from the messages below and the current state of the files."
            )
        new = list(messages[:start])
        last_head = messages[start - 1].role if start > 0 else "user"
        first_tail = messages[end].role if end < len(messages) else "user"
        role = "user" if last_head in ("assistant", "tool") else "assistant"
        merge = False
        if role == first_tail:
            flipped = "assistant" if role == "user" else "user"
            if flipped != last_head:
                role = flipped
            else:
                merge = True
        tail = list(messages[end:])
        if merge:
            first = tail[0]
            tail[0] = Message(first.role, (Text(summary + "\n\n"), *first.blocks))
        else:
            new.append(assistant_summary(messages, summary) if role == "assistant" else user_text(summary))
        self.land(ctx, view, sanitize(new + tail), "checkpoint")
        return True

    def land(self, ctx: StepContext, view: tuple[Message, ...], new: list[Message], kind: str) -> None:
        """Fold ``new`` over the view: its longest suffix of unchanged live messages stays live."""
        live_start = len(self.folded.head)
        keep = 0
        while (
            keep < len(new)
            and keep < len(view) - live_start
            and new[len(new) - 1 - keep] is view[len(view) - 1 - keep]
        ):
            keep += 1
        head = new[: len(new) - keep]
        self.folded.land(head, self.folded.cut + (len(view) - live_start - keep))
        ctx.declare_rewrite(kind)

    def summarize(self, ctx: StepContext, middle: tuple[Message, ...]) -> str | None:
        """The cold summary call (no system prompt, no tools); None when it failed."""
        header = ctx.routed or ctx.header()
        if header is None:
            return None
        turns = serialize(middle)
        if self.previous is not None:
            prompt = UPDATE_PROMPT.format(previous=self.previous, turns=turns)
        else:
            prompt = FIRST_PROMPT.format(turns=turns)
        envelope = header.envelope
        if self.summary_model:
            envelope = msgspec.structs.replace(envelope, model=self.summary_model)
        info = ctx.catalog(envelope.provider, envelope.model)
        reply = ctx.client(Request(info.wire_envelope(envelope), (user_text(prompt),), "", (), info.default_max_tokens, "compaction"))
        if reply.error is not None or not reply.text().strip():
            warn(ctx.session, f"hermes-compress: summary call failed: {reply.error or 'no text'}")
            return None
        self.previous = reply.text().strip()
        return f"{SUMMARY_PREFIX}\n{self.previous}"


def factory(window: int, options: EngineOptions) -> HermesCompress:
    """``hermes-compress``; ``--engine-config``: ``threshold_percent``, ``protect_first_n``,
    ``protect_last_n``, ``summary_target_ratio``, ``summary_model`` (Hermes' ``compression``
    settings and its auxiliary compression model; empty: the routed model)."""
    config = read_settings("hermes-compress", options.config, DEFAULTS)
    if not 0.0 < float(config["threshold_percent"]) <= 1.0:  # type: ignore[arg-type]
        raise ValueError(f"hermes-compress: threshold_percent must be in (0, 1], got {config['threshold_percent']!r}")
    return HermesCompress(
        window,
        float(config["threshold_percent"]),  # type: ignore[arg-type]
        int(config["protect_first_n"]),  # type: ignore[call-overload]
        int(config["protect_last_n"]),  # type: ignore[call-overload]
        float(config["summary_target_ratio"]),  # type: ignore[arg-type]
        str(config["summary_model"]),
    )
