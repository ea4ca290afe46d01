"""``prefixbench audit`` on the command line: outputs, gate, JUnit, bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from xml.etree import ElementTree

import pytest
from prefixbench.reports.cli import main
from prefixbench.simulator.pricing import PRICE_TABLE_WHERE

from .fixtures import Transcript, capture_line, cc_usage, compacted_after_idle, write_jsonl


def _session(tmp_path: Path) -> Path:
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    t.user("result", "2025-09-03T00:00:03.000Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:05.000Z", [cc_usage(3, 200, 15000, 9)])
    t.user("next", "2025-09-03T00:20:00.000Z")  # 20 minutes idle: past the 5 m TTL
    t.assistant("r3", "2025-09-03T00:20:03.000Z", [cc_usage(3, 15300, 0, 9)])
    return write_jsonl(tmp_path / "logs" / "s1.jsonl", t.lines)


def test_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _session(tmp_path)
    out = tmp_path / "out"
    assert main(["audit", str(log.parent), "--out", str(out), "--quiet"]) == 0
    table = capsys.readouterr().out
    assert "misses by cause" in table and "ttl-expired" in table
    assert sorted(p.name for p in out.iterdir()) == ["audit.csv", "audit.json", "audit.md", "audit.png", "report.html"]
    rows = list(csv.DictReader((out / "audit.csv").open()))
    assert [row["cause"] for row in rows] == ["cold-start", "", "ttl-expired"]
    assert rows[2]["detail"].startswith("idle 19m57s")
    assert json.loads((out / "audit.json").read_text())["totals"]["requests"] == 3
    assert (out / "audit.png").read_bytes()[:4] == b"\x89PNG"


def test_outputs_are_deterministic(tmp_path: Path) -> None:
    log = _session(tmp_path)
    for name in ("a", "b"):
        assert main(["audit", str(log), "--out", str(tmp_path / name), "--quiet"]) == 0
    for name in ("audit.csv", "audit.json", "audit.md", "audit.png", "report.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_gate_and_junit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _session(tmp_path)
    junit = tmp_path / "junit.xml"
    assert main(["audit", str(log), "--quiet", "--fail-on", "ttl-expired", "--junit", str(junit)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("FAIL cause ttl-expired: 1 request(s)")
    root = ElementTree.parse(junit).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == ["main", "totals"]
    assert int(suite.get("tests")) == 2 and int(suite.get("failures")) == 1
    assert cases[0].find("failure") is not None and cases[0].find("failure").get("message")
    assert main(["audit", str(log), "--quiet", "--fail-on", "model-changed", "--junit", str(junit)]) == 0
    assert ElementTree.parse(junit).getroot().find("testsuite").get("failures") == "0"


def test_a_side_file_is_named_on_stderr_as_out_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --out said "wrote DIR/: ..." on stderr; --junit FILE and compare --markdown FILE were
    # written without a word. Now one line each (none with --quiet, as --out's).
    log = _session(tmp_path)
    junit, out = tmp_path / "j" / "junit.xml", tmp_path / "out"
    assert main(["audit", str(log), "--junit", str(junit), "--out", str(out), "--format", "json"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"wrote {out}/: audit.md, audit.csv, audit.json, audit.png, report.html" in err
    assert f"wrote {junit}: JUnit XML, a test case per lane and one for the totals" in err and junit.is_file()
    assert main(["audit", str(log), "--junit", str(junit), "--quiet"]) == 0
    assert "wrote" not in capsys.readouterr().err
    summary = tmp_path / "pr.md"
    assert main(["compare", str(out / "audit.json"), str(out / "audit.json"), "--markdown", str(summary)]) == 0
    assert capsys.readouterr().err.splitlines() == [f"wrote {summary}: the Markdown summary"] and summary.is_file()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--fail-on", "nonsense"], "--fail-on: unknown cause nonsense"),
        (["--min-hit-ratio", "2"], "--min-hit-ratio"),
        (["--max-lost-usd", "x"], "--max-lost-usd"),
        (["--input", "yaml"], "invalid choice"),
        (["--price-as-of", "yesterday"], "--price-as-of"),
    ],
)
def test_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], message: str) -> None:
    assert main(["audit", str(_session(tmp_path)), *options]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (b"not json at all\n", ":1: "),
        (b'{"type":"user","uuid":"a","sessionId":"s","timestamp":"2025-09-03T00:00:00Z","parentUuid":null,"message":{"role":"user","content":"x"}}\n{"type": "assis\n', ":2: truncated"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", ":1: binary"),
        (b'{"timestamp":"2025-11-17T21:30:28.664Z","type":"session_meta","payload":{"id":"x"}}\n', ":1: a codex record in a file read as claude-code"),
    ],
)
def test_bad_input_exits_2_naming_it_and_writes_the_audit_of_the_other_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, where: str
) -> None:
    # A bad file beside a good one wrote nothing at all (the good file's audit was lost); now it is
    # left out, the good file's audit written, and the bad one named in the one line (exit 2).
    good = _session(tmp_path)
    bad = good.parent / "zz-bad.jsonl"
    bad.write_bytes(content)
    out = tmp_path / "out"
    extra = ["--input", "claude-code"] if "codex" in where else []
    assert main(["audit", str(good.parent), "--out", str(out), "--quiet", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}{where}" in err[0] and "left out" in err[0], err
    written = json.loads((out / "audit.json").read_text())
    assert [(Path(f["file"]).name, f["format"]) for f in written["files"]] == [(good.name, "claude-code"), (bad.name, "bad-input")]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".audit-")] == []
    # Alone, the bad file is the error and nothing is written.
    assert main(["audit", str(bad), "--out", str(tmp_path / "alone"), "--quiet", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{bad}{where}" in err[0] and "left out" not in err[0], err
    assert not (tmp_path / "alone").exists()


def test_junit_holds_an_error_of_a_file_left_out_as_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The audit of the other files is written to --junit too, and exits 2: the file held only
    # their lanes, every one passing (errors="0"), a run that read as green.
    good = _session(tmp_path)
    bad = good.parent / "zz-bad.jsonl"
    bad.write_bytes(b"not json at all\n")
    junit = tmp_path / "junit.xml"
    assert main(["audit", str(good.parent), "--quiet", "--junit", str(junit)]) == 2
    capsys.readouterr()
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("errors") == "1" and suite.get("failures") == "0"
    (case,) = [c for c in suite.iter("testcase") if c.find("error") is not None]
    assert case.get("classname") == str(bad) and case.get("name") == "bad input"
    error = case.find("error")
    assert error is not None and error.get("type") == "bad-input" and f"{bad}:1: " in (error.text or "")
    assert suite.get("tests") == str(len(list(suite.iter("testcase"))))


def test_report_html_header_counts_the_files_audited_and_names_those_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # report.html's header read "3 requests in 2 file(s)" of a good file and one left out as bad
    # input: a file not read counted as audited. It counts the files read and names the rest.
    good = _session(tmp_path)
    (good.parent / "zz-bad.jsonl").write_bytes(b"not json at all\n")
    (good.parent / "zz-bad2.jsonl").write_bytes(b"not json either\n")
    out = tmp_path / "out"
    assert main(["audit", str(good.parent), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "zz-bad.jsonl:1: " in err[0] and "1 other file(s) of bad input" in err[0], err
    page = (out / "report.html").read_text()
    assert "3 requests in 1 file(s) (2 left out as bad input)" in page
    assert "in 3 file(s)" not in page


def test_a_copy_of_a_file_left_out_as_bad_input_is_not_said_to_be_counted_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Its note read "skipped: the same bytes as .../zz-bad.jsonl, counted once" of a file counted never.
    good = _session(tmp_path)
    bad = good.parent / "zz-bad.jsonl"
    bad.write_bytes(b"not json at all\n")
    (good.parent / "zz-copy.jsonl").write_bytes(b"not json at all\n")
    assert main(["audit", str(good.parent), "--format", "json", "--quiet"]) == 2
    files = {Path(f["file"]).name: f for f in json.loads(capsys.readouterr().out)["files"]}
    assert files["zz-copy.jsonl"]["notes"] == [f"skipped: the same bytes as {bad}, left out with it as bad input"]


def test_empty_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["audit", str(tmp_path / "empty")]) == 2
    assert "no log files" in capsys.readouterr().err


def test_progress_lines_when_not_a_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from prefixbench.reports.progress import ReadProgress

    progress = ReadProgress(10_000_000, every=0.0)
    progress(5_000_000)
    assert "read 5.0 of 10.0 MB" in capsys.readouterr().err
    progress.phase("auditing 12 requests")
    assert capsys.readouterr().err == "prefixbench audit: auditing 12 requests\n"


def test_the_steps_after_the_reading_are_said_only_when_the_work_is_long(capsys: pytest.CaptureFixture[str]) -> None:
    from prefixbench.reports.progress import ReadProgress

    ReadProgress(10_000_000).phase("auditing 12 requests")  # well under the 3 s between lines
    assert capsys.readouterr().err == ""
    ReadProgress(10_000_000, enabled=False, every=0.0).phase("auditing 12 requests")  # --quiet
    assert capsys.readouterr().err == ""


def test_nothing_to_audit_in_a_folder_quotes_a_log_not_a_file_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An app's home (OpenHands' settings.json beside its conversations): the line quoted the
    settings file the walk skipped, not the log saying where its usage was looked for."""
    (tmp_path / "a-settings.json").write_text(json.dumps({"llm_model": "openai/gpt-5", "agent": "CodeActAgent"}))
    write_jsonl(tmp_path / "rollout-old.jsonl", [{"id": "x", "timestamp": "2025-05-01T10:00:00Z", "instructions": None}])
    assert main(["audit", str(tmp_path), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert f"({tmp_path / 'rollout-old.jsonl'}: " in err and "no token_count events" in err
    assert err.endswith("; 1 other file(s) hold none either)") and len(err.splitlines()) == 1


def test_a_file_without_model_calls_is_one_line_naming_why_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing to audit is said, not reported as an audit of 0 requests at a 0.0% hit ratio."""
    log = write_jsonl(tmp_path / "rollout-old.jsonl", [{"id": "x", "timestamp": "2025-05-01T10:00:00Z", "instructions": None}])
    assert main(["audit", str(log), "--out", str(tmp_path / "out"), "--junit", str(tmp_path / "j.xml"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("prefixbench: error: nothing to audit: no model call with usage in the logs given (")
    assert "no token_count events" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists() and not (tmp_path / "j.xml").exists()


def test_many_files_share_one_chart_panel(tmp_path: Path) -> None:
    for n in range(14):
        t = Transcript(f"s{n}")
        t.user("go", "2025-09-03T00:00:00.000Z", root=True)
        t.assistant(f"r{n}", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
        write_jsonl(tmp_path / "logs" / f"s{n:02d}.jsonl", t.lines)
    assert main(["audit", str(tmp_path / "logs"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert (tmp_path / "out" / "audit.png").stat().st_size > 0


def test_markdown_and_price_date(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _session(tmp_path)
    assert main(["audit", str(log), "--format", "md", "--quiet", "--price-as-of", "2025-09-01"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# prefixbench audit") and "`ttl-expired`" in out and "as of 2025-09-01" in out


def test_out_that_is_a_file_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _session(tmp_path)
    target = tmp_path / "taken"
    target.write_text("x")
    assert main(["audit", str(log), "--out", str(target), "--quiet"]) == 2
    assert "--out" in capsys.readouterr().err and target.read_text() == "x"


def test_predicted_only_logs_gate_on_the_predicted_hit_ratio(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = write_jsonl(tmp_path / "trace.jsonl", [
        {"timestamp": 0, "input_length": 2048, "output_length": 1, "hash_ids": [1, 2, 3, 4]},
        {"timestamp": 9, "input_length": 2048, "output_length": 1, "hash_ids": [1, 2, 3, 4]},
    ])
    assert main(["audit", str(trace), "--quiet", "--min-hit-ratio", "0.4"]) == 0
    assert "hit ratio 50.0%" in capsys.readouterr().out
    assert main(["audit", str(trace), "--quiet", "--min-hit-ratio", "0.6"]) == 1


def test_a_lone_surrogate_in_a_log_is_escaped_not_a_crash(tmp_path: Path) -> None:
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)], model="claude-\ud800")
    log = tmp_path / "s.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in t.lines))  # ASCII-escaped: valid UTF-8 on disk
    out, junit = tmp_path / "out", tmp_path / "j.xml"
    stdout = tmp_path / "stdout.txt"
    import subprocess
    import sys

    with stdout.open("w", encoding="utf-8") as handle:
        done = subprocess.run(
            [sys.executable, "-m", "prefixbench", "audit", str(log), "--quiet", "--out", str(out), "--junit", str(junit)],
            stdout=handle, stderr=subprocess.PIPE, text=True, env={**__import__("os").environ, "PYTHONIOENCODING": "utf-8"},
        )
    assert done.returncode == 0, done.stderr
    assert "claude-\\ud800" in stdout.read_text(encoding="utf-8")
    assert "claude-\\ud800" in (out / "audit.csv").read_text(encoding="utf-8")
    ElementTree.parse(junit)


def test_json_output_has_json_dumps_layout_and_values(tmp_path: Path) -> None:
    # audit_json writes with msgspec: the same lines as json.dumps(indent=1, ensure_ascii=False),
    # except that a float may be spelt differently (0.0000104 for 1.04e-05), never valued so.
    from prefixbench.reports.audit import audit_json, audit_record
    from prefixbench.workloads.audit.core import run_audit

    t = Transcript()
    t.user("héllo", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    t.user("again", "2025-09-03T00:00:05.000Z")
    t.assistant("r2", "2025-09-03T00:00:07.000Z", [cc_usage(4, 200, 1500, 12)])
    log = write_jsonl(tmp_path / "s.jsonl", t.lines)
    result = run_audit([log])
    ours = audit_json(result).splitlines()
    plain = json.dumps(audit_record(result), indent=1, ensure_ascii=False).splitlines()
    assert len(ours) == len(plain)
    for a, b in zip(ours, plain):
        if a != b:
            key_a, value_a = a.rsplit(": ", 1)
            key_b, value_b = b.rsplit(": ", 1)
            assert key_a == key_b and float(value_a.rstrip(",")) == float(value_b.rstrip(",")), (a, b)
    assert json.loads("\n".join(ours)) == json.loads("\n".join(plain))


def test_json_requests_laid_out_in_pieces_read_as_one_at_a_time(tmp_path: Path) -> None:
    """The requests are laid out a few dozen at a time (one msgspec call for them): the same text
    as each laid out alone, across pieces, and where a piece holds a lone surrogate (json.dumps
    writes that row)."""
    from prefixbench.reports import audit as writer
    from prefixbench.workloads.audit.core import run_audit

    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    for n in range(writer.ROWS_A_CHUNK * 2 + 3):
        model = "claude-\ud800" if n in (1, writer.ROWS_A_CHUNK + 1) else "claude-sonnet-4-5"
        t.assistant(f"r{n}", f"2025-09-03T00:{n // 60:02d}:{n % 60:02d}.500Z", [cc_usage(3, 100, 1500 + 10 * n, 9)], model=model)
        t.user(f"turn {n}", f"2025-09-03T00:{n // 60:02d}:{n % 60:02d}.900Z")
    log = tmp_path / "s.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in t.lines))
    result = run_audit([log])
    assert len(result.rows) > writer.ROWS_A_CHUNK * 2
    head, rest = writer.audit_json(result).split('\n "requests": [', 1)
    rows = [writer._formatted(writer.request_record(row)).replace("\n", "\n  ") for row in result.rows]
    assert rest.startswith("\n  " + ",\n  ".join(rows) + "\n ]")
    assert "claude-\ud800" in rest


@pytest.mark.parametrize(
    ("junit", "message"),
    [
        ("/proc/prefixbench-junit.xml", "/proc is a virtual filesystem"),
        ("{tmp}/taken/j.xml", "lies under the file"),
        ("{tmp}", "is a folder"),
    ],
)
def test_bad_junit_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], junit: str, message: str
) -> None:
    log = _session(tmp_path)
    (tmp_path / "taken").write_text("x")
    junit = junit.format(tmp=tmp_path)
    out = tmp_path / "out"
    assert main(["audit", str(log), "--junit", junit, "--out", str(out), "--quiet"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and f"--junit {junit}: {message}" in err[0], err
    assert captured.out == ""
    assert not out.exists()
    assert (tmp_path / "taken").read_text() == "x"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".audit-")] == []


def test_junit_in_a_new_folder_is_written(tmp_path: Path) -> None:
    junit = tmp_path / "new" / "sub" / "j.xml"
    assert main(["audit", str(_session(tmp_path)), "--junit", str(junit), "--quiet"]) == 0
    ElementTree.parse(junit)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/dev/zero", "/dev/zero: not a regular file (a device or socket has no end to read to)"),
        ("/proc/self/mem", "/proc/self/mem: cannot read (Input/output error)"),
        ("{tmp}/nothing.jsonl", "{tmp}/nothing.jsonl: no such file or folder"),
    ],
)
def test_unreadable_paths_are_worded_as_replay_words_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, message: str
) -> None:
    out = tmp_path / "out"
    assert main(["audit", path.format(tmp=tmp_path), "--out", str(out), "--quiet"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(message.format(tmp=tmp_path)), err
    assert captured.out == "" and not out.exists()


def test_a_named_pipe_is_refused_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    fifo = tmp_path / "log.jsonl"
    os.mkfifo(fifo)
    assert main(["audit", str(fifo), "--quiet"]) == 2
    # (worded as a folder walk words one it finds)
    assert f"{fifo}: a named pipe, not a file (audit reads" in capsys.readouterr().err


def test_out_help_names_every_file_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["audit", str(_session(tmp_path)), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert all(p.name in help_text for p in out.iterdir()), help_text


def test_calibration_counts_requests_with_a_read_and_lists_skip_reasons(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    t.user("result", "2025-09-03T00:00:03.000Z", tool=True)
    t.assistant("r2", "2025-09-03T00:00:05.000Z", [cc_usage(3, 200, 15000, 9)])
    t.assistant("r3", "2025-09-03T00:00:06.000Z", [cc_usage(0, 0, 0, 0)], model="<synthetic>")
    log = write_jsonl(tmp_path / "s.jsonl", t.lines)
    assert main(["audit", str(log), "--quiet"]) == 0
    table = capsys.readouterr().out
    calibration = table[table.index("calibration per file") :].splitlines()
    header = calibration[1]
    assert header.split()[:8] == ["file", "format", "requests", "within", "3%", "read", ">", "0"]
    row = next(line for line in calibration if line.startswith("s.jsonl "))
    assert row.split()[2:7] == ["2", "2", "1", "0.00%", "1"]
    assert "mean |error| (|predicted - reported| / reported) is over these only" in table
    assert "  s.jsonl: 1 synthetic message, not an API call" in table


def test_docs_audit_synopsis_lists_every_option() -> None:
    import argparse

    from prefixbench.reports.cli import build_parser

    from tests.readme import doc_block

    synopsis = doc_block("docs/audit.md", "## Synopsis", language="")
    sub = next(a for a in build_parser("audit")._actions if isinstance(a, argparse._SubParsersAction))
    options = {o for action in sub.choices["audit"]._actions for o in action.option_strings if o.startswith("--")}
    assert {o for o in options - {"--help"} if o not in synopsis} == set()


_FIXTURES = Path(__file__).parents[1] / "logs" / "fixtures"


@pytest.mark.parametrize(
    ("fixture", "path_in_line"),
    [
        ("http-capture", "request.body.messages[0].content[0].text"),
        ("chat-completions", "messages[0].content"),
        ("anthropic-bodies", "messages[0].content"),
    ],
)
def test_a_lone_surrogate_in_a_request_body_is_refused_as_replay_refuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fixture: str, path_in_line: str
) -> None:
    """A body with a lone surrogate could never be rendered or sent: one line naming file:line and
    where in the line, exit 2, the same line ``replay`` gives (a surrogate outside a body, as in a
    Claude Code model name, is escaped instead: the test above)."""
    text = (_FIXTURES / f"{fixture}.jsonl").read_text(encoding="utf-8")
    log = tmp_path / f"{fixture}.jsonl"
    log.write_text(text.replace('"hello"', '"he\\udc00llo"', 1), encoding="utf-8")
    expected = f"prefixbench: error: {log}:1: {path_in_line} holds a lone surrogate \\udc00, which is not Unicode text"
    for command in ("audit", "replay"):
        status = main([command, str(log), "--quiet"] if command == "audit" else [command, str(log)])
        err = capsys.readouterr().err.strip()
        # replay (which reads request bodies) may add which format the file is in, after the line.
        err = err.split(" (the file is in the ", 1)[0] if command == "replay" else err
        assert (command, status, err) == (command, 2, expected)


def test_terminal_escapes_in_a_log_are_shown_not_sent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A model name holding ESC]0;...BEL ESC[2J (set the window title, clear the screen) and a
    newline reaches the table, the notes, --format md, audit.md and replay's table escaped."""
    model = "gpt\x1b]0;owned\x07\x1b[2J\n# injected"
    log = tmp_path / "bodies.jsonl"
    log.write_text(json.dumps({"model": model, "messages": [{"role": "user", "content": "hello"}]}) + "\n")
    shown = "gpt\\x1b]0;owned\\x07\\x1b[2J\\n# injected"
    out = tmp_path / "out"
    for argv in (["audit", str(log), "--out", str(out)], ["audit", str(log), "--format", "md"], ["replay", str(log)]):
        assert main([*argv, "--quiet"] if argv[0] == "audit" else argv) == 0
        captured = capsys.readouterr()
        for stream in (captured.out, captured.err):
            assert "\x1b" not in stream and "\x07" not in stream and "\n# injected" not in stream, (argv, stream)
        assert shown in captured.out or argv[0] == "replay", argv  # replay's table names no model
    markdown = (out / "audit.md").read_text(encoding="utf-8")
    assert "\x1b" not in markdown and "\n# injected" not in markdown and shown in markdown


def test_terminal_escapes_in_a_log_are_shown_escaped_in_the_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "codex.jsonl"
    log.write_text((_FIXTURES / "codex.jsonl").read_text(encoding="utf-8").replace("gpt-5-codex", "gpt\\u001b[2Jcodex"))
    for form in ("table", "md"):
        assert main(["audit", str(log), "--quiet", "--format", form]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "note: no price for gpt\\x1b[2Jcodex: their dollars are left out" in out


def test_a_live_logs_torn_last_line_is_skipped_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A transcript the agent is still appending to ends in a line cut short with no newline:
    audit reads the whole records before it, lists the torn line as skipped and warns on stderr
    (even with --quiet), exit 0. The same cut line followed by more lines is bad input, exit 2."""
    good = _session(tmp_path).read_bytes()
    assert good.endswith(b"\n")
    live = tmp_path / "live" / "s.jsonl"
    live.parent.mkdir()
    live.write_bytes(good + b'{"type":"assistant","uuid":"zz","message":{"usage":{"input_tok')
    assert main(["audit", str(live), "--quiet", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    record = json.loads(out)
    lines = good.count(b"\n") + 1
    assert err.strip() == f"prefixbench: warning: {live}:{lines}: the last line breaks off with no newline (the agent still writing it?): not read"
    assert main(["audit", str(_session(tmp_path)), "--quiet", "--format", "json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert record["totals"] == whole["totals"] and record["totals"]["requests"] > 0
    # Not the last line: an error naming it.
    live.write_bytes(good + b'{"type":"assistant","uuid":"zz","message":{"usage":{"input_tok\n' + good.splitlines(keepends=True)[0])
    assert main(["audit", str(live), "--quiet"]) == 2
    assert f"{live}:{lines}: truncated or malformed JSON" in capsys.readouterr().err


def test_each_session_says_its_re_write_factor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The tokens paid at the write or full input price over each lane's largest prompt. The
    session above wrote 15,000 + 200, then after 20 idle minutes 15,300 again, with 3 uncached
    tokens a request: 30,509 over its largest prompt, 15,303: 1.99x (its context paid twice)."""
    log = _session(tmp_path)
    assert main(["audit", str(log), "--quiet", "--format", "json"]) == 0
    (session,) = json.loads(capsys.readouterr().out)["sessions"]
    assert session["rewrite_factor"] == round(30_509 / 15_303, 6)
    assert main(["audit", str(log), "--quiet"]) == 0
    table = capsys.readouterr().out
    header, _, row = table.split("per session", 1)[1].splitlines()[1:4]
    words = row.split()
    assert header.split()[6:8] == ["hit", "re-write"] and words[words.index("33.0%") + 1] == "1.99x"


def test_junit_says_what_the_exit_status_says(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The thresholds judge the whole audit, in the exit status and in the JUnit file alike: a
    totals case fails exactly when audit exits 1 (a lane below the ratio whose audit passes
    used to fail in the file; an audit over --max-lost-usd with no lane over it had none)."""
    log = _session(tmp_path)  # hit ratio 33.0%, lost $0.0524 (one lane)
    junit = tmp_path / "j.xml"

    def failures() -> dict[str, str | None]:
        suite = ElementTree.parse(junit).getroot().find("testsuite")
        return {case.get("name"): (case.find("failure").get("message") if case.find("failure") is not None else None)
                for case in suite.findall("testcase")}

    assert main(["audit", str(log), "--quiet", "--min-hit-ratio", "0.5", "--junit", str(junit)]) == 1
    assert failures() == {"main": None, "totals": "hit ratio 32.96% is below --min-hit-ratio 50.00%"}
    assert main(["audit", str(log), "--quiet", "--min-hit-ratio", "0.3", "--max-lost-usd", "0.01", "--junit", str(junit)]) == 1
    assert failures() == {"main": None, "totals": "lost $0.0524 is above --max-lost-usd $0.01"}
    assert main(["audit", str(log), "--quiet", "--min-hit-ratio", "0.3", "--junit", str(junit)]) == 0
    assert failures() == {"main": None, "totals": None}
    capsys.readouterr()


def test_the_sessions_shown_are_the_costliest_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With more sessions than the table shows, the ones shown are those that lost the most, in
    that order (they were in file order)."""
    from prefixbench.reports.audit import SESSIONS_SHOWN

    folder = tmp_path / "logs"
    for n in range(SESSIONS_SHOWN + 1):
        t = Transcript(session=f"s{n}")
        t.user("go", "2025-09-03T00:00:00.000Z", root=True)
        t.assistant(f"r1-{n}", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000 + 100 * n, 0, 9)])
        t.user("next", f"2025-09-03T00:{10 + n:02d}:00.000Z")  # idle past the TTL: a loss growing with n
        t.assistant(f"r2-{n}", f"2025-09-03T00:{10 + n:02d}:03.000Z", [cc_usage(3, 15300 + 100 * n, 0, 9)])
        write_jsonl(folder / f"s{n:02d}.jsonl", t.lines)
    assert main(["audit", str(folder), "--quiet"]) == 0
    section = capsys.readouterr().out.split("per session", 1)[1].split("\n\n", 1)[0].splitlines()[3:]
    names = [line.split()[0] for line in section]
    assert len(names) == SESSIONS_SHOWN and names[0] == f"s{SESSIONS_SHOWN:02d}.jsonl" and names == sorted(names, reverse=True)


def test_the_sessions_title_says_what_they_are_ordered_by(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before, 21 block-hash traces (no usage, no dollars) were listed as "the 20 that lost the
    most": in file order, no loss seen. The title says what the order is."""
    from prefixbench.reports.audit import SESSIONS_SHOWN

    folder = tmp_path / "traces"
    folder.mkdir()
    for n in range(SESSIONS_SHOWN + 1):
        (folder / f"t{n:02d}.jsonl").write_text(json.dumps({"timestamp": n, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]}) + "\n")
    assert main(["audit", str(folder), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"the {SESSIONS_SHOWN} first in file order (none has a dollar figure), 1 more" in out and "lost the most" not in out


def test_the_headline_says_what_its_hit_ratio_is_over(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Mooncake trace reports no cache use: its hit ratio is predicted, and the headline says
    so; a folder where only some requests report it says over how many."""
    trace = tmp_path / "mooncake.jsonl"
    trace.write_text("\n".join(json.dumps({"timestamp": 1000 * n, "input_length": 1024, "output_length": 10, "hash_ids": [1, 2]}) for n in range(3)) + "\n")
    assert main(["audit", str(trace), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "(predicted: no request reports its cache use)" in out
    assert main(["audit", str(trace), str(_session(tmp_path)), "--quiet"]) == 0
    assert "(of the 3 requests that report their cache use)" in capsys.readouterr().out


def test_out_says_where_it_wrote_unless_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _session(tmp_path)
    out = tmp_path / "out"
    assert main(["audit", str(log), "--out", str(out)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"wrote {out}/: audit.md, audit.csv, audit.json, audit.png, report.html"
    assert main(["audit", str(log), "--out", str(out), "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_a_file_named_like_an_option_gets_a_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """argparse reads -dash.jsonl as an option; when such a file exists the one-line error says
    how to name it (it said only that PATH was required)."""
    monkeypatch.chdir(tmp_path)
    Path("-dash.jsonl").write_bytes(_session(tmp_path).read_bytes())
    assert main(["audit", "-dash.jsonl", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("; -dash.jsonl is a file, read as an option: write ./-dash.jsonl or put -- before it") and "\n" not in err
    assert main(["audit", "--quiet", "--", "-dash.jsonl"]) == 0
    assert main(["audit", "./-dash.jsonl", "--quiet"]) == 0


def test_a_price_date_before_a_models_first_row_is_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A request (or --price-as-of) dated before a model's first price row is priced at that first
    # row, the best there is; main said only "prices: as of 2025-09-01", as if a row had been in
    # force then (claude-sonnet-5's first row is effective 2026-06-30). The note now says which
    # model took its first row, and from when that row applies.
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)], model="claude-sonnet-5")
    log = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    # Every request before the first row: "at any of its requests" (it said "at some of its
    # requests" whether some or all were).
    for argv, when in ((["--price-as-of", "2025-09-01"], "then"), ([], "at any of its requests")):
        assert main(["audit", str(log), "--format", "json", "--quiet", *argv]) == 0
        notes = [n for n in json.loads(capsys.readouterr().out)["notes"] if n.startswith("prices: ")]
        assert len(notes) == 1 and notes[0].endswith(
            f" ({PRICE_TABLE_WHERE}); claude-sonnet-5 has no row in force {when}: priced at its first row "
            "(effective 2026-06-30)")
    t2 = Transcript("s2")
    t2.user("go", "2026-09-03T00:00:00.000Z", root=True)
    t2.assistant("r2", "2026-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)], model="claude-sonnet-5")
    later = write_jsonl(tmp_path / "s2.jsonl", t2.lines)
    assert main(["audit", str(later), "--format", "json", "--quiet"]) == 0
    assert f"prices: the row in force at each request's time ({PRICE_TABLE_WHERE})" in json.loads(capsys.readouterr().out)["notes"]
    # One request before the first row, one after: "at some of its requests".
    assert main(["audit", str(log), str(later), "--format", "json", "--quiet"]) == 0
    notes = [n for n in json.loads(capsys.readouterr().out)["notes"] if n.startswith("prices: ")]
    assert notes[0].endswith("; claude-sonnet-5 has no row in force at some of its requests: priced at its first row (effective 2026-06-30)")


def test_an_audit_with_no_miss_says_none_under_its_empty_tables(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A log with no miss (here a block-hash trace: no reported usage, so nothing is a miss)
    # printed two bare headers, "misses by cause" with an empty table and "worst requests (top 0
    # by dollars lost)" with another (the walk of the realdata's Mooncake trace). Each now says
    # none, once.
    log = write_jsonl(tmp_path / "trace.jsonl", [{"timestamp": 0, "input_length": 1024, "output_length": 8, "hash_ids": [1, 2]},
                                                 {"timestamp": 10, "input_length": 1024, "output_length": 8, "hash_ids": [1, 2]}])
    assert main(["audit", str(log), "--input", "mooncake", "--quiet"]) == 0
    out = capsys.readouterr().out
    # Not "no request lost tokens to a miss": no request reports its cache use, so none is seen
    # (review: the first wording passed off an unmeasured log as one with a perfect cache).
    none = "(none: no request reports its cache use, so no miss could be seen)\n"
    assert f"misses by cause\n{none}" in out
    assert f"worst requests (by dollars lost)\n{none}" in out
    assert "top 0" not in out and "no request lost tokens" not in out


def test_an_audit_whose_calls_report_no_miss_says_none_lost(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Calls that report their cache use and lost nothing (the first one's cold start costs no
    # token): the worst requests say none was lost, what the log shows here.
    t = Transcript("s1")
    t.user("go", "2026-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2026-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)], model="claude-sonnet-4-5")
    t.user("more", "2026-09-03T00:00:10.000Z")
    t.assistant("r2", "2026-09-03T00:00:12.000Z", [cc_usage(3, 20, 1500, 9)], model="claude-sonnet-4-5")
    log = write_jsonl(tmp_path / "s1.jsonl", t.lines)
    assert main(["audit", str(log), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "misses by cause\ncause  " in out and "cold-start  " in out
    assert "worst requests (by dollars lost)\n(none: no request lost tokens to a miss)\n" in out


def test_a_gate_on_a_log_that_reports_no_cache_use_says_it_has_no_ratio(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Five calls whose provider's usage has no cache field: the gate judged the model's ratio
    and said "FAIL hit ratio 0.00%", as if the log had shown that nothing was read; then the
    predicted one. Such calls are in no hit ratio (only a cache trace's ratio is predicted), so
    the gate fails saying there is none to hold to the limit."""
    url = "https://llm.example.org/v1/chat/completions"
    lines = [capture_line({"model": "gpt-4o", "messages": [{"role": "user", "content": "hello " * (200 + n)}]},
                          {"body": {"usage": {"prompt_tokens": 2000 + 100 * n, "completion_tokens": 10}}}, url=url, sent=1748554704.0 + n)
             for n in range(5)]
    log = write_jsonl(tmp_path / "plain.jsonl", lines)
    junit = tmp_path / "j.xml"
    assert main(["audit", str(log), "--quiet", "--min-hit-ratio", "0.5", "--junit", str(junit)]) == 1
    said = "no hit ratio (no request reports its cache use) to hold to --min-hit-ratio 50.00%"
    assert capsys.readouterr().err.strip() == f"FAIL {said}"
    totals = ElementTree.parse(junit).getroot().find("testsuite").findall("testcase")[-1]
    assert totals.find("failure").get("message") == said


def test_max_lost_usd_says_when_it_judged_only_the_priced_requests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Mooncake trace has no price: --max-lost-usd 0 passed it without a word, whatever its
    misses (on ../shared/realdata 14,817 of 16,027 requests are unpriced). It still passes (the
    dollars it judges are under the limit), and a warning says what it could not judge."""
    trace = tmp_path / "mooncake.jsonl"
    trace.write_text("\n".join(json.dumps({"timestamp": 1000 * n, "input_length": 1024, "output_length": 10, "hash_ids": [1, 2]}) for n in range(3)) + "\n")
    assert main(["audit", str(trace), "--quiet", "--max-lost-usd", "0"]) == 0
    assert capsys.readouterr().err.strip() == (
        "prefixbench: warning: --max-lost-usd judged the priced requests only: 3 of 3 request(s) are in no dollar "
        "figure (no price, no usage to price, or priced as a range only), their misses' losses unknown")
    assert main(["audit", str(_session(tmp_path)), "--quiet", "--max-lost-usd", "1"]) == 0  # every request priced
    assert capsys.readouterr().err == ""


def test_max_lost_usd_names_a_range_among_what_it_could_not_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Cline history file alone on Anthropic's handler sums each call's cache reads and writes
    (no cost to split them): priced as a range only, in no dollar figure. The warning said those
    requests had no price or no usage to price, neither of which is so."""
    messages = []
    for n, (prompt, cached) in enumerate(((10, 8_000), (10, 12_000))):
        messages += [{"role": "user", "content": [{"type": "text", "text": "x"}], "ts": 1777000000000 + 60_000 * n},
                     {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "ts": 1777000002000 + 60_000 * n,
                      "modelInfo": {"modelId": "claude-sonnet-4-5", "providerId": "anthropic", "mode": "act"},
                      "metrics": {"tokens": {"prompt": prompt, "completion": 50, "cached": cached}}}]
    history = tmp_path / "api_conversation_history.json"
    history.write_text(json.dumps(messages))
    # (exit 1: no request reports its cache use, so the gate cannot judge the loss at all)
    assert main(["audit", str(history), "--quiet", "--max-lost-usd", "0"]) == 1
    assert "2 of 2 request(s) are in no dollar figure (no price, no usage to price, or priced as a range only)" in capsys.readouterr().err


def test_format_md_puts_what_if_in_a_fenced_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--format md --what-if printed the terminal's what-if table bare after the Markdown: its
    dashed line made the header row a heading, and its rows ran into one paragraph."""
    log = _session(tmp_path)
    assert main(["audit", str(log), "--quiet", "--format", "md", "--what-if", "ttl-1h"]) == 0
    out = capsys.readouterr().out
    section = out[out.index("## What if\n\n```\n"):]
    assert section.rstrip("\n").endswith("```") and "fix     applies  requests changed" in section
    fenced = False
    for line in out.splitlines():  # every table's dashes inside a fence
        fenced ^= line.startswith("```")
        assert fenced or not line.startswith("---"), line


def test_junit_says_what_the_table_says_of_a_log_without_usage(tmp_path: Path) -> None:
    """A lane whose log reports no cache use (a block-hash trace) said ``hit ratio 0.00%, lost 0
    tokens ($0.0000), predicted read within 3% on 0/N`` in the JUnit file, where the table says
    n/a and ``no usage``; the totals gave the hit ratio without what it is over, and $ figures
    that leave the unpriced requests out without saying so. Its hit ratio is the predicted one,
    said so, as the table's ``pred`` cell (it was ``n/a``)."""
    log = _session(tmp_path)
    trace = write_jsonl(log.parent / "trace.jsonl", [
        {"timestamp": 0, "input_length": 2048, "output_length": 10, "hash_ids": [0, 1, 2, 3]},
        {"timestamp": 1000, "input_length": 2560, "output_length": 10, "hash_ids": [0, 1, 2, 3, 4]},
    ])
    junit = tmp_path / "j.xml"
    assert main(["audit", str(log), str(trace), "--quiet", "--junit", str(junit)]) == 0
    said = {case.get("classname"): case.find("system-out").text
            for case in ElementTree.parse(junit).getroot().find("testsuite").findall("testcase")}
    no_usage = said[str(trace)]
    assert "hit ratio 0.00%" not in no_usage and "$0.0000" not in no_usage and "0/2" not in no_usage
    assert no_usage.startswith("2 requests, no cache use reported (loss and calibration n/a); predicted hit ratio 44.44%, predicted read ")
    assert said[str(log)].startswith("3 requests, hit ratio 32.96%, lost ") and "$0.0524" in said[str(log)]
    totals = said["prefixbench audit"]
    assert "(of the 3 requests that report their cache use)" in totals and "paid $" in totals and " + 2 unpriced" in totals


def test_audit_md_carries_the_what_if_section_format_md_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--out`` wrote audit.md without ``--what-if``'s section (audit.json and report.html had
    it): the Markdown a user shares said nothing of the fixes asked for. It is now the same text
    as ``--format md`` prints."""
    log = _session(tmp_path)
    out = tmp_path / "out"
    assert main(["audit", str(log), "--what-if", "ttl-1h", "--out", str(out), "--format", "md", "--quiet"]) == 0
    printed = capsys.readouterr().out
    written = (out / "audit.md").read_text()
    assert "## What if" in written and "ttl-1h  yes" in written
    assert written == printed


def test_a_proxy_capture_of_calls_never_answered_is_recognised_and_names_their_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``prefixbench proxy`` with the upstream unreachable records each call with no response and
    its error in ``prefixbench_proxy.upstream_error``: audit read such a capture as an unknown log
    format; it is the proxy's own capture, none of whose calls was answered."""
    from prefixbench.reports.proxy_record import capture_record

    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}).encode()
    error = "upstream unreachable: ClientConnectorDNSError: Cannot connect to host api.anthropic.com:443"
    records = [
        capture_record(method="POST", url="https://api.anthropic.com/v1/messages", request_headers=[("x-api-key", "sk-secret")],
                       request_body=body, sent=1796483455.0 + i, status=None, response_headers=[], response_body=b"",
                       answered=1796483455.5 + i, note={"upstream_error": why, "upstream": "https://api.anthropic.com"})
        for i, why in enumerate((error, error, "upstream timed out after 600 s"))
    ]
    log = write_jsonl(tmp_path / "capture.jsonl", records)
    assert main(["audit", str(log), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unknown log format" not in err
    assert f"({log}: no call in it was answered: the proxy recorded 3 calls the upstream never answered (" in err
    assert f"{error} (x2); upstream timed out after 600 s)" in err


def test_the_input_option_is_one_word_in_the_usage_and_its_formats_listed_once(capsys: pytest.CaptureFixture[str]) -> None:
    """``--input`` took five lines of the usage and was listed twice (usage and option): the usage
    says FORMAT, and the option's help lists every format name once, the default first."""
    from prefixbench.workloads.logs import formats

    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    help_text = capsys.readouterr().out
    usage = help_text.split("\n\n", 1)[0]
    assert "[--input FORMAT]" in usage and "claude-code" not in usage
    flat = " ".join(help_text.split()).replace("- ", "-")  # argparse may wrap a line at a hyphen
    assert flat.count("anthropic-bodies") == 1  # in the list of names, once
    assert all(name in flat for name in formats.input_choices())
    assert main(["audit", "--input", "nosuch", "x.jsonl"]) == 2
    assert "--input: invalid choice 'nosuch'" in capsys.readouterr().err


def test_a_gate_over_reported_and_predicted_misses_says_which_are_predicted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A request-body log (no usage: its misses the model's) audited beside a transcript that
    # reports its cache use: a cause's FAIL line says how many of its misses are predicted, none
    # where all are reported, and --max-lost-usd's how much of the dollars lost is predicted.
    import re

    body = {"model": "claude-sonnet-4-5", "messages": [{"role": "system", "content": "You are a coding agent. " * 400},
                                                        {"role": "user", "content": "fix the bug " * 50}]}
    changed = json.loads(json.dumps(body))
    changed["messages"][0]["content"] = "CHANGED " + changed["messages"][0]["content"]
    write_jsonl(tmp_path / "bodies.jsonl", [body, changed])
    t = Transcript("s1")
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
    t.user("next", "2025-09-03T00:20:00.000Z")
    t.assistant("r2", "2025-09-03T00:20:03.000Z", [cc_usage(3, 15300, 0, 9)])
    write_jsonl(tmp_path / "s1.jsonl", t.lines)
    assert main(["audit", str(tmp_path), "--fail-on", "system-changed,ttl-expired", "--max-lost-usd", "0", "--quiet"]) == 1
    fails = [line for line in capsys.readouterr().err.splitlines() if line.startswith("FAIL ")]
    assert len(fails) == 3, fails
    assert re.match(r"FAIL cause system-changed: 1 request\(s\), [\d,]+ tokens lost \(all of them predicted: their "
                    r"requests report no cache use\); first at ", fails[0]), fails[0]
    assert re.match(r"FAIL cause ttl-expired: 1 request\(s\), 15,000 tokens lost; first at ", fails[1]), fails[1]
    assert re.fullmatch(r"FAIL lost \$\d+\.\d{4} \(\$\d+\.\d{4} of it predicted: its requests report no cache use\) "
                        r"is above --max-lost-usd \$0", fails[2]), fails[2]


def test_a_request_body_log_is_gated_on_predicted_losses_as_the_gate_docs_say(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # docs/audit.md's Gate section said how a log without usage is gated on its hit ratio, not
    # that --fail-on and --max-lost-usd judge a request-body log's predicted misses and losses,
    # nor where the output says they are predicted: it says so now, in words the output has.
    import re

    from tests.readme import ROOT

    body = {"model": "claude-sonnet-4-5", "messages": [{"role": "system", "content": "You are a coding agent. " * 400},
                                                        {"role": "user", "content": "fix the bug " * 50}]}
    changed = json.loads(json.dumps(body))
    changed["messages"][0]["content"] = "CHANGED " + changed["messages"][0]["content"]
    changed["messages"] += [{"role": "assistant", "content": "ok " * 30}, {"role": "user", "content": "next " * 40}]
    log = write_jsonl(tmp_path / "bodies.jsonl", [body, changed])
    junit = tmp_path / "gate.xml"
    assert main(["audit", str(log), "--fail-on", "system-changed", "--max-lost-usd", "0", "--junit", str(junit)]) == 1
    captured = capsys.readouterr()
    # Its FAIL lines read as a reported log's did ("FAIL lost $0.0069 is above"): they say the
    # figures gated are predicted, as --min-hit-ratio's does, and so do the JUnit failures.
    cause, lost = (line for line in captured.err.splitlines() if line.startswith("FAIL "))
    assert re.fullmatch(r"FAIL cause system-changed: 1 request\(s\), [\d,]+ tokens lost \(predicted: no request reports "
                        r"its cache use\); first at .*", cause), cause
    assert re.fullmatch(r"FAIL predicted lost \$\d+\.\d{4} \(no request reports its cache use\) is above --max-lost-usd \$0", lost), lost
    failures = [f.get("message") for f in ElementTree.parse(junit).iter("failure")]
    assert failures == ["system-changed at line 2 (predicted)", lost.removeprefix("FAIL ")]
    gate = (ROOT / "docs" / "audit.md").read_text(encoding="utf-8").split("\n## Gate\n")[1].split("\n## ")[0]
    said = " ".join(gate.split())
    assert "request-body log" in said and "predicted losses" in said
    for quoted in ("FAIL predicted lost $", "(no request reports its cache use) is above --max-lost-usd",
                   "(predicted: no request reports its cache use); first at"):
        assert quoted in said, quoted
    for quoted in ("(predicted: no request reports its cache use)",
                   "request(s) of request-body logs report no usage: their reads, writes, dollars and misses are the "
                   "byte-level cache model's prediction on the logged bodies"):
        assert quoted in said and quoted in " ".join(captured.out.split()), quoted
    assert re.search(r"\bpred \d", captured.out)


@pytest.mark.parametrize("late", [False, True])
def test_fail_on_compaction_holds_a_compaction_an_expired_head_leads(tmp_path: Path, capsys, late: bool) -> None:
    """Review of integ56: a compaction after 30 idle minutes is ttl-expired (the head expired too)
    with the compaction named beside it, and ``--fail-on compaction`` then passed (exit 0), though
    the same log a minute idle failed it. A compaction that happened is still one: both fail, and
    the JUnit view says the same."""
    log = write_jsonl(tmp_path / "s.jsonl", compacted_after_idle("30" if late else "01"))
    junit = tmp_path / "junit.xml"
    assert main(["audit", str(log), "--quiet", "--fail-on", "compaction", "--junit", str(junit)]) == 1
    err = capsys.readouterr().err
    (line,) = [x for x in err.splitlines() if x.startswith("FAIL cause compaction")]
    # (The head's size is not known here, so the compaction leads either way; a head that is most
    # of what was lost puts the expiry first and the gate still holds the compaction: the
    # precedence test covers that order.)
    assert "1 request(s)" in line and "led by another cause" not in line
    failures = ElementTree.parse(junit).getroot().findall(".//failure")
    assert [f.get("message") for f in failures][:1] == ["compaction at line 9"]


def test_sessions_with_no_loss_figure_are_counted_apart_not_ranked_among_the_costliest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """../shared/realdata's table, titled "the 20 that lost the most", listed 13 block-hash traces
    with no loss ("-") after the 7 sessions that had a loss figure: those are counted apart."""
    from prefixbench.reports.audit import SESSIONS_SHOWN

    folder = tmp_path / "logs"
    for n in range(2):
        t = Transcript(session=f"s{n}")
        t.user("go", "2025-09-03T00:00:00.000Z", root=True)
        t.assistant(f"r1-{n}", "2025-09-03T00:00:02.000Z", [cc_usage(3, 15000, 0, 9)])
        t.user("next", "2025-09-03T00:10:00.000Z")
        t.assistant(f"r2-{n}", "2025-09-03T00:10:03.000Z", [cc_usage(3, 15300, 0, 9)])
        write_jsonl(folder / f"s{n:02d}.jsonl", t.lines)
    for n in range(SESSIONS_SHOWN):
        (folder / f"t{n:02d}.jsonl").write_text(json.dumps({"timestamp": n, "input_length": 1024, "output_length": 1, "hash_ids": [1, 2]}) + "\n")
    assert main(["audit", str(folder), "--quiet"]) == 0
    section = capsys.readouterr().out.split("\nper session", 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[0].endswith(f": the 2 with a loss figure, costliest first; {SESSIONS_SHOWN} with no loss figure (no usage logged) in audit.md and audit.json")
    assert [line.split()[0] for line in section[3:]] == ["s00.jsonl", "s01.jsonl"]
