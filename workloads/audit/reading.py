"""Reading an audit's log files in parallel, with the same result as reading them one by one.

Files are read one after another in file order by default
(:func:`prefixbench.workloads.audit.core.load_trace`; but for :func:`answers_first`: an older
Codex fork's rollout is read after its source's, whichever sorts first). Given a ``map_files`` (``audit --jobs N``
or ``--scheduler``: the command line binds ``workloads/runs/execute.py``'s ``map_runs``; the
audit never imports ``runs/``), each file is read on its own in a worker instead, largest first,
and the results are put back together in file order here.

One thing ties a file's reading to the files before it: the request ids (Claude Code), running
totals (Codex) and calls (Gemini CLI, Qwen Code) an earlier file already counted, which a resumed or forked session's
copy of them skips (:class:`~prefixbench.workloads.logs.formats.base.ImportContext`). A worker
reads its file with none counted and returns the keys it counted (and the Codex calls an
unmarked fork copy asked about). A file none of whose keys an earlier file counted (and none of
whose questions an earlier file answers) reads the same either way, and its worker's result is taken; any other
file, and any file whose worker met an error, is read again here with what the earlier files
counted, as the one-by-one reading would. So the trace (and every report made from it) is the
same for every ``--jobs`` and scheduler, errors included.

    worker:  file ──> requests, summary, keys counted (fresh context)
    here:    in file order: keys seen before? ──no──> take it, add its keys
                                              └─yes─> read it again with the keys seen

When :func:`answers_first` changes the order, the files are read again in the new one, but
only those whose reading it can change: see :class:`Book` (the end of this module).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats import detect_format, import_file, resolve
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.records import ProgressFn
from prefixbench.workloads.logs.trace import FileSummary, TraceRequest, plain


class FileTask(msgspec.Struct, frozen=True):
    """One log file for a worker: its path and the ``--input`` format (``auto``: detected);
    ``held``: its requests are sent back as the audit holds them (see
    :func:`~prefixbench.workloads.audit.core.load_trace`), so the whole requests of every file
    are never sent back, nor held together while the results are put in file order."""

    path: str
    fmt: str
    held: bool = False


class FileRead(msgspec.Struct, frozen=True):
    """What a worker read of one file with nothing counted before it (or the error it met)."""

    requests: list[TraceRequest] = []
    summary: FileSummary | None = None
    #: The keys the file counted (:class:`ImportContext`'s Codex totals and counted ids).
    codex_totals: frozenset[str] = frozenset()
    counted_ids: frozenset[str | tuple[str, str]] = frozenset()
    #: The Gemini CLI / Qwen Code calls the file counted, to their chain nodes.
    gemini_calls: dict[tuple[str, str], str] = {}
    #: The Kimi CLI calls the file counted (by message_id), to their chain nodes.
    kimi_calls: dict[str, str] = {}
    #: The pi calls the file counted (by the message's own fields), to their chain nodes.
    pi_calls: dict[str, str] = {}
    #: The Inspect AI samples the file counted (by their identity), to the file.
    inspect_samples: dict[str, str] = {}
    #: The Codex calls the file counted (chain nodes), and those it asked whether an earlier file counted.
    codex_calls: frozenset[str] = frozenset()
    codex_asked: frozenset[str] = frozenset()
    #: The UserError's line, when reading failed (the file is read again in file order).
    error: str | None = None


#: ``map_files(read_log_file, tasks)``: ``(index, read_log_file(tasks[index]))`` for every task,
#: as each finishes, in any order.
FileMap = Callable[[Callable[[FileTask], FileRead], Sequence[FileTask]], Iterable[tuple[int, FileRead]]]


def read_log_file(task: FileTask) -> FileRead:
    """One file read on its own, in a worker (see the module doc); a UserError is returned."""
    path = Path(task.path)
    ctx = ImportContext()
    try:
        named = resolve(task.fmt)
        requests, summary = import_file(path, named or detect_format(path), ctx)
    except UserError as exc:
        return FileRead(error=str(exc))
    if task.held:
        requests = [plain(r, usage=False) for r in requests]
    return FileRead(requests, summary, frozenset(ctx.codex_totals), frozenset(ctx.counted_ids), dict(ctx.gemini_calls), dict(ctx.kimi_calls),
                    dict(ctx.pi_calls), dict(ctx.inspect_samples), frozenset(ctx.codex_calls), frozenset(ctx.codex_asked))


def read_in_parallel(
    paths: Sequence[Path], fmt: str, map_files: FileMap, progress: ProgressFn | None = None, held: bool = False,
) -> dict[Path, FileRead]:
    """Each file of ``paths`` read by ``map_files``, largest first; ``progress`` is told the bytes
    of the files finished so far (in the order they finish); ``held``: see :class:`FileTask`."""
    sizes = [path.stat().st_size for path in paths]
    order = sorted(range(len(paths)), key=lambda i: (-sizes[i], i))
    tasks = [FileTask(str(paths[i]), fmt, held) for i in order]
    reads: dict[Path, FileRead] = {}
    done = 0
    for index, read in map_files(read_log_file, tasks):
        path = paths[order[index]]
        reads[path] = read
        done += sizes[order[index]]
        if progress is not None:
            progress(done)
    return reads


def read_holds(read: FileRead, ctx: ImportContext) -> bool:
    """Whether a worker's read is the file's reading after the earlier files (``ctx``: what they
    counted): no key it counted was counted before it, no call it asked about was."""
    return (
        read.error is None and read.summary is not None
        and ctx.codex_totals.isdisjoint(read.codex_totals) and ctx.counted_ids.isdisjoint(read.counted_ids)
        and ctx.gemini_calls.keys().isdisjoint(read.gemini_calls)
        and ctx.kimi_calls.keys().isdisjoint(read.kimi_calls)
        and ctx.pi_calls.keys().isdisjoint(read.pi_calls)
        and ctx.inspect_samples.keys().isdisjoint(read.inspect_samples)
        and ctx.codex_calls.isdisjoint(read.codex_asked)
    )


def take_read(path: Path, read: FileRead, fmt: str, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A worker's read of ``path`` when the earlier files (``ctx``: what they counted) leave it
    unchanged, else the file read again here with ``ctx``; ``ctx`` then holds this file's keys too."""
    if not read_holds(read, ctx):
        named = resolve(fmt)
        return import_file(path, named or detect_format(path), ctx)
    ctx.codex_totals.update(read.codex_totals)
    ctx.counted_ids.update(read.counted_ids)
    ctx.gemini_calls.update(read.gemini_calls)
    ctx.kimi_calls.update(read.kimi_calls)
    ctx.pi_calls.update(read.pi_calls)
    ctx.inspect_samples.update(read.inspect_samples)
    ctx.codex_calls.update(read.codex_calls)
    assert read.summary is not None
    return read.requests, read.summary


