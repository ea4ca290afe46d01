"""The audit's rows wait in a temporary file while the command works out what to change
(:mod:`prefixbench.workloads.audit.spill`): read back the same, shared as before, and the file
gone on every exit."""

from __future__ import annotations

import errno
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
from msgspec.structs import replace
from prefixbench.reports.cli import main
from prefixbench.workloads.audit import spill as spill_module
from prefixbench.workloads.audit.core import run_audit
from prefixbench.workloads.audit.spill import BucketSpill, RowSpill

from .fixtures import Transcript, cc_usage, write_jsonl


def _session(folder: Path, turns: int = 40, name: str = "spill") -> Path:
    """One lane; every fifth request comes back after 20 minutes and reads nothing (a miss)."""
    t = Transcript(name)
    t.user("go", "2025-09-03T00:00:00.000Z", root=True)
    minute = read = 0
    for n in range(turns):
        minute += 20 if n % 5 == 4 else 1
        stamp = f"2025-09-03T{minute // 60:02d}:{minute % 60:02d}:00.000Z"
        expired = n % 5 == 4
        t.assistant(f"{name}-r{n}", stamp, [cc_usage(3, read + 300 if expired or n == 0 else 300, 0 if expired else read, 20)])
        read += 300
        t.user("result " * 20, stamp, tool=True)
    return write_jsonl(folder / f"{name}.jsonl", t.lines)


def test_the_rows_come_back_the_same_in_their_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill_module, "BATCH", 7)  # several batches, the last one short
    rows = run_audit([_session(tmp_path)]).rows
    # Dollar texts a value compare cannot tell apart: each comes back as it was written.
    odd = (Decimal("1E+1"), Decimal("-0"), Decimal("0E-8"), Decimal("0.0150"))
    rows = (*rows, *(replace(rows[0], cost_usd=d, lost_usd=d, line=10_000 + n) for n, d in enumerate(odd)))
    # A lone surrogate a log held (msgpack takes only UTF-8): its batch goes as bytes.
    rows = (*rows, replace(rows[1], detail="bad \ud800 text", model="m\udfff", line=20_000))
    with RowSpill(rows) as spill:
        back = spill.load()
    assert back == rows
    assert [str(r.cost_usd) for r in back] == [str(r.cost_usd) for r in rows]
    # What many rows repeat is one object again (no more memory than before).
    assert len({id(r.file) for r in back}) == 1 and len({id(r.model) for r in back[:-1]}) == 1
    assert len({id(r.lost_usd) for r in back if r.lost_usd == 0 and str(r.lost_usd) == "0"}) == 1
    assert all(r.predicted_cache_read is r.reported_cache_read for r in back if r.predicted_cache_read == r.reported_cache_read)
    with RowSpill(()) as empty:
        assert empty.load() == ()


def test_each_bucket_comes_back_in_the_order_it_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of three buckets interleaved (files sent at the same time): some buckets' batches
    written full, some when too many rows wait, some still waiting when taken."""
    monkeypatch.setattr(spill_module, "BATCH", 7)
    monkeypatch.setattr(BucketSpill, "PENDING", 10)
    rows = run_audit([_session(tmp_path, 60)]).rows
    given: dict[int, list] = {0: [], 1: [], 2: []}
    with BucketSpill() as spill:
        for n, row in enumerate(rows):
            bucket = 0 if n < 10 else n % 3 if n < 50 else 2
            given[bucket].append(row)
            spill.add(bucket, row)
        assert spill.take(1) == given[1] and spill.take(1) == []
        assert spill.take(2) == given[2] and spill.take(0) == given[0] and spill.take(5) == []
        for row in rows:
            spill.append(row)  # the rows in their order, in the same file
        assert spill.load() == rows and [r for batch in spill.batches() for r in batch] == list(rows)


def test_an_audit_whose_rows_wait_on_disk_is_the_audit_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three sessions sent at the same time, the rows of each file in a bucket of their own, read
    back and summed a file at a time: the same rows and summaries."""
    monkeypatch.setattr(spill_module, "BATCH", 7)
    monkeypatch.setattr(BucketSpill, "PENDING", 10)
    logs = [_session(tmp_path, 30 + 7 * n, f"s{n}") for n in range(3)]
    whole = run_audit(logs)
    with BucketSpill() as spill:
        spilled = run_audit(logs, spill=spill)
        assert spilled.rows == ()
        spilled = replace(spilled, rows=spill.load())
    assert spilled == whole and len(whole.rows) == 30 + 37 + 44 and len(whole.sessions) == 3


