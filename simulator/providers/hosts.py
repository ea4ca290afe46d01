"""Hosts that serve other makers' open-weight models at prices of their own.

Fireworks, Groq, Together AI, DeepInfra and the like run open-weight models (DeepSeek, Kimi, Qwen,
GLM, MiniMax, Llama, gpt-oss) on their own hardware and bill their own per-token price, with a
cache discount of their own or none: a call they served is not billed at the maker's list price
the price table holds. A reader that finds such a host named as the one that served a call (pi's
and OpenCode's provider id, Cline's ``providerId``, a litellm model prefix, a gateway's upstream)
keeps it as the call's ``upstream``
(:attr:`~prefixbench.workloads.logs.trace.TraceRequest.upstream`, :func:`billing_host`), and the
price lookup prices the call at that host's own row (:data:`HOST_PRICES`,
:meth:`~prefixbench.simulator.price_lookup.Prices.host_row`) or, where prefixbench holds none for
that host and model, leaves it unpriced, never at the maker's list price
(:meth:`~prefixbench.simulator.price_lookup.Prices.at_list_price`).

A gateway that passes a call on at the maker's price (OpenRouter, OpenCode Zen, Vercel's AI
Gateway, Cloudflare's AI Gateway) is none of these: it names the model's maker's price, and
where it names the upstream that served the call the upstream decides.
"""

from __future__ import annotations

import re
from functools import lru_cache

from prefixbench.simulator.providers.vllm import self_hosted, self_hosted_upstream

#: The hosts, by the start of their name written lower-case with letters and digits only (an
#: agent's id ``fireworks``, ``fireworks-ai``, litellm's ``fireworks_ai``, OpenRouter's
#: ``Fireworks``; ``together``, ``togetherai``; ``Nebius AI Studio``), with the name a note gives.
THIRD_PARTY_HOSTS: dict[str, str] = {
    "fireworks": "Fireworks",
    "groq": "Groq",
    "together": "Together AI",
    "deepinfra": "DeepInfra",
    "cerebras": "Cerebras",
    "baseten": "Baseten",
    "nebius": "Nebius",
    "sambanova": "SambaNova",
    "novita": "Novita",
    "hyperbolic": "Hyperbolic",
    "chutes": "Chutes",
    "parasail": "Parasail",
    "siliconflow": "SiliconFlow",
    # Cloudflare's Workers AI, as pi names it (``cloudflare-workers-ai``; ``workers-ai`` for a
    # Workers AI model behind Cloudflare's AI Gateway, :func:`workers_ai`).
    "workersai": "Cloudflare Workers AI",
    "cloudflareworkersai": "Cloudflare Workers AI",
    # litellm's routes to hosts of open models (docs.litellm.ai/docs/providers: featherless_ai,
    # nvidia_nim, nscale, lambda_ai, friendliai, ovhcloud), each on its own endpoint at its own
    # per-token prices: api.featherless.ai, integrate.api.nvidia.com (NVIDIA's API catalog of
    # open models, not a maker's API), inference.api.nscale.com, api.lambda.ai, api.friendli.ai,
    # oai.endpoints.kepler.ai.cloud.ovh.net.
    "featherless": "Featherless AI",
    "nvidianim": "NVIDIA NIM",
    "nscale": "Nscale",
    "lambdaai": "Lambda",
    "friendli": "FriendliAI",
    "ovhcloud": "OVHcloud AI Endpoints",
    # OpenCode's provider ids (models.dev, github.com/anomalyco/models.dev, each
    # ``providers/<id>/provider.toml`` naming the host's own API) of hosts serving open models at
    # their own prices: io.net (``io-net``), Scaleway's Generative APIs, Vultr's Serverless
    # Inference, W&B Inference (``wandb``), Venice, Synthetic (api.synthetic.new, its own per-model
    # prices); inference.net's id ``inference`` (api.inference.net) is matched whole
    # (:data:`_WHOLE_NAMES`).
    "ionet": "io.net",
    "scaleway": "Scaleway",
    "vultr": "Vultr",
    "wandb": "W&B Inference",
    "venice": "Venice",
    "synthetic": "Synthetic",
}

#: Hosts whose name is a word other names start with, matched only whole (written as
#: :data:`THIRD_PARTY_HOSTS` keys are): inference.net, OpenCode's ``inference``; OpenCode's
#: (models.dev's) ``nvidia``, whose ``api`` is NVIDIA's API catalog at integrate.api.nvidia.com
#: (serving Kimi, GLM, Qwen, MiniMax, gpt-oss and NVIDIA's own Nemotron at NVIDIA's prices, none
#: of them in the price table: unpriced whichever maker it is).
_WHOLE_NAMES: dict[str, str] = {"inference": "inference.net", "inferencenet": "inference.net", "nvidia": "NVIDIA NIM"}

