"""User engines on every command that runs them: bench --engine-config, grid files naming user
engines, the loader's hint for a package's __init__.py, and what a stopped bench kept."""

from __future__ import annotations

import csv

import pytest

from prefixbench.reports.entry import main

#: A small bench: one workload, window, seed and cache, no price variants.
SMALL_BENCH = ["--workloads", "seed-coding", "--windows", "32k", "--seeds", "0", "--caches", "anthropic-5m",
               "--read-discount", "none", "--read-price", "none", "--quiet"]


def _strategies(out) -> list[str]:
    with open(out / "leaderboard.csv", newline="") as handle:
        return [row["strategy"] for row in csv.DictReader(handle)]


def test_bench_engine_config_reaches_the_factory(tmp_path, capsys):
    config = tmp_path / "engines.toml"
    config.write_text('["tests.user_engines:configurable"]\ndeclare = true\n')
    code = main(["bench", "--strategies", "tests.user_engines:configurable", *SMALL_BENCH,
                 "--engine-config", str(config), "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    assert _strategies(tmp_path / "out") == ["configurable-declared"]  # without the table: configurable-silent


def test_bench_refuses_a_table_for_a_strategy_it_does_not_run(tmp_path, capsys):
    config = tmp_path / "engines.toml"
    config.write_text('["tests.user_engines:configurable"]\ndeclare = true\n')
    code = main(["bench", "--strategies", "sliding-window", *SMALL_BENCH, "--engine-config", str(config), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err == (f"prefixbench: error: {config}: [tests.user_engines:configurable] is set but the bench runs only "
                   "sliding-window; add --strategies sliding-window,tests.user_engines:configurable or remove the table\n")
    assert not (tmp_path / "out").exists()


def test_bench_says_what_the_store_kept_when_an_engine_fails(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["bench", "--strategies", "tests.user_engines:raise_at_5", *SMALL_BENCH, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("prefixbench: error: engine ")
    assert err.rstrip().endswith(f"(the bench stopped; {out}/ is as it was, and 0 of 1 runs are in {out}/store: "
                                 "fix the error and re-run (stored runs are skipped))")


def _grid(tmp_path, body: str):
    path = tmp_path / "grid.toml"
    path.write_text('[sweep.mine]\nworkloads = ["seed-coding", "thinking-tools"]\nwindows = ["32k"]\n' + body)
    return path


def test_a_grid_runs_installed_and_imported_user_engines_with_their_tables(tmp_path, capsys):
    (tmp_path / "engines.toml").write_text('["tests.user_engines:configurable"]\ndeclare = true\n')
    grid = _grid(tmp_path, 'engines = ["sliding-window", "tests.user_engines:configurable"]\nengine_config = "engines.toml"\n')
    code = main(["sweep", "--grid", str(grid), "--out", str(tmp_path / "out"), "--quiet", "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    import json

    runs = {(r["workload"], r["engine"], r["preset"]) for r in json.loads(captured.out)}
    assert runs == {  # every workload of the sweep, once under patched (no presets named), the table applied
        (w, e, "patched") for w in ("seed-coding", "thinking-tools") for e in ("sliding-window", "configurable-declared")
    }


def test_a_grid_names_an_unknown_engine_in_one_line(tmp_path, capsys):
    grid = _grid(tmp_path, 'engines = ["sliding-windoe"]\n')
    assert main(["sweep", "--grid", str(grid), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"prefixbench: error: {grid}:sweep.mine.engines: unknown engine 'sliding-windoe': did you mean 'sliding-window'?")
    assert "or give package.module:factory" in err[0]


def test_a_grid_refuses_a_user_table_for_an_engine_it_does_not_run(tmp_path, capsys):
    (tmp_path / "engines.toml").write_text('["tests.user_engines:configurable"]\ndeclare = true\n')
    grid = _grid(tmp_path, 'engines = ["sliding-window"]\nengine_config = "engines.toml"\n')
    assert main(["sweep", "--grid", str(grid), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "[tests.user_engines:configurable] is set but the sweep does not run it; add it to engines or remove the table" in err


def test_engine_with_a_grid_says_where_to_name_it(tmp_path, capsys):
    grid = _grid(tmp_path, "")
    assert main(["sweep", "--grid", str(grid), "--engine", "sliding-window", "--out", str(tmp_path / "out")]) == 2
    assert "name it in the grid's engines = [...]" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("ref", "says"),
    [
        ("./src/my_pkg/__init__.py:factory", "give my_pkg:factory, run from ./src/ (or with it on PYTHONPATH)"),
        ("/abs/src/my_pkg/__init__.py:factory", "give my_pkg:factory, run from /abs/src/ (or with it on PYTHONPATH)"),
        ("src/my_engine.py:factory", "give my_engine:factory, run from src/ (or with it on PYTHONPATH)"),
    ],
)
def test_a_file_path_engine_names_the_module_to_give(tmp_path, monkeypatch, capsys, ref, says):
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--engine", ref, "--windows", "32k"]) == 2
    assert says in capsys.readouterr().err


def test_a_sweep_names_a_builtin_engines_config_and_the_remote_modes_assumed_price(tmp_path, capsys):
    # codex-compact's remote mode was shown as local mode is (engine_config=default, no note).
    config = tmp_path / "remote.toml"
    config.write_text('[codex-compact]\nmode = "remote"\n')
    code = main(["sweep", "--workload", "thinking-tools", "--windows", "32k", "--presets", "patched",
                 "--engines", "codex-compact", "--engine-config", str(config), "--out", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0
    assert "note: codex-compact mode=remote: each compact call is priced as an ordinary request" in out
    with open(tmp_path / "out" / "runs.csv", newline="") as handle:
        (row,) = csv.DictReader(handle)
    assert "engine_config=mode=remote" in row["params"].split(";") and row["num_folds"] == "4"
    report = (tmp_path / "out" / "report.md").read_text()
    assert "engine_config=mode=remote" in report and "Note: codex-compact mode=remote" in report


def test_a_bench_notes_the_remote_modes_assumed_price(tmp_path, capsys):
    config = tmp_path / "remote.toml"
    config.write_text('[codex-compact]\nmode = "remote"\n')
    code = main(["bench", "--strategies", "codex-compact", *SMALL_BENCH, "--engine-config", str(config),
                 "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    assert "note: codex-compact mode=remote: each compact call is priced" in capsys.readouterr().out
    assert "Note: codex-compact mode=remote" in (tmp_path / "out" / "report.md").read_text()


def test_the_engine_notes_read_the_table_not_a_rebuilt_string():
    # run_notes found remote mode with "mode=remote" in a string rebuilt from params and split on
    # ","; bench and sweep each had their own copy. Now both pass the table (sweep's parsed once
    # from the record, a list's commas kept in its value).
    from prefixbench.kernel.strategies.codex import REMOTE_PRICE_NOTE, run_notes
    from prefixbench.reports.warning_notes import engine_notes
    from prefixbench.workloads.runs.sweep import engine_config_text, recorded_engine_config

    table = {"restore_tools": ["read_file", "Read"], "thrash_turns": 4}
    params = f"engine_config={engine_config_text(table)};steps=24"
    assert recorded_engine_config(params) == {"restore_tools": "['read_file', 'Read']", "thrash_turns": "4"}
    assert recorded_engine_config("steps=24") == {} and recorded_engine_config(float("nan")) == {}
    assert run_notes("codex-compact", {"mode": "remote"}) == [REMOTE_PRICE_NOTE]
    assert run_notes("codex-compact", recorded_engine_config("engine_config=limit=9,mode=remote")) == [REMOTE_PRICE_NOTE]
    assert run_notes("codex-compact", {"mode": "local"}) == [] and run_notes("other", {"mode": "remote"}) == []
    assert engine_notes([("codex-compact", {"mode": "remote"}), ("codex-compact", {"mode": "remote", "limit": 9})]) == [REMOTE_PRICE_NOTE]


def test_a_builtin_engines_table_is_recorded_as_a_shipped_engines_is(tmp_path, capsys):
    # A [checkpoint] table on seed-coding changed the result (119,375 -> 174,397 uncached at
    # 32k) but nothing in params said so, and thinking-tools recorded only "custom" (for every
    # engine of the run, even those the table was not for). Now each run records what its engine
    # was set to; without a table the record is as before.
    import csv

    config = tmp_path / "engines.toml"
    config.write_text("[checkpoint]\nretain_ratio = 0.3\n")
    argv = ["sweep", "--workload", "seed-coding", "--windows", "32k", "--engines", "checkpoint", "--presets", "patched",
            "--quiet"]
    assert main([*argv, "--engine-config", str(config), "--out", str(tmp_path / "a")]) == 0
    [row] = csv.DictReader((tmp_path / "a" / "runs.csv").open())
    assert "engine_config=retain_ratio=0.3" in row["params"].split(";") and row["session_uncached_tokens"] == "174397"
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0
    [row] = csv.DictReader((tmp_path / "b" / "runs.csv").open())
    assert row["params"] == "effort=max;pruner=rewrite-only;steps=60"
    argv = ["sweep", "--workload", "thinking-tools", "--windows", "32k", "--engines", "checkpoint,user-tail", "--presets",
            "patched", "--steps-per-turn", "10", "--quiet", "--engine-config", str(config), "--out", str(tmp_path / "c")]
    assert main(argv) == 0
    params = {r["engine"]: r["params"].split(";") for r in csv.DictReader((tmp_path / "c" / "runs.csv").open())}
    assert "engine_config=retain_ratio=0.3" in params["checkpoint"] and "engine_config=default" in params["user-tail"]
    capsys.readouterr()


def test_the_helps_say_where_a_table_is_taken_and_what_compaction_holds(capsys):
    # sweep --help did not say that shipped engines' tables work on any workload, that only a
    # built-in engine's is refused where the workload does not take it, or that settings can add
    # notes; audit --help did not say --fail-on compaction also holds misses a TTL expiry leads.
    import pytest

    for argv in (["sweep", "--help"], ["audit", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
    text = " ".join(capsys.readouterr().out.split())
    assert "[claude-code-autocompact]) is taken on any workload" in text
    assert "none on subagents, idle-gaps), refused elsewhere" in text and "Settings can add note: lines" in text
    assert "compaction also holds a miss another cause leads (ttl-expired)" in text
