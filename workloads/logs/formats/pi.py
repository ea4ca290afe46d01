"""pi sessions.

A ``session`` header, then entries: assistant ``message`` usage ``{input, output, cacheRead,
cacheWrite, cost}`` (``input`` excludes ``cacheRead``, except on the ``google-generative-ai``
and ``google-vertex`` APIs, where it is Gemini's whole prompt count); later pi (earendil-works/pi,
late 2026) adds ``cacheWrite1h``, the part of ``cacheWrite`` Anthropic wrote for an hour, and
``reasoning``, a part of ``output``, and ``responseModel``, the model that answered where it is
not the one asked for (the call's model: :func:`_served_model`); a tool result's own ``usage`` (the
calls its tool made itself) is no call here, summed in a note; ``model_change``, ``thinking_level_change``, ``compaction`` become events;
an aborted call with no usage is skipped. A call's time is its message's ``timestamp``, else (pi
before 0.6.0) its entry's. Tree sessions (newer pi) link entries by
``id``/``parentId``: a prompt extends the request its branch descends from.

Calls that are no message of the conversation (earendil-works/pi): a ``usage`` entry (``kind``,
``provider``, ``model``, ``usage``) is one; its cache warmer's (``kind: "cache_warm"``) re-sends
the latest request as it was sent, with a one-token output cap, before its cache entry expires,
so it extends that request's prompt by nothing; any other kind is a call of its own chain. The
``usage`` of a ``compaction`` or ``branch_summary`` entry is the call that wrote the summary (a
prompt of its own: the conversation serialized under a summarization prompt), on the model of
the request before it. A ``compaction`` entry with no call after it in its session and no
summary call logged (format 1 logs none) leaves the audit no request to judge: the file's notes
count it, with its line (pi-mono's committed ``compact.jsonl`` ends so, its last reply and a
hook's compaction run together on one line).

A fork (``/fork``: ``createBranchedSession``; ``pi --fork``: ``SessionManager.forkFrom``) copies its
source's entries into a new session file as they are: a call another file of the audit counted
(same kind, time, provider, model, response id and usage) is not counted again, and the fork's
calls after it extend it. Whichever of the two files the audit reads first counts the calls they
share: the other's note says they were copied from the session it was forked from only when its
header names (``parentSession``, ``branchedFrom``: the source's file) the file that counted them,
and else that they are the same calls as that file's (a source read after its fork, or two forks
of one source). A header naming a parent is a fork only when the entries after it are a copy,
written before it (see :meth:`_Session._fork_or_fresh`); else the session started afresh.

Later pi (earendil-works/pi, late 2026; checked against its ``packages/coding-agent`` and
``packages/session-backends/sqlite-node`` at commit 02cd1cff) can keep its sessions in a SQLite
store, ``sessions.sqlite``, instead of files: each session's ``entries`` rows are its entries, read
as a session file's are (:mod:`.pi_db`).

OpenClaw (formerly Clawdbot and Moltbot) writes pi sessions, with assistant messages that are no
call of the chain (:data:`_OPENCLAW_SKIPS`): they are skipped and counted in the file's notes.

``pi --mode json`` (and ``--mode rpc``) prints the session header, then its AgentSessionEvents
(pi-mono's ``docs/json.md``): each message as ``message_start``, ``message_update`` (partial
usage), ``message_end`` (final), and again inside ``turn_end`` and ``agent_end``. Only
``message_end`` is read, as a ``message`` entry with no id (entries in output order). A
compaction pi did between calls is printed as events only (``auto_compaction_end`` in 0.58,
``compaction_end`` by 0.73, with the ``result`` a session file's ``compaction`` entry holds): read as
that entry, no summary call logged. A ``thinking_level_changed {level}`` event (0.73) is a session
file's ``thinking_level_change``; the level a run starts at is not printed, so calls before any
level is named (by such an event or ``--mode rpc``'s ``get_state`` response) are counted in a note
as of an unknown level. Such output holding no call (a run that failed first: ``--mode rpc``'s failed ``response`` alone) is
refused in one line quoting its first error (:meth:`_Session.no_call`).

A ``custom_message`` entry (an extension's message; ``custom`` entries are no message) is sent to
the model as a user message of its ``content`` (pi-mono's ``convertToLlm``): it enters the messages
a request adds, where a break is located. So does a ``bashExecution`` message, a ``!cmd`` the user
ran, as the user message of :func:`_bash_text`, unless run with ``!!`` (``excludeFromContext``),
and a ``branch_summary`` entry's summary, wrapped as pi sends it (:data:`_BRANCH_WRAP`; a
compaction's, which opens the new context, in :data:`_COMPACTION_WRAP`).
"""

from __future__ import annotations

import json

from collections.abc import Iterable
from pathlib import Path

from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.workloads.logs.formats import openclaw_db, pi_db
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat
from prefixbench.simulator.providers import OPENAI, UNKNOWN, counted_as, hosted_provider, provider_of_model
from prefixbench.simulator.providers.base import count
from prefixbench.simulator.providers.hosts import agent_host, azure_service, workers_ai
from prefixbench.simulator.providers.vllm import self_hosted
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats.common import as_dict, logged_cost, objects, parse_time_ms, writes_left_as_logged
from prefixbench.workloads.logs.formats.opencode import zen_model
from prefixbench.workloads.logs.history import READ_TOOLS, make_message
from prefixbench.workloads.logs.records import MessagePlaces, Record
from prefixbench.workloads.logs.trace import NO_MODEL, FileSummary, LoggedMessage, Prefix, Provider, TraceRequest

NAME = "pi"
_EVENT_KINDS = ("model_change", "thinking_level_change", "compaction", "branch_summary", "custom")
#: The ``usage`` entry of pi's cache warmer (earendil-works/pi's ``cache-warmer.ts``).
_CACHE_WARM = "cache_warm"


def detect(value: dict) -> Evidence | None:
    """A session header (without Claude Code's ``sessionId``), an event entry or a message entry."""
    kind = value.get("type")
    if kind == "session" and ("modelId" in value or "cwd" in value) and "sessionId" not in value:
        return Evidence.ENTRY
    if kind in _EVENT_KINDS or kind == "custom_message" and "customType" in value:
        return Evidence.ENTRY
    if kind == "usage" and isinstance(value.get("kind"), str) and isinstance(value.get("usage"), dict):
        return Evidence.ENTRY
    if kind in ("message", "message_end") and isinstance(value.get("message"), dict) and "role" in value["message"]:
        return Evidence.ENTRY
    if _rpc_response(value):
        return Evidence.ENTRY
    return None


#: The keys of ``pi --mode rpc``'s answer to a command (pi-mono's ``docs/rpc.md``, ``RpcResponse``).
_RPC_RESPONSE_KEYS = frozenset({"type", "id", "command", "success", "error", "data"})


def _rpc_response(value: dict) -> bool:
    """``pi --mode rpc``'s answer to a command: ``{type: "response", command, success, error?,
    data?, id?}`` (a failed ``prompt`` prints only this, with its ``error``)."""
    return (value.get("type") == "response" and isinstance(value.get("command"), str) and isinstance(value.get("success"), bool)
            and value.keys() <= _RPC_RESPONSE_KEYS)


#: The most of an error's text the refusal of a pi output holding no call quotes.
_ERROR_CHARS = 160
#: pi --mode json / rpc's AgentSessionEvents that only output holds (no session file has them).
_OUTPUT_EVENTS = frozenset({"message_end", "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
                            "auto_retry_start", "auto_retry_end", "auto_compaction_start", "auto_compaction_end",
                            "compaction_start", "compaction_end", "thinking_level_changed"})
