"""OpenCode sessions: ``opencode export`` JSON, the on-disk storage and database, and the output
of ``opencode run --format json``.

``opencode export <session>`` prints one pretty-printed object ``{info, messages: [{info,
parts}]}``. The JSON storage (``~/.local/share/opencode/storage/``) keeps the same records as
small files: ``session/<project>/<session>.json`` (the session's ``info``),
``message/<session>/<message>.json`` and ``part/<message>/<part>.json``. A folder walk audits a
session once, through its session file, which reads its messages and parts from beside it (ids
ascend with time, so names sort in order); the message and part files are not audited on their
own. OpenCode 1.3 and later keep the same records in a SQLite database (``opencode.db``): each
of its sessions is read as its export (:mod:`.opencode_db`), a lane per session.

``opencode run --format json`` prints one event a line, ``{type, timestamp, sessionID, part}``
(``step_start``, ``text``, ``tool_use``, ``reasoning``, ``step_finish``; ``error`` events carry
``error {name, data {message}}`` instead of a part): the same parts as the storage, one step at
a time. One request per ``step_finish``, a lane per session (the first is the main lane), and
no message info: the model is unknown unless a part names it.

One request is one ``step-finish`` part (an assistant message holds one step per model call
of its tool loop): ``tokens {input, output, reasoning, cache {read, write}}`` and ``cost``.
OpenCode normalizes every provider's usage before it stores it (``Session.getUsage`` in
``packages/opencode/src/session/``): in current versions ``input`` EXCLUDES the cache read and
write (it subtracts them where the provider's count includes them), so the stored counts are
additive; earlier versions did not always (:data:`_INCLUSIVE_BEFORE`), and each session is read
by the convention of the version it names (:meth:`_Session.settle`). The Kilo CLI, a fork, names
its own releases there (1.0.x, then 7.x), each read by the OpenCode it was built on
(:data:`_KILO_FIRST_MS`). ``output`` excludes
``reasoning`` in current versions, and OpenCode bills ``output + reasoning`` at the output
price, as is done here (a step whose ``total`` shows the reasoning inside output: output alone). A negative ``input`` (a provider whose count already excluded
the cache, subtracted again) is read back as ``input + read + write`` and said so.

Failed calls (an assistant message with ``error`` and no step, and in OpenCode 0.x each ``retry``
part, ``{attempt, error, time}``, a call that failed and was tried again) are counted apart, in
the skipped records. A compaction shows as a user message with a ``compaction`` part and an
assistant message with ``summary: true`` (the summary call: a lane of its own, on its own
system prompt); the main lane's next request starts a new chain after it. Tool outputs pruned
in place (``state.time.compacted``) are a compaction event of the first request sent after
the prune. A child session (``parentID``, a subagent's task) is a subagent lane. A fork
(``/fork``, ``Session.fork``: a new session titled "<title> (fork #n)" holding a copy of its
source's messages and parts under new ids, each message's time kept) counts only its own calls:
the copied messages, dated before the fork was created, are its source's (which counts them); its
first call of its own is a ``fork`` event starting a new chain. A fork is known by its copies,
not its title (a rename changes that, and ``Session.fork`` sets no parent): messages dated before
the session was created whose ids were minted after (an OpenCode id holds its minting time); a
session whose messages kept their ids (an upgrade's copy) is none. Where the ids are of no such
shape, the title "(fork #n)" decides, or a database row's ``fork_session_id`` (2.x forks copy
their source's rows under ids ``<event>_<seq>``: ``SessionProjector.projectFork``).

Who served a call: ``providerID`` when it names a provider the audit models, else the provider
whose model names ``modelID`` (its part after the last ``/``) takes, but for a provider that
runs open models itself (``ollama``, ``ollama-cloud``, ``lmstudio``, or an id of the user's own
naming one: :func:`prefixbench.simulator.providers.vllm.self_hosted`), whose cache no rule models
and whose calls no vendor bills: that ``providerID`` is their ``upstream``, which leaves them unpriced.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import chain
from pathlib import Path

from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import ANTHROPIC, OPENAI, UNKNOWN, counted_as, hosted_provider, provider_of_model
from prefixbench.simulator.providers.base import MAX_COUNT, count
from prefixbench.simulator.providers.hosts import agent_host, azure_service, workers_ai
from prefixbench.simulator.providers.vllm import self_hosted
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats import opencode_db
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, logged_cost, objects, writes_left_as_logged
from prefixbench.workloads.logs.records import Record, iter_records
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LaneKind, Prefix, Provider, TraceRequest

NAME = "opencode"
#: The storage folders that hold one file per message and per part, read with their session.
MESSAGE_DIR, PART_DIR, SESSION_DIR = "message", "part", "session"
#: Ids OpenCode writes (``ses_...``, ``msg_...``, ``prt_...``): safe as file names.
_ID = re.compile(r"[A-Za-z0-9_-]{1,200}")
#: The title ``Session.fork`` gives a fork of a session (``getForkedTitle``).
_FORK_TITLE = re.compile(r" \(fork #[0-9]{1,9}\)\Z")
#: An OpenCode message id as ``Identifier.ascending`` mints it (packages/opencode/src/id/id.ts):
#: ``msg_``, 12 hex digits holding ``ms x 0x1000 + counter`` in 48 bits (the minting time, ms
#: modulo 2^36), then 14 random characters.
_ASCENDING_ID = re.compile(r"msg_([0-9a-f]{12})[0-9A-Za-z]{14}\Z")
_ID_SPAN = 1 << 36


def _copied(mid: object, session_created: int, titled_fork: bool) -> bool:
    """Whether a message dated before its session was created is a copy ``Session.fork`` made:
    the fork copies each message under an id minted then (the session exists first), keeping the
    message's time; a session whose messages kept their ids (an upgrade's copy, an import) holds
    ids minted when the messages were. An id of no such shape tells nothing: the fork's title
    decides (a rename loses it)."""
    found = _ASCENDING_ID.match(mid) if isinstance(mid, str) else None
    if found is None:
        return titled_fork
    minted = int(found.group(1), 16) >> 12
    # Minted at or after the session's creation (1 s of slack), modulo the id's 2^36 ms.
    since = (minted - (session_created - 1000)) % _ID_SPAN
    return since < _ID_SPAN // 2
#: Most files of a session's storage read.
MAX_FILES = 1_000_000
#: Providers whose calls OpenCode sends back whole, reasoning first, in the next call: DeepSeek's
#: thinking mode wants ``reasoning_content`` back with tool calls, and on a real session (89 calls,
#: deepseek-v4-flash on OpenCode Zen) each read reaches past the previous prompt into its
#: reasoning and output (70 of 89 within 3% without this, 80 with it). Its OpenAI calls do not
#: (two real sessions, 83 calls: 4 fewer within 3% when they are taken to).
_REPLAYS_OUTPUT = frozenset({"deepseek"})


def _failed(error: dict) -> str:
    """A failed call's skipped record, from its ``error {name, data {message}}``."""
    detail = as_dict(error.get("data")).get("message") or ""
    return f"failed call ({error.get('name') or 'error'}{': ' if detail else ''}{str(detail)[:80]})"


