"""Homes of agents other than Claude Code, Codex and Cline committed to public repositories,
audited out of sample (none was used while the readers were written), read where they live (a
local git copy; never copied into this project, each test skips without it). Only the agents'
session folders are copied out of each commit, never their credentials.

* github.com/Iqrasajid-01/Physical-AI-and-Humanoid-Robotics-Book
  (``12a696b029df198e2731bf7542ad852cfc2e5d77``, 2025-12-17): a ``.qwen/projects/`` of four
  sessions of Qwen Code 0.4.0 (Windows), ``coder-model`` through the Qwen OAuth login, one call
  each. From ``PREFIXBENCH_IQRA_QWEN_REPO``.
* github.com/polusiti/sys (``d54f576bdeb9fdc13af19831ce7c1e1dfbdf708f``, 2025-10): a ``.copilot/``
  of five legacy Copilot CLI sessions (``history-session-state/``, no token count), one a
  pretty-printed 1.2 MB of Japanese chat. From ``PREFIXBENCH_POLUSITI_REPO``.
* github.com/mzkhuzam/org_coding_tool (``1139c30649300e9d0b09acaf4d0b6c5cc82c67ce``, 2026-07): a
  Cloud Shell ``.gemini/tmp/`` of four sessions of the Gemini agent's a2a-server, each its session
  context and no model reply. From ``PREFIXBENCH_MZKHUZAM_REPO``.
* github.com/jrykner/daniel-quest-hub (``b2b6438f3779d74a86dc73589911d12ec89f6515``, 2025-08): a
  ``.qwen/tmp/`` of a ``logs.json`` only (the prompts typed). From ``PREFIXBENCH_JRYKNER_REPO``.
* github.com/AnthonyontheHub/TP-Tutor (``962180ba3fd832992793294096f0619f67289d7c``, 2026-04-25): a
  ``.gemini/tmp/`` of 15 Gemini CLI sessions (the JSONL form) in two projects, three of them past
  the snapshot's size limit (left out): gemini-3-flash-preview most calls, gemini-3.1-pro-preview,
  gemini-2.5-pro and gemini-2.5-flash-lite (models the user picked). From
  ``PREFIXBENCH_TP_TUTOR_REPO``.
* github.com/mana-nakano/cw_hc_app (``363171cf08b5d49e3dbf9388b1b0c8aad0bb0f15``, 2026-07): a Cloud
  Shell ``.gemini/tmp/`` of 13 a2a-server sessions, five of them the header line alone. From
  ``PREFIXBENCH_MANA_REPO``.
* github.com/fartboyc58-svg/ycNMAclaw (``5f8d50df7c1a74c659c31f33f1d3febf1526b20b``): a
  ``.copilot/`` of a session store of schema 2 alone (Copilot CLI before 1.0.73: no usage table). From
  ``PREFIXBENCH_YCNMACLAW_REPO``.
* github.com/Burdis28/burdis28.github.io (``52c8dc29e4518f709c284bc8fc777999324f2f74``): an
  OpenCode 1.4.0 ``opencode.db`` whose rows are all in its write-ahead log: one session, one step
  aborted before the provider answered. From ``PREFIXBENCH_BURDIS_REPO``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from msgspec.structs import replace
from prefixbench.reports.audit import nothing_to_audit
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import PROVIDERS
from prefixbench.workloads.audit.core import load_trace, run_audit
from tests.realdata.mirrors import tree_at

IQRA = Path(os.environ.get("PREFIXBENCH_IQRA_QWEN_REPO", "/work/.mirror/Iqrasajid-01+Physical-AI-and-Humanoid-Robotics-Book/repo"))
IQRA_COMMIT = "12a696b029df198e2731bf7542ad852cfc2e5d77"
IQRA_URL, IQRA_ENV = "github.com/Iqrasajid-01/Physical-AI-and-Humanoid-Robotics-Book", "PREFIXBENCH_IQRA_QWEN_REPO"

POLUSITI = Path(os.environ.get("PREFIXBENCH_POLUSITI_REPO", "/work/.mirror/polusiti+sys/repo"))
POLUSITI_COMMIT = "d54f576bdeb9fdc13af19831ce7c1e1dfbdf708f"
POLUSITI_URL, POLUSITI_ENV = "github.com/polusiti/sys", "PREFIXBENCH_POLUSITI_REPO"

MZKHUZAM = Path(os.environ.get("PREFIXBENCH_MZKHUZAM_REPO", "/work/.mirror/mzkhuzam+org_coding_tool/repo"))
MZKHUZAM_COMMIT = "1139c30649300e9d0b09acaf4d0b6c5cc82c67ce"
MZKHUZAM_URL, MZKHUZAM_ENV = "github.com/mzkhuzam/org_coding_tool", "PREFIXBENCH_MZKHUZAM_REPO"

JRYKNER = Path(os.environ.get("PREFIXBENCH_JRYKNER_REPO", "/work/.mirror/jrykner+daniel-quest-hub/repo"))
JRYKNER_COMMIT = "b2b6438f3779d74a86dc73589911d12ec89f6515"
JRYKNER_URL, JRYKNER_ENV = "github.com/jrykner/daniel-quest-hub", "PREFIXBENCH_JRYKNER_REPO"

TP_TUTOR = Path(os.environ.get("PREFIXBENCH_TP_TUTOR_REPO", "/work/.mirror/AnthonyontheHub+TP-Tutor/repo"))
TP_TUTOR_COMMIT = "962180ba3fd832992793294096f0619f67289d7c"
TP_TUTOR_URL, TP_TUTOR_ENV = "github.com/AnthonyontheHub/TP-Tutor", "PREFIXBENCH_TP_TUTOR_REPO"
#: Sessions past the size limit of the snapshot these were measured on (absent from it).
TP_TUTOR_LEFT_OUT = frozenset(f".gemini/tmp/anthonyguera/chats/session-2026-04-25T{name}.jsonl"
                              for name in ("02-57-b8ad0014", "07-08-824b16be", "09-09-14e6c915"))

MANA = Path(os.environ.get("PREFIXBENCH_MANA_REPO", "/work/.mirror/mana-nakano+cw_hc_app/repo"))
MANA_COMMIT = "363171cf08b5d49e3dbf9388b1b0c8aad0bb0f15"
MANA_URL, MANA_ENV = "github.com/mana-nakano/cw_hc_app", "PREFIXBENCH_MANA_REPO"

YCNMA = Path(os.environ.get("PREFIXBENCH_YCNMACLAW_REPO", "/work/.mirror/fartboyc58-svg+ycNMAclaw/repo"))
YCNMA_COMMIT = "5f8d50df7c1a74c659c31f33f1d3febf1526b20b"
YCNMA_URL, YCNMA_ENV = "github.com/fartboyc58-svg/ycNMAclaw", "PREFIXBENCH_YCNMACLAW_REPO"

BURDIS = Path(os.environ.get("PREFIXBENCH_BURDIS_REPO", "/work/.mirror/Burdis28+burdis28.github.io/repo"))
BURDIS_COMMIT = "52c8dc29e4518f709c284bc8fc777999324f2f74"
BURDIS_URL, BURDIS_ENV = "github.com/Burdis28/burdis28.github.io", "PREFIXBENCH_BURDIS_REPO"


def _copy(repo: Path, commit: str, url: str, env: str, prefix: str, into: Path,
          left_out: frozenset[str] = frozenset(), suffix: str = "") -> list[Path]:
    return tree_at(repo, commit, url, env, prefix, into, suffix, left_out)


def _qwen_sums(paths: list[Path]) -> tuple[int, int, int, int, int]:
    """Calls, uncached input, output, reads and thoughts of Qwen Code sessions: each ``assistant``
    record's ``usageMetadata`` (the prompt counts the reads)."""
    usages = []
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("type") == "assistant" and record.get("usageMetadata"):
                usages.append(record["usageMetadata"])
    count = lambda key: sum(u.get(key) or 0 for u in usages)  # noqa: E731
    return (len(usages), count("promptTokenCount") - count("cachedContentTokenCount"), count("candidatesTokenCount"),
            count("cachedContentTokenCount"), count("thoughtsTokenCount"))


