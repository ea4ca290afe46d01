"""Where planned runs execute: in this process, in local worker processes, or on Dask.

:func:`map_runs` calls ``fn(item)`` for every item and yields ``(index, result)`` as each one
finishes, in completion order; the caller files results by key, so what it writes never
depends on which executor ran them or in what order they finished. Items are submitted in the
order given (the caller passes them longest first, :func:`~prefixbench.workloads.runs.sweep.submission_order`).

- ``jobs == 1`` and no scheduler: one after another in this process.
- ``jobs > 1``: a :class:`concurrent.futures.ProcessPoolExecutor` of ``jobs`` workers, never
  more than there are items (the pool forks every worker at the first submit, busy or not).
- ``scheduler``: Dask distributed (the optional ``dask`` extra, imported only here):
  ``"local"`` starts a ``LocalCluster`` of ``jobs`` single-threaded worker processes (no more
  than the items), anything
  else is the address of a running scheduler (``tcp://host:8786``), whose workers must have
  the same prefixbench installed.

In a worker, a :class:`UserError` (an :class:`~prefixbench.kernel.api.EngineError` from a
user's engine among them) is handed back as a value and raised again here, the same error
with the same one line: no ``_RemoteTraceback``, and no worker log of a failed task.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, TypeVar

from prefixbench.simulator.errors import UserError

T = TypeVar("T")
R = TypeVar("R")

#: A sweep with more runs than this uses every core by default.
FEW_RUNS = 4
#: Seconds to wait for a ``--scheduler ADDRESS`` to answer.
CONNECT_TIMEOUT_S = 10
#: Seconds to wait for ``--scheduler local``'s workers to start.
WORKER_START_TIMEOUT_S = 120


class _Failed(NamedTuple):
    """A worker's UserError, carried back as a result."""

    error: UserError


def _call_catching(fn: Callable[[T], R], item: T) -> R | _Failed:
    try:
        return fn(item)
    except UserError as exc:
        return _Failed(exc)


def _in_worker(fn: Callable[[T], R]) -> Callable[[T], R | _Failed]:
    """``fn`` as a worker runs it: a UserError comes back as a value (picklable: a partial)."""
    return functools.partial(_call_catching, fn)


def _call_on_local_worker(fn: Callable[[T], R], item: T) -> R | _Failed:
    """:func:`_call_catching` in a worker process of ``--scheduler local``, its output swapped
    first (:func:`_stdout_to_stderr`: per task, so a worker the cluster restarted is swapped too)."""
    _stdout_to_stderr()
    return _call_catching(fn, item)


def _raised(result: R | _Failed) -> R:
    """A worker's result, or its UserError raised again here."""
    if isinstance(result, _Failed):
        raise result.error
    return result


def default_jobs(num_runs: int) -> int:
    """Worker processes when ``--jobs`` is not given: the cores when a sweep has more than a few runs."""
    if num_runs <= FEW_RUNS:
        return 1
    return max(1, min(os.cpu_count() or 1, num_runs))


