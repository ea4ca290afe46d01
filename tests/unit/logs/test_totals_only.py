"""Agents' stores that keep token totals, never a call's usage (workloads/logs/formats/totals_only.py):
Goose's sessions.db and its older session files are refused in one line saying what they keep and
what records Goose's calls instead, exit 2; never read as calls."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats.totals_only import (
    AUGMENT_SESSION,
    CRUSH,
    CURSOR_CLI,
    CURSOR_TRANSCRIPT,
    DROID_SESSION,
    GOOSE,
    HERMES_SESSION,
    KIRO_CONVERSATION,
    NANOBOT_SESSION,
    QODER_SESSION,
    WARP,
    database_of,
)
from prefixbench.workloads.logs.sources import find_log_files

#: Goose's tables as its session storage creates them (schema version 5, then the columns later
#: versions added: provider_name and model_config_json at 6, message_id at 7, accumulated_cost at 13).
GOOSE_SCHEMA = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
    schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT,
    accumulated_cost REAL);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT, message_id TEXT);
INSERT INTO schema_version (version) VALUES (13);
INSERT INTO sessions (id, name, working_dir, total_tokens, input_tokens, output_tokens, accumulated_total_tokens,
    accumulated_input_tokens, accumulated_output_tokens, provider_name)
    VALUES ('20251104_1', 'Fix CI', '/home/u/proj', 24120, 23800, 320, 61000, 60100, 900, 'anthropic');
INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json)
    VALUES ('20251104_1', 'user', '[{"type":"text","text":"fix ci"}]', 1762250000, '{"userVisible":true,"agentVisible":true}');
"""
GOOSE_REFUSAL = (
    "a SQLite database with none of the tables the audit reads (OpenCode's, Zed's threads, a GitHub Copilot CLI store's "
    "usage events, an OpenClaw agent's transcript events): not a log the audit reads "
    "(a Goose sessions database (sessions.db): it keeps each session's token totals (its last call's input and output "
    "tokens, and their sums) and no cache count, not each call's usage; record Goose's calls with `prefixbench proxy`)"
)
#: An older Goose session file: the metadata line, then one message a line.
GOOSE_FILE = [
    {"working_dir": "/home/u/proj", "description": "Fix CI", "schedule_id": None, "message_count": 2, "total_tokens": 24120,
     "input_tokens": 23800, "output_tokens": 320, "accumulated_total_tokens": 61000, "accumulated_input_tokens": 60100,
     "accumulated_output_tokens": 900},
    {"role": "user", "created": 1747000000, "content": [{"type": "text", "text": "fix ci"}]},
    {"role": "assistant", "created": 1747000004, "content": [{"type": "text", "text": "Looking at the workflow."}]},
]
GOOSE_FILE_REFUSAL = (
    "a Goose session file (sessions/<name>.jsonl): its first line keeps the session's token totals (the last call's input "
    "and output tokens, and their sums) and no cache count, and no message holds a usage: no request to audit; "
    "record Goose's calls with `prefixbench proxy`"
)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "prefixbench", *args], capture_output=True, text=True, timeout=120)


def _refused_in_one_line(path: Path, refusal: str) -> str:
    """``path``'s audit stops on ``refusal`` at its line 1, and the command says it in one line of
    stderr, no traceback, exit 2; the error's text."""
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert str(caught.value) == f"{path}:1: {refusal}"
    done = _cli("audit", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and refusal in done.stderr and "Traceback" not in done.stderr
    return str(caught.value)


@pytest.fixture
def goose_db(tmp_path: Path) -> Path:
    path = tmp_path / "sessions.db"
    db = sqlite3.connect(path)
    db.executescript(GOOSE_SCHEMA)
    db.commit()
    db.close()
    return path


def test_a_goose_database_is_refused_in_one_line_saying_what_it_keeps(goose_db: Path) -> None:
    # Main named it only as a SQLite database without OpenCode's tables.
    assert database_of(goose_db) is GOOSE
    _refused_in_one_line(goose_db, GOOSE_REFUSAL)


def test_a_goose_session_file_is_refused_in_one_line_as_detected_and_under_an_input(tmp_path: Path) -> None:
    path = tmp_path / "20250511_173012.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in GOOSE_FILE))
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert str(caught.value) == f"{path}:1: {GOOSE_FILE_REFUSAL}"
    with pytest.raises(UserError) as named:
        run_audit([path], fmt="claude-code")
    assert str(named.value) == f"{path}:1: {GOOSE_FILE_REFUSAL}"
    # A folder walk holding only it says why it has no log.
    with pytest.raises(UserError, match=r"no log to audit: .* none is a log \(20250511_173012\.jsonl: a Goose session file"):
        find_log_files([tmp_path])


def test_a_goose_file_without_the_accumulated_totals_is_refused_too(tmp_path: Path) -> None:
    # Goose before mid-2025 wrote no accumulated_* keys.
    header = {k: v for k, v in GOOSE_FILE[0].items() if not k.startswith("accumulated_")}
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [header, *GOOSE_FILE[1:]]))
    with pytest.raises(UserError, match="a Goose session file"):
        run_audit([path])


