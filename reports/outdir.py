"""``--out`` and single output files (``audit --junit``): checked before the first run, so a
destination that cannot take the files never throws away a finished sweep or audit."""

from __future__ import annotations

import errno
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from prefixbench.simulator.errors import UserError
#: Virtual filesystems: writable-looking paths that do not hold files.
_VIRTUAL = (Path("/proc"), Path("/sys"), Path("/dev"))


#: A file only one command writes at the top of its ``--out``: a folder holding it is that
#: command's. Two commands never share a folder: both write report.html, and each landing
#: replaces the set of files it swaps in together, leaving the other command's as dead links.
SIGNATURES = {"sweep": "runs.csv", "bench": "leaderboard.csv", "audit": "audit.json", "check": "check.json"}


def check_out_dir(out: Path, names: Iterable[str], command: str | None = None) -> None:
    """Create ``out`` if needed and make sure each of ``names`` can be written in it; with
    ``command``, that it holds no other command's outputs (:data:`SIGNATURES`).

    Raises:
        UserError: ``--out`` is the filesystem root, a virtual filesystem, a file, lies under a
            file, cannot be created or written, holds another command's outputs, or one of
            ``names`` is a folder there.
    """
    where = f"--out {out}"
    resolved = out.resolve()
    if resolved == Path(resolved.anchor):
        raise UserError(f"{where}: refusing to write into the filesystem root; name a folder")
    _check_place(resolved, where)
    for other, signature in SIGNATURES.items():
        if other != command and command is not None and os.path.lexists(resolved / signature):
            raise UserError(
                f"{where}: holds the outputs of prefixbench {other} ({signature}); give {command} a folder of its own"
            )
    try:
        resolved.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=resolved):
            pass
    except OSError as exc:
        raise UserError(f"{where}: cannot write there ({exc.strerror or exc})") from None
    for name in names:
        target = resolved / name
        if target.is_dir() and not target.is_symlink():
            raise UserError(f"{where}: {target} is a folder; prefixbench writes a file of that name")
        if target.exists() and not os.access(target, os.W_OK):
            raise UserError(f"{where}: {target} is not writable")


def _check_place(resolved: Path, where: str, *, file: bool = False) -> Path:
    """Refuse a virtual filesystem and a path under a file; return the nearest existing folder
    of ``resolved`` (a folder, or with ``file`` the file that goes in it)."""
    for virtual in _VIRTUAL:
        if resolved == virtual or virtual in resolved.parents:
            raise UserError(f"{where}: {virtual} is a virtual filesystem, not a place for files")
    for ancestor in resolved.parents if file else (resolved, *resolved.parents):
        if ancestor.exists():
            if not ancestor.is_dir():
                what = "is a file" if ancestor == resolved else f"lies under the file {ancestor}"
                raise UserError(f"{where}: {what}, not a folder")
            return ancestor
    return Path(resolved.anchor)


def check_out_file(path: Path, option: str) -> None:
    """Make sure ``option``'s file (e.g. ``--junit FILE``) can be written, creating nothing.

    The same checks as :func:`check_out_dir` on the folder the file goes in (not a virtual
    filesystem, not under a file, writable), and the file itself is not a folder and, if it
    exists, is writable. Missing parent folders are left to the writer, which creates them.

    Raises:
        UserError: naming ``option`` and the path.
    """
    where = f"{option} {path}"
    resolved = path.resolve()
    if resolved.is_dir():
        raise UserError(f"{where}: is a folder; name a file")
    folder = _check_place(resolved, where, file=True)
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise UserError(f"{where}: cannot write there ({exc.strerror or exc})") from None
    if resolved.exists() and not os.access(resolved, os.W_OK):
        raise UserError(f"{where}: is not writable")


# --- one sweep (or audit) at a time ----------------------------------------------------------

#: The lock of an output folder: held (``flock``) by the command writing it; its text names the
#: holder (pid, host, start). A file left by a killed holder is not held and is taken over.
LOCK = ".prefixbench-lock"


#: The locks this process holds. A forked worker (``--jobs``) gets a copy of their descriptors,
#: and an ``flock`` lasts while any copy is open: a worker left running for a moment after its
#: command was killed would keep the folder locked, and the command run again would be refused.
#: A forked child closes its copies at once (:func:`_release_in_child`).
_HELD: list[OutLock] = []


