"""``-`` on the command line, the Unix name of standard input or output.

Where a command can use it, it does (docs/robustness.md, "Standard input and output"):

- ``record -`` writes the log to standard output;
- ``replay -``, ``check --trace -`` and ``audit -`` read the log from standard input;
- ``compare BASE -`` (or ``compare - --compare NAME``) reads one result from standard input.

Everywhere else a path is a folder, is read by its path or would share standard output with
the command's own output, and ``-`` is refused in one line naming the flag, before anything
runs (it used to make a file or folder named ``-``). ``./-`` still names a file called ``-``:
only the bare word is standard input or output.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from prefixbench.simulator.errors import UserError

T = TypeVar("T")

#: How standard input is named in output and error lines (``<stdin>:3: invalid JSON ...``).
STDIN_NAME = "<stdin>"


class _Dash(type(Path())):  # type: ignore[misc]
    """The word ``-`` as given on the command line (``Path('./-')`` is a file named ``-``)."""

    __slots__ = ()


def path_argument(text: str) -> Path:
    """argparse's ``type`` of a path option: a Path, told apart when it is the bare word ``-``."""
    return _Dash(text) if text == "-" else Path(text)


def is_dash(path: object) -> bool:
    """Whether ``path`` is the bare ``-`` of the command line (standard input or output)."""
    return isinstance(path, _Dash) and str(path) == "-"


#: The path options that refuse ``-``, per command: (dest, flag as the user wrote it, why).
_FOLDER = "takes a folder, not standard output"
_REFUSED: dict[str, tuple[tuple[str, str, str], ...]] = {
    "sweep": (
        ("out", "--out", f"{_FOLDER} (the table is printed there already; --format json prints JSON)"),
        ("engine_config", "--engine-config", "settings are read from a file, not standard input"),
        ("grid", "--grid", "a grid is read from a file, not standard input"),
    ),
    "check": (
        ("out", "--out", f"{_FOLDER} (the spec lines are printed there already)"),
        ("engine_config", "--engine-config", "settings are read from a file, not standard input"),
    ),
    "bench": (
        ("out", "--out", f"{_FOLDER} (the leaderboard is printed there already)"),
        ("engine_config", "--engine-config", "settings are read from a file, not standard input"),
    ),
    "audit": (
        ("out", "--out", f"{_FOLDER} (--format json or md prints the audit there)"),
        ("junit", "--junit", "writes a file, not standard output (the audit is printed there)"),
    ),
    "compare": (("markdown", "--markdown", "writes a file; --format md prints the Markdown summary on standard output"),),
    "proxy": (("out", "--out", "writes a capture file; standard output carries the proxy's live lines"),),
}


def refuse_dashes(args: object) -> None:
    """Refuse ``-`` given to a path option that cannot be standard input or output, naming the
    flag (before anything runs). Also refuses ``-`` given twice to ``compare``."""
    command = getattr(args, "command", None)
    for dest, flag, why in _REFUSED.get(command or "", ()):
        value = getattr(args, dest, None)
        values = value if isinstance(value, list) else [value]
        if any(is_dash(v) for v in values):
            subject = f"{command} -" if flag == "PATH" else f"{flag} -"
            raise UserError(f"{subject}: {why}; a file or folder named '-' is written ./-")
    if command == "compare" and sum(is_dash(f) for f in getattr(args, "files", ())) > 1:
        raise UserError("compare - -: standard input is one result; give the other as a file")


#: What each command reads from ``-``, and a pipe that feeds it, for the line refusing a terminal.
_STDIN_EXAMPLES = {
    "replay": ("a log", "prefixbench record - | prefixbench replay -"),
    "check --trace": ("a log", "prefixbench record - | prefixbench check --trace -"),
    "audit": ("a log", "zcat session.jsonl.gz | prefixbench audit -"),
    "compare": ("a result", "prefixbench sweep --format json --quiet | prefixbench compare base.json -"),
}


def refuse_terminal(command: str) -> None:
    stdin = sys.stdin
    if stdin is None:
        raise UserError(f"{command} -: there is no standard input to read")
    try:
        interactive = stdin.isatty()
    except (ValueError, OSError):
        interactive = False
    if interactive:
        what, example = _STDIN_EXAMPLES.get(command, ("a log", "prefixbench record - | prefixbench replay -"))
        raise UserError(f"{command} -: standard input is a terminal; pipe or redirect {what} into it ({example})")
    import os
    import stat

    try:
        status = os.fstat(stdin.fileno())
    except (AttributeError, ValueError, OSError, io.UnsupportedOperation):
        return  # no descriptor (a test's stand-in): read what it holds
    if (stat.S_ISCHR(status.st_mode) or stat.S_ISBLK(status.st_mode)) and not _is_null(status):  # < /dev/zero would never end
        raise UserError(f"{command} -: standard input is a device, which has no end to read to; pipe or redirect a log into it")


def _is_null(status: object) -> bool:
    """Whether a device is the null device (``< /dev/null``: empty, and it ends)."""
    import os

    try:
        return status.st_rdev == os.stat(os.devnull).st_rdev  # type: ignore[attr-defined, no-any-return]
    except OSError:
        return False


