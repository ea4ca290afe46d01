"""The public engine API: exported names, the step context, and loading a user's engine."""

from __future__ import annotations

import inspect

import pytest

import prefixbench.kernel as kernel
from prefixbench.kernel import EngineBase, EngineOptions, Header, Message, Session, StepContext, Text, count_tokens, user_text
from prefixbench.kernel.meter import price_message
from prefixbench.kernel.loading import is_import_path, load_engine
from prefixbench.kernel.model import ModelInfo, Reply
from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Envelope


def test_every_exported_name_exists_and_is_documented():
    assert "StepContext" in kernel.__all__ and "Engine" in kernel.__all__
    for name in kernel.__all__:
        value = getattr(kernel, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{name} has no docstring"


def test_builtin_engines_are_engines():
    from prefixbench.kernel import Engine
    from prefixbench.kernel.presets import get_preset
    from prefixbench.workloads.scripted.thinking_tools import ThinkingToolsWorkload

    workload = ThinkingToolsWorkload(32_000)
    for name in ("checkpoint", "ranges", "user-tail"):
        assert isinstance(workload.engine(name, get_preset("patched")), Engine)


def _ctx(session: Session, sent: list) -> StepContext:
    info = ModelInfo("p", "m", 10_000, 512, "high")
    header = Header(Envelope("p", "m", "max", 0.2, ("END",)), "system", ())
    return StepContext(session, lambda p, m: info, lambda r: sent.append(r) or Reply(), 10_000, header)


def test_summary_request_is_in_the_routed_family():
    sent: list = []
    ctx = _ctx(Session("s"), sent)
    request = ctx.summary_request([user_text("hello")])
    assert request.envelope == Envelope("p", "m", "max", 0.2, ("END",))
    assert (request.purpose, request.system, request.max_tokens) == ("compaction", "system", 512)
    # Naming another envelope drops what it does not name; the adapter fills its default effort.
    assert ctx.summary_request([], envelope=Envelope("p", "m")).envelope == Envelope("p", "m", "high")


def test_summary_request_needs_a_routed_header():
    ctx = StepContext(Session("s"), lambda p, m: None, lambda r: Reply())  # type: ignore[arg-type,return-value]
    with pytest.raises(kernel.CompactionError):
        ctx.summary_request([user_text("x")])


def test_declare_rewrite_is_a_rewrite_off_the_surface():
    session = Session("s")
    session.append("user/message", user_text("hi"))
    ctx = _ctx(session, [])
    ctx.declare_rewrite("truncate", dropped=3)
    event = session.events[-1]
    assert (event.kind, event.rewrite_kind, event.info["dropped"]) == ("compaction/rewrite", "truncate", 3)
    assert session.surface == (0,) and ctx.messages() == (user_text("hi"),)
    with pytest.raises(ValueError):
        ctx.declare_rewrite("")


def test_engine_base_sends_the_surface_and_counts_like_the_meter():
    session = Session("s")
    session.append("user/message", user_text("hello there"))
    ctx = _ctx(session, [])
    engine = EngineBase()
    engine.before_step(ctx)
    assert engine.view(session) == ctx.messages()
    assert count_tokens(ctx.messages()) == ctx.meter().surface_tokens


def test_a_factory_loads_by_import_path_and_builds():
    loaded = load_engine("tests.user_engines:silent")
    engine = loaded.build(32_000, EngineOptions(workload="seed-coding"))
    assert engine.name == "truncating" and is_import_path(loaded.ref)


@pytest.mark.parametrize(
    "ref, message",
    [
        ("no_such_module_x:factory", "no module 'no_such_module_x' in "),
        ("tests.user_engines:missing", "has no attribute 'missing'"),
        ("tests.user_engines:NOT_CALLABLE", "int is not callable"),
        (":factory", "expected package.module:factory"),
        ("not-installed-engine", "unknown engine 'not-installed-engine'"),
    ],
)
def test_load_errors_are_one_line(ref, message):
    with pytest.raises(UserError) as info:
        load_engine(ref)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "ref, message",
    [
        ("my_engine.py:factory", "'my_engine.py' is a file path, not a module name: give my_engine:factory, run from its folder"),
        ("./my_engine.py:factory", "'./my_engine.py' is a file path, not a module name: give my_engine:factory, run from its folder"),
        ("../eng/my_engine.py:make", "'../eng/my_engine.py' is a file path, not a module name: give my_engine:make, "
         "run from ../eng/ (or with it on PYTHONPATH)"),
    ],
)
def test_an_engine_given_as_a_file_path_says_to_give_its_module_name(ref, message):
    # The README's engine saved as my_engine.py and named by its path: importlib's own words
    # were shown ("the 'package' argument is required to perform a relative import", or
    # "'my_engine' is not a package"), which do not say what to type instead.
    with pytest.raises(UserError) as info:
        load_engine(ref)
    assert str(info.value) == f"--engine {ref}: {message}"


