"""Continue sessions (continue.dev): the ``cn`` CLI's, with each call's usage.

Written from Continue's source of June 2026 (continuedev/continue, checked at d0a3c0b6,
2026-06-18). Continue keeps each session as one JSON object, ``~/.continue/sessions/<sessionId>.json``
(``core/util/history.ts``), rewritten whole as the session grows: ``{sessionId, title,
workspaceDirectory, history, mode?, chatModelTitle?, usage?}``, beside ``sessions.json`` (the
list of sessions, no message).

* ``history[]``: ``ChatHistoryItem {message: {role, content, toolCalls?, usage?}, contextItems,
  toolCallStates?, conversationSummary?, ...}``, roles ``system``, ``user``, ``assistant``,
  ``tool`` (and ``thinking``).
* The ``cn`` CLI (``extensions/cli``, from about December 2025) writes on each assistant message
  the usage of the one call that produced it: the API's usage as Continue's OpenAI adapters pass
  it on (``chunk.usage``), ``{prompt_tokens, completion_tokens, total_tokens,
  prompt_tokens_details?, model, cost_cents}`` (``model`` and ``cost_cents`` added by the CLI).
* ``usage`` beside ``history``: the session's totals (``promptTokens``, ``completionTokens``,
  ``promptTokensDetails {cachedTokens, cacheWriteTokens}``, ``totalCost``), summed in a note.
* The VS Code and JetBrains extensions write the same sessions with no usage on any message, and
  so does Kiro's IDE (the same shape: ``kiro.kiroagent/workspace-sessions/<workspace>/<id>.json``,
  by a public reader's fixture of Kiro's files): such a session is refused in one
  line (:data:`IDE_SESSION`), never read as calls; so is a session of Continue's 2023 Python
  server (:data:`PYTHON_SERVER_SESSION`), the same file name with another shape.

One request per assistant message with usage, in history order, in the session's one lane
(``main``). A compaction (``/compact``, or automatic) replaces the history with the system
message and a summary (an assistant message with ``conversationSummary`` and no usage): the calls
before it are no longer in the file, and the summary is a ``compaction`` event of the next call.

Usage convention, decided from the fields a call has (Continue's ``packages/openai-adapters``):
where ``prompt_tokens_details`` names ``cache_read_tokens`` (always beside
``cache_write_tokens``) the usage is either the Anthropic adapter's (from ``message_start``:
``prompt_tokens`` is Anthropic's ``input_tokens``, which excludes both: additive) or the AI SDK
path's (``CONTINUE_USE_AI_SDK``, providers ``openai`` and ``anthropic``: ``prompt_tokens`` the
whole input, reads and writes inside, vercel/ai ``convert-anthropic-messages-usage.ts``:
subset). The model's name cannot tell them (a gateway serves any model through either), the
arithmetic can: the AI SDK's ``prompt_tokens`` is never below its reads + writes, the adapter's
is on almost every call that reads or writes. A session with such a call
(:func:`split_evidence`) is read as additive, every other as subset, and the note names the call
that decided it. Otherwise the
usage is OpenAI's as the API sent it, ``cached_tokens`` and GPT-5.6's ``cache_write_tokens``
inside ``prompt_tokens`` (subset), DeepSeek's hit named ``prompt_cache_hit_tokens`` (its adapter
is the OpenAI one), and a call without a cached count reports no cache use (Gemini's adapter and the OpenAI adapter's Responses API
path, ``openaiResponses.ts`` ``mapUsage``, pass no cached count). Gemini's adapter passes ``candidatesTokenCount`` as
``completion_tokens`` and ``totalTokenCount`` as ``total_tokens``: on a Gemini model's call, what
``total_tokens`` has over prompt and completion is its thoughts, counted as output. Who served a call is asked of
:func:`prefixbench.simulator.providers.provider_of_model` with the usage's ``model``.

Times: none. No history item is stamped (a session's ``dateCreated`` is in ``sessions.json``
only), so the calls are one chain in history order with no time.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import GEMINI, counted_provider
from prefixbench.simulator.providers.base import count, given, mapping, subset_usage
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import Lane, objects
from prefixbench.workloads.logs.history import READ_TOOLS, make_message
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LoggedMessage, Prefix, TraceRequest

NAME = "continue-cli"
#: The keys a call's usage has (one is enough to be a call's).
_CALL_KEYS = ("prompt_tokens", "completion_tokens")
#: The key only the Anthropic adapter puts in ``prompt_tokens_details`` (always, beside
#: ``cache_write_tokens``): ``prompt_tokens`` then excludes the cached part. OpenAI's own usage
#: may name ``cache_write_tokens`` too (GPT-5.6's writes, inside ``prompt_tokens``), never this.
_SPLIT_KEY = "cache_read_tokens"

#: What a Continue session without usage is, and why it is no log to audit (said after ``file:line: ``).
IDE_SESSION = (
    "a Continue session with no call's usage (sessions/<id>.json of Continue's VS Code and JetBrains extensions, "
    "or Kiro IDE's workspace-sessions/<workspace>/<id>.json of the same shape: each message's text, no token count; "
    "only Continue's cn CLI writes each call's usage): no request to audit; record the agent's calls with `prefixbench proxy`"
)


#: What a session of Continue's first, Python-server design is (said after ``file:line: ``): the
#: VS Code extension of 2023 kept ``~/.continue/sessions/<id>.json`` as ``{history: {timeline,
#: current_index}, session_info: {session_id, title, date_created, workspace_directory}, ...}``,
#: each timeline item a step with its text and no token count.
PYTHON_SERVER_SESSION = (
    "a Continue session of its 2023 Python server ({history: {timeline, current_index}, session_info}: each step's "
    "text, no token count): no request to audit; record the agent's calls with `prefixbench proxy`"
)


def is_python_server_session(value: dict) -> bool:
    """Whether a record is a session of Continue's 2023 Python server (:data:`PYTHON_SERVER_SESSION`)."""
    history = value.get("history")
    info = value.get("session_info")
    return (isinstance(history, dict) and isinstance(history.get("timeline"), list)
            and isinstance(info, dict) and "session_id" in info)


