"""The kinds of report.html: a sweep, a check, an audit. Each page embeds the JSON the command
prints with ``--format json`` and draws its tables and charts from that same data."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from prefixbench.kernel.presets import PRESET_ORDER
from prefixbench.reports.auditwords import causes_compaction_line, IDLE_GAP_MS, idle_duration, idle_gaps, headline_hit, hit_cell, lost_cell, loss_legend, lost_total_words, paid_cell, paid_total_words, left_out_counts, PREDICTED_HIT, REWRITE_LEGEND, MAIN_ABSENT, SESSIONLESS_ROW, SHARED_LEGEND, WRITES_NOT_REPORTED
from prefixbench.reports.html import (
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
from prefixbench.reports.tables import SAME_RUN, shows_engine, summaries_refused
from prefixbench.reports.palette import CACHED, PREDICTED, REJECTED, UNCACHED, WRITTEN, WRITTEN_1H, cause_colour
from prefixbench.workloads.audit.causes import divergence_cause
from prefixbench.workloads.audit.core import BAD_INPUT
from prefixbench.workloads.audit.schema import MAIN_ABSENT_FIELD
from prefixbench.simulator.observe import rejected_status
from prefixbench.simulator.windows import format_window

if TYPE_CHECKING:  # pandas (with reports/frames.py) only where a sweep page draws: an audit's page needs neither
    import pandas as pd

SEGMENTS_LEGEND = [
    ("cache read", CACHED),
    ("cache write (5 m)", WRITTEN),
    ("cache write (1 h)", WRITTEN_1H),
    ("uncached input", UNCACHED),
    ("rejected (400): never reached the cache, not uncached", REJECTED),
]


def write_html(path: Path, text: str) -> None:
    """Write the page whole, then rename it into place (never a half-written report.html)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


# --- sweep ---------------------------------------------------------------------------------


class RunLabels:
    """How the page names a run: ``engine/preset`` when several engines ran (it is true then),
    else the preset; then, in brackets, the run's workload and cache model when the page shows
    more than one, so two runs that differ only there are never one label (one bar, one row)."""

    def __init__(self, multi_engine: bool, extra: tuple[str, ...] = ()) -> None:
        self.multi_engine, self.extra = multi_engine, extra

    def __bool__(self) -> bool:
        return self.multi_engine


def _run_label(rec: dict, multi_engine: bool | RunLabels) -> str:
    base = f"{rec['engine']}/{rec['preset']}" if multi_engine else str(rec["preset"])
    extra = getattr(multi_engine, "extra", ())
    return f"{base} ({', '.join(str(rec[k]) for k in extra)})" if extra else base


def _refused_text(record: dict) -> str:
    refused = summaries_refused(record)
    return f" ({'+' if len(record['summary_uncached_tokens']) else ''}{refused:,} refused)" if refused else ""


def _hits_text(values: Sequence[float]) -> str:
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return fmt_pct(lo) if fmt_pct(lo) == fmt_pct(hi) else f"{lo * 100:.1f}-{fmt_pct(hi)}"


class AcrossSeeds:
    """What a sweep of several seeds did across them, for a page that draws one seed's runs:
    the seed drawn, how many ran, and the across-seeds table (header, rows, footnotes) of
    report.md, one row a configuration, median [min..max]."""

    def __init__(self, seed: int, count: int, header: Sequence[str], rows: Sequence[Sequence[str]], notes: Sequence[str]) -> None:
        self.seed, self.count, self.header, self.rows, self.notes = seed, count, header, rows, notes

    def section(self) -> str:
        numeric = {"seeds", "folds", "400s", "summary uncached, per run", "summary hit", "session uncached", "vs legacy"}
        cells = [({}, [Cell(text, numeric=name in numeric) for name, text in zip(self.header, row)]) for row in self.rows]
        return table(self.header, cells) + note(
            f"Each row is one configuration over its runs, one a seed ({self.count} seeds); seeds counts them. Each figure "
            "is the median over those runs, then [min..max] when they disagree; summary hit is taken over every summary "
            "call of those runs. vs legacy is taken seed by seed against the legacy run of the same seed, then "
            f"summarized. The sections below draw the runs of seed {self.seed} only."
        ) + "".join(note(text) for text in self.notes)


def sweep_page(
    spec_lines: Sequence[str], runs: list[dict], observations: pd.DataFrame, *, priced: bool,
    seeds: AcrossSeeds | None = None, same: Collection[int] = (),
) -> str:
    """report.html of a sweep. ``runs`` is exactly what ``sweep --format json`` prints (of the
    one seed drawn when ``seeds`` is given: its section comes first); ``same``: the positions in
    ``runs`` of runs identical to their legacy run (``vs legacy`` reads ``same run``)."""
    varying = tuple(k for k in ("workload", "cache") if len({str(r[k]) for r in runs}) > 1)
    multi_engine = RunLabels(shows_engine(r["engine"] for r in runs), varying)
    windows = sorted({int(r["window"]) for r in runs})
    order = {p: i for i, p in enumerate(PRESET_ORDER)}
    runs_sorted = sorted(
        enumerate(runs), key=lambda ir: (int(ir[1]["window"]), ir[1]["engine"], order.get(ir[1]["preset"], 99), ir[1]["preset"])
    )
    sections = [("setup", "What ran", "<ul>" + "".join(f"<li>{_esc(line)}</li>" for line in spec_lines) + "</ul>")]
    of_seed = ""
    if seeds is not None:
        sections.append(("seeds", f"Across {seeds.count} seeds", seeds.section()))
        of_seed = f" (seed {seeds.seed})"
    sections.append(("runs", f"Runs{of_seed}", _runs_table(runs_sorted, multi_engine, priced, same) + note(
        "summary calls: the uncached tokens each summary (compaction) call paid; summary hit: the range of their hit "
        "rates; session: every accepted request of the run; vs legacy: session uncached against the legacy run of the "
        "same window and engine (* when that legacy run had rejected requests, so its total is not what a working agent "
        "would have paid). 400s are rejected requests: they never reach the cache and are left out of the token totals."
    )))
    sections.append(("hit-rate", f"Summary-call hit rate{of_seed}", _hit_rate_chart(runs, windows, multi_engine)))
    sweep_legend = [
        ("cache read", CACHED),
        ("uncached, written to the cache (5 m TTL where the model has one)", WRITTEN),
        ("uncached, written with a 1 h TTL", WRITTEN_1H),
        ("uncached, not stored", UNCACHED),
        ("rejected (400): never reached the cache, not uncached", REJECTED),
    ]
    timeline = [legend(sweep_legend), note(
        "One bar a request, in send order: cache read, the uncached tokens the cache model stored (byte-exact stores "
        "every one; TTL models split 5 m and 1 h) and the rest of the uncached input, stacked. A triangle "
        "above a bar marks a summary (compaction) call; hover a bar for its numbers and where it diverged from what was "
        "cached. Rejected requests are drawn grey and dashed with ×."
    )]
    by_run = _observations_by_run(observations)
    for window in windows:
        timeline.append(f"<h3>{format_window(window)} window</h3>")
        for i, rec in runs_sorted:
            if int(rec["window"]) != window:
                continue
            key = (int(rec["window"]), *(rec[k] for k in RUN_OBSERVATION_KEYS[1:]))
            obs = by_run.get(key, observations.iloc[0:0])
            timeline.append(_timeline_chart(i, rec, obs, multi_engine))
    sections.append(("timeline", f"Requests over time{of_seed}", "".join(timeline)))
    if multi_engine:
        sections.append(("engines", f"Engines compared{of_seed}", _engines_section(runs, observations, windows)))
    if priced:
        sections.append(("cost", f"Cost{of_seed}", _cost_section(runs_sorted, windows, multi_engine)))
    sections.append(("files", "Files", note(
        "Beside this page in the output folder: runs.csv, observations.csv, report.md and the PNG charts "
        "(hit-rate.png, timeline-<window>.png, engines.png and cost.png when they apply) for pasting into documents."
    )))
    data = {"kind": "sweep", "runs": runs}
    at = ", ".join(format_window(w) for w in windows)
    subtitle = f"{len(runs)} runs at {at}" if seeds is None else (
        f"{len(runs)} configurations x {seeds.count} seeds at {at}; seed {seeds.seed} drawn")
    return page("sweep", "prefixbench sweep", subtitle, sections, data)


