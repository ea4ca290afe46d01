"""Real calls to Groq, Hugging Face's inference router, Mistral and Z.AI, read where they live:
the VCR cassettes pydantic-ai's model tests replay (github.com/pydantic/pydantic-ai at commit
``4fda38988f2939fa6ea9cdefcf120693e10ef491``: ``tests/models/cassettes/test_groq/``,
``test_huggingface/``, ``test_mistral/`` and ``test_zai/``, 42 cassettes recorded 2025-03 to
2026-08), from a local git copy of that repository (``PREFIXBENCH_PYDANTIC_AI_REPO``, default the
workplace's mirror). They are never copied into this project; the test skips without them.

Each cassette is made into a capture file (:func:`~tests.realdata.mirrors.cassette_captures`)
and the folder is read by ``http-capture``. Most of these calls carry no cache field at all:
Groq's usage (but one gpt-oss call's ``prompt_tokens_details``), two of Hugging Face's router's
ten (its Qwen answers' details are null; its DeepSeek-R1 answers put a ``cached_tokens`` of 0
beside ``prompt_tokens``, outside ``prompt_tokens_details``: a reported read of 0, before read as
not reported) and four of Mistral's nine. Those calls are *cache not reported*: their tokens
count in the totals, not in the hit ratio or the loss.

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
from tests.realdata.mirrors import answer_events, cassette_captures

REPO = Path(os.environ.get("PREFIXBENCH_PYDANTIC_AI_REPO", "/work/.mirror/pydantic+pydantic-ai/repo"))
COMMIT = "4fda38988f2939fa6ea9cdefcf120693e10ef491"
URL, ENV = "github.com/pydantic/pydantic-ai", "PREFIXBENCH_PYDANTIC_AI_REPO"
FOLDERS = tuple(f"tests/models/cassettes/test_{name}/" for name in ("groq", "huggingface", "mistral", "zai"))


def _usage(response: dict) -> dict | None:
    """The usage an answer reports: its body's, else its stream's last (Groq's stream of 2025
    held it in the last chunk's ``x_groq`` alone)."""
    found = None
    for event in answer_events(response):
        found = event.get("usage") or (event.get("response") or {}).get("usage") or (event.get("x_groq") or {}).get("usage") or found
    return found


def _recount(usage: dict) -> tuple[int, int | None, int]:
    """(prompt, read or None where no cache field, output) of a chat-completions or Responses usage
    (a top-level ``cached_tokens`` the read where the details hold none)."""
    details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
    cached = details.get("cached_tokens") if details.get("cached_tokens") is not None else usage.get("cached_tokens")
    return (usage.get("prompt_tokens", usage.get("input_tokens")), cached,
            usage.get("completion_tokens", usage.get("output_tokens")))


def test_groq_hugging_face_mistral_and_zai_calls_count_what_each_reported(tmp_path: Path) -> None:
    cassette_captures(REPO, COMMIT, URL, ENV, FOLDERS, tmp_path)
    lines = {(path.name, n): json.loads(text) for path in tmp_path.glob("*.jsonl")
             for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)}
    result = run_audit([tmp_path])
    assert {f.format for f in result.files} == {"http-capture"}
    served = defaultdict(list)
    for line in lines.values():
        usage = _usage(line["response"])
        if line["response"]["status_code"] == 200 and usage:  # 3 Groq errors; 2 streams cut by an error
            served[urlsplit(line["request"]["url"]).hostname].append(_recount(usage))
    rows = defaultdict(list)
    for row in result.rows:
        line = lines[(Path(row.file).name, row.line)]
        rows[urlsplit(line["request"]["url"]).hostname].append(row)
    got = {host: (len(found), sum(r.reported_uncached + (r.reported_cache_read or 0) for r in found),
                  sum(r.reported_cache_read or 0 for r in found), sum(r.reported_output for r in found),
                  sum(r.reported_cache_read is None for r in found)) for host, found in rows.items()}
    recounted = {host: (len(calls), sum(p for p, _, _ in calls), sum(c or 0 for _, c, _ in calls),
                        sum(o for _, _, o in calls), sum(c is None for _, c, _ in calls)) for host, calls in served.items()}
    # (calls, prompt tokens, reads, output, calls with no cache field); one o3-mini call of a
    # Mistral test went to OpenAI. Three Groq streams of 2025-09 were skipped before (no usage
    # read from their x_groq): 49 calls, not 52.
    assert got == recounted == {"api.groq.com": (22, 34_642, 256, 8_279, 21),
                                "router.huggingface.co": (10, 816, 0, 4_240, 2),
                                "api.mistral.ai": (9, 5_150, 224, 1_206, 4),
                                "api.z.ai": (10, 762, 4, 2_308, 0),
                                "api.openai.com": (1, 13, 0, 1_616, 0)}
    # The 27 calls with no cache field (35 before the router's top-level cached_tokens was read)
    # count in the tokens, not in the hit ratio or the loss.
    unreported = [r for found in rows.values() for r in found if r.reported_cache_read is None]
    assert len(unreported) == 27 and all(r.lost_tokens is None and r.detail.startswith("cache not reported") for r in unreported)
    assert any("27 request(s) whose provider reported no cache fields" in note for note in result.notes)
    reporting = [r for found in rows.values() for r in found if r.reported_cache_read is not None]
    assert result.totals.hit_ratio == 484 / sum(r.reported_uncached + r.reported_cache_read for r in reporting)
    assert result.totals.requests == 52 and sum(f.read_within for f in result.files) == 20  # of the 25 reporting (12 of 17 before)
