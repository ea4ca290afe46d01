"""Providers in one place: the table of rule objects and the lookups the rest of prefixbench uses.

Each module holds one provider family's facts as a :class:`~.base.ProviderRules`
(:mod:`.anthropic`, :mod:`.openai`, :mod:`.deepseek`, :mod:`.gemini`, :mod:`.xai`,
:mod:`.moonshot`, :mod:`.qwen`, :mod:`.minimax`, :mod:`.bedrock`, :mod:`.zai`, :mod:`.vllm` for
the vLLM and radix engines). Code outside this package asks these lookups and reads the rules' attributes; it never
compares a provider's name (``tests/test_provider_literals.py`` checks).

To add a provider: one module with its ``RULES``, one line in :data:`PROVIDERS`, and its tests.
"""

from __future__ import annotations

from collections.abc import Mapping

from prefixbench.simulator.providers import (
    anthropic,
    bedrock,
    deepseek,
    gemini,
    minimax,
    moonshot,
    openai,
    qwen,
    vllm,
    xai,
    zai,
)
from prefixbench.simulator.providers.base import AgentUsageReading, CacheOption, ProviderRules, UsageConvention, UsageReader, count, mapping
from prefixbench.simulator.usage import Usage

ANTHROPIC = anthropic.RULES
OPENAI = openai.RULES
DEEPSEEK = deepseek.RULES
GEMINI = gemini.RULES
XAI = xai.RULES
MOONSHOT = moonshot.RULES
QWEN = qwen.RULES
MINIMAX = minimax.RULES
BEDROCK = bedrock.RULES
ZAI = zai.RULES
VLLM = vllm.VLLM
RADIX = vllm.RADIX
#: The rules of a provider the table does not name (see :data:`.vllm.UNKNOWN`).
UNKNOWN = vllm.UNKNOWN

#: Every provider and engine prefixbench models, by name.
PROVIDERS: dict[str, ProviderRules] = {
    r.name: r for r in (ANTHROPIC, OPENAI, DEEPSEEK, GEMINI, XAI, MOONSHOT, QWEN, MINIMAX, BEDROCK, ZAI, VLLM, RADIX)
}
#: Who an HTTP request belongs to when its URL or model names no one: the OpenAI wire format.
DEFAULT_HTTP = OPENAI
#: Checked in this order on a URL and a model name (DeepSeek's, Kimi's, Qwen's, MiniMax's and
#: GLM's Anthropic-compatible endpoints speak the Anthropic format, and Bedrock's URLs and model
#: ids name Anthropic, so they all come before Anthropic).
_DETECTION_ORDER: tuple[ProviderRules, ...] = (DEEPSEEK, BEDROCK, GEMINI, XAI, MOONSHOT, QWEN, MINIMAX, ZAI, ANTHROPIC)

__all__ = [
    "ANTHROPIC",
    "AgentUsageReading",
    "BEDROCK",
    "DEEPSEEK",
    "GEMINI",
    "MINIMAX",
    "MOONSHOT",
    "QWEN",
    "XAI",
    "ZAI",
    "CacheOption",
    "OPENAI",
    "PROVIDERS",
    "RADIX",
    "UNKNOWN",
    "provider_at",
    "GATEWAYS",
    "gateway_at",
    "speaks_messages_at",
    "VLLM",
    "ProviderRules",
    "Usage",
    "UsageConvention",
    "UsageReader",
    "agent_handler",
    "multi_provider_handler",
    "chain_rules",
    "hosted_provider",
    "count",
    "mapping",
    "provider_named_in",
    "provider_of_model",
    "provider_of_request",
    "read_usage",
    "rules_for",
    "writes_unreported",
]


def rules_for(name: str) -> ProviderRules:
    """The rules of provider ``name``; :data:`UNKNOWN`'s for a name the table does not hold."""
    return PROVIDERS.get(name, UNKNOWN)


def writes_unreported(names_writes: bool, provider: str) -> bool:
    """Whether a call's cache writes are not reported (unknown, not 0): its usage has no field for
    them (``names_writes`` False: each log format says which fields count) and ``provider`` bills
    writes apart from other input (:attr:`~.base.ProviderRules.is_additive`). A field present at
    0 is a 0; a provider that bills no writes apart reports none to leave out. The one rule every
    reader of a usage without a write field applies (LiteLLM's, Langfuse's, OpenTelemetry's,
    Copilot CLI's)."""
    return not names_writes and rules_for(provider).is_additive


def hosted_provider(name: str) -> ProviderRules | None:
    """The rules of ``name`` when it is a hosted provider whose wire usage prefixbench reads."""
    rules = PROVIDERS.get(name)
    return rules if rules is not None and rules.reports_usage else None


def chain_rules(name: str) -> ProviderRules:
    """The rules the body-less chain model runs for provider ``name``."""
    return rules_for(rules_for(name).chain_as or UNKNOWN.chain_as or "")


def provider_of_model(model: str) -> ProviderRules | None:
    """The provider whose model names ``model`` starts with (any case), if one does."""
    for rules in PROVIDERS.values():
        if rules.names_model(model):
            return rules
    return None


def counted_as(rules: ProviderRules | None) -> str:
    """The provider a logged call is counted under: ``rules``' when prefixbench reads their
    wire usage, else unknown."""
    return rules.name if rules is not None and rules.reports_usage else UNKNOWN.name


