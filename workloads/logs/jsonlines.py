"""Reading JSON Lines fast: streamed in binary, parsed with msgspec.

Both request-log importers read through here. Lines come off the file one at a time as bytes
(never the whole file, never decoded to ``str`` first), and :func:`decode` parses one with
msgspec, which reads UTF-8 bytes directly. Measured on the 67 MB, 200-line peer workload
(``bench/peers/run.py``): ``json.loads`` of every line 82 ms, ``orjson.loads`` 48 ms,
``msgspec`` 56 ms generic, and 37 ms when the messages are left as raw JSON (what
:mod:`prefixbench.workloads.logs.chat_completions` does, so a message resent on every later
request is parsed once; see docs/performance.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.reading import MAX_DEPTH, check_readable, decode_line, loads

_DECODER = msgspec.json.Decoder()
#: Read buffer: a request line is often hundreds of KB; a small buffer makes readline copy it piecewise.
_BUFFER = 2**20
#: A UTF-8 byte-order mark, skipped at the start of a file (some editors write one).
_BOM = b"\xef\xbb\xbf"


#: Compressed files by their first bytes: the magic to the compression's name (``audit`` reads
#: them as they are, :mod:`prefixbench.workloads.logs.records`; a request log is read plain).
COMPRESSION_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"))
#: A Zstandard file's first bytes (``audit`` reads it with the ``zstandard`` package; a request
#: log is read plain: ``zstd -d`` decompresses it).
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def is_zstd(head: bytes) -> bool:
    """Whether a file's first bytes start Zstandard data: a frame (:data:`ZSTD_MAGIC`), or a
    skippable frame (magic ``0x184D2A50`` to ``0x184D2A5F``, little endian), which ``zstd -d``
    passes over: ``pzstd`` starts its output with one."""
    return head.startswith(ZSTD_MAGIC) or (len(head) >= 4 and head[0] & 0xF0 == 0x50 and head[1:4] == b"\x2a\x4d\x18")
#: The decompressing command of each, for the error that asks for a plain file.
_DECOMPRESS = {"gzip": "gunzip", "bzip2": "bunzip2", "xz": "unxz"}


class BadJson(ValueError):
    """A line that is not JSON (the message says why, the reader adds file:line)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"invalid JSON ({reason})")
        self.reason = reason


def decode(data: bytes | str | msgspec.Raw) -> object:
    """Any JSON value from one line (``BadJson`` when it is not JSON).

    msgspec refuses by itself what Python objects could not faithfully hold or what the
    renderer could not send: NaN and Infinity, numbers beyond a float, very long integers,
    invalid UTF-8, lone UTF-16 surrogates; nesting too deep for the interpreter is refused
    here. The importers then read such a line the plain way (:func:`read_json`), which says
    exactly what is wrong.
    """
    try:
        return _DECODER.decode(data)
    except msgspec.DecodeError as exc:  # ValidationError (a number out of range) included
        raise BadJson(str(exc).removeprefix("JSON is malformed: ")) from None
    except RecursionError:
        raise BadJson("nested too deep") from None


#: The types of the JSON values that hold others.
_CONTAINERS = frozenset({dict, list})


def too_deep(value: object, depth: int = 0) -> bool:
    """Whether containers nest deeper than the plain reading accepts (``MAX_DEPTH``), counting
    ``depth`` levels above ``value``. Walks containers only, without recursion: msgspec has
    already refused what strings could hold wrongly (lone surrogates, invalid UTF-8)."""
    # Level by level: each container's children are gathered in C (list.extend), and only
    # the containers among them go on to the next level.
    level = [value] if isinstance(value, (dict, list)) else []
    while level:
        if depth >= MAX_DEPTH:
            return True
        children: list[object] = []
        for item in level:
            values = item.values() if isinstance(item, dict) else item  # type: ignore[union-attr]
            # The types of a container's values are gathered in C: a long list of numbers (a
            # block-hash trace's ids) is passed over without a Python-level step per element.
            if not _CONTAINERS.isdisjoint(set(map(type, values))):
                children.extend(child for child in values if isinstance(child, (dict, list)))
        level = children
        depth += 1
    return False


def may_nest_too_deep(text: bytes | str) -> bool:
    """False when ``text`` cannot hold containers nested beyond ``MAX_DEPTH``: it has fewer
    ``[`` and ``{`` than that, counted in C (strings holding brackets only make it cautious).
    Saves walking the value of every line of a log."""
    if isinstance(text, str):
        return text.count("[") + text.count("{") >= MAX_DEPTH
    return text.count(b"[") + text.count(b"{") >= MAX_DEPTH


