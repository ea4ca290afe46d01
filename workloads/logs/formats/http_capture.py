"""HTTP captures: claude-trace style ``{request, response}`` lines.

Anthropic Messages (JSON body or SSE ``message_start`` / ``message_delta``, via
:mod:`prefixbench.workloads.logs.anthropic_capture`), DeepSeek's Anthropic-compatible endpoint
(``input_tokens`` excludes reads), OpenAI Responses (``input_tokens`` INCLUDES
``input_tokens_details.cached_tokens``) and chat completions, AWS Bedrock's Converse,
ConverseStream, InvokeModel and InvokeModelWithResponseStream (the model is in the URL; the
answer, JSON or an event stream, is read by :mod:`prefixbench.workloads.logs.bedrock_wire`; a
Converse body (:mod:`prefixbench.workloads.logs.converse_body`) and an InvokeModel body in
Anthropic's Messages shape are replayed, Nova's own InvokeModel body is not and the chain model
predicts its reads), and Google's own Gemini API and Vertex AI (``:generateContent`` /
``:streamGenerateContent``, and the explicit caches it creates: :mod:`.gemini_wire`), Cohere's v2
chat (:func:`_cohere_usage`) and Ollama's own API (:func:`_ollama_usage`). A call
that was not served (HTTP 4xx/5xx, or recorded by ``prefixbench proxy`` with the upstream's error
in place of a response), that is not a model call, or whose response has no usage is skipped
and listed; a capture none of whose calls was answered says so in a note naming the errors. A Messages response's ``usage.iterations`` is read as Claude Code's
transcripts read it (:mod:`.claude_code`): each server-side ``compaction`` sampling is a compaction
call before the response's, each ``advisor_message`` a call of the advisor model in an ``advisor``
lane.

A local proxy's records of the llm-path kind (github.com/wang0618/llm-path, once llm-trace)
keep no envelope: ``request`` is the body itself, ``response`` the JSON answer or ``{stream,
sse_lines}``, beside ``timestamp`` (the request's arrival), ``duration_ms`` and ``error``. With
no URL, the provider is the one the answer's model names (the served model, which may differ
from the one asked for), else unknown; a Messages-shaped answer of an unknown server is read
as the Messages API writes usage (input excludes reads). Such a call, and one whose URL names
no provider or another than its model's (a local proxy), is marked ``provider_by_model``: the
audit states the assumption and ``--assume-provider`` corrects it
(:mod:`prefixbench.workloads.audit.assume_provider`). An Azure OpenAI call, its body naming no
model, is read with the model its URL's deployment names. A call sent to a third-party host of
open models (a label of the URL's host name: :func:`~prefixbench.simulator.providers.hosts.host_at`),
or of a Workers AI model, keeps that host as its ``upstream``: its own prices, so unpriced.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, TypeAlias, assert_never
from urllib.parse import unquote

import msgspec
from msgspec.structs import replace

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.wire import Message, Request
from prefixbench.workloads.logs.anthropic_capture import classify_call, parse_request_body, usage_record
from prefixbench.workloads.logs.bedrock_wire import BedrockCall, answer_usage, bedrock_call, messages_body
from prefixbench.workloads.logs import converse_body
from prefixbench.workloads.logs.chat_completions import LineError, parse_request
from prefixbench.workloads.logs.captured_reply import messages_reply, reply_messages
from prefixbench.workloads.logs.responses_body import chat_shape
from prefixbench.workloads.logs.formats.base import Evidence, ImportContext, LogFormat, Replay
from prefixbench.simulator.providers import ANTHROPIC, GEMINI, OPENAI, UNKNOWN, gateway_at, provider_at, provider_of_model, provider_of_request, rules_for
from prefixbench.simulator.providers import openai as openai_rules
from prefixbench.simulator.providers.vllm import OLLAMA_COM
from prefixbench.simulator.providers.anthropic import ServerCalls, read_diagnostic, server_calls
from prefixbench.simulator.providers.base import ProviderRules, count, subset_usage
from prefixbench.simulator.providers.gemini import NativeRoute, NoTokenCount, native_route
from prefixbench.simulator.providers.hosts import WORKERS_AI, azure_service, host_at, host_price_file, third_party_host, workers_ai
from prefixbench.simulator.usage import Usage
from prefixbench.workloads.logs.formats import gateway_usage
from prefixbench.workloads.logs.formats.gemini_wire import CacheBook, model_call
from prefixbench.workloads.logs.formats.common import as_dict, json_text, objects, parse_time_ms, refuse_lone_surrogates
from prefixbench.workloads.logs.records import Record
from prefixbench.workloads.logs.trace import FileSummary, Prefix, Provider, TraceRequest

NAME = "http-capture"
#: The wire shape of a call: Anthropic Messages (Anthropic's or a compatible endpoint) or OpenAI's.
Wire: TypeAlias = Literal["messages", "openai"]
def detect(value: dict) -> Evidence | None:
    """A captured call: a request and its response, or a request ``prefixbench proxy`` recorded
    with the upstream's error in place of a response (:func:`_upstream_error`)."""
    if "request" not in value:
        return None
    return Evidence.WRAPPER if "response" in value or _upstream_error(value) is not None else None


def _upstream_error(value: dict) -> str | None:
    """Why ``prefixbench proxy`` recorded a call with no response (its ``prefixbench_proxy``
    note's ``upstream_error``: the upstream unreachable, timed out...), None where it did not."""
    note = value.get("prefixbench_proxy")
    error = note.get("upstream_error") if isinstance(note, dict) and "response" not in value else None
    return " ".join(error.split())[:200] if isinstance(error, str) and error.strip() else None


