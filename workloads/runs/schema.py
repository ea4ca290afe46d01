"""The run record: one flat row a run (runs.csv, the store's metadata, ``sweep --format json``)
and one a request (observations.csv, the store's rows). Every writer and reader of a sweep's
results takes its column names from here."""

from __future__ import annotations

from prefixbench.workloads.scripted.base import Run

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
