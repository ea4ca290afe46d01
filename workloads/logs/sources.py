"""Finding the log files under the paths an audit is given.

A folder is walked (sorted) for ``*.jsonl`` / ``*.json`` / ``*.traj`` (also gzip, bzip2, xz or zstd
compressed: ``*.jsonl.gz``...; and OpenClaw's archived ``*.jsonl.reset.<time>``), and for a database a format
reads (an OpenCode ``opencode.db``, by its content); metadata sidecars and empty
files it finds are listed with why they are skipped, and the pieces of a log kept as many files (an
OpenCode storage message or part) are left to the file that reads them. Every problem is a
:class:`~prefixbench.simulator.errors.UserError`: a path that does not exist, a device or a
pipe, a folder without log files. Reading a file's records is :mod:`.records`; which format
they are is :mod:`.formats`.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.claude_layout import is_run_journal
from prefixbench.workloads.logs.formats import COPILOT_CLI, FORMATS, copilot_cli_refusal, classify_record, continue_cli, empty_export, no_records_why
from prefixbench.workloads.logs.formats.copilot_store import (LEGACY_SESSION, earlier_schema, is_legacy_session, neither_holds_usage,
                                                              store_without_usage)
from prefixbench.workloads.logs.formats.headless import COPILOT_JSON, headless_output
from prefixbench.workloads.logs.formats.managed_agents import is_copilot_cli_event
from prefixbench.workloads.logs.formats.totals_only import (
    AUGMENT_SESSION,
    CURSOR_TRANSCRIPT,
    DROID_SESSION,
    GOOSE_SESSION,
    HERMES_SESSION,
    NANOBOT_SESSION,
    QODER_SESSION,
    database_of,
    is_augment_session,
    is_cursor_transcript_line,
    is_droid_session_header,
    is_goose_session_header,
    is_hermes_session,
    is_nanobot_session_header,
    is_qoder_session_header,
    kiro_session,
)
from prefixbench.workloads.logs.jsonlines import ZeroTail, is_skip
from prefixbench.workloads.logs.reading import check_readable
from prefixbench.workloads.logs.records import COMPRESSED_SUFFIXES, CommentedJson, NestedArray, iter_records

#: File names a folder walk picks up (``.traj``: SWE-agent's trajectories).
LOG_SUFFIXES = (".jsonl", ".json", ".traj")
#: ... and the same compressed (``.jsonl.gz``, ``.json.xz``, ``.jsonl.zst``...).
_WALKED = LOG_SUFFIXES + tuple(log + packed for log in LOG_SUFFIXES for packed in COMPRESSED_SUFFIXES)


#: OpenClaw's archived transcripts, a session's ``<id>.jsonl`` renamed when ``/new`` or ``/reset``
#: starts another one or the session is deleted (``<id>.jsonl.reset.2026-03-21T21-38-51.843Z``,
#: ``.deleted.``; later OpenClaw compresses them, ``...Z.zst``, or stamps them in epoch seconds,
#: ``.deleted.1782530279``): sessions of their own, walked as
#: ``*.jsonl``. Its ``.bak.`` copies of a live transcript are not.
_ARCHIVED_TRANSCRIPT = re.compile(r"\.jsonl\.(?:reset|deleted)\.(?:\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d{1,3})?Z|\d{9,13})"
                                  r"(?:\.gz|\.bz2|\.xz|\.zst)?$")


def _log_suffix(name: str) -> str:
    """A walked file's log suffix, its compression's left off (``a.jsonl.gz``: ``.jsonl``)."""
    if _ARCHIVED_TRANSCRIPT.search(name):
        return ".jsonl"
    name = name.lower()
    for packed in COMPRESSED_SUFFIXES:
        name = name.removesuffix(packed)
    return next((suffix for suffix in LOG_SUFFIXES if name.endswith(suffix)), "")


def find_logs(paths: list[Path]) -> list[Path]:
    """The log files under ``paths``: files as given, folders walked (sorted) for ``*.jsonl`` / ``*.json`` / ``*.traj``.

    Raises:
        UserError: a path that does not exist, or a folder with no log file in it.
    """
    return logs_of(find_log_files(paths))


def logs_of(files: list[tuple[Path, str | None]]) -> list[Path]:
    """Of what :func:`find_log_files` found, the files :func:`find_logs` lists."""
    return [path for path, reason in files if not is_unreadable(reason) and not (reason or "").startswith(COPY_OF)]


#: The skip reason of a subfolder the walk could not list: ``unreadable: <why>``.
UNREADABLE = "unreadable: "


#: The skip reason of an agent's headless output that reports no call's usage
#: (:mod:`~prefixbench.workloads.logs.formats.headless`): ``headless: <what it is, why, what to audit>``.
HEADLESS = "headless: "
#: The skip reason of a Claude Code workflow run's ``journal.jsonl`` (:func:`~prefixbench.workloads.logs.claude_layout.is_run_journal`).
RUN_JOURNAL = "run-journal"


#: The skip reason of an API answer of a known export that holds nothing
#: (:func:`~prefixbench.workloads.logs.formats.empty_export`): ``empty export: <what it is>``.
EMPTY_EXPORT = "empty export: "


def is_unreadable(reason: str | None) -> bool:
    """Whether a walk's skip reason is a subfolder it could not list."""
    return reason is not None and reason.startswith(UNREADABLE)


