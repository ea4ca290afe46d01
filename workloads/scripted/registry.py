"""Workloads by name, and the one call that turns (workload, preset, engine) into a run."""

from __future__ import annotations

import re

import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from prefixbench.simulator.errors import UserError, did_you_mean
from prefixbench.kernel.engines.checkpoint import CheckpointConfig
from prefixbench.kernel.engines.user_tail import UserTailConfig
from prefixbench.kernel.api import Engine, EngineOptions
from prefixbench.kernel.loading import installed_engines, is_import_path, load_engine
from prefixbench.kernel.presets import Preset, get_preset
from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.checks import range_text
from prefixbench.simulator.provider import SimulatedProvider, Validator
from prefixbench.simulator.validate import PROFILES, make_validator
from prefixbench.workloads.scripted.base import Run, Workload, missing_members
from prefixbench.workloads.scripted.idle_gaps import IdleGapsWorkload
from prefixbench.workloads.logs.reading import MAX_DEPTH, check_tree, int_limit_text, loads, read_text
from prefixbench.workloads.scripted.seed_coding import SeedCodingWorkload
from prefixbench.workloads.scripted.loop import MAX_TOOL_STEPS, MAX_TURNS
from prefixbench.workloads.scripted.subagents import MAX_SUBAGENTS, SubagentsWorkload
from prefixbench.workloads.scripted.thinking_tools import ThinkingToolsWorkload, binding_for_profile
from prefixbench.workloads.scripted.thinking_tools import ranges_config as thinking_ranges_config

WorkloadFactory = Callable[..., Workload]


class WorkloadOption(msgspec.Struct, frozen=True):
    """One option a workload takes besides its window (``--steps`` for ``steps``)."""

    name: str
    type: type
    help: str
    #: The word that asks for the adapter's default, given to the factory as None (``--effort default``).
    default_word: str | None = None

    @property
    def flag(self) -> str:
        """The command-line flag that sets it."""
        return "--" + self.name.replace("_", "-")


class EngineSection(msgspec.Struct, frozen=True):
    """How a ``[engine]`` table of ``--engine-config`` becomes a workload option."""

    option: str
    parse: Callable[[Mapping[str, Any]], object]


class WorkloadEntry(msgspec.Struct, frozen=True):
    """A workload by name: its factory, the engines it mounts and the options it takes."""

    name: str
    factory: WorkloadFactory
    summary: str
    #: Engines it can mount; the first is its default.
    engines: tuple[str, ...]
    options: tuple[WorkloadOption, ...]
    #: Per-engine config sections it accepts (engine -> workload option).
    engine_sections: Mapping[str, EngineSection] = msgspec.field(default_factory=dict)
    #: Workload options that bind its client to a provider profile (None: it takes none).
    bind_profile: Callable[[str], dict[str, object]] | None = None
    #: Whether ``check --engine`` and the pytest plugin run a user's engine on it.
    engine_gate: bool = False

    def __post_init__(self) -> None:
        missing = missing_members(self.factory)  # type: ignore[arg-type]
        if missing:
            raise TypeError(
                f"workload {self.name!r}: {getattr(self.factory, '__name__', self.factory)!r} does not declare "
                f"{', '.join(missing)} (the Workload protocol, workloads/scripted/base.py)"
            )

    @property
    def default_engine(self) -> str:
        """The engine a sweep mounts when none is named."""
        return self.engines[0]

    def option_names(self) -> tuple[str, ...]:
        """The options the factory accepts besides its window (engine sections included)."""
        return tuple(name for name in self.factory.__struct_fields__ if name != "window")  # type: ignore[attr-defined]


def _seed_checkpoint_section(section: Mapping[str, Any]) -> object:
    CheckpointConfig.from_mapping(section)  # validate the keys now; the workload merges its defaults
    return dict(section)