#: The output event that ends a compaction (``auto_compaction_end`` until pi 0.6x, then
#: ``compaction_end`` for a manual one too): its ``result`` (``summary``, ``firstKeptEntryId``,
#: ``tokensBefore``) is the session file's ``compaction`` entry; ``result`` is absent where the
#: compaction failed or was aborted.
_COMPACTION_ENDS = ("auto_compaction_end", "compaction_end")


def _output_compaction(value: dict) -> dict | None:
    """The result of a compaction pi's --mode json / rpc output reports as done, or None."""
    result = value.get("result") if value.get("type") in _COMPACTION_ENDS else None
    return result if isinstance(result, dict) and isinstance(result.get("summary"), str) else None


#: pi's ids for a vendor's own endpoints (pi-mono's ``packages/ai`` model catalogue) that are not
#: the vendor's name here.
_VENDOR_IDS = {
    "openai-codex": "openai",
    "azure-openai-responses": "openai",
    "google": "gemini",
    "google-vertex": "gemini",
    "google-gemini-cli": "gemini",
    "amazon-bedrock": "bedrock",
    "kimi-coding": "moonshot",
    "minimax-cn": "minimax",
    # Later pi's (earendil-works/pi ``packages/ai/src/types.ts`` ``KnownProvider``): Moonshot's own
    # API by its company's name, Z.AI's coding plan on its China endpoint, Alibaba's Qwen token
    # plans (Model Studio).
    "moonshotai": "moonshot",
    "moonshotai-cn": "moonshot",
    "zai-coding-cn": "zai",
    "qwen-token-plan": "qwen",
    "qwen-token-plan-cn": "qwen",
    "qwen-token-plan-individual": "qwen",
    # OpenClaw's MiniMax OAuth (its ``minimax-portal-auth`` plugin): MiniMax's own API
    # (api.minimax.io, api.minimaxi.com), Anthropic-compatible.
    "minimax-portal": "minimax",
}
#: pi's gateways, which pass a call on to the vendor its model names (OpenCode Zen and Go,
#: OpenRouter, Vercel's AI Gateway, later pi's Cloudflare AI Gateway); a host serving open models
#: itself (Fireworks, Groq, Cerebras, Cloudflare Workers AI...) is no gateway: its cache is its
#: own, which no rule models.
_GATEWAYS = frozenset({"opencode", "opencode-go", "openrouter", "vercel-ai-gateway", "cloudflare-ai-gateway"})
#: Model ids that one vendor's own endpoint alone serves, so a call of one was served by that
#: vendor whatever the provider entry that sent it is named (any id the audit does not know, as a
#: custom provider of the user's ``models.json``; not a gateway, a self-hosted server or a host
#: serving open models itself, and the model's id compared whatever its case): Kimi Code's plan model, ``kimi-for-coding``, is api.kimi.com/coding's own (a
#: real home's ``kimi-coder`` entry sent it there: its calls' 402s ask for an active membership).
_VENDOR_ONLY_MODELS = {"kimi-for-coding": "moonshot"}


def _served_model(message: dict) -> str:
    """The model that answered a call: later pi's ``responseModel`` (earendil-works/pi's
    ``AssistantMessage``: set only where it differs from the model asked for, as a router's pick,
    OpenRouter's ``openrouter/auto`` answered by ``anthropic/...``, or a server-side fallback of
    Anthropic's), else the message's ``model``; a ``responseModel`` that only spells the model
    asked for another way (its last ``/`` part the same but for case) keeps ``model``."""
    asked = str(message.get("model") or "")
    served = message.get("responseModel")
    if not isinstance(served, str) or not served:
        return asked
    # A host's own spelling of the model asked for (Fireworks' ``accounts/fireworks/models/
    # deepseek-v4-pro`` for ``deepseek-ai/DeepSeek-V4-Pro``, a lower-cased id) is the same model:
    # the name asked for is kept, so one model is one row and one price.
    if asked and served.rsplit("/", 1)[-1].casefold() == asked.rsplit("/", 1)[-1].casefold():
        return asked
    return served


def _provider(message: dict) -> Provider:
    """Who served a call: the vendor the message's own ``provider`` names when the audit models
    it, or for a gateway the vendor whose model names the model that answered (the part after a
    ``/``; :func:`_served_model`)."""
    name = str(message.get("provider") or "")
    rules = hosted_provider(_VENDOR_IDS.get(name, name))
    if rules is None and name not in _GATEWAYS and not self_hosted(name) and not _host(message):
        rules = hosted_provider(_VENDOR_ONLY_MODELS.get(_served_model(message).casefold(), ""))
    if rules is None and name in _GATEWAYS:
        model = _served_model(message)
        if workers_ai(model):
            return UNKNOWN.name
        rules = provider_of_model(model.rsplit("/", 1)[-1])
        if rules is None or not rules.reports_usage:
            rules = provider_of_model(model.split("/", 1)[0])
    return counted_as(rules)


def _service(message: dict) -> str:
    """The service of OpenAI's models a call went to where pi's provider names Azure OpenAI
    (``azure-openai-responses``: :func:`~prefixbench.simulator.providers.hosts.azure_service`) and
    the call is read as OpenAI's; "" for any other (a model of another maker on Azure is not
    Azure OpenAI)."""
    return azure_service(name=str(message.get("provider") or "")) if _provider(message) == OPENAI.name else ""


def _host(message: dict) -> str:
    """The host that served a call where no vendor bills it at its list price, kept as the call's
    ``upstream`` (which leaves it unpriced or at the host's own row, never at the maker's list
    price, whatever the model's name: see
    :meth:`~prefixbench.simulator.price_lookup.Prices.at_list_price`): a host running open models
    itself (pi's ``ollama``, ``lmstudio``...), Cloudflare's Workers AI, named or behind a
    gateway (:func:`~prefixbench.simulator.providers.hosts.workers_ai`), or another third-party host of open models (pi's
    ``fireworks``, ``groq``, ``cerebras``...: :func:`~prefixbench.simulator.providers.hosts.billing_host`),
    each billing its own price; "" for any other (a maker's own API, a gateway)."""
    name = str(message.get("provider") or "")
    return agent_host(name, _served_model(message))


#: pi's APIs whose ``input`` is Gemini's ``promptTokenCount`` whole, ``cacheRead`` inside it
#: (``packages/ai/src/providers/google.ts`` and ``google-vertex.ts`` to 0.62; its ``google-gemini-cli``
#: API subtracts the reads, as every other API does). From pi-ai 0.63 these subtract them too,
#: their ``totalTokens`` (Gemini's ``totalTokenCount``) then counting the reads beside ``input``.
_INPUT_INCLUDES_READS = ("google-generative-ai", "google-vertex")


#: pi's APIs that send a response back whole, reasoning items included (``thinkingSignature``
#: holds the encrypted reasoning item, ``reasoning.encrypted_content`` asked for).
_REPLAYS_OUTPUT = ("openai-responses", "openai-codex-responses", "azure-openai-responses")  # a tuple: a JSON list is no set member
#: Providers whose calls pi sends back whole on any API, as Cline and OpenCode do: DeepSeek (its
#: thinking mode wants ``reasoning_content`` back with tool calls). On a real pi home (2026-07,
#: deepseek-v4-flash-free through OpenCode Zen, ``openai-completions``, 128 calls) each read
#: reaches past the previous prompt into its reply (8,192 of an 8,234-token prompt whose
#: previous one was 6,183): 92 within 3% without this.
_REPLAYS_OUTPUT_PROVIDERS = frozenset({"deepseek"})


def _replays_output(message: dict) -> bool:
    """Whether pi sends this call's response back whole in the next call (its API's way, or its
    provider's)."""
    return message.get("api") in _REPLAYS_OUTPUT or _provider(message) in _REPLAYS_OUTPUT_PROVIDERS


