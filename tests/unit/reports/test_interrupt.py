"""Ctrl-C: exit 130 and one line, whenever it arrives; never lost, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prefixbench.reports import entry
from prefixbench.workloads.runs import store as store_module
from prefixbench.workloads.runs import sweep as sweep_module

SWEEP = ["sweep", "--windows", "32k", "--presets", "legacy,patched", "--steps", "40", "--quiet"]


def _interrupt(tmp_path, argv, ready) -> str:
    proc = subprocess.Popen(
        [sys.executable, "-m", "prefixbench", *argv, "--out", str(tmp_path / "o")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ready(proc)
    assert proc.poll() is None, "finished before the interrupt"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.strip() == "prefixbench: interrupted" or err.startswith("prefixbench: interrupted; "), err
    return err


def _loaded(proc, library: str) -> bool:
    try:
        return library in Path(f"/proc/{proc.pid}/maps").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc to see what the process has loaded")
@pytest.mark.parametrize("library", ["numpy", "pandas/_libs"])
def test_sigint_during_imports_is_130_without_traceback(tmp_path, library):
    # Interrupt once the library's compiled code is loaded: prefixbench is importing its stack.
    def importing(proc):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and not _loaded(proc, library):
            time.sleep(0.002)

    _interrupt(tmp_path, SWEEP, importing)


def test_sigint_mid_sweep_is_130_and_keeps_finished_runs(tmp_path):
    store = tmp_path / "o" / "store"

    def stored() -> list[Path]:
        # Finished runs only: a run being written is a hidden temporary file, which glob's "*"
        # matches too (and an interrupted sweep removes).
        return [p for p in store.glob("*.parquet") if not p.name.startswith(".")] if store.is_dir() else []

    def after_first_run(proc):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if stored():
                return
            time.sleep(0.02)

    err = _interrupt(tmp_path, ["sweep", "--windows", "32k,128k,512k", "--jobs", "1", "--quiet"], after_first_run)
    # Finished runs are kept in the result store; the folder says the sweep did not finish,
    # and so does the line (on main it said only "interrupted"): how many, where, how to resume.
    assert len(stored()) >= 1
    assert err.strip() == (f"prefixbench: interrupted; {len(stored())} of 12 runs kept in {store}; the same command "
                           "resumes (stored runs are skipped)"), err
    assert (tmp_path / "o" / "SWEEP-UNFINISHED").exists()
    assert not [p for p in store.iterdir() if p.name.startswith(".tmp-")]  # no half-written run stays


def test_a_swallowed_interrupt_still_stops_the_sweep_with_130(tmp_path, monkeypatch, capsys):
    # Library code that clears the KeyboardInterrupt must not make the sweep run on to exit 0.
    real = sweep_module.execute_planned
    calls = []

    def swallowing(item, spec=None):
        run = real(item, spec)
        calls.append(run)
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
        except KeyboardInterrupt:
            pass  # swallowed, as some C extensions do
        return run

    monkeypatch.setattr(store_module, "execute_planned", swallowing)
    out = tmp_path / "o"
    assert entry.main([*SWEEP, "--jobs", "1", "--out", str(out)]) == 130
    # Fails on main, which said only "prefixbench: interrupted".
    assert capsys.readouterr().err.strip() == (f"prefixbench: interrupted; 1 of 2 runs kept in {out / 'store'}; "
                                               "the same command resumes (stored runs are skipped)")
    assert len(calls) == 1  # stopped at the first run boundary
    assert len(list((out / "store").glob("*.parquet"))) == 1  # what finished is kept, in the store
    assert not (out / "runs.csv").exists()


def test_an_interrupted_bench_says_what_its_store_kept(tmp_path, monkeypatch, capsys):
    # Fails on main: the line was only "prefixbench: interrupted".
    real = sweep_module.execute_planned

    def interrupting(item, spec=None):
        run = real(item, spec)
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)
        except KeyboardInterrupt:
            pass  # the run finished; the bench stops at the next boundary
        return run

    monkeypatch.setattr(store_module, "execute_planned", interrupting)
    out = tmp_path / "b"
    argv = ["bench", "--workloads", "seed-coding", "--strategies", "checkpoint", "--caches", "openai", "--windows", "32k",
            "--seeds", "0-2", "--steps", "10", "--jobs", "1", "--quiet", "--out", str(out)]
    assert entry.main(argv) == 130
    assert capsys.readouterr().err.strip() == (f"prefixbench: interrupted; 1 of 3 runs kept in {out / 'store'}; "
                                               "the same command resumes (stored runs are skipped)")


def test_an_interrupt_the_interpreter_could_not_raise_is_not_printed_again(capsys):
    # Found under load: Ctrl-C landing in an import lock's weakref callback while pandas imported
    # printed "Exception ignored in: <function _get_module_lock.<locals>.cb ...>" and a traceback
    # above the one line. While a command runs, such an interrupt is the one it reports; any
    # other unraisable error still reaches the hook that was there before.
    from types import SimpleNamespace

    from prefixbench.reports import interrupt

    seen: list = []
    hook = seen.append
    before = sys.unraisablehook
    sys.unraisablehook = hook
    try:
        previous = interrupt.install()
        try:
            sys.unraisablehook(SimpleNamespace(exc_type=KeyboardInterrupt, exc_value=KeyboardInterrupt(), exc_traceback=None,
                                               err_msg=None, object=None))
            assert interrupt.interrupted() and seen == []
            other = SimpleNamespace(exc_type=ValueError, exc_value=ValueError("x"), exc_traceback=None, err_msg=None, object=None)
            sys.unraisablehook(other)
            assert seen == [other]
        finally:
            interrupt.restore(previous)
        assert sys.unraisablehook is hook
    finally:
        sys.unraisablehook = before


def test_an_interrupt_is_forgotten_once_its_command_returned() -> None:
    # review62c: a test that left the flag set made a later in-process command exit 130.
    from prefixbench.reports import interrupt

    previous = interrupt.install()
    interrupt._interrupted = True
    interrupt.restore(previous)
    assert not interrupt.interrupted()
