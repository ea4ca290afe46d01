"""Reasoning on replayed assistant rows: backfill, field normalization, retained thinking turns.

A DeepSeek-compatible chat-completions endpoint in thinking mode wants every replayed assistant
row to carry its reasoning field (DeepSeek's thinking-mode guide,
api-docs.deepseek.com/guides/thinking_mode). What an agent's client sends for a row depends on
the binding and on which fixes it has; the decisions named here (ADR 0256, its amendment D677)
are seed 003's:

* **backfill** (ADR 0256 decision 3): a row with no reasoning gets ``""`` for the official
  endpoint and :data:`PLACEHOLDER` for strict relays (before ADR 0256: ``""`` everywhere);
* **normalization** (D677): one field per request, taken from the newest row with real
  reasoning; real reasoning under another name is moved there and only rows with none are
  filled. Before D677 the field was the first of :data:`~prefixbench.simulator.wire.REASONING_FIELDS`
  present in the history, and every row lacking it was filled, over its real reasoning::

      rows        rebuilt(reasoning_content="r1")   live(reasoning_text="r2")
      D677        reasoning_text="r1"               reasoning_text="r2"
      before      reasoning_content="r1"            reasoning_content=PLACEHOLDER   <- r2 lost

* **retained turns** (ADR 0256 decision 2): a checkpoint keeps the newest few thinking turns,
  thinking and text only, truncated, and replays them as text-only assistant rows stamped
  ``reasoning_content`` (decision 1).

Pure functions over messages; :class:`ReplayAdapter` applies the relay fill to an engine whose
agent replays rows as stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from msgspec.structs import replace

from prefixbench.kernel.api import Engine, StepContext
from prefixbench.kernel.model import Reply
from prefixbench.kernel.records import RetainedTurn
from prefixbench.kernel.session import Session
from prefixbench.simulator.wire import REASONING_FIELDS, Block, Message, Reasoning, Request, Text, ToolCall

#: What strict relays receive for a row whose reasoning was not retained (ADR 0256).
PLACEHOLDER = "[reasoning not retained for this turn]"
#: The field a rebuilt row is stamped with (ADR 0256 decision 1).
REBUILT_FIELD = "reasoning_content"
#: Retained thinking turns per checkpoint and their per-field character cap (ADR 0256 decision 2).
RETAINED_TURNS = 3
RETAINED_CHARS = 4_000
ELLIPSIS = "…"


def reasoning_value(message: Message, field: str) -> str | None:
    """The reasoning an endpoint reading ``field`` sees on a row (None when the row has none there).

    Several blocks in the same field read as one value, concatenated, as a chat-completions
    serializer joins a reasoning run into one ``reasoning_content``.
    """
    parts = [block.text for block in message.blocks if isinstance(block, Reasoning) and block.field == field]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "".join(parts)


def emitted_reasoning(blocks: Iterable[Block]) -> str:
    """All reasoning text of a reply or row, in any field, concatenated."""
    return "".join(block.text for block in blocks if isinstance(block, Reasoning))


def strip_placeholder_echo(text: str) -> str:
    """Drop a leading echo of the placeholder: a model that read it may start its thinking with it (D677)."""
    while text.startswith(PLACEHOLDER):
        text = text[len(PLACEHOLDER) :].lstrip()
    return text


def real_reasoning(message: Message) -> str:
    """The row's real reasoning: its reasoning text minus a placeholder echo ("" when it has none)."""
    return strip_placeholder_echo(emitted_reasoning(message.blocks))


def backfill_value(binding: str, retained_reasoning: bool) -> str:
    """What a DeepSeek binding sends for a row with no reasoning.

    Official endpoints accept ``""``; strict relays get the placeholder, but only once ADR 0256
    is in (``retained_reasoning``): before it every binding got ``""``.
    """
    if binding == "deepseek-relay" and retained_reasoning:
        return PLACEHOLDER
    return ""


def with_reasoning(message: Message, text: str, field: str) -> Message:
    """The row with exactly one reasoning block ``(text, field)``, where its first one stood (else first).

    Returns ``message`` itself when it already has exactly that, so unchanged rows keep their
    identity and their memoized rendering.
    """
    reasoning = [block for block in message.blocks if isinstance(block, Reasoning)]
    if len(reasoning) == 1 and reasoning[0].text == text and reasoning[0].field == field:
        return message
    new = Reasoning(text, field)
    blocks: list[Block] = []
    placed = False
    for block in message.blocks:
        if isinstance(block, Reasoning):
            if not placed:
                blocks.append(new)
                placed = True
            continue
        blocks.append(block)
    if not placed:
        blocks.insert(0, new)
    return Message(message.role, tuple(blocks))