def counted_provider(model: str) -> str:
    """The provider a logged call of ``model`` is counted under (:func:`counted_as`): the one
    whose model names it takes, when the audit models it."""
    return counted_as(provider_of_model(model))


def provider_of_request(url: str, model: str) -> ProviderRules:
    """The provider of an HTTP request, from its endpoint URL and body's model, as the
    http-capture importer decides it: the first of :data:`_DETECTION_ORDER` whose URL or model
    names match, else OpenAI."""
    for rules in _DETECTION_ORDER:
        if rules.names_url(url) or rules.names_model(model):
            return rules
    return DEFAULT_HTTP


def speaks_messages_at(url: str) -> bool:
    """Whether ``url`` is a provider's Anthropic-compatible Messages API base (DeepSeek's
    ``https://api.deepseek.com/anthropic``, MiniMax's, Kimi's...): its path ends in ``/anthropic``."""
    return url.rstrip("/").endswith("/anthropic")


#: Gateways whose host is known: they serve other makers' models on their own OpenAI-shaped
#: endpoint, so a call is read with its model's provider's rules but not where the gateway's
#: traffic shows otherwise. Charm's Hyper (Crush's ``hyper`` provider; glm-5.1 and
#: gpt-oss-120b in Crush's recorded agent tests of 2026-05 to 07) does not keep the answer
#: after the prompt as Z.AI's own coding endpoint does: of its glm-5.1 follow-ups that could
#: tell (10 recordings on Crush's main), 74 read the previous prompt alone, 18 into the answer
#: (docs/providers.md, Gateways).
GATEWAYS: dict[str, str] = {"hyper.charm.land": "Charm's Hyper"}


def gateway_at(url: str) -> str | None:
    """The name of the known gateway ``url`` is on (its host is a key of :data:`GATEWAYS`), else None."""
    host = url.split("://", 1)[-1].split("/", 1)[0].rpartition("@")[2].lower()
    return GATEWAYS.get(host.partition(":")[0])


def provider_at(url: str) -> ProviderRules | None:
    """The provider whose own endpoint ``url`` is (one of its URL markers, or its API base's
    host), None for any other server (a local proxy, a gateway, a self-hosted model)."""
    lowered = url.lower()
    for rules in (*_DETECTION_ORDER, *(r for r in PROVIDERS.values() if r not in _DETECTION_ORDER)):
        if rules.url_markers and rules.names_url(url):
            return rules
        host = rules.api_base.split("://", 1)[-1].split("/", 1)[0].lower() if rules.api_base else ""
        if host and host in lowered:
            return rules
    return None


def provider_named_in(text: str, default: ProviderRules = DEFAULT_HTTP) -> ProviderRules:
    """The first provider whose name appears in ``text`` (any case), e.g. a Codex rollout's
    ``model_provider``; ``default`` when none does."""
    lowered = text.lower()
    for rules in _DETECTION_ORDER:
        if rules.name in lowered:
            return rules
    return default


def read_usage(name: str, usage: Mapping[str, object], where: str) -> Usage:
    """Provider ``name``'s wire ``usage`` object as the normalized :class:`Usage`.

    Raises:
        UserError: a bad count, or a provider that reports no usage.
    """
    return rules_for(name).read_usage(usage, where)


#: Agents' API handlers that serve many providers' models (gateways, clouds, local servers), so
#: that no provider claims them, with how each writes the four usage fields of Cline's log (read
#: from each handler's code, Cline 3.17 to 3.89; an id missing here reads as a gateway's,
#: additive). ``total``: ``prompt_tokens`` passed on whole with the reads and writes inside it
#: (LiteLLM also writes a DeepSeek-shaped server's MISS count as cacheWrites); ``subset``:
#: ``prompt_tokens`` whole, cacheWrites a DeepSeek-shaped MISS count or 0; ``by-counts``: whole
#: in early releases, additive later (OpenRouter's before Cline 3.2x; Cline's own gateway,
#: ``cline``, an Anthropic model's until cline/cline#5426, August 2025).
MULTI_PROVIDER_HANDLERS: dict[str, AgentUsageReading] = {
    "bedrock": "additive",
    "vertex": "additive",
    "groq": "additive",
    "vercel-ai-gateway": "additive",
    "openrouter": "by-counts",
    "cline": "by-counts",
    "litellm": "total",
    "requesty": "total",
    "oca": "total",
    "fireworks": "subset",
    "doubao": "subset",
    "hicap": "subset",
    "lmstudio": "subset",
}


def multi_provider_handler(handler: str) -> AgentUsageReading | None:
    """How an agent's API handler that no provider claims (:data:`MULTI_PROVIDER_HANDLERS`)
    writes its log's usage fields; None for one not known."""
    return MULTI_PROVIDER_HANDLERS.get(handler)


def agent_handler(handler: str) -> tuple[ProviderRules, AgentUsageReading] | None:
    """The provider an agent's API handler id names (Cline's ``providerId``, Roo Code's
    ``apiProtocol``), and how that handler writes its log's usage fields; None for a handler no
    provider claims (a gateway such as OpenRouter: its handler reports additive counts)."""
    for rules in PROVIDERS.values():
        for name, reading in rules.agent_handlers:
            if name == handler:
                return rules, reading
    return None
