"""The result store: one Parquet file a run, named by the run's key, in ``<out>/store/``.

A run's file holds its observations (one row a request, the columns of observations.csv) and,
in the file's metadata, its run record (the row of runs.csv). One file carries both, and it is
written to a temporary name and renamed into place, so a run is in the store whole or not at
all: a ``kill -9`` loses at most the runs in flight. Together the files are a Parquet dataset
(``pyarrow.dataset.dataset(out / "store")`` reads every request of the sweep).

Columns whose values mix types (``""`` beside numbers, e.g. ``temperature``) are stored as JSON
text and decoded on load, so a run comes back exactly as it was recorded: the CSV files,
report and charts rebuilt from the store are byte-identical to ones written from the runs
themselves.

Each file also carries, in its metadata, the key of the run it belongs to, the run's full spec
(what the key hashes) and a checksum of its content (:func:`content_checksum`). A sweep reads a
stored run whole and checks both before it reuses it, so a damaged file, a file of another run
copied under this run's name, or a file without a checksum (written by an older prefixbench)
is recomputed, with one line naming the file, never read into the outputs.

The checksum covers the *logical* content, what a reader gets back (every metadata entry, each
column's name, type and values), not the file's bytes. The file cannot hold a digest of its own
bytes, and Parquet is pyarrow's format, not ours: hashing what is decoded checks exactly what
the outputs are built from, whatever damage (a flipped bit in a compressed page, a dictionary,
the footer) led to it, and damage that changes nothing decoded (say, in a column's
statistics) changes no output either.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.runs.execute import map_runs, pool_size
from prefixbench.workloads.runs.schema import OBSERVATION_COLUMNS, RUN_COLUMNS, observation_records, run_record
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.runs.sweep import PlannedRun, execute_planned, run_spec

STORE_DIR = "store"
#: Prefix of every temporary file prefixbench writes before renaming it into place.
TEMP_PREFIX = ".tmp-"
_RUN_META = b"prefixbench.run"
_JSON_COLUMNS = b"prefixbench.json_columns"
#: The key of the run a file belongs to.
_KEY_META = b"prefixbench.key"
#: The run's full spec, as hashed into its key (JSON; tells which code changed since).
_SPEC_META = b"prefixbench.spec"
#: ``sha256:<hex>`` of the file's logical content (:func:`content_checksum`).
_CHECKSUM_META = b"prefixbench.checksum"
#: What a stored run decodes to: its run record and its observations.
Decoded = tuple[dict[str, object], pd.DataFrame]


class DamagedRun(Exception):
    """A stored file that cannot be trusted; the message says why (``its content does not
    match its checksum``), to follow the file's name."""


def encode_run(run: Run, key: str = "", spec: dict[str, object] | None = None) -> bytes:
    """One run as the bytes of its Parquet file (deterministic for the same run)."""
    return encode_rows(run, key, spec)[0]


def encode_rows(
    run: Run, key: str = "", spec: dict[str, object] | None = None
) -> tuple[bytes, dict[str, object], pd.DataFrame]:
    """``(Parquet bytes, run record, observations frame)``: the file and what decoding it gives.

    ``key`` and ``spec`` are the run's store key and full spec (:func:`~prefixbench.workloads.runs.sweep.run_spec`),
    written beside the checksum so that a file under another run's name is told apart.
    """
    record = run_record(run)
    frame = pd.DataFrame(observation_records(run), columns=list(OBSERVATION_COLUMNS))
    observations = frame.copy()
    json_columns = [c for c in observations.columns if observations[c].dtype == object]
    for column in json_columns:
        observations[column] = [json.dumps(v) for v in observations[column]]
    table = pa.Table.from_pandas(observations, preserve_index=False)
    meta = {
        **(table.schema.metadata or {}),
        _RUN_META: json.dumps(record).encode(),
        _JSON_COLUMNS: json.dumps(json_columns).encode(),
        _KEY_META: key.encode(),
        _SPEC_META: json.dumps(spec or {}, sort_keys=True, separators=(",", ":")).encode(),
    }
    table = table.replace_schema_metadata(meta)
    table = table.replace_schema_metadata({**meta, _CHECKSUM_META: content_checksum(table)})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue(), {c: record[c] for c in RUN_COLUMNS}, frame


def content_checksum(table: pa.Table) -> bytes:
    """``sha256:<hex>`` of a stored table's logical content: every schema metadata entry but the
    checksum itself (the run record, the key, the spec, pandas' own), then each column's name,
    type and values (as JSON of Python values, which does not depend on how pyarrow encoded or
    compressed them)."""
    digest = hashlib.sha256(b"prefixbench store 1\0")

    def part(data: bytes) -> None:
        digest.update(len(data).to_bytes(8, "big") + data)

    meta = table.schema.metadata or {}
    for name in sorted(meta):
        if name != _CHECKSUM_META:
            part(name)
            part(meta[name])
    for field, column in zip(table.schema, table.columns):
        part(field.name.encode())
        part(str(field.type).encode())
        part(json.dumps(column.to_pylist(), separators=(",", ":")).encode())
    return b"sha256:" + digest.hexdigest().encode()