def find_log_files(paths: list[Path]) -> list[tuple[Path, str | None]]:
    """Like :func:`find_logs`, each path with why a folder walk skips it (None: audit it).

    A walk skips metadata sidecars (:func:`is_sidecar`) and empty files (an agent that started
    a session and never wrote to it); a file named on the command line is never skipped. A
    subfolder it cannot list is returned with the reason ``unreadable: <why>`` (the audit warns
    and notes it); a folder named on the command line that cannot be listed is an error.
    """
    found: list[tuple[Path, str | None]] = []
    for path in paths:
        if path.is_dir():
            links: list[Path] = []
            marked = [(item, why or _skip_reason(item)) for item, why in _walk(path, links)]
            if not any(reason is None for _, reason in marked):
                unreadable = [(item, reason) for item, reason in marked if is_unreadable(reason)]
                if unreadable:
                    item, reason = unreadable[0]
                    what = "this folder" if item.is_dir() else "this log file"
                    raise UserError(
                        f"{item}: cannot read {what} ({reason[len(UNREADABLE):]}), "
                        f"and {path} holds no other log file; make it readable, or name the folders to audit"
                    )
                if marked:
                    # The file that says most: one that names the agent it is from and why it holds no call.
                    item, reason = next(((i, r) for i, r in marked if (r or "").startswith((HEADLESS, EMPTY_EXPORT))), marked[0])
                    if reason == HEADLESS + COPILOT_CLI:
                        # It points to the session store: where the one here holds no usage either, both are said.
                        earlier = next(((i, schema) for i, r in marked if (r or "").startswith(HEADLESS)
                                        and i.name.endswith(_FILE_SUFFIXES) and (schema := earlier_schema(i))), None)
                        if earlier is not None:
                            reason = HEADLESS + neither_holds_usage(earlier[1], str(earlier[0]))
                    # A database the walk offered (an agent's database of totals) is named among them.
                    names = [*LOG_SUFFIXES, *(x for x in dict.fromkeys(_FILE_SUFFIXES) if any(i.name.endswith(x) for i, _ in marked))]
                    raise UserError(
                        f"{path}: no log to audit: of the {len(marked)} file(s) named {', '.join('*' + s for s in names[:-1])} "
                        f"or *{names[-1]} here, none is a log "
                        f"({item.name}: {_why_not(reason, item)})"
                    )
                linked = sorted(links)
                hint = ""
                if linked:  # a walk does not follow links to folders (no loops, no file counted twice)
                    hint = (f"; it holds a link to a folder, which a walk does not enter: name it to audit it ({linked[0]})"
                            if len(linked) == 1 else f"; it holds {len(linked)} links to folders, which a walk does not "
                            f"enter: name them to audit them ({linked[0]}, ...)")
                raise UserError(f"{path}: no log files ({WALKED_NAMES}) in this folder{hint}")
            found.extend(marked)
        elif not path.exists():
            if path.is_symlink():
                try:
                    path.stat()
                except OSError as exc:
                    raise UserError(f"{path}: cannot read: {_broken_link(path, exc)}") from None
            raise UserError(f"{path}: no such file or folder")
        else:
            check_readable(path)  # a device or socket: worded as replay words it
            if not path.is_file():  # a named pipe: format detection and the import each read it
                raise UserError(f"{path}: {PIPE} (audit reads a log more than once); save it to a file first")
            found.append((path, None))
    # The same file named twice (a folder and a file in it) is audited once.
    unique: dict[str, tuple[Path, str | None]] = {}
    for path, reason in found:
        unique.setdefault(os.path.realpath(path), (path, reason))
    return _copies_marked(list(unique.values()))