@pytest.mark.parametrize(
    "ref, message",
    [
        ("tests.user_engines:raises", "the factory raised ValueError in tests/user_engines.py:43: no engine for window 32000"),
        ("tests.user_engines:not_an_engine", "returned object, not an engine (no before_step, view, run_tool)"),
    ],
)
def test_build_errors_are_one_line(ref, message):
    with pytest.raises(UserError) as info:
        load_engine(ref).build(32_000, EngineOptions())
    assert message in str(info.value) and "\n" not in str(info.value)


def private_reaches(source: str) -> list[str]:
    """``obj._name`` accesses on anything but ``self``/``cls`` (a private shortcut)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"line {node.lineno}: .{node.attr}")
    return found


def test_builtin_engines_take_no_private_shortcut():
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "kernel"
    for path in [*sorted((root / "engines").glob("*.py")), root / "reasoning.py"]:
        source = path.read_text(encoding="utf-8")
        assert private_reaches(source) == [], path.name
        # Every engine module reaches the loop only through the public API.
        assert "prefixbench.workloads" not in source, path.name
    assert private_reaches("def f(ctx):\n    return ctx.session._surface\n") == ["line 2: ._surface"]


def test_now_ms_is_the_callers_logical_clock():
    ticks = iter([1_000, 61_000])
    ctx = StepContext(Session("s"), lambda p, m: None, lambda r: Reply(), 10_000, None, lambda: next(ticks))  # type: ignore[arg-type,return-value]
    assert (ctx.now_ms(), ctx.now_ms()) == (1_000, 61_000)
    assert StepContext(Session("s"), lambda p, m: None, lambda r: Reply()).now_ms() == 0  # type: ignore[arg-type,return-value]


def test_usage_tokens_anchors_on_the_providers_count_of_the_last_request():
    info = ModelInfo("p", "m", 10_000, 512, "high")
    header = Header(Envelope("p", "m", "max", 0.2, ("END",)), "system", ())
    first, answer, result = user_text("a" * 4_000), Message("assistant", (Text("b" * 400),)), user_text("c" * 800)
    anchor: list = [None]
    ctx = StepContext(Session("s"), lambda p, m: info, lambda r: Reply(), 10_000, header, None, lambda: anchor[0])
    # Before any request: the heuristic meter.
    assert ctx.usage_tokens([first]) == ctx.measure([first]).total_tokens
    # The provider counted 1,300 tokens (prompt + output) where the meter reads fewer: an
    # extension is 1,300 plus the meter on what came after.
    anchor[0] = ((first, answer), 1_300)
    assert ctx.measure([first, answer]).total_tokens < 1_300
    assert ctx.usage_tokens([first, answer, result]) == 1_300 + price_message(result)
    # A rewrite (not an extension): the meter, scaled by 1,300 over the meter's reading of the last request.
    metered = ctx.measure([first, answer]).total_tokens
    rewritten = [result]
    assert ctx.usage_tokens(rewritten) == -(-ctx.measure(rewritten).total_tokens * 1_300 // metered)
    with pytest.raises(TypeError, match=r"ctx.usage_tokens\(\)"):
        ctx.usage_tokens(["not a message"])  # type: ignore[list-item]


def test_a_dotted_engine_module_not_found_names_the_package_folder(tmp_path, monkeypatch):
    # (the command line's own test, where the module has no dot: tests/unit/workloads/test_engine_errors.py)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # (sys.path restored after: the loader would leave the folder on it)
    with pytest.raises(UserError, match="no module 'no_pkg_small38' in .* run from the folder holding no_pkg_small38/ "):
        load_engine("no_pkg_small38.engines:factory")

def test_an_engine_whose_own_import_is_missing_names_that_import(tmp_path, monkeypatch):
    # The engine's module is found; a module it imports is not: importlib's words name that one.
    (tmp_path / "engine_needs_small38.py").write_text("import not_installed_small38\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # (sys.path restored after: the loader would leave the folder on it)
    with pytest.raises(UserError) as info:
        load_engine("engine_needs_small38:factory")
    assert str(info.value) == ("--engine engine_needs_small38:factory: cannot import 'engine_needs_small38' (ModuleNotFoundError"
                               " in engine_needs_small38.py:1: No module named 'not_installed_small38')")