def read_verified(data: bytes, key: str | None) -> Decoded:
    """Decode a stored run's bytes after checking its checksum and, unless ``key`` is None, that
    it belongs to the run ``key``.

    Raises:
        DamagedRun: the file cannot be read, has no checksum, does not match it, or holds
            another run.
    """
    try:
        table = pq.read_table(pa.BufferReader(data))
        meta = table.schema.metadata or {}
        stored = meta.get(_CHECKSUM_META)
        actual = None if stored is None else content_checksum(table)
    except Exception as exc:  # noqa: BLE001 - whatever pyarrow makes of damaged bytes
        raise DamagedRun(f"cannot be read ({_one_line(exc)})") from None
    if stored is None:
        raise DamagedRun("has no checksum (written by an older prefixbench, or not by prefixbench)")
    if stored != actual:
        raise DamagedRun("does not match its checksum (the file is damaged)")
    holder = meta.get(_KEY_META, b"").decode("utf-8", "replace")
    if key is not None and holder != key:
        raise DamagedRun(f"holds another run (key {holder or 'none'}), not this one")
    try:
        record = json.loads(meta[_RUN_META])
        observations = table.to_pandas()
        for column in json.loads(meta[_JSON_COLUMNS]):
            observations[column] = pd.Series([json.loads(v) for v in observations[column]], dtype=object)
        return {c: record[c] for c in RUN_COLUMNS}, observations[list(OBSERVATION_COLUMNS)]
    except Exception as exc:  # noqa: BLE001 - checksummed, but not a run prefixbench can read
        raise DamagedRun(f"is not a run this prefixbench can read ({_one_line(exc)})") from None


