"""The kinds of report.html: a sweep, a check, an audit. Each page embeds the JSON the command
prints with ``--format json`` and draws its tables and charts from that same data."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from prefixbench.kernel.presets import PRESET_ORDER
from prefixbench.reports.frames import format_window, ordered
from prefixbench.reports.html import (
    READ,
    REJECTED,
    UNCACHED,
    WRITE_1H,
    WRITE_5M,
    Bar,
    Cell,
    Group,
    fmt_int,
    fmt_pct,
    fmt_usd,
    grouped_bars,
    legend,
    matrix,
    note,
    num,
    page,
    stacked_bars,
    table,
)

SEGMENTS_LEGEND = [
    ("cache read", READ),
    ("cache write (5 m)", WRITE_5M),
    ("cache write (1 h)", WRITE_1H),
    ("uncached input", UNCACHED),
    ("rejected (400): never reached the cache, not uncached", REJECTED),
]


def write_html(path: Path, text: str) -> None:
    """Write the page whole, then rename it into place (never a half-written report.html)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


# --- sweep ---------------------------------------------------------------------------------


def _run_label(rec: dict, multi_engine: bool) -> str:
    return f"{rec['engine']}/{rec['preset']}" if multi_engine else str(rec["preset"])


def _hits_text(values: Sequence[float]) -> str:
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return fmt_pct(lo) if fmt_pct(lo) == fmt_pct(hi) else f"{lo * 100:.1f}-{fmt_pct(hi)}"


def sweep_page(
    spec_lines: Sequence[str], runs: list[dict], observations: pd.DataFrame, *, priced: bool
) -> str:
    """report.html of a sweep. ``runs`` is exactly what ``sweep --format json`` prints."""
    multi_engine = len({r["engine"] for r in runs}) > 1
    windows = sorted({int(r["window"]) for r in runs})
    order = {p: i for i, p in enumerate(PRESET_ORDER)}
    runs_sorted = sorted(
        enumerate(runs), key=lambda ir: (int(ir[1]["window"]), ir[1]["engine"], order.get(ir[1]["preset"], 99), ir[1]["preset"])
    )
    sections = [("setup", "What ran", "<ul>" + "".join(f"<li>{_esc(line)}</li>" for line in spec_lines) + "</ul>")]
    sections.append(("runs", "Runs", _runs_table(runs_sorted, multi_engine, priced) + note(
        "summary calls: the uncached tokens each summary (compaction) call paid; summary hit: the range of their hit "
        "rates; session: every accepted request of the run; vs legacy: session uncached against the legacy run of the "
        "same window and engine (* when that legacy run had rejected requests, so its total is not what a working agent "
        "would have paid). 400s are rejected requests: they never reach the cache and are left out of the token totals."
    )))
    sections.append(("hit-rate", "Summary-call hit rate", _hit_rate_chart(runs, windows, multi_engine)))
    sweep_legend = [
        ("cache read", READ),
        ("uncached, written to the cache (5 m TTL where the model has one)", WRITE_5M),
        ("uncached, written with a 1 h TTL", WRITE_1H),
        ("uncached, not stored", UNCACHED),
        ("rejected (400): never reached the cache, not uncached", REJECTED),
    ]
    timeline = [legend(sweep_legend), note(
        "One bar a request, in send order: cache read, the uncached tokens the cache model stored (byte-exact stores "
        "every one; TTL models split 5 m and 1 h) and the rest of the uncached input, stacked. A triangle "
        "above a bar marks a summary (compaction) call; hover a bar for its numbers and where it diverged from what was "
        "cached. Rejected requests are drawn grey and dashed with ×."
    )]
    for window in windows:
        timeline.append(f"<h3>{format_window(window)} window</h3>")
        for i, rec in runs_sorted:
            if int(rec["window"]) != window:
                continue
            obs = _run_observations(observations, rec)
            timeline.append(_timeline_chart(i, rec, obs, multi_engine))
    sections.append(("timeline", "Requests over time", "".join(timeline)))
    if priced:
        sections.append(("cost", "Cost", _cost_section(runs_sorted, windows, multi_engine)))
    sections.append(("files", "Files", note(
        "Beside this page in the output folder: runs.csv, observations.csv, report.md and the PNG charts "
        "(hit-rate.png, timeline-<window>.png, engines.png and cost.png when they apply) for pasting into documents."
    )))
    data = {"kind": "sweep", "runs": runs}
    subtitle = f"{len(runs)} runs at {', '.join(format_window(w) for w in windows)}"
    return page("sweep", "prefixbench sweep", subtitle, sections, data)


def _esc(text: str) -> str:
    from html import escape

    return escape(text)