WORKLOADS: dict[str, WorkloadEntry] = {
    entry.name: entry
    for entry in (
        WorkloadEntry(
            "seed-coding",
            SeedCodingWorkload,
            "seed 001's scripted coding session: tool steps, a pruner that rewrites every third result",
            engines=("checkpoint",),
            options=(
                WorkloadOption("steps", int, f"tool steps per run, {range_text(1, MAX_TOOL_STEPS)} (default: 60)"),
                WorkloadOption("effort", str, "conversation reasoning effort: low|high|max|default (default: max)", default_word="default"),
                WorkloadOption("pruner", str, "rewrite-only|none|default (default: rewrite-only)"),
                WorkloadOption("threshold_ratio", float, "compact at this share of the window (default: 0.8)"),
                WorkloadOption("retain_ratio", float, "verbatim tail budget as a share of the window (default: 0.16)"),
                WorkloadOption("retain_tokens", int, f"verbatim tail budget in tokens, {range_text(0)}, below the threshold (--threshold-ratio "
                               "x the window) (exclusive with --retain-ratio)"),
            ),
            engine_sections={"checkpoint": EngineSection("checkpoint", _seed_checkpoint_section)},
            engine_gate=True,
        ),
        WorkloadEntry(
            "thinking-tools",
            ThinkingToolsWorkload,
            "DeepSeek thinking mode with tools: user turns of tool steps carrying reasoning",
            engines=("user-tail", "checkpoint", "ranges"),
            options=(
                WorkloadOption("turns", int, f"user turns, {range_text(1, MAX_TURNS)} (default: 4)"),
                WorkloadOption("steps_per_turn", int, f"tool steps per turn, {range_text(1, MAX_TOOL_STEPS)} (default: 40)"),
                WorkloadOption("reasoning_field", str, "the field a relay reads (default: reasoning_content)"),
                WorkloadOption("effort", str, "conversation reasoning effort: low|high|max (default: high)"),
            ),
            engine_sections={
                "checkpoint": EngineSection("checkpoint", CheckpointConfig.from_mapping),
                "user-tail": EngineSection("user_tail", UserTailConfig.from_mapping),
                "ranges": EngineSection("ranges", thinking_ranges_config),
            },
            bind_profile=lambda profile: {"binding": binding_for_profile(profile)},
            engine_gate=True,
        ),
        WorkloadEntry(
            "subagents",
            SubagentsWorkload,
            "a main agent fans out concurrent subagents sharing a freshly written head (the write race)",
            engines=("checkpoint",),
            options=(
                WorkloadOption("subagents", int, f"concurrent subagents, {range_text(1, MAX_SUBAGENTS)} (default: 4)"),
                WorkloadOption("subagent_steps", int, f"read steps per subagent, {range_text(1, MAX_TOOL_STEPS)} (default: 6)"),
                WorkloadOption("main_steps", int, f"main-agent steps before the fan-out, {range_text(1, MAX_TOOL_STEPS)} (default: 4)"),
            ),
        ),
        WorkloadEntry(
            "idle-gaps",
            IdleGapsWorkload,
            "user turns separated by idle gaps around the cache TTL (use a TTL cache model)",
            engines=("checkpoint",),
            options=(
                WorkloadOption("turns", int, f"user turns, {range_text(1, MAX_TURNS)} (default: 6)"),
                WorkloadOption("steps_per_turn", int, f"tool steps per turn, {range_text(1, MAX_TOOL_STEPS)} (default: 6)"),
                WorkloadOption("gap_s", float, "centre of the idle gaps in seconds (default: 300)"),
            ),
        ),
    )
}


def option_names() -> tuple[str, ...]:
    """Every workload option of the registry, once each, in registry order (one flag each)."""
    return tuple(dict.fromkeys(o.name for entry in WORKLOADS.values() for o in entry.options))


def option_value(name: str, value: object) -> object:
    """A workload option's value as its factory takes it: a workload's word for the adapter's
    default (``effort = "default"``) is None, any other value itself."""
    words = {o.default_word for entry in WORKLOADS.values() for o in entry.options if o.name == name}
    return None if isinstance(value, str) and value in words else value


