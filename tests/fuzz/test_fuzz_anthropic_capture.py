"""Fuzz ``prefixbench replay --input anthropic-capture``: generated and mutated claude-trace
lines end in exit 0 or one clean line with exit 2, within the bound."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, weighted, fuzz_settings, json_values, mutated, optional_keys, texts, to_json_line, write

marker = (st.fixed_dictionaries({"type": st.just("ephemeral")}, optional={"ttl": st.sampled_from(("5m", "1h"))}))
block = st.one_of(
    optional_keys({"type": st.just("text"), "text": texts}, {"cache_control": marker}),
    optional_keys({"type": st.just("tool_use"), "id": texts, "name": texts}, {"input": json_values}),
    optional_keys(
        {"type": st.just("tool_result"), "tool_use_id": texts},
        {"content": st.one_of(texts, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": texts}), max_size=2)), "is_error": st.booleans()},
    ),
    optional_keys({"type": st.sampled_from(("thinking", "redacted_thinking")), "thinking": texts, "data": texts}, {}),
    optional_keys({"type": st.sampled_from(("image", "document", "odd"))}, {"source": json_values}),
)
message = optional_keys(
    {"role": st.sampled_from(("user", "assistant")), "content": st.one_of(texts, st.lists(block, max_size=3))}, {}
)
body = optional_keys(
    {"model": st.sampled_from(("claude-sonnet-4", "claude-haiku-4")), "messages": st.lists(message, max_size=4)},
    {
        "system": st.one_of(texts, st.lists(optional_keys({"type": st.just("text"), "text": texts}, {"cache_control": marker}), max_size=2)),
        "tools": st.lists(optional_keys({"name": texts}, {"input_schema": json_values, "cache_control": marker}), max_size=2),
        "temperature": st.floats(0, 1),
        "stop_sequences": st.lists(texts, max_size=2),
        "max_tokens": st.integers(1, 10**5),
        "thinking": st.fixed_dictionaries({"type": st.sampled_from(("enabled", "adaptive", "disabled"))}, optional={"budget_tokens": json_values}),
        "cache_control": marker,
    },
)
count = (st.integers(0, 10**6))
usage = optional_keys(
    {"input_tokens": count, "output_tokens": count},
    {"cache_read_input_tokens": count, "cache_creation_input_tokens": count, "cache_creation": st.fixed_dictionaries({"ephemeral_1h_input_tokens": st.just(0)})},
)
timestamp = (st.floats(0, 2e9))
response = optional_keys(
    {"timestamp": timestamp, "status_code": st.sampled_from((200, 200, 200, 201, 400, 500, 529)), "body": st.fixed_dictionaries({"usage": usage})},
    {"body_raw": texts},
)
record = optional_keys({"request": optional_keys({"timestamp": timestamp, "body": body}, {}), "response": response}, {})

SSE = "event: message_start\ndata: " + json.dumps({"type": "message_start", "message": {"usage": {"input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 9, "output_tokens": 1}}}) + "\n\nevent: message_delta\ndata: " + json.dumps({"type": "message_delta", "usage": {"output_tokens": 7}}) + "\n\n"
SEED = b"\n".join(
    json.dumps(line).encode()
    for line in (
        {
            "request": {"timestamp": 1748554704.2, "body": {"model": "claude-sonnet-4", "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}], "tools": [{"name": "ls", "input_schema": {"type": "object"}}], "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral", "ttl": "1h"}}]}]}},
            "response": {"timestamp": 1748554705.0, "status_code": 200, "body_raw": SSE},
        },
        {
            "request": {"timestamp": 1748554706.0, "body": {"model": "claude-sonnet-4", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {"a": 1}}]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}]}},
            "response": {"timestamp": 1748554707.5, "status_code": 200, "body": {"usage": {"input_tokens": 5, "cache_read_input_tokens": 9, "cache_creation_input_tokens": 0, "output_tokens": 2}}},
        },
    )
) + b"\n"


def test_generated_and_mutated_captures_end_cleanly(importer_examples):
    tally = Tally("anthropic-capture", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-capture-"))
    path = folder / "capture.jsonl"

    @fuzz_settings(importer_examples)
    @given(
        data=weighted(
            (st.lists(edited(record).map(to_json_line), min_size=1, max_size=3).map(b"\n".join), 2),
            (st.lists(json_values.map(to_json_line), min_size=1, max_size=2).map(b"\n".join), 1),
            (mutated(SEED), 1),
        ),
        fmt=st.sampled_from(("table", "json")),
    )
    def case(data: bytes, fmt: str) -> None:
        tally.check(["replay", "--input", "anthropic-capture", str(write(path, data)), "--format", fmt])

    case()
    tally.report()
