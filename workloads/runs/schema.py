"""The run record: one flat row a run (runs.csv, the store's metadata, ``sweep --format json``)
and one a request (observations.csv, the store's rows). Every writer and reader of a sweep's
results (the store, runs.csv, the JSON output, report.html, ``compare``) takes its column names
from here, and ``compare`` the threshold that gates each figure (see
:mod:`prefixbench.workloads.fields`)."""

from __future__ import annotations

import re

from prefixbench.workloads.fields import Field, FieldType, names
from prefixbench.workloads.scripted.base import Run


def _key(name: str, type_: FieldType = "str") -> Field:
    return Field(name, type_, "key")


#: The columns that identify a run inside a sweep (the seed too: two seeds are two runs).
KEY_FIELDS = (
    _key("workload"), _key("window", "int"), _key("engine"), _key("preset"), _key("profile"), _key("cache"), _key("seed", "int"),
)

#: One run: a row of runs.csv, an object of ``sweep --format json`` (with ``params`` spread into
#: its keys there), the metadata of its file in the store.
RUN_FIELDS: tuple[Field, ...] = (
    *KEY_FIELDS,
    Field("params", "params"),
    Field("num_requests", "int"),
    Field("num_folds", "int", "figure"),
    Field("num_summaries", "int"),
    Field("num_summaries_rejected", "int"),
    Field("num_rejected", "int", "figure", gate="rejected"),
    Field("summary_prompt_tokens", "ints"),
    Field("summary_cached_tokens", "ints"),
    Field("summary_uncached_tokens", "ints", "figure", gate="uncached", reduce="sum"),
    Field("summary_hit_ratio", "ratios", "figure", gate="hit", worse="drop", reduce="min", compared_as="summary_hit_min"),
    Field("session_prompt_tokens", "int", "figure"),
    Field("session_cached_tokens", "int", "figure"),
    Field("session_uncached_tokens", "int", "figure", gate="uncached"),
    Field("session_written_tokens", "int", "figure", gate="written"),
    Field("session_output_tokens", "int"),
    Field("tool_result_chars", "int"),
    Field("tool_result_chars_kept", "int"),
    Field("engine_warnings", "str"),
    Field("longest_idle_ms", "int"),
)

#: The dollars of a priced run (``--price``): added to runs.csv and the JSON output.
COST_FIELDS: tuple[Field, ...] = (
    Field("uncached_input_usd", "usd"),
    Field("cache_read_usd", "usd"),
    Field("cache_write_usd", "usd"),
    Field("output_usd", "usd"),
    Field("storage_usd", "usd"),
    Field("total_usd", "usd", "figure", gate="usd"),
)

#: The order ``compare`` lists a run's figures in.
RUN_FIGURE_ORDER = (
    "summary_hit_ratio",
    "summary_uncached_tokens",
    "session_uncached_tokens",
    "session_prompt_tokens",
    "session_cached_tokens",
    "session_written_tokens",
    "num_folds",
    "num_rejected",
    "total_usd",
)

_BY_NAME = {f.name: f for f in (*RUN_FIELDS, *COST_FIELDS)}
#: A run's compared figures, in the order compare lists them.
RUN_FIGURES: tuple[Field, ...] = tuple(_BY_NAME[name] for name in RUN_FIGURE_ORDER)

#: One request of a run: a row of observations.csv and of the run's file in the store.
OBSERVATION_FIELDS: tuple[Field, ...] = (
    *KEY_FIELDS,
    Field("index", "int"),
    Field("purpose", "str"),
    Field("tick", "int"),
    Field("reasoning_effort", "str"),
    Field("temperature", "any"),
    Field("stop", "str"),
    Field("max_tokens", "any"),
    Field("prompt_tokens", "int"),
    Field("cached_tokens", "int"),
    Field("uncached_tokens", "int"),
    Field("written_tokens", "int"),
    Field("written_long_tokens", "int"),
    Field("cached_explicit_tokens", "int"),
    Field("stored_token_ms", "int"),
    Field("created_tokens", "int"),
    Field("output_tokens", "int"),
    Field("hit_ratio", "ratio"),
    Field("extends_previous", "bool"),
    Field("rewrites", "str"),
    Field("divergence", "str"),
    Field("divergence_message", "any"),
    Field("divergence_block", "any"),
    Field("divergence_byte", "any"),
    Field("status", "int"),
    Field("error", "str"),
)

RUN_KEYS = names(KEY_FIELDS)
RUN_COLUMNS = names(RUN_FIELDS)
COST_COLUMNS = names(COST_FIELDS)
OBSERVATION_COLUMNS = names(OBSERVATION_FIELDS)


def run_record(run: Run) -> dict[str, object]:
    """One run as a flat record (lists for the per-summary-call figures). A refused request is
    counted in ``num_rejected``, never in the token figures: the summary lists hold the summary
    calls the provider accepted, and ``num_summaries_rejected`` counts the refused ones apart."""
    summaries = [o for o in run.summaries if not o.is_rejected]
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
        "num_summaries": len(run.summaries),
        "num_summaries_rejected": len(run.summaries) - len(summaries),
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
        "tool_result_chars": run.tool_result_chars,
        "tool_result_chars_kept": run.tool_result_chars_kept,
        "engine_warnings": engine_warnings(run),
        "longest_idle_ms": run.longest_idle_ms,
    }


def warning_kind(text: str) -> str:
    """The kind of an engine warning: its text without the engine's name in front, cut at the
    first ``: ``, ``; `` or `` (`` (where the details start), each number as ``N`` but those in
    ``[...]``, where an engine names the settings the kind rests on:
    ``claude-code-autocompact: autocompact is thrashing [threshold 2,000 tokens, ...]: the
    context (...)`` is ``autocompact is thrashing [threshold 2,000 tokens, ...]``."""
    text = re.sub(r"^[a-z0-9][a-z0-9._-]*: ", "", text.strip())
    kind = re.split(r": |; | \(", text, maxsplit=1)[0]
    parts = re.split(r"(\[[^\]]*\])", kind)
    return "".join(part if index % 2 else re.sub(r"\d[\d,]*", "N", part) for index, part in enumerate(parts)).strip() or "warning"


def engine_warnings(run: Run) -> str:
    """The warnings the engine logged over the run (``compaction/warning`` events), counted by
    kind in the order each kind first came: ``34 autocompact is thrashing [threshold 2,808 tokens, ...]``, ``; ``-joined;
    empty when it logged none."""
    counts: dict[str, int] = {}
    for event in run.session.events:
        if event.kind == "compaction/warning":
            kind = warning_kind(str(event.info.get("text", "")))
            counts[kind] = counts.get(kind, 0) + 1
    return "; ".join(f"{count} {kind}" for kind, count in counts.items())


def parse_engine_warnings(value: object) -> list[tuple[str, int]]:
    """``(kind, count)`` pairs of a run record's ``engine_warnings`` (none for an empty or
    missing value, as a runs.csv cell or a record without the field gives)."""
    if not isinstance(value, str) or not value.strip():
        return []
    pairs = []
    for part in value.split("; "):
        count, _, kind = part.strip().partition(" ")
        if count.isdigit() and kind:
            pairs.append((kind, int(count)))
    return pairs


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
                "cached_explicit_tokens": o.cached_explicit_tokens,
                "stored_token_ms": o.stored_token_ms,
                "created_tokens": o.created_tokens,
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
