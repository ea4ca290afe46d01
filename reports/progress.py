"""Sweep progress on stderr: a live bar on a terminal, a plain line every few seconds otherwise.

The bar shows runs done / total, runs running (at most one a worker), elapsed time and an ETA; its label names the
run that finished last as such ("last done: ..."), never as if it were running. Off a terminal
(CI logs, a pipe) a line such as::

    prefixbench: sweep 37/200 runs done (12 skipped, in store), 2 running, 0:41 elapsed, ETA 3:02

is printed every ``interval`` seconds by a timer, so a long run still shows a sign
of life, and once more when the sweep ends. ``check --engine`` counts its cases the same way,
in lines only, naming the case running, and only once a case has run for ``interval`` seconds
(a quick check prints none)::

    prefixbench: check 2/6 runs done, 1 running, 0:10 elapsed, ETA 0:20, running my-engine 32k-thinking-tools-lenient

The reading of logs (``audit``, ``replay``, ``check --trace``) counts bytes instead
(:class:`ReadProgress`): a bar on a terminal, else a line every few seconds, and the steps
after the reading said once the command has run that long::

    prefixbench replay: read 640.0 of 1,300.0 MB (212.4 MB/s)
"""

from __future__ import annotations

import sys
import threading
import time
from types import TracebackType
from typing import TextIO


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


#: Width of the bar itself: with the counts, runs running, elapsed time and ETA beside it, the
#: line fits 80 columns with room left for the last run's name (tests/unit/reports/test_progress_width.py).
BAR_WIDTH = 12


#: Columns the figures of the bar take (sweep, bar, done/total, running, elapsed, ETA) at most,
#: the spaces between them included.
FIGURES_WIDTH = 64


