"""The docs' tables that the code's own tables decide: the log formats (``FORMATS``) in
docs/formats.md, the provider rules (``PROVIDERS``) in docs/providers.md, and the small
benchmark docs/published.md sets beside the published numbers (:func:`published_table`, the
bench command that page shows), and the strategies side by side at 32k in docs/strategies.md
(:func:`strategies_table`).

Each table sits in its page between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``.
``python -m prefixbench.reports.docs_tables [DOCS_DIR]`` rewrites them from the code, and
``tests/test_docs.py`` fails when a page is out of date, so a format or a provider added to its
table cannot be missing from the guide.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from prefixbench.reports.textable import markdown_lines

_USAGE = {
    "additive": "additive: input excludes reads and writes",
    "subset": "subset: input includes the cached part",
    "by-endpoint": "as the serving provider reports it",
    "none": "none (predictions only)",
}


def formats_table() -> str:
    """One row per log format of ``FORMATS``, in the table's order."""
    from prefixbench.workloads.logs.formats import FORMATS
    from prefixbench.workloads.specs.trace import TRACE_FORMATS

    rows = []
    for fmt in FORMATS.values():
        readers = ["audit"]
        if fmt.replay is not None:
            readers.append("replay" if fmt.replay.name == fmt.name else f"replay as `{fmt.replay.name}`")
        if fmt.name in TRACE_FORMATS:
            readers.append("check --trace")
        aliases = ", ".join(f"`{alias}`" for alias in fmt.aliases) or "-"
        rows.append([f"`{fmt.name}`", aliases, "; ".join(readers), fmt.usage_words or _USAGE[fmt.usage], fmt.description])
    return "\n".join(markdown_lines(["format", "also named", "read by", "usage in the log", "holds"], rows,
                                    escape_pipes=True))


def providers_table() -> str:
    """One row per provider rule of ``PROVIDERS``: the facts the cache models and the audit read."""
    from prefixbench.simulator.providers import PROVIDERS

    rows = []
    for rules in PROVIDERS.values():
        dated = ", by date" if rules.min_tokens_before else ""
        minimum = f"{rules.min_tokens:,}" + (f" (per model{dated})" if rules.min_tokens_by_model else "")
        minimum += "" if rules.min_tokens == 0 else f", per {rules.min_applies_to}"
        if rules.request_ttl is not None:  # decided per request (OpenAI: by model, body and date)
            ttls = ", ".join(label for label, _ in rules.ttls_ms) + " (per request: the body's, else the model's default)"
        else:
            ttls = ", ".join(label + (" (default)" if label == rules.default_ttl else "") for label, _ in rules.ttls_ms)
        breakpoints = "-" if rules.max_breakpoints is None else f"{rules.max_breakpoints}"
        if rules.lookback_blocks is not None:
            breakpoints += f", {rules.lookback_blocks}-block lookback"
        writes = f"{rules.write_multiplier:g}x" if rules.bills_writes else "not billed apart"
        if rules.write_1h_multiplier is not None:
            writes += f" (1 h: {rules.write_1h_multiplier:g}x)"
        model = "-" if rules.body_model is None else f"`{rules.body_model}`"
        options = "<br>".join(f"`{o.key}={o.default_text}` [{o.source}], seen {o.seen}"
                              + (f"; `none`: {o.none_means}" if o.none_means else "") for o in rules.cache_options)
        rows.append([
            f"`{rules.name}`", rules.usage_convention,
            rules.step_text("`"),
            minimum or "0", ttls or "-",
            breakpoints, f"{rules.read_multiplier:g}x", writes,
            ", ".join(f"`{field}`" for field in rules.diagnostics_fields) or "-",
            model, options or "-", " ".join(f"<{url}>" for url in rules.sources) or "the module's doc",
        ])
    header = ["provider", "usage", "step (tokens)", "minimum", "TTLs", "breakpoints", "read", "write", "diagnostics",
              "`--cache` model", "its options: default [source], range seen", "sources"]
    return "\n".join(markdown_lines(header, rows, escape_pipes=True))


