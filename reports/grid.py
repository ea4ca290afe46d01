"""Grid files: named sweeps as cartesian products (``prefixbench sweep --grid FILE.toml``).

::

    [sweep.seed-spread]                 # one named sweep; a file may hold several
    workloads = ["seed-coding"]         # every key takes a list or one value
    windows = ["32k", "128k"]           # "32k", "1m" or a plain integer
    presets = ["legacy", "patched"]
    engines = ["checkpoint"]            # per workload, the engines it mounts (default: its own),
                                        # and users' engines: installed names, "pkg.module:factory"
    profiles = ["lenient"]
    caches = ["byte-exact", { model = "vllm", capacity_blocks = 4096 }]
    tokenizer = "heuristic"
    seeds = "0-9"                       # or [0, 3, 5]
    price = "deepseek-v4-flash"         # optional; period, price_as_of beside it
    engine_config = "engines.toml"      # optional, relative to the grid file

    [sweep.seed-spread.options]         # workload options; a list is one more axis
    pruner = ["rewrite-only", "none"]

The runs are the product of workloads x profiles x caches x option values x windows x seeds x
engines x presets. A user's engine runs on every workload of its sweep (as ``--engines`` names
it), under ``patched`` alone unless the sweep names ``presets``; its ``engine_config`` table is
its factory's ``options.config``. Every problem in the file is reported before the first run, one line each,
naming ``file:sweep.NAME.key``. Flags given on the command line override the file's values for
every sweep it names (``--seeds 0-3`` replaces ``seeds``).
"""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from prefixbench.reports.options import parse_seeds, parse_window
from prefixbench.simulator.checks import spelled
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.scripted.registry import (
    WORKLOADS, is_builtin_engine, is_user_engine, option_value, read_engine_config, renamed_table, split_engine_config,
)
from prefixbench.workloads.runs.sweep import DEFAULT_WINDOWS, USER_ENGINE_PRESET, SweepSpec, make_cache_model, plan_sweep

KEYS = (
    "workloads", "windows", "presets", "engines", "profiles", "caches", "tokenizer", "seeds",
    "price", "period", "price_as_of", "engine_config", "options",
)
#: Singular spellings accepted for the list keys.
ALIASES = {"workload": "workloads", "window": "windows", "preset": "presets", "engine": "engines",
           "profile": "profiles", "cache": "caches", "seed": "seeds"}


