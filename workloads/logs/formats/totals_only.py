"""Agents' stores that keep token totals, never a call's usage: recognized only to refuse them in
one line that says what they keep and what records the agent's calls instead (exit 2), never
read as calls.

* Crush's ``.crush/crush.db`` (and the Go-era opencode's ``.opencode/opencode.db`` it forked
  from): ``sessions(id, ..., prompt_tokens, completion_tokens, cost, ...)`` and ``messages(id,
  session_id, role, parts, model, ...)``. Each call's usage sets the session's prompt and
  completion tokens (Crush's ``updateSessionTokenCounters``: the last call's, not a sum) and
  adds to its cost; no message holds a usage.
* Hermes Agent's ``~/.hermes/state.db``: per-session sums of input, output, cache read and
  write tokens, a message's own ``token_count``, no call's usage.
* Goose's ``~/.local/share/goose/sessions/sessions.db`` (Goose 1.10 and later, schema versions 1
  to 13): ``sessions(id, ..., total_tokens, input_tokens, output_tokens,
  accumulated_total_tokens, accumulated_input_tokens, accumulated_output_tokens, ...)`` and
  ``messages(id, session_id, role, content_json, created_timestamp, ...)``: the session's last
  call's counts and their sums, no cache count (Goose's ``Usage`` has input, output and total
  only), and no message holds a usage (``messages.tokens`` is never written).
* Goose's older session files, ``sessions/<name>.jsonl``: a first line of metadata
  ``{working_dir, description, schedule_id, message_count, total_tokens, input_tokens,
  output_tokens, accumulated_*}`` then one message a line ``{role, created, content}``: the same
  totals, the same lack.
* Factory Droid's session files, ``~/.factory/sessions/<project>/<id>.jsonl``: a
  ``session_start`` line ``{type, id, title, sessionTitle, owner, version, cwd}`` then one
  message a line ``{type: message, id, timestamp, message: {role, content}}`` (shaped like pi's,
  which is why it is told first), no message holding a usage; the session's token totals (input,
  output, cache creation and read, thinking) are in ``<id>.settings.json`` beside it.
* Qoder CLI's sessions, ``~/.qoder/projects/<project>/<id>.jsonl``: Claude Code's entries after a
  ``runtime-config`` line ``{type, sessionId, model, reasoningEffort, contextWindow, timestamp}``,
  each assistant message's usage ``{input_tokens: 0, output_tokens: 0, credits}`` (public readers
  of the files; the model a tier alias such as ``efficient``): told by that first line, as
  Droid's, before its entries are read as Claude Code's of no usage.
* Cursor's agent transcripts, ``~/.cursor/projects/<project>/agent-transcripts/<id>.jsonl``: one
  message a line, ``{role, message: {content}}``, no model and no token count at all.
* nanobot's sessions (HKUDS/nanobot and its forks), ``<workspace>/sessions/<channel>_<chat>.jsonl``:
  a first line ``{_type: metadata, key, created_at, updated_at, metadata, last_consolidated}``
  (early releases: no ``key`` nor ``last_consolidated``), then one message a line ``{role,
  content, timestamp}`` (tool calls and results beside), no model and no token count at all
  (a real one: AlisaKondakova/se-toolkit-lab-8's ``nanobot/workspace/sessions/``).
* Cursor CLI's chat stores, ``~/.cursor/chats/<workspace>/<id>/store.db``: the messages as
  content-addressed blobs, the context's current size on the newest root, no call's usage
  (:data:`CURSOR_CLI`).
* Kiro's sessions (AWS's agent: Kiro meters credits, not tokens; public readers of its files,
  codeburn's ``src/providers/kiro.ts`` and aleung/kiro-session-index, find no token count in
  them, the CLI's ``input_token_count``/``output_token_count`` 0 on every turn):

  * the CLI's store, ``~/.kiro/sessions/cli/<id>.jsonl``: one ``{version, kind, data}`` a line,
    ``kind`` one of Prompt, AssistantMessage, ToolResults, Clear, Compaction, no model and no
    usage; beside it ``<id>.json``, ``{session_id, cwd, ..., session_state}``, whose
    ``conversation_metadata.user_turn_metadatas`` hold each turn's credits (``metering_usage``);
  * the V3 engine's (the IDE's and ``kiro-cli --v3``)
    ``~/.kiro/sessions/<workspace>/sess_<id>/messages.jsonl``: one ``{id, timestamp, payload}`` a
    line, ``payload.type`` user, assistant, tool_call, tool_result, turn_start, turn_end,
    usage_summary (a turn's credits)...;
  * the IDE's earlier ``.chat`` files (``globalStorage/kiro.kiroagent/<hash>/<id>.chat``):
    ``{executionId, actionId, chat: [{role, content}], metadata: {modelId, ...}}``.
* Warp's ``warp.sqlite``: each conversation's credits and tokens summed per model, no cache count
  and no call's usage (:data:`WARP`).
* Augment's (Auggie's) sessions, ``~/.augment/sessions/<id>.json``: ``{sessionId, created,
  modified, chatHistory: [{exchange: {request_message, response_text, request_nodes,
  response_nodes}, completed, finishedAt}]}``, as public readers of the files read them: no model
  and no token count (Augment's calls run on its own servers, metered in credits).
* Kiro CLI's conversations (the Amazon Q Developer CLI's before it), as the CLI serializes its
  conversation state (what Entire's v2 checkpoints keep as a Kiro session's ``raw_transcript``):
  one object ``{conversation_id, history, ...}`` whose history entries are ``{user, assistant,
  request_metadata?}`` (``[input, response]`` pairs in early Q CLI releases); the request
  metadata keeps times, lengths and the model, no token count.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats import opencode_db


class TotalsOnly(msgspec.Struct, frozen=True):
    """One agent's database of totals: the tables (and columns) that name it, and what it keeps."""

    #: What it is, with its article ("a Crush or Go-era opencode database").
    what: str
    #: What it keeps, said after "it keeps".
    keeps: str
    #: What records the agent's calls instead.
    instead: str
    tables: dict[str, tuple[str, ...]]

    def refusal(self) -> str:
        """The parenthesis the refusal of such a database ends with."""
        return f"{self.what}: it keeps {self.keeps}, not each call's usage; {self.instead}"


