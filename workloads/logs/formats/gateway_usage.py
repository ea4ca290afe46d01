"""Usage as LiteLLM (and the agents built on it) writes it: one OpenAI-shaped object whatever the
provider, and who served the call.

LiteLLM turns every provider's usage into chat-completions fields: ``prompt_tokens``,
``completion_tokens`` and ``prompt_tokens_details.cached_tokens``. For OpenAI, DeepSeek and
Gemini that is the provider's own subset convention (the prompt count includes the cached part);
Kimi's chat usage keeps its ``cached_tokens`` at the top, and LiteLLM passes that on as it is.
For Anthropic it adds ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` beside
them, and what ``prompt_tokens`` holds changed between LiteLLM versions (its Anthropic
transformation, ``litellm/llms/anthropic/chat/transformation.py``):

* older: ``prompt_tokens = input_tokens + cache_read_input_tokens`` (writes left out);
* newer: ``prompt_tokens = input_tokens + cache_creation_input_tokens + cache_read_input_tokens``,
  with ``prompt_tokens_details.cache_creation_tokens`` and ``text_tokens`` (the uncached
  ``input_tokens``) beside ``cached_tokens``.

No field names the version, so a file is read one way, decided from its own numbers
(:func:`writes_in_prompt`), and the reading is stated in the audit's notes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import msgspec

from prefixbench.simulator.errors import UserError
from prefixbench.simulator.providers import ANTHROPIC, GEMINI, OPENAI, UNKNOWN, hosted_provider, provider_of_model, rules_for, writes_unreported
from prefixbench.simulator.providers.gemini import read_chat_usage as read_gemini_chat_usage
from prefixbench.simulator.providers.base import count, given, mapping
from prefixbench.simulator.providers.vllm import litellm_engine
from prefixbench.simulator.providers.hosts import WORKERS_AI, billing_host, host_at, named_host, workers_ai
from prefixbench.simulator.usage import Usage

#: Top-level keys LiteLLM adds to an Anthropic call's OpenAI-shaped usage.
_ANTHROPIC_KEYS = ("cache_creation_input_tokens", "cache_read_input_tokens")


def is_anthropic_shaped(usage: Mapping[str, object]) -> bool:
    """Whether an OpenAI-shaped usage carries Anthropic's read/write counts (an Anthropic call
    through LiteLLM): its writes are billed apart, and its reads are additive on the wire."""
    return any(usage.get(key) is not None for key in _ANTHROPIC_KEYS)


def names_cache(usage: Mapping[str, object]) -> bool:
    """Whether a LiteLLM usage says anything of the cache, in any of the fields it may use
    (Anthropic's counts, ``prompt_tokens_details.cached_tokens``, DeepSeek's
    ``prompt_cache_hit_tokens``, Kimi's top-level ``cached_tokens``): a field given as null is
    not reported, the same as one left out (:func:`~prefixbench.simulator.providers.base.given`,
    as the providers' readers take it)."""
    return (is_anthropic_shaped(usage) or given(mapping(usage.get("prompt_tokens_details")), "cached_tokens")
            or given(usage, "prompt_cache_hit_tokens", "cached_tokens"))


def _parts(usage: Mapping[str, object], where: str) -> tuple[int, int, int]:
    """(prompt, read, written) of an Anthropic-shaped usage."""
    details = mapping(usage.get("prompt_tokens_details"))
    prompt = count(usage.get("prompt_tokens"), where, "usage.prompt_tokens")
    read = count(usage.get("cache_read_input_tokens", details.get("cached_tokens")), where, "usage.cache_read_input_tokens")
    written = count(
        usage.get("cache_creation_input_tokens", details.get("cache_creation_tokens")), where, "usage.cache_creation_input_tokens"
    )
    return prompt, read, written


def writes_in_prompt(usages: Iterable[tuple[Mapping[str, object], str]]) -> bool:
    """Whether the Anthropic-shaped usages of one file count the written tokens inside
    ``prompt_tokens`` (newer LiteLLM), decided from the file's own numbers.

    Decisive: ``prompt_tokens_details.cache_creation_tokens`` (newer LiteLLM writes it), or a
    call whose ``prompt_tokens`` is below its reads plus writes (older LiteLLM: writes cannot be
    inside). With neither, the newer reading is kept: under the older one every call would have
    had more uncached input than it wrote, which a breakpoint at the end of the prompt rules out.
    """
    for usage, where in usages:
        if not is_anthropic_shaped(usage):
            continue
        details = mapping(usage.get("prompt_tokens_details"))
        prompt, read, written = _parts(usage, where)
        if prompt < read + written:
            return False
        if details.get("cache_creation_tokens") is not None:
            return True
    return True


def read_usage(usage: Mapping[str, object], where: str, *, writes_included: bool = True, model: str = "") -> Usage:
    """One OpenAI-shaped usage (chat completions or Responses, as LiteLLM writes it) as the
    normalized :class:`Usage`. ``writes_included``: how this file's Anthropic-shaped usages count
    writes (:func:`writes_in_prompt`). A Gemini ``model`` (:func:`provider_of`) is read as an
    http-capture reads Gemini's OpenAI-shaped usage
    (:func:`~prefixbench.simulator.providers.gemini.read_chat_usage`: OpenRouter's content made
    for the call, written and read at once, is one explicit read).

    Raises:
        UserError: a bad count, or reads and writes above the prompt count.
    """
    if not is_anthropic_shaped(usage):
        details = mapping(usage.get("prompt_tokens_details"))
        if details.get("cached_tokens") is None and usage.get("cached_tokens") is not None and "prompt_tokens" in usage:
            # Kimi's chat usage names its cached part at the top (LiteLLM passes it on as it is).
            usage = {**usage, "prompt_tokens_details": {**details, "cached_tokens": usage["cached_tokens"]}}
        if model and provider_of(model, False) == GEMINI.name:
            return read_gemini_chat_usage(usage, where)
        return OPENAI.read_usage(usage, where)  # subset: the prompt count includes the cached part
    prompt, read, written = _parts(usage, where)
    uncached = prompt - read - (written if writes_included else 0)
    if uncached < 0:
        raise UserError(f"{where}: cache reads ({read}) and writes ({written}) exceed prompt_tokens ({prompt})")
    details = mapping(usage.get("prompt_tokens_details"))
    split = mapping(details.get("cache_creation_token_details")) or mapping(usage.get("cache_creation"))
    long_part = min(count(split.get("ephemeral_1h_input_tokens"), where, "ephemeral_1h_input_tokens"), written)
    output = count(usage.get("completion_tokens"), where, "usage.completion_tokens")
    return Usage(read, written - long_part, long_part, uncached, output)


def names_writes(usage: Mapping[str, object]) -> bool:
    """Whether a LiteLLM usage has a field for cache writes at all (given, even as 0):
    Anthropic's ``cache_creation_input_tokens`` (or its ``cache_creation`` split), newer LiteLLM's
    ``prompt_tokens_details.cache_creation_tokens``, OpenRouter's ``cache_write_tokens``."""
    details = mapping(usage.get("prompt_tokens_details"))
    return (given(usage, "cache_creation_input_tokens") or given(details, "cache_creation_tokens", "cache_write_tokens")
            or bool(mapping(usage.get("cache_creation"))))


def writes_unknown(usage: Usage, raw: Mapping[str, object], provider: str) -> Usage:
    """``usage`` (read from ``raw``) with its writes not reported where it reports its cache use
    but ``raw`` has no write field (:func:`names_writes`) and ``provider`` bills writes apart: what
    the call wrote is unknown, not 0 (a field present at 0 is a 0)."""
    return writes_unknown_unless_named(usage, names_writes(raw), provider)


def writes_unknown_unless_named(usage: Usage, named: bool, provider: str) -> Usage:
    """``usage`` with its writes not reported where it reports its cache use, its log has no
    cache-write field (``named`` False; each reader knows its own fields) and ``provider`` bills
    writes apart: what the call wrote is unknown, not 0. Otherwise ``usage`` as it is."""
    if usage.cache_reported and usage.writes_reported and writes_unreported(named, provider):
        return msgspec.structs.replace(usage, writes_reported=False)
    return usage


#: The note of a file where :func:`writes_unknown` took some calls' writes as not reported.
WRITES_UNKNOWN_NOTE = ("{:,} call(s) of a provider that bills cache writes apart whose usage has no write field (no "
                       "cache_creation_input_tokens or the like): what they wrote is not reported, not 0")


def reading_note(anthropic_calls: int, writes_included: bool) -> str:
    """What the audit says of how it read a file's Anthropic-shaped usages."""
    how = (
        "prompt_tokens includes cache reads and writes (newer LiteLLM): uncached = prompt - read - written"
        if writes_included
        else "prompt_tokens includes cache reads but not writes (older LiteLLM): uncached = prompt - read"
    )
    return f"{anthropic_calls} call(s) with LiteLLM's Anthropic usage fields: {how}"


SUBSET_NOTE = "OpenAI-shaped usage: prompt_tokens includes prompt_tokens_details.cached_tokens (uncached = prompt - cached)"


def reading_notes(calls: int, anthropic_calls: int, writes_included: bool) -> list[str]:
    """What the audit says of how it read a file's ``calls`` usages, ``anthropic_calls`` of them
    Anthropic-shaped: the OpenAI-shaped reading where any call is not, :func:`reading_note`
    where any is."""
    notes = [SUBSET_NOTE] if anthropic_calls < calls else []
    if anthropic_calls:
        notes.append(reading_note(anthropic_calls, writes_included))
    return notes


def provider_of(model: str, anthropic_shaped: bool) -> str:
    """Who served a call named ``model`` as LiteLLM names it (``anthropic/claude-...``,
    ``openrouter/deepseek/deepseek-chat``, ``bedrock/us.anthropic.claude-...``): the provider
    whose model names a segment starts with, else the route's first segment when it is a
    provider, else Anthropic when the usage carries Anthropic's fields, else ``unknown``. A route to
    an engine the user runs (``ollama/``, ``hosted_vllm/``...: :func:`~prefixbench.simulator.providers.vllm.litellm_engine`)
    is ``unknown`` whatever its model: the engine's cache, not the model maker's."""
    if litellm_engine(model):
        return UNKNOWN.name
    segments = [s for s in model.split("/") if s]
    for segment in reversed(segments):
        rules = provider_of_model(segment) or provider_of_model(segment.rsplit(".", 1)[-1])
        if rules is not None and rules.reports_usage:
            return rules.name
    if segments:
        rules = hosted_provider(segments[0])
        if rules is not None:
            return rules.name
    return ANTHROPIC.name if anthropic_shaped else UNKNOWN.name


def upstream_of(response: Mapping[str, object]) -> str:
    """The upstream a gateway says served a call: OpenRouter's response ``provider``
    (``DeepInfra``, ``Chutes``, ``DeepSeek``...), which LiteLLM passes on in the raw response it
    keeps; "" where the response names none (a string, trimmed and cut to 60 characters)."""
    name = response.get("provider")
    return name.strip()[:60] if isinstance(name, str) else ""


#: OpenRouter's generation id: ``gen-``, the epoch second, a dash.
_OPENROUTER_ID = re.compile(r"gen-\d{10}-")


def route_of(response: Mapping[str, object]) -> str:
    """The gateway a response came through where it names the upstream that served it, for the
    rules' per-route-and-upstream steps (``route_upstream_steps``): ``openrouter`` for
    OpenRouter's generation ids (``gen-`` and the ten-digit epoch second it was made,
    ``gen-1763510516-...``: another ``gen-`` id, a hand-made proxy's, names no gateway),
    ``portkey`` for Portkey's (``portkey-...``); "" where the response names no upstream or its
    id no gateway."""
    ident = response.get("id")
    if not upstream_of(response) or not isinstance(ident, str):
        return ""
    return gateway_of_id(ident)


def gateway_of_id(ident: str) -> str:
    """The gateway a response id names (:func:`route_of`'s ``openrouter`` or ``portkey``), ""
    for any other id."""
    if _OPENROUTER_ID.match(ident):
        return "openrouter"
    if ident.startswith("portkey-"):
        return "portkey"
    return ""


#: litellm's route through Hugging Face's Inference Providers router, ``huggingface/<host>/<org>/<model>``
#: (docs.litellm.ai/docs/providers/huggingface): the router bills the host's own price with no
#: markup of Hugging Face's (huggingface.co/docs/inference-providers/pricing), so the host the
#: second segment names decides; without one (``huggingface/<org>/<model>``) none is named.
_HF_ROUTER = "huggingface"


def served_by(model: str, upstream: str, api_base: str = "") -> str:
    """The ``upstream`` of a call LiteLLM routed as ``model``: the engine the route names where the
    user runs it (:func:`~prefixbench.simulator.providers.vllm.litellm_engine`: no vendor bills
    it, so it stays unpriced), else ``upstream`` (what the response names: :func:`upstream_of`),
    else Cloudflare's Workers AI (litellm's ``cloudflare/@cf/...`` route:
    :func:`~prefixbench.simulator.providers.hosts.workers_ai`), else a third-party host of open
    models the route names (``fireworks_ai/``, ``groq/``...; through Hugging Face's router,
    ``huggingface/novita/...``, the host its second segment names, whose own price Hugging Face
    passes on without a markup: :func:`~prefixbench.simulator.providers.hosts.billing_host`),
    else the host whose endpoint ``api_base`` is (an ``openai/`` route pointed at
    api.fireworks.ai: :func:`~prefixbench.simulator.providers.hosts.host_at`), else the host the
    model's own id names (``accounts/fireworks/...``, a router's ``:groq``:
    :func:`~prefixbench.simulator.providers.hosts.named_host`)."""
    if "/" not in model:
        return upstream or host_at(api_base) or named_host(model)
    route, _, rest = model.partition("/")
    if route.lower() == _HF_ROUTER and "/" in rest:
        route = rest.split("/", 1)[0]
    return (litellm_engine(model) or upstream or (WORKERS_AI if workers_ai(model) else billing_host(route))
            or host_at(api_base) or named_host(rest))
