"""Reading log files whatever their format: bad files, folders, times, byte-order marks."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import re
from pathlib import Path

import pytest
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import load_trace, run_audit
from prefixbench.workloads.logs.records import iter_records
from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"hello": 1}\n', "unknown log format"),
        (b"\x00\x01\x02binary", "binary"),
        (b"", "empty file"),
        # An empty JSON array is no empty file: it said "empty file" of these too.
        (b"[]\n", r"no log records: an empty JSON array$"),
        (b"  \n\n", r"no log records: only blank lines$"),
        # A README named by mistake: was "truncated or malformed JSON".
        (b"# My project\n\nSome text.\n", r"not a JSON log: its first line is not JSON \(Expecting value at column 1\)$"),
    ],
)
def test_bad_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(UserError, match=message) as info:
        load_trace([path])
    assert f"{path}:1:" in str(info.value)


@pytest.mark.parametrize("content", [b"[]\n", b"", b"  \n\n"])
def test_a_file_of_no_records_found_by_the_folder_walk_says_why_as_named_it_does(tmp_path: Path, content: bytes) -> None:
    # A [] file the folder walk found was noted "an empty file found by the folder walk", where the
    # same file named on the command line says "no log records: an empty JSON array".
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    write_jsonl(tmp_path / "s.jsonl", t.lines)
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(UserError) as info:
        load_trace([path])
    why = str(info.value).removeprefix(f"{path}:1: ")
    (found,) = [f for f in run_audit([tmp_path]).files if f.file == str(path)]
    assert (found.format, found.notes) == ("empty", (f"skipped: {why} (found by the folder walk)",))


def test_truncated_line_names_its_line(tmp_path: Path) -> None:
    t = Transcript()
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 2000, 0, 5)])
    path = write_jsonl(tmp_path / "s.jsonl", t.lines)
    path.write_bytes(path.read_bytes() + b'{"parentUuid": "s1-u2", "type": "assis\n')
    with pytest.raises(UserError, match=rf"{path}:3: truncated"):
        load_trace([path])
    # The same cut as the file's very end (no newline: a live log being written) is its torn
    # tail: skipped and said, the records before it read.
    path.write_bytes(path.read_bytes()[:-1])
    requests, (summary,) = load_trace([path])
    assert len(requests) == 1 and summary.skipped[-1][0] == 3 and "breaks off" in summary.skipped[-1][1]
    # A last line that is whole JSON of the wrong kind, or garbage, is still an error.
    path.write_bytes(path.read_bytes()[: -len(b'{"parentUuid": "s1-u2", "type": "assis')] + b"not json")
    with pytest.raises(UserError, match=rf"{path}:3: "):
        load_trace([path])


def test_a_bad_file_in_a_folder_leaves_the_audit_of_the_others_written_and_exits_2(tmp_path: Path, capsys) -> None:
    # A truncated line in the middle of one file stopped the whole audit (exit 2): nothing printed
    # of the other files, nothing written to --out. Now they are audited, printed and written, the
    # bad file is named with its line in one line on stderr, and the exit status is still 2.
    import json

    from prefixbench.reports.cli import main

    folder = tmp_path / "logs"
    for name, cut in (("a.jsonl", False), ("b.jsonl", True), ("c.jsonl", False)):
        t = Transcript(session=name[0])
        t.user("go", "2025-09-03T00:00:00.000Z", root=True)
        t.assistant(f"{name[0]}r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
        t.user("more", "2025-09-03T00:00:05.000Z")
        t.assistant(f"{name[0]}r2", "2025-09-03T00:00:07.000Z", [cc_usage(3, 20, 1500, 9)])
        path = write_jsonl(folder / name, t.lines)
        if cut:
            lines = path.read_bytes().split(b"\n")
            path.write_bytes(b"\n".join([*lines[:2], lines[2][:30], *lines[3:]]))
    bad = folder / "b.jsonl"
    for out in (None, tmp_path / "out"):
        # (--out: the files read in two worker processes, whose error is the file read again in order)
        more = ["--out", str(out), "--jobs", "2"] if out else []
        assert main(["audit", str(folder), "--quiet", "--format", "json", *more]) == 2
        printed, err = capsys.readouterr()
        assert err.count("\n") == 1 and err.startswith(f"prefixbench: error: {bad}:3: truncated or malformed JSON")
        assert "left out" in err
        files = {Path(f["file"]).name: f for f in json.loads(printed)["files"]}
        assert [files[n]["requests"] for n in ("a.jsonl", "c.jsonl")] == [2, 2]
        assert files["b.jsonl"]["format"] == "bad-input" and files["b.jsonl"]["requests"] == 0
        if out is not None:
            assert json.loads((out / "audit.json").read_text())["totals"]["requests"] == 4
    # The library call still refuses the folder (no caller is left without the error), and a bad
    # file alone is the error it was: nothing printed.
    with pytest.raises(UserError, match=rf"{bad}:3: truncated"):
        load_trace([folder])
    assert main(["audit", str(bad), "--quiet"]) == 2
    printed, err = capsys.readouterr()
    assert printed == "" and err.count("\n") == 1 and err.startswith(f"prefixbench: error: {bad}:3: truncated") and "left out" not in err


def test_records_run_together_on_one_line_are_read_as_those_records(tmp_path: Path) -> None:
    # A writer that lost the newline between two records leaves "{...}{...}" on one line (a
    # committed pi session has one): both are read, each on that line; the audit counts both.
    t = Transcript()
    t.user("hello", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 2000, 0, 5)])
    t.user("again", "2025-09-03T00:00:10.000Z")
    t.assistant("r2", "2025-09-03T00:00:12.000Z", [cc_usage(4, 100, 2000, 7)])
    path = tmp_path / "s.jsonl"
    lines = [json.dumps(line) for line in t.lines]
    path.write_text(lines[0] + "\n" + lines[1] + lines[2] + "\n" + lines[3] + "\n")
    assert [(r.line, r.value) for r in iter_records(path)] == [(1, t.lines[0]), (2, t.lines[1]), (2, t.lines[2]), (3, t.lines[3])]
    requests, _ = load_trace([path])
    assert [r.usage.cache_read for r in requests] == [0, 2000]
    # Anything else after a whole record is still an error naming its line.
    for tail in (" x", "[1]", '{"cut": ', ", {}"):
        path.write_text(lines[0] + "\n" + lines[1] + tail + "\n")
        with pytest.raises(UserError, match=rf"{path}:2: "):
            list(iter_records(path))



@pytest.mark.parametrize(("text", "line", "message"), [
    # A JSONC file (a comment): the comment's line, not line 1's "{".
    ('{\n  "compilerOptions": {\n    // strict mode\n    "strict": true\n  }\n}\n', 3,
     "malformed JSON (a comment at column 5: JSON with comments is no log format)"),
    # A trailing comma, after two blank lines and a first line that opens the object with a key.
    ('\n\n{ "a": {\n  "b": 1,\n  }\n}\n', 5,
     "malformed JSON (a trailing comma before column 3: JSON with comments and trailing commas is no log format)"),
    # Any other mistake past the first line: where it is, as the decoder words it.
    ('{\n  "a": 1\n  "b": 2\n}\n', 3, "malformed JSON (Expecting ',' delimiter at column 3)"),
    # A value cut short by the file's end: where it starts, as before.
    ('{\n  "a": [1,\n', 1, "truncated or malformed JSON (Expecting property name enclosed in double quotes at column 2)"),
    # A JSON-lines record cut short, another after it: the JSON-lines error, as before.
    ('{"a": 1\n{"b": 2}\n', 1, "truncated or malformed JSON (Expecting ',' delimiter at column 8)"),
])
def test_a_pretty_printed_file_that_is_not_json_names_the_line_where_it_goes_wrong(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    # Was: every such file was refused at line 1, column 2 (its "{" read as a JSON-lines record).
    path = tmp_path / "tsconfig.json"
    path.write_text(text)
    with pytest.raises(UserError) as info:
        list(iter_records(path))
    assert str(info.value) == f"{path}:{line}: {message}"



def test_json_with_comments_in_a_walked_folder_is_skipped_as_another_tools_file(tmp_path: Path) -> None:
    # An editor's settings beside the logs: was "malformed JSON" at line 1 and exit 2 for the
    # whole audit; a walk now lists it as not a log. Named alone, it is still refused.
    (tmp_path / ".vscode").mkdir()
    settings = tmp_path / ".vscode" / "settings.json"
    settings.write_text('{\n  // the formatter\n  "editor.formatOnSave": true,\n}\n')
    (tmp_path / ".vscode" / "tasks.json").write_text('{\n  "tasks": [\n    {"label": "build"},\n  ]\n}\n')  # a trailing comma
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    write_jsonl(tmp_path / "s.jsonl", t.lines)
    result = run_audit([tmp_path])
    assert sorted((Path(f.file).name, f.format) for f in result.files) == [
        ("s.jsonl", "claude-code"), ("settings.json", "not-a-log"), ("tasks.json", "not-a-log")]
    assert result.totals.requests == 1
    with pytest.raises(UserError, match=r"settings.json:2: malformed JSON \(a comment at column 3: JSON with comments is no log format\)$"):
        run_audit([settings])


def test_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="no log files"):
        load_trace([tmp_path / "empty"])


def test_times_without_offset_are_utc() -> None:
    from prefixbench.workloads.logs.formats.common import parse_time_ms

    assert parse_time_ms("2025-09-03T00:52:31.217", "x") == parse_time_ms("2025-09-03T00:52:31.217Z", "x") == 1756860751217
    assert parse_time_ms(1748554704.293292, "x") == 1748554704293  # epoch seconds (claude-trace)
    assert parse_time_ms(1765233665294, "x") == 1765233665294  # epoch ms (pi)
    with pytest.raises(UserError, match="x: timestamp 'soon' is not ISO 8601"):
        parse_time_ms("soon", "x")


def test_metadata_sidecars_in_a_walked_folder_are_skipped_and_listed(tmp_path: Path) -> None:
    agent = Transcript("agent", version="2.1.3", sidechain=True)
    agent.user("subtask", "2025-09-03T00:00:05.000Z", root=True)
    agent.assistant("a1", "2025-09-03T00:00:06.000Z", [cc_usage(3, 12000, 0, 9)])
    folder = tmp_path / "sess" / "subagents"
    write_jsonl(folder / "agent-abc.jsonl", agent.lines)
    (folder / "agent-abc.meta.json").write_text(json.dumps({"agentType": "general-purpose", "description": "x"}))
    result = run_audit([tmp_path])
    assert [f.format for f in result.files] == ["claude-code", "not-a-log"]
    assert result.totals.requests == 1
    with pytest.raises(UserError, match="unknown log format"):  # named on the command line: it must be a log
        run_audit([folder / "agent-abc.meta.json"])


def test_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    lines = tmp_path / "s.jsonl"
    lines.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\r\n" for r in t.lines).encode())
    array = tmp_path / "chat.json"
    array.write_bytes(b"\xef\xbb\xbf" + json.dumps(t.lines, indent=1).encode())
    for path in (lines, array):
        requests, _ = load_trace([path])
        assert [r.usage.cache_write for r in requests] == [1500]


def test_empty_files_in_a_walked_folder_are_skipped_and_listed(tmp_path: Path) -> None:
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    write_jsonl(tmp_path / "a.jsonl", t.lines)
    (tmp_path / "b.jsonl").write_bytes(b"")
    result = run_audit([tmp_path])
    assert [(Path(f.file).name, f.format) for f in result.files] == [("a.jsonl", "claude-code"), ("b.jsonl", "empty")]
    with pytest.raises(UserError, match="b.jsonl:1: empty file"):
        run_audit([tmp_path / "b.jsonl"])
    (tmp_path / "a.jsonl").unlink()
    with pytest.raises(UserError, match=r"no log to audit: of the 1 file\(s\) named \*.jsonl, \*.json or \*.traj here, none is a log \(b.jsonl: empty\)"):
        run_audit([tmp_path])


def test_a_walked_json_lines_file_of_no_known_format_is_skipped_listed_and_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """~/.claude holds history.jsonl (prompts typed, no API calls); Cline's data folder holds
    logs/hooks.jsonl: auditing the whole folder reads the logs beside them, says what it
    skipped, and a file named on the command line is still an error."""
    from prefixbench.reports.cli import main

    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    write_jsonl(tmp_path / "projects" / "p" / "s.jsonl", t.lines)
    history = write_jsonl(tmp_path / "history.jsonl", [{"display": "fix the test", "pastedContents": {}, "timestamp": 1756857600000, "project": "/p"}])
    result = run_audit([tmp_path])
    assert [(Path(f.file).name, f.format) for f in result.files] == [("history.jsonl", "not-a-log"), ("s.jsonl", "claude-code")]
    assert result.totals.requests == 1
    assert main(["audit", str(tmp_path), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"prefixbench: warning: {history}: skipped: found by the folder walk" in err
    with pytest.raises(UserError, match="unknown log format"):
        run_audit([history])


def test_a_utf16_log_with_a_byte_order_mark_reads_as_its_utf8_text(tmp_path: Path) -> None:
    # Windows PowerShell 5 writes a redirected command's output (``>``, ``Out-File``) as UTF-16 LE
    # with a byte-order mark; a file named claude-session.jsonl was committed to a public
    # repository so. Main refused any such file as "binary file, not a text log" (its NULs), and a
    # folder holding one stopped there.
    t = Transcript(version="2.1.14")
    t.user("go", "2026-01-21T06:20:30.000Z", root=True)
    t.assistant("r1", "2026-01-21T06:20:35.000Z", [cc_usage(3, 3_000, 15_000, 9)])
    t.user("done", "2026-01-21T06:20:36.000Z", tool=True)
    t.assistant("r2", "2026-01-21T06:20:40.000Z", [cc_usage(1, 200, 18_000, 7)])
    text = "".join(json.dumps(line) + "\r\n" for line in t.lines)
    utf8 = tmp_path / "utf8.jsonl"
    utf8.write_text(text, encoding="utf-8")
    expected = run_audit([utf8]).totals
    for codec, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
        path = tmp_path / f"{codec}.jsonl"
        path.write_bytes(bom + text.encode(codec))
        assert [r.line for r in iter_records(path)] == [r.line for r in iter_records(utf8)]
        assert run_audit([path]).totals == expected
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(b"\xff\xfe" + "{}".encode("utf-16-le") + b"\x00\xdc")  # a lone low surrogate at the end
    with pytest.raises(UserError, match=r"odd\.jsonl: starts with a UTF-16 byte-order mark but is not UTF-16 text"):
        list(iter_records(odd))


def test_a_utf16_log_cut_at_an_odd_byte_reads_as_a_utf8_log_cut_inside_a_character(tmp_path: Path) -> None:
    # Base: "starts with a UTF-16 byte-order mark but is not UTF-16 text (truncated data)", no
    # line, also where whole records came before the torn last line.
    whole = json.dumps({"type": "user", "text": "hi"}) + "\n"
    for codec, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
        tail = '{"type": "user", "text": "h'.encode(codec)[:-1]  # cut at an odd byte
        torn_path = tmp_path / f"torn-{codec}.jsonl"
        torn_path.write_bytes(bom + (whole * 2).encode(codec) + tail)
        torn: list[int] = []
        assert len(list(iter_records(torn_path, torn=torn))) == 2 and torn == [3]
        with pytest.raises(UserError) as caught:
            list(iter_records(torn_path))  # the readers that take no torn line
        assert str(caught.value) == f"{torn_path}:3: the file ends inside a UTF-16 character"
        only = tmp_path / f"only-{codec}.jsonl"
        only.write_bytes(bom + tail)
        with pytest.raises(UserError) as caught:
            list(iter_records(only, torn=[]))
        assert str(caught.value) == f"{only}:1: the file ends inside a UTF-16 character"


def test_a_utf16_log_cut_inside_a_surrogate_pair_reads_as_one_cut_at_an_odd_byte(tmp_path: Path) -> None:
    # Base: "starts with a UTF-16 byte-order mark but is not UTF-16 text (unexpected end of data)".
    whole = json.dumps({"type": "user", "text": "hi"}) + "\n"
    for codec, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
        tail = '{"type": "user", "text": "\U0001F600'.encode(codec)[:-2]  # the pair's first half only
        path = tmp_path / f"pair-{codec}.jsonl"
        path.write_bytes(bom + (whole * 2).encode(codec) + tail)
        torn: list[int] = []
        assert len(list(iter_records(path, torn=torn))) == 2 and torn == [3]
        with pytest.raises(UserError) as caught:
            list(iter_records(path))
        assert str(caught.value) == f"{path}:3: the file ends inside a UTF-16 character"


def test_a_utf16_log_whose_copy_finds_no_room_names_the_temporary_folder(tmp_path: Path, monkeypatch) -> None:
    # A UTF-16 log is read through a UTF-8 copy in a temporary file (on disk past 64 MiB). With
    # the temporary folder full, merge36 said "u16.jsonl: cannot read (No space left on device)":
    # the log's fault, and nothing about TMPDIR.
    import errno
    import io
    import tempfile

    class Full(io.BytesIO):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__()

        def write(self, data) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    path = tmp_path / "u16.jsonl"
    path.write_bytes(b"\xff\xfe" + '{"a": 1}\n'.encode("utf-16-le"))
    monkeypatch.setattr(tempfile, "SpooledTemporaryFile", Full)
    with pytest.raises(UserError) as caught:
        list(iter_records(path))
    assert str(caught.value) == (f"{path}: cannot write its UTF-8 copy (the file is UTF-16) to a temporary file in "
                                 f"{tempfile.gettempdir()}: No space left on device; set TMPDIR to a folder with room")


def test_a_utf16_log_tells_progress_while_it_is_converted_and_read(tmp_path: Path, monkeypatch) -> None:
    # A long read shows a bar on a terminal and a plain line every few seconds in a CI log, told
    # the bytes read so far. A UTF-16 log is converted to a UTF-8 copy, then its copy read: main
    # told nothing in either step (the copy was read with no progress), so a large UTF-16 log sat
    # silent to the end. Now the conversion tells its share of the file's bytes, the reading of
    # the copy the rest, rising to the file's size.
    import prefixbench.workloads.logs.records as records

    monkeypatch.setattr(records, "_CHUNK", 4096)  # several chunks, so the conversion tells as it goes
    text = "".join(json.dumps({"n": n, "pad": "x" * 40}) + "\n" for n in range(2_000))
    path = tmp_path / "u16.jsonl"
    path.write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    told: list[int] = []
    first_record_after: list[int] = []
    for record in iter_records(path, told.append):
        if not first_record_after:
            first_record_after.append(len(told))
    size = path.stat().st_size
    assert first_record_after[0] > 1  # told during the conversion, before any record
    assert told == sorted(told) and told[-1] == size  # monotonic, ending at the file's bytes
    assert len(told) > first_record_after[0] + 1  # and told again while the copy is read
    assert 0 < told[first_record_after[0] - 1] < size


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress], ids=["gzip", "bzip2", "xz"])
def test_a_compressed_utf16_log_tells_progress_while_its_copy_is_read(tmp_path: Path, monkeypatch, compress) -> None:
    # A compressed log tells the file's bytes read (its size counts those). A UTF-16 one is read
    # whole by its conversion: the bytes told reached the file's size then, and sat there while
    # the copy was read. Now the conversion tells its share of them, the copy's reading the rest.
    import prefixbench.workloads.logs.records as records

    monkeypatch.setattr(records, "_CHUNK", 4096)
    text = "".join(json.dumps({"n": n, "pad": f"{n * 7919 % 100_003:x}" * 8}) + "\n" for n in range(3_000))
    path = tmp_path / "u16.jsonl"  # (read by its magic bytes)
    path.write_bytes(compress(b"\xff\xfe" + text.encode("utf-16-le")))
    told: list[int] = []
    first_record_after: list[int] = []
    for _ in iter_records(path, told.append):
        if not first_record_after:
            first_record_after.append(len(told))
    size = path.stat().st_size
    assert told == sorted(told) and told[-1] == size
    assert 0 < told[first_record_after[0] - 1] < size  # the conversion told a share, not all
    assert len(set(told[first_record_after[0]:])) > 2  # and the copy's reading rose to the size


@pytest.mark.parametrize("pad", [0, 1, 2])
def test_a_pretty_printed_log_of_cjk_text_past_a_read_chunk_is_read_whichever_byte_a_chunk_ends_on(
        tmp_path: Path, pad: int) -> None:
    # A pretty-printed JSON document is read in 1 MiB chunks, each read on to the end of the
    # character it cuts. A chunk ending on a whole 3-byte character was taken for one cut short, so
    # the reader read on into the next character and stopped inside it: a legacy Copilot CLI
    # session of Japanese chat (1.2 MB) was refused as "not UTF-8 text" and the whole audit with it.
    text = "日本語のテキスト" * 60_000  # 24 bytes a repeat: past the first chunk
    path = tmp_path / "session.json"
    path.write_text(json.dumps({"pad": "x" * pad, "chatMessages": [{"role": "user", "content": text}]},
                               ensure_ascii=False, indent=2), encoding="utf-8")
    records = list(iter_records(path))
    assert len(records) == 1 and records[0].value["chatMessages"][0]["content"] == text


_CHARS = ["é", "中", "😀"]  # 2, 3 and 4 bytes


@pytest.mark.parametrize("array", [False, True])
@pytest.mark.parametrize("char", _CHARS)
def test_a_chunk_may_end_on_any_byte_of_a_2_3_or_4_byte_character(tmp_path: Path, monkeypatch, char: str, array: bool) -> None:
    # The chunked readers (a pretty-printed object, a JSON array) read on to the end of a
    # character a chunk cuts: at every byte of it, and just after it, the text reads back whole.
    from prefixbench.workloads.logs import records

    monkeypatch.setattr(records, "_CHUNK", 4096)
    size = len(char.encode())
    head = '[\n  {\n    "text": "' if array else '{\n  "text": "'
    tail = '"\n  }\n]\n' if array else '"\n}\n'
    for offset in range(size + 1):
        pad = 4096 - offset - len(head.encode())
        text = "a" * pad + char * 3
        path = tmp_path / f"log-{offset}.json"
        path.write_bytes((head + text + tail).encode())
        (record,) = list(iter_records(path))
        assert record.value["text"] == text, offset


@pytest.mark.parametrize("word", ["true", "false", "null", "-1", "0.5", "1e-3", "1.5E+7"])
def test_a_chunk_may_end_inside_a_word_or_a_number(tmp_path: Path, monkeypatch, word: str) -> None:
    # A pretty-printed object is decoded again, a chunk longer, where its text ends inside a value.
    # A chunk that ended inside a word (``tr``) or a number's fraction or exponent (``0.``, ``1e-``)
    # gave another error than the end of the text, and a whole document more than a chunk long was
    # refused as "malformed JSON (Expecting value ...)".
    from prefixbench.workloads.logs import records

    monkeypatch.setattr(records, "_CHUNK", 4096)
    head, tail = '{\n  "pad": "', '",\n  "v": '
    for inside in range(1, len(word)):
        pad = 4096 - inside - len(head) - len(tail)
        path = tmp_path / f"log-{inside}.json"
        path.write_text(head + "x" * pad + tail + word + "\n}\n")
        (record,) = list(iter_records(path))
        assert record.value["v"] == json.loads(word), inside


@pytest.mark.parametrize("array", [False, True])
@pytest.mark.parametrize("char", _CHARS)
def test_a_file_that_ends_inside_a_character_says_so_at_the_line_it_ends(
        tmp_path: Path, monkeypatch, capsys, char: str, array: bool) -> None:
    # Base: "not UTF-8 text", named at the first line of the element the cut falls in.
    from prefixbench.reports.cli import main
    from prefixbench.workloads.logs import records

    monkeypatch.setattr(records, "_CHUNK", 4096)
    head = '[\n  {\n    "text": "' if array else '{\n  "text": "'
    for cut in range(1, len(char.encode())):
        body = head + "a" * (4096 - len(head))
        path = tmp_path / f"log-{cut}.json"
        path.write_bytes(body.encode() + char.encode()[:cut])
        with pytest.raises(UserError, match=r":3: the file ends inside a UTF-8 character" if array else
                           r":2: the file ends inside a UTF-8 character"):
            list(iter_records(path))
        assert main(["audit", str(path)]) == 2
        err = capsys.readouterr().err
        assert "ends inside a UTF-8 character" in err and "Traceback" not in err


def _cut_line(char: str, cut: int) -> bytes:
    """A JSON line whose text breaks off after ``cut`` of ``char``'s bytes (no newline)."""
    line = json.dumps({"type": "user", "text": f"voil\u00e0 {char} end"}, ensure_ascii=False).encode()
    return line[: line.index(char.encode()) + cut]


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor().compress(data)


