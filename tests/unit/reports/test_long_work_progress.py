"""Progress of the commands that run for seconds on a big input: replay, check --trace, check on
a preset, record. A new user's 1.3 GB log: replay and check --trace sat silent for 6.5 s, and
replay had no --quiet. Now they show their reading as audit does (bytes read, then the step that
follows), on stderr only, and --quiet turns it off. These fail before: no line, no --quiet.

The intervals are made tiny here (as tests/unit/reports/test_grid.py does), so a small log is
"long work"."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from prefixbench.reports import progress as progress_module
from prefixbench.reports import trace as check_trace
from prefixbench.reports.entry import main

FIXTURES = Path(__file__).parents[1] / "logs" / "fixtures"


@pytest.fixture
def long_log(tmp_path: Path) -> Path:
    """600 request bodies: more than the 256 lines between two tellings of the bytes read."""
    log = tmp_path / "log.jsonl"
    lines = []
    for n in range(600):
        turns = [{"role": "user", "content": f"task {n // 20}"}]
        for k in range(n % 20):
            turns += [{"role": "assistant", "content": f"step {k}"}, {"role": "user", "content": f"more {k}"}]
        lines.append(json.dumps({"model": "m", "messages": turns}))
    log.write_text("\n".join(lines) + "\n")
    return log


@pytest.fixture
def every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every telling of the reading prints, and the steps after it are said at once."""
    monkeypatch.setattr(progress_module, "READ_PROGRESS_SECONDS", 0.0)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_replay_of_a_long_log_tells_its_reading_on_stderr(long_log, every_time, capsys, fmt) -> None:
    status, out, err = _run(["replay", str(long_log), "--format", fmt], capsys)
    assert status == 0
    lines = err.splitlines()
    assert lines[0].startswith("prefixbench replay: read ") and lines[0].endswith(" MB/s)"), err
    shown = "JSON" if fmt == "json" else "table"
    assert lines[-1].startswith("prefixbench replay: read 0.") and f"replayed 600 requests in " in lines[-1]
    assert lines[-1].endswith(f"; writing the {shown}")
    quiet_status, quiet_out, quiet_err = _run(["replay", str(long_log), "--format", fmt, "--quiet"], capsys)
    assert (quiet_status, quiet_err) == (0, "")
    assert quiet_out == out  # stdout the same, progress or not


def test_a_quick_replay_prints_no_progress(long_log, capsys, monkeypatch) -> None:
    # A log read within the interval says nothing (the interval an hour here, not the default
    # 3 s: a loaded CI machine may take longer than 3 s over this log).
    monkeypatch.setattr(progress_module, "READ_PROGRESS_SECONDS", 3600.0)
    assert _run(["replay", str(long_log)], capsys)[2] == ""


def test_replay_of_a_long_capture_tells_its_reading_then_the_replay(tmp_path, every_time, capsys) -> None:
    capture = tmp_path / "capture.jsonl"
    capture.write_bytes((FIXTURES / "http-capture.jsonl").read_bytes() * 150)  # 300 lines
    status, out, err = _run(["replay", "--input", "anthropic-capture", str(capture)], capsys)
    assert status == 0
    lines = err.splitlines()
    assert lines[0].startswith("prefixbench replay: read "), err
    assert lines[-1].startswith("prefixbench replay: read ") and lines[-1].endswith("s; replaying 150 calls")  # (each pair of lines one call)
    assert _run(["replay", "--input", "anthropic-capture", str(capture), "--quiet"], capsys) == (0, out, "")


def test_check_trace_of_a_long_log_tells_its_reading_and_each_replay(long_log, every_time, capsys) -> None:
    argv = ["check", "--trace", str(long_log), "--windows", "32k,128k"]
    status, out, err = _run(argv, capsys)
    lines = err.splitlines()
    assert lines[0].startswith("prefixbench check: read ") and lines[0].endswith(" MB/s)"), err
    assert lines[-2:] == [
        "prefixbench check: judging 600 requests under the lenient profile at a 32,000-token window",
        "prefixbench check: judging 600 requests under the lenient profile at a 128,000-token window",
    ]
    assert "prefixbench" not in out
    assert _run([*argv, "--quiet"], capsys) == (status, out, "")


