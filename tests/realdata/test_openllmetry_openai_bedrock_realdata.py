"""Real OpenAI and Bedrock calls, read where they live: the VCR cassettes OpenLLMetry's OpenAI and
Bedrock instrumentation tests replay (github.com/traceloop/openllmetry at commit
``93429cfb9767e6b51db6cb35f6b70f758117669a``, 2026-06-28; vcrpy's own shape), from a local git
copy of that repository (``PREFIXBENCH_OPENLLMETRY_REPO``, default the workplace's mirror). They
are never copied into this project; the tests skip without them.

Each cassette is made into a capture file (:func:`~tests.realdata.mirrors.cassette_captures`:
a binary answer, Bedrock's event stream, kept as base64; Bedrock's ``X-Amzn-Bedrock-*`` count
headers kept) and the folder is read by ``http-capture``. Many recordings are kept under several
test names: byte copies are read once.

* OpenAI (``packages/opentelemetry-instrumentation-openai/tests/``, 192 cassettes, 28 copies):
  chat completions (OpenAI's and Azure's), the legacy completions, embeddings and the Responses
  API; gpt-3.5 to gpt-5-nano. An Assistants run's usage sums the model calls the run made, none
  of them recorded: no call; a stream sent without ``include_usage`` has no usage: no call.
* Bedrock (``packages/opentelemetry-instrumentation-bedrock/tests/``, 78 cassettes, 50 copies):
  Converse, ConverseStream, InvokeModel and its stream, on Titan, Nova, Llama, Claude, Cohere and
  AI21 models, one Claude 3.5 Haiku prompt-caching test (18,131 tokens written, then read).
  Titan's, Llama's, AI21's, Cohere's and Claude 2's InvokeModel answers say their counts in the response
  headers alone; one Titan stream a guardrail blocked reports no invocation metrics: no call.

What is checked is the log's own bookkeeping, recounted here from the raw answers, call by call,
and how many reads the audit predicted within 3%.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import answer_events, bedrock_counts, cassette_captures

REPO = Path(os.environ.get("PREFIXBENCH_OPENLLMETRY_REPO", "/work/.mirror/traceloop+openllmetry/repo"))
COMMIT = "93429cfb9767e6b51db6cb35f6b70f758117669a"
URL, ENV = "github.com/traceloop/openllmetry", "PREFIXBENCH_OPENLLMETRY_REPO"
MODEL_CALLS = ("/chat/completions", "/completions", "/responses", "/embeddings")


def _read(package: str, into: Path) -> tuple[object, list[tuple[tuple[str, int], dict]]]:
    """The audit of a package's cassettes, and its lines that are not in a copy of another file."""
    cassette_captures(REPO, COMMIT, URL, ENV, (f"packages/opentelemetry-instrumentation-{package}/tests/",), into)
    result = run_audit([into])
    copies = {Path(f.file).name for f in result.files if f.format == "copy"}
    own = [((path.name, n), json.loads(text)) for path in sorted(into.glob("*.jsonl")) if path.name not in copies
           for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)]
    return result, own


def _rows(result) -> dict[tuple[str, int], object]:
    return {(Path(row.file).name, row.line): row for row in result.rows}


def _reported(row) -> tuple[int, int | None, int | None, int]:
    return row.reported_uncached, row.reported_cache_read, row.reported_cache_write, row.reported_output


def test_openllmetry_openai_recordings_count_what_openai_reported(tmp_path: Path) -> None:
    result, own = _read("openai", tmp_path)
    formats = [f.format for f in result.files]
    assert (formats.count("http-capture"), formats.count("copy")) == (164, 28)
    rows = _rows(result)
    recounted = {}
    for key, line in own:
        if line["response"]["status_code"] != 200 or not urlsplit(line["request"]["url"]).path.endswith(MODEL_CALLS):
            continue
        usage = None
        for event in answer_events(line["response"]):
            usage = event.get("usage") or (event.get("response") or {}).get("usage") or usage
        if usage:
            details = usage.get("prompt_tokens_details") or usage.get("input_tokens_details") or {}
            recounted[key] = (usage.get("prompt_tokens", usage.get("input_tokens")), details.get("cached_tokens"),
                              usage.get("completion_tokens", usage.get("output_tokens")) or 0)
    assert set(rows) == set(recounted) and len(rows) == 313
    got = {key: (r.reported_uncached + (r.reported_cache_read or 0), r.reported_cache_read, r.reported_output) for key, r in rows.items()}
    assert got == recounted
    t = result.totals
    assert (t.input + t.cache_read, t.cache_read, t.output) == (38_927, 13_312, 20_509)
    # 92 calls report no cache field: 36 legacy completions (davinci-002), 28 chat completions
    # recorded before OpenAI's usage had ``prompt_tokens_details`` (gpt-3.5-turbo, gpt-4), 18
    # embeddings, 6 Azure and 4 local vLLM chat completions. They count in the tokens, not in the
    # hit ratio or the loss.
    unreported = [r for r in rows.values() if r.reported_cache_read is None]
    assert len(unreported) == 92 and all(r.lost_tokens is None for r in unreported)
    assert sum(f.read_within for f in result.files) == 214


def test_openllmetry_bedrock_recordings_count_what_bedrock_reported(tmp_path: Path) -> None:
    result, own = _read("bedrock", tmp_path)
    formats = [f.format for f in result.files]
    assert (formats.count("http-capture"), formats.count("copy")) == (28, 50)
    rows = _rows(result)
    recounted = {key: counts for key, line in own if (counts := bedrock_counts(line["response"]))}
    # Before, 9 InvokeModel answers whose counts are in the headers alone were skipped (19 calls),
    # and reading the recordings stopped at the first binary answer (not UTF-8).
    assert set(rows) == set(recounted) and len(rows) == 28
    zero = lambda counts: tuple(value or 0 for value in counts)
    assert {key: zero(_reported(r)) for key, r in rows.items()} == {key: zero(c) for key, c in recounted.items()}
    t = result.totals
    assert (t.input, t.cache_read, t.cache_write, t.output) == (1_001, 18_131, 18_131, 1_576)
    # Claude 3 Sonnet's InvokeModel answers say no cache count (no header, no usage field).
    assert sum(r.reported_cache_read is None for r in rows.values()) == 2
    assert sum(f.read_within for f in result.files) == 25
