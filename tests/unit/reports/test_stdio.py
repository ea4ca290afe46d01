"""``-`` on the command line: standard input or output where a command can use it, one line
naming the flag everywhere else (docs/robustness.md, "Standard input and output").

Every test here fails on main: ``record -`` wrote a file named ``-``, ``replay -`` and
``check --trace -`` read that file (or said ``-: cannot read``), and the other path options
made a file or folder named ``-``.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from prefixbench.reports.cli import main

RECORD = ["record", "-", "--steps", "5", "--preset", "legacy"]


class _Stdin(io.TextIOWrapper):
    """A standard input holding ``data``, a pipe (or, ``tty=True``, a terminal)."""

    def __init__(self, data: bytes, tty: bool = False) -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8")
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _recorded(capsysbinary) -> bytes:
    assert main(RECORD) == 0
    captured = capsysbinary.readouterr()
    assert b"wrote standard output: 6 requests" in captured.err
    return captured.out


def test_record_dash_writes_the_log_to_standard_output_and_no_file(tmp_path, monkeypatch, capsysbinary) -> None:
    monkeypatch.chdir(tmp_path)
    log = _recorded(capsysbinary)
    assert not (tmp_path / "-").exists()
    lines = log.decode("utf-8").splitlines()
    assert len(lines) == 6 and all(line.startswith("{") for line in lines)
    # What is written is what record writes to a file.
    assert main([*RECORD[:1], "file.jsonl", *RECORD[2:]]) == 0
    assert (tmp_path / "file.jsonl").read_bytes() == log


def test_replay_and_check_trace_dash_read_standard_input(tmp_path, monkeypatch, capsysbinary) -> None:
    monkeypatch.chdir(tmp_path)
    log = _recorded(capsysbinary)
    (tmp_path / "log.jsonl").write_bytes(log)
    assert main(["replay", "log.jsonl"]) == 0
    from_file = capsysbinary.readouterr().out
    monkeypatch.setattr(sys, "stdin", _Stdin(log))
    assert main(["replay", "-"]) == 0
    assert capsysbinary.readouterr().out == from_file
    monkeypatch.setattr(sys, "stdin", _Stdin(log))
    assert main(["check", "--trace", "-"]) == 0
    out = capsysbinary.readouterr().out.decode()
    assert "PASS  no-silent-rewrite [<stdin>/lenient]: 6 conversation requests" in out
    assert list(tmp_path.iterdir()) == [tmp_path / "log.jsonl"]


@pytest.mark.parametrize(("data", "line"), [
    (b"", "prefixbench: error: <stdin>: no requests (the file is empty)"),
    (b'{"x": 1}\n', "prefixbench: error: <stdin>:1: missing field 'model'"),
])
def test_a_bad_standard_input_is_named_stdin_not_a_temporary_file(data, line, monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(data))
    assert main(["replay", "-"]) == 2
    assert capsys.readouterr().err.splitlines() == [line]


@pytest.mark.parametrize(("argv", "hint"), [
    (["replay", "-"], "a log into it (prefixbench record - | prefixbench replay -)"),
    # Fails on main for these two: their hint was the replay pipe, a log for a result.
    (["check", "--trace", "-"], "a log into it (prefixbench record - | prefixbench check --trace -)"),
    (["compare", "base.json", "-"], "a result into it (prefixbench sweep --format json --quiet | prefixbench compare base.json -)"),
])
def test_a_terminal_on_standard_input_is_refused_not_waited_on(argv, hint, monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(b"", tty=True))
    assert main(argv) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert f"standard input is a terminal; pipe or redirect {hint}" in err


def test_compare_reads_one_result_from_standard_input(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    sweep = ["sweep", "--windows", "32k", "--presets", "patched", "--steps", "10", "--quiet", "--format", "json"]
    assert main(sweep) == 0
    result = capsys.readouterr().out
    (tmp_path / "base.json").write_text(result)
    monkeypatch.setattr(sys, "stdin", _Stdin(result.encode()))
    assert main(["compare", "base.json", "-"]) == 0
    out = capsys.readouterr().out
    assert "new  <stdin>" in out and "every shared figure is identical" in out
    assert main(["compare", "-", "-"]) == 2
    assert capsys.readouterr().err.strip() == "prefixbench: error: compare - -: standard input is one result; give the other as a file"


@pytest.mark.parametrize(("argv", "start"), [
    (["sweep", "--out", "-"], "--out -: takes a folder, not standard output"),
    (["sweep", "--engine-config", "-"], "--engine-config -: settings are read from a file"),
    (["sweep", "--grid", "-"], "--grid -: a grid is read from a file"),
    (["check", "--out", "-"], "--out -: takes a folder"),
    (["check", "--engine-config", "-", "--engine", "x:y"], "--engine-config -: settings are read from a file"),
    (["bench", "--out", "-", "--workloads", "seed-coding", "--strategies", "checkpoint", "--caches", "openai",
      "--windows", "32k", "--seeds", "0", "--steps", "5"], "--out -: takes a folder"),  # small: main ran it
    (["audit", "x.jsonl", "--out", "-"], "--out -: takes a folder"),
    (["audit", "x.jsonl", "--junit", "-"], "--junit -: writes a file"),
    (["compare", "a.json", "b.json", "--markdown", "-"], "--markdown -: writes a file; --format md prints"),
    (["proxy", "--out", "-"], "--out -: writes a capture file"),
])
def test_dash_where_it_cannot_be_a_stream_is_one_line_naming_the_flag(argv, start, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert err.startswith(f"prefixbench: error: {start}") and err.endswith("a file or folder named '-' is written ./-"), err
    assert list(tmp_path.iterdir()) == []  # no file or folder named '-', nothing run


def test_dot_slash_dash_is_still_a_file_named_dash(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["record", "./-", "--steps", "3"]) == 0
    assert (tmp_path / "-").is_file()
    assert main(["replay", "./-"]) == 0
    assert "all " in capsys.readouterr().out


def test_record_dash_piped_into_replay_dash_as_a_shell_runs_it(tmp_path: Path) -> None:
    command = f"{sys.executable} -m prefixbench record - --steps 5 | {sys.executable} -m prefixbench replay -"
    done = subprocess.run(["sh", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("all ")
    assert list(tmp_path.iterdir()) == []


def test_audit_dash_reads_the_log_from_standard_input_as_it_reads_a_file(tmp_path, monkeypatch, capsys) -> None:
    """``audit -`` was refused ("save the log to a file") while ``replay -`` and ``check --trace
    -`` read standard input: it reads it the same way, its format found from its content
    (compressed too), and names it ``<stdin>`` in every view, never the temporary copy."""
    import gzip
    import json

    from tests.unit.audit.test_advice import _paused

    log = _paused(tmp_path)
    assert main(["audit", str(log), "--quiet", "--format", "json"]) == 0
    by_path = json.loads(capsys.readouterr().out)
    for data in (log.read_bytes(), gzip.compress(log.read_bytes())):
        monkeypatch.setattr(sys, "stdin", _Stdin(data))
        out = tmp_path / f"out{len(data)}"
        assert main(["audit", "-", "--quiet", "--format", "json", "--out", str(out)]) == 0
        text = capsys.readouterr().out
        assert "prefixbench-stdin" not in text and "prefixbench-stdin" not in (out / "report.html").read_text()
        record = json.loads(text)
        assert {row["file"] for row in record["requests"]} == {"<stdin>"}
        assert record["totals"] == by_path["totals"] and record["causes"] == by_path["causes"]
    monkeypatch.setattr(sys, "stdin", _Stdin(b"", tty=True))
    assert main(["audit", "-"]) == 2
    assert "audit -: standard input is a terminal; pipe or redirect a log into it" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", _Stdin(b"{}\n"))
    assert main(["audit", "-", "-"]) == 2
    assert capsys.readouterr().err.strip() == "prefixbench: error: audit - -: standard input is one log; name the others by their paths"
    monkeypatch.setattr(sys, "stdin", _Stdin(b'{"x": 1}\n'))
    assert main(["audit", "-"]) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert err.startswith("prefixbench: error: <stdin>:1: unknown log format")


@pytest.mark.parametrize("argv", [["replay", "-"], ["compare", "x.json", "-"]])
def test_a_device_on_standard_input_is_refused_not_read_forever(argv, tmp_path) -> None:
    # In a process held to 1.5 GB and 120 s: before the check, < /dev/zero was read (or copied
    # to a temporary file) without end.
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))

    with open("/dev/zero", "rb") as zero:
        done = subprocess.run([sys.executable, "-m", "prefixbench", *argv], stdin=zero, cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, preexec_fn=limit)
    assert done.returncode == 2
    (err,) = done.stderr.splitlines()
    assert "standard input is a device, which has no end to read to" in err


def test_the_null_device_on_standard_input_is_an_empty_log(monkeypatch, capsys) -> None:
    with open("/dev/null", "rb") as null:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(null))
        assert main(["replay", "-"]) == 2
    assert capsys.readouterr().err.splitlines() == ["prefixbench: error: <stdin>: no requests (the file is empty)"]


@pytest.mark.parametrize(("command", "status", "err"), [
    # Fails on main: AttributeError: 'NoneType' object has no attribute 'write', a traceback.
    ("check --trace log.jsonl --vacuous fail", 1, ""),
    ("replay log.jsonl", 0, ""),
    # record - has nowhere to put the log: refused before the run, not written to nowhere.
    ("record - --steps 3", 2, "prefixbench: error: record -: standard output is closed, so the log would be lost; name a file"),
])
def test_a_closed_standard_output_drops_the_output_and_keeps_the_verdict(command, status, err, tmp_path) -> None:
    (tmp_path / "log.jsonl").write_text('{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n')
    done = subprocess.run(["sh", "-c", f"{sys.executable} -m prefixbench {command} >&-"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == status and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.jsonl"]


def test_record_dash_into_a_reader_that_leaves_early_does_not_say_it_wrote_the_log(tmp_path: Path) -> None:
    # `prefixbench record - | head -c 100`: the reader leaves after 100 bytes, the rest is dropped
    # (exit 0, as any output cut by its reader). Main still said "wrote standard output: 64
    # requests (...)" of a log cut after 100 bytes; it now says only part was written.
    command = f"{sys.executable} -m prefixbench record - | head -c 100 > /dev/null"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("standard output closed before the end (its reader left): part of ") and "requests" in line
    assert "wrote" not in line


def test_audit_dash_names_no_temporary_folder_of_a_log_named_by_its_folder(monkeypatch, capsys) -> None:
    """A Cline task names its lane's head by the task's folder: read from standard input, that
    folder was the temporary copy's (``unlogged head cline:/tmp/prefixbench-stdin-x1y2:...``,
    another name on every run, so two audits of the same log differed)."""
    log = Path(__file__).parents[1] / "logs" / "fixtures" / "cline.json"
    outs = []
    for _ in range(2):
        monkeypatch.setattr(sys, "stdin", _Stdin(log.read_bytes()))
        assert main(["audit", "-", "--format", "md"]) == 0
        outs.append(capsys.readouterr().out)
    assert "prefixbench-stdin" not in outs[0] and "cline:<stdin>:claude-sonnet" in outs[0]
    assert outs[0] == outs[1]


def test_audit_dash_names_a_torn_last_line_stdin_not_the_temporary_copy(monkeypatch, capsys) -> None:
    """Found fuzzing ``audit -``: the warning of a last line that breaks off named the temporary
    copy (``/tmp/prefixbench-stdin-x1y2/<stdin>:2: the last line breaks off ...``), a file gone
    once the audit ends and another name on every run."""
    log = Path(__file__).parents[1] / "logs" / "fixtures" / "claude-code.jsonl"
    monkeypatch.setattr(sys, "stdin", _Stdin(log.read_bytes() + b'{"type": "user", "mess'))
    assert main(["audit", "-", "--quiet"]) == 0
    lines = log.read_bytes().count(b"\n")
    (warning,) = [line for line in capsys.readouterr().err.splitlines() if "breaks off" in line]
    assert warning.startswith(f"prefixbench: warning: <stdin>:{lines + 1}: the last line breaks off with no newline"), warning


@pytest.mark.parametrize("command", [["check", "--trace", "-", "--quiet"], ["replay", "-", "--quiet"]])
def test_check_trace_dash_names_a_torn_last_line_stdin_not_the_temporary_copy(monkeypatch, capsys, command) -> None:
    """Found by fuzz59 (the same log read twice warned differently): ``check --trace -`` named
    a last line that breaks off at the temporary copy (``/tmp/prefixbench-stdin-x1y2/<stdin>:2:
    ...``), another folder on every run and gone when the check ends; ``replay -`` said ``<stdin>:2``."""
    log = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}]}\n{"model": "m", "mess'
    warnings = []
    for _ in range(2):
        monkeypatch.setattr(sys, "stdin", _Stdin(log))
        assert main(command) == 0
        warnings.append([line for line in capsys.readouterr().err.splitlines() if "breaks off" in line])
    assert warnings[0] == warnings[1] == [
        "prefixbench: warning: <stdin>:2: the last line breaks off with no newline (the agent still writing it?): not read"
    ]


def test_audit_dash_folds_sessionless_gateway_calls_in_stdout_md_and_html(monkeypatch, capsys, tmp_path) -> None:
    """Review of integ56: ``renamed`` left the frozenset of sessionless lanes naming the temporary
    copy, so ``audit -`` printed each sessionless call as a row of its own (r0..r11) under the
    note that they were summed in one row; so did ``--out``'s audit.md and report.html."""
    import json

    records = [
        {"request_id": f"r{i}", "call_type": "acompletion", "startTime": f"2025-11-01T10:{i * 40 // 60:02d}:{i * 40 % 60:02d}Z",
         "endTime": f"2025-11-01T10:{i * 40 // 60:02d}:{i * 40 % 60:02d}Z", "model": "gpt-4.1", "custom_llm_provider": "openai",
         "cache_hit": "False", "status": "success", "prompt_tokens": 6100, "completion_tokens": 4,
         "metadata": {"additional_usage_values": {"prompt_tokens_details": {"cached_tokens": 0 if i % 3 == 0 else 6016}}}}
        for i in range(12)
    ]
    records.append({"request_id": "s1", "call_type": "acompletion", "startTime": "2025-11-01T11:00:00Z",
                    "endTime": "2025-11-01T11:00:00Z", "model": "gpt-4.1", "custom_llm_provider": "openai", "cache_hit": "False",
                    "status": "success", "prompt_tokens": 6100, "completion_tokens": 4, "session_id": "sess"})
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    monkeypatch.setattr(sys, "stdin", _Stdin(data))
    out = tmp_path / "out"
    assert main(["audit", "-", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    md = (out / "audit.md").read_text()
    html = (out / "report.html").read_text()
    for text in (printed, md, html):
        assert "sessionless calls (12)" in text
        assert "prefixbench-stdin" not in text
    import re

    assert not re.search(r"^<stdin>\s+r\d+\s", printed, re.M), printed  # no lane row per call
