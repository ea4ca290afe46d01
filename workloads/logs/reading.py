"""Reading what a user feeds prefixbench: files, lines and JSON, each problem one clear line.

Every importer (request logs, captures, ``--engine-config``) reads through here, so the same
bad input fails the same way everywhere, as a :class:`UserError` naming ``file:line``:

- a path that is a folder or a device (``/dev/zero`` would never end), or a read error
  (``/proc/self/mem``);
- bytes that are not UTF-8 (a binary file); a file whose last bytes start a character they do
  not finish (a copy cut short) says it ends inside a character, at the line it ends on;
- JSON Python's decoder cannot hold: nesting deeper than :data:`MAX_DEPTH`, an integer of more
  than 4,300 digits, ``NaN`` / ``Infinity`` or a number too large for a float;
- a lone UTF-16 surrogate (``"\\ud800"``) in a string: valid JSON text, but not Unicode, so it
  could never be rendered or sent.

Lines split on ``\\n`` only: U+2028, U+2029 and U+0085 are legal inside a JSON string. A UTF-8
byte-order mark at the start of a file is skipped.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from prefixbench.simulator.errors import UserError

#: Deepest nesting of arrays and objects accepted (real request bodies stay below 20).
MAX_DEPTH = 100
_BOM = "\ufeff"


def check_readable(path: Path) -> None:
    """Refuse, before reading, what is not a file that ends: a folder, a device, a socket."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except ValueError:  # a NUL byte in a path a file gave (a grid's engine_config = "\u0000")
        shown = str(path).replace("\0", "\\x00")
        raise UserError(f"{shown}: cannot read (a path cannot hold a NUL byte)") from None
    if stat.S_ISDIR(mode):
        raise UserError(f"{path}: is a folder, not a file")
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        raise UserError(f"{path}: not a regular file (a device or socket has no end to read to)")


def starts_with(path: Path, magic: bytes) -> bool:
    """Whether ``path``'s first bytes are ``magic`` (a zip's, a Parquet file's, a SQLite
    database's); False for a file that cannot be read. (Here, not in the formats' common module:
    the SQLite readers are imported by :mod:`.records`, which that module imports.)"""
    try:
        with path.open("rb") as handle:
            return handle.read(len(magic)) == magic
    except OSError:
        return False


def read_text(path: Path) -> str:
    """A whole small file as text (UTF-8, BOM skipped); UserError naming the line of a bad byte."""
    check_readable(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return _decode(data, path, 1, first=True, last=True)


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line without its ending, split on ``\\n`` only, as UTF-8."""
    check_readable(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with handle:
        number = 0
        while True:
            try:
                raw = handle.readline()
            except OSError as exc:
                raise UserError(f"{path}:{number + 1}: cannot read ({exc.strerror or exc})") from None
            if not raw:
                return
            number += 1
            yield number, decode_line(raw, path, number)


def decode_line(data: bytes, path: Path, line: int) -> str:
    """One line read as bytes (by a fast reader) as text, refused like :func:`iter_lines` would
    (``data`` with its newline: a line without one is the file's last). A zero byte (NUL) is
    refused as :mod:`~prefixbench.workloads.logs.records` refuses it under ``audit`` (JSON has no
    place for one: a line of zeros read as JSON said ``invalid JSON (Expecting value at column 1)``
    under ``replay``); a zero-filled tail after whole lines never gets here (``zero_tail``)."""
    if b"\x00" in data:
        raise UserError(f"{path}:{line}: binary data, not a text log")
    last = not data.endswith(b"\n")
    return _decode(data.removesuffix(b"\n").removesuffix(b"\r"), path, line, first=line == 1, last=last)


def cut_character(path: object, line: int) -> UserError:
    """A file whose last bytes start a UTF-8 character they do not finish (a copy that stopped, a
    log read while its writer was between the bytes of a character), named at the line it ends on."""
    return UserError(f"{path}:{line}: the file ends inside a UTF-8 character")


def _decode(data: bytes, path: Path, line: int, *, first: bool, last: bool) -> str:
    """``data`` from ``line`` on as text; ``last``: it runs to the end of the file, so bytes that
    stop inside a character there are a file cut short, not a byte that is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = line + data.count(b"\n", 0, exc.start)
        if last and exc.end == len(data) and exc.reason == "unexpected end of data":
            raise cut_character(path, where) from None
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise UserError(f"{path}:{where}: not UTF-8 text (byte 0x{data[exc.start]:02x} at column {column}; a binary or truncated file?)") from None
    return text[1:] if first and text.startswith(_BOM) else text


def loads(text: str, where: str, *, whole_file: bool = False) -> object:
    """Parse JSON text; UserError (``where: ...``) for anything the importers could not hold.

    ``whole_file``: ``where`` is a path and a syntax error names its line (``path:3: ...``).
    """
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        at = f"{where}:{exc.lineno}" if whole_file else where
        raise UserError(f"{at}: invalid JSON ({json_reason(exc)})") from None
    except RecursionError:
        raise UserError(f"{where}: JSON nested too deep (at most {MAX_DEPTH} levels)") from None
    except _NotFinite as exc:
        raise UserError(f"{where}: {exc}") from None
    except ValueError as exc:  # an integer beyond Python's int-string limit
        raise UserError(f"{where}: {int_limit_text(exc)}") from None
    check_tree(value, where)
    return value


def check_tree(value: object, where: str, *, root: str = "", max_depth: int | None = MAX_DEPTH) -> None:
    """Refuse nesting beyond ``max_depth`` (None: any depth) and strings that are not valid Unicode.

    ``root`` is where ``value`` sits in its line (``request.body``), for the error's path.
    Walks without recursion, so it never fails on the depth it is checking.
    """
    stack: list[tuple[object, str, int]] = [(value, root, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            _check_str(item, path, where)
        elif isinstance(item, (dict, list)):
            if max_depth is not None and depth >= max_depth:
                raise UserError(f"{where}: nested too deep at {path or 'the top'} (at most {max_depth} levels)")
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if isinstance(key, str):
                    child_path = f"{path}.{_label(key)}" if path else _label(key)
                    _check_str(key, f"the key of {child_path}", where)
                else:
                    child_path = f"{path}[{key}]"
                stack.append((child, child_path, depth + 1))


def _label(key: str) -> str:
    """A key as it reads in a path: plain when it is a plain name, else quoted and escaped."""
    if key and all(c.isalnum() or c in "_-" for c in key) and key.isascii():
        return key
    return json.dumps(key)


def _check_str(text: str, path: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        raise UserError(
            f"{where}: {path or 'a string'} holds a lone surrogate \\u{code:04x}, which is not Unicode text"
        ) from None


def as_finite(value: object) -> float | None:
    """``value`` as a finite float, or None when it is not a number or no float can hold it
    (``10**400`` overflows, where a plain ``float()`` would raise)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


class _NotFinite(ValueError):
    pass


def _no_constant(name: str) -> float:
    raise _NotFinite(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(f"number {text[:20]}{'...' if len(text) > 20 else ''} is too large")
    return value


def int_limit_text(exc: ValueError) -> str:
    """The one-line text for the ValueError a decoder raises on a huge integer."""
    if "digits" in str(exc):
        return "an integer with more than 4,300 digits (no count or setting is that large)"
    return f"unreadable JSON ({exc})"


def json_reason(exc: json.JSONDecodeError) -> str:
    """The decoder's reason and column in words: ``Expecting ',' delimiter at column 8``,
    ``Unterminated string starting at column 3130`` (its message ends in "at" there)."""
    return f"{exc.msg.removesuffix(' at')} at column {exc.colno}"