def _is_session_info(value: dict) -> bool:
    return isinstance(value.get("id"), str) and "title" in value and isinstance(value.get("time"), dict) and (
        "projectID" in value or "directory" in value
    )


def _is_message(value: dict) -> bool:
    return isinstance(value.get("sessionID"), str) and value.get("role") in ("user", "assistant") and isinstance(value.get("time"), dict)


def _is_part(value: dict) -> bool:
    return isinstance(value.get("messageID"), str) and isinstance(value.get("sessionID"), str) and isinstance(value.get("type"), str)


#: The event types ``opencode run --format json`` prints, one JSON line each.
RUN_EVENTS = ("step_start", "step_finish", "text", "tool_use", "reasoning", "error")


def _is_run_event(value: dict) -> bool:
    """A line of ``opencode run --format json``: ``{type, timestamp, sessionID, part}`` (the part
    naming its session and message), or ``{type: "error", sessionID, error}``."""
    if value.get("type") not in RUN_EVENTS or not isinstance(value.get("sessionID"), str) or "messageID" in value:
        return False
    part = value.get("part")
    if isinstance(part, dict):
        return isinstance(part.get("messageID"), str) and isinstance(part.get("type"), str)
    return value.get("type") == "error" and isinstance(value.get("error"), dict)


def _export(value: dict) -> dict | None:
    """The ``{info, messages}`` of an export: the record itself, or its ``data`` when the export
    came from OpenCode 2.x's HTTP API (``GET /api/experimental/session/{id}/export`` answers
    ``{"data": {info, messages}}``, the body its import endpoint takes back); None: no export."""
    for candidate in (value, value.get("data")):
        if isinstance(candidate, dict) and isinstance(candidate.get("info"), dict) and isinstance(candidate.get("messages"), list):
            return candidate
    return None


def export_lacking(value: dict) -> str | None:
    """Why a record shaped as an OpenCode export is not read as one: its ``info`` lacks what
    :func:`_is_session_info` asks of it (a ``title``, a ``time`` object, a ``projectID`` or a
    ``directory``), where its first message is plainly that session's (an ``info`` naming the
    export's id as its ``sessionID``, a role and a time, beside a list of ``parts``); None for
    any other record, an export read as one included. Detection itself is left as strict."""
    export = _export(value)
    if export is None or _is_session_info(export["info"]) or not export["messages"]:
        return None
    info, first = export["info"], export["messages"][0]
    if not (isinstance(first, dict) and isinstance(first.get("info"), dict) and isinstance(first.get("parts"), list)
            and _is_message(first["info"]) and isinstance(info.get("id"), str) and first["info"]["sessionID"] == info["id"]):
        return None
    lacking = [k for k, ok in (("title", "title" in info), ("time", isinstance(info.get("time"), dict)),
                               ("projectID or directory", "projectID" in info or "directory" in info)) if not ok]
    return (f"an OpenCode export whose info has no {', no '.join(lacking)}: not read as an OpenCode session "
            "(audit tells one by its info's id, title, time and a projectID or directory); "
            "export the session again with opencode export, or add what is missing")


def detect(value: dict) -> Evidence | None:
    """An export (``{info, messages}``, bare or under ``data``), one file of the storage (a
    session, message or part), or an event of ``opencode run --format json``."""
    if not ("sessionID" in value or "info" in value or "data" in value or "title" in value):
        # Each test below needs one of these keys (a run event, a part and a message their
        # sessionID, an export its info or data, a session its title): every line of another
        # agent's log is classified by this detector too, and most have none of them.
        return None
    if _is_run_event(value):
        return Evidence.WRAPPER
    export = _export(value)
    if export is not None and _is_session_info(export["info"]):
        return Evidence.WRAPPER
    if _is_part(value):
        # Its sessionID and messageID name OpenCode, whatever its type (a ``compaction`` part
        # shares its type with a pi entry).
        return Evidence.WRAPPER
    if _is_session_info(value) or _is_message(value):
        return Evidence.ENTRY
    return None


def session_file_of(path: Path, value: dict) -> Path | None:
    """The session file a storage message or part file is read with (None: not such a file, or
    no session file beside it). The storage root is two to four folders up, by layout."""
    if not (_is_message(value) or _is_part(value)) or _is_session_info(value):
        return None
    sid = value["sessionID"]
    if not _ID.fullmatch(sid):
        return None
    for base in list(path.parents)[2:5]:
        sessions = base / SESSION_DIR
        if not sessions.is_dir():
            continue
        for project in sorted(sessions.iterdir()):
            candidate = project / f"{sid}.json"
            if candidate.is_file():
                return candidate
    return None


#: OpenCode's stored ``input`` by version (``Session.getUsage``, packages/opencode/src/session/):
#: until anomalyco/opencode#4256 (merged 2025-11-12, released in 1.0.62) it was the AI SDK's
#: ``inputTokens`` as given: additive through the Anthropic and Bedrock SDKs (their count left the
#: cache out), the cache read INCLUDED through every other provider (OpenAI, OpenRouter, Google,
#: OpenAI-compatible: their count holds it). #4256 subtracted the read for those. AI SDK v6
#: (commit c33d9996f, #18433, OpenCode 1.3.4) made the Anthropic and Bedrock counts include the
#: cache too, while OpenCode still took them as given until #19758 (2026-03-29): in that window an
#: Anthropic call's ``input`` holds its read and write. Since, every provider's cache is
#: subtracted.
_INCLUSIVE_BEFORE = (1, 0, 62)
_ANTHROPIC_WINDOW = ((1, 3, 4), (1, 4, 0))  # v6 without #19758 (1.3.4, 1.3.5 reported; the fix's release unpinned): the steps decide
#: Before anomalyco/opencode#21047 (2026-04, 1.3.x) ``output`` was the SDK's ``outputTokens``,
#: which holds the ``reasoning`` stored beside it where the SDK reports reasoning: through
#: OpenAI's SDK (its Responses and Chat usage count reasoning inside output), and from AI SDK v6
#: (1.3.4) through every SDK. A step's ``total`` (the SDK's input + output) tells it; steps with no
#: total are read by this bound.
_REASONING_INSIDE_BEFORE = (1, 4, 0)
#: Until anomalyco/opencode#6319 (the permission rework, merged 2025-12-28, released in 1.1) each
#: agent sent the tools its permissions left it (``ToolRegistry.enabled``: the plan agent, edit
#: denied, without edit, write and patch), ahead of the system prompt and the messages: a call
#: after an agent switch shares no cached prefix with the other agent's calls (a committed 1.0.107
#: session's first build call after plan read nothing, writing its 12,330 tokens). Since, the edit
#: tools stay listed and the permission is checked when a tool runs (1.14 and 1.18 sessions read
#: on across switches).
_TOOLS_PER_AGENT_BEFORE = (1, 1, 0)
#: Providers OpenCode calls through the OpenAI SDK (OpenCode Zen's GPT models as well).
_OPENAI_SDK = frozenset({"openai", "azure"})
#: Providers OpenCode reached through the Anthropic or Bedrock SDK (the ``anthropic`` or
#: ``bedrock`` provider metadata its rule looked for); OpenCode Zen's Claude models as well.
_ANTHROPIC_SDK = frozenset({"anthropic", "amazon-bedrock", "google-vertex-anthropic"})


