"""A committed Gemini CLI home not measured before (round 61, agents other than Claude Code and
Codex), read where it lives (a local git copy; never copied into this project, the test skips
without it):

* ``.gemini/tmp/`` of github.com/hoon9732/devenv_vault (commit
  ``319ce5cc55a8dce4c0273b17ee0e18e7932321a7``, 2025-10-02): 65 Gemini CLI session files (one JSON
  object each, 63 session ids, 2025-09-11 to 10-02) under three project hashes, and four
  ``logs.json``; 1,850 calls, gemini-2.5-pro (1,630), gemini-2.5-flash (197) and
  gemini-2.5-flash-lite (23), on Google. From ``PREFIXBENCH_DEVENV_VAULT_REPO``; only the
  ``chats/`` and ``logs.json`` files are written out (the home's binaries and credentials are
  never read).
* ``.gemini/tmp/`` of github.com/7567491/ren (commit ``89e42066f736d8afac9e2e6144bfc11f80f8d6ba``,
  2026-01-14): one Gemini CLI session of 2026-01-03 (16 gemini-2.5-pro calls) and its
  ``logs.json``, in a home that also holds Antigravity's folder. From ``PREFIXBENCH_REN_REPO``;
  only the ``.json`` files under ``.gemini/tmp/`` are written out.

What is checked: the audit's totals equal the files' own ``tokens`` recounted (input is
``input`` less ``cached``, output is ``output`` plus ``thoughts``), the folder audits with exit 0,
and how many reads are predicted within 3% (869 of 1,850: of gemini-2.5-pro's calls off, 283 read 0
where a read was predicted, most after seconds to minutes idle with nothing changed in the log,
and 519 read less than predicted, the read held at an earlier level while the prompt grew: the
implicit cache's best effort, measured, no rule added).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import gemini_recount, read_within, tree_at

URL = "github.com/hoon9732/devenv_vault"
ENV = "PREFIXBENCH_DEVENV_VAULT_REPO"
REPO = Path(os.environ.get(ENV, "/work/.mirror/hoon9732+devenv_vault/repo"))
COMMIT = "319ce5cc55a8dce4c0273b17ee0e18e7932321a7"


@pytest.fixture
def sessions(tmp_path: Path) -> list[Path]:
    written = tree_at(REPO, COMMIT, URL, ENV, ".gemini/tmp/", tmp_path, suffix=".json")
    assert sum(p.name == "logs.json" for p in written) == 4
    return sorted(p for p in written if p.parent.name == "chats")


def test_gemini_cli_2_5_home_totals_equal_the_files_own_counts(sessions: list[Path]) -> None:
    assert len(sessions) == 65
    calls, uncached, output, read, models = gemini_recount(sessions)
    assert (calls, uncached, read, output) == (1_850, 28_972_629, 90_491_013, 1_748_902)
    assert models == {"gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite"}
    result = run_audit(sessions)
    totals = result.totals
    assert (totals.requests, totals.input, totals.cache_read, totals.output) == (calls, uncached, read, output)
    assert totals.cache_write is None
    by_model = {m.model: m.requests for m in result.models}
    assert by_model == {"gemini-2.5-pro": 1_630, "gemini-2.5-flash": 197, "gemini-2.5-flash-lite": 23}
    assert read_within(result) == 869


def test_the_home_audits_as_a_folder(sessions: list[Path], capsys) -> None:
    home = next(p for p in sessions[0].parents if p.name == ".gemini")
    assert main(["audit", str(home), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert '"requests": 1850' in captured.out and "Traceback" not in captured.err


REN_URL = "github.com/7567491/ren"
REN_ENV = "PREFIXBENCH_REN_REPO"
REN = Path(os.environ.get(REN_ENV, "/work/.mirror/7567491+ren/repo"))
REN_COMMIT = "89e42066f736d8afac9e2e6144bfc11f80f8d6ba"


def test_a_2026_gemini_2_5_pro_session_totals_equal_its_own_counts(tmp_path: Path) -> None:
    written = tree_at(REN, REN_COMMIT, REN_URL, REN_ENV, ".gemini/tmp/", tmp_path, suffix=".json")
    sessions = [p for p in written if p.parent.name == "chats"]
    assert len(written) == 2 and len(sessions) == 1
    calls, uncached, output, read, models = gemini_recount(sessions)
    assert (calls, uncached, read, output, models) == (16, 262_344, 257_624, 11_012, {"gemini-2.5-pro"})
    result = run_audit(sessions)
    assert (result.totals.requests, result.totals.input, result.totals.cache_read, result.totals.output) == (
        calls, uncached, read, output)
    # Six reads fall to 1,735-9,129 tokens 4 to 8 s after the call before, on prompts of 14,156 to
    # 71,977 (the implicit cache's best effort): 3 of 16 within 3%.
    assert read_within(result) == 3
