"""Store files carry a checksum and their run's key; damage is recomputed with one line naming
the file, never a traceback or a silent difference (issue 23)."""

from __future__ import annotations

import random
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prefixbench.reports.entry import main
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.runs import store as store_module
from prefixbench.workloads.runs.store import DamagedRun, ResultStore, decode_run, read_verified

#: Two runs (legacy, patched) of a short workload.
SWEEP = ["sweep", "--windows", "32k", "--presets", "legacy,patched", "--steps", "20", "--jobs", "1"]
#: Bit positions tried in the store-level experiment (a seeded sample of the file's bits).
SAMPLE = 400


def tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def flip(data: bytes, bit: int) -> bytes:
    damaged = bytearray(data)
    damaged[bit // 8] ^= 1 << (bit % 8)
    return bytes(damaged)


def sample_bits(size: int) -> list[int]:
    return sorted(random.Random(23).sample(range(size * 8), SAMPLE))


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A finished sweep of two runs, never modified (copy it to damage it)."""
    out = tmp_path_factory.mktemp("good")
    assert main([*SWEEP, "--quiet", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def flips(good):
    """``(caught, harmless)`` bit positions of the sample in the first stored file."""
    path = sorted((good / "store").glob("*.parquet"))[0]
    data = path.read_bytes()
    record, frame = read_verified(data, path.stem)
    caught, harmless = [], []
    for bit in sample_bits(len(data)):
        try:
            got_record, got_frame = read_verified(flip(data, bit), path.stem)
        except DamagedRun as exc:
            assert "\n" not in str(exc)
            caught.append(bit)
            continue
        # Not caught: then nothing a reader gets back changed.
        assert got_record == record, bit
        assert got_frame.to_csv(index=False) == frame.to_csv(index=False), bit
        assert list(got_frame.dtypes) == list(frame.dtypes), bit
        harmless.append(bit)
    return path.name, caught, harmless


def test_every_sampled_bit_flip_is_caught_or_changes_nothing(flips):
    _, caught, harmless = flips
    # Any exception but DamagedRun would have failed the fixture; most flips are caught.
    assert len(caught) + len(harmless) == SAMPLE
    assert len(caught) > SAMPLE // 2, (len(caught), len(harmless))


def damaged_sweep(good, work, name, data, capsys):
    """Copy the good sweep to ``work``, put ``data`` under store/``name``, re-run; return stderr."""
    shutil.copytree(good, work)
    (work / "store" / name).write_bytes(data)
    capsys.readouterr()
    assert main([*SWEEP, "--out", str(work)]) == 0  # never a traceback: main would raise
    return capsys.readouterr().err


def test_a_sweep_recomputes_damaged_runs_and_writes_the_undamaged_bytes(good, flips, tmp_path, capsys):
    name, caught, harmless = flips
    data = (good / "store" / name).read_bytes()
    expected = tree(good)
    # Every kind of damage a flip caused in the store-level sample, through the command line:
    # the first and last of the caught flips and a spread between them, and two harmless ones.
    picked = sorted({*caught[:: max(1, len(caught) // 6)], caught[-1]})
    for number, bit in enumerate(picked):
        err = damaged_sweep(good, tmp_path / f"c{number}", name, flip(data, bit), capsys)
        warnings = [line for line in err.splitlines() if "warning" in line]
        assert len(warnings) == 1 and f"store/{name}: " in warnings[0] and "recomputing the run" in warnings[0], (bit, err)
        assert "Traceback" not in err and "1 of 2 runs already in" in err
        assert tree(tmp_path / f"c{number}") == expected, bit  # the store file too: recomputed whole
    for number, bit in enumerate(harmless[:2]):
        work = tmp_path / f"h{number}"
        err = damaged_sweep(good, work, name, flip(data, bit), capsys)
        assert "warning" not in err and "2 of 2 runs already in" in err
        assert {k: v for k, v in tree(work).items() if k != f"store/{name}"} == {
            k: v for k, v in expected.items() if k != f"store/{name}"
        }


def test_another_runs_file_under_a_runs_key_is_recomputed(good, tmp_path, capsys):
    first, second = sorted((good / "store").glob("*.parquet"))
    # On main this went unnoticed: the tables held one run twice and missed the other.
    err = damaged_sweep(good, tmp_path / "w", second.name, first.read_bytes(), capsys)
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and f"store/{second.name}: holds another run (key {first.stem})" in warnings[0]
    assert tree(tmp_path / "w") == tree(good)


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda data: b"", "cannot be read"),
        (lambda data: data[: len(data) // 2], "cannot be read"),
        (lambda data: data + b"\0", "cannot be read"),
    ],
    ids=["empty", "truncated", "trailing-byte"],
)
def test_an_unreadable_store_file_is_named_and_recomputed(good, tmp_path, capsys, damage, reason):
    path = sorted((good / "store").glob("*.parquet"))[0]
    err = damaged_sweep(good, tmp_path / "w", path.name, damage(path.read_bytes()), capsys)
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and f"store/{path.name}: {reason}" in warnings[0], err
    assert tree(tmp_path / "w") == tree(good)


def without_checksum(data: bytes) -> bytes:
    """A store file as prefixbench wrote it before files carried a checksum and a key."""
    table = pq.read_table(pa.BufferReader(data))
    meta = {k: v for k, v in table.schema.metadata.items() if not k.startswith(b"prefixbench.") or k in (
        b"prefixbench.run", b"prefixbench.json_columns")}
    sink = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(meta), sink)
    return sink.getvalue().to_pybytes()


def test_a_store_file_without_a_checksum_is_recomputed_not_trusted(good, tmp_path, capsys):
    path = sorted((good / "store").glob("*.parquet"))[0]
    old = without_checksum(path.read_bytes())
    assert pq.read_table(pa.BufferReader(old)).num_rows > 0  # a valid Parquet file...
    err = damaged_sweep(good, tmp_path / "w", path.name, old, capsys)  # ...but not verifiable
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "has no checksum (written by an older prefixbench" in warnings[0]
    assert tree(tmp_path / "w") == tree(good)


def test_an_older_stores_leftovers_are_counted_in_one_note(good, tmp_path, capsys):
    """After an upgrade every key changes (the code digest is in it): the runs are recomputed,
    and the files written before checksums are named as such, then removed."""
    work = tmp_path / "w"
    shutil.copytree(good, work)
    manifest = (work / ".prefixbench-manifest.json").read_text()
    for path, older_key in zip(sorted((work / "store").glob("*.parquet")), ("0" * 24, "f" * 24)):
        (work / "store" / f"{older_key}.parquet").write_bytes(without_checksum(path.read_bytes()))
        path.unlink()
        manifest = manifest.replace(path.name, f"{older_key}.parquet")
    (work / ".prefixbench-manifest.json").write_text(manifest)
    capsys.readouterr()
    assert main([*SWEEP, "--out", str(work)]) == 0
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if "older prefixbench" in line]
    assert len(notes) == 1 and "holds 2 runs written by an older prefixbench (no checksum)" in notes[0], err
    assert tree(work) == tree(good)


def test_reading_a_damaged_run_where_it_cannot_be_recomputed_is_one_line_naming_it(good, tmp_path):
    path = sorted((good / "store").glob("*.parquet"))[0]
    damaged = tmp_path / path.name
    damaged.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(UserError) as info:
        decode_run(damaged)
    assert str(damaged) in str(info.value) and "\n" not in str(info.value)
    other = tmp_path / ("1" * 24 + ".parquet")
    other.write_bytes(path.read_bytes())
    with pytest.raises(UserError, match="holds another run"):
        decode_run(other)


def test_a_run_that_cannot_be_stored_is_one_line_naming_the_file(tmp_path, monkeypatch):
    def full(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_module, "write_atomic", full)
    store = ResultStore(tmp_path)
    with pytest.raises(UserError) as info:
        store.put("a" * 24, b"data")
    assert str(store.path("a" * 24)) in str(info.value) and "No space left on device" in str(info.value)


def test_verifying_in_worker_processes_gives_the_same_verdicts(good, tmp_path, monkeypatch):
    work = tmp_path / "w"
    shutil.copytree(good, work)
    first, second = sorted((work / "store").glob("*.parquet"))
    second.write_bytes(first.read_bytes())
    keys = [first.stem, second.stem, "2" * 24]
    inline = ResultStore(work)
    assert inline.verify_all(keys) == [True, False, False]
    monkeypatch.setattr(store_module, "pool_size", lambda jobs, tasks, per: 2)
    pooled = ResultStore(work)
    assert pooled.verify_all(keys, jobs=2) == [True, False, False]
    assert pooled.damaged == inline.damaged and len(inline.damaged) == 1
    assert pooled.verified(first.stem)[0] == inline.verified(first.stem)[0]