#: The bench docs/published.md shows, as its command line: one workload, window, cache model and
#: seed, at the listed read discount and at half of it. Its strategies are prefixbench's own:
#: the seed engines the workload mounts and the engines prefixbench installs as entry points.
PUBLISHED_ARGS = ("--workloads", "thinking-tools", "--caches", "anthropic-5m", "--windows", "128k", "--seeds", "0")
#: What each strategy stands for in the published benchmarks (by engine name; others: "-").
PUBLISHED_ANALOGUES = {
    "no-compaction": "no compaction",
    "sliding-window": "sliding window",
    "anthropic-context-editing": "tool-result clearing",
    "claude-code-autocompact": "summarization, replaying the cached prefix",
    "checkpoint": "summarization, replaying the cached prefix",
    "user-tail": "summarization as a new request (cold)",
    "ranges": "range compression (no summary call)",
    "openhands-observation-masking": "observation masking",
    "openhands-llm-summarizing": "LLM summarization",
    "swe-agent-last-n-observations": "observation masking (last N)",
}


@lru_cache(maxsize=1)
def published_table() -> str:
    """The bench of :data:`PUBLISHED_ARGS`, run here, as docs/published.md shows it: per
    strategy its session and summary hit, and its cost against no compaction (or, without that
    strategy, against the cheapest valid one) at each price variant. Computed once a process
    (the runs are deterministic)."""
    from importlib.metadata import entry_points

    from prefixbench.kernel.loading import ENTRY_POINT_GROUP
    from prefixbench.workloads.runs.bench import LISTED, BenchSpec, bench_rows, leaderboard, plan_bench, prices_of
    from prefixbench.workloads.runs.sweep import execute_planned
    from prefixbench.workloads.runs.schema import observation_records, run_record
    from prefixbench.workloads.scripted.registry import get_workload

    from decimal import Decimal

    args = dict(zip(PUBLISHED_ARGS[::2], PUBLISHED_ARGS[1::2]))
    workload = args["--workloads"]
    own = [ep.name for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.dist is not None and ep.dist.name == "prefixbench"]
    spec = BenchSpec(
        workloads=(workload,), strategies=(*get_workload(workload).engines, *sorted(own)), caches=(args["--caches"],),
        windows=(int(args["--windows"].removesuffix("k")) * 1000,), seeds=(int(args["--seeds"]),),
    )
    plan = plan_bench(spec)
    prices = prices_of(spec)
    rows: list[dict[str, object]] = []
    for item in plan.runs:
        run = execute_planned(item)
        rows += bench_rows(run_record(run), observation_records(run), item.cache, prices[item.cache], spec.pricing)
    board = leaderboard(rows)
    names = list(dict.fromkeys(str(e["strategy"]) for e in board))
    # No compaction is the baseline only where it ran valid: a run whose prompts the provider
    # refused cost less than it would have, so comparing with it would flatter it.
    base = "no-compaction" if all(
        e["status"] == "ok" for e in board if e["strategy"] == "no-compaction") and "no-compaction" in names else None
    against = "no compaction" if base else "the cheapest valid strategy"
    by = {(str(e["strategy"]), str(e["pricing"])): e for e in board}

    def change(strategy: str, discount: str) -> str:
        e = by[(strategy, discount)]
        ref = by[(base, discount)]["cost_exact"] if base else min(
            v["cost_exact"] for (s, d), v in by.items() if d == discount and v["status"] == "ok")
        text = f"{(Decimal(e['cost_exact']) / Decimal(ref) - 1) * 100:+.0f}%"  # type: ignore[arg-type]
        # A run the provider refused requests of has no comparable cost (its refused requests
        # cost nothing): the cell says what happened instead of a flattering figure.
        return text if e["status"] == "ok" else f"- ({e['status']})"

    rows_out = []
    for strategy in sorted(names, key=lambda s: (by[(s, LISTED.label)]["rank"] is None, by[(s, LISTED.label)]["rank"] or 0, s)):  # type: ignore[arg-type, return-value]
        e = by[(strategy, LISTED.label)]
        summary = "-" if e["summary_hit"] is None else f"{float(e['summary_hit']) * 100:.1f}%"  # type: ignore[arg-type]
        rows_out.append([
            f"`{strategy}`", PUBLISHED_ANALOGUES.get(strategy, "-"), f"{float(e['hit_ratio']) * 100:.1f}%", summary,  # type: ignore[arg-type]
            *(change(strategy, v.label) for v in spec.pricing),
            f"{e['paid_back']}/{e['rewrites_total']}", f"{float(e['context_kept']) * 100:.0f}%",  # type: ignore[arg-type]
        ])
    header = ["strategy", "published analogue", "session hit", "summary hit",
              *(f"cost vs {against}, {v.label} prices" for v in spec.pricing), "rewrites paid back", "context kept"]
    return "\n".join(markdown_lines(header, rows_out, escape_pipes=True))


