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
* Split: the first ``protect_first_n`` (3) messages after the system prompt are the head, none
  after the first compression; the tail is walked back from the newest message up to 1.5 x the
  tail budget (at least max(3, min(protect_last_n, 8)) messages; when all fits, again with the
  budget itself), pulled back so a tool call keeps its results and so the newest user message
  and the newest assistant reply stay in it. What lies between is summarized, less any earlier
  summary (it goes in as the previous summary).
* Summary: one user message holding a structured-summary instruction and the middle turns as
  text (each message cut to 4,000 + 1,500 characters past 6,000), the previous summary when
  there is one; no system prompt, no tools, no output cap: cold. It goes to the auxiliary model
  (``summary_model``; empty: the routed model).
* The view becomes the head, the summary with an end marker (a user or an assistant message,
  whichever keeps the roles alternating, a user message when there is no head; merged into the
  first tail message when neither fits), then the tail; tool results whose call went are dropped
  and calls whose result went are taken out of their message (``checkpoint``).
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
from prefixbench.kernel.strategies.history import assistant_note, summary_reply
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
#: The tail keeps at least max(MIN_TAIL, min(protect_last_n, TAIL_FLOOR_CAP)) messages.
MIN_TAIL = 3
TAIL_FLOOR_CAP = 8
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
END_MARKER = "--- END OF THE CONTEXT SUMMARY: answer the message below, not the summary above ---"
#: The wrapping of a tail message the summary is merged into: its own text first, then the summary.
MERGED_HEADER = "[EARLIER CONTEXT, for reference only, not a new message]\n"
MERGED_DELIMITER = "\n\n[END OF EARLIER CONTEXT; THE COMPACTION SUMMARY FOLLOWS]"
CALL_REMOVED = "(tool call removed)"


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


def is_summary(message: Message) -> bool:
    """A compaction summary, on its own or merged into a tail message (Hermes marks its summaries)."""
    return SUMMARY_PREFIX in message.text()


def is_user_turn(message: Message) -> bool:
    """A user message the user wrote: not a compaction summary."""
    return message.role == "user" and not is_summary(message) and bool(message.text().strip())


def is_summary_block(block: object) -> bool:
    """A text block the compressor added: the summary, the end marker or the merge wrapping."""
    return isinstance(block, Text) and (
        block.text.startswith(SUMMARY_PREFIX) or block.text == MERGED_HEADER or block.text.startswith(MERGED_DELIMITER)
    )


def without_summary(message: Message) -> Message:
    """``_strip_context_summary_handoff_message``: the message without an earlier summary's blocks
    (a standalone summary is left with none; a merged one keeps the tail message it was merged into)."""
    blocks = tuple(b for b in message.blocks if not is_summary_block(b))
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


def last_user_index(messages: tuple[Message, ...], head_end: int) -> int:
    return next((i for i in range(len(messages) - 1, head_end - 1, -1) if is_user_turn(messages[i])), -1)


def last_assistant_index(messages: tuple[Message, ...], head_end: int) -> int:
    """``_find_last_assistant_message_idx``: the newest assistant reply with text, else the newest
    assistant message; summaries do not count."""
    last_any = -1
    for index in range(len(messages) - 1, head_end - 1, -1):
        message = messages[index]
        if message.role != "assistant" or is_summary(message):
            continue
        if last_any < 0:
            last_any = index
        if message.text().strip():
            return index
    return last_any


def turn_pair_end(messages: tuple[Message, ...], user: int) -> int:
    """The index after the user message, its assistant reply and that reply's tool results."""
    index = user + 1
    if index >= len(messages) or messages[index].role != "assistant":
        return index
    index += 1
    while index < len(messages) and messages[index].role == "tool":
        index += 1
    return index


def walk_back(messages: tuple[Message, ...], stop: int, budget: int, min_keep: int) -> tuple[int, int]:
    """Hermes' backward token walk: from the newest message back to ``stop``, each message kept
    while it fits ``budget`` (or fewer than ``min_keep`` are kept). The first kept index
    (``len(messages)``: none) and the tokens kept."""
    n = len(messages)
    accumulated, cut = 0, n
    for index in range(n - 1, stop - 1, -1):
        tokens = estimate(messages[index])
        if accumulated + tokens > budget and n - index >= min_keep:
            break
        accumulated += tokens
        cut = index
    return cut, accumulated


def tail_cut(messages: tuple[Message, ...], head_end: int, budget: int, protect_last_n: int = 20) -> int:
    """``_find_tail_cut_by_tokens``: the first index of the protected tail."""
    n = len(messages)
    available = max(0, n - head_end - 1)
    floor = max(MIN_TAIL, min(protect_last_n, TAIL_FLOOR_CAP))
    min_tail = min(floor, max(MIN_TAIL, available - 2), available) if available > 1 else 0
    ceiling = int(budget * 1.5)
    cut, accumulated = walk_back(messages, head_end, ceiling, min_tail)
    if cut <= head_end and 0 < accumulated <= ceiling:
        # Everything fits the 1.5x ceiling: walk again with the budget itself, the message that
        # passes it kept too.
        cut = max(walk_back(messages, head_end, budget, min_tail)[0] - 1, head_end)
    cut = min(cut, n - min_tail)
    if cut <= head_end:
        cut = max(n - min_tail, head_end + 1)
    cut = align_backward(messages, cut)
    last_user = last_user_index(messages, head_end)
    if 0 <= last_user < cut:
        cut = max(last_user, head_end + 1)
        if cut > last_user:
            cut = max(turn_pair_end(messages, last_user), head_end + 1)
    last_assistant = last_assistant_index(messages, head_end)
    if 0 <= last_assistant < cut:
        cut = max(align_backward(messages, last_assistant), head_end + 1)
    return align_forward(messages, max(cut, head_end + 1))


