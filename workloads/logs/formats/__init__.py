"""The log formats the audit reads: one module each, and the one table of them.

Everything that lists or picks a format reads :data:`FORMATS`: ``audit --input``'s choices and
help, ``replay --input``'s, the audit's description, detection on content, the check that a
file holds one format, and the reader a file goes to. Adding a format is one module exposing a
:class:`~.base.LogFormat`, one line here and its tests (``tests/unit/logs/test_format_table.py``
fails for a format without them).

Detection looks at a file's first records: each format's detector says how decisive a record is
of it (:class:`~.base.Evidence`); the most decisive match wins, and formats matching equally are
tried in the table's order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import cache
from pathlib import Path

from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers.base import ProviderRules
from prefixbench.workloads.logs.formats import (
    agent_traces,
    aider,
    amp,
    anthropic_bodies,
    chat_completions,
    claude_code,
    cline,
    codex,
    continue_cli,
    copilot_cli,
    gemini_cli,
    helicone,
    http_capture,
    inspect_ai,
    kimi_cli,
    langfuse,
    langsmith,
    litellm,
    managed_agents,
    mooncake,
    opencode,
    openhands,
    openhands_completions,
    openrouter,
    otel,
    pi,
    swe_agent,
    trae_agent,
    zed,
)
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat, Replay
from prefixbench.workloads.logs.formats.common import MAX_EPOCH_MS
from prefixbench.workloads.logs.formats.copilot_store import (LEGACY_SESSION, earlier_schema, home_store, is_legacy_session,
                                                              neither_holds_usage)
from prefixbench.workloads.logs.formats.headless import COPILOT_JSON, Headless, headless_output
from prefixbench.workloads.logs.formats.managed_agents import is_copilot_cli_event
from prefixbench.workloads.logs.formats.totals_only import (
    AUGMENT_SESSION,
    CURSOR_TRANSCRIPT,
    DROID_SESSION,
    GOOSE_SESSION,
    HERMES_SESSION,
    NANOBOT_SESSION,
    QODER_SESSION,
    is_augment_session,
    is_cursor_transcript_line,
    is_droid_session_header,
    is_goose_session_header,
    is_hermes_session,
    is_nanobot_session_header,
    is_qoder_session_header,
    kiro_session,
)
from prefixbench.workloads.logs.jsonlines import is_skip, tail_reason
from prefixbench.workloads.logs.records import READ_BUFFER, Record, iter_records
from prefixbench.workloads.logs.trace import FileSummary, TraceRequest

__all__ = ["FORMATS", "Evidence", "ImportContext", "LogFormat", "Replay"]

#: Every format, by name, in the order ``--input`` lists them (and detection breaks ties).
FORMATS: dict[str, LogFormat] = {
    fmt.name: fmt
    for fmt in (
        claude_code.FORMAT,
        http_capture.FORMAT,
        codex.FORMAT,
        pi.FORMAT,
        chat_completions.FORMAT,
        anthropic_bodies.FORMAT,
        mooncake.FORMAT,
        agent_traces.FORMAT,
        opencode.FORMAT,
        gemini_cli.FORMAT,
        swe_agent.FORMAT,
        otel.FORMAT,
        litellm.FORMAT,
        langfuse.FORMAT,
        langsmith.FORMAT,
        openrouter.FORMAT,
        helicone.FORMAT,
        openhands.FORMAT,
        cline.FORMAT,
        amp.FORMAT,
        kimi_cli.FORMAT,
        managed_agents.FORMAT,
        openhands_completions.FORMAT,
        zed.FORMAT,
        copilot_cli.FORMAT,
        aider.FORMAT,
        continue_cli.FORMAT,
        trae_agent.FORMAT,
        inspect_ai.FORMAT,
    )
}
#: Other names ``--input`` accepts, to the format they name.
ALIASES: dict[str, str] = {alias: fmt.name for fmt in FORMATS.values() for alias in fmt.aliases}
#: The formats ``prefixbench replay`` reads body for body, by their ``replay --input`` name: the
#: default first, then in the table's order.
REPLAYS: dict[str, Replay] = {
    replay.name: replay
    for replay in sorted((fmt.replay for fmt in FORMATS.values() if fmt.replay is not None), key=lambda r: not r.default)
}
#: Records looked at to detect a format.
DETECT_RECORDS = 25
#: Lines of a file checked for records of another format.
CHECK_LINES = 200


def input_choices() -> tuple[str, ...]:
    """``audit --input``'s choices: auto, every format, then the aliases."""
    return ("auto", *FORMATS, *ALIASES)


