"""Streaming the records of one log file, each with the line it starts on.

Records are read one at a time (a JSONL line, or one element of a JSON array such as the
``chat.json`` a Claude Code Stop hook writes), so a file is never held in memory whole. Every
problem is a :class:`~prefixbench.simulator.errors.UserError` naming ``file:line``: a line that is
not JSON, binary content, text that is not UTF-8 (a file with a UTF-16 byte-order mark is read as
its UTF-8 copy). One exception, asked for by the caller: the
*torn tail* of a JSON-lines log an agent is still appending to (its last line, after whole
records, cut short with no newline yet) ends the records instead, and its line is reported; so
does a *zero-filled tail* (zero bytes that end the file after whole records: room the file system
gave the file that no write filled), and a JSON document that such zeros end is read up to them
where it is whole there (refused for being cut short where it is not). A
JSON-lines line that holds whole objects one after another (``{...}{...}``, a newline lost
between two records) is read as those records, each on that line.
"""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import json
import lzma
import os
import re
import shlex
import stat
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.jsonlines import (
    COMPRESSION_MAGIC, ZerosAfterDocument, ZerosAfterRecord, ZeroTail, breaks_off, cut_by_zeros, first_line_cut, is_zstd, may_nest_too_deep, record_before_zeros, too_deep, torn_tail, zero_kind, zero_tail,
)
from prefixbench.workloads.logs.reading import MAX_DEPTH, cut_character, json_reason
from prefixbench.workloads.logs.trace import packed_offsets

if TYPE_CHECKING:
    from prefixbench.workloads.logs.trace import LoggedMessage

_CHUNK = 1 << 20
#: The read buffer of a file read whole (:func:`iter_records`' ``buffering``): most of what 1 MB
#: saves over the default 8 KB (measured on 150 MB of transcripts), and not 1 MB held while a
#: small file is read.
READ_BUFFER = 1 << 16
_DECODER = json.JSONDecoder()
#: A UTF-8 byte-order mark (editors on Windows write one); skipped, never an error.
_BOM = b"\xef\xbb\xbf"

#: Called with the bytes read so far (monotonic, across all files of an audit).
ProgressFn = Callable[[int], None]


class CommentedJson(UserError):
    """A file that goes wrong at a ``//`` or ``/*`` comment, or (a pretty-printed document) at a
    trailing comma: JSON with comments (JSONC: an editor's or a build tool's configuration,
    ``tsconfig.json``, ``.vscode/tasks.json``), which no agent writes as its log."""


class NestedArray(UserError):
    """A JSON array whose elements are arrays, where records were expected: well-formed JSON of
    no log format (Cline's ``context_history.json``, a serialized map, keeps its context edits so,
    beside the task's ``ui_messages.json``)."""


def _refused(path: Path | str, line_no: int, exc: ValueError | RecursionError) -> UserError:
    """A line whose JSON parses but which this reader will not hold: nested too deep for the
    interpreter, or a number too long to convert (its message cut at a word, not inside one)."""
    if isinstance(exc, RecursionError):
        why = "nested too deep"
    else:
        why = str(exc) or "a value it cannot convert"
        if len(why) > 80:
            why = why[:80].rsplit(" ", 1)[0] + " ..."
    return UserError(f"{path}:{line_no}: JSON this reader refuses ({why})")


def _not_json(path: Path, line: int, what: str, text: str, exc: json.JSONDecodeError, *, document: bool = False) -> UserError:
    """The error of a value that does not decode: ``what`` (``malformed JSON``...), the decoder's
    reason and column, and whether it is JSONC (:class:`CommentedJson`): a comment, or in a
    pretty-printed ``document`` a comma before a closing bracket."""
    if text.startswith(("//", "/*"), exc.pos):
        return CommentedJson(f"{path}:{line}: {what} (a comment at column {exc.colno}: JSON with comments is no log format)")
    if document and text[exc.pos:exc.pos + 1] in ("]", "}") and text[:exc.pos].rstrip().endswith(","):
        return CommentedJson(f"{path}:{line}: {what} (a trailing comma before column {exc.colno}: JSON with comments and "
                             "trailing commas is no log format)")
    return UserError(f"{path}:{line}: {what} ({json_reason(exc)})")


class Record(msgspec.Struct, frozen=True):
    """One JSON value of a log file and the 1-based line it starts on.

    ``plain``: read by ``json.loads``, not vouched for by msgspec, so its strings may hold a lone
    surrogate (valid JSON, not Unicode); a reader that renders them checks them first
    (:func:`prefixbench.workloads.logs.formats.common.refuse_lone_surrogates`).
    """

    line: int
    value: object
    plain: bool = False
    #: Its place, from 1, among records run together on its line (``{...}{...}``); 0 when it is
    #: alone on its line.
    part: int = 0
    #: An element of a top-level JSON array that shares its line with another element (a
    #: one-line array, Cline's ``ui_messages.json`` written without newlines): its index + 1 in
    #: the array; 0 otherwise.
    element: int = 0
    #: Where its line starts in the file, in bytes, when the file is read as it lies on disk (a
    #: regular file of JSON lines, not compressed, not UTF-16): :func:`values_at` reads it again
    #: there. -1 otherwise.
    offset: int = -1

    @property
    def path(self) -> str:
        """Where it is on its line when it shares the line: ``record[1]`` for the second of
        records run together (0-based, as the audit's other paths), ``[57]`` for an array's
        element (its index in the array); ``""`` when it is alone."""
        if self.element:
            return f"[{self.element - 1}]"
        return f"record[{self.part - 1}]" if self.part else ""


