"""The one way into the command line: whatever happens, one line and a known exit status.

``prefixbench`` (the console script) and ``python -m prefixbench`` both start here. This
module imports nothing heavy at load time, so an interrupt while numpy, pandas or matplotlib
are still importing is caught like any other.

Exit status: 0 done, 1 a check, gate or comparison failed, 2 bad input (one line naming what and where, from
:func:`prefixbench.reports.cli.run`), 130 interrupted (Ctrl-C, even one some library swallowed;
see :mod:`prefixbench.reports.interrupt`); ``proxy`` alone returns 143 after SIGTERM, its clean stop.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from prefixbench.reports import interrupt

INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    previous = interrupt.install()
    try:
        from prefixbench.reports.cli import run

        status = run(argv)
        interrupt.raise_if_interrupted()
        return status
    except KeyboardInterrupt:
        return _interrupted()
    except BaseException:
        # An interrupt some library turned into another error (numpy, interrupted while loading
        # its C extension, raises ImportError): still an interrupt, not a crash.
        if interrupt.interrupted():
            return _interrupted()
        raise
    finally:
        interrupt.restore(previous)


def console() -> int:
    """The console script and ``python -m prefixbench``: :func:`main`; after an interrupt the
    process exits at once, without the interpreter's shutdown, where a C extension that Ctrl-C
    cut off mid-import (numpy, pandas, matplotlib) can abort or die by the signal."""
    status = main()
    if status == INTERRUPTED:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(INTERRUPTED)
    return status


def _interrupted() -> int:
    try:
        print(interrupt.interrupted_line(), file=sys.stderr)
    except (OSError, ValueError):  # stderr closed: nothing left to tell
        pass
    return INTERRUPTED
