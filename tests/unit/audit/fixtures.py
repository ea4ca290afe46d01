"""Small synthetic logs of every format and version the audit reads (written by the tests)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path



def pi_session(path: Path, provider: str, model: str, t0: int = 1_788_000_000_000) -> Path:
    """A pi session of two calls on openai-completions (a cold one, then one reading 8,960 cached
    tokens), each message naming ``provider`` and ``model``."""
    entries: list[dict] = [{"type": "session", "id": "p1", "timestamp": "2026-08-29T10:00:00.000Z", "cwd": "/x"},
                           {"type": "message", "message": {"role": "user", "content": [], "timestamp": t0}}]
    for n, (uncached, read) in enumerate(((9000, 0), (500, 8960))):
        usage = {"input": uncached, "output": 40, "cacheRead": read, "cacheWrite": 0, "cost": {}}
        entries.append({"type": "message", "message": {
            "role": "assistant", "content": [], "timestamp": t0 + 10 + 5000 * n, "provider": provider, "model": model,
            "api": "openai-completions", "usage": usage, "stopReason": "stop"}})
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


def gemini_session(path: Path, model: str, calls: list[tuple[int, int]], *, session: str = "s", at: str = "2026-03-17T22:00",
                   step: int = 3, output: int = 20, thoughts: int = 5) -> Path:
    """A Gemini CLI JSONL session started at minute ``at``: one user turn, then a model message per
    ``(prompt, cached)``, ``step`` seconds apart (the first a second in)."""
    start = f"{at}:00.000Z"
    lines: list[dict] = [{"sessionId": session, "projectHash": "h", "startTime": start, "lastUpdated": start, "kind": "main"},
                         {"id": "u", "timestamp": start, "type": "user", "content": [{"text": "go"}]}]
    for i, (prompt, cached) in enumerate(calls):
        tokens = {"input": prompt, "output": output, "cached": cached, "thoughts": thoughts, "tool": 0, "total": prompt + output + thoughts}
        lines.append({"id": f"m{i}", "timestamp": f"{at}:{step * i + 1:02d}.000Z", "type": "gemini", "content": "ok",
                      "tokens": tokens, "model": model})
    return write_jsonl(path, lines)

def cc_usage(uncached: int, write: int, read: int, output: int, write_1h: int = 0) -> dict:
    usage = {
        "input_tokens": uncached,
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": output,
    }
    if write_1h is not None:
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": write - write_1h, "ephemeral_1h_input_tokens": write_1h}
    return usage


class Transcript:
    """Builds Claude Code transcript lines with parent links."""

    def __init__(self, session: str = "s1", version: str = "1.0.98", sidechain: bool = False) -> None:
        self.session = session
        self.version = version
        self.sidechain = sidechain
        self.lines: list[dict] = []
        self.last: str | None = None
        self.n = 0

    def _uuid(self) -> str:
        self.n += 1
        return f"{self.session}-u{self.n}"

    def user(self, text: str, ts: str, *, tool: bool = False, root: bool = False) -> str:
        uuid = self._uuid()
        content = [{"type": "tool_result", "tool_use_id": "t", "content": text}] if tool else text
        self.lines.append(
            {
                "parentUuid": None if root else self.last,
                "isSidechain": self.sidechain,
                "sessionId": self.session,
                "version": self.version,
                "type": "user",
                "message": {"role": "user", "content": content},
                "uuid": uuid,
                "timestamp": ts,
            }
        )
        self.last = uuid
        return uuid

    def assistant(self, request_id: str, ts: str, usages: list[dict], model: str = "claude-sonnet-4-20250514") -> None:
        """One API response as one line per content block (usage per line as given)."""
        for usage in usages:
            uuid = self._uuid()
            self.lines.append(
                {
                    "parentUuid": self.last,
                    "isSidechain": self.sidechain,
                    "sessionId": self.session,
                    "version": self.version,
                    "type": "assistant",
                    "requestId": request_id,
                    "message": {"id": "msg_" + request_id, "role": "assistant", "model": model, "content": [{"type": "text", "text": "x"}], "usage": usage},
                    "uuid": uuid,
                    "timestamp": ts,
                }
            )
            self.last = uuid

    def compact_boundary(self, ts: str) -> None:
        uuid = self._uuid()
        self.lines.append(
            {
                "parentUuid": None,
                "logicalParentUuid": self.last,
                "isSidechain": False,
                "sessionId": self.session,
                "version": self.version,
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "uuid": uuid,
                "timestamp": ts,
            }
        )
        self.last = uuid


def resumed_session() -> tuple[list[dict], list[dict]]:
    """A Claude Code session of one call (r1, a lane start) and the session that resumes it: its
    copy of r1, then r2 ten minutes on. The first file's lines, the resumed file's."""
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    first = list(t.lines)
    t.user("more", "2025-09-03T00:10:00.000Z")
    t.assistant("r2", "2025-09-03T00:10:02.000Z", [cc_usage(3, 15100, 0, 9)])
    return first, t.lines


def compacted_after_idle(minute: str) -> list[dict]:
    """A Claude Code 2.1 transcript: three calls from 02:00, then a compaction and the first call
    on the compacted context at 02:``minute`` (``"01"`` inside the 5 m TTL, ``"30"`` past it), which
    reads nothing; the head's size is not known (no lane start read anything)."""
    t = Transcript(version="2.1.120")
    t.user("hello", "2026-07-10T02:00:00.000Z", root=True)
    t.assistant("req_1", "2026-07-10T02:00:03.000Z", [cc_usage(3, 8000, 0, 10)], model="claude-sonnet-4-6")
    t.user("r", "2026-07-10T02:00:10.000Z", tool=True)
    t.assistant("req_2", "2026-07-10T02:00:13.000Z", [cc_usage(3, 2000, 8000, 10)], model="claude-sonnet-4-6")
    t.user("r", "2026-07-10T02:00:20.000Z", tool=True)
    t.assistant("req_3", "2026-07-10T02:00:23.000Z", [cc_usage(3, 2000, 10000, 10)], model="claude-sonnet-4-6")
    t.compact_boundary(f"2026-07-10T02:{minute}:00.000Z")
    t.user("summary", f"2026-07-10T02:{minute}:01.000Z")
    t.assistant("req_4", f"2026-07-10T02:{minute}:05.000Z", [cc_usage(3, 3000, 0, 10)], model="claude-sonnet-4-6")
    return t.lines


