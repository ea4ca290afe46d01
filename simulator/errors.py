"""The one error type that means "the user asked for something invalid".

Every layer raises :class:`UserError` for bad input (an unknown preset, a malformed trace
line, an out-of-range ratio). The CLI turns it into one line on stderr and exit status 2;
anything else is a bug and keeps its traceback.
"""


class UserError(ValueError):
    """Bad input from the user: a config value, a command-line option or a file line.

    The message is the whole user-facing line, so it names what was wrong and where
    (``file:line``, an option name or a config key).
    """
