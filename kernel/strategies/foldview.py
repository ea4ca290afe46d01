"""Pieces the agent strategies of this package share: settings, a folded view, masking, text.

Written against the public engine API only (:mod:`prefixbench.kernel`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from prefixbench.kernel import Message, Session, Text, ToolCall, ToolResult, count_tokens, user_text


class Folded:
    """A view that replaces the session's messages before ``cut`` by ``head`` (the engine's own messages)."""

    def __init__(self) -> None:
        self.head: tuple[Message, ...] = ()
        self.cut = 0

    def live(self, session: Session) -> tuple[Message, ...]:
        """The session's messages after the cut (not folded yet)."""
        return session.derive_messages()[self.cut :]

    def view(self, session: Session) -> tuple[Message, ...]:
        """The head, then the live messages."""
        return (*self.head, *self.live(session))

    def land(self, head: Sequence[Message], cut: int) -> None:
        """Fold everything before session index ``cut`` into ``head``."""
        self.head, self.cut = tuple(head), cut


def skip_tool_results(messages: Sequence[Message], index: int) -> int:
    """The first index >= ``index`` that is not a tool result (a kept region never opens on an orphan)."""
    while index < len(messages) and messages[index].role == "tool":
        index += 1
    return index


def tokens_of(messages: Sequence[Message]) -> int:
    """The meter's price of the messages, without a header."""
    return count_tokens(messages)


def tool_text(message: Message) -> str:
    """The text of a tool message's results."""
    return "".join(item.text for block in message.blocks if isinstance(block, ToolResult) for item in block.content)


def replace_results(message: Message, text: str) -> Message:
    """The tool message with each result's content replaced by ``text`` (call ids kept, so pairs stay whole)."""
    blocks = tuple(
        ToolResult(block.call_id, (Text(text),), block.is_error) if isinstance(block, ToolResult) else block
        for block in message.blocks
    )
    return Message(message.role, blocks)


def transcript(messages: Sequence[Message], max_result_chars: int | None = None) -> str:
    """The messages as plain text, one labelled line per block (reasoning left out)."""
    lines: list[str] = []
    for message in messages:
        for block in message.blocks:
            if isinstance(block, Text) and block.text:
                lines.append(f"[{message.role}]: {block.text}")
            elif isinstance(block, ToolCall):
                lines.append(f"[{message.role} calls {block.name}]: {block.arguments}")
            elif isinstance(block, ToolResult):
                text = "".join(item.text for item in block.content)
                if max_result_chars is not None and len(text) > max_result_chars:
                    text = text[:max_result_chars] + "\n[cut]"
                lines.append(f"[tool result {block.call_id}]: {text}")
    return "\n\n".join(lines)


def shorten(message: Message, budget: int) -> Message | None:
    """A user message cut to about ``budget`` tokens, keeping its start and its end around a marker
    (None when nothing fits)."""
    if tokens_of([message]) <= budget:
        return message
    text = message.text()
    keep = max(0, budget - 16) * 4
    if keep <= 0:
        return None
    dropped = math.ceil((len(text) - keep) / 4)
    half = keep // 2
    return user_text(f"{text[:half]}\n[... about {dropped} tokens cut ...]\n{text[len(text) - (keep - half):]}")
