"""Agents' headless outputs that report usage only per turn or per run: named, never read.

Users pipe an agent's machine output to a file and audit it. Where that output carries each
model call's usage with its cache counts it is read as a version of the agent's format (``claude
-p --output-format stream-json``, ``pi --mode json``); where it carries only a turn's or the
run's totals, a call's prompt cannot be told from the next one's, so the audit refuses the file
in one line that says what it is, why, and which of the agent's own files logs each call:

* ``codex exec --json`` since 0.44 (openai/codex ``codex-rs/exec/src/exec_events.rs``; the first
  releases named an item's kind ``item_type``): ``thread.started``, ``turn.started``,
  ``item.started`` / ``item.updated`` / ``item.completed``, ``turn.completed`` whose ``usage
  {input_tokens, cached_input_tokens, output_tokens}`` totals the turn's calls (later releases: the
  thread's so far), ``turn.failed``, ``error``. The rollout under ``~/.codex/sessions/`` logs each
  call (a run with ``--ephemeral`` writes none). Before 0.44 it printed Codex's events with a
  ``token_count`` per call: read as Codex (:mod:`prefixbench.workloads.logs.formats.codex`).
* ``gemini -p --output-format json`` (google-gemini/gemini-cli ``packages/core/src/output/``): one
  object ``{session_id, response, stats, error, warnings}`` whose ``stats.models`` sums each model's
  calls over the run; ``--output-format stream-json``: ``init``, ``message``, ``tool_use``,
  ``tool_result``, ``error`` and a ``result`` whose ``stats`` are the run's totals. The session
  under ``~/.gemini/tmp/<project>/chats/`` logs each call. A ``-p --output-format json`` run
  that fails prints ``{session_id, error: {type, message, code?}}`` instead (``JsonFormatter
  .formatError``; ``session_id`` since December 2025): no usage at all, named with its error.
  Without ``session_id`` the object is any error body (``{"error": {"type", "message", "code"}}``
  is also what gateways answer), so it is not named.

* ``claude -p --output-format json`` (the Agent SDK's result message, ``SDKResultMessage``): one
  object ``{type: "result", subtype, session_id, usage, modelUsage, total_cost_usd, ...}`` whose
  ``usage`` and ``modelUsage`` sum the run's calls. The transcript under ``~/.claude/projects/``
  logs each call, and so does the run's ``--output-format stream-json`` output (read as Claude
  Code). Qwen Code's result message copies the shape without ``modelUsage`` or a cost, so it
  is not named.

* ``copilot -p PROMPT --output-format json`` (GitHub Copilot CLI, since the changelog's "Add
  --output-format json flag to emit JSONL in prompt mode"): its session events as JSON lines,
  ``{type, data, ...}``, then a ``result`` whose fields sit beside ``type`` (``sessionId``,
  ``exitCode``, ``usage``). The one event that holds a call's prompt and cache counts,
  ``assistant.usage``, is ephemeral (github/copilot-sdk ``docs/features/streaming-events.md``) and
  not printed; ``assistant.message`` holds the call's ``outputTokens`` only, and the result's
  ``usage`` premium requests or AI credits and durations (every version seen, to 1.0.83 in
  September 2026). Copilot CLI's session store keeps each call's usage (:mod:`.copilot_cli`). An
  event with a ``parentId`` is also its ``events.jsonl``'s, refused as that
  (``formats.COPILOT_CLI``) unless the file holds the ``result``.

* ``amp --execute --stream-json`` (Amp's CLI: "output in Claude Code-compatible stream JSON
  format"): Claude Code's ``system``/``init``, ``user``, ``assistant`` and ``result`` lines, each
  reply's ``usage`` in the Messages API's names, but no reply names its model (Amp's own usage
  record has one; the printer drops it) and the ``init`` names Amp's ``agent_mode``, not a Claude
  Code version. Amp routes calls to several providers' models, so whose cache rules apply is not
  known: named, and the Amp thread (``threads/T-<uuid>.json``, :mod:`.amp`) is what logs each
  call with its model.

* Entire's compact transcript (the entire.io CLI's ``transcript.jsonl`` beside ``full.jsonl`` in
  each session folder of a checkpoint, ``refs/entire/checkpoints/...``; ``{v: 1, agent,
  cli_version, type, ts, content}`` lines, seen for pi, OpenCode and Claude Code, Entire 0.8.42 and
  0.10.6; no ``ts`` where the agent's own log keeps no time: Kiro CLI's and Cursor's, Entire's v2
  checkpoints, 0.5.6): each reply keeps at most its ``input_tokens`` and ``output_tokens``, no
  cache read or write. The ``full.jsonl`` beside it is the agent's own session file (pi's,
  OpenCode's export, Claude Code's transcript), read as that agent's; Entire's v2 layout keeps
  the compact transcript on ``refs/entire/checkpoints/v2/main`` and the agent's own file as
  ``raw_transcript`` in the same folder on ``refs/entire/checkpoints/v2/full/current``.

Detection runs only when no format claims a file's first records (a file of a format audit reads
is never refused for a line that looks like one of these).
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec


class Headless(msgspec.Struct, frozen=True):
    """One agent's headless output: how to tell a record of it, and what to say instead."""

    #: What the file is, as the refusal names it; ``{detail}`` in it marks where the record's
    #: detail goes (in the sentence, not in a parenthesis after it).
    what: str
    #: Why it cannot be audited a call at a time.
    why: str
    #: Where the agent logs each call (what to audit instead).
    instead: str
    #: Whether a record (a JSON object) is one of this output's.
    match: Callable[[dict], bool]
    #: What the record itself says that the refusal names after ``what`` (an error's message; "" for nothing).
    detail: Callable[[dict], str] | None = None

    def refusal(self, value: dict) -> str:
        """The refusal's text for the record ``value`` it matched, after ``file:line: ``."""
        said = self.detail(value) if self.detail is not None else ""
        if "{detail}" in self.what:
            what = self.what.replace("{detail}", f" {said}" if said else "")
        else:
            what = self.what + (f" ({said})" if said else "")
        return f"{what}: {self.why}, so no call can be audited; audit {self.instead} instead"