#: The Kilo CLI (Kilo-Org/kilo, later Kilo-Org/kilocode; Kilo Code 7.2.21 on), a fork of OpenCode,
#: writes ITS OWN release into a session's ``version`` (``Installation.VERSION`` = ``KILO_VERSION``):
#: 1.0.x from its first release (late January 2026, release workflow 2026-01-28) to 1.0.25
#: (2026-02-21), built on OpenCode 1.1.x (1.1.42 to 1.1.65, after #4256 and before 1.3.4), then
#: 7.x (7.0.x from late February 2026, built on OpenCode 1.2 and later). Kilo's 1.0.x numbers are
#: also OpenCode's own 1.0.x (2025-10-31 to 2026-01-02, 1.0.0 to 1.0.61 before #4256 shipped on
#: 2025-11-13): a 1.0.x session created from Kilo's first release on is read as Kilo's (OpenCode
#: had been past 1.0.61 for more than two months, and updates itself), and only up to Kilo's last
#: 1.0.x (1.0.25): a pinned OpenCode 1.0.26-1.0.61 stays OpenCode's. No OpenCode release is 7.x.
_KILO_FIRST_MS = 1_769_558_400_000  # 2026-01-28T00:00Z
_KILO_1_0_LAST = (1, 0, 25)
_KILO_1_0_BASE = (1, 1, 0)
_KILO_SEVEN = 7
#: The agent a file's content tells apart from OpenCode: Kilo Code 7 (Kilo-Org/kilocode, the
#: extension and the Kilo CLI 7.x built on OpenCode) names its own release 7.x in a session's
#: ``version`` (no OpenCode release is 7.x), and keeps its database as ``kilo.db`` (or
#: ``kilo-<channel>.db``: docs/formats.md), the name of the file it writes. Where
#: neither says so (an ``opencode run`` stream, a session of another version in another file,
#: the Kilo CLI 1.0.x's storage, whose numbers are OpenCode's too) the file stays OpenCode's.
KILO_7 = "Kilo Code (Kilo 7)"
#: The provider id of Kilo's gateway (``kilo``: Kilo-Org/kilocode ``packages/kilo-gateway``,
#: OpenRouter-shaped, ``vendor/model`` ids; models.dev lists it too, so OpenCode may use it): a
#: call through it is relayed, its bill and cache the gateway's (:attr:`TraceRequest.relay`).
KILO_GATEWAY = "kilo"


def kilo_7_evidence(path: Path, versions: Iterable[object], database: bool, kilo_table: bool = False) -> str:
    """Why a file is Kilo Code 7's, from what it holds or the file the agent writes (never a
    folder's name); "" where nothing tells it from OpenCode. ``kilo_table``: the database holds
    the table Kilo 7.7 adds beside OpenCode's (:data:`.opencode_db.KILO_TABLE`)."""
    if database and (path.name == "kilo.db" or opencode_db.KILO_CHANNEL_DB.match(path.name)):
        return f"{KILO_7}: the database is {path.name}, the file Kilo Code 7 keeps its sessions in"
    if database and kilo_table:
        return f"{KILO_7}: the database holds Kilo's own table {opencode_db.KILO_TABLE} beside OpenCode's"
    sevens = sorted({".".join(map(str, v)) for v in map(_version, (t for t in versions if isinstance(t, str)))
                     if v is not None and v[0] >= _KILO_SEVEN})
    if sevens:
        return f"{KILO_7}: the session names Kilo's own release {', '.join(sevens[:3])} (no OpenCode release is 7.x)"
    return ""


def _version(text: str | None) -> tuple[int, int, int] | None:
    """``"0.15.8"`` as (0, 15, 8); None when the session names no release."""
    match = re.match(r"v?(\d{1,6})\.(\d{1,6})\.(\d{1,6})", text or "")  # (a longer number: no release)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def _release(text: str | None, created: int | None) -> tuple[tuple[int, int, int] | None, str, bool]:
    """The OpenCode release whose token conventions a session's steps follow, how the notes name
    the session's version, and whether its Anthropic-SDK steps decide their own convention (a Kilo
    CLI 7.x session: which Kilo release carried AI SDK v6 without #19758 is not pinned). A Kilo CLI
    1.0.x session is read as OpenCode 1.1 (see :data:`_KILO_FIRST_MS`)."""
    version = _version(text)
    if version is None:
        return None, "", False
    shown = ".".join(map(str, version))
    if version[0] >= _KILO_SEVEN:
        return version, f"Kilo CLI {shown} (built on OpenCode 1.2 or later)", True
    if version[:2] == (1, 0) and version <= _KILO_1_0_LAST and created is not None and created >= _KILO_FIRST_MS:
        return _KILO_1_0_BASE, f"Kilo CLI {shown} (built on OpenCode 1.1; created after Kilo's first release)", False
    return version, f"OpenCode {shown}", False


def _through_sdk(info: dict, providers: frozenset[str], vendor: object) -> bool:
    """Whether OpenCode called this message's model through one SDK: its ``providerID`` one of
    ``providers``, or OpenCode Zen (``opencode``) serving a model of ``vendor``'s rules (Zen
    calls each vendor's models through that vendor's SDK)."""
    provider = str(info.get("providerID") or "")
    if provider in providers:
        return True
    return provider == ZEN and provider_of_model(str(info.get("modelID") or "").rsplit("/", 1)[-1]) is vendor