def read_stdin_text(command: str) -> str:
    """Standard input as UTF-8 text (for a small result: ``compare -``)."""
    refuse_terminal(command)
    data = sys.stdin.buffer.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{STDIN_NAME}: not UTF-8 text (byte {exc.start}); expected runs.csv or a JSON result") from None


@contextmanager
def readable_file(path: Path, command: str) -> Iterator[Path]:
    """``path`` itself, or for ``-`` standard input copied to a temporary file named
    :data:`STDIN_NAME` (the readers read a file by its path, some of them twice), removed after.
    An error line that names the copy names ``<stdin>`` instead."""
    if not is_dash(path):
        yield path
        return
    import shutil
    import tempfile

    refuse_terminal(command)
    with tempfile.TemporaryDirectory(prefix="prefixbench-stdin-") as folder:
        copy = Path(folder) / STDIN_NAME
        try:
            with copy.open("wb") as out:
                shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
        except OSError as exc:
            raise UserError(f"{command} -: cannot keep standard input in {folder} ({exc.strerror or exc}); "
                            "save the log to a file and give its path") from None
        try:
            yield copy
        except UserError as exc:
            lines = getattr(exc, "lines", None)

            def named(text: str) -> str:  # (the copy, then its folder: a log named by its folder names that)
                return text.replace(str(copy), STDIN_NAME).replace(folder, STDIN_NAME)

            error = UserError(named(str(exc)))
            if lines:
                error.lines = [named(line) for line in lines]  # type: ignore[attr-defined]
            raise error from None


def renamed(value: T, old: str, new: str) -> T:
    """``value`` with ``old`` replaced by ``new`` in every string it holds (structs, tuples,
    lists, sets, frozensets and dicts walked; other values kept): an audit of ``-`` names standard input
    :data:`STDIN_NAME`, not the temporary copy it read (whose folder differs on every run)."""
    import msgspec

    if isinstance(value, str):
        return value.replace(old, new) if old in value else value  # type: ignore[return-value]
    if isinstance(value, msgspec.Struct):
        changes = {}
        for name in value.__struct_fields__:
            item = getattr(value, name)
            done = renamed(item, old, new)
            if done is not item:
                changes[name] = done
        return msgspec.structs.replace(value, **changes) if changes else value
    if isinstance(value, (tuple, list)):
        items = [renamed(item, old, new) for item in value]
        if all(a is b for a, b in zip(items, value)):
            return value
        return type(value)(items) if isinstance(value, list) or type(value) is tuple else type(value)(*items)  # type: ignore[return-value]
    if isinstance(value, (set, frozenset)):
        members = [renamed(item, old, new) for item in value]
        if all(a is b for a, b in zip(members, value)):
            return value
        return type(value)(members)  # type: ignore[return-value]
    if isinstance(value, dict):
        pairs = {renamed(k, old, new): renamed(v, old, new) for k, v in value.items()}
        return pairs  # type: ignore[return-value]
    return value


def write_stdout_bytes(data: bytes) -> bool:
    """Write ``data`` to standard output as bytes, after what was printed before (``record -``);
    False when the reader went away before the end (``| head``): the rest is dropped."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # a replaced stdout without bytes (a test's capture): its text
        sys.stdout.write(data.decode("utf-8"))
        return True
    rest = memoryview(data)
    try:
        # A write into a pipe whose reader left part-way returns what it wrote, with no error
        # (measured: 65,536 of 40 MB into `| head -c 10`): the rest is written again, which raises.
        while rest:
            done = buffer.write(rest)
            if not done:
                break
            rest = rest[done:]
        buffer.flush()
    except BrokenPipeError:  # the reader went away: the rest is dropped, as any output is
        drop_stdout(sys.stdout)
        return False
    return not rest


#: Whether the command started with its standard output closed (``>&-``), now the null device.
_stdout_closed = False


def reopen_closed_streams() -> None:
    """Put the null device on a standard descriptor the command was started without (``>&-``,
    ``2>&-``, ``<&-``), and give Python a stream for it.

    Python leaves ``sys.stdout`` None there, and every print was a traceback; worse, the first
    file prefixbench opened took descriptor 1, and a worker's print went into it. What a
    command prints to a closed standard output is dropped, as for a reader that left; ``record
    -`` refuses it (:func:`refuse_closed_stdout`), having nowhere to put the log.
    """
    import os

    global _stdout_closed
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            if name == "stdout":
                _stdout_closed = True
            if getattr(sys, name) is None:
                setattr(sys, name, open(fd, "r" if fd == 0 else "w", encoding="utf-8", closefd=False))


def refuse_closed_stdout(command: str) -> None:
    """Refuse writing a result to standard output the command was started without."""
    if _stdout_closed:
        raise UserError(f"{command}: standard output is closed, so the log would be lost; name a file")


def drop_stdout(stream: object) -> None:
    """Point ``stream``'s descriptor at the null device, so what it still holds and writes goes nowhere."""
    import os

    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, stream.fileno())  # type: ignore[attr-defined]
    finally:
        os.close(null)
    try:
        stream.flush()  # type: ignore[attr-defined]
    except OSError:
        pass
