"""A Codex rollout committed to a public repository and audited out of sample:
github.com/HBClab/boost-act at commit ``dc1e9df0b76f6f78b7d0a5191a8cef592da6d97a`` (2026-03-10),
``feature/session-signature-fix/.codex/sessions/2026/03/10/rollout-...-019cd856-....jsonl``: one
session of Codex CLI 0.92.0, gpt-5.2-codex on OpenAI, 28 calls, no compaction. From ``PREFIXBENCH_BOOST_ACT_REPO``, else the
look-up tools' mirror; the test skips without it.

What is checked: the audit's totals equal the rollout's own sums (recounted here from its token
counts) and how many reads it predicts within 3%.
"""

from __future__ import annotations

from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import codex_recount, file_at, mirror, read_within

URL, ENV, REPO = mirror("HBClab/boost-act", "PREFIXBENCH_BOOST_ACT_REPO")
COMMIT = "dc1e9df0b76f6f78b7d0a5191a8cef592da6d97a"
ROLLOUT = ("feature/session-signature-fix/.codex/sessions/2026/03/10/"
           "rollout-2026-03-10T10-20-51-019cd856-2be3-7122-864a-e9ea7437472a.jsonl")


def test_a_committed_codex_0_92_rollout_counts_what_its_token_counts_sum(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_bytes(file_at(REPO, COMMIT, ROLLOUT, URL, ENV))
    result = run_audit([path])
    assert {(m.provider, m.model) for m in result.models} == {("openai", "gpt-5.2-codex")}
    t = result.totals
    assert (t.requests, t.input, t.cache_read, t.output) == codex_recount([path]) == (28, 24_548, 439_936, 7_507)
    # 20 of 28 within 3%: the first call read a 7,296-token head cached before the log; the 7
    # others read an earlier call's level again while the prompt grew (9,728 four times in a
    # row; 14,848, 22,016 and 23,040 once each), with nothing changed in the log
    # (provider-best-effort).
    assert read_within(result) == 20
