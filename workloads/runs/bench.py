"""The benchmark: compaction strategies x provider cache models x windows x workload seeds, as
one sweep plan (so it runs in workers or on Dask and resumes from the result store), and the
leaderboard figures computed from the stored runs at each provider's dated prices.

    BenchSpec --plan_bench--> SweepPlan (one SweepSpec per workload and cache model)
              --land (workloads/runs/land.py)--> store/<key>.parquet
              --bench_rows--> one row a run and read-discount --leaderboard--> one row a
                              (workload, cache model, window, discount, strategy), ranked

A strategy is an engine: the seed engines a workload mounts (under one preset) and every
engine installed under the entry-point group ``prefixbench.engines``. Prices are not a run
axis: the same stored requests are priced once per read discount (``read_discounts``), so the
published "halve the cached-read discount" comparison needs no second run.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from decimal import Decimal

import msgspec
from msgspec.structs import replace

from prefixbench.kernel.loading import installed_engines
from prefixbench.kernel.presets import get_preset
from prefixbench.simulator.errors import UserError, did_you_mean
from prefixbench.simulator.models import parse_cache_spec
from prefixbench.simulator.pricing import LongTier, PriceRow, Rates, cost_of, get_price, usd_sum
from prefixbench.workloads.runs.sweep import DEFAULT_WINDOWS, SweepPlan, SweepSpec, plan_sweeps
from prefixbench.workloads.scripted.registry import (
    WORKLOADS, all_engines, check_sections_run, get_workload, is_user_engine, split_engine_config,
)


class BenchCache(msgspec.Struct, frozen=True):
    """One provider cache model of the benchmark: its label, the ``--cache`` model that
    simulates it and the price model (a row of simulator/data/prices.csv) it is billed at."""

    label: str
    cache: str
    price: str
    note: str = ""


#: The cache models ``bench --caches`` offers (labels), in report order. The first four are the
#: default set. Each price model is a current model of that provider in the price table.
BENCH_CACHES: tuple[BenchCache, ...] = (
    BenchCache("anthropic-5m", "anthropic", "claude-sonnet-4-6", "breakpoint at the last block, 5 min TTL"),
    BenchCache("anthropic-1h", "anthropic:auto_when_unmarked=1h", "claude-sonnet-4-6", "the same, written at the 1 h TTL"),
    BenchCache("openai", "openai", "gpt-5.1", "exact prefix in 128-token steps, no write fee"),
    BenchCache("deepseek", "deepseek", "deepseek-v4-flash", "prefix units, no write fee"),
    BenchCache("gemini", "gemini", "gemini-2.5-flash", "implicit caching, writes bill as input"),
    BenchCache("xai", "xai", "grok-4-fast", "automatic prefix caching, no write fee"),
    BenchCache("kimi", "kimi", "kimi-k2-0905-preview", "automatic prefix caching"),
)
DEFAULT_CACHES = ("anthropic-5m", "anthropic-1h", "openai", "deepseek")
DEFAULT_WORKLOADS = ("seed-coding", "thinking-tools")
DEFAULT_SEEDS = (0, 1, 2, 3, 4)


class PriceVariant(msgspec.Struct, frozen=True):
    """How a run is priced besides the listed prices: ``discount`` keeps ``factor`` of the
    cached-read discount (read = input - (input - read) x factor: 0.5 halves the discount, reads
    cost more), ``read`` scales the read price itself (0.5 halves what a read costs)."""

    kind: str
    factor: Decimal

    @property
    def label(self) -> str:
        """``listed``, ``50% of read discount`` (reads dearer) or ``read price x0.5`` (reads cheaper)."""
        if self.factor == 1:
            return "listed"
        return f"{float(self.factor) * 100:g}% of read discount" if self.kind == "discount" else f"read price x{self.factor:g}"

    def apply(self, price: PriceRow) -> PriceRow:
        """``price`` under this variant."""
        return discounted(price, self.factor) if self.kind == "discount" else read_scaled(price, self.factor)


LISTED = PriceVariant("discount", Decimal(1))
#: The listed prices, half the cached-read discount, and half the read price: the two readings
#: of the published "halving the cached-read discount".
DEFAULT_PRICING = (LISTED, PriceVariant("discount", Decimal("0.5")), PriceVariant("read", Decimal("0.5")))
#: The preset the seed engines run under (their fixes on).
DEFAULT_PRESET = "patched"


def bench_cache(label: str) -> BenchCache:
    """The cache model of a label (UserError naming the known ones)."""
    for entry in BENCH_CACHES:
        if entry.label == label:
            return entry
    raise UserError(f"--caches: unknown cache model {label!r} (known: {', '.join(c.label for c in BENCH_CACHES)}, or all)")


class BenchSpec(msgspec.Struct, frozen=True):
    """What ``prefixbench bench`` runs and how it prices it."""

    workloads: tuple[str, ...] = DEFAULT_WORKLOADS
    #: Engines by name (seed engines, installed names, package.module:factory); empty = every
    #: seed engine each workload mounts and every installed engine.
    strategies: tuple[str, ...] = ()
    caches: tuple[str, ...] = DEFAULT_CACHES
    windows: tuple[int, ...] = DEFAULT_WINDOWS
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    preset: str = DEFAULT_PRESET
    profile: str = "lenient"
    #: The prices every run is priced at (the first: the listed ones).
    pricing: tuple[PriceVariant, ...] = DEFAULT_PRICING
    price_as_of: str | None = None
    #: Workload options, given to every workload that takes them.
    options: dict[str, object] = msgspec.field(default_factory=dict)
    #: ``--engine-config``: its tables by engine, as read (each workload gets those of the
    #: engines it runs), and the file, to name in errors.
    engine_config: dict[str, dict[str, object]] = msgspec.field(default_factory=dict)
    engine_config_file: str = "--engine-config"


def strategies_of(spec: BenchSpec, workload: str) -> tuple[str, ...]:
    """The engines ``workload`` runs: those named (seed engines only where the workload mounts
    them), or its seed engines and every installed engine."""
    mounted = get_workload(workload).engines
    if not spec.strategies:
        return (*mounted, *installed_engines())
    return tuple(s for s in spec.strategies if s in mounted or is_user_engine(s))


def plan_bench(spec: BenchSpec) -> SweepPlan:
    """Every run of the benchmark, validated before anything runs.

    Raises:
        UserError: an unknown workload, cache model, strategy, preset or option.
    """
    for name in spec.workloads:
        get_workload(name)
    caches = [bench_cache(label) for label in spec.caches]
    if not caches:
        raise UserError("--caches: give at least one cache model")
    get_preset(spec.preset)
    for strategy in spec.strategies:
        if strategy not in all_engines() and not is_user_engine(strategy):
            known = ", ".join((*all_engines(), *installed_engines()))
            hint = did_you_mean(strategy, (*all_engines(), *installed_engines()))
            raise UserError(f"--strategies: unknown strategy {strategy!r}{': ' + hint if hint else ''} "
                            f"(known: {known}; or package.module:factory)")
        if not is_user_engine(strategy) and not any(strategy in get_workload(w).engines for w in spec.workloads):
            raise UserError(f"--strategies: no workload of this bench mounts {strategy!r}")
    for variant in spec.pricing:
        if variant.kind == "discount" and not Decimal(0) <= variant.factor <= Decimal(1):
            raise UserError(f"--read-discount: a fraction of the listed discount from 0 to 1, got {variant.factor}")
        if variant.kind == "read" and not Decimal(0) <= variant.factor <= Decimal(10):
            raise UserError(f"--read-price: a factor of the listed read price from 0 to 10, got {variant.factor}")
    for entry in caches:
        get_price(entry.price, as_of=spec.price_as_of)
    for name in spec.options:
        if not any(name in {option.name for option in WORKLOADS[w].options} for w in spec.workloads):
            takes = "; ".join(f"{w}: {', '.join(o.flag for o in WORKLOADS[w].options)}" for w in spec.workloads)
            raise UserError(f"--{name.replace('_', '-')} applies to no workload of this bench ({takes})")
    where = spec.engine_config_file
    # A table for an engine no workload of the bench runs would be silently ignored: refused.
    check_sections_run(spec.engine_config, tuple(dict.fromkeys(e for w in spec.workloads for e in strategies_of(spec, w))),
                       where, command="bench", option="--strategies")
    specs = []
    for workload in spec.workloads:
        known = {option.name for option in WORKLOADS[workload].options}
        options = {k: v for k, v in spec.options.items() if k in known}
        engines = strategies_of(spec, workload)
        tables, engine_configs = split_engine_config(workload, {k: v for k, v in spec.engine_config.items() if k in engines}, where)
        options.update(tables)
        for entry in caches:
            specs.append(
                SweepSpec(
                    workload=workload, windows=spec.windows, presets=(spec.preset,), engines=engines,
                    profile=spec.profile, cache=entry.cache, options=options, seeds=spec.seeds, engine_configs=engine_configs,
                )
            )
    return plan_sweeps(specs)


def discounted(price: PriceRow, fraction: Decimal) -> PriceRow:
    """``price`` with ``fraction`` of its cached-read discount: read = input - (input - read) x fraction."""
    if fraction == 1:
        return price

    def rates(r: Rates) -> Rates:
        return replace(r, cache_read=r.input - (r.input - r.cache_read) * fraction)

    tier = price.long_tier
    return replace(price, rates=rates(price.rates), long_tier=None if tier is None else LongTier(tier.threshold, rates(tier.rates)))


def read_scaled(price: PriceRow, factor: Decimal) -> PriceRow:
    """``price`` with its cache-read price times ``factor``."""

    def rates(r: Rates) -> Rates:
        return replace(r, cache_read=r.cache_read * factor)

    tier = price.long_tier
    return replace(price, rates=rates(price.rates), long_tier=None if tier is None else LongTier(tier.threshold, rates(tier.rates)))


def prices_of(spec: BenchSpec) -> dict[str, PriceRow]:
    """The price row of each cache model of the bench, by its ``--cache`` spec."""
    return {entry.cache: get_price(entry.price, as_of=spec.price_as_of) for entry in map(bench_cache, spec.caches)}


def label_of(cache: str) -> str:
    """The bench label of a ``--cache`` spec."""
    for entry in BENCH_CACHES:
        if entry.cache == cache or parse_cache_spec(entry.cache) == parse_cache_spec(cache):
            return entry.label
    return cache


# --- one run ---------------------------------------------------------------------------------


class Rewrite(msgspec.Struct, frozen=True):
    """A conversation request that did not extend the previous one: what it re-paid (I), what
    it shed from the prompt (H) and the requests that read the shorter prefix after it (R)."""

    index: int
    invalidated: int
    shed: int
    reads_after: int

    def pays_back(self, miss: Decimal, read: Decimal) -> bool:
        """``R > (I/H) (P_miss - P_read) / P_read``: the reads it made cheaper outweigh its extra write."""
        if self.shed <= 0 or read <= 0:
            return False
        return Decimal(self.reads_after) * self.shed * read > Decimal(self.invalidated) * (miss - read)


def rewrites_of(rows: Sequence[dict[str, object]]) -> list[Rewrite]:
    """The prefix rewrites of a run's accepted conversation requests, in order."""
    conv = [r for r in rows if r["purpose"] == "conversation" and int(r["status"]) == 200]
    breaks = [i for i in range(1, len(conv)) if not conv[i]["extends_previous"]]
    out = []
    for n, i in enumerate(breaks):
        end = breaks[n + 1] if n + 1 < len(breaks) else len(conv)
        shed = int(conv[i - 1]["prompt_tokens"]) - int(conv[i]["prompt_tokens"])
        out.append(Rewrite(int(conv[i]["index"]), int(conv[i]["uncached_tokens"]), shed, end - i - 1))
    return out


