"""Runs and observations as flat records and pandas frames: the one shape every report reads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from prefixbench.workloads.base import Run
from prefixbench.workloads.windows import format_window  # noqa: F401 - re-exported for the reports

#: Columns that identify a run inside a sweep.
RUN_KEYS = ("workload", "window", "engine", "preset", "profile", "cache", "seed")

RUN_COLUMNS = (
    *RUN_KEYS,
    "params",
    "num_requests",
    "num_folds",
    "num_summaries",
    "num_rejected",
    "summary_prompt_tokens",
    "summary_cached_tokens",
    "summary_uncached_tokens",
    "summary_hit_ratio",
    "session_prompt_tokens",
    "session_cached_tokens",
    "session_uncached_tokens",
    "session_written_tokens",
    "session_output_tokens",
)

OBSERVATION_COLUMNS = (
    *RUN_KEYS,
    "index",
    "purpose",
    "tick",
    "reasoning_effort",
    "temperature",
    "stop",
    "max_tokens",
    "prompt_tokens",
    "cached_tokens",
    "uncached_tokens",
    "written_tokens",
    "written_long_tokens",
    "output_tokens",
    "hit_ratio",
    "extends_previous",
    "rewrites",
    "divergence",
    "divergence_message",
    "divergence_block",
    "divergence_byte",
    "status",
    "error",
)


def run_record(run: Run) -> dict[str, object]:
    """One run as a flat record (lists for the per-summary-call figures)."""
    summaries = run.summaries
    accepted = [o for o in run.observations if not o.is_rejected]
    return {
        "workload": run.workload,
        "window": run.window,
        "engine": run.engine,
        "preset": run.preset,
        "profile": run.profile,
        "cache": run.cache,
        "seed": run.seed,
        "params": ";".join(f"{k}={v}" for k, v in sorted(run.params.items())),
        "num_requests": len(run.observations),
        "num_folds": run.num_folds,
        "num_summaries": len(summaries),
        "num_rejected": run.num_rejected,
        "summary_prompt_tokens": [o.prompt_tokens for o in summaries],
        "summary_cached_tokens": [o.cached_tokens for o in summaries],
        "summary_uncached_tokens": [o.uncached_tokens for o in summaries],
        "summary_hit_ratio": [round(o.hit_ratio, 6) for o in summaries],
        "session_prompt_tokens": sum(o.prompt_tokens for o in accepted),
        "session_cached_tokens": sum(o.cached_tokens for o in accepted),
        "session_uncached_tokens": sum(o.uncached_tokens for o in accepted),
        "session_written_tokens": sum(o.written_tokens for o in accepted),
        "session_output_tokens": sum(o.output_tokens for o in run.observations),
    }


def observation_records(run: Run) -> list[dict[str, object]]:
    """One record per request of a run."""
    keys = {k: getattr(run, k) for k in RUN_KEYS}
    records = []
    for o in run.observations:
        d = o.divergence
        records.append(
            {
                **keys,
                "index": o.index,
                "purpose": o.purpose,
                "tick": o.tick,
                "reasoning_effort": o.envelope.reasoning_effort or "",
                "temperature": "" if o.envelope.temperature is None else o.envelope.temperature,
                "stop": "" if o.envelope.stop is None else "|".join(o.envelope.stop),
                "max_tokens": "" if o.max_tokens is None else o.max_tokens,
                "prompt_tokens": o.prompt_tokens,
                "cached_tokens": o.cached_tokens,
                "uncached_tokens": o.uncached_tokens,
                "written_tokens": o.written_tokens,
                "written_long_tokens": o.written_long_tokens,
                "output_tokens": o.output_tokens,
                "hit_ratio": round(o.hit_ratio, 6),
                "extends_previous": o.extends_previous_conversation,
                "rewrites": "|".join(o.rewrites_since_previous),
                "divergence": "" if d is None else d.describe(),
                "divergence_message": "" if d is None or d.message_idx is None else d.message_idx,
                "divergence_block": "" if d is None or d.block_idx is None else d.block_idx,
                "divergence_byte": "" if d is None else d.byte_offset,
                "status": o.status,
                "error": o.error or "",
            }
        )
    return records


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
    group = [k for k in RUN_KEYS if k != "preset"]
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
