"""Mistakes a new user makes, followed through the guide: each is one line naming what and
where, exit 2, no traceback, nothing computed lost. Each test says what main did."""

from __future__ import annotations

from pathlib import Path

import pytest

from prefixbench.reports.cli import main


@pytest.mark.parametrize("workload", ["subagents", "idle-gaps"])
def test_an_engine_config_table_for_a_workload_with_fixed_settings_is_one_line(workload, tmp_path, capsys) -> None:
    # Fails on main: KeyError 'checkpoint', a traceback (the workloads run checkpoint but take no table).
    config = tmp_path / "engines.toml"
    config.write_text("[checkpoint]\nretain_ratio = 0.3\n")
    assert main(["sweep", "--workload", workload, "--engine-config", str(config), "--windows", "32k", "--quiet",
                 "--out", str(tmp_path / "out")]) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert err == (f"prefixbench: error: {config}: workload '{workload}' takes no [checkpoint] table: its checkpoint "
                   "engine has fixed settings; a [checkpoint] table applies to --workload seed-coding or thinking-tools")
    assert not (tmp_path / "out").exists()


def test_engine_config_help_says_which_workloads_take_no_table(capsys, monkeypatch) -> None:
    # Fails on main: the help ended "subagents: ; idle-gaps: )", an empty listing.
    monkeypatch.setenv("COLUMNS", "2000")  # no line wrapped inside a name
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "none on subagents, idle-gaps" in help_text and "subagents: ;" not in help_text


@pytest.mark.parametrize(("command", "flag", "names"), [
    ("record", "--workload", "seed-coding, thinking-tools, subagents, idle-gaps"),
    ("record", "--preset", "legacy, envelope-fix, prune-fix, patched, pre-d677"),
    ("bench", "--preset", "legacy, envelope-fix, prune-fix, patched, pre-d677"),
    ("bench", "--workloads", "seed-coding, thinking-tools, subagents, idle-gaps"),
])
def test_a_flag_that_takes_a_name_lists_the_names_in_its_help(command, flag, names, capsys, monkeypatch) -> None:
    # Fails on main: record's help said only "workload (default: seed-coding)" and "preset
    # (default: patched)", bench's the same; sweep's and check's list them.
    monkeypatch.setenv("COLUMNS", "2000")
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    start = out.index(f"\n  {flag} ")
    entry = " ".join(out[start : out.find("\n  --", start + 1)].split())
    assert names in entry, entry


SMALL_BENCH = ["--workloads", "seed-coding", "--strategies", "checkpoint", "--caches", "openai", "--windows", "32k",
               "--seeds", "0-5", "--steps", "5"]


@pytest.mark.parametrize("argv", [
    ["sweep", "--jobs", "100000", "--windows", "32k", "--steps", "5"],
    ["sweep", "--jobs", "9", "--scheduler", "local", "--windows", "32k", "--steps", "5"],
    ["bench", "--jobs", "100000", *SMALL_BENCH],
    ["audit", "{log}", "--jobs", "100000"],
])
def test_a_huge_jobs_is_one_line_before_any_process_is_forked(argv, tmp_path, monkeypatch, capsys) -> None:
    # Fails on main: --jobs 100000 was taken, and the process pool forks every worker at its
    # first submit (fork start method), busy or not: a fork bomb from one typo. (Here the pool
    # is replaced by one that refuses to start, so on main the test fails without forking.)
    import concurrent.futures
    import os

    def no_pool(*args, **kwargs):
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    (tmp_path / "log.jsonl").write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    argv = [word.replace("{log}", "log.jsonl") for word in argv]
    assert main([*argv, "--quiet"] if argv[0] != "audit" else argv) == 2
    (err,) = capsys.readouterr().err.splitlines()
    value = argv[argv.index("--jobs") + 1]
    assert err.startswith(f"prefixbench: error: --jobs {int(value):,}: more than 4 x the 2 cores here (8); "), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.jsonl"]  # nothing written


def test_the_pool_never_forks_more_workers_than_runs(monkeypatch) -> None:
    # Fails on main: ProcessPoolExecutor(max_workers=jobs) for 3 runs at --jobs 8 forked 8
    # processes (measured: 40 children for 16 runs at --jobs 40), 5 of them idle.
    import concurrent.futures

    from prefixbench.workloads.runs.execute import map_runs

    asked: list[int] = []

    class Stop(Exception):
        pass

    def pool(max_workers, **_):
        asked.append(max_workers)
        raise Stop

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", pool)
    with pytest.raises(Stop):
        list(map_runs(abs, [-1, -2, -3], jobs=8))
    assert asked == [3]


