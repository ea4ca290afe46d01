"""Trae Agent trajectories (bytedance/trae-agent's ``trae-cli run --trajectory-file``).

Trae Agent's ``TrajectoryRecorder`` (``trae_agent/utils/trajectory_recorder.py``) keeps a run as one
JSON object, ``trajectories/trajectory_<YYYYmmdd_HHMMSS>.json`` by default, rewritten whole after
each call and step: ``{task, start_time, end_time, provider, model, max_steps, llm_interactions,
agent_steps, success, final_result, execution_time}``.

* ``llm_interactions[]``: one per model call, written when its response has come back:
  ``{timestamp, provider, model, input_messages, response: {content, model, finish_reason, usage:
  {input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens,
  reasoning_tokens}, tool_calls}, tools_available}``. ``input_messages`` are the messages the call
  added to the client's history (``reuse_history``: the first call's system prompt and task, then
  the tool results or the nudge of each step), ``{role, content, tool_call?, tool_result?}``.
* ``agent_steps[]`` repeat each step's response with only its input and output counts: not read.

One request per interaction, in file order, in one lane (``main``): each extends the one before it
by that call's reply and its own ``input_messages``.

Head: the first call logs the system prompt (its ``system`` message) and ``tools_available`` names
the tools sent; both are the head every call of the run starts with. The head key carries a digest
of the two beside the model, so runs of one folder with another system prompt or tool set (a
benchmark's configurations side by side: ISO-Bench's gpt-5 runs with 4 tools, with 30, and with
another prompt, read 6,400, 8,448 and 6,784 tokens at their first calls) do not share one head
and its warm size.

Usage convention, by the interaction's ``provider`` (Trae's client that made the call, each
filling ``LLMUsage`` its own way): ``anthropic`` passes Anthropic's usage on (``input_tokens``
excludes the reads and writes: additive); ``openai`` (the Responses API's ``input_tokens`` and
``cached_tokens``) and ``google`` (``prompt_token_count`` and ``cached_content_token_count``) count
the cached part inside the input (subset); the OpenAI-compatible clients (``azure``,
``openrouter``, ``doubao``) and ``ollama`` pass only the prompt and completion counts, their cache
fields left 0: cache use not reported. Who served a call is asked of
:func:`prefixbench.simulator.providers.provider_of_model` with the response's ``model``, but for
the ``ollama`` client's: a host running open models itself, provider unknown and unpriced (its
``upstream``).

Times: ``timestamp`` is ``datetime.now().isoformat()``, the local time without an offset, when the
response had come back: read as UTC (the offset is not in the file), a call done then; no send
time is kept, so a call is taken as sent at the latest when it ended.

Output: the ``openai`` client's calls send each response back whole, its reasoning included (the
prompt grows by the whole output), so the next call reads past the previous prompt on OpenAI's
cache (``Prefix.replays_output``); unless, in this run, more than half the calls after one that
reasoned grew by less than its output (the reasoning not sent back). A call that opens a user
turn (Trae's nudge after a response without tool calls) with a prompt smaller than the previous
one plus its output, after a turn that reasoned, was sent without that reasoning (OpenAI renders
none of an earlier turn's): it shares with the previous prompt only the turn's first prompt
(``Prefix.shared``, :meth:`_Run._shared`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import UNKNOWN, counted_provider, rules_for
from prefixbench.simulator.providers.hosts import billing_host
from prefixbench.simulator.providers.vllm import self_hosted
from prefixbench.simulator.providers.base import count, subset_usage
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.workloads.logs.formats.common import Lane, as_dict, head_digest, objects, parse_time_ms
from prefixbench.workloads.logs.history import READ_TOOLS, make_message
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LoggedMessage, Prefix, TraceRequest

NAME = "trae-agent"
#: How each of Trae's clients fills its usage (keyed by the interaction's ``provider``): the
#: cached part outside the input (``additive``) or inside it (``subset``); a client missing here
#: passes no cache count (``chat``).
_CLIENT_READING = {"anthropic": "additive", "openai": "subset", "google": "subset"}
#: The clients whose next call sends a response back whole, its reasoning included: Trae's
#: ``openai`` client keeps each response's output items in its history and sends them with their
#: ids on the Responses API, and the next prompt has grown by the whole output (reasoning tokens
#: too), and OpenAI's cache, which keeps a response after its prompt, serves the next call past
#: the previous prompt. Measured, not documented: of the 8,482 follow-ups that read in ISO-Bench's
#: 816 trajectories (gpt-5, gpt-4o), 3,024 read the previous prompt + output (floored to 128
#: tokens) and 4,148 the previous prompt (mostly of a short output, within 3% of either). A run
#: whose prompts mostly grew by less than the reasoning did not send it back (``_replays_reasoning``).
_REPLAYS_OUTPUT = frozenset({"openai"})


def detect(value: dict) -> Evidence | None:
    """A trajectory: ``llm_interactions`` and ``agent_steps`` lists beside a ``task``."""
    if isinstance(value.get("llm_interactions"), list) and isinstance(value.get("agent_steps"), list) and "task" in value:
        return Evidence.WRAPPER
    return None


def _usage(usage: dict, client: str, where: str) -> tuple[Usage, str]:
    """A call's usage as its client filled it, and the reading taken."""
    tokens_in = count(usage.get("input_tokens"), where, "usage.input_tokens")
    output = count(usage.get("output_tokens"), where, "usage.output_tokens")
    written = count(usage.get("cache_creation_input_tokens"), where, "usage.cache_creation_input_tokens")
    read = count(usage.get("cache_read_input_tokens"), where, "usage.cache_read_input_tokens")
    reading = _CLIENT_READING.get(client, "chat")
    if reading == "additive":
        return Usage(cache_read=read, cache_write_5m=written, uncached=tokens_in, output=output), reading
    if reading == "chat" and read + written == 0:
        return Usage(uncached=tokens_in, output=output, cache_reported=False), reading
    return subset_usage(tokens_in, read, written, output,
                        excess=f"{where}: cached ({read}) and written ({written}) tokens exceed input_tokens ({tokens_in})"), "subset"


