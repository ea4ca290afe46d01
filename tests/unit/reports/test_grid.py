"""Grid files, --seeds and the progress lines."""

import io
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.reports.entry import main
from prefixbench.reports.grid import read_grid
from prefixbench.reports.options import parse_seeds
from prefixbench.reports.progress import SweepProgress
from prefixbench.simulator.errors import UserError

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "grid.toml"


def test_the_example_grid_plans():
    specs = read_grid(EXAMPLE)
    assert {s.workload for s in specs} == {"seed-coding", "thinking-tools"}
    seed_spread = [s for s in specs if s.workload == "seed-coding"]
    assert len(seed_spread) == 1 and seed_spread[0].seeds == tuple(range(10))
    engines = [s for s in specs if s.workload == "thinking-tools"]
    assert sorted(s.cache for s in engines) == ["byte-exact", "deepseek"]
    assert read_grid(EXAMPLE, "engines") == engines


def test_a_grid_is_a_cartesian_product_and_flags_override(tmp_path, capsys):
    grid = tmp_path / "g.toml"
    grid.write_text(
        '[sweep.small]\nworkloads = "seed-coding"\nwindows = ["32k"]\npresets = ["legacy", "patched"]\n'
        'seeds = "0-1"\n[sweep.small.options]\npruner = ["rewrite-only", "none"]\nsteps = 30\n'
    )
    out = tmp_path / "out"
    assert main(["sweep", "--grid", str(grid), "--quiet", "--jobs", "1", "--out", str(out)]) == 0
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 2 * 2 * 2  # presets x seeds x pruner
    table = capsys.readouterr().out
    assert "options" in table and "pruner=none" in table and "seeds" in table
    # --seeds on the command line replaces the file's seeds.
    assert main(["sweep", "--grid", str(grid), "--seeds", "3", "--quiet", "--jobs", "1", "--out", str(out)]) == 0
    assert set(pd.read_csv(out / "runs.csv")["seed"]) == {3}