def _unanswered_note(errors: list[str]) -> str:
    """The note of a capture none of whose calls was answered: how many, and each error the proxy
    recorded for them (with how many calls it ended)."""
    counts: dict[str, int] = {}
    for error in errors:
        counts[error] = counts.get(error, 0) + 1
    said = "; ".join(f"{error}" + (f" (x{n})" if n > 1 else "") for error, n in counts.items())
    calls = f"{len(errors)} call{'' if len(errors) == 1 else 's'}"
    return f"{UNANSWERED}: the proxy recorded {calls} the upstream never answered ({said})"


#: How the note of a capture whose calls were none answered begins (what the audit's "nothing
#: to audit" quotes first).
UNANSWERED = "no call in it was answered"


def _provider(url: str, body: dict) -> tuple[Provider, Wire]:
    """Who served a captured call, from its endpoint and model, and the wire shape its usage has."""
    rules = provider_of_request(url, str(body.get("model", "")))
    messages = rules.speaks_messages and "messages" in body and "/chat/completions" not in url
    return rules.name, "messages" if messages else "openai"  # type: ignore[return-value]


def _endpoint(url: str) -> str:
    """A captured call's endpoint: its URL's host (lower case) and path, without scheme, user or
    query; "" when it names no host."""
    if "://" not in url:
        return ""
    host, _, path = url.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0].partition("/")
    return f"{host.rpartition('@')[2].lower()}/{path}".rstrip("/")


class _NoUsage(Exception):
    pass


class _Call(msgspec.Struct, frozen=True):
    """What one captured call contributes: usage, the parsed body when replayable, lane, envelope."""

    usage: Usage
    parsed: Request | None
    lane_kind: str
    envelope: tuple[tuple[str, str], ...]
    diagnostic: str | None
    #: The explicit cache the call named (Gemini ``cachedContent``).
    cache: str | None = None
    #: The response as the next request sends it back, where the provider's cache keeps output.
    reply: tuple[Message, ...] = ()
    #: A Messages response's ``usage.iterations`` samplings that are calls of their own:
    #: server-side compactions, then advisor calls (:func:`_iterations`).
    iterations: ServerCalls = ServerCalls()
    #: The model that served the call where it is not the one asked for (server-side fallback).
    served_model: str | None = None
    #: The upstream a gateway says served the call (OpenRouter's response ``provider``), "" where none.
    upstream: str = ""
    #: The provider the usage's own shape decides, in place of the one the URL's default gave
    #: (Cohere's v2 chat: :data:`UNKNOWN`, no cache model of its own); None where it decides none.
    serving: Provider | None = None


def _messages_call(provider: Provider, body: dict, response: dict, where: str) -> _Call:
    """An Anthropic Messages-shaped call (Anthropic, DeepSeek's compatible endpoint)."""
    raw = _messages_response_usage(response, where)
    if raw is None:
        raise _NoUsage
    rules = rules_for(provider)
    usage = (rules if rules.speaks_messages else ANTHROPIC).read_usage(raw, where)
    parsed = parse_request_body(body, where)
    served = _fallback_model(raw)
    if served is not None:  # the fallback model's cache served the call, not the one asked for
        parsed = replace(parsed, envelope=replace(parsed.envelope, model=served))
    effort = parsed.envelope.reasoning_effort
    envelope = (("effort", effort),) if effort else ()
    label = read_diagnostic(as_dict(response.get("body"))) or _diagnostic_sse(response)
    # DeepSeek's cache keeps output on this endpoint too: its response is read as it is sent back.
    reply = messages_reply(body, response, _sse_texts(response)) if rules_for(provider).bodies_keep_output else ()
    iterations = _iterations(rules if rules.speaks_messages else ANTHROPIC, raw, where)
    return _Call(usage, parsed, classify_call(parsed), envelope, label, reply=reply, iterations=iterations, served_model=served)


def _fallback_model(raw: dict) -> str | None:
    """The model a server-side fallback served the response with: its ``fallback_message``
    iteration's ``model`` (Anthropic's usage schema: the serving attempt's entry in place of its
    ``message`` entry, its counts the top level's); None without one."""
    steps = raw.get("iterations")
    served = [step.get("model") for step in steps if isinstance(step, dict) and step.get("type") == "fallback_message"] if isinstance(steps, list) else []
    return served[-1][:120] if served and isinstance(served[-1], str) and served[-1] else None


def _iterations(rules: ProviderRules, raw: dict, where: str) -> ServerCalls:
    """The samplings of one Messages response that are calls of their own, read from its
    ``usage.iterations`` as Claude Code transcripts are (:mod:`.claude_code`): each ``compaction``
    (server-side compaction; the top level is then the message's alone) and each
    ``advisor_message`` (the advisor tool: a call of the advisor model, outside the executor's top
    level), as ``(model, usage)``. A ``fallback_message`` is not one: Anthropic's usage schema
    makes it the served attempt's entry in place of its ``message`` entry, so its counts are the
    top level's (:func:`_fallback_model`)."""
    return server_calls(raw, where, lambda step, at, _model: rules.read_usage(step, at))


def _bedrock_call(provider: Provider, call: BedrockCall, body: dict, response: dict, where: str) -> _Call:
    """A Bedrock runtime call: its usage from the richest record of its answer, read by the
    provider's rules; a Converse body and an InvokeModel body in Anthropic's Messages shape are
    replayed, another model's InvokeModel body (Nova's own) and a Converse call of a managed
    prompt are not."""
    answer = answer_usage(response, rules_for(provider).read_usage, where)
    if answer.usage is None:
        raise _NoUsage(f"the stream ended in {answer.exception}, no usage" if answer.exception else "")
    if call.invoke and messages_body(body):
        parsed = parse_request_body(body, where)
    elif not call.invoke and converse_body.replayable(body):
        parsed = converse_body.parse_converse_body(body, call.model, where)
    else:
        return _Call(answer.usage, None, "main", (), None)
    effort = parsed.envelope.reasoning_effort
    return _Call(answer.usage, parsed, classify_call(parsed), (("effort", effort),) if effort else (), None)


