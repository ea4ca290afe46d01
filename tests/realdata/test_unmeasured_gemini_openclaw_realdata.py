"""Three committed agent homes not measured before, read where they live (a local git copy of each;
never copied into this project, each test skips without it):

* ``.gemini/tmp/`` of github.com/wingorithm/Vibe-Coding-Comparison-Project (commit
  ``310ce4d7341fa223342117b808c73cba131e1479``, 2026-04-25): three Gemini CLI sessions in the JSONL
  form, 82 calls to gemini-3-flash-preview (47), gemini-3.1-pro-preview (33) and, at one session's
  start, gemini-3.1-pro-preview-customtools (2), Google's second endpoint of 3.1 Pro, which was
  left unpriced. From ``PREFIXBENCH_WINGORITHM_VIBE_REPO``.
* ``.openclaw/agents/main/sessions/`` of github.com/adrianstanca1/vps-config (commit
  ``3bc7c8902d806d2fe325cf6307c13aba1948b2bc``, 2026-03-21; removed by a later commit): an
  OpenClaw gateway's pi sessions (version 3) on a local Ollama, 67 calls of minimax-m2.7:cloud
  (Ollama's cloud plan), seven llama3.1:8b / deepseek-r1:7b replies of no usage (errors) and two
  gateway injections. No call reads
  the cache; the audit predicts none, yet counts 66 misses against the prefix a cache would have
  kept, which its opening said it did not see. From ``PREFIXBENCH_ADRIANSTANCA1_VPS_REPO``.

* ``nanobot/workspace/sessions/`` of github.com/AlisaKondakova/se-toolkit-lab-8 (commit
  ``c1fcaae8b93c3bf9aa5a02a7f34197922e273256``, 2026-03/04): seven nanobot sessions (HKUDS/nanobot),
  no message with a model or a token count: refused in one line naming nanobot. From
  ``PREFIXBENCH_SE_TOOLKIT_LAB_8_REPO``.

What is checked is each home's usage recounted from its raw fields, and how many of its reads are
predicted within 3%.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import gemini_jsonl_recount, pi_recount, read_within, tree_at

WINGORITHM = Path(os.environ.get("PREFIXBENCH_WINGORITHM_VIBE_REPO",
                                 "/work/.mirror/wingorithm+Vibe-Coding-Comparison-Project/repo"))
WINGORITHM_COMMIT = "310ce4d7341fa223342117b808c73cba131e1479"
ADRIAN = Path(os.environ.get("PREFIXBENCH_ADRIANSTANCA1_VPS_REPO", "/work/.mirror/adrianstanca1+vps-config/repo"))
ADRIAN_COMMIT = "3bc7c8902d806d2fe325cf6307c13aba1948b2bc"
NANOBOT = Path(os.environ.get("PREFIXBENCH_SE_TOOLKIT_LAB_8_REPO", "/work/.mirror/AlisaKondakova+se-toolkit-lab-8/repo"))
NANOBOT_COMMIT = "c1fcaae8b93c3bf9aa5a02a7f34197922e273256"


def test_gemini_cli_sessions_with_the_customtools_endpoint(tmp_path: Path) -> None:
    paths = tree_at(WINGORITHM, WINGORITHM_COMMIT, "github.com/wingorithm/Vibe-Coding-Comparison-Project",
                    "PREFIXBENCH_WINGORITHM_VIBE_REPO", ".gemini/tmp/", tmp_path, suffix=".jsonl")
    assert len(paths) == 3
    calls, uncached, output, read, models = gemini_jsonl_recount(paths)
    assert (calls, uncached, output, read) == (82, 564_496, 42_077, 2_558_255)
    assert models == {"gemini-3-flash-preview", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview-customtools"}

    result = run_audit(paths)
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read)
    # Every call priced: the customtools endpoint bills as 3.1 Pro (2 calls were unpriced).
    assert t.unpriced_requests == 0
    # 24 of 33 3.1 Pro calls, 13 of 47 Flash, 1 of 2 customtools (37 while a lane's idle was counted
    # from its previous call of any model: Flash, back after 43 min on 3.1 Pro, was predicted to
    # read its own old entry 1.5 min after Pro's last call; it read nothing).
    assert read_within(result) == 38
    back = next(row for row in result.rows if row.file.endswith("c737eb36.jsonl") and row.line == 172)
    assert (back.model, back.reported_cache_read, back.predicted_cache_read) == ("gemini-3-flash-preview", 0, 0)
    # 3 Flash read here in ~8,090-token steps (every read within 48 tokens of an even multiple of
    # 4,045), not on the 3,924-token grid the model is predicted with: 13 of its 47 within 3%.
    flash = [row for row in result.rows if row.model == "gemini-3-flash-preview"]
    reads = [row.reported_cache_read for row in flash if row.reported_cache_read]
    assert len(flash) == 47 and len(reads) == 41
    assert all(round(r / 4_045) % 2 == 0 and abs(r - round(r / 4_045) * 4_045) <= 48 for r in reads)
    assert sum(1 for row in flash if abs((row.predicted_cache_read or 0) - row.reported_cache_read)
               <= 0.03 * max(row.predicted_cache_read or 0, row.reported_cache_read)) == 13


def test_openclaw_sessions_on_a_local_ollama_never_read_and_say_so(tmp_path: Path, capsys) -> None:
    paths = tree_at(ADRIAN, ADRIAN_COMMIT, "github.com/adrianstanca1/vps-config", "PREFIXBENCH_ADRIANSTANCA1_VPS_REPO",
                    ".openclaw/agents/main/sessions/", tmp_path, suffix=".jsonl")
    assert len(paths) == 4
    messages, calls, uncached, output, read, written, served = pi_recount(paths)
    assert (messages, calls, uncached, output, read, written) == (76, 67, 3_028_149, 9_241, 0, 0)
    assert served == {("ollama", "minimax-m2.7:cloud")}

    result = run_audit(paths)
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read)
    assert t.unpriced_requests == 67  # Ollama's cloud plan: no list price
    assert read_within(result) == 67  # none predicted, none read
    lost = [row.lost_tokens for row in result.rows if row.lost_tokens]
    assert (len(lost), sum(lost)) == (66, 2_918_144)
    assert main(["audit", *map(str, paths), "--quiet"]) == 0
    head = capsys.readouterr().out.split("\nlost ")[0]
    assert "sees no miss" not in head
    assert "so the 66 misses it counts (2,918,144 tokens) are against the prefix a cache would have kept" in head


def test_nanobot_sessions_hold_no_usage_and_are_refused_naming_nanobot(tmp_path: Path) -> None:
    paths = tree_at(NANOBOT, NANOBOT_COMMIT, "github.com/AlisaKondakova/se-toolkit-lab-8", "PREFIXBENCH_SE_TOOLKIT_LAB_8_REPO",
                    "nanobot/workspace/sessions/", tmp_path, suffix=".jsonl")
    assert len(paths) == 7
    records = [json.loads(line) for path in paths for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert sum(r.get("_type") == "metadata" for r in records) == 7
    assert not any("usage" in r or "model" in r for r in records)
    assert sum(r.get("role") == "assistant" for r in records) > 0
    with pytest.raises(UserError, match=r"none is a log \([a-z_0-9-]+\.jsonl: a nanobot session"):
        run_audit([tmp_path / "nanobot"])
