"""Issue 23: a failed sweep loses nothing, one sweep writes an ``--out`` at a time, and a folder
that cannot take the files is found before the first run.

Each test starts from an earlier good sweep in ``--out`` and compares the sha256 of every file
before and after.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prefixbench.reports.entry import main
from prefixbench.reports.outdir import LOCK, OutLock
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.runs import store as store_module
from prefixbench.workloads.runs.manifest import UNFINISHED

#: The earlier sweep (two windows, so the later one has an earlier file to remove) and the later
#: one (other runs, other files): a mixed folder shows.
EARLIER = ["sweep", "--windows", "32k,64k", "--presets", "legacy", "--steps", "12", "--quiet", "--jobs", "1"]
LATER = ["sweep", "--windows", "32k", "--presets", "legacy,patched", "--seeds", "0-1", "--steps", "12", "--quiet"]


def digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def earlier(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    out = tmp_path / "out"
    assert main([*EARLIER, "--out", str(out)]) == 0
    return out, digests(out)


def assert_as_it_was(out: Path, before: dict[str, str]) -> dict[str, str]:
    """Every earlier file has its earlier bytes; what is new is only runs added to store/."""
    after = digests(out)
    assert {name: after.get(name) for name in before} == before
    added = sorted(set(after) - set(before))
    assert all(name.startswith("store/") and name.endswith(".parquet") for name in added), added
    leftovers = [p.name for p in out.rglob("*") if p.name.startswith((".tmp-", ".staging-", LOCK, ".prefixbench-landing"))]
    assert leftovers == [] and not (out / UNFINISHED).exists()
    return after


def failing_at(monkeypatch, number: int, error: BaseException) -> list[str]:
    """Make the ``number``-th run of a sweep raise ``error`` (a user engine raising, say)."""
    calls: list[str] = []
    real = store_module.execute_planned

    def flaky(item, spec=None):
        calls.append(item.describe())
        if len(calls) == number:
            raise error
        return real(item, spec)

    monkeypatch.setattr(store_module, "execute_planned", flaky)
    return calls


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_sweep_stopped_by_an_error_leaves_the_earlier_out_as_it_was(earlier, monkeypatch, capsys, jobs):
    out, before = earlier
    capsys.readouterr()
    failing_at(monkeypatch, 2, UserError("engine observation-mask: view() returned dict at step 4 (seed-coding, 32k)"))
    assert main([*LATER, "--jobs", jobs, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "view() returned dict" in err[0], err
    # It says what it kept and what to do.
    assert f"{out}/ is as it was" in err[0] and "fix the error and re-run" in err[0]
    after = assert_as_it_was(out, before)
    # The runs that finished are in the store: with one job the first (the second raised).
    assert len(after) - len(before) >= (1 if jobs == "1" else 0)
    # Re-running with the error fixed completes the sweep from there.
    monkeypatch.undo()
    assert main([*LATER, "--jobs", "1", "--out", str(out)]) == 0
    assert "timeline-64k.png" not in digests(out) and (out / "runs.csv").read_text().count("\n") == 5


def test_any_exception_leaves_the_earlier_out_as_it_was_and_says_so(earlier, monkeypatch):
    out, before = earlier
    failing_at(monkeypatch, 3, RuntimeError("boom"))
    with pytest.raises(RuntimeError) as raised:
        main([*LATER, "--jobs", "1", "--out", str(out)])
    assert any("3 of 4 runs are in" in note for note in raised.value.__notes__)
    assert len(assert_as_it_was(out, before)) == len(before) + 2


def test_a_failure_while_the_outputs_are_rebuilt_leaves_the_earlier_out_as_it_was(earlier, monkeypatch):
    # Every run is computed; the chart fails: nothing of the earlier sweep is gone.
    from prefixbench.reports import charts

    out, before = earlier

    def broken(*args, **kwargs):
        raise RuntimeError("chart broke")

    monkeypatch.setattr(charts, "hit_rate_chart", broken)
    with pytest.raises(RuntimeError):
        main([*LATER, "--jobs", "1", "--out", str(out)])
    assert len(assert_as_it_was(out, before)) == len(before) + 3


def test_an_interrupted_sweep_keeps_the_earlier_outputs_and_says_re_run(earlier, monkeypatch, capsys):
    out, before = earlier
    failing_at(monkeypatch, 2, KeyboardInterrupt())
    assert main([*LATER, "--jobs", "1", "--out", str(out)]) == 130
    # Re-running completes it: the folder says so, and nothing earlier is gone.
    assert "Re-run the same command" in (out / UNFINISHED).read_text()
    (out / UNFINISHED).unlink()
    assert_as_it_was(out, before)


# --- one sweep at a time ------------------------------------------------------------------


def test_a_second_sweep_into_a_held_out_says_who_holds_it(earlier, monkeypatch, capsys):
    out, before = earlier
    ran = failing_at(monkeypatch, 0, RuntimeError("never"))
    capsys.readouterr()
    with OutLock(out):  # another sweep (here: this process, through another open file)
        holder = json.loads((out / LOCK).read_text())
        assert main([*LATER, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "another prefixbench command is writing this folder" in err[0], err
    assert f"pid {os.getpid()} on {holder['host']}, started {holder['started']}" in err[0]
    assert ran == []  # refused before the first run
    assert_as_it_was(out, before)


def test_a_held_lock_stops_a_sweep_in_another_process(earlier):
    out, before = earlier
    with OutLock(out):
        proc = subprocess.run([sys.executable, "-m", "prefixbench", *LATER, "--out", str(out)],
                              capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and f"pid {os.getpid()}" in proc.stderr
    assert_as_it_was(out, before)


def test_a_lock_left_by_a_dead_sweep_is_taken_over_with_a_note(earlier, capsys):
    out, _ = earlier
    (out / LOCK).write_text(json.dumps({"pid": 2**22 + 17, "host": "elsewhere", "started": "2026-01-01 00:00:00 UTC"}))
    capsys.readouterr()
    assert main([*LATER, "--jobs", "1", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "took over the lock of a command that is no longer running (pid 4194321 on elsewhere" in err
    assert not (out / LOCK).exists()



@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_worker_left_running_after_its_command_died_does_not_hold_the_lock(tmp_path, capsys):
    # A sweep with --jobs forks its workers while it holds the lock. Killed (kill -9), it is gone
    # at once, but a worker may run on for a moment: the same command run again then must get
    # the folder, not "another prefixbench command is writing this folder".
    held = OutLock(tmp_path).__enter__()
    ready, say = os.pipe()
    child = os.fork()
    if child == 0:  # the worker: alive until killed below
        os.close(ready)
        os.write(say, b"x")
        while True:
            os.pause()
    try:
        os.close(say)
        assert os.read(ready, 1) == b"x"
        os.close(held.handle)  # the command dies: its own descriptor is closed, its lock file stays
        held.handle = None
        held.__exit__(None, None, None)
        capsys.readouterr()
        with OutLock(tmp_path):
            pass
        assert "took over the lock of a command that is no longer running" in capsys.readouterr().err
    finally:
        os.kill(child, 9)
        os.waitpid(child, 0)
        os.close(ready)



def _transcript(folder: Path) -> Path:
    from tests.unit.audit.fixtures import Transcript, cc_usage, write_jsonl

    t = Transcript()
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    t.assistant("r1", "2025-09-03T00:00:02.000Z", [cc_usage(3, 1500, 0, 9)])
    return write_jsonl(folder / "s.jsonl", t.lines)


def test_an_audit_into_a_sweeps_folder_is_refused_and_the_sweep_kept(earlier, tmp_path, capsys):
    # Both write report.html and swap their files in as one set: the audit's landing left the
    # sweep's runs.csv, report.md and charts as dead links, saying nothing.
    out, before = earlier
    log = _transcript(tmp_path)
    capsys.readouterr()
    assert main(["audit", str(log), "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"prefixbench: error: --out {out}: holds the outputs of prefixbench sweep (runs.csv); "
                   "give audit a folder of its own"]
    assert_as_it_was(out, before)


def test_a_sweep_into_an_audits_folder_is_refused_and_the_audit_kept(tmp_path, capsys):
    out = tmp_path / "audit"
    log = _transcript(tmp_path)
    assert main(["audit", str(log), "--quiet", "--out", str(out)]) == 0
    before = digests(out)
    assert main(["audit", str(log), "--quiet", "--out", str(out)]) == 0  # its own folder again: fine
    capsys.readouterr()
    assert main([*EARLIER, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds the outputs of prefixbench audit (audit.json); give sweep a folder of its own" in err[0]
    assert digests(out) == before


# --- found before the first run ------------------------------------------------------------


needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name a file by its descriptor")


def _fail_writes_under(monkeypatch, folder: Path, code: int, *, after: int = 0) -> None:
    """Writes of files in ``folder`` fail with ``code`` (after ``after`` of them succeeded): a
    full disk (ENOSPC) or a read-only filesystem (EROFS) as the process sees them."""
    real_fsync = os.fsync
    done = []

    def fake_fsync(fd):
        name = os.readlink(f"/proc/self/fd/{fd}")  # the file being flushed
        if name.startswith(str(folder)) and not os.path.isdir(name):
            done.append(name)
            if len(done) > after:
                raise OSError(code, os.strerror(code))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fake_fsync)


@needs_proc
@pytest.mark.parametrize(("where", "code"), [("store", errno.ENOSPC), ("store", errno.EROFS), ("", errno.ENOSPC)])
def test_a_full_disk_or_read_only_store_is_found_before_the_first_run(earlier, monkeypatch, capsys, where, code):
    out, before = earlier
    ran = failing_at(monkeypatch, 0, RuntimeError("never"))
    _fail_writes_under(monkeypatch, out / where if where else out, code)
    capsys.readouterr()
    assert main([*LATER, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and os.strerror(code) in err[0] and str(out / where if where else out) in err[0], err
    assert ran == []
    monkeypatch.undo()
    assert_as_it_was(out, before)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_store_is_found_before_the_first_run(earlier, monkeypatch, capsys):
    out, before = earlier
    ran = failing_at(monkeypatch, 0, RuntimeError("never"))
    (out / "store").chmod(0o555)
    try:
        capsys.readouterr()
        assert main([*LATER, "--out", str(out)]) == 2
    finally:
        (out / "store").chmod(0o755)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"cannot write in {out / 'store'}" in err[0], err
    assert ran == []
    assert_as_it_was(out, before)


@needs_proc
def test_a_disk_that_fills_during_the_sweep_names_the_file_and_leaves_no_temporary(earlier, monkeypatch, capsys):
    # The probe passes; the disk is full by the time the second run is stored.
    out, before = earlier
    _fail_writes_under(monkeypatch, out / "store", errno.ENOSPC, after=2)
    capsys.readouterr()
    assert main([*LATER, "--jobs", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0], err
    assert f"{out / 'store'}/" in err[0] and ".parquet: cannot store the run (No space left on device)" in err[0]
    monkeypatch.undo()
    assert len(assert_as_it_was(out, before)) == len(before) + 1
