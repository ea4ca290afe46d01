"""Named sets of fixes. Each known bug is a switch; ``legacy`` has every switch off.

| switch              | off = the bug                                              | seed |
|---------------------|------------------------------------------------------------|------|
| inherit_envelope    | the summary call drops effort/temperature/stop, so it is   | 001  |
|                     | sent in another request family and misses the cache       |      |
| cache_aware_prune   | the pruner rewrites the region the summary call replays   | 001  |
| reasoning_pairs     | range compression splits reasoning from its reply, so a   | 000  |
|                     | rebuilt assistant turn loses or gains reasoning           |      |
| retained_reasoning  | user-tail checkpoints drop thinking turns and backfill    | 003  |
|                     | "" even for strict relays (before ADR 0256)               |      |
| normalize_reasoning | backfill picks a fixed field and overwrites live rows'    | 003  |
|                     | reasoning with the placeholder (before D677)              |      |
"""

from __future__ import annotations

import msgspec
from prefixbench.simulator.errors import UserError, did_you_mean


class Preset(msgspec.Struct, frozen=True):
    """A named combination of fix switches (True = the fix is on)."""

    name: str
    #: Summary call inherits reasoning effort, temperature and stop from the routed header
    #: on an exact provider/model match (seed 001, cause 1).
    inherit_envelope: bool
    #: When a summary runs anyway, prune only the retained tail (seed 001, cause 2).
    cache_aware_prune: bool
    #: Range compression widens to reasoning/reply pairs and strips orphaned reasoning (seed 000).
    reasoning_pairs: bool = True
    #: User-tail checkpoints keep recent thinking turns and backfill a non-empty placeholder
    #: for strict relays (ADR 0256).
    retained_reasoning: bool = True
    #: Reasoning backfill normalizes to the newest real row's field and fills only empty rows (D677).
    normalize_reasoning: bool = True
    description: str = ""



PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset("legacy", False, False, False, False, False, "every fix off: each engine as before its seed's fix"),
        Preset("envelope-fix", True, False, False, False, False, "only seed 001's summary-call envelope fix"),
        Preset("prune-fix", False, True, False, False, False, "only seed 001's cache-aware prune order"),
        Preset("patched", True, True, description="every fix on"),
        # ADR 0256 without its D677 amendment: the only way to see D677's bug, which needs the
        # rebuilt rows ADR 0256 introduced (the reasoning-field-normalized spec fails here).
        Preset("pre-d677", True, True, True, True, False, "every fix on except seed 003's D677 amendment"),
    )
}


#: The presets of seed 001's table, in the order reports list them (the default sweep).
PRESET_ORDER = ("legacy", "envelope-fix", "prune-fix", "patched")


def get_preset(name: str, option: str | None = None) -> Preset:
    """Look a preset up by name (UserError naming ``option``, the option that gave it, the closest
    known name and all of them)."""
    try:
        return PRESETS[name]
    except KeyError:
        hint = did_you_mean(name, PRESETS)
        raise UserError(f"{option + ': ' if option else ''}unknown preset {name!r}{': ' + hint if hint else ''} "
                        f"(known: {', '.join(PRESETS)})") from None