def _release_in_child() -> None:
    for lock in _HELD:
        if lock.handle is not None:
            try:
                os.close(lock.handle)
            except OSError:
                pass
            lock.handle = None  # the child never unlinks its parent's lock either
    _HELD.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_release_in_child)


class OutLock:
    """Hold ``<out>/.prefixbench-lock`` while a command writes ``out`` (not inherited by the
    processes it forks).

    Raises:
        UserError: another process holds it (naming its pid, host and start).
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / LOCK
        self.handle: int | None = None

    def __enter__(self) -> OutLock:
        import errno
        import fcntl
        import json
        import socket
        from datetime import datetime, timezone

        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise UserError(f"--out {self.out}: cannot create its lock {self.path} ({exc.strerror or exc})") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    break  # a filesystem without locks: the file still names who writes
                holder = _read_holder(fd)
                os.close(fd)
                raise UserError(
                    f"--out {self.out}: another prefixbench command is writing this folder ({holder or 'just started'}); "
                    "wait for it to finish, or choose another --out"
                ) from None
            try:  # the file we locked is still the one at the path (not unlinked by a holder that just finished)
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        left = _read_holder(fd)
        if left:  # said even with --quiet: someone's sweep was stopped here
            print(f"prefixbench: note: --out {self.out}: took over the lock of a command that is no longer running "
                  f"({left})", file=sys.stderr)
        started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")  # who holds it, for people; never in outputs
        text = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": started}) + "\n"
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(), 0)
        self.handle = fd
        _HELD.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            self.path.unlink(missing_ok=True)  # still held: nobody can take it between the unlink and the close
            os.close(self.handle)
            self.handle = None
        if self in _HELD:
            _HELD.remove(self)


def _read_holder(fd: int) -> str:
    """``pid N on HOST, started T`` from a lock file's text ('' when empty or unreadable)."""
    import json

    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"null")
        return f"pid {int(data['pid'])} on {data['host']}, started {data['started']}"
    except (OSError, ValueError, TypeError, KeyError):
        return ""


# --- found before the first run ---------------------------------------------------------------


def probe_writable(folder: Path, where: str) -> None:
    """Write, flush and remove a small file in ``folder``: a read-only folder or a full disk is
    found here, before any run is computed and before anything is replaced.

    Raises:
        UserError: naming ``where`` and the folder.
    """
    from prefixbench.workloads.runs.store import TEMP_PREFIX  # with pyarrow: only where a sweep writes

    probe = folder / f"{TEMP_PREFIX}{os.getpid()}-probe"
    try:
        try:
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, b"\0" * 4096)
                os.fsync(fd)
            finally:
                os.close(fd)
        finally:
            probe.unlink(missing_ok=True)
    except OSError as exc:
        raise UserError(f"{where}: cannot write in {folder} ({exc.strerror or exc})") from None


# --- staging and landing ----------------------------------------------------------------------

#: A landing in progress: which staged files move into the folder, in order, and which files go.
#: Written once everything is staged; whoever finds it (the next sweep or audit into the
#: folder) completes it before doing anything else.
JOURNAL = ".prefixbench-landing.json"
#: Prefix of the staging folders inside an output folder.
STAGING_PREFIX = ".staging-"
#: Prefix of an audit's staging folder beside an ``--out`` that does not exist yet.
AUDIT_STAGING_PREFIX = ".audit-"
#: The link through which files that change together are seen (:func:`land_staged`), and the
#: prefix of the generation folders it points at.
TABLES = ".tables"
GENERATION_PREFIX = ".tables-"


def landing_entries(out: Path) -> set[str]:
    """Top-level names in ``out`` that belong to landing itself, not to the outputs."""
    names = {JOURNAL, TABLES}
    if out.is_dir():
        names |= {e.name for e in out.iterdir() if e.name.startswith((GENERATION_PREFIX, STAGING_PREFIX))}
    return names


def write_file(path: Path, data: bytes) -> None:
    """Write a staged file whole and flush it to disk.

    Raises:
        UserError: naming the file, on any write error (a full disk: ``No space left on device``).
    """
    try:
        with open(path, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None


def make_staging(out: Path) -> Path:
    """A fresh staging folder inside ``out`` (removed by :func:`drop_staging` or the next landing)."""
    try:
        return Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=out))
    except OSError as exc:
        raise UserError(f"--out {out}: cannot write there ({exc.strerror or exc})") from None


