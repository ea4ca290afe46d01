"""Loading a user's engine: by import path (``package.module:factory``) or by installed name.

An installed package lists its engine factories under the entry-point group
``prefixbench.engines``::

    [project.entry-points."prefixbench.engines"]
    truncate-oldest = "prefixbench_example_engines:truncate_oldest"

An import path is looked up in the working directory first, then on ``sys.path`` (as
``python -m`` does): ``--engine my_engine:factory`` loads ``./my_engine.py``.

Every failure (no such module, no such attribute, not callable, the factory raised, it
returned something that is not an engine, its ``name`` raised) is a :class:`UserError` of one
line naming the reference, so the command line ends with exit status 2. The engine a factory
builds is put behind :func:`~prefixbench.kernel.guard.guard`, so its run-time failures are
one line too (:class:`~prefixbench.kernel.api.EngineError`).
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
from importlib.metadata import EntryPoint, entry_points

import msgspec
from prefixbench.kernel.api import Engine, EngineError, EngineFactory, EngineOptions
from prefixbench.kernel.guard import ENGINE_FAILURES, engine_frames, engine_output, failure_detail, guard, raised_in
from prefixbench.simulator.errors import UserError, did_you_mean

ENTRY_POINT_GROUP = "prefixbench.engines"
_METHODS = ("before_step", "view", "run_tool")


def is_import_path(ref: str) -> bool:
    """Whether ``ref`` names a factory by import path (``package.module:factory``)."""
    return ":" in ref


def installed_engines() -> dict[str, EntryPoint]:
    """Engines installed packages declare under ``prefixbench.engines``, by name (sorted).

    Read once per process: scanning every installed distribution's metadata takes tens of
    milliseconds in a large environment, and a plan asks for every run it validates."""
    return dict(_installed_engines())


@functools.lru_cache(maxsize=1)
def _installed_engines() -> tuple[tuple[str, EntryPoint], ...]:
    found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return tuple(sorted(found.items()))


class LoadedEngine(msgspec.Struct, frozen=True):
    """A user's engine factory, resolved from the reference the user gave."""

    ref: str
    factory: EngineFactory

    def build(self, window: int, options: EngineOptions) -> Engine:
        """A fresh engine for one run, behind the checks of :func:`~prefixbench.kernel.guard.guard`
        (UserError when the factory fails or returns a non-engine, EngineError when its name raises)."""
        try:
            with engine_output():
                engine = self.factory(window, options)
        except UserError as exc:
            raise UserError(f"engine {self.ref}: {exc}") from None
        except ENGINE_FAILURES as exc:  # a user's factory: any failure is their error, reported in one line
            raise UserError(
                f"engine {self.ref}: the factory raised {type(exc).__name__}{raised_in(exc)}: {failure_detail(exc)}"
            ) from None
        if isinstance(engine, type):  # its methods are there, unbound: the first call would fail far from here
            raise UserError(f"engine {self.ref}: the factory returned a class ({engine.__name__}), not an instance (call it?)")
        missing = [m for m in _METHODS if not callable(getattr(engine, m, None))]
        try:
            with engine_output():
                name = engine.name
        except AttributeError:
            name = None
        except ENGINE_FAILURES as exc:  # noqa: BLE001 - a user's property: any failure is theirs
            raise EngineError(
                self.ref, "name", f"raised {type(exc).__name__}{raised_in(exc)}", failure_detail(exc), workload=options.workload, window=window,
                trace=engine_frames(exc),
            ) from None
        if not missing and name is not None and not (isinstance(name, str) and name):
            said = "an empty string" if isinstance(name, str) else f"{name!r} ({type(name).__name__}), not a string"
            raise UserError(f"engine {self.ref}: its name is {said} (give it one: name = \"my-engine\")")
        if missing or not isinstance(name, str) or not name:
            what = f"no {', '.join(missing)}" if missing else "no name"
            raise UserError(f"engine {self.ref}: the factory returned {type(engine).__name__}, not an engine ({what})")
        return guard(engine, self.ref)


def _cwd_on_path() -> None:
    """Put the working directory first on ``sys.path``, as ``python -m`` and uvicorn do, so
    ``--engine my_engine:factory`` finds ``./my_engine.py`` (and the modules it imports beside
    it) without ``PYTHONPATH=.``. Left there: a worker process imports the engine again by its
    reference, and the engine may import its neighbours later."""
    cwd = os.getcwd()
    if not any(entry in ("", cwd) or (entry and os.path.abspath(entry) == cwd) for entry in sys.path):
        sys.path.insert(0, cwd)