@pytest.mark.parametrize("compress", [None, gzip.compress, _zstd], ids=["plain", "gzip", "zstd"])
@pytest.mark.parametrize("char", _CHARS)
def test_a_json_lines_file_cut_inside_a_character_on_its_last_line_says_so_on_every_reading(
        tmp_path: Path, char: str, compress) -> None:
    # Base: "FILE:N: not UTF-8 text" where no torn tail is read (the file's only line, a reader
    # that takes no torn line); the cut mid-JSON is "truncated or malformed JSON" there, exit 2
    # alike. A torn tail (a line after whole records) is still skipped with its note.
    whole = json.dumps({"type": "user", "text": "hi"}).encode() + b"\n"
    for cut in range(1, len(char.encode())):
        for head, line in ((b"", 1), (whole * 2, 3)):
            data = head + _cut_line(char, cut)
            path = tmp_path / (f"log-{cut}-{line}.jsonl" + ("" if compress is None else ".z"))
            path.write_bytes(data if compress is None else compress(data))
            with pytest.raises(UserError, match=rf"^{re.escape(str(path))}:{line}: the file ends inside a UTF-8 character$"):
                list(iter_records(path))  # the readers that take no torn line (OpenCode's storage, OpenHands' events)
            torn: list[int] = []
            if line == 1:
                with pytest.raises(UserError, match=rf"^{re.escape(str(path))}:1: the file ends inside a UTF-8 character$"):
                    list(iter_records(path, torn=torn))
            else:
                assert len(list(iter_records(path, torn=torn))) == 2 and torn == [3]


