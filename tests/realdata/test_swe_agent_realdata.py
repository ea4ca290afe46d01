"""Real SWE-agent trajectories, read where they live: the three GPT-4 runs SWE-agent keeps as its
own test data (github.com/SWE-agent/SWE-agent, ``tests/test_data/trajectories/``), from a local
git copy of that repository (``PREFIXBENCH_SWE_AGENT_REPO``, default the workplace's mirror). They
are never copied into this project; the test skips without them.

SWE-agent keeps no provider usage, so what can be checked is the run's own bookkeeping: one
request per API call its ``info.model_stats`` counted, and a predicted prompt total near the
``tokens_sent`` its tokenizer counted (ours is a heuristic meter, not GPT-4's tokenizer).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from prefixbench.workloads.audit.core import run_audit

REPO = Path(os.environ.get("PREFIXBENCH_SWE_AGENT_REPO", "/work/.mirror/SWE-agent+SWE-agent/repo"))
RUNS = {
    # file: (requests = model_stats.api_calls, tokens_sent)
    "gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/6e44b9__sweagenttestrepo-1c2844.traj": (5, 7_141),
    "gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1/swe-agent__test-repo-i1.traj": (5, 52_861),
    "gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1/pydicom__pydicom-1458.traj": (12, 122_612),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_one_request_per_api_call_and_prompts_near_tokens_sent(name: str, tmp_path: Path) -> None:
    if shutil.which("git") is None or not REPO.is_dir():
        pytest.skip(f"no git copy of SWE-agent at {REPO}")
    shown = subprocess.run(
        ["git", f"--git-dir={REPO / '.git' if (REPO / '.git').is_dir() else REPO}", "show", f"HEAD:tests/test_data/trajectories/{name}"],
        capture_output=True, check=False,
    )
    if shown.returncode != 0:
        pytest.skip(f"{name} not in {REPO}")
    path = tmp_path / Path(name).name
    path.write_bytes(shown.stdout)
    requests, tokens_sent = RUNS[name]
    assert json.loads(shown.stdout)["info"]["model_stats"]["api_calls"] == requests
    result = run_audit([path])
    assert {f.format for f in result.files} == {"swe-agent"}
    assert len(result.rows) == requests
    predicted = sum(r.predicted_cache_read + r.predicted_cache_write + r.predicted_uncached for r in result.rows)
    assert abs(predicted - tokens_sent) / tokens_sent < 0.25
