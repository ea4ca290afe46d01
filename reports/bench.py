"""``prefixbench bench``: compaction strategies x provider cache models x windows x seeds, run
as one sweep plan (workers, Dask, the result store: :mod:`prefixbench.workloads.runs.land`) and
reported as a leaderboard per workload, window, cache model and price variant.

Output folder::

    store/<key>.parquet    one file a run (resumable: a re-run computes only what is missing)
    leaderboard.csv        one row a (workload, window, cache, prices, strategy), ranked
    bench-runs.csv         one row a run and price variant (the figures the leaderboard summarizes)
    report.md, report.html the leaderboard, how to read it, the charts
    bench-<workload>.png   cost per task and session hit ratio by strategy, per window and cache
    bench-discount.png     each strategy's cost against no compaction's, at each price variant

Every file is rebuilt from the store in plan order, so its bytes do not depend on ``--jobs``,
the scheduler or the order in which runs finished.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path

from typing import TYPE_CHECKING

from prefixbench.reports.stdio import path_argument
from prefixbench.simulator.errors import UserError

if TYPE_CHECKING:  # annotations only: the command line loads these when bench runs
    from prefixbench.reports.subcommands import Subcommands
    from prefixbench.simulator.pricing import PriceRow
    from prefixbench.workloads.runs.bench import BenchSpec
    from prefixbench.workloads.runs.options import SweepRunOptions

DEFAULT_BENCH_OUT = Path("prefixbench-bench")
#: The strategy the discount chart compares every other one with, when the bench runs it.
BASELINE = "no-compaction"


def add_bench_parser(sub: Subcommands, add_engine_option: Callable, add_workload_options: Callable) -> None:
    """``bench``'s options (``sub`` is the command line's subparsers)."""
    bench = sub.add_parser(
        "bench",
        description="Run every compaction strategy (the seed engines and every engine installed under the "
        "prefixbench.engines entry points) on each workload, provider cache model, window and seed, price each "
        "run at its provider's dated prices (and at the variants --read-discount and --read-price ask for), and write a "
        "leaderboard: leaderboard.csv, bench-runs.csv, report.md, report.html, charts and the result store.",
    )
    if not bench:
        return
    from prefixbench.kernel.presets import PRESETS
    from prefixbench.simulator.validate import PROFILES
    from prefixbench.workloads.runs.bench import BENCH_CACHES, DEFAULT_CACHES, DEFAULT_WORKLOADS
    from prefixbench.workloads.scripted.registry import WORKLOADS

    caches = ", ".join(f"{c.label} ({c.price})" for c in BENCH_CACHES)
    bench.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS), help=f"workloads, comma-separated: {', '.join(WORKLOADS)} (default: {','.join(DEFAULT_WORKLOADS)})")
    bench.add_argument("--strategies", default=None, help="engines, comma-separated: seed engines, installed names or package.module:factory (default: each workload's seed engines and every installed engine; --engine adds to them)")
    add_engine_option(bench)
    bench.add_argument("--caches", default=",".join(DEFAULT_CACHES), help=f"provider cache models, comma-separated, or all: {caches} (default: {','.join(DEFAULT_CACHES)})")
    bench.add_argument("--windows", default="32k,128k,512k", help="context windows, k = 1,000 and m = 1,000,000 tokens (default: 32k,128k,512k)")
    bench.add_argument("--seeds", default="0-4", help="workload shape seeds: 0-16 (inclusive), 0,3,5 or a mix; 0 is the default shape (default: 0-4)")
    bench.add_argument("--preset", default="patched", help=f"preset of the seed engines: {', '.join(PRESETS)} (default: patched)")
    bench.add_argument("--profile", default="lenient", help=f"provider strictness profile: {'|'.join(PROFILES)} (default: lenient)")
    bench.add_argument("--read-discount", default="0.5", metavar="F,...", help="also price at these fractions of each provider's cached-read discount: 0.5 = half the discount, reads cost more; none for no such variant (default: 0.5)")
    bench.add_argument("--read-price", default="0.5", metavar="F,...", help="also price with the cache-read price times these factors: 0.5 = reads cost half; none for no such variant (default: 0.5)")
    bench.add_argument("--price-as-of", default=None, metavar="DATE", help="prices in force on DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MMZ; default: the latest rows)")
    add_workload_options(bench)
    bench.add_argument("--engine-config", type=path_argument, default=None, metavar="FILE", help="per-engine settings, TOML or JSON: "
                       "{engine: {key: value}}, as sweep takes them; one table per strategy the bench runs, given to every "
                       "workload that runs it")
    bench.add_argument("--out", type=path_argument, default=DEFAULT_BENCH_OUT, help=f"output folder (default: {DEFAULT_BENCH_OUT}/)")
    bench.add_argument("--quiet", action="store_true", help="no progress, notes or 'wrote' line on stderr (warnings and errors are still said)")
    bench.add_argument("--jobs", type=int, default=None, metavar="N", help="worker processes, at most 4 x the cores without a remote --scheduler (default: the cores when more than 4 runs are to be computed, else 1)")
    bench.add_argument("--scheduler", default=None, metavar="ADDRESS|local", help="run on Dask distributed: a scheduler address or 'local' (needs the dask extra)")
    bench.add_argument("--fresh", action="store_true", help="recompute every run, even those already in the store")


def parse_factors(text: str, option: str, top: int) -> tuple[Decimal, ...]:
    """``0.5,0.25`` -> the factors, each from 0 to ``top``; ``none`` -> none."""
    from prefixbench.reports.options import parse_list

    if text.strip() == "none":
        return ()
    out = []
    for item in parse_list(text, option):
        try:
            value = Decimal(item)
        except InvalidOperation:
            raise UserError(f"{option}: {item!r} is not a number (e.g. 0.5)") from None
        if not value.is_finite() or not Decimal(0) <= value <= Decimal(top):
            what = "a fraction of the listed discount" if top == 1 else "a factor of the listed read price"
            raise UserError(f"{option}: {what} from 0 to {top}, got {item!r}")
        out.append(value)
    return tuple(out)


def bench_spec(args: argparse.Namespace) -> BenchSpec:
    """The :class:`~prefixbench.workloads.runs.bench.BenchSpec` the flags ask for."""
    from prefixbench.reports.options import (
        check_engine_refs, check_price_date, parse_list, parse_seeds, parse_windows, warn_window_memory, workload_options,
    )
    from prefixbench.workloads.runs.bench import BENCH_CACHES, LISTED, BenchSpec, PriceVariant

    check_engine_refs(args.engine or ())
    named = parse_list(args.strategies, "--strategies") if args.strategies is not None else ()
    if args.engine and not named:
        # --engine alone adds to the default strategies (the seed engines and the installed ones).
        from prefixbench.kernel.loading import installed_engines
        from prefixbench.workloads.scripted.registry import get_workload

        seeds = (e for w in parse_list(args.workloads, "--workloads") for e in get_workload(w).engines)
        named = tuple(dict.fromkeys((*seeds, *installed_engines())))
    strategies = tuple(dict.fromkeys((*named, *(args.engine or ()))))
    caches = tuple(c.label for c in BENCH_CACHES) if args.caches.strip() == "all" else parse_list(args.caches, "--caches")
    if "all" in caches:  # beside other names: "unknown cache model 'all' (known: ..., or all)" contradicted itself
        raise UserError(f"--caches {args.caches}: all names every cache model and stands alone; give all, or the models")
    check_price_date(args.price_as_of)
    windows = parse_windows(args.windows)
    warn_window_memory(windows)
    tables: dict[str, dict[str, object]] = {}
    if args.engine_config is not None:  # as sweep reads it; plan_bench checks each table is run
        from prefixbench.workloads.scripted.registry import read_engine_config

        tables = {name: dict(section) for name, section in read_engine_config(args.engine_config).items()}
    return BenchSpec(
        workloads=parse_list(args.workloads, "--workloads"), strategies=strategies, caches=caches, windows=windows,
        seeds=parse_seeds(args.seeds), preset=args.preset, profile=args.profile,
        pricing=tuple(dict.fromkeys((
            LISTED,
            *(PriceVariant("discount", f) for f in parse_factors(args.read_discount, "--read-discount", 1)),
            *(PriceVariant("read", f) for f in parse_factors(args.read_price, "--read-price", 10)),
        ))),
        price_as_of=args.price_as_of, options=workload_options(args),
        engine_config=tables, engine_config_file=str(args.engine_config) if args.engine_config is not None else "--engine-config",
    )


def cmd_bench(args: argparse.Namespace) -> int:
    """``prefixbench bench``."""
    from prefixbench.workloads.runs.options import SweepRunOptions

    spec = bench_spec(args)
    options = SweepRunOptions(out=args.out, quiet=args.quiet, jobs=args.jobs, scheduler=args.scheduler, fresh=args.fresh)
    try:
        return write_bench(spec, options)
    except UserError as exc:
        exc.args = (with_the_way_out(str(exc), args.strategies),)  # the same error (an EngineError keeps its frames)
        raise


def with_the_way_out(message: str, strategies: str | None) -> str:
    """An installed engine that fails while bench runs it by default (no ``--strategies``): the
    error, and how to bench without it (another team's package can break the whole bench)."""
    if strategies:
        return message
    from prefixbench.kernel.loading import installed_engines

    if any(message.startswith(f"engine {name}:") or message.startswith(f"engine {name} (") for name in installed_engines()):
        return f"{message} (bench runs every installed engine unless --strategies names them: leave it out there)"
    return message


OUTPUTS = ("leaderboard.csv", "bench-runs.csv", "report.md", "report.html", "bench-discount.png")


def write_bench(spec: BenchSpec, options: SweepRunOptions) -> int:
    """Plan, land what the store lacks, rebuild every output from the store, print the leaderboard."""
    from prefixbench.reports.interrupt import keep_note, raise_if_interrupted
    from prefixbench.reports.output import add_note, kept_runs
    from prefixbench.reports.outdir import OutLock, check_out_dir, probe_writable
    from prefixbench.reports.progress import SweepProgress
    from prefixbench.reports.warning_notes import warning_notes
    from prefixbench.workloads.runs.bench import bench_rows, label_of, leaderboard, plan_bench, prices_of
    from prefixbench.workloads.runs.execute import check_jobs, default_jobs, require_scheduler
    from prefixbench.workloads.runs.land import land_missing, load_runs, missing_runs, prepare_out
    from prefixbench.workloads.runs.manifest import Manifest
    from prefixbench.workloads.runs.store import STORE_DIR, ResultStore, recompute_notes

    plan = plan_bench(spec)
    prices = prices_of(spec)
    check_jobs(options.jobs, options.scheduler, "bench")
    require_scheduler(options.scheduler)
    out: Path = options.out
    names = [*OUTPUTS, *(f"bench-{w}.png" for w in spec.workloads)]
    check_out_dir(out, names, "bench")
    prepare_out(out)
    with OutLock(out):
        Manifest(out).remove_temporaries()  # what a killed bench was writing
        probe_writable(out, f"--out {out}")
        probe_writable(out / STORE_DIR, f"--out {out}")
        store = ResultStore(out)
        keys = [item.key for item in plan.runs]
        todo = missing_runs(plan, store, fresh=options.fresh, jobs=options.jobs or default_jobs(len(keys)))
        warnings, notes = recompute_notes(plan.runs, todo, store)
        for line in [f"warning: {w}" for w in warnings] + ([] if options.quiet else notes):
            print(f"prefixbench: {line}", file=sys.stderr)
        skipped = len(keys) - len(todo)
        if not options.quiet:
            already = f"; {skipped} already in {out / STORE_DIR} (skipped; --fresh recomputes)" if skipped else ""
            print(f"prefixbench: bench of {_runs(len(keys))}{already}; running {len(todo):,}", file=sys.stderr)
        jobs = options.jobs if options.jobs is not None else default_jobs(len(todo) if todo else len(keys))
        progress = SweepProgress(len(keys), skipped, mode=SweepProgress.mode_for(options.quiet), command="bench")
        try:
            landed = land_missing(plan, todo, store, progress, jobs=jobs, scheduler=options.scheduler, between_batches=raise_if_interrupted)
        except KeyboardInterrupt:
            keep_note(kept_runs(store, keys, out))
            raise
        except Exception as exc:  # an engine that failed, say: what the folder kept, as sweep says it
            stored = sum(store.has(k) for k in keys)
            add_note(exc, f"the bench stopped; {out}/ is as it was, and {stored} of {len(keys)} runs are in "
                          f"{out / STORE_DIR}: fix the error and re-run (stored runs are skipped)")
            raise
        rows: list[dict[str, object]] = []
        records: list[dict[str, object]] = []
        for item, (record, frame) in zip(plan.runs, load_runs(plan, store, landed, jobs)):
            rows += bench_rows(record, frame.to_dict("records"), item.cache, prices[item.cache], spec.pricing)
            records.append({**record, "cache": label_of(item.cache)})  # the notes name it as the leaderboard does
        board = leaderboard(rows)
        warned = warning_notes(records, bench=True)
        _write_outputs(out, spec, prices, rows, board, warned)
    print(leaderboard_text(board))
    for line in [*_engine_notes(spec), *warned]:
        print(f"note: {line}")
    if not options.quiet:
        print(f"wrote {out}/: {', '.join(sorted(names))}, {STORE_DIR}/ ({_runs(len(keys))})", file=sys.stderr)
    return 0


# --- formatting ------------------------------------------------------------------------------


def _engine_notes(spec: BenchSpec) -> list[str]:
    """What the ``--engine-config`` tables' settings rest on (the remote compact call's assumed price)."""
    from prefixbench.reports.warning_notes import engine_notes

    return engine_notes(spec.engine_config.items())


def _pct(value: object) -> str:
    return "-" if value is None else f"{float(value) * 100:.1f}%"  # type: ignore[arg-type]


def _spread(entry: dict[str, object], name: str, fmt: Callable[[object], str]) -> str:
    """``median [lo..hi]``, or the median alone when the seeds agree."""
    mid, lo, hi = entry[name], entry[f"{name}_lo"], entry[f"{name}_hi"]
    if mid is None:
        return "-"
    low, high = fmt(lo), fmt(hi)
    return fmt(mid) if low == high else f"{fmt(mid)} [{low}..{high}]"


def _usd(value: object) -> str:
    return f"${float(value):.4f}"  # type: ignore[arg-type]


def _tokens(value: object) -> str:
    return f"{int(round(float(value))):,}"  # type: ignore[arg-type]


def _factor(value: object) -> str:
    return f"{float(value):.2f}x"  # type: ignore[arg-type]


def _window(value: object) -> str:
    from prefixbench.simulator.windows import format_window

    return format_window(int(value))  # type: ignore[call-overload]


LEADERBOARD_HEADER = (
    "workload", "window", "cache", "prices", "rank", "strategy", "cost/task", "vs cheapest", "hit", "uncached",
    "summary hit", "rewrites", "re-write", "paid back", "context kept", "status",
)
RIGHT = frozenset(range(6, 15)) | {4}


def leaderboard_rows(board: Sequence[dict[str, object]]) -> list[tuple[str, ...]]:
    """The leaderboard as table rows (medians, with [min..max] over seeds where they differ)."""
    rows = []
    for e in board:
        vs = e["vs_cheapest"]
        rows.append((
            str(e["workload"]), _window(e["window"]), str(e["cache"]), str(e["pricing"]),
            "-" if e["rank"] is None else str(e["rank"]), str(e["strategy"]),
            # A refused request cost nothing: the total is not what the strategy would cost, so none is shown.
            "rejected" if e["status"] == "rejected" else _spread(e, "cost_usd", _usd),
            "-" if vs is None else f"{float(vs) * 100:+.1f}%",  # type: ignore[arg-type]
            _spread(e, "hit_ratio", _pct), _spread(e, "uncached_tokens", _tokens), _spread(e, "summary_hit", _pct),
            _spread(e, "rewrites", _tokens), _spread(e, "rewrite_factor", _factor),
            f"{e['paid_back']}/{e['rewrites_total']}", _spread(e, "context_kept", _pct),
            "ok" if e["status"] == "ok" else f"! {e['status']}",
        ))
    return rows


def leaderboard_text(board: Sequence[dict[str, object]]) -> str:
    """The leaderboard as aligned text (stdout)."""
    from prefixbench.reports.textable import Table

    return Table(LEADERBOARD_HEADER, leaderboard_rows(board), RIGHT).text()


HOW_TO_READ = (
    "How to read it: one row a strategy, ranked by its median cost per task (one run of the workload) "
    "within its workload, window, cache model and prices; [min..max] over the seeds where they differ. "
    "*hit* is the session's cached share of prompt tokens; *uncached* its uncached prompt tokens; *summary hit* "
    "the cached share of its summary calls (- when it sends none); *rewrites* the conversation requests that did "
    "not extend the previous one (a prefix rewrite); *re-write* the uncached prompt tokens over the largest prompt "
    "(every token written to the cache once is 1.0x); *paid back* the rewrites, over every seed, whose shorter "
    "prompt was read often enough before the next rewrite to recover the extra write: R > (I/H)(P_miss - P_read)/P_read "
    "(I the tokens the rewrite re-paid, H the tokens it shed, R the requests after it); *context kept* the share of "
    "the tool results' text the last request still carried. A strategy with a rejected request, or a prompt over "
    "the window, is listed after every valid one, unranked (rank -) and marked `!`: it is never the cheapest; a "
    "rejected one shows `rejected` for its cost (its refused requests cost nothing). *prices*: `listed` is the "
    "provider's price row; `50% of read discount` keeps half the cached-read discount (read = input - (input - read) / 2: "
    "reads cost more); `read price x0.5` halves the read price (reads cost less)."
)


def report_markdown(spec: BenchSpec, prices: dict[str, PriceRow], board: Sequence[dict[str, object]],
                    warned: Sequence[str] = ()) -> str:
    """report.md: what ran, the prices, the leaderboard and how to read it."""
    from prefixbench.reports.textable import Table
    from prefixbench.workloads.runs.bench import bench_cache

    lines = [
        "# prefixbench bench",
        "",
        f"- workloads: {', '.join(spec.workloads)}; windows: {', '.join(_window(w) for w in spec.windows)}; "
        f"seeds: {', '.join(str(s) for s in spec.seeds)}",
        f"- strategies: {', '.join(dict.fromkeys(str(e['strategy']) for e in board))} (seed engines under `{spec.preset}`)",
        f"- provider profile: `{spec.profile}`; prices: {', '.join(v.label for v in spec.pricing)}",
        "",
        "## Cache models and prices",
        "",
    ]
    for label in spec.caches:
        entry = bench_cache(label)
        price = prices[entry.cache]
        when = f"effective {price.effective}" if price.effective else "since launch"
        rates = price.rates
        write = "no write fee" if rates.cache_write is None else f"write {rates.cache_write}"
        lines.append(f"- `{label}`: `--cache {entry.cache}` ({entry.note}); {price.model} {when}, USD per 1M tokens: "
                     f"input {rates.input}, read {rates.cache_read}, {write}, output {rates.output}")
    lines += ["", "## Leaderboard", "", HOW_TO_READ, ""]
    lines.append(Table(LEADERBOARD_HEADER, leaderboard_rows(board), RIGHT).markdown(escape_pipes=True))
    notes = [*_engine_notes(spec), *warned]
    lines += ["", *(f"Note: {note}." for note in notes)] if notes else []
    lines.append("")
    return "\n".join(lines)


def _csv(header: Sequence[str], rows: Sequence[Sequence[object]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else (f"{v:.8f}" if isinstance(v, float) else v) for v in row])
    return buffer.getvalue().encode()


RUN_CSV = (
    "workload", "window", "cache", "strategy", "seed", "pricing", "price", "cost_usd", "requests", "rejected",
    "over_window", "largest_prompt", "hit_ratio", "uncached_tokens", "summary_calls", "summary_hit", "rewrites",
    "rewrite_factor", "paid_back", "context_kept", "longest_idle_ms",
)
BOARD_CSV = (
    "workload", "window", "cache", "pricing", "rank", "strategy", "status", "seeds", "cost_usd", "cost_usd_lo",
    "cost_usd_hi", "vs_cheapest", "hit_ratio", "hit_ratio_lo", "hit_ratio_hi", "uncached_tokens", "uncached_tokens_lo",
    "uncached_tokens_hi", "summary_hit", "summary_hit_lo", "summary_hit_hi", "rewrites", "rewrite_factor",
    "rewrite_factor_lo", "rewrite_factor_hi", "paid_back", "rewrites_total", "context_kept", "context_kept_lo",
    "context_kept_hi", "rejected", "over_window",
)


def _write_outputs(out: Path, spec: BenchSpec, prices: dict[str, PriceRow], rows: list[dict[str, object]],
                   board: list[dict[str, object]], warned: Sequence[str] = ()) -> None:
    """Every output file, each written whole and renamed into place."""
    from prefixbench.reports.html_pages import write_html
    from prefixbench.workloads.runs.store import write_atomic

    write_atomic(out / "bench-runs.csv", _csv(RUN_CSV, [[r[c] for c in RUN_CSV] for r in rows]))
    write_atomic(out / "leaderboard.csv", _csv(BOARD_CSV, [[e["cost_exact" if c == "cost_usd" else c] for c in BOARD_CSV] for e in board]))
    write_atomic(out / "report.md", report_markdown(spec, prices, board, warned).encode())
    from prefixbench.reports.bench_charts import discount_chart, strategy_chart

    for workload in spec.workloads:
        strategy_chart([e for e in board if e["workload"] == workload], out / f"bench-{workload}.png", title=workload)
    discount_chart(board, out / "bench-discount.png", baseline=BASELINE)
    write_html(out / "report.html", report_html(spec, prices, board))


def report_html(spec: BenchSpec, prices: dict[str, PriceRow], board: Sequence[dict[str, object]]) -> str:
    """report.html: the leaderboard per workload and window, with SVG bar charts of cost and hit."""
    from prefixbench.reports.html import Cell, Group, grouped_bars, note, page, table
    from prefixbench.workloads.runs.bench import LISTED

    sections = []
    caches = list(spec.caches)
    for workload in spec.workloads:
        for window in spec.windows:
            entries = [e for e in board if e["workload"] == workload and e["window"] == window]
            if not entries:
                continue
            listed = LISTED.label
            body = []
            for unit, name, title in (("$", "cost_usd", "median cost per task (USD)"), ("%", "hit_ratio", "session hit ratio")):
                groups = []
                for strategy in dict.fromkeys(str(e["strategy"]) for e in entries):
                    values, marked = [], []
                    for cache in caches:
                        match = [e for e in entries if e["strategy"] == strategy and e["cache"] == cache and e["pricing"] == listed]
                        if not match:
                            values.append((cache, None, None, None, ""))
                            continue
                        e = match[0]
                        scale = 100.0 if unit == "%" else 1.0
                        # a run with a rejected request or a prompt over the window: no comparable figure, marked
                        why = "" if e["status"] == "ok" else f" ({e['status']}: not comparable)"
                        if why:
                            marked.append(cache)
                        values.append((cache, float(e[name]) * scale, float(e[f"{name}_lo"]) * scale, float(e[f"{name}_hi"]) * scale,  # type: ignore[arg-type]
                                       f"{strategy} on {cache}: {e[name]}{why}"))
                    groups.append(Group(strategy, tuple(values), tuple(marked)))
                body.append(grouped_bars(groups, caches, title=f"{title}, at the listed prices", unit=unit))
            rows = []
            for cells in leaderboard_rows(entries):
                rows.append(({}, [Cell(c) for c in cells[2:]]))
            body.append(table(LEADERBOARD_HEADER[2:], rows))
            sections.append((f"{workload}-{_window(window)}", f"{workload} at {_window(window)}", "".join(body)))
    sections.append(("how", "How to read it", note(HOW_TO_READ)))
    subtitle = (f"{len(spec.workloads)} workloads x {len(dict.fromkeys(str(e['strategy']) for e in board))} strategies x "
                f"{len(caches)} cache models x {len(spec.windows)} windows x {len(spec.seeds)} seeds")
    data = [{k: (str(v) if isinstance(v, Decimal) else v) for k, v in e.items()} for e in board]
    return page("bench", "prefixbench bench", subtitle, sections, data)


def _runs(n: int) -> str:
    return f"{n:,} run" if n == 1 else f"{n:,} runs"