#: The skip reason of a file with the same bytes as one audited before it: ``copy of <path>``.
COPY_OF = "copy of "


def _copies_marked(files: list[tuple[Path, str | None]]) -> list[tuple[Path, str | None]]:
    """Each file with the same bytes as an earlier one (a session copied into a backup folder)
    marked ``copy of <first>``: a log is counted once however many copies a folder holds. Only
    files of one size are read to compare them."""
    by_size: dict[int, list[int]] = {}
    for n, (path, reason) in enumerate(files):
        if reason is None and path.is_file():
            by_size.setdefault(path.stat().st_size, []).append(n)
    out = list(files)
    for same_size in by_size.values():
        if len(same_size) < 2:
            continue
        # Files of one size are told apart by their first bytes before any is read whole (the
        # sessions of a big folder are often of similar sizes): only those whose heads match are.
        by_head: dict[bytes, list[int]] = {}
        for n in same_size:
            head = _digest(files[n][0], _HEAD_BYTES)
            if head is not None:
                by_head.setdefault(head, []).append(n)
        for group in by_head.values():
            if len(group) < 2:
                continue
            _mark_copies(files, group, out)
    return out


#: Bytes of a file's head compared before the whole file is (:func:`_copies_marked`).
_HEAD_BYTES = 1 << 16


def _mark_copies(files: list[tuple[Path, str | None]], group: list[int], out: list[tuple[Path, str | None]]) -> None:
    """Mark in ``out`` each file of ``group`` (positions in ``files``, in order) with the same
    bytes as an earlier one of it."""
    first: dict[bytes, Path] = {}
    for n in group:
        path = files[n][0]
        digest = _digest(path)
        if digest is None:
            continue
        if digest in first:
            out[n] = (path, f"{COPY_OF}{first[digest]}")
        else:
            first[digest] = path


def _digest(path: Path, limit: int | None = None) -> bytes | None:
    """The SHA-256 of a file's bytes, or of its first ``limit`` bytes (None: it cannot be read
    now; its reading says why)."""
    import hashlib

    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            if limit is not None:
                digest.update(handle.read(limit))
            else:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
    except OSError:
        return None
    return digest.digest()