#: An Azure OpenAI call's deployment, named in its path (``/openai/deployments/<name>/chat/completions``);
#: its body names no model. The deployment's name is read as the model's.
_AZURE_DEPLOYMENT = re.compile(r"/openai/deployments/([^/?#]+)/(?:chat/completions|completions|responses|embeddings)(?:[?#]|$)")


#: The counts an OpenAI-shaped usage (chat completions or Responses) names, one at least.
_OPENAI_COUNTS = ("prompt_tokens", "input_tokens", "completion_tokens", "output_tokens")


def _openai_call(provider: Provider, body: dict, response: dict, where: str, keeps_output: bool = True) -> _Call:
    """An OpenAI Responses or chat-completions call (OpenAI's or a compatible endpoint: its
    usage read by the serving provider's rules). ``keeps_output``: False on a known gateway
    (:data:`~prefixbench.simulator.providers.GATEWAYS`), whose cache does not keep the answer
    as the model maker's own endpoint may."""
    raw = _openai_response_usage(response)
    if raw is None:
        raise _NoUsage
    cohere = _cohere_usage(raw)
    raw = cohere or raw
    if not any(key in raw for key in _OPENAI_COUNTS):
        # Another wire's usage under the same key: not read as a call of 0 tokens.
        raise _NoUsage(f"usage in a shape not read (fields {', '.join(sorted(map(str, raw)))}; no prompt or output count)")
    rules = rules_for(provider)
    # A provider whose own usage is additive (Anthropic behind an OpenAI-shaped proxy) answers
    # this endpoint in OpenAI's shape; the others' readers know the OpenAI shape.
    usage = (OPENAI if rules.is_additive or not rules.reports_usage else rules).read_usage(raw, where)
    effort = as_dict(body.get("reasoning")).get("effort") or body.get("reasoning_effort")
    envelope = (("effort", str(effort)),) if effort else ()
    parsed = None
    # Chat completions as sent; a Responses body in that shape when it carries its whole prompt.
    shaped = body if isinstance(body.get("messages"), list) else chat_shape(body) if "input" in body else None
    if shaped is not None:
        try:
            parsed = parse_request(shaped)
        except LineError:
            parsed = None
    # The response is read only where the provider's cache keeps it (the body model then holds
    # prompt + response: a next body that sends it back reads into it).
    keeps = keeps_output and rules.bodies_keep_output
    reply = reply_messages(body, shaped, response, _sse_texts(response)) if shaped is not None and parsed is not None and keeps else ()
    return _Call(usage, parsed, "main", envelope, _openai_diagnostic(response), reply=reply, upstream=_upstream(response),
                 serving=UNKNOWN.name if cohere is not None else None)


def _cohere_usage(raw: dict) -> dict | None:
    """Cohere's v2 chat usage in the chat-completions shape, None for any other usage. Cohere
    reports ``tokens`` (every token the model processed, the template and preamble it adds
    included: the prompt its cache sees) and ``billed_units`` (the part it bills, fewer); and,
    where its inference cache served part of the prompt, a top-level ``cached_tokens`` (read as
    a part of ``tokens.input_tokens``). Without ``cached_tokens`` the cache is not reported."""
    tokens = raw.get("tokens")
    if not isinstance(tokens, dict) or any(key in raw for key in _OPENAI_COUNTS) or not any(key in tokens for key in ("input_tokens", "output_tokens")):
        return None
    shaped: dict = {"prompt_tokens": tokens.get("input_tokens", 0), "completion_tokens": tokens.get("output_tokens", 0)}
    if raw.get("cached_tokens") is not None:
        cached = raw["cached_tokens"]  # documented as a number (a double): a whole one is a count
        shaped["prompt_tokens_details"] = {"cached_tokens": int(cached) if isinstance(cached, float) and cached.is_integer() else cached}
    return shaped


def _body_naming(response: dict, marker: str) -> object:
    """A response's body, decoded where it is JSON text holding ``marker`` (None where it is not
    JSON or is nested past the parser; text without the marker as it is: not worth decoding)."""
    body = response.get("body")
    if isinstance(body, str) and marker in body:
        try:
            return json.loads(body)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            return None
    return body


def _upstream(response: dict) -> str:
    """The upstream a gateway names as the one that served an OpenAI-shaped response: OpenRouter's
    ``provider``, at the top of its JSON body or of its streamed chunks (the last that names one);
    "" where none does."""
    body = _body_naming(response, '"provider"')
    named = gateway_usage.upstream_of(body) if isinstance(body, dict) else ""
    for text in reversed(_sse_texts(response)):
        if named:
            break
        if '"provider"' in text:
            try:
                named = gateway_usage.upstream_of(as_dict(json.loads(text)))
            except (ValueError, RecursionError):
                continue
    return named


def _messages_response_usage(response: dict, where: str) -> dict | None:
    """The raw usage of a Messages response: from its SSE events (``message_start``, then each
    ``message_delta``), else from its body."""
    events = response.get("events")
    if isinstance(events, list) and response.get("body") is None and response.get("body_raw") is None:
        usage: dict | None = None
        for event in events:
            data = as_dict(event).get("data", event)
            if isinstance(data, str):
                try:
                    data = json.loads(data)
                except (ValueError, RecursionError):  # not JSON, or nested past the parser
                    continue
            data = as_dict(data)
            if data.get("type") == "message_start":
                usage = dict(as_dict(as_dict(data.get("message")).get("usage")))
            elif data.get("type") == "message_delta" and usage is not None:
                usage.update({k: v for k, v in as_dict(data.get("usage")).items() if v is not None})
        return usage
    try:
        return usage_record(response, where)  # checked; the serving provider's rules read it
    except UserError as exc:
        if "has no usage" in str(exc):
            return None
        raise