def bench_rows(record: dict[str, object], rows: Sequence[dict[str, object]], cache: str, price: PriceRow,
               pricing: Sequence[PriceVariant]) -> list[dict[str, object]]:
    """One row a price variant: the leaderboard figures of one stored run (``cache``: the
    ``--cache`` spec it ran with, which the record names only by model)."""
    accepted = [r for r in rows if int(r["status"]) == 200]
    prompt = sum(int(r["prompt_tokens"]) for r in accepted)
    cached = sum(int(r["cached_tokens"]) for r in accepted)
    uncached = sum(int(r["uncached_tokens"]) for r in accepted)
    largest = max((int(r["prompt_tokens"]) for r in accepted), default=0)
    summaries = [r for r in accepted if r["purpose"] == "compaction"]
    summary_prompt = sum(int(r["prompt_tokens"]) for r in summaries)
    window = int(record["window"])  # type: ignore[arg-type]
    largest_sent = max((int(r["prompt_tokens"]) for r in rows), default=0)
    tools = int(record["tool_result_chars"])  # type: ignore[arg-type]
    rewrites = rewrites_of(rows)
    base = {
        "workload": record["workload"], "cache": label_of(cache), "window": window,
        "strategy": record["engine"], "seed": record["seed"],
        "requests": len(rows), "rejected": int(record["num_rejected"]),  # type: ignore[arg-type]
        "over_window": sum(1 for r in rows if int(r["prompt_tokens"]) > window), "largest_prompt": largest_sent,
        "hit_ratio": cached / prompt if prompt else 0.0, "uncached_tokens": uncached,
        "summary_calls": len(summaries),
        "summary_hit": sum(int(r["cached_tokens"]) for r in summaries) / summary_prompt if summary_prompt else None,
        "rewrites": len(rewrites), "rewrite_factor": uncached / largest if largest else 0.0,
        "context_kept": int(record["tool_result_chars_kept"]) / tools if tools else None,  # type: ignore[arg-type]
        # (None for a run stored by a prefixbench before runs recorded it)
        "longest_idle_ms": record.get("longest_idle_ms"),
    }
    out = []
    for variant in pricing:
        priced = variant.apply(price)
        rates = priced.rates
        miss = rates.cache_write if rates.cache_write is not None else rates.input
        paid = sum(1 for rw in rewrites if rw.pays_back(miss, rates.cache_read))
        cost = usd_sum(cost_of(_Usage(r), priced).total for r in rows)
        out.append({**base, "pricing": variant.label, "price": price.model, "cost_usd": cost, "paid_back": paid})
    return out


