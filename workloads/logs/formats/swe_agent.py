"""SWE-agent and mini-swe-agent trajectories: one pretty-printed JSON object a run.

**mini-swe-agent** (``*.traj.json``, ``trajectory_format`` ``mini-swe-agent-1`` in 1.x,
``mini-swe-agent-1.1`` from 2.0): ``messages`` is the whole conversation, in the chat-completions
shape LiteLLM sends. A message whose ``extra.response`` holds the raw response (1.11.1 on) is one
call: its request is every message before it (``extra`` and ``timestamp`` are not sent), its
usage the response's. In 2.x a call that failed to parse leaves its response on the error
message that follows instead (from June 2026, 2.3.1, its ``repr`` where it could not be dumped: a
call without usage, listed; from 2.4.6 with its ``cost`` too; before 2.3.1 that message keeps no
response, and the notes count the calls lost); with the Responses-API model the message *is* the response
(``object: "response"``). Times: ``timestamp`` per message from 1.17, ``extra.timestamp`` in 2.x,
else the response's ``created``. Before 1.11.1 no response was kept: bodies only, predictions only.
A message's time is when mini-swe-agent stored it (``time.time()`` once the model call returned,
or once the tool ran): an assistant message's is its response's end, the call's ready time here
(the log gives no earlier one; ``created`` is the provider's, about when the request arrived). A
call is sent after every message before it was stored (the agent runs one step at a time), so its
send time is the latest of their times: a clock that stepped back (a tool result stamped before
the reply it answers) does not put a send before the previous response; the notes count them.

**SWE-agent** (``*.traj``): ``trajectory`` steps and ``history``. From 1.0 each step keeps the
messages it sent (``query``; ``messages`` in the 1.0 previews), ``cache_control`` markers
included (from 1.1 the ``thinking_blocks`` of a tool-calling reply too, sent back as its
reasoning); 0.x keeps only ``history``, from which each call's request is rebuilt. SWE-agent keeps
no provider usage per call (``info.model_stats`` counts tokens with a client-side tokenizer), so
the audit predicts only and states the run's own totals. A RetryAgent (1.0 on) keeps its
``attempts`` (each such a run, read as a lane ``attempt-<n>``) and, once it chose, a copy of the
best one at the top (not read again); each attempt also has its own ``attempt_<n>/<id>.traj``
beside it, read with the RetryAgent's file where that lists it (an attempt still running when
the run last saved is read from its own file).

Where the provider's cache keeps output, the answer a response holds is the call's ``reply``
(replayed after its prompt: the next call sends it back), unless it reasoned.

Usage is LiteLLM's (:mod:`.gateway_usage`): OpenAI-shaped, with Anthropic's read and write
counts beside it for Claude. Tool schemas are not in a trajectory: an unlogged head.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import rules_for
from prefixbench.simulator.usage import Usage
from prefixbench.simulator.wire import REASONING_FIELDS, CacheBreakpoint, Message, Request
from prefixbench.workloads.logs.captured_reply import reply_messages
from prefixbench.workloads.logs.chat_completions import REASONING_EFFORTS, LineError, MessageMemo, parse_request
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.workloads.logs.jsonlines import BadJson
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import (
    MAX_LOGGED_COST,
    as_dict,
    logged_cost,
    objects,
    parse_time_ms,
    refuse_lone_surrogates,
)
from prefixbench.workloads.logs.reading import loads
from prefixbench.workloads.logs.records import Record, iter_records
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, Prefix, TraceRequest

NAME = "swe-agent"
#: Message keys LiteLLM sends (everything else a trajectory keeps is the agent's own).
_SENT_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "reasoning_content")
_ENCODE = msgspec.json.encode
_TEXT_ONLY = "its response is kept only as text (a format error whose response could not be dumped): no usage"


def _is_mini(value: dict) -> bool:
    info = as_dict(value.get("info"))
    return isinstance(value.get("messages"), list) and (
        str(value.get("trajectory_format", "")).startswith("mini-swe-agent") or "mini_version" in info
    )


def _is_swe(value: dict) -> bool:
    return isinstance(value.get("trajectory"), list) and isinstance(value.get("history"), list)


def _attempts(value: dict) -> list | None:
    """The ``attempts`` of a SWE-agent RetryAgent trajectory (a list whose items are runs), None
    where the file is not one."""
    attempts = value.get("attempts")
    if not isinstance(attempts, list) or not all(isinstance(a, dict) and _is_swe(a) for a in attempts):
        return None
    # None finished yet: the file is that list alone (its first saves, during the first attempt).
    return attempts if attempts or value.keys() == {"attempts"} else None


def detect(value: dict) -> Evidence | None:
    """A mini-swe-agent run (``messages`` with its ``trajectory_format`` or ``info.mini_version``),
    a SWE-agent run (``trajectory`` and ``history``) or a SWE-agent RetryAgent trajectory
    (``attempts``, each such a run)."""
    if "messages" not in value and "trajectory" not in value and "attempts" not in value:
        return None
    return Evidence.SHAPE if _is_mini(value) or _is_swe(value) or _attempts(value) is not None else None


class _Call(msgspec.Struct):
    """One model call found in a trajectory, before its usage is read."""

    sent: list[dict]
    response: dict | None
    model: str
    sent_ms: int | None
    ready_ms: int | None
    markers: tuple[int, ...] = ()
    #: Why a call's response holds no usage, where the trajectory says (else the generic reason).
    no_usage: str = "response without usage"
    #: Where in the trajectory it is (``messages[7]``, ``trajectory[3]``, ``history[12]``): a
    #: trajectory is one object, every call on its line.
    path: str = ""


def _sent_message(message: dict) -> dict:
    """A trajectory message as LiteLLM sent it (SWE-agent's ``tool_call_ids`` as ``tool_call_id``;
    the ``thinking_blocks`` SWE-agent 1.1 keeps on a tool-calling reply, which LiteLLM sends back
    as thinking blocks, as its reasoning)."""
    sent = {key: message[key] for key in _SENT_KEYS if key in message}
    ids = message.get("tool_call_ids")
    if "tool_call_id" not in sent and isinstance(ids, list) and ids:
        sent["tool_call_id"] = ids[0]
    blocks = message.get("thinking_blocks")
    if "reasoning_content" not in sent and isinstance(blocks, list):
        thinking = "\n".join(b["thinking"] for b in blocks if isinstance(b, dict) and isinstance(b.get("thinking"), str))
        if thinking:
            sent["reasoning_content"] = thinking
    return sent


def _has_marker(message: dict) -> bool:
    """A ``cache_control`` on the message or on one of its content parts."""
    if isinstance(message.get("cache_control"), dict):
        return True
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(p, dict) and isinstance(p.get("cache_control"), dict) for p in content)


def _time(message: dict, where: str) -> int | None:
    raw = message.get("timestamp", as_dict(message.get("extra")).get("timestamp"))
    try:
        return parse_time_ms(raw, where)
    except UserError:
        return None


class _Run:
    """The calls of one trajectory, and what the file says of itself."""

    def __init__(self, name: str, record: Record, value: dict | None = None, root: str = "", lane: str = "") -> None:
        self.name = name
        self.line = record.line
        self.where = f"{name}:{record.line}"
        #: The run: the record, or one attempt of a RetryAgent trajectory (``root`` its path in it).
        self.value: dict = record.value if value is None else value  # type: ignore[assignment]
        self.root = root
        #: Its lane where the file names it (a RetryAgent attempt), else by its place in the file.
        self.lane = lane
        self.info = as_dict(self.value.get("info"))
        self.calls: list[_Call] = []
        self.notes: list[str] = []
        self.effort: str | None = None
        self.marks_end = False
        #: How the run ended, as its info (or mini-swe-agent 2.x's exit message) says; "" if it does not.
        self.exit_status = _exit_status(self.info, self.value)

    # -- mini-swe-agent ---------------------------------------------------------------
    def mini(self) -> None:
        config = as_dict(as_dict(self.info.get("config")).get("model"))
        default_model = str(config.get("model_name") or NO_MODEL)
        effort = as_dict(config.get("model_kwargs")).get("reasoning_effort")
        self.effort = effort if isinstance(effort, str) else None
        self.marks_end = config.get("set_cache_control") == "default_end"
        places = [i for i, m in enumerate(self.value["messages"]) if isinstance(m, dict)]
        messages = [self.value["messages"][i] for i in places]
        latest: int | None = None  # the latest time of a message so far: a call's send (see the module)
        backwards = 0  # messages stamped before a message above them
        for idx, message in enumerate(messages):
            stamp = _time(message, self.where)
            if stamp is not None and latest is not None and stamp < latest:
                backwards += 1
            extra = as_dict(message.get("extra"))
            response = message if message.get("object") == "response" else extra.get("response")
            if isinstance(response, str) and response.strip():
                # 2.x (June 2026 on): a format error whose response could not be dumped keeps its repr.
                sent = [_sent_message(m) if "role" in m else m for m in messages[:idx] if m.get("role") != "exit"]
                self.calls.append(_Call(sent, {}, default_model, latest, stamp, no_usage=_TEXT_ONLY, path=f"messages[{places[idx]}]"))
                if stamp is not None:
                    latest = stamp if latest is None else max(latest, stamp)
                continue
            is_call = isinstance(response, dict) or (message.get("role") == "assistant" and "response" not in extra)
            if is_call:
                created = parse_time_ms(response.get("created"), self.where) if isinstance(response, dict) and _plain_time(response.get("created")) else None
                model = str(response.get("model") or default_model) if isinstance(response, dict) else default_model
                sent = [_sent_message(m) if "role" in m else m for m in messages[:idx] if m.get("role") != "exit"]
                self.calls.append(_Call(sent, response if isinstance(response, dict) else None, _route(default_model, model), latest or created, stamp,
                                        path=f"messages[{places[idx]}]"))
            if stamp is not None:
                latest = stamp if latest is None else max(latest, stamp)
        stats = as_dict(self.info.get("model_stats"))
        version = self.info.get("mini_version")
        self.notes.append(
            f"mini-swe-agent {version or '(version not named)'}, {self.value.get('trajectory_format', 'no trajectory_format')}: "
            f"info.model_stats says {stats.get('api_calls', '?')} API calls, instance_cost ${_money(stats.get('instance_cost'))}"
        )
        # 2.x before June 2026 (2.3.1): a response without an action is dropped, its usage with
        # it; the user message that answers it (extra.interrupt_type: FormatError) stays. From
        # 2.3.1 that message keeps the response (a call, read above) and from 2.4.6 its cost.
        format_errors = sum(1 for m in messages if m.get("role") == "user" and "response" not in as_dict(m.get("extra"))
                            and as_dict(m.get("extra")).get("interrupt_type") == "FormatError")
        if format_errors:
            self.notes.append(
                f"{format_errors} call(s) answered by a FormatError message (a response with no action) are not in the "
                "trajectory, nor is their usage: not counted (info.model_stats.api_calls counts them)"
            )
        spent = sum(logged_cost(as_dict(m.get("extra")).get("cost")) for m in messages)
        if spent:
            self.notes.append(f"mini-swe-agent's per-call cost fields sum to ${spent:.4f}")
        if backwards:
            self.notes.append(
                f"{backwards} message(s) stamped earlier than a message before them (the clock stepped back): each call "
                "is taken as sent at the latest time before it, after the previous response, as the agent's order says"
            )
        if self.marks_end:
            self.notes.append("set_cache_control default_end: each call marked its last message for caching")

    # -- SWE-agent ----------------------------------------------------------------------
    def swe(self) -> None:
        model = self._swe_model()
        steps = [s for s in self.value["trajectory"] if isinstance(s, dict)]
        queried = [(n, s) for n, s in enumerate(self.value["trajectory"])
                   if isinstance(s, dict) and isinstance(s.get("query", s.get("messages")), list) and s.get("query", s.get("messages"))]
        if queried:
            for n, step in queried:
                query = [m for m in step.get("query", step.get("messages")) if isinstance(m, dict)]
                markers = tuple(i for i, m in enumerate(query) if _has_marker(m))
                self.calls.append(_Call([_sent_message(m) for m in query], None, model, None, None, markers, path=f"{self.root}trajectory[{n}]"))
        else:  # 0.x (and 1.0 previews without per-step messages): the history as the agent kept it
            kept = [(n, h) for n, h in enumerate(self.value["history"]) if isinstance(h, dict)]
            agent = next((h.get("agent") for _, h in kept), None)  # the main agent: "primary" in 0.x, "main" in 1.x
            kept = [(n, h) for n, h in kept if h.get("agent") == agent]
            history = [h for _, h in kept]
            for idx, item in enumerate(history):
                if item.get("role") == "assistant" and not item.get("is_demo"):
                    sent = [_sent_message(h) for h in history[:idx]]
                    self.calls.append(_Call(sent, None, model, None, None, path=f"{self.root}history[{kept[idx][0]}]"))
            if len(steps) > len(self.calls) and history and history[-1].get("role") != "assistant":
                # The run ended on a step whose reply never reached the history (a submit): it sent all of it.
                last = max(n for n, step in enumerate(self.value["trajectory"]) if isinstance(step, dict))
                self.calls.append(_Call([_sent_message(h) for h in history], None, model, None, None, path=f"{self.root}trajectory[{last}]"))
            self.notes.append(
                "this SWE-agent trajectory keeps no per-call request: each is rebuilt from the history, which a history "
                "processor (e.g. Last5Observations) may have shortened in what was sent"
            )
        stats = as_dict(self.info.get("model_stats"))
        version = self.info.get("swe_agent_version")
        self.notes.append(
            f"SWE-agent {version or '(version not named)'} keeps no provider usage: predictions only; info.model_stats says "
            f"{stats.get('api_calls', '?')} API calls, {stats.get('tokens_sent', '?')} tokens sent and "
            f"{stats.get('tokens_received', '?')} received (counted by SWE-agent's tokenizer), instance_cost ${_money(stats.get('instance_cost'))}"
        )

    def _swe_model(self) -> str:
        """The model a SWE-agent run named in its replay config (a JSON string), else unknown."""
        raw = self.value.get("replay_config")
        config = loads(raw, f"{self.where}: replay_config") if isinstance(raw, str) and raw.strip() else raw
        agent = as_dict(as_dict(config).get("agent"))
        name = as_dict(agent.get("model")).get("name") or as_dict(as_dict(config).get("model")).get("model_name")
        return name if isinstance(name, str) and name else NO_MODEL


def _exit_status(info: dict, value: dict) -> str:
    """The run's exit status (``info.exit_status``, else an ``exit`` message's), cut to 60 characters."""
    status = info.get("exit_status")
    if not isinstance(status, str) or not status:
        messages = value.get("messages") if isinstance(value.get("messages"), list) else []
        exits = [as_dict(m.get("extra")).get("exit_status") for m in messages if isinstance(m, dict) and m.get("role") == "exit"]
        status = next((s for s in exits if isinstance(s, str) and s), "")
    return " ".join(status.split())[:60]


def _plain_time(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _money(value: object) -> str:
    plausible = _plain_time(value) and 0 <= value < MAX_LOGGED_COST  # type: ignore[operator]
    return f"{value:.4f}" if plausible else "?"


def _route(configured: str, reported: str) -> str:
    """The model as LiteLLM routed it: the configured route (``anthropic/...``) when the response
    names the same model, else the response's."""
    return configured if configured.rsplit("/", 1)[-1] == reported or reported == NO_MODEL else reported


