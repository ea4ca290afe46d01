"""Reading a strategy's ``--engine-config`` table: known keys, checked types, defaults.

A bad table raises ValueError naming the engine and the key; the loader turns it into one line
and exit status 2 (``engine NAME: the factory raised ValueError: ...``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple


def spelled(value: object) -> str:
    """``value`` as the engine's TOML or JSON config spells it: ``true``, ``false``, ``null``, else
    as Python shows it (:func:`prefixbench.simulator.checks.spelled`, kept here as a strategy
    imports only the public engine API and its own package)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else repr(value)


#: A setting's accepted types, by the type of its default (an int setting takes no bool).
_NUMBER = (int, float)


def read_settings(engine: str, config: Mapping[str, Any], defaults: Mapping[str, Any],
                  replaced: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``defaults`` updated by ``config``: every key known, every value of its default's type.

    A default of None accepts an int (a figure computed from the window unless given).
    ``replaced`` names, for a setting an earlier release had, what takes its place: its error
    says that first, not only the known keys.

    Raises:
        ValueError: an unknown key, or a value of the wrong type or sign.
    """
    unknown = sorted(set(config) - set(defaults))
    for key in unknown:
        if replaced and key in replaced:
            raise ValueError(f"{engine}: setting {key!r} was replaced: {replaced[key]}")
    if unknown:
        raise ValueError(f"{engine}: unknown setting {unknown[0]!r} (known: {', '.join(sorted(defaults))})")
    settings = dict(defaults)
    for key, value in config.items():
        default = defaults[key]
        settings[key] = _checked(engine, key, value, default)
    return settings


def _checked(engine: str, key: str, value: object, default: object) -> object:
    where = f"{engine}: {key}"
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"{where} must be true or false, got {spelled(value)}")
        return value
    if isinstance(default, list):
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError(f"{where} must be a list of strings, got {spelled(value)}")
        return list(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            quoted = '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
            raise ValueError(f"{where} must be a string, got {spelled(value)}: quote it, {key} = {quoted}")
        return value
    # Numbers: int settings (and None defaults) take ints, float settings take ints or floats.
    wanted = _NUMBER if isinstance(default, float) else (int,)
    if isinstance(value, bool) or not isinstance(value, wanted) or value < 0:
        kind = "a number" if isinstance(default, float) else "an integer"
        raise ValueError(f"{where} must be {kind} >= 0, got {spelled(value)}")
    return value


class TtlSetting(NamedTuple):
    """An engine's own cache-lifetime setting that its behaviour goes by, where it is not the
    lifetime the run's cache gives its requests (an engine cannot see the run's cache): found by
    the engine's ``ttl_setting`` for the sweep, bench and check notes
    (:func:`prefixbench.reports.warning_notes.ttl_notes`)."""

    #: The setting's name in the engine's ``--engine-config`` table, and its value.
    name: str
    seconds: int
    #: What the engine does by it (``clears old tool results``), and what its runs model by it
    #: (``the clearing of old tool results``).
    does: str
    models: str
    #: The shortest idle gap (logical ms) at which the engine acts otherwise than with the run's
    #: lifetime as its setting: a run whose user was never away that long is not affected.
    acts_ms: int


def ttl_note_text(engine: str, found: TtlSetting, run_ttl_ms: int, cache: str) -> str:
    """The sweep's note of an engine that went by its own lifetime ``found``, not the run's."""
    return (f"{engine} {found.does} by its {found.name} ({found.seconds:,} s), not by the run's cache: --cache {cache} "
            f"gives its requests {run_ttl_ms // 1000:,} s; set {found.name} = {run_ttl_ms // 1000}, or run a cache of "
            f"{found.seconds:,} s")
