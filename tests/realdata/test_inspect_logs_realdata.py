"""Real Inspect AI evaluation logs, read where they live: the ``.eval`` zips and ``.json`` logs
Inspect's own tests read (github.com/UKGovernmentBEIS/inspect_ai at commit
``499e6152e7b8fc8cbd8ac5283536572aa6e4ab17``, 2026-08-22: 10 ``.eval`` files under ``tests/``,
13 ``.json`` logs; inspect_ai 0.3.41 to 0.3.154, OpenAI, Ollama and Azure AI models), from a local
git copy of that repository (``PREFIXBENCH_INSPECT_REPO``, default the workplace's mirror). They
are never copied into this project; the test skips without them.

What is checked is the logs' own bookkeeping, recounted here from the raw JSON, call by call
(and how many reads the audit predicted within 3%: all 16 of the calls that report a read):
each model event with a usage (not answered from Inspect's local cache) is one audited call, with
its prompt (``input_tokens``, the cached part inside for these releases' OpenAI adapter), read
(None where the usage has no cache field) and output; and the logs that hold no call's usage are
refused in one line.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import audited_calls, file_at, files_at

REPO = Path(os.environ.get("PREFIXBENCH_INSPECT_REPO", "/work/.mirror/UKGovernmentBEIS+inspect_ai/repo"))
COMMIT = "499e6152e7b8fc8cbd8ac5283536572aa6e4ab17"
URL, ENV = "github.com/UKGovernmentBEIS/inspect_ai", "PREFIXBENCH_INSPECT_REPO"


def _logs(into: Path) -> list[Path]:
    """The repository's ``.eval`` files and ``.json`` logs under tests/, written into ``into``."""
    written = []
    for name in files_at(REPO, COMMIT, URL, ENV):
        if not name.startswith("tests/") or not name.endswith((".eval", ".json")):
            continue
        data = file_at(REPO, COMMIT, name, URL, ENV)
        if name.endswith(".json") and b'"eval": {' not in data[:4096]:
            continue
        target = into / name.replace("/", "__")
        target.write_bytes(data)
        written.append(target)
    return sorted(written)


def _samples(path: Path) -> list[dict]:
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as zf:
            return [json.loads(zf.read(n)) for n in zf.namelist() if n.startswith("samples/") and n.endswith(".json")]
    return json.loads(path.read_text(encoding="utf-8")).get("samples") or []


def _model_events(events: list) -> list[dict]:
    found = []
    for e in events:
        if isinstance(e, dict) and e.get("event") == "model":
            found.append(e)
        elif isinstance(e, dict) and isinstance(e.get("events"), list):
            found.extend(_model_events(e["events"]))
    return found


def recounted(path: Path) -> list[tuple[int, int | None, int]]:
    """(prompt, read or None, output) of each call the log's samples record (releases before
    0.3.184, OpenAI-shaped adapters: ``input_tokens`` holds the read)."""
    calls = []
    for s in _samples(path):
        events = s.get("events") or (s.get("transcript") or {}).get("events") or []
        for e in _model_events(events):
            used = (e.get("output") or {}).get("usage")
            if e.get("cache") == "read" or not isinstance(used, dict):
                continue
            read = used.get("input_tokens_cache_read")
            calls.append((used["input_tokens"], read, used["output_tokens"]))
    return calls


def test_inspect_logs_count_what_each_call_reported(tmp_path: Path) -> None:
    logs = _logs(tmp_path)
    assert len(logs) == 23
    totals = [0, 0, 0, 0]  # calls, prompt, read, output
    within = 0  # reads the audit predicted within 3%
    refused = []
    for path in logs:
        calls = recounted(path)
        try:
            result = run_audit([path])
        except UserError as exc:
            assert "\n" not in str(exc)
            refused.append(path.name.rsplit("__", 1)[1])
            assert not calls
            continue
        # (the audit lists a file's rows by lane and time; the samples' order is the zip's)
        assert sorted(c for calls_of in audited_calls(result).values() for c in calls_of) == sorted(calls)
        assert result.totals.requests == len(calls)
        within += sum(f.read_within for f in result.files)
        totals[0] += len(calls)
        totals[1] += sum(c[0] for c in calls)
        totals[2] += sum(c[1] or 0 for c in calls)
        totals[3] += sum(c[2] for c in calls)
    # No sample (logged without them), samples without events. (log_message_deduplication.eval's
    # six model events, of Inspect's hardcoded test model, hold no usage: read, 0 calls.)
    assert sorted(refused) == ["2024-08-29T15-11-17+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json",
                               "2024-08-29T15-11-18+00-00_popularity_5EAmX6wjMFqea6WY7XHzZp.json",
                               "2025-05-12T20-28-13-04-00_no-samples.json", "log_tool_call_error.json"]
    assert totals == [54, 20_216, 9_088, 2_172]
    # The 16 calls that report their cache use (gpt-4o and gpt-4o-mini, inspect_ai 0.3.95 and
    # 0.3.154; the browser task's five read 1,024 to 3,840 tokens of their growing conversation):
    # each read predicted within 3%.
    assert within == 16 == sum(1 for path in logs for c in recounted(path) if c[1] is not None)


def test_a_run_kept_in_both_formats_is_counted_once(tmp_path: Path) -> None:
    """log_formats.eval and log_formats.json are one run (run id BpiPFmbVcMCRUAXv8ovCTx) in the two
    formats ``inspect log convert`` writes (their bytes differ): audited together, its one call
    is counted once, from the file read first, and the other says which file counted it."""
    pair = [path for path in _logs(tmp_path) if path.name.endswith(("__log_formats.eval", "__log_formats.json"))]
    assert len(pair) == 2 and len(recounted(pair[0])) == len(recounted(pair[1])) == 1
    result = run_audit(pair)
    assert result.totals.requests == 1
    left_out = next(f for f in result.files if f.requests == 0)
    assert any(note.startswith(f"the same run as {pair[0]} (run id BpiPFmbVcMCRUAXv8ovCTx): 1 sample(s) left out here")
               for note in left_out.notes)