class GridErrors(UserError):
    """Every problem of a grid file; the command line prints one line each."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)


class _Problems(msgspec.Struct):
    where: str
    lines: list[str]

    def add(self, key: str, message: str) -> None:
        line = f"{self.where}:{key}: {message}"
        if line not in self.lines:
            self.lines.append(line)


def read_grid(path: Path, name: str | None = None, *, overrides: Mapping[str, Any] | None = None) -> list[SweepSpec]:
    """The sweep specs of a grid file (all its sweeps, or the one named), with overrides applied.

    Raises:
        UserError: every problem found, one line each (``file:sweep.NAME.key: ...``).
    """
    from prefixbench.workloads.logs.reading import int_limit_text, read_text

    text = read_text(path)  # a folder or a device (/dev/zero never ends) is refused before reading
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:  # arrays or inline tables nested thousands deep
        raise UserError(f"{path}: TOML nested too deep to read (arrays or tables hundreds of levels deep)") from None
    except ValueError as exc:  # an integer beyond Python's int-string limit
        raise UserError(f"{path}: {int_limit_text(exc)}") from None
    problems = _Problems(str(path), [])
    sweeps = data.get("sweep")
    for key in data:
        if key != "sweep":
            problems.add(key, "unknown top-level key (sweeps are [sweep.NAME] tables)")
    if not isinstance(sweeps, dict) or not sweeps:
        problems.add("sweep", "no sweeps: add a [sweep.NAME] table")
        raise GridErrors(problems.lines)
    if name is not None and name not in sweeps:
        raise UserError(f"{path}: no sweep named {name!r} (the file has: {', '.join(sweeps)})")
    specs: list[SweepSpec] = []
    for sweep_name, table in sweeps.items():
        if name is not None and sweep_name != name:
            continue
        if not isinstance(table, dict):
            problems.add(f"sweep.{sweep_name}", "must be a table of keys")
            continue
        specs += _sweep_specs(path, sweep_name, table, dict(overrides or {}), problems)
    if problems.lines:
        raise GridErrors(problems.lines)
    return specs


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else [value]


def _sweep_specs(
    path: Path, sweep: str, table: dict[str, Any], overrides: dict[str, Any], problems: _Problems
) -> list[SweepSpec]:
    """One named sweep's specs: its keys read and checked (every problem noted), then the
    cartesian product over workloads, profiles, caches and workload options."""
    prefix = f"sweep.{sweep}"
    values, options_table = _sweep_values(table, overrides, prefix, problems)

    def strings(key: str, default: list[str]) -> list[str]:
        items = _as_list(values.get(key, default))
        if not items or not all(isinstance(i, str) and i for i in items):
            problems.add(f"{prefix}.{key}", f"must be a non-empty list of names, got {values.get(key)!r}")
            return []
        if len(set(items)) != len(items):
            problems.add(f"{prefix}.{key}", "names a value twice")
        return items

    workloads = strings("workloads", ["seed-coding"])
    axes = _Axes(
        presets=strings("presets", ["legacy", "envelope-fix", "prune-fix", "patched"]),
        profiles=strings("profiles", ["lenient"]),
        engines=strings("engines", []) if "engines" in values else [],
        windows=_windows(values.get("windows", list(DEFAULT_WINDOWS)), f"{prefix}.windows", problems),
        caches=_caches(values.get("caches", ["byte-exact"]), f"{prefix}.caches", problems, flag="caches" in overrides),
        tokenizer=_tokenizer(values, prefix, problems),
        seeds=_seeds(values.get("seeds", [0]), f"{prefix}.seeds", problems),
        price=_price(values, prefix, problems),
    )
    known = _known_workloads(workloads, axes.engines, options_table, prefix, problems)
    engine_sections = _engine_sections(path, values, prefix, problems)
    if not (axes.windows and axes.seeds and axes.presets and axes.profiles and axes.caches):
        return []
    specs: list[SweepSpec] = []
    for workload in known:
        specs += _workload_specs(workload, axes, options_table, engine_sections, values, prefix, problems)
    return specs


class _Axes(msgspec.Struct, frozen=True):
    """A named sweep's axes other than workloads and workload options, as read from its table."""

    presets: list[str]
    profiles: list[str]
    engines: list[str]
    windows: list[int]
    caches: list[str]
    tokenizer: str
    seeds: list[int]
    price: object  # a PriceRow or None (pricing is imported only when a sweep names a price)