def _one_line(exc: BaseException) -> str:
    """``ArrowInvalid: first line of the message`` (pyarrow's messages span lines)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def decode_run(data: bytes | Path, key: str | None = None) -> Decoded:
    """``(run record, observations frame)`` of a stored run, checked against its checksum (and
    its key when given; by default the name of a ``<key>.parquet`` file).

    Raises:
        UserError: one line naming the file (or ``stored run``, for bytes) when it is damaged,
            unreadable or another run's.
    """
    if isinstance(data, bytes):
        where, raw = "stored run", data
    else:
        where = str(data)
        key = data.stem if key is None else key
        try:
            raw = data.read_bytes()
        except OSError as exc:
            raise UserError(f"{where}: cannot read the stored run ({exc.strerror})") from None
    try:
        return read_verified(raw, key)
    except DamagedRun as exc:
        raise UserError(f"{where}: {exc}; re-run the sweep to recompute it") from None


#: What a worker returns for one run: its key, its file's bytes, and the record and frame a
#: decode of those bytes gives (so the sweep process need not decode what it just received).
Computed = tuple[str, bytes, dict[str, object], pd.DataFrame]


def compute_run(item: PlannedRun) -> Computed:
    """Execute one planned run and encode it (with its key and spec)."""
    return (item.key, *encode_rows(execute_planned(item), item.key, run_spec(item)))


def compute_runs(items: list[PlannedRun]) -> list[Computed]:
    """Execute a batch of runs that share one workload instance, in order (what a worker
    process or a Dask worker does: the batch's filler text and renderings are made once)."""
    return [compute_run(item) for item in items]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    tmp = path.with_name(f"{TEMP_PREFIX}{os.getpid()}-{path.name}")
    with open(tmp, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


class ResultStore:
    """The runs of an output folder, by key.

    :meth:`verify` reads a stored run whole and checks it; what it read is kept for
    :meth:`verified` (the writers read each stored run once), and what it refused is listed in
    ``damaged`` for :func:`recompute_notes`.
    """

    def __init__(self, out_dir: Path) -> None:
        self.root = out_dir / STORE_DIR
        self._verified: dict[str, Decoded] = {}
        #: ``(path, why)`` of each stored file :meth:`verify` refused, in the order met.
        self.damaged: list[tuple[Path, str]] = []

    def path(self, key: str) -> Path:
        """Where the run ``key`` lives."""
        return self.root / f"{key}.parquet"

    def relpath(self, key: str) -> str:
        """Its path relative to the output folder (as the manifest names it)."""
        return f"{STORE_DIR}/{key}.parquet"

    def has(self, key: str) -> bool:
        """Whether the run is stored (a file is only ever there complete)."""
        return self.path(key).is_file()

    def put(self, key: str, data: bytes) -> None:
        """Store one run atomically (UserError naming the file when it cannot be written)."""
        self._verified.pop(key, None)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path(key), data)
        except OSError as exc:
            raise UserError(f"{self.path(key)}: cannot store the run ({exc.strerror or exc})") from None

    def verify(self, key: str) -> bool:
        """Whether the run ``key`` is stored whole: its file read, its checksum and key checked.
        A file that fails is noted in ``damaged`` and counts as not stored (to be recomputed)."""
        return self.verify_all([key])[0]

    def verify_all(self, keys: list[str], jobs: int = 1) -> list[bool]:
        """:meth:`verify` for each of ``keys``, in worker processes when there are enough to
        share (reading is most of the work of a sweep whose runs are all stored)."""
        todo = [i for i, key in enumerate(keys) if key not in self._verified]
        items = [(self.path(keys[i]), keys[i]) for i in todo]
        found = {}
        for index, outcome in map_runs(check_stored, items, jobs=pool_size(jobs, len(items), 50)):
            found[todo[index]] = outcome
        for i in sorted(found):
            outcome = found[i]
            if isinstance(outcome, str):
                self.damaged.append((self.path(keys[i]), outcome))
            elif outcome is not None:
                self._verified[keys[i]] = outcome
        return [key in self._verified for key in keys]

    def verified(self, key: str) -> Decoded | None:
        """What :meth:`verify` read for ``key`` (None when it did not, or refused the file)."""
        return self._verified.get(key)

    def load(self, key: str) -> Decoded:
        """A stored run's record and observations (UserError naming the file if it is damaged)."""
        return self.verified(key) or decode_run(self.path(key), key)


def check_stored(item: tuple[Path, str]) -> Decoded | str | None:
    """One stored file, read and checked for the run ``key``: what it decodes to, the reason it
    cannot be trusted, or None when there is no such file."""
    path, key = item
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    try:
        return read_verified(data, key)
    except DamagedRun as exc:
        return str(exc)


#: Damaged files named one by one before the rest are counted.
SHOWN_DAMAGED = 10


def recompute_notes(plan_runs: tuple[PlannedRun, ...], todo: list[int], store: ResultStore) -> tuple[list[str], list[str]]:
    """Why runs are recomputed that the store seemed to hold: ``(warnings, notes)``.

    Warnings name each stored file a sweep refused (damaged, another run's, without checksum).
    Notes say which code changed since the stored runs, found by the spec stored in each file
    that no planned run names (the runs of the previous sweep): ``engine my-engine changed since
    the stored runs: recomputing 4 runs``, and the same for prefixbench itself; files written
    before store files carried a spec are counted in one line.
    """
    warnings = [f"{path}: {why}: recomputing the run" for path, why in store.damaged[:SHOWN_DAMAGED]]
    if len(store.damaged) > SHOWN_DAMAGED:
        warnings.append(f"{len(store.damaged) - SHOWN_DAMAGED} more damaged files in {store.root}: recomputing their runs")
    notes: list[str] = []
    if not todo:
        return warnings, notes
    planned = {item.key for item in plan_runs}
    try:
        stale = sorted(p for p in store.root.glob("*.parquet") if p.stem not in planned)
    except OSError:
        stale = []
    earlier: dict[str, dict[str, object]] = {}
    older = 0
    for path in stale:
        try:
            meta = pq.read_schema(path).metadata or {}
            spec = json.loads(meta[_SPEC_META]) if _SPEC_META in meta else None
        except Exception:  # noqa: BLE001 - an unreadable leftover explains nothing
            continue
        if _CHECKSUM_META not in meta:
            older += 1
        elif isinstance(spec, dict):
            earlier.setdefault(_identity(spec), spec)
    engines: Counter[str] = Counter()
    versions: Counter[tuple[str, str]] = Counter()
    for index in todo:
        spec = run_spec(plan_runs[index])
        before = earlier.get(_identity(spec))
        if before is None:
            continue
        if before.get("engine_code") != spec["engine_code"]:
            engines[str(spec["engine"])] += 1
        if before.get("prefixbench") != spec["prefixbench"]:
            versions[(str(before.get("prefixbench")), str(spec["prefixbench"]))] += 1
    for engine, count in sorted(engines.items()):
        notes.append(f"engine {engine} changed since the stored runs: recomputing {_runs(count)}")
    for (old, new), count in sorted(versions.items()):
        notes.append(f"prefixbench changed since the stored runs ({old} -> {new}): recomputing {_runs(count)}")
    if older:
        notes.append(
            f"{store.root} holds {_runs(older)} written by an older prefixbench (no checksum): "
            "not reused; this sweep recomputes what it needs"
        )
    return warnings, notes


def _identity(spec: dict[str, object]) -> str:
    """A run's spec without the code that computed it: what stays when only the code changed."""
    return json.dumps({k: v for k, v in spec.items() if k not in ("prefixbench", "engine_code")}, sort_keys=True)


def _runs(count: int) -> str:
    return f"{count} run" + ("" if count == 1 else "s")
