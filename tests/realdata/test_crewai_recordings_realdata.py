"""Real calls of crewAI's agents and LLM wrappers, read where they live: the VCR cassettes its
tests replay (github.com/crewAIInc/crewAI at commit ``f4731f5025f861c78e3af0487cc80bf5e7c64782``,
2026-08-21, ``lib/crewai/tests/cassettes/``: 589 cassettes; vcrpy's own shape), from a local git
copy of that repository (``PREFIXBENCH_CREWAI_REPO``, default the workplace's mirror). They are
never copied into this project; the test skips without them.

The cassettes are made into capture files (:func:`~tests.realdata.mirrors.cassette_captures`)
and read by ``http-capture``: OpenAI (chat completions and Responses), Anthropic, Gemini and
Vertex AI, Azure OpenAI (its deployments named in the URL, no model in the body), Bedrock's
Converse, OpenRouter and a local Ollama (its own ``/api/chat``). 102 OpenAI calls (41
embeddings, 61 gpt-4o chat completions recorded before OpenAI reported cached tokens),
OpenRouter's 2 and Ollama's 2 report no cache field: they count in the totals, not in the hit
ratio or the loss. crewAI's own tracing posts and Vertex AI's embedding calls (``:predict``) are
no call read.

What is checked is the log's own bookkeeping, recounted here from the raw answers, call by call
(:func:`~tests.realdata.mirrors.recorded_calls`), and how many reads the audit predicted within 3%.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import audited_calls, cassette_captures, recorded_calls

REPO = Path(os.environ.get("PREFIXBENCH_CREWAI_REPO", "/work/.mirror/crewAIInc+crewAI/repo"))
COMMIT = "f4731f5025f861c78e3af0487cc80bf5e7c64782"


def _host(url: str) -> str:
    host = urlsplit(url).hostname or ""
    return "azure" if host.endswith(".openai.azure.com") else "bedrock" if host.startswith("bedrock-runtime.") else host


def test_crewai_recordings_count_what_each_provider_reported(tmp_path: Path) -> None:
    cassette_captures(REPO, COMMIT, "github.com/crewAIInc/crewAI", "PREFIXBENCH_CREWAI_REPO", ("lib/crewai/tests/cassettes/",), tmp_path)
    result = run_audit([tmp_path])
    lines = {(path.name, n): json.loads(text) for path in sorted(tmp_path.glob("*.jsonl"))
             for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)}
    recounted = {key: calls for key, line in lines.items() if (calls := recorded_calls(line))}
    rows = audited_calls(result)
    assert rows == recounted
    by_host: dict[str, list[int]] = {}
    for key, calls in rows.items():
        tally = by_host.setdefault(_host(lines[key]["request"]["url"]), [0, 0, 0, 0, 0])
        for prompt, read, output in calls:
            tally[0] += 1
            tally[1] += prompt
            tally[2] += read or 0
            tally[3] += output
            tally[4] += read is None
    # host: (calls, prompt tokens, reads, output, calls with no cache field). Before, the 31
    # Azure calls whose body names no model were skipped (1,186 calls); before Ollama's own API
    # was read, its 2 calls (1,217 calls).
    assert by_host == {"api.openai.com": [973, 861_094, 15_104, 125_047, 102],
                       "api.anthropic.com": [99, 150_777, 88_633, 10_916, 0],
                       "generativelanguage.googleapis.com": [86, 40_494, 2_114, 10_585, 0],
                       "azure": [34, 11_317, 0, 7_736, 0],
                       "bedrock": [22, 11_449, 0, 1_547, 0],
                       "openrouter.ai": [2, 76, 0, 276, 2],
                       "localhost": [2, 219, 0, 46, 2],
                       "aiplatform.googleapis.com": [1, 163, 0, 13, 0]}
    t = result.totals
    assert (t.requests, t.cache_read, t.cache_write) == (1_219, 105_851, 4_353)
    assert sum(f.read_within for f in result.files) == 1_084
