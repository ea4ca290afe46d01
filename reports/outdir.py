"""``--out`` and single output files (``audit --junit``): checked before the first run, so a
destination that cannot take the files never throws away a finished sweep or audit."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from prefixbench.simulator.errors import UserError

#: Virtual filesystems: writable-looking paths that do not hold files.
_VIRTUAL = (Path("/proc"), Path("/sys"), Path("/dev"))


def check_out_dir(out: Path, names: Iterable[str]) -> None:
    """Create ``out`` if needed and make sure each of ``names`` can be written in it.

    Raises:
        UserError: ``--out`` is the filesystem root, a virtual filesystem, a file, lies under a
            file, cannot be created or written, or one of ``names`` is a folder there.
    """
    where = f"--out {out}"
    resolved = out.resolve()
    if resolved == Path(resolved.anchor):
        raise UserError(f"{where}: refusing to write into the filesystem root; name a folder")
    _check_place(resolved, where)
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
