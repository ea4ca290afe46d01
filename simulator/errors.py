"""The one error type that means "the user asked for something invalid".

Every layer raises :class:`UserError` for bad input (an unknown preset, a malformed trace
line, an out-of-range ratio). The CLI turns it into one line on stderr and exit status 2;
anything else is a bug and keeps its traceback.
"""

import difflib
from collections.abc import Iterable



def closest(name: str, choices: Iterable[str]) -> str | None:
    """The choice closest to a misspelt ``name``; None when none is close."""
    close = difflib.get_close_matches(name, list(choices), n=1)
    return close[0] if close else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``did you mean 'x'?`` for the choice closest to a misspelt ``name``; "" when none is close."""
    near = closest(name, choices)
    return f"did you mean {near!r}?" if near is not None else ""


class UserError(ValueError):
    """Bad input from the user: a config value, a command-line option or a file line.

    The message is the whole user-facing line, so it names what was wrong and where
    (``file:line``, an option name or a config key).
    """
