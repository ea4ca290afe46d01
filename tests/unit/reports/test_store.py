"""The result store, resumed sweeps, the output manifest and executor-independent bytes."""

import pandas as pd
import pytest

from prefixbench.reports.entry import main
from prefixbench.reports.frames import observations_frame, runs_frame
from prefixbench.workloads.runs.schema import OBSERVATION_COLUMNS
from prefixbench.workloads.runs.manifest import MANIFEST, UNFINISHED
from prefixbench.workloads.runs.store import decode_run, encode_rows, encode_run
from prefixbench.workloads.scripted.registry import execute, make_workload
from prefixbench.workloads.runs.sweep import SweepSpec, plan_sweep, submission_order

SMALL = ["sweep", "--windows", "32k", "--presets", "legacy,patched", "--steps", "30", "--quiet"]


def tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_stored_run_comes_back_exactly():
    run = execute(make_workload("thinking-tools", 32_000, turns=1), "legacy", engine="ranges", profile="deepseek-relay")
    data = encode_run(run)
    assert encode_run(run) == data  # deterministic bytes
    record, observations = decode_run(data)
    expected = observations_frame([run])
    # What a worker hands back beside the bytes is exactly what decoding them gives.
    same_data, worker_record, worker_frame = encode_rows(run)
    assert same_data == data and worker_record == record
    pd.testing.assert_frame_equal(worker_frame, observations)
    assert runs_frame([run]).iloc[0].to_dict() == record
    pd.testing.assert_frame_equal(observations, expected)
    # Mixed columns ("" beside numbers) survive, so the CSV is byte-identical.
    assert observations.to_csv(index=False) == expected.to_csv(index=False)
    assert list(observations.columns) == list(OBSERVATION_COLUMNS) and (observations["status"] == 400).any()


def test_run_keys_name_the_full_spec():
    plan = plan_sweep(SweepSpec(windows=(32_000,), presets=("legacy", "patched"), seeds=(0, 1)))
    keys = [item.key for item in plan.runs]
    assert len(set(keys)) == 4
    again = plan_sweep(SweepSpec(windows=(32_000,), presets=("legacy", "patched"), seeds=(0, 1)))
    assert [item.key for item in again.runs] == keys
    other = plan_sweep(SweepSpec(windows=(32_000,), presets=("legacy",), cache="anthropic"))
    assert other.runs[0].key not in keys


def test_submission_order_is_longest_first():
    plan = plan_sweep(SweepSpec(windows=(32_000, 512_000, 128_000), presets=("legacy",)))
    order = submission_order(plan.runs)
    assert [plan.runs[i].workload.window for i in order] == [512_000, 128_000, 32_000]


def test_a_rerun_skips_stored_runs_and_fresh_recomputes(tmp_path, capsys):
    assert main([*SMALL, "--out", str(tmp_path)]) == 0
    first = tree(tmp_path)
    capsys.readouterr()
    assert main([*SMALL[:-1], "--out", str(tmp_path)]) == 0
    assert "2 of 2 runs already in" in capsys.readouterr().err
    assert tree(tmp_path) == first
    assert main([*SMALL[:-1], "--fresh", "--out", str(tmp_path)]) == 0
    assert "already in" not in capsys.readouterr().err
    assert tree(tmp_path) == first


def test_jobs_do_not_change_a_byte(tmp_path):
    argv = [*SMALL, "--seeds", "0-2"]
    assert main([*argv, "--jobs", "1", "--out", str(tmp_path / "one")]) == 0
    assert main([*argv, "--jobs", "2", "--out", str(tmp_path / "two")]) == 0
    one, two = tree(tmp_path / "one"), tree(tmp_path / "two")
    assert len(one) == 7 + 6 + 6 and one == two  # 7 outputs + manifest, the 6 outputs in .tables-*/, 6 stored runs


def test_dask_local_cluster_writes_the_same_bytes(tmp_path):
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    argv = [*SMALL, "--seeds", "0-1"]
    assert main([*argv, "--jobs", "1", "--out", str(tmp_path / "inline")]) == 0
    assert main([*argv, "--scheduler", "local", "--jobs", "2", "--out", str(tmp_path / "dask")]) == 0
    assert tree(tmp_path / "inline") == tree(tmp_path / "dask")


def test_the_manifest_removes_only_what_prefixbench_wrote(tmp_path, capsys):
    assert main(["sweep", "--windows", "32k,128k", "--presets", "legacy", "--steps", "30", "--quiet",
                 "--out", str(tmp_path)]) == 0
    (tmp_path / "notes.txt").write_text("mine")
    capsys.readouterr()
    assert main(["sweep", "--windows", "32k", "--presets", "legacy", "--steps", "30", "--out", str(tmp_path)]) == 0
    names = set(tree(tmp_path))
    assert "timeline-128k.png" not in names  # an earlier sweep's, not rewritten: removed
    assert len([n for n in names if n.startswith("store/")]) == 1  # the 128k run left the store too
    assert "notes.txt" in names  # never ours: kept
    err = capsys.readouterr().err
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "notes.txt" in warnings[0]
    assert MANIFEST in names and UNFINISHED not in names


def test_bad_scale_options_are_one_line(tmp_path, capsys):
    for argv, message in (
        (["--jobs", "0"], "--jobs: '0' must be 1 or more"),
        (["--seeds", "5-2"], "--seeds: '5-2' runs backwards"),
        (["--seeds", "0,0"], "given twice"),
        (["--seeds", "0-2,1"], "names a seed twice"),
    ):
        assert main([*SMALL, *argv, "--out", str(tmp_path)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "store").exists() or not any((tmp_path / "store").iterdir())


def test_a_foreign_file_named_like_an_optional_output_is_left_alone(tmp_path, capsys):
    (tmp_path / "cost.png").write_bytes(b"not ours")  # prefixbench writes cost.png only with --price
    assert main([*SMALL, "--out", str(tmp_path)]) == 0
    assert (tmp_path / "cost.png").read_bytes() == b"not ours"
    assert "cost.png" in capsys.readouterr().err
    assert main([*SMALL, "--out", str(tmp_path)]) == 0
    assert (tmp_path / "cost.png").read_bytes() == b"not ours"


def test_scheduler_without_dask_is_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    assert main([*SMALL, "--scheduler", "local", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'prefixbench[dask]'" in err[0]
    assert not (tmp_path / "o").exists()


def test_a_worker_with_other_code_is_refused(tmp_path, capsys, monkeypatch):
    from prefixbench.workloads.runs import land

    monkeypatch.setattr(land, "compute_runs", lambda items: [("0" * 24, b"", {}, None) for _ in items])
    assert main([*SMALL, "--jobs", "1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "install the same prefixbench on every worker" in err[0]
    assert not list((tmp_path / "store").glob("*.parquet"))


def test_a_scheduler_address_runs_on_that_cluster(tmp_path):
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    import logging

    argv = [*SMALL, "--presets", "legacy", "--seeds", "0-1"]
    assert main([*argv, "--jobs", "1", "--out", str(tmp_path / "inline")]) == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster:
        assert main([*argv, "--scheduler", cluster.scheduler_address, "--out", str(tmp_path / "remote")]) == 0
    assert tree(tmp_path / "inline") == tree(tmp_path / "remote")


def test_an_unreachable_scheduler_is_one_line(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed", reason="the dask extra is not installed")
    from prefixbench.workloads.runs import execute

    monkeypatch.setattr(execute, "CONNECT_TIMEOUT_S", 1)
    assert main([*SMALL, "--scheduler", "tcp://127.0.0.1:9", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot reach a Dask scheduler" in err[0]