def is_session(value: dict) -> bool:
    """Whether a record is a Continue session: a ``sessionId``, a ``title``, a
    ``workspaceDirectory`` and a ``history`` list."""
    # (``history`` first: a Claude Code entry, classified line by line, has a ``sessionId`` too)
    return (isinstance(value.get("history"), list) and isinstance(value.get("sessionId"), str)
            and "workspaceDirectory" in value and "title" in value)


def _has_usage(value: dict) -> bool:
    """Whether any message of a session's history carries a call's usage."""
    for item in value["history"]:
        message = item.get("message") if isinstance(item, dict) else None
        usage = message.get("usage") if isinstance(message, dict) else None
        if isinstance(usage, dict) and any(key in usage for key in _CALL_KEYS):
            return True
    return False


def detect(value: dict) -> Evidence | None:
    """A session one of whose messages carries a call's usage (one with none is refused:
    :func:`ide_session`)."""
    return Evidence.WRAPPER if is_session(value) and _has_usage(value) else None


def ide_session(value: dict) -> str | None:
    """The refusal of a Continue session no message of which carries a usage (the extensions',
    and the 2023 Python server's), None for any other record."""
    if is_python_server_session(value):
        return PYTHON_SERVER_SESSION
    return IDE_SESSION if is_session(value) and not _has_usage(value) else None


def _split_counts(usage: dict) -> tuple[int, int, int] | None:
    """A call's ``prompt_tokens``, reads and writes where its usage names ``cache_read_tokens``
    and all three are whole numbers (a bad count is refused later, where the call is read)."""
    details = mapping(usage.get("prompt_tokens_details"))
    if _SPLIT_KEY not in details:
        return None
    numbers = (usage.get("prompt_tokens"), details.get("cache_read_tokens"), details.get("cache_write_tokens") or 0)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in numbers):
        return None
    return numbers  # type: ignore[return-value]