def _runs_table(runs_sorted: list[tuple[int, dict]], multi_engine: bool, priced: bool) -> str:
    header = ["window"] + (["engine"] if multi_engine else []) + ["preset", "profile", "folds", "400s",
              "summary calls, uncached tokens", "summary hit", "session prompt", "session cached", "session uncached",
              "session written", "vs legacy"]
    if priced:
        header += ["total", "saving vs legacy"]
    rows = []
    for i, r in runs_sorted:
        change = r.get("uncached_change_vs_legacy")
        change_text = "-" if r["preset"] == "legacy" or change is None else f"{change * 100:+.1f}%" + ("*" if r.get("legacy_rejected") else "")
        cells: list[Cell | str] = [format_window(int(r["window"]))]
        if multi_engine:
            cells.append(str(r["engine"]))
        cells += [
            str(r["preset"]),
            str(r["profile"]),
            num("num_folds", r["num_folds"], str(r["num_folds"])),
            num("num_rejected", r["num_rejected"], str(r["num_rejected"])),
            num("summary_uncached_tokens", r["summary_uncached_tokens"],
                " / ".join(fmt_int(v) for v in r["summary_uncached_tokens"]) or "-"),
            num("summary_hit_ratio", r["summary_hit_ratio"], _hits_text(r["summary_hit_ratio"])),
            num("session_prompt_tokens", r["session_prompt_tokens"], fmt_int(r["session_prompt_tokens"])),
            num("session_cached_tokens", r["session_cached_tokens"], fmt_int(r["session_cached_tokens"])),
            num("session_uncached_tokens", r["session_uncached_tokens"], fmt_int(r["session_uncached_tokens"])),
            num("session_written_tokens", r["session_written_tokens"], fmt_int(r["session_written_tokens"])),
            num("uncached_change_vs_legacy", change, change_text),
        ]
        if priced:
            saving = r.get("saving_vs_legacy_usd")
            cells += [
                num("total_usd", r["total_usd"], fmt_usd(r["total_usd"])),
                num("saving_vs_legacy_usd", saving, "-" if saving is None else fmt_usd(saving)),
            ]
        rows.append(({"data-run": str(i)}, cells))
    return table(header, rows)


def _hit_rate_chart(runs: list[dict], windows: list[int], multi_engine: bool) -> str:
    series = ordered([_run_label(r, multi_engine) for r in runs], PRESET_ORDER)
    groups = []
    for window in windows:
        values = []
        for r in runs:
            if int(r["window"]) != window:
                continue
            hits = [h * 100 for h in r["summary_hit_ratio"]]
            label = _run_label(r, multi_engine)
            if not hits:
                values.append((label, None, None, None, f"{label} @{format_window(window)}: no summary call"))
                continue
            mean = sum(hits) / len(hits)
            tip = (f"{label} @{format_window(window)}: {len(hits)} summary calls, mean hit {mean:.1f}%, "
                   f"min {min(hits):.1f}%, max {max(hits):.1f}%")
            values.append((label, mean, min(hits), max(hits), tip))
        groups.append(Group(format_window(window), tuple(values)))
    return grouped_bars(groups, series, title="Summary calls served from the prefix cache (bar: mean, whisker: min..max)",
                        unit="%", ymax=100) + note("A run without a summary call has no bar (nothing to hit), not a zero.")


def _run_observations(observations: pd.DataFrame, rec: dict) -> pd.DataFrame:
    mask = (
        (observations["window"] == int(rec["window"]))
        & (observations["engine"] == rec["engine"])
        & (observations["preset"] == rec["preset"])
        & (observations["profile"] == rec["profile"])
        & (observations["cache"] == rec["cache"])
        & (observations["workload"] == rec["workload"])
    )
    return observations[mask].sort_values("index")