def answers_first(order: Sequence[int], asked: Mapping[int, Collection[str]], calls: Mapping[int, Collection[str]]) -> list[int]:
    """The files of ``order`` (indexes in file order) in the order to read them: file order, but
    a file that counted a Codex call another file asked about (a fork's unmarked copy of its
    source's rollout: are these the source's calls?) goes before the file that asked, so the
    answer does not depend on which of the two sorts first. In a cycle, the first in file order
    goes first.

    ``asked``/``calls``: each file's questions and counted calls (chain nodes), from a reading.
    """
    owner: dict[str, int] = {}
    for index in sorted(order):
        for node in calls.get(index, ()):
            owner.setdefault(node, index)
    needs = {index: {owner[node] for node in asked.get(index, ()) if node in owner} - {index} for index in order}
    if not any(needs.values()):
        return sorted(order)
    result: list[int] = []
    placed: set[int] = set()
    remaining = sorted(order)
    while remaining:
        pick = next((index for index in remaining if needs[index] <= placed), remaining[0])
        result.append(pick)
        placed.add(pick)
        remaining.remove(pick)
    return result


# --- Reading again in another order (answers_first) -------------------------------------------
#
# A pass of load_trace reads the files one after another with one ImportContext. When
# answers_first changes the order, the next pass reads them again in the new one, but a file's
# reading depends on the files before it only through the questions it asks of that context:
# whether a key was counted before (a Codex running total or call, a Claude Code request id),
# and the chain node a Gemini CLI / Kimi CLI call was counted as. Each file's questions are
# noted with their answers the first time it asks them (a Book), with what it added. In the
# next pass a file whose every question has the same answer reads the same (the readers are
# deterministic), so its reading is kept and its additions are made again without reading it;
# any other file is read again. That covers a file read before the first one moved (the same
# context) and a file that asked nothing any file counted (no answer changed).

