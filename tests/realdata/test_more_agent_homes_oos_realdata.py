"""Agent homes committed to public repositories, audited out of sample (not among the sources the
readers were built on), read where they live (a local git copy of each; never copied into this
project, each test skips without it):

* github.com/Tokisaki7-Dev/HAWZX-AI (commit ``f1c0568b9d08f99c15a8aee97994bf879ad7b2e5``,
  2025-12-12): a Windows home's ``.gemini/tmp/*/chats/``, 22 Gemini CLI sessions of 2025-12-01/02
  in three projects, every call gemini-2.5-pro through Google (eight of the files are a user
  message with no call). Three sessions also have a second file of the same ``sessionId``: a
  subagent's (the codebase investigator's "Your task is to do a deep investigation ..."), which
  Gemini CLI then recorded without the ``kind`` it writes since 2026-02-21
  (google-gemini/gemini-cli#19698). The same home keeps ``.copilot/session-state/<id>.jsonl``
  sessions of GitHub Copilot CLI (``copilotVersion`` "unknown"), which log no token count at all.
  From ``PREFIXBENCH_HAWZX_AI_REPO``;
* github.com/Ju-l-e-s/Myflix (``105c8971ec14ed05f8fec7d9c1cf6860c60b9da2``, 2026-02-25; removed by
  the next commit): a home's ``.gemini/tmp/{ai,infra,jules}/chats/``, 26 Gemini CLI sessions of
  2026-02-22 to 25 (two of them past the workplace snapshot's 4 MiB limit, left out), 2,319 calls:
  2,222 gemini-3-flash-preview, the rest gemini-3.1-pro-preview, gemini-3-pro-preview and
  gemini-2.5-pro, all through Google. From ``PREFIXBENCH_MYFLIX_REPO``;
* three smaller committed ``.gemini/tmp/*/chats/`` (:data:`GEMINI_HOMES`): Linfo-KR/VesselRouteVisualizer
  (3 sessions of 2025-09, gemini-2.5-pro), shaggy0397/Deimon (10 of 2025-10-08, gemini-2.5-pro) and
  agunginsani/expenses-tracker (2 sessions and 3 subagents' files of 2026-04-11/12, the layout of
  that spring: ``kind``, a subagent under ``chats/<parent session>/<id>.json``;
  gemini-3-flash-preview). Each from ``PREFIXBENCH_<NAME>_REPO`` as listed there;
* github.com/ilabelagent/valifi (``dde800b5f6b9228120b9a67e87990917404bcdb3``, 2025-11-24): a
  ``.gemini/tmp/`` whose 11 session files are Git LFS pointers (their content not in the
  snapshot). From ``PREFIXBENCH_VALIFI_REPO``;
* github.com/alhajjemohammad44-stack/93-coffee-shop (``c7dc7e42fa0283ab7544f00d695ef91d193fc58a``,
  2026-07-05): a Termux home's ``.pi/agent/sessions/``, five pi sessions of 2026-07-04/05 over
  OpenCode Zen's free models (deepseek-v4-flash-free, big-pickle, north-mini-code-free) and NVIDIA
  NIM (minimaxai/minimax-m3, one moonshotai/kimi-k2.6 call), all on OpenAI-compatible endpoints.
  From ``PREFIXBENCH_COFFEE_SHOP_REPO``;
* github.com/selimbucher/civ6.ch (``d483376e79e399625c62666f903e27178104f9ec``, 2026-06-09; removed
  by a later commit): a ``session.jsonl`` at the repository's root, one pi session of 2026-06-08
  on claude-sonnet-4-6 through Anthropic. From ``PREFIXBENCH_CIV6_REPO``;
* github.com/miniaspsali/testClaw (``4e1c077d0f2f401ad4c369b44c45bdc45bf5c746``, 2026-04-01) and
  github.com/yenkaiwang/nividaClaw (``596008712a90d2d95fb1f417c3049c3c11c7a283``, 2026-04-28): a ``.copilot/`` of Copilot
  CLI 1.0.14 and 1.0.27 whose session store is of schema 2 (no usage table). From
  ``PREFIXBENCH_TESTCLAW_REPO`` and ``PREFIXBENCH_NIVIDACLAW_REPO``;
* github.com/aallqsss/anotherworldsimulator (``2f8444bf2d6853a0005221e6baf9a2102be61ce1``,
  2026-03-08): ``.local/share/opencode/opencode.db-wal`` and ``-shm`` without their ``opencode.db``
  (over the snapshot's 4 MiB limit; the log holds 116 pages of a database of 1,889). From
  ``PREFIXBENCH_ANOTHERWORLD_REPO``.

What is checked: the Gemini sessions' totals equal their messages' own sums (recounted here from
the raw files) and how many reads the audit predicts within 3%; the others are refused in one line
that says what each file is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.reports.cli import run
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at, gemini_recount, pi_recount, tree_at

HAWZX = Path(os.environ.get("PREFIXBENCH_HAWZX_AI_REPO", "/work/.mirror/Tokisaki7-Dev+HAWZX-AI/repo"))
HAWZX_COMMIT = "f1c0568b9d08f99c15a8aee97994bf879ad7b2e5"
HAWZX_URL = "github.com/Tokisaki7-Dev/HAWZX-AI"
MYFLIX = Path(os.environ.get("PREFIXBENCH_MYFLIX_REPO", "/work/.mirror/Ju-l-e-s+Myflix/repo"))
MYFLIX_COMMIT = "105c8971ec14ed05f8fec7d9c1cf6860c60b9da2"
#: Myflix's sessions absent from the workplace's snapshot (over its size limit).
MYFLIX_LEFT_OUT = frozenset(f".gemini/tmp/jules/chats/session-{name}.json"
                            for name in ("2026-02-23T09-56-447ccf12", "2026-02-24T16-25-870b5795"))
#: Smaller committed Gemini CLI homes: env variable -> (repository, commit, session files, calls,
#: uncached input, output, read, models, calls predicted within 3%).
GEMINI_HOMES = {
    "PREFIXBENCH_VESSELROUTE_REPO": ("Linfo-KR/VesselRouteVisualizer", "5fead3405cddcbc3eedcc439d711b2c13e9e7149",
                                     3, 8, 42_157, 8_270, 20_490, {"gemini-2.5-pro"}, 4),
    "PREFIXBENCH_DEIMON_REPO": ("shaggy0397/Deimon", "3ec1fd5ac84846e80194707f5f91c4f3c63c5418",
                                10, 37, 143_763, 19_993, 150_844, {"gemini-2.5-pro"}, 21),
    "PREFIXBENCH_EXPENSES_TRACKER_REPO": ("agunginsani/expenses-tracker", "28206340d1c951cab7515575b9a1603145b47543",
                                          5, 80, 362_909, 29_975, 1_619_983, {"gemini-3-flash-preview"}, 51),
}
VALIFI = Path(os.environ.get("PREFIXBENCH_VALIFI_REPO", "/work/.mirror/ilabelagent+valifi/repo"))
VALIFI_COMMIT = "dde800b5f6b9228120b9a67e87990917404bcdb3"
COFFEE_SHOP = Path(os.environ.get("PREFIXBENCH_COFFEE_SHOP_REPO", "/work/.mirror/alhajjemohammad44-stack+93-coffee-shop/repo"))
COFFEE_SHOP_COMMIT = "c7dc7e42fa0283ab7544f00d695ef91d193fc58a"
CIV6 = Path(os.environ.get("PREFIXBENCH_CIV6_REPO", "/work/.mirror/selimbucher+civ6.ch/repo"))
CIV6_COMMIT = "d483376e79e399625c62666f903e27178104f9ec"
#: Copilot CLI homes whose session store is of schema 2: env variable -> (repository, commit).
SCHEMA_2_STORES = {
    "PREFIXBENCH_TESTCLAW_REPO": ("miniaspsali/testClaw", "4e1c077d0f2f401ad4c369b44c45bdc45bf5c746"),
    "PREFIXBENCH_NIVIDACLAW_REPO": ("yenkaiwang/nividaClaw", "596008712a90d2d95fb1f417c3049c3c11c7a283"),
}
ANOTHERWORLD = Path(os.environ.get("PREFIXBENCH_ANOTHERWORLD_REPO", "/work/.mirror/aallqsss+anotherworldsimulator/repo"))
ANOTHERWORLD_COMMIT = "2f8444bf2d6853a0005221e6baf9a2102be61ce1"


def test_gemini_cli_sessions_of_december_2025_count_what_their_messages_sum(tmp_path: Path) -> None:
    paths = tree_at(HAWZX, HAWZX_COMMIT, HAWZX_URL, "PREFIXBENCH_HAWZX_AI_REPO", ".gemini/tmp/", tmp_path, ".json")
    paths = [p for p in paths if "/chats/" in p.as_posix()]
    assert len(paths) == 22
    # Three sessions have two files each: the second a subagent's, of the parent's sessionId and
    # no ``kind`` (read as a main lane of its own; marking them subagents moves one prediction).
    ids = [json.loads(p.read_text(encoding="utf-8"))["sessionId"] for p in paths]
    assert sorted(n for n in (ids.count(i) for i in set(ids)) if n > 1) == [2, 2, 2]
    assert not any("kind" in json.loads(p.read_text(encoding="utf-8")) for p in paths)

    result = run_audit(paths)
    assert {f.format for f in result.files} == {"gemini-cli"}
    t = result.totals
    calls, uncached, output, read, models = gemini_recount(paths)
    assert models == {"gemini-2.5-pro"}
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read) == (202, 834_784, 120_765, 3_867_784)
    # Gemini 2.5 Pro's implicit cache is best effort: reads come and go by a few thousand tokens
    # from call to call (a tool loop at 03:03 reads 6,998, 5,582, 5,553, 6,938 of prompts rising
    # 8,173 to 8,626), as in brexp/infra's sessions of 2025-10/11 (101 of 283 there).
    assert sum(f.read_within for f in result.files) == 84


def test_gemini_cli_sessions_of_february_2026_mostly_on_3_flash_count_what_their_messages_sum(tmp_path: Path) -> None:
    paths = tree_at(MYFLIX, MYFLIX_COMMIT, "github.com/Ju-l-e-s/Myflix", "PREFIXBENCH_MYFLIX_REPO", ".gemini/tmp/", tmp_path,
                    ".json", MYFLIX_LEFT_OUT)
    paths = [p for p in paths if "/chats/" in p.as_posix()]
    assert len(paths) == 24
    result = run_audit(paths)
    assert {f.format for f in result.files} == {"gemini-cli"}
    t = result.totals
    calls, uncached, output, read, models = gemini_recount(paths)
    assert models == {"gemini-3-flash-preview", "gemini-3.1-pro-preview", "gemini-3-pro-preview", "gemini-2.5-pro"}
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read) == (2_319, 21_199_521, 1_118_163, 239_059_692)
    # 3 Flash's reads climb in steps of ~3,900 tokens from an offset of each session's own (186 of
    # its 2,202 reads within 200 tokens of k x 3,923 - 155), and now and then fall back tens of
    # thousands of tokens for a call (a read of 95,018 between reads of 142,550 and 146,462). 1,497
    # before 3 Flash's idle rule waited 20 minutes, not 10 (3 gained: calls after 12 to 19 idle
    # minutes that read the lane's last read; eleven more read only a ~3,500-token head, missed).
    # 1,500 while a lane's idle was counted from its previous call of any model, not the model's own
    # (2 gained: calls back on a model whose own entry had idled past its limit, read nothing).
    assert sum(f.read_within for f in result.files) == 1_502


@pytest.mark.parametrize("env", sorted(GEMINI_HOMES))
def test_smaller_gemini_cli_homes_count_what_their_messages_sum(env: str, tmp_path: Path) -> None:
    repo, commit, files, calls, uncached, output, read, models, within = GEMINI_HOMES[env]
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    paths = tree_at(mirror, commit, f"github.com/{repo}", env, ".gemini/tmp/", tmp_path, ".json")
    paths = [p for p in paths if "/chats/" in p.as_posix()]
    assert len(paths) == files
    result = run_audit(paths)
    assert {f.format for f in result.files} == {"gemini-cli"}
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, models) == gemini_recount(paths) == (calls, uncached, output, read, models)
    assert sum(f.read_within for f in result.files) == within


def test_gemini_cli_sessions_kept_in_git_lfs_are_named_as_pointers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = tree_at(VALIFI, VALIFI_COMMIT, "github.com/ilabelagent/valifi", "PREFIXBENCH_VALIFI_REPO", ".gemini/tmp/", tmp_path, ".json")
    paths = [p for p in paths if "/chats/" in p.as_posix()]
    assert len(paths) == 11 and all(p.read_bytes().startswith(b"version https://git-lfs.github.com/spec/v1\n") for p in paths)
    assert run(["audit", str(paths[0]), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {paths[0]}:1: a Git LFS pointer, not the log: its content is in the repository's LFS storage; "
        "fetch it (git lfs pull) and audit the file then")


def test_pi_sessions_over_opencode_zen_and_nvidia_count_what_their_messages_sum(tmp_path: Path) -> None:
    paths = tree_at(COFFEE_SHOP, COFFEE_SHOP_COMMIT, "github.com/alhajjemohammad44-stack/93-coffee-shop",
                    "PREFIXBENCH_COFFEE_SHOP_REPO", ".pi/agent/sessions/", tmp_path, ".jsonl")
    assert len(paths) == 5
    result = run_audit(paths)
    assert {f.format for f in result.files} == {"pi"}
    t = result.totals
    _, calls, uncached, output, read, written, served = pi_recount(paths)
    assert served == {("opencode", "deepseek-v4-flash-free"), ("opencode", "big-pickle"), ("opencode", "north-mini-code-free"),
                      ("nvidia", "minimaxai/minimax-m3"), ("nvidia", "moonshotai/kimi-k2.6")}
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read) == (233, 1_593_098, 203_809, 9_964_576)
    assert written == 0 and t.cache_write is None  # (an OpenAI-shaped usage: no write count)
    by_model = {m.model: m.requests for m in result.models}
    assert by_model == {"opencode/deepseek-v4-flash-free": 128, "minimaxai/minimax-m3": 61, "opencode/big-pickle": 36,
                        "opencode/north-mini-code-free": 7, "moonshotai/kimi-k2.6": 1}
    # DeepSeek's calls through Zen: 126 of 128 within 3%. NVIDIA NIM's minimax-m3 (no rule of its
    # own: provider unknown) reads 144 tokens on 25 of its calls, often between calls seconds apart
    # that read nearly the whole prompt (a replica without the entry, by the look of it); the audit
    # puts those at the unlogged head (system-changed), which such a next call's full read contradicts.
    assert sum(f.read_within for f in result.files) == 186


def test_a_pi_session_on_anthropic_committed_at_a_repository_root_counts_its_messages(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(file_at(CIV6, CIV6_COMMIT, "session.jsonl", "github.com/selimbucher/civ6.ch", "PREFIXBENCH_CIV6_REPO"))
    result = run_audit([path])
    assert {f.format for f in result.files} == {"pi"}
    t = result.totals
    _, calls, uncached, output, read, written, served = pi_recount([path])
    assert served == {("anthropic", "claude-sonnet-4-6")}
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == (calls, uncached, output, read, written) == (
        32, 36, 25_591, 1_510_458, 109_083)
    assert sum(f.read_within for f in result.files) == 31


def test_copilot_cli_sessions_of_late_2025_are_refused_saying_they_log_no_prompt_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = ".copilot/session-state/63df9229-7aae-4df0-b05e-3dd1a3063822.jsonl"
    path = tmp_path / "63df9229.jsonl"
    path.write_bytes(file_at(HAWZX, HAWZX_COMMIT, name, HAWZX_URL, "PREFIXBENCH_HAWZX_AI_REPO"))
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert events[0]["type"] == "session.start" and events[0]["data"]["copilotVersion"] == "unknown"
    messages = [e for e in events if e["type"] == "assistant.message"]
    assert len(messages) == 70 and not any("outputTokens" in e["data"] for e in messages)
    assert not any(e["type"] == "session.shutdown" for e in events)
    assert run(["audit", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{path}:1: a GitHub Copilot CLI session (events.jsonl): it logs no call's prompt or cache counts" in err


@pytest.mark.parametrize("env", sorted(SCHEMA_2_STORES))
def test_copilot_cli_stores_of_schema_2_are_one_line(env: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, commit = SCHEMA_2_STORES[env]
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    for name in ("session-store.db", "session-store.db-wal", "session-store.db-shm"):
        (tmp_path / name).write_bytes(file_at(mirror, commit, f".copilot/{name}", f"github.com/{repo}", env))
    path = tmp_path / "session-store.db"
    assert run(["audit", str(path), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {path}:1: a GitHub Copilot CLI session store of schema 2 without assistant_usage_events "
        "(its per-call usage table, from Copilot CLI 1.0.73): no request to audit; audit its OpenTelemetry file export "
        "instead (run copilot with COPILOT_OTEL_FILE_EXPORTER_PATH=FILE, then audit FILE: format otel)")


def test_an_opencode_write_ahead_log_without_its_database_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url, env = "github.com/aallqsss/anotherworldsimulator", "PREFIXBENCH_ANOTHERWORLD_REPO"
    path = tmp_path / "opencode.db-wal"
    path.write_bytes(file_at(ANOTHERWORLD, ANOTHERWORLD_COMMIT, ".local/share/opencode/opencode.db-wal", url, env))
    assert run(["audit", str(path), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {path}:1: an SQLite write-ahead log, not a log: its database opencode.db, which the audit "
        "reads (with this file beside it), is not in this folder")