#: A Factory Droid session file (~/.factory/sessions/<project>/<id>.jsonl): a ``session_start``
#: header, then one message a line as ``{type: message, id, timestamp, message: {role, content}}``,
#: none with a usage (the session's totals are in ``<id>.settings.json`` beside it).
DROID_FILE = [
    {"type": "session_start", "id": "d1a2b3c4-0000-4000-8000-000000000001", "title": "add a readme", "sessionTitle": "New Session",
     "owner": "someone", "version": 2, "cwd": "/home/u/proj"},
    {"type": "message", "id": "m1", "timestamp": "2026-03-30T18:50:09.639Z", "message": {"role": "user", "content": [{"type": "text", "text": "add a readme"}]}},
    {"type": "message", "id": "m2", "timestamp": "2026-03-30T18:50:14.101Z", "parentId": "m1",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}},
]


def test_a_droid_session_file_is_refused_in_one_line_naming_droid_not_pi(tmp_path: Path) -> None:
    # Its messages look like pi's: it was read as a pi session of no call, the error naming pi.
    path = tmp_path / "d1a2b3c4-0000-4000-8000-000000000001.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in DROID_FILE))
    message = _refused_in_one_line(path, DROID_SESSION)
    assert "Factory Droid" in DROID_SESSION and "pi" not in message.replace(str(path), "")
    # A folder walk holding only it says why it has no log.
    with pytest.raises(UserError, match=r"no log to audit: .* none is a log \(d1a2b3c4-[-0-9]+\.jsonl: a Factory Droid session"):
        find_log_files([tmp_path])


#: A Cursor agent transcript (~/.cursor/projects/<project>/agent-transcripts/<id>.jsonl): one
#: message a line, its role and content only.
CURSOR_FILE = [
    {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>\nadd a readme\n</user_query>"}]}},
    {"role": "assistant", "message": {"content": [{"type": "text", "text": "Writing it."},
                                                  {"type": "tool_use", "name": "Write", "input": {"path": "README.md", "contents": "hi"}}]}},
]


def test_a_cursor_agent_transcript_is_refused_in_one_line_naming_cursor(tmp_path: Path) -> None:
    # It was an unknown log format.
    path = tmp_path / "0b1c2d3e.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in CURSOR_FILE))
    _refused_in_one_line(path, CURSOR_TRANSCRIPT)
    with pytest.raises(UserError, match=r"none is a log \(0b1c2d3e\.jsonl: a Cursor agent transcript"):
        find_log_files([tmp_path])


def test_a_message_with_more_than_a_role_and_content_is_no_cursor_transcript(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps({"role": "user", "message": {"content": [], "model": "m"}, "usage": {}}) + "\n")
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert "Cursor" not in str(caught.value)


#: A nanobot session (HKUDS/nanobot: <workspace>/sessions/<channel>_<chat>.jsonl): a metadata
#: line, then one message a line with its time, tool calls beside; no model, no token count.
NANOBOT_FILE = [
    {"_type": "metadata", "key": "cli:direct", "created_at": "2026-03-27T18:31:26.175153",
     "updated_at": "2026-03-27T20:10:37.555516", "metadata": {}, "last_consolidated": 0},
    {"role": "user", "content": "what is in the repo?", "timestamp": "2026-03-27T18:31:39.238767"},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
     "function": {"name": "list_dir", "arguments": "{\"path\": \".\"}"}}], "timestamp": "2026-03-27T18:31:41.000000"},
    {"role": "tool", "tool_call_id": "c1", "name": "list_dir", "content": "README.md", "timestamp": "2026-03-27T18:31:41.100000"},
    {"role": "assistant", "content": "A README.", "timestamp": "2026-03-27T18:31:43.000000"},
]