#: OpenCode Zen's ``providerID``: OpenCode names a Zen model ``opencode/<id>`` (opencode.ai/docs/zen).
ZEN = "opencode"


def _model(info: dict) -> str:
    """A call's model: its ``modelID`` (:func:`zen_model`); ``unknown`` where none is named."""
    return zen_model(str(info.get("providerID") or ""), str(info.get("modelID") or NO_MODEL))


def zen_model(provider: str, model: str) -> str:
    """A call's model as priced: OpenCode's own name of a Zen model, ``opencode/<id>``, where the
    call went through OpenCode Zen (its provider is ``opencode``, in OpenCode's and in pi's logs)
    and the price table names the model so (Zen's free models, $0 on Zen alone: the row
    ``opencode-zen-free``); else the model as logged."""
    if provider != ZEN:
        return model
    from prefixbench.simulator.pricing import load_prices

    qualified = f"{ZEN}/{model.lower()}"
    return qualified if qualified in load_prices().names else model


def _provider(info: dict) -> Provider:
    """Who served a call, from the message's ``providerID`` and ``modelID``."""
    name = str(info.get("providerID") or "")
    # (Ollama, LM Studio, Cloudflare's Workers AI behind its AI Gateway: the host's cache, not the
    # model maker's)
    if self_hosted(name) or workers_ai(str(info.get("modelID") or "")):
        return UNKNOWN.name
    rules = hosted_provider(name)
    if rules is None:
        rules = provider_of_model(str(info.get("modelID") or "").rsplit("/", 1)[-1])
    return counted_as(rules)


def _signed(value: object, where: str, key: str) -> int:
    """A count OpenCode derived by subtraction: an integer, possibly negative."""
    if isinstance(value, int) and not isinstance(value, bool) and -MAX_COUNT <= value < 0:
        return value
    return count(value, where, key)


