"""``prefixbench compare``: the verdict as a terminal table, a Markdown summary for a pull
request comment, or JSON. The comparison itself is :mod:`prefixbench.workloads.runs.compare`."""

from __future__ import annotations

import json
from decimal import Decimal

from prefixbench.reports.textable import markdown_lines, md_code, text_lines, visible
from prefixbench.simulator.pricing import format_usd
from prefixbench.workloads.audit.schema import NOT_REPORTED
from prefixbench.workloads.runs.compare import Change, Comparison, figure_field


def figure_unit(group: str, name: str) -> str:
    """``ratio``, ``usd`` or ``count``: as the schema declares the figure; one it does not declare
    (an audit field a newer prefixbench added) reads by its name."""
    field = figure_field(group, name)
    if field is not None:
        return field.unit
    if "hit" in name or name.endswith("ratio"):
        return "ratio"
    return "usd" if name.endswith("usd") else "count"


def fmt_figure(unit: str, value: float | None) -> str:
    """A figure in its own unit: ``97.9%`` for ratios, ``$0.2193`` for dollars, ``1,234`` else."""
    if value is None:
        return "-"
    if unit == "ratio":
        return f"{value * 100:.1f}%"
    if unit == "usd":
        return format_usd(Decimal(repr(value)))
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.3f}"


def fmt_change(change: Change) -> str:
    """``+12.3%`` relative (``+41.5% (-5.7% per request)`` where the unit's request counts
    differ and the figure is judged per request), ``-0.7pt`` for ratios, ``new`` when the baseline had nothing,
    ``not comparable`` for a hit ratio predicted on one side only, dollars unknown on one
    side only (none of its requests priced there), or dollars over other priced requests on
    each side (its unpriced request counts differ: a note says how)."""
    if not change.comparable:
        return "not comparable"
    if change.unreported:
        return f"{NOT_REPORTED} in {change.unreported}"
    if change.base is None:
        return "only in NEW"
    if change.new is None:
        return "only in BASE"
    delta = change.new - change.base
    if delta == 0:
        per = change.relative_per_request
        # (an unchanged figure over fewer or more requests changed per request: say by how much;
        # dollars judged per priced request say so where that is unchanged too, as the note does)
        return ("=" if per is None or (not per and not change.priced) else
                f"= ({'+0.0' if abs(per) < 0.0005 else f'{per * 100:+.1f}'}% per {_per(change)})")
    unit = figure_unit(change.group, change.figure)
    if unit == "ratio":
        return f"{delta * 100:+.1f}pt"
    if change.base == 0:
        return f"+{fmt_figure(unit, delta)} (from 0)"
    said = f"{delta / abs(change.base) * 100:+.1f}%"
    if change.relative_per_request is not None:
        # Judged per request (the unit's request counts differ): the change the limit read.
        per = change.relative_per_request * 100
        said += f" ({'+0.0' if abs(per) < 0.05 else f'{per:+.1f}'}% per {_per(change)})"  # (no -0.0 of a float's rounding)
    return said


def _per(change: Change) -> str:
    """What a change judged per request is per: ``priced request`` for dollars of a grown log
    whose unpriced requests differ (:attr:`Change.priced`), ``request`` elsewhere."""
    return "priced request" if change.priced else "request"


def short_labels(comparison: Comparison) -> dict[tuple[str, str], str]:
    """Unit labels without the words every unit shares (``window=32k preset=patched`` rather
    than the whole key when workload, engine, profile and cache are the same everywhere)."""
    units = comparison.units()
    words = [key.split(" ") for _, key in units]
    common = set(words[0]).intersection(*words[1:]) if len(words) > 1 else set()
    labels = {}
    for (group, key), split in zip(units, words):
        short = " ".join(w for w in split if w not in common) or key
        labels[(group, key)] = "totals" if group == "totals" else f"{group} {short}"
    return labels


def _side(change: Change, side: str, value: float | None) -> str:
    """One side's figure: ``not reported`` where that audit reports no such count (never 0)."""
    return NOT_REPORTED if change.unreported == side else fmt_figure(figure_unit(change.group, change.figure), value)


def _rows(changes: list[Change], labels: dict[tuple[str, str], str]) -> list[list[str]]:
    return [
        [
            labels.get((c.group, c.key), f"{c.group} {c.key}"),
            c.figure,
            _side(c, "BASE", c.base),
            _side(c, "NEW", c.new),
            fmt_change(c),
            c.limit.text() if c.limit else "-",
        ]
        for c in changes
    ]


HEADER = ["unit", "figure", "base", "new", "change", "limit"]


def verdict(comparison: Comparison) -> str:
    n = len(comparison.regressions)
    missing = len(comparison.missing_gated)
    unlike = len(comparison.mismatched)
    if not comparison.failed:
        return "PASS: no figure crossed its threshold"
    parts = []
    if n:
        parts.append(f"{n} regression{'s' if n != 1 else ''}")
    if missing:
        parts.append(f"{missing} unit{'s' if missing != 1 else ''} missing from NEW")
    if unlike:
        parts.append(f"{unlike} run{'s' if unlike != 1 else ''} made with other workload parameters")
    return "FAIL: " + ", ".join(parts)