#: Endpoint host names of :data:`THIRD_PARTY_HOSTS` whose labels, read one at a time, start with
#: no key of theirs, by the end of the host name (the endpoints litellm's provider pages give,
#: docs.litellm.ai/docs/providers/nvidia_nim, /lambda_ai, /ovhcloud), with the key :func:`host_at`
#: returns for them.
HOST_SUFFIXES: dict[str, str] = {
    "integrate.api.nvidia.com": "nvidianim",
    "api.lambda.ai": "lambdaai",
    "endpoints.kepler.ai.cloud.ovh.net": "ovhcloud",
}

#: The hosts of :data:`THIRD_PARTY_HOSTS` whose own per-token prices prefixbench holds, by key: each
#: a price file of its own in ``prefixbench/simulator/data/`` (the columns of ``prices.csv``, its
#: ``provider`` the key, its model ids the host's own, as its API names them), holding the cache
#: rule the host documents (a cached read at the host's own price, or at the input price where the
#: host gives no discount for the model). A model a host's file does not list is unpriced on that
#: host, as is every model of a host not here. To add a host: its file and one line here.
HOST_PRICES: dict[str, str] = {
    "fireworks": "host-fireworks.csv",
    "groq": "host-groq.csv",
    "together": "host-together.csv",
}

#: The upstream a reader keeps for a call Cloudflare's Workers AI served (:func:`workers_ai`).
WORKERS_AI = "workers-ai"


def _by_start(name: str) -> str | None:
    """The :data:`THIRD_PARTY_HOSTS` name whose key ``name`` starts with, written lower-case with
    letters and digits only; None for none."""
    start = _key_by_start(name)
    return None if start is None else THIRD_PARTY_HOSTS[start]


def _key_by_start(name: str) -> str | None:
    """The :data:`THIRD_PARTY_HOSTS` key ``name`` starts with (see :func:`_by_start`); None for none."""
    key = "".join(c for c in name.lower() if c.isalnum())
    return next((start for start in THIRD_PARTY_HOSTS if key.startswith(start)), None) if key else None


@lru_cache(maxsize=1024)
def host_price_file(name: str) -> str | None:
    """The file of :data:`HOST_PRICES` holding the own prices of the third-party host ``name`` is
    (any case and spelling, as :func:`third_party_host` reads it); None for a host whose prices
    prefixbench does not hold, and for any other name."""
    if "".join(c for c in name.lower() if c.isalnum()) in _WHOLE_NAMES:
        return None
    key = _key_by_start(name)
    return None if key is None else HOST_PRICES.get(key)


@lru_cache(maxsize=1024)
def third_party_host(name: str) -> str | None:
    """The name of the third-party host of open models ``name`` is (:data:`THIRD_PARTY_HOSTS`,
    any case and spelling, or one of :data:`_WHOLE_NAMES` whole), None for any other. (Asked once
    a call by the readers; a log names a handful of providers, hence the cache.)"""
    return _WHOLE_NAMES.get("".join(c for c in name.lower() if c.isalnum())) or _by_start(name)


def workers_ai(model: str) -> bool:
    """Whether a model name is one Cloudflare's Workers AI serves on its own hardware: its first
    segment ``workers-ai`` (pi's and OpenCode's ``cloudflare-ai-gateway`` models, as
    ``workers-ai/@cf/moonshotai/kimi-k2.6``) or ``cloudflare`` (litellm's Workers AI route,
    ``cloudflare/@cf/meta/llama-3.1-8b-instruct``), or a ``@cf/`` id. The maker its name holds
    serves none of it; Cloudflare's AI Gateway passing a call on to another provider is not this."""
    return model.split("/", 1)[0] in (WORKERS_AI, "cloudflare") or "@cf/" in model


def host_at(url: str) -> str:
    """The third-party host of open models whose own endpoint ``url`` is: the first label of its
    host name that starts with a :data:`THIRD_PARTY_HOSTS` key (``api.together.xyz`` -> ``together``,
    ``api.fireworks.ai`` -> ``fireworks``, ``api.groq.com`` -> ``groq``), each label read alone
    (not :data:`_WHOLE_NAMES`: ``inference`` is a label of many hosts' names); "" for any other
    server (a maker's API, a gateway, a local proxy). A host name ending in a
    :data:`HOST_SUFFIXES` entry (``integrate.api.nvidia.com`` -> ``nvidianim``) gives that
    entry's key."""
    netloc = url.split("://", 1)[-1].split("/", 1)[0].rpartition("@")[2]
    hostname = netloc.partition(":")[0].lower().rstrip(".")
    suffix = next((key for end, key in HOST_SUFFIXES.items() if hostname == end or hostname.endswith("." + end)), "")
    if suffix:
        return suffix
    return next((label for label in hostname.split(".") if _by_start(label) is not None), "")


