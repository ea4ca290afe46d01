"""report.html building blocks: one self-contained offline page (no network, no CDN).

Charts are rendered here, server-side, as inline SVG; the only script is a few lines that show
an element's ``data-tip`` next to the pointer. The data the page was drawn from is embedded as
JSON (``<script type="application/json" id="prefixbench-data">``), the same object the
command's ``--format json`` prints, and every number a table shows carries its raw value in
``data-value`` so a test (or a reader with the inspector) can check the page against it.

Same data, same bytes: no timestamps, no random ids, fixed number formatting.

The page kinds live in :mod:`prefixbench.reports.html_pages`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from decimal import Decimal
from html import escape

import msgspec

from prefixbench.reports.palette import CACHED, INK, PREDICTED, REJECTED, SERIES, SKIPPED, TOTAL, UNCACHED, WRITTEN
from prefixbench.reports.textable import ellipsize
from prefixbench.simulator.pricing import format_usd

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1f2328;background:#fff}
header{background:#f6f8fa;border-bottom:1px solid #d0d7de;padding:14px 24px}
header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#59636e}
nav{padding:6px 24px;border-bottom:1px solid #d0d7de;background:#fff}
nav a{margin-right:14px;color:#0969da;text-decoration:none}
main{padding:8px 24px 40px;max-width:1400px}
section{margin:22px 0}h2{font-size:17px;border-bottom:1px solid #d8dee4;padding-bottom:4px}
h3{font-size:14px;margin:14px 0 4px}
table{border-collapse:collapse;margin:6px 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}td.n{text-align:right;white-space:nowrap}
tr.fail td{background:#ffebe9}tr.pass td.v{color:#1a7f37}tr.fail td.v{color:#cf222e;font-weight:600}
.note{color:#59636e;max-width:900px}.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
svg{display:block;max-width:100%;height:auto;font:11px system-ui,sans-serif}
svg text{fill:#1f2328;pointer-events:none}svg .axis{stroke:#8c959f;stroke-width:1}svg .grid{stroke:#eaeef2;stroke-width:1}
[data-tip]{cursor:default}svg [data-tip]:hover{opacity:.75}
#tip{position:fixed;display:none;max-width:520px;background:#1f2328;color:#fff;padding:6px 8px;border-radius:4px;
font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace;white-space:pre-wrap;pointer-events:none;z-index:9}
.chart{border:1px solid #d0d7de;border-radius:6px;padding:6px;margin:8px 0}
code{background:#f6f8fa;padding:0 3px;border-radius:3px}
td{overflow-wrap:break-word}td.detail{max-width:640px}td.cause{white-space:nowrap}details summary{cursor:pointer}
.sw{display:inline-block;width:9px;height:9px;margin-right:5px;border-radius:2px}
"""

SCRIPT = """
(function(){
  var tip=document.getElementById('tip');
  document.addEventListener('mouseover',function(e){
    var el=e.target.closest?e.target.closest('[data-tip]'):null;
    if(!el){tip.style.display='none';return;}
    tip.textContent=el.getAttribute('data-tip');tip.style.display='block';
  });
  document.addEventListener('mousemove',function(e){
    if(tip.style.display!=='block')return;
    var x=e.clientX+14,y=e.clientY+14,w=tip.offsetWidth,h=tip.offsetHeight;
    if(x+w>window.innerWidth)x=Math.max(0,e.clientX-w-14);
    if(y+h>window.innerHeight)y=Math.max(0,e.clientY-h-14);
    tip.style.left=x+'px';tip.style.top=y+'px';
  });
})();
"""


def page(kind: str, title: str, subtitle: str, sections: Sequence[tuple[str, str, str]], data: object) -> str:
    """The whole document. ``sections`` are ``(anchor, heading, body html)``."""
    nav = "".join(f'<a href="#{escape(a)}">{escape(h)}</a>' for a, h, _ in sections)
    body = "".join(f'<section id="{escape(a)}"><h2>{escape(h)}</h2>{html}</section>' for a, h, html in sections)
    payload = script_json(data)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        # No request leaves the page: nothing to fetch, and the policy says so.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">"
        f"<style>{CSS}</style></head>\n"
        f'<body data-kind="{escape(kind)}"><header><h1>{escape(title)}</h1><p>{escape(subtitle)}</p></header>'
        f"<nav>{nav}</nav><main>{body}</main><div id=\"tip\"></div>\n"
        f'<script type="application/json" id="prefixbench-data">{payload}</script>\n'
        f"<script>{SCRIPT}</script></body></html>\n"
    )