def get_workload(name: str, option: str | None = None) -> WorkloadEntry:
    """A workload entry by name (UserError naming ``option``, the option that gave it, the closest
    known name and all of them)."""
    try:
        return WORKLOADS[name]
    except KeyError:
        hint = did_you_mean(name, WORKLOADS)
        raise UserError(f"{option + ': ' if option else ''}unknown workload {name!r}{': ' + hint if hint else ''} "
                        f"(known: {', '.join(WORKLOADS)})") from None


def all_engines() -> tuple[str, ...]:
    """Every engine some workload mounts, in registry order."""
    return tuple(dict.fromkeys(e for entry in WORKLOADS.values() for e in entry.engines))


def user_engines() -> tuple[str, ...]:
    """Engines installed packages declare (entry-point group ``prefixbench.engines``), by name."""
    return tuple(installed_engines())


def is_builtin_engine(engine: str) -> bool:
    """Whether ``engine`` names one of prefixbench's own engines."""
    return engine in all_engines()


def is_user_engine(engine: str) -> bool:
    """Whether ``engine`` names a user's engine: ``package.module:factory`` or an installed name."""
    return not is_builtin_engine(engine) and (is_import_path(engine) or engine in installed_engines())


def make_engine(workload: Workload, engine: str, preset: Preset, config: Mapping[str, Any] | None = None) -> Engine:
    """The engine a run mounts: a built-in one the workload configures, or a user's engine
    (an installed name or ``package.module:factory``) from its factory, given ``config``
    (its ``--engine-config`` table; built-in engines take theirs as workload options).

    Raises:
        UserError: for a built-in engine the workload does not mount, or a user engine that
            fails to load or build (one line naming it).
    """
    if is_builtin_engine(engine):
        entry = get_workload(workload.name)
        if engine not in entry.engines:
            raise UserError(f"workload {workload.name!r} has no engine {engine!r} (known: {', '.join(entry.engines)})")
        return workload.engine(engine, preset)
    options = EngineOptions(workload=workload.name, preset=preset, params=workload.params(), config=dict(config or {}))
    built = load_engine(engine).build(workload.window, options)
    if built.name in all_engines():
        # Its runs would be filed, shown and compared as the built-in engine's (one key, one row).
        raise UserError(
            f"engine {engine}: its name {built.name!r} is a built-in engine's, so its runs would be taken for "
            f"{built.name}'s: give the engine another name"
        )
    # The workload's client behaviour (e.g. a relay's reasoning placeholder) applies to every engine.
    return workload.wrap_client(built)


def make_workload(name: str, window: int, **options: object) -> Workload:
    """Instantiate a workload by name for a window (UserError on an option it does not take)."""
    entry = get_workload(name)
    accepted = entry.option_names()
    for key in options:
        if key not in accepted:
            flag = "--" + key.replace("_", "-")
            flags = ", ".join(option.flag for option in entry.options) or "none"
            raise UserError(f"{flag} does not apply to workload {name!r} (its options: {flags})")
    return entry.factory(window=window, **options)


#: A table header that names an engine by import path without quotes (``[my_engine:factory]``).
_BARE_IMPORT_PATH = re.compile(r"^\s*\[\s*([A-Za-z_][\w.]*:[\w.]+)\s*\]", re.MULTILINE)


def quote_hint(text: str) -> str:
    """What to write instead when a TOML table names an engine by import path unquoted (a ``:``
    is not allowed in a bare key): ``; quote a table named by import path: ["my_engine:factory"]``."""
    found = _BARE_IMPORT_PATH.search(text)
    return f"; quote a table named by import path: [\"{found.group(1)}\"]" if found else ""


