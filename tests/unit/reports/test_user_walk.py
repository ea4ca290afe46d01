"""Mistakes a new user makes, followed through the guide: each is one line naming what and
where, exit 2, no traceback, nothing computed lost. Each test says what main did."""

from __future__ import annotations

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