#: pi's APIs whose wire usage has no write count: pi writes ``cacheWrite: 0`` on every call
#: (pi-mono's ``packages/ai/src/providers/``: ``openai-completions.ts`` and the Responses,
#: Google and Mistral providers; only ``anthropic-messages`` and ``bedrock-converse-stream`` read
#: one). A 0 there says nothing of what the call wrote. (From pi-ai 0.65.2 ``openai-completions``
#: reads ``prompt_tokens_details.cache_write_tokens`` where a server reports it, OpenRouter's, but
#: writes 0 as well where none is reported: a count above 0 is a count, a 0 still unknown.)
_NO_WRITE_COUNT = ("openai-completions", "azure-openai-completions", "openai-responses", "openai-codex-responses",
                   "azure-openai-responses", "google-generative-ai", "google-vertex", "google-gemini-cli",
                   "mistral-conversations")  # a tuple: a JSON list is no set member


#: The note of a file whose calls' writes were left unknown (:data:`_NO_WRITE_COUNT`).
_WRITES_UNKNOWN = ("{:,} call(s) on an API with no write count (pi writes cacheWrite 0 there) of a model that read: "
                   "what each wrote is unknown, and its whole prompt is taken as what the next call may read")


#: The note of a file whose tool results carry their tool's own usage (:meth:`_Session._tool_usage`).
_TOOL_USAGE = ("{:,} tool result(s) carry the usage of model calls their tool made itself (later pi: a subagent or workflow "
               "run by the tool; pi's footer adds it to its totals): {:,} prompt and {:,} output tokens, ${:.4f} logged, not "
               "counted here (no call of this session's chain, and each may sum several calls: audit that agent's own "
               "session files for them)")


#: The notes of a file with tool results whose usage was not summed (:meth:`_Session._tool_usage`).
_TOOL_USAGE_COPIED = ("{:,} tool result(s) with usage of their own the same as one summed before (a fork's copy, or an "
                      "entry appended again): not summed again")
_TOOL_USAGE_BAD = ("{:,} tool result(s) whose own usage holds a malformed count: left out of the tool usage noted "
                   "(it is only noted, never counted)")


#: The note of a file whose calls were timed by their entries (:attr:`_Session.entry_timed`).
_ENTRY_TIMED = ("{:,} call(s) with no message.timestamp (pi before 0.6.0): timed by their entry's timestamp, when pi saved "
                "the reply (after the call returned), not when it sent the request")


#: The note of pi --mode json / rpc output whose calls ran before it named a thinking level
#: (:attr:`_Session.thinking_unknown`).
_THINKING_UNKNOWN = ("{:,} call(s) before pi {} output named a thinking level (it prints no starting level, only "
                     "thinking_level_changed events and rpc get_state responses): their level is unknown, read as thinking "
                     "off; a change after them is logged as from unknown")


def over_read(usage: dict) -> int:
    """How many tokens a call's ``cacheRead`` overran its prompt by: a provider counting reads in
    whole cache blocks can report more read than the prompt held, and its ``input_tokens``
    (prompt less reads) is then negative, which pi keeps as sent. Measured on a real OpenClaw
    home (2026-04, pi's ``anthropic-messages`` to Kimi Code, ``kimi-coding``): every read a
    multiple of 64 tokens, 46 of 2,209 calls with ``input`` -12 to -499, ``totalTokens`` still
    ``input + output + cacheRead``. Such a call read its whole prompt (``input + cacheRead``);
    0 for any other call (a negative ``input`` as large as the reads or beyond stays bad input: a
    prompt of no token is none)."""
    tokens_in, reads = usage.get("input"), usage.get("cacheRead")
    if type(tokens_in) is int and type(reads) is int and tokens_in < 0 < tokens_in + reads:
        return -tokens_in
    return 0


#: The note of a file with calls whose reads overran their prompt (:func:`over_read`).
_OVER_READ = ("{:,} call(s) whose cacheRead exceeds the prompt (usage.input negative, {:,} to {:,}: the provider "
              "counts reads in whole cache blocks): read as the whole prompt, input + cacheRead, read from cache")


def _usage(usage: dict, where: str, api: object = None, provider: object = None) -> Usage:
    """pi's usage: ``input`` excludes ``cacheRead`` and ``cacheWrite`` (of which ``cacheWrite1h``,
    in later pi, is the part written with a 1 h lifetime), but for the Gemini APIs
    of :data:`_INPUT_INCLUDES_READS`, where it includes ``cacheRead`` (unless the message's own
    ``totalTokens`` counts the reads beside ``input``, as a pi subtracting them would write). On an
    API of :data:`_NO_WRITE_COUNT` a ``cacheWrite`` of 0 leaves the writes unknown
    (:attr:`~prefixbench.simulator.usage.Usage.writes_reported`), but through a host running open
    models itself (``provider``: Ollama, LM Studio), which reports no cache use at all."""
    reads = count(usage.get("cacheRead"), where, "usage.cacheRead")
    over = over_read(usage)
    tokens_in = 0 if over else count(usage.get("input"), where, "usage.input")
    reads -= over  # (the whole prompt read: input + cacheRead; see over_read)
    output = count(usage.get("output"), where, "usage.output")
    if api in _INPUT_INCLUDES_READS and 0 < reads <= tokens_in and usage.get("totalTokens") != tokens_in + reads + output:
        tokens_in -= reads
    written = count(usage.get("cacheWrite"), where, "usage.cacheWrite")
    # Later pi (late 2026) writes Anthropic's 1 h writes apart: cacheWrite1h, a part of cacheWrite.
    hour = count(usage.get("cacheWrite1h"), where, "usage.cacheWrite1h")
    if hour > written:
        raise UserError(f"{where}: usage.cacheWrite1h ({hour}) exceeds usage.cacheWrite ({written}), which holds it")
    return Usage(cache_read=reads, cache_write_5m=written - hour, cache_write_1h=hour, uncached=tokens_in, output=output,
                 writes_reported=written > 0 or api not in _NO_WRITE_COUNT or self_hosted(str(provider or "")))