def test_a_nanobot_session_is_refused_in_one_line_naming_nanobot(tmp_path: Path) -> None:
    # A real one (AlisaKondakova/se-toolkit-lab-8's nanobot/workspace/sessions/) was an unknown log
    # format named, and "no record of a format audit reads" in a folder walk.
    path = tmp_path / "cli_direct.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in NANOBOT_FILE))
    _refused_in_one_line(path, NANOBOT_SESSION)
    with pytest.raises(UserError, match=r"none is a log \(cli_direct\.jsonl: a nanobot session"):
        find_log_files([tmp_path])
    # An early release's first line (no key, no last_consolidated) is one too; a metadata line of
    # another tool (no session times) is not.
    early = tmp_path / "early" / "telegram_1.jsonl"
    early.parent.mkdir()
    early.write_text("".join(json.dumps(r) + "\n" for r in [
        {"_type": "metadata", "created_at": "2026-02-01T10:00:00", "updated_at": "2026-02-01T10:05:00", "metadata": {}},
        *NANOBOT_FILE[1:]]))
    _refused_in_one_line(early, NANOBOT_SESSION)
    other = tmp_path / "other" / "dataset.jsonl"
    other.parent.mkdir()
    other.write_text(json.dumps({"_type": "metadata", "name": "pkg", "version": "1"}) + "\n")
    with pytest.raises(UserError) as caught:
        run_audit([other])
    assert "a nanobot session" not in str(caught.value)


#: A Hermes Agent session log (NousResearch/hermes-agent: ~/.hermes/sessions/session_<time>_<id>.json,
#: rewritten whole after each turn): the session's model, endpoint, system prompt, tools and
#: messages (chat-completions shaped), no call's usage.
HERMES_FILE = {
    "session_id": "20260424_182100_85ae43c6", "model": "glm-5", "base_url": "https://opencode.ai/zen/go/v1",
    "platform": "telegram", "session_start": "2026-04-24T18:21:00.412345", "last_updated": "2026-04-24T18:29:51.100000",
    "system_prompt": "You are Hermes.", "tools": [{"type": "function", "function": {"name": "terminal", "parameters": {}}}],
    "message_count": 4,
    "messages": [
        {"role": "user", "content": "what is in the repo?"},
        {"role": "assistant", "content": "", "reasoning": "list it", "finish_reason": "tool_calls",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"ls\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "README.md"},
        {"role": "assistant", "content": "A README.", "finish_reason": "stop"},
    ],
}


def test_a_hermes_session_log_is_refused_in_one_line_not_read_as_one_request(tmp_path: Path) -> None:
    # A real home (juliuss1907/knowledge-base's .hermes/sessions/, 2026-04/05: 13 such files of
    # 2 to 82 messages each, glm-5 through OpenCode Zen Go) audited as 13 chat-completions
    # requests, one a file, none with usage, $0.36 and a hit ratio estimated from nothing.
    path = tmp_path / "session_20260424_182100_85ae43c6.json"
    path.write_text(json.dumps(HERMES_FILE))
    _refused_in_one_line(path, HERMES_SESSION)
    # replay and check --trace read it as a chat-completions request body (exit 0): refused as audit does,
    # on one line or laid out as hermes-agent writes it (indent=2: replay said "invalid JSON" at line 1).
    for text in (json.dumps(HERMES_FILE), json.dumps(HERMES_FILE, indent=2)):
        path.write_text(text)
        for command in (["replay"], ["check", "--trace"]):
            done = _cli(*command, str(path))
            assert done.returncode == 2 and done.stderr.strip().splitlines() == [f"prefixbench: error: {path}:1: {HERMES_SESSION}"], \
                done.stdout + done.stderr
    path.write_text(json.dumps(HERMES_FILE))
    with pytest.raises(UserError, match=r"none is a log \(session_20260424_182100_85ae43c6\.json: a Hermes Agent session"):
        find_log_files([tmp_path])
    # A chat-completions request body (a model and messages, none of the session's keys) is still one.
    body = tmp_path / "body" / "request.json"
    body.parent.mkdir()
    body.write_text(json.dumps({"model": "glm-5", "messages": HERMES_FILE["messages"], "tools": HERMES_FILE["tools"]}))
    assert [f.format for f in run_audit([body]).files] == ["chat-completions"]


def test_a_crush_database_is_the_crush_kind_not_gooses(tmp_path: Path) -> None:
    path = tmp_path / "crush.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT, prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL);"
        "CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT, role TEXT, parts TEXT, model TEXT, provider TEXT);"
    )
    db.commit()
    db.close()
    assert database_of(path) is CRUSH
    assert database_of(Path(__file__)) is None