def drop_staging(staging: Path) -> None:
    """Remove a staging folder and what it holds."""
    import shutil

    shutil.rmtree(staging, ignore_errors=True)


def land_staged(out: Path, staging: Path, move: list[str], remove: list[str] = (), together: Sequence[str] = ()) -> None:
    """Move the staged files ``move`` (names relative to ``staging``) into ``out`` in that order,
    then delete ``remove`` (relative to ``out``).

    The journal is written first, so a landing cut short (kill -9, power) is completed by the
    next command into ``out`` (:func:`complete_landing`) instead of leaving old and new files
    mixed. Put the file that names the set (a manifest) last in ``move``.

    ``together`` names staged files (in ``move``, top level) that must never be seen from two
    landings at once (a sweep's runs.csv and observations.csv). They land in a generation
    folder ``.tables-<digest>``; each of their names in ``out`` is a link through the link
    ``.tables`` to it, and one rename of ``.tables`` changes them all at once (see
    :func:`_land_generation`). Where the filesystem has no symbolic links they are renamed one
    by one, as the other files are.

    ::

        staged --journal--> journaled --rename each--> landed:<name> ... --unlink--> removed
               --journal unlinked, staging removed--> landed
    """
    landing_point("staged")
    generation = _stage_generation(staging, [n for n in move if n in together]) if together else None
    journal = {"staging": staging.name, "move": list(move), "remove": list(remove)}
    if generation is not None:
        journal["generation"] = generation
    try:
        write_file(staging / JOURNAL, (_json_text(journal)).encode())
        os.replace(staging / JOURNAL, out / JOURNAL)
        _sync_dir(out)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot write {JOURNAL} ({exc.strerror or exc})") from None
    landing_point("journaled")
    complete_landing(out)
    landing_point("landed")


def complete_landing(out: Path) -> bool:
    """Finish the landing a journal in ``out`` describes, then remove every staging folder a
    stopped command left there. Returns whether a landing was completed.

    Raises:
        UserError: the journal is not one, or a rename fails (naming the folder and why).
    """
    try:
        return _complete_landing(out)
    except OSError as exc:
        raise UserError(
            f"--out {out}: cannot complete the landing {JOURNAL} describes ({exc.strerror or exc}); "
            "fix that and re-run, or remove the folder"
        ) from None


def _complete_landing(out: Path) -> bool:
    path = out / JOURNAL
    completed = False
    if path.is_file():
        journal = _read_journal(path)
        staging = out / journal["staging"]
        generation = journal.get("generation")
        for name in journal["move"]:
            if generation is not None and name in generation["files"]:
                if name == generation["files"][-1]:  # where the last of them would have landed
                    _land_generation(out, staging, generation["folder"], generation["files"])
                    landing_point(f"landed:{TABLES}")
                continue
            source = staging / name
            if source.exists():
                target = out / name
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)
            landing_point(f"landed:{name}")
        for name in journal["remove"]:
            target = out / name
            if target.is_file() or target.is_symlink():
                target.unlink()
        landing_point("removed")
        _sync_dir(out)
        path.unlink()
        completed = True
    for entry in out.iterdir() if out.is_dir() else ():
        if entry.name.startswith(STAGING_PREFIX) and entry.is_dir() and not entry.is_symlink():
            drop_staging(entry)
        elif entry.is_symlink() and _LINK_TEMPORARY.fullmatch(entry.name):
            entry.unlink()  # a link a stopped landing made and did not rename yet
    return completed


# --- files that change together: one generation folder, swapped by one rename -----------------