def iter_records(
    path: Path, progress: ProgressFn | None = None, torn: list[int] | None = None, *, buffering: int = -1
) -> Iterator[Record]:
    """Stream the JSON values of a JSONL file or of a JSON array file.

    ``buffering``: the read buffer's bytes (-1: the default, enough for a look at the first
    records; a whole file read line by line goes faster with ``READ_BUFFER``, since a long line
    comes through a small buffer piecewise).

    ``torn``: when given, a JSON-lines file's last line that follows whole records, has no
    newline and breaks off (the JSON ends before the value does: a live log being written) is
    not an error: its line number is appended here and the records end before it. So is a last
    line of zero bytes (:func:`~prefixbench.workloads.logs.jsonlines.zero_tail`), appended as a
    :class:`~prefixbench.workloads.logs.jsonlines.ZeroTail` (a
    :class:`~prefixbench.workloads.logs.jsonlines.CutZeroTail` where a record cut short comes
    before the zeros); a whole last record that zeros follow is read, its line appended as a
    :class:`~prefixbench.workloads.logs.jsonlines.ZerosAfterRecord`; a whole JSON document (one
    value, an array) that zeros follow is read, the line they start on appended as a
    :class:`~prefixbench.workloads.logs.jsonlines.ZerosAfterDocument` (not given: refused with
    :func:`zeros_end_document`'s way out).

    Raises:
        UserError: ``file:line`` for binary content, text that is not UTF-8, or a record that is
            not valid JSON (a truncated line included, but for the torn tail above).
    """
    try:
        raw = path.open("rb", buffering=buffering)
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with raw:
        try:
            kind = _compression(path, raw)
        except OSError as exc:  # a read error (/proc/self/mem)
            raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
        handle = raw if kind is None else _COMPRESSED[kind](raw)
        try:
            # (progress counts the bytes of the file, as its size does: a compressed file's read so far)
            on_disk = kind is None and _regular(raw)
            yield from _iter_handle(path, handle, progress, torn, at=None if kind is None else raw.tell, on_disk=on_disk)
        except OSError as exc:  # a read error (/proc/self/mem), or a corrupt compressed header
            if kind is not None:
                raise UserError(f"{path}: {kind}-compressed data cut short or corrupt ({exc.strerror or exc})") from None
            raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
        except (EOFError, zlib.error, lzma.LZMAError) as exc:  # cut short, or corrupt, compressed data
            raise UserError(f"{path}: {kind}-compressed data cut short or corrupt ({exc})") from None


#: The compressed bytes of a zstd log read at a time, and fed to the decompressor at a time: what
#: one feed holds decompressed is bounded by the feed, not the read (a block of one repeated byte
#: is 4 bytes for 128 KiB, so 256 bytes hold at most 8 MiB; a 16 KiB feed could hold 512 MiB).
_ZSTD_READ = 1 << 14
_ZSTD_FEED = 256


class _ZstdStream(io.RawIOBase):
    """The decompressed bytes of a Zstandard file (``.jsonl.zst``: Codex keeps its archived
    rollouts so), read a chunk at a time with the ``zstandard`` package, frame after frame; data
    that ends inside a frame, or that is not Zstandard, is an ``OSError`` (the caller's "cut short
    or corrupt" line). Seeking back starts the decompression again, as ``gzip`` does."""

    def __init__(self, raw) -> None:
        super().__init__()
        try:  # imported here: only a zstd log needs it, and start-up time is a feature
            import zstandard
        except ImportError:  # an install that left the dependency out
            path = Path(raw.name)
            raise UserError(f"{path}: zstd-compressed: reading it needs the zstandard package (pip install zstandard), "
                            f"or decompress it first (zstd -d {path.name})") from None
        self._raw, self._zstd = raw, zstandard
        self._start()

    def _start(self) -> None:
        self._raw.seek(0)
        self._frame = self._zstd.ZstdDecompressor().decompressobj()
        self._in_frame = False  # bytes of the current frame fed and its end not reached
        self._out, self._at = b"", 0  # decompressed and not read yet: self._out[self._at:]
        self._read, self._fed = b"", 0  # read from the file and not fed yet: self._read[self._fed:]
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def readinto(self, buffer) -> int:
        while self._at == len(self._out):
            if self._fed == len(self._read):
                self._read, self._fed = self._raw.read(_ZSTD_READ), 0
                if not self._read:
                    if self._in_frame:
                        raise OSError("the data ends inside a zstd frame")
                    return 0
            self._out, self._at = b"", 0
            piece = self._read[self._fed : self._fed + _ZSTD_FEED]
            self._fed += len(piece)
            self._feed(piece)
        size = min(len(buffer), len(self._out) - self._at)
        buffer[:size] = self._out[self._at : self._at + size]
        self._at += size
        self._pos += size
        return size

    def _feed(self, data: bytes) -> None:
        while data:
            try:
                self._out += self._frame.decompress(data)
            except self._zstd.ZstdError as exc:
                raise OSError(str(exc)) from None
            if not self._frame.eof:
                self._in_frame = True
                return
            data, self._in_frame = self._frame.unused_data, False  # the next frame, if any
            self._frame = self._zstd.ZstdDecompressor().decompressobj()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_CUR:
            offset += self._pos
        elif whence != io.SEEK_SET:
            raise io.UnsupportedOperation("a zstd stream seeks from its start or where it is")
        if offset < self._pos:
            self._start()
        while self._pos < offset and self.read(min(offset - self._pos, 1 << 16)):
            pass
        return self._pos


#: Compressed logs read as they are: each format's reader (its magic bytes: jsonlines.COMPRESSION_MAGIC
#: and jsonlines.is_zstd).
_COMPRESSED: dict[str, Callable[[object], object]] = {
    "gzip": lambda raw: gzip.GzipFile(fileobj=raw, mode="rb"),  # type: ignore[arg-type]
    "bzip2": lambda raw: bz2.BZ2File(raw),  # type: ignore[arg-type]
    "xz": lambda raw: lzma.LZMAFile(raw),  # type: ignore[arg-type]
    "zstd": lambda raw: io.BufferedReader(_ZstdStream(raw), 1 << 16),
}
#: File names (ends) of compressed logs a folder walk picks up.
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")


def _compression(path: Path, handle) -> str | None:
    """The compression a file's first bytes name (None: plain text)."""
    head = handle.read(6)
    handle.seek(0)
    if is_zstd(head):
        return "zstd"
    return next((name for magic, name in COMPRESSION_MAGIC if head.startswith(magic)), None)


