"""``prefixbench sweep``: options (or a grid file) -> plan -> runs the store lacks -> outputs rebuilt
from the store -> table on stdout. Planning, computing and storing the runs is
:mod:`prefixbench.workloads.runs` (:mod:`~prefixbench.workloads.runs.land`); this module writes.

Order of writes in ``--out``, one sweep at a time (``.prefixbench-lock``): a landing a killed
sweep left half done is completed; the folder and store/ are probed (a read-only folder or a
full disk ends the sweep here); ``SWEEP-UNFINISHED`` appears; each run lands in ``store/`` as it
finishes (atomically); observations.csv, runs.csv, the charts, report.md and report.html are
rebuilt from the store into a staging folder beside the earlier outputs, which stay as they
are; then everything lands at once (:func:`prefixbench.reports.outdir.land_staged`: a journal,
the renames, the manifest last, the files an earlier sweep left that this one did not write
removed, the mark gone). A sweep that stops on an error removes its staging folder and leaves
the folder as it was, finished runs kept in the store.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import threading
from collections.abc import Collection, Iterator
from pathlib import Path

import pandas as pd

from prefixbench.reports.cost import cost_table, cost_text
from prefixbench.workloads.runs.schema import COST_COLUMNS, OBSERVATION_COLUMNS, RUN_COLUMNS
from prefixbench.workloads.runs.manifest import MANIFEST, UNFINISHED, Manifest
from prefixbench.reports.interrupt import keep_note, raise_if_interrupted
from prefixbench.reports.options import check_engine_refs, check_price_options, cross_priced_note, given, parse_list, parse_seeds, parse_windows, price_row, warn_window_memory, workload_options
from prefixbench.reports.outdir import (
    JOURNAL, LOCK, OutLock, check_out_dir, complete_landing, drop_staging, land_staged, landing_entries, landing_point, make_staging,
    probe_writable, write_file,
)
from prefixbench.reports.progress import SweepProgress
from prefixbench.reports.frames import same_runs, same_runs_notes
from prefixbench.reports.seeds import sweep_text_table
from prefixbench.workloads.runs.land import Landed, land_missing, load_runs, missing_runs, prepare_out
from prefixbench.workloads.runs.store import STORE_DIR, TEMP_PREFIX, ResultStore, recompute_notes
from prefixbench.reports.sweep import report_markdown, runs_json
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.observe import rejected_status
from prefixbench.simulator.pricing import PriceRow, usd_sum
from prefixbench.workloads.runs.execute import check_jobs, default_jobs, map_runs, pool_size, require_scheduler
from prefixbench.workloads.runs.options import SweepRunOptions
from prefixbench.workloads.scripted.registry import option_names
from prefixbench.workloads.runs.sweep import USER_ENGINE_PRESET, SweepPlan, SweepSpec, plan_sweep, plan_sweeps
from prefixbench.simulator.windows import format_window



def sweep_spec(args: argparse.Namespace) -> SweepSpec:
    """The sweep an argument namespace asks for (workload options only when given)."""
    options = workload_options(args)
    check_engine_refs(getattr(args, "engine", None) or ())
    named = (*(parse_list(args.engines, "--engines") if args.engines is not None else ()), *(getattr(args, "engine", None) or ()))
    engine_configs: dict[str, dict[str, object]] = {}
    if args.engine_config is not None:
        from prefixbench.workloads.scripted.registry import check_sections_run, get_workload, read_engine_config, split_engine_config

        sections = read_engine_config(args.engine_config, named)
        engines = named or (get_workload(args.workload).default_engine,)
        tables, engine_configs = split_engine_config(args.workload, sections, str(args.engine_config))
        options.update(tables)
        check_sections_run(sections, engines, str(args.engine_config))
    price = None
    if args.price is not None:
        price = price_row(args.price, args.price_as_of, args.period)
        crossed = cross_priced_note(args.cache, price)
        if crossed is not None and not getattr(args, "quiet", False):
            print(f"prefixbench: {crossed}", file=sys.stderr)
    else:
        check_price_options(args.period, args.price_as_of)
    windows = parse_windows(args.windows)
    warn_window_memory(windows)
    presets = parse_list(args.presets, "--presets")
    user_presets: tuple[str, ...] = ()
    if named and not given(args.presets):
        from prefixbench.workloads.scripted.registry import is_user_engine

        # A user's engine gets one run per window (the default preset, as check --engine) unless
        # --presets asks for more: then one per preset asked, as its options.preset may switch
        # its own fix. Runs that come out identical are said so once they finish (same_runs).
        if all(is_user_engine(engine) for engine in named):
            presets = (USER_ENGINE_PRESET,)
        elif any(is_user_engine(engine) for engine in named):
            user_presets = (USER_ENGINE_PRESET,)
    return SweepSpec(
        price=price,
        workload=args.workload,
        windows=windows,
        presets=presets,
        engines=named,
        profile=args.profile,
        cache=args.cache,
        tokenizer=args.tokenizer,
        options=options,
        engine_configs=engine_configs,
        user_engine_presets=user_presets,
    )


def output_names(plan: SweepPlan) -> list[str]:
    """The files a sweep writes at the top of ``--out`` (the store's files go into store/)."""
    names = ["runs.csv", "observations.csv", "report.md", "report.html", "hit-rate.png"]
    names += [f"timeline-{format_window(w)}.png" for w in sorted({item.workload.window for item in plan.runs})]
    if len({item.engine for item in plan.runs}) > 1:
        names.append("engines.png")
    if plan.spec.price is not None:
        names += ["cost.md", "cost.png"]
    return names


def write_sweep(specs: list[SweepSpec], options: SweepRunOptions) -> int:
    """Plan the sweep(s), run what the store lacks, rebuild every output from the store, print the table."""
    prices = list(dict.fromkeys(None if s.price is None else repr(s.price) for s in specs))
    if len(prices) > 1:
        raise UserError("--grid: the sweeps run together name different prices; give each its own run with --sweep NAME")
    plan = plan_sweeps(specs) if len(specs) > 1 else plan_sweep(specs[0])
    price = plan.spec.price
    check_jobs(options.jobs, options.scheduler, "sweep")
    require_scheduler(options.scheduler)
    out: Path = options.out
    check_out_dir(out, output_names(plan), "sweep")
    prepare_out(out)
    with OutLock(out):
        # A landing a killed command left half done is completed first (renames only); then
        # the folder must take files, in itself and in store/, before the first run.
        complete_landing(out)
        manifest = Manifest(out)
        manifest.remove_temporaries()
        probe_writable(out, f"--out {out}")
        probe_writable(out / STORE_DIR, f"--out {out}")
        return _run_and_land(plan, options, out, manifest)


def kept_runs(store: ResultStore, keys: list[str], out: Path) -> str:
    """What an interrupted sweep or bench kept: ``122 of 192 runs kept in out/store: ...``."""
    stored = sum(store.has(k) for k in keys)
    return (f"{stored:,} of {len(keys):,} runs kept in {out / STORE_DIR}; the same command "
            "resumes (stored runs are skipped)")


def _run_and_land(plan: SweepPlan, options: SweepRunOptions, out: Path, manifest: Manifest) -> int:
    """Compute what the store lacks, stage every output beside the earlier ones, and land them
    together; on any error the earlier outputs stay as they were and the finished runs stay in
    the store."""
    price = plan.spec.price
    store = ResultStore(out)
    keys = [item.key for item in plan.runs]
    todo = missing_runs(plan, store, fresh=options.fresh, jobs=options.jobs or default_jobs(len(keys)))
    warnings, notes = recompute_notes(plan.runs, todo, store)  # damaged store files, changed code
    for line in [f"warning: {w}" for w in warnings] + ([] if options.quiet else notes):
        print(f"prefixbench: {line}", file=sys.stderr)
    skipped = len(keys) - len(todo)
    if skipped and not options.quiet:
        print(
            f"prefixbench: {skipped:,} of {len(keys):,} runs already in {out / STORE_DIR} (skipped; --fresh recomputes); "
            f"running {len(todo):,}",
            file=sys.stderr,
        )
    jobs = options.jobs if options.jobs is not None else default_jobs(len(todo) if todo else len(keys))
    if todo and (jobs > 1 or options.scheduler is not None):
        # While the workers compute, this process would only wait: load the chart modules now,
        # so the chart workers forked later start with them (instead of each importing
        # matplotlib at the end of the sweep). Joined before that fork (_rebuild).
        CHART_IMPORT.start()
    mark = out / UNFINISHED
    earlier_mark = mark.read_bytes() if mark.is_file() else None
    manifest.begin(len(keys))
    staging: Path | None = None
    try:
        progress = SweepProgress(len(plan.runs), skipped, mode=SweepProgress.mode_for(options.quiet))
        landed = land_missing(plan, todo, store, progress, jobs=jobs, scheduler=options.scheduler, between_batches=_between_runs)
        staging = make_staging(out)
        runs_df, obs_df, costs, written, drawing, same = _rebuild(staging, plan, store, price, jobs, landed)
        runs_text = runs_json(runs_df, costs)
        _write_sweep_html(staging, plan, runs_df, obs_df, costs, same)
        written.add("report.html")
        for _ in drawing:  # the charts, drawn meanwhile
            pass
        outputs = sorted(written, key=_landing_order)
        written |= {store.relpath(k) for k in keys}
        stale, foreign, manifest_bytes = manifest.settle(written, skip={LOCK, *landing_entries(out)})
        write_file(staging / MANIFEST, manifest_bytes)
        # The outputs change together (one rename: no reader sees two sweeps mixed); the
        # manifest goes last: it names the set that landed.
        land_staged(out, staging, [*outputs, MANIFEST], remove=[*stale, UNFINISHED], together=outputs)
    except KeyboardInterrupt:
        _drop(out, staging)  # the mark stays: re-running completes the sweep
        keep_note(kept_runs(store, keys, out))
        raise
    except BaseException as exc:
        _drop(out, staging)
        if earlier_mark is None:
            mark.unlink(missing_ok=True)
        else:
            mark.write_bytes(earlier_mark)
        if isinstance(exc, Exception):
            stored = sum(store.has(k) for k in keys)
            add_note(exc, f"the sweep stopped; {out}/ is as it was, and {stored} of {len(keys)} runs are in "
                           f"{out / STORE_DIR}: fix the error and re-run (stored runs are skipped)")
        raise
    _print_outcome(options, runs_text, runs_df, costs, price, same)
    if not options.quiet:
        for line in same_runs_notes(runs_df.to_dict("records"), same, [item.engine for item in plan.runs]):
            print(f"prefixbench: {line}", file=sys.stderr)
    if not options.quiet:
        shown = sorted(f for f in written if "/" not in f)
        print(f"wrote {out}/: {', '.join(shown)}, {STORE_DIR}/ ({len(keys):,} run{'' if len(keys) == 1 else 's'})", file=sys.stderr)
    if foreign:
        listed = ", ".join(foreign[:10]) + (f" and {len(foreign) - 10} more" if len(foreign) > 10 else "")
        print(f"prefixbench: warning: {out}/ also holds files prefixbench did not write (left as they are): {listed}", file=sys.stderr)
    return 0


def _between_runs() -> None:
    """After each finished batch of runs: a swallowed Ctrl-C stops here; so does a test's stop."""
    raise_if_interrupted()
    landing_point("run-stored")


def _landing_order(name: str) -> tuple[int, str]:
    """Charts and reports, then the CSV files (all of them change together, in one rename)."""
    return ({"observations.csv": 1, "runs.csv": 2}.get(name, 0), name)


def _drop(out: Path, staging: Path | None) -> None:
    """Remove this sweep's staging folder and temporary files, unless a landing was journaled
    (then its staged files are what the next command completes it from)."""
    if (out / JOURNAL).exists():
        return
    if staging is not None:
        drop_staging(staging)
    prefix = f"{TEMP_PREFIX}{os.getpid()}-"
    for root, _, files in os.walk(out):
        for name in files:
            if name.startswith(prefix):
                Path(root, name).unlink(missing_ok=True)


def add_note(exc: BaseException, note: str) -> None:
    """Say what a stopped sweep or bench kept: in the one line of a UserError, as a note on anything else."""
    text = str(exc)
    if isinstance(exc, UserError) and not getattr(exc, "lines", None) and exc.args == (text,):
        exc.args = (f"{text} ({note})",)
    else:
        exc.add_note(f"prefixbench: {note}")


def _print_outcome(
    options: SweepRunOptions, runs_text: str, runs_df: pd.DataFrame, costs: pd.DataFrame | None, price: PriceRow | None,
    same: dict[int, int],
) -> None:
    """stdout: the runs as JSON, or the sweep table and, when priced, the cost table."""
    if options.format == "json":
        print(runs_text)
        return
    print(sweep_text_table(runs_df, same))
    from prefixbench.reports.sweep import engine_notes
    from prefixbench.reports.warning_notes import warning_notes

    for line in [*engine_notes(runs_df), *warning_notes(runs_df.to_dict("records"))]:
        print(f"note: {line}")
    if costs is not None and price is not None:
        print(f"\ncost at {price.model} prices (USD):")
        print(cost_text(costs, _same_keys(runs_df, same, costs)))


def _write_sweep_html(
    out: Path, plan: SweepPlan, runs_df: pd.DataFrame, obs_df: pd.DataFrame, costs: pd.DataFrame | None, same: Collection[int] = (),
) -> None:
    """report.html: the runs as ``--format json`` prints them, with the charts as inline SVG.

    Its charts draw one run per configuration: with several seeds the lowest seed's runs, and
    in a grid with workload-option axes the first option set of each workload (the page says
    so); runs.csv and report.md hold every run.
    """
    from prefixbench.reports.html_pages import AcrossSeeds, sweep_page, write_html

    shown = runs_df
    notes = []
    across = None
    if len(runs_df) and runs_df["seed"].nunique() > 1:
        from prefixbench.reports.seeds import aggregate_rows, footnotes

        seed = int(runs_df["seed"].min())
        shown = shown[shown["seed"] == seed]
        header, rows = aggregate_rows(runs_df, same)
        across = AcrossSeeds(seed, runs_df["seed"].nunique(), header, rows, footnotes(rows, header))
        notes.append(f"seeds: {runs_df['seed'].nunique()}; the first table gives every configuration across them "
                     f"(median and min..max), the runs, charts and timelines below are those of seed {seed}; "
                     "runs.csv holds every run")
    if len(shown) and shown.groupby("workload")["params"].nunique().max() > 1:
        first = shown.groupby("workload")["params"].transform("first")
        shown = shown[shown["params"] == first]
        notes.append("workload options: this page shows the first option set of each workload; report.md and runs.csv hold every one")
    from prefixbench.reports.warning_notes import warning_notes

    notes += warning_notes(runs_df.to_dict("records"))  # every run's, not only the runs shown
    keys = ["workload", "window", "engine", "preset", "profile", "cache", "seed"]
    obs = obs_df.merge(shown[keys].drop_duplicates(), on=keys, how="inner") if len(obs_df) else obs_df
    specs = plan.all_specs()
    params = "; ".join(dict.fromkeys(str(p).replace(";", ", ") for p in shown["params"]))
    lines = [
        f"workload: {', '.join(dict.fromkeys(shown['workload']))} ({params})",
        f"windows: {', '.join(format_window(int(w)) for w in sorted(set(shown['window'])))} (k = 1,000 tokens)",
        f"engines: {', '.join(dict.fromkeys(shown['engine']))}; presets: {', '.join(dict.fromkeys(shown['preset']))}",
        f"cache model: {', '.join(dict.fromkeys(shown['cache']))} (tokens: {', '.join(dict.fromkeys(s.tokenizer for s in specs))}); "
        f"provider profile: {', '.join(dict.fromkeys(shown['profile']))}",
        *notes,
    ]
    from prefixbench.simulator.models import assumptions

    lines += [f"assumes {line}" for cache in dict.fromkeys(s.cache for s in specs) for line in assumptions(cache)]
    price = plan.spec.price
    if price is not None:
        lines.append(f"prices: {price.model}" + (f" (in force from {price.effective})" if price.effective else ""))
    shown_costs = costs
    if costs is not None:
        shown_costs = costs.merge(shown[[*keys, "params"]].drop_duplicates(), on=[*keys, "params"], how="inner")
    import json

    # runs_json keeps the order of shown: the nth run of the page is shown's nth row.
    repeats = {n for n, index in enumerate(shown.index) if index in same}
    page = sweep_page(lines, json.loads(runs_json(shown, shown_costs)), obs, priced=price is not None, seeds=across, same=repeats)
    try:
        write_html(out / "report.html", page)
    except OSError as exc:
        raise UserError(f"{out / 'report.html'}: cannot write ({exc.strerror or exc})") from None


def sweep_specs(args: argparse.Namespace) -> list[SweepSpec]:
    """The sweep(s) the arguments ask for: a grid file's cartesian product, or the flags."""
    if getattr(args, "grid", None) is not None:
        from prefixbench.reports.grid import read_grid

        if getattr(args, "engine", None):  # was dropped without a word: the grid's own engines ran alone
            raise UserError(f"--engine {args.engine[0]}: does not apply to --grid: name it in the grid's engines = [...] "
                            "(an installed name or package.module:factory), or give --engines to run it in every sweep of the grid")

        specs = read_grid(args.grid, args.sweep_name, overrides=grid_overrides(args))
        warn_window_memory(tuple(sorted({w for spec in specs for w in spec.windows})))
        return specs
    if getattr(args, "sweep_name", None) is not None:  # it picks a sweep of a grid file: alone it would be ignored
        raise UserError(f"--sweep {args.sweep_name}: names a sweep of a grid file; give --grid FILE.toml too")
    spec = sweep_spec(args)
    if getattr(args, "seeds", None) is not None:  # --seeds '' too: refused as an empty list, not ignored
        from msgspec.structs import replace

        spec = replace(spec, seeds=parse_seeds(str(args.seeds)))
    return [spec]


def grid_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The flags given on the command line, as grid keys (they replace the file's values)."""
    out: dict[str, object] = {}
    if given(args.workload):
        out["workloads"] = [args.workload]
    if given(args.windows):
        out["windows"] = list(parse_list(args.windows, "--windows"))
    if given(args.presets):
        out["presets"] = list(parse_list(args.presets, "--presets"))
    if given(args.engines):
        out["engines"] = list(parse_list(args.engines, "--engines"))
    if given(args.profile):
        out["profiles"] = [args.profile]
    if given(args.cache):
        out["caches"] = [args.cache]
    if given(args.tokenizer):
        out["tokenizer"] = args.tokenizer
    if given(args.seeds):
        out["seeds"] = parse_seeds(str(args.seeds))
    if given(args.price):
        out["price"] = args.price
        out["period"] = args.period
        out["price_as_of"] = args.price_as_of
    if given(args.engine_config):
        out["engine_config"] = str(Path(args.engine_config).resolve())
    options = {name: getattr(args, name) for name in option_names() if getattr(args, name, None) is not None}
    if options:
        out["options"] = options
    return out


def _rebuild(
    out: Path, plan: SweepPlan, store: ResultStore, price: PriceRow | None, jobs: int = 1,
    landed: dict[str, Landed] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, set[str], Iterator[tuple[int, str]], dict[int, int]]:
    """runs.csv, observations.csv, charts and report.md from the stored runs, in plan order,
    into the folder ``out`` (the sweep's staging folder).

    With ``jobs`` > 1 the stored runs are read and the charts drawn in worker processes; the
    files are the same either way. The charts are still being drawn when this returns: iterate
    the fifth item returned to wait for them. The last: the runs of a user's engine identical to
    its legacy run (rows of the runs frame, see :func:`same_runs`).
    """
    records, frames, priced = [], [], []
    for record, observations in load_runs(plan, store, landed or {}, jobs):
        records.append(record)
        if price is not None:
            observations = cost_table(observations, price)
            # The run's workload options tell apart runs that differ in nothing else (a grid axis).
            priced.append(observations.assign(params=record["params"]))
        frames.append(observations)
    runs_df = pd.DataFrame(records, columns=list(RUN_COLUMNS))
    same = same_runs(records, frames, [item.engine for item in plan.runs])
    obs_df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(OBSERVATION_COLUMNS))
    # Charts are named, not imported: with workers only they load matplotlib.
    charts: list[ChartTask] = [("charts:hit_rate_chart", (runs_df,), {}, out / "hit-rate.png")]
    # A timeline draws every request of one run per series: with several seeds, the lowest
    # seed's runs (report.md says which).
    timeline_obs = obs_df[obs_df["seed"] == obs_df["seed"].min()] if len(obs_df) else obs_df
    for window in sorted(runs_df["window"].unique()):
        name = f"timeline-{format_window(int(window))}.png"
        subset = timeline_obs[timeline_obs["window"] == window]
        charts.append(("charts:timeline_chart", (subset, int(window)), {}, out / name))
    several_engines = runs_df["engine"].nunique() > 1
    if several_engines:
        charts.append(("engines:engines_chart", (runs_df, obs_df), {}, out / "engines.png"))
    costs = None
    if price is not None:
        from prefixbench.reports.cost import run_costs

        costs = run_costs(pd.concat(priced, ignore_index=True))
        charts.append(("cost:cost_chart", (costs,), {"title": f"Cost per run at {price.model} prices"}, out / "cost.png"))
    # With workers, the charts are drawn there while this process writes the text files.
    CHART_IMPORT.join()  # no fork while another thread may hold an import lock
    drawing = map_runs(draw_chart, charts, jobs=pool_size(jobs, len(charts), 2))
    written = {"observations.csv", "runs.csv", "report.md", *(path.name for *_, path in charts)}
    _write_csvs(out, records, priced, obs_df, price)
    sections = [report_markdown(plan, runs_df, same)]
    if several_engines:
        from prefixbench.reports.engines import comparison_markdown

        sections.append(comparison_markdown(runs_df, obs_df))
    if price is not None:
        from prefixbench.reports.cost import cost_markdown

        section = cost_markdown(costs, price, _same_keys(runs_df, same, costs))
        write_file(out / "cost.md", section.encode())
        sections.append(section)
        written.add("cost.md")
    write_file(out / "report.md", "\n".join(sections).encode())
    return runs_df, obs_df, costs, written, drawing, same


def _same_keys(runs_df: pd.DataFrame, same: Collection[int], costs: pd.DataFrame) -> set[tuple[tuple[str, str], ...]]:
    """The runs identical to their legacy run (rows of ``runs_df``), as the cost table finds them."""
    from prefixbench.reports.cost import same_key

    return {same_key(runs_df.loc[row], costs.columns) for row in same}


#: A chart to draw: ``"module:function"`` in prefixbench.reports, its leading arguments,
#: keyword arguments and the file.
ChartTask = tuple[str, tuple, dict, Path]


def draw_chart(task: ChartTask) -> str:
    """Draw one chart into a temporary file beside its path, then rename it into place."""
    target, args, kwargs, path = task
    module, _, name = target.partition(":")
    draw = getattr(importlib.import_module(f"prefixbench.reports.{module}"), name)
    tmp = path.with_name(f"{TEMP_PREFIX}{os.getpid()}-{path.name}")
    try:
        draw(*args, tmp, **kwargs)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None
    return path.name


class _BackgroundImport:
    """Import a module in a daemon thread, at most once; ``join`` waits for it if started."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="prefixbench-import", daemon=True)
            self.thread.start()

    def _run(self) -> None:
        try:
            importlib.import_module(self.module)
        except Exception:  # noqa: BLE001 - drawing imports it again and reports the error there
            pass

    def join(self) -> None:
        if self.thread is not None:
            self.thread.join()


CHART_IMPORT = _BackgroundImport("prefixbench.reports.charts")


#: The columns of observations.csv a rejected (HTTP 400) request has no figure for.
_NOT_SERVED = ("cached_tokens", "uncached_tokens", "written_tokens", "written_long_tokens", "cached_explicit_tokens", "hit_ratio")


def _write_csvs(
    out: Path, records: list[dict[str, object]], priced: list[pd.DataFrame], obs_df: pd.DataFrame, price: PriceRow | None
) -> None:
    """observations.csv and runs.csv, each written whole into the staging folder ``out``."""
    extra = list(COST_COLUMNS) if price is not None else []
    rows = []
    for number, record in enumerate(records):
        row = {k: json.dumps(v) if isinstance(v, list) else v for k, v in record.items()}
        if price is not None:
            for column in COST_COLUMNS:
                row[column] = usd_sum(priced[number][column])
        rows.append(row)
    observations = obs_df.reindex(columns=[*OBSERVATION_COLUMNS, *extra])
    rejected = observations["status"].map(rejected_status).astype(bool)
    if rejected.any():
        # A refused request never reached the cache: no read, no write, no hit ratio, and none of
        # its prompt is an uncached token (the runs' totals leave it out too); status and error say why.
        observations = observations.astype({column: object for column in _NOT_SERVED})
        observations.loc[rejected, list(_NOT_SERVED)] = ""
    write_file(out / "observations.csv", observations.to_csv(index=False, lineterminator="\n").encode())
    runs = pd.DataFrame(rows, columns=[*RUN_COLUMNS, *extra])
    write_file(out / "runs.csv", runs.to_csv(index=False, lineterminator="\n").encode())