def _head_tag(interactions: list) -> str:
    """A digest of the head a run's calls start with, as the log shows it: the system messages of
    its first call that logs any and the first logged ``tools_available``; "" when neither is logged."""
    system: list = []
    tools: object = None
    for interaction in map(as_dict, interactions):
        messages = interaction.get("input_messages")
        if not system and isinstance(messages, list):
            system = [as_dict(m).get("content") for m in messages if as_dict(m).get("role") == "system"]
        if tools is None and isinstance(interaction.get("tools_available"), list):
            tools = interaction["tools_available"]
        if system and tools is not None:
            break
    if not system and tools is None:
        return ""
    return head_digest([system, tools])


class _Run:
    """The requests of one trajectory object."""

    def __init__(self, path: Path, record: Record, value: dict, out: list[TraceRequest]) -> None:
        self.name = str(path)
        self.line = record.line
        self.where = f"{self.name}:{record.line}"
        self.value = value
        self.out = out
        self.skipped: list[tuple[int, str]] = []
        self.readings: dict[str, int] = {}
        self.lane = Lane("main", "main")
        #: The previous call's reply: the first block the next call adds.
        self.reply: LoggedMessage | None = None
        #: The ids of the tool calls that read a file (their results are marked so).
        self.reads: set[str] = set()
        #: The prompt of the call that opened the current user turn, whether a call of that turn
        #: reasoned, and the previous call's prompt and output (:meth:`_shared`).
        self.turn_prompt: int | None = None
        self.turn_reasoned = False
        self.last: tuple[int, int] | None = None

    def read(self) -> None:
        self.replays = self._replays_reasoning()
        tag = _head_tag(self.value["llm_interactions"])
        self.head = f"trae-agent:{self.lane.kind}:{tag}:" if tag else f"trae-agent:{self.lane.kind}:"
        for index, interaction in enumerate(self.value["llm_interactions"]):
            where = f"llm_interactions[{index}]"
            if not isinstance(interaction, dict):
                raise UserError(f"{self.where}: {where} is not an object")
            messages = interaction.get("input_messages")
            if messages is None:
                messages = []
            if not isinstance(messages, list):
                raise UserError(f"{self.where}: {where}.input_messages is not a list")
            response = interaction.get("response")
            if not isinstance(response, dict):
                raise UserError(f"{self.where}: {where}.response is not an object")
            usage = response.get("usage")
            if usage is not None and not isinstance(usage, dict):
                raise UserError(f"{self.where}: {where}.response.usage is not an object")
            self._call(index, interaction, messages, response, usage or {})

    def _replays_reasoning(self) -> bool:
        """Whether this run's calls sent each response back whole, reasoning included: unless more
        than half the follow-ups of a call that reasoned grew by less than its output (the
        reasoning was not sent back: ISO-Bench's gpt-5 run of 2026-01, five of its six
        trajectories; none of the 2025 ones)."""
        previous: tuple[int, int] | None = None
        reasoned = short = 0
        for interaction in self.value["llm_interactions"]:
            response = as_dict(as_dict(interaction).get("response"))
            usage = as_dict(response.get("usage"))
            tokens_in, output, reasoning = (usage.get(key) for key in ("input_tokens", "output_tokens", "reasoning_tokens"))
            if not all(isinstance(value, int) and not isinstance(value, bool) for value in (tokens_in, output, reasoning)):
                previous = None
                continue
            if previous is not None:
                reasoned += 1
                short += tokens_in - previous[0] < previous[1]
            previous = (tokens_in, output) if reasoning > 0 else None
        return short * 2 <= reasoned

    def _shared(self, usage: Usage, turn: bool, replays: bool, model: str) -> int | None:
        """How much of the previous call's prompt this one keeps (None: all of it). Where the
        client sends each response back whole (reasoning included), a call that opens a user turn
        (Trae's nudge after a response without tool calls) after a turn that reasoned, with a
        prompt smaller than the previous one plus its output, was sent without that reasoning:
        OpenAI renders no reasoning item of an earlier user turn (the provider's
        ``turn_reasoning_dropped``), and what it shares with the previous prompt ends where that
        reasoning began, at the end of the prompt of the turn's first call (Codex's rollouts show
        the same: codex.py, ``_shared``). A turn whose prompt did not shrink is left whole: in
        ISO-Bench's trajectories those read the previous prompt about as often as the turn's."""
        if not (turn and replays and self.turn_prompt is not None and self.last is not None):
            return None
        if (usage.prompt < self.last[0] + self.last[1] and self.turn_reasoned
                and rules_for(counted_provider(model)).drops_turn_reasoning(model)):
            return self.turn_prompt
        return None

    def _call(self, index: int, interaction: dict, messages: list, response: dict, usage: dict) -> None:
        lane = self.lane
        where = f"llm_interactions[{index}]"
        client = interaction.get("provider") if isinstance(interaction.get("provider"), str) else ""
        reported, reading = _usage(usage, client, f"{self.where}: {where}.response")
        pending: list[LoggedMessage] = [self.reply] if self.reply is not None else []
        turn = False
        for position, message in enumerate(messages):
            if not isinstance(message, dict):
                raise UserError(f"{self.where}: {where}.input_messages[{position}] is not an object")
            role = str(message.get("role") or "user")
            if role == "user" and message.get("tool_result") is None and message.get("content"):
                lane.events.append(("user_turn", ""))
                turn = True
            result = as_dict(message.get("tool_result"))
            content = message.get("content") if message.get("content") is not None else result.get("result") or result.get("error")
            marks = ("file-read",) if str(result.get("call_id")) in self.reads else ()
            pending.append(make_message(role, content if content is not None else "", marks))
        tool_calls = response.get("tool_calls") if isinstance(response.get("tool_calls"), list) else []
        for call in map(as_dict, tool_calls):
            # A read: a read tool, or the edit tool's view command (Trae's own way to read a file).
            if str(call.get("name") or "").lower() in READ_TOOLS or as_dict(call.get("arguments")).get("command") == "view":
                self.reads.add(str(call.get("call_id")))
        self.reply = make_message("assistant", response.get("content") if isinstance(response.get("content"), str) else "")
        if reported.prompt + reported.output == 0:
            self.skipped.append((self.line, f"{where}: call with no tokens (no usage)"))
            return
        self.readings[reading] = self.readings.get(reading, 0) + 1
        served = response.get("model")
        model = served if isinstance(served, str) and served else interaction.get("model")
        model = model if isinstance(model, str) and model else lane.model or NO_MODEL
        lane.send_to(model)
        replays = self.replays and client in _REPLAYS_OUTPUT
        shared = self._shared(reported, turn, replays, model) if lane.parent is not None else None
        if lane.parent is None or turn:
            self.turn_prompt, self.turn_reasoned = reported.prompt, False
        reasoning = usage.get("reasoning_tokens")
        self.turn_reasoned = self.turn_reasoned or (isinstance(reasoning, int) and not isinstance(reasoning, bool) and reasoning > 0)
        self.last = (reported.prompt, reported.output)
        done = parse_time_ms(interaction.get("timestamp"), f"{self.where}: {where}")
        node = f"trae-agent:{self.name}:{index}"
        self.out.append(
            TraceRequest(
                file=self.name,
                line=self.line,
                path=where,  # a trajectory is one object: every call is on its line
                lane=lane.name,
                lane_kind=lane.kind,
                seq=len(self.out),
                sent_ms=done,  # no send time is kept: at the latest when it ended
                ready_ms=None,
                done_ms=done,
                # Trae's ``ollama`` client: a host running open models itself, whose cache is its own
                # and whose calls no vendor bills, whatever the model's name (its upstream, unpriced).
                provider=UNKNOWN.name if self_hosted(client) else counted_provider(model),
                model=model,
                usage=reported,
                prefix=Prefix(f"{self.head}{model}", node, lane.parent, max(1, len(pending)),
                              replays_output=replays, shared=shared),
                events=tuple(lane.events),
                request_id=f"{index}",
                source_format=NAME,
                messages=tuple(pending),
                upstream=billing_host(client),
            )
        )
        lane.parent = node
        lane.events = []


