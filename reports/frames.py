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



def same_runs(records: Sequence[dict[str, object]], observations: Sequence[pd.DataFrame], engines: Sequence[str]) -> dict[int, int]:
    """Runs of a user's engine that came out identical to its legacy run: the row of each such
    run mapped to the row of that legacy run.

    ``records[i]``, ``observations[i]`` and ``engines[i]`` (the engine as the sweep names it:
    ``my_pkg:factory``) are one run, in plan order. Identical means the run's record and every
    one of its requests equal the legacy run's, the preset aside: compared after the runs
    finished, so the verdict is what happened, not a guess about whether the engine reads
    ``options.preset``. Built-in engines are left out: their presets are their fixes.
    """
    from prefixbench.workloads.scripted.registry import is_user_engine

    group = [k for k in (*RUN_KEYS, "params") if k != "preset"]

    def key(row: int) -> tuple[str, ...]:
        return (engines[row], *(str(records[row][k]) for k in group))

    prints: dict[int, tuple[str, str]] = {}

    def fingerprint(row: int) -> tuple[str, str]:
        if row not in prints:
            record = {k: v for k, v in records[row].items() if k != "preset"}
            obs = observations[row].drop(columns=["preset"], errors="ignore")
            prints[row] = (repr(sorted(record.items())), obs.to_csv(index=False, lineterminator="\n"))
        return prints[row]

    users = [row for row in range(len(records)) if is_user_engine(engines[row])]
    legacy = {key(row): row for row in users if records[row]["preset"] == "legacy"}
    same: dict[int, int] = {}
    for row in users:
        base = legacy.get(key(row))
        if base is not None and base != row and fingerprint(row) == fingerprint(base):
            same[row] = base
    return same


def same_runs_notes(records: Sequence[dict[str, object]], same: dict[int, int], engines: Sequence[str]) -> list[str]:
    """One line per user's engine with runs identical to its legacy run: when every one of its
    runs is, ``my_pkg:factory ran identically under legacy and patched: ...``."""
    from prefixbench.kernel.presets import PRESET_ORDER

    lines = []
    for engine in dict.fromkeys(engines[row] for row in same):
        rows = [row for row in range(len(records)) if engines[row] == engine]
        presets = ordered([str(records[row]["preset"]) for row in rows], PRESET_ORDER)
        named = " and ".join(presets) if len(presets) == 2 else ", ".join(presets)
        if all(row in same or records[row]["preset"] == "legacy" for row in rows):
            lines.append(
                f"note: {engine} ran identically under {named} (every request the same): on "
                "this workload it does not act on options.preset, so its rows repeat one run ('vs legacy' says 'same run')"
            )
        else:
            count = len([row for row in same if engines[row] == engine])
            lines.append(
                f"note: {count} run{'' if count == 1 else 's'} of {engine} came out identical to its legacy run "
                "(every request the same; 'vs legacy' says 'same run')"
            )
    return lines