def input_help() -> str:
    """``audit --input``'s help: the default and what each alias names."""
    named = "; ".join(
        f"{' and '.join(fmt.aliases)} name{'s' if len(fmt.aliases) == 1 else ''} {fmt.name}"
        for fmt in FORMATS.values()
        if fmt.aliases
    )
    return f"log format (default: auto, detected from content; {named})"


def _distinct(words: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(words))


def nouns() -> str:
    """What the audit reads, plural, for its description ("Claude Code transcripts, HTTP captures, ...")."""
    return ", ".join(_distinct(fmt.nouns for fmt in FORMATS.values()))


def _none_of() -> str:
    """"a X, Y or Z": every kind of log, singular, for the unknown-format message."""
    names = _distinct(fmt.noun for fmt in FORMATS.values())
    return f"a {', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else f"a {names[0]}"


def replay_help() -> str:
    """``replay --input``'s help: each replayable format and what replay does with it."""
    items = [f"{replay.name} {replay.help}" for replay in REPLAYS.values()]
    listed = items[0] if len(items) == 1 else ", ".join(items[:-1]) + ", or " + items[-1]
    return f"format of FILE: {listed} (default: {next(iter(REPLAYS))})"


def resolve(name: str) -> LogFormat | None:
    """The format ``--input NAME`` names (an alias included); None for ``auto``.

    Raises:
        UserError: a name that is no format.
    """
    if name == "auto":
        return None
    found = FORMATS.get(ALIASES.get(name, name))
    if found is None:
        raise UserError(f"--input: unknown format {name!r} (known: auto, {', '.join(FORMATS)})")
    return found


#: Every format's name and detector, in the table's order (read once here: a file's first
#: lines are each classified by all of them).
_DETECTORS = tuple((fmt.name, fmt.detect) for fmt in FORMATS.values())
_WRAPPER = Evidence.WRAPPER
#: Weaker than any evidence (what no match is compared as).
_NO_MATCH = len(Evidence)


def classify_record(value: object) -> str | None:
    """The format one record belongs to, or None when it says nothing decisive."""
    if not isinstance(value, dict):
        return None
    best: str | None = None
    best_evidence = _NO_MATCH
    for name, detect in _DETECTORS:
        evidence = detect(value)
        if evidence is not None and evidence < best_evidence:
            best, best_evidence = name, evidence
            if evidence == _WRAPPER:
                break
    return best


#: The empty answers of the gateways' and tracers' APIs, each told by what its envelope names
#: (a bare ``[]`` or ``{"data": []}`` names no one): the test, and what such a file is said to be.
_EMPTY_EXPORTS = (
    (helicone.is_empty_answer, helicone.EMPTY_ANSWER),
    (langfuse.is_empty_page, langfuse.EMPTY_PAGE),
    (langsmith.is_empty_answer, langsmith.EMPTY_ANSWER),
)


def empty_export(value: object) -> str | None:
    """What a record is when it is an API answer of a known export that holds nothing (Helicone's
    ``{"data": [], "error": null}``, a Langfuse page of no observation, a LangSmith runs query of
    no run), said after ``file:line: ``; None for any other. Asked of a file's first record only
    where no record claims the file (a page of a saved series may be empty after full ones)."""
    return next((said for test, said in _EMPTY_EXPORTS if test(value)), None)


