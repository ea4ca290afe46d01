"""Codex CLI rollouts (``rollout-<date>-<id>.jsonl``; continuation windows ``rollout-<date>-<thread>_<window>.jsonl``).

``event_msg``/``token_count`` ``last_token_usage`` per request (``input_tokens`` includes
``cached_input_tokens`` and, in later versions, ``cache_write_input_tokens``); a token count whose running total was already seen (a repeat, or
history replayed by a fork or resume, in this file or another) is not counted again. A
request is sent at the last input item (user message or tool output) before its first output
item; its response began at that item and ended at its token count, or, where the count comes
only after the next input (later Codex writes it once the tool the call asked for has run: a
``request_user_input`` the user answers an hour later), at its last output item, the input
being the next request's. A request that opens a user turn with a prompt smaller than the one
before plus the response it sends back, or after a turn that reasoned and was not interrupted,
shares with it only the prompt of the previous turn's first call (:meth:`_Rollout._shared`).
Codex's built-in tool schemas are never in a rollout, its base instructions only from 0.88
(``session_meta.base_instructions``, with ``dynamic_tools`` from 0.115): the head is an opaque
prefix, keyed by a digest of the instructions and dynamic tools where the rollout logs them (after
a ``dynamic_tools_updated`` record that changes them, of the list it holds, else of the record: the
next call says so).

Later Codex (about 0.128 on: paginated rollouts, multi-agent threads, Codex Desktop) numbers
every record (``ordinal``) and says in its first ``session_meta`` what the thread is:

* a subagent (``source.subagent.thread_spawn {parent_thread_id, depth, agent_path,
  agent_nickname}``, ``thread_source: "subagent"``) whose file opens with a copy of its parent's
  history, the parent's ``session_meta`` and token counts included: the records below
  ``subagent_history_start_ordinal`` are the parent's, never counted here (the parent's own
  rollout counts them), whatever the file order or their timestamps. Its calls are a
  ``subagent`` lane named by its nickname and path, and its first call extends the parent's
  call whose running total the copy ends with (the parent's cached prefix);
* a guardian review (``thread_source: "guardian_review"``, ``source.subagent.other:
  "guardian"``), a review, a memory consolidation or a compaction thread: real calls, counted in
  a ``side`` (``compaction``) lane of that name;
* a remote compaction's call, whose usage is only in the ``token_usage_record`` (each response's
  usage, otherwise repeated by its token count) whose response the ``compacted`` record after it
  names: a compaction call, extending the conversation it summarizes, on the model the record's
  ``attribution`` names (a v2 compaction may run on another model than the turn's);
* a billed response outside the conversation (:meth:`_Rollout._settle`): a ``token_usage_record``
  of the thread's own that no token count repeats, no ``compacted`` record names and the next
  token count's running total did not take in. Codex records some side requests so (an isolated
  image description); a remote compaction whose output was rejected would look the same, but
  nothing in the record says which: a call of its own, on a head of its own, never a compaction,
  and the conversation goes on as before it. A record of another thread (a one-shot delegate's
  usage forwarded to its parent, kept out of the parent's running total) is no call of this
  thread, named with its tokens in a note;
* a fork (``forked_from_id``, ``forked_from_ordinal_exclusive``) or a continuation window after
  a compaction (``history_base {thread_id, end_ordinal_exclusive}``), whose inherited history is
  by reference: any record below that ordinal would be the earlier thread's, not counted; a
  continuation's first call starts a new chain after a compaction.

A fork (``forked_from_id`` in its first ``session_meta``, by reference or, in earlier versions,
with the source's records copied) goes on with the source's running total (Codex seeds a forked
thread's token info from the history's last token count): its first call's total less that
call's own usage is the source's total at the fork point, and names the source's call there,
which the fork's first call extends (the audit links it when the source's rollout is read too).
A rollout starting with a ``rollout_reference`` record (later Codex: the history it goes on from
named by ``rollout_path`` and ``thread_id``, not copied) is linked the same way: a fork of the
thread it names, or, naming its own thread, a later rollout of it going on from the earlier one.

Forks from Codex 0.35 to at least 0.125 (and 0.107+ subagents spawned with their parent's
history) hold no ordinals and no marker of where the copy ends: the fork's ``session_meta`` is
followed by the source's whole rollout up to the fork point (its ``session_meta``, token counts
with their running totals, items), every record written at once at the fork and timestamped
then. The copy is the run of records from that second ``session_meta`` (another thread's id)
each written within :data:`COPY_GAP_MS` of the one before (a call's token count comes a model
response after its prompt): its token counts are never counted here, and the fork's first call
extends the source's call whose running total the copy ends with. Codex before 0.78 started
the fork's running total again from zero, later versions seed it from the copy's last token
count: a note says which the first call shows (or that it shows neither). The source's rollout
in the audit (read before the fork's, whatever the file order: :func:`~prefixbench.workloads.audit.reading.answers_first`),
the note says how many of the copy's token counts are its calls, and a token count past the
run, before the fork's first call, whose running total goes on from the copy's last and that
the source counted is the copy's too (Codex stalled writing it).

A ``thread_rolled_back {num_turns}`` event (``/undo`` of turns, the app server's
``thread/rollback``) drops the last user turns from the history, their records staying in the
file (their calls were made: counted): the call after it extends the last call of the turn
before them (none when the rollout holds fewer turns, or a compaction came between), a
``rewind`` event. A user turn is counted as Codex counts it when it rebuilds the history: every
user message, whether or not a call followed it (a turn interrupted or failed before a reply is
one), except the context Codex writes as user messages itself (a text opening with one of
:data:`CONTEXT_MARKERS`' tags and closing with its end tag: the environment context, AGENTS.md
and user instructions, skills, a user's shell command, an interrupted turn's notice, a subagent's
notification, a hook's prompt). From Codex 0.118 (multi-agent v2, openai/codex
``codex-rs/core/src/context_manager/history.rs`` ``is_user_turn_boundary``, spring 2026) an
instruction from another agent is a turn too (an ``agent_turn`` event): an ``agent_message``
item (``{author, recipient, content: [{type: input_text | encrypted_content}]}``, later
releases), or an assistant message whose one content item (``output_text`` or ``input_text``)
is the JSON of an inter-agent communication (``{author, recipient, other_recipients?, content,
trigger_turn}``: see :func:`_inter_agent_turn`). An earlier rollout's assistant message of that
JSON is no turn; one with no ``cli_version`` is taken as later (no earlier Codex wrote those
messages). The latest Codex (``codex-rs/history``'s ``RolloutItem``, late 2026) writes such an
instruction as a line of its own, ``inter_agent_communication`` (the communication itself,
``{author, recipient, other_recipients, content, trigger_turn}``), instead of the ``agent_message``
item it puts in the history: read as that item, a turn (its rollback counts the line as one).

A record without ``ordinal`` is numbered by its place in the file (0-based).

Checked against openai/codex's ``codex-rs/history/src/rollout_payload.rs`` at commit 5ef96ab2
(the rollout line kinds) and ``codex-rs/rollout`` (``.jsonl.zst`` archives, the timers sidecar
``<rollout>.jsonl.timers.json``, which a folder walk skips as metadata): nothing else to read.

**``codex exec --json`` before 0.44** printed Codex's own events (``Event {id, msg}``, ``msg``
tagged by ``type``), one a line, after a config summary (``{"model", "provider", ...}``) and
``{"prompt"}``; every ``token_count`` is one model response's usage, sent when the response
completed (openai/codex ``codex-rs/exec/src/event_processor_with_json_output.rs`` and the
protocol's ``EventMsg::TokenCount`` then): first ``TokenUsage`` itself (``{type: "token_count",
input_tokens, cached_input_tokens, output_tokens, ...}``; ``cached_input_tokens`` may be null),
later ``{info: {total_token_usage, last_token_usage}, rate_limits}``, re-sent with the same
``info`` when rate limits arrive (a repeat of the running total: not a call) or ``info: null``
before the first call. Each count is a call of one chain in file order; the output has no
timestamps. A call whose running total the session's rollout (read too) counted is not counted
again. (0.44 on, the output is per turn only: refused, :mod:`prefixbench.workloads.logs.formats.headless`.)

**``codex app-server`` output** (what a client of Codex's app-server protocol, v2, reads from its
stdout and may keep: IDE extensions, SDKs, evaluation harnesses): JSON-RPC messages one a line,
without ``jsonrpc``: responses ``{id, result}`` (``initialize``'s names ``codexHome``;
``thread/start``'s the ``thread``, ``model``, ``modelProvider`` and ``reasoningEffort``) and
notifications ``{method, params}`` (``thread/started``, ``turn/*``, ``item/*``, ...). Codex sends
``thread/tokenUsage/updated`` with ``params.tokenUsage {total, last}`` (camelCase:
``inputTokens``, ``cachedInputTokens``, ``outputTokens``, ``reasoningOutputTokens``,
``totalTokens``) each time a model response's usage arrives, as the rollout's ``token_count``:
``last`` is that call's usage, ``total`` the thread's running total. Each is a call, a chain per
thread (``params.threadId``) in file order, with no timestamps read; a repeated running total is
not a call, nor one the thread's rollout (read too) counted. An ``ephemeral`` thread keeps no
rollout: this output is then the only record of its calls.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.simulator.providers import OPENAI, provider_named_in, rules_for
from prefixbench.simulator.providers.hosts import agent_relay, azure_service, billing_host, codex_azure
from prefixbench.simulator.providers.vllm import UNKNOWN, self_hosted_upstream
from prefixbench.simulator.providers.base import count, subset_usage
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.common import as_dict, head_digest, objects, parse_time_ms
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LaneKind, Prefix, Provider, ReplayedToReasoning, TraceRequest

NAME = "codex"
#: An unmarked copy of a source thread's rollout (Codex 0.35-0.125+ forks) is the run of records
#: after this rollout's ``session_meta`` each timestamped at most this long after the one before:
#: Codex writes the copy in one go, line after line; a call of the fork's own is written a model
#: response (whole prompt prefilled, reply streamed) after its prompt.
COPY_GAP_MS = 100
#: The texts Codex writes into the history as user messages of its own (start tag, end tag,
#: matched ignoring case and surrounding space): a message with one is no user turn, for
#: ``thread_rolled_back`` (Codex's contextual user fragments and hook prompts).
CONTEXT_MARKERS = (
    ("<environment_context>", "</environment_context>"),
    ("# AGENTS.md instructions for ", "</INSTRUCTIONS>"),
    ("<user_instructions>", "</user_instructions>"),
    ("<skill>", "</skill>"),
    ("<user_shell_command>", "</user_shell_command>"),
    ("<turn_aborted>", "</turn_aborted>"),
    ("<subagent_notification>", "</subagent_notification>"),
    ("<hook_prompt", "</hook_prompt>"),
)
#: The first Codex release whose rollbacks count an inter-agent instruction as a turn (see the module doc).
INTER_AGENT_TURNS_FROM = (0, 118)
#: ``codex exec --json`` before 0.44 printed its config summary and the prompt before any event.
_EXEC_HEAD = 2
_LINE_KINDS = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")


def detect(value: dict) -> Evidence | None:
    """A rollout line (``type`` + ``payload``); an older rollout by its ``record_type`` lines or
    its first line ``{id, timestamp, instructions}``; an event of ``codex exec --json`` before
    0.44 (``{id, msg: {type}}`` and nothing else)."""
    if value.get("type") in _LINE_KINDS and "payload" in value:
        return Evidence.ENTRY
    if _exec_event(value) or _app_server_message(value):
        return Evidence.SHAPE
    if "record_type" in value or ("id" in value and "timestamp" in value and "instructions" in value and "type" not in value):
        return Evidence.SHAPE  # rollouts before event_msg/token_count (no usage in them)
    return None


def _provider(session_meta: dict) -> Provider:
    """Who serves a session's calls, from its ``model_provider``."""
    named = str(session_meta.get("model_provider", "")).lower()
    # A host running open models itself (simulator/providers/vllm.py), or ``oss``, the ``--oss``
    # flag's local one: not OpenAI's (Codex's default).
    if self_hosted_upstream(named, oss=True):
        return UNKNOWN.name
    return provider_named_in(named).name