def split_evidence(history: list) -> tuple[int, int, int, int] | None:
    """The first call of a session whose ``prompt_tokens`` is below its reads plus writes
    (``(index, prompt, read, written)``), which only the Anthropic adapter's usage can be: the AI
    SDK's ``prompt_tokens`` is its whole input, the reads and writes inside. None where no call is."""
    for index, item in enumerate(history):
        message = item.get("message") if isinstance(item, dict) else None
        usage = message.get("usage") if isinstance(message, dict) else None
        counts = _split_counts(usage) if isinstance(usage, dict) else None
        if counts is not None and counts[0] < counts[1] + counts[2]:
            return (index, *counts)
    return None


def _usage(usage: dict, where: str, adapter: bool) -> tuple[Usage, bool, bool]:
    """A call's usage, whether it was read as additive (the Anthropic adapter's split), and
    whether it was read as the AI SDK path's (``cache_read_tokens`` inside ``prompt_tokens``).
    ``adapter``: whether the session's arithmetic shows the Anthropic adapter (:func:`split_evidence`)."""
    details = mapping(usage.get("prompt_tokens_details"))
    prompt = count(usage.get("prompt_tokens"), where, "prompt_tokens")
    output = count(usage.get("completion_tokens"), where, "completion_tokens")
    written = count(details.get("cache_write_tokens"), where, "prompt_tokens_details.cache_write_tokens")
    if _SPLIT_KEY in details:
        read = count(details.get("cache_read_tokens"), where, "prompt_tokens_details.cache_read_tokens")
        if not adapter:
            # No call of the session has prompt_tokens below its reads + writes: the AI SDK path's
            # (CONTINUE_USE_AI_SDK), whose prompt_tokens is the whole input, reads and writes inside.
            return subset_usage(prompt, read, written, output, reported=True,
                                excess=f"{where}: cached ({read}) and written ({written}) tokens exceed prompt_tokens ({prompt})"), False, True
        return Usage(cache_read=read, cache_write_5m=written, uncached=prompt, output=output), True, False
    # OpenAI's usage as the API sent it: cached (and GPT-5.6's written) tokens inside
    # prompt_tokens; DeepSeek's (its adapter is the OpenAI one) names the hit prompt_cache_hit_tokens.
    hit = usage.get("prompt_cache_hit_tokens")
    cached = count(details.get("cached_tokens") if hit is None else hit, where,
                   "prompt_tokens_details.cached_tokens" if hit is None else "prompt_cache_hit_tokens")
    return subset_usage(prompt, cached, written, output, reported=given(details, "cached_tokens") or hit is not None,
                        excess=f"{where}: cached ({cached}) and written ({written}) tokens exceed prompt_tokens ({prompt})"), False, False


