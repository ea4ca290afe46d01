"""Continue ``cn`` CLI sessions committed to a public repository, read where they live (a local git
copy; never copied into this project, the test skips without it):

* ``.continue/sessions/{09fc764a-6ed5-4222-8ba7-91d821752cd0,bac05a03-1393-4d8a-8933-89fd78a79d5a,
  e00926af-e2ae-429b-8fc2-2c4f66629d7f}.json`` of github.com/fabien-lessirard/dotfiles (commit
  ``f965d955f1b56882838b4744ca50c03fba039315``, 2026-03, Windows; the home also holds the
  ``.gemini/`` that tests/realdata/test_committed_homes_realdata.py reads): the three sessions of
  its ``.continue/`` whose assistant messages carry each call's usage (``cn``'s ``permissions.yaml``
  and ``input_history.json`` beside them), 175 calls of gemini-2.5-pro through Continue's Gemini
  adapter. Its other sessions hold no call's usage; one more (``97c51f39-...``) is over the
  workplace snapshot's size limit and left out. From ``PREFIXBENCH_FABIEN_DOTFILES_REPO`` (default
  the workplace's mirror).

The Gemini adapter passes ``candidatesTokenCount`` as ``completion_tokens`` and ``totalTokenCount``
as ``total_tokens``, and no cached count: the audit counts the thoughts (total over prompt and
completion) as output, and the cache as not reported.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.logs.formats import FORMATS, detect_format
from tests.realdata.mirrors import file_at

FABIEN = Path(os.environ.get("PREFIXBENCH_FABIEN_DOTFILES_REPO", "/work/.mirror/fabien-lessirard+dotfiles/repo"))
FABIEN_COMMIT = "f965d955f1b56882838b4744ca50c03fba039315"
SESSIONS = ("09fc764a-6ed5-4222-8ba7-91d821752cd0", "bac05a03-1393-4d8a-8933-89fd78a79d5a", "e00926af-e2ae-429b-8fc2-2c4f66629d7f")


def test_cn_sessions_count_what_their_calls_sum_thoughts_as_output(tmp_path: Path) -> None:
    calls = []
    for sid in SESSIONS:
        data = file_at(FABIEN, FABIEN_COMMIT, f".continue/sessions/{sid}.json", "github.com/fabien-lessirard/dotfiles",
                       "PREFIXBENCH_FABIEN_DOTFILES_REPO")
        path = tmp_path / f"{sid}.json"
        path.write_bytes(data)
        assert detect_format(path) is FORMATS["continue-cli"]
        session = json.loads(data)
        calls += [item["message"]["usage"] for item in session["history"]
                  if item["message"]["role"] == "assistant" and item["message"].get("usage")]
    assert {u["model"] for u in calls} == {"gemini-2.5-pro"} and all("prompt_tokens_details" not in u for u in calls)
    prompt = sum(u["prompt_tokens"] for u in calls)
    completion = sum(u["completion_tokens"] for u in calls)
    total = sum(u["total_tokens"] for u in calls)
    assert (len(calls), prompt, completion, total) == (175, 12_447_638, 87_325, 12_630_999)

    result = run_audit([tmp_path])
    t = result.totals
    assert t.requests == len(calls)
    # The log's own sums: the prompt uncached (no cache field), output = completion + thoughts,
    # so input + output is the calls' total_tokens (output was 87,325 before: 96,036 thoughts lost).
    assert (t.input, t.output, t.cache_read, t.cache_write) == (prompt, total - prompt, None, None) == (12_447_638, 183_361, None, None)
    assert all(not r.reported_cache_read for r in result.rows)
    notes = [n for f in result.files for n in f.notes]
    assert sum(int(n.split()[0]) for n in notes if "Gemini call(s) whose total_tokens exceeds" in n) == 98
