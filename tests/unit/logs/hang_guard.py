"""A guard for tests of files that are no regular file (a named pipe, a device): a reader that
opens one waits for ever, so the test stops it and fails, saying so."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


class Hang(BaseException):
    """Raised in the test when the guard's time runs out. Not a TimeoutError: that is an OSError,
    which a reader may skip as an unreadable file, and the test would pass on the bug."""


@contextmanager
def no_hang(seconds: int = 20, what: str = "the audit waited on the named pipe") -> Iterator[None]:
    """Fail the block with :class:`Hang` if it runs ``seconds`` or more (SIGALRM; POSIX only)."""

    def _hang(signum: int, frame: object) -> None:
        raise Hang(what)

    previous = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