def _walk(folder: Path, links: list[Path] | None = None) -> list[tuple[Path, str | None]]:
    """The log files under ``folder``, sorted: what ``os.walk`` finds (a linked folder is not
    walked into; hidden folders are), without recursion, so any depth is walked. A subfolder
    that cannot be listed comes with the reason ``unreadable: <why>`` (not silently left out,
    as ``os.walk`` would). The links to folders met, which it does not enter, are added to
    ``links`` where given (for the error of a folder that holds no log file:
    ``~/.claude/projects`` linked from elsewhere).

    Raises:
        UserError: ``folder`` itself cannot be listed.
    """
    found: list[tuple[Path, str | None]] = []
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    if _walks_into(entry):
                        pending.append(current / entry.name)
                    elif links is not None and entry.is_symlink() and _is_dir(entry):
                        links.append(current / entry.name)
                    elif not _is_dir(entry) and (not entry.name.startswith(".") or entry.name.endswith(_HIDDEN_LOGS)):
                        walked = entry.name.lower().endswith(_WALKED) or _ARCHIVED_TRANSCRIPT.search(entry.name)
                        named = walked or entry.name.endswith(_FILE_SUFFIXES)
                        if named and (special := _not_a_file(entry)):
                            # A named pipe waits for a writer: opened, the walk would hang (listed, not read).
                            found.append((current / entry.name, f"{UNREADABLE}{special}"))
                        elif walked or (named and _is_binary_log(current / entry.name)):
                            found.append((current / entry.name, None))
                        elif entry.name.endswith(_FILE_SUFFIXES) and (kept := database_of(current / entry.name)):
                            # An agent's database of totals (Hermes Agent's state.db, Crush's crush.db,
                            # Goose's sessions.db): listed as skipped, saying why, as a headless output is.
                            found.append((current / entry.name, f"{HEADLESS}{kept.refusal()}"))
                        elif entry.name.endswith(_FILE_SUFFIXES) and (earlier := store_without_usage(current / entry.name)):
                            # A Copilot CLI session store of a schema before its usage table: listed as
                            # skipped, saying so (a folder of it alone was said to hold no *.db at all).
                            found.append((current / entry.name, f"{HEADLESS}{earlier}"))
        except OSError as exc:
            why = exc.strerror or str(exc)
            if current == folder:
                raise UserError(f"{current}: cannot read this folder ({why}); make it readable, or name the folders to audit") from None
            found.append((current, f"{UNREADABLE}{why}"))
    return sorted(found)


#: Hidden files a folder walk still looks at: aider's chat history, ``.aider.chat.history.md`` by default.
_HIDDEN_LOGS = (".chat.history.md",)
#: Names a folder walk offers to the formats kept in a binary file (OpenCode's ``opencode.db``);
#: such a file is a log only when its bytes say so (its ``-wal`` and ``-shm`` files never are).
_FILE_SUFFIXES = tuple(suffix for fmt in FORMATS.values() for suffix in fmt.file_suffixes)
#: Every name a folder walk reads, said once from the sets above (the error of a folder without a log).
WALKED_NAMES = (", ".join("*" + s for s in LOG_SUFFIXES) + f" (each also {', '.join(COMPRESSED_SUFFIXES)}), "
                + ", ".join("*" + s for s in dict.fromkeys(_FILE_SUFFIXES)))


def _why_not(reason: str | None, path: Path) -> str:
    """Why a walked file is no log, for the error of a folder that holds none."""
    if reason == "empty":
        why = no_records_why(path)
        return f"no log records, {why}" if why else "empty"
    if reason is not None and reason.startswith(HEADLESS):
        return reason[len(HEADLESS):]
    if reason is not None and reason.startswith(EMPTY_EXPORT):
        return reason[len(EMPTY_EXPORT):]
    if reason == GEMINI_KEYCHAIN:
        return GEMINI_KEYCHAIN_WHY
    return "no record of a format audit reads"


def _is_binary_log(path: Path) -> bool:
    """Whether a walked file is a log kept in a binary file: one a format's bytes detector claims,
    or one that claims it and cannot be read (the audit then says why, in one line)."""
    for fmt in FORMATS.values():
        if fmt.detect_file is None or not path.name.endswith(fmt.file_suffixes):
            continue
        try:
            if fmt.detect_file(path):
                return True
        except UserError:
            return True
    return False