def file_format(path: Path) -> LogFormat | None:
    """The format of a log kept in a binary file (a database), from its bytes; None: not one.

    Raises:
        UserError: a file whose bytes claim such a format and that cannot be read as it.
    """
    for fmt in FORMATS.values():
        if fmt.detect_file is not None and fmt.detect_file(path):
            return fmt
    return None


#: What a GitHub Copilot CLI session is, and why it is no log to audit (said after ``file:line: ``,
#: and by a folder walk that skips one). Whatever its version: the sessions of late 2025
#: (``session-state/<id>.jsonl``, ``copilotVersion`` "unknown") log no token count at all, later
#: ones each call's output tokens (``assistant.message``) and the session's totals.
COPILOT_CLI = (
    "a GitHub Copilot CLI session (events.jsonl): it logs no call's prompt or cache counts (at most each call's "
    "output tokens, and the session's totals in session.shutdown): no request to audit; "
    "audit its session store instead (~/.copilot/session-store.db, Copilot CLI 1.0.73 on), or its "
    "OpenTelemetry file export (run copilot with COPILOT_OTEL_FILE_EXPORTER_PATH=FILE, then audit FILE: format otel)"
)


#: A note's (or a refusal's) last words that send the user to other files than the one read, and
#: which files they mean (given the pointing file's path, and another file's path and the format it
#: was read as). Where every file an audit read holds no call, its one line says what such a file
#: lacks instead of pointing at it (``reports.audit.nothing_to_audit``).
SIBLING_POINTERS: dict[str, Callable[[Path, Path, str], bool]] = {
    kimi_cli.WIRE_BESIDE: lambda path, other, _: other == path.parent / "wire.jsonl",
    gemini_cli.CHATS_BESIDE: lambda path, other, _: path.parent / "chats" in other.parents,
    gemini_cli.CHATS: lambda path, other, _: path.parent / "chats" in other.parents,
    gemini_cli.RUNTIME_BESIDE: lambda path, other, _: other == path.with_name(path.name.removesuffix(gemini_cli.RUNTIME_SUFFIX) + ".jsonl"),
    # aider writes its files in the folder it runs in (the repo's root): a chat history elsewhere
    # is another project's.
    aider.CHAT_HISTORY_INSTEAD: lambda path, other, read_as: read_as == "aider" and other.parent == path.parent,
}

def copilot_cli_refusal(path: Path) -> str:
    """Why the Copilot CLI session ``path`` is no log: :data:`COPILOT_CLI`, which points to the
    session store; where the store of the home it is in is there and holds no usage table (a
    Copilot CLI before 1.0.73), a line that says so of both and points only at what records the calls."""
    store = home_store(path)
    if store is None:
        return COPILOT_CLI
    try:  # (a walk asks once per session: a store is looked at again only once its files change)
        stat, wal = store.stat(), Path(f"{store}-wal")
        # Inode and change time too: a copy made with its times kept (``cp -p``) or a file put in
        # its place keeps size and mtime, never both of these.
        key = (str(store), stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size, _stat_key(wal))
    except OSError:
        return COPILOT_CLI
    if key not in _STORE_SCHEMAS:
        if len(_STORE_SCHEMAS) >= 64:
            _STORE_SCHEMAS.clear()
        _STORE_SCHEMAS[key] = earlier_schema(store)
    schema = _STORE_SCHEMAS[key]
    return COPILOT_CLI if schema is None else neither_holds_usage(schema, str(store))


def _stat_key(path: Path) -> tuple[int, int, int, int] | None:
    """A file's inode, times of change and size (None: no regular file there)."""
    if not path.is_file():
        return None
    stat = path.stat()
    return (stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size)


#: The schema without a usage table of the session stores :func:`copilot_cli_refusal` looked at
#: (None: not such a store), by path, inode, size and times of change (its write-ahead log's too).
_STORE_SCHEMAS: dict[tuple, str | None] = {}