def _timeline_chart(i: int, rec: dict, obs: pd.DataFrame, multi_engine: bool) -> str:
    bars = []
    summary_no = 0
    for o in obs.itertuples(index=False):
        rejected = int(o.status) != 200
        cached, written, long_ = int(o.cached_tokens), int(o.written_tokens), int(o.written_long_tokens)
        uncached = int(o.uncached_tokens)
        plain = uncached - written
        attrs = {
            "data-index": str(int(o.index)),
            "data-purpose": str(o.purpose),
            "data-status": str(int(o.status)),
            "data-cached": str(cached if not rejected else 0),
            "data-uncached": str(uncached if not rejected else 0),
            "data-written": str(written if not rejected else 0),
            "data-prompt": str(int(o.prompt_tokens)),
        }
        if rejected:
            segments = (("rejected", float(o.prompt_tokens), REJECTED),)
            tip = f"request {int(o.index)} ({o.purpose}): REJECTED {int(o.status)}, {fmt_int(o.prompt_tokens)} prompt tokens never reached the cache\n{o.error}"
        else:
            segments = (("read", float(cached), READ), ("write5m", float(written - long_), WRITE_5M),
                        ("write1h", float(long_), WRITE_1H), ("uncached", float(plain), UNCACHED))
            tip = (f"request {int(o.index)} ({o.purpose}): {fmt_int(o.prompt_tokens)} prompt tokens\n"
                   f"read {fmt_int(cached)} · write {fmt_int(written)} (1 h: {fmt_int(long_)}) · uncached {fmt_int(plain)}\n"
                   f"hit {fmt_pct(float(o.hit_ratio))}" + (f"\ndiverged at {o.divergence}" if isinstance(o.divergence, str) and o.divergence else ""))
        marker = marker_tip = None
        if o.purpose == "compaction":
            summary_no += 1
            marker = "summary"
            marker_tip = f"summary call {summary_no}: hit {fmt_pct(float(o.hit_ratio))}, {fmt_int(uncached)} uncached"
        bars.append(Bar(segments, tip, attrs, marker=marker, marker_tip=marker_tip, rejected=rejected))
    title = f"{_run_label(rec, multi_engine)} @{format_window(int(rec['window']))}: {len(bars)} requests, {fmt_int(rec['session_uncached_tokens'])} uncached"
    return f'<div class="timeline" data-run="{i}">' + stacked_bars(bars, title=title, xlabel="request") + "</div>"


def _cost_section(runs_sorted: list[tuple[int, dict]], windows: list[int], multi_engine: bool) -> str:
    header = ["window", "run", "uncached input", "cache read", "cache write", "output", "total", "summary calls", "saving vs legacy"]
    rows = []
    for i, r in runs_sorted:
        saving = r.get("saving_vs_legacy_usd")
        pct = r.get("saving_vs_legacy_pct")
        rows.append(({"data-run": str(i)}, [
            format_window(int(r["window"])), _run_label(r, multi_engine),
            *(num(k, r[k], fmt_usd(r[k])) for k in ("uncached_input_usd", "cache_read_usd", "cache_write_usd", "output_usd", "total_usd")),
            num("compaction_usd", r.get("compaction_usd"), fmt_usd(r.get("compaction_usd") or 0)),
            num("saving_vs_legacy_usd", saving, "-" if saving is None else fmt_usd(saving) + ("" if pct is None else f" ({pct:.1f}%)")),
        ]))
    series = ordered([_run_label(r, multi_engine) for _, r in runs_sorted], PRESET_ORDER)
    groups = [
        Group(format_window(w), tuple(
            (_run_label(r, multi_engine), float(r["total_usd"]), None, None,
             f"{_run_label(r, multi_engine)} @{format_window(w)}: {fmt_usd(r['total_usd'])}")
            for _, r in runs_sorted if int(r["window"]) == w
        ))
        for w in windows
    ]
    return table(header, rows) + grouped_bars(groups, series, title="Dollars per run", unit="$")


# --- check ---------------------------------------------------------------------------------


def check_page(preset: str, records: list[dict]) -> str:
    """report.html of ``check``: the verdict of every spec, and a spec x window grid."""
    failed = [r for r in records if not r["passed"]]
    rows = []
    for i, r in enumerate(records):
        rows.append(({"data-result": str(i), "class": "pass" if r["passed"] else "fail"}, [
            r["spec"], r["engine"], r["preset"],
            Cell("-" if r["window"] is None else format_window(int(r["window"])), "window", r["window"]),
            Cell("PASS" if r["passed"] else "FAIL" + (" (vacuous)" if r["verdict"] == "vacuous" else ""), "verdict", r["verdict"], css="v"),
            Cell(r["figure"], "figure", r["figure"]),
        ]))
    cols = ordered(["-" if r["window"] is None else format_window(int(r["window"])) for r in records], ["-"])
    names = list(dict.fromkeys(f"{r['spec']} [{r['engine']}]" for r in records))
    cells = {
        (f"{r['spec']} [{r['engine']}]", "-" if r["window"] is None else format_window(int(r["window"]))): (r["passed"], r["figure"])
        for r in records
    }
    grid = matrix(names, cols, cells, title="Verdict per spec and window ('-': the spec runs at its own fixed setup)")
    summary = (f"{len(records) - len(failed)} passed, {len(failed)} failed"
               + (f": {', '.join(sorted({r['spec'] for r in failed}))}" if failed else ""))
    sections = [
        ("verdicts", "Verdicts", f'<p data-field="summary" data-passed="{len(records) - len(failed)}" data-failed="{len(failed)}">'
         f"<b>{_esc(summary)}</b></p>" + table(["spec", "engine", "preset", "window", "verdict", "figure that decided it"], rows)
         + note("A vacuous result (the run never exercised what the spec judges) fails: it proves nothing.")),
        ("grid", "Grid", grid),
    ]
    return page("check", f"prefixbench check: {preset}", summary, sections, {"kind": "check", "preset": preset, "results": records})