def read_whole(path: Path, limit: int) -> bytes:
    """The first ``limit`` + 1 bytes of a log read whole, not as records (aider's Markdown chat
    history), decompressed where its first bytes name a compression, as a record log's are (one
    byte past ``limit``: the caller tells a log longer than it).

    Raises:
        UserError: a file that cannot be read, or compressed data cut short or corrupt.
    """
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with raw:
        kind = None
        try:
            kind = _compression(path, raw)
            if kind is None:
                return raw.read(limit + 1)
            with _COMPRESSED[kind](raw) as handle:  # type: ignore[attr-defined]
                return handle.read(limit + 1)
        except OSError as exc:  # a read error, or a corrupt compressed header
            if kind is not None:
                raise UserError(f"{path}: {kind}-compressed data cut short or corrupt ({exc.strerror or exc})") from None
            raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
        except (EOFError, zlib.error, lzma.LZMAError) as exc:  # cut short, or corrupt, compressed data
            raise UserError(f"{path}: {kind}-compressed data cut short or corrupt ({exc})") from None


#: UTF-16 byte-order marks (little and big endian): Windows PowerShell 5's ``>`` and ``Out-File``
#: write a command's output, or a copied log, as UTF-16 with one.
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
#: What the UTF-8 copy of a UTF-16 file cut at an odd byte ends with: the first byte of a
#: three-byte UTF-8 sequence, so the copy stops inside a character where the file does.
_CUT_LEAD = b"\xe2"
#: How the copy's reading says it ends inside a character, and how that is said of the file.
_UTF8_CUT, _UTF16_CUT = "the file ends inside a UTF-8 character", "the file ends inside a UTF-16 character"


#: The share of a UTF-16 file's bytes its conversion to UTF-8 tells the progress; the reading of
#: the copy tells the rest. Measured on a 4 MB transcript: decoding and writing the copy took 7% of
#: the time the copy's records took to read.
_COPY_SHARE = 0.1


def _utf8_copy(
    path: Path, handle, progress: ProgressFn | None = None, at: Callable[[], int] | None = None,
) -> tuple[tempfile.SpooledTemporaryFile, bool]:
    """The UTF-8 text of a UTF-16 file with a byte-order mark, in a temporary file (held in memory
    up to 64 MiB), decoded a chunk at a time, ``progress`` told :data:`_COPY_SHARE` of the bytes
    read after each (the file's bytes ``at`` tells where the file is compressed); text that is not
    UTF-16 is one line naming it, and so is a temporary folder with no room (not the log's fault:
    its line names the folder). The flag: the file ends in an odd count of zero bytes (NUL), the
    last one alone written to the copy as one more zero (see :func:`_utf16_zeros`)."""
    at = at or handle.tell
    copy = tempfile.SpooledTemporaryFile(max_size=64 << 20)
    decoder = codecs.getincrementaldecoder("utf-16")()
    last = ""  # the last character decoded
    try:
        while chunk := handle.read(_CHUNK):
            text = decoder.decode(chunk)
            _write_copy(path, copy, text)
            last = text[-1:] or last
            if progress is not None:
                progress(int(at() * _COPY_SHARE))
        pending = decoder.getstate()[0]
        try:
            _write_copy(path, copy, decoder.decode(b"", final=True))
        except UnicodeDecodeError as exc:
            if exc.reason not in ("truncated data", "unexpected end of data"):
                raise
            if pending == b"\x00" and last == "\x00":
                # Zero bytes to the end, an odd count of them: zero-filled room ends where it
                # ends, not on a character's edge. A zero byte alone after text stays a cut
                # character (the first byte of a UTF-16BE "A" is one).
                copy.write(b"\x00")
                copy.seek(0)
                return copy, True
            # An odd byte at the end, or the first half of a surrogate pair: the file stops
            # inside a character, as a UTF-8 log cut short does. The copy ends inside one too, so its reading treats the last line the same way
            # (a torn tail after whole records skipped, else the line named: _UTF16_CUT).
            copy.write(_CUT_LEAD)
    except UnicodeDecodeError as exc:
        copy.close()
        raise UserError(f"{path}: starts with a UTF-16 byte-order mark but is not UTF-16 text ({exc.reason})") from None
    except BaseException:  # a read error, a full temporary folder, Ctrl-C: the copy goes now
        copy.close()
        raise
    copy.seek(0)
    return copy, False


def _utf16_zeros(line: int, odd: bool) -> int:
    """A ``torn`` list's line as read from a UTF-16 file's UTF-8 copy, said of the file: two zero
    bytes of the file are one in the copy, so a document's zeros are counted again (less the odd
    last one the copy was given, see :func:`_utf8_copy`)."""
    if isinstance(line, ZerosAfterDocument):
        return ZerosAfterDocument(line, 2 * line.zeros - odd, line.at)
    return line


def _write_copy(path: Path, copy, text: str) -> None:
    """``text`` onto the UTF-8 copy of the UTF-16 file ``path``."""
    try:
        copy.write(text.encode("utf-8", "surrogatepass"))
    except OSError as exc:  # (a read error of the log stays "cannot read" in iter_records)
        raise UserError(f"{path}: cannot write its UTF-8 copy (the file is UTF-16) to a temporary file in "
                        f"{tempfile.gettempdir()}: {exc.strerror or exc}; set TMPDIR to a folder with room") from None


#: How a Git LFS pointer file begins (its first line, the spec's version).
_LFS_POINTER = b"version https://git-lfs.github.com/spec/"
#: The first four bytes of an SQLite write-ahead log (big-endian magic 0x377f0682 or 0x377f0683,
#: by the checksum's byte order).
_WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")


def _wal_refusal(path: Path) -> str:
    """What an SQLite write-ahead log given as a log is, naming its database and whether it is
    beside it (a committed home can hold the ``-wal`` file without the database)."""
    if not path.name.endswith("-wal") or path.name == "-wal":
        return "an SQLite write-ahead log, not a log: audit the database it belongs to, with this file beside it"
    name = path.name[:-len("-wal")]
    if (path.parent / name).is_file():
        return f"an SQLite write-ahead log, not a log: audit its database {name} beside it (which is read with this file)"
    return f"an SQLite write-ahead log, not a log: its database {name}, which the audit reads (with this file beside it), is not in this folder"