def _gemini_jsonl_sums(paths: list[Path]) -> tuple[int, int, int, int, dict[str, int]]:
    """Calls, uncached input (with the tool-use prompt), output (with thoughts), reads and calls by
    model of Gemini CLI JSONL sessions: each ``gemini`` message with tokens, its last write (a
    message is written again as its tool calls and tokens land; a ``$set`` history holds messages
    already written)."""
    calls = uncached = output = read = 0
    models: dict[str, int] = {}
    for path in paths:
        messages: dict[str, dict] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if "$set" in record:
                for message in record["$set"].get("messages") or []:
                    messages.setdefault(message["id"], message)
            elif "id" in record and "type" in record:
                messages[record["id"]] = record
        for message in messages.values():
            tokens = message.get("tokens") or {}
            if message["type"] == "gemini" and (tokens.get("input") or tokens.get("output")):
                calls += 1
                uncached += tokens["input"] - tokens.get("cached", 0) + tokens.get("tool", 0)
                output += tokens["output"] + tokens.get("thoughts", 0)
                read += tokens.get("cached", 0)
                models[message["model"]] = models.get(message["model"], 0) + 1
    return calls, uncached, output, read, models


def test_gemini_cli_jsonl_sessions_of_four_models_total_their_tokens(tmp_path: Path) -> None:
    paths = _copy(TP_TUTOR, TP_TUTOR_COMMIT, TP_TUTOR_URL, TP_TUTOR_ENV, ".gemini/tmp/", tmp_path, TP_TUTOR_LEFT_OUT, ".jsonl")
    assert len(paths) == 12
    result = run_audit([tmp_path / ".gemini" / "tmp"])
    t = result.totals
    calls, uncached, output, read, models = _gemini_jsonl_sums(paths)
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read) == (493, 4_076_228, 295_145, 20_876_212)
    assert models == {"gemini-3-flash-preview": 416, "gemini-3.1-pro-preview": 15, "gemini-2.5-pro": 31, "gemini-2.5-flash-lite": 31}
    assert {r.model for r in result.rows} == set(models)
    # Gemini's implicit cache: gemini-3-flash-preview (April 2026) read on no 3,924-token grid here,
    # 300 to 3,500 tokens either side of the checkpoint predicted; 204 of the misses are the
    # provider's (nothing changed in the log); 8 more are sessions' first calls that read less than
    # other sessions' did: no body is logged, so they are unexplained, not the provider's.
    # (285 before 3 Flash's idle rule waited 20 minutes, not 10: a call after 13.7 idle minutes
    # read 69,559, its lane's last read.)
    assert sum(f.read_within for f in result.files) == 286
    assert sum(r.cause == "provider-best-effort" for r in result.rows) == 204
    assert sum(r.cause == "unexplained" and "no previous call in its lane" in r.detail for r in result.rows) == 8


