"""Fuzz the Amp thread, Kimi CLI wire, Continue session and Trae Agent trajectory readers
(workloads/logs/formats/amp.py, kimi_cli.py, continue_cli.py, trae_agent.py):
mutated files and edited records end in exit 0 or one clean line with exit 2, never a traceback
or a hang, read as detected or under an explicit ``--input``."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, fuzz_settings, mutated, to_json_line, write

_SONNET = "claude-sonnet-4-5-20250929"
AMP_SEEDS: list[dict] = [
    {"id": "T-0000-fuzz", "v": 3, "created": 1768822790000, "agentMode": "smart", "messages": [
        {"role": "user", "messageId": 0, "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "messageId": 1, "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}],
         "state": {"type": "complete", "stopReason": "tool_use"},
         "usage": {"model": _SONNET, "inputTokens": 5, "outputTokens": 9, "cacheCreationInputTokens": 4000,
                   "cacheReadInputTokens": 0, "totalInputTokens": 4005, "credits": 1.5, "timestamp": "2026-01-19T11:40:00.000Z"}},
        {"role": "user", "messageId": 2, "content": [{"type": "tool_result", "toolUseID": "t1", "run": {"status": "done"}}]},
        {"role": "assistant", "messageId": 3, "content": [], "state": {"type": "cancelled"},
         "usage": {"model": "gpt-5", "inputTokens": 5000, "outputTokens": 2, "cacheReadInputTokens": 4096, "totalInputTokens": 5000}},
    ]},
    {"id": "T-0001-fuzz", "messages": [
        {"role": "assistant", "messageId": 1, "content": [], "usage": {"model": _SONNET, "cacheCreationInputTokens": 300, "cacheReadInputTokens": 10}},
    ], "usageLedger": {"events": [
        {"id": "e1", "timestamp": "2025-11-23T10:00:00.000Z", "model": _SONNET, "credits": 1, "tokens": {"input": 3, "output": 7},
         "operationType": "inference", "fromMessageId": 0, "toMessageId": 1},
        {"id": "e2", "timestamp": "2025-11-23T10:00:01.000Z", "model": _SONNET, "tokens": {"input": 30}, "operationType": "title"},
    ]}},
    # Late 2025: a message's whole usage with no timestamp, timed by the ledger event naming it.
    {"id": "T-0002-fuzz", "messages": [
        {"role": "user", "messageId": 0, "content": [{"type": "text", "text": "go"}], "meta": {"sentAt": 1761670800000}},
        {"role": "assistant", "messageId": 1, "content": [], "state": {"type": "complete"},
         "usage": {"model": _SONNET, "inputTokens": 9, "outputTokens": 130, "cacheCreationInputTokens": 900,
                   "cacheReadInputTokens": 14000, "totalInputTokens": 14909, "credits": 1.0}},
    ], "usageLedger": {"events": [
        {"id": "e1", "timestamp": "2025-10-28T17:00:06.000Z", "model": _SONNET, "credits": 1.0, "tokens": {"input": 9, "output": 130},
         "operationType": "inference", "fromMessageId": 0, "toMessageId": 1},
    ]}},
]


def _rec(t: float, kind: str, payload: dict) -> dict:
    return {"timestamp": 1770000000.0 + t, "message": {"type": kind, "payload": payload}}


KIMI_SEEDS: list[dict] = [
    {"type": "metadata", "protocol_version": "1.3"},
    _rec(0, "TurnBegin", {"user_input": "hi"}),
    _rec(1, "StepBegin", {"n": 1}),
    _rec(2, "ContentPart", {"type": "text", "text": "x"}),
    _rec(3, "StatusUpdate", {"context_usage": 0.1, "token_usage": {"input_other": 5000, "output": 9, "input_cache_read": 0, "input_cache_creation": 0}, "message_id": "chatcmpl-1"}),
    _rec(4, "ToolResult", {"tool_call_id": "c", "return_value": {"is_error": False, "output": "ok", "message": "", "display": []}}),
    _rec(5, "SubagentEvent", {"parent_tool_call_id": "c", "agent_id": "a1", "subagent_type": "explore", "event": {
        "type": "StatusUpdate", "payload": {"token_usage": {"input_other": 70, "output": 1, "input_cache_read": 900}, "message_id": "chatcmpl-s"}}}),
    _rec(6, "CompactionBegin", {}),
    _rec(7, "CompactionEnd", {}),
    _rec(8, "StepRetry", {"n": 2, "next_attempt": 2, "max_attempts": 3, "wait_s": 1.0, "error_type": "APIError"}),
    _rec(9, "StatusUpdate", {"token_usage": {"input_other": 20, "output": 4, "input_cache_read": 5000}, "message_id": "msg_1"}),
    {"role": "_usage", "token_count": 5009},
]
#: Kimi Code's records (agents/<agent>/wire.jsonl).
KIMI_CODE_SEEDS: list[dict] = [
    {"type": "metadata", "protocol_version": "1.5", "created_at": 1783466600000},
    {"type": "turn.prompt", "agentId": "main", "input": [{"type": "text", "text": "x"}], "origin": "user", "time": 1783466601000},
    {"type": "llm.request", "agentId": "main", "kind": "loop", "provider": "kimi", "model": "kimi-k2.6", "thinkingEffort": "on",
     "toolSelect": True, "systemPromptHash": "s", "toolsHash": "t", "messageCount": 2, "time": 1783466601100},
    {"type": "usage.record", "agentId": "main", "model": "kimi-for-coding", "usageScope": "turn",
     "usage": {"inputOther": 900, "output": 9, "inputCacheRead": 4096, "inputCacheCreation": 0}, "time": 1783466605000},
    {"type": "context.apply_compaction", "agentId": "main", "time": 1783466606000},
    # The first releases' goal accounting, and a kind no release wrote: read as no call.
    {"type": "goal.account_usage", "goalId": "g", "usageKind": "token", "delta": 909, "tokensUsed": 909, "wallClockMs": 1, "time": 1783466606100},
    {"type": "lens.focus", "agentId": "main", "time": 1783466606200},
    {"type": "forked", "agentId": "main", "time": 1783466606500},  # a forked session: the records above are its source's
    {"type": "llm.request", "agentId": "agent-1", "kind": "compaction", "provider": "anthropic", "model": "claude-sonnet-4-5",
     "systemPromptHash": "s2", "toolsHash": "t2", "messageCount": 9, "time": 1783466607000},
    {"type": "usage.record", "agentId": "agent-1", "model": "x", "usage": {"inputOther": 3, "output": 1, "inputCacheRead": 0, "inputCacheCreation": 700}, "time": 1783466608000},
]
#: Continue sessions: the cn CLI's (Anthropic's split, OpenAI's subset, a compaction summary,
#: a cancelled call) and an extension's (no usage: refused).
CONTINUE_SEEDS: list[dict] = [
    {"sessionId": "s-fuzz", "title": "t", "workspaceDirectory": "file:///p", "history": [
        {"message": {"role": "system", "content": "sys"}, "contextItems": []},
        {"message": {"role": "assistant", "content": "summary"}, "contextItems": [], "conversationSummary": "summary"},
        {"message": {"role": "user", "content": "go"}, "contextItems": []},
        {"message": {"role": "assistant", "content": "", "toolCalls": [{"id": "t1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}],
                     "usage": {"prompt_tokens": 3, "completion_tokens": 9, "total_tokens": 12, "model": _SONNET, "cost_cents": 1,
                               "prompt_tokens_details": {"cached_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 4000}}}, "contextItems": []},
        {"message": {"role": "tool", "content": "x", "toolCallId": "t1"}, "contextItems": []},
        {"message": {"role": "assistant", "content": "ok", "usage": {"prompt_tokens": 5000, "completion_tokens": 2, "model": "gpt-5",
                                                                   "prompt_tokens_details": {"cached_tokens": 4096}}}, "contextItems": []},
        {"message": {"role": "assistant", "content": "cancelled"}, "contextItems": []},
        # Continue's Gemini adapter: thoughts only in total_tokens, no cached count.
        {"message": {"role": "assistant", "content": "g", "usage": {"prompt_tokens": 6000, "completion_tokens": 40, "total_tokens": 6300,
                                                                  "model": "gemini-2.5-pro", "cost_cents": 1}}, "contextItems": []},
    ], "usage": {"promptTokens": 5003, "completionTokens": 11, "promptTokensDetails": {"cachedTokens": 0, "cacheWriteTokens": 4000}, "totalCost": 0.02}},
    {"sessionId": "s-ide", "title": "t", "workspaceDirectory": "", "history": [
        {"message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}, "contextItems": [], "editorState": {}},
        {"message": {"role": "assistant", "content": "hello"}, "contextItems": [], "promptLogs": []},
    ]},
]
#: Trae Agent trajectories: each of its clients' usage, a call of no usage, a tool result.
TRAE_SEEDS: list[dict] = [
    {"task": "t", "start_time": "2025-07-10T14:00:00.000000", "provider": "anthropic", "model": _SONNET, "max_steps": 5, "agent_steps": [],
     "llm_interactions": [
         {"timestamp": "2025-07-10T14:00:05.000000", "provider": "anthropic", "model": _SONNET,
          "input_messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "go"}],
          "response": {"content": "", "model": _SONNET, "finish_reason": "tool_use", "tool_calls": [
              {"call_id": "c1", "name": "str_replace_based_edit_tool", "arguments": {"command": "view"}, "id": None}],
              "usage": {"input_tokens": 5, "output_tokens": 9, "cache_creation_input_tokens": 4000, "cache_read_input_tokens": 0, "reasoning_tokens": 0}}},
         {"timestamp": "2025-07-10T14:00:09.000000", "provider": "openai", "model": "gpt-4.1",
          "input_messages": [{"role": "user", "content": None, "tool_result": {"call_id": "c1", "success": True, "result": "x", "error": None}}],
          "response": {"content": "ok", "model": "gpt-4.1", "usage": {"input_tokens": 5000, "output_tokens": 2, "cache_read_input_tokens": 4096}}},
         {"timestamp": "2025-07-10T14:00:19.000000", "provider": "ollama", "model": "qwen3", "input_messages": [], "response": {"content": "x", "usage": None}},
     ], "success": True, "final_result": "done", "execution_time": 19.0},
]
KIMI_BYTES = b"".join(to_json_line(r) + b"\n" for r in KIMI_SEEDS)
KIMI_CODE_BYTES = b"".join(to_json_line(r) + b"\n" for r in KIMI_CODE_SEEDS)


def test_mutated_amp_threads_kimi_wire_logs_continue_sessions_and_trae_trajectories_end_cleanly(importer_examples):
    tally = Tally("audit", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-agents-"))

    @fuzz_settings(importer_examples)
    @given(fmt=st.sampled_from(("amp", "kimi-cli", "continue-cli", "trae-agent")), data=st.data(), explicit=st.booleans())
    def case(fmt: str, data: st.DataObject, explicit: bool) -> None:
        if fmt != "kimi-cli":
            seeds = {"amp": AMP_SEEDS, "continue-cli": CONTINUE_SEEDS, "trae-agent": TRAE_SEEDS}[fmt]
            raw = data.draw(
                st.one_of(
                    st.sampled_from(seeds).flatmap(lambda doc: mutated(json.dumps(doc, indent=2).encode())),
                    edited(st.sampled_from(seeds), max_edits=3).map(lambda doc: json.dumps(doc, indent=2).encode()),
                )
            )
            path = folder / {"amp": "T-fuzz.json", "continue-cli": "session.json", "trae-agent": "trajectory.json"}[fmt]
        else:
            raw = data.draw(
                st.one_of(
                    mutated(KIMI_BYTES),
                    mutated(KIMI_CODE_BYTES),
                    st.lists(edited(st.sampled_from(KIMI_SEEDS + KIMI_CODE_SEEDS)), min_size=1, max_size=6).map(
                        lambda docs: b"\n".join(map(to_json_line, docs))
                    ),
                )
            )
            path = folder / "wire.jsonl"
        argv = ["audit", str(write(path, raw)), "--quiet", "--format", "json"]
        if explicit:
            argv += ["--input", fmt]
        tally.check(argv)

    case()
    tally.report()


#: A Kimi Code record of any kind: a dotted type, any payload, a time of any JSON type.
CODE_RECORDS = st.fixed_dictionaries(
    {"type": st.one_of(st.from_regex(r"[a-z_]{1,8}\.[a-z_.]{0,8}", fullmatch=True), st.sampled_from(["usage.record", "forked", "x"])),
     "time": st.one_of(st.integers(0, 2 * 10**12), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=3), st.booleans(), st.none())},
    optional={"agentId": st.sampled_from(["main", "agent-1", ""]), "message": st.just({"type": "x", "payload": {}}),
              "usage": st.dictionaries(st.sampled_from(["inputOther", "output", "inputCacheRead"]), st.integers(-2, 10**6), max_size=3)},
)


def test_kimi_code_records_of_any_kind_read_or_end_in_one_line(importer_examples):
    """Any records after a Kimi Code metadata line: the calls are the well-formed usage.records,
    whatever other kinds come between; anything else ends in one clean line, exit 2."""
    tally = Tally("audit", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-kimi-code-"))
    (folder / "agents" / "main").mkdir(parents=True)

    @fuzz_settings(importer_examples)
    @given(records=st.lists(CODE_RECORDS, max_size=6))
    def case(records: list[dict]) -> None:
        docs = [{"type": "metadata", "protocol_version": "1.5", "created_at": 1783466600000}, *records]
        tally.check(["audit", str(write(folder / "agents" / "main" / "wire.jsonl", b"\n".join(map(to_json_line, docs)))), "--quiet"])

    case()
    tally.report()