@pytest.mark.parametrize("char", _CHARS)
def test_the_line_readers_say_a_file_ends_inside_a_character_where_it_does(tmp_path: Path, char: str) -> None:
    # replay's and check --trace's lines (jsonlines.iter_lines, then read_json), the line reader
    # and the whole-file reader of reading.py. Base: "not UTF-8 text (byte 0xe2 at column 59; a
    # binary or truncated file?)". The same bytes with a newline after them are not UTF-8.
    from prefixbench.workloads.logs import reading
    from prefixbench.workloads.logs.jsonlines import iter_lines, read_json

    whole = b'{"a": 1}\n'
    for cut in range(1, len(char.encode())):
        path = tmp_path / f"log-{cut}.jsonl"
        path.write_bytes(whole + _cut_line(char, cut))
        ends = rf"^{re.escape(str(path))}:2: the file ends inside a UTF-8 character$"
        (_, first), (number, last) = iter_lines(path)
        with pytest.raises(UserError, match=ends):
            read_json(last, path, number)
        with pytest.raises(UserError, match=ends):
            list(reading.iter_lines(path))
        with pytest.raises(UserError, match=ends):
            reading.read_text(path)
        path.write_bytes(whole + _cut_line(char, cut) + b"\n" + whole)
        (_, first), (number, last), _ = iter_lines(path)
        with pytest.raises(UserError, match=rf"^{re.escape(str(path))}:2: not UTF-8 text"):
            read_json(last, path, number)
        with pytest.raises(UserError, match=rf"^{re.escape(str(path))}:2: not UTF-8 text"):
            list(reading.iter_lines(path))
        with pytest.raises(UserError, match=rf"^{re.escape(str(path))}:2: not UTF-8 text"):
            reading.read_text(path)
        with pytest.raises(UserError, match=rf"^{re.escape(str(path))}:2: not UTF-8 text$"):
            list(iter_records(path))