#: The readings' words in the notes.
_READINGS = {
    "additive": "read as additive (Trae's anthropic client: input_tokens excludes the reads and writes)",
    "subset": "read as subset (Trae's openai and google clients: the cached part inside input_tokens)",
    "chat": "with no cache count (a client other than Trae's anthropic, openai and google ones: its OpenAI-compatible and Ollama clients, or a fork's, pass none: cache use not reported)",
}


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A trajectory file's requests; see the module doc."""
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    readings: dict[str, int] = {}
    for record in objects(path, records, " (a Trae Agent trajectory)"):
        value: dict = record.value  # type: ignore[assignment]
        if detect(value) is None:
            raise UserError(f"{path}:{record.line}: not a Trae Agent trajectory (no llm_interactions and agent_steps lists beside a task)")
        run = _Run(path, record, value, out)
        run.read()
        skipped += run.skipped
        for reading, calls in run.readings.items():
            readings[reading] = readings.get(reading, 0) + calls
    notes = ["Trae Agent stamps each call in local time with no offset, when its response came back: read as UTC, each call sent at the latest when it ended"]
    notes += [f"{calls} call(s) {_READINGS[reading]}" for reading, calls in sorted(readings.items())]
    return out, FileSummary(str(path), NAME, len(out), tuple(skipped), tuple(notes))


FORMAT = LogFormat(
    name=NAME,
    noun="Trae Agent trajectory",
    nouns="Trae Agent trajectories",
    description="Trae Agent trajectories (trajectories/trajectory_<time>.json: llm_interactions with each call's usage and new messages)",
    detect=detect,
    read=read,
    usage="by-endpoint",
    versions=(
        "trae-agent from its first commit (June 2025) on: llm_interactions {timestamp, provider, model, input_messages, response {usage {input_tokens, "
        "output_tokens, cache_creation_input_tokens, cache_read_input_tokens, reasoning_tokens}}}",
        "anthropic client: additive; openai and google clients: subset; OpenAI-compatible (azure, openrouter, doubao) and ollama clients: no cache count",
    ),
    aliases=("trae",),
)
