"""Real calls of eleven more OpenLLMetry instrumentations, read where they live: the VCR cassettes
their tests replay (github.com/traceloop/openllmetry at commit
``93429cfb9767e6b51db6cb35f6b70f758117669a``, ``packages/<package>/tests/``; vcrpy's own shape),
from a local git copy of that repository (``PREFIXBENCH_OPENLLMETRY_REPO``, default the
workplace's mirror). They are never copied into this project; the test skips without them.

Each package's cassettes are made into capture files
(:func:`~tests.realdata.mirrors.cassette_captures`) and read by ``http-capture``; byte copies of
another file are read once. LangChain's calls go to OpenAI, Anthropic, Bedrock and Cohere; the
agent frameworks' (Agno, OpenAI Agents, LlamaIndex, Traceloop's SDK) mostly to OpenAI; Groq,
Mistral, Together, Writer and Gemini are called directly, and Ollama (its own ``/api/chat`` and
``/api/generate``, on the test machine). Most open-model hosts report no cache field, Ollama
none: those calls count in the totals, not in the hit ratio or the loss. Cohere's v2 chat
answers (``usage: {billed_units, tokens, cached_tokens?}``) are read from ``tokens``, their read
``cached_tokens`` where given (LangChain's 9 Cohere calls, 4,384 - 1,408 = 2,976 tokens read; the
Cohere package's 9, none); before, the 8 answered as JSON were skipped as a usage of another
shape and the 10 streamed found no usage. Its v1
chat (``meta``), generate, embed and rerank answers have no usage read. Three of Ollama's 11
calls (0.1, 2024-05) left ``prompt_eval_count`` out: skipped and listed.

What is checked is the log's own bookkeeping, recounted here from the raw answers, call by call
(a Gemini usage without ``cachedContentTokenCount`` is a read of 0: Gemini leaves a 0 out), and
how many reads the audit predicted within 3%.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import audited_calls, cassette_captures, recorded_calls

REPO = Path(os.environ.get("PREFIXBENCH_OPENLLMETRY_REPO", "/work/.mirror/traceloop+openllmetry/repo"))
COMMIT = "93429cfb9767e6b51db6cb35f6b70f758117669a"
URL, ENV = "github.com/traceloop/openllmetry", "PREFIXBENCH_OPENLLMETRY_REPO"

#: package: (files read, copies, calls, prompt tokens, reads, output, calls with no cache field, within 3%)
PACKAGES = {
    "opentelemetry-instrumentation-langchain": (46, 68, 35, 6_622, 4_384, 2_820, 13, 12),
    "opentelemetry-instrumentation-groq": (3, 6, 13, 234, 0, 745, 13, 0),
    "opentelemetry-instrumentation-mistralai": (18, 1, 18, 234, 10, 896, 17, 0),
    "opentelemetry-instrumentation-agno": (10, 0, 16, 2_674, 0, 1_170, 0, 16),
    "opentelemetry-instrumentation-openai-agents": (11, 3, 30, 7_634, 0, 2_530, 0, 30),
    "opentelemetry-instrumentation-llamaindex": (11, 4, 22, 75_179, 0, 621, 15, 7),
    "opentelemetry-instrumentation-together": (2, 4, 2, 28, 0, 547, 2, 0),
    "opentelemetry-instrumentation-google-generativeai": (2, 0, 2, 10, 0, 3_742, 0, 2),
    "opentelemetry-instrumentation-writer": (17, 59, 9, 1_213, 0, 887, 9, 0),
    "traceloop-sdk": (45, 2, 13, 300, 0, 279, 10, 3),
    "opentelemetry-instrumentation-cohere": (19, 6, 9, 7_430, 0, 792, 9, 0),
    "opentelemetry-instrumentation-ollama": (12, 21, 8, 164, 0, 581, 8, 0),
}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_openllmetry_package_recordings_count_what_each_provider_reported(package: str, tmp_path: Path) -> None:
    cassette_captures(REPO, COMMIT, URL, ENV, (f"packages/{package}/tests/",), tmp_path)
    result = run_audit([tmp_path])
    formats = Counter(f.format for f in result.files)
    copies = {Path(f.file).name for f in result.files if f.format == "copy"}
    recounted = {}
    for path in sorted(tmp_path.glob("*.jsonl")):
        if path.name not in copies:
            for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if calls := recorded_calls(json.loads(text)):
                    recounted[(path.name, n)] = calls
    rows = audited_calls(result)
    assert rows == recounted
    calls = [call for found in rows.values() for call in found]
    got = (formats["http-capture"] + formats["empty"], formats["copy"], len(calls), sum(c[0] for c in calls),
           sum(c[1] or 0 for c in calls), sum(c[2] for c in calls), sum(c[1] is None for c in calls),
           sum(f.read_within for f in result.files))
    assert got == PACKAGES[package]
    reasons = Counter(reason.split(" (")[0] for f in result.files for reason, n in f.skip_reasons for _ in range(n))
    assert reasons["usage in a shape not read"] == 0  # Cohere's v2 chat usage is read (before: 5 skipped)
    if package.endswith("ollama"):  # Ollama 0.1 (2024-05): the prompt count left out where the prompt was cached
        assert reasons["Ollama left out prompt_eval_count"] == 3