def _stage_generation(staging: Path, files: list[str]) -> dict[str, object] | None:
    """Move the staged ``files`` into ``staging/.tables-<digest>`` (the digest of their names and
    bytes, so equal outputs make an equal tree); the journal's entry for them."""
    import hashlib

    if not files:
        return None
    digest = hashlib.sha256()
    for name in files:
        digest.update(name.encode() + b"\0")
        with open(staging / name, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    folder = f"{GENERATION_PREFIX}{digest.hexdigest()[:16]}"
    try:
        (staging / folder).mkdir()
        for name in files:
            os.replace(staging / name, staging / folder / name)
    except OSError as exc:
        raise UserError(f"{staging}: cannot write ({exc.strerror or exc})") from None
    return {"folder": folder, "files": list(files)}


def _land_generation(out: Path, staging: Path, folder: str, files: list[str]) -> None:
    """Make ``files`` in ``out`` the ones of the generation ``folder``, all at once.

    Every step leaves each name showing one whole generation (so a kill anywhere never mixes
    two), and the steps can be repeated from the journal:

    1. the staged generation folder moves into ``out`` (kept if an equal one is there);
    2. names that are still plain files (a folder an older prefixbench wrote) first become links
       to a generation holding those very files, one rename each: nothing changes for a reader;
    3. ``.tables`` is pointed at the new generation in one rename: every name changes at once;
    4. the other generation folders are removed.
    """
    source, target = staging / folder, out / folder
    if source.is_dir() and not target.exists():
        os.replace(source, target)
    if not target.is_dir():
        raise OSError(f"the staged {folder} is missing")
    link = out / TABLES
    if link.is_dir() and not link.is_symlink():
        # A copy of the folder that followed the links (shutil.copytree, cp -L): its names are
        # plain files again, and this is just one more generation folder.
        drop_staging(out / f"{GENERATION_PREFIX}copied")
        os.replace(link, out / f"{GENERATION_PREFIX}copied")
    try:
        if not os.path.lexists(link):
            # First landing of this kind here: a generation of what the folder shows now.
            old = [name for name in files if (out / name).is_file() and not (out / name).is_symlink()]
            _point(out, _adopt(out, old) if old else folder)
        for name in files:
            _make_link(out / name, f"{TABLES}/{name}")
        landing_point("linked")
    except NotImplementedError:
        # No symbolic links on this filesystem: rename each file into place instead.
        for name in files:
            if (target / name).exists():
                os.replace(target / name, out / name)
        drop_staging(target)
        return
    _point(out, folder)
    _sync_dir(out)
    for entry in out.iterdir():
        if entry.name.startswith(GENERATION_PREFIX) and entry.name != folder and entry.is_dir() and not entry.is_symlink():
            drop_staging(entry)


def _adopt(out: Path, names: list[str]) -> str:
    """A generation folder holding (hard links to, or copies of) the plain files ``names``."""
    import shutil

    building = out / f"{GENERATION_PREFIX}adopting-{os.getpid()}"
    drop_staging(building)
    building.mkdir()
    for name in names:
        try:
            os.link(out / name, building / name)
        except OSError:
            shutil.copy2(out / name, building / name)
    folder = f"{GENERATION_PREFIX}earlier"
    drop_staging(out / folder)
    os.replace(building, out / folder)
    return folder


def _point(out: Path, folder: str) -> None:
    """Point ``out/.tables`` at ``folder`` in one rename."""
    _make_link(out / TABLES, folder)


#: The temporary name of a link before its rename (:func:`_make_link`).
_LINK_TEMPORARY = re.compile(r".+\.[0-9]+\.link")


def _make_link(path: Path, to: str) -> None:
    """Make ``path`` a symbolic link to ``to`` with one rename (nothing to do if it is one).

    Raises:
        NotImplementedError: the filesystem (or platform) has no symbolic links.
    """
    if path.is_symlink() and os.readlink(path) == to:
        return
    temporary = path.with_name(f"{path.name}.{os.getpid()}.link")
    if os.path.lexists(temporary):
        temporary.unlink()
    try:
        os.symlink(to, temporary)
    except (OSError, NotImplementedError) as exc:
        if isinstance(exc, NotImplementedError) or exc.errno in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS):
            raise NotImplementedError from None
        raise
    os.replace(temporary, path)


def _read_journal(path: Path) -> dict[str, object]:
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        staging, move, remove = data["staging"], data["move"], data["remove"]
        if not (isinstance(staging, str) and staging.startswith(STAGING_PREFIX) and "/" not in staging):
            raise ValueError(staging)
        if not all(isinstance(n, str) and _inside(n) for n in (*move, *remove)):
            raise ValueError(move, remove)
        generation = data.get("generation")
        if generation is not None:
            folder, files = generation["folder"], generation["files"]
            if not (isinstance(folder, str) and folder.startswith(GENERATION_PREFIX) and "/" not in folder):
                raise ValueError(folder)
            if not (isinstance(files, list) and files and all(isinstance(n, str) and n in move and "/" not in n for n in files)):
                raise ValueError(files)
            generation = {"folder": folder, "files": files}
    except (OSError, ValueError, TypeError, KeyError, UnicodeDecodeError):
        raise UserError(f"{path}: not a prefixbench landing journal; remove it, or choose another --out") from None
    return {"staging": staging, "move": move, "remove": remove, "generation": generation}


