"""A user's engine through the specs, sweep and check: the silent one fails, the declared one explains."""

from __future__ import annotations

import re
import sys

import pytest

import msgspec

from prefixbench.reports.entry import main
from prefixbench.simulator.observe import Observation
from prefixbench.simulator.wire import Envelope
from prefixbench.workloads.specs.base import Verdict
from prefixbench.workloads.specs.engine import EngineCase, engine_cases, run_case, run_engine_specs
from prefixbench.workloads.specs.observed import (
    judge_accepts,
    judge_no_silent_rewrite,
    judge_summary_bound,
    judge_summary_envelope,
)

SILENT = "tests.user_engines:silent"
DECLARED = "tests.user_engines:declared"


def test_cases_pair_strict_profiles_with_the_deepseek_workload_only():
    cases = engine_cases([32_000], ["lenient", "deepseek-official"])
    assert [c.id for c in cases] == ["32k-seed-coding-lenient", "32k-thinking-tools-lenient", "32k-thinking-tools-deepseek-official"]


def test_silent_truncation_fails_naming_the_request():
    results = {r.spec: r for r in run_engine_specs(SILENT, [32_000]) if r.workload == "seed-coding"}
    assert results["no-silent-rewrite"].verdict is Verdict.VIOLATED
    assert "rewrote cached history with no durable rewrite" in results["no-silent-rewrite"].figure
    assert results["no-silent-rewrite"].figure.startswith("request #")
    assert results["summary-uncached-bounded"].verdict is Verdict.VIOLATED
    assert results["summary-envelope-routed"].verdict is Verdict.VACUOUS
    assert results["no-silent-rewrite"].line().startswith("FAIL  no-silent-rewrite @32k [truncating/seed-coding/lenient]: request #")


def test_declaring_the_same_truncation_explains_every_break():
    run = run_case(DECLARED, EngineCase(32_000, "seed-coding", "lenient"))
    assert run.rewrites and {kind for _, kind in run.rewrites} == {"truncate"}
    assert judge_no_silent_rewrite(run.observations)[0] is Verdict.PASS
    assert run.engine == "declared-truncating" and run.num_folds == 0


def _obs(index, purpose="conversation", *, extends=True, cached=100, prompt=100, effort="max", status=200, rewrites=()):
    return Observation(index, purpose, Envelope("p", "m", effort), None, prompt, cached, 0, None, extends, rewrites, status=status)


def test_observed_judges_fail_on_hand_made_traffic():
    warm = [_obs(0, cached=0), _obs(1), _obs(2, "compaction", extends=False), _obs(3, extends=False, rewrites=("checkpoint",))]
    assert judge_no_silent_rewrite(warm)[0] is Verdict.PASS
    assert judge_summary_bound(warm)[0] is Verdict.PASS
    assert judge_summary_envelope(warm)[0] is Verdict.PASS
    silent = [*warm[:3], msgspec.structs.replace(warm[3], rewrites_since_previous=())]
    assert judge_no_silent_rewrite(silent) == (Verdict.VIOLATED, "request #3 rewrote cached history with no durable rewrite")
    cold = [*warm[:2], _obs(2, "compaction", extends=False, cached=10, prompt=5_000)]
    verdict, figure = judge_summary_bound(cold)
    assert verdict is Verdict.VIOLATED and figure.startswith("summary 1/1 (request #2) hit 0.2%, 4,990 uncached")
    other = [*warm[:2], _obs(2, "compaction", effort="high")]
    assert judge_summary_envelope(other) == (Verdict.VIOLATED, "request #2: summary call sent effort 'high', routed 'max'")
    refused = [*warm[:1], _obs(1, status=400)]
    assert judge_accepts(refused, "deepseek-official")[0] is Verdict.VIOLATED
    assert judge_accepts(warm, "deepseek-official")[0] is Verdict.PASS
    assert judge_summary_bound(warm[:2])[0] is Verdict.VACUOUS