#: The ImportContext fields one file's reading asks about and adds to, carried to the files
#: after it. ``codex_asked`` is each file's own questions (written, never asked: reset for each
#: file) and ``progress`` only tells the bytes read.
CARRIED = ("codex_totals", "codex_calls", "counted_ids", "gemini_calls", "kimi_calls", "pi_calls", "inspect_samples")
_OWN = ("codex_asked", "progress")
#: The answer to a lookup of a key no earlier file counted.
_ABSENT = object()


class Book:
    """One file's questions to the context and its additions: per set, the keys it found and
    the keys it did not (whenever asked: one the file added itself and asked again is noted
    found, which only ever makes a later pass read the file again), and those it added; per
    dict, each key's value the first time the file touched it (:data:`_ABSENT`: none), and
    what it stored, in order."""

    __slots__ = ("sets", "dicts")

    def __init__(self) -> None:
        #: ``(field, found, missing, added)`` for each set the file touched.
        self.sets: list[tuple[str, list, list, list]] = []
        #: ``(field, looked up, stored)`` for each dict the file touched: ``(key, value)``, and
        #: ``(how, key, value)`` (``setdefault`` or ``set``).
        self.dicts: list[tuple[str, list, list]] = []

    def holds(self, ctx: ImportContext) -> bool:
        """Whether every question gets the same answer from ``ctx`` (the files before, now)."""
        for field, found, missing, _ in self.sets:
            box = getattr(ctx, field)
            if not set.issuperset(box, found) or not set.isdisjoint(box, missing):
                return False
        for field, looked, _ in self.dicts:
            box = getattr(ctx, field)
            for key, answer in looked:
                now = dict.get(box, key, _ABSENT)
                if now is not answer and now != answer:
                    return False
        return True

    def replay(self, ctx: ImportContext) -> None:
        """Make the file's additions to ``ctx`` again (noting nothing)."""
        for field, _, _, added in self.sets:
            set.update(getattr(ctx, field), added)
        for field, _, stored in self.dicts:
            box = getattr(ctx, field)
            for how, key, value in stored:
                if how == "setdefault":
                    dict.setdefault(box, key, value)
                else:
                    dict.__setitem__(box, key, value)


def _refused(name: str):
    def refuse(self, *args, **kwargs):
        raise TypeError(f"the audit's reading context only answers whether a key was counted (and as what): {name} "
                        "would make a file's reading depend on it otherwise (see prefixbench.workloads.audit.reading)")
    return refuse


class _AsksOnly:
    """What the noted set and dict share: ``|=`` adds through their noting ``update``, and
    nothing may look at them whole (their size, their keys) or take keys out."""

    __slots__ = ()

    def __ior__(self, other):
        self.update(other)  # type: ignore[attr-defined]
        return self

    __iter__ = _refused("iterating it")
    __len__ = _refused("its size")
    pop = clear = _refused("taking keys out")


class _NotedSet(_AsksOnly, set):
    """A set of the context that notes in the current file's book each key it is asked about
    (found or not) and each key added."""

    __slots__ = ("field", "found", "missing", "added")

    def __init__(self, field: str) -> None:
        super().__init__()
        self.field = field
        self.found: list = []
        self.missing: list = []
        self.added: list = []

    def __contains__(self, key: object) -> bool:
        if set.__contains__(self, key):
            self.found.append(key)
            return True
        self.missing.append(key)
        return False

    def add(self, key: object) -> None:
        self.added.append(key)
        set.add(self, key)

    def update(self, *others) -> None:  # type: ignore[override]
        for other in others:
            keys = list(other)  # (added as add adds them, in order, with no call a key)
            self.added.extend(keys)
            set.update(self, keys)

    remove = discard = _refused("taking keys out")
    difference_update = intersection_update = symmetric_difference_update = _refused("taking keys out")
    __isub__ = __iand__ = __ixor__ = _refused("taking keys out")