def _sweep_values(
    table: dict[str, Any], overrides: dict[str, Any], prefix: str, problems: _Problems
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The sweep's keys under their canonical names, the command line's flags over them, and its
    workload options (``-`` spelt ``_``)."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        canonical = ALIASES.get(key, key)
        if canonical not in KEYS:
            problems.add(f"{prefix}.{key}", f"unknown key (known: {', '.join(KEYS)})")
            continue
        values[canonical] = value
    values.update({k: v for k, v in overrides.items() if k != "options"})
    options_table = values.get("options", {})
    if not isinstance(options_table, dict):
        problems.add(f"{prefix}.options", "must be a table of workload options")
        options_table = {}
    options_table = {k.replace("-", "_"): v for k, v in options_table.items()}
    options_table.update(overrides.get("options", {}))
    return values, options_table


def _tokenizer(values: dict[str, Any], prefix: str, problems: _Problems) -> str:
    tokenizer = values.get("tokenizer", "heuristic")
    if not isinstance(tokenizer, str):
        problems.add(f"{prefix}.tokenizer", f"must be a name, got {tokenizer!r}")
        return "heuristic"
    return tokenizer


def _known_workloads(
    workloads: list[str], engines: list[str], options_table: dict[str, Any], prefix: str, problems: _Problems
) -> list[str]:
    """The sweep's workloads that exist; unknown ones, and engines or options no workload of the
    sweep takes, are problems."""
    for workload in workloads:
        if workload not in WORKLOADS:
            problems.add(f"{prefix}.workloads", f"unknown workload {workload!r} (known: {', '.join(WORKLOADS)})")
    known = [w for w in workloads if w in WORKLOADS]
    for engine in engines:
        if is_user_engine(engine):
            continue  # a user's engine runs on every workload, as --engines runs it
        if not is_builtin_engine(engine):  # neither built in nor installed: say what is, and the import-path form
            from prefixbench.kernel.loading import unknown_engine

            problems.add(f"{prefix}.engines", f"{unknown_engine(engine)}; built-in: {', '.join(sorted({e for w in WORKLOADS.values() for e in w.engines}))}")
        elif not any(engine in WORKLOADS[w].engines for w in known):
            problems.add(f"{prefix}.engines", f"no workload of this sweep mounts engine {engine!r}")
    for option in options_table:
        if not any(option in _settable(w) for w in known):
            elsewhere = _SET_BY_THE_SWEEP.get(option) if any(option in WORKLOADS[w].option_names() for w in known) else None
            problems.add(f"{prefix}.options.{option}", f"no workload of this sweep takes this option ({', '.join(known)})"
                         + (f"; {elsewhere}" if elsewhere else ""))
    return known


#: A workload's fields a sweep sets itself, not its options table: where each is set instead.
_SET_BY_THE_SWEEP = {
    "seed": "a sweep's seeds are its seeds key",
    "binding": "the client's binding follows the sweep's profiles",
    "checkpoint": "an engine's settings go in the file engine_config names",
    "user_tail": "an engine's settings go in the file engine_config names",
    "ranges": "an engine's settings go in the file engine_config names",
}


def _settable(workload: str) -> tuple[str, ...]:
    """The options a grid's options table sets on ``workload``: those it declares, each a flag of
    ``sweep`` (``steps``, ``effort``...). Its factory's other fields (``seed``, ``binding``, an
    engine's settings, seed-coding's ``prompt``) are the sweep's to set: given as options they
    reached the factory unchecked (a traceback mid-run, or Python's own words: fuzz60)."""
    return tuple(option.name for option in WORKLOADS[workload].options)


def _engine_sections(path: Path, values: dict[str, Any], prefix: str, problems: _Problems) -> dict[str, Any] | None:
    """The sweep's ``engine_config`` file read (relative to the grid file), or None."""
    if "engine_config" not in values:
        return None
    if not isinstance(values["engine_config"], str):
        # (an inline table, [sweep.NAME.engine_config."..."]: read as a file name, it said "cannot read")
        problems.add(f"{prefix}.engine_config", "engine_config is a file path (a TOML file of tables), not a "
                     f"{'table' if isinstance(values['engine_config'], dict) else type(values['engine_config']).__name__}")
        return None
    config_path = Path(str(values["engine_config"]))
    if not config_path.is_absolute():
        config_path = path.parent / config_path
    try:
        return read_engine_config(config_path)
    except UserError as exc:
        problems.add(f"{prefix}.engine_config", str(exc))
        return None


def _workload_specs(
    workload: str, axes: _Axes, options_table: dict[str, Any], engine_sections: dict[str, Any] | None,
    values: dict[str, Any], prefix: str, problems: _Problems,
) -> list[SweepSpec]:
    """One workload's specs: every profile, cache and combination of its options, each planned
    once so a bad combination is a problem before anything runs."""
    entry = WORKLOADS[workload]
    own_engines = tuple(e for e in axes.engines if e in entry.engines or is_user_engine(e))
    if axes.engines and not own_engines:
        if any(is_builtin_engine(e) for e in axes.engines):  # (an unknown name is its own problem, said once)
            problems.add(f"{prefix}.engines", f"workload {workload!r} mounts none of them (its engines: {', '.join(entry.engines)})")
        return []
    own = {k: _as_list(v) for k, v in options_table.items() if k in _settable(workload)}
    base: dict[str, object] = {}
    engine_configs: dict[str, dict[str, object]] = {}
    if engine_sections is not None:
        where = str(values["engine_config"])
        try:
            base, engine_configs = split_engine_config(workload, engine_sections, where)
            for name in engine_configs:  # a table no engine of the sweep reads would be ignored
                if name not in axes.engines:
                    renamed_table(name, axes.engines, where)
                    raise UserError(f"{where}: [{name}] is set but the sweep does not run it; add it to engines or remove the table")
        except UserError as exc:
            problems.add(f"{prefix}.engine_config", str(exc))
            return []
    presets: tuple[str, ...] = tuple(axes.presets)
    user_presets: tuple[str, ...] = ()
    if "presets" not in values and any(is_user_engine(e) for e in own_engines):
        # As sweep --engine: a user's engine runs once a window under patched unless presets are named.
        if all(is_user_engine(e) for e in own_engines):
            presets = (USER_ENGINE_PRESET,)
        else:
            user_presets = (USER_ENGINE_PRESET,)
    specs = []
    for profile, cache in itertools.product(axes.profiles, axes.caches):
        for combo in itertools.product(*own.values()) if own else [()]:
            options = dict(base)
            for key, value in zip(own, combo):
                options[key] = option_value(key, value)
            spec = SweepSpec(
                workload=workload, windows=tuple(axes.windows), presets=presets, engines=own_engines,
                profile=profile, cache=cache, tokenizer=axes.tokenizer, options=options, price=axes.price,
                seeds=tuple(axes.seeds), engine_configs=engine_configs, user_engine_presets=user_presets,
            )
            try:
                plan_sweep(spec)
            except (UserError, TypeError) as exc:
                problems.add(prefix, f"{workload}, profile {profile}, cache {cache}: {exc}")
                continue
            specs.append(spec)
    return specs


def _windows(value: object, key: str, problems: _Problems) -> list[int]:
    out = []
    for item in _as_list(value):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            problems.add(key, f"{item!r} is not a window (use e.g. \"32k\" or 32000)")
            continue
        try:
            out.append(parse_window(str(item)))
        except UserError as exc:
            problems.add(key, str(exc).removeprefix("--windows: "))
    if not _as_list(value):
        problems.add(key, "give at least one window")
    if len(set(out)) != len(out):
        problems.add(key, "names a window twice")
    return out


def _caches(value: object, key: str, problems: _Problems, flag: bool = False) -> list[str]:
    """The cache models named, each checked: a bad one is a problem at ``key`` (or of ``--cache``
    where the flag gave it, ``flag``) and left out of the runs."""
    if not _as_list(value):  # (no cache model: the sweep planned no run, and the command had none to plan)
        problems.add(key, "give at least one cache model")
    out = []
    for item in _as_list(value):
        if isinstance(item, str) and item:
            spec = item
        elif isinstance(item, dict) and isinstance(item.get("model"), str):
            opts = ",".join(f"{k}={v}" for k, v in item.items() if k != "model")
            spec = item["model"] + (f":{opts}" if opts else "")
        else:
            problems.add(key, f"{item!r} is not a cache model (a name such as \"openai:mode=5.6\" or {{ model = \"vllm\", ... }})")
            continue
        try:
            make_cache_model(spec, where="--cache" if flag else None)
        except UserError as exc:
            if flag:
                raise
            problems.add(key, str(exc))
            continue
        out.append(spec)
    return out


def _seeds(value: object, key: str, problems: _Problems) -> list[int]:
    if isinstance(value, str):
        try:
            return list(parse_seeds(value, key))
        except UserError as exc:
            problems.add(key, str(exc).removeprefix(f"{key}: "))
            return []
    if isinstance(value, tuple):
        return list(value)
    items = _as_list(value)
    if not items or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in items):
        problems.add(key, f"seeds are integers >= 0 or a range such as \"0-9\", got {spelled(value)}")
        return []
    if len(set(items)) != len(items):
        problems.add(key, "names a seed twice")
    return [int(s) for s in items]


def _price(values: dict[str, Any], prefix: str, problems: _Problems):
    from prefixbench.reports.options import price_row
    from prefixbench.simulator.pricing import PriceRow

    price = values.get("price")
    if price is None:
        for key in ("period", "price_as_of"):
            if key in values and values[key] is not None:
                problems.add(f"{prefix}.{key}", "applies only with price")
        return None
    if isinstance(price, PriceRow):
        return price
    if not isinstance(price, str):
        problems.add(f"{prefix}.price", f"must be one price model name, got {price!r}")
        return None
    for key, example in (("price_as_of", '"2025-06-01"'), ("period", '"peak"')):
        if values.get(key) is not None and not isinstance(values[key], str):
            # (a TOML date or a number reached the date parser, a TypeError traceback)
            problems.add(f"{prefix}.{key}", f"must be text such as {example}, got {values[key]!r}")
            return None
    try:
        return price_row(price, values.get("price_as_of"), values.get("period"), named='period "peak"', option=None)
    except UserError as exc:
        problems.add(f"{prefix}.price", str(exc))
        return None