def test_check_engine_exits_1_on_the_silent_engine(capsys):
    assert main(["check", "--engine", SILENT, "--windows", "32k"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  no-silent-rewrite @32k [truncating/seed-coding/lenient]: request #" in out
    assert out.strip().splitlines()[-1] == "preset patched: 6 passed, 4 skipped (vacuous: proves nothing), 4 failed: no-silent-rewrite, summary-uncached-bounded"


def test_check_engine_with_a_strict_profile(capsys):
    assert main(["check", "--engine", DECLARED, "--windows", "32k", "--profile", "deepseek-official"]) == 1
    out = capsys.readouterr().out
    assert "PASS  no-silent-rewrite @32k [declared-truncating/thinking-tools/deepseek-official]" in out
    assert "strict-profile-accepts @32k" in out


def test_sweep_runs_a_user_engine_like_a_builtin(tmp_path, capsys):
    argv = ["sweep", "--engine", DECLARED, "--windows", "32k", "--presets", "patched", "--out", str(tmp_path), "--quiet", "--format", "json"]
    assert main(argv) == 0
    import json

    runs = json.loads(capsys.readouterr().out)
    assert [(r["engine"], r["window"], r["num_folds"]) for r in runs] == [("declared-truncating", 32_000, 0)]
    assert (tmp_path / "runs.csv").is_file()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["sweep", "--engine", "no_such_module_x:f", "--windows", "32k"], "--engine no_such_module_x:f: no module 'no_such_module_x' in "),
        (["check", "--engine", "tests.user_engines:raises", "--windows", "32k"], "the factory raised ValueError"),
        (["check", "--engine", "tests.user_engines:not_an_engine"], "not an engine"),
        (["check", "--profile", "deepseek-official"], "--profile applies to user engines"),
        (["check", "--trace", "x.jsonl", "--engine", SILENT], "--engine, --engines and --engine-config do not apply"),
        # Was ignored: the legacy log's verdicts were printed as if the patched preset had been judged.
        (["check", "--trace", "x.jsonl", "--preset", "patched"], "--trace judges a recorded log: --preset does not apply"),
    ],
)
def test_engine_errors_are_one_line_exit_2(tmp_path, capsys, argv, message):
    assert main([*argv, *(["--out", str(tmp_path)] if argv[0] == "sweep" else [])]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err


CONFIGURABLE = "tests.user_engines:configurable"


def test_engine_config_reaches_a_user_engine_on_sweep_and_check(tmp_path, capsys):
    config = tmp_path / "engines.toml"
    config.write_text(f'["{CONFIGURABLE}"]\ndeclare = true\n')
    argv = ["sweep", "--engine", CONFIGURABLE, "--windows", "32k", "--presets", "patched", "--engine-config", str(config),
            "--out", str(tmp_path / "out"), "--quiet", "--format", "json"]
    assert main(argv) == 0
    import json

    assert [r["engine"] for r in json.loads(capsys.readouterr().out)] == ["configurable-declared"]
    config.write_text(f'["{CONFIGURABLE}"]\ndeclare = true\n')
    assert main(["check", "--engine", CONFIGURABLE, "--windows", "32k", "--engine-config", str(config)]) == 1
    out = capsys.readouterr().out
    assert "PASS  no-silent-rewrite @32k [configurable-declared/seed-coding/lenient]" in out


@pytest.mark.parametrize(
    "table, message",
    [
        (f'["{CONFIGURABLE}"]\ndeclare = "yes"\n', "the factory raised ValueError in tests/user_engines.py:58: declare must be true or false, got 'yes'"),
        ('[checkpoint]\nretain_ratio = 0.3\n', "check --engine-config sets user engines only, not 'checkpoint'"),
    ],
)
def test_bad_engine_config_on_check_is_one_line(tmp_path, capsys, table, message):
    config = tmp_path / "engines.toml"
    config.write_text(table)
    assert main(["check", "--engine", CONFIGURABLE, "--windows", "32k", "--engine-config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err


def test_sweep_of_a_user_engine_runs_one_preset_unless_presets_are_asked(tmp_path, capsys):
    import json

    base = ["sweep", "--engine", DECLARED, "--windows", "32k", "--steps", "12", "--quiet", "--format", "json"]
    assert main([*base, "--out", str(tmp_path / "one")]) == 0
    assert [(r["engine"], r["preset"]) for r in json.loads(capsys.readouterr().out)] == [("declared-truncating", "patched")]
    assert main([*base, "--presets", "legacy", "--out", str(tmp_path / "legacy")]) == 0
    assert [r["preset"] for r in json.loads(capsys.readouterr().out)] == ["legacy"]


def test_a_user_engine_that_reads_the_preset_gets_a_row_per_preset_asked(tmp_path, capsys):
    """options.preset is the engine's to read (its own before/after switch): --presets
    legacy,patched ran it once, under patched, and dropped the legacy row asked for."""
    import json

    engine = "tests.user_engines:preset_switched"
    args = ["sweep", "--engine", engine, "--windows", "32k", "--steps", "12", "--presets", "legacy,patched"]
    assert main([*args, "--format", "json", "--out", str(tmp_path / "json")]) == 0
    out, err = capsys.readouterr()
    rows = {r["preset"]: r for r in json.loads(out)}
    assert sorted(rows) == ["legacy", "patched"]
    assert rows["legacy"]["session_uncached_tokens"] != rows["patched"]["session_uncached_tokens"]
    assert "identical" not in err and "same run" not in err
    assert main([*args, "--quiet", "--out", str(tmp_path / "text")]) == 0
    patched = [line for line in capsys.readouterr().out.splitlines() if " patched " in line]
    assert len(patched) == 1 and patched[0].split()[-1].endswith("%"), patched


def test_a_user_engine_that_ignores_the_preset_is_said_to_run_identically(tmp_path, capsys):
    """Two presets of an engine that does not read options.preset are the same run: the table
    says "same run" (not "+0.0%"), and one note says so, from the finished runs compared."""
    args = ["sweep", "--engine", DECLARED, "--windows", "32k", "--steps", "12", "--presets", "legacy,patched", "--out", str(tmp_path)]
    assert main(args) == 0
    out, err = capsys.readouterr()
    rows = [line.split() for line in out.splitlines() if line.startswith("32k")]
    assert [row[2] for row in rows] == ["legacy", "patched"] and rows[1][-2:] == ["same", "run"], out
    assert "+0.0%" not in out
    notes = [line for line in err.splitlines() if "identically" in line]
    assert notes == [f"prefixbench: note: {DECLARED} ran identically under legacy and patched (every request the same): "
                     "on this workload it does not act on options.preset, so its rows repeat one run ('vs legacy' says 'same run')"], err
    assert "| same run |" in (tmp_path / "report.md").read_text() and "same run" in (tmp_path / "report.html").read_text()


def test_the_sweep_table_names_a_users_engine_even_alone(tmp_path, capsys):
    """``sweep --engine my_pkg:factory`` alone printed no engine column: no row said whose runs they were."""
    assert main(["sweep", "--engine", DECLARED, "--windows", "32k", "--steps", "12", "--quiet", "--out", str(tmp_path)]) == 0
    header, _, row = capsys.readouterr().out.splitlines()[:3]
    assert header.split()[:3] == ["window", "engine", "preset"] and row.split()[:3] == ["32k", "declared-truncating", "patched"]


def test_a_mixed_sweep_runs_the_presets_for_the_built_in_engine_and_one_row_for_the_users(tmp_path, capsys):
    import json

    base = ["sweep", "--engines", "checkpoint", "--engine", DECLARED, "--windows", "32k", "--steps", "12", "--quiet", "--format", "json"]
    assert main([*base, "--out", str(tmp_path / "mixed")]) == 0
    rows = [(r["engine"], r["preset"]) for r in json.loads(capsys.readouterr().out)]
    assert sorted(rows) == sorted([("checkpoint", p) for p in ("legacy", "envelope-fix", "prune-fix", "patched")] + [("declared-truncating", "patched")])
    assert main([*base, "--presets", "legacy,patched", "--out", str(tmp_path / "asked")]) == 0
    rows = [(r["engine"], r["preset"]) for r in json.loads(capsys.readouterr().out)]
    assert sorted(rows) == sorted((e, p) for e in ("checkpoint", "declared-truncating") for p in ("legacy", "patched"))


@pytest.mark.parametrize("command", [["check"], ["sweep", "--steps", "20", "--quiet"]])
def test_an_engine_in_the_working_directory_loads_without_pythonpath(tmp_path, monkeypatch, capsys, command):
    """``--engine my_engine:factory`` beside ``./my_engine.py`` loads, as the README shows: the
    working directory is searched first, as ``python -m`` and uvicorn do."""
    from tests.readme import doc_block

    (tmp_path / "cwd_engine.py").write_text(doc_block("README.md", "### check"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "cwd_engine", raising=False)
    extra = ["--out", str(tmp_path / "out")] if command[0] == "sweep" else []
    try:
        assert main([*command, "--engine", "cwd_engine:factory", "--windows", "32k", *extra]) == 0
    finally:
        sys.modules.pop("cwd_engine", None)
    out = capsys.readouterr().out
    assert "drop-oldest" in out if command[0] == "check" else out.startswith("window")


def test_spec_figures_write_counts_with_thousands_separators() -> None:
    """A long recorded session reads ``2,001 conversation requests``, as every other count does."""
    from prefixbench.workloads.specs.observed import judge_window

    many = [_obs(i, cached=0 if i == 0 else 100) for i in range(1200)]
    assert judge_no_silent_rewrite(many) == (Verdict.PASS, "1,200 conversation requests, every break explained")
    assert judge_window(many)[1] == "1,200 requests, largest prompt 100 tokens, none over the window"


def test_a_silent_rewrite_names_where_it_diverged_and_what_it_cost():
    # On integ53 the figure said only "request #19 rewrote cached history with no durable
    # rewrite": an engine's author had to replay the run to find which message it changed.
    results = {r.spec: r for r in run_engine_specs(SILENT, [32_000]) if r.workload == "seed-coding"}
    for spec in ("no-silent-rewrite", "summary-uncached-bounded"):
        figure = results[spec].figure
        assert re.search(r"^request #\d+ rewrote cached history .*\(diverged at message \d+( block \d+)? @ byte \d+: "
                         r"[\d,]+ tokens uncached from there\)$", figure), figure


NAMED_CHECKPOINT = "tests.user_engines:named_checkpoint"


@pytest.mark.parametrize(
    "argv, message",
    [
        # Were run and filed as the built-in checkpoint's runs: one row of runs.csv twice (which
        # compare then refused), one leaderboard row pooling both engines as if they were seeds.
        (["sweep", "--engine", NAMED_CHECKPOINT, "--engines", "checkpoint", "--presets", "patched"],
         f"engine {NAMED_CHECKPOINT}: its name 'checkpoint' is a built-in engine's"),
        (["check", "--engine", NAMED_CHECKPOINT], "its name 'checkpoint' is a built-in engine's"),
        (["bench", "--engine", NAMED_CHECKPOINT, "--strategies", "checkpoint", "--workloads", "seed-coding"],
         "its name 'checkpoint' is a built-in engine's"),
        # Two references to engines of one name: two rows of one name, one key in runs.csv.
        (["sweep", "--engine", DECLARED, "--engine", "tests.user_engines:declared_again"],
         f"engines {DECLARED} and tests.user_engines:declared_again both build an engine named 'declared-truncating'"),
        (["check", "--engine", DECLARED, "--engine", "tests.user_engines:declared_again"],
         f"engines {DECLARED} and tests.user_engines:declared_again both build an engine named 'declared-truncating'"),
        # One reference twice ran twice, two identical rows.
        (["sweep", "--engine", DECLARED, "--engine", DECLARED], f"--engine: {DECLARED!r} given twice"),
        (["check", "--engine", DECLARED, "--engine", DECLARED], f"--engine: {DECLARED!r} given twice"),
        # A misspelt --engine was blamed on --engines (sweep) or --strategies (bench), with no hint.
        (["sweep", "--engine", "sliding-windw"], "--engine: unknown engine 'sliding-windw': did you mean 'sliding-window'?"),
        (["bench", "--engine", "sliding-windw"], "--engine: unknown engine 'sliding-windw': did you mean 'sliding-window'?"),
        (["check", "--engine", "sliding-windw"], "--engine: unknown engine 'sliding-windw': did you mean 'sliding-window'?"),
    ],
)
def test_engines_that_would_share_a_name_or_do_not_exist_are_refused(tmp_path, capsys, argv, message):
    out = [] if argv[0] == "check" else ["--out", str(tmp_path / "out"), "--seeds", "0"] if argv[0] == "bench" else ["--out", str(tmp_path / "out")]
    assert main([*argv, "--windows", "32k", *out]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err


def test_check_engine_config_for_a_user_engine_not_under_test_names_the_engines_run(tmp_path, capsys):
    """It said 'sets user engines only, not ...' of a user's engine, as if it were a built-in one."""
    config = tmp_path / "engines.toml"
    config.write_text(f'["{DECLARED}"]\nx = 1\n')
    assert main(["check", "--engine", CONFIGURABLE, "--windows", "32k", "--engine-config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"prefixbench: error: {config}: [{DECLARED}] is set but check runs only {CONFIGURABLE}; "
                   f"add --engine {DECLARED} or remove the table"), err


@pytest.mark.parametrize("command", ["check", "sweep"])
def test_a_table_naming_the_engine_under_test_another_way_says_which_name_to_give(tmp_path, capsys, monkeypatch, command):
    """trial54: a table keyed by the import path of an engine given by its installed name (or the
    reverse) was 'not a user engine' on check, and on sweep the advice to add it to --engines led to
    running one engine twice."""
    from importlib.metadata import EntryPoint

    from prefixbench.kernel import loading

    entry = EntryPoint("declared-here", DECLARED, "prefixbench.engines")
    monkeypatch.setattr(loading, "_installed_engines", lambda: (("declared-here", entry),))
    config = tmp_path / "engines.toml"
    config.write_text(f'["{DECLARED}"]\nx = 1\n')
    out = ["--out", str(tmp_path / "out")] if command == "sweep" else []
    assert main([command, "--engine", "declared-here", "--windows", "32k", "--engine-config", str(config), *out]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"prefixbench: error: {config}: [{DECLARED}] is declared-here named another way: "
                   "name its table as --engine names the engine, [declared-here]"), err
