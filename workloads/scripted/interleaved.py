"""The interleaved peer workload: several agent sessions sharing one request log.

What the peer benchmark (``bench/peers/run.py``) and the scaling benchmarks replay: ``sessions``
coding-agent sessions of ``turns`` requests each, interleaved round robin in the log (session
0 turn 0, session 1 turn 0, ..., session 0 turn 1, ...). Every session sends the same tools
and system prompt, then its own task, then one ``read_file`` call and its ~2,000-word result
per earlier turn. Every 10th turn of session 0 first rewrites an old tool result in place (a
pruner shortening the result of 8 turns earlier), so that session's cache breaks there while
the other sessions keep extending.

Each line is a chat-completions request body (the ``replay`` input). Lines are built from
pre-encoded message strings, so writing a 500 MB log costs about one pass of JSON encoding
over its new content, not over every resent byte. Deterministic: same arguments, same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import msgspec
from prefixbench.workloads.scripted.prose import prose

#: The figures of the peer workload (tests/bench/test_peers_bench.py, bench/peers/run.py): 4 sessions x 50 turns, ~2k-word tool results.
DEFAULT_SESSIONS = 4
DEFAULT_TURNS = 50
#: ~2,000 words of filler (the vocabulary's words average ~5.7 characters plus a space).
RESULT_CHARS = 13_500
REWRITE_EVERY = 10
REWRITE_AGE = 8
MODEL = "gpt-5"

_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the repository.",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run",
            "description": "Run a shell command in the repository.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
        },
    },
]


class InterleavedSpec(msgspec.Struct, frozen=True):
    """Shape of one interleaved log."""

    sessions: int = DEFAULT_SESSIONS
    turns: int = DEFAULT_TURNS
    result_chars: int = RESULT_CHARS

    @property
    def num_requests(self) -> int:
        """Lines of the log."""
        return self.sessions * self.turns

    @property
    def rewrite_turns(self) -> tuple[int, ...]:
        """Turns of session 0 sent right after an old tool result was rewritten in place."""
        return tuple(t for t in range(REWRITE_EVERY, self.turns, REWRITE_EVERY) if t - REWRITE_AGE >= 1)


#: The peer workload's figures (a module constant: a call in a default argument is flagged).
DEFAULT_SPEC = InterleavedSpec()


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _tool_result(session: int, turn: int, chars: int) -> str:
    return prose(f"session {session} file {turn}", chars)


def _pruned(text: str) -> str:
    return f"[pruned {len(text):,} chars] {text[:400]}"


class _Session:
    """One session's messages, each kept as its encoded JSON text."""

    def __init__(self, index: int, spec: InterleavedSpec) -> None:
        self.index = index
        self.spec = spec
        self.results: list[str] = []  # raw text of each tool result, by exchange
        self.encoded: list[str] = [
            _dumps({"role": "system", "content": prose("system prompt of the coding agent", 2_000)}),
            _dumps({"role": "user", "content": prose(f"task of session {index}", 600)}),
        ]

    def request_line(self, turn: int) -> str:
        """The request body this session sends at ``turn`` (after landing that turn's rewrite)."""
        if self.index == 0 and turn in self.spec.rewrite_turns:
            exchange = turn - REWRITE_AGE
            slot = 2 + 2 * exchange + 1
            self.encoded[slot] = self._tool_message(exchange, _pruned(self.results[exchange]))
        messages = ",".join(self.encoded)
        return f'{{"model":"{MODEL}","reasoning_effort":"high","tools":{_TOOLS_JSON},"messages":[{messages}]}}'

    def answer(self, turn: int) -> None:
        """The model calls ``read_file`` and the tool answers: one exchange more for the next turn."""
        call_id = f"call_{self.index}_{turn}"
        arguments = _dumps({"path": f"src/session{self.index}/module{turn}.py"})
        self.encoded.append(
            _dumps(
                {
                    "role": "assistant",
                    "content": f"Reading module {turn}.",
                    "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "read_file", "arguments": arguments}}],
                }
            )
        )
        text = _tool_result(self.index, turn, self.spec.result_chars)
        self.results.append(text)
        self.encoded.append(self._tool_message(turn, text))

    def _tool_message(self, exchange: int, text: str) -> str:
        return _dumps({"role": "tool", "tool_call_id": f"call_{self.index}_{exchange}", "content": text})


_TOOLS_JSON = _dumps(_TOOLS)


def interleaved_lines(spec: InterleavedSpec = DEFAULT_SPEC) -> Iterator[tuple[int, int, str]]:
    """``(session, turn, request body JSON)`` in log order."""
    sessions = [_Session(index, spec) for index in range(spec.sessions)]
    for turn in range(spec.turns):
        for session in sessions:
            yield session.index, turn, session.request_line(turn)
            session.answer(turn)


def write_interleaved(path: Path, spec: InterleavedSpec = DEFAULT_SPEC) -> int:
    """Write the log to ``path``, one request a line; returns its size in bytes."""
    size = 0
    with path.open("wb") as out:
        for _, _, line in interleaved_lines(spec):
            data = (line + "\n").encode()
            out.write(data)
            size += len(data)
    return size