#: Kiro's session files (their shapes from public readers of them: codeburn's
#: src/providers/kiro.ts, aleung/kiro-session-index's DESIGN.md, which found every turn's token
#: counts 0 in 1,903 turns). The CLI's store, ``~/.kiro/sessions/cli/<id>.jsonl``: one
#: ``{version, kind, data}`` a line (Prompt, AssistantMessage, ToolResults, Clear, Compaction).
KIRO_CLI_FILE = [
    {"version": "v1", "kind": "Prompt", "data": {"message_id": "a1", "content": [{"kind": "text", "data": "fix the retry loop"}],
                                                  "meta": {"timestamp": 1784869360}}},
    {"version": "v1", "kind": "AssistantMessage", "data": {"message_id": "a2", "content": [
        {"kind": "text", "data": "Looking."},
        {"kind": "toolUse", "data": {"toolUseId": "tooluse_1", "name": "shell", "input": {"command": "ls", "__tool_use_purpose": "list"}}}]}},
    {"version": "v1", "kind": "ToolResults", "data": {"message_id": "a3", "content": [
        {"kind": "toolResult", "data": {"toolUseId": "tooluse_1", "content": [{"kind": "json", "data": {"stdout": "src\n"}}],
                                        "status": "success"}}]}},
]
#: The CLI session's metadata beside it, ``<id>.json``: each turn's credits, token counts 0.
KIRO_CLI_METADATA = {
    "session_id": "f2946a26-0000-4000-8000-000000000000", "cwd": "/w/api", "created_at": "2026-08-01T10:00:00Z",
    "updated_at": "2026-08-01T10:20:00Z", "title": "fix the retry loop",
    "session_state": {"rts_model_state": {"model_info": {"model_id": "claude-sonnet-4.5"}},
                      "conversation_metadata": {"user_turn_metadatas": [
                          {"input_token_count": 0, "output_token_count": 0, "metering_usage": [{"value": 0.42, "unit": "credit"}],
                           "end_timestamp": "2026-08-01T10:01:00Z", "total_request_count": 2}]}},
}
#: The V3 engine's (the IDE's, ``kiro-cli --v3``) ``~/.kiro/sessions/<workspace>/sess_<id>/messages.jsonl``:
#: ``{id, timestamp, payload: {type, ...}}`` a line; a turn's usage_summary is credits.
KIRO_V3_FILE = [
    {"id": "e1", "timestamp": "2026-08-01T10:00:00.000Z", "payload": {"type": "user", "content": "fix the retry loop"}},
    {"id": "e2", "timestamp": "2026-08-01T10:00:01.000Z", "payload": {"type": "turn_start", "executionId": "x1"}},
    {"id": "e3", "timestamp": "2026-08-01T10:00:05.000Z", "payload": {"type": "assistant", "content": "Looking.",
                                                                      "operationType": "Say", "executionId": "x1"}},
    {"id": "e4", "timestamp": "2026-08-01T10:00:09.000Z", "payload": {
        "type": "usage_summary", "executionId": "x1", "promptTurnSummaries": [{"unit": "credit", "unitPlural": "credits", "usage": 0.42}]}},
]
#: The IDE's earlier ``.chat`` files (globalStorage/kiro.kiroagent/<workspace hash>/<id>.chat).
KIRO_CHAT_FILE = {
    "executionId": "x1", "actionId": "act",
    "chat": [{"role": "human", "content": "fix the retry loop"}, {"role": "bot", "content": "Looking."}],
    "metadata": {"modelId": "claude-sonnet-4.5", "modelProvider": "qdev", "workflow": "act", "workflowId": "w1",
                 "startTime": 1754000000000, "endTime": 1754000009000},
}


