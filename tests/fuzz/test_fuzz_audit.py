"""Fuzz ``prefixbench audit``: mutated logs of every format it reads, generated records and raw
JSON end in exit 0 or one clean line with exit 2 (exit 1 only from a gate), within the bound;
never a traceback or a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import (
    Tally,
    edited,
    fuzz_settings,
    json_values,
    mutated,
    to_json_line,
    write,
)
from tests.unit.logs.bedrock_stream import as_text, frame

USAGE = {"input_tokens": 3, "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 100, "output_tokens": 9,
         "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 1000}}
SEEDS: dict[str, list[dict]] = {
    "claude-code": [
        {"parentUuid": None, "isSidechain": False, "sessionId": "s", "version": "2.1.0", "type": "user", "uuid": "u1",
         "timestamp": "2025-09-03T00:00:00.000Z", "message": {"role": "user", "content": "hi"}},
        {"parentUuid": "u1", "isSidechain": False, "sessionId": "s", "type": "assistant", "uuid": "u2", "requestId": "r1",
         "timestamp": "2025-09-03T00:00:01.000Z", "message": {"id": "m1", "model": "claude-sonnet-4-20250514", "role": "assistant", "content": [], "usage": USAGE}},
        {"type": "system", "subtype": "compact_boundary", "uuid": "c1", "parentUuid": None, "logicalParentUuid": "u2", "timestamp": "2025-09-03T00:09:00.000Z"},
        {"parentUuid": "c1", "isSidechain": False, "sessionId": "s", "type": "assistant", "uuid": "u3", "requestId": "r2",
         "timestamp": "2025-09-03T00:09:01.000Z", "message": {"id": "m2", "model": "claude-opus-4-5", "role": "assistant", "content": [], "usage": USAGE}},
        # Server-side compaction: usage.iterations, the top level the message's alone.
        {"parentUuid": "u3", "isSidechain": False, "sessionId": "s", "type": "assistant", "uuid": "u4", "requestId": "r3",
         "timestamp": "2025-09-03T00:10:01.000Z", "message": {"id": "m3", "model": "claude-opus-4-5", "role": "assistant", "content": [], "usage": {
             "input_tokens": 4, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 900, "output_tokens": 9, "iterations": [
                 {"type": "compaction", "input_tokens": 30, "cache_read_input_tokens": 5000, "cache_creation_input_tokens": 0, "output_tokens": 700},
                 {"type": "message", "input_tokens": 4, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 900, "output_tokens": 9}]}}},
        # The advisor tool (/advisor): advisor_message iterations are the advisor model's calls,
        # the top level the executor's samplings alone.
        {"parentUuid": "u4", "isSidechain": False, "sessionId": "s", "type": "assistant", "uuid": "u5", "requestId": "r4",
         "timestamp": "2025-09-03T00:11:01.000Z", "message": {"id": "m7", "model": "claude-sonnet-4-6", "role": "assistant", "content": [], "usage": {
             "input_tokens": 5, "cache_read_input_tokens": 9000, "cache_creation_input_tokens": 40, "output_tokens": 90, "iterations": [
                 {"type": "message", "input_tokens": 3, "cache_read_input_tokens": 4500, "cache_creation_input_tokens": 20, "output_tokens": 30},
                 {"type": "advisor_message", "model": "claude-opus-4-8", "input_tokens": 4600, "cache_read_input_tokens": 0,
                  "cache_creation_input_tokens": 0, "output_tokens": 700},
                 {"type": "message", "input_tokens": 2, "cache_read_input_tokens": 4500, "cache_creation_input_tokens": 20, "output_tokens": 60}]}}},
        # 2.1.81: a hook's progress chained from an older entry, the next user turn hung off it
        # (the turn extends the last message logged before it).
        {"parentUuid": "u1", "isSidechain": False, "sessionId": "s", "type": "progress", "uuid": "p1",
         "data": {"type": "hook_progress"}, "timestamp": "2025-09-03T00:11:02.000Z"},
        {"parentUuid": "p1", "isSidechain": False, "sessionId": "s", "type": "user", "uuid": "u6",
         "timestamp": "2025-09-03T00:11:03.000Z", "message": {"role": "user", "content": "and then?"}},
        {"parentUuid": "u6", "isSidechain": False, "sessionId": "s", "type": "assistant", "uuid": "u7", "requestId": "r5",
         "timestamp": "2025-09-03T00:11:05.000Z", "message": {"id": "m8", "model": "claude-sonnet-4-6", "role": "assistant", "content": [], "usage": USAGE}},
        # claude -p --output-format stream-json: no parentUuid, no timestamps; a Task subagent's
        # messages name the call in parent_tool_use_id.
        {"type": "system", "subtype": "init", "session_id": "r", "uuid": "i1", "model": "claude-haiku-4-5", "claude_code_version": "2.0.41"},
        {"type": "assistant", "session_id": "r", "uuid": "s1", "parent_tool_use_id": None,
         "message": {"id": "m4", "model": "claude-haiku-4-5", "role": "assistant", "content": [{"type": "tool_use", "id": "t1"}], "usage": USAGE}},
        {"type": "user", "session_id": "r", "uuid": "s2", "parent_tool_use_id": "t1",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0", "content": "x"}]}},
        {"type": "assistant", "session_id": "r", "parent_tool_use_id": None,  # 1.0.x: no uuid
         "message": {"id": "m5", "model": "claude-sonnet-4", "role": "assistant", "content": [], "usage": USAGE}},
        # A compaction starts the thread's chain again; a second run's session is a lane of its own.
        {"type": "system", "subtype": "compact_boundary", "session_id": "r", "uuid": "b1", "compact_metadata": {"trigger": "auto", "pre_tokens": 9}},
        # ... and a subagent's compaction (its Task call's parent_tool_use_id) that thread's alone.
        {"type": "system", "subtype": "compact_boundary", "session_id": "r", "uuid": "b2", "parent_tool_use_id": "t1",
         "compact_metadata": {"trigger": "auto", "pre_tokens": 9}},
        {"type": "assistant", "session_id": "r2", "uuid": "s3", "parent_tool_use_id": None,
         "message": {"id": "m6", "model": "claude-haiku-4-5", "role": "assistant", "content": [], "usage": USAGE}},
        {"type": "result", "subtype": "success", "session_id": "r", "uuid": "e1", "total_cost_usd": 0.1, "usage": USAGE},
    ],
    "http-capture": [
        # Nova through Bedrock's ConverseStream, the event stream kept as text (framing bytes lost).
        {"request": {"timestamp": 1768471200.0, "url": "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-pro-v1%3A0/converse-stream",
                     "body": {"system": [{"text": "s"}, {"cachePoint": {"type": "default"}}], "messages": [{"role": "user", "content": [{"text": "hi"}]}]}},
         "response": {"timestamp": 1768471201.0, "status_code": 200, "body_raw": as_text(
             frame("messageStart", {"role": "assistant"}) + frame("metadata", {"usage": {"inputTokens": 5, "outputTokens": 2, "cacheReadInputTokens": 1200, "cacheWriteInputTokens": 0}}))}},
        {"request": {"timestamp": 1748554704.0, "url": "https://api.anthropic.com/v1/messages",
                     "body": {"model": "claude-sonnet-4-20250514", "max_tokens": 10, "system": [{"type": "text", "text": "s", "cache_control": {"type": "ephemeral"}}],
                              "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]}},
         "response": {"timestamp": 1748554705.0, "status_code": 200, "body_raw": "event: message_start\ndata: " + json.dumps({"type": "message_start", "message": {"usage": USAGE}}) + "\n\n"}},
        {"request": {"timestamp": 1748554706.0, "url": "https://api.openai.com/v1/responses", "body": {"model": "gpt-5.1", "input": "hi"}},
         "response": {"timestamp": 1748554707.0, "status_code": 200, "body": {"usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 1024}, "output_tokens": 3}}}},
        # A Responses call whose output items the next body sends back (the body model keeps them),
        # and a DeepSeek chat-completions stream of reasoning and tool-call deltas.
        {"request": {"timestamp": 1748554706.5, "url": "https://api.openai.com/v1/responses", "body": {"model": "gpt-5.1", "input": [
            {"role": "user", "content": "hi"}, {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"},
            {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"}, {"type": "function_call_output", "call_id": "c1", "output": "a"}]}},
         "response": {"timestamp": 1748554707.0, "status_code": 200, "body": {"output": [
             {"type": "reasoning", "summary": [{"type": "summary_text", "text": "s"}]}, {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}],
             "usage": {"input_tokens": 2000, "input_tokens_details": {"cached_tokens": 1024}, "output_tokens": 3}}}},
        {"request": {"timestamp": 1748554707.5, "url": "https://api.deepseek.com/chat/completions", "body": {"model": "deepseek-v4-flash", "messages": [{"role": "user", "content": "hi"}]}},
         "response": {"timestamp": 1748554708.0, "status_code": 200, "body_raw": "data: " + json.dumps({"choices": [{"index": 0, "delta": {
             "reasoning_content": "r", "tool_calls": [{"index": 0, "id": "c1", "function": {"name": "ls", "arguments": "{}"}}]}}]}) + "\n\ndata: " + json.dumps(
             {"choices": [], "usage": {"prompt_tokens": 2000, "prompt_cache_hit_tokens": 1024, "prompt_cache_miss_tokens": 976}}) + "\n\ndata: [DONE]\n\n"}},
        # Gemini's own API: an explicit cache created, then read by a streamed call.
        {"request": {"timestamp": 1748554708.0, "method": "POST", "url": "https://generativelanguage.googleapis.com/v1beta/cachedContents",
                     "body": {"model": "models/gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"text": "doc"}]}], "ttl": "600s"}},
         "response": {"status_code": 200, "body": {"name": "cachedContents/c1", "usageMetadata": {"totalTokenCount": 3000}}}},
        {"request": {"timestamp": 1748554709.0, "method": "POST",
                     "url": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
                     "body": {"cachedContent": "cachedContents/c1", "contents": [{"role": "user", "parts": [{"text": "q"}]}]}},
         "response": {"status_code": 200, "body_raw": "data: " + json.dumps({"usageMetadata": {"promptTokenCount": 3010, "cachedContentTokenCount": 3000, "candidatesTokenCount": 2}}) + "\r\n\r\n"}},
    ],
    "codex": [
        {"timestamp": "2025-11-17T21:30:28.664Z", "type": "session_meta", "payload": {"id": "x", "cli_version": "0.58.0", "model_provider": "openai"}},
        # codex exec --json: usage per turn only, refused naming the rollout to audit.
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "x"}},
        {"type": "turn.completed", "usage": {"input_tokens": 90, "cached_input_tokens": 40, "output_tokens": 3}},
        # codex exec --json before 0.44: Codex's events {id, msg}; token_count per call, first as
        # TokenUsage itself, later as info (re-sent unchanged with rate limits).
        {"model": "gpt-5-codex", "provider": "openai", "reasoning effort": "high"},
        {"id": "0", "msg": {"type": "session_configured", "session_id": "e", "model": "gpt-5-codex"}},
        {"id": "1", "msg": {"type": "token_count", "input_tokens": 900, "cached_input_tokens": None, "output_tokens": 3}},
        {"id": "1", "msg": {"type": "token_count", "info": None, "rate_limits": {}}},
        {"id": "1", "msg": {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 2000, "cached_input_tokens": 1024, "output_tokens": 5},
                                                             "last_token_usage": {"input_tokens": 1100, "cached_input_tokens": 1024, "output_tokens": 2}}}},
        # A fork as Codex 0.35-0.125+ wrote it: the source's rollout copied after this one's
        # session_meta, re-timestamped, no marker where the copy ends (here: a token count, 20 ms
        # later, then a gap); the fork's first total starts again from zero (before 0.78).
        {"timestamp": "2025-11-17T21:30:28.700Z", "type": "session_meta", "payload": {"id": "s", "timestamp": "2025-11-17T20:00:00.000Z", "cli_version": "0.58.0"}},
        {"timestamp": "2025-11-17T21:30:28.720Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 1000, "cached_input_tokens": 0, "output_tokens": 5},
            "last_token_usage": {"input_tokens": 1000, "cached_input_tokens": 0, "output_tokens": 5}}}},
        {"timestamp": "2025-11-17T21:30:29.000Z", "type": "turn_context", "payload": {"model": "gpt-5.1-codex", "effort": "high"}},
        {"timestamp": "2025-11-17T21:30:29.664Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 2000, "cached_input_tokens": 1024, "output_tokens": 5},
            "last_token_usage": {"input_tokens": 2000, "cached_input_tokens": 1024, "output_tokens": 5}}}},
        # User turns as Codex counts them for a rollback: a user message of its own context is
        # none, one with no call after it (interrupted) is one.
        {"timestamp": "2025-11-17T21:30:29.680Z", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>\n<cwd>/r</cwd>\n</environment_context>"}]}},
        {"timestamp": "2025-11-17T21:30:29.690Z", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "stop"}]}},
        # Another agent's instructions, turns for a rollback from Codex 0.118: a communication's
        # JSON as an assistant message's one content item, and an agent_message item.
        {"timestamp": "2025-11-17T21:30:29.692Z", "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": json.dumps({"author": "/root/w", "recipient": "/root", "other_recipients": ["/root/v"],
                                                        "content": "done", "trigger_turn": False})}]}},
        {"timestamp": "2025-11-17T21:30:29.694Z", "type": "response_item", "payload": {"type": "agent_message", "author": "/root", "recipient": "/root/w",
            "content": [{"type": "input_text", "text": "go on"}, {"type": "encrypted_content", "encrypted_content": "gAAAA"}]}},
        # The latest Codex: another agent's instruction as a rollout line of its own.
        {"timestamp": "2025-11-17T21:30:29.694Z", "type": "inter_agent_communication", "payload": {"author": "/root", "recipient": "/root/w",
            "other_recipients": [], "content": "go on", "trigger_turn": True}},
        # A turn that reasoned (a reasoning item, reasoning tokens) and an interrupted one: the
        # next turn is taken to drop that reasoning unless the turn before it was interrupted.
        {"timestamp": "2025-11-17T21:30:29.695Z", "type": "response_item", "payload": {"type": "reasoning", "summary": [], "encrypted_content": "gAAAA"}},
        {"timestamp": "2025-11-17T21:30:29.696Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 4000, "cached_input_tokens": 2048, "output_tokens": 20, "reasoning_output_tokens": 12},
            "last_token_usage": {"input_tokens": 2000, "cached_input_tokens": 1024, "output_tokens": 15, "reasoning_output_tokens": 12}}}},
        {"timestamp": "2025-11-17T21:30:29.697Z", "type": "event_msg", "payload": {"type": "turn_aborted", "reason": "interrupted"}},
        # A thread rollback: the next call extends the turn before the dropped ones.
        {"timestamp": "2025-11-17T21:30:29.700Z", "type": "event_msg", "payload": {"type": "thread_rolled_back", "num_turns": 1}},
        # Later Codex: cache writes inside input_tokens.
        {"timestamp": "2026-11-17T21:30:30.664Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 5000, "cached_input_tokens": 1024, "cache_write_input_tokens": 2900, "output_tokens": 9},
            "last_token_usage": {"input_tokens": 3000, "cached_input_tokens": 0, "cache_write_input_tokens": 2900, "output_tokens": 4}}}},
        # Paginated rollouts (0.128-0.154+): ordinals; a subagent whose copy of its parent's
        # history ends below subagent_history_start_ordinal; a guardian thread; a continuation
        # window (history_base); a fork by reference.
        {"timestamp": "2026-09-21T11:14:45.000Z", "ordinal": 0, "type": "session_meta", "payload": {
            "id": "c", "cli_version": "0.154.0", "model_provider": "openai", "thread_source": "subagent", "parent_thread_id": "p",
            "subagent_history_start_ordinal": 2, "source": {"subagent": {"thread_spawn": {
                "parent_thread_id": "p", "depth": 1, "agent_path": "/root/a", "agent_nickname": "N"}}}}},
        {"timestamp": "2026-09-21T11:14:45.000Z", "ordinal": 1, "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 2000, "cached_input_tokens": 1024, "output_tokens": 5},
            "last_token_usage": {"input_tokens": 2000, "cached_input_tokens": 1024, "output_tokens": 5}}}},
        {"timestamp": "2026-09-21T11:14:46.000Z", "ordinal": 2, "type": "compacted", "payload": {"message": "s", "window_number": 2}},
        {"timestamp": "2026-09-21T11:14:47.000Z", "ordinal": 3, "type": "token_usage_record", "payload": {"response_id": "r", "usage": {
            "input_tokens": 3000, "cached_input_tokens": 1024, "cache_write_input_tokens": 0, "output_tokens": 7}}},
        {"timestamp": "2026-09-21T11:14:48.000Z", "ordinal": 4, "type": "compacted", "payload": {"compaction_response_id": "r", "window_number": 3}},
        {"timestamp": "2026-09-21T11:15:00.000Z", "ordinal": 7, "type": "session_meta", "payload": {
            "id": "g", "cli_version": "0.154.0", "thread_source": "guardian_review", "source": {"subagent": {"other": "guardian"}},
            "forked_from_id": "p", "forked_from_ordinal_exclusive": 7, "history_mode": "paginated",
            "history_base": {"thread_id": "p", "end_ordinal_exclusive": 7, "end_byte_offset": 10}}},
        # A fork (forked_from_id): its first call's running total less its own usage names the
        # source's call at the fork point; a total below that usage, or not all counts, no link.
        {"timestamp": "2026-09-21T11:16:00.000Z", "ordinal": 8, "type": "session_meta", "payload": {
            "id": "f", "cli_version": "0.154.0", "model_provider": "openai", "forked_from_id": "p", "forked_from_ordinal_exclusive": 8}},
        {"timestamp": "2026-09-21T11:16:09.000Z", "ordinal": 9, "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 5000, "cached_input_tokens": 2048, "output_tokens": 9, "reasoning_output_tokens": "x"},
            "last_token_usage": {"input_tokens": 3000, "cached_input_tokens": 1024, "output_tokens": 4}}}},
        {"timestamp": "2026-09-21T11:16:19.000Z", "ordinal": 10, "type": "event_msg", "payload": {"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": 1000, "cached_input_tokens": 0, "output_tokens": 1},
            "last_token_usage": {"input_tokens": 3000, "cached_input_tokens": 1024, "output_tokens": 4}}}},
    ],
    "pi": [
        {"type": "session", "id": "p", "timestamp": "2025-12-09T00:53:29.825Z", "cwd": "/x", "provider": "anthropic", "modelId": "m", "thinkingLevel": "off"},
        {"type": "thinking_level_change", "timestamp": "2025-12-09T00:53:30.000Z", "thinkingLevel": "high"},
        {"type": "message", "id": "e1", "parentId": None, "timestamp": "2025-12-09T00:53:30.825Z", "message": {"role": "assistant", "provider": "anthropic",
         "model": "claude-opus-4-5", "timestamp": 1765233665294, "usage": {"input": 1, "output": 2, "cacheRead": 3000, "cacheWrite": 40, "cost": {"total": 0.1}}}},
        # Gemini through pi's google-generative-ai API: input includes cacheRead.
        {"type": "message", "id": "e2", "parentId": "e1", "timestamp": "2025-12-09T00:53:31.825Z", "message": {"role": "assistant", "provider": "google",
         "api": "google-generative-ai", "model": "gemini-3.1-pro", "timestamp": 1765233666294,
         "usage": {"input": 5000, "output": 20, "cacheRead": 4000, "cacheWrite": 0, "totalTokens": 5020, "cost": {"total": 0.01}}}},
        # Later pi: Anthropic's 1 h writes apart, inside cacheWrite; reasoning inside output.
        {"type": "message", "id": "e3", "parentId": "e2", "timestamp": "2025-12-09T00:53:32.825Z", "message": {"role": "assistant", "provider": "anthropic",
         "api": "anthropic-messages", "model": "claude-opus-5", "timestamp": 1765233667294,
         "usage": {"input": 2, "output": 30, "cacheRead": 3000, "cacheWrite": 900, "totalTokens": 3932, "cost": {"total": 0.02}, "cacheWrite1h": 600, "reasoning": 12}}},
        # OpenClaw's pi sessions: a CLI backend's turn (its calls summed), a delivery mirror and a
        # gateway injection (no call).
        {"type": "message", "id": "o1", "parentId": "e3", "timestamp": "2025-12-09T00:53:33.825Z", "message": {"role": "assistant",
         "provider": "claude-cli", "api": "cli", "model": "claude-opus-4-7", "timestamp": 1765233667394,
         "usage": {"input": 1280, "output": 300, "cacheRead": 99000, "cacheWrite": 0, "totalTokens": 100580}}},
        {"type": "message", "id": "o2", "parentId": "o1", "timestamp": "2025-12-09T00:53:33.900Z", "message": {"role": "assistant",
         "provider": "openclaw", "api": "openai-responses", "model": "delivery-mirror", "timestamp": 1765233667400, "stopReason": "stop",
         "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}, "openclawDeliveryMirror": {"kind": "k"}}},
        {"type": "message", "id": "o3", "parentId": "o2", "timestamp": "2025-12-09T00:53:34.000Z", "message": {"role": "assistant",
         "provider": "clawdbot", "api": "openclaw-transcript", "model": "gateway-injected", "timestamp": 1765233667500,
         "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}},
        {"type": "custom", "customType": "model-snapshot", "id": "o4", "parentId": "o3", "timestamp": "2025-12-09T00:53:34.100Z",
         "data": {"provider": "zai", "modelApi": "openai-completions", "modelId": "glm-5"}},
        {"type": "custom", "customType": "openclaw.cache-ttl", "id": "o5", "parentId": "o4", "timestamp": "2025-12-09T00:53:34.200Z",
         "data": {"prunedToolResults": [{"key": "toolu_1", "mode": "hard", "placeholder": "[cleared]"}], "frozenToolResults": []}},
        # earendil-works/pi: its cache warmer's usage entry, and a compaction's summary call.
        {"type": "usage", "id": "w1", "parentId": "e3", "timestamp": "2025-12-09T00:57:32.825Z", "kind": "cache_warm", "provider": "anthropic",
         "model": "claude-opus-5", "usage": {"input": 0, "output": 1, "cacheRead": 3902, "cacheWrite": 0, "cost": {"total": 0.002}}},
        {"type": "compaction", "id": "c1", "parentId": "w1", "timestamp": "2025-12-09T00:58:32.825Z", "summary": "s", "tokensBefore": 3932,
         "usage": {"input": 4000, "output": 90, "cacheRead": 0, "cacheWrite": 0}},

        # pi --mode json: events; message_end is a message, the rest (turn_end, agent_end) copies.
        {"type": "message_end", "message": {"role": "assistant", "provider": "anthropic", "model": "claude-opus-5", "timestamp": 1765233668294,
         "usage": {"input": 3, "output": 4, "cacheRead": 3000, "cacheWrite": 10, "cost": {"total": 0.01}}}},
        {"type": "turn_end", "message": {"role": "assistant", "usage": {"input": 3}}, "toolResults": []},
    ],
    "mooncake": [
        {"timestamp": 0, "input_length": 1100, "output_length": 5, "hash_ids": [1, 2, 3]},
        # kvcache-simulator's variant: string ids, a block size, per-block token counts.
        {"block_size": 512, "hash_ids": ["a1", "b2"], "input_length": 751, "block_tokens": [512, 239]},
    ],
    "opencode": [
        {"info": {"id": "ses_1", "projectID": "p", "title": "t", "version": "0.15.8", "time": {"created": 1762000000000, "updated": 1762000001000}},
         "messages": [
             {"info": {"id": "msg_1", "sessionID": "ses_1", "role": "user", "time": {"created": 1762000000000}}, "parts": [{"type": "compaction", "auto": True}]},
             {"info": {"id": "msg_2", "sessionID": "ses_1", "role": "assistant", "time": {"created": 1762000000100}, "modelID": "claude-sonnet-4-5",
                       "providerID": "anthropic", "agent": "build", "summary": True},
              "parts": [{"type": "retry", "attempt": 1, "error": {"name": "APIError", "data": {"message": "Overloaded", "isRetryable": True}}, "time": {"created": 1762000000090}},
                        {"type": "step-start"}, {"type": "tool", "state": {"time": {"start": 1, "end": 2, "compacted": 1762000000050}}},
                        {"type": "step-finish", "cost": 0.01, "tokens": {"input": -5, "output": 3, "reasoning": 2, "cache": {"read": 4000, "write": 90}}}]},
             {"info": {"id": "msg_3", "sessionID": "ses_1", "role": "assistant", "time": {"created": 1762000000200}, "error": {"name": "APIError", "data": {"message": "x"}}},
              "parts": []}]},
        {"id": "prt_1", "sessionID": "ses_1", "messageID": "msg_2", "type": "step-finish", "tokens": {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}},
        # A fork (/fork): titled "(fork #1)", its copied messages dated before it was created.
        {"info": {"id": "ses_3", "projectID": "p", "title": "t (fork #1)", "version": "1.2.0", "time": {"created": 1762000005000}},
         "messages": [
             {"info": {"id": "msg_8", "sessionID": "ses_3", "role": "assistant", "time": {"created": 1762000000100}, "modelID": "m", "providerID": "anthropic"},
              "parts": [{"type": "step-finish", "tokens": {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 5, "write": 0}}}]},
             {"info": {"id": "msg_9", "sessionID": "ses_3", "role": "assistant", "time": {"created": 1762000006000}, "modelID": "m", "providerID": "anthropic"},
              "parts": [{"type": "step-finish", "tokens": {"input": 2, "output": 1, "reasoning": 0, "cache": {"read": 5, "write": 0}}}]}]},
        # OpenCode 2.x's export from its HTTP API: the export under "data", the messages as stored.
        {"data": {"info": {"id": "ses_2", "projectID": "p", "title": "t", "location": {"directory": "/x"}, "time": {"created": 1790000000000}},
                  "messages": [{"id": "msg_4", "type": "user", "text": "hi", "time": {"created": 1790000000000}},
                               {"id": "msg_5", "type": "assistant", "model": {"id": "mimo-v2.6-flash", "providerID": "opencode"}, "finish": "stop",
                                "time": {"created": 1790000000100, "streamed": 1790000000500, "completed": 1790000000900},
                                "tokens": {"input": 10, "output": 2, "reasoning": 1, "cache": {"read": 3456, "write": 0}}},
                               {"id": "msg_6", "type": "compaction", "status": "completed", "summary": "s", "time": {"created": 1790000001000},
                                "tokens": {"input": 5, "output": 1, "reasoning": 0, "cache": {"read": 100, "write": 0}}}]}},
    ],
    "gemini-cli": [
        {"sessionId": "s", "projectHash": "h", "startTime": "2026-05-04T09:00:00.000Z", "kind": "subagent"},
        {"id": "u1", "timestamp": "2026-05-04T09:00:00.000Z", "type": "user", "content": [{"text": "hi"}]},
        {"id": "g1", "timestamp": "2026-05-04T09:00:04.000Z", "type": "gemini", "content": "", "model": "gemini-2.5-pro",
         "tokens": {"input": 8000, "output": 1, "cached": 4000, "thoughts": 2, "tool": 3, "total": 8006},
         "toolCalls": [{"id": "c1", "name": "ls", "timestamp": "2026-05-04T09:00:05.000Z"}]},
        {"$rewindTo": "u1"},
        {"$set": {"messages": [{"id": "s1", "timestamp": "2026-05-04T09:05:00.000Z", "type": "user", "content": "snapshot"}]}},
        {"uuid": "q2", "parentUuid": "q1", "sessionId": "q", "timestamp": "2026-03-10T12:00:03.000Z", "type": "assistant", "agentId": "a",
         "model": "qwen3-coder-plus", "message": {"role": "model", "parts": [{"text": "x"}]},
         "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 1, "cachedContentTokenCount": 4, "thoughtsTokenCount": 1}},
        {"uuid": "q3", "parentUuid": "q2", "sessionId": "q", "type": "system", "subtype": "chat_compression", "systemPayload": {}},
        {"history": [{"role": "user", "parts": [{"text": "x"}]}]},
        # qwen -p --output-format stream-json: Claude Code's message shapes, Gemini's usage (the read inside input_tokens).
        {"type": "system", "subtype": "init", "uuid": "s", "session_id": "s", "model": "qwen3-coder-plus", "qwen_code_version": "0.14.0"},
        {"type": "assistant", "uuid": "m", "session_id": "s", "parent_tool_use_id": None, "message": {"id": "m", "role": "assistant",
         "model": "qwen3-coder-plus", "content": [], "usage": {"input_tokens": 900, "output_tokens": 3, "cache_read_input_tokens": 400}}},
        {"type": "user", "uuid": "u", "session_id": "s", "parent_tool_use_id": "t", "message": {"role": "user", "content": "x"}},
        # gemini -p --output-format json / stream-json: the run's totals only, refused naming the session to audit.
        {"session_id": "s", "response": "x", "stats": {"models": {"gemini-2.5-pro": {"api": {"totalRequests": 2},
                                                                                     "tokens": {"prompt": 90, "cached": 40}}}}},
        {"type": "init", "timestamp": "2026-03-02T10:00:00.000Z", "session_id": "s", "model": "gemini-2.5-pro"},
        {"type": "result", "timestamp": "2026-03-02T10:00:04.100Z", "status": "success", "stats": {"input_tokens": 90, "cached": 40}},
        {"type": "error", "timestamp": "2026-03-02T10:00:03.000Z", "severity": "warning", "message": "Loop detected, stopping execution"},
        {"type": "result", "timestamp": "2026-03-02T10:00:00.500Z", "status": "error", "error": {"type": "FatalAuthenticationError", "message": "m\nx"}},
        # claude -p --output-format json: the run's result alone, refused naming the transcript to audit.
        {"type": "result", "subtype": "error_max_turns", "session_id": "s", "usage": {"input_tokens": 3}, "modelUsage": {"m": {}}, "total_cost_usd": 0.1},
        # gemini -p --output-format json of a failed run: the error only, refused naming it.
        {"session_id": "s", "error": {"type": "FatalTurnLimitedError", "message": "Reached max session turns.\nx", "code": 53}},
    ],
    "agent-traces": [
        {"id": "c", "models": ["m"], "block_size": 64, "hash_id_scope": "local", "tool_tokens": 100, "system_tokens": 20, "requests": [
            {"t": 0.0, "type": "n", "model": "m", "in": 130, "out": 5, "hash_ids": [1, 2], "api_time": 1.0, "think_time": 0.0},
            {"t": 2.0, "type": "subagent", "agent_id": "a", "requests": [{"t": 0.5, "type": "s", "model": "m", "in": 64, "out": 1, "hash_ids": [1], "ttft": 0.2}]},
            {"t": 4.5, "type": "n", "model": "m", "in": 200, "out": 7, "hash_ids": [1, 2, 3]},
        ]},
        {"id": "g", "block_size": 16, "hash_id_scope": "global", "system_tokens": 5, "requests": [{"t": 1, "in": 40, "out": 2, "hash_ids": [7, 8]}]},
    ],
    "swe-agent": [
        {"info": {"mini_version": "2.2.8", "model_stats": {"api_calls": 2}, "config": {"model": {"model_name": "anthropic/claude-sonnet-4-5", "set_cache_control": "default_end"}}},
         "trajectory_format": "mini-swe-agent-1.1", "messages": [
            {"role": "system", "content": "s"}, {"role": "user", "content": "task"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
             "extra": {"timestamp": 1761994801.5, "response": {"id": "r1", "created": 1761994800, "model": "claude-sonnet-4-5", "provider": "Anthropic", "usage": {
                 "prompt_tokens": 3012, "completion_tokens": 4, "cache_creation_input_tokens": 3000, "cache_read_input_tokens": 0,
                 "prompt_tokens_details": {"cached_tokens": 0, "cache_creation_tokens": 3000, "cache_creation_token_details": {"ephemeral_1h_input_tokens": 0}}}}}},
            {"role": "tool", "tool_call_id": "t1", "content": [{"type": "text", "text": "ok"}], "extra": {"timestamp": 1761994802.0}},
            {"role": "user", "content": "err", "extra": {"response": {"model": "gpt-4o", "usage": {"prompt_tokens": 2000, "prompt_tokens_details": {"cached_tokens": 1024}}}}},
            {"role": "user", "content": "err2", "extra": {"interrupt_type": "FormatError", "response": "ModelResponse(id='r', choices=[])"}},
            {"role": "exit", "content": "", "extra": {"exit_status": "Submitted"}}]},
        {"trajectory": [{"query": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "o", "cache_control": {"type": "ephemeral"}}]}]},
                        {"messages": [{"role": "tool", "content": "x", "tool_call_ids": ["a"]}]}],
         "history": [{"role": "assistant", "content": "ls", "agent": "primary"}], "info": {"swe_agent_version": "1.1.0", "model_stats": {"tokens_sent": 5}},
         "replay_config": "{\"agent\": {\"model\": {\"name\": \"claude-sonnet-4-20250514\"}}}"},
        # SWE-agent 1.1: a tool-calling reply's thinking_blocks, sent back.
        {"trajectory": [{"query": [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
                                   {"role": "assistant", "content": "a", "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
                                    "thinking_blocks": [{"type": "thinking", "thinking": "hmm", "signature": "s"}, {"type": "redacted_thinking", "data": "x"}]},
                                   {"role": "tool", "content": "ok", "tool_call_ids": ["t1"]}]}],
         "history": [], "info": {"swe_agent_version": "1.1.0"}, "replay_config": {"agent": {"model": {"name": "claude-sonnet-4-5"}}}},
        # DeepSeek through LiteLLM: the answer (choices[0].message) is replayed as the next call's prefix.
        {"info": {"mini_version": "2.2.7", "config": {"model": {"model_name": "deepseek/deepseek-chat"}}}, "trajectory_format": "mini-swe-agent-1.1",
         "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
                      {"role": "assistant", "content": "a", "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
                       "extra": {"timestamp": 1776000001.0, "response": {"id": "d1", "created": 1776000000, "model": "deepseek-chat", "choices": [
                           {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "a", "reasoning_content": None,
                                                                                   "tool_calls": [{"id": "t1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}}],
                           "usage": {"prompt_tokens": 1529, "completion_tokens": 73, "prompt_tokens_details": {"cached_tokens": 320},
                                     "prompt_cache_hit_tokens": 320, "prompt_cache_miss_tokens": 1209}}}},
                      {"role": "tool", "tool_call_id": "t1", "content": "ok", "extra": {"timestamp": 1776000002.0}},
                      {"role": "assistant", "content": "b", "extra": {"response": {"id": "d2", "model": "deepseek-chat", "choices": [{"message": {"content": "b"}}],
                                                                                   "usage": {"prompt_tokens": 1700, "prompt_tokens_details": {"cached_tokens": 1600}}}}}]},
        # A run that ended before its first call (listed, not refused).
        {"info": {"mini_version": "2.2.8", "exit_status": "Timeout", "model_stats": {"api_calls": 1}}, "trajectory_format": "mini-swe-agent-1.1",
         "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
                      {"role": "exit", "content": "litellm.Timeout", "extra": {"exit_status": "Timeout"}}]},
    ],
    "otel": [
        # GitHub Copilot Chat's log records (the JavaScript SDK's, serialized) and a collector's logs export.
        {"hrTime": [1773851611, 523000000], "resource": {"_rawAttributes": [["session.id", "w"]]}, "instrumentationScope": {"name": "copilot-chat"},
         "spanContext": {"traceId": "t", "spanId": "s"}, "_body": "GenAI inference: claude-opus-4.6",
         "attributes": {"event.name": "gen_ai.client.inference.operation.details", "gen_ai.response.model": "claude-opus-4-6",
                        "gen_ai.usage.input_tokens": 129590, "gen_ai.usage.output_tokens": 114}},
        {"resourceLogs": [{"resource": {"attributes": [{"key": "session.id", "value": {"stringValue": "w"}}]}, "scopeLogs": [{"logRecords": [
            {"timeUnixNano": "1761994801000000000", "eventName": "gen_ai.client.inference.operation.details",
             "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "5000"}}, {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "7"}},
                            {"key": "gen_ai.usage.cache_read.input_tokens", "value": {"intValue": "4096"}}]},
            {"timeUnixNano": "1761994802000000000", "attributes": [{"key": "event.name", "value": {"stringValue": "copilot_chat.agent.turn"}},
                                                                   {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "5000"}}]}]}]}]},
        # The write spellings of an OpenCode OTel plugin and of OpenClaw.
        {"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "t", "spanId": "c", "startTimeUnixNano": "1761994801000000000",
             "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}}, {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "40"}},
                            {"key": "gen_ai.usage.cache_read.input_tokens", "value": {"intValue": "0"}},
                            {"key": "gen_ai.usage.cache_write.input_tokens", "value": {"intValue": "6000"}}]},
            {"traceId": "t", "spanId": "d", "startTimeUnixNano": "1761994805000000000",
             "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "3"}}, {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "25"}},
                            {"key": "gen_ai.usage.cache_read_tokens", "value": {"intValue": "6000"}},
                            {"key": "gen_ai.usage.cache_write_tokens", "value": {"intValue": "900"}}]},
            # Counts sent as strings of digits (OpenClaw's exporter, by a third-party doc).
            {"traceId": "t", "spanId": "e", "startTimeUnixNano": "1761994806000000000",
             "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"stringValue": "6010"}},
                            {"key": "gen_ai.usage.output_tokens", "value": {"stringValue": "12"}},
                            {"key": "gen_ai.usage.cache_read_tokens", "value": {"stringValue": "6000"}}]}]}]}]},
        {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "a"}}]}, "scopeSpans": [{"scope": {"name": "x"}, "spans": [
            {"traceId": "t", "spanId": "a", "name": "invoke_agent", "startTimeUnixNano": "1761994800000000000",
             "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "10142"}}]},
            {"traceId": "t", "spanId": "b", "parentSpanId": "a", "startTimeUnixNano": "1761994801000000000", "endTimeUnixNano": "1761994802000000000",
             "attributes": [{"key": "gen_ai.request.model", "value": {"stringValue": "claude-sonnet-4-5"}},
                            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "5130"}}, {"key": "gen_ai.usage.output_tokens", "value": {"intValue": 25}},
                            {"key": "gen_ai.usage.cache_read.input_tokens", "value": {"intValue": "5000"}},
                            {"key": "gen_ai.usage.cache_creation_input_tokens", "value": {"intValue": "120"}}]}]}]}]},
        # A ResourceSpans on its own (GitHub Copilot CLI's file exporter).
        {"resource": {"attributes": []}, "schemaUrl": "", "scopeSpans": [{"scope": {"name": "github.copilot"}, "spans": [
            {"traceId": "t", "spanId": "f", "startTimeUnixNano": "1761994807000000000",
             "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "80314"}},
                            {"key": "gen_ai.usage.cache_read.input_tokens", "value": {"intValue": "79929"}}]}]}]},
        {"name": "chat", "context": {"trace_id": "0x1", "span_id": "0x2"}, "parent_id": None, "start_time": "2025-11-01T10:00:00Z",
         "attributes": {"gen_ai.system": "openai", "gen_ai.response.model": "gpt-4o", "gen_ai.usage.prompt_tokens": 2000,
                        "gen_ai.usage.cache_read_input_tokens": 1024, "gen_ai.conversation.id": "c"}},
        # OpenInference's LLM spans under an AGENT span, and pydantic-ai's older details.* names.
        {"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "u", "spanId": "r", "startTimeUnixNano": "1761994800000000000",
             "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "AGENT"}},
                            {"key": "llm.token_count.prompt", "value": {"intValue": "9150"}}]},
            {"traceId": "u", "spanId": "l", "parentSpanId": "r", "startTimeUnixNano": "1761994801000000000",
             "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
                            {"key": "llm.model_name", "value": {"stringValue": "claude-sonnet-4-5"}},
                            {"key": "llm.provider", "value": {"stringValue": "anthropic"}},
                            {"key": "session.id", "value": {"stringValue": "s"}},
                            {"key": "llm.token_count.prompt", "value": {"intValue": "5140"}},
                            {"key": "llm.token_count.completion", "value": {"intValue": "25"}},
                            {"key": "llm.token_count.prompt_details.cache_read", "value": {"intValue": "4000"}},
                            {"key": "llm.token_count.prompt_details.cache_write", "value": {"intValue": "1130"}}]},
            {"traceId": "u", "spanId": "p", "startTimeUnixNano": "1761994809000000000",
             "attributes": [{"key": "gen_ai.system", "value": {"stringValue": "anthropic"}},
                            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "6020"}},
                            {"key": "gen_ai.usage.details.cache_read_tokens", "value": {"intValue": "5000"}},
                            {"key": "gen_ai.usage.details.cache_write_tokens", "value": {"intValue": "1000"}}]}]}]}]},
        # Claude Code's traces (beta): an llm_request span with its flat counts and speed.
        {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "claude-code"}}]}, "scopeSpans": [{"spans": [
            {"traceId": "cc", "spanId": "i", "name": "claude_code.interaction", "startTimeUnixNano": "1790500000000000000",
             "endTimeUnixNano": "1790500020000000000", "attributes": [{"key": "session.id", "value": {"stringValue": "s"}}]},
            {"traceId": "cc", "spanId": "q", "parentSpanId": "i", "name": "claude_code.llm_request", "startTimeUnixNano": "1790500001000000000",
             "endTimeUnixNano": "1790500007000000000",
             "attributes": [{"key": "session.id", "value": {"stringValue": "s"}}, {"key": "model", "value": {"stringValue": "claude-opus-4-6"}},
                            {"key": "speed", "value": {"stringValue": "fast"}}, {"key": "duration_ms", "value": {"stringValue": "6000"}},
                            {"key": "input_tokens", "value": {"intValue": "3"}}, {"key": "output_tokens", "value": {"intValue": "410"}},
                            {"key": "cache_read_tokens", "value": {"intValue": "0"}},
                            {"key": "cache_creation_tokens", "value": {"intValue": "18650"}}]}]}]}]},
        # The Vercel AI SDK's doGenerate span (v6 names) and Sentry's older names.
        {"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": "v", "spanId": "d", "startTimeUnixNano": "1761994801000000000",
             "attributes": [{"key": "gen_ai.request.model", "value": {"stringValue": "claude-sonnet-4-5"}},
                            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "4010"}},
                            {"key": "ai.usage.inputTokenDetails.cacheReadTokens", "value": {"intValue": "0"}},
                            {"key": "ai.usage.inputTokenDetails.cacheWriteTokens", "value": {"intValue": "4000"}}]},
            {"traceId": "v", "spanId": "e", "startTimeUnixNano": "1761994809000000000",
             "attributes": [{"key": "gen_ai.usage.input_tokens", "value": {"intValue": "4700"}},
                            {"key": "gen_ai.usage.input_tokens.cached", "value": {"intValue": "4500"}},
                            {"key": "gen_ai.usage.input_tokens.cache_write", "value": {"intValue": "190"}}]}]}]}]},
    ],
    "litellm": [
        {"request_id": "c1", "call_type": "acompletion", "startTime": "2025-11-01T10:00:00Z", "completionStartTime": "2025-11-01T10:00:01Z",
         "model": "claude-sonnet-4-5", "custom_llm_provider": "anthropic", "prompt_tokens": 4020, "completion_tokens": 5, "session_id": "s",
         "cache_hit": "False", "status": "success", "metadata": {"usage_object": {"prompt_tokens": 4020, "completion_tokens": 5,
             "cache_creation_input_tokens": 4000, "cache_read_input_tokens": 0, "prompt_tokens_details": {"cached_tokens": 0, "cache_creation_tokens": 4000}}},
         "proxy_server_request": "{\"model\": \"claude\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}"},
        {"request_id": "c2", "call_type": "completion", "startTime": "2025-11-01T10:00:02", "model": "gpt-4o", "prompt_tokens": 1800,
         "completion_tokens": 9, "metadata": "{\"additional_usage_values\": {\"prompt_tokens_details\": {\"cached_tokens\": 1536}}}"},
        {"request_id": "c3", "call_type": "aembedding", "startTime": "2025-11-01T10:00:03Z", "cache_hit": "True", "status": "failure"},
        # StandardLoggingPayloads (a logging callback's): id, trace_id, epoch seconds, the usage in the logged response.
        {"id": "p1", "trace_id": "tr", "call_type": "acompletion", "startTime": 1761994800.5, "endTime": 1761994802.0,
         "completionStartTime": 1761994801.0, "custom_llm_provider": "anthropic", "model": "claude-sonnet-4-5", "cache_hit": False,
         "status": "success", "prompt_tokens": 4310, "completion_tokens": 12, "metadata": {},
         "response": {"provider": "Amazon Bedrock", "usage": {"prompt_tokens": 4310, "completion_tokens": 12, "cache_read_input_tokens": 4000,
                                "cache_creation_input_tokens": 300, "prompt_tokens_details": {"cached_tokens": 4000, "cache_creation_tokens": 300}}}},
        {"id": "p2", "trace_id": "tr", "call_type": "acompletion", "startTime": 1761994806.0, "model": "gpt-4o", "cache_hit": None,
         "prompt_tokens": 1800, "completion_tokens": 9, "metadata": {"usage_object": {"prompt_tokens": 1800, "prompt_tokens_details": {"cached_tokens": 1536}}},
         "response": "{not json", "messages": [{"role": "user", "content": "hi"}]},
        # Kimi's usage: cached_tokens at the top.
        {"request_id": "k1", "call_type": "acompletion", "startTime": "2025-11-01T10:00:09Z", "model": "kimi-k2-thinking",
         "custom_llm_provider": "moonshot", "prompt_tokens": 2500, "completion_tokens": 25,
         "metadata": {"usage_object": {"prompt_tokens": 2500, "completion_tokens": 25, "cached_tokens": 2048, "prompt_tokens_details": None}}},
        # A page of /spend/logs/ui or /spend/logs/v2.
        {"data": [{"request_id": "u1", "call_type": "anthropic_messages", "startTime": "2026-10-05T09:00:00Z", "model": "claude-sonnet-4-5",
                   "custom_llm_provider": "anthropic", "prompt_tokens": 21054, "completion_tokens": 512, "session_id": "cc", "status": "success",
                   "metadata": {"usage_object": {"prompt_tokens": 21054, "completion_tokens": 512, "cache_creation_input_tokens": 21050,
                                                 "cache_read_input_tokens": 0, "prompt_tokens_details": {"cached_tokens": 0, "cache_creation_tokens": 21050}}}},
                  {"request_id": "u2", "call_type": "acompletion", "startTime": "2026-10-05T09:00:30Z", "status": "failure"}],
         "total": 2, "page": 1, "page_size": 50, "total_pages": 1},
    ],
    "langfuse": [
        {"data": [
            {"id": "g1", "traceId": "t", "type": "GENERATION", "startTime": "2025-11-01T10:00:00.100Z", "endTime": "2025-11-01T10:00:02Z",
             "completionStartTime": "2025-11-01T10:00:01.2Z", "model": "claude-sonnet-4-5", "level": "DEFAULT", "input": {"prompt": "p"},
             "usageDetails": {"input": 20, "output": 50, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 4000,
                              "cache_creation_ephemeral_1h_input_tokens": 10, "total": 4070}, "costDetails": {"total": 0.0158}},
            {"id": "g2", "traceId": "t", "type": "GENERATION", "startTime": "2025-11-01T10:00:05Z", "model": "gpt-4o", "level": "ERROR",
             "statusMessage": "overloaded", "usageDetails": {}},
            {"id": "s1", "traceId": "t", "type": "SPAN", "startTime": "2025-11-01T10:00:00Z"}],
         "meta": {"page": 1, "limit": 50, "totalItems": 3, "totalPages": 1}},
        {"id": "g3", "traceId": "u", "type": "GENERATION", "startTime": "2025-11-01T10:01:00Z", "model": "o4-mini",
         "modelParameters": {"reasoning_effort": "high"},
         "input": {"messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}], "tools": []},
         "usageDetails": {"input": 128, "input_cached_tokens": 3840, "output": 30, "output_reasoning_tokens": 64, "total": 4062}},
        {"id": "tr", "timestamp": "2025-11-03T14:00:00Z", "sessionId": "s7", "observations": [
            {"id": "g4", "traceId": "tr", "type": "GENERATION", "startTime": "2025-11-03T14:00:00.5Z", "model": "claude-opus-4-5",
             "usageDetails": {"input": 5000, "input_cache_read": 4864, "input_cache_creation": 10, "output": 20, "total": 5020}},
            {"id": "g5", "traceId": "tr", "type": "GENERATION", "startTime": "2025-11-03T14:00:09Z", "promptTokens": 2100, "completionTokens": 4,
             "usage": {"input": 2100, "output": 4, "total": 2104, "unit": "TOKENS"}}]},
        # The v2 observations API: providedModelName, input as its raw JSON text.
        {"data": [{"id": "v1", "traceId": "tv", "startTime": "2026-10-02T09:15:00.000Z", "projectId": "p", "type": "GENERATION",
                   "sessionId": "sv", "providedModelName": "claude-sonnet-4-5", "input": "[{\"role\": \"user\", \"content\": \"hi\"}]",
                   "usageDetails": {"input": 12, "cache_creation_input_tokens": 2100, "output": 40}, "costDetails": {"total": 0.009}}],
         "meta": {"cursor": None}},
        {"id": "b1", "trace_id": "tb", "type": "GENERATION", "start_time": "2025-11-04 12:00:00.000", "end_time": "2025-11-04 12:00:01.500",
         "provided_model_name": "claude-sonnet-4-5", "usage_details": {"input": "3", "output": "40", "cache_creation_input_tokens": "3000"},
         "cost_details": {"total": 0.011859}, "level": "DEFAULT"},
    ],
    "openhands": [
        {"id": 1, "timestamp": "2025-11-01T10:00:04.5", "source": "agent", "action": "run", "args": {"command": "ls"},
         "tool_call_metadata": {"model_response": {"id": "r1", "model": "claude-sonnet-4-5", "usage": {"prompt_tokens": 8012, "completion_tokens": 6,
             "cache_creation_input_tokens": 8000, "cache_read_input_tokens": 0, "prompt_tokens_details": {"cached_tokens": 0}}}},
         "llm_metrics": {"accumulated_cost": 0.1, "token_usages": [{"model": "claude-sonnet-4-5", "prompt_tokens": 8012, "completion_tokens": 6,
             "cache_read_tokens": 0, "cache_write_tokens": 8000, "response_id": "r1"}]}},
        {"instance_id": "i-1", "history": [], "metrics": {"token_usages": [{"model": "gpt-4o", "prompt_tokens": 2000, "completion_tokens": 1,
            "cache_read_tokens": 1024, "cache_write_tokens": 0, "response_id": ""}]}},
        # OpenHands 0.2x evaluation output: costs only in metrics, the usage on the history's actions.
        {"instance_id": "i-2", "metadata": {"llm_config": {"model": "openai/gpt-5", "base_url": "https://api.example.org/v1"}},
         "metrics": {"accumulated_cost": 0.01, "costs": [{"model": "openai/gpt-5", "cost": 0.004, "timestamp": 1769185672.1}]},
         "history": [{"id": 0, "timestamp": "2026-01-23T16:27:08", "source": "user", "action": "message", "args": {}},
                     {"id": 1, "timestamp": "2026-01-23T16:27:34.29", "source": "agent", "action": "run", "args": {},
                      "tool_call_metadata": {"model_response": {"id": "c-a", "model": "gpt-5-2025-08-07", "usage": {
                          "prompt_tokens": 3457, "completion_tokens": 243, "prompt_tokens_details": {"cached_tokens": 1920}}}}}]},
    ],
    "cline": [
        {"ts": 1761987600000, "type": "say", "say": "task", "text": "t", "modelInfo": {"providerId": "anthropic", "modelId": "claude-sonnet-4-5", "mode": "act"}},
        {"ts": 1761987601000, "type": "say", "say": "api_req_started", "conversationHistoryIndex": -1,
         "text": json.dumps({"request": "r", "tokensIn": 4, "tokensOut": 9, "cacheWrites": 3000, "cacheReads": 0, "cost": 0.01})},
        {"ts": 1761987602000, "type": "say", "say": "api_req_started", "conversationHistoryDeletedRange": [1, 2],
         "modelInfo": {"providerId": "deepseek", "modelId": "deepseek-chat", "mode": "act"},
         "text": json.dumps({"tokensIn": 0, "tokensOut": 5, "cacheWrites": 260, "cacheReads": 4992, "cost": 0.001})},
        {"ts": 1761987603000, "type": "say", "say": "api_req_started",
         "text": json.dumps({"apiProtocol": "anthropic", "tokensIn": 3, "cacheReads": 9, "cancelReason": "user_cancelled"})},
        {"ts": 1761987604000, "type": "say", "say": "api_req_finished", "text": json.dumps({"tokensIn": 5, "cost": 0.1})},
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "ts": 1761987600500},
        {"files_in_context": [], "model_usage": [{"ts": 1, "model_id": "deepseek-chat", "model_provider_id": "deepseek", "mode": "act"}]},
    ],
    # GitHub Copilot CLI's assistant_usage_events rows, exported (input_tokens holds the reads and
    # writes; a subagent's row; a row of no tokens; NULL cache counts).
    "copilot-cli": [
        {"id": 1, "session_id": "a1", "turn_index": 0, "model": "claude-sonnet-4.6", "input_tokens": 12000, "output_tokens": 300,
         "cache_read_tokens": 0, "cache_write_tokens": 11500, "duration_ms": 4000.0, "agent_id": None, "parent_tool_call_id": None,
         "finish_reason": "tool_calls", "created_at": "2026-10-04T20:15:25.000Z"},
        {"id": 2, "session_id": "a1", "turn_index": 0, "model": "claude-haiku-4.5", "input_tokens": 5000, "output_tokens": 80,
         "cache_read_tokens": 0, "cache_write_tokens": 4800, "duration_ms": 1500.0, "agent_id": "explore-1",
         "parent_tool_call_id": "toolu_7", "created_at": "2026-10-04T20:15:34.000Z"},
        {"id": 3, "session_id": "a1", "turn_index": 1, "model": "gpt-5.4", "input_tokens": 0, "output_tokens": 0,
         "cache_read_tokens": 0, "cache_write_tokens": 0, "created_at": "2026-10-04T20:17:00.000Z"},
        {"id": 4, "session_id": "b2", "model": "gemini-2.5-pro", "input_tokens": 3000, "output_tokens": 20,
         "cache_read_tokens": None, "cache_write_tokens": None, "duration_ms": None, "created_at": 1791187202},
    ],
}
SEED_BYTES = {fmt: b"".join(to_json_line(r) + b"\n" for r in records) for fmt, records in SEEDS.items()}


def test_mutated_and_generated_logs_end_cleanly(importer_examples):
    tally = Tally("audit", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-audit-"))
    path = folder / "log.jsonl"
    formats = sorted(SEEDS)

    @fuzz_settings(importer_examples)
    @given(
        fmt=st.sampled_from(formats),
        data=st.data(),
        explicit=st.booleans(),
        as_array=st.booleans(),
        output=st.sampled_from(("table", "json")),
    )
    def case(fmt: str, data: st.DataObject, explicit: bool, as_array: bool, output: str) -> None:
        raw = data.draw(
            st.one_of(
                mutated(SEED_BYTES[fmt]),
                st.lists(edited(st.sampled_from(SEEDS[fmt])), min_size=1, max_size=4).map(
                    lambda docs: json.dumps(docs, ensure_ascii=True).encode() if as_array else b"\n".join(map(to_json_line, docs))
                ),
                st.lists(json_values.map(to_json_line), min_size=1, max_size=2).map(b"\n".join),
            )
        )
        argv = ["audit", str(write(path, raw)), "--quiet", "--format", output]
        if explicit:
            argv += ["--input", fmt]
        tally.check(argv)

    case()
    tally.report()
