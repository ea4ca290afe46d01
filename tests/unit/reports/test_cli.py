"""The command line as a user runs it: outputs, exit codes, one-line errors, determinism."""

import csv
import json
import os

import pandas as pd
import pytest

from prefixbench.workloads.runs import store as store_module
from prefixbench.workloads.runs import sweep as sweep_module
from prefixbench.reports.cli import main
from prefixbench.reports.options import parse_window
from prefixbench.simulator.errors import UserError

SMALL = ["sweep", "--windows", "32k", "--presets", "legacy,patched", "--steps", "40", "--quiet"]


def test_window_parsing():
    assert [parse_window(w) for w in ("32k", "128000", "1m", "1.5M", "64_000")] == [32_000, 128_000, 10**6, 1_500_000, 64_000]
    for bad in ("0", "abc", "-5k", "1.5"):
        with pytest.raises(UserError, match="--windows"):
            parse_window(bad)


def test_sweep_prints_the_table_and_writes_every_output(tmp_path, capsys):
    assert main([*SMALL, "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "summary calls, uncached tokens" in out and "patched" in out
    names = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".tables-"))
    outputs = ["hit-rate.png", "observations.csv", "report.html", "report.md", "runs.csv", "timeline-32k.png"]
    assert names == sorted([".prefixbench-manifest.json", ".tables", "store", *outputs])
    # Every output is seen through .tables, one generation folder: they change in one rename.
    (generation,) = [p for p in tmp_path.iterdir() if p.name.startswith(".tables-")]
    assert os.readlink(tmp_path / ".tables") == generation.name
    assert sorted(p.name for p in generation.iterdir()) == outputs
    assert all(os.readlink(tmp_path / name) == f".tables/{name}" for name in outputs)
    assert len(list((tmp_path / "store").glob("*.parquet"))) == 2
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert list(runs["preset"]) == ["legacy", "patched"]
    obs = pd.read_csv(tmp_path / "observations.csv")
    assert len(obs) == runs["num_requests"].sum()
    assert "| 32k | patched |" in (tmp_path / "report.md").read_text()
    # A timeline's tooltips give each divergence a cause, not only where it is: legacy's summary
    # call at another effort is a new request family, not changed tools.
    html = (tmp_path / "report.html").read_text()
    assert "diverged at tools @ byte 0: effort-changed: the first request with reasoning_effort high" in html
    assert "diverged at tools @ byte 0: cold-start" in html