class _Usage:
    """A stored observation row as :func:`cost_of` reads it."""

    __slots__ = ("prompt_tokens", "cached_tokens", "written_tokens", "written_long_tokens", "output_tokens", "status",
                 "cached_explicit_tokens", "stored_token_ms", "created_tokens")

    def __init__(self, row: dict[str, object]) -> None:
        for name in self.__slots__:
            setattr(self, name, int(row.get(name, 0)))  # type: ignore[call-overload]  # absent in a store written before them


# --- the leaderboard -------------------------------------------------------------------------

#: A leaderboard row's identity, in report order.
GROUP_KEYS = ("workload", "window", "cache", "pricing")


def _spread(values: list[float]) -> tuple[float | None, float | None, float | None]:
    if not values:
        return None, None, None
    return statistics.median(values), min(values), max(values)


def leaderboard(rows: Sequence[dict[str, object]]) -> list[dict[str, object]]:
    """One row a (workload, window, cache model, read discount, strategy) over its seeds, ranked
    by median cost per task within its group; strategies with a rejected request or a prompt
    over the window are listed after every valid one, unranked (``rank`` None) and marked
    (never named cheapest)."""
    groups: dict[tuple[object, ...], dict[object, list[dict[str, object]]]] = {}
    for row in rows:
        key = tuple(row[k] for k in GROUP_KEYS)
        groups.setdefault(key, {}).setdefault(row["strategy"], []).append(row)
    board = []
    for key, strategies in groups.items():
        entries = []
        for strategy, runs in strategies.items():
            cost = _spread([float(r["cost_usd"]) for r in runs])  # type: ignore[arg-type]
            rejected = sum(int(r["rejected"]) for r in runs)  # type: ignore[arg-type]
            over = sum(int(r["over_window"]) for r in runs)  # type: ignore[arg-type]
            entry: dict[str, object] = dict(zip(GROUP_KEYS, key))
            entry.update(
                strategy=strategy, seeds=len(runs), cost_usd=cost[0], cost_usd_lo=cost[1], cost_usd_hi=cost[2],
                cost_exact=statistics.median(sorted(Decimal(r["cost_usd"]) for r in runs)),  # type: ignore[arg-type]
                rejected=rejected, over_window=over,
                # Requests sent over the seeds (a chart's "3 of 192 requests refused").
                requests=sum(int(r.get("requests", 0)) for r in runs),  # type: ignore[call-overload]
                status="rejected" if rejected else ("over window" if over else "ok"),
            )
            for name in ("hit_ratio", "uncached_tokens", "summary_hit", "rewrites", "rewrite_factor", "context_kept"):
                values = [float(r[name]) for r in runs if r[name] is not None]  # type: ignore[arg-type]
                entry[name], entry[f"{name}_lo"], entry[f"{name}_hi"] = _spread(values)
            entry["paid_back"] = sum(int(r["paid_back"]) for r in runs)  # type: ignore[arg-type]
            entry["rewrites_total"] = sum(int(r["rewrites"]) for r in runs)  # type: ignore[arg-type]
            entries.append(entry)
        entries.sort(key=lambda e: (e["status"] != "ok", e["cost_exact"], str(e["strategy"])))
        baseline = _baseline_cost(entries)
        ranked = 0
        for entry in entries:
            # Only a strategy that ran as a working agent would is ranked: one with a refused
            # request or a prompt over the window is listed after them, unranked (rank None).
            ranked += entry["status"] == "ok"
            entry["rank"] = ranked if entry["status"] == "ok" else None
            # A run with refused requests has no comparable cost (they cost nothing): no gap.
            valid = entry["status"] == "ok"
            entry["vs_cheapest"] = (float(entry["cost_exact"]) / baseline - 1) if baseline and valid else None  # type: ignore[arg-type]
        board.extend(entries)
    return board


def _baseline_cost(entries: list[dict[str, object]]) -> float | None:
    """The cheapest valid strategy's median cost (None when every one was rejected)."""
    valid = [e for e in entries if e["status"] == "ok"]
    return float(valid[0]["cost_exact"]) if valid and valid[0]["cost_exact"] else None  # type: ignore[arg-type]