def detect_format(path: Path) -> LogFormat:
    """The log format of a file, from the content of its first records (or its bytes, for a
    format kept in a binary file).

    Raises:
        UserError: ``file:line`` when the content matches no known format (or is empty); an
            agent's output that reports no call's usage (a Copilot CLI session, a headless
            output of :mod:`.headless`) is named, with where the agent logs each call.
    """
    binary = file_format(path)
    if binary is not None:
        return binary
    found, seen, first_line, refusal = _first_look(path)
    if found is not None:
        return found
    if seen == 0:
        raise UserError(f"{path}:1: {no_records(path)}")
    if refusal is not None:
        raise UserError(refusal)
    raise UserError(f"{path}:{first_line}: unknown log format (not {_none_of()}); audit reads only these")


#: The first bytes of a compressed log (gzip, bzip2, xz, zstd): its text is not looked at here.
_COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")


def no_records(path: Path) -> str:
    """Why a text file holds no record: the words of the error of such a file named (as
    :func:`detect_format` says it), and of the note of one a folder walk skips."""
    why = no_records_why(path)
    return f"no log records: {why}" if why else "empty file, no log records"


def no_records_why(path: Path) -> str:
    """Why a file of no record holds none, where it is no empty file: ``only blank lines``, or
    ``an empty JSON array`` (``[]``, which is no empty file); "" for an empty file (or one
    compressed, whose text is not looked at here)."""
    try:
        with path.open("rb") as raw:
            head = raw.read(1 << 16)
    except OSError:
        head = b""
    if not head or head.startswith(_COMPRESSED_MAGIC):
        return ""
    text = head.removeprefix(b"\xef\xbb\xbf").strip()
    if not text:
        return "only blank lines"
    if text.startswith(b"["):
        return "an empty JSON array"
    return ""


def _first_look(path: Path) -> tuple[LogFormat | None, int, int, str | None]:
    """What the first records of a text file are: the format the first claimed record is of (or
    None), the records seen, the first one's line, and, when no format claims any, the refusal
    (``file:line: ...``) of an agent's output that reports no call's usage (None for any other)."""
    seen = 0
    first_line = 1
    copilot_line: int | None = None
    goose_line: int | None = None
    headless: tuple[int, Headless, dict] | None = None
    empty: str | None = None
    for record in iter_records(path, torn=[]):
        if seen == 0:
            first_line = record.line
        seen += 1
        if seen == 1 and isinstance(record.value, dict) and is_droid_session_header(record.value):
            # (its messages are shaped like pi's: told before they are classified)
            return None, seen, first_line, f"{path}:{record.line}: {DROID_SESSION}"
        if seen == 1 and isinstance(record.value, dict) and is_qoder_session_header(record.value):
            # (its entries are Claude Code's: told before they are classified)
            return None, seen, first_line, f"{path}:{record.line}: {QODER_SESSION}"
        if seen == 1 and isinstance(record.value, dict) and is_hermes_session(record.value):
            # (its model and messages are a chat-completions body's: told before it is classified)
            return None, seen, first_line, f"{path}:{record.line}: {HERMES_SESSION}"
        guess = classify_record(record.value)
        if guess is not None:
            return FORMATS[guess], seen, first_line, None
        if copilot_line is None and isinstance(record.value, dict) and is_copilot_cli_event(record.value):
            copilot_line = record.line
        if seen == 1 and isinstance(record.value, dict) and is_goose_session_header(record.value):
            goose_line = record.line
        if seen == 1 and isinstance(record.value, dict) and is_legacy_session(record.value):
            return None, seen, first_line, f"{path}:{record.line}: {LEGACY_SESSION}"
        if seen == 1 and isinstance(record.value, dict) and is_cursor_transcript_line(record.value):
            return None, seen, first_line, f"{path}:{record.line}: {CURSOR_TRANSCRIPT}"
        if seen == 1 and isinstance(record.value, dict) and is_nanobot_session_header(record.value):
            return None, seen, first_line, f"{path}:{record.line}: {NANOBOT_SESSION}"
        lacking = opencode.export_lacking(record.value) if seen == 1 and isinstance(record.value, dict) else None
        if lacking is not None:
            return None, seen, first_line, f"{path}:{record.line}: {lacking}"
        kiro = kiro_session(record.value) if isinstance(record.value, dict) else None
        if kiro is not None:
            return None, seen, first_line, f"{path}:{record.line}: {kiro}"
        refused = continue_cli.ide_session(record.value) if seen == 1 and isinstance(record.value, dict) else None
        if refused is not None:
            return None, seen, first_line, f"{path}:{record.line}: {refused}"
        if seen == 1 and isinstance(record.value, dict) and is_augment_session(record.value):
            return None, seen, first_line, f"{path}:{record.line}: {AUGMENT_SESSION}"
        if seen == 1 and (said := empty_export(record.value)) is not None:
            empty = f"{path}:{record.line}: {said}"
        if headless is None:
            found = headless_output(record.value)
            if found is not None:
                headless = (record.line, found, record.value)  # type: ignore[assignment]
        if seen >= DETECT_RECORDS:
            break
    if empty is not None:
        return None, seen, first_line, empty
    # (Copilot CLI's -p JSON output is named as such even where its events are its events.jsonl's too.)
    if copilot_line is not None and (headless is None or headless[1] is not COPILOT_JSON):
        return None, seen, first_line, f"{path}:{copilot_line}: {copilot_cli_refusal(path)}"
    if goose_line is not None:
        return None, seen, first_line, f"{path}:{goose_line}: {GOOSE_SESSION}"
    if headless is not None:
        return None, seen, first_line, f"{path}:{headless[0]}: {headless[1].refusal(headless[2])}"
    return None, seen, first_line, None


