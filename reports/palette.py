"""The one palette: every colour a PNG chart or an HTML page draws with, by role, so that a
token kind, a preset, a part or a miss cause looks the same in every chart and on every page.

Kept apart from :mod:`prefixbench.reports.charts` so that modules which only name a colour
(report tables, the HTML page's legends) do not import matplotlib. No other module spells a
colour: tests/unit/reports/test_palette.py fails on a hex colour written anywhere else in
``reports/``.

Miss causes get a colour each from :func:`cause_colour`: the causes named in
:data:`CAUSE_BASE` take its hand-picked colours; any other cause (one added to
:data:`prefixbench.workloads.audit.causes.CAUSES` later) gets a colour computed from its name
alone, so adding a cause never moves another cause's colour and the same cause is drawn the
same everywhere.
"""

from __future__ import annotations

import colorsys
import hashlib

# --- token kinds -------------------------------------------------------------------------
CACHED = "#2da44e"
UNCACHED = "#cf222e"
#: Tokens written to the cache (Anthropic's 5 m write; the only write the PNGs draw).
WRITTEN = "#bf8700"
#: Tokens written at the 1 h TTL (the HTML page splits the write in two).
WRITTEN_1H = "#8250df"
#: Explicit-cache storage (Gemini CachedContent), a cost part of its own.
STORAGE = "#1b7c83"
#: A request the provider rejected, or one the log reports no usage for.
REJECTED = "#8c959f"
#: The predicted read (a line), a fold, a summary call.
FOLD = "#0969da"
PREDICTED = FOLD
#: Totals in a waterfall, neutral text on a chart.
TOTAL = "#57606a"
#: Axis lines; grid lines.
AXIS = "#8c959f"
GRID = "#eaeef2"
#: Text.
INK = "#1f2328"
#: A spec that proved nothing (vacuous: skipped).
SKIPPED = "#6e7781"
#: History rewritten with no rewrite declared (the engines comparison).
SILENT = "#bf8700"
#: Presets, by their place among the known presets.
PRESET_COLOURS = ("#cf222e", "#bf8700", "#8250df", "#2da44e", "#0969da", "#57606a")
#: Series past the presets (grouped bars of the HTML page).
SERIES = (*PRESET_COLOURS, "#1b7c83", "#bc4c00")

#: Colours of the token kinds, by the name the JSON and the charts give them.
ROLES: dict[str, str] = {
    "cached": CACHED,
    "uncached": UNCACHED,
    "written": WRITTEN,
    "written_1h": WRITTEN_1H,
    "rejected": REJECTED,
    "predicted": PREDICTED,
}

# --- miss causes ---------------------------------------------------------------------------
#: The known causes' colours, by name: distinct from each other and from the token kinds above
#: (a cause marker sits over the bars). A cause not named here gets a computed colour.
CAUSE_BASE: dict[str, str] = {
    "cold-start": "#6e7781",  # grey: unavoidable
    "concurrent-write": "#a475f9",
    "ttl-expired": "#e16f24",
    "model-changed": "#0550ae",
    "effort-changed": "#bf3989",
    "system-changed": "#1b7c83",
    "tools-changed": "#4d2d00",
    "messages-changed": "#a40e26",
    "previous-message-not-found": "#54aeff",
    "compaction": "#116329",
    "resume": "#6639ba",
    "below-minimum": "#d4a72c",
    "breakpoint-placement": "#ff8182",
    "provider-best-effort": "#3e1f79",
    "unexplained": "#000000",  # black: the log cannot tell
}


def cause_colour(cause: str) -> str:
    """The colour of a miss cause: its :data:`CAUSE_BASE` entry, or for a cause past those, a
    colour computed from the name (the same every run, on every page)."""
    known = CAUSE_BASE.get(cause)
    if known is not None:
        return known
    digest = hashlib.sha256(cause.encode("utf-8")).digest()
    hue = int.from_bytes(digest[:2], "big") / 65536
    lightness = (0.32, 0.42, 0.52)[digest[2] % 3]
    taken = [_rgb(c) for c in (*CAUSE_BASE.values(), *ROLES.values())]
    for _ in range(24):  # turn the hue until the colour stands apart from every fixed one
        rgb = colorsys.hls_to_rgb(hue, lightness, 0.75)
        if min(_distance(rgb, other) for other in taken) >= MIN_DISTANCE:
            break
        hue = (hue + 0.618034) % 1.0
    return "#" + "".join(f"{round(v * 255):02x}" for v in rgb)


#: How far apart (RGB, 0..1 per channel, Euclidean) a computed cause colour stays from the fixed ones.
MIN_DISTANCE = 0.12


def _rgb(colour: str) -> tuple[float, float, float]:
    return tuple(int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))  # type: ignore[return-value]


def _distance(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5


def cause_colours() -> dict[str, str]:
    """Every known cause's colour, in the order of CAUSES."""
    from prefixbench.workloads.audit.causes import CAUSES

    return {cause: cause_colour(cause) for cause in CAUSES}
