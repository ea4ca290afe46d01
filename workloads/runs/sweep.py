"""A sweep: every (window, seed, engine, preset) run of one workload, planned, then landed.

``plan_sweep(spec)`` is pure: it validates every option and lists the runs before anything
executes, so a bad option never throws away finished work. :func:`execute_planned` runs one
planned run; :mod:`prefixbench.workloads.runs.land` computes the runs a sweep's store lacks and
stores each as it finishes. ``plan_sweeps`` joins several specs (a grid file's cartesian
product) into one plan.

Each planned run is self-contained (workload, engine, preset, profile, cache model, tokenizer)
so a worker process or a Dask worker can execute it alone, and has a key: a hash of all of
that, the prefixbench version and, for a user's engine, a digest of the engine's sources
(:func:`engine_code_digest`), the name of its result in the store.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import msgspec

from prefixbench.kernel.presets import PRESET_ORDER, get_preset
from prefixbench.simulator.cache import CacheModel
from prefixbench.simulator.errors import UserError, closest, did_you_mean
from prefixbench.simulator.windows import format_window
from prefixbench.simulator.models import make_cache, parse_cache_spec
from prefixbench.simulator.pricing import PriceRow
from prefixbench.workloads.scripted.base import Run, Workload
from prefixbench.kernel.loading import installed_engines, is_import_path, load_engine
from prefixbench.workloads.scripted.registry import (
    WORKLOADS,
    all_engines,
    execute,
    get_workload,
    is_user_engine,
    make_engine,
    make_workload,
    profile_options,
)

DEFAULT_WINDOWS = (32_000, 128_000, 512_000)
#: The one preset a user's engine runs under when a sweep (its flags or a grid) names no presets.
USER_ENGINE_PRESET = "patched"


class SweepSpec(msgspec.Struct, frozen=True):
    """What to run. ``options`` go to the workload factory (steps, effort, pruner, ...)."""

    workload: str = "seed-coding"
    windows: tuple[int, ...] = DEFAULT_WINDOWS
    presets: tuple[str, ...] = PRESET_ORDER
    engines: tuple[str, ...] = ()
    profile: str = "lenient"
    cache: str = "byte-exact"
    tokenizer: str = "heuristic"
    options: dict[str, object] = msgspec.field(default_factory=dict)
    #: Price row for dollar columns, cost.md and cost.png (None = no cost report).
    price: PriceRow | None = None
    #: Workload shape seeds (0 = the workload's default shape).
    seeds: tuple[int, ...] = (0,)
    #: ``--engine-config`` tables of user engines, by the name or import path given.
    engine_configs: dict[str, dict[str, object]] = msgspec.field(default_factory=dict)
    #: The presets a user's engine runs under, when they are not ``presets`` (presets switch the
    #: built-in engines' fixes; a user's engine ignores them): empty means ``presets``.
    user_engine_presets: tuple[str, ...] = ()

    def engine_names(self) -> tuple[str, ...]:
        """Engines to run (the workload's default when none were named)."""
        return self.engines or (get_workload(self.workload).default_engine,)

    def presets_of(self, engine: str) -> tuple[str, ...]:
        """The presets ``engine`` runs under."""
        return self.user_engine_presets if self.user_engine_presets and is_user_engine(engine) else self.presets


class PlannedRun(msgspec.Struct, frozen=True):
    """One run of a sweep, validated but not yet executed: everything needed to execute it."""

    workload: Workload
    engine: str
    preset: str
    profile: str = "lenient"
    cache: str = "byte-exact"
    tokenizer: str = "heuristic"
    #: The ``--engine-config`` table of a user engine (None: its defaults).
    engine_config: dict[str, object] | None = None
    #: A user engine's source digest, taken when the sweep was planned ("" for a built-in
    #: engine, whose code is in the prefixbench version).
    engine_code: str = ""

    @property
    def key(self) -> str:
        """The run's name in the result store: a hash of its full spec and the prefixbench version."""
        return run_key(self)

    @property
    def cost_estimate(self) -> int:
        """A rough relative cost (window times the requests the workload expects) to send long runs first."""
        return self.workload.window * max(1, self.workload.expected_requests())

    def describe(self) -> str:
        """``seed-coding 32k checkpoint/legacy seed 3``."""
        shown = format_window(self.workload.window)
        seed = self.workload.seed
        return f"{self.workload.name} {shown} {self.engine}/{self.preset}" + (f" seed {seed}" if seed else "")


class SweepPlan(msgspec.Struct, frozen=True):
    """A validated sweep: the spec(s) and the runs in report order."""

    spec: SweepSpec
    runs: tuple[PlannedRun, ...]
    #: Every spec that contributed runs (a grid file gives several); ``spec`` is the first.
    specs: tuple[SweepSpec, ...] = ()

    def all_specs(self) -> tuple[SweepSpec, ...]:
        """The specs of this plan (``(spec,)`` for a single one)."""
        return self.specs or (self.spec,)


def prefixbench_version() -> str:
    """The prefixbench version part of every run key: the installed version plus a digest of the
    simulator, kernel and workloads sources, so a stored run is never reused after a change to
    the code that produced it, even one that did not bump the version."""
    return _version()


@lru_cache(maxsize=1)
def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    import prefixbench.kernel
    import prefixbench.simulator
    import prefixbench.workloads

    try:
        installed = version("prefixbench")
    except PackageNotFoundError:
        installed = "unknown"
    digest = hashlib.sha256()
    for package in (prefixbench.simulator, prefixbench.kernel, prefixbench.workloads):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{installed}+{digest.hexdigest()[:12]}"


def engine_code_digest(ref: str) -> str:
    """A digest of a user engine's sources, so its stored runs are never reused after its code
    changed: the package holding the module its reference names (``package.module:factory`` or
    the entry point's module) and the package holding the module that defines the factory, or
    that module alone when it is not in a package. Every ``.py`` file under a package's folder
    is read, in the order of its sorted relative path (``__pycache__`` skipped).

    A module that is not in a package (``my_engine.py`` in a plain folder) brings in the modules
    it imports from its own folder or below (``import tuning`` of a ``tuning.py`` beside it, at
    the top or inside a function), and theirs in turn (:func:`_folder_imports`): editing one of
    those recomputes the engine's runs too.

    Loads the engine (UserError when it does not load) and reads its files again at every plan,
    never cached: a process that plans twice, such as a test, sees an edit made between the two.
    Packages the engine imports from outside its own folder are not read (as other libraries are not).
    """
    import sys

    factory = load_engine(ref).factory
    named = ref.partition(":")[0] if is_import_path(ref) else installed_engines()[ref].module
    roots: dict[str, Path | None] = {}
    for module_name in dict.fromkeys((named, getattr(factory, "__module__", None) or named)):
        name, path = _source_root(module_name, sys.modules)
        roots[name] = path
    for name, path in list(roots.items()):
        if path is not None and path.is_file():
            for other, other_path in _folder_imports(path, sys.modules).items():
                roots.setdefault(other, other_path)
    digest = hashlib.sha256()
    for name, root in sorted(roots.items()):
        digest.update(f"{name}\0".encode())
        if root is None:
            digest.update(b"(no source)\0")  # a module without a file on disk (built in, frozen)
            continue
        files = [root] if root.is_file() else sorted(
            (p for p in root.rglob("*.py") if "__pycache__" not in p.relative_to(root).parts),
            key=lambda p: p.relative_to(root).as_posix(),
        )
        for path in files:
            rel = path.name if path == root else path.relative_to(root).as_posix()
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise UserError(f"engine {ref}: cannot read its source {path} ({exc.strerror})") from None
            digest.update(rel.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()[:12]


def _folder_imports(module_file: Path, modules: Mapping[str, object]) -> dict[str, Path]:
    """The modules a single-module engine imports from its own folder tree: ``{name: file or
    package folder}`` for each ``import x`` / ``from x import ...`` (top-level names, anywhere in
    the file) that resolves to a source under the folder of ``module_file``, neither in the
    standard library nor in site-packages; a single module found so is read for its own imports
    in turn. Read from the sources (not from what this process happens to have imported), so the
    same files give the same answer."""
    import ast
    import importlib.util
    import sysconfig

    folder = module_file.resolve().parent
    excluded = {Path(p).resolve() for key in ("stdlib", "platstdlib", "purelib", "platlib") if (p := sysconfig.get_paths().get(key))}

    def local(path: Path) -> bool:
        path = path.resolve()
        return (path.is_relative_to(folder)
                and not {"site-packages", "dist-packages"} & set(path.parts)
                and not any(path.is_relative_to(e) for e in excluded))

    def located(name: str) -> Path | None:
        module = modules.get(name)
        file = getattr(module, "__file__", None)
        if file is None and module is None:
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            file = spec.origin if spec is not None and spec.has_location else None
        if file is None:
            return None
        path = Path(file)
        return path.parent if path.name == "__init__.py" else path

    found: dict[str, Path] = {}
    pending = [module_file]
    seen = {module_file.resolve()}
    while pending:
        try:
            tree = ast.parse(pending.pop(0).read_bytes())
        except (OSError, SyntaxError, ValueError):
            continue
        names = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [alias.name.partition(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.append(node.module.partition(".")[0])
        for name in sorted(set(names) - {"prefixbench"}):  # prefixbench's own code is in the version part of the key
            path = located(name)
            if path is None or not local(path) or path.resolve() in seen:
                continue
            seen.add(path.resolve())
            found.setdefault(name, path)
            if path.is_file():
                pending.append(path)
    return found


def _source_root(module_name: str, modules: Mapping[str, object]) -> tuple[str, Path | None]:
    """``(name, folder or file)`` whose sources make up ``module_name``: the outermost regular
    package (one with an ``__init__.py``) that holds it, or the module's own file (None when it
    has none on disk)."""
    parts = module_name.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        module = modules.get(name)
        file = getattr(module, "__file__", None)
        if file is None:
            continue  # a namespace package (or not imported): look one level down
        path = Path(file)
        if path.name == "__init__.py":
            return name, path.parent
        return name, path
    return module_name, None


def _canonical(value: object) -> object:
    """A JSON-able, order-stable form of a spec value (structs, mappings, tuples)."""
    if isinstance(value, msgspec.Struct):
        return {
            "__type__": type(value).__name__,
            **{name: _canonical(getattr(value, name)) for name in value.__struct_fields__},
        }
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def run_spec(item: PlannedRun) -> dict[str, object]:
    """The full spec of one run, as hashed into its key."""
    return {
        "prefixbench": prefixbench_version(),
        "workload": _canonical(item.workload),
        "engine": item.engine,
        "preset": item.preset,
        "profile": item.profile,
        "cache": item.cache,
        "tokenizer": item.tokenizer,
        "engine_config": _canonical(item.engine_config),
        "engine_code": item.engine_code,
    }


def run_key(item: PlannedRun) -> str:
    """24 hex digits of the SHA-256 of the run's canonical spec."""
    text = json.dumps(run_spec(item), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def submission_order(runs: tuple[PlannedRun, ...] | list[PlannedRun]) -> list[int]:
    """Indices of ``runs``, longest first (ties in plan order): idle workers pick up short runs
    at the end instead of one long run finishing alone (LPT scheduling)."""
    return longest_first([run.cost_estimate for run in runs])


def longest_first(costs: list[int]) -> list[int]:
    """Indices of ``costs`` from the largest down, ties in their own order."""
    return sorted(range(len(costs)), key=lambda i: (-costs[i], i))


def plan_sweep(spec: SweepSpec) -> SweepPlan:
    """Validate every option and list the runs, before anything executes.

    Raises:
        UserError: for an unknown preset, engine, cache model or an invalid workload option.
    """
    if not spec.windows:
        raise UserError("--windows: give at least one window")
    for preset in spec.presets:
        get_preset(preset, "--presets")
    for preset in spec.user_engine_presets:
        get_preset(preset)
    make_cache_model(spec.cache, spec.tokenizer)
    supported = get_workload(spec.workload, "--workload").engines
    binding = profile_options(spec.workload, spec.profile)
    for engine in spec.engine_names():
        if engine not in supported and not is_user_engine(engine):
            # (an installed engine runs on every workload: listed, as --help lists them)
            installed = "".join(f", {name}" for name in installed_engines())
            hint = did_you_mean(engine, (*supported, *installed_engines()))
            if not hint:  # the closest engine another workload mounts, and which workload that is
                near = closest(engine, all_engines())
                mounting = [w for w, entry in WORKLOADS.items() if near is not None and near in entry.engines]
                hint = f"did you mean {near!r} (with --workload {mounting[0]})?" if mounting else ""
            raise UserError(
                f"--engines: workload {spec.workload!r} has no engine {engine!r}{': ' + hint if hint else ''} "
                f"(known: {', '.join(supported)}{installed}; or package.module:factory)"
            )
    # A user's engine: fail on loading before anything runs, and digest its sources.
    codes = {engine: engine_code_digest(engine) for engine in spec.engine_names() if is_user_engine(engine)}
    if not spec.seeds:
        raise UserError("--seeds: give at least one seed")
    for seed in spec.seeds:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise UserError(f"--seeds: a seed is an integer >= 0, got {seed!r}")
    if len(set(spec.seeds)) != len(spec.seeds):
        raise UserError(f"--seeds: {', '.join(str(s) for s in spec.seeds)} names a seed twice")
    planned = []
    built_by: dict[str, str] = {}  # a user engine's name -> the reference that built it
    for window in spec.windows:
        for seed in spec.seeds:
            options = dict(spec.options)
            if seed:
                options["seed"] = seed
            workload = make_workload(spec.workload, window, **binding, **options)
            for engine in spec.engine_names():
                config = spec.engine_configs.get(engine)
                # Building the engine validates its configuration for this window.
                presets = spec.presets_of(engine)
                name = make_engine(workload, engine, get_preset(presets[0]), config).name
                if is_user_engine(engine) and built_by.setdefault(name, engine) != engine:
                    # Runs are filed and shown by the engine's name: two would share one key and one row.
                    raise UserError(
                        f"engines {built_by[name]} and {engine} both build an engine named {name!r}, so their runs "
                        "would share one name in every table: run one of them, or give the engines different names"
                    )
                for preset in presets:
                    planned.append(
                        PlannedRun(
                            workload, engine, preset, spec.profile, spec.cache, spec.tokenizer, config,
                            codes.get(engine, ""),
                        )
                    )
    return SweepPlan(spec, tuple(planned))


def plan_sweeps(specs: list[SweepSpec] | tuple[SweepSpec, ...]) -> SweepPlan:
    """One plan from several specs (a grid), in spec order; a run two specs share runs once."""
    if not specs:
        raise UserError("the sweep names no runs")
    runs: dict[str, PlannedRun] = {}
    for spec in specs:
        for item in plan_sweep(spec).runs:
            runs.setdefault(item.key, item)
    return SweepPlan(specs[0], tuple(runs.values()), tuple(specs))


def make_cache_model(spec: str, tokenizer: str = "heuristic", where: str | None = "--cache") -> CacheModel | None:
    """A fresh cache model from a ``--cache`` value such as ``openai:mode=5.6``.

    None means the byte-exact reference, which the provider always runs anyway.

    Raises:
        UserError: a bad ``spec``, its line naming ``where`` the value came from and the value
            (``--cache openai:mode=bad: openai: mode must be ...``; None: the value alone, for a
            grid file's line that names the file and key); an unknown tokenizer as it is.
    """
    from prefixbench.simulator.tokenizer import TOKENIZERS, make_tokenizer

    if tokenizer not in TOKENIZERS:
        make_tokenizer(tokenizer)  # raises: unknown tokenizer (--tokenizer's fault, not the value's)
    try:
        name, options = parse_cache_spec(spec)
        if name == "byte-exact" and not options and tokenizer == "heuristic":
            return None
        return make_cache(name, tokenizer=tokenizer, **options)
    except UserError as exc:
        raise UserError(f"{where + ' ' if where else ''}{spec!r}: {exc}") from None


def engine_config_text(table: Mapping[str, object]) -> str:
    """An engine's ``--engine-config`` table as its run's ``engine_config`` parameter records it:
    ``key=value,...`` in key order (read back by :func:`recorded_engine_config`)."""
    return ",".join(f"{key}={value}" for key, value in sorted(table.items()))


def recorded_engine_config(params: object) -> dict[str, str]:
    """The ``--engine-config`` table a run's ``params`` (``key=value;...``, as runs.csv holds them)
    recorded, each value as its text; empty when none. A value may hold commas (a list's): a
    setting starts only where a comma is followed by ``key=``."""
    found = re.search(r"(?:^|;)engine_config=(.*?)(?=;[A-Za-z_][\w.-]*=|$)", str(params or ""))
    if not found or not found.group(1):
        return {}
    pairs = re.split(r",(?=[A-Za-z_]\w*=)", found.group(1))
    return dict(pair.split("=", 1) for pair in pairs if "=" in pair)


def builtin_engine_config(workload: Workload, engine: str, recorded: bool) -> str | None:
    """What a built-in engine's ``--engine-config`` table set for its run, as a shipped engine's
    is recorded (``key=value,...``: the settings that differ from the table's defaults); None
    where the workload was given no table for it and records none (``recorded``: the workload's
    own ``engine_config`` parameter, thinking-tools', which then reads ``default`` for this engine)."""
    section = get_workload(workload.name).engine_sections.get(engine)
    given = None if section is None else getattr(workload, section.option, None)
    if given is None:
        return "default" if recorded else None
    if isinstance(given, Mapping):
        table = dict(given)
    else:
        defaults = msgspec.to_builtins(section.parse({}))  # type: ignore[union-attr]
        table = {key: value for key, value in msgspec.to_builtins(given).items() if defaults.get(key) != value}
    return engine_config_text(table) or "default"


def execute_planned(item: PlannedRun, spec: SweepSpec | None = None) -> Run:
    """Run one planned item with its cache model and strictness profile (``spec`` is unused:
    a planned run carries both)."""
    del spec
    run = execute(
        item.workload,
        item.preset,
        engine=item.engine,
        cache=make_cache_model(item.cache, item.tokenizer),
        profile=item.profile,
        engine_config=item.engine_config,
    )
    if item.engine_config:
        # The engine's --engine-config table, in the run's parameters (runs.csv, report.md): the
        # workload's own engine_config names only its built-in engines' settings.
        run = msgspec.structs.replace(run, params={**run.params, "engine_config": engine_config_text(item.engine_config)})
    else:
        built_in = builtin_engine_config(item.workload, item.engine, "engine_config" in run.params)
        if built_in is not None:
            run = msgspec.structs.replace(run, params={**run.params, "engine_config": built_in})
    # The run is named by its --cache spec, options included: xai:block=64 and xai:block=128
    # in one sweep are two caches (the model names them both "xai").
    return run if run.cache == item.cache else msgspec.structs.replace(run, cache=item.cache)
