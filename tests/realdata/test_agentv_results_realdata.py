"""Agents' machine outputs an evaluation harness committed, read where they live (a local git copy;
never copied into this project, the test skips without it): github.com/EntityProcess/agentv keeps
its runs on the branch ``agentv/results/v1`` (commit ``7f93265071017ed8e1701d65a34fd6362c319e08``,
2026-07-04/05), each target's raw stdout in ``<run>/<case>/sample-1/stdout.txt``, and Entire's
checkpoints of its own development on ``entire/checkpoints/v1`` (commit
``47dca0eea369e545808f72dd9473c846f66dd79f``, Codex 0.140.0 to 0.142.5 on gpt-5.5). From
``PREFIXBENCH_AGENTV_REPO`` (default the workplace's mirror).

- ``codex app-server`` output (Codex 0.142.5, gpt-5.4-mini through a provider of the harness's,
  ephemeral threads: no rollout kept): one ``thread/tokenUsage/updated`` each; the audit's
  totals equal Codex's running total (before: unknown log format).
- ``pi --mode json`` and ``--mode rpc`` output (azure-openai-responses, gpt-5.4-mini): one call
  each; totals equal the assistant ``message_end`` usage.
- ``claude -p --output-format stream-json --include-partial-messages`` through a gateway
  (xiaomi/mimo-v2.5-pro, served by Novita): every ``assistant`` line's usage is zero, the
  ``message_delta`` stream event holds the call's counts, equal to the run's ``result``
  (before: nothing to audit).
- ``codex exec --json`` output (0.44 on: per-turn totals): refused in one line.
- The Codex rollouts: totals equal each rollout's final running total in all but one, where a
  turn the user interrupted left a call whose usage only the running total holds (88,335 input
  tokens, 69 output, no token_count of its own): the audit's note sets the two sums side by side
  and names the token count whose total rose by more than its call's usage.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import run_audit
from tests.realdata.mirrors import file_at

ENV = "PREFIXBENCH_AGENTV_REPO"
URL = "github.com/EntityProcess/agentv"
REPO = Path(os.environ.get(ENV, "/work/.mirror/EntityProcess+agentv/repo"))
RESULTS = "7f93265071017ed8e1701d65a34fd6362c319e08"
CHECKPOINTS = "47dca0eea369e545808f72dd9473c846f66dd79f"


def _stdout(run: str, tmp_path: Path) -> Path:
    path = tmp_path / f"{run.split('/')[0]}.txt"
    path.write_bytes(file_at(REPO, RESULTS, f"{run}/sample-1/stdout.txt", URL, ENV))
    return path


def _rollout(folder: str, tmp_path: Path) -> Path:
    """An Entire checkpoint's Codex rollout (``<folder>/full.jsonl``) on the checkpoints branch."""
    path = tmp_path / "full.jsonl"
    path.write_bytes(file_at(REPO, CHECKPOINTS, f"{folder}/full.jsonl", URL, ENV))
    return path


def _totals(result) -> tuple[int, int, int | None, int]:
    t = result.totals
    return (t.input, t.cache_read, t.cache_write, t.output)


#: codex app-server run: (input with the cached part, cached, output) of its running total.
APP_SERVER = {
    "2026-07-05T04-06-07-486Z/live-marker--d3476af3d9c2": (17_564, 3_456, 37),
    "2026-07-05T04-10-04-659Z/live-marker--d3476af3d9c2": (17_564, 4_480, 37),
    "2026-07-05T07-47-11-024Z/protocol-marker--c463928b536d": (13_727, 4_480, 19),
}


@pytest.mark.parametrize("run", sorted(APP_SERVER))
def test_codex_app_server_output_totals_its_running_total(run: str, tmp_path: Path) -> None:
    path = _stdout(run, tmp_path)
    updates = [json.loads(line)["params"]["tokenUsage"] for line in path.read_text().splitlines()
               if json.loads(line).get("method") == "thread/tokenUsage/updated"]
    assert len(updates) == 1
    total = updates[-1]["total"]
    assert (total["inputTokens"], total["cachedInputTokens"], total["outputTokens"]) == APP_SERVER[run]
    result = run_audit([path])
    (summary,) = result.files
    assert summary.format == "codex" and result.totals.requests == 1
    inp, cached, out = APP_SERVER[run]
    assert _totals(result) == (inp - cached, cached, None, out)  # Codex reports no write count
    assert any("codex app-server output (Codex 0.142.5)" in n for n in summary.notes)