def _upstream(session_meta: dict) -> str:
    """The host of a session's calls where it runs open models itself (:func:`_provider`'s
    ``oss`` and self-hosted ones) or is a third-party host of open models (a ``model_provider``
    of ``fireworks``, ``groq``...), kept as their ``upstream``: no maker bills them at its list
    price, so they are unpriced whatever the model's name; "" for any other."""
    return billing_host(str(session_meta.get("model_provider", "")), oss=True)


def _relay(session_meta: dict) -> str:
    """The relay a session's calls went through (:func:`~prefixbench.simulator.providers.hosts.agent_relay`
    of its ``model_provider``, OpenAI being Codex's own): "" for none."""
    return agent_relay(str(session_meta.get("model_provider", "")), OPENAI.name)


def _service(session_meta: dict) -> str:
    """The service of OpenAI's models a session's calls went to where its ``model_provider``
    is Azure OpenAI's id (:func:`~prefixbench.simulator.providers.hosts.codex_azure`: ``azure``
    itself, not a name holding it) and the calls are read as OpenAI's: "" for any other
    (``azure-deepseek`` serves DeepSeek's models, ``azureproxy-litellm`` is a relay)."""
    named = str(session_meta.get("model_provider", ""))
    if _provider(session_meta) != OPENAI.name or not codex_azure(named):
        return ""
    return azure_service(name=named)


def _usage(last: dict, where: str, app_server: bool = False) -> Usage:
    """``last_token_usage``: ``input_tokens`` includes ``cached_input_tokens`` and, in later
    versions (the Responses API's ``cache_write_tokens``, GPT-5.6 on), ``cache_write_input_tokens``;
    where the cached part is above ``input_tokens``, a count without it. ``app_server``: ``last``
    is an app-server's ``tokenUsage.last`` read under these names (:func:`_snake`), and an error
    names its keys as that output has them (``tokenUsage.last.inputTokens``)."""
    def named(key: str) -> str:
        return _camel(key) if app_server else key

    where_key = "tokenUsage.last." if app_server else "last_token_usage."
    total_in = count(last.get("input_tokens"), where, where_key + named("input_tokens"))
    cached = count(last.get("cached_input_tokens"), where, where_key + named("cached_input_tokens"))
    written = count(last.get("cache_write_input_tokens"), where, where_key + named("cache_write_input_tokens"))
    output = count(last.get("output_tokens"), where, where_key + named("output_tokens"))
    # Cached tokens above input_tokens: a gateway's count without them (see subset_usage).
    also = f" and {named('cache_write_input_tokens')} ({written})" if written else ""
    return subset_usage(total_in, cached, written, output,
                        excess=f"{where}: {named('cached_input_tokens')} ({cached}){also} exceed {named('input_tokens')} ({total_in})")


def _camel(key: str) -> str:
    """A rollout count's name as the app-server spells it (``cached_input_tokens`` as ``cachedInputTokens``)."""
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


def _ordinal(value: object, where: str, key: str) -> int | None:
    """An ordinal field: absent or null is None; anything but a non-negative integer (some builds
    write ``subagent_history_start_ordinal`` as a string of digits: read as its number) is an error."""
    if value is None:
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 19:
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UserError(f"{where}: {key} is not a non-negative integer ({value!r:.40})")
    return value


def _user_turn(payload: dict) -> bool:
    """Whether a user message opens a user turn as Codex counts them (see :data:`CONTEXT_MARKERS`)."""
    content = payload.get("content")
    for part in content if isinstance(content, list) else ():
        text = part.get("text") if isinstance(part, dict) and part.get("type") == "input_text" else None
        if isinstance(text, str):
            folded = text.strip().lower()
            if any(folded.startswith(start.lower()) and folded.endswith(end.lower()) for start, end in CONTEXT_MARKERS):
                return False
    return True


def _inter_agent_turn(payload: dict, version: str | None) -> bool:
    """Whether a response item is an instruction from another agent that Codex (of ``version``)
    counts as a turn when it drops turns for ``thread_rolled_back``: an ``agent_message`` item, or
    an assistant message whose only content item is the JSON of an inter-agent communication
    (what Codex's ``InterAgentCommunication`` reads back: an object with string ``author``,
    ``recipient`` and ``content``, a boolean ``trigger_turn``, ``other_recipients`` absent or a
    list of strings, ``encrypted_content`` absent, null or a string)."""
    ptype = payload.get("type")
    if ptype == "agent_message":
        return True
    if ptype != "message" or payload.get("role") != "assistant" or (-1, 0) < _release(version) < INTER_AGENT_TURNS_FROM:
        return False
    content = payload.get("content")
    if not isinstance(content, list) or len(content) != 1 or not isinstance(content[0], dict):
        return False
    text = content[0].get("text") if content[0].get("type") in ("output_text", "input_text") else None
    if not isinstance(text, str) or not text.lstrip().startswith("{"):
        return False
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(value, dict) or not all(isinstance(value.get(key), str) for key in ("author", "recipient", "content")):
        return False
    others = value.get("other_recipients", [])
    return (isinstance(value.get("trigger_turn"), bool) and isinstance(others, list) and all(isinstance(o, str) for o in others)
            and isinstance(value.get("encrypted_content", ""), (str, type(None))))


def _codex_context(payload: dict, metadata: dict) -> bool:
    """Whether a response item is context Codex put in the history itself, no model output and no
    input that sends a call: a developer or system message, ``additional_tools`` (tools Codex adds
    to the context, role developer) or ``configuration_update`` (later Codex, openai/codex
    ``codex-rs/protocol`` ``ResponseItem``), or an assistant message whose line ``metadata`` marks
    it a ``delivered_assistant_message`` (text a messaging tool confirmed delivered, which the
    harness keeps: ``codex-rs/history``'s retained context, written as that message)."""
    return (payload.get("role") in ("developer", "system") or payload.get("type") in ("additional_tools", "configuration_update")
            or isinstance(metadata.get("delivered_assistant_message"), str))


def _tool_names(value: object, depth: int = 0) -> set[str]:
    """The names of the tools a ``dynamic_tools_updated`` payload (or the list it holds) names:
    every object with a string ``name`` beside a ``description``, ``inputSchema`` or ``tools`` (a
    function, or a namespace of them), a few levels down."""
    if depth > 4:
        return set()
    if isinstance(value, list):
        return set().union(*(_tool_names(v, depth + 1) for v in value)) if value else set()
    if not isinstance(value, dict):
        return set()
    found = {value["name"]} if isinstance(value.get("name"), str) and any(
        k in value for k in ("description", "inputSchema", "input_schema", "tools")) else set()
    return found.union(*(_tool_names(v, depth + 1) for v in value.values()))


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class _Thread(msgspec.Struct, frozen=True):
    """What a rollout's first ``session_meta`` says its thread is."""

    lane: str = "main"
    kind: LaneKind = "main"
    #: A thread-spawned subagent's spawning thread.
    parent: str | None = None
    #: For the notes: ``subagent McClintock (/root/map_audit), depth 1``...
    label: str = ""


