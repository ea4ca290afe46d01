"""Codex CLI rollouts their authors committed as ``codex-session.jsonl`` (hackathon and grant
submissions that asked for the agent session), read where they live: a local git copy of each
repository (never copied into this project; each test skips without it). OpenAI's own API,
2026-04 to 2026-07, Codex 0.114 to 0.144, gpt-5.4 to gpt-5.6-sol:

* github.com/AkashJana18/edgerunner (Codex 0.144.1, gpt-5.6-sol and gpt-5.6-luna, 2026-07-10, 173
  calls), ``PREFIXBENCH_EDGERUNNER_REPO``;
* github.com/swarnasn29/soulpass (Codex 0.122.0, gpt-5.4, 2026-04-21, 85 calls),
  ``PREFIXBENCH_SOULPASS_REPO``;
* github.com/Krosss0001/rave-era-project (Codex 0.125.0, gpt-5.5, 2026-04-26, 69 calls),
  ``PREFIXBENCH_RAVE_ERA_REPO``;
* github.com/uzaxirr/raze (Codex 0.114.0, gpt-5.4, 2026-03-12, 18 calls), ``PREFIXBENCH_RAZE_REPO``.

Two of them idle more than an hour between calls, which is what OpenAI's cache lifetimes are
measured by: gpt-5.4 on the in-memory default (2026-04) read only the shared head after 2h13m;
gpt-5.6-sol, whose 30 min is documented as a minimum, read all but 896 tokens of the previous
prompt after 1h05m.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at

#: env var: (repository, commit, calls, (input with the cached part, cached, output) of Codex's
#: last running total, reads within 3%), counted from the files.
SESSIONS = {
    "PREFIXBENCH_EDGERUNNER_REPO": (
        "AkashJana18/edgerunner", "fe59a88f62f473797ac88b35260a00cabe8801f0", 173, (35_779_173, 34_132_736, 98_116), 159,
    ),
    "PREFIXBENCH_SOULPASS_REPO": (
        "swarnasn29/soulpass", "12c056d3476363d4c491ccb52716328467ff5f66", 85, (12_710_499, 12_212_608, 47_484), 79,
    ),
    "PREFIXBENCH_RAVE_ERA_REPO": (
        "Krosss0001/rave-era-project", "c332b1a71ed38c443a9d3a4a7c2d531131c747fe", 69, (6_890_784, 6_368_128, 30_615), 57,
    ),
    "PREFIXBENCH_RAZE_REPO": ("uzaxirr/raze", "413af633008c7234fb3055019605eb3ca348e00f", 18, (1_257_132, 1_160_576, 19_360), 17),
}
HOUR_MS = 3_600_000


def _session(env: str, tmp_path: Path) -> Path:
    repo, commit = SESSIONS[env][:2]
    mirror = Path(os.environ.get(env, f"/work/.mirror/{repo.replace('/', '+')}/repo"))
    path = tmp_path / "codex-session.jsonl"
    path.write_bytes(file_at(mirror, commit, "codex-session.jsonl", f"github.com/{repo}", env))
    return path


def _last_total(path: Path) -> dict:
    totals = [
        record["payload"]["info"]["total_token_usage"]
        for record in map(json.loads, path.read_text(encoding="utf-8").splitlines())
        if record.get("type") == "event_msg" and record["payload"].get("type") == "token_count" and record["payload"].get("info")
    ]
    return totals[-1]


@pytest.mark.parametrize("env", sorted(SESSIONS))
def test_codex_session_counts_codexs_running_total_and_its_reads_are_predicted(env: str, tmp_path: Path) -> None:
    _, _, calls, (prompt, cached, output), within = SESSIONS[env]
    path = _session(env, tmp_path)
    total = _last_total(path)
    assert (total["input_tokens"], total["cached_input_tokens"], total["output_tokens"]) == (prompt, cached, output)
    result = run_audit([path])
    assert [f.format for f in result.files] == ["codex"]
    t = result.totals
    assert t.requests == calls
    # Subset usage: the cached part is inside Codex's input count.
    assert (t.input + t.cache_read, t.cache_read, t.output, t.cache_write) == (prompt, cached, output, 0)
    assert {r.provider for r in result.rows} == {"openai"}
    assert result.files[0].read_within == within


def test_gpt_5_4_on_the_in_memory_default_read_only_the_head_after_two_hours(tmp_path: Path) -> None:
    result = run_audit([_session("PREFIXBENCH_SOULPASS_REPO", tmp_path)])
    (late,) = [r for r in result.rows if r.gap_ms is not None and r.gap_ms > HOUR_MS]
    # Sent 2026-04-21, before the API reference made 24 h the default (2026-06-01): the
    # conversation's entry was gone after 2h13m, only Codex's 11,648-token head was read (kept
    # warm elsewhere: the lane start read it too, two cold points that agree, so the model reads
    # it there; it predicted 0 while the compaction's first call, 512 short of the head, counted
    # as a cold point).
    assert (late.model, late.gap_ms // 60_000, late.reported_cache_read, late.predicted_cache_read) == ("gpt-5.4", 132, 11_648, 11_648)
    assert (late.cause, late.loss_class) == ("ttl-expired", "recoverable")


def test_gpt_5_6_kept_the_conversation_past_its_30_minutes(tmp_path: Path) -> None:
    result = run_audit([_session("PREFIXBENCH_EDGERUNNER_REPO", tmp_path)])
    late = [r for r in result.rows if r.gap_ms is not None and r.gap_ms > HOUR_MS]
    assert [(r.model, r.gap_ms // 60_000) for r in late] == [("gpt-5.6-sol", 65), ("gpt-5.6-luna", 1119)]
    kept = late[0]
    # 1h05m after the previous call it read 94,976 of the 95,872 tokens that call left cached: the
    # 30 min the model gives GPT-5.6 (documented as a minimum) is why it predicts 0. The 896
    # tokens it did not read are OpenAI's own shortfall, not an expiry (main said ttl-expired).
    assert (kept.reported_cache_read, kept.predicted_cache_read, kept.expected_cache_read) == (94_976, 0, 95_872)
    assert (kept.cause, kept.loss_class) == ("provider-best-effort", "unavoidable")
    # After 18.6 h, on gpt-5.6-luna after gpt-5.6-sol, only the 11,008-token head was read.
    assert (late[1].reported_cache_read, late[1].cause) == (11_008, "model-changed")
