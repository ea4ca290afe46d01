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

import msgspec
from msgspec.structs import astuple
from prefixbench.simulator.errors import UserError
from prefixbench.workloads.audit.core import AuditRow

#: Rows a batch (about 150 KB of msgpack, and as much of tuples while a batch is made).
BATCH = 256
_FIELDS = AuditRow.__struct_fields__
#: Fields whose equal values are shared when read back: texts many rows repeat (a file, a lane,
#: a model, a cause; the timestamp is each row's own), and the counts a row holds as the
#: reported int its prediction equals.
_TEXTS = frozenset(
    ("file", "lane", "lane_kind", "provider", "model", "cause", "evidence", "detail", "predicted_by", "inferred_cause",
     "server_reason", "loss_class", "location", "path")
)
_COUNTS = frozenset(
    ("reported_cache_read", "reported_cache_write", "reported_cache_write_1h", "reported_uncached", "reported_output",
     "predicted_cache_read", "predicted_cache_write", "predicted_uncached", "expected_cache_read", "lost_tokens")
)
#: Dollar fields: written as their exact text (msgspec's), one ``Decimal`` a distinct text when read back.
_DOLLARS = frozenset(("cost_usd", "lost_usd"))
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
                columns = list(zip(*map(astuple, rows[start:start + BATCH])))
                try:
                    frame = encode((False, columns))
                except UnicodeEncodeError:  # a lone surrogate a log held (escaped by the writers): as bytes
                    frame = encode((True, [[_as_bytes(v) for v in c] if n in _STRS else c for n, c in enumerate(columns)]))
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
        decode = msgspec.msgpack.Decoder().decode
        try:
            self._file.seek(0)
            while len(rows) < self.count:
                head = self._file.read(_LENGTH)
                frame = self._file.read(int.from_bytes(head, "little")) if len(head) == _LENGTH else b""
                if not frame:
                    raise OSError(f"the file ends after {len(rows):,} of {self.count:,} rows")
                as_bytes, columns = decode(frame)
                del frame
                if as_bytes:
                    columns = [[_as_text(v) for v in c] if n in _STRS else c for n, c in enumerate(columns)]
                for n in _SHARED:
                    column = columns[n]
                    columns[n] = list(map(shared.setdefault, column, column))
                for n in _DECIMALS:
                    column = columns[n]
                    for text in set(column).difference(dollars):
                        dollars[text] = Decimal(text)
                    columns[n] = list(map(dollars.__getitem__, column))
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