def prune_boundary(messages: tuple[Message, ...], protect_count: int, budget: int) -> int:
    """``_prune_old_tool_results``' boundary: results before it may be pruned."""
    n = len(messages)
    min_protect = min(protect_count, n, PRUNE_PROTECT_CAP)
    # The message that passes the budget is protected too.
    boundary = max(walk_back(messages, 0, budget, min_protect)[0] - 1, 0)
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
    """``_sanitize_tool_pairs``: drop results whose call is gone and strip calls whose result is gone
    (an assistant message left with no call and no text says so)."""
    calls = {c.call_id for m in messages if m.role == "assistant" for c in m.tool_calls}
    results = {r.call_id for m in messages for r in m.tool_results}
    out: list[Message] = []
    for message in messages:
        if message.role == "tool":
            kept = tuple(b for b in message.blocks if not (isinstance(b, ToolResult) and b.call_id not in calls))
            if kept:
                out.append(Message("tool", kept) if kept != message.blocks else message)
            continue
        if message.role == "assistant" and any(c.call_id not in results for c in message.tool_calls):
            blocks = tuple(b for b in message.blocks if not (isinstance(b, ToolCall) and b.call_id not in results))
            if not any(isinstance(b, ToolCall) for b in blocks) and not "".join(
                b.text for b in blocks if isinstance(b, Text)
            ).strip():
                blocks = (*blocks, Text(CALL_REMOVED))
            message = Message("assistant", blocks)
        out.append(message)
    return out


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
        #: The first N messages after the system prompt (``_protect_head_size``).
        self.head_n = protect_first_n
        self.protect_last_n = protect_last_n
        self.summary_model = summary_model
        self.folded = Folded()
        self.previous: str | None = None
        self.compressions = 0

    def head_size(self) -> int:
        """``_effective_protect_first_n``: the head decays to nothing after the first compression
        (the summary holds those turns by then)."""
        return 0 if self.compressions >= 1 or self.previous is not None else self.head_n

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
        if len(view) <= self.head_size() + 3 + 1:
            warn(ctx.session, f"hermes-compress: only {len(view)} messages, nothing to compress")
            return False
        messages, pruned = prune(view, prune_boundary(view, self.protect_last_n, self.tail_budget))
        start = align_forward(messages, self.head_size())
        end = tail_cut(messages, start, self.tail_budget, self.protect_last_n)
        latest_user = last_user_index(messages, 0)
        if end == latest_user:
            # Keep the user message out of the slot a merged summary would take: cut before the
            # assistant (and its results) just before it, when there is one.
            bridge = latest_user - 1
            if bridge >= 0 and messages[bridge].role == "tool":
                bridge = align_backward(messages, latest_user)
            elif bridge < 0 or messages[bridge].role != "assistant":
                bridge = -1
            if bridge > start:
                end = bridge
        if start >= end:
            if pruned:
                self.land(ctx, view, list(messages), "prune")
                return True
            return False
        # An earlier summary is in PREVIOUS SUMMARY already: its blocks leave the head, the middle
        # and the tail (a merged one leaves the tail message it was merged into).
        head = [m for m in map(without_summary, messages[:start]) if m.blocks]
        middle = tuple(m for m in map(without_summary, messages[start:end]) if m.blocks)
        tail = [m for m in map(without_summary, messages[end:]) if m.blocks]
        if not middle:
            warn(ctx.session, "hermes-compress: only the previous summary between head and tail, nothing to compress")
            return False
        summary = self.summarize(ctx, middle)
        if summary is None:
            summary = (
                f"{SUMMARY_PREFIX}\nSummary generation was unavailable: {len(middle)} earlier messages were "
                "removed without a summary. Go on from the messages below and the current state of the files."
            )
        last_head = head[-1].role if head else "user"
        first_tail = tail[0].role if tail else None
        # No head (the system prompt is apart) or no user message left: the summary leads as a user message.
        force_user = start == 0 or not any(m.role == "user" for m in (*head, *tail))
        role = "user" if last_head in ("assistant", "tool") or force_user else "assistant"
        merge = False
        if first_tail is not None and role == first_tail:
            flipped = "assistant" if role == "user" else "user"
            if flipped != last_head and not force_user:
                role = flipped
            else:
                merge = True
        if not merge:
            text = f"{summary}\n\n{END_MARKER}"
            head.append(assistant_note(messages, text) if role == "assistant" else user_text(text))
        elif force_user and role == "user":
            tail[0] = Message(tail[0].role, (Text(f"{summary}\n\n{END_MARKER}\n\n"), *tail[0].blocks))
        else:
            tail[0] = Message(
                tail[0].role,
                (Text(MERGED_HEADER), *tail[0].blocks, Text(f"{MERGED_DELIMITER}\n\n{summary}\n\n{END_MARKER}")),
            )
        self.compressions += 1
        self.land(ctx, view, sanitize(head + tail), "checkpoint")
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
        # No output cap: Hermes leaves max_tokens off the summary call.
        if self.summary_model:
            envelope = msgspec.structs.replace(envelope, model=self.summary_model)
        info = ctx.catalog(envelope.provider, envelope.model)
        request = Request(info.wire_envelope(envelope), (user_text(prompt),), "", (), None, "compaction")
        reply = summary_reply(ctx, request, "hermes-compress: summary call failed")
        if reply is None:
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