class _Session:
    """The requests of one session file, entry by entry."""

    def __init__(self, path: Path, seen: dict[str, str] | None = None) -> None:
        self.name = str(path)
        #: The calls counted in this audit (shared across files), by :func:`_call_key`, to their nodes.
        self.seen: dict[str, str] = {} if seen is None else seen
        #: The file a fork's header names as its source; the files that counted the calls this
        #: one holds too, how many of them each (in the order met).
        self.forked_from: str | None = None
        self.copied_from: dict[str, int] = {}
        #: The calls this file appends again after counting them (see :meth:`_copied`).
        self.recopied = 0
        self.out: list[TraceRequest] = []
        self.skipped: list[tuple[int, str]] = []
        self.thinking = "off"
        #: Whether the thinking level is known: named by the session's header or an entry or event
        #: (a session file's ``thinking_level_change``; in pi --mode json / rpc output, which prints
        #: no starting level, ``thinking_level_changed`` or a ``get_state`` response), and the calls
        #: of such output made before it was (their level unknown, read as ``thinking``'s default).
        self.thinking_known = False
        self.thinking_unknown = 0
        self.events: list[tuple[str, str]] = []
        self.blocks = 0
        #: The messages logged since the previous request (its response first), for locating
        #: breaks: where their lines start, their records made only when a break is located on
        #: them (:func:`_line_message`; see :class:`~prefixbench.workloads.logs.records.MessagePlaces`).
        self.pending: list[LoggedMessage | int] = []
        self.places = MessagePlaces(self.name, _line_message)
        self.chain_parent: str | None = None
        self.node_of_entry: dict[str, str | None] = {}
        self.cost = 0.0
        #: a call the audit prices that logs no cost, or a cost on a call it does not count (the
        #: two sums then not of the same calls: no cost check, :func:`~prefixbench.workloads.audit.core.cost_check_note`)
        self.cost_apart = False
        #: Entry id -> the node of the first request whose prompt ended at that entry.
        self.prompt_end: dict[str, str] = {}
        #: The latest request's provider, model and API (a summary's call names none).
        self.last_call: dict = {}
        #: The session headers met, and the latest one's id (pi --mode json output appended: one a run).
        self.headers = 0
        self.session_id: object = None
        #: OpenClaw's assistant messages that are no call of this chain, by kind (see :func:`_openclaw_entry`).
        self.openclaw: dict[str, int] = {}
        #: The calls timed by their entry's ``timestamp``, their message having none (pi before 0.6.0).
        self.entry_timed = 0
        #: How far each counted call's reads overran its prompt, where they did (see :func:`over_read`).
        self.over_read: list[int] = []
        #: A header's source file and time, until the entry after it says fork or fresh start.
        self.header_source: tuple[object, int | None] | None = None
        #: The tool results OpenClaw's latest pruning marker lists, as (key, mode).
        self.pruned_marks: set[tuple[str, str]] = set()
        #: Which output of pi the file is ("--mode json", "--mode rpc"; "" for a session file), and
        #: the first error it carries, with its line (a run that failed before any call).
        self.output = ""
        self.error: tuple[int, str] | None = None
        #: Tool results carrying their tool's own usage: how many, their prompt and output tokens,
        #: and their logged cost (see :meth:`_tool_usage`).
        self.tool_usage: tuple[int, int, int, float] = (0, 0, 0, 0.0)
        #: Tool results whose own usage was summed in an earlier file or entry (a fork's copy), and
        #: those whose usage held a malformed count: neither summed.
        self.tool_usage_copied = 0
        self.tool_usage_bad = 0
        #: Compaction entries no call of their session follows and none reports its summary's
        #: call, as (line, tokensBefore): no request to judge (see :func:`_unjudged_note`). The
        #: latest ones wait in ``compacted`` until a call follows them.
        self.compacted: list[tuple[int, object]] = []
        self.unjudged: list[tuple[int, object]] = []

    def entry(self, record: Record) -> None:
        value: dict = record.value  # type: ignore[assignment]
        kind = value.get("type")
        entry_id = value.get("id") if kind != "session" else None
        if self.header_source is not None and kind != "session":
            self._fork_or_fresh(value)
        if isinstance(kind, str) and (kind == "response" or kind in _OUTPUT_EVENTS):
            self._output(record.line, value)
        parent_id = value.get("parentId")
        if isinstance(parent_id, str) and parent_id in self.node_of_entry:
            # Tree sessions (newer pi): the prompt extends the request its branch descends from,
            # or equals the prompt an earlier request sent from the same entry (a retry, a branch).
            self.chain_parent = self.prompt_end.get(parent_id, self.node_of_entry[parent_id])
        match kind:
            case "session":
                session_id = value.get("id")
                if self.headers and session_id != self.session_id:
                    # Another session's header: pi --mode json runs appended to one file (a
                    # session file has one). Its calls are no continuation of the one before.
                    self.chain_parent, self.pending = None, []
                    self.unjudged += self.compacted
                    self.compacted = []
                self.headers += 1
                self.session_id = session_id
                self.thinking_known = isinstance(value.get("thinkingLevel"), str)
                if isinstance(value.get("thinkingLevel"), str):
                    self.thinking = value["thinkingLevel"]
                source = value.get("parentSession") or value.get("branchedFrom")
                # Whether it is a fork is known at the next entry (see _fork_or_fresh).
                self.header_source = (source, _time_ms(value)) if source else None
            case "model_change":
                self.events.append(("model_change", f"{value.get('provider')}/{value.get('modelId')}"))
            case "thinking_level_change":
                level = str(value.get("thinkingLevel"))
                self.events.append(("thinking_change", f"{self.thinking} -> {level}"))
                self.thinking, self.thinking_known = level, True
            case "thinking_level_changed" if isinstance(value.get("level"), str):
                # pi --mode json / rpc output (0.73: AgentSession.setThinkingLevel emits it on a
                # change): the session file's thinking_level_change, whose level is ``level``.
                level = value["level"]
                self.events.append(("thinking_change", f"{self.thinking if self.thinking_known else 'unknown'} -> {level}"))
                self.thinking, self.thinking_known = level, True
            case "response" if value.get("command") == "get_state" and isinstance(as_dict(value.get("data")).get("thinkingLevel"), str):
                # pi --mode rpc: the state a client asked for names the current level (no change).
                self.thinking, self.thinking_known = value["data"]["thinkingLevel"], True
            case "compaction":
                calls = len(self.out)
                copied = self._side_call(record, value, "summary")
                # No summary call counted: only a call after it shows it. One whose summary call
                # is a copy (a fork's of its source's) is the source's compaction, judged there.
                if len(self.out) == calls and not copied:
                    self.compacted.append((record.line, value.get("tokensBefore")))
                self.events.append(("compaction", f"{value.get('tokensBefore', '?')} tokens before"))
                self.chain_parent = None
                # The new context opens with the summary, wrapped (pi's compactionSummary message).
                self.pending = [self.places.keep(record)]
            case "branch_summary":
                self._side_call(record, value, "summary")
                summary = value.get("summary")
                if isinstance(summary, str) and summary:
                    # Sent as a user message where the branch resumes (pi's branchSummary message).
                    self.blocks += 1
                    self.pending.append(self.places.keep(record))
            case "usage":
                self._side_call(record, value, str(value.get("kind")))
            case "custom_message":
                # An extension's message, sent to the model (pi's convertToLlm): a user message of
                # its content, shown in the TUI or not (display).
                self.blocks += 1
                self.pending.append(self.places.keep(record))
            case "auto_compaction_end" | "compaction_end" if (result := _output_compaction(value)) is not None:
                # pi --mode json / rpc output: a compaction pi did between two calls. The output
                # prints no summary call; the new context opens with the summary, wrapped.
                self.compacted.append((record.line, result.get("tokensBefore")))
                self.events.append(("compaction", f"{result.get('tokensBefore', '?')} tokens before"))
                self.chain_parent = None
                self.pending = [self.places.keep(record)]
            case "custom" if value.get("customType") == _OPENCLAW_PRUNE:
                self._pruned(value.get("data"))
            case "message" | "message_end":  # message_end: pi --mode json / rpc's final copy of a message
                self._message(record, as_dict(value.get("message")), parent_id, isinstance(entry_id, str))
        if isinstance(entry_id, str):
            self.node_of_entry[entry_id] = self.chain_parent

    def _output(self, line: int, value: dict) -> None:
        """A record of pi's --mode json / rpc output: which mode, and the first error it carries (a
        command's failed response, a failed call's ``errorMessage``, the retries' ``finalError``)."""
        if value.get("type") == "response":
            self.output = "--mode rpc"
        self.output = self.output or "--mode json"
        message = as_dict(value.get("message"))
        error = (value.get("error") if value.get("type") == "response" and value.get("success") is False
                 else message.get("errorMessage") if message.get("role") == "assistant" and message.get("stopReason") in ("error", "aborted")
                 else value.get("finalError") if value.get("type") == "auto_retry_end" and value.get("success") is False
                 else None)
        if self.error is None and isinstance(error, str) and error.strip():
            text = " ".join(error.split())
            self.error = (line, text if len(text) <= _ERROR_CHARS else text[:_ERROR_CHARS] + "...")

    def no_call(self) -> str | None:
        """Why pi's --mode json / rpc output holding no call is refused (one line), or None: a
        session file, or output holding one."""
        if not self.output or self.out or self.copied_from or self.recopied:
            return None
        line, said = self.error if self.error is not None else (1, "")
        said = f" (its error: {said})" if said else ""
        return (f"{self.name}:{line}: pi {self.output} output holding no model call{said}: nothing to audit; a run that "
                "reaches the model prints each call's message_end with its usage")

    def _fork_or_fresh(self, first: dict) -> None:
        """A header naming another session file (``parentSession``, earlier ``branchedFrom``) is a
        fork only when the file holds a copy of that session's history. pi's and OpenClaw's
        copies (``createBranchedSession``, ``forkFrom``, OpenClaw's ``forkSessionFromParentRuntime``)
        write the source's entries as they are, each with its own time, earlier than the new
        header's; a session started afresh with the name only (pi's ``newSession({parentSession})``,
        an OpenClaw subagent of ``context: "isolated"``, a fork of a parent with no entry) writes
        its first entry after its header. Times that cannot be compared read as a fork."""
        source, header_ms = self.header_source or (None, None)
        self.header_source = None
        first_ms = _time_ms(first)
        if header_ms is not None and first_ms is not None and first_ms >= header_ms:
            return  # a fresh session: its first call is a cold start, not a resumed history
        self.events.append(("fork", "session branched from another session file"))
        self.forked_from = source if isinstance(source, str) else self.forked_from

    def _pruned(self, data: object) -> None:
        """OpenClaw's context pruning (``contextPruning.mode: "cache-ttl"``): its marker lists every
        tool result whose prompt copy is trimmed (``soft``) or cleared (``hard``) so far; one not
        listed before is rewritten in place in the prompts sent from now on, a compaction event
        before the next call, which starts a new chain (as OpenCode's pruned tool outputs do).

        Later OpenClaw writes the full list (a checkpoint) now and then and, between, the compact
        form ``cacheTtlDelta.prunedToolResults: {set, remove}``: the results marked anew or in
        another mode, and the keys no longer marked, since the marker before (its
        ``prepareCacheTtlCheckpoint``). A delta that is not of that shape changes nothing."""
        if not isinstance(data, dict):
            return
        delta = data.get("cacheTtlDelta")
        if isinstance(delta, dict):
            change = delta.get("prunedToolResults")
            if not isinstance(change, dict) or not isinstance(change.get("set"), list) or not isinstance(change.get("remove"), list):
                return
            marks = _marks(change["set"])
            gone = {str(key) for key in change["remove"]} | {key for key, _ in marks}
            marks |= {mark for mark in self.pruned_marks if mark[0] not in gone}
        else:
            pruned = data.get("prunedToolResults")
            if not isinstance(pruned, list):
                return  # (earlier OpenClaw's marker names only the provider and model: the cache was touched)
            marks = _marks(pruned)
        new = marks - self.pruned_marks
        self.pruned_marks = marks
        if new:
            self.events.append(("compaction", f"OpenClaw pruned {len(new)} tool result(s) in place (context pruning, cache-ttl)"))
            self.chain_parent = None

    def _side_call(self, record: Record, value: dict, kind: str) -> bool:
        """The call an entry that is no message of the conversation reports in its ``usage``
        (see the module doc); nothing when it has none. True where the entry's call is a copy of
        one counted already (:meth:`_copied`): it is logged, yet not counted here."""
        usage = value.get("usage")
        if not isinstance(usage, dict):
            return False
        where = f"{self.name}:{record.line}"
        call = {**self.last_call, **{k: value[k] for k in ("provider", "model") if isinstance(value.get(k), str)}}
        # The API decides what a cacheWrite of 0 says, as on the main calls (:data:`_NO_WRITE_COUNT`):
        # the entry's own, else the latest call's where the entry names no other provider.
        api = value.get("api") if isinstance(value.get("api"), str) else (
            self.last_call.get("api") if call.get("provider") == self.last_call.get("provider") else None)
        reported = _usage(usage, where, api, call.get("provider"))
        cost = usage.get("cost")
        spent = logged_cost(cost.get("total")) if isinstance(cost, dict) else 0.0
        if reported.is_empty:
            self.cost += spent
            self.cost_apart |= spent > 0
            self.skipped.append((record.line, f"{kind} call with no usage"))
            return False
        sent = parse_time_ms(value.get("timestamp"), where)
        node = f"pi:{self.name}#{record.line}" + (f".{record.part}" if record.part else "")
        key = _call_key(kind, value.get("timestamp"), value, usage)
        if self._copied(record, key, link=False, entry=isinstance(value.get("id"), str) and value.get("timestamp") is not None):  # (a side call is no step of the conversation)
            return True
        self.cost += spent
        self.cost_apart |= spent <= 0
        if over_read(usage):
            self.over_read.append(over_read(usage))
        self.seen.setdefault(key, node)
        warm, summary = kind == _CACHE_WARM, kind == "summary"
        provider = str(call.get("provider") or UNKNOWN.name)
        model = zen_model(provider, str(call.get("model") or NO_MODEL))
        # A warm call's prompt is the latest request's; a summary's and any other's are their own.
        head = f"pi:{self.name}:{provider}:{model}" if warm else f"pi:{self.name}:{kind}:{provider}:{model}"
        self.out.append(
            TraceRequest(
                file=self.name,
                line=record.line,
                path=record.path,
                lane="main" if warm else kind,
                lane_kind="main" if warm else "compaction" if summary else "side",
                seq=len(self.out),
                sent_ms=sent,
                ready_ms=None,
                provider=_provider(call),
                upstream=_host(call),
                service=_service(call),
                model=model,
                envelope=(("thinking", "off" if self.thinking == "off" else "on"),),
                usage=reported,
                prefix=Prefix(head, node, self.chain_parent if warm else None, 1,
                              replays_output=warm and _replays_output(call)),
                source_format=NAME,
                compaction_call=summary,
                api=api if isinstance(api, str) else "",
            )
        )
        return False

    def _copied(self, record: Record, key: str, link: bool = True, entry: bool = False) -> bool:
        """Whether the call is one another file of the audit counted: a fork (``/fork``,
        ``--fork``; ``parentSession``, earlier ``branchedFrom``) copies its source's entries as they
        are. It is listed, not counted again, and the fork's calls after it extend it. Or one this
        file counted at an earlier entry (``entry``: a tree entry, with an id, whose key holds a time;
        ``pi --mode json`` output has no ids): OpenClaw's
        ``truncateOversizedToolResultsInSession`` branches from before an oversized tool result
        and appends the entries after it again, that result truncated and each assistant message
        as it was (time, usage), under new ids; the calls after the copy extend it."""
        node = self.seen.get(key)
        if node is None:
            return False
        if node.startswith(f"pi:{self.name}#"):
            if not entry:
                return False
            self.recopied += 1
            self.skipped.append((record.line, "call appended again in this file (OpenClaw rewrote its branch): counted at its first entry"))
            if link:
                self.chain_parent = node
                self.events = []
                self.blocks = 0
            return True
        counted = node[len("pi:"):].rsplit("#", 1)[0]
        self.copied_from[counted] = self.copied_from.get(counted, 0) + 1
        self.skipped.append((record.line, "call copied from the session this one was forked from: counted in that session's file"
                             if self.is_source(counted) else f"the same call as {counted}'s: counted in that file"))
        if link:
            self.chain_parent = node
            self.events = [event for event in self.events if event[0] == "fork"]
            self.blocks = 0
        return True

    def is_source(self, counted: str) -> bool:
        """Whether this session's header names the file ``counted`` as the one it was forked from
        (its path, its name, or the session id its name ends with)."""
        source = self.forked_from
        if source is None:
            return False
        stem = Path(counted).stem
        return source == counted or Path(source).name == Path(counted).name or stem == source or stem.endswith(f"_{source}")

    def _message(self, record: Record, message: dict, parent_id: object, tree: bool = False) -> None:
        role = message.get("role")
        if role == "bashExecution":
            # A !cmd the user ran: sent as a user message of its text, unless run with !! (see _bash_text).
            if message.get("excludeFromContext") is not True:
                self.blocks += 1
                self.pending.append(self.places.keep(record))
            return
        self.blocks += 1
        if role == "user":
            self.events.append(("user_turn", ""))
        if role == "toolResult" and isinstance(message.get("usage"), dict):
            self._tool_usage(record, message)
        if role != "assistant":
            self.pending.append(self.places.keep(record))
            return
        usage = message.get("usage")
        if not isinstance(usage, dict):
            self.skipped.append((record.line, "assistant message without usage"))
            return
        kind = _openclaw_entry(message)
        if kind is not None:
            # No call of this chain: the reply enters the context the next call sends all the same.
            self.openclaw[kind] = self.openclaw.get(kind, 0) + 1
            self.skipped.append((record.line, _OPENCLAW_SKIPS[kind]))
            self.pending.append(self.places.keep(record))
            return
        where = f"{self.name}:{record.line}"
        reported = _usage(usage, where, message.get("api"), message.get("provider"))
        cost = usage.get("cost")
        spent = logged_cost(cost.get("total")) if isinstance(cost, dict) else 0.0
        if reported.is_empty:
            self.cost += spent
            self.cost_apart |= spent > 0
            self.skipped.append((record.line, f"{message.get('stopReason', 'aborted')} call with no usage"))
            return
        key = _call_key("message", message.get("timestamp"), message, usage)
        if self._copied(record, key, entry=tree and message.get("timestamp") is not None):
            self.last_call = {k: message.get(k) for k in ("provider", "model", "api")}
            self.pending = [self.places.keep(record)]
            if isinstance(parent_id, str) and self.chain_parent is not None:
                self.prompt_end.setdefault(parent_id, self.chain_parent)
            return
        self.cost += spent
        self.cost_apart |= spent <= 0
        if over_read(usage):
            self.over_read.append(over_read(usage))
        sent = message.get("timestamp")
        entry_time = as_dict(record.value).get("timestamp")
        if sent is None and entry_time is not None:
            # pi before 0.6.0 (pi-mono's "Add timestamp to messages", 2025-10-26) gave a message
            # no time of its own; its entry's is when pi saved the reply, after the call returned.
            sent = entry_time
            self.entry_timed += 1
        node = self._add(record, message, reported, parse_time_ms(sent, where))
        self.seen.setdefault(key, node)
        self.last_call = {k: message.get(k) for k in ("provider", "model", "api")}
        self.pending = [self.places.keep(record)]
        if isinstance(parent_id, str):
            self.prompt_end.setdefault(parent_id, node)

    def _tool_usage(self, record: Record, message: dict) -> None:
        """A tool result's own ``usage`` (later pi: the model calls the tool made itself, a
        subagent or a workflow; "not part of main LLM context accounting"): no call of this chain,
        and perhaps the sum of several, so not counted; its tokens and cost are summed for the note
        (:data:`_TOOL_USAGE`), pi's footer adding them to its totals. Read as a call's usage is
        (the message's ``api`` and ``provider``, where it names them); once in the audit, a fork's
        copy of the result (its ``toolCallId``, time and usage) listed, not summed again; a
        malformed count only noted (:attr:`tool_usage_bad`), the figure being no more than a note's."""
        usage: dict = message["usage"]
        where = f"{self.name}:{record.line}"
        try:
            reported = _usage(usage, where, message.get("api"), message.get("provider"))
        except UserError:
            self.tool_usage_bad += 1
            self.skipped.append((record.line, "tool result's own usage malformed: left out of the note's sums"))
            return
        if reported.is_empty:
            return
        key = json.dumps(["toolResult", message.get("toolCallId"), message.get("timestamp"), usage], sort_keys=True,
                         default=str)
        if self.seen.setdefault(key, f"pi:{self.name}#{record.line}") != f"pi:{self.name}#{record.line}":
            self.tool_usage_copied += 1
            return
        cost = usage.get("cost")
        results, prompt, output, spent = self.tool_usage
        self.tool_usage = (results + 1, prompt + reported.prompt, output + reported.output,
                           spent + (logged_cost(cost.get("total")) if isinstance(cost, dict) else 0.0))

    def _add(self, record: Record, message: dict, usage: Usage, sent: int | None) -> str:
        """Append one request; its node."""
        provider = str(message.get("provider") or UNKNOWN.name)
        asked = str(message.get("model") or NO_MODEL)
        # OpenCode Zen prices a call by its own name of the model asked for (its free models, $0);
        # elsewhere the model that answered is the call's (:func:`_served_model`).
        zen = zen_model(provider, asked)
        model = zen if zen != asked else (_served_model(message) or NO_MODEL)
        node = f"pi:{self.name}#{record.line}" + (f".{record.part}" if record.part else "")
        self.thinking_unknown += bool(self.output) and not self.thinking_known
        self.out.append(
            TraceRequest(
                file=self.name,
                line=record.line,
                path=record.path,
                lane="main",
                lane_kind="main",
                seq=len(self.out),
                sent_ms=sent,
                ready_ms=None,
                provider=_provider(message),
                upstream=_host(message),
                service=_service(message),
                model=model,
                # Only turning thinking on or off starts a new family:
                # budget changes kept the cache in the shared pi logs.
                envelope=(("thinking", "off" if self.thinking == "off" else "on"),),
                usage=usage,
                prefix=Prefix(f"pi:{self.name}:{provider}:{model}", node, self.chain_parent, max(1, self.blocks),
                              replays_output=_replays_output(message)),
                events=tuple(self.events),
                source_format=NAME,
                messages=self.places.messages(self.pending),
                api=message["api"] if isinstance(message.get("api"), str) else "",
            )
        )
        self.chain_parent = node
        self.events = []
        self.blocks = 0
        self.compacted = []
        return node


