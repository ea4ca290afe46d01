"""Aider's chat history (``.aider.chat.history.md``, or the file ``--chat-history-file`` names).

Aider (Aider-AI/aider) appends everything it shows to this Markdown file (``io.py``
``append_chat_history``): each run starts with ``# aider chat started at YYYY-MM-DD HH:MM:SS``,
the user's input is written as ``#### `` lines, aider's own output as ``> `` lines (blockquoted,
ending in two spaces), the model's reply as plain text. After each message sent to the model,
aider writes its usage report (``base_coder.py`` ``calculate_and_show_tokens_and_cost``):

* ``> Tokens: 3.2k sent, 1.2k cache write, 2.0k cache hit, 245 received. Cost: $0.01 message,
  $0.02 session.`` from aider 0.51 (August 2024) on; ``cache write`` and ``cache hit`` are left
  out where they are 0, and where both are there the ``Cost:`` part is on the next line (with
  no ``> ``: not read as the next reply's text);
* ``> Tokens: 12,345 sent, 678 received. Cost: $0.01 message, $0.02 session.`` in aider 0.48 to
  0.50 (exact counts), ``Cost: $0.012345 request, ...`` in 0.46 and 0.47; no ``Cost:`` part for a
  model aider has no price for;
* the development versions of August 2024 (0.50.x-dev, as aider's own
  ``tests/fixtures/chat-history.md`` keeps them): ``492 sent, 1,278 cached, 72 received``, then
  ``cache write`` and ``cache hit``, exact, sometimes with ``, cache costs not included``.

How the counts read (aider's own code):

* Before 0.51.0 (those development versions) the cache counts are outside ``sent`` (litellm's
  Anthropic prompt tokens, then the uncached input, and aider added nothing): the prompt is
  ``sent`` + hit + write; a run printing ``N cached`` prints no write (unknown, inside the
  uncached part).
* From 0.51.0 ``sent`` is meant as the whole prompt: aider adds the cache write to the prompt tokens litellm
  reports (and, in aider 0.51 to 0.62, the cache hit too). It is read as cache hit + cache write
  + uncached, ``uncached = sent - hit - write`` (at least 0: rounding can make the parts exceed
  the whole); ``received`` is the output. DeepSeek's ``prompt_cache_hit_tokens`` is the hit.
* On litellm's Anthropic route (``claude-*``, ``anthropic/*`` models) litellm's prompt tokens
  held the write and the hit from about 1.51 to 1.65.3 (the hit only from 1.65.7): aider 0.63.0
  to 0.81.2 (litellm 1.51.2 to 1.65.3) count the write twice in ``sent``, aider 0.61 and 0.62 the
  hit and the write twice (aider 0.63's "Remove double-counting of cached tokens"). A run's
  ``> Aider vX.Y.Z`` line names its version: such a call is read with each counted once
  (:data:`DOUBLED`); a run naming no version is read as aider means ``sent``.
* Counts of 1,000 and more are rounded as aider prints them (``format_tokens``: ``3.2k`` to the
  hundred below 10,000, ``12k`` to the thousand above): read as printed, 12k as 12,000.
* A streamed response (aider's default) carries no usage: aider then counts ``sent`` and
  ``received`` itself with the model's tokenizer, and prints no cache count. A session none of
  whose lines has a cache count is read as cache not reported; in a session where some do
  (``--no-stream``), a line without one reported 0 read and 0 written.
* One ``Tokens`` line is one message: where a reply hit its output limit and aider continued it
  (assistant prefill), the calls' ``sent`` and ``received`` are summed into one line, with the
  last call's cache counts.

A file whose first line starts no run is aider's only under aider's own name
(``*.chat.history.md``) and when a run starts in its first bytes (a history whose head was cut
or edited): the text before its first run is not read (a ``Tokens`` line there is skipped, its
model unknown). A run no announcement names the model of reads as model ``unknown``. A history
kept compressed under a Markdown name (``*.md.gz``; gzip, bzip2, xz, zstd: by its first bytes, as
a JSON log's) is read decompressed when named, and one in UTF-16 after its byte-order mark (a copy Windows PowerShell 5 wrote); a
byte-order mark is left out; its lines are counted at newlines only (as an editor counts them).

The model is the run's announcement (``> Main model: NAME with ... edit format``, ``> Model:``,
``> Models: NAME with ..., weak model ...`` before aider 0.40), again after ``/model``; the
provider is the model name's (:func:`~prefixbench.simulator.providers.provider_of_model`), but
through a host running open models itself (litellm's ``ollama/``, ``ollama_chat/``,
``lm_studio/``, ``hosted_vllm/`` and its other engines a user runs:
:func:`~prefixbench.simulator.providers.vllm.litellm_engine`) provider unknown,
and unpriced whatever the model's name (the engine is its ``upstream``: no vendor bills it).
In architect mode (``with architect edit format``) the first ``Tokens`` line after the user's
input is the architect's, later ones (until the next input) are the editor's (``> Editor
model: NAME``), whose coder starts with an empty chat: a lane of its own.

The file keeps no time per call, only each run's start: calls are read in order, without times
(no idle gap, no TTL expiry is judged); DeepSeek's reads count in the step of the run's start (64
tokens before V4). Each run is a lane, named by its start; ``/clear`` and
``/reset`` start the chat anew. Calls with no ``Tokens`` line are not in the log: the weak
model's (commit messages, chat summaries) and ``--cache-keepalive-pings``.

Aider's other logs carry no call's cache counts and are refused in one line each: its LLM
history (``--llm-history-file``: ``TO LLM <time>`` / ``LLM RESPONSE <time>`` blocks, the
messages and no usage) and its analytics log (``--analytics-log``: JSON lines ``{event,
properties, user_id, time}``, whose ``message_send`` events keep a message's prompt and completion
tokens and cost, no cache count).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import ANTHROPIC, UNKNOWN, provider_of_model
from prefixbench.simulator.providers.base import MAX_COUNT, count
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.simulator.providers.vllm import litellm_engine
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.history import make_message
from prefixbench.workloads.logs.jsonlines import COMPRESSION_MAGIC, is_zstd
from prefixbench.workloads.logs.records import COMPRESSED_SUFFIXES, Record, read_whole
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LoggedMessage, Prefix, TraceRequest

NAME = "aider"
#: A run's first line (after a blank one).
STARTED = "# aider chat started at "
#: Bytes of a file's head looked at to tell a chat history (or an LLM history) by its content.
HEAD_BYTES = 4096
#: Largest chat history read (bytes).
MAX_BYTES = 2 << 30

_COUNT = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d)?k|\d+)"
_TOKENS = (
    rf"> Tokens: {_COUNT} sent(?:, {_COUNT} cached)?(?:, {_COUNT} cache write)?(?:, {_COUNT} cache hit)?, {_COUNT} received"
    r"(?:, cache costs not (?:included|available))?\.(?: Cost: .*)?"
)
_STARTED = r"# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)"
#: The cost aider puts on a line of its own under a Tokens line printing both cache counts
#: (written without the '> ': its chat history blockquotes a report's first line only).
_COST = r"Cost: \$[\d.]+ (?:message|request), \$[\d.]+ session\."
_STARTED_IN = re.compile(rb"(?m)^# aider chat started at \d{4}-")
#: The end of aider's own name for the file (``.aider.chat.history.md``, ``--chat-history-file``'s
#: usual ``<name>.chat.history.md``).
NAMED = ".chat.history.md"
#: Aider versions before this one printed their cache counts outside 'sent' (development versions
#: 0.50.x-dev of August 2024: 0.51.0 put them inside).
OUTSIDE_BEFORE = (0, 51, 0)
#: (Aider 0.49 to 0.50.x-dev, 2024-08-12 to 08-19, wrote '\u26a1' after the model when it cached
#: prompts and '\u267e\ufe0f ' before the edit format, infinite output: markers, not names.)
_MODEL = r"> (?:Main model|Model|Models): (\S+?)\u26a1? (?:with|using) (?:\u267e\ufe0f )?(\S+) edit format"
_EDITOR = r"> Editor model: (\S+) with"
_VERSION = r"> Aider v(\d+)\.(\d+)\.(\d+)"
#: Aider versions whose ``sent`` counts a part twice on litellm's Anthropic route (``claude-*``,
#: ``anthropic/*``): ``(first, last, hit twice, write twice)``. litellm 1.52 to 1.65.3 put the cache
#: read and write in the prompt tokens (its Anthropic transformation, read in litellm 1.53.9,
#: 1.61.9, 1.63.11, 1.65.0, 1.65.1 and 1.65.3; 1.65.7 on puts the read only), to which aider
#: adds the write (and, in 0.61 and 0.62, the hit: aider 0.63's "Remove double-counting of cached
#: tokens"). Aider 0.61 to 0.63.1 pin litellm 1.51.2, taken as its successors (not read).
DOUBLED = (
    ((0, 61, 0), (0, 62, 99), True, True),
    ((0, 63, 0), (0, 81, 2), False, True),
)
_LLM_HISTORY = re.compile(rb"\A(?:TO LLM|LLM RESPONSE) \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")

#: Where the refusals of aider's other files point (``formats.SIBLING_POINTERS``: a chat history).
CHAT_HISTORY_INSTEAD = "; audit aider's chat history instead (.aider.chat.history.md)"
#: What aider's LLM history is, and why it is no log to audit.
LLM_HISTORY = (
    "an aider LLM history (--llm-history-file): it keeps the messages sent and received and their times, "
    f"no call's usage: no request to audit{CHAT_HISTORY_INSTEAD}"
)
#: What aider's analytics log is, and why it is no log to audit.
ANALYTICS = (
    "an aider analytics log (--analytics-log): its message_send events keep each message's prompt and "
    f"completion tokens and cost, no cache count: no request to audit{CHAT_HISTORY_INSTEAD}"
)


def detect(value: dict) -> Evidence | None:
    """A line of aider's analytics log (``{event, properties, user_id, time}``): claimed only to
    be refused, saying what it is."""
    if isinstance(value.get("event"), str) and isinstance(value.get("properties"), dict) and "user_id" in value and "time" in value:
        return Evidence.SHAPE
    return None


#: UTF-16 byte-order marks (little and big endian): Windows PowerShell 5's ``>`` writes a copy so.
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _decoded(data: bytes) -> str:
    """A history's text: UTF-8 (aider's), or UTF-16 after its byte-order mark; either mark left out."""
    if data.startswith(_UTF16_BOMS):
        return data.decode("utf-16", errors="replace")  # (the codec reads the mark and drops it)
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _plain_name(path: Path) -> str:
    """A file's name less its compression's suffix (``.aider.chat.history.md.gz``: ``.aider.chat.history.md``)."""
    name = path.name
    for packed in COMPRESSED_SUFFIXES:
        name = name.removesuffix(packed)
    return name


def _head(path: Path) -> bytes:
    """A file's first bytes as UTF-8, with no byte-order mark; decompressed where it is compressed
    under a Markdown name (``*.md.gz``...: other compressed files, JSON logs, are not decompressed
    again here: a bzip2 block costs about 12 ms)."""
    try:
        with path.open("rb") as raw:
            head = raw.read(HEAD_BYTES)
        if is_zstd(head) or any(head.startswith(magic) for magic, _ in COMPRESSION_MAGIC):
            if not _plain_name(path).endswith(".md"):
                return b""
            head = read_whole(path, HEAD_BYTES)[:HEAD_BYTES]
    except (OSError, UserError):  # (unreadable, or compressed data cut short: not told as aider's here)
        return b""
    return _decoded(head).encode("utf-8", errors="replace") if head.startswith(_UTF16_BOMS) else head.removeprefix(b"\xef\xbb\xbf")


def is_chat_history(path: Path) -> bool:
    """Whether ``path`` is an aider chat history: its first non-blank line starts a run; or, under
    aider's own name (``*.chat.history.md``), a run starts in its first bytes (a history whose head
    was cut or edited).

    Raises:
        UserError: an aider LLM history (what it is, and what to audit instead).
    """
    if not path.is_file():
        return False
    head = _head(path)
    if _LLM_HISTORY.match(head):
        raise UserError(f"{path}:1: {LLM_HISTORY}")
    if head.lstrip(b"\r\n").startswith(STARTED.encode()):
        return True
    return _plain_name(path).endswith(NAMED) and _STARTED_IN.search(head) is not None


def has_a_run(path: Path) -> bool:
    """Whether a run starts anywhere in ``path``'s first bytes: a file named with ``--input aider``
    is read as a chat history so, text before its first run (a note, a pasted header) skipped."""
    return path.is_file() and _STARTED_IN.search(_head(path)) is not None


class _Run:
    """One aider run (a lane): its model, and its calls' chains."""

    def __init__(self, lane: str, started_ms: int) -> None:
        self.lane = lane
        #: Its start (the file's only time, aider's local clock read as UTC), epoch ms.
        self.started_ms = started_ms
        self.model = NO_MODEL
        self.edit_format = ""
        self.editor = ""
        #: The node the next call of the main chat (and of the editor's chat) extends.
        self.parent: str | None = None
        self.editor_parent: str | None = None
        #: Tokens lines since the user's last input (architect mode: the first is the architect's).
        self.since_input = 0
        #: Whether any of its Tokens lines prints a cache count.
        self.reports_cache = False
        #: Whether its lines print the hit as "N cached" (outside 'sent', no write printed).
        self.cached_variant = False
        #: The aider version its announcement names (None: not named).
        self.version: tuple[int, int, int] | None = None