def _is_dir(entry: os.DirEntry) -> bool:
    """A folder, or a link to one (``os.walk`` lists both among the folders)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


#: What a named pipe is said to be, named on the command line or found by a folder walk.
PIPE = "a named pipe, not a file"


def _not_a_file(entry: os.DirEntry) -> str | None:
    """What a walked entry is when it is no regular file and no folder (a named pipe, a device,
    a socket, or a link to one); None for a file, and for a link to nothing (said later)."""
    try:
        mode = entry.stat().st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    return PIPE if stat.S_ISFIFO(mode) else "a device or socket, not a file"


def _walks_into(entry: os.DirEntry) -> bool:
    """A folder the walk enters: a folder, not a link to one."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _skip_reason(path: Path) -> str | None:
    try:
        info = path.stat()
    except OSError as exc:  # a link to nothing, or a file gone since the folder was listed
        return f"{UNREADABLE}{_broken_link(path, exc) if path.is_symlink() else exc.strerror or exc}"
    if info.st_size == 0:
        return "empty"
    try:  # a file the user may not read (mode 000, another user's): skipped and warned, as above
        with path.open("rb"):
            pass
    except OSError as exc:
        return f"{UNREADABLE}{exc.strerror or exc}"
    return _one_object_reason(path)


def _broken_link(path: Path, exc: OSError) -> str:
    """What a walked link that cannot be followed is: one to nothing, or one in a loop."""
    return "a link in a loop, that leads back to itself" if exc.errno == errno.ELOOP else "a link to nothing"


#: Records of a walked ``*.json`` file looked at to tell a log from metadata.
WALK_DETECT_RECORDS = 25


def _first_values(path: Path) -> list[object] | None:
    """The first records of a walked ``*.json`` or ``*.jsonl`` file (None: another kind of file,
    or content the audit itself should refuse, naming the line)."""
    if _log_suffix(path.name) not in (".json", ".jsonl"):
        return None
    values: list[object] = []
    ends: list[int] = []  # zero bytes that end the file after whole values (no record lost): its values tell
    try:
        for record in iter_records(path, torn=ends):
            values.append(record.value)
            if len(values) >= WALK_DETECT_RECORDS:
                break
    except (CommentedJson, NestedArray):
        return _COMMENTED
    except UserError:
        return _KEYCHAIN if is_gemini_keychain(path) else None
    if ends and is_skip(ends[0]) and type(ends[0]) is not ZeroTail:
        return None  # (a tail not read, cut or torn: the audit reads the file and says so)
    return values


#: The skip reason of Gemini CLI's encrypted token store (:func:`is_gemini_keychain`).
GEMINI_KEYCHAIN = "gemini-keychain"

#: What a walk says of that store: why it is skipped, or why a folder of it alone holds no log.
GEMINI_KEYCHAIN_WHY = ("Gemini CLI's encrypted token store (IV:auth-tag:ciphertext in hex, as it writes "
                       "gemini-credentials.json, and mcp-oauth-tokens-v2.json before 2026-03: no JSON), not a log")

#: Gemini CLI's ``FileKeychain`` (core ``services/fileKeychain.ts``) writes its tokens to
#: ``~/.gemini/gemini-credentials.json`` encrypted (AES-256-GCM), as one line: the IV (12 or 16
#: bytes), the 16-byte auth tag and the ciphertext, each in hex, joined by colons; until 2026-03
#: its MCP ``FileTokenStorage`` wrote ``mcp-oauth-tokens-v2.json`` the same way (a 16-byte IV).
#: Not JSON, despite their names: a walk of a Gemini home skips them rather than refuse the
#: whole audit.
_KEYCHAIN_TEXT = re.compile(rb"[0-9a-f]{24}(?:[0-9a-f]{8})?:[0-9a-f]{32}:[0-9a-f]+\s*")

#: Bytes of a walked file that does not read as JSON looked at to tell the store from a broken log.
_KEYCHAIN_MAX = 1 << 20


