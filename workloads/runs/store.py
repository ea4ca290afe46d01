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
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from prefixbench.workloads.runs.schema import OBSERVATION_COLUMNS, RUN_COLUMNS, observation_records, run_record
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.runs.sweep import PlannedRun, execute_planned

STORE_DIR = "store"
#: Prefix of every temporary file prefixbench writes before renaming it into place.
TEMP_PREFIX = ".tmp-"
_RUN_META = b"prefixbench.run"
_JSON_COLUMNS = b"prefixbench.json_columns"


def encode_run(run: Run) -> bytes:
    """One run as the bytes of its Parquet file (deterministic for the same run)."""
    return encode_rows(run)[0]


def encode_rows(run: Run) -> tuple[bytes, dict[str, object], pd.DataFrame]:
    """``(Parquet bytes, run record, observations frame)``: the file and what decoding it gives."""
    record = run_record(run)
    frame = pd.DataFrame(observation_records(run), columns=list(OBSERVATION_COLUMNS))
    observations = frame.copy()
    json_columns = [c for c in observations.columns if observations[c].dtype == object]
    for column in json_columns:
        observations[column] = [json.dumps(v) for v in observations[column]]
    table = pa.Table.from_pandas(observations, preserve_index=False)
    table = table.replace_schema_metadata(
        {
            **(table.schema.metadata or {}),
            _RUN_META: json.dumps(record).encode(),
            _JSON_COLUMNS: json.dumps(json_columns).encode(),
        }
    )
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue(), {c: record[c] for c in RUN_COLUMNS}, frame


def decode_run(data: bytes | Path) -> tuple[dict[str, object], pd.DataFrame]:
    """``(run record, observations frame)`` of a stored run."""
    source = pa.BufferReader(data) if isinstance(data, bytes) else str(data)
    table = pq.read_table(source)
    meta = table.schema.metadata or {}
    record = json.loads(meta[_RUN_META])
    observations = table.to_pandas()
    for column in json.loads(meta[_JSON_COLUMNS]):
        observations[column] = pd.Series([json.loads(v) for v in observations[column]], dtype=object)
    return {c: record[c] for c in RUN_COLUMNS}, observations[list(OBSERVATION_COLUMNS)]


#: What a worker returns for one run: its key, its file's bytes, and the record and frame a
#: decode of those bytes gives (so the sweep process need not decode what it just received).
Computed = tuple[str, bytes, dict[str, object], pd.DataFrame]


def compute_run(item: PlannedRun) -> Computed:
    """Execute one planned run and encode it."""
    return (item.key, *encode_rows(execute_planned(item)))


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
    """The runs of an output folder, by key."""

    def __init__(self, out_dir: Path) -> None:
        self.root = out_dir / STORE_DIR

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
        """Store one run atomically."""
        self.root.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path(key), data)

    def load(self, key: str) -> tuple[dict[str, object], pd.DataFrame]:
        """A stored run's record and observations."""
        return decode_run(self.path(key))
