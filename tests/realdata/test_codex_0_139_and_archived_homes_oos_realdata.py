"""Committed Codex and Claude Code homes found in public repositories after the readers were
written, audited out of sample, read where they live (a local git copy; never copied into this
project, each test skips without it):

* github.com/Hiroya20040928/unitree-A1 (``dc337ae0f434c71aaa387ec981ef3cb7b8c36ae1``, 2026-07-05):
  a robot's committed ``.codex/``: 9 rollouts of Codex CLI 0.139.0 (``codex-tui``, 2026-06-10/11),
  gpt-5.4 and gpt-5.5 on OpenAI, three compactions and three thread rollbacks. One rollout ends in 3,772 zero
  bytes after its 133rd line (the file's length ran past what was written), another in a line
  cut short. From ``PREFIXBENCH_UNITREE_A1_REPO``.
* github.com/Felictycf/codex-cofig (``a5c3a42de2dee6d86d6f0ef65f6c3cf6ec4d8160``, 2026-03-11): a
  ``.codex/`` committed as the repository's root, its ``archived_sessions/``: 13 rollouts of Codex
  Desktop 0.107.0 and 0.108.0-alpha.12 (2026-03-05 to 10), scheduled daily runs of two skills,
  gpt-5.3-codex on OpenAI (the files of gpt-5.4 and of a ``custom`` provider hold no token count).
  From ``PREFIXBENCH_FELICTYCF_REPO``.
* github.com/chasekb/codex (``6cae70e20c02e12ed05afabcad5b090e5d7b0373``, 2026-04-08): a ``.codex/``
  committed as the repository's root, its ``sessions/``: 5 rollouts of Codex in VS Code 0.48.0-alpha.3
  (2025-10), Codex Desktop 0.108.0-alpha.12 and Codex in VS Code 0.118.0-alpha.2 (2026-04),
  gpt-5.3-codex on OpenAI; four hold token counts with no usage only. From
  ``PREFIXBENCH_CHASEKB_CODEX_REPO``.
* github.com/gitcoder27/life-os (``f488988192ba0f56110ffc14f39c0f160b16bd8b``): one rollout of Codex
  CLI 0.118.0 (2026-04-04), gpt-5.4 on OpenAI. From ``PREFIXBENCH_LIFE_OS_REPO``.
* github.com/rocxteady/Resting (``0bc2749830b3ce00cb32696a47b279fe2735a656``, 2026-04-14): a committed
  ``.codex/sessions/``: 5 rollouts of Codex CLI 0.120.0 (``codex-tui``), gpt-5.4 on OpenAI. From
  ``PREFIXBENCH_RESTING_REPO``.
* github.com/minsuk1012/VitalConnection (``8e8059d1ac4b50a70309836e4c3abd707de70eed``, 2026-04-15):
  one rollout of Codex CLI 0.118.0, gpt-5.4-mini and gpt-5.4 on OpenAI (the commit before a
  second rollout past the workplace snapshot's size limit). From ``PREFIXBENCH_VITALCONNECTION_REPO``.
* github.com/AndersKaae/dotfiles (``655a5df0a39e231b45ee29242988a58e0aa40a52``, 2026-03-22): a
  committed ``.claude/projects/``: two Claude Code 2.1.80 transcripts and the ``aside_question``
  subagent of a third (85 calls; the third's own transcript is past the workplace snapshot's size
  limit, left out), claude-opus-4-6 on Anthropic. From ``PREFIXBENCH_ANDERSKAAE_DOTFILES_REPO``.
* github.com/tatijanazamora910/silaos.ai (``059c2f1b1cf5b65f1246f0af17f37b0eb351caf1``, 2026-06-28):
  a Windows ``~/.claude`` committed as the repository (its ``projects/``): two Claude Code 2.1.181
  transcripts (a third past the workplace snapshot's size limit, left out), claude-haiku-4-5 on
  Anthropic. From ``PREFIXBENCH_SILAOS_REPO``.

What is checked: the audit's totals equal the logs' own sums, counted here from the raw lines,
and how many reads are predicted within 3%.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import claude_recount, codex_recount, mirror, read_within, tree_at

UNITREE_URL, UNITREE_ENV, UNITREE = mirror("Hiroya20040928/unitree-A1", "PREFIXBENCH_UNITREE_A1_REPO")
UNITREE_COMMIT = "dc337ae0f434c71aaa387ec981ef3cb7b8c36ae1"
#: The rollout that ends in zero bytes after its 133rd line.
ZEROED = "rollout-2026-06-10T18-05-09-019eb0c7-4503-7c00-83c2-d6e629b4d4bb.jsonl"

FELICTYCF_URL, FELICTYCF_ENV, FELICTYCF = mirror("Felictycf/codex-cofig", "PREFIXBENCH_FELICTYCF_REPO")
FELICTYCF_COMMIT = "a5c3a42de2dee6d86d6f0ef65f6c3cf6ec4d8160"

CHASEKB_URL, CHASEKB_ENV, CHASEKB = mirror("chasekb/codex", "PREFIXBENCH_CHASEKB_CODEX_REPO")
CHASEKB_COMMIT = "6cae70e20c02e12ed05afabcad5b090e5d7b0373"

LIFE_OS_URL, LIFE_OS_ENV, LIFE_OS = mirror("gitcoder27/life-os", "PREFIXBENCH_LIFE_OS_REPO")
LIFE_OS_COMMIT = "f488988192ba0f56110ffc14f39c0f160b16bd8b"

SILAOS_URL, SILAOS_ENV, SILAOS = mirror("tatijanazamora910/silaos.ai", "PREFIXBENCH_SILAOS_REPO")
SILAOS_COMMIT = "059c2f1b1cf5b65f1246f0af17f37b0eb351caf1"
SILAOS_LEFT_OUT = frozenset({"projects/C--Users-zafia--claude/6c86775a-1996-4b3c-9abd-fef9a68ac608.jsonl"})

RESTING_URL, RESTING_ENV, RESTING = mirror("rocxteady/Resting", "PREFIXBENCH_RESTING_REPO")
RESTING_COMMIT = "0bc2749830b3ce00cb32696a47b279fe2735a656"

VITAL_URL, VITAL_ENV, VITAL = mirror("minsuk1012/VitalConnection", "PREFIXBENCH_VITALCONNECTION_REPO")
VITAL_COMMIT = "8e8059d1ac4b50a70309836e4c3abd707de70eed"

ANDERS_URL, ANDERS_ENV, ANDERS = mirror("AndersKaae/dotfiles", "PREFIXBENCH_ANDERSKAAE_DOTFILES_REPO")
ANDERS_COMMIT = "655a5df0a39e231b45ee29242988a58e0aa40a52"
#: The transcript past the workplace snapshot's size limit, left out so every copy reads the same files.
ANDERS_LEFT_OUT = frozenset({".claude/projects/-home-anders/d0440ad1-ab43-4cb0-be96-5b9c1880d313.jsonl"})


def test_a_codex_0_139_cli_home_totals_its_token_counts_a_zero_filled_rollout_included(tmp_path: Path) -> None:
    paths = tree_at(UNITREE, UNITREE_COMMIT, UNITREE_URL, UNITREE_ENV, ".codex/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 9
    (zeroed,) = (p for p in paths if p.name == ZEROED)
    assert zeroed.read_bytes().endswith(b"\n" + b"\0" * 3_772)
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    # Before, the zero-filled rollout stopped the audit (`binary data, not a text log`); the
    # command left it out (exit 2): 505 calls, 482 of them within 3%.
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (520, 2_318_013, 53_647_360, 286_072)
    assert t.cache_write is None
    # The zero-filled rollout's 15 calls are gpt-5.5's, 11 of them within 3%.
    assert Counter((r.provider, r.model) for r in result.rows) == {("openai", "gpt-5.4"): 505, ("openai", "gpt-5.5"): 15}
    assert {r.model for r in result.rows if Path(r.file).name == ZEROED} == {"gpt-5.5"}
    assert read_within(result) == 493


def test_the_zero_filled_and_the_torn_rollouts_are_each_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = tree_at(UNITREE, UNITREE_COMMIT, UNITREE_URL, UNITREE_ENV, ".codex/sessions/", tmp_path, ".jsonl")
    assert main(["audit", str(tmp_path / ".codex" / "sessions"), "--quiet", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    torn = next(p for p in paths if p.name.endswith("4fcd25eb355f.jsonl"))
    zeroed = next(p for p in paths if p.name == ZEROED)
    assert err.splitlines() == [
        (f"prefixbench: warning: {zeroed}:134: the file ends in zero bytes (NUL) after its last whole line: room the file "
         "system gave the file that no write filled (the machine stopped while the agent wrote it, or the file was copied "
         "then): not read"),
        f"prefixbench: warning: {torn}:1954: the last line breaks off with no newline (the agent still writing it?): not read",
    ]
    assert json.loads(out)["totals"]["requests"] == 520


def test_codex_desktop_archived_sessions_total_their_token_counts(tmp_path: Path) -> None:
    paths = tree_at(FELICTYCF, FELICTYCF_COMMIT, FELICTYCF_URL, FELICTYCF_ENV, "archived_sessions/", tmp_path, ".jsonl")
    assert len(paths) == 13
    result = run_audit([tmp_path / "archived_sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (42, 429_402, 960_512, 58_736)
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.3-codex")}
    # 7 of the 8 off are the runs' first calls: 3,456 to 7,552 tokens cached before the log (no
    # level they share), predicted 0; the eighth read a whole prompt after 16m47s idle.
    assert read_within(result) == 34


def test_codex_in_vs_code_rollouts_total_their_token_counts_and_name_the_ones_without_usage(tmp_path: Path) -> None:
    paths = tree_at(CHASEKB, CHASEKB_COMMIT, CHASEKB_URL, CHASEKB_ENV, "sessions/", tmp_path, ".jsonl")
    assert len(paths) == 5
    result = run_audit([tmp_path / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (73, 1_390_424, 4_774_400, 44_526)
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.3-codex")}
    assert read_within(result) == 53  # 8 of the 20 off read only the 10,624-token head, in a warm session
    usage_less = {Path(f.file).name: f.notes[-1] for f in result.files if f.requests == 0 and "info null" in f.notes[-1]}
    assert sorted(note.split(" ")[0] for note in usage_less.values()) == ["12", "2", "6"]


def test_a_codex_0_118_cli_rollout_totals_its_token_counts(tmp_path: Path) -> None:
    paths = tree_at(LIFE_OS, LIFE_OS_COMMIT, LIFE_OS_URL, LIFE_OS_ENV, ".codex/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 1
    result = run_audit(paths)
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (21, 65_756, 1_142_784, 8_041)
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.4")}
    assert read_within(result) == 20  # the first call read a 4,480-token head cached before the log


def test_codex_0_120_cli_rollouts_total_their_token_counts(tmp_path: Path) -> None:
    paths = tree_at(RESTING, RESTING_COMMIT, RESTING_URL, RESTING_ENV, ".codex/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 5
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (141, 601_684, 7_775_488, 114_783)
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.4")}
    # Of the 7 off, two are lane starts that read a head cached before the log (15,744 and
    # 11,648 where the 5,504 most cold points read was predicted).
    assert read_within(result) == 134


def test_a_codex_0_118_cli_rollout_that_switches_to_a_mini_model_totals_its_token_counts(tmp_path: Path) -> None:
    paths = tree_at(VITAL, VITAL_COMMIT, VITAL_URL, VITAL_ENV, ".codex/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 1
    result = run_audit(paths)
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (45, 454_353, 3_607_808, 57_910)
    assert Counter(r.model for r in result.rows) == {"gpt-5.4-mini": 38, "gpt-5.4": 7}
    assert read_within(result) == 40


def test_claude_code_2_1_80_transcripts_and_an_aside_question_subagent_total_their_lines(tmp_path: Path) -> None:
    paths = tree_at(ANDERS, ANDERS_COMMIT, ANDERS_URL, ANDERS_ENV, ".claude/projects/", tmp_path, ".jsonl", ANDERS_LEFT_OUT)
    assert len(paths) == 3
    result = run_audit([tmp_path / ".claude" / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == claude_recount(paths) == (
        94, 1_048, 38_595, 7_961_635, 137_191)
    assert Counter(r.model for r in result.rows) == {"claude-opus-4-6": 94}
    # The one off: the aside question's first call read 6,443 tokens its parent (not in the
    # snapshot) had cached.
    assert read_within(result) == 93


def test_claude_code_2_1_181_transcripts_total_their_lines(tmp_path: Path) -> None:
    paths = tree_at(SILAOS, SILAOS_COMMIT, SILAOS_URL, SILAOS_ENV, "projects/", tmp_path, ".jsonl", SILAOS_LEFT_OUT)
    assert len(paths) == 2
    result = run_audit([tmp_path / "projects"])
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == claude_recount(paths) == (
        44, 362, 8_443, 1_834_675, 52_422)
    assert Counter(r.model for r in result.rows) == {"claude-haiku-4-5-20251001": 44}
    # The one off: a session's first call read 18,295 tokens cached before the log.
    assert read_within(result) == 43