def is_gemini_keychain(path: Path) -> bool:
    """Whether a walked ``*.json`` file that is no JSON is Gemini CLI's encrypted token store
    (:data:`_KEYCHAIN_TEXT`), told by its content: one line of three hex fields."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_KEYCHAIN_MAX + 1)
    except OSError:
        return False
    return len(head) <= _KEYCHAIN_MAX and _KEYCHAIN_TEXT.fullmatch(head) is not None


#: What :func:`_first_values` gives for Gemini CLI's encrypted token store.
_KEYCHAIN: list[object] = []


#: What :func:`_first_values` gives for JSON with comments (a ``tsconfig.json``, an editor's
#: settings) or an array of arrays (Cline's ``context_history.json``): not a log, skipped by a
#: walk as another tool's file.
_COMMENTED: list[object] = []


def _one_object_reason(path: Path) -> str | None:
    """Why a walk skips a ``*.json`` or ``*.jsonl`` file, decided by its content, never by its
    size or name: ``empty`` (an empty array), ``not-a-log`` when none of its first records is of
    a known format (an agent's headless output that reports no call's usage is ``headless: <why>``;
    metadata beside the logs: Claude Code's ``agent-<id>.meta.json``, OpenCode's
    ``session_diff`` and ``todo`` files; another tool's JSON lines: Claude Code's
    ``history.jsonl``, Cline's ``logs/hooks.jsonl``), ``run-journal`` (a Claude Code workflow run's
    ``journal.jsonl``, skipped quietly), ``read-with`` when it is one piece of a log another
    file reads (an OpenCode storage message or part, read with its session file); else None.
    A session kept as one small object (a Gemini CLI ``session-*.json``, an ``opencode export``)
    is a log."""
    values = _first_values(path)
    if values is None:
        return None
    if values is _KEYCHAIN:
        return GEMINI_KEYCHAIN
    if values is _COMMENTED:
        return "not-a-log"
    if not values:
        return "empty"
    if is_run_journal(path, values):
        return RUN_JOURNAL
    if isinstance(values[0], dict) and is_droid_session_header(values[0]):
        return HEADLESS + DROID_SESSION  # (before its messages, shaped like pi's, are classified)
    if isinstance(values[0], dict) and is_qoder_session_header(values[0]):
        return HEADLESS + QODER_SESSION  # (before its entries, Claude Code's, are classified)
    if isinstance(values[0], dict) and is_hermes_session(values[0]):
        return HEADLESS + HERMES_SESSION  # (before its model and messages, a chat-completions body's, are classified)
    for value in values:
        name = classify_record(value)
        if name is None:
            continue
        owner = FORMATS[name].read_with
        if owner is not None and isinstance(value, dict) and owner(path, value) is not None:
            return "read-with"
        return None
    said = empty_export(values[0])
    if said is not None:
        return EMPTY_EXPORT + said
    if any(isinstance(value, dict) and is_copilot_cli_event(value) for value in values) and not any(
            headless_output(value) is COPILOT_JSON for value in values):
        return HEADLESS + copilot_cli_refusal(path)  # (its refusal too, as audit says it of the file alone)
    if isinstance(values[0], dict) and is_legacy_session(values[0]):
        return HEADLESS + LEGACY_SESSION
    if isinstance(values[0], dict) and is_goose_session_header(values[0]):
        return HEADLESS + GOOSE_SESSION
    if isinstance(values[0], dict) and is_cursor_transcript_line(values[0]):
        return HEADLESS + CURSOR_TRANSCRIPT
    if isinstance(values[0], dict) and is_nanobot_session_header(values[0]):
        return HEADLESS + NANOBOT_SESSION
    kiro = next((found for value in values if isinstance(value, dict) and (found := kiro_session(value)) is not None), None)
    if kiro is not None:
        return HEADLESS + kiro
    continued = continue_cli.ide_session(values[0]) if isinstance(values[0], dict) else None
    if continued is not None:  # (the extensions' session, or the 2023 Python server's: each its own refusal)
        return HEADLESS + continued
    if isinstance(values[0], dict) and is_augment_session(values[0]):
        return HEADLESS + AUGMENT_SESSION
    for value in values:
        headless = headless_output(value)
        if headless is not None:
            return HEADLESS + headless.refusal(value)
    return "not-a-log"


def is_sidecar(path: Path) -> bool:
    """Whether a ``*.json`` file found by a folder walk is metadata beside the logs (Claude Code
    2.x writes ``subagents/agent-<id>.meta.json``): JSON of no known format. Such files are
    skipped and listed, never audited; a file named on the command line never is."""
    return _one_object_reason(path) == "not-a-log"