def _is_file_path(module_name: str) -> bool:
    """Whether an ``--engine`` module that did not import was given as a file (``./my_engine.py``)."""
    return "/" in module_name or "\\" in module_name or module_name.endswith(".py")


def _not_importable(ref: str, module_name: str, attr: str, exc: BaseException) -> str | None:
    """The one line that says what to type or where to run from, for an ``--engine`` module that
    did not import because it was given as a file path or is not on the import path at all (not
    found in the working folder, searched first, nor on ``sys.path``); None for any other failure
    (the engine's own import of a missing dependency among them: importlib's words name it)."""
    if _is_file_path(module_name):
        # (importlib's own words, about relative imports and packages, said nothing of this)
        folder, _, file = module_name.replace("\\", "/").rpartition("/")
        module = file.removesuffix(".py")
        if module == "__init__":  # a package's own file: the package is the module, imported from the folder above it
            package = folder if folder not in ("", ".") else os.getcwd()
            folder, _, module = package.rstrip("/").rpartition("/")
        where = f"run from {folder or '/'}/ (or with it on PYTHONPATH)" if folder and folder != "." else "run from its folder"
        return f"--engine {ref}: {module_name!r} is a file path, not a module name: give {module}:{attr}, {where}"
    missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
    if missing and (module_name == missing or module_name.startswith(missing + ".")):
        holding = f"{module_name}.py" if "." not in module_name else f"{module_name.partition('.')[0]}/"
        return (f"--engine {ref}: no module {missing!r} in {os.getcwd()} (the folder run from, searched first) nor on the "
                f"import path: run from the folder holding {holding} (or with that folder on PYTHONPATH)")
    return None


def unknown_engine(ref: str) -> str:
    """The line for an engine name no package installed: the closest installed name, then all of them."""
    installed = installed_engines()
    if os.path.isfile(f"{ref}.py") and ref.isidentifier():
        # (a module beside the run, named without its factory)
        return (f"unknown engine {ref!r}: {ref}.py is a module in {os.getcwd()}: give {ref}:{_factory_in(f'{ref}.py')} "
                "(module:factory)")
    hint = did_you_mean(ref, installed)
    known = ", ".join(installed) or "none installed"
    return f"unknown engine {ref!r}{': ' + hint if hint else ''} (installed engines: {known}; or give package.module:factory)"


def _factory_in(path: str) -> str:
    """The name of a module file's factory as ``--engine`` wants it: its top-level function
    ``factory`` or its only top-level function, else ``FACTORY`` (the user's to fill in)."""
    import ast

    try:
        tree = ast.parse(open(path, encoding="utf-8").read())
    except (OSError, SyntaxError, ValueError):
        return "FACTORY"
    functions = [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]
    if "factory" in functions:
        return "factory"
    return functions[0] if len(functions) == 1 else "FACTORY"


def load_engine(ref: str) -> LoadedEngine:
    """Resolve ``package.module:factory`` or an installed engine's name to its factory."""
    if is_import_path(ref):
        module_name, _, attr = ref.partition(":")
        if not module_name or not attr:
            raise UserError(f"--engine {ref!r}: expected package.module:factory")
        _cwd_on_path()
        try:
            with engine_output():
                module = importlib.import_module(module_name)
        except ENGINE_FAILURES as exc:
            hint = _not_importable(ref, module_name, attr, exc)
            if hint is not None:
                raise UserError(hint) from None
            raise UserError(
                f"--engine {ref}: cannot import {module_name!r} ({type(exc).__name__}{raised_in(exc)}: {failure_detail(exc)})"
            ) from None
        target: object = module
        for part in attr.split("."):
            try:
                target = getattr(target, part)
            except AttributeError:
                hint = did_you_mean(part, [name for name in dir(target) if not name.startswith("_")])
                raise UserError(f"--engine {ref}: module {module_name!r} has no attribute {attr!r}"
                                + (f": {hint}" if hint else "")) from None
    else:
        installed = installed_engines()
        if ref not in installed:
            raise UserError(unknown_engine(ref))
        try:
            with engine_output():
                target = installed[ref].load()
        except ENGINE_FAILURES as exc:
            raise UserError(
                f"engine {ref}: cannot load entry point {installed[ref].value!r} "
                f"({type(exc).__name__}{raised_in(exc)}: {failure_detail(exc)})"
            ) from None
    if not callable(target):
        raise UserError(f"engine {ref}: {type(target).__name__} is not callable (a factory takes window and options)")
    return LoadedEngine(ref, target)  # type: ignore[arg-type]
