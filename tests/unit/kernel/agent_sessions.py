"""Hand-built sessions and step contexts for the agent strategy tests (kernel/strategies/)."""

from __future__ import annotations

from prefixbench.kernel import (
    EngineBase,
    Envelope,
    Header,
    Message,
    ModelInfo,
    Reply,
    Request,
    Session,
    StepContext,
    Text,
    ToolCall,
    ToolResult,
    user_text,
)

ROUTED = Header(Envelope("p", "m", "max"), "You are a coding agent.", ())


def tool_step(index: int, chars: int) -> tuple[Message, Message]:
    """One step: an assistant tool call and its result of ``chars`` characters."""
    call = Message("assistant", (Text(f"step {index}"), ToolCall(f"c{index}", "read", f'{{"n":{index}}}')))
    body = "".join(f"line {index}.{k} " + "x" * 40 + "\n" for k in range(chars // 48 + 1))[:chars]
    return call, Message("tool", (ToolResult(f"c{index}", (Text(body),)),))


def session_with(turns: list[tuple[str, int]], chars: int = 2_000) -> Session:
    """A session of user turns, each ``(prompt, steps)`` of tool steps with ``chars``-character results."""
    session = Session("s")
    session.log_header(ROUTED)
    step = 0
    for prompt, steps in turns:
        session.append("user/message", user_text(prompt))
        for _ in range(steps):
            call, result = tool_step(step, chars)
            session.append("assistant/message", call)
            session.append("tool/result", result)
            step += 1
    return session


def grow(session: Session, steps: int, chars: int = 2_000) -> None:
    """Append ``steps`` more tool steps."""
    start = sum(1 for m in session.derive_messages() if m.role == "tool")
    for index in range(start, start + steps):
        call, result = tool_step(index, chars)
        session.append("assistant/message", call)
        session.append("tool/result", result)


class Recorder:
    """The client of a step context: records every request, answers with a fixed summary."""

    def __init__(self, text: str = "SUMMARY OF THE WORK") -> None:
        self.sent: list[Request] = []
        self.text = text

    def __call__(self, request: Request) -> Reply:
        self.sent.append(request)
        return Reply((Text(self.text),))


def context(session: Session, window: int, client: Recorder | None = None, max_tokens: int = 2_000) -> StepContext:
    """A step context on ``session`` at ``window`` whose client is ``client``."""
    info = ModelInfo("p", "m", window, max_tokens, "high")
    return StepContext(session, lambda p, m: info, client or Recorder(), window, ROUTED)


def rewrites(session: Session) -> list[str]:
    """The kinds of the rewrites declared on ``session``."""
    return [e.rewrite_kind for e in session.events if e.kind == "compaction/rewrite"]


def left_alone(engine: EngineBase, session: Session, window: int) -> bool:
    """Whether ``engine``, run before a step of ``session`` at ``window``, sent no call and declared no rewrite."""
    client = Recorder()
    engine.before_step(context(session, window, client))
    return client.sent == [] and rewrites(session) == []


def compact_twice(engine: EngineBase, steps: int, window: int) -> tuple[Session, Recorder]:
    """``engine`` run before a step of a one-turn session of ``steps`` tool steps, then again after
    ``steps`` more: the session and the client that recorded both rounds' calls."""
    session = session_with([("fix the bug", steps)])
    client = Recorder()
    engine.before_step(context(session, window, client))
    grow(session, steps)
    engine.before_step(context(session, window, client))
    return session, client