def target_field(messages: Sequence[Message], default_field: str, *, normalize: bool) -> str:
    """The one field a request's rows are sent in.

    D677 (``normalize``): the field of the newest assistant row with real reasoning, else of
    the newest row with any reasoning block, else ``default_field``. Before D677: the first of
    REASONING_FIELDS that any assistant row carries, else ``default_field``.
    """
    assistants = [m for m in messages if m.role == "assistant"]
    if normalize:
        for message in reversed(assistants):
            if real_reasoning(message):
                return next(b.field for b in message.blocks if isinstance(b, Reasoning))
        for message in reversed(assistants):
            for block in message.blocks:
                if isinstance(block, Reasoning):
                    return block.field
        return default_field
    present = {b.field for m in assistants for b in m.blocks if isinstance(b, Reasoning)}
    return next((field for field in REASONING_FIELDS if field in present), default_field)


def backfill(messages: Sequence[Message], *, fill: str, default_field: str, normalize: bool) -> tuple[Message, ...]:
    """Every assistant row carries reasoning in one field; rows without real reasoning get ``fill``.

    With ``normalize`` (D677) real reasoning under another field is moved to the target field
    and a leading placeholder echo is dropped. Without it (before D677) a row keeps its
    reasoning only if it already has a non-empty value in the target field; any other row gets
    ``fill`` in that field, replacing whatever reasoning it carried under other names.
    """
    field = target_field(messages, default_field, normalize=normalize)
    out: list[Message] = []
    for message in messages:
        if message.role != "assistant":
            out.append(message)
            continue
        if normalize:
            text = real_reasoning(message)
            out.append(with_reasoning(message, text or fill, field))
            continue
        current = reasoning_value(message, field)
        if current:
            out.append(message)
        else:
            out.append(with_reasoning(message, fill, field))
    return tuple(out)


def fill_empty(messages: Sequence[Message], fill: str) -> tuple[Message, ...]:
    """Replace empty reasoning values by ``fill``, in their own field; rows without a field stay as they are.

    This is a relay client that maps an empty echo to the placeholder but never invents a field
    the history lacks (so a row that lost its reasoning to a compaction bug still shows).
    """
    if not fill:
        return tuple(messages)
    out: list[Message] = []
    for message in messages:
        if message.role == "assistant" and any(isinstance(b, Reasoning) and not b.text for b in message.blocks):
            blocks = tuple(
                Reasoning(fill, b.field) if isinstance(b, Reasoning) and not b.text else b for b in message.blocks
            )
            message = Message(message.role, blocks)
        out.append(message)
    return tuple(out)


# --- retained thinking turns (ADR 0256 decision 2) ------------------------------------------


def truncate_chars(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` code points plus an ellipsis when longer."""
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def retain_turns(
    messages: Sequence[Message], limit: int = RETAINED_TURNS, max_chars: int = RETAINED_CHARS
) -> tuple[RetainedTurn, ...]:
    """The newest ``limit`` assistant rows with real thinking, each field truncated, oldest first."""
    kept: list[RetainedTurn] = []
    for message in reversed(messages):
        if len(kept) >= limit:
            break
        if message.role != "assistant":
            continue
        thinking = real_reasoning(message)
        if not thinking:
            continue
        kept.append(RetainedTurn(truncate_chars(thinking, max_chars), truncate_chars(message.text(), max_chars)))
    return tuple(reversed(kept))


def retained_rows(turns: Sequence[RetainedTurn], field: str = REBUILT_FIELD) -> tuple[Message, ...]:
    """Text-only assistant rows replaying retained turns (thinking, then text when there is any)."""
    rows = []
    for turn in turns:
        blocks: tuple[Block, ...] = (Reasoning(turn.thinking, field),)
        if turn.text:
            blocks += (Text(turn.text),)
        rows.append(Message("assistant", blocks))
    return tuple(rows)


# --- a relay client in front of an engine that replays rows as stored ----------------------


class ReplayAdapter:
    """Wraps an engine so that every request it causes goes out with empty reasoning filled.

    The checkpoint and ranges engines replay rows as the model emitted them; on a strict relay
    their client maps an empty echo to the placeholder (as LiteLLM does). Conversation views and
    the engine's own model calls (the checkpoint summary replay) get the same fill, so the
    summary call stays a byte prefix of the conversation.
    """

    def __init__(self, inner: Engine, fill: str) -> None:
        self.inner = inner
        self.fill = fill
        self.name = inner.name

    def before_step(self, ctx: StepContext) -> None:
        """The inner engine's step, with its model calls filled too."""

        def client(request: Request) -> Reply:
            messages = fill_empty(request.messages, self.fill)
            if any(a is not b for a, b in zip(messages, request.messages)):
                request = replace(request, messages=messages)
            return ctx.client(request)

        self.inner.before_step(replace(ctx, client=client))

    def view(self, session: Session) -> tuple[Message, ...]:
        """The inner view with empty reasoning filled."""
        return fill_empty(self.inner.view(session), self.fill)

    def run_tool(self, session: Session, call: ToolCall) -> Message | None:
        """The inner engine's tools."""
        return self.inner.run_tool(session, call)

    def __getattr__(self, name: str) -> object:
        # Anything else (config, preset, engine state) reads through to the wrapped engine.
        return getattr(self.inner, name)