def json_object(data: bytes | str, where: str, subject: str = "") -> dict:
    """``data`` (a whole document: an archive's member, a database's blob) as one JSON object;
    else one line naming ``where``, then ``subject`` (what the data is, where ``where`` does not
    say), and why not: not JSON, nested too deep, or no object."""
    said = f"{subject} " if subject else ""
    try:
        value = decode(data)
    except BadJson as exc:
        raise UserError(f"{where}: {said + 'is ' if subject else ''}{exc}") from None
    if may_nest_too_deep(data) and too_deep(value):
        raise UserError(f"{where}: {said}nests too deep")
    if not isinstance(value, dict):
        raise UserError(f"{where}: {said + 'is ' if subject else ''}not a JSON object")
    return value


def read_json(data: bytes, path: Path, number: int) -> object:
    """One line of ``path`` as JSON: msgspec when it vouches for it, else the plain reading
    (:func:`prefixbench.workloads.logs.reading.loads`), which words the UserError exactly as every
    importer does, or accepts what only it can hold (an integer beyond 64 bits)."""
    try:
        value = decode(data)
    except BadJson:
        value = None
    else:
        if not may_nest_too_deep(data) or not too_deep(value):
            return value
    return loads(decode_line(data, path, number), f"{path}:{number}")


def iter_lines(
    path: Path, what: str = "", torn: list[int] | None = None, progress: Callable[[int], None] | None = None
) -> Iterator[tuple[int, bytes]]:
    """``(line number, bytes)`` of each non-blank line, streamed (UserError if unreadable).

    Lines end at ``\\n`` only (a JSON string may hold a raw U+2028, which ``str.splitlines``
    would cut); ``what`` names the file in the error (``" capture"``: "cannot read capture").

    ``torn``: when given, a last line that is a torn tail (:func:`torn_tail`: a log an agent is
    still writing) or a zero-filled one (:func:`zero_tail`, appended as a :class:`ZeroTail` or a
    :class:`CutZeroTail`) is not yielded; its number is appended here. A whole last record that
    zero bytes follow (:func:`record_before_zeros`, the file's only record too) is yielded, its
    number appended as a :class:`ZerosAfterRecord`. Any other line, cut or not, is
    yielded for the caller to read (and refuse with its ``file:line``).

    ``progress``: told the bytes read so far every 256 lines (the command's progress line).
    """
    check_readable(path)  # a folder or a device (/dev/zero never ends) is refused first
    try:
        handle = path.open("rb", buffering=_BUFFER)
    except OSError as exc:
        raise UserError(f"{path}: cannot read{what} ({exc.strerror or exc})") from None
    with handle:
        try:
            head = handle.peek(6)[:6]
            kind = next((name for magic, name in COMPRESSION_MAGIC if head.startswith(magic)), None)
            if kind is not None:
                raise UserError(f"{path}: {kind}-compressed: this command reads a plain JSON-lines file; decompress it "
                                f"first with {_DECOMPRESS[kind]} (prefixbench audit reads it as it is)")
            if is_zstd(head):
                raise UserError(f"{path}: zstd-compressed: this command reads a plain JSON-lines file; decompress it first "
                                "with zstd -d (prefixbench audit reads it as it is)")
            seen = False
            done = 0
            for number, line in enumerate(handle, 1):
                if progress is not None:
                    done += len(line)
                    if number % 256 == 0:
                        progress(done)
                if number == 1 and line.startswith(_BOM):
                    line = line[len(_BOM) :]
                # isspace() stops at the first non-blank byte: no copy of a long line.
                if line and not line.isspace():
                    # Only the file's last line can lack its newline.
                    if torn is not None and seen and not line.endswith(b"\n") and (torn_tail(line) or zero_tail(line)):
                        torn.append(number if torn_tail(line) else zero_kind(line)(number))
                        return
                    # (also a file's only record: the zeros after a whole value tell it from binary data)
                    if torn is not None and (record := record_before_zeros(line)) is not None:
                        yield number, record  # (a whole last record, zero bytes after it: the record read, the zeros not)
                        torn.append(ZerosAfterRecord(number))
                        return
                    if not seen and zero_tail(line) and zero_kind(line) is not ZeroTail:
                        # The first record, cut short where zeros run to the end: its own fault, as audit says.
                        raise first_line_cut(path, number, handle.tell() - (len(line) - len(line.rstrip(b"\x00"))))
                    seen = True
                    yield number, line
        except OSError as exc:
            raise UserError(f"{path}: cannot read{what} ({exc.strerror or exc})") from None


#: The skip reason of a JSON-lines log's torn last line, in every command that reads one
#: (``audit`` lists it under skipped; each command warns with :func:`torn_note`).
TORN_TAIL = "the last line breaks off with no newline (the agent still writing it?): not read"
#: The skip reason of a JSON-lines log whose last line is zero bytes (:func:`zero_tail`), said as
#: :data:`TORN_TAIL` is.
ZERO_TAIL = ("the file ends in zero bytes (NUL) after its last whole line: room the file system gave the file that "
             "no write filled (the machine stopped while the agent wrote it, or the file was copied then): not read")


