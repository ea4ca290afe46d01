"""Small request/session builders shared by the unit tests (``make_*``)."""

from __future__ import annotations

from prefixbench.kernel.session import Header, Session, tool_result_message
from prefixbench.simulator.wire import Envelope, Message, Request, Text, ToolCall, ToolSchema, user_text

ENVELOPE = Envelope("acme", "m1", "high")
TOOLS = (ToolSchema.make("read_file", "Read a file.", {"type": "object"}),)


def make_request(*texts: str, envelope: Envelope = ENVELOPE, system: str = "sys", max_tokens: int | None = None) -> Request:
    """A request whose messages alternate user/assistant text, one per argument."""
    messages = tuple(
        Message("user" if i % 2 == 0 else "assistant", (Text(t),)) for i, t in enumerate(texts)
    )
    return Request(envelope, messages, system, TOOLS, max_tokens)


def make_tool_step(n: int, text: str = "thinking", result: str = "file body") -> tuple[Message, Message]:
    """An assistant message calling read_file, and its tool result."""
    call = ToolCall(f"call-{n}", "read_file", f'{{"i":{n}}}')
    return Message("assistant", (Text(f"{text} {n}"), call)), tool_result_message(f"call-{n}", f"{result} {n}")


def make_session(num_steps: int, *, result_chars: int = 40) -> Session:
    """A session with a header, one user message and ``num_steps`` tool steps."""
    session = Session("test")
    session.log_header(Header(ENVELOPE, "sys", TOOLS))
    session.append("user/message", user_text("start"))
    for n in range(num_steps):
        assistant, result = make_tool_step(n, result=("r" * result_chars))
        session.append("assistant/message", assistant)
        session.append("tool/result", result)
    return session