def pool_size(jobs: int, tasks: int, per_worker: int) -> int:
    """Worker processes for a side job (reading stored runs, drawing charts): none unless there
    is enough work to share."""
    return 1 if jobs <= 1 or tasks < 2 * per_worker else min(jobs, tasks // per_worker)


def map_runs(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    on_submit: Callable[[list[int]], None] | None = None,
) -> Iterator[tuple[int, R]]:
    """``(index, fn(items[index]))`` for every item, as each finishes.

    Worker processes start here, before the caller iterates (and before it starts any
    progress thread). ``on_submit(indices)`` is told which items are in flight (for the process
    pool and Dask, the oldest ``jobs`` handed out and not finished).
    """
    check_jobs(jobs, scheduler)
    jobs = min(jobs, max(1, len(items)))  # an idle worker is a forked process for nothing
    if scheduler is not None:
        return _dask(fn, items, jobs, scheduler, on_submit)
    if jobs == 1 or len(items) <= 1:
        return _inline(fn, items, on_submit)
    return _processes(fn, items, jobs, on_submit)


def _inline(
    fn: Callable[[T], R], items: Sequence[T], on_submit: Callable[[list[int]], None] | None
) -> Iterator[tuple[int, R]]:
    _freeze_startup_objects()
    for index, item in enumerate(items):
        if on_submit is not None:
            on_submit([index])
        yield index, fn(item)


def _processes(
    fn: Callable[[T], R], items: Sequence[T], jobs: int, on_submit: Callable[[list[int]], None] | None
) -> Iterator[tuple[int, R]]:
    from concurrent.futures import ProcessPoolExecutor

    # fork: the workers start with prefixbench already imported (and share its read-only
    # pages); all of them are forked by the first submit, before any progress thread starts.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    _freeze_startup_objects()
    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context(method),
        initializer=_exit_with_parent,
        initargs=(os.getpid(),),
    )
    # Keep at most 2 x jobs queued so the longest-first order holds and a kill loses little.
    pending: dict[Any, int] = {}
    in_worker = _in_worker(fn)
    for index in range(min(len(items), 2 * jobs)):
        pending[pool.submit(in_worker, items[index])] = index
    return _drain(pool, in_worker, items, jobs, pending, on_submit)


def _freeze_startup_objects() -> None:
    """Move everything alive now (modules, the plan: what every run keeps) out of the garbage
    collector's reach, so its collections during the runs walk only what the runs make. With
    forked workers this matters most: it is their inheritance, which each worker's collections
    would otherwise walk again and again, copying every page they touch (measured on the 200-run
    grid: about 12% less CPU with two workers)."""
    import gc

    gc.freeze()


def _exit_with_parent(parent: int) -> None:
    """In a worker: exit when the sweep process is gone (a ``kill -9`` leaves no orphans behind)."""
    import threading
    import time

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="prefixbench-parent-watch", daemon=True).start()


def _drain(
    pool: Any, fn: Callable[[T], R | _Failed], items: Sequence[T], jobs: int, pending: dict[Any, int],
    on_submit: Callable[[list[int]], None] | None,
) -> Iterator[tuple[int, R]]:
    from concurrent.futures import FIRST_COMPLETED, wait

    nxt = len(pending)
    try:
        while pending:
            if on_submit is not None:
                on_submit(sorted(pending.values())[:jobs])
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: pending[f]):
                index = pending.pop(future)
                if nxt < len(items):
                    pending[pool.submit(fn, items[nxt])] = nxt
                    nxt += 1
                yield index, _raised(future.result())
    except BaseException:
        # Interrupted or failed: stop the runs in flight now instead of waiting for them (what
        # finished is already stored; the next sweep computes the rest).
        for future in pending:
            future.cancel()
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


#: Local worker processes ``--jobs`` may ask for, per core: the runs are CPU-bound, so more
#: than the cores only adds memory (each worker is a forked prefixbench); a typo such as
#: ``--jobs 10000`` would otherwise fork that many processes.
JOBS_PER_CORE = 4


def max_local_jobs() -> int:
    """The most local worker processes ``--jobs`` takes: :data:`JOBS_PER_CORE` x the cores."""
    return JOBS_PER_CORE * (os.cpu_count() or 1)


def check_jobs(jobs: int | None, scheduler: str | None = None, command: str = "") -> None:
    """Refuse a ``--jobs`` below 1 (the line pointing at ``command``'s help where it is given, as
    the parser's own errors do), or above :func:`max_local_jobs` for local processes (no limit
    with a remote Dask scheduler, whose workers are elsewhere).

    Raises:
        UserError: naming ``--jobs``, the value and the limit.
    """
    if jobs is None:
        return
    if jobs < 1:
        # (a whole number already: argparse read it; what is wrong is its size)
        raise UserError(f"--jobs: '{jobs}' must be 1 or more" + (f" (see 'prefixbench {command} --help')" if command else ""))
    limit = max_local_jobs()
    if jobs > limit and scheduler in (None, "local"):
        cores = os.cpu_count() or 1
        raise UserError(f"--jobs {jobs:,}: more than {JOBS_PER_CORE} x the {cores} core{'s' if cores != 1 else ''} here "
                        f"({limit}); the work is CPU-bound, so give at most {limit} (or --scheduler ADDRESS for more machines)")