def _sweep_json(tmp_path, capsys) -> str:
    assert main(["sweep", "--windows", "32k", "--presets", "patched", "--steps", "5", "--quiet", "--format", "json",
                 "--out", str(tmp_path / "out")]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(("markdown", "line"), [
    ("{tmp}", "--markdown {tmp}: is a folder; name a file"),
    ("{tmp}/base.json/pr.md", "--markdown {tmp}/base.json/pr.md: lies under the file {tmp}/base.json, not a folder"),
])
def test_compare_refuses_a_markdown_path_it_cannot_write_before_comparing(markdown, line, tmp_path, capsys) -> None:
    # Fails on main: "{tmp}: Is a directory" / "...: No such file or directory", without the flag.
    (tmp_path / "base.json").write_text(_sweep_json(tmp_path, capsys))
    base = str(tmp_path / "base.json")
    assert main(["compare", base, base, "--markdown", markdown.replace("{tmp}", str(tmp_path))]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"prefixbench: error: {line.replace('{tmp}', str(tmp_path))}"]
    assert captured.out == ""


def test_compare_markdown_makes_its_missing_folders_as_junit_does(tmp_path, capsys) -> None:
    (tmp_path / "base.json").write_text(_sweep_json(tmp_path, capsys))
    base = str(tmp_path / "base.json")
    assert main(["compare", base, base, "--markdown", str(tmp_path / "new" / "sub" / "pr.md")]) == 0
    assert (tmp_path / "new" / "sub" / "pr.md").read_text().startswith("## prefixbench compare (sweep): PASS")


def test_compare_save_into_a_folder_it_cannot_write_is_one_line_before_the_verdict(tmp_path, monkeypatch, capsys) -> None:
    # Fails on main: the comparison was printed, then "... Permission denied" (exit 2 over the
    # verdict), naming the temporary file, not --save.
    import os

    (tmp_path / "base.json").write_text(_sweep_json(tmp_path, capsys))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: Path(path).resolve() != work)  # as a read-only folder
    assert main(["compare", str(tmp_path / "base.json"), str(tmp_path / "base.json"), "--save", "main"]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"prefixbench: error: --save main: cannot write .prefixbench/main.json (folder {work} is not writable)"]
    assert captured.out == "" and not (work / ".prefixbench").exists()


