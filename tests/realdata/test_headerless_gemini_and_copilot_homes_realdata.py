"""Committed agent homes not measured before (round 60, agents other than Claude Code and Codex),
read where they live (a local git copy of each; never copied into this project, each test skips
without it):

* ``.gemini/tmp/ubuntu/chats/`` of github.com/DingJun1028/esggo (commit
  ``c2e18307815805a219e318004afe49e8d0ac52eb``, 2026-06-11; removed two commits later): one Gemini
  CLI session in the JSONL form that begins with a ``gemini`` record, no session header line (the
  file's first 105,647 bytes, committed three minutes before, begin the same way), 28 calls to
  gemini-3-flash-preview, each reply written twice (before and after its tool calls). From
  ``PREFIXBENCH_DINGJUN_ESGGO_REPO``.
* ``.gemini/tmp/`` of github.com/dogmaai/magi-ui (commit ``9bb46ef1846f3683a25210c19169fdd21c4b54bd``,
  2025-09-10): one Gemini CLI session (one JSON object), three gemini-2.5-pro calls, the second
  sent 3h01m after the first. From ``PREFIXBENCH_MAGI_UI_REPO``.
* ``.gemini/tmp/louisfelipecabral/chats/`` of github.com/LoouisFelipe/BarDoLoouis (commit
  ``e9f87ce228fd73b7c1f9b23360af0ffde2b1377c``, 2026-03-02 to 05): four Gemini CLI sessions (one JSON
  object each, two with a ``summary``), 27 calls to gemini-2.5-pro (25) and gemini-2.5-flash (2,
  the first call of two sessions: Gemini CLI's router). From ``PREFIXBENCH_BARDOLOOUIS_REPO``.
* ``.gemini/tmp/code-oss-for-cloud-shell/chats/`` of github.com/1919114514yasenpai-maker/focus-quest
  (commit ``c695164713accc0ad09df8e3156c3502c8286cc4``, 2026-08): 26 sessions Gemini CLI's A2A
  server wrote (``*-a2a-serv.jsonl``, session id ``a2a-server``), each a header and one ``$set`` of
  user messages only, no model reply: refused in one line. From ``PREFIXBENCH_FOCUS_QUEST_REPO``.
* ``.copilot/`` of github.com/Kaijon/little-hou-claw (commit
  ``111d83c3015527e15d9709799961800591e89575``) and github.com/jennileng/littleshrimp (commit
  ``95632ada4ad18733283d2c813ec019e8970c3381``), 2026-04: GitHub Copilot CLI 1.0.18 and 1.0.14 run
  from CI (gpt-5.4-mini, claude-haiku-4.5), a session store of schema 2 (no
  ``assistant_usage_events``) and one ``events.jsonl`` whose only usage is ``session.shutdown``'s
  per-model totals: the folder is refused in one line that says what each file lacks (the store's
  schema too) and points at neither (before, it sent the user to that store). From
  ``PREFIXBENCH_LITTLE_HOU_CLAW_REPO`` and ``PREFIXBENCH_LITTLESHRIMP_REPO``.

What is checked is each home's usage recounted from its raw fields, how many of its reads are
predicted within 3%, and that a home holding no per-call usage is refused in one line.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import gemini_jsonl_recount, gemini_recount, read_within, tree_at

ESGGO = Path(os.environ.get("PREFIXBENCH_DINGJUN_ESGGO_REPO", "/work/.mirror/DingJun1028+esggo/repo"))
ESGGO_COMMIT = "c2e18307815805a219e318004afe49e8d0ac52eb"
MAGI = Path(os.environ.get("PREFIXBENCH_MAGI_UI_REPO", "/work/.mirror/dogmaai+magi-ui/repo"))
MAGI_COMMIT = "9bb46ef1846f3683a25210c19169fdd21c4b54bd"
BAR = Path(os.environ.get("PREFIXBENCH_BARDOLOOUIS_REPO", "/work/.mirror/LoouisFelipe+BarDoLoouis/repo"))
BAR_COMMIT = "e9f87ce228fd73b7c1f9b23360af0ffde2b1377c"
FOCUS = Path(os.environ.get("PREFIXBENCH_FOCUS_QUEST_REPO", "/work/.mirror/1919114514yasenpai-maker+focus-quest/repo"))
FOCUS_COMMIT = "c695164713accc0ad09df8e3156c3502c8286cc4"
COPILOT_HOMES = {
    "Kaijon/little-hou-claw": ("PREFIXBENCH_LITTLE_HOU_CLAW_REPO", "111d83c3015527e15d9709799961800591e89575",
                               "1.0.18", {"gpt-5.4-mini"}),
    "jennileng/littleshrimp": ("PREFIXBENCH_LITTLESHRIMP_REPO", "95632ada4ad18733283d2c813ec019e8970c3381",
                               "1.0.14", {"claude-haiku-4.5"}),
}


def test_gemini_cli_session_without_a_header_line(tmp_path: Path) -> None:
    paths = tree_at(ESGGO, ESGGO_COMMIT, "github.com/DingJun1028/esggo", "PREFIXBENCH_DINGJUN_ESGGO_REPO",
                    ".gemini/tmp/", tmp_path, suffix=".jsonl")
    assert len(paths) == 1
    first = json.loads(paths[0].read_text(encoding="utf-8").split("\n", 1)[0])
    assert first["type"] == "gemini" and "projectHash" not in first
    calls, uncached, output, read, models = gemini_jsonl_recount(paths)
    assert (calls, uncached, output, read) == (28, 294_160, 12_278, 2_618_122)
    assert models == {"gemini-3-flash-preview"}

    result = run_audit(paths)
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read)
    assert t.unpriced_requests == 0
    # The first call read 47,713 tokens cached before the file begins (a lane start, predicted 0);
    # 8 more fell short of the checkpoint a lagging Gemini read was predicted to keep
    # (provider-best-effort, one of them 3,974 of 86,328 with nothing changed and 6 s idle).
    assert read_within(result) == 19
    assert result.rows[0].reported_cache_read == 47_713 and result.rows[0].predicted_cache_read == 0
    assert {row.cause for row in result.rows[1:] if row.cause} == {"provider-best-effort"}


def test_a_gemini_2_5_call_after_three_idle_hours_names_the_idle_rule(tmp_path: Path) -> None:
    paths = tree_at(MAGI, MAGI_COMMIT, "github.com/dogmaai/magi-ui", "PREFIXBENCH_MAGI_UI_REPO", ".gemini/tmp/", tmp_path,
                    suffix=".json")
    sessions = [p for p in paths if "/chats/" in str(p)]
    assert len(sessions) == 1
    calls, uncached, output, read, models = gemini_recount(sessions)
    assert (calls, uncached, output, read) == (3, 17_885, 2_856, 7_567) and models == {"gemini-2.5-pro"}
    result = run_audit(sessions)
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read)
    # The third read 7,567 of 8,435, where a 2.5 lane that had read nothing yet is predicted nothing.
    assert read_within(result) == 2
    idle = result.rows[1]
    assert (idle.reported_cache_read, idle.predicted_cache_read, idle.gap_ms) == (0, 0, 10_890_546)
    # Predicted nothing by unread_until_read; the 10-minute idle rule applies too and is named
    # (before: left out of the detail, the provider blamed with 3h01m idle unremarked).
    assert "sent 3h01m after its lane's previous call, past the 10m00s idle" in idle.detail, idle.detail


def test_gemini_cli_2_5_sessions_with_router_switches(tmp_path: Path) -> None:
    paths = tree_at(BAR, BAR_COMMIT, "github.com/LoouisFelipe/BarDoLoouis", "PREFIXBENCH_BARDOLOOUIS_REPO",
                    ".gemini/tmp/louisfelipecabral/chats/", tmp_path, suffix=".json")
    assert len(paths) == 4
    calls, uncached, output, read, models = gemini_recount(paths)
    assert (calls, uncached, output, read) == (27, 339_466, 10_463, 581_058)
    assert models == {"gemini-2.5-pro", "gemini-2.5-flash"}
    result = run_audit(paths)
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read)
    assert t.unpriced_requests == 0
    # Of the 13 off: two Flash session starts that read what was cached before the log began
    # (predicted 0), two Pro lanes' first reads (24,252 and 24,011) where a 2.5 lane that has read
    # nothing yet is predicted nothing, 1,699 read right after the switch to Pro, four reads of 0
    # after 13 s to 7m35s idle, and four reads 3-6% off the predicted lag.
    assert read_within(result) == 14
    starts = [row for row in result.rows if row.model == "gemini-2.5-flash"]
    assert [(row.reported_cache_read, row.predicted_cache_read) for row in starts] == [(19_560, 0), (19_916, 0)]


def test_gemini_cli_a2a_server_sessions_without_replies_are_refused(tmp_path: Path, capsys) -> None:
    paths = tree_at(FOCUS, FOCUS_COMMIT, "github.com/1919114514yasenpai-maker/focus-quest", "PREFIXBENCH_FOCUS_QUEST_REPO",
                    ".gemini/tmp/code-oss-for-cloud-shell/chats/", tmp_path, suffix=".jsonl")
    assert len(paths) == 26
    for path in paths:
        header, *rest = [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
        assert header["sessionId"] == "a2a-server" and header["kind"] == "main"
        messages = [m for record in rest for m in (record.get("$set") or {}).get("messages", [])]
        assert messages and {m["type"] for m in messages} == {"user"}
    assert gemini_jsonl_recount(paths)[0] == 0
    assert run_audit(paths).totals.requests == 0
    assert main(["audit", str(tmp_path / ".gemini")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert re.search(r"nothing to audit: no model call with usage in the logs given \(\S+-a2a-serv\.jsonl: no model call "
                     r"in this Gemini CLI session: its \d+ message\(s\) are \d+ user message\(s\) and no model reply; "
                     r"25 other file\(s\) hold none either\)", err)


@pytest.mark.parametrize("repo", sorted(COPILOT_HOMES))
def test_copilot_cli_1_0_1x_homes_hold_no_per_call_usage(tmp_path: Path, repo: str) -> None:
    env, commit, version, models = COPILOT_HOMES[repo]
    local = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    paths = tree_at(local, commit, f"github.com/{repo}", env, ".copilot/", tmp_path,
                    left_out=frozenset({".copilot/config.json", ".copilot/mcp-config.json"}))
    events = [p for p in paths if p.name == "events.jsonl"]
    assert len(events) == 1
    records = [json.loads(line) for line in events[0].read_text(encoding="utf-8").split("\n") if line.strip()]
    assert {r["data"]["copilotVersion"] for r in records if r["type"] == "session.start"} == {version}
    shutdowns = [r["data"]["modelMetrics"] for r in records if r["type"] == "session.shutdown"]
    assert shutdowns and all(metrics for metrics in shutdowns)
    assert set().union(*shutdowns) == models
    store = tmp_path / ".copilot" / "session-store.db"
    with pytest.raises(UserError, match=r"session store of schema 2 without assistant_usage_events"):
        run_audit([store])
    # The folder's one line says it of both files, and points at neither (the store is refused too).
    with pytest.raises(UserError) as refused:
        run_audit([tmp_path / ".copilot"])
    said = str(refused.value)
    assert said.startswith(f"{tmp_path / '.copilot'}: no log to audit: ") and "audit its session store instead" not in said
    assert said.endswith(
        "(events.jsonl: a GitHub Copilot CLI session (events.jsonl): it logs no call's prompt or cache counts (at most "
        "each call's output tokens, and the session's totals in session.shutdown), and the Copilot CLI session store "
        f"({store}) is of schema 2, without assistant_usage_events (the per-call usage table Copilot CLI keeps from "
        "1.0.73): neither holds a request to audit; to record each call's usage, run copilot with "
        "COPILOT_OTEL_FILE_EXPORTER_PATH=FILE (Copilot CLI 1.0.4 on) and audit FILE (format otel), or update Copilot "
        "CLI to 1.0.73 or later, whose session store keeps it)")
