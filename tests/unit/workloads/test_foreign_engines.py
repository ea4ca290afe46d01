"""Engines written from the docs alone by another team (tests/foreign_engines.py), gated as the
docs say: each verdict names what the engine really did, and each failure of the engine itself
is one line and exit 2 that leaves standard output to the command."""

from __future__ import annotations

import json

import pytest

from prefixbench.reports import trace as check_trace
from prefixbench.reports.entry import main
from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.engine import run_engine_specs

ORPHAN = "HTTP 400 Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"


def ref(name: str) -> str:
    return f"tests.foreign_engines:{name}"


def verdicts(engine: str, profile: str = "deepseek-official") -> dict[str, tuple[Verdict, str]]:
    results = run_engine_specs(ref(engine), [32_000], ["lenient", profile])
    return {r.spec: (r.verdict, r.figure) for r in results if r.profile == profile}


@pytest.mark.parametrize("engine", ["swaps_first_pair", "drops_first_call_row"])
@pytest.mark.parametrize("profile", ["deepseek-official", "deepseek-relay"])
def test_a_strict_profile_refuses_a_tool_result_that_answers_no_call_before_it(engine, profile):
    # Fails on main: the strict profiles checked reasoning only, so moving a result before its
    # call, or dropping the call's row, passed strict-profile-accepts.
    verdict, figure = verdicts(engine, profile)["strict-profile-accepts"]
    assert verdict is Verdict.VIOLATED, figure
    assert f"first request #25 (conversation): {ORPHAN} (message 1: tool result " in figure


def test_the_reordering_engine_is_cache_honest_and_the_default_profile_catches_it_too():
    # Fails on integ54: under lenient the reordered pair was accepted and cached, and only a
    # strict profile refused it; every provider refuses it, so the default profile does too.
    lenient = {r.spec: r for r in run_engine_specs(ref("swaps_first_pair"), [32_000]) if r.workload == "thinking-tools"}
    assert lenient["no-silent-rewrite"].verdict is Verdict.PASS
    assert lenient["tool-pairs-intact"].verdict is Verdict.VIOLATED
    assert f"first request #25 (conversation): {ORPHAN} (message 1: tool result " in lenient["tool-pairs-intact"].figure


def test_prompts_over_the_window_fail_window_respected_though_refused_first_for_reasoning():
    # Fails on main: every request over the window was refused first for its reasoning, and the
    # spec passed with "largest prompt 98,... tokens" in a 32k window.
    verdict, figure = verdicts("strips_reasoning")["window-respected"]
    assert verdict is Verdict.VIOLATED, figure
    assert figure.startswith("103 of 164 requests over the context window; first request #61 (conversation): 32,400 tokens > 32,000 maximum")
    assert "(refused first with HTTP 400 The reasoning_content in the thinking mode must be passed back" in figure
    # The same requests under the lenient profile: refused for their length, the same count.
    lenient = {r.spec: r for r in run_engine_specs(ref("strips_reasoning"), [32_000]) if r.workload == "thinking-tools"}
    assert lenient["window-respected"].figure.startswith("103 of 164 requests over the context window")