def test_every_problem_is_one_line_naming_file_and_key(tmp_path, capsys):
    grid = tmp_path / "bad.toml"
    grid.write_text(
        '[sweep.a]\nworkloads = ["seed-coding", "nope"]\nwindows = ["32k", "abc"]\nseeds = "4-1"\n'
        'colour = "red"\n[sweep.a.options]\nturnz = 3\n'
    )
    assert main(["sweep", "--grid", str(grid), "--out", str(tmp_path / "o")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith(f"prefixbench: error: {grid}:sweep.a.") for line in lines), lines
    joined = "\n".join(lines)
    for key in ("sweep.a.workloads", "sweep.a.windows", "sweep.a.seeds", "sweep.a.colour", "sweep.a.options.turnz"):
        assert f"{grid}:{key}:" in joined, key
    assert len(lines) == 5
    assert not (tmp_path / "o").exists()  # nothing ran


def test_a_value_is_quoted_as_the_grid_spells_it(tmp_path, capsys):
    """``steps = true`` was refused with "got True", Python's spelling, not the file's."""
    grid = tmp_path / "bad.toml"
    grid.write_text('[sweep.a]\nworkloads = ["seed-coding"]\nwindows = ["32k"]\n[sweep.a.options]\nsteps = true\n')
    assert main(["sweep", "--grid", str(grid), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.rstrip().endswith("steps must be a whole number, 1 to 10,000, got true"), err


def test_a_grid_that_is_not_toml_or_names_no_sweep(tmp_path):
    bad = tmp_path / "x.toml"
    bad.write_text("[sweep\n")
    with pytest.raises(UserError, match="not valid TOML"):
        read_grid(bad)
    bad.write_text("[other]\n")
    with pytest.raises(UserError, match="no sweeps"):
        read_grid(bad)
    with pytest.raises(UserError, match="no sweep named 'zzz'"):
        read_grid(EXAMPLE, "zzz")


def test_seed_lists_and_ranges():
    assert parse_seeds("0-16") == tuple(range(17))
    assert parse_seeds("0,3,5") == (0, 3, 5)
    assert parse_seeds("0-2,7") == (0, 1, 2, 7)
    for bad in ("", "a", "3-1", "-1", "0,,1", "1,1", "0-100000"):
        with pytest.raises(UserError, match="--seeds"):
            parse_seeds(bad)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="0123456789-, x", max_size=12))
def test_seed_parsing_never_crashes(text):
    try:
        seeds = parse_seeds(text)
    except UserError:
        return
    assert seeds and all(s >= 0 for s in seeds) and len(set(seeds)) == len(seeds)


def test_progress_lines_off_a_terminal_come_every_few_seconds():
    stream = io.StringIO()
    with SweepProgress(10, skipped=4, mode="lines", interval=0.05, stream=stream) as progress:
        progress.set_running(2)
        progress.finished("seed-coding 32k checkpoint/legacy")
        import time

        time.sleep(0.2)
    lines = stream.getvalue().strip().splitlines()
    assert len(lines) >= 3
    assert lines[-1].startswith("prefixbench: sweep 5/10 runs done (4 skipped, in store), 2 running")
    assert "ETA" in lines[-1]


def test_the_all_done_line_is_printed_once_while_the_command_winds_down():
    """The runs can end well before the command does (a local Dask cluster shutting down): the
    ticker printed "2/2 runs done" and the exit printed it again (each tick, once more)."""
    import time

    stream = io.StringIO()
    with SweepProgress(2, mode="lines", interval=0.02, stream=stream) as progress:
        progress.finished("seed-coding 32k checkpoint/legacy")
        progress.finished("seed-coding 32k checkpoint/patched")
        time.sleep(0.2)
    lines = stream.getvalue().strip().splitlines()
    assert sum("2/2 runs done" in line for line in lines) == 1, lines
    assert lines[-1].startswith("prefixbench: sweep 2/2 runs done, 0 running")


def test_the_bar_names_the_last_finished_run_as_finished():
    stream = io.StringIO()
    progress = SweepProgress(3, mode="bar", stream=stream)
    with progress:
        progress.finished("seed-coding 32k checkpoint/legacy")
        task = progress._progress.tasks[0]
        assert task.fields["last"] == "last done: seed-coding 32k checkpoint/legacy"
        assert task.completed == 1


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_a_mutated_grid_file_plans_or_is_refused_cleanly(tmp_path_factory, data):
    """Random edits of the example grid: specs, or UserError lines naming the file; never a crash."""
    text = EXAMPLE.read_text()
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 12))
        insert = data.draw(st.sampled_from(["", "x", "0", "-", "\"", "[", "]", "=", "\n", "{", "1e9", "true", "\u00e9", "9" * 50]))
        text = text[:at] + insert + text[at + cut :]
    grid = tmp_path_factory.mktemp("grid") / "g.toml"
    grid.write_text(text, encoding="utf-8")
    try:
        specs = read_grid(grid)
    except UserError as exc:
        assert all(line.startswith(str(grid)) for line in str(exc).splitlines()), str(exc)
        return
    assert specs


def test_a_seed_range_written_backwards_says_so():
    with pytest.raises(UserError, match=r"--seeds: '5-2' runs backwards: write the lower seed first \(2-5\)"):
        parse_seeds("5-2")
    assert parse_seeds("2-5") == (2, 3, 4, 5)


def test_a_benchs_progress_lines_name_the_bench():
    # Were "prefixbench: sweep N/M runs done" while a bench ran.
    stream = io.StringIO()
    with SweepProgress(3, mode="lines", interval=0.01, stream=stream, command="bench") as progress:
        progress.finished("thinking-tools 32k no-compaction")
    assert stream.getvalue().strip().splitlines()[-1].startswith("prefixbench: bench 1/3 runs done, 0 running")