def script_json(data: object) -> str:
    """``data`` as JSON safe inside a ``<script>`` element: every ``<``, ``>`` and ``&`` written as
    its JSON escape (``\\u003c``...), so no text read from a log (``</script``, ``<!--``,
    ``<script``) can end the element or put the browser's tokenizer in its escaped states, where
    the rest of the page would be read as script data and its script lost. Everything above ASCII
    is escaped too (U+2028 and U+2029 among it); ``JSON.parse`` reads the same values."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# --- numbers -------------------------------------------------------------------------------


def fmt_int(value: float) -> str:
    return f"{int(round(value)):,}"


def fmt_pct(ratio: float) -> str:
    return f"{ratio * 100:.1f}%"


def fmt_usd(value: float) -> str:
    """``$0.2193``; 4 significant digits under a cent: the text reports' own
    (:func:`~prefixbench.simulator.pricing.format_usd`, half up on the figure the JSON wrote), so
    a page and the table round a figure alike ($0.01235: ``$0.0124`` in both; the float's own
    formatting gave ``$0.0123``)."""
    return format_usd(Decimal(repr(float(value))))


def raw(value: object) -> str:
    """A value as ``data-value`` holds it: JSON scalars, lists as JSON."""
    if isinstance(value, float) and value == int(value) and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(",", ":"))
    return "" if value is None else str(value)


# --- tables --------------------------------------------------------------------------------


class Cell(msgspec.Struct, frozen=True):
    """A table cell: its text, and (for numbers) the field and raw value it shows."""

    text: str
    field: str | None = None
    value: object = None
    numeric: bool = False
    tip: str | None = None
    css: str | None = None
    #: A swatch of this colour before the text (a cause's, from the palette).
    colour: str | None = None
    #: The whole text of a cut cell, one click away (a ``<details>`` around the cut text).
    more: str | None = None


def num(field: str, value: object, text: str) -> Cell:
    return Cell(text, field, value, numeric=True)


def table(header: Sequence[str], rows: Iterable[tuple[dict[str, str], Sequence[Cell | str]]], *, css: str = "") -> str:
    """A table; each row is ``(attributes of <tr>, cells)``."""
    out = [f'<table class="{css}"><thead><tr>' + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr></thead><tbody>"]
    for attrs, cells in rows:
        tr = "".join(f' {k}="{escape(v)}"' for k, v in attrs.items())
        tds = []
        for cell in cells:
            if isinstance(cell, str):
                cell = Cell(cell)
            classes = " ".join(c for c in ("n" if cell.numeric else "", cell.css or "") if c)
            attr = f' class="{classes}"' if classes else ""
            if cell.field is not None:
                attr += f' data-field="{escape(cell.field)}" data-value="{escape(raw(cell.value))}"'
            if cell.tip:
                attr += f' data-tip="{escape(cell.tip)}"'
            text = escape(cell.text)
            if cell.colour:
                text = f'<i class="sw" style="background:{cell.colour}"></i>{text}'
            if cell.more is not None:
                text = f"<details><summary>{text}</summary>{escape(cell.more)}</details>"
            tds.append(f"<td{attr}>{text}</td>")
        out.append(f"<tr{tr}>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def legend(items: Sequence[tuple[str, str]]) -> str:
    return '<p class="legend">' + "".join(f'<span><i style="background:{c}"></i>{escape(t)}</span>' for t, c in items) + "</p>"


def note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


# --- charts --------------------------------------------------------------------------------


def _nice_max(value: float) -> float:
    """A round axis maximum >= value (never below it: charts do not cut data off)."""
    if value <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(value))
    for step in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if step * exp >= value:
            return step * exp
    return 10 * exp


def _tick_text(value: float, unit: str) -> str:
    if unit == "%":
        return f"{value:g}%"
    if unit == "$":
        return fmt_usd(value)
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 1000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def _y_axis(x0: float, y0: float, height: float, width: float, top: float, unit: str, lo: float = 0.0) -> list[str]:
    parts = []
    for i in range(5):
        v = lo + (top - lo) * i / 4
        y = y0 - height * i / 4
        parts.append(f'<line class="grid" x1="{x0:.1f}" y1="{y:.1f}" x2="{x0 + width:.1f}" y2="{y:.1f}"/>')
        parts.append(f'<text x="{x0 - 4:.1f}" y="{y + 4:.1f}" text-anchor="end">{escape(_tick_text(v, unit))}</text>')
    parts.append(f'<line class="axis" x1="{x0}" y1="{y0}" x2="{x0 + width}" y2="{y0}"/>')
    parts.append(f'<line class="axis" x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 - height}"/>')
    return parts


class Bar(msgspec.Struct, frozen=True):
    """One request in a stacked-bar chart."""

    segments: tuple[tuple[str, float, str], ...]  # (name, tokens, colour), bottom up
    tip: str
    attrs: dict[str, str]
    overlay: float | None = None  # e.g. the predicted read, drawn as a tick across the bar
    marker: str | None = None  # a cause/fold marker above the bar (its tip is ``marker_tip``)
    marker_tip: str | None = None
    rejected: bool = False
    #: The marker's colour (a miss cause's, from :func:`prefixbench.reports.palette.cause_colour`); None: the fold blue.
    marker_colour: str | None = None


def side_by_side(lefts: Sequence[float], widths: Sequence[float], least: float) -> tuple[list[float], list[float]]:
    """Bars on the clock that would overlap (requests sent at the same moment, or closer than a
    bar is wide) placed side by side: each run of overlapping bars shares the room from its first
    bar's left edge to its furthest right edge, split evenly in their time order, each at least
    ``least`` wide (a run needing more room widens to the right, and takes in any bar it then
    reaches). Bars that do not overlap keep their place and width. In the order given."""
    order = sorted(range(len(lefts)), key=lambda i: (lefts[i], i))
    runs: list[tuple[float, float, list[int]]] = []  # (left, right, members)
    for i in order:
        left, right = lefts[i], lefts[i] + max(widths[i], least)
        if runs and left < runs[-1][1]:
            start, end, members = runs[-1]
            members.append(i)
            runs[-1] = (start, max(end, right, start + len(members) * least), members)
        else:
            runs.append((left, right, [i]))
    out_l, out_w = list(lefts), list(widths)
    for start, end, members in runs:
        if len(members) == 1:
            continue
        share = (end - start) / len(members)
        for k, i in enumerate(members):
            out_l[i], out_w[i] = start + k * share, share
    return out_l, out_w


def _clock_places(times: Sequence[int], plot_w: float) -> tuple[list[float], list[float], float, float]:
    """Where each bar of a chart on the clock starts (pixels from the plot's left), its width (as
    wide as the time to the next bar, capped at the median such time, so an idle hour is empty
    axis; bars sent at the same moment side by side, :func:`side_by_side`), and the first time and
    the milliseconds a pixel is."""
    t0, t1 = min(times), max(times)
    gaps = sorted(b - a for a, b in zip(times, times[1:]) if b > a)
    typical = gaps[(len(gaps) - 1) // 2] if gaps else 1000
    span = max(t1 - t0 + typical, 1)
    per_px = span / plot_w
    width = min(48.0, max(0.6, typical / per_px * 0.8))
    return *side_by_side([(t - t0) / per_px for t in times], [width] * len(times), 0.6), t0, per_px


def clock_format(span_ms: float) -> str:
    """The strftime format of a clock axis's ticks over ``span_ms``: seconds under 10 minutes,
    the date past a day (report.html's and audit.png's)."""
    if span_ms > 86_400_000:
        return "%m-%d %H:%M"
    return "%H:%M:%S" if span_ms < 600_000 else "%H:%M"


def _clock_text(ms: float, span_ms: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime(clock_format(span_ms))


def stacked_bars(bars: Sequence[Bar], *, title: str, xlabel: str, height: int = 220, width: int = 1100,
                 times: Sequence[int] | None = None) -> str:
    """Per-request stacked bars; the y axis always reaches the tallest bar or overlay. With
    ``times`` (ms since the epoch, one a bar) the x axis is the clock (UTC): each bar stands at
    its time, and the ticks are times of day."""
    left, right, top_pad, bottom = 56, 10, 26, 34
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    n = max(1, len(bars))
    tallest = max([sum(s[1] for s in b.segments) for b in bars] + [b.overlay or 0 for b in bars] + [0])
    top = _nice_max(tallest)
    step = plot_w / n
    bw = min(48.0, max(0.6, step * 0.8))
    if times is not None and len(times) == len(bars) and bars:
        places, widths, t0, per_px = _clock_places(times, plot_w)
    else:
        times = None
        places = [i * step + (step - bw) / 2 for i in range(len(bars))]
        widths = [bw] * len(bars)
    y0 = top_pad + plot_h
    parts = [f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{escape(title)}">']
    parts.append(f'<text x="{left}" y="14" font-weight="600">{escape(title)}</text>')
    parts += _y_axis(left, y0, plot_h, plot_w, top, "")
    scale = plot_h / top
    for i, bar in enumerate(bars):
        x, bw = left + places[i], widths[i]
        attrs = "".join(f' {k}="{escape(v)}"' for k, v in bar.attrs.items())
        parts.append(f'<g class="bar"{attrs} data-tip="{escape(bar.tip)}">')
        # a transparent column the full height, so the tip shows even over a short bar
        parts.append(f'<rect x="{x:.2f}" y="{top_pad}" width="{bw:.2f}" height="{plot_h}" fill="transparent"/>')
        y = float(y0)
        for name, tokens, colour in bar.segments:
            if tokens <= 0:
                continue
            h = tokens * scale
            y -= h
            extra = f' fill-opacity="0.35" stroke="{TOTAL}" stroke-dasharray="2,1"' if bar.rejected else ""
            parts.append(f'<rect class="seg-{escape(name)}" x="{x:.2f}" y="{y:.2f}" width="{bw:.2f}" height="{h:.2f}" fill="{colour}"{extra}/>')
        if bar.rejected:
            parts.append(f'<text x="{x + bw / 2:.2f}" y="{y0 - 3:.2f}" text-anchor="middle" font-weight="700" fill="{REJECTED}">×</text>')
        if bar.overlay is not None:
            oy = y0 - bar.overlay * scale
            parts.append(
                f'<line class="predicted" x1="{x - bw * 0.12:.2f}" y1="{oy:.2f}" x2="{x + bw * 1.12:.2f}" y2="{oy:.2f}" '
                f'stroke="{PREDICTED}" stroke-width="2"/>'
            )
        parts.append("</g>")
        if bar.marker:
            cx = x + bw / 2
            parts.append(
                f'<path class="marker" d="M{cx - 4:.2f},{top_pad - 10} L{cx + 4:.2f},{top_pad - 10} L{cx:.2f},{top_pad - 3} Z" '
                f'fill="{bar.marker_colour or PREDICTED}" data-marker="{escape(bar.marker)}" data-tip="{escape(bar.marker_tip or bar.marker)}"/>'
            )
    if times is not None:
        # x ticks: about 8 times of day, evenly spread over the span
        span = per_px * plot_w
        for k in range(8):
            x = left + plot_w * k / 8
            parts.append(f'<text class="tick-time" x="{x:.1f}" y="{y0 + 14}" text-anchor="middle">'
                         f"{escape(_clock_text(t0 + per_px * plot_w * k / 8, span))}</text>")
    else:
        # x ticks: about 10 request numbers
        every = max(1, math.ceil(n / 10))
        for i in range(0, len(bars), every):
            x = left + i * step + step / 2
            label = bars[i].attrs.get("data-index", str(i))
            parts.append(f'<text x="{x:.1f}" y="{y0 + 14}" text-anchor="middle">{escape(label)}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" text-anchor="middle">{escape(xlabel)}</text>')
    parts.append("</svg>")
    return '<div class="chart">' + "".join(parts) + "</div>"


class Group(msgspec.Struct, frozen=True):
    """A group of bars (e.g. one window) in a grouped-bar chart."""

    label: str
    values: tuple[tuple[str, float | None, float | None, float | None, str], ...]  # series, value, lo, hi, tip
    #: Series whose bar is not comparable (e.g. a run with a rejected request): drawn pale with a
    #: dashed outline and its value marked ``!``, as the PNGs hatch it.
    marked: tuple[str, ...] = ()


def grouped_bars(groups: Sequence[Group], series: Sequence[str], *, title: str, unit: str, ymax: float | None = None,
                 height: int = 260, width: int = 900) -> str:
    """Bars per group and series, with an optional lo..hi whisker; ``None`` draws nothing."""
    left, right, top_pad, bottom = 56, 10, 26, 40
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    values = [v for g in groups for _, v, _, hi, _ in g.values for v in (v, hi) if v is not None]
    top = ymax if ymax is not None else _nice_max(max(values, default=0))
    top = max(top, max(values, default=0))
    y0 = top_pad + plot_h
    gw = plot_w / max(1, len(groups))
    bw = gw * 0.8 / max(1, len(series))
    parts = [f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{escape(title)}">']
    parts.append(f'<text x="{left}" y="14" font-weight="600">{escape(title)}</text>')
    parts += _y_axis(left, y0, plot_h, plot_w, top, unit)
    scale = plot_h / top if top else 0
    for gi, group in enumerate(groups):
        gx = left + gi * gw + gw * 0.1
        for name, value, lo, hi, tip in group.values:
            si = list(series).index(name)
            x = gx + si * bw
            colour = SERIES[si % len(SERIES)]
            if value is None:
                continue
            h = value * scale
            marked = name in group.marked
            look = f' fill-opacity="0.35" stroke="{TOTAL}" stroke-dasharray="3,2"' if marked else ""
            parts.append(
                f'<rect class="gbar{" marked" if marked else ""}" data-series="{escape(name)}" data-group="{escape(group.label)}" data-value="{raw(value)}" '
                f'x="{x:.2f}" y="{y0 - h:.2f}" width="{bw * 0.92:.2f}" height="{h:.2f}" fill="{colour}"{look} data-tip="{escape(tip)}"/>'
            )
            text = _tick_text(value, unit) if unit != "%" else f"{value:.1f}%"
            parts.append(f'<text x="{x + bw * 0.46:.2f}" y="{y0 - h - 4:.2f}" text-anchor="middle">{escape(("! " if marked else "") + text)}</text>')
            if lo is not None and hi is not None and hi > lo:
                cx = x + bw * 0.46
                parts.append(
                    f'<path d="M{cx:.2f},{y0 - lo * scale:.2f} V{y0 - hi * scale:.2f} M{cx - 3:.2f},{y0 - lo * scale:.2f} '
                    f'H{cx + 3:.2f} M{cx - 3:.2f},{y0 - hi * scale:.2f} H{cx + 3:.2f}" stroke="{INK}" fill="none"/>'
                )
        parts.append(f'<text x="{left + gi * gw + gw / 2:.1f}" y="{y0 + 15}" text-anchor="middle">{escape(group.label)}</text>')
    parts.append("</svg>")
    return (
        '<div class="chart">' + "".join(parts) + legend([(s, SERIES[i % len(SERIES)]) for i, s in enumerate(series)]) + "</div>"
    )


class Step(msgspec.Struct, frozen=True):
    """One step of a waterfall: a total (drawn from 0) or a change (drawn from the running sum)."""

    label: str
    amount: float
    kind: str  # "total", "loss" (from the running sum), "alone"/"cost" (a what-if, from the first total)
    tip: str
    #: A what-if step's fix's detail: its hedges (``may save``, ``saves up to``) go on the bar's
    #: label as on its tip and the table (:func:`~.whatif.hedged`).
    detail: str = ""


def step_amount_text(step: Step) -> str:
    """A waterfall step's amount in the one sign convention of the reports (docs/audit.md): dollars
    lost and dollars saved are positive amounts said in words, a fix that costs more says so; only a
    total is a bare amount. A saving its fix's detail hedges says so (``may save $17.1855``)."""
    from prefixbench.reports.whatif import hedged  # (imported here: reports.whatif loads the what-if engine)

    match step.kind:
        case "total":
            return fmt_usd(step.amount)
        case "loss":
            return f"lost {fmt_usd(abs(step.amount))}"
        case _:
            saved = -step.amount
            return hedged(f"saves {fmt_usd(saved)}", saved, step.detail) if saved >= 0 else f"costs {fmt_usd(-saved)} more"