#: The engines docs/strategies.md sets side by side, at :data:`STRATEGIES_WINDOW` on these
#: workloads, as ``check --engine NAME`` runs them (the ``patched`` preset, lenient profile).
STRATEGIES_ENGINES = (
    "no-compaction", "sliding-window", "claude-code-autocompact", "anthropic-context-editing", "openai-server-compaction",
)
STRATEGIES_WORKLOADS = ("seed-coding", "thinking-tools")
STRATEGIES_WINDOW = 32_000


@lru_cache(maxsize=1)
def strategies_table() -> str:
    """docs/strategies.md's "At 32k, side by side": per engine and workload, the session hit and
    uncached tokens of the requests the provider accepted (a refused request is not an uncached
    one), the largest prompt sent, the requests that carried a rewrite, the refused (400)
    requests and the summary calls with their hit range."""
    from prefixbench.workloads.specs.engine import EngineCase, run_case

    rows = []
    for engine in STRATEGIES_ENGINES:
        cells: list[list[str]] = []
        for workload in STRATEGIES_WORKLOADS:
            run = run_case(engine, EngineCase(STRATEGIES_WINDOW, workload, "lenient"))
            sent = run.observations
            accepted = [o for o in sent if not o.is_rejected]
            prompt = sum(o.prompt_tokens for o in accepted)
            hits = [o.hit_ratio for o in run.summaries]
            low, high = (f"{min(hits) * 100:.1f}%", f"{max(hits) * 100:.1f}%") if hits else ("", "")
            cells.append([
                f"{sum(o.cached_tokens for o in accepted) / prompt * 100:.1f}%" if prompt else "-",
                f"{sum(o.uncached_tokens for o in accepted):,}",
                f"{max((o.prompt_tokens for o in sent), default=0):,}",
                f"{sum(1 for o in sent if o.rewrites_since_previous):,}",
                f"{run.num_rejected:,} of {len(sent):,}" if run.num_rejected else "0",
                "none" if not hits else f"{len(hits)} ({low if low == high else f'{low[:-1]}-{high}'})",
            ])
        rows.append([f"`{engine}`", *(" / ".join(parts) for parts in zip(*cells))])
    header = ["engine", "hit", "uncached tokens", "max prompt", "rewrites", "refused (400)", "summary calls (hit)"]
    return "\n".join(markdown_lines(header, rows, escape_pipes=True))


#: Page, marker name and the function that makes the table.
TABLES: tuple[tuple[str, str, Callable[[], str]], ...] = (
    ("formats.md", "formats", formats_table),
    ("providers.md", "providers", providers_table),
    ("published.md", "published", published_table),
    ("strategies.md", "strategies", strategies_table),
)


def replace_block(text: str, name: str, table: str) -> str:
    """``text`` with the block between ``name``'s markers replaced by ``table``."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin not in text or end not in text:
        raise ValueError(f"no {begin} ... {end} block")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{table}\n{end}{tail}"


def main(argv: list[str]) -> int:
    docs = Path(argv[0]) if argv else Path("docs")
    for page, name, make in TABLES:
        path = docs / page
        text = path.read_text(encoding="utf-8")
        new = replace_block(text, name, make())
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote the {name} table in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
