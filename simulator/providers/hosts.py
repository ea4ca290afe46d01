"""Hosts that serve other makers' open-weight models at prices of their own.

Fireworks, Groq, Together AI, DeepInfra and the like run open-weight models (DeepSeek, Kimi, Qwen,
GLM, MiniMax, Llama, gpt-oss) on their own hardware and bill their own per-token price, with a
cache discount of their own or none: a call they served is not billed at the maker's list price
the price table holds, and the table holds none of theirs. A reader that finds such a host named
as the one that served a call (pi's and OpenCode's provider id, Cline's ``providerId``, a litellm
model prefix, a gateway's upstream) keeps it as the call's ``upstream``
(:attr:`~prefixbench.workloads.logs.trace.TraceRequest.upstream`, :func:`billing_host`), and the
price lookup leaves the call unpriced (:meth:`~prefixbench.simulator.price_lookup.Prices.at_list_price`).

A gateway that passes a call on at the maker's price (OpenRouter, OpenCode Zen, Vercel's AI
Gateway, Cloudflare's AI Gateway) is none of these: it names the model's maker's price, and
where it names the upstream that served the call the upstream decides.
"""

from __future__ import annotations

from prefixbench.simulator.providers.vllm import self_hosted_upstream

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
    # Workers AI model behind Cloudflare's AI Gateway).
    "workersai": "Cloudflare Workers AI",
    "cloudflareworkersai": "Cloudflare Workers AI",
}


def third_party_host(name: str) -> str | None:
    """The name of the third-party host of open models ``name`` is (:data:`THIRD_PARTY_HOSTS`,
    any case and spelling), None for any other."""
    key = "".join(c for c in name.lower() if c.isalnum())
    return next((shown for start, shown in THIRD_PARTY_HOSTS.items() if key.startswith(start)), None) if key else None


def billing_host(name: str, *, oss: bool = False, litellm: bool = False) -> str:
    """``name`` (the provider an agent's log says served a call) where no model maker bills that
    call at its list price: a host running open models itself
    (:func:`~.vllm.self_hosted_upstream`, with its ``oss`` and ``litellm`` readings) or a
    third-party host of open models (:func:`third_party_host`); "" for any other (a maker's own
    API, a gateway, a cloud)."""
    if not name:
        return ""
    return self_hosted_upstream(name, oss=oss, litellm=litellm) or (name if third_party_host(name) is not None else "")
