"""How a context window is written in every table, chart and message: as ``--windows`` takes it."""

#: The smallest context window prefixbench runs a scripted workload at, in tokens: every workload
#: needs at least this much (seed-coding a little more), and ``--windows`` refuses less on every
#: command that runs one.
MIN_WINDOW = 8_000

#: The smallest window ``check --trace`` judges a recorded log at: a log of a 4k-context model is
#: real, ``--windows 10`` is a typo.
MIN_TRACE_WINDOW = 1_000


def format_window(window: int) -> str:
    """``32k`` for 32,000, ``10m`` for 10,000,000, ``1500k`` for 1,500,000; the plain number
    otherwise."""
    if window % 1_000_000 == 0:
        return f"{window // 1_000_000}m"
    if window % 1000 == 0:
        return f"{window // 1000}k"
    return str(window)