def anthropic_body(model: str = "claude-sonnet-4-20250514", messages: int = 2, system: str = "You are helpful. " * 400) -> dict:
    msgs = []
    for k in range(messages):
        role = "user" if k % 2 == 0 else "assistant"
        msgs.append({"role": role, "content": [{"type": "text", "text": f"message {k} " + "word " * 50}]})
    msgs[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return {
        "model": model,
        "max_tokens": 1000,
        "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "Read", "description": "read a file", "input_schema": {"type": "object"}}],
        "messages": msgs,
    }


def sse(*events: dict) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def capture_line(body: dict, response: dict, *, url: str = "https://api.anthropic.com/v1/messages", sent: float = 1748554704.0, status: int = 200) -> dict:
    return {
        "request": {"timestamp": sent, "method": "POST", "url": url, "headers": {}, "body": body},
        "response": {"timestamp": sent + 1.5, "status_code": status, "headers": {}, **response},
        "logged_at": "2025-05-29T21:38:25.032Z",
    }


#: OpenRouter's chat-completions endpoint, as a capture names it.
OPENROUTER_URL = "https://openrouter.ai/api/v1/chat/completions"


def openrouter_turns() -> tuple[list[dict], list[dict]]:
    """The messages of two turns of one chat through OpenRouter: a long system prompt and a
    task, then the same with the reply and the next task (the second extends the first)."""
    system = {"role": "system", "content": "You are a careful coding agent. " * 400}
    first = [system, {"role": "user", "content": "fix the bug"}]
    return first, [*first, {"role": "assistant", "content": "done"}, {"role": "user", "content": "now test it"}]


def chat_usage(prompt: int, read: int, output: int = 5) -> dict:
    """A chat-completions ``usage``: the prompt (cached part inside it) and the cached tokens."""
    return {"prompt_tokens": prompt, "completion_tokens": output, "prompt_tokens_details": {"cached_tokens": read}}

#: A model name and a body excerpt as hostile as a log can make them: the text that puts a
#: browser's tokenizer in its double-escaped script state (``<!--<script``), the end of a script
#: element, a terminal's set-title and clear-screen sequences (ESC]0;...BEL ESC[2J), a newline
#: starting a Markdown heading and live HTML, a run of backticks, a line separator, an entity.
HOSTILE = "m<!--<script>\x1b]0;title\x07\x1b[2J</script>\n# heading\n<img src=x onerror=alert(1)>````\u2028&amp;"


def hostile_logs(folder: Path) -> Path:
    """Two logs carrying :data:`HOSTILE` everywhere a log string reaches an output: a capture
    whose model is named so and whose second system prompt holds it (a miss whose body-diff
    excerpt quotes it), and a Claude Code transcript, in a file named with backticks, whose
    model changes from it (a miss whose detail names it)."""
    usage = lambda write, read: {"body": {"usage": {"input_tokens": 5, "cache_creation_input_tokens": write,  # noqa: E731
                                                    "cache_read_input_tokens": read, "output_tokens": 9}}}
    first = anthropic_body(model=HOSTILE, messages=2)
    second = anthropic_body(model=HOSTILE, messages=4, system="You are helpful. " * 200 + HOSTILE + "You are helpful. " * 200)
    write_jsonl(folder / "capture.jsonl", [capture_line(first, usage(2000, 0)), capture_line(second, usage(2100, 0), sent=1748554710.0)])
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)], model=HOSTILE)
    t.user("x", "2025-09-03T00:00:03.000Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:05.000Z", [cc_usage(3, 15000, 0, 9)])
    write_jsonl(folder / "````session.jsonl", t.lines)
    return folder


def read_keeping_places(reader: object, path: Path, monkeypatch: object) -> tuple[list, list]:
    """Read ``path`` while counting the message records ``reader`` (a format's module) makes with
    its ``make_message``; returns the list of records made (it keeps counting for the rest of
    the test, an audit included) and each request's kept messages (one ``bytes`` of line
    offsets where the records wait to be made)."""
    from prefixbench.workloads.audit.core import load_trace

    made: list = []
    real = reader.make_message  # type: ignore[attr-defined]
    monkeypatch.setattr(reader, "make_message", lambda *a, **k: made.append(a) or real(*a, **k))  # type: ignore[attr-defined]
    requests, _ = load_trace([path])
    return made, [r.messages for r in requests if r.messages]


def cli_in_process(*argv: str) -> tuple[int, str, str]:
    """Run ``prefixbench ARGV`` in this process: its exit status, standard output and error."""
    from prefixbench.reports.cli import run

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(list(argv))
    return status, out.getvalue(), err.getvalue()