class _Session:
    """The requests of one session object."""

    def __init__(self, path: Path, record: Record, value: dict, out: list[TraceRequest]) -> None:
        self.name = str(path)
        self.line = record.line
        self.where = f"{self.name}:{record.line}"
        self.sid = str(value["sessionId"])[:80]
        self.value = value
        self.out = out
        self.skipped: list[tuple[int, str]] = []
        self.additive = 0
        self.subset = 0
        #: Calls whose usage names cache_read_tokens read as the AI SDK path's (subset).
        self.ai_sdk = 0
        #: The call showing the session's usage is the Anthropic adapter's (:func:`split_evidence`).
        self.evidence = split_evidence(value["history"])
        #: Gemini calls whose total_tokens is over prompt + completion, and the tokens over.
        self.thought_calls = 0
        self.thoughts = 0
        self.lane = Lane("main", "main")
        self.blocks = 0
        self.pending: list[LoggedMessage] = []
        #: The ids of the tool calls that read a file (their results are marked so).
        self.reads: set[str] = set()

    def read(self) -> None:
        lane = self.lane
        for index, item in enumerate(self.value["history"]):
            if not isinstance(item, dict) or not isinstance(item.get("message"), dict):
                raise UserError(f"{self.where}: history[{index}] is not a {{message, ...}} object")
            message = item["message"]
            role = message.get("role")
            content = message.get("content")
            self.blocks += 1
            usage = message.get("usage")
            if usage is not None and not isinstance(usage, dict):
                raise UserError(f"{self.where}: history[{index}].message.usage is not an object")
            if role == "user":
                lane.events.append(("user_turn", ""))
            if role == "assistant" and isinstance(usage, dict) and any(key in usage for key in _CALL_KEYS):
                self._call(index, usage)
            elif role == "assistant" and item.get("conversationSummary") is not None:
                # The summary stands for what came before it: the next call starts a new chain.
                lane.events.append(("compaction", ""))
                lane.parent = None
            elif role == "assistant":
                self.skipped.append((self.line, f"history[{index}]: assistant message with no usage"))
            if role == "assistant" and isinstance(message.get("toolCalls"), list):
                for call in message["toolCalls"]:
                    function = mapping(mapping(call).get("function"))
                    if str(function.get("name") or "").lower() in READ_TOOLS:
                        self.reads.add(str(mapping(call).get("id")))
            read_result = role == "tool" and str(message.get("toolCallId")) in self.reads
            self.pending.append(make_message(str(role), content, ("file-read",) if read_result else ()))

    def _call(self, index: int, usage: dict) -> None:
        lane = self.lane
        where = f"history[{index}]"
        model = usage.get("model") if isinstance(usage.get("model"), str) and usage.get("model") else self.lane.model or NO_MODEL
        reported, additive, ai_sdk = _usage(usage, f"{self.where}: {where}.message.usage", self.evidence is not None)
        if (not additive and counted_provider(model) == GEMINI.name
                and all(usage.get(field) is not None for field in ("total_tokens", "prompt_tokens", "completion_tokens"))):
            # Continue's Gemini adapter passes candidatesTokenCount as completion_tokens and
            # totalTokenCount as total_tokens: what is over prompt + completion is the thoughts,
            # billed as output. Only where all three are logged: a missing count is not a 0 whose
            # difference would be taken for thoughts.
            at = f"{self.where}: {where}.message.usage"
            over = count(usage["total_tokens"], at, "total_tokens") - count(usage.get("prompt_tokens"), at, "prompt_tokens") \
                - count(usage.get("completion_tokens"), at, "completion_tokens")
            if over > 0:
                reported = msgspec.structs.replace(reported, output=reported.output + over)
                self.thought_calls += 1
                self.thoughts += over
        if reported.prompt + reported.output == 0:
            self.skipped.append((self.line, f"{where}: call with no tokens"))
            return
        self.additive += additive
        self.subset += not additive and not ai_sdk
        self.ai_sdk += ai_sdk
        lane.send_to(model)
        key = f"{self.sid}#{index}"
        node = f"continue-cli:{self.name}:{key}"
        self.out.append(
            TraceRequest(
                file=self.name,
                line=self.line,
                path=where,  # a session is one object: every call is on its line
                lane=lane.name,
                lane_kind=lane.kind,
                seq=len(self.out),
                sent_ms=None,
                ready_ms=None,
                done_ms=None,
                provider=counted_provider(model),
                model=model,
                usage=reported,
                prefix=Prefix(f"continue-cli:{lane.kind}:{model}", node, lane.parent, max(1, self.blocks - 1)),
                events=tuple(lane.events),
                request_id=key,
                source_format=NAME,
                messages=tuple(self.pending),
            )
        )
        lane.parent = node
        lane.events = []
        # The reply itself is the first block the next call adds.
        self.blocks = 1
        self.pending = []


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A session file's requests; see the module doc."""
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    additive = subset = ai_sdk = thought_calls = thoughts = 0
    totals: list[str] = []
    evidence: list[str] = []
    for record in objects(path, records, " (a Continue session)"):
        value: dict = record.value  # type: ignore[assignment]
        if is_python_server_session(value):
            raise UserError(f"{path}:{record.line}: {PYTHON_SERVER_SESSION}")
        if not is_session(value):
            raise UserError(f"{path}:{record.line}: not a Continue session (no sessionId, title, workspaceDirectory and history list)")
        if not _has_usage(value):
            raise UserError(f"{path}:{record.line}: {IDE_SESSION}")
        session = _Session(path, record, value, out)
        session.read()
        skipped += session.skipped
        additive += session.additive
        subset += session.subset
        ai_sdk += session.ai_sdk
        if session.evidence is not None and session.additive:
            index, prompt, read_, written = session.evidence
            evidence.append(f"history[{index}]'s prompt_tokens ({prompt}) is below its cache_read_tokens + cache_write_tokens "
                            f"({read_} + {written})")
        thought_calls += session.thought_calls
        thoughts += session.thoughts
        summed = mapping(value.get("usage"))
        if summed:
            cached = mapping(summed.get("promptTokensDetails"))
            totals.append(f"prompt {summed.get('promptTokens')!s:.20}, completion {summed.get('completionTokens')!s:.20}, "
                          f"cached {cached.get('cachedTokens')!s:.20}, written {cached.get('cacheWriteTokens')!s:.20}")
    notes = ["Continue stamps no history item: the calls are one chain in history order, with no time"]
    if additive:
        notes.append(f"{additive} call(s) with cache_read_tokens read as additive (Continue's Anthropic adapter: prompt_tokens excludes "
                     f"its reads and writes), decided by the arithmetic, whatever the model: {'; '.join(evidence)}, "
                     "which the AI SDK path's never is")
    if subset:
        notes.append(f"{subset} call(s) read as subset (OpenAI's usage: cached_tokens, and cache_write_tokens, inside prompt_tokens)")
    if ai_sdk:
        notes.append(f"{ai_sdk} call(s) with cache_read_tokens read as subset (Continue's AI SDK path, CONTINUE_USE_AI_SDK: prompt_tokens "
                     "is the whole input, the reads and writes inside), decided by the arithmetic, whatever the model: no call of the "
                     "session has prompt_tokens below its reads + writes, as the Anthropic adapter's has on almost every call that reads or writes")
    if thought_calls:
        notes.append(f"{thought_calls} Gemini call(s) whose total_tokens exceeds prompt_tokens + completion_tokens: the {thoughts} tokens over "
                     "(the thoughts, which Continue's Gemini adapter leaves out of completion_tokens) counted as output, as Google bills them")
    for line in totals:
        notes.append(f"the session's own totals (usage): {line}")
    return out, FileSummary(str(path), NAME, len(out), tuple(skipped), tuple(notes))