def test_an_engine_that_prints_leaves_standard_output_to_the_command(tmp_path, capsys):
    # Fails on main: the engine's prints went to stdout, between check's lines and into
    # sweep --format json, which no longer parsed.
    argv = ["sweep", "--engine", ref("prints"), "--windows", "32k", "--out", str(tmp_path), "--quiet", "--format", "json"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert [run["engine"] for run in json.loads(out)] == ["prints"]
    assert "debug: factory called" in err and "debug: view" in err
    assert main(["check", "--engine", ref("prints"), "--windows", "32k"]) == 1  # it never compacts
    out, err = capsys.readouterr()
    assert all(line[:4] in ("PASS", "FAIL", "SKIP") for line in out.splitlines()[:-1]), out[:300]
    assert "debug: before_step" in err


@pytest.mark.parametrize(
    "engine, line",
    [
        # Fails on main: sys.exit(3) in the engine ended prefixbench with status 3 and no word.
        ("exits", "engine exits (tests.foreign_engines:exits): before_step() raised SystemExit in tests/foreign_engines.py:110 at step 3 (seed-coding, 32k): "
                  "the engine called sys.exit(3); an engine does not end the command"),
        # Fails on main: a request with no message passed every spec.
        ("empty_view", "engine empty-view (tests.foreign_engines:empty_view): view() returned an empty tuple at step 2 "
                       "(seed-coding, 32k): a request carries at least one message"),
    ],
)
def test_an_engine_that_exits_or_sends_nothing_is_one_line_exit_2(capsys, engine, line):
    assert main(["check", "--engine", ref(engine), "--windows", "32k"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"prefixbench: error: {line}\n"


@pytest.mark.parametrize(
    "source, line",
    [
        ("import os\nx = (\n", "SyntaxError in team_engine.py:2: '(' was never closed"),
        ("def factory(window, options):\n    return 1\n      oops\n", "IndentationError in team_engine.py:3: unexpected indent"),
    ],
)
def test_an_engine_module_that_does_not_compile_names_its_file_and_line(tmp_path, monkeypatch, capsys, source, line):
    # Fails on main: the line ended "(SyntaxError: '(' was never closed (team_engine.py, line 2))", not
    # in the file:line form of every other load error.
    (tmp_path / "team_engine.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["check", "--engine", "team_engine:factory", "--windows", "32k"]) == 2
    assert capsys.readouterr().err == f"prefixbench: error: --engine team_engine:factory: cannot import 'team_engine' ({line})\n"


def test_an_engine_module_that_fails_to_import_names_its_file_and_line(tmp_path, monkeypatch, capsys):
    # Fails on main: the line named the missing module, not the engine's file that imported it.
    (tmp_path / "team_engine.py").write_text("import os\nimport team_helpers_not_installed\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["check", "--engine", "team_engine:factory", "--windows", "32k"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "prefixbench: error: --engine team_engine:factory: cannot import 'team_engine' (ModuleNotFoundError in "
        "team_engine.py:2: No module named 'team_helpers_not_installed')\n"
    )


def test_check_engine_says_which_case_a_slow_engine_is_on(tmp_path, monkeypatch, capsys):
    # Fails on main: check --engine printed nothing until every case had run.
    monkeypatch.setattr(check_trace, "CHECK_PROGRESS_SECONDS", 0.05)
    config = tmp_path / "engines.toml"
    config.write_text(f'["{ref("slow_first_step")}"]\nseconds = 0.3\n')
    argv = ["check", "--engine", ref("slow_first_step"), "--windows", "32k", "--engine-config", str(config)]
    assert main(argv) == 1  # it never compacts
    out, err = capsys.readouterr()
    assert "prefixbench: check 0/2 runs done, 1 running, 0:00 elapsed, ETA -, running tests.foreign_engines:slow_first_step 32k-seed-coding-lenient" in err
    assert err.splitlines()[-1].startswith("prefixbench: check 2/2 runs done")
    assert "runs done" not in out


def test_check_engine_quiet_prints_no_progress(tmp_path, monkeypatch, capsys):
    # Fails on main: check had no --quiet.
    monkeypatch.setattr(check_trace, "CHECK_PROGRESS_SECONDS", 0.05)
    config = tmp_path / "engines.toml"
    config.write_text(f'["{ref("slow_first_step")}"]\nseconds = 0.3\n')
    argv = ["check", "--engine", ref("slow_first_step"), "--windows", "32k", "--engine-config", str(config), "--quiet"]
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert err == "" and "FAIL" in out


def test_a_quick_check_prints_no_progress(capsys):
    assert main(["check", "--engine", ref("prints"), "--windows", "32k"]) == 1
    assert "runs done" not in capsys.readouterr().err


def test_bench_says_how_to_leave_out_a_broken_installed_engine(tmp_path, monkeypatch, capsys):
    # Fails on main: another team's package with a broken entry point stopped every default
    # bench, and the line did not say that --strategies leaves it out.
    from importlib.metadata import EntryPoint

    from prefixbench.kernel import loading

    broken = EntryPoint("team-broken", "tests.foreign_engines:no_such_factory", loading.ENTRY_POINT_GROUP)
    monkeypatch.setattr(loading, "_installed_engines", lambda: (("team-broken", broken),))
    argv = ["bench", "--workloads", "thinking-tools", "--caches", "openai", "--windows", "32k", "--seeds", "0", "--out", str(tmp_path), "--quiet"]
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        "prefixbench: error: engine team-broken: cannot load entry point 'tests.foreign_engines:no_such_factory' "
        "(AttributeError: module 'tests.foreign_engines' has no attribute 'no_such_factory') "
        "(bench runs every installed engine unless --strategies names them: leave it out there)\n"
    )
    assert main([*argv, "--strategies", "checkpoint"]) == 0


def test_an_engine_config_table_named_by_an_unquoted_import_path_says_to_quote_it(tmp_path, capsys):
    # Fails on main: the line gave TOML's parse error only ("Expected ']' ... column 26").
    config = tmp_path / "engines.toml"
    config.write_text(f"[{ref('prints')}]\nlevel = 1\n")
    assert main(["check", "--engine", ref("prints"), "--windows", "32k", "--engine-config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"prefixbench: error: {config}: not valid TOML (")
    assert err.endswith(f'; quote a table named by import path: ["{ref("prints")}"]\n') and err.count("\n") == 1


def test_an_engine_that_prints_on_a_local_dask_cluster_leaves_standard_output_to_the_command(tmp_path):
    # Fails on integ53: under --scheduler local the engine runs in a worker process's thread,
    # where nothing was swapped, and the worker writes to the command's own standard output:
    # "debug: view" lines came before the JSON array, which no longer parsed.
    pytest.importorskip("distributed")
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    argv = [sys.executable, "-m", "prefixbench", "sweep", "--engine", ref("prints"), "--windows", "32k,64k",
            "--scheduler", "local", "--jobs", "2", "--out", str(tmp_path / "out"), "--quiet", "--format", "json"]
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(run["window"] for run in json.loads(done.stdout)) == [32_000, 64_000], done.stdout[:300]
    assert "debug: view" in done.stderr


def test_a_local_workers_task_swaps_its_output_itself_every_time(tmp_path):
    # Fails on integ53: the swap ran once, on the workers alive at the start (client.run), so a
    # worker the cluster restarted printed into the command's standard output again. Each task
    # swaps its own worker's now, a second swap doing nothing.
    import subprocess
    import sys

    code = ("import functools, sys\n"
            "from prefixbench.workloads.runs.execute import _call_on_local_worker\n"
            "task = functools.partial(_call_on_local_worker, lambda x: print('engine says', x) or x)\n"
            "assert task(1) == 1 and task(2) == 2 and sys.stdout is sys.stderr\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "" and done.stderr == "engine says 1\nengine says 2\n"


def test_local_workers_that_never_start_are_one_line_not_a_hang(monkeypatch):
    # Fails on integ53: wait_for_workers had no timeout, so a worker that never started hung the
    # command for good.
    distributed = pytest.importorskip("distributed")
    from prefixbench.simulator.errors import UserError
    from prefixbench.workloads.runs import execute

    class Cluster:
        def __init__(self, **kwargs):
            pass

        def close(self):
            pass

    class Client:
        def __init__(self, cluster):
            pass

        def wait_for_workers(self, n, timeout=None):
            if timeout is None:
                raise AssertionError("waited for the workers with no timeout: a hang")
            raise TimeoutError(f"Only 0/{n} workers arrived after {timeout}")

        def close(self):
            pass

    monkeypatch.setattr(distributed, "LocalCluster", Cluster)
    monkeypatch.setattr(distributed, "Client", Client)
    with pytest.raises(UserError) as raised:
        list(execute.map_runs(str, ["a", "b"], jobs=2, scheduler="local"))
    message = str(raised.value)
    assert message == f"--scheduler local: 2 Dask worker(s) did not start within {execute.WORKER_START_TIMEOUT_S} s"
