"""OpenHands runs: the event stream (a saved trajectory, a JSON array of events, or events one a
line) and evaluation outputs (``output.jsonl``: one ``{instance_id, history, metrics}`` a line).

Per-call usage is kept two ways, both LiteLLM's (:mod:`.gateway_usage`), keyed by the response id
so a call seen both ways (or in every later cumulative copy) is counted once:

* an action event's ``tool_call_metadata.model_response``: the raw response of the call that
  chose the action, with its ``usage`` (several actions of one response share it);
* ``metrics.token_usages`` / ``llm_metrics.token_usages`` (OpenHands' ``TokenUsage``, one per
  call): ``prompt_tokens`` as LiteLLM counted it, ``cache_read_tokens`` (its
  ``prompt_tokens_details.cached_tokens``), ``cache_write_tokens`` (Anthropic's
  ``cache_creation_input_tokens``), ``response_id``.

``accumulated_token_usage`` alone (what the events of newer versions carry for the UI) is a
running total, not a call: it is not read. An evaluation output line of 0.2x (no
``token_usages``; ``metrics`` of costs) keeps the usage on its ``history``'s actions only.

OpenHands 1.x (the app, CLI and agent server built on the software-agent-sdk, October 2025 on)
keeps a conversation in ``conversations/<id>/``: ``base_state.json`` (the conversation state,
rewritten whole) and ``events/event-<n>-<id>.json`` (one event a file, ``{kind, id, timestamp,
source, ...}``, no usage). The usage is in the state's ``stats.usage_to_metrics`` (SDK 1.0
previews: ``service_to_metrics``), one ``Metrics`` per LLM of the conversation keyed by its
``usage_id``, each with its ``token_usages`` (one ``TokenUsage`` a call, as above). The agent's
LLM (``agent.llm.usage_id``; where no state names it, ``"agent"``, unless the stats hold a
``"default"`` LLM and no ``"agent"`` one: then the SDK's own default ``"default"``) is the main
lane, the condenser's
(``agent.condenser.llm.usage_id``, ``"condenser"``) a compaction lane, any other a side lane.
The events beside the state time the calls (the first event naming a call's
``llm_response_id``) and mark condensations. An event file beside such a state is read with it;
alone, it yields no call.

OpenHands V1's app server (the GUI and server on the software-agent-sdk, October 2025 on) keeps
no ``base_state.json``: the agent server posts each event to it and it keeps one a file,
``[<user id>/]v1_conversations/<conversation id hex>/<event id hex>.json`` (to November 2025
``v1/events/<conversation id>/<YYYYMMDDHHMMSS>_<kind>_<event id hex>``), beside its
``openhands.db`` (``conversation_metadata``: the conversation's totals only). The usage is in the
``ConversationStateUpdateEvent`` events (``key``, ``value``) of that folder: a ``full_state`` (sent
to each new subscriber: the state, its ``stats.usage_to_metrics`` with ``token_usages``) and a
``stats`` update after each LLM response (``usage_to_metrics``: from 2025-11-25 the full
metrics, from 2025-12-04 a ``MetricsSnapshot`` per usage id, its ``accumulated_token_usage`` a
running total). An LLM's calls are its ``token_usages`` (one per response id: a list is its
whole history so far), then the steps of its running total after the last list, each one call
where the step's prompt and output tokens are the total's ``per_turn_token`` (the last call's);
a step that is not (an update lost, totals restarted) is left out and said. Lanes as in 1.x;
the folder's events, in time order (each ``timestamp`` read as a time, not sorted as text),
time the calls (a listed one by the action naming its ``llm_response_id``; a step is ready at
its update, sent at the event before it), and the calls are read in time order. The folder's first event file (by name) reads them all; another yields
no call and names it. The user's ``~/.openhands/`` (``OH_PERSISTENCE_DIR``) holds the app's
``openhands.db``, ``settings.json``, keys, ``v1_conversations/`` (or ``v1/events/``), 0.x
``sessions/`` and the CLI's 1.x ``conversations/``. A 1.x conversation's persisted events one a
line in a file of their own, with state updates holding stats, are read the same way.

OpenHands 0.x's app (its GUI and server) keeps a session in ``sessions/<id>/``: ``events/<n>.json``
(one event a file, numbered from 0: the stream, whose actions carry their ``model_response``),
``event_cache/<start>-<end>.json`` (pages of the same events, a JSON array each),
``metadata.json`` (the session's totals) and pickles. The folder's first event file reads them
all in number order as one stream; another of them, or a page of the cache, yields no call and
names that file. OpenHands does not keep the messages each call sent
(its memory condenses them), so each run is read as a chain; an output line's ``instance_id``
is its lane.

Head: a 0.x run's events may start with its system message (``action: system``,
``args.content`` the system prompt, ``args.tools`` the tool schemas; 0.58 logs it, 0.25 does
not), the head of every call of the run. The head key carries a digest of the first one a run
logs, so runs of one folder with another prompt or tool set do not share one head and its warm
size. A 1.x conversation (its ``events/`` beside ``base_state.json``, or an app-server folder)
starts with a ``SystemPromptEvent`` (``system_prompt``, a text content, and ``tools``): the
head key of its agent's lane carries a digest of the first one's text and tools, so
conversations with another prompt or tool set do not share a head, and those with the same one
do. Its ``dynamic_context`` (the per-conversation part, sent after the cached prompt) is not part
of the shared head; a condenser's calls keep the model head.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import UNKNOWN, hosted_provider, provider_at, provider_of_model
from prefixbench.simulator.providers.hosts import host_at
from prefixbench.simulator.providers.base import count, given
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import as_dict, head_digest, iso_time_us, objects, parse_time_ms
from prefixbench.workloads.logs.reading import loads
from prefixbench.workloads.logs.records import Record, iter_records
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LaneKind, Prefix, TraceRequest

NAME = "openhands"
_SOURCES = ("agent", "user", "environment")


def _served_by(provider: str, model: str, base_url: str | None) -> str:
    """Who served a call whose provider only LiteLLM's route names (``openai/<model>``: "an
    OpenAI-compatible client", the model naming no provider's family): the route's provider
    when the run's ``base_url`` is its endpoint or names none; another provider when it is that
    one's; else an OpenAI-compatible server of unknown cache (a local proxy, a gateway), not the
    route's provider. A model of a known family keeps its provider whatever the endpoint."""
    segments = [s for s in model.split("/") if s]
    if not base_url or len(segments) < 2 or any(provider_of_model(s) for s in segments[1:]):
        return provider
    route = hosted_provider(segments[0])
    if route is None or route.name != provider:
        return provider
    at = provider_at(base_url)
    return at.name if at is not None else UNKNOWN.name