FORMAT = LogFormat(
    name=NAME,
    noun="Continue session",
    nouns="Continue sessions",
    description="Continue sessions (~/.continue/sessions/<id>.json: the cn CLI's, per-call usage on each assistant message)",
    detect=detect,
    read=read,
    usage="by-endpoint",
    versions=(
        "cn (Continue CLI) sessions from about December 2025: message.usage {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details?, model, cost_cents} on each assistant message",
        "the Anthropic adapter's usage: prompt_tokens_details {cached_tokens, cache_read_tokens, cache_write_tokens}, prompt_tokens excluding both: a session with a call whose prompt_tokens is below its reads + writes is read as additive",
        "the AI SDK path's (CONTINUE_USE_AI_SDK, checked in cn 1.5.47): the same keys, prompt_tokens the whole input (never below reads + writes): a session no call of which is below is read as subset",
        "OpenAI's usage as sent (cached_tokens, GPT-5.6's cache_write_tokens) and DeepSeek's (prompt_cache_hit_tokens): inside prompt_tokens, read as subset",
        "the Gemini adapter's usage: no cached count (cache not reported), thoughts only in total_tokens: counted as output",
        "the VS Code and JetBrains extensions' sessions: no usage on any message: refused in one line",
    ),
    aliases=("continue", "cn"),
)
