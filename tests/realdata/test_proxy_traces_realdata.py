"""Real calls a local proxy of the llm-path kind logged (github.com/wang0618/llm-path, then called
llm-trace), committed as its sample data to github.com/wang0618/llm-trace-sample-data (commit
``0ebb03df0e88d22ac4443342debbd0a75c1c28a5``, 2026-02-20 to 23), read where they live from a
local git copy (``PREFIXBENCH_LLM_TRACE_SAMPLES_REPO``, default the workplace's mirror; each test
skips without it):

* ``claude-code.jsonl``: Claude Code 2.1.49 pointed at Volcengine Ark's Anthropic-compatible
  coding endpoint (``ark-code-latest``, served as glm-4-7; its side calls asking for
  claude-haiku-4-5 served as doubao-seed-code), 50 records: 49 streamed calls and one token count;
* ``nanobot.jsonl`` and ``nanobot-cn.jsonl``: the nanobot agent on the same endpoint in the
  chat-completions shape (served as kimi-k2.5 and glm-4-7);
* ``adk-deepresearch.jsonl``: a Google ADK research agent on gemini-3-pro-preview (Gemini's own
  wire, its model only in the answer).

Each record is ``{request: <the body>, response: <the answer or {stream, sse_lines}>, error,
duration_ms, timestamp}``: no URL, method or status. Main read none of them ("not a model call
(no request body with a model)"). What is checked is each file's own usage, recounted here from
the raw answers, against the audit's totals.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at

ENV = "PREFIXBENCH_LLM_TRACE_SAMPLES_REPO"
REPO = Path(os.environ.get(ENV, "/work/.mirror/wang0618+llm-trace-sample-data/repo"))
COMMIT = "0ebb03df0e88d22ac4443342debbd0a75c1c28a5"
URL = "github.com/wang0618/llm-trace-sample-data"
#: file: (records, calls, (uncached input, cache read, output) summed from the answers,
#: {provider: calls}, reads within 3%, measured 2026-12-04).
TRACES = {
    "claude-code.jsonl": (50, 49, (634_280, 59_528, 8_014), {"zai": 28, "unknown": 21}, 14),  # 12: Z.AI entries kept forever
    "nanobot.jsonl": (25, 25, (107_010, 0, 2_594), {"moonshot": 25}, 1),
    "nanobot-cn.jsonl": (10, 10, (31_396, 0, 611), {"zai": 10}, 1),
    # Gemini: the prompt count includes the cached part; the grounding tool's prompt is input
    # beside it (6,716 on one call), thoughts are output.
    "adk-deepresearch.jsonl": (11, 11, (22_840 - 2_380 + 6_716, 2_380, 12_720), {"gemini": 11}, 10),
}


def _answer_usage(response: dict) -> dict | None:
    """The usage a record's answer carries: a Messages stream's message_start updated by its
    message_delta, or the JSON answer's usage / usageMetadata."""
    if "sse_lines" not in response:
        return response.get("usage") or response.get("usageMetadata")
    usage = None
    for line in response["sse_lines"]:
        event = json.loads(line[5:]) if line.startswith("data:") else {}
        if event.get("type") == "message_start":
            usage = dict(event["message"]["usage"])
        elif event.get("type") == "message_delta" and usage is not None:
            usage.update(event.get("usage") or {})
    return usage


def _sums(path: Path) -> tuple[int, int, tuple[int, int, int]]:
    records = calls = uncached = read = output = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        records += 1
        usage = _answer_usage(record["response"]) if not record.get("error") else None
        if not usage:
            continue  # a token count's answer ({input_tokens}, no usage) is no call
        calls += 1
        if "output_tokens" in usage:  # Messages: input excludes reads
            uncached += usage["input_tokens"]
            read += usage.get("cache_read_input_tokens") or 0
            output += usage["output_tokens"]
        elif "prompt_tokens" in usage:  # chat completions: the prompt includes cached tokens
            cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
            uncached += usage["prompt_tokens"] - cached
            read += cached
            output += usage["completion_tokens"]
        else:  # Gemini usageMetadata
            cached = usage.get("cachedContentTokenCount", 0)
            uncached += usage["promptTokenCount"] - cached + usage.get("toolUsePromptTokenCount", 0)
            read += cached
            output += usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
    return records, calls, (uncached, read, output)


@pytest.mark.parametrize("name", sorted(TRACES))
def test_proxy_trace_counts_what_its_answers_sum(name: str, tmp_path: Path) -> None:
    records, calls, sums, providers, within = TRACES[name]
    path = tmp_path / name
    path.write_bytes(file_at(REPO, COMMIT, name, URL, ENV))
    assert _sums(path) == (records, calls, sums)
    result = run_audit([path])
    assert [f.format for f in result.files] == ["http-capture"]
    t = result.totals
    assert t.requests == calls and result.files[0].skipped == records - calls
    assert (t.input, t.cache_read, t.output, (t.cache_write or 0)) == (*sums, 0)
    found: dict[str, int] = {}
    for row in result.rows:
        found[row.provider] = found.get(row.provider, 0) + 1
    assert found == providers
    assert sum(r.read_within for r in result.rows) == within


def test_claude_codes_billing_header_is_named_where_ark_keyed_on_it(tmp_path: Path) -> None:
    # Every body of claude-code.jsonl heads its system prompt with Claude Code 2.1.49's billing
    # header block, another cch on each of its 49 bodies, one cc_version suffix per conversation;
    # the GLM calls read nothing. Main named no header: 39 system-changed misses, 28 of them at the
    # cch (the other 11: side calls of another conversation, another cc_version suffix).
    path = tmp_path / "claude-code.jsonl"
    path.write_bytes(file_at(REPO, COMMIT, "claude-code.jsonl", URL, ENV))
    bodies = [json.loads(line)["request"] for line in path.read_text(encoding="utf-8").splitlines()]
    heads = [body["system"][0]["text"] for body in bodies if body.get("system")]
    assert len(heads) == 49 and all(head.startswith("x-anthropic-billing-header: cc_version=2.1.49.") for head in heads)
    assert len({head.rsplit("cch=", 1)[1] for head in heads}) == 49
    result = run_audit([path])
    changed = [row for row in result.rows if row.cause == "system-changed"]
    assert len(changed) == 39
    assert sum("Claude Code's billing header cch changed" in row.detail for row in changed) == 28
    notes = [note for note in result.notes if "billing header" in note]
    assert [note.split(" request(s)")[0].rsplit("(", 1)[1] for note in notes] == ["unknown: 20", "zai: 27"]
    assert all("CLAUDE_CODE_ATTRIBUTION_HEADER=0" in note for note in notes)