def billing_host(name: str, *, oss: bool = False, litellm: bool = False) -> str:
    """``name`` (the provider an agent's log says served a call) where no model maker bills that
    call at its list price: a host running open models itself
    (:func:`~.vllm.self_hosted_upstream`, with its ``oss`` and ``litellm`` readings) or a
    third-party host of open models (:func:`third_party_host`); "" for any other (a maker's own
    API, a gateway, a cloud)."""
    if not name:
        return ""
    return self_hosted_upstream(name, oss=oss, litellm=litellm) or (name if third_party_host(name) is not None else "")


def agent_relay(name: str, default: str) -> str:
    """``name`` (the provider an agent's log says served a call, Codex's ``model_provider``) where
    it is an endpoint of the user's own configuration (a relay or gateway), not the model maker's:
    neither ``default`` (the name of the agent's own provider, Codex's ``openai``) nor a name
    starting with it (``openai-chat-completions``, the Codex docs' example name for OpenAI's own
    API), nor Azure OpenAI (:func:`codex_azure`: OpenAI's models on Microsoft's first-party
    service, OpenAI's caching rules), nor the name of a provider, a host running open models
    itself (vLLM, llama.cpp, ``localhost``...) or a host of open models the audit knows
    (:func:`billing_host`, Codex's ``oss`` among them). The calls keep the maker's rules and list
    price; the audit names the endpoint. "" for any other."""
    from prefixbench.simulator.providers import UNKNOWN, provider_named_in

    lowered = name.strip().lower()
    if not lowered or lowered.startswith(default.lower()) or codex_azure(lowered) or billing_host(name, oss=True):
        return ""
    return name.strip() if provider_named_in(lowered, UNKNOWN) is UNKNOWN else ""


def azure_openai(name: str) -> bool:
    """Whether an agent's provider name (Codex's ``model_provider``: ``azure``, ``azure-openai``,
    any case) names Azure OpenAI: Microsoft's first-party service of OpenAI's models, whose
    prompt caching follows OpenAI's (https://learn.microsoft.com/azure/foundry/openai/how-to/prompt-caching),
    not a relay."""
    return "azure" in name.lower()


def codex_azure(name: str) -> bool:
    """Whether a Codex ``model_provider`` id (a rollout's, its OpenTelemetry export's, its
    app-server's and exec output's) is Azure OpenAI: the id ``azure`` (any case), the one Codex's
    docs configure for an Azure OpenAI resource, or the service's whole name (``azure-openai``,
    ``azure_openai``). Decided on the whole id, not on ``azure`` appearing in it: the user names
    a provider entry as they like (a relay ``azureproxy-litellm`` is theirs, not Microsoft's
    service). The rollout keeps no ``base_url`` to judge by."""
    return re.split(r"[-_ ]+", name.strip().lower()) in (["azure"], ["azure", "openai"])


#: How the audit names Azure OpenAI where a log says a call went to it (:func:`azure_service`).
AZURE_OPENAI = "Azure OpenAI"
#: An Azure OpenAI resource's endpoint: ``<resource>.openai.azure.com``, or the newer
#: ``<resource>.cognitiveservices.azure.com`` under ``/openai/``; the deployment named in the
#: path where the call is to one (``/openai/deployments/<name>/chat/completions``); an explicit
#: port (``:443``) may follow the host, nothing else may (``res.openai.azure.com.evil.example``).
_AZURE_HOST = re.compile(r"^[a-z0-9-]+\.(?:openai\.azure\.com(?::\d+)?(?=/|$)|cognitiveservices\.azure\.com(?::\d+)?/openai/)")
#: What joins a service and the deployment it names (:func:`azure_service`, :func:`service_name`).
DEPLOYMENT = " deployment "
_AZURE_DEPLOYMENT_PATH = re.compile(r"/openai/deployments/([^/?#]+)/")


def azure_service(endpoint: str = "", name: str = "") -> str:
    """The words naming Azure OpenAI as the service a call went to, where its ``endpoint`` (host
    and path, lower case host) is an Azure OpenAI resource's (``Azure OpenAI deployment
    'gpt-4o-mini'`` where the path names the deployment) or the agent's provider ``name`` is
    Azure's (:func:`azure_openai`, Codex's ``azure``); "" for any other. The calls keep OpenAI's
    rules and its list price: Azure's own bill (a deployment's type and region set it) is not
    in the log, which the audit says."""
    from urllib.parse import unquote

    if endpoint and _AZURE_HOST.match(endpoint):
        deployment = _AZURE_DEPLOYMENT_PATH.search(endpoint + "/")
        return f"{AZURE_OPENAI}{DEPLOYMENT}{unquote(deployment.group(1))!r}" if deployment else AZURE_OPENAI
    return AZURE_OPENAI if name.strip() and azure_openai(name) else ""


