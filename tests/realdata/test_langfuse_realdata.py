"""Real Langfuse traces, read where they live: the framework traces Langfuse keeps for its seeder
(github.com/langfuse/langfuse, ``packages/shared/scripts/seeder/utils/framework-traces/``; real
traces of framework integrations, downloaded from the UI as ``{"trace", "observations"}``), at
commit ``62751446149b702b419a9292ddfc2280cdf74b8c`` (2026-08-22) of a local git copy of that
repository (``PREFIXBENCH_LANGFUSE_REPO``, default the workplace's mirror).
The worker's ChatML tests keep 20 such downloads, several of the same runs
(``worker/src/__tests__/chatml/framework-traces/*.trace.json``), read the same way. They are
never copied into this project; the test skips without them.

What is checked is the log's own bookkeeping: one request per generation that carries usage, and
the audited prompt plus output equal to the sum of the generations' ``usageDetails.total``.
The worker's traces also check the tells of two readings no trace here exercises: pydantic-ai's
instrumentation scope in each generation's metadata (its Dec 2025 - Apr 2026 cache keys), and
that no generation is taken for one LiteLLM's Langfuse callback sent.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats.langfuse import from_litellm, scope_of

REPO = Path(os.environ.get("PREFIXBENCH_LANGFUSE_REPO", "/work/.mirror/langfuse+langfuse/repo"))
#: The commit read (2026-08-22): the files are read as they were then, not as the copy's HEAD has them.
COMMIT = "62751446149b702b419a9292ddfc2280cdf74b8c"
FOLDER = "packages/shared/scripts/seeder/utils/framework-traces"
#: file: (requests, sum of usageDetails.total), counted from the files.
TRACES = {
    "agno-2025-06-11.json": (4, 1991 + 888 + 183 + 777),  # sessionId on the trace: one lane
    "autogen-2025-06-06.json": (1, 44),
    "beeai-2025-08-01.json": (3, 1988 + 2359 + 1195),  # two generations carry no usage: skipped
    "google-adk-2025-08-28.json": (2, 76),
    "google-gemini-2025-08-01.json": (1, 2061),  # completion_details.reasoning lies inside output
    "koog-2025-08-26.json": (2, 340),
    "langgraph-2025-08-22.json": (2, 75 + 159),
    "llamaindex-2025-06-05.json": (1, 94),
    "microsoft-agent-2025-10-14.json": (2, 761),
    "openai-agents-2025-09-30.json": (2, 114 + 70),
    "openai-assistants-2024-05-29.json": (1, 89),
    "pydantic-ai-tools-2025-12-04.json": (4, 1524),
}


#: The traces Langfuse's worker tests its ChatML mapping on (the same downloads, more of them),
#: file: (requests, sum of the buckets), counted from the files. Each sum equals the generations'
#: usageDetails.total but Vertex AI's, whose total (2,023) is 1,173 above its buckets.
WORKER_FOLDER = "worker/src/__tests__/chatml/framework-traces"
WORKER_TRACES = {
    "agno-2025-06-11.trace.json": (4, 3839),
    "autogen-2025-06-06.trace.json": (1, 44),
    "beeai-2025-08-01.trace.json": (3, 5542),
    "claude-agent-2025-12-22.trace.json": (4, 266),
    "crewai-2025-07-11.trace.json": (1, 354),
    "csharp-agent-with-gemini-2026-03-09.trace.json": (3, 8461),
    "google-adk-2025-08-28.trace.json": (2, 76),
    "google-gemini-2025-08-01.trace.json": (1, 2061),
    "koog-2025-08-26.trace.json": (2, 340),
    "langgraph-js-2025-10-30.trace.json": (2, 444),
    "langgraph-python-2025-08-22.trace.json": (2, 234),
    "llamaindex-2025-06-05.trace.json": (1, 94),
    "microsoft-agent-2025-12-17.trace.json": (2, 399),
    "openai-agents-2025-09-30.trace.json": (2, 184),
    "pydantic-ai-2025-06-06.trace.json": (1, 127),
    "pydantic-ai-tools-2025-06-06.trace.json": (1, 127),
    "pydantic-ai-tools-2025-12-04.trace.json": (4, 1524),
    "pydantic-ai-with-gemini-2025-12-24.trace.json": (1, 199),
    "vercel-aisdk-2025-11-17.trace.json": (2, 204),
    "vertex-ai-2025-08-01.trace.json": (1, 850),
}


def _git_dir() -> Path:
    return REPO / ".git" if (REPO / ".git").is_dir() else REPO


def _show(name: str, tmp_path: Path, folder: str = FOLDER) -> Path:
    if shutil.which("git") is None or not REPO.is_dir():
        pytest.skip(f"no git copy of langfuse at {REPO}")
    shown = subprocess.run(["git", f"--git-dir={_git_dir()}", "show", f"{COMMIT}:{folder}/{name}"], capture_output=True, check=False)
    if shown.returncode != 0:
        pytest.skip(f"{COMMIT[:12]}:{folder}/{name} not in {REPO}")
    path = tmp_path / name
    path.write_bytes(shown.stdout)
    return path


@pytest.mark.parametrize("name", sorted(TRACES))
def test_one_request_per_generation_with_usage_and_totals_equal_the_traces_own(name: str, tmp_path: Path) -> None:
    path = _show(name, tmp_path)
    doc = json.loads(path.read_text())
    served = [o for o in doc["observations"] if o.get("type") == "GENERATION" and o.get("usageDetails") and o.get("level") != "ERROR"]
    requests, own = TRACES[name]
    assert len(served) == requests
    assert sum(o["usageDetails"]["total"] for o in served) == own
    result = run_audit([path])
    t = result.totals
    assert t.requests == requests
    # (a count no generation reports is None in the totals: cache not reported, not 0)
    assert sum(n or 0 for n in (t.input, t.cache_read, t.cache_write, t.output)) == own
    (summary,) = result.files
    cost = sum((o.get("costDetails") or {}).get("total", 0) for o in served)
    if cost:
        assert any(f"sum to ${cost:.4f}" in n for n in summary.notes)


def test_a_trace_without_usage_is_one_line(tmp_path: Path) -> None:
    # The Vertex AI trace's only generation carries no usageDetails: nothing to audit.
    path = _show("google-vertex-tools-langchain-2025-09-19.json", tmp_path)
    with pytest.raises(UserError, match="no generation with token usage"):
        run_audit([path])


@pytest.mark.parametrize("name", sorted(WORKER_TRACES))
def test_the_worker_traces_count_their_buckets(name: str, tmp_path: Path) -> None:
    path = _show(name, tmp_path, WORKER_FOLDER)
    doc = json.loads(path.read_text())
    served = [o for o in doc["observations"] if o.get("type") == "GENERATION" and o.get("usageDetails") and o.get("level") != "ERROR"]
    requests, buckets = WORKER_TRACES[name]
    assert len(served) == requests
    result = run_audit([path])
    t = result.totals
    assert t.requests == requests
    assert sum(n or 0 for n in (t.input, t.cache_read, t.cache_write, t.output)) == buckets
    above = sum(o["usageDetails"]["total"] for o in served) - buckets
    (summary,) = result.files
    if above:
        assert any(f"usageDetails.total is {above:,} tokens above the sum of the buckets" in n for n in summary.notes), summary.notes
    else:
        assert not any("above the sum of the buckets" in n for n in summary.notes)


@pytest.mark.parametrize("name", sorted(WORKER_TRACES))
def test_the_instrumentation_scope_and_the_litellm_tell_on_real_traces(name: str, tmp_path: Path) -> None:
    # The pydantic-ai reading (December 2025 to April 2026) keys on metadata.scope.name: every
    # generation of the pydantic-ai traces names it where scope_of looks (the metadata as the UI
    # downloads it), and no other trace's does. None of these traces is LiteLLM's callback's, and
    # none is taken for one (from_litellm).
    path = _show(name, tmp_path, WORKER_FOLDER)
    doc = json.loads(path.read_text())
    generations = [o for o in doc["observations"] if o.get("type") == "GENERATION"]
    assert generations
    scopes = {scope_of(o) == "pydantic-ai" for o in generations}
    assert scopes == {name.startswith("pydantic-ai")}
    assert not any(from_litellm(o, o.get("usageDetails") or {}) for o in generations)