class _Call(NamedTuple):
    run: _Run
    line: int
    sent: int
    write: int
    hit: int
    received: int
    #: Whether ``sent`` counts the hit, and the write, twice (:data:`DOUBLED`).
    hit_twice: bool
    write_twice: bool
    #: The printed cache counts are outside 'sent' (aider before 0.51.0: :data:`OUTSIDE_BEFORE`).
    outside: bool
    lane: str
    editor: bool
    model: str
    prefix: Prefix
    events: tuple[tuple[str, str], ...]
    messages: tuple[LoggedMessage, ...]


#: The Tokens line's counts, in the order of its pattern's groups.
_FIELDS = ("sent", "cached", "cache write", "cache hit", "received")


def _count(text: str, where: str, field: str) -> int:
    """A count as aider printed it: ``12,345``, ``3.2k`` (3,200), ``12k`` (12,000) or ``245``.

    Raises:
        UserError: a count no model's prompt reaches (``where``: ``file:line``).
    """
    digits = text.replace(",", "").removesuffix("k")
    if len(digits.split(".")[0]) > len(str(MAX_COUNT)):
        # (told before converting: so many digits make no int, or an infinite float)
        raise UserError(f"{where}: {field} is not a plausible count ({text[:20]}... > {MAX_COUNT:,})")
    value = round(float(digits) * 1000) if text.endswith("k") else int(digits)
    return count(value, where, field)