def _thread(payload: dict) -> _Thread:
    """The lane a thread's calls go to, from ``source`` and ``thread_source`` (Codex's
    ``SessionSource``: a string for a root thread; ``{"subagent": "review" | "compact" |
    "memory_consolidation" | {"thread_spawn": {...}} | {"other": name}}``; ``{"internal": ...}``)."""
    source = payload.get("source")
    thread_source = payload.get("thread_source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = as_dict(sub.get("thread_spawn")) if isinstance(sub, dict) else {}
    other = _text(sub.get("other")) if isinstance(sub, dict) else None
    if spawn or thread_source == "subagent" and not isinstance(sub, str) and other is None:
        nickname = _text(spawn.get("agent_nickname")) or _text(payload.get("agent_nickname"))
        path = _text(spawn.get("agent_path")) or _text(payload.get("agent_path"))
        parent = _text(spawn.get("parent_thread_id")) or _text(payload.get("parent_thread_id"))
        name = f"{nickname} ({path})" if nickname and path else nickname or path or str(payload.get("id") or "?")
        depth = spawn.get("depth")
        label = f"subagent {name}" + (f", depth {depth}" if isinstance(depth, int) and not isinstance(depth, bool) else "")
        return _Thread(f"subagent:{name}"[:120], "subagent", parent, label + (f", spawned by thread {parent}" if parent else ""))
    if thread_source == "guardian_review" or other == "guardian":
        return _Thread("guardian-review", "side", None, "guardian review thread (Codex's approval reviewer)")
    internal = source.get("internal") if isinstance(source, dict) else None
    if thread_source == "memory_consolidation" or "memory_consolidation" in (sub, internal):
        return _Thread("memory-consolidation", "side", None, "memory consolidation thread")
    if sub == "review":
        return _Thread("review", "side", None, "review thread (/review)")
    if sub == "compact":
        return _Thread("compact", "compaction", None, "compaction thread")
    if other is not None or isinstance(sub, str):
        name = (other or str(sub))[:80]
        return _Thread(f"subagent-{name}", "side", None, f"internal {name} thread")
    return _Thread()


class _Rollout:
    """The requests of one rollout, line by line."""

    def __init__(self, path: Path, ctx: ImportContext) -> None:
        self.name = str(path)
        self.filename = path.name
        self.ctx = ctx
        self.out: list[TraceRequest] = []
        self.skipped: list[tuple[int, str]] = []
        self.session = self.name
        self.version: str | None = None
        self.base_tag = ""
        #: The base instructions ``session_meta`` logs (None: not logged), for the head key to
        #: carry again when a ``dynamic_tools_updated`` record changes the tools after them.
        self.base_text: str | None = None
        #: The dynamic tools the first ``session_meta`` logs (None: not logged), for a
        #: ``dynamic_tools_updated`` record going back to them to give the start's head key again.
        self.start_tools: object = None
        self.provider: Provider = "openai"
        #: The self-hosted host that serves the calls (:func:`_upstream`), "" for a vendor.
        self.upstream = ""
        #: The relay the calls went through (:func:`_relay`), "" for none.
        self.relay = ""
        #: The service of OpenAI's models the calls went to (Azure OpenAI: :func:`_service`), "" for none.
        self.service = ""
        self.model = NO_MODEL
        self.effort: str | None = None
        self.last_input_ms: int | None = None
        self.first_output_ms: int | None = None
        self.last_output_ms: int | None = None
        #: Whether a token count has claimed the output items since the last input.
        self.outputs_claimed = False
        #: A response whose token count came only after the next input (a tool the model called,
        #: such as request_user_input, ran before Codex wrote it): (sent, first output, last output),
        #: and the events and blocks logged before that input (the rest are the next call's).
        self.unclaimed: tuple[int | None, int | None, int | None] | None = None
        self.unclaimed_at = (0, 0)
        #: A token count came before any output item since the last input (Codex 0.58 writes a
        #: call's count just before its items): the items up to the next input are that call's.
        self.claims_next_outputs = False
        #: The prompt of the last call and of the first call of the user turn it belongs to (see
        #: :meth:`_shared`), and how many calls were taken to drop a turn's reasoning.
        self.last_prompt: int | None = None
        self.last_output = 0
        self.turn_prompt: int | None = None
        #: A turn was interrupted since the last call (``turn_aborted``): the next turn keeps its reasoning.
        self.aborted = False
        #: Token counts whose running total rose by more than their own call's usage (and any call
        #: counted since the one before): (line, input, output tokens beyond it, after an
        #: interrupted turn); and where the calls counted since the last token count start.
        self.total_jumps: list[tuple[int, int, int, bool]] = []
        self.out_at_total = 0
        #: Whether a call of the current user turn reasoned: its token count's
        #: ``reasoning_output_tokens`` above 0, or a ``reasoning`` item (Codex 0.98 logs one with
        #: a count of 0); the call being counted's count; the ``reasoning`` items seen, and their
        #: number at the last user message and at the current turn's start.
        self.turn_reasoned = False
        self.reasoned = False
        #: The call being counted's ``reasoning_output_tokens`` (None: not logged).
        self.reasoning_tokens: int | None = None
        self.reasoning_items = 0
        self.reasoning_at_user = 0
        self.reasoning_at_turn = 0
        self.reasoning_dropped = 0
        #: Per user turn of this rollout (as Codex counts them, a turn with no call too), after
        #: its last call or the last call before it: (chain parent, turn prompt, last prompt, last
        #: output); the first entry is before any turn. A ``thread_rolled_back`` goes back to the
        #: entry before the turns it drops. Where in ``events`` the turns not yet claimed by a call began.
        self.turns: list[tuple[str | None, int | None, int | None, int]] = [(None, None, None, 0)]
        self.turn_marks: list[int] = []
        self.rollbacks = 0
        self.blocks = 0
        self.events: list[tuple[str, str]] = []
        self.sessions_seen = 0
        self.previous_total: str | None = None
        self.last_total: dict | None = None
        self.chain_parent: str | None = None
        #: Records numbered below this are another thread's history (see the module doc).
        self.index = 0
        self.copied_below: int | None = None
        self.copied_why = ""
        self.copied_calls = 0
        self.copied_total: dict | None = None
        self.own_user_turns = 0  # user turns of this thread's own (after any copy): a re-sent count comes before them
        self.copied_session: str | None = None
        #: A fork's source thread: its first call extends the source's call at the fork point.
        self.forked_from: str | None = None
        #: The thread's own earlier rollout this one goes on from, named by a ``rollout_reference``
        #: (a later segment of the thread): its first call extends that rollout's last call.
        self.segment_of: str | None = None
        #: An unmarked copy of another thread's rollout (see the module doc): its thread, whether
        #: records still belong to it, when its last record was written, its first and last lines.
        self.copy_from: str | None = None
        self.copy_open = False
        self.copy_last_ms = 0
        self.copy_lines = (0, 0)
        self.meta_ms: int | None = None
        #: How the fork's first call's running total goes on from the copy's (for the notes).
        self.copy_check = ""
        #: The running total a fork's own calls started from (their sum is Codex's total less it).
        self.total_base: dict | None = None
        #: The threads whose session_meta the copy holds (its source's, and the source's own
        #: source's when that was a fork too); of the copy's token counts, how many their rollouts
        #: read before this one (in the audit) counted; and those after the run, found so, that it went on over.
        self.copy_threads: list[str] = []
        self.copy_found = 0
        self.copy_stretched = 0
        self.thread = _Thread()
        self.thread_notes: list[str] = []
        #: The last ``token_usage_record`` no token count has matched yet: a remote compaction's
        #: call, if the ``compacted`` record after it names its response (with the model its
        #: ``attribution`` names, when it names one).
        self.held: tuple[Record, int | None, str, dict, str | None] | None = None
        #: The usage of the compaction call just counted (its token_count, if any, is not a call).
        self.compaction_usage: dict | None = None
        #: The last token count's usage, while no usage record has followed it (its record, if
        #: one comes after it, is that call's); and the lines of the records counted as calls of
        #: their own (no token count repeated them, no ``compacted`` named them, the running total
        #: did not take them in).
        self.count_usage: dict | None = None
        self.side_responses: list[int] = []
        #: Held records a later record or ``compacted`` passed over, kept for the next token count
        #: to decide (:meth:`_settle`); those the file ended on, never decided (their lines); those
        #: before a fork's first running total, which cannot say what they were (their lines).
        self.orphans: list[tuple[Record, int | None, str, dict, str | None]] = []
        self.undecided: list[int] = []
        #: token_count events without usage (``info`` null: a rate-limits update, or a call that
        #: ended with none), for the note of a rollout that has no call to audit.
        self.usage_less = 0
        self.unknown_base: list[int] = []
        #: Records of another thread (a one-shot delegate's forwarded usage): line, thread, usage.
        self.forwarded: list[tuple[int, str, dict]] = []
        self.continued = False  # a continuation window (history_base): its running total may go on from the earlier one's

    def line(self, record: Record) -> None:
        value: dict = record.value  # type: ignore[assignment]
        where = f"{self.name}:{record.line}"
        kind = value.get("type")
        payload = as_dict(value.get("payload"))
        ordinal = _ordinal(value.get("ordinal"), where, "ordinal")
        ordinal = self.index if ordinal is None else ordinal
        self.index += 1
        if self.copied_below is not None and ordinal < self.copied_below and not (kind == "session_meta" and self.sessions_seen == 0):
            self._copied(record, kind, payload)
            return
        when = parse_time_ms(value.get("timestamp"), where) if "timestamp" in value else None
        if self.copy_open or (self.index == 2 and kind == "session_meta" and self.copied_below is None and self.sessions_seen == 1):
            if self._in_copy(record, payload, when):
                self._copied(record, kind, payload)
                return
        ptype = payload.get("type")
        if kind == "session_meta":
            self._session_meta(payload, where, when)
        elif kind == "turn_context":
            self._turn_context(payload)
        elif kind == "rollout_reference":
            self._reference(payload)
        elif kind == "token_usage_record":
            self._usage_record(record, payload, when)
        elif kind == "compacted" or (kind == "event_msg" and ptype in ("context_compacted", "compacted")):
            # Records passed over before it wait for the next token count (:meth:`_settle`): nothing
            # in them says they were attempts of this compaction.
            if kind == "compacted" and self.held is not None and self.held[2] == payload.get("compaction_response_id"):
                self._compaction_call(*self.held)
                self.held = None
            self._park()
            if not any(event == "compaction" for event, _ in self.events):  # one compaction, however many records say so
                self.events.append(("compaction", ""))
            self.chain_parent = None
            self.turns = [(None, None, None, 0)]  # a rollback goes back no further than the compacted history
            self.turn_marks = []
        elif kind == "response_item":
            self._item(payload, when, as_dict(value.get("metadata")))
        elif kind == "inter_agent_communication":
            # Later Codex writes another agent's instruction as this line, not as the agent_message
            # item it puts in the history: read as that item (a turn for a rollback, in any version).
            self._item({"type": "agent_message"}, when)
        elif kind == "dynamic_tools_updated":
            self._tools_updated(payload, record.line)
        elif kind == "event_msg" and ptype == "token_count":
            self._token_count(record, value, payload, when)
        elif kind == "event_msg" and ptype == "thread_settings_applied":
            self._settings(payload)
        elif kind == "event_msg" and ptype == "thread_rolled_back":
            self._rolled_back(payload, where)
        elif kind == "event_msg" and ptype == "turn_aborted":
            self.aborted = True

    def _usage_record(self, record: Record, payload: dict, when: int | None) -> None:
        """``token_usage_record`` (Codex 0.153 on, paginated rollouts): one completed response's
        usage, written when the response completed. A token count repeats it (before or after it);
        a remote compaction's has none, and the ``compacted`` record after it names its response.
        Another thread's record (a one-shot delegate's usage forwarded to its parent, which Codex
        keeps out of the parent's running total) is not this thread's call: a note names it with
        its tokens. A record no token count repeats and no ``compacted`` names waits for the next
        token count to say what it was (:meth:`_settle`)."""
        usage, response = as_dict(payload.get("usage")), _text(payload.get("response_id"))
        thread = _text(payload.get("thread_id"))
        if thread is not None and self.session != self.name and thread != self.session:  # the rollout's thread named
            if usage:
                self.forwarded.append((record.line, thread, usage))
            return
        self._park()
        if self.count_usage is not None and usage and _same(self.count_usage, usage):
            self.count_usage = None  # the record of the token count just before it
            return
        model = _text(as_dict(payload.get("attribution")).get("model"))
        self.held = (record, when, response, usage, model) if response is not None and usage else None

    def _park(self) -> None:
        """The held record was not this token count's or compaction's: the next token count decides it."""
        if self.held is not None:
            self.orphans.append(self.held)
        self.held = None

    def _settle(self, total: object, last: dict) -> None:
        """The records no token count repeated and no ``compacted`` named, at the next token count.
        One whose usage Codex's running total took in (it rose by that much beyond this count's
        own call) is a response with no token count of its own: not counted, as before (the
        running-total note names it). Any other is a billed response outside the conversation's
        token counts: Codex records some side requests so (an isolated image description's
        ``record_observed_response_completed``, with no token count). A remote compaction whose
        output was rejected after its response completed would look the same, but the record does
        not say so: it is counted as a call of its own (:meth:`_side_call`), never a compaction,
        and the history goes on as before it. Before a fork's or a continuation's first running
        total, the total it started from is not known: those records are named, not counted."""
        orphans, self.orphans = self.orphans, []
        keys = ("input_tokens", "output_tokens")
        if isinstance(self.last_total, dict):
            previous: dict | None = self.last_total
        elif self.thread.kind == "subagent" or not (
                self.forked_from or self.segment_of or self.copy_from or self.continued
                or self.copied_total is not None or self.copied_below is not None):
            previous = {}  # a new thread's (or a subagent's) running total starts from zero
        else:
            previous = None  # it goes on from another rollout's, not known here
        if previous is None:
            self.unknown_base += [held[0].line for held in orphans]
            return
        rise = None
        if isinstance(total, dict) and all(
                isinstance(d.get(k, 0), int) and not isinstance(d.get(k, 0), bool) for d in (total, previous, last) for k in keys):
            rise = [total.get(k, 0) - previous.get(k, 0) - last.get(k, 0) for k in keys]
        spent = [tuple(held[3].get(k, 0) if isinstance(held[3].get(k, 0), int) else 0 for k in keys) for held in orphans]
        taken = _taken_in(spent, rise)
        for n, held in enumerate(orphans):
            if n not in taken:
                self._side_call(*held)

    def _billed_once(self, record: Record, response: str, what: str) -> bool:
        """Whether the usage of ``response`` is new to the audit; one an earlier session's rollout
        billed already (a fork or resume replays it) is skipped as ``what`` replayed."""
        if f"response:{response}" in self.ctx.codex_totals:
            self.skipped.append((record.line, f"{what} replayed from an earlier session (fork/resume)"))
            return False
        self.ctx.codex_totals.add(f"response:{response}")
        return True

    def _response_call(self, record: Record, when: int | None, model: str | None, usage: dict, **fields) -> TraceRequest:
        """The call of a response whose usage is all the rollout logs of it: sent, first output and
        end at ``when``, on ``model``; ``fields`` give its lane, prefix and events."""
        return TraceRequest(
            file=self.name,
            line=record.line,
            seq=len(self.out),
            sent_ms=when,
            ready_ms=when,
            done_ms=when,
            provider=self.provider,
            upstream=self.upstream,
            relay=self.relay,
            service=self.service,
            model=model,
            envelope=(("effort", self.effort),) if self.effort else (),
            usage=_usage(usage, f"{self.name}:{record.line}"),
            agent_version=self.version,
            source_format=NAME,
            **fields,
        )

    def _side_call(self, record: Record, when: int | None, response: str, usage: dict, model: str | None) -> None:
        """A billed response no token count repeated, no ``compacted`` named and the running total
        did not take in (:meth:`_settle`): a call of its own on the model its record names, in a
        ``side`` lane of the thread's (``<lane>:side-responses``). Its prompt is not in the
        rollout: a head of its own, extending nothing; what was logged since the last call stays
        for the next one, which extends the conversation as before."""
        if not self._billed_once(record, response, "usage record"):
            return
        model = model or self.model
        self.out.append(
            self._response_call(
                record, when, model, usage,
                lane=f"{self.thread.lane}:side-responses",  # not the conversation's next call
                lane_kind="side",
                prefix=Prefix(f"codex:response:{model}:{self.session}#{response}", f"codex:{self.session}#response:{response}", None, 1),
                events=(),
            )
        )
        self.side_responses.append(record.line)
        self.out_at_total = len(self.out)  # not in Codex's running total

    def _reference(self, payload: dict) -> None:
        """``rollout_reference`` (later Codex, ``RolloutItem::RolloutReference``): the history this
        rollout goes on from is another rollout's, named (``rollout_path``, ``thread_id``) rather
        than copied. Before this rollout's first call it links that call as a fork by
        ``forked_from_id`` is linked (see the module doc): to another thread, a fork of it (its
        session_meta may name none); to this thread itself, a later rollout of the thread,
        going on from its earlier one. A subagent's reference is its parent's history, as its
        spawn says already."""
        thread = _text(payload.get("thread_id")) or _text(payload.get("rollout_id"))
        if thread is None or self.out or self.thread.kind != "main" or self.forked_from is not None or self.segment_of is not None:
            return
        if thread == self.session:
            self.segment_of = thread
        else:
            self.forked_from = thread
            self.events.append(("fork", f"forked from thread {thread} (by rollout_reference)"))

    def _rolled_back(self, payload: dict, where: str) -> None:
        """``thread_rolled_back {num_turns}`` (``/undo`` of turns, ``thread/rollback``): Codex drops
        the last ``num_turns`` user turns from the history (their records stay in the file); the next
        call extends the last call of the turn before them, as if they had never been sent."""
        n = payload.get("num_turns")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise UserError(f"{where}: thread_rolled_back num_turns is not a non-negative integer ({n!r:.40})")
        if n == 0:
            return
        self.rollbacks += 1
        # Turns this rollout does not hold (before a resume): the prompt goes back past all it has.
        kept = self.turns[:max(1, len(self.turns) - n)] if n < len(self.turns) else [(None, None, None, 0)]
        self.turns = kept
        self.turn_marks = self.turn_marks[:max(0, len(self.turn_marks) - n)]
        self.chain_parent, self.turn_prompt, self.last_prompt, self.last_output = kept[-1]
        self.turn_reasoned = False  # (not kept per turn: no drop is taken after a rollback but a shrink)
        self.reasoning_at_turn = self.reasoning_items
        self.events.append(("rewind", f"thread rolled back {n} user turn(s)"))

    def _turn_context(self, payload: dict) -> None:
        if isinstance(payload.get("model"), str):
            self.model = payload["model"]
        effort = payload.get("effort") if "effort" in payload else payload.get("reasoning_effort")
        if isinstance(effort, str) or effort is None:
            self.effort = effort

    def _settings(self, payload: dict) -> None:
        """``thread_settings_applied`` (later Codex): the model and effort every call after it uses."""
        settings = as_dict(payload.get("thread_settings"))
        if isinstance(settings.get("model"), str) and settings["model"]:
            self.model = settings["model"]
        if isinstance(settings.get("reasoning_effort"), str) and settings["reasoning_effort"]:
            self.effort = settings["reasoning_effort"]

    def _in_copy(self, record: Record, payload: dict, when: int | None) -> bool:
        """Whether a record belongs to an unmarked copy of another thread's rollout (see the
        module doc): the copy opens with that thread's ``session_meta`` right after this one's,
        written no earlier, and goes on while each record follows the one before within
        :data:`COPY_GAP_MS`."""
        if not self.copy_open:  # the second record, a session_meta
            source = _text(payload.get("id"))
            if source is None or source == self.session or when is None or self.meta_ms is None or when < self.meta_ms:
                return False  # the same thread (a resume), or not written after this one's: no copy Codex made
            self.copy_open, self.copy_from, self.copy_last_ms, self.copy_lines = True, source, when, (record.line, record.line)
            self.copied_why = f"thread {source}'s history, copied into this rollout when it was forked from it"
            if self.thread.kind == "main" and self.forked_from is None:
                self.forked_from = source
                self.events.append(("fork", f"forked from thread {source}"))
            return True
        if when is None or not 0 <= when - self.copy_last_ms <= COPY_GAP_MS:
            self.copy_open = False
            return False
        self.copy_last_ms, self.copy_lines = when, (self.copy_lines[0], record.line)
        return True

    def _source_counted(self, total: dict) -> bool:
        """Whether a rollout read before this one counted this running total as a call of a
        thread the copy is of (asked questions are kept: a file's reading in a worker is taken only
        when no earlier file answers one)."""
        nodes = [_total_node(thread, total) for thread in self.copy_threads]
        self.ctx.codex_asked.update(nodes)
        return any(node in self.ctx.codex_calls for node in nodes)

    def _copy_goes_on(self, record: Record, payload: dict) -> None:
        """A token count after the run taken as the copy, before any call of this thread's, whose
        running total goes on from the copy's last and that the source's rollout counted: the copy
        went on (Codex stalled writing it), up to here."""
        self.copy_stretched += 1
        self.copy_lines = (self.copy_lines[0], record.line)
        self._copied(record, "event_msg", payload)
        self.events, self.turn_marks = [event for event in self.events if event[0] == "fork"], []
        self.blocks = 0
        self.last_input_ms = self.first_output_ms = self.last_output_ms = None
        self.unclaimed = None
        self.claims_next_outputs = False

    def _copied(self, record: Record, kind: object, payload: dict) -> None:
        """A record of the history another thread wrote (a subagent's copy of its parent's):
        its settings carry over to this thread's first call, its token counts are never counted."""
        if kind == "turn_context":
            self._turn_context(payload)
        elif kind == "event_msg" and payload.get("type") == "thread_settings_applied":
            self._settings(payload)
        elif kind == "session_meta":
            thread = _text(payload.get("id"))
            self.copied_session = self.copied_session or thread
            if self.copy_from is not None and thread is not None and thread not in self.copy_threads:
                self.copy_threads.append(thread)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if isinstance(info, dict) and isinstance(info.get("last_token_usage"), dict):
                self.copied_calls += 1
                if isinstance(info.get("total_token_usage"), dict):
                    self.copied_total = info["total_token_usage"]
                    if self.copy_from is not None and self._source_counted(self.copied_total):
                        self.copy_found += 1
                # One reason for them all (the line tells which): a long copy is one row of skipped records.
                self.skipped.append((record.line, f"token_count of {self.copied_why}: counted in that thread's own rollout, not here"))

    def _session_meta(self, payload: dict, where: str, when: int | None = None) -> None:
        self.sessions_seen += 1
        if self.sessions_seen == 1:
            self.meta_ms = when
        self.session = str(payload.get("id") or self.session) if self.sessions_seen == 1 else self.session
        self.version = payload.get("cli_version") if isinstance(payload.get("cli_version"), str) else self.version
        self.provider, self.upstream, self.relay, self.service = _provider(payload), _upstream(payload), _relay(payload), _service(payload)
        if self.sessions_seen > 1:
            self.events.append(("resume", "a second session_meta: resumed or forked session"))
            return
        self.thread = _thread(payload)
        self.start_tools = payload.get("dynamic_tools")
        base = payload.get("base_instructions")
        text = as_dict(base).get("text") if isinstance(base, dict) else base
        if isinstance(text, str) and text:
            # The head key carries what the rollout shows of the head: rollouts of other
            # instructions (or dynamic tools) start with another one.
            self.base_text = text
            self.base_tag = head_digest([text, payload.get("dynamic_tools")])
        if self.thread.label:
            self.thread_notes.append(f"a Codex {self.thread.label}: its calls are the lane {self.thread.lane!r}")
        start = _ordinal(payload.get("subagent_history_start_ordinal"), where, "subagent_history_start_ordinal")
        base = payload.get("history_base")
        if base is not None and not isinstance(base, dict):
            raise UserError(f"{where}: history_base is not an object ({base!r:.40})")
        base = base or {}
        base_end = _ordinal(base.get("end_ordinal_exclusive"), where, "history_base.end_ordinal_exclusive")
        fork_end = _ordinal(payload.get("forked_from_ordinal_exclusive"), where, "forked_from_ordinal_exclusive")
        forked_from = _text(payload.get("forked_from_id"))
        base_thread = _text(base.get("thread_id"))
        copier = "the parent's history copied into this subagent's rollout" if self.thread.kind == "subagent" else "another thread's history copied into this rollout"
        ends = [(end, why, field) for end, why, field in (
            (start, copier, "subagent_history_start_ordinal"),
            (base_end, f"the history of {base_thread or 'an earlier rollout'}", "history_base.end_ordinal_exclusive"),
            (fork_end, f"the history of {forked_from or 'the thread it was forked from'}", "forked_from_ordinal_exclusive"),
        ) if end is not None]
        if ends:
            end, why, field = max(ends, key=lambda e: e[0])  # the first of equals: a subagent's copy
            self.copied_below, self.copied_why = end, f"{why} (below {field} {end})"
        # A continuation window: Codex rolled the thread over to a new file at a compaction (its
        # history_base names the thread's earlier window). A subagent names its parent in
        # forked_from_id: that is no fork of a main thread.
        continues = f"-{self.session}_" in self.filename or (base_thread is not None and base_thread == self.session) or (
            bool(base) and forked_from is None and self.thread.kind == "main")
        if forked_from is not None and self.thread.kind == "main" and not continues:
            self.events.append(("fork", f"forked from thread {forked_from}"))
            self.forked_from = forked_from
        elif continues:
            self.continued = True
            self.events.append(("compaction", "a continuation window: the thread went on in a new rollout after a compaction"))
            self.thread_notes.append(
                f"a continuation window of thread {self.session}"
                + (f" (history_base: {base_thread})" if base_thread else "")
                + ": its first call starts a new context after a compaction"
            )

    def _tools_updated(self, payload: dict, line: int) -> None:
        """``dynamic_tools_updated`` (Codex 0.167.2 on): the thread's dynamic tools may have
        changed, and the requests after it are sent with the list it holds. The tools come first
        in a request's prefix, so the head key follows them: where the payload holds a list
        (``dynamic_tools``, else ``tools``) the key is keyed as ``session_meta``'s, a digest of the
        base instructions and that list (the start's own key for the start's list); else a digest
        of the record whole. Only a key that changed is a change: then the next call is on another
        head and a ``tools_change`` event names the record, so a miss there is the tools' doing,
        not the provider's; the same list again changes nothing."""
        tools = next((payload[k] for k in ("dynamic_tools", "tools") if isinstance(payload.get(k), list)), None)
        if tools is None:
            tag = head_digest([self.base_text, "dynamic_tools_updated", payload])
        elif self.base_text is None and tools == self.start_tools:
            tag = ""  # the start's key: no base instructions logged, so none was digested
        else:
            tag = head_digest([self.base_text, tools])
        if tag == self.base_tag:
            return
        self.base_tag = tag
        names = sorted(_tool_names(payload if tools is None else tools))
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        self.events.append(("tools_change", f"dynamic_tools_updated at line {line}"
                            + (f" (tools named in it: {shown})" if names else "")))

    def _item(self, payload: dict, when: int | None, metadata: dict | None = None) -> None:
        """A message, tool call or output: inputs move the send time, the first output the answer
        time; the context Codex writes itself is neither (see :func:`_codex_context`)."""
        ptype = payload.get("type")
        if ptype == "ghost_snapshot":
            return  # Codex's own undo point (a git commit): never sent to the model, no output of it
        self.blocks += 1
        role = payload.get("role")
        if (ptype in ("function_call_output", "custom_tool_call_output") or (ptype == "message" and role == "user")
                or (ptype == "tool_search_output" and payload.get("execution") != "server")):
            if self.first_output_ms is not None and not self.outputs_claimed and self.unclaimed is None:
                # Outputs no token count has claimed yet: their call's count comes after this input.
                self.unclaimed = (self.last_input_ms, self.first_output_ms, self.last_output_ms)
                self.unclaimed_at = (len(self.events), self.blocks - 1)
            self.last_input_ms = when
            self.first_output_ms = None
            self.claims_next_outputs = False
            if ptype == "message" and role == "user":
                if _user_turn(payload):
                    self.own_user_turns += 1
                    self.turns.append(self.turns[-1])
                    self.turn_marks.append(len(self.events))
                self.events.append(("user_turn", ""))
                self.reasoning_at_user = self.reasoning_items
        elif not _codex_context(payload, metadata or {}):
            if ptype == "reasoning":
                self.reasoning_items += 1
            if self.first_output_ms is None:
                self.first_output_ms = when
            self.last_output_ms = when
            self.outputs_claimed = self.claims_next_outputs
        if _inter_agent_turn(payload, self.version):  # another agent's instruction: a turn for a rollback
            self.turns.append(self.turns[-1])
            self.turn_marks.append(len(self.events))
            self.events.append(("agent_turn", "an instruction from another agent"))

    def _token_count(self, record: Record, value: dict, payload: dict, when: int | None) -> None:
        """One request, unless its running total repeats one already counted."""
        info = payload.get("info")
        if not isinstance(info, dict):
            self.usage_less += 1
            return
        total = info.get("total_token_usage")
        last = info.get("last_token_usage")
        if not isinstance(last, dict):
            return
        if (self.copy_from is not None and not self.out and isinstance(total, dict) and self.copied_total is not None
                and _total_before(total, last) == _keys_of(self.copied_total, total) and self._source_counted(total)):
            self._copy_goes_on(record, payload)
            return
        if (not self.out and not self.own_user_turns and self.copied_total is not None and isinstance(total, dict)
                and _release(self.version) >= (0, 78) and _keys_of(self.copied_total, total) == total):
            # A fork's (Codex 0.118) first record of its own can be its copy's last token count
            # re-sent: the source's call, in the source's rollout, not a call of this thread. From
            # 0.78 a fork's running total goes on from its copy's, so a call of its own is above it
            # (before, it starts from zero and may equal it); and the re-sent one comes before any
            # user turn of the thread's own (a subagent's total starts from zero: its first call
            # after its task may equal the copy's).
            self.skipped.append((record.line, "repeated token_count (the running total its copied history ends with)"))
            return
        mine = next((n for n, held in enumerate(self.orphans) if _same(last, held[3])), None)
        if self.held is not None and _same(last, self.held[3]):
            self.held = None  # the record of this call
            self.count_usage = None
        elif mine is not None and not _no_tokens(last):
            # This call's record, passed over by a later one (another call's, or a delegate's its
            # session_meta named no thread for) before this token count came: this call's, not one
            # for the running total to decide; the later record waits for it.
            del self.orphans[mine]
            self._park()
            self.count_usage = None
        elif not _no_tokens(last):
            self._park()
            self.count_usage = last
        if self.orphans and not _no_tokens(last):
            self._settle(total, last)
        claimed, self.compaction_usage = self.compaction_usage, None
        if claimed is not None and _same(last, claimed):
            self.skipped.append((record.line, "token_count of the remote compaction call counted from its token_usage_record"))
            return
        if _no_tokens(last):
            # Codex 0.142+ writes one before a thread_rolled_back that drops the only turn (an
            # interrupted first turn): the running total reset to zeros, no prompt sent. Skipped
            # wherever it comes, before the running total is kept: the next call's total goes on
            # from the last real one, not from these zeros.
            self.skipped.append((record.line, "token_count of no tokens (a running total reset: no call made)"))
            return
        previous = self.last_total
        if isinstance(total, dict):
            self.last_total = total
        total_key = json.dumps(total, sort_keys=True)
        if total_key == self.previous_total:
            self.skipped.append((record.line, "repeated token_count (same running total)"))
            return
        self.previous_total = total_key
        if self.out and isinstance(previous, dict) and isinstance(total, dict):
            self._jump(record.line, previous, total, last)
        dedup = f"{total_key}@{value.get('timestamp')}"
        if dedup in self.ctx.codex_totals:
            self.skipped.append((record.line, "token_count replayed from an earlier session (fork/resume)"))
            return
        self.ctx.codex_totals.add(dedup)
        if not self.out and self.thread.kind == "subagent" and self.copied_total is not None:
            # The subagent's first prompt is its parent's at the spawn: it extends the parent's
            # call whose running total its copy of that history ends with.
            parent = self.thread.parent or self.copied_session
            if parent is not None:
                self.chain_parent = _total_node(parent, self.copied_total)
        elif not self.out and self.forked_from is not None and self.copy_from is not None and isinstance(total, dict):
            self._after_copy(total, last)
        elif not self.out and (self.forked_from or self.segment_of) is not None and isinstance(total, dict):
            # A fork's running total goes on from the source's at the fork point (Codex seeds a
            # forked thread's token info from the last token count of the history it forks):
            # that total, this call's total less its own usage, names the source's call there.
            # So does a later rollout of a thread from the earlier one it references.
            before = _total_before(total, last)
            source = self.forked_from or self.segment_of
            if before is not None and any(before.values()) and source is not None:
                self.chain_parent = _total_node(source, before)
                what = (f"a fork of thread {source}" if self.forked_from else
                        f"a later rollout of thread {source} (its rollout_reference names the earlier one)")
                self.thread_notes.append(
                    f"{what}: its first call extends that thread's call whose running total "
                    f"was {before.get('input_tokens', 0):,} input tokens (this call's total less its own), when that "
                    "thread's rollout is in the audit"
                )
        reasoning = last.get("reasoning_output_tokens")
        self.reasoned = isinstance(reasoning, int) and not isinstance(reasoning, bool) and reasoning > 0
        self.reasoning_tokens = reasoning if isinstance(reasoning, int) and not isinstance(reasoning, bool) and reasoning >= 0 else None
        self._add(record, _usage(last, f"{self.name}:{record.line}"), when, total)
        self.out_at_total = len(self.out)

    def _jump(self, line: int, previous: dict, total: dict, last: dict) -> None:
        """Note a running total that rose by more than this call's usage and the calls counted
        since the last token count: the usage of a call that has no token count of its own (a
        response cut off when the user interrupted its turn)."""
        keys = ("input_tokens", "output_tokens")
        if not all(isinstance(d.get(k), int) and not isinstance(d.get(k), bool) for d in (previous, total, last) for k in keys):
            return
        since = [r.usage for r in self.out[self.out_at_total:] if r.usage is not None]
        beyond_in = total["input_tokens"] - previous["input_tokens"] - last["input_tokens"] - sum(u.prompt for u in since)
        beyond_out = total["output_tokens"] - previous["output_tokens"] - last["output_tokens"] - sum(u.output for u in since)
        if beyond_in > 0 and beyond_out >= 0:
            self.total_jumps.append((line, beyond_in, beyond_out, self.aborted))

    def _after_copy(self, total: dict, last: dict) -> None:
        """A fork's first call after an unmarked copy of its source: it extends the source's call
        whose running total the copy ends with (the copy's last token count: Codex's own history
        at the fork point), and its own total says how Codex went on from the copy."""
        before = _total_before(total, last)
        if self.copied_total is None:
            self.copy_check = "the copy holds no token count: the fork is of its source before any call, not linked"
            return
        if before and before == _keys_of(self.copied_total, before):
            self.copy_check = "this thread's first running total goes on from the copy's last (Codex 0.78 on seeds a fork's from it)"
            if (-1, 0) < _release(self.version) < (0, 78):
                self.copy_check += f", which Codex {self.version} did not: the copy may go on past line {self.copy_lines[1]}"
            self.total_base = self.copied_total
        elif before is not None and not any(before.values()):
            self.copy_check = "this thread's first running total starts again from zero (Codex before 0.78)"
            if _release(self.version) >= (0, 78):
                self.copy_check += f", which Codex {self.version} did not: where the copy ends is uncertain"
        else:
            self.copy_check = (
                "this thread's first running total neither goes on from the copy's last nor starts from zero: "
                "where the copy ends is uncertain"
            )
        self.chain_parent = _total_node(self.forked_from or self.copy_from or "?", self.copied_total)
        self.thread_notes.append(
            f"a fork of thread {self.forked_from}: its first call extends that thread's call whose running total "
            f"was {_amount(self.copied_total.get('input_tokens'))} input tokens (the copy's last token count), when that "
            "thread's rollout is in the audit"
        )

    def _compaction_call(self, record: Record, when: int | None, response: str, usage: dict, model: str | None) -> None:
        """A remote compaction's call (later Codex): its usage only in a ``token_usage_record``
        whose response the ``compacted`` record after it names. It sends the conversation so far,
        on the model the record's ``attribution`` names: Codex may compact on another model than
        the turn's (the previous one when the user moved to a smaller window, or its fallback)."""
        if not self._billed_once(record, response, "compaction call"):
            return
        turn_model, self.model = self.model, model or self.model  # the head is the call's model's
        self.out.append(
            self._response_call(
                record, when, self.model, usage,
                lane=self.thread.lane,
                lane_kind=self.thread.kind,
                prefix=Prefix(self._head(), f"codex:{self.session}#compact:{response}", self.chain_parent, max(1, self.blocks)),
                events=tuple(self.events),
                compaction_call=True,
            )
        )
        self.model = turn_model
        self.compaction_usage = usage
        self.out_at_total = len(self.out)  # a compaction's usage is not in Codex's running total
        self.events, self.turn_marks = [], []
        self.blocks = 0

    def _add(self, record: Record, usage: Usage, when: int | None, total: object) -> None:
        node = _node(self.session, total, len(self.out))
        if isinstance(total, dict):
            self.ctx.codex_calls.add(node)
        sent = self.last_input_ms if self.last_input_ms is not None else when
        ready = self.first_output_ms if self.first_output_ms is not None else when
        done = when  # token_count is written when the response has ended
        events, blocks, carried = self.events, self.blocks, ([], 0)
        at = len(events)
        if self.unclaimed is not None and self.first_output_ms is None:
            # The count came after the next input (the call's tool ran first): the call was sent
            # before its outputs and ended with the last of them; that input is the next call's.
            sent = self.unclaimed[0] if self.unclaimed[0] is not None else sent
            ready = self.unclaimed[1] if self.unclaimed[1] is not None else ready
            done = self.unclaimed[2] if self.unclaimed[2] is not None else done
            at, blocks = self.unclaimed_at
            events, carried = events[:at], (events[at:], self.blocks - blocks)
        self.claims_next_outputs = self.first_output_ms is None and self.unclaimed is None
        self.unclaimed = None
        self.outputs_claimed = True
        turn = any(kind == "user_turn" for kind, _ in events)
        shared = self._shared(usage, turn)
        self.aborted = False
        self.out.append(
            TraceRequest(
                file=self.name,
                line=record.line,
                lane=self.thread.lane,
                lane_kind=self.thread.kind,
                seq=len(self.out),
                sent_ms=sent,
                ready_ms=ready,
                done_ms=done,
                provider=self.provider,
                upstream=self.upstream,
                relay=self.relay,
                service=self.service,
                model=self.model,
                envelope=(("effort", self.effort),) if self.effort else (),
                usage=usage,
                # Codex sends every output item back (reasoning as encrypted_content) in the next request.
                prefix=self._prefix(node, max(1, blocks), shared),
                events=tuple(events),
                agent_version=self.version,
                source_format=NAME,
            )
        )
        if self.chain_parent is None or turn:
            self.turn_prompt = usage.prompt
            self.turn_reasoned, self.reasoning_at_turn = False, self.reasoning_at_user
        self.turn_reasoned = self.turn_reasoned or self.reasoned
        self.reasoned = False
        self.reasoning_tokens = None
        self.chain_parent = node
        self.last_prompt = usage.prompt
        self.last_output = usage.output
        self.events, self.blocks = carried
        # The call is of the turn before those begun after its events (its count came after the
        # next input); those turns have no call yet: they go on from it too.
        later = [mark - at for mark in self.turn_marks if mark >= at]
        self.turn_marks = later
        state = (node, self.turn_prompt, self.last_prompt, self.last_output)
        for i in range(max(0, len(self.turns) - 1 - len(later)), len(self.turns)):
            self.turns[i] = state

    def _prefix(self, node: str, blocks: int, shared: int | None) -> Prefix:
        """The call's prefix: Codex sends every output item back in the next request, and on a
        model whose next call reads that response only as far as its reasoning
        (``ProviderRules.output_read_to_reasoning`` names them) the reasoning tokens the
        token count logs are what it reads of it."""
        if self.reasoning_tokens is not None and rules_for(self.provider).reads_output_to_reasoning(self.model):
            return ReplayedToReasoning(self._head(), node, self.chain_parent, blocks, replays_output=True, shared=shared,
                                       reasoning=self.reasoning_tokens)
        return Prefix(self._head(), node, self.chain_parent, blocks, replays_output=True, shared=shared)

    def _shared(self, usage: Usage, turn: bool) -> int | None:
        """How much of the previous call's prompt this one keeps (None: all of it). A call that
        opens a user turn with a prompt smaller than the previous call's plus that call's response
        (which Codex sends back whole; nothing compacted in between) was sent without the
        reasoning of the turn before: OpenAI renders no reasoning item of an earlier turn, and the
        prompt loses what it drops (the turn's other items stay, the user's message is added, so
        it may still grow). What it shares with the previous prompt then ends where that reasoning
        began, at the end of the prompt of that turn's first call. A prompt that grew by the
        response or more dropped it too where that turn reasoned (a ``reasoning`` item or reasoning
        tokens; the user's message outgrew what was dropped), unless the turn was interrupted
        (``turn_aborted``) or the model keeps an earlier turn's reasoning (the provider's
        ``turn_reasoning_kept``: GPT-5.6), as the public rollouts' did; only on a provider known
        to drop it (``turn_reasoning_dropped``: OpenAI, where it was measured)."""
        if (self.chain_parent is not None and self.turn_prompt is not None and self.last_prompt is not None and turn
                and usage.prompt < self.last_prompt + self.last_output):
            self.reasoning_dropped += 1
            return self.turn_prompt
        reasoned = self.turn_reasoned or self.reasoning_at_user > self.reasoning_at_turn
        if (self.chain_parent is not None and reasoned and turn and not self.aborted
                and rules_for(self.provider).drops_turn_reasoning(self.model)):
            self.reasoning_dropped += 1
            return self.turn_prompt
        return None

    def _head(self) -> str:
        """The unlogged head: a subagent's is its parent's (it goes on from the parent's prompt);
        a side thread has instructions and tools of its own. Where the rollout logs its base
        instructions (``session_meta.base_instructions``, with ``dynamic_tools``), the key carries
        a digest of them: a rollout of other instructions starts with another head."""
        side = f"{self.thread.lane}:" if self.thread.kind in ("side", "compaction") else ""
        return f"codex:{side}{self.model}:{self.version or '?'}{':' + self.base_tag if self.base_tag else ''}"

    def notes(self) -> tuple[str, ...]:
        """The unlogged head, the thread's kind, and a check of the counted tokens against Codex's own total."""
        notes: tuple[str, ...] = (
            "Codex's built-in tool schemas are not in a rollout (its base instructions are, and any dynamic tools: the head "
            "key carries a digest of them): "
            "the head is an opaque prefix" if self.base_tag else
            "Codex base instructions and tool schemas are not in a rollout: the head is an opaque prefix",)
        notes += tuple(self.thread_notes)
        if self.rollbacks:
            notes += (
                f"{self.rollbacks} thread rollback(s) (thread_rolled_back): the turns each dropped stay in the file, "
                "counted as the calls they were; the call after a rollback extends the last call of the turn before them",
            )
        if self.side_responses:
            notes += (
                f"{len(self.side_responses)} billed response(s) outside the conversation's token counts (line(s) "
                f"{_first_lines(self.side_responses)}): a token_usage_record that no token count "
                "repeated, no compacted record named and Codex's running total did not take in (a side request such as "
                "an isolated image description; a remote compaction whose output was rejected would look the same, and "
                "the record does not say which): each counted as a call of its own on a head of its own, not as a "
                "compaction; the conversation goes on as before it",
            )
        if self.unknown_base:
            notes += (
                f"{len(self.unknown_base)} token_usage_record(s) before this rollout's first running total (line(s) "
                f"{_first_lines(self.unknown_base)}) that no token count repeated and no compacted "
                "record named: the total goes on from another rollout's, not known here, so whether it took them in "
                "(a response cut off) or not (a billed response of its own) is unknown: not counted",
            )
        if self.forwarded:
            threads = sorted({thread for _, thread, _ in self.forwarded})
            spent = [sum(u.get(k, 0) for _, _, u in self.forwarded if isinstance(u.get(k, 0), int)) for k in ("input_tokens", "output_tokens")]
            notes += (
                f"{len(self.forwarded)} token_usage_record(s) of another thread (line(s) "
                f"{_first_lines([n for n, _, _ in self.forwarded])}; thread(s) {', '.join(threads[:3])}): "
                f"{spent[0]:,} input and {spent[1]:,} output tokens a one-shot delegate (such as a review) forwarded to this "
                "thread, which Codex keeps out of this thread's running total: billed, but not counted here (the "
                "delegate's prompts are not in this rollout)",
            )
        if self.undecided:
            notes += (
                f"{len(self.undecided)} token_usage_record(s) at the end of the file (line(s) "
                f"{_first_lines(self.undecided)}) that no token count repeated and no compacted record "
                "named, with no token count after them to say whether Codex's running total took them in (a billed "
                "response of its own, or a call whose token count was never written): not counted",
            )
        if self.reasoning_dropped:
            notes += (
                f"{self.reasoning_dropped} call(s) opened a user turn with a prompt smaller than the call before plus its "
                "response, or after a turn that reasoned and was not interrupted: sent without the previous turn's reasoning "
                "(OpenAI renders none of an earlier turn but GPT-5.6's), each is taken to extend that turn's "
                "first call, where the reasoning began",
            )
        if self.copy_from is not None:
            first, end = self.copy_lines
            notes += (
                f"lines {first}-{end} are taken as thread {self.copy_from}'s rollout, copied in when this thread was forked "
                f"from it (Codex 0.35-0.125+ copies a fork's source up to the fork point, re-timestamped, with no marker where the copy ends): "
                f"the run of records after this rollout's session_meta each written within {COPY_GAP_MS} ms of the one before"
                + (f", and {self.copy_stretched} token count(s) after it that the source's rollout counted" if self.copy_stretched else "")
                + (f"; {self.copy_check}" if self.copy_check else ""),
            )
            if self.copy_found:
                notes += (
                    f"{self.copy_found} of the copy's {self.copied_calls} token_count event(s) are calls that the rollout of thread "
                    f"{' or '.join(self.copy_threads)} counted (its rollout is in this audit: same thread, same running total)",
                )
        if self.copied_calls:
            notes += (f"{self.copied_calls} token_count event(s) of {self.copied_why}: not counted here",)
        if not self.out and any("token_count" in why for _, why in self.skipped):
            return notes + ("every token_count event here was counted elsewhere (repeated, replayed or copied): no call of its own",)
        if not self.out and self.usage_less:
            # Not "no token_count events": there are some, and the note said there were none.
            return notes + (
                (f"{self.usage_less} token_count event(s), each without usage (info null: a rate-limits update, or a call "
                 "that ended with none): this rollout carries no usage to audit"),
            )
        if not self.out:
            return notes + (
                "no token_count events: this rollout (an older Codex version, or a session that made no call) carries no usage to audit",
            )
        if self.last_total is None or self.sessions_seen > 1:
            return notes
        side = set(self.side_responses)  # outside Codex's running total
        mine = [r.usage for r in self.out if r.usage and r.line not in side]
        counted = (sum(u.prompt for u in mine), sum(u.output for u in mine))
        base = self.total_base or {}
        theirs = tuple(
            n - base.get(key, 0) if isinstance(n, int) and isinstance(base.get(key, 0), int) else n
            for key, n in (("input_tokens", self.last_total.get("input_tokens")), ("output_tokens", self.last_total.get("output_tokens")))
        )
        if all(isinstance(n, int) and not isinstance(n, bool) for n in theirs):
            verdict = "the same" if counted == theirs else f"counted here {counted[0]:,} / {counted[1]:,}"
            less = " less the copy's last" if base else ""
            if side:
                verdict += f"; the {len(side)} billed response(s) outside it not included"
            notes += (f"Codex's own running total{less}: input {theirs[0]:,} / output {theirs[1]:,} tokens ({verdict})",)
        if self.total_jumps:
            where = "; ".join(
                f"line {line}: {beyond_in:,} input / {beyond_out:,} output tokens" + (", after an interrupted turn" if aborted else "")
                for line, beyond_in, beyond_out, aborted in self.total_jumps[:3]
            )
            more = f" (and {len(self.total_jumps) - 3} more)" if len(self.total_jumps) > 3 else ""
            notes += (
                f"{len(self.total_jumps)} token count(s) whose running total rose by more than their call's usage ({where}{more}): "
                "the usage of a call with no token_count of its own (a response cut off when its turn was interrupted), "
                "in Codex's running total, not counted here",
            )
        return notes


def _first_lines(lines: list) -> str:
    """The first five of ``lines`` (line numbers) as a note lists them: ``3, 8, 12``."""
    return ", ".join(str(n) for n in lines[:5])


def _taken_in(spent: list[tuple[int, ...]], rise: list[int] | None) -> set[int]:
    """Which of the records (their usage, ``spent``) a running total's ``rise`` beyond its own
    call took in: the records whose usage adds up to it exactly, if some do (the fewest records
    left out first; among a dozen at most), else each in turn while the rise covers it."""
    if rise is None:
        return set()
    if len(spent) <= 12:
        for size in range(len(spent), -1, -1):
            for chosen in itertools.combinations(range(len(spent)), size):
                if [sum(spent[n][k] for n in chosen) for k in range(len(rise))] == rise:
                    return set(chosen)
    taken, left = set(), list(rise)
    for n, usage in enumerate(spent):
        if all(r >= u for r, u in zip(left, usage)):
            left = [r - u for r, u in zip(left, usage)]
            taken.add(n)
    return taken


def _release(version: str | None) -> tuple[int, int]:
    """``0.58.0`` as (0, 58); unknown or unreadable as (-1, 0)."""
    parts = (version or "").split(".")
    if len(parts) > 1 and all(part.isascii() and part.isdigit() and len(part) < 6 for part in parts[:2]):
        return int(parts[0]), int(parts[1])
    return (-1, 0)


def _keys_of(total: dict, keys: dict) -> dict:
    """``total``'s counts of ``keys``' keys (absent: 0)."""
    return {key: total.get(key, 0) for key in keys}


def _amount(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "?"


def _same(last: dict, usage: dict) -> bool:
    """A token count's and a usage record's numbers are one call's."""
    keys = ("input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens")
    return all((last.get(key) or 0) == (usage.get(key) or 0) for key in keys)  # absent is 0


def _node(session: str, total: object, seq: int) -> str:
    """A call's chain node: its thread and running total (a subagent's copy of its parent's
    history names the parent's calls by them), else its place in the file."""
    return _total_node(session, total) if isinstance(total, dict) else f"codex:{session}#{seq}"


def _no_tokens(last: dict) -> bool:
    """Whether a token count's ``last_token_usage`` counts no call: no input and no output (a call
    sends a prompt, so its input is never 0). Its ``total_tokens`` may still be the context's size."""
    return last.get("input_tokens") == 0 and last.get("output_tokens") == 0


def _total_before(total: dict, last: dict) -> dict | None:
    """A running total less one call's usage, key by key (None: not every key a count, or a
    difference below 0: the totals do not go on from each other)."""
    before = {}
    for key, value in total.items():
        spent = last.get(key, 0)
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (value, spent)) or spent > value:
            return None
        before[key] = value - spent
    return before


def _total_node(session: str, total: dict) -> str:
    return f"codex:{session}@{json.dumps(total, sort_keys=True)}"


def _exec_event(value: dict) -> bool:
    """An ``Event`` as ``codex exec --json`` before 0.44 printed it: ``{id, msg: {type, ...}}``."""
    msg = value.get("msg")
    return len(value) == 2 and isinstance(value.get("id"), str) and isinstance(msg, dict) and isinstance(msg.get("type"), str)


#: The namespaces of the app-server notifications that concern a thread.
_APP_SERVER_NAMESPACES = ("thread/", "turn/", "item/")


def _app_server_message(value: dict) -> bool:
    """A message of ``codex app-server`` as its client reads it: a notification of a thread, a
    turn or an item naming its thread, ``initialize``'s response (``codexHome``) or
    ``thread/start``'s (a ``thread`` and its ``modelProvider``)."""
    method = value.get("method")
    if isinstance(method, str):
        params = value.get("params")
        return (method.startswith(_APP_SERVER_NAMESPACES) and isinstance(params, dict)
                and (isinstance(params.get("threadId"), str) or isinstance(params.get("thread"), dict)))
    result = value.get("result")
    ident = value.get("id")
    if not isinstance(ident, int | str) or isinstance(ident, bool) or not isinstance(result, dict):
        return False
    return isinstance(result.get("codexHome"), str) or (isinstance(result.get("thread"), dict) and "modelProvider" in result)


def _snake(counts: dict) -> dict:
    """The app-server's camelCase token counts under the rollout's names (``cachedInputTokens``
    as ``cached_input_tokens``)."""
    return {"".join(f"_{c.lower()}" if c.isupper() else c for c in key): value for key, value in counts.items()}


class _Printed:
    """What a reader of a client's printed output (``codex exec --json``, ``codex app-server``)
    keeps: its calls and skipped lines, the model and effort named so far, the calls its rollout
    counted. A subclass names its output (``_about``), its nouns and its running totals."""

    #: Whose rollout counted a call, and the note when there is no call.
    whose = ""
    no_calls = ""

    def __init__(self, path: Path, ctx: ImportContext) -> None:
        self.name = str(path)
        self.ctx = ctx
        self.out: list[TraceRequest] = []
        self.skipped: list[tuple[int, str]] = []
        self.provider: Provider = "openai"
        #: The self-hosted host that serves the calls (:func:`_upstream`), "" for a vendor.
        self.upstream = ""
        #: The relay the calls went through (:func:`_relay`), "" for none.
        self.relay = ""
        #: The service of OpenAI's models the calls went to (Azure OpenAI: :func:`_service`), "" for none.
        self.service = ""
        self.model = NO_MODEL
        self.effort: str | None = None
        self.rollout_counted = 0

    def _effort(self, effort: object) -> None:
        self.effort = effort if isinstance(effort, str) else self.effort

    def _in_rollout(self, record: Record, thread: str, total: dict, why: str) -> str | None:
        """The rollout's node of this running total's call, where the rollout (read first) counted
        it: the line is skipped (``why``); else ``None``, asked about for a rollout read later."""
        theirs = _total_node(thread, total)
        self.ctx.codex_asked.add(theirs)
        if theirs not in self.ctx.codex_calls:
            return None
        self.rollout_counted += 1
        self.skipped.append((record.line, why))
        return theirs

    def _call(self, record: Record, lane: str, lane_kind: LaneKind, usage: Usage, node: str, parent: str | None) -> None:
        self.out.append(
            TraceRequest(
                file=self.name,
                line=record.line,
                lane=lane,
                lane_kind=lane_kind,
                seq=len(self.out),
                sent_ms=None,
                ready_ms=None,
                done_ms=None,
                provider=self.provider,
                upstream=self.upstream,
                relay=self.relay,
                service=self.service,
                model=self.model,
                envelope=(("effort", self.effort),) if self.effort else (),
                usage=usage,
                prefix=Prefix(f"codex:{self.model}:?", node, parent, 1, replays_output=True),
                source_format=NAME,
            )
        )

    def _about(self) -> str:
        raise NotImplementedError

    def _totals(self) -> tuple[str, ...]:
        raise NotImplementedError

    def notes(self) -> tuple[str, ...]:
        notes: tuple[str, ...] = (self._about(),)
        if self.rollout_counted:
            notes += (f"{self.rollout_counted} call(s) counted in the {self.whose} rollout, which is in this audit",)
        if not self.out and not self.rollout_counted:
            return notes + (self.no_calls,)
        return notes if self.rollout_counted else notes + self._totals()


def _total_note(of: str, total: dict, mine: Iterable[TraceRequest]) -> tuple[str, ...]:
    """Codex's running total ``of`` a thread beside the calls counted here, where it names both counts."""
    theirs = (total.get("input_tokens"), total.get("output_tokens"))
    used = [r.usage for r in mine if r.usage]
    counted = (sum(u.prompt for u in used), sum(u.output for u in used))
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in theirs):
        return ()
    verdict = "the same" if counted == theirs else f"counted here {counted[0]:,} / {counted[1]:,}"
    return (f"Codex's {of}: input {theirs[0]:,} / output {theirs[1]:,} tokens ({verdict})",)


