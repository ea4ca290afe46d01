"""Start-up stays light: pandas and matplotlib load only when a table file or a chart is written,
and replay and audit (without --out) do not import ``dataclasses`` (the records are msgspec
structs; README, Speed).

Each probe runs in a fresh interpreter (the test process itself has imported everything) and
reports which heavy modules ``sys.modules`` holds after the command. The sweep probe, which
does write charts, shows the probe can see them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pandas", "matplotlib")

PROBE = """
import json, sys
from prefixbench.reports.cli import main
try:
    status = main({argv!r})
except SystemExit as exit:  # --help and --version exit from argparse
    status = exit.code
sys.stdout.flush()
print("\\nPROBE " + json.dumps([name for name in {heavy!r} if name in sys.modules]))
"""


def loaded_after(argv: list[str] | None, tmp_path: Path, modules: tuple[str, ...] = HEAVY) -> list[str]:
    """Which of ``modules`` ``import prefixbench.reports.cli`` (argv None) or running ``argv`` loads."""
    if argv is None:
        code = f"import json, sys, prefixbench.reports.cli\nprint('PROBE ' + json.dumps([n for n in {modules!r} if n in sys.modules]))"
    else:
        code = PROBE.format(argv=argv, heavy=modules)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    marker = [line for line in done.stdout.splitlines() if line.startswith("PROBE ")]
    assert marker, f"probe printed nothing; stderr: {done.stderr[-2000:]}"
    return json.loads(marker[-1][len("PROBE ") :])


def test_importing_the_cli_loads_neither_pandas_nor_matplotlib(tmp_path):
    assert loaded_after(None, tmp_path) == []
    code = f"import json, sys, prefixbench.reports.entry\nprint('PROBE ' + json.dumps([n for n in {HEAVY!r} if n in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.stdout.strip() == "PROBE []", done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        ["replay", "--help"],
        ["sweep", "--help"],
        ["audit", "--help"],
        ["compare", "--help"],
        ["check", "--help"],
        ["record", "--help"],
        ["check", "--preset", "patched", "--engines", "checkpoint", "--windows", "32k"],
    ],
    ids=lambda argv: " ".join(argv),
)
def test_commands_that_write_no_table_file_or_chart_stay_light(argv, tmp_path):
    assert loaded_after(argv, tmp_path) == []


def test_replay_stays_light(tmp_path):
    log = tmp_path / "log.jsonl"
    line = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
    log.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")
    assert loaded_after(["replay", str(log)], tmp_path) == []
    assert loaded_after(["replay", str(log), "--format", "json"], tmp_path) == []


def test_audit_without_out_stays_light(tmp_path, realdata):
    transcripts = sorted((realdata / "claude-code-viewer").glob("*.jsonl"))
    if not transcripts:
        pytest.skip("no Claude Code transcripts in the shared real data")
    assert loaded_after(["audit", *map(str, transcripts), "--quiet"], tmp_path) == []


def test_audit_imports_neither_numpy_nor_the_workloads(tmp_path):
    # The command line fills in the options of the subcommand it runs only: record's (the
    # workloads' registry, whose filler text imports numpy: a tenth of a second of CPU an audit)
    # stayed unloaded for every other subcommand.
    log = Path(__file__).resolve().parents[1] / "logs" / "fixtures" / "claude-code.jsonl"
    # zstandard: imported only when a zstd-compressed log is met.
    light = ("numpy", "prefixbench.workloads.scripted.registry", "zstandard")
    assert loaded_after(["audit", str(log), "--quiet"], tmp_path, light) == []
    assert loaded_after(["audit", str(log), "--quiet", "--format", "json"], tmp_path, light) == []


def test_the_probe_sees_heavy_modules_when_a_sweep_writes_charts(tmp_path):
    argv = ["sweep", "--windows", "32k", "--presets", "patched", "--steps", "20", "--quiet", "--out", str(tmp_path / "out")]
    assert set(loaded_after(argv, tmp_path)) == set(HEAVY)


def test_version_prints_on_stdout_and_exits_0(tmp_path):
    done = subprocess.run([sys.executable, "-m", "prefixbench", "--version"], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith("prefixbench ") and done.stderr == ""


def test_check_and_record_do_not_import_dataclasses(tmp_path):
    light = ("dataclasses",)
    assert loaded_after(["check", "--preset", "patched", "--engines", "checkpoint", "--windows", "32k"], tmp_path, light) == []
    assert loaded_after(["record", str(tmp_path / "log.jsonl"), "--steps", "8"], tmp_path, light) == []


def test_replay_and_audit_do_not_import_dataclasses(tmp_path, realdata, realdata_logs):
    log = tmp_path / "log.jsonl"
    line = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}
    log.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")
    light = ("dataclasses",)
    assert loaded_after(["replay", str(log)], tmp_path, light) == []
    assert loaded_after(["replay", str(log), "--cache", "anthropic", "--format", "json"], tmp_path, light) == []
    capture = realdata / "claude-trace-lemmy" / "test-traffic.jsonl"
    if not capture.is_file():
        pytest.skip(f"no claude-trace capture at {capture}")
    assert loaded_after(["replay", "--input", "anthropic-capture", str(capture)], tmp_path, light) == []
    logs = [str(folder) for folder in realdata_logs]
    assert loaded_after(["audit", *logs, "--quiet"], tmp_path, light) == []
    assert loaded_after(["audit", *logs, "--quiet", "--format", "json"], tmp_path, light) == []