def _diagnostic_sse(response: dict) -> str | None:
    raw = response.get("body_raw")
    if not isinstance(raw, str) or "cache_miss_reason" not in raw and "diagnos" not in raw:
        return None
    for line in raw.splitlines():
        if line.startswith("data:"):
            try:
                label = read_diagnostic(json.loads(line[5:]))
            except (ValueError, RecursionError):  # not JSON, or nested past the parser
                continue
            if label is not None:
                return label
    return None


def _openai_response_usage(response: dict) -> dict | None:
    """The raw usage of an OpenAI response, from the richest record it carries.

    A streamed response's final event (``response.completed``, or a chat-completions chunk with
    ``usage``) is what the provider itself sent; a proxy's JSON summary beside it may drop the
    cache details (a summarized ``usage`` without ``input_tokens_details``). So every usage found
    competes and the one with the most fields wins; on a tie the stream's last one does.
    """
    found: list[dict] = []
    body = response.get("body")
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            body = None
    if isinstance(body, dict):
        if isinstance(body.get("usage"), dict):
            found.append(body["usage"])
        elif isinstance(as_dict(body.get("response")).get("usage"), dict):
            found.append(body["response"]["usage"])
    streamed = _streamed_openai_usage(response)
    if streamed is not None:
        found.append(streamed)
    if not found:
        return None
    return max(reversed(found), key=_fields_in)


def _openai_diagnostic(response: dict) -> str | None:
    """OpenAI's ``prompt_cache_diagnostics`` of a response: in its JSON body or its stream's events."""
    body = _body_naming(response, "prompt_cache_diagnostics")
    label = openai_rules.read_diagnostic(body)
    if label is not None:
        return label
    for text in reversed(_sse_texts(response)):
        if "prompt_cache_diagnostics" not in text:
            continue
        try:
            label = openai_rules.read_diagnostic(json.loads(text))
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            continue
        if label is not None:
            return label
    return None


def _sse_texts(response: dict) -> list[str]:
    """The data of a streamed response's events: its raw SSE text's ``data:`` lines, then its
    parsed ``events`` (as JSON text)."""
    raw = response.get("body_raw")
    texts = [line[5:] for line in raw.splitlines() if line.startswith("data:")] if isinstance(raw, str) else []
    events = response.get("events")
    if isinstance(events, list):
        texts += [e if isinstance(e, str) else json.dumps(as_dict(e).get("data", e)) for e in events]
    return texts


def _streamed_openai_usage(response: dict) -> dict | None:
    """The usage of the last SSE event that carries one (``response.completed`` last of all;
    Groq's last chunk, until 2026, held it only as ``x_groq.usage``)."""
    found = None
    for text in _sse_texts(response):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser
            continue
        data = as_dict(data)
        if isinstance(as_dict(data.get("response")).get("usage"), dict):
            found = data["response"]["usage"]  # response.completed
        elif isinstance(data.get("usage"), dict):
            found = data["usage"]
        elif isinstance(as_dict(data.get("x_groq")).get("usage"), dict):
            found = data["x_groq"]["usage"]  # Groq's stream of 2025, its usage in its own envelope only
        elif data.get("type") == "message-end" and isinstance(as_dict(data.get("delta")).get("usage"), dict):
            found = data["delta"]["usage"]  # Cohere's v2 chat stream: the usage in its last event's delta
    return found


def _fields_in(usage: object) -> int:
    """How many leaf fields a usage record holds (nested details included): its richness."""
    if isinstance(usage, dict):
        return sum(_fields_in(value) for value in usage.values())
    return 0 if usage is None else 1


def _intern(request: Request, shared: dict[object, object]) -> Request:
    """The same request built from values already held: each call of a capture re-sends the whole
    conversation, so without this the parsed bodies would grow with the square of its length."""
    messages = tuple(shared.setdefault(m, m) for m in request.messages)
    tools = shared.setdefault(request.tools, request.tools)
    system_blocks = shared.setdefault(request.system_blocks, request.system_blocks)
    return replace(request, messages=messages, tools=tools, system_blocks=system_blocks)  # type: ignore[arg-type]


def _request_body(request: dict) -> object:
    """The captured request body, parsed when it was captured as text (None when not JSON)."""
    return json_text(request.get("body"))


def _proxy_record(value: dict, where: str) -> tuple[dict, object] | None:
    """An llm-path proxy record (see the module doc) in claude-trace's envelope: ``({body,
    timestamp}, {body | body_raw, timestamp})``, the answer's time the arrival plus
    ``duration_ms``; None for any other line (an envelope with a URL, method or body)."""
    request = value.get("request")
    if not isinstance(request, dict) or any(key in request for key in ("body", "url", "method", "headers")):
        return None
    if not any(key in request for key in ("model", "messages", "contents", "input")):
        return None
    stamp = value.get("timestamp")
    sent = parse_time_ms(stamp, where)
    duration = value.get("duration_ms")
    answered = sent + duration if sent is not None and isinstance(duration, int) and not isinstance(duration, bool) and duration >= 0 else None
    response = value.get("response")
    if isinstance(response, dict) and isinstance(response.get("sse_lines"), list):
        wrapped: object = {"body_raw": "\n".join(str(line) for line in response["sse_lines"]), "timestamp": answered}
    elif isinstance(response, dict) and set(response) == {"raw"}:
        wrapped = {"body_raw": str(response["raw"]), "timestamp": answered}
    elif isinstance(response, dict):
        wrapped = {"body": response, "timestamp": answered}
    else:
        wrapped = response
    return {"body": request, "timestamp": stamp}, wrapped