#: ``codex exec --json`` event types (``ThreadEvent``'s tags).
_CODEX_ITEM_EVENTS = frozenset({"item.started", "item.updated", "item.completed"})


def _codex_exec(value: dict) -> bool:
    kind = value.get("type")
    if not isinstance(kind, str):  # (a list or an object there would not hash for the set below)
        return False
    if kind == "thread.started":
        return isinstance(value.get("thread_id"), str)
    if kind == "turn.completed":
        return isinstance(value.get("usage"), dict)
    if kind == "turn.failed":
        return isinstance(value.get("error"), dict)
    if kind in _CODEX_ITEM_EVENTS:
        item = value.get("item")
        # The item's kind: ``type``; ``item_type`` in the first releases of this format (0.44, late 2025).
        return isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("type", item.get("item_type")), str)
    return False


#: The keys of ``gemini -p --output-format json``'s one object.
_GEMINI_JSON_KEYS = frozenset({"session_id", "response", "stats", "error", "warnings"})
#: ``gemini --output-format stream-json`` event types.
_GEMINI_STREAM_TYPES = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})


def _gemini_json(value: dict) -> bool:
    stats = value.get("stats")
    return isinstance(stats, dict) and isinstance(stats.get("models"), dict) and set(value) <= _GEMINI_JSON_KEYS


#: ``JsonError``'s keys (``code`` optional).
_GEMINI_ERROR_KEYS = frozenset({"type", "message", "code"})
#: The most of an error's message the refusal quotes.
_MESSAGE_CHARS = 160


def _gemini_error(value: dict) -> bool:
    """``{session_id, error: {type, message, code?}}``: exactly these keys, so that an unrelated
    error body (which has no ``session_id`` beside its ``error``) is never taken for it."""
    error = value.get("error")
    if set(value) != {"session_id", "error"} or not isinstance(value["session_id"], str) or not value["session_id"]:
        return False
    if not isinstance(error, dict) or not set(error) <= _GEMINI_ERROR_KEYS:
        return False
    code = error.get("code")
    return (isinstance(error.get("type"), str) and isinstance(error.get("message"), str)
            and (code is None or (isinstance(code, (str, int)) and not isinstance(code, bool))))


def _gemini_error_text(value: dict) -> str:
    """``type: message`` on one line, the message cut to :data:`_MESSAGE_CHARS`."""
    error = value["error"]
    return _one_line(error["type"], error["message"])


def _one_line(kind: str, message: str) -> str:
    """``kind: message`` on one line, the message cut to :data:`_MESSAGE_CHARS` (``kind`` alone
    for an empty message)."""
    message = " ".join(message.split())
    if len(message) > _MESSAGE_CHARS:
        message = message[:_MESSAGE_CHARS] + "..."
    return f"{kind}: {message}" if message else kind