def _metrics(value: dict) -> dict:
    return as_dict(value.get("llm_metrics")) or as_dict(value.get("metrics"))


#: Where an OpenHands 1.x conversation state keeps its metrics per LLM (``service_to_metrics``
#: until the SDK renamed service ids to usage ids, 2025-10-19).
_USAGE_MAPS = ("usage_to_metrics", "service_to_metrics")
#: The conversation state file of an OpenHands 1.x conversation folder.
STATE_FILE = "base_state.json"
EVENTS_DIR = "events"


def _usage_map(value: dict) -> dict | None:
    """The per-LLM metrics of an OpenHands 1.x conversation state (None: not such a state)."""
    stats = value.get("stats")
    if not isinstance(stats, dict):
        return None
    for key in _USAGE_MAPS:
        found = stats.get(key)
        if isinstance(found, dict) and all(isinstance(m, dict) for m in found.values()):
            return found
    return None


def _is_state(value: dict) -> bool:
    """An OpenHands 1.x ``base_state.json``: an id, the agent, and the metrics per LLM."""
    return "id" in value and isinstance(value.get("agent"), dict) and _usage_map(value) is not None


def _is_sdk_event(value: dict) -> bool:
    """An OpenHands 1.x event file (``{kind, id, timestamp, source, ...}``)."""
    return (
        isinstance(value.get("kind"), str)
        and value.get("source") in _SOURCES
        and isinstance(value.get("id"), str)
        and isinstance(value.get("timestamp"), str)
    )


def state_file_of(path: Path, value: dict) -> Path | None:
    """The ``base_state.json`` an OpenHands 1.x event file is read with (None: not such a file,
    or no state beside its ``events/`` folder)."""
    if not _is_sdk_event(value) or path.parent.name != EVENTS_DIR:
        return None
    state = path.parent.parent / STATE_FILE
    return state if state.is_file() else None


#: OpenHands 0.x's session folder: one event a file, ``events/<n>.json``, and pages of them in
#: ``event_cache/<start>-<end>.json``.
_EVENT_FILE = re.compile(r"(0|[1-9][0-9]{0,8})\.json")
_CACHE_DIR = "event_cache"


def _is_v0_event(value: dict) -> bool:
    """An OpenHands 0.x event: a ``source``, an ``action`` or ``observation`` and an integer ``id``."""
    ident = value.get("id")
    return (value.get("source") in _SOURCES and ("action" in value or "observation" in value)
            and isinstance(ident, int) and not isinstance(ident, bool))


@lru_cache(maxsize=64)
def _folder_files(folder: str, stamp: int, pattern: re.Pattern[str], numbered: bool) -> tuple[str, ...]:
    """The files of ``folder`` whose names ``pattern`` matches whole: by the number the name
    starts with where ``numbered`` (``<n>.json``), else by name; ``stamp`` (the folder's mtime)
    keys the cache."""
    try:
        names = [entry.name for entry in os.scandir(folder) if entry.is_file() and pattern.fullmatch(entry.name)]
    except OSError:
        return ()
    return tuple(sorted(names, key=(lambda name: int(name.partition(".")[0])) if numbered else None))


def _event_folder(folder: Path, pattern: re.Pattern[str], numbered: bool = False) -> tuple[str, ...]:
    """The event files of ``folder`` (:func:`_folder_files`), none where it cannot be listed."""
    try:
        stamp = folder.stat().st_mtime_ns
    except OSError:
        return ()
    return _folder_files(str(folder), stamp, pattern, numbered)


def _session_events(folder: Path) -> tuple[str, ...]:
    """The event files of a 0.x session's ``events/`` folder, in number order."""
    return _event_folder(folder, _EVENT_FILE, numbered=True)


def session_lead_of(path: Path, value: dict) -> Path | None:
    """The file an OpenHands 0.x session's event file is read with: the first event file of its
    ``events/`` folder (None: it is that file, or not such a file). A page of ``event_cache/``
    beside an ``events/`` folder is read with that folder's first file too."""
    if not _is_v0_event(value):
        return None
    if path.parent.name == EVENTS_DIR and _EVENT_FILE.fullmatch(path.name):
        files = _session_events(path.parent)
        return path.parent / files[0] if files and files[0] != path.name else None
    if path.parent.name == _CACHE_DIR:
        events = path.parent.parent / EVENTS_DIR
        files = _session_events(events)
        return events / files[0] if files else None
    return None


