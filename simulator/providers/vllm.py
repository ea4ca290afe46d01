"""Self-hosted engines: vLLM's automatic prefix caching and SGLang's RadixAttention.

Facts (vLLM's docs/design/prefix_caching.md, SGLang's mem_cache/radix_cache.py): vLLM caches full 16-token blocks, chained by hash,
evicted LRU by capacity, no TTL; SGLang matches per token in a radix tree, evicted LRU. Neither
bills anything; both report cached tokens as part of the prompt (subset usage) when they report
them at all. A log of an engine (a Mooncake trace) carries its own block ids instead of bodies.
"""

from __future__ import annotations

from prefixbench.simulator.providers.base import ProviderRules

#: vLLM's ``CacheConfig.DEFAULT_BLOCK_SIZE``.
VLLM_BLOCK_SIZE = 16

VLLM = ProviderRules(
    name="vllm",
    usage_convention="subset",
    block_tokens=VLLM_BLOCK_SIZE,
    min_tokens=VLLM_BLOCK_SIZE,
    min_applies_to="read",
    body_model="vllm",
)

RADIX = ProviderRules(
    name="radix",
    usage_convention="subset",
    block_tokens=1,
    body_model="radix",
)

#: Words in the name an agent's config gives a host that runs open models itself (Ollama, locally
#: or in its cloud; LM Studio): Codex's ``model_provider`` (``ollama-launch``, as ``ollama launch
#: codex`` sets it), OpenCode's ``providerID`` (``ollama-cloud``, or a key of the user's own). The
#: cache, and whether a read is reported at all, is the host's own, not the model maker's: through
#: Codex's ``ollama-launch`` none of 31 calls reported a read (LAF-US/IDAHO-VAULT, 0.121.0,
#: 2026-04), through OpenCode's ``ollama`` none of 548 (k1.lib-bootstrap, 1.15.5, 2026-05).
SELF_HOSTED_MARKERS = ("ollama", "lmstudio")

#: Whole names (any case, ``_``, ``-``, ``.`` and spaces left out) of an engine a user runs or a
#: server on the user's own machine, as such a config names its host (a Codex ``model_provider``
#: of ``vllm`` or ``llama.cpp``, as their docs' examples of a local server have it): vLLM, SGLang,
#: llama.cpp, Hugging Face's Text Generation Inference (``tgi``), llamafile, LocalAI, KoboldCpp,
#: ``local``, ``localhost``. Matched whole, never as a word inside a name: ``vllm-cloud`` or
#: litellm's ``hosted_vllm`` as a provider's name says nothing (:data:`LITELLM_ENGINES` reads
#: litellm's routes).
SELF_HOSTED_NAMES = frozenset({"vllm", "sglang", "llamacpp", "tgi", "llamafile", "localai", "koboldcpp", "local", "localhost"})


def self_hosted(name: str) -> bool:
    """Whether an agent names a host that runs open models itself (:data:`SELF_HOSTED_MARKERS`
    inside the name, :data:`SELF_HOSTED_NAMES` as the whole of it; any case, ``_``, ``-``, ``.``
    and spaces left out: litellm's ``lm_studio``, ``llama.cpp``): its calls are
    :data:`UNKNOWN`'s, whatever their model's name."""
    lowered = "".join(c for c in name.lower() if c not in "_-. ")
    return lowered in SELF_HOSTED_NAMES or any(marker in lowered for marker in SELF_HOSTED_MARKERS)


#: litellm's provider prefixes (its ``LlmProviders``, ``litellm/types/utils.py``) that route a call
#: to an engine the user runs: Ollama (``ollama``, ``ollama_chat``), LM Studio, vLLM (``vllm``, in
#: the same process; ``hosted_vllm``, a server), llamafile, Xinference, NVIDIA Triton, oobabooga's
#: text-generation-webui, Docker Model Runner and AMD's Lemonade. Matched whole as a model name's
#: first segment (:func:`litellm_engine`), not as a word in any name: ``vllm`` or ``triton`` inside
#: some vendor's name says nothing. Left out: routes that may reach a vendor (``openai_like``,
#: ``custom``, ``nvidia_nim``), ``petals`` (a swarm, no engine of the user's) and ``infinity`` (an
#: embedding server: no chat).
LITELLM_ENGINES = frozenset({"ollama", "ollama_chat", "lm_studio", "vllm", "hosted_vllm", "llamafile", "xinference",
                             "triton", "oobabooga", "docker_model_runner", "lemonade"})


