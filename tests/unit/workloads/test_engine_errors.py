"""A user's engine that fails while it runs: one line naming the engine, the method, the step, the
workload and the window, exit 2, on every command and executor; the traceback only when asked."""

from __future__ import annotations

import pickle

import pytest

from prefixbench.kernel import EngineError, Session, StepContext, user_text
from prefixbench.kernel.guard import GuardedEngine
from prefixbench.reports.entry import main
from prefixbench.workloads.specs.engine import EngineCase, run_case
from tests.user_engines import Broken

#: Each broken engine of tests/user_engines.py, and what its line must say.
CASES = {
    "raise_at_5": ("before_step() raised RuntimeError in tests/user_engines.py:77 at step 4 (seed-coding, ", "the engine's own bug at its 5th step"),
    "view_dict": ("view() returned dict at step 0 (seed-coding, ", "expected a sequence of Message"),
    "view_none": ("view() returned None at step 0 (seed-coding, ", "expected a sequence of Message"),
    "view_str": ("view() returned str at step 0 (seed-coding, ", "expected a sequence of Message"),
    "view_dicts": ("view() returned a list holding a dict (item 0) at step 0 (seed-coding, ", "expected a sequence of Message"),
    "tool_raises": ("run_tool(", "raised KeyError in tests/user_engines.py:91 at step 0 (seed-coding, "),
    "name_raises": ("engine tests.user_engines:name_raises: name raised ValueError in tests/user_engines.py:124 (seed-coding, ", "the name is not configured"),
}


def ref(case: str) -> str:
    return f"tests.user_engines:{case}"


def assert_one_engine_line(capfd: pytest.CaptureFixture[str], case: str) -> str:
    """stderr is one line naming the engine and the method; no traceback anywhere (workers included)."""
    out, err = capfd.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("prefixbench: error: engine "), line
    assert all(fragment in line for fragment in CASES[case]), line
    assert ref(case) in line
    assert "Traceback" not in out + err and "_RemoteTraceback" not in err
    return line