def test_compare_given_a_request_log_says_it_is_a_log(tmp_path, capsys) -> None:
    # Fails on main: "log.jsonl:2: not valid JSON (Extra data)".
    (tmp_path / "base.json").write_text(_sweep_json(tmp_path, capsys))
    log = tmp_path / "log.jsonl"
    log.write_text('{"model": "m", "messages": []}\n{"model": "m", "messages": []}\n')
    assert main(["compare", str(tmp_path / "base.json"), str(log)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"prefixbench: error: {log}:2: one JSON value a line (a log?), not a result: compare reads runs.csv, "
        "sweep --format json or audit --format json"]


def test_sweep_name_without_a_grid_is_refused_not_ignored(tmp_path, capsys) -> None:
    # Fails on main: `sweep --sweep nightly` ignored --sweep and ran the default sweep, exit 0.
    assert main(["sweep", "--sweep", "nightly", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "prefixbench: error: --sweep nightly: names a sweep of a grid file; give --grid FILE.toml too"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("what_if", "line"), [
    ("", "--what-if: no fix named (give one or more, or all)"),
    ("breakpoints=last-0", "--what-if: breakpoints: last-0 is the last message: write last (last-N counts from 1)"),
    ("breakpoints=last+last-00", "--what-if: breakpoints: last-0 is the last message: write last (last-N counts from 1)"),
    ("breakpoints=last-1+last-01", "--what-if: breakpoints: a place is named twice in 'last-1+last-01'"),
    # (a 5,000-digit N was int() past Python's digit limit: a ValueError traceback)
    ("breakpoints=last-" + "9" * 5000, "--what-if: breakpoints: 'last-" + "9" * 5000 + "' is not tools, system, last, "
     "last-N (N up to 9999) or auto"),
])
def test_odd_what_if_values_are_one_line(what_if, line, tmp_path, capsys) -> None:
    # Fails on main: --what-if "" ran the audit as if no --what-if was given; last-0 (the last
    # message again) and last-01 (last-1 again) were taken as other places.
    log = tmp_path / "log.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    assert main(["audit", str(log), "--what-if", what_if]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [f"prefixbench: error: {line}"] and captured.out == ""


@pytest.mark.parametrize(("argv", "line"), [
    # Fails on main: gpt-5.1 has one price; --period peak was taken and ignored (exit 0).
    (["--price", "gpt-5.1", "--period", "peak"],
     "--period peak: gpt-5.1 has one price all day, no peak period (only DeepSeek rows with a peak_factor have one)"),
    (["--price", "deepseek-v4-flash", "--period", "peak", "--price-as-of", "2026-05-01"],
     "--period peak: deepseek-v4-flash as of 2026-05-01 has one price all day, no peak period (only DeepSeek rows with a peak_factor have one)"),
])
def test_peak_period_on_a_price_without_one_is_refused(argv, line, tmp_path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    assert main(["replay", str(log), *argv]) == 2
    assert capsys.readouterr().err.splitlines() == [f"prefixbench: error: {line}"]


def test_peak_period_on_a_deepseek_row_with_one_still_prices(tmp_path, capsys) -> None:
    log = tmp_path / "log.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    assert main(["replay", str(log), "--price", "deepseek-v4-flash", "--period", "peak", "--price-as-of", "2026-09-10"]) == 0


def test_bench_caches_all_beside_other_names_says_so(capsys) -> None:
    # Fails on main: "--caches: unknown cache model 'all' (known: ..., or all)".
    assert main(["bench", "--caches", "all,openai"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "prefixbench: error: --caches all,openai: all names every cache model and stands alone; give all, or the models"]


def test_a_window_that_is_no_whole_thousand_is_labelled_as_given(tmp_path, capsys) -> None:
    # Fails on main: check's spec lines said "@0k" for --windows 1 (and "@32k" for 32500).
    log = tmp_path / "log.jsonl"
    log.write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    main(["check", "--trace", str(log), "--windows", "32500"])
    out = capsys.readouterr().out
    assert " @32500 [" in out and "@32k" not in out


def _bounded(argv: list[str]):  # type: ignore[no-untyped-def]
    """Run the command in a process held to 1.5 GB and 120 s: on main these read /dev/zero until
    memory ran out, which must not take the test machine's memory with it."""
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))

    return subprocess.run([sys.executable, "-m", "prefixbench", *argv], capture_output=True, text=True, timeout=120,
                          preexec_fn=limit)


@pytest.mark.parametrize(("argv", "line"), [
    # Fails on main: both read /dev/zero until memory ran out ("out of memory (try fewer or
    # smaller --windows)", after taking all the memory the process may have).
    (["sweep", "--grid", "/dev/zero"], "/dev/zero: not a regular file (a device or socket has no end to read to)"),
    (["compare", "/dev/zero", "/dev/zero"], "/dev/zero: not a regular file (a device or socket has no end to read to)"),
    # Fails on main: "{tmp}: cannot read (Is a directory)".
    (["sweep", "--grid", "{tmp}"], "{tmp}: is a folder, not a file"),
])
def test_a_device_or_folder_given_for_a_file_is_refused_before_reading(argv, line, tmp_path) -> None:
    done = _bounded([word.replace("{tmp}", str(tmp_path)) for word in argv])
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"prefixbench: error: {line.replace('{tmp}', str(tmp_path))}"]


def test_compare_of_a_result_cut_short_says_where(tmp_path, capsys) -> None:
    # Fails on main: "(Unterminated string starting at)", the decoder's words cut before the column.
    cut = tmp_path / "cut.json"
    cut.write_text('[{"workload": "seed-coding", "preset": "pat')
    assert main(["compare", str(cut), str(cut)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"prefixbench: error: {cut}:1: not valid JSON (Unterminated string starting at column 40)"]


def test_a_long_record_says_it_is_still_running(tmp_path, monkeypatch, capsys) -> None:
    # Before: record --steps 3000 --window 512k ran 2.5 minutes with nothing on stderr until its
    # "wrote" line. Now a line every few seconds, as check --engine prints (none for a quick one).
    from prefixbench.reports import trace

    monkeypatch.setattr(trace, "CHECK_PROGRESS_SECONDS", 0.01)
    assert main(["record", str(tmp_path / "r.jsonl"), "--steps", "200"]) == 0
    err = capsys.readouterr().err
    assert "prefixbench: record 0/1 runs done, 1 running, " in err
    assert ", running checkpoint/patched seed-coding at 32,000 tokens" in err
    assert err.splitlines()[-2].startswith("prefixbench: record 1/1 runs done, 0 running, ")
    assert err.splitlines()[-1].startswith("wrote ")


def test_a_quick_record_prints_no_progress(tmp_path, capsys) -> None:
    assert main(["record", str(tmp_path / "r.jsonl"), "--steps", "5"]) == 0
    assert "runs done" not in capsys.readouterr().err