#: Commands whose text aider sends as the user's message (another chat mode for one message).
_SENT_COMMANDS = ("/ask", "/code", "/architect", "/context")


def _flush(user: list[str], pending: list[LoggedMessage], events: list[tuple[str, str]], run: _Run) -> None:
    """The user's input, ended: a user turn unless it is a command (``/add``, ``/model``...)."""
    run.since_input = 0
    first = user[0].split(" ", 1)[0]
    if first.startswith("/") and first not in _SENT_COMMANDS:
        return
    pending.append(make_message("user", "\n".join(user)))
    events.append(("user_turn", ""))


def _text(path: Path) -> str:
    """The history's text (decompressed, as :func:`_head` reads it)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    data = b"" if size > MAX_BYTES else read_whole(path, MAX_BYTES)
    if size > MAX_BYTES or len(data) > MAX_BYTES:
        raise UserError(f"{path}: larger than {MAX_BYTES:,} bytes; split it by run (# aider chat started at)")
    return _decoded(data)


class _LinePatterns(NamedTuple):
    """The patterns of a chat history's lines, compiled when a history is first read (not at
    start-up: every audit imports this module, few read an aider history)."""

    cost: re.Pattern[str]
    started_at: re.Pattern[str]
    tokens_line: re.Pattern[str]
    model_line: re.Pattern[str]
    editor_line: re.Pattern[str]
    version_line: re.Pattern[str]


@functools.cache
def _line_patterns() -> _LinePatterns:
    return _LinePatterns(*map(re.compile, (_COST, _STARTED, _TOKENS, _MODEL, _EDITOR, _VERSION)))


def _calls(path: Path) -> tuple[list[_Call], int, int, int, list[tuple[int, str]]]:
    """The file's calls in order, its runs, how many Tokens lines print a rounded count, the lines
    of text before its first run and the Tokens lines among them (skipped).

    Raises:
        UserError: ``file:line`` of a line aider does not write where it writes its own (a run's
            first line, a Tokens line).
    """
    patterns = _line_patterns()
    calls: list[_Call] = []
    skipped: list[tuple[int, str]] = []
    runs = rounded = before = 0
    names: dict[str, int] = {}
    run: _Run | None = None
    user: list[str] = []
    reply: list[str] = []
    pending: list[LoggedMessage] = []
    events: list[tuple[str, str]] = []
    in_fence = False
    after_tokens = False  # the line before was a Tokens line
    # (at newlines only, as aider writes them and an editor counts them: str.splitlines also breaks
    # at a form feed, U+2028, U+0085... a reply may hold, and the line named was another)
    for number, raw in enumerate(_text(path).split("\n"), 1):
        line = raw.rstrip()
        if after_tokens and patterns.cost.fullmatch(line):
            after_tokens = False
            continue  # (aider's own report, not the next reply's text)
        after_tokens = False
        started = patterns.started_at.fullmatch(line) if line.startswith(STARTED) else None
        tokens = patterns.tokens_line.fullmatch(line) if line.startswith("> Tokens: ") else None
        if in_fence and started is None and tokens is None:
            # Inside a reply's code block, a line shaped like aider's own but not aider's is the reply's.
            if line.startswith("```"):
                in_fence = False
            reply.append(line)
            continue
        if line.startswith(STARTED):
            if started is None:
                raise UserError(f"{path}:{number}: a run's first line without its time ('{STARTED}YYYY-MM-DD HH:MM:SS')")
            runs += 1
            name = started.group(1)
            try:
                started_ms = int(datetime.strptime(name, "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc).timestamp() * 1000)
            except ValueError:  # (shaped as aider's time, but no day on the calendar: month 13, February 30, year 0)
                raise UserError(f"{path}:{number}: a run's first line whose time is no date ('{name}')") from None
            names[name] = names.get(name, 0) + 1
            run = _Run(name if names[name] == 1 else f"{name}#{names[name]}", started_ms)
            user, reply, pending, events, in_fence = [], [], [], [], False
            continue
        if run is None:
            # (only in a history told by its name: its head cut or edited)
            before += bool(line)
            if line.startswith("> Tokens: "):
                skipped.append((number, f"a Tokens line before the file's first run ('{STARTED.strip()}'): its model unknown, not read"))
            continue
        if line.startswith("> Tokens: "):
            if tokens is None:
                raise UserError(f"{path}:{number}: a Tokens line aider does not write: {line[:120]!r}")
            in_fence = False  # (a reply's unclosed fence ends with the reply)
            if user:
                _flush(user, pending, events, run)
                user = []
            sent, cached, write, hit, received = (_count(g, f"{path}:{number}", field) if g else 0
                                                  for g, field in zip(tokens.groups(), _FIELDS))
            rounded += any(g is not None and g.endswith("k") for g in tokens.groups())
            run.reports_cache |= any(tokens.group(n) is not None for n in (2, 3, 4))
            if tokens.group(2) is not None:
                # Aider's development versions of August 2024 (0.50.2-dev) printed the hit as
                # "cached", outside 'sent' (litellm's Anthropic prompt tokens, then the uncached
                # input), and no write: the whole prompt is sent + cached.
                run.cached_variant = True
                hit = cached
            # The reply above is this call's response: the next call's prompt holds it.
            response = [make_message("assistant", "\n".join(reply))] if reply else []
            reply = []
            editor = run.edit_format == "architect" and bool(run.editor) and run.since_input > 0
            run.since_input += 1
            model = run.editor if editor else run.model
            node = f"aider:{run.lane}#{number}"
            if editor:
                # The editor's coder starts each edit with an empty chat: its first call starts a chain.
                parent = run.editor_parent if run.since_input > 2 else None
                run.editor_parent = node
                head = f"aider:editor:{model}"
            else:
                parent, run.parent = run.parent, node
                head = f"aider:{run.edit_format}:{model}"
            lane = f"{run.lane} editor" if editor else run.lane
            hit_twice, write_twice = doubled(run.version, model)
            outside = tokens.group(2) is not None or (run.version is not None and run.version < OUTSIDE_BEFORE)
            calls.append(_Call(run, number, sent, write, hit, received, hit_twice, write_twice, outside, lane, editor, model,
                               Prefix(head, node, parent, max(1, len(pending))), tuple(events), tuple(pending)))
            pending, events = response, []
            after_tokens = True
            continue
        if line.startswith("```"):
            in_fence = True  # (closed above)
            reply.append(line)
            continue
        if line.startswith("#### "):
            if reply:
                pending.append(make_message("assistant", "\n".join(reply)))
                reply = []
            command = line[5:].strip()
            if not user and command.split(" ", 1)[0] in ("/clear", "/reset"):
                run.parent = None  # the chat starts anew (the files and repo map stay: the head)
                pending = []
            user.append(command)
            continue
        if user:
            _flush(user, pending, events, run)
            user = []
        if line.startswith("> "):
            model = patterns.model_line.match(line)
            if model is not None:
                if run.model != NO_MODEL and model.group(1) != run.model:
                    events.append(("model_change", model.group(1)))
                run.model, run.edit_format = model.group(1), model.group(2)
                continue
            version = patterns.version_line.match(line)
            if version is not None:
                run.version = (int(version.group(1)), int(version.group(2)), int(version.group(3)))
                continue
            editor_model = patterns.editor_line.match(line)
            if editor_model is not None:
                run.editor = editor_model.group(1)
            continue
        if line:
            reply.append(line)
    return calls, runs, rounded, before, skipped


def doubled(version: tuple[int, int, int] | None, model: str) -> tuple[bool, bool]:
    """Whether a call's ``sent`` counts its cache hit, and its cache write, twice: by the aider
    version (:data:`DOUBLED`), on litellm's Anthropic route only; never where no version is named."""
    # litellm's Anthropic route: an Anthropic model named bare (claude-...) or under its own prefix
    # (anthropic/...), not through a gateway (openrouter/anthropic/...) or another cloud.
    gateway, _, rest = model.partition("/")
    if version is None or provider_of_model(model) is not ANTHROPIC or (rest and gateway.lower() != ANTHROPIC.name):
        return False, False
    for first, last, hit, write in DOUBLED:
        if first <= version <= last:
            return hit, write
    return False, False