CRUSH = TotalsOnly(
    what="a Crush or Go-era opencode database",
    keeps="each session's last call's prompt and completion tokens and its summed cost",
    instead="record such an agent's calls with `prefixbench proxy`",
    tables={"sessions": ("id", "prompt_tokens", "completion_tokens", "cost"), "messages": ("id", "session_id", "role", "parts")},
)
GOOSE = TotalsOnly(
    what="a Goose sessions database (sessions.db)",
    keeps="each session's token totals (its last call's input and output tokens, and their sums) and no cache count",
    instead="record Goose's calls with `prefixbench proxy`",
    tables={
        "sessions": ("id", "accumulated_input_tokens", "accumulated_output_tokens"),
        "messages": ("id", "session_id", "role", "content_json"),
    },
)
#: Hermes Agent's ``~/.hermes/state.db`` (NousResearch/hermes-agent's ``hermes_state``): each
#: session's summed ``input_tokens``, ``cache_read_tokens``... (later schemas also
#: ``session_model_usage``: the same sums per model and task), each message's own
#: ``token_count``; no call's usage.
HERMES = TotalsOnly(
    what="Hermes Agent's state.db",
    keeps="each session's summed input, output and cache read and write tokens",
    instead="record such an agent's calls with `prefixbench proxy`",
    tables={
        "sessions": ("id", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"),
        "messages": ("id", "session_id", "role", "token_count"),
    },
)
#: Cursor CLI's (cursor-agent's) chat store, ``~/.cursor/chats/<md5 of the workspace>/<agent id>/store.db``:
#: ``meta(key, value)``, one row whose value is hex-encoded JSON (``agentId``, ``latestRootBlobId``,
#: ``name``, ``createdAt``, ``lastUsedModel``), and ``blobs(id, data)``, content-addressed (the id
#: the SHA-256 of the data): JSON messages and protobuf roots. No call's usage: public readers of
#: the store find only a snapshot of the context's size (tokens by part) on the newest root blob.
CURSOR_CLI = TotalsOnly(
    what="a Cursor CLI chat store (~/.cursor/chats/<workspace>/<id>/store.db)",
    keeps="its messages as content-addressed blobs and, on the newest root blob, only the current context's size",
    instead="Cursor's calls go through Cursor's own servers and no file on the machine logs their usage",
    tables={"meta": ("key", "value"), "blobs": ("id", "data")},
)
#: Warp's ``warp.sqlite`` (the terminal's state, ``dev.warp.Warp-Stable/`` on macOS,
#: ``~/.local/state/warp-terminal/`` on Linux): ``ai_queries`` (one row per exchange: ``exchange_id``,
#: ``conversation_id``, ``start_ts``, ``input``, ``model_id``; the assistant's text is not kept) and
#: ``agent_conversations`` (``conversation_id``, ``conversation_data``: JSON whose
#: ``conversation_usage_metadata`` sums the conversation's ``credits_spent`` and ``token_usage``
#: per model, ``warp_tokens`` and ``byok_tokens``): no call's usage, no cache count.
WARP = TotalsOnly(
    what="Warp's warp.sqlite",
    keeps="each conversation's credits and tokens summed per model (conversation_data), no cache count",
    instead="Warp's calls go through Warp's own servers and no file on the machine logs their usage",
    tables={"ai_queries": ("exchange_id", "conversation_id", "model_id"), "agent_conversations": ("conversation_id", "conversation_data")},
)
#: Every database of totals, checked in this order.
DATABASES: tuple[TotalsOnly, ...] = (HERMES, CRUSH, GOOSE, CURSOR_CLI, WARP)

#: What a Goose session file is, and why it is no log to audit (said after ``file:line: ``).
GOOSE_SESSION = (
    "a Goose session file (sessions/<name>.jsonl): its first line keeps the session's token totals "
    "(the last call's input and output tokens, and their sums) and no cache count, and no message holds a usage: "
    "no request to audit; record Goose's calls with `prefixbench proxy`"
)
#: The keys of a Goose session file's first line (``SessionMetadata``), of which it has most.
_GOOSE_KEYS = frozenset({"working_dir", "description", "schedule_id", "message_count", "total_tokens", "input_tokens",
                         "output_tokens", "accumulated_total_tokens", "accumulated_input_tokens", "accumulated_output_tokens"})


#: What a Factory Droid session file is, and why it is no log to audit (said after ``file:line: ``).
DROID_SESSION = (
    "a Factory Droid session (sessions/<project>/<id>.jsonl): no message holds a usage, the session's token totals "
    "are kept beside it (<id>.settings.json: tokenUsage), not each call's: no request to audit; "
    "record Droid's calls with `prefixbench proxy`"
)


def is_droid_session_header(value: dict) -> bool:
    """Whether a record is the first line of a Factory Droid session file: a ``session_start``
    with an ``id``, a ``cwd`` and Droid's ``sessionTitle`` or ``owner``."""
    return (value.get("type") == "session_start" and isinstance(value.get("id"), str) and "cwd" in value
            and ("sessionTitle" in value or "owner" in value))


#: What a Qoder CLI session is, and why it is no log to audit (said after ``file:line: ``).
QODER_SESSION = (
    "a Qoder CLI session (~/.qoder/projects/<project>/<id>.jsonl): Claude Code's entries, each call's usage "
    "its credits with input and output tokens 0 (Qoder meters credits on its own servers): no request to audit"
)


def is_qoder_session_header(value: dict) -> bool:
    """Whether a record is the first line of a Qoder CLI session: a ``runtime-config`` with a
    ``sessionId`` and Qoder's ``reasoningEffort`` and ``contextWindow``."""
    return (value.get("type") == "runtime-config" and isinstance(value.get("sessionId"), str)
            and "reasoningEffort" in value and "contextWindow" in value)


#: What a Cursor agent transcript is, and why it is no log to audit (said after ``file:line: ``).
CURSOR_TRANSCRIPT = (
    "a Cursor agent transcript (agent-transcripts/<id>.jsonl): each line a message's role and content, "
    "no model and no token count: no request to audit"
)


def is_cursor_transcript_line(value: dict) -> bool:
    """Whether a record is a Cursor agent transcript's line: a user's or the assistant's ``role``
    and a ``message`` of its ``content`` list, nothing else."""
    message = value.get("message")
    return (value.keys() == {"role", "message"} and value["role"] in ("user", "assistant") and isinstance(message, dict)
            and message.keys() == {"content"} and isinstance(message["content"], list))


#: What a Hermes Agent session log is, and why it is no log to audit (said after ``file:line: ``).
HERMES_SESSION = (
    "a Hermes Agent session log (sessions/session_<time>_<id>.json): the session's model, system prompt, tools and "
    "messages, rewritten after each turn, no call's usage (its state.db sums each session's tokens): no request to "
    "audit; record Hermes Agent's calls with `prefixbench proxy`"
)
#: The keys a Hermes Agent session log has beside its ``messages`` (hermes-agent's ``_save_session_log``).
_HERMES_KEYS = frozenset({"session_id", "platform", "session_start", "last_updated", "message_count"})


def is_hermes_session(value: dict) -> bool:
    """Whether a JSON object is a Hermes Agent session log: a ``session_id``, the ``messages`` and
    the session's ``platform``, ``session_start``, ``last_updated`` and ``message_count``. (Its
    ``model`` and ``messages`` are a chat-completions request body's: told before that is.)"""
    return isinstance(value.get("session_id"), str) and isinstance(value.get("messages"), list) and _HERMES_KEYS <= value.keys()


#: What a nanobot session is, and why it is no log to audit (said after ``file:line: ``).
NANOBOT_SESSION = (
    "a nanobot session (sessions/<channel>_<chat>.jsonl): a metadata line, then each message's role and content, "
    "no model and no token count: no request to audit; record nanobot's calls with `prefixbench proxy` "
    "(its provider's apiBase takes the proxy's URL)"
)


def is_nanobot_session_header(value: dict) -> bool:
    """Whether a record is the first line of a nanobot session file: ``_type`` ``metadata`` with
    the session's ``created_at`` and ``updated_at`` times and its ``metadata`` object."""
    return (value.get("_type") == "metadata" and isinstance(value.get("created_at"), str)
            and isinstance(value.get("updated_at"), str) and isinstance(value.get("metadata"), dict))


#: Why a Kiro session is no log to audit (said after what it is).
_KIRO_WHY = "(Kiro meters each turn in credits, not tokens, and logs no call's usage): no request to audit"
#: The kinds of a Kiro CLI session's lines.
_KIRO_CLI_KINDS = frozenset({"Prompt", "AssistantMessage", "ToolResults", "Clear", "Compaction"})
#: The payload types of a Kiro V3 session's ``messages.jsonl`` lines (those a turn's records start with).
_KIRO_V3_TYPES = frozenset({"user", "assistant", "tool_call", "tool_result", "turn_start", "turn_end", "usage_summary",
                            "session_start", "session_metadata", "steering_inclusion", "sub_agent_start", "sub_agent_complete"})


def kiro_session(value: dict) -> str | None:
    """What a record of a Kiro session file says it is, and why it is no log to audit (said
    after ``file:line: ``); None for a record of no Kiro session."""
    if is_kiro_conversation(value):
        return KIRO_CONVERSATION
    data = value.get("data")
    kind = value.get("kind")
    if (value.keys() <= {"version", "kind", "data"} and isinstance(kind, str) and kind in _KIRO_CLI_KINDS  # (a list: no set member)
            and (isinstance(data, dict) or data is None) and isinstance(value.get("version"), str)):
        return f"a Kiro CLI session (sessions/cli/<id>.jsonl): each line a prompt, a reply or tool results, no token count {_KIRO_WHY}"
    state = value.get("session_state")
    if isinstance(value.get("session_id"), str) and "cwd" in value and isinstance(state, dict):
        return ("a Kiro CLI session's metadata (sessions/cli/<id>.json): each turn's credits, no token count "
                "(input_token_count and output_token_count 0 on every turn: Kiro meters credits, not tokens, and logs "
                "no call's usage): no request to audit")
    payload = value.get("payload")
    kind = payload.get("type") if isinstance(payload, dict) else None
    if (isinstance(kind, str) and kind in _KIRO_V3_TYPES and isinstance(value.get("timestamp"), str)
            and value.keys() <= {"id", "timestamp", "payload"}):
        return f"a Kiro session (sessions/<workspace>/sess_<id>/messages.jsonl): each line a message or a turn's credits, no token count {_KIRO_WHY}"
    metadata = value.get("metadata")
    if isinstance(value.get("chat"), list) and isinstance(value.get("executionId"), str) and isinstance(metadata, dict) and "modelId" in metadata:
        return f"a Kiro IDE chat file (kiro.kiroagent/<workspace>/<id>.chat): its messages' text, no token count {_KIRO_WHY}"
    return None


#: What a Kiro CLI conversation is, and why it is no log to audit (said after ``file:line: ``).
KIRO_CONVERSATION = (
    "a Kiro CLI (or Amazon Q Developer CLI) conversation: its history keeps each prompt, reply and tool use, "
    "no token count: no request to audit"
)


def _counts_tokens(value: object) -> bool:
    """Whether a JSON value names a token count anywhere (a key with "token" in it). Walked with
    a stack of its own, not a call a level: a value the reader reads may nest deeper than
    Python's recursion allows."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            if any("token" in str(key).lower() for key in item):
                return True
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return False


def is_kiro_conversation(value: dict) -> bool:
    """Whether a record is a Kiro CLI conversation's state: a ``conversation_id``, a ``history``
    of user-and-assistant entries (objects, or pairs in early releases), and no token count."""
    history = value.get("history")
    if not isinstance(value.get("conversation_id"), str) or not isinstance(history, list) or not history:
        return False
    for entry in history:
        if isinstance(entry, dict):
            if not {"user", "assistant"} <= entry.keys():
                return False
        elif not (isinstance(entry, list) and len(entry) == 2):
            return False
    return not _counts_tokens(history)


#: What an Augment (Auggie) session is, and why it is no log to audit (said after ``file:line: ``).
AUGMENT_SESSION = (
    "an Augment (Auggie) session (~/.augment/sessions/<id>.json): each exchange's request and response text, "
    "no model and no token count (Augment meters its calls in credits on its own servers): no request to audit"
)


def is_augment_session(value: dict) -> bool:
    """Whether a record is an Augment session: a ``sessionId``, ``created`` and ``modified``, and a
    ``chatHistory`` of ``{exchange: {request_message, response_text, ...}, ...}`` items (none
    naming a token count)."""
    history = value.get("chatHistory")
    if not (isinstance(value.get("sessionId"), str) and "created" in value and "modified" in value and isinstance(history, list)):
        return False
    for item in history:
        exchange = item.get("exchange") if isinstance(item, dict) else None
        if not isinstance(exchange, dict) or not {"request_message", "response_text"} & exchange.keys():
            return False
    return not _counts_tokens(history)


def database_of(path: Path) -> TotalsOnly | None:
    """The database of totals ``path`` is, if it is one; None for anything that cannot be read as one."""
    try:
        db = opencode_db.connect(path)
    except UserError:
        return None
    try:
        for kind in DATABASES:
            if opencode_db.has_tables(db, kind.tables):
                return kind
        return None
    except sqlite3.Error:
        return None
    finally:
        db.close()


def is_goose_session_header(value: dict) -> bool:
    """Whether a record is the first line of a Goose session file: a ``working_dir``, a
    ``message_count`` and the session's token totals (the ``accumulated_*`` ones from mid-2025)."""
    return (isinstance(value.get("working_dir"), str) and "message_count" in value and "total_tokens" in value
            and len(_GOOSE_KEYS & value.keys()) >= 5)