class _AppServer(_Printed):
    """The requests of a ``codex app-server`` output (see the module doc)."""

    whose = "thread's"
    no_calls = "no thread/tokenUsage/updated notification: no call's usage in it"

    def __init__(self, path: Path, ctx: ImportContext) -> None:
        super().__init__(path, ctx)
        self.version: str | None = None
        #: Per thread: its last running total (as JSON), its last call's node, its running total.
        self.previous_total: dict[str, str] = {}
        self.chain_parent: dict[str, str | None] = {}
        self.last_total: dict[str, dict] = {}
        self.first_thread: str | None = None
        #: Per thread: the calls counted in its lane so far (the next one's place in it).
        self.calls: dict[str, int] = {}

    def line(self, record: Record) -> None:
        value: dict = record.value  # type: ignore[assignment]
        result = value.get("result")
        if isinstance(result, dict):
            if isinstance(result.get("model"), str):
                self.model = result["model"]
            if isinstance(result.get("modelProvider"), str):
                named = {"model_provider": result["modelProvider"]}
                self.provider, self.upstream, self.relay, self.service = _provider(named), _upstream(named), _relay(named), _service(named)
            self._effort(result.get("reasoningEffort"))
            self._thread(result.get("thread"))
            return
        params = value.get("params")
        if not isinstance(params, dict):
            return
        method = value.get("method")
        if method == "thread/started":
            self._thread(params.get("thread"))
        elif method == "thread/tokenUsage/updated":
            self._token_usage(record, params)

    def _thread(self, thread: object) -> None:
        if isinstance(thread, dict):
            version = thread.get("cliVersion")
            self.version = version if isinstance(version, str) else self.version
            if self.first_thread is None and isinstance(thread.get("id"), str):
                self.first_thread = thread["id"]

    def _token_usage(self, record: Record, params: dict) -> None:
        where = f"{self.name}:{record.line}"
        usage = params.get("tokenUsage")
        thread = params.get("threadId")
        if not isinstance(usage, dict) or not isinstance(usage.get("last"), dict) or not isinstance(thread, str):
            raise UserError(f"{where}: thread/tokenUsage/updated without a threadId and tokenUsage.last ({usage!r:.60})")
        last = _snake(usage["last"])
        total = _snake(usage["total"]) if isinstance(usage.get("total"), dict) else None
        if self.first_thread is None:
            self.first_thread = thread
        if total is not None:
            total_key = json.dumps(total, sort_keys=True)
            if total_key == self.previous_total.get(thread):
                self.skipped.append((record.line, "repeated thread/tokenUsage/updated (same running total)"))
                return
            self.previous_total[thread] = total_key
            self.last_total[thread] = total
            why = "thread/tokenUsage/updated counted in the thread's rollout (same running total)"
            theirs = self._in_rollout(record, thread, total, why)
            if theirs is not None:
                self.chain_parent[thread] = theirs
                return
        seq = self.calls.get(thread, 0)
        self.calls[thread] = seq + 1
        node = f"codex-app-server:{_node(thread, total, seq)}"
        lane_kind = "main" if thread == self.first_thread else "subagent"
        self._call(record, self._lane(thread), lane_kind, _usage(last, where, app_server=True), node, self.chain_parent.get(thread))
        self.chain_parent[thread] = node

    def _lane(self, thread: str) -> str:
        return "main" if thread == self.first_thread else f"thread {thread}"

    def _about(self) -> str:
        version = f" (Codex {self.version})" if self.version else ""
        return (
            f"codex app-server output{version}: each thread/tokenUsage/updated notification is a call (its tokenUsage.last), "
            "a chain per thread in file order, no timestamps read; Codex base instructions and tool schemas are not in it: "
            "the head is an opaque prefix"
        )

    def _totals(self) -> tuple[str, ...]:
        notes: tuple[str, ...] = ()
        for thread, total in self.last_total.items():
            lane = self._lane(thread)
            notes += _total_note(f"running total of thread {thread}", total, (r for r in self.out if r.lane == lane))
        return notes