def _checked(path: Path, records: Iterable[Record], fmt: LogFormat) -> Iterator[Record]:
    """The records, a record of another known format among the first lines being bad input
    (a file is one format; detection reads as many), and so is a file none of whose first
    records is of ``fmt`` (``--input`` naming a format the content is not: the error names the
    format the content is, so the hint is an ``--input`` value that exists).

    Past the first lines, each new kind of record (its ``type``, or its keys when untyped) is
    classified once: a record the format does not know that an agent's own log does (a
    ``type``d entry or a wrapper of another format) is another log appended to this one (two
    files concatenated), bad input, where its reader would have skipped it unseen."""
    own = False
    first_line = 1
    first: object = None
    seen = 0
    kinds: set[object] = set()
    for record in records:
        if seen == 0:
            first_line, first = record.line, record.value
        seen += 1
        value = record.value
        if record.line <= CHECK_LINES:
            other = classify_record(value)
            if other is not None and other != fmt.name and other not in fmt.admits:
                raise UserError(f"{path}:{record.line}: {_a(other)} record in a file read as {fmt.name} (--input {other} reads it)")
            if not own and isinstance(value, dict):
                own = other is not None or fmt.detect(value) is not None
        elif not own:
            _not_of(path, first_line, fmt, first)
        elif type(value) is dict:
            kind = value.get("type")
            if not isinstance(kind, str):
                kind = frozenset(value)
            if kind not in kinds:
                kinds.add(kind)
                _appended(path, record, fmt)
        yield record
    if seen and not own:
        _not_of(path, first_line, fmt, first)


def _appended(path: Path, record: Record, fmt: LogFormat) -> None:
    """Refuse a record past the first lines that is another log's (see :func:`_checked`)."""
    value = record.value
    if fmt.detect(value) is not None:
        return
    for other in FORMATS.values():
        if other.name == fmt.name or other.name in fmt.admits:
            continue
        evidence = other.detect(value)
        if evidence is not None and evidence <= Evidence.ENTRY:
            raise UserError(
                f"{path}:{record.line}: {_a(other.name)} record in a file read as {fmt.name}: another log appended "
                f"to this one? (a file is one log; split it, or audit each part)"
            )