#: OpenClaw (github.com/openclaw/openclaw, formerly Clawdbot and Moltbot) writes pi sessions with
#: assistant messages of its own that are no call of the session's chain: a CLI backend's turn
#: (``api: "cli"``, provider ``claude-cli``, ``codex-cli``...: the CLI ran its own calls, and the
#: message's usage sums them, "cumulative" in OpenClaw's own tests) and a transcript-only message
#: (its ``isTranscriptOnlyOpenclawAssistant``: model ``delivery-mirror``, a reply sent to a channel,
#: or ``gateway-injected``, a message the gateway's ``chat.inject`` wrote; provider ``openclaw``,
#: ``clawdbot`` before; also ``api: "openclaw-transcript"`` and the ``openclawDeliveryMirror`` and
#: ``openclawMessageToolMirror`` keys), copied into the transcript with zero usage.
_OPENCLAW_SKIPS = {
    "cli": "OpenClaw CLI-backend turn (api cli): its usage sums the CLI's own calls, no one call's",
    "transcript-only": "OpenClaw transcript-only message (a delivery mirror or a gateway injection): no model call",
}
_OPENCLAW_NOTES = {
    "cli": "OpenClaw CLI-backend turn(s) (api cli) not counted: each one's usage sums the calls the CLI made "
    "(audit that CLI's own session logs for them)",
    "transcript-only": "OpenClaw transcript-only message(s) not counted: delivery mirrors and gateway injections, "
    "written into the transcript with no model call",
}
#: The ``customType`` of OpenClaw's context-pruning marker (:meth:`_Session._pruned`).
_OPENCLAW_PRUNE = "openclaw.cache-ttl"
_TRANSCRIPT_ONLY_MODELS = ("delivery-mirror", "gateway-injected")
_TRANSCRIPT_ONLY_KEYS = ("openclawDeliveryMirror", "openclawMessageToolMirror")