#: The skip reason of a JSON-lines log whose last line is a record cut short that zero bytes end
#: (:func:`zero_tail`): that line was a record, partly written, and is not read.
ZERO_CUT_TAIL = ("a record cut short, then zero bytes (NUL) to the end of the file: room the file system gave the file "
                 "that no write filled (the machine stopped while the agent wrote it, or the file was copied then): "
                 "the partly written record is not read")
#: What every command says of a JSON-lines log whose last record is whole and zero bytes follow it
#: (:func:`record_before_zeros`): the record is read (counted as any other), the zeros are not; no
#: record is skipped, so this is a warning and a note of the file, not a skip reason.
ZEROS_AFTER_RECORD = ("the record on this line is read; zero bytes (NUL) follow it to the end of the file (its "
                      "newline never written): room the file system gave the file that no write filled (the machine "
                      "stopped while the agent wrote it, or the file was copied then): the zeros are not read")
#: How every note of a file read up to zero bytes that end it ends (:data:`ZEROS_AFTER_RECORD`, and
#: :func:`zeros_after_document`'s words): a warning of each command, not a skip.
ZEROS_NOT_READ = ZEROS_AFTER_RECORD[ZEROS_AFTER_RECORD.index(": room the file system"):]


def zeros_after_document(zeros: int, at: int) -> str:
    """What every command says of a JSON document (one object, one array) that is whole and that
    ``zeros`` zero bytes follow to the end of the file, from byte ``at`` (-1: a place not told in
    bytes, a compressed or UTF-16 file): the document is read, the zeros are not."""
    where = f" at byte {at}" if at >= 0 else ""
    return (f"the JSON document is read whole, up to the zero bytes (NUL) that start on this line{where}: "
            f"{zeros:,} of them, to the end of the file") + ZEROS_NOT_READ


class ZeroTail(int):
    """A ``torn`` list's line number of a zero-filled tail (an int, as a torn line's is; its
    reason :data:`ZERO_TAIL`, see :func:`tail_reason`): zero bytes alone after the last whole line."""


class CutZeroTail(ZeroTail):
    """A ``torn`` list's line number of a record cut short that zero bytes end (reason
    :data:`ZERO_CUT_TAIL`): the line held part of a record, which is not read."""


class ZerosAfterRecord(int):
    """A ``torn`` list's line number of a whole last record that zero bytes follow (said with
    :data:`ZEROS_AFTER_RECORD`): the record was read, only the zeros were not, so it is no skip
    (:func:`is_skip` is False)."""


class ZerosAfterDocument(int):
    """A ``torn`` list's line number (where the zeros start) of a whole JSON document that zero
    bytes follow to the end of the file (said with :func:`zeros_after_document`): the document was
    read, only the zeros were not, so it is no skip. ``zeros``: how many; ``at``: the byte they
    start at (-1: not told)."""

    zeros: int
    at: int

    def __new__(cls, line: int, zeros: int, at: int = -1) -> ZerosAfterDocument:
        marker = super().__new__(cls, line)
        marker.zeros, marker.at = zeros, at
        return marker


def zero_kind(raw: bytes) -> type[ZeroTail]:
    """The marker of a :func:`zero_tail` line: :class:`ZeroTail` for zero bytes alone (blanks
    before them at most), :class:`CutZeroTail` for a record cut short before them."""
    return ZeroTail if not raw.rstrip(b"\x00").strip() else CutZeroTail


def tail_reason(line: int) -> str:
    """What is said of a ``torn`` list's line: :data:`ZEROS_AFTER_RECORD`, :func:`zeros_after_document`, :data:`ZERO_CUT_TAIL` or
    :data:`ZERO_TAIL` by its marker, else :data:`TORN_TAIL`."""
    if isinstance(line, ZerosAfterRecord):
        return ZEROS_AFTER_RECORD
    if isinstance(line, ZerosAfterDocument):
        return zeros_after_document(line.zeros, line.at)
    if isinstance(line, CutZeroTail):
        return ZERO_CUT_TAIL
    return ZERO_TAIL if isinstance(line, ZeroTail) else TORN_TAIL


def cut_by_zeros(path: object, line: int, at: int, what: str = "the JSON document", whole: str = "document") -> UserError:
    """The refusal of ``what`` (a JSON document) cut short where zero bytes start (on ``line``, at
    byte ``at``; -1: not told) and run to the end of the file: its own fault, not the zeros'."""
    byte = f" at byte {at}" if at >= 0 else ""
    return UserError(f"{path}:{line}: {what} is cut short{byte}, where zero bytes (NUL) run to the end of the file: room "
                     "the file system gave the file that no write filled (the machine stopped while the agent wrote it, "
                     f"or the file was copied then); the part written is no whole {whole}")


