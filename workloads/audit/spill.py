"""The audit's rows kept on disk from the audit's pass until the writers.

The pass makes its rows in send order across files, and every output lists them file by file:
``audit`` gives the pass a :class:`BucketSpill`, which keeps each file's rows in a bucket of its
own in an anonymous temporary file; the summaries take the buckets back a file at a time, in
line order, and write the rows to the same file in that order (:meth:`RowSpill.append`). The
re-simulations of what to change (:mod:`.advice`, ``--what-if``) read two small things of the
rows (the fixes their recoverable misses point at, and the misses put down to a changed system
prompt), read from the file a batch at a time; the rows come back whole (:meth:`RowSpill.load`)
once those are done and the trace is freed. So no more than a file's rows are in memory with the
trace, and the rows and the re-simulations never are.

The file is made by :func:`tempfile.TemporaryFile` in the system's temporary folder (``TMPDIR``),
never the current one, and has no name once made: closed (on every exit, an error or Ctrl-C
included) or with the process gone, nothing is left. Rows go in batches, each a column of every
field (msgpack; a batch holding a lone surrogate a log had, its texts as UTF-8 bytes): a string, a count or a dollar figure the rows held as one object is one object
again when read back (equal values are shared), so the rows take no more memory than before.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

import msgspec
from msgspec.structs import astuple
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import AuditRow

#: Rows a batch (about 150 KB of msgpack, and as much of tuples while a batch is made).
BATCH = 256
_FIELDS = AuditRow.__struct_fields__
#: Fields whose equal values are shared when read back: texts many rows repeat (a file, a lane,
#: a model, a cause; the timestamp is each row's own), and the counts a row holds as the
#: reported int its prediction equals (the output, the 1 h write and the lost tokens are a
#: row's own, or a small int Python shares anyway).
_TEXTS = frozenset(
    ("file", "lane", "lane_kind", "provider", "model", "cause", "evidence", "detail", "predicted_by", "inferred_cause",
     "server_reason", "loss_class", "location", "path", "secondary_cause", "secondary_loss_class", "service")
)
_COUNTS = frozenset(
    ("reported_cache_read", "reported_cache_write", "reported_uncached", "predicted_cache_read", "predicted_cache_write",
     "predicted_uncached", "expected_cache_read")
)
#: Dollar fields: written as their exact text (msgspec's); read back, a request's cost is a
#: ``Decimal`` of its own (as it was), a loss one ``Decimal`` a distinct text (most lose nothing).
#: (A shared miss's second part, ``secondary_lost_usd``, is read back as a ``Decimal`` of its own, as a cost.)
_DOLLARS = frozenset(("cost_usd", "lost_usd", "secondary_lost_usd"))
_COST = _FIELDS.index("cost_usd")
_LOST = _FIELDS.index("lost_usd")
_CAUSE = _FIELDS.index("cause")
_OWN_DECIMALS = (_COST, _FIELDS.index("secondary_lost_usd"))
#: A batch: written as texts as bytes (a lone surrogate), its size, its columns of one value (given as that value), its columns.
_Frame = tuple[bool, int, list[int], tuple[tuple(list[Decimal | None] | Decimal | None if n in _OWN_DECIMALS else Any
                                                 for n in range(len(_FIELDS)))]]
_SHARED = tuple(n for n, name in enumerate(_FIELDS) if name in _TEXTS or name in _COUNTS)
_DECIMALS = tuple(n for n, name in enumerate(_FIELDS) if name in _DOLLARS)
_STRS = frozenset(n for n, name in enumerate(_FIELDS) if name in _TEXTS or name == "timestamp")
_LENGTH = 8


class RowSpill:
    """``rows`` written to an anonymous temporary file (see the module doc); :meth:`load` reads
    them back, :meth:`close` (or leaving a ``with``) lets the file go. Rows may also be added one
    by one (:meth:`append`) and read back a batch at a time (:meth:`batches`).

    Raises:
        UserError: the temporary folder has no room (or cannot be written): one line naming it.
    """

    def __init__(self, rows: Sequence[AuditRow] = ()) -> None:
        self.count = 0
        self._file = None
        self._pending: list[AuditRow] = []
        self._end = 0  # where the next frame goes
        self._order: list[int] = []  # where each batch of the rows in their order starts
        self._encode = msgspec.msgpack.Encoder().encode
        try:
            self._file = tempfile.TemporaryFile(prefix="prefixbench-rows-")
        except OSError as exc:
            raise UserError(_cannot("write", exc)) from None
        for start in range(0, len(rows), BATCH):
            self._order.append(self._write(rows[start:start + BATCH]))
        self.count = len(rows)

    def append(self, row: AuditRow) -> None:
        """``row`` after those written (a batch at a time: rows made one by one are never all
        in memory)."""
        self._pending.append(row)
        self.count += 1
        if len(self._pending) >= BATCH:
            self._order.append(self._write(self._pending))
            self._pending.clear()

    def pack(self, rows: Sequence[AuditRow]) -> tuple[int, list[bytes]]:
        """``rows`` as :meth:`extend` writes them: their count and their batches (made by a
        worker of ``audit --jobs``, which writes nothing to the file)."""
        return len(rows), [_frame(self._encode, rows[start:start + BATCH]) for start in range(0, len(rows), BATCH)]

    def extend(self, packed: tuple[int, list[bytes]]) -> None:
        """The rows :meth:`pack` made after those written."""
        if self._pending:
            self._order.append(self._write(self._pending))
            self._pending.clear()
        count, frames = packed
        for frame in frames:
            self._order.append(self._write_frame(frame))
        self.count += count

    def _write(self, rows: Sequence[AuditRow]) -> int:
        """Write ``rows`` as one frame; returns where it starts."""
        return self._write_frame(_frame(self._encode, rows))

    def _write_frame(self, frame: bytes) -> int:
        """Write one frame; returns where it starts."""
        assert self._file is not None, "the spilled rows were closed"
        try:
            self._file.write(len(frame).to_bytes(_LENGTH, "little"))
            self._file.write(frame)
        except OSError as exc:
            self.close()
            raise UserError(_cannot("write", exc)) from None
        at = self._end
        self._end += _LENGTH + len(frame)
        return at

    def _frames(self, starts: Iterable[int], shared: dict, dollars: dict, misses: bool = False) -> Iterator[list[AuditRow]]:
        """The rows of the frames at ``starts``, a frame at a time (``misses``: those with a cause only)."""
        assert self._file is not None, "the spilled rows were closed"
        starts = list(starts)
        if not starts:
            return
        decode = msgspec.msgpack.Decoder(_Frame).decode
        try:
            self._file.flush()
            for at in starts:
                self._file.seek(at)
                head = self._file.read(_LENGTH)
                frame = self._file.read(int.from_bytes(head, "little")) if len(head) == _LENGTH else b""
                if not frame:
                    raise OSError(f"the file ends before the batch at byte {at:,} of {self._end:,}")
                rows = _rows(decode(frame), shared, dollars, misses)
                del frame
                self._file.seek(self._end)  # (rows may be written while these are read)
                yield rows
        except OSError as exc:
            raise UserError(_cannot("read", exc)) from None

    def batches(self) -> Iterator[list[AuditRow]]:
        """The rows in their order, a batch at a time (equal values shared as :meth:`load` shares them)."""
        if self._pending:
            self._order.append(self._write(self._pending))
            self._pending.clear()
        yield from self._frames(list(self._order), {}, {None: None})

    def misses(self) -> Iterator[list[AuditRow]]:
        """The rows with a cause (``cause`` not None) in their order, a batch at a time: what the
        re-simulations of what to change read of the rows (:func:`~.advice.resimulation_targets`),
        without a row made again for every hit."""
        if self._pending:
            self._order.append(self._write(self._pending))
            self._pending.clear()
        yield from self._frames(list(self._order), {}, {None: None}, misses=True)

    def load(self) -> tuple[AuditRow, ...]:
        """The rows, as they were given, in their order."""
        rows: list[AuditRow] = []
        for batch in self.batches():
            rows.extend(batch)
        return tuple(rows)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> RowSpill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class BucketSpill(RowSpill):
    """Rows put in numbered buckets (:meth:`add`) and read back a bucket at a time (:meth:`take`),
    in the order each bucket was given them: the audit's pass makes its rows in send order across
    files and the writers list them file by file, so each file's rows wait in a bucket of their own.
    A bucket's rows go to the file a batch at a time, and every bucket's once ``PENDING`` rows wait
    in all (files sent at the same time fill their batches together)."""

    #: Rows waiting in all the buckets' unwritten batches at most.
    PENDING = 4 * BATCH

    def __init__(self) -> None:
        super().__init__()
        self._buckets: dict[int, list[AuditRow]] = {}
        self._starts: dict[int, list[int]] = {}
        self._waiting = 0

    def add(self, bucket: int, row: AuditRow) -> None:
        rows = self._buckets.setdefault(bucket, [])
        rows.append(row)
        self._waiting += 1
        if len(rows) >= BATCH:
            self._flush(bucket)
        elif self._waiting >= self.PENDING:
            for name in list(self._buckets):
                self._flush(name)

    def _flush(self, bucket: int) -> None:
        rows = self._buckets.pop(bucket)
        self._waiting -= len(rows)
        self._starts.setdefault(bucket, []).append(self._write(rows))

    def buckets(self) -> list[int]:
        """The buckets holding rows."""
        return list(self._starts.keys() | self._buckets.keys())

    def empty(self) -> BucketSpill:
        """An empty one, in a temporary file of its own (where a part of ``audit --jobs`` puts
        its rows: a forked worker writes to no file its parent writes to)."""
        return BucketSpill()

    def take(self, bucket: int) -> list[AuditRow]:
        """The rows of ``bucket`` in the order they were added (and the bucket emptied)."""
        rows: list[AuditRow] = []
        for batch in self._frames(self._starts.pop(bucket, ()), {}, {None: None}):
            rows.extend(batch)
        waiting = self._buckets.pop(bucket, [])
        self._waiting -= len(waiting)
        rows.extend(waiting)
        return rows


def _frame(encode, rows: Sequence[AuditRow]) -> bytes:
    """``rows`` as one batch: a column of each field."""
    columns: list = list(zip(*map(astuple, rows)))
    size = len(columns[0]) if columns else 0
    # A column of one value (a file's, a lane's, a model's; nothing lost) is that value.
    same = [n for n in _SHARED if columns[n].count(columns[n][0]) == size]
    same += [n for n in _DECIMALS if len(set(map(id, columns[n]))) == 1]  # (0 == 0.00: by object)
    for n in same:
        columns[n] = columns[n][0]
    try:
        return encode((False, size, same, columns))
    except UnicodeEncodeError:  # a lone surrogate a log held (escaped by the writers): as bytes
        texts = [_as_bytes(c) if n in same else [_as_bytes(v) for v in c] if n in _STRS else c
                 for n, c in enumerate(columns)]
        return encode((True, size, same, texts))


def _rows(decoded: _Frame, shared: dict, dollars: dict, misses: bool = False) -> list[AuditRow]:
    """A batch's rows again, equal texts and counts one object through ``shared``, equal dollar
    texts one ``Decimal`` through ``dollars`` (``misses``: only those with a cause)."""
    as_bytes, size, same, columns = decoded
    columns = list(columns)
    if misses:
        causes = columns[_CAUSE]
        kept = ([] if causes is None else list(range(size))) if _CAUSE in same else [k for k, c in enumerate(causes) if c is not None]
        if not kept:
            return []
        if len(kept) < size:
            columns = [c if n in same else [c[k] for k in kept] for n, c in enumerate(columns)]
            size = len(kept)
    if as_bytes:
        columns = [_as_text(c) if n in same else [_as_text(v) for v in c] if n in _STRS else c
                   for n, c in enumerate(columns)]
    for n in same:
        value = columns[n]
        if n == _LOST:  # (not among the shared: a Decimal 0 is equal to 0.00, and to int 0)
            value = dollars[value] if value in dollars else dollars.setdefault(value, Decimal(value))
        elif n not in _OWN_DECIMALS:
            value = shared.setdefault(value, value)
        columns[n] = [value] * size
    for n in _SHARED:
        if n not in same:
            column = columns[n]
            columns[n] = list(map(shared.setdefault, column, column))
    if _LOST not in same:
        column = columns[_LOST]
        for text in set(column).difference(dollars):
            dollars[text] = Decimal(text)
        columns[_LOST] = list(map(dollars.__getitem__, column))
    return list(map(AuditRow, *columns))


def _as_bytes(value: object) -> object:
    return value.encode("utf-8", "surrogatepass") if type(value) is str else value


def _as_text(value: object) -> object:
    return value.decode("utf-8", "surrogatepass") if type(value) is bytes else value


def _cannot(what: str, exc: OSError) -> str:
    return (f"cannot {what} the audit's rows in a temporary file in {tempfile.gettempdir()} (held there while the "
            f"audit runs): {exc.strerror or exc}; set TMPDIR to a folder with room")