#: pi --mode json (or rpc) run: (input, cache read, cache write, output) of its one call.
PI = {
    "2026-07-04T04-42-29-558Z/exact-token-local-endpoint--dae6fce648ad": (399, 0, 0, 22),
    "2026-07-05T03-20-57-440Z/live-marker--476d370441fe": (11_081, 0, 0, 23),
    "2026-07-05T03-49-47-220Z/pi-rpc-live-marker--efd4e6c8bdbc": (11_080, 0, 0, 23),
    "2026-07-05T07-46-29-603Z/protocol-marker--7d5f9ad1eb72": (3_523, 0, 0, 21),
    "2026-07-05T10-00-35-909Z/arithmetic-component-results--5ec23ecdf836": (8_560, 0, 0, 33),
    "2026-07-05T10-07-05-950Z/arithmetic-component-results--5ec23ecdf836": (8_558, 0, 0, 31),
}


@pytest.mark.parametrize("run", sorted(PI))
def test_pi_json_output_totals_its_replies_usage(run: str, tmp_path: Path) -> None:
    path = _stdout(run, tmp_path)
    replies = [e["message"] for e in map(json.loads, path.read_text().splitlines())
               if e.get("type") == "message_end" and e["message"].get("role") == "assistant"]
    own = tuple(sum(m["usage"][k] for m in replies) for k in ("input", "cacheRead", "cacheWrite", "output"))
    assert len(replies) == 1 and own == PI[run]
    result = run_audit([path])
    assert [f.format for f in result.files] == ["pi"]
    assert result.totals.requests == 1 and _totals(result) == (*own[:2], own[2] or None, own[3])  # no write count: None


def test_a_partial_messages_stream_through_a_gateway_counts_its_message_delta(tmp_path: Path) -> None:
    path = _stdout("2026-07-05T03-23-03-551Z/live-marker--e0727bb7d9b5", tmp_path)
    events = [json.loads(line) for line in path.read_text().splitlines()]
    replies = [e["message"]["usage"] for e in events if e.get("type") == "assistant"]
    assert replies and all(u["input_tokens"] == 0 and u["output_tokens"] == 0 for u in replies)
    (run,) = [e for e in events if e.get("type") == "result"]
    result = run_audit([path])
    assert result.totals.requests == 1
    assert _totals(result) == (run["usage"]["input_tokens"], 0, None, run["usage"]["output_tokens"]) == (19_660, 0, None, 33)


@pytest.mark.parametrize("run", ["2026-07-04T03-56-11-143Z/exact-token--f825cf5e3a6c",
                                 "2026-07-05T03-22-09-996Z/live-marker--6d544e3a09d8"])
def test_codex_exec_json_output_is_refused_in_one_line(run: str, tmp_path: Path) -> None:
    path = _stdout(run, tmp_path)
    with pytest.raises(UserError) as caught:
        run_audit([path])
    assert str(caught.value).startswith(f"{path}:1: Codex exec --json output: it reports usage per turn only")


#: checkpoint folder: (Codex version, calls, reads within 3%); totals equal the final running total.
ROLLOUTS = {
    "f4/771ece9d37/0": ("0.142.5", 182, 167),
    "dd/08c8dc0d47/0": ("0.142.4", 29, 27),
    "0b/9f2ac6f3aa/3": ("0.142.4", 213, 197),  # 196 before a client tool_search_output timed the next call
}


@pytest.mark.parametrize("folder", sorted(ROLLOUTS))
def test_codex_rollouts_total_their_running_total(folder: str, tmp_path: Path) -> None:
    version, calls, within = ROLLOUTS[folder]
    path = _rollout(folder, tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert {e["payload"]["cli_version"] for e in lines if e.get("type") == "session_meta"} == {version}
    final = [e["payload"]["info"]["total_token_usage"] for e in lines
             if e.get("type") == "event_msg" and e["payload"].get("type") == "token_count" and e["payload"].get("info")][-1]
    result = run_audit([path])
    t = result.totals
    assert t.requests == calls and result.files[0].read_within == within
    assert (t.input + t.cache_read + (t.cache_write or 0), t.cache_read, t.output) == (
        final["input_tokens"], final["cached_input_tokens"], final["output_tokens"])


def test_an_interrupted_call_shows_only_in_the_running_total(tmp_path: Path) -> None:
    path = _rollout("3c/162d1d8ad4/1", tmp_path)
    result = run_audit([path])
    (summary,) = result.files
    assert result.totals.requests == 132
    assert "Codex's own running total: input 9,795,152 / output 40,293 tokens (counted here 9,706,817 / 40,224)" in summary.notes
    assert any(n.startswith("1 token count(s) whose running total rose by more than their call's usage (line 611: "
                            "88,335 input / 69 output tokens, after an interrupted turn)") for n in summary.notes)