def _time(value: object) -> int | None:
    """An OpenCode time (epoch ms), None when absent or not a plausible one."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 10**14:
        return int(value)
    return None


class _Session:
    """The requests of one session, message by message."""

    def __init__(self, file: str, info: dict) -> None:
        self.file = file
        self.session_id = str(info.get("id"))
        self.version = info.get("version") if isinstance(info.get("version"), str) else None
        self.created = _time(as_dict(info.get("time")).get("created"))
        self.kind: LaneKind = "subagent" if info.get("parentID") else "main"
        #: Every message on one line (an export's one object, a database's session): each call
        #: names its message and step part (``msg_.../prt_...``) after file:line.
        self.located = False
        self.out: list[TraceRequest] = []
        self.skipped: list[tuple[int, str]] = []
        self.parent: str | None = None
        self.events: list[tuple[str, str]] = []
        self.blocks = 0
        self.agent: str | None = None  # the agent of the session's previous (non-summary) call
        base = _release(self.version, self.created)[0]
        self.tools_per_agent = base is not None and base < _TOOLS_PER_AGENT_BEFORE
        self.prunes: list[int] = []
        #: The messages (and their calls) a fork (``/fork``) copied from the session it was forked
        #: from: dated before the fork was created, under ids minted at the fork (:func:`_copied`).
        #: OpenCode titles a fork "<title> (fork #n)", which a rename changes: the title is asked
        #: only where a message's id tells nothing.
        #: A database row's ``fork_session_id`` says it whatever the title (:data:`.opencode_db.FORKED_FROM`).
        self.titled_fork = (isinstance(info.get("title"), str) and _FORK_TITLE.search(info["title"]) is not None
                            or isinstance(info.get(opencode_db.FORKED_FROM), str))
        self.copied_messages = 0
        self.copied_calls = 0
        self.cost = 0.0
        self.negative_inputs = 0
        self.own = [0, 0, 0, 0, 0]  # the assistant messages' own totals: input, output, reasoning, read, write
        self.own_seen = False
        # Each kept step's stored input, read and write, by its request's index, and whether its
        # call went through the Anthropic SDK: read by the version's convention once all are in.
        self.stored: list[tuple[int, bool, int, int, int]] = []
        self.readings: list[str] = []
        self.reasoning_inside = 0
        # Steps with reasoning and no total, by request index: whether through the OpenAI SDK,
        # their output and reasoning as stored.
        self.reasoning_open: list[tuple[int, bool, int, int]] = []
        self.steps_sum = [0, 0, 0, 0]  # the steps as stored: input, output + reasoning, read, write
        self.settled = False

    def message(self, line: int, info: dict, parts: list) -> None:
        role = info.get("role")
        parts = [p for p in parts if isinstance(p, dict)]
        created = _time(as_dict(info.get("time")).get("created"))
        if (self.created is not None and created is not None and created < self.created and role in ("user", "assistant")
                and _copied(info.get("id"), self.created, self.titled_fork)):
            # Dated before the fork: a copy ``/fork`` made of its source's message (the source counts its calls).
            self.copied_calls += sum(p.get("type") == "step-finish" for p in parts) if role == "assistant" else 0
            self.copied_messages += 1
            self.blocks += max(1, len(parts))
            self.events = [("fork", "forked from another session: the history copied from it (its calls not counted here)")]
            self.parent = None
            return
        if role == "user":
            self.events.append(("user_turn", ""))
            self.blocks += max(1, len(parts))
            compactions = [p for p in parts if p.get("type") == "compaction"]
            if any(isinstance(p.get("summary"), str) for p in compactions):
                # OpenCode 2.x: the compaction message holds the summary itself; the next call
                # sends it in place of the history.
                self.events.append(("compaction", "context compacted (the summary in a compaction message)"))
                self.parent = None
            elif compactions:
                self.events.append(("compaction", "compaction requested (/compact or context full)"))
            return
        if role != "assistant":
            return
        where = f"{self.file}:{line}"
        self._own_totals(info, where)
        for retry in (p for p in parts if p.get("type") == "retry"):
            # OpenCode 0.x: a call that failed and was retried (a later attempt follows).
            attempt = retry.get("attempt")
            shown = f" (attempt {attempt})" if isinstance(attempt, int) and not isinstance(attempt, bool) else ""
            self.skipped.append((line, f"{_failed(as_dict(retry.get('error')))}, retried{shown}"))
        steps = [p for p in parts if p.get("type") == "step-finish"]
        error = info.get("error")
        if not steps:
            if isinstance(error, dict):
                self.skipped.append((line, _failed(error)))
            else:
                self.skipped.append((line, "assistant message with no step-finish (no usage recorded)"))
            return
        summary = info.get("summary") is True or info.get("mode") == "compaction" or info.get("agent") == "compaction"
        sent = _time(as_dict(info.get("time")).get("created"))
        latest = sent
        answered = 0  # blocks a step answered with: the next request's input
        for part in parts:
            ptype = part.get("type")
            state = as_dict(part.get("state"))
            times = as_dict(state.get("time")) if ptype == "tool" else as_dict(part.get("time"))
            end = _time(times.get("end"))
            if ptype == "step-start":
                sent = latest
            elif ptype == "tool":
                answered += 1
                pruned = _time(times.get("compacted"))
                if pruned is not None:
                    self.prunes.append(pruned)
            elif ptype in ("text", "reasoning"):
                answered += 1
            elif ptype == "step-finish":
                self._step(line, info, part, sent, summary, where)
                self.blocks += answered
                answered = 0
            if end is not None:
                latest = max(latest or end, end)
        self.blocks += answered

    def _own_totals(self, info: dict, where: str) -> None:
        tokens = info.get("tokens")
        if not isinstance(tokens, dict):
            return
        cache = as_dict(tokens.get("cache"))
        values = (tokens.get("input"), tokens.get("output"), tokens.get("reasoning"), cache.get("read"), cache.get("write"))
        if all(isinstance(v, int) and not isinstance(v, bool) and abs(v) <= MAX_COUNT for v in values):
            self.own_seen = True
            self.own = [a + b for a, b in zip(self.own, values)]  # type: ignore[operator]

    def _step(self, line: int, info: dict, part: dict, sent: int | None, summary: bool, where: str) -> None:
        tokens = as_dict(part.get("tokens"))
        cache = as_dict(tokens.get("cache"))
        read = count(cache.get("read"), where, "step-finish tokens.cache.read")
        write = count(cache.get("write"), where, "step-finish tokens.cache.write")
        uncached = _signed(tokens.get("input"), where, "step-finish tokens.input")
        if uncached < 0:
            # OpenCode subtracted a cache its provider's count had already left out: undo it.
            self.negative_inputs += 1
            uncached = uncached + read + write
            if uncached < 0:
                raise UserError(f"{where}: step-finish tokens.input ({uncached - read - write}) is below minus the cache")
        stored_input = uncached
        self.steps_sum = [a + b for a, b in zip(self.steps_sum, (uncached, 0, read, write))]
        output = count(tokens.get("output"), where, "step-finish tokens.output")
        reasoning = count(tokens.get("reasoning"), where, "step-finish tokens.reasoning")
        self.steps_sum[1] += output + reasoning
        total = tokens.get("total")
        if reasoning and isinstance(total, int) and not isinstance(total, bool) and total == stored_input + read + write + output:
            # Before anomalyco/opencode#21047 OpenCode stored the SDK's outputTokens, which hold
            # the reasoning for OpenAI-style providers, beside that reasoning; the step's own total
            # (the SDK's) shows it: the reasoning is inside output, billed once.
            self.reasoning_inside += 1
        else:
            output += reasoning
        # A write count is stored only where the provider's SDK gives one (:data:`_ANTHROPIC_SDK`):
        # elsewhere a 0 says nothing of what the call wrote. (A host running open models itself
        # reports no cache use at all, no read either: its zeros are taken as it says them.)
        usage = Usage(cache_read=read, cache_write_5m=write, uncached=uncached, output=output,
                      writes_reported=write > 0 or _through_sdk(info, _ANTHROPIC_SDK, ANTHROPIC)
                      or self_hosted(str(info.get("providerID") or "")))
        self.cost += logged_cost(part.get("cost"))
        if usage.is_empty:
            self.skipped.append((line, "step with no usage (aborted before the provider answered)"))
            return
        if sent is not None:
            pruned = [t for t in self.prunes if t <= sent]
            if pruned:
                self.prunes = [t for t in self.prunes if t > sent]
                self.events.append(("compaction", f"{len(pruned)} tool output(s) pruned in place"))
                self.parent = None
        if tokens.get("input") == stored_input:
            self.stored.append((len(self.out), _through_sdk(info, _ANTHROPIC_SDK, ANTHROPIC), stored_input, read, write))
        if reasoning and total is None:
            self.reasoning_open.append((len(self.out), _through_sdk(info, _OPENAI_SDK, OPENAI), output - reasoning, reasoning))
        self._add(line, info, part, usage, sent, summary)

    def settle(self) -> None:
        """Read each kept step's input by its OpenCode version's convention (see
        :data:`_INCLUSIVE_BEFORE`): the session's ``version``, and where that leaves it open, its
        own steps: a step whose input is below its read proves the input additive; an input at
        least the cache on every cached step is the inclusive convention."""
        if self.settled:
            return
        self.settled = True
        version, shown, steps_decide = _release(self.version, self.created)
        if version is not None and version != _version(self.version):
            self.readings.append(f"{shown}: its steps read by OpenCode 1.1's conventions (input without the cache read)")
        for anthropic in (False, True):
            steps = [(i, n, rd, wr) for i, a, n, rd, wr in self.stored if a is anthropic]
            part = [(n, rd + wr if anthropic else rd) for _, n, rd, wr in steps]
            cached = [(n, c) for n, c in part if c > 0]
            if not cached:
                continue
            below = sum(n < c for n, c in cached)
            kind = "Anthropic/Bedrock SDK" if anthropic else "other providers'"
            what = "cache read and write" if anthropic else "cache read"
            inclusive = False
            if version is None:
                self.readings.append(
                    f"the session names no OpenCode version: {kind} input read as additive (current versions)"
                    + (f"; {below} of {len(cached)} cached steps' input below their {what} proves it" if below else "")
                )
                continue
            if anthropic:
                low, high = _ANTHROPIC_WINDOW
                if low <= version < high or steps_decide:
                    inclusive = below == 0
                    when = (": the Kilo releases that stored AI SDK v6 counts before anomalyco/opencode#19758 are not "
                            "pinned, so the steps decide:" if steps_decide else " (1.3.4 on, before anomalyco/opencode#19758):")
                    self.readings.append(
                        f"{shown}{when} {kind} input "
                        + ("holds the cache read and write on every cached step: read as input - read - write" if inclusive
                           else f"below its cache on {below} of {len(cached)} cached steps: read as additive")
                    )
            elif version < _INCLUSIVE_BEFORE:
                inclusive = below == 0
                self.readings.append(
                    f"{shown} (before 1.0.62, anomalyco/opencode#4256): {kind} input includes the cache read: "
                    + ("read as input - cache read" if inclusive
                       else f"yet {below} of {len(cached)} cached steps' input is below their read: read as additive")
                )
            if inclusive:
                for i, n, rd, wr in steps:
                    usage = self.out[i].usage
                    assert usage is not None
                    uncached = n - rd - (wr if anthropic else 0)
                    if uncached >= 0:
                        self.out[i] = replace(self.out[i], usage=replace(usage, uncached=uncached))
        self._settle_reasoning(version, shown)
        self.out, unknown = writes_left_as_logged(self.out)
        if unknown:
            self.readings.append(
                f"{unknown:,} step(s) of a model that read, through a provider whose SDK gives no write count (0 stored): "
                "what each wrote is unknown, and its whole prompt is taken as what the next call may read"
            )

    def _add(self, line: int, info: dict, part: dict, usage: Usage, sent: int | None, summary: bool) -> None:
        model = _model(info)
        agent = str(info.get("agent") or info.get("mode") or "build")
        key = f"{info.get('id')}/{part.get('id')}"
        node = f"opencode:{self.session_id}#{key}"
        variant = info.get("variant")
        envelope = (("effort", variant),) if isinstance(variant, str) and variant else ()
        if summary:
            # The summary call runs the compaction agent's own prompt: a chain of its own.
            lane, kind, parent, events = "compaction", "compaction", None, ()
        else:
            if self.tools_per_agent and self.agent is not None and agent != self.agent:
                # Before 1.1 each agent sent its own tools (:data:`_TOOLS_PER_AGENT_BEFORE`).
                self.events.append(("system_change", f"agent changed ({self.agent} -> {agent}): OpenCode before 1.1 sends each agent's own tools"))
                self.parent = None
            self.agent = agent
            lane, kind, parent, events = "main", self.kind, self.parent, tuple(self.events)
        provider = _provider(info)
        host = str(info.get("providerID") or "")
        self.out.append(
            TraceRequest(
                file=self.file,
                line=line,
                path=key if self.located else "",
                lane=lane,
                lane_kind=kind,  # type: ignore[arg-type]
                seq=len(self.out),
                sent_ms=sent,
                ready_ms=None,
                provider=provider,
                model=model,
                envelope=envelope,
                usage=usage,
                prefix=Prefix(f"opencode:{agent}:{info.get('providerID')}", node, parent, max(1, self.blocks),
                              replays_output=provider in _REPLAYS_OUTPUT),
                events=events,
                request_id=key,
                agent_version=self.version,
                source_format=NAME,
                compaction_call=summary,
                # A host running open models itself bills no vendor, a third-party host of open models
                # (fireworks-ai, groq, togetherai, Workers AI behind cloudflare-ai-gateway...) its
                # own prices: at its own row where prefixbench holds one, else unpriced
                # (Prices.at_list_price, Prices.host_row).
                upstream=agent_host(host, str(info.get("modelID") or "")),
                # Kilo's gateway relays a model its maker's rules read (not kilo-auto's router).
                relay=KILO_GATEWAY if host == KILO_GATEWAY and provider != UNKNOWN.name else "",
                # OpenCode's ``azure`` provider serving OpenAI's models: Azure OpenAI, named.
                service=azure_service(name=host) if provider == OPENAI.name else "",
            )
        )
        if summary:
            self.parent = None
            self.events = [("compaction", "after the summary call")]
        else:
            self.parent = node
            self.events = []
        self.blocks = 0

    def _settle_reasoning(self, version: tuple[int, int, int] | None, shown: str) -> None:
        """Steps with no ``total``: their reasoning inside output where the version stored it so
        (:data:`_REASONING_INSIDE_BEFORE`), unless a reasoning above its output proves it beside."""
        if version is None or version >= _REASONING_INSIDE_BEFORE:
            return
        steps = [(i, o, r) for i, openai, o, r in self.reasoning_open if openai or version >= _ANTHROPIC_WINDOW[0]]
        if not steps:
            return
        above = sum(r > o for _, o, r in steps)
        if above:
            self.readings.append(
                f"{shown} stored the SDK's output, reasoning inside, for these calls, yet {above} of {len(steps)} "
                "steps' reasoning exceeds their output: reasoning read as beside output"
            )
            return
        for i, o, _ in steps:
            usage = self.out[i].usage
            assert usage is not None
            self.out[i] = replace(self.out[i], usage=replace(usage, output=o))
        self.reasoning_inside += len(steps)

    def notes(self, where: str, agent: str = "OpenCode") -> tuple[str, ...]:
        """What the summary says of the session (``agent``: whose session, :func:`kilo_7_evidence`)."""
        notes = [f"{agent}'s system prompt and tools are not in {where}: the head is an opaque prefix"]
        notes.extend(self.readings)
        if self.reasoning_inside:
            notes.append(
                f"{self.reasoning_inside} step(s) stored their reasoning inside output too (before anomalyco/opencode#21047: "
                "the step's total is input + cache + output, or the version and the OpenAI SDK say so): billed once, as output"
            )
        if self.cost:
            notes.append(f"{agent}'s own step costs sum to ${self.cost:.4f} (a check on the dollars here)")
        if self.own_seen:
            counted = self.steps_sum
            i, o, reasoning, rd, wr = self.own
            theirs = [i, o + reasoning, rd, wr]
            verdict = "the same as its steps'" if counted == theirs else "its steps sum to " + " / ".join(f"{n:,}" for n in counted)
            notes.append(
                f"{agent}'s own message totals: input {i:,}, output + reasoning {o + reasoning:,}, cache read {rd:,}, "
                f"cache write {wr:,} ({verdict}; versions before the totals summed the steps kept only the last)"
            )
        if self.copied_messages:
            notes.append(
                f"{self.copied_messages} message(s) dated before the session, {self.copied_calls} call(s) copied from the session "
                "it was forked from (/fork): not counted here (the source session counts them)"
            )
        if self.negative_inputs:
            notes.append(
                f"{self.negative_inputs} step(s) stored a negative input (OpenCode subtracted a cache its provider's count "
                "had left out): read as input + cache read + cache write"
            )
        return tuple(notes)


def _records_of(path: Path) -> Record:
    """The one JSON object of a storage file."""
    for record in objects(path, iter_records(path), " (an OpenCode storage record)"):
        return record
    raise UserError(f"{path}:1: empty file, no OpenCode record")


def _listing(folder: Path) -> list[Path]:
    try:
        found = sorted(p for p in folder.iterdir() if p.suffix == ".json" and p.is_file())
    except OSError as exc:
        raise UserError(f"{folder}: cannot read this folder ({exc.strerror or exc})") from None
    if len(found) > MAX_FILES:
        raise UserError(f"{folder}: more than {MAX_FILES:,} files")
    return found


def _from_storage(path: Path, info: dict) -> tuple[_Session, int]:
    """A session read from the storage beside its session file; and how many files were read."""
    session = _Session(str(path), info)
    sid = session.session_id
    if not _ID.fullmatch(sid) or len(path.parents) < 3:
        raise UserError(f"{path}:1: session id {sid!r:.60} is not an OpenCode id")
    # storage/session/<project>/<id>.json with storage/message/<id>/ and storage/part/<message>/;
    # or, in earlier versions, storage/session/info/<id>.json with session/message/<id>/ and
    # session/part/<id>/<message>/.
    root, inner = path.parents[2], path.parents[1]
    layouts = ((root / MESSAGE_DIR / sid, root / PART_DIR), (inner / MESSAGE_DIR / sid, inner / PART_DIR / sid))
    found = [(messages, parts) for messages, parts in layouts if messages.is_dir()]
    files = 0
    if not found:
        session.skipped.append((1, f"no message folder {MESSAGE_DIR}/{sid} beside the session file"))
        return session, files
    messages, part_root = found[0]
    for message_file in _listing(messages):
        record = _records_of(message_file)
        files += 1
        message: dict = record.value  # type: ignore[assignment]
        mid = message.get("id")
        parts: list = []
        if isinstance(mid, str) and _ID.fullmatch(mid) and (part_root / mid).is_dir():
            for part_file in _listing(part_root / mid):
                parts.append(_records_of(part_file).value)
                files += 1
        session.message(1, message, parts)
    session.settle()
    return session, files


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """An export's or a stored session's requests; see the module doc."""
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    notes: tuple[str, ...] = ()
    versions: list[object] = []
    seen_any = False
    stream = iter(objects(path, records, " (an OpenCode export, storage file or run output)"))
    for record in stream:
        value: dict = record.value  # type: ignore[assignment]
        if not seen_any and _is_run_event(value):
            return _read_run(path, record, stream)
        seen_any = True
        export = _export(value)
        if export is not None:
            session = _exported(str(path), record.line, export)
            where = "an export"
        elif _is_session_info(value):
            session, files = _from_storage(path, value)
            where = f"the storage ({files:,} message and part files read with this session file)"
        elif _is_message(value) or _is_part(value):
            owner = session_file_of(path, value)
            if owner is None:
                raise UserError(
                    f"{path}:{record.line}: an OpenCode storage {'message' if _is_message(value) else 'part'} file "
                    "without its session file (storage/session/<project>/<id>.json): audit the storage folder, or an "
                    "`opencode export` of the session"
                )
            notes += (f"an OpenCode storage file read with its session file {owner}",)
            continue
        else:
            raise UserError(f"{path}:{record.line}: not an OpenCode export or storage record")
        out.extend(replace_seq(session.out, len(out)))
        skipped.extend(session.skipped)
        notes += session.notes(where, KILO_7 if kilo_7_evidence(path, [session.version], False) else "OpenCode")
        versions.append(session.version)
    if not seen_any:
        raise UserError(f"{path}:1: empty file, no OpenCode records")
    return out, _summary(path, out, skipped, notes, kilo_7_evidence(path, versions, database=False))


def _summary(path: Path, out: list[TraceRequest], skipped: list[tuple[int, str]], notes: tuple[str, ...],
             kilo: str) -> FileSummary:
    """A file's summary, naming Kilo Code 7 as its agent where ``kilo`` (the evidence) says so."""
    notes += (kilo,) if kilo else ()
    return FileSummary(str(path), NAME, len(out), tuple(skipped), tuple(dict.fromkeys(notes)), agent=KILO_7 if kilo else "")