def _zeros_after_lines(head: bytes) -> bool:
    """Whether the zero bytes among a file's first bytes all come after a newline there, after
    the last one, and the lines before them are UTF-8 text: the start of a zero-filled tail after
    whole lines (see ``zero_tail``), which the line reader tells from binary data inside the log
    (refused there with its line). A binary file's first bytes (an image's header) are no text."""
    if record_before_zeros(head) is not None:
        return True  # (a file's one record, whole, zero bytes after it: read as a longer file's last)
    text = head.rstrip(b"\x00")
    if b"\n" not in text and b"\x00" not in text and text.removeprefix(_BOM).lstrip()[:1] in (b"{", b"["):
        # One line of a JSON document, zero bytes to the end of these bytes: the readers tell a
        # document cut short there (zeros to the file's end) from binary data (text after them).
        try:
            text[:_complete_utf8(text)].decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True
    cut = head.rfind(b"\n")
    if cut < 0 or b"\x00" in head[:cut]:
        return False
    try:
        head[:cut].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _regular(raw) -> bool:
    """Whether an open file is a regular file (one a line can be read again from, by its offset)."""
    try:
        return stat.S_ISREG(os.fstat(raw.fileno()).st_mode)
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


def _iter_handle(
    path: Path, handle, progress: ProgressFn | None, torn: list[int] | None = None, *, at: Callable[[], int] | None = None,
    on_disk: bool = False,
) -> Iterator[Record]:
    """The records after the open: a JSON array or JSON lines, by the first character (a UTF-16
    file with a byte-order mark read as its UTF-8 copy). ``at``: the bytes of the file read so
    far, where ``handle`` reads it decompressed (progress tells those, as the file's size counts).
    ``on_disk``: ``handle`` reads a regular file as it lies on disk, so each JSON line's record
    says where the line starts (:attr:`Record.offset`)."""
    head = handle.read(4096)
    if head.startswith(_UTF16_BOMS):
        handle.seek(0)
        # The conversion reads the whole file: told a share of its bytes, the copy's reading the
        # rest (a compressed file's bytes read, not its decompressed ones: those reached its size
        # during the conversion, and the bar sat full while the copy was read).
        copy, odd = _utf8_copy(path, handle, progress, at)
        with copy:
            said = len(torn) if torn is not None else 0
            try:
                yield from _iter_handle(path, copy, _copy_progress(progress, (at or handle.tell)(), copy), torn)
            except UserError as exc:  # the copy ends inside a character only where the file does
                if not str(exc).endswith(_UTF8_CUT):
                    raise
                raise UserError(str(exc).removesuffix(_UTF8_CUT) + _UTF16_CUT) from None
            if torn is not None:
                torn[said:] = [_utf16_zeros(line, odd) for line in torn[said:]]
        return
    if at is not None and progress is not None:
        told, file_at = progress, at
        progress = lambda _done: told(file_at())  # noqa: E731
    if head.startswith(b"SQLite format 3\x00"):
        # OpenCode's, Zed's, Copilot CLI's and OpenClaw's databases are read before this (their
        # formats' detect_file): another one, such as the Go-era opencode's .opencode/opencode.db
        # or Goose's sessions.db (token totals, no per-call usage), is not a log the audit reads.
        # Imported here: the formats package imports this module.
        if at is not None:
            # Compressed: the databases' readers open the file as it lies on disk (SQLite reads
            # pages from it), so its tables were never looked at; saying it has none would be wrong.
            raise UserError(f"{path}:1: a compressed SQLite database: the audit reads an agent's database as it lies on disk; "
                            "decompress it and give the database file")
        from prefixbench.workloads.logs.formats.copilot_store import store_without_usage
        from prefixbench.workloads.logs.formats.totals_only import database_of

        copilot = store_without_usage(path)
        if copilot is not None:
            raise UserError(f"{path}:1: {copilot}")
        kind = database_of(path)
        why = f" ({kind.refusal()})" if kind is not None else ""
        raise UserError(f"{path}:1: a SQLite database with none of the tables the audit reads (OpenCode's, Zed's threads, a GitHub Copilot CLI store's usage events, an OpenClaw agent's transcript events): not a log the audit reads{why}")
    if head.startswith(b"PAR1"):
        # A Parquet file (its magic bytes) that reached the text reader: LangSmith's reader
        # (detect_file) takes only one on disk with the runs' columns.
        if at is not None:
            raise UserError(f"{path}:1: a compressed Parquet file: the audit reads LangSmith's Parquet runs as they lie on disk; "
                            "decompress it and give the .parquet file")
        raise UserError(f"{path}:1: a Parquet file without LangSmith's run columns (id, run_type): not a log the audit reads")
    if head.startswith(_LFS_POINTER):
        # A Git LFS pointer (git-lfs/git-lfs docs/spec.md: "version https://git-lfs.github.com/spec/v1",
        # then the content's oid and size): what a clone without LFS holds in place of the file.
        raise UserError(f"{path}:1: a Git LFS pointer, not the log: its content is in the repository's LFS storage; "
                        "fetch it (git lfs pull) and audit the file then")
    if head[:4] in _WAL_MAGIC:
        # An SQLite write-ahead log (its header's magic number; sqlite.org/fileformat2.html, "The
        # WAL File Format"): pages waiting to be written into the database of the same name less
        # "-wal". Not a log by itself: the database is, read with this file beside it.
        raise UserError(f"{path}:1: {_wal_refusal(path)}")
    if b"\x00" in head and not _zeros_after_lines(head):
        raise UserError(f"{path}:1: binary file, not a text log")
    bom = head.startswith(_BOM)
    handle.seek(len(_BOM) if bom else 0)
    start = len(_BOM) if bom else 0
    if head.startswith(_EXPORT_BANNER, start) and b"\n" in head[start:]:
        # `opencode export ID > file` with the banner OpenCode prints before the JSON captured too
        # (`2>&1`, or a version that printed it to stdout): the document starts on line 2.
        start = head.index(b"\n", start) + 1
        handle.seek(start)
        error = UserError(f"{path}:2: not a JSON document after opencode export's 'Exporting session' line")
        yield from _iter_values(path, handle, _Zeros(path, torn, on_disk), progress, error, first_line=2)
        return
    first = head[start:].lstrip()[:1]
    if first == b"[":
        yield from _iter_array(path, handle, _Zeros(path, torn, on_disk), progress)
        return
    try:
        yield from _iter_lines(path, handle, progress, torn, start if on_disk else None)
    except _FirstLineError as exc:
        # Not JSON lines: the first value spans lines (a pretty-printed object).
        handle.seek(start)
        yield from _iter_values(path, handle, _Zeros(path, torn, on_disk), progress, exc.error, exc.unfinished)