def _recorded_files(monkeypatch: pytest.MonkeyPatch, folder: Path) -> list:
    """The temporary files the spill makes (in ``folder``, as TMPDIR would put them)."""
    made = []
    real = tempfile.TemporaryFile

    def recorded(*args, **kwargs):
        handle = real(*args, dir=folder, **kwargs)
        made.append(handle)
        return handle

    monkeypatch.setattr(spill_module.tempfile, "TemporaryFile", recorded)
    return made


def test_the_temporary_file_is_gone_after_the_command_and_after_ctrl_c(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    log = _session(tmp_path / "logs")
    temporary, here = tmp_path / "tmp", tmp_path / "here"
    temporary.mkdir()
    here.mkdir()
    monkeypatch.chdir(here)
    made = _recorded_files(monkeypatch, temporary)
    assert main(["audit", str(log), "--quiet", "--format", "json"]) == 0
    assert len(made) == 1 and made[0].closed
    assert not list(temporary.iterdir()) and not list(here.iterdir())  # nameless, and never in the current folder
    capsys.readouterr()

    from prefixbench.workloads.audit import advice

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(advice, "resimulate", interrupted)
    assert main(["audit", str(log), "--quiet"]) == 130
    assert len(made) == 2 and made[1].closed
    assert not list(temporary.iterdir()) and not list(here.iterdir())
    assert capsys.readouterr().err == "prefixbench: interrupted\n"


class _Full:
    """A temporary file on a full disk: every write fails with ENOSPC."""

    closed = False

    def write(self, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def close(self) -> None:
        self.closed = True


def test_a_full_temporary_folder_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """What was printed before stays (a warning of the reading), the error is one line naming the
    folder and what to do, nothing goes to standard output, and the file is closed."""
    log = _session(tmp_path / "logs")
    with log.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "assistant", "message": {"usa')  # a torn last line: a warning before the audit
    full = _Full()
    monkeypatch.setattr(spill_module.tempfile, "TemporaryFile", lambda *args, **kwargs: full)
    assert main(["audit", str(log), "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 2 and "warning" in lines[0], lines
    assert lines[1] == (f"prefixbench: error: cannot write the audit's rows in a temporary file in {tempfile.gettempdir()} "
                        "(held there while the audit runs): No space left on device; set TMPDIR to a "
                        "folder with room")
    assert full.closed


def test_the_misses_come_back_as_the_rows_with_a_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:meth:`RowSpill.misses` (what the re-simulations read): the rows with a cause, in their
    order, the same as the whole rows read back; batches of hits only, of misses only, mixed,
    and one whose texts went as bytes (a lone surrogate)."""
    monkeypatch.setattr(spill_module, "BATCH", 7)
    rows = list(run_audit([_session(tmp_path, 60)]).rows)
    assert any(r.cause is not None for r in rows) and any(r.cause is None for r in rows)
    hits = [replace(r, cause=None) for r in rows[:7]]
    misses = [replace(r, cause="ttl-expired") for r in rows[7:14]]
    odd = [replace(rows[14], lane="lane-\ud800"), *rows[15:21]]
    every = [*hits, *misses, *rows, *odd]
    with RowSpill(every) as spill:
        found = [r for batch in spill.misses() for r in batch]
        whole = [r for batch in spill.batches() for r in batch]
    assert whole == every
    assert found == [r for r in every if r.cause is not None]