def _served_model(response: dict) -> str | None:
    """The model an answer names (its JSON body's ``model`` or ``modelVersion``, else the first
    streamed event naming one: Messages' ``message_start``, a chat or Gemini chunk)."""
    candidates: list[object] = [response.get("body")]
    raw = response.get("body_raw")
    if isinstance(raw, str):
        candidates += [line[5:] for line in raw.split("\n", 64)[:64] if line.startswith("data:")]
    for candidate in candidates:
        if isinstance(candidate, str):
            try:
                candidate = json.loads(candidate)
            except (ValueError, RecursionError):  # not JSON ([DONE]), or nested past the parser
                continue
        data = as_dict(candidate)
        for found in (as_dict(data.get("message")).get("model"), data.get("model"), data.get("modelVersion")):
            if isinstance(found, str) and found:
                return found
    return None


def _proxied_provider(body: dict, response: dict) -> tuple[Provider, Wire]:
    """A proxied call's provider (no URL: the one its model names, else unknown) and wire shape
    (Messages when the answer is a Messages answer: a ``message_start`` event or a ``message``
    body)."""
    rules = provider_of_model(str(body.get("model", "")))
    raw = response.get("body_raw")
    answer = as_dict(response.get("body"))
    messages = (isinstance(raw, str) and "message_start" in raw) or answer.get("type") == "message"
    if rules is None:
        return UNKNOWN.name, "messages" if messages else "openai"
    return rules.name, "messages" if messages and rules.speaks_messages else "openai"