def read_engine_config(path: Path, engines: Sequence[str] = ()) -> dict[str, Mapping[str, Any]]:
    """Per-engine config sections from a TOML (``.toml``, any case) or JSON file: ``{engine: {key: value}}``.
    ``engines``: the engines the command runs, as given; a table named after one of them another
    way (a user engine's ``name`` or module for ``my_engine:factory``) is refused naming the
    table to write instead."""
    text = read_text(path)
    is_toml = path.suffix.lower() == ".toml"
    kind = "TOML" if is_toml else "JSON"
    if is_toml:
        try:
            data: object = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise UserError(f"{path}: not valid TOML ({exc}){quote_hint(text)}") from None
        except RecursionError:
            raise UserError(f"{path}: TOML nested too deep (at most {MAX_DEPTH} levels)") from None
        except ValueError as exc:  # an integer beyond Python's int-string limit
            raise UserError(f"{path}: {int_limit_text(exc)}") from None
        check_tree(data, str(path))
    else:
        data = loads(text, str(path), whole_file=True)
    if not isinstance(data, dict):
        raise UserError(f"{path}: expected a {kind} table of engines, e.g. {{\"ranges\": {{...}}}}")
    if not data:  # an empty file (or {}) sets nothing: likely the wrong file, so say so
        raise UserError(f"{path}: no engine tables: the {kind} file sets no engine's settings (expected e.g. [ranges] with its keys)")
    known = all_engines()
    for engine, section in data.items():
        if engine not in known and not is_user_engine(engine):
            meant = other_name_of(engine, engines)
            if meant is not None:
                ref, how = meant
                raise UserError(f"{path}: [{engine}] names {ref} by {how}, but a user engine's table is named as "
                                f'--engine gives it: ["{ref}"]')
            installed = sorted(name for name in installed_engines() if name not in known)
            also = f"; installed: {', '.join(installed)}" if installed else ""
            raise UserError(
                f"{path}: unknown engine {engine!r} (known: {', '.join(known)}{also}; "
                "or a user's engine as given to --engine, package.module:factory)"
            )
        if not isinstance(section, dict):
            raise UserError(f"{path}: [{engine}] must be a table of settings")
    return data


def other_name_of(table: str, engines: Sequence[str]) -> tuple[str, str] | None:
    """``(engine, how)``: the engine of ``engines`` (as the command was given them) that the config
    table ``table`` names under another name, and how it does; the one place that decides it.
    A user engine's reference (an installed name, or an import path) names the engine of
    ``engines`` with the same factory (its import path for its installed name, or the reverse):
    how is "the same factory". Any other name that is not a built-in engine's names an engine of
    ``engines`` given by import path whose engine is so named (the factory is called once, at 32k,
    to read the name: "its engine's name", ``[my-engine]`` for ``my_engine:factory``) or whose
    module it is ("its module", ``[my_engine]``). None when there is none (a built-in engine's
    name: always)."""
    if is_user_engine(table):
        try:
            factory = load_engine(table).factory
            same = next((e for e in engines if is_user_engine(e) and load_engine(e).factory is factory), None)
        except UserError:
            return None
        return None if same is None else (same, "the same factory")
    if is_builtin_engine(table):
        return None
    for ref in engines:
        if not is_import_path(ref):
            continue
        try:
            engine = load_engine(ref).build(32_000, EngineOptions())
        except Exception:  # noqa: BLE001 - only a hint: an engine that fails here fails again, saying why, when it runs
            engine = None
        if getattr(engine, "name", None) == table:
            return ref, "its engine's name"
        if ref.partition(":")[0].rpartition(".")[2] == table:
            return ref, "its module"
    return None


def renamed_table(table: str, engines: tuple[str, ...] | list[str], where: str) -> None:
    """Refuse a table that names an engine under test by another reference, saying which name to give it."""
    named = other_name_of(table, engines)
    if named is not None:
        same = named[0]
        header = f'["{same}"]' if is_import_path(same) else f"[{same}]"
        raise UserError(f"{where}: [{table}] is {same} named another way: name its table as --engine names the engine, {header}")


