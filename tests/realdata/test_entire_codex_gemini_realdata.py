"""Codex and Gemini CLI sessions Entire checkpointed into public repositories' checkpoint branches
(``refs/heads/entire/checkpoints/v1``, one folder ``<xx>/<id>/<n>/`` per session holding the
agent's own session file as ``full.jsonl`` and Entire's ``metadata.json`` with its token sums),
read where they live, never copied into this project; a test skips without the mirror.

- github.com/blackgirlbytes/entire-token-costs-benchmark-tests (Entire 0.7.7, 2026-06-23): a
  Codex Desktop rollout (Codex 0.142.0-alpha.6, gpt-5.5, resumed 29 times): 291 token counts of
  which 287 changed the session's total (a repeated count is one call); the audit's totals equal
  the rollout's final ``total_token_usage`` and Entire's sums (input without the cached part).
- github.com/blackgirlbytes/planetfall-seed-signalkit (Entire 0.7.3 to 0.7.7, 2026-06-08 to 22):
  62 Codex rollouts in the workplace's snapshot (Codex 0.137.0-alpha.4 to 0.140.0-alpha.19,
  gpt-5.5), 3,753 calls: totals equal the rollouts' sums in all 62, 3,304 reads within 3% (measured
  before a client-run ``tool_search_output`` was read as the next call's input, which moved the
  four pinned ones by 2); four are pinned, whose metadata Entire wrote after the session's last call.
- github.com/computermode/test-repo (Entire dev builds, 2026-03): Gemini CLI sessions on
  gemini-3-flash-preview; totals equal the messages' ``tokens`` (input without ``cached``,
  output with ``thoughts``); Entire counts ``cached`` inside its input and leaves ``thoughts`` out
  of its output. One of them Entire labels OpenCode: the file is Gemini CLI's.

Reads within 3% measured 2026-12-05: the Codex Desktop rollout 254 of 287 (the misses: 16
resumes, 43 of the provider's own), the four others 461 of 504 (459 before a client-run
``tool_search_output`` was read as the next call's input: the four hold 8 tool searches Codex
ran, and the call after one was timed as sent before the call that asked for it had answered);
Gemini 9 of 15 in five sessions (each session's first call reads nothing yet).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at


def _mirror(env: str, repo: str) -> Path:
    return Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))


#: (env var, repository, checkpoint commit, session folder): (Codex version, token counts, calls,
#: reads within 3%).
CODEX = {
    ("PREFIXBENCH_ENTIRE_TOKEN_COSTS_REPO", "blackgirlbytes/entire-token-costs-benchmark-tests",
     "8b54d1f6fa9864882a3eb58dce378b7010923501", "a7/1156299398/0"): ("0.142.0-alpha.6", 291, 287, 254),
    ("PREFIXBENCH_PLANETFALL_REPO", "blackgirlbytes/planetfall-seed-signalkit",
     "7703b64e6651ac323ea41f019d8b9dace5ce95b1", "39/648afe5b7f/1"): ("0.140.0-alpha.2", 168, 165, 152),
    ("PREFIXBENCH_PLANETFALL_REPO", "blackgirlbytes/planetfall-seed-signalkit",
     "7703b64e6651ac323ea41f019d8b9dace5ce95b1", "5b/ee34acb370/1"): ("0.140.0-alpha.19", 133, 130, 119),
    ("PREFIXBENCH_PLANETFALL_REPO", "blackgirlbytes/planetfall-seed-signalkit",
     "7703b64e6651ac323ea41f019d8b9dace5ce95b1", "07/d253ca52d8/0"): ("0.137.0-alpha.4", 117, 116, 104),
    ("PREFIXBENCH_PLANETFALL_REPO", "blackgirlbytes/planetfall-seed-signalkit",
     "7703b64e6651ac323ea41f019d8b9dace5ce95b1", "a8/d5fde0be94/0"): ("0.137.0-alpha.4", 93, 93, 86),
}

GEMINI_ENV, GEMINI_REPO, GEMINI_COMMIT = ("PREFIXBENCH_COMPUTERMODE_TEST_REPO", "computermode/test-repo",
                                          "afda803df0574a112cc9c856060a13464ee0a56f")
#: session folder: (calls, (input, cache read, cache write, output), thoughts in that output, reads within 3%).
GEMINI = {
    "14/d75ebe3a6d/0": (2, (7_035, 5_705, 0, 118), 76, 1),
    "5a/31697679ee/0": (2, (7_031, 5_737, 0, 41), 0, 1),
    "79/d52455f160/0": (4, (8_518, 17_061, 0, 422), 228, 3),
    "94/3126df1f2a/0": (2, (15_096, 0, 0, 65), 0, 1),
    "e6/b2f769a273/0": (5, (15_619, 23_737, 0, 1_275), 713, 3),
}


@pytest.mark.parametrize("where", sorted(CODEX), ids=lambda w: f"{w[1].split('/')[1][:12]}-{w[3].replace('/', '')}")
def test_entire_checkpointed_codex_rollouts_count_what_the_rollout_sums(where: tuple[str, str, str, str], tmp_path: Path) -> None:
    env, repo, commit, folder = where
    version, counts, calls, within = CODEX[where]
    mirror = _mirror(env, repo)
    path = tmp_path / "full.jsonl"
    path.write_bytes(file_at(mirror, commit, f"{folder}/full.jsonl", f"github.com/{repo}", env))
    meta = json.loads(file_at(mirror, commit, f"{folder}/metadata.json", f"github.com/{repo}", env))
    seen, changed, final, versions = 0, 0, None, set()
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        payload = entry.get("payload") or {}
        if entry.get("type") == "session_meta":
            versions.add(payload.get("cli_version"))
        info = payload.get("info") if payload.get("type") == "token_count" else None
        if info:
            seen += 1
            changed += info["total_token_usage"] != final  # a count repeating the total is no new call
            final = info["total_token_usage"]
    assert (versions, seen, changed) == ({version}, counts, calls)
    result = run_audit([path])
    assert [f.format for f in result.files] == ["codex"]
    assert {r.model for r in result.rows} == {"gpt-5.5"}
    t = result.totals
    sums = (final["input_tokens"] - final["cached_input_tokens"], final["cached_input_tokens"], 0, final["output_tokens"])
    assert (t.requests, (t.input, t.cache_read, (t.cache_write or 0), t.output)) == (calls, sums)
    used = meta["token_usage"]  # Entire counts every token count as a call, its sums are the final total's
    assert (used["api_call_count"], (used["input_tokens"], used["cache_read_tokens"], used["cache_creation_tokens"], used["output_tokens"])) == (counts, sums)
    assert result.files[0].read_within == within


@pytest.mark.parametrize("folder", sorted(GEMINI))
def test_entire_checkpointed_gemini_cli_sessions_count_what_the_session_sums(folder: str, tmp_path: Path) -> None:
    calls, sums, thoughts, within = GEMINI[folder]
    mirror, url = _mirror(GEMINI_ENV, GEMINI_REPO), f"github.com/{GEMINI_REPO}"
    path = tmp_path / "full.jsonl"
    path.write_bytes(file_at(mirror, GEMINI_COMMIT, f"{folder}/full.jsonl", url, GEMINI_ENV))
    meta = json.loads(file_at(mirror, GEMINI_COMMIT, f"{folder}/metadata.json", url, GEMINI_ENV))
    own = [m["tokens"] for m in json.loads(path.read_text())["messages"] if m.get("type") == "gemini" and m.get("tokens")]
    assert len(own) == calls
    assert (sum(k["input"] - k.get("cached", 0) for k in own), sum(k.get("cached", 0) for k in own), 0,
            sum(k["output"] + k.get("thoughts", 0) for k in own)) == sums
    assert sum(k.get("thoughts", 0) for k in own) == thoughts
    result = run_audit([path])
    assert [f.format for f in result.files] == ["gemini-cli"]
    assert {r.model for r in result.rows} == {"gemini-3-flash-preview"}
    t = result.totals
    assert (t.requests, (t.input, t.cache_read, (t.cache_write or 0), t.output)) == (calls, sums)
    used = meta["token_usage"]
    assert (used["api_call_count"], used["input_tokens"], used["cache_read_tokens"], used["output_tokens"] + thoughts) == (
        calls, sums[0] + sums[1], sums[1], sums[3])
    assert result.files[0].read_within == within


def test_the_gemini_sessions_sum_as_the_docstring_says() -> None:
    assert (sum(s[0] for s in GEMINI.values()), sum(s[3] for s in GEMINI.values())) == (15, 9)
