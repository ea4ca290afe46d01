"""Ctrl-C, remembered as well as raised.

The handler sets a flag and raises ``KeyboardInterrupt``. Library code that swallows the
exception (C extensions that clear any error while probing an attribute) cannot make a sweep
run on to exit 0: :func:`raise_if_interrupted` re-raises at the next run boundary and the
entry point returns 130 whenever one arrived.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

_interrupted = False
#: What an interrupted command kept, said on its last line (``122 of 192 runs kept in ...``).
_kept = ""


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def _quiet_unraisable(unraisable: object) -> None:
    """``sys.unraisablehook`` while a command runs: an interrupt the interpreter could not raise
    (Ctrl-C landing in a callback it runs itself, such as an import lock's weakref callback while
    numpy or pandas import) is the interrupt the command already reports in its one line, so it is
    not printed again as ``Exception ignored in ...``; anything else goes to the hook before."""
    global _interrupted
    kind = getattr(unraisable, "exc_type", None)
    if isinstance(kind, type) and issubclass(kind, KeyboardInterrupt):
        _interrupted = True
        return
    _previous_unraisable(unraisable)  # type: ignore[arg-type]


_previous_unraisable = sys.unraisablehook


def install() -> object:
    """Reset the flag and install the handler (and :func:`_quiet_unraisable`); returns the previous
    handler (None off the main thread)."""
    global _interrupted, _kept, _previous_unraisable
    _interrupted = False
    _kept = ""
    if sys.unraisablehook is not _quiet_unraisable:
        _previous_unraisable = sys.unraisablehook
        sys.unraisablehook = _quiet_unraisable
    try:
        return signal.signal(signal.SIGINT, _on_sigint)
    except ValueError:  # not the main thread: leave signals alone
        return None


def restore(previous: object) -> None:
    """Put back the handler (and the unraisable hook) :func:`install` replaced, and forget an
    interrupt (the command that saw it has returned; a later command in the process starts clean)."""
    global _interrupted
    _interrupted = False
    if sys.unraisablehook is _quiet_unraisable:
        sys.unraisablehook = _previous_unraisable
    if previous is not None:
        signal.signal(signal.SIGINT, previous)  # type: ignore[arg-type]


def interrupted() -> bool:
    """Whether Ctrl-C arrived since :func:`install`."""
    return _interrupted


def keep_note(text: str) -> None:
    """Say ``text`` (what the command kept, and how to resume) on the interrupted line."""
    global _kept
    _kept = text


def interrupted_line() -> str:
    """``prefixbench: interrupted``, with what the command kept when it said (:func:`keep_note`)."""
    return f"prefixbench: interrupted; {_kept}" if _kept else "prefixbench: interrupted"


def raise_if_interrupted(*_: object) -> None:
    """Raise ``KeyboardInterrupt`` if one arrived and was swallowed (usable as a run sink)."""
    if _interrupted:
        raise KeyboardInterrupt