def test_check_trace_without_windows_names_the_profile_only(long_log, every_time, capsys) -> None:
    err = _run(["check", "--trace", str(long_log)], capsys)[2]
    assert err.splitlines()[-1] == "prefixbench check: judging 600 requests under the lenient profile"


def test_check_quiet_leaves_out_the_wrote_line(long_log, tmp_path, capsys) -> None:
    out_dir = tmp_path / "out"
    status, out, err = _run(["check", "--trace", str(long_log), "--out", str(out_dir), "--quiet"], capsys)
    assert err == ""
    assert sorted(p.name for p in out_dir.iterdir()) == ["check.json", "report.html"]


def test_check_on_a_preset_names_the_check_running(monkeypatch, capsys) -> None:
    # Before: check on a preset (4 s at the default windows, minutes at a large one) printed
    # nothing until every spec had run.
    monkeypatch.setattr(check_trace, "CHECK_PROGRESS_SECONDS", 0.001)
    argv = ["check", "--preset", "patched", "--windows", "32k", "--engines", "checkpoint"]
    status, out, err = _run(argv, capsys)
    assert "prefixbench: check " in err and " runs done, " in err, err
    assert ", running " in err and " [checkpoint/patched]" in err
    assert "runs done" not in out
    assert _run([*argv, "--quiet"], capsys) == (status, out, "")


def test_record_quiet_prints_neither_progress_nor_the_wrote_line(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(check_trace, "CHECK_PROGRESS_SECONDS", 0.001)
    loud, quiet = tmp_path / "loud.jsonl", tmp_path / "quiet.jsonl"
    err = _run(["record", str(loud), "--steps", "40"], capsys)[2]
    assert "prefixbench: record " in err and err.splitlines()[-1].startswith("wrote ")
    assert _run(["record", str(quiet), "--steps", "40", "--quiet"], capsys) == (0, "", "")
    assert quiet.read_bytes() == loud.read_bytes()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_reading_bar_on_a_terminal_leaves_stdout_alone(long_log, monkeypatch, capsys) -> None:
    # Before: the bar drew on rich's default console, standard output, so `audit --format json >
    # FILE` (or replay's) run in a terminal began with blank lines the bar's start and end left.
    terminal = _Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["replay", str(long_log), "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[\n  {"), out[:20]
    assert "reading logs" in terminal.getvalue()  # drawn where progress goes
    monkeypatch.undo()
    assert _run(["replay", str(long_log), "--format", "json", "--quiet"], capsys)[1] == out


def test_audit_out_tells_each_slow_file_before_writing_it(tmp_path, every_time, capsys) -> None:
    """After "re-simulating the fixes..." --out wrote its files for seconds on a big log without a
    word until "wrote": each slow step is said first, as the audit's other steps are."""
    out = tmp_path / "out"
    status, _, err = _run(["audit", str(FIXTURES / "codex.jsonl"), "--out", str(out)], capsys)
    assert status == 0
    lines = err.splitlines()
    said = [line for line in lines if line.startswith(("prefixbench audit: writing", "prefixbench audit: drawing"))]
    assert said == [f"prefixbench audit: writing {out}/: audit.md, audit.csv, audit.json",
                    f"prefixbench audit: drawing {out}/audit.png",
                    f"prefixbench audit: writing {out}/report.html"], err
    assert lines.index(said[0]) > max(i for i, line in enumerate(lines) if "re-simulating the fixes" in line)
    assert lines[-1].startswith(f"wrote {out}/: ")
    # --quiet: none of it.
    assert _run(["audit", str(FIXTURES / "codex.jsonl"), "--out", str(out), "--quiet"], capsys)[2] == ""


def test_a_quick_audit_out_prints_no_progress(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(progress_module, "READ_PROGRESS_SECONDS", 3600.0)
    err = _run(["audit", str(FIXTURES / "codex.jsonl"), "--out", str(tmp_path / "out")], capsys)[2]
    assert err.splitlines() == [f"wrote {tmp_path / 'out'}/: audit.md, audit.csv, audit.json, audit.png, report.html"]