def service_name(service: str) -> str:
    """The service a call went to without the deployment :func:`azure_service` names after it
    (``Azure OpenAI deployment 'gpt-4o-mini'`` -> ``Azure OpenAI``): the headline counts the
    calls per service, and the models table names each deployment beside its model."""
    name, deployment, _ = service.partition(DEPLOYMENT)
    return name if deployment else service


def agent_host(name: str, model: str) -> str:
    """The ``upstream`` of a call an agent's log says provider ``name`` served as ``model`` (pi's
    and OpenCode's provider id and model): that provider where it runs open models itself,
    else Cloudflare's Workers AI where the model is one of its own (:func:`workers_ai`: behind
    Cloudflare's AI Gateway, ``workers-ai/@cf/...``), else :func:`billing_host` of ``name``, else
    the host the model's own id names (:func:`named_host`: a custom provider's
    ``accounts/fireworks/models/...``, Hugging Face's router's ``vendor/model:groq``)."""
    if workers_ai(model) and not self_hosted(name):
        return WORKERS_AI
    return billing_host(name) or named_host(model)


#: The start of a model id in Fireworks' own namespace (``accounts/fireworks/models/<id>``,
#: ``accounts/fireworks/routers/<id>``): only Fireworks serves such an id, whoever the provider
#: entry that sent it is named (an OpenCode or pi custom provider, litellm's ``openai/`` route).
FIREWORKS_NAMESPACE = "accounts/fireworks/"

#: Suffixes after a ``:`` that OpenRouter gives its variants of a model (``:free``, ``:nitro``,
#: ``:floor``, ``:exacto``, ``:thinking``, ``:beta``, ``:online``, ``:extended``): routing or
#: billing choices, never a host, whatever a host's name may start with.
_NOT_HOST_SUFFIXES = frozenset({"free", "nitro", "floor", "exacto", "thinking", "beta", "online", "extended"})


@lru_cache(maxsize=1024)
def host_suffix(model: str) -> tuple[str, str]:
    """``model`` split at a trailing ``:<host>`` naming a third-party host of open models
    (:func:`third_party_host`): Hugging Face's Inference Providers router takes
    ``vendor/model:fireworks-ai``, ``:groq``, ``:together``... to send a call to that host, which
    bills its own price (huggingface.co/docs/inference-providers/pricing). ``(model without it,
    the suffix)``; ``(model, "")`` where the suffix names no host (OpenRouter's ``:free``,
    ``:nitro``..., Ollama's ``:8b`` tags, Bedrock's ``-v1:0``) or there is none."""
    base, colon, suffix = model.rpartition(":")
    if not colon or not base or "/" in suffix or suffix.lower() in _NOT_HOST_SUFFIXES:
        return model, ""
    return (base, suffix) if third_party_host(suffix) is not None else (model, "")


@lru_cache(maxsize=1024)
def named_host(model: str) -> str:
    """The third-party host a model's own id names as the one serving it: ``fireworks`` for an id
    in Fireworks' own namespace (:data:`FIREWORKS_NAMESPACE`, any case), else a trailing
    ``:<host>`` (:func:`host_suffix`); "" for any other id."""
    if model.lower().startswith(FIREWORKS_NAMESPACE):
        return "fireworks"
    return host_suffix(model)[1]


def host_model(model: str) -> tuple[str, str]:
    """The name to look ``model`` up by in a host's own price table, and why none where there is
    none: ``(name, "")``, the name without a :func:`host_suffix`; ``("", why)`` for a Fireworks
    path that is not a serverless model of Fireworks' own: a dedicated deployment
    (``accounts/<account>/deployments/<id>``, ``accounts/<account>/deployedModels/<id>``), billed
    by the GPU-hour, not per token, or another account's model (a fine-tune, billed as that
    account's deployment or LoRA). Only ``accounts/fireworks/models/<id>``,
    ``accounts/fireworks/routers/<id>`` (its Fast variants), a bare id or an alias of the table
    match a row."""
    name = host_suffix(model)[0]
    parts = name.split("/")
    lowered = [p.lower() for p in parts]
    if "accounts" in lowered[:-1]:
        at = lowered.index("accounts")
        kind = lowered[at + 2] if len(lowered) > at + 2 else ""
        if kind in ("deployments", "deployedmodels"):
            return "", "a dedicated deployment, which Fireworks bills by the GPU-hour, not per token"
        if lowered[at + 1] != "fireworks" or kind not in ("models", "routers") or len(lowered) != at + 4:
            return "", "not one of Fireworks' own serverless models (accounts/fireworks/models/<id>)"
    return name, ""
