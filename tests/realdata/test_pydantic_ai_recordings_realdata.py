"""Real calls to Anthropic, OpenRouter, OpenAI and Google, read where they live: the VCR cassettes
pydantic-ai's model tests replay (github.com/pydantic/pydantic-ai at commit
``4fda38988f2939fa6ea9cdefcf120693e10ef491``, recorded 2024-11 to 2026-08), from a local git copy
of that repository (``PREFIXBENCH_PYDANTIC_AI_REPO``, default the workplace's mirror). They are
never copied into this project; the tests skip without them.

Each cassette is made into a capture file, one line a call (:func:`~tests.realdata.mirrors.cassette_captures`),
and a folder of them is read by ``http-capture``:

* Anthropic's Messages API (``tests/models/anthropic/cassettes/``,
  ``tests/models/cassettes/test_anthropic/``, ``.../test_anthropic_mid_conversation_system/``):
  claude-3-5 to claude-opus-4-8 and claude-sonnet-5, with server-side compaction, the advisor tool
  and, in 14 cassettes, a ``system`` message between the turns (the API's inline system prompt).
* OpenRouter's chat completions (``tests/models/openrouter/cassettes/``,
  ``tests/models/cassettes/test_openrouter/``): Claude, Gemini, GPT and open models, several
  with ``cache_control``; one Gemini run where OpenRouter made an explicit cached content.
* OpenAI's Responses and chat completions (``test_openai_responses/``, ``test_openai/``).
* Google's Gemini API (``tests/models/cassettes/test_google/``, ``tests/models/google/cassettes/``),
  an explicit cached content's creation among them.

What is checked is the log's own bookkeeping, recounted here from the raw answers, call by call,
and how many reads the audit predicted within 3%.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import anthropic_answer_calls, answer_events, cassette_captures

REPO = Path(os.environ.get("PREFIXBENCH_PYDANTIC_AI_REPO", "/work/.mirror/pydantic+pydantic-ai/repo"))
COMMIT = "4fda38988f2939fa6ea9cdefcf120693e10ef491"
URL, ENV = "github.com/pydantic/pydantic-ai", "PREFIXBENCH_PYDANTIC_AI_REPO"
ANTHROPIC = ("tests/models/anthropic/cassettes/", "tests/models/cassettes/test_anthropic/",
             "tests/models/cassettes/test_anthropic_mid_conversation_system/")
OPENROUTER = ("tests/models/openrouter/cassettes/", "tests/models/cassettes/test_openrouter/")
OPENAI = ("tests/models/cassettes/test_openai_responses/", "tests/models/cassettes/test_openai/")
GOOGLE = ("tests/models/cassettes/test_google/", "tests/models/google/cassettes/")


def _openai_usage(response: dict) -> dict | None:
    """The usage an OpenAI-shaped answer reports: its body's, else the stream's last."""
    found = None
    for event in answer_events(response):
        found = event.get("usage") or (event.get("response") or {}).get("usage") or found
    return found


def _rows_by_host(result, lines: dict[tuple[str, int], dict]) -> dict[str, list]:
    """The audit's rows by the host of the URL their line was sent to."""
    by_host: dict[str, list] = defaultdict(list)
    for row in result.rows:
        line = lines[(Path(row.file).name, row.line)]
        by_host[urlsplit(line["request"]["url"]).hostname].append(row)
    return by_host


def _audited(folders: tuple[str, ...], into: Path) -> tuple[object, dict[tuple[str, int], dict]]:
    cassette_captures(REPO, COMMIT, URL, ENV, folders, into)
    lines = {(path.name, n): json.loads(text) for path in into.glob("*.jsonl")
             for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)}
    return run_audit([into]), lines


def _served(lines: dict[tuple[str, int], dict], host: str) -> list[dict]:
    """The lines sent to ``host`` (or a host ending in it) that were served (HTTP 200)."""
    return [line for line in lines.values()
            if (urlsplit(line["request"]["url"]).hostname or "").endswith(host) and line["response"]["status_code"] == 200]


def test_anthropic_calls_with_inline_system_messages_are_read_and_count_what_anthropic_reported(tmp_path: Path) -> None:
    result, lines = _audited(ANTHROPIC, tmp_path)
    assert {f.format for f in result.files} == {"http-capture"}
    # Refused before: 14 cassettes (19 calls) whose bodies hold a system message between the
    # turns were left out as bad input ("role must be user or assistant, not 'system'").
    assert not [note for note in result.notes if "bad input" in note]
    rows = _rows_by_host(result, lines)["api.anthropic.com"]
    calls = [call for line in _served(lines, "api.anthropic.com") for call in anthropic_answer_calls(line["response"])]
    assert len(rows) == len(calls) == 173
    got = (sum(r.reported_uncached for r in rows), sum(r.reported_cache_read for r in rows),
           sum(r.reported_cache_write + r.reported_cache_write_1h for r in rows), sum(r.reported_output for r in rows))
    assert got == tuple(map(sum, zip(*calls))) == (2_185_316, 60_019, 57_104, 24_931)
    # 176 of the 179 requests (six of them Bedrock, OpenAI and Gemini calls of cross-provider
    # tests) predicted within 3%.
    assert result.totals.requests == 179 and sum(f.read_within for f in result.files) == 176


