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

* mini-swe-agent 1.15.0 on SWE-bench Verified with gemini-3-pro-preview (2025-11-18, 500 runs of
  a submission reaching 74%), committed to github.com/gruckion/mini-swe-agent
  (``swebench_results/20251118_gemini-3-pro-74pct/trajs/`` at commit
  ``d12a71affd95403b036b2bdbd827349b77bfffb9``), from ``PREFIXBENCH_GRUCKION_MINI_SWE_AGENT_REPO``:
  each response as OpenRouter returned it (its upstream: ``Google`` or ``Google AI Studio``), 16
  runs through Portkey (``@google/...``, no cost). The whole folder (35 s here) gives 20,163
  calls, one per API call the runs counted: input 53,982,621, output 5,556,752, reads 279,065,308
  (the responses' own sums), $230.46 at list prices, OpenRouter's own ``cost`` on its 19,584 calls
  equal to list prices there to the cent ($224.4892); 14,747 reads within 3% (5,370 before the
  reads were counted in the upstream's blocks: 2,016 tokens through Vertex AI, 4,032 through AI
  Studio and Portkey). The test reads every tenth run.

What is checked is the logs' own bookkeeping, recounted here from the raw files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from prefixbench.workloads.audit.core import load_trace, run_audit
from tests.realdata.mirrors import file_at, files_at

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


GRUCKION = Path(os.environ.get("PREFIXBENCH_GRUCKION_MINI_SWE_AGENT_REPO", "/work/.mirror/gruckion+mini-swe-agent/repo"))
GRUCKION_COMMIT = "d12a71affd95403b036b2bdbd827349b77bfffb9"
GEMINI_RUNS = "swebench_results/20251118_gemini-3-pro-74pct/trajs/"


def test_mini_swe_agent_gemini_3_pro_runs_count_what_the_responses_sum(tmp_path: Path) -> None:
    url, env = "github.com/gruckion/mini-swe-agent", "PREFIXBENCH_GRUCKION_MINI_SWE_AGENT_REPO"
    names = sorted(n for n in files_at(GRUCKION, GRUCKION_COMMIT, url, env) if n.startswith(GEMINI_RUNS) and n.endswith(".traj.json"))
    assert len(names) == 500
    calls = uncached = output = read = api_calls = 0
    for name in names[::10]:
        path = tmp_path / Path(name).name
        path.write_bytes(file_at(GRUCKION, GRUCKION_COMMIT, name, url, env))
        doc = json.loads(path.read_text())
        api_calls += doc["info"]["model_stats"]["api_calls"]
        for message in doc["messages"]:
            usage = ((message.get("extra") or {}).get("response") or {}).get("usage")
            if usage:
                # OpenAI-shaped: the prompt count holds the cached part.
                cached = usage["prompt_tokens_details"]["cached_tokens"]
                calls, read = calls + 1, read + cached
                uncached, output = uncached + usage["prompt_tokens"] - cached, output + usage["completion_tokens"]
    assert (calls, api_calls) == (2_001, 2_001)
    result = run_audit([tmp_path])
    t = result.totals
    assert {f.format for f in result.files} == {"swe-agent"}
    assert (t.requests, t.input, t.output, t.cache_read) == (calls, uncached, output, read) == (2_001, 5_234_291, 548_638, 26_537_658)
    assert {(r.provider, r.model) for r in result.rows} == {("gemini", "gemini-3-pro-preview")}
    # Reads climb in whole blocks of the upstream's previous prompt (2,016 tokens through Vertex
    # AI, every second one through AI Studio and Portkey: 497 within 3% when the audit predicted
    # nearly the whole previous prompt); a run's calls switch between Vertex AI and AI Studio, each
    # a cache of its own. Most misses are put to the provider's best effort.
    within = sum(r.read_error is not None and abs(r.read_error) <= 0.03 for r in result.rows)
    assert within == sum(f.read_within for f in result.files) == 1_469
    assert {r.read_step for r in load_trace([tmp_path])[0]} == {2016, 4032}
