"""The pytest plugin: gate a compaction engine on prefixbench's integrity specs from pytest.

Installed with prefixbench (entry point ``pytest11``) and off unless asked::

    pytest --prefixbench-engine package.module:factory [--prefixbench-windows 32k,128k]
           [--prefixbench-profile lenient,deepseek-official]

With ``--prefixbench-engine`` it adds one item per applicable spec and case, named
``spec[window-workload-profile]`` (e.g. ``no-silent-rewrite[32k-seed-coding-lenient]``),
marked ``prefixbench`` and with the spec's name in underscores (``-m no_silent_rewrite``),
and a ``deterministic`` item on each workload's first case: that case runs again and the
requests of the two runs must be byte-identical, as ``check --engine`` says.
A violated spec fails with the spec's line (the request and the figure that decided it); a
vacuous one (the run never exercised what it judges) is skipped with its figure, as ``check``
and ``check --trace`` skip it (``--prefixbench-vacuous fail`` fails it, as ``check --vacuous fail``). An engine that
fails while it runs (raises, or returns the wrong type) is one short error per case: the first
item of the case errors at setup with the engine's line and its own frames only, the case's
other items are skipped pointing at it (a spec failure is a failure, an engine crash an error).

The ``prefixbench`` fixture runs a workload on the engine and returns the
:class:`~prefixbench.workloads.scripted.base.Run` (``observations``, ``summaries``, ``rewrites``)
so a team writes its own specs in a few lines. Without the option the plugin adds no item,
and the fixture skips.

This module imports nothing of prefixbench at import time: pytest loads it in every run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from prefixbench.workloads.scripted.base import Run
    from prefixbench.workloads.specs.engine import EngineCase, EngineSpec
    from prefixbench.workloads.specs.observed import ObservedSpec

ENGINE_OPTION = "--prefixbench-engine"
DEFAULT_WINDOWS = "32k,128k"


def pytest_addoption(parser: pytest.Parser) -> None:
    """The plugin's options (a group of their own in ``pytest --help``)."""
    group = parser.getgroup("prefixbench", "prefixbench: gate a compaction engine on the integrity specs")
    group.addoption(
        ENGINE_OPTION, dest="prefixbench_engine", default=None, metavar="MODULE:FACTORY",
        help="turn the plugin on for this engine: package.module:factory or an installed engine's name",
    )
    group.addoption(
        "--prefixbench-windows", dest="prefixbench_windows", default=DEFAULT_WINDOWS, metavar="WINDOWS",
        help=f"context windows of the spec runs, comma-separated (default: {DEFAULT_WINDOWS})",
    )
    group.addoption(
        "--prefixbench-engine-config", dest="prefixbench_engine_config", default=None, metavar="FILE",
        help="the engine's settings, TOML or JSON: {engine: {key: value}}; the table named as "
        "--prefixbench-engine is the factory's options.config",
    )
    group.addoption(
        "--prefixbench-vacuous", dest="prefixbench_vacuous", default="skip", choices=("skip", "fail"),
        help="a spec the run never exercised (no summary call, no rewrite) proves nothing: skip it (default), "
        "or fail it (as check --vacuous fail)",
    )
    group.addoption(
        "--prefixbench-profile", dest="prefixbench_profile", default="lenient", metavar="PROFILES",
        help="provider profile(s), comma-separated: lenient, deepseek-official, deepseek-relay (default: lenient)",
    )


def _marker(spec_name: str) -> str:
    return spec_name.replace("-", "_")


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers (only when the plugin is on)."""
    if config.getoption("prefixbench_engine", None) is None:
        return
    from prefixbench.workloads.specs.engine import DETERMINISTIC
    from prefixbench.workloads.specs.observed import OBSERVED_SPECS

    config.addinivalue_line("markers", "prefixbench: an integrity spec run on the --prefixbench-engine engine")
    for spec in (*OBSERVED_SPECS, DETERMINISTIC):
        config.addinivalue_line("markers", f"{_marker(spec.name)}: the {spec.name} spec ({spec.description})")


class SpecFailed(Exception):
    """A spec was violated; the message is the spec's line."""


#: Per session: the case runs that stopped on an engine error, with the item that reported it.
_CRASHED = pytest.StashKey[dict]()


def engine_error_text(exc: BaseException) -> str:
    """An engine's error as pytest shows it: its line, then the traceback cut to the engine's frames."""
    trace = getattr(exc, "trace", "")
    return f"{exc}\n{trace}".rstrip("\n") if trace else str(exc)


