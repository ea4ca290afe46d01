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
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats import detect_format, import_file, resolve
from prefixbench.workloads.logs.formats.base import ImportContext
from prefixbench.workloads.logs.records import ProgressFn
from prefixbench.workloads.logs.trace import FileSummary, TraceRequest


class FileTask(msgspec.Struct, frozen=True):
    """One log file for a worker: its path and the ``--input`` format (``auto``: detected)."""

    path: str
    fmt: str


class FileRead(msgspec.Struct, frozen=True):
    """What a worker read of one file with nothing counted before it (or the error it met)."""

    requests: list[TraceRequest] = []
    summary: FileSummary | None = None
    #: The keys the file counted (:class:`ImportContext`'s Codex totals and Claude Code request ids).
    codex_totals: frozenset[str] = frozenset()
    claude_requests: frozenset[str] = frozenset()
    #: The Gemini CLI / Qwen Code calls the file counted, to their chain nodes.
    gemini_calls: dict[tuple[str, str], str] = {}
    #: The Kimi CLI calls the file counted (by message_id), to their chain nodes.
    kimi_calls: dict[str, str] = {}
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
    return FileRead(requests, summary, frozenset(ctx.codex_totals), frozenset(ctx.claude_requests), dict(ctx.gemini_calls), dict(ctx.kimi_calls),
                    frozenset(ctx.codex_calls), frozenset(ctx.codex_asked))


def read_in_parallel(
    paths: Sequence[Path], fmt: str, map_files: FileMap, progress: ProgressFn | None = None
) -> dict[Path, FileRead]:
    """Each file of ``paths`` read by ``map_files``, largest first; ``progress`` is told the bytes
    of the files finished so far (in the order they finish)."""
    sizes = [path.stat().st_size for path in paths]
    order = sorted(range(len(paths)), key=lambda i: (-sizes[i], i))
    tasks = [FileTask(str(paths[i]), fmt) for i in order]
    reads: dict[Path, FileRead] = {}
    done = 0
    for index, read in map_files(read_log_file, tasks):
        path = paths[order[index]]
        reads[path] = read
        done += sizes[order[index]]
        if progress is not None:
            progress(done)
    return reads


def take_read(path: Path, read: FileRead, fmt: str, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A worker's read of ``path`` when the earlier files (``ctx``: what they counted) leave it
    unchanged, else the file read again here with ``ctx``; ``ctx`` then holds this file's keys too."""
    clean = (
        read.error is None and read.summary is not None
        and ctx.codex_totals.isdisjoint(read.codex_totals) and ctx.claude_requests.isdisjoint(read.claude_requests)
        and ctx.gemini_calls.keys().isdisjoint(read.gemini_calls)
        and ctx.kimi_calls.keys().isdisjoint(read.kimi_calls)
        and ctx.codex_calls.isdisjoint(read.codex_asked)
    )
    if not clean:
        named = resolve(fmt)
        return import_file(path, named or detect_format(path), ctx)
    ctx.codex_totals.update(read.codex_totals)
    ctx.claude_requests.update(read.claude_requests)
    ctx.gemini_calls.update(read.gemini_calls)
    ctx.kimi_calls.update(read.kimi_calls)
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