def check_sections_run(
    sections: Mapping[str, object], engines: tuple[str, ...], where: str, command: str = "sweep", option: str = "--engines"
) -> None:
    """Refuse a config table for an engine the command does not run: it would be silently ignored."""
    for engine in sections:
        if engine not in engines:
            renamed_table(engine, engines, where)
            raise UserError(
                f"{where}: [{engine}] is set but the {command} runs only {', '.join(engines)}; "
                f"add {option} {','.join((*engines, engine))} or remove the table"
            )


def split_engine_config(
    workload_name: str, sections: Mapping[str, Mapping[str, Any]], where: str
) -> tuple[dict[str, object], dict[str, dict[str, object]]]:
    """An ``--engine-config`` file's tables for one workload: the workload options its built-in
    engines' tables set, and the user engines' tables (each factory's ``options.config``)."""
    options = engine_config_options(workload_name, sections, where)
    return options, {name: dict(section) for name, section in sections.items() if is_user_engine(name)}


def engine_config_options(workload_name: str, sections: Mapping[str, Mapping[str, Any]], where: str) -> dict[str, object]:
    """Workload options carrying per-engine configs (UserError, prefixed with ``where``, if invalid)."""
    entry = get_workload(workload_name)
    options: dict[str, object] = {}
    try:
        for engine, section in sections.items():
            if is_user_engine(engine):
                continue  # a user's engine gets its table through EngineOptions.config
            if engine not in entry.engines:
                takers = [name for name, other in WORKLOADS.items() if engine in other.engine_sections]
                hint = f"; a [{engine}] table applies to --workload {' or '.join(takers)}" if takers else ""
                raise UserError(
                    f"workload {workload_name!r} has no engine {engine!r} (known: {', '.join(entry.engines)}){hint}"
                )
            parser = entry.engine_sections.get(engine)
            if parser is None:  # the workload runs the engine with its own settings only
                takers = [name for name, other in WORKLOADS.items() if engine in other.engine_sections]
                hint = f"; a [{engine}] table applies to --workload {' or '.join(takers)}" if takers else ""
                raise UserError(f"workload {workload_name!r} takes no [{engine}] table: its {engine} engine has fixed settings{hint}")
            options[parser.option] = parser.parse(section)
    except (UserError, TypeError) as exc:
        raise UserError(f"{where}: {exc}") from None
    return options


def profile_options(workload_name: str, profile: str) -> dict[str, object]:
    """Workload options that bind the workload's client to a provider profile.

    ``thinking-tools`` under ``deepseek-relay`` sends the relay placeholder where the official
    endpoint gets ``""``; other workloads take no such option. Pass the result to
    :func:`make_workload` next to the other options.
    """
    if profile not in PROFILES:
        raise UserError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    entry = get_workload(workload_name)
    return {} if entry.bind_profile is None else entry.bind_profile(profile)


def validator_for(workload: Workload, profile: str) -> Validator:
    """A fresh validator for ``profile`` reading the workload's reasoning field (``lenient``
    refuses only tool calls and results that do not pair up, as every provider does)."""
    field = workload.reasoning_field if profile == "deepseek-relay" else None
    return make_validator(profile, field)


def execute(
    workload: Workload,
    preset_name: str,
    *,
    engine: str | None = None,
    cache: CacheModel | None = None,
    validator: Validator | None = None,
    profile: str = "lenient",
    engine_config: Mapping[str, Any] | None = None,
) -> Run:
    """Run ``workload`` once under a preset and engine against a fresh simulated provider.

    Without an explicit ``validator`` the provider applies ``profile`` (:func:`validator_for`).
    """
    preset = get_preset(preset_name)
    if validator is None:
        validator = validator_for(workload, profile)
    engine_name = engine or get_workload(workload.name).default_engine
    provider = SimulatedProvider(cache=cache, validator=validator, window=workload.window)
    # The workload drives its agents (subagents has several): each gets its own engine.
    return workload.run(lambda: make_engine(workload, engine_name, preset, engine_config), engine_name, preset, provider, profile)