#: TP-Tutor's gemini-3-flash-preview calls (2026-04-24/25) within 3%, per session: (in the default
#: 3,924-token steps, read to the token), each read following the last. Its reads lie on no grid
#: (33 of 393 within 200 tokens of ``k x 3,923 - 155``, about chance), yet the step fits more
#: calls, as in March: April places no date before which the step should not apply (the gemini
#: module doc, "The step holds at every date measured").
TP_TUTOR_FLASH_WITHIN = {
    "session-2026-04-24T23-16-c8b2cbd9.jsonl": (2, 2),
    "session-2026-04-24T23-49-895dfa7b.jsonl": (23, 23),
    "session-2026-04-25T05-22-9dc5818b.jsonl": (25, 22),
    "session-2026-04-25T06-41-8dddde09.jsonl": (33, 26),
    "session-2026-04-25T08-37-75aa5d22.jsonl": (18, 17),
    "session-2026-04-25T00-05-30ef86a0.jsonl": (22, 18),
    "session-2026-04-25T00-44-ab3ab5f4.jsonl": (13, 13),
    "session-2026-04-25T00-59-ee46c10a.jsonl": (20, 21),
    "session-2026-04-25T01-53-b1b4c413.jsonl": (67, 46),
    "session-2026-04-25T02-41-ab395b98.jsonl": (25, 23),
}


def test_gemini_3_flash_of_april_reads_on_no_grid_yet_fits_the_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _copy(TP_TUTOR, TP_TUTOR_COMMIT, TP_TUTOR_URL, TP_TUTOR_ENV, ".gemini/tmp/", tmp_path, TP_TUTOR_LEFT_OUT, ".jsonl")
    stepped = run_audit([tmp_path / ".gemini" / "tmp"])
    monkeypatch.setitem(PROVIDERS, "gemini", replace(PROVIDERS["gemini"], block_tokens_by_model=()))
    exact = run_audit([tmp_path / ".gemini" / "tmp"])
    within: dict[str, list[int]] = {}
    for s, e in zip(stepped.rows, exact.rows, strict=True):
        assert (s.file, s.index) == (e.file, e.index)
        if s.model == "gemini-3-flash-preview":
            counts = within.setdefault(Path(s.file).name, [0, 0])
            counts[0] += s.read_within
            counts[1] += e.read_within
    assert {name: tuple(c) for name, c in within.items()} == TP_TUTOR_FLASH_WITHIN
    assert tuple(map(sum, zip(*TP_TUTOR_FLASH_WITHIN.values()))) == (248, 211)