def test_a_bad_cache_value_names_where_it_came_from(tmp_path, capsys):
    # The same parser reads --cache and a grid file's caches: its line said
    # "openai: mode must be one of ..." without the flag, or a grid line without the key.
    grid = tmp_path / "g.toml"
    grid.write_text('[sweep.a]\nworkloads = ["seed-coding"]\ncaches = ["openai:mode=bad", "byte-exact"]\nwindows = ["32k"]\n')
    out = str(tmp_path / "o")
    assert main(["sweep", "--grid", str(grid), "--out", out]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"prefixbench: error: {grid}:sweep.a.caches: 'openai:mode=bad': openai: mode must be one of pre-5.6, 5.6, got 'bad'"
    ]
    assert main(["sweep", "--grid", str(grid), "--cache", "openai:mode=worse", "--out", out]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "prefixbench: error: --cache 'openai:mode=worse': openai: mode must be one of pre-5.6, 5.6, got 'worse'"
    ]
    for argv, line in (
        (["sweep", "--cache", "openai:mode=bad"], "--cache 'openai:mode=bad': openai: mode must be one of pre-5.6, 5.6, got 'bad'"),
        (["sweep", "--cache", "openai:"], "--cache 'openai:': nothing after the colon (give key=value options, or drop the colon)"),
        (["sweep", "--cache", "vllm", "--tokenizer", "bogus"], "unknown tokenizer 'bogus' (known: heuristic, deepseek-v4)"),
    ):
        assert main([*argv, "--out", out]) == 2
        assert capsys.readouterr().err.strip().splitlines() == [f"prefixbench: error: {line}"], argv
    assert not (tmp_path / "o").exists()  # nothing ran


def test_runs_handed_to_workers_in_batches_are_not_all_running(monkeypatch):
    """Two workers each holding a batch of 17 runs execute 2 runs, not 34: a batch's runs run one
    at a time and land together (a new user's bench on 2 cores said ``0/64 runs done, 34 in flight``)."""
    from types import SimpleNamespace

    from prefixbench.workloads.runs import land

    groups = [[SimpleNamespace(key=f"{g}-{r}", describe=lambda: "run") for r in range(17)] for g in range(2)]
    monkeypatch.setattr(land, "batches_of", lambda items, batched: groups)
    seen: list[int] = []

    def fake_map(fn, items, *, jobs, scheduler, on_submit):
        on_submit([0, 1])
        seen.append(progress.executing)
        return iter(())

    monkeypatch.setattr(land, "map_runs", fake_map)
    progress = SweepProgress(64, stream=io.StringIO(), command="bench")
    plan = SimpleNamespace(runs=[None] * 64)
    land.land_missing(plan, list(range(64)), store=None, progress=progress, jobs=2, scheduler=None)
    assert seen == [2]
    assert progress.line().startswith("prefixbench: bench 0/64 runs done, 2 running, ")