def first_line_cut(path: object, line: int, at: int) -> UserError:
    """:func:`cut_by_zeros` of a file's first line (no record before it) that zero bytes cut short:
    a JSON-lines log's first record, or a document written on one line; every command says so."""
    return cut_by_zeros(path, line, at, "the JSON on the file's first line", "JSON value")


def is_skip(line: int) -> bool:
    """Whether a ``torn`` list's line is a record not read (a skip of the file's summary): all
    but a :class:`ZerosAfterRecord` or a :class:`ZerosAfterDocument`, whose record was read."""
    return not isinstance(line, (ZerosAfterRecord, ZerosAfterDocument))


#: The reasons a tail not read is skipped with, each warned of (:func:`torn_note`) by every command.
TAIL_REASONS = (TORN_TAIL, ZERO_TAIL, ZERO_CUT_TAIL)


def torn_note(file: object, line: int, reason: str = TORN_TAIL) -> str:
    """What every command says of a tail it did not read: ``FILE:LINE: <reason>`` (a torn
    tail's :data:`TORN_TAIL`, a zero-filled tail's :data:`ZERO_TAIL`)."""
    return f"{file}:{int(line)}: {reason}"


def zero_tail(raw: bytes) -> bool:
    """Whether ``raw``, a JSON-lines file's last line that follows whole records, is a
    *zero-filled tail*: no newline, and zero bytes (NUL) alone, or a torn tail (:func:`torn_tail`)
    that zero bytes end. A file's length can run past what was written to it: a crash or power
    loss while the agent appends leaves the end of the file as zeros (a Codex rollout of 2026-06,
    3,772 of them after its 133rd line). JSON has no place for a NUL, so no record is lost."""
    if raw.endswith((b"\n", b"\r")) or not raw.endswith(b"\x00"):
        return False
    rest = raw.rstrip(b"\x00")
    return not rest.strip() or (b"\x00" not in rest and torn_tail(rest))


def record_before_zeros(raw: bytes) -> bytes | None:
    """The record of ``raw``, a JSON-lines file's last line that follows whole records, where it
    is one whole JSON value that zero bytes (NUL) follow to the end of the file, no newline
    between (the writer's last record was whole, its newline and what came after never written):
    the bytes before the zeros, to read as the record; None for any other line (a line cut short
    before its zeros is :func:`zero_tail`'s). A value nested too deep to parse is returned too:
    the caller's reading refuses it for that, its own fault."""
    if raw.endswith((b"\n", b"\r")) or not raw.endswith(b"\x00"):
        return None
    rest = raw.rstrip(b"\x00")
    if not rest.strip() or b"\x00" in rest:
        return None
    try:
        json.loads(rest.decode("utf-8"))
    except RecursionError:
        # Nested too deep to parse: whole or cut, that is its own fault, which the caller's
        # reading of it says (taken for binary data, the zeros were blamed).
        return rest
    except ValueError:  # (not UTF-8, not JSON, a number too long)
        return None
    return rest


def torn_tail(raw: bytes) -> bool:
    """Whether ``raw``, a JSON-lines file's last line that follows whole records, is a *torn
    tail*: no newline, and its JSON breaks off (:func:`breaks_off`), also inside a character
    (a writer's buffer ends between the bytes of a UTF-8 sequence as readily as between
    characters). A line that reads as JSON, or is not UTF-8 before its last character (refused
    as such), is not one."""
    if raw.endswith((b"\n", b"\r")):
        return False
    try:
        decode(raw)
    except BadJson:
        pass
    else:
        return False
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError as exc:
        if exc.end != len(raw) or exc.reason != "unexpected end of data":
            return False
        try:
            text = raw[: exc.start].decode("utf-8").strip()
        except UnicodeDecodeError:
            return False
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return breaks_off(raw, text, exc)
    except (ValueError, RecursionError):
        return False
    return False


def breaks_off(raw: bytes, text: str, exc: json.JSONDecodeError) -> bool:
    """Whether a line is a torn tail: the file's last line (no newline), an object whose JSON
    stops before its value ends: an unterminated string, or the error within the last few
    characters (a cut inside a ``\\uXXXX`` escape, a number or a ``true`` is found there)."""
    if raw.endswith((b"\n", b"\r")) or not text.startswith("{"):
        return False
    return exc.pos >= len(text) - _TORN_SLACK or exc.msg.startswith("Unterminated string")


#: How far before the end of a torn line its JSON error may be (a cut ``\\uXXX`` escape: 5).
_TORN_SLACK = 6
