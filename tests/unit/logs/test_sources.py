"""The folder walk that finds an audit's log files: any depth, every unreadable folder named."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from prefixbench.reports.cli import main
from prefixbench.workloads.logs import sources
from prefixbench.workloads.logs.sources import find_logs

_LOG = Path(__file__).parent / "fixtures" / "chat-completions.jsonl"


def _tree(root: Path, *, broken_link: bool = False) -> Path:
    """Logs at several levels, hidden and non-log files, a linked file, a linked folder (and a broken link)."""
    for folder in ("a", "a/b", "c", ".hidden", "z"):
        (root / folder).mkdir(parents=True)
    for n, name in enumerate(("top.jsonl", "a/one.json", "a/b/two.jsonl", ".hidden/three.jsonl", "c/.dot.jsonl", "c/notes.txt")):
        # Each a log of its own: blank lines after the records keep the copies' bytes apart
        # (the same bytes twice would be one log counted once).
        (root / name).write_bytes(_LOG.read_bytes() + b"\n" * n)
    (root / "z" / "link.jsonl").symlink_to(root / "top.jsonl")
    (root / "z" / "folder-link").symlink_to(root / "a", target_is_directory=True)  # listed, never walked into
    if broken_link:
        (root / "z" / "broken.jsonl").symlink_to(root / "nowhere.jsonl")
    return root


def test_the_walk_finds_what_os_walk_finds(tmp_path: Path) -> None:
    root = _tree(tmp_path / "logs", broken_link=True)
    expected = sorted(
        Path(folder) / name
        for folder, _, names in os.walk(root)
        for name in names
        if name.endswith((".jsonl", ".json")) and not name.startswith(".")
    )
    assert [path for path, _ in sources._walk(root)] == expected
    assert [path.relative_to(root).as_posix() for path in expected] == [
        ".hidden/three.jsonl", "a/b/two.jsonl", "a/one.json", "top.jsonl", "z/broken.jsonl", "z/link.jsonl"
    ]


def test_a_folder_nested_deeper_than_the_recursion_limit_is_walked(tmp_path: Path) -> None:
    folder = tmp_path / "deep"
    depth = 1200  # past Python's default recursion limit (1000)
    levels = [folder]
    for _ in range(depth):  # one level at a time: pathlib's mkdir(parents=True) recurses too
        levels.append(levels[-1] / "d")
    try:
        for level in levels:
            level.mkdir()
        shutil.copy(_LOG, levels[-1] / "log.jsonl")
        assert find_logs([folder]) == [levels[-1] / "log.jsonl"]
    finally:  # bottom up: shutil.rmtree (and pytest's clean-up of old tmp folders) recurses
        (levels[-1] / "log.jsonl").unlink(missing_ok=True)
        for level in reversed(levels):
            if level.exists():
                level.rmdir()


def _unreadable(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """``folder`` refuses to be listed, as a folder without read permission does (root reads any)."""
    scandir = os.scandir

    def refusing(path=".") -> object:
        if Path(path) == folder:
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)


def test_an_unreadable_subfolder_is_named_in_a_warning_and_in_the_audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path / "logs")
    everything = main(["audit", str(root), "--quiet", "--format", "json"])
    full = json.loads(capsys.readouterr().out)
    _unreadable(monkeypatch, root / "a")
    assert everything == 0 and main(["audit", str(root), "--quiet", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        f"prefixbench: warning: {root / 'a'}: skipped: a subfolder the folder walk could not read (Permission denied): "
        "the logs in it are not in this audit"
    )
    part = json.loads(captured.out)
    assert 0 < part["totals"]["requests"] < full["totals"]["requests"]
    assert any("could not read" in note for file in part["files"] for note in file["notes"] if file["file"] == str(root / "a"))


def test_the_folder_named_unreadable_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path / "logs")
    _unreadable(monkeypatch, root)
    assert main(["audit", str(root), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {root}: cannot read this folder (Permission denied); make it readable, or name the folders to audit"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder without read permission")
def test_a_subfolder_without_read_permission_is_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path / "logs")
    (root / "a").chmod(0)
    try:
        assert main(["audit", str(root), "--quiet"]) == 0
    finally:
        (root / "a").chmod(0o755)
    assert f"prefixbench: warning: {root / 'a'}: skipped: a subfolder the folder walk could not read (Permission denied)" in capsys.readouterr().err


def test_a_link_to_nothing_is_skipped_with_a_warning_not_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A walked ``*.jsonl`` that is a link to a file since deleted (an agent's rotated log) is
    skipped, warned about and noted; the other logs are audited (it failed the whole audit with
    'No such file or directory'). A folder holding only such a link is refused naming it."""
    root = _tree(tmp_path / "logs", broken_link=True)
    assert main(["audit", str(root), "--quiet", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    broken = root / "z" / "broken.jsonl"
    assert err.strip() == f"prefixbench: warning: {broken}: skipped: a log file the folder walk found and could not read (a link to nothing)"
    files = {f["file"]: f for f in json.loads(out)["files"]}
    assert files[str(broken)]["format"] == "unreadable" and files[str(root / "top.jsonl")]["requests"] > 0
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    (lonely / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    assert main(["audit", str(lonely), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {lonely / 'gone.jsonl'}: cannot read this log file (a link to nothing), and {lonely} "
        "holds no other log file; make it readable, or name the folders to audit"
    )


def test_the_walk_finds_any_case_and_reads_zstd(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Upper-case names (X.JSONL, t.JSONL.GZ) are logs like the others (they were silently left
    out); a zstd file (Codex's archived rollouts) is read as the others are, where it was skipped."""
    import gzip

    import zstandard

    root = tmp_path / "logs"
    root.mkdir()
    shutil.copy(_LOG, root / "X.JSONL")
    (root / "t.JSONL.GZ").write_bytes(gzip.compress(_LOG.read_bytes()))
    (root / "z.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(_LOG.read_bytes()))
    assert main(["audit", str(root), "--quiet", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    files = {Path(f["file"]).name: f for f in json.loads(out)["files"]}
    assert files["X.JSONL"]["requests"] == files["t.JSONL.GZ"]["requests"] == files["z.jsonl.zst"]["requests"] > 0
    assert "skipped" not in err


def test_a_folder_of_only_empty_or_metadata_files_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "logs"
    root.mkdir()
    (root / "a.jsonl").write_text("")
    assert main(["audit", str(root), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {root}: no log to audit: of the 1 file(s) named *.jsonl, *.json or *.traj here, none is a log (a.jsonl: empty)")


def test_a_walked_file_of_no_records_that_is_not_empty_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A walked ``[]`` or file of blank lines is skipped as an empty one is, but said as what it
    is, as ``audit FILE`` says it: the walk's note and the folder's error called both empty files."""
    from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

    root = tmp_path / "logs"
    root.mkdir()
    (root / "a.json").write_text("[]\n")
    (root / "b.jsonl").write_text("\n  \n")
    (root / "c.jsonl").write_text("")
    assert main(["audit", str(root), "--quiet"]) == 2
    assert capsys.readouterr().err.strip().endswith("none is a log (a.json: no log records, an empty JSON array)")
    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    write_jsonl(root / "d.jsonl", t.lines)
    assert main(["audit", str(root), "--quiet", "--format", "json"]) == 0
    notes = {Path(f["file"]).name: f["notes"] for f in json.loads(capsys.readouterr().out)["files"]}
    assert notes["a.json"] == ["skipped: no log records: an empty JSON array (found by the folder walk)"]
    assert notes["b.jsonl"] == ["skipped: no log records: only blank lines (found by the folder walk)"]
    assert notes["c.jsonl"] == ["skipped: empty file, no log records (found by the folder walk)"]


def test_exact_copies_of_a_log_count_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A session copied into a backup folder (the same bytes) is counted once, the copy listed
    with the file it repeats; it was counted twice for formats without ids to dedupe on."""
    root = tmp_path / "logs"
    (root / "backup").mkdir(parents=True)
    shutil.copy(_LOG, root / "one.jsonl")
    assert main(["audit", str(root), "--quiet", "--format", "json"]) == 0
    alone = json.loads(capsys.readouterr().out)["totals"]
    shutil.copy(_LOG, root / "backup" / "one.jsonl")
    assert main(["audit", str(root), "--quiet", "--format", "json", "--jobs", "2"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["totals"] == alone
    (copy,) = [f for f in record["files"] if f["format"] == "copy"]
    assert copy["file"] == str(root / "one.jsonl") or copy["file"] == str(root / "backup" / "one.jsonl")
    assert copy["notes"][0].startswith("skipped: the same bytes as ")


def test_an_audit_walks_its_folders_and_hashes_their_copies_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The progress bar's total and the read share one walk: two files of one size are hashed
    once each (the command walked the folder twice, hashing them four times)."""
    root = tmp_path / "logs"
    (root / "backup").mkdir(parents=True)
    shutil.copy(_LOG, root / "one.jsonl")
    shutil.copy(_LOG, root / "backup" / "one.jsonl")
    hashed: list[Path] = []
    real = sources._digest
    # Whole-file hashes only (a head of 64 KB is hashed first, for files of one size).
    monkeypatch.setattr(sources, "_digest", lambda path, limit=None: (hashed.append(path) if limit is None else None) or real(path, limit))
    assert main(["audit", str(root), "--quiet"]) == 0
    capsys.readouterr()
    assert sorted(hashed) == sorted([root / "one.jsonl", root / "backup" / "one.jsonl"])


def test_files_of_one_size_are_compared_whole_only_when_their_heads_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies are found by their heads first, then by their whole bytes: a file of the same size
    and the same head as another but a different tail is no copy, an exact copy is, and a file
    whose head differs is never read whole."""
    head = b"x" * (sources._HEAD_BYTES + 10)
    (tmp_path / "a.jsonl").write_bytes(head + b"tail-1")
    (tmp_path / "b.jsonl").write_bytes(head + b"tail-2")  # same size, same head, another tail
    (tmp_path / "c.jsonl").write_bytes(head + b"tail-1")  # a copy of a.jsonl
    (tmp_path / "d.jsonl").write_bytes(b"y" + head[1:] + b"tail-1")  # same size, another head
    files = [(tmp_path / name, None) for name in ("a.jsonl", "b.jsonl", "c.jsonl", "d.jsonl")]
    whole: list[str] = []
    digest = sources._digest
    monkeypatch.setattr(sources, "_digest", lambda path, limit=None: (whole.append(path.name) if limit is None else None) or digest(path, limit))
    marked = dict(sources._copies_marked(files))
    assert marked == {tmp_path / "a.jsonl": None, tmp_path / "b.jsonl": None,
                      tmp_path / "c.jsonl": f"copy of {tmp_path / 'a.jsonl'}", tmp_path / "d.jsonl": None}
    assert whole == ["a.jsonl", "b.jsonl", "c.jsonl"]


def test_a_walked_log_file_without_read_permission_is_skipped_with_a_warning(tmp_path: Path, capsys, monkeypatch) -> None:
    """A walked ``*.jsonl`` the user may not read (mode 000, another user's) is skipped, warned
    about and noted, as docs/robustness.md says of a log file the walk cannot open; the other
    logs are audited. Fails on main: the whole audit stopped on it ('cannot read (Permission
    denied)', exit 2). Played with a refusing open, so it also fails as root."""
    root = _tree(tmp_path / "logs")
    locked = root / "top-locked.jsonl"
    locked.write_bytes((root / "top.jsonl").read_bytes() + b"\n")
    locked.chmod(0)
    real_open = Path.open

    def refusing(self, *args, **kwargs):
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refusing)
    try:
        assert main(["audit", str(root), "--quiet", "--format", "json"]) == 0
    finally:
        locked.chmod(0o644)
    out, err = capsys.readouterr()
    assert err.strip() == f"prefixbench: warning: {locked}: skipped: a log file the folder walk found and could not read (Permission denied)"
    files = {f["file"]: f for f in json.loads(out)["files"]}
    assert files[str(locked)]["format"] == "unreadable" and files[str(root / "top.jsonl")]["requests"] > 0


def test_a_folder_of_unrelated_files_counts_only_the_log_named_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Before: "the folder walk found 1 file(s)" in a folder of three, as if two were missed.
    root = tmp_path / "misc"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    (root / "table.csv").write_text("x,y\n1,2\n")
    (root / "config.json").write_text('{"a": 1}\n')
    assert main(["audit", str(root), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {root}: no log to audit: of the 1 file(s) named *.jsonl, *.json or *.traj here, none is a log "
        "(config.json: no record of a format audit reads)")


def test_openclaw_archived_transcripts_are_walked_and_its_backups_are_not(tmp_path: Path) -> None:
    # OpenClaw renames a session's transcript when /new or /reset starts another one, or when the
    # session is deleted: <id>.jsonl.reset.<time>, <id>.jsonl.deleted.<time>, sessions of their
    # own that main's walk left out. Its .bak.<time> copies of a live transcript stay out.
    sessions = tmp_path / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    names = ["a.jsonl", "b.jsonl.reset.2026-03-21T21-38-51.843Z", "c.jsonl.deleted.2026-03-22T04-47-26.424Z",
             "a.jsonl.bak.2026-03-21T21-00-00.000Z", "d.jsonl.reset.later", "f.jsonl.deleted.1782530279"]
    for name in names:  # (each its own session id: a copy of another file's bytes is skipped as a copy)
        header = {"type": "session", "version": 3, "id": name[0], "timestamp": "2026-03-21T21:00:00.000Z", "cwd": "/w"}
        (sessions / name).write_text(json.dumps(header) + "\n")
    # Later OpenClaw compresses its archives with zstd (<name>.zst), and (June 2026) stamps some in
    # epoch seconds (f.jsonl.deleted.<seconds>).
    zstandard = pytest.importorskip("zstandard")
    header = {"type": "session", "version": 3, "id": "e", "timestamp": "2026-03-21T21:00:00.000Z", "cwd": "/w"}
    packed = sessions / "e.jsonl.reset.2026-04-28T05-47-06.701Z.zst"
    packed.write_bytes(zstandard.ZstdCompressor().compress((json.dumps(header) + "\n").encode()))
    assert [p.name for p in find_logs([tmp_path])] == [
        "a.jsonl", "b.jsonl.reset.2026-03-21T21-38-51.843Z", "c.jsonl.deleted.2026-03-22T04-47-26.424Z",
        "e.jsonl.reset.2026-04-28T05-47-06.701Z.zst", "f.jsonl.deleted.1782530279"]


def test_a_folder_whose_logs_are_behind_a_linked_folder_names_the_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # ~/.claude/projects linked from a dotfiles checkout: the walk does not enter linked folders
    # (no loops, no file counted twice), and the error said only "no log files ... in this
    # folder", though the logs were one link away.
    (tmp_path / "real").mkdir()
    shutil.copy(_LOG, tmp_path / "real" / "s.jsonl")
    (tmp_path / "top" / "nested").mkdir(parents=True)
    (tmp_path / "top" / "nested" / "sessions").symlink_to(tmp_path / "real", target_is_directory=True)
    assert main(["audit", str(tmp_path / "top"), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"prefixbench: error: {tmp_path / 'top'}: no log files (*.jsonl, *.json, *.traj (each also .gz, .bz2, .xz, .zst), *.sqlite, *.db, *.parquet, *.md, *.eval) in this folder; it holds a link to "
        f"a folder, which a walk does not enter: name it to audit it ({tmp_path / 'top' / 'nested' / 'sessions'})")
    assert main(["audit", str(tmp_path / "top" / "nested" / "sessions"), "--quiet"]) == 0
    capsys.readouterr()
    (tmp_path / "empty").mkdir()  # no link: the line as it was
    assert main(["audit", str(tmp_path / "empty"), "--quiet"]) == 2
    assert capsys.readouterr().err.strip().endswith("no log files (*.jsonl, *.json, *.traj (each also .gz, .bz2, .xz, .zst), *.sqlite, *.db, *.parquet, *.md, *.eval) in this folder")


def test_an_empty_folder_names_every_kind_of_file_the_walk_reads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The error listed only *.jsonl, *.json, *.traj, though the walk also reads compressed logs,
    # agents' databases (*.db, *.sqlite) and aider's chat histories (*.md): the list is now the walk's own.
    from prefixbench.workloads.logs.records import COMPRESSED_SUFFIXES
    from prefixbench.workloads.logs.sources import LOG_SUFFIXES, WALKED_NAMES

    (tmp_path / "empty").mkdir()
    assert main(["audit", str(tmp_path / "empty"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"prefixbench: error: {tmp_path / 'empty'}: no log files ({WALKED_NAMES}) in this folder"
    for suffix in (*LOG_SUFFIXES, *COMPRESSED_SUFFIXES, ".db", ".sqlite", ".md"):
        assert suffix in err


def test_a_named_pipe_in_a_walked_folder_is_skipped_not_waited_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A ``*.jsonl`` (or ``*.db``) in a walked folder that is a named pipe is skipped with a warning
    naming what it is; the audit ran forever, waiting in ``open`` for a writer (a fuzz hang). A
    link to a device is skipped alike."""
    root = tmp_path / "logs"
    root.mkdir()
    shutil.copy(Path(__file__).parent / "fixtures" / "codex.jsonl", root / "codex.jsonl")
    os.mkfifo(root / "pipe.jsonl")
    os.mkfifo(root / "opencode.db")
    (root / "zero.jsonl").symlink_to("/dev/zero")
    assert main(["audit", str(root), "--quiet", "--format", "json"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"prefixbench: warning: {root / 'opencode.db'}: skipped: a log file the folder walk found and could not read (a named pipe, not a file)",
        f"prefixbench: warning: {root / 'pipe.jsonl'}: skipped: a log file the folder walk found and could not read (a named pipe, not a file)",
        f"prefixbench: warning: {root / 'zero.jsonl'}: skipped: a log file the folder walk found and could not read (a device or socket, not a file)",
    ]


def test_a_link_in_a_loop_is_named_as_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A walked link that leads back to itself is skipped as a loop, not as 'a link to nothing';
    named on the command line it is one line saying so (it was 'no such file or folder')."""
    root = tmp_path / "logs"
    root.mkdir()
    shutil.copy(Path(__file__).parent / "fixtures" / "codex.jsonl", root / "codex.jsonl")
    (root / "self.jsonl").symlink_to("self.jsonl")
    assert main(["audit", str(root), "--quiet", "--format", "json"]) == 0
    assert capsys.readouterr().err.strip() == (f"prefixbench: warning: {root / 'self.jsonl'}: skipped: a log file the folder walk "
                                                "found and could not read (a link in a loop, that leads back to itself)")
    assert main(["audit", str(root / "self.jsonl"), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: {root / 'self.jsonl'}: cannot read: a link in a loop, that leads back to itself"
    (root / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    assert main(["audit", str(root / "gone.jsonl"), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == f"prefixbench: error: {root / 'gone.jsonl'}: cannot read: a link to nothing"


def test_gemini_cli_encrypted_credential_store_in_a_walked_home_is_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Gemini CLI's FileKeychain (core services/fileKeychain.ts) keeps its tokens in
    ~/.gemini/gemini-credentials.json as one line, IV:auth-tag:ciphertext in hex: no JSON despite
    its name (its MCP token storage wrote mcp-oauth-tokens-v2.json so until 2026-03). A walk of a Gemini home skipped nothing of it and refused the whole audit on its
    first line (a real Cloud Shell home of 2026-06 holds one); it is skipped and listed, and a
    file named on the command line is still refused."""
    from tests.unit.audit.fixtures import gemini_session

    home = tmp_path / ".gemini"
    chats = home / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    gemini_session(chats / "session-2026-06-04T10-04-b8f525ec.jsonl", "gemini-3-flash-preview", [(12000, 0), (12500, 11000)])
    store = home / "gemini-credentials.json"
    # Until 2026-03 its MCP token storage wrote ~/.gemini/mcp-oauth-tokens-v2.json the same way
    # (file-token-storage.ts, a 16-byte IV).
    (home / "mcp-oauth-tokens-v2.json").write_text(f"{'5a' * 16}:{'07' * 16}:{'e1' * 90}")
    why = ("Gemini CLI's encrypted token store (IV:auth-tag:ciphertext in hex, as it writes gemini-credentials.json, "
           "and mcp-oauth-tokens-v2.json before 2026-03: no JSON), not a log")
    for iv in ("ab" * 12, "0f" * 16):  # the 12-byte IV it writes, the 16-byte one it still reads
        store.write_text(f"{iv}:{'c3' * 16}:{'9e4d' * 40}")
        assert main(["audit", str(home), "--quiet", "--format", "json"]) == 0
        report = json.loads(capsys.readouterr().out)
        notes = {Path(f["file"]).name: f["notes"] for f in report["files"]}
        assert notes["gemini-credentials.json"] == notes["mcp-oauth-tokens-v2.json"] == [f"skipped: {why} (found by the folder walk)"]
    # Alone in a folder: the folder holds no log, and says what the file is.
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy(store, lone / "gemini-credentials.json")
    assert main(["audit", str(lone), "--quiet"]) == 2
    assert capsys.readouterr().err.strip().endswith(f"none is a log (gemini-credentials.json: {why})")
    # Named, it is refused as any file that is no JSON log is; so is a walked one of another shape.
    assert main(["audit", str(store), "--quiet"]) == 2
    assert "not a JSON log" in capsys.readouterr().err
    store.write_text("ab:cd:ef")
    assert main(["audit", str(home), "--quiet"]) == 2
    assert "gemini-credentials.json:1: not a JSON log" in capsys.readouterr().err