def waterfall(steps: Sequence[Step], *, title: str, unit: str = "$", height: int = 300, width: int = 1000) -> str:
    """A cost waterfall: totals are bars from zero; a change floats from the running sum."""
    left, right, top_pad, bottom = 64, 10, 26, 96
    height += 26
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    running, spans = 0.0, []
    anchor = steps[0].amount if steps and steps[0].kind == "total" else 0.0
    for s in steps:
        if s.kind == "total":
            spans.append((0.0, s.amount))
            running = s.amount
        elif s.kind in ("alone", "cost"):
            # a what-if: floats from the first total (what was paid), not from the running sum
            end = anchor + s.amount
            spans.append((min(anchor, end), max(anchor, end)))
        else:
            end = running + s.amount
            spans.append((min(running, end), max(running, end)))
            running = end
    lo = min([0.0] + [a for a, _ in spans])
    top = _nice_max(max([b for _, b in spans] + [0]))
    y0 = top_pad + plot_h
    scale = plot_h / (top - lo) if top > lo else 0
    colours = {"total": TOTAL, "loss": UNCACHED, "saving": CACHED, "alone": CACHED, "cost": WRITTEN}
    sw = plot_w / max(1, len(steps))
    parts = [f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{escape(title)}">']
    parts.append(f'<text x="{left}" y="14" font-weight="600">{escape(title)}</text>')
    parts += _y_axis(left, y0, plot_h, plot_w, top, unit, lo)
    for i, (s, (a, b)) in enumerate(zip(steps, spans)):
        x = left + i * sw + sw * 0.15
        ya, yb = y0 - (a - lo) * scale, y0 - (b - lo) * scale
        parts.append(
            f'<rect class="wf-{s.kind}" data-label="{escape(s.label)}" data-value="{raw(s.amount)}" x="{x:.2f}" y="{yb:.2f}" '
            f'width="{sw * 0.7:.2f}" height="{max(0.8, ya - yb):.2f}" fill="{colours[s.kind]}" data-tip="{escape(s.tip)}"/>'
        )
        parts.append(f'<text x="{x + sw * 0.35:.2f}" y="{yb - 3:.2f}" text-anchor="middle">{escape(step_amount_text(s))}</text>')
        label = ellipsize(s.label, 34)
        parts.append(
            f'<text x="{x + sw * 0.35:.2f}" y="{y0 + 12}" text-anchor="end" transform="rotate(-30 {x + sw * 0.35:.2f} {y0 + 12})">'
            f"{escape(label)}</text>"
        )
    parts.append("</svg>")
    return '<div class="chart">' + "".join(parts) + "</div>"


def matrix(rows: Sequence[str], cols: Sequence[str], cells: dict[tuple[str, str], tuple[bool | None, str]], *, title: str) -> str:
    """A pass/fail grid (e.g. spec x window); None is a skipped (vacuous) cell, a missing cell is blank."""
    cw, rh, top_pad = 90, 22, 40
    left = max(260, round(6.5 * max((len(r) for r in rows), default=0)) + 12)  # room for the longest row name
    width, height = left + cw * len(cols) + 10, top_pad + rh * len(rows) + 10
    parts = [f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="{escape(title)}">']
    parts.append(f'<text x="4" y="14" font-weight="600">{escape(title)}</text>')
    for j, c in enumerate(cols):
        parts.append(f'<text x="{left + j * cw + cw / 2}" y="{top_pad - 6}" text-anchor="middle">{escape(c)}</text>')
    for i, r in enumerate(rows):
        y = top_pad + i * rh
        parts.append(f'<text x="{left - 6}" y="{y + 15}" text-anchor="end">{escape(r)}</text>')
        for j, c in enumerate(cols):
            if (r, c) not in cells:
                continue
            ok, tip = cells[(r, c)]
            word, fill = ("SKIP", SKIPPED) if ok is None else ("PASS", CACHED) if ok else ("FAIL", UNCACHED)
            parts.append(
                f'<rect class="{word.lower()}" x="{left + j * cw + 2}" y="{y + 2}" width="{cw - 4}" height="{rh - 4}" '
                f'fill="{fill}" data-tip="{escape(tip)}"/>'
                f'<text x="{left + j * cw + cw / 2}" y="{y + 15}" text-anchor="middle" style="fill:#fff">{word}</text>'
            )
    parts.append("</svg>")
    return '<div class="chart">' + "".join(parts) + "</div>"