def read_file(path: Path, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The calls of an aider chat history: one per ``Tokens`` line; see the module doc."""
    calls, runs, rounded, before, skipped = _calls(path)
    file = str(path)
    out: list[TraceRequest] = []
    clamped = unreported = twice = outside = 0
    for call in calls:
        # 'sent' less what it counts twice is the whole prompt: hit, write and uncached.
        prompt = call.sent - (call.hit if call.hit_twice else 0) - (call.write if call.write_twice else 0) + (call.hit + call.write if call.outside else 0)
        twice += (call.hit_twice and call.hit > 0) or (call.write_twice and call.write > 0)
        outside += call.outside and call.hit + call.write > 0
        uncached = prompt - call.hit - call.write
        if uncached < 0:
            clamped += 1
            uncached = 0
        if call.run.reports_cache:
            usage = Usage(cache_read=call.hit, cache_write_5m=call.write, uncached=uncached, output=call.received,
                          writes_reported=not call.run.cached_variant)
        else:
            unreported += 1
            usage = Usage(uncached=call.sent, output=call.received, cache_reported=False)
        # Through an engine the user runs (litellm's ``ollama_chat/``, ``hosted_vllm/``...:
        # litellm_engine): the host's cache, not the model maker's, and no vendor's bill (its
        # upstream, which leaves it unpriced).
        engine = litellm_engine(call.model)
        rules = None if engine else provider_of_model(call.model)
        out.append(
            TraceRequest(
                file=file,
                line=call.line,
                lane=call.lane,
                lane_kind="subagent" if call.editor else "main",
                seq=len(out),
                sent_ms=None,
                ready_ms=None,
                provider=rules.name if rules is not None and rules.reports_usage else UNKNOWN.name,
                model=call.model,
                usage=usage,
                prefix=call.prefix,
                events=call.events,
                request_id=f"{call.run.lane}#{call.line}",
                source_format=NAME,
                # (an engine the user runs, else Workers AI or a third-party host of open models,
                # litellm's ``cloudflare/``, ``fireworks_ai/``, ``groq/``...: its own prices)
                upstream=gateway_usage.served_by(call.model, ""),
                messages=call.messages,
                # A provider whose cache counted reads in another step before a date (DeepSeek: 64
                # tokens before V4) counts an untimed call's in the step of its run's start.
                read_step=rules.dated_step(call.run.started_ms) if rules is not None else 0,
            )
        )
    notes = _notes(path, runs, out, rounded, clamped, unreported, twice, outside)
    if before:
        notes = (*notes, f"{before:,} line(s) of text before the file's first run ('{STARTED.strip()}'): not read (its head cut or edited)")
    return out, FileSummary(file, NAME, len(out), tuple(skipped), notes)


def _notes(path: Path, runs: int, out: list[TraceRequest], rounded: int, clamped: int, unreported: int, twice: int,
           outside: int) -> tuple[str, ...]:
    notes: list[str] = []
    if not out:
        notes.append(f"no call read from {path.name}: no 'Tokens:' line in its {runs} run(s) (aider writes one after each message it sends)")
        return tuple(notes)
    notes.append(
        "aider's chat history keeps no time per call, only each run's start: its calls are read in order, without times; "
        "no idle gap and no TTL expiry is judged, so a miss an expiry would explain is put to another cause or left unexplained"
    )
    notes.append(
        "usage as aider printed it: 'sent' is the whole prompt, cache write and cache hit inside it "
        "(read as hit + write + uncached, uncached = sent - hit - write), 'received' the output"
    )
    if rounded:
        notes.append(
            f"{rounded} Tokens line(s) print rounded counts (aider's format_tokens: 3.2k to the hundred below 10k, 12k to the "
            "thousand above): read as printed, each count within 50 (below 10k) or 500 tokens of aider's own"
        )
    if twice:
        notes.append(
            f"{twice} call(s) of aider 0.61 to 0.81.2 through litellm's Anthropic route, whose 'sent' counts the cache write "
            "(and in 0.61 and 0.62 the hit) twice (litellm then put them in the prompt tokens, to which aider adds them): "
            "read with each counted once"
        )
    if outside:
        notes.append(
            f"{outside} call(s) of aider's development versions before 0.51.0 (August 2024), whose cache counts ('N cached', "
            "'cache write', 'cache hit') are outside 'sent': read as sent + hit + write ('N cached' runs print no write: unknown, "
            "inside the uncached part)"
        )
    if clamped:
        notes.append(f"{clamped} call(s) whose printed cache hit and write exceed 'sent' (rounding): read with 0 uncached")
    if unreported:
        notes.append(
            f"{unreported} call(s) in runs that print no cache count (streamed replies carry no usage: aider counts them "
            "with the model's tokenizer): read as cache not reported"
        )
    unnamed = sum(1 for r in out if r.model == NO_MODEL)
    if unnamed:
        notes.append(f"{unnamed} call(s) in runs whose model no announcement names ('> Main model: NAME ...'): model and provider unknown")
    dated = sum(1 for r in out if r.read_step and r.usage.cache_reported)
    if dated:
        notes.append(
            f"{dated} call(s) of a provider whose reads counted in another step before a date (DeepSeek: 64-token units before "
            "V4, 2026-04-24): counted in the step of their run's start (the file's only time, aider's local clock; a run "
            "lasting past that date would be counted in the old step)"
        )
    editor = sum(1 for r in out if r.lane_kind == "subagent")
    if editor:
        notes.append(f"{editor} call(s) of architect mode's editor model (the Tokens lines after the architect's), each edit a chat of its own")
    notes.append("aider's system prompt, repo map and files are not in its chat history: the head is an opaque prefix per edit format and model")
    return tuple(notes)


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """JSON lines read as aider's: its analytics log is refused (it keeps no cache count);
    anything else is not aider's."""
    for record in records:
        if isinstance(record.value, dict) and detect(record.value) is not None:
            raise UserError(f"{path}:{record.line}: {ANALYTICS}")
        raise UserError(f"{path}:{record.line}: not an aider chat history (no '{STARTED.strip()}' line; --input auto detects what it is)")
    raise UserError(f"{path}:1: empty file, no aider chat history")


FORMAT = LogFormat(
    name=NAME,
    noun="aider chat history",
    nouns="aider chat histories",
    description="Aider's chat history (.aider.chat.history.md): one call per 'Tokens:' line, counts as aider printed them (rounded), no per-call time",
    detect=detect,
    read=read,
    usage="subset",
    versions=(
        "0.46 and 0.47: 'Tokens: 12,345 sent, 678 received. Cost: $0.012345 request, ...' (exact counts)",
        "0.50.x-dev (August 2024): '492 sent, 1,278 cached, 72 received', then 'cache write' / 'cache hit', outside sent",
        "0.48 to 0.50: the same, 'Cost: ... message, ... session.', counts summed over a message's calls",
        "0.51 to 0.60: 'Tokens: 3.2k sent, 1.2k cache write, 2.0k cache hit, 245 received.' (rounded; sent = litellm's prompt + hit + write)",
        "0.61 and 0.62 (litellm 1.51.2): the same, on litellm's Anthropic route the hit and the write counted twice in sent",
        "0.63 to 0.81.2 (litellm 1.51.2 to 1.65.3): sent = litellm's prompt + write, on its Anthropic route the write counted twice",
        "0.81.3 to 0.86 (litellm 1.65.7 on): sent = litellm's prompt (holding the hit) + write: the whole prompt",
        "announcements 'Models: ... weak model ...' (before 0.40), 'Main model:' / 'Model:' (0.40 on), 'Editor model:' (architect mode, 0.58 on)",
    ),
    detect_file=is_chat_history,
    read_file=read_file,
    claims_file=has_a_run,
    file_suffixes=(".md",),
)