def _a(name: str) -> str:
    """``a codex``, ``an http-capture``: the article a format's name takes."""
    return f"an {name}" if name[:1] in "aeio" or name.startswith("http") else f"a {name}"


def _not_of(path: Path, line: int, fmt: LogFormat, first: object = None) -> None:
    """Refuse a file read as ``fmt`` whose first records are of no format audit reads (one that
    is an OpenCode export but for a key of its info, ``first`` its record: naming what it lacks)."""
    lacking = opencode.export_lacking(first) if isinstance(first, dict) else None
    if lacking is not None:
        raise UserError(f"{path}:{line}: {lacking}")
    raise UserError(f"{path}:{line}: not {noun_a(fmt.noun)} (no record of it among the first lines; --input auto detects what it is)")


def noun_a(noun: str) -> str:
    """``a Codex rollout``, ``an OpenCode session``, ``an HTTP capture``: a format's noun with its
    article (by the sound of its first letter: an initialism reads letter by letter)."""
    first = noun.split()[0] if noun else ""
    vowel = first[:1].lower() in "aeiou" or (first.isupper() and first[:1] in "FHLMNRSX")
    return f"{'an' if vowel else 'a'} {noun}"


def import_file(path: Path, fmt: LogFormat, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """Read one file of a known format into its requests."""
    binary = file_format(path)
    if binary is None and fmt.claims_file is not None and fmt.claims_file(path):
        binary = fmt
    if binary is not None:
        if binary is not fmt or fmt.read_file is None:
            raise UserError(f"{path}: {noun_a(binary.noun)} read as {fmt.name} (--input {binary.name} reads it)")
        return _timed(fmt.read_file(path, ctx))
    torn: list[int] = []
    try:
        requests, summary = fmt.read(path, _checked(path, iter_records(path, ctx.progress, torn, buffering=READ_BUFFER), fmt), ctx)
    except UserError as exc:
        # --input naming a format for an agent's output that reports no call's usage: its reader
        # stopped on a record it does not know; the refusal says what the file is instead.
        try:
            refusal = _first_look(path)[3]
        except UserError:  # (the first records are bad input themselves: the reader's line stands)
            raise exc from None
        if refusal is not None:
            raise UserError(refusal) from None
        raise
    if torn and not is_skip(torn[0]):  # a whole last record, read, then zeros: a note, no record skipped
        summary = replace(summary, notes=(*summary.notes, f"line {int(torn[0])}: {tail_reason(torn[0])}"))
    elif torn:  # a live log: its last line is still being written (or zeros the writer never filled)
        summary = replace(summary, skipped=(*summary.skipped, (int(torn[0]), tail_reason(torn[0]))))
    return _timed((requests, summary))


def _timed(read: tuple[list[TraceRequest], FileSummary]) -> tuple[list[TraceRequest], FileSummary]:
    """``read``, once every request's times are checked to be plausible epoch ms (a reader that
    took a number as it came would crash the pricing, which dates each request, far later), and
    a read step given to each request its provider's cache counted in another step at its time
    (:meth:`~prefixbench.simulator.providers.base.ProviderRules.dated_step`)."""
    requests = read[0]
    dated = _dated_steps()
    for k, r in enumerate(requests):
        for name in ("sent_ms", "ready_ms", "done_ms"):
            value = getattr(r, name)
            if value is not None and not 0 <= value < MAX_EPOCH_MS:
                raise UserError(f"{r.file}:{r.line}: timestamp {value!r:.40} is not a plausible time")
        if not r.read_step and r.provider in dated:
            step = dated[r.provider].dated_step(r.sent_ms)
            if step:
                requests[k] = replace(r, read_step=step)
    return read


@cache
def _dated_steps() -> dict[str, ProviderRules]:
    """The providers whose read step changed over time, by name (made once: the rules are fixed)."""
    from prefixbench.simulator.providers import PROVIDERS

    return {rules.name: rules for rules in PROVIDERS.values() if rules.block_tokens_before}