#: OpenHands V1's app server keeps a conversation's events, one a file, in one folder: from
#: 2025-12 ``v1_conversations/<conversation id hex>/<event id hex>.json``, before that
#: ``v1/events/<conversation id>/<YYYYMMDDHHMMSS>_<kind>_<event id hex>`` (no extension).
_APP_EVENT_FILE = re.compile(r"(?:[0-9]{14}_[A-Za-z]+_)?[0-9a-f]{32}(?:\.json)?")
_CONVERSATION_DIR = re.compile(r"[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_STATE_UPDATE = "ConversationStateUpdateEvent"


def _app_events(folder: Path) -> tuple[str, ...]:
    """The event files of an app-server conversation folder, by name."""
    return _event_folder(folder, _APP_EVENT_FILE)


def _is_app_event(path: Path, value: dict) -> bool:
    """Whether ``path`` holding ``value`` is an event file of a V1 app-server conversation folder."""
    return (_is_sdk_event(value) and path.parent.name != EVENTS_DIR and _APP_EVENT_FILE.fullmatch(path.name) is not None
            and _CONVERSATION_DIR.fullmatch(path.parent.name) is not None)


def app_lead_of(path: Path, value: dict) -> Path | None:
    """The file a V1 app-server event file is read with: the first event file (by name) of its
    conversation folder (None: it is that file, or not such a file)."""
    if not _is_app_event(path, value):
        return None
    files = _app_events(path.parent)
    return path.parent / files[0] if files and files[0] != path.name else None


def read_with(path: Path, value: dict) -> Path | None:
    """The file this one is read with: a 1.x event file's ``base_state.json``, a 0.x session
    file's first event file, or a V1 app-server event file's first one (None: it is read on its
    own)."""
    return state_file_of(path, value) or session_lead_of(path, value) or app_lead_of(path, value)


def _is_session_file(path: Path, value: object) -> bool:
    """Whether ``path`` holding ``value`` is an event file of a 0.x session's ``events/`` folder."""
    return (isinstance(value, dict) and _is_v0_event(value) and path.parent.name == EVENTS_DIR
            and _EVENT_FILE.fullmatch(path.name) is not None)


def _stream(path: Path, first: Record, rest: Iterator[Record]) -> Iterator[tuple[str, Record]]:
    """(file, record) of ``path``, then, where ``path`` is the first event file of a 0.x
    session, of the folder's other event files in number order."""
    yield str(path), first
    for record in rest:
        yield str(path), record
    if not _is_session_file(path, first.value):
        return
    for name in _session_events(path.parent)[1:]:
        other = path.parent / name
        for record in objects(other, iter_records(other), " (an OpenHands event)"):
            yield str(other), record


def detect(value: dict) -> Evidence | None:
    """An OpenHands event (``source`` and an ``action`` or ``observation``; 1.x: a ``kind``), an
    evaluation output line (``instance_id`` with ``metrics.token_usages``; before them, 0.2x:
    with a ``history`` and ``metrics`` of costs) or a 1.x conversation state
    (``stats.usage_to_metrics``)."""
    if not ("id" in value or "metrics" in value or "llm_metrics" in value):
        # Each test below needs an id or metrics: every line of another agent's log is
        # classified by this detector too, and most have neither.
        return None
    if value.get("source") in _SOURCES and ("action" in value or "observation" in value) and "id" in value:
        return Evidence.SHAPE
    if _is_state(value) or _is_sdk_event(value):
        return Evidence.SHAPE
    metrics = _metrics(value)
    if isinstance(metrics.get("token_usages"), list) or ("instance_id" in value and "accumulated_token_usage" in metrics):
        return Evidence.SHAPE
    if "instance_id" in value and isinstance(value.get("history"), list) and ("accumulated_cost" in metrics or "costs" in metrics):
        # An evaluation output of OpenHands before token_usages (0.2x): the usage is on its history's actions.
        return Evidence.SHAPE
    return None


class _Call(msgspec.Struct):
    line: int
    lane: str
    usage: dict
    model: str
    response_id: str | None
    sent_ms: int | None
    ready_ms: int | None
    #: What happened before the call (OpenHands 1.x: a condensation); a compaction starts a new chain.
    events: tuple[tuple[str, str], ...] = ()
    #: The upstream the gateway says served it (OpenRouter's response ``provider``), "" where none.
    upstream: str = ""


def _head_tag(event: object) -> str | None:
    """A digest of the head an OpenHands 0.x system message logs (``action: system``: the
    system prompt in ``args.content``, the tool schemas in ``args.tools``), None for any other event
    and for one that logs neither."""
    if not isinstance(event, dict) or event.get("action") != "system":
        return None
    args = as_dict(event.get("args"))
    if args.get("content") is None and args.get("tools") is None:
        return None
    return head_digest([args.get("content"), args.get("tools")])


def _prompt_tag(event: object) -> str | None:
    """A digest of the head an OpenHands 1.x ``SystemPromptEvent`` logs (its ``system_prompt``
    text and its ``tools``: OpenAI tool params to 2025-12-18, ``ToolDefinition`` objects after),
    None for any other event and for one that logs neither. Its ``dynamic_context`` (from
    2026-02: the per-conversation part the SDK sends after the cached prompt, unmarked) is not
    part of the shared head."""
    if not isinstance(event, dict) or event.get("kind") != "SystemPromptEvent":
        return None
    prompt = event.get("system_prompt")
    text = prompt.get("text") if isinstance(prompt, dict) else prompt
    tools = event.get("tools")
    if text is None and tools is None:
        return None
    return head_digest([text, tools])


def _token_usage(item: dict, where: str) -> dict:
    """One ``TokenUsage`` as LiteLLM's usage (the shape it was read from). A ``cache_write_tokens``
    of 0 is kept (as OpenRouter names it), so one without the field reads as writes not reported
    (:func:`.gateway_usage.writes_unknown`)."""
    details = {"cached_tokens": count(item.get("cache_read_tokens"), where, "token_usages.cache_read_tokens")}
    usage: dict[str, object] = {
        "prompt_tokens": count(item.get("prompt_tokens"), where, "token_usages.prompt_tokens"),
        "completion_tokens": count(item.get("completion_tokens"), where, "token_usages.completion_tokens"),
        "prompt_tokens_details": details,
    }
    written = count(item.get("cache_write_tokens"), where, "token_usages.cache_write_tokens")
    if written:
        usage["cache_creation_input_tokens"] = written
    elif given(item, "cache_write_tokens"):
        details["cache_write_tokens"] = 0
    return usage


def _time_or_none(value: dict, where: str) -> int | None:
    """An event's ``timestamp`` in ms, None where it is missing or not a time."""
    try:
        return parse_time_ms(value.get("timestamp"), where)
    except UserError:
        return None


def _answered(value: dict, fallback_id: str, line: int, lane: str, sent_ms: int | None, ready_ms: int | None,
              seen: dict[tuple[str, str], _Call], calls: list[_Call]) -> None:
    """The call whose raw response an event keeps (``tool_call_metadata.model_response``), added
    to ``calls`` once per (lane, response id): ``fallback_id`` where the response has no id."""
    response = as_dict(as_dict(value.get("tool_call_metadata")).get("model_response"))
    if isinstance(response.get("usage"), dict):
        rid = str(response.get("id") or fallback_id)
        if (lane, rid) not in seen:
            seen[(lane, rid)] = call = _Call(line, lane, response["usage"], str(response.get("model") or NO_MODEL), rid, sent_ms, ready_ms,
                                             upstream=gateway_usage.upstream_of(response))
            calls.append(call)


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The calls of an OpenHands event stream or evaluation output; see the module doc."""
    name = str(path)
    calls: list[_Call] = []
    seen: dict[tuple[str, str], _Call] = {}
    latest: dict[str, int] = {}
    #: Per run, the endpoint its LLM config names (evaluation output: metadata.llm_config.base_url).
    servers: dict[str, str] = {}
    #: Per run, a digest of the system message it logged first (its head).
    tags: dict[str, str] = {}
    sdk_events = 0
    found = iter(objects(path, records, " (an OpenHands event or output line)"))
    head = next(found, None)
    if head is None:
        raise UserError(f"{name}:1: empty file, no OpenHands events")
    if isinstance(head.value, dict) and _is_state(head.value):
        return _read_state(path, head)
    lead = session_lead_of(path, head.value) if isinstance(head.value, dict) else None
    if lead is not None:
        note = (f"an OpenHands 0.x session file read with {lead}, the first event file of its session, which reads "
                "them all as one stream: audit the session folder or that file")
        return [], FileSummary(name, NAME, 0, (), (note,))
    if isinstance(head.value, dict) and _is_app_event(path, head.value):
        lead = app_lead_of(path, head.value)
        if lead is not None:
            note = (f"an OpenHands V1 app-server event file read with {lead}, the first event file of its conversation "
                    "folder, which reads them all: audit the folder or that file")
            return [], FileSummary(name, NAME, 0, (), (note,))
        return _read_app_conversation(path, head, found)
    if isinstance(head.value, dict) and _is_sdk_event(head.value) and state_file_of(path, head.value) is None:
        # The persisted events of a 1.x conversation one a line, not beside a base_state.json:
        # the stats updates among them hold its usage, read as an app-server folder's are.
        rest = list(found)
        if any(_has_stats(record.value) for record in (head, *rest)):
            return _read_sdk_events(path, [(name, record) for record in (head, *rest)],
                                    "an OpenHands 1.x event log (events one a line)", "event(s)")
        found = iter(rest)
    session = _is_session_file(path, head.value)
    files: set[str] = set()
    for source, record in _stream(path, head, found):
        files.add(source)
        where = f"{source}:{record.line}"
        value: dict = record.value  # type: ignore[assignment]
        line = int(Path(source).name[:-5]) if session else record.line
        if detect(value) is None or _is_state(value):
            raise UserError(f"{where}: neither an OpenHands event nor an evaluation output line")
        sdk_events += _is_sdk_event(value)
        lane = str(value.get("instance_id") or "main")
        base_url = as_dict(as_dict(value.get("metadata")).get("llm_config")).get("base_url")
        if isinstance(base_url, str) and base_url:
            servers[lane] = base_url
        stamp = _time_or_none(value, where)
        tag = _head_tag(value)
        if tag is not None:
            tags.setdefault(lane, tag)
        _answered(value, f"#{line}", line, lane, latest.get(lane), stamp, seen, calls)
        if "instance_id" in value and isinstance(value.get("history"), list):
            # An evaluation output line: each action of its history keeps the response that chose it.
            previous = latest.get(lane)
            for event in value["history"]:
                if not isinstance(event, dict):
                    continue
                tag = _head_tag(event)
                if tag is not None:
                    tags.setdefault(lane, tag)
                at = _time_or_none(event, where)
                _answered(event, f"#{line}:{event.get('id')}", line, lane, previous, at, seen, calls)
                if at is not None:
                    previous = at
        usages = _metrics(value).get("token_usages")
        if usages is not None and not isinstance(usages, list):
            raise UserError(f"{where}: llm_metrics.token_usages is not a list")
        for idx, item in enumerate(usages or ()):
            item = as_dict(item)
            rid = item.get("response_id")
            key = str(rid) if isinstance(rid, str) and rid and rid != "unknown" else f"#{idx}"
            known = seen.get((lane, key))
            if known is not None:
                # The raw response may carry no cache counts where OpenHands' TokenUsage does:
                # the richer record of the same call decides its usage.
                if not gateway_usage.names_cache(known.usage):
                    known.usage = _token_usage(item, f"{where}: token_usages[{idx}]")
                continue
            seen[(lane, key)] = call = _Call(line, lane, _token_usage(item, f"{where}: token_usages[{idx}]"), str(item.get("model") or NO_MODEL),
                                             key if not key.startswith("#") else None, None, None)
            calls.append(call)
        if stamp is not None:
            latest[lane] = stamp
    if not calls and sdk_events:
        note = (f"an OpenHands 1.x event file: its conversation's usage is in {STATE_FILE} beside its "
                f"{EVENTS_DIR}/ folder, so no call is read here")
        return [], FileSummary(name, NAME, 0, (), (note,))
    if not calls and session:
        note = f"an OpenHands 0.x session of {len(files)} event files, none with a call's usage (no model_response usage)"
        return [], FileSummary(name, NAME, 0, (), (note,))
    if not calls:
        raise UserError(f"{name}:1: no per-call usage (no model_response usage and no metrics.token_usages)")
    requests, summary = _requests(name, calls, servers, {}, tags)
    if session:
        note = (f"an OpenHands 0.x session: its {len(files)} event file(s) read in number order as one stream "
                "(a call's line is its event's number)")
        summary = replace(summary, notes=(*summary.notes, note))
    return requests, summary


def _acp_usage(item: dict, where: str) -> dict:
    """An ACP agent's ``TokenUsage`` (input, reads and writes apart) as LiteLLM's Anthropic-shaped
    usage whose prompt count holds them all, so it reads back as additive."""
    prompt = count(item.get("prompt_tokens"), where, "token_usages.prompt_tokens")
    read = count(item.get("cache_read_tokens"), where, "token_usages.cache_read_tokens")
    written = count(item.get("cache_write_tokens"), where, "token_usages.cache_write_tokens")
    return {
        "prompt_tokens": prompt + read + written,
        "completion_tokens": count(item.get("completion_tokens"), where, "token_usages.completion_tokens"),
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
        "prompt_tokens_details": {"cached_tokens": read, "cache_creation_tokens": written},
    }


def _read_state(path: Path, record: Record) -> tuple[list[TraceRequest], FileSummary]:
    """An OpenHands 1.x ``base_state.json``: one call per ``TokenUsage`` of each LLM's metrics."""
    name = str(path)
    value: dict = record.value  # type: ignore[assignment]
    agent = as_dict(value.get("agent"))
    llm = as_dict(agent.get("llm"))
    main_id = str(llm.get("usage_id") or llm.get("service_id") or "agent")
    condenser_llm = as_dict(as_dict(agent.get("condenser")).get("llm"))
    condenser_id = str(condenser_llm.get("usage_id") or condenser_llm.get("service_id") or "condenser")
    servers: dict[str, str] = {}
    kinds: dict[str, LaneKind] = {}
    calls: list[_Call] = []
    lanes: dict[str, str] = {}
    # An ACP agent (Claude Code, Codex, Gemini CLI driven over ACP) records one TokenUsage per
    # prompt turn, its response id the ACP session's, its input without the cache.
    acp = agent.get("kind") == "ACPAgent"
    for usage_id, metrics in (_usage_map(value) or {}).items():
        lane = lanes[usage_id] = "main" if usage_id == main_id else str(usage_id)
        kinds[lane] = "main" if lane == "main" else "compaction" if usage_id == condenser_id else "side"
        base_url = (llm if usage_id == main_id else condenser_llm if usage_id == condenser_id else {}).get("base_url")
        if isinstance(base_url, str) and base_url:
            servers[lane] = base_url
        items = metrics.get("token_usages")
        if items is None:
            continue
        if not isinstance(items, list):
            raise UserError(f"{name}:{record.line}: stats {usage_id}.token_usages is not a list")
        seen: set[str] = set()
        for idx, item in enumerate(items):
            where = f"{name}:{record.line}: {usage_id}.token_usages[{idx}]"
            if not isinstance(item, dict):
                raise UserError(f"{where}: not an object")
            rid = item.get("response_id")
            key = rid if isinstance(rid, str) and rid and rid != "unknown" and not acp else None
            if key is not None and key in seen:
                continue  # the same response recorded twice: one call
            if key is not None:
                seen.add(key)
            model = str(item.get("model") or metrics.get("model_name") or llm.get("model") or NO_MODEL)
            calls.append(_Call(record.line, lane, _acp_usage(item, where) if acp else _token_usage(item, where), model, key, None, None))
    if not calls:
        raise UserError(f"{name}:{record.line}: an OpenHands conversation state with no per-call usage "
                        f"(stats.{'/'.join(_USAGE_MAPS)} hold no token_usages)")
    timed, tag, irregular = _timeline(path.parent / EVENTS_DIR, calls)
    out, summary = _requests(name, calls, servers, kinds, {"main": tag} if tag else None)
    per_llm = ", ".join(f"{usage_id}: {sum(c.lane == lane for c in calls)}" for usage_id, lane in lanes.items())
    notes = [*summary.notes, f"an OpenHands 1.x conversation state: one call per TokenUsage of each LLM ({per_llm}), "
             "each LLM's calls one chain in the order recorded"]
    if acp:
        notes.append("an ACP agent's conversation (agent.kind ACPAgent): each TokenUsage is one prompt turn of that agent, "
                     "summed over its own model calls, its input without the cache (read as additive): a request here is a "
                     "turn; the agent's own logs hold its calls")
    if timed is None:
        notes.append(f"no {EVENTS_DIR}/ folder beside it: no time per call")
    else:
        notes.append(f"times from the {EVENTS_DIR}/ beside it (the events naming each call's llm_response_id): "
                     f"{timed} of {len(calls)} call(s) timed; a Condensation event starts a new chain")
    if irregular:
        shown = ", ".join(irregular[:3]) + (f" and {len(irregular) - 3} more" if len(irregular) > 3 else "")
        notes.append(f"{EVENTS_DIR}/{shown}: not a regular file (a pipe or a device may never end): left out of the call times")
    return out, FileSummary(summary.file, summary.format, summary.requests, summary.skipped, tuple(notes))


_TOTALS = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens")


def _read_app_conversation(path: Path, head: Record, rest: Iterator[Record]) -> tuple[list[TraceRequest], FileSummary]:
    """An OpenHands V1 app-server conversation folder, read from its first event file: every
    event file of the folder in time order, the calls from its state update events (see the
    module doc)."""
    records = [(str(path), record) for record in (head, *rest)]
    for other in _app_events(path.parent)[1:]:
        file = path.parent / other
        records.extend((str(file), record) for record in objects(file, iter_records(file), " (an OpenHands event)"))
    return _read_sdk_events(path, records, "an OpenHands V1 app-server conversation", "event file(s)",
                            " (the app's openhands.db, conversation_metadata, keeps only totals)")


def _has_stats(value: object) -> bool:
    """Whether ``value`` is a 1.x state update carrying the conversation's stats (a ``stats``
    update or a ``full_state``)."""
    return (isinstance(value, dict) and value.get("kind") == _STATE_UPDATE and value.get("key") in ("stats", "full_state")
            and isinstance(value.get("value"), dict))


def _read_sdk_events(path: Path, records: list[tuple[str, Record]], what: str, unit: str,
                     elsewhere: str = "") -> tuple[list[TraceRequest], FileSummary]:
    """The calls of OpenHands 1.x events (an app-server conversation folder's files, or a log of
    the persisted events one a line), from their state update events, in time order; ``what``
    names the source in the notes, ``unit`` what each record is, ``elsewhere`` where else its
    usage is kept (said when no call is found)."""
    name = str(path)
    events: list[tuple[int, int, str, dict]] = []  # (time in µs, place in the files, where, event)
    at = 0  # the time of the event before, in the files' order
    for place, (source, record) in enumerate(records):
        where = f"{source}:{record.line}"
        value: dict = record.value  # type: ignore[assignment]
        if not _is_sdk_event(value):
            raise UserError(f"{where}: not an OpenHands V1 event (kind, id, timestamp and source)")
        # As the app server lists them: by time, the timestamp parsed (its text sorts times
        # written at other precisions or offsets out of order: "10:00:05Z" after "10:00:05.5Z").
        # An event whose timestamp is not a time keeps its place after the one before it.
        stamp = iso_time_us(value["timestamp"])
        at = at if stamp is None else stamp
        events.append((at, place, where, value))
    events.sort(key=lambda e: (e[0], e[1]))
    agent: dict = {}
    listed: dict[str, dict[str, _Call]] = {}  # usage id -> (response id or #index) -> call, from token_usages
    stepped: dict[str, list[_Call]] = {}  # usage id -> calls from its running totals' steps
    totals: dict[str, tuple[int, ...]] = {}
    listed_at: dict[str, int] = {}  # usage id -> the place of the last update listing its token_usages
    models: dict[str, str] = {}
    timeline: list[tuple[int, str, str | None]] = []
    updates = spanned = 0
    previous: int | None = None
    stamps: dict[int, int] = {}  # an event's place -> its time
    tag: str | None = None  # the head digest of the conversation's first SystemPromptEvent
    for n, (_, _, where, value) in enumerate(events, start=1):
        tag = tag or _prompt_tag(value)
        when = _time_or_none(value, where)
        if when is not None:
            stamps[n] = when
        rid = value.get("llm_response_id")
        if when is not None and value["kind"] != _STATE_UPDATE:
            # A state update is no step of the conversation: it times no call's sending.
            timeline.append((when, str(value["kind"]), rid if isinstance(rid, str) and rid else None))
        if value["kind"] == _STATE_UPDATE:
            update = value.get("value")
            stats = None
            if value.get("key") == "full_state" and isinstance(update, dict):
                updates += 1
                agent = as_dict(update.get("agent")) or agent
                stats = _usage_map(update)
            elif value.get("key") == "stats":
                updates += 1
                stats = _usage_map({"stats": update})
            for usage_id, metrics in (stats or {}).items():
                usage_id = str(usage_id)
                if isinstance(metrics.get("model_name"), str):
                    models[usage_id] = metrics["model_name"]
                items = metrics.get("token_usages")
                if items is not None and not isinstance(items, list):
                    raise UserError(f"{where}: stats {usage_id}.token_usages is not a list")
                for idx, item in enumerate(items or ()):
                    at = f"{where}: {usage_id}.token_usages[{idx}]"
                    if not isinstance(item, dict):
                        raise UserError(f"{at}: not an object")
                    key = item.get("response_id")
                    key = key if isinstance(key, str) and key and key != "unknown" else f"#{idx}"
                    if key not in listed.setdefault(usage_id, {}):
                        model = str(item.get("model") or models.get(usage_id) or NO_MODEL)
                        listed[usage_id][key] = _Call(n, usage_id, _token_usage(item, at), model,
                                                      None if key.startswith("#") else key, None, None)
                total = metrics.get("accumulated_token_usage")
                at = f"{where}: {usage_id}.accumulated_token_usage"
                if items is not None:
                    # The LLM's whole history so far: the steps before it are among its calls, and
                    # its running total goes on from here.
                    listed_at[usage_id] = n
                    totals[usage_id] = (tuple(count(total.get(k), at, k) for k in _TOTALS) if isinstance(total, dict) else
                                        tuple(sum(count(i.get(k), where, k) for i in items) for k in _TOTALS))
                elif isinstance(total, dict):
                    # A MetricsSnapshot (the stats updates since 2025-12): a running total, one
                    # update after each response; its step from the previous one is that call.
                    now = tuple(count(total.get(k), at, k) for k in _TOTALS)
                    before = totals.get(usage_id, (0,) * len(_TOTALS))
                    totals[usage_id] = now
                    step = [a - b for a, b in zip(now, before)]
                    if not any(step):
                        continue
                    turn = total.get("per_turn_token")
                    if min(step) < 0 or (isinstance(turn, int) and turn != step[0] + step[1]):
                        spanned += 1  # totals restarted, or a step of several calls: not one call
                        continue
                    item = dict(zip(_TOTALS, step))
                    model = str(total.get("model") or models.get(usage_id) or NO_MODEL)
                    stepped.setdefault(usage_id, []).append(_Call(n, usage_id, _token_usage(item, at), model, None, previous, when))
        if when is not None and value["kind"] != _STATE_UPDATE:
            previous = when
    llm = as_dict(agent.get("llm"))
    # Where no state names the agent's LLM: "agent" (what the CLI and agent server name it), unless
    # the stats hold a "default" LLM and no "agent" one: then "default" (the SDK's own default
    # usage id, what a script's LLM keeps).
    ids = set(listed) | set(stepped)
    main_id = str(llm.get("usage_id") or ("default" if "default" in ids and "agent" not in ids else "agent"))
    condenser_llm = as_dict(as_dict(agent.get("condenser")).get("llm"))
    condenser_id = str(condenser_llm.get("usage_id") or "condenser")
    calls: list[_Call] = []
    servers: dict[str, str] = {}
    kinds: dict[str, LaneKind] = {}
    per_llm: list[str] = []
    for usage_id in sorted(set(listed) | set(stepped), key=lambda u: (u != main_id, u)):
        lane = "main" if usage_id == main_id else usage_id
        kinds[lane] = "main" if lane == "main" else "compaction" if usage_id == condenser_id else "side"
        base_url = (llm if usage_id == main_id else condenser_llm if usage_id == condenser_id else {}).get("base_url")
        if isinstance(base_url, str) and base_url:
            servers[lane] = base_url
        from_list = list(listed.get(usage_id, {}).values())
        from_steps = [call for call in stepped.get(usage_id, ()) if call.line > listed_at.get(usage_id, 0)]
        calls.extend(replace(call, lane=lane, model=str(call.model if call.model != NO_MODEL else llm.get("model") or NO_MODEL))
                     for call in from_list + from_steps)
        per_llm.append(f"{usage_id}: " + " and ".join(f"{len(part)} from {source}" for part, source in
                                                      ((from_list, "token_usages"), (from_steps, "stats updates")) if part))
    calls.sort(key=lambda c: c.line)
    where_looked = (f"{len(events)} {unit}, {updates} of them state updates with stats (ConversationStateUpdateEvent "
                    "full_state: stats.usage_to_metrics token_usages; stats: accumulated_token_usage)")
    if not calls:
        note = (f"{what} with no per-call usage: looked in its {where_looked}, "
                f"none holds a call's tokens{elsewhere}")
        return [], FileSummary(name, NAME, 0, (), (note,))
    timed = _time_calls(timeline, calls)
    # In time order: a call listed by a late full_state at its response, not at that update.
    calls.sort(key=lambda c: (c.ready_ms if c.ready_ms is not None else stamps.get(c.line, 0), c.line))
    out, summary = _requests(name, calls, servers, kinds, {"main": tag} if tag else None)
    notes = [*summary.notes, f"{what}: its {where_looked} read in time order; one call per "
             f"TokenUsage, and per step of a running total after the last list ({', '.join(per_llm)}); a call's line is the "
             f"place in time order of the state update it was read from; {timed} of {len(calls)} call(s) timed"]
    if spanned:
        notes.append(f"{spanned} step(s) of a running total not one call (totals restarted, or several calls between "
                     "two updates): not read")
    return out, FileSummary(summary.file, summary.format, summary.requests, summary.skipped, tuple(notes))


def _timeline(events_dir: Path, calls: list[_Call]) -> tuple[int | None, str | None, tuple[str, ...]]:
    """Time the calls of a 1.x conversation from its event files: a call is ready when the first
    event naming its ``llm_response_id`` was written and sent at the event before that one; a
    main-lane call after a ``Condensation`` event starts a new chain. Returns how many calls
    were timed (None: no events folder) and the head digest of the first ``SystemPromptEvent``
    (:func:`_prompt_tag`; None: none logs one), and the names of the event files left out as
    not regular files (a named pipe, or a link to a device, would never end: fuzz60), which the
    reader notes. Event files that cannot be read are left out."""
    if not events_dir.is_dir():
        return None, None, ()
    timeline: list[tuple[int, str, str | None]] = []  # (time, kind, llm_response_id), in file order
    tag: str | None = None
    irregular: list[str] = []
    for file in sorted(events_dir.glob("event-*.json")):
        if not file.is_file():
            irregular.append(file.name)
            continue
        try:
            # Read as every log is: at most MAX_DEPTH levels (a SystemPromptEvent nested deeper
            # would overflow the stack in its head digest), finite numbers, valid Unicode.
            event = loads(file.read_text(encoding="utf-8"), str(file), whole_file=True)
            when = parse_time_ms(event.get("timestamp"), str(file)) if isinstance(event, dict) else None
        except (OSError, ValueError, RecursionError, UserError):
            continue
        tag = tag or _prompt_tag(event)
        if when is None:
            continue
        rid = event.get("llm_response_id")
        timeline.append((when, str(event.get("kind")), rid if isinstance(rid, str) and rid else None))
    return _time_calls(timeline, calls), tag, tuple(irregular)


def _time_calls(timeline: list[tuple[int, str, str | None]], calls: list[_Call]) -> int:
    """Time ``calls`` (in place) from a conversation's events, (time, kind, llm_response_id) in
    order, as :func:`_timeline` says; a call already timed keeps its times. Returns how many calls
    are timed."""
    first: dict[str, tuple[int, int | None]] = {}  # response id -> (ready, sent)
    for n, (when, _, rid) in enumerate(timeline):
        if rid is not None and rid not in first:
            first[rid] = (when, timeline[n - 1][0] if n else None)
    condensed = sorted(when for when, kind, _ in timeline if kind == "Condensation")
    timed = 0
    last_ready: dict[str, int] = {}
    for n, call in enumerate(calls):
        found = first.get(call.response_id or "")
        if found is None and call.ready_ms is not None:
            found = (call.ready_ms, call.sent_ms)
        if found is None:
            continue
        timed += 1
        ready, sent = found
        events: tuple[tuple[str, str], ...] = ()
        before = last_ready.get(call.lane)
        if call.lane == "main" and before is not None and any(before < t <= ready for t in condensed):
            events = (("compaction", "history condensed (a Condensation event)"),)
        calls[n] = msgspec.structs.replace(call, sent_ms=sent, ready_ms=ready, events=events)
        last_ready[call.lane] = ready
    return timed


def _requests(name: str, calls: list[_Call], servers: dict[str, str],
              kinds: dict[str, LaneKind], tags: dict[str, str] | None = None) -> tuple[list[TraceRequest], FileSummary]:
    """The requests of the calls read from one OpenHands file; ``tags``: per lane, a digest of the
    head its system message logged (the head key carries it)."""
    included = gateway_usage.writes_in_prompt((c.usage, f"{name}:{c.line}") for c in calls)
    out: list[TraceRequest] = []
    last_node: dict[str, str] = {}
    anthropic_calls = writes_unknown = 0
    elsewhere: set[str] = set()
    for call in calls:
        where = f"{name}:{call.line}"
        usage = gateway_usage.read_usage(call.usage, where, writes_included=included, model=call.model)
        shaped = gateway_usage.is_anthropic_shaped(call.usage)
        anthropic_calls += shaped
        provider = _served_by(gateway_usage.provider_of(call.model, shaped), call.model, servers.get(call.lane))
        usage = gateway_usage.writes_unknown(usage, call.usage, provider)
        writes_unknown += not usage.writes_reported
        if provider == UNKNOWN.name and call.lane in servers:
            elsewhere.add(servers[call.lane])
        model = call.model.rsplit("/", 1)[-1] or NO_MODEL
        node = f"openhands:{name}#{call.lane}:{len(out)}"
        tag = (tags or {}).get(call.lane)
        out.append(
            TraceRequest(
                file=name,
                line=call.line,
                lane=call.lane,
                lane_kind=kinds.get(call.lane, "main"),
                seq=len(out),
                sent_ms=call.sent_ms,
                ready_ms=call.ready_ms,
                provider=provider,
                model=model,
                usage=usage,
                prefix=Prefix(f"openhands:{provider}:{tag}:{model}" if tag else f"openhands:{provider}:{model}", node,
                              None if any(kind == "compaction" for kind, _ in call.events) else last_node.get(call.lane)),
                events=call.events,
                request_id=call.response_id,
                source_format=NAME,
                # (else a third-party host of open models whose endpoint the run's base_url is:
                # ``openai/<model>`` sent to api.together.xyz is Together AI's, at its own price)
                upstream=gateway_usage.served_by(call.model, call.upstream) or host_at(servers.get(call.lane) or ""),
            )
        )
        last_node[call.lane] = node
    notes = gateway_usage.reading_notes(len(out), anthropic_calls, included)
    if writes_unknown:
        notes.append(gateway_usage.WRITES_UNKNOWN_NOTE.format(writes_unknown))
    notes.append("OpenHands keeps no per-call request (its memory condenses the history): each run is read as a chain")
    for url in sorted(elsewhere):
        notes.append(f"calls routed as openai/... to {url}: an OpenAI-compatible server, not OpenAI (provider unknown, "
                     "its cache rules not modelled)")
    return out, FileSummary(name, NAME, len(out), (), tuple(notes))


FORMAT = LogFormat(
    name=NAME,
    noun="OpenHands event stream",
    nouns="OpenHands event streams",
    description="OpenHands event streams (saved trajectories, events one a line), evaluation output.jsonl lines, 1.x conversation folders (base_state.json) and V1 app-server conversations (v1_conversations/<id>/), with per-call usage",
    detect=detect,
    read=read,
    usage="by-endpoint",
    read_with=read_with,
    versions=(
        "action events with tool_call_metadata.model_response (the raw LiteLLM response and its usage)",
        "llm_metrics / metrics with token_usages (prompt_tokens, cache_read_tokens, cache_write_tokens, response_id)",
        "events carrying only accumulated_token_usage (newer UI snapshots): running totals, not read as calls",
        "evaluation output.jsonl: one instance a line, its metrics.token_usages",
        "OpenHands 1.x (software-agent-sdk, October 2025 on): conversations/<id>/base_state.json, "
        "stats.usage_to_metrics (service_to_metrics in the 1.0 previews) per LLM usage_id, each with token_usages; "
        "events/event-*.json read with it",
        "OpenHands 0.x app sessions: sessions/<id>/events/<n>.json, one event a file, read as one stream by the first; "
        "event_cache/ pages read with it",
        "OpenHands V1 app server: v1_conversations/<id>/<event>.json (before 2025-12: v1/events/<id>/<time>_<kind>_<event>), "
        "the usage in its ConversationStateUpdateEvents (full_state and stats: token_usages, or MetricsSnapshot running totals)",
    ),
)
