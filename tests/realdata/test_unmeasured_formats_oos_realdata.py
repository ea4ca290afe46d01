"""Real samples of formats measured before on few or none, read where they live (each skips,
naming its repository, commit and how to get it, without a git copy):

* Mooncake's synthetic trace (github.com/kvcache-ai/Mooncake,
  ``FAST25-release/traces/synthetic_trace.jsonl`` at commit
  ``3b5a594133958449a1feaf1c9e0fc1b553e34a28``, the file last changed 2025-02-21), from
  ``PREFIXBENCH_MOONCAKE_REPO``: 3,993 requests over 512-token blocks. The shared folder holds its
  conversation trace; its tool-agent trace is past the workplace snapshot's size limit.
* A real OpenHands 1.x event log: the persisted events of a PR-review run (2026-06-16,
  minimax-m2.7 through a LiteLLM proxy), trimmed and kept one a line as the software-agent-sdk's
  test data (github.com/OpenHands/software-agent-sdk,
  ``tests/sdk/conversation/goal/fixtures/events.jsonl`` at commit
  ``611629e6999ad398dc49c761721eefe18d5e6bd9``), from ``PREFIXBENCH_OPENHANDS_SDK_REPO``. Its
  usage is four ``stats`` updates, running totals: each step one call.

What is checked is the logs' own bookkeeping, recounted here from the raw files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at

MOONCAKE = Path(os.environ.get("PREFIXBENCH_MOONCAKE_REPO", "/work/.mirror/kvcache-ai+Mooncake/repo"))
MOONCAKE_COMMIT = "3b5a594133958449a1feaf1c9e0fc1b553e34a28"


def test_mooncake_synthetic_trace_reads_what_an_unbounded_block_cache_serves(tmp_path: Path) -> None:
    path = tmp_path / "synthetic_trace.jsonl"
    path.write_bytes(file_at(MOONCAKE, MOONCAKE_COMMIT, "FAST25-release/traces/synthetic_trace.jsonl",
                             "github.com/kvcache-ai/Mooncake", "PREFIXBENCH_MOONCAKE_REPO"))
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    # The recount: one namespace of 512-token blocks, never evicted; a request reads its leading
    # blocks sent before, at most its prompt.
    seen: set[int] = set()
    read = 0
    for row in rows:
        k = 0
        while k < len(row["hash_ids"]) and row["hash_ids"][k] in seen:
            k += 1
        read += min(k * 512, row["input_length"])
        seen.update(row["hash_ids"])
    prompt = sum(row["input_length"] for row in rows)
    assert (len(rows), prompt, read) == (3_993, 61_194_628, 39_852_661)
    result = run_audit([path])
    assert [f.format for f in result.files] == ["mooncake"]
    assert result.totals.requests == 3_993
    assert sum(r.predicted_cache_read for r in result.rows) == read
    assert sum(r.predicted_cache_read + r.predicted_uncached for r in result.rows) == prompt
    assert round(100 * result.totals.hit_ratio, 1) == 65.1
    assert result.totals.input is None  # the trace reports no usage: nothing to compare


OPENHANDS_SDK = Path(os.environ.get("PREFIXBENCH_OPENHANDS_SDK_REPO", "/work/.mirror/OpenHands+software-agent-sdk/repo"))
OPENHANDS_SDK_COMMIT = "611629e6999ad398dc49c761721eefe18d5e6bd9"


def test_openhands_sdk_event_log_calls_are_the_steps_of_its_running_totals(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(file_at(OPENHANDS_SDK, OPENHANDS_SDK_COMMIT, "tests/sdk/conversation/goal/fixtures/events.jsonl",
                             "github.com/OpenHands/software-agent-sdk", "PREFIXBENCH_OPENHANDS_SDK_REPO"))
    # The recount: the agent LLM's ("default") running totals, each step one call (its prompt and
    # output make the total's per_turn_token); LiteLLM's prompt count holds the reads.
    steps, before = [], (0, 0, 0, 0)
    for line in path.read_text().splitlines():
        event = json.loads(line)
        if event.get("key") != "stats":
            continue
        total = event["value"]["usage_to_metrics"]["default"]["accumulated_token_usage"]
        now = tuple(total[k] for k in ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens"))
        step = tuple(a - b for a, b in zip(now, before))
        assert step[0] + step[1] == total["per_turn_token"]
        steps.append(step)
        before = now
    assert steps == [(596, 775, 0, 0), (35_299, 185, 1_115, 0), (35_579, 195, 33_421, 0), (35_984, 192, 33_657, 0)]
    result = run_audit([path])
    t = result.totals
    assert ([f.format for f in result.files], t.requests) == (["openhands"], 4)
    assert (t.input, t.output, t.cache_read) == (107_458 - 68_193, 1_347, 68_193)
    assert [r.reported_cache_read for r in result.rows] == [0, 1_115, 33_421, 33_657]
    assert {(r.lane, r.lane_kind) for r in result.rows} == {("main", "main")}
    # MiniMax's rule predicts each read from the lane's last: the first and the last exact or
    # within 3%; the second and third read more than the previous call did.
    assert [r.predicted_cache_read for r in result.rows] == [0, 596, 1_115, 33_421]
    assert result.files[0].read_within == 2