def _gemini_stream_error_text(value: dict) -> str:
    """What a stream-json record the refusal names says of a failure: a ``result`` of a run that
    failed (``status: error``, its ``error {type, message}``: a run stopped at its start prints
    only this), or an ``error`` event (its severity and message); "" for any other record."""
    error = value.get("error")
    if value.get("type") == "result" and value.get("status") == "error" and isinstance(error, dict):
        kind, message = error.get("type"), error.get("message")
        if isinstance(kind, str) and isinstance(message, str):
            return "the run failed: " + _one_line(kind, message)
    if value.get("type") == "error":
        return _one_line(value["severity"], value["message"])
    return ""


def _gemini_stream(value: dict) -> bool:
    kind = value.get("type")
    if not isinstance(kind, str) or kind not in _GEMINI_STREAM_TYPES or not isinstance(value.get("timestamp"), str):
        return False
    if kind == "init":
        return isinstance(value.get("session_id"), str) and isinstance(value.get("model"), str)
    if kind == "result":
        return isinstance(value.get("status"), str)
    if kind == "message":
        return value.get("role") in ("user", "assistant") and isinstance(value.get("content"), str)
    if kind in ("tool_use", "tool_result"):
        return isinstance(value.get("tool_id"), str)
    # ErrorEvent: severity 'warning' | 'error' and a message (an application log's error line is not one).
    return kind == "error" and value.get("severity") in ("warning", "error") and isinstance(value.get("message"), str)


def _claude_json(value: dict) -> bool:
    """``claude -p --output-format json``'s result: Claude Code's own keys (``modelUsage``, a
    cost) beside the run's ``usage``, which Qwen Code's copy of the shape does not have."""
    if value.get("type") != "result" or not isinstance(value.get("session_id"), str) or not isinstance(value.get("usage"), dict):
        return False
    cost = value.get("total_cost_usd", value.get("cost_usd"))
    return isinstance(value.get("modelUsage"), dict) or (isinstance(cost, (int, float)) and not isinstance(cost, bool))


def _claude_json_text(value: dict) -> str:
    """How the run ended, when not in success (``error_max_turns``, ``error_during_execution``)."""
    subtype = value.get("subtype")
    return f"the run ended {subtype}" if isinstance(subtype, str) and subtype and subtype != "success" else ""


#: How the ``type`` of GitHub Copilot CLI's common session events begins (github/copilot-sdk's
#: ``nodejs/src/generated/session-events.ts``; its other kinds are not needed to tell the output).
_COPILOT_EVENT_KINDS = ("session.", "assistant.", "user.", "tool.", "subagent.", "skill.", "hook.", "system.", "abort")
#: The keys a Copilot CLI event has besides its ``type`` and ``data``.
_COPILOT_EVENT_KEYS = frozenset({"type", "data", "id", "timestamp", "ephemeral", "agentId"})


def is_copilot_json_record(value: dict) -> bool:
    """A record of ``copilot -p --output-format json``: its ``result`` (``sessionId``, an integer
    ``exitCode`` and ``usage`` beside ``type``, no ``data``), or an event ``{type, data}`` of
    Copilot's kinds without the ``parentId`` its ``events.jsonl`` copy has."""
    kind = value.get("type")
    if not isinstance(kind, str):
        return False
    if kind == "result":
        code = value.get("exitCode")
        return ("data" not in value and isinstance(value.get("sessionId"), str) and isinstance(code, int)
                and not isinstance(code, bool) and isinstance(value.get("usage"), dict))
    return kind.startswith(_COPILOT_EVENT_KINDS) and isinstance(value.get("data"), dict) and value.keys() <= _COPILOT_EVENT_KEYS


#: Copilot CLI's ``-p --output-format json`` output, refused (:func:`is_copilot_json_record`).
COPILOT_JSON = Headless(
    "GitHub Copilot CLI -p --output-format json output",
    "it reports no call's prompt or cache counts (each call's assistant.usage is not printed; the result's usage "
    "holds premium requests or AI credits and durations)",
    "Copilot CLI's session store (~/.copilot/session-store.db, Copilot CLI 1.0.73 on) or its OpenTelemetry file "
    "export (run copilot with COPILOT_OTEL_FILE_EXPORTER_PATH=FILE, then audit FILE: format otel)",
    is_copilot_json_record,
)

#: The keys every line of Entire's compact transcript has (``ts`` too, where the agent's own log
#: keeps times: Kiro CLI's and Cursor's do not).
_ENTIRE_KEYS = frozenset({"v", "agent", "cli_version", "type", "content"})