@pytest.mark.parametrize(("name", "content"), [
    ("f2946a26-0000-4000-8000-000000000000.jsonl", KIRO_CLI_FILE),
    ("f2946a26-0000-4000-8000-000000000000.json", [KIRO_CLI_METADATA]),
    ("messages.jsonl", KIRO_V3_FILE),
])
def test_a_kiro_session_file_is_refused_in_one_line_naming_kiro(tmp_path: Path, name: str, content: list[dict]) -> None:
    # It was an unknown log format, named or in a folder.
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in content))
    with pytest.raises(UserError) as caught:
        run_audit([path])
    message = str(caught.value)
    assert message.startswith(f"{path}:1: a Kiro ") and "no token count" in message and "credits" in message, message
    done = _cli("audit", str(path))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    # Named with another format's --input, the same line.
    with pytest.raises(UserError) as named:
        run_audit([path], fmt="pi")
    assert str(named.value) == message
    # A folder walk holding only it says why it has no log.
    with pytest.raises(UserError, match=rf"none is a log \({name}: a Kiro "):
        find_log_files([tmp_path])


def test_a_kiro_ide_chat_file_is_refused_in_one_line_naming_kiro(tmp_path: Path) -> None:
    path = tmp_path / "0b1c2d3e4f.chat"
    path.write_text(json.dumps(KIRO_CHAT_FILE, indent=2))
    with pytest.raises(UserError, match=r"^.*0b1c2d3e4f\.chat:1: a Kiro IDE chat file .*no token count"):
        run_audit([path])


def test_a_kiro_folder_with_its_metadata_says_both_are_kiros(tmp_path: Path) -> None:
    (tmp_path / "s1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in KIRO_CLI_FILE))
    (tmp_path / "s1.json").write_text(json.dumps(KIRO_CLI_METADATA))
    with pytest.raises(UserError) as caught:
        find_log_files([tmp_path])
    assert "a Kiro CLI session" in str(caught.value) and "unknown" not in str(caught.value)
#: A Kiro CLI conversation as its state serializes it (what Entire checkpoints as the session's
#: raw transcript): each history entry a user input and the assistant's reply, no token count.
KIRO_STATE = {
    "conversation_id": "",
    "history": [
        {"user": {"content": {"Prompt": {"prompt": "make a folder called docs"}}},
         "assistant": {"ToolUse": {"message_id": "", "tool_uses": [{"id": "", "name": "fs_write", "args": {"path": "docs/README.md"}}]}}},
        {"user": {"content": None}, "assistant": {"Response": {"message_id": "", "content": "Created docs/README.md."}}},
    ],
}


def test_a_kiro_cli_conversation_is_refused_in_one_line_naming_kiro(tmp_path: Path) -> None:
    # It was an unknown log format.
    path = tmp_path / "raw_transcript"
    path.write_text(json.dumps(KIRO_STATE))
    _refused_in_one_line(path, KIRO_CONVERSATION)
    # Pretty-printed, as one object, the same.
    pretty = tmp_path / "conversation.json"
    pretty.write_text(json.dumps(KIRO_STATE, indent=2))
    _refused_in_one_line(pretty, KIRO_CONVERSATION)


def test_a_conversation_whose_entries_carry_token_counts_is_not_called_kiros(tmp_path: Path) -> None:
    counted = dict(KIRO_STATE, history=[dict(KIRO_STATE["history"][0], request_metadata={"input_tokens": 10})])
    path = tmp_path / "c.json"
    path.write_text(json.dumps(counted))
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert "Kiro" not in str(caught.value)


@pytest.mark.parametrize("depth", [400, 900])
def test_a_deeply_nested_conversation_is_refused_in_one_line_not_a_traceback(tmp_path: Path, depth: int) -> None:
    # The search of its history for a token count went down one call (two frames) a level: a
    # reply nested 400 deep, which the reader reads, was a RecursionError traceback.
    nested = json.loads("[" * depth + "]" * depth)
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps({"conversation_id": "c", "history": [{"user": "x", "assistant": nested}]}))
    with pytest.raises(UserError, match="Kiro CLI"):
        run_audit([path])
    counted = json.loads("[" * depth + '{"input_tokens": 3}' + "]" * depth)
    path.write_text(json.dumps({"conversation_id": "c", "history": [{"user": "x", "assistant": counted}]}))
    with pytest.raises(UserError) as error:
        run_audit([path])
    assert "Kiro" not in str(error.value)  # (a token count in it: not said to be Kiro's)