def _body(call: _Call, provider: str, effort: str | None, memo: MessageMemo, marks_end: bool, where: str) -> Request | None:
    """The request a call sent, as a wire Request; None when its messages are not chat completions
    (the Responses-API model's items, multimodal parts)."""
    model = call.model.rsplit("/", 1)[-1] or NO_MODEL
    body: dict = {"provider": provider, "model": model, "messages": [_ENCODE(m) for m in call.sent]}
    if effort in REASONING_EFFORTS:
        body["reasoning_effort"] = effort
    try:
        request = parse_request(body, memo)
    except (LineError, BadJson):
        return None
    rules = rules_for(provider)
    if rules.max_breakpoints is None or not request.messages:
        return request
    offset = len(call.sent) - len(request.messages)  # leading system messages became the system prompt
    marked = [i - offset for i in call.markers if i >= offset]
    if marks_end:
        marked.append(len(request.messages) - 1)
    points = [
        CacheBreakpoint("messages", max(0, len(request.messages[i].blocks) - 1), i)
        for i in sorted(set(marked))[-rules.max_breakpoints :]
    ]
    return replace(request, cache_breakpoints=tuple(points)) if points else request


def _reply(call: _Call, provider: str) -> tuple[Message, ...]:
    """A chat-completions call's answer (``choices[0].message`` of the response a trajectory keeps)
    as the next request sends it back; empty where the provider's cache keeps no output, where the
    response is not a chat completion, or where the answer reasoned (a reasoning field): measured on
    real DeepSeek reasoner runs, the next read stopped at the previous prompt's end more often than
    it reached into a reasoned answer (423 and 216 of 645 calls), while answers without reasoning
    were read into (1,931 of 1,944 calls)."""
    response = call.response
    choices = response.get("choices") if response is not None else None
    if not choices or not isinstance(choices, list) or not rules_for(provider).bodies_keep_output:
        return ()
    answer = as_dict(as_dict(choices[0]).get("message"))
    if any(answer.get(field) for field in REASONING_FIELDS):
        return ()
    return reply_messages({"messages": []}, {"model": call.model}, {"body": response}, [])


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The calls of a trajectory file; see the module doc."""
    name = str(path)
    runs: list[_Run] = []
    retry_notes: list[str] = []
    holder = _retry_parent(path)
    if holder is not None:
        note = (f"a SWE-agent RetryAgent attempt, read with {holder}, whose attempts hold it (its .traj beside the "
                "attempt_<n>/ folders): audit that file or the folder")
        return [], FileSummary(name, NAME, 0, (), (note,))
    for record in objects(path, records, " (a SWE-agent or mini-swe-agent trajectory)"):
        if not detect(record.value):  # type: ignore[arg-type]
            raise UserError(f"{name}:{record.line}: not a trajectory (no messages, or no trajectory and history)")
        refuse_lone_surrogates(record.value, f"{name}:{record.line}")  # a pretty-printed file is read by json
        attempts = _attempts(record.value)  # type: ignore[arg-type]
        if attempts is not None:
            # A RetryAgent's: each attempt a run of its own; the top level, once chosen, copies the best one.
            info = as_dict(record.value.get("info"))  # type: ignore[union-attr]
            for n, attempt in enumerate(attempts):
                run = _Run(name, record, attempt, f"attempts[{n}].", f"attempt-{n}")
                run.swe()
                runs.append(run)
            retry_notes.append(_retry_note(len(attempts), info, _is_swe(record.value)))  # type: ignore[arg-type]
            continue
        run = _Run(name, record)
        run.mini() if _is_mini(run.value) else run.swe()
        runs.append(run)
    if not runs and retry_notes:
        return [], FileSummary(name, NAME, 0, (), tuple(retry_notes))
    if not runs:
        raise UserError(f"{name}:1: empty file, no trajectory")
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    notes: list[str] = []
    memo = MessageMemo()
    for run_idx, run in enumerate(runs):
        raw = [(as_dict(c.response).get("usage"), f"{run.where}: call {i + 1}") for i, c in enumerate(run.calls)]
        usages = [(u, w) for u, w in raw if isinstance(u, dict)]
        included = gateway_usage.writes_in_prompt(usages)
        anthropic_calls = sum(1 for u, _ in usages if gateway_usage.is_anthropic_shaped(u))
        lane = run.lane or ("main" if len(runs) == 1 else f"run-{run_idx + 1}")
        parent: str | None = None
        writes_unknown = 0
        kept: list[tuple[int, _Call, Usage | None, str]] = []
        for i, call in enumerate(run.calls):
            usage_raw = as_dict(call.response).get("usage") if call.response is not None else None
            if call.response is not None and not isinstance(usage_raw, dict):
                skipped.append((run.line, f"call {i + 1}: {call.no_usage}"))
                continue
            usage: Usage | None = None
            shaped = isinstance(usage_raw, dict) and gateway_usage.is_anthropic_shaped(usage_raw)
            provider = gateway_usage.provider_of(call.model, shaped)
            if isinstance(usage_raw, dict):
                usage = gateway_usage.read_usage(usage_raw, f"{run.where}: call {i + 1}", writes_included=included, model=call.model)
                usage = gateway_usage.writes_unknown(usage, usage_raw, provider)
                writes_unknown += not usage.writes_reported
            kept.append((i, call, usage, provider))
        if not run.marks_end and any(u is not None and u.cache_write for _, _, u, _ in kept) and not any(c.markers for _, c, _, _ in kept):
            # Writes need a breakpoint; the run names none (LiteLLM may have injected it): the end one is assumed.
            run.marks_end = True
            notes.append("the log shows cache writes but its config names no cache_control: a marker on each call's last message is assumed")
        bodies = [_body(call, provider, run.effort, memo, run.marks_end, f"{run.where}: call {i + 1}") for i, call, _, provider in kept]
        without_body = sum(1 for b in bodies if b is None)
        if without_body:  # one lane is read one way: as bodies, or as a chain
            bodies = [None] * len(bodies)
        for (i, call, usage, provider), body in zip(kept, bodies):
            # The answer as the next call sends it back, where the provider's cache keeps output
            # (DeepSeek's: the next read reaches into it).
            reply = _reply(call, provider) if body is not None else ()
            node = f"swe:{name}#{run_idx}:{i}"
            prefix = Prefix(f"swe:{name}:{call.model}", node, parent) if body is None else None
            parent = node
            model = call.model.rsplit("/", 1)[-1] or NO_MODEL
            upstream = gateway_usage.served_by(call.model, gateway_usage.upstream_of(call.response) if call.response is not None else "")
            # A gateway's upstream whose reads count in a step of their own (gemini-3-pro through
            # OpenRouter's Google routes: route_upstream_steps); the route and upstream decide it.
            route = gateway_usage.route_of(call.response) if call.response is not None else ""
            step = rules_for(provider).route_upstream_step(route, upstream, model)
            out.append(
                TraceRequest(
                    file=name,
                    line=run.line,
                    path=call.path,
                    lane=lane,
                    lane_kind="main",
                    seq=len(out),
                    sent_ms=call.sent_ms,
                    ready_ms=call.ready_ms,
                    provider=provider,
                    model=model,
                    envelope=(("effort", run.effort),) if run.effort else (),
                    usage=usage,
                    body=body,
                    prefix=prefix,
                    request_id=str(call.response["id"]) if call.response is not None and isinstance(call.response.get("id"), str) else None,
                    agent_version=_version(run.info),
                    source_format=NAME,
                    reply=reply,
                    upstream=upstream,
                    read_step=step,
                )
            )
        notes.extend(run.notes if not run.lane else (f"{run.lane}: {n}" for n in run.notes))
        notes.extend(gateway_usage.reading_notes(len(usages), anthropic_calls, included))
        if writes_unknown:
            notes.append(gateway_usage.WRITES_UNKNOWN_NOTE.format(writes_unknown))
        if without_body:
            notes.append(
                f"{without_body} call(s) sent messages that are not chat completions (Responses API items or media): "
                "the run is read as a chain, without bodies"
            )
    if not out:
        ended = [(run.line, run.exit_status) for run in runs if run.exit_status]
        if len(ended) < len(runs):
            raise UserError(f"{name}:1: no model calls in this trajectory")
        # A run that ended (a timeout, a refused key) before its first call is a valid file of a batch of runs.
        skipped.extend((line, f"the run ended ({status}) before any model call") for line, status in ended)
        return out, FileSummary(name, NAME, 0, tuple(skipped), tuple(n for n in dict.fromkeys(notes) if n))
    notes.append("tool schemas are not in a trajectory (an unlogged head the same on every call)")
    notes.extend(retry_notes)
    return out, FileSummary(name, NAME, len(out), tuple(skipped), tuple(n for n in dict.fromkeys(notes) if n))


#: The folder a SWE-agent RetryAgent gives each attempt, beside its own trajectory.
_ATTEMPT_DIR = re.compile(r"attempt_(0|[1-9][0-9]{0,5})")


def _retry_parent(path: Path) -> Path | None:
    """The RetryAgent trajectory that holds the attempt at ``path`` (``<out>/attempt_<n>/<id>.traj``,
    the RetryAgent's ``<out>/<id>.traj`` listing at least ``n + 1`` attempts), None where there is
    none (an attempt the run had not finished when it last saved is read from its own file)."""
    found = _ATTEMPT_DIR.fullmatch(path.parent.name)
    parent = path.parent.parent / path.name
    if found is None or not parent.is_file():
        return None
    try:
        first = next(iter(iter_records(parent)), None)
    except (OSError, UserError):
        return None
    value = first.value if first is not None else None
    attempts = _attempts(value) if isinstance(value, dict) else None
    return parent if attempts is not None and len(attempts) > int(found.group(1)) else None


def _retry_note(attempts: int, info: dict, chosen: bool) -> str:
    """What a RetryAgent trajectory's reading leaves out."""
    stats = as_dict(info.get("model_stats"))
    review = as_dict(info.get("rloop_model_stats"))
    best = info.get("best_attempt_idx")
    top = (f"its top-level trajectory is a copy of attempt {best} (info.best_attempt_idx), not read again"
           if chosen else "no attempt chosen yet (saved during the run)")
    return (f"a SWE-agent RetryAgent trajectory: {attempts} attempt(s), each a lane (attempt-<n>; also kept in attempt_<n>/, "
            f"read with this file); {top}; info.model_stats (all attempts and the reviews) says {stats.get('api_calls', '?')} "
            f"API calls; the reviewer's or chooser's {review.get('api_calls', 0)} call(s) are not in the file")


def _version(info: dict) -> str | None:
    version = info.get("mini_version", info.get("swe_agent_version"))
    return str(version) if isinstance(version, (str, int, float)) and not isinstance(version, bool) else None


FORMAT = LogFormat(
    name=NAME,
    noun="SWE-agent trajectory",
    nouns="SWE-agent trajectories",
    description="SWE-agent (.traj) and mini-swe-agent (.traj.json) trajectories: the messages each call sent, and LiteLLM's usage",
    detect=detect,
    read=read,
    usage="by-endpoint",
    versions=(
        "mini-swe-agent 1.0-1.11 (trajectory_format mini-swe-agent-1): messages only, no usage (predictions only)",
        "mini-swe-agent 1.11.1-1.16: extra.response on each assistant message (LiteLLM's usage)",
        "mini-swe-agent 1.17: a timestamp on every message",
        "mini-swe-agent 2.x (mini-swe-agent-1.1): tool calls, extra.{response, cost, timestamp}, a failed parse's response on the error message, the Responses-API model's response objects",
        "mini-swe-agent 2.x before 2.3.1: a response without an action dropped, its FormatError message left (counted in the notes)",
        "mini-swe-agent 2.3.1 on (June 2026): a failed parse's response on its FormatError message (a call), or its repr (a string) where it could not be dumped: a call without usage, listed",
        "mini-swe-agent 2.4.6: a failed parse's cost on its FormatError message too",
        "LiteLLM's Anthropic usage: prompt_tokens without writes (older) or with them (newer, prompt_tokens_details.cache_creation_tokens)",
        "SWE-agent 0.x: trajectory and history only (requests rebuilt from the history)",
        "SWE-agent 1.0 previews (steps' messages) and 1.x (steps' query with cache_control, replay_config): no usage",
        "SWE-agent 1.1: thinking_blocks on a tool-calling reply (sent back as its reasoning)",
        "SWE-agent 1.x RetryAgent: attempts (each a lane) and the chosen one copied at the top; attempt_<n>/<id>.traj read with it",
    ),
    aliases=("mini-swe-agent",),
)