def _inside(rel: str) -> bool:
    path = Path(rel)
    return bool(rel) and not path.is_absolute() and ".." not in path.parts


def _json_text(data: object) -> str:
    import json

    return json.dumps(data, indent=1) + "\n"


def _sync_dir(folder: Path) -> None:
    """Flush a folder's entries (the renames in it) to disk, where the platform allows."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --- audit --out: the whole set or nothing ---------------------------------------------------


@contextmanager
def staged_out(out: Path, names: Sequence[str]) -> Iterator[Path]:
    """A staging folder for the files ``names`` of ``out``; when the block ends without an
    error they land together, and the staging folder is gone either way.

    The staging folder is ``.audit-<out's name>-<pid>-*`` beside ``out``; one a killed command
    left (its pid no longer running) is removed here. Landing: a new ``out`` is the staging
    folder renamed (one rename); an ``out`` that holds only these files is exchanged with it in
    one rename where the system has ``renameat2`` (Linux); any other ``out`` gets the files
    through :func:`land_staged` (journal, renames), holding its lock.
    """
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _remove_dead_staging(parent, out.name)
        staging = Path(tempfile.mkdtemp(prefix=f"{AUDIT_STAGING_PREFIX}{out.name}-{os.getpid()}-", dir=parent))
        umask = os.umask(0o022)
        os.umask(umask)
        staging.chmod(0o777 & ~umask)  # a folder as mkdir makes it: it may become ``out``
    except OSError as exc:
        raise UserError(f"--out {out}: cannot write beside it in {parent} ({exc.strerror or exc})") from None
    try:
        yield staging
        landing_point("staged")
        if _swap_in(staging, out, names):
            landing_point("landed")
            return
        out.mkdir(exist_ok=True)
        with OutLock(out):
            complete_landing(out)
            inner = make_staging(out)
            for name in names:
                os.replace(staging / name, inner / name)
            land_staged(out, inner, list(names), together=list(names))
    except OSError as exc:
        raise UserError(f"--out {out}: cannot write {exc.filename or 'there'} ({exc.strerror or exc})") from None
    finally:
        drop_staging(staging)


def _swap_in(staging: Path, out: Path, names: Sequence[str]) -> bool:
    """Put the staged folder in place of ``out`` in one rename, if ``out`` is missing or holds
    nothing but ``names``; the earlier files then sit in ``staging`` (removed by the caller)."""
    import errno

    if not out.exists():
        try:
            os.rename(staging, out)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                return False  # created meanwhile
            raise
        return True
    if out.is_symlink() or not out.is_dir() or not {p.name for p in out.iterdir()} <= set(names):
        return False
    staging.chmod(out.stat().st_mode & 0o7777)
    return _exchange(staging, out)


def _exchange(first: Path, second: Path) -> bool:
    """Swap two folders in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where the
    system or filesystem cannot."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0


def _remove_dead_staging(parent: Path, name: str) -> None:
    """Remove the staging folders of ``name`` that commands no longer running left in ``parent``."""
    prefix = f"{AUDIT_STAGING_PREFIX}{name}-"
    import glob

    for entry in parent.glob(f"{glob.escape(prefix)}*"):
        pid = entry.name[len(prefix):].split("-", 1)[0]
        if pid.isascii() and pid.isdigit() and entry.is_dir() and not entry.is_symlink() and not _running(int(pid)):
            drop_staging(entry)


def _running(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (one of another user counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --- named landing points (the tests stop the process at each) -------------------------------

#: ``PREFIXBENCH_STOP_AT=<point>`` ends the process at that point with ``os._exit(137)``, as a
#: ``kill -9`` there would: the tests stop a sweep and an audit at every point of a landing
#: (tests/unit/reports/test_landing.py). The points: ``run-stored`` (a sweep's run just landed
#: in the store), ``staged``, ``journaled``, ``linked`` (every output a link, still to the earlier
#: files), ``landed:.tables`` (the outputs changed), ``landed:<file>`` (after each other rename), ``removed``,
#: ``landed``.
STOP_AT = "PREFIXBENCH_STOP_AT"


def landing_point(name: str) -> None:
    """Where a landing is: the process stops here if :data:`STOP_AT` names this point."""
    if os.environ.get(STOP_AT) == name:
        os._exit(137)
