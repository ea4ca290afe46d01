"""Fuzz ``prefixbench replay`` (chat-completions): generated bodies and mutated logs end in
exit 0 or one clean line with exit 2, within the bound; never a traceback or a hang."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import Tally, edited, weighted, fuzz_settings, json_values, mutated, optional_keys, texts, to_json_line, write

ROLES = st.sampled_from(("system", "developer", "user", "user", "assistant", "assistant", "tool"))
content = (st.one_of(texts, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": texts}), max_size=2)))
tool_call = optional_keys(
    {"id": st.sampled_from(("c1", "c2")), "function": optional_keys({"name": texts}, {"arguments": texts})},
    {"type": st.just("function")},
)
message = optional_keys(
    {"role": (ROLES), "content": content},
    {
        "tool_calls": st.lists(tool_call, max_size=2),
        "tool_call_id": st.sampled_from(("c1", "c2", "c9")),
        "reasoning_content": texts,
        "reasoning": texts,
    },
)
tool = optional_keys(
    {"function": optional_keys({"name": texts}, {"description": texts, "parameters": st.just({"type": "object"})})},
    {"type": st.just("function")},
)
body = optional_keys(
    {"model": st.sampled_from(("m", "deepseek-v4-flash", "gpt-5.1", "gpt-5.5")), "messages": st.lists(message, min_size=1, max_size=5)},
    {
        "tools": st.lists(tool, max_size=2),
        "reasoning_effort": st.sampled_from(("low", "high", "max")),
        "temperature": st.floats(0, 2),
        "stop": st.one_of(texts, st.lists(texts, max_size=2)),
        "max_tokens": st.integers(1, 10**6),
        "provider": st.sampled_from(("openai", "deepseek")),
        "purpose": st.sampled_from(("conversation", "compaction")),
        "rewrites": st.lists(st.sampled_from(("prune", "checkpoint")), max_size=2),
        "prompt_cache_retention": st.sampled_from(("in_memory", "in-memory", "24h", "1h", None)),
        "prompt_cache_options": st.one_of(optional_keys({}, {"ttl": st.sampled_from(("30m", "5m", "", 30))}), texts),
    },
)

SEED = b"\n".join(
    json.dumps(line).encode()
    for line in (
        {"model": "m", "stop": [], "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]},
        {
            "model": "m",
            "reasoning_effort": "high",
            "tools": [{"type": "function", "function": {"name": "ls", "parameters": {"type": "object"}}}],
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "reasoning_content": "t", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "a b"},
            ],
        },
    )
) + b"\n"


def test_generated_and_mutated_logs_end_cleanly(importer_examples):
    tally = Tally("chat-completions", bound_s=20)
    folder = Path(tempfile.mkdtemp(prefix="fuzz-chat-"))
    path = folder / "log.jsonl"

    @fuzz_settings(importer_examples)
    @given(
        data=weighted(
            (st.lists(edited(body).map(to_json_line), min_size=1, max_size=3).map(b"\n".join), 2),
            (st.lists(json_values.map(to_json_line), min_size=1, max_size=2).map(b"\n".join), 1),
            (mutated(SEED), 1),
        ),
        fmt=st.sampled_from(("table", "json")),
    )
    def case(data: bytes, fmt: str) -> None:
        tally.check(["replay", str(write(path, data)), "--format", fmt])

    case()
    tally.report()
    assert tally.outcomes["exit 0"] + tally.outcomes["exit 2"] == importer_examples or importer_examples < 50
