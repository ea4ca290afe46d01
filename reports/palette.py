"""Colours by role, shared by every PNG chart so a preset or a part looks the same everywhere.

Kept apart from :mod:`prefixbench.reports.charts` so that modules which only name a colour
(report tables, the HTML page's legends) do not import matplotlib."""

CACHED = "#2da44e"
UNCACHED = "#cf222e"
FOLD = "#0969da"
REJECTED = "#8c959f"
#: A spec that proved nothing (vacuous: skipped).
SKIPPED = "#6e7781"
#: History rewritten with no rewrite declared (the engines comparison).
SILENT = "#bf8700"
#: Presets, by their place among the known presets.
PRESET_COLOURS = ("#cf222e", "#bf8700", "#8250df", "#2da44e", "#0969da", "#57606a")
