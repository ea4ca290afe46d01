"""Real GLM traffic on Z.AI's coding endpoint, read where it lives: the VCR cassettes Crush's agent
tests replayed (github.com/charmbracelet/crush,
``internal/agent/testdata/TestCoderAgent/zai-glm4.6/*.yaml`` at commit
``c83a6d8ad2b811ad6825f9aa061c0b58067fde3b``, recorded 2026-04-15 and removed from the tree in
2026-05), from a local git copy of that repository (``PREFIXBENCH_CRUSH_REPO``, default the
workplace's mirror). They are never copied into this project; the test skips without them.

Each cassette is one run of Crush's coder agent on a small task (13 tasks): a title call
(glm-4.5-air) and the agent's calls (glm-4.6) to ``api.z.ai/api/coding/paas/v4/chat/completions``,
each with the request body it sent and the answer's event stream. Each call is made into a
capture line (the body, and the stream as ``body_raw``) and read by ``http-capture``. The
cassettes keep no times: a run's calls are put 2 s apart, in order, and the runs a minute apart (one
``go test`` records them in turn; an hour apart, Z.AI's 20 min idle lifetime would drop what they share).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import files_at, git

REPO = Path(os.environ.get("PREFIXBENCH_CRUSH_REPO", "/work/.mirror/charmbracelet+crush/repo"))
COMMIT = "c83a6d8ad2b811ad6825f9aa061c0b58067fde3b"
FOLDER = "internal/agent/testdata/TestCoderAgent/zai-glm4.6/"
_USAGE = re.compile(r'"usage":(\{"prompt_tokens".*?\}\})')


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return git(REPO, *args)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[list[tuple[str, dict]]]]:
    """The runs as capture files, and each run's (model, last usage of the stream) per call."""
    yaml = pytest.importorskip("yaml")
    listed = files_at(REPO, COMMIT, "github.com/charmbracelet/crush", "PREFIXBENCH_CRUSH_REPO")
    folder = tmp_path_factory.mktemp("crush")
    usages = []
    for n, path in enumerate(sorted(p for p in listed if p.startswith(FOLDER))):
        interactions = yaml.safe_load(_git("show", f"{COMMIT}:{path}").stdout)["interactions"]
        lines, used = [], []
        for k, interaction in enumerate(i for i in interactions if i["request"]["url"].endswith("/chat/completions")):
            request, response = interaction["request"], interaction["response"]
            body = json.loads(request["body"])
            sent = 1_776_211_200.0 + 60 * n + 2 * k
            lines.append({"request": {"timestamp": sent, "method": "POST", "url": request["url"], "body": body},
                          "response": {"timestamp": sent + 1, "status_code": response["code"],
                                       "headers": {"content-type": "text/event-stream"}, "body_raw": response["body"]}})
            used.append((body["model"], json.loads(_USAGE.findall(response["body"])[-1])))
        (folder / f"{Path(path).stem}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        usages.append(used)
    if not usages:
        pytest.skip(f"no cassette under {FOLDER} at {COMMIT[:12]} in {REPO}")
    return folder, usages


def test_crush_runs_on_glm_count_what_z_ai_reported(runs: tuple[Path, list[list[tuple[str, dict]]]]) -> None:
    folder, per_run = runs
    calls = [usage for run in per_run for _, usage in run]
    assert (len(per_run), len(calls)) == (13, 44)
    result = run_audit([folder])
    assert {f.format for f in result.files} == {"http-capture"} and all(not f.skipped for f in result.files)
    models = {(r.provider, r.model): 0 for r in result.rows}
    for r in result.rows:
        models[(r.provider, r.model)] += 1
    assert models == {("zai", "glm-4.6"): 31, ("zai", "glm-4.5-air"): 13}
    t = result.totals
    assert t.requests == 44 and t.cache_write is None  # Z.AI reports no write count
    # Subset: the read is inside prompt_tokens; reasoning is inside completion_tokens.
    assert t.cache_read == sum(u["prompt_tokens_details"]["cached_tokens"] for u in calls) == 217_090
    assert t.input == sum(u["prompt_tokens"] - u["prompt_tokens_details"]["cached_tokens"] for u in calls) == 13_063
    assert t.output == sum(u["completion_tokens"] for u in calls) == 2_692


def test_glm_4_6_reads_to_the_token_and_into_the_previous_answer(runs: tuple[Path, list[list[tuple[str, dict]]]]) -> None:
    # What these calls tell of Z.AI's cache on glm-4.6 (the earlier recordings, 2025-10 to
    # 2026-04, agree): no read is a multiple of 64 (glm-5.2 reads only multiples of 64), so the
    # zai rules read glm-4.6 to the token; and every follow-up of the agent read the previous
    # prompt and the previous answer but 2 tokens: Crush sends the answer back verbatim
    # (reasoning_content and tool calls), and Z.AI keeps it after its prompt (caches_output).
    _, per_run = runs
    reads = [u["prompt_tokens_details"]["cached_tokens"] for run in per_run for _, u in run]
    assert all(reads) and not any(n % 64 == 0 for n in reads)
    agent = [[u for model, u in run if model == "glm-4.6"] for run in per_run]  # the title calls apart
    follow_ups = [(a, b) for run in agent for a, b in zip(run, run[1:])]
    assert len(follow_ups) == 18
    assert all(b["prompt_tokens_details"]["cached_tokens"] == a["prompt_tokens"] + a["completion_tokens"] - 2 for a, b in follow_ups)
    result = run_audit([runs[0]])
    glm = [r for r in result.rows if r.model == "glm-4.6"]
    assert all(r.expected_cache_read % 64 != 0 or r.expected_cache_read == 0 for r in glm)
    # The byte-level model keeps each answer after its prompt and reads into it where the next
    # body sends it back whole: 17 of the 18 follow-ups predicted within 1% (5 when it kept the
    # prompt only, every one short by about the answer), 15 within 0.2% (none). The one off
    # (7,767 for 7,239) follows a long tool result the token scale counts short.
    later = [r for f in sorted({r.file for r in glm}) for r in [g for g in glm if g.file == f][1:]]
    assert sorted(r.reported_cache_read for r in later) == sorted(b["prompt_tokens_details"]["cached_tokens"] for _, b in follow_ups)
    close = [abs(r.predicted_cache_read - r.reported_cache_read) / r.reported_cache_read for r in later]
    assert (sum(c <= 0.01 for c in close), sum(c <= 0.002 for c in close)) == (17, 15)
    assert sum(r.read_within for r in result.rows) == 37
    assert any("for 16 of them the next body of the lane sent it back whole" in n for n in result.notes), result.notes