def _esc(text: str) -> str:
    from html import escape

    return escape(text)


def _runs_table(runs_sorted: list[tuple[int, dict]], multi_engine: bool | RunLabels, priced: bool, same: Collection[int] = ()) -> str:
    extra = getattr(multi_engine, "extra", ())  # workload, cache: columns when the page shows several
    header = ["window", *extra] + (["engine"] if multi_engine else []) + ["preset", "profile", "folds", "400s",
              "summary calls, uncached tokens", "summary hit", "session prompt", "session cached", "session uncached",
              "session written", "vs legacy"]
    if priced:
        header += ["total", "saving vs legacy"]
    rows = []
    for i, r in runs_sorted:
        change = r.get("uncached_change_vs_legacy")
        change_text = "-" if r["preset"] == "legacy" else SAME_RUN if i in same else "-" if change is None else f"{change * 100:+.1f}%" + ("*" if r.get("legacy_rejected") else "")
        cells: list[Cell | str] = [format_window(int(r["window"])), *(str(r[k]) for k in extra)]
        if multi_engine:
            cells.append(str(r["engine"]))
        cells += [
            str(r["preset"]),
            str(r["profile"]),
            num("num_folds", r["num_folds"], str(r["num_folds"])),
            num("num_rejected", r["num_rejected"], str(r["num_rejected"])),
            num("summary_uncached_tokens", r["summary_uncached_tokens"],
                (" / ".join(fmt_int(v) for v in r["summary_uncached_tokens"]) or "-") + _refused_text(r)),
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


def _hit_rate_chart(runs: list[dict], windows: list[int], multi_engine: bool | RunLabels) -> str:
    from prefixbench.reports.frames import ordered

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


#: The columns that tell one run's requests from another's on this page.
RUN_OBSERVATION_KEYS = ("window", "engine", "preset", "profile", "cache", "workload")


def _observations_by_run(observations: pd.DataFrame) -> dict[tuple, pd.DataFrame]:
    """Each run's requests in request order, keyed by :data:`RUN_OBSERVATION_KEYS` (one pass)."""
    if not len(observations):
        return {}
    return {
        (int(key[0]), *key[1:]): frame.sort_values("index")
        for key, frame in observations.groupby(list(RUN_OBSERVATION_KEYS), sort=False)
    }


#: The observation columns a timeline draws, in the order :func:`_timeline_chart` reads them.
TIMELINE_COLUMNS = (
    "index", "purpose", "status", "prompt_tokens", "cached_tokens", "written_tokens", "written_long_tokens",
    "uncached_tokens", "hit_ratio", "divergence", "error", "extends_previous", "reasoning_effort", "temperature", "stop", "rewrites",
)


def _family_words(effort: object, temperature: object, stop: object) -> str:
    """A request's family settings in words (``reasoning_effort max, temperature 0.2``), "" for the defaults."""
    parts = [f"{name} {value}" for name, value in (("reasoning_effort", effort), ("temperature", temperature), ("stop", stop))
             if value not in (None, "") and not (isinstance(value, float) and value != value)]
    return ", ".join(parts)


def _timeline_chart(i: int, rec: dict, obs: pd.DataFrame, multi_engine: bool | RunLabels) -> str:
    bars = []
    summary_no = 0
    # Plain tuples of the columns drawn (itertuples' named rows make a class on every call).
    rows = obs[list(TIMELINE_COLUMNS)].itertuples(index=False, name=None)
    families: list[str] = []  # the request families sent so far, in words, for the divergence causes
    for index, purpose, status, prompt, cached, written, long_, uncached, hit_ratio, divergence, error, extends, *envelope, rewrites in rows:
        family = _family_words(*envelope)
        why = ""
        if isinstance(divergence, str) and divergence:
            why = ": " + divergence_cause(
                divergence, first=not families, family=family, family_seen=family in families,
                earlier_families=tuple(dict.fromkeys(families)), rewrites=rewrites if isinstance(rewrites, str) else "", purpose=str(purpose),
                extends=extends is True or str(extends).lower() == "true",
            )
        families.append(family)
        rejected = rejected_status(int(status))
        cached, written, long_, uncached = int(cached), int(written), int(long_), int(uncached)
        plain = uncached - written
        attrs = {
            "data-index": str(int(index)),
            "data-purpose": str(purpose),
            "data-status": str(int(status)),
            "data-cached": str(cached if not rejected else 0),
            "data-uncached": str(uncached if not rejected else 0),
            "data-written": str(written if not rejected else 0),
            "data-prompt": str(int(prompt)),
        }
        if rejected:
            segments = (("rejected", float(prompt), REJECTED),)
            tip = f"request {int(index)} ({purpose}): REJECTED {int(status)}, {fmt_int(prompt)} prompt tokens never reached the cache\n{error}"
        else:
            segments = (("read", float(cached), CACHED), ("write5m", float(written - long_), WRITTEN),
                        ("write1h", float(long_), WRITTEN_1H), ("uncached", float(plain), UNCACHED))
            tip = (f"request {int(index)} ({purpose}): {fmt_int(prompt)} prompt tokens\n"
                   f"read {fmt_int(cached)} · write {fmt_int(written)} (1 h: {fmt_int(long_)}) · uncached {fmt_int(plain)}\n"
                   f"hit {fmt_pct(float(hit_ratio))}" + (f"\ndiverged at {divergence}{why}" if why else ""))
        marker = marker_tip = None
        if purpose == "compaction":
            summary_no += 1
            marker = "summary"
            marker_tip = f"summary call {summary_no}: hit {fmt_pct(float(hit_ratio))}, {fmt_int(uncached)} uncached"
        bars.append(Bar(segments, tip, attrs, marker=marker, marker_tip=marker_tip, rejected=rejected))
    title = f"{_run_label(rec, multi_engine)} @{format_window(int(rec['window']))}: {len(bars)} requests, {fmt_int(rec['session_uncached_tokens'])} uncached"
    return f'<div class="timeline" data-run="{i}">' + stacked_bars(bars, title=title, xlabel="request") + "</div>"


def _engines_section(runs: list[dict], observations: pd.DataFrame, windows: list[int]) -> str:
    """Per window, each engine's uncached tokens split into summary calls, refills, silent rewrites and growth."""
    import pandas as pd
    from prefixbench.reports.engines import PART_COLOURS, PART_LABELS, PARTS, comparison_preset, engine_costs, why_sentence

    preset = comparison_preset(pd.DataFrame({"preset": [r["preset"] for r in runs]}))
    parts = []
    for window in windows:
        costs = engine_costs(observations, window, preset)
        if not costs:
            continue
        bars = [
            Bar(
                tuple((part, float(getattr(c, part)), PART_COLOURS[part]) for part in PARTS),
                f"{c.engine} @{format_window(window)} ({preset}): {c.total:,} uncached = summary calls {c.summary:,} "
                f"({c.num_summaries}) + refills {c.refill:,} ({c.num_refills}) + silent rewrites {c.silent:,} "
                f"({c.num_silent}) + growth {c.growth:,}",
                {"data-index": c.engine, "data-engine": c.engine, "data-total": str(c.total)},
            )
            for c in costs
        ]
        parts.append(f"<h3>{format_window(window)} window, {_esc(preset)}</h3>"
                     + stacked_bars(bars, title=f"Uncached tokens by engine at {format_window(window)}", xlabel="engine", height=240, width=700)
                     + note(why_sentence(window, costs).replace("**", "")))
    return legend([(PART_LABELS[part], PART_COLOURS[part]) for part in PARTS]) + "".join(parts)


def _known(value: object) -> object:
    """``value``, or None where it is missing (None, or pandas' NaN for a column some runs lack)."""
    return None if value is None or (isinstance(value, float) and value != value) else value


def _cost_section(runs_sorted: list[tuple[int, dict]], windows: list[int], multi_engine: bool | RunLabels) -> str:
    from prefixbench.reports.frames import ordered

    # Explicit-cache storage is a column where some run paid any (gemini:mode=explicit).
    storage = any(float(r.get("storage_usd") or 0) for _, r in runs_sorted)
    parts = ("uncached_input_usd", "cache_read_usd", "cache_write_usd", "output_usd", *(("storage_usd",) if storage else ()), "total_usd")
    header = ["window", "run", "uncached input", "cache read", "cache write", "output",
              *(("explicit-cache storage",) if storage else ()), "total", "summary calls", "saving vs legacy"]
    rows = []
    for i, r in runs_sorted:
        saving = r.get("saving_vs_legacy_usd")
        pct = r.get("saving_vs_legacy_pct")
        rows.append(({"data-run": str(i)}, [
            format_window(int(r["window"])), _run_label(r, multi_engine),
            *(num(k, r[k], fmt_usd(r[k])) for k in parts),
            # unknown (the observations name no purpose) is "-", not $0
            num("compaction_usd", _known(r.get("compaction_usd")), "-" if _known(r.get("compaction_usd")) is None else fmt_usd(r["compaction_usd"])),
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


def check_page(preset: str | None, records: list[dict]) -> str:
    """report.html of ``check``: the verdict of every spec, and a spec x window grid."""
    from prefixbench.reports.verdicts import count_statuses
    from prefixbench.reports.frames import ordered

    # A user engine's specs run once per workload and profile: each case is its own row and grid
    # line, as check prints it ([engine/workload/profile]), never one case's verdict for another's.
    cases = any(r.get("workload") is not None for r in records)

    def case(r: dict) -> list[str]:
        return [r.get("workload") or "-", r.get("profile") or "-"] if cases else []

    # check --trace files each profile's verdicts under "preset": they too are apart.
    profiles = not cases and len({r["preset"] for r in records}) > 1

    def label(r: dict) -> str:
        return f"{r['spec']} [{'/'.join([r['engine'], *case(r), *([r['preset']] if profiles else [])])}]"

    rows = []
    for i, r in enumerate(records):
        rows.append(({"data-result": str(i), "class": r["status"].lower()}, [
            r["spec"], r["engine"], *case(r), r["preset"],
            Cell("-" if r["window"] is None else format_window(int(r["window"])), "window", r["window"]),
            Cell(r["status"] + (" (vacuous)" if r["verdict"] == "vacuous" else ""), "verdict", r["verdict"], css="v"),
            Cell(r["figure"], "figure", r["figure"]),
        ]))
    cols = ordered(["-" if r["window"] is None else format_window(int(r["window"])) for r in records], ["-"])
    names = list(dict.fromkeys(label(r) for r in records))
    cells = {
        (label(r), "-" if r["window"] is None else format_window(int(r["window"]))): (
            None if r["status"] == "SKIP" else r["status"] == "PASS", r["figure"])
        for r in records
    }
    grid = matrix(names, cols, cells, title="Verdict per spec and window ('-': the spec runs at its own fixed setup)")
    # The terminal's closing line counts with the same function: the two cannot disagree.
    counted = count_statuses((r["spec"], r["status"]) for r in records)
    summary = counted.line(preset)  # ("preset NAME: ..." as the terminal says it; none on --trace)
    sections = [
        ("verdicts", "Verdicts", f'<p data-field="summary" data-passed="{counted.passed}" data-skipped="{counted.skipped}" data-failed="{counted.failed}">'
         f"<b>{_esc(summary)}</b></p>" + table(["spec", "engine", *(["workload", "profile"] if cases else []), "preset", "window", "verdict",
                                              "figure that decided it"], rows)
         + note("A vacuous result (the run never exercised what the spec judges) proves nothing: it is skipped, "
                "as in the pytest plugin and check --trace (check --vacuous fail fails it).")),
        ("grid", "Grid", grid),
    ]
    title = f"prefixbench check: {preset}" if preset is not None else "prefixbench check: a recorded log (--trace)"
    return page("check", title, summary, sections, {"kind": "check", "preset": preset, "results": records})


# --- audit ---------------------------------------------------------------------------------


def _cut(label: str) -> str:
    """``label`` with each part longer than 24 characters cut to its first 8 (a file's stem:
    ``fe5e1c67….jsonl`` for a session uuid)."""
    *folders, name = label.split("/")
    stem, dot, ext = name.rpartition(".")
    if dot and len(stem) > 24:
        name = f"{stem[:8]}…{dot}{ext}"
    return "/".join([*(f"{part[:8]}…" if len(part) > 24 else part for part in folders), name])


def _short(path: str, labels: dict[str, str] | None = None) -> str:
    """A file name short enough for a table cell (``fe5e1c67….jsonl`` for a session uuid): its
    label among the page's files where ``labels`` has one (:func:`_cell_labels`:
    ``2bc22dd3…/events/0.json`` where other files share its name)."""
    found = (labels or {}).get(path)
    return found if found is not None else _cut(Path(path).name)


def _cell_labels(files: list[str]) -> dict[str, str]:
    """Each of a page's files' cell: its label among them
    (:func:`~prefixbench.reports.auditwords.file_labels`), its long parts cut where that tells it
    from every other file still (two ``session-2026-12-05T…`` names, or two project folders of
    one beginning, are not cut to one)."""
    from prefixbench.reports.auditwords import file_labels

    labels = file_labels(files)
    cut = {path: _cut(label) for path, label in labels.items()}
    shown = Counter(cut.values())
    return {path: cut[path] if shown[cut[path]] == 1 and (cut[path] == label or cut[path] not in labels.values()) else label
            for path, label in labels.items()}


def _lane_label(file: str, lane: str, many_files: dict[str, str]) -> str:
    """``lane`` alone on a page of one file, else after its file's label (``many_files``)."""
    return f"{_short(file, many_files)} · {lane}" if many_files else lane


def audit_page(record: dict, what_if: list[dict] | None, basis: str | None = None,
               hosts: Iterable[tuple[str, str, int]] = (), lanes: list[dict] | None = None,
               relays: Iterable[tuple[str, str, str, int]] = (),
               services: Iterable[tuple[str, str, str, int]] = ()) -> str:
    """report.html of ``audit``. ``record`` is the ``--format json`` object (what_if added);
    ``basis``: what its hit ratio is over (:func:`~prefixbench.reports.auditwords.ratio_basis`, the
    terminal's words), counted from ``record``'s requests when not given; ``hosts``: the requests
    left unpriced by the host that served them, as the terminal's headline counts them
    (:attr:`~prefixbench.workloads.audit.core.AuditResult.unpriced_hosts`; not in ``record``);
    ``lanes``: the rows of the lanes table when they are not ``record``'s (sessionless gateway
    calls folded into one row a file: :func:`~prefixbench.workloads.audit.core.fold_sessionless`);
    ``relays``: the requests that went through a relay, as the terminal's headline names them
    (:attr:`~prefixbench.workloads.audit.core.AuditResult.relays`; not in ``record``); ``services``:
    the requests that went to a service of the maker's models (Azure OpenAI), as the headline
    names them (:attr:`~prefixbench.workloads.audit.core.AuditResult.services`; not in ``record``)."""
    from prefixbench.reports.auditwords import no_usage_words, ratio_basis, relay_words, service_words

    if basis is None:
        requests = record["requests"]
        basis = ratio_basis(sum(r["reported_cache_read"] is not None for r in requests), len(requests))
    data = dict(record)
    if what_if is not None:
        data["what_if"] = what_if
    totals = record["totals"]
    files = sorted({r["file"] for r in record["requests"]} | {f["file"] for f in record.get("files", [])})
    many = _cell_labels(files) if len(files) > 1 else {}  # each file's label; none on a page of one
    # What to change first, then the totals, the worst requests and the roll-ups a team reads
    # before the detail.
    sections = []
    if record.get("recommendations") is not None or record.get("loss_split") is not None:
        from prefixbench.reports.advice import advice_html

        unseen = bool(totals["requests"]) and basis == ratio_basis(0, int(totals["requests"])) and not record.get("causes")
        sections.append(("what-to-change", "What to change", advice_html(record, unseen)))
    sections.append(("totals", "Totals", _audit_totals(totals, record, basis)))
    sections.append(("worst", "The worst requests", _audit_worst(record["requests"], many, totals)))
    sections.append(("sessions", "Per session", _audit_roll_ups(record.get("sessions", []), "session", many)))
    sections.append(("days", "Per day (UTC)", _audit_roll_ups(record.get("days", []), "day")))
    sections.append(("causes", "Where the money went", _audit_causes(record["causes"], totals, [m["provider"] for m in record.get("models", [])],
                                                                 bool(record.get("compactions")))))
    sections.append(("waterfall", "Cost waterfall", _audit_waterfall(totals, record["causes"], what_if)))
    if record.get("compactions"):
        sections.append(("compactions", "Compactions", _audit_compactions(record["compactions"], many)))
    if what_if is not None:
        sections.append(("what-if", "What each fix would have saved", _what_if_section(what_if, many)))
    if record.get("explicit_caches"):
        sections.append(("explicit-caches", "Explicit caches the logs created",
                         _audit_explicit_caches(record["explicit_caches"], totals, many)))
    folded = lanes is not None
    sections.append(("lanes", "Lanes: predicted vs reported", _audit_lanes(record["lanes"] if lanes is None else lanes, many)
                     + (note(SESSIONLESS_ROW + ".") if folded else "")))
    shown = record.get("requests_shown")
    if shown is None:
        sections.append(("requests", "Every request", _audit_requests(record["requests"], many)))
    else:  # a big audit: the worst requests only, the rest in the files beside the page
        lane_sizes = {(lane["file"], lane["lane"]): lane["requests"] for lane in record["lanes"]}
        sections.append(("requests", "The worst requests", _requests_shown_note(shown)
                         + _audit_requests(record["requests"], many, lane_sizes)))
    if record.get("files"):
        sections.append(("files", "Files and calibration", _audit_files(record["files"], record.get("notes", []), many)))
    ranged = int(totals.get("ranged_requests") or 0)
    no_usage, no_price, by_host = left_out_counts(
        ((f.get("format", ""), int(f.get("unpriced_no_usage") or 0)) for f in record.get("files", [])),
        ((m["model"], int(m.get("unpriced_requests") or 0), int(m.get("unpriced_no_usage") or 0), int(m.get("ranged_requests") or 0))
         for m in record.get("models", [])), hosts)
    paid = paid_total_words(fmt_usd(totals['cost_usd'] or 0), int(totals['requests']), no_usage, no_price,
                            (ranged, Decimal(str(totals.get("ranged_low_usd") or 0)), Decimal(str(totals.get("ranged_high_usd") or 0))),
                            by_host) + relay_words(relays) + service_words(services, no_price)
    # A file left out as bad input is listed under files but was not read: the header counts the
    # files audited and names the others.
    left_out = sorted({f["file"] for f in record.get("files", []) if f.get("format") == BAD_INPUT})
    counted = f"{len(files) - len(left_out)} file(s)" + (f" ({len(left_out)} left out as bad input)" if left_out else "")
    lost = lost_total_words(fmt_usd(totals['lost_usd'] or 0), not Decimal(str(totals['lost_usd'] or 0)),
                      sum(int(c.get('unpriced_requests') or 0) for c in record.get('causes', [])),
                      seen=not totals['requests'] or basis != ratio_basis(0, int(totals['requests'])) or bool(record.get('causes')))
    # Where no request reports usage, the tokens the logs' own lengths give, in the table's words.
    tokens = (no_usage_words(totals.get("logged_prompt_tokens"), totals.get("logged_output_tokens")) + "; "
              if totals["requests"] and sum(no_usage.values()) >= totals["requests"] else "")
    subtitle = f"{totals['requests']:,} request{'' if totals['requests'] == 1 else 's'} in {counted}: {tokens}{paid}, {lost}, hit ratio {headline_hit(totals['hit_ratio'], basis)}"
    return page("audit", "prefixbench audit", subtitle, sections, data)


#: Worst requests listed near the top of report.html.
WORST_ON_PAGE = 10
#: Characters of a miss's detail a table cell shows (cut at a word boundary; the whole text on hover).
DETAIL_CHARS = 140


def _audit_worst(requests: list[dict], many: dict[str, str], totals: dict | None = None) -> str:
    """The misses that lost the most dollars (then tokens), each with its cause and detail; a long
    detail is cut at a word boundary, its whole text one hover (and one click: the cell's
    ``<details>``) away. With none, a page whose requests (``totals``) report no cache use says no
    miss could be seen, not that none lost anything."""
    from prefixbench.reports.auditwords import request_where, usd_cents4
    from prefixbench.reports.textable import ellipsize
    from prefixbench.workloads.audit.causes import cause_meaning

    ranked = sorted(
        ((i, r) for i, r in enumerate(requests) if r["cause"] and (r["lost_tokens"] or 0) > 0),
        key=lambda item: (-(item[1]["lost_usd"] or 0), -(item[1]["lost_tokens"] or 0), item[1]["file"], item[1]["line"]),
    )[:WORST_ON_PAGE]
    if not ranked:
        unseen = int((totals or {}).get("unseen_requests") or 0)
        if unseen and unseen >= int((totals or {}).get("requests") or 0):
            return note("Lost unknown: no request reports its cache use, so no miss could be seen.")
        if unseen:
            return note(f"No request that reports its cache use lost anything; {unseen:,} request(s) report none, "
                        "so a miss of theirs could not be seen.")
        return note("No request lost anything: every miss was a first write or read what it could.")
    rows = []
    for i, r in ranked:
        detail = r["detail"] or ""
        short = ellipsize(detail, DETAIL_CHARS)
        rows.append(({"data-worst": str(i)}, [
            request_where(r["file"], r["line"], r.get("path", ""), lambda file: _short(file, many)) if many
            else f"line {r['line']}" + (f" {r['path']}" if r.get("path") else ""),
            r["lane"], _when(r["timestamp"]),
            num("reported_cache_read", r["reported_cache_read"], fmt_int(r["reported_cache_read"] or 0)),
            num("expected_cache_read", r["expected_cache_read"], fmt_int(r["expected_cache_read"])),
            num("lost_usd", r["lost_usd"], usd_cents4(r["lost_usd"])),
            Cell(r["cause"], tip=f"{r['cause']} ({r['evidence']}): {cause_meaning(r['cause'], [r.get('provider', '')])}", css="cause", colour=cause_colour(r["cause"])),
            Cell(short, tip=detail if short != detail else None, css="detail", more=detail if short != detail else None),
        ]))
    return table(["where", "lane", "sent", "read", "expected", "lost", "cause", "detail"], rows, css="worst") + note(
        "The misses that lost the most, costliest first. A long detail ends in … at a word boundary: hover it, or "
        "open it, for the whole text."
    )


def _when(stamp: str | None) -> str:
    """``2025-09-03 00:52:54`` of an ISO timestamp (a relative one as it is)."""
    if not stamp:
        return "-"
    return stamp[:19].replace("T", " ") if not stamp.startswith("+") else stamp


def _span_text(first: str | None, last: str | None) -> str:
    """``first .. last``, the day left out of ``last`` when it is ``first``'s."""
    if first is None or last is None:
        return "no timestamp"
    a, b = _when(first), _when(last)
    return a if a == b else f"{a} .. {b[11:] if b[:10] == a[:10] else b}"


def _paid(group: dict) -> str:
    """A session's, day's, lane's or file's *paid* cell, as the terminal's (:func:`paid_cell`)."""
    # (null where none of its requests is priced: the cell then says why, not a figure)
    return paid_cell(fmt_usd(group["cost_usd"] or 0), group["requests"], group.get("unpriced_requests", 0),
                     group.get("unpriced_no_usage", 0), group.get("ranged_requests", 0), group.get("self_hosted_requests", 0))


def _lost(group: dict) -> str:
    """Its *lost* cell: ``-`` where none of its requests is priced or reports its cache use (:func:`lost_cell`)."""
    if group["lost_usd"] is None:  # none of its requests is priced or seen (:func:`none_priced`, :func:`none_seen`)
        return "-"
    return lost_cell(fmt_usd(group["lost_usd"]), group["requests"], group.get("unpriced_requests", 0))


def _audit_roll_ups(rolls: list[dict], what: str, labels: dict[str, str] | None = None) -> str:
    """One row a session (the agent's: its main lane, subagents and compactions, in one log file or
    several) or a UTC day."""
    if not rolls:
        return note(f"No request, so no {what}.")
    rows = []
    for r in rolls:
        span = _span_text(r["first"], r["last"])
        rows.append(({f"data-{what}": r["key"]}, [
            Cell(_short(r["key"], labels) + (f" ({MAIN_ABSENT})" if r.get(MAIN_ABSENT_FIELD) else "") if what == "session"
                 else r["key"], tip=r["key"] if what == "session" else None),
            span,
            num("requests", r["requests"], fmt_int(r["requests"])),
            num("lanes", r["lanes"], fmt_int(r["lanes"])),
            "-" if r["misses"] is None else num("misses", r["misses"], fmt_int(r["misses"])),
            num("hit_ratio", r["hit_ratio"], hit_cell(r["hit_ratio"], r.get("cache_read", 0) is None)),
            "-" if r.get("rewrite_factor") is None else num("rewrite_factor", r["rewrite_factor"], f"{r['rewrite_factor']:.2f}x"),
            num("cost_usd", r["cost_usd"], _paid(r)),
            num("lost_usd", r["lost_usd"], _lost(r)),
            Cell(r["top_cause"] or "-", css="cause", colour=cause_colour(r["top_cause"]) if r["top_cause"] else None),
        ]))
    header = [what, "time (UTC)", "requests", "lanes", "misses", "hit", "re-write", "paid", "lost", "top cause"]
    legend = note(REWRITE_LEGEND[0].upper() + REWRITE_LEGEND[1:] + ".") if any(r.get("rewrite_factor") is not None for r in rolls) else ""
    if any(r.get("cache_read", 0) is None and r["hit_ratio"] is not None for r in rolls):
        legend += note(PREDICTED_HIT + ".")
    return table(header, rows, css=f"rollup {what}s") + legend + _loss_legend(rolls)


def _loss_legend(groups: list[dict]) -> str:
    """The legend of a *lost* cell some request of its row leaves untold (:func:`loss_legend`)."""
    return "".join(note(line + ".") for line in loss_legend(
        (g["requests"], g.get("unpriced_requests", 0), g.get("unseen_requests", 0)) for g in groups))


def _audit_totals(totals: dict, record: dict, basis: str = "") -> str:
    cells = [
        num("requests", totals["requests"], fmt_int(totals["requests"])),
        # A count no request reports is null ('-'), as paid and lost are where no request is priced.
        *("-" if totals.get(field, 0) is None else num(field, totals.get(field, 0), fmt_int(totals.get(field, 0)))
          for field in ("input", "cache_read", "cache_write", "cache_write_1h", "output")),
        "-" if totals["hit_ratio"] is None else num("hit_ratio", totals["hit_ratio"], fmt_pct(totals["hit_ratio"]) + basis),
        "-" if totals["cost_usd"] is None else num("cost_usd", totals["cost_usd"], fmt_usd(totals["cost_usd"])),
        "-" if totals["lost_usd"] is None else num("lost_usd", totals["lost_usd"], fmt_usd(totals["lost_usd"])),
    ]
    header = ["requests", "uncached input", "cache read", "cache write", "of it 1 h", "output", "hit ratio", "paid", "lost to misses"]
    # The tokens are what the provider reported; the hit ratio is over the requests that report
    # their cache use, or the cache model's prediction where none does (the terminal's words).
    said = ("Tokens as the provider reported them (a request that reports no usage adds nothing to them)"
            + (f"; hit ratio{basis}" if basis else "") + ".")
    return table(header, [({"data-totals": "1"}, cells)]) + note(
        said + " Lost: for each miss, the tokens that should have been read (what the "
        "lane's previous request left cached, or the shared head) paid at the write or input price instead."
    )


def _audit_causes(causes: list[dict], totals: dict, providers: list[str], compactions: bool = False) -> str:
    from prefixbench.workloads.audit.causes import cause_meaning

    if not totals["requests"]:
        return note("The log holds no model call with usage: nothing was paid, nothing missed.")
    if not causes:
        return note("No miss: every request read what it could.")
    rows = []
    for i, c in enumerate(causes):
        shared = c.get("shared_requests", 0)  # misses another cause leads whose loss it shares (schema 5)
        rows.append(({"data-cause": c["cause"]}, [
            Cell(c["cause"], tip=cause_meaning(c["cause"], providers), css="cause", colour=cause_colour(c["cause"])),
            num("requests", c["requests"], fmt_int(c["requests"]) + (f" +{fmt_int(shared)} shared" if shared else "")),
            num("lost_tokens", c["lost_tokens"], fmt_int(c["lost_tokens"])),
            num("lost_usd", c["lost_usd"], lost_cell(fmt_usd(c["lost_usd"] or 0), c["requests"] + shared, c.get("unpriced_requests", 0), count=True)),
            cause_meaning(c["cause"], providers),
        ]))
    legend = note(SHARED_LEGEND[0].upper() + SHARED_LEGEND[1:] + ".") if any(c.get("shared_requests") for c in causes) else ""
    # (what a compaction's loss is measured against, as the terminal says under its table)
    against = causes_compaction_line((c["cause"] for c in causes), compactions)
    return table(["cause", "requests", "lost tokens", "lost", "what it means"], rows) + legend + (note(against) if against else "")


def _audit_compactions(compactions: list[dict], many: dict[str, str]) -> str:
    """The compactions table, as the terminal's and audit.md's (the same heading, cells and lines
    under it: :mod:`~prefixbench.reports.auditwords`); a long detail cut at a word boundary, its
    whole text on hover."""
    from prefixbench.reports.auditwords import (COMPACTION_HEADER, COMPACTIONS_AGAINST, PREDICTED_COMPACTION,
                                                compaction_cells, compaction_view, compactions_heading)
    from prefixbench.reports.textable import ellipsize

    found = [compaction_view(c) for c in compactions]
    rows = []
    for c in found:
        where = f"{_short(c.file, many)}:{c.line}" if many else f"line {c.line}"
        cells: list[Cell | str] = list(compaction_cells(c, where, lambda v: "-" if v is None else fmt_usd(float(v))))
        detail = c.detail or ""
        short = ellipsize(detail, DETAIL_CHARS)
        cells.append(Cell(short, tip=detail if short != detail else None, css="detail", more=detail if short != detail else None))
        rows.append(({"data-compaction": f"{c.file}|{c.lane}|{c.line}"}, cells))
    lines = [compactions_heading(found, lambda v: fmt_usd(float(v))), COMPACTIONS_AGAINST,
             *([PREDICTED_COMPACTION] if any(c.predicted for c in found) else [])]
    return note(lines[0]) + table(list(COMPACTION_HEADER), rows) + "".join(note(line) for line in lines[1:])


def _audit_waterfall(totals: dict, causes: list[dict], what_if: list[dict] | None) -> str:
    from prefixbench.reports.html import Step, waterfall
    from prefixbench.reports.whatif import saved_cell

    if totals["cost_usd"] is None:
        return note("No waterfall: none of the requests is priced, so what was paid is unknown (the headline says why).")
    unseen = int(totals.get("unseen_requests") or 0)
    if totals.get("lost_usd") is None:
        why = ("no request reports its cache use, so no miss could be seen" if unseen and unseen >= totals["requests"]
               else "the headline says why")
        return note(f"No waterfall: lost unknown ({why}).")
    paid = float(totals["cost_usd"])
    steps = [Step("paid", paid, "total", f"paid: {fmt_usd(paid)} for {totals['requests']:,} requests")]
    lost_total = 0.0
    for c in causes:
        if c["lost_usd"]:
            lost_total += c["lost_usd"]
            steps.append(Step(f"lost: {c['cause']}", -c["lost_usd"], "loss",
                              f"{c['cause']}: {c['requests']} request(s), {fmt_int(c['lost_tokens'])} tokens paid at the write/input price, {fmt_usd(c['lost_usd'])}"))
    steps.append(Step("without the misses", paid - lost_total, "total",
                      f"what the same traffic would have cost had every miss read what it should have: {fmt_usd(paid - lost_total)}"))
    num_fix_bars = 0
    for w in what_if or []:
        if not w["applies"] or w["saved_usd"] is None:
            continue
        num_fix_bars += 1
        saved = w["saved_usd"]
        steps.append(Step(f"fix: {w['fix']}", -saved, "alone" if saved >= 0 else "cost",
                          f"{w['fix']} alone, from what was paid: {saved_cell(saved, w.get('unpriced_requests'), w.get('detail'))}"
                          f" ({w['requests_changed']} requests changed, {w['tokens_to_read']:+,} tokens to read)",
                          w.get("detail") or ""))
    seen_only = (f" The lost steps sum the {totals['requests'] - unseen:,} request(s) that report their cache use "
                 f"only: {unseen:,} report none, so a miss of theirs could not be seen." if unseen else "")
    title = "Paid -> lost by cause -> without the misses"
    caption = "Grey bars are totals, red steps the dollars each cause lost."
    # The title and caption describe the bars drawn: a fix bar only where --what-if ran a fix that applies
    # and is priced ("What to change" ranks its fixes without drawing them here).
    if num_fix_bars:
        title += "; then each fix alone, from what was paid"
        caption += (" A fix bar (green: saves, amber: costs more) starts at what was paid: each fix is re-simulated "
                    "alone, so fixes do not add up.")
    elif what_if is None:
        caption += (" No fix is drawn: the report was made without --what-if (run it with --what-if to add a bar for "
                    "each fix's saving, re-simulated alone; \"What to change\" ranks the fixes that apply).")
    else:
        caption += " No fix is drawn: none of the fixes --what-if asked for applies to this log with a priced saving."
    return waterfall(steps, title=title) + note(caption + seen_only)


def _what_if_section(what_if: list[dict], many: dict[str, str]) -> str:
    from prefixbench.reports.whatif import hedged, saved_cell, saved_words
    from prefixbench.workloads.audit.whatif import CANNOT_APPLY, CANNOT_RESIMULATE, INFERRED

    rows = []
    for i, w in enumerate(what_if):
        applies = w["applies"]
        saved = w["saved_usd"]
        rows.append(({"data-fix": w["fix"], "class": "" if applies else "na"}, [
            w["fix"],
            Cell("yes" if applies else "no", "applies", applies),
            num("requests_changed", w["requests_changed"], "-" if not applies else fmt_int(w["requests_changed"])),
            num("tokens_to_read", w["tokens_to_read"], "-" if not applies else f"{w['tokens_to_read']:+,}"),
            num("saved_usd", saved, (CANNOT_RESIMULATE if w.get("needs_bodies") else CANNOT_APPLY) if not applies
                else saved_cell(saved, w.get("unpriced_requests"), w.get("detail"))),
            w["assumption"],
            w.get("detail", ""),
        ]))
    parts = [table(["fix", "applies", "requests changed", "tokens to read", "dollars", "assumption", "what drove it / why not"], rows)]
    parts.append(note(
        "Each fix alone: the log is replayed through the same cache model twice (as logged, and with the fix), and the "
        "difference is applied to what the provider reported, so a request the fix does not touch costs what it cost. "
        "A fix that costs more says so in words, as the terminal does (the JSON's saved_usd is then negative): a 1 h "
        "write costs 2x the input price, a 5 m one 1.25x."
    ))
    for w in what_if:
        if not w["applies"] or not w.get("lanes"):
            continue
        # A lane's saving carries its fix's "may save" (an inferred change is inferred on every lane);
        # not "saves up to", whose uncharged keep-alives need not be on this lane.
        # A lane whose saving is on calls through a relay says so in its note: hedged by it.
        lane_hedge = INFERRED if INFERRED in (w.get("detail") or "") else ""
        lane_rows = [
            ({"data-fix-lane": f"{w['fix']}|{e['file']}|{e['lane']}"}, [
                _lane_label(e["file"], e["lane"], many),
                num("requests_changed", e["requests_changed"], fmt_int(e["requests_changed"])),
                num("tokens_to_read", e["tokens_to_read"], f"{e['tokens_to_read']:+,}"),
                num("saved_usd", e["saved_usd"], "unknown (unpriced)" if e["saved_usd"] is None
                    else hedged(saved_words(e["saved_usd"]), e["saved_usd"], lane_hedge or _relayed_note(e))),
                e.get("note", ""),
            ])
            for e in w["lanes"]
        ]
        parts.append(f"<h3>{_esc(w['fix'])} per lane</h3>" + table(["lane", "requests changed", "tokens to read", "dollars", "note"], lane_rows))
    return "".join(parts)


def _relayed_note(lane: dict) -> str:
    """A what-if lane's note where it says the lane's saving is on calls through a relay whose
    cache rules are not known (:data:`~prefixbench.workloads.audit.whatif.RELAYED`), else ""."""
    from prefixbench.workloads.audit.whatif import RELAYED

    note = lane.get("note") or ""
    return note if RELAYED in note else ""


def _written(request: dict) -> str:
    """A request's written tokens in its bar's tip: ``write not reported`` where its usage gives
    no write count (null: an OpenAI-shaped usage), never a 0."""
    if request["reported_cache_write"] is None:
        return "write not reported"
    return f"write {request['reported_cache_write']:,} (1 h {request['reported_cache_write_1h'] or 0:,})"


def _audit_lanes(lanes: list[dict], many: dict[str, str]) -> str:
    rows = []
    for lane in lanes:
        rows.append(({"data-lane": f"{lane['file']}|{lane['lane']}"}, [
            _lane_label(lane["file"], lane["lane"], many), lane.get("kind", ""), lane.get("model", ""),
            num("requests", lane["requests"], fmt_int(lane["requests"])),
            *("-" if lane[k] is None else num(k, lane[k], fmt_int(lane[k])) for k in (
                "reported_cache_read", "predicted_cache_read", "reported_cache_write", "predicted_cache_write",
                "reported_uncached", "predicted_uncached")),
            "-" if lane.get("read_within_3pct", 0) is None else num("read_within_3pct", lane.get("read_within_3pct"), f"{lane.get('read_within_3pct', 0)}/{lane['requests']}"),
            num("hit_ratio", lane["hit_ratio"], hit_cell(lane["hit_ratio"], lane["reported_cache_read"] is None)),
            num("cost_usd", lane["cost_usd"], _paid(lane)),
            num("lost_usd", lane["lost_usd"], _lost(lane)),
        ]))
    legend = note(PREDICTED_HIT + ".") if any(lane["reported_cache_read"] is None and lane["hit_ratio"] is not None for lane in lanes) else ""
    if any(lane["reported_cache_read"] is not None and lane["reported_cache_write"] is None for lane in lanes):
        legend += note(WRITES_NOT_REPORTED + ".")
    return table(["lane", "kind", "model", "requests", "read", "predicted", "write", "predicted", "uncached", "predicted",
                  "read within 3%", "hit", "paid", "lost"], rows) + legend + _loss_legend(lanes)


def _usd_or_unknown(value: float | None) -> str:
    """A total of the explicit caches' dollars, ``unknown`` where null (none of them has it)."""
    return "unknown" if value is None else fmt_usd(value)


def _audit_explicit_caches(caches: list[dict], totals: dict, many: dict[str, str]) -> str:
    """The explicit caches (Gemini ``cachedContents``) the logs created: not requests, billed apart.
    A figure the log does not show is 'unknown' (an empty cell would read as nothing paid)."""
    def usd(field: str, value: object) -> Cell | str:
        return "unknown" if value is None else num(field, value, fmt_usd(value))  # type: ignore[arg-type]

    rows = []
    for c in caches:
        rows.append(({"data-explicit-cache": c["name"]}, [
            f"{_short(c['file'], many)}:{c['line']}" if many else f"line {c['line']}", c["name"], c["model"], num("tokens", c["tokens"], fmt_int(c["tokens"])),
            _when(c["created"]) if c.get("created") else "unknown",
            "unknown" if c.get("kept_hours") is None else num("kept_hours", c["kept_hours"], f"{c['kept_hours']:,.2f} h"),
            c["ended_by"], num("reads", c["reads"], fmt_int(c["reads"])),
            num("read_tokens", c["read_tokens"], fmt_int(c["read_tokens"])),
            usd("create_usd", c.get("create_usd")), usd("storage_usd", c.get("storage_usd")),
        ]))
    return table(["where", "cache", "model", "tokens", "created", "kept", "ended by", "reads", "read tokens", "create",
                  "storage"], rows) + note(
        f"Not requests (in no lane, hit ratio or loss), but paid: creating them cost {_usd_or_unknown(totals.get('cache_create_usd', 0))} "
        f"(their tokens at the input price) and keeping them {_usd_or_unknown(totals.get('storage_usd', 0))} of storage "
        "(tokens x hours kept at the row's storage rate), both inside the paid total above. Reads from them are "
        "requests, priced at the explicit read rate. 'unknown': the log does not show it (a cache read but not "
        "created here, an update or delete without a time, a model with no storage price)."
    )


def _requests_shown_note(shown: dict) -> str:
    """What a page of the worst requests leaves out, and where every request is (links to the
    files written beside report.html)."""
    links = " and ".join(f'<a href="{_esc(name)}">{_esc(name)}</a>' for name in shown["every_request_in"])
    return (
        f'<p class="note" data-field="requests_shown" data-shown="{shown["shown"]}" data-total="{shown["total"]}">'
        f"{shown['shown']:,} of the {shown['total']:,} requests are drawn here: the misses that lost the most first "
        f"(then the rest, in file order), each lane's in file order. Every request is in {links} beside this page; "
        "the tables above count them all.</p>"
    )


def _audit_requests(requests: list[dict], many: dict[str, str], lane_sizes: dict[tuple[str, str], int] | None = None) -> str:
    from prefixbench.workloads.audit.causes import cause_meaning

    lanes: dict[tuple[str, str], list[tuple[int, dict]]] = {}
    for i, r in enumerate(requests):
        lanes.setdefault((r["file"], r["lane"]), []).append((i, r))
    legend_items = [("cache read", CACHED), ("cache write (5 m)", WRITTEN), ("cache write (1 h)", WRITTEN_1H),
                    ("uncached input", UNCACHED), ("predicted read (line)", PREDICTED),
                    ("no usage in the log (grey, dashed): not counted as uncached", REJECTED)]
    parts = [legend(legend_items), note(
        "One bar a request of each lane, in send order, as the provider reported it: read, 5 m write, 1 h write, "
        "uncached, stacked; the blue line is the read the cache model predicted. A triangle marks a miss; hover it for "
        "its cause, the evidence that decided it and the excerpt; hover a bar for its numbers."
    )]
    if not lanes:
        parts.append(note("No request to draw."))
    for (file, lane), items in lanes.items():
        bars = []
        for i, r in items:
            reported = r["reported_cache_read"] is not None
            read = r["reported_cache_read"] or 0
            write = r["reported_cache_write"] or 0
            long_ = r["reported_cache_write_1h"] or 0
            uncached = r["reported_uncached"] or 0
            # A write the usage gives no count of (null) is no 0: its attributes are empty.
            unwritten = r["reported_cache_write"] is None
            attrs = {"data-request": str(i), "data-index": str(r["index"]), "data-read": str(read),
                     "data-write": "" if unwritten else str(write), "data-write1h": "" if unwritten else str(long_),
                     "data-uncached": str(uncached), "data-predicted": str(r["predicted_cache_read"]),
                     "data-cause": r["cause"] or ""}
            if reported:
                segments = (("read", float(read), CACHED), ("write5m", float(write - long_), WRITTEN),
                            ("write1h", float(long_), WRITTEN_1H), ("uncached", float(uncached), UNCACHED))
            else:
                segments = (("unreported", float(r["predicted_cache_read"] + r["predicted_cache_write"] + r["predicted_uncached"]), REJECTED),)
            tip = (f"{lane} #{r['index']} (line {r['line']}{' ' + r['path'] if r.get('path') else ''}, "
                   f"{r['timestamp'] or 'no time'}) {r['model']}\n"
                   + (f"read {read:,} · {_written(r)} · uncached {uncached:,} · output {r['reported_output'] or 0:,}\n"
                      if reported else "the log reports no usage for this call\n")
                   + f"predicted read {r['predicted_cache_read']:,}, write {r['predicted_cache_write']:,}"
                   + (f"\npaid {fmt_usd(r['cost_usd'])}" if r["cost_usd"] is not None else "")
                   + (f"\ngap {r['gap_ms'] / 1000:,.1f}s since the previous request" if r.get("gap_ms") is not None else "")
                   + (f"\nmiss: {r['cause']} ({r['evidence']}), lost {fmt_int(r['lost_tokens'])} tokens" if r["cause"] else ""))
            marker = marker_tip = None
            if r["cause"]:
                marker = r["cause"]
                marker_tip = (f"{r['cause']} ({r['evidence']}): {cause_meaning(r['cause'], [r.get('provider', '')])}\n{r['detail']}"
                              + (f"\nlost {fmt_int(r['lost_tokens'])} tokens, {fmt_usd(r['lost_usd'])}" if r["lost_usd"] else ""))
            bars.append(Bar(segments, tip, attrs, overlay=float(r["predicted_cache_read"]), marker=marker, marker_tip=marker_tip,
                            rejected=not reported, marker_colour=cause_colour(marker) if marker else None))
        title = f"{_lane_label(file, lane, many)}: {len(items)} requests"
        if lane_sizes is not None:
            title = f"{_lane_label(file, lane, many)}: {len(items)} of its {lane_sizes.get((file, lane), len(items))} requests"
        times = times_ms([r["timestamp"] for _, r in items])
        xlabel = "request of the lane" if times is None else "time (UTC): each bar at the request's send time"
        idle = idle_gaps(sorted(times)) if times is not None else []
        if idle:  # mostly idle: on the clock its requests would be slivers at the ends of an empty axis
            times = None
            xlabel = ("request of the lane, in order (the clock cut at its idle gaps of "
                      f"{idle_duration(IDLE_GAP_MS)} or more: {', '.join(idle_duration(g) for _, g in idle)})")
        parts.append(f'<div class="lane-chart" data-lane="{_esc(file)}|{_esc(lane)}">'
                     + stacked_bars(bars, title=title, xlabel=xlabel, times=times) + "</div>")
    return "".join(parts)


def times_ms(stamps: Sequence[str | None]) -> list[int] | None:
    """Each request's send time in ms since the epoch, or None when one has no absolute
    timestamp (the charts, audit.png's and the page's, then stand their bars in request order)."""
    from datetime import datetime

    out = []
    for stamp in stamps:
        if not stamp or stamp.startswith("+"):
            return None
        try:
            out.append(int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000))
        except ValueError:
            return None
    return out


def _audit_files(files: list[dict], notes: list[str], labels: dict[str, str] | None = None) -> str:
    rows = [
        ({"data-file": f["file"]}, [
            _short(f["file"], labels), f.get("format", ""),
            num("requests", f["requests"], fmt_int(f["requests"])),
            num("read_within_3pct", f.get("read_within_3pct"), f"{f.get('read_within_3pct', 0)}/{f['requests']}"),
            num("mean_abs_read_error", f.get("mean_abs_read_error"),
                "-" if f.get("mean_abs_read_error") is None else fmt_pct(f["mean_abs_read_error"])),
            num("skipped", f.get("skipped", 0), fmt_int(f.get("skipped", 0))),
            num("cost_usd", f["cost_usd"], _paid(f)),
            "; ".join(f.get("notes", [])),
        ])
        for f in files
    ]
    out = table(["file", "format", "requests", "read within 3%", "mean |read error|", "records not counted", "paid", "notes"], rows)
    if notes:
        out += "<ul>" + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>"
    return out + note("Records not counted are calls the log shows but did not bill (HTTP errors, synthetic messages, "
                      "aborted calls, repeated token counts): they are neither hits nor uncached input. "
                      "A reported read of 0 is within 3% only if 0 was predicted; mean |read error| is over the "
                      "requests that reported a read above 0.")