class _Capture:
    """The calls of one capture file, line by line."""

    def __init__(self, path: Path) -> None:
        self.name = str(path)
        self.out: list[TraceRequest] = []
        self.skipped: list[tuple[int, str]] = []
        self.shared: dict[object, object] = {}
        self.last_node: dict[str, str] = {}
        self.caches = CacheBook(self.name)
        #: The upstream errors of the calls the proxy recorded unanswered, and how many records were read.
        self.unanswered: list[str] = []
        self.records = 0
        #: Calls asking a host whose Standard rows prefixbench holds for its Priority tier
        #: (``service_tier: "priority"``), by the host's name: priced at Standard (:func:`_priority_note`).
        self.priority: Counter[str] = Counter()
        #: The last call to Ollama's own ``/api/chat`` read, per model: its messages and the prompt
        #: count it reported (:meth:`_ollama_counts_part`).
        self.ollama_chats: dict[str, tuple[list, int]] = {}

    def line(self, record: Record) -> None:
        """Add one captured call, or say why it is skipped."""
        where = f"{self.name}:{record.line}"
        value: dict = record.value  # type: ignore[assignment]
        self.records += 1
        error = _upstream_error(value)
        if error is not None:
            self.unanswered.append(error)
            self.skipped.append((record.line, f"not answered: {error}"))
            return
        proxied = _proxy_record(value, where)
        if proxied is not None and value.get("error") is not None:
            self.skipped.append((record.line, f"the proxy recorded no answer ({str(value['error'])[:80]})"))
            return
        request, response = proxied or (as_dict(value.get("request")), value.get("response"))
        url = str(request.get("url") or "")
        body = _request_body(request)
        if not isinstance(response, dict):
            self.skipped.append((record.line, "no response"))
            return
        served = _served_model(response) if proxied is not None else None
        if proxied is not None and isinstance(body, dict) and "contents" in body and "model" not in body and served:
            # Gemini's own wire, its model named only in the URL the proxy did not keep: the answer's.
            self._native(record, NativeRoute("stream" if "body_raw" in response else "generate", served), request, body, response, where)
            return
        if proxied is not None and served and isinstance(body, dict):
            body = {**body, "model": served}
        status = response.get("status_code")
        if isinstance(status, int) and not 200 <= status < 300:
            self.skipped.append((record.line, f"HTTP {status}: not served, neither read nor written"))
            return
        if _OLLAMA_NATIVE.search(url) and isinstance(body, dict) and "model" in body and _ollama_answer(response):
            self._ollama(record, request, body, response, where)
            return
        native = native_route(url, str(request.get("method") or "POST"))
        if native is not None:
            self._native(record, native, request, body, response, where)
            return
        bedrock = bedrock_call(url) if isinstance(body, dict) and "model" not in body else None
        if bedrock is not None:
            body = {**body, "model": bedrock.model}  # type: ignore[dict-item]
        deployment = _AZURE_DEPLOYMENT.search(url) if isinstance(body, dict) and "model" not in body else None
        if deployment is not None:  # Azure OpenAI names the deployment in the path, not the body:
            # the model is the one its answer names, else the deployment's name (a user's own label,
            # kept as the service's: :func:`~prefixbench.simulator.providers.hosts.azure_service`).
            body = {**body, "model": _served_model(response) or unquote(deployment.group(1))}  # type: ignore[dict-item]
        if not isinstance(body, dict) or "model" not in body:
            self.skipped.append((record.line, "not a model call (no request body with a model)"))
            return
        if record.plain or isinstance(request.get("body"), str):  # json.loads read it: see Record
            refuse_lone_surrogates(body, where, "request.body")
        sent = parse_time_ms(request.get("timestamp"), where)
        answered = parse_time_ms(response.get("timestamp"), where)
        by_model = False
        if bedrock is not None:
            provider, wire = bedrock.provider, "messages"
        elif proxied is not None:
            provider, wire = _proxied_provider(body, response)
            by_model = True
        else:
            provider, wire = _provider(url, body)
            # The model's name decided where the URL names no provider, or another (a local proxy
            # at /v1/messages serving glm-4-7), and no known gateway serves it. An Azure OpenAI
            # resource's endpoint names who served the call (OpenAI's models, its rules): not assumed.
            by_model = provider_at(url) is not rules_for(provider) and gateway_at(url) is None and not azure_service(_endpoint(url))
        try:
            if bedrock is not None:
                call = _bedrock_call(provider, bedrock, body, response, where)
            elif wire == "messages":
                call = _messages_call(provider, body, response, where)
            else:
                call = _openai_call(provider, body, response, where, keeps_output=gateway_at(url) is None)
        except _NoUsage as exc:
            self.skipped.append((record.line, str(exc) or "no usage in the response"))
            return
        except NoTokenCount as exc:
            self.skipped.append((record.line, exc.reason))
            return
        if call.serving is not None:  # the answer's own wire names its server: no assumption
            provider, by_model = call.serving, False
        self._add(record, body, provider, call, sent, answered, url, by_model)

    def _ollama(self, record: Record, request: dict, body: dict, response: dict, where: str) -> None:
        """A call to Ollama's own API (:func:`_ollama_usage`): a self-hosted host's, its provider
        unknown and its ``upstream`` Ollama, or Ollama's cloud (:data:`OLLAMA_COM`) where the URL's
        host is ``ollama.com`` (unpriced either way, whatever its model's name)."""
        if record.plain or isinstance(request.get("body"), str):
            refuse_lone_surrogates(body, where, "request.body")
        try:
            usage = _ollama_usage(response, where)
        except _NoUsage as exc:
            self.skipped.append((record.line, str(exc)))
            return
        partial = self._ollama_counts_part(body, usage)
        if partial:
            self.skipped.append((record.line, partial))
            return
        parsed = None
        if isinstance(body.get("messages"), list):  # /api/chat: a chat body; /api/generate's prompt is not
            try:
                parsed = parse_request({key: body[key] for key in ("model", "messages", "tools") if key in body})
            except LineError:
                parsed = None
        sent = parse_time_ms(request.get("timestamp"), where)
        answered = parse_time_ms(response.get("timestamp"), where)
        url = str(request.get("url") or "")
        # Ollama's cloud API (https://ollama.com/api/chat) bills through its plans: not the user's engine.
        host = url.split("://", 1)[-1].split("/", 1)[0].rpartition("@")[2].partition(":")[0].lower().rstrip(".")
        upstream = OLLAMA_COM if host == OLLAMA_COM or host.endswith("." + OLLAMA_COM) else OLLAMA
        call = _Call(usage, parsed, "main", (), None, upstream=upstream)
        self._add(record, body, UNKNOWN.name, call, sent, answered, url)

    def _ollama_counts_part(self, body: dict, usage: Usage) -> str:
        """Why a chat call's ``prompt_eval_count`` cannot be its whole prompt, "" where nothing
        says so. Ollama documents it as the prompt's tokens (docs/api.md), and so it is before
        0.30 and from 0.30.1 on; Ollama 0.30.0 reported only the part it evaluated, the cached
        prefix left out (ollama/ollama#16414, fixed by #16428), and a prompt longer than the
        context window is cut to it (#3427). The log names no version, so the one sign is a call
        whose messages extend or repeat the previous call's of its model yet that reports fewer
        prompt tokens than that call did: its prompt holds the whole previous one, so the count is a
        part of it. Read as the prompt, it would count the cached part as never sent; the prompt
        is unknown, and the call is skipped, as one that leaves the count out is."""
        messages = body.get("messages")
        if not isinstance(messages, list):
            return ""
        model = str(body.get("model"))
        before = self.ollama_chats.get(model)
        self.ollama_chats[model] = (messages, usage.prompt)
        if before is None:
            return ""
        sent, counted = before
        # The same messages again (a retry or regenerate) hold the whole previous prompt too; a
        # trimmed or edited history does not, and its smaller count may be whole.
        if len(sent) <= len(messages) and messages[:len(sent)] == sent and usage.prompt < counted:
            # This prompt holds the whole previous one: at least ``counted`` tokens, the bound the
            # next call is judged by (its own partial count would let a later partial one through).
            self.ollama_chats[model] = (messages, counted)
            held = "extend" if len(sent) < len(messages) else "repeat"
            return (f"Ollama's prompt_eval_count ({usage.prompt:,}) is below the previous call's ({counted:,}), whose "
                    f"messages this call's {held}: a part of the prompt, not all of it (Ollama 0.30.0 counted only "
                    "the part it evaluated, leaving the cached prefix out; or the prompt was cut to the context "
                    "window): prompt unknown")
        return ""

    def _native(self, record: Record, route: NativeRoute, request: dict, body: object, response: dict, where: str) -> None:
        """A call to Gemini's own API: a model call, or an explicit cache's creation, update or
        deletion (billed apart, never a request): see :mod:`.gemini_wire`."""
        body = body if isinstance(body, dict) else {}
        if record.plain or isinstance(request.get("body"), str):
            refuse_lone_surrogates(body, where, "request.body")
        provider = GEMINI.name  # the wire is Gemini's own, whatever host or model name carried it
        match route.action:
            case "generate" | "stream":
                try:
                    call = model_call(GEMINI, route, body, response, where)
                except NoTokenCount as exc:
                    self.skipped.append((record.line, exc.reason))
                    return
                if call is None:
                    self.skipped.append((record.line, "no usage in the response"))
                    return
                sent = parse_time_ms(request.get("timestamp"), where)
                answered = parse_time_ms(response.get("timestamp"), where)
                done = _Call(call.usage, call.parsed, "main", call.envelope, None, call.cache)
                self._add(record, {**body, "model": route.model}, provider, done, sent, answered)
                return
            case "cache-create":
                why = self.caches.create(record.line, provider, request, body, response, where)
            case "cache-update":
                why = self.caches.update(str(route.cache), request, body, response, where)
            case "cache-delete":
                why = self.caches.delete(str(route.cache), request, where)
            case _:
                assert_never(route.action)
        if why is not None:
            self.skipped.append((record.line, why))

    def _add(
        self, record: Record, body: dict, provider: Provider, call: _Call, sent: int | None, answered: int | None, url: str = "",
        by_model: bool = False,
    ) -> None:
        parsed = _intern(call.parsed, self.shared) if call.parsed is not None else None
        # Interned before the next call's messages are: the next body's copy of the response is
        # then the same object, and its rendering is shared.
        reply = tuple(self.shared.setdefault(m, m) for m in call.reply)
        # A Responses/chat body may name its conversation: one lane (and chain) per cache key;
        # a Gemini call naming an explicit cache, one lane per cache (its reads are that cache's).
        key = body.get("prompt_cache_key") or call.cache
        lane = f"{call.lane_kind}:{key}" if isinstance(key, str) and key else call.lane_kind
        node = f"{self.name}#{len(self.out)}"
        parent = self.last_node.get(lane)
        self.last_node[lane] = node
        model = call.served_model or str(body.get("model"))
        request = TraceRequest(
            file=self.name,
            line=record.line,
            lane=lane,
            lane_kind=call.lane_kind,  # type: ignore[arg-type]
            seq=len(self.out),
            sent_ms=sent,
            ready_ms=answered,
            provider=provider,
            model=model,
            envelope=call.envelope,
            usage=call.usage,
            body=parsed,
            prefix=None if parsed is not None else Prefix(f"http:{provider}:{model}", node, parent),
            diagnostic=call.diagnostic,
            source_format=NAME,
            compaction_call=call.lane_kind == "compaction" or (parsed is not None and classify_call(parsed) == "compaction"),
            explicit_cache=call.cache,
            read_step=rules_for(provider).url_step(url) or rules_for(provider).route_step(
                "openrouter" if _endpoint(url).startswith("openrouter.ai/") else "", model),
            reply=reply,  # type: ignore[arg-type]
            endpoint=_endpoint(url),
            # The upstream a gateway's answer names, else a third-party host of open models whose
            # own endpoint the URL is (api.together.xyz, api.fireworks.ai...), else Cloudflare's
            # Workers AI for one of its own models: each bills its own price (unpriced).
            upstream=call.upstream or host_at(url) or (WORKERS_AI if workers_ai(model) else ""),
            # Azure OpenAI's resource (and deployment): named, OpenAI's rules kept; only a call read
            # under OpenAI's rules is Azure OpenAI's (another maker's model on Azure is not).
            service=azure_service(_endpoint(url)) if provider == OPENAI.name else "",
        )
        if by_model:  # set apart, as claude_code.py does (a keyword on every request costs memory)
            request = replace(request, provider_by_model=True)
        if body.get("service_tier") == "priority" and request.upstream and host_price_file(request.upstream):
            self.priority[third_party_host(request.upstream) or request.upstream] += 1
        sent_as = request
        if call.iterations.compacted:
            request = self._server_compactions(record, request, call.iterations, parent)
        if request is not None:
            self.out.append(replace(request, seq=len(self.out)))
        # The advisor calls are this response's, counted or paused (no message sampled).
        self._advisor_calls(request or sent_as, call.iterations)

    def _server_compactions(self, record: Record, request: TraceRequest, calls: ServerCalls, parent: str | None) -> TraceRequest | None:
        """A response whose ``usage.iterations`` holds server-side compaction samplings: each a
        compaction call of its own before the response's, extending the lane's chain; the
        response's own prompt is the compacted context, not the body sent (a new chain, read by
        the chain model). None where the response paused after the compaction (no message)."""
        head = f"http:{request.provider}:{request.model}"
        self.skipped.extend((record.line, why) for why in calls.compaction_skips)
        for step in calls.compactions:
            node = f"{self.name}#{len(self.out)}#server-compaction{step.index}"
            self.out.append(replace(request, seq=len(self.out), usage=step.usage, body=None, reply=(), diagnostic=None,
                                    prefix=Prefix(head, node, parent), compaction_call=True))
            parent = node
        self.last_node[request.lane] = f"{self.name}#{len(self.out)}"
        if request.usage is not None and request.usage.is_empty:
            self.skipped.append((record.line, "response paused after a server-side compaction: no message sampled"))
            return None
        events = (calls.compaction_event, *request.events)
        return replace(request, body=None, prefix=Prefix(head, self.last_node[request.lane]), events=events)

    def _advisor_calls(self, request: TraceRequest, calls: ServerCalls) -> None:
        """The advisor calls of a response (``advisor_message`` iterations): each a call of the
        advisor model in an ``advisor`` lane of its own (a ``<lane>/advisor`` lane beside a
        subagent's), extending that lane's previous advisor call, as in a Claude Code transcript."""
        lane = "advisor" if request.lane_kind in ("main", "compaction") else f"{request.lane}/advisor"
        self.skipped.extend((request.line, why) for why in calls.advisor_skips)
        for step in calls.advisors:
            node = f"{self.name}#{len(self.out)}#advisor{step.index}"
            self.out.append(replace(
                request, lane=lane, lane_kind="side", seq=len(self.out), model=step.model, usage=step.usage, body=None, reply=(),
                diagnostic=None, events=(), compaction_call=False, request_id=None,
                prefix=Prefix(f"http:advisor:{request.provider}:{step.model}", node, self.last_node.get(lane)),
            ))
            self.last_node[lane] = node


