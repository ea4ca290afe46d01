"""Record a run's requests as a chat-completions log, the format ``check --trace`` and ``replay`` read.

Each request the provider received becomes one line, in send order, with ``purpose`` and the
durable ``rewrites`` the engine declared before it, so a recorded run is judged by
``check --trace`` as the run itself would be.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.provider import Validator
from prefixbench.simulator.wire import Block, Request
from prefixbench.workloads.scripted.base import Run
from prefixbench.workloads.logs.chat_completions import request_body
from prefixbench.workloads.scripted.registry import execute, make_workload, profile_options, validator_for


class RequestLog(msgspec.Struct):
    """A validator that keeps every request the provider checks (in order), deferring to ``inner``."""

    inner: Validator | None = None
    requests: list[Request] = msgspec.field(default_factory=list)

    def check(self, request: Request) -> str | None:
        """Keep the request, then ask the inner validator."""
        self.requests.append(request)
        return None if self.inner is None else self.inner.check(request)

    def accepted(self, request: Request, reply_blocks: tuple[Block, ...]) -> None:
        """Tell the inner validator."""
        if self.inner is not None:
            self.inner.accepted(request, reply_blocks)


def record_run(
    workload_name: str, window: int, preset: str, engine: str | None = None, profile: str = "lenient",
    options: dict[str, object] | None = None,
) -> tuple[Run, list[Request]]:
    """Run one workload and return the run with every request it sent."""
    workload = make_workload(workload_name, window, **profile_options(workload_name, profile), **(options or {}))
    log = RequestLog(validator_for(workload, profile))
    run = execute(workload, preset, engine=engine, validator=log, profile=profile)
    return run, log.requests


def recorded_bytes(run: Run, requests: list[Request]) -> bytes:
    """The log as UTF-8 bytes, one chat-completions body per line (what :func:`write_recorded` writes)."""
    text = "".join(
        json.dumps(request_body(request, observation.rewrites_since_previous), ensure_ascii=False, separators=(",", ":")) + "\n"
        for request, observation in zip(requests, run.observations, strict=True)
    )
    return text.encode("utf-8")


def write_recorded(path: Path, run: Run, requests: list[Request], *, replace: bool = False) -> int:
    """Write the log, one body per line; returns the number of lines.

    An existing ``path`` is refused unless ``replace`` (``record --force``); then the new log
    is written beside it and renamed over it, so a failed write leaves the old one whole. A
    write that fails removes what it wrote and nothing else.

    Raises:
        UserError: naming ``path``, when it exists (without ``replace``) or cannot be written.
    """
    data = recorded_bytes(run, requests)
    if replace:
        _replace_file(path, data)
    else:
        _create_file(path, data)
    return len(requests)


def refuse_existing(path: Path) -> None:
    """Refuse a ``record`` log that would replace an existing file (before the run, which takes time).

    Raises:
        UserError: ``path`` is a folder or exists (also as a dangling symbolic link).
    """
    if path.is_dir():
        raise UserError(f"{path}: is a folder; name a file")
    if os.path.lexists(path):
        raise UserError(f"{path}: already exists; record --force replaces it")


def refuse_unwritable(path: Path, *, replace: bool = False) -> None:
    """Refuse, before the run (which takes time), a ``record`` log that could not be written: an
    existing one without ``replace`` (:func:`refuse_existing`), a folder, or one whose folder is
    missing, is no folder or cannot be written.

    Raises:
        UserError: naming ``path`` and why.
    """
    target = Path(os.path.realpath(path))  # --force writes through a symbolic link, to its target
    _refuse_special(path, target)  # first: "--force replaces it" would be wrong advice for a device
    if not replace:
        refuse_existing(path)
    folder = target.parent
    if not folder.exists():
        raise UserError(f"{path}: cannot write (no folder {folder})")
    if not folder.is_dir():
        raise UserError(f"{path}: cannot write ({folder} is not a folder)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"{path}: cannot write (folder {folder} is not writable)")


def _refuse_special(path: Path, target: Path) -> None:
    """Refuse a ``target`` that exists and is no regular file: a folder, or a device, pipe or
    socket, which ``--force``'s rename would replace by a file (``/dev/null`` run as root)."""
    if target.is_dir():
        raise UserError(f"{path}: is a folder; name a file")
    try:
        mode = target.stat().st_mode
    except OSError:
        return  # nothing there yet (or nothing this can tell): the write says what goes wrong
    if not stat.S_ISREG(mode):
        raise UserError(f"{path}: is not a regular file (a device, pipe or socket); record writes a log file")


def _create_file(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``path`` (never over an existing one, even one made meanwhile)."""
    try:
        handle = open(path, "xb")
    except FileExistsError:
        refuse_existing(path)
        raise
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None
    try:
        with handle:
            handle.write(data)
    except BaseException as exc:  # a full disk, or Ctrl-C mid-write: no partial log is left
        path.unlink(missing_ok=True)  # the partial log this call created, nothing else
        if isinstance(exc, OSError):
            raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None
        raise


def _replace_file(path: Path, data: bytes) -> None:
    """Write ``data`` beside ``path`` and rename it over ``path`` (through a symbolic link, to
    its target), keeping the replaced file's permissions."""
    target = Path(os.path.realpath(path))
    _refuse_special(path, target)  # checked again: the run took time
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    temporary = None
    try:
        descriptor, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        temporary = Path(name)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException as exc:  # a full disk, or Ctrl-C mid-write: no temporary file is left
        if temporary is not None:
            temporary.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None
        raise
