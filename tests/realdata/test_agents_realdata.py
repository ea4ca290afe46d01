"""A real Kimi CLI session read where it lives, from a local git copy of its repository (never
copied into this project; the test skips without it):

* a Kimi CLI session (wire protocol 1.4, 2026-03-17: a user asks Kimi to explore a repository;
  15 calls on Kimi's coding endpoint) that github.com/MoonshotAI/kimi-code keeps as a test
  fixture of its legacy-session migration, its message ids replaced by ``chatcmpl-fixture-NNNN``
  (``packages/migration-legacy/test/fixtures/large-100msgs/wire.jsonl``, commit
  ``842e699a643d8a60647bd824d28255c56ad61a42``), from ``PREFIXBENCH_KIMI_CODE_REPO`` (default the
  workplace's mirror).

What is checked is the log's own bookkeeping, recounted here from the raw fields (one request per
StatusUpdate with token_usage; the audit's reads, uncached input and output equal to the log's
sums), and how well its reads are predicted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from prefixbench.workloads.audit.core import run_audit

KIMI_CODE = Path(os.environ.get("PREFIXBENCH_KIMI_CODE_REPO", "/work/.mirror/MoonshotAI+kimi-code/repo"))
KIMI_CODE_COMMIT = "842e699a643d8a60647bd824d28255c56ad61a42"
KIMI_SESSION = "packages/migration-legacy/test/fixtures/large-100msgs/wire.jsonl"


def _show(repo: Path, commit: str, path: str, tmp_path: Path) -> Path:
    if shutil.which("git") is None or not repo.is_dir():
        pytest.skip(f"no git copy of github.com/MoonshotAI/kimi-code at {repo}: clone it and set PREFIXBENCH_KIMI_CODE_REPO to read {path} at {commit}")
    git_dir = repo / ".git" if (repo / ".git").is_dir() else repo
    shown = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"], capture_output=True, check=False)
    if shown.returncode != 0:
        pytest.skip(f"{commit[:12]}:{path} not in {repo}")
    out = tmp_path / "session" / Path(path).name
    out.parent.mkdir()
    out.write_bytes(shown.stdout)
    return out


def _token_usages(path: Path) -> list[dict]:
    """Every StatusUpdate's token_usage, a subagent's (inside a SubagentEvent) included."""
    found = []
    for line in path.read_text().splitlines():
        message = json.loads(line).get("message") or {}
        while message.get("type") == "SubagentEvent":
            message = message["payload"]["event"]
        if message.get("type") == "StatusUpdate" and message["payload"].get("token_usage"):
            found.append(message["payload"]["token_usage"])
    return found


def test_kimi_cli_session_counts_what_the_log_sums_and_its_reads_are_predicted(tmp_path: Path) -> None:
    path = _show(KIMI_CODE, KIMI_CODE_COMMIT, KIMI_SESSION, tmp_path)
    usages = _token_usages(path)
    assert len(usages) == 15
    result = run_audit([path])
    assert [f.format for f in result.files] == ["kimi-cli"]
    assert result.totals.requests == len(usages)
    assert result.totals.input == sum(u["input_other"] for u in usages) == 62_198  # additive: kosong took the reads out
    assert result.totals.cache_read == sum(u["input_cache_read"] for u in usages) == 496_640
    assert result.totals.cache_write == sum(u["input_cache_creation"] for u in usages) == 0
    assert result.totals.output == sum(u["output"] for u in usages) == 4_790
    assert {r.provider for r in result.rows} == {"moonshot"}
    # Kimi's coding plan reads whole 256-token blocks of the previous prompt (every read here is
    # a multiple of 256), as its rules say for kimi-for-coding: 13 of the 15 reads predicted
    # exactly (the first is a cold start of an account-warm head; one, 47 s after the previous
    # call, read only an earlier prefix: the one miss).
    assert all(u["input_cache_read"] % 256 == 0 for u in usages)
    assert sum(f.read_within for f in result.files) == 13
    assert sum(r.predicted_cache_read == r.reported_cache_read for r in result.rows) == 13
    assert [r.index for r in result.rows if r.cause not in (None, "cold-start")] == [3]
