"""Real traffic through Charm's gateway (``hyper.charm.land``, Crush's ``hyper`` provider), read
where it lives: the VCR cassettes of Crush's agent tests on glm-5.1
(github.com/charmbracelet/crush, ``internal/agent/testdata/TestCoderAgent/glm-5.1/*.yaml`` at
commit ``15d2e1a3716d8f9fea7c75bfe7c7fb9562627567`` on its main, recorded 2026-07-29), from a
local git copy (``PREFIXBENCH_CRUSH_REPO``, default the workplace's mirror). Never copied into
this project; the test skips without them.

Each of the 13 cassettes is one run of Crush's coder agent: a title call (gpt-oss-120b) and the
agent's glm-5.1 calls, all to ``hyper.charm.land/v1/chat/completions``. The gateway's
``prompt_tokens`` leaves the cached part out, against the spec (``total_tokens`` is
``prompt_tokens + cached_tokens + completion_tokens`` in each of them); on the earlier code the
first record whose cached tokens exceed it stopped the audit (exit 2). Calls are made into
capture lines as in ``test_crush_recordings_realdata.py`` (2 s apart, runs a minute apart).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import files_at, git

REPO = Path(os.environ.get("PREFIXBENCH_CRUSH_REPO", "/work/.mirror/charmbracelet+crush/repo"))
COMMIT = "15d2e1a3716d8f9fea7c75bfe7c7fb9562627567"
FOLDER = "internal/agent/testdata/TestCoderAgent/glm-5.1/"
_USAGE = re.compile(r'"usage":(\{"prompt_tokens".*?\}\})')


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    """The runs as capture files, and the last usage of each call's stream."""
    yaml = pytest.importorskip("yaml")
    listed = files_at(REPO, COMMIT, "github.com/charmbracelet/crush", "PREFIXBENCH_CRUSH_REPO")
    folder = tmp_path_factory.mktemp("hyper")
    usages = []
    for n, path in enumerate(sorted(p for p in listed if p.startswith(FOLDER))):
        interactions = yaml.safe_load(git(REPO, "show", f"{COMMIT}:{path}").stdout)["interactions"]
        lines = []
        for k, interaction in enumerate(i for i in interactions if i["request"]["url"].endswith("/chat/completions")):
            request, response = interaction["request"], interaction["response"]
            sent = 1_785_283_200.0 + 60 * n + 2 * k
            lines.append({"request": {"timestamp": sent, "method": "POST", "url": request["url"], "body": json.loads(request["body"])},
                          "response": {"timestamp": sent + 1, "status_code": response["code"],
                                       "headers": {"content-type": "text/event-stream"}, "body_raw": response["body"]}})
            usages.append(json.loads(_USAGE.findall(response["body"])[-1]))
        (folder / f"{Path(path).stem}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    if not usages:
        pytest.skip(f"no cassette under {FOLDER} at {COMMIT[:12]} in {REPO}")
    return folder, usages


def test_hyper_prompt_tokens_leave_the_cached_part_out_and_are_read_so(runs: tuple[Path, list[dict]]) -> None:
    folder, usages = runs
    cached = [u.get("prompt_tokens_details", {}).get("cached_tokens") for u in usages]
    assert len(usages) == 44 and sum(c is not None for c in cached) == 39
    above = sum(c is not None and c > u["prompt_tokens"] for c, u in zip(cached, usages))
    assert above == 38
    assert all(u["total_tokens"] == u["prompt_tokens"] + (c or 0) + u["completion_tokens"] for c, u in zip(cached, usages))
    result = run_audit([folder])  # exit 2 on the earlier code: "cached (128) and written (0) tokens exceed input tokens (96)"
    t = result.totals
    # The log's own sums, read exclusive: the uncached part is prompt_tokens, the read cached_tokens.
    assert t.requests == 44 and (t.cache_write or 0) == 0
    assert t.input == sum(u["prompt_tokens"] for u in usages) == 21_440
    assert t.cache_read == sum(c or 0 for c in cached) == 251_904
    assert t.output == sum(u["completion_tokens"] for u in usages) == 4_066
    assert any(n.startswith("hyper.charm.land/v1/chat/completions: the OpenAI-shaped prompt count") and "(38 of 39 responses" in n
               for n in result.notes), result.notes
    assert any(n.startswith("44 call(s) through hyper.charm.land (Charm's Hyper), a gateway") for n in result.notes)
    # Reads predicted within 3%: 28 of the 44 (28 of the 31 glm-5.1 calls; none of the title
    # calls, each the first of its run).
    glm = [r for r in result.rows if r.model == "glm-5.1"]
    assert (sum(r.read_within for r in result.rows), sum(r.read_within for r in glm), len(glm)) == (28, 28, 31)