def test_cloud_shell_a2a_sessions_of_a_header_alone_say_so(tmp_path: Path) -> None:
    paths = _copy(MANA, MANA_COMMIT, MANA_URL, MANA_ENV, ".gemini/tmp/mana-nakano/chats/", tmp_path)
    assert len(paths) == 13
    requests, summaries = load_trace([tmp_path / ".gemini" / "tmp"])
    assert requests == []
    assert ("no model call in this Gemini CLI session: it holds its header only, no message; 12 other file(s) hold none "
            "either") in nothing_to_audit(summaries)


def test_qwen_code_0_4_sessions_total_their_usage_metadata(tmp_path: Path) -> None:
    paths = [p for p in _copy(IQRA, IQRA_COMMIT, IQRA_URL, IQRA_ENV, ".qwen/projects/", tmp_path) if p.suffix == ".jsonl"]
    assert len(paths) == 4
    result = run_audit([tmp_path / ".qwen" / "projects"])
    t = result.totals
    calls, uncached, output, read, thoughts = _qwen_sums(paths)
    assert thoughts == 0
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read) == (4, 34_581, 329, 11_245)
    assert {(r.provider, r.model) for r in result.rows} == {("qwen", "coder-model")}
    # Two cold starts, a read of the head 17 s after one (11,245 logged, 11,083 predicted) and a
    # read of 0 two minutes later on the same head: not explained by anything logged.
    assert sum(f.read_within for f in result.files) == 3
    assert sorted(r.cause or "" for r in result.rows) == ["", "cold-start", "cold-start", "unexplained"]


def test_legacy_copilot_cli_sessions_of_japanese_chat_are_refused_as_legacy_not_as_bad_text(tmp_path: Path) -> None:
    paths = _copy(POLUSITI, POLUSITI_COMMIT, POLUSITI_URL, POLUSITI_ENV, ".copilot/history-session-state/", tmp_path)
    assert len(paths) == 5
    # The 1.2 MB one was refused as "not UTF-8 text", and the whole audit with it.
    big = max(paths, key=lambda p: p.stat().st_size)
    assert big.stat().st_size > 1 << 20
    with pytest.raises(UserError) as refused:
        run_audit([tmp_path / ".copilot"])
    assert "a legacy GitHub Copilot CLI session" in str(refused.value) and "not UTF-8" not in str(refused.value)


def test_cloud_shell_a2a_sessions_of_only_their_context_say_there_is_no_model_reply(tmp_path: Path) -> None:
    paths = _copy(MZKHUZAM, MZKHUZAM_COMMIT, MZKHUZAM_URL, MZKHUZAM_ENV, ".gemini/tmp/", tmp_path)
    assert len([p for p in paths if p.suffix == ".jsonl"]) == 4
    requests, summaries = load_trace([tmp_path / ".gemini" / "tmp"])
    assert requests == []
    assert "no model call in this Gemini CLI session: its 1 message(s) are 1 user message(s) and no model reply; " \
           "3 other file(s) hold none either" in nothing_to_audit(summaries)


def test_a_qwen_home_of_a_logs_json_only_names_qwen_code(tmp_path: Path) -> None:
    _copy(JRYKNER, JRYKNER_COMMIT, JRYKNER_URL, JRYKNER_ENV, ".qwen/tmp/", tmp_path)
    requests, summaries = load_trace([tmp_path / ".qwen"])
    assert requests == [] and "a Qwen Code logs.json: the prompts the user typed" in nothing_to_audit(summaries)


def test_an_opencode_1_4_database_of_one_aborted_step_is_refused_saying_so(tmp_path: Path) -> None:
    paths = _copy(BURDIS, BURDIS_COMMIT, BURDIS_URL, BURDIS_ENV, ".local/share/opencode/opencode.db", tmp_path)
    assert sorted(p.name for p in paths) == ["opencode.db", "opencode.db-shm", "opencode.db-wal"]
    requests, summaries = load_trace([tmp_path / ".local" / "share" / "opencode" / "opencode.db"])
    assert requests == []
    assert "step with no usage (aborted before the provider answered)" in nothing_to_audit(summaries)


def test_a_copilot_home_of_an_earlier_schemas_store_alone_says_what_the_store_is(tmp_path: Path) -> None:
    paths = _copy(YCNMA, YCNMA_COMMIT, YCNMA_URL, YCNMA_ENV, ".copilot/session-store.db", tmp_path)
    assert sorted(p.name for p in paths) == ["session-store.db"]
    with pytest.raises(UserError) as refused:
        run_audit([tmp_path / ".copilot"])
    assert "none is a log (session-store.db: a GitHub Copilot CLI session store of schema 2 without " \
           "assistant_usage_events" in str(refused.value)