#: Inspect AI's model adapters (a model name's part before its first ``/``; the ``@modelapi`` names
#: of its ``src/inspect_ai/model/_providers/providers.py``) that run the model on an engine of the
#: user's: Hugging Face Transformers in the same process (``hf``), TransformerLens and nnterp (the
#: same, for interpretability work), a vLLM or SGLang server it starts or is pointed at (``vllm``,
#: ``vllm-completions``, ``sglang``), Ollama and llama-cpp-python's local servers. Matched whole,
#: as :data:`LITELLM_ENGINES` are. Left out: ``sagemaker`` (an endpoint AWS bills for its
#: compute), ``hf-inference-providers`` (Hugging Face's hosted router), ``mockllm`` and ``none``.
INSPECT_ENGINES = frozenset({"hf", "vllm", "vllm-completions", "sglang", "ollama", "llama-cpp-python", "transformer_lens",
                             "nnterp"})


def self_hosted_upstream(name: str, *, oss: bool = False, litellm: bool = False, inspect: bool = False) -> str:
    """The ``upstream`` a reader keeps for a call whose host an agent names ``name``
    (:attr:`~prefixbench.workloads.logs.trace.TraceRequest.upstream`): ``name`` itself where that
    host runs open models itself (:func:`self_hosted`); with ``oss``, also Codex's ``oss`` (its
    ``--oss`` flag's local host: Codex's word alone, another agent's ``oss`` is a name of the
    user's); with ``litellm``, also one of :data:`LITELLM_ENGINES` (``name`` a litellm route's
    prefix); with ``inspect``, also one of :data:`INSPECT_ENGINES` (an Inspect AI adapter's
    name); "" for any other. No vendor bills such a call: it stays unpriced
    (:meth:`~prefixbench.simulator.price_lookup.Prices.at_list_price`), whatever its model's name,
    and its provider is :data:`UNKNOWN` (the host's cache, not the model maker's)."""
    lowered = name.lower()
    if (self_hosted(name) or (oss and lowered == "oss") or (litellm and lowered in LITELLM_ENGINES)
            or (inspect and lowered in INSPECT_ENGINES)):
        return name
    return ""


def litellm_engine(model: str) -> str:
    """The engine a litellm model name routes to where it is one the user runs
    (``ollama_chat/qwen2.5-coder`` -> ``ollama_chat``, ``hosted_vllm/Qwen/Qwen3-8B`` ->
    ``hosted_vllm``; :func:`self_hosted_upstream` of its first segment); "" for any other."""
    return self_hosted_upstream(model.split("/", 1)[0], litellm=True) if "/" in model else ""


def inspect_engine(model: str) -> str:
    """The engine an Inspect AI model name (``ollama/llama3.1:8b``, ``hf/openai-community/gpt2``)
    runs on where its adapter is one of the user's (:data:`INSPECT_ENGINES`): the adapter's name;
    "" for any other."""
    return self_hosted_upstream(model.split("/", 1)[0], inspect=True) if "/" in model else ""


#: What the audit calls the host of an Ollama ``:cloud`` model (:func:`ollama_cloud`).
OLLAMA_CLOUD = "Ollama's cloud"


#: The ``upstream`` of a call to Ollama's own API at its cloud's host (``https://ollama.com/api/chat``,
#: an API key's calls): Ollama's cloud, whatever the model's tag.
OLLAMA_COM = "ollama.com"


def ollama_cloud(model: str, upstream: str) -> bool:
    """Whether a call of ``model`` that an Ollama host (``upstream``, :func:`self_hosted`) served ran
    in Ollama's cloud, not on the user's machine: a call to :data:`OLLAMA_COM` itself, or a cloud
    model's, whose tag ends in ``cloud`` (``kimi-k2.5:cloud``, ``gpt-oss:120b-cloud``) through a
    local Ollama or Codex's ``--oss`` host (``oss``, Ollama by default). Ollama bills such calls
    through its plans (a subscription's usage allowance, measured in GPU time, or usage credits:
    no price per token, https://docs.ollama.com/cloud), so no vendor's list price applies, but it
    is not free either."""
    lowered = upstream.lower()
    if lowered == OLLAMA_COM:
        return True
    name, colon, tag = model.lower().rpartition(":")
    local = "ollama" in lowered.replace("_", "").replace("-", "") or lowered == "oss"
    return bool(colon and name) and tag.endswith("cloud") and local


def own_host(upstream: str) -> bool:
    """Whether ``upstream``, the host a reader says served a call, is one that no vendor bills: any
    name :func:`self_hosted_upstream` keeps (Codex's ``oss``, litellm's and Inspect AI's engines
    included)."""
    return bool(self_hosted_upstream(upstream, oss=True, litellm=True, inspect=True))


#: A provider the audit cannot name (a self-hosted engine's trace, an unknown endpoint): reads
#: count in 128-token steps, nothing expires, and a body-less chain runs with Anthropic's rules.
#: A usage that counts writes (a relay's, in Anthropic's shape) bounds the next read by them.
UNKNOWN = ProviderRules(
    name="unknown",
    usage_convention="subset",
    writes_bound_reads=True,
    block_tokens=128,
    chain_as="anthropic",
)
