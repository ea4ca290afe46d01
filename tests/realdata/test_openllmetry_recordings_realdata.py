"""Real Anthropic calls, read where they live: the VCR cassettes OpenLLMetry's Anthropic
instrumentation tests replay (github.com/traceloop/openllmetry,
``packages/opentelemetry-instrumentation-anthropic/tests/cassettes/`` at commit
``93429cfb9767e6b51db6cb35f6b70f758117669a``, 2026-06-28: 74 cassettes, vcrpy's own shape, most
answers gzipped), from a local git copy of that repository (``PREFIXBENCH_OPENLLMETRY_REPO``,
default the workplace's mirror). They are never copied into this project; the test skips without
them.

Each cassette is made into a capture file (:func:`~tests.realdata.mirrors.cassette_captures`)
and the folder is read by ``http-capture``. The same recording is kept under several test names
(a ``_legacy`` and two ``_with_events_`` variants): 34 files are byte copies of another, read once.
Twelve cassettes are prompt-caching tests: a long article marked with ``cache_control``, sent
twice, written by the first call and read by the second.

What is checked is the log's own bookkeeping, recounted here from the raw answers, call by call,
and how many reads the audit predicted within 3%.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import anthropic_answer_calls, cassette_captures

REPO = Path(os.environ.get("PREFIXBENCH_OPENLLMETRY_REPO", "/work/.mirror/traceloop+openllmetry/repo"))
COMMIT = "93429cfb9767e6b51db6cb35f6b70f758117669a"
FOLDER = "packages/opentelemetry-instrumentation-anthropic/tests/cassettes/"


def test_openllmetry_anthropic_recordings_count_what_anthropic_reported(tmp_path: Path) -> None:
    cassette_captures(REPO, COMMIT, "github.com/traceloop/openllmetry", "PREFIXBENCH_OPENLLMETRY_REPO", (FOLDER,), tmp_path)
    result = run_audit([tmp_path])
    formats = [f.format for f in result.files]
    assert (formats.count("http-capture"), formats.count("copy")) == (40, 34)
    copies = {Path(f.file).name for f in result.files if f.format == "copy"}
    calls = []
    for path in sorted(tmp_path.glob("*.jsonl")):
        if path.name not in copies:
            for text in path.read_text(encoding="utf-8").splitlines():
                line = json.loads(text)
                if line["response"]["status_code"] == 200:
                    calls.extend(anthropic_answer_calls(line["response"]))
    rows = result.rows
    assert len(rows) == len(calls) == 44
    got = (sum(r.reported_uncached for r in rows), sum(r.reported_cache_read or 0 for r in rows),
           sum((r.reported_cache_write or 0) + (r.reported_cache_write_1h or 0) for r in rows), sum(r.reported_output for r in rows))
    assert got == tuple(map(sum, zip(*calls))) == (9_065, 4_660, 4_660, 5_548)
    # Three Claude 3 Haiku calls through Bedrock's InvokeModel report no cache field: not a 0 read.
    assert sum(r.reported_cache_read is None for r in rows) == 3
    assert sum(f.read_within for f in result.files) == 41