class _NotedDict(_AsksOnly, dict):
    """A dict of the context (key to chain node) that notes in the current file's book each key
    it is asked about (the first time the file touches it: the value it held; a key looked up
    after the file stored it tells nothing of the files before) and each key stored."""

    __slots__ = ("field", "touched", "looked", "stored")

    def __init__(self, field: str) -> None:
        super().__init__()
        self.field = field
        self.touched: set = set()
        self.looked: list = []
        self.stored: list = []

    def _ask(self, key: object) -> None:
        if key not in self.touched:
            self.touched.add(key)
            self.looked.append((key, dict.get(self, key, _ABSENT)))

    def __contains__(self, key: object) -> bool:
        self._ask(key)
        return dict.__contains__(self, key)

    def __getitem__(self, key):
        self._ask(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):  # type: ignore[override]
        self._ask(key)
        return dict.get(self, key, default)

    def setdefault(self, key, value=None):  # type: ignore[override]
        self._ask(key)
        self.stored.append(("setdefault", key, value))
        return dict.setdefault(self, key, value)

    def __setitem__(self, key, value) -> None:
        self.touched.add(key)
        self.stored.append(("set", key, value))
        dict.__setitem__(self, key, value)

    def update(self, *others, **more) -> None:  # type: ignore[override]
        for other in (*others, more):
            for key, value in (other.items() if isinstance(other, Mapping) else other):
                self[key] = value

    __delitem__ = popitem = _refused("taking keys out")


class NotedContext:
    """An :class:`ImportContext` for one pass that notes each file's questions and additions
    (:meth:`begin` a file, :meth:`end` it) in the file's :class:`Book`."""

    def __init__(self) -> None:
        fields = set(ImportContext.__struct_fields__)
        if fields != {*CARRIED, *_OWN}:  # a new field: decide whether it is asked, before trusting a kept reading
            raise AssertionError(f"ImportContext's fields {sorted(fields)} are not the ones reading.py notes {sorted({*CARRIED, *_OWN})}")
        self.ctx = ImportContext(
            codex_totals=_NotedSet("codex_totals"), codex_calls=_NotedSet("codex_calls"),
            counted_ids=_NotedSet("counted_ids"), gemini_calls=_NotedDict("gemini_calls"),
            kimi_calls=_NotedDict("kimi_calls"), pi_calls=_NotedDict("pi_calls"),
            inspect_samples=_NotedDict("inspect_samples"),
        )
        self._sets: list[_NotedSet] = [box for box in (getattr(self.ctx, field) for field in CARRIED) if isinstance(box, _NotedSet)]
        self._dicts: list[_NotedDict] = [box for box in (getattr(self.ctx, field) for field in CARRIED) if isinstance(box, _NotedDict)]
        self._book = Book()

    def begin(self) -> Book:
        """A file's reading starts: its questions and additions go to the book returned."""
        self._book = book = Book()
        for box in self._sets:
            box.found, box.missing, box.added = [], [], []
        for box in self._dicts:
            box.touched, box.looked, box.stored = set(), [], []
        self.ctx.codex_asked = set()
        return book

    def end(self) -> None:
        """The file's reading is over: its book keeps what it touched."""
        book = self._book
        book.sets = [(box.field, box.found, box.missing, box.added) for box in self._sets if box.found or box.missing or box.added]
        book.dicts = [(box.field, box.looked, box.stored) for box in self._dicts if box.looked or box.stored]

    def taken(self, read: FileRead) -> None:
        """A worker's read is taken (:func:`read_holds`): the file's reading asked, and found
        absent, every key it counted and every Codex call it asked about (called before the
        read's keys are added)."""
        ctx = self.ctx
        for box, keys in ((ctx.codex_totals, read.codex_totals), (ctx.counted_ids, read.counted_ids),
                          (ctx.codex_calls, read.codex_asked)):
            box.missing.extend(keys)  # type: ignore[attr-defined]
        for box, keys in ((ctx.gemini_calls, read.gemini_calls), (ctx.kimi_calls, read.kimi_calls), (ctx.pi_calls, read.pi_calls),
                          (ctx.inspect_samples, read.inspect_samples)):
            for key in keys:
                box._ask(key)  # type: ignore[attr-defined]