COMMANDS = {
    "check": ["check", "--windows", "32k"],
    "record": ["record", "{tmp}/rec.jsonl", "--steps", "12"],
    "sweep-jobs-1": ["sweep", "--windows", "32k,128k", "--steps", "12", "--jobs", "1"],
    "sweep-jobs-2": ["sweep", "--windows", "32k,128k", "--steps", "12", "--jobs", "2"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case", list(CASES))
def test_a_failing_engine_is_one_line_and_exit_2(tmp_path, capfd, case, command):
    argv = [word.replace("{tmp}", str(tmp_path)) for word in COMMANDS[command]]
    if argv[0] == "sweep":
        argv += ["--presets", "patched", "--out", str(tmp_path / "out"), "--quiet"]
    assert main([*argv, "--engine", ref(case)]) == 2
    assert_one_engine_line(capfd, case)


# A LocalCluster takes 10-25 s to start and stop on 2 busy cores: one engine that raises and one
# that returns the wrong type go through Dask; every case crosses a worker's pickle below.
@pytest.mark.parametrize("case", ["raise_at_5", "view_dicts"])
def test_a_failing_engine_on_dask_is_one_line_and_exit_2(tmp_path, capfd, case):
    pytest.importorskip("distributed")
    argv = ["sweep", "--engine", ref(case), "--windows", "32k,128k", "--steps", "12", "--presets", "patched",
            "--scheduler", "local", "--jobs", "2", "--out", str(tmp_path), "--quiet"]
    assert main(argv) == 2
    assert_one_engine_line(capfd, case)


@pytest.mark.parametrize("case", [c for c in CASES if c != "name_raises"])
def test_every_case_comes_back_from_a_worker_as_the_same_error(case):
    from prefixbench.workloads.runs.execute import _in_worker, _raised

    with pytest.raises(EngineError) as here:
        _run_case_32k(case)
    # What a worker hands back (a value, pickled), raised again in the caller.
    carried = pickle.loads(pickle.dumps(_in_worker(_run_case_32k)(case)))
    with pytest.raises(EngineError) as there:
        _raised(carried)
    assert str(there.value) == str(here.value) and there.value.trace == here.value.trace


def _run_case_32k(case: str) -> None:
    run_case(ref(case), EngineCase(32_000, "seed-coding", "lenient"))


def test_the_line_names_the_window_it_failed_at(capfd):
    assert main(["check", "--engine", ref("view_dict"), "--windows", "128k"]) == 2
    line = capfd.readouterr().err.strip()
    assert line == (
        "prefixbench: error: engine broken-view-dict (tests.user_engines:view_dict): view() returned dict "
        "at step 0 (seed-coding, 128k): expected a sequence of Message"
    )


@pytest.mark.parametrize("how", ["--debug", "env"])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_debug_prints_the_traceback_with_the_engines_frame(tmp_path, capfd, monkeypatch, how, jobs):
    argv = ["sweep", "--engine", ref("raise_at_5"), "--windows", "32k,128k", "--steps", "12", "--presets", "patched",
            "--jobs", jobs, "--out", str(tmp_path), "--quiet"]
    if how == "env":
        monkeypatch.setenv("PREFIXBENCH_DEBUG", "1")
    else:
        argv.append("--debug")
    assert main(argv) == 2
    err = capfd.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert 'user_engines.py", line' in err and "in before_step" in err
    assert err.strip().splitlines()[-1].startswith("prefixbench: error: engine broken-raise-at-5")


def test_debug_before_the_subcommand_too(capfd):
    assert main(["--debug", "check", "--engine", ref("view_none"), "--windows", "32k"]) == 2
    assert "Traceback (most recent call last)" in capfd.readouterr().err


def test_the_error_crosses_a_pickle_whole():
    exc = EngineError("e", "view()", "returned dict", "expected a sequence of Message", step="step 4",
                      workload="seed-coding", window=32_000, trace='  File "x.py", line 1, in view\n')
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is EngineError and str(back) == str(exc)
    assert (back.engine, back.call, back.step, back.window, back.trace) == ("e", "view()", "step 4", 32_000, exc.trace)
    assert str(exc) == "engine e: view() returned dict at step 4 (seed-coding, 32k): expected a sequence of Message"


def test_the_trace_holds_the_engines_frames_only():
    with pytest.raises(EngineError) as info:
        run_case(ref("raise_at_5"), EngineCase(32_000, "seed-coding", "lenient"))
    trace = info.value.trace
    assert "user_engines.py" in trace and "RuntimeError: the engine's own bug" in trace
    assert "loop.py" not in trace and "guard.py" not in trace


def test_a_type_error_points_at_the_method():
    with pytest.raises(EngineError) as info:
        run_case(ref("view_str"), EngineCase(32_000, "seed-coding", "lenient"))
    assert 'user_engines.py", line' in info.value.trace and "in view" in info.value.trace


def test_a_message_that_is_not_a_message_inside_a_tuple():
    engine = GuardedEngine(Broken("fine"), "x:y")
    session = Session("s")
    session.append("user/message", user_text("hi"))
    engine.inner.view = lambda s: (*s.derive_messages(), "oops")  # type: ignore[method-assign]
    with pytest.raises(EngineError, match=r"view\(\) returned a tuple holding a str \(item 1\)"):
        engine.view(session)


def test_the_loop_refuses_a_request_that_is_not_one():
    from prefixbench.workloads.scripted.loop import _Driver
    from prefixbench.workloads.scripted.seed_coding import SeedCodingWorkload

    driver = _Driver(SeedCodingWorkload(32_000, steps=4), Broken("fine"), _provider(), "s", False)
    with pytest.raises(TypeError, match=r"ctx.client\(\) takes a Request .*got dict"):
        driver.client({"messages": []})  # type: ignore[arg-type]


def _provider():
    from prefixbench.simulator.provider import SimulatedProvider

    return SimulatedProvider()


def test_a_builtin_engine_passes_the_guard_unchanged():
    # The guard returns the very tuple a well-behaved engine gives (no copy on the hot path).
    engine = GuardedEngine(Broken("fine"), "x:y")
    session = Session("s")
    session.append("user/message", user_text("hi"))
    view = engine.view(session)
    assert view == session.derive_messages() and type(view) is tuple
    assert engine.name == "broken-fine" and engine.how == "fine"


def test_measure_prices_what_is_sent_not_the_session():
    from prefixbench.kernel import count_tokens

    run = run_case("tests.user_engines:declared", EngineCase(32_000, "seed-coding", "lenient"))
    session: Session = run.session
    ctx = StepContext(session, lambda p, m: None, lambda r: None, 32_000, session.request_header())  # type: ignore[arg-type,return-value]
    sent = session.derive_messages()[-6:]
    measured = ctx.measure(sent)
    assert measured.total_tokens == count_tokens(sent, session.request_header())
    assert [n.seq for n in measured.nodes] == list(range(6))
    assert measured.total_tokens < ctx.meter().total_tokens
    with pytest.raises(TypeError, match=r"ctx.measure\(\): dict"):
        ctx.measure({"a": 1})  # type: ignore[arg-type]


def test_a_huge_error_message_is_clipped_in_the_line_kept_in_the_trace():
    class Loud(Broken):
        def before_step(self, ctx):
            raise ValueError("x" * 5_000)

    engine = GuardedEngine(Loud("loud"), "x:y")
    with pytest.raises(EngineError) as info:
        engine.before_step(None)  # type: ignore[arg-type]
    where = "raised ValueError in tests/unit/workloads/test_engine_errors.py:196: "
    assert len(str(info.value)) < 400 + len(where) and where in str(info.value) and "(5,000 characters)" in str(info.value)
    assert "x" * 5_000 in info.value.trace


def test_check_with_an_engine_module_not_in_the_folder_says_where_it_looked_and_what_to_do(tmp_path, monkeypatch, capfd):
    # `check --engine my_engine:factory` run from a folder without my_engine.py: int38b printed
    # importlib's words (ModuleNotFoundError: No module named 'my_engine'), which say neither
    # where it was looked for nor what to do.
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # (sys.path restored after: the loader would leave the folder on it)
    assert main(["check", "--engine", "my_engine_small38:factory", "--windows", "32k"]) == 2
    assert capfd.readouterr().err.splitlines() == [
        f"prefixbench: error: --engine my_engine_small38:factory: no module 'my_engine_small38' in {tmp_path} (the folder run "
        "from, searched first) nor on the import path: run from the folder holding my_engine_small38.py (or with that folder "
        "on PYTHONPATH)"]