def _changed(comparison: Comparison) -> list[Change]:
    """The figures that changed, as they are or per request (an unchanged figure over another
    request count), dollars judged per priced request (unchanged per priced request too: shown as
    unchanged tokens over another request count are, not left out while the note names them), and
    every regression; not one only NEW has, at 0 (a count an older release did not write, such as
    an audit's unpriced_requests: nothing in it)."""
    return [c for c in comparison.changes
            if not c.comparable or c.unreported or c.regressed or c.relative_per_request
            or (c.priced and c.relative_per_request is not None)
            or (c.base != c.new and not (c.base is None and c.new == 0))]


def compare_markdown(comparison: Comparison) -> str:
    """The summary a CI job posts on a pull request: verdict, regressions, then every change."""
    units = "runs" if comparison.kind == "sweep" else "lanes"
    lines = [
        f"## prefixbench compare ({comparison.kind}): {verdict(comparison)}",
        "",
        f"- base: {md_code(comparison.base_source)}",
        f"- new: {md_code(comparison.new_source)}",
        f"- thresholds: `{comparison.thresholds.text()}` (a figure that worsens by more fails)",
        f"- {_count(len(comparison.units()), 'unit')} compared ({units}{', totals and causes' if comparison.kind == 'audit' else ''}), "
        f"{_count(len(_changed(comparison)), 'figure')} changed",
        "",
    ]
    lines += [*(f"Note: {n}" for n in comparison.notes), *([""] if comparison.notes else [])]
    if comparison.regressions:
        lines += ["### Regressions", "", *_md_table(_rows(list(comparison.regressions), short_labels(comparison))), ""]
    if comparison.missing_gated:
        lines += ["### Missing from NEW", "", *(f"- {md_code(u)}" for u in comparison.missing_gated), ""]
    if comparison.mismatched:
        lines += ["### Not compared: other workload parameters", "", *(f"- {md_code(u)}" for u in comparison.mismatched), ""]
    if comparison.only_new:
        lines += ["### Only in NEW (not gated)", "", *(f"- {md_code(u)}" for u in comparison.only_new), ""]
    changed = _changed(comparison)
    if changed:
        lines += [
            "<details><summary>Every changed figure</summary>",
            "",
            *_md_table(_rows(changed, short_labels(comparison))),
            "",
            "</details>",
            "",
        ]
    else:
        lines += ["Every shared figure is identical.", ""]
    return "\n".join(lines)


def _md_table(rows: list[list[str]]) -> list[str]:
    return list(markdown_lines(HEADER, rows, right={2, 3, 4}, escape_pipes=True))


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def compare_text(comparison: Comparison) -> str:
    """The terminal form: verdict, then the changed figures as an aligned table (regressions
    marked ``!``)."""
    lines = [
        f"{verdict(comparison)} ({comparison.kind}; thresholds {comparison.thresholds.text()})",
        f"base {visible(comparison.base_source)}",
        f"new  {visible(comparison.new_source)}",
    ]
    lines += [f"note: {n}" for n in comparison.notes]
    for unit in comparison.missing_gated:
        lines.append(f"! missing from NEW: {visible(unit)}")
    for unit in comparison.mismatched:
        lines.append(f"! not compared, other workload parameters: {visible(unit)}")
    for unit in comparison.only_new:
        lines.append(f"  only in NEW: {visible(unit)}")
    changed = _changed(comparison)
    if not changed:
        lines.append("every shared figure is identical")
        return "\n".join(lines)
    rows = [["!" if c.regressed else " ", *row] for c, row in zip(changed, _rows(changed, short_labels(comparison)))]
    lines.append("")
    lines += text_lines([" ", *HEADER], rows, right={3, 4, 5}, ruler=False)
    return "\n".join(lines)


def compare_json(comparison: Comparison) -> str:
    return json.dumps(
        {
            "kind": comparison.kind,
            "base": comparison.base_source,
            "new": comparison.new_source,
            "thresholds": comparison.thresholds.text(),
            "passed": not comparison.failed,
            "regressions": len(comparison.regressions),
            "missing_from_new": list(comparison.missing_gated),
            "only_in_new": list(comparison.only_new),
            "not_compared": list(comparison.mismatched),
            "notes": list(comparison.notes),
            "changes": [
                {
                    "group": c.group,
                    "unit": c.key,
                    "figure": c.figure,
                    "base": c.base,
                    "new": c.new,
                    "delta": c.delta,
                    "relative": c.relative,
                    # Judged per request (the unit's request counts differ): NEW's figure at
                    # BASE's count, and its relative change; null where judged as it is.
                    "new_per_base_requests": c.judged_new if c.per_request is not None else None,
                    "relative_per_request": c.relative_per_request,
                    "limit": c.limit.text() if c.limit else None,
                    "regressed": c.regressed,
                    "comparable": c.comparable,
                    # The side whose audit reports no such count (its value null, never 0).
                    "not_reported": c.unreported or None,
                }
                for c in comparison.changes
            ],
        },
        indent=2,
    )