def _cursor_cli_store(path: Path) -> Path:
    """A Cursor CLI chat store as public readers of it describe one: ``meta`` (one row, hex-encoded
    JSON) and ``blobs`` (content-addressed: JSON messages, protobuf roots)."""
    import hashlib

    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB); CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);")
    message = json.dumps({"role": "user", "id": "m1", "content": [{"type": "text", "text": "hi"}]}).encode()
    db.execute("INSERT INTO blobs VALUES (?, ?)", (hashlib.sha256(message).hexdigest(), message))
    meta = {"agentId": "f1ff7b74-0a28-4dd4-a452-e01ae080eb20", "latestRootBlobId": "ff", "name": "chat", "mode": "default",
            "createdAt": 1781256145540, "lastUsedModel": "claude-sonnet-4-6"}
    db.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps(meta).encode().hex(),))
    db.commit()
    db.close()
    return path


def test_a_cursor_cli_chat_store_is_refused_in_one_line_naming_cursor(tmp_path: Path) -> None:
    # Main said only that the database has none of the tables the audit reads; a walk of
    # ~/.cursor/chats said "no log files (*.jsonl, *.json, *.traj) in this folder".
    path = _cursor_cli_store(tmp_path / "chats" / "36e6f82a" / "f1ff7b74" / "store.db")
    assert database_of(path) is CURSOR_CLI
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert str(caught.value).startswith(f"{path}:1: ") and str(caught.value).endswith(f"({CURSOR_CLI.refusal()})")
    assert "Cursor CLI chat store" in CURSOR_CLI.refusal()
    done = _cli("audit", str(path))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    with pytest.raises(UserError, match=r"none is a log \(store\.db: a Cursor CLI chat store"):
        find_log_files([tmp_path / "chats"])


#: An Augment (Auggie) session as public readers of ~/.augment/sessions/ read one (abridged).
AUGMENT_FILE = {
    "sessionId": "5d2c1b0a-9e8f-4a7b-b6c5-d4e3f2a1b0c9", "created": "2026-01-12T09:30:00.000Z", "modified": "2026-01-12T09:41:00.000Z",
    "workspaceId": "w1",
    "chatHistory": [
        {"exchange": {"request_message": "fix the failing test", "response_text": "Done.",
                      "request_nodes": [{"type": 4, "ide_state_node": {"workspace_folders": [{"folder_root": "/w"}]}}],
                      "response_nodes": [{"id": 1, "type": 0, "content": "Done."}]},
         "completed": True, "finishedAt": "2026-01-12T09:31:00.000Z"},
    ],
}


def test_an_augment_session_is_refused_in_one_line_naming_augment(tmp_path: Path) -> None:
    # It was an unknown log format.
    path = tmp_path / "5d2c1b0a.json"
    path.write_text(json.dumps(AUGMENT_FILE, indent=2))
    _refused_in_one_line(path, AUGMENT_SESSION)
    with pytest.raises(UserError, match=r"none is a log \(5d2c1b0a\.json: an Augment \(Auggie\) session"):
        find_log_files([tmp_path])


def test_an_exchange_that_counts_tokens_is_not_called_augments(tmp_path: Path) -> None:
    counted = json.loads(json.dumps(AUGMENT_FILE))
    counted["chatHistory"][0]["exchange"]["token_usage"] = {"input_tokens": 5}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(counted))
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert "Augment" not in str(caught.value)