def _openclaw_entry(message: dict) -> str | None:
    """Which of OpenClaw's assistant messages that are no call of the chain ``message`` is
    (a key of :data:`_OPENCLAW_SKIPS`), or None for a call."""
    api = message.get("api")
    if api == "cli":
        return "cli"
    if (message.get("model") in _TRANSCRIPT_ONLY_MODELS or api == "openclaw-transcript"
            or any(isinstance(message.get(key), dict) for key in _TRANSCRIPT_ONLY_KEYS)):
        return "transcript-only"
    return None


def _line_message(value: object, path: str) -> LoggedMessage:
    """The record of the message an entry that sends one holds (the format's
    ``message_of_line``: made as the entry is read, or from its line read again)."""
    kind = value.get("type") if isinstance(value, dict) else None
    if kind == "message" or kind == "message_end":  # (most entries: tested first)
        message = as_dict(value.get("message"))  # type: ignore[union-attr]
        role = message.get("role")
        if role == "assistant":
            return make_message("assistant", message.get("content"))
        if role == "bashExecution":
            # A !cmd the user ran: sent as a user message of its text (see _bash_text).
            return make_message("user", _bash_text(message))
        marks = ("file-read",) if str(message.get("toolName") or "").lower() in READ_TOOLS else ()
        return make_message(str(role), message.get("content"), marks)
    if kind == "compaction":
        # The new context opens with the summary, wrapped (pi's compactionSummary message).
        return make_message("user", _summary_text(value.get("summary"), _COMPACTION_WRAP))  # type: ignore[union-attr]
    if isinstance(value, dict) and (result := _output_compaction(value)) is not None:
        # The same in pi --mode json / rpc output, the summary in the compaction's result.
        return make_message("user", _summary_text(result.get("summary"), _COMPACTION_WRAP))
    if kind == "branch_summary":
        # Sent as a user message where the branch resumes (pi's branchSummary message).
        return make_message("user", _summary_text(value.get("summary"), _BRANCH_WRAP))  # type: ignore[union-attr]
    if kind == "custom_message":
        # An extension's message, sent to the model (pi's convertToLlm): a user message of its content.
        return make_message("user", value.get("content"))  # type: ignore[union-attr]
    raise UserError(f"{path}: changed while it was audited (a line that held a message holds none now)")


