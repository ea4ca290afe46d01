"""Landing a sweep in its output folder: the runs the result store lacks are computed (in this
process, in workers or on Dask) and stored one by one as they finish; the stored runs are read
back in plan order for the writers.

    plan --missing_runs--> indices the store lacks --land_missing--> store/<key>.parquet
         --load_runs--> (run record, observations frame) per planned run, in plan order

The writers (CSV files, report.md, report.html, charts) live in ``prefixbench.reports``; they
read what :func:`load_runs` returns and never recompute a run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.runs.execute import map_runs, pool_size
from prefixbench.workloads.runs.store import STORE_DIR, TEMP_PREFIX, ResultStore, compute_runs, decode_run
from prefixbench.workloads.runs.sweep import PlannedRun, SweepPlan, longest_first

if TYPE_CHECKING:
    import pandas as pd

#: A landed run as the writers read it: its run record and its observations.
Landed = tuple[dict[str, object], "pd.DataFrame"]


class Progress(Protocol):
    """What :func:`land_missing` tells about the runs executing (the command line draws it)."""

    def __enter__(self) -> object: ...
    def __exit__(self, *exc: object) -> object: ...
    def set_running(self, runs: int) -> None: ...
    def finished(self, label: str) -> None: ...


def prepare_out(out: Path) -> None:
    """Create ``out`` and its store folder, or say in one line why it cannot take a sweep."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: is a file, not a folder")
    try:
        (out / STORE_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create the folder ({exc.strerror})") from None
    if not os.access(out, os.W_OK):
        raise UserError(f"--out {out}: folder is not writable")


def is_stored(store: ResultStore, key: str) -> bool:
    """A run is stored when its file is there, readable, matches its checksum and belongs to
    ``key`` (anything else is recomputed, and the store names the file)."""
    return store.verify(key)


def missing_runs(plan: SweepPlan, store: ResultStore, *, fresh: bool, jobs: int = 1) -> list[int]:
    """Indices of the planned runs to compute: all with ``fresh``, else those the store lacks
    (or holds damaged: :meth:`ResultStore.verify_all`, in ``jobs`` processes when worth it)."""
    if fresh:
        return list(range(len(plan.runs)))
    stored = store.verify_all([item.key for item in plan.runs], jobs)
    return [i for i, ok in enumerate(stored) if not ok]


def batches_of(items: list[PlannedRun], *, batched: bool) -> list[list[PlannedRun]]:
    """The runs to compute, grouped and ordered longest first.

    With workers, runs of one workload instance (a window and seed: its presets and engines) go
    to a worker together, so it makes their filler text and renderings once. In this process
    every run is its own batch (its caches are warm anyway) and lands the moment it finishes.
    """
    batches: dict[object, list[PlannedRun]] = {}
    for number, item in enumerate(items):
        key = (id(item.workload), item.profile, item.cache, item.tokenizer) if batched else number
        batches.setdefault(key, []).append(item)
    groups = list(batches.values())
    return [groups[i] for i in longest_first([sum(item.cost_estimate for item in group) for group in groups])]


def land_missing(
    plan: SweepPlan,
    todo: list[int],
    store: ResultStore,
    progress: Progress,
    *,
    jobs: int,
    scheduler: str | None,
    between_batches: Callable[[], None] = lambda: None,
) -> dict[str, Landed]:
    """Compute the runs ``todo`` names, longest first, storing each as it finishes.

    Returns the landed runs' records and frames (as the workers made them, equal to what their
    stored files decode to), so :func:`load_runs` reads only the runs that were already stored.
    ``between_batches`` runs after each finished batch (the command line re-raises a Ctrl-C
    that library code swallowed there).
    """
    landed: dict[str, Landed] = {}
    if not todo:
        return landed
    groups = batches_of([plan.runs[i] for i in todo], batched=jobs > 1 or scheduler is not None)
    results = map_runs(
        compute_runs, groups, jobs=jobs, scheduler=scheduler,
        # A worker runs its batch one run at a time: one run is executing per batch a worker
        # holds (never the whole batch, whose other runs wait their turn and land with it).
        on_submit=lambda indices: progress.set_running(len(indices)),
    )
    with progress:
        for index, batch in results:
            for item, (key, data, record, frame) in zip(groups[index], batch):
                if key != item.key:
                    # The worker hashed the same spec to another key: it runs other prefixbench code.
                    raise UserError(
                        f"a worker computed {item.describe()} with another prefixbench "
                        f"(run key {key}, expected {item.key}): install the same prefixbench on every worker"
                    )
                put(store, item.key, data)
                progress.finished(item.describe())
                landed[item.key] = (record, frame)  # what decoding ``data`` gives (tests/unit/reports/test_store.py)
            between_batches()
    return landed


def put(store: ResultStore, key: str, data: bytes) -> None:
    """Store one run; a write error (a full disk) is one line naming the file, and leaves no
    temporary file behind."""
    try:
        store.put(key, data)
    except OSError as exc:
        for leftover in store.root.glob(f"{TEMP_PREFIX}{os.getpid()}-*"):
            leftover.unlink(missing_ok=True)
        raise UserError(f"{store.path(key)}: cannot write ({exc.strerror or exc})") from None


def load_runs(plan: SweepPlan, store: ResultStore, landed: dict[str, Landed], jobs: int = 1) -> list[Landed]:
    """Every planned run's record and observations, in plan order: the landed ones as they are,
    the others read from the store (in worker processes when there are enough to share)."""
    loaded: list[Landed | None] = [landed.get(item.key) or store.verified(item.key) for item in plan.runs]
    missing = [i for i, result in enumerate(loaded) if result is None]
    paths = [store.path(plan.runs[i].key) for i in missing]
    for index, result in map_runs(decode_run, paths, jobs=pool_size(jobs, len(paths), 50)):
        loaded[missing[index]] = result
    return loaded  # type: ignore[return-value]