def bar_columns(width: int = 80) -> tuple:
    """The bar's columns for a console ``width`` wide: every figure kept whole (never wrapped,
    never cut), the last run's name last, in what room is left, ellipsized at its end (left out
    when no room is left)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.table import Column

    def fixed() -> Column:
        return Column(no_wrap=True)

    return (
        TextColumn("sweep", table_column=fixed()),
        BarColumn(bar_width=BAR_WIDTH, table_column=fixed()),
        MofNCompleteColumn(table_column=fixed()),
        TextColumn("{task.fields[flight]} running", table_column=fixed()),
        TimeElapsedColumn(table_column=fixed()),
        TextColumn("ETA", table_column=fixed()),
        TimeRemainingColumn(table_column=fixed()),
        TextColumn("[dim]{task.fields[last]}", 
                   table_column=Column(no_wrap=True, overflow="ellipsis", max_width=max(0, width - FIGURES_WIDTH))),
    )


class SweepProgress:
    """Counts runs as they finish and shows it (``mode``: ``bar``, ``lines`` or ``off``)."""

    def __init__(
        self, total: int, skipped: int = 0, *, mode: str = "off", interval: float = 5.0, stream: TextIO | None = None,
        command: str = "sweep", final: bool = True,
    ) -> None:
        #: The command the progress lines name (``sweep``, ``bench``).
        self.command = command
        #: Print the line once more when the runs end even if the timer never printed one.
        self.final = final
        #: What is running now, named at the end of the line (``check``'s case; "" for none).
        self.running = ""
        self.printed = False
        #: Runs done as the last printed line said (None before any line).
        self._printed_done: int | None = None
        self.total = total
        self.skipped = skipped
        self.done = skipped
        self.executing = 0
        self.last = ""
        self.mode = mode
        self.interval = interval
        self.stream = stream if stream is not None else sys.stderr
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._progress = None
        self._task = None

    @staticmethod
    def mode_for(quiet: bool, stream: TextIO | None = None) -> str:
        """``off`` when quiet, ``bar`` on a terminal, ``lines`` otherwise."""
        if quiet:
            return "off"
        stream = stream if stream is not None else sys.stderr
        return "bar" if stream.isatty() else "lines"

    def __enter__(self) -> SweepProgress:
        self._start = time.monotonic()
        if self.mode == "bar":
            from rich.console import Console
            from rich.progress import Progress

            console = Console(file=self.stream)
            self._progress = Progress(*bar_columns(console.width), console=console, transient=True)
            self._progress.__enter__()
            self._task = self._progress.add_task("sweep", total=self.total, completed=self.done, flight=0, last="")
        elif self.mode == "lines":
            self._thread = threading.Thread(target=self._ticker, name="prefixbench-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(kind, exc, tb)
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if kind is None and (self.final or self.printed) and not self._said_all_done():
                self._print()

    def set_running(self, count: int) -> None:
        """How many runs are executing now: at most one a worker (the runs a worker was handed
        in a batch and has not reached are not running; they land with their batch)."""
        with self._lock:
            self.executing = count
        self._refresh()

    def started(self, description: str) -> None:
        """One run is executing now (``check`` runs its cases one at a time): named in the line."""
        with self._lock:
            self.running = description
        self.set_running(1)

    def finished(self, description: str) -> None:
        """One more run is done (and stored)."""
        with self._lock:
            self.done += 1
            self.executing = max(0, min(self.executing, self.total - self.done))
            self.last = description
            if self.running == description:
                self.running = ""
        self._refresh()

    def line(self) -> str:
        """The plain progress line."""
        with self._lock:
            done, flight, running = self.done, self.executing, self.running
        elapsed = time.monotonic() - self._start
        computed = done - self.skipped
        remaining = self.total - done
        eta = "-"
        if computed > 0 and remaining > 0:
            eta = _clock(elapsed / computed * remaining)
        elif remaining == 0:
            eta = "0:00"
        skipped = f" ({self.skipped:,} skipped, in store)" if self.skipped else ""
        return (
            f"prefixbench: {self.command} {done:,}/{self.total:,} runs done{skipped}, {flight} running, "
            f"{_clock(elapsed)} elapsed, ETA {eta}" + (f", running {running}" if running else "")
        )

    def _refresh(self) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(
                self._task, completed=self.done, flight=self.executing, last=f"last done: {self.last}" if self.last else ""
            )

    def _print(self) -> None:
        self.printed = True
        with self._lock:
            self._printed_done = self.done
        print(self.line(), file=self.stream, flush=True)

    def _said_all_done(self) -> bool:
        """Whether a line already said every run is done: the last line needs no repeat (the
        runs can end well before the command does, e.g. while a local Dask cluster shuts down)."""
        with self._lock:
            return self.done == self.total and self._printed_done == self.total

    def _ticker(self) -> None:
        while not self._stop.wait(self.interval):
            if not self._said_all_done():
                self._print()


#: Seconds between ``ReadProgress``'s plain lines off a terminal, and before the steps after the
#: reading are said (a shorter run prints none).
READ_PROGRESS_SECONDS = 3.0


class ReadProgress:
    """Bytes read so far (across files): a rich bar on a terminal, else a plain line every few seconds.

    ``command`` names the command in the lines (``prefixbench audit: read ...``); ``replay`` and
    ``check --trace`` show their reading of a log the same way."""

    def __init__(self, total: int, *, enabled: bool = True, every: float | None = None, command: str = "audit") -> None:
        self.total = max(total, 1)
        self.enabled = enabled and total > 0
        self.every = READ_PROGRESS_SECONDS if every is None else every
        self.command = command
        self.last = time.monotonic()
        self.start = self.last
        self._bar = None
        if self.enabled and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, TransferSpeedColumn
            from rich.progress import Progress as RichProgress

            # On stderr: rich's own console is stdout's, where the bar's start and end left a blank
            # line or two before the output (audit --format json > FILE, run in a terminal).
            self._bar = RichProgress("reading logs", BarColumn(), TransferSpeedColumn(), transient=True,
                                     console=Console(file=sys.stderr), redirect_stdout=False)
            self._task = self._bar.add_task("read", total=self.total)
            self._bar.start()

    def __call__(self, done: int) -> None:
        if not self.enabled:
            return
        now_done = done
        if self._bar is not None:
            self._bar.update(self._task, completed=now_done)
            return
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            rate = now_done / max(now - self.start, 1e-9) / 1e6
            print(f"prefixbench {self.command}: read {now_done / 1e6:,.1f} of {self.total / 1e6:,.1f} MB ({rate:.1f} MB/s)", file=sys.stderr)

    def notice(self, text: str) -> None:
        """Say, in a plain line, that the reading goes on past the full bar (the files read again
        in another order: a Codex fork's rollout sorts before its source's), however short the audit."""
        if self._bar is not None:
            self._bar.stop()  # full: the reading that follows tells no bytes
            self._bar = None
        if self.enabled:
            print(f"prefixbench {self.command}: {text}", file=sys.stderr)

    def phase(self, text: str) -> None:
        """Say the step that follows the reading (auditing, re-simulating fixes), once the command
        has run for ``every`` seconds: long work tells what it does next, a short audit prints nothing."""
        if self._bar is not None:
            self._bar.stop()  # the reading is over (and no drawing thread runs while --jobs forks)
            self._bar = None
        if not self.enabled or time.monotonic() - self.start < self.every:
            return
        print(f"prefixbench {self.command}: {text}", file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
