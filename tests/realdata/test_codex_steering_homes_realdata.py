"""Codex homes committed to public repositories, audited out of sample, and the calls after a
user message sent while a turn ran (steering: no ``task_started`` since the turn's last call),
read where they live (a local git copy; never copied into this project; each test skips without it):

* github.com/taturou/codex-chrome-extension (``5b186614eaead437a819c0816ef317947ced73ab``,
  2026-02-28): a committed ``.codex/sessions/`` of 89 rollouts, Codex 0.104.0 and 0.106.0,
  gpt-5.3-codex and gpt-5.1-codex-mini (subagents among them) on OpenAI. From
  ``PREFIXBENCH_TATUROU_REPO``.
* github.com/h-morishita-esol/devenv (``3450b754f747d7154136dd3238f6d8d520fc348a``, 2026-03-27):
  a committed ``.codex/sessions/`` of 23 rollouts, Codex 0.104.0 and 0.115.0, gpt-5.3-codex and
  gpt-5.4 on OpenAI. From ``PREFIXBENCH_MORISHITA_REPO``.

What is checked: the audit's totals equal the rollouts' own token counts, counted here from the
raw lines, how many reads are predicted within 3%, and what the steered calls were predicted.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import codex_recount, tree_at

TATUROU_URL, TATUROU_ENV = "github.com/taturou/codex-chrome-extension", "PREFIXBENCH_TATUROU_REPO"
TATUROU = Path(os.environ.get(TATUROU_ENV, "/work/.mirror/taturou+codex-chrome-extension/repo"))
TATUROU_COMMIT = "5b186614eaead437a819c0816ef317947ced73ab"

MORISHITA_URL, MORISHITA_ENV = "github.com/h-morishita-esol/devenv", "PREFIXBENCH_MORISHITA_REPO"
MORISHITA = Path(os.environ.get(MORISHITA_ENV, "/work/.mirror/h-morishita-esol+devenv/repo"))
MORISHITA_COMMIT = "3450b754f747d7154136dd3238f6d8d520fc348a"


def _within(result) -> int:
    return sum(f.read_within for f in result.files)


def test_a_codex_0_104_home_totals_its_token_counts(tmp_path: Path) -> None:
    paths = tree_at(TATUROU, TATUROU_COMMIT, TATUROU_URL, TATUROU_ENV, ".codex/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 89
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (1_588, 6_113_085, 61_236_864, 636_399)
    assert Counter((r.provider, r.model) for r in result.rows) == {
        ("openai", "gpt-5.3-codex"): 1_539, ("openai", "gpt-5.1-codex-mini"): 49}
    # 1,307 before a message sent while the turn ran kept the turn's reasoning (three calls: the
    # 02-23T23-05-25 rollout's line 273, 66,304 read of a previous prompt of 65,493, predicted
    # 52,224 before; 02-24T01-25-28's 149 and 02-24T10-32-26's 71). Of the 278 off, 187 read
    # less than predicted with nothing changed (OpenAI's best effort).
    assert _within(result) == 1_310
    rows = {(Path(r.file).name[8:27], r.line): (r.reported_cache_read, r.predicted_cache_read) for r in result.rows}
    assert rows[("2026-02-23T23-05-25", 273)] == (66_304, 65_536)
    assert rows[("2026-02-24T01-25-28", 149)] == (26_496, 26_496)
    assert rows[("2026-02-24T10-32-26", 71)] == (25_600, 25_472)


def test_a_codex_0_104_to_0_115_home_totals_its_token_counts(tmp_path: Path) -> None:
    paths = tree_at(MORISHITA, MORISHITA_COMMIT, MORISHITA_URL, MORISHITA_ENV, ".codex/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 23
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (439, 1_299_030, 9_232_896, 148_288)
    assert Counter((r.provider, r.model) for r in result.rows) == {("openai", "gpt-5.3-codex"): 412, ("openai", "gpt-5.4"): 27}
    # 356 before: the steered call itself (02-21T17-01-45's line 66) read only 4,736 of a
    # previous prompt of 18,502, a miss either way; the call after it read on from its prompt
    # (18,816 at line 77), which the steered call now starts a turn for instead of the turn's
    # first prompt (9,600 predicted before).
    assert _within(result) == 357
    rows = {(Path(r.file).name[8:27], r.line): (r.reported_cache_read, r.predicted_cache_read) for r in result.rows}
    assert rows[("2026-02-21T17-01-45", 77)] == (18_816, 19_328)