def _entire_compact(value: dict) -> bool:
    """A line of Entire's compact transcript: a version number, the agent and Entire's version,
    a ``user`` or ``assistant`` line with its content and, where given, its time (an assistant
    line's counts beside it)."""
    version = value.get("v")
    return (_ENTIRE_KEYS <= value.keys() and isinstance(version, int) and not isinstance(version, bool)
            and isinstance(value["agent"], str) and isinstance(value["cli_version"], str)
            and value["type"] in ("user", "assistant") and isinstance(value.get("ts", ""), str))


def _entire_agent(value: dict) -> str:
    """The agent whose session the transcript compacts."""
    return f"of the agent {value['agent'][:40]}"


def _amp_stream(value: dict) -> bool:
    """A line of ``amp --execute --stream-json`` (Amp's CLI, "Claude Code-compatible stream JSON"):
    Claude Code's stream shapes, but its ``init`` names Amp's ``agent_mode`` and no
    ``claude_code_version``, and a reply's ``message`` (``{type: "message", role, content,
    stop_reason, usage}``) names no ``model`` and no ``id``; each line's ``session_id`` is the
    Amp thread's (``T-<uuid>``)."""
    kind, message = value.get("type"), value.get("message")
    if not isinstance(value.get("session_id"), str) or "parentUuid" in value or "sessionId" in value:
        return False
    if kind == "system":
        return value.get("subtype") == "init" and "agent_mode" in value and value.get("claude_code_version") is None
    return (kind == "assistant" and "parent_tool_use_id" in value and isinstance(message, dict)
            and message.get("type") == "message" and message.get("role") == "assistant"
            and "model" not in message and "id" not in message and value["session_id"].startswith("T-"))


#: Every headless output refused, in the order they are tried.
HEADLESS: tuple[Headless, ...] = (
    Headless(
        "Codex exec --json output",
        "it reports usage per turn only (turn.completed: totals over the turn's calls, or the thread's so far)",
        "the rollout Codex keeps of the run (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl; --ephemeral runs keep none)",
        _codex_exec,
    ),
    Headless(
        "Gemini CLI -p --output-format json output",
        "it reports usage per run only (stats.models sums each model's calls)",
        "the session Gemini CLI keeps of the run (~/.gemini/tmp/<project>/chats/session-*.json or .jsonl)",
        _gemini_json,
    ),
    Headless(
        "Gemini CLI -p --output-format json error output",
        "it holds only the error the run ended with, no usage",
        "the session Gemini CLI keeps of the run (~/.gemini/tmp/<project>/chats/session-*.json or .jsonl)",
        _gemini_error,
        _gemini_error_text,
    ),
    Headless(
        "Gemini CLI --output-format stream-json output",
        "it reports usage per run only (the result event's stats)",
        "the session Gemini CLI keeps of the run (~/.gemini/tmp/<project>/chats/session-*.json or .jsonl)",
        _gemini_stream,
        _gemini_stream_error_text,
    ),
    Headless(
        "Claude Code -p --output-format json output",
        "it reports usage per run only (the result's usage and modelUsage sum the run's calls)",
        "the transcript Claude Code keeps of the run (~/.claude/projects/<project>/<session_id>.jsonl), "
        "or the run's --output-format stream-json output",
        _claude_json,
        _claude_json_text,
    ),
    COPILOT_JSON,
    Headless(
        "Amp --execute --stream-json output (Claude Code's stream-json shape, written by Amp)",
        "it names no call's model (each reply's usage is printed without it, and Amp routes calls to Claude and GPT "
        "models alike): whose cache rules apply is unknown",
        "the Amp thread of the run (${AMP_DATA_DIR:-~/.local/share/amp}/threads/<session_id>.json, format amp: each "
        "call's model and usage)",
        _amp_stream,
    ),
    Headless(
        "Entire's compact transcript of a session{detail} (transcript.jsonl of a checkpoint)",
        "it keeps at most each reply's uncached input and output tokens, no cache read or write",
        "the agent's own session file the checkpoint keeps (full.jsonl beside it; in Entire's v2 layout raw_transcript, "
        "same folder, on refs/entire/checkpoints/v2/full/current)",
        _entire_compact,
        _entire_agent,
    ),
)


def headless_output(value: object) -> Headless | None:
    """The headless output a record is one of, or None."""
    if not isinstance(value, dict):
        return None
    for headless in HEADLESS:
        if headless.match(value):
            return headless
    return None