def test_engine_with_a_grid_is_refused_not_dropped(tmp_path, capsys):
    """trial54: --grid FILE --engine pkg:factory ran the grid's built-in engines alone, exit 0,
    without a word about the user's engine (the grid's engines = [...] names it)."""
    grid = tmp_path / "g.toml"
    grid.write_text('[sweep.a]\nworkloads = ["seed-coding"]\nwindows = ["32k"]\npresets = ["patched"]\n')
    out = tmp_path / "o"
    assert main(["sweep", "--grid", str(grid), "--engine", "tests.user_engines:declared", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "prefixbench: error: --engine tests.user_engines:declared: does not apply to --grid: name it in the grid's engines = [...] "
        "(an installed name or package.module:factory), or give --engines to run it in every sweep of the grid"
    ]
    assert not out.exists()


def test_an_inline_engine_config_table_is_named_a_table_not_a_file(tmp_path: Path) -> None:
    # It said "...engine_config: {'my_engine:factory': {'x': 1}}: cannot read (No such file or directory)".
    from prefixbench.simulator.errors import UserError

    grid = tmp_path / "grid.toml"
    grid.write_text('[sweep.u]\nworkloads = ["seed-coding"]\nwindows = ["32k"]\nengines = ["checkpoint"]\n'
                    '[sweep.u.engine_config."my_engine:factory"]\nx = 1\n')
    with pytest.raises(UserError) as caught:
        read_grid(grid)
    assert str(caught.value).endswith("grid.toml:sweep.u.engine_config: engine_config is a file path (a TOML file of tables), not a table")


def test_an_empty_list_of_caches_is_a_problem_not_a_traceback(tmp_path, capsys):
    # fuzz59: `caches = []` planned no run and no problem: sweep raised IndexError (exit 1, a traceback).
    grid = tmp_path / "g.toml"
    grid.write_text('[sweep.a]\nworkloads = ["seed-coding"]\nwindows = ["32k"]\npresets = ["patched"]\ncaches = []\n')
    out = tmp_path / "o"
    assert main(["sweep", "--grid", str(grid), "--quiet", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"prefixbench: error: {grid}:sweep.a.caches: give at least one cache model"
    ]
    assert not out.exists()


@pytest.mark.parametrize(("line", "shown"), [
    ("price_as_of = 2025-06-01", "datetime.date(2025, 6, 1)"),  # a TOML date, not text
    ("price_as_of = 20250601", "20250601"),
    ("period = 1", "1"),
])
def test_a_price_date_or_period_that_is_not_text_is_a_problem_naming_its_key(tmp_path, capsys, line, shown):
    # fuzz59: a price_as_of that was not a string reached the date parser: TypeError, a traceback.
    grid = tmp_path / "g.toml"
    grid.write_text(f'[sweep.a]\nworkloads = ["seed-coding"]\nwindows = ["32k"]\nprice = "deepseek-v4-flash"\n{line}\n')
    assert main(["sweep", "--grid", str(grid), "--quiet", "--out", str(tmp_path / "o")]) == 2
    key, example = line.split(" = ")[0], {"price_as_of": '"2025-06-01"', "period": '"peak"'}[line.split(" = ")[0]]
    assert capsys.readouterr().err.strip().splitlines() == [
        f"prefixbench: error: {grid}:sweep.a.{key}: must be text such as {example}, got {shown}"
    ]


@pytest.mark.parametrize(("value", "said"), [
    ("9" * 5000, "an integer with more than 4,300 digits (no count or setting is that large)"),
    ("[" * 3000 + "]" * 3000, "TOML nested too deep to read (arrays or tables hundreds of levels deep)"),
    ("{ a = " * 3000 + "1" + " }" * 3000, "TOML nested too deep to read (arrays or tables hundreds of levels deep)"),
])
def test_a_grid_value_python_cannot_hold_is_one_line_naming_the_file(tmp_path, capsys, value, said):
    # fuzz60: tomllib's ValueError (an integer of more than 4,300 digits) and RecursionError (arrays
    # or inline tables thousands deep) escaped read_grid: a traceback, exit 1.
    grid = tmp_path / "g.toml"
    grid.write_text(f'[sweep.a]\nworkloads = ["seed-coding"]\nwindows = ["32k"]\nseeds = {value}\n')
    assert main(["sweep", "--grid", str(grid), "--quiet", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"prefixbench: error: {grid}: {said}"]
    assert not (tmp_path / "o").exists()


def test_an_engine_config_path_holding_a_nul_byte_is_a_problem_naming_its_key(tmp_path, capsys):
    # fuzz60: engine_config = "x\u0000y" reached os.stat, whose ValueError (embedded null byte) was a traceback.
    grid = tmp_path / "g.toml"
    grid.write_text('[sweep.a]\nworkloads = ["seed-coding"]\nwindows = ["32k"]\nengines = ["checkpoint"]\n'
                    'engine_config = "x\\u0000y.toml"\n')
    assert main(["sweep", "--grid", str(grid), "--quiet", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"prefixbench: error: {grid}:sweep.a.engine_config: {tmp_path}/x\\x00y.toml: cannot read (a path cannot hold a NUL byte)"
    ]


@pytest.mark.parametrize(("workload", "line", "hint"), [
    ("seed-coding", "prompt = 5", ""),  # was AttributeError ('int' object has no attribute 'isascii') mid-run
    ("thinking-tools", "ranges = 1", "; an engine's settings go in the file engine_config names"),  # AttributeError in planning
    ("thinking-tools", 'user_tail = "x"', "; an engine's settings go in the file engine_config names"),  # "`struct` must be a `msgspec.Struct`"
    ("thinking-tools", 'binding = "x"', "; the client's binding follows the sweep's profiles"),  # "make_workload() got multiple values..."
    ("thinking-tools", "checkpoint = { a = 1 }", "; an engine's settings go in the file engine_config names"),  # ran, its key unchecked
    ("seed-coding", "seed = 5", "; a sweep's seeds are its seeds key"),  # ran, beside the seeds key
])
def test_a_workload_field_that_is_no_option_is_refused_in_the_options_table(tmp_path, capsys, workload, line, hint):
    # fuzz60: the options table took any field of the workload's factory, not only its options
    # (its sweep flags): the sweep's own fields reached the factory unchecked.
    grid = tmp_path / "g.toml"
    grid.write_text(f'[sweep.a]\nworkloads = ["{workload}"]\nwindows = ["32k"]\npresets = ["patched"]\n[sweep.a.options]\n{line}\n')
    assert main(["sweep", "--grid", str(grid), "--quiet", "--out", str(tmp_path / "o")]) == 2
    key = line.split(" = ")[0]
    assert capsys.readouterr().err.strip().splitlines() == [
        f"prefixbench: error: {grid}:sweep.a.options.{key}: no workload of this sweep takes this option ({workload}){hint}"
    ]
    assert not (tmp_path / "o").exists()


#: TOML values of every type (dates and times too, which JSON has not), and edge values (a path
#: with a NUL byte, an integer past Python's int-string limit, nesting past the recursion limit).
_TOML_VALUES = ("1979-05-27", "07:32:00", "1979-05-27T07:32:00Z", "nan", "inf", "-inf", "-1", "0", "9223372036854775807",
                "0.5", "true", '""', '"x"', '"0-9"', '"32k"', "[]", "[[]]", "[1, 2]", '["a", "a"]', "{}", '{ model = "vllm" }',
                '{ model = 1 }', '{ model = "vllm", capacity_blocks = -1 }', '[{ model = "deepseek" }, "byte-exact"]',
                '"a\\u0000b"', "9" * 4400, "[" * 2000 + "]" * 2000, "{ a = " * 1000 + "1" + " }" * 1000)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_value_of_a_grid_swapped_for_any_toml_type_plans_or_is_refused_cleanly(tmp_path_factory, data):
    """A key of the example grid (or a key it leaves out) set to a TOML value of any type, in one
    or more of its sweeps: specs that plan, or UserError lines naming the file; never a crash (an
    empty caches list and a TOML date as price_as_of were tracebacks before fuzz59)."""
    from prefixbench.workloads.runs.sweep import plan_sweep, plan_sweeps

    keys = ("workloads", "windows", "presets", "engines", "profiles", "caches", "tokenizer", "seeds", "price", "period",
            "price_as_of", "engine_config",
            # workload options (dotted keys), and fields of a workload's factory that are no option (fuzz60)
            "options.steps", "options.turns", "options.effort", "options.prompt", "options.ranges", "options.user_tail",
            "options.binding", "options.checkpoint", "options.seed")
    tables: dict[str, dict[str, str]] = {
        "seed-spread": {"workloads": '["seed-coding"]', "windows": '["32k"]', "presets": '["legacy", "patched"]', "seeds": '"0-1"'},
        "engines": {"workloads": '["thinking-tools"]', "engines": '["checkpoint", "ranges"]', "windows": '["32k"]',
                    "caches": '["byte-exact", { model = "deepseek" }]', "price": '"deepseek-v4-flash"'},
    }
    for _ in range(data.draw(st.integers(1, 3))):
        table = tables[data.draw(st.sampled_from(sorted(tables)))]
        table[data.draw(st.sampled_from(keys))] = data.draw(st.sampled_from(_TOML_VALUES))
    text = "".join(f"[sweep.{name}]\n" + "".join(f"{k} = {v}\n" for k, v in table.items()) for name, table in tables.items())
    grid = tmp_path_factory.mktemp("grid") / "g.toml"
    grid.write_text(text, encoding="utf-8")
    try:
        specs = read_grid(grid)
        assert specs, text
        plan_sweeps(specs) if len(specs) > 1 else plan_sweep(specs[0])  # as sweep plans before its first run
    except UserError as exc:
        assert all(line.startswith(str(grid)) for line in str(exc).splitlines()), str(exc)
