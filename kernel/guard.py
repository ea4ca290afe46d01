"""The boundary around a user's engine: what crosses it is checked, and its failures are its own.

:func:`guard` wraps an engine a user's factory built. Every call into it (``before_step``,
``view``, ``run_tool``, and ``on_wake`` when the engine asked to be woken) that raises, and
every value it gives back of the wrong type, becomes
an :class:`~prefixbench.kernel.api.EngineError` naming the engine and the method, with the
traceback cut to the engine's own frames (``trace``). The loop adds the step, the workload and
the window (:meth:`EngineError.locate`).

The checks look at types only (a view's messages and their blocks, and that a view is not
empty: a request carries at least one message), so they cost little on a path that runs every
step.

An engine's own output never reaches standard output, which carries the command's result
(``check``'s lines, ``sweep --format json``): while the engine runs, what it prints goes to
standard error (:func:`engine_output`). An engine that calls ``sys.exit()`` fails like one that
raises; Ctrl-C (KeyboardInterrupt) still interrupts the command.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import threading
import traceback
from collections.abc import Iterator
from types import TracebackType

from prefixbench.kernel.api import Engine, EngineError, StepContext, MESSAGES_EXPECTED, message_problem, messages_expected, messages_problem, type_name
from prefixbench.kernel.session import Session
from prefixbench.simulator.wire import Message, ToolCall

#: Sequence expected of a view, and of a tool result.
VIEW_EXPECTED = MESSAGES_EXPECTED
TOOL_EXPECTED = "expected a Message or None"


#: The longest error message of an engine the line carries (the trace keeps all of it).
MAX_DETAIL = 300


def clipped(text: str) -> str:
    """An engine's error message cut to :data:`MAX_DETAIL` characters, saying so."""
    return text if len(text) <= MAX_DETAIL else f"{text[:MAX_DETAIL]}... ({len(text):,} characters)"


def engine_label(name: str, ref: str) -> str:
    """``truncating (tests.user_engines:silent)``: the engine's name, and how it was named when that differs."""
    return name if not ref or ref == name else f"{name} ({ref})"


def engine_frames(exc: BaseException, skip: int = 1) -> str:
    """The traceback of ``exc`` without its first ``skip`` frames (the guard's own), as text."""
    tb: TracebackType | None = exc.__traceback__
    for _ in range(skip):
        if tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _not_the_users() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Folders whose frames are not the user's: prefixbench's packages, and the standard library
    less the installed-packages folders inside it (an engine may be installed there)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ours = tuple(os.path.join(root, top) + os.sep for top in ("simulator", "kernel", "workloads", "reports"))
    paths = sysconfig.get_paths()
    stdlib = tuple({os.path.abspath(paths[k]) + os.sep for k in ("stdlib", "platstdlib") if k in paths})
    installed = tuple({os.path.abspath(paths[k]) + os.sep for k in ("purelib", "platlib") if k in paths})
    return ours, stdlib, installed


def raised_in(exc: BaseException) -> str:
    """`` in my_engine.py:3``: the last frame of ``exc``'s traceback in the user's code (not
    prefixbench's, not the standard library's: importlib's while a module imports, the guard's),
    relative to the working directory when under it; "" when it has none (a module that is not
    there at all, an error of prefixbench's own engines)."""
    ours, stdlib, installed = _not_the_users()
    tb, where = exc.__traceback__, ""
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        path = os.path.abspath(filename)
        users = not path.startswith(ours) and (path.startswith(installed) or not path.startswith(stdlib))
        if users and not filename.startswith("<"):
            try:
                relative = os.path.relpath(path)
            except ValueError:  # another drive (Windows)
                relative = ".."
            where = f" in {relative if not relative.startswith('..') else path}:{tb.tb_lineno}"
        tb = tb.tb_next
    if isinstance(exc, SyntaxError) and exc.filename and not exc.filename.startswith("<") and exc.lineno:
        # Code that does not compile has no frame of its own: the error names its file and line.
        path = os.path.abspath(exc.filename)
        if not path.startswith(ours) and (path.startswith(installed) or not path.startswith(stdlib)):
            try:
                relative = os.path.relpath(path)
            except ValueError:
                relative = ".."
            where = f" in {relative if not relative.startswith('..') else path}:{exc.lineno}"
    return where


def method_location(method: object) -> str:
    """``File "engine.py", line 12, in view`` of a bound method (empty when it has no code)."""
    code = getattr(getattr(method, "__func__", method), "__code__", None)
    if code is None:
        return ""
    return f'  File "{code.co_filename}", line {code.co_firstlineno}, in {code.co_name}\n'


