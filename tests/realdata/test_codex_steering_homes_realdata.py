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
* github.com/kv-248/TeacherEvaluation (``80ff41c13517c834e9101fc7dad58c12b4bd0441``, 2026-03-18): a
  committed ``.codex/sessions/`` of 35 rollouts, Codex 0.115.0 alphas, gpt-5.4 (the main thread's
  4 calls, 93 of its subagents') and gpt-5.4-mini (214 subagent calls) on OpenAI; 18 rollouts are over the workplace
  snapshot's size limit (left out, listed below). From ``PREFIXBENCH_TEACHER_EVAL_REPO``.
* github.com/mncuchiinhuttt/exact2026 (``b1c728ebd79846ac39a0a9f99a8067645939c70a``, 2026-05-08):
  one rollout of Codex 0.128.0-alpha.1, gpt-5.5 on OpenAI. From ``PREFIXBENCH_EXACT2026_REPO``.
* github.com/arnemohr/funke (``a446ad62df31a5d37154038e5544b1f40f8c4f8d``, 2025-12-18): a committed
  ``.codex/sessions/`` of 2 rollouts, Codex CLI 0.72.0, gpt-5.1-codex-max on OpenAI. From
  ``PREFIXBENCH_FUNKE_REPO``.

What is checked: the audit's totals equal the rollouts' own token counts, counted here from the
raw lines, how many reads are predicted within 3%, and what the calls after a user message sent
while a turn ran (steering: no ``task_started`` since the turn's last call) were predicted. The
reader takes such a message for a new user turn, which on OpenAI drops the turn's reasoning; the
steered calls here read on past it (the whole previous prompt), as ADIOCLASSMATE/dotfile's and two
of olivia215215/cabinet-governance's did, but EntityProcess/agentv's Codex 0.142.4 rollout (a turn
steered nine times) read exactly up to the previous steered call's prompt twice with its prompt
grown, as a new turn would: a counter-case, so no rule was changed (see docs/formats.md).
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

TEACHER_URL, TEACHER_ENV = "github.com/kv-248/TeacherEvaluation", "PREFIXBENCH_TEACHER_EVAL_REPO"
TEACHER = Path(os.environ.get(TEACHER_ENV, "/work/.mirror/kv-248+TeacherEvaluation/repo"))
TEACHER_COMMIT = "80ff41c13517c834e9101fc7dad58c12b4bd0441"
#: Rollouts absent from the workplace's snapshot (over its size limit), left out so that every
#: copy reads the same files.
TEACHER_LEFT_OUT = frozenset(f".codex/sessions/{name}" for name in (
    "2026/03/15/rollout-2026-03-15T18-35-28-019cf2c8-212d-7da0-a0db-31c7df70e3a5.jsonl",
    "2026/03/17/rollout-2026-03-17T21-29-52-019cfdb4-86a2-7bf0-99b9-4e2cc334198d.jsonl",
    "2026/03/17/rollout-2026-03-17T21-29-54-019cfdb4-8dbc-7422-86ca-096ee7e18d60.jsonl",
    "2026/03/17/rollout-2026-03-17T21-34-38-019cfdb8-e498-72c3-a9c1-4617f83f9fe8.jsonl",
    "2026/03/18/rollout-2026-03-18T00-26-58-019cfe56-a969-7073-ae0f-5eb7f6e0e352.jsonl",
    "2026/03/18/rollout-2026-03-18T00-27-01-019cfe56-b4a9-7b63-a693-e26b943d3994.jsonl",
    "2026/03/18/rollout-2026-03-18T00-27-04-019cfe56-c07c-7b52-bb1f-5a8c79311147.jsonl",
    "2026/03/18/rollout-2026-03-18T00-27-34-019cfe57-377c-7391-a655-1e5add7b57d2.jsonl",
    "2026/03/18/rollout-2026-03-18T00-27-38-019cfe57-44ba-7ff1-b646-29fe09b9fdc3.jsonl",
    "2026/03/18/rollout-2026-03-18T00-40-37-019cfe63-2960-7fb1-bf32-5435c9045207.jsonl",
    "2026/03/18/rollout-2026-03-18T00-40-51-019cfe63-6017-7913-9552-df68307f0994.jsonl",
    "2026/03/18/rollout-2026-03-18T00-53-14-019cfe6e-b6e4-7ec1-8cc6-9a0494efd9af.jsonl",
    "2026/03/18/rollout-2026-03-18T20-16-10-019d0297-67ae-75f3-be3c-6d21805ecafd.jsonl",
    "2026/03/18/rollout-2026-03-18T20-30-46-019d02a4-c7bd-78b0-a850-d37f4df033f9.jsonl",
    "2026/03/18/rollout-2026-03-18T20-30-57-019d02a4-f11d-7de2-9af0-29a0f7d7e242.jsonl",
    "2026/03/18/rollout-2026-03-18T20-31-08-019d02a5-1afd-77d0-b853-f0a7f30f1aac.jsonl",
    "2026/03/18/rollout-2026-03-18T20-39-44-019d02ac-fc55-71e1-8720-c240883a9e9d.jsonl",
    "2026/03/18/rollout-2026-03-18T20-39-54-019d02ad-241a-7f70-b4f6-3d62442702cd.jsonl",
))

EXACT_URL, EXACT_ENV = "github.com/mncuchiinhuttt/exact2026", "PREFIXBENCH_EXACT2026_REPO"
EXACT = Path(os.environ.get(EXACT_ENV, "/work/.mirror/mncuchiinhuttt+exact2026/repo"))
EXACT_COMMIT = "b1c728ebd79846ac39a0a9f99a8067645939c70a"

FUNKE_URL, FUNKE_ENV = "github.com/arnemohr/funke", "PREFIXBENCH_FUNKE_REPO"
FUNKE = Path(os.environ.get(FUNKE_ENV, "/work/.mirror/arnemohr+funke/repo"))
FUNKE_COMMIT = "a446ad62df31a5d37154038e5544b1f40f8c4f8d"


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
    # Of the 281 off, 187 read less than predicted with nothing changed (OpenAI's best effort);
    # three are calls after a message sent while the turn ran, each predicted to read only up to
    # the turn's first prompt and each reading the previous prompt (65,493, 26,593 and 25,054
    # tokens): 1,310 were these read as keeping the turn's reasoning.
    assert _within(result) == 1_307
    rows = {(Path(r.file).name[8:27], r.line): (r.reported_cache_read, r.predicted_cache_read) for r in result.rows}
    assert rows[("2026-02-23T23-05-25", 273)] == (66_304, 52_224)
    assert rows[("2026-02-24T01-25-28", 149)] == (26_496, 25_472)
    assert rows[("2026-02-24T10-32-26", 71)] == (25_600, 10_112)


def test_a_codex_0_104_to_0_115_home_totals_its_token_counts(tmp_path: Path) -> None:
    paths = tree_at(MORISHITA, MORISHITA_COMMIT, MORISHITA_URL, MORISHITA_ENV, ".codex/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 23
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (439, 1_299_030, 9_232_896, 148_288)
    assert Counter((r.provider, r.model) for r in result.rows) == {("openai", "gpt-5.3-codex"): 412, ("openai", "gpt-5.4"): 27}
    # A steered call (02-21T17-01-45's line 66) read only 4,736 of a previous prompt of 18,502, a
    # miss either way; the call after it (line 77) read on from the steered call's prompt
    # (18,816), predicted from the turn's first prompt (9,600): 357 with steering read as keeping
    # the reasoning.
    assert _within(result) == 356
    rows = {(Path(r.file).name[8:27], r.line): (r.reported_cache_read, r.predicted_cache_read) for r in result.rows}
    assert rows[("2026-02-21T17-01-45", 77)] == (18_816, 9_600)


def test_a_codex_0_115_home_of_gpt_5_4_mini_subagents_totals_its_token_counts(tmp_path: Path) -> None:
    paths = tree_at(TEACHER, TEACHER_COMMIT, TEACHER_URL, TEACHER_ENV, ".codex/sessions/", tmp_path, ".jsonl",
                    TEACHER_LEFT_OUT)
    assert len(paths) == 17
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (311, 1_252_086, 16_180_608, 308_373)
    assert Counter((r.provider, r.model, r.lane_kind) for r in result.rows) == {
        ("openai", "gpt-5.4-mini", "subagent"): 214, ("openai", "gpt-5.4", "subagent"): 93,
        ("openai", "gpt-5.4", "main"): 4}
    # gpt-5.4-mini's next call of a turn read the previous prompt and its whole response (59 of
    # the 75 after a response of 500 tokens or more, on its grid; 9 part of it): on a grid learned
    # from a log of Codex before 0.122.0 the response is kept (grid.keeps_output). 255 with the
    # prompt alone predicted, 39 of its 56 off reading more than that.
    assert _within(result) == 291


def test_a_codex_0_128_rollout_totals_its_token_counts(tmp_path: Path) -> None:
    paths = tree_at(EXACT, EXACT_COMMIT, EXACT_URL, EXACT_ENV, ".codex/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 1
    result = run_audit(paths)
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (79, 299_416, 4_196_992, 49_351)
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.5")}
    assert _within(result) == 68  # 6 of the 11 off are OpenAI's best effort


def test_codex_0_72_rollouts_total_their_token_counts(tmp_path: Path) -> None:
    paths = tree_at(FUNKE, FUNKE_COMMIT, FUNKE_URL, FUNKE_ENV, ".codex/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 2
    result = run_audit([tmp_path / ".codex" / "sessions"])
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount(paths) == (188, 725_743, 6_754_688, 85_491)
    assert {(r.provider, r.model) for r in result.rows} == {("openai", "gpt-5.1-codex-max")}
    assert _within(result) == 153  # 29 of the 35 off are OpenAI's best effort, none read more than predicted
