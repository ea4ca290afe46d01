"""The audit's rows kept on disk while the command works out what to change.

The re-simulations of what to change (:mod:`.advice`, ``--what-if``) read two small things of
the rows (the fixes their recoverable misses point at, and the misses put down to a changed
system prompt), not the rows: ``audit`` writes the rows to an anonymous temporary file
(:class:`RowSpill`) before them and reads them back, in the same order, once they are done
and the trace is freed, so the rows and the re-simulations are never in memory together.

The file is made by :func:`tempfile.TemporaryFile` in the system's temporary folder (``TMPDIR``),
never the current one, and has no name once made: closed (on every exit, an error or Ctrl-C
included) or with the process gone, nothing is left. Rows go in batches, each a column of every
field (msgpack; a batch holding a lone surrogate a log had, its texts as UTF-8 bytes): a string, a count or a dollar figure the rows held as one object is one object
again when read back (equal values are shared), so the rows take no more memory than before.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
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
     "server_reason", "loss_class", "location", "path")
)
_COUNTS = frozenset(
    ("reported_cache_read", "reported_cache_write", "reported_uncached", "predicted_cache_read", "predicted_cache_write",
     "predicted_uncached", "expected_cache_read")
)
#: Dollar fields: written as their exact text (msgspec's); read back, a request's cost is a
#: ``Decimal`` of its own (as it was), a loss one ``Decimal`` a distinct text (most lose nothing).
_DOLLARS = frozenset(("cost_usd", "lost_usd"))
_COST = _FIELDS.index("cost_usd")
_LOST = _FIELDS.index("lost_usd")
#: A batch: written as texts as bytes (a lone surrogate), its size, its columns of one value (given as that value), its columns.
_Frame = tuple[bool, int, list[int], tuple[tuple(list[Decimal | None] | Decimal | None if n == _COST else Any for n in range(len(_FIELDS)))]]
_SHARED = tuple(n for n, name in enumerate(_FIELDS) if name in _TEXTS or name in _COUNTS)
_DECIMALS = tuple(n for n, name in enumerate(_FIELDS) if name in _DOLLARS)
_STRS = frozenset(n for n, name in enumerate(_FIELDS) if name in _TEXTS or name == "timestamp")
_LENGTH = 8


class RowSpill:
    """``rows`` written to an anonymous temporary file (see the module doc); :meth:`load` reads
    them back, :meth:`close` (or leaving a ``with``) lets the file go.

    Raises:
        UserError: the temporary folder has no room (or cannot be written): one line naming it.
    """

    def __init__(self, rows: Sequence[AuditRow]) -> None:
        self.count = len(rows)
        self._file = None
        try:
            self._file = tempfile.TemporaryFile(prefix="prefixbench-rows-")
            encode = msgspec.msgpack.Encoder().encode
            for start in range(0, len(rows), BATCH):
                columns: list = list(zip(*map(astuple, rows[start:start + BATCH])))
                size = len(columns[0]) if columns else 0
                # A column of one value (a file's, a lane's, a model's; nothing lost) is that value.
                same = [n for n in _SHARED if columns[n].count(columns[n][0]) == size]
                same += [n for n in _DECIMALS if len(set(map(id, columns[n]))) == 1]  # (0 == 0.00: by object)
                for n in same:
                    columns[n] = columns[n][0]
                try:
                    frame = encode((False, size, same, columns))
                except UnicodeEncodeError:  # a lone surrogate a log held (escaped by the writers): as bytes
                    texts = [_as_bytes(c) if n in same else [_as_bytes(v) for v in c] if n in _STRS else c
                             for n, c in enumerate(columns)]
                    frame = encode((True, size, same, texts))
                self._file.write(len(frame).to_bytes(_LENGTH, "little"))
                self._file.write(frame)
            self._file.flush()
        except OSError as exc:
            self.close()
            raise UserError(_cannot("write", exc)) from None

    def load(self) -> tuple[AuditRow, ...]:
        """The rows, as they were given, in their order."""
        assert self._file is not None, "the spilled rows were closed"
        rows: list[AuditRow] = []
        shared: dict = {}
        dollars: dict[str | None, Decimal | None] = {None: None}
        decode = msgspec.msgpack.Decoder(_Frame).decode
        try:
            self._file.seek(0)
            while len(rows) < self.count:
                head = self._file.read(_LENGTH)
                frame = self._file.read(int.from_bytes(head, "little")) if len(head) == _LENGTH else b""
                if not frame:
                    raise OSError(f"the file ends after {len(rows):,} of {self.count:,} rows")
                as_bytes, size, same, columns = decode(frame)
                columns = list(columns)
                del frame
                if as_bytes:
                    columns = [_as_text(c) if n in same else [_as_text(v) for v in c] if n in _STRS else c
                               for n, c in enumerate(columns)]
                for n in same:
                    value = columns[n]
                    if n == _LOST:  # (not among the shared: a Decimal 0 is equal to 0.00, and to int 0)
                        value = dollars[value] if value in dollars else dollars.setdefault(value, Decimal(value))
                    elif n != _COST:
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
                rows.extend(map(AuditRow, *columns))
                del columns
        except OSError as exc:
            raise UserError(_cannot("read", exc)) from None
        return tuple(rows)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> RowSpill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _as_bytes(value: object) -> object:
    return value.encode("utf-8", "surrogatepass") if type(value) is str else value


def _as_text(value: object) -> object:
    return value.decode("utf-8", "surrogatepass") if type(value) is bytes else value


def _cannot(what: str, exc: OSError) -> str:
    return (f"cannot {what} the audit's rows in a temporary file in {tempfile.gettempdir()} (held there while what to "
            f"change is worked out): {exc.strerror or exc}; set TMPDIR to a folder with room")
