"""``prefixbench sweep``: options -> plan -> runs -> table on stdout, files in the output folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from prefixbench.reports.interrupt import raise_if_interrupted
from prefixbench.reports.frames import format_window, observations_frame, runs_frame
from prefixbench.reports.options import check_price_options, parse_list, parse_windows, warn_window_memory
from prefixbench.reports.outdir import check_out_dir
from prefixbench.reports.sweep import SweepWriter, report_markdown, runs_json
from prefixbench.reports.tables import text_table
from prefixbench.workloads.base import Run
from prefixbench.workloads.registry import WORKLOADS
from prefixbench.workloads.sweep import RunSink, SweepPlan, SweepSpec, land_sweep, plan_sweep


def workload_options(args: argparse.Namespace) -> dict[str, object]:
    """The workload options given on the command line (``--effort default`` is None)."""
    options: dict[str, object] = {}
    for name in dict.fromkeys(o.name for entry in WORKLOADS.values() for o in entry.options):
        value = getattr(args, name)
        if value is not None:
            options[name] = None if (name == "effort" and value == "default") else value
    return options


def sweep_spec(args: argparse.Namespace) -> SweepSpec:
    """The sweep an argument namespace asks for (workload options only when given)."""
    options = workload_options(args)
    named = (*(parse_list(args.engines, "--engines") if args.engines else ()), *(getattr(args, "engine", None) or ()))
    engine_configs: dict[str, dict[str, object]] = {}
    if args.engine_config is not None:
        from prefixbench.workloads.registry import check_sections_run, engine_config_options, get_workload, is_user_engine, read_engine_config

        sections = read_engine_config(args.engine_config)
        engines = named or (get_workload(args.workload).default_engine,)
        options.update(engine_config_options(args.workload, sections, str(args.engine_config)))
        check_sections_run(sections, engines, str(args.engine_config))
        engine_configs = {name: dict(section) for name, section in sections.items() if is_user_engine(name)}
    price = None
    if args.price is not None:
        from prefixbench.simulator.pricing import get_price

        price = get_price(args.price, as_of=args.price_as_of, period=args.period)
    else:
        check_price_options(args)
    windows = parse_windows(args.windows)
    warn_window_memory(windows)
    return SweepSpec(
        price=price,
        workload=args.workload,
        windows=windows,
        presets=parse_list(args.presets, "--presets"),
        engines=named,
        profile=args.profile,
        cache=args.cache,
        tokenizer=args.tokenizer,
        options=options,
        engine_configs=engine_configs,
    )


def output_names(spec: SweepSpec) -> list[str]:
    """The files a sweep of ``spec`` writes into ``--out``."""
    names = ["runs.csv", "observations.csv", "report.md", "hit-rate.png"]
    names += [f"timeline-{format_window(w)}.png" for w in spec.windows]
    if len(spec.engine_names()) > 1:
        names.append("engines.png")
    if spec.price is not None:
        names += ["cost.md", "cost.png"]
    return names


def write_sweep(args: argparse.Namespace) -> int:
    """Plan the sweep, land it run by run, print the table (or JSON) and write the output folder."""
    plan = plan_sweep(sweep_spec(args))
    spec = plan.spec
    out: Path = args.out
    check_out_dir(out, output_names(spec))
    writer = SweepWriter(out, spec.price)
    runs = _land_with_progress(plan, writer, show=not args.quiet and sys.stderr.isatty())
    raise_if_interrupted()
    runs_df = runs_frame(runs)
    obs_df = observations_frame(runs)
    from prefixbench.reports.charts import hit_rate_chart, timeline_chart

    hit_rate_chart(runs_df, out / "hit-rate.png")
    for window in spec.windows:
        timeline_chart(obs_df, window, out / f"timeline-{format_window(window)}.png")
    written = ["runs.csv", "observations.csv", "report.md", "hit-rate.png", "timeline-*.png"]
    sections = [report_markdown(spec, runs_df)]
    if runs_df["engine"].nunique() > 1:
        from prefixbench.reports.engines import comparison_markdown, engines_chart

        sections.append(comparison_markdown(runs_df, obs_df))
        engines_chart(runs_df, obs_df, out / "engines.png")
        written.append("engines.png")
    costs = None
    if spec.price is not None:
        import pandas as pd

        from prefixbench.reports.cost import cost_chart, cost_markdown, cost_text, run_costs

        # Priced once, as each run landed (SweepWriter).
        costs = run_costs(pd.concat(writer.priced_observations, ignore_index=True))
        section = cost_markdown(costs, spec.price)
        (out / "cost.md").write_text(section, encoding="utf-8")
        sections.append(section)
        cost_chart(costs, out / "cost.png", title=f"Cost per run at {spec.price.model} prices")
        written += ["cost.md", "cost.png"]
    (out / "report.md").write_text("\n".join(sections), encoding="utf-8")
    runs_text = runs_json(runs_df, costs)
    _write_sweep_html(out, spec, runs_df, obs_df, runs_text)
    written.append("report.html")
    if args.format == "json":
        print(runs_text)
    else:
        print(text_table(runs_df))
        if costs is not None:
            print(f"\ncost at {spec.price.model} prices (USD):")
            print(cost_text(costs))
    if not args.quiet:
        print(f"wrote {out}/: {', '.join(written)}", file=sys.stderr)
    return 0


def _write_sweep_html(out: Path, spec: SweepSpec, runs_df, obs_df, runs_text: str) -> None:
    """report.html: the same runs as ``--format json`` prints, with the charts as inline SVG."""
    import json

    from prefixbench.reports.html_pages import sweep_page, write_html

    params = runs_df["params"].iloc[0] if len(runs_df) else ""
    lines = [
        f"workload: {spec.workload} ({params.replace(';', ', ')})",
        f"windows: {', '.join(format_window(w) for w in spec.windows)} (k = 1,000 tokens)",
        f"engines: {', '.join(spec.engine_names())}; presets: {', '.join(spec.presets)}",
        f"cache model: {spec.cache} (tokens: {spec.tokenizer}); provider profile: {spec.profile}",
    ]
    if spec.price is not None:
        lines.append(f"prices: {spec.price.model}" + (f" (in force from {spec.price.effective})" if spec.price.effective else ""))
    write_html(out / "report.html", sweep_page(lines, json.loads(runs_text), obs_df, priced=spec.price is not None))


def _land_with_progress(plan: SweepPlan, writer: RunSink, show: bool) -> list[Run]:
    if not show:
        return land_sweep(plan, writer, raise_if_interrupted)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as progress:
        task = progress.add_task("sweep", total=len(plan.runs))

        def on_run(number: int, total: int, run: Run) -> None:
            progress.update(
                task,
                completed=number,
                description=f"{run.workload} {format_window(run.window)} {run.engine}/{run.preset}",
            )

        return land_sweep(plan, writer, raise_if_interrupted, on_run)
