"""Ctrl-C, remembered as well as raised.

The handler sets a flag and raises ``KeyboardInterrupt``. Library code that swallows the
exception (C extensions that clear any error while probing an attribute) cannot make a sweep
run on to exit 0: :func:`raise_if_interrupted` re-raises at the next run boundary and the
entry point returns 130 whenever one arrived.
"""

from __future__ import annotations

import signal
from types import FrameType

_interrupted = False
#: What an interrupted command kept, said on its last line (``122 of 192 runs kept in ...``).
_kept = ""


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def install() -> object:
    """Reset the flag and install the handler; returns the previous handler (None off the main thread)."""
    global _interrupted, _kept
    _interrupted = False
    _kept = ""
    try:
        return signal.signal(signal.SIGINT, _on_sigint)
    except ValueError:  # not the main thread: leave signals alone
        return None


def restore(previous: object) -> None:
    """Put back the handler :func:`install` replaced."""
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