class _Exec(_Printed):
    """The requests of a ``codex exec --json`` output before 0.44 (see the module doc)."""

    whose = "session's"
    no_calls = "no token_count events: a provider whose API reports no usage (Chat Completions), or no call made"

    def __init__(self, path: Path, ctx: ImportContext) -> None:
        super().__init__(path, ctx)
        self.session = self.name
        self.previous_total: str | None = None
        self.last_total: dict | None = None
        self.chain_parent: str | None = None

    def line(self, record: Record) -> None:
        value: dict = record.value  # type: ignore[assignment]
        msg = value.get("msg")
        if not isinstance(msg, dict):
            if isinstance(value.get("model"), str) and isinstance(value.get("provider"), str):
                # The config summary printed first: every value a string.
                self.model = value["model"]
                named = {"model_provider": value["provider"]}
                self.provider, self.upstream, self.relay, self.service = _provider(named), _upstream(named), _relay(named), _service(named)
                self._effort(value.get("reasoning effort"))
            return  # {"prompt": ...}, or a line of no event
        kind = msg.get("type")
        if kind == "session_configured":
            self.session = _text(msg.get("session_id")) or self.session
            self.model = _text(msg.get("model")) or self.model
            self._effort(msg.get("reasoning_effort"))
        elif kind == "token_count":
            self._token_count(record, msg)

    def _token_count(self, record: Record, msg: dict) -> None:
        where = f"{self.name}:{record.line}"
        total: object = None
        if "info" in msg or "rate_limits" in msg:
            info = msg.get("info")
            if info is None:
                return  # rate limits before any call's usage
            if not isinstance(info, dict) or not isinstance(info.get("last_token_usage"), dict):
                raise UserError(f"{where}: token_count info without last_token_usage ({info!r:.60})")
            total, last = info.get("total_token_usage"), info["last_token_usage"]
            total_key = json.dumps(total, sort_keys=True)
            if total_key == self.previous_total:
                self.skipped.append((record.line, "repeated token_count (same running total: rate limits re-sent the last call's)"))
                return
            self.previous_total = total_key
            if isinstance(total, dict):
                self.last_total = total
        else:
            last = msg  # the first releases: TokenUsage itself
        # Its own node names, so that the rollout's call (named by thread and running total) is
        # asked about: the rollout is read first, whatever the file order (answers_first).
        node = f"codex-exec:{_node(self.session, total, len(self.out))}"
        if isinstance(total, dict):
            why = "token_count counted in the session's rollout (same thread, same running total)"
            theirs = self._in_rollout(record, self.session, total, why)
            if theirs is not None:
                self.chain_parent = theirs
                return
        self._call(record, "main", "main", _usage(last, where), node, self.chain_parent)
        self.chain_parent = node

    def _about(self) -> str:
        return (
            "codex exec --json output (before 0.44): each token_count event is a call, in file order, with no timestamps; "
            "Codex base instructions and tool schemas are not in it: the head is an opaque prefix"
        )

    def _totals(self) -> tuple[str, ...]:
        return () if self.last_total is None else _total_note("own running total", self.last_total, self.out)


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A rollout's requests, or those of a ``codex exec --json`` output before 0.44 or of a
    ``codex app-server`` output; see the module doc."""
    rollout = _Rollout(path, ctx)
    execs: _Exec | _AppServer | None = None
    decided = False
    #: The lines before the first event or rollout line (exec's config summary and prompt).
    pending: list[Record] = []
    seen_any = False
    for record in objects(path, records, " (a rollout line)"):
        seen_any = True
        if decided:
            (execs or rollout).line(record)
            continue
        value: dict = record.value  # type: ignore[assignment]
        if _exec_event(value):
            execs = _Exec(path, ctx)
        elif _app_server_message(value):
            execs = _AppServer(path, ctx)
        elif detect(value) is None and len(pending) < _EXEC_HEAD:
            pending.append(record)
            continue
        decided = True
        for line in (*pending, record):
            (execs or rollout).line(line)
    if not decided:
        for line in pending:
            rollout.line(line)
    if execs is not None:
        return execs.out, FileSummary(execs.name, NAME, len(execs.out), tuple(execs.skipped), execs.notes())
    if not seen_any:
        raise UserError(f"{rollout.name}:1: empty file, no rollout lines")
    rollout._park()
    rollout.undecided = [held[0].line for held in rollout.orphans]
    return rollout.out, FileSummary(rollout.name, NAME, len(rollout.out), tuple(rollout.skipped), rollout.notes())


FORMAT = LogFormat(
    name=NAME,
    noun="Codex rollout",
    nouns="Codex rollouts",
    description="Codex CLI session rollouts (rollout-<date>-<id>.jsonl)",
    detect=detect,
    read=read,
    usage="subset",
    versions=(
        "rollouts with event_msg token_count (info.last_token_usage, total_token_usage)",
        "later rollouts: last_token_usage.cache_write_input_tokens (the Responses API's writes, GPT-5.6 on), inside input_tokens",
        "resumed or forked sessions: a second session_meta and the earlier history replayed",
        "paginated rollouts (about 0.128 on, CLI and Codex Desktop): an ordinal on every record; from 0.153, token_usage_record lines "
        "repeat a token_count's numbers and are not counted again; thread_settings_applied (and turn_context's "
        "reasoning_effort) set the model and effort; a remote compaction's call, whose usage only a token_usage_record "
        "names (compacted.compaction_response_id), is a compaction call on the model its attribution names",
        "Codex 0.153 on (token_usage_record): a record of the thread's own that no token count repeats, no compacted "
        "record names and the next token count's running total did not take in is a billed response of its own (a side "
        "request): a call on a head of its own, never a compaction; another thread's record (a delegate's, forwarded) is "
        "no call of this thread, named in a note with its tokens; one the file ends on, or before a fork's first running "
        "total, is named in a note, not counted",
        "subagent threads (source.subagent.thread_spawn, thread_source subagent): the parent's history copied below "
        "subagent_history_start_ordinal is not counted; a subagent lane named by agent_nickname and agent_path, "
        "its first call extending the parent's",
        "guardian review (thread_source guardian_review), review, memory consolidation and compaction threads: side lanes of their own",
        "forks by reference (forked_from_id, forked_from_ordinal_exclusive) and continuation windows after a compaction "
        "(history_base, rollout-<date>-<thread>_<window>.jsonl): a fork or compaction event on the first call",
        "forks (forked_from_id, by reference or with the source's records copied): the first call extends the source's "
        "call at the fork point, named by the running total the fork goes on from",
        "rollout_reference (a rollout naming the one whose history it goes on from): another thread's, a fork linked as "
        "above; its own thread's, a later rollout whose first call extends the earlier one's call",
        "forks of Codex 0.35-0.125+ (and 0.107+ subagents spawned with their parent's history): the source's rollout copied "
        "after the fork's session_meta, re-timestamped, unmarked: the run of records written with that second session_meta "
        "(each within 100 ms of the one before) is not counted, nor, the source's rollout in the audit, its calls after a stall",
        "later Codex (world_state from 0.145 at least): world_state, inter_agent_communication_metadata, retained_context, security_risk_score and "
        "realtime_item lines, and compacted.latest_token_usage_record (a snapshot of an earlier response's record): none a call",
        "later Codex: a tool_search_output Codex ran (execution client, or none named) is a call's input (a tool's output); additional_tools, "
        "configuration_update and a delivered_assistant_message (line metadata) are Codex's own context, no response",
        "later Codex: another agent's instruction as an inter_agent_communication line (not an agent_message item): "
        "read as that item, a turn for a rollback",
        "Codex 0.167.2 on: a dynamic_tools_updated that changes the thread's dynamic tools puts the calls after it on "
        "another head key and gives the next a tools_change event (the same list again changes nothing); a token "
        "count's last_usage_includes_reasoning (the model's use_responses_lite) changes no count",
        "thread rollbacks (event_msg thread_rolled_back {num_turns}): the dropped turns' calls counted, the next call "
        "extending the last call of the turn before them",
        "Codex 0.118 on (multi-agent v2): a rollback's turns count another agent's instructions too (an agent_message item, "
        "or an assistant message whose one content item is an inter-agent communication's JSON); before 0.118 only user messages",
        "older rollouts (record_type lines, or a first line {id, timestamp, instructions}): no usage, read as no calls",
        "codex exec --json output before 0.44 (a config summary, {prompt}, then Event {id, msg} lines): each token_count a call "
        "(TokenUsage itself in the first releases, later info.last_token_usage; info re-sent with rate limits, the same "
        "running total, is not), one chain in file order, no timestamps; calls the session's rollout counted are not counted again",
        "codex app-server output (JSON-RPC messages its client reads, one a line: responses {id, result}, notifications "
        "{method, params}): each thread/tokenUsage/updated a call (tokenUsage.last, camelCase counts), a chain per thread, "
        "no timestamps; a repeated running total, or one the thread's rollout counted, is not a call",
    ),
)
