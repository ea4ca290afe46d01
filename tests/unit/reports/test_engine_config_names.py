"""An ``--engine-config`` table named after a user engine's ``name`` (or module) instead of the
import path ``--engine`` gave is refused naming the header to write; ``Preset``, the type of
``options.preset``, is part of the public engine API."""

from __future__ import annotations

import pytest

from prefixbench.reports.entry import main

REF = "tests.user_engines:declared"  # its engine is named "declared-truncating"


@pytest.mark.parametrize("table, how", [("declared-truncating", "its engine's name"), ("user_engines", "its module")])
@pytest.mark.parametrize("command", ["sweep", "check"])
def test_a_table_named_another_way_says_which_header_to_write(tmp_path, capsys, table, how, command):
    config = tmp_path / "engines.toml"
    config.write_text(f'[{table}]\ndeclare = true\n')
    argv = [command, "--engine", REF, "--windows", "32k", "--engine-config", str(config)]
    if command == "sweep":
        argv += ["--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"prefixbench: error: {config}: [{table}] names {REF} by {how}, but a user engine's table is named "
                   f'as --engine gives it: ["{REF}"]'), err


def test_one_lookup_decides_every_other_name_of_an_engine(monkeypatch):
    # One function answers "which engine of the list does this table name under another name",
    # and how: by the engine's name, its module, or the same factory under its installed name.
    from importlib.metadata import EntryPoint

    from prefixbench.kernel import loading
    from prefixbench.workloads.scripted.registry import other_name_of

    assert other_name_of("declared-truncating", [REF]) == (REF, "its engine's name")
    assert other_name_of("user_engines", [REF]) == (REF, "its module")
    assert other_name_of("nothing-like-it", [REF]) is None
    assert other_name_of("ranges", [REF]) is None  # a built-in engine's name names no user engine
    entry = EntryPoint("declared-here", REF, "prefixbench.engines")
    monkeypatch.setattr(loading, "_installed_engines", lambda: (("declared-here", entry),))
    assert other_name_of(REF, ["declared-here"]) == ("declared-here", "the same factory")
    assert other_name_of("declared-here", [REF]) == (REF, "the same factory")


def test_preset_is_exported_for_engines_to_compare_by_name():
    from prefixbench.kernel import EngineOptions, Preset

    preset = EngineOptions().preset
    assert isinstance(preset, Preset) and preset.name == "patched"
