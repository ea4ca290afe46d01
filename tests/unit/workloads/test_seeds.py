"""Workload seeds: seed 0 is today's run byte for byte; other seeds vary the shape deterministically."""

import hashlib
import json
import random
from pathlib import Path

import pytest

from prefixbench.reports.entry import main
from prefixbench.workloads.runs.schema import observation_records, run_record
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.scripted.registry import WORKLOADS, execute, make_workload
from prefixbench.workloads.scripted.seed_coding import SeedCodingWorkload
from prefixbench.workloads.runs.sweep import SweepSpec, execute_planned, plan_sweep

DATA = Path(__file__).parent / "data"
#: Digests of every run record and observation of these sweeps, taken from the code before
#: seeds existed (commit 26d4df8); seed 0 must reproduce them exactly.
BEFORE_SEEDS = {
    "seed-coding": "731a54547761cfe66a6a93b460756633911b6f31b685fe6f6d02e7119e4f3c44",
    "thinking-tools": "b7aa8cbb3bd1dfeb71e4deae287e0684848861f59e3d10900b92f14bc4827286",
}
SPECS = {
    "seed-coding": SweepSpec(windows=(32_000, 128_000)),
    "thinking-tools": SweepSpec(
        workload="thinking-tools", windows=(32_000,), engines=("checkpoint", "ranges", "user-tail"),
        presets=("legacy", "patched"), profile="deepseek-relay",
    ),
}


def digest(spec: SweepSpec) -> str:
    h = hashlib.sha256()
    for run in [execute_planned(item) for item in plan_sweep(spec).runs]:
        record = run_record(run)
        record.pop("seed")  # the column seeds added; everything else is as before
        record.pop("tool_result_chars")  # the columns the bench added (context kept)
        record.pop("tool_result_chars_kept")
        record.pop("engine_warnings")  # the column engine warnings added (empty on these runs)
        record.pop("longest_idle_ms")  # the column idle gaps added (0 on these runs)
        assert record.pop("num_summaries_rejected") == 0  # the column refused summary calls added
        h.update(json.dumps(record, sort_keys=True).encode())
        for obs in observation_records(run):
            obs.pop("seed")
            obs.pop("cached_explicit_tokens")  # the columns explicit caches added (0 here)
            obs.pop("stored_token_ms")
            obs.pop("created_tokens")
            h.update(json.dumps(obs, sort_keys=True).encode())
    return h.hexdigest()


@pytest.mark.parametrize("name", list(SPECS))
def test_seed_0_reproduces_the_runs_from_before_seeds(name):
    assert digest(SPECS[name]) == BEFORE_SEEDS[name]


def test_seed_0_prints_the_default_table_exactly(tmp_path, capsys):
    assert main(["sweep", "--quiet", "--jobs", "2", "--seeds", "0", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out == (DATA / "default-table.txt").read_text()


@pytest.mark.parametrize("name", ["seed-coding", "thinking-tools", "subagents", "idle-gaps"])
def test_other_seeds_vary_the_shape_deterministically(name):
    window = 32_000
    engine = WORKLOADS[name].default_engine
    base = execute(make_workload(name, window), "patched", engine=engine)

    def prompts(seed):
        run = execute(make_workload(name, window, seed=seed), "patched", engine=engine)
        assert run.seed == seed
        return [o.prompt_tokens for o in run.observations]

    assert prompts(3) == prompts(3)
    assert prompts(3) != [o.prompt_tokens for o in base.observations]
    assert prompts(3) != prompts(4)


def test_seeds_never_touch_the_global_random_state():
    random.seed(1234)
    state = random.getstate()
    for seed in (1, 2):
        execute(SeedCodingWorkload(32_000, seed=seed), "legacy")
        execute(make_workload("thinking-tools", 32_000, seed=seed), "legacy", engine="checkpoint")
    assert random.getstate() == state


def test_seeded_seed_coding_keeps_the_pruner_contract():
    """Large results still overflow the rewrite-only budget by 100-600 chars; normal ones never do."""
    w = SeedCodingWorkload(128_000, seed=7)
    threshold = w.rewrite_threshold
    results = [w.step_shape(i)[1] for i in range(w.steps)]
    big = [r for r in results if r > threshold]
    assert big and all(threshold + 100 <= r <= threshold + 600 for r in big)
    assert all(r <= w.step_chars * 1.25 for r in results if r <= threshold)


@pytest.mark.parametrize("bad", [-1, True, 1.5])
def test_a_bad_seed_is_refused(bad):
    with pytest.raises(UserError, match="seed"):
        SeedCodingWorkload(32_000, seed=bad)