def _copy_progress(progress: ProgressFn | None, read: int, copy) -> ProgressFn | None:
    """``progress`` told, for the bytes of the UTF-8 copy read so far, the file's: from the
    conversion's share of its ``read`` bytes up to all of them at the copy's end."""
    if progress is None:
        return None
    size = max(copy.seek(0, 2), 1)
    copy.seek(0)
    first = int(read * _COPY_SHARE)
    return lambda done: progress(first + (read - first) * done // size)


#: The line ``opencode export`` prints before the session's JSON (to stderr in the versions
#: seen; a file that captured both starts with it).
_EXPORT_BANNER = b"Exporting session: "


class _FirstLineError(Exception):
    """The first record of a file is not a whole JSON value on its line; ``unfinished``: the line
    is fine as far as it goes and ends where a pretty-printed value goes on (``{``, ``[``, ``,``
    or ``:``)."""

    def __init__(self, error: UserError, unfinished: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.unfinished = unfinished


def _decode(path: Path, line_no: int, raw: bytes) -> str:
    """A JSON line as text; a line with no newline is the file's last, and bytes that stop inside
    a character there are a file cut short, said so (not a byte that is not UTF-8)."""
    if b"\x00" in raw:
        raise UserError(f"{path}:{line_no}: binary data, not a text log")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not raw.endswith(b"\n") and exc.end == len(raw) and exc.reason == "unexpected end of data":
            raise cut_character(path, line_no) from None
        raise UserError(f"{path}:{line_no}: not UTF-8 text") from None


_DECODE = msgspec.json.Decoder().decode
#: Every byte but ``[`` and ``{``: deleted from a line, what is left are its opening brackets.
_NOT_OPENING = bytes(sorted(set(range(256)) - set(b"[{")))


def _loads(text: str) -> tuple[object, bool]:
    """``json.loads(text)``: the same value or the same error, read by msgspec when it vouches
    for the line. What msgspec accepts ``json.loads`` accepts with an equal value; what it refuses
    (NaN, a lone surrogate, a number beyond a float, malformed JSON) and what nests deeper than
    ``too_deep`` allows is read by ``json.loads``, which accepts it or words the error. The flag
    says which read it (True: ``json.loads``, see :class:`Record`)."""
    try:
        value = _DECODE(text)
    except (ValueError, RecursionError):  # msgspec.DecodeError is a ValueError
        return json.loads(text), True
    if may_nest_too_deep(text) and too_deep(value):
        return json.loads(text), True
    return value, False


def _iter_lines(
    path: Path, handle, progress: ProgressFn | None, torn: list[int] | None = None, offset: int | None = None
) -> Iterator[Record]:
    """The records of JSON lines; ``offset``: where the first line starts in the file read as it
    lies on disk (each record is then told where its line starts), None for any other handle."""
    done = 0
    first = True
    decode = _DECODE
    at = -1 if offset is None else offset  # where the line starts (-1: not told)
    for line_no, raw in enumerate(handle, 1):
        start = at
        if offset is not None:
            at += len(raw)
        if progress is not None:
            done += len(raw)
            if line_no % 256 == 0:
                progress(done)
        # msgspec reads the UTF-8 bytes as they are (no str made first), refusing what the
        # decode below refuses (invalid UTF-8, a NUL byte anywhere: JSON has no place for one, so
        # a line it reads needs no search for it); a line it does not vouch for (blank, not JSON,
        # nested too deep) goes the way below, which reads it or words the error.
        try:
            value = decode(raw)
        except (ValueError, RecursionError):
            pass
        else:
            # may_nest_too_deep, inlined (a call a line), its two counts made in one pass.
            if len(raw.translate(None, _NOT_OPENING)) < MAX_DEPTH or not too_deep(value):
                first = False
                yield Record(line_no, value, False, 0, 0, start)
                continue
        try:
            text = _decode(path, line_no, raw).strip()
        except UserError:
            # Not UTF-8: a torn tail when the cut falls inside its last character. Zero bytes: a
            # zero-filled tail when they end the file after whole records.
            if torn is not None and not first and b"\x00" not in raw and torn_tail(raw):
                torn.append(line_no)
                return
            if torn is not None and not first and zero_tail(raw):
                torn.append(zero_kind(raw)(line_no))
                return
            if first and zero_tail(raw) and zero_kind(raw) is not ZeroTail:
                # The file's first line, cut short where zeros run to its end (a JSON-lines log's
                # first record, or a document written on one line): its own fault, said so as
                # replay and check --trace say it (a line, not taken for a document).
                raise first_line_cut(path, line_no, start + len(raw.rstrip(b"\x00")) if start >= 0 else -1) from None
            if torn is not None and (whole := record_before_zeros(raw)) is not None:
                # A whole last record, zero bytes after it on its line: the record read, the zeros
                # not (the file's only record too: a whole value is no binary data).
                try:
                    value, plain = _loads(whole.decode("utf-8").strip())
                except (ValueError, RecursionError) as exc:  # nested too deep: its own fault, not the zeros'
                    raise _refused(path, line_no, exc) from None
                yield Record(line_no, value, plain, 0, 0, start)
                torn.append(ZerosAfterRecord(line_no))
                return
            raise
        if not text:
            continue
        try:
            value, plain = _loads(text)
        except json.JSONDecodeError as exc:
            glued = _glued(text) if exc.msg == "Extra data" else None
            if glued is not None:
                first = False
                for part, value in enumerate(glued, 1):
                    yield Record(line_no, value, True, part)
                continue
            if torn is not None and not first and breaks_off(raw, text, exc):
                torn.append(line_no)
                return
            truncated = not raw.endswith(b"\n") or exc.msg.startswith(("Unterminated", "Expecting"))
            what = "truncated or malformed JSON" if truncated else "malformed JSON"
            if first and not text.startswith(("{", "[", "/")):
                # Not JSON from its first character (a README, a CSV, a shell log): no log at all.
                what = "not a JSON log: its first line is not JSON"
            error = _not_json(path, line_no, what, text, exc)
            if first and truncated and text.startswith("{"):
                raise _FirstLineError(error, exc.pos >= len(text) and text[-1] in "{[,:") from None
            raise error from None
        except (ValueError, RecursionError) as exc:  # a number too long to convert, nesting too deep
            raise _refused(path, line_no, exc) from None
        first = False
        yield Record(line_no, value, plain, 0, 0, start)
    if progress is not None:
        progress(done)


def values_at(path: str | Path, offsets: Iterable[int]) -> list[object]:
    """The records of ``path``'s JSON lines starting at ``offsets`` (:attr:`Record.offset`), read
    again as :func:`iter_records` read them (msgspec where it vouches for the line, else
    ``json.loads``). A line that no longer reads as one JSON value (the file changed since) is one
    line naming it."""
    values: list[object] = []
    try:
        with open(path, "rb") as handle:
            for offset in offsets:
                handle.seek(offset)
                raw = handle.readline()
                try:
                    value = _DECODE(raw)
                except (ValueError, RecursionError):
                    pass
                else:
                    if len(raw.translate(None, _NOT_OPENING)) < MAX_DEPTH or not too_deep(value):
                        values.append(value)
                        continue
                try:
                    values.append(_loads(raw.decode("utf-8").strip())[0])
                except (ValueError, RecursionError):  # (UnicodeDecodeError and JSONDecodeError are ValueErrors)
                    raise UserError(f"{path}: changed while it was audited (no JSON record at byte {offset} now)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read again ({exc.strerror or exc})") from None
    return values


def _glued(text: str) -> list[object] | None:
    """The objects of a line that holds two or more whole JSON objects one after another
    (``{...}{...}``: a writer dropped the newline between two records, as one committed pi
    session shows); None when the line is anything else, which stays an error."""
    values: list[object] = []
    pos = 0
    while pos < len(text):
        if text[pos] != "{":
            return None
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):  # malformed, a number too long, nesting too deep
            return None
        values.append(value)
        while pos < len(text) and text[pos] in " \t":
            pos += 1
    return values if len(values) > 1 else None


def _iter_values(
    path: Path, handle, zeros: _Zeros, progress: ProgressFn | None, first_error: UserError, unfinished: bool = False,
    first_line: int = 1,
) -> Iterator[Record]:
    """JSON values one after another, each free to span lines (one pretty-printed object, or
    several). A file whose first value does not decode is refused with ``first_error``, the
    error its first line has as JSON lines, unless that line is only ``unfinished`` (a
    pretty-printed object's first line) and the value goes wrong before the file ends: then with
    the error where it does (a comment in a JSONC file, a trailing comma). Nothing is read past
    the first bad character. Zero bytes that end the file end the text (see :class:`_Zeros`)."""
    text = ""
    line_no = first_line  # line of text[0]
    done = 0
    seen = False
    eof = False
    while True:
        pos = 0
        while True:
            while pos < len(text) and text[pos] in " \t\r\n":
                if text[pos] == "\n":
                    line_no += 1
                pos += 1
            if pos >= len(text):
                break
            try:
                value, end = _DECODER.raw_decode(text, pos)
            except json.JSONDecodeError as exc:
                cut = _cut_short(text, exc)
                if not eof and cut:
                    break  # need more text (a read may end inside a value, a word, a number)
                if cut and zeros.found:
                    raise zeros.cut() from None
                if not seen and not (unfinished and exc.pos < len(text.rstrip())):
                    raise first_error from None  # (a value cut short by the file's end: its first line)
                if not seen:
                    line = line_no + exc.lineno - 1 - text.count("\n", 0, pos)
                    raise _not_json(path, line, "malformed JSON", text, exc, document=True) from None
                raise UserError(f"{path}:{line_no}: truncated or malformed JSON ({exc.msg})") from None
            except (ValueError, RecursionError) as exc:
                raise _refused(path, line_no, exc) from None
            seen = True
            yield Record(line_no, value)
            line_no += text.count("\n", pos, end)
            pos = end
        text = text[pos:]
        if eof:
            zeros.whole()
            return
        # Read as much again as is pending, so a large value is decoded a bounded number of times.
        chunk, eof = _read_text(path, handle, zeros, line_no, max(_CHUNK, len(text)), text)
        done += len(chunk)
        if progress is not None:
            progress(done)
        text += chunk


def _read_text(path: Path, handle, zeros: _Zeros, line_no: int, size: int, pending: str = "") -> tuple[str, bool]:
    """The next ``size`` bytes of a file as text (to the end of a UTF-8 sequence they cut), and
    whether the file ended (where zero bytes end it: the text before them, see :class:`_Zeros`).
    ``pending``: the text read before them from ``line_no`` on (to name the line a file cut
    inside a character ends on)."""
    chunk = handle.read(size)
    for _ in range(3):
        if not chunk or _complete_utf8(chunk) == len(chunk):
            break
        more = handle.read(1)
        if not more:
            raise cut_character(path, line_no + pending.count("\n") + chunk.count(b"\n"))
        chunk += more
    ended = not chunk
    if b"\x00" in chunk:
        chunk = zeros.end(handle, chunk, line_no + pending.count("\n"))
        if _complete_utf8(chunk) < len(chunk):  # (the zeros start inside a character: the text is cut there)
            raise zeros.cut()
        ended = True
    try:
        return chunk.decode("utf-8"), ended
    except UnicodeDecodeError:
        raise UserError(f"{path}:{line_no}: not UTF-8 text") from None


#: What may follow a number's longest valid start where the text is cut inside the number
#: (``0.``, ``1e``, ``1.5e+``): a fraction or an exponent begun, no digit of it yet.
_NUMBER_CUT = frozenset({".", "e", "E", "e+", "e-", "E+", "E-"})
#: The words a JSON value can be (NaN and the infinities: Python's json reads them), any of
#: which a cut can leave begun (``n``, ``tr``, ``-``, ``-Inf``).
_WORDS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")


def _cut_short(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether ``exc``, the error decoding ``text``, is the text's end cutting a value short (not
    malformed JSON): the error is at the end (whitespace after it at most), or in a string that
    ends with the text, or the text from the error on is a begun token that text after it could
    finish (a word, ``-``, a number's fraction or exponent, a ``\\u`` escape's hex digits)."""
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated"):
        return True
    tail = text[exc.pos:]
    if exc.msg == "Expecting value":
        return any(word.startswith(tail) for word in _WORDS)
    if exc.msg.startswith("Expecting ',' delimiter"):
        return tail in _NUMBER_CUT and text[exc.pos - 1: exc.pos].isdigit()
    if exc.msg.startswith("Invalid \\uXXXX escape"):
        # (a lone high surrogate's escape is refused with the one after it: both may be begun)
        return re.fullmatch(r"u[0-9a-fA-F]{0,4}(?:\\(?:u[0-9a-fA-F]{0,3})?)?", tail) is not None
    return False


#: What a whole JSON document (one value, an array) that zero bytes end is refused with where its
#: reader has no warning to give (no ``torn`` list: a Cline task's api_conversation_history.json,
#: read beside its ui_messages.json): said as a JSON-lines log's zero-filled tail is (``ZERO_TAIL``).
ZEROS_END_DOCUMENT = ("the file ends in zero bytes (NUL) from here: room the file system gave the file that no write "
                      "filled (the machine stopped while the agent wrote it, or the file was copied then); a JSON document "
                      "is not read past them: remove them in a copy of its folder that keeps the file's name (a log "
                      "such as a Cline task's is known by its name and folder; a copy named otherwise is not): ")


def zeros_end_document(path: Path) -> str:
    """:data:`ZEROS_END_DOCUMENT` with the commands that cut the zeros off ``path`` in a copy of
    its folder, the name kept (``tr -d '\\000' < FILE > COPY`` alone made a file no longer
    known as, say, a Cline task's ``ui_messages.json``)."""
    folder, name = shlex.quote(str(path.parent)), shlex.quote(path.name)
    return (f"{ZEROS_END_DOCUMENT}cp -r {folder} COPY && tr -d '\\000' < {folder}/{name} > COPY/{name}, "
            "then audit COPY")


class _Zeros:
    """Zero bytes (NUL) that end a JSON document (one value, an array): room the file system gave
    the file that no write filled. The text before them is read as the whole file; a document whole
    there is read, with a warning (``torn`` given: its line appended as a
    :class:`~prefixbench.workloads.logs.jsonlines.ZerosAfterDocument`), or refused with the way
    out (:func:`zeros_end_document`) where no warning can be given; one cut short there is refused
    for being cut, at the line and byte the zeros start. Zeros with text after them are binary data."""

    def __init__(self, path: Path, torn: list[int] | None, exact: bool) -> None:
        self.path, self.torn = path, torn
        #: Whether the handle reads the file as it lies on disk (a byte there can be named).
        self.exact = exact
        self.found = False
        self.line = self.count = 0
        self.at = -1

    def end(self, handle, chunk: bytes, line_no: int) -> bytes:
        """``chunk`` (read from the line ``line_no`` on, up to where ``handle`` is) up to its first
        zero byte, where zero bytes alone follow to the end of the file (the rest of ``handle`` read
        to tell and to count them); else binary data at ``line_no``."""
        at = chunk.index(b"\x00")
        count = len(chunk) - at
        if chunk[at:].strip(b"\x00"):
            raise UserError(f"{self.path}:{line_no}: binary data, not a text log")
        start = handle.tell() - len(chunk) if self.exact else -1
        while more := handle.read(_CHUNK):
            if more.strip(b"\x00"):
                raise UserError(f"{self.path}:{line_no}: binary data, not a text log")
            count += len(more)
        self.found, self.count = True, count
        self.line = line_no + chunk.count(b"\n", 0, at)
        self.at = start + at if start >= 0 else -1
        return chunk[:at]

    def cut(self) -> UserError:
        """The refusal of a document that the zeros cut short: its own fault, where they start."""
        return cut_by_zeros(self.path, self.line, self.at)

    def whole(self) -> None:
        """The document before the zeros was read whole: said (``torn``), else refused with the way out."""
        if not self.found:
            return
        if self.torn is None:
            raise UserError(f"{self.path}:{self.line}: {zeros_end_document(self.path)}")
        self.torn.append(ZerosAfterDocument(self.line, self.count, self.at))


def _iter_array(path: Path, handle, zeros: _Zeros, progress: ProgressFn | None) -> Iterator[Record]:
    """Elements of a top-level JSON array, decoded one at a time from 1 MiB chunks; an element
    that starts on the line another starts on is told by its index (:attr:`Record.element`), so
    that the elements of a one-line array each have a place of their own."""
    held: Record | None = None  # the last element, yielded when the next one's line is known
    shared = False  # the held element's line holds an element before it
    index = 0
    for record in _iter_elements(path, handle, zeros, progress):
        if held is not None:
            if record.line == held.line or shared:
                yield replace(held, element=index)
            else:
                yield held
            shared = record.line == held.line
        held = record
        index += 1
    if held is not None:
        yield replace(held, element=index) if shared else held


def _iter_elements(path: Path, handle, zeros: _Zeros, progress: ProgressFn | None) -> Iterator[Record]:
    """Elements of a top-level JSON array, decoded one at a time from 1 MiB chunks; zero bytes
    that end the file end the array's text (see :class:`_Zeros`)."""
    buffer = ""
    line_no = 1  # line of buffer[0]
    done = 0
    started = ended = False
    eof = False
    pending = b""
    while True:
        pos = 0
        while True:
            # Skip whitespace and separators, counting lines.
            while pos < len(buffer) and buffer[pos] in " \t\r\n,[]":
                char = buffer[pos]
                if char == "\n":
                    line_no += 1
                elif char == "[":
                    if started:
                        raise NestedArray(f"{path}:{line_no}: nested array where a record was expected")
                    started = True
                elif char == "]":
                    ended = True
                pos += 1
            if pos >= len(buffer):
                break
            if ended:
                raise UserError(f"{path}:{line_no}: content after the end of the JSON array")
            try:
                value, end = _DECODER.raw_decode(buffer, pos)
            except json.JSONDecodeError as exc:
                if eof and zeros.found and _cut_short(buffer, exc):
                    raise zeros.cut() from None
                if eof:
                    raise UserError(f"{path}:{line_no}: truncated or malformed JSON array element") from None
                break  # need more text
            except (ValueError, RecursionError) as exc:
                raise _refused(path, line_no, exc) from None
            yield Record(line_no, value, True)  # read by json, never vouched for by msgspec
            line_no += buffer.count("\n", pos, end)
            pos = end
        buffer = buffer[pos:]
        if eof:
            break
        chunk = b"" if zeros.found else handle.read(_CHUNK)
        if not chunk:
            eof = True
            if pending:  # (the zeros start inside a character: the document is cut there)
                raise zeros.cut() if zeros.found else cut_character(path, line_no + buffer.count("\n"))
            if not buffer.strip():
                break
            continue
        done += len(chunk)
        if progress is not None:
            progress(done)
        chunk = pending + chunk
        if b"\x00" in chunk:
            chunk = zeros.end(handle, chunk, line_no + buffer.count("\n"))
        cut = _complete_utf8(chunk)
        pending = chunk[cut:]  # an incomplete UTF-8 sequence, kept for the next chunk
        try:
            buffer += chunk[:cut].decode("utf-8")
        except UnicodeDecodeError:
            raise UserError(f"{path}:{line_no}: not UTF-8 text") from None
    if started and not ended:
        if zeros.found:
            raise zeros.cut()
        raise UserError(f"{path}:{line_no}: truncated JSON array (no closing ])")
    zeros.whole()


def _complete_utf8(chunk: bytes) -> int:
    """Where ``chunk`` ends if its last UTF-8 sequence is incomplete (else its length): a last
    sequence with all the bytes its lead byte announces is complete (taking it for cut short made a
    reader that reads on to complete it stop inside the next character: CJK text, 3 bytes each)."""
    cut = len(chunk)
    while cut > 0 and cut > len(chunk) - 4 and (chunk[cut - 1] & 0xC0) == 0x80:
        cut -= 1
    if cut > 0 and chunk[cut - 1] >= 0xC0:
        lead = chunk[cut - 1]
        size = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        return len(chunk) if len(chunk) - (cut - 1) >= size else cut - 1
    return len(chunk)


class MessagePlaces:
    """A transcript reader's messages as a request keeps them (its ``messages``): where their
    lines start in ``path`` (:attr:`Record.offset`), their small records made only if the audit
    locates a break on them (``of_line``, the format's ``message_of_line``, from the line read
    again: making every message's record as the file was read was a quarter of the reading).
    Where a line cannot be read again so (a compressed file, a UTF-16 one, a JSON array, records
    run together on a line: no offset), the record is made as read, and so for every message
    after it in the file."""

    __slots__ = ("path", "of_line", "records_made", "same")

    def __init__(self, path: str, of_line: Callable[[object, str], LoggedMessage]) -> None:
        self.path = path
        self.of_line = of_line
        #: Whether a record was made here (every message before it is an offset, every one after a record).
        self.records_made = False
        #: Each message record made here, once: equal ones (a repeated tool result, the same short
        #: reply) are one object in every request's history (the trace holds them all to the end
        #: of the audit; this dict goes with the file).
        self.same: dict[LoggedMessage, LoggedMessage] = {}

    def lazy(self, record: Record) -> bool:
        """Whether ``record``'s message is kept as where its line starts (the record alone on a
        line read as it lies on disk, and no record made before it here)."""
        return record.offset >= 0 and not record.part and not self.records_made

    def made(self, message: LoggedMessage) -> LoggedMessage:
        """Keep ``message``, a record made as read (or the equal one made before)."""
        self.records_made = True
        return self.same.setdefault(message, message)

    def keep(self, record: Record) -> LoggedMessage | int:
        """``record``'s message as kept: where its line starts, or its record (``of_line``)."""
        if self.lazy(record):
            return record.offset
        return self.made(self.of_line(record.value, self.path))

    def messages(self, found: list[LoggedMessage | int]) -> tuple[LoggedMessage, ...] | bytes:
        """A request's messages as it keeps them: where their lines start (4 bytes each, 8 where one starts past 4 GiB:
        :func:`~prefixbench.workloads.logs.trace.packed_offsets`), or, once a
        record was made here, their records (the lines of any message placed before that read
        again now)."""
        if not found:
            return ()
        if not self.records_made:
            return packed_offsets(found)  # type: ignore[arg-type]
        if int not in map(type, found):
            return tuple(found)  # type: ignore[arg-type]  (every one a record made here: kept once each already)
        places = [m for m in found if type(m) is int]
        again = iter([self.of_line(value, self.path) for value in values_at(self.path, places)] if places else ())
        made = [next(again) if type(m) is int else m for m in found]
        return tuple(self.same.setdefault(m, m) for m in made)  # type: ignore[arg-type]
