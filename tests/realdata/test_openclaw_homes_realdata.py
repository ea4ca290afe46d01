"""OpenClaw homes committed to public repositories (``~/.openclaw`` or its ``agents/`` folder, a
backup of one), read where they live (a local git copy of each; never copied into this project,
each test skips without it). Each holds pi sessions an OpenClaw gateway wrote
(``agents/<agentId>/sessions/<sessionId>.jsonl``), archived ones among them
(``<id>.jsonl.reset.<time>``, ``<id>.jsonl.deleted.<time>``), with OpenClaw's delivery mirrors
and gateway injections (assistant messages of zero usage, no call):

* github.com/CroCooCn/zhipuclaw (2026-03-21/22): three agents on Z.AI's glm-5 (and glm-4.7-flash);
* github.com/Musk-fanX/openclaw-backup (2026-03-05): deepseek-chat;
* github.com/VerveAILabs/openclaw-backup (2026-02-13): gpt-5.1-codex through OpenAI's Responses API;
* github.com/aa1010383401/openclaw-backup (2026-03-02): kimi-k2.5 on Moonshot;
* github.com/Ccccx/openclaw-bak (2026-03/04): MiniMax-M2.5-highspeed through MiniMax's
  Anthropic-compatible API (``minimax-cn``);
* github.com/archeoneocode-commits/openclaw-backup: a local Ollama's qwen3:8b
  (``openai-completions``), which reports no cache reads: provider unknown, none predicted;
* github.com/sirdeuce/nucbox-backup (2026-04/05): local Ollama models (gemma4, llama3; pi's
  ``ollama`` API) and four gpt-5.5 calls through ``openai-codex``, with OpenClaw's compaction
  checkpoints (``<id>.checkpoint.<uuid>.jsonl``, copies of a session's entries) and branches it
  appended again in one file (a truncated tool result): each call counted once;
* github.com/akancelik/openclaw (2026-02): MiniMax-M2.5 through OpenClaw's MiniMax OAuth
  (``minimax-portal``, MiniMax's own Anthropic-compatible API);
* github.com/abhishekibr2/openclaw (2026-02): gemini-3-flash-preview through pi's
  ``google-gemini-cli`` (Gemini CLI's sign-in), five agents: reads off the 3,924-token grid, 61 within 3%
  (60 before a call sent more than 10 min after its lane's previous one read nothing);
* github.com/sunlinhua-dotcom/open-306 (2026-02-17/24, OpenClaw 2026.2.15): glm-5 on Z.AI;
* github.com/CourtReinland/blueos (2026-01-29/30, OpenClaw 2026.1.29): claude-opus-4-5 on Anthropic;
* github.com/MaxSaiets/myOpenCL (2026-03-22/24, OpenClaw 2026.3.14): a local router's "gpt-4o";
* github.com/andrewcarterman-ops/andre-ai-harness (2026-04, an ``agents/`` folder): k2p5 and
  kimi-k2-thinking through Kimi Code (``kimi-coding``, ``anthropic-messages``), whose reads, in
  64-token blocks, overrun 46 calls' prompts (``input`` negative): each read as its whole prompt;
* github.com/openclawlaw-cpu/OpenClawLog (2026-03-14, OpenClaw 2026.3.12): Qwen's free portal
  (``qwen-portal``) writes every reply with zero usage, then 429 quota errors: nothing to audit.

What is checked is each home's usage recounted from its raw fields, and how many of its reads
are predicted within 3%; and that one home's sessions put into an agent database (later
OpenClaw's ``openclaw-agent.sqlite``, built in a temporary folder) read the same.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at, files_at

#: A transcript, live or archived by OpenClaw (its .bak copies and .lock files are neither).
_TRANSCRIPT = re.compile(r"/sessions/[^/]+(?<!\.trajectory)\.jsonl(?:\.(?:reset|deleted)\.[0-9T:.-]+Z)?$")
#: OpenClaw's trajectory sidecars (``<id>.trajectory.jsonl``): no transcript, and the largest files
#: of a home, which a mirror may list without holding; left out of the folder.
_TRAJECTORY = re.compile(r"\.trajectory\.jsonl")

#: env variable -> (repository, commit, folder, transcripts, calls, uncached input, output, read,
#: write, transcript-only messages, calls predicted within 3%).
HOMES = {
    "PREFIXBENCH_ZHIPUCLAW_REPO": ("CroCooCn/zhipuclaw", "3764a2b003f4b1f05b099759d411243243d53141", ".openclaw/agents/",
                                   27, 889, 9_298_299, 194_939, 20_262_754, 0, 9, 433),  # 424: no idle lifetime
    # (432 while a longer warm level that outlived the smallest was not the head: serve-agent's glm-5
    # session read 5,760 at its start and after 136 min idle, 1,216 once after 21 min.)
    # (1,215 before the third and later sessions' first calls of a day read the head earlier ones
    # agree on: five one-task sessions of 2026-03-05 read 640 tokens, after one that read 6,080 and
    # one 128; the last three are predicted, from the two and more 640s before them. 1,220 while each
    # call's level was taken from its whole group, its own read included.)
    "PREFIXBENCH_MUSK_FANX_OPENCLAW_REPO": ("Musk-fanX/openclaw-backup", "bd51e967f196b87f1e006258a276a4f18397d395",
                                            "agents/", 13, 1_254, 1_656_895, 379_979, 64_185_216, 0, 9, 1_218),
    "PREFIXBENCH_VERVE_OPENCLAW_REPO": ("VerveAILabs/openclaw-backup", "381cec563d6734c97ee05a3736eff3f04638d74d",
                                        "agents/", 1, 125, 584_958, 35_238, 4_664_320, 0, 2, 99),  # 98: in memory 5 min
    "PREFIXBENCH_AA1010383401_OPENCLAW_REPO": ("aa1010383401/openclaw-backup", "1ae077cfbfef8f1a4b57b38440045074c2b587c7",
                                               "agents/", 3, 78, 246_953, 12_728, 2_780_082, 0, 11, 68),
    "PREFIXBENCH_CCCCX_OPENCLAW_REPO": ("Ccccx/openclaw-bak", "544626b9831bee3c726ea28f655d5c35fc6abe93", "agents/",
                                        19, 434, 15_544_268, 214_378, 9_661_514, 2_245_930, 0, 403),
    "PREFIXBENCH_ARCHEONEOCODE_OPENCLAW_REPO": ("archeoneocode-commits/openclaw-backup",
                                                "71bcf5b9abcf54c5b475bcca7abdf7460580571b", "agents/",
                                                4, 102, 417_792, 44_046, 0, 0, 5, 102),
    "PREFIXBENCH_SIRDEUCE_NUCBOX_REPO": ("sirdeuce/nucbox-backup", "6423bd532f25be75ed46cfe1f5551bfed8549e27",
                                         ".openclaw/agents/", 31, 979, 41_366_320, 66_169, 39_424, 0, 8, 975),
    "PREFIXBENCH_AKANCELIK_OPENCLAW_REPO": ("akancelik/openclaw", "ea99091fc0e598b3e3712d996b5f65065407a85c", "agents/",
                                            2, 143, 1_153_931, 16_318, 1_365_866, 1_093_216, 8, 125),
    "PREFIXBENCH_ABHISHEKIBR2_OPENCLAW_REPO": ("abhishekibr2/openclaw", "c38740060fb9a2f6bc10d47ffc75fa85b053648a",
                                               "agents/", 9, 110, 1_056_360, 14_950, 3_314_206, 0, 0, 61),
    # Out of sample (oos62b, 2026-12-07): OpenClaw 2026.2.15, glm-5 on Z.AI (Kimi's calls all errors).
    "PREFIXBENCH_SUNLINHUA_OPEN306_REPO": ("sunlinhua-dotcom/open-306", "4e3da7bca8189a9aaf53e83904e6742b899ff2b1",
                                           ".openclaw/agents/", 6, 707, 17_473_848, 167_498, 24_631_616, 0, 59, 327),
    # OpenClaw 2026.1.29, claude-opus-4-5 on Anthropic (11 of its 15 replies errors, no usage). Its
    # sessions folder only: the home's agents/main/agent/auth-profiles.json is committed with its
    # secrets cut out (malformed JSON), bad input the CLI names and leaves out (exit 2).
    "PREFIXBENCH_COURTREINLAND_BLUEOS_REPO": ("CourtReinland/blueos", "dfdf14cc0f6a8e71505de6f4c221f021c908ad66",
                                              ".openclaw/agents/main/sessions/", 3, 4, 38, 819, 15_031, 46_686, 0, 3),
    # OpenClaw 2026.3.14: a custom provider "router" (a local router, its "gpt-4o" named "Gemini 2.5
    # Flash via Smart Router" in openclaw.json: provider unknown), and free models through OpenRouter.
    "PREFIXBENCH_MAXSAIETS_MYOPENCL_REPO": ("MaxSaiets/myOpenCL", "9ea596b0595adbf44467a261c1cee0ef98993f54",
                                            ".openclaw/agents/", 14, 355, 1_812_667, 81_657, 1_210_752, 0, 20, 180),
}


def _sums(paths: list[Path]) -> tuple[int, int, int, int, int, int]:
    """Calls, uncached input, output, reads, writes and transcript-only messages, from each
    assistant message's own usage: a call has some usage and is none of OpenClaw's messages
    written without one (provider openclaw or clawdbot, model delivery-mirror or gateway-injected)
    nor a CLI backend's turn (api cli). A call written more than once (a checkpoint's copy, a
    branch appended again: the same time, provider, model, response id and usage) counts once."""
    calls = uncached = output = read = write = only = 0
    met: set[str] = set()
    for path in paths:
        for line in path.read_text().splitlines():
            message = json.loads(line).get("message") or {}
            usage = message.get("usage")
            if message.get("role") != "assistant" or not isinstance(usage, dict):
                continue
            if message.get("provider") in ("openclaw", "clawdbot") and message.get("model") in ("delivery-mirror", "gateway-injected"):
                only += 1
                continue
            assert message.get("api") != "cli"  # (none of these homes ran a CLI backend)
            counts = [usage.get(k) or 0 for k in ("input", "output", "cacheRead", "cacheWrite")]
            if not any(counts):
                continue  # an error or an abort, before any usage
            same = json.dumps([message.get(k) for k in ("timestamp", "provider", "model", "responseId")] + [usage], sort_keys=True)
            if same in met:
                continue
            met.add(same)
            calls += 1
            uncached, output, read, write = (a + b for a, b in zip((uncached, output, read, write), counts))
    return calls, uncached, output, read, write, only


@pytest.mark.parametrize("env", sorted(HOMES))
def test_openclaw_home_sessions_count_what_their_messages_sum(env: str, tmp_path: Path) -> None:
    repo, commit, folder, files, *sums, within = HOMES[env]
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    url = f"github.com/{repo}"
    for name in files_at(mirror, commit, url, env):
        if name.startswith(folder) and not _TRAJECTORY.search(name):
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file_at(mirror, commit, name, url, env))
    paths = sorted(p for p in tmp_path.rglob("*") if _TRANSCRIPT.search(p.as_posix()))
    assert len(paths) == files
    # The home folder as it is, walked: archived transcripts read, sessions.json and the rest not logs.
    result = run_audit([tmp_path])
    assert sorted(Path(f.file).name for f in result.files if f.format == "pi") == sorted(p.name for p in paths)
    t = result.totals
    calls, uncached, output, read, write, only = _sums(paths)
    assert (t.requests, t.input, t.output, t.cache_read, (t.cache_write or 0)) == (calls, uncached, output, read, write)
    assert [calls, uncached, output, read, write, only] == sums
    skipped = sum(n for f in result.files for reason, n in f.skip_reasons if reason.startswith("OpenClaw transcript-only"))
    assert skipped == only
    assert sum(f.read_within for f in result.files) == within


def test_the_same_sessions_in_an_agent_database_read_the_same(tmp_path: Path) -> None:
    # Later OpenClaw keeps the same entries as rows of openclaw-agent.sqlite's transcript_events:
    # a home's sessions put there (as its migration does) audit to the same totals and reads.
    env = "PREFIXBENCH_MUSK_FANX_OPENCLAW_REPO"
    repo, commit, folder, files, *sums, within = HOMES[env]
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    url = f"github.com/{repo}"
    names = [n for n in files_at(mirror, commit, url, env) if n.startswith(folder) and _TRANSCRIPT.search("/" + n)]
    assert len(names) == files
    path = tmp_path / "agents" / "main" / "agent" / "openclaw-agent.sqlite"
    path.parent.mkdir(parents=True)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT NOT NULL,"
               " created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq))")
    for n, name in enumerate(names):
        lines = [line for line in file_at(mirror, commit, name, url, env).decode().splitlines() if line.strip()]
        sid = json.loads(lines[0])["id"]
        db.executemany("INSERT INTO transcript_events VALUES (?, ?, ?, ?)",
                       [(sid, seq, line, n * 10**6 + seq) for seq, line in enumerate(lines)])
    db.commit()
    db.close()
    result = run_audit([tmp_path])
    t = result.totals
    assert [t.requests, t.input, t.output, t.cache_read, (t.cache_write or 0)] == sums[:5]
    assert sum(f.read_within for f in result.files) == within


@pytest.mark.parametrize("extra", [[], ["--format", "json"], ["--what-if", "all"]])
def test_a_home_whose_provider_writes_no_usage_is_refused_in_one_line(tmp_path: Path, capsys, extra: list[str]) -> None:
    # Qwen's portal (qwen-portal coder-model / vision-model through openai-completions) wrote
    # every reply of this session with all-zero usage, then 429 "Free allocated quota exceeded":
    # no call to count, so the audit refuses in one line, naming the session and its first reply.
    env, repo, commit = "PREFIXBENCH_OPENCLAWLOG_REPO", "openclawlaw-cpu/OpenClawLog", "55f6ac830307a519e43466f7903ff65b4096b509"
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    url = f"github.com/{repo}"
    names = [n for n in files_at(mirror, commit, url, env) if n.startswith(".openclaw/agents/") and _TRANSCRIPT.search("/" + n)]
    assert len(names) == 1
    target = tmp_path / names[0]
    target.parent.mkdir(parents=True)
    target.write_bytes(file_at(mirror, commit, names[0], url, env))
    assert _sums([target]) == (0, 0, 0, 0, 0, 2)
    assert main(["audit", str(tmp_path), *extra]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert re.search(r"nothing to audit: no model call with usage in the logs given "
                     r"\(\S+/1f979e30-12ad-4b66-80ac-bcbb53b985ff\.jsonl:6: stop call with no usage", err)


def test_kimi_code_reads_that_overrun_their_prompt_read_the_whole_prompt(tmp_path: Path) -> None:
    # 29 transcripts, 2,209 calls through Kimi Code (kimi-coding, anthropic-messages): every read a
    # multiple of 64 tokens, 46 written with a negative input (-12 to -499).
    # Each is read as its whole prompt, input + cacheRead, read: the prompts sum as logged, the
    # reads 12,647 fewer than cacheRead sums, the uncached input as many more. Before: 7 of the 29
    # files bad input ("usage.input is not a non-negative integer (-385)"), 1,583 calls, exit 2.
    env, repo, commit = ("PREFIXBENCH_ANDRE_AI_HARNESS_REPO", "andrewcarterman-ops/andre-ai-harness",
                         "e51e0ee340ddcd987eada970761238cb23daacd2")
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    url = f"github.com/{repo}"
    for name in files_at(mirror, commit, url, env):
        if name.startswith("agents/") and _TRANSCRIPT.search("/" + name):
            target = tmp_path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(file_at(mirror, commit, name, url, env))
    paths = sorted(p for p in tmp_path.rglob("*") if _TRANSCRIPT.search(p.as_posix()))
    assert len(paths) == 29
    calls, uncached, output, read, write, only = _sums(paths)
    assert (calls, uncached, output, read, write, only) == (2_209, 140_716_927, 692_466, 80_522_624, 0, 10)
    result = run_audit([tmp_path])
    t = result.totals
    assert sum(f.format == "pi" for f in result.files) == 29
    assert (t.requests, t.output) == (calls, output)
    assert (t.input, t.cache_read) == (uncached + 12_647, read - 12_647)
    assert sum(int(n.split()[0]) for f in result.files for n in f.notes if "cacheRead exceeds the prompt" in n) == 46
    assert {m.model: m.requests for m in result.models} == {"k2p5": 1_813, "kimi-k2-thinking": 396}
    assert sum(f.read_within for f in result.files) == 693