def _marks(items: list) -> set[tuple[str, str]]:
    """The (key, mode) of each tool result an OpenClaw pruning marker lists."""
    return {(str(item.get("key")), str(item.get("mode"))) for item in items if isinstance(item, dict)}


#: The words pi wraps a summary in when it sends it as a user message (pi-mono's ``messages.ts``:
#: ``COMPACTION_SUMMARY_PREFIX`` and ``_SUFFIX``, the same since compaction came in, 2025-12-04;
#: ``BRANCH_SUMMARY_PREFIX`` and ``_SUFFIX``, since branch summaries, 2025-12-28).
_COMPACTION_WRAP = ("The conversation history before this point was compacted into the following summary:\n\n<summary>\n",
                    "\n</summary>")
_BRANCH_WRAP = ("The following is a summary of a branch that this conversation came back from:\n\n<summary>\n", "</summary>")


def _summary_text(summary: object, wrap: tuple[str, str]) -> object:
    """A summary as pi sends it, inside ``wrap``; anything not a string as it is."""
    return f"{wrap[0]}{summary}{wrap[1]}" if isinstance(summary, str) else summary


def _bash_text(message: dict) -> str:
    """The user message pi sends for a ``bashExecution`` message, a ``!cmd`` the user ran
    (pi-mono's ``bashExecutionToText``, the same from bash mode's start, 2025-12, to 2026-03): the
    command, its output fenced, then whether it was cancelled or failed and where a truncated
    output is kept in full. One run with ``!!`` (``excludeFromContext``) is not sent at all."""
    output = message.get("output")
    text = f"Ran `{message.get('command')}`\n" + (f"```\n{output}\n```" if isinstance(output, str) and output else "(no output)")
    code = message.get("exitCode")
    if message.get("cancelled") is True:
        text += "\n\n(command cancelled)"
    elif isinstance(code, int) and not isinstance(code, bool) and code != 0:
        text += f"\n\nCommand exited with code {code}"
    full = message.get("fullOutputPath")
    if message.get("truncated") is True and isinstance(full, str) and full:
        text += f"\n\n[Output truncated. Full output: {full}]"
    return text


def _time_ms(value: dict) -> int | None:
    """An entry's own time (its ``timestamp``, else its message's) in epoch ms, or None when it has
    none that reads as a time."""
    for holder in (value, as_dict(value.get("message"))):
        try:
            moment = parse_time_ms(holder.get("timestamp"), "")
        except UserError:
            moment = None
        if moment is not None:
            return moment
    return None


def _call_key(kind: str, timestamp: object, holder: dict, usage: dict) -> str:
    """A call's identity, the same in a fork's copy of it: its kind, time, model and usage as logged."""
    return json.dumps([kind, timestamp, holder.get("provider"), holder.get("model"), holder.get("responseId"), usage],
                      sort_keys=True, default=str)


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A session's requests; see the module doc."""
    session = _Session(path, ctx.pi_calls)
    seen_any = False
    for record in objects(path, records, " (a session entry)"):
        seen_any = True
        session.entry(record)
    if not seen_any:
        raise UserError(f"{session.name}:1: empty file, no session entries")
    refused = session.no_call()
    if refused is not None:
        raise UserError(refused)
    notes = (
        (
            "pi's system prompt and tools are not in a session file (pi rebuilds them, with the current time, "
            "on every start; restarts are not logged)"
        ),
    )
    for counted, copied in session.copied_from.items():
        if session.is_source(counted):
            notes += (
                f"{copied} call(s) copied from the session this one was forked from (its file is in this audit): "
                "counted there, not here; the calls after them extend them",
            )
        else:
            notes += (
                f"{copied} call(s) the same as {counted}'s (one session forked from the other, or both from a third): "
                "counted there, not here; the calls after them extend them",
            )
    if session.recopied:
        notes += (
            f"{session.recopied} call(s) appended again in this file (OpenClaw rewrote its branch, a tool result "
            "truncated): counted at their first entry; the calls after them extend them",
        )
    for kind, skipped in sorted(session.openclaw.items()):
        notes += (f"{skipped} {_OPENCLAW_NOTES[kind]}",)
    if session.entry_timed:
        notes += (_ENTRY_TIMED.format(session.entry_timed),)
    if session.over_read:
        notes += (_OVER_READ.format(len(session.over_read), -min(session.over_read), -max(session.over_read)),)
    if session.thinking_unknown:
        notes += (_THINKING_UNKNOWN.format(session.thinking_unknown, session.output),)
    if session.cost:
        notes += (f"pi's own cost fields sum to ${session.cost:.4f} (a check on the dollars here)",)
    notes += _tool_usage_notes([_tool_counts(session)])
    notes += _unjudged_note([(f"line {line}", before) for line, before in session.unjudged + session.compacted])
    out, unknown = writes_left_as_logged(session.out)
    if unknown:
        notes += (_WRITES_UNKNOWN.format(unknown),)
    return out, FileSummary(session.name, NAME, len(out), tuple(session.skipped), notes, logged_cost=None if session.cost_apart else session.cost or None)