def test_the_report_page_of_several_seeds_shows_every_seed_and_names_the_one_it_draws(tmp_path, capsys):
    # Before: report.html drew the lowest seed's runs only, with one line in "What ran" that said
    # so; nothing on the page said what the other seeds did. Now it opens with the across-seeds
    # table of report.md (median [min..max], the seed count) and each section below names its seed.
    assert main([*SMALL, "--seeds", "1,2,3", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    html = (tmp_path / "report.html").read_text()
    page = html.split('<script type="application/json"')[0]
    assert "<h2>Across 3 seeds</h2>" in page
    assert "2 configurations x 3 seeds at 32k; seed 1 drawn" in page
    for heading in ("Runs", "Summary-call hit rate", "Requests over time"):
        assert f"<h2>{heading} (seed 1)</h2>" in page
    runs = pd.read_csv(tmp_path / "runs.csv")
    across = page.split("<h2>Across 3 seeds</h2>")[1].split("</table>")[0]
    for preset in ("legacy", "patched"):
        totals = sorted(runs.loc[runs["preset"] == preset, "session_uncached_tokens"])
        median, lo, hi = (f"{int(v):,}" for v in (totals[1], totals[0], totals[2]))
        assert f"{median} [{lo}..{hi}]" in across, preset  # every seed, not seed 1's figure alone
    assert "<td class=\"n\">3</td>" in across  # the seed count


def test_report_md_explains_the_400s_column_only_where_it_has_one(tmp_path, capsys):
    # Before: every report.md explained "*400s*" under its table, a lenient sweep's too, whose
    # table has no such column.
    assert main([*SMALL, "--out", str(tmp_path / "lenient")]) == 0
    report = (tmp_path / "lenient" / "report.md").read_text()
    assert "| 400s |" not in report and "*400s*" not in report
    assert main([*SMALL, "--seeds", "0,1", "--profile", "deepseek-relay", "--out", str(tmp_path / "strict")]) == 0
    report = (tmp_path / "strict" / "report.md").read_text()
    assert "| 400s |" in report and "*400s* counts requests the provider profile rejected" in report
    capsys.readouterr()


def test_two_sweeps_are_byte_identical(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main([*SMALL, "--out", str(a), "--format", "json"]) == 0
    first = capsys.readouterr().out
    assert main([*SMALL, "--out", str(b), "--format", "json"]) == 0
    assert capsys.readouterr().out == first
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert len(files) >= 7
    for rel in files:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_json_has_the_documented_fields(tmp_path, capsys):
    main([*SMALL, "--out", str(tmp_path), "--format", "json"])
    runs = json.loads(capsys.readouterr().out)
    assert len(runs) == 2
    for key in (
        "workload", "window", "preset", "num_folds", "summary_prompt_tokens", "summary_cached_tokens",
        "summary_uncached_tokens", "summary_hit_ratio", "session_prompt_tokens", "session_cached_tokens",
        "session_uncached_tokens", "engine", "profile", "num_rejected",
    ):
        assert key in runs[0], key
    legacy, patched = runs
    assert len(patched["summary_uncached_tokens"]) == patched["num_folds"] >= 1
    assert legacy["uncached_change_vs_legacy"] == 0.0 and patched["uncached_change_vs_legacy"] < 0


def test_finished_runs_survive_a_later_failure(tmp_path, monkeypatch, capsys):
    calls = []
    real = sweep_module.execute_planned

    def flaky(item, spec=None):
        calls.append(item.preset)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return real(item, spec)

    monkeypatch.setattr(store_module, "execute_planned", flaky)
    with pytest.raises(RuntimeError) as raised:
        main([*SMALL, "--jobs", "1", "--out", str(tmp_path)])
    # The first run is in the store; no CSV or report claims anything. The folder is not marked
    # unfinished: re-running would stop the same way; the error says what was kept.
    assert len(list((tmp_path / "store").glob("*.parquet"))) == 1
    assert not (tmp_path / "SWEEP-UNFINISHED").exists() and not (tmp_path / "runs.csv").exists()
    assert any("1 of 2 runs are in" in note for note in raised.value.__notes__)
    monkeypatch.setattr(store_module, "execute_planned", real)
    calls.clear()
    assert main([*SMALL[:-1], "--jobs", "1", "--out", str(tmp_path)]) == 0
    assert "1 of 2 runs already in" in capsys.readouterr().err
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert list(runs["preset"]) == ["legacy", "patched"] and not (tmp_path / "SWEEP-UNFINISHED").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sweep", "--presets", "legacy,pached"], "--presets: unknown preset 'pached': did you mean 'patched'? (known: legacy,"),
        (["sweep", "--workload", "thinkingtools"], "--workload: unknown workload 'thinkingtools': did you mean 'thinking-tools'? (known: "),
        (["sweep", "--engines", "checkpoint,range"], "--engines: workload 'seed-coding' has no engine 'range': did you mean 'ranges' (with --workload thinking-tools)?"),
        (["check", "--preset", "pached"], "--preset: unknown preset 'pached': did you mean 'patched'?"),
        (["audit", "--input", "codx", "x.jsonl"], "--input: invalid choice 'codx': did you mean 'codex'? ("),
        (["audit", "--format", "jsn", "x.jsonl"], "--format: invalid choice 'jsn': did you mean 'json'? (choose from table, json, md)"),
        (["audt"], "prefixbench: error: unknown command 'audt': did you mean 'audit'? (choose from sweep, check, replay, compare, audit, "),
    ],
)
def test_a_bad_name_names_its_option_and_the_closest_choice(tmp_path, capsys, argv, message):
    """``unknown preset 'pached'`` named neither --presets nor 'patched', and ``audit --input
    codx`` dumped argparse's list of some 60 names: each names the option, the value, the closest
    choice, and the choices (inline where few, else the --help that lists them)."""
    assert main([*argv, "--out", str(tmp_path)] if argv[0] == "sweep" else argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    if argv[:2] == ["audit", "--input"]:
        assert "listed by 'prefixbench audit --help'" in lines[0] and "'claude-code'" not in lines[0]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["sweep", "--windows", "0"], "--windows: window must be a positive"),
        (["sweep", "--windows", "abc"], "--windows: 'abc' is not a token count"),
        (["sweep", "--presets", "legacy,nope"], "unknown preset 'nope'"),
        (["sweep", "--windows", "32k", "--retain-tokens", "30000"], "--retain-tokens 30000 must be below the threshold"),
        (["sweep", "--retain-ratio", "0.85"], "--retain-ratio must be >= 0 and below --threshold-ratio"),
        (["sweep", "--cache", "nope"], "unknown cache model 'nope'"),
        (["sweep", "--bogus"], "unrecognized arguments: --bogus"),
        (["check", "--preset", "nope"], "unknown preset 'nope'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, message):
    assert main([*argv, "--out", str(tmp_path)] if argv[0] == "sweep" else argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("prefixbench: error: ") and message in lines[0]
    assert not (tmp_path / "runs.csv").exists()  # validated before anything ran


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # argparse would say "required: PATH" first; the unknown option is the mistake to name.
        (["audit", "--bogus"], "unrecognized arguments: --bogus (see 'prefixbench audit --help')"),
        (["audit", "--quiet", "--bogus=3"], "unrecognized arguments: --bogus=3 (see 'prefixbench audit --help')"),
        (["audit", "somewhere", "--bogus"], "unrecognized arguments: --bogus (see 'prefixbench audit --help')"),
        (["audit"], "the following arguments are required: PATH (see 'prefixbench audit --help')"),
        (["audit", "--qui"], "the following arguments are required: PATH"),  # an abbreviation argparse accepts
        (["--bogus"], "unrecognized arguments: --bogus (see 'prefixbench --help')"),
    ],
)
def test_an_unknown_option_is_named_before_a_missing_argument(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err


def test_check_gates_on_the_preset(capsys):
    assert main(["check", "--windows", "32k"]) == 0
    out = capsys.readouterr().out
    assert out.count("PASS") >= 4 and "0 failed" in out
    assert main(["check", "--preset", "legacy", "--windows", "32k"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  summary-replays-routed-effort" in out
    failed = out.strip().splitlines()[-1]
    for name in ("prune-keeps-replayed-region", "summary-replays-routed-effort", "summary-uncached-bounded",
                 "official-accepts-every-request", "relay-accepts-every-request"):
        assert name in failed
    assert "no-silent-rewrite" not in failed  # the structural guard passes on every preset


def test_replay_reports_each_request(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    base = {"model": "m", "messages": [{"role": "user", "content": "hello there"}]}
    longer = {"model": "m", "messages": [*base["messages"], {"role": "assistant", "content": "hi"}]}
    other = {**base, "reasoning_effort": "max"}
    log.write_text("\n".join(json.dumps(b) for b in (base, longer, other)) + "\n")
    assert main(["replay", str(log), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["index"] for r in rows] == [0, 1, 2]
    assert rows[1]["extends_previous"] and rows[1]["cached_tokens"] == rows[0]["prompt_tokens"]
    assert rows[2]["cached_tokens"] == 0 and rows[2]["divergence"]["byte"] == 0
    assert set(rows[0]) >= {"index", "prompt_tokens", "cached_tokens", "uncached_tokens", "extends_previous", "divergence"}
    assert main(["replay", str(log)]) == 0
    assert "first divergence" in capsys.readouterr().out


def test_replay_bad_file_names_file_and_line(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n{"model": "m"}\n')
    assert main(["replay", str(log)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"prefixbench: error: {log}:2: missing field 'messages'"


@pytest.mark.parametrize("command", [["replay"], ["check", "--trace"]])
def test_a_log_with_a_line_longer_than_a_csv_field_is_one_line_not_a_traceback(tmp_path, capsys, command):
    # fuzz59: a log that is not JSON was tried as a prefixbench result (runs.csv) to say what it is;
    # a line of more than 128 KiB (minimal: '"' and 131,073 x) raised _csv.Error there, a traceback.
    log = tmp_path / "log.jsonl"
    log.write_text('"' + "x" * 131_073)
    assert main([*command, str(log)]) == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: {log}:1: invalid JSON (Unterminated string starting at column 1)"


def test_priced_sweep_adds_dollars_everywhere(tmp_path, capsys):
    assert main([*SMALL, "--out", str(tmp_path), "--price", "deepseek-v4-flash", "--format", "json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    legacy, patched = runs
    assert patched["total_usd"] < legacy["total_usd"]
    assert patched["saving_vs_legacy_usd"] == pytest.approx(legacy["total_usd"] - patched["total_usd"])
    assert {"cost.md", "cost.png"} <= {p.name for p in tmp_path.iterdir()}
    assert "## Cost" in (tmp_path / "report.md").read_text()
    obs = pd.read_csv(tmp_path / "observations.csv")
    assert {"uncached_input_usd", "cache_read_usd", "cache_write_usd", "output_usd", "total_usd"} <= set(obs.columns)


def test_unknown_price_model_names_close_ones_and_where_the_list_is(tmp_path, capsys):
    assert main([*SMALL, "--out", str(tmp_path), "--price", "gpt-9"]) == 2
    err = capsys.readouterr().err
    assert "unknown price model 'gpt-9' (closest priced: gpt-5" in err and "every priced model: prefixbench/simulator/data/prices.csv" in err
    assert "deepseek-v4-flash" not in err  # not the whole table
    assert not (tmp_path / "runs.csv").exists()


@pytest.mark.parametrize("command", ["sweep", "replay"])
def test_an_unknown_price_model_names_the_option(tmp_path, capsys, command):
    # "prefixbench: error: unknown price model 'claude-sonet-4-5' (known: ...": which option was wrong went unsaid.
    log = tmp_path / "r.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    argv = [*SMALL, "--out", str(tmp_path / "o")] if command == "sweep" else ["replay", str(log)]
    assert main([*argv, "--price", "claude-sonet-4-5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("prefixbench: error: --price: unknown price model 'claude-sonet-4-5' (did you mean 'claude-sonnet-4-5'? closest priced: ")


def test_cross_engine_sweep_counts_rejections_and_explains_the_winner(tmp_path, capsys):
    argv = ["sweep", "--workload", "thinking-tools", "--engines", "checkpoint,ranges,user-tail",
            "--profile", "deepseek-official", "--windows", "32k", "--presets", "legacy,patched",
            "--quiet", "--out", str(tmp_path), "--format", "json"]
    assert main(argv) == 0
    runs = {(r["engine"], r["preset"]): r for r in json.loads(capsys.readouterr().out)}
    assert runs[("ranges", "legacy")]["num_rejected"] > 0
    assert all(runs[(e, "patched")]["num_rejected"] == 0 for e in ("checkpoint", "ranges", "user-tail"))
    assert all(r["profile"] == "deepseek-official" for r in runs.values())
    report = (tmp_path / "report.md").read_text()
    assert "## Which engine sends the fewest uncached tokens" in report
    assert "At 32k, **checkpoint** sends the fewest uncached tokens" in report
    assert (tmp_path / "engines.png").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--workload", "thinking-tools", "--engines", "magic"], "--engines: workload 'thinking-tools' has no engine 'magic'"),
        (["--workload", "thinking-tools", "--profile", "strict"], "unknown profile 'strict'"),
        (["--workload", "thinking-tools", "--steps", "5"], "--steps does not apply to workload 'thinking-tools'"),
        (["--turns", "2"], "--turns does not apply to workload 'seed-coding'"),
    ],
)
def test_bad_cross_engine_options(tmp_path, capsys, argv, message):
    assert main(["sweep", "--windows", "32k", "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err


def test_an_unknown_engine_lists_the_installed_engines_too(tmp_path, capsys):
    # "(known: checkpoint)": the installed engines, which sweep runs on this workload as well
    # (--help lists them), were left out of the line.
    assert main(["sweep", "--windows", "32k", "--out", str(tmp_path), "--engines", "sliding-windw"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("prefixbench: error: --engines: workload 'seed-coding' has no engine 'sliding-windw': did you mean 'sliding-window'? (known: checkpoint, ")
    assert ", sliding-window," in err and err.endswith("; or package.module:factory)") and "\n" not in err


def test_an_engine_config_table_for_an_unknown_engine_names_every_name_a_table_may_take(tmp_path, capsys):
    # On integ53 it named only the three built-in engines, though a table may name an installed
    # engine or a user's (check --engine my_engine:factory --engine-config, keyed by its import path).
    path = tmp_path / "engines.toml"
    path.write_text("[other]\nratio = 0.5\n")
    assert main(["check", "--engine", "tests.user_engines:declared", "--windows", "32k", "--engine-config", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"prefixbench: error: {path}: unknown engine 'other' (known: checkpoint, user-tail, ranges; installed: "), err
    assert ", sliding-window," in err and err.endswith("; or a user's engine as given to --engine, package.module:factory)"), err
    assert "\n" not in err


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('{"magic": {}}', "unknown engine 'magic'"),
        ('{"ranges": {"tier2_trigger": 0}}', "tier2_trigger"),
        ('{"ranges": {"protected_tools": [1]}}', "protected_tools"),
        ('{"ranges": {"nope": 1}}', "unknown config key 'nope'"),
        ('{"user-tail": {"nope": 1}}', "nope"),
        ('{"checkpoint": {"retain_ratio": 0.9}}', "retain_ratio"),
        ("{not json", "invalid JSON"),
    ],
)
def test_malformed_engine_config_is_one_line_naming_file_and_key(tmp_path, capsys, config, message):
    path = tmp_path / "engines.json"
    path.write_text(config)
    argv = ["sweep", "--workload", "thinking-tools", "--engines", "ranges", "--windows", "32k",
            "--engine-config", str(path), "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(path) in err and message in err, err


def test_engine_config_in_toml_changes_the_run(tmp_path, capsys):
    path = tmp_path / "engines.toml"
    path.write_text("[checkpoint]\nretain_ratio = 0.3\n")
    base = ["sweep", "--windows", "64k", "--presets", "patched", "--steps", "40", "--quiet", "--format", "json"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    default = json.loads(capsys.readouterr().out)[0]
    assert main([*base, "--out", str(tmp_path / "b"), "--engine-config", str(path)]) == 0
    wider_tail = json.loads(capsys.readouterr().out)[0]
    assert wider_tail["session_uncached_tokens"] != default["session_uncached_tokens"]


def test_sweep_and_replay_take_a_provider_cache_model(tmp_path, capsys):
    assert main([*SMALL, "--out", str(tmp_path), "--cache", "openai", "--format", "json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert {r["cache"] for r in runs} == {"openai"}
    log = tmp_path / "log.jsonl"
    body = {"model": "m", "messages": [{"role": "user", "content": "x" * 8000}]}
    log.write_text(json.dumps(body) + "\n" + json.dumps(body) + "\n")
    assert main(["replay", str(log), "--cache", "openai", "--format", "json"]) == 0
    first, second = json.loads(capsys.readouterr().out)
    # OpenAI (before 5.6) caches in 128-token steps from 1,024 tokens on.
    assert second["cached_tokens"] % 128 == 0 and second["cached_tokens"] >= 1024


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--cache", "mistral"], "unknown cache model 'mistral'"),
        (["--cache", "xai:block=0"], "xai: block must be a positive integer"),
        (["--cache", "openai:mode=7"], "mode must be one of"),
        (["--tokenizer", "bogus", "--cache", "vllm"], "unknown tokenizer 'bogus'"),
    ],
)
def test_bad_cache_options_are_one_line(tmp_path, capsys, argv, message):
    assert main([*SMALL, "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err


def test_a_provider_model_s_assumptions_are_in_the_report(tmp_path):
    assert main([*SMALL, "--out", str(tmp_path), "--cache", "xai:block=64"]) == 0
    report = (tmp_path / "report.md").read_text()
    assert "## Assumptions of the cache model" in report
    assert "- xai: block=64 (given; default 1), rests on [M], seen 1 (direct, OpenRouter [M]) - 64 (a gateway [M]) - 128 [S]: read step in tokens" in report
    assert "- xai: routing=sticky (default), rests on [O]" in report
    assert "assumes xai: block=64 (given; default 1)" in (tmp_path / "report.html").read_text()


def test_a_simulation_option_given_is_in_the_report_s_assumptions(tmp_path):
    # Fails on main: --cache anthropic:rules=bedrock (Bedrock's minimums and cap) was left out
    # of the assumptions, which listed the provider facts' options alone, so the report of a
    # Bedrock sweep read as an Anthropic one.
    assert main([*SMALL, "--out", str(tmp_path), "--cache", "anthropic:rules=bedrock"]) == 0
    report = (tmp_path / "report.md").read_text()
    assert "- anthropic: rules=bedrock (given; default anthropic), a simulation option" in report
    assert "- anthropic: ttl_from=start (default), rests on [O]" in report


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # argparse read '-5k' as an option: "argument --windows: expected one argument".
        (["sweep", "--windows", "-5k"], "--windows: window must be a positive number of tokens up to 1,000m, got '-5k'"),
        (["sweep", "--windows=-5k"], "--windows: window must be a positive number of tokens up to 1,000m, got '-5k'"),
        (["sweep", "--win", "-5k"], "--windows: window must be a positive number"),  # an abbreviation argparse accepts
        (["sweep", "--seeds", "-1-3"], "--seeds: '-1-3' is not a seed"),
        (["sweep", "--jobs", "-1e3"], "--jobs: '-1e3' is not a whole number"),
        (["sweep", "--retain-tokens", "-1k"], "--retain-tokens: '-1k' is not a whole number"),
        (["check", "--windows", "-5k"], "--windows: window must be a positive number"),
        (["bench", "--windows", "-.5k"], "--windows: window must be a positive number of tokens up to 1,000m, got '-.5k'"),
        (["audit", "log.jsonl", "--min-hit-ratio", "-5e-1"], "--min-hit-ratio: -0.5 is not between 0 and 1"),
        (["record", "--window", "-5k", "trace.jsonl"], "--window: window must be a positive number"),
        (["record", "--window", "-5k"], "the following arguments are required: FILE"),  # not "unrecognized: -5k"
        (["sweep", "--windows", "-x"], "--windows: got no value, and '-x' after it reads as an option; if it is the value, write --windows=-x"),
        (["sweep", "--windows", "--presets", "legacy"], "--windows: missing its value (a value that starts with '-' is written --windows=VALUE)"),
        (["sweep", "--presets", "legacy", "--windows"], "--windows: missing its value"),
    ],
)
def test_a_value_starting_with_a_minus_reaches_its_option(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    out = ["--out", str(tmp_path / "out")] if argv[0] in ("sweep", "bench") else []
    assert main([*argv, *out]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1 and lines[0].startswith("prefixbench: error: "), captured.err
    assert message in lines[0]
    assert "expected one argument" not in lines[0]
    assert not (tmp_path / "out").exists() and not (tmp_path / "trace.jsonl").exists()


def _option_help(capsys, command: str, option: str) -> str | None:
    """``option``'s help text in ``prefixbench command --help``, on one line (None: no such option)."""
    import re

    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capsys.readouterr().out.split("\noptions:\n", 1)[1]
    for entry in re.split(r"\n  (?=-)", text):
        if entry.split()[0] == option:
            return " ".join(entry.split())
    return None


def test_an_option_several_commands_share_is_described_alike(capsys, monkeypatch):
    """On main bench's --windows left out m = 1,000,000 (which it takes), record's --window said
    neither; bench's and record's --profile named no profile, bench's --seeds no form; and every
    --price-as-of but the error line gave one date form of the two taken."""
    from prefixbench.simulator.validate import PROFILES

    monkeypatch.setenv("COLUMNS", "2000")  # argparse wraps at hyphens too
    for command, option in (("sweep", "--windows"), ("check", "--windows"), ("bench", "--windows"), ("record", "--window")):
        assert "k = 1,000 and m = 1,000,000 tokens" in _option_help(capsys, command, option), command
    for command in ("sweep", "check", "bench", "record", "replay"):
        assert "|".join(PROFILES) in _option_help(capsys, command, "--profile"), command
    for command in ("sweep", "bench"):
        assert "0-16 (inclusive), 0,3,5 or a mix" in _option_help(capsys, command, "--seeds"), command
    for command in ("sweep", "replay", "bench", "audit"):
        assert "YYYY-MM-DD or YYYY-MM-DDTHH:MMZ" in _option_help(capsys, command, "--price-as-of"), command


@pytest.mark.parametrize("argv", [
    ["sweep", "--price", "gpt-5.1"], ["replay", "LOG", "--price", "gpt-5.1"], ["bench"], ["audit", "LOG"],
])
def test_a_bad_price_date_is_refused_naming_the_option(tmp_path, capsys, argv):
    """On main sweep, replay and bench said "price date 'x'", audit "--price-as-of 'x'"."""
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"model": "gpt-5.1", "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    argv = [str(log) if word == "LOG" else word for word in argv]
    assert main([*argv, "--price-as-of", "2026-13-01"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "prefixbench: error: --price-as-of '2026-13-01' is not YYYY-MM-DD or YYYY-MM-DDTHH:MMZ", err


def test_two_options_of_one_cache_model_are_two_runs_in_one_sweep(tmp_path):
    # Fails on main: a run was named by its cache model alone ("xai"), so xai:block=64 and
    # xai:block=128 were one cache in runs.csv and --format json, and cost.md summed both runs
    # into one row (128 requests) with one total.
    grid = tmp_path / "grid.toml"
    grid.write_text('[sweep.blocks]\nworkloads = ["seed-coding"]\nwindows = ["32k"]\npresets = ["patched"]\n'
                    'caches = ["xai:block=64", "xai:block=128"]\nprice = "grok-code-fast-1"\n')
    out = tmp_path / "out"
    assert main(["sweep", "--grid", str(grid), "--steps", "30", "--quiet", "--jobs", "1", "--out", str(out)]) == 0
    runs = pd.read_csv(out / "runs.csv")
    assert list(runs["cache"]) == ["xai:block=64", "xai:block=128"]
    # Reads counted in 64-token steps are never fewer than in 128-token steps.
    assert runs["session_cached_tokens"][0] >= runs["session_cached_tokens"][1]
    assert runs["total_usd"][0] <= runs["total_usd"][1]
    cost = (out / "cost.md").read_text()
    assert cost.count("| 32k | patched |") == 2


def test_the_top_level_help_lists_every_exit_status_the_readme_lists(capsys):
    # Before: --help stopped at 130, without the 143 of a proxy stopped by SIGTERM.
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for status in ("0 done", "1 a check", "2 bad input", "130 interrupted", "143 a proxy stopped by SIGTERM"):
        assert status in text, status


def test_sweep_help_says_json_still_writes_the_out_folder(capsys):
    # newuser4: --help said only "stdout format", and a user of --format json got a
    # prefixbench-out/ they had not asked for; docs/sweep.md says it is written either way.
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--out is written either way" in text


def test_audit_help_names_every_kind_of_file_a_folder_walk_reads(capsys):
    # Before: PATH's help listed *.jsonl / *.json / *.traj and the databases, not the Markdown
    # chat histories of aider (hidden .aider.chat.history.md included) that a walk also reads.
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "aider's chat histories: *.md, .aider.chat.history.md" in text


@pytest.mark.parametrize("command", ["replay", "record"])
def test_a_missing_file_is_named_as_the_docs_and_compare_name_it(command, capsys):
    # Before: "the following arguments are required: file", the docs' FILE.jsonl in lower case.
    assert main([command]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: the following arguments are required: FILE (see 'prefixbench {command} --help')")


def test_a_rejected_request_in_observations_csv_is_no_uncached_one(tmp_path):
    # A request the strict profile refused (HTTP 400) was written with cached 0, uncached its
    # whole prompt and hit ratio 0.0: summed, observations.csv disagreed with runs.csv, whose
    # session_uncached_tokens leaves refused requests out.
    argv = ["sweep", "--workload", "thinking-tools", "--engines", "ranges", "--profile", "deepseek-official",
            "--windows", "32k", "--presets", "legacy", "--quiet", "--out", str(tmp_path)]
    assert main(argv) == 0
    with open(tmp_path / "observations.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    rejected = [r for r in rows if r["status"] != "200"]
    with open(tmp_path / "runs.csv", newline="") as f:
        (run,) = csv.DictReader(f)
    assert len(rejected) == int(run["num_rejected"]) > 0
    assert all(int(r["prompt_tokens"]) > 0 and r["error"] for r in rejected)  # what was sent, and why it was refused
    not_served = ("cached_tokens", "uncached_tokens", "written_tokens", "written_long_tokens", "cached_explicit_tokens", "hit_ratio")
    assert {r[c] for r in rejected for c in not_served} == {""}
    assert sum(int(r["uncached_tokens"]) for r in rows if r["status"] == "200") == int(run["session_uncached_tokens"])


def test_check_help_names_the_engine_and_the_trace_it_judges(capsys):
    # "run the integrity specs against a preset": a user gating their own engine or agent's
    # recorded traffic read that check was not for them.
    with pytest.raises(SystemExit):
        main(["--help"])
    top = " ".join(capsys.readouterr().out.split())
    assert "run the integrity specs on a preset, your engine (--engine) or a recorded log (--trace)" in top
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "--trace FILE" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("command", ["sweep", "check", "replay", "compare", "audit", "record", "bench", "proxy"])
def test_help_never_breaks_a_name_at_its_hyphen(capsys, command):
    """``mini-swe-`` / ``agent`` or ``chat-`` / ``completions`` at a line end reads as two words;
    names such as cache models, formats and strategies stay whole on one line."""
    with pytest.raises(SystemExit):
        main([command, "--help"])
    lines = capsys.readouterr().out.splitlines()
    broken = [line for line in lines if line.rstrip().endswith("-") and line.rstrip()[-2:-1].isalnum()]
    assert not broken, broken


@pytest.mark.parametrize(("argv", "smallest"), [
    (["check", "--trace", "LOG", "--windows", "10"], "1,000 tokens (1k), the smallest a log is judged at"),
    (["sweep", "--windows", "32k,7999"], "8,000 tokens (8k), the smallest a scripted workload runs at"),
    (["record", "OUT", "--window", "5k"], "8,000 tokens (8k), the smallest a scripted workload runs at"),
])
def test_a_window_below_the_smallest_a_command_takes_is_refused(tmp_path, capsys, argv, smallest):
    # check --trace --windows 10 was judged: 64 of 64 requests "over the window".
    log = tmp_path / "r.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    argv = [str(log) if a == "LOG" else str(tmp_path / "out.jsonl") if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"window must be at least {smallest}" in err, err


def test_check_trace_judges_a_log_of_a_4k_model(tmp_path, capsys):
    # A recorded log of a 4k-context model is real: the scripted workloads' 8k floor refused it.
    log = tmp_path / "r.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    assert main(["check", "--trace", str(log), "--windows", "4096"]) in (0, 1)
    assert "window must be at least" not in capsys.readouterr().err


def test_a_price_row_of_another_providers_cache_is_noted(tmp_path, capsys):
    # --price gpt-5.1 --cache anthropic was taken silently: Anthropic's cache at OpenAI's rates.
    from prefixbench.reports.options import cross_priced_note
    from prefixbench.simulator.pricing import get_price

    openai = get_price("gpt-5.1")
    assert cross_priced_note("anthropic:ttl=1h", openai) == (
        "note: --price gpt-5.1 is openai's price row and --cache anthropic:ttl=1h models anthropic's cache: "
        "anthropic's cached reads and writes are priced at openai's rates")
    assert cross_priced_note("openai", openai) is None and cross_priced_note("byte-exact", openai) is None
    log = tmp_path / "r.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    assert main(["replay", str(log), "--price", "gpt-5.1", "--cache", "anthropic"]) == 0
    assert "note: --price gpt-5.1 is openai's price row and --cache anthropic" in capsys.readouterr().err


def test_check_says_which_preset_ran_and_the_pages_show_it(capsys):
    # newuser (round 60): `check --preset legacy` ended "3 passed, 3 failed: ...", naming no
    # preset (a user engine's spec lines do not name it either).
    from pathlib import Path

    assert main(["check", "--preset", "legacy", "--windows", "32k", "--engines", "checkpoint"]) == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("preset legacy: 3 passed, 3 failed: ")
    root = Path(__file__).resolve().parents[3]
    for page in ("README.md", "docs/check.md"):
        text = (root / page).read_text(encoding="utf-8")
        block = text.split("$ prefixbench check --preset legacy --windows 32k --engines checkpoint\n", 1)[1].split("```", 1)[0]
        assert block.strip().splitlines()[-1] == last, page