@contextlib.contextmanager
def engine_output() -> Iterator[None]:
    """While a user's engine (or its factory) runs: what it prints goes to standard error, so
    standard output keeps only the command's own result (a debugging ``print`` in an engine
    must not corrupt ``sweep --format json``). In the main thread only: the
    swap is process-wide. Engines that run in threads are a Dask worker's: a remote worker's
    output is its own, and the workers of ``--scheduler local`` have their standard output sent
    to standard error when they start (``workloads/runs/execute.py``)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


#: What a user's engine may raise that the guard turns into an EngineError: any error, and
#: ``sys.exit()`` (an engine does not end the command). KeyboardInterrupt is the user's, never the engine's.
ENGINE_FAILURES = (Exception, SystemExit)


def failure_detail(exc: BaseException) -> str:
    """What an engine's failure says, clipped; a ``sys.exit()`` says that it was one."""
    if isinstance(exc, SystemExit):
        return f"the engine called sys.exit({exc.code!r}); an engine does not end the command"
    if isinstance(exc, SyntaxError) and exc.msg:
        return clipped(exc.msg)  # its file and line are said by raised_in, not as "(file.py, line 2)"
    return clipped(str(exc))


def read_name(engine: object, ref: str) -> str:
    """The engine's ``name``; an EngineError when reading it raises or it is not a non-empty string."""
    try:
        with engine_output():
            name = engine.name  # type: ignore[attr-defined]
    except ENGINE_FAILURES as exc:  # noqa: BLE001 - a user's property: any failure is theirs
        raise EngineError(
            ref, "name", f"raised {type(exc).__name__}{raised_in(exc)}", failure_detail(exc), trace=engine_frames(exc)
        ) from None
    if not isinstance(name, str) or not name:
        raise EngineError(ref, "name", f"is {type_name(name)} {name!r}", "expected a non-empty string")
    return name


class GuardedEngine:
    """A user's engine behind the checks (see the module docstring). Other attributes read through."""

    def __init__(self, inner: Engine, ref: str = "") -> None:
        self.inner = inner
        self.ref = ref
        self.name = read_name(inner, ref)
        self.label = engine_label(self.name, ref)

    def _raised(self, call: str, exc: BaseException) -> EngineError:
        return EngineError(
            self.label, call, f"raised {type(exc).__name__}{raised_in(exc)}", failure_detail(exc), trace=engine_frames(exc)
        )

    def before_step(self, ctx: StepContext) -> None:
        """The engine's step (its return value is ignored, as the API says)."""
        try:
            with engine_output():
                self.inner.before_step(ctx)
        except MemoryError:
            raise
        except ENGINE_FAILURES as exc:  # noqa: BLE001 - a user's engine: any failure is theirs
            raise self._raised("before_step()", exc) from exc

    def view(self, session: Session) -> tuple[Message, ...]:
        """The engine's view, checked to be a sequence of messages (returned as a tuple)."""
        try:
            with engine_output():
                messages = self.inner.view(session)
        except MemoryError:
            raise
        except ENGINE_FAILURES as exc:  # noqa: BLE001
            raise self._raised("view()", exc) from exc
        problem = messages_problem(messages)
        if problem is None and not messages:
            problem, expected = f"returned an empty {type(messages).__name__}", "a request carries at least one message"
        else:
            expected = messages_expected(problem or "")
        if problem is not None:
            raise EngineError(self.label, "view()", problem, expected, trace=method_location(self.inner.view))
        return messages if isinstance(messages, tuple) else tuple(messages)

    def run_tool(self, session: Session, call: ToolCall) -> Message | None:
        """The engine's tool, checked to give back a message or None."""
        try:
            with engine_output():
                result = self.inner.run_tool(session, call)
        except MemoryError:
            raise
        except ENGINE_FAILURES as exc:  # noqa: BLE001
            raise self._raised(f"run_tool({call.name})", exc) from exc
        if result is not None:
            problem = message_problem(result)
            if problem is not None:
                raise EngineError(
                    self.label, f"run_tool({call.name})", f"returned {problem}", TOOL_EXPECTED,
                    trace=method_location(self.inner.run_tool),
                )
        return result

    def on_wake(self, ctx: StepContext) -> None:
        """The engine woken inside an idle gap (it asked, ``ctx.wake_at``); its return value is
        ignored. An engine that asked but has no ``on_wake`` is told so."""
        wake = getattr(self.inner, "on_wake", None)
        if wake is None:
            raise EngineError(self.label, "ctx.wake_at()", "asked to be woken",
                              "the engine has no on_wake(ctx) method for the loop to call")
        try:
            with engine_output():
                wake(ctx)
        except MemoryError:
            raise
        except ENGINE_FAILURES as exc:  # noqa: BLE001
            raise self._raised("on_wake()", exc) from exc

    def __getattr__(self, name: str) -> object:
        # The engine's own state (config, counters) reads through, as on the engine itself.
        if name == "inner":  # not set yet: never recurse
            raise AttributeError(name)
        return getattr(self.inner, name)


def guard(engine: Engine, ref: str = "") -> GuardedEngine:
    """``engine`` behind the checks; ``ref`` is how the user named it (an import path or installed name)."""
    return engine if isinstance(engine, GuardedEngine) else GuardedEngine(engine, ref)