def _unjudged_note(compactions: list[tuple[str, object]]) -> tuple[str, ...]:
    """The note on compactions after their session's last call that log no summary call, as
    ``(where, tokensBefore)``: the file records them, yet the audit has no request of theirs to
    judge (the compaction table lists a compaction by its summary call or the call after it)."""
    if not compactions:
        return ()
    places = "; ".join(where + (f", {before:,} tokens before" if isinstance(before, int) and not isinstance(before, bool) else "")
                       for where, before in compactions)
    return (f"{len(compactions)} compaction(s) logged after their session's last call, with no summary call logged "
            f"({places}): not in the compaction table, no request of theirs to judge",)


#: What a session read of its tool results' own usage: :attr:`_Session.tool_usage`, then how many
#: were copies and how many malformed (:meth:`_Session._tool_usage`).
_ToolCounts = tuple[tuple[int, int, int, float], int, int]


def _tool_counts(session: _Session) -> _ToolCounts:
    return session.tool_usage, session.tool_usage_copied, session.tool_usage_bad


def _tool_usage_notes(counts: Iterable[_ToolCounts]) -> tuple[str, ...]:
    """The notes of the tool results whose own usage sessions read (:func:`_tool_counts`), summed
    over them: a session file's, or every session of an OpenClaw database (whose rows are the lines
    its files held, tool results with their usage among them)."""
    results = prompt = output = copied = bad = 0
    spent = 0.0
    for (num, tokens_in, tokens_out, cost), num_copied, num_bad in counts:
        results, prompt, output, spent = results + num, prompt + tokens_in, output + tokens_out, spent + cost
        copied += num_copied
        bad += num_bad
    notes: tuple[str, ...] = ()
    if results:
        notes += (_TOOL_USAGE.format(results, prompt, output, spent),)
    if copied:
        notes += (_TOOL_USAGE_COPIED.format(copied),)
    if bad:
        notes += (_TOOL_USAGE_BAD.format(bad),)
    return notes


def _is_db(path: Path) -> bool:
    """Whether ``path`` is a database of pi sessions: OpenClaw's agent database, or pi's own store."""
    return openclaw_db.is_openclaw_db(path) or pi_db.is_pi_db(path)


def read_db(path: Path, ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """The requests of every session in an OpenClaw agent database (:mod:`.openclaw_db`) or a pi
    session store (:mod:`.pi_db`), each read as its session file is, a lane of its own named by
    its id (a row's ``seq`` its line)."""
    openclaw = openclaw_db.is_openclaw_db(path)
    out: list[TraceRequest] = []
    skipped: list[tuple[int, str]] = []
    num_skipped: dict[str, int] = {}
    tools: list[_ToolCounts] = []  # (each session's counts only: a session is let go once read)
    unjudged: list[tuple[str, object]] = []
    overrun: list[int] = []
    for session_id, entries in (openclaw_db.sessions(path) if openclaw else pi_db.sessions(path)):
        session = _Session(Path(f"{path}#{session_id}"), ctx.pi_calls)
        for seq, value in entries:
            session.entry(Record(seq, value))
        for r in session.out:
            lane = session_id if r.lane == "main" else f"{session_id}/{r.lane}"
            out.append(replace(r, file=str(path), lane=lane, seq=len(out)))
        skipped.extend(session.skipped)
        for kind, num in session.openclaw.items():
            num_skipped[kind] = num_skipped.get(kind, 0) + num
        tools.append(_tool_counts(session))
        overrun += session.over_read
        unjudged += [(f"session {session_id} entry {seq}", before) for seq, before in session.unjudged + session.compacted]
    notes = tuple(f"{num} {_OPENCLAW_NOTES[kind]}" for kind, num in sorted(num_skipped.items()))
    notes += _tool_usage_notes(tools)
    notes += _unjudged_note(unjudged)
    if overrun:
        notes += (_OVER_READ.format(len(overrun), -min(overrun), -max(overrun)),)
    out, unknown = writes_left_as_logged(out)
    if unknown:
        notes += (_WRITES_UNKNOWN.format(unknown),)
    if openclaw:
        notes += (f"an OpenClaw agent database: {len(tools):,} session(s) read from its {openclaw_db.TABLE} (opened read-only)",)
    else:
        notes += (f"a pi session store: {len(tools):,} session(s) read from its {pi_db.TABLE} (opened read-only)",)
    return out, FileSummary(str(path), NAME, len(out), tuple(sorted(skipped)), notes)


FORMAT = LogFormat(
    name=NAME,
    noun="pi session",
    nouns="pi sessions",
    description="pi coding-agent session files (a session header, then message and event entries), pi --mode json output, "
    "OpenClaw's agent database (openclaw-agent.sqlite: its transcript_events) and pi's own session store (sessions.sqlite: its entries)",
    detect=detect,
    read=read,
    detect_file=_is_db,
    read_file=read_db,
    file_suffixes=openclaw_db.SUFFIXES,
    usage="additive",
    versions=(
        "linear sessions: entries in file order",
        "tree sessions (newer pi): entries linked by id / parentId, branches and retries from one entry",
        "sessions branched from another file (branchedFrom / parentSession): the source's calls copied into the fork "
        "counted once, by the source's file when both are in the audit; a header naming a parent over entries written "
        "after it (pi's newSession, an OpenClaw subagent of context isolated) is a fresh start, no fork",
        "pi before 0.6.0 (2025-10): assistant messages with no timestamp of their own, timed by their entry's (when pi "
        "saved the reply)",
        "Gemini through the google-generative-ai / google-vertex APIs: input includes cacheRead (pi to 0.62), excludes it "
        "from 0.63 (totalTokens then counts the reads beside input)",
        "later pi (earendil-works/pi, late 2026): usage.cacheWrite1h (Anthropic's 1 h writes, a part of cacheWrite), "
        "usage.reasoning (a part of output)",
        "earendil-works/pi: usage entries (its cache warmer's kind cache_warm: the latest request re-sent), and the "
        "usage of compaction and branch_summary entries (the summary's call)",
        "pi --mode json / --mode rpc output: the session header, then events; each message_end is one message; a "
        "compaction's auto_compaction_end (0.58) or compaction_end (0.73) result a compaction; 0.73's "
        "thinking_level_changed a thinking level change (the starting level is not printed: noted as unknown)",
        "pi's bash mode (2025-12 on): a bashExecution message, a !cmd the user ran, sent as a user message of its "
        "command and output; one run with !! (excludeFromContext, 2026-01 on) is not sent",
        "branch summaries (2025-12-28 on): a branch_summary entry's summary sent as a user message, wrapped; a "
        "compaction's summary wrapped likewise (2025-12-04 on)",
        "later OpenClaw's agent database (agents/<agentId>/agent/openclaw-agent.sqlite): transcript_events rows, "
        "each session's entries as its file held them",
        "later pi's SQLite session store (earendil-works/pi, late 2026: sessions.sqlite): each session's entries rows "
        "(payload plus its id, parent_id, type and timestamp columns) read as its file's entries, after a header from its "
        "sessions row (a fork naming the session it was forked from)",
        "OpenClaw (formerly Clawdbot, Moltbot) transcripts: a CLI backend's turn (api cli: the CLI's calls summed), "
        "a delivery mirror and a gateway injection (models delivery-mirror, gateway-injected) are no calls; its "
        "context pruning's openclaw.cache-ttl marker, a tool result newly pruned, is a compaction (its full list, "
        "or later OpenClaw's compact form between full ones: cacheTtlDelta, the changes since the marker before)",
    ),
    message_of_line=_line_message,
    head_changes="pi's system prompt ends with the current date (before pi 0.58.0, CHANGELOG #2131: the date and "
    "time; buildSystemPrompt in pi-mono's packages/coding-agent) and holds AGENTS.md / CLAUDE.md, so a prompt "
    "built on another day (before 0.58.0: at another minute) or after an edit of those files differs there",
)