def test_openrouter_calls_count_what_openrouter_reported_a_gemini_content_made_for_the_call_once(tmp_path: Path) -> None:
    result, lines = _audited(OPENROUTER, tmp_path)
    served = _served(lines, "openrouter.ai")
    used = [u for u in (_openai_usage(line["response"]) for line in served) if u]
    assert len(used) == 60 and result.totals.requests == 60  # 3 answers HTTP 429, not served
    details = [u.get("prompt_tokens_details") or {} for u in used]
    t = result.totals
    # prompt_tokens holds the read and the written parts: OpenAI's subset reading.
    assert t.input + t.cache_read + t.cache_write == sum(u["prompt_tokens"] for u in used) == 50_833
    assert t.cache_read == sum(d.get("cached_tokens") or 0 for d in details) == 13_703
    assert t.output == sum(u["completion_tokens"] for u in used) == 11_156
    # One Gemini call names the same 2,161 tokens as written and read (OpenRouter made a cached
    # content for it; its cost is the read plus five minutes' storage): read once, no write. The
    # file was refused before ("cached (2161) and written (2161) tokens exceed input tokens (2168)").
    overlap = [d for u, d in zip(used, details) if (d.get("cached_tokens") or 0) + (d.get("cache_write_tokens") or 0) > u["prompt_tokens"]]
    assert [d["cache_write_tokens"] for d in overlap] == [2_161]
    assert t.cache_write == sum(d.get("cache_write_tokens") or 0 for d in details) - 2_161 == 6_303
    assert sum(f.read_within for f in result.files) == 49


def test_openai_calls_count_what_openai_reported(tmp_path: Path) -> None:
    result, lines = _audited(OPENAI, tmp_path)
    rows = _rows_by_host(result, lines)["api.openai.com"]
    used = [u for u in (_openai_usage(line["response"]) for line in _served(lines, "api.openai.com")) if u]
    assert len(rows) == len(used) == 208
    prompt = sum(u.get("input_tokens", u.get("prompt_tokens", 0)) for u in used)
    read = sum((u.get("input_tokens_details") or u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0 for u in used)
    assert sum(r.reported_uncached + r.reported_cache_read + (r.reported_cache_write or 0) for r in rows) == prompt == 316_008
    assert sum(r.reported_cache_read for r in rows) == read == 157_952
    assert sum(r.reported_output for r in rows) == sum(u.get("output_tokens", u.get("completion_tokens", 0)) for u in used) == 62_079
    assert sum(f.read_within for f in result.files) == 204  # of 221 (13 other providers' calls among them)


def test_gemini_calls_count_what_google_reported(tmp_path: Path) -> None:
    result, lines = _audited(GOOGLE, tmp_path)
    # The Gemini API's host and Vertex AI's (``aiplatform.googleapis.com``, regional or global).
    rows = [row for host, found in _rows_by_host(result, lines).items() if host.endswith("googleapis.com") for row in found]
    metas = []
    for line in _served(lines, "googleapis.com"):
        # A stream's usage grows chunk by chunk: the one with the most counts, the last on a tie.
        found = [e["usageMetadata"] for e in answer_events(line["response"]) if e.get("usageMetadata")]
        richest = max(reversed(found), key=len) if found else {}
        if "promptTokenCount" in richest:  # a cached content's creation has none
            metas.append(richest)
    assert len(rows) == len(metas) == 152
    read = sum(m.get("cachedContentTokenCount", 0) for m in metas)
    uncached = sum(m["promptTokenCount"] - m.get("cachedContentTokenCount", 0) + m.get("toolUsePromptTokenCount", 0) for m in metas)
    output = sum(m.get("candidatesTokenCount", 0) + m.get("thoughtsTokenCount", 0) for m in metas)
    assert (sum(r.reported_uncached for r in rows), sum(r.reported_cache_read for r in rows), sum(r.reported_output for r in rows)) \
        == (uncached, read, output) == (131_434, 24_997, 40_203)
    # 155 of 157 within 3% (five Anthropic and OpenAI calls of cross-provider tests among them);
    # one Model Armor block answered with no token count is skipped, not a call (before: 158).
    assert result.totals.requests == 157 and sum(f.read_within for f in result.files) == 155