#: Ollama's own API: ``/api/chat`` and ``/api/generate`` (its OpenAI-compatible ``/v1/...`` is read
#: as chat completions).
_OLLAMA_NATIVE = re.compile(r"://[^/?#]+(?:/[^?#]*)?/api/(?:chat|generate)/?(?:[?#]|$)")
#: The ``upstream`` of a call to Ollama's own API (a host that runs open models itself:
#: :func:`~prefixbench.simulator.providers.vllm.self_hosted`).
OLLAMA = "ollama"


def _ollama_answer(response: dict) -> bool:
    """Whether an answer at an ``/api/chat`` or ``/api/generate`` path is in Ollama's own shape (its
    JSON body, or a streamed line, names ``done``): another server's answer at such a path is read
    as any other."""
    body = json_text(response.get("body"))
    raw = response.get("body_raw")
    return (isinstance(body, dict) and "done" in body) or (isinstance(raw, str) and '"done"' in raw and "data:" not in raw[:64])


def _ollama_usage(response: dict, where: str) -> Usage:
    """The usage of an answer of Ollama's own API: its JSON body, or the last line of its NDJSON
    stream (``done: true``): ``prompt_eval_count`` (the whole prompt, but in Ollama 0.30.0:
    :meth:`_Capture._ollama_counts_part`) and ``eval_count`` (the output). Its cache is not reported, but by a ``prompt_eval_cached_count`` (part of the
    prompt) where the answer carries one.

    Raises:
        _NoUsage: no final line (a stream cut short), or a final line without ``eval_count`` or
            without ``prompt_eval_count``: Ollama before 0.2 left the prompt count out when the
            whole prompt was already in its cache (ollama/ollama#2068, #3427), so the prompt is
            unknown, neither 0 nor read.
    """
    body = response.get("body")
    if isinstance(body, str):
        body = json_text(body)
    lines: list[object] = [body] if isinstance(body, dict) else []
    raw = response.get("body_raw")
    if not lines and isinstance(raw, str):
        lines = [json_text(text) for text in raw.splitlines() if text.strip()]
    final = next((as_dict(line) for line in reversed(lines) if as_dict(line).get("done") is True), None)
    if final is None:
        raise _NoUsage("Ollama's answer has no final (done) line: no usage")
    if "eval_count" not in final:
        raise _NoUsage("Ollama's final line has no eval_count: no usage")
    if "prompt_eval_count" not in final:
        raise _NoUsage("Ollama left out prompt_eval_count (before 0.2 it did when the whole prompt was cached): prompt unknown")
    prompt = count(final.get("prompt_eval_count"), where, "prompt_eval_count")
    output = count(final.get("eval_count"), where, "eval_count")
    if final.get("prompt_eval_cached_count") is None:
        return Usage(uncached=prompt, output=output, cache_reported=False)
    cached = count(final.get("prompt_eval_cached_count"), where, "prompt_eval_cached_count")
    return subset_usage(prompt, cached, 0, output, reported=True,
                        excess=f"{where}: prompt_eval_cached_count ({cached}) exceeds prompt_eval_count ({prompt})")