def _exported(file: str, line: int, value: dict) -> _Session:
    """The requests of one ``{info, messages: [{info, parts}]}`` session (an export's, or one
    the database reader put together)."""
    session = _Session(file, value["info"])
    session.located = True
    items = value["messages"]
    if any(isinstance(item, dict) and isinstance(item.get("type"), str) and "info" not in item for item in items):
        # OpenCode 2.x's export: its messages as the database keeps them ({id, type, ...}).
        sid = str(value["info"].get("id"))
        items = list(opencode_db.v2_messages(sid, ((str(i.get("id")), i.get("type"), i) for i in items if isinstance(i, dict))))
    for item in items:
        entry = as_dict(item)
        parts = entry.get("parts")
        session.message(line, as_dict(entry.get("info")), parts if isinstance(parts, list) else [])
    session.settle()
    return session


def read_db(path: Path, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The requests of every session in an OpenCode database, each read as its export is."""
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    notes: tuple[str, ...] = ()
    sessions = 0
    versions: list[object] = []
    kilo_table = opencode_db.has_kilo_tables(path)
    for value in opencode_db.exports(path):
        sessions += 1
        versions.append(as_dict(value.get("info")).get("version"))
        session = _exported(str(path), 1, value)
        # One file holds every session: each is a lane of its own (its summary calls too).
        sid = session.session_id
        lanes = [replace(r, lane=sid if r.lane == "main" else f"{sid}/{r.lane}") for r in session.out]
        out.extend(replace_seq(lanes, len(out)))
        skipped.extend(session.skipped)
        kilo = kilo_7_evidence(path, [session.version], database=True, kilo_table=kilo_table)
        notes += session.notes("the database", KILO_7 if kilo else "OpenCode")
    kilo = kilo_7_evidence(path, versions, database=True, kilo_table=kilo_table)
    notes += (f"{f'a {KILO_7}' if kilo else 'an OpenCode'} database: {sessions:,} session(s) read (opened read-only)",)
    return out, _summary(path, out, skipped, notes, kilo)


def _run_model(part: dict) -> tuple[str | None, str | None]:
    """The provider and model a run event's part names (``providerID``/``modelID``, or a
    ``model {providerID, modelID}``), if it names one."""
    model = as_dict(part.get("model"))
    provider = part.get("providerID") or model.get("providerID")
    name = part.get("modelID") or model.get("modelID") or model.get("id")
    return (provider if isinstance(provider, str) else None), (name if isinstance(name, str) else None)


class _Run:
    """One session's events in ``opencode run --format json`` output, a step at a time."""

    def __init__(self, file: str, session_id: str, kind: LaneKind) -> None:
        self.session = _Session(file, {"id": session_id, **({"parentID": "run"} if kind == "subagent" else {})})
        self.session.events.append(("user_turn", ""))  # the prompt ``opencode run`` was given
        self.parts: list[dict] = []
        self.start: int | None = None
        self.start_line = 0
        self.provider: str | None = None
        self.model: str | None = None

    def event(self, line: int, event: dict, part: dict) -> None:
        provider, model = _run_model(part)
        self.provider, self.model = provider or self.provider, model or self.model
        if part.get("type") == "step-start" or not self.parts:
            if self.parts:
                self._unfinished()
            self.start, self.start_line = _time(event.get("timestamp")), line
        self.parts.append(part)
        if part.get("type") == "step-finish":
            info = {
                "id": part.get("messageID"),
                "role": "assistant",
                "time": {"created": self.start},
                "providerID": self.provider,
                "modelID": self.model,
            }
            # The user turn was counted above; the step's blocks are its parts.
            self.session.message(line, info, self.parts)
            self.parts = []

    def error(self, line: int, error: dict) -> None:
        self.session.skipped.append((line, _failed(error)))
        self.parts = []

    def _unfinished(self) -> None:
        self.session.skipped.append((self.start_line, "step with no step_finish (no usage recorded: the run ended or was cut)"))
        self.parts = []

    def close(self) -> None:
        if self.parts:
            self._unfinished()


