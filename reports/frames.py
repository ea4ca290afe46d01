"""Runs and observations as flat records and pandas frames: the one shape every report reads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from prefixbench.workloads.runs.schema import OBSERVATION_COLUMNS, RUN_COLUMNS, RUN_KEYS, observation_records, run_record
from prefixbench.workloads.scripted.base import Run


def runs_frame(runs: Iterable[Run]) -> pd.DataFrame:
    """All runs, one row each."""
    return pd.DataFrame([run_record(r) for r in runs], columns=list(RUN_COLUMNS))


def observations_frame(runs: Iterable[Run]) -> pd.DataFrame:
    """All requests of all runs, one row each."""
    rows = [rec for r in runs for rec in observation_records(r)]
    return pd.DataFrame(rows, columns=list(OBSERVATION_COLUMNS))


def with_change_vs_legacy(runs: pd.DataFrame) -> pd.DataFrame:
    """Add ``uncached_change_vs_legacy``: session uncached tokens relative to the legacy run of the
    same workload, window, engine, profile and cache (NaN when there is no legacy run)."""
    # A run's legacy is the one that differs only in the preset: same workload options too.
    group = [k for k in (*RUN_KEYS, "params") if k != "preset" and k in runs.columns]
    keys = list(zip(*(runs[k].tolist() for k in group)))
    uncached = runs["session_uncached_tokens"].tolist()
    rejected = runs["num_rejected"].tolist()
    legacy: dict[tuple, int] = {}  # the row of each configuration's legacy run (the last, if several)
    for row, (key, preset) in enumerate(zip(keys, runs["preset"].tolist())):
        if preset == "legacy":
            legacy[key] = row
    bases = [legacy.get(key) for key in keys]
    out = runs.copy()
    out["uncached_change_vs_legacy"] = [
        (uncached[row] / uncached[base] - 1.0) if base is not None and uncached[base] else float("nan")
        for row, base in enumerate(bases)
    ]
    # Rejected requests never reach the cache and are left out of the totals: a legacy run
    # that was refused often looks cheaper than it was. The table marks such comparisons.
    out["legacy_rejected"] = [bool(base is not None and rejected[base] > 0) for base in bases]
    return out


def ordered(values: Sequence[str], order: Sequence[str]) -> list[str]:
    """``values`` in ``order`` first, then the rest in their own order."""
    rank = {v: i for i, v in enumerate(order)}
    return sorted(dict.fromkeys(values), key=lambda v: (rank.get(v, len(rank)), list(values).index(v)))