def _priority_note(host: str, calls: int) -> str:
    """What the audit says of calls that asked a host for its Priority tier: the host's file holds
    its Standard rows only (simulator/data/host-*.csv), so they are priced below what they billed."""
    return (f"{calls:,} call(s) asked {host} for its Priority tier (service_tier \"priority\"): priced at {host}'s "
            "Standard row, which prefixbench holds; the Priority price they billed is higher and not held, so their "
            "dollars are undercounted")


def read(path: Path, records: Iterable[Record], ctx: ImportContext) -> tuple[list[TraceRequest], FileSummary]:
    """A capture's model calls; see the module doc."""
    capture = _Capture(path)
    seen_any = False
    for record in objects(path, records, " with request and response"):
        seen_any = True
        capture.line(record)
    if not seen_any:
        raise UserError(f"{capture.name}:1: empty file, no captured calls")
    everyone = not capture.out and capture.unanswered and len(capture.unanswered) == capture.records
    notes = (_unanswered_note(capture.unanswered),) if everyone else ()
    notes += tuple(_priority_note(host, calls) for host, calls in sorted(capture.priority.items()))
    summary = FileSummary(capture.name, NAME, len(capture.out), tuple(capture.skipped), notes, explicit_caches=capture.caches.caches())
    return capture.out, summary


FORMAT = LogFormat(
    name=NAME,
    noun="HTTP capture",
    nouns="HTTP captures",
    description="HTTP captures of model calls, one {request, response} a line (claude-trace and tools like it)",
    detect=detect,
    read=read,
    usage="by-endpoint",
    versions=(
        "claude-trace: response as a JSON body, raw SSE text (body_raw) or parsed events",
        "Anthropic Messages, JSON or SSE (message_start, then message_delta)",
        "usage.iterations: server-side compaction (compaction entries: compaction calls of their own) and the advisor "
        "tool (advisor_message entries: calls of the advisor model in an advisor lane); fallback_message is the top level's, "
        "its model the one that served the call",
        "DeepSeek's Anthropic-compatible endpoint (usage repeated in message_delta)",
        "OpenAI Responses (usage in response.completed; GPT-5.6 on: cache_write_tokens) and chat completions",
        "AWS Bedrock Converse / ConverseStream and InvokeModel / InvokeModelWithResponseStream (event-stream "
        "answers as text, base64 bytes or decoded events)",
        "Gemini API and Vertex AI generateContent / streamGenerateContent (usageMetadata; SSE or a JSON array), "
        "cachedContents create / update / delete",
        "llm-path proxy records: the body as request, the JSON answer or {stream, sse_lines} as response, no URL",
        "Cohere v2 chat (usage tokens, billed_units, cached_tokens; a stream's message-end delta)",
        "Ollama's own /api/chat and /api/generate (JSON, or NDJSON ending in done: true): prompt_eval_count, eval_count",
    ),
    aliases=("claude-trace", "anthropic-capture"),
    replay=Replay(
        name="anthropic-capture",
        help="(claude-trace request/response pairs, replayed through the anthropic cache model and compared "
        "with the usage the provider reported)",
        kind="capture",
    ),
)