def _read_run(path: Path, first: Record, rest: Iterable[Record]) -> tuple[list[TraceRequest], FileSummary]:
    """The output of ``opencode run --format json``: one request per ``step_finish`` event (its
    part's tokens, as a stored step-finish), a lane per session, errors counted apart."""
    runs: dict[str, _Run] = {}
    notes: list[str] = []
    for record in chain((first,), rest):
        value: dict = record.value  # type: ignore[assignment]
        if not _is_run_event(value):
            if isinstance(value.get("type"), str) and isinstance(value.get("sessionID"), str):
                continue  # an event type this reader does not use
            raise UserError(f"{path}:{record.line}: not an event of `opencode run --format json` in a file of them")
        sid = value["sessionID"]
        run = runs.get(sid)
        if run is None:
            if not _ID.fullmatch(sid):
                raise UserError(f"{path}:{record.line}: session id {sid!r:.60} is not an OpenCode id")
            run = runs[sid] = _Run(str(path), sid, "main" if not runs else "subagent")
        if value["type"] == "error" and not isinstance(value.get("part"), dict):
            run.error(record.line, value["error"])
        else:
            run.event(record.line, value, value["part"])
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    for n, (sid, run) in enumerate(runs.items()):
        run.close()
        run.session.settle()
        requests = run.session.out
        if n:
            requests = [replace(r, lane=sid if r.lane == "main" else f"{sid}/{r.lane}") for r in requests]
        out.extend(replace_seq(requests, len(out)))
        skipped.extend(run.session.skipped)
        notes.extend(run.session.notes("`opencode run` output"))
    if any(r.model == NO_MODEL for r in out):
        notes.append(
            "`opencode run --format json` names no model: its requests are read as model unknown, provider unknown "
            "(no prices or cache rules; audit an `opencode export` of the session, or the database, for them, or name the "
            "model with --assume-model opencode=MODEL)"
        )
    skipped.sort()
    return out, FileSummary(str(path), NAME, len(out), tuple(skipped), tuple(dict.fromkeys(notes)))