class SpecItem(pytest.Item):
    """One spec on one case of the engine."""

    def __init__(self, *, spec: ObservedSpec | EngineSpec, case: EngineCase, engine: str, engine_config: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.case = case
        self.engine = engine
        self.engine_config = engine_config
        self.add_marker("prefixbench")
        self.add_marker(_marker(spec.name))

    def setup(self) -> None:
        """Run the case (once per case, shared by its specs). An engine error is this item's
        error, reported once; the case's other items skip, naming the item that reported it."""
        from prefixbench.kernel.api import EngineError
        from prefixbench.workloads.specs.engine import run_case

        crashed = self.config.stash.setdefault(_CRASHED, {})
        key = (self.engine, self.case, repr(sorted(self.engine_config.items())))
        if key in crashed:
            pytest.skip(f"the engine failed on {self.case.id}: see the error of {crashed[key]}")
        try:
            run_case(self.engine, self.case, config=self.engine_config)
            return
        except EngineError as exc:
            crashed[key] = self.name
            text = engine_error_text(exc)
        pytest.fail(text, pytrace=False)  # outside the except: no chained exceptions in the report

    def runtest(self) -> None:
        """Judge the case's run (made by :meth:`setup`, memoized)."""
        from prefixbench.workloads.specs.base import Verdict
        from prefixbench.workloads.specs.engine import judge_case, run_case

        from prefixbench.workloads.specs.engine import EngineSpec, judge_determinism

        if isinstance(self.spec, EngineSpec):  # deterministic: the case runs again, its requests compared
            result = judge_determinism(self.engine, self.case, config=self.engine_config)
        else:
            result = judge_case(self.spec, run_case(self.engine, self.case, config=self.engine_config), self.case)
        if result.verdict is Verdict.VACUOUS and not self.config.getoption("prefixbench_vacuous", "skip") == "fail":
            pytest.skip(f"vacuous: {result.figure}")
        if not result.passed:
            raise SpecFailed(result.line(vacuous_fails=True))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """The spec's line, not a traceback."""
        if isinstance(excinfo.value, SpecFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)  # type: ignore[arg-type]

    def reportinfo(self) -> tuple[str, int | None, str]:
        """Where the item comes from, for pytest's report."""
        return f"prefixbench spec {self.spec.name}", None, self.name


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--prefixbench-engine``: add one item per applicable spec and case, then let -m/-k select."""
    engine = config.getoption("prefixbench_engine", None)
    if engine is None:
        return
    from prefixbench.reports.options import parse_list, parse_windows
    from prefixbench.simulator.errors import UserError
    from prefixbench.workloads.specs.engine import DETERMINISTIC, applicable, determinism_cases, engine_cases, validate_engine

    try:
        # 32k,32000 is one window twice: refused, as check refuses it, not two items of one id
        windows = parse_windows(config.getoption("prefixbench_windows"), "--prefixbench-windows")
        profiles = parse_list(config.getoption("prefixbench_profile"), "--prefixbench-profile")
        cases = engine_cases(windows, profiles)
        table = engine_config(config_path_of(config), engine)
        for case in cases:
            validate_engine(engine, case, config=table)
    except UserError as exc:
        raise pytest.UsageError(f"prefixbench: {plugin_option_names(str(exc))}") from None
    added = [
        SpecItem.from_parent(
            session, name=f"{spec.name}[{case.id}]", nodeid=f"prefixbench::{spec.name}[{case.id}]",
            spec=spec, case=case, engine=engine, engine_config=table,
        )
        for case in cases
        for spec in (*applicable(case), *((DETERMINISTIC,) if case in determinism_cases(cases) else ()))
    ]
    # tryfirst: pytest's own -m/-k selection runs after this hook, over these items too.
    items.extend(added)


def plugin_option_names(message: str) -> str:
    """A loader's line names the command line's ``--engine``; under pytest the option is
    ``--prefixbench-engine``, and a line that names no option (an unknown engine's) gets it."""
    if message.startswith("--engine "):
        return "--prefixbench-engine " + message.removeprefix("--engine ")
    if message.startswith("unknown engine "):
        return f"--prefixbench-engine: {message}"
    if message.startswith("engine "):  # the factory failed or returned no engine: the option gave it
        return "--prefixbench-engine " + message.removeprefix("engine ")
    return message


def config_path_of(config: pytest.Config) -> str | None:
    """The ``--prefixbench-engine-config`` path, if given."""
    return config.getoption("prefixbench_engine_config", None)


def engine_config(path: str | None, engine: str) -> dict[str, Any]:
    """The engine's table of the config file (empty without a file or a table).

    Raises:
        UserError: the file holds a table for another engine, which would be silently ignored
            (as ``check --engine-config`` refuses it).
    """
    if path is None:
        return {}
    from pathlib import Path

    from prefixbench.simulator.errors import UserError
    from prefixbench.workloads.scripted.registry import read_engine_config, renamed_table

    tables = read_engine_config(Path(path), [engine])
    unused = [name for name in tables if name != engine]
    if unused:
        renamed_table(unused[0], [engine], path)
        raise UserError(
            f"{path}: --prefixbench-engine-config sets the engine under test ({engine}) only, not {unused[0]!r}"
        )
    return dict(tables.get(engine, {}))


class Runner:
    """What the ``prefixbench`` fixture gives a test: runs of the user's engine."""

    def __init__(self, engine: str, config: dict[str, Any] | None = None) -> None:
        self.engine = engine
        self.config = config or {}

    def run(self, workload: str = "seed-coding", window: int | str = 32_000, profile: str = "lenient", preset: str = "patched") -> Run:
        """Drive the engine through ``workload`` at ``window`` under ``profile``; returns the run
        (``observations``, ``summaries``, ``rewrites``, ``session``)."""
        from prefixbench.reports.options import parse_window
        from prefixbench.workloads.specs.engine import EngineCase, run_case

        from prefixbench.kernel.api import EngineError

        from prefixbench.simulator.errors import UserError

        try:
            size = parse_window(window) if isinstance(window, str) else window
            return run_case(self.engine, EngineCase(size, workload, profile), preset, self.config)
        except EngineError as exc:  # the engine's line and its own frames, not prefixbench's
            text = engine_error_text(exc)
        except UserError as exc:  # a bad argument (a workload's name mistyped): its line, no traceback into prefixbench
            text = f"prefixbench.run(): {exc}"
        pytest.fail(text, pytrace=False)


@pytest.fixture
def prefixbench(request: pytest.FixtureRequest) -> Runner:
    """Runs of the ``--prefixbench-engine`` engine (skips when the option is not given)."""
    engine = request.config.getoption("prefixbench_engine", None)
    if engine is None:
        pytest.skip("the prefixbench fixture needs --prefixbench-engine package.module:factory")
    from prefixbench.simulator.errors import UserError

    try:
        return Runner(engine, engine_config(config_path_of(request.config), engine))
    except UserError as exc:
        raise pytest.UsageError(f"prefixbench: {plugin_option_names(str(exc))}") from None
