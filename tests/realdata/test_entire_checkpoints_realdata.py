"""Agent sessions Entire (the entire.io CLI, 0.8.42) checkpointed into a public repository's git
refs, read where they live: github.com/MandavkarPranjal/www keeps six checkpoints under
``refs/entire/checkpoints/<xx>/<id>`` (2026-07-14 to 21), each commit holding per session
``<n>/full.jsonl`` (the agent's own session file, as the agent wrote it), ``<n>/metadata.json``
(Entire's sums of the session's token usage and its call count) and a compact transcript. Ten
sessions: pi on mimo-v2.5-free and deepseek-v4-flash-free, and OpenCode 1.17.20 and 1.18.4 (their
exports) on mimo-v2.5-free, all through OpenCode Zen (pi's and OpenCode's calls are named by Zen's
own id, ``opencode/mimo-v2.5-free``, which the price table's $0 row for Zen's free models prices). From ``PREFIXBENCH_MANDAVKAR_WWW_REPO``
(default the workplace's mirror); never copied into this project, the test skips without it.

What is checked: the audit's totals equal the session file's own sums (pi's message usage;
OpenCode's step-finish tokens, reasoning billed as output) and Entire's independent sums of the
same session where it counted the same calls; and how many reads were predicted within 3%
(measured 2026-12-05). mimo-v2.5-free's server is no provider prefixbench models and reads the
whole previous prompt while pi and OpenCode store no write count for it: read as nothing
written, 74 of its 163 reads were within 3%; read as writes unknown, 143.

Claude Code sessions checkpointed the same way (Entire 0.10.x) into two more repositories, the
latest Claude Code releases on the latest models: github.com/Esdeveniments/esdeveniments-frontend
(2.1.220 and 2.1.221, claude-sonnet-5, claude-opus-5 and claude-opus-4-7, 2026-07-30 to 08-04) and
github.com/Soph/energy-import-export (2.1.231 on claude-opus-5 and 2.1.237 on claude-fable-5,
2026-08-17/20); from ``PREFIXBENCH_ESDEVENIMENTS_REPO`` and ``PREFIXBENCH_ENERGY_IMPORT_EXPORT_REPO``.
Of their checkpoints' 103 sessions the workplace's snapshots hold 21 (the others' files are of
4 MiB or more), several the same session checkpointed again: 1,256 calls, totals equal, 1,233
within 3%; six distinct ones are pinned (:data:`CLAUDE_SESSIONS`).

github.com/JanDeDobbeleer/oh-my-posh (Entire 0.8.42, branch ``entire/checkpoints/v1`` at commit
``0d1116c02814bec7231dbe3c3b9661106418a724``, 2026-07-17 to 08-04; from
``PREFIXBENCH_OH_MY_POSH_REPO``): Claude Code 2.1.205, 2.1.209, 2.1.215, 2.1.217 and 2.1.219 on
claude-fable-5, claude-sonnet-5, claude-opus-5 and claude-opus-4-8, through Claude Desktop
(``entrypoint`` claude-desktop). Of its 48 sessions the snapshot holds a transcript of (each
session's largest; 233 of the 583 ``full.jsonl`` are of 4 MiB or more and absent), 3,841 calls:
totals equal the transcripts' sums, 3,792 reads within 3% audited together (3,781 while the
smallest warm level stayed the head though a longer one outlived it: 2.1.205 on claude-fable-5,
twelve cold points read 24,962 tokens, three of them after 84 to 299 min idle, one lane start
22,291); five are pinned, one per version.
Their 1,154 claude-fable-5 calls were unpriced before the price table had Fable 5: every pinned
session is priced.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at, git

ENV = "PREFIXBENCH_MANDAVKAR_WWW_REPO"
URL = "github.com/MandavkarPranjal/www"
REPO = Path(os.environ.get(ENV, "/work/.mirror/MandavkarPranjal+www/repo"))

#: (checkpoint commit, session folder): (format, model, calls, (input, cache read, cache write,
#: output), reads within 3%, whether Entire's metadata counted the same calls).
SESSIONS = {
    ("295b51c96eeb9cb7b6f506a10ab3b67502580f34", "0"): ("pi", "opencode/mimo-v2.5-free", 18, (17_925, 142_208, 0, 7_302), 18, True),
    ("af824ef87fe0a88cec4e42374dd104772fa8e1e4", "0"): ("pi", "opencode/mimo-v2.5-free", 6, (6_650, 30_208, 0, 1_813), 5, True),
    ("0625a05b0405ecfe6cda6eefdee385cbf2407033", "0"): ("pi", "opencode/mimo-v2.5-free", 23, (20_351, 231_808, 0, 8_421), 22, True),
    ("b9f3d441a91a8b4625616e53e922c58313eb434a", "0"): ("pi", "opencode/deepseek-v4-flash-free", 24, (24_322, 499_584, 0, 9_996), 23, True),
    ("6226a7e8ff837e60e5571bf7252153b027c29325", "0"): ("opencode", "opencode/mimo-v2.5-free", 78, (262_281, 3_814_400, 0, 24_734), 65, True),
    # Entire's metadata was written before the session's last step (11 calls of 12).
    ("74b4822d244106a398ab6b46ba19b05b8ae6d987", "0"): ("opencode", "opencode/mimo-v2.5-free", 12, (9_991, 197_760, 0, 2_278), 10, False),
    # Entire counts a call that failed (7 of 6 steps).
    ("b9f3d441a91a8b4625616e53e922c58313eb434a", "2"): ("opencode", "opencode/mimo-v2.5-free", 6, (16_049, 76_480, 0, 967), 5, False),
    ("b9f3d441a91a8b4625616e53e922c58313eb434a", "3"): ("opencode", "opencode/mimo-v2.5-free", 6, (8_221, 94_144, 0, 1_441), 5, True),
    ("b9f3d441a91a8b4625616e53e922c58313eb434a", "4"): ("opencode", "opencode/mimo-v2.5-free", 14, (11_454, 257_088, 0, 1_929), 13, True),
}


#: The head of github.com/JanDeDobbeleer/oh-my-posh's ``entire/checkpoints/v1`` (2026-08-04).
OH_MY_POSH = "0d1116c02814bec7231dbe3c3b9661106418a724"

#: (env var, repository, checkpoint commit, session folder): (model, calls, reads within 3%).
CLAUDE_SESSIONS = {
    ("PREFIXBENCH_ESDEVENIMENTS_REPO", "Esdeveniments/esdeveniments-frontend", "16393c36d0f77b56155fc03f40cd6f71d0bf572a", "0"):
        ("claude-sonnet-5", 186, 182),
    ("PREFIXBENCH_ESDEVENIMENTS_REPO", "Esdeveniments/esdeveniments-frontend", "2d38d2c04c9ea7a492d602627728c5a0f2f7c55b", "0"):
        ("claude-opus-5", 84, 84),
    ("PREFIXBENCH_ESDEVENIMENTS_REPO", "Esdeveniments/esdeveniments-frontend", "7d90b7bf9e1208f60444618532fc4557a15542bb", "0"):
        ("claude-opus-4-7", 12, 11),
    ("PREFIXBENCH_ESDEVENIMENTS_REPO", "Esdeveniments/esdeveniments-frontend", "05ca0348f1ce371340ba9a383cf22c788c440352", "0"):
        ("claude-opus-4-7", 5, 4),
    ("PREFIXBENCH_ENERGY_IMPORT_EXPORT_REPO", "Soph/energy-import-export", "bad4cb08916984cd5ea2b09e75095999030e1f78", "0"):
        ("claude-opus-5", 117, 116),
    ("PREFIXBENCH_ENERGY_IMPORT_EXPORT_REPO", "Soph/energy-import-export", "420429145cafe8b3f8c2b857869082ce40719523", "0"):
        ("claude-fable-5", 21, 20),
    ("PREFIXBENCH_OH_MY_POSH_REPO", "JanDeDobbeleer/oh-my-posh", OH_MY_POSH, "45/51f81cf553/0"):
        ("claude-fable-5", 71, 71),  # 2.1.205
    ("PREFIXBENCH_OH_MY_POSH_REPO", "JanDeDobbeleer/oh-my-posh", OH_MY_POSH, "11/6e27a41b09/0"):
        ("claude-sonnet-5", 222, 221),  # 2.1.209
    ("PREFIXBENCH_OH_MY_POSH_REPO", "JanDeDobbeleer/oh-my-posh", OH_MY_POSH, "d8/4718082c10/3"):
        ("claude-fable-5", 273, 268),  # 2.1.215
    ("PREFIXBENCH_OH_MY_POSH_REPO", "JanDeDobbeleer/oh-my-posh", OH_MY_POSH, "d3/cfdfe7f72d/0"):
        ("claude-opus-5", 307, 303),  # 2.1.217
    ("PREFIXBENCH_OH_MY_POSH_REPO", "JanDeDobbeleer/oh-my-posh", OH_MY_POSH, "c2/0c858017a2/0"):
        ("claude-opus-5", 538, 530),  # 2.1.219
}


def _own_sums(fmt: str, path: Path) -> tuple[int, tuple[int, int, int, int], int]:
    """(calls, (input, read, write, output), reasoning inside that output) from the raw fields."""
    calls, sums, reasoning = 0, [0, 0, 0, 0], 0
    if fmt == "pi":
        for line in path.read_text().splitlines():
            message = json.loads(line).get("message") or {}
            usage = message.get("usage") if message.get("role") == "assistant" else None
            if usage:
                calls += 1
                sums = [a + b for a, b in zip(sums, (usage["input"], usage["cacheRead"], usage["cacheWrite"], usage["output"]))]
        return calls, tuple(sums), reasoning  # (pi's output already holds its reasoning)
    for message in json.loads(path.read_text())["messages"]:
        for part in message.get("parts", []):
            if part.get("type") == "step-finish":
                t = part["tokens"]
                calls += 1
                reasoning += t["reasoning"]
                sums = [a + b for a, b in zip(sums, (t["input"], t["cache"]["read"], t["cache"]["write"], t["output"] + t["reasoning"]))]
    return calls, tuple(sums), reasoning


@pytest.mark.parametrize("where", sorted(SESSIONS), ids=lambda w: f"{w[0][:8]}-{w[1]}")
def test_entire_checkpointed_sessions_count_what_the_session_sums(where: tuple[str, str], tmp_path: Path) -> None:
    commit, folder = where
    fmt, model, calls, sums, within, same_calls = SESSIONS[where]
    path = tmp_path / f"{folder}-full.jsonl"
    path.write_bytes(file_at(REPO, commit, f"{folder}/full.jsonl", URL, ENV))
    meta = json.loads(file_at(REPO, commit, f"{folder}/metadata.json", URL, ENV))
    own_calls, own, reasoning = _own_sums(fmt, path)
    assert (own_calls, own) == (calls, sums)
    result = run_audit([path])
    assert [f.format for f in result.files] == [fmt]
    assert {r.model for r in result.rows} == {model}
    t = result.totals
    assert (t.requests, (t.input, t.cache_read, (t.cache_write or 0), t.output)) == (calls, sums)
    used = meta["token_usage"]
    if same_calls:
        # Entire's sums of the same calls (its output leaves OpenCode's reasoning out).
        assert used["api_call_count"] == calls
        assert (used["input_tokens"], used["cache_read_tokens"], used["cache_creation_tokens"], used["output_tokens"] + reasoning) == sums
    assert result.files[0].read_within == within


def test_the_sessions_sum_as_the_docstring_says() -> None:
    mimo = [s for s in SESSIONS.values() if s[1].removeprefix("opencode/") == "mimo-v2.5-free"]
    assert (sum(s[2] for s in mimo), sum(s[4] for s in mimo)) == (163, 143)


@pytest.mark.parametrize("where", sorted(CLAUDE_SESSIONS), ids=lambda w: f"{w[1].split('/')[0]}-{w[2][:8]}")
def test_entire_checkpointed_claude_code_sessions_count_what_the_transcript_sums(where: tuple[str, str, str, str], tmp_path: Path) -> None:
    env, repo, commit, folder = where
    model, calls, within = CLAUDE_SESSIONS[where]
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    path = tmp_path / "full.jsonl"
    path.write_bytes(file_at(mirror, commit, f"{folder}/full.jsonl", f"github.com/{repo}", env))
    usages: dict[str, dict] = {}  # a response's last line holds its final usage
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        message = entry.get("message") or {}
        if entry.get("type") == "assistant" and isinstance(message.get("usage"), dict) and message.get("model") != "<synthetic>":
            usages[entry.get("requestId") or message.get("id")] = message["usage"]
    assert len(usages) == calls
    result = run_audit([path])
    assert [f.format for f in result.files] == ["claude-code"]
    assert {r.model for r in result.rows} == {model}
    t = result.totals
    assert (t.requests, t.input, t.output, t.cache_read, t.cache_write) == (
        calls, *(sum(u.get(k) or 0 for u in usages.values())
                 for k in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")))
    assert result.files[0].read_within == within
    assert t.unpriced_requests == 0


def test_oh_my_posh_sessions_audited_together_share_the_warm_head_most_cold_points_read(tmp_path: Path) -> None:
    """The 48 sessions of oh-my-posh's checkpoints the snapshot holds a transcript of (each session's
    largest), audited in one run: 3,841 calls, 3,792 reads within 3% (3,781 while the 2.1.205 head
    on claude-fable-5 was the smallest level, 22,291 tokens, read by one lane start, where nine lane
    starts and three reads after 84 to 299 min idle read 24,962: those twelve were 2,671 short)."""
    env, url = "PREFIXBENCH_OH_MY_POSH_REPO", "github.com/JanDeDobbeleer/oh-my-posh"
    mirror = Path(os.environ.get(env, "/work/.mirror/JanDeDobbeleer+oh-my-posh/repo"))
    file_at(mirror, OH_MY_POSH, "45/51f81cf553/0/metadata.json", url, env)  # skips without the copy
    largest: dict[str, tuple[int, str]] = {}
    for line in git(mirror, "ls-tree", "-r", "-l", OH_MY_POSH).stdout.splitlines():
        meta, name = line.split("\t")
        _, _, blob, size = meta.split()
        if not name.endswith("/full.jsonl") or not size.isdigit() or git(mirror, "cat-file", "-e", blob).returncode:
            continue  # (a transcript the snapshot lists without holding)
        session = json.loads(file_at(mirror, OH_MY_POSH, name.replace("full.jsonl", "metadata.json"), url, env))["session_id"]
        if session not in largest or int(size) > largest[session][0]:
            largest[session] = (int(size), name)
    assert len(largest) == 48
    for _, name in largest.values():
        (tmp_path / name.replace("/", "_")).write_bytes(file_at(mirror, OH_MY_POSH, name, url, env))
    rows = run_audit([tmp_path]).rows
    assert (len(rows), sum(r.read_within for r in rows)) == (3_841, 3_792)
    fable = [r for r in rows if r.model == "claude-fable-5" and r.index == 0 and r.reported_cache_read in (22_291, 24_962)]
    assert sorted((r.reported_cache_read, r.predicted_cache_read) for r in fable) == [(22_291, 24_962)] + [(24_962, 24_962)] * 9