def _warp_db(path: Path) -> Path:
    """Warp's warp.sqlite as public readers of it describe the AI tables (abridged)."""
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE ai_queries (id INTEGER PRIMARY KEY, exchange_id TEXT NOT NULL, conversation_id TEXT NOT NULL,"
        " start_ts DATETIME NOT NULL, input TEXT NOT NULL, working_directory TEXT, output_status TEXT NOT NULL,"
        " model_id TEXT NOT NULL DEFAULT '', planning_model_id TEXT NOT NULL DEFAULT '', coding_model_id TEXT NOT NULL DEFAULT '');"
        "CREATE TABLE agent_conversations (id INTEGER PRIMARY KEY, conversation_id TEXT NOT NULL, conversation_data TEXT NOT NULL,"
        " last_modified_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP);"
    )
    usage = {"conversation_usage_metadata": {"credits_spent": 126.82, "token_usage": [
        {"model_id": "claude 4.5 opus (thinking)", "warp_tokens": 605182, "byok_tokens": 0}]}}
    db.execute("INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, output_status, model_id) VALUES"
               " ('e1', 'c1', '2025-12-27 18:12:11', '[]', 'Completed', 'claude-4-5-opus')")
    db.execute("INSERT INTO agent_conversations (conversation_id, conversation_data) VALUES ('c1', ?)", (json.dumps(usage),))
    db.commit()
    db.close()
    return path


def test_a_warp_database_is_refused_in_one_line_naming_warp(tmp_path: Path) -> None:
    # Main said only that the database has none of the tables the audit reads.
    path = _warp_db(tmp_path / "warp.sqlite")
    assert database_of(path) is WARP
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert str(caught.value).endswith(f"({WARP.refusal()})")
    with pytest.raises(UserError, match=r"none is a log \(warp\.sqlite: Warp's warp\.sqlite: it keeps each conversation's credits"):
        find_log_files([tmp_path])


#: A Qoder CLI session as public readers of ~/.qoder/projects/ fixture one: a runtime-config line,
#: then Claude Code's entries whose usage is credits with zero token counts.
QODER_FILE = [
    {"type": "runtime-config", "sessionId": "abc123", "model": "efficient", "reasoningEffort": None, "contextWindow": None,
     "timestamp": 1786606218598},
    {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hello"}]}, "timestamp": "2026-08-13T07:32:00Z",
     "isSidechain": False, "sessionId": "abc123", "uuid": "u1", "parentUuid": None},
    {"type": "assistant", "message": {"role": "assistant", "model": "efficient", "content": [{"type": "text", "text": "hi"}],
                                      "usage": {"input_tokens": 0, "output_tokens": 0, "credits": 0.75}},
     "timestamp": "2026-08-13T07:32:06Z", "isSidechain": False, "sessionId": "abc123", "uuid": "a1", "parentUuid": "u1"},
]


def test_a_qoder_session_is_refused_in_one_line_naming_qoder(tmp_path: Path) -> None:
    # Main read it as Claude Code's entries and said only "nothing to audit ... usage all zero".
    path = tmp_path / "abc123.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in QODER_FILE))
    _refused_in_one_line(path, QODER_SESSION)
    with pytest.raises(UserError, match=r"none is a log \(abc123\.jsonl: a Qoder CLI session"):
        find_log_files([tmp_path])


@pytest.mark.parametrize("record", [
    {"version": "v1", "kind": ["Prompt"], "data": {}},
    {"kind": {"Prompt": 1}},
    {"id": "e1", "timestamp": "2026-08-01T10:00:00.000Z", "payload": {"type": ["user"]}},
    {"timestamp": "x", "payload": {"type": {}}},
])
def test_a_kiro_shaped_record_whose_kind_is_no_string_is_one_line_not_a_traceback(tmp_path: Path, record: dict) -> None:
    # Found by fuzzing: the kind was looked up in a set as it was, and a list or an object there
    # was a TypeError (unhashable type) traceback, before any format was named.
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(UserError, match=rf"^{path}:1: unknown log format"):
        run_audit([path])
    with pytest.raises(UserError, match=r"none is a log \(s\.jsonl: "):
        find_log_files([tmp_path])