def replace_seq(requests: list[TraceRequest], start: int) -> list[TraceRequest]:
    """``requests`` numbered from ``start`` in the file's stream (several exports in one file)."""
    if start == 0:
        return requests
    return [replace(r, seq=start + n) for n, r in enumerate(requests)]


FORMAT = LogFormat(
    name=NAME,
    noun="OpenCode session",
    nouns="OpenCode sessions",
    description="OpenCode sessions: `opencode export` JSON, the storage folder (session, message and part files), the opencode.db database, or `opencode run --format json` output",
    detect=detect,
    read=read,
    read_with=session_file_of,
    detect_file=opencode_db.is_opencode_db,
    read_file=read_db,
    file_suffixes=opencode_db.SUFFIXES,
    usage="additive",
    versions=(
        "`opencode export` JSON: {info, messages: [{info, parts}]}, pretty-printed",
        "JSON storage: session/<project>/<id>.json with message/<session>/ and part/<message>/ beside it",
        "earlier JSON storage: session/info/<id>.json with session/message/<session>/ and session/part/<session>/<message>/",
        "SQLite database (1.3 and later): opencode.db, tables session, message and part (data: the export's JSON less the ids)",
        "SQLite database of OpenCode 2.x (2.0.3 on, September 2026): session_v2 and session_message (type, seq, data: "
        "one assistant message a call, its tokens and model {id, providerID}; a compaction's own tokens its summary call); "
        "the frozen 1.x tables then not read",
        "OpenCode 2.x export (opencode session export): {info, messages: [{id, type, ...}]}, the messages as stored",
        "OpenCode 2.x export through its HTTP API (GET /api/experimental/session/{id}/export, 2.0.x): the same under data, "
        "{data: {info, messages}}",
        "`opencode run --format json`: step_start, text, tool_use, reasoning, step_finish and error events, one a line (no model named)",
        "step-finish tokens {input, output, reasoning, cache {read, write}} and cost; later versions add tokens.total",
        "OpenCode 0.x retry parts {attempt, error, time}: each a failed call, counted apart (skipped)",
        "forks (/fork: the source's messages copied, dated before the fork under ids minted at it, whatever the title): the copies not counted",
        "input as the AI SDK gave it before anomalyco/opencode#4256 (before 1.0.62): the cache read inside it "
        "through OpenAI-style providers, additive through the Anthropic and Bedrock SDKs",
        "input less the read through OpenAI-style providers only (#4256 to 1.3.3; later also less the write)",
        "1.3.4 (AI SDK v6) until #19758: input holding the read and write through the Anthropic and Bedrock SDKs",
        "input less the cache for every provider (#19758 on)",
        "output holding the reasoning stored beside it (OpenAI's SDK, and every SDK from 1.3.4, before #21047; "
        "told by tokens.total, else by version)",
        "assistant info.tokens: the sum of the steps in later versions, the last step in earlier ones",
        "Kilo CLI sessions (kilo.db, Kilo's storage; version its own release): 1.0.0-1.0.25 (2026-01-28 on, built on "
        "OpenCode 1.1) read by OpenCode 1.1's conventions, not as OpenCode 1.0.x; 7.x: Anthropic-SDK steps decided by their counts",
        "Kilo CLI 1.0.x JSON storage (~/.local/share/kilo/storage/); Kilo Code 7.x kilo-<channel>.db; its legacy task "
        "folders migrated into kilo.db (version v2, model legacy, no steps: skipped)",
        "Kilo Code 7 told from OpenCode by its file: a 7.x version, kilo.db / kilo-<channel>.db, or Kilo's kilo_board "
        "table (agent Kilo Code (Kilo 7), its own settings); providerID kilo: relayed through Kilo's gateway",
    ),
)
