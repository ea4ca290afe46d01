"""OpenCode sessions (its exports) Entire checkpointed into public repositories' checkpoint
branches (``refs/heads/entire/checkpoints/v1``, ``<xx>/<id>/<n>/full.jsonl`` beside Entire's
``metadata.json``), read where they live, never copied into this project; a test skips without
the mirror.

- github.com/The-Best-Codes/bestcodes.dev (Entire 0.8.42, 2026-07-16 to 08-11): OpenCode 1.18.3,
  1.18.15 and 1.18.16 on deepseek-v4-flash-free through OpenCode Zen.
- github.com/iyaki/reglint (Entire 0.4.9, 2026-03): OpenCode 1.2.16 on gpt-5.2-codex through
  GitHub Copilot (``providerID`` github-copilot), its reasoning inside output (each step's
  ``total`` shows it). Its cache often reads less than the previous prompt, or nothing, with
  nothing changed: the provider's own misses, as the audit names them.

What is checked: the audit's totals equal the steps' own sums (reasoning billed as output where
it is not already inside it) and Entire's sums (its output leaves OpenCode's separate reasoning
out); Entire counts a call the session does not log (a failed one) in three of the six. Reads
within 3% measured 2026-12-05: 137 of 144 (OpenCode 1.18 via Zen), 32 of 47 (GitHub Copilot).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at

#: (env var, repository, checkpoint commit, session folder): (OpenCode version, model, calls,
#: (input, cache read, cache write, output), reasoning outside that output, reads within 3%,
#: the calls Entire counted).
SESSIONS = {
    ("PREFIXBENCH_BESTCODES_REPO", "The-Best-Codes/bestcodes.dev", "9f7d8b234c451b617c32d48d35f49a73b858654a", "27/240dc223d2/0"):
        ("1.18.15", "opencode/deepseek-v4-flash-free", 51, (141_277, 3_005_312, 0, 18_869), 8_930, 48, 55),
    ("PREFIXBENCH_BESTCODES_REPO", "The-Best-Codes/bestcodes.dev", "9f7d8b234c451b617c32d48d35f49a73b858654a", "bf/cfcff0517c/0"):
        ("1.18.16", "opencode/deepseek-v4-flash-free", 23, (81_964, 777_216, 0, 26_946), 0, 21, 24),
    ("PREFIXBENCH_BESTCODES_REPO", "The-Best-Codes/bestcodes.dev", "9f7d8b234c451b617c32d48d35f49a73b858654a", "55/d262fed8cf/0"):
        ("1.18.3", "opencode/deepseek-v4-flash-free", 70, (57_197, 3_379_968, 0, 20_320), 8_965, 68, 71),
    ("PREFIXBENCH_REGLINT_REPO", "iyaki/reglint", "474767cc012c9d70b67b57dbda269ed2042d0a70", "14/fef5d7e9f9/0"):
        ("1.2.16", "gpt-5.2-codex", 14, (205_979, 595_072, 0, 9_020), 0, 10, 14),
    ("PREFIXBENCH_REGLINT_REPO", "iyaki/reglint", "474767cc012c9d70b67b57dbda269ed2042d0a70", "14/fef5d7e9f9/1"):
        ("1.2.16", "gpt-5.2-codex", 19, (115_697, 645_376, 0, 6_599), 0, 12, 19),
    ("PREFIXBENCH_REGLINT_REPO", "iyaki/reglint", "474767cc012c9d70b67b57dbda269ed2042d0a70", "e3/ebb5db061b/0"):
        ("1.2.16", "gpt-5.2-codex", 14, (27_468, 283_776, 0, 13_936), 0, 10, 14),
}


def _own_sums(export: dict) -> tuple[int, tuple[int, int, int, int], int]:
    """(steps, (input, read, write, output with reasoning), reasoning not inside output) as stored."""
    steps, sums, outside = 0, [0, 0, 0, 0], 0
    for message in export["messages"]:
        for part in message.get("parts", []):
            if part.get("type") != "step-finish":
                continue
            t = part["tokens"]
            steps += 1
            reasoning = t.get("reasoning") or 0
            if reasoning and t.get("total") == t["input"] + t["cache"]["read"] + t["cache"]["write"] + t["output"]:
                reasoning = 0  # the step's total shows it inside output
            outside += reasoning
            sums = [a + b for a, b in zip(sums, (t["input"], t["cache"]["read"], t["cache"]["write"], t["output"] + reasoning))]
    return steps, tuple(sums), outside


@pytest.mark.parametrize("where", sorted(SESSIONS), ids=lambda w: f"{w[1].split('/')[1]}-{w[3].replace('/', '')}")
def test_entire_checkpointed_opencode_exports_count_what_the_steps_sum(where: tuple[str, str, str, str], tmp_path: Path) -> None:
    env, repo, commit, folder = where
    version, model, calls, sums, outside, within, entire_calls = SESSIONS[where]
    mirror, url = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo")), f"github.com/{repo}"
    path = tmp_path / "full.jsonl"
    path.write_bytes(file_at(mirror, commit, f"{folder}/full.jsonl", url, env))
    meta = json.loads(file_at(mirror, commit, f"{folder}/metadata.json", url, env))
    export = json.loads(path.read_text())
    assert export["info"]["version"] == version
    assert _own_sums(export) == (calls, sums, outside)
    result = run_audit([path])
    assert [f.format for f in result.files] == ["opencode"]
    assert {r.model for r in result.rows} == {model}
    t = result.totals
    assert (t.requests, (t.input, t.cache_read, (t.cache_write or 0), t.output)) == (calls, sums)
    used = meta["token_usage"]
    assert used["api_call_count"] == entire_calls
    assert (used["input_tokens"], used["cache_read_tokens"], used["cache_creation_tokens"], used["output_tokens"] + outside) == sums
    assert result.files[0].read_within == within


def test_the_sessions_sum_as_the_docstring_says() -> None:
    zen = [s for s in SESSIONS.values() if s[0].startswith("1.18")]
    copilot = [s for s in SESSIONS.values() if s[1] == "gpt-5.2-codex"]
    assert (sum(s[2] for s in zen), sum(s[5] for s in zen)) == (144, 137)
    assert (sum(s[2] for s in copilot), sum(s[5] for s in copilot)) == (47, 32)
    assert sum(s[6] != s[2] for s in SESSIONS.values()) == 3