def require_scheduler(scheduler: str | None) -> None:
    """Fail before anything runs when ``--scheduler`` is given and Dask is not installed."""
    if scheduler is None:
        return
    import importlib.util

    if importlib.util.find_spec("distributed") is None:
        raise UserError("--scheduler needs Dask distributed: pip install 'prefixbench[dask]' (in a checkout: pip install -e '.[dask]')")
    if not scheduler:
        raise UserError("--scheduler: give a scheduler address (tcp://host:8786) or 'local'")
    if scheduler != "local":
        _check_address(scheduler)


def _check_address(scheduler: str) -> None:
    """Refuse a ``--scheduler`` address that cannot be parsed or names no host, before any work (an audit
    of one file never contacts the scheduler, so a typo would otherwise pass unnoticed)."""
    from urllib.parse import urlsplit

    address = scheduler if "://" in scheduler else f"tcp://{scheduler}"
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError as exc:
        raise UserError(f"--scheduler {scheduler!r}: not a scheduler address ({exc}); give tcp://host:8786 or 'local'") from None
    if parts.scheme in {"tcp", "tls", "ws", "wss", "ucx"} and not parts.hostname:
        raise UserError(f"--scheduler {scheduler!r}: not a scheduler address (no host); give tcp://host:8786 or 'local'")
    del port  # read for its check: a port that is not a number in range raises above


def _stdout_to_stderr() -> None:
    """In a worker process of ``--scheduler local``: what is printed goes to standard error (once:
    again, nothing)."""
    if sys.stdout is sys.stderr:
        return
    sys.stdout.flush()
    try:
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # C-level writes too
    except (AttributeError, OSError, ValueError):
        pass
    sys.stdout = sys.stderr


def _dask(
    fn: Callable[[T], R], items: Sequence[T], jobs: int, scheduler: str,
    on_submit: Callable[[list[int]], None] | None,
) -> Iterator[tuple[int, R]]:
    try:
        import logging

        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise UserError(
            "--scheduler needs Dask distributed: pip install 'prefixbench[dask]' (in a checkout: pip install -e '.[dask]')"
        ) from None
    cluster = None
    try:
        if scheduler == "local":
            cluster = LocalCluster(
                n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None,
                silence_logs=logging.CRITICAL,  # a run's error reaches the caller; shutdown chatter does not
            )
            client = Client(cluster)
            # The workers are this command's own processes, started with its standard output:
            # an engine's print there would land in it (in ``sweep --format json``). Engines run
            # in a worker's thread, where engine_output() swaps nothing, so each task swaps its
            # worker's (_call_on_local_worker).
            try:
                client.wait_for_workers(jobs, timeout=WORKER_START_TIMEOUT_S)
            except (TimeoutError, OSError):
                client.close()
                raise UserError(f"--scheduler local: {jobs} Dask worker(s) did not start within {WORKER_START_TIMEOUT_S} s") from None
        else:
            try:
                client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError, ValueError) as exc:
                raise UserError(f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({exc})") from None
        with client:
            futures = {}
            in_worker = functools.partial(_call_on_local_worker, fn) if cluster is not None else _in_worker(fn)
            for rank, (index, item) in enumerate(enumerate(items)):
                # Higher priority first: keep the order we were given (longest first).
                future = client.submit(in_worker, item, pure=False, priority=len(items) - rank)
                futures[future] = index
            remaining = sorted(futures.values())
            try:
                for future in as_completed(list(futures)):
                    if on_submit is not None:
                        on_submit(remaining[:jobs])
                    index = futures[future]
                    remaining.remove(index)
                    yield index, _raised(future.result())
            except BaseException:
                client.cancel(list(futures))  # stopped (an error, Ctrl-C): the queued runs never start
                raise
    finally:
        if cluster is not None:
            cluster.close()
