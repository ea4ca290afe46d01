"""Bedrock Converse / ConverseStream request bodies replayed in an HTTP capture
(workloads/logs/converse_body.py through workloads/logs/formats/http_capture.py): cache points
as breakpoints, the body diff naming the part that changed, Nova's rules, bad bodies.

These go through the audit, so on the code before them they fail on their assertions: a
Converse call had no body, its reads were the chain model's and a miss could not name the part
of the prompt that changed."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from prefixbench.reports.cli import run
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import CacheBreakpoint, Reasoning, Text, ToolCall, ToolResult
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.converse_body import parse_converse_body, replayable
from tests.unit.audit.fixtures import write_jsonl
from tests.unit.logs.bedrock_stream import as_text
from tests.unit.logs.test_http_capture_bedrock import HOST, NOVA_PRO, SONNET, T0, converse_stream, line

SONNET_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
CACHE_POINT = {"cachePoint": {"type": "default"}}


def pad(phrase: str, length: int) -> str:
    """``phrase`` repeated to exactly ``length`` characters (no character JSON escapes)."""
    return (phrase * (length // len(phrase) + 1))[:length]


# Sizes chosen so each cache point closes a prefix of a round number of tokens, at the body
# model's 3.85 rendered characters a token. The rendering (simulator/render.py):
#   tools unit   '{"tools":[' (10) + '{"name":"read_file","description":"' (35) + description
#                + '","parameters":{"type":"object"}}' (33): the tool ends at 7,700 characters
#                (a 7,622-character description), 2,000 tokens; then ']}'.
#   system unit  '{"system":[' (11) + '{"type":"text","text":"' (23) + text + '"}' (2): the block
#                ends 3,848 characters after the tools unit's 7,702 (a 3,812-character text):
#                11,550 characters, 3,000 tokens; then ']}'.
#   first user   '{"role":"user","content":[' (26) + '{"type":"text","text":"' (23) + text + '"}'
#                (2): its block ends 3,848 characters after 11,552 (a 3,797-character text):
#                15,400 characters, 4,000 tokens.
DESCRIPTION = pad("Read a file from the workspace. ", 7622)
HELPFUL = pad("You are helpful. ", 3812)
TERSE = pad("You are terse!!! ", 3812)  # as long as HELPFUL, other bytes from its 9th character
QUESTION = pad("Fix the failing test in a.py. ", 3797)


def converse(system: str = HELPFUL, description: str = DESCRIPTION, turns: int = 1) -> dict:
    """A coding agent's Converse body: one tool, a system prompt and the conversation, a cache
    point after the tools, after the system prompt and after the last user message."""
    tool = {"toolSpec": {"name": "read_file", "description": description, "inputSchema": {"json": {"type": "object"}}}}
    messages: list[dict] = [{"role": "user", "content": [{"text": QUESTION}]}]
    if turns > 1:
        messages += [
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "Look at a.py first.", "signature": "c2ln"}}},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "read_file", "input": {"path": "a.py"}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "assert add(1, 1) == 3\n"}], "status": "success"}}]},
        ]
    messages[-1]["content"].append(CACHE_POINT)
    return {"toolConfig": {"tools": [tool, CACHE_POINT], "toolChoice": {"auto": {}}},
            "system": [{"text": system}, CACHE_POINT],
            "messages": messages,
            "inferenceConfig": {"maxTokens": 4096, "temperature": 0.2},
            "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}}}


def usage(uncached: int, write: int, read: int, output: int = 50) -> dict:
    return {"inputTokens": uncached, "outputTokens": output, "totalTokens": uncached + write + read + output,
            "cacheReadInputTokens": read, "cacheWriteInputTokens": write}


def answer(operation: str, counts: dict) -> dict:
    """Converse's JSON answer, or ConverseStream's event stream (kept as text) with the same usage."""
    if operation == "converse":
        return {"body": {"output": {"message": {"role": "assistant", "content": [{"text": "Done."}]}},
                         "stopReason": "end_turn", "usage": counts, "metrics": {"latencyMs": 900}}}
    stream = converse_stream(counts["inputTokens"], counts["cacheWriteInputTokens"], counts["cacheReadInputTokens"], counts["outputTokens"])
    return {"body_raw": as_text(stream)}


@pytest.mark.parametrize("operation", ["converse", "converse-stream"])
def test_a_converse_session_is_replayed_and_its_misses_name_the_part_that_changed(tmp_path: Path, operation: str) -> None:
    """Four calls of an agent on Claude Sonnet 4.5 through Converse (or ConverseStream), 30 s
    apart: the first writes, the second reads the first one's prefix, the third has a new system
    prompt, the fourth a new tool description."""
    lines = [
        line(SONNET, operation, converse(), answer(operation, usage(2, 4000, 0)), T0),
        line(SONNET, operation, converse(turns=2), answer(operation, usage(3, 90, 4000)), T0 + 30),
        line(SONNET, operation, converse(system=TERSE, turns=2), answer(operation, usage(3, 2090, 2000)), T0 + 60),
        line(SONNET, operation, converse(system=TERSE, description=DESCRIPTION.upper(), turns=2), answer(operation, usage(3, 4090, 0)), T0 + 90),
    ]
    path = write_jsonl(tmp_path / f"{operation}.jsonl", lines)
    rows = run_audit([path]).rows
    # The misses are told by the body diff (the chain model alone cannot say what changed).
    assert (rows[2].cause, rows[2].evidence) == ("system-changed", "body-diff")
    assert "'helpful." in rows[2].detail and "'terse!!!" in rows[2].detail
    assert (rows[3].cause, rows[3].evidence) == ("tools-changed", "body-diff")
    assert [row.predicted_by for row in rows] == ["body"] * 4
    assert [(row.provider, row.model, row.lane) for row in rows] == [("bedrock", SONNET_ID, "main")] * 4
    # 1: nothing cached yet; it writes up to its last cache point, 4,000 tokens.
    # 2: its last cache point (after the tool result) looks back over the tool result, the
    #    assistant's tool use and reasoning, to the end of the first user message: 4,000 tokens.
    # 3: the system prompt changed: only the tools' entry (2,000 tokens) still matches.
    # 4: the tool description changed: nothing matches.
    # Counted as the provider counted each prompt (the first: 4,001 model tokens, 4,002
    # reported), the 4,000 model tokens of 1 and 2 are 4,001 of the provider's.
    assert [row.predicted_cache_read for row in rows] == [0, 4001, 2000, 0]
    assert rows[0].predicted_cache_write == 4001
    assert [row.reported_cache_read for row in rows] == [0, 4000, 2000, 0]
    assert rows[1].cause is None
    requests, _ = load_trace([path])
    assert [len(r.body.cache_breakpoints) for r in requests if r.body is not None] == [3, 3, 3, 3]
    assert requests[0].body is not None and requests[0].body.envelope.reasoning_effort == "thinking=2048"


def test_the_body_maps_onto_the_request_a_messages_body_gives() -> None:
    request = parse_converse_body(converse(turns=2), SONNET_ID, "f:1")
    assert [tool.name for tool in request.tools] == ["read_file"] and request.tools[0].parameters == '{"type":"object"}'
    assert request.system_blocks == (HELPFUL,) and request.system == ""
    assert request.max_tokens == 4096 and request.envelope.temperature == 0.2
    assert request.envelope.provider == "bedrock" and request.envelope.model == SONNET_ID
    assert request.messages[1].blocks == (
        Reasoning("Look at a.py first.", "reasoningText"), ToolCall("tooluse_1", "read_file", '{"path":"a.py"}'))
    assert request.messages[2].blocks == (ToolResult("tooluse_1", (Text("assert add(1, 1) == 3\n"),), False),)
    assert request.cache_breakpoints == (
        CacheBreakpoint("tools", 0), CacheBreakpoint("system", 0), CacheBreakpoint("messages", 0, 2))


def test_a_cache_point_closes_the_block_before_it_in_prompt_order() -> None:
    """A 1 h point first in the system list closes the last tool; one with nothing before it
    caches nothing; an image is a stub naming its format."""
    body = {"toolConfig": {"tools": [{"toolSpec": {"name": "a", "inputSchema": {"json": {}}}}]},
            "system": [{"cachePoint": {"type": "default", "ttl": "1h"}}, {"text": "s"}],
            "messages": [{"role": "user", "content": [{"cachePoint": {"type": "default"}}, {"text": "hi"},
                                                      {"image": {"format": "png", "source": {"bytes": "iVBO"}}}, CACHE_POINT]}]}
    request = parse_converse_body(body, SONNET_ID, "f:1")
    assert request.cache_breakpoints == (CacheBreakpoint("tools", 0, None, "1h"), CacheBreakpoint("system", 0), CacheBreakpoint("messages", 1, 0))
    image = request.messages[0].blocks[1]
    assert isinstance(image, Text) and image.text.startswith("[image png sha256:")
    bare = parse_converse_body({"messages": [{"role": "user", "content": [CACHE_POINT, {"text": "hi"}]}]}, SONNET_ID, "f:1")
    assert bare.cache_breakpoints == ()


def test_nova_through_converse_keeps_novas_rules(tmp_path: Path) -> None:
    """Nova Pro: a checkpoint counts from 1,000 tokens (Bedrock's table; Anthropic's would ask
    1,024), a 1 h point is written with the default TTL (Nova has no other), and a prefix past
    20K tokens is not cached."""
    # '{"system":[{"type":"text","text":"' (34) + 3,816 + '"}' (2) = 3,852 characters: 1,001 tokens.
    body = {"system": [{"text": pad("Answer briefly. ", 3816)}, {"cachePoint": {"type": "default", "ttl": "1h"}}],
            "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    request = parse_converse_body(body, "us.amazon.nova-pro-v1:0", "f:1")
    assert request.cache_breakpoints == (CacheBreakpoint("system", 0, None, "5m"),)
    # The same system prompt and a user message long enough that a point after it closes more
    # than 20K tokens: that point caches nothing, the one after the system prompt still does.
    long_turn = {"role": "user", "content": [{"text": pad("log line ", 80_000)}, CACHE_POINT]}
    second = {**body, "messages": [long_turn]}
    lines = [line(NOVA_PRO, "converse", body, {"body": {"usage": usage(5, 1001, 0)}}, T0),
             line(NOVA_PRO, "converse", second, {"body": {"usage": usage(20_800, 0, 1001)}}, T0 + 30)]
    rows = run_audit([write_jsonl(tmp_path / "nova.jsonl", lines)]).rows
    # The point after the system prompt: 1,001 model tokens, read by the second call; counted as
    # the provider counted the first prompt (1,006 reported for the model's 1,016), 991, and so
    # is the first call's write.
    assert [row.predicted_cache_read for row in rows] == [0, 991]
    assert [row.predicted_cache_write for row in rows] == [991, 0]


def test_a_managed_prompt_is_not_replayed(tmp_path: Path) -> None:
    body = {"promptVariables": {"topic": {"text": "caching"}}, "messages": [{"role": "user", "content": [{"text": "more"}]}]}
    assert not replayable(body) and not replayable({"system": [{"text": "s"}]})
    prompt = "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aprompt%2FPROMPT12345%3A1"
    (request,), _ = load_trace([write_jsonl(tmp_path / "pm.jsonl", [line(prompt, "converse", body, {"body": {"usage": usage(300, 0, 0)}}, T0)])])
    assert request.body is None and request.usage is not None and request.usage.uncached == 300


def _cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = run(argv)
    return status, err.getvalue()


@pytest.mark.parametrize(("edit", "what"), [
    (lambda b: b["messages"].append({"role": "system", "content": []}), "messages[3]: role must be user or assistant"),
    (lambda b: b["system"].__setitem__(1, {"cachePoint": {"type": "ephemeral"}}), 'system[1]: cachePoint must be {"type": "default"}'),
    (lambda b: b["system"].__setitem__(1, {"cachePoint": {"type": "default", "ttl": "2h"}}), 'system[1]: cachePoint ttl must be "5m" or "1h"'),
    (lambda b: b["messages"][0]["content"].__setitem__(0, "hello"), "messages[0].content[0]: expected an object"),
    (lambda b: b["messages"][1]["content"][1]["toolUse"].pop("toolUseId"), "messages[1].content[1].toolUse: no string toolUseId"),
    (lambda b: b["inferenceConfig"].__setitem__("temperature", 3), "inferenceConfig.temperature must be a number from 0 to 1"),
    (lambda b: b["toolConfig"].__setitem__("tools", {"toolSpec": {}}), "toolConfig.tools: expected a list"),
    (lambda b: b["messages"][0]["content"].extend([{"text": "a"}, CACHE_POINT, {"text": "b"}, CACHE_POINT]), "5 cachePoint blocks, at most 4 allowed"),
])
def test_a_bad_converse_body_is_one_clear_line(tmp_path: Path, edit, what: str) -> None:
    body = converse(turns=2)
    edit(body)
    path = write_jsonl(tmp_path / "bad.jsonl", [line(SONNET, "converse", body, {"body": {"usage": usage(3, 0, 0)}}, T0)])
    status, err = _cli(["audit", str(path), "--quiet"])
    assert status == 2 and "Traceback" not in err
    (message,) = err.strip().splitlines()
    assert message.startswith(f"prefixbench: error: {path}:1: ") and what in message
    with pytest.raises(UserError, match="^f:9: "):
        parse_converse_body(body, SONNET_ID, "f:9")


def test_the_anthropic_model_takes_another_providers_minimums_and_cap() -> None:
    """``anthropic:rules=bedrock`` (what the audit replays Bedrock bodies with): Nova's 1,000-token
    minimum and 20K cap; a name that is no provider is one clear error."""
    from prefixbench.simulator.models import make_cache
    from prefixbench.simulator.provider import SimulatedProvider

    body = {"system": [{"text": pad("Answer briefly. ", 3816)}, CACHE_POINT], "messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    request = parse_converse_body(body, "us.amazon.nova-pro-v1:0", "f:1")  # 1,001 tokens at the cache point
    for rules, written in (("bedrock", 1001), ("anthropic", 0)):
        provider = SimulatedProvider(cache=make_cache("anthropic", rules=rules, auto_when_unmarked=None))
        assert provider.send(request, 0).written_tokens == written
    with pytest.raises(UserError, match="rules must name a provider"):
        make_cache("anthropic", rules="bedrok")
